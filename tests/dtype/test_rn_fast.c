/*
 * The inline rounding, decoding and ULP of the narrow float formats
 * (src/dtype/rn_fast.h) against the library's general functions
 * (usc_encode_double, usc_decode_double, usc_ulp_double, themselves held
 * to MPFR and to published tables by test_encode_fast and
 * test_format_tables), bit for bit, and against hand-derived codes.
 *
 * Formats of at most 16 bits: every code decodes alike; between every two
 * neighbouring finite values, the midpoint (a tie), the doubles next to
 * it and the values themselves encode alike, with both signs; the ULP of
 * every finite value and of its neighbours agrees.  f32: random doubles
 * over its whole range and past it, its subnormal range and the double
 * subnormals.  The ULP error of one code against another
 * (usc__ulp_error_rn) against usc__ulp_error_codes: every pair of codes
 * of the formats of at most 8 bits, random and neighbouring pairs of the
 * wider ones.  The formats left out (f64, the fnuz and e8m0 formats,
 * integers) must have no figures, so that callers take the general path.
 *
 * USC_TEST_SCALE (a positive integer) multiplies the random samples.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "test_util.h"
#include "dtype/rn_fast.h"
#include "dtype/ulp_fast.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

/* The next draw of this test's sequence (test_util.h). */
static uint64_t next(void)
{
	return usc_test_xorshift64(&rng);
}

static const usc_dtype covered[] = {
	USC_F32,    USC_BF16,      USC_F16,      USC_F8E5M2,   USC_F8E4M3,
	USC_F8E4M3FN, USC_F8E3M4,  USC_F6E2M3FN, USC_F6E3M2FN, USC_F4E2M1FN,
};

/* The fast encoder where it answers, the general one otherwise. */
static void check_encode(usc_dtype t, const usc__rn_format *f, double d)
{
	uint64_t want = 0, got = 0;

	assert_int_equal(usc_encode_double(t, d, NULL, &want, NULL), USC_OK);
	if (!usc__rn_encode(f, d, &got)) {
		/* Only a NaN or a magnitude past the largest finite declines. */
		assert_true(isnan(d) || fabs(d) > f->max_finite);
		return;
	}
	if (got != want)
		fail_msg("%s: encode %a gave 0x%llx, the library 0x%llx",
			 usc_dtype_name(t), d, (unsigned long long)got,
			 (unsigned long long)want);
}

static void check_ulp(usc_dtype t, const usc__rn_format *f, double x)
{
	double want = 0, got = usc__rn_ulp(f, x);

	assert_int_equal(usc_ulp_double(t, x, &want), USC_OK);
	if (!(got == want || (isnan(got) && isnan(want))))
		fail_msg("%s: ulp(%a) gave %a, the library %a",
			 usc_dtype_name(t), x, got, want);
}

static void test_small_formats(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof covered / sizeof covered[0]; k++) {
		usc_dtype t = covered[k];
		const usc__rn_format *f = usc__rn_format_of(t);
		int w = usc_format_of(t)->bits;
		double prev = -1;

		assert_non_null(f);
		if (w > 16)
			continue;
		for (uint64_t c = 0; c < ((uint64_t)1 << w); c++) {
			double want = 0, got = 0;
			bool finite;

			assert_int_equal(usc_decode_double(t, c, &want), USC_OK);
			finite = usc__rn_decode(f, c, &got);
			assert_int_equal(finite, isfinite(want));
			if (finite && memcmp(&got, &want, sizeof got) != 0)
				fail_msg("%s: decode 0x%llx gave %a, the "
					 "library %a", usc_dtype_name(t),
					 (unsigned long long)c, got, want);
		}
		/*
		 * The positive finite values in increasing order are the
		 * codes 0 .. special_min - 1 (the magnitude bits order as
		 * the values).
		 */
		for (uint64_t c = 0; c < f->special_min; c++) {
			double v = 0, mid;

			assert_true(usc__rn_decode(f, c, &v));
			for (int s = 0; s < 2; s++) {
				double x = s ? -v : v;

				check_encode(t, f, x);
				check_encode(t, f, nextafter(x, INFINITY));
				check_encode(t, f, nextafter(x, -INFINITY));
				check_ulp(t, f, x);
				check_ulp(t, f, nextafter(x, INFINITY));
				check_ulp(t, f, nextafter(x, -INFINITY));
			}
			if (c > 0) {
				mid = prev / 2 + v / 2;
				for (int s = 0; s < 2; s++) {
					double x = s ? -mid : mid;

					check_encode(t, f, x);
					check_encode(t, f,
						     nextafter(x, INFINITY));
					check_encode(t, f,
						     nextafter(x, -INFINITY));
				}
			}
			prev = v;
		}
		/* Past the largest finite value, the specials. */
		check_encode(t, f, nextafter(f->max_finite, INFINITY));
		check_encode(t, f, INFINITY);
		check_encode(t, f, -INFINITY);
		check_encode(t, f, NAN);
		check_ulp(t, f, INFINITY);
		check_ulp(t, f, -INFINITY);
		check_ulp(t, f, NAN);
		check_ulp(t, f, 0x1p-1074);
		check_ulp(t, f, DBL_MAX);
	}
}

