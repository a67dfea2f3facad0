/*
 * Internal to the tier (oracles/tier*.c): the value's helpers, the
 * error-free transforms, the radius rounding, and the functions one file of
 * the tier calls in another.  docs/tier.md states every bound.
 */
#ifndef USC_ORACLES_TIER_INTERNAL_H
#define USC_ORACLES_TIER_INTERNAL_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "dtype/rn_fast.h"

#include "domain.h"
#include "fp_step.h"
#include "oracle.h"
#include "tier.h"

typedef usc__tier_value value;

/*
 * Tier-only flags beside the oracle's zero flags: the value is known to
 * be strictly positive (negative) although its ball may reach 0, as for
 * exp(-1e9), which double rounds to 0.  Only rounding decisions read
 * them, so that such a value still certifies +0 in bf16.
 */
enum { TIER_GT0 = 1u << 4, TIER_LT0 = 1u << 5 };

/* The unit roundoff of double, 2^-53. */
#define U 0x1p-53

/*
 * Assumed maximum errors of glibc's double functions on x86-64, in ulps
 * of the exact result.  glibc's libm-test-ulps for x86_64 lists 1 ulp for
 * exp, expm1, log, log1p, sin, cos, tan, erf, pow and atan2, 2 for tanh,
 * and 3 or 4 for cbrt depending on the release; the tier assumes 4 for
 * the first two groups and 8 for cbrt.  Those figures are measured by
 * glibc's tests, not proven, hence the margin.
 */
#define ULPS_EXP 4.0
#define ULPS_EXPM1 4.0
#define ULPS_LOG 4.0
#define ULPS_LOG1P 4.0
#define ULPS_SIN 4.0
#define ULPS_COS 4.0
#define ULPS_TAN 4.0
#define ULPS_TANH 4.0
#define ULPS_ERF 4.0
#define ULPS_POW 4.0
#define ULPS_ATAN2 4.0
#define ULPS_CBRT 8.0
/* sqrt is correctly rounded by IEEE 754; 1/sqrt rounds twice. */
#define ULPS_SQRT 1.0
#define ULPS_RSQRT 2.0
/* logistic is built from exp and two rounded operations, see below. */
#define ULPS_LOGISTIC (ULPS_EXP + 2.0)

/* pi rounded to nearest double (C11 has no M_PI). */
#define PI_D 0x1.921fb54442d18p+1

/* Trigonometric arguments beyond this are left to the oracle. */
#define TRIG_MAX 0x1p20

/*
 * An upper bound of a non-negative quantity q that was computed from
 * exact non-negative data by at most 12 round-to-nearest operations on
 * non-negative values, none of which divides by a quantity smaller than 1
 * after an underflow, with subnormal (absolute) errors totalling at most
 * 16 * 2^-1075.  The computed x is then at least q (1 - u)^12 - 2^-1071
 * (fact 1; 1 / (1 + d) >= 1 - u covers divisions).  x (1 + 2^-49) =
 * x (1 + 16 u) rounded loses at most one more factor (1 - u), and
 * (1 - u)^13 (1 + 16 u) >= 1 + 2u for u = 2^-53, so the product exceeds q
 * by at least 2 u q - 2^-1071 - 2^-1075.  Adding 2^-1060: when the sum is
 * below 2^-1010 its rounding error is at most 2^-1063 and the sum exceeds
 * q; above, 2 u q >= 2^-1062 alone covers the subnormal errors and the
 * rounding of the sum cannot go below its larger operand.  The result is
 * +Inf on overflow, which makes the element undecided.
 */
static inline double rup(double x)
{
	return x * (1.0 + 0x1p-49) + 0x1p-1060;
}

/*
 * The error bound of a libm value f assumed accurate to k ulps of the
 * exact result y: |f - y| <= k ulp(y) <= k 2^-52 |y| for normal y, and
 * |y| <= |f| (1 + k 2^-52), so (k + 1) 2^-52 |f| bounds it for k < 2^40;
 * for subnormal y the bound k 2^-1074 <= 2^-1060 is rup's floor.
 */
static inline double slack(double f, double k)
{
	return rup(fabs(f) * ((k + 1.0) * 0x1p-52));
}

/* ------------------------------------------------------------ values */

static inline void set_kind(value *v, usc__oracle_kind k)
{
	v->kind = (unsigned char)k;
	v->flags = 0;
	v->mid = 0;
	v->rad = 0;
}

static inline void set_undecided(value *v)
{
	set_kind(v, USC__ORC_UNDECIDED);
}

static inline void prep(value *v)
{
	v->mid = 0;
	v->rad = 0;
	v->bits = 0;
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
}


