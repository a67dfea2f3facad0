/*
 * The f32 / f64 / bf16 / f16 fast paths of usc_encode_double and
 * usc_decode_double (src/dtype/codec.c) against values computed without
 * them.
 *
 * Encode: doubles into f32, bf16 and f16 in nearest-even, compared with
 * MPFR rounding the same double to the format (its precision and exponent
 * range, mpfr_subnormalize for the subnormals), bit for bit, with the
 * inexact flag from MPFR's ternary value.  The samples cover the whole
 * range the fast paths take (the formats' normal ranges) and its edges,
 * where the
 * general path takes over: random doubles with exponents beyond each
 * format's range on both sides, ties (midpoints between neighbouring codes)
 * and the doubles next to them, the smallest normal, the largest finite
 * and the overflow threshold with their neighbours.  A
 * rounding that is not the default (toward zero, flushing) must not take
 * the fast path: it is compared with MPFR in that mode too.
 *
 * Decode: f32 and bf16 codes into doubles, compared with the value built
 * by hand from the code's fields (sign, exponent, significand; IEEE 754
 * binary32 and bfloat16 as its upper half), every bf16 code and random f32
 * codes plus every f32 exponent's edges; f64 codes are their own value.
 *
 * USC_TEST_SCALE (a positive integer) multiplies the random samples.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mpfr.h>

#include "ulpscope/ulpscope.h"
#include "test_util.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

/* The next draw of this test's sequence (test_util.h). */
static uint64_t next(void)
{
	return usc_test_xorshift64(&rng);
}

/*
 * MPFR's rounding of x in rnd to p bits in the exponent range [emin, emax]
 * of MPFR's [1/2, 1) scaling, subnormals included: the double it gives
 * and whether it is inexact.
 */
static double round_to(double x, mpfr_prec_t p, mpfr_exp_t lo,
			 mpfr_exp_t hi, mpfr_rnd_t rnd, bool *inexact)
{
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_t y;
	double d;
	int t;

	mpfr_init2(y, p);
	mpfr_set_emin(lo);
	mpfr_set_emax(hi);
	t = mpfr_set_d(y, x, rnd);
	t = mpfr_subnormalize(y, t, rnd);
	d = mpfr_get_d(y, rnd); /* exact: y has at most 24 bits */
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	mpfr_clear(y);
	*inexact = t != 0;
	return d;
}

/* MPFR's binary32 rounding of x in rnd: the float's bits and inexactness. */
static uint32_t mpfr_f32(double x, mpfr_rnd_t rnd, bool *inexact)
{
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_t y;
	float f;
	uint32_t b;
	int t;

	mpfr_init2(y, 24);
	/* binary32: normal exponents -125..128 in MPFR's [0.5, 1) scaling. */
	mpfr_set_emin(-148);
	mpfr_set_emax(128);
	t = mpfr_set_d(y, x, rnd);
	t = mpfr_subnormalize(y, t, rnd);
	f = mpfr_get_flt(y, rnd); /* exact: y is a binary32 number now */
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	mpfr_clear(y);
	memcpy(&b, &f, sizeof b);
	*inexact = t != 0;
	return b;
}

static void check_one(double x, const usc_rounding *r, mpfr_rnd_t rnd)
{
	uint64_t bits = 0;
	unsigned fl = 0;
	bool inexact;
	uint32_t want = mpfr_f32(x, rnd, &inexact);

	assert_int_equal(usc_encode_double(USC_F32, x, r, &bits, &fl), USC_OK);
	if (bits != want)
		fail_msg("f32 encode of %a: 0x%08llx, MPFR 0x%08lx", x,
			 (unsigned long long)bits, (unsigned long)want);
	if (((fl & USC_FLAG_INEXACT) != 0) != inexact)
		fail_msg("f32 encode of %a: inexact flag %u, MPFR %d", x, fl,
			 (int)inexact);
	/* Without the flags pointer: the same bits. */
	bits = 0;
	assert_int_equal(usc_encode_double(USC_F32, x, r, &bits, NULL),
			 USC_OK);
	assert_int_equal(bits, want);
}

