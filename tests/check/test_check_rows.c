/*
 * Row blocks (src/analyze/check_rows.c): which kernels split into blocks
 * of rows, and the kernel of one block.
 *
 * Hand-written kernels over [6, 4] (rows of 4): a softmax-like one (row
 * maxima by reduce-window and reduce, broadcast back), one with a shared
 * weight vector broadcast over the rows, a reshape and a transpose that
 * keep the rows first, and a tuple of two row outputs split; a dot, a
 * reduce over the rows, a shared [6] vector broadcast along the rows, a
 * transpose that moves the rows, an iota along the rows, a slice and a
 * body called twice do not.  For the ones that split, the kernel of a
 * block of 2 (and of 4, leaving a block of 2) evaluated by the strict
 * reference on rows [r0, r0 + b) of the inputs must give exactly rows
 * [r0, r0 + b) of the whole kernel's outputs: the identity that makes a
 * streamed check equal to the whole one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "analyze/check_internal.h"

#define HEAD "HloModule k\n"
#define MAX_REGION                                                          \
	"max_r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"     \
	"  ROOT m = f32[] maximum(a, b)\n}\n"

static const char softmax_like[] =
	HEAD MAX_REGION
	"fused {\n"
	"  p0 = f32[6,4]{1,0} parameter(0)\n"
	"  p1 = f32[6]{0} parameter(1)\n"
	"  b = f32[6,4]{1,0} broadcast(p1), dimensions={0}\n"
	"  s = f32[6,4]{1,0} subtract(p0, b)\n"
	"  ROOT e = f32[6,4]{1,0} exponential(s)\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[6,4]{1,0} parameter(0)\n"
	"  ninf = f32[] constant(-inf)\n"
	"  rw = f32[6,2]{1,0} reduce-window(x, ninf), window={size=1x2 "
	"stride=1x2}, to_apply=max_r\n"
	"  r = f32[6]{0} reduce(rw, ninf), dimensions={1}, to_apply=max_r\n"
	"  ROOT f = f32[6,4]{1,0} fusion(x, r), kind=kLoop, calls=fused\n"
	"}\n";

static const char shared_weight[] =
	HEAD
	"ENTRY main {\n"
	"  x = f32[6,4]{1,0} parameter(0)\n"
	"  w = f32[4]{0} parameter(1)\n"
	"  bw = f32[6,4]{1,0} broadcast(w), dimensions={1}\n"
	"  m = f32[6,4]{1,0} multiply(x, bw)\n"
	"  t = f32[6,2,2]{2,1,0} reshape(m)\n"
	"  u = f32[6,2,2]{2,1,0} transpose(t), dimensions={0,2,1}\n"
	"  c = f32[] constant(0.5)\n"
	"  bc = f32[6,2,2]{2,1,0} broadcast(c), dimensions={}\n"
	"  ROOT a = f32[6,2,2]{2,1,0} add(u, bc)\n"
	"}\n";

static const char two_outputs[] =
	HEAD
	"ENTRY main {\n"
	"  x = f32[6,4]{1,0} parameter(0)\n"
	"  y = f32[6,4]{1,0} parameter(1)\n"
	"  s = f32[6,4]{1,0} add(x, y)\n"
	"  d = f32[6,4]{1,0} divide(x, y)\n"
	"  ROOT t = (f32[6,4]{1,0}, f32[6,4]{1,0}) tuple(s, d)\n"
	"}\n";

static const char *const whole[] = {
	/* A dot mixes rows of its right side. */
	HEAD "ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  w = f32[4,4]{1,0} parameter(1)\n"
	"  ROOT d = f32[6,4]{1,0} dot(x, w), lhs_contracting_dims={1}, "
	"rhs_contracting_dims={0}\n}\n",
	/* A reduce over the rows, broadcast back. */
	HEAD MAX_REGION "ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  z = f32[] constant(0)\n"
	"  r = f32[4]{0} reduce(x, z), dimensions={0}, to_apply=max_r\n"
	"  b = f32[6,4]{1,0} broadcast(r), dimensions={1}\n"
	"  ROOT s = f32[6,4]{1,0} subtract(x, b)\n}\n",
	/* A shared vector as long as the rows, spread along them. */
	HEAD "ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  c = f32[6]{0} constant({1, 2, 3, 4, 5, 6})\n"
	"  b = f32[6,4]{1,0} broadcast(c), dimensions={0}\n"
	"  ROOT s = f32[6,4]{1,0} add(x, b)\n}\n",
	/* A transpose that moves the rows. */
	HEAD "ENTRY main {\n  x = f32[6,6]{1,0} parameter(0)\n"
	"  ROOT t = f32[6,6]{1,0} transpose(x), dimensions={1,0}\n}\n",
	/* An iota along the rows. */
	HEAD "ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  i = f32[6,4]{1,0} iota(), iota_dimension=0\n"
	"  ROOT s = f32[6,4]{1,0} add(x, i)\n}\n",
	/* A slice. */
	HEAD "ENTRY main {\n  x = f32[6,8]{1,0} parameter(0)\n"
	"  ROOT s = f32[6,4]{1,0} slice(x), slice={[0:6], [0:4]}\n}\n",
	/* One body called twice. */
	HEAD "body {\n  p = f32[6,4]{1,0} parameter(0)\n"
	"  ROOT n = f32[6,4]{1,0} negate(p)\n}\n"
	"ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  a = f32[6,4]{1,0} fusion(x), kind=kLoop, calls=body\n"
	"  ROOT b = f32[6,4]{1,0} fusion(a), kind=kLoop, calls=body\n}\n",
	/*
	 * A dead dot of the rows: the kernel of a block would shorten its
	 * operand and keep its shape, which no longer verifies.
	 */
	HEAD "ENTRY main {\n  x = f32[6,4]{1,0} parameter(0)\n"
	"  w = f32[4,4]{1,0} parameter(1)\n"
	"  d = f32[6,4]{1,0} dot(x, w), lhs_contracting_dims={1}, "
	"rhs_contracting_dims={0}\n"
	"  ROOT n = f32[6,4]{1,0} negate(x)\n}\n",
};

