/*
 * The ulpscope command-line program: each subcommand is a thin layer over
 * the public API.  Exit status: 0 success, 1 a check found a problem (or
 * an input was bad), 2 a usage error.
 */
#ifndef USC_CLI_H
#define USC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
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
int usc_cli_extract(int argc, char **argv);
int usc_cli_eval(int argc, char **argv);
int usc_cli_check(int argc, char **argv);
int usc_cli_profiles(int argc, char **argv);
int usc_cli_bisect(int argc, char **argv);
int usc_cli_signature(int argc, char **argv);
int usc_cli_explain(int argc, char **argv);
int usc_cli_batch(int argc, char **argv);
int usc_cli_merge(int argc, char **argv);

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

/* The multi-index of flat element k of t, as "1,3". */
void usc_cli_print_index(FILE *out, const usc_tensor *t, uint64_t k);

#endif /* USC_CLI_H */
