/*
 * The input distributions of an audit (include/ulpscope/audit.h): the five
 * that tools/capture draws catalogue inputs from, and adversarial ones
 * that find precision problems a normal draw rarely meets (cancellation,
 * overflow of exp, the neighbourhood of zero and of one).
 *
 * The generator is xoshiro256** seeded through splitmix64 (the seeding its
 * authors recommend), so that a (distribution, seed, stream) triple gives
 * the same tensor on every machine: every value is made in double and
 * rounded to nearest once into the type.  The transcendental functions
 * used (log, sqrt, cos, exp2) are correctly rounded or nearly so in glibc;
 * an input differing by an ulp on another libm is still a valid draw.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/audit.h"
#include "ulpscope/dtype.h"

static const char *const dist_names[] = {
#define USC__AUDIT_DIST_NAME(id, name, what) name,
	USC_AUDIT_DIST_LIST(USC__AUDIT_DIST_NAME)
#undef USC__AUDIT_DIST_NAME
};

static const char *const dist_whats[] = {
#define USC__AUDIT_DIST_WHAT(id, name, what) what,
	USC_AUDIT_DIST_LIST(USC__AUDIT_DIST_WHAT)
#undef USC__AUDIT_DIST_WHAT
};

const char *usc_audit_dist_name(usc_audit_dist d)
{
	return (unsigned)d < USC_AUDIT_DIST_COUNT ? dist_names[d] : NULL;
}

const char *usc_audit_dist_description(usc_audit_dist d)
{
	return (unsigned)d < USC_AUDIT_DIST_COUNT ? dist_whats[d] : NULL;
}

usc_status usc_audit_dist_from_name(const char *name, size_t len,
				    usc_audit_dist *out, usc_error *err)
{
	char list[256] = "";

	for (int d = 0; d < USC_AUDIT_DIST_COUNT; d++) {
		if (strlen(dist_names[d]) == len &&
		    memcmp(dist_names[d], name, len) == 0) {
			*out = (usc_audit_dist)d;
			return USC_OK;
		}
		if (d)
			strncat(list, ", ", sizeof list - strlen(list) - 1);
		strncat(list, dist_names[d], sizeof list - strlen(list) - 1);
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "unknown distribution '%.*s' (one of %s)",
			 (int)(len > 64 ? 64 : len), name, list);
}

/* ------------------------------------------------------------ generator */

