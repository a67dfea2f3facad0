/*
 * ulpscope check: a kernel's device output against the certified oracle
 * and the strict reference, and with a device profile the class of every
 * element and the kernel's verdict.  Exit status (docs/check.md): 0 the
 * check ran (and the verdict, if any, is legit), 1 an input was bad or the
 * kernel could not be evaluated, 2 usage, 3 suspicious, 4 defect, 5
 * undecided.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"

static const char usage_text[] =
	"usage: ulpscope check CASE_DIR [options]\n"
	"       ulpscope check KERNEL.hlo [--fusion NAME] --input SRC... "
	"--device SRC... [options]\n"
	"options: --profile NAME|FILE --no-profile --lambda X --out FILE.h5 "
	"[--append | --force] --json --worst K --pairwise --precision-max BITS "
	"--quantize --strict-oracle --input-raw -j N --piece N "
	"--attribute [--top-k K] [--attr-max-ops N]";

enum {
	CHECK_WORST,
	CHECK_PRECISION_MAX,
	CHECK_LAMBDA,
	CHECK_TOP_K,
	CHECK_ATTR_MAX_OPS,
	CHECK_THREADS,
	CHECK_PIECE
};

/*
 * The ranges: --worst keeps that many elements per output in memory;
 * the oracle's precision is the range the oracle accepts
 * (docs/oracle.md): from 64 bits, which keeps every f64 and 64-bit
 * integer input exact, to 65536; --top-k is the attribution's bound
 * (docs/attribution.md).
 */
const usc_cli_num_opt usc_cli_check_nums[] = {
	[CHECK_WORST] = USC_CLI_INT_OPT("--worst", "K", 0, 1000000,
					"how many worst elements to list per "
					"output (5)"),
	[CHECK_PRECISION_MAX] = USC_CLI_INT_OPT("--precision-max", "BITS", 64,
						65536,
						"the oracle's precision cap "
						"(4096)"),
	[CHECK_LAMBDA] = USC_CLI_REAL_OPT("--lambda", "X", 0, 1e6, true,
					  "the expected-error lambda of the "
					  "classification (4)"),
	[CHECK_TOP_K] = USC_CLI_INT_OPT("--top-k", "K", 1, 64,
					"top contributing ops kept per "
					"element (3)"),
	[CHECK_ATTR_MAX_OPS] = USC_CLI_INT_OPT("--attr-max-ops", "N", 1,
					       1000000,
					       "attribute at most N ops, one "
					       "oracle run each (64)"),
	[CHECK_THREADS] = USC_CLI_INT_OPT("-j", "N", 1, 256,
					  "threads for the pieces of a "
					  "streamed check; the same output "
					  "as one (the number of cores)"),
	[CHECK_PIECE] = USC_CLI_INT_OPT("--piece", "N", 1, 1073741824,
					"elements per piece of a streamed "
					"check, rounded to the tile or to "
					"whole rows (65536)"),
	USC_CLI_NUM_END,
};

/* The exit status of a verdict (docs/check.md). */
static int verdict_exit(const usc_check_report *r)
{
	if (!r->classified)
		return USC_EXIT_OK;
	switch (r->verdict) {
	case USC_VERDICT_SUSPICIOUS:
		return 3;
	case USC_VERDICT_DEFECT:
		return 4;
	case USC_VERDICT_UNDECIDED:
		return 5;
	default:
		return USC_EXIT_OK;
	}
}

/* An envelope for people: "[lo, hi]" plus what else it allows. */
static void print_envelope(const usc_envelope *e)
{
	if (e->flags & USC_ENV_UNKNOWN) {
		printf("unknown");
		return;
	}
	if (e->flags & USC_ENV_FINITE)
		printf("[%.9g, %.9g]", e->lo, e->hi);
	else
		printf("no finite value");
	if (e->flags & USC_ENV_NAN)
		printf(" or NaN");
	if (e->flags & USC_ENV_POS_INF)
		printf(" or +Inf");
	if (e->flags & USC_ENV_NEG_INF)
		printf(" or -Inf");
}

static void json_stats(const char *name, const usc_results_stats *s)
{
	printf("\"%s\": {\"max_abs_ulp\": ", name);
	usc_cli_json_num(s->max_abs);
	printf(", \"median_abs_ulp\": ");
	usc_cli_json_num(s->median_abs);
	printf(", \"p99_abs_ulp\": ");
	usc_cli_json_num(s->p99_abs);
	printf(", \"nan_count\": %" PRIu64 "}", s->nan_count);
}

