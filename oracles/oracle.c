/*
 * The certified oracle domain: every float element is an MPFI interval
 * that contains the exact real value of the function the kernel denotes.
 *
 * Soundness rests on three facts.  MPFI's functions return intervals
 * rounded outward (Revol and Rouillier, "Motivations for an arbitrary
 * precision interval arithmetic and the MPFI library", 2005); MPFR's
 * directed roundings bound the exact value of each function it offers
 * (the functions of oracle_fns.c are built from them); and every op whose
 * result could differ in kind across its operands' enclosures (a pole, a
 * domain edge, a discontinuity, the sign of a zero) is reported UNDECIDED
 * instead of choosing.  Integer and pred values are exact encodings, and
 * integer ops are the reference domain's own exact two's complement ops.
 *
 * Point operands (an exact input, an exact intermediate) go through MPFR
 * directly with the operands' IEEE meaning (signed zeros, infinities,
 * NaN): MPFR follows IEEE 754 and C99 Annex F for special values, which
 * is what XLA's ops compute on them.  docs/oracle.md states each op.
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

void usc__oracle_options_default(usc__oracle_options *opt)
{
	opt->precision = USC__ORACLE_PREC_DEFAULT;
	opt->quantize = false;
	opt->round_only = NULL;
	opt->round_only_count = 0;
}

usc_status usc__oracle_set_precision(void *state, mpfr_prec_t prec,
				     usc_error *err)
{
	orc_state *s = state;

	if (prec < USC__ORACLE_PREC_MIN || prec > USC__ORACLE_PREC_MAX)
		return usc__fail(err, USC_EINVAL,
				 "oracle precision %ld outside [%d, %d] bits",
				 (long)prec, USC__ORACLE_PREC_MIN,
				 USC__ORACLE_PREC_MAX);
	s->prec = prec;
	return USC_OK;
}

usc_status usc__oracle_configure(void *state, const usc__oracle_options *opt,
				 usc_error *err)
{
	orc_state *s = state;
	usc_status st = usc__oracle_set_precision(state, opt->precision, err);

	if (st != USC_OK)
		return st;
	s->quantize = opt->quantize;
	s->round_only = opt->round_only;
	s->round_only_count = opt->round_only ? opt->round_only_count : 0;
	return USC_OK;
}

mpfr_prec_t usc__oracle_precision(const void *state)
{
	return ((const orc_state *)state)->prec;
}

static usc_status orc_create(void **state, usc_error *err)
{
	orc_state *s = usc__calloc(1, sizeof *s);
	usc_status st;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__domain_reference.create(&s->ref, err);
	if (st != USC_OK) {
		usc__free(s);
		return st;
	}
	s->prec = USC__ORACLE_PREC_DEFAULT;
	mpfr_inits2(64, s->a, s->b, s->lo, s->hi, s->t, (mpfr_ptr)0);
	mpfi_init2(s->ia, 64);
	mpfi_init2(s->ib, 64);
	*state = s;
	return USC_OK;
}

static void orc_destroy(void *state)
{
	orc_state *s = state;

	if (!s)
		return;
	usc__domain_reference.destroy(s->ref);
	mpfr_clears(s->a, s->b, s->lo, s->hi, s->t, (mpfr_ptr)0);
	mpfi_clear(s->ia);
	mpfi_clear(s->ib);
	usc__free(s);
}

static void orc_init(void *state, void *values, size_t n)
{
	orc_state *s = state;
	value *v = values;
	size_t i;

	for (i = 0; i < n; i++) {
		mpfi_init2(v[i].x, s->prec);
		mpfi_set_ui(v[i].x, 0);
		v[i].bits = 0;
		v[i].kind = USC__ORC_FINITE;
		v[i].flags = 0;
	}
}

static void orc_clear(void *state, void *values, size_t n)
{
	value *v = values;
	size_t i;

	(void)state;
	for (i = 0; i < n; i++)
		mpfi_clear(v[i].x);
}

/* Copies exactly: the destination takes the source's precision. */
void usc__orc_vcopy(value *d, const value *src)
{
	if (mpfi_get_prec(d->x) != mpfi_get_prec(src->x))
		mpfi_set_prec(d->x, mpfi_get_prec(src->x));
	mpfi_set(d->x, src->x);
	d->bits = src->bits;
	d->kind = src->kind;
	d->flags = src->flags;
}

static void orc_copy(void *state, void *dst, const void *src, size_t n)
{
	value *d = dst;
	const value *sv = src;
	size_t i;

	(void)state;
	for (i = 0; i < n; i++)
		usc__orc_vcopy(&d[i], &sv[i]);
}

bool usc__oracle_is_undecided(const void *v)
{
	return ((const value *)v)->kind == USC__ORC_UNDECIDED;
}

size_t usc__oracle_count_undecided(const void *values, size_t n)
{
	const value *v = values;
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i].kind == USC__ORC_UNDECIDED;
	return c;
}

/* ------------------------------------------------------------ helpers */

void usc__orc_set_kind(value *v, usc__oracle_kind k)
{
	v->kind = (unsigned char)k;
	v->flags = 0;
}

void usc__orc_set_undecided(value *v)
{
	usc__orc_set_kind(v, USC__ORC_UNDECIDED);
}

/* Resets v to the working precision for a fresh result. */
void usc__orc_prep(orc_state *s, value *v)
{
	if (mpfi_get_prec(v->x) != s->prec)
		mpfi_set_prec(v->x, s->prec);
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
	v->bits = 0;
}

bool usc__orc_is_point(const value *v)
{
	return v->kind != USC__ORC_FINITE ||
	       mpfr_equal_p(&v->x->left, &v->x->right);
}

