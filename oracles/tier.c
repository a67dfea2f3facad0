/*
 * The fast certified tier: the oracle's exact-real semantics (oracle.c)
 * computed in double, every float element a ball [mid - rad, mid + rad]
 * that contains the exact value.  docs/tier.md states every bound.
 *
 * Soundness rests on four facts.
 *   1. IEEE 754 round-to-nearest: each +, -, *, / and sqrt of doubles
 *      has relative error at most u = 2^-53 when the result is normal and
 *      absolute error at most 2^-1075 when it is subnormal (Higham,
 *      "Accuracy and Stability of Numerical Algorithms", 2nd ed., 2.2).
 *   2. Error-free transformations: TwoSum (Knuth, TAOCP vol. 2, 4.2.2,
 *      Theorem B) gives the exact error of a sum; Dekker's TwoProduct
 *      (Dekker 1971, "A floating-point technique for extending the
 *      available precision") gives the exact error of a product when no
 *      intermediate overflows or underflows, which the guards below
 *      check.  A point result is therefore exact whenever the double
 *      result is, and otherwise carries its exact rounding error.
 *   3. The radius itself is computed in round-to-nearest and then rounded
 *      upward by rup(), whose argument is written beside it.
 *   4. libm functions are trusted to the ulp bounds of LIBM_ULPS below,
 *      each a safety factor above glibc's published maxima for x86-64
 *      (sysdeps/x86_64/fpu/libm-test-ulps).  This is an assumption, not a
 *      proof: a build against another libm must check the table.
 * Whatever these cannot bound cheaply is UNDECIDED, and the check then
 * escalates the element to the MPFR oracle.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "domain.h"
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
static double rup(double x)
{
	return x * (1.0 + 0x1p-49) + 0x1p-1060;
}

/*
 * The error bound of a libm value f assumed accurate to k ulps of the
 * exact result y: |f - y| <= k ulp(y) <= k 2^-52 |y| for normal y, and
 * |y| <= |f| (1 + k 2^-52), so (k + 1) 2^-52 |f| bounds it for k < 2^40;
 * for subnormal y the bound k 2^-1074 <= 2^-1060 is rup's floor.
 */
static double slack(double f, double k)
{
	return rup(fabs(f) * ((k + 1.0) * 0x1p-52));
}

/* ------------------------------------------------------------ values */

static void set_kind(value *v, usc__oracle_kind k)
{
	v->kind = (unsigned char)k;
	v->flags = 0;
	v->mid = 0;
	v->rad = 0;
}

static void set_undecided(value *v)
{
	set_kind(v, USC__ORC_UNDECIDED);
}

static void prep(value *v)
{
	v->mid = 0;
	v->rad = 0;
	v->bits = 0;
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
}

bool usc__tier_is_undecided(const void *v)
{
	return ((const value *)v)->kind == USC__ORC_UNDECIDED;
}

size_t usc__tier_count_undecided(const void *values, size_t n)
{
	const value *v = values;
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i].kind == USC__ORC_UNDECIDED;
	return c;
}

void usc__tier_value_set(usc__tier_value *v, double mid, double rad)
{
	prep(v);
	v->mid = mid;
	v->rad = rad;
	if (mid == 0 && rad == 0 && signbit(mid))
		v->flags = USC__ORC_NEG_ZERO;
}

/*
 * The next double above x: nextafter(x, +Inf) computed on the bits, which
 * the profile showed to cost a fifth of the tier's time as a libm call.
 * The same results: NaN and +Inf stay, both zeros go to the least
 * subnormal, -Inf to -DBL_MAX, -2^-1074 to -0, and every other finite x
 * to its neighbour (one step of the magnitude, whose ordering the bits
 * share with the value: IEEE 754-2019, 3.4).
 */
static inline double next_up(double x)
{
	uint64_t b;

	if (x != x || x == INFINITY)
		return x;
	if (x == 0)
		return 0x1p-1074;
	memcpy(&b, &x, sizeof b);
	/*
	 * b + 1 for a positive x, b - 1 (modulo 2^64) for a negative one,
	 * from the sign bit without a branch: the signs of data are random,
	 * and a mispredicted branch here cost more than the rest of a
	 * product's bound.
	 */
	b += 1 - ((b >> 63) << 1);
	memcpy(&x, &b, sizeof x);
	return x;
}

/* The next double below x: nextafter(x, -Inf), by symmetry. */
static inline double next_down(double x)
{
	return -next_up(-x);
}

/*
 * usc_encode_double(t, d, NULL, bits, NULL) for a finite d: nearest-even
 * into t.  In line for f32 and f64, the formats of most outputs, where it
 * is the hardware's conversion: C's double-to-float conversion of a value
 * in float's range rounds in the current rounding mode, round-to-nearest-
 * even (C11 F.4 and 6.3.1.5, IEEE 754-2019 5.4.2); beyond FLT_MAX (where
 * the cast would leave C's defined range) the library encodes.
 */
static inline void encode_rn(usc_dtype t, double d, uint64_t *bits)
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
	if (t == USC_BF16 && fabs(d) >= 0x1p-126 && fabs(d) < 0x1p127) {
		/*
		 * A normal bf16 result: the magnitude's encoding rounded to
		 * 7 fraction bits, nearest-even (add 2^44 - 1 and the lowest
		 * kept bit, drop 45 bits; a carry moves into the exponent
		 * field, as it must), then the exponent rebiased from 1023
		 * to 127.  |d| < 2^127 cannot round past bf16's largest
		 * binade, |d| >= 2^-126 stays normal.
		 */
		uint64_t b, m;

		memcpy(&b, &d, sizeof b);
		m = b & ~((uint64_t)1 << 63);
		m = (m + (((uint64_t)1 << 44) - 1) + ((m >> 45) & 1)) >> 45;
		*bits = (b >> 63) << 15 | (m - ((uint64_t)(1023 - 127) << 7));
		return;
	}
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

void usc__tier_bounds(const usc__tier_value *v, double *lo, double *hi)
{
	bounds(v, lo, hi);
}

static bool is_point(const value *v)
{
	return v->kind != USC__ORC_FINITE || v->rad == 0;
}

static bool is_zero_point(const value *v)
{
	return v->kind == USC__ORC_FINITE && v->rad == 0 && v->mid == 0;
}

/* Whether a finite value's ball holds 0. */
static bool has_zero(const value *v)
{
	double lo, hi;

	bounds(v, &lo, &hi);
	return lo <= 0 && hi >= 0;
}

/* The oracle's sign_of: -1, 0 unknown, +1; a point zero by its sign. */
static int sign_of(const value *v)
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
static int strict_sign(const value *v)
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

