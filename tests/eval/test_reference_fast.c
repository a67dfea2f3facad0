/*
 * The fast strict reference (oracles/reference_fast.h) on hand-derived
 * cases, through the evaluator.
 *
 * Every expected encoding below is derived by hand in its comment (the
 * exact result and the two codes around it; nearest-even picks the code
 * with the even last bit) or, for the one exp case no hand can place, by
 * MPFR called directly.  Each module is also run with the MPFR path
 * (usc_eval_options.reference_mpfr) and the two must agree bit for bit.
 * The escalation counts are checked where the arithmetic says what they
 * must be: an exact tie of pow and a near-tie of exp cannot be decided
 * from a ball of a few ulps of double, an f64 function never is, and
 * exp(1) in f32 always is.
 */
#define _POSIX_C_SOURCE 200809L
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

#include "internal.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

#include "eval/eval_values.h"
#include "oracles/reference_fast.h"

#define MAXN 65536

typedef struct run_result {
	uint64_t bits[MAXN];
	size_t n;
	usc__reference_fast_counts counts;
	bool fast;
} run_result;

static run_result res_fast, res_mpfr;

static usc_tensor *from_bits(usc_dtype t, size_t n, const uint64_t *bits)
{
	int64_t dim = (int64_t)n;
	usc_tensor *x = NULL;
	usc_error err;

	if (usc_tensor_create(t, 1, &dim, &x, &err) != USC_OK)
		fail_msg("tensor_create: %s", err.message);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(usc_tensor_set_bits(x, i, bits[i]), USC_OK);
	return x;
}

/* Runs text on inputs of type t in one domain path; fills *r. */
static void run_one(const char *text, usc_dtype t, size_t n,
		    const uint64_t *const *in, size_t nin, bool mpfr,
		    run_result *r)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_tensor *ts[4] = {NULL, NULL, NULL, NULL};
	const usc_tensor *out;
	usc_error err;

	o.reference_mpfr = mpfr;
	if (usc_hlo_parse(text, strlen(text), "<test>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	if (usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err) !=
	    USC_OK)
		fail_msg("eval_create: %s", err.message);
	for (size_t k = 0; k < nin; k++) {
		ts[k] = from_bits(t, n, in[k]);
		assert_int_equal(usc_eval_bind(ev, k, ts[k], &err), USC_OK);
	}
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	assert_int_equal(usc_eval_output(ev, 0, &out, &err), USC_OK);
	r->n = (size_t)usc_tensor_count(out);
	assert_true(r->n <= MAXN);
	for (size_t i = 0; i < r->n; i++)
		usc_tensor_get_bits(out, i, &r->bits[i]);
	r->fast = usc__eval_domain(ev) == &usc__domain_reference_fast;
	memset(&r->counts, 0, sizeof r->counts);
	if (r->fast)
		usc__reference_fast_get_counts(usc__eval_domain_state(ev),
					       &r->counts);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (size_t k = 0; k < nin; k++)
		usc_tensor_destroy(ts[k]);
}

/*
 * Runs text both ways; the fast run's outputs must equal the MPFR run's
 * bit for bit.  res_fast holds the fast run afterwards.
 */
static void run_both(const char *text, usc_dtype t, size_t n,
		     const uint64_t *const *in, size_t nin)
{
	run_one(text, t, n, in, nin, false, &res_fast);
	run_one(text, t, n, in, nin, true, &res_mpfr);
	assert_true(res_fast.fast);
	assert_false(res_mpfr.fast);
	assert_int_equal(res_fast.n, res_mpfr.n);
	for (size_t i = 0; i < res_fast.n; i++)
		if (res_fast.bits[i] != res_mpfr.bits[i])
			fail_msg("element %zu: fast 0x%llx, MPFR path 0x%llx",
				 i, (unsigned long long)res_fast.bits[i],
				 (unsigned long long)res_mpfr.bits[i]);
}

/* The first n outputs of the fast run are want. */
static void expect(const uint64_t *want, size_t n)
{
	assert_true(res_fast.n >= n);
	for (size_t i = 0; i < n; i++)
		if (res_fast.bits[i] != want[i])
			fail_msg("element %zu: got 0x%llx, want 0x%llx", i,
				 (unsigned long long)res_fast.bits[i],
				 (unsigned long long)want[i]);
}