/* A dead op of the rows: the kernel of a block shortens it as well. */
static const char dead_rows[] =
	HEAD
	"ENTRY main {\n"
	"  x = f32[6,4]{1,0} parameter(0)\n"
	"  d = f32[6,4]{1,0} exponential(x)\n"
	"  ROOT n = f32[6,4]{1,0} negate(x)\n"
	"}\n";

static usc_hlo_file *parse(const char *text)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "k.hlo", &f, &err) != USC_OK)
		fail_msg("%s", err.message);
	return f;
}

static int64_t rows_of(const char *text)
{
	usc_hlo_file *f = parse(text);
	int64_t rows = -1;
	usc_error err;

	assert_int_equal(usc__check_rows(usc_hlo_file_module(f, 0), &rows,
					 &err),
			 USC_OK);
	usc_hlo_file_destroy(f);
	return rows;
}

static void test_whole(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
		if (rows_of(whole[i]) != 0)
			fail_msg("kernel %zu of the whole list splits", i);
}

/*
 * Input k of a kernel whose parameter has spec s: f32 values from a
 * formula of the element's index in the whole input, rows [r0, r0 + n)
 * when the parameter has the 6 rows, all of it otherwise.
 */
static usc_tensor *input(const usc_tensor_spec *s, size_t k, int64_t r0,
			 int64_t n)
{
	int64_t dims[4];
	usc_tensor *t = NULL;
	uint64_t count, row;
	usc_error err;

	memcpy(dims, s->dims, s->rank * sizeof *dims);
	if (s->rank >= 1 && dims[0] == 6)
		dims[0] = n;
	else
		r0 = 0;
	assert_int_equal(usc_tensor_create(USC_F32, s->rank, dims, &t, &err),
			 USC_OK);
	count = usc_tensor_count(t);
	row = s->rank >= 1 && dims[0] ? count / (uint64_t)dims[0] : 1;
	for (uint64_t e = 0; e < count; e++) {
		uint64_t g = (uint64_t)r0 * row + e;
		double v = (double)((g * 37 + k * 11) % 23) / 4.0 - 2.5;
		uint64_t bits;

		usc_encode_double(USC_F32, v, NULL, &bits, NULL);
		usc_tensor_set_bits(t, e, bits);
	}
	return t;
}

/*
 * Runs the kernel whose entry is c on rows [r0, r0 + n) of the inputs,
 * whose whole shapes are those of the parameters of whole_c.
 */