static void set_zero(value *r, int sgn)
{
	prep(r);
	r->mid = sgn < 0 ? -0.0 : 0.0;
	r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
			   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/* A point zero result takes its sign from sgn (-1, 0 unknown, +1). */
static void fix_zero(value *r, int sgn)
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
static void set_ball(value *r, double mid, double rad)
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
static void set_range(value *r, double flo, double slo, double fhi,
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
static double point_d(const value *v)
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
static void set_point(value *r, double d)
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
static double two_sum(double a, double b, double *e)
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
static bool product_safe(double a, double b, double p)
{
	return fabs(a) < 0x1p995 && fabs(b) < 0x1p995 &&
	       fabs(p) >= 0x1p-960 && isfinite(p);
}

static void split(double a, double *hi, double *lo)
{
	double c = 134217729.0 * a; /* 2^27 + 1 */

	*hi = c - (c - a);
	*lo = a - *hi;
}

/* p + e = a * b exactly under product_safe (Dekker 1971). */
static double two_prod(double a, double b, double *e)
{
	double p = a * b, ah, al, bh, bl;

	split(a, &ah, &al);
	split(b, &bh, &bl);
	*e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
	return p;
}

/* ----------------------------------------------------- arithmetic */

static void add_balls(value *r, double a, double ra, double b, double rb)
{
	double e, s = two_sum(a, b, &e);

	if (!isfinite(s)) {
		prep(r);
		set_undecided(r);
		return;
	}
	/* The exact sum is s + e; operand radii add (a 1-Lipschitz map). */
	if (ra == 0 && rb == 0)
		set_ball(r, s, fabs(e));
	else
		set_ball(r, s, rup(ra + rb + fabs(e)));
}

/*
 * (a + da)(b + db) - ab = a db + b da + da db, bounded by |a| rb + |b| ra
 * + ra rb; the product's own rounding error is exact by TwoProduct, else
 * at most u |p| plus the subnormal 2^-1075 (rup's floor).
 */
static void mul_balls(value *r, double a, double ra, double b, double rb)
{
	double e, p = a * b, perr, prop;

	if (!isfinite(p)) {
		prep(r);
		set_undecided(r);
		return;
	}
	if (p == 0 && (a == 0 || b == 0))
		perr = 0; /* an exact zero product */
	else if (ra != 0 || rb != 0)
		perr = -1; /* a ball anyway: the bound u |p| below will do */
	else if (product_safe(a, b, p)) {
		(void)two_prod(a, b, &e);
		perr = fabs(e);
	} else
		perr = -1;
	if (ra == 0 && rb == 0 && perr >= 0) {
		set_ball(r, p, perr);
		return;
	}
	prop = fabs(a) * rb + fabs(b) * ra + ra * rb;
	/*
	 * Exact only when an operand is the point 0: two balls around 0
	 * have prop = ra rb, which may underflow to 0 although their
	 * product is not (0 +- 2^-20 times 0 +- 2^-1059, say); rup's floor
	 * then covers it.
	 */
	if (prop == 0 && perr == 0 &&
	    ((ra == 0 && a == 0) || (rb == 0 && b == 0))) {
		set_ball(r, p, 0); /* exact: a zero times anything */
		return;
	}
	set_ball(r, p, rup(prop + (perr >= 0 ? perr : U * fabs(p))));
}

/*
 * x / y over x in a +- ra, y in b +- rb with |b| > rb:
 * |x/y - a/b| = |(x - a) b - a (y - b)| / (|y| |b|)
 *             <= (ra + |a/b| rb) / (|b| - rb),
 * and |a/b| <= |q| (1 + 2u) + 2^-1074 for the rounded q.  The quotient's
 * own error a/b - q = rem / b where rem = a - q b is exact when q is
 * normal (rem is then a double; TwoProduct of q b is exact under
 * product_safe, and a - P is exact by Sterbenz's lemma since P is within
 * a factor 1 + 2u of a); otherwise the bound u |q| is used.  The floor
 * 2^-1070 joins the numerator before the division by |b| - rb so that a
 * subnormal error is not amplified (rup's condition).
 */
static void div_balls(value *r, double a, double ra, double b, double rb)
{
	double q = a / b, qerr = -1, prop = 0, den;

	if (!isfinite(q)) {
		prep(r);
		set_undecided(r);
		return;
	}
	if (a == 0)
		qerr = 0;
	else if (ra == 0 && rb == 0 && product_safe(q, b, q * b) &&
		 fabs(a) >= 0x1p-900 && fabs(q) >= 0x1p-1000) {
		/* Points: the exact remainder (a ball takes u |q| below). */
		double e, pp = two_prod(q, b, &e);
		double rem = (a - pp) - e;

		qerr = rem == 0 ? 0 : rup(fabs(rem) / fabs(b));
	}
	if (qerr < 0)
		qerr = rup(U * fabs(q));
	if (ra == 0 && rb == 0) {
		set_ball(r, q, qerr);
		return;
	}
	den = fabs(b) - rb;
	if (!(den > 0)) {
		prep(r);
		set_undecided(r);
		return;
	}
	prop = (ra + (fabs(q) * (1.0 + 2 * U) + 0x1p-1074) * rb + 0x1p-1070) /
	       den;
	set_ball(r, q, rup(prop + qerr));
}

/* ---------------------------------------------------- monotone fns */

typedef double (*dfn)(double);

static double logistic_d(double x)
{
	/*
	 * 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below: e is exp's
	 * (ULPS_EXP) and the quotient's relative sensitivity to e is at most
	 * 1, so two more roundings give ULPS_LOGISTIC.
	 */
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	{
		double e = exp(x);

		return e / (1.0 + e);
	}
}

static double rsqrt_d(double x)
{
	return 1.0 / sqrt(x);
}

/*
 * A Lipschitz constant of f over the whole real line, or 0 where it has
 * none: |tanh'| <= 1, |logistic'| <= 1/4, |erf'| <= 2/sqrt(pi) <
 * 1.12838.
 */
static double lipschitz(dfn f)
{
	if (f == tanh)
		return 1.0;
	if (f == logistic_d)
		return 0.25;
	if (f == erf)
		return 1.12838;
	return 0;
}

/*
 * f monotone on the ball [lo, hi] (up: increasing), k ulps each.  For a
 * narrow ball (radius at most 2^-40 of the midpoint: it holds no zero)
 * and an f with a Lipschitz constant L, one evaluation at the midpoint
 * does: |f(x) - f(mid)| <= L rad, so f(mid) within k ulps widened by
 * L rad encloses the image, and keeps the midpoint's sign (f is odd or
 * positive) at a fraction of the ball's width.  The tier's balls are
 * almost all that narrow.
 */
static void monotone(value *r, const value *x, dfn f, double k, bool up)
{
	double lo, hi, flo, fhi, L = lipschitz(f);

	if (L > 0 && x->rad != 0 && x->rad <= 0x1p-40 * fabs(x->mid)) {
		double y = f(x->mid);

		if (isfinite(y)) {
			double s = rup(slack(y, k) + L * x->rad);

			set_range(r, y, s, y, s);
			return;
		}
	}
	bounds(x, &lo, &hi);
	flo = f(lo);
	fhi = x->rad == 0 ? flo : f(hi);
	if (!up) {
		double t = flo;

		flo = fhi;
		fhi = t;
	}
	set_range(r, flo, slack(flo, k), fhi, slack(fhi, k));
}

/*
 * A unary op's domain edge (log: 0 open, log1p: -1 open, sqrt: 0 closed,
 * rsqrt: 0 open), as the oracle's domain_edge: below it NaN, inside it
 * go, across or on an open edge undecided.  Returns whether to go.
 */
static bool domain_edge(value *r, const value *x, double edge, bool open)
{
	double lo, hi;

	bounds(x, &lo, &hi);
	if (hi < edge) {
		set_kind(r, USC__ORC_NAN);
		return false;
	}
	if (lo > edge || (!open && lo == edge))
		return true;
	set_undecided(r);
	return false;
}

/* ----------------------------------------------------------- unary */

static double sign_d(double x)
{
	if (x == 0 || isnan(x))
		return x;
	return x > 0 ? 1.0 : -1.0;
}

static double rint_even(double x)
{
	double r = round(x);

	/* A tie rounded away goes back to the even neighbour. */
	if (fabs(r - x) == 0.5)
		r = 2.0 * round(x / 2.0);
	return copysign(r, x);
}

static double rint_away(double x)
{
	return round(x);
}

/* What unary op o computes in double, and its assumed accuracy. */
static dfn unary_fn(usc_hlo_opcode o, double *k)
{
	*k = 0;
	switch (o) {
	case USC_HLO_OP_EXPONENTIAL: *k = ULPS_EXP; return exp;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: *k = ULPS_EXPM1; return expm1;
	case USC_HLO_OP_LOG: *k = ULPS_LOG; return log;
	case USC_HLO_OP_LOG_PLUS_ONE: *k = ULPS_LOG1P; return log1p;
	case USC_HLO_OP_LOGISTIC: *k = ULPS_LOGISTIC; return logistic_d;
	case USC_HLO_OP_TANH: *k = ULPS_TANH; return tanh;
	case USC_HLO_OP_ERF: *k = ULPS_ERF; return erf;
	case USC_HLO_OP_SQRT: *k = ULPS_SQRT; return sqrt;
	case USC_HLO_OP_RSQRT: *k = ULPS_RSQRT; return rsqrt_d;
	case USC_HLO_OP_CBRT: *k = ULPS_CBRT; return cbrt;
	case USC_HLO_OP_SINE: *k = ULPS_SIN; return sin;
	case USC_HLO_OP_COSINE: *k = ULPS_COS; return cos;
	case USC_HLO_OP_TAN: *k = ULPS_TAN; return tan;
	case USC_HLO_OP_NEGATE:
	case USC_HLO_OP_ABS:
	case USC_HLO_OP_SIGN:
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		/* Exact ops; the functions come from exact_unary. */
		return sign_d;
	default: return NULL;
	}
}

static dfn exact_unary(usc_hlo_opcode o)
{
	switch (o) {
	case USC_HLO_OP_NEGATE: return NULL;
	case USC_HLO_OP_ABS: return fabs;
	case USC_HLO_OP_SIGN: return sign_d;
	case USC_HLO_OP_FLOOR: return floor;
	case USC_HLO_OP_CEIL: return ceil;
	case USC_HLO_OP_ROUND_NEAREST_EVEN: return rint_even;
	case USC_HLO_OP_ROUND_NEAREST_AFZ: return rint_away;
	default: return NULL;
	}
}

static bool is_trig(usc_hlo_opcode o)
{
	return o == USC_HLO_OP_SINE || o == USC_HLO_OP_COSINE ||
	       o == USC_HLO_OP_TAN;
}

/* The IEEE result of a unary op at an infinity (exact, as the oracle's). */
static double unary_at_inf(usc_hlo_opcode op, double x)
{
	switch (op) {
	case USC_HLO_OP_NEGATE: return -x;
	case USC_HLO_OP_ABS: return fabs(x);
	case USC_HLO_OP_SIGN: return x > 0 ? 1.0 : -1.0;
	case USC_HLO_OP_EXPONENTIAL: return x > 0 ? x : 0.0;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return x > 0 ? x : -1.0;
	case USC_HLO_OP_LOG: return x > 0 ? x : NAN;
	case USC_HLO_OP_LOG_PLUS_ONE: return x > 0 ? x : NAN;
	case USC_HLO_OP_LOGISTIC: return x > 0 ? 1.0 : 0.0;
	case USC_HLO_OP_TANH: return x > 0 ? 1.0 : -1.0;
	case USC_HLO_OP_ERF: return x > 0 ? 1.0 : -1.0;
	case USC_HLO_OP_SQRT: return x > 0 ? x : NAN;
	case USC_HLO_OP_RSQRT: return x > 0 ? 0.0 : NAN;
	case USC_HLO_OP_CBRT: return x;
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ: return x;
	default: return NAN; /* sine, cosine, tan of Inf: invalid */
	}
}

/*
 * A unary op of a finite point x.  Exact results are detected where the
 * exact value is known (zeros of odd functions, exp(0), log(1), exact
 * square roots); everything else is the libm value with its slack.  An
 * infinite result from a finite argument is IEEE's Inf only at a pole
 * (log(0), log1p(-1), rsqrt(0)); otherwise it is an overflow: undecided.
 */
static void unary_point(value *r, usc_hlo_opcode o, dfn f, double k, double x)
{
	double y;

	if (is_trig(o) && fabs(x) > TRIG_MAX) {
		set_undecided(r);
		return;
	}
	if (x == 0) {
		switch (o) {
		case USC_HLO_OP_EXPONENTIAL:
		case USC_HLO_OP_COSINE: set_point(r, 1.0); return;
		case USC_HLO_OP_LOGISTIC: set_point(r, 0.5); return;
		case USC_HLO_OP_LOG: set_point(r, -INFINITY); return;
		case USC_HLO_OP_RSQRT:
			set_point(r, signbit(x) ? -INFINITY : INFINITY);
			return;
		default:
			/* f(+-0) = +-0 for every other op of the list. */
			set_point(r, x);
			return;
		}
	}
	if ((o == USC_HLO_OP_LOG && x == 1) ||
	    (o == USC_HLO_OP_LOG_PLUS_ONE && x == -1)) {
		set_point(r, o == USC_HLO_OP_LOG ? 0.0 : -INFINITY);
		return;
	}
	y = f(x);
	if (isnan(y)) {
		set_kind(r, USC__ORC_NAN);
		return;
	}
	if (isinf(y)) {
		set_undecided(r); /* overflow: the poles are handled above */
		return;
	}
	if (o == USC_HLO_OP_SQRT && product_safe(y, y, y * y)) {
		double e, p = two_prod(y, y, &e);

		if (p == x && e == 0) {
			set_point(r, y);
			return;
		}
	}
	set_range(r, y, slack(y, k), y, slack(y, k));
	if (r->kind == USC__ORC_FINITE &&
	    (o == USC_HLO_OP_EXPONENTIAL || o == USC_HLO_OP_LOGISTIC))
		r->flags |= TIER_GT0;
}

/*
 * A discrete op (floor, ceil, round-*, sign) on a non-point ball: the
 * function is non-decreasing, so it is constant on the ball exactly when
 * its values at the two outward endpoints agree.  A zero result takes the
 * operand's sign, as in the oracle.
 */
static void discrete_unary(value *r, dfn f, const value *x)
{
	double lo, hi, a, b;

	bounds(x, &lo, &hi);
	a = f(lo);
	b = f(hi);
	if (a != b || isnan(a)) {
		set_undecided(r);
		return;
	}
	set_ball(r, a, 0);
	fix_zero(r, sign_of(x));
}

static void trig_ball(value *r, usc_hlo_opcode o, const value *x)
{
	double lo, hi;

	bounds(x, &lo, &hi);
	if (fabs(lo) > TRIG_MAX || fabs(hi) > TRIG_MAX) {
		set_undecided(r);
		return;
	}
	if (o == USC_HLO_OP_TAN) {
		/*
		 * Narrower than pi, the ball holds at most one pole of tan,
		 * where cos changes sign.  cos is within ULPS_COS ulps of
		 * the truth (below 2^-49 absolutely), so cos values beyond
		 * 2^-40 of one sign at both ends exclude a pole, and tan is
		 * increasing between poles.
		 */
		double cl = cos(lo), ch = cos(hi);

		if (!(hi - lo < 1.0) || !((cl > 0x1p-40 && ch > 0x1p-40) ||
					  (cl < -0x1p-40 && ch < -0x1p-40))) {
			set_undecided(r);
			return;
		}
		monotone(r, x, tan, ULPS_TAN, true);
		return;
	}
	/*
	 * sin and cos are 1-Lipschitz: f(x) lies within rad of f(mid),
	 * which lies within the slack of the libm value.
	 */
	{
		double f = o == USC_HLO_OP_SINE ? sin(x->mid) : cos(x->mid);

		set_ball(r, f, rup(x->rad + slack(f, ULPS_SIN)));
	}
}

static usc_status unary(value *r, const usc__dom_op *op, const value *x)
{
	usc_hlo_opcode o = op->op;
	double k;
	dfn f = unary_fn(o, &k), ex = exact_unary(o);
	int sg;

	prep(r);
	if (!f)
		return USC_EUNSUPPORTED;
	if (x->kind == USC__ORC_UNDECIDED || x->kind == USC__ORC_NAN) {
		set_kind(r, (usc__oracle_kind)x->kind);
		return USC_OK;
	}
	if (x->kind != USC__ORC_FINITE) {
		set_point(r, unary_at_inf(o, x->kind == USC__ORC_POS_INF
						 ? INFINITY
						 : -INFINITY));
		return USC_OK;
	}
	if (o == USC_HLO_OP_NEGATE) {
		*r = *x;
		r->mid = -x->mid;
		r->flags = (unsigned char)(x->flags &
			   ~(USC__ORC_NEG_ZERO | TIER_GT0 | TIER_LT0));
		if (x->flags & TIER_GT0)
			r->flags |= TIER_LT0;
		if (x->flags & TIER_LT0)
			r->flags |= TIER_GT0;
		if (is_zero_point(x) && !(x->flags & USC__ORC_ZSIGN_UNKNOWN) &&
		    !(x->flags & USC__ORC_NEG_ZERO))
			r->flags |= USC__ORC_NEG_ZERO;
		return USC_OK;
	}
	if (is_point(x)) {
		double d = point_d(x);

		if (ex) {
			set_point(r, ex(d));
			return USC_OK;
		}
		unary_point(r, o, f, k, d);
		return USC_OK;
	}
	sg = sign_of(x);
	switch (o) {
	case USC_HLO_OP_ABS: {
		double lo, hi;

		bounds(x, &lo, &hi);
		if (lo >= 0 || hi <= 0)
			set_ball(r, fabs(x->mid), x->rad);
		else
			/* |x| over a ball across 0 is [0, max(-lo, hi)]. */
			set_range(r, 0, 0, fmax(-lo, hi), 0);
		return USC_OK;
	}
	case USC_HLO_OP_SIGN:
		if (sg == 0)
			set_undecided(r);
		else
			set_point(r, (double)sg);
		return USC_OK;
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		discrete_unary(r, ex, x);
		return USC_OK;
	case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE:
	case USC_HLO_OP_TAN:
		trig_ball(r, o, x);
		return USC_OK;
	case USC_HLO_OP_LOG:
		if (domain_edge(r, x, 0, true))
			monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_LOG_PLUS_ONE:
		if (domain_edge(r, x, -1, true))
			monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_SQRT:
		if (domain_edge(r, x, 0, false))
			monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_RSQRT:
		if (domain_edge(r, x, 0, true))
			monotone(r, x, f, k, false);
		return USC_OK;
	default:
		/* exp, expm1, logistic, tanh, erf, cbrt: increasing. */
		monotone(r, x, f, k, true);
		if (r->kind == USC__ORC_FINITE &&
		    (o == USC_HLO_OP_EXPONENTIAL || o == USC_HLO_OP_LOGISTIC))
			r->flags |= TIER_GT0;
		return USC_OK;
	}
}

/* ---------------------------------------------------------- binary */

static bool is_binary(usc_hlo_opcode o)
{
	switch (o) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
		return true;
	default:
		return false;
	}
}

static double binary_d(usc_hlo_opcode o, double a, double b)
{
	switch (o) {
	case USC_HLO_OP_ADD: return a + b;
	case USC_HLO_OP_SUBTRACT: return a - b;
	case USC_HLO_OP_MULTIPLY: return a * b;
	case USC_HLO_OP_DIVIDE: return a / b;
	case USC_HLO_OP_REMAINDER: return fmod(a, b);
	case USC_HLO_OP_ATAN2: return atan2(a, b);
	case USC_HLO_OP_POWER: return pow(a, b);
	default: return NAN;
	}
}

/*
 * A binary op of two point operands, at least one of them NaN or an
 * infinity, with IEEE semantics (C99 Annex F, which MPFR follows).  An
 * infinite or zero result is exact there (a product or quotient with an
 * infinity, the limits of pow); a finite non-zero one comes only from
 * atan2 (pi/4, pi/2, ...) and carries its libm slack.
 */
static void special_points(value *r, usc_hlo_opcode o, double a, double b)
{
	double y = binary_d(o, a, b);

	if (isnan(y) || isinf(y) || y == 0 || o != USC_HLO_OP_ATAN2) {
		set_point(r, y);
		return;
	}
	set_range(r, y, slack(y, ULPS_ATAN2), y, slack(y, ULPS_ATAN2));
}

/* Two finite points. */
static void binary_points(value *r, usc_hlo_opcode o, double a, double b)
{
	double y;

	switch (o) {
	case USC_HLO_OP_ADD: add_balls(r, a, 0, b, 0); break;
	case USC_HLO_OP_SUBTRACT: add_balls(r, a, 0, -b, 0); break;
	case USC_HLO_OP_MULTIPLY: mul_balls(r, a, 0, b, 0); break;
	case USC_HLO_OP_DIVIDE:
		if (b == 0) {
			set_point(r, a / b); /* a pole, or 0/0 = NaN */
			return;
		}
		div_balls(r, a, 0, b, 0);
		break;
	case USC_HLO_OP_REMAINDER:
		/* fmod is exact (IEEE 754 5.3.1's remainder family). */
		set_point(r, fmod(a, b));
		return;
	case USC_HLO_OP_ATAN2:
		y = atan2(a, b);
		if (a == 0 && y == 0) {
			/*
			 * atan2(+-0, x > 0 or +0) is +-0 exactly; atan2(+-0,
			 * x < 0) is +-pi, inexact, and a zero from a != 0 is
			 * an underflow.
			 */
			set_point(r, y);
			return;
		}
		set_range(r, y, slack(y, ULPS_ATAN2), y, slack(y, ULPS_ATAN2));
		return;
	case USC_HLO_OP_POWER:
		y = pow(a, b);
		if (b == 0 || a == 1) {
			set_point(r, 1.0);
			return;
		}
		if (isnan(y) || (y == 0 && a == 0) || (isinf(y) && a == 0)) {
			/* NaN, 0^y > 0 and the pole 0^y < 0 are exact. */
			set_point(r, y);
			return;
		}
		if (b == 1) {
			set_point(r, a);
			return;
		}
		set_range(r, y, slack(y, ULPS_POW), y, slack(y, ULPS_POW));
		return;
	default:
		set_undecided(r);
		return;
	}
	/* Exact zero sums, products and quotients: IEEE's sign. */
	if (is_zero_point(r))
		fix_zero(r, signbit(binary_d(o, a, b)) ? -1 : 1);
}

/*
 * max / min with XLA's semantics, as the oracle's maxmin: NaN propagates,
 * max(-0, +0) = +0, endpoint-wise on balls.
 */
static void maxmin(value *r, bool is_max, const value *x, const value *y)
{
	const value *o[2] = {x, y};
	double xl, xh, yl, yh, lo, hi;
	int k;

	prep(r);
	if (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN) {
		set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return;
	}
	for (k = 0; k < 2; k++) {
		const value *a = o[k], *b = o[1 - k];

		if (a->kind == (is_max ? USC__ORC_POS_INF : USC__ORC_NEG_INF)) {
			*r = *a;
			return;
		}
		if (a->kind == (is_max ? USC__ORC_NEG_INF : USC__ORC_POS_INF)) {
			*r = *b;
			return;
		}
	}
	bounds(x, &xl, &xh);
	bounds(y, &yl, &yh);
	/* One ball wholly beyond the other: that ball itself. */
	if (is_max ? xl > yh : xh < yl) {
		*r = *x;
		return;
	}
	if (is_max ? yl > xh : yh < xl) {
		*r = *y;
		return;
	}
	if (is_point(x) && is_point(y)) {
		double a = point_d(x), b = point_d(y);

		if (a == b && a == 0) {
			bool any_pos = false, any_neg = false, unknown = false;

			for (k = 0; k < 2; k++) {
				int sg = sign_of(o[k]);

				if (sg > 0)
					any_pos = true;
				else if (sg < 0)
					any_neg = true;
				else
					unknown = true;
			}
			set_zero(r, is_max ? (any_pos ? 1 : unknown ? 0 : -1)
					   : (any_neg ? -1 : unknown ? 0 : 1));
			return;
		}
		set_point(r, is_max ? fmax(a, b) : fmin(a, b));
		return;
	}
	lo = is_max ? fmax(xl, yl) : fmin(xl, yl);
	hi = is_max ? fmax(xh, yh) : fmin(xh, yh);
	set_range(r, lo, 0, hi, 0);
}

/*
 * fmod on balls, as the oracle's remainder_iv: x - n y with n =
 * trunc(x / y) constant over the box.  The quotient ball bounds x / y, and
 * trunc is non-decreasing, so equal values at its outward ends fix n;
 * then x - n y is a product and a sum of balls (n is an exact integer
 * below 2^53).  The zero sign of a point result would be x's, but a
 * non-point x never gives a point.
 */
static void remainder_ball(value *r, const value *x, const value *y)
{
	value q, p;
	double lo, hi, n;

	div_balls(&q, x->mid, x->rad, y->mid, y->rad);
	if (q.kind != USC__ORC_FINITE) {
		set_undecided(r);
		return;
	}
	bounds(&q, &lo, &hi);
	n = trunc(lo);
	if (n != trunc(hi) || fabs(n) >= 0x1p53) {
		set_undecided(r);
		return;
	}
	mul_balls(&p, n, 0, y->mid, y->rad);
	if (p.kind != USC__ORC_FINITE) {
		set_undecided(r);
		return;
	}
	add_balls(r, x->mid, x->rad, -p.mid, p.rad);
	if (r->kind == USC__ORC_FINITE)
		fix_zero(r, sign_of(x));
}

/* Whether an atan2(a, b) box avoids the origin and the cut b <= 0 = a. */
static void atan2_ball(value *r, const value *y, const value *x)
{
	double yl, yh, xl, xh, dy, dx, d, f;

	bounds(y, &yl, &yh);
	bounds(x, &xl, &xh);
	if (yl <= 0 && yh >= 0 && xl <= 0) {
		set_undecided(r);
		return;
	}
	/*
	 * |grad atan2| = 1 / sqrt(x^2 + y^2) <= 1 / d with d a lower bound
	 * of the box's distance to the origin, and the box is convex and
	 * clear of the cut, so atan2 moves by at most (ry + rx) / d from
	 * its value at the midpoints.
	 */
	dy = yl > 0 ? yl : yh < 0 ? -yh : 0;
	dx = xl > 0 ? xl : xh < 0 ? -xh : 0;
	d = dy > dx ? dy : dx;
	f = atan2(y->mid, x->mid);
	set_ball(r, f,
		 rup((y->rad + x->rad + 0x1p-1070) / d + slack(f, ULPS_ATAN2)));
}

/*
 * x^y on a box with x > 0: for fixed x it is monotone in y and for fixed
 * y monotone in x, so its extremes over the box lie at the corners.
 */
static void pow_ball(value *r, const value *x, const value *y)
{
	double xl, xh, yl, yh, c[4], mn, mx;
	int i;

	bounds(x, &xl, &xh);
	bounds(y, &yl, &yh);
	if (is_point(y) && y->mid == 0) {
		set_point(r, 1.0); /* x^0 = 1 for every real x */
		return;
	}
	if (xh < 0 && is_point(y) && y->mid == trunc(y->mid) &&
	    fabs(y->mid) < 0x1p53) {
		/*
		 * A negative base to an integer power: (-1)^n |x|^n, with
		 * |x| in [-xh, -xl] and the same corner argument.
		 */
		bool odd = fmod(y->mid, 2.0) != 0;

		c[0] = pow(-xh, y->mid);
		c[1] = pow(-xl, y->mid);
		mn = fmin(c[0], c[1]);
		mx = fmax(c[0], c[1]);
		if (odd)
			set_range(r, -mx, slack(mx, ULPS_POW), -mn,
				  slack(mn, ULPS_POW));
		else
			set_range(r, mn, slack(mn, ULPS_POW), mx,
				  slack(mx, ULPS_POW));
		return;
	}
	if (xh < 0 && floor(yl) == floor(yh) && yl != floor(yl)) {
		/* A negative base to powers that are all non-integers. */
		set_kind(r, USC__ORC_NAN);
		return;
	}
	if (!(xl > 0)) {
		set_undecided(r);
		return;
	}
	c[0] = pow(xl, yl);
	c[1] = pow(xl, yh);
	c[2] = pow(xh, yl);
	c[3] = pow(xh, yh);
	mn = mx = c[0];
	for (i = 1; i < 4; i++) {
		mn = fmin(mn, c[i]);
		mx = fmax(mx, c[i]);
	}
	set_range(r, mn, slack(mn, ULPS_POW), mx, slack(mx, ULPS_POW));
}

static void binary(value *r, const usc__dom_op *op, const value *x,
		   const value *y)
{
	usc_hlo_opcode o = op->op;
	int sx, sy;

	prep(r);
	if (o == USC_HLO_OP_MAXIMUM || o == USC_HLO_OP_MINIMUM) {
		maxmin(r, o == USC_HLO_OP_MAXIMUM, x, y);
		return;
	}
	if (o != USC_HLO_OP_POWER &&
	    (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN)) {
		set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return;
	}
	if (is_point(x) && is_point(y)) {
		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE)
			special_points(r, o, point_d(x), point_d(y));
		else
			binary_points(r, o, point_d(x), point_d(y));
		return;
	}
	sx = sign_of(x);
	sy = sign_of(y);
	if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE) {
		/*
		 * One infinity against a non-point ball: for add, subtract,
		 * multiply, divide and atan2 the IEEE result depends only on
		 * the ball's sign class (for add and subtract not even on
		 * that), so a representative +-1 decides it.
		 */
		bool fx = x->kind == USC__ORC_FINITE;
		int sf = fx ? sx : sy;
		bool additive = o == USC_HLO_OP_ADD || o == USC_HLO_OP_SUBTRACT;
		double rep = sf < 0 ? -1.0 : 1.0;

		switch (o) {
		case USC_HLO_OP_ADD:
		case USC_HLO_OP_SUBTRACT:
		case USC_HLO_OP_MULTIPLY:
		case USC_HLO_OP_DIVIDE:
		case USC_HLO_OP_ATAN2:
			if (sf == 0 && !additive)
				break;
			special_points(r, o, fx ? rep : point_d(x),
				       fx ? point_d(y) : rep);
			return;
		case USC_HLO_OP_REMAINDER:
			if (!fx)
				set_kind(r, USC__ORC_NAN);
			else
				*r = *x;
			return;
		default:
			break;
		}
		set_undecided(r);
		return;
	}
	switch (o) {
	case USC_HLO_OP_ADD:
		add_balls(r, x->mid, x->rad, y->mid, y->rad);
		if (r->kind == USC__ORC_FINITE && (x->flags & y->flags & TIER_GT0))
			r->flags |= TIER_GT0;
		return;
	case USC_HLO_OP_SUBTRACT:
		add_balls(r, x->mid, x->rad, -y->mid, y->rad);
		return;
	case USC_HLO_OP_MULTIPLY:
		mul_balls(r, x->mid, x->rad, y->mid, y->rad);
		if (r->kind != USC__ORC_FINITE)
			return;
		fix_zero(r, sx == 0 || sy == 0 ? 0 : sx * sy);
		if (!is_zero_point(r) && strict_sign(x) * strict_sign(y) != 0)
			r->flags |= strict_sign(x) * strict_sign(y) > 0
					    ? TIER_GT0
					    : TIER_LT0;
		return;
	case USC_HLO_OP_DIVIDE:
		if (is_zero_point(y)) {
			if (sx == 0 || sy == 0 || has_zero(x))
				set_undecided(r);
			else
				set_kind(r, sx * sy > 0 ? USC__ORC_POS_INF
							: USC__ORC_NEG_INF);
			return;
		}
		if (has_zero(y)) {
			set_undecided(r);
			return;
		}
		div_balls(r, x->mid, x->rad, y->mid, y->rad);
		if (r->kind != USC__ORC_FINITE)
			return;
		fix_zero(r, sx == 0 ? 0 : sx * sy);
		if (!is_zero_point(r) && strict_sign(x) * strict_sign(y) != 0)
			r->flags |= strict_sign(x) * strict_sign(y) > 0
					    ? TIER_GT0
					    : TIER_LT0;
		return;
	case USC_HLO_OP_REMAINDER:
		if (is_zero_point(y))
			set_kind(r, USC__ORC_NAN);
		else if (has_zero(y))
			set_undecided(r);
		else
			remainder_ball(r, x, y);
		return;
	case USC_HLO_OP_ATAN2:
		if (is_zero_point(x)) {
			double yl, yh;

			bounds(y, &yl, &yh);
			if (yl > 0)
				set_zero(r, sx);
			else if (yh < 0 && sx != 0)
				/*
				 * +-pi: PI_D is pi rounded to nearest, within
				 * half an ulp; slack allows one.
				 */
				set_range(r, sx * PI_D, slack(PI_D, 1.0),
					  sx * PI_D, slack(PI_D, 1.0));
			else
				set_undecided(r); /* the cut */
			return;
		}
		atan2_ball(r, x, y);
		return;
	case USC_HLO_OP_POWER:
		pow_ball(r, x, y);
		return;
	default:
		set_undecided(r);
		return;
	}
}

