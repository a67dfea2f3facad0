/*
 * ulpscope formats | cast | decode | ulp: quick questions about number
 * formats, answered exactly.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/ulpscope.h"

static const char *kind_name(usc_kind k)
{
	switch (k) {
	case USC_KIND_PRED:
		return "pred";
	case USC_KIND_SINT:
		return "signed";
	case USC_KIND_UINT:
		return "unsigned";
	case USC_KIND_FLOAT:
		return "float";
	case USC_KIND_COMPLEX:
		return "complex";
	case USC_KIND_OTHER:
		break;
	}
	return "other";
}

static const char *inf_name(usc_inf_style s)
{
	return s == USC_INF_IEEE ? "ieee" : "none";
}

static const char *nan_name(usc_nan_style s)
{
	switch (s) {
	case USC_NAN_IEEE:
		return "ieee";
	case USC_NAN_ALLONES:
		return "all-ones";
	case USC_NAN_NEGZERO:
		return "neg-zero";
	case USC_NAN_NONE:
		break;
	}
	return "none";
}

static const char *zero_name(usc_zero_style s)
{
	switch (s) {
	case USC_ZERO_SIGNED:
		return "signed";
	case USC_ZERO_UNSIGNED:
		return "unsigned";
	case USC_ZERO_NONE:
		break;
	}
	return "none";
}

/* Hex digits needed for an encoding of t. */
static int hex_width(usc_dtype t)
{
	int bits = usc_format_of(t)->bits;

	return bits <= 0 ? 1 : (bits + 3) / 4;
}

static int run_selfcheck(void)
{
	unsigned long total = 0, failed = 0;

	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		usc_selfcheck_result r;

		if (!usc_dtype_is_float((usc_dtype)t))
			continue;
		if (usc_format_selfcheck((usc_dtype)t, &r) != USC_OK) {
			usc_cli_error("self-check of %s could not run",
				      usc_dtype_name((usc_dtype)t));
			return USC_EXIT_FAIL;
		}
		printf("%-14s %8lu checked  %s\n", usc_dtype_name((usc_dtype)t),
		       r.checked, r.failed ? "FAILED" : "ok");
		if (r.failed)
			printf("    %lu wrong; first: %s\n", r.failed,
			       r.first_failure);
		total += r.checked;
		failed += r.failed;
	}
	printf("self-check: %lu values checked, %lu wrong\n", total, failed);
	return failed ? USC_EXIT_FAIL : USC_EXIT_OK;
}

int usc_cli_formats(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--check") == 0)
		return run_selfcheck();
	if (argc != 1) {
		usc_cli_error("usage: ulpscope formats [--check]");
		return USC_EXIT_USAGE;
	}
	printf("%-14s %-8s %4s %3s %3s %5s %-4s %-8s %-8s %-9s %-24s %-24s "
	       "%s\n",
	       "type", "kind", "bits", "exp", "man", "bias", "inf", "nan",
	       "zero", "overflow", "max_finite", "min_normal",
	       "min_subnormal");
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		const usc_format *f = usc_format_of((usc_dtype)t);
		usc_float_info fi;

		if (f->kind != USC_KIND_FLOAT) {
			printf("%-14s %-8s %4d\n", f->name, kind_name(f->kind),
			       f->bits);
			continue;
		}
		usc_float_info_of((usc_dtype)t, &fi);
		printf("%-14s %-8s %4d %3d %3d %5d %-4s %-8s %-8s %-9s %-24.17g "
		       "%-24.17g %.17g\n",
		       f->name, kind_name(f->kind), f->bits, f->exp_bits,
		       f->man_bits, f->bias, inf_name(f->inf), nan_name(f->nan),
		       zero_name(f->zero), usc_overflow_name(f->default_overflow),
		       fi.max_finite, fi.min_normal, fi.min_subnormal);
	}
	return USC_EXIT_OK;
}

static void print_flags(unsigned flags)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {{USC_FLAG_INEXACT, "inexact"},
		     {USC_FLAG_OVERFLOW, "overflow"},
		     {USC_FLAG_UNDERFLOW, "underflow"},
		     {USC_FLAG_INVALID, "invalid"},
		     {USC_FLAG_FLUSHED, "flushed"},
		     {USC_FLAG_SATURATED, "saturated"}};
	const char *sep = "";

	if (!flags)
		return;
	printf("  [");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (flags & names[i].bit) {
			printf("%s%s", sep, names[i].name);
			sep = " ";
		}
	printf("]");
}

