/*
 * The envelope's soundness and its invariants (issue 13): every
 * combination of a profile's freedoms is inside (an f16 a*b+c rounded once
 * as well as twice, a convolution accumulated in any order), and no
 * allowance lets a result cross a bound every correct implementation
 * keeps (a representable quotient, 1 / y <= 1 for y >= 1, no subnormal
 * result where the target always flushes).  Expected values are
 * hand-derived hex floats (each derivation in the comment) or f32
 * arithmetic emulated in double, which is exact here: a product of two
 * f32 values fits in 53 bits, and a sum of two rounded once more to f32
 * is the correctly rounded f32 sum (53 >= 2 * 24 + 2, Figueroa 1995).
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

#include "internal.h"
#include "test_util.h"

#include "ulpscope/classify.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#include "eval/eval_values.h"
#include "oracles/envelope.h"

/* ------------------------------------------------------------ helpers */

static usc_profile builtin(const char *name)
{
	usc_profile p;
	usc_error err;

	if (usc_profile_builtin(name, &p, &err) != USC_OK)
		fail_msg("%s", err.message);
	return p;
}

static usc_tensor *tensor(usc_dtype t, size_t rank, const int64_t *dims,
			  const double *v)
{
	usc_tensor *x = NULL;
	usc_error err;
	uint64_t n;

	if (usc_tensor_create(t, rank, dims, &x, &err) != USC_OK)
		fail_msg("%s", err.message);
	n = usc_tensor_count(x);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t b;

		assert_int_equal(usc_encode_double(t, v[i], NULL, &b, NULL), 0);
		assert_int_equal(usc_tensor_set_bits(x, i, b), USC_OK);
	}
	return x;
}

static usc_tensor *scalar1(usc_dtype t, double v)
{
	return tensor(t, 1, (int64_t[]){1}, &v);
}

/*
 * Runs the kernel text on the inputs (destroyed here) in the envelope
 * domain under p and writes the first n elements' envelopes of output 0.
 */
