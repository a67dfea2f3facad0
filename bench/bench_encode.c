/*
 * Encode throughput: usc_encode_double into bf16, f8e4m3fn and f32 against
 * the C compiler's own double-to-float conversion over the same inputs,
 * measured in the same run.  Prints nanoseconds per value and the ratio to
 * the baseline; machines here are shared and noisy, so only the ratio means
 * anything, and each figure is the best of several repetitions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulpscope/dtype.h"

#define N (1u << 20)
#define REPS 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile uint64_t sink;

static double run_baseline(const double *x)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		uint64_t acc = 0;
		double t0 = now();

		for (unsigned i = 0; i < N; i++) {
			float f = (float)x[i];
			uint32_t b;

			memcpy(&b, &f, sizeof b);
			acc += b;
		}
		sink = acc;
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
	}
	return best;
}

static double run_encode(usc_dtype t, const double *x)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		uint64_t acc = 0, bits;
		double t0 = now();

		for (unsigned i = 0; i < N; i++) {
			usc_encode_double(t, x[i], NULL, &bits, NULL);
			acc += bits;
		}
		sink = acc;
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
	}
	return best;
}

int main(void)
{
	static const usc_dtype types[] = {USC_F32, USC_BF16, USC_F8E4M3FN};
	double *x = malloc(N * sizeof *x), base;
	uint64_t s = 88172645463325252u;

	if (!x)
		return 1;
	for (unsigned i = 0; i < N; i++) {
		/* Values of ordinary magnitude, both signs. */
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		x[i] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 1000;
	}
	base = run_baseline(x);
	printf("baseline (float) cast  %7.2f ns/value\n", base / N * 1e9);
	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		double t = run_encode(types[k], x);

		printf("usc_encode_double %-9s %7.2f ns/value  ratio %.1fx\n",
		       usc_dtype_name(types[k]), t / N * 1e9, t / base);
	}
	free(x);
	return 0;
}
