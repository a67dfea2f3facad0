/*
 * The legitimate envelope domain (oracles/envelope.h, docs/envelope.md).
 *
 * Each op is computed in two steps.  First the exact range of the
 * mathematical op over the operand sets: the operands' finite intervals,
 * infinities and NaN are combined piece by piece, and each combination
 * goes through the MPFI oracle (usc__domain_oracle), whose enclosures are
 * rounded outward and therefore contain f over the whole box.  Then the
 * op's freedom under the profile: the exact range E is mapped through
 * every rounding a correct compiler may apply (nearest-even to the
 * declared type T, nearest-even to the excess type W, no rounding at all
 * for a multiply that may feed an FMA, any T value within k ulps for an
 * approximate function, a flushed denormal), each a monotone map of E or
 * a bound derived from E's ends, and the union is kept.  Rounding to
 * nearest is monotone, so [RN(lo), RN(hi)] is exactly the image of
 * [lo, hi]; the ends are rounded by the dtype core (usc_encode_mpfr), not
 * by hand.
 *
 * Anything the domain cannot bound soundly is UNKNOWN: the element is
 * then undecided, never a false alarm.
 *
 * This file holds the state, the rounding sets, the exact float ops and
 * the elementwise dispatch; envelope_continuous.c the continuous float
 * ops (the oracle's ranges, the divide by a reciprocal); envelope_value.c
 * the loads, outputs and containment, envelope_discrete.c compare,
 * integer, pred, convert and reduce-precision, envelope_sum.c reductions,
 * dots and convolutions (envelope_internal.h is what they share).
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"
#include "envelope.h"
#include "envelope_fast.h"
#include "envelope_internal.h"
#include "oracle.h"

void usc__envelope_profile_strict(usc_profile *p)
{
	int i;

	memset(p, 0, sizeof *p);
	strcpy(p->name, "strict");
	p->excess_type = USC_F32;
	p->dot_f32 = USC_DOT_F32_FULL;
	for (i = 0; i < USC_PFN_COUNT; i++)
		p->accuracy[i] = 0.5;
	p->fp8_overflow = USC_FP8_OVF_NONSAT;
	p->minmax_nan = USC_MINMAX_NAN_PROPAGATE;
}

static usc_status env_create(void **state, usc_error *err)
{
	env_state *s = usc__calloc(1, sizeof *s);
	usc_status st;
	int t;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	usc__envelope_profile_strict(&s->prof);
	st = usc__domain_oracle.create(&s->orc, err);
	if (st != USC_OK) {
		usc__free(s);
		return st;
	}
	st = usc__domain_reference.create(&s->ref, err);
	if (st != USC_OK) {
		usc__domain_oracle.destroy(s->orc);
		usc__free(s);
		return st;
	}
	usc__domain_oracle.init(s->orc, s->ov, USC__DOM_MAX_ARGS + 1);
	mpfr_inits2(ENV_PREC, s->a, s->b, s->t, s->lo, s->hi, (mpfr_ptr)0);
	for (t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++)
		if (usc_dtype_is_float((usc_dtype)t) &&
		    usc_float_info_of((usc_dtype)t, &s->info[t]) == USC_OK)
			s->has_info[t] = true;
	s->mpfr_only = usc__envelope_mpfr_from_environment();
	*state = s;
	return USC_OK;
}

static void env_destroy(void *state)
{
	env_state *s = state;

	if (!s)
		return;
	usc__domain_oracle.clear(s->orc, s->ov, USC__DOM_MAX_ARGS + 1);
	usc__domain_oracle.destroy(s->orc);
	usc__domain_reference.destroy(s->ref);
	mpfr_clears(s->a, s->b, s->t, s->lo, s->hi, (mpfr_ptr)0);
	usc__free(s);
}

usc_status usc__envelope_set_profile(void *state, const usc_profile *p,
				     usc_error *err)
{
	env_state *s = state;

	/* The remembered plan was made under the old profile. */
	usc__env_plan_forget(s);
	if (!p) {
		usc__envelope_profile_strict(&s->prof);
		return USC_OK;
	}
	if (p->excess_precision && !usc_dtype_is_float(p->excess_type))
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': the excess type %s is not a "
				 "float type",
				 p->name, usc_dtype_name(p->excess_type));
	s->prof = *p;
	return USC_OK;
}

void usc__envelope_value_set(usc__envelope_value *v, double lo, double hi)
{
	memset(v, 0, sizeof *v);
	v->lo = lo;
	v->hi = hi;
	v->flags = FIN | ZPOS | ZNEG;
}

/* ------------------------------------------------------------ helpers */

static void set_unknown(value *r)
{
	memset(r, 0, sizeof *r);
	r->flags = UNK;
}

bool usc__env_has_zero(const value *v)
{
	return (v->flags & FIN) && v->lo <= 0 && v->hi >= 0;
}

/* Adds one encoding of float type t to r. */
void usc__env_add_bits(value *r, usc_dtype t, uint64_t bits)
{
	double d = 0;

	(void)usc_decode_double(t, bits, &d);
	if (isnan(d))
		r->flags |= VNAN;
	else if (isinf(d))
		r->flags |= d > 0 ? PINF : NINF;
	else
		usc__env_hull(r, d, d, signbit(d) ? ZNEG : ZPOS);
}

bool usc__env_is_point(const value *v)
{
	return (v->flags & (FIN | VNAN | PINF | NINF | UNK)) == FIN &&
	       v->lo == v->hi;
}

