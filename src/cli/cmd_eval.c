/*
 * ulpscope eval: the reference outputs of a kernel on given inputs.  A
 * thin layer over ulpscope/eval.h: parse, create an evaluator for the
 * entry computation, read one tensor per parameter, run, print a summary
 * of each output and write it as .npy when asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

/* Elements of each output printed in the summary. */
#define SHOW 8

static void eval_usage(void)
{
	fprintf(stderr,
		"usage: ulpscope eval KERNEL.hlo [--input SOURCE]... "
		"[-o OUT_PREFIX] [--pairwise] [--input-raw]\n"
		"  one --input per entry parameter, in order (.npy, "
		"FILE.h5:/dataset, or raw with --input-raw);\n"
		"  -o writes output i to OUT_PREFIX_i.npy\n");
}

static void print_output(size_t i, const usc_tensor *t)
{
	usc_tensor_spec sp = usc_tensor_spec_of(t);
	char shape[512];
	uint64_t n = usc_tensor_count(t), k;

	usc_tensor_spec_format(&sp, shape, sizeof shape);
	printf("output %zu: %s\n ", i, shape);
	for (k = 0; k < n && k < SHOW; k++) {
		uint64_t bits = 0;
		double v = 0;

		usc_tensor_get_bits(t, k, &bits);
		usc_decode_double(sp.dtype, bits, &v);
		printf(" %.9g", v);
	}
	printf("%s\n", n > SHOW ? " ..." : "");
}

int usc_cli_eval(int argc, char **argv)
{
	const char *path = NULL, *prefix = NULL;
	const char **inputs = NULL;
	usc_eval_options opts = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_tensor **tensors = NULL;
	usc_error err;
	unsigned flags = 0;
	size_t nin = 0, np = 0, i;
	int rc = USC_EXIT_FAIL;

	inputs = calloc((size_t)argc, sizeof *inputs);
	if (!inputs) {
		usc_cli_error("out of memory");
		return USC_EXIT_FAIL;
	}
	for (i = 1; i < (size_t)argc; i++) {
		if ((strcmp(argv[i], "--input") == 0 ||
		     strcmp(argv[i], "-i") == 0) &&
		    i + 1 < (size_t)argc) {
			inputs[nin++] = argv[++i];
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < (size_t)argc) {
			prefix = argv[++i];
		} else if (strcmp(argv[i], "--pairwise") == 0) {
			opts.reduce_order = USC_REDUCE_PAIRWISE;
		} else if (strcmp(argv[i], "--input-raw") == 0) {
			flags |= USC_TENSOR_READ_RAW;
		} else if ((argv[i][0] == '-' && argv[i][1] != '\0') || path) {
			usc_cli_error("unexpected argument '%s'", argv[i]);
			eval_usage();
			free(inputs);
			return USC_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		eval_usage();
		free(inputs);
		return USC_EXIT_USAGE;
	}
	usc_error_clear(&err);
	if (usc_hlo_parse_file(path, &f, &err) != USC_OK) {
		fprintf(stderr, "%s\n", err.message);
		goto done;
	}
	if (usc_hlo_file_module_count(f) < 1) {
		usc_cli_error("%s holds no module", path);
		goto done;
	}
	if (usc_eval_create(usc_hlo_file_module(f, 0), &opts, &ev, &err) !=
	    USC_OK) {
		usc_cli_error("%s: %s", path, err.message);
		goto done;
	}
	np = usc_eval_param_count(ev);
	if (nin != np) {
		usc_cli_error("the entry computation takes %zu parameter(s); "
			      "%zu --input given",
			      np, nin);
		rc = USC_EXIT_USAGE;
		goto done;
	}
	tensors = calloc(np ? np : 1, sizeof *tensors);
	if (!tensors) {
		usc_cli_error("out of memory");
		goto done;
	}
	for (i = 0; i < np; i++) {
		usc_tensor_spec sp;
		char what[64];

		usc_eval_param_spec(ev, i, &sp, NULL);
		snprintf(what, sizeof what, "parameter %zu", i);
		sp.what = what;
		if (usc_tensor_read(inputs[i], &sp, flags, &tensors[i], &err) !=
			    USC_OK ||
		    usc_eval_bind(ev, i, tensors[i], &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			goto done;
		}
	}
	if (usc_eval_run(ev, &err) != USC_OK) {
		usc_cli_error("%s: %s", path, err.message);
		goto done;
	}
	for (i = 0; i < usc_eval_output_count(ev); i++) {
		const usc_tensor *t = NULL;

		usc_eval_output(ev, i, &t, NULL);
		print_output(i, t);
		if (prefix) {
			size_t len = strlen(prefix) + 32;
			char *out = malloc(len);

			if (!out) {
				usc_cli_error("out of memory");
				goto done;
			}
			snprintf(out, len, "%s_%zu.npy", prefix, i);
			if (usc_tensor_write_npy(t, out, &err) != USC_OK) {
				usc_cli_error("%s", err.message);
				free(out);
				goto done;
			}
			printf("  written to %s\n", out);
			free(out);
		}
	}
	rc = USC_EXIT_OK;
done:
	if (tensors)
		for (i = 0; i < np; i++)
			usc_tensor_destroy(tensors[i]);
	free(tensors);
	free(inputs);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	return rc;
}
