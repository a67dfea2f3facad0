/*
 * Kernel isolation: every fusion of every module of a corpus (the
 * project's own files, or XLA's corpus when run with "xla": see
 * tests/hlo/corpus_dir.h), extracted, gives
 * text that parses (in both forms) and verifies, whose ENTRY takes one
 * parameter per operand of the fusion with that operand's shape and whose
 * ROOT is the fusion calling a computation structurally equal to the
 * original fused computation.  Plus the exact text for a small module
 * (written by hand), name clashes, lookups and their errors, and
 * allocation failures.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"

#include "hlo/corpus_dir.h"

static usc_hlo_file *parse(const char *text)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "t.hlo", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	return f;
}

/* Same names, opcodes, shapes (layouts included), operands, attributes. */
static void same_comp(const usc_hlo_computation *a,
		      const usc_hlo_computation *b, const char *ctx)
{
	size_t i, k;

	if (strcmp(a->name, b->name) != 0 || a->instr_count != b->instr_count)
		fail_msg("%s: computation %s (%zu) vs %s (%zu)", ctx, a->name,
			 a->instr_count, b->name, b->instr_count);
	for (i = 0; i < a->instr_count; i++) {
		const usc_hlo_instr *x = a->instrs[i], *y = b->instrs[i];

		if (strcmp(x->name, y->name) != 0 || x->opcode != y->opcode ||
		    !usc_hlo_shape_equal(&x->shape, &y->shape) ||
		    x->operand_count != y->operand_count ||
		    x->attr_count != y->attr_count || x->is_root != y->is_root ||
		    x->called_count != y->called_count)
			fail_msg("%s: %s: instruction %s differs", ctx, a->name,
				 x->name);
		for (k = 0; k < x->operand_count; k++)
			assert_int_equal(x->operands[k]->index,
					 y->operands[k]->index);
		for (k = 0; k < x->called_count; k++)
			assert_string_equal(x->called[k]->name,
					    y->called[k]->name);
	}
}

/* Checks one extracted module against the fusion it came from. */
static void check_kernel(const usc_hlo_instr *fusion, const usc_hlo_module *k,
			 const char *ctx)
{
	const usc_hlo_computation *e = k->entry, *fused = fusion->called[0];
	const usc_hlo_instr *root;
	usc_error err;
	size_t i, np = 0;

	assert_non_null(e);
	if (usc_hlo_verify(k, &err) != USC_OK)
		fail_msg("%s: %s", ctx, err.message);
	root = e->root;
	assert_int_equal(root->opcode, USC_HLO_OP_FUSION);
	assert_string_equal(root->name, fusion->name);
	assert_true(usc_hlo_shape_equal(&root->shape, &fusion->shape));
	assert_int_equal(root->operand_count, fusion->operand_count);
	for (i = 0; i < e->instr_count; i++)
		np += e->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	assert_int_equal(np, fusion->operand_count);
	assert_int_equal(e->instr_count, fusion->operand_count + 1);
	for (i = 0; i < fusion->operand_count; i++) {
		const usc_hlo_instr *p = root->operands[i];

		assert_int_equal(p->opcode, USC_HLO_OP_PARAMETER);
		assert_int_equal(p->parameter_number, (int64_t)i);
		if (!usc_hlo_shape_equal(&p->shape, &fusion->operands[i]->shape))
			fail_msg("%s: parameter %zu shape differs", ctx, i);
	}
	same_comp(fused, root->called[0], ctx);
}

/*
 * Extracts every fusion of every module of dir's HLO files, in both
 * forms, and checks each kernel; adds to *files, *fusions and *files_with
 * (the files that have a fusion).
 */