bool usc__orc_is_zero_point(const value *v)
{
	return v->kind == USC__ORC_FINITE && mpfr_zero_p(&v->x->left) &&
	       mpfr_zero_p(&v->x->right);
}

/* Whether a finite value's enclosure holds 0. */
bool usc__orc_has_zero(const value *v)
{
	return mpfr_sgn(&v->x->left) <= 0 && mpfr_sgn(&v->x->right) >= 0;
}

/*
 * The sign of the value where it is determined: -1, 0 (unknown: the
 * enclosure straddles 0 or is a zero of unknown sign), +1.  A zero counts
 * by its sign bit, as IEEE's sign rules do.
 */
int usc__orc_sign_of(const value *v)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: return 1;
	case USC__ORC_NEG_INF: return -1;
	case USC__ORC_FINITE: break;
	default: return 0;
	}
	if (usc__orc_is_zero_point(v)) {
		if (v->flags & USC__ORC_ZSIGN_UNKNOWN)
			return 0;
		return (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1;
	}
	if (mpfr_sgn(&v->x->left) > 0)
		return 1;
	if (mpfr_sgn(&v->x->right) < 0)
		return -1;
	return 0;
}

/* Makes r the point zero whose sign is that of sign s (0: unknown). */
void usc__orc_set_zero(orc_state *s, value *r, int sgn)
{
	usc__orc_prep(s, r);
	mpfi_set_ui(r->x, 0);
	r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
			   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/*
 * A point zero result takes its sign from sgn (-1, 0 unknown, +1); any
 * other result needs no zero flags.
 */
void usc__orc_fix_zero(value *r, int sgn)
{
	r->flags = 0;
	if (r->kind == USC__ORC_FINITE && mpfr_zero_p(&r->x->left) &&
	    mpfr_zero_p(&r->x->right))
		r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
				   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/* The IEEE point value of a point v into m (precision raised to fit). */
void usc__orc_point_to_mpfr(const value *v, mpfr_ptr m)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: mpfr_set_inf(m, 1); return;
	case USC__ORC_NEG_INF: mpfr_set_inf(m, -1); return;
	case USC__ORC_NAN: mpfr_set_nan(m); return;
	default: break;
	}
	mpfr_set_prec(m, mpfr_get_prec(&v->x->left));
	mpfr_set(m, &v->x->left, MPFR_RNDN);
	if (mpfr_zero_p(m))
		mpfr_set_zero(m, (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1);
}

void usc__oracle_value_set_interval(usc__oracle_value *v, mpfr_srcptr lo,
				    mpfr_srcptr hi)
{
	mpfr_prec_t p = mpfr_get_prec(lo) > mpfr_get_prec(hi)
				? mpfr_get_prec(lo)
				: mpfr_get_prec(hi);

	if (p < USC__ORACLE_PREC_MIN)
		p = USC__ORACLE_PREC_MIN;
	if (mpfi_get_prec(v->x) < p)
		mpfi_set_prec(v->x, p);
	mpfi_interv_fr(v->x, lo, hi);
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
	if (mpfr_zero_p(lo) && mpfr_zero_p(hi) && mpfr_signbit(lo) &&
	    mpfr_signbit(hi))
		v->flags = USC__ORC_NEG_ZERO;
}

/*
 * Sets r from an exact MPFR point m: NaN, an IEEE infinity, a signed
 * zero, or a finite number (r's precision raised to hold it exactly).
 */
void usc__orc_set_point(orc_state *s, value *r, mpfr_srcptr m)
{
	usc__orc_prep(s, r);
	if (mpfr_nan_p(m)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (mpfr_inf_p(m)) {
		usc__orc_set_kind(r, mpfr_signbit(m) ? USC__ORC_NEG_INF
					    : USC__ORC_POS_INF);
		return;
	}
	if (mpfr_get_prec(m) > mpfi_get_prec(r->x))
		mpfi_set_prec(r->x, mpfr_get_prec(m));
	mpfi_set_fr(r->x, m);
	usc__orc_fix_zero(r, mpfr_signbit(m) ? -1 : 1);
}

/*
 * f(x[, y]) of point operands with their IEEE meaning, through MPFR: the
 * results rounded down and up enclose the exact value.  An infinite
 * result is IEEE's Inf only when MPFR raised no overflow (a pole, an
 * infinite operand); after an overflow it is the finite real beyond the
 * exponent range.  An exact zero takes the sign MPFR gives it under
 * round-to-nearest, IEEE's rule (x - x = +0).
 */
void usc__orc_eval_points(orc_state *s, value *r, mpfr_fn1 f1, mpfr_fn2 f2,
			  const value *x, const value *y)
{
	int td, tu;
	bool ovf;

	usc__orc_point_to_mpfr(x, s->a);
	if (y)
		usc__orc_point_to_mpfr(y, s->b);
	usc__orc_prep(s, r);
	mpfr_set_prec(s->lo, s->prec);
	mpfr_set_prec(s->hi, s->prec);
	mpfr_clear_flags();
	td = f1 ? f1(s->lo, s->a, MPFR_RNDD) : f2(s->lo, s->a, s->b, MPFR_RNDD);
	tu = f1 ? f1(s->hi, s->a, MPFR_RNDU) : f2(s->hi, s->a, s->b, MPFR_RNDU);
	ovf = mpfr_overflow_p() != 0;
	if (mpfr_nan_p(s->lo) || mpfr_nan_p(s->hi)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (mpfr_inf_p(s->lo) && mpfr_inf_p(s->hi) && !ovf &&
	    mpfr_signbit(s->lo) == mpfr_signbit(s->hi)) {
		usc__orc_set_kind(r, mpfr_signbit(s->lo) ? USC__ORC_NEG_INF
						 : USC__ORC_POS_INF);
		return;
	}
	if (td == 0 && tu == 0 && mpfr_zero_p(s->lo)) {
		int neg;

		mpfr_set_prec(s->t, s->prec);
		if (f1)
			f1(s->t, s->a, MPFR_RNDN);
		else
			f2(s->t, s->a, s->b, MPFR_RNDN);
		neg = mpfr_signbit(s->t) != 0;
		usc__orc_set_zero(s, r, neg ? -1 : 1);
		return;
	}
	/*
	 * A finite real: an overflow bound rounded down is MPFR's largest
	 * number, and one rounded up is +Inf, "beyond"; both are sound.
	 */
	mpfi_interv_fr(r->x, s->lo, s->hi);
	usc__orc_fix_zero(r, 1);
}

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

/* ---------------------------------------------------------- binary */

mpfr_fn2 usc__orc_binary_mpfr(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_ADD: return mpfr_add;
	case USC_HLO_OP_SUBTRACT: return mpfr_sub;
	case USC_HLO_OP_MULTIPLY: return mpfr_mul;
	case USC_HLO_OP_DIVIDE: return mpfr_div;
	case USC_HLO_OP_REMAINDER: return mpfr_fmod;
	case USC_HLO_OP_ATAN2: return mpfr_atan2;
	case USC_HLO_OP_POWER: return mpfr_pow;
	default: return NULL;
	}
}

/* The point +-1 of sign sg, standing for a sign class of finite reals. */
static void sign_rep(orc_state *s, value *v, int sg)
{
	usc__orc_prep(s, v);
	mpfi_set_si(v->x, sg);
}

/*
 * max / min with XLA's semantics: NaN propagates; max(-0, +0) = +0 and
 * min(-0, +0) = -0.  On intervals both are taken endpoint-wise, which is
 * exact.  A point zero result takes a known sign only when every operand
 * that may supply a zero has a known sign.
 */
void usc__orc_maxmin(orc_state *s, value *r, bool is_max, const value *x,
		     const value *y)
{
	const value *o[2] = {x, y};
	int k;

	usc__orc_prep(s, r);
	if (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return;
	}
	for (k = 0; k < 2; k++) {
		const value *a = o[k], *b = o[1 - k];

		if (a->kind == (is_max ? USC__ORC_POS_INF : USC__ORC_NEG_INF)) {
			usc__orc_vcopy(r, a);
			return;
		}
		if (a->kind == (is_max ? USC__ORC_NEG_INF : USC__ORC_POS_INF)) {
			usc__orc_vcopy(r, b);
			return;
		}
	}
	{
		mpfr_prec_t p = mpfi_get_prec(x->x) > mpfi_get_prec(y->x)
					? mpfi_get_prec(x->x)
					: mpfi_get_prec(y->x);
		bool any_pos = false, any_neg = false, unknown = false;

		if (p > mpfi_get_prec(r->x))
			mpfi_set_prec(r->x, p);
		if (is_max) {
			mpfr_max(&r->x->left, &x->x->left, &y->x->left,
				 MPFR_RNDD);
			mpfr_max(&r->x->right, &x->x->right, &y->x->right,
				 MPFR_RNDU);
		} else {
			mpfr_min(&r->x->left, &x->x->left, &y->x->left,
				 MPFR_RNDD);
			mpfr_min(&r->x->right, &x->x->right, &y->x->right,
				 MPFR_RNDU);
		}
		if (mpfr_zero_p(&r->x->left))
			mpfr_set_zero(&r->x->left, 1);
		if (mpfr_zero_p(&r->x->right))
			mpfr_set_zero(&r->x->right, -1);
		if (!usc__orc_is_zero_point(r))
			return;
		for (k = 0; k < 2; k++) {
			int sg;

			if (!usc__orc_has_zero(o[k]))
				continue;
			sg = usc__orc_is_point(o[k]) ? usc__orc_sign_of(o[k])
						     : 0;
			if (sg > 0)
				any_pos = true;
			else if (sg < 0)
				any_neg = true;
			else
				unknown = true;
		}
		if (is_max)
			usc__orc_fix_zero(r, any_pos ? 1 : unknown ? 0 : -1);
		else
			usc__orc_fix_zero(r, any_neg ? -1 : unknown ? 0 : 1);
	}
}

/*
 * fmod on non-point intervals: x - n y with n = trunc(x / y) constant
 * over the box (trunc is monotone in the quotient, so equal values at the
 * quotient's endpoints fix it).  The sign of a zero result is x's.
 */
static void remainder_iv(orc_state *s, value *r, const value *x,
			 const value *y)
{
	mpfi_set_prec(s->ia, s->prec);
	mpfi_div(s->ia, x->x, y->x);
	mpfr_set_prec(s->lo, s->prec);
	mpfr_set_prec(s->hi, s->prec);
	mpfr_trunc(s->lo, &s->ia->left);
	mpfr_trunc(s->hi, &s->ia->right);
	if (!mpfr_number_p(s->lo) || !mpfr_equal_p(s->lo, s->hi)) {
		usc__orc_set_undecided(r);
		return;
	}
	mpfi_set_prec(s->ib, s->prec);
	mpfi_mul_fr(s->ib, y->x, s->lo);
	mpfi_sub(r->x, x->x, s->ib);
	usc__orc_fix_zero(r, usc__orc_sign_of(x));
}

void usc__orc_binary(orc_state *s, const usc__dom_op *op, value *r,
		     const value *x, const value *y)
{
	usc_hlo_opcode o = op->op;
	mpfr_fn2 f = usc__orc_binary_mpfr(o);
	value rep;
	int sx, sy;

	usc__orc_prep(s, r);
	if (o == USC_HLO_OP_MAXIMUM || o == USC_HLO_OP_MINIMUM) {
		usc__orc_maxmin(s, r, o == USC_HLO_OP_MAXIMUM, x, y);
		return;
	}
	/* pow(NaN, 0) = 1 and pow(1, NaN) = 1: point cases below. */
	if (o != USC_HLO_OP_POWER &&
	    (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return;
	}
	if (usc__orc_is_point(x) && usc__orc_is_point(y)) {
		usc__orc_eval_points(s, r, NULL, f, x, y);
		return;
	}
	sx = usc__orc_sign_of(x);
	sy = usc__orc_sign_of(y);
	/*
	 * One operand special, the other a non-point interval.  For add,
	 * subtract, multiply, divide and atan2 the IEEE result at an
	 * infinity depends only on the other operand's sign class (and for
	 * add and subtract not even on that), so one representative of the
	 * class decides it.
	 */
	if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE) {
		const value *fin = x->kind == USC__ORC_FINITE ? x : y;
		int sf = fin == x ? sx : sy;
		bool additive = o == USC_HLO_OP_ADD || o == USC_HLO_OP_SUBTRACT;

		switch (o) {
		case USC_HLO_OP_ADD:
		case USC_HLO_OP_SUBTRACT:
		case USC_HLO_OP_MULTIPLY:
		case USC_HLO_OP_DIVIDE:
		case USC_HLO_OP_ATAN2:
			if (sf == 0 && !additive)
				break;
			mpfi_init2(rep.x, 64);
			sign_rep(s, &rep, sf == 0 ? 1 : sf);
			rep.kind = USC__ORC_FINITE;
			usc__orc_eval_points(s, r, NULL, f, fin == x ? &rep : x,
					     fin == y ? &rep : y);
			mpfi_clear(rep.x);
			return;
		case USC_HLO_OP_REMAINDER:
			/* fmod(Inf, y) = NaN; fmod(x, Inf) = x. */
			if (x->kind != USC__ORC_FINITE)
				usc__orc_set_kind(r, USC__ORC_NAN);
			else
				usc__orc_vcopy(r, x);
			return;
		case USC_HLO_OP_POWER: {
			/*
			 * pow(x, NaN) = NaN unless x = 1, pow(NaN, y) = NaN
			 * unless y = 0 (C99 F.9.4.4); +Inf^y and x^(+-Inf)
			 * depend on sign classes of y and of |x| - 1.
			 */
			if (y->kind == USC__ORC_NAN) {
				if (mpfi_cmp_si(x->x, 1) != 0)
					usc__orc_set_kind(r, USC__ORC_NAN);
				else
					usc__orc_set_undecided(r);
				return;
			}
			if (x->kind == USC__ORC_NAN) {
				if (!usc__orc_has_zero(y))
					usc__orc_set_kind(r, USC__ORC_NAN);
				else
					usc__orc_set_undecided(r);
				return;
			}
			if (x->kind == USC__ORC_POS_INF && sy != 0) {
				if (sy > 0)
					usc__orc_set_kind(r, USC__ORC_POS_INF);
				else
					usc__orc_set_zero(s, r, 1);
				return;
			}
			if (y->kind != USC__ORC_FINITE) {
				int c;

				mpfi_set_prec(s->ia, mpfi_get_prec(x->x));
				mpfi_abs(s->ia, x->x);
				c = mpfi_cmp_si(s->ia, 1);
				if (c == 0) {
					usc__orc_set_undecided(r);
					return;
				}
				if ((c > 0) == (y->kind == USC__ORC_POS_INF))
					usc__orc_set_kind(r, USC__ORC_POS_INF);
				else
					usc__orc_set_zero(s, r, 1);
				return;
			}
			break;
		}
		default:
			break;
		}
		usc__orc_set_undecided(r);
		return;
	}
	switch (o) {
	case USC_HLO_OP_ADD:
		mpfi_add(r->x, x->x, y->x);
		break;
	case USC_HLO_OP_SUBTRACT:
		mpfi_sub(r->x, x->x, y->x);
		break;
	case USC_HLO_OP_MULTIPLY:
		mpfi_mul(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx == 0 || sy == 0 ? 0 : sx * sy);
		return;
	case USC_HLO_OP_DIVIDE:
		if (usc__orc_is_zero_point(y)) {
			/* Non-zero / 0 is a signed Inf; 0 / 0 is NaN. */
			if (sx == 0 || sy == 0)
				usc__orc_set_undecided(r);
			else if (usc__orc_has_zero(x))
				usc__orc_set_undecided(r);
			else
				usc__orc_set_kind(
					r, sx * sy > 0 ? USC__ORC_POS_INF
						       : USC__ORC_NEG_INF);
			return;
		}
		if (usc__orc_has_zero(y)) {
			usc__orc_set_undecided(r);
			return;
		}
		mpfi_div(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx == 0 ? 0 : sx * sy);
		return;
	case USC_HLO_OP_REMAINDER:
		if (usc__orc_is_zero_point(y)) {
			usc__orc_set_kind(r, USC__ORC_NAN);
			return;
		}
		if (usc__orc_has_zero(y)) {
			usc__orc_set_undecided(r);
			return;
		}
		remainder_iv(s, r, x, y);
		return;
	case USC_HLO_OP_ATAN2:
		/*
		 * atan2 is continuous away from the origin and the cut
		 * {y = 0, x < 0}; on a box clear of both, MPFI's enclosure
		 * holds.  A point zero y against x of one sign is exact.
		 */
		if (usc__orc_is_zero_point(x)) {
			if (mpfr_sgn(&y->x->left) > 0)
				usc__orc_set_zero(s, r, sx);
			else if (mpfr_sgn(&y->x->right) < 0 && sx != 0) {
				mpfi_const_pi(r->x);
				if (sx < 0)
					mpfi_neg(r->x, r->x);
			} else
				usc__orc_set_undecided(r);
			return;
		}
		if (usc__orc_has_zero(x) && mpfr_sgn(&y->x->left) <= 0) {
			usc__orc_set_undecided(r);
			return;
		}
		mpfi_atan2(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx);
		break;
	case USC_HLO_OP_POWER: {
		int status;

		usc__oracle_fn_pow(r->x, x->x, y->x, &status);
		if (status != 0)
			usc__orc_set_kind(r, (usc__oracle_kind)status);
		else
			usc__orc_fix_zero(r, 1);
		return;
	}
	default:
		usc__orc_set_undecided(r);
		return;
	}
	if (r->kind == USC__ORC_FINITE && mpfi_nan_p(r->x))
		usc__orc_set_undecided(r);
	else
		usc__orc_fix_zero(r, 1);
}

/* --------------------------------------------------------- compare */


/*
 * Which outcomes of comparing x with y the enclosures allow.  An IEEE
 * infinity is beyond every finite real, even one beyond MPFR's range.
 */
static unsigned cmp_possible(const value *x, const value *y, bool total)
{
	unsigned m = 0;
	int kx = x->kind, ky = y->kind;

	if (kx == USC__ORC_NAN || ky == USC__ORC_NAN)
		return USC__POSS_UN;
	if (kx != USC__ORC_FINITE || ky != USC__ORC_FINITE) {
		int rx = kx == USC__ORC_POS_INF ? 1 : kx == USC__ORC_NEG_INF ? -1 : 0;
		int ry = ky == USC__ORC_POS_INF ? 1 : ky == USC__ORC_NEG_INF ? -1 : 0;

		return rx < ry   ? USC__POSS_LT
		       : rx > ry ? USC__POSS_GT
				 : USC__POSS_EQ;
	}
	if (mpfr_less_p(&x->x->left, &y->x->right))
		m |= USC__POSS_LT;
	if (mpfr_greater_p(&x->x->right, &y->x->left))
		m |= USC__POSS_GT;
	if (mpfr_lessequal_p(&x->x->left, &y->x->right) &&
	    mpfr_lessequal_p(&y->x->left, &x->x->right))
		m |= USC__POSS_EQ;
	/*
	 * The total order tells -0 from +0: where the two may meet at 0,
	 * equality needs equal known signs.
	 */
	if (total && (m & USC__POSS_EQ) && usc__orc_has_zero(x) &&
	    usc__orc_has_zero(y)) {
		int sx = usc__orc_is_point(x) ? usc__orc_sign_of(x) : 0;
		int sy = usc__orc_is_point(y) ? usc__orc_sign_of(y) : 0;

		if (sx == 0 || sy == 0 || sx != sy)
			m |= USC__POSS_LT | USC__POSS_GT;
		if (sx != 0 && sy != 0) {
			if (usc__orc_is_point(x) && usc__orc_is_point(y) &&
			    sx != sy)
				m = sx < sy ? USC__POSS_LT : USC__POSS_GT;
		}
	}
	return m;
}

void usc__orc_compare_float(const usc__dom_op *op, value *r, const value *x,
			    const value *y)
{
	bool total = op->cmp_type == USC__CMP_TOTALORDER;
	unsigned m, b;
	bool any_true = false, any_false = false;

	r->bits = 0;
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED ||
	    (total && (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN))) {
		/* The total order needs NaN's sign bit, which is not kept. */
		usc__orc_set_undecided(r);
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
	r->kind = USC__ORC_FINITE;
	r->flags = 0;
	if (any_true && any_false)
		usc__orc_set_undecided(r);
	else
		r->bits = any_true ? 1 : 0;
}

/* ------------------------------------------------------- converts */

/* Loads the encoding bits of type t into r exactly. */
usc_status usc__orc_load_bits(orc_state *s, usc_dtype t, uint64_t bits,
			      value *r, usc_error *err)
{
	usc__orc_prep(s, r);
	if (!usc_dtype_is_float(t)) {
		r->bits = bits & usc__dom_mask(usc__dom_width(t));
		return USC_OK;
	}
	mpfr_set_prec(s->t, 64);
	if (usc_decode_mpfr(t, bits, s->t) != USC_OK)
		return usc__fail(err, USC_EINVAL, "cannot decode %s",
				 usc_dtype_name(t));
	usc__orc_set_point(s, r, s->t);
	return USC_OK;
}

/* The exact value of an integer encoding into a float value. */
static void int_to_value(orc_state *s, usc_dtype t, uint64_t bits, value *r)
{
	mpfr_set_prec(s->t, 64);
	(void)usc_decode_mpfr(t, bits, s->t);
	usc__orc_set_point(s, r, s->t);
}

/*
 * XLA's reduce-precision of an exact real x, for the quantize option: x
 * rounds to nearest-even with man_bits stored bits at the exponent range
 * the narrower of the two formats allows.  When the reduced exponent is
 * the narrower, values past its largest binade become Inf and values
 * below its smallest normal a signed zero (XLA flushes the reduced
 * format's subnormals); otherwise the declared type's own subnormal
 * spacing applies and a carry past its top binade gives Inf, as XLA's
 * rounding of the bit pattern does.
 */
static void rp_point(mpfr_ptr y, mpfr_srcptr x, const usc_format *f,
		     int eb, int mb)
{
	int m = mb < f->man_bits ? mb : f->man_bits;
	mpfr_exp_t e;

	mpfr_set_prec(y, m + 1 < MPFR_PREC_MIN ? MPFR_PREC_MIN : m + 1);
	if (!mpfr_regular_p(x)) {
		mpfr_set(y, x, MPFR_RNDN);
		return;
	}
	if (eb < f->exp_bits) {
		long red_bias = (1L << (eb - 1)) - 1;

		mpfr_set(y, x, MPFR_RNDN);
		e = mpfr_get_exp(y) - 1;
		if (e > red_bias)
			mpfr_set_inf(y, mpfr_sgn(x));
		else if (e <= -red_bias)
			mpfr_set_zero(y, mpfr_sgn(x));
		return;
	}
	{
		long emin = 1 - f->bias, emax = (1L << f->exp_bits) - 2 - f->bias;
		mpfr_t q;

		if (f->inf != USC_INF_IEEE)
			emax = (1L << f->exp_bits) - 1 - f->bias;
		e = mpfr_get_exp(x) - 1;
		if (e >= emin)
			mpfr_set(y, x, MPFR_RNDN);
		else {
			/* Round at the subnormal quantum 2^(emin - m). */
			mpfr_init2(q, mpfr_get_prec(x) + 2);
			mpfr_mul_2si(q, x, m - emin, MPFR_RNDN);
			mpfr_rint(q, q, MPFR_RNDN);
			mpfr_mul_2si(q, q, emin - m, MPFR_RNDN);
			mpfr_set_prec(y, mpfr_get_prec(q));
			mpfr_set(y, q, MPFR_RNDN);
			if (mpfr_zero_p(y))
				mpfr_set_zero(y, mpfr_sgn(x));
			mpfr_clear(q);
		}
		if (mpfr_regular_p(y) && mpfr_get_exp(y) - 1 > emax)
			mpfr_set_inf(y, mpfr_sgn(y));
	}
}

usc_status usc__orc_reduce_precision(orc_state *s, const usc__dom_op *op,
				     value *r, const value *x, usc_error *err)
{
	const usc_format *f = usc_format_of(op->arg[0]);

	if (!s->quantize || x->kind != USC__ORC_FINITE) {
		usc__orc_vcopy(r, x);
		return USC_OK;
	}
	if (!f || f->kind != USC_KIND_FLOAT || op->exponent_bits < 1 ||
	    op->mantissa_bits < 0)
		return usc__fail(err, USC_EINVAL,
				 "reduce-precision needs a float operand, "
				 "exponent_bits >= 1 and mantissa_bits >= 0");
	mpfr_set_prec(s->a, mpfi_get_prec(x->x));
	mpfr_set(s->a, &x->x->left, MPFR_RNDN);
	if (usc__orc_is_zero_point(x))
		usc__orc_point_to_mpfr(x, s->a);
	rp_point(s->lo, s->a, f, op->exponent_bits, op->mantissa_bits);
	mpfr_set_prec(s->b, mpfi_get_prec(x->x));
	mpfr_set(s->b, &x->x->right, MPFR_RNDN);
	if (usc__orc_is_zero_point(x))
		usc__orc_point_to_mpfr(x, s->b);
	rp_point(s->hi, s->b, f, op->exponent_bits, op->mantissa_bits);
	/* Non-decreasing: constant where the endpoints agree (zero signs too). */
	if ((usc__orc_is_point(x) && !(x->flags & USC__ORC_ZSIGN_UNKNOWN)) ||
	    (mpfr_equal_p(s->lo, s->hi) &&
	     mpfr_signbit(s->lo) == mpfr_signbit(s->hi) &&
	     !(mpfr_zero_p(s->lo) && usc__orc_has_zero(x))))
		usc__orc_set_point(s, r, s->lo);
	else
		usc__orc_set_undecided(r);
	return USC_OK;
}

usc_status usc__orc_convert(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);
	bool decided;
	uint64_t bits;
	usc_status st;

	usc__orc_prep(s, r);
	if (!usc_dtype_is_float(from)) {
		if (x->kind == USC__ORC_UNDECIDED) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		if (!usc_dtype_is_float(to)) {
			const void *args[1] = {&x->bits};

			return usc__domain_reference.apply(s->ref, op, 1,
							   &r->bits, args, 0,
							   err);
		}
		int_to_value(s, from, x->bits, r);
		if (!s->quantize)
			return USC_OK;
		st = usc__oracle_decide_rounding(r, to, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		return usc__orc_load_bits(s, to, bits, r, err);
	}
	if (x->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(to)) {
		if (!s->quantize) {
			usc__orc_vcopy(r, x);
			return USC_OK;
		}
		st = usc__oracle_decide_rounding(x, to, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		return usc__orc_load_bits(s, to, bits, r, err);
	}
	if (!tf)
		return usc__fail(err, USC_EINVAL, "convert to an invalid type");
	if (tf->kind == USC_KIND_PRED) {
		/* x != 0, and NaN is true, as C's conversion to bool. */
		if (x->kind != USC__ORC_FINITE || !usc__orc_has_zero(x))
			r->bits = 1;
		else if (usc__orc_is_zero_point(x))
			r->bits = 0;
		else
			usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (tf->kind != USC_KIND_SINT && tf->kind != USC_KIND_UINT)
		return usc__fail(err, USC_EUNSUPPORTED, "convert %s to %s",
				 usc_dtype_name(from), usc_dtype_name(to));
	/*
	 * XLA's float-to-int convert truncates and saturates (NaN gives 0):
	 * a non-decreasing map, constant on the enclosure exactly when the
	 * endpoints agree.
	 */
	if (x->kind != USC__ORC_FINITE) {
		usc__orc_point_to_mpfr(x, s->t);
		(void)usc_encode_mpfr(to, s->t, NULL, &r->bits, NULL);
		return USC_OK;
	}
	{
		uint64_t blo = 0, bhi = 0;

		(void)usc_encode_mpfr(to, &x->x->left, NULL, &blo, NULL);
		(void)usc_encode_mpfr(to, &x->x->right, NULL, &bhi, NULL);
		if (blo != bhi)
			usc__orc_set_undecided(r);
		else
			r->bits = blo;
	}
	return USC_OK;
}

usc_status usc__orc_bitcast(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	uint64_t bits;
	usc_status st;

	usc__orc_prep(s, r);
	if (usc__dom_width(from) != usc__dom_width(to))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "bitcast-convert from %s to %s changes the "
				 "width", usc_dtype_name(from),
				 usc_dtype_name(to));
	if (x->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		/* An encoding needs a rounding: to the operand's type. */
		bool decided;

		st = usc__oracle_decide_rounding(x, from, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
	} else
		bits = x->bits;
	bits &= usc__dom_mask(usc__dom_width(from));
	return usc__orc_load_bits(s, to, bits, r, err);
}

/* ----------------------------------------------------------- apply */

/* An op on integer and pred operands: the reference domain's exact op. */
static usc_status delegate(orc_state *s, const usc__dom_op *op, value *r,
			   const value *const *a, usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;

	usc__orc_prep(s, r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->kind == USC__ORC_UNDECIDED) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		args[k] = &a[k]->bits;
	}
	return usc__domain_reference.apply(s->ref, op, 1, &r->bits, args, 0,
					   err);
}

/* Whether two decided values are the same point (kind, value, zero sign). */
static bool same_point(const value *x, const value *y, bool flt)
{
	if (x->kind == USC__ORC_UNDECIDED || x->kind != y->kind)
		return false;
	if (!flt)
		return x->bits == y->bits;
	if (x->kind != USC__ORC_FINITE)
		return true;
	return usc__orc_is_point(x) && usc__orc_is_point(y) &&
	       mpfr_equal_p(&x->x->left, &y->x->left) &&
	       x->flags == y->flags && !(x->flags & USC__ORC_ZSIGN_UNKNOWN);
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	const char *name = usc_hlo_opcode_name(op->op);

	if (op->instr)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "oracle: unsupported op %s on %s at %u:%u "
				 "(instruction '%s')",
				 name, usc_dtype_name(op->result),
				 op->instr->loc.line, op->instr->loc.column,
				 op->instr->name);
	return usc__fail(err, USC_EUNSUPPORTED,
			 "oracle: unsupported op %s on %s", name,
			 usc_dtype_name(op->result));
}

static usc_status apply1(orc_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;

	switch (op->op) {
	case USC_HLO_OP_SELECT: {
		bool flt = usc_dtype_is_float(op->result);

		if (a[0]->kind == USC__ORC_UNDECIDED) {
			/* Undecided unless both branches are the same point. */
			if (same_point(a[1], a[2], flt))
				usc__orc_vcopy(r, a[1]);
			else {
				usc__orc_prep(s, r);
				usc__orc_set_undecided(r);
			}
			return USC_OK;
		}
		usc__orc_vcopy(r, (a[0]->bits & 1) ? a[1] : a[2]);
		return USC_OK;
	}
	case USC_HLO_OP_CLAMP: {
		/* XLA: clamp(lo, x, hi) = min(max(x, lo), hi). */
		value m;

		if (!usc_dtype_is_float(op->arg[1]))
			return delegate(s, op, r, a, err);
		mpfi_init2(m.x, s->prec);
		usc__orc_maxmin(s, &m, true, a[1], a[0]);
		usc__orc_maxmin(s, r, false, &m, a[2]);
		mpfi_clear(m.x);
		return USC_OK;
	}
	case USC_HLO_OP_COMPARE:
		if (!usc_dtype_is_float(at))
			return delegate(s, op, r, a, err);
		usc__orc_prep(s, r);
		usc__orc_compare_float(op, r, a[0], a[1]);
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		usc__orc_prep(s, r);
		if (a[0]->kind == USC__ORC_UNDECIDED)
			usc__orc_set_undecided(r);
		else
			r->bits = a[0]->kind == USC__ORC_FINITE;
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		return usc__orc_convert(s, op, r, a[0], err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return usc__orc_bitcast(s, op, r, a[0], err);
	case USC_HLO_OP_REDUCE_PRECISION:
		usc__orc_prep(s, r);
		return usc__orc_reduce_precision(s, op, r, a[0], err);
	default:
		break;
	}
	if (!usc_dtype_is_float(at))
		return delegate(s, op, r, a, err);
	if (op->nargs == 1) {
		if (usc__orc_unary(s, op, r, a[0]) != USC_OK)
			return unsupported(op, err);
		return USC_OK;
	}
	if (op->nargs == 2 && (usc__orc_binary_mpfr(op->op) ||
			       op->op == USC_HLO_OP_MAXIMUM ||
			       op->op == USC_HLO_OP_MINIMUM)) {
		usc__orc_binary(s, op, r, a[0], a[1]);
		return USC_OK;
	}
	return unsupported(op, err);
}

/* ----------------------------------------- attribution's rounding */

/* Whether op's result rounds under round_only (oracle.h). */
static bool rounds_here(const orc_state *s, const usc__dom_op *op)
{
	size_t i;

	if (!s->round_only_count || !op->instr ||
	    !usc_dtype_is_float(op->result))
		return false;
	for (i = 0; i < s->round_only_count; i++)
		if (s->round_only[i] == op->instr)
			return true;
	return false;
}

/*
 * Rounds a finite value nearest-even into the float type t, the format's
 * own overflow policy included, as the reference rounds an op's result.
 * Where the enclosure straddles a rounding boundary the certificate is
 * lost anyway, so the midpoint rounds: attribution reports midpoints.
 */
static usc_status round_to_type(orc_state *s, usc_dtype t, value *r,
				usc_error *err)
{
	bool decided;
	uint64_t bits;
	usc_status st;

	if (r->kind != USC__ORC_FINITE)
		return USC_OK;
	st = usc__oracle_decide_rounding(r, t, &decided, &bits, err);
	if (st != USC_OK)
		return st;
	if (!decided) {
		mpfr_set_prec(s->a, mpfi_get_prec(r->x));
		mpfi_mid(s->a, r->x);
		(void)usc_encode_mpfr(t, s->a, NULL, &bits, NULL);
	}
	return usc__orc_load_bits(s, t, bits, r, err);
}

static usc_status orc_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	orc_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	usc__mpfr_range range;
	usc_status st = USC_OK;
	bool round = rounds_here(s, op);
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	usc__mpfr_range_widen(&range);
	for (i = 0; i < n && st == USC_OK; i++) {
		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		st = apply1(s, op, &o[i], a, err);
		if (st == USC_OK && round)
			st = round_to_type(s, op->result, &o[i], err);
	}
	usc__mpfr_range_restore(&range);
	return st;
}

/* ------------------------------------------------ loads and outputs */

static usc_status orc_load(void *state, usc_dtype t, uint64_t bits,
			   void *out, usc_error *err)
{
	orc_state *s = state;
	usc__mpfr_range range;
	usc_status st;

	usc__mpfr_range_widen(&range);
	st = usc__orc_load_bits(s, t, bits, out, err);
	usc__mpfr_range_restore(&range);
	return st;
}

/*
 * A constant's element is the encoding of its declared type that the
 * text denotes (rounded once, nearest-even): the kernel's data, which the
 * compiler stores in that type, not a real number the text merely
 * approximates.
 */
static usc_status orc_constant(void *state, usc_dtype t,
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
	return orc_load(state, t, bits, out, err);
}

static usc_status orc_to_output(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err)
{
	orc_state *s = state;
	const value *x = v;
	usc__oracle_enclosure *e = enclosure;
	usc__mpfr_range range;
	usc_status st = USC_OK;
	bool decided = false;
	uint64_t rb = 0;

	usc__mpfr_range_widen(&range);
	if (e) {
		memset(e, 0, sizeof *e);
		e->kind = (usc__oracle_kind)x->kind;
		e->flags = x->flags;
		e->prec = (long)s->prec;
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
		usc__mpfr_range_restore(&range);
		return USC_OK;
	}
	st = usc__oracle_decide_rounding(x, t, &decided, &rb, err);
	if (st != USC_OK)
		goto done;
	if (decided)
		*bits = rb;
	else if (x->kind == USC__ORC_FINITE) {
		/* The midpoint, rounded to nearest: a best guess, not certified. */
		mpfr_set_prec(s->t, mpfi_get_prec(x->x) + 1);
		mpfi_mid(s->t, x->x);
		if (!mpfr_number_p(s->t))
			mpfr_set(s->t, mpfr_inf_p(&x->x->left) ? &x->x->right
							       : &x->x->left,
				 MPFR_RNDN);
		st = usc_encode_mpfr(t, s->t, NULL, bits, NULL);
	} else {
		usc_float_info fi;

		(void)usc_float_info_of(t, &fi);
		*bits = fi.nan_bits;
	}
	if (e) {
		e->rounded = decided;
		e->rounded_bits = rb;
		if (x->kind == USC__ORC_FINITE) {
			e->lo = mpfr_get_d(&x->x->left, MPFR_RNDD);
			e->hi = mpfr_get_d(&x->x->right, MPFR_RNDU);
		} else if (x->kind == USC__ORC_POS_INF)
			e->lo = e->hi = INFINITY;
		else if (x->kind == USC__ORC_NEG_INF)
			e->lo = e->hi = -INFINITY;
		else
			e->lo = e->hi = NAN;
	}
done:
	usc__mpfr_range_restore(&range);
	if (st != USC_OK && (!err || err->code == USC_OK))
		return usc__fail(err, st, "oracle: cannot encode into %s",
				 usc_dtype_name(t));
	return st;
}

/*
 * The domain interface offers no undecided answer here: an undecided
 * pred reads false.  The interpreter's select goes through apply, which
 * keeps it undecided; docs/oracle.md notes the gap.
 */
static bool orc_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return x->kind != USC__ORC_UNDECIDED && (x->bits & 1) != 0;
}

static usc_status orc_to_index(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err)
{
	orc_state *s = state;
	const value *x = v;

	if (x->kind == USC__ORC_UNDECIDED)
		return usc__fail(err, USC_EDOMAIN,
				 "oracle: an index of type %s is undecided at "
				 "%ld bits", usc_dtype_name(t), (long)s->prec);
	return usc__domain_reference.to_index(s->ref, t, &x->bits, out, err);
}

const usc__domain_ops usc__domain_oracle = {
	.name = "oracle",
	.value_size = sizeof(usc__oracle_value),
	.create = orc_create,
	.destroy = orc_destroy,
	.init = orc_init,
	.clear = orc_clear,
	.copy = orc_copy,
	.load = orc_load,
	.constant = orc_constant,
	.apply = orc_apply,
	.to_output = orc_to_output,
	.is_true = orc_is_true,
	.to_index = orc_to_index,
};