/* A float value as one encoding of t, when it is a single one. */
bool usc__env_float_point_bits(const value *v, usc_dtype t, uint64_t *bits)
{
	unsigned f = v->flags & (FIN | VNAN | PINF | NINF | UNK);
	unsigned flags = 0;
	double x;

	if (f == VNAN)
		x = NAN;
	else if (f == PINF)
		x = INFINITY;
	else if (f == NINF)
		x = -INFINITY;
	else if (f == FIN && v->lo == v->hi &&
		 (v->lo != 0 || (v->flags & (ZPOS | ZNEG)) != (ZPOS | ZNEG)))
		x = v->lo == 0 ? ((v->flags & ZNEG) ? -0.0 : 0.0) : v->lo;
	else
		return false;
	if (usc_encode_double(t, x, NULL, bits, &flags) != USC_OK)
		return false;
	return !(flags & (USC_FLAG_INEXACT | USC_FLAG_OVERFLOW)) ||
	       isnan(x);
}

/* ------------------------------------------------------- rounding sets */

/*
 * Which profile function an op is, or -1.  Functions the profile does not
 * list (acos, sinh, ...) take the largest bound it states for any.
 */
static int fn_of(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_EXPONENTIAL: return USC_PFN_EXP;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return USC_PFN_EXPM1;
	case USC_HLO_OP_LOG: return USC_PFN_LOG;
	case USC_HLO_OP_LOG_PLUS_ONE: return USC_PFN_LOG1P;
	case USC_HLO_OP_LOGISTIC: return USC_PFN_LOGISTIC;
	case USC_HLO_OP_TANH: return USC_PFN_TANH;
	case USC_HLO_OP_ERF: return USC_PFN_ERF;
	case USC_HLO_OP_SQRT: return USC_PFN_SQRT;
	case USC_HLO_OP_RSQRT: return USC_PFN_RSQRT;
	case USC_HLO_OP_CBRT: return USC_PFN_CBRT;
	case USC_HLO_OP_SINE: return USC_PFN_SIN;
	case USC_HLO_OP_COSINE: return USC_PFN_COS;
	case USC_HLO_OP_TAN: return USC_PFN_TAN;
	case USC_HLO_OP_ATAN2: return USC_PFN_ATAN2;
	case USC_HLO_OP_POWER: return USC_PFN_POWER;
	case USC_HLO_OP_DIVIDE: return USC_PFN_DIVIDE;
	default: return -1;
	}
}

static bool is_transcendental(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_ACOS: case USC_HLO_OP_ASIN: case USC_HLO_OP_ATAN:
	case USC_HLO_OP_ACOSH: case USC_HLO_OP_ASINH: case USC_HLO_OP_ATANH:
	case USC_HLO_OP_COSH: case USC_HLO_OP_SINH:
		return true;
	default:
		return false;
	}
}

static double accuracy_of(const env_state *s, usc_hlo_opcode op)
{
	int f = fn_of(op), i;
	double k = 0.5;

	if (f >= 0)
		k = s->prof.accuracy[f];
	else if (is_transcendental(op))
		for (i = 0; i < USC_PFN_COUNT; i++)
			if (s->prof.accuracy[i] > k)
				k = s->prof.accuracy[i];
	return k > 0.5 ? k : 0.5;
}

/* The range a function's result always respects: [*lo, *hi]. */
static bool range_of(usc_hlo_opcode op, double *lo, double *hi)
{
	*lo = -INFINITY;
	*hi = INFINITY;
	switch (op) {
	case USC_HLO_OP_EXPONENTIAL: *lo = 0; return true;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: *lo = -1; return true;
	case USC_HLO_OP_LOGISTIC: *lo = 0; *hi = 1; return true;
	case USC_HLO_OP_TANH: case USC_HLO_OP_ERF:
	case USC_HLO_OP_SINE: case USC_HLO_OP_COSINE:
		*lo = -1; *hi = 1; return true;
	case USC_HLO_OP_SQRT: case USC_HLO_OP_RSQRT: case USC_HLO_OP_COSH:
		*lo = 0; return true;
	default:
		return false;
	}
}

/* The excess type W for results of type t, or USC_DTYPE_INVALID. */
usc_dtype usc__env_excess_for(const env_state *s, usc_dtype t)
{
	usc_dtype w = s->prof.excess_type;

	if (!s->prof.excess_precision || !usc_dtype_is_float(t) ||
	    !s->has_info[w] || !s->has_info[t])
		return USC_DTYPE_INVALID;
	if (s->info[w].precision <= s->info[t].precision ||
	    s->info[w].emax < s->info[t].emax)
		return USC_DTYPE_INVALID;
	return w;
}

/*
 * Encodes the real x (MPFR; an infinite x means "finite but beyond the
 * exponent range", as in the oracle) into t with mode m and overflow
 * policy o.
 */
static uint64_t enc_mpfr(env_state *s, usc_dtype t, mpfr_srcptr x,
			 usc_round_mode m, usc_overflow o)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t b = 0;

	r.mode = m;
	r.overflow = o;
	if (mpfr_inf_p(x)) {
		mpfr_set_ui_2exp(s->t, 1, s->info[t].emax + 8, MPFR_RNDN);
		if (mpfr_signbit(x))
			mpfr_neg(s->t, s->t, MPFR_RNDN);
		(void)usc_encode_mpfr(t, s->t, &r, &b, NULL);
	} else
		(void)usc_encode_mpfr(t, x, &r, &b, NULL);
	return b;
}

/*
 * Adds to r the image of the exact range [lo, hi] under a monotone
 * rounding into t: mode_lo for lo, mode_hi for hi (RN both, or RU and RD
 * for the t values inside).  An end that overflows adds its special and
 * extends the finite part to the largest finite value of that side.
 */