static void envelopes(const char *text, usc_tensor **in, size_t nin,
		      const usc_profile *p, usc__envelope_elem *out, size_t n,
		      usc_dtype *type)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	const void *vals;
	size_t count;
	usc_error err;

	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = p;
	if (usc_hlo_parse(text, strlen(text), "<t>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	if (usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err) != USC_OK)
		fail_msg("create: %s", err.message);
	for (size_t i = 0; i < nin; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("bind: %s", err.message);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	assert_int_equal(usc__eval_output_values(ev, 0, &vals, &count, type),
			 USC_OK);
	assert_true(n <= count);
	for (size_t k = 0; k < n; k++) {
		uint64_t rep;

		assert_int_equal(usc__domain_envelope.to_output(
					 usc__eval_domain_state(ev), *type,
					 (const unsigned char *)vals +
						 k * usc__domain_envelope
							     .value_size,
					 &rep, &out[k], &err),
				 USC_OK);
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (size_t i = 0; i < nin; i++)
		usc_tensor_destroy(in[i]);
}

static bool inside(const usc__envelope_elem *e, usc_dtype t, double v)
{
	uint64_t b;

	assert_int_equal(usc_encode_double(t, v, NULL, &b, NULL), 0);
	return usc__envelope_contains(e, t, b);
}

/* ------------------------------------------- item 3: no false alarm */

/*
 * f16 a*b + c under xla-cpu, with a = 0x1.37p0, b = 0x1.a58p-12 and
 * c = 0x1.28p0 (all f16 values).  The product is exact in f32 (22 bits);
 * a*b + c = c + 2^-11 + d with d = 5.40e-8 < 2^-24, half the f32 spacing
 * at 1.16.  Rounded to f32 first it is c + 2^-11, a tie between the f16
 * neighbours c and c + 2^-10, which nearest-even breaks to c (its last
 * bit is 0).  Rounded once to f16 (the FMA's exact result) it is above
 * the tie: c + 2^-10 = 0x1.284p0.  Both are correct XLA:CPU results.
 */
static void test_f16_fma_single_rounding(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f16[1] parameter(0)\n"
		"  b = f16[1] parameter(1)\n"
		"  c = f16[1] parameter(2)\n"
		"  m = f16[1] multiply(a, b)\n"
		"  ROOT r = f16[1] add(m, c)\n"
		"}\n";
	usc_profile p = builtin("xla-cpu");
	usc__envelope_elem e;
	usc_tensor *in[3];
	usc_dtype t;

	(void)state;
	in[0] = scalar1(USC_F16, 0x1.37p0);
	in[1] = scalar1(USC_F16, 0x1.a58p-12);
	in[2] = scalar1(USC_F16, 0x1.28p0);
	envelopes(text, in, 3, &p, &e, 1, &t);
	assert_true(inside(&e, USC_F16, 0x1.28p0));  /* f32, then f16 */
	assert_true(inside(&e, USC_F16, 0x1.284p0)); /* once, to f16 */
	assert_false(inside(&e, USC_F16, 0x1.27cp0));
	assert_false(inside(&e, USC_F16, 0x1.288p0));
}

/*
 * An f32 3x3 convolution, NCHW, 3 input channels, SAME padding: 27
 * products per element.  XLA:CPU accumulates them in its own blocked
 * order; every order must be inside under xla-cpu (reassociate_dot).  The
 * inputs alternate in sign and span 2^-4 to 2^4, so that orders differ;
 * the test computes the sequential order (the interpreter's), the reverse
 * order and a pairwise tree, each with f32 products and f32 sums, and an
 * FMA chain, and requires all inside, and enough elements where the
 * orders differ for the check to mean something.
 */
#define CH 3
#define HW 8
#define OF 4

static float rn32(double x)
{
	return (float)x;
}

static float pairwise(const float *v, size_t n)
{
	if (n == 1)
		return v[0];
	return rn32((double)pairwise(v, n / 2) +
		    (double)pairwise(v + n / 2, n - n / 2));
}

static void test_conv_any_order(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  x = f32[1,3,8,8] parameter(0)\n"
		"  w = f32[4,3,3,3] parameter(1)\n"
		"  ROOT c = f32[1,4,8,8] convolution(x, w), "
		"window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
		"}\n";
	static double x[CH * HW * HW], w[OF * CH * 9];
	static usc__envelope_elem e[OF * HW * HW];
	usc_profile p = builtin("xla-cpu"), strict;
	usc_tensor *in[2];
	usc_dtype t;
	uint64_t s = 0x243f6a8885a308d3ull;
	size_t differ = 0, strict_out = 0;

	(void)state;
	for (size_t i = 0; i < CH * HW * HW + OF * CH * 9; i++) {
		double m;

		m = (double)(usc_test_xorshift64star(&s) >> 40) * 0x1p-24;
		m = ldexp(1 + m, (int)(i % 9) - 4) * ((i % 2) ? -1 : 1);
		m = (double)(float)m;
		if (i < CH * HW * HW)
			x[i] = m;
		else
			w[i - CH * HW * HW] = m;
	}
	in[0] = tensor(USC_F32, 4, (int64_t[]){1, CH, HW, HW}, x);
	in[1] = tensor(USC_F32, 4, (int64_t[]){OF, CH, 3, 3}, w);
	envelopes(text, in, 2, &p, e, OF * HW * HW, &t);
	for (int o = 0; o < OF; o++)
		for (int i = 0; i < HW; i++)
			for (int j = 0; j < HW; j++) {
				float prod[27], seq = 0, rev = 0, fma_c = 0;
				double exact[27];
				size_t n = 0;
				usc__envelope_elem *el = &e[(o * HW + i) * HW + j];

				/* Input features outer, then kernel rows. */
				for (int f = 0; f < CH; f++)
					for (int a = 0; a < 3; a++)
						for (int b = 0; b < 3; b++) {
							int y = i + a - 1, z = j + b - 1;

							if (y < 0 || y >= HW || z < 0 ||
							    z >= HW)
								continue;
							exact[n] =
								x[(f * HW + y) * HW + z] *
								w[((o * CH + f) * 3 + a) * 3 + b];
							prod[n] = rn32(exact[n]);
							n++;
						}
				seq = prod[0];
				for (size_t k = 1; k < n; k++)
					seq = rn32((double)seq + (double)prod[k]);
				rev = prod[n - 1];
				for (size_t k = n - 1; k-- > 0;)
					rev = rn32((double)rev + (double)prod[k]);
				/*
				 * An FMA chain: acc = RN(exact_k + acc), the
				 * product unrounded; the sum of a double
				 * product (48 bits) and an f32 may not be exact
				 * in double, so only chains where it is (the
				 * TwoSum error is 0) count.
				 */
				bool fma_ok = true;

				fma_c = prod[0];
				for (size_t k = 1; k < n && fma_ok; k++) {
					double a = exact[k], b = fma_c;
					double sum = a + b, bb = sum - a;

					/* TwoSum (Knuth): the rounding error. */
					fma_ok = (a - (sum - bb)) + (b - bb) == 0;
					fma_c = rn32(sum);
				}
				assert_true(inside(el, USC_F32, seq));
				assert_true(inside(el, USC_F32, rev));
				assert_true(inside(el, USC_F32, pairwise(prod, n)));
				if (fma_ok)
					assert_true(inside(el, USC_F32, fma_c));
				if (rev != seq)
					differ++;
			}
	/* Under strict the envelope is the sequential point: rev outside. */
	usc__envelope_profile_strict(&strict);
	in[0] = tensor(USC_F32, 4, (int64_t[]){1, CH, HW, HW}, x);
	in[1] = tensor(USC_F32, 4, (int64_t[]){OF, CH, 3, 3}, w);
	envelopes(text, in, 2, &strict, e, OF * HW * HW, &t);
	for (size_t k = 0; k < OF * HW * HW; k++)
		if (e[k].lo != e[k].hi)
			strict_out++;
	assert_int_equal(strict_out, 0);
	printf("  conv: %zu of %d elements differ between the orders\n",
	       differ, OF * HW * HW);
	assert_true(differ >= 20);
}

/* ----------------------------------------- item 4: no blind spot */

/*
 * XLA's logistic expansion 1 / (1 + exp(-x)) for x = 30: exp(-30) =
 * 9.4e-14 is far below half the f32 spacing at 1 (2^-24), so 1 + e
 * rounds to 1 under any allowance of exp, and 1 / 1 = 1 exactly.  The
 * divide is IEEE under xla-cpu and its x * (1/y) rewrite gives 1 * 1:
 * the envelope is {1}, and 1.0000001 (0x3F800001) is a defect.  For
 * x = 2 the quotient must stay at most 1 as well (1 / y, y > 1).
 */
static void test_logistic_expanded(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  x = f32[2] parameter(0)\n"
		"  n = f32[2] negate(x)\n"
		"  ex = f32[2] exponential(n)\n"
		"  one = f32[] constant(1)\n"
		"  b = f32[2] broadcast(one), dimensions={}\n"
		"  d = f32[2] add(b, ex)\n"
		"  ROOT r = f32[2] divide(b, d)\n"
		"}\n";
	usc_profile p = builtin("xla-cpu");
	usc__envelope_elem e[2];
	usc_tensor *in[1];
	usc_dtype t;

	(void)state;
	in[0] = tensor(USC_F32, 1, (int64_t[]){2}, (double[]){30, 2});
	envelopes(text, in, 1, &p, e, 2, &t);
	assert_true(e[0].flags & USC__ENV_FINITE);
	assert_true(e[0].lo == 1 && e[0].hi == 1);
	assert_false(usc__envelope_contains(&e[0], USC_F32, 0x3F800001));
	assert_true(e[1].hi < 1);
}

/*
 * x / 3 with x = 0x1.000004p0 (f32): RN(x / 3) = 0x1.55555ap-2, while
 * x * RN(1/3) = 0x1.000004p0 * 0x1.555556p-2 rounds to 0x1.55555cp-2
 * (worked out with exact rationals).  With divide_reciprocal = constant
 * both are inside for a constant divisor and only the quotient for a
 * parameter; with no, only the quotient.  A representable quotient
 * (6 / 3 = 2) is exactly {2} under xla-cpu.
 */
static void test_divide_rewrite(void **state)
{
	static const char *by_const =
		"HloModule m\n"
		"ENTRY e {\n"
		"  x = f32[1] parameter(0)\n"
		"  c = f32[] constant(3)\n"
		"  y = f32[1] broadcast(c), dimensions={}\n"
		"  ROOT r = f32[1] divide(x, y)\n"
		"}\n";
	static const char *by_param =
		"HloModule m\n"
		"ENTRY e {\n"
		"  x = f32[1] parameter(0)\n"
		"  y = f32[1] parameter(1)\n"
		"  ROOT r = f32[1] divide(x, y)\n"
		"}\n";
	usc_profile p = builtin("xla-cpu");
	usc__envelope_elem e;
	usc_tensor *in[2];
	usc_dtype t;

	(void)state;
	p.divide_reciprocal = USC_DIV_RECIP_CONSTANT;
	in[0] = scalar1(USC_F32, 0x1.000004p0);
	envelopes(by_const, in, 1, &p, &e, 1, &t);
	assert_true(inside(&e, USC_F32, 0x1.55555ap-2));
	assert_true(inside(&e, USC_F32, 0x1.55555cp-2));
	assert_false(inside(&e, USC_F32, 0x1.55555ep-2));
	assert_false(inside(&e, USC_F32, 0x1.555558p-2));
	in[0] = scalar1(USC_F32, 0x1.000004p0);
	in[1] = scalar1(USC_F32, 3);
	envelopes(by_param, in, 2, &p, &e, 1, &t);
	assert_true(e.lo == 0x1.55555ap-2 && e.hi == 0x1.55555ap-2);
	p.divide_reciprocal = USC_DIV_RECIP_NO;
	in[0] = scalar1(USC_F32, 0x1.000004p0);
	envelopes(by_const, in, 1, &p, &e, 1, &t);
	assert_true(e.lo == 0x1.55555ap-2 && e.hi == 0x1.55555ap-2);
	p = builtin("xla-cpu");
	in[0] = scalar1(USC_F32, 6);
	in[1] = scalar1(USC_F32, 3);
	envelopes(by_param, in, 2, &p, &e, 1, &t);
	assert_true(e.lo == 2 && e.hi == 2);
}

/*
 * a*b - c in f32 under xla-cpu (FMA, flush_mode = always), with
 * a = 1 + 2^-23, b = (1 + 2^-23) 2^-78 and c = (1 + 2^-22) 2^-78:
 * ab = 2^-78 (1 + 2^-22 + 2^-46) rounds to c, so the rounded product
 * gives 0 and the FMA gives 2^-124 (a normal f32).  The envelope spans
 * [0, 2^-124], which holds the subnormals (below 2^-126); a correct
 * XLA:CPU, whose FTZ mode writes every subnormal result as 0, never
 * produces one: 2^-127 is outside, 0, 2^-126 and 2^-124 inside, and the
 * classification calls 2^-127 a defect.  Under a profile that may flush
 * (xla-gpu with flush.f32 = both), the subnormal is inside.
 */
static void test_ftz_no_subnormal(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[1] parameter(0)\n"
		"  b = f32[1] parameter(1)\n"
		"  c = f32[1] parameter(2)\n"
		"  m = f32[1] multiply(a, b)\n"
		"  ROOT r = f32[1] subtract(m, c)\n"
		"}\n";
	usc_profile p = builtin("xla-cpu");
	usc__envelope_elem e;
	usc_tensor *in[3];
	usc_dtype t;
	usc_classify_input ci;
	usc_classify_result cr;
	usc_error err;

	(void)state;
	in[0] = scalar1(USC_F32, 1 + 0x1p-23);
	in[1] = scalar1(USC_F32, (1 + 0x1p-23) * 0x1p-78);
	in[2] = scalar1(USC_F32, (1 + 0x1p-22) * 0x1p-78);
	envelopes(text, in, 3, &p, &e, 1, &t);
	assert_true(e.flags & USC__ENV_NO_SUBNORMAL);
	assert_true(e.lo <= 0 && e.hi >= 0x1p-124);
	assert_true(inside(&e, USC_F32, 0));
	assert_true(inside(&e, USC_F32, 0x1p-124));
	assert_true(inside(&e, USC_F32, 0x1p-126));
	assert_false(inside(&e, USC_F32, 0x1p-127));
	assert_false(inside(&e, USC_F32, 0x1p-149));
	/* The public classification says defect. */
	memset(&ci, 0, sizeof ci);
	ci.type = USC_F32;
	ci.device = 0x00200000; /* 2^-127 */
	ci.reference = 0;
	ci.exact = 0x1p-124;
	ci.envelope = usc__envelope_public(&e);
	assert_true(ci.envelope.flags & USC_ENV_NO_SUBNORMAL);
	assert_false(usc_envelope_contains(&ci.envelope, USC_F32, 0x00200000));
	assert_int_equal(usc_classify_element(&ci, &cr, &err), USC_OK);
	assert_int_equal(cr.cls, USC_CLASS_DEFECT);
	assert_true(cr.outside_ulps >= 1);
	/* A target that only may flush keeps the subnormal. */
	p = builtin("xla-gpu");
	p.flush[USC_F32] = USC_FLUSH_INPUTS | USC_FLUSH_OUTPUTS;
	in[0] = scalar1(USC_F32, 1 + 0x1p-23);
	in[1] = scalar1(USC_F32, (1 + 0x1p-23) * 0x1p-78);
	in[2] = scalar1(USC_F32, (1 + 0x1p-22) * 0x1p-78);
	envelopes(text, in, 3, &p, &e, 1, &t);
	assert_false(e.flags & USC__ENV_NO_SUBNORMAL);
	assert_true(inside(&e, USC_F32, 0x1p-127));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_fma_single_rounding),
		cmocka_unit_test(test_conv_any_order),
		cmocka_unit_test(test_logistic_expanded),
		cmocka_unit_test(test_divide_rewrite),
		cmocka_unit_test(test_ftz_no_subnormal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
