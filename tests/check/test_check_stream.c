/*
 * A streamed check (usc_check_request.stream) against the whole one, on
 * every captured case under data/examples/.
 *
 * Streaming changes how the figures are made, never what they are: each
 * piece of the output is evaluated, decided, classified and written on
 * its own, the summaries come from the statistics accumulator and the
 * worst list is merged piece by piece.  So every figure of the report
 * (summaries bit for bit, tier and oracle counts, the worst lists, the
 * class counts, the verdict and its reason, the oracle's precision) and
 * every dataset and attribute of the result file must equal the whole
 * check's.  Small tiles (64 elements) and pieces (128, and 1000, which
 * rounds down to 960 and leaves a short last piece) make the 1024-element
 * loop kernels stream in many pieces, and the kernels that split into
 * rows (softmax, the norms, Adam's three outputs, fp8 quantize) stream a
 * block of one to a few rows at a time, with a shorter last block where
 * the rows do not divide; the others (a dot, a slice, a gather) must be
 * checked whole either way.  The oracle may evaluate fewer elements when
 * streaming (only the blocks that hold an undecided element go to a
 * higher precision), never more.  Three
 * settings run per case: the case's own profile, the strict profile
 * (under which most cases are defects: the worst element and the reason
 * then come from the defect ordering), and no profile with the tier off
 * (every element decided by the oracle, piece by piece).
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

static void same_report(const usc_check_report *w, const usc_check_report *s)
{
	assert_false(w->streamed);
	assert_int_equal(w->output_count, s->output_count);
	assert_int_equal(w->oracle_precision, s->oracle_precision);
	assert_int_equal(w->classified, s->classified);
	if (w->classified) {
		assert_int_equal(w->verdict, s->verdict);
		assert_string_equal(w->reason, s->reason);
	}
	for (size_t i = 0; i < w->output_count; i++) {
		const usc_check_output *a = &w->outputs[i], *b = &s->outputs[i];

		assert_memory_equal(&a->summary, &b->summary,
				    sizeof a->summary);
		assert_int_equal(a->tier_decided, b->tier_decided);
		assert_true(b->oracle_elements <= a->oracle_elements);
		assert_true((a->oracle_elements == 0) ==
			    (b->oracle_elements == 0));
		assert_memory_equal(&a->counts, &b->counts, sizeof a->counts);
		assert_int_equal(a->worst_count, b->worst_count);
		for (size_t k = 0; k < a->worst_count; k++)
			same_element(&a->worst[k], &b->worst[k]);
		if (s->streamed) {
			assert_null(b->reference);
			assert_null(b->ulp_oracle);
			assert_null(b->cls);
		}
	}
}

/* One case in one setting: whole and streamed; whether it streamed. */
static bool run_pair(const char *dir, const usc_check_request *base,
		     size_t piece)
{
	char pw[] = "/tmp/usc_stream_w_XXXXXX", ps[] = "/tmp/usc_stream_s_XXXXXX";
	usc_check_request q = *base;
	usc_check_report *w = NULL, *s = NULL;
	usc_error err;
	int fw = mkstemp(pw), fs = mkstemp(ps);
	bool streamed;

	assert_true(fw >= 0 && fs >= 0);
	close(fw);
	close(fs);
	q.tile_elements = 64;
	q.results_path = pw;
	if (usc_check_case(dir, &q, &w, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	q.stream = true;
	q.stream_piece = piece;
	q.results_path = ps;
	if (usc_check_case(dir, &q, &s, &err) != USC_OK)
		fail_msg("%s (streamed): %s", dir, err.message);
	same_report(w, s);
	same_file(pw, ps);
	streamed = s->streamed;
	/* A streamed report has nothing for usc_check_write. */
	if (streamed)
		assert_int_equal(usc_check_write(s, pw, false, &err),
				 USC_EINVAL);
	usc_check_report_destroy(w);
	usc_check_report_destroy(s);
	unlink(pw);
	unlink(ps);
	return streamed;
}

/* What test_examples counts over the cases. */
typedef struct walk_ctx {
	usc_profile strict;
	size_t streamed;
} walk_ctx;

/* One case in the three settings. */
static void one_case(const char *dir, const char *kernel, const char *name,
		     void *ctx)
{
	walk_ctx *w = ctx;
	usc_check_request q = usc_check_request_default();
	bool st;

	q.worst = 7;
	st = run_pair(dir, &q, 128);
	q.profile = &w->strict;
	run_pair(dir, &q, 128);
	q.profile = NULL;
	q.no_profile = true;
	q.strict_oracle = true;
	run_pair(dir, &q, 1000);
	w->streamed += st;
	printf("%s/%-30s %s\n", kernel, name, st ? "streamed" : "whole");
}

static void test_examples(void **state)
{
	walk_ctx w;
	size_t cases;
	usc_error err;

	(void)state;
	memset(&w, 0, sizeof w);
	assert_int_equal(usc_profile_builtin("strict", &w.strict, &err),
			 USC_OK);
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
