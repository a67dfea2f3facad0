/*
 * Every file of the HLO corpus ($USC_SHARED_DIR/corpus/hlo) parses, and
 * round-trips through the printer in both forms: parse(print(parse(x))) is
 * structurally equal to parse(x).  The module, computation and instruction
 * counts of a few files are checked against counts taken by hand (grep) from
 * the files themselves.
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

static char corpus_dir[4096];

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

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

static void test_corpus(void **state)
{
	char *names[512];
	size_t n = 0, i, total_instrs = 0, total_modules = 0;
	struct dirent *de;
	DIR *d;

	(void)state;
	d = opendir(corpus_dir);
	if (!d)
		fail_msg("cannot open %s", corpus_dir);
	while ((de = readdir(d)) && n < USC__ARRAY_LEN(names)) {
		size_t l = strlen(de->d_name);

		if ((l > 4 && strcmp(de->d_name + l - 4, ".hlo") == 0) ||
		    (l > 4 && strcmp(de->d_name + l - 4, ".txt") == 0))
			{
			names[n] = malloc(l + 1);
			assert_non_null(names[n]);
			memcpy(names[n++], de->d_name, l + 1);
		}
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	for (i = 0; i < n; i++) {
		char path[8192];
		usc_hlo_file *f = NULL;
		usc_error err;
		size_t comps, instrs;
		long live = usc__alloc_live();

		snprintf(path, sizeof path, "%s/%s", corpus_dir, names[i]);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		count_file(f, &comps, &instrs);
		total_instrs += instrs;
		total_modules += usc_hlo_file_module_count(f);
		round_trip(names[i], f, USC_HLO_PRINT_LONG);
		round_trip(names[i], f, USC_HLO_PRINT_SHORT);
		usc_hlo_file_destroy(f);
		assert_int_equal(usc__alloc_live(), live);
		free(names[i]);
	}
	printf("hlo corpus: %zu files parsed and round-tripped in both forms "
	       "(%zu modules, %zu instructions)\n",
	       n, total_modules, total_instrs);
	assert_true(n >= 65);
}

/*
 * The project's own kernel catalogue (the .hlo files of
 * $USC_SOURCE_DIR/kernels, real jax dumps with stack-frame tables) parses
 * and round-trips as well.
 */
static void test_kernels(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char dir[4096];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	(void)state;
	snprintf(dir, sizeof dir, "%s/kernels", src ? src : ".");
	d = opendir(dir);
	if (!d)
		skip();
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
}

/* Counts taken with grep from the files (see the comments). */
static void test_counts(void **state)
{
	static const struct {
		const char *name;
		size_t modules, comps, instrs;
	} cases[] = {
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
	size_t i;

	(void)state;
	for (i = 0; i < USC__ARRAY_LEN(cases); i++) {
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

int main(void)
{
	const char *shared = getenv("USC_SHARED_DIR");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_kernels),
	};

	snprintf(corpus_dir, sizeof corpus_dir, "%s/corpus/hlo",
		 shared ? shared : "../shared");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
