/*
 * Certified bf16 matmul (issue "oracle", Performance): C = A·B with A, B
 * bf16[n,n] and f32 accumulation as XLA writes it, dot(convert(a),
 * convert(b)) with an f32 result, evaluated by the oracle domain
 * (USC_DOMAIN_ORACLE, default precision), against the baseline the issue
 * names: two OpenBLAS dgemm calls of the same size (a certified product
 * can be had from a midpoint product and a radius product).  Both are
 * measured in the same run, best of REPS; only the ratio means anything on
 * these shared machines.
 *
 * The oracle takes about a minute at n = 512, so by default it runs at
 * n = 64, 128 (best of REPS) and 256 (once) and its time is extrapolated to
 * 512 by n^3 (the dot's work) from the largest n measured; the dgemm pair
 * is measured at 512 itself and at each n.  --full adds the oracle at 512.
 *
 * The tier's column counts the output elements per run that took the
 * dot's exact accumulation (docs/tier.md, "Exact accumulation"): those
 * whose gamma_K bound cancellation made too wide.
 *
 * --tier-only skips the oracle (its columns print 0): the tier and the dgemm
 * pair alone, for profiling the tier.
 *
 * --n N measures the one size N (the n = 512 line still follows).
 *
 * The goal's figure, tier / 2×dgemm at n = 512, is measured in pairs: each
 * repetition times the tier and then the dgemm pair, and the figure is the
 * median of the repetitions' ratios.  Both sides run on warm memory: the
 * bench raises glibc's mmap and trim thresholds so that the evaluator's
 * large arrays are reused from one run to the next, as the dgemm pair's
 * are (--cold keeps glibc's defaults, and every run of the evaluator then
 * also pays for faulting in fresh zeroed pages).
 *
 * Usage: bench_matmul [--quick] [--full] [--tier-only] [--cold] [--n N]
 *                     [--reps R]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <malloc.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

/*
 * The tier's count of exactly accumulated dot elements (oracles/tier.h;
 * internal, declared here to keep the bench off the internal headers).
 */
size_t usc__tier_dot_exact_elements(void);

/* Exact-path elements per run of the last time_domain call. */
static double last_exact;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const usc_error *err)
{
	fprintf(stderr, "bench_matmul: %s: %s\n", what, err->message);
	exit(1);
}

static uint64_t rng = 0x2545f4914f6cdd1du;

static double next_value(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) * 0x1p-53) * 2.0 - 1.0;
}

/* Best time of reps runs of the oracle on an n×n×n bf16 dot. */
static double time_domain(usc_eval_domain domain, long n, int reps)
{
	char text[1024];
	int64_t dims[2] = {n, n};
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *a, *b;
	usc_hlo_file *f;
	usc_eval *ev;
	usc_error err;
	double best = 1e300;
	size_t exact0;

	snprintf(text, sizeof text,
		 "HloModule matmul_bf16\n\n"
		 "ENTRY %%main (a: bf16[%ld,%ld], b: bf16[%ld,%ld]) -> "
		 "f32[%ld,%ld] {\n"
		 "  %%a = bf16[%ld,%ld]{1,0} parameter(0)\n"
		 "  %%b = bf16[%ld,%ld]{1,0} parameter(1)\n"
		 "  %%ca = f32[%ld,%ld]{1,0} convert(%%a)\n"
		 "  %%cb = f32[%ld,%ld]{1,0} convert(%%b)\n"
		 "  ROOT %%d = f32[%ld,%ld]{1,0} dot(%%ca, %%cb), "
		 "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
		 "}\n",
		 n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n);
	if (usc_hlo_parse(text, strlen(text), "matmul", &f, &err) != USC_OK)
		die("parse", &err);
	if (usc_tensor_create(USC_BF16, 2, dims, &a, &err) != USC_OK ||
	    usc_tensor_create(USC_BF16, 2, dims, &b, &err) != USC_OK)
		die("tensor", &err);
	for (long i = 0; i < n * n; i++) {
		uint64_t bits;

		usc_encode_double(USC_BF16, next_value(), NULL, &bits, NULL);
		usc_tensor_set_bits(a, (uint64_t)i, bits);
		usc_encode_double(USC_BF16, next_value(), NULL, &bits, NULL);
		usc_tensor_set_bits(b, (uint64_t)i, bits);
	}
	o.domain = domain;
	exact0 = usc__tier_dot_exact_elements();
	if (usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err) ||
	    usc_eval_bind(ev, 0, a, &err) || usc_eval_bind(ev, 1, b, &err))
		die("eval", &err);
	for (int r = 0; r < reps; r++) {
		double t = now();

		if (usc_eval_run(ev, &err) != USC_OK)
			die("run", &err);
		t = now() - t;
		if (t < best)
			best = t;
	}
	last_exact = (double)(usc__tier_dot_exact_elements() - exact0) / reps;
	usc_eval_destroy(ev);
	usc_tensor_destroy(a);
	usc_tensor_destroy(b);
	usc_hlo_file_destroy(f);
	return best;
}