void usc__env_add_rounded(env_state *s, value *r, usc_dtype t, mpfr_srcptr lo,
			  mpfr_srcptr hi, usc_round_mode mode_lo,
			  usc_round_mode mode_hi, usc_overflow o, unsigned zs)
{
	uint64_t b1 = enc_mpfr(s, t, lo, mode_lo, o);
	uint64_t b2 = enc_mpfr(s, t, hi, mode_hi, o);
	double d1 = 0, d2 = 0, mx = s->info[t].max_finite;
	bool f1, f2;

	(void)usc_decode_double(t, b1, &d1);
	(void)usc_decode_double(t, b2, &d2);
	f1 = isfinite(d1);
	f2 = isfinite(d2);
	if (mpfr_cmp(lo, hi) > 0 && !(mpfr_inf_p(lo) || mpfr_inf_p(hi)))
		return; /* empty (RU above RD) */
	if (!f1)
		usc__env_add_bits(r, t, b1);
	if (!f2)
		usc__env_add_bits(r, t, b2);
	if (f1 && f2) {
		if (d1 <= d2)
			usc__env_hull(r, d1, d2, 0);
		else
			return;
	} else if (f1) {
		usc__env_hull(r, d1, mx, 0);
		d2 = mx;
	} else if (f2) {
		usc__env_hull(r, -mx, d2, 0);
		d1 = -mx;
	} else if (mpfr_sgn(lo) < 0 && mpfr_sgn(hi) > 0) {
		usc__env_hull(r, -mx, mx, 0);
		d1 = -mx;
		d2 = mx;
	} else
		return;
	/*
	 * The zeros this part holds: tiny values round to zeros of their
	 * sign, an exact zero has the signs zs says.
	 */
	if (d1 <= 0 && d2 >= 0) {
		if (mpfr_sgn(lo) < 0)
			r->flags |= ZNEG;
		if (mpfr_sgn(hi) > 0)
			r->flags |= ZPOS;
		if (mpfr_sgn(lo) <= 0 && mpfr_sgn(hi) >= 0)
			r->flags |= zs & (ZPOS | ZNEG);
	}
}

/* Adds [lo, hi] itself (no rounding: an FMA's product), outward. */
static void add_exact(value *r, mpfr_srcptr lo, mpfr_srcptr hi, unsigned zs)
{
	double l = mpfr_get_d(lo, MPFR_RNDD), h = mpfr_get_d(hi, MPFR_RNDU);

	if (l < -DBL_MAX) {
		l = -DBL_MAX;
		r->flags |= NINF;
	}
	if (h > DBL_MAX) {
		h = DBL_MAX;
		r->flags |= PINF;
	}
	if (l <= h)
		usc__env_hull(r, l, h, zs | (l < 0 ? ZNEG : 0) | (h > 0 ? ZPOS : 0));
}

/*
 * Flushing of t's subnormals in the finite part of r.  Allowed (force
 * false): zeros of both signs join the set when [lo, hi] meets the
 * subnormals.  Forced: a part wholly below the smallest normal becomes
 * the zero of its sign; a part that also holds normal values keeps them
 * and gains the zeros (an interval cannot leave the subnormal gap out).
 */
static void flush_zero_mode(const env_state *s, value *r, usc_dtype t,
			    bool force)
{
	double mn;
	unsigned zs;

	if (!(r->flags & FIN) || !s->has_info[t])
		return;
	mn = s->info[t].min_normal;
	if (!(r->lo < mn && r->hi > -mn) || (r->lo == 0 && r->hi == 0))
		return;
	r->flags |= FLSH;
	if (force && r->lo > -mn && r->hi < mn) {
		zs = r->flags & (ZPOS | ZNEG);
		if (r->lo < 0)
			zs |= ZNEG;
		if (r->hi > 0)
			zs |= ZPOS;
		r->flags &= ~(unsigned)(ZPOS | ZNEG);
		r->lo = r->hi = 0;
		r->flags |= zs;
		return;
	}
	usc__env_hull(r, 0, 0, ZPOS | ZNEG);
}

/* Adds zeros of both signs when [lo, hi] meets t's subnormals. */
void usc__env_flush_zero(const env_state *s, value *r, usc_dtype t)
{
	flush_zero_mode(s, r, t, false);
}

/*
 * Whether the profile's flushing is forced for op: only for the
 * arithmetic that a flush-to-zero / denormals-are-zero mode acts on
 * (add, subtract, multiply, divide, the functions).  Sign operations,
 * comparisons, selections and converts may be bit manipulations that
 * keep a subnormal (XLA:CPU widens bf16 by a shift), so their flushing
 * stays a freedom.
 */
static bool flush_forced(const env_state *s, usc_hlo_opcode op)
{
	if (!s->prof.flush_always)
		return false;
	switch (op) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
		return true;
	default:
		return is_transcendental(op);
	}
}

/*
 * The t values within k ulps of the exact range [lo, hi]: every y with
 * |y - x| <= k ulp(x) for some x in the range.  ulp is the larger
 * spacing at a power of two, and the largest over the range is taken:
 * a superset of every convention.
 */
static void add_within(env_state *s, value *r, usc_dtype t, mpfr_srcptr lo,
		       mpfr_srcptr hi, double k, usc_overflow o, unsigned zs)
{
	mpfr_t u, l, h, m;

	mpfr_inits2(ENV_PREC, u, l, h, m, (mpfr_ptr)0);
	if (mpfr_cmpabs(lo, hi) > 0)
		mpfr_abs(m, lo, MPFR_RNDU);
	else
		mpfr_abs(m, hi, MPFR_RNDU);
	if (mpfr_inf_p(m))
		mpfr_set_ui_2exp(m, 1, s->info[t].emax, MPFR_RNDN);
	/*
	 * ulp grows with |x|, so the largest magnitude has the largest.  A
	 * bound stated in ulps of the correctly rounded result may use the
	 * spacing of the binade above (x just below a power of two rounds
	 * up to it): one step of t above m covers that.
	 */
	mpfr_mul_2si(u, m, 1 - s->info[t].precision, MPFR_RNDU);
	mpfr_add(m, m, u, MPFR_RNDU);
	(void)usc_ulp_mpfr(t, m, u);
	mpfr_mul_d(u, u, k, MPFR_RNDU);
	r->flags |= APRX;
	mpfr_sub(l, lo, u, MPFR_RNDD);
	mpfr_add(h, hi, u, MPFR_RNDU);
	usc__env_add_rounded(s, r, t, l, h, USC_RND_UP, USC_RND_DOWN, o, zs);
	/* A result past the largest finite value overflows. */
	usc__env_add_rounded(s, r, t, l, l, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
		    o, zs);
	usc__env_add_rounded(s, r, t, h, h, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
		    o, zs);
	mpfr_clears(u, l, h, m, (mpfr_ptr)0);
}

