/*
 * One kernel's section of the report: its attributes, then per output the
 * figures, the |ulp| histograms, the heat map and class map, the worst
 * elements; then the op error budget, the HLO listing shaded by each op's
 * share of the error, and the defect signatures.  Each part appears when
 * the file holds what it needs (a class map needs a classified output, a
 * budget an attribution).  One output's arrays are in memory at a time.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"
#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
#include "ulpscope/tensor.h"

/*
 * How much a class matters in a map cell standing for many elements and
 * in the order of the worst elements, mildest first (docs/report.md):
 * the cell shows its block's worst class.
 */
static const uint8_t class_severity[USC_CLASS_COUNT] = {
	[USC_CLASS_EXACT] = 0,	      [USC_CLASS_ROUNDING] = 1,
	[USC_CLASS_ENVELOPE] = 2,     [USC_CLASS_UNDECIDED] = 3,
	[USC_CLASS_SUSPICIOUS] = 4,   [USC_CLASS_SIGN_MISMATCH] = 5,
	[USC_CLASS_INF_MISMATCH] = 6, [USC_CLASS_NAN_MISMATCH] = 7,
	[USC_CLASS_DEFECT] = 8,
};

static uint8_t severity(uint8_t cls)
{
	return cls < USC_CLASS_COUNT ? class_severity[cls] : 0;
}

/* A data cell: the exact figure in data-v, a short one shown. */
static void num_cell(usc__html *h, const char *key, double x)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"", key);
	usc__html_num(h, x);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, x);
	usc__html_printf(h, "</td>");
}

static void count_cell(usc__html *h, const char *key, uint64_t n)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"%llu\">%llu</td>", key,
			 (unsigned long long)n, (unsigned long long)n);
}

/* The 2-D view of a shape: rows are every dimension but the last. */
static void view_2d(const usc_tensor *t, size_t *rows, size_t *cols)
{
	size_t rank = usc_tensor_rank(t);
	const int64_t *d = usc_tensor_dims(t);
	size_t r = 1;

	for (size_t i = 0; i + 1 < rank; i++)
		r *= (size_t)d[i];
	*rows = r;
	*cols = rank ? (size_t)d[rank - 1] : 1;
}

/*
 * The heat map (level of the largest |ulp| against the oracle in the
 * block, NaN only where every element is NaN) and the class map (the
 * block's worst class) of one output.
 */
