/*
 * The tier's arithmetic, monotone functions, unary and binary ops on one
 * element each: the bounds of docs/tier.md, "Every op's bound".
 */
#include "internal.h"

#include "tier_internal.h"

/* ----------------------------------------------------- arithmetic */

void usc__tier_add_balls(value *r, double a, double ra, double b, double rb)
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
void usc__tier_mul_balls(value *r, double a, double ra, double b, double rb)
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
void usc__tier_div_balls(value *r, double a, double ra, double b, double rb)
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
double usc__tier_lipschitz(dfn f)
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
void usc__tier_monotone(value *r, const value *x, dfn f, double k, bool up)
{
	double lo, hi, flo, fhi, L = usc__tier_lipschitz(f);

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
bool usc__tier_domain_edge(value *r, const value *x, double edge, bool open)
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
dfn usc__tier_unary_fn(usc_hlo_opcode o, double *k)
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
void usc__tier_unary_point(value *r, usc_hlo_opcode o, dfn f, double k, double x)
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
		usc__tier_monotone(r, x, tan, ULPS_TAN, true);
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

usc_status usc__tier_unary(value *r, const usc__dom_op *op, const value *x)
{
	usc_hlo_opcode o = op->op;
	double k;
	dfn f = usc__tier_unary_fn(o, &k), ex = exact_unary(o);
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
		usc__tier_unary_point(r, o, f, k, d);
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
		if (usc__tier_domain_edge(r, x, 0, true))
			usc__tier_monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_LOG_PLUS_ONE:
		if (usc__tier_domain_edge(r, x, -1, true))
			usc__tier_monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_SQRT:
		if (usc__tier_domain_edge(r, x, 0, false))
			usc__tier_monotone(r, x, f, k, true);
		return USC_OK;
	case USC_HLO_OP_RSQRT:
		if (usc__tier_domain_edge(r, x, 0, true))
			usc__tier_monotone(r, x, f, k, false);
		return USC_OK;
	default:
		/* exp, expm1, logistic, tanh, erf, cbrt: increasing. */
		usc__tier_monotone(r, x, f, k, true);
		if (r->kind == USC__ORC_FINITE &&
		    (o == USC_HLO_OP_EXPONENTIAL || o == USC_HLO_OP_LOGISTIC))
			r->flags |= TIER_GT0;
		return USC_OK;
	}
}

/* ---------------------------------------------------------- binary */

bool usc__tier_is_binary(usc_hlo_opcode o)
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
void usc__tier_binary_points(value *r, usc_hlo_opcode o, double a, double b)
{
	double y;

	switch (o) {
	case USC_HLO_OP_ADD: usc__tier_add_balls(r, a, 0, b, 0); break;
	case USC_HLO_OP_SUBTRACT: usc__tier_add_balls(r, a, 0, -b, 0); break;
	case USC_HLO_OP_MULTIPLY: usc__tier_mul_balls(r, a, 0, b, 0); break;
	case USC_HLO_OP_DIVIDE:
		if (b == 0) {
			set_point(r, a / b); /* a pole, or 0/0 = NaN */
			return;
		}
		usc__tier_div_balls(r, a, 0, b, 0);
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
void usc__tier_maxmin(value *r, bool is_max, const value *x, const value *y)
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

	usc__tier_div_balls(&q, x->mid, x->rad, y->mid, y->rad);
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
	usc__tier_mul_balls(&p, n, 0, y->mid, y->rad);
	if (p.kind != USC__ORC_FINITE) {
		set_undecided(r);
		return;
	}
	usc__tier_add_balls(r, x->mid, x->rad, -p.mid, p.rad);
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

void usc__tier_binary(value *r, const usc__dom_op *op, const value *x,
		   const value *y)
{
	usc_hlo_opcode o = op->op;
	int sx, sy;

	prep(r);
	if (o == USC_HLO_OP_MAXIMUM || o == USC_HLO_OP_MINIMUM) {
		usc__tier_maxmin(r, o == USC_HLO_OP_MAXIMUM, x, y);
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
			usc__tier_binary_points(r, o, point_d(x), point_d(y));
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
		usc__tier_add_balls(r, x->mid, x->rad, y->mid, y->rad);
		if (r->kind == USC__ORC_FINITE && (x->flags & y->flags & TIER_GT0))
			r->flags |= TIER_GT0;
		return;
	case USC_HLO_OP_SUBTRACT:
		usc__tier_add_balls(r, x->mid, x->rad, -y->mid, y->rad);
		return;
	case USC_HLO_OP_MULTIPLY:
		usc__tier_mul_balls(r, x->mid, x->rad, y->mid, y->rad);
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
		usc__tier_div_balls(r, x->mid, x->rad, y->mid, y->rad);
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
