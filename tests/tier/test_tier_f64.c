/*
 * The plain f64 domain (oracles/f64.c, USC_DOMAIN_F64) on small kernels
 * whose results are derived by hand or computed by native C doubles in
 * this file: no op rounds to its declared type (where the f32 reference
 * loses a 1.5 against 1e8, plain f64 keeps it), libm for the
 * transcendental ops, integer and pred ops exact, XLA's max/min zero and
 * NaN rules, outputs rounded to nearest into their types.
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

#include "ulpscope/dtype.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

typedef struct run {
	usc_hlo_file *f;
	usc_eval *ev;
} run;

static usc_tensor *tensor(usc_dtype t, int64_t n, const double *v)
{
	usc_tensor *x;
	usc_error err;
	int64_t dims[1] = {n}, i;

	assert_int_equal(usc_tensor_create(t, 1, dims, &x, &err), USC_OK);
	for (i = 0; i < n; i++) {
		uint64_t bits;

		assert_int_equal(usc_encode_double(t, v[i], NULL, &bits, NULL),
				 USC_OK);
		assert_int_equal(usc_tensor_set_bits(x, (uint64_t)i, bits),
				 USC_OK);
	}
	return x;
}

/* Parses text, binds in[0..nin), runs in the domain. */
static run go(const char *text, usc_eval_domain dom, usc_tensor **in,
	      size_t nin)
{
	run r;
	usc_eval_options o = usc_eval_options_default();
	usc_error err;
	size_t i;

	if (usc_hlo_parse(text, strlen(text), "<f64>", &r.f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	o.domain = dom;
	assert_int_equal(usc_eval_create(usc_hlo_file_module(r.f, 0), &o,
					 &r.ev, &err),
			 USC_OK);
	for (i = 0; i < nin; i++)
		assert_int_equal(usc_eval_bind(r.ev, i, in[i], &err), USC_OK);
	if (usc_eval_run(r.ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	return r;
}

static void done(run *r)
{
	usc_eval_destroy(r->ev);
	usc_hlo_file_destroy(r->f);
}

/* Output k's element i must be the encoding of want in its type. */
static void expect(run *r, size_t k, uint64_t i, double want)
{
	const usc_tensor *t;
	uint64_t got = 0, wb = 0;
	usc_error err;

	assert_int_equal(usc_eval_output(r->ev, k, &t, &err), USC_OK);
	assert_int_equal(usc_tensor_get_bits(t, i, &got), USC_OK);
	assert_int_equal(usc_encode_double(usc_tensor_dtype(t), want, NULL,
					   &wb, NULL),
			 USC_OK);
	if (got != wb)
		fail_msg("output %zu element %llu: bits %llx, expected %llx "
			 "(%a)", k, (unsigned long long)i,
			 (unsigned long long)got, (unsigned long long)wb, want);
}

/* (x + 1e8) - 1e8 in f32: f32 rounding loses x, plain f64 keeps it. */
static void test_no_rounding(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"ENTRY e {\n"
		"  x = f32[3] parameter(0)\n"
		"  c = f32[] constant(1e8)\n"
		"  b = f32[3] broadcast(c), dimensions={}\n"
		"  s = f32[3] add(x, b)\n"
		"  ROOT d = f32[3] subtract(s, b)\n"
		"}\n";
	static const double xv[] = {1.5, -3.25, 0.1};
	usc_tensor *x = tensor(USC_F32, 3, xv);
	run r;

	(void)state;
	r = go(K, USC_DOMAIN_F64, &x, 1);
	/*
	 * 1e8 + x needs fewer than 53 bits for 1.5 and -3.25, so both come
	 * back exactly; 0.1f (24 bits down to 2^-27) makes a 54-bit sum, and
	 * the C double expression says what one double rounding leaves.
	 */
	expect(&r, 0, 0, 1.5);
	expect(&r, 0, 1, -3.25);
	expect(&r, 0, 2, ((double)0.1f + 1e8) - 1e8);
	done(&r);
	/* The f32 reference, for contrast: the ulp of 1e8 in f32 is 8. */
	r = go(K, USC_DOMAIN_REFERENCE, &x, 1);
	expect(&r, 0, 0, 0.0);
	done(&r);
	usc_tensor_destroy(x);
}

/* A sum in f32 that cancels: 1e8 + 1 - 1e8 = 1 exactly in double. */
static void test_reduce(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"add {\n"
		"  a = f32[] parameter(0)\n"
		"  b = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(a, b)\n"
		"}\n"
		"ENTRY e {\n"
		"  x = f32[3] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n"
		"}\n";
	static const double xv[] = {1e8, 1.0, -1e8};
	usc_tensor *x = tensor(USC_F32, 3, xv);
	run r;

	(void)state;
	r = go(K, USC_DOMAIN_F64, &x, 1);
	expect(&r, 0, 0, 1.0);
	done(&r);
	usc_tensor_destroy(x);
}

/* gelu_tanh's ops on bf16 inputs, against the same C double expression. */
static void test_gelu(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"ENTRY e {\n"
		"  x = bf16[4] parameter(0)\n"
		"  c = bf16[] constant(0.5)\n"
		"  h = bf16[4] broadcast(c), dimensions={}\n"
		"  k = bf16[] constant(0.796875)\n"
		"  kb = bf16[4] broadcast(k), dimensions={}\n"
		"  one = bf16[] constant(1)\n"
		"  ob = bf16[4] broadcast(one), dimensions={}\n"
		"  t0 = bf16[4] multiply(x, kb)\n"
		"  t1 = bf16[4] tanh(t0)\n"
		"  t2 = bf16[4] add(t1, ob)\n"
		"  t3 = bf16[4] multiply(t2, h)\n"
		"  t4 = bf16[4] multiply(x, t3)\n"
		"  ROOT o = f32[4] convert(t4)\n"
		"}\n";
	/* Exact bf16 values; 0.796875 = 51/64 is exact in bf16 too. */
	static const double xv[] = {1.5, -0.375, 2.75, -3.0};
	usc_tensor *x = tensor(USC_BF16, 4, xv);
	run r;
	int i;

	(void)state;
	r = go(K, USC_DOMAIN_F64, &x, 1);
	for (i = 0; i < 4; i++) {
		double v = xv[i];

		expect(&r, 0, (uint64_t)i,
		       v * ((tanh(v * 0.796875) + 1.0) * 0.5));
	}
	done(&r);
	usc_tensor_destroy(x);
}

/* Integers, compare, select, convert, max/min signed zeros and NaN. */
static void test_discrete(void **state)
{
	static const char K[] =
		"HloModule k\n"
		"ENTRY e {\n"
		"  x = f32[4] parameter(0)\n"
		"  y = f32[4] parameter(1)\n"
		"  i = s32[4] iota(), iota_dimension=0\n"
		"  three = s32[] constant(3)\n"
		"  tb = s32[4] broadcast(three), dimensions={}\n"
		"  j = s32[4] multiply(i, tb)\n"
		"  jf = f32[4] convert(j)\n"
		"  p = pred[4] compare(x, y), direction=LT\n"
		"  s = f32[4] select(p, jf, x)\n"
		"  mx = f32[4] maximum(x, y)\n"
		"  mn = f32[4] minimum(x, y)\n"
		"  xi = s32[4] convert(x)\n"
		"  ROOT t = (f32[4], f32[4], f32[4], s32[4]) tuple(s, mx, mn, xi)\n"
		"}\n";
	static const double xv[] = {-0.0, 2.5, NAN, -7.75};
	static const double yv[] = {0.0, 1.0, 1.0, 4.0};
	usc_tensor *in[2];
	run r;

	(void)state;
	in[0] = tensor(USC_F32, 4, xv);
	in[1] = tensor(USC_F32, 4, yv);
	r = go(K, USC_DOMAIN_F64, in, 2);
	/* -0 < 0 is false; 2.5 < 1 false; NaN < 1 false; -7.75 < 4 true. */
	expect(&r, 0, 0, -0.0);
	expect(&r, 0, 1, 2.5);
	expect(&r, 0, 2, NAN);
	expect(&r, 0, 3, 9.0); /* 3 * 3 */
	/* max(-0, +0) = +0, min(-0, +0) = -0; NaN propagates. */
	expect(&r, 1, 0, 0.0);
	expect(&r, 2, 0, -0.0);
	expect(&r, 1, 1, 2.5);
	expect(&r, 2, 1, 1.0);
	expect(&r, 1, 2, NAN);
	expect(&r, 2, 2, NAN);
	expect(&r, 1, 3, 4.0);
	expect(&r, 2, 3, -7.75);
	/* float to s32 truncates: 2.5 -> 2, -7.75 -> -7. */
	{
		const usc_tensor *t;
		uint64_t b;
		usc_error err;

		assert_int_equal(usc_eval_output(r.ev, 3, &t, &err), USC_OK);
		assert_int_equal(usc_tensor_get_bits(t, 1, &b), USC_OK);
		assert_int_equal(b, 2);
		assert_int_equal(usc_tensor_get_bits(t, 3, &b), USC_OK);
		assert_int_equal(b, (uint32_t)-7);
	}
	done(&r);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_rounding),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_gelu),
		cmocka_unit_test(test_discrete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
