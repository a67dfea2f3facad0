/*
 * The signature search against one check of the same case (issue 15:
 * "signature on the acceptance corpus: median time per case no more than
 * 10x one check of the same case").
 *
 * For every case directory under data/acceptance/ (PLATFORM/KERNEL/CASE/),
 * or every K-th with --every K, in the same run, back to back:
 *
 *   check      usc_check_case with the case's profile, streamed, as
 *              `ulpscope check CASE_DIR` runs it;
 *   signature  usc_signature_case with the defaults, as `ulpscope
 *              signature CASE_DIR` runs it.
 *
 * Times are CPU time of the one thread (the machines are shared).  Prints
 * the medians of the two times, the median and the largest of the cases'
 * ratios signature / check (the goal: the median <= 10), and per kernel
 * the median ratio and the median number of mutants evaluated (the search
 * evaluates none where the check finds no defect to explain).
 *
 * Usage: bench_signature [--every K] [--quick] [ROOT]
 *   --quick: every 16th case.  ROOT defaults to the source tree's
 *   data/acceptance.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/check.h"
#include "ulpscope/signature.h"

#include "bench_kernels.h"

#ifndef USC_SOURCE_DIR
#define USC_SOURCE_DIR "."
#endif

#define MAX_CASES 4096

typedef struct one_case {
	char kernel[128];
	double check, signature;
	size_t evaluated; /* mutants the search evaluated (0: no defect) */
} one_case;

static one_case cases[MAX_CASES];
static size_t ncases, seen;
static size_t every = 1;

static bool is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_case(const char *p)
{
	char f[4096];
	struct stat sb;

	if ((size_t)snprintf(f, sizeof f, "%s/kernel.hlo", p) >= sizeof f)
		return false;
	return stat(f, &sb) == 0;
}

static void time_case(const char *dir, const char *kernel)
{
	usc_check_request q = usc_check_request_default();
	usc_check_report *r;
	usc_signature_report *s;
	usc_error err;
	one_case *c = &cases[ncases];
	double t;

	q.stream = true;
	t = bench_now();
	if (usc_check_case(dir, &q, &r, &err) != USC_OK) {
		fprintf(stderr, "%s: check: %s\n", dir, err.message);
		return;
	}
	c->check = bench_now() - t;
	usc_check_report_destroy(r);
	t = bench_now();
	if (usc_signature_case(dir, NULL, &s, &err) != USC_OK) {
		fprintf(stderr, "%s: signature: %s\n", dir, err.message);
		return;
	}
	c->signature = bench_now() - t;
	c->evaluated = s->evaluated;
	usc_signature_report_destroy(s);
	snprintf(c->kernel, sizeof c->kernel, "%s", kernel);
	ncases++;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of a directory (malloc'ed names). */
static size_t list_dir(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof *v);
			if (!v)
				exit(1);
		}
		v[n++] = strdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_name);
	*out = v;
	return n;
}

/* Walks PATH: a case is timed, a directory is walked (sorted). */
static void walk(const char *path, const char *kernel, int depth)
{
	char **names, sub[4096];
	size_t n;

	if (is_case(path)) {
		if (seen++ % every == 0 && ncases < MAX_CASES)
			time_case(path, kernel);
		return;
	}
	if (depth > 4 || !is_dir(path))
		return;
	n = list_dir(path, &names);
	for (size_t i = 0; i < n; i++) {
		/* The kernel is the folder that holds the cases. */
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path,
				     names[i]) < sizeof sub)
			walk(sub, is_case(sub) ? kernel : names[i],
			     depth + 1);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	const char *root = USC_SOURCE_DIR "/data/acceptance";
	static double ratio[MAX_CASES], tc[MAX_CASES], ts[MAX_CASES];
	double worst = 0;
	size_t at = 0, searched = 0;

	bench_name = "bench_signature";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--every") && i + 1 < argc)
			every = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			every = 16;
		else
			root = argv[i];
	}
	if (every < 1)
		every = 1;
	walk(root, "", 0);
	if (ncases == 0) {
		fprintf(stderr, "bench_signature: no case under %s\n", root);
		return 1;
	}
	printf("signature against one check of the same case, %zu cases "
	       "(every %zu of %zu under %s), thread CPU time\n\n", ncases,
	       every, seen, root);
	printf("%-32s %6s %10s %10s %8s %9s\n", "kernel", "cases", "check/s",
	       "sig/s", "sig/chk", "mutants");
	/* Per kernel (the cases come kernel by kernel). */
	for (size_t i = 0; i <= ncases; i++) {
		if (i < ncases && i > at &&
		    !strcmp(cases[i].kernel, cases[at].kernel))
			continue;
		if (i > at) {
			size_t k = i - at;
			double r[MAX_CASES], a[MAX_CASES], b[MAX_CASES];
			double e[MAX_CASES];

			for (size_t j = 0; j < k; j++) {
				a[j] = cases[at + j].check;
				b[j] = cases[at + j].signature;
				r[j] = b[j] / a[j];
				e[j] = (double)cases[at + j].evaluated;
			}
			printf("%-32s %6zu %10.4f %10.4f %8.1f %9.0f\n",
			       cases[at].kernel, k, bench_median(a, (int)k),
			       bench_median(b, (int)k),
			       bench_median(r, (int)k),
			       bench_median(e, (int)k));
		}
		at = i;
	}
	for (size_t i = 0; i < ncases; i++) {
		tc[i] = cases[i].check;
		ts[i] = cases[i].signature;
		ratio[i] = ts[i] / tc[i];
		if (ratio[i] > worst)
			worst = ratio[i];
		searched += cases[i].evaluated > 0;
	}
	printf("\nmedian check: %.4f s, median signature: %.4f s per case\n",
	       bench_median(tc, (int)ncases), bench_median(ts, (int)ncases));
	printf("signature / check per case: median %.1f (issue 15 goal <= "
	       "10), largest %.1f\n", bench_median(ratio, (int)ncases),
	       worst);
	printf("cases whose search evaluated mutants (a defect to explain): "
	       "%zu of %zu; mutants: median per kernel above\n", searched,
	       ncases);
	return 0;
}
