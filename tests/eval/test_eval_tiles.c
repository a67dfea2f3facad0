/*
 * Streamed evaluation of loop computations: evaluated tile by tile, a
 * kernel gives exactly the values it gives whole (the identity the
 * streaming rests on), in every domain, with tiles that divide the
 * output and tiles that leave a partial last one, through a fusion and
 * as the entry itself.  Kernels that do not qualify (a reduce inside)
 * evaluate whole and give the same values too.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/eval.h"

#define ROWS 6
#define COLS 150 /* 900 elements */

/* A loop fusion: clamp(exp(x * 0.5 - c), 0, 4) in bf16, select on x > 0. */
static const char fused[] =
	"HloModule tiles\n"
	"\n"
	"fused {\n"
	"  x = f32[6,150]{1,0} parameter(0)\n"
	"  c = f32[] parameter(1)\n"
	"  half = f32[] constant(0.5)\n"
	"  hb = f32[6,150]{1,0} broadcast(half), dimensions={}\n"
	"  cb = f32[6,150]{1,0} broadcast(c), dimensions={}\n"
	"  m = f32[6,150]{1,0} multiply(x, hb)\n"
	"  s = f32[6,150]{1,0} subtract(m, cb)\n"
	"  e = f32[6,150]{1,0} exponential(s)\n"
	"  zero = f32[] constant(0)\n"
	"  four = f32[] constant(4)\n"
	"  k = f32[6,150]{1,0} clamp(zero, e, four)\n"
	"  zb = f32[6,150]{1,0} broadcast(zero), dimensions={}\n"
	"  p = pred[6,150]{1,0} compare(x, zb), direction=GT\n"
	"  sel = f32[6,150]{1,0} select(p, k, x)\n"
	"  ROOT r = bf16[6,150]{1,0} convert(sel)\n"
	"}\n"
	"\n"
	"ENTRY main {\n"
	"  x = f32[6,150]{1,0} parameter(0)\n"
	"  c = f32[] parameter(1)\n"
	"  ROOT f = bf16[6,150]{1,0} fusion(x, c), kind=kLoop, calls=fused\n"
	"}\n";

/* The same ops in the entry, after a row reduce: not a loop computation. */
static const char mixed[] =
	"HloModule mixed\n"
	"\n"
	"add_f32 {\n"
	"  a = f32[] parameter(0)\n"
	"  b = f32[] parameter(1)\n"
	"  ROOT s = f32[] add(a, b)\n"
	"}\n"
	"\n"
	"ENTRY main {\n"
	"  x = f32[6,150]{1,0} parameter(0)\n"
	"  c = f32[] parameter(1)\n"
	"  zero = f32[] constant(0)\n"
	"  sum = f32[6]{0} reduce(x, zero), dimensions={1}, to_apply=add_f32\n"
	"  sb = f32[6,150]{1,0} broadcast(sum), dimensions={0}\n"
	"  cb = f32[6,150]{1,0} broadcast(c), dimensions={}\n"
	"  d = f32[6,150]{1,0} subtract(x, sb)\n"
	"  ROOT e = f32[6,150]{1,0} exponential(d)\n"
	"}\n";

static usc_tensor *make_x(void)
{
	static const int64_t dims[2] = {ROWS, COLS};
	usc_tensor *t = NULL;
	usc_error err;

	assert_int_equal(usc_tensor_create(USC_F32, 2, dims, &t, &err), USC_OK);
	for (uint64_t i = 0; i < ROWS * COLS; i++) {
		float v = (float)((double)(i % 97) / 8.0 - 6.0);
		uint32_t b;

		memcpy(&b, &v, sizeof b);
		usc_tensor_set_bits(t, i, b);
	}
	return t;
}

static usc_tensor *make_c(void)
{
	usc_tensor *t = NULL;
	usc_error err;
	float v = 0.75f;
	uint32_t b;

	assert_int_equal(usc_tensor_create(USC_F32, 0, NULL, &t, &err), USC_OK);
	memcpy(&b, &v, sizeof b);
	usc_tensor_set_bits(t, 0, b);
	return t;
}

/* Runs text in domain d with the given tile size; returns output 0. */
static usc_tensor *run(const char *text, usc_eval_domain d, size_t tile)
{
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *x = make_x(), *c = make_c(), *y = NULL;
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_error err;

	o.domain = d;
	o.tile_elements = tile;
	assert_int_equal(usc_hlo_parse(text, strlen(text), "t.hlo", &f, &err),
			 USC_OK);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev,
					 &err),
			 USC_OK);
	assert_int_equal(usc_eval_bind(ev, 0, x, &err), USC_OK);
	assert_int_equal(usc_eval_bind(ev, 1, c, &err), USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_eval_take_output(ev, 0, &y, &err), USC_OK);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
	usc_tensor_destroy(c);
	return y;
}

