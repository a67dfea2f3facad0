/*
 * usc_results_stats_compute against values counted by hand: nearest-rank
 * percentiles P(p) = v[ceil(p * n / 100)] of the sorted magnitudes, NaN
 * left out and counted, the median the lower one for an even count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

/* ------------------------------------------------------------------ */
/* The accumulator: the same figures from values given piecewise.       */

/* The accumulator's figures for x given in pieces of `piece` values. */
static usc_results_stats acc_stats(const double *x, uint64_t n, size_t piece)
{
	usc_results_stats_acc *a = NULL;
	usc_results_stats s;
	usc_error err;

	assert_int_equal(usc_results_stats_acc_new(&a, &err), USC_OK);
	for (uint64_t i = 0; i < n; i += piece)
		assert_int_equal(usc_results_stats_acc_add(
					 a, x + i, n - i < piece ? n - i : piece,
					 &err),
				 USC_OK);
	assert_int_equal(usc_results_stats_acc_finish(a, &s, &err), USC_OK);
	usc_results_stats_acc_free(a);
	return s;
}

static void same_stats(const usc_results_stats *a, const usc_results_stats *b)
{
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->nan_count, b->nan_count);
	assert_memory_equal(&a->max_abs, &b->max_abs, sizeof a->max_abs);
	assert_memory_equal(&a->median_abs, &b->median_abs,
			    sizeof a->median_abs);
	assert_memory_equal(&a->p99_abs, &b->p99_abs, sizeof a->p99_abs);
}

static void test_acc_small(void **state)
{
	static const double four[] = {-3.0, 1.0, NAN, 2.0, -0.5};
	static const double inf[] = {INFINITY, -1.0};
	static const double zeros[] = {-0.0, 0.0, -0.0};
	static const double nans[] = {NAN, -NAN};
	usc_results_stats s;

	(void)state;
	s = acc_stats(nans, 2, 1);
	assert_int_equal(s.count, 0);
	assert_int_equal(s.nan_count, 2);
	assert_true(isnan(s.max_abs) && isnan(s.median_abs) &&
		    isnan(s.p99_abs));
	s = acc_stats(four, 5, 2);
	assert_true(s.count == 4 && s.nan_count == 1 && s.max_abs == 3.0 &&
		    s.median_abs == 1.0 && s.p99_abs == 3.0);
	s = acc_stats(inf, 2, 1);
	assert_true(s.max_abs == INFINITY && s.median_abs == 1.0 &&
		    s.p99_abs == INFINITY);
	s = acc_stats(zeros, 3, 3);
	assert_true(s.median_abs == 0.0 && !signbit(s.median_abs) &&
		    !signbit(s.max_abs));
}

/* A xorshift generator: the tests' own, reproducible. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Shuffles x[0..n) (Fisher-Yates) with the generator seeded by seed. */
static void shuffle(double *x, uint64_t n, uint64_t seed)
{
	for (uint64_t i = n - 1; n > 1 && i > 0; i--) {
		uint64_t j = next_rand(&seed) % (i + 1);
		double t = x[i];

		x[i] = x[j];
		x[j] = t;
	}
}

/*
 * In memory (fewer than 2^20 values), where the ranks are selected, not
 * sorted: shuffled, sorted and reversed inputs with a long run of equal
 * values (exact zeros, as most errors against the reference are), whose
 * ranks are known by construction.  200000 zeros and 1..100000: the
 * median (rank 150000) is 0, the p99 (rank 297000) is 97000.
 */
