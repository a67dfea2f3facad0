/*
 * Encoding from and decoding to doubles, for every element type.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "dtype/round.h"

static uint64_t width_mask(int bits)
{
	return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

/* Index of the most significant set bit of a non-zero x. */
static int msb(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/*
 * x (a normal double) rounded to nearest-even at p significant bits, by
 * integer arithmetic on its encoding: add just under half a unit of the
 * last kept place, plus one when the kept part is odd, and clear the
 * dropped bits (a carry out of the significand steps the exponent, which
 * is the right result).
 */
static double rne_bits(double x, int p)
{
	int drop = 53 - p;
	uint64_t b, half = ((uint64_t)1 << (drop - 1)) - 1;

	memcpy(&b, &x, sizeof b);
	b += half + ((b >> drop) & 1);
	b &= ~(((uint64_t)1 << drop) - 1);
	memcpy(&x, &b, sizeof x);
	return x;
}

/*
 * The default rounding (nearest-even, no flushing) into f32, f64, bf16 and
 * f16, for values whose result is a normal number.  f32: the hardware
 * conversion; C11 F.3 makes the double-to-float conversion IEEE 754's
 * convertFormat, which rounds by the current rounding direction, and the
 * process runs in round-to-nearest-even with gradual underflow (ulpscope
 * never changes the floating-point environment, and the tier relies on the
 * same).  bf16 and f16: rne_bits on the double's encoding.  With the
 * result normal and finite there is no overflow, no underflow, and the
 * only flag is inexact.  Returns false for anything else, which takes the
 * general path.  tests/dtype/test_encode_fast.c compares it with MPFR.
 */
static bool encode_fast(usc_dtype t, double x, const usc_rounding *r,
			uint64_t *bits, unsigned *flags)
{
	if (r && (r->mode != USC_RND_NEAREST_EVEN || r->flush_subnormals))
		return false;
	if (t == USC_BF16 || t == USC_F16) {
		/*
		 * A result in the normal range: bf16 from 2^-126, f16 from
		 * 2^-14, both below their first power of two past the
		 * largest finite (2^128, 2^16); anything else (subnormal,
		 * overflow, zero, NaN) takes the general path.
		 */
		bool bf = t == USC_BF16;
		double lo = bf ? 0x1p-126 : 0x1p-14, hi = bf ? 0x1p128 : 0x1p16;
		double a = fabs(x), y;
		uint64_t yb;

		if (!(a >= lo && a < hi))
			return false;
		y = rne_bits(x, bf ? 8 : 11);
		if (fabs(y) >= hi)
			return false;
		memcpy(&yb, &y, sizeof yb);
		if (bf) {
			/* y is an f32 number; a bf16 code is its upper half. */
			float f = (float)y;
			uint32_t fb;

			memcpy(&fb, &f, sizeof fb);
			*bits = fb >> 16;
		} else {
			uint64_t e = ((yb >> 52) & 0x7ff) - 1023 + 15;

			*bits = (yb >> 63) << 15 | e << 10 |
				((yb >> 42) & 0x3ff);
		}
		if (flags)
			*flags = y != x ? USC_FLAG_INEXACT : 0;
		return true;
	}
	if (t == USC_F32) {
		double a = fabs(x);
		float f;
		uint32_t b;

		if (!(a >= FLT_MIN && a <= FLT_MAX))
			return false;
		f = (float)x;
		memcpy(&b, &f, sizeof b);
		*bits = b;
		if (flags)
			*flags = (double)f != x ? USC_FLAG_INEXACT : 0;
		return true;
	}
	if (t == USC_F64 && isfinite(x) && x != 0) {
		memcpy(bits, &x, sizeof x);
		if (flags)
			*flags = 0;
		return true;
	}
	return false;
}

usc_status usc_encode_double(usc_dtype t, double x, const usc_rounding *r,
			     uint64_t *bits, unsigned *flags)
{
	const usc_format *f;
	unsigned fl = 0;
	usc__scaled s;
	uint64_t raw, m;
	int e2, shift;

	if (encode_fast(t, x, r, bits, flags))
		return USC_OK;
	f = usc_format_of(t);
	if (!usc__encodable(f))
		return USC_EINVAL;
	memcpy(&raw, &x, sizeof raw);
	s.sign = raw >> 63;
	if (isnan(x))
		usc__encode_special(f, USC__SPECIAL_NAN, s.sign, r, bits, &fl);
	else if (isinf(x))
		usc__encode_special(f, USC__SPECIAL_INF, s.sign, r, bits, &fl);
	else if (x == 0)
		usc__encode_special(f, USC__SPECIAL_ZERO, s.sign, r, bits, &fl);
	else {
		/* x = m * 2^e2 with m an integer of at most 53 bits. */
		int ef = (int)((raw >> 52) & 0x7ff);

		m = raw & (((uint64_t)1 << 52) - 1);
		if (ef == 0) {
			e2 = -1074;
		} else {
			m |= (uint64_t)1 << 52;
			e2 = ef - 1075;
		}
		s.q = usc__quantum(f, (long)e2 + msb(m));
		shift = s.q - e2;
		s.huge = false;
		s.frac = 0;
		s.sticky = false;
		if (shift <= 0) {
			/* A multiple of the quantum: no fraction. */
			s.huge = msb(m) - shift >= 64;
			s.n = -shift >= 64 ? 0 : m << -shift;
		} else if (shift < 64) {
			s.n = m >> shift;
			s.frac = m << (64 - shift);
		} else {
			s.n = 0;
			if (shift == 64)
				s.frac = m;
			else if (shift < 128) {
				s.frac = m >> (shift - 64);
				s.sticky = (m & width_mask(shift - 64)) != 0;
			} else
				s.sticky = true;
		}
		usc__round_scaled(f, &s, r, bits, &fl);
	}
	if (flags)
		*flags = fl;
	return USC_OK;
}

bool usc_bits_is_nan(usc_dtype t, uint64_t bits)
{
	const usc_format *f = usc_format_of(t);
	const usc_float_info *fi;
	uint64_t mag;

	if (!f || f->kind != USC_KIND_FLOAT)
		return false;
	fi = usc__float_info(t);
	bits &= width_mask(f->bits);
	mag = bits & ~fi->sign_mask;
	switch (f->nan) {
	case USC_NAN_IEEE:
		return mag > fi->inf_bits;
	case USC_NAN_ALLONES:
		return mag == fi->nan_bits;
	case USC_NAN_NEGZERO:
		return bits == fi->nan_bits;
	case USC_NAN_NONE:
		break;
	}
	return false;
}

bool usc_bits_is_inf(usc_dtype t, uint64_t bits)
{
	const usc_format *f = usc_format_of(t);
	const usc_float_info *fi;

	if (!f || f->kind != USC_KIND_FLOAT || f->inf == USC_INF_NONE)
		return false;
	fi = usc__float_info(t);
	return (bits & width_mask(f->bits) & ~fi->sign_mask) == fi->inf_bits;
}

usc_status usc_decode_int(usc_dtype t, uint64_t bits, int64_t *sv,
			  uint64_t *uv)
{
	const usc_format *f = usc_format_of(t);
	uint64_t mask;

	if (!f || !(f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
		    f->kind == USC_KIND_PRED))
		return USC_EINVAL;
	mask = width_mask(f->bits);
	bits &= mask;
	if (f->kind == USC_KIND_SINT) {
		/* Sign-extend from the format's width. */
		uint64_t sign = (uint64_t)1 << (f->bits - 1);
		int64_t v = (int64_t)((bits ^ sign) - sign);

		if (sv)
			*sv = v;
		if (uv)
			*uv = (uint64_t)v;
		return USC_OK;
	}
	if (sv)
		*sv = (int64_t)bits;
	if (uv)
		*uv = bits;
	return USC_OK;
}

usc_status usc_decode_double(usc_dtype t, uint64_t bits, double *out)
{
	const usc_format *f = usc_format_of(t);
	const usc_float_info *fi;
	uint64_t mag, e_field, m_field;
	double v;

	if (t == USC_F32 || t == USC_BF16) {
		/*
		 * A normal number, a zero or an infinity: the widening
		 * conversion is exact (C11 6.3.1.5).  NaNs take the general
		 * path, which gives a quiet NaN with the code's sign and no
		 * payload, and so do subnormals, which a host process that
		 * set denormals-are-zero would read as zero in hardware.  A
		 * bf16 code is the upper half of an f32 code.
		 */
		uint32_t b = t == USC_F32 ? (uint32_t)bits
					  : (uint32_t)(bits & 0xffff) << 16;
		uint32_t e = b & 0x7f800000u, m = b & 0x7fffffu;

		if ((e != 0x7f800000u && e != 0) || m == 0) {
			float x;

			memcpy(&x, &b, sizeof x);
			*out = x;
			return USC_OK;
		}
	} else if (t == USC_F64) {
		double x;

		memcpy(&x, &bits, sizeof x);
		if (!isnan(x)) {
			*out = x;
			return USC_OK;
		}
	}
	if (!f)
		return USC_EINVAL;
	if (f->kind == USC_KIND_SINT) {
		int64_t sv = 0;

		usc_decode_int(t, bits, &sv, NULL);
		*out = (double)sv;
		return (sv > ((int64_t)1 << 53) || sv < -((int64_t)1 << 53))
			       ? USC_ERANGE
			       : USC_OK;
	}
	if (f->kind == USC_KIND_UINT || f->kind == USC_KIND_PRED) {
		uint64_t uv = 0;

		usc_decode_int(t, bits, NULL, &uv);
		*out = (double)uv;
		return uv > ((uint64_t)1 << 53) ? USC_ERANGE : USC_OK;
	}
	if (f->kind != USC_KIND_FLOAT)
		return USC_EINVAL;
	fi = usc__float_info(t);
	bits &= width_mask(f->bits);
	if (usc_bits_is_nan(t, bits)) {
		*out = (bits & fi->sign_mask) && f->nan != USC_NAN_NEGZERO
			       ? -NAN
			       : NAN;
		return USC_OK;
	}
	mag = bits & ~fi->sign_mask;
	if (f->inf == USC_INF_IEEE && mag == fi->inf_bits)
		v = INFINITY;
	else {
		e_field = mag >> f->man_bits;
		m_field = mag & width_mask(f->man_bits);
		if (e_field == 0 && f->has_subnormals)
			v = ldexp((double)m_field, fi->emin - f->man_bits);
		else
			v = ldexp((double)(m_field | ((uint64_t)1 << f->man_bits)),
				  (int)e_field - f->bias - f->man_bits);
	}
	*out = (bits & fi->sign_mask) ? -v : v;
	return USC_OK;
}
