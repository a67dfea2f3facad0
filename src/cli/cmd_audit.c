/*
 * ulpscope audit: what a pass did to a program, BEFORE against AFTER on
 * the same inputs: the function (do the oracles differ?) and the precision
 * (the references' errors against the BEFORE oracle).  Exit status
 * (docs/audit.md): 0 the audit ran (and with --fail-on-regression nothing
 * failed the gate), 1 an input was bad, 2 usage, 3 the precision regressed
 * beyond the gate's threshold, 4 the function changed beyond it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/audit.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"

static const char usage_text[] =
	"usage: ulpscope audit BEFORE.hlo AFTER.hlo (--input SRC... | --draw "
	"DIST[,DIST...] [--samples N] [--seed S]) [options]\n"
	"       ulpscope audit --pipeline DUMP_DIR [--module NAME] (--input "
	"SRC... | --draw DIST[,DIST...] ...) [options]\n"
	"options: --profile NAME|FILE --threshold ULP --fail-on-regression "
	"ULP --ops [--ops-max N] --out FILE.h5 [--append | --force] "
	"[--name NAME] --json "
	"--pairwise --precision-max BITS --strict-oracle --input-raw";

enum {
	AUDIT_SAMPLES,
	AUDIT_SEED,
	AUDIT_THRESHOLD,
	AUDIT_FAIL,
	AUDIT_PRECISION_MAX,
	AUDIT_OPS_MAX
};

/*
 * The ranges: samples are evaluated one after another, each three checks,
 * so a thousand is already a long audit; a threshold is a count of ULPs
 * of the output type, which only a format's whole range of codes bounds.
 */
const usc_cli_num_opt usc_cli_audit_nums[] = {
	[AUDIT_SAMPLES] = USC_CLI_INT_OPT("--samples", "N", 1, 1000,
					  "samples drawn per distribution (1)"),
	[AUDIT_SEED] = USC_CLI_HEX_OPT("--seed", "S", 0, UINT64_MAX,
				       "the seed of the first sample; sample "
				       "k uses S + k (0)"),
	[AUDIT_THRESHOLD] = USC_CLI_REAL_OPT("--threshold", "ULP", 0, 1e30,
					     true,
					     "the verdict's threshold in ULPs "
					     "(1)"),
	[AUDIT_FAIL] = USC_CLI_REAL_OPT("--fail-on-regression", "ULP", 0,
					1e30, true,
					"exit 3 when the precision regresses, "
					"4 when the function changes, by more "
					"than ULP"),
	[AUDIT_PRECISION_MAX] = USC_CLI_INT_OPT("--precision-max", "BITS", 64,
						65536,
						"the oracle's precision cap "
						"(4096)"),
	[AUDIT_OPS_MAX] = USC_CLI_INT_OPT("--ops-max", "N", 1, 1000000,
					  "with --ops: attribute at most N "
					  "rounding ops per module, one oracle "
					  "run each (64)"),
	USC_CLI_NUM_END,
};

