/*
 * ulpscope explain: one output element's computation as a tree, from the
 * output back to the parameters (docs/explain.md).  Exit status: 0 the
 * tree was printed, 1 a bad input, 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ulpscope/explain.h"
#include "ulpscope/profile.h"

#define MAX_SOURCES 256

static const char usage_text[] =
	"usage: ulpscope explain CASE_DIR --element I,J,... [options]\n"
	"       ulpscope explain KERNEL.hlo [--fusion NAME] --input SRC... "
	"--device SRC... --element I,J,... [options]\n"
	"       ulpscope explain RESULTS.h5 --kernel K --input SRC... "
	"--element I,J,... [options]\n"
	"options: --flat (--element is one flat index) --output N --profile "
	"NAME|FILE --depth D --no-attribute --pairwise --input-raw";

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* "3,17" into index[], at most USC_TENSOR_MAX_RANK non-negative ints. */
static int parse_element(const char *text, usc_explain_request *req)
{
	const char *p = text;

	req->index_rank = 0;
	if (!*p)
		return -1;
	for (;;) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno || v < 0 ||
		    req->index_rank == USC_TENSOR_MAX_RANK)
			return -1;
		req->index[req->index_rank++] = v;
		if (*end == '\0')
			break;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
	return 0;
}

static int parse_count(const char *opt, const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (end == text || *end || errno || text[0] == '-') {
		usc_cli_error("%s expects a non-negative integer, got '%s'",
			      opt, text);
		return -1;
	}
	*out = v;
	return 0;
}

int usc_cli_explain(int argc, char **argv)
{
	usc_explain_request req = usc_explain_request_default();
	const char *inputs[MAX_SOURCES], *devices[MAX_SOURCES];
	const char *target = NULL, *element = NULL, *kernel = NULL;
	usc_explain_report *r = NULL;
	usc_profile profile;
	usc_error err;
	usc_status st;
	int list = 0; /* 1: --input, 2: --device */
	uint64_t v;

	req.check.inputs = inputs;
	req.check.devices = devices;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--input") == 0) {
			list = 1;
		} else if (strcmp(a, "--device") == 0) {
			list = 2;
		} else if (strcmp(a, "--fusion") == 0 && i + 1 < argc) {
			req.check.fusion = argv[++i], list = 0;
		} else if (strcmp(a, "--kernel") == 0 && i + 1 < argc) {
			kernel = argv[++i], list = 0;
		} else if (strcmp(a, "--element") == 0 && i + 1 < argc) {
			element = argv[++i], list = 0;
		} else if (strcmp(a, "--flat") == 0) {
			req.flat = true, list = 0;
		} else if (strcmp(a, "--output") == 0 && i + 1 < argc) {
			if (parse_count(a, argv[++i], &v) != 0)
				return USC_EXIT_USAGE;
			req.output = (size_t)v, list = 0;
		} else if (strcmp(a, "--depth") == 0 && i + 1 < argc) {
			if (parse_count(a, argv[++i], &v) != 0 || v == 0 ||
			    v > 1000) {
				usc_cli_error("--depth takes 1 to 1000");
				return USC_EXIT_USAGE;
			}
			req.max_depth = (unsigned)v, list = 0;
		} else if (strcmp(a, "--no-attribute") == 0) {
			req.no_attribute = true, list = 0;
		} else if (strcmp(a, "--pairwise") == 0) {
			req.check.reduce_order = USC_REDUCE_PAIRWISE, list = 0;
		} else if (strcmp(a, "--input-raw") == 0) {
			req.check.raw = true, list = 0;
		} else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			req.check.profile = &profile;
			list = 0;
		} else if (a[0] == '-' && a[1] == '-') {
			usc_cli_error("unknown option '%s'\n%s", a, usage_text);
			return USC_EXIT_USAGE;
		} else if (list == 0 && !target) {
			target = a;
		} else if (list == 0) {
			usc_cli_error("unexpected argument '%s'\n%s", a,
				      usage_text);
			return USC_EXIT_USAGE;
		} else {
			size_t *n = list == 1 ? &req.check.input_count
					      : &req.check.device_count;

			if (*n == MAX_SOURCES) {
				usc_cli_error("more than %d sources",
					      MAX_SOURCES);
				return USC_EXIT_USAGE;
			}
			(list == 1 ? inputs : devices)[(*n)++] = a;
		}
	}
	if (!target) {
		usc_cli_error("no kernel, case directory or result file\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (!element) {
		usc_cli_error("which element? --element I,J,... (or --element "
			      "K --flat)\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (req.flat) {
		if (parse_count("--element", element, &req.flat_index) != 0)
			return USC_EXIT_USAGE;
	} else if (parse_element(element, &req) != 0) {
		usc_cli_error("--element takes comma-separated non-negative "
			      "indices (at most %d), got '%s'",
			      USC_TENSOR_MAX_RANK, element);
		return USC_EXIT_USAGE;
	}
	if (usc_cli_is_dir(target)) {
		if (req.check.input_count || req.check.device_count ||
		    req.check.fusion || kernel) {
			usc_cli_error("a case directory brings its own kernel, "
				      "inputs and device outputs: --input, "
				      "--device, --fusion and --kernel do not "
				      "apply\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		req.case_dir = target;
	} else if (kernel || ends_with(target, ".h5")) {
		if (!kernel || req.check.device_count || req.check.fusion) {
			usc_cli_error("a result file needs --kernel K and the "
				      "kernel's inputs (--input); its device "
				      "outputs and kernel come from the file, "
				      "so --device and --fusion do not "
				      "apply\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		req.results_path = target;
		req.results_kernel = kernel;
	} else {
		req.check.hlo_path = target;
	}
	st = usc_explain_run(&req, &r, &err);
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	usc_explain_print(stdout, r);
	usc_explain_report_destroy(r);
	return USC_EXIT_OK;
}