/* --------------------------------------------------------- compare */


/* The oracle's cmp_possible on outward double bounds. */
static unsigned cmp_possible(const value *x, const value *y, bool total)
{
	unsigned m = 0;
	int kx = x->kind, ky = y->kind;
	double xl, xh, yl, yh;

	if (kx == USC__ORC_NAN || ky == USC__ORC_NAN)
		return USC__POSS_UN;
	if (kx != USC__ORC_FINITE || ky != USC__ORC_FINITE) {
		int rx = kx == USC__ORC_POS_INF ? 1 : kx == USC__ORC_NEG_INF ? -1 : 0;
		int ry = ky == USC__ORC_POS_INF ? 1 : ky == USC__ORC_NEG_INF ? -1 : 0;

		return rx < ry   ? USC__POSS_LT
		       : rx > ry ? USC__POSS_GT
				 : USC__POSS_EQ;
	}
	bounds(x, &xl, &xh);
	bounds(y, &yl, &yh);
	if (xl < yh)
		m |= USC__POSS_LT;
	if (xh > yl)
		m |= USC__POSS_GT;
	if (xl <= yh && yl <= xh)
		m |= USC__POSS_EQ;
	if (total && (m & USC__POSS_EQ) && has_zero(x) && has_zero(y)) {
		int sx = is_point(x) ? sign_of(x) : 0;
		int sy = is_point(y) ? sign_of(y) : 0;

		if (sx == 0 || sy == 0 || sx != sy)
			m |= USC__POSS_LT | USC__POSS_GT;
		if (sx != 0 && sy != 0 && is_point(x) && is_point(y) &&
		    sx != sy)
			m = sx < sy ? USC__POSS_LT : USC__POSS_GT;
	}
	return m;
}

