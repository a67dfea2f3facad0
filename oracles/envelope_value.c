/*
 * The envelope's values at the edges of a kernel (docs/envelope.md, "The
 * value"): an input encoding or a constant as a point, an output set
 * rounded to its type with its certificate (usc__envelope_elem), and
 * whether a device encoding lies inside.
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
#include "envelope_internal.h"
#include "envelope_round.h"
#include "oracle.h"

/* ------------------------------------------------ loads and outputs */

void usc__env_load_int(value *r, usc_dtype t, uint64_t bits)
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

usc_status usc__env_load(void *state, usc_dtype t, uint64_t bits,
			 void *out, usc_error *err)
{
	value *r = out;

	(void)state;
	memset(r, 0, sizeof *r);
	if (usc_dtype_is_float(t)) {
		usc__env_add_bits(r, t, bits);
		return USC_OK;
	}
	if (usc_dtype_is_integer(t) || t == USC_PRED) {
		usc__env_load_int(r, t, bits);
		return USC_OK;
	}
	return usc__fail(err, USC_EUNSUPPORTED,
			 "the envelope does not hold %s values",
			 usc_dtype_name(t));
}

/*
 * The value of an f32, bf16 or f16 encoding as a double, exactly (each
 * is a subset of double): the fields moved into a double's, which is
 * what usc_decode_double computes, without its table lookup per element.
 */
static inline double decode_narrow(usc_dtype t, uint64_t bits)
{
	float f;
	uint32_t u;
	double d;
	uint64_t sign, e, m;

	switch (t) {
	case USC_F32:
		u = (uint32_t)bits;
		memcpy(&f, &u, sizeof f);
		return (double)f;
	case USC_BF16:
		u = (uint32_t)(bits & 0xffff) << 16;
		memcpy(&f, &u, sizeof f);
		return (double)f;
	default: /* USC_F16 */
		sign = (bits >> 15) & 1;
		e = (bits >> 10) & 0x1f;
		m = bits & 0x3ff;
		if (e == 0x1f)
			d = m ? NAN : INFINITY;
		else if (e == 0)
			d = (double)m * 0x1p-24;
		else
			d = (double)(m | 0x400) * ldexp(1.0, (int)e - 25);
		return sign ? -d : d;
	}
}

/*
 * load for n encodings at once (the domain's load_array): f32, bf16 and
 * f16 decoded in line, each element what usc__env_load gives (points
 * with the sign of their zero, NaN and infinities as flags); the other
 * types through usc__env_load.
 */
usc_status usc__env_load_array(void *state, usc_dtype t, const void *enc,
			       size_t n, void *out, usc_error *err)
{
	size_t c = (size_t)usc_format_of(t)->container_bytes;
	value *r = out;
	usc_status st;

	if (t != USC_F32 && t != USC_BF16 && t != USC_F16) {
		for (size_t i = 0; i < n; i++) {
			st = usc__env_load(state, t, usc__dom_get_enc(enc, c, i),
					   &r[i], err);
			if (st != USC_OK)
				return st;
		}
		return USC_OK;
	}
	for (size_t i = 0; i < n; i++) {
		double d = decode_narrow(t, usc__dom_get_enc(enc, c, i));

		memset(&r[i], 0, sizeof r[i]);
		if (d != d) {
			r[i].flags = VNAN;
		} else if (isinf(d)) {
			r[i].flags = d > 0 ? PINF : NINF;
		} else {
			r[i].lo = r[i].hi = d;
			/* usc__env_hull records a sign for a zero only. */
			r[i].flags = FIN | (d != 0	   ? 0u
					    : signbit(d) ? (unsigned)ZNEG
							 : (unsigned)ZPOS);
		}
	}
	return USC_OK;
}

usc_status usc__env_constant(void *state, usc_dtype t,
			     const usc_hlo_scalar *sc, void *out,
			     usc_error *err)
{
	env_state *s = state;
	uint64_t bits;
	usc_status st;

	st = usc__domain_reference.constant(s->ref, t, sc, &bits, err);
	if (st != USC_OK)
		return st;
	return usc__env_load(state, t, bits, out, err);
}

