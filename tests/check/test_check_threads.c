/*
 * A streamed check on several threads (usc_check_request.threads, `check
 * -j N`) against the same check on one, on every captured case under
 * data/examples/.
 *
 * The threads evaluate whole pieces and the calling thread folds them in
 * order (docs/check.md, "Threads"), so nothing may differ: every figure
 * of the report (summaries bit for bit, the tier's and the oracle's
 * element counts, the reference's and the envelope's escalation counts,
 * the worst lists, the class counts, the verdict and its reason, the
 * oracle's precision) and every dataset and attribute of the result file.
 * Small tiles (64 elements) and pieces (128; 1000, which leaves a short
 * last piece) make the 1024-element loop kernels stream in 8 to 16
 * pieces, and the kernels that split into rows (softmax, the norms,
 * Adam's three outputs, fp8 quantize) a block of one to a few rows at a
 * time; 2 and 3 threads (3 does not divide the pieces) are each compared
 * with 1, and with the case's profile also 9 threads, more than there
 * are pieces (every run takes at most one piece, and the ring of slots
 * holds every piece at once).  Settings: the case's own profile, and no
 * profile with the tier off (every element through the oracle on the
 * worker threads, which exercises MPFR there).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ulpscope/check.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"

#include "check/examples_walk.h"
#include "check/same_results.h"

static void same_element(const usc_check_element *a,
			 const usc_check_element *b)
{
	assert_int_equal(a->index, b->index);
	assert_int_equal(a->device_bits, b->device_bits);
	assert_int_equal(a->reference_bits, b->reference_bits);
	assert_memory_equal(&a->oracle_mid, &b->oracle_mid, sizeof(double));
	assert_memory_equal(&a->oracle_rad, &b->oracle_rad, sizeof(double));
	assert_memory_equal(&a->ulp_oracle, &b->ulp_oracle, sizeof(double));
	assert_memory_equal(&a->ulp_reference, &b->ulp_reference,
			    sizeof(double));
	assert_int_equal(a->undecided, b->undecided);
	assert_int_equal(a->cls, b->cls);
	assert_int_equal(a->envelope.flags, b->envelope.flags);
	if (a->envelope.flags & USC_ENV_FINITE) {
		assert_true(a->envelope.lo == b->envelope.lo);
		assert_true(a->envelope.hi == b->envelope.hi);
	}
	assert_memory_equal(&a->outside_ulps, &b->outside_ulps,
			    sizeof(double));
}

/* Two streamed reports, one thread against several: equal in everything. */
static void same_report(const usc_check_report *a, const usc_check_report *b)
{
	assert_int_equal(a->streamed, b->streamed);
	assert_int_equal(a->output_count, b->output_count);
	assert_int_equal(a->oracle_precision, b->oracle_precision);
	assert_int_equal(a->reference_functions, b->reference_functions);
	assert_int_equal(a->reference_escalated, b->reference_escalated);
	assert_int_equal(a->envelope_fast, b->envelope_fast);
	assert_int_equal(a->envelope_escalated, b->envelope_escalated);
	assert_int_equal(a->classified, b->classified);
	assert_int_equal(a->verdict, b->verdict);
	assert_string_equal(a->reason, b->reason);
	for (size_t i = 0; i < a->output_count; i++) {
		const usc_check_output *x = &a->outputs[i], *y = &b->outputs[i];

		assert_memory_equal(&x->summary, &y->summary,
				    sizeof x->summary);
		assert_int_equal(x->tier_decided, y->tier_decided);
		assert_int_equal(x->oracle_elements, y->oracle_elements);
		assert_memory_equal(&x->counts, &y->counts, sizeof x->counts);
		assert_int_equal(x->worst_count, y->worst_count);
		for (size_t k = 0; k < x->worst_count; k++)
			same_element(&x->worst[k], &y->worst[k]);
	}
}

/*
 * One case in one setting: streamed on 1 thread and on each of the nt
 * thread counts in ts; whether it streamed.
 */
static bool run_threads(const char *dir, const usc_check_request *base,
			size_t piece, const size_t *ts, size_t nt)
{
	char p1[] = "/tmp/usc_threads_1_XXXXXX";
	usc_check_request q = *base;
	usc_check_report *one = NULL;
	usc_error err;
	int fd = mkstemp(p1);
	bool streamed;

	assert_true(fd >= 0);
	close(fd);
	q.tile_elements = 64;
	q.stream = true;
	q.stream_piece = piece;
	q.results_path = p1;
	q.results_force = true;
	q.threads = 1;
	if (usc_check_case(dir, &q, &one, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	for (size_t i = 0; i < nt; i++) {
		char pn[] = "/tmp/usc_threads_n_XXXXXX";
		size_t t = ts[i];
		usc_check_report *many = NULL;

		fd = mkstemp(pn);
		assert_true(fd >= 0);
		close(fd);
		q.threads = t;
		q.results_path = pn;
		if (usc_check_case(dir, &q, &many, &err) != USC_OK)
			fail_msg("%s (%zu threads): %s", dir, t, err.message);
		same_report(one, many);
		same_file(p1, pn);
		usc_check_report_destroy(many);
		unlink(pn);
	}
	streamed = one->streamed;
	usc_check_report_destroy(one);
	unlink(p1);
	return streamed;
}

/* What test_examples counts over the cases. */
typedef struct walk_ctx {
	size_t streamed;
} walk_ctx;

static void one_case(const char *dir, const char *kernel, const char *name,
		     void *ctx)
{
	static const size_t profiled[] = {2, 3, 9}, plain[] = {2, 3};
	walk_ctx *w = ctx;
	usc_check_request q = usc_check_request_default();
	bool st;

	q.worst = 7;
	st = run_threads(dir, &q, 128, profiled, 3);
	q.no_profile = true;
	q.strict_oracle = true;
	run_threads(dir, &q, 1000, plain, 2);
	w->streamed += st;
	printf("%s/%-30s %s\n", kernel, name, st ? "streamed" : "whole");
}

static void test_examples(void **state)
{
	walk_ctx w;
	size_t cases;

	(void)state;
	memset(&w, 0, sizeof w);
	cases = for_each_example(one_case, &w);
	printf("%zu cases, %zu streamed\n", cases, w.streamed);
	/* The loop kernels and those that split into rows must stream. */
	assert_true(cases >= 20);
	assert_true(w.streamed >= 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
