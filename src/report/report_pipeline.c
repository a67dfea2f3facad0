/*
 * A pipeline's group under /audits in the report: the group "ulpscope
 * audit --pipeline --out" writes (docs/audit.md, "The result file").  The
 * page shows its attributes, the stage table, the per-pass precision plot
 * (max, p99 and median |ulp| of output 0 at each stage along the
 * pipeline) and the descent, which is a single audit's group and is drawn
 * as one (report_audits.c).  The stages' own audit groups are not drawn:
 * a pipeline has dozens of them, and the table carries their figures.
 *
 * A group whose attributes do not read is not a pipeline of this layout;
 * the caller says it skipped it.  A stage table that does not read is
 * named in an error line, and the rest of the group is still shown.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "report/report_internal.h"
#include "store/h5_door.h"
#include "store/results_internal.h"

/* The group's attributes (docs/audit.md). */
typedef struct pipeline {
	char *dir, *module, *biggest;
	uint64_t stage_count;
	double threshold;
	int64_t biggest_index, gate, gate_stage;
} pipeline;

static void pipeline_free(pipeline *p)
{
	usc__free(p->dir);
	usc__free(p->module);
	usc__free(p->biggest);
	memset(p, 0, sizeof(*p));
}

static usc_status read_pipeline(usc__h5_file *f, const char *g, pipeline *p,
				usc_error *err)
{
	usc_status st;

	st = usc__h5_attr_get_string(f, g, "pipeline", &p->dir, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, g, "module", &p->module, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "stage_count",
					   &p->stage_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(f, g, "threshold", &p->threshold,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, g, "biggest", &p->biggest,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(f, g, "biggest_index",
					  &p->biggest_index, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(f, g, "gate", &p->gate, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(f, g, "gate_stage", &p->gate_stage,
					  err);
	return st;
}

static void td_uint(usc__html *h, const char *key, uint64_t v)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"%llu\">%llu</td>",
			 key, (unsigned long long)v, (unsigned long long)v);
}

static void td_int(usc__html *h, const char *key, int64_t v)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"%lld\">%lld</td>",
			 key, (long long)v, (long long)v);
}

static void td_text(usc__html *h, const char *key, const char *v)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"", key);
	usc__html_text(h, v);
	usc__html_printf(h, "\">");
	usc__html_text(h, v);
	usc__html_printf(h, "</td>");
}

/* A figure of output 0; "-" for people where the stage was not run. */
static void td_num(usc__html *h, const char *key, double v, bool shown)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"", key);
	usc__html_num(h, v);
	usc__html_printf(h, "\">");
	if (shown)
		usc__html_num_short(h, v);
	else
		usc__html_printf(h, "&ndash;");
	usc__html_printf(h, "</td>");
}

static void stage_table(usc__html *h, const usc__stage_row *rows, size_t n)
{
	usc__html_printf(h, "<table class=\"stages\"><thead><tr><th>#</th>"
			    "<th>stage</th><th>pass</th><th>evaluated</th>"
			    "<th>same as</th><th>moved</th>"
			    "<th>function changed</th><th>max |ulp|</th>"
			    "<th>p99</th><th>median</th><th>NaN</th>"
			    "<th>gate</th><th>reason</th></tr></thead>"
			    "<tbody>");
	for (size_t i = 0; i < n; i++) {
		const usc__stage_row *r = &rows[i];
		bool shown = r->evaluated != 0;

		usc__html_printf(h, "<tr data-stage=\"%llu\">",
				 (unsigned long long)r->index);
		td_uint(h, "index", r->index);
		td_text(h, "label", r->label);
		td_text(h, "pass", r->pass);
		td_uint(h, "evaluated", r->evaluated);
		td_int(h, "same_as", r->same_as);
		td_uint(h, "moved", r->moved);
		td_uint(h, "function_changed", r->function_changed);
		td_num(h, "max", r->max, shown);
		td_num(h, "p99", r->p99, shown);
		td_num(h, "median", r->median, shown);
		td_uint(h, "nan", r->nan);
		td_int(h, "gate", r->gate);
		td_text(h, "gate_reason", r->gate_reason);
		usc__html_printf(h, "</tr>");
	}
	usc__html_printf(h, "</tbody></table>\n");
}

/* The plot's frame, in SVG user units. */
enum { PL_W = 640, PL_H = 200, PL_L = 44, PL_R = 12, PL_T = 10, PL_B = 24 };

