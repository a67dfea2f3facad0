/*
 * ulpscope reduce: the smaller modules one step away from a module, for
 * the minimiser of tools/fuzz_xla (include/ulpscope/reduce.h,
 * docs/fuzzing.md).  A thin layer: the candidates are the library's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "internal.h"
#include "ulpscope/reduce.h"

static const char reduce_usage_text[] =
	"usage: ulpscope reduce MODULE.hlo (--candidates | --size)";

static int reduce_usage(void)
{
	fprintf(stderr, "%s\n", reduce_usage_text);
	return USC_EXIT_USAGE;
}

static void print_size(const usc_reduce_size *s)
{
	printf("instrs %zu outputs %lld elements %lld constants %zu", s->instrs,
	       (long long)s->outputs, (long long)s->elements, s->constants);
}

int usc_cli_reduce(int argc, char **argv)
{
	const char *path = NULL;
	bool candidates = false, size = false;
	usc_reduce_candidate *c = NULL;
	usc_reduce_size base;
	usc_error err;
	char *text = NULL;
	size_t len = 0, n = 0;
	usc_status st;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--candidates") == 0) {
			candidates = true;
		} else if (strcmp(argv[i], "--size") == 0) {
			size = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usc_cli_error("unknown option '%s'", argv[i]);
			return reduce_usage();
		} else if (path) {
			usc_cli_error("one module at a time ('%s' and '%s')",
				      path, argv[i]);
			return reduce_usage();
		} else {
			path = argv[i];
		}
	}
	if (!path || candidates == size) {
		usc_cli_error(!path ? "no module given"
				    : "give one of --candidates and --size");
		return reduce_usage();
	}
	usc_error_clear(&err);
	if (usc__read_file(path, &text, &len, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	st = usc_reduce_size_of(text, len, path, &base, &err);
	if (st == USC_OK && candidates)
		st = usc_reduce_candidates(text, len, path, &c, &n, &err);
	usc__free(text);
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (size) {
		print_size(&base);
		putchar('\n');
		return USC_EXIT_OK;
	}
	/* One module per candidate, split as HLO files of several modules
	 * are ("// -----"), each preceded by a comment saying what changed. */
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs("// -----\n", stdout);
		printf("// candidate %zu: %s (", i + 1, c[i].what);
		print_size(&c[i].size);
		fputs(")\n", stdout);
		fwrite(c[i].text, 1, c[i].len, stdout);
	}
	usc_reduce_candidates_free(c, n);
	if (fflush(stdout) != 0) {
		usc_cli_error("<stdout>: write failed");
		return USC_EXIT_FAIL;
	}
	return USC_EXIT_OK;
}