/* Rounds the real x (double) to nearest into float type t. */
uint64_t usc__env_rn_double(usc_dtype t, double x)
{
	uint64_t b = 0;

	(void)usc_encode_double(t, x, NULL, &b, NULL);
	return b;
}

/*
 * The finite part of to_output for f32, bf16 and f16 where both ends of
 * [lo, hi] lie on one side of zero with a magnitude in [m, M / 2] (m the
 * smallest normal, M the largest finite value of t): their roundings to
 * nearest and the midpoint's are normal values, so the codec's rounding
 * is the one on the double's encoding (tests/envelope/
 * test_envelope_round.c), no end overflows and no zero is in the set;
 * the encoding of the representative is then the double's fields moved
 * into t's.  false: the general code below.
 */
static bool plain_output(const env_state *s, usc_dtype t, const value *x,
			 usc__envelope_elem *loc, uint64_t *bits)
{
	double mn, mx, l, h, mid;
	uint64_t u;
	float f;
	uint32_t w;

	if (t != USC_F32 && t != USC_BF16 && t != USC_F16)
		return false;
	mn = s->info[t].min_normal;
	mx = s->info[t].max_finite / 2;
	if (!(x->lo <= x->hi) ||
	    !((x->lo >= mn && x->hi <= mx) || (x->hi <= -mn && x->lo >= -mx)))
		return false;
	mid = x->lo / 2 + x->hi / 2;
	switch (t) {
	case USC_F32:
		l = (double)(float)x->lo;
		h = (double)(float)x->hi;
		f = (float)mid;
		memcpy(&w, &f, sizeof w);
		*bits = w;
		break;
	case USC_BF16:
		l = usc__env_round_bits(x->lo, 8, USC_RND_NEAREST_EVEN);
		h = usc__env_round_bits(x->hi, 8, USC_RND_NEAREST_EVEN);
		f = (float)usc__env_round_bits(mid, 8, USC_RND_NEAREST_EVEN);
		memcpy(&w, &f, sizeof w);
		*bits = w >> 16;
		break;
	default: /* USC_F16 */
		l = usc__env_round_bits(x->lo, 11, USC_RND_NEAREST_EVEN);
		h = usc__env_round_bits(x->hi, 11, USC_RND_NEAREST_EVEN);
		mid = usc__env_round_bits(mid, 11, USC_RND_NEAREST_EVEN);
		memcpy(&u, &mid, sizeof u);
		*bits = (u >> 63) << 15 |
			(uint64_t)(ilogb(mid) + 15) << 10 |
			((u >> 42) & 0x3ff);
		break;
	}
	loc->lo = l;
	loc->hi = h;
	loc->flags |= FIN;
	return true;
}

usc_status usc__env_to_output(void *state, usc_dtype t, const void *v,
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
	if ((x->flags & FIN) && !s->no_loops &&
	    plain_output(s, t, x, &loc, bits)) {
		if (e)
			*e = loc;
		return USC_OK;
	}
	if (x->flags & FIN) {
		value r;

		uint64_t blo = usc__env_rn_double(t, x->lo), bhi = usc__env_rn_double(t, x->hi);
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
				usc__env_add_bits(&r, t, blo);
				usc__env_add_bits(&r, t, bhi);
			}
			blo = slo;
			bhi = shi;
		}
		usc__env_add_bits(&r, t, blo);
		usc__env_add_bits(&r, t, bhi);
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
			*bits = usc__env_rn_double(t, (x->flags & ZPOS) ? 0.0 : -0.0);
		else
			*bits = usc__env_rn_double(t, x->lo / 2 + x->hi / 2);
	} else if (x->flags & VNAN) {
		*bits = usc__env_rn_double(t, NAN);
	} else if (x->flags & PINF) {
		*bits = usc__env_rn_double(t, INFINITY);
	} else if (x->flags & NINF) {
		*bits = usc__env_rn_double(t, -INFINITY);
	} else {
		*bits = usc__env_rn_double(t, NAN);
	}
	if (e)
		*e = loc;
	return USC_OK;
}

bool usc__env_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return (x->flags & FIN) && x->lo >= 1;
}

usc_status usc__env_to_index(void *state, usc_dtype t, const void *v,
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

