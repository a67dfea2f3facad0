/*
 * The audits of a result file in the report: the groups "ulpscope audit
 * --out" writes under /audits/<name> (docs/results.md, docs/audit.md),
 * read through the door to HDF5 since the result reader does not read
 * them.  Each audit shows its verdict, the function/precision split, the
 * envelope widths and, per output, the before/after figures and the
 * histograms of |ulp| before and after the pass, pooled over the samples.
 *
 * /audits may also hold records of another layout (a later kind of
 * audit): a group without the attributes of an audit is not guessed at;
 * the page says it skipped it and why, and goes on.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"
#include "store/h5_door.h"
#include "store/results_internal.h"

/* Attributes of an audit group, as docs/results.md lists them. */
static const char *const audit_strings[] = {
	"before", "after", "before_module", "after_module",
	"profile", "verdict", "reason", "ops_note",
};
enum { AS_BEFORE, AS_AFTER, AS_BMOD, AS_AMOD, AS_PROFILE, AS_VERDICT,
       AS_REASON, AS_OPS_NOTE, AS_COUNT };

/* Pooled figures of one output, attributes of outputs/<i>. */
static const char *const out_uints[] = {
	"count", "better", "worse", "unchanged", "identical",
	"undecided", "fn_changed", "fn_special", "before_nan", "after_nan",
};
enum { OU_COUNT = 10 };
static const char *const out_doubles[] = {
	"fn_max_ulps", "before_max", "before_p99", "before_median",
	"after_max", "after_p99", "after_median",
};
enum { OD_FN_MAX, OD_BMAX, OD_BP99, OD_BMED, OD_AMAX, OD_AP99, OD_AMED,
       OD_COUNT };
/* With a profile only. */
static const char *const env_uints[] = {
	"env_known", "wider", "narrower", "after_outside_before",
};
static const char *const env_doubles[] = {
	"width_before_median", "width_after_median",
};

typedef struct audit_output {
	char *shape, *verdict, *reason;
	uint64_t u[OU_COUNT];
	double d[OD_COUNT];
	bool enveloped;
	uint64_t eu[4];
	double ed[2];
} audit_output;

typedef struct audit {
	char *s[AS_COUNT];
	double threshold, function_max_ulps;
	uint64_t function_changed, samples, outputs;
	audit_output *out;
} audit;

static void audit_free(audit *a)
{
	for (size_t i = 0; i < AS_COUNT; i++)
		usc__free(a->s[i]);
	for (uint64_t i = 0; a->out && i < a->outputs; i++) {
		usc__free(a->out[i].shape);
		usc__free(a->out[i].verdict);
		usc__free(a->out[i].reason);
	}
	usc__free(a->out);
	memset(a, 0, sizeof(*a));
}

/* Reads output i's pooled figures from group g. */
static usc_status read_output(usc__h5_file *f, const char *g,
			      audit_output *o, usc_error *err)
{
	usc_status st = USC_OK;
	usc_error probe;

	st = usc__h5_attr_get_string(f, g, "shape", &o->shape, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, g, "verdict", &o->verdict,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, g, "reason", &o->reason, err);
	for (size_t k = 0; st == USC_OK && k < OU_COUNT; k++)
		st = usc__h5_attr_get_uint(f, g, out_uints[k], &o->u[k], err);
	for (size_t k = 0; st == USC_OK && k < OD_COUNT; k++)
		st = usc__h5_attr_get_double(f, g, out_doubles[k], &o->d[k],
					     err);
	if (st != USC_OK)
		return st;
	/* The envelope's attributes are there only under a profile. */
	o->enveloped = usc__h5_attr_get_uint(f, g, env_uints[0], &o->eu[0],
					     &probe) == USC_OK;
	for (size_t k = 1; st == USC_OK && o->enveloped && k < 4; k++)
		st = usc__h5_attr_get_uint(f, g, env_uints[k], &o->eu[k], err);
	for (size_t k = 0; st == USC_OK && o->enveloped && k < 2; k++)
		st = usc__h5_attr_get_double(f, g, env_doubles[k], &o->ed[k],
					     err);
	return st;
}

