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
#include "oracle.h"

/* Private flag bits of a value, above the public USC__ENV_* ones. */
enum {
	ZPOS = 1u << 12,   /* the finite part's 0 may be +0 */
	ZNEG = 1u << 13,   /* ... may be -0 */
	IPOINT = 1u << 14 /* an integer point: bits is its exact encoding */
};

#define FIN USC__ENV_FINITE
#define VNAN USC__ENV_NAN
#define PINF USC__ENV_POS_INF
#define NINF USC__ENV_NEG_INF
#define UNK USC__ENV_UNKNOWN
#define CLIP USC__ENV_RANGE_CLIPPED
#define FLSH USC__ENV_FLUSHED
#define APRX USC__ENV_APPROX
#define NOSUB USC__ENV_NO_SUBNORMAL

/* The working precision of the oracle and of the bounds here. */
#define ENV_PREC 128

typedef usc__envelope_value value;

typedef struct env_state {
	usc_profile prof;
	void *orc;  /* the oracle's state: exact ranges */
	void *ref;  /* the reference domain's state: integer points */
	usc__oracle_value ov[USC__DOM_MAX_ARGS + 1];
	mpfr_t a, b, t, lo, hi;
	usc_float_info info[USC_DTYPE_COUNT];
	bool has_info[USC_DTYPE_COUNT];
} env_state;

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

static bool has_zero(const value *v)
{
	return (v->flags & FIN) && v->lo <= 0 && v->hi >= 0;
}

/* Adds the finite interval [lo, hi] to r (zero signs given). */
static void hull(value *r, double lo, double hi, unsigned zs)
{
	if (!(r->flags & FIN)) {
		r->lo = lo;
		r->hi = hi;
		r->flags |= FIN;
	} else {
		if (lo < r->lo)
			r->lo = lo;
		if (hi > r->hi)
			r->hi = hi;
	}
	if (lo <= 0 && hi >= 0)
		r->flags |= zs & (ZPOS | ZNEG);
}

/*
 * r |= v (sets).  The union has no subnormal only when neither part has
 * one: a part without finite values has none.
 */
static void unite(value *r, const value *v)
{
	bool nosub = (!(r->flags & FIN) || (r->flags & NOSUB)) &&
		     (!(v->flags & FIN) || (v->flags & NOSUB));

	r->flags |= v->flags & (VNAN | PINF | NINF | UNK | CLIP | FLSH | APRX);
	if (v->flags & FIN)
		hull(r, v->lo, v->hi, v->flags);
	r->flags &= ~(unsigned)NOSUB;
	if (nosub && (r->flags & FIN))
		r->flags |= NOSUB;
}

/* Adds one encoding of float type t to r. */
static void add_bits(value *r, usc_dtype t, uint64_t bits)
{
	double d = 0;

	(void)usc_decode_double(t, bits, &d);
	if (isnan(d))
		r->flags |= VNAN;
	else if (isinf(d))
		r->flags |= d > 0 ? PINF : NINF;
	else
		hull(r, d, d, signbit(d) ? ZNEG : ZPOS);
}

static bool is_point(const value *v)
{
	return (v->flags & (FIN | VNAN | PINF | NINF | UNK)) == FIN &&
	       v->lo == v->hi;
}

/* A float value as one encoding of t, when it is a single one. */
static bool float_point_bits(const value *v, usc_dtype t, uint64_t *bits)
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

/* ------------------------------------------------ loads and outputs */

static void load_int(value *r, usc_dtype t, uint64_t bits)
{
	const usc_format *f = usc_format_of(t);
	int64_t sv = 0;
	uint64_t uv = 0;

	memset(r, 0, sizeof *r);
	bits &= usc__dom_mask(f->bits);
	r->bits = bits;
	(void)usc_decode_int(t, bits, &sv, &uv);
	if (f->kind == USC_KIND_SINT) {
		r->lo = (double)sv;
	} else {
		r->lo = (double)uv;
	}
	r->hi = r->lo;
	/* Beyond 2^53 the double is the nearest; bits stays exact. */
	if (fabs(r->lo) > 0x1p53) {
		r->lo = nextafter(r->lo, -INFINITY);
		r->hi = nextafter(r->hi, INFINITY);
	}
	r->flags = FIN | IPOINT;
}

static usc_status env_load(void *state, usc_dtype t, uint64_t bits,
			   void *out, usc_error *err)
{
	value *r = out;

	(void)state;
	memset(r, 0, sizeof *r);
	if (usc_dtype_is_float(t)) {
		add_bits(r, t, bits);
		return USC_OK;
	}
	if (usc_dtype_is_integer(t) || t == USC_PRED) {
		load_int(r, t, bits);
		return USC_OK;
	}
	return usc__fail(err, USC_EUNSUPPORTED,
			 "the envelope does not hold %s values",
			 usc_dtype_name(t));
}

static usc_status env_constant(void *state, usc_dtype t,
			       const usc_hlo_scalar *sc, void *out,
			       usc_error *err)
{
	env_state *s = state;
	uint64_t bits;
	usc_status st;

	st = usc__domain_reference.constant(s->ref, t, sc, &bits, err);
	if (st != USC_OK)
		return st;
	return env_load(state, t, bits, out, err);
}

/* Rounds the real x (double) to nearest into float type t. */
static uint64_t rn_double(usc_dtype t, double x)
{
	uint64_t b = 0;

	(void)usc_encode_double(t, x, NULL, &b, NULL);
	return b;
}

static usc_status env_to_output(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err)
{
	const value *x = v;
	usc__envelope_elem *e = enclosure;
	env_state *s = state;
	usc__envelope_elem loc;

	(void)err;
	memset(&loc, 0, sizeof loc);
	if (!usc_dtype_is_float(t)) {
		if (x->flags & IPOINT)
			*bits = x->bits;
		else if (x->flags & FIN) {
			double m = floor(x->lo / 2 + x->hi / 2);
			usc_rounding r = USC_ROUNDING_DEFAULT;

			r.mode = USC_RND_TOWARD_ZERO;
			(void)usc_encode_double(t, m, &r, bits, NULL);
		} else
			*bits = 0;
		loc.lo = x->lo;
		loc.hi = x->hi;
		loc.flags = x->flags & (FIN | UNK);
		if (e)
			*e = loc;
		return USC_OK;
	}
	loc.flags = x->flags & (VNAN | PINF | NINF | UNK | CLIP | FLSH | APRX |
				NOSUB);
	loc.roundings = x->roundings;
	if (x->flags & FIN) {
		value r;

		uint64_t blo = rn_double(t, x->lo), bhi = rn_double(t, x->hi);
		double dlo = 0, dhi = 0;

		/* Outputs round to their type: RN is monotone. */
		memset(&r, 0, sizeof r);
		if (usc_format_of(t)->bits == 8 &&
		    s->prof.fp8_overflow != USC_FP8_OVF_NONSAT) {
			/*
			 * A value kept wide up to here (an elided convert)
			 * overflows the fp8 output as the target's converts
			 * do: saturating, or either way.
			 */
			usc_rounding sat = USC_ROUNDING_DEFAULT;
			uint64_t slo = 0, shi = 0;

			sat.overflow = USC_OVF_SATURATE;
			(void)usc_encode_double(t, x->lo, &sat, &slo, NULL);
			(void)usc_encode_double(t, x->hi, &sat, &shi, NULL);
			if (s->prof.fp8_overflow == USC_FP8_OVF_EITHER) {
				add_bits(&r, t, blo);
				add_bits(&r, t, bhi);
			}
			blo = slo;
			bhi = shi;
		}
		add_bits(&r, t, blo);
		add_bits(&r, t, bhi);
		(void)usc_decode_double(t, blo, &dlo);
		(void)usc_decode_double(t, bhi, &dhi);
		/*
		 * An end that overflows (to an infinity, or NaN in a format
		 * without one) leaves the finite values up to the largest on
		 * its side.
		 */
		if ((r.flags & FIN) && !isfinite(dlo))
			r.lo = -s->info[t].max_finite;
		if ((r.flags & FIN) && !isfinite(dhi))
			r.hi = s->info[t].max_finite;
		if (!(r.flags & FIN) && x->lo < 0 && x->hi > 0) {
			/* Both ends overflowed, on opposite sides. */
			r.lo = -s->info[t].max_finite;
			r.hi = s->info[t].max_finite;
			r.flags |= FIN;
		}
		loc.flags |= r.flags & (VNAN | PINF | NINF | FIN);
		loc.lo = r.lo;
		loc.hi = r.hi;
		if (x->lo == x->hi && x->lo == 0)
			*bits = rn_double(t, (x->flags & ZPOS) ? 0.0 : -0.0);
		else
			*bits = rn_double(t, x->lo / 2 + x->hi / 2);
	} else if (x->flags & VNAN) {
		*bits = rn_double(t, NAN);
	} else if (x->flags & PINF) {
		*bits = rn_double(t, INFINITY);
	} else if (x->flags & NINF) {
		*bits = rn_double(t, -INFINITY);
	} else {
		*bits = rn_double(t, NAN);
	}
	if (e)
		*e = loc;
	return USC_OK;
}