/*
 * Whether input j lines up element for element with output o (the same
 * shape): then the input's element at the same index is shown beside a
 * worst element.  Inputs of other shapes feed it through broadcasts or
 * reductions, which no single index names.
 */
static bool same_shape(const usc_tensor *a, const usc_tensor *b)
{
	usc_tensor_spec x = usc_tensor_spec_of(a), y = usc_tensor_spec_of(b);

	if (x.rank != y.rank)
		return false;
	for (size_t d = 0; d < x.rank; d++)
		if (x.dims[d] != y.dims[d])
			return false;
	return true;
}

/* One attributed op's identity as JSON members (no braces). */
static void json_attr_op(const usc_attr_op *op)
{
	printf("\"name\": ");
	usc_cli_json_str(op->name);
	printf(", \"opcode\": ");
	usc_cli_json_str(op->opcode);
	printf(", \"op_name\": ");
	if (op->op_name)
		usc_cli_json_str(op->op_name);
	else
		printf("null");
	printf(", \"source_file\": ");
	if (op->source_file)
		usc_cli_json_str(op->source_file);
	else
		printf("null");
	printf(", \"source_line\": ");
	if (op->source_line >= 0)
		printf("%" PRId64, op->source_line);
	else
		printf("null");
}

/* An element's total, residual and top ops as a JSON object. */
static void json_attr_element(const usc_attribution *a,
			      const usc_attr_output *o, uint64_t k)
{
	printf("{\"index\": %" PRIu64 ", \"total\": ", k);
	usc_cli_json_num(o->total[k]);
	printf(", \"residual\": ");
	usc_cli_json_num(o->residual[k]);
	printf(", \"top\": [");
	for (size_t j = 0; j < a->top_k; j++) {
		uint32_t u = o->top_ops[k * a->top_k + j];

		if (u == USC_ATTR_NO_OP)
			break;
		printf("%s{\"op\": %" PRIu32 ", ", j ? ", " : "", u);
		json_attr_op(&a->ops[u]);
		printf(", \"contribution\": ");
		usc_cli_json_num(o->top_contrib[k * a->top_k + j]);
		printf(", \"share\": ");
		usc_cli_json_num(o->top_share[k * a->top_k + j]);
		printf("}");
	}
	printf("]}");
}

/*
 * , "attribution": {...}: the budget table, the residual's budget, and
 * per output the attribution of its worst elements.
 */
static void json_attribution(const usc_check_report *r)
{
	const usc_attribution *a = r->attribution;

	printf(", \"attribution\": {\"precision\": %lu, \"top_k\": %zu, "
	       "\"attributed\": %" PRIu64 ", \"ops\": [",
	       a->precision, a->top_k, a->attributed);
	for (size_t u = 0; u < a->op_count; u++) {
		printf("%s{\"op\": %zu, ", u ? ", " : "", u);
		json_attr_op(&a->ops[u]);
		printf(", \"mean_abs\": ");
		usc_cli_json_num(a->ops[u].mean_abs);
		printf(", \"max_abs\": ");
		usc_cli_json_num(a->ops[u].max_abs);
		printf(", \"share\": ");
		usc_cli_json_num(a->ops[u].share);
		printf("}");
	}
	printf("], \"residual\": {\"mean_abs\": ");
	usc_cli_json_num(a->residual_mean_abs);
	printf(", \"max_abs\": ");
	usc_cli_json_num(a->residual_max_abs);
	printf(", \"share\": ");
	usc_cli_json_num(a->residual_share);
	printf("}, \"worst\": [");
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];

		printf("%s[", i ? ", " : "");
		for (size_t w = 0; w < o->worst_count; w++) {
			printf("%s", w ? ", " : "");
			json_attr_element(a, &a->outputs[i],
					  o->worst[w].index);
		}
		printf("]");
	}
	printf("]}");
}

/*
 * The budget table, by share of the error mass (at most 10 rows), and the
 * top ops of each worst element, with their source locations.
 */
