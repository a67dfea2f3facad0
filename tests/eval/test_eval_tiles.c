/*
 * Streamed evaluation of loop computations: evaluated tile by tile, a
 * kernel gives exactly the values it gives whole (the identity the
 * streaming rests on), in every domain, with tiles that divide the
 * output and tiles that leave a partial last one, through a fusion and
 * as the entry itself.  Kernels that do not qualify (a reduce inside)
 * evaluate whole and give the same values too.
 *
 * At the top of a run the parameters are loaded and the outputs handed
 * over a tile at a time (usc__eval_run_stream): the domain values a
 * visitor receives are those of a whole evaluation, element for element
 * (compared field by field, MPFI endpoints by mpfr_equal_p), also for
 * broadcasts of non-scalar parameters whose tiles wrap around rows or run
 * transposed; a subset run evaluates exactly the tiles that hold a wanted
 * element.
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
#include "ulpscope/eval.h"

#include "eval/eval_values.h"
#include "oracles/oracle.h"
#include "oracles/tier.h"

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

/*
 * Broadcasts of parameters that are not scalars: a row vector (its tiles
 * wrap around rows), a column vector, a transposing broadcast of a [150,6]
 * parameter (indices run backwards inside a tile), and x read both
 * elementwise and through an identity broadcast.
 */
static const char bcast[] =
	"HloModule bcast\n"
	"\n"
	"ENTRY main {\n"
	"  x = f32[6,150]{1,0} parameter(0)\n"
	"  c = f32[] parameter(1)\n"
	"  row = f32[150]{0} parameter(2)\n"
	"  col = f32[6]{0} parameter(3)\n"
	"  t = f32[150,6]{1,0} parameter(4)\n"
	"  rb = f32[6,150]{1,0} broadcast(row), dimensions={1}\n"
	"  cb = f32[6,150]{1,0} broadcast(col), dimensions={0}\n"
	"  tb = f32[6,150]{1,0} broadcast(t), dimensions={1,0}\n"
	"  xb = f32[6,150]{1,0} broadcast(x), dimensions={0,1}\n"
	"  a = f32[6,150]{1,0} add(x, rb)\n"
	"  m = f32[6,150]{1,0} multiply(a, cb)\n"
	"  s = f32[6,150]{1,0} subtract(m, tb)\n"
	"  e = f32[6,150]{1,0} tanh(s)\n"
	"  z = f32[6,150]{1,0} add(e, xb)\n"
	"  ROOT r = f32[6,150]{1,0} clamp(c, z, x)\n"
	"}\n";

/* Parameter i of the kernels above, made from its spec. */
static usc_tensor *make_param(const usc_eval *ev, size_t i)
{
	usc_tensor_spec spec;
	usc_tensor *t = NULL;
	usc_error err;

	assert_int_equal(usc_eval_param_spec(ev, i, &spec, &err), USC_OK);
	assert_int_equal(usc_tensor_create(spec.dtype, spec.rank, spec.dims,
					   &t, &err),
			 USC_OK);
	for (uint64_t k = 0; k < usc_tensor_count(t); k++) {
		/* Distinct small values per parameter, exact in f32. */
		float v = i == 1 ? -0.75f
				 : (float)((double)((k * 7 + i * 13) % 101) /
						   16.0 -
					   3.0);
		uint32_t b;

		memcpy(&b, &v, sizeof b);
		usc_tensor_set_bits(t, k, b);
	}
	return t;
}

typedef struct runner {
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *p[5];
	size_t np;
} runner;

static void runner_open(runner *r, const char *text, usc_eval_domain d,
			size_t tile)
{
	usc_eval_options o = usc_eval_options_default();
	usc_error err;

	memset(r, 0, sizeof *r);
	o.domain = d;
	o.tile_elements = tile;
	assert_int_equal(usc_hlo_parse(text, strlen(text), "t.hlo", &r->f,
				       &err),
			 USC_OK);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(r->f, 0), &o,
					 &r->ev, &err),
			 USC_OK);
	r->np = usc_eval_param_count(r->ev);
	assert_true(r->np <= 5);
	for (size_t i = 0; i < r->np; i++) {
		r->p[i] = make_param(r->ev, i);
		assert_int_equal(usc_eval_bind(r->ev, i, r->p[i], &err),
				 USC_OK);
	}
}