#define U(...) ((const uint64_t[]){__VA_ARGS__})
#define NU(...) (sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))
#define IN(...) ((const uint64_t *const[]){__VA_ARGS__})

static const char *binary(char *buf, size_t size, const char *type,
			  size_t n, const char *op)
{
	snprintf(buf, size,
		 "HloModule m\n\nENTRY e {\n  a = %s[%zu] parameter(0)\n"
		 "  b = %s[%zu] parameter(1)\n  ROOT r = %s[%zu] %s(a, b)\n}\n",
		 type, n, type, n, type, n, op);
	return buf;
}

static const char *unary(char *buf, size_t size, const char *type, size_t n,
			 const char *op)
{
	snprintf(buf, size,
		 "HloModule m\n\nENTRY e {\n  a = %s[%zu] parameter(0)\n"
		 "  ROOT r = %s[%zu] %s(a)\n}\n",
		 type, n, type, n, op);
	return buf;
}

/* ------------------------------------------------- arithmetic path */

static void test_bf16_add_ties(void **state)
{
	char m[512];

	(void)state;
	/*
	 * bf16 has 8 bits of precision: above 1 the codes are 2^-7 apart.
	 * 1 + 2^-8 (0x3f80 + 0x3b80) is the midpoint of 1 (0x3f80, even)
	 * and 1 + 2^-7 (0x3f81): 0x3f80.  (1 + 2^-7) + 2^-8 is the
	 * midpoint of 0x3f81 and 0x3f82 (even): 0x3f82.  -1 - 2^-8: the
	 * same tie, negative: 0xbf80.  1 + 2^-9 is below the midpoint:
	 * 0x3f80; 1 + 3 2^-9 (2^-8 + 2^-9 = 0x3bc0) above: 0x3f81.
	 */
	run_both(binary(m, sizeof m, "bf16", 5, "add"), USC_BF16, 5,
		 IN(U(0x3f80, 0x3f81, 0xbf80, 0x3f80, 0x3f80),
		    U(0x3b80, 0x3b80, 0xbb80, 0x3b00, 0x3bc0)),
		 2);
	expect(U(0x3f80, 0x3f82, 0xbf80, 0x3f80, 0x3f81), 5);
	assert_int_equal(res_fast.counts.functions, 0);
}

static void test_fp8_multiply_ties(void **state)
{
	char m[512];

	(void)state;
	/*
	 * f8e4m3fn: 3 stored bits, bias 7; 1.0 = 0x38, codes 1/8 apart in
	 * [1, 2).  1.125 (0x39) x 1.5 (0x3c) = 1.6875, the midpoint of
	 * 1.625 (0x3d, odd) and 1.75 (0x3e, even): 0x3e.  1.125 x 1.125 =
	 * 1.265625, below the midpoint 1.3125 of 1.25 (0x3a) and 1.375:
	 * 0x3a.  448 (0x7e, the largest) x 2 (0x40) = 896 overflows; the
	 * format has no infinity, so overflow is its NaN 0x7f.
	 */
	run_both(binary(m, sizeof m, "f8e4m3fn", 3, "multiply"), USC_F8E4M3FN,
		 3, IN(U(0x39, 0x39, 0x7e), U(0x3c, 0x39, 0x40)), 2);
	expect(U(0x3e, 0x3a, 0x7f), 3);
}

