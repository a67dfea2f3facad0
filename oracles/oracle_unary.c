/*
 * The certified oracle's one-operand ops (oracle_internal.h): MPFI's
 * functions and those of oracle_fns.c on enclosures, MPFR on points, and
 * UNDECIDED where an enclosure meets a pole, a domain edge or a
 * discontinuity (docs/oracle.md).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"
#include "oracle.h"
#include "oracle_internal.h"

/* ----------------------------------------------------------- unary */

/* The IEEE result of a unary op at an infinite operand, in double. */
static double unary_at_inf(usc_hlo_opcode op, double x)
{
	switch (op) {
	case USC_HLO_OP_NEGATE: return -x;
	case USC_HLO_OP_ABS: return fabs(x);
	case USC_HLO_OP_SIGN: return x > 0 ? 1.0 : -1.0;
	case USC_HLO_OP_EXPONENTIAL: return exp(x);
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return expm1(x);
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

static int rint_even(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_roundeven(y, x, r);
}

static int rint_away(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_round(y, x, r);
}

static int floor_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_floor(y, x, r);
}

static int ceil_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_ceil(y, x, r);
}

/* IEEE's rSqrt: rsqrt(+-0) = +-Inf, rsqrt(x < 0) = NaN. */
static int rsqrt_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	if (mpfr_zero_p(x)) {
		mpfr_set_inf(y, mpfr_signbit(x) ? -1 : 1);
		return 0;
	}
	return mpfr_rec_sqrt(y, x, r);
}

/* logistic of a point, bounded by oracle_fns.c's directed steps. */
static int logistic_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	mpfi_t a, b;

	mpfi_init2(a, mpfr_get_prec(x));
	mpfi_init2(b, mpfr_get_prec(y));
	mpfi_set_fr(a, x);
	usc__oracle_fn_logistic(b, a);
	mpfr_set(y, r == MPFR_RNDD ? &b->left : &b->right, r);
	mpfi_clear(a);
	mpfi_clear(b);
	/* Never exact: logistic of a rational is transcendental but at 0. */
	return mpfr_zero_p(x) ? 0 : 1;
}

static int sign_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	if (mpfr_zero_p(x) || mpfr_nan_p(x))
		return mpfr_set(y, x, MPFR_RNDN);
	mpfr_set_si(y, mpfr_sgn(x) > 0 ? 1 : -1, MPFR_RNDN);
	return 0;
}

static mpfr_fn1 unary_mpfr(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_NEGATE: return mpfr_neg;
	case USC_HLO_OP_ABS: return mpfr_abs;
	case USC_HLO_OP_SIGN: return sign_fn;
	case USC_HLO_OP_EXPONENTIAL: return mpfr_exp;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return mpfr_expm1;
	case USC_HLO_OP_LOG: return mpfr_log;
	case USC_HLO_OP_LOG_PLUS_ONE: return mpfr_log1p;
	case USC_HLO_OP_LOGISTIC: return logistic_fn;
	case USC_HLO_OP_TANH: return mpfr_tanh;
	case USC_HLO_OP_ERF: return mpfr_erf;
	case USC_HLO_OP_SQRT: return mpfr_sqrt;
	case USC_HLO_OP_RSQRT: return rsqrt_fn;
	case USC_HLO_OP_CBRT: return mpfr_cbrt;
	case USC_HLO_OP_SINE: return mpfr_sin;
	case USC_HLO_OP_COSINE: return mpfr_cos;
	case USC_HLO_OP_TAN: return mpfr_tan;
	case USC_HLO_OP_FLOOR: return floor_fn;
	case USC_HLO_OP_CEIL: return ceil_fn;
	case USC_HLO_OP_ROUND_NEAREST_EVEN: return rint_even;
	case USC_HLO_OP_ROUND_NEAREST_AFZ: return rint_away;
	default: return NULL;
	}
}

/*
 * A discrete op (floor, ceil, round-*) on a non-point interval: the
 * function is non-decreasing, so it is constant on the interval exactly
 * when its values at the two endpoints agree.  A zero result takes the
 * operand's sign (ceil(-0.5) = -0).
 */
static void discrete_unary(orc_state *s, value *r, mpfr_fn1 f,
			   const value *x)
{
	mpfr_set_prec(s->lo, mpfi_get_prec(x->x));
	mpfr_set_prec(s->hi, mpfi_get_prec(x->x));
	f(s->lo, &x->x->left, MPFR_RNDN);
	f(s->hi, &x->x->right, MPFR_RNDN);
	if (!mpfr_number_p(s->lo) || !mpfr_equal_p(s->lo, s->hi)) {
		usc__orc_set_undecided(r);
		return;
	}
	if (mpfi_get_prec(r->x) < mpfr_get_prec(s->lo))
		mpfi_set_prec(r->x, mpfr_get_prec(s->lo));
	mpfi_set_fr(r->x, s->lo);
	usc__orc_fix_zero(r, usc__orc_sign_of(x));
}

/*
 * A unary op whose domain ends at edge (log: 0, log1p: -1, sqrt: 0):
 * below it the result is NaN; the decision needs the enclosure on one
 * side.  *go says the interval lies inside the domain.  At the edge
 * itself a point is handled by eval_points; a non-point interval that
 * touches the edge could be the edge (a pole or a different kind) or
 * not: undecided.  open: the edge is outside the domain's interior
 * value set (log(0) = -Inf, rsqrt(0) = +Inf), so the interval must be
 * strictly above it; for sqrt the edge is an ordinary point.
 */
