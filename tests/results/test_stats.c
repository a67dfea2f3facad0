/*
 * usc_results_stats_compute against values counted by hand: nearest-rank
 * percentiles P(p) = v[ceil(p * n / 100)] of the sorted magnitudes, NaN
 * left out and counted, the median the lower one for an even count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "ulpscope/results.h"

static void expect(const double *x, uint64_t n, uint64_t count,
		   uint64_t nans, double max, double med, double p99)
{
	usc_results_stats s;
	usc_error err;

	assert_int_equal(usc_results_stats_compute(x, n, &s, &err), USC_OK);
	assert_int_equal(s.count, count);
	assert_int_equal(s.nan_count, nans);
	if (isnan(max)) {
		assert_true(isnan(s.max_abs) && isnan(s.median_abs) &&
			    isnan(s.p99_abs));
		return;
	}
	/* Compared as bits: the figures are the data's own values. */
	assert_memory_equal(&s.max_abs, &max, sizeof max);
	assert_memory_equal(&s.median_abs, &med, sizeof med);
	assert_memory_equal(&s.p99_abs, &p99, sizeof p99);
}

static void test_small(void **state)
{
	static const double one[] = {-0x1.8p1};
	static const double four[] = {-3.0, 1.0, NAN, 2.0, -0.5};
	static const double nans[] = {NAN, -NAN};
	static const double inf[] = {INFINITY, -1.0};
	static const double zeros[] = {-0.0, 0.0, -0.0};

	(void)state;
	expect(NULL, 0, 0, 0, NAN, NAN, NAN);
	expect(nans, 2, 0, 2, NAN, NAN, NAN);
	expect(one, 1, 1, 0, 3.0, 3.0, 3.0);
	/* Sorted 0.5 1 2 3: median rank ceil(4/2) = 2, p99 rank
	 * ceil(3.96) = 4. */
	expect(four, 5, 4, 1, 3.0, 1.0, 3.0);
	/* 1 and inf: median rank 1, p99 rank 2. */
	expect(inf, 2, 2, 0, INFINITY, 1.0, INFINITY);
	/* |-0| is +0, bit for bit. */
	expect(zeros, 3, 3, 0, 0.0, 0.0, 0.0);
}

static void test_ranks(void **state)
{
	double x[200];

	(void)state;
	/* 1..100 with alternating signs: ranks 50 and 99. */
	for (int i = 0; i < 100; i++)
		x[i] = i % 2 ? -(double)(i + 1) : (double)(i + 1);
	expect(x, 100, 100, 0, 100.0, 50.0, 99.0);
	/* 1..101: median rank ceil(50.5) = 51, p99 rank ceil(99.99) = 100. */
	x[100] = 101.0;
	expect(x, 101, 101, 0, 101.0, 51.0, 100.0);
	/* 1..200, given in descending order: ranks 100 and 198. */
	for (int i = 0; i < 200; i++)
		x[i] = (double)(200 - i);
	expect(x, 200, 200, 0, 200.0, 100.0, 198.0);
	/* 1..199 and one NaN: n = 199, ranks 100 and ceil(197.01) = 198. */
	x[0] = NAN;
	expect(x, 200, 199, 1, 199.0, 100.0, 198.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
