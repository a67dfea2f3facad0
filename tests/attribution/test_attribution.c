/*
 * Per-element error attribution (src/analyze/attribution.c) on kernels
 * whose answers are derived by hand, and the identity
 * contributions + residual = total on captured XLA:CPU cases.
 *
 * Encodings are written in hex: bf16 is the top half of binary32 (sign,
 * 8 exponent bits, bias 127, 7 stored mantissa bits), so 2^e is
 * (127 + e) << 7; ulp_bf16(x) = 2^(floor(log2 x) - 7), ulp_f32(x) =
 * 2^(floor(log2 x) - 23).
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

#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "test_util.h"

typedef struct fixture {
	usc_hlo_file *f;
	usc_tensor *in[4];
	size_t nin;
	usc_attribution *a;
} fixture;

static void setup(fixture *fx, const char *text)
{
	usc_error err;

	memset(fx, 0, sizeof *fx);
	if (usc_hlo_parse(text, strlen(text), "test", &fx->f, &err) != USC_OK)
		fail_msg("%s", err.message);
}

static void add_input(fixture *fx, usc_dtype t, size_t n,
		      const uint64_t *bits)
{
	int64_t dims[1] = {(int64_t)n};
	usc_error err;

	assert_int_equal(usc_tensor_create(t, 1, dims, &fx->in[fx->nin], &err),
			 USC_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(usc_tensor_set_bits(fx->in[fx->nin], i,
						     bits[i]),
				 USC_OK);
	fx->nin++;
}

static void attribute(fixture *fx)
{
	usc_hlo_module *m = usc_hlo_file_module(fx->f, 0);
	usc_error err;

	if (usc_attribute(m, m->entry, (const usc_tensor *const *)fx->in,
			  fx->nin, NULL, &fx->a, &err) != USC_OK)
		fail_msg("%s", err.message);
}

static void teardown(fixture *fx)
{
	usc_attribution_destroy(fx->a);
	for (size_t i = 0; i < fx->nin; i++)
		usc_tensor_destroy(fx->in[i]);
	usc_hlo_file_destroy(fx->f);
}

static size_t op_index(const usc_attribution *a, const char *name)
{
	for (size_t u = 0; u < a->op_count; u++)
		if (strcmp(a->ops[u].name, name) == 0)
			return u;
	fail_msg("no attributed op %s", name);
	return 0;
}

/*
 * One rounding op, z = x + y in bf16: y_u is the reference itself, so the
 * add's contribution is the total, bit for bit, and the residual 0.
 * 1 + 2^-8 is the tie between 1 and 1 + 2^-7: even, 1, -1/2 ulp.
 * 1 + 2^-9 rounds to 1: -1/4 ulp.  3 + 2^-7 is the tie between 3 and
 * 3 + 2^-6: even (3 = 0x4040, last bit 0), -1/2 ulp.  1 + 1 is exact.
 */
static void test_single_op(void **state)
{
	static const char text[] =
		"HloModule single\n"
		"ENTRY e {\n"
		"  x = bf16[4] parameter(0)\n"
		"  y = bf16[4] parameter(1)\n"
		"  ROOT z = bf16[4] add(x, y)\n"
		"}\n";
	static const uint64_t x[4] = {0x3F80, 0x3F80, 0x4040, 0x3F80};
	static const uint64_t y[4] = {0x3B80, 0x3B00, 0x3C00, 0x3F80};
	static const double total[4] = {-0.5, -0.25, -0.5, 0};
	fixture fx;
	const usc_attr_output *o;

	(void)state;
	setup(&fx, text);
	add_input(&fx, USC_BF16, 4, x);
	add_input(&fx, USC_BF16, 4, y);
	attribute(&fx);
	assert_int_equal(fx.a->op_count, 1);
	assert_string_equal(fx.a->ops[0].name, "z");
	assert_int_equal(fx.a->output_count, 1);
	o = &fx.a->outputs[0];
	assert_int_equal(o->attributed, 4);
	for (size_t k = 0; k < 4; k++) {
		assert_true(o->total[k] == total[k]);
		assert_true(o->contrib[k] == total[k]);
		assert_true(o->residual[k] == 0);
		if (total[k] != 0) {
			assert_int_equal(o->top_ops[k * 3], 0);
			assert_true(o->top_share[k * 3] == 1);
		} else {
			assert_int_equal(o->top_ops[k * 3], USC_ATTR_NO_OP);
		}
		assert_int_equal(o->top_ops[k * 3 + 1], USC_ATTR_NO_OP);
	}
	/* Budget: mean |c| = (0.5 + 0.25 + 0.5 + 0) / 4, all of the mass. */
	assert_true(fx.a->ops[0].mean_abs == 1.25 / 4);
	assert_true(fx.a->ops[0].max_abs == 0.5);
	assert_true(fx.a->ops[0].share == 1);
	assert_true(fx.a->residual_share == 0);
	teardown(&fx);
}