/* A random double whose exponent lies in [lo, hi]. */
static double random_double(int lo, int hi)
{
	uint64_t b = next();
	double m;

	b = (b & 0x800fffffffffffffu) | ((uint64_t)1023 << 52);
	memcpy(&m, &b, sizeof m);
	return ldexp(m, lo + (int)(next() % (uint64_t)(hi - lo + 1)));
}

static void test_random(void **state)
{
	long n = 200000 * usc_test_scale();

	(void)state;
	for (size_t k = 0; k < sizeof covered / sizeof covered[0]; k++) {
		usc_dtype t = covered[k];
		const usc__rn_format *f = usc__rn_format_of(t);

		for (long i = 0; i < n / 10; i++) {
			double x = random_double(f->emin - f->man_bits - 3,
						 f->emax + 2);

			check_encode(t, f, x);
			check_ulp(t, f, x);
		}
	}
	/* f32 everywhere: its normals, subnormals, the double subnormals. */
	for (long i = 0; i < n; i++) {
		const usc__rn_format *f = usc__rn_format_of(USC_F32);
		uint64_t b = next();
		double x;

		memcpy(&x, &b, sizeof x);
		check_encode(USC_F32, f, x);
		check_ulp(USC_F32, f, x);
		x = random_double(-160, 130);
		check_encode(USC_F32, f, x);
		check_ulp(USC_F32, f, x);
		b &= 0x800fffffffffffffu; /* a double subnormal */
		memcpy(&x, &b, sizeof x);
		check_encode(USC_F32, f, x);
	}
}

/* The inline ULP error against usc__ulp_error_codes, bit for bit. */
static void check_error(usc_dtype t, const usc__rn_format *f, uint64_t y,
			uint64_t r)
{
	double want = 0, got = 0;
	bool ok_want = usc__ulp_error_codes(t, y, r, &want);
	bool ok_got = usc__ulp_error_rn(f, y, r, &got);

	assert_int_equal(ok_got, ok_want);
	if (ok_got && memcmp(&got, &want, sizeof got) != 0)
		fail_msg("%s: error of 0x%llx against 0x%llx gave %a, the "
			 "library %a", usc_dtype_name(t),
			 (unsigned long long)y, (unsigned long long)r, got,
			 want);
}

static void test_ulp_error(void **state)
{
	long n = 200000 * usc_test_scale();

	(void)state;
	for (size_t k = 0; k < sizeof covered / sizeof covered[0]; k++) {
		usc_dtype t = covered[k];
		const usc__rn_format *f = usc__rn_format_of(t);
		int w = usc_format_of(t)->bits;
		uint64_t mask = w >= 64 ? ~(uint64_t)0
					: ((uint64_t)1 << w) - 1;

		if (w <= 8) {
			for (uint64_t y = 0; y <= mask; y++)
				for (uint64_t r = 0; r <= mask; r++)
					check_error(t, f, y, r);
			continue;
		}
		for (long i = 0; i < n / 4; i++) {
			uint64_t r = next() & mask, y = next() & mask;

			check_error(t, f, y, r);
			/* Near neighbours, the figures a check sees most. */
			check_error(t, f, (r + (next() & 7)) & mask, r);
			check_error(t, f, (r - (next() & 7)) & mask, r);
		}
	}
}