static bool env_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return (x->flags & FIN) && x->lo >= 1;
}

static usc_status env_to_index(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err)
{
	env_state *s = state;
	const value *x = v;

	if (!(x->flags & IPOINT))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "the envelope of an index of type %s is not "
				 "a single value ([%.17g, %.17g]); the "
				 "envelope is unavailable for this kernel",
				 usc_dtype_name(t), x->lo, x->hi);
	return usc__domain_reference.to_index(s->ref, t, &x->bits, out, err);
}

/* Whether the finite non-zero d is a subnormal of float type t. */
static bool is_subnormal(usc_dtype t, double d)
{
	usc_float_info fi;

	if (usc_float_info_of(t, &fi) != USC_OK)
		return false;
	return fabs(d) < fi.min_normal;
}

usc_envelope usc__envelope_public(const usc__envelope_elem *e)
{
	static const struct {
		unsigned from, to;
	} map[] = {
		{USC__ENV_FINITE, USC_ENV_FINITE},
		{USC__ENV_NAN, USC_ENV_NAN},
		{USC__ENV_POS_INF, USC_ENV_POS_INF},
		{USC__ENV_NEG_INF, USC_ENV_NEG_INF},
		{USC__ENV_UNKNOWN, USC_ENV_UNKNOWN},
		{USC__ENV_RANGE_CLIPPED, USC_ENV_RANGE_CLIPPED},
		{USC__ENV_FLUSHED, USC_ENV_FLUSHED},
		{USC__ENV_APPROX, USC_ENV_APPROX},
		{USC__ENV_NO_SUBNORMAL, USC_ENV_NO_SUBNORMAL},
	};
	usc_envelope p;

	p.lo = e->lo;
	p.hi = e->hi;
	p.roundings = e->roundings;
	p.flags = 0;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (e->flags & map[i].from)
			p.flags |= map[i].to;
	return p;
}

