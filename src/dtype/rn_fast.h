/*
 * Internal: round-to-nearest-even encoding, exact decoding and the ULP of
 * the narrow binary float formats in a few integer operations on a
 * double's bits, for the loops that run once per element (the fast
 * reference, the tier's decisions, the check's figures).
 *
 * A caller looks the format up once per loop (usc__rn_format_of) and then
 * calls the inline functions below for every element.  Each gives the
 * library's general function's result bit for bit where it applies
 * (usc_encode_double with the default rounding, usc_decode_double,
 * usc_ulp_double), and says so; where it does not (a NaN, an infinity, a
 * value past the largest finite one, whose overflow rule differs from
 * format to format) the caller falls back to the general function.
 * tests/dtype/test_rn_fast.c holds them to the same bits, exhaustively
 * over the codes of every format of at most 16 bits.
 *
 * The formats covered are the binary ones with a sign bit, signed zeros,
 * subnormals and at most 23 stored mantissa bits: f32, bf16, f16,
 * f8e5m2, f8e4m3, f8e4m3fn, f8e3m4, f6e2m3fn, f6e3m2fn, f4e2m1fn.  Their
 * every finite value, and every spacing, is a normal double or zero.
 */
#ifndef USC_DTYPE_RN_FAST_H
#define USC_DTYPE_RN_FAST_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ulpscope/dtype.h"

typedef struct usc__rn_format {
	int man_bits;         /* stored mantissa bits */
	int emin, emax;       /* the normal binades' exponents */
	int shift;            /* 52 - man_bits: the double's bits dropped */
	double max_finite;    /* the largest finite value */
	double min_normal;    /* 2^emin */
	double sub_scale;     /* 2^(man_bits - emin) */
	double sub_unit;      /* 2^(emin - man_bits): the least spacing */
	uint64_t rebias;      /* (1023 - bias) << man_bits */
	uint64_t sign_bit;    /* 1 << (bits - 1) */
	int sign_shift;       /* bits - 1 */
	uint64_t mag_mask;    /* sign_bit - 1 */
	uint64_t special_min; /* the least magnitude code of an Inf or NaN */
} usc__rn_format;

/*
 * The figures of float type t, or NULL when t is not one of the formats
 * above (f64, the fnuz and e8m0 formats, integers): the caller then takes
 * the general functions.  Computed once, thread-safe.
 */
const usc__rn_format *usc__rn_format_of(usc_dtype t);

/*
 * usc_encode_double(t, d, NULL, bits, NULL) for |d| <= the largest finite
 * value (zeros and subnormals included): returns false, *bits untouched,
 * for a NaN or a larger magnitude.
 *
 * A normal result: the double's magnitude bits rounded to man_bits
 * fraction bits, nearest-even (add 2^(shift-1) - 1 and the lowest kept
 * bit, drop shift bits; a carry moves into the exponent field, as it
 * must: the magnitude bits of doubles and of the format both order as
 * their values, IEEE 754-2019 3.4), then the exponent rebiased.  Below
 * the least normal: |d| 2^(man_bits - emin) (a power-of-two scaling, exact)
 * is the magnitude in units of the least spacing, below 2^man_bits, and
 * adding and subtracting 2^52 rounds it to an integer, nearest-even, in
 * the default rounding mode (the double sum's spacing is 1 there); a
 * result of 2^man_bits is the least normal's code, as it must be.  The
 * largest finite value rounds no higher than itself (rounding is
 * monotone), so no overflow rule is met.
 */
static inline bool usc__rn_encode(const usc__rn_format *f, double d,
				  uint64_t *bits)
{
	uint64_t b, m, s;
	double a = fabs(d);

	if (!(a <= f->max_finite))
		return false;
	memcpy(&b, &d, sizeof b);
	s = (b >> 63) ? f->sign_bit : 0;
	if (a >= f->min_normal) {
		m = b & ~((uint64_t)1 << 63);
		m = (m + (((uint64_t)1 << (f->shift - 1)) - 1) +
		     ((m >> f->shift) & 1)) >>
		    f->shift;
		*bits = s | (m - f->rebias);
	} else
		*bits = s | (uint64_t)((a * f->sub_scale + 0x1p52) - 0x1p52);
	return true;
}

