/*
 * The tier dot's exact accumulation (oracles/tier_dot.c, step 5): dots
 * whose products cancel catastrophically, so that gamma_K sum |a||b| is
 * far wider than the sum, must come back as the exact sum (rounded once
 * to double, radius 0 when that is exact), where the plain bound could
 * decide nothing; and only those elements may take the path (the
 * counter usc__tier_dot_exact_elements).  The operands are bf16 values
 * (powers of two and short integers); the expected sums are derived by
 * hand, and the one that is not a double is checked against MPFR called
 * directly.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mpfr.h>

#include "eval/eval_values.h"
#include "oracles/oracle.h"
#include "oracles/tier.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

typedef usc__tier_value tvalue;

static tvalue pt(double d)
{
	tvalue v;

	memset(&v, 0, sizeof v);
	usc__tier_value_set(&v, d, 0);
	return v;
}

/*
 * C (1 x n) = a (1 x k) B (k x n) through the tier's matmul entry, every
 * column of B all ones but the last, which is given.
 */
static void dot_row(const double *a, size_t k, const double *blast,
		    size_t n, tvalue *c)
{
	void *ts;
	usc_error err;
	tvalue *A = calloc(k, sizeof *A), *B = calloc(k * n, sizeof *B);
	usc__dom_matmul mm;
	size_t l, j;

	assert_int_equal(usc__domain_tier.create(&ts, &err), USC_OK);
	for (l = 0; l < k; l++) {
		A[l] = pt(a[l]);
		for (j = 0; j < n; j++)
			B[l * n + j] = pt(j + 1 == n && blast ? blast[l] : 1.0);
	}
	memset(&mm, 0, sizeof mm);
	mm.batch = 1;
	mm.m = 1;
	mm.n = n;
	mm.k = k;
	mm.a_type = mm.b_type = USC_BF16;
	mm.result = USC_F32;
	mm.a = A;
	mm.b = B;
	mm.c = c;
	assert_int_equal(usc__tier_matmul(ts, &mm, &err), USC_OK);
	usc__domain_tier.destroy(ts);
	free(A);
	free(B);
}

static void expect_point(const tvalue *c, double want)
{
	assert_int_equal(c->kind, USC__ORC_FINITE);
	if (c->mid != want || c->rad != 0 || signbit(c->mid) != signbit(want))
		fail_msg("got %a +- %a, expected the point %a", c->mid, c->rad,
			 want);
}

/* [2^60, 1, -2^60] . [1, 1, 1] = 1, where double's sum gives 0 or 2^60. */
static void test_cancel_to_one(void **state)
{
	static const double a[] = {0x1p60, 1.0, -0x1p60};
	size_t before = usc__tier_dot_exact_elements();
	tvalue c[1];
	bool dec;
	uint64_t bits = 0, one = 0;
	usc_error err;

	(void)state;
	dot_row(a, 3, NULL, 1, c);
	expect_point(&c[0], 1.0);
	assert_int_equal(usc__tier_dot_exact_elements() - before, 1);
	/* Certified to the f32 code of 1. */
	assert_int_equal(usc__tier_decide_rounding(&c[0], USC_F32, &dec, &bits,
						   &err),
			 USC_OK);
	assert_true(dec);
	assert_int_equal(usc_encode_double(USC_F32, 1.0, NULL, &one, NULL),
			 USC_OK);
	assert_int_equal(bits, one);
}

/*
 * Small terms under a cancelling pair, two columns: [2^40, 3 2^-20,
 * -2^40, 2^-30] against ones gives 3 2^-20 + 2^-30; against [1, 1, 1, 5]
 * 3 2^-20 + 5 2^-30.  Both are doubles (11 significant bits).
 */
static void test_small_terms(void **state)
{
	static const double a[] = {0x1p40, 0x3p-20, -0x1p40, 0x1p-30};
	static const double b[] = {1.0, 1.0, 1.0, 5.0};
	size_t before = usc__tier_dot_exact_elements();
	tvalue c[2];

	(void)state;
	dot_row(a, 4, b, 2, c);
	expect_point(&c[0], 0x3p-20 + 0x1p-30);
	expect_point(&c[1], 0x3p-20 + 0x5p-30);
	assert_int_equal(usc__tier_dot_exact_elements() - before, 2);
}