/*
 * The result set of an op with declared type t whose exact result lies
 * in [lo, hi] (zs: the signs an exact zero may have).
 */
/*
 * The type an op of declared type t is computed in under the profile's
 * compute_type (a wider float type), or USC_DTYPE_INVALID: in t itself.
 */
usc_dtype usc__env_compute_for(const env_state *s, usc_dtype t)
{
	usc_dtype c = s->prof.compute_type;

	if (c == USC_DTYPE_INVALID || !usc_dtype_is_float(t) ||
	    !s->has_info[c] || !s->has_info[t])
		return USC_DTYPE_INVALID;
	if (s->info[c].precision <= s->info[t].precision ||
	    s->info[c].emax < s->info[t].emax)
		return USC_DTYPE_INVALID;
	return c;
}

static void clip_range(const usc__dom_op *op, value *x);

/*
 * An op computed in the wider type c and rounded once to t: the c
 * results (rounded to nearest, within the accuracy bound in ulps of c,
 * unrounded when an FMA may absorb it, flushed as c's mode says), then
 * each rounded to nearest in t -- a monotone map, so the ends suffice.
 * With excess precision the c results themselves stay legitimate.
 */
static void finish_in(env_state *s, const usc__dom_op *op, value *x,
		      usc_dtype t, usc_dtype c, mpfr_srcptr lo, mpfr_srcptr hi,
		      unsigned zs, usc_overflow o, bool may_skip, double k)
{
	value y;
	mpfr_t a, b;

	memset(&y, 0, sizeof y);
	usc__env_add_rounded(s, &y, c, lo, hi, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, zs);
	if (k > 0.5)
		add_within(s, &y, c, lo, hi, k, USC_OVF_DEFAULT, zs);
	clip_range(op, &y);
	if (s->prof.flush[c] & USC_FLUSH_OUTPUTS)
		flush_zero_mode(s, &y, c, flush_forced(s, op->op));
	/* Inside an FMA the product is neither rounded nor flushed. */
	if (may_skip)
		add_exact(&y, lo, hi, zs);
	x->flags |= y.flags & (VNAN | CLIP | FLSH | APRX);
	if (y.flags & PINF)
		usc__env_add_bits(x, t, usc__env_rn_double(t, INFINITY));
	if (y.flags & NINF)
		usc__env_add_bits(x, t, usc__env_rn_double(t, -INFINITY));
	if (y.flags & FIN) {
		mpfr_inits2(ENV_PREC, a, b, (mpfr_ptr)0);
		mpfr_set_d(a, y.lo, MPFR_RNDN);
		mpfr_set_d(b, y.hi, MPFR_RNDN);
		usc__env_add_rounded(s, x, t, a, b, USC_RND_NEAREST_EVEN,
			    USC_RND_NEAREST_EVEN, o, y.flags & (ZPOS | ZNEG));
		mpfr_clears(a, b, (mpfr_ptr)0);
	}
	/*
	 * Rounded once, straight to t: a target that computes the op (an
	 * FMA above all, whose exact a*b+c is no sum of two t values) with
	 * one rounding to t.  Double rounding through c may break a tie the
	 * other way (issue 13: an f16 a*b+c), so neither set holds the
	 * other.  Within k ulps the c-window above already reaches further.
	 */
	usc__env_add_rounded(s, x, t, lo, hi, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, o, zs);
	if (usc__env_excess_for(s, t) != USC_DTYPE_INVALID)
		usc__env_unite(x, &y);
}

/*
 * Whether every result of op (declared type t) is a normal value or a
 * zero: the profile's flushing of t's results is a fixed mode and forced
 * for op, and each wider type the op may be computed or kept in flushes
 * the same way at a threshold no lower than t's.
 */
static bool never_subnormal(const env_state *s, const usc__dom_op *op,
			    usc_dtype t)
{
	usc_dtype ws[2];

	if (!flush_forced(s, op->op) || !s->has_info[t] ||
	    !(s->prof.flush[t] & USC_FLUSH_OUTPUTS))
		return false;
	ws[0] = usc__env_excess_for(s, t);
	ws[1] = op->op == USC_HLO_OP_CONVERT ? USC_DTYPE_INVALID
					      : usc__env_compute_for(s, t);
	for (int j = 0; j < 2; j++)
		if (ws[j] != USC_DTYPE_INVALID &&
		    (!(s->prof.flush[ws[j]] & USC_FLUSH_OUTPUTS) ||
		     s->info[ws[j]].min_normal < s->info[t].min_normal))
			return false;
	return true;
}