/*
 * x + 1 - 1 in bf16, x = 2^-9 (0x3B00): exact 2^-9, ulp_bf16(2^-9) =
 * 2^-16.  Only the add rounded: 1 + 2^-9 -> 1 (below the half ulp 2^-8),
 * minus 1 exactly: 0, so (0 - 2^-9) / 2^-16 = -128.  Only the subtract
 * rounded: (1 + 2^-9) - 1 = 2^-9 exactly, a bf16 value: 0.  The
 * reference gives 0: total -128, residual 0.  x = 0.5 (0x3F00): 1.5 and
 * 0.5 are bf16 values, everything is 0.
 */
static void test_plus_one_minus_one(void **state)
{
	static const char text[] =
		"HloModule p1m1\n"
		"ENTRY e {\n"
		"  x = bf16[2] parameter(0)\n"
		"  one = bf16[] constant(1)\n"
		"  ones = bf16[2] broadcast(one), dimensions={}\n"
		"  a = bf16[2] add(x, ones)\n"
		"  ROOT s = bf16[2] subtract(a, ones)\n"
		"}\n";
	static const uint64_t x[2] = {0x3B00, 0x3F00};
	fixture fx;
	const usc_attr_output *o;
	size_t ia, is;

	(void)state;
	setup(&fx, text);
	add_input(&fx, USC_BF16, 2, x);
	attribute(&fx);
	assert_int_equal(fx.a->op_count, 2);
	ia = op_index(fx.a, "a");
	is = op_index(fx.a, "s");
	o = &fx.a->outputs[0];
	assert_true(o->total[0] == -128);
	assert_true(o->contrib[0 * 2 + ia] == -128);
	assert_true(o->contrib[0 * 2 + is] == 0);
	assert_true(o->residual[0] == 0);
	assert_int_equal(o->top_ops[0], ia);
	assert_true(o->top_contrib[0] == -128);
	assert_true(o->top_share[0] == 1);
	assert_int_equal(o->top_ops[1], USC_ATTR_NO_OP);
	assert_true(o->total[1] == 0);
	assert_true(o->contrib[1 * 2 + ia] == 0);
	assert_true(o->contrib[1 * 2 + is] == 0);
	assert_true(o->residual[1] == 0);
	assert_true(fx.a->ops[ia].share == 1);
	assert_true(fx.a->ops[is].share == 0);
	teardown(&fx);
}

/*
 * The cancellation of a one-pass variance, n var = sum x^2 - (sum x)^2 / n
 * with n = 2, x = (1 + 2^-12, 1 - 2^-12) in f32 (0x3F800800, 0x3F7FF000).
 * Exact: sum x = 2, sum x^2 = 2 + 2^-23, v = 2 + 2^-23 - 4/2 = 2^-23;
 * ulp_f32(2^-23) = 2^-46.
 * - sq = x*x only: x0^2 = 1 + 2^-11 + 2^-24 is the tie between 1 + 2^-11
 *   and 1 + 2^-11 + 2^-23, even: 1 + 2^-11; x1^2 = 1 - 2^-11 + 2^-24 is
 *   an f32 value (ulp 2^-24 below 1).  s2 = 2 + 2^-24, v = 2^-24:
 *   (2^-24 - 2^-23) / 2^-46 = -2^22.
 * - s2 = reduce(sq) only (its adds, from the init 0, in order): 0 + x0^2
 *   rounds to 1 + 2^-11 (the same tie); + x1^2 = 2 + 2^-24, below half an
 *   ulp (2^-23) above 2: 2.  v = 0: (0 - 2^-23) / 2^-46 = -2^23.
 * - s1 = reduce(x) (0 + x0, then 2), s1sq = 4, m = 4 * 0.5 = 2 and
 *   v = (2 + 2^-23) - 2 = 2^-23 are f32 values: 0.
 * Reference: sq rounds as above, s2 = 2, v = 0: total -2^23.  Residual
 * -2^23 - (-2^22 - 2^23) = +2^22: the two roundings overlap (the reduce
 * alone already loses the 2^-24 that the multiply would have lost).
 * The reduce that sums the squares dominates, with half the error mass
 * 2^23 + 2^22 + 2^22; the multiply a quarter, the residual a quarter.
 */
