/*
 * The result file written a piece at a time (usc_results_begin_kernel,
 * usc_results_write_rows, usc_results_end_kernel) against the same
 * outputs written whole by usc_results_add_kernel: every dataset and
 * figure read back must be equal.  The pieces are chosen to cut across
 * rows of the rank-3 outputs (5 of bf16 [2,3,4], 97 of f32 [8,16,10]), so
 * that each range is a union of several boxes.  Then the misuses: rows
 * past an output's end, an end with rows missing, another kernel or a
 * close while one is begun.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "results/results_fixture.h"

/*
 * Writes the first `upto` elements (0: all) of output o of the fixture in
 * pieces of `piece` elements.
 */
static void write_pieces(usc_results *w, fixture *fx, size_t output, int o,
			 size_t piece, bool classified, uint64_t upto)
{
	uint64_t n = upto ? upto : usc_tensor_count(fx->device[o]);
	size_t width = usc_format_of(fixture_types[o])->container_bytes;
	usc_error err;

	for (uint64_t k = 0; k < n; k += piece) {
		size_t m = n - k < piece ? (size_t)(n - k) : piece;
		usc_results_rows r;

		memset(&r, 0, sizeof r);
		r.reference = (const unsigned char *)usc_tensor_cdata(
				      fx->reference[o]) +
			      k * width;
		r.oracle_mid = fx->mid[o] + k;
		r.oracle_rad = fx->rad[o] + k;
		r.ulp_error_oracle = fx->eo[o] + k;
		r.ulp_error_reference = fx->er[o] + k;
		r.undecided = fx->und[o] + k;
		if (classified) {
			r.envelope_lo = fx->env_lo + k;
			r.envelope_hi = fx->env_hi + k;
			r.envelope_flags = fx->env_flags + k;
			r.cls = fx->cls + k;
		}
		if (usc_results_write_rows(w, output, m, &r, &err) != USC_OK)
			fail_msg("%s", err.message);
	}
}

/* Kernel "whole" / "pieces": output 0 of the fixture, classified. */
static usc_results_kernel classified_kernel(fixture *fx, const char *name)
{
	usc_results_kernel k = fx->k1;

	k.name = name;
	k.output_count = 1;
	/* One output of the fixture's two-output module: without its HLO
	 * the reader has nothing to hold the single output against. */
	k.hlo_text = NULL;
	k.computation = NULL;
	k.verdict = "defect";
	k.verdict_reason = "defect: a reason";
	k.profile = "strict";
	return k;
}

static void same_outputs(usc_results_reader *r, const char *a, const char *b,
			 size_t outputs)
{
	usc_results_kernel_info *ka = NULL, *kb = NULL;
	usc_error err;

	assert_int_equal(usc_results_read_kernel(r, a, &ka, &err), USC_OK);
	assert_int_equal(usc_results_read_kernel(r, b, &kb, &err), USC_OK);
	assert_string_equal(ka->verdict, kb->verdict);
	assert_string_equal(ka->verdict_reason, kb->verdict_reason);
	assert_string_equal(ka->profile, kb->profile);
	assert_string_equal(ka->hlo_text, kb->hlo_text);
	assert_int_equal(ka->oracle_precision_max, kb->oracle_precision_max);
	assert_int_equal(ka->element_count, kb->element_count);
	assert_int_equal(ka->op_count, kb->op_count);
	for (size_t i = 0; i < outputs; i++) {
		usc_results_output_data *x = NULL, *y = NULL;
		size_t n;

		assert_int_equal(usc_results_read_output(r, a, i, &x, &err),
				 USC_OK);
		assert_int_equal(usc_results_read_output(r, b, i, &y, &err),
				 USC_OK);
		n = (size_t)x->count;
		assert_true(usc_tensor_equal(x->device, y->device));
		assert_true(usc_tensor_equal(x->reference, y->reference));
		assert_memory_equal(x->oracle_mid, y->oracle_mid, n * 8);
		assert_memory_equal(x->oracle_rad, y->oracle_rad, n * 8);
		assert_memory_equal(x->ulp_error_oracle, y->ulp_error_oracle,
				    n * 8);
		assert_memory_equal(x->ulp_error_reference,
				    y->ulp_error_reference, n * 8);
		assert_memory_equal(x->undecided, y->undecided, n);
		assert_true((x->cls == NULL) == (y->cls == NULL));
		if (x->cls) {
			assert_memory_equal(x->envelope_lo, y->envelope_lo,
					    n * 8);
			assert_memory_equal(x->envelope_hi, y->envelope_hi,
					    n * 8);
			assert_memory_equal(x->envelope_flags,
					    y->envelope_flags, n);
			assert_memory_equal(x->cls, y->cls, n);
		}
		assert_memory_equal(&x->summary, &y->summary,
				    sizeof x->summary);
		usc_results_output_data_free(x);
		usc_results_output_data_free(y);
	}
	usc_results_kernel_info_free(ka);
	usc_results_kernel_info_free(kb);
}