void usc__env_finish(env_state *s, const usc__dom_op *op, value *r,
		     usc_dtype t, mpfr_srcptr lo, mpfr_srcptr hi, unsigned zs,
		     usc_overflow o, bool may_skip)
{
	usc_dtype w = usc__env_excess_for(s, t);
	usc_dtype c = op->op == USC_HLO_OP_CONVERT ? USC_DTYPE_INVALID
						   : usc__env_compute_for(s, t);
	double k = accuracy_of(s, op->op);
	value x;

	memset(&x, 0, sizeof x);
	if (c != USC_DTYPE_INVALID) {
		finish_in(s, op, &x, t, c, lo, hi, zs, o, may_skip, k);
		if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
			flush_zero_mode(s, &x, t, flush_forced(s, op->op));
		if (never_subnormal(s, op, t))
			x.flags |= NOSUB;
		usc__env_unite(r, &x);
		return;
	}
	usc__env_add_rounded(s, &x, t, lo, hi, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, o, zs);
	if (k > 0.5)
		add_within(s, &x, t, lo, hi, k, o, zs);
	if (w != USC_DTYPE_INVALID) {
		usc__env_add_rounded(s, &x, w, lo, hi, USC_RND_NEAREST_EVEN,
			    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, zs);
		if (k > 0.5)
			add_within(s, &x, w, lo, hi, k, USC_OVF_DEFAULT, zs);
	}
	clip_range(op, &x);
	if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
		flush_zero_mode(s, &x, t, flush_forced(s, op->op));
	if (w != USC_DTYPE_INVALID && (s->prof.flush[w] & USC_FLUSH_OUTPUTS))
		flush_zero_mode(s, &x, w, flush_forced(s, op->op));
	/* Inside an FMA the product is neither rounded nor flushed. */
	if (may_skip)
		add_exact(&x, lo, hi, zs);
	if (never_subnormal(s, op, t))
		x.flags |= NOSUB;
	usc__env_unite(r, &x);
}

/* Cuts x to the range op's function always respects (tanh in [-1, 1]). */
static void clip_range(const usc__dom_op *op, value *x)
{
	double rl, rh;

	if ((x->flags & FIN) && range_of(op->op, &rl, &rh)) {
		/*
		 * The function's range holds whatever the accuracy bound:
		 * only values inside it are legitimate.  The correctly
		 * rounded result is inside too: the ends are representable.
		 */
		if (x->lo < rl) {
			x->lo = rl;
			x->flags |= CLIP;
		}
		if (x->hi > rh) {
			x->hi = rh;
			x->flags |= CLIP;
		}
		if (rh < INFINITY && (x->flags & PINF)) {
			x->flags &= ~(unsigned)PINF;
			x->flags |= CLIP;
		}
		if (rl > -INFINITY && (x->flags & NINF)) {
			x->flags &= ~(unsigned)NINF;
			x->flags |= CLIP;
		}
	}
}


/* ------------------------------------------------------- exact float ops */

/* max / min of two sets, NaN per the profile (XLA: propagate). */
static void maxmin(const env_state *s, value *r, bool is_max, const value *x,
		   const value *y)
{
	usc_profile_minmax_nan m = s->prof.minmax_nan;
	unsigned fx = x->flags, fy = y->flags;

	memset(r, 0, sizeof *r);
	if ((fx | fy) & UNK) {
		r->flags = UNK;
		return;
	}
	if ((fx | fy) & VNAN) {
		if (m != USC_MINMAX_NAN_DROP)
			r->flags |= VNAN;
		if (m != USC_MINMAX_NAN_PROPAGATE) {
			/* maxNum: the other operand, whatever it is. */
			if (fx & VNAN)
				usc__env_unite(r, y);
			if (fy & VNAN)
				usc__env_unite(r, x);
		}
	}
	/* The non-NaN pairs. */
	{
		const value *v[2] = {x, y};
		int i;

		for (i = 0; i < 2; i++) {
			const value *p = v[i], *q = v[1 - i];

			/* An infinity that wins, or loses to the other. */
			if (p->flags & (is_max ? PINF : NINF) &&
			    q->flags & (FIN | PINF | NINF))
				r->flags |= is_max ? PINF : NINF;
			if (p->flags & (is_max ? NINF : PINF))
				usc__env_unite(r, &(value){q->lo, q->hi, 0,
						  q->flags & (FIN | PINF | NINF |
							      ZPOS | ZNEG),
						  0});
		}
		if ((fx & FIN) && (fy & FIN)) {
			double lo = is_max ? fmax(x->lo, y->lo)
					   : fmin(x->lo, y->lo);
			double hi = is_max ? fmax(x->hi, y->hi)
					   : fmin(x->hi, y->hi);

			usc__env_hull(r, lo, hi, (fx | fy) & (ZPOS | ZNEG));
		}
	}
	r->flags |= (fx | fy) & CLIP;
}

/* f monotone non-decreasing and exact in double (floor, ceil, rint...). */
static void monotone_exact(env_state *s, const usc__dom_op *op, value *r,
			   const value *x, double (*f)(double))
{
	memset(r, 0, sizeof *r);
	r->flags = x->flags & (VNAN | PINF | NINF | UNK | CLIP);
	if (x->flags & FIN) {
		double l = f(x->lo), h = f(x->hi);
		unsigned zs = 0;

		/*
		 * A zero result keeps the sign of its operand (IEEE 754
		 * 5.3.1), so its signs are those of the operands f takes to
		 * 0: the negative ones nearest 0 (f monotone), the positive
		 * ones nearest 0, and a zero operand itself.  Both signs
		 * for every set would let atan2 or a divide further on take
		 * a sign no implementation gives (U4 of docs/findings.md).
		 */
		if (x->lo < 0 && f(fmin(x->hi, -DBL_TRUE_MIN)) == 0)
			zs |= ZNEG;
		if (x->hi > 0 && f(fmax(x->lo, DBL_TRUE_MIN)) == 0)
			zs |= ZPOS;
		if (x->lo <= 0 && x->hi >= 0)
			zs |= (x->flags & (ZPOS | ZNEG)) ? x->flags & (ZPOS | ZNEG)
							 : ZPOS | ZNEG;
		mpfr_set_d(s->a, l, MPFR_RNDN);
		mpfr_set_d(s->b, h, MPFR_RNDN);
		usc__env_finish(s, op, r, op->result, s->a, s->b, zs, USC_OVF_DEFAULT,
		       false);
	}
}

static double round_afz(double x)
{
	return round(x);
}