/* A sum that cancels to zero exactly: +0, a point, sign known. */
static void test_cancel_to_zero(void **state)
{
	static const double a[] = {0x1p60, 1.0, -0x1p60, -1.0};
	tvalue c[1];

	(void)state;
	dot_row(a, 4, NULL, 1, c);
	expect_point(&c[0], 0.0);
	assert_int_equal(c[0].flags, 0);
}

/*
 * [2^100, -2^100, 1, 2^-100] . ones = 1 + 2^-100, not a double: the ball
 * must hold the exact sum (MPFR, 256 bits) and be narrow enough to
 * decide f32.
 */
static void test_inexact_sum(void **state)
{
	static const double a[] = {0x1p100, -0x1p100, 1.0, 0x1p-100};
	tvalue c[1];
	mpfr_t ex, lo, hi;
	bool dec;
	uint64_t bits;
	usc_error err;

	(void)state;
	dot_row(a, 4, NULL, 1, c);
	assert_int_equal(c[0].kind, USC__ORC_FINITE);
	assert_true(c[0].rad > 0);
	assert_true(c[0].rad <= 0x1p-52);
	mpfr_inits2(256, ex, lo, hi, (mpfr_ptr)0);
	mpfr_set_d(ex, 1.0, MPFR_RNDN);
	mpfr_add_d(ex, ex, 0x1p-100, MPFR_RNDN); /* exact at 256 bits */
	mpfr_set_d(lo, c[0].mid, MPFR_RNDN);
	mpfr_sub_d(lo, lo, c[0].rad, MPFR_RNDN);
	mpfr_set_d(hi, c[0].mid, MPFR_RNDN);
	mpfr_add_d(hi, hi, c[0].rad, MPFR_RNDN);
	assert_true(mpfr_lessequal_p(lo, ex) && mpfr_lessequal_p(ex, hi));
	mpfr_clears(ex, lo, hi, (mpfr_ptr)0);
	assert_int_equal(usc__tier_decide_rounding(&c[0], USC_F32, &dec, &bits,
						   &err),
			 USC_OK);
	assert_true(dec);
}

/* No cancellation, no exact path: the counter stays. */
static void test_no_cancel(void **state)
{
	double a[64];
	size_t before = usc__tier_dot_exact_elements(), l;
	tvalue c[3];

	(void)state;
	for (l = 0; l < 64; l++)
		a[l] = 1.0 + (double)l * 0x1.23456789abcdfp-7; /* 53 bits */
	dot_row(a, 64, NULL, 3, c);
	assert_int_equal(usc__tier_dot_exact_elements(), before);
	assert_true(c[0].rad > 0);
}

/* A tensor of type t and shape dims holding vals[0..n), each exact in t. */
static usc_tensor *tensor_of(usc_dtype t, size_t rank, const int64_t *dims,
			     const double *vals, size_t n)
{
	usc_tensor *x;
	usc_error err;
	uint64_t bits;

	assert_int_equal(usc_tensor_create(t, rank, dims, &x, &err), USC_OK);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(usc_encode_double(t, vals[i], NULL, &bits,
						   NULL),
				 USC_OK);
		assert_int_equal(usc_tensor_set_bits(x, i, bits), USC_OK);
	}
	return x;
}

/*
 * Kernel text K run in the tier on its nin inputs: the evaluator, for its
 * outputs; the caller destroys it and *f.
 */
static usc_eval *run_tier(const char *K, usc_tensor *const *in, size_t nin,
			  usc_hlo_file **f)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;

	assert_int_equal(usc_hlo_parse(K, strlen(K), "<k>", f, &err), USC_OK);
	o.domain = USC_DOMAIN_TIER;
	assert_int_equal(usc_eval_create(usc_hlo_file_module(*f, 0), &o, &ev,
					 &err),
			 USC_OK);
	for (size_t k = 0; k < nin; k++)
		assert_int_equal(usc_eval_bind(ev, k, in[k], &err), USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	return ev;
}