typedef struct rng {
	uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t next_u64(rng *g)
{
	uint64_t *s = g->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Seeds the generator from the triple, each word mixed in turn. */
static void rng_seed(rng *g, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t x = a;

	x ^= splitmix64(&x) ^ b;
	x ^= splitmix64(&x) ^ c;
	for (int i = 0; i < 4; i++)
		g->s[i] = splitmix64(&x);
}

/* Uniform on [0, 1), 53 bits. */
static double next_unit(rng *g)
{
	return (double)(next_u64(g) >> 11) * 0x1p-53;
}

static double next_range(rng *g, double lo, double hi)
{
	return lo + (hi - lo) * next_unit(g);
}

/* An integer uniform on [lo, hi]. */
static int64_t next_int(rng *g, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next_u64(g) % (uint64_t)(hi - lo + 1));
}

static double next_sign(rng *g)
{
	return (next_u64(g) >> 63) ? -1.0 : 1.0;
}

/* Standard normal, by Box and Muller (the first of the pair). */
static double next_normal(rng *g)
{
	double u1 = 1.0 - next_unit(g); /* (0, 1]: log stays finite */
	double u2 = next_unit(g);

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ------------------------------------------------------- distributions */

/*
 * A rounding tie of the working type w as a value the tensor's type t can
 * hold (tools/capture's ties): (1 + m/2^p + 2^-p/2) 2^e with p the working
 * type's stored bits, a quarter moved one ulp of t off the tie.  When t
 * cannot hold w's ties (not more significand bits), a value whose last
 * significand bit is set: a tie of the type one bit narrower.
 */
static double draw_tie(rng *g, const usc_float_info *ti,
		       const usc_float_info *wi)
{
	int pt = ti->precision - 1, pw = wi->precision - 1;
	int lo = wi->emin + 1 > -4 ? wi->emin + 1 : -4;
	int hi = wi->emax - 1 < 4 ? wi->emax - 1 : 4;
	double e, v;

	if (hi < lo) /* a format of one or two binades */
		hi = lo;
	e = (double)next_int(g, lo, hi);

	if (pt > pw) {
		double m = (double)next_int(g, 0, ((int64_t)1 << pw) - 1);

		v = ldexp(1.0 + ldexp(m, -pw) + ldexp(1.0, -pw - 1), (int)e);
		if (next_unit(g) < 0.25)
			v += next_sign(g) * ldexp(1.0, (int)e - pt);
	} else {
		int bits = pt < 1 ? 1 : pt;
		double m = (double)(next_int(g, 0, ((int64_t)1 << (bits - 1)) - 1)
				    * 2 + 1);

		v = ldexp(1.0 + ldexp(m, -bits), (int)e);
	}
	return next_sign(g) * v;
}

/* Subnormals of t, a quarter in [min_normal, 4 min_normal). */
static double draw_denormal(rng *g, const usc_float_info *ti)
{
	int pt = ti->precision - 1;
	double v;

	if (next_unit(g) < 0.25 || pt == 0 || ti->min_subnormal == ti->min_normal)
		v = ti->min_normal * next_range(g, 1.0, 4.0);
	else
		v = (double)next_int(g, 1, ((int64_t)1 << (pt > 52 ? 52 : pt)) - 1) *
		    ti->min_subnormal;
	return next_sign(g) * v;
}

/*
 * Near-cancellation: the elements 2i and 2i+1 of every parameter share a
 * base b_i (the same in every parameter of the sample, since the base
 * generator is seeded without the stream), and each value is +-b_i (1 +
 * k 2^-p) with |k| <= 4 a few ulps of t: a - b of two parameters, a + b of
 * opposite signs, and a sum along a row all cancel most of their digits.
 */
static double draw_cancel(rng *base, rng *g, uint64_t j,
			  const usc_float_info *ti, double *b)
{
	int pt = ti->precision - 1;
	double k = (double)next_int(g, -4, 4);

	if (j % 2 == 0)
		*b = ldexp(next_range(base, 1.0, 2.0),
			   (int)next_int(base, -2, 2));
	return (j % 2 ? next_sign(g) : 1.0) * *b * (1.0 + ldexp(k, -pt));
}

/* Near overflow of exp: within 4 below and 1/2 above log(max) of t. */
static double draw_overflow(rng *g, const usc_float_info *ti)
{
	double l = log(ti->max_finite);

	return next_range(g, l - 4.0, l + 0.5);
}

/*
 * Near zero: half the values 1 + k ulps (|k| <= 64, where log cancels),
 * half tiny, 2^u with u on [emin + 2, -4], of either sign (what a divide
 * or a log meets near its pole).
 */
static double draw_nearzero(rng *g, const usc_float_info *ti)
{
	if (next_unit(g) < 0.5)
		return 1.0 + (double)next_int(g, -64, 64) * ti->epsilon / 2;
	return next_sign(g) * exp2(next_range(g, ti->emin + 2, -4.0));
}

/* Normals, a fifth replaced by one of the special values. */
static double draw_special(rng *g, const usc_float_info *ti)
{
	static const double kinds = 9;
	double r = next_unit(g);

	if (r >= 0.2)
		return next_normal(g);
	switch ((int)(r / 0.2 * kinds)) {
	case 0:
		return NAN;
	case 1:
		return INFINITY;
	case 2:
		return -INFINITY;
	case 3:
		return 0.0;
	case 4:
		return -0.0;
	case 5:
		return ti->max_finite;
	case 6:
		return -ti->max_finite;
	case 7:
		return ti->min_subnormal;
	default:
		return -ti->min_subnormal;
	}
}

static double draw_float(usc_audit_dist d, rng *base, rng *g, uint64_t j,
			 const usc_float_info *ti, const usc_float_info *wi,
			 double *b)
{
	double v;

	switch (d) {
	case USC_AUDIT_DIST_NORMAL:
		return next_normal(g);
	case USC_AUDIT_DIST_UNIFORM:
		return next_range(g, -1.0, 1.0);
	case USC_AUDIT_DIST_LARGE:
		v = next_sign(g) * exp2(next_range(g, 4.0, 12.0));
		return fmin(fmax(v, -ti->max_finite / 16), ti->max_finite / 16);
	case USC_AUDIT_DIST_TIES:
		return draw_tie(g, ti, wi);
	case USC_AUDIT_DIST_DENORMAL:
		return draw_denormal(g, ti);
	case USC_AUDIT_DIST_CANCEL:
		return draw_cancel(base, g, j, ti, b);
	case USC_AUDIT_DIST_OVERFLOW:
		return draw_overflow(g, ti);
	case USC_AUDIT_DIST_NEARZERO:
		return draw_nearzero(g, ti);
	default:
		return draw_special(g, ti);
	}
}

usc_status usc_audit_draw(usc_audit_dist d, uint64_t seed, uint64_t stream,
			  const usc_tensor_spec *spec, usc_dtype working,
			  usc_tensor **out, usc_error *err)
{
	usc_float_info ti, wi;
	usc_tensor *t;
	usc_status st;
	uint64_t n;
	rng g, base;
	double b = 1.0;
	bool is_float;

	*out = NULL;
	if ((unsigned)d >= USC_AUDIT_DIST_COUNT)
		return usc__fail(err, USC_EINVAL, "no such distribution");
	st = usc_tensor_create(spec->dtype, spec->rank, spec->dims, &t, err);
	if (st != USC_OK)
		return st;
	is_float = usc_dtype_is_float(spec->dtype);
	if (!is_float && !usc_dtype_is_integer(spec->dtype) &&
	    spec->dtype != USC_PRED) {
		usc_tensor_destroy(t);
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: cannot draw values of type %s",
				 spec->what ? spec->what : "tensor",
				 usc_dtype_name(spec->dtype));
	}
	if (is_float) {
		(void)usc_float_info_of(spec->dtype, &ti);
		if (working == USC_DTYPE_INVALID ||
		    usc_float_info_of(working, &wi) != USC_OK)
			wi = ti;
	}
	rng_seed(&g, seed, (uint64_t)d, stream + 1);
	rng_seed(&base, seed, (uint64_t)d, 0);
	n = usc_tensor_count(t);
	for (uint64_t j = 0; j < n; j++) {
		uint64_t bits;

		if (is_float) {
			double v = draw_float(d, &base, &g, j, &ti, &wi, &b);

			st = usc_encode_double(spec->dtype, v, NULL, &bits,
					       NULL);
		} else if (spec->dtype == USC_PRED) {
			bits = next_u64(&g) >> 63;
			st = USC_OK;
		} else {
			/* 0..7, or every encoding of a type narrower. */
			int w = usc_format_of(spec->dtype)->bits;

			bits = (uint64_t)next_int(&g, 0, 7);
			if (w < 3)
				bits &= (UINT64_C(1) << w) - 1;
			st = USC_OK;
		}
		if (st == USC_OK)
			st = usc_tensor_set_bits(t, j, bits);
		if (st != USC_OK) {
			usc_tensor_destroy(t);
			return usc__fail(err, st, "cannot draw element %llu",
					 (unsigned long long)j);
		}
	}
	*out = t;
	return USC_OK;
}
