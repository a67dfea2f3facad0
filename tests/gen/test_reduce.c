/*
 * The module reducer (include/ulpscope/reduce.h): on modules written by
 * hand, the candidates expected by reading them (each named change,
 * the instructions left); on many generated modules, that every
 * candidate parses, verifies and is smaller than its module, by counts
 * this test takes from the parsed IR itself.
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

/*
 * cbrt of x feeds a minimum with a broadcast constant and a sine (output
 * 0); exp of y is output 1; one add is dead.
 */
static const char two_outputs[] =
	"HloModule t\n"
	"\n"
	"ENTRY %main (x: f32[4,8], y: f32[4,8]) -> (f32[4,8], f32[4,8]) {\n"
	"  %x = f32[4,8] parameter(0)\n"
	"  %y = f32[4,8] parameter(1)\n"
	"  %c = f32[4,8] cbrt(f32[4,8] %x)\n"
	"  %k = f32[] constant(0.25)\n"
	"  %kb = f32[4,8] broadcast(f32[] %k), dimensions={}\n"
	"  %m = f32[4,8] minimum(f32[4,8] %c, f32[4,8] %kb)\n"
	"  %s = f32[4,8] sine(f32[4,8] %m)\n"
	"  %e = f32[4,8] exponential(f32[4,8] %y)\n"
	"  %dead = f32[4,8] add(f32[4,8] %e, f32[4,8] %x)\n"
	"  ROOT %t = (f32[4,8], f32[4,8]) tuple(f32[4,8] %s, f32[4,8] %e)\n"
	"}\n";

/* A reduction: no dimension may be halved, and the dot's operands have
 * other shapes than its result, so it is no candidate's target. */
static const char with_dot[] =
	"HloModule d\n"
	"\n"
	"%add_f32 (a: f32[], b: f32[]) -> f32[] {\n"
	"  %a = f32[] parameter(0)\n"
	"  %b = f32[] parameter(1)\n"
	"  ROOT %r = f32[] add(f32[] %a, f32[] %b)\n"
	"}\n"
	"\n"
	"ENTRY %main (p: f32[2,3], q: f32[3,4]) -> f32[2] {\n"
	"  %p = f32[2,3] parameter(0)\n"
	"  %q = f32[3,4] parameter(1)\n"
	"  %d = f32[2,4] dot(f32[2,3] %p, f32[3,4] %q), "
	"lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
	"  %z = f32[] constant(0)\n"
	"  ROOT %s = f32[2] reduce(f32[2,4] %d, f32[] %z), dimensions={1}, "
	"to_apply=%add_f32\n"
	"}\n";

static const usc_reduce_candidate *find(const usc_reduce_candidate *c,
					size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].what, what) == 0)
			return &c[i];
	return NULL;
}

/* The entry's instruction count and its opcodes, from a parse here. */
static size_t entry_instrs(const char *text, size_t len, int64_t *elements,
			   size_t *params)
{
	usc_hlo_file *f;
	usc_error err;
	const usc_hlo_computation *e;
	size_t n;

	usc_error_clear(&err);
	assert_int_equal(usc_hlo_parse(text, len, "<candidate>", &f, &err),
			 USC_OK);
	assert_int_equal(usc_hlo_verify(usc_hlo_file_module(f, 0), &err),
			 USC_OK);
	e = usc_hlo_file_module(f, 0)->entry;
	n = e->instr_count;
	/* Every operand is defined before its use, as XLA's parser wants. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < e->instrs[i]->operand_count; k++)
			assert_true(e->instrs[i]->operands[k]->index < i);
	if (elements) {
		*elements = 0;
		for (size_t i = 0; i < n; i++)
			if (e->instrs[i]->shape.kind == USC_HLO_SHAPE_ARRAY)
				*elements +=
					usc_hlo_shape_elements(&e->instrs[i]->shape);
	}
	if (params) {
		*params = 0;
		for (size_t i = 0; i < n; i++)
			*params += e->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	}
	usc_hlo_file_destroy(f);
	return n;
}

static void test_hand_module(void **state)
{
	usc_reduce_candidate *c;
	const usc_reduce_candidate *k;
	usc_reduce_size s;
	usc_error err;
	size_t n, params;

	(void)state;
	usc_error_clear(&err);
	assert_int_equal(usc_reduce_size_of(two_outputs, strlen(two_outputs),
					    "t.hlo", &s, &err),
			 USC_OK);
	/* 10 instructions; outputs 2 x 32; the constant 0.25. */
	assert_int_equal(s.instrs, 10);
	assert_int_equal(s.outputs, 64);
	assert_int_equal(s.elements, 8 * 32 + 1);
	assert_int_equal(s.constants, 1);
	assert_int_equal(usc_reduce_candidates(two_outputs,
					       strlen(two_outputs), "t.hlo",
					       &c, &n, &err),
			 USC_OK);
	/* Dropping the dead add leaves 9. */
	k = find(c, n, "drop-dead 1");
	assert_non_null(k);
	assert_int_equal(entry_instrs(k->text, k->len, NULL, NULL), 9);
	/* Dropping output 0 leaves y and exp (x is no longer used). */
	k = find(c, n, "drop-output 0");
	assert_non_null(k);
	assert_int_equal(entry_instrs(k->text, k->len, NULL, &params), 2);
	assert_int_equal(params, 1);
	assert_non_null(strstr(k->text, "exponential"));
	assert_null(strstr(k->text, "cbrt"));
	/* Dropping output 1: x, cbrt, k, kb, minimum, sine. */
	k = find(c, n, "drop-output 1");
	assert_non_null(k);
	assert_int_equal(entry_instrs(k->text, k->len, NULL, NULL), 6);
	/* The minimum's users read cbrt instead: the constant dies too. */
	k = find(c, n, "to-operand m 0 c");
	assert_non_null(k);
	assert_int_equal(entry_instrs(k->text, k->len, NULL, NULL), 6);
	assert_null(strstr(k->text, "minimum"));
	assert_null(strstr(k->text, "constant"));
	/* sine replaced by the parameter y: x and the cbrt chain die, so
	 * only y, exp and the tuple are left. */
	k = find(c, n, "to-parameter s y");
	assert_non_null(k);
	assert_int_equal(entry_instrs(k->text, k->len, NULL, NULL), 3);
	/* The constant to 1. */
	k = find(c, n, "constant k 1");
	assert_non_null(k);
	assert_non_null(strstr(k->text, "constant(1)"));
	assert_null(strstr(k->text, "0.25"));
	/* Halving dimension 1: every f32[4,8] becomes f32[4,4]. */
	k = find(c, n, "shrink 1 8 4");
	assert_non_null(k);
	assert_int_equal(k->dim, 1);
	assert_int_equal(k->from, 8);
	assert_int_equal(k->to, 4);
	assert_null(strstr(k->text, "f32[4,8]"));
	assert_non_null(strstr(k->text, "f32[4,4]"));
	assert_non_null(find(c, n, "shrink 0 4 2"));
	/* No move on the dead add survives as a candidate of its own. */
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(c[i].what, " dead "));
	usc_reduce_candidates_free(c, n);
}

