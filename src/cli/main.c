/* ulpscope: the command-line program's entry point and dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/ulpscope.h"

enum { LIMIT_FILE_SIZE, LIMIT_ELEMENTS, LIMIT_ITERATIONS };

/*
 * The limits on what is read (include/ulpscope/limits.h), which every
 * subcommand takes; the upper bounds are where a size in bytes of the
 * elements could no longer be counted in 64 bits.
 */
const usc_cli_num_opt usc_cli_limit_nums[] = {
	[LIMIT_FILE_SIZE] = USC_CLI_SIZE_OPT(
		"--max-file-size", "BYTES", 1, UINT64_C(1) << 50,
		"the largest HLO, case.json or profile file read (256M)"),
	[LIMIT_ELEMENTS] = USC_CLI_SIZE_OPT(
		"--max-elements", "N", 1, UINT64_C(1) << 50,
		"the most elements of any one tensor read or evaluated (256M, "
		"i.e. 2^28)"),
	[LIMIT_ITERATIONS] = USC_CLI_SIZE_OPT(
		"--max-iterations", "N", 1, UINT64_C(1) << 50,
		"the most iterations of one while loop evaluated (1M)"),
	USC_CLI_NUM_END,
};

static const usc_cli_command commands[] = {
	{"formats", usc_cli_formats, "formats [--check]",
	 "list every element type and its descriptor; --check runs the "
	 "built-in self-check of every format"},
	{"cast", usc_cli_cast,
	 "cast TYPE VALUE... [--round MODE] [--overflow POLICY] [--ftz] "
	 "[--random WORD] [--random-bits K]",
	 "encode decimal or hex-float values into TYPE, rounding once"},
	{"decode", usc_cli_decode, "decode TYPE 0xBITS...",
	 "the exact value of encodings of TYPE"},
	{"ulp", usc_cli_ulp, "ulp TYPE A B",
	 "the error of A against the reference B in ULPs of TYPE, and the "
	 "ordinal distance between their encodings (a value written 0b:HEX "
	 "is an encoding)"},
	{"hlo", usc_cli_hlo, "hlo FILE [--verify] [--json] [--print]",
	 "summarize each module of an HLO file: entry signature, every "
	 "fusion with its op histogram, element types, shapes and source "
	 "ops; --verify checks the shape rules"},
	{"extract", usc_cli_extract,
	 "extract FILE --fusion NAME [-o OUT] [--short] [--no-metadata]",
	 "write one fusion (named by instruction or fused computation) as a "
	 "standalone HLO module"},
	{"check", usc_cli_check,
	 "check (CASE_DIR | DUMP_DIR --module NAME_OR_ID [--execution K] | "
	 "KERNEL.hlo [--fusion NAME] --input SRC... "
	 "--device SRC...) [--out FILE.h5 [--append | --force]] [--json] [--worst K] "
	 "[--pairwise] [--precision-max BITS] [--quantize] [--strict-oracle] "
	 "[--input-raw] [-j N] [--piece N]",
	 "the device output's error in ULPs against the certified oracle and "
	 "the strict reference, element by element"},
	{"audit", usc_cli_audit,
	 "audit (BEFORE.hlo AFTER.hlo | --pipeline DUMP_DIR [--module NAME]) "
	 "(--input SRC... | --draw DIST[,DIST...] [--samples N] [--seed S]) "
	 "[--profile NAME|FILE] [--threshold ULP] [--fail-on-regression ULP] "
	 "[--ops [--ops-max N]] [--out FILE.h5 [--append | --force] "
	 "[--name NAME]] [--json]",
	 "what a pass did: whether the two modules' functions differ, and "
	 "each reference's error against the BEFORE oracle, element by "
	 "element; op by op; along a pipeline of per-pass dumps "
	 "(docs/audit.md)"},
	{"import", usc_cli_import,
	 "import DUMP_DIR -o CASES_DIR [--module NAME_OR_ID] [--execution K]",
	 "write each snapshot of an XLA dump directory (--xla_dump_to with "
	 "--xla_dump_hlo_snapshots) as a case directory, "
	 "CASES_DIR/NAME/execution_K (docs/dumps.md)"},
	{"bisect", usc_cli_bisect,
	 "bisect (CASE_DIR | DUMP_DIR --module NAME_OR_ID [--execution K] | "
	 "KERNEL.hlo [--fusion NAME] --input SRC... "
	 "--intermediate NAME=SRC... [--device SRC...]) [--profile "
	 "NAME|FILE] [--json] [--pairwise] [--input-raw]",
	 "compare each captured intermediate with its own legitimate "
	 "envelope in topological order and name the first op outside "
	 "(docs/bisect.md)"},
	{"profiles", usc_cli_profiles, "profiles [NAME | FILE]",
	 "list the built-in device profiles; with a name or a profile file, "
	 "validate it and print every key in canonical form "
	 "(docs/profiles.md)"},
	{"signature", usc_cli_signature,
	 "signature (CASE_DIR [--device SRC...] | KERNEL.hlo [--fusion NAME] "
	 "--input SRC... --device SRC...) [--top K] [--max-seconds S] "
	 "[--max-candidates N] [--min-fraction F] [--profile NAME|FILE] "
	 "[--json]; or KERNEL.hlo --mutant OP KIND[/VARIANT] -o OUT.hlo",
	 "which single-op mutation of the kernel (narrower type, rounding "
	 "mode, dropped op, off-by-one index...) reproduces the device "
	 "output bit for bit (docs/signatures.md)"},
	{"explain", usc_cli_explain,
	 "explain (CASE_DIR | KERNEL.hlo [--fusion NAME] --input SRC... "
	 "--device SRC... | RESULTS.h5 --kernel K --input SRC...) "
	 "--element I,J,... [--flat] [--output N] [--profile NAME|FILE] "
	 "[--depth D] [--terms N] [--no-attribute] [--json] [--pairwise] "
	 "[--input-raw]",
	 "one output element's computation as a tree, from the output back "
	 "to the parameters: each op's reference value, exact value, "
	 "rounding, contribution to the error, envelope and source line "
	 "(docs/explain.md)"},
	{"batch", usc_cli_batch,
	 "batch ROOT... --out RESULTS.h5 [-j N] [--profile NAME|FILE | "
	 "--no-profile] [--attribute] [--case-timeout S] [--case-memory MB] "
	 "[--cases-per-worker N] [--shard K/N] [--retry-failed] [--restart] [--force] [--top K] "
	 "[--json] [--quiet]",
	 "check every case directory under the roots in parallel worker "
	 "processes, resumably (run it again after a kill), into one index; "
	 "rank the worst kernels (docs/batch.md)"},
	{"merge", usc_cli_merge,
	 "merge SHARD.h5... -o RESULTS.h5 [--allow-partial] [--force] "
	 "[--top K] [--json]",
	 "combine the indexes of a batch run in shards (--shard K/N) into "
	 "one (docs/batch.md)"},
	{"report", usc_cli_report,
	 "report RESULTS.h5 -o REPORT.html [--detail N] [--worst K] "
	 "[--grid G] [--hlo-lines N]",
	 "one self-contained HTML page of a result file or batch index: "
	 "verdicts, |ulp| histograms, heat and class maps, worst elements, "
	 "op budget, shaded HLO, signatures (docs/report.md)"},
	{"gen", usc_cli_gen,
	 "gen --seed S [--ops N] [--types LIST] [-o OUT.hlo]",
	 "a random fused kernel (an HLO module XLA fuses) from a seed, "
	 "valid by construction (docs/fuzzing.md)"},
	{"reduce", usc_cli_reduce, "reduce MODULE.hlo (--candidates | --size)",
	 "the smaller modules one step away (drop an op or an output, "
	 "simplify a constant, halve a dimension), for the minimiser of "
	 "tools/fuzz_xla (docs/fuzzing.md)"},
	{"eval", usc_cli_eval,
	 "eval KERNEL.hlo --input SOURCE... [-o OUT_PREFIX] [--pairwise] "
	 "[--input-raw]",
	 "evaluate the entry computation in the reference domain (every op "
	 "correctly rounded to its type); print each output and write it to "
	 "OUT_PREFIX_i.npy"},
};