/*
 * |ulp| on the plot's vertical axis: log10(1 + v), so an exact zero sits
 * on the axis and errors from a fraction of an ulp to millions share one
 * plot; an infinity or NaN is drawn at the top.
 */
static double plot_scale(double v)
{
	if (!isfinite(v))
		return NAN;
	return log10(1 + fabs(v));
}

static void precision_plot(usc__html *h, const usc__stage_row *rows,
			   size_t n)
{
	static const char *const series[3] = {"max", "p99", "median"};
	static const char *const colors[3] = {"#d62728", "#e08a1e",
					      "#3b6fb6"};
	double top = 1, plot_w = PL_W - PL_L - PL_R;
	double plot_h = PL_H - PL_T - PL_B;
	size_t shown = 0;

	for (size_t i = 0; i < n; i++) {
		double v[3] = {rows[i].max, rows[i].p99, rows[i].median};

		if (!rows[i].evaluated)
			continue;
		shown++;
		for (size_t s = 0; s < 3; s++)
			if (plot_scale(v[s]) > top)
				top = plot_scale(v[s]);
	}
	if (!shown) {
		usc__html_printf(h, "<p class=\"note\">No precision plot: no "
				    "stage was evaluated.</p>\n");
		return;
	}
	top = ceil(top);
	usc__html_printf(h,
			 "<svg class=\"passes\" viewBox=\"0 0 %d %d\" "
			 "width=\"%d\" height=\"%d\" role=\"img\">"
			 "<title>max, p99 and median |ulp| of output 0 per "
			 "stage, log scale</title>",
			 PL_W, PL_H, PL_W, PL_H);
	/* The |ulp| axis: 0, 9, 99, ... (log10(1 + v) at whole numbers). */
	for (int p = 0; p <= (int)top; p++) {
		double y = PL_T + plot_h - plot_h * p / top;

		usc__html_printf(h,
				 "<line class=\"ax\" x1=\"%d\" x2=\"%d\" "
				 "y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" "
				 "y=\"%.1f\" class=\"tl\">%.0f</text>",
				 PL_L, PL_W - PL_R, y, y, PL_L - 3, y + 3,
				 pow(10, p) - 1);
	}
	for (size_t s = 0; s < 3; s++) {
		bool first = true;

		usc__html_printf(h, "<polyline fill=\"none\" stroke=\"%s\" "
				    "data-series=\"%s\" points=\"",
				 colors[s], series[s]);
		for (size_t i = 0; i < n; i++) {
			double v[3] = {rows[i].max, rows[i].p99,
				       rows[i].median};
			double y = plot_scale(v[s]);
			double x = PL_L + plot_w * ((double)i + 0.5) /
						  (double)n;

			if (!rows[i].evaluated)
				continue;
			y = isnan(y) ? top : y;
			usc__html_printf(h, "%s%.1f,%.1f", first ? "" : " ", x,
					 PL_T + plot_h - plot_h * y / top);
			first = false;
		}
		usc__html_printf(h, "\"/>");
	}
	for (size_t i = 0; i < n; i++) {
		double x = PL_L + plot_w * ((double)i + 0.5) / (double)n;
		double v[3] = {rows[i].max, rows[i].p99, rows[i].median};

		if (!rows[i].evaluated)
			continue;
		for (size_t s = 0; s < 3; s++) {
			double y = plot_scale(v[s]);

			y = isnan(y) ? top : y;
			usc__html_printf(h,
					 "<circle r=\"2.5\" fill=\"%s\" "
					 "cx=\"%.1f\" cy=\"%.1f\" "
					 "data-stage=\"%llu\" "
					 "data-series=\"%s\" data-v=\"",
					 colors[s], x,
					 PL_T + plot_h - plot_h * y / top,
					 (unsigned long long)rows[i].index,
					 series[s]);
			usc__html_num(h, v[s]);
			usc__html_printf(h, "\"><title>stage %llu, %s: ",
					 (unsigned long long)rows[i].index,
					 series[s]);
			usc__html_num_short(h, v[s]);
			usc__html_printf(h, "</title></circle>");
		}
		if (n <= 40 || i % ((n + 39) / 40) == 0)
			usc__html_printf(h, "<text x=\"%.1f\" y=\"%d\" "
					    "class=\"tb\">%zu</text>",
					 x, PL_H - 8, i);
	}
	usc__html_printf(h, "</svg>\n<p class=\"note\">Per stage along the "
			    "pipeline: <span style=\"color:%s\">max</span>, "
			    "<span style=\"color:%s\">p99</span> and "
			    "<span style=\"color:%s\">median</span> |ulp| of "
			    "output 0 against the input's oracle; stages not "
			    "evaluated are left out.</p>\n",
			 colors[0], colors[1], colors[2]);
}