static void test_no_shrink_through_reduce(void **state)
{
	usc_reduce_candidate *c;
	usc_error err;
	size_t n;

	(void)state;
	usc_error_clear(&err);
	assert_int_equal(usc_reduce_candidates(with_dot, strlen(with_dot),
					       "d.hlo", &c, &n, &err),
			 USC_OK);
	/* Only the constant 0 (already simple) and shapes that differ:
	 * nothing but what changes no shape. */
	for (size_t i = 0; i < n; i++) {
		assert_int_not_equal(c[i].kind, USC_REDUCE_SHRINK);
		assert_int_not_equal(c[i].kind, USC_REDUCE_CONSTANT);
		assert_null(strstr(c[i].what, "to-operand d "));
	}
	usc_reduce_candidates_free(c, n);
}

/* Generated modules: every candidate verifies and is smaller. */
static void test_generated_candidates(void **state)
{
	const char *e = getenv("USC_GEN_SEEDS");
	unsigned seeds = e && atoi(e) > 0 ? (unsigned)atoi(e) : 40;
	size_t total = 0;

	(void)state;
	for (unsigned seed = 0; seed < seeds; seed++) {
		usc_gen_options o = usc_gen_options_default();
		usc_reduce_candidate *c;
		usc_error err;
		char *text;
		size_t len, n, base_instrs;
		int64_t base_el;

		o.seed = seed;
		o.ops = 4 + seed % 12;
		usc_error_clear(&err);
		assert_int_equal(usc_gen_text(&o, &text, &len, &err), USC_OK);
		base_instrs = entry_instrs(text, len, &base_el, NULL);
		assert_int_equal(usc_reduce_candidates(text, len, "gen.hlo", &c,
						       &n, &err),
				 USC_OK);
		for (size_t i = 0; i < n; i++) {
			int64_t el;
			size_t instrs = entry_instrs(c[i].text, c[i].len, &el,
						     NULL);

			/* Smaller: fewer instructions, or as many and fewer
			 * elements (a halved dimension), or the same shapes
			 * with a constant or an output fewer. */
			assert_true(instrs <= base_instrs);
			if (c[i].kind == USC_REDUCE_SHRINK)
				assert_true(el < base_el);
			if (c[i].kind == USC_REDUCE_TO_OPERAND ||
			    c[i].kind == USC_REDUCE_TO_PARAMETER ||
			    c[i].kind == USC_REDUCE_DROP_DEAD)
				assert_true(instrs < base_instrs);
			if (instrs == base_instrs)
				assert_true(c[i].kind == USC_REDUCE_SHRINK ||
					    c[i].kind == USC_REDUCE_CONSTANT ||
					    c[i].kind == USC_REDUCE_DROP_OUTPUT);
			assert_true(strcmp(c[i].what, "") != 0);
		}
		total += n;
		usc_reduce_candidates_free(c, n);
		usc_hlo_text_free(text);
	}
	/* Modules of 4 to 15 steps have something to drop. */
	assert_true(total > seeds);
}

static void test_bad_input(void **state)
{
	static const char bad[] = "HloModule m\nENTRY %e { %x = f32[2] "
				  "parameter(0)\n ROOT %y = f32[3] negate(f32[2] %x)\n}\n";
	usc_reduce_candidate *c = NULL;
	usc_reduce_size s;
	usc_error err;
	size_t n = 7;

	(void)state;
	usc_error_clear(&err);
	assert_int_equal(usc_reduce_candidates("HloModule (", 11, "p.hlo", &c,
					       &n, &err),
			 USC_EPARSE);
	assert_non_null(strstr(err.message, "p.hlo:1:"));
	assert_int_equal(n, 0);
	usc_error_clear(&err);
	assert_int_not_equal(usc_reduce_candidates(bad, strlen(bad), "v.hlo",
						   &c, &n, &err),
			     USC_OK);
	assert_non_null(strstr(err.message, "v.hlo:"));
	assert_int_equal(usc_reduce_size_of(NULL, 0, NULL, &s, &err),
			 USC_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_module),
		cmocka_unit_test(test_no_shrink_through_reduce),
		cmocka_unit_test(test_generated_candidates),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
