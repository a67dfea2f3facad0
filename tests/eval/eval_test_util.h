/*
 * Helpers of the evaluator tests: parse a module from text, make input
 * tensors from doubles, run, and compare outputs bit for bit against
 * values written by hand (each expected double is exact in its type, so
 * its encoding is the expected bits).
 */
#ifndef USC_EVAL_TEST_UTIL_H
#define USC_EVAL_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

static inline usc_tensor *tmk(usc_dtype t, size_t rank, const int64_t *dims,
			      const double *vals)
{
	usc_tensor *x = NULL;
	usc_error err;
	uint64_t i, n;

	if (usc_tensor_create(t, rank, dims, &x, &err) != USC_OK)
		fail_msg("tensor_create: %s", err.message);
	n = usc_tensor_count(x);
	for (i = 0; i < n; i++) {
		uint64_t bits;

		assert_int_equal(usc_encode_double(t, vals[i], NULL, &bits,
						   NULL),
				 USC_OK);
		assert_int_equal(usc_tensor_set_bits(x, i, bits), USC_OK);
	}
	return x;
}

/* Parses text and creates an evaluator for its first module. */
static inline usc_eval *tcreate(const char *text, usc_hlo_file **file,
				const usc_eval_options *o)
{
	usc_eval *ev = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "<test>", file, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	if (usc_eval_create(usc_hlo_file_module(*file, 0), o, &ev, &err) !=
	    USC_OK)
		fail_msg("eval_create: %s", err.message);
	return ev;
}

/*
 * Output `which` of a run ev must be n values of type t, bit for bit;
 * what (may be "") leads a failure's message, naming the domain say.
 */
static inline void texpect(usc_eval *ev, size_t which, usc_dtype t,
			   size_t n, const double *expect, const char *what)
{
	const usc_tensor *out;
	usc_error err;
	size_t i;

	assert_int_equal(usc_eval_output(ev, which, &out, &err), USC_OK);
	assert_int_equal(usc_tensor_dtype(out), t);
	assert_int_equal(usc_tensor_count(out), n);
	for (i = 0; i < n; i++) {
		uint64_t got, want;

		assert_int_equal(usc_tensor_get_bits(out, i, &got), USC_OK);
		assert_int_equal(usc_encode_double(t, expect[i], NULL, &want,
						   NULL),
				 USC_OK);
		if (got != want)
			fail_msg("%soutput %zu element %zu: got 0x%llx, want "
				 "0x%llx (%g)",
				 what, which, i, (unsigned long long)got,
				 (unsigned long long)want, expect[i]);
	}
}

/*
 * Runs text on the inputs (which it destroys afterwards) and checks
 * output `which` against expected values of type t.
 */
static inline void trun_o(const char *text, usc_tensor **in, size_t nin,
			  size_t which, usc_dtype t, size_t n,
			  const double *expect, const usc_eval_options *o)
{
	usc_hlo_file *f = NULL;
	usc_eval *ev = tcreate(text, &f, o);
	usc_error err;
	size_t i;

	for (i = 0; i < nin; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("bind: %s", err.message);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	texpect(ev, which, t, n, expect, "");
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (i = 0; i < nin; i++)
		usc_tensor_destroy(in[i]);
}

/* Destroys n tensors. */
static inline void tdrop(usc_tensor **t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usc_tensor_destroy(t[i]);
}

static inline void trun(const char *text, usc_tensor **in, size_t nin,
			usc_dtype t, size_t n, const double *expect)
{
	trun_o(text, in, nin, 0, t, n, expect, NULL);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Every evaluation domain, for the tests that hold in all of them. */
static const usc_eval_domain all_domains[] = {
	USC_DOMAIN_REFERENCE, USC_DOMAIN_ORACLE, USC_DOMAIN_TIER,
	USC_DOMAIN_F64, USC_DOMAIN_ENVELOPE};

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define NV(...) (sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

#endif /* USC_EVAL_TEST_UTIL_H */