/*
 * usc_encode_double(t, d, NULL, bits, NULL): nearest-even into t, rf
 * being usc__rn_format_of(t), which the caller looks up once per loop.
 * In line for f32 and f64, the formats of most outputs, where it is the
 * hardware's conversion: C's double-to-float conversion of a value in
 * float's range rounds in the current rounding mode, round-to-nearest-
 * even (C11 F.4 and 6.3.1.5, IEEE 754-2019 5.4.2).  The other narrow
 * formats (bf16, f16, fp8, ...) round on the double's bits
 * (src/dtype/rn_fast.h) up to their largest finite value; beyond it, and
 * for the types rn_fast.h does not cover, the library encodes.
 */
static inline void encode_rn(usc_dtype t, const usc__rn_format *rf, double d,
			     uint64_t *bits)
{
	if (t == USC_F32 && fabs(d) <= FLT_MAX) {
		float f = (float)d;
		uint32_t b;

		memcpy(&b, &f, sizeof b);
		*bits = b;
		return;
	}
	if (t == USC_F64 && isfinite(d)) {
		memcpy(bits, &d, sizeof d);
		return;
	}
	if (rf && usc__rn_encode(rf, d, bits))
		return;
	(void)usc_encode_double(t, d, NULL, bits, NULL);
}

/*
 * The outward bounds of a ball, inline for the loops below (the exported
 * usc__tier_bounds is the same function).  One step outward from the
 * rounded-to-nearest endpoint: the rounding error is at most half the
 * spacing on that side.
 */
static inline void bounds(const value *v, double *lo, double *hi)
{
	if (v->rad == 0) {
		*lo = *hi = v->mid;
		return;
	}
	*lo = next_down(v->mid - v->rad);
	*hi = next_up(v->mid + v->rad);
}

static inline bool is_point(const value *v)
{
	return v->kind != USC__ORC_FINITE || v->rad == 0;
}

static inline bool is_zero_point(const value *v)
{
	return v->kind == USC__ORC_FINITE && v->rad == 0 && v->mid == 0;
}

/* Whether a finite value's ball holds 0. */
static inline bool has_zero(const value *v)
{
	double lo, hi;

	bounds(v, &lo, &hi);
	return lo <= 0 && hi >= 0;
}

/* The oracle's sign_of: -1, 0 unknown, +1; a point zero by its sign. */
static inline int sign_of(const value *v)
{
	double lo, hi;

	switch (v->kind) {
	case USC__ORC_POS_INF: return 1;
	case USC__ORC_NEG_INF: return -1;
	case USC__ORC_FINITE: break;
	default: return 0;
	}
	if (is_zero_point(v)) {
		if (v->flags & USC__ORC_ZSIGN_UNKNOWN)
			return 0;
		return (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1;
	}
	bounds(v, &lo, &hi);
	if (lo > 0)
		return 1;
	if (hi < 0)
		return -1;
	return 0;
}

/* The strict sign of a finite value (0: may be zero or unknown). */
static inline int strict_sign(const value *v)
{
	double lo, hi;

	if (v->kind == USC__ORC_POS_INF)
		return 1;
	if (v->kind == USC__ORC_NEG_INF)
		return -1;
	if (v->kind != USC__ORC_FINITE)
		return 0;
	if (v->flags & TIER_GT0)
		return 1;
	if (v->flags & TIER_LT0)
		return -1;
	bounds(v, &lo, &hi);
	/* lo <= hi, so at most one holds; no branch on a random sign. */
	return (lo > 0) - (hi < 0);
}

static inline void set_zero(value *r, int sgn)
{
	prep(r);
	r->mid = sgn < 0 ? -0.0 : 0.0;
	r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
			   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/* A point zero result takes its sign from sgn (-1, 0 unknown, +1). */
static inline void fix_zero(value *r, int sgn)
{
	r->flags &= (unsigned char)~(USC__ORC_NEG_ZERO | USC__ORC_ZSIGN_UNKNOWN);
	if (is_zero_point(r)) {
		r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
				   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
		r->mid = sgn < 0 ? -0.0 : 0.0;
	}
}

/*
 * Makes r the finite ball (mid, rad), or UNDECIDED when either is not
 * finite or the ball's edge would overflow (the oracle's value is then a
 * real beyond double's range, which the tier does not represent).
 */
static inline void set_ball(value *r, double mid, double rad)
{
	prep(r);
	if (!isfinite(mid) || !isfinite(rad) || !isfinite(fabs(mid) + rad)) {
		set_undecided(r);
		return;
	}
	r->mid = mid;
	r->rad = rad;
}

/*
 * The ball of [flo - slo, fhi + shi] where flo <= fhi are doubles and
 * slo, shi >= 0 their error bounds: the midpoint of flo and fhi, and a
 * radius reaching both ends (a subtraction and a maximum, then rup).
 */
static inline void set_range(value *r, double flo, double slo, double fhi,
		      double shi)
{
	double mid, rad;

	if (!isfinite(flo) || !isfinite(fhi)) {
		prep(r);
		set_undecided(r);
		return;
	}
	if (flo == fhi) {
		mid = flo;
		rad = rup(slo > shi ? slo : shi);
	} else {
		mid = 0.5 * flo + 0.5 * fhi;
		rad = rup(fmax((mid - flo) + slo, (fhi - mid) + shi));
	}
	set_ball(r, mid, rad);
}

/* The IEEE double of a point value (NaN, +-Inf, a signed zero, a real). */
static inline double point_d(const value *v)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: return INFINITY;
	case USC__ORC_NEG_INF: return -INFINITY;
	case USC__ORC_NAN: return NAN;
	default: break;
	}
	if (v->mid == 0)
		return (v->flags & USC__ORC_NEG_ZERO) ? -0.0 : 0.0;
	return v->mid;
}

