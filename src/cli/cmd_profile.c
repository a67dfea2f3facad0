/*
 * ulpscope profiles: the device profiles.  Without an argument, the
 * built-in profiles with their descriptions; with NAME or FILE, the
 * profile validated and printed in canonical form (every key, the order
 * of docs/profiles.md).  A thin layer over ulpscope/profile.h.
 *
 * Exit status: 0 listed or valid; 1 the profile is invalid or cannot be
 * read (a bad input, as for the other commands); 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/profile.h"

static const char usage_text[] = "usage: ulpscope profiles [NAME | FILE]";

static int list_builtins(void)
{
	const char *const *names = usc_profile_builtin_names();
	usc_error err;

	for (size_t i = 0; names[i] != NULL; i++) {
		usc_profile p;

		if (usc_profile_builtin(names[i], &p, &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			return USC_EXIT_FAIL;
		}
		printf("%-8s  %s\n", p.name, p.description);
	}
	return USC_EXIT_OK;
}

int usc_cli_profiles(int argc, char **argv)
{
	usc_profile p;
	usc_error err;
	char *text = NULL;

	if (argc == 1)
		return list_builtins();
	if (argc != 2 || (argv[1][0] == '-' && argv[1][1] != '\0')) {
		if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
				  strcmp(argv[1], "-h") == 0)) {
			printf("%s\n", usage_text);
			return USC_EXIT_OK;
		}
		usc_cli_error("%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if (usc_profile_resolve(argv[1], &p, &err) != USC_OK ||
	    usc_profile_format(&p, &text, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	fputs(text, stdout);
	usc_profile_text_free(text);
	return USC_EXIT_OK;
}