static void compare_float(const usc__dom_op *op, value *r, const value *x,
			  const value *y)
{
	bool total = op->cmp_type == USC__CMP_TOTALORDER;
	bool any_true = false, any_false = false;
	unsigned m, b;

	prep(r);
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED ||
	    (total && (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN))) {
		set_undecided(r);
		return;
	}
	m = cmp_possible(x, y, total);
	for (b = 1; b <= USC__POSS_UN; b <<= 1) {
		if (!(m & b))
			continue;
		if (usc__cmp_holds(op->cmp_dir, b))
			any_true = true;
		else
			any_false = true;
	}
	if (any_true && any_false)
		set_undecided(r);
	else
		r->bits = any_true ? 1 : 0;
}

/* ------------------------------------------------------- converts */

typedef struct tier_state {
	void *ref; /* the reference domain's state: integer ops */
} tier_state;

static usc_status load_bits(usc_dtype t, uint64_t bits, value *r,
			    usc_error *err)
{
	double d;

	prep(r);
	if (!usc_dtype_is_float(t)) {
		r->bits = bits & usc__dom_mask(usc__dom_width(t));
		return USC_OK;
	}
	/*
	 * f32, bf16 (the upper half of an f32) and f64 decode in line: the
	 * widening conversion to double is exact (C11 6.3.1.5).
	 */
	if (t == USC_F32 || t == USC_BF16) {
		uint32_t b = t == USC_F32 ? (uint32_t)bits
					  : (uint32_t)(bits & 0xffff) << 16;
		float f;

		memcpy(&f, &b, sizeof f);
		d = f;
	} else if (t == USC_F64)
		memcpy(&d, &bits, sizeof d);
	else if (usc_decode_double(t, bits, &d) != USC_OK)
		return usc__fail(err, USC_EINVAL, "tier: cannot decode %s",
				 usc_dtype_name(t));
	set_point(r, d);
	return USC_OK;
}