/* Parses "normal,cancel" into dists; returns 0, or -1 after saying why. */
static int parse_dists(const char *text, usc_audit_dist *dists, size_t *n)
{
	const char *p = text;

	while (*p) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		usc_error err;

		if (*n == USC_AUDIT_DIST_COUNT * 4) {
			usc_cli_error("--draw: too many distributions");
			return -1;
		}
		if (usc_audit_dist_from_name(p, len, &dists[*n], &err) !=
		    USC_OK) {
			usc_cli_error("--draw: %s\n%s", err.message,
				      usage_text);
			return -1;
		}
		(*n)++;
		p += len + (q != NULL);
	}
	if (!*n) {
		usc_cli_error("--draw: no distribution named\n%s", usage_text);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- JSON */

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

static void json_figures(const usc_audit_figures *f)
{
	printf("{\"count\": %" PRIu64 ", \"function\": {\"changed\": %" PRIu64
	       ", \"special\": %" PRIu64 ", \"max_ulps\": ",
	       f->count, f->fn_changed, f->fn_special);
	usc_cli_json_num(f->fn_max_ulps);
	if (f->fn_changed) {
		printf(", \"worst\": %" PRIu64 ", \"before\": ", f->fn_worst);
		usc_cli_json_num(f->fn_worst_before);
		printf(", \"after\": ");
		usc_cli_json_num(f->fn_worst_after);
	}
	printf("}, \"precision\": {\"better\": %" PRIu64 ", \"worse\": %" PRIu64
	       ", \"unchanged\": %" PRIu64 ", \"identical\": %" PRIu64
	       ", \"undecided\": %" PRIu64 ", ",
	       f->better, f->worse, f->unchanged, f->identical, f->undecided);
	json_stats("before", &f->before);
	printf(", ");
	json_stats("after", &f->after);
	printf("}, \"envelope\": ");
	if (f->enveloped) {
		printf("{\"known\": %" PRIu64 ", \"wider\": %" PRIu64
		       ", \"narrower\": %" PRIu64
		       ", \"after_outside_before\": %" PRIu64
		       ", \"width_before\": {\"max\": ",
		       f->env_known, f->wider, f->narrower,
		       f->after_outside_before);
		usc_cli_json_num(f->width_before.max_abs);
		printf(", \"median\": ");
		usc_cli_json_num(f->width_before.median_abs);
		printf("}, \"width_after\": {\"max\": ");
		usc_cli_json_num(f->width_after.max_abs);
		printf(", \"median\": ");
		usc_cli_json_num(f->width_after.median_abs);
		printf("}}");
	} else {
		printf("null");
	}
	printf(", \"verdict\": \"%s\", \"reason\": ",
	       usc_audit_verdict_name(f->verdict));
	usc_cli_json_str(f->reason);
	printf("}");
}

static void shape_text(const usc_audit_output *o, char *buf, size_t size)
{
	usc_tensor_spec s = {o->dtype, o->rank, o->dims, NULL};

	usc_tensor_spec_format(&s, buf, size);
}

static void print_json(const usc_audit_report *r, int gate)
{
	printf("{\"before\": ");
	usc_cli_json_str(r->before_path);
	printf(", \"after\": ");
	usc_cli_json_str(r->after_path);
	printf(", \"before_module\": ");
	usc_cli_json_str(r->before_name);
	printf(", \"after_module\": ");
	usc_cli_json_str(r->after_name);
	printf(", \"profile\": ");
	if (r->profiled)
		usc_cli_json_str(r->profile.name);
	else
		printf("null");
	printf(", \"threshold\": ");
	usc_cli_json_num(r->threshold);
	printf(", \"samples\": [");
	for (size_t s = 0; s < r->sample_count; s++) {
		printf("%s", s ? ", " : "");
		usc_cli_json_str(r->samples[s].label);
	}
	printf("], \"function_changed\": %s, \"function_max_ulps\": ",
	       r->function_changed ? "true" : "false");
	usc_cli_json_num(r->function_max_ulps);
	printf(", \"verdict\": \"%s\", \"reason\": ",
	       usc_audit_verdict_name(r->verdict));
	usc_cli_json_str(r->reason);
	printf(", \"exit_status\": %d, \"ops\": ", gate);
	if (r->ops) {
		printf("[");
		for (size_t k = 0; k < r->op_count; k++) {
			const usc_audit_op *o = &r->ops[k];

			printf("%s{\"kind\": \"%s\", \"before\": ", k ? ", " : "",
			       usc_audit_op_kind_name(o->kind));
			usc_cli_json_str(o->before);
			printf(", \"after\": ");
			usc_cli_json_str(o->after);
			printf(", \"source\": ");
			usc_cli_json_str(o->source);
			printf(", \"before_mean_abs\": ");
			usc_cli_json_num(o->before_mean_abs);
			printf(", \"after_mean_abs\": ");
			usc_cli_json_num(o->after_mean_abs);
			printf(", \"change\": ");
			usc_cli_json_num(o->change);
			printf(", \"share\": ");
			usc_cli_json_num(o->share);
			printf("}");
		}
		printf("]");
	} else {
		printf("null");
	}
	printf(", \"ops_note\": ");
	usc_cli_json_str(r->ops_note);
	printf(", \"outputs\": [");
	for (size_t i = 0; i < r->output_count; i++) {
		char shape[256];

		shape_text(&r->outputs[i], shape, sizeof shape);
		printf("%s{\"index\": %zu, \"shape\": ", i ? ", " : "", i);
		usc_cli_json_str(shape);
		printf(", \"pooled\": ");
		json_figures(&r->pooled[i]);
		printf(", \"samples\": [");
		for (size_t s = 0; s < r->sample_count; s++) {
			printf("%s{\"label\": ", s ? ", " : "");
			usc_cli_json_str(r->samples[s].label);
			printf(", \"figures\": ");
			json_figures(&r->samples[s].outputs[i]);
			printf("}");
		}
		printf("]}");
	}
	printf("]}");
}

/* ------------------------------------------------------------- text */

static void print_row(const char *label, const usc_audit_figures *f)
{
	char nan[48];

	snprintf(nan, sizeof nan, "%" PRIu64 " -> %" PRIu64,
		 f->before.nan_count, f->after.nan_count);
	printf("  %-12s %7" PRIu64 " %7" PRIu64 " %9" PRIu64 " %9" PRIu64
	       "  %9.4g -> %-9.4g %9.4g -> %-9.4g %9.4g -> %-9.4g %10s %7" PRIu64
	       "  %s\n",
	       label, f->better, f->worse, f->unchanged, f->identical,
	       f->before.max_abs, f->after.max_abs, f->before.p99_abs,
	       f->after.p99_abs, f->before.median_abs, f->after.median_abs,
	       nan, f->fn_changed, usc_audit_verdict_name(f->verdict));
}

/* The op-by-op rows (docs/audit.md, "Op by op"). */
static void print_ops(const usc_audit_report *r)
{
	if (r->ops_note[0]) {
		printf("op by op: not available: %s\n", r->ops_note);
		return;
	}
	printf("op by op (sample %s; mean |ulp| each op causes alone, "
	       "before -> after):\n",
	       r->samples[0].label);
	for (size_t k = 0; k < r->op_count; k++) {
		const usc_audit_op *o = &r->ops[k];

		printf("  %-9s %-30s -> %-30s %9.4g -> %-9.4g %+9.4g  %5.1f%%",
		       usc_audit_op_kind_name(o->kind),
		       o->before[0] ? o->before : "-",
		       o->after[0] ? o->after : "-", o->before_mean_abs,
		       o->after_mean_abs, o->change, 100 * o->share);
		if (o->source[0])
			printf("  %s", o->source);
		putchar('\n');
	}
}

static void print_text(const usc_audit_report *r)
{
	printf("audit %s (%s) -> %s (%s)\n", r->before_path, r->before_name,
	       r->after_path, r->after_name);
	printf("%zu sample%s, threshold %g ulp, %s%s\n", r->sample_count,
	       r->sample_count == 1 ? "" : "s", r->threshold,
	       r->profiled ? "profile " : "no profile",
	       r->profiled ? r->profile.name : "");
	if (r->function_changed)
		printf("function: CHANGED: the oracles differ beyond their "
		       "enclosures, by up to %.4g ulp\n",
		       r->function_max_ulps);
	else
		printf("function: unchanged: the oracles agree within their "
		       "enclosures on every element\n");
	printf("precision: %s (%s)\n", usc_audit_verdict_name(r->verdict),
	       r->reason);
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_audit_figures *p = &r->pooled[i];
		char shape[256];

		shape_text(&r->outputs[i], shape, sizeof shape);
		printf("output %zu: %s\n", i, shape);
		if (p->fn_changed)
			printf("  function changed on %" PRIu64 " of %" PRIu64
			       " elements (%" PRIu64 " NaN or infinite), most "
			       "at element %" PRIu64 " of sample %s: exact "
			       "%.17g before, %.17g after (%.4g ulp)\n",
			       p->fn_changed, p->count, p->fn_special,
			       p->fn_worst, r->samples[p->fn_worst_sample].label,
			       p->fn_worst_before, p->fn_worst_after,
			       p->fn_max_ulps);
		printf("  |ulp| against the BEFORE oracle, BEFORE's reference "
		       "-> AFTER's:\n");
		printf("  %-12s %7s %7s %9s %9s  %-22s %-22s %-22s %10s %7s  "
		       "%s\n",
		       "sample", "better", "worse", "unchanged", "identical",
		       "max", "p99", "median", "NaN errors", "fn", "verdict");
		if (r->sample_count > 1)
			for (size_t s = 0; s < r->sample_count; s++)
				print_row(r->samples[s].label,
					  &r->samples[s].outputs[i]);
		print_row("pooled", p);
		if (p->undecided)
			printf("  undecided elements (figures from the "
			       "enclosure's midpoint): %" PRIu64 "\n",
			       p->undecided);
		if (p->enveloped)
			printf("  envelope width (ulp) under %s: median %.4g -> "
			       "%.4g, max %.4g -> %.4g; wider %" PRIu64
			       ", narrower %" PRIu64 " of %" PRIu64
			       "; AFTER's reference outside BEFORE's "
			       "envelope: %" PRIu64 "\n",
			       r->profile.name, p->width_before.median_abs,
			       p->width_after.median_abs,
			       p->width_before.max_abs,
			       p->width_after.max_abs, p->wider, p->narrower,
			       p->env_known, p->after_outside_before);
	}
	if (r->ops || r->ops_note[0])
		print_ops(r);
}

