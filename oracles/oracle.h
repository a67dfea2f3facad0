/*
 * The certified oracle domain (internal): what the kernel denotes as an
 * exact real-number function, every element enclosed in an MPFI interval.
 *
 * No floating op rounds: not the implicit rounding of each op to its
 * declared type, not a narrowing convert, not reduce-precision (unless
 * usc__oracle_options.quantize asks for explicit quantization).  Ops with a
 * discrete meaning (floor, ceil, round-*, compare, select, float-to-int
 * convert, remainder's quotient) act on the exact values; where an
 * enclosure straddles a discontinuity the element is *undecided*, never
 * guessed.  NaN, +-Inf and the sign of an exact zero follow IEEE 754 and
 * XLA.  docs/oracle.md states every op's semantics and the precision
 * policy.
 *
 * The interpreter creates the domain through usc__domain_oracle.create,
 * then may call usc__oracle_configure (or usc__oracle_set_precision) before
 * it initializes any value array.  To run Ziv-style it re-runs the kernel
 * (or only the undecided elements) after raising the precision; values
 * initialized earlier are still valid, every op result takes the current
 * precision.
 */
#ifndef USC_ORACLES_ORACLE_H
#define USC_ORACLES_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>
#include <mpfi.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#include "domain.h"

/* The interval oracle: usc__oracle_value per element. */
extern const usc__domain_ops usc__domain_oracle;

/*
 * Working precision, in bits, of every op result.  The floor keeps every
 * input exact: the widest float significand is f64's 53 bits, the widest
 * integer 64 bits.  The ceiling bounds a Ziv loop that cannot end (an
 * exact value sitting on a discontinuity or a rounding boundary).
 */
#define USC__ORACLE_PREC_MIN 64
#define USC__ORACLE_PREC_DEFAULT 128
#define USC__ORACLE_PREC_MAX 65536

typedef struct usc__oracle_options {
	/* Bits of every op result; clamped to [PREC_MIN, PREC_MAX]. */
	mpfr_prec_t precision;
	/*
	 * Honour explicit quantization as written: a float-to-float convert
	 * and reduce-precision round (nearest-even, to the declared type or
	 * the reduced format).  Outputs never round.
	 */
	bool quantize;
	/*
	 * Attribution (src/analyze/attribution.c): the results of these
	 * instructions, and of the ops the interpreter synthesizes for them
	 * (a dot's products and sums, whose usc__dom_op.instr is the dot),
	 * round nearest-even to their declared float type, as the reference
	 * rounds them; every other op stays exact.  An enclosure that
	 * straddles a rounding boundary rounds its midpoint (uncertified: the
	 * attribution's figures are midpoints).  Borrowed: the array must
	 * outlive the runs.  NULL / 0: nothing rounds.
	 */
	const usc_hlo_instr *const *round_only;
	size_t round_only_count;
} usc__oracle_options;

/* precision = USC__ORACLE_PREC_DEFAULT, quantize = false, no round_only. */
void usc__oracle_options_default(usc__oracle_options *opt);

/* USC_EINVAL for a precision outside [PREC_MIN, PREC_MAX]. */
usc_status usc__oracle_configure(void *state, const usc__oracle_options *opt,
				 usc_error *err);
usc_status usc__oracle_set_precision(void *state, mpfr_prec_t prec,
				     usc_error *err);
mpfr_prec_t usc__oracle_precision(const void *state);

/* ------------------------------------------------------------ values */

/*
 * What an element is.  FINITE is a real number inside x; an endpoint of x
 * may be infinite, which then means "finite but beyond MPFR's exponent
 * range" (exp(1e300)), never IEEE's Inf: that is POS_INF / NEG_INF.
 * UNDECIDED says the enclosure could not tell between outcomes that differ
 * in kind or across a discontinuity; raising the precision may help.
 */
typedef enum usc__oracle_kind {
	USC__ORC_FINITE = 0,
	USC__ORC_POS_INF,
	USC__ORC_NEG_INF,
	USC__ORC_NAN,
	USC__ORC_UNDECIDED
} usc__oracle_kind;

/* The sign of an exact zero: meaningful only when x is the point 0. */
enum {
	USC__ORC_NEG_ZERO = 1u << 0,     /* the point 0 is -0 */
	USC__ORC_ZSIGN_UNKNOWN = 1u << 1 /* the point 0 has either sign */
};

/*
 * One element.  Float types use kind, flags and x.  Integer and pred types
 * hold their exact encoding in bits (kind FINITE or UNDECIDED; x unused):
 * integer arithmetic is exact and wraps as XLA's does.
 */
typedef struct usc__oracle_value {
	mpfi_t x;
	uint64_t bits;
	unsigned char kind;
	unsigned char flags;
} usc__oracle_value;

/* Whether v (one element) is undecided. */
bool usc__oracle_is_undecided(const void *v);

/* How many of the n values at values are undecided. */
size_t usc__oracle_count_undecided(const void *values, size_t n);

/*
 * Sets v to the exact closed interval [lo, hi] (lo <= hi; x's precision is
 * raised to hold both exactly).  For tests and for callers that build
 * inputs that are themselves uncertain.
 */
void usc__oracle_value_set_interval(usc__oracle_value *v, mpfr_srcptr lo,
				    mpfr_srcptr hi);

/* ---------------------------------------------------------- deciding */

