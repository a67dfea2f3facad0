/*
 * The ulpscope command-line program: each subcommand is a thin layer over
 * the public API.  Exit status: 0 success, 1 a check found a problem (or
 * an input was bad), 2 a usage error.
 */
#ifndef USC_CLI_H
#define USC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

enum { USC_EXIT_OK = 0, USC_EXIT_FAIL = 1, USC_EXIT_USAGE = 2 };

typedef struct usc_cli_command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *synopsis;
	const char *summary;
} usc_cli_command;

int usc_cli_formats(int argc, char **argv);
int usc_cli_cast(int argc, char **argv);
int usc_cli_decode(int argc, char **argv);
int usc_cli_ulp(int argc, char **argv);
int usc_cli_hlo(int argc, char **argv);
/* XLA dump directories (cmd_dump.c, docs/dumps.md). */
int usc_cli_import(int argc, char **argv);
bool usc_cli_is_dump(int argc, char **argv);
int usc_cli_check_dump(int argc, char **argv);
int usc_cli_bisect_dump(int argc, char **argv);
/* Whether path is an XLA dump directory (module_* files, no kernel.hlo). */
bool usc_cli_is_dump_dir(const char *path);
/*
 * Imports the roots of a batch that are dump directories into
 * OUT.dumps/<name>/ and points them there (cmd_batch_dump.c); made[i]
 * receives the path given to root i (to free), or NULL.  0 or -1.
 */
int usc_cli_batch_dump_roots(const char **roots, size_t n, const char *out,
			     char **made);
/* Reads HLO text or XLA's .pb dumps (HloProto, HloSnapshot) by name. */
usc_status usc_cli_load_hlo(const char *path, usc_hlo_file **f,
			    usc_error *err);
int usc_cli_extract(int argc, char **argv);
int usc_cli_eval(int argc, char **argv);
int usc_cli_check(int argc, char **argv);
int usc_cli_audit(int argc, char **argv);
int usc_cli_profiles(int argc, char **argv);
int usc_cli_bisect(int argc, char **argv);
int usc_cli_signature(int argc, char **argv);
int usc_cli_explain(int argc, char **argv);
int usc_cli_batch(int argc, char **argv);
int usc_cli_merge(int argc, char **argv);
int usc_cli_report(int argc, char **argv);
int usc_cli_gen(int argc, char **argv);
int usc_cli_reduce(int argc, char **argv);

/* Prints "ulpscope: " and the message to stderr. */
void usc_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* Looks up a type by name; prints an error listing the names if unknown. */
int usc_cli_parse_type(const char *name, usc_dtype *out);

/* Whether path is a directory (a case directory, for the commands). */
bool usc_cli_is_dir(const char *path);

/* A double as JSON on stdout: NaN and the infinities have no JSON form:
 * null. */
void usc_cli_json_num(double x);

/* A string as JSON on stdout, quoted and escaped. */
void usc_cli_json_str(const char *s);

/*
 * An envelope as JSON on stdout: {"lo", "hi", "nan", "pos_inf",
 * "neg_inf"} (lo and hi null without finite values), or null if unknown.
 */
void usc_cli_json_envelope(const usc_envelope *e);

/* The most sources one list (--input, --device...) of a command takes. */
#define USC_CLI_MAX_SOURCES 256

/*
 * An argument of check, bisect, signature or explain that no option took:
 * an unknown option is a usage error; with a list open (list non-NULL:
 * the --input or --device sources, *count of them so far) it joins the
 * list, up to USC_CLI_MAX_SOURCES; otherwise it is the target (a kernel,
 * a case directory, a result file) if there is none yet, else unexpected.
 * Returns USC_EXIT_OK, or USC_EXIT_USAGE after printing why with usage.
 */
int usc_cli_operand(const char *a, const char **list, size_t *count,
		    const char **target, const char *usage);

/*
 * Numeric options.  Every subcommand describes its numeric options in one
 * table of usc_cli_num_opt (ending with a NULL name): the name, the type,
 * the range and a line of help.  usc_cli_num_arg parses them all the same
 * way, and --help prints the same table, so the documented range is the
 * range enforced.  An integer is decimal digits only (no sign, no blanks,
 * no junk, no overflow; 0x hex where hex is set); a size is an integer
 * with an optional K, M, G or T (powers of 1024); a real is a finite
 * strtod number.  A value outside its range is a usage error (exit 2)
 * that names the option, the value and the range.
 */
