/*
 * The fast envelope against the MPFR one (docs/envelope.md, "The fast
 * path"): every case directory under the roots given on the command line
 * (data/acceptance, data/examples, data/defects) is checked twice under
 * the profile its case.json names, once with the fast path (the default)
 * and once with USC_ENVELOPE=mpfr, and
 *
 *   - every element's fast envelope contains the MPFR one: the same or
 *     more of NaN, +Inf, -Inf and UNKNOWN, a finite interval reaching at
 *     least as far on both sides, NO_SUBNORMAL only where the MPFR
 *     envelope has it;
 *   - the fast envelope is at most FACTOR_MAX times as wide, counted in
 *     values of the output type ((n_fast + 1) / (n_mpfr + 1) for the n
 *     steps between the ends), the factor the docs state;
 *   - every element's class, the class counts and the verdict are the
 *     same.
 *
 * It prints the largest and the mean width factor and the fraction of op
 * elements the fast path escalated to MPFR.  --only NAME keeps the case
 * directories called NAME (one input distribution of every kernel: the
 * sanitizer builds, where all of them take minutes).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "test_util.h"
#include "ulpscope/check.h"
#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
#include "ulpscope/tensor.h"

/* The most a fast envelope may be wider, in values of the output type. */
#define FACTOR_MAX 2.0

static int nroots;
static char **roots;
/* --only NAME: the case directories called NAME only (ASan builds). */
static const char *only;

typedef struct tally {
	size_t cases, skipped, elements, finite;
	double max_factor, sum_fast, sum_mpfr;
	uint64_t fast, escalated;
	char worst_case[512];
} tally;

/* A monotone integer of a float encoding (the ordinal of its value). */
static int64_t ordinal(usc_dtype t, double d)
{
	const usc_format *f = usc_format_of(t);
	uint64_t b = 0, sign;

	(void)usc_encode_double(t, d, NULL, &b, NULL);
	sign = (uint64_t)1 << (f->bits - 1);
	if (b & sign)
		return -(int64_t)(b & (sign - 1));
	return (int64_t)b;
}

static void compare_output(const char *dir, size_t i,
			   const usc_check_output *f,
			   const usc_check_output *m, tally *ty)
{
	usc_dtype t = usc_tensor_dtype(f->device);
	size_t n = (size_t)usc_tensor_count(f->device);
	const unsigned core = USC_ENV_NAN | USC_ENV_POS_INF |
			      USC_ENV_NEG_INF | USC_ENV_FINITE;

	assert_non_null(f->envelope);
	assert_non_null(m->envelope);
	for (size_t j = 0; j < n; j++) {
		const usc_envelope *a = &f->envelope[j], *b = &m->envelope[j];
		bool ok = true;

		ty->elements++;
		if (f->cls[j] != m->cls[j])
			fail_msg("%s: output %zu element %zu: class %s on the "
				 "fast path, %s on the MPFR path",
				 dir, i, j, usc_class_name(f->cls[j]),
				 usc_class_name(m->cls[j]));
		if (a->flags & USC_ENV_UNKNOWN)
			continue;
		if (b->flags & USC_ENV_UNKNOWN)
			ok = false;
		else if ((b->flags & core) & ~(a->flags & core))
			ok = false;
		else if ((b->flags & USC_ENV_FINITE) &&
			 (a->lo > b->lo || a->hi < b->hi))
			ok = false;
		else if ((a->flags & USC_ENV_NO_SUBNORMAL) &&
			 (b->flags & USC_ENV_FINITE) &&
			 !(b->flags & USC_ENV_NO_SUBNORMAL))
			ok = false;
		if (!ok)
			fail_msg("%s: output %zu element %zu: the fast "
				 "envelope [%a, %a] flags %#x does not "
				 "contain the MPFR one [%a, %a] flags %#x",
				 dir, i, j, a->lo, a->hi, a->flags, b->lo,
				 b->hi, b->flags);
		if ((b->flags & USC_ENV_FINITE) && usc_dtype_is_float(t) &&
		    usc_format_of(t)->bits <= 32) {
			double wf = (double)(ordinal(t, a->hi) -
					     ordinal(t, a->lo)),
			       wm = (double)(ordinal(t, b->hi) -
					     ordinal(t, b->lo));
			double r = (wf + 1) / (wm + 1);

			ty->finite++;
			ty->sum_fast += wf + 1;
			ty->sum_mpfr += wm + 1;
			if (r > ty->max_factor) {
				ty->max_factor = r;
				snprintf(ty->worst_case, sizeof ty->worst_case,
					 "%s output %zu element %zu: [%a, %a] "
					 "vs [%a, %a]",
					 dir, i, j, a->lo, a->hi, b->lo, b->hi);
			}
		}
	}
}