static void runner_close(runner *r)
{
	usc_eval_destroy(r->ev);
	for (size_t i = 0; i < r->np; i++)
		usc_tensor_destroy(r->p[i]);
	usc_hlo_file_destroy(r->f);
}

/* Whether two domain values are the same value, field by field. */
static bool same_value(usc_eval_domain d, const void *a, const void *b)
{
	if (d == USC_DOMAIN_REFERENCE)
		return memcmp(a, b, sizeof(uint64_t)) == 0;
	if (d == USC_DOMAIN_TIER) {
		const usc__tier_value *x = a, *y = b;

		return memcmp(&x->mid, &y->mid, sizeof x->mid) == 0 &&
		       memcmp(&x->rad, &y->rad, sizeof x->rad) == 0 &&
		       x->bits == y->bits && x->kind == y->kind &&
		       x->flags == y->flags;
	} else {
		const usc__oracle_value *x = a, *y = b;
		bool lo = mpfr_equal_p(&x->x->left, &y->x->left) ||
			  (mpfr_nan_p(&x->x->left) && mpfr_nan_p(&y->x->left));
		bool hi = mpfr_equal_p(&x->x->right, &y->x->right) ||
			  (mpfr_nan_p(&x->x->right) &&
			   mpfr_nan_p(&y->x->right));

		return lo && hi && x->bits == y->bits && x->kind == y->kind &&
		       x->flags == y->flags;
	}
}

/* A visitor that compares every element with a whole run's values. */
typedef struct compare_ctx {
	usc_eval_domain d;
	size_t value_size;
	const unsigned char *whole;
	size_t count;
	usc_dtype dtype;
	unsigned char *seen;
	size_t visits, elements, fail_at; /* fail_at: fail that visit */
} compare_ctx;

static usc_status compare_visit(void *ctx, size_t output, size_t first,
				size_t count, const void *values,
				usc_dtype dtype, usc_error *err)
{
	compare_ctx *c = ctx;

	if (++c->visits == c->fail_at) {
		snprintf(err->message, sizeof err->message, "visitor says no");
		err->code = USC_EINVAL;
		return USC_EINVAL;
	}
	assert_int_equal(output, 0);
	assert_int_equal(dtype, c->dtype);
	assert_true(first + count <= c->count);
	for (size_t j = 0; j < count; j++) {
		const unsigned char *v =
			(const unsigned char *)values + j * c->value_size;

		assert_int_equal(c->seen[first + j], 0);
		c->seen[first + j] = 1;
		if (!same_value(c->d, v, c->whole + (first + j) * c->value_size))
			fail_msg("element %zu differs", first + j);
	}
	c->elements += count;
	return USC_OK;
}

/*
 * Runs whole (a runner without tiles) and sets c up to compare a streamed
 * run's visits with its output values.
 */
static void compare_init(compare_ctx *c, runner *whole, usc_eval_domain d)
{
	const void *wv;
	size_t n;
	usc_dtype t;
	usc_error err;

	assert_int_equal(usc_eval_run(whole->ev, &err), USC_OK);
	assert_int_equal(usc__eval_output_values(whole->ev, 0, &wv, &n, &t),
			 USC_OK);
	memset(c, 0, sizeof *c);
	c->d = d;
	c->value_size = usc__eval_domain(whole->ev)->value_size;
	c->whole = wv;
	c->count = n;
	c->dtype = t;
	c->seen = calloc(n, 1);
	assert_non_null(c->seen);
}

/*
 * The kernel streamed with tile size tile, visited (and kept when keep),
 * against its whole evaluation; wanted NULL: every element.  Returns the
 * number of elements visited.
 */
