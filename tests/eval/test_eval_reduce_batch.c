/*
 * reduce and reduce-window whose body is one add combine many output
 * elements per call of the domain (src/eval/reduce.c, "batch"): every
 * element must still get exactly its own additions in the stated order.
 * Bodies of one maximum or multiply are batched the same way.
 * The expected values are sequential float operations written out in C
 * (f32 addition in C is IEEE's, correctly rounded, as the reference's),
 * over more rows than one batch holds, with reduced dimensions that are
 * not the last, a body whose operands are swapped, a non-zero init,
 * dilated windows and padded windows whose term counts vary; and, in
 * every domain, the same reduction written out as a chain of elementwise
 * adds, which no batch touches, must give the same bits.
 */
#include "eval/eval_test_util.h"

#include <math.h>

#define ROWS 600 /* more than a batch (512 elements) */

/* A deterministic f32 value of varied sign and magnitude. */
static float value_at(size_t i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15u + 12345u;
	double m;
	int e;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 32;
	m = (double)(x & 0xffffff) / 0x1p24 + 0.5;
	e = (int)((x >> 24) % 24) - 12;
	return (float)(((x >> 60) & 1 ? -m : m) * ldexp(1, e));
}

static usc_tensor *make_input(size_t rank, const int64_t *dims, float **xs)
{
	usc_tensor *t = NULL;
	usc_error err;
	uint64_t i, n;

	if (usc_tensor_create(USC_F32, rank, dims, &t, &err) != USC_OK)
		fail_msg("tensor_create: %s", err.message);
	n = usc_tensor_count(t);
	*xs = malloc(n * sizeof **xs);
	assert_non_null(*xs);
	for (i = 0; i < n; i++) {
		uint64_t bits;

		(*xs)[i] = value_at(i);
		assert_int_equal(usc_encode_double(USC_F32, (*xs)[i], NULL,
						   &bits, NULL),
				 USC_OK);
		assert_int_equal(usc_tensor_set_bits(t, i, bits), USC_OK);
	}
	return t;
}

/* Runs text in the reference domain on one input; checks n outputs. */
static void run_expect(const char *text, usc_tensor *in, size_t n,
		       const float *want)
{
	double *w = malloc(n * sizeof *w);
	size_t i;

	assert_non_null(w);
	for (i = 0; i < n; i++)
		w[i] = want[i];
	trun(text, &in, 1, USC_F32, n, w);
	free(w);
}

static char *module_text(const char *fmt, ...)
{
	char *s = malloc(4096);
	va_list ap;

	assert_non_null(s);
	va_start(ap, fmt);
	vsnprintf(s, 4096, fmt, ap);
	va_end(ap);
	return s;
}

static const char *add_body = "add {\n"
			      "  a = f32[] parameter(0)\n"
			      "  b = f32[] parameter(1)\n"
			      "  ROOT s = f32[] add(a, b)\n"
			      "}\n";
static const char *add_swapped = "add {\n"
				 "  a = f32[] parameter(0)\n"
				 "  b = f32[] parameter(1)\n"
				 "  ROOT s = f32[] add(b, a)\n"
				 "}\n";

/* Reduce over the last dimension, ROWS outputs, init 0.1. */
static void test_reduce_rows(void **state)
{
	float *x, want[ROWS];
	usc_tensor *in;
	char *text;
	int swapped;

	(void)state;
	for (swapped = 0; swapped < 2; swapped++) {
		in = make_input(2, D(ROWS, 40), &x);
		for (size_t r = 0; r < ROWS; r++) {
			float acc = 0.1f;

			for (size_t j = 0; j < 40; j++)
				acc = acc + x[r * 40 + j];
			want[r] = acc;
		}
		text = module_text(
			"%sENTRY main {\n"
			"  p = f32[%d,40] parameter(0)\n"
			"  z = f32[] constant(0.1)\n"
			"  ROOT r = f32[%d] reduce(p, z), dimensions={1}, "
			"to_apply=add\n"
			"}\n",
			swapped ? add_swapped : add_body, ROWS, ROWS);
		run_expect(text, in, ROWS, want);
		free(text);
		free(x);
	}
}

