/*
 * The fast strict reference against the MPFR path on every case of the
 * project's corpora: data/acceptance (both trees), data/examples and the
 * defect corpus data/defects.
 *
 * Each case is checked twice by usc_check_case: once as a user runs it
 * (the fast reference), once with USC_REFERENCE_MPFR=1 (every function of
 * the reference in MPFR, the reference domain as it always was).  Every
 * case of data/examples and data/defects, and one acceptance case in six
 * (every one with USC_TEST_SCALE=2), is checked under the profile its
 * case.json implies, so that classes and verdicts are compared too; the
 * other acceptance cases without a profile (the envelope, which does not
 * depend on the reference, is most of a classified check's time).  The expected values are those of
 * the MPFR path, which test_eval_reference holds to MPFR called directly.
 * Every output's reference encodings must agree bit for bit, and with
 * them every figure the check derives: the summaries against the oracle
 * and the reference, the bit-exact and undecided counts, the worst
 * elements, the classes and the verdict.  Every element of every case is
 * compared (no sample: the corpora are small).  The fast run must also
 * have met the functions it counts: a corpus without any would prove
 * nothing about the function path.
 *
 * The source tree comes from USC_SOURCE_DIR (set by ctest).  With
 * USC_REFERENCE_CORPUS=per-kernel (the sanitizer builds set it, where a
 * check costs ten times more) only the first case of each kernel's
 * directory runs: every kernel of every corpus still, one case each.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
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
#include "ulpscope/tensor.h"

#define MAX_CASES 4096
#define PATH_SIZE 1024

static char *cases[MAX_CASES];
static size_t ncases;

/* The directory above a case (its kernel's), for per-kernel sampling. */
static bool same_parent(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');

	return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

static bool is_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Every directory below dir (at most depth levels) holding kernel.hlo. */
static void collect(const char *dir, int depth)
{
	char path[PATH_SIZE];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof path, "%s/kernel.hlo", dir);
	if (is_file(path)) {
		assert_true(ncases < MAX_CASES);
		cases[ncases] = strdup(dir);
		assert_non_null(cases[ncases]);
		ncases++;
		return;
	}
	if (depth == 0 || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
			collect(path, depth - 1);
	}
	closedir(d);
}

static usc_check_report *check(const char *dir, bool mpfr, bool classify)
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *r = NULL;
	usc_error err;

	req.no_profile = !classify;
	if (mpfr)
		setenv("USC_REFERENCE_MPFR", "1", 1);
	else
		unsetenv("USC_REFERENCE_MPFR");
	if (usc_check_case(dir, &req, &r, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	unsetenv("USC_REFERENCE_MPFR");
	return r;
}

/* Two doubles alike bit for bit (NaN figures included). */
static bool same_d(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static void same_stats(const char *dir, size_t i, const char *what,
		       const usc_results_stats *a, const usc_results_stats *b)
{
	if (memcmp(a, b, sizeof *a) != 0)
		fail_msg("%s output %zu: %s figures differ (max |ulp| %g vs "
			 "%g, median %g vs %g)",
			 dir, i, what, a->max_abs, b->max_abs, a->median_abs,
			 b->median_abs);
}

static void compare(const char *dir, const usc_check_report *f,
		    const usc_check_report *m)
{
	assert_int_equal(f->output_count, m->output_count);
	if (f->classified != m->classified || f->verdict != m->verdict ||
	    strcmp(f->reason, m->reason) != 0)
		fail_msg("%s: verdict differs: '%s' vs '%s'", dir, f->reason,
			 m->reason);
	assert_int_equal(f->oracle_precision, m->oracle_precision);
	for (size_t i = 0; i < f->output_count; i++) {
		const usc_check_output *a = &f->outputs[i], *b = &m->outputs[i];
		uint64_t n = usc_tensor_count(a->reference);

		assert_int_equal(n, usc_tensor_count(b->reference));
		for (uint64_t j = 0; j < n; j++) {
			uint64_t x = 0, y = 0;

			usc_tensor_get_bits(a->reference, j, &x);
			usc_tensor_get_bits(b->reference, j, &y);
			if (x != y)
				fail_msg("%s output %zu element %" PRIu64
					 ": fast reference 0x%" PRIx64
					 ", MPFR path 0x%" PRIx64,
					 dir, i, j, x, y);
			if (!same_d(a->ulp_reference[j], b->ulp_reference[j]))
				fail_msg("%s output %zu element %" PRIu64
					 ": ulp vs reference differs",
					 dir, i, j);
		}
		same_stats(dir, i, "oracle", &a->summary.oracle,
			   &b->summary.oracle);
		same_stats(dir, i, "reference", &a->summary.reference,
			   &b->summary.reference);
		assert_int_equal(a->summary.bit_exact_count,
				 b->summary.bit_exact_count);
		assert_int_equal(a->summary.undecided_count,
				 b->summary.undecided_count);
		assert_int_equal(a->worst_count, b->worst_count);
		for (size_t w = 0; w < a->worst_count; w++) {
			assert_int_equal(a->worst[w].index, b->worst[w].index);
			assert_int_equal(a->worst[w].reference_bits,
					 b->worst[w].reference_bits);
			assert_int_equal(a->worst[w].cls, b->worst[w].cls);
		}
		if (memcmp(&a->counts, &b->counts, sizeof a->counts) != 0)
			fail_msg("%s output %zu: class counts differ", dir, i);
	}
}

static void test_corpus_fast_equals_mpfr(void **state)
{
	const char *src = usc_test_src_dir();
	const char *roots[] = {"data/acceptance", "data/examples",
			       "data/defects"};
	uint64_t functions = 0, escalated = 0;
	size_t per_root[3], checked = 0;
	bool per_kernel;
	int scale;

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		char dir[PATH_SIZE];
		size_t before = ncases;

		snprintf(dir, sizeof dir, "%s/%s", src, roots[k]);
		collect(dir, 4);
		per_root[k] = ncases - before;
		/* Each corpus must be there: an empty walk proves nothing. */
		if (per_root[k] == 0)
			fail_msg("no case found under %s", dir);
	}
	qsort(cases, ncases, sizeof *cases, usc_test_cmp_str);
	scale = getenv("USC_TEST_SCALE") ? atoi(getenv("USC_TEST_SCALE")) : 1;
	per_kernel = getenv("USC_REFERENCE_CORPUS") &&
		     strcmp(getenv("USC_REFERENCE_CORPUS"), "per-kernel") == 0;
	for (size_t c = 0; c < ncases; c++) {
		bool classify = scale >= 2 || c % 6 == 0 ||
				!strstr(cases[c], "/data/acceptance/");
		usc_check_report *f, *m;

		if (per_kernel && c > 0 && same_parent(cases[c], cases[c - 1]))
			continue;
		checked++;
		f = check(cases[c], false, classify);
		m = check(cases[c], true, classify);

		compare(cases[c], f, m);
		assert_int_equal(m->reference_functions, 0);
		functions += f->reference_functions;
		escalated += f->reference_escalated;
		usc_check_report_destroy(f);
		usc_check_report_destroy(m);
	}
	for (size_t c = 0; c < ncases; c++)
		free(cases[c]);
	printf("cases: %zu acceptance, %zu examples, %zu defects; %zu "
	       "checked; reference functions %" PRIu64 ", escalated to MPFR "
	       "%" PRIu64 "\n",
	       per_root[0], per_root[1], per_root[2], checked, functions,
	       escalated);
	assert_true(functions > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_fast_equals_mpfr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
