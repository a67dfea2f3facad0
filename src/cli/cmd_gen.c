/*
 * ulpscope gen: a random fused kernel from a seed, printed as HLO text
 * (include/ulpscope/gen.h, docs/fuzzing.md).  A thin layer: the options
 * are parsed here, the module is the library's.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/gen.h"
#include "ulpscope/hlo.h"

enum { GEN_SEED, GEN_OPS };

const usc_cli_num_opt usc_cli_gen_nums[] = {
	[GEN_SEED] = USC_CLI_HEX_OPT("--seed", "S", 0, UINT64_MAX,
				     "the seed: one module per seed (required)"),
	[GEN_OPS] = USC_CLI_INT_OPT("--ops", "N", USC_GEN_MIN_OPS,
				    USC_GEN_MAX_OPS,
				    "generation steps, each one to a few "
				    "instructions (12)"),
	USC_CLI_NUM_END,
};

static const char gen_usage_text[] =
	"usage: ulpscope gen --seed S [--ops N] [--types LIST] [-o OUT.hlo]";

static int gen_usage(void)
{
	fprintf(stderr, "%s\n", gen_usage_text);
	return USC_EXIT_USAGE;
}

/* "f32,bf16": each a type the generator draws. */
static int parse_types(const char *list, usc_gen_options *o)
{
	const char *p = list;

	o->type_count = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		usc_dtype t;

		if (!len || usc_dtype_from_name(p, len, &t) != USC_OK ||
		    !usc_gen_type_supported(t)) {
			usc_cli_error("--types: '%.*s' is not a type the "
				      "generator draws; expected a comma-"
				      "separated list of f32, bf16, f16, "
				      "f8e4m3fn, f8e5m2",
				      (int)len, p);
			return -1;
		}
		if (o->type_count == USC_GEN_MAX_TYPES) {
			usc_cli_error("--types: at most %d types",
				      USC_GEN_MAX_TYPES);
			return -1;
		}
		o->types[o->type_count++] = t;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int usc_cli_gen(int argc, char **argv)
{
	usc_gen_options o = usc_gen_options_default();
	const char *out = NULL;
	bool have_seed = false;
	usc_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	int rc;

	for (int i = 1; i < argc; i++) {
		usc_cli_num v;
		int k = usc_cli_num_arg(usc_cli_gen_nums, argc, argv, &i, &v);

		if (k == USC_CLI_NUM_BAD)
			return USC_EXIT_USAGE;
		if (k == GEN_SEED) {
			o.seed = v.u;
			have_seed = true;
		} else if (k == GEN_OPS) {
			o.ops = (size_t)v.u;
		} else if (strcmp(argv[i], "--types") == 0 && i + 1 < argc) {
			if (parse_types(argv[++i], &o) != 0)
				return USC_EXIT_USAGE;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else {
			usc_cli_error("unknown or incomplete option '%s'",
				      argv[i]);
			return gen_usage();
		}
	}
	if (!have_seed) {
		usc_cli_error("--seed is required");
		return gen_usage();
	}
	usc_error_clear(&err);
	if (usc_gen_text(&o, &text, &len, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	fp = out ? fopen(out, "w") : stdout;
	if (!fp) {
		usc_cli_error("%s: cannot open for writing", out);
		usc_hlo_text_free(text);
		return USC_EXIT_FAIL;
	}
	rc = fwrite(text, 1, len, fp) == len ? USC_EXIT_OK : USC_EXIT_FAIL;
	if (out && fclose(fp) != 0)
		rc = USC_EXIT_FAIL;
	else if (!out && fflush(fp) != 0)
		rc = USC_EXIT_FAIL;
	if (rc != USC_EXIT_OK)
		usc_cli_error("%s: write failed", out ? out : "<stdout>");
	usc_hlo_text_free(text);
	return rc;
}
