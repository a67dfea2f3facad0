/*
 * Small pieces the subcommands share: paths, JSON output, indices.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli.h"

bool usc_cli_is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

void usc_cli_json_num(double x)
{
	if (isfinite(x))
		printf("%.17g", x);
	else
		printf("null");
}

void usc_cli_json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

void usc_cli_print_index(FILE *out, const usc_tensor *t, uint64_t k)
{
	size_t rank = usc_tensor_rank(t);
	const int64_t *dims = usc_tensor_dims(t);
	int64_t idx[64];

	for (size_t d = rank; d-- > 0;) {
		idx[d] = dims[d] ? (int64_t)(k % (uint64_t)dims[d]) : 0;
		k = dims[d] ? k / (uint64_t)dims[d] : 0;
	}
	for (size_t d = 0; d < rank; d++)
		fprintf(out, "%s%" PRId64, d ? "," : "", idx[d]);
}

void usc_cli_json_envelope(const usc_envelope *e)
{
	if (e->flags & USC_ENV_UNKNOWN) {
		printf("null");
		return;
	}
	printf("{\"lo\": ");
	usc_cli_json_num(e->flags & USC_ENV_FINITE ? e->lo : NAN);
	printf(", \"hi\": ");
	usc_cli_json_num(e->flags & USC_ENV_FINITE ? e->hi : NAN);
	printf(", \"nan\": %s, \"pos_inf\": %s, \"neg_inf\": %s}",
	       e->flags & USC_ENV_NAN ? "true" : "false",
	       e->flags & USC_ENV_POS_INF ? "true" : "false",
	       e->flags & USC_ENV_NEG_INF ? "true" : "false");
}

int usc_cli_operand(const char *a, const char **list, size_t *count,
		    const char **target, const char *usage)
{
	if (a[0] == '-' && a[1] == '-') {
		usc_cli_error("unknown or incomplete option '%s'\n%s", a,
			      usage);
		return USC_EXIT_USAGE;
	}
	if (list) {
		if (*count == USC_CLI_MAX_SOURCES) {
			usc_cli_error("too many sources (at most %d)",
				      USC_CLI_MAX_SOURCES);
			return USC_EXIT_USAGE;
		}
		list[(*count)++] = a;
		return USC_EXIT_OK;
	}
	if (!*target) {
		*target = a;
		return USC_EXIT_OK;
	}
	usc_cli_error("unexpected argument '%s'\n%s", a, usage);
	return USC_EXIT_USAGE;
}