static void extract_dir(const char *dir, size_t *files, size_t *fusions,
			size_t *files_with)
{
	char path[8192], *names[512], ctx[600];
	usc_hlo_print_options shortf = usc_hlo_print_options_default();
	size_t n, i, mi, c, j;

	shortf.form = USC_HLO_PRINT_SHORT;
	n = corpus_list(dir, names, USC__ARRAY_LEN(names));
	for (i = 0; i < n; i++) {
		usc_hlo_file *f = NULL;
		usc_error err;
		size_t before = *fusions;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		for (mi = 0; mi < usc_hlo_file_module_count(f); mi++) {
			const usc_hlo_module *m = usc_hlo_file_module(f, mi);

			for (c = 0; c < m->computation_count; c++)
				for (j = 0; j < m->computations[c]->instr_count;
				     j++) {
					const usc_hlo_instr *in =
						m->computations[c]->instrs[j];
					usc_hlo_file *g = NULL, *h = NULL;
					char *text = NULL, diff[256];
					size_t len;

					if (in->opcode != USC_HLO_OP_FUSION)
						continue;
					(*fusions)++;
					snprintf(ctx, sizeof ctx, "%s: %s",
						 names[i], in->name);
					if (usc_hlo_extract_fusion_file(
						    m, in->name, &g, &err) !=
					    USC_OK)
						fail_msg("%s: %s", ctx,
							 err.message);
					assert_int_equal(
						usc_hlo_file_module_count(g), 1);
					check_kernel(in,
						     usc_hlo_file_module(g, 0),
						     ctx);
					/* The short form says the same. */
					assert_int_equal(
						usc_hlo_extract_fusion(
							m, in->name, &shortf,
							&text, &len, &err),
						USC_OK);
					if (usc_hlo_parse(text, len, ctx, &h,
							  &err) != USC_OK)
						fail_msg("%s (short): %s", ctx,
							 err.message);
					if (!usc_hlo_module_equal(
						    usc_hlo_file_module(g, 0),
						    usc_hlo_file_module(h, 0),
						    diff, sizeof diff))
						fail_msg("%s: short vs long: %s",
							 ctx, diff);
					usc_hlo_text_free(text);
					usc_hlo_file_destroy(h);
					usc_hlo_file_destroy(g);
				}
		}
		*files_with += *fusions > before;
		usc_hlo_file_destroy(f);
		free(names[i]);
	}
	*files += n;
}

static bool xla_mode;

/*
 * XLA's corpus (60 files, 20 fusions at least), or the project's own
 * files: tests/hlo/corpus has 8 fusions (grep " fusion(": 1 in
 * long_form.hlo, 2 in lit_split.hlo, 1 in headerless.hlo, 4 in
 * program_dump.hlo, one of them inside a while body) and kernels/ 114.
 */
static void test_corpus(void **state)
{
	size_t files = 0, fusions = 0, files_with = 0;
	char dir[4096];

	(void)state;
	if (xla_mode) {
		corpus_xla_dir_or_skip(dir, sizeof dir);
		extract_dir(dir, &files, &fusions, &files_with);
		assert_true(files >= 60);
		assert_true(fusions >= 20);
	} else {
		corpus_own_dir(dir, sizeof dir, "tests/hlo/corpus");
		extract_dir(dir, &files, &fusions, &files_with);
		assert_int_equal(fusions, 8);
		corpus_own_dir(dir, sizeof dir, "kernels");
		extract_dir(dir, &files, &fusions, &files_with);
		assert_true(fusions >= 8 + 114);
	}
	print_message("corpus: %zu fusions extracted from %zu of %zu files\n",
		      fusions, files_with, files);
}

#define MOD                                                                  \
	"HloModule jit_f\n"                                                  \
	"add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"        \
	"  ROOT s = f32[] add(x, y)\n}\n"                                    \
	"fused_sum {\n  p0 = f32[4,8] parameter(0)\n"                        \
	"  p1 = f32[4,8] parameter(1)\n"                                     \
	"  m = f32[4,8] multiply(p0, p1), metadata={op_name=\"jit(f)/mul\"}\n" \
	"  z = f32[] constant(0)\n"                                          \
	"  ROOT r = f32[4] reduce(m, z), dimensions={1}, to_apply=add\n}\n"  \
	"unused {\n  q = f32[] parameter(0)\n  ROOT n = f32[] negate(q)\n}\n" \
	"ENTRY main {\n  a = f32[4,8] parameter(0)\n"                        \
	"  b = f32[4,8] parameter(1)\n"                                      \
	"  p0 = f32[4,8] exponential(a)\n"                                   \
	"  ROOT sum.1 = f32[4] fusion(p0, b), kind=kInput, calls=fused_sum, " \
	"control-predecessors={a}\n}\n"

/*
 * The expected text is written from the definition in hlo_kernel.h:
 * callees first, the fused computation, then an ENTRY named after module
 * and fusion whose parameters take the operands' names.  The operand
 * "p0" clashes with the fused computation's parameter p0, so it becomes
 * "p0.1"; control-predecessors is dropped.
 */