/* Reduce over the first dimension and over two of three. */
static void test_reduce_strided(void **state)
{
	float *x, want[ROWS];
	usc_tensor *in;
	char *text;

	(void)state;
	in = make_input(2, D(40, ROWS), &x);
	for (size_t c = 0; c < ROWS; c++) {
		float acc = 0;

		for (size_t j = 0; j < 40; j++)
			acc = acc + x[j * ROWS + c];
		want[c] = acc;
	}
	text = module_text("%sENTRY main {\n"
			   "  p = f32[40,%d] parameter(0)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[%d] reduce(p, z), dimensions={0}, "
			   "to_apply=add\n"
			   "}\n",
			   add_body, ROWS, ROWS);
	run_expect(text, in, ROWS, want);
	free(text);
	free(x);

	/* f32[6,50,7] over {0,2}: row-major over (a, c) for each b. */
	in = make_input(3, D(6, 50, 7), &x);
	for (size_t b = 0; b < 50; b++) {
		float acc = 0;

		for (size_t a = 0; a < 6; a++)
			for (size_t c = 0; c < 7; c++)
				acc = acc + x[(a * 50 + b) * 7 + c];
		want[b] = acc;
	}
	text = module_text("%sENTRY main {\n"
			   "  p = f32[6,50,7] parameter(0)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[50] reduce(p, z), dimensions={0,2}, "
			   "to_apply=add\n"
			   "}\n",
			   add_body);
	run_expect(text, in, 50, want);
	free(text);
	free(x);
}

/*
 * reduce-window over f32[ROWS,W] with windows 1 x size in the second
 * dimension (stride, rhs dilation, low and high padding): positions on
 * padding are left out of the sum (docs/evaluator.md).
 */
static void window_case(int64_t W, int64_t size, int64_t stride,
			int64_t dil, int64_t plo, int64_t phi)
{
	int64_t ow = (W + plo + phi - ((size - 1) * dil + 1)) / stride + 1;
	float *x, *want = malloc((size_t)(ROWS * ow) * sizeof *want);
	usc_tensor *in;
	char *text;

	assert_non_null(want);
	in = make_input(2, D(ROWS, W), &x);
	for (int64_t r = 0; r < ROWS; r++)
		for (int64_t o = 0; o < ow; o++) {
			float acc = 0.25f;

			for (int64_t k = 0; k < size; k++) {
				int64_t p = o * stride - plo + k * dil;

				if (p >= 0 && p < W)
					acc = acc + x[r * W + p];
			}
			want[r * ow + o] = acc;
		}
	text = module_text("%sENTRY main {\n"
			   "  p = f32[%d,%lld] parameter(0)\n"
			   "  z = f32[] constant(0.25)\n"
			   "  ROOT r = f32[%d,%lld] reduce-window(p, z), "
			   "window={size=1x%lld stride=1x%lld pad=0_0x%lld_%lld "
			   "rhs_dilate=1x%lld}, to_apply=add\n"
			   "}\n",
			   add_body, ROWS, (long long)W, ROWS, (long long)ow,
			   (long long)size, (long long)stride, (long long)plo,
			   (long long)phi, (long long)dil);
	run_expect(text, in, (size_t)(ROWS * ow), want);
	free(text);
	free(x);
	free(want);
}

static void test_reduce_window(void **state)
{
	(void)state;
	window_case(64, 8, 8, 1, 0, 0); /* the norms' row chunks */
	window_case(64, 4, 8, 2, 0, 0); /* dilated, still inside */
	window_case(8, 4, 2, 1, 1, 1);  /* 3, 4, 4, 3 terms */
	window_case(9, 3, 1, 1, 2, 0);  /* 1, 2, 3, 3 ... terms */
}

/*
 * Bodies of one other binary op are batched too: a maximum over rows
 * (init -inf) and a product over windows of four (init 1), against C's
 * float comparisons and products.
 */