static void test_subnormal_ties(void **state)
{
	char m[512];

	(void)state;
	/*
	 * f32: 0x00000001 is 2^-149.  Times 0.5 (0x3f000000): 2^-150, the
	 * midpoint of +0 (even) and 2^-149: +0.  3 2^-149 x 0.5 = 1.5
	 * 2^-149, the midpoint of 2^-149 and 2^-148 (0x00000002, even):
	 * 0x00000002.  -2^-149 x 0.5: -0 (0x80000000), the sign kept.
	 * 2^-126 (0x00800000, the smallest normal) x 0.5 = 2^-127, an
	 * exact subnormal: 0x00400000.
	 */
	run_both(binary(m, sizeof m, "f32", 4, "multiply"), USC_F32, 4,
		 IN(U(0x00000001, 0x00000003, 0x80000001, 0x00800000),
		    U(0x3f000000, 0x3f000000, 0x3f000000, 0x3f000000)),
		 2);
	expect(U(0x00000000, 0x00000002, 0x80000000, 0x00400000), 4);
	/*
	 * f16: 0x0001 is 2^-24; x 0.5 (0x3800): the tie 2^-25 -> +0; 0x0003
	 * x 0.5 = 1.5 2^-24 -> 0x0002.  f8e5m2: 0x01 is 2^-16; 0x03 x 0.5
	 * (0x38) = 1.5 2^-16 -> 0x02; 0x01 x 0.5 -> +0.
	 */
	run_both(binary(m, sizeof m, "f16", 2, "multiply"), USC_F16, 2,
		 IN(U(0x0001, 0x0003), U(0x3800, 0x3800)), 2);
	expect(U(0x0000, 0x0002), 2);
	run_both(binary(m, sizeof m, "f8e5m2", 2, "multiply"), USC_F8E5M2, 2,
		 IN(U(0x03, 0x01), U(0x38, 0x38)), 2);
	expect(U(0x02, 0x00), 2);
}

/*
 * The hand-derived cases above, each repeated through arrays of 1031
 * elements (two chunks of the array loops and an odd remainder; the
 * shorter calls above take the element-by-element code), with NaNs and
 * overflows among them, which the loops leave to their second pass:
 * every element must be its hand-derived code and equal the MPFR path's.
 * Then the same with the second operand a broadcast scalar.
 */
#define LONG_N 1031

static void run_long(const char *type, usc_dtype t, const char *op,
		     const uint64_t *a, const uint64_t *b, const uint64_t *want,
		     size_t k)
{
	static uint64_t x[LONG_N], y[LONG_N], w[LONG_N];
	char m[512];

	for (size_t i = 0; i < LONG_N; i++) {
		x[i] = a[i % k];
		y[i] = b[i % k];
		w[i] = want[i % k];
	}
	run_both(binary(m, sizeof m, type, LONG_N, op), t, LONG_N, IN(x, y),
		 2);
	expect(w, LONG_N);
}

static void test_long_arrays(void **state)
{
	static uint64_t x[LONG_N], w[LONG_N];
	char m[1024];

	(void)state;
	/* bf16 adds: the ties of test_bf16_add_ties, the largest doubled. */
	run_long("bf16", USC_BF16, "add",
		 U(0x3f80, 0x3f81, 0xbf80, 0x3f80, 0x3f80, 0x7f7f),
		 U(0x3b80, 0x3b80, 0xbb80, 0x3b00, 0x3bc0, 0x7f7f),
		 U(0x3f80, 0x3f82, 0xbf80, 0x3f80, 0x3f81, 0x7f80), 6);
	/* f8e4m3fn products: the ties and the overflow to its NaN. */
	run_long("f8e4m3fn", USC_F8E4M3FN, "multiply", U(0x39, 0x39, 0x7e),
		 U(0x3c, 0x39, 0x40), U(0x3e, 0x3a, 0x7f), 3);
	/* f32 subnormal ties and f16 overflows. */
	run_long("f32", USC_F32, "multiply",
		 U(0x00000001, 0x00000003, 0x80000001, 0x00800000),
		 U(0x3f000000, 0x3f000000, 0x3f000000, 0x3f000000),
		 U(0x00000000, 0x00000002, 0x80000000, 0x00400000), 4);
	run_long("f16", USC_F16, "add", U(0x7bff, 0x7bff, 0xfbff, 0x0001),
		 U(0x4c00, 0x4800, 0xcc00, 0x0001),
		 U(0x7c00, 0x7bff, 0xfc00, 0x0002), 4);
	/* NaNs among them: only the MPFR path's bits to compare. */
	for (size_t i = 0; i < LONG_N; i++)
		x[i] = i % 7 == 3 ? 0x7fc0 : i % 7 == 5 ? 0xffc1 : 0x3f80;
	run_both(binary(m, sizeof m, "bf16", LONG_N, "multiply"), USC_BF16,
		 LONG_N, IN(x, x), 2);
	/*
	 * A broadcast scalar operand: x + 2^-8 in bf16 for x = 1 (0x3f80)
	 * and 1 + 2^-7 (0x3f81): the ties of test_bf16_add_ties, 0x3f80
	 * and 0x3f82; 0x7f7f + 2^-8 is 0x7f7f.
	 */
	for (size_t i = 0; i < LONG_N; i++) {
		x[i] = i % 3 == 0 ? 0x3f80 : i % 3 == 1 ? 0x3f81 : 0x7f7f;
		w[i] = i % 3 == 0 ? 0x3f80 : i % 3 == 1 ? 0x3f82 : 0x7f7f;
	}
	snprintf(m, sizeof m,
		 "HloModule m\n\nENTRY e {\n  a = bf16[%d] parameter(0)\n"
		 "  c = bf16[] constant(0.00390625)\n"
		 "  b = bf16[%d] broadcast(c), dimensions={}\n"
		 "  ROOT r = bf16[%d] add(a, b)\n}\n",
		 LONG_N, LONG_N, LONG_N);
	run_both(m, USC_BF16, LONG_N, IN(x), 1);
	expect(w, LONG_N);
}