static size_t stream_vs_whole(const char *text, usc_eval_domain d,
			      size_t tile, const uint8_t *wanted, bool keep)
{
	runner whole, tiled;
	const usc_tensor *wt, *tt;
	const void *wv, *kv;
	const uint8_t *maps[1] = {wanted};
	usc__eval_stream s;
	compare_ctx c;
	uint64_t elements, tiles;
	size_t n, kn;
	usc_dtype kt;
	usc_error err;

	runner_open(&whole, text, d, USC_EVAL_NO_TILES);
	runner_open(&tiled, text, d, tile);
	compare_init(&c, &whole, d);
	wv = c.whole;
	n = c.count;
	usc__eval_last_run(whole.ev, &elements, &tiles);
	assert_int_equal(elements, n);
	assert_int_equal(tiles, 0);
	memset(&s, 0, sizeof s);
	s.visit = compare_visit;
	s.ctx = &c;
	s.wanted = wanted ? maps : NULL;
	s.keep = keep;
	if (usc__eval_run_stream(tiled.ev, &s, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_eval_output(whole.ev, 0, &wt, &err), USC_OK);
	assert_int_equal(usc_eval_output(tiled.ev, 0, &tt, &err), USC_OK);
	usc__eval_last_run(tiled.ev, &elements, &tiles);
	assert_int_equal(elements, c.elements);
	for (size_t k = 0; k < n; k++) {
		uint64_t a, b;

		usc_tensor_get_bits(wt, k, &a);
		usc_tensor_get_bits(tt, k, &b);
		/* Every wanted element is visited; unvisited ones stay 0. */
		if (!wanted || wanted[k])
			assert_int_equal(c.seen[k], 1);
		assert_int_equal(b, c.seen[k] ? a : 0);
	}
	if (keep) {
		assert_int_equal(usc__eval_output_values(tiled.ev, 0, &kv, &kn,
							 &kt),
				 USC_OK);
		assert_int_equal(kn, n);
		for (size_t k = 0; k < n; k++)
			if (c.seen[k])
				assert_true(same_value(
					d,
					(const unsigned char *)kv +
						k * c.value_size,
					(const unsigned char *)wv +
						k * c.value_size));
	} else if (tiles > 0) {
		/* Streamed and not kept: the values never existed whole. */
		assert_int_equal(usc__eval_output_values(tiled.ev, 0, &kv, &kn,
							 &kt),
				 USC_ERANGE);
	}
	free(c.seen);
	runner_close(&tiled);
	runner_close(&whole);
	return c.elements;
}

static void stream_all(usc_eval_domain d)
{
	static const size_t tiles[] = {100, 128, 450};
	uint64_t elements, t;

	for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
		assert_int_equal(stream_vs_whole(fused, d, tiles[i], NULL,
						 false),
				 900);
		assert_int_equal(stream_vs_whole(bcast, d, tiles[i], NULL,
						 i == 1),
				 900);
	}
	/* The entry of bcast streams itself: 900 / 128 is 8 tiles. */
	{
		runner r;
		usc_error err;

		runner_open(&r, bcast, d, 128);
		assert_int_equal(usc_eval_run(r.ev, &err), USC_OK);
		usc__eval_last_run(r.ev, &elements, &t);
		assert_int_equal(elements, 900);
		assert_int_equal(t, 8);
		runner_close(&r);
	}
}

static void test_stream_reference(void **state)
{
	(void)state;
	stream_all(USC_DOMAIN_REFERENCE);
	/* Not a loop computation: one whole visit, whatever the tiles. */
	assert_int_equal(stream_vs_whole(mixed, USC_DOMAIN_REFERENCE, 100,
					 NULL, false),
			 900);
}

static void test_stream_tier(void **state)
{
	(void)state;
	stream_all(USC_DOMAIN_TIER);
}

static void test_stream_oracle(void **state)
{
	(void)state;
	stream_all(USC_DOMAIN_ORACLE);
}

/*
 * Subsets: wanted elements 5, 433 and 899 with tiles of 100 evaluate the
 * tiles [0, 100), [400, 500) and [800, 900) only; a computation that does
 * not stream evaluates (and visits) everything.
 */