static usc_status maps(usc__html *h, const usc_results_output_data *o,
		       const usc_report_options *opt, usc_error *err)
{
	size_t rows, cols, gr, gc, br, bc;
	uint8_t *heat, *cls = NULL;

	view_2d(o->device, &rows, &cols);
	if (rows == 0 || cols == 0)
		return USC_OK;
	br = (rows + opt->grid - 1) / opt->grid;
	bc = (cols + opt->grid - 1) / opt->grid;
	gr = (rows + br - 1) / br;
	gc = (cols + bc - 1) / bc;
	heat = usc__malloc(gr * gc);
	if (o->cls)
		cls = usc__calloc(gr * gc, 1);
	if (!heat || (o->cls && !cls)) {
		usc__free(heat);
		usc__free(cls);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	memset(heat, UINT8_MAX, gr * gc);
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++) {
			size_t k = r * cols + c, cell = (r / br) * gc + c / bc;
			uint8_t lv = usc__heat_level(o->ulp_error_oracle[k]);

			if (heat[cell] == UINT8_MAX ||
			    (heat[cell] == USC__HEAT_NAN && lv != USC__HEAT_NAN) ||
			    (lv != USC__HEAT_NAN && lv > heat[cell]))
				heat[cell] = lv;
			if (cls && severity(o->cls[k]) > severity(cls[cell]))
				cls[cell] = o->cls[k];
		}
	usc__html_printf(h, "<div class=\"maps\"><figure><figcaption>|ulp| "
			    "against the oracle</figcaption>");
	usc__svg_grid(h, "heat", heat, gr, gc, br, bc, USC__HEAT_LEVELS, "h");
	usc__html_printf(h, "</figure>");
	if (cls) {
		usc__html_printf(h, "<figure><figcaption>class</figcaption>");
		usc__svg_grid(h, "class", cls, gr, gc, br, bc, USC_CLASS_COUNT,
			      "c");
		usc__html_printf(h, "</figure>");
	}
	usc__html_printf(h, "</div>");
	usc__free(heat);
	usc__free(cls);
	return USC_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The envelope's median half-width in ulps of the output at the oracle's
 * midpoint, over the elements whose envelope has finite bounds; NaN when
 * none has.  At most 65536 evenly spaced elements are looked at, so that
 * a 16M-element output costs no sort of its own.
 */
static double envelope_halfwidth(const usc_results_output_data *o)
{
	enum { SAMPLE = 65536 };
	uint64_t step = o->count / SAMPLE + 1;
	double *v = usc__malloc(sizeof(double) * SAMPLE);
	size_t n = 0;
	double m = NAN;

	if (!v || !o->envelope_lo)
		goto done;
	for (uint64_t k = 0; k < o->count && n < SAMPLE; k += step) {
		double lo = o->envelope_lo[k], hi = o->envelope_hi[k], u;

		if (!isfinite(lo) || !isfinite(hi) ||
		    !isfinite(o->oracle_mid[k]) ||
		    usc_ulp_double(o->dtype, o->oracle_mid[k], &u) != USC_OK ||
		    !(u > 0))
			continue;
		v[n++] = (hi - lo) / 2 / u;
	}
	if (n) {
		/* A lower median, as the file's statistics take it. */
		qsort(v, n, sizeof *v, cmp_double);
		m = v[(n + 1) / 2 - 1];
	}
done:
	usc__free(v);
	return m;
}

/* Whether element a is worse than b (docs/report.md, "Worst elements"). */
static bool worse(const usc_results_output_data *o, uint64_t a, uint64_t b)
{
	double ea = fabs(o->ulp_error_oracle[a]), eb = fabs(o->ulp_error_oracle[b]);

	if (o->cls && severity(o->cls[a]) != severity(o->cls[b]))
		return severity(o->cls[a]) > severity(o->cls[b]);
	if (isnan(ea))
		ea = INFINITY;
	if (isnan(eb))
		eb = INFINITY;
	return ea > eb;
}

static void multi_index(usc__html *h, const usc_tensor *t, uint64_t k)
{
	size_t rank = usc_tensor_rank(t);
	const int64_t *d = usc_tensor_dims(t);
	uint64_t idx[USC_TENSOR_MAX_RANK];

	for (size_t i = rank; i-- > 0;) {
		idx[i] = k % (uint64_t)d[i];
		k /= (uint64_t)d[i];
	}
	for (size_t i = 0; i < rank; i++)
		usc__html_printf(h, "%s%llu", i ? "," : "",
				 (unsigned long long)idx[i]);
}

static void value_cell(usc__html *h, const char *key, const usc_tensor *t,
		       uint64_t k)
{
	double v = NAN;

	(void)usc_tensor_get_double(t, k, &v);
	num_cell(h, key, v);
}

/* The worst elements of one output, with their top contributing ops. */
static usc_status worst_elements(usc__html *h, const usc_results_kernel_info *ki,
				 const usc_results_output_data *o, size_t out_i,
				 const usc_report_options *opt, usc_error *err)
{
	size_t kmax = opt->worst < o->count ? opt->worst : (size_t)o->count;
	uint64_t *top;
	size_t n = 0;

	if (kmax == 0)
		return USC_OK;
	top = usc__malloc(kmax * sizeof *top);
	if (!top)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	/* An insertion into a sorted list of kmax: kmax is small. */
	for (uint64_t k = 0; k < o->count; k++) {
		size_t j;

		if (n == kmax && !worse(o, k, top[n - 1]))
			continue;
		j = n < kmax ? n++ : n - 1;
		while (j > 0 && worse(o, k, top[j - 1])) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = k;
	}
	usc__html_printf(h,
			 "<table class=\"worst sortable\"><caption>worst "
			 "elements</caption><thead><tr><th>flat</th>"
			 "<th>index</th><th>device</th><th>reference</th>"
			 "<th>oracle</th><th>|ulp| oracle</th><th>ulp "
			 "oracle</th><th>ulp reference</th>%s%s</tr></thead>"
			 "<tbody>",
			 o->cls ? "<th>class</th><th>envelope</th>" : "",
			 o->top_k ? "<th>top ops (contribution, ulp)</th>" : "");
	for (size_t i = 0; i < n; i++) {
		uint64_t k = top[i];

		usc__html_printf(h, "<tr data-flat=\"%llu\"><td>%llu</td><td>",
				 (unsigned long long)k, (unsigned long long)k);
		multi_index(h, o->device, k);
		usc__html_printf(h, "</td>");
		value_cell(h, "device", o->device, k);
		value_cell(h, "reference", o->reference, k);
		num_cell(h, "oracle_mid", o->oracle_mid[k]);
		num_cell(h, "abs_ulp_oracle", fabs(o->ulp_error_oracle[k]));
		num_cell(h, "ulp_error_oracle", o->ulp_error_oracle[k]);
		num_cell(h, "ulp_error_reference", o->ulp_error_reference[k]);
		if (o->cls) {
			uint8_t c = o->cls[k];

			usc__html_printf(h, "<td data-k=\"class\" data-v=\"%u\" "
					    "class=\"c%u\">%s</td><td>[",
					 c, c,
					 c < USC_CLASS_COUNT
						 ? usc_class_name((usc_class)c)
						 : "?");
			usc__html_num_short(h, o->envelope_lo[k]);
			usc__html_printf(h, ", ");
			usc__html_num_short(h, o->envelope_hi[k]);
			usc__html_printf(h, "]</td>");
		}
		if (o->top_k) {
			usc__html_printf(h, "<td class=\"tops\">");
			for (size_t j = 0; j < o->top_k; j++) {
				uint32_t op = o->top_ops[k * o->top_k + j];
				const usc_results_attr_op *a;

				if (op == USC_RESULTS_NO_OP || !ki->attribution ||
				    op >= ki->attribution->op_count)
					continue;
				a = &ki->attribution->ops[op];
				usc__html_printf(h, "%s", j ? "<br>" : "");
				usc__html_text(h, a->op.name);
				if (a->op.source_file[0]) {
					usc__html_printf(h, " <span class=\"src\">");
					usc__html_text(h, a->op.source_file);
					usc__html_printf(h, ":%lld</span>",
							 (long long)a->op.source_line);
				}
				usc__html_printf(h, " ");
				usc__html_num_short(h, o->top_contrib[k * o->top_k + j]);
			}
			usc__html_printf(h, "</td>");
		}
		usc__html_printf(h, "</tr>");
	}
	usc__html_printf(h, "</tbody></table>");
	/* Explain trees are not stored: computed when asked and the case is
	 * at hand, else the command that makes one. */
	if (n && opt->explain) {
		usc__report_explain(h, ki, out_i, top, n, opt);
	} else if (n) {
		usc__html_printf(h, "<p class=\"note\">The computation tree of "
				    "an element: <code>ulpscope explain "
				    "RESULTS.h5 --kernel ");
		usc__html_text(h, ki->name);
		usc__html_printf(h, " --output %zu --flat --element %llu "
				    "--input ...</code> (docs/explain.md).</p>",
				 out_i, (unsigned long long)top[0]);
	}
	usc__free(top);
	return USC_OK;
}

static const char *const stat_keys[2][3] = {
	{"max_abs_ulp_reference", "median_abs_ulp_reference",
	 "p99_abs_ulp_reference"},
	{"max_abs_ulp_oracle", "median_abs_ulp_oracle", "p99_abs_ulp_oracle"},
};

/* One output: figures, histogram, maps, worst elements. */
static usc_status output_part(usc__html *h, usc_results_reader *r,
			      const usc_results_kernel_info *ki, size_t i,
			      const usc_report_options *opt, usc_error *err)
{
	usc_results_output_data *o = NULL;
	uint64_t bins[2][USC__HIST_BINS] = {{0}}, nans[2] = {0, 0};
	uint64_t classes[USC_CLASS_COUNT] = {0};
	usc_status st;
	char shape[128];
	usc_tensor_spec spec;

	st = usc_results_read_output(r, ki->name, i, &o, err);
	if (st != USC_OK)
		return st;
	spec = usc_tensor_spec_of(o->device);
	usc_tensor_spec_format(&spec, shape, sizeof shape);
	for (uint64_t k = 0; k < o->count; k++) {
		double e[2] = {o->ulp_error_reference[k], o->ulp_error_oracle[k]};

		for (size_t s = 0; s < 2; s++) {
			if (isnan(e[s]))
				nans[s]++;
			else
				bins[s][usc__hist_bin(e[s])]++;
		}
		if (o->cls && o->cls[k] < USC_CLASS_COUNT)
			classes[o->cls[k]]++;
	}
	usc__html_printf(h, "<div class=\"output\" data-output=\"%zu\">"
			    "<h3>output %zu: ",
			 i, i);
	usc__html_text(h, shape);
	usc__html_printf(h, "</h3><table class=\"figures\"><thead><tr><th>"
			    "against</th><th>max |ulp|</th><th>median</th>"
			    "<th>p99</th><th>NaN</th></tr></thead><tbody>");
	for (size_t s = 0; s < 2; s++) {
		const usc_results_stats *x =
			s ? &o->summary.oracle : &o->summary.reference;

		usc__html_printf(h, "<tr><th>%s</th>", s ? "oracle" : "reference");
		num_cell(h, stat_keys[s][0], x->max_abs);
		num_cell(h, stat_keys[s][1], x->median_abs);
		num_cell(h, stat_keys[s][2], x->p99_abs);
		count_cell(h, s ? "nan_count_ulp_oracle"
				: "nan_count_ulp_reference",
			   x->nan_count);
		usc__html_printf(h, "</tr>");
	}
	usc__html_printf(h, "</tbody></table><table class=\"figures\"><tr>"
			    "<th>elements</th><th>bit-exact</th><th>undecided"
			    "</th>");
	if (o->cls)
		for (size_t c = 0; c < USC_CLASS_COUNT; c++)
			usc__html_printf(h, "<th class=\"c%zu\">%s</th>", c,
					 usc_class_name((usc_class)c));
	usc__html_printf(h, "</tr><tr>");
	count_cell(h, "count", o->count);
	count_cell(h, "bit_exact_count", o->summary.bit_exact_count);
	count_cell(h, "undecided_count", o->summary.undecided_count);
	if (o->cls)
		for (size_t c = 0; c < USC_CLASS_COUNT; c++) {
			char key[48];

			snprintf(key, sizeof key, "class_count_%s",
				 usc_class_name((usc_class)c));
			count_cell(h, key, classes[c]);
		}
	usc__html_printf(h, "</tr></table>");
	usc__svg_histogram(h, bins[0], bins[1], nans[0], nans[1],
			   envelope_halfwidth(o));
	st = maps(h, o, opt, err);
	if (st == USC_OK)
		st = worst_elements(h, ki, o, i, opt, err);
	usc__html_printf(h, "</div>");
	usc_results_output_data_free(o);
	return st;
}

static int by_share_desc(const void *a, const void *b)
{
	const usc_results_attr_op *x = *(const usc_results_attr_op *const *)a;
	const usc_results_attr_op *y = *(const usc_results_attr_op *const *)b;
	double sx = isnan(x->share) ? -1 : x->share;
	double sy = isnan(y->share) ? -1 : y->share;

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return x->op.index < y->op.index ? -1 : x->op.index > y->op.index;
}

/* The op error budget: every op with a share, largest first. */
static usc_status budget(usc__html *h, const usc_results_attribution *a,
			 usc_error *err)
{
	const usc_results_attr_op **v;

	v = usc__calloc(a->op_count ? a->op_count : 1, sizeof *v);
	if (!v)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < a->op_count; i++)
		v[i] = &a->ops[i];
	qsort(v, a->op_count, sizeof *v, by_share_desc);
	usc__html_printf(h, "<h3>op error budget</h3><table class=\"budget "
			    "sortable\"><thead><tr><th>op</th><th>opcode</th>"
			    "<th>source</th><th>share</th><th></th>"
			    "<th>mean |contrib|</th><th>max |contrib|</th>"
			    "</tr></thead><tbody>");
	for (size_t i = 0; i < a->op_count; i++) {
		usc__html_printf(h, "<tr data-op=\"");
		usc__html_text(h, v[i]->op.name);
		usc__html_printf(h, "\"><td>");
		usc__html_text(h, v[i]->op.name);
		usc__html_printf(h, "</td><td>");
		usc__html_text(h, v[i]->op.opcode);
		usc__html_printf(h, "</td><td class=\"src\">");
		if (v[i]->op.source_file[0]) {
			usc__html_text(h, v[i]->op.source_file);
			usc__html_printf(h, ":%lld", (long long)v[i]->op.source_line);
		}
		usc__html_printf(h, "</td>");
		num_cell(h, "share", v[i]->share);
		usc__html_printf(h, "<td>");
		usc__svg_bar(h, v[i]->share);
		usc__html_printf(h, "</td>");
		num_cell(h, "mean_abs", v[i]->mean_abs);
		num_cell(h, "max_abs", v[i]->max_abs);
		usc__html_printf(h, "</tr>");
	}
	usc__html_printf(h, "<tr data-op=\"(residual)\"><td>(interaction "
			    "residual)</td><td></td><td></td>");
	num_cell(h, "share", a->residual_share);
	usc__html_printf(h, "<td>");
	usc__svg_bar(h, a->residual_share);
	usc__html_printf(h, "</td>");
	num_cell(h, "mean_abs", a->residual_mean_abs);
	num_cell(h, "max_abs", a->residual_max_abs);
	usc__html_printf(h, "</tr></tbody></table>");
	usc__free(v);
	return USC_OK;
}