/*
 * Through the interpreter: a bf16 dot with f32 result whose second row
 * cancels (2^60 + 1 - 2^60 = 1) and whose first does not (1 + 2 + 3).
 */
static void test_eval_dot(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"ENTRY e {\n"
		"  a = bf16[2,3] parameter(0)\n"
		"  b = bf16[3] parameter(1)\n"
		"  ROOT d = f32[2] dot(a, b), lhs_contracting_dims={1}, "
		"rhs_contracting_dims={0}\n"
		"}\n";
	static const double av[] = {1.0, 2.0, 3.0, 0x1p60, 1.0, -0x1p60};
	static const double bv[] = {1.0, 1.0, 1.0};
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *in[2];
	const usc_tensor *out;
	int64_t da[2] = {2, 3}, db[1] = {3};
	size_t before = usc__tier_dot_exact_elements();
	usc_error err;
	uint64_t bits, want;

	(void)state;
	in[0] = tensor_of(USC_BF16, 2, da, av, 6);
	in[1] = tensor_of(USC_BF16, 1, db, bv, 3);
	ev = run_tier(K, in, 2, &f);
	assert_int_equal(usc__tier_dot_exact_elements() - before, 1);
	assert_int_equal(usc_eval_output(ev, 0, &out, &err), USC_OK);
	assert_int_equal(usc_tensor_get_bits(out, 0, &bits), USC_OK);
	assert_int_equal(usc_encode_double(USC_F32, 6.0, NULL, &want, NULL),
			 USC_OK);
	assert_int_equal(bits, want);
	assert_int_equal(usc_tensor_get_bits(out, 1, &bits), USC_OK);
	assert_int_equal(usc_encode_double(USC_F32, 1.0, NULL, &want, NULL),
			 USC_OK);
	assert_int_equal(bits, want);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
}

/*
 * An add reduction through the evaluator (the sum entry): f32 2^60, 1,
 * -2^60 with init 0 add up to exactly 1 in any order.  Sequentially, the
 * partial sum 2^60 + 1 is not a double and its rounding error (1) stays
 * in the radius, so the ball [0 +- 1] would decide nothing; summed
 * exactly it is the point 1.  And 2^60 + 3 - 2^60 + 2^-20 (exactly
 * 3 + 2^-20, a double) the same; 1 + 2^-60 (not a double) rounds once,
 * with a radius of at most half its ulp, 2^-53.
 */
static void test_eval_reduce(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y) }\n"
		"ENTRY e {\n"
		"  a = f32[3,4] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[3] reduce(a, z), dimensions={1}, to_apply=add\n"
		"}\n";
	static const double av[] = {0x1p60, 1, -0x1p60, 0,
				    0x1p60, 3, -0x1p60, 0x1p-20,
				    1, 0x1p-60, 0, 0};
	static const double want[] = {1, 3 + 0x1p-20, 1};
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *in;
	int64_t da[2] = {3, 4};
	const void *values;
	size_t count, i;
	usc_dtype t;

	(void)state;
	in = tensor_of(USC_F32, 2, da, av, 12);
	ev = run_tier(K, &in, 1, &f);
	assert_int_equal(usc__eval_output_values(ev, 0, &values, &count, &t),
			 USC_OK);
	assert_int_equal(count, 3);
	for (i = 0; i < 3; i++) {
		const usc__tier_value *v = (const usc__tier_value *)values + i;

		assert_int_equal(v->kind, USC__ORC_FINITE);
		if (i < 2) {
			assert_true(v->mid == want[i] && v->rad == 0);
		} else {
			/* 1 + 2^-60 rounds to 1; the ball must hold it. */
			assert_true(v->mid == 1);
			assert_true(v->rad >= 0x1p-60 && v->rad <= 0x1p-52);
		}
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(in);
}

/*
 * Sums whose every partial sum is exact in double (the sum entry's
 * double path, which must give what MPFR gives: the exact sum, radius
 * 0): 1.5 + 2.25 - 0.125 + 4 = 7.625; 2^-30 + 3 + 2^20 - 7 = 2^20 - 4 +
 * 2^-30 (51 bits); and 1 - 1 + 0.5 - 0.5, an exact zero, which the sum
 * entry declines to the sequential path: +0 (IEEE 754 6.3: x - x is +0
 * in round-to-nearest), a point whose sign is known.
 */