static void test_subset(void **state)
{
	static const usc_eval_domain doms[3] = {
		USC_DOMAIN_REFERENCE, USC_DOMAIN_TIER, USC_DOMAIN_ORACLE};
	uint8_t wanted[ROWS * COLS];

	(void)state;
	memset(wanted, 0, sizeof wanted);
	wanted[5] = wanted[433] = wanted[899] = 1;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(stream_vs_whole(bcast, doms[i], 100, wanted,
						 i == 2),
				 300);
		assert_int_equal(stream_vs_whole(fused, doms[i], 100, wanted,
						 false),
				 300);
	}
	/* 128: tiles [0, 128), [384, 512), [896, 900): 260 elements. */
	assert_int_equal(stream_vs_whole(fused, USC_DOMAIN_TIER, 128, wanted,
					 true),
			 260);
	assert_int_equal(stream_vs_whole(mixed, USC_DOMAIN_REFERENCE, 100,
					 wanted, false),
			 900);
	/* Nothing wanted: nothing evaluated, nothing visited. */
	memset(wanted, 0, sizeof wanted);
	assert_int_equal(stream_vs_whole(bcast, USC_DOMAIN_ORACLE, 100,
					 wanted, false),
			 0);
}

/*
 * A range: [first, first + count) with tiles of 100 evaluates the tiles
 * that hold its elements only (a range starting inside a tile takes the
 * whole tile), the wanted map is read from first, and with no_tensor the
 * run keeps no output tensor.  A computation that does not stream
 * ignores the range.
 */