static void check_both_signs(double x)
{
	usc_rounding def = USC_ROUNDING_DEFAULT, rz = USC_ROUNDING_DEFAULT;

	rz.mode = USC_RND_TOWARD_ZERO;
	check_one(x, NULL, MPFR_RNDN);
	check_one(-x, NULL, MPFR_RNDN);
	check_one(x, &def, MPFR_RNDN);
	check_one(x, &rz, MPFR_RNDZ);
	check_one(-x, &rz, MPFR_RNDZ);
}

static void test_encode_f32(void **state)
{
	long n = 400000 * usc_test_scale();
	float edges[] = {FLT_MIN, FLT_MAX, 1.0f, 0x1p-149f, 0x1p-126f * 0.5f};

	(void)state;
	for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
		double e = edges[i];

		check_both_signs(e);
		check_both_signs(nextafter(e, 0));
		check_both_signs(nextafter(e, INFINITY));
	}
	/* Between FLT_MAX and the overflow threshold FLT_MAX + ulp/2. */
	check_both_signs((double)FLT_MAX + 0x1p103);
	check_both_signs((double)FLT_MAX + 0x1p102);
	for (long i = 0; i < n; i++) {
		uint64_t u = next();
		int e = (int)(u % 301) - 160;
		double x = ldexp(1.0 + (double)(next() >> 11) * 0x1p-53, e);

		check_both_signs(x);
		/* The midpoint above the float nearest x, and its neighbours. */
		if (fabs(x) >= 0x1p-149 && fabs(x) < FLT_MAX) {
			float f = (float)x;
			double mid = ((double)f + (double)nextafterf(f, INFINITY)) / 2;

			check_both_signs(mid);
			check_both_signs(nextafter(mid, 0));
			check_both_signs(nextafter(mid, INFINITY));
		}
	}
}

/* The bf16 code of a double that bf16 holds (an f32's upper half). */
static uint64_t bf16_code(double d)
{
	float f = (float)d; /* exact */
	uint32_t b;

	memcpy(&b, &f, sizeof b);
	return b >> 16;
}

/* The binary16 code of a double that binary16 holds, from its fields. */
static uint64_t f16_code(double d)
{
	uint64_t s = signbit(d) ? 0x8000 : 0;
	double a = fabs(d);
	int e;

	if (isinf(d))
		return s | 0x7c00;
	if (a == 0)
		return s;
	if (a < 0x1p-14) /* subnormal: a multiple of 2^-24 */
		return s | (uint64_t)ldexp(a, 24);
	(void)frexp(a, &e); /* a = f 2^e, f in [1/2, 1) */
	return s | (uint64_t)(e - 1 + 15) << 10 |
	       ((uint64_t)ldexp(a, 11 - e) & 0x3ff);
}

/*
 * bf16 (8 bits, MPFR exponents -132..128) and binary16 (11 bits,
 * -23..16) in nearest-even: the fast path's normal range, its edges and
 * the general path around it, against MPFR.
 */
static void test_encode_half(void **state)
{
	long n = 300000 * usc_test_scale();

	(void)state;
	for (int k = 0; k < 2; k++) {
		usc_dtype t = k ? USC_F16 : USC_BF16;
		mpfr_prec_t p = k ? 11 : 8;
		mpfr_exp_t lo = k ? -23 : -132, hi = k ? 16 : 128;
		int elo = k ? -30 : -140, ehi = k ? 17 : 129;
		double edges[] = {k ? 0x1p-14 : 0x1p-126,
				  k ? 65504.0 : 0x1.fep127,
				  k ? 65520.0 : 0x1.ffp127, 1.0};

		for (long i = 0; i < n + 4 * 3; i++) {
			double x, want;
			uint64_t bits = 0, code;
			unsigned fl = 0;
			bool inexact;

			if (i < 4 * 3) {
				x = edges[i / 3];
				x = i % 3 == 0 ? x
				    : i % 3 == 1 ? nextafter(x, 0)
						 : nextafter(x, INFINITY);
			} else {
				int e = elo + (int)(next() % (uint64_t)(ehi - elo + 1));
				uint64_t m = next() >> 12; /* 52 fraction bits */

				/* Half the samples at or next to a tie. */
				if (i & 1)
					m = (m & ~(((uint64_t)1 << (53 - p)) - 1)) |
					    (uint64_t)1 << (52 - p);
				x = ldexp(1.0 + (double)m * 0x1p-52, e);
				if ((i & 3) == 3)
					x = nextafter(x, (i & 4) ? 0 : INFINITY);
				if (i & 8)
					x = -x;
			}
			want = round_to(x, p, lo, hi, MPFR_RNDN, &inexact);
			code = k ? f16_code(want) : bf16_code(want);
			assert_int_equal(usc_encode_double(t, x, NULL, &bits, &fl),
					 USC_OK);
			if (bits != code)
				fail_msg("%s encode of %a: 0x%04llx, MPFR 0x%04llx",
					 usc_dtype_name(t), x,
					 (unsigned long long)bits,
					 (unsigned long long)code);
			if (((fl & USC_FLAG_INEXACT) != 0) != inexact)
				fail_msg("%s encode of %a: inexact flag %u, MPFR %d",
					 usc_dtype_name(t), x, fl, (int)inexact);
		}
	}
}

