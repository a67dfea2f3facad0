/*
 * The kernel generator (include/ulpscope/gen.h): its PRNG against the
 * published algorithms, and its modules, over many seeds, against the
 * project's own parser, verifier and evaluator: every module prints,
 * parses back to the same IR, verifies and evaluates; a seed always
 * gives the same text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "ulpscope/ulpscope.h"

/* Seeds of the many-seeds tests; USC_GEN_SEEDS raises it. */
static unsigned seed_count(void)
{
	const char *e = getenv("USC_GEN_SEEDS");

	return e && atoi(e) > 0 ? (unsigned)atoi(e) : 150;
}

/*
 * xoshiro256** from the state {1, 2, 3, 4}: the first outputs of the
 * reference implementation (prng.di.unimi.it/xoshiro256starstar.c),
 * also computed by a separate Python transcription of it.
 */
static void test_xoshiro_vectors(void **state)
{
	usc_gen_rng r = {{1, 2, 3, 4}};

	(void)state;
	assert_true(usc_gen_rng_next(&r) == UINT64_C(11520));
	assert_true(usc_gen_rng_next(&r) == UINT64_C(0));
	assert_true(usc_gen_rng_next(&r) == UINT64_C(1509978240));
	assert_true(usc_gen_rng_next(&r) == UINT64_C(1215971899390074240));
}

/*
 * Seeding with splitmix64: from seed 0 its outputs are 0xe220a8397b1dcdaf
 * (the published first value) and the next three, so the state is those
 * four words.
 */
static void test_splitmix_seeding(void **state)
{
	usc_gen_rng r;

	(void)state;
	usc_gen_rng_seed(&r, 0);
	assert_true(r.s[0] == UINT64_C(0xe220a8397b1dcdaf));
	assert_true(r.s[1] == UINT64_C(0x6e789e6aa1b965f4));
	assert_true(r.s[2] == UINT64_C(0x06c45d188009454f));
	assert_true(r.s[3] == UINT64_C(0xf88bb8a8724c81ec));
	assert_true(usc_gen_rng_next(&r) == UINT64_C(0x99ec5f36cb75f2b4));
}

/* below(n) stays below n and reaches every value of a small range. */
static void test_below_range(void **state)
{
	usc_gen_rng r;
	int seen[7] = {0};

	(void)state;
	usc_gen_rng_seed(&r, 42);
	for (int i = 0; i < 700; i++) {
		uint64_t x = usc_gen_rng_below(&r, 7);

		assert_true(x < 7);
		seen[x]++;
	}
	for (int k = 0; k < 7; k++)
		assert_true(seen[k] > 0);
	assert_true(usc_gen_rng_below(&r, 1) == 0);
}

static char *gen(uint64_t seed, size_t ops)
{
	usc_gen_options o = usc_gen_options_default();
	usc_error err;
	char *text = NULL;

	o.seed = seed;
	o.ops = ops;
	usc_error_clear(&err);
	if (usc_gen_text(&o, &text, NULL, &err) != USC_OK)
		fail_msg("seed %llu: %s", (unsigned long long)seed, err.message);
	return text;
}

/* The same seed gives the same text; neighbouring seeds differ. */
static void test_reproducible(void **state)
{
	(void)state;
	for (uint64_t s = 0; s < 20; s++) {
		char *a = gen(s, 12), *b = gen(s, 12), *c = gen(s + 1, 12);

		assert_string_equal(a, b);
		assert_true(strcmp(a, c) != 0);
		usc_hlo_text_free(a);
		usc_hlo_text_free(b);
		usc_hlo_text_free(c);
	}
}

/* A random encoding of t's width (NaN, Inf and subnormals included). */
static uint64_t random_bits(usc_gen_rng *r, usc_dtype t)
{
	int bits = usc_format_of(t)->bits;
	uint64_t x = usc_gen_rng_next(r);

	return bits >= 64 ? x : x & ((UINT64_C(1) << bits) - 1);
}

/*
 * Evaluates the entry of m in the reference domain on random encodings;
 * the run must succeed (numeric events are data, never errors).
 */
