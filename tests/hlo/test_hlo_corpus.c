/*
 * Every HLO file of a corpus parses, and round-trips through the printer
 * in both forms: parse(print(parse(x))) is structurally equal to
 * parse(x), with nothing leaked.  Without an argument the corpus is the
 * project's own (tests/hlo/corpus and kernels/); with "xla" it is XLA's
 * ($USC_SHARED_DIR/corpus/hlo), and the test is skipped when that folder
 * is absent (tests/hlo/corpus_dir.h).  The module, computation and
 * instruction counts of files are checked against counts taken by hand
 * from the files themselves.
 */
#include <dirent.h>
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

#include "hlo/corpus_dir.h"
#include "test_util.h"

static char corpus_dir[4096];

static void count_file(const usc_hlo_file *f, size_t *comps, size_t *instrs)
{
	size_t i, j;

	*comps = *instrs = 0;
	for (i = 0; i < usc_hlo_file_module_count(f); i++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, i);

		*comps += m->computation_count;
		for (j = 0; j < m->computation_count; j++)
			*instrs += m->computations[j]->instr_count;
	}
}

static void round_trip(const char *path, const usc_hlo_file *f,
		       usc_hlo_print_form form)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	usc_hlo_file *g = NULL;
	usc_error err;
	char *text = NULL, diff[256];
	size_t len, i;
	usc_status st;

	o.form = form;
	assert_int_equal(usc_hlo_file_print(f, &o, &text, &len, &err), USC_OK);
	st = usc_hlo_parse(text, len, "<printed>", &g, &err);
	if (st != USC_OK)
		fail_msg("%s (%s form): reparse failed: %s", path,
			 form == USC_HLO_PRINT_LONG ? "long" : "short",
			 err.message);
	assert_int_equal(usc_hlo_file_module_count(g),
			 usc_hlo_file_module_count(f));
	for (i = 0; i < usc_hlo_file_module_count(f); i++) {
		if (!usc_hlo_module_equal(usc_hlo_file_module(f, i),
					  usc_hlo_file_module(g, i), diff,
					  sizeof diff))
			fail_msg("%s (%s form) module %zu: %s", path,
				 form == USC_HLO_PRINT_LONG ? "long" : "short",
				 i, diff);
	}
	usc_hlo_file_destroy(g);
	usc_hlo_text_free(text);
}

/*
 * Parses and round-trips every file of dir; returns the count of files
 * and adds the modules and instructions to *modules and *instrs.
 */
static size_t walk(const char *dir, size_t *modules, size_t *instrs)
{
	char *names[512];
	size_t n = corpus_list(dir, names, USC__ARRAY_LEN(names)), i;

	for (i = 0; i < n; i++) {
		char path[8192];
		usc_hlo_file *f = NULL;
		usc_error err;
		size_t comps, file_instrs;
		long live = usc__alloc_live();

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		count_file(f, &comps, &file_instrs);
		*instrs += file_instrs;
		*modules += usc_hlo_file_module_count(f);
		round_trip(names[i], f, USC_HLO_PRINT_LONG);
		round_trip(names[i], f, USC_HLO_PRINT_SHORT);
		usc_hlo_file_destroy(f);
		assert_int_equal(usc__alloc_live(), live);
		free(names[i]);
	}
	return n;
}

/* XLA's corpus: its 65 files at least. */
static void test_corpus(void **state)
{
	size_t n, instrs = 0, modules = 0;

	(void)state;
	n = walk(corpus_dir, &modules, &instrs);
	printf("hlo corpus: %zu files parsed and round-tripped in both forms "
	       "(%zu modules, %zu instructions)\n",
	       n, modules, instrs);
	assert_true(n >= 65);
}

/* The project's own files: the 7 of tests/hlo/corpus at least. */
static void test_own_files(void **state)
{
	size_t n, instrs = 0, modules = 0;

	(void)state;
	n = walk(corpus_dir, &modules, &instrs);
	printf("own hlo files: %zu files parsed and round-tripped in both "
	       "forms (%zu modules, %zu instructions)\n",
	       n, modules, instrs);
	assert_true(n >= 7);
}