/*
 * The certificate to_output writes for a float type: the value's kind
 * and its enclosure as doubles rounded outward ([lo, hi] contains the
 * MPFI interval; beyond double's range an endpoint is -Inf / +Inf, which
 * here means "beyond", as in the MPFI value).  rounded says whether every
 * real in the enclosure rounds (nearest-even, the format's own overflow
 * policy) to the one encoding in rounded_bits: then that encoding is the
 * certified correctly rounded result.  prec is the working precision the
 * enclosure came from.  For integer and pred types lo = hi = the exact
 * value (as a double, rounded outward beyond 2^53), rounded is true and
 * rounded_bits the encoding.
 */
typedef struct usc__oracle_enclosure {
	usc__oracle_kind kind;
	unsigned flags;
	double lo, hi;
	bool rounded;
	uint64_t rounded_bits;
	long prec;
} usc__oracle_enclosure;

/*
 * Decides the correctly rounded (nearest-even) encoding of v in the float
 * type t: *decided is true and *bits the encoding when every real in the
 * enclosure (with the sign of zero where it matters) rounds to the same
 * code; NaN and Inf kinds decide to the format's NaN / Inf encoding (or
 * the overflow policy's).  USC_EINVAL unless t is a float type.
 */
usc_status usc__oracle_decide_rounding(const usc__oracle_value *v,
				       usc_dtype t, bool *decided,
				       uint64_t *bits, usc_error *err);

/*
 * How finely the ULP error must be known.  abs_ulps > 0: the enclosure of
 * the error must be at most that wide (1/8 ulp: 0.125).  sig_digits > 0:
 * the error must exclude 0 and its relative width be at most
 * 10^-sig_digits (or be the point 0).  Both set: either suffices.
 */
typedef struct usc__oracle_resolution {
	double abs_ulps;
	int sig_digits;
} usc__oracle_resolution;

/*
 * The error of the device encoding y against the oracle value v, in ULPs
 * of t at the exact value: E = (y - y*) / ulp(y*) for y* in the enclosure,
 * with usc_ulp_error_double's conventions for NaN and Inf (both NaN: 0;
 * one NaN: NaN; Inf against a different value: +-Inf toward y - y*).
 * lo <= E <= hi are rounded outward; mid is a representative (the error at
 * the enclosure's midpoint).  decided says whether [lo, hi] meets res.
 * kind UNDECIDED when v is undecided or the sign of a zero is unknown.
 */
typedef struct usc__oracle_ulp_error {
	usc__oracle_kind kind; /* FINITE, POS_INF, NEG_INF, NAN, UNDECIDED */
	double lo, hi, mid;
	bool decided;
} usc__oracle_ulp_error;

usc_status usc__oracle_decide_ulp_error(const usc__oracle_value *v,
					usc_dtype t, uint64_t y,
					const usc__oracle_resolution *res,
					usc__oracle_ulp_error *out,
					usc_error *err);

/*
 * The two halves of a ULP-error decision that do not depend on how the
 * exact value is held, shared by the oracle and the f64 tier.
 * usc__ulp_error_special settles the cases that need no arithmetic (the
 * value undecided; NaN on either side; infinities, the value's kind
 * being given) and returns true when *out is final.
 * usc__ulp_error_finish takes the four quotient bounds (lo/umin,
 * lo/umax rounded down; hi/umin, hi/umax rounded up) and a representative
 * mid, and decides at resolution res (NULL: 1/8 ulp).
 */
bool usc__ulp_error_special(usc__oracle_kind kind, usc_dtype t, uint64_t y,
			    usc__oracle_ulp_error *out);
void usc__ulp_error_finish(const double d[4], double mid,
			   const usc__oracle_resolution *res,
			   usc__oracle_ulp_error *out);

/* ------------------------------------------------ interval functions */

/*
 * Interval functions MPFI lacks (oracle_fns.c).  Each writes an
 * enclosure of f over the whole interval x (finite endpoints or
 * infinite ones meaning "beyond", as above) into y, rounded outward at
 * y's precision.  The caller has widened MPFR's exponent range.
 */
void usc__oracle_fn_logistic(mpfi_ptr y, mpfi_srcptr x);
void usc__oracle_fn_erf(mpfi_ptr y, mpfi_srcptr x);
/* 1/sqrt(x) for x > 0 (the caller checks the domain). */
void usc__oracle_fn_rsqrt(mpfi_ptr y, mpfi_srcptr x);

/*
 * x^y for intervals: *status receives what is decided.  0: y holds an
 * enclosure of a finite real; otherwise the usc__oracle_kind of a result
 * decided as a special (POS_INF, NEG_INF, NAN) or UNDECIDED.  The operands
 * here are finite-kind values; point operands that are IEEE specials are
 * handled by the caller through MPFR.
 */
void usc__oracle_fn_pow(mpfi_ptr y, mpfi_srcptr x, mpfi_srcptr e,
			int *status);

/*
 * The enclosure of f(x) for a function f that is monotone on the whole
 * interval x: increasing when up, decreasing otherwise; f rounds as MPFR
 * does (directed), so the endpoints come out outward.
 */
void usc__oracle_fn_monotone(mpfi_ptr y, mpfi_srcptr x,
			     int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t),
			     bool up);

#endif /* USC_ORACLES_ORACLE_H */