static void test_pieces_equal_whole(void **state)
{
	char dir[512], path[600];
	fixture fx;
	usc_results *w = NULL;
	usc_results_reader *r = NULL;
	usc_results_kernel kw, kp, k2;
	usc_results_summary sum[2];
	usc_classify_counts counts;
	usc_results_kernel_end e;
	usc_error err;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	fixture_scratch(dir, sizeof dir);
	assert_true(dir[0]);
	snprintf(path, sizeof path, "%s/r.h5", dir);
	kw = classified_kernel(&fx, "whole");
	kp = classified_kernel(&fx, "pieces");
	k2 = fx.k2;
	k2.name = "k2_pieces";
	assert_int_equal(usc_results_create(path, &w, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &kw, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &fx.k2, &err), USC_OK);
	/* Output 0, classified, in pieces of 5. */
	assert_int_equal(usc_results_begin_kernel(w, &kp, true, &err), USC_OK);
	write_pieces(w, &fx, 0, 0, 5, true, 0);
	assert_int_equal(usc_results_summarize(&fx.out[0], &sum[0], &err),
			 USC_OK);
	memset(&counts, 0, sizeof counts);
	for (uint64_t i = 0; i < 24; i++)
		counts.n[fx.cls[i]]++;
	memset(&e, 0, sizeof e);
	e.oracle_precision_max = kp.oracle_precision_max;
	e.verdict = kp.verdict;
	e.verdict_reason = kp.verdict_reason;
	e.profile = kp.profile;
	e.summaries = sum;
	e.class_counts = &counts;
	assert_int_equal(usc_results_end_kernel(w, &e, &err), USC_OK);
	/* The f32 [8,16,10] output, not classified, in pieces of 97. */
	assert_int_equal(usc_results_begin_kernel(w, &k2, false, &err), USC_OK);
	write_pieces(w, &fx, 0, 2, 97, false, 0);
	assert_int_equal(usc_results_summarize(&fx.out[2], &sum[1], &err),
			 USC_OK);
	memset(&e, 0, sizeof e);
	e.oracle_precision_max = k2.oracle_precision_max;
	e.verdict = k2.verdict;
	e.summaries = &sum[1];
	assert_int_equal(usc_results_end_kernel(w, &e, &err), USC_OK);
	assert_int_equal(usc_results_close(w, &err), USC_OK);
	assert_int_equal(usc_results_open(path, &r, &err), USC_OK);
	same_outputs(r, "whole", "pieces", 1);
	same_outputs(r, "k2", "k2_pieces", 1);
	usc_results_reader_close(r);
	unlink(path);
	rmdir(dir);
	fixture_free(&fx);
}

static void test_misuse(void **state)
{
	char dir[512], path[600];
	fixture fx;
	usc_results *w = NULL;
	usc_results_reader *r = NULL;
	usc_results_kernel k;
	usc_results_summary sum;
	usc_results_kernel_end e;
	usc_results_rows rows;
	usc_error err;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	fixture_scratch(dir, sizeof dir);
	assert_true(dir[0]);
	snprintf(path, sizeof path, "%s/m.h5", dir);
	k = fx.k2;
	assert_int_equal(usc_results_create(path, &w, &err), USC_OK);
	/* Rows with no kernel begun. */
	memset(&rows, 0, sizeof rows);
	assert_int_equal(usc_results_write_rows(w, 0, 1, &rows, &err),
			 USC_EINVAL);
	assert_non_null(strstr(err.message, "no kernel is being written"));
	/* An end with rows missing names the output and the count. */
	assert_int_equal(usc_results_begin_kernel(w, &k, false, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &fx.k1, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "is still being written"));
	write_pieces(w, &fx, 0, 2, 500, false, 1000);
	assert_int_equal(usc_results_summarize(&fx.out[2], &sum, &err),
			 USC_OK);
	memset(&e, 0, sizeof e);
	e.summaries = &sum;
	assert_int_equal(usc_results_end_kernel(w, &e, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "1000 of its 1280 elements"));
	/* The kernel is gone again, and the writer goes on. */
	assert_int_equal(usc_results_begin_kernel(w, &k, false, &err), USC_OK);
	write_pieces(w, &fx, 0, 2, 500, false, 1000);
	/* Past the end: 280 are left. */
	rows.reference = usc_tensor_cdata(fx.reference[2]);
	rows.oracle_mid = rows.oracle_rad = fx.mid[2];
	rows.ulp_error_oracle = rows.ulp_error_reference = fx.eo[2];
	rows.undecided = fx.und[2];
	assert_int_equal(usc_results_write_rows(w, 0, 281, &rows, &err),
			 USC_ERANGE);
	assert_non_null(strstr(err.message, "281 more elements given, 280 "
					    "left"));
	/* A close with a kernel begun and not ended writes nothing. */
	assert_int_equal(usc_results_begin_kernel(w, &k, false, &err), USC_OK);
	assert_int_equal(usc_results_close(w, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "was begun and not ended"));
	assert_int_not_equal(usc_results_open(path, &r, &err), USC_OK);
	assert_int_not_equal(access(path, F_OK), 0);
	rmdir(dir);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces_equal_whole),
		cmocka_unit_test(test_misuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