static void test_overflow(void **state)
{
	char m[512];

	(void)state;
	/*
	 * f16's largest finite is 65504 (0x7bff), the next step 32 above.
	 * 65504 + 16 (0x4c00) = 65520 is the midpoint of 65504 and 2^16;
	 * nearest-even rounds it up, past the largest: +Inf (0x7c00).
	 * 65504 + 8 (0x4800) is below the midpoint: 0x7bff.  -65504 - 16:
	 * -Inf (0xfc00).
	 */
	run_both(binary(m, sizeof m, "f16", 3, "add"), USC_F16, 3,
		 IN(U(0x7bff, 0x7bff, 0xfbff), U(0x4c00, 0x4800, 0xcc00)), 2);
	expect(U(0x7c00, 0x7bff, 0xfc00), 3);
	/* bf16: the largest (0x7f7f) doubled is +Inf (0x7f80). */
	run_both(binary(m, sizeof m, "bf16", 1, "add"), USC_BF16, 1,
		 IN(U(0x7f7f), U(0x7f7f)), 2);
	expect(U(0x7f80), 1);
	/*
	 * exp(89) in f32: e^89 = 4.5e38 is past the largest f32 (3.4e38):
	 * +Inf (0x7f800000), from a finite ball of double (no escalation).
	 * 89 = 0x42b20000.
	 */
	run_both(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		 IN(U(0x42b20000)), 1);
	expect(U(0x7f800000), 1);
	assert_int_equal(res_fast.counts.escalated, 0);
	/*
	 * exp(800) (0x44480000) and expm1(800) overflow double itself; the
	 * exact values (e^800 > 2^1154) are past every format's range: +Inf
	 * in f32, bf16 (800 = 0x4448) and f16 (800 = 1.5625 2^9 = 0x6240),
	 * decided without MPFR.
	 */
	run_both(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		 IN(U(0x44480000)), 1);
	expect(U(0x7f800000), 1);
	assert_int_equal(res_fast.counts.escalated, 0);
	run_both(unary(m, sizeof m, "bf16", 1, "exponential-minus-one"),
		 USC_BF16, 1, IN(U(0x4448)), 1);
	expect(U(0x7f80), 1);
	assert_int_equal(res_fast.counts.escalated, 0);
	run_both(unary(m, sizeof m, "f16", 1, "exponential"), USC_F16, 1,
		 IN(U(0x6240)), 1);
	expect(U(0x7c00), 1);
	assert_int_equal(res_fast.counts.escalated, 0);
}

