/*
 * The statistics' accumulators give the same figures for the same values
 * added in any order of pieces.  A check on several threads relies on it:
 * each piece's errors are added by the thread that computed the piece, in
 * whatever order the pieces end (src/analyze/check_fold.c,
 * src/analyze/check_threads.c), while one thread adds them in piece order.
 *
 * The values are quarter integers 0 .. 249.75 with both signs (so -0.0
 * too) and NaNs at a fixed stride, cut into pieces that are added forward,
 * backward, and evens before odds.  The expected figures come from a
 * histogram of the 1000 possible magnitudes counted here: the count, the
 * NaN count, the largest magnitude, and the median and p99 as the
 * nearest-rank values (rank ceil(p * count / 100) of the ascending
 * magnitudes, docs/results.md).  One set of values fits in the
 * accumulator's memory, the other is larger than 2^20 values, so part of
 * it goes to the accumulator's temporary file.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/results.h"

#define BUCKETS 1000
#define NAN_STRIDE 1009

static double value_at(size_t j)
{
	double v = (double)((j * 7919u) % BUCKETS) * 0.25;

	if (j % NAN_STRIDE == 0)
		return NAN;
	return j % 2 ? -v : v;
}

/* The magnitude of rank r (1-based, ascending) from the histogram. */
static double rank_value(const uint64_t *hist, uint64_t r)
{
	uint64_t seen = 0;

	for (size_t b = 0; b < BUCKETS; b++) {
		seen += hist[b];
		if (seen >= r)
			return (double)b * 0.25;
	}
	return NAN;
}

static uint64_t rank_of(uint64_t p, uint64_t n)
{
	/* ceil(p * n / 100), in integers. */
	return (p * n + 99) / 100;
}

/* Adds pieces of `piece` values in the given order of piece numbers. */
static void add_pieces(usc_results_stats_acc *a, const double *x, size_t n,
		       size_t piece, int order)
{
	size_t np = (n + piece - 1) / piece;
	usc_error err;

	for (size_t i = 0; i < np; i++) {
		size_t k, len;

		if (order == 0)
			k = i;
		else if (order == 1)
			k = np - 1 - i;
		else
			k = i < (np + 1) / 2 ? 2 * i
					     : 2 * (i - (np + 1) / 2) + 1;
		len = n - k * piece < piece ? n - k * piece : piece;

		assert_int_equal(usc_results_stats_acc_add(a, x + k * piece,
							   len, &err),
				 USC_OK);
	}
}

static void check_orders(size_t n, size_t piece)
{
	double *x = malloc(n * sizeof *x);
	uint64_t hist[BUCKETS] = {0}, count = 0, nans = 0;
	double max = 0;
	usc_error err;

	assert_non_null(x);
	for (size_t j = 0; j < n; j++) {
		x[j] = value_at(j);
		if (isnan(x[j])) {
			nans++;
			continue;
		}
		hist[(size_t)(fabs(x[j]) * 4)]++;
		count++;
		if (fabs(x[j]) > max)
			max = fabs(x[j]);
	}
	for (int order = 0; order < 3; order++) {
		usc_results_stats_acc *a;
		usc_results_stats s;

		assert_int_equal(usc_results_stats_acc_new(&a, &err), USC_OK);
		add_pieces(a, x, n, piece, order);
		assert_int_equal(usc_results_stats_acc_finish(a, &s, &err),
				 USC_OK);
		usc_results_stats_acc_free(a);
		assert_int_equal(s.count, count);
		assert_int_equal(s.nan_count, nans);
		assert_true(s.max_abs == max && !signbit(s.max_abs));
		assert_true(s.median_abs ==
			    rank_value(hist, rank_of(50, count)));
		assert_true(s.p99_abs == rank_value(hist, rank_of(99, count)));
	}
	free(x);
}

static void test_in_memory(void **state)
{
	(void)state;
	check_orders(200000, 65536);
	check_orders(200000, 3000);
}

static void test_spilled(void **state)
{
	(void)state;
	check_orders(((size_t)1 << 20) + 70000, 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_memory),
		cmocka_unit_test(test_spilled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