static void check_case(const char *dir, tally *ty)
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *f = NULL, *m = NULL;
	usc_error err;

	req.worst = 0;
	unsetenv("USC_ENVELOPE");
	if (usc_check_case(dir, &req, &f, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	if (!f->classified) {
		ty->skipped++;
		usc_check_report_destroy(f);
		return;
	}
	setenv("USC_ENVELOPE", "mpfr", 1);
	if (usc_check_case(dir, &req, &m, &err) != USC_OK)
		fail_msg("%s (MPFR envelope): %s", dir, err.message);
	unsetenv("USC_ENVELOPE");
	ty->cases++;
	ty->fast += f->envelope_fast;
	ty->escalated += f->envelope_escalated;
	assert_int_equal(m->envelope_fast, 0);
	if (f->verdict != m->verdict)
		fail_msg("%s: verdict %s on the fast path, %s on the MPFR "
			 "path", dir, usc_verdict_name(f->verdict),
			 usc_verdict_name(m->verdict));
	assert_int_equal(f->output_count, m->output_count);
	for (size_t i = 0; i < f->output_count; i++) {
		assert_memory_equal(&f->outputs[i].counts,
				    &m->outputs[i].counts,
				    sizeof f->outputs[i].counts);
		compare_output(dir, i, &f->outputs[i], &m->outputs[i], ty);
	}
	usc_check_report_destroy(f);
	usc_check_report_destroy(m);
}

/* Every case directory (one holding kernel.hlo) under dir, in name order. */
static void walk(const char *dir, tally *ty)
{
	char path[4096];
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	snprintf(path, sizeof path, "%s/kernel.hlo", dir);
	if (stat(path, &st) == 0) {
		const char *base = strrchr(dir, '/');

		base = base ? base + 1 : dir;
		if (!only || strcmp(base, only) == 0)
			check_case(dir, ty);
		return;
	}
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		assert_non_null(names);
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, usc_test_cmp_str);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk(path, ty);
		free(names[i]);
	}
	free(names);
}

static void test_corpus(void **state)
{
	tally ty;

	(void)state;
	memset(&ty, 0, sizeof ty);
	for (int r = 0; r < nroots; r++)
		walk(roots[r], &ty);
	printf("  %zu cases (%zu without a profile skipped), %zu elements, "
	       "%zu with a finite MPFR envelope: width factor fast / MPFR "
	       "largest %.3g, mean %.4g (bound %.3g); %llu op elements in "
	       "double, %llu escalated to MPFR (%.3g%%)\n",
	       ty.cases, ty.skipped, ty.elements, ty.finite, ty.max_factor,
	       ty.sum_mpfr > 0 ? ty.sum_fast / ty.sum_mpfr : 0, FACTOR_MAX,
	       (unsigned long long)ty.fast,
	       (unsigned long long)ty.escalated,
	       ty.fast + ty.escalated
		       ? 100.0 * (double)ty.escalated /
				 (double)(ty.fast + ty.escalated)
		       : 0.0);
	if (ty.max_factor > 1)
		printf("  widest: %s\n", ty.worst_case);
	assert_true(ty.cases > 0);
	assert_true(ty.fast > 0);
	assert_true(ty.max_factor <= FACTOR_MAX);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};

	nroots = argc - 1;
	roots = argv + 1;
	if (nroots >= 2 && strcmp(roots[0], "--only") == 0) {
		only = roots[1];
		nroots -= 2;
		roots += 2;
	}
	if (nroots < 1) {
		fprintf(stderr,
			"usage: test_envelope_fast [--only NAME] DIR...\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