static void evaluate(const usc_hlo_module *m, uint64_t seed)
{
	const usc_hlo_computation *e = m->entry;
	usc_tensor *in[8] = {NULL};
	size_t n = 0;
	usc_gen_rng r;
	usc_eval *ev;
	usc_error err;

	usc_gen_rng_seed(&r, seed ^ UINT64_C(0x5eed));
	usc_error_clear(&err);
	if (usc_eval_create(m, NULL, &ev, &err) != USC_OK)
		fail_msg("seed %llu: %s", (unsigned long long)seed, err.message);
	for (size_t i = 0; i < e->instr_count; i++) {
		const usc_hlo_instr *p = e->instrs[i];
		size_t k;

		if (p->opcode != USC_HLO_OP_PARAMETER)
			continue;
		k = (size_t)p->parameter_number;
		assert_true(k < 8);
		assert_int_equal(usc_tensor_create(p->shape.dtype,
						   p->shape.rank,
						   p->shape.dims, &in[k], &err),
				 USC_OK);
		for (uint64_t j = 0; j < usc_tensor_count(in[k]); j++)
			assert_int_equal(usc_tensor_set_bits(
						 in[k], j,
						 random_bits(&r, p->shape.dtype)),
					 USC_OK);
		n++;
	}
	for (size_t k = 0; k < n; k++)
		if (usc_eval_bind(ev, k, in[k], &err) != USC_OK)
			fail_msg("seed %llu: %s", (unsigned long long)seed,
				 err.message);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("seed %llu: %s", (unsigned long long)seed, err.message);
	assert_true(usc_eval_output_count(ev) >= 1);
	usc_eval_destroy(ev);
	for (size_t k = 0; k < n; k++)
		usc_tensor_destroy(in[k]);
}

/*
 * Many seeds at several sizes: the text parses back into the very IR the
 * generator built (structural equality), verifies, and evaluates.
 */
static void test_valid_by_construction(void **state)
{
	static const size_t sizes[] = {1, 6, 12, 30};
	unsigned count = seed_count();

	(void)state;
	for (uint64_t s = 0; s < count; s++) {
		usc_gen_options o = usc_gen_options_default();
		usc_hlo_file *built, *parsed;
		usc_error err;
		char *text;
		size_t len;
		char diff[256];

		o.seed = s * UINT64_C(0x9e3779b97f4a7c15) + s;
		o.ops = sizes[s % 4];
		usc_error_clear(&err);
		assert_int_equal(usc_gen_module(&o, &built, &err), USC_OK);
		assert_int_equal(usc_hlo_module_print(
					 usc_hlo_file_module(built, 0), NULL,
					 &text, &len, &err),
				 USC_OK);
		if (usc_hlo_parse(text, len, "gen", &parsed, &err) != USC_OK)
			fail_msg("seed %llu: %s\n%s", (unsigned long long)o.seed,
				 err.message, text);
		if (!usc_hlo_module_equal(usc_hlo_file_module(built, 0),
					  usc_hlo_file_module(parsed, 0), diff,
					  sizeof diff))
			fail_msg("seed %llu: reparsed module differs: %s",
				 (unsigned long long)o.seed, diff);
		if (usc_hlo_verify_file(parsed, &err) != USC_OK)
			fail_msg("seed %llu: %s\n%s", (unsigned long long)o.seed,
				 err.message, text);
		evaluate(usc_hlo_file_module(parsed, 0), o.seed);
		usc_hlo_text_free(text);
		usc_hlo_file_destroy(parsed);
		usc_hlo_file_destroy(built);
	}
}

/* --types narrows what parameters and converts draw. */
static void test_types_respected(void **state)
{
	(void)state;
	for (uint64_t s = 0; s < 30; s++) {
		usc_gen_options o = usc_gen_options_default();
		usc_error err;
		char *text;

		o.seed = s;
		o.type_count = 1;
		o.types[0] = USC_F32;
		usc_error_clear(&err);
		assert_int_equal(usc_gen_text(&o, &text, NULL, &err), USC_OK);
		assert_null(strstr(text, "bf16"));
		assert_null(strstr(text, "f16["));
		assert_null(strstr(text, "f8e"));
		usc_hlo_text_free(text);
	}
}

static void test_bad_options(void **state)
{
	usc_gen_options o = usc_gen_options_default();
	usc_hlo_file *f = NULL;
	usc_error err;

	(void)state;
	usc_error_clear(&err);
	o.ops = 0;
	assert_int_equal(usc_gen_module(&o, &f, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "ops must be from 1 to 200"));
	o.ops = 12;
	o.type_count = 1;
	o.types[0] = USC_S32;
	assert_int_equal(usc_gen_module(&o, &f, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "type s32"));
	assert_null(f);
}

/* Running out of memory at any allocation fails cleanly, leaking none. */
static void test_out_of_memory(void **state)
{
	usc_gen_options o = usc_gen_options_default();

	(void)state;
	o.seed = 7;
	for (long n = 0;; n++) {
		long live = usc__alloc_live();
		usc_hlo_file *f = NULL;
		usc_error err;
		usc_status st;

		usc__alloc_fail_after(n);
		st = usc_gen_module(&o, &f, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			usc_hlo_file_destroy(f);
			assert_int_equal(usc__alloc_live(), live);
			break;
		}
		assert_int_equal(st, USC_ENOMEM);
		assert_int_equal(usc__alloc_live(), live);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xoshiro_vectors),
		cmocka_unit_test(test_splitmix_seeding),
		cmocka_unit_test(test_below_range),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_valid_by_construction),
		cmocka_unit_test(test_types_respected),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