static void print_attribution(const usc_check_report *r)
{
	const usc_attribution *a = r->attribution;
	size_t *order, shown;
	char label[512];

	printf("attribution: %zu ops that round, oracle at %lu bits, "
	       "%" PRIu64 " elements attributed\n",
	       a->op_count, a->precision, a->attributed);
	order = calloc(a->op_count ? a->op_count : 1, sizeof *order);
	if (!order)
		return;
	for (size_t u = 0; u < a->op_count; u++)
		order[u] = u;
	/* Insertion sort by share, larger first (a handful of ops). */
	for (size_t u = 1; u < a->op_count; u++)
		for (size_t v = u; v > 0 && a->ops[order[v]].share >
						     a->ops[order[v - 1]].share;
		     v--) {
			size_t t = order[v];

			order[v] = order[v - 1];
			order[v - 1] = t;
		}
	printf("  error budget (share of the error mass, mean and max "
	       "|contribution| in ulps):\n");
	shown = a->op_count < 10 ? a->op_count : 10;
	for (size_t j = 0; j < shown; j++) {
		const usc_attr_op *op = &a->ops[order[j]];

		printf("    %5.1f%%  mean %-9.3g max %-9.3g %s  %s\n",
		       100 * op->share, op->mean_abs, op->max_abs,
		       usc_attr_op_label(op, label, sizeof label), op->opcode);
	}
	if (a->op_count > shown)
		printf("    ... %zu more ops\n", a->op_count - shown);
	printf("    %5.1f%%  mean %-9.3g max %-9.3g (interaction residual)\n",
	       100 * a->residual_share, a->residual_mean_abs,
	       a->residual_max_abs);
	free(order);
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];
		const usc_attr_output *ao = &a->outputs[i];

		if (o->worst_count)
			printf("  output %zu, worst elements' top ops:\n", i);
		for (size_t w = 0; w < o->worst_count; w++) {
			uint64_t k = o->worst[w].index;

			printf("    [");
			usc_cli_print_index(stdout, o->device, k);
			printf("] reference error %+.4g ulp:", ao->total[k]);
			for (size_t j = 0; j < a->top_k; j++) {
				uint32_t u = ao->top_ops[k * a->top_k + j];

				if (u == USC_ATTR_NO_OP)
					break;
				printf("%s %s %.3g%% (%+.3g)", j ? "," : "",
				       usc_attr_op_label(&a->ops[u], label,
							 sizeof label),
				       100 * ao->top_share[k * a->top_k + j],
				       ao->top_contrib[k * a->top_k + j]);
			}
			if (isnan(ao->total[k]))
				printf(" not attributed (not finite)");
			else if (ao->top_ops[k * a->top_k] == USC_ATTR_NO_OP)
				printf(" no op contributes");
			printf("; residual %+.3g\n", ao->residual[k]);
		}
	}
}