/* The exact value of an integer encoding (a ball past 2^53). */
static void int_to_value(usc_dtype t, uint64_t bits, value *r)
{
	double d = 0;

	if (usc_decode_double(t, bits, &d) == USC_OK) {
		set_point(r, d);
		return;
	}
	/* The nearest double of a 64-bit integer: half an ulp off. */
	set_ball(r, d, rup(U * fabs(d)));
}

static usc_status convert(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);

	prep(r);
	if (x->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return USC_OK;
	}
	if (!usc_dtype_is_float(from)) {
		if (!usc_dtype_is_float(to)) {
			const void *args[1] = {&x->bits};

			return usc__domain_reference.apply(s->ref, op, 1,
							   &r->bits, args, 0,
							   err);
		}
		int_to_value(from, x->bits, r);
		return USC_OK;
	}
	if (usc_dtype_is_float(to)) {
		*r = *x; /* exact: no quantization */
		return USC_OK;
	}
	if (!tf)
		return usc__fail(err, USC_EINVAL, "convert to an invalid type");
	if (tf->kind == USC_KIND_PRED) {
		if (x->kind != USC__ORC_FINITE || !has_zero(x))
			r->bits = 1;
		else if (is_zero_point(x))
			r->bits = 0;
		else
			set_undecided(r);
		return USC_OK;
	}
	if (tf->kind != USC_KIND_SINT && tf->kind != USC_KIND_UINT)
		return usc__fail(err, USC_EUNSUPPORTED, "convert %s to %s",
				 usc_dtype_name(from), usc_dtype_name(to));
	/* Truncating and saturating: non-decreasing, as in the oracle. */
	{
		double lo, hi;
		uint64_t blo = 0, bhi = 0;

		if (x->kind != USC__ORC_FINITE) {
			(void)usc_encode_double(to, point_d(x), NULL, &r->bits,
						NULL);
			return USC_OK;
		}
		bounds(x, &lo, &hi);
		(void)usc_encode_double(to, lo, NULL, &blo, NULL);
		(void)usc_encode_double(to, hi, NULL, &bhi, NULL);
		if (blo != bhi)
			set_undecided(r);
		else
			r->bits = blo;
	}
	return USC_OK;
}

usc_status usc__tier_decide_rounding(const usc__tier_value *v, usc_dtype t,
				     bool *decided, uint64_t *bits,
				     usc_error *err)
{
	uint64_t b0 = 0, b1 = 0;
	bool ok = true;

	*decided = false;
	*bits = 0;
	if (!usc_dtype_is_float(t))
		return usc__fail(err, USC_EINVAL,
				 "tier: cannot round into %s, not a float type",
				 usc_dtype_name(t));
	switch (v->kind) {
	case USC__ORC_UNDECIDED:
		return USC_OK;
	case USC__ORC_NAN:
	case USC__ORC_POS_INF:
	case USC__ORC_NEG_INF:
		(void)usc_encode_double(t, point_d(v), NULL, &b0, NULL);
		b1 = b0;
		break;
	default:
		if (is_zero_point(v)) {
			(void)usc_encode_double(t, point_d(v), NULL, &b0, NULL);
			(void)usc_encode_double(t, -point_d(v), NULL, &b1,
						NULL);
			if (!(v->flags & USC__ORC_ZSIGN_UNKNOWN))
				b1 = b0;
			break;
		}
		{
			double lo, hi;

			bounds(v, &lo, &hi);
			/*
			 * A value known positive (negative) rounds no lower
			 * than the smallest positive reals, which round to
			 * +0 (monotonicity of rounding, IEEE 754-2019 4.3).
			 */
			if ((v->flags & TIER_GT0) && lo <= 0)
				lo = 0.0;
			if ((v->flags & TIER_LT0) && hi >= 0)
				hi = -0.0;
			encode_rn(t, lo, &b0);
			encode_rn(t, hi, &b1);
			if (b0 == b1 && lo <= 0 && hi >= 0 &&
			    !(v->flags & (TIER_GT0 | TIER_LT0))) {
				uint64_t zp = 0, zn = 0;

				(void)usc_encode_double(t, 0.0, NULL, &zp, NULL);
				(void)usc_encode_double(t, -0.0, NULL, &zn,
							NULL);
				ok = zp == b0 && zn == b0;
			}
		}
		break;
	}
	if (ok && b0 == b1) {
		*decided = true;
		*bits = b0;
	}
	return USC_OK;
}

static usc_status bitcast(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	uint64_t bits;
	usc_status st;

	(void)s;
	prep(r);
	if (usc__dom_width(from) != usc__dom_width(to))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "bitcast-convert from %s to %s changes the "
				 "width", usc_dtype_name(from),
				 usc_dtype_name(to));
	if (x->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		bool decided;

		st = usc__tier_decide_rounding(x, from, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			set_undecided(r);
			return USC_OK;
		}
	} else
		bits = x->bits;
	bits &= usc__dom_mask(usc__dom_width(from));
	return load_bits(to, bits, r, err);
}

/* ----------------------------------------------------------- apply */

static usc_status delegate(tier_state *s, const usc__dom_op *op, value *r,
			   const value *const *a, usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;

	prep(r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->kind == USC__ORC_UNDECIDED) {
			set_undecided(r);
			return USC_OK;
		}
		args[k] = &a[k]->bits;
	}
	return usc__domain_reference.apply(s->ref, op, 1, &r->bits, args, 0,
					   err);
}

static bool same_point(const value *x, const value *y, bool flt)
{
	if (x->kind == USC__ORC_UNDECIDED || x->kind != y->kind)
		return false;
	if (!flt)
		return x->bits == y->bits;
	if (x->kind != USC__ORC_FINITE)
		return true;
	return is_point(x) && is_point(y) && x->mid == y->mid &&
	       x->flags == y->flags && !(x->flags & USC__ORC_ZSIGN_UNKNOWN);
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	const char *name = usc_hlo_opcode_name(op->op);

	if (op->instr)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "tier: unsupported op %s on %s at %u:%u "
				 "(instruction '%s')",
				 name, usc_dtype_name(op->result),
				 op->instr->loc.line, op->instr->loc.column,
				 op->instr->name);
	return usc__fail(err, USC_EUNSUPPORTED,
			 "tier: unsupported op %s on %s", name,
			 usc_dtype_name(op->result));
}