static void test_exact_text(void **state)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	usc_hlo_file *f = parse(MOD);
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	char *text = NULL, *text2 = NULL;
	usc_error err;

	(void)state;
	o.form = USC_HLO_PRINT_SHORT;
	assert_int_equal(usc_hlo_extract_fusion(m, "sum.1", &o, &text, NULL,
						&err),
			 USC_OK);
	assert_string_equal(
		text,
		"HloModule jit_f_sum.1\n\n"
		"add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y)\n}\n\n"
		"fused_sum {\n  p0 = f32[4,8] parameter(0)\n"
		"  p1 = f32[4,8] parameter(1)\n"
		"  m = f32[4,8] multiply(p0, p1), "
		"metadata={op_name=\"jit(f)/mul\"}\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[4] reduce(m, z), dimensions={1}, "
		"to_apply=add\n}\n\n"
		"ENTRY jit_f_sum.1 {\n  p0.1 = f32[4,8] parameter(0)\n"
		"  b = f32[4,8] parameter(1)\n"
		"  ROOT sum.1 = f32[4] fusion(p0.1, b), kind=kInput, "
		"calls=fused_sum\n}\n");
	/* By the fused computation's name: the same kernel. */
	assert_int_equal(usc_hlo_extract_fusion(m, "fused_sum", &o, &text2,
						NULL, &err),
			 USC_OK);
	assert_string_equal(text, text2);
	usc_hlo_text_free(text);
	usc_hlo_text_free(text2);

	/* The long form carries the signature of the new ENTRY. */
	assert_int_equal(usc_hlo_extract_fusion(m, "sum.1", NULL, &text, NULL,
						&err),
			 USC_OK);
	assert_non_null(strstr(text,
			       "ENTRY %jit_f_sum.1 (p0.1: f32[4,8], b: f32[4,8]) "
			       "-> f32[4] {\n"));
	usc_hlo_text_free(text);

	/* A computation no fusion calls is a kernel on its own: ENTRY. */
	assert_int_equal(usc_hlo_extract_fusion(m, "unused", &o, &text, NULL,
						&err),
			 USC_OK);
	assert_string_equal(text, "HloModule jit_f_unused\n\n"
				  "ENTRY unused {\n  q = f32[] parameter(0)\n"
				  "  ROOT n = f32[] negate(q)\n}\n");
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
}