static void print_json(const usc_check_report *r)
{
	printf("{\"kernel\": ");
	usc_cli_json_str(r->kernel_name);
	printf(", \"hlo_file\": ");
	usc_cli_json_str(r->hlo_path);
	printf(", \"fusion\": ");
	if (r->fusion)
		usc_cli_json_str(r->fusion);
	else
		printf("null");
	printf(", \"oracle_precision\": %lu, ", r->oracle_precision);
	printf("\"reference_functions\": %" PRIu64
	       ", \"reference_escalated\": %" PRIu64 ", ",
	       r->reference_functions, r->reference_escalated);
	if (r->classified) {
		printf("\"profile\": ");
		usc_cli_json_str(r->profile.name);
		printf(", \"verdict\": \"%s\", \"reason\": ",
		       usc_verdict_name(r->verdict));
		usc_cli_json_str(r->reason);
		printf(", \"envelope_fast\": %" PRIu64
		       ", \"envelope_escalated\": %" PRIu64,
		       r->envelope_fast, r->envelope_escalated);
	} else {
		printf("\"profile\": null, \"verdict\": null, \"reason\": null");
	}
	printf(", \"outputs\": [");
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];
		usc_tensor_spec spec = usc_tensor_spec_of(o->device);

		printf("%s{\"index\": %zu, \"dtype\": \"%s\", \"shape\": [",
		       i ? ", " : "", i, usc_dtype_name(spec.dtype));
		for (size_t d = 0; d < spec.rank; d++)
			printf("%s%" PRId64, d ? ", " : "", spec.dims[d]);
		printf("], \"count\": %" PRIu64 ", ", o->summary.count);
		if (r->classified) {
			printf("\"classes\": {");
			for (int c = 0; c < USC_CLASS_COUNT; c++)
				printf("%s\"%s\": %" PRIu64, c ? ", " : "",
				       usc_class_name((usc_class)c),
				       o->counts.n[c]);
			printf("}, ");
		}
		json_stats("oracle", &o->summary.oracle);
		printf(", ");
		json_stats("reference", &o->summary.reference);
		printf(", \"bit_exact\": %" PRIu64 ", \"undecided\": %" PRIu64
		       ", \"tier_decided\": %" PRIu64 ", \"worst\": [",
		       o->summary.bit_exact_count, o->summary.undecided_count,
		       o->tier_decided);
		for (size_t w = 0; w < o->worst_count; w++) {
			const usc_check_element *e = &o->worst[w];

			printf("%s{", w ? ", " : "");
			if (r->classified) {
				printf("\"class\": \"%s\", \"envelope\": ",
				       usc_class_name(e->cls));
				usc_cli_json_envelope(&e->envelope);
				printf(", \"outside_ulps\": ");
				usc_cli_json_num(e->outside_ulps);
				printf(", ");
			}
			printf("\"index\": [");
			usc_cli_print_index(stdout, o->device, e->index);
			printf("], \"device\": \"0x%" PRIx64
			       "\", \"reference\": \"0x%" PRIx64
			       "\", \"oracle_mid\": ",
			       e->device_bits, e->reference_bits);
			usc_cli_json_num(e->oracle_mid);
			printf(", \"oracle_rad\": ");
			usc_cli_json_num(e->oracle_rad);
			printf(", \"ulp_oracle\": ");
			usc_cli_json_num(e->ulp_oracle);
			printf(", \"ulp_reference\": ");
			usc_cli_json_num(e->ulp_reference);
			printf(", \"undecided\": %s, \"inputs\": [",
			       e->undecided ? "true" : "false");
			for (size_t j = 0, first = 1; j < r->input_count; j++) {
				double v;

				if (!same_shape(r->inputs[j], o->device) ||
				    usc_tensor_get_double(r->inputs[j], e->index,
							  &v) != USC_OK)
					continue;
				printf("%s{\"parameter\": %zu, \"value\": ",
				       first ? "" : ", ", j);
				usc_cli_json_num(v);
				printf("}");
				first = 0;
			}
			printf("]}");
		}
		printf("], \"oracle_elements\": %" PRIu64 "}",
		       o->oracle_elements);
	}
	printf("]");
	if (r->attribution)
		json_attribution(r);
	printf("}\n");
}

static void print_stats(const char *what, const usc_results_stats *s)
{
	printf("  |ulp| vs %-9s max %-10.4g median %-10.4g p99 %.4g", what,
	       s->max_abs, s->median_abs, s->p99_abs);
	if (s->nan_count)
		printf(" (%" PRIu64 " NaN)", s->nan_count);
	putchar('\n');
}

static void print_value(usc_dtype t, uint64_t bits)
{
	char dec[USC_EXACT_DECIMAL_SIZE];
	double d;

	if (usc_decode_double(t, bits, &d) == USC_OK && usc_dtype_is_float(t))
		printf("0x%" PRIx64 " = %.9g", bits, d);
	else if (usc_exact_decimal(t, bits, dec, sizeof dec) == USC_OK)
		printf("0x%" PRIx64 " = %s", bits, dec);
	else
		printf("0x%" PRIx64, bits);
}