static void test_variance_cancellation(void **state)
{
	static const char text[] =
		"HloModule variance\n"
		"sum_sq {\n"
		"  p = f32[] parameter(0)\n"
		"  q = f32[] parameter(1)\n"
		"  ROOT r = f32[] add(p, q)\n"
		"}\n"
		"sum_x {\n"
		"  p.1 = f32[] parameter(0)\n"
		"  q.1 = f32[] parameter(1)\n"
		"  ROOT r.1 = f32[] add(p.1, q.1)\n"
		"}\n"
		"ENTRY e {\n"
		"  x = f32[2] parameter(0)\n"
		"  sq = f32[2] multiply(x, x)\n"
		"  zero = f32[] constant(0)\n"
		"  s2 = f32[] reduce(sq, zero), dimensions={0}, "
		"to_apply=sum_sq\n"
		"  s1 = f32[] reduce(x, zero), dimensions={0}, to_apply=sum_x\n"
		"  s1sq = f32[] multiply(s1, s1)\n"
		"  half = f32[] constant(0.5)\n"
		"  m = f32[] multiply(s1sq, half)\n"
		"  ROOT v = f32[] subtract(s2, m)\n"
		"}\n";
	static const uint64_t x[2] = {0x3F800800, 0x3F7FF000};
	fixture fx;
	const usc_attr_output *o;
	size_t n, isq, is2;

	(void)state;
	setup(&fx, text);
	add_input(&fx, USC_F32, 2, x);
	attribute(&fx);
	n = fx.a->op_count;
	assert_int_equal(n, 6);
	isq = op_index(fx.a, "sq");
	is2 = op_index(fx.a, "s2");
	o = &fx.a->outputs[0];
	if (o->total[0] != -0x1p23 || o->residual[0] != 0x1p22)
		fail_msg("total %a, residual %a", o->total[0],
			 o->residual[0]);
	for (size_t u = 0; u < n; u++) {
		double want = u == isq ? -0x1p22 : u == is2 ? -0x1p23 : 0;

		if (o->contrib[u] != want)
			fail_msg("%s: %a, expected %a", fx.a->ops[u].name,
				 o->contrib[u], want);
	}
	assert_int_equal(o->top_ops[0], is2);
	assert_int_equal(o->top_ops[1], isq);
	assert_int_equal(o->top_ops[2], USC_ATTR_NO_OP);
	assert_true(o->top_share[0] == 0.5);
	assert_true(o->top_share[1] == 0.25);
	assert_true(fx.a->ops[is2].share == 0.5);
	assert_true(fx.a->ops[isq].share == 0.25);
	assert_true(fx.a->residual_share == 0.25);
	teardown(&fx);
}

/*
 * Captured XLA:CPU cases: per element, sum_u c_u + residual = total.
 * Each stored figure is the double nearest an exact MPFR quantity
 * (relative error 2^-53) and this test's own sum adds one rounding per
 * term, so the identity holds within (n + 2) 2^-53 times the sum of the
 * magnitudes: 2^-45 of it bounds that for n < 254 ops.  total is also
 * checked against the reference's error computed by other code
 * (usc_ulp_error_double) from the check's oracle midpoint as a double:
 * that midpoint is within 2^-53 relative of ours (both are midpoints of
 * enclosures far narrower), which is 2^-29 ulp of f32 at most, so 2^-20
 * ulp is ample.
 */