/* Reads the audit at group g; any failure means "not an audit we know". */
static usc_status read_audit(usc__h5_file *f, const char *g, audit *a,
			     usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE + 32];
	usc_status st = USC_OK;

	for (size_t i = 0; st == USC_OK && i < AS_COUNT; i++)
		st = usc__h5_attr_get_string(f, g, audit_strings[i], &a->s[i],
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(f, g, "threshold", &a->threshold,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(f, g, "function_max_ulps",
					     &a->function_max_ulps, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "function_changed",
					   &a->function_changed, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "samples", &a->samples, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "outputs", &a->outputs, err);
	/* An audit's outputs are few (a kernel's tuple); a count beyond
	 * what any kernel has is not one. */
	if (st == USC_OK && (a->outputs == 0 || a->outputs > 4096))
		st = usc__fail(err, USC_EPARSE, "%s: %llu outputs", g,
			       (unsigned long long)a->outputs);
	if (st == USC_OK) {
		a->out = usc__calloc((size_t)a->outputs, sizeof(*a->out));
		if (!a->out)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (uint64_t i = 0; st == USC_OK && i < a->outputs; i++) {
		usc__results_path(path, sizeof path, "%s/outputs/%llu", g,
				  (unsigned long long)i);
		st = read_output(f, path, &a->out[i], err);
	}
	return st;
}

/*
 * The histogram of |x| over a (samples, elements) float64 dataset into
 * bins; false (and nothing drawn) when the dataset is not that.
 */
static bool histogram_of(usc__h5_file *f, const char *ds, uint64_t *bins,
			 uint64_t *nan)
{
	usc__h5_dataset *d = NULL;
	usc__h5_type t;
	int64_t dims[2] = {0, 0};
	size_t rank = 0;
	bool all = false;
	double *v = NULL;
	uint64_t n;
	usc_error e;
	bool ok;

	memset(bins, 0, USC__HIST_BINS * sizeof(*bins));
	*nan = 0;
	ok = usc__h5_dataset_open(f, ds, &d, &e) == USC_OK &&
	     usc__h5_dataset_shape(d, 2, &rank, dims, &e) == USC_OK &&
	     usc__h5_dataset_type(d, &t, &e) == USC_OK &&
	     usc__h5_dataset_stored(d, &all, &e) == USC_OK && all &&
	     rank == 2 && t.cls == USC__H5_FLOAT && t.size == 8 &&
	     !t.big_endian && dims[0] >= 0 && dims[1] >= 0 &&
	     (uint64_t)dims[1] <= SIZE_MAX / 8 / ((uint64_t)dims[0] + 1);
	if (ok) {
		n = (uint64_t)dims[0] * (uint64_t)dims[1];
		v = usc__malloc(n ? (size_t)n * sizeof(double) : 1);
		ok = v && usc__h5_dataset_read_raw(d, v, (size_t)n * 8,
						   &e) == USC_OK;
		for (uint64_t k = 0; ok && k < n; k++) {
			if (isnan(v[k]))
				(*nan)++;
			else
				bins[usc__hist_bin(v[k])]++;
		}
	}
	usc__free(v);
	if (d)
		usc__h5_dataset_close(d);
	return ok;
}

static void row_num(usc__html *h, const char *label, const char *key,
		    double before, double after)
{
	usc__html_printf(h, "<tr><th>%s</th><td data-k=\"%s_before\" "
			    "data-v=\"",
			 label, key);
	usc__html_num(h, before);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, before);
	usc__html_printf(h, "</td><td data-k=\"%s_after\" data-v=\"", key);
	usc__html_num(h, after);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, after);
	usc__html_printf(h, "</td></tr>");
}

static void count_span(usc__html *h, const char *label, const char *key,
		       uint64_t n)
{
	usc__html_printf(h, "%s%s<span data-k=\"%s\" data-v=\"%llu\">%llu"
			    "</span>",
			 label, label[0] ? " " : "", key,
			 (unsigned long long)n, (unsigned long long)n);
}

static void num_span(usc__html *h, const char *key, double x)
{
	usc__html_printf(h, "<span data-k=\"%s\" data-v=\"", key);
	usc__html_num(h, x);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, x);
	usc__html_printf(h, "</span>");
}

static void verdict_span(usc__html *h, const char *v)
{
	usc__html_printf(h, "<span data-k=\"verdict\" data-v=\"");
	usc__html_text(h, v);
	usc__html_printf(h, "\" class=\"v v-");
	usc__html_text(h, v);
	usc__html_printf(h, "\">");
	usc__html_text(h, v);
	usc__html_printf(h, "</span>");
}