/* Best time of reps runs of two dgemm calls of size n. */
static double time_dgemm2(long n, int reps)
{
	size_t nn = (size_t)n * (size_t)n;
	double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
	double *c = malloc(nn * sizeof *c), *d = malloc(nn * sizeof *d);
	double best = 1e300;
	int in = (int)n;

	if (!a || !b || !c || !d) {
		fprintf(stderr, "bench_matmul: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < nn; i++) {
		a[i] = next_value();
		b[i] = next_value();
	}
	/* Enough repetitions for a small n to be timed above clock noise. */
	reps *= n < 256 ? 20 : 1;
	for (int r = 0; r < reps; r++) {
		double t = now();

		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in,
			    in, 1.0, a, in, b, in, 0.0, c, in);
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, in, in,
			    in, 1.0, b, in, a, in, 0.0, d, in);
		t = now() - t;
		if (t < best)
			best = t;
	}
	free(a);
	free(b);
	free(c);
	free(d);
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The tier and the dgemm pair at n = 512, one after the other in each of
 * reps repetitions: the median of the repetitions' ratios (runs made
 * under the same load compared), and each side's best time.
 */
static double paired_512(int reps, double *tier_best, double *dgemm_best)
{
	double *r = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *r), med;

	if (!r)
		exit(1);
	*tier_best = *dgemm_best = 1e300;
	for (int i = 0; i < reps; i++) {
		double tt = time_domain(USC_DOMAIN_TIER, 512, 1);
		double td = time_dgemm2(512, 1);

		*tier_best = fmin(*tier_best, tt);
		*dgemm_best = fmin(*dgemm_best, td);
		r[i] = tt / td;
	}
	qsort(r, (size_t)reps, sizeof *r, cmp_double);
	med = reps % 2 ? r[reps / 2] : (r[reps / 2 - 1] + r[reps / 2]) / 2;
	free(r);
	return med;
}

int main(int argc, char **argv)
{
	long sizes[4] = {64, 128, 256, 512};
	int nsizes = 3, reps = 3;
	int tier_only = 0, cold = 0;
	double ratio512;
	double t512_dgemm, t512_tier, fit = 0;
	int nfit = 0;

	/*
	 * Warm memory on both sides: the dgemm pair reuses arrays allocated
	 * and touched before it is timed, so the evaluator's arrays should
	 * not go back to the kernel between repetitions either (glibc would
	 * unmap the large blocks at free and fault fresh zero pages in at
	 * the next run).  --cold keeps glibc's defaults.
	 */
	for (int i = 1; i < argc; i++)
		cold |= !strcmp(argv[i], "--cold");
	if (!cold) {
		mallopt(M_MMAP_THRESHOLD, 1 << 30);
		mallopt(M_TRIM_THRESHOLD, 1 << 30);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cold")) {
			continue;
		} else if (!strcmp(argv[i], "--quick")) {
			nsizes = 1;
			reps = 1;
		} else if (!strcmp(argv[i], "--full")) {
			nsizes = 4;
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			sizes[0] = atol(argv[++i]);
			nsizes = 1;
		} else if (!strcmp(argv[i], "--tier-only")) {
			tier_only = 1;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		}
	}
	printf("certified bf16 matmul n×n×n (f32 accumulation) vs two "
	       "OpenBLAS dgemm, best of %d\n\n", reps);
	printf("%6s %12s %12s %12s %12s %12s %14s %10s\n", "n", "oracle s",
	       "tier s", "2×dgemm s", "oracle/dg", "tier/dg",
	       "oracle ns/fma", "exact");
	t512_dgemm = time_dgemm2(512, reps);
	for (int i = 0; i < nsizes; i++) {
		long n = sizes[i];
		double to = tier_only ? 0 :
			time_domain(USC_DOMAIN_ORACLE, n, n >= 256 ? 1 : reps);
		double tt = time_domain(USC_DOMAIN_TIER, n, reps);
		double ex = last_exact;
		double td = n == 512 ? t512_dgemm : time_dgemm2(n, reps);
		double per = to / ((double)n * n * n);

		printf("%6ld %12.4g %12.4g %12.4g %12.0f %12.1f %14.1f %10.0f\n",
		       n, to, tt, td, to / td, tt / td, per * 1e9, ex);
		fflush(stdout);
		/* The largest measured n is the best predictor of 512. */
		fit = per;
		nfit = (int)n;
	}
	ratio512 = paired_512(reps, &t512_tier, &t512_dgemm);
	printf("\nn = 512: 2×dgemm %.4g s measured; oracle %.4g s %s "
	       "n = %d by n^3; tier %.4g s measured, %.0f of %d elements "
	       "accumulated exactly\n", t512_dgemm,
	       fit * 512.0 * 512.0 * 512.0,
	       nfit == 512 ? "measured at" : "extrapolated from", nfit,
	       t512_tier, last_exact, 512 * 512);
	printf("oracle / 2×dgemm at n = 512: %.0f; tier (the certified path "
	       "check takes) / 2×dgemm: %.1f (goal <= 3; the median of %d "
	       "paired repetitions, memory %s)\n",
	       fit * 512.0 * 512.0 * 512.0 / t512_dgemm, ratio512, reps,
	       cold ? "cold" : "warm");
	return 0;
}