static size_t range_visits(const char *text, usc_eval_domain d, size_t first,
			   size_t count, const uint8_t *wanted, bool no_tensor,
			   size_t *lo, size_t *hi)
{
	runner whole, tiled;
	const uint8_t *maps[1] = {wanted};
	const usc_tensor *out;
	usc__eval_stream s;
	compare_ctx c;
	size_t n;
	usc_error err;

	runner_open(&whole, text, d, USC_EVAL_NO_TILES);
	runner_open(&tiled, text, d, 100);
	compare_init(&c, &whole, d);
	n = c.count;
	memset(&s, 0, sizeof s);
	s.visit = compare_visit;
	s.ctx = &c;
	s.wanted = wanted ? maps : NULL;
	s.first = first;
	s.count = count;
	s.no_tensor = no_tensor;
	if (usc__eval_run_stream(tiled.ev, &s, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_eval_output(tiled.ev, 0, &out, &err) == USC_OK,
			 !no_tensor);
	*lo = n;
	*hi = 0;
	for (size_t k = 0; k < n; k++)
		if (c.seen[k]) {
			*lo = k < *lo ? k : *lo;
			*hi = k + 1;
		}
	free(c.seen);
	runner_close(&tiled);
	runner_close(&whole);
	return c.elements;
}

static void test_range(void **state)
{
	uint8_t wanted[ROWS * COLS];
	size_t lo, hi;

	(void)state;
	/* [250, 430): tiles [200, 300), [300, 400), [400, 500). */
	assert_int_equal(range_visits(fused, USC_DOMAIN_TIER, 250, 180, NULL,
				      true, &lo, &hi),
			 300);
	assert_true(lo == 200 && hi == 500);
	assert_int_equal(range_visits(bcast, USC_DOMAIN_REFERENCE, 800, 100,
				      NULL, false, &lo, &hi),
			 100);
	assert_true(lo == 800 && hi == 900);
	/* wanted[k - first]: element 310 only, so the tile [300, 400). */
	memset(wanted, 0, sizeof wanted);
	wanted[310 - 250] = 1;
	assert_int_equal(range_visits(fused, USC_DOMAIN_ORACLE, 250, 180,
				      wanted, true, &lo, &hi),
			 100);
	assert_true(lo == 300 && hi == 400);
	/* Not a loop computation: everything, once, whatever the range. */
	assert_int_equal(range_visits(mixed, USC_DOMAIN_REFERENCE, 250, 180,
				      NULL, false, &lo, &hi),
			 900);
}

/*
 * Every allocation of a streamed run with a visitor, a subset and kept
 * values failing in turn, in the three domains: ENOMEM, no leak; and a
 * visitor's failure stops the run with its status and message.
 */
static void test_stream_out_of_memory(void **state)
{
	static const usc_eval_domain doms[3] = {
		USC_DOMAIN_REFERENCE, USC_DOMAIN_TIER, USC_DOMAIN_ORACLE};
	uint8_t wanted[ROWS * COLS];
	const uint8_t *maps[1] = {wanted};

	(void)state;
	memset(wanted, 0, sizeof wanted);
	wanted[150] = wanted[700] = 1;
	for (size_t di = 0; di < 3; di++) {
		runner r;
		usc__eval_stream s;
		compare_ctx c;
		const void *wv;
		size_t n;
		usc_dtype t;
		usc_error err;
		bool done = false;
		long base;

		runner_open(&r, bcast, doms[di], USC_EVAL_NO_TILES);
		assert_int_equal(usc_eval_run(r.ev, &err), USC_OK);
		assert_int_equal(usc__eval_output_values(r.ev, 0, &wv, &n, &t),
				 USC_OK);
		memset(&c, 0, sizeof c);
		c.d = doms[di];
		c.value_size = usc__eval_domain(r.ev)->value_size;
		c.whole = wv;
		c.count = n;
		c.dtype = t;
		c.seen = calloc(n, 1);
		memset(&s, 0, sizeof s);
		s.visit = compare_visit;
		s.ctx = &c;
		s.wanted = maps;
		s.keep = true;
		base = usc__alloc_live();
		for (long k = 0; k < 5000 && !done; k++) {
			usc_eval_options o = usc_eval_options_default();
			usc_eval *ev = NULL;
			usc_status st;

			o.domain = doms[di];
			o.tile_elements = 100;
			memset(c.seen, 0, n);
			c.visits = c.elements = 0;
			usc__alloc_fail_after(k);
			st = usc_eval_create(usc_hlo_file_module(r.f, 0), &o,
					     &ev, &err);
			for (size_t i = 0; st == USC_OK && i < r.np; i++)
				st = usc_eval_bind(ev, i, r.p[i], &err);
			if (st == USC_OK)
				st = usc__eval_run_stream(ev, &s, &err);
			usc__alloc_fail_after(-1);
			if (st == USC_OK) {
				done = true;
				assert_int_equal(c.elements, 200);
			} else {
				assert_int_equal(st, USC_ENOMEM);
			}
			usc_eval_destroy(ev);
			assert_int_equal(usc__alloc_live(), base);
		}
		assert_true(done);
		/* The visitor's own failure, at the second tile. */
		{
			usc_eval_options o = usc_eval_options_default();
			usc_eval *ev = NULL;

			o.domain = doms[di];
			o.tile_elements = 100;
			memset(c.seen, 0, n);
			c.visits = c.elements = 0;
			c.fail_at = 2;
			assert_int_equal(usc_eval_create(
						 usc_hlo_file_module(r.f, 0),
						 &o, &ev, &err),
					 USC_OK);
			for (size_t i = 0; i < r.np; i++)
				assert_int_equal(usc_eval_bind(ev, i, r.p[i],
							       &err),
						 USC_OK);
			assert_int_equal(usc__eval_run_stream(ev, &s, &err),
					 USC_EINVAL);
			assert_string_equal(err.message, "visitor says no");
			assert_int_equal(usc_eval_output_count(ev), 1);
			{
				const usc_tensor *out;

				assert_int_equal(usc_eval_output(ev, 0, &out,
								 &err),
						 USC_ERANGE);
			}
			usc_eval_destroy(ev);
			c.fail_at = 0;
			assert_int_equal(usc__alloc_live(), base);
		}
		free(c.seen);
		runner_close(&r);
	}
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
		cmocka_unit_test(test_stream_reference),
		cmocka_unit_test(test_stream_tier),
		cmocka_unit_test(test_stream_oracle),
		cmocka_unit_test(test_subset),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_stream_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