/* A flushing rounding keeps its meaning in the normal range too. */
static void test_encode_f32_flush(void **state)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t bits = 1;

	(void)state;
	r.flush_subnormals = true;
	assert_int_equal(usc_encode_double(USC_F32, 0x1p-140, &r, &bits, NULL),
			 USC_OK);
	assert_int_equal(bits, 0); /* flushed; nearest-even alone: 0x00000200 */
	assert_int_equal(usc_encode_double(USC_F32, 1.5, &r, &bits, NULL),
			 USC_OK);
	assert_int_equal(bits, 0x3fc00000);
}

static void test_encode_f64(void **state)
{
	double xs[] = {1.0, -0.1, DBL_MIN, DBL_MAX, 0x1p-1074, -DBL_MAX};

	(void)state;
	for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
		uint64_t bits = 0, want;
		unsigned fl = 7;

		memcpy(&want, &xs[i], sizeof want);
		assert_int_equal(usc_encode_double(USC_F64, xs[i], NULL, &bits,
						   &fl),
				 USC_OK);
		assert_int_equal(bits, want);
		assert_int_equal(fl, 0);
	}
}

/* The value of a binary32 code from its fields, by hand. */
static double by_fields_f32(uint32_t b)
{
	int e = (int)((b >> 23) & 0xff);
	double m = (double)(b & 0x7fffff), v;

	if (e == 0xff)
		v = m == 0 ? INFINITY : NAN;
	else if (e == 0)
		v = ldexp(m, -149);
	else
		v = ldexp(m + 0x1p23, e - 150);
	return (b >> 31) ? -v : v;
}

static void check_decode(usc_dtype t, uint64_t code, double want)
{
	double got = 0;

	assert_int_equal(usc_decode_double(t, code, &got), USC_OK);
	if (isnan(want)) {
		assert_true(isnan(got));
		assert_int_equal(!!signbit(got), !!signbit(want));
		return;
	}
	if (memcmp(&got, &want, sizeof got) != 0)
		fail_msg("%s decode of 0x%llx: %a, expected %a",
			 usc_dtype_name(t), (unsigned long long)code, got, want);
}

static void test_decode(void **state)
{
	long n = 400000 * usc_test_scale();

	(void)state;
	for (uint32_t c = 0; c < 0x10000; c++)
		check_decode(USC_BF16, c, by_fields_f32(c << 16));
	for (uint32_t e = 0; e < 256; e++)
		for (uint32_t s = 0; s < 2; s++) {
			uint32_t base = s << 31 | e << 23;

			check_decode(USC_F32, base, by_fields_f32(base));
			check_decode(USC_F32, base | 1, by_fields_f32(base | 1));
			check_decode(USC_F32, base | 0x7fffff,
				     by_fields_f32(base | 0x7fffff));
		}
	for (long i = 0; i < n; i++) {
		uint32_t c = (uint32_t)next();
		uint64_t d = next();
		double dv;

		check_decode(USC_F32, c, by_fields_f32(c));
		memcpy(&dv, &d, sizeof dv);
		check_decode(USC_F64, d, dv);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_f32),
		cmocka_unit_test(test_encode_half),
		cmocka_unit_test(test_encode_f32_flush),
		cmocka_unit_test(test_encode_f64),
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