/*
 * usc__rn_encode over n doubles, without a branch per element, for the
 * array loops.  out[i] is d[i]'s code for every |d[i]| <= the largest
 * finite value, by usc__rn_encode's two formulas, both computed and one
 * kept by a mask (the data's magnitudes are random, and a mispredicted
 * branch costs more than the other formula).  Everything is integer
 * arithmetic on the bits, which the baseline x86-64 vector instructions
 * (SSE2) hold two at a time, so the compiler vectorizes the loop:
 *   - the subnormal formula's integer is read from the bits of
 *     |d| 2^(man_bits - emin) + 2^52, a double in [2^52, 2^53) whose
 *     fraction field is that integer, not by a conversion;
 *   - |d| < the least normal is the magnitude bits' m < those of the
 *     least normal (the bits order as the values, IEEE 754-2019 3.4),
 *     decided by the borrow of m - min: both are below 2^63, so the
 *     difference wraps past 2^63 exactly when m is the smaller;
 *   - the sign bit moves to the format's by a shift.
 * Returns nonzero when some element is a NaN or a magnitude above the
 * largest finite value (the same borrow test against its bits): those
 * elements' out[i] hold no meaningful code, and the caller encodes them
 * again by the general function.
 */
static inline uint64_t usc__rn_encode_array(const usc__rn_format *f,
					    const double *restrict d,
					    size_t n, uint64_t *restrict out)
{
	const uint64_t half = ((uint64_t)1 << (f->shift - 1)) - 1;
	const uint64_t two52 = (uint64_t)0x433 << 52;
	const uint64_t rebias = f->rebias;
	const int shift = f->shift, sign_shift = f->sign_shift;
	const double scale = f->sub_scale;
	uint64_t min_bits, max_bits, rare = 0;

	memcpy(&min_bits, &f->min_normal, sizeof min_bits);
	memcpy(&max_bits, &f->max_finite, sizeof max_bits);
	for (size_t i = 0; i < n; i++) {
		double t = fabs(d[i]) * scale + 0x1p52;
		uint64_t b, m, tb, norm, sub, low;

		memcpy(&b, &d[i], sizeof b);
		memcpy(&tb, &t, sizeof tb);
		m = b & ~((uint64_t)1 << 63);
		norm = ((m + half + ((m >> shift) & 1)) >> shift) - rebias;
		sub = tb - two52;
		low = (uint64_t)0 - ((m - min_bits) >> 63);
		out[i] = ((b >> 63) << sign_shift) | (norm & ~low) | (sub & low);
		rare |= (max_bits - m) >> 63;
	}
	return rare;
}

/*
 * usc_decode_double for a finite code (magnitude below special_min):
 * returns false for an Inf or NaN code.  The value is exact in double.
 */
static inline bool usc__rn_decode(const usc__rn_format *f, uint64_t c,
				  double *out)
{
	uint64_t mag = c & f->mag_mask, e = mag >> f->man_bits;
	double v;

	if (mag >= f->special_min)
		return false;
	if (e == 0)
		v = (double)mag * f->sub_unit;
	else {
		uint64_t b = (mag + f->rebias) << f->shift;

		memcpy(&v, &b, sizeof v);
	}
	*out = (c & f->sign_bit) ? -v : v;
	return true;
}

/*
 * usc_ulp_double(t, x): 2^(e - man_bits), e the binade of x (2^e <= |x| <
 * 2^(e+1)) clamped to [emin, emax]; emax for an infinity, NaN for a NaN.
 * The exponent field of the double gives e for a normal x; a zero or a
 * subnormal double lies below every covered format's least normal, and
 * an infinity's field (2047) above every emax.
 */
static inline double usc__rn_ulp(const usc__rn_format *f, double x)
{
	uint64_t b;
	int e;
	double u;

	if (x != x)
		return x;
	memcpy(&b, &x, sizeof b);
	e = (int)((b >> 52) & 0x7ff) - 1023;
	e = e < f->emin ? f->emin : e > f->emax ? f->emax : e;
	b = (uint64_t)(e - f->man_bits + 1023) << 52;
	memcpy(&u, &b, sizeof u);
	return u;
}

#endif /* USC_DTYPE_RN_FAST_H */
