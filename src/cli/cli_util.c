/*
 * Small pieces the subcommands share: numeric options, paths, JSON
 * output, indices.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ------------------------------------------------------ numeric options */

static int digit_value(char c, bool hex)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (hex && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (hex && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Digits of base 10 (or 16 after 0x, when hex) from *p, stopping at the
 * first other character.  strtoull is not used: it takes a sign and
 * negates ("-1" is 2^64-1) and skips leading blanks.  Returns -1 without
 * digits, -2 on overflow, else 0.
 */
static int scan_u64(const char **p, bool hex, uint64_t *out)
{
	const char *s = *p;
	unsigned base = 10;
	uint64_t v = 0;
	int d;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (digit_value(*s, base == 16) < 0)
		return -1;
	for (; (d = digit_value(*s, base == 16)) >= 0; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -2;
		v = v * base + (uint64_t)d;
	}
	*p = s;
	*out = v;
	return 0;
}

bool usc_cli_parse_u64(const char *text, bool hex, uint64_t *out)
{
	const char *p = text;
	uint64_t v;

	if (scan_u64(&p, hex, &v) != 0 || *p != '\0')
		return false;
	*out = v;
	return true;
}

/* A size's suffix: K, M, G, T (with an optional iB or B) as a shift. */
static int size_shift(const char *s)
{
	static const char units[] = "KMGT";
	const char *u = *s ? strchr(units, *s) : NULL;

	if (!*s)
		return 0;
	if (!u)
		return -1;
	if (strcmp(s + 1, "") != 0 && strcmp(s + 1, "iB") != 0 &&
	    strcmp(s + 1, "B") != 0)
		return -1;
	return 10 * (int)(u - units + 1);
}

void usc_cli_num_range(const usc_cli_num_opt *opt, char *buf, size_t size)
{
	switch (opt->kind) {
	case USC_CLI_INT:
		snprintf(buf, size, "an integer from %" PRIu64 " to %" PRIu64,
			 opt->min, opt->max);
		break;
	case USC_CLI_SIZE:
		snprintf(buf, size,
			 "a size from %" PRIu64 " to %" PRIu64
			 " (a suffix K, M, G or T multiplies by 1024, 1024^2...)",
			 opt->min, opt->max);
		break;
	case USC_CLI_REAL:
		snprintf(buf, size, "a number in %c%.17g, %.17g]",
			 opt->lo_open ? '(' : '[', opt->lo, opt->hi);
		break;
	}
}

int usc_cli_num_parse(const usc_cli_num_opt *opt, const char *text,
		      usc_cli_num *v)
{
	char range[160];
	const char *p = text;
	bool ok = false;

	if (opt->kind == USC_CLI_REAL) {
		char *end;
		double d;

		/* strtod would skip leading blanks; a value has none. */
		errno = 0;
		d = *p && !strchr(" \t\n\v\f\r", *p) ? strtod(p, &end) : 0;
		ok = *p && !strchr(" \t\n\v\f\r", *p) && end != p && !*end &&
		     isfinite(d) &&
		     (opt->lo_open ? d > opt->lo : d >= opt->lo) &&
		     d <= opt->hi;
		if (ok)
			v->d = d;
	} else {
		uint64_t u;
		int shift = 0;

		ok = scan_u64(&p, opt->hex, &u) == 0;
		if (ok && opt->kind == USC_CLI_SIZE) {
			shift = size_shift(p);
			ok = shift >= 0 && (shift == 0 || u <= UINT64_MAX >> shift);
			if (ok)
				u <<= shift;
		} else if (ok) {
			ok = *p == '\0';
		}
		ok = ok && u >= opt->min && u <= opt->max;
		if (ok)
			v->u = u;
	}
	if (ok)
		return 0;
	usc_cli_num_range(opt, range, sizeof range);
	usc_cli_error("%s expects %s, found '%s'", opt->name, range, text);
	return -1;
}

int usc_cli_num_arg(const usc_cli_num_opt *table, int argc, char **argv,
		    int *i, usc_cli_num *v)
{
	for (int k = 0; table[k].name; k++) {
		if (strcmp(argv[*i], table[k].name) != 0)
			continue;
		if (*i + 1 >= argc)
			return USC_CLI_NUM_NONE;
		*i += 1;
		return usc_cli_num_parse(&table[k], argv[*i], v) == 0
			       ? k
			       : USC_CLI_NUM_BAD;
	}
	return USC_CLI_NUM_NONE;
}

void usc_cli_num_help(FILE *out, const usc_cli_num_opt *table)
{
	for (int k = 0; table[k].name; k++) {
		char range[160], head[64];

		usc_cli_num_range(&table[k], range, sizeof range);
		snprintf(head, sizeof head, "%s %s", table[k].name,
			 table[k].metavar);
		fprintf(out, "  %-24s %s\n  %-24s %s\n", head, table[k].help,
			"", range);
	}
}