/*
 * The attribution's share of the instruction a line of HLO defines
 * ("%name = ..." or "ROOT name = ..."), or NaN.  A reduce body's ops
 * are one row named "a+b": each of its names gets the row's share.
 */
static double line_share(const char *s, size_t n,
			 const usc_results_attribution *a)
{
	size_t i = 0, b, e;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (n - i >= 5 && memcmp(s + i, "ROOT ", 5) == 0)
		i += 5;
	if (i < n && s[i] == '%')
		i++;
	b = i;
	while (i < n && s[i] != ' ' && s[i] != '=' && s[i] != '\t')
		i++;
	e = i;
	while (i < n && s[i] == ' ')
		i++;
	if (e == b || i >= n || s[i] != '=')
		return NAN;
	for (size_t k = 0; k < a->op_count; k++) {
		const char *p = a->ops[k].op.name;

		while (*p) {
			size_t l = strcspn(p, "+");

			if (l == e - b && memcmp(p, s + b, l) == 0)
				return a->ops[k].share;
			p += l + (p[l] == '+');
		}
	}
	return NAN;
}

/* The HLO listing, each op's line shaded by its share of the error. */
static void hlo_listing(usc__html *h, const usc_results_kernel_info *ki,
			const usc_report_options *opt)
{
	const char *s = ki->hlo_text, *end = s + ki->hlo_text_len;
	size_t lines = 0;

	if (!ki->hlo_text_len)
		return;
	usc__html_printf(h, "<details class=\"hlo\"%s><summary>HLO%s"
			    "</summary><pre>",
			 ki->attribution ? " open" : "",
			 ki->attribution ? ", each op shaded by its share of "
					   "the error"
					 : "");
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		double share = ki->attribution
				       ? line_share(s, n, ki->attribution)
				       : NAN;

		if (lines++ == opt->hlo_lines) {
			usc__html_printf(h, "<span class=\"note\">... (cut "
					    "after %zu lines)</span>\n",
					 opt->hlo_lines);
			break;
		}
		if (!isnan(share) && share > 0) {
			usc__html_printf(h, "<span class=\"op\" data-share=\"");
			usc__html_num(h, share);
			usc__html_printf(h, "\" style=\"background:rgba(214,39,"
					    "40,%.3f)\">",
					 share > 1 ? 0.85 : 0.05 + 0.8 * share);
			usc__html_textn(h, s, n);
			usc__html_printf(h, "</span>\n");
		} else {
			usc__html_textn(h, s, n);
			usc__html_printf(h, "\n");
		}
		s += n + (nl != NULL);
	}
	usc__html_printf(h, "</pre></details>");
}