/*
 * The project's own kernel catalogue (the .hlo files of
 * $USC_SOURCE_DIR/kernels, real jax dumps with stack-frame tables) parses
 * and round-trips as well.
 */
static void test_kernels(void **state)
{
	const char *src = usc_test_src_dir();
	char dir[4096];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	(void)state;
	snprintf(dir, sizeof dir, "%s/kernels", src);
	d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s", dir);
	while ((de = readdir(d))) {
		char path[8192];
		size_t l = strlen(de->d_name);
		usc_hlo_file *f = NULL;
		usc_error err;

		if (l < 4 || strcmp(de->d_name + l - 4, ".hlo") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		round_trip(de->d_name, f, USC_HLO_PRINT_LONG);
		round_trip(de->d_name, f, USC_HLO_PRINT_SHORT);
		usc_hlo_file_destroy(f);
		n++;
	}
	closedir(d);
	printf("kernels: %zu files parsed and round-tripped\n", n);
	assert_true(n >= 30);
}

/* A file and its counts, taken by hand (see the comments). */
typedef struct file_counts {
	const char *name;
	size_t modules, comps, instrs; /* instrs 0: not checked */
} file_counts;

static void check_counts(const file_counts *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char path[8192];
		usc_hlo_file *f = NULL;
		usc_error err;
		size_t comps, instrs;

		snprintf(path, sizeof path, "%s/%s", corpus_dir, cases[i].name);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		count_file(f, &comps, &instrs);
		assert_int_equal(usc_hlo_file_module_count(f), cases[i].modules);
		assert_int_equal(comps, cases[i].comps);
		if (cases[i].instrs)
			assert_int_equal(instrs, cases[i].instrs);
		usc_hlo_file_destroy(f);
	}
}

/* XLA's corpus: counts taken with grep from the files. */
static void test_counts(void **state)
{
	static const file_counts cases[] = {
		/* 2 HloModule lines, 2 ENTRY, 5 and 3... see file. */
		{"xla__backends__gpu__tests__pad_to_static.hlo", 2, 2, 4},
		/* 5 modules split by "// -----" (4 splits). */
		{"xla__service__gpu__tests__dynamic_update_slice_inplace_bf16.hlo",
		 5, 10, 0},
		/* Headerless: fusion + ENTRY main. */
		{"xla__backends__gpu__codegen__triton__tests__dot__dot.hlo", 1,
		 2, 8},
		/* Headerless, one computation "entry" without ROOT? has ROOT. */
		{"xla__tools__print_indexing_test.hlo", 1, 1, 3},
	};

	(void)state;
	check_counts(cases, USC__ARRAY_LEN(cases));
}

/* The project's files, counted by hand from their text. */
static void test_own_counts(void **state)
{
	static const file_counts cases[] = {
		/* sum.add 3, fused_scale 7, main.10 6. */
		{"long_form.hlo", 1, 3, 16},
		/* Split in 3 by "// -----": 1 + 2 + 2 computations of
		   2, 4 + 2 and 5 + 3 instructions. */
		{"lit_split.hlo", 3, 5, 16},
		/* max_of 3, fused_row_max 3, main 2. */
		{"headerless.hlo", 1, 3, 8},
		/* region_add 3, fused_bias_tanh 5, fused_row_sum 3,
		   fused_pieces 7, fused_step 3, body 5, cond 4, main.1 11. */
		{"program_dump.hlo", 1, 8, 41},
		/* Two HloModule lines: 4 and 3 instructions. */
		{"dot_bf16.hlo", 2, 2, 7},
		{"literals.hlo", 1, 1, 13},
		{"bad_reshape.hlo", 1, 1, 2},
	};

	(void)state;
	check_counts(cases, USC__ARRAY_LEN(cases));
}

/* Shorthand: the computation NAME of module m, which must exist. */
static const usc_hlo_computation *comp(const usc_hlo_module *m,
				       const char *name)
{
	for (size_t i = 0; i < m->computation_count; i++)
		if (strcmp(m->computations[i]->name, name) == 0)
			return m->computations[i];
	fail_msg("no computation %s", name);
	return NULL;
}