static void test_acc_memory_ranks(void **state)
{
	const uint64_t zeros = 200000, m = 100000, n = zeros + m;
	double *x = malloc(n * sizeof *x);
	usc_results_stats s, direct;
	usc_error err;

	(void)state;
	assert_non_null(x);
	for (int order = 0; order < 3; order++) {
		for (uint64_t i = 0; i < n; i++)
			x[i] = i < zeros ? 0.0 : (double)(i - zeros + 1);
		if (order == 1)
			shuffle(x, n, 777);
		if (order == 2)
			for (uint64_t i = 0; i < n / 2; i++) {
				double t = x[i];

				x[i] = -x[n - 1 - i];
				x[n - 1 - i] = t;
			}
		s = acc_stats(x, n, 4096);
		assert_int_equal(s.count, n);
		assert_true(s.max_abs == (double)m);
		assert_true(s.median_abs == 0.0 && !signbit(s.median_abs));
		assert_true(s.p99_abs == 97000.0);
		assert_int_equal(usc_results_stats_compute(x, n, &direct, &err),
				 USC_OK);
		same_stats(&s, &direct);
	}
	/* Distinct values in descending order: ranks 131072, 259523. */
	for (uint64_t i = 0; i < 262144; i++)
		x[i] = (double)(262144 - i);
	s = acc_stats(x, 262144, 65536);
	assert_true(s.median_abs == 131072.0 && s.p99_abs == 259523.0);
	free(x);
}

/*
 * Pieces of every size from 1 to 700 values (so that the memory's
 * growth, 1024 values doubled, falls inside pieces and at their ends),
 * with runs of NaN at the starts and ends of pieces and a sign change
 * every few values: the figures of the whole, the NaN count and the
 * largest magnitude by hand (the values are 1 to m, each once), the
 * ranks by the direct computation (a full selection, not the histogram).
 */
static void test_acc_piece_edges(void **state)
{
	const uint64_t m = 70000;
	uint64_t n = 0, nans = 0, seed = 0x243f6a8885a308d3u;
	double *x = malloc(2 * m * sizeof *x);
	usc_results_stats_acc *a = NULL;
	usc_results_stats s, direct;
	usc_error err;
	size_t piece = 1, start = 0;

	(void)state;
	assert_non_null(x);
	for (uint64_t v = 1; v <= m; v++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		if ((seed >> 60) == 0) {
			x[n++] = NAN;
			nans++;
		}
		x[n++] = (v % 3 == 0) ? -(double)v : (double)v;
	}
	x[n++] = NAN;
	nans++;
	assert_int_equal(usc_results_stats_acc_new(&a, &err), USC_OK);
	while (start < n) {
		size_t len = n - start < piece ? n - start : piece;

		assert_int_equal(usc_results_stats_acc_add(a, x + start, len,
							   &err),
				 USC_OK);
		start += len;
		piece = piece % 700 + 1;
	}
	assert_int_equal(usc_results_stats_acc_finish(a, &s, &err), USC_OK);
	usc_results_stats_acc_free(a);
	assert_int_equal(s.count, m);
	assert_int_equal(s.nan_count, nans);
	assert_true(s.max_abs == (double)m);
	assert_int_equal(usc_results_stats_compute(x, n, &direct, &err),
			 USC_OK);
	same_stats(&s, &direct);
	/* Ranks 35000 and 69300 of 1..70000. */
	assert_true(s.median_abs == 35000.0 && s.p99_abs == 69300.0);
	free(x);
}

/*
 * Zeros, which the accumulator counts instead of storing while it holds
 * its values in memory: both ranks among them (995 zeros of 1000), the
 * median among them and the p99 above (600 of 1000: ranks 500 and 990,
 * the p99 the 390th of the values 1..400), neither (100 of 1000), and
 * zeros in memory when the values move to the temporary file (2^20 + 5
 * non-zero values, 3 zeros between each two: the file must hold the zeros
 * counted before it existed).  Each against the direct computation and,
 * where stated, the value by hand.
 */