static usc_status apply1(tier_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;

	switch (op->op) {
	case USC_HLO_OP_SELECT:
		if (a[0]->kind == USC__ORC_UNDECIDED) {
			if (same_point(a[1], a[2],
				       usc_dtype_is_float(op->result)))
				*r = *a[1];
			else {
				prep(r);
				set_undecided(r);
			}
			return USC_OK;
		}
		*r = (a[0]->bits & 1) ? *a[1] : *a[2];
		return USC_OK;
	case USC_HLO_OP_CLAMP: {
		value m;

		if (!usc_dtype_is_float(op->arg[1]))
			return delegate(s, op, r, a, err);
		maxmin(&m, true, a[1], a[0]);
		maxmin(r, false, &m, a[2]);
		return USC_OK;
	}
	case USC_HLO_OP_COMPARE:
		if (!usc_dtype_is_float(at))
			return delegate(s, op, r, a, err);
		compare_float(op, r, a[0], a[1]);
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		prep(r);
		if (a[0]->kind == USC__ORC_UNDECIDED)
			set_undecided(r);
		else
			r->bits = a[0]->kind == USC__ORC_FINITE;
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		return convert(s, op, r, a[0], err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return bitcast(s, op, r, a[0], err);
	case USC_HLO_OP_REDUCE_PRECISION:
		/* The oracle's semantics without quantize: the identity. */
		*r = *a[0];
		return USC_OK;
	default:
		break;
	}
	if (!usc_dtype_is_float(at))
		return delegate(s, op, r, a, err);
	if (op->nargs == 1) {
		if (unary(r, op, a[0]) != USC_OK)
			return unsupported(op, err);
		return USC_OK;
	}
	if (op->nargs == 2 && is_binary(op->op)) {
		binary(r, op, a[0], a[1]);
		return USC_OK;
	}
	return unsupported(op, err);
}

/*
 * The array loops.  tier_apply decides once per call which op it runs
 * (is the operand type a float, which opcode, which libm function), then
 * runs a tight loop over the n elements.  Each loop handles in line the
 * elements that the general code above would send down its common path
 * (FINITE operands, nonzero midpoints where a zero's sign would matter)
 * by calling the same helpers that path calls (div_balls, monotone,
 * unary_point, maxmin, compare_float) or, in the loops of multiply, add,
 * subtract, divide and the increasing functions (loop_mul and the others
 * below), by writing out those helpers' expressions in the same order,
 * so every result is the one apply1 gives, bit for bit; any other
 * element goes through apply1 itself.  No bound is computed differently
 * here.
 */
typedef enum fast_op {
	FAST_NONE,
	FAST_ADD,
	FAST_SUB,
	FAST_MUL,
	FAST_DIV,
	FAST_NEG,
	FAST_ABS,
	FAST_MAX,
	FAST_MIN,
	FAST_MONO,   /* exp, expm1, logistic, tanh, erf, cbrt: increasing */
	FAST_EDGE,   /* log, log1p, sqrt (increasing), rsqrt (decreasing) */
	FAST_COPY,   /* float-to-float convert, reduce-precision */
	FAST_SELECT,
	FAST_COMPARE
} fast_op;

static fast_op fast_kind(const usc__dom_op *op)
{
	bool flt = usc_dtype_is_float(op->nargs ? op->arg[0] : op->result);

	switch (op->op) {
	case USC_HLO_OP_SELECT:
		return op->nargs == 3 ? FAST_SELECT : FAST_NONE;
	case USC_HLO_OP_REDUCE_PRECISION:
		return FAST_COPY;
	case USC_HLO_OP_CONVERT:
		return flt && usc_dtype_is_float(op->result) ? FAST_COPY
							     : FAST_NONE;
	default:
		break;
	}
	if (!flt)
		return FAST_NONE;
	if (op->nargs == 2) {
		switch (op->op) {
		case USC_HLO_OP_ADD: return FAST_ADD;
		case USC_HLO_OP_SUBTRACT: return FAST_SUB;
		case USC_HLO_OP_MULTIPLY: return FAST_MUL;
		case USC_HLO_OP_DIVIDE: return FAST_DIV;
		case USC_HLO_OP_MAXIMUM: return FAST_MAX;
		case USC_HLO_OP_MINIMUM: return FAST_MIN;
		case USC_HLO_OP_COMPARE: return FAST_COMPARE;
		default: return FAST_NONE;
		}
	}
	if (op->nargs != 1)
		return FAST_NONE;
	switch (op->op) {
	case USC_HLO_OP_NEGATE: return FAST_NEG;
	case USC_HLO_OP_ABS: return FAST_ABS;
	case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE:
	case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_TANH:
	case USC_HLO_OP_ERF:
	case USC_HLO_OP_CBRT:
		return FAST_MONO;
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE:
	case USC_HLO_OP_SQRT:
	case USC_HLO_OP_RSQRT:
		return FAST_EDGE;
	default:
		return FAST_NONE;
	}
}

/*
 * Whether a FINITE value's ball lies on its midpoint's side of 0 by a
 * margin that the outward bounds cannot cross: |mid| >= 2^-1000 and
 * 2 rad <= |mid| (2 rad is exact, or +Inf and then false).  For mid > 0,
 * mid - rad >= mid / 2 >= 2^-1001 exactly; 2^-1001 is a double, so the
 * rounded difference is at least 2^-1001 too (rounding is monotone), and
 * one step down from it stays positive: bounds() gives lo > 0, hence
 * hi > 0.  For mid < 0 by symmetry hi < 0.  So strict_sign, sign_of and
 * has_zero answer from mid's sign alone, with no bounds computed and no
 * branch on the sign (the signs of data are random, and a mispredicted
 * branch costs more than a product's whole bound).  A point (rad 0) with
 * |mid| >= 2^-1000 qualifies: its bounds are mid itself.
 */
static inline bool evident_sign(const value *v)
{
	double m = fabs(v->mid);

	return m >= 0x1p-1000 && 2 * v->rad <= m;
}

/*
 * The strict sign of a FINITE value that is not a zero point, as
 * strict_sign computes it (the flags first, then the outward bounds).
 */
static inline int strict_sign_finite(const value *v)
{
	double lo, hi;

	if (v->flags & TIER_GT0)
		return 1;
	if (v->flags & TIER_LT0)
		return -1;
	if (evident_sign(v))
		return signbit(v->mid) ? -1 : 1;
	bounds(v, &lo, &hi);
	/* lo <= hi, so at most one holds; no branch on a random sign. */
	return (lo > 0) - (hi < 0);
}

/*
 * Element i of an array loop through the general per-element code, for
 * the elements a loop leaves to it.
 */
static usc_status general_at(tier_state *s, const usc__dom_op *op, value *r,
			     const value *const *args_v, unsigned scalar_args,
			     size_t i, usc_error *err)
{
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	unsigned k;

	for (k = 0; k < op->nargs; k++)
		a[k] = &args_v[k][(scalar_args >> k) & 1 ? 0 : i];
	return apply1(s, op, r, a, err);
}

/*
 * Stores the finite ball (mid, rad) with flags, or UNDECIDED when the
 * ball's edge is not finite: set_ball's test in one comparison (|mid| +
 * rad is NaN or +Inf exactly when mid, rad or their sum is not finite),
 * every field written once.
 */
static inline void put_ball(value *r, double mid, double rad,
			    unsigned flags)
{
	r->bits = 0;
	if (fabs(mid) + rad <= DBL_MAX) {
		r->mid = mid;
		r->rad = rad;
		r->kind = USC__ORC_FINITE;
		r->flags = (unsigned char)flags;
	} else {
		r->mid = 0;
		r->rad = 0;
		r->kind = USC__ORC_UNDECIDED;
		r->flags = 0;
	}
}

/* TIER_GT0 or TIER_LT0 for a strict sign product ss (-1, 0, +1). */
static inline unsigned sign_flag(int ss)
{
	return (unsigned)((ss > 0) * TIER_GT0 + (ss < 0) * TIER_LT0);
}

/*
 * multiply over n elements.  An element whose operands are FINITE with
 * nonzero midpoints is binary()'s common path written out: two points
 * are binary_points' mul_balls (the exact TwoProduct error under
 * product_safe, else u |p| plus rup's floor; the product of nonzero
 * doubles is never a zero point then, so fix_zero has nothing to do and
 * no sign flag is set), a ball is mul_balls' propagation bound plus u |p|
 * (perr is never exact there: p == 0 needs a zero operand) followed by
 * the strict signs' flag.  The expressions are mul_balls', in its order,
 * so the bits are the same (test_tier_fast).  Every other element goes
 * through the general code.
 */
static usc_status loop_mul(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		double a = x->mid, b = y->mid, ra = x->rad, rb = y->rad;
		double p, rad, e;
		unsigned fl = 0;

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    a == 0 || b == 0) {
			usc_status st = general_at(s, op, &o[i], args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		p = a * b;
		if (ra == 0 && rb == 0) {
			if (product_safe(a, b, p)) {
				(void)two_prod(a, b, &e);
				rad = fabs(e);
			} else
				rad = rup(0 + U * fabs(p));
		} else {
			rad = rup(fabs(a) * rb + fabs(b) * ra + ra * rb +
				  U * fabs(p));
			fl = sign_flag(strict_sign_finite(x) *
				       strict_sign_finite(y));
		}
		put_ball(&o[i], p, rad, fl);
	}
	return USC_OK;
}

/*
 * add (sub: subtract) over n elements: add_balls for FINITE operands
 * other than two points one of which is a zero (whose zero sign binary
 * decides), with add's strict-sign rule for balls (the sum of two GT0
 * values); two nonzero points that cancel give +0, as fix_zero would.
 */
static usc_status loop_add(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, bool sub, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		double a = x->mid, b = sub ? -y->mid : y->mid;
		double ra = x->rad, rb = y->rad, e, sum;
		unsigned fl = 0;

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    (ra == 0 && rb == 0 && (a == 0 || b == 0))) {
			usc_status st = general_at(s, op, &o[i], args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		sum = two_sum(a, b, &e);
		if (ra == 0 && rb == 0) {
			put_ball(&o[i], sum, fabs(e), 0);
			continue;
		}
		if (!sub)
			fl = x->flags & y->flags & TIER_GT0;
		put_ball(&o[i], sum, rup(ra + rb + fabs(e)), fl);
	}
	return USC_OK;
}

/*
 * divide over n elements: div_balls for FINITE operands with nonzero
 * midpoints whose divisor is a point or a ball evidently clear of 0
 * (evident_sign; binary's has_zero is then false), then the strict signs'
 * flag for a ball; the quotient of nonzero doubles is never a zero point
 * (div_balls adds rup's floor to an underflowed one).  Divisor balls
 * near 0 and every other element go through the general code.
 */
static usc_status loop_div(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		value *r = &o[i];

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    x->mid == 0 || y->mid == 0 ||
		    (y->rad != 0 && !evident_sign(y))) {
			usc_status st = general_at(s, op, r, args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		if (x->rad == 0 && y->rad == 0) {
			/* Points: the exact remainder, as div_balls. */
			prep(r);
			div_balls(r, x->mid, x->rad, y->mid, y->rad);
			continue;
		}
		/*
		 * A ball: div_balls' ball case written out (q's own error
		 * u |q| plus rup's floor; den >= |b| / 2 > 0 for a divisor
		 * evidently clear of 0, |b| for a point), then the flag.
		 */
		{
			double a = x->mid, b = y->mid, ra = x->rad, rb = y->rad;
			double q = a / b, qerr = rup(U * fabs(q));
			double den = fabs(b) - rb, prop;

			prop = (ra + (fabs(q) * (1.0 + 2 * U) + 0x1p-1074) * rb +
				0x1p-1070) /
			       den;
			put_ball(r, q, rup(prop + qerr),
				 sign_flag(strict_sign_finite(x) *
					   strict_sign_finite(y)));
		}
	}
	return USC_OK;
}

/*
 * exp, expm1, logistic, tanh, erf and cbrt (f, accurate to k ulps, gt0:
 * whether it sets TIER_GT0) over n elements.  A FINITE nonzero point is
 * unary_point's generic case (none of these functions has another exact
 * case): f(x) widened by slack, through set_range of one value, i.e. the
 * radius rup(slack).  A narrow ball of a function with a Lipschitz
 * constant is monotone's first case: f(mid) widened by rup(slack + L
 * rad), then rup again by set_range.  A result that is not finite (an
 * overflow) and every other element go through the general code, which
 * computes them again.
 */
static usc_status loop_mono(tier_state *s, const usc__dom_op *op, size_t n,
			    value *o, const value *const *args_v,
			    unsigned scalar_args, dfn f, double k, bool gt0,
			    usc_error *err)
{
	const value *xv = args_v[0];
	size_t sx = scalar_args & 1 ? 0 : 1, i;
	double L = lipschitz(f);
	unsigned fl = gt0 ? TIER_GT0 : 0;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx];
		double m = x->mid, rd = x->rad, y;
		usc_status st;

		if (x->kind == USC__ORC_FINITE && m != 0) {
			if (rd == 0) {
				y = f(m);
				if (isfinite(y)) {
					put_ball(&o[i], y, rup(slack(y, k)),
						 fl);
					continue;
				}
			} else if (L > 0 && rd <= 0x1p-40 * fabs(m)) {
				y = f(m);
				if (isfinite(y)) {
					put_ball(&o[i], y,
						 rup(rup(slack(y, k) + L * rd)),
						 fl);
					continue;
				}
			}
		}
		st = general_at(s, op, &o[i], args_v, scalar_args, i, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* The operand pointers of element i (stride 0 for a broadcast scalar). */
#define ARG(k, i) (&args_v[k][(scalar_args >> (k)) & 1 ? 0 : (i)])

static usc_status tier_apply(void *state, const usc__dom_op *op, size_t n,
			     void *out, const void *const *args,
			     unsigned scalar_args, usc_error *err)
{
	tier_state *s = state;
	value *o = out;
	const value *args_v[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	fast_op fk;
	dfn f = NULL;
	double kulps = 0, edge = 0;
	bool up = true, open = true, gt0 = false;
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	for (k = 0; k < op->nargs; k++)
		args_v[k] = args[k];
	fk = fast_kind(op);
	switch (fk) {
	case FAST_MUL:
		return loop_mul(s, op, n, o, args_v, scalar_args, err);
	case FAST_ADD:
	case FAST_SUB:
		return loop_add(s, op, n, o, args_v, scalar_args,
				fk == FAST_SUB, err);
	case FAST_DIV:
		return loop_div(s, op, n, o, args_v, scalar_args, err);
	default:
		break;
	}
	if (fk == FAST_MONO || fk == FAST_EDGE) {
		f = unary_fn(op->op, &kulps);
		gt0 = op->op == USC_HLO_OP_EXPONENTIAL ||
		      op->op == USC_HLO_OP_LOGISTIC;
		if (fk == FAST_MONO)
			return loop_mono(s, op, n, o, args_v, scalar_args, f,
					 kulps, gt0, err);
		switch (op->op) {
		case USC_HLO_OP_LOG_PLUS_ONE: edge = -1; break;
		case USC_HLO_OP_SQRT: open = false; break;
		case USC_HLO_OP_RSQRT: up = false; break;
		default: break;
		}
	}
	for (i = 0; i < n; i++) {
		value *r = &o[i];
		const value *x = op->nargs > 0 ? ARG(0, i) : NULL;
		const value *y = op->nargs > 1 ? ARG(1, i) : NULL;
		usc_status st;

		switch (fk) {
		case FAST_ADD:
		case FAST_SUB:
		case FAST_MUL:
		case FAST_DIV:
			break; /* their own loops above */
		case FAST_NEG:
			if (x->kind != USC__ORC_FINITE || x->mid == 0)
				break;
			*r = *x;
			r->mid = -x->mid;
			r->flags = (unsigned char)(x->flags &
				   ~(USC__ORC_NEG_ZERO | TIER_GT0 | TIER_LT0));
			if (x->flags & TIER_GT0)
				r->flags |= TIER_LT0;
			if (x->flags & TIER_LT0)
				r->flags |= TIER_GT0;
			continue;
		case FAST_ABS:
			if (x->kind != USC__ORC_FINITE || x->mid == 0)
				break;
			prep(r);
			if (x->rad == 0)
				set_point(r, fabs(x->mid));
			else {
				double lo, hi;

				bounds(x, &lo, &hi);
				if (lo >= 0 || hi <= 0)
					set_ball(r, fabs(x->mid), x->rad);
				else
					set_range(r, 0, 0, fmax(-lo, hi), 0);
			}
			continue;
		case FAST_MAX:
		case FAST_MIN:
			/* maxmin is the whole general path of both ops. */
			maxmin(r, fk == FAST_MAX, x, y);
			continue;
		case FAST_MONO: /* its own loop above */
		case FAST_EDGE:
			if (x->kind != USC__ORC_FINITE ||
			    (x->rad == 0 && x->mid == 0))
				break;
			prep(r);
			if (x->rad == 0) {
				unary_point(r, op->op, f, kulps, x->mid);
				continue;
			}
			if (fk == FAST_EDGE && !domain_edge(r, x, edge, open))
				continue;
			monotone(r, x, f, kulps, up);
			if (gt0 && r->kind == USC__ORC_FINITE)
				r->flags |= TIER_GT0;
			continue;
		case FAST_COPY:
			if (op->op == USC_HLO_OP_CONVERT &&
			    x->kind == USC__ORC_UNDECIDED)
				break;
			*r = *x;
			continue;
		case FAST_SELECT:
			if (x->kind == USC__ORC_UNDECIDED)
				break;
			*r = (x->bits & 1) ? *y : *ARG(2, i);
			continue;
		case FAST_COMPARE:
			compare_float(op, r, x, y);
			continue;
		case FAST_NONE:
			break;
		}
		for (k = 0; k < op->nargs; k++)
			a[k] = ARG(k, i);
		st = apply1(s, op, r, a, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

#undef ARG

/*
 * Float-to-float converts and reduce-precision: the array loop's copy
 * (FAST_COPY above; the tier does not quantize, as the oracle).  The
 * general path gives an undecided operand a fresh undecided value, which
 * no entry tells from the operand.
 */
static bool tier_identity(void *state, const usc__dom_op *op)
{
	(void)state;
	return op->nargs == 1 && fast_kind(op) == FAST_COPY;
}

usc_status usc__tier_apply_general(void *state, const usc__dom_op *op,
				   size_t n, void *out,
				   const void *const *args,
				   unsigned scalar_args, usc_error *err)
{
	tier_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	for (i = 0; i < n; i++) {
		usc_status st;

		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		st = apply1(s, op, &o[i], a, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* ------------------------------------------------ state and values */

static usc_status tier_create(void **state, usc_error *err)
{
	tier_state *s = usc__calloc(1, sizeof *s);
	usc_status st;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__domain_reference.create(&s->ref, err);
	if (st != USC_OK) {
		usc__free(s);
		return st;
	}
	*state = s;
	return USC_OK;
}

static void tier_destroy(void *state)
{
	tier_state *s = state;

	if (!s)
		return;
	usc__domain_reference.destroy(s->ref);
	usc__free(s);
}

static usc_status tier_load(void *state, usc_dtype t, uint64_t bits,
			    void *out, usc_error *err)
{
	(void)state;
	return load_bits(t, bits, out, err);
}

/* A constant is the encoding its text denotes in its type (the oracle's). */
static usc_status tier_constant(void *state, usc_dtype t,
				const usc_hlo_scalar *sc, void *out,
				usc_error *err)
{
	uint64_t bits = 0;
	usc_status st;

	if (t == USC_PRED) {
		if (strcmp(sc->text, "true") == 0 || strcmp(sc->text, "1") == 0)
			bits = 1;
		else if (strcmp(sc->text, "false") != 0 &&
			 strcmp(sc->text, "0") != 0)
			return usc__fail(err, USC_EPARSE,
					 "bad pred literal '%s'", sc->text);
	} else {
		st = usc_encode_str(t, sc->text, NULL, &bits, NULL, err);
		if (st != USC_OK)
			return st;
	}
	return tier_load(state, t, bits, out, err);
}

/*
 * The encoding of the midpoint rounded to nearest (the certified code
 * when the ball decides it), and the oracle's certificate: kind, the ball
 * rounded outward, and whether it certifies one rounding.  prec is 53.
 */
static usc_status tier_to_output(void *state, usc_dtype t, const void *v,
				 uint64_t *bits, void *enclosure,
				 usc_error *err)
{
	const value *x = v;
	usc__oracle_enclosure *e = enclosure;
	bool decided = false;
	uint64_t rb = 0;
	usc_status st;

	(void)state;
	if (e) {
		memset(e, 0, sizeof *e);
		e->kind = (usc__oracle_kind)x->kind;
		e->flags = x->flags & (USC__ORC_NEG_ZERO | USC__ORC_ZSIGN_UNKNOWN);
		e->prec = 53;
	}
	if (!usc_dtype_is_float(t)) {
		*bits = x->bits & usc__dom_mask(usc__dom_width(t));
		if (e && x->kind != USC__ORC_UNDECIDED) {
			int64_t sv = 0;
			uint64_t uv = 0;

			(void)usc_decode_int(t, *bits, &sv, &uv);
			e->lo = e->hi = usc_format_of(t)->kind == USC_KIND_SINT
						? (double)sv
						: (double)uv;
			e->rounded = true;
			e->rounded_bits = *bits;
		}
		return USC_OK;
	}
	st = usc__tier_decide_rounding(x, t, &decided, &rb, err);
	if (st != USC_OK)
		return st;
	if (decided)
		*bits = rb;
	else if (x->kind == USC__ORC_FINITE)
		st = usc_encode_double(t, point_d(x), NULL, bits, NULL);
	else {
		usc_float_info fi;

		(void)usc_float_info_of(t, &fi);
		*bits = fi.nan_bits;
	}
	if (e) {
		e->rounded = decided;
		e->rounded_bits = rb;
		if (x->kind == USC__ORC_FINITE)
			bounds(x, &e->lo, &e->hi);
		else if (x->kind == USC__ORC_POS_INF)
			e->lo = e->hi = INFINITY;
		else if (x->kind == USC__ORC_NEG_INF)
			e->lo = e->hi = -INFINITY;
		else
			e->lo = e->hi = NAN;
	}
	if (st != USC_OK)
		return usc__fail(err, st, "tier: cannot encode into %s",
				 usc_dtype_name(t));
	return USC_OK;
}

/*
 * The array entries (domain.h): the same values and codes as tier_load
 * and tier_to_output element by element, without the per-element calls
 * through the domain table and the tensor accessors.
 * tests/tier/test_tier_array.c holds them to bit-identity.
 */
static usc_status tier_load_array(void *state, usc_dtype t, const void *enc,
				  size_t n, void *out, usc_error *err)
{
	const unsigned char *p = enc;
	value *r = out;
	size_t i, c;
	usc_status st;

	(void)state;
	/* bf16 and f32 widen to double exactly, as in load_bits. */
	if (t == USC_BF16) {
		for (i = 0; i < n; i++) {
			uint32_t b = (uint32_t)p[2 * i] << 16 |
				     (uint32_t)p[2 * i + 1] << 24;
			float f;

			memcpy(&f, &b, sizeof f);
			set_point(&r[i], f);
		}
		return USC_OK;
	}
	if (t == USC_F32) {
		for (i = 0; i < n; i++) {
			uint32_t b = (uint32_t)usc__dom_get_enc(p, 4, i);
			float f;

			memcpy(&f, &b, sizeof f);
			set_point(&r[i], f);
		}
		return USC_OK;
	}
	c = (size_t)usc_format_of(t)->container_bytes;
	for (i = 0; i < n; i++) {
		st = load_bits(t, usc__dom_get_enc(p, c, i), &r[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * The code tier_to_output gives a FINITE value without strict-sign flags
 * in f32, bf16, f16 or f64: the nearest-even code of its midpoint
 * (point_d, which gives a zero its sign), with no bounds computed.  Why
 * this is the same code: when the ball decides
 * (usc__tier_decide_rounding), every real in it rounds to one code, and
 * the midpoint lies in the ball (the bounds step outward from mid -+
 * rad), so by the monotonicity of rounding into these formats (overflow
 * to an infinity of the same sign) the code is the midpoint's; when it
 * does not decide, tier_to_output encodes the midpoint itself.  A value
 * with a strict-sign flag can decide a code its midpoint does not round
 * to (a positive ball whose midpoint is below 0), so those, and every
 * other type, take the general path (false).  f32 converts in hardware
 * as encode_rn does, within FLT_MAX.
 */
static inline bool mid_code(usc_dtype t, const value *x, uint64_t *bits)
{
	double m;

	if (x->kind != USC__ORC_FINITE || (x->flags & (TIER_GT0 | TIER_LT0)))
		return false;
	m = point_d(x);
	if (t == USC_F32) {
		float f;
		uint32_t b;

		if (!(fabs(m) <= FLT_MAX))
			return false;
		f = (float)m;
		memcpy(&b, &f, sizeof b);
		*bits = b;
		return true;
	}
	return (t == USC_BF16 || t == USC_F16 || t == USC_F64) &&
	       usc_encode_double(t, m, NULL, bits, NULL) == USC_OK;
}

static usc_status tier_to_output_array(void *state, usc_dtype t,
				       const void *values, size_t n,
				       void *enc, usc_error *err)
{
	const value *x = values;
	size_t i, c = (size_t)usc_format_of(t)->container_bytes;
	usc_status st;

	if (t == USC_F32) {
		/* A constant width: the byte stores merge into one. */
		for (i = 0; i < n; i++) {
			uint64_t bits;

			if (!mid_code(t, &x[i], &bits)) {
				st = tier_to_output(state, t, &x[i], &bits,
						    NULL, err);
				if (st != USC_OK)
					return st;
			}
			usc__dom_put_enc(enc, 4, i, bits);
		}
		return USC_OK;
	}
	for (i = 0; i < n; i++) {
		uint64_t bits;

		if (!mid_code(t, &x[i], &bits)) {
			st = tier_to_output(state, t, &x[i], &bits, NULL, err);
			if (st != USC_OK)
				return st;
		}
		usc__dom_put_enc(enc, c, i, bits);
	}
	return USC_OK;
}

static bool tier_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return x->kind != USC__ORC_UNDECIDED && (x->bits & 1) != 0;
}

static usc_status tier_to_index(void *state, usc_dtype t, const void *v,
				int64_t *out, usc_error *err)
{
	tier_state *s = state;
	const value *x = v;

	if (x->kind == USC__ORC_UNDECIDED)
		return usc__fail(err, USC_EDOMAIN,
				 "tier: an index of type %s is undecided",
				 usc_dtype_name(t));
	return usc__domain_reference.to_index(s->ref, t, &x->bits, out, err);
}

/* ----------------------------------------------------------- ULP error */

/* a / p rounded down (up) for a power of two p: one step outward. */
static double div_down(double a, double p)
{
	double q = a / p;

	return q * p == a ? q : next_down(q);
}

static double div_up(double a, double p)
{
	double q = a / p;

	return q * p == a ? q : next_up(q);
}

usc_status usc__tier_decide_ulp_error(const usc__tier_value *v, usc_dtype t,
				      uint64_t y,
				      const usc__oracle_resolution *res,
				      usc__oracle_ulp_error *out,
				      usc_error *err)
{
	double yv = 0, lo, hi, nlo, nhi, m, M, umin, umax, d[4], um;
	double mid = NAN;

	if (!usc_dtype_is_float(t)) {
		out->kind = USC__ORC_UNDECIDED;
		out->lo = out->hi = out->mid = NAN;
		out->decided = false;
		return usc__fail(err, USC_EINVAL,
				 "tier: ULP error needs a float type, not %s",
				 usc_dtype_name(t));
	}
	if (usc__ulp_error_special((usc__oracle_kind)v->kind, t, y, out))
		return USC_OK;
	(void)usc_decode_double(t, y, &yv);
	bounds(v, &lo, &hi);
	/* Numerator y - y*: [y - hi, y - lo], rounded outward. */
	{
		/* TwoSum's exact error says which way each one rounded. */
		double e1 = 0, e2 = 0;

		nlo = two_sum(yv, -hi, &e1);
		nhi = two_sum(yv, -lo, &e2);
		if (!(e1 >= 0))
			nlo = next_down(nlo);
		if (!(e2 <= 0))
			nhi = next_up(nhi);
	}
	/* |y*| ranges over [m, M]; ulp is non-decreasing in |y*|. */
	m = lo <= 0 && hi >= 0 ? 0.0 : lo > 0 ? lo : -hi;
	M = fmax(fabs(lo), fabs(hi));
	if (usc_ulp_double(t, m, &umin) != USC_OK ||
	    usc_ulp_double(t, M, &umax) != USC_OK)
		return usc__fail(err, USC_EINTERNAL, "tier: no ULP for %s",
				 usc_dtype_name(t));
	/* ULPs are powers of two: the quotients are exact but for range. */
	d[0] = div_down(nlo, umin);
	d[1] = div_down(nlo, umax);
	d[2] = div_up(nhi, umin);
	d[3] = div_up(nhi, umax);
	if (usc_ulp_double(t, v->mid, &um) == USC_OK)
		mid = (yv - v->mid) / um;
	usc__ulp_error_finish(d, mid, res, out);
	return USC_OK;
}

/*
 * A reduction by add, for the interpreter's optional sum entry: the
 * tier's semantics round nothing, so every order gives the same real
 * sum.  When the init and every value are finite points (the common case:
 * a reduction of a kernel's inputs or of exact intermediates), MPFR adds
 * them exactly (mpfr_sum) and rounds once to a double: the ball is that
 * double with radius 0 when exact, else a bound of half its ulp.  This is
 * the exact accumulation that cancellation needs: the sequential path's
 * radius adds every partial sum's rounding error and cannot decide a sum
 * like 2^60 + 1 - 2^60.  Anything else (a radius, an infinity, a NaN, an
 * exact zero, whose sign the sequential path tracks) is declined.
 */
static usc_status tier_sum(void *state, const usc__dom_op *add, size_t n,
			   const void *values, const void *init, void *out,
			   usc_error *err)
{
	const value *v = values, *v0 = init;
	value *r = out;
	mpfr_t *xs;
	mpfr_ptr *ps;
	mpfr_t sum;
	int ternary;
	double d;
	size_t k;

	(void)state;
	/*
	 * The accumulation of a dot or convolution (the interpreter offers
	 * it too, domain.h) keeps the tier's per-product path.
	 */
	if (add->instr && (add->instr->opcode == USC_HLO_OP_DOT ||
			   add->instr->opcode == USC_HLO_OP_CONVOLUTION))
		return USC_EUNSUPPORTED;
	if (add->op != USC_HLO_OP_ADD || !usc_dtype_is_float(add->result) ||
	    v0->kind != USC__ORC_FINITE || v0->rad != 0)
		return USC_EUNSUPPORTED;
	for (k = 0; k < n; k++)
		if (v[k].kind != USC__ORC_FINITE || v[k].rad != 0)
			return USC_EUNSUPPORTED;
	xs = usc__reallocarray(NULL, n + 1, sizeof *xs);
	ps = usc__reallocarray(NULL, n + 1, sizeof *ps);
	if (!xs || !ps) {
		usc__free(xs);
		usc__free(ps);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (k = 0; k <= n; k++) {
		/* Doubles are exact at 53 bits. */
		mpfr_init2(xs[k], 53);
		mpfr_set_d(xs[k], k < n ? v[k].mid : v0->mid, MPFR_RNDN);
		ps[k] = xs[k];
	}
	mpfr_init2(sum, 53);
	ternary = mpfr_sum(sum, ps, (unsigned long)(n + 1), MPFR_RNDN);
	d = mpfr_get_d(sum, MPFR_RNDN);
	mpfr_clear(sum);
	for (k = 0; k <= n; k++)
		mpfr_clear(xs[k]);
	usc__free(xs);
	usc__free(ps);
	if (d == 0 && ternary == 0)
		return USC_EUNSUPPORTED;
	/*
	 * Rounded to nearest: the error is at most half the spacing at d,
	 * below 2^-53 |d| for a normal d and 2^-1075 for a subnormal one;
	 * rup covers both (its floor is 2^-1060).
	 */
	set_ball(r, d, ternary == 0 ? 0 : rup(fabs(d) * 0x1p-53));
	return USC_OK;
}

const usc__domain_ops usc__domain_tier = {
	.name = "tier",
	.value_size = sizeof(usc__tier_value),
	.create = tier_create,
	.destroy = tier_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = tier_load,
	.constant = tier_constant,
	.apply = tier_apply,
	.to_output = tier_to_output,
	.is_true = tier_is_true,
	.to_index = tier_to_index,
	.matmul = usc__tier_matmul,
	.sum = tier_sum,
	.identity = tier_identity,
	.load_array = tier_load_array,
	.to_output_array = tier_to_output_array,
};