void usc_cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ulpscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usc_cli_parse_type(const char *name, usc_dtype *out)
{
	if (usc_dtype_from_name(name, strlen(name), out) == USC_OK)
		return 0;
	usc_cli_error("unknown element type '%s'; expected one of:", name);
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++)
		fprintf(stderr, "%s%s", t > 1 ? " " : "  ",
			usc_dtype_name((usc_dtype)t));
	fputc('\n', stderr);
	return -1;
}

/* The numeric options of a command, if it has any. */
static const usc_cli_num_opt *numeric_options(const char *name)
{
	static const struct {
		const char *name;
		const usc_cli_num_opt *nums;
	} map[] = {
		{"cast", usc_cli_cast_nums},
		{"check", usc_cli_check_nums},
		{"audit", usc_cli_audit_nums},
		{"signature", usc_cli_signature_nums},
		{"explain", usc_cli_explain_nums},
		{"batch", usc_cli_batch_nums},
		{"merge", usc_cli_merge_nums},
		{"report", usc_cli_report_nums},
		{"gen", usc_cli_gen_nums},
	};

	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i].name, name) == 0)
			return map[i].nums;
	return NULL;
}

/* "ulpscope COMMAND --help": its synopsis and every numeric range. */
static void command_help(const usc_cli_command *c)
{
	const usc_cli_num_opt *nums = numeric_options(c->name);

	printf("usage: ulpscope %s\n\n%s\n", c->synopsis, c->summary);
	if (nums) {
		printf("\nnumeric options:\n");
		usc_cli_num_help(stdout, nums);
	}
	printf("\nlimits on what is read (every command; docs/limits.md):\n");
	usc_cli_num_help(stdout, usc_cli_limit_nums);
}