static void test_signed_zeros_and_nan(void **state)
{
	char m[512];

	(void)state;
	/*
	 * -0 x 1 = -0 (0x8000 in bf16); -0 + -0 = -0; -0 + +0 = +0;
	 * NaN (0x7fc0) x 1 is a NaN, the MPFR path's.
	 */
	run_both(binary(m, sizeof m, "bf16", 4, "multiply"), USC_BF16, 4,
		 IN(U(0x8000, 0x0000, 0x7fc0, 0xffc0),
		    U(0x3f80, 0xbf80, 0x3f80, 0x3f80)),
		 2);
	expect(U(0x8000, 0x8000), 2);
	run_both(binary(m, sizeof m, "bf16", 2, "add"), USC_BF16, 2,
		 IN(U(0x8000, 0x8000), U(0x8000, 0x0000)), 2);
	expect(U(0x8000, 0x0000), 2);
	/*
	 * tanh(-0) = -0, sin(-0) = -0 in f32; exp(-Inf) = +0 and
	 * log(-1) a NaN (the special values go to MPFR).
	 */
	run_both(unary(m, sizeof m, "f32", 3, "tanh"), USC_F32, 3,
		 IN(U(0x80000000, 0x00000000, 0x7fc00000)), 1);
	expect(U(0x80000000, 0x00000000), 2);
	run_both(unary(m, sizeof m, "f32", 2, "exponential"), USC_F32, 2,
		 IN(U(0xff800000, 0x7f800000)), 1);
	expect(U(0x00000000, 0x7f800000), 2);
	run_both(unary(m, sizeof m, "f32", 1, "log"), USC_F32, 1,
		 IN(U(0xbf800000)), 1);
}

/* ----------------------------------------------------- function path */

/* exp(x) of an f32 x correctly rounded to f32 by MPFR called directly. */
static uint64_t mpfr_expf_bits(uint32_t xb)
{
	mpfr_t x, y;
	float xf, yf;
	uint32_t yb;

	memcpy(&xf, &xb, sizeof xf);
	mpfr_inits2(24, x, y, (mpfr_ptr)0);
	mpfr_set_flt(x, xf, MPFR_RNDN);
	/* Normal results only here: 24 bits are f32's rounding. */
	mpfr_exp(y, x, MPFR_RNDN);
	yf = mpfr_get_flt(y, MPFR_RNDN);
	mpfr_clears(x, y, (mpfr_ptr)0);
	memcpy(&yb, &yf, sizeof yb);
	return yb;
}

static void test_exp_near_ties(void **state)
{
	char m[512];

	(void)state;
	/*
	 * exp(1) = 2.71828182845...; the f32 codes around it are
	 * 0x402df854 = 2.71828174591 and 0x402df855 = 2.71828198433, so the
	 * nearest is 0x402df854, far from their midpoint (2.7182818651):
	 * decided in double.
	 */
	run_both(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		 IN(U(0x3f800000)), 1);
	expect(U(0x402df854), 1);
	assert_int_equal(res_fast.counts.functions, 1);
	assert_int_equal(res_fast.counts.escalated, 0);
	/*
	 * exp(-2^-25) = 1 - 2^-25 + 2^-51 - ...: below 1 the f32 codes are
	 * 2^-24 apart, so the midpoint of 1 - 2^-24 and 1 is 1 - 2^-25 and
	 * the exact value lies 2^-51 above it: 1.0 (0x3f800000).  A ball of
	 * exp's assumed error (a few ulps of double, 2^-50 and more) holds
	 * the midpoint: the element must go to MPFR.  -2^-25 = 0xb3000000.
	 */
	run_both(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		 IN(U(0xb3000000)), 1);
	expect(U(0x3f800000), 1);
	assert_int_equal(res_fast.counts.escalated, 1);
	/*
	 * exp(2^-24) = 1 + 2^-24 + 2^-49 + ...: 2^-49 above the midpoint of
	 * 1 and 1 + 2^-23: 0x3f800001.  And x = 0x3a9f8125, whose exp lies
	 * 1.3e-14 (relatively) from an f32 midpoint, found by a search over
	 * every f32: MPFR's rounding.  Whether the tier's ball decides these
	 * is its business; the values are not.
	 */
	run_both(unary(m, sizeof m, "f32", 2, "exponential"), USC_F32, 2,
		 IN(U(0x33800000, 0x3a9f8125)), 1);
	expect(U(0x3f800001, mpfr_expf_bits(0x3a9f8125)), 2);
	assert_int_equal(mpfr_expf_bits(0x3a9f8125), 0x3f8027e6);
}

