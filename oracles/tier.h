/*
 * The fast certified tier (internal): the oracle's semantics (the exact
 * real value of the kernel, no op rounding to its declared type) computed
 * in double with a rigorous error radius.
 *
 * A float element is a ball: the exact value lies in [mid - rad, mid +
 * rad], rad >= 0.  Every op propagates a sound bound (docs/tier.md states
 * each one and the libm accuracy it assumes); where a bound cannot be
 * given cheaply (an interval across a discontinuity or a domain edge, an
 * overflow, a huge argument of a trigonometric function) the element is
 * UNDECIDED and the caller escalates it to the MPFR oracle
 * (oracles/oracle.h).  Integer and pred elements are exact encodings, as
 * in the oracle.  The tier never honours the oracle's quantize option:
 * converts and reduce-precision are identities on floats.
 */
#ifndef USC_ORACLES_TIER_H
#define USC_ORACLES_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#include "domain.h"
#include "oracle.h"

/* The tier: usc__tier_value per element. */
extern const usc__domain_ops usc__domain_tier;

/*
 * Plain f64 (oracles/f64.c), the tier's speed baseline: every float value
 * a double, every op the native double operation or libm call, no
 * rounding to declared types and no certification; integer and pred
 * values exact encodings.  One uint64_t per element.
 */
extern const usc__domain_ops usc__domain_f64;

/*
 * The tier's matmul entry (domain.h), in tier_dot.c: C = A B with
 * OpenBLAS's dgemm and a rigorous radius (docs/tier.md, "Dot").  Declines
 * (USC_EUNSUPPORTED) integer operands and operands that are not all
 * FINITE, which the interpreter then evaluates per element.
 */
usc_status usc__tier_matmul(void *state, const usc__dom_matmul *m,
			    usc_error *err);

/*
 * How many dot output elements usc__tier_matmul has recomputed exactly
 * because cancellation made the gamma_K bound too wide (docs/tier.md,
 * "Exact accumulation"), counted over the process; for tests and benches.
 */
size_t usc__tier_dot_exact_elements(void);

/*
 * One element.  Float types use kind (a usc__oracle_kind: FINITE,
 * POS_INF, NEG_INF, NAN, UNDECIDED), flags (USC__ORC_NEG_ZERO and
 * USC__ORC_ZSIGN_UNKNOWN, meaningful only for the point zero), mid and
 * rad.  A FINITE value is always a finite real: the tier has no "beyond
 * the exponent range" values, an overflow is UNDECIDED.  Integer and pred
 * types hold their exact encoding in bits (kind FINITE or UNDECIDED).
 */
typedef struct usc__tier_value {
	double mid, rad;
	uint64_t bits;
	unsigned char kind;
	unsigned char flags;
} usc__tier_value;

/*
 * The domain's apply entry without the array loops' fast paths: every
 * element through the general per-element code.  The fast paths must
 * give the same bits (tests/tier/test_tier_fast.c checks that).
 */
usc_status usc__tier_apply_general(void *state, const usc__dom_op *op,
				   size_t n, void *out,
				   const void *const *args,
				   unsigned scalar_args, usc_error *err);

/* Whether v (one element) is undecided. */
bool usc__tier_is_undecided(const void *v);

/* How many of the n values at values are undecided. */
size_t usc__tier_count_undecided(const void *values, size_t n);

/*
 * Sets v to the finite ball [mid - rad, mid + rad] (rad >= 0, both
 * finite; rad = 0 with mid = -0 is the point -0).  For tests and for
 * callers whose inputs are themselves uncertain.
 */
void usc__tier_value_set(usc__tier_value *v, double mid, double rad);

/*
 * The enclosure [lo, hi] of a FINITE value as doubles rounded outward
 * (lo <= every real in the ball <= hi).
 */
void usc__tier_bounds(const usc__tier_value *v, double *lo, double *hi);

/*
 * The error of the device encoding y of float type t against v, with the
 * contract of usc__oracle_decide_ulp_error (oracle.h): E = (y - y*) /
 * ulp(y*) for y* in the ball, lo <= E <= hi rounded outward, mid the
 * error at the ball's midpoint, decided when [lo, hi] meets res (NULL:
 * 1/8 ulp); kind UNDECIDED when v is undecided.  USC_EINVAL unless t is a
 * float type.
 */
usc_status usc__tier_decide_ulp_error(const usc__tier_value *v, usc_dtype t,
				      uint64_t y,
				      const usc__oracle_resolution *res,
				      usc__oracle_ulp_error *out,
				      usc_error *err);

/*
 * Decides the nearest-even encoding of v in float type t as
 * usc__oracle_decide_rounding does: *decided when every real in the ball
 * (and both zero signs where the ball holds 0 and the sign is not known)
 * rounds to one code.
 */
usc_status usc__tier_decide_rounding(const usc__tier_value *v, usc_dtype t,
				     bool *decided, uint64_t *bits,
				     usc_error *err);

/*
 * The same decision for a float type t whose usc__rn_format_of(t) the
 * caller has looked up once (rf, NULL for the types it does not cover),
 * for the loops that decide every element: the decided code, or false.
 */
struct usc__rn_format;
bool usc__tier_round_rn(const usc__tier_value *v, usc_dtype t,
			const struct usc__rn_format *rf, uint64_t *bits);

/*
 * The enclosure tier_to_output gives v in float type t (its kind, flags,
 * outward bounds) without the rounding decision (rounded false): what a
 * caller needs that decides the ULP error apart.
 */
void usc__tier_enclosure(const usc__tier_value *v,
			 usc__oracle_enclosure *e);

/*
 * usc__tier_decide_ulp_error for a float type t whose figures the caller
 * has looked up once (rf = usc__rn_format_of(t), NULL for the types it
 * does not cover): the same result, bit for bit.
 */
usc_status usc__tier_decide_ulp_error_rn(const usc__tier_value *v,
					 usc_dtype t,
					 const struct usc__rn_format *rf,
					 uint64_t y,
					 const usc__oracle_resolution *res,
					 usc__oracle_ulp_error *out,
					 usc_error *err);

/*
 * usc__tier_decide_ulp_error_rn over n values v against n device codes y
 * (stored as a usc_tensor stores its data, w bytes each: usc__dom_get_enc),
 * in oracles/tier_decide_array.c: for every i, mid[i] and decided[i]
 * receive the result's mid and decided, bit for bit, lo[i] and hi[i] the
 * outward bounds usc__tier_bounds gives a FINITE v[i] (NaN for any other
 * kind), and *count how many were decided.  The common element (a finite
 * ball, a finite code of a format rf covers, an absolute resolution) is
 * decided in line; the rest per element.  A failure is the per-element
 * function's.
 */
usc_status usc__tier_decide_ulp_error_array(const usc__tier_value *v,
					    size_t n, usc_dtype t,
					    const struct usc__rn_format *rf,
					    const void *y, size_t w,
					    const usc__oracle_resolution *res,
					    double *mid, uint8_t *decided,
					    double *lo, double *hi,
					    size_t *count, usc_error *err);

#endif /* USC_ORACLES_TIER_H */