static void test_reduce_other_bodies(void **state)
{
	float *x, want[ROWS * 4];
	usc_tensor *in;
	char *text;

	(void)state;
	in = make_input(2, D(ROWS, 40), &x);
	for (size_t r = 0; r < ROWS; r++) {
		float acc = -INFINITY;

		for (size_t j = 0; j < 40; j++)
			acc = x[r * 40 + j] > acc ? x[r * 40 + j] : acc;
		want[r] = acc;
	}
	text = module_text("max {\n"
			   "  a = f32[] parameter(0)\n"
			   "  b = f32[] parameter(1)\n"
			   "  ROOT m = f32[] maximum(a, b)\n"
			   "}\n"
			   "ENTRY main {\n"
			   "  p = f32[%d,40] parameter(0)\n"
			   "  z = f32[] constant(-inf)\n"
			   "  ROOT r = f32[%d] reduce(p, z), dimensions={1}, "
			   "to_apply=max\n"
			   "}\n",
			   ROWS, ROWS);
	run_expect(text, in, ROWS, want);
	free(text);
	free(x);

	in = make_input(2, D(ROWS, 16), &x);
	for (size_t r = 0; r < ROWS; r++)
		for (size_t o = 0; o < 4; o++) {
			float acc = 1;

			for (size_t k = 0; k < 4; k++)
				acc = acc * x[r * 16 + o * 4 + k];
			want[r * 4 + o] = acc;
		}
	text = module_text("mul {\n"
			   "  a = f32[] parameter(0)\n"
			   "  b = f32[] parameter(1)\n"
			   "  ROOT m = f32[] multiply(a, b)\n"
			   "}\n"
			   "ENTRY main {\n"
			   "  p = f32[%d,16] parameter(0)\n"
			   "  one = f32[] constant(1)\n"
			   "  ROOT r = f32[%d,4] reduce-window(p, one), "
			   "window={size=1x4 stride=1x4}, to_apply=mul\n"
			   "}\n",
			   ROWS, ROWS);
	run_expect(text, in, ROWS * 4, want);
	free(text);
	free(x);
}

/*
 * In every domain but the envelope (which needs a profile), a reduce of
 * balls (p times 0.1, inexact in the tier and the oracle) and the same
 * sum written out as elementwise adds of slices give the same bits.
 */
static void test_reduce_as_chain(void **state)
{
	static const usc_eval_domain doms[] = {
		USC_DOMAIN_REFERENCE, USC_DOMAIN_ORACLE, USC_DOMAIN_TIER,
		USC_DOMAIN_F64};
	char *head, *red, *chain;
	size_t d, i;

	(void)state;
	head = module_text("  p = f32[%d,4] parameter(0)\n"
			   "  c = f32[] constant(0.1)\n"
			   "  cb = f32[%d,4] broadcast(c), dimensions={}\n"
			   "  x = f32[%d,4] multiply(p, cb)\n"
			   "  z = f32[] constant(0.3)\n",
			   ROWS, ROWS, ROWS);
	red = module_text("%sENTRY main {\n%s"
			  "  ROOT r = f32[%d] reduce(x, z), dimensions={1}, "
			  "to_apply=add\n"
			  "}\n",
			  add_body, head, ROWS);
	chain = module_text(
		"ENTRY main {\n%s"
		"  zb = f32[%d] broadcast(z), dimensions={}\n"
		"  s0 = f32[%d,1] slice(x), slice={[0:%d], [0:1]}\n"
		"  s1 = f32[%d,1] slice(x), slice={[0:%d], [1:2]}\n"
		"  s2 = f32[%d,1] slice(x), slice={[0:%d], [2:3]}\n"
		"  s3 = f32[%d,1] slice(x), slice={[0:%d], [3:4]}\n"
		"  r0 = f32[%d] reshape(s0)\n"
		"  r1 = f32[%d] reshape(s1)\n"
		"  r2 = f32[%d] reshape(s2)\n"
		"  r3 = f32[%d] reshape(s3)\n"
		"  a0 = f32[%d] add(zb, r0)\n"
		"  a1 = f32[%d] add(a0, r1)\n"
		"  a2 = f32[%d] add(a1, r2)\n"
		"  ROOT a3 = f32[%d] add(a2, r3)\n"
		"}\n",
		head, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS,
		ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS);
	for (d = 0; d < ARRAY_LEN(doms); d++) {
		usc_eval_options o = usc_eval_options_default();
		usc_hlo_file *f1, *f2;
		usc_eval *e1, *e2;
		const usc_tensor *y1, *y2;
		usc_tensor *in;
		usc_error err;
		float *x;

		o.domain = doms[d];
		in = make_input(2, D(ROWS, 4), &x);
		e1 = tcreate(red, &f1, &o);
		e2 = tcreate(chain, &f2, &o);
		assert_int_equal(usc_eval_bind(e1, 0, in, &err), USC_OK);
		assert_int_equal(usc_eval_bind(e2, 0, in, &err), USC_OK);
		assert_int_equal(usc_eval_run(e1, &err), USC_OK);
		assert_int_equal(usc_eval_run(e2, &err), USC_OK);
		assert_int_equal(usc_eval_output(e1, 0, &y1, &err), USC_OK);
		assert_int_equal(usc_eval_output(e2, 0, &y2, &err), USC_OK);
		for (i = 0; i < ROWS; i++) {
			uint64_t b1, b2;

			assert_int_equal(usc_tensor_get_bits(y1, i, &b1),
					 USC_OK);
			assert_int_equal(usc_tensor_get_bits(y2, i, &b2),
					 USC_OK);
			if (b1 != b2)
				fail_msg("domain %zu element %zu: reduce 0x%llx, "
					 "chain 0x%llx",
					 d, i, (unsigned long long)b1,
					 (unsigned long long)b2);
		}
		usc_eval_destroy(e1);
		usc_eval_destroy(e2);
		usc_hlo_file_destroy(f1);
		usc_hlo_file_destroy(f2);
		usc_tensor_destroy(in);
		free(x);
	}
	free(head);
	free(red);
	free(chain);
}