/* ------------------------------------------------------------ pipelines */

struct pipeline_gate;
static void pipeline_gate_json(const usc_audit_pipeline *p,
			       const struct pipeline_gate *g);

static void pipeline_json(const usc_audit_pipeline *p,
			  const struct pipeline_gate *g)
{
	printf("{\"pipeline\": ");
	usc_cli_json_str(p->dir);
	printf(", \"module\": ");
	usc_cli_json_str(p->module);
	printf(", \"stages\": [");
	for (size_t k = 0; k < p->stage_count; k++) {
		const usc_audit_stage *s = &p->stages[k];
		const usc_audit_report *a = usc_audit_stage_report(p, k);

		printf("%s{\"label\": ", k ? ", " : "");
		usc_cli_json_str(s->label);
		printf(", \"pass\": ");
		usc_cli_json_str(s->pass);
		printf(", \"path\": ");
		usc_cli_json_str(s->path);
		printf(", \"evaluated\": %s, \"same_as\": ",
		       a ? "true" : "false");
		if (s->same_as != SIZE_MAX)
			printf("%zu", s->same_as);
		else
			printf("null");
		printf(", \"note\": ");
		usc_cli_json_str(s->same_as != SIZE_MAX
					 ? p->stages[s->same_as].note
					 : s->note);
		printf(", \"moved\": %s, \"function_moved\": %s",
		       s->moved ? "true" : "false",
		       s->fn_moved ? "true" : "false");
		if (a) {
			printf(", \"function_changed\": %s, \"outputs\": [",
			       a->function_changed ? "true" : "false");
			for (size_t i = 0; i < a->output_count; i++) {
				printf("%s{", i ? ", " : "");
				json_stats("error", &a->pooled[i].after);
				printf("}");
			}
			printf("]");
		}
		printf("}");
	}
	printf("], \"biggest\": ");
	if (p->descent)
		usc_cli_json_str(p->stages[p->biggest].label);
	else
		printf("null");
	printf(", \"descent\": ");
	if (p->descent)
		print_json(p->descent, 0);
	else
		printf("null");
	pipeline_gate_json(p, g);
	printf("}\n");
}