usc_status usc__report_kernel(usc__html *h, usc_results_reader *r,
			      const char *results_path, const char *kernel,
			      size_t id, const usc_report_options *o,
			      usc_error *err)
{
	usc_results_kernel_info *ki = NULL;
	usc_status st;

	(void)results_path;
	st = usc_results_read_kernel(r, kernel, &ki, err);
	if (st != USC_OK)
		return st;
	usc__html_printf(h, "<section class=\"kernel\" id=\"k%zu\" "
			    "data-kernel=\"",
			 id);
	usc__html_text(h, ki->name);
	usc__html_printf(h, "\"><h2>");
	usc__html_text(h, ki->name);
	usc__html_printf(h, " <span class=\"v v-");
	usc__html_text(h, ki->verdict[0] ? ki->verdict : "none");
	usc__html_printf(h, "\">");
	usc__html_text(h, ki->verdict[0] ? ki->verdict : "not classified");
	usc__html_printf(h, "</span></h2><p class=\"meta\">");
	if (ki->verdict_reason[0]) {
		usc__html_text(h, ki->verdict_reason);
		usc__html_printf(h, "<br>");
	}
	usc__html_printf(h, "profile <b>");
	usc__html_text(h, ki->profile[0] ? ki->profile : "(none)");
	usc__html_printf(h, "</b>, %llu elements in %zu output%s, ",
			 (unsigned long long)ki->element_count,
			 ki->output_count, ki->output_count == 1 ? "" : "s");
	/* 0 bits: no element needed MPFR, the f64 tier decided them all. */
	if (ki->oracle_precision_max > 0)
		usc__html_printf(h, "oracle up to %lld bits",
				 (long long)ki->oracle_precision_max);
	else
		usc__html_printf(h, "every element decided by the f64 tier");
	usc__html_printf(h, ", from <code>");
	usc__html_text(h, ki->hlo_file);
	usc__html_printf(h, "</code>");
	if (ki->fusion[0]) {
		usc__html_printf(h, ", fusion <code>");
		usc__html_text(h, ki->fusion);
		usc__html_printf(h, "</code>");
	}
	usc__html_printf(h, "</p>");
	for (size_t i = 0; st == USC_OK && i < ki->output_count; i++)
		st = output_part(h, r, ki, i, o, err);
	if (st == USC_OK && ki->attribution)
		st = budget(h, ki->attribution, err);
	if (st == USC_OK)
		hlo_listing(h, ki, o);
	if (st == USC_OK)
		st = usc__report_signatures(h, r, ki->name, err);
	usc__html_printf(h, "</section>\n");
	usc_results_kernel_info_free(ki);
	return st;
}