static void print_text(const usc_check_report *r)
{
	printf("kernel %s (%s%s%s), ", r->kernel_name, r->hlo_path,
	       r->fusion ? ", fusion " : "", r->fusion ? r->fusion : "");
	if (r->oracle_precision)
		printf("oracle precision %lu bits\n", r->oracle_precision);
	else
		printf("every element decided by the f64 tier\n");
	if (r->reference_functions)
		printf("reference: %" PRIu64 " of %" PRIu64
		       " function evaluations escalated to MPFR (%.3g%%)\n",
		       r->reference_escalated, r->reference_functions,
		       100.0 * (double)r->reference_escalated /
			       (double)r->reference_functions);
	if (r->classified) {
		printf("verdict under profile %s: %s\n  %s\n", r->profile.name,
		       usc_verdict_name(r->verdict), r->reason);
		/* The envelope's fast path and its escalations to MPFR. */
		printf("envelope: %" PRIu64 " op elements decided in double, "
		       "%" PRIu64 " escalated to MPFR\n",
		       r->envelope_fast, r->envelope_escalated);
	} else
		printf("no device profile: no verdict (--profile NAME|FILE)\n");
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];
		usc_tensor_spec spec = usc_tensor_spec_of(o->device);
		char shape[256];

		usc_tensor_spec_format(&spec, shape, sizeof shape);
		printf("output %zu: %s, %" PRIu64 " elements\n", i, shape,
		       o->summary.count);
		print_stats("oracle", &o->summary.oracle);
		print_stats("reference", &o->summary.reference);
		printf("  bit-identical to the reference: %" PRIu64 " of %" PRIu64
		       "; undecided: %" PRIu64 "; decided by the f64 tier: %" PRIu64
		       "; evaluated by the oracle: %" PRIu64 "\n",
		       o->summary.bit_exact_count, o->summary.count,
		       o->summary.undecided_count, o->tier_decided,
		       o->oracle_elements);
		if (r->classified) {
			printf("  classes:");
			for (int c = 0; c < USC_CLASS_COUNT; c++)
				if (o->counts.n[c])
					printf(" %s %" PRIu64,
					       usc_class_name((usc_class)c),
					       o->counts.n[c]);
			putchar('\n');
		}
		if (o->worst_count)
			printf("  worst elements:\n");
		for (size_t w = 0; w < o->worst_count; w++) {
			const usc_check_element *e = &o->worst[w];

			printf("    [");
			usc_cli_print_index(stdout, o->device, e->index);
			printf("] device ");
			print_value(spec.dtype, e->device_bits);
			printf("  reference ");
			print_value(spec.dtype, e->reference_bits);
			printf("\n        oracle %.17g +- %.3g  error %+.4g ulp vs "
			       "oracle%s, %+.4g vs reference\n",
			       e->oracle_mid, e->oracle_rad, e->ulp_oracle,
			       e->undecided ? " (undecided)" : "",
			       e->ulp_reference);
			if (r->classified) {
				printf("        %s: envelope ",
				       usc_class_name(e->cls));
				print_envelope(&e->envelope);
				if (e->outside_ulps > 0 &&
				    isfinite(e->outside_ulps))
					printf(", %.0f codes outside",
					       e->outside_ulps);
				putchar('\n');
			}
			for (size_t j = 0; j < r->input_count; j++) {
				uint64_t bits;

				if (!same_shape(r->inputs[j], o->device) ||
				    usc_tensor_get_bits(r->inputs[j], e->index,
							&bits) != USC_OK)
					continue;
				printf("        input %zu ", j);
				print_value(usc_tensor_dtype(r->inputs[j]), bits);
				putchar('\n');
			}
		}
	}
}

/*
 * -j's default: the cores online, as many threads as can run at once; the
 * output is the same with any count (docs/check.md, "Threads").
 */
static size_t default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 256 ? 256 : (size_t)n;
}