static void test_pow_exact_ties(void **state)
{
	char m[512];

	(void)state;
	/*
	 * bf16: 1.0625 (1 + 2^-4, 0x3f88) squared is 1 + 2^-3 + 2^-8,
	 * exactly the midpoint of 1 + 2^-3 (0x3f90, even) and 1 + 2^-3 +
	 * 2^-7 (0x3f91): 0x3f90.  An exact tie: no ball around libm's pow
	 * can decide it, so it escalates.  2 is 0x4000.
	 */
	run_both(binary(m, sizeof m, "bf16", 1, "power"), USC_BF16, 1,
		 IN(U(0x3f88), U(0x4000)), 2);
	expect(U(0x3f90), 1);
	assert_int_equal(res_fast.counts.functions, 1);
	assert_int_equal(res_fast.counts.escalated, 1);
	/*
	 * f8e4m3fn: 1.25 (0x3a) squared is 1.5625, the midpoint of 1.5
	 * (0x3c, even) and 1.625 (0x3d): 0x3c.  2 is 0x40.
	 */
	run_both(binary(m, sizeof m, "f8e4m3fn", 1, "power"), USC_F8E4M3FN, 1,
		 IN(U(0x3a), U(0x40)), 2);
	expect(U(0x3c), 1);
	assert_int_equal(res_fast.counts.escalated, 1);
}

static void test_f64_functions_escalate(void **state)
{
	char m[512];

	(void)state;
	/* exp(1) in f64: e's correctly rounded double; always MPFR. */
	run_both(unary(m, sizeof m, "f64", 1, "exponential"), USC_F64, 1,
		 IN(U(0x3ff0000000000000ull)), 1);
	expect(U(0x4005bf0a8b145769ull), 1);
	assert_int_equal(res_fast.counts.functions, 1);
	assert_int_equal(res_fast.counts.escalated, 1);
}

/*
 * Arrays longer than the fast path's chunk, and a broadcast scalar
 * operand: pow(x, 2), pow(x, 0.5), atan2(x, 0.5) and x / 3 over every
 * bf16 code, against the MPFR path.  Squares of 8-bit significands tie
 * exactly where the 9th bit is the last one set (1.0625^2 above), so
 * some elements must escalate, and not all.
 */
/* pow-like module: op(a, broadcast(constant c)) over n bf16 elements. */
static const char *with_scalar(char *buf, size_t size, const char *c,
			       const char *op)
{
	snprintf(buf, size,
		 "HloModule m\n\nENTRY e {\n  a = bf16[65536] parameter(0)\n"
		 "  c = bf16[] constant(%s)\n"
		 "  b = bf16[65536] broadcast(c), dimensions={}\n"
		 "  ROOT r = bf16[65536] %s(a, b)\n}\n",
		 c, op);
	return buf;
}

static void test_bf16_every_code_pow(void **state)
{
	static uint64_t codes[65536];
	char m[512];

	(void)state;
	for (size_t i = 0; i < 65536; i++)
		codes[i] = i;
	run_both(with_scalar(m, sizeof m, "2", "power"), USC_BF16, 65536,
		 IN(codes), 1);
	assert_int_equal(res_fast.counts.functions, 65536);
	assert_true(res_fast.counts.escalated > 0);
	assert_true(res_fast.counts.escalated < 65536 / 8);
	run_both(with_scalar(m, sizeof m, "0.5", "power"), USC_BF16, 65536,
		 IN(codes), 1);
	run_both(with_scalar(m, sizeof m, "0.5", "atan2"), USC_BF16, 65536,
		 IN(codes), 1);
	run_both(with_scalar(m, sizeof m, "3", "divide"), USC_BF16, 65536,
		 IN(codes), 1);
}

/* convert from one type to another over n elements. */
static const char *convert(char *buf, size_t size, const char *from,
			   const char *to, size_t n)
{
	snprintf(buf, size,
		 "HloModule m\n\nENTRY e {\n  a = %s[%zu] parameter(0)\n"
		 "  ROOT r = %s[%zu] convert(a)\n}\n",
		 from, n, to, n);
	return buf;
}