/*
 * An evaluator run again on other inputs reuses the large value arrays
 * of its first run (buffers.c, "spares"): the second run's values must
 * be its own.  y = reverse(x * x) + x over 2^18 f32 values (megabytes
 * of values; the reverse keeps the run from streaming in tiles), each op
 * rounded to f32 in the reference, as C's float arithmetic rounds it.
 */
static void test_rerun_reuses_arrays(void **state)
{
	static const char *text =
		"ENTRY main {\n"
		"  x = f32[262144] parameter(0)\n"
		"  s = f32[262144] multiply(x, x)\n"
		"  v = f32[262144] reverse(s), dimensions={0}\n"
		"  ROOT y = f32[262144] add(v, x)\n"
		"}\n";
	const size_t n = 262144;
	usc_hlo_file *f;
	usc_eval *ev;
	usc_error err;
	int run;

	(void)state;
	ev = tcreate(text, &f, NULL);
	for (run = 0; run < 2; run++) {
		const usc_tensor *y;
		usc_tensor *in;
		float *x;
		size_t i;

		in = make_input(1, D((int64_t)n), &x);
		/* The second run's inputs: every value negated and halved. */
		for (i = 0; run == 1 && i < n; i++) {
			uint64_t bits;

			x[i] = -x[i] / 2;
			assert_int_equal(usc_encode_double(USC_F32, x[i], NULL,
							   &bits, NULL),
					 USC_OK);
			assert_int_equal(usc_tensor_set_bits(in, i, bits),
					 USC_OK);
		}
		assert_int_equal(usc_eval_bind(ev, 0, in, &err), USC_OK);
		assert_int_equal(usc_eval_run(ev, &err), USC_OK);
		assert_int_equal(usc_eval_output(ev, 0, &y, &err), USC_OK);
		for (i = 0; i < n; i++) {
			volatile float sq = x[n - 1 - i] * x[n - 1 - i];
			float want = sq + x[i];
			double got;

			assert_int_equal(usc_tensor_get_double(y, i, &got),
					 USC_OK);
			if (got != (double)want)
				fail_msg("run %d element %zu: got %a, want %a",
					 run, i, got, (double)want);
		}
		usc_tensor_destroy(in);
		free(x);
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_rows),
		cmocka_unit_test(test_reduce_strided),
		cmocka_unit_test(test_reduce_window),
		cmocka_unit_test(test_reduce_other_bodies),
		cmocka_unit_test(test_reduce_as_chain),
		cmocka_unit_test(test_rerun_reuses_arrays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