static void pipeline_text(const usc_audit_pipeline *p)
{
	const usc_audit_report *first = usc_audit_stage_report(p, 0);

	printf("pipeline %s, module %s: %zu stages, %zu sample%s; |ulp| of "
	       "each stage's reference against the first stage's oracle\n",
	       p->dir, p->module, p->stage_count, first->sample_count,
	       first->sample_count == 1 ? "" : "s");
	printf("  %-4s %-66s %-10s %-10s %-10s %-5s %s\n", "", "stage", "max",
	       "p99", "median", "fn", "moved");
	for (size_t k = 0; k < p->stage_count; k++) {
		const usc_audit_stage *s = &p->stages[k];
		const usc_audit_report *a = usc_audit_stage_report(p, k);

		printf("  %-4zu %-66.66s ", k, s->label);
		if (!a) {
			printf("not evaluated: %s\n",
			       s->same_as != SIZE_MAX
				       ? p->stages[s->same_as].note
				       : s->note);
			continue;
		}
		for (size_t i = 0; i < a->output_count; i++) {
			const usc_results_stats *e = &a->pooled[i].after;

			printf("%s%-10.4g %-10.4g %-10.4g", i ? " | " : "",
			       e->max_abs, e->p99_abs, e->median_abs);
		}
		if (s->same_as != SIZE_MAX) {
			printf(" (the text of stage %zu)\n", s->same_as);
			continue;
		}
		printf(" %-5s %s\n",
		       a->function_changed ? "CHANGED" : "same",
		       s->moved && s->fn_moved ? "precision, function"
		       : s->moved	       ? "precision"
		       : s->fn_moved	       ? "function"
					       : "");
	}
	if (!p->descent) {
		printf("no pass moved any reference element or the function\n");
		return;
	}
	printf("\nthe biggest move: stage %zu, %s (pass %s)\n\n", p->biggest,
	       p->stages[p->biggest].label, p->stages[p->biggest].pass);
	print_text(p->descent);
}