typedef enum usc_cli_num_kind {
	USC_CLI_INT,  /* uint64_t in [min, max] */
	USC_CLI_SIZE, /* uint64_t in [min, max], K/M/G/T suffixes allowed */
	USC_CLI_REAL  /* finite double in [lo, hi], (lo, hi] with lo_open */
} usc_cli_num_kind;

typedef struct usc_cli_num_opt {
	const char *name; /* "--worst"; NULL ends a table */
	const char *metavar; /* "K" */
	usc_cli_num_kind kind;
	uint64_t min, max;
	double lo, hi;
	bool lo_open;
	bool hex; /* integers: 0x hex accepted too */
	const char *help;
} usc_cli_num_opt;

/* Table entries; USC_CLI_NUM_END ends a table. */
#define USC_CLI_INT_OPT(nm, mv, mn, mx, hl)                                  \
	{.name = (nm), .metavar = (mv), .kind = USC_CLI_INT, .min = (mn),    \
	 .max = (mx), .help = (hl)}
#define USC_CLI_HEX_OPT(nm, mv, mn, mx, hl)                                  \
	{.name = (nm), .metavar = (mv), .kind = USC_CLI_INT, .min = (mn),    \
	 .max = (mx), .hex = true, .help = (hl)}
#define USC_CLI_SIZE_OPT(nm, mv, mn, mx, hl)                                 \
	{.name = (nm), .metavar = (mv), .kind = USC_CLI_SIZE, .min = (mn),   \
	 .max = (mx), .help = (hl)}
#define USC_CLI_REAL_OPT(nm, mv, l, h, open, hl)                             \
	{.name = (nm), .metavar = (mv), .kind = USC_CLI_REAL, .lo = (l),     \
	 .hi = (h), .lo_open = (open), .help = (hl)}
#define USC_CLI_NUM_END {.name = NULL}

typedef union usc_cli_num {
	uint64_t u;
	double d;
} usc_cli_num;

/* No option of the table: argv[*i] is something else. */
#define USC_CLI_NUM_NONE (-1)
/* The option's value was bad; the message is printed. */
#define USC_CLI_NUM_BAD (-2)

/*
 * When argv[*i] names an option of table and a value follows it: parses
 * the value into *v, advances *i past it and returns the option's index
 * in table; USC_CLI_NUM_BAD after printing why the value is refused.
 * USC_CLI_NUM_NONE when argv[*i] is not one of them, or has no value
 * after it (the caller then reports an incomplete option).
 */
int usc_cli_num_arg(const usc_cli_num_opt *table, int argc, char **argv,
		    int *i, usc_cli_num *v);

/*
 * Parses text as opt's value (the same rules); returns 0, or -1 after
 * printing a usage error.
 */
int usc_cli_num_parse(const usc_cli_num_opt *opt, const char *text,
		      usc_cli_num *v);

/*
 * The integer rule alone: text is all decimal digits (or 0x and hex
 * digits, when hex) and fits in 64 bits.
 */
bool usc_cli_parse_u64(const char *text, bool hex, uint64_t *out);

/* The range of opt in words: "an integer from 0 to 1000000". */
void usc_cli_num_range(const usc_cli_num_opt *opt, char *buf, size_t size);

/* Each option of table with its range and help, for --help. */
void usc_cli_num_help(FILE *out, const usc_cli_num_opt *table);

/*
 * The numeric options of each subcommand (in its cmd_*.c), which its
 * --help lists; and the options of every subcommand (main.c) that raise
 * the limits on what is read (docs/limits.md).
 */
extern const usc_cli_num_opt usc_cli_check_nums[];
extern const usc_cli_num_opt usc_cli_audit_nums[];
extern const usc_cli_num_opt usc_cli_cast_nums[];
extern const usc_cli_num_opt usc_cli_signature_nums[];
extern const usc_cli_num_opt usc_cli_explain_nums[];
extern const usc_cli_num_opt usc_cli_batch_nums[];
extern const usc_cli_num_opt usc_cli_merge_nums[];
extern const usc_cli_num_opt usc_cli_report_nums[];
extern const usc_cli_num_opt usc_cli_gen_nums[];
extern const usc_cli_num_opt usc_cli_limit_nums[];

/* The multi-index of flat element k of t, as "1,3". */
void usc_cli_print_index(FILE *out, const usc_tensor *t, uint64_t k);

#endif /* USC_CLI_H */