/*
 * Converts, negate and abs (the exact unary path): ties by hand, then
 * every code of bf16 and f16 into the narrower and wider formats and
 * through negate and abs, NaNs included, against the MPFR path.
 */
static void test_converts(void **state)
{
	static uint64_t codes[65536];
	static const char *const to[] = {"f32", "f16", "bf16", "f8e4m3fn",
					  "f8e5m2", "f8e8m0fnu", "f4e2m1fn",
					  "f64"};
	char m[512];

	(void)state;
	/*
	 * f32 to bf16: 1 + 2^-8 (0x3f808000) is the midpoint of 0x3f80
	 * (even) and 0x3f81: 0x3f80; 1 + 3 2^-8 (0x3f818000) the midpoint
	 * of 0x3f81 and 0x3f82 (even): 0x3f82; the largest f32 (0x7f7fffff)
	 * is past bf16's largest (0x7f7f) by more than half its last step:
	 * +Inf (0x7f80).
	 */
	run_both(convert(m, sizeof m, "f32", "bf16", 3), USC_F32, 3,
		 IN(U(0x3f808000, 0x3f818000, 0x7f7fffff)), 1);
	expect(U(0x3f80, 0x3f82, 0x7f80), 3);
	for (size_t i = 0; i < 65536; i++)
		codes[i] = i;
	for (size_t k = 0; k < sizeof to / sizeof *to; k++) {
		run_both(convert(m, sizeof m, "bf16", to[k], 65536), USC_BF16,
			 65536, IN(codes), 1);
		run_both(convert(m, sizeof m, "f16", to[k], 65536), USC_F16,
			 65536, IN(codes), 1);
	}
	run_both(unary(m, sizeof m, "f16", 65536, "negate"), USC_F16, 65536,
		 IN(codes), 1);
	run_both(unary(m, sizeof m, "bf16", 65536, "abs"), USC_BF16, 65536,
		 IN(codes), 1);
	run_both(unary(m, sizeof m, "f8e4m3fnuz", 256, "negate"),
		 USC_F8E4M3FNUZ, 256, IN(codes), 1);
}

/* Every bf16 code through each function the tier bounds. */
static void test_bf16_every_code_functions(void **state)
{
	static uint64_t codes[65536];
	static const char *const ops[] = {
		"exponential", "exponential-minus-one", "log", "log-plus-one",
		"logistic", "tanh", "erf", "cbrt", "sine", "cosine", "tan",
		"rsqrt", "sqrt", "asinh"};
	char m[512];

	(void)state;
	for (size_t i = 0; i < 65536; i++)
		codes[i] = i;
	for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
		run_both(unary(m, sizeof m, "bf16", 65536, ops[k]), USC_BF16,
			 65536, IN(codes), 1);
}

static void test_environment_selects_mpfr(void **state)
{
	char m[512];

	(void)state;
	setenv("USC_REFERENCE_MPFR", "1", 1);
	run_one(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		IN(U(0x3f800000)), 1, false, &res_fast);
	assert_false(res_fast.fast);
	setenv("USC_REFERENCE_MPFR", "0", 1);
	run_one(unary(m, sizeof m, "f32", 1, "exponential"), USC_F32, 1,
		IN(U(0x3f800000)), 1, false, &res_fast);
	assert_true(res_fast.fast);
	unsetenv("USC_REFERENCE_MPFR");
	expect(U(0x402df854), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16_add_ties),
		cmocka_unit_test(test_fp8_multiply_ties),
		cmocka_unit_test(test_subnormal_ties),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_long_arrays),
		cmocka_unit_test(test_signed_zeros_and_nan),
		cmocka_unit_test(test_exp_near_ties),
		cmocka_unit_test(test_pow_exact_ties),
		cmocka_unit_test(test_f64_functions_escalate),
		cmocka_unit_test(test_bf16_every_code_pow),
		cmocka_unit_test(test_bf16_every_code_functions),
		cmocka_unit_test(test_converts),
		cmocka_unit_test(test_environment_selects_mpfr),
	};

	unsetenv("USC_REFERENCE_MPFR");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