static void check_case(const char *rel, size_t min_ops)
{
	char dir[512];
	const char *src = usc_test_src_dir();
	usc_check_request req = usc_check_request_default();
	usc_check_report *r = NULL;
	usc_attribution *a = NULL;
	usc_error err;

	snprintf(dir, sizeof dir, "%s/data/examples/%s", src,
		 rel);
	req.no_profile = true;
	if (usc_check_case(dir, &req, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_attribute(usc_hlo_file_module(r->kernel, 0), r->computation,
			  (const usc_tensor *const *)r->inputs,
			  r->input_count, NULL, &a, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_true(a->op_count >= min_ops);
	assert_int_equal(a->output_count, r->output_count);
	for (size_t i = 0; i < a->output_count; i++) {
		const usc_attr_output *o = &a->outputs[i];

		assert_int_equal(o->attributed, o->count);
		for (size_t k = 0; k < o->count; k++) {
			double s = o->residual[k], mag = fabs(o->residual[k]);
			double want;
			uint64_t bits;

			for (size_t u = 0; u < a->op_count; u++) {
				s += o->contrib[k * a->op_count + u];
				mag += fabs(o->contrib[k * a->op_count + u]);
			}
			mag += fabs(o->total[k]);
			if (fabs(s - o->total[k]) > 0x1p-45 * mag)
				fail_msg("%s output %zu element %zu: sum %a, "
					 "total %a",
					 rel, i, k, s, o->total[k]);
			assert_int_equal(usc_tensor_get_bits(
						 r->outputs[i].reference, k,
						 &bits),
					 USC_OK);
			assert_int_equal(usc_ulp_error_double(
						 o->dtype, bits,
						 r->outputs[i].oracle_mid[k],
						 &want),
					 USC_OK);
			if (fabs(o->total[k] - want) >
			    0x1p-20 + 0x1p-40 * fabs(want))
				fail_msg("%s element %zu: total %a, the "
					 "reference against the check's "
					 "oracle midpoint %a",
					 rel, k, o->total[k], want);
		}
	}
	usc_attribution_destroy(a);
	usc_check_report_destroy(r);
}

static void test_layer_norm_case(void **state)
{
	(void)state;
	check_case("layer_norm_bf16/normal_s0", 5);
}

static void test_softmax_case(void **state)
{
	(void)state;
	check_case("softmax_f16/uniform_s0", 3);
}

/*
 * The result file: usc_check_write stores the attribution that the report
 * points at, and the reader gives back every stored figure bit for bit.
 */
static void test_roundtrip(void **state)
{
	char dir[512], path[64];
	const char *src = usc_test_src_dir();
	usc_check_request req = usc_check_request_default();
	usc_check_report *r = NULL;
	usc_attribution *a = NULL;
	usc_results_reader *rd = NULL;
	usc_results_kernel_info *ki = NULL;
	usc_results_output_data *od = NULL;
	const usc_results_attribution *ra;
	usc_error err;

	(void)state;
	snprintf(dir, sizeof dir, "%s/data/examples/softmax_f16/uniform_s0",
		 src);
	snprintf(path, sizeof path, "attr_roundtrip_%ld.h5", (long)getpid());
	req.no_profile = true;
	if (usc_check_case(dir, &req, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_attribute(usc_hlo_file_module(r->kernel, 0), r->computation,
			  (const usc_tensor *const *)r->inputs,
			  r->input_count, NULL, &a, &err) != USC_OK)
		fail_msg("%s", err.message);
	r->attribution = a;
	if (usc_check_write(r, path, false, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_results_open(path, &rd, &err) != USC_OK ||
	    usc_results_read_kernel(rd, r->kernel_name, &ki, &err) !=
		    USC_OK ||
	    usc_results_read_output(rd, r->kernel_name, 0, &od, &err) !=
		    USC_OK)
		fail_msg("%s", err.message);
	ra = ki->attribution;
	assert_non_null(ra);
	assert_int_equal(ra->op_count, a->op_count);
	assert_int_equal(ra->top_k, 3);
	assert_int_equal(ra->precision, 128);
	assert_int_equal(ra->attributed, a->attributed);
	assert_memory_equal(&ra->residual_share, &a->residual_share,
			    sizeof(double));
	for (size_t u = 0; u < a->op_count; u++) {
		assert_int_equal(ra->ops[u].op.index, u);
		assert_string_equal(ra->ops[u].op.name, a->ops[u].name);
		assert_string_equal(ra->ops[u].op.opcode, a->ops[u].opcode);
		assert_string_equal(ra->ops[u].op.source_file,
				    a->ops[u].source_file ? a->ops[u].source_file
							  : "");
		assert_int_equal(ra->ops[u].op.source_line,
				 a->ops[u].source_line);
		assert_memory_equal(&ra->ops[u].mean_abs, &a->ops[u].mean_abs,
				    sizeof(double));
		assert_memory_equal(&ra->ops[u].max_abs, &a->ops[u].max_abs,
				    sizeof(double));
		assert_memory_equal(&ra->ops[u].share, &a->ops[u].share,
				    sizeof(double));
	}
	assert_int_equal(od->top_k, 3);
	assert_memory_equal(od->top_ops, a->outputs[0].top_ops,
			    od->count * 3 * sizeof(uint32_t));
	assert_memory_equal(od->top_contrib, a->outputs[0].top_contrib,
			    od->count * 3 * sizeof(double));
	assert_memory_equal(od->attr_total, a->outputs[0].total,
			    od->count * sizeof(double));
	assert_memory_equal(od->attr_residual, a->outputs[0].residual,
			    od->count * sizeof(double));
	usc_results_output_data_free(od);
	usc_results_kernel_info_free(ki);
	usc_results_reader_close(rd);
	remove(path);
	usc_attribution_destroy(a);
	usc_check_report_destroy(r);
}

/* The cap on ops: a clear error, naming the count. */
static void test_cap(void **state)
{
	static const char text[] =
		"HloModule p1m1\n"
		"ENTRY e {\n"
		"  x = bf16[2] parameter(0)\n"
		"  a = bf16[2] add(x, x)\n"
		"  ROOT s = bf16[2] multiply(a, x)\n"
		"}\n";
	static const uint64_t x[2] = {0x3B00, 0x3F00};
	usc_attr_options opt = usc_attr_options_default();
	usc_hlo_module *m;
	fixture fx;
	usc_error err;

	(void)state;
	setup(&fx, text);
	add_input(&fx, USC_BF16, 2, x);
	m = usc_hlo_file_module(fx.f, 0);
	opt.max_ops = 1;
	assert_int_equal(usc_attribute(m, m->entry,
				       (const usc_tensor *const *)fx.in,
				       fx.nin, &opt, &fx.a, &err),
			 USC_ERANGE);
	assert_non_null(strstr(err.message, "2 ops that round"));
	assert_null(fx.a);
	teardown(&fx);
}

/*
 * Fusions nested 100,000 deep: the walk that collects the ops recursed
 * once per level and overflowed the stack; it now stops at the
 * evaluator's bound of 64 levels with a message naming the instruction:
 * the fusion r of n64, which would enter a 65th level.  Below, n[i]'s r
 * is on line 8 + 4 (i - 1): n64's on line 260, at column 8.
 */
static void test_deep_nesting(void **state)
{
	enum { DEPTH = 100000 };
	size_t cap = 128 * (DEPTH + 4), at = 0;
	char *text = malloc(cap);
	static const uint64_t x[2] = {0x3F80, 0x4000};
	usc_hlo_module *m;
	fixture fx;
	usc_error err;

	(void)state;
	assert_non_null(text);
	at += (size_t)snprintf(text + at, cap - at,
			       "HloModule nest\nENTRY main {\n"
			       "  x = bf16[2] parameter(0)\n"
			       "  ROOT f = bf16[2] fusion(x), kind=kLoop, "
			       "calls=n1\n}\n");
	for (int i = 1; i < DEPTH; i++)
		at += (size_t)snprintf(text + at, cap - at,
				       "n%d {\n  p = bf16[2] parameter(0)\n"
				       "  ROOT r = bf16[2] fusion(p), kind=kLoop, "
				       "calls=n%d\n}\n",
				       i, i + 1);
	snprintf(text + at, cap - at,
		 "n%d {\n  p = bf16[2] parameter(0)\n"
		 "  ROOT r = bf16[2] multiply(p, p)\n}\n",
		 DEPTH);
	setup(&fx, text);
	free(text);
	add_input(&fx, USC_BF16, 2, x);
	m = usc_hlo_file_module(fx.f, 0);
	assert_int_equal(usc_attribute(m, m->entry,
				       (const usc_tensor *const *)fx.in,
				       fx.nin, NULL, &fx.a, &err),
			 USC_EUNSUPPORTED);
	assert_string_equal(err.message,
			    "attribution: computations nested more than 64 "
			    "deep at 260:8 (instruction 'r')");
	assert_null(fx.a);
	teardown(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_op),
		cmocka_unit_test(test_plus_one_minus_one),
		cmocka_unit_test(test_variance_cancellation),
		cmocka_unit_test(test_layer_norm_case),
		cmocka_unit_test(test_softmax_case),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