static void output_part(usc__html *h, usc__h5_file *f, const char *g,
			const audit_output *o, uint64_t i)
{
	static const char *const names[2] = {"before", "after"};
	char ds[USC__RESULTS_PATH_SIZE + 64];
	uint64_t bins[2][USC__HIST_BINS], nans[2];
	bool have[2];

	usc__html_printf(h, "<div class=\"audit-output\" data-output=\"%llu\">"
			    "<h4>output %llu: ",
			 (unsigned long long)i, (unsigned long long)i);
	usc__html_text(h, o->shape);
	usc__html_printf(h, " ");
	verdict_span(h, o->verdict);
	usc__html_printf(h, "</h4><p class=\"msg\">");
	usc__html_text(h, o->reason);
	usc__html_printf(h, "</p><p>function: ");
	count_span(h, "changed", "fn_changed", o->u[6]);
	usc__html_printf(h, " of ");
	count_span(h, "", "count", o->u[0]);
	usc__html_printf(h, " elements (");
	count_span(h, "special", "fn_special", o->u[7]);
	usc__html_printf(h, "), by up to ");
	num_span(h, "fn_max_ulps", o->d[OD_FN_MAX]);
	usc__html_printf(h, " ulp<br>precision: ");
	count_span(h, "better", "better", o->u[1]);
	usc__html_printf(h, ", ");
	count_span(h, "worse", "worse", o->u[2]);
	usc__html_printf(h, ", ");
	count_span(h, "unchanged", "unchanged", o->u[3]);
	usc__html_printf(h, " (");
	count_span(h, "identical", "identical", o->u[4]);
	usc__html_printf(h, "), ");
	count_span(h, "undecided", "undecided", o->u[5]);
	usc__html_printf(h, "</p><table class=\"audit-figures\"><thead><tr>"
			    "<th>|ulp| of the reference</th><th>before</th>"
			    "<th>after</th></tr></thead><tbody>");
	row_num(h, "max", "max", o->d[OD_BMAX], o->d[OD_AMAX]);
	row_num(h, "p99", "p99", o->d[OD_BP99], o->d[OD_AP99]);
	row_num(h, "median", "median", o->d[OD_BMED], o->d[OD_AMED]);
	row_num(h, "NaN errors", "nan", (double)o->u[8], (double)o->u[9]);
	if (o->enveloped)
		row_num(h, "envelope width, median", "width_median", o->ed[0],
			o->ed[1]);
	usc__html_printf(h, "</tbody></table>");
	if (o->enveloped) {
		usc__html_printf(h, "<p>envelope: ");
		count_span(h, "known for", "env_known", o->eu[0]);
		usc__html_printf(h, " elements; ");
		count_span(h, "wider", "wider", o->eu[1]);
		usc__html_printf(h, ", ");
		count_span(h, "narrower", "narrower", o->eu[2]);
		usc__html_printf(h, "; AFTER's reference outside BEFORE's "
				    "envelope at ");
		count_span(h, "", "after_outside_before", o->eu[3]);
		usc__html_printf(h, "</p>");
	} else {
		usc__html_printf(h, "<p class=\"note\">No envelope: the audit "
				    "ran without a profile.</p>");
	}
	for (size_t s = 0; s < 2; s++) {
		usc__results_path(ds, sizeof ds, "%s/outputs/%llu/ulp_%s", g,
				  (unsigned long long)i, names[s]);
		have[s] = histogram_of(f, ds, bins[s], &nans[s]);
	}
	if (have[0] && have[1])
		usc__svg_histogram_of(h, names, bins[0], bins[1], nans[0],
				      nans[1], o->enveloped ? o->ed[0] / 2
							    : NAN);
	else
		usc__html_printf(h, "<p class=\"note\">No histogram: the "
				    "per-element errors (ulp_before, "
				    "ulp_after) are not in the file as "
				    "(samples, elements) float64.</p>");
	usc__html_printf(h, "</div>\n");
}