/*
 * Takes the limit options out of argv (they may stand anywhere after the
 * command) and sets them.  Returns USC_EXIT_OK, or USC_EXIT_USAGE after
 * printing why a value is refused.
 */
static int take_limits(int *argc, char **argv)
{
	usc_limits lim = usc_limits_get();
	int n = 1;

	for (int i = 1; i < *argc; i++) {
		usc_cli_num v;
		int k = usc_cli_num_arg(usc_cli_limit_nums, *argc, argv, &i, &v);

		if (k == USC_CLI_NUM_BAD)
			return USC_EXIT_USAGE;
		if (k == LIMIT_FILE_SIZE)
			lim.max_file_bytes = v.u;
		else if (k == LIMIT_ELEMENTS)
			lim.max_elements = v.u;
		else if (k == LIMIT_ITERATIONS)
			lim.max_iterations = v.u;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	*argc = n;
	usc_limits_set(&lim);
	return USC_EXIT_OK;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: ulpscope COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  ulpscope %s\n      %s\n", commands[i].synopsis,
			commands[i].summary);
	fprintf(out, "\nulpscope --help | --version | COMMAND --help (its "
		     "options and their ranges)\n"
		     "every command takes --max-file-size BYTES and "
		     "--max-elements N, --max-iterations N (docs/limits.md)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return USC_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return USC_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ulpscope %s\n", usc_version());
		return USC_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		int sub_argc = argc - 1;

		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		for (int a = 2; a < argc; a++)
			if (strcmp(argv[a], "--help") == 0 ||
			    strcmp(argv[a], "-h") == 0) {
				command_help(&commands[i]);
				return USC_EXIT_OK;
			}
		if (take_limits(&sub_argc, argv + 1) != USC_EXIT_OK)
			return USC_EXIT_USAGE;
		return commands[i].run(sub_argc, argv + 1);
	}
	usc_cli_error("unknown command '%s'; 'ulpscope --help' lists them",
		      argv[1]);
	return USC_EXIT_USAGE;
}