/* Sets r to the exact IEEE point d. */
static inline void set_point(value *r, double d)
{
	prep(r);
	if (isnan(d))
		set_kind(r, USC__ORC_NAN);
	else if (isinf(d))
		set_kind(r, d > 0 ? USC__ORC_POS_INF : USC__ORC_NEG_INF);
	else {
		r->mid = d;
		if (d == 0)
			r->flags = signbit(d) ? USC__ORC_NEG_ZERO : 0;
	}
}

/* ------------------------------------------- error-free transforms */

/* s + e = a + b exactly (Knuth's TwoSum; exact barring overflow). */
static inline double two_sum(double a, double b, double *e)
{
	double s = a + b, bb = s - a;

	*e = (a - (s - bb)) + (b - bb);
	return s;
}

/*
 * Whether Dekker's TwoProduct of a and b is exact: no splitting
 * constant overflows (|a|, |b| < 2^995) and the low partial products stay
 * normal (|a b| >= 2^-960 leaves 60 bits above the subnormal range).
 */
static inline bool product_safe(double a, double b, double p)
{
	return fabs(a) < 0x1p995 && fabs(b) < 0x1p995 &&
	       fabs(p) >= 0x1p-960 && isfinite(p);
}

static inline void split(double a, double *hi, double *lo)
{
	double c = 134217729.0 * a; /* 2^27 + 1 */

	*hi = c - (c - a);
	*lo = a - *hi;
}

/* p + e = a * b exactly under product_safe (Dekker 1971). */
static inline double two_prod(double a, double b, double *e)
{
	double p = a * b, ah, al, bh, bl;

	split(a, &ah, &al);
	split(b, &bh, &bl);
	*e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
	return p;
}

/* A libm function of one double (the monotone ops' evaluator). */
typedef double (*dfn)(double);

typedef struct tier_state {
	void *ref; /* the reference domain's state: integer ops */
	/*
	 * tier_sum's terms (53-bit MPFR numbers, initialized once and kept
	 * from row to row: an allocation and an init per term per row cost
	 * more than the exact sum itself) and pointers to them.
	 */
	mpfr_t *sum_x;
	mpfr_ptr *sum_p;
	size_t sum_cap;
} tier_state;

/*
 * The functions one file of the tier calls in another: tier_arith.c's
 * ops, tier_convert.c's compares and converts, tier_loops.c's apply.
 */
void usc__tier_add_balls(value *r, double a, double ra, double b, double rb);
void usc__tier_mul_balls(value *r, double a, double ra, double b, double rb);
void usc__tier_div_balls(value *r, double a, double ra, double b, double rb);
double usc__tier_lipschitz(dfn f);
void usc__tier_monotone(value *r, const value *x, dfn f, double k, bool up);
bool usc__tier_domain_edge(value *r, const value *x, double edge, bool open);
dfn usc__tier_unary_fn(usc_hlo_opcode o, double *k);
void usc__tier_unary_point(value *r, usc_hlo_opcode o, dfn f, double k, double x);
usc_status usc__tier_unary(value *r, const usc__dom_op *op, const value *x);
bool usc__tier_is_binary(usc_hlo_opcode o);
void usc__tier_binary_points(value *r, usc_hlo_opcode o, double a, double b);
void usc__tier_maxmin(value *r, bool is_max, const value *x, const value *y);
void usc__tier_binary(value *r, const usc__dom_op *op, const value *x,
		   const value *y);
void usc__tier_compare_float(const usc__dom_op *op, value *r, const value *x,
			  const value *y);
usc_status usc__tier_load_bits(usc_dtype t, uint64_t bits, value *r,
			    usc_error *err);
usc_status usc__tier_convert(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err);
usc_status usc__tier_bitcast(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err);
usc_status usc__tier_apply(void *state, const usc__dom_op *op, size_t n,
			     void *out, const void *const *args,
			     unsigned scalar_args, usc_error *err);
bool usc__tier_identity(void *state, const usc__dom_op *op);

#endif