static usc_status exact_unary(env_state *s, const usc__dom_op *op, value *r,
			      const value *x)
{
	unsigned f = x->flags;

	memset(r, 0, sizeof *r);
	switch (op->op) {
	case USC_HLO_OP_NEGATE:
		r->flags = f & (VNAN | UNK | CLIP | NOSUB);
		r->flags |= (f & PINF) ? NINF : 0;
		r->flags |= (f & NINF) ? PINF : 0;
		if (f & FIN) {
			r->lo = -x->hi;
			r->hi = -x->lo;
			r->flags |= FIN;
			r->flags |= (f & ZPOS) ? ZNEG : 0;
			r->flags |= (f & ZNEG) ? ZPOS : 0;
		}
		return USC_OK;
	case USC_HLO_OP_ABS:
		r->flags = f & (VNAN | UNK | CLIP);
		r->flags |= (f & (PINF | NINF)) ? PINF : 0;
		if (f & FIN) {
			double lo = x->lo > 0 ? x->lo : x->hi < 0 ? -x->hi : 0;
			double hi = fmax(fabs(x->lo), fabs(x->hi));

			usc__env_hull(r, lo, hi, ZPOS);
		}
		return USC_OK;
	case USC_HLO_OP_SIGN:
		r->flags = f & (VNAN | UNK | CLIP);
		if ((f & NINF) || ((f & FIN) && x->lo < 0))
			usc__env_hull(r, -1, -1, 0);
		if ((f & PINF) || ((f & FIN) && x->hi > 0))
			usc__env_hull(r, 1, 1, 0);
		if (usc__env_has_zero(x))
			usc__env_hull(r, 0, 0, f & (ZPOS | ZNEG));
		return USC_OK;
	case USC_HLO_OP_FLOOR:
		monotone_exact(s, op, r, x, floor);
		return USC_OK;
	case USC_HLO_OP_CEIL:
		monotone_exact(s, op, r, x, ceil);
		return USC_OK;
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
		monotone_exact(s, op, r, x, rint);
		return USC_OK;
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		monotone_exact(s, op, r, x, round_afz);
		return USC_OK;
	default:
		return USC_EUNSUPPORTED;
	}
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	if (op->instr)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "the envelope does not support %s on %s at "
				 "%u:%u (instruction '%s')",
				 usc_hlo_opcode_name(op->op),
				 usc_dtype_name(op->result),
				 op->instr->loc.line, op->instr->loc.column,
				 op->instr->name);
	return usc__fail(err, USC_EUNSUPPORTED,
			 "the envelope does not support %s on %s",
			 usc_hlo_opcode_name(op->op),
			 usc_dtype_name(op->result));
}

/*
 * The exact float ops whose operands a flushing target reads as zero:
 * x86's DAZ applies to minps/maxps, the compares (ucomiss, cmpps, and the
 * compares behind sign and clamp) and roundps (floor, ceil, round).  Not
 * to abs and negate, which are bit operations (andps, xorps), nor to
 * select, which moves bits.  The arithmetic ops and the functions get the
 * same freedom in usc__env_continuous() and in the fast path.
 */
static bool reads_flushed(const usc__dom_op *op)
{
	if (op->nargs == 0 || !usc_dtype_is_float(op->arg[op->nargs - 1]))
		return false;
	switch (op->op) {
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_CLAMP:
	case USC_HLO_OP_COMPARE:
	case USC_HLO_OP_SIGN:
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		return true;
	default:
		return false;
	}
}

/*
 * Whether op is a select of two floats by a compare of those same two
 * (select(x < y, x, y) and its kin): a minimum or maximum in all but
 * name, which the x86 backend emits as minps / maxps, whose DAZ reads a
 * subnormal operand as zero (XLA:CPU with fast math, seed 34 of the
 * random-kernel smoke: -0 for a selected -1.17e-38).  A synthesized op
 * without its instruction is not one.
 */
static bool select_is_minmax(const usc__dom_op *op)
{
	const usc_hlo_instr *in = op->instr, *c;

	if (op->op != USC_HLO_OP_SELECT || !in || in->operand_count != 3 ||
	    !usc_dtype_is_float(op->arg[1]))
		return false;
	c = in->operands[0];
	if (!c || c->opcode != USC_HLO_OP_COMPARE || c->operand_count != 2)
		return false;
	return (c->operands[0] == in->operands[1] &&
		c->operands[1] == in->operands[2]) ||
	       (c->operands[0] == in->operands[2] &&
		c->operands[1] == in->operands[1]);
}