usc_status usc__report_pipeline(usc__html *h, usc__h5_file *f, const char *g,
				const char *name, size_t id, size_t descent_id,
				usc_error *err)
{
	char ds[USC__RESULTS_PATH_SIZE + 32];
	char dname[USC__RESULTS_PATH_SIZE + 32];
	usc__stage_row *rows = NULL;
	size_t n = 0;
	pipeline p;
	usc_error why;
	bool has_descent = false;
	usc_status st;

	memset(&p, 0, sizeof(p));
	st = read_pipeline(f, g, &p, err);
	if (st != USC_OK) {
		pipeline_free(&p);
		return st;
	}
	usc__html_printf(h, "<section class=\"pipeline\" id=\"a%zu\" "
			    "data-pipeline=\"",
			 id);
	usc__html_text(h, name);
	usc__html_printf(h, "\"><h3>pipeline ");
	usc__html_text(h, name);
	usc__html_printf(h, "</h3><p class=\"meta\">dumps ");
	usc__html_text(h, p.dir);
	usc__html_printf(h, "; module <span data-k=\"module\" data-v=\"");
	usc__html_text(h, p.module);
	usc__html_printf(h, "\">");
	usc__html_text(h, p.module);
	usc__html_printf(h, "</span>; <span data-k=\"stage_count\" "
			    "data-v=\"%llu\">%llu</span> stages; threshold "
			    "<span data-k=\"threshold\" data-v=\"",
			 (unsigned long long)p.stage_count,
			 (unsigned long long)p.stage_count);
	usc__html_num(h, p.threshold);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, p.threshold);
	usc__html_printf(h, "</span> ulp</p><p>gate <span data-k=\"gate\" "
			    "data-v=\"%lld\">%lld</span>",
			 (long long)p.gate, (long long)p.gate);
	if (p.gate)
		usc__html_printf(h, ", first at stage <span "
				    "data-k=\"gate_stage\" data-v=\"%lld\">"
				    "%lld</span>",
				 (long long)p.gate_stage,
				 (long long)p.gate_stage);
	usc__html_printf(h, "; the pass that moved max |ulp| the most: "
			    "<span data-k=\"biggest\" data-v=\"");
	usc__html_text(h, p.biggest);
	usc__html_printf(h, "\" data-index=\"%lld\">",
			 (long long)p.biggest_index);
	usc__html_text(h, p.biggest[0] ? p.biggest : "none moved");
	usc__html_printf(h, "</span></p>\n");

	usc__results_path(ds, sizeof ds, "%s/stages", g);
	if (usc__audit_stages_read(f, ds, &rows, &n, &why) == USC_OK) {
		stage_table(h, rows, n);
		precision_plot(h, rows, n);
	} else {
		usc__html_printf(h, "<p class=\"error\" data-error=\"stages\">"
				    "The stage table could not be read: ");
		usc__html_text(h, why.message);
		usc__html_printf(h, "</p>\n");
	}
	usc__audit_stages_free(rows, n);

	usc__results_path(ds, sizeof ds, "%s/descent", g);
	if (usc__h5_exists(f, ds, &has_descent, NULL, &why) != USC_OK)
		has_descent = false;
	if (has_descent) {
		usc__results_path(dname, sizeof dname, "%s/descent", name);
		usc__html_printf(h, "<h4>the descent: the biggest move against "
				    "its predecessor</h4>\n");
		if (usc__report_audit_group(h, f, ds, dname, descent_id,
					    &why) != USC_OK) {
			usc__html_printf(h, "<p class=\"error\" "
					    "data-error=\"descent\">The "
					    "descent could not be read: ");
			usc__html_text(h, why.message);
			usc__html_printf(h, "</p>\n");
		}
	} else {
		usc__html_printf(h, "<p class=\"note\">No descent: no pass "
				    "moved the figures.</p>\n");
	}
	usc__html_printf(h, "</section>\n");
	pipeline_free(&p);
	return USC_OK;
}