static usc_eval *run(const usc_hlo_computation *whole_c,
		     const usc_hlo_computation *c, int64_t r0, int64_t n,
		     usc_tensor **in)
{
	usc_eval *ev = NULL, *shapes = NULL;
	usc_error err;
	size_t np;

	assert_int_equal(usc_eval_create_computation(whole_c, NULL, &shapes,
						     &err),
			 USC_OK);
	np = usc_eval_param_count(shapes);
	assert_true(np <= 4);
	for (size_t k = 0; k < np; k++) {
		usc_tensor_spec spec;

		assert_int_equal(usc_eval_param_spec(shapes, k, &spec, &err),
				 USC_OK);
		in[k] = input(&spec, k, r0, n);
	}
	usc_eval_destroy(shapes);
	assert_int_equal(usc_eval_create_computation(c, NULL, &ev, &err),
			 USC_OK);
	assert_int_equal(usc_eval_bind_all(ev, (const usc_tensor *const *)in,
					   np, &err),
			 USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("%s", err.message);
	return ev;
}

static void check_blocks(const char *text, int64_t block)
{
	usc_hlo_file *f = parse(text);
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	usc_tensor *win[4] = {0}, *bin[4] = {0};
	usc_eval *whole_ev;
	int64_t rows = 0;
	usc_error err;

	assert_int_equal(usc__check_rows(m, &rows, &err), USC_OK);
	assert_int_equal(rows, 6);
	whole_ev = run(m->entry, m->entry, 0, 6, win);
	for (int64_t r0 = 0; r0 < 6; r0 += block) {
		int64_t nb = 6 - r0 < block ? 6 - r0 : block;
		usc_hlo_file *bf = NULL;
		usc_eval *bev;

		assert_int_equal(usc__check_rows_module(m, 6, nb, &bf, &err),
				 USC_OK);
		bev = run(m->entry, usc_hlo_file_module(bf, 0)->entry, r0, nb,
			  bin);
		assert_int_equal(usc_eval_output_count(bev),
				 usc_eval_output_count(whole_ev));
		for (size_t i = 0; i < usc_eval_output_count(bev); i++) {
			const usc_tensor *a = NULL, *b = NULL;
			uint64_t per;

			assert_int_equal(usc_eval_output(whole_ev, i, &a, &err),
					 USC_OK);
			assert_int_equal(usc_eval_output(bev, i, &b, &err),
					 USC_OK);
			assert_int_equal(usc_tensor_dims(b)[0], nb);
			per = usc_tensor_count(a) / 6;
			assert_int_equal(usc_tensor_count(b), per * (uint64_t)nb);
			for (uint64_t e = 0; e < usc_tensor_count(b); e++) {
				uint64_t x, y;

				usc_tensor_get_bits(a, (uint64_t)r0 * per + e,
						    &x);
				usc_tensor_get_bits(b, e, &y);
				assert_int_equal(x, y);
			}
		}
		usc_eval_destroy(bev);
		for (size_t k = 0; k < 4; k++) {
			usc_tensor_destroy(bin[k]);
			bin[k] = NULL;
		}
		usc_hlo_file_destroy(bf);
	}
	usc_eval_destroy(whole_ev);
	for (size_t k = 0; k < 4; k++)
		usc_tensor_destroy(win[k]);
	usc_hlo_file_destroy(f);
}

static void test_blocks(void **state)
{
	(void)state;
	check_blocks(softmax_like, 2);
	check_blocks(softmax_like, 4);
	check_blocks(shared_weight, 2);
	check_blocks(shared_weight, 4);
	check_blocks(two_outputs, 4);
	check_blocks(dead_rows, 2);
}

/*
 * A chain of n negates over [2, 1] (rows of one element) in a fusion, its
 * lines in order or, with reversed, root first (HLO allows operands
 * defined later); *len receives the text's length.
 */
static char *chain_text(size_t n, bool reversed, size_t *len)
{
	size_t cap = 64 * (n + 8), at = 0;
	char *t = malloc(cap);

	assert_non_null(t);
	at += (size_t)snprintf(t + at, cap - at,
			       "HloModule chain\nbody {\n"
			       "  c0 = f32[2,1]{1,0} parameter(0)\n");
	for (size_t k = 1; k <= n; k++) {
		size_t i = reversed ? n + 1 - k : k;

		at += (size_t)snprintf(t + at, cap - at,
				       "  %sc%zu = f32[2,1]{1,0} negate(c%zu)\n",
				       i == n ? "ROOT " : "", i, i - 1);
	}
	at += (size_t)snprintf(t + at, cap - at,
			       "}\nENTRY main {\n"
			       "  x = f32[2,1]{1,0} parameter(0)\n"
			       "  ROOT f = f32[2,1]{1,0} fusion(x), kind=kLoop, "
			       "calls=body\n}\n");
	*len = at;
	return t;
}

/*
 * A chain of a million ops is judged without a stack frame per op (it
 * overflowed the stack at about 700,000 ops, 50,000 under ASan), in text
 * order and in reverse: both split into rows.
 */
static void test_deep_chain(void **state)
{
	(void)state;
	for (int reversed = 0; reversed < 2; reversed++) {
		size_t len;
		char *text = chain_text(1000000, reversed, &len);
		usc_hlo_file *f = NULL;
		int64_t rows = -1;
		usc_error err;

		if (usc_hlo_parse(text, len, "chain.hlo", &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		free(text);
		if (usc__check_rows(usc_hlo_file_module(f, 0), &rows, &err) !=
		    USC_OK)
			fail_msg("%s", err.message);
		assert_int_equal(rows, 2);
		usc_hlo_file_destroy(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_deep_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