static void test_eval_reduce_exact_in_double(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y) }\n"
		"ENTRY e {\n"
		"  a = f32[3,4] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[3] reduce(a, z), dimensions={1}, to_apply=add\n"
		"}\n";
	static const double av[] = {1.5,      2.25, -0.125,  4,
				    0x1p-30,  3,    0x1p20, -7,
				    1,        -1,   0.5,    -0.5};
	static const double want[] = {7.625, 0x1p20 - 4 + 0x1p-30, 0};
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *in;
	int64_t da[2] = {3, 4};
	const void *values;
	size_t count, i;
	usc_dtype t;

	(void)state;
	in = tensor_of(USC_F32, 2, da, av, 12);
	ev = run_tier(K, &in, 1, &f);
	assert_int_equal(usc__eval_output_values(ev, 0, &values, &count, &t),
			 USC_OK);
	assert_int_equal(count, 3);
	for (i = 0; i < 3; i++) {
		const tvalue *v = (const tvalue *)values + i;

		assert_int_equal(v->kind, USC__ORC_FINITE);
		assert_true(v->mid == want[i] && v->rad == 0);
	}
	assert_false(signbit(((const tvalue *)values)[2].mid));
	assert_false(((const tvalue *)values)[2].flags &
		     (USC__ORC_NEG_ZERO | USC__ORC_ZSIGN_UNKNOWN));
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(in);
}

/*
 * A reduce whose first row takes balls (exponentials) and whose second
 * row takes points: the sum entry declines the first row, and the
 * second must still be summed exactly, as it is when evaluated alone
 * (a streamed check evaluates rows in blocks, so a row's value must not
 * depend on the rows before it).  Row 1 is 2^60 + 1 - 2^60 + 0: exactly
 * 1, which the pairwise path cannot give as a point (2^60 + 1 rounds).
 */
static void test_eval_reduce_rows_independent(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y) }\n"
		"ENTRY e {\n"
		"  a = f32[2,4] parameter(0)\n"
		"  m = pred[2,4] parameter(1)\n"
		"  x = f32[2,4] exponential(a)\n"
		"  s = f32[2,4] select(m, x, a)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[2] reduce(s, z), dimensions={1}, to_apply=add\n"
		"}\n";
	static const double av[] = {1, 1, 1, 1, 0x1p60, 1, -0x1p60, 0};
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *in[2];
	int64_t da[2] = {2, 4};
	const void *values;
	const tvalue *r;
	size_t count, i;
	usc_dtype t;
	usc_error err;

	(void)state;
	in[0] = tensor_of(USC_F32, 2, da, av, 8);
	assert_int_equal(usc_tensor_create(USC_PRED, 2, da, &in[1], &err),
			 USC_OK);
	for (i = 0; i < 8; i++)
		assert_int_equal(usc_tensor_set_bits(in[1], i, i < 4), USC_OK);
	ev = run_tier(K, in, 2, &f);
	assert_int_equal(usc__eval_output_values(ev, 0, &values, &count, &t),
			 USC_OK);
	assert_int_equal(count, 2);
	r = values;
	/* Row 0: a ball around 4e (the sum entry declined it). */
	assert_int_equal(r[0].kind, USC__ORC_FINITE);
	assert_true(r[0].rad > 0);
	assert_true(fabs(r[0].mid - 4 * exp(1.0)) < 1e-12);
	/* Row 1: the exact sum, a point. */
	assert_int_equal(r[1].kind, USC__ORC_FINITE);
	assert_true(r[1].mid == 1 && r[1].rad == 0);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_to_one),
		cmocka_unit_test(test_small_terms),
		cmocka_unit_test(test_cancel_to_zero),
		cmocka_unit_test(test_inexact_sum),
		cmocka_unit_test(test_no_cancel),
		cmocka_unit_test(test_eval_dot),
		cmocka_unit_test(test_eval_reduce),
		cmocka_unit_test(test_eval_reduce_exact_in_double),
		cmocka_unit_test(test_eval_reduce_rows_independent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
