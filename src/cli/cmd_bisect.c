/*
 * ulpscope bisect: captured intermediates of a kernel, each against its
 * own legitimate envelope in topological order; the first one outside is
 * named (docs/bisect.md).  Exit status: 0 every captured tensor inside, 4
 * one outside (as check's defect), 1 a bad input, 2 usage.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ulpscope/bisect.h"
#include "ulpscope/profile.h"

static const char usage_text[] =
	"usage: ulpscope bisect CASE_DIR [options]\n"
	"       ulpscope bisect KERNEL.hlo [--fusion NAME] --input SRC... "
	"--intermediate NAME=SRC... [--device SRC...] [options]\n"
	"options: --profile NAME|FILE --json --pairwise --input-raw";

static double value_of(const usc_tensor *t, uint64_t bits)
{
	double d = NAN;

	(void)usc_decode_double(usc_tensor_dtype(t), bits, &d);
	return d;
}

static void step_label(const usc_bisect_step *s, char *buf, size_t cap)
{
	if (s->output == SIZE_MAX)
		snprintf(buf, cap, "%s", s->instr->name);
	else
		snprintf(buf, cap, "output %zu (%s)", s->output,
			 s->instr->name);
}

static void print_json(const usc_bisect_report *r)
{
	printf("{\"kernel\": ");
	usc_cli_json_str(r->kernel_name);
	printf(", \"hlo_file\": ");
	usc_cli_json_str(r->hlo_path);
	printf(", \"profile\": ");
	usc_cli_json_str(r->profile.name);
	printf(", \"found\": %s, \"first_bad\": ", r->found ? "true" : "false");
	if (r->found)
		usc_cli_json_str(r->steps[r->first_bad].instr->name);
	else
		printf("null");
	printf(", \"reason\": ");
	usc_cli_json_str(r->reason);
	printf(", \"steps\": [");
	for (size_t i = 0; i < r->step_count; i++) {
		const usc_bisect_step *s = &r->steps[i];
		usc_tensor_spec spec = usc_tensor_spec_of(s->values);
		char shape[256];

		usc_tensor_spec_format(&spec, shape, sizeof shape);
		printf("%s{\"instruction\": ", i ? ", " : "");
		usc_cli_json_str(s->instr->name);
		printf(", \"opcode\": \"%s\", \"output\": ",
		       usc_hlo_opcode_name(s->instr->opcode));
		if (s->output == SIZE_MAX)
			printf("null");
		else
			printf("%zu", s->output);
		printf(", \"shape\": ");
		usc_cli_json_str(shape);
		printf(", \"source\": ");
		usc_cli_json_str(s->source);
		printf(", \"op_name\": ");
		if (s->op_name)
			usc_cli_json_str(s->op_name);
		else
			printf("null");
		printf(", \"location\": ");
		if (s->source_loc[0])
			usc_cli_json_str(s->source_loc);
		else
			printf("null");
		printf(", \"count\": %" PRIu64 ", \"outside\": %" PRIu64
		       ", \"unknown\": %" PRIu64 ", \"worst\": ",
		       s->count, s->outside, s->unknown);
		if (!s->outside) {
			printf("null}");
			continue;
		}
		printf("{\"index\": [");
		usc_cli_print_index(stdout, s->values, s->worst_index);
		printf("], \"bits\": \"0x%" PRIx64 "\", \"value\": ",
		       s->worst_bits);
		usc_cli_json_num(value_of(s->values, s->worst_bits));
		printf(", \"class\": \"%s\", \"outside_ulps\": ",
		       usc_class_name(s->worst_class));
		usc_cli_json_num(s->worst_outside_ulps);
		printf(", \"envelope\": {\"lo\": ");
		usc_cli_json_num(s->worst_envelope.flags & USC_ENV_FINITE
				 ? s->worst_envelope.lo
				 : NAN);
		printf(", \"hi\": ");
		usc_cli_json_num(s->worst_envelope.flags & USC_ENV_FINITE
				 ? s->worst_envelope.hi
				 : NAN);
		printf(", \"nan\": %s}}}",
		       s->worst_envelope.flags & USC_ENV_NAN ? "true"
							     : "false");
	}
	printf("]}\n");
}

static void print_text(const usc_bisect_report *r)
{
	printf("kernel %s (%s), profile %s: %zu captured tensor%s in "
	       "topological order\n",
	       r->kernel_name, r->hlo_path, r->profile.name, r->step_count,
	       r->step_count == 1 ? "" : "s");
	for (size_t i = 0; i < r->step_count; i++) {
		const usc_bisect_step *s = &r->steps[i];
		usc_tensor_spec spec = usc_tensor_spec_of(s->values);
		char shape[128], label[160];

		usc_tensor_spec_format(&spec, shape, sizeof shape);
		step_label(s, label, sizeof label);
		printf("  %2zu. %-14s %-24s %-16s ", i + 1,
		       usc_hlo_opcode_name(s->instr->opcode), label, shape);
		if (!s->outside)
			printf("inside (%" PRIu64 " elements)", s->count);
		else
			printf("OUTSIDE %" PRIu64 " of %" PRIu64, s->outside,
			       s->count);
		if (s->unknown)
			printf(", %" PRIu64 " unknown", s->unknown);
		if (r->found && i == r->first_bad)
			printf("   <- first");
		putchar('\n');
		if (s->outside) {
			printf("        worst [");
			usc_cli_print_index(stdout, s->values, s->worst_index);
			printf("] = %.9g, envelope ",
			       value_of(s->values, s->worst_bits));
			if (s->worst_envelope.flags & USC_ENV_FINITE)
				printf("[%.9g, %.9g]", s->worst_envelope.lo,
				       s->worst_envelope.hi);
			else
				printf("no finite value");
			if (isfinite(s->worst_outside_ulps))
				printf(", %.0f codes outside",
				       s->worst_outside_ulps);
			printf(" (%s)\n", usc_class_name(s->worst_class));
		}
		if (s->op_name || s->source_loc[0])
			printf("        %s%s%s\n", s->op_name ? s->op_name : "",
			       s->op_name && s->source_loc[0] ? " at " : "",
			       s->source_loc);
	}
	printf("%s\n", r->reason);
}

int usc_cli_bisect(int argc, char **argv)
{
	usc_bisect_request req = usc_bisect_request_default();
	const char *inputs[USC_CLI_MAX_SOURCES];
	const char *devices[USC_CLI_MAX_SOURCES];
	usc_bisect_capture caps[USC_CLI_MAX_SOURCES];
	const char *target = NULL;
	bool json = false;
	usc_bisect_report *r = NULL;
	usc_profile profile;
	usc_error err;
	usc_status st;
	int list = 0; /* 1: --input, 2: --device, 3: --intermediate */
	int rc;

	/* An XLA dump directory becomes a case first (cmd_dump.c). */
	if (usc_cli_is_dump(argc, argv))
		return usc_cli_bisect_dump(argc, argv);

	req.inputs = inputs;
	req.devices = devices;
	req.captures = caps;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--input") == 0)
			list = 1;
		else if (strcmp(a, "--device") == 0)
			list = 2;
		else if (strcmp(a, "--intermediate") == 0)
			list = 3;
		else if (strcmp(a, "--fusion") == 0 && i + 1 < argc)
			req.fusion = argv[++i], list = 0;
		else if (strcmp(a, "--json") == 0)
			json = true, list = 0;
		else if (strcmp(a, "--pairwise") == 0)
			req.reduce_order = USC_REDUCE_PAIRWISE, list = 0;
		else if (strcmp(a, "--input-raw") == 0)
			req.raw = true, list = 0;
		else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			req.profile = &profile;
			list = 0;
		} else if (list == 3 && !(a[0] == '-' && a[1] == '-')) {
			const char *eq = strchr(a, '=');

			if (req.capture_count == USC_CLI_MAX_SOURCES) {
				usc_cli_error("too many sources (at most %d)",
					      USC_CLI_MAX_SOURCES);
				return USC_EXIT_USAGE;
			}
			if (!eq || eq == a || !eq[1]) {
				usc_cli_error("--intermediate takes "
					      "NAME=SOURCE, got '%s'",
					      a);
				return USC_EXIT_USAGE;
			}
			/* The name is cut at '=' in place. */
			argv[i][eq - a] = '\0';
			caps[req.capture_count].name = a;
			caps[req.capture_count++].source = eq + 1;
		} else if (usc_cli_operand(a,
					   list == 1   ? inputs
					   : list == 2 ? devices
						       : NULL,
					   list == 1 ? &req.input_count
						     : &req.device_count,
					   &target, usage_text) != USC_EXIT_OK) {
			return USC_EXIT_USAGE;
		}
	}
	if (!target) {
		usc_cli_error("no kernel or case directory\n%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if (usc_cli_is_dir(target)) {
		if (req.input_count || req.fusion) {
			usc_cli_error("a case directory brings its own inputs "
				      "and kernel: --input and --fusion do not "
				      "apply\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		st = usc_bisect_case(target, &req, &r, &err);
	} else {
		req.hlo_path = target;
		st = usc_bisect_run(&req, &r, &err);
	}
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (json)
		print_json(r);
	else
		print_text(r);
	rc = r->found ? 4 : USC_EXIT_OK;
	usc_bisect_report_destroy(r);
	return rc;
}
