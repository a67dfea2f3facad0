/*
 * libFuzzer harness for the HLO parser: any byte string must parse or fail
 * with a message, never crash or leak; whatever parses must print in both
 * forms and reparse to an equal module.  Seed it with the corpus:
 *   fuzz_hlo_parser -max_total_time=600 CORPUS_DIR /work/shared/corpus/hlo
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "ulpscope/hlo.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse((const char *)data, size, "fuzz", &f, &err) != USC_OK)
		return 0;
	check_round_trip(f, USC_HLO_PRINT_LONG);
	check_round_trip(f, USC_HLO_PRINT_SHORT);
	usc_hlo_file_destroy(f);
	return 0;
}