/* What the pipeline's gate decided, for the text and the JSON. */
typedef struct pipeline_gate {
	bool on;
	double t;
	int rc;
	size_t stage;
	char reason[USC_ERROR_MESSAGE_SIZE];
} pipeline_gate;

static void pipeline_gate_text(const usc_audit_pipeline *p,
			       const pipeline_gate *g)
{
	if (!g->on)
		return;
	if (!g->rc) {
		printf("\ngate at %g ulp: passed (no pass regressed or changed "
		       "the function by more)\n",
		       g->t);
		return;
	}
	printf("\ngate at %g ulp: FAILED (exit status %d) at stage %zu, %s: "
	       "%s\n",
	       g->t, g->rc, g->stage, p->stages[g->stage].label, g->reason);
	for (size_t k = g->stage + 1; k < p->stage_count; k++) {
		char why[USC_ERROR_MESSAGE_SIZE];
		int rc = usc_audit_pass_gate(p, k, g->t, why, sizeof why);

		if (rc)
			printf("  also stage %zu, %s (exit status %d): %s\n", k,
			       p->stages[k].label, rc, why);
	}
}

static void pipeline_gate_json(const usc_audit_pipeline *p,
			       const pipeline_gate *g)
{
	printf(", \"exit_status\": %d, \"gate_stage\": ", g->rc);
	if (g->rc)
		usc_cli_json_str(p->stages[g->stage].label);
	else
		printf("null");
	printf(", \"gate_reason\": ");
	usc_cli_json_str(g->reason);
}

