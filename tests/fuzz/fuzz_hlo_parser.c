/*
 * libFuzzer harness for the HLO parser: any byte string must parse or fail
 * with a message, never crash or leak; whatever parses must print in both
 * forms and reparse to an equal module, and the tools built on the IR
 * (verifier, summary, fusion isolation) must answer without crashing.
 * tools/fuzz.sh seeds it with the project's HLO files (docs/fuzzing.md):
 *   bash tools/fuzz.sh 600 fuzz_hlo_parser
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const usc_hlo_file *f, usc_hlo_print_form form)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	usc_hlo_file *g = NULL;
	usc_error err;
	char *text = NULL, diff[256];
	size_t len, i;

	o.form = form;
	if (usc_hlo_file_print(f, &o, &text, &len, &err) != USC_OK)
		abort();
	if (usc_hlo_parse(text, len, "<printed>", &g, &err) != USC_OK) {
		fprintf(stderr, "reparse failed: %s\n--- printed:\n%s\n",
			err.message, text);
		abort();
	}
	if (usc_hlo_file_module_count(g) != usc_hlo_file_module_count(f))
		abort();
	for (i = 0; i < usc_hlo_file_module_count(f); i++) {
		if (!usc_hlo_module_equal(usc_hlo_file_module(f, i),
					  usc_hlo_file_module(g, i), diff,
					  sizeof diff)) {
			fprintf(stderr, "round trip differs: %s\n--- printed:\n%s\n",
				diff, text);
			abort();
		}
	}
	usc_hlo_file_destroy(g);
	usc_hlo_text_free(text);
}

/*
 * The verifier, the summary and the isolation of every fusion must answer
 * (any status) on whatever parses; an isolated kernel must reparse.
 */
static void check_kernel_tools(const usc_hlo_file *f)
{
	for (size_t i = 0; i < usc_hlo_file_module_count(f); i++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, i);
		usc_hlo_module_summary *s = NULL;
		usc_error err;

		(void)usc_hlo_verify(m, &err);
		if (usc_hlo_module_summarize(m, &s, &err) != USC_OK)
			continue;
		for (size_t k = 0; k < s->fusion_count && k < 4; k++) {
			usc_hlo_file *g = NULL;
			const char *name = s->fusions[k].fusion->name;

			if (usc_hlo_extract_fusion_file(m, name, &g, &err) ==
			    USC_OK)
				usc_hlo_file_destroy(g);
		}
		usc_hlo_module_summary_destroy(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse((const char *)data, size, "fuzz", &f, &err) != USC_OK)
		return 0;
	check_round_trip(f, USC_HLO_PRINT_LONG);
	check_round_trip(f, USC_HLO_PRINT_SHORT);
	check_kernel_tools(f);
	usc_hlo_file_destroy(f);
	return 0;
}