int usc_cli_check(int argc, char **argv)
{
	usc_check_request req = usc_check_request_default();
	const char *inputs[USC_CLI_MAX_SOURCES];
	const char *devices[USC_CLI_MAX_SOURCES];
	const char *target = NULL, *out = NULL;
	bool json = false, append = false, force = false;
	usc_check_report *r = NULL;
	usc_attr_options aopt = usc_attr_options_default();
	usc_attribution *attr = NULL;
	bool attribute = false;
	usc_profile profile;
	usc_error err;
	usc_status st;
	int list = 0; /* 1: --input sources follow, 2: --device */
	int rc, k;
	usc_cli_num num;

	/* An XLA dump directory becomes a case first (cmd_dump.c). */
	if (usc_cli_is_dump(argc, argv))
		return usc_cli_check_dump(argc, argv);
	req.threads = default_threads();
	req.inputs = inputs;
	req.devices = devices;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--input") == 0)
			list = 1;
		else if (strcmp(a, "--device") == 0)
			list = 2;
		else if (strcmp(a, "--fusion") == 0 && i + 1 < argc)
			req.fusion = argv[++i], list = 0;
		else if (strcmp(a, "--out") == 0 && i + 1 < argc)
			out = argv[++i], list = 0;
		else if (strcmp(a, "--append") == 0)
			append = true, list = 0;
		else if (strcmp(a, "--force") == 0)
			force = true, list = 0;
		else if (strcmp(a, "--json") == 0)
			json = true, list = 0;
		else if (strcmp(a, "--pairwise") == 0)
			req.reduce_order = USC_REDUCE_PAIRWISE, list = 0;
		else if (strcmp(a, "--quantize") == 0)
			req.quantize = true, list = 0;
		else if (strcmp(a, "--strict-oracle") == 0)
			req.strict_oracle = true, list = 0;
		else if (strcmp(a, "--input-raw") == 0)
			req.raw = true, list = 0;
		else if (strcmp(a, "--attribute") == 0)
			attribute = true, list = 0;
		else if ((k = usc_cli_num_arg(usc_cli_check_nums, argc, argv,
					      &i, &num)) != USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				return USC_EXIT_USAGE;
			if (k == CHECK_TOP_K)
				aopt.top_k = (size_t)num.u;
			else if (k == CHECK_ATTR_MAX_OPS)
				aopt.max_ops = (size_t)num.u;
			else if (k == CHECK_LAMBDA)
				req.lambda = num.d;
			else if (k == CHECK_WORST)
				req.worst = (size_t)num.u;
			else if (k == CHECK_THREADS)
				req.threads = (size_t)num.u;
			else if (k == CHECK_PIECE)
				req.stream_piece = (size_t)num.u;
			else
				req.oracle_precision_max =
					(unsigned long)num.u;
			list = 0;
		} else if (strncmp(a, "-j", 2) == 0 && a[2]) {
			/* -j4, as make takes it */
			if (usc_cli_num_parse(&usc_cli_check_nums[CHECK_THREADS],
					      a + 2, &num) != 0)
				return USC_EXIT_USAGE;
			req.threads = (size_t)num.u;
			list = 0;
		} else if (strcmp(a, "--no-profile") == 0)
			req.no_profile = true, req.profile = NULL, list = 0;
		else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				/* A bad input, as docs/check.md says. */
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			req.profile = &profile;
			list = 0;
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
		usc_cli_error("%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if ((append || force) && !out) {
		usc_cli_error("%s needs --out", append ? "--append" : "--force");
		return USC_EXIT_USAGE;
	}
	if (append && force) {
		usc_cli_error("--append and --force do not go together: "
			      "--append only adds to a result file");
		return USC_EXIT_USAGE;
	}
	/* Refused before the check runs, not after (docs/check.md). */
	if (out && usc_results_check_target(out, append,
					    force ? USC_RESULTS_FORCE : 0,
					    &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	/*
	 * Without an attribution, which needs every element's figures, the
	 * check streams (docs/check.md, "Streaming") and writes the result
	 * file as it goes.
	 */
	if (!attribute) {
		req.stream = true;
		req.results_path = out;
		req.results_append = append;
		req.results_force = force;
	}
	if (usc_cli_is_dir(target)) {
		if (req.input_count || req.device_count) {
			usc_cli_error("a case directory brings its own inputs "
				      "and device outputs");
			return USC_EXIT_USAGE;
		}
		st = usc_check_case(target, &req, &r, &err);
	} else {
		req.hlo_path = target;
		st = usc_check_run(&req, &r, &err);
	}
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (attribute) {
		aopt.reduce_order = req.reduce_order;
		aopt.quantize = req.quantize;
		st = usc_attribute(usc_hlo_file_module(r->kernel, 0),
				   r->computation,
				   (const usc_tensor *const *)r->inputs,
				   r->input_count, &aopt, &attr, &err);
		if (st != USC_OK) {
			usc_cli_error("%s", err.message);
			usc_check_report_destroy(r);
			return USC_EXIT_FAIL;
		}
		r->attribution = attr;
	}
	if (json)
		print_json(r);
	else
		print_text(r);
	if (attr && !json)
		print_attribution(r);
	if (out && attribute &&
	    usc_check_write_ex(r, out, append, force ? USC_RESULTS_FORCE : 0,
			       &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		usc_check_report_destroy(r);
		usc_attribution_destroy(attr);
		return USC_EXIT_FAIL;
	}
	if (out && !json)
		printf("results written to %s\n", out);
	rc = verdict_exit(r);
	usc_check_report_destroy(r);
	usc_attribution_destroy(attr);
	return rc;
}