/* Prints "0xBITS = exact-decimal". */
static int print_encoding(usc_dtype t, uint64_t bits)
{
	char dec[USC_EXACT_DECIMAL_SIZE];

	if (usc_exact_decimal(t, bits, dec, sizeof dec) != USC_OK) {
		usc_cli_error("cannot print the value of 0x%" PRIx64, bits);
		return -1;
	}
	printf("0x%0*" PRIx64 " = %s", hex_width(t), bits, dec);
	return 0;
}

enum { CAST_RANDOM, CAST_RANDOM_BITS };

/* A stochastic rounding word is any 64-bit value; it uses 1 to 64 bits. */
const usc_cli_num_opt usc_cli_cast_nums[] = {
	[CAST_RANDOM] = USC_CLI_HEX_OPT("--random", "WORD", 0, UINT64_MAX,
					"the random word of stochastic "
					"rounding (decimal or 0x hex)"),
	[CAST_RANDOM_BITS] = USC_CLI_INT_OPT("--random-bits", "K", 1, 64,
					     "how many bits of the word "
					     "stochastic rounding uses"),
	USC_CLI_NUM_END,
};

int usc_cli_cast(int argc, char **argv)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	bool int_target, mode_given = false;
	int first_value = -1, nvalues = 0, rc = USC_EXIT_OK;
	usc_dtype t = USC_DTYPE_INVALID;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		usc_cli_num num;
		int k;

		if (strcmp(a, "--round") == 0 && i + 1 < argc) {
			if (usc_round_mode_from_name(argv[++i], &r.mode)) {
				usc_cli_error("unknown rounding mode '%s'; expected "
					      "nearest-even, nearest-away, "
					      "toward-zero, up, down or stochastic",
					      argv[i]);
				return USC_EXIT_USAGE;
			}
			mode_given = true;
		} else if (strcmp(a, "--overflow") == 0 && i + 1 < argc) {
			if (usc_overflow_from_name(argv[++i], &r.overflow)) {
				usc_cli_error("unknown overflow policy '%s'; expected "
					      "default, inf, saturate, nan or wrap",
					      argv[i]);
				return USC_EXIT_USAGE;
			}
		} else if (strcmp(a, "--ftz") == 0) {
			r.flush_subnormals = true;
		} else if ((k = usc_cli_num_arg(usc_cli_cast_nums, argc, argv,
					       &i, &num)) != USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				return USC_EXIT_USAGE;
			if (k == CAST_RANDOM)
				r.random = num.u;
			else
				r.random_bits = (unsigned)num.u;
		} else if (a[0] == '-' && a[1] == '-') {
			usc_cli_error("unknown or incomplete option '%s'", a);
			return USC_EXIT_USAGE;
		} else if (t == USC_DTYPE_INVALID) {
			if (usc_cli_parse_type(a, &t))
				return USC_EXIT_USAGE;
		} else {
			if (first_value < 0)
				first_value = i;
			nvalues++;
		}
	}
	if (t == USC_DTYPE_INVALID || nvalues == 0) {
		usc_cli_error("usage: ulpscope cast TYPE VALUE... [--round MODE] "
			      "[--overflow POLICY] [--ftz] [--random WORD] "
			      "[--random-bits K]");
		return USC_EXIT_USAGE;
	}
	int_target = usc_dtype_is_integer(t) || t == USC_PRED;
	if (int_target && !mode_given)
		r.mode = USC_RND_TOWARD_ZERO; /* XLA's convert truncates */
	for (int i = first_value; i < argc; i++) {
		const char *a = argv[i];
		usc_error err;
		uint64_t bits;
		unsigned flags;

		if (a[0] == '-' && a[1] == '-') {
			if (strcmp(a, "--ftz") != 0)
				i++;
			continue;
		}
		if (usc_encode_str(t, a, &r, &bits, &flags, &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			rc = USC_EXIT_FAIL;
			continue;
		}
		printf("%s %s -> ", usc_dtype_name(t), a);
		if (print_encoding(t, bits))
			return USC_EXIT_FAIL;
		print_flags(flags);
		putchar('\n');
	}
	return rc;
}

/* Parses "0xBITS" (or decimal) as an encoding of t that must fit. */
static int parse_bits(usc_dtype t, const char *s, uint64_t *out)
{
	int bits = usc_format_of(t)->bits;

	if (!usc_cli_parse_u64(s, true, out)) {
		usc_cli_error("expected an encoding such as 0x3f80, found '%s'",
			      s);
		return -1;
	}
	if (bits < 64 && *out >> bits) {
		usc_cli_error("0x%" PRIx64 " does not fit in the %d bits of %s",
			      *out, bits, usc_dtype_name(t));
		return -1;
	}
	return 0;
}