static usc_status apply1(env_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;
	unsigned k, cl = 0;
	value flushed[3];
	const value *fa[3];
	usc_status st;

	memset(r, 0, sizeof *r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->flags & UNK) {
			r->flags = UNK;
			return USC_OK;
		}
		cl |= a[k]->flags & CLIP;
	}
	/* Operands read as zeros where the profile lets it (copies). */
	if ((reads_flushed(op) || select_is_minmax(op)) && op->nargs <= 3) {
		for (k = 0; k < op->nargs; k++) {
			flushed[k] = *a[k];
			if (usc_dtype_is_float(op->arg[k]))
				usc__env_flush_inputs(s, op, &flushed[k], k);
			fa[k] = &flushed[k];
		}
		a = fa;
	}
	switch (op->op) {
	case USC_HLO_OP_SELECT:
		if (a[0]->flags & IPOINT) {
			*r = (a[0]->bits & 1) ? *a[1] : *a[2];
		} else {
			*r = *a[1];
			r->flags &= ~(unsigned)IPOINT;
			usc__env_unite(r, a[2]);
			if ((a[1]->flags & IPOINT) && (a[2]->flags & IPOINT) &&
			    a[1]->bits == a[2]->bits)
				*r = *a[1];
		}
		return USC_OK;
	case USC_HLO_OP_CLAMP:
		if (usc_dtype_is_float(op->arg[1])) {
			value m;

			maxmin(s, &m, true, a[1], a[0]);
			maxmin(s, r, false, &m, a[2]);
			return USC_OK;
		}
		break;
	case USC_HLO_OP_COMPARE:
		if (usc_dtype_is_float(at)) {
			usc__env_compare_sets(op, r, usc__env_float_outcomes(
				a[0], a[1],
				op->cmp_type == USC__CMP_TOTALORDER));
			return USC_OK;
		}
		st = usc__env_int_points(s, op, r, a, err);
		if (st != USC_EUNSUPPORTED)
			return st;
		if (!usc__env_int_natural(op)) {
			usc__env_set_pred(r, true, true);
			return USC_OK;
		}
		usc__env_compare_sets(op, r, usc__env_order_outcomes(a[0]->lo, a[0]->hi,
						   a[1]->lo, a[1]->hi));
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		usc__env_set_pred(r, (a[0]->flags & (VNAN | PINF | NINF)) != 0,
			 (a[0]->flags & FIN) != 0);
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		st = usc__env_convert(s, op, r, a[0], err);
		r->flags |= cl;
		return st;
	case USC_HLO_OP_BITCAST_CONVERT:
		st = usc__env_int_points(s, op, r, a, err);
		if (st == USC_EUNSUPPORTED) {
			/* The bits of a set that is not one value: unknown. */
			set_unknown(r);
			return USC_OK;
		}
		return st;
	case USC_HLO_OP_REDUCE_PRECISION:
		return usc__env_reduce_precision(s, op, r, a[0], err);
	default:
		break;
	}
	if (!usc_dtype_is_float(at)) {
		st = usc__env_int_points(s, op, r, a, err);
		if (st != USC_EUNSUPPORTED)
			return st;
		st = usc__env_pred_sets(s, op, r, a, err);
		if (st != USC_EUNSUPPORTED)
			return st;
		/* Integer arithmetic on ranges: not bounded here. */
		set_unknown(r);
		return USC_OK;
	}
	if (op->op == USC_HLO_OP_MAXIMUM || op->op == USC_HLO_OP_MINIMUM) {
		maxmin(s, r, op->op == USC_HLO_OP_MAXIMUM, a[0], a[1]);
		return USC_OK;
	}
	if (op->nargs == 1) {
		st = exact_unary(s, op, r, a[0]);
		if (st != USC_EUNSUPPORTED) {
			r->flags |= cl;
			return st;
		}
	}
	if (op->op == USC_HLO_OP_REMAINDER || op->op == USC_HLO_OP_POWER ||
	    op->op == USC_HLO_OP_ATAN2 || op->op == USC_HLO_OP_ADD ||
	    op->op == USC_HLO_OP_SUBTRACT || op->op == USC_HLO_OP_MULTIPLY ||
	    op->op == USC_HLO_OP_DIVIDE || op->nargs == 1) {
		/* The fast path first (envelope_fast.c); MPFR for the rest. */
		if (usc__env_fast_apply(s, op, r, a)) {
			r->flags |= cl;
			return USC_OK;
		}
		st = usc__env_continuous(s, op, r, a, err);
		if (st == USC_EUNSUPPORTED)
			return unsupported(op, err);
		r->flags |= cl;
		return st;
	}
	return unsupported(op, err);
}

/*
 * Whether a float op met an infinity or a NaN: an operand that may be one,
 * or a result that may be one (an overflow).  Integer and pred values have
 * no such members.
 */
static bool nonfinite_met(const usc__dom_op *op, const value *r,
			  const value *const *a)
{
	const unsigned nf = PINF | NINF | VNAN;

	/*
	 * Only arithmetic creates or consumes them in a way the flags let
	 * code get wrong: maximum, compare and select pass an infinity (a
	 * max reduction's -inf init) through unchanged.
	 */
	switch (op->op) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_ATAN2:
		break;
	default:
		if (!is_transcendental(op->op))
			return false;
	}
	if (usc_dtype_is_float(op->result) && (r->flags & nf))
		return true;
	for (unsigned k = 0; k < op->nargs; k++)
		if (usc_dtype_is_float(op->arg[k]) && (a[k]->flags & nf))
			return true;
	return false;
}

/* Whether op rounds its result (the count behind the expected error). */
static bool counts_rounding(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_CONVERT:
		return true;
	default:
		return is_transcendental(op);
	}
}

/*
 * The smallest normal values of the types that may read operand k of op
 * as zero (its type and its excess type, where they flush inputs), into
 * mn; how many.  Decided once per apply call.
 */
static unsigned input_flush_edges(const env_state *s, const usc__dom_op *op,
				  unsigned k, double mn[2])
{
	usc_dtype t = op->arg[k], w = usc__env_excess_for(s, t);
	usc_dtype ts[2] = {t, w};
	unsigned n = 0;

	for (int j = 0; j < 2; j++)
		if (ts[j] != USC_DTYPE_INVALID && s->has_info[ts[j]] &&
		    (s->prof.flush[ts[j]] & USC_FLUSH_INPUTS))
			mn[n++] = s->info[ts[j]].min_normal;
	return n;
}

/*
 * Whether operand x may be read as zero (a subnormal, flushed) by a type
 * whose smallest normal value is one of the n in mn.
 */
static bool may_flush_input(const value *x, const double *mn, unsigned n)
{
	bool may = false;

	/*
	 * Bitwise, not short-circuit: the side of zero follows the data (a
	 * softmax row's values have either sign), and branches on it were
	 * mispredicted often enough to be a third of env_apply's own time
	 * where a reduction applies its body one element at a time.
	 */
	for (unsigned j = 0; j < n; j++)
		may |= (x->lo < mn[j]) & (x->hi > -mn[j]) &
		       !((x->lo == 0) & (x->hi == 0));
	return may & ((x->flags & FIN) != 0);
}

/*
 * The ops whose elements env_apply may hand to exact_shortcut: a float
 * negate, maximum or minimum (docs/envelope.md, "Exact ops without the
 * dispatch").  Neither the fast path nor MPFR has a part in them.
 */
