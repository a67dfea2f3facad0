/*
 * Comparing two result files of one kernel, dataset by dataset and figure
 * by figure, for the tests that require two ways of running a check (one
 * piece or many, one thread or several) to write the same file.  Include
 * after <cmocka.h>.
 */
#ifndef USC_TESTS_SAME_RESULTS_H
#define USC_TESTS_SAME_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/results.h"

static void same_array(const void *a, const void *b, size_t bytes)
{
	assert_true((a == NULL) == (b == NULL));
	if (a)
		assert_memory_equal(a, b, bytes);
}

/* Every dataset and figure of the two files' one kernel. */
static void same_file(const char *pw, const char *ps)
{
	usc_results_reader *rw = NULL, *rs = NULL;
	usc_results_kernel_info *kw = NULL, *ks = NULL;
	usc_error err;

	assert_int_equal(usc_results_open(pw, &rw, &err), USC_OK);
	assert_int_equal(usc_results_open(ps, &rs, &err), USC_OK);
	assert_int_equal(usc_results_kernel_count(rs), 1);
	assert_int_equal(usc_results_read_kernel(
				 rw, usc_results_kernel_name(rw, 0), &kw, &err),
			 USC_OK);
	assert_int_equal(usc_results_read_kernel(
				 rs, usc_results_kernel_name(rs, 0), &ks, &err),
			 USC_OK);
	assert_string_equal(kw->name, ks->name);
	assert_string_equal(kw->verdict, ks->verdict);
	assert_string_equal(kw->verdict_reason, ks->verdict_reason);
	assert_string_equal(kw->profile, ks->profile);
	assert_string_equal(kw->hlo_text, ks->hlo_text);
	assert_int_equal(kw->oracle_precision_max, ks->oracle_precision_max);
	assert_int_equal(kw->element_count, ks->element_count);
	assert_int_equal(kw->output_count, ks->output_count);
	assert_int_equal(kw->op_count, ks->op_count);
	for (size_t i = 0; i < kw->output_count; i++) {
		usc_results_output_data *a = NULL, *b = NULL;
		size_t n;

		assert_int_equal(usc_results_read_output(rw, kw->name, i, &a,
							 &err),
				 USC_OK);
		assert_int_equal(usc_results_read_output(rs, ks->name, i, &b,
							 &err),
				 USC_OK);
		n = (size_t)a->count;
		assert_int_equal(a->count, b->count);
		assert_true(usc_tensor_equal(a->device, b->device));
		assert_true(usc_tensor_equal(a->reference, b->reference));
		same_array(a->oracle_mid, b->oracle_mid, n * sizeof(double));
		same_array(a->oracle_rad, b->oracle_rad, n * sizeof(double));
		same_array(a->ulp_error_oracle, b->ulp_error_oracle,
			   n * sizeof(double));
		same_array(a->ulp_error_reference, b->ulp_error_reference,
			   n * sizeof(double));
		same_array(a->undecided, b->undecided, n);
		same_array(a->envelope_lo, b->envelope_lo, n * sizeof(double));
		same_array(a->envelope_hi, b->envelope_hi, n * sizeof(double));
		same_array(a->envelope_flags, b->envelope_flags, n);
		same_array(a->cls, b->cls, n);
		assert_memory_equal(&a->summary, &b->summary,
				    sizeof a->summary);
		usc_results_output_data_free(a);
		usc_results_output_data_free(b);
	}
	usc_results_kernel_info_free(kw);
	usc_results_kernel_info_free(ks);
	usc_results_reader_close(rw);
	usc_results_reader_close(rs);
}

#endif