static bool domain_edge(value *r, const value *x, long edge, bool open,
			bool *go)
{
	int lo = mpfr_cmp_si(&x->x->left, edge);
	int hi = mpfr_cmp_si(&x->x->right, edge);

	*go = false;
	if (hi < 0) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return true;
	}
	if (lo > 0 || (!open && lo == 0)) {
		*go = true;
		return true;
	}
	usc__orc_set_undecided(r);
	return true;
}

/*
 * Whether the interval x is at least 7 wide: more than a period of sine
 * and cosine (2 pi) and of tangent (pi), so that its image is known
 * without reducing its endpoints.  Reducing them is what would cost: an
 * endpoint of binary exponent E takes about E bits of pi, and the exact
 * values of a kernel reach exponents of hundreds of millions (expm1 of exp
 * of 20 is about 2^700000000, where a device has long overflowed).  The
 * width is rounded down, so "at least 7" is certain.
 */
static bool spans_period(orc_state *s, const value *x)
{
	mpfr_set_prec(s->t, 53);
	mpfr_sub(s->t, &x->x->right, &x->x->left, MPFR_RNDD);
	return mpfr_cmp_ui(s->t, 7) >= 0;
}

usc_status usc__orc_unary(orc_state *s, const usc__dom_op *op, value *r,
			  const value *x)
{
	mpfr_fn1 f = unary_mpfr(op->op);
	bool go = true;
	int sg;

	usc__orc_prep(s, r);
	if (!f)
		return USC_EUNSUPPORTED;
	if (x->kind == USC__ORC_UNDECIDED || x->kind == USC__ORC_NAN) {
		usc__orc_set_kind(r, (usc__oracle_kind)x->kind);
		return USC_OK;
	}
	if (x->kind != USC__ORC_FINITE) {
		double d = unary_at_inf(op->op, x->kind == USC__ORC_POS_INF
							? INFINITY
							: -INFINITY);

		mpfr_set_prec(s->t, 53);
		mpfr_set_d(s->t, d, MPFR_RNDN);
		usc__orc_set_point(s, r, s->t);
		return USC_OK;
	}
	if (usc__orc_is_point(x)) {
		usc__orc_eval_points(s, r, f, NULL, x, NULL);
		return USC_OK;
	}
	sg = usc__orc_sign_of(x);
	switch (op->op) {
	case USC_HLO_OP_NEGATE:
		mpfi_set_prec(r->x, mpfi_get_prec(x->x));
		mpfi_neg(r->x, x->x);
		break;
	case USC_HLO_OP_ABS:
		mpfi_set_prec(r->x, mpfi_get_prec(x->x));
		mpfi_abs(r->x, x->x);
		sg = 1;
		break;
	case USC_HLO_OP_SIGN:
		if (sg == 0) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		mpfi_set_si(r->x, sg);
		break;
	case USC_HLO_OP_EXPONENTIAL: mpfi_exp(r->x, x->x); break;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: mpfi_expm1(r->x, x->x); break;
	case USC_HLO_OP_TANH: mpfi_tanh(r->x, x->x); break;
	case USC_HLO_OP_CBRT: mpfi_cbrt(r->x, x->x); break;
	case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE:
		if (spans_period(s, x))
			mpfi_interv_si(r->x, -1, 1);
		else if (op->op == USC_HLO_OP_SINE)
			mpfi_sin(r->x, x->x);
		else
			mpfi_cos(r->x, x->x);
		break;
	case USC_HLO_OP_TAN:
		/* A pole inside: every real, as MPFI's own tangent says. */
		if (spans_period(s, x)) {
			mpfr_set_inf(&r->x->left, -1);
			mpfr_set_inf(&r->x->right, 1);
		} else {
			mpfi_tan(r->x, x->x);
		}
		break;
	case USC_HLO_OP_LOGISTIC: usc__oracle_fn_logistic(r->x, x->x); break;
	case USC_HLO_OP_ERF: usc__oracle_fn_erf(r->x, x->x); break;
	case USC_HLO_OP_LOG:
		domain_edge(r, x, 0, true, &go);
		if (go)
			mpfi_log(r->x, x->x);
		break;
	case USC_HLO_OP_LOG_PLUS_ONE:
		domain_edge(r, x, -1, true, &go);
		if (go)
			mpfi_log1p(r->x, x->x);
		break;
	case USC_HLO_OP_SQRT:
		domain_edge(r, x, 0, false, &go);
		if (go)
			mpfi_sqrt(r->x, x->x);
		break;
	case USC_HLO_OP_RSQRT:
		domain_edge(r, x, 0, true, &go);
		if (go)
			usc__oracle_fn_rsqrt(r->x, x->x);
		break;
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		discrete_unary(s, r, f, x);
		return USC_OK;
	default:
		return USC_EUNSUPPORTED;
	}
	if (op->op == USC_HLO_OP_NEGATE)
		sg = -sg;
	if (r->kind == USC__ORC_FINITE) {
		/*
		 * MPFI marks a failed evaluation with NaN endpoints; that
		 * cannot happen inside the domains checked above, and is
		 * reported as undecided rather than trusted if it does.
		 */
		if (mpfi_nan_p(r->x))
			usc__orc_set_undecided(r);
		else
			usc__orc_fix_zero(r, sg);
	}
	return USC_OK;
}