bool usc__envelope_contains(const usc__envelope_elem *e, usc_dtype t,
			    uint64_t device_bits)
{
	double d = 0;

	if (e->flags & UNK)
		return true;
	if (!usc_dtype_is_float(t)) {
		int64_t sv = 0;
		uint64_t uv = 0;

		if (usc_decode_int(t, device_bits, &sv, &uv) != USC_OK)
			return false;
		d = usc_format_of(t)->kind == USC_KIND_SINT ? (double)sv
							     : (double)uv;
		return (e->flags & FIN) && e->lo <= d && d <= e->hi;
	}
	(void)usc_decode_double(t, device_bits, &d);
	if (isnan(d))
		return (e->flags & VNAN) != 0;
	if (isinf(d))
		return (e->flags & (d > 0 ? PINF : NINF)) != 0;
	if ((e->flags & NOSUB) && d != 0 && is_subnormal(t, d))
		return false;
	return (e->flags & FIN) && e->lo <= d && d <= e->hi;
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
static usc_dtype excess_for(const env_state *s, usc_dtype t)
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
static void add_rounded(env_state *s, value *r, usc_dtype t, mpfr_srcptr lo,
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
		add_bits(r, t, b1);
	if (!f2)
		add_bits(r, t, b2);
	if (f1 && f2) {
		if (d1 <= d2)
			hull(r, d1, d2, 0);
		else
			return;
	} else if (f1) {
		hull(r, d1, mx, 0);
		d2 = mx;
	} else if (f2) {
		hull(r, -mx, d2, 0);
		d1 = -mx;
	} else if (mpfr_sgn(lo) < 0 && mpfr_sgn(hi) > 0) {
		hull(r, -mx, mx, 0);
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
		hull(r, l, h, zs | (l < 0 ? ZNEG : 0) | (h > 0 ? ZPOS : 0));
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
	hull(r, 0, 0, ZPOS | ZNEG);
}

/* Adds zeros of both signs when [lo, hi] meets t's subnormals. */
static void flush_zero(const env_state *s, value *r, usc_dtype t)
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
	add_rounded(s, r, t, l, h, USC_RND_UP, USC_RND_DOWN, o, zs);
	/* A result past the largest finite value overflows. */
	add_rounded(s, r, t, l, l, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
		    o, zs);
	add_rounded(s, r, t, h, h, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
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
static usc_dtype compute_for(const env_state *s, usc_dtype t)
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
	add_rounded(s, &y, c, lo, hi, USC_RND_NEAREST_EVEN,
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
		add_bits(x, t, rn_double(t, INFINITY));
	if (y.flags & NINF)
		add_bits(x, t, rn_double(t, -INFINITY));
	if (y.flags & FIN) {
		mpfr_inits2(ENV_PREC, a, b, (mpfr_ptr)0);
		mpfr_set_d(a, y.lo, MPFR_RNDN);
		mpfr_set_d(b, y.hi, MPFR_RNDN);
		add_rounded(s, x, t, a, b, USC_RND_NEAREST_EVEN,
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
	add_rounded(s, x, t, lo, hi, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, o, zs);
	if (excess_for(s, t) != USC_DTYPE_INVALID)
		unite(x, &y);
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
	ws[0] = excess_for(s, t);
	ws[1] = op->op == USC_HLO_OP_CONVERT ? USC_DTYPE_INVALID
					      : compute_for(s, t);
	for (int j = 0; j < 2; j++)
		if (ws[j] != USC_DTYPE_INVALID &&
		    (!(s->prof.flush[ws[j]] & USC_FLUSH_OUTPUTS) ||
		     s->info[ws[j]].min_normal < s->info[t].min_normal))
			return false;
	return true;
}

static void finish(env_state *s, const usc__dom_op *op, value *r,
		   usc_dtype t, mpfr_srcptr lo, mpfr_srcptr hi, unsigned zs,
		   usc_overflow o, bool may_skip)
{
	usc_dtype w = excess_for(s, t);
	usc_dtype c = op->op == USC_HLO_OP_CONVERT ? USC_DTYPE_INVALID
						   : compute_for(s, t);
	double k = accuracy_of(s, op->op);
	value x;

	memset(&x, 0, sizeof x);
	if (c != USC_DTYPE_INVALID) {
		finish_in(s, op, &x, t, c, lo, hi, zs, o, may_skip, k);
		if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
			flush_zero_mode(s, &x, t, flush_forced(s, op->op));
		if (never_subnormal(s, op, t))
			x.flags |= NOSUB;
		unite(r, &x);
		return;
	}
	add_rounded(s, &x, t, lo, hi, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, o, zs);
	if (k > 0.5)
		add_within(s, &x, t, lo, hi, k, o, zs);
	if (w != USC_DTYPE_INVALID) {
		add_rounded(s, &x, w, lo, hi, USC_RND_NEAREST_EVEN,
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
	unite(r, &x);
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

/* ------------------------------------------------- continuous float ops */

/* The components of a float value, one bit each. */
static const unsigned comps[] = {FIN, PINF, NINF, VNAN};

/* Sets the oracle value o to the component c of v, or to the point x. */
static void to_oracle(env_state *s, usc__oracle_value *o, const value *v,
		      unsigned c)
{
	o->bits = 0;
	switch (c) {
	case PINF:
		o->kind = USC__ORC_POS_INF;
		o->flags = 0;
		return;
	case NINF:
		o->kind = USC__ORC_NEG_INF;
		o->flags = 0;
		return;
	case VNAN:
		o->kind = USC__ORC_NAN;
		o->flags = 0;
		return;
	default:
		break;
	}
	mpfr_set_d(s->lo, v->lo, MPFR_RNDN);
	mpfr_set_d(s->hi, v->hi, MPFR_RNDN);
	usc__oracle_value_set_interval(o, s->lo, s->hi);
	if (v->lo == 0 && v->hi == 0) {
		unsigned z = v->flags & (ZPOS | ZNEG);

		o->flags = z == ZNEG ? USC__ORC_NEG_ZERO
		       : z == ZPOS ? 0 : USC__ORC_ZSIGN_UNKNOWN;
	}
}

/*
 * Ops whose value at an infinity depends on a finite operand only
 * through its sign class (negative, zero, positive): a finite operand
 * that is not a point may then be replaced by -1, +-0 and +1.
 */
static bool sign_class_op(usc_hlo_opcode op)
{
	return op == USC_HLO_OP_ADD || op == USC_HLO_OP_SUBTRACT ||
	       op == USC_HLO_OP_MULTIPLY || op == USC_HLO_OP_DIVIDE ||
	       op == USC_HLO_OP_ATAN2;
}

/* Adds the oracle's result o for an op of type t to r. */
static void take_oracle(env_state *s, const usc__dom_op *op, value *r,
			usc_dtype t, const usc__oracle_value *o)
{
	unsigned zs;

	switch (o->kind) {
	case USC__ORC_POS_INF: r->flags |= PINF; return;
	case USC__ORC_NEG_INF: r->flags |= NINF; return;
	case USC__ORC_NAN: r->flags |= VNAN; return;
	case USC__ORC_FINITE: break;
	default: r->flags |= UNK; return;
	}
	zs = (o->flags & USC__ORC_ZSIGN_UNKNOWN) ? ZPOS | ZNEG
	     : (o->flags & USC__ORC_NEG_ZERO) ? ZNEG : ZPOS;
	if (!mpfr_equal_p(&o->x->left, &o->x->right))
		zs = ZPOS | ZNEG;
	finish(s, op, r, t, &o->x->left, &o->x->right, zs,
	       USC_OVF_DEFAULT,
	       op->op == USC_HLO_OP_MULTIPLY && s->prof.fma);
}

static usc_status continuous(env_state *s, const usc__dom_op *op, value *r,
			     const value *const *a0, usc_error *err);

/* Whether an instruction is a constant, or a broadcast of one. */
static bool is_constant(const usc_hlo_instr *in)
{
	while (in && in->opcode == USC_HLO_OP_BROADCAST && in->operand_count == 1)
		in = in->operands[0];
	return in && in->opcode == USC_HLO_OP_CONSTANT;
}

/*
 * Whether the profile lets this divide be x * (1 / y): for any divisor, or
 * for a constant one (XLA's algebraic simplifier rewrites A / C as
 * A * (1 / C)).  A synthesized divide without its instruction is taken
 * to have a constant divisor only when the divisor is a point.
 */
static bool reciprocal_allowed(const env_state *s, const usc__dom_op *op,
			       const value *y)
{
	switch (s->prof.divide_reciprocal) {
	case USC_DIV_RECIP_ANY:
		return true;
	case USC_DIV_RECIP_CONSTANT:
		if (op->instr && op->instr->operand_count == 2)
			return is_constant(op->instr->operands[1]);
		return is_point(y);
	default:
		return false;
	}
}

/*
 * The divide x / y computed as x * (1 / y): the reciprocal of the divisor
 * set rounded to nearest in the declared type, the compute type or the
 * excess type (the rewrite may run before or after float normalization),
 * then the product with every freedom of a multiply.  This is the
 * rewrite itself, not an ulp window: 1 / 1 stays 1, and 1 / y for y >= 1
 * stays at most 1.
 */
static usc_status by_reciprocal(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a, usc_error *err)
{
	usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
	const void *args[2];
	usc_dtype ts[3];
	usc__dom_op m = *op;
	value one, rec;
	const value *b[2];
	usc_status st;

	usc__envelope_value_set(&one, 1, 1);
	one.flags = FIN | ZPOS;
	to_oracle(s, &s->ov[0], &one, FIN);
	to_oracle(s, &s->ov[1], a[1], FIN);
	args[0] = &s->ov[0];
	args[1] = &s->ov[1];
	st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
	if (st != USC_OK)
		return st;
	if (res->kind != USC__ORC_FINITE) {
		/* A divisor that holds 0: the quotient is unbounded anyway. */
		return USC_OK;
	}
	memset(&rec, 0, sizeof rec);
	ts[0] = op->result;
	ts[1] = compute_for(s, op->result);
	ts[2] = excess_for(s, op->result);
	for (int j = 0; j < 3; j++)
		if (ts[j] != USC_DTYPE_INVALID)
			add_rounded(s, &rec, ts[j], &res->x->left,
				    &res->x->right, USC_RND_NEAREST_EVEN,
				    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
				    ZPOS | ZNEG);
	m.op = USC_HLO_OP_MULTIPLY;
	m.arg[1] = op->result;
	b[0] = a[0];
	b[1] = &rec;
	return continuous(s, &m, r, b, err);
}

/* One combination of operand components through the oracle. */
static usc_status combo(env_state *s, const usc__dom_op *op, value *r,
			const value *const *a, const unsigned *c,
			usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
	unsigned k;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		to_oracle(s, &s->ov[k], a[k], c[k]);
		args[k] = &s->ov[k];
	}
	st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
	if (st != USC_OK)
		return st;
	take_oracle(s, op, r, op->result, res);
	if (op->op == USC_HLO_OP_DIVIDE && c[0] == FIN && c[1] == FIN &&
	    reciprocal_allowed(s, op, a[1]))
		return by_reciprocal(s, op, r, a, err);
	return USC_OK;
}

/*
 * The finite parts in a combination with an infinity or a NaN, split
 * into sign-class representatives when the op allows (sign_class_op).
 */
static usc_status special_combo(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a,
				const unsigned *c, usc_error *err)
{
	value reps[USC__DOM_MAX_ARGS][3];
	unsigned nrep[USC__DOM_MAX_ARGS], k, i0, i1;
	const value *b[USC__DOM_MAX_ARGS];
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		const value *v = a[k];

		nrep[k] = 1;
		reps[k][0] = *v;
		if (c[k] != FIN || is_point(v))
			continue;
		if (!sign_class_op(op->op)) {
			r->flags |= UNK;
			return USC_OK;
		}
		nrep[k] = 0;
		if (v->lo < 0) {
			usc__envelope_value_set(&reps[k][nrep[k]], -1, -1);
			nrep[k]++;
		}
		if (has_zero(v)) {
			reps[k][nrep[k]] = *v;
			reps[k][nrep[k]].lo = reps[k][nrep[k]].hi = 0;
			if (!(v->flags & (ZPOS | ZNEG)))
				reps[k][nrep[k]].flags |= ZPOS | ZNEG;
			nrep[k]++;
		}
		if (v->hi > 0) {
			usc__envelope_value_set(&reps[k][nrep[k]], 1, 1);
			nrep[k]++;
		}
	}
	for (k = op->nargs; k < USC__DOM_MAX_ARGS; k++)
		nrep[k] = 1;
	for (i0 = 0; i0 < nrep[0]; i0++)
		for (i1 = 0; i1 < nrep[1]; i1++) {
			b[0] = &reps[0][i0];
			if (op->nargs > 1)
				b[1] = &reps[1][i1];
			if (op->nargs > 2)
				b[2] = &reps[2][0];
			st = combo(s, op, r, b, c, err);
			if (st != USC_OK)
				return st;
		}
	return USC_OK;
}

/* Reads subnormal operands as zeros where the profile lets it. */
static void flush_inputs(const env_state *s, const usc__dom_op *op,
			 value *x, unsigned k)
{
	usc_dtype t = op->arg[k], w = excess_for(s, t);

	/*
	 * Never forced, even in a fixed flushing mode: an operand may reach
	 * its op without passing through a register that DAZ reads (the
	 * product inside an FMA, a value widened by a shift).
	 */
	if (s->prof.flush[t] & USC_FLUSH_INPUTS)
		flush_zero_mode(s, x, t, false);
	if (w != USC_DTYPE_INVALID && (s->prof.flush[w] & USC_FLUSH_INPUTS))
		flush_zero_mode(s, x, w, false);
}

/*
 * Unary functions with a domain edge: the part of the operand outside
 * the domain gives NaN, a pole at the edge its infinity; the rest goes on.
 * Returns false when nothing of the operand is left.
 */
static bool domain_clip(env_state *s, const usc__dom_op *op, value *r,
			value *x, usc_error *err, usc_status *st)
{
	double edge;
	bool pole, up;

	*st = USC_OK;
	switch (op->op) {
	case USC_HLO_OP_SQRT: edge = 0; pole = false; up = true; break;
	case USC_HLO_OP_LOG: edge = 0; pole = true; up = false; break;
	case USC_HLO_OP_LOG_PLUS_ONE: edge = -1; pole = true; up = false; break;
	case USC_HLO_OP_RSQRT: edge = 0; pole = true; up = true; break;
	default: return true;
	}
	if (!(x->flags & FIN) || x->lo >= edge) {
		if (!pole || !(x->flags & FIN) || x->lo > edge)
			return true;
	}
	if (x->lo < edge)
		r->flags |= VNAN;
	if (x->hi < edge) {
		x->flags &= ~(unsigned)FIN;
		return true;
	}
	x->lo = edge;
	if (edge == 0 && !(x->flags & (ZPOS | ZNEG)))
		x->flags |= ZPOS;
	if (!pole)
		return true;
	/* The pole: log(+-0) = -Inf, log1p(-1) = -Inf, rsqrt(+-0) = +-Inf. */
	if (op->op == USC_HLO_OP_RSQRT) {
		r->flags |= (x->flags & ZPOS) ? PINF : 0;
		r->flags |= (x->flags & ZNEG) ? NINF : 0;
	} else
		r->flags |= NINF;
	if (x->hi == edge) {
		x->flags &= ~(unsigned)FIN;
		return true;
	}
	/* The rest (edge, hi]: f(hi) at one end, beyond at the pole. */
	{
		value p = *x;
		usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
		const void *args[1];

		p.lo = p.hi;
		to_oracle(s, &s->ov[0], &p, FIN);
		args[0] = &s->ov[0];
		*st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
		if (*st != USC_OK)
			return false;
		if (res->kind != USC__ORC_FINITE) {
			r->flags |= UNK;
			return false;
		}
		x->flags &= ~(unsigned)FIN;
		if (up) {
			mpfr_set(s->a, &res->x->left, MPFR_RNDD);
			mpfr_set_inf(s->b, 1);
		} else {
			mpfr_set_inf(s->a, -1);
			mpfr_set(s->b, &res->x->right, MPFR_RNDU);
		}
		finish(s, op, r, op->result, s->a, s->b, ZPOS | ZNEG,
		       USC_OVF_DEFAULT, false);
		return false;
	}
}

static usc_status continuous(env_state *s, const usc__dom_op *op, value *r,
			     const value *const *a0, usc_error *err)
{
	value x[USC__DOM_MAX_ARGS];
	const value *a[USC__DOM_MAX_ARGS];
	unsigned c[USC__DOM_MAX_ARGS], i[USC__DOM_MAX_ARGS] = {0, 0, 0};
	unsigned k;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		x[k] = *a0[k];
		flush_inputs(s, op, &x[k], k);
		a[k] = &x[k];
	}
	if (op->nargs == 1 && !domain_clip(s, op, r, &x[0], err, &st)) {
		if (st != USC_OK)
			return st;
		x[0].flags &= ~(unsigned)FIN;
	}
	/*
	 * A divisor whose finite part holds 0 (not as a point): every
	 * finite quotient, both infinities, and NaN for 0 / 0.
	 */
	if (op->op == USC_HLO_OP_DIVIDE && has_zero(&x[1]) &&
	    !is_point(&x[1])) {
		mpfr_set_inf(s->a, -1);
		mpfr_set_inf(s->b, 1);
		finish(s, op, r, op->result, s->a, s->b, ZPOS | ZNEG,
		       USC_OVF_DEFAULT, false);
		r->flags |= PINF | NINF;
		if (has_zero(&x[0]) || (x[0].flags & VNAN))
			r->flags |= VNAN;
		/* The divisor's other components still combine below. */
		x[1].flags &= ~(unsigned)FIN;
		if (x[0].flags & VNAN)
			r->flags |= VNAN;
	}
	/* Every combination of components. */
	for (;;) {
		bool ok = true, special = false;

		for (k = 0; k < op->nargs; k++) {
			c[k] = comps[i[k]];
			if (!(a[k]->flags & c[k]))
				ok = false;
			if (c[k] != FIN)
				special = true;
		}
		if (ok) {
			st = special ? special_combo(s, op, r, a, c, err)
				     : combo(s, op, r, a, c, err);
			if (st != USC_OK)
				return st;
		}
		for (k = 0; k < op->nargs; k++) {
			if (++i[k] < 4)
				break;
			i[k] = 0;
		}
		if (k == op->nargs)
			break;
	}
	return USC_OK;
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
				unite(r, y);
			if (fy & VNAN)
				unite(r, x);
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
				unite(r, &(value){q->lo, q->hi, 0,
						  q->flags & (FIN | PINF | NINF |
							      ZPOS | ZNEG),
						  0});
		}
		if ((fx & FIN) && (fy & FIN)) {
			double lo = is_max ? fmax(x->lo, y->lo)
					   : fmin(x->lo, y->lo);
			double hi = is_max ? fmax(x->hi, y->hi)
					   : fmin(x->hi, y->hi);

			hull(r, lo, hi, (fx | fy) & (ZPOS | ZNEG));
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
		unsigned zs = ZPOS | ZNEG;

		if (x->lo == x->hi)
			zs = (l == 0 && signbit(l)) ? ZNEG : ZPOS;
		if (x->lo == x->hi && x->lo == 0)
			zs = x->flags & (ZPOS | ZNEG);
		mpfr_set_d(s->a, l, MPFR_RNDN);
		mpfr_set_d(s->b, h, MPFR_RNDN);
		finish(s, op, r, op->result, s->a, s->b, zs, USC_OVF_DEFAULT,
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

			hull(r, lo, hi, ZPOS);
		}
		return USC_OK;
	case USC_HLO_OP_SIGN:
		r->flags = f & (VNAN | UNK | CLIP);
		if ((f & NINF) || ((f & FIN) && x->lo < 0))
			hull(r, -1, -1, 0);
		if ((f & PINF) || ((f & FIN) && x->hi > 0))
			hull(r, 1, 1, 0);
		if (has_zero(x))
			hull(r, 0, 0, f & (ZPOS | ZNEG));
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

/* ------------------------------------------------------- discrete ops */

/* A pred result from which of false / true are possible. */
static void set_pred(value *r, bool can_false, bool can_true)
{
	memset(r, 0, sizeof *r);
	if (can_false && can_true) {
		r->lo = 0;
		r->hi = 1;
		r->flags = FIN;
	} else {
		load_int(r, USC_PRED, can_true ? 1 : 0);
	}
}


static unsigned order_outcomes(double xl, double xh, double yl, double yh)
{
	unsigned o = 0;

	if (xl < yh)
		o |= USC__POSS_LT;
	if (xh > yl)
		o |= USC__POSS_GT;
	if (xl <= yh && yl <= xh)
		o |= USC__POSS_EQ;
	return o;
}

static unsigned float_outcomes(const value *x, const value *y, bool total)
{
	/* Each component as an extended-real interval. */
	double lo[2][3], hi[2][3];
	int n[2] = {0, 0}, i, j;
	const value *v[2] = {x, y};
	unsigned o = 0;

	for (i = 0; i < 2; i++) {
		if (v[i]->flags & FIN) {
			lo[i][n[i]] = v[i]->lo;
			hi[i][n[i]++] = v[i]->hi;
		}
		if (v[i]->flags & PINF) {
			lo[i][n[i]] = INFINITY;
			hi[i][n[i]++] = INFINITY;
		}
		if (v[i]->flags & NINF) {
			lo[i][n[i]] = -INFINITY;
			hi[i][n[i]++] = -INFINITY;
		}
	}
	for (i = 0; i < n[0]; i++)
		for (j = 0; j < n[1]; j++)
			o |= order_outcomes(lo[0][i], hi[0][i], lo[1][j],
					    hi[1][j]);
	if (total) {
		/* -0 < +0 in the total order; NaNs sort at both ends. */
		if ((o & USC__POSS_EQ) && has_zero(x) && has_zero(y))
			o |= USC__POSS_LT | USC__POSS_GT;
		if ((x->flags | y->flags) & VNAN)
			o |= USC__POSS_LT | USC__POSS_EQ | USC__POSS_GT;
	} else if ((x->flags | y->flags) & VNAN)
		o |= USC__POSS_UN;
	return o;
}

static void compare_sets(const usc__dom_op *op, value *r, unsigned outcomes)
{
	bool f = false, t = false;
	unsigned o;

	for (o = 1; o <= USC__POSS_UN; o <<= 1)
		if (outcomes & o) {
			if (usc__cmp_holds(op->cmp_dir, o))
				t = true;
			else
				f = true;
		}
	set_pred(r, f, t);
}

/* Integer values as intervals of their natural (typed) value. */
static bool int_natural(const usc__dom_op *op)
{
	const usc_format *f = usc_format_of(op->arg[0]);

	return (op->cmp_type == USC__CMP_SIGNED &&
		f->kind == USC_KIND_SINT) ||
	       (op->cmp_type == USC__CMP_UNSIGNED &&
		(f->kind == USC_KIND_UINT || f->kind == USC_KIND_PRED));
}

/* Every op on integer points: the reference's exact semantics. */
static usc_status int_points(env_state *s, const usc__dom_op *op, value *r,
			     const value *const *a, usc_error *err)
{
	uint64_t b[USC__DOM_MAX_ARGS] = {0, 0, 0}, out = 0;
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		if (usc_dtype_is_float(op->arg[k])) {
			if (!float_point_bits(a[k], op->arg[k], &b[k]))
				return USC_EUNSUPPORTED;
		} else if (!(a[k]->flags & IPOINT))
			return USC_EUNSUPPORTED;
		else
			b[k] = a[k]->bits;
		args[k] = &b[k];
	}
	st = usc__domain_reference.apply(s->ref, op, 1, &out, args, 0, err);
	if (st != USC_OK)
		return st;
	if (usc_dtype_is_float(op->result)) {
		memset(r, 0, sizeof *r);
		add_bits(r, op->result, out);
	} else
		load_int(r, op->result, out);
	return USC_OK;
}

/* Pred operands that are sets: every combination through the reference. */
static usc_status pred_sets(env_state *s, const usc__dom_op *op, value *r,
			    const value *const *a, usc_error *err)
{
	value p[USC__DOM_MAX_ARGS][2];
	int n[USC__DOM_MAX_ARGS] = {1, 1, 1}, i0, i1, i2;
	unsigned k;
	bool any = false;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		if (op->arg[k] != USC_PRED)
			return USC_EUNSUPPORTED;
		if (a[k]->flags & IPOINT) {
			p[k][0] = *a[k];
			continue;
		}
		load_int(&p[k][0], USC_PRED, 0);
		load_int(&p[k][1], USC_PRED, 1);
		n[k] = 2;
	}
	memset(r, 0, sizeof *r);
	for (i0 = 0; i0 < n[0]; i0++)
		for (i1 = 0; i1 < n[1]; i1++)
			for (i2 = 0; i2 < n[2]; i2++) {
				const value *b[3] = {&p[0][i0], &p[1][i1],
						     &p[2][i2]};
				value o;

				st = int_points(s, op, &o, b, err);
				if (st != USC_OK)
					return st;
				if (!any) {
					*r = o;
					any = true;
				} else if (!(o.flags & IPOINT) ||
					   !(r->flags & IPOINT) ||
					   o.bits != r->bits) {
					double lo = fmin(r->lo, o.lo),
					       hi = fmax(r->hi, o.hi);

					memset(r, 0, sizeof *r);
					r->lo = lo;
					r->hi = hi;
					r->flags = FIN;
				}
			}
	return USC_OK;
}

/* The integer t-typed value of double x under XLA's float->int convert. */
static double f2i(usc_dtype t, double x)
{
	uint64_t b = 0;
	value v;

	(void)usc_encode_double(t, x, NULL, &b, NULL);
	load_int(&v, t, b);
	return v.lo;
}

static usc_status convert(env_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);
	const value *a[1] = {x};

	memset(r, 0, sizeof *r);
	if (usc_dtype_is_float(from) && usc_dtype_is_float(to)) {
		value v = *x;
		usc_overflow o = USC_OVF_DEFAULT;
		bool fp8 = tf->bits == 8;

		flush_inputs(s, op, &v, 0);
		r->flags = v.flags & (VNAN | PINF | NINF | UNK | CLIP);
		if (v.flags & FIN) {
			mpfr_set_d(s->a, v.lo, MPFR_RNDN);
			mpfr_set_d(s->b, v.hi, MPFR_RNDN);
			if (fp8 && s->prof.fp8_overflow == USC_FP8_OVF_SAT)
				o = USC_OVF_SATURATE;
			finish(s, op, r, to, s->a, s->b,
			       v.flags & (ZPOS | ZNEG), o, false);
			if (fp8 && s->prof.fp8_overflow == USC_FP8_OVF_EITHER)
				finish(s, op, r, to, s->a, s->b,
				       v.flags & (ZPOS | ZNEG),
				       USC_OVF_SATURATE, false);
		}
		/* Infinities and NaN convert per the format (and policy). */
		if (v.flags & (PINF | NINF | VNAN)) {
			r->flags &= ~(unsigned)(PINF | NINF | VNAN);
			if (v.flags & VNAN)
				add_bits(r, to, rn_double(to, NAN));
			if (v.flags & (PINF | NINF)) {
				usc_rounding rr = USC_ROUNDING_DEFAULT;
				uint64_t b;
				int sg;

				for (sg = 0; sg < 2; sg++) {
					double inf = sg ? -INFINITY : INFINITY;

					if (!(v.flags & (sg ? NINF : PINF)))
						continue;
					add_bits(r, to, rn_double(to, inf));
					if (fp8 && s->prof.fp8_overflow !=
							   USC_FP8_OVF_NONSAT) {
						rr.overflow = USC_OVF_SATURATE;
						(void)usc_encode_double(
							to, inf, &rr, &b, NULL);
						add_bits(r, to, b);
					}
				}
			}
		}
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		if (tf->kind == USC_KIND_PRED) {
			bool t = (x->flags & (VNAN | PINF | NINF)) ||
				 ((x->flags & FIN) &&
				  (x->lo != 0 || x->hi != 0));

			set_pred(r, has_zero(x), t);
			return USC_OK;
		}
		if (float_point_bits(x, from, &(uint64_t){0}))
			return int_points(s, op, r, a, err);
		/* Truncating, saturating, NaN to 0: monotone but for NaN. */
		if (x->flags & FIN) {
			double l = f2i(to, x->lo), h = f2i(to, x->hi);

			r->lo = l;
			r->hi = h;
			r->flags = FIN;
		}
		if (x->flags & VNAN)
			hull(r, 0, 0, 0);
		if (x->flags & PINF) {
			double h = f2i(to, INFINITY);

			hull(r, h, h, 0);
		}
		if (x->flags & NINF) {
			double l = f2i(to, -INFINITY);

			hull(r, l, l, 0);
		}
		if ((r->flags & FIN) && r->lo == r->hi) {
			uint64_t b = 0;

			(void)usc_encode_double(to, r->lo, NULL, &b, NULL);
			load_int(r, to, b);
		}
		return USC_OK;
	}
	/* From an integer or pred. */
	if (x->flags & IPOINT)
		return int_points(s, op, r, a, err);
	if (usc_dtype_is_float(to)) {
		mpfr_set_d(s->a, x->lo, MPFR_RNDD);
		mpfr_set_d(s->b, x->hi, MPFR_RNDU);
		finish(s, op, r, to, s->a, s->b, ZPOS, USC_OVF_DEFAULT, false);
		return USC_OK;
	}
	if (tf->kind == USC_KIND_PRED) {
		set_pred(r, x->lo <= 0 && x->hi >= 0, x->lo != 0 || x->hi != 0);
		return USC_OK;
	}
	{
		/* Integer to integer: the same values when they fit. */
		double tlo, thi;

		if (tf->kind == USC_KIND_SINT) {
			tlo = -ldexp(1, tf->bits - 1);
			thi = ldexp(1, tf->bits - 1) - 1;
		} else {
			tlo = 0;
			thi = ldexp(1, tf->bits) - 1;
		}
		r->flags = FIN;
		if (x->lo >= tlo && x->hi <= thi) {
			r->lo = x->lo;
			r->hi = x->hi;
		} else {
			r->lo = tlo;
			r->hi = thi;
		}
	}
	return USC_OK;
}

/* reduce-precision is monotone: its image of [lo, hi] is its ends'. */
static usc_status reduce_precision(env_state *s, const usc__dom_op *op,
				   value *r, const value *x, usc_error *err)
{
	usc_dtype t = op->arg[0];
	value e[2];
	uint64_t b;
	const value *a[1];
	int i;
	usc_status st;

	memset(r, 0, sizeof *r);
	r->flags = x->flags & (VNAN | PINF | NINF | UNK | CLIP);
	if (!(x->flags & FIN))
		return USC_OK;
	usc__envelope_value_set(&e[0], x->lo, x->lo);
	usc__envelope_value_set(&e[1], x->hi, x->hi);
	e[0].flags = FIN | (x->lo == 0 ? x->flags & (ZPOS | ZNEG) : 0);
	e[1].flags = FIN | (x->hi == 0 ? x->flags & (ZPOS | ZNEG) : 0);
	if (x->lo == 0 && (x->flags & ZNEG))
		e[0].flags = FIN | ZNEG;
	if (x->hi == 0 && (x->flags & ZPOS))
		e[1].flags = FIN | ZPOS;
	for (i = 0; i < 2; i++)
		if (!float_point_bits(&e[i], t, &b)) {
			r->flags |= UNK;
			return USC_OK;
		}
	for (i = 0; i < 2; i++) {
		value o;

		a[0] = &e[i];
		st = int_points(s, op, &o, a, err);
		if (st != USC_OK)
			return st;
		unite(r, &o);
	}
	if (x->lo < 0 && x->hi > 0 && has_zero(r))
		r->flags |= ZPOS | ZNEG;
	return USC_OK;
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

static usc_status apply1(env_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;
	unsigned k, cl = 0;
	usc_status st;

	memset(r, 0, sizeof *r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->flags & UNK) {
			r->flags = UNK;
			return USC_OK;
		}
		cl |= a[k]->flags & CLIP;
	}
	switch (op->op) {
	case USC_HLO_OP_SELECT:
		if (a[0]->flags & IPOINT) {
			*r = (a[0]->bits & 1) ? *a[1] : *a[2];
		} else {
			*r = *a[1];
			r->flags &= ~(unsigned)IPOINT;
			unite(r, a[2]);
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
			compare_sets(op, r, float_outcomes(
				a[0], a[1],
				op->cmp_type == USC__CMP_TOTALORDER));
			return USC_OK;
		}
		st = int_points(s, op, r, a, err);
		if (st != USC_EUNSUPPORTED)
			return st;
		if (!int_natural(op)) {
			set_pred(r, true, true);
			return USC_OK;
		}
		compare_sets(op, r, order_outcomes(a[0]->lo, a[0]->hi,
						   a[1]->lo, a[1]->hi));
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		set_pred(r, (a[0]->flags & (VNAN | PINF | NINF)) != 0,
			 (a[0]->flags & FIN) != 0);
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		st = convert(s, op, r, a[0], err);
		r->flags |= cl;
		return st;
	case USC_HLO_OP_BITCAST_CONVERT:
		st = int_points(s, op, r, a, err);
		if (st == USC_EUNSUPPORTED) {
			/* The bits of a set that is not one value: unknown. */
			set_unknown(r);
			return USC_OK;
		}
		return st;
	case USC_HLO_OP_REDUCE_PRECISION:
		return reduce_precision(s, op, r, a[0], err);
	default:
		break;
	}
	if (!usc_dtype_is_float(at)) {
		st = int_points(s, op, r, a, err);
		if (st != USC_EUNSUPPORTED)
			return st;
		st = pred_sets(s, op, r, a, err);
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
		st = continuous(s, op, r, a, err);
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

/* Whether operand k of op may be read as zero (a subnormal, flushed). */
static bool may_flush_input(const env_state *s, const usc__dom_op *op,
			    const value *x, unsigned k)
{
	usc_dtype t = op->arg[k], w = excess_for(s, t);
	usc_dtype ts[2] = {t, w};

	if (!(x->flags & FIN))
		return false;
	for (int j = 0; j < 2; j++) {
		double mn;

		if (ts[j] == USC_DTYPE_INVALID || !s->has_info[ts[j]] ||
		    !(s->prof.flush[ts[j]] & USC_FLUSH_INPUTS))
			continue;
		mn = s->info[ts[j]].min_normal;
		if (x->lo < mn && x->hi > -mn && !(x->lo == 0 && x->hi == 0))
			return true;
	}
	return false;
}

static usc_status env_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	env_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	usc__mpfr_range range;
	usc_status st = USC_OK;
	size_t i;
	unsigned k, rounds;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	rounds = usc_dtype_is_float(op->result) && counts_rounding(op->op);
	usc__mpfr_range_widen(&range);
	for (i = 0; i < n && st == USC_OK; i++) {
		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		st = apply1(s, op, &o[i], a, err);
		/*
		 * Whatever a flush touched taints what is computed from it:
		 * an operand already touched, or one this op may read as 0.
		 */
		o[i].roundings = 0;
		for (k = 0; k < op->nargs; k++) {
			if ((a[k]->flags & FLSH) || may_flush_input(s, op, a[k], k))
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
	usc__mpfr_range_restore(&range);
	return st;
}

/* ------------------------------------------------ reductions and dots */

/* gamma_n = n u / (1 - n u) for the unit roundoff u, rounded up. */
static void gamma_u(mpfr_ptr g, double n, mpfr_srcptr u)
{
	mpfr_t d;

	mpfr_init2(d, ENV_PREC);
	mpfr_mul_d(g, u, n, MPFR_RNDU);
	mpfr_ui_sub(d, 1, g, MPFR_RNDD);
	if (mpfr_sgn(d) <= 0)
		mpfr_set_inf(g, 1);
	else
		mpfr_div(g, g, d, MPFR_RNDU);
	mpfr_clear(d);
}

/* gamma_n = n u / (1 - n u) for unit roundoff u = 2^-p, rounded up. */
static void gamma_n(mpfr_ptr g, double n, int p)
{
	mpfr_t d;

	mpfr_init2(d, ENV_PREC);
	mpfr_set_d(g, n, MPFR_RNDU);
	mpfr_mul_2si(g, g, -p, MPFR_RNDU);
	mpfr_ui_sub(d, 1, g, MPFR_RNDD);
	if (mpfr_sgn(d) <= 0)
		mpfr_set_inf(g, 1);
	else
		mpfr_div(g, g, d, MPFR_RNDU);
	mpfr_clear(d);
}

/*
 * The finite result of a sum whose exact value lies in [s->lo, s->hi],
 * with an error bound err (s->t) on top and partial sums bounded by
 * big in magnitude: every value of type t (or its excess type) the
 * rounded sum may take.
 */
static void sum_result(env_state *s, value *r, usc_dtype t, mpfr_srcptr big)
{
	usc_dtype w = excess_for(s, t);

	mpfr_sub(s->a, s->lo, s->t, MPFR_RNDD);
	mpfr_add(s->b, s->hi, s->t, MPFR_RNDU);
	add_rounded(s, r, t, s->a, s->b, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, ZPOS | ZNEG);
	if (w != USC_DTYPE_INVALID)
		add_rounded(s, r, w, s->a, s->b, USC_RND_NEAREST_EVEN,
			    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
			    ZPOS | ZNEG);
	if (has_zero(r))
		r->flags |= ZPOS | ZNEG;
	/* A partial sum may overflow on the way: then Inf, or Inf - Inf. */
	if (mpfr_cmp_d(big, s->info[t].max_finite) >= 0)
		r->flags |= PINF | NINF | VNAN;
	if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
		flush_zero(s, r, t);
}

static void dot_mode(const env_state *s, const usc__dom_matmul *mm,
		     double *e_prod, double *abs_split, double *terms_per_k);
static usc_dtype dot_acc(const env_state *s, const usc__dom_matmul *mm);

/*
 * Whether a sum is the accumulation of a dot or a convolution (the
 * interpreter hands their products to the sum entry with the dot or
 * convolution as the add's instruction), and if so its operand types.
 */
static bool dot_like(const usc__dom_op *add, usc__dom_matmul *mm)
{
	const usc_hlo_instr *in = add->instr;

	memset(mm, 0, sizeof *mm);
	if (!in || in->operand_count != 2 ||
	    (in->opcode != USC_HLO_OP_DOT &&
	     in->opcode != USC_HLO_OP_CONVOLUTION))
		return false;
	mm->a_type = in->operands[0]->shape.dtype;
	mm->b_type = in->operands[1]->shape.dtype;
	mm->result = add->result;
	mm->instr = in;
	return true;
}

static usc_status env_sum(void *state, const usc__dom_op *add, size_t n,
			  const void *values, const void *init, void *out,
			  usc_error *err)
{
	env_state *s = state;
	const value *v = values;
	value *r = out;
	usc_dtype t = add->result, acc = t, c;
	usc_dtype w = excess_for(s, t);
	unsigned any = 0, all = FIN;
	mpfr_t m, g, u;
	size_t i;
	double eta, e_prod = 0, abs_split = 0, tpk = 1, terms;
	usc__dom_matmul mm;
	bool dot = dot_like(add, &mm);

	(void)err;
	float nr;

	if (!(dot ? s->prof.reassociate_dot : s->prof.reassociate) ||
	    !usc_dtype_is_float(t) || !s->has_info[t] ||
	    add->op != USC_HLO_OP_ADD)
		return USC_EUNSUPPORTED;
	if (dot) {
		/*
		 * The products handed over are already computed (rounded or,
		 * under fma, exact); an f32 dot's operand rounding (TF32,
		 * one bf16 pass) moves each product by at most e_prod of
		 * |a||b|, which is at most (1 + 2u) |ab| of the product set.
		 * A split into several bf16 terms needs the operands
		 * themselves (underflow of the parts): declined.
		 */
		dot_mode(s, &mm, &e_prod, &abs_split, &tpk);
		if (abs_split != 0 || tpk != 1)
			return USC_EUNSUPPORTED;
		acc = dot_acc(s, &mm);
	}
	memset(r, 0, sizeof *r);
	any = ((const value *)init)->flags;
	all &= any;
	nr = ((const value *)init)->roundings + (float)n;
	for (i = 0; i < n; i++) {
		any |= v[i].flags;
		all &= v[i].flags;
		nr += v[i].roundings;
	}
	if (any & UNK) {
		r->flags = UNK;
		return USC_OK;
	}
	r->flags = any & (PINF | NINF | VNAN | CLIP | FLSH | APRX);
	r->roundings = nr;
	if ((any & PINF) && (any & NINF))
		r->flags |= VNAN;
	if (!(all & FIN))
		return USC_OK;
	/*
	 * Any order of the n additions: |computed - exact| <= gamma_n *
	 * sum |x_i| (Higham, Accuracy and Stability of Numerical
	 * Algorithms, 2nd ed., eq. (4.4) holds for every summation tree), u
	 * the unit roundoff of t, the least precise type a partial sum may
	 * be rounded to.  An addition whose result is subnormal is exact
	 * (Hauser 1996), so gradual underflow adds nothing; a flushed one
	 * errs by less than the smallest normal.
	 */
	mpfr_inits2(ENV_PREC, m, g, (mpfr_ptr)0);
	mpfr_set_zero(m, 1);
	mpfr_set_zero(s->lo, 1);
	mpfr_set_zero(s->hi, 1);
	for (i = 0; i <= n; i++) {
		value x = i < n ? v[i] : *(const value *)init;

		if ((s->prof.flush[t] & USC_FLUSH_INPUTS) ||
		    (w != USC_DTYPE_INVALID &&
		     (s->prof.flush[w] & USC_FLUSH_INPUTS)))
			flush_zero(s, &x, t);
		mpfr_add_d(s->lo, s->lo, x.lo, MPFR_RNDD);
		mpfr_add_d(s->hi, s->hi, x.hi, MPFR_RNDU);
		mpfr_add_d(m, m, fmax(fabs(x.lo), fabs(x.hi)), MPFR_RNDU);
	}
	/*
	 * Each addition computed in the compute type c and rounded to t
	 * errs by at most u_t + u_c (1 + u_t) relative, which is the unit
	 * roundoff of the bound then (double rounding).
	 */
	mpfr_init2(u, ENV_PREC);
	mpfr_set_ui_2exp(u, 1, -s->info[acc].precision, MPFR_RNDU);
	c = compute_for(s, acc);
	if (c != USC_DTYPE_INVALID) {
		mpfr_set_ui_2exp(g, 1, -s->info[c].precision, MPFR_RNDU);
		mpfr_mul(s->t, g, u, MPFR_RNDU);
		mpfr_add(s->t, s->t, g, MPFR_RNDU);
		mpfr_add(u, u, s->t, MPFR_RNDU);
	}
	terms = (double)n;
	gamma_u(g, terms, u);
	if (e_prod != 0) {
		/* (e + g (1 + e)) (1 + 2u) m: the operands' rounding too. */
		mpfr_set_d(s->t, 1 + e_prod, MPFR_RNDU);
		mpfr_mul(g, g, s->t, MPFR_RNDU);
		mpfr_add_d(g, g, e_prod, MPFR_RNDU);
		mpfr_mul_2ui(s->t, u, 1, MPFR_RNDU);
		mpfr_add_ui(s->t, s->t, 1, MPFR_RNDU);
		mpfr_mul(g, g, s->t, MPFR_RNDU);
	}
	mpfr_mul(s->t, g, m, MPFR_RNDU);
	eta = 0;
	if (s->prof.flush[t] || s->prof.flush[acc] ||
	    (w != USC_DTYPE_INVALID && s->prof.flush[w]))
		eta = (double)(n + 1) * s->info[acc].min_normal;
	mpfr_add_d(s->t, s->t, eta, MPFR_RNDU);
	mpfr_add(m, m, s->t, MPFR_RNDU);
	if (mpfr_cmp_d(m, s->info[acc].max_finite) >= 0)
		r->flags |= PINF | NINF | VNAN;
	sum_result(s, r, t, m);
	mpfr_clears(m, g, u, (mpfr_ptr)0);
	return USC_OK;
}

/* How an f32 x f32 dot's operands may be split or rounded. */
static void dot_mode(const env_state *s, const usc__dom_matmul *mm,
		     double *e_prod, double *abs_split, double *terms_per_k)
{
	usc_profile_dot_f32 m = USC_DOT_F32_FULL;
	double e;

	if (mm->a_type == USC_F32 && mm->b_type == USC_F32)
		m = s->prof.dot_f32;
	*e_prod = 0;
	*abs_split = 0;
	*terms_per_k = 1;
	switch (m) {
	case USC_DOT_F32_TF32:
		/* Each operand rounded to 11 bits: |da| <= 2^-11 |a|. */
		e = 0x1p-11;
		*e_prod = 2 * e + e * e;
		break;
	case USC_DOT_F32_BF16_1:
		e = 0x1p-8;
		*e_prod = 2 * e + e * e;
		break;
	case USC_DOT_F32_BF16_3:
		/*
		 * a = ah + al + ra with ah = bf16(a), al = bf16(a - ah):
		 * |al| <= 2^-8 (1 + 2^-8) |a|, |ra| <= 2^-16 |a|.  The three
		 * products ah bh + ah bl + al bh miss al bl, ah rb, ra bh and
		 * smaller terms: below 3.1 * 2^-16 |a||b|, bounded by 2^-14.
		 * The split parts may underflow bf16's subnormals: half its
		 * spacing, 2^-134, times the other factor, four times over.
		 */
		*e_prod = 0x1p-14;
		*abs_split = 0x1p-130;
		*terms_per_k = 3;
		break;
	case USC_DOT_F32_BF16_6:
		/* Three bf16 terms each: 24 bits, the residual below 2^-21. */
		*e_prod = 0x1p-21;
		*abs_split = 0x1p-130;
		*terms_per_k = 6;
		break;
	default:
		break;
	}
}

/* The least precise type a dot may accumulate in. */
static usc_dtype dot_acc(const env_state *s, const usc__dom_matmul *mm)
{
	usc_dtype a = mm->result, d = USC_DTYPE_INVALID;
	int bits = usc__dom_width(mm->a_type);

	if (bits == 16)
		d = s->prof.dot_accumulation;
	else if (bits == 8)
		d = s->prof.fp8_dot_accumulation;
	if (d != USC_DTYPE_INVALID && usc_dtype_is_float(d) && s->has_info[d] &&
	    s->info[d].precision < s->info[a].precision)
		a = d;
	return a;
}

static usc_status env_matmul(void *state, const usc__dom_matmul *mm,
			     usc_error *err)
{
	env_state *s = state;
	usc_dtype t = mm->result, acc;
	const value *A = mm->a, *B = mm->b;
	value *C = mm->c;
	double e_prod, abs_split, tpk, eta;
	size_t bi, i, j, k;
	mpfi_t S, p, x, y;
	mpfr_t m, g, sp;

	(void)err;
	if (!usc_dtype_is_float(t) || !usc_dtype_is_float(mm->a_type) ||
	    !usc_dtype_is_float(mm->b_type) ||
	    !s->has_info[mm->a_type] || !s->has_info[mm->b_type] ||
	    s->info[mm->a_type].precision > s->info[t].precision ||
	    s->info[mm->b_type].precision > s->info[t].precision ||
	    s->info[mm->a_type].emax > s->info[t].emax ||
	    s->info[mm->b_type].emax > s->info[t].emax)
		return USC_EUNSUPPORTED;
	dot_mode(s, mm, &e_prod, &abs_split, &tpk);
	acc = dot_acc(s, mm);
	/* Sequential and exact per product: the per-element path is it. */
	if (!s->prof.reassociate_dot && e_prod == 0 && acc == t)
		return USC_EUNSUPPORTED;
	mpfi_init2(S, ENV_PREC);
	mpfi_init2(p, ENV_PREC);
	mpfi_init2(x, ENV_PREC);
	mpfi_init2(y, ENV_PREC);
	mpfr_inits2(ENV_PREC, m, g, sp, (mpfr_ptr)0);
	/*
	 * Any order, products rounded or fused: |computed - exact| <=
	 * gamma_n sum |a_k b_k| (Higham, eq. (3.5), for every order), with
	 * n the number of products, plus the operands' own rounding
	 * freedom e_prod |a||b| per product, plus n times the spacing of
	 * the accumulation type's subnormals (a product that underflows).
	 */
	gamma_n(g, (double)mm->k * tpk, s->info[acc].precision);
	eta = (double)mm->k * tpk * s->info[acc].min_subnormal;
	if (s->prof.flush[acc])
		eta = (double)mm->k * tpk * s->info[acc].min_normal;
	for (bi = 0; bi < mm->batch; bi++)
		for (i = 0; i < mm->m; i++)
			for (j = 0; j < mm->n; j++) {
				value *r = &C[(bi * mm->m + i) * mm->n + j];
				bool ok = true;
				unsigned fl = 0;
				float nr = 0;

				memset(r, 0, sizeof *r);
				mpfi_set_ui(S, 0);
				mpfr_set_zero(m, 1);
				mpfr_set_zero(sp, 1);
				for (k = 0; k < mm->k && ok; k++) {
					value a = A[(bi * mm->m + i) * mm->k +
						    k];
					value b = B[(bi * mm->k + k) * mm->n +
						    j];

					if ((a.flags | b.flags) &
						    (UNK | VNAN | PINF | NINF) ||
					    !(a.flags & b.flags & FIN)) {
						ok = false;
						break;
					}
					if (s->prof.flush[mm->a_type] &
					    USC_FLUSH_INPUTS)
						flush_zero(s, &a, mm->a_type);
					if (s->prof.flush[mm->b_type] &
					    USC_FLUSH_INPUTS)
						flush_zero(s, &b, mm->b_type);
					fl |= (a.flags | b.flags) & (FLSH | APRX);
					nr += a.roundings + b.roundings + 2;
					mpfi_interv_d(x, a.lo, a.hi);
					mpfi_interv_d(y, b.lo, b.hi);
					mpfi_mul(p, x, y);
					mpfi_add(S, S, p);
					{
						double ma = fmax(fabs(a.lo),
								 fabs(a.hi));
						double mb = fmax(fabs(b.lo),
								 fabs(b.hi));

						mpfr_set_d(s->t, ma, MPFR_RNDU);
						mpfr_mul_d(s->t, s->t, mb,
							   MPFR_RNDU);
						mpfr_add(m, m, s->t, MPFR_RNDU);
						mpfr_add_d(sp, sp, ma + mb,
							   MPFR_RNDU);
					}
				}
				if (!ok) {
					/* Specials in a reassociated dot. */
					r->flags = UNK;
					continue;
				}
				mpfi_get_left(s->lo, S);
				mpfi_get_right(s->hi, S);
				/* t = (e + g (1 + e)) m + abs sp (1+) + eta */
				mpfr_set_d(s->t, 1 + e_prod, MPFR_RNDU);
				mpfr_mul(s->t, s->t, g, MPFR_RNDU);
				mpfr_add_d(s->t, s->t, e_prod, MPFR_RNDU);
				mpfr_mul(s->t, s->t, m, MPFR_RNDU);
				mpfr_mul_d(sp, sp, abs_split * 8, MPFR_RNDU);
				mpfr_add(s->t, s->t, sp, MPFR_RNDU);
				mpfr_add_d(s->t, s->t, eta, MPFR_RNDU);
				mpfr_add(m, m, s->t, MPFR_RNDU);
				if (mpfr_cmp_d(m, s->info[acc].max_finite) >= 0)
					r->flags |= PINF | NINF | VNAN;
				sum_result(s, r, t, m);
				r->flags |= fl;
				r->roundings = nr;
			}
	mpfi_clear(S);
	mpfi_clear(p);
	mpfi_clear(x);
	mpfi_clear(y);
	mpfr_clears(m, g, sp, (mpfr_ptr)0);
	return USC_OK;
}

const usc__domain_ops usc__domain_envelope = {
	.name = "envelope",
	.value_size = sizeof(value),
	.create = env_create,
	.destroy = env_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = env_load,
	.constant = env_constant,
	.apply = env_apply,
	.to_output = env_to_output,
	.is_true = env_is_true,
	.to_index = env_to_index,
	.matmul = env_matmul,
	.sum = env_sum,
};