static bool exact_shortcut_op(const env_state *s, const usc__dom_op *op)
{
	if (s->no_loops || s->mpfr_only)
		return false;
	switch (op->op) {
	case USC_HLO_OP_NEGATE:
		return op->nargs == 1 && usc_dtype_is_float(op->arg[0]);
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
		return op->nargs == 2 && usc_dtype_is_float(op->arg[0]) &&
		       usc_dtype_is_float(op->arg[1]);
	default:
		return false;
	}
}

/*
 * One element of an exact_shortcut_op into r, as apply1 computes it, when
 * no operand is UNKNOWN and none is within reach of an input flush (the
 * edges mn of env_apply): then apply1's copies of the operands read
 * through the flush (usc__env_flush_inputs, whose flush_zero_mode leaves
 * such a set as it is) are the operands themselves, and what remains of
 * apply1 for these ops is exact_unary or maxmin.  false: apply1.
 */
static bool exact_shortcut(env_state *s, const usc__dom_op *op,
			   value *r, const value *const *a,
			   double (*mn)[2], const unsigned *nmn)
{
	for (unsigned k = 0; k < op->nargs; k++)
		if ((a[k]->flags & UNK) || may_flush_input(a[k], mn[k], nmn[k]))
			return false;
	if (op->op == USC_HLO_OP_NEGATE) {
		/* exact_unary and apply1's CLIP, which it has already. */
		(void)exact_unary(s, op, r, a[0]);
		r->flags |= a[0]->flags & CLIP;
		return true;
	}
	maxmin(s, r, op->op == USC_HLO_OP_MAXIMUM, a[0], a[1]);
	return true;
}

static usc_status env_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	env_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	double mn[USC__DOM_MAX_ARGS][2];
	unsigned nmn[USC__DOM_MAX_ARGS] = {0, 0, 0};
	usc__mpfr_range range;
	usc_status st = USC_OK;
	unsigned char done[USC__ENV_CHUNK];
	bool widened = false, shortcut;
	size_t i;
	unsigned k, rounds;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	rounds = usc_dtype_is_float(op->result) && counts_rounding(op->op);
	for (k = 0; k < op->nargs; k++)
		nmn[k] = input_flush_edges(s, op, k, mn[k]);
	/* The fast path decides once what it needs of op. */
	usc__env_fast_plan(s, op);
	shortcut = exact_shortcut_op(s, op);
	for (i = 0; i < n && st == USC_OK; i++) {
		/*
		 * A chunk's plain elements through the array loops
		 * (envelope_loops.c); the others one by one below.
		 */
		if (i % USC__ENV_CHUNK == 0) {
			size_t m = n - i < USC__ENV_CHUNK ? n - i
							  : USC__ENV_CHUNK;

			if (s->plan.loop.on &&
			    usc__env_loops(s, op, i, m, o, args, scalar_args,
					   rounds, done) == m) {
				/* The whole chunk is done. */
				i += m - 1;
				continue;
			}
			if (!s->plan.loop.on)
				memset(done, 0, m);
		}
		/* Complete, taints and count included. */
		if (done[i % USC__ENV_CHUNK])
			continue;
		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		/* Negate, maximum, minimum: no dispatch, no MPFR range. */
		if (shortcut && exact_shortcut(s, op, &o[i], a, mn, nmn)) {
			s->looped++;
		} else {
			/*
			 * MPFR's exponent range widened for the per-element
			 * code only, when it first runs: the loops use no
			 * MPFR, and the range is thread-local state that
			 * costs a lookup to save and restore.
			 */
			if (!widened) {
				usc__mpfr_range_widen(&range);
				widened = true;
			}
			/* Finite operands of a planned op: the fast path. */
			if (!usc__env_fast_elem(s, op, &o[i], a))
				st = apply1(s, op, &o[i], a, err);
		}
		/*
		 * Whatever a flush touched taints what is computed from it:
		 * an operand already touched, or one this op may read as 0.
		 */
		o[i].roundings = 0;
		for (k = 0; k < op->nargs; k++) {
			if ((a[k]->flags & FLSH) ||
			    may_flush_input(a[k], mn[k], nmn[k]))
				o[i].flags |= FLSH;
			o[i].flags |= a[k]->flags & APRX;
			if (rounds)
				o[i].roundings += a[k]->roundings;
			else if (a[k]->roundings > o[i].roundings)
				o[i].roundings = a[k]->roundings;
		}
		o[i].roundings += rounds;
		if (s->prof.nonfinite_undefined && st == USC_OK &&
		    nonfinite_met(op, &o[i], a))
			set_unknown(&o[i]);
	}
	usc__env_fast_plan_end(s);
	if (widened)
		usc__mpfr_range_restore(&range);
	return st;
}

/* ------------------------------------- shared with envelope_fast.c */

double usc__env_accuracy_of(const env_state *s, usc_hlo_opcode op)
{
	return accuracy_of(s, op);
}

bool usc__env_range_of(usc_hlo_opcode op, double *lo, double *hi)
{
	return range_of(op, lo, hi);
}

void usc__env_flush_mode(const env_state *s, value *r, usc_dtype t,
			 bool force)
{
	flush_zero_mode(s, r, t, force);
}

bool usc__env_flush_forced(const env_state *s, usc_hlo_opcode op)
{
	return flush_forced(s, op);
}

bool usc__env_never_subnormal(const env_state *s, const usc__dom_op *op,
			      usc_dtype t)
{
	return never_subnormal(s, op, t);
}

const usc__domain_ops usc__domain_envelope = {
	.name = "envelope",
	.value_size = sizeof(value),
	.create = env_create,
	.destroy = env_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = usc__env_load,
	.constant = usc__env_constant,
	.apply = env_apply,
	.to_output = usc__env_to_output,
	.is_true = usc__env_is_true,
	.to_index = usc__env_to_index,
	.matmul = usc__env_matmul,
	.sum = usc__env_sum,
	.load_array = usc__env_load_array,
};