static void test_acc_zeros(void **state)
{
	const uint64_t big = ((uint64_t)1 << 20) + 5;
	double *x = malloc(4 * big * sizeof *x);
	usc_results_stats s, direct;
	usc_error err;
	uint64_t zeros[] = {995, 600, 100};

	(void)state;
	assert_non_null(x);
	for (size_t k = 0; k < 3; k++) {
		uint64_t v = 0;

		/* The zeros spread among the values, -0 among them. */
		for (uint64_t i = 0; i < 1000; i++)
			x[i] = (i * zeros[k]) / 1000 != ((i + 1) * zeros[k]) / 1000
				       ? ((i & 1) ? -0.0 : 0.0)
				       : (double)++v;
		s = acc_stats(x, 1000, 37);
		assert_int_equal(usc_results_stats_compute(x, 1000, &direct,
							   &err),
				 USC_OK);
		same_stats(&s, &direct);
		assert_true(s.max_abs == (double)(1000 - zeros[k]));
		if (k < 2)
			assert_true(s.median_abs == 0.0 &&
				    !signbit(s.median_abs));
		if (k == 0)
			assert_true(s.p99_abs == 0.0 && !signbit(s.p99_abs));
		if (k == 1)
			assert_true(s.p99_abs == 390.0);
	}
	for (uint64_t i = 0; i < 4 * big; i++)
		x[i] = (i & 3) ? 0.0 : (double)(i / 4 + 1);
	s = acc_stats(x, 4 * big, 65536);
	assert_int_equal(usc_results_stats_compute(x, 4 * big, &direct, &err),
			 USC_OK);
	same_stats(&s, &direct);
	assert_int_equal(s.count, 4 * big);
	assert_true(s.median_abs == 0.0 && s.max_abs == (double)big);
	free(x);
}

/*
 * More values than the accumulator holds in memory, so they go to its
 * temporary file: a shuffled arithmetic sequence, whose ranks are known
 * by construction (value of rank r: (r - 1) / 4), with NaNs between.
 */
static void test_acc_spilled_ranks(void **state)
{
	const uint64_t m = 3 * ((uint64_t)1 << 20) + 17, nans = 1000;
	uint64_t n = m + nans, seed = 0x9e3779b97f4a7c15u, rm, rp;
	double *x = malloc(n * sizeof *x);
	usc_results_stats s, direct;
	usc_error err;

	(void)state;
	assert_non_null(x);
	for (uint64_t i = 0; i < m; i++)
		x[i] = (i % 2 ? -1.0 : 1.0) * (double)i / 4;
	for (uint64_t i = m; i < n; i++)
		x[i] = NAN;
	shuffle(x, n, seed);
	/* ceil(50 m / 100) and ceil(99 m / 100), by hand for this m. */
	rm = (m + 1) / 2;
	rp = (99 * m + 99) / 100;
	s = acc_stats(x, n, 65536);
	assert_int_equal(s.count, m);
	assert_int_equal(s.nan_count, nans);
	assert_true(s.max_abs == (double)(m - 1) / 4);
	assert_true(s.median_abs == (double)(rm - 1) / 4);
	assert_true(s.p99_abs == (double)(rp - 1) / 4);
	/* And what the whole-array function gives. */
	assert_int_equal(usc_results_stats_compute(x, n, &direct, &err),
			 USC_OK);
	same_stats(&s, &direct);
	free(x);
}

/*
 * Buckets too full to gather: two values repeated more than 2^20 times
 * each take the selection down to the last of its four levels.
 */
static void test_acc_spilled_repeats(void **state)
{
	const uint64_t zeros = 2000000, repeats = 1500000, big = 100;
	uint64_t n = zeros + repeats + big, seed = 12345;
	double *x = malloc(n * sizeof *x);
	usc_results_stats s, direct;
	usc_error err;

	(void)state;
	assert_non_null(x);
	for (uint64_t i = 0; i < n; i++)
		x[i] = i < zeros ? (i % 3 ? 0.0 : -0.0)
		       : i < zeros + repeats ? -0.75
					    : 1e300 * (double)(i - zeros - repeats + 1);
	shuffle(x, n, seed);
	/* Median rank 1750050 <= zeros; p99 rank 3465099 <= zeros + repeats. */
	s = acc_stats(x, n, 100000);
	assert_true(s.median_abs == 0.0 && !signbit(s.median_abs));
	assert_true(s.p99_abs == 0.75);
	assert_true(s.max_abs == 1e300 * (double)big);
	assert_int_equal(usc_results_stats_compute(x, n, &direct, &err),
			 USC_OK);
	same_stats(&s, &direct);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_ranks),
		cmocka_unit_test(test_acc_small),
		cmocka_unit_test(test_acc_memory_ranks),
		cmocka_unit_test(test_acc_piece_edges),
		cmocka_unit_test(test_acc_zeros),
		cmocka_unit_test(test_acc_spilled_ranks),
		cmocka_unit_test(test_acc_spilled_repeats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