static void same_values(const char *text, usc_eval_domain d)
{
	/* 900 elements: tiles of 100 divide them, 128 and 450 do not/do. */
	static const size_t tiles[] = {100, 128, 450};
	usc_tensor *whole = run(text, d, USC_EVAL_NO_TILES);

	for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
		usc_tensor *t = run(text, d, tiles[i]);

		assert_true(usc_tensor_equal(whole, t));
		usc_tensor_destroy(t);
	}
	usc_tensor_destroy(whole);
}

static void test_reference(void **state)
{
	(void)state;
	same_values(fused, USC_DOMAIN_REFERENCE);
	same_values(mixed, USC_DOMAIN_REFERENCE);
}

static void test_tier(void **state)
{
	(void)state;
	same_values(fused, USC_DOMAIN_TIER);
}

static void test_oracle(void **state)
{
	(void)state;
	same_values(fused, USC_DOMAIN_ORACLE);
}

/* A spot value by hand: x = -6 (element 0) is not > 0, so r = bf16(-6). */
static void test_known_element(void **state)
{
	usc_tensor *y = run(fused, USC_DOMAIN_REFERENCE, 100);
	uint64_t b;

	(void)state;
	usc_tensor_get_bits(y, 0, &b);
	assert_int_equal(b, 0xc0c0); /* -6 in bf16 */
	/* x = 16/8 - 6 + ... element 56: x = 56/8 - 6 = 1, exp(0.5 - 0.75)
	 * = 0.7788007831, bf16 nearest is 0x3f47 (0.77734375). */
	usc_tensor_get_bits(y, 56, &b);
	assert_int_equal(b, 0x3f47);
	usc_tensor_destroy(y);
}

/* Every allocation of a streamed run failing in turn: ENOMEM, no leak. */
static void test_out_of_memory(void **state)
{
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *x = make_x(), *c = make_c();
	usc_hlo_file *f = NULL;
	usc_error err;
	bool done = false;
	long base;

	(void)state;
	o.tile_elements = 100;
	assert_int_equal(usc_hlo_parse(fused, strlen(fused), "t.hlo", &f, &err),
			 USC_OK);
	base = usc__alloc_live();
	for (long n = 0; n < 2000 && !done; n++) {
		usc_eval *ev = NULL;
		usc_status st;

		usc__alloc_fail_after(n);
		st = usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err);
		if (st == USC_OK)
			st = usc_eval_bind(ev, 0, x, &err);
		if (st == USC_OK)
			st = usc_eval_bind(ev, 1, c, &err);
		if (st == USC_OK)
			st = usc_eval_run(ev, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK)
			done = true;
		else
			assert_int_equal(st, USC_ENOMEM);
		usc_eval_destroy(ev);
		assert_int_equal(usc__alloc_live(), base);
	}
	assert_true(done);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
	usc_tensor_destroy(c);
}

/*
 * A cycle through forward references (found by the fuzzer: the evaluator
 * read an operand that was never computed) is an error, not a crash, even
 * when the module was not verified first.
 */
static void test_cycle(void **state)
{
	static const char text[] = "HloModule c\n"
				   "ENTRY e {\n"
				   "  p = f32[2] parameter(0)\n"
				   "  a = f32[2] add(p, b)\n"
				   "  b = f32[2] multiply(a, p)\n"
				   "  ROOT r = f32[2] negate(b)\n"
				   "}\n";
	static const int64_t dims[1] = {2};
	usc_hlo_file *f = NULL;
	usc_tensor *x = NULL;
	usc_eval *ev = NULL;
	usc_error err;
	usc_status st;

	(void)state;
	assert_int_equal(usc_hlo_parse(text, strlen(text), "c.hlo", &f, &err),
			 USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 1, dims, &x, &err),
			 USC_OK);
	st = usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev, &err);
	if (st == USC_OK) {
		assert_int_equal(usc_eval_bind(ev, 0, x, &err), USC_OK);
		st = usc_eval_run(ev, &err);
	}
	assert_int_equal(st, USC_EINVAL);
	assert_non_null(strstr(err.message, "has a cycle"));
	usc_eval_destroy(ev);
	usc_tensor_destroy(x);
	usc_hlo_file_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_tier),
		cmocka_unit_test(test_oracle),
		cmocka_unit_test(test_known_element),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_cycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