static int run_pipeline(usc_audit_request *req, const char *dir,
			const char *module, bool json, const char *out,
			const char *name, unsigned flags, bool gate,
			double fail_t)
{
	usc_audit_pipeline *p = NULL;
	pipeline_gate g = {gate, gate ? fail_t : req->threshold, 0, SIZE_MAX,
			   ""};
	usc_error err;

	if (usc_audit_pipeline_run(req, dir, module, &p, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (out && usc_audit_pipeline_write(p, g.t, out,
					    name ? name : p->module, flags,
					    &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		usc_audit_pipeline_destroy(p);
		return USC_EXIT_FAIL;
	}
	if (gate) {
		g.rc = usc_audit_pipeline_gate(p, fail_t, &g.stage);
		if (g.rc)
			usc_audit_pass_gate(p, g.stage, fail_t, g.reason,
					    sizeof g.reason);
	}
	if (json)
		pipeline_json(p, &g);
	else {
		pipeline_text(p);
		pipeline_gate_text(p, &g);
	}
	usc_audit_pipeline_destroy(p);
	return g.rc;
}

/* A file's name without its directory and its last extension. */
static void stem(const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	size_t len;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, size, "%.*s", (int)len, base);
}

int usc_cli_audit(int argc, char **argv)
{
	usc_audit_request req = usc_audit_request_default();
	const char *inputs[USC_CLI_MAX_SOURCES];
	usc_audit_dist dists[USC_AUDIT_DIST_COUNT * 4];
	const char *before = NULL, *after = NULL, *out = NULL, *name = NULL;
	const char *pipeline = NULL, *module = NULL;
	bool append = false, force = false;
	char default_name[512];
	size_t ninputs = 0, ndists = 0;
	bool json = false, gate = false, listing = false, t_set = false;
	double fail_t = 0;
	usc_profile profile;
	usc_audit_report *r = NULL;
	usc_error err;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		usc_cli_num v;
		int k;

		if (strcmp(a, "--input") == 0) {
			listing = true;
		} else if (strcmp(a, "--draw") == 0 && i + 1 < argc) {
			listing = false;
			if (parse_dists(argv[++i], dists, &ndists) != 0)
				return USC_EXIT_USAGE;
		} else if (strcmp(a, "--out") == 0 && i + 1 < argc) {
			out = argv[++i], listing = false;
		} else if (strcmp(a, "--name") == 0 && i + 1 < argc) {
			name = argv[++i], listing = false;
		} else if (strcmp(a, "--append") == 0) {
			append = true, listing = false;
		} else if (strcmp(a, "--force") == 0) {
			force = true, listing = false;
		} else if (strcmp(a, "--pipeline") == 0 && i + 1 < argc) {
			pipeline = argv[++i], listing = false;
		} else if (strcmp(a, "--module") == 0 && i + 1 < argc) {
			module = argv[++i], listing = false;
		} else if (strcmp(a, "--ops") == 0) {
			req.ops = true, listing = false;
		} else if (strcmp(a, "--json") == 0) {
			json = true, listing = false;
		} else if (strcmp(a, "--pairwise") == 0) {
			req.reduce_order = USC_REDUCE_PAIRWISE, listing = false;
		} else if (strcmp(a, "--strict-oracle") == 0) {
			req.strict_oracle = true, listing = false;
		} else if (strcmp(a, "--input-raw") == 0) {
			req.raw = true, listing = false;
		} else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			listing = false;
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			req.profile = &profile;
		} else if ((k = usc_cli_num_arg(usc_cli_audit_nums, argc, argv,
						&i, &v)) != USC_CLI_NUM_NONE) {
			listing = false;
			if (k == USC_CLI_NUM_BAD)
				return USC_EXIT_USAGE;
			if (k == AUDIT_SAMPLES)
				req.samples = (size_t)v.u;
			else if (k == AUDIT_SEED)
				req.seed = v.u;
			else if (k == AUDIT_THRESHOLD)
				req.threshold = v.d, t_set = true;
			else if (k == AUDIT_FAIL)
				gate = true, fail_t = v.d;
			else if (k == AUDIT_OPS_MAX)
				req.ops_max = (size_t)v.u;
			else
				req.oracle_precision_max = (unsigned long)v.u;
		} else if (listing && !(a[0] == '-' && a[1] == '-')) {
			rc = usc_cli_operand(a, inputs, &ninputs, NULL,
					     usage_text);
			if (rc != USC_EXIT_OK)
				return rc;
		} else if (!before) {
			rc = usc_cli_operand(a, NULL, NULL, &before,
					     usage_text);
			if (rc != USC_EXIT_OK)
				return rc;
		} else {
			rc = usc_cli_operand(a, NULL, NULL, &after, usage_text);
			if (rc != USC_EXIT_OK)
				return rc;
		}
	}
	if ((append || force || name) && !out) {
		usc_cli_error("--append, --force and --name go with --out\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (append && force) {
		usc_cli_error("--append and --force do not go together\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	/* A gate without its own --threshold judges at the gate's. */
	if (gate && !t_set)
		req.threshold = fail_t;
	if (pipeline) {
		if (before) {
			usc_cli_error("--pipeline takes no modules\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		if (!ninputs == !ndists) {
			usc_cli_error("audit needs either --input sources or "
				      "--draw distributions (not both)\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		req.input_count = ninputs;
		req.inputs = inputs;
		req.dist_count = ndists;
		req.dists = dists;
		return run_pipeline(&req, pipeline, module, json, out, name,
				    append ? USC_AUDIT_APPEND
				    : force ? USC_RESULTS_FORCE
					    : 0,
				    gate, fail_t);
	}
	if (module) {
		usc_cli_error("--module goes with --pipeline\n%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if (!before || !after) {
		usc_cli_error("audit needs BEFORE.hlo and AFTER.hlo\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (!ninputs == !ndists) {
		usc_cli_error("audit needs either --input sources or --draw "
			      "distributions (not both)\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (out && !name) {
		char b[240], a[240];

		stem(before, b, sizeof b);
		stem(after, a, sizeof a);
		snprintf(default_name, sizeof default_name, "%s->%s", b, a);
		name = default_name;
	}
	req.before_path = before;
	req.after_path = after;
	req.input_count = ninputs;
	req.inputs = inputs;
	req.dist_count = ndists;
	req.dists = dists;
	if (usc_audit_run(&req, &r, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (out && usc_audit_write(r, out, name,
				   append ? USC_AUDIT_APPEND
				   : force ? USC_RESULTS_FORCE
					   : 0,
				   &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		usc_audit_report_destroy(r);
		return USC_EXIT_FAIL;
	}
	rc = gate ? usc_audit_gate(r, fail_t) : USC_EXIT_OK;
	if (json) {
		print_json(r, rc);
		putchar('\n');
	} else
		print_text(r);
	usc_audit_report_destroy(r);
	return rc;
}