/* Hand-derived codes: ties to even, the subnormal edge, the carry. */
static void test_hand_values(void **state)
{
	const usc__rn_format *bf = usc__rn_format_of(USC_BF16);
	const usc__rn_format *h = usc__rn_format_of(USC_F16);
	const usc__rn_format *e4 = usc__rn_format_of(USC_F8E4M3FN);
	uint64_t b = 0;
	double d = 0;

	(void)state;
	/* bf16: 1 + 2^-8 is the tie between 0x3f80 and 0x3f81: even. */
	assert_true(usc__rn_encode(bf, 1 + 0x1p-8, &b));
	assert_int_equal(b, 0x3f80);
	assert_true(usc__rn_encode(bf, 1 + 0x1p-8 + 0x1p-30, &b));
	assert_int_equal(b, 0x3f81);
	/* 1 + 3 2^-8 ties between 0x3f81 and 0x3f82: even, up. */
	assert_true(usc__rn_encode(bf, 1 + 0x3p-8, &b));
	assert_int_equal(b, 0x3f82);
	/* 2 - 2^-9 rounds up across the binade to 2.0 = 0x4000. */
	assert_true(usc__rn_encode(bf, 2 - 0x1p-9, &b));
	assert_int_equal(b, 0x4000);
	/* f16: the least subnormal is 2^-24; 2^-25 ties to 0, 3 2^-25 to 2. */
	assert_true(usc__rn_encode(h, 0x1p-25, &b));
	assert_int_equal(b, 0x0000);
	assert_true(usc__rn_encode(h, -0x1p-25, &b));
	assert_int_equal(b, 0x8000);
	assert_true(usc__rn_encode(h, 0x3p-25, &b));
	assert_int_equal(b, 0x0002);
	/* The largest subnormal rounding up into the least normal 2^-14. */
	assert_true(usc__rn_encode(h, 0x1p-14 - 0x1p-26, &b));
	assert_int_equal(b, 0x0400);
	/* 65504 is f16's largest; 65520 (the overflow tie) is declined. */
	assert_true(usc__rn_encode(h, 65504, &b));
	assert_int_equal(b, 0x7bff);
	assert_false(usc__rn_encode(h, 65520, &b));
	/* f8e4m3fn: 448 = 0x7e is the largest, 0x7f the NaN. */
	assert_true(usc__rn_encode(e4, -448, &b));
	assert_int_equal(b, 0xfe);
	assert_false(usc__rn_decode(e4, 0x7f, &d));
	assert_true(usc__rn_decode(e4, 0x01, &d));
	assert_true(d == 0x1p-9);
	/* ULPs: bf16 at 1 is 2^-7, at 0 the least subnormal 2^-133. */
	assert_true(usc__rn_ulp(bf, 1.0) == 0x1p-7);
	assert_true(usc__rn_ulp(bf, 0.0) == 0x1p-133);
	assert_true(usc__rn_ulp(h, 65504) == 0x1p5);
}

static void test_not_covered(void **state)
{
	static const usc_dtype left[] = {
		USC_F64,        USC_F8E4M3FNUZ, USC_F8E4M3B11FNUZ,
		USC_F8E5M2FNUZ, USC_F8E8M0FNU,  USC_S32,
		USC_U8,         USC_PRED,       USC_C64,
	};

	(void)state;
	for (size_t k = 0; k < sizeof left / sizeof left[0]; k++)
		assert_null(usc__rn_format_of(left[k]));
	assert_null(usc__rn_format_of((usc_dtype)-1));
	assert_null(usc__rn_format_of(USC_DTYPE_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_formats),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_ulp_error),
		cmocka_unit_test(test_hand_values),
		cmocka_unit_test(test_not_covered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