static usc_hlo_file *parse_own(const char *name)
{
	char path[8192];
	usc_hlo_file *f = NULL;
	usc_error err;

	snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
	if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
		fail_msg("%s", err.message);
	return f;
}

/*
 * The forms docs/hlo.md promises, on the project's files: entries and
 * roots that the text leaves implicit, modules split by "// -----",
 * layouts kept as text, metadata and typed attributes.
 */
static void test_own_forms(void **state)
{
	usc_hlo_file *f;
	const usc_hlo_module *m;
	const usc_hlo_computation *c;
	const usc_hlo_instr *in;

	(void)state;
	/* No ENTRY: the last computation; no ROOT: the last instruction. */
	f = parse_own("headerless.hlo");
	m = usc_hlo_file_module(f, 0);
	assert_null(m->name);
	assert_false(m->has_header);
	assert_string_equal(m->entry->name, "main");
	assert_false(m->entry->explicit_entry);
	c = comp(m, "max_of");
	assert_false(c->explicit_root);
	assert_string_equal(c->root->name, "m");
	usc_hlo_file_destroy(f);

	/* The third module has no header; comments are skipped. */
	f = parse_own("lit_split.hlo");
	assert_string_equal(usc_hlo_file_module(f, 0)->name, "negate_kernel");
	assert_string_equal(usc_hlo_file_module(f, 1)->name, "clamp_kernel");
	m = usc_hlo_file_module(f, 2);
	assert_null(m->name);
	assert_string_equal(m->entry->name, "e");
	assert_true(m->entry->explicit_entry);
	usc_hlo_file_destroy(f);

	/* Long form: signatures, tiled layouts as text, metadata. */
	f = parse_own("long_form.hlo");
	m = usc_hlo_file_module(f, 0);
	assert_string_equal(m->name, "long_form_scale");
	c = comp(m, "fused_scale");
	assert_true(c->has_signature);
	assert_int_equal(c->param_count, 2);
	assert_string_equal(c->params[1].name, "param_1.4");
	in = c->instrs[3];
	assert_string_equal(in->name, "multiply.6");
	assert_string_equal(in->shape.layout, "1,0:T(4,128)");
	assert_non_null(in->metadata);
	assert_string_equal(in->metadata->op_type, "Mul");
	assert_string_equal(in->metadata->op_name, "model/scale/mul");
	assert_string_equal(in->metadata->source_file, "model.py");
	assert_int_equal(in->metadata->source_line, 41);
	assert_string_equal(m->entry->name, "main.10");
	assert_string_equal(m->entry->root->name, "tuple.13");
	usc_hlo_file_destroy(f);

	/* A fusion of six operands written with an index comment. */
	f = parse_own("program_dump.hlo");
	m = usc_hlo_file_module(f, 0);
	c = m->entry;
	in = c->instrs[6];
	assert_string_equal(in->name, "pieces");
	assert_int_equal(in->operand_count, 6);
	assert_string_equal(in->operands[5]->name, "s0");
	assert_string_equal(in->called[0]->name, "fused_pieces");
	assert_int_equal(comp(m, "fused_row_sum")->root->metadata->source_line,
			 -1);
	assert_int_equal(comp(m, "fused_bias_tanh")->root->metadata->source_line,
			 13);
	usc_hlo_file_destroy(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_files),
		cmocka_unit_test(test_own_counts),
		cmocka_unit_test(test_own_forms),
		cmocka_unit_test(test_kernels),
	};
	const struct CMUnitTest xla[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_counts),
	};

	if (corpus_is_xla(argc, argv)) {
		corpus_xla_dir_or_skip(corpus_dir, sizeof corpus_dir);
		return cmocka_run_group_tests_name("xla corpus", xla, NULL,
						   NULL);
	}
	corpus_own_dir(corpus_dir, sizeof corpus_dir, "tests/hlo/corpus");
	return cmocka_run_group_tests_name("own files", own, NULL, NULL);
}