int usc_cli_decode(int argc, char **argv)
{
	usc_dtype t;
	int rc = USC_EXIT_OK;

	if (argc < 3) {
		usc_cli_error("usage: ulpscope decode TYPE 0xBITS...");
		return USC_EXIT_USAGE;
	}
	if (usc_cli_parse_type(argv[1], &t))
		return USC_EXIT_USAGE;
	if (usc_format_of(t)->kind == USC_KIND_COMPLEX ||
	    usc_format_of(t)->kind == USC_KIND_OTHER) {
		usc_cli_error("%s has no scalar encoding to decode",
			      usc_dtype_name(t));
		return USC_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		uint64_t bits;
		double d;

		if (parse_bits(t, argv[i], &bits)) {
			rc = USC_EXIT_FAIL;
			continue;
		}
		printf("%s ", usc_dtype_name(t));
		if (print_encoding(t, bits))
			return USC_EXIT_FAIL;
		if (usc_dtype_is_float(t) &&
		    usc_decode_double(t, bits, &d) == USC_OK && isfinite(d))
			printf("  (%a)", d);
		putchar('\n');
	}
	return rc;
}

/*
 * An operand of "ulp": "0b:HEX" is an encoding; anything else is a
 * number, encoded with nearest-even.  The exact text is kept for the
 * reference.
 */
static int ulp_operand(usc_dtype t, const char *s, uint64_t *bits,
		       bool *is_bits)
{
	usc_error err;
	unsigned flags;

	*is_bits = strncmp(s, "0b:", 3) == 0;
	if (*is_bits)
		return parse_bits(t, s + 3, bits);
	if (usc_encode_str(t, s, NULL, bits, &flags, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return -1;
	}
	return 0;
}

int usc_cli_ulp(int argc, char **argv)
{
	char dec[USC_EXACT_DECIMAL_SIZE];
	uint64_t a, b;
	bool a_bits, b_bits;
	usc_dtype t;
	double err_ulps, ulp_b;
	int64_t dist;
	usc_status st;

	if (argc != 4) {
		usc_cli_error("usage: ulpscope ulp TYPE A B  (A, B: numbers, "
			      "or encodings written 0b:HEX)");
		return USC_EXIT_USAGE;
	}
	if (usc_cli_parse_type(argv[1], &t))
		return USC_EXIT_USAGE;
	if (!usc_dtype_is_float(t)) {
		usc_cli_error("ulp needs a floating type, not %s",
			      usc_dtype_name(t));
		return USC_EXIT_USAGE;
	}
	if (ulp_operand(t, argv[2], &a, &a_bits) ||
	    ulp_operand(t, argv[3], &b, &b_bits))
		return USC_EXIT_FAIL;

	printf("a         ");
	print_encoding(t, a);
	printf("%s\n", a_bits ? "" : "  (a rounded to nearest-even)");
	if (b_bits) {
		double bv;

		usc_decode_double(t, b, &bv);
		usc_exact_decimal(t, b, dec, sizeof dec);
		printf("b         %s  (reference: the value of 0x%" PRIx64 ")\n",
		       dec, b);
		usc_ulp_double(t, bv, &ulp_b);
		st = usc_ulp_error_double(t, a, bv, &err_ulps);
	} else {
		/* The reference is the number exactly as written. */
		usc_error e;

		printf("b         %s  (reference, exact)\n", argv[3]);
		st = usc_ulp_error_str(t, a, argv[3], &err_ulps, &ulp_b, &e);
	}
	if (st != USC_OK) {
		usc_cli_error("cannot compute the error: %s",
			      usc_status_message(st));
		return USC_EXIT_FAIL;
	}
	printf("ulp(b)    %.17g  (%a)\n", ulp_b, ulp_b);
	printf("error     %+.10g ulp  ((a - b) / ulp(b))\n", err_ulps);
	st = usc_ulp_distance(t, b, a, &dist);
	if (st == USC_OK)
		printf("distance  %+" PRId64
		       " steps  (ordinal, from b's encoding 0x%0*" PRIx64
		       " to a)\n",
		       dist, hex_width(t), b);
	else
		printf("distance  undefined  (%s)\n", usc_status_message(st));
	return USC_EXIT_OK;
}