static void audit_section(usc__html *h, usc__h5_file *f, const char *g,
			  const char *name, size_t id, const audit *a)
{
	usc__html_printf(h, "<section class=\"audit\" id=\"a%zu\" "
			    "data-audit=\"",
			 id);
	usc__html_text(h, name);
	usc__html_printf(h, "\"><h3>");
	usc__html_text(h, name);
	usc__html_printf(h, " ");
	verdict_span(h, a->s[AS_VERDICT]);
	usc__html_printf(h, "</h3><p class=\"meta\">");
	usc__html_text(h, a->s[AS_BEFORE]);
	usc__html_printf(h, " (module ");
	usc__html_text(h, a->s[AS_BMOD]);
	usc__html_printf(h, ") &rarr; ");
	usc__html_text(h, a->s[AS_AFTER]);
	usc__html_printf(h, " (module ");
	usc__html_text(h, a->s[AS_AMOD]);
	usc__html_printf(h, "); profile <span data-k=\"profile\" data-v=\"");
	usc__html_text(h, a->s[AS_PROFILE]);
	usc__html_printf(h, "\">");
	usc__html_text(h, a->s[AS_PROFILE][0] ? a->s[AS_PROFILE] : "none");
	usc__html_printf(h, "</span>; ");
	count_span(h, "samples", "samples", a->samples);
	usc__html_printf(h, "; threshold ");
	num_span(h, "threshold", a->threshold);
	usc__html_printf(h, " ulp</p><p class=\"msg\">precision: ");
	usc__html_text(h, a->s[AS_REASON]);
	usc__html_printf(h, "<br>function: <span data-k=\"function_changed\" "
			    "data-v=\"%llu\">%s</span>",
			 (unsigned long long)a->function_changed,
			 a->function_changed ? "CHANGED" : "the same");
	usc__html_printf(h, ", by up to ");
	num_span(h, "function_max_ulps", a->function_max_ulps);
	usc__html_printf(h, " ulp</p>");
	if (a->s[AS_OPS_NOTE][0]) {
		usc__html_printf(h, "<p class=\"note\">");
		usc__html_text(h, a->s[AS_OPS_NOTE]);
		usc__html_printf(h, "</p>");
	}
	for (uint64_t i = 0; i < a->outputs; i++)
		output_part(h, f, g, &a->out[i], i);
	usc__html_printf(h, "</section>\n");
}

/* Whether group g has the string attribute name. */
static bool has_string(usc__h5_file *f, const char *g, const char *name)
{
	char *v = NULL;
	usc_error probe;
	bool yes = usc__h5_attr_get_string(f, g, name, &v, &probe) == USC_OK;

	usc__free(v);
	return yes;
}

usc_status usc__report_audit_group(usc__html *h, usc__h5_file *f,
				   const char *g, const char *name, size_t id,
				   usc_error *err)
{
	audit a;
	usc_status st;

	memset(&a, 0, sizeof(a));
	st = read_audit(f, g, &a, err);
	if (st == USC_OK)
		audit_section(h, f, g, name, id, &a);
	audit_free(&a);
	return st;
}

usc_status usc__report_audits(usc__html *h, usc_results_reader *r,
			      usc_error *err)
{
	usc__h5_file *f = usc__results_reader_file(r);
	char g[USC__RESULTS_PATH_SIZE + 16];
	char **names = NULL;
	size_t n = 0;
	bool exists = false;
	usc_status st;

	st = usc__h5_exists(f, "/audits", &exists, NULL, err);
	if (st != USC_OK || !exists)
		return st;
	st = usc__h5_group_list(f, "/audits", &names, &n, err);
	if (st != USC_OK)
		return st;
	usc__html_printf(h, "<h2 id=\"audits\">audits</h2>\n");
	for (size_t i = 0; i < n; i++) {
		usc_error why;
		usc_status ok;
		bool pipe;

		usc__results_path(g, sizeof g, "/audits/%s", names[i]);
		/* A pipeline's group has the "pipeline" attribute, a single
		 * audit's none (docs/audit.md); its descent takes the anchor
		 * after every group's. */
		pipe = has_string(f, g, "pipeline");
		ok = pipe ? usc__report_pipeline(h, f, g, names[i], i, n + i,
						 &why)
			  : usc__report_audit_group(h, f, g, names[i], i, &why);
		if (ok != USC_OK) {
			usc__html_printf(h, "<p class=\"note skipped\" "
					    "data-skipped=\"");
			usc__html_text(h, names[i]);
			usc__html_printf(h, "\">/audits/");
			usc__html_text(h, names[i]);
			usc__html_printf(h, ": skipped, not an audit of the "
					    "layout this report reads "
					    "(docs/results.md, "
					    "docs/audit.md): ");
			usc__html_text(h, why.message);
			usc__html_printf(h, "</p>\n");
		}
	}
	usc__h5_names_free(names, n);
	return USC_OK;
}
