/*
 * usc__ulp_error_codes (src/dtype/ulp_fast.h) against usc_ulp_error_mpfr,
 * which computes (y - r) / ulp(r) exactly in MPFR and rounds once: the
 * same double, bit for bit (signed zeros apart from each other), on every
 * pair of codes of every float format of at most 8 bits, on random pairs
 * of bf16, f16 and f32 codes (more with USC_TEST_SCALE), and on pairs
 * chosen across binades, subnormals and the largest values.  Where the
 * fast function declines (NaN, infinities, f64, integers) the caller
 * takes the MPFR path, so declining is checked too.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mpfr.h>

#include "internal.h"
#include "dtype/ulp_fast.h"
#include "ulpscope/dtype_mpfr.h"

static uint64_t checks, declined;

/* One pair: declined only for NaN or Inf codes; else MPFR's bits. */
static void one(usc_dtype t, uint64_t y, uint64_t r, mpfr_ptr ref)
{
	double fast = 0, want = 0;
	double yd = 0, rd = 0;

	usc_decode_double(t, y, &yd);
	usc_decode_double(t, r, &rd);
	if (!usc__ulp_error_codes(t, y, r, &fast)) {
		if (isfinite(yd) && isfinite(rd))
			fail_msg("%s 0x%llx vs 0x%llx: declined", usc_dtype_name(t),
				 (unsigned long long)y, (unsigned long long)r);
		declined++;
		return;
	}
	assert_true(isfinite(yd) && isfinite(rd));
	assert_int_equal(usc_decode_mpfr(t, r, ref), USC_OK);
	assert_int_equal(usc_ulp_error_mpfr(t, y, ref, &want), USC_OK);
	if (memcmp(&fast, &want, sizeof fast) != 0)
		fail_msg("%s 0x%llx vs 0x%llx: fast %a, MPFR %a",
			 usc_dtype_name(t), (unsigned long long)y,
			 (unsigned long long)r, fast, want);
	checks++;
}

static void test_small_formats_every_pair(void **state)
{
	static const usc_dtype ts[] = {
		USC_F8E5M2, USC_F8E4M3, USC_F8E4M3FN, USC_F8E4M3FNUZ,
		USC_F8E4M3B11FNUZ, USC_F8E5M2FNUZ, USC_F8E3M4, USC_F8E8M0FNU,
		USC_F6E2M3FN, USC_F6E3M2FN, USC_F4E2M1FN};
	mpfr_t ref;

	(void)state;
	mpfr_init2(ref, 64);
	for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) {
		uint64_t n = (uint64_t)1 << usc_format_of(ts[k])->bits;

		for (uint64_t y = 0; y < n; y++)
			for (uint64_t r = 0; r < n; r++)
				one(ts[k], y, r, ref);
	}
	mpfr_clear(ref);
	printf("small formats: %llu pairs, %llu declined (NaN or Inf)\n",
	       (unsigned long long)checks, (unsigned long long)declined);
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_wide_formats(void **state)
{
	static const usc_dtype ts[] = {USC_BF16, USC_F16, USC_F32};
	const char *sc = getenv("USC_TEST_SCALE");
	long scale = sc ? atol(sc) : 1;
	uint64_t x = 0x9e3779b97f4a7c15u;
	mpfr_t ref;

	(void)state;
	mpfr_init2(ref, 64);
	checks = 0;
	for (size_t k = 0; k < 3; k++) {
		int w = usc_format_of(ts[k])->bits;
		uint64_t m = ((uint64_t)1 << w) - 1;
		/* Edge codes: zeros, the smallest subnormals, the largest. */
		uint64_t edge[] = {0, 1, 2, 3, m >> 1, (m >> 1) - 1,
				   ((m >> 1) + 1), ((m >> 1) + 2), m - 1};

		for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
			for (size_t j = 0; j < sizeof edge / sizeof *edge; j++)
				one(ts[k], edge[i], edge[j], ref);
		for (long i = 0; i < 100000 * scale; i++) {
			uint64_t r = next(&x) & m, y;

			/* Near r (small errors) or anywhere. */
			y = (i & 1) ? (r + (next(&x) % 9) - 4) & m
				    : next(&x) & m;
			one(ts[k], y, r, ref);
		}
	}
	mpfr_clear(ref);
	printf("bf16, f16, f32: %llu pairs\n", (unsigned long long)checks);
}

static void test_declines(void **state)
{
	double out = 42;

	(void)state;
	/* f64, an integer type, NaN and Inf codes: the caller's MPFR path. */
	assert_false(usc__ulp_error_codes(USC_F64, 0x3ff0000000000000ull,
					  0x3ff0000000000001ull, &out));
	assert_false(usc__ulp_error_codes(USC_S32, 1, 2, &out));
	assert_false(usc__ulp_error_codes(USC_F32, 0x7fc00000, 0, &out));
	assert_false(usc__ulp_error_codes(USC_F32, 0, 0x7f800000, &out));
	assert_true(out == 42);
	/*
	 * By hand: f32 1 + 2^-23 (0x3f800001) against 1 (0x3f800000): one
	 * ulp; 1 against 1 + 2^-23: -1; 2 (0x40000000) against 1 - 2^-24
	 * (0x3f7fffff, ulp 2^-24): (1 + 2^-24) 2^24 = 2^24 + 1.
	 */
	assert_true(usc__ulp_error_codes(USC_F32, 0x3f800001, 0x3f800000, &out));
	assert_true(out == 1.0);
	assert_true(usc__ulp_error_codes(USC_F32, 0x3f800000, 0x3f800001, &out));
	assert_true(out == -1.0);
	assert_true(usc__ulp_error_codes(USC_F32, 0x40000000, 0x3f7fffff, &out));
	assert_true(out == 0x1p24 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_formats_every_pair),
		cmocka_unit_test(test_wide_formats),
		cmocka_unit_test(test_declines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
