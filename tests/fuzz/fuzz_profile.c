/*
 * libFuzzer harness for the profile parser (src/analyze/profile.c): any
 * byte string must parse as profile text or fail with a message, never
 * crash or leak; whatever parses must format as text that parses back to
 * an equal profile (or be refused by the formatter with a message).  Seed
 * it with the built-in profiles and the test profiles:
 *   fuzz_profile -max_total_time=600 CORPUS_DIR data/profiles \
 *       tests/profile/cases
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulpscope/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_profile p, q;
	usc_error err;
	char *text = NULL;

	if (usc_profile_parse((const char *)data, size, "fuzz.profile", &p,
			      &err) != USC_OK)
		return 0;
	if (usc_profile_format(&p, &text, &err) != USC_OK)
		return 0;
	if (usc_profile_parse(text, strlen(text), "<formatted>", &q, &err) !=
	    USC_OK) {
		fprintf(stderr, "reparse failed: %s\n--- formatted:\n%s\n",
			err.message, text);
		abort();
	}
	if (!usc_profile_equal(&p, &q)) {
		fprintf(stderr, "round trip differs\n--- formatted:\n%s\n",
			text);
		abort();
	}
	usc_profile_text_free(text);
	return 0;
}