static void test_errors(void **state)
{
	usc_hlo_file *f = parse(MOD);
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	const usc_hlo_instr *fusion;
	const usc_hlo_computation *comp;
	char *text = NULL, *text2_unused = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_extract_fusion(m, "sum.2", NULL, &text, NULL,
						&err),
			 USC_ENOTFOUND);
	assert_null(text);
	assert_string_equal(err.message, "no fusion named 'sum.2' in module "
					 "'jit_f'; did you mean 'sum.1'?");
	assert_int_equal(usc_hlo_extract_fusion(m, "softmax", NULL, &text,
						NULL, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message, "no fusion named 'softmax' in module "
					 "'jit_f', which has 1 fusion: sum.1");
	assert_int_equal(usc_hlo_extract_fusion(m, "b", NULL, &text, NULL,
						&err),
			 USC_EINVAL);
	assert_string_equal(err.message, "'b' is a parameter in computation "
					 "'main', not a fusion");
	assert_int_equal(usc_hlo_extract_fusion(m, "p0", NULL, &text, NULL,
						&err),
			 USC_EINVAL);
	assert_string_equal(err.message, "'p0' is a parameter in computation "
					 "'fused_sum', not a fusion");
	/* Without out_comp, a computation that no fusion calls is not one. */
	assert_int_equal(usc_hlo_find_fusion(m, "unused", &fusion, NULL, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message,
			    "no fusion calls computation 'unused'");
	assert_int_equal(usc_hlo_find_fusion(m, "fused_sum", &fusion, &comp,
					     &err),
			 USC_OK);
	assert_string_equal(fusion->name, "sum.1");
	assert_null(comp);
	usc_hlo_file_destroy(f);

	/* Ten fusions and no near match: the first 8 names, then "...". */
	{
		char buf[4096];
		size_t len, i;

		len = (size_t)snprintf(buf, sizeof buf,
				       "HloModule many\nf {\n  p = f32[] "
				       "parameter(0)\n  ROOT n = f32[] "
				       "negate(p)\n}\nENTRY e {\n  a = f32[] "
				       "parameter(0)\n");
		for (i = 0; i < 10; i++)
			len += (size_t)snprintf(buf + len, sizeof buf - len,
						"  %sk%zu = f32[] fusion(a), "
						"kind=kLoop, calls=f\n",
						i == 9 ? "ROOT " : "", i);
		snprintf(buf + len, sizeof buf - len, "}\n");
		f = parse(buf);
		assert_int_equal(usc_hlo_extract_fusion(
					 usc_hlo_file_module(f, 0), "softmax",
					 NULL, &text2_unused, NULL, &err),
				 USC_ENOTFOUND);
		assert_string_equal(err.message,
				    "no fusion named 'softmax' in module "
				    "'many', which has 10 fusions: k0 k1 k2 k3 "
				    "k4 k5 k6 k7 ...");
		usc_hlo_file_destroy(f);
	}

	f = parse("HloModule plain\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n");
	assert_int_equal(usc_hlo_extract_fusion(usc_hlo_file_module(f, 0),
						"fusion", NULL, &text, NULL,
						&err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message, "no fusion named 'fusion' in module "
					 "'plain', which has no fusion");
	usc_hlo_file_destroy(f);
}

/* Every allocation failure is reported as ENOMEM and leaks nothing. */
static void test_alloc_failures(void **state)
{
	usc_hlo_file *f = parse(MOD), *g;
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	usc_hlo_module_summary *s;
	long live = usc__alloc_live(), k;
	usc_error err;
	char *text;

	(void)state;
	for (k = 0;; k++) {
		usc_status st;

		text = NULL;
		usc__alloc_fail_after(k);
		st = usc_hlo_extract_fusion(m, "sum.1", NULL, &text, NULL, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			usc_hlo_text_free(text);
			break;
		}
		assert_int_equal(st, USC_ENOMEM);
		assert_int_equal(usc__alloc_live(), live);
	}
	assert_true(k > 3);
	for (k = 0;; k++) {
		usc_status st;

		usc__alloc_fail_after(k);
		st = usc_hlo_module_summarize(m, &s, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			usc_hlo_module_summary_destroy(s);
			break;
		}
		assert_int_equal(st, USC_ENOMEM);
		assert_int_equal(usc__alloc_live(), live);
	}
	for (k = 0;; k++) {
		usc_status st;

		g = NULL;
		usc__alloc_fail_after(k);
		st = usc_hlo_extract_fusion_file(m, "sum.1", &g, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			usc_hlo_file_destroy(g);
			break;
		}
		assert_int_equal(st, USC_ENOMEM);
		assert_int_equal(usc__alloc_live(), live);
	}
	assert_int_equal(usc__alloc_live(), live);
	usc_hlo_file_destroy(f);
}

/* The summary of MOD, counted by hand from its text. */
static void test_summary(void **state)
{
	usc_hlo_file *f = parse(MOD);
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	const usc_hlo_fusion_summary *fs;
	usc_hlo_module_summary *s = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_module_summarize(m, &s, &err), USC_OK);
	assert_int_equal(s->computation_count, 4);
	assert_int_equal(s->instr_count, 3 + 5 + 2 + 4);
	assert_int_equal(s->entry_param_count, 2);
	assert_string_equal(s->entry_params[0]->name, "a");
	assert_string_equal(s->entry_params[1]->name, "b");
	assert_int_equal(s->entry.op_count, 2);
	assert_int_equal(s->fusion_count, 1);
	fs = &s->fusions[0];
	assert_string_equal(fs->fusion->name, "sum.1");
	assert_string_equal(fs->kind, "kInput");
	assert_string_equal(fs->fused->name, "fused_sum");
	assert_int_equal(fs->param_count, 2);
	assert_int_equal(fs->body.instr_count, 5);
	assert_int_equal(fs->body.op_count, 3);
	/* One each of constant, multiply, reduce: ties in spelling order. */
	assert_int_equal(fs->body.histogram_count, 3);
	assert_int_equal(fs->body.histogram[0].opcode, USC_HLO_OP_CONSTANT);
	assert_int_equal(fs->body.histogram[1].opcode, USC_HLO_OP_MULTIPLY);
	assert_int_equal(fs->body.histogram[2].opcode, USC_HLO_OP_REDUCE);
	assert_int_equal(fs->body.dtype_count, 1);
	assert_int_equal(fs->body.dtypes[0], USC_F32);
	assert_int_equal(fs->body.op_name_count, 1);
	assert_string_equal(fs->body.op_names[0], "jit(f)/mul");
	usc_hlo_module_summary_destroy(s);
	usc_hlo_file_destroy(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_exact_text),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_summary),
	};
	const struct CMUnitTest xla[] = {
		cmocka_unit_test(test_corpus),
	};

	xla_mode = corpus_is_xla(argc, argv);
	if (xla_mode) {
		char dir[4096];

		/* Skips before cmocka starts when the corpus is absent. */
		corpus_xla_dir_or_skip(dir, sizeof dir);
		return cmocka_run_group_tests_name("xla corpus", xla, NULL,
						   NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
