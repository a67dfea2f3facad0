/*
 * usc_report_write: the HTML report of a result file (docs/report.md).
 *
 * The page is written to "OUT.tmp.PID" and renamed over OUT once it is
 * complete and flushed, so OUT is always either what was there before or
 * a whole report.  The result file is read through the result reader
 * (and, for a batch index, usc_batch_read and usc_batch_rank); a batch
 * index is told from a plain result file by its /batch table.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report_internal.h"
#include "store/h5_door.h"
#include "store/results_internal.h"
#include "ulpscope/batch.h"

usc_report_options usc_report_options_default(void)
{
	usc_report_options o = {
		.detail_max = 50, .worst = 10, .grid = 64, .hlo_lines = 2000};

	return o;
}

/* A verdict's place in the order of interest: defects first. */
static int verdict_rank(const char *v)
{
	static const char *const order[] = {"defect", "suspicious",
					    "undecided", "legit"};

	for (int i = 0; i < 4; i++)
		if (strcmp(v, order[i]) == 0)
			return i;
	return 4;
}

static void kernel_link(usc__html *h, const char *name, size_t id,
			bool detailed)
{
	if (detailed)
		usc__html_printf(h, "<a href=\"#k%zu\">", id);
	usc__html_text(h, name);
	if (detailed)
		usc__html_printf(h, "</a>");
}

static void num_td(usc__html *h, const char *key, double x)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"", key);
	usc__html_num(h, x);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, x);
	usc__html_printf(h, "</td>");
}

static void count_td(usc__html *h, const char *key, uint64_t n)
{
	usc__html_printf(h, "<td data-k=\"%s\" data-v=\"%llu\">%llu</td>", key,
			 (unsigned long long)n, (unsigned long long)n);
}

static void verdict_td(usc__html *h, const char *v)
{
	usc__html_printf(h, "<td data-k=\"verdict\" data-v=\"");
	usc__html_text(h, v);
	usc__html_printf(h, "\"><span class=\"v v-");
	usc__html_text(h, v[0] ? v : "none");
	usc__html_printf(h, "\">");
	usc__html_text(h, v[0] ? v : "none");
	usc__html_printf(h, "</span></td>");
}

/* The table of how many kernels (or cases) got each verdict. */
static void verdict_counts(usc__html *h, const size_t *counts, size_t failed,
			   bool batch)
{
	static const char *const names[] = {"legit", "suspicious", "defect",
					    "undecided", "none"};

	usc__html_printf(h, "<table id=\"verdicts\"><thead><tr>");
	for (size_t i = 0; i < 5; i++)
		usc__html_printf(h, "<th>%s</th>",
				 i == 4 ? "not classified" : names[i]);
	if (batch)
		usc__html_printf(h, "<th>failed</th>");
	usc__html_printf(h, "</tr></thead><tbody><tr>");
	for (size_t i = 0; i < 5; i++) {
		char key[32];

		snprintf(key, sizeof key, "verdict_%s", names[i]);
		count_td(h, key, counts[i]);
	}
	if (batch)
		count_td(h, "failed", failed);
	usc__html_printf(h, "</tr></tbody></table>\n");
}

static size_t verdict_slot(const char *v)
{
	static const char *const names[] = {"legit", "suspicious", "defect",
					    "undecided"};

	for (size_t i = 0; i < 4; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	return 4;
}

static const char *const class_keys[USC_CLASS_COUNT] = {
	"class_count_exact",	    "class_count_rounding",
	"class_count_envelope",	    "class_count_suspicious",
	"class_count_defect",	    "class_count_nan-mismatch",
	"class_count_inf-mismatch", "class_count_sign-mismatch",
	"class_count_undecided"};

static void class_headers(usc__html *h)
{
	for (size_t c = 0; c < USC_CLASS_COUNT; c++)
		usc__html_printf(h, "<th class=\"c%zu\">%s</th>", c,
				 usc_class_name((usc_class)c));
}

/* ------------------------------------------------------------------ */
/* A plain result file                                                 */

/* One kernel's summary row, read from its outputs. */
static usc_status summary_row(usc__html *h, usc_results_reader *r,
			      const char *name, size_t id, bool detailed,
			      size_t *verdicts, usc_error *err)
{
	usc_results_kernel_info *ki = NULL;
	uint64_t classes[USC_CLASS_COUNT] = {0};
	double max_ref = NAN, max_or = NAN, worst = -1;
	size_t worst_out = 0;
	uint64_t worst_k = 0;
	bool classified = false;
	usc_status st;

	st = usc_results_read_kernel(r, name, &ki, err);
	for (size_t i = 0; st == USC_OK && i < ki->output_count; i++) {
		usc_results_output_data *o = NULL;

		st = usc_results_read_output(r, name, i, &o, err);
		if (st != USC_OK)
			break;
		if (!isnan(o->summary.reference.max_abs) &&
		    !(o->summary.reference.max_abs <= max_ref))
			max_ref = o->summary.reference.max_abs;
		if (!isnan(o->summary.oracle.max_abs) &&
		    !(o->summary.oracle.max_abs <= max_or))
			max_or = o->summary.oracle.max_abs;
		for (uint64_t k = 0; k < o->count; k++) {
			double a = fabs(o->ulp_error_oracle[k]);

			if (a > worst)
				worst = a, worst_out = i, worst_k = k;
			if (o->cls && o->cls[k] < USC_CLASS_COUNT)
				classes[o->cls[k]]++;
		}
		classified = classified || o->cls != NULL;
		usc_results_output_data_free(o);
	}
	if (st != USC_OK) {
		usc_results_kernel_info_free(ki);
		return st;
	}
	verdicts[verdict_slot(ki->verdict)]++;
	usc__html_printf(h, "<tr data-kernel=\"");
	usc__html_text(h, name);
	usc__html_printf(h, "\"><td>");
	kernel_link(h, name, id, detailed);
	usc__html_printf(h, "</td>");
	verdict_td(h, ki->verdict);
	usc__html_printf(h, "<td>");
	usc__html_text(h, ki->profile);
	usc__html_printf(h, "</td>");
	count_td(h, "elements", ki->element_count);
	for (size_t c = 0; c < USC_CLASS_COUNT; c++) {
		if (classified)
			count_td(h, class_keys[c], classes[c]);
		else
			usc__html_printf(h, "<td></td>");
	}
	num_td(h, "max_abs_ulp_reference", max_ref);
	num_td(h, "max_abs_ulp_oracle", max_or);
	usc__html_printf(h, "<td data-k=\"worst\">");
	if (worst >= 0) {
		usc__html_printf(h, "output %zu, flat %llu: ", worst_out,
				 (unsigned long long)worst_k);
		usc__html_num_short(h, worst);
		usc__html_printf(h, " ulp");
	}
	usc__html_printf(h, "</td><td class=\"msg\">");
	usc__html_text(h, ki->verdict_reason);
	usc__html_printf(h, "</td></tr>\n");
	usc_results_kernel_info_free(ki);
	return USC_OK;
}

static usc_status plain_file(usc__html *h, usc_results_reader *r,
			     const char *path, const usc_report_options *o,
			     usc_error *err)
{
	size_t n = usc_results_kernel_count(r);
	size_t verdicts[5] = {0};
	usc_status st = USC_OK;

	usc__html_printf(h, "<h2 id=\"summary\">kernels</h2>"
			    "<input class=\"filter\" data-table=\"kernels\" "
			    "placeholder=\"filter kernels\"><table "
			    "id=\"kernels\" class=\"sortable\"><thead><tr>"
			    "<th>kernel</th><th>verdict</th><th>profile</th>"
			    "<th>elements</th>");
	class_headers(h);
	usc__html_printf(h, "<th>max |ulp| reference</th><th>max |ulp| "
			    "oracle</th><th>worst element</th><th>reason</th>"
			    "</tr></thead><tbody>\n");
	for (size_t i = 0; st == USC_OK && i < n; i++)
		st = summary_row(h, r, usc_results_kernel_name(r, i), i,
				 i < o->detail_max, verdicts, err);
	if (st != USC_OK)
		return st;
	usc__html_printf(h, "</tbody></table>\n<h3>verdicts</h3>");
	verdict_counts(h, verdicts, 0, false);
	if (n > o->detail_max)
		usc__html_printf(h, "<p class=\"note\">The first %zu kernels "
				    "have a section below (--detail).</p>",
				 o->detail_max);
	usc__report_legend(h);
	for (size_t i = 0; st == USC_OK && i < n && i < o->detail_max; i++)
		st = usc__report_kernel(h, r, path,
					usc_results_kernel_name(r, i), i, o,
					err);
	return st;
}

/* ------------------------------------------------------------------ */
/* A batch index                                                       */

static const usc_batch_result *sort_rows;

/* Worst first: by verdict (defects first), then by |ulp| against the
 * oracle, largest first (NaN last), then in discovery order. */
static int by_interest(const void *a, const void *b)
{
	const usc_batch_row *x = &sort_rows->rows[*(const size_t *)a];
	const usc_batch_row *y = &sort_rows->rows[*(const size_t *)b];
	int vx = verdict_rank(x->verdict), vy = verdict_rank(y->verdict);
	double ux = isnan(x->max_ulp_oracle) ? -1 : x->max_ulp_oracle;
	double uy = isnan(y->max_ulp_oracle) ? -1 : y->max_ulp_oracle;

	if (vx != vy)
		return vx - vy;
	if (ux != uy)
		return ux < uy ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void ranking(usc__html *h, const usc_batch_result *b,
		    const usc_batch_kernel_rank *k, size_t nk,
		    const usc_batch_op_rank *ops, size_t nops)
{
	usc__html_printf(h, "<h2 id=\"ranking\">the worst kernels</h2>"
			    "<table id=\"ranking-table\" class=\"sortable\">"
			    "<thead><tr><th>kernel</th><th>hlo hash</th>"
			    "<th>runs</th><th>defect</th><th>suspicious</th>"
			    "<th>undecided</th><th>failed</th><th>max |ulp| "
			    "reference</th><th>max |ulp| oracle</th>"
			    "<th>worst run</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < nk; i++) {
		const usc_batch_row *w = &b->rows[k[i].worst_row];

		usc__html_printf(h, "<tr data-hash=\"");
		usc__html_text(h, k[i].hlo_hash);
		usc__html_printf(h, "\"><td>");
		usc__html_text(h, k[i].kernel);
		usc__html_printf(h, "</td><td class=\"src\">");
		usc__html_text(h, k[i].hlo_hash);
		usc__html_printf(h, "</td>");
		count_td(h, "runs", k[i].runs);
		count_td(h, "defects", k[i].defects);
		count_td(h, "suspicious", k[i].suspicious);
		count_td(h, "undecided", k[i].undecided);
		count_td(h, "failed", k[i].failed);
		num_td(h, "max_ulp_reference", k[i].max_ulp_reference);
		num_td(h, "max_ulp_oracle", k[i].max_ulp_oracle);
		usc__html_printf(h, "<td class=\"src\">");
		usc__html_text(h, w->path);
		usc__html_printf(h, "</td></tr>\n");
	}
	usc__html_printf(h, "</tbody></table>\n");
	if (!nops)
		return;
	usc__html_printf(h, "<h3>ops named most often as a case's culprit"
			    "</h3><table id=\"culprits\" class=\"sortable\">"
			    "<thead><tr><th>op</th><th>kernel</th><th>cases"
			    "</th><th>mean share</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < nops; i++) {
		usc__html_printf(h, "<tr><td>");
		usc__html_text(h, ops[i].op);
		usc__html_printf(h, "</td><td>");
		usc__html_text(h, ops[i].kernel);
		usc__html_printf(h, "</td>");
		count_td(h, "cases", ops[i].cases);
		num_td(h, "mean_share",
		       ops[i].cases ? ops[i].share_sum / (double)ops[i].cases
				    : NAN);
		usc__html_printf(h, "</tr>\n");
	}
	usc__html_printf(h, "</tbody></table>\n");
}

/*
 * A figure of the cases table: the short form shown, and the exact one in
 * data-v only when the short one is not already exact (most counts and
 * many maxima are small integers), since this table is one row per case.
 */
static void compact_num_td(usc__html *h, double x)
{
	char shown[32];

	snprintf(shown, sizeof shown, "%.4g", x);
	if (isnan(x) || (!isinf(x) && strtod(shown, NULL) == x)) {
		usc__html_printf(h, "<td>%s</td>", isnan(x) ? "NaN" : shown);
		return;
	}
	usc__html_printf(h, "<td data-v=\"");
	usc__html_num(h, x);
	usc__html_printf(h, "\">");
	usc__html_num_short(h, x);
	usc__html_printf(h, "</td>");
}

/*
 * The table of cases: the page's largest part for a big batch, one row
 * per case, so a row says each figure once.  The columns' keys are on the
 * header cells (data-k), a cell's exact figure is its text unless it has
 * a data-v, and class counts of zero are left empty.
 */
static void cases_table(usc__html *h, const usc_batch_result *b,
			const size_t *detail_id)
{
	usc__html_printf(h, "<h2 id=\"cases\">cases</h2><input class=\"filter\" "
			    "data-table=\"cases-table\" placeholder=\"filter "
			    "cases\"><table id=\"cases-table\" "
			    "class=\"sortable\"><thead><tr><th data-k=\"path\">"
			    "case</th><th data-k=\"kernel\">kernel</th>"
			    "<th data-k=\"status\">status</th><th "
			    "data-k=\"verdict\">verdict</th><th "
			    "data-k=\"elements\">elements</th>");
	for (size_t c = 0; c < USC_CLASS_COUNT; c++)
		usc__html_printf(h, "<th class=\"c%zu\" data-k=\"%s\">%s</th>",
				 c, class_keys[c], usc_class_name((usc_class)c));
	usc__html_printf(h, "<th data-k=\"max_ulp_reference\">max |ulp| "
			    "reference</th><th data-k=\"max_ulp_oracle\">max "
			    "|ulp| oracle</th><th data-k=\"culprit\">culprit"
			    "</th><th data-k=\"seconds\">seconds</th><th "
			    "data-k=\"message\">message</th></tr></thead>"
			    "<tbody>\n");
	for (size_t i = 0; i < b->row_count; i++) {
		const usc_batch_row *r = &b->rows[i];

		usc__html_printf(h, "<tr data-index=\"%llu\"><td>",
				 (unsigned long long)r->index);
		kernel_link(h, r->path, detail_id[i], detail_id[i] != SIZE_MAX);
		usc__html_printf(h, "</td><td>");
		usc__html_text(h, r->kernel);
		usc__html_printf(h, "</td><td>%s</td><td class=\"vt-",
				 usc_batch_status_name(r->status));
		usc__html_text(h, r->verdict[0] ? r->verdict : "none");
		usc__html_printf(h, "\">");
		usc__html_text(h, r->verdict);
		usc__html_printf(h, "</td><td>%llu</td>",
				 (unsigned long long)r->elements);
		for (size_t c = 0; c < USC_CLASS_COUNT; c++) {
			if (r->counts[c])
				usc__html_printf(h, "<td>%llu</td>",
						 (unsigned long long)r->counts[c]);
			else
				usc__html_printf(h, "<td></td>");
		}
		compact_num_td(h, r->max_ulp_reference);
		compact_num_td(h, r->max_ulp_oracle);
		usc__html_printf(h, "<td class=\"src\">");
		usc__html_text(h, r->culprit);
		usc__html_printf(h, "</td><td>%.2f</td><td class=\"msg\">",
				 r->seconds);
		usc__html_text(h, r->message);
		usc__html_printf(h, "</td></tr>\n");
	}
	usc__html_printf(h, "</tbody></table>\n");
}

/*
 * A checked case's section, read from the case's own result file (the
 * row's result, relative to the index's directory) rather than through
 * the index's external link: HDF5 opens a link's target file again for
 * every object read through it, which made each section several times
 * slower.
 */
static usc_status case_section(usc__html *h, const char *index,
			       const usc_batch_row *row, size_t id,
			       const usc_report_options *o, usc_error *err)
{
	char *dir = usc__path_dir(index);
	size_t n = (dir ? strlen(dir) : 0) + strlen(row->result) + 2;
	char *file = usc__malloc(n);
	usc_results_reader *cr = NULL;
	usc_error e;
	usc_status st;

	if (!dir || !file) {
		usc__free(dir);
		usc__free(file);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (row->result[0] == '/')
		snprintf(file, n, "%s", row->result);
	else
		snprintf(file, n, "%s/%s", dir, row->result);
	/*
	 * A case's result file that is gone or cannot be opened costs its
	 * section, not the page: the index's figures of the case are in the
	 * tables already, and the section says what went wrong.
	 */
	usc_error_clear(&e);
	st = usc_results_open(file, &cr, &e);
	if (st == USC_ENOMEM) {
		if (err)
			*err = e;
	} else if (st != USC_OK) {
		usc__html_printf(h, "<section class=\"kernel unreadable\" "
				    "id=\"k%zu\" data-kernel=\"",
				 id);
		usc__html_text(h, row->kernel);
		usc__html_printf(h, "\"><h2>");
		usc__html_text(h, row->kernel);
		usc__html_printf(h, "</h2><p class=\"meta\">cannot read this "
				    "case's results: ");
		usc__html_text(h, e.message);
		usc__html_printf(h, "</p></section>\n");
		st = USC_OK;
	} else {
		st = usc__report_kernel(h, cr, file, row->kernel, id, o, err);
	}
	usc_results_reader_close(cr);
	usc__free(dir);
	usc__free(file);
	return st;
}

static usc_status batch_index(usc__html *h, const char *path,
			      const usc_report_options *o,
			      usc_error *err)
{
	usc_batch_result *b = NULL;
	usc_batch_kernel_rank *k = NULL;
	usc_batch_op_rank *ops = NULL;
	size_t nk = 0, nops = 0, verdicts[5] = {0}, failed = 0, shown = 0;
	size_t *order = NULL, *detail_id = NULL;
	usc_status st;

	st = usc_batch_read(path, &b, err);
	if (st == USC_OK)
		st = usc_batch_rank(b, &k, &nk, &ops, &nops, err);
	if (st == USC_OK) {
		order = usc__calloc(b->row_count + 1, sizeof *order);
		detail_id = usc__calloc(b->row_count + 1, sizeof *detail_id);
		if (!order || !detail_id)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (st != USC_OK)
		goto done;
	for (size_t i = 0; i < b->row_count; i++) {
		order[i] = i;
		detail_id[i] = SIZE_MAX;
		if (b->rows[i].status != USC_BATCH_OK)
			failed++;
		else
			verdicts[verdict_slot(b->rows[i].verdict)]++;
	}
	/* The kernels shown in detail: the worst checked cases. */
	sort_rows = b;
	qsort(order, b->row_count, sizeof *order, by_interest);
	for (size_t i = 0; i < b->row_count && shown < o->detail_max; i++)
		if (b->rows[order[i]].status == USC_BATCH_OK &&
		    b->rows[order[i]].link[0])
			detail_id[order[i]] = shown++;
	usc__html_printf(h, "<p class=\"meta\">batch index: <span "
			    "data-k=\"rows\" data-v=\"%zu\">%zu</span> cases "
			    "of %zu (shard %zu of %zu)</p><h3>verdicts</h3>",
			 b->row_count, b->row_count, b->case_total,
			 b->shard_index + 1, b->shard_count);
	verdict_counts(h, verdicts, failed, true);
	ranking(h, b, k, nk, ops, nops);
	cases_table(h, b, detail_id);
	if (shown)
		usc__html_printf(h, "<p class=\"note\">The %zu worst checked "
				    "cases have a section below (--detail)."
				    "</p>",
				 shown);
	usc__report_legend(h);
	for (size_t i = 0; st == USC_OK && i < b->row_count; i++)
		if (detail_id[order[i]] != SIZE_MAX)
			st = case_section(h, path, &b->rows[order[i]],
					  detail_id[order[i]], o, err);
done:
	usc__free(order);
	usc__free(detail_id);
	usc__free(k);
	usc__free(ops);
	usc_batch_result_destroy(b);
	return st;
}

/* ------------------------------------------------------------------ */

static usc_status check_options(const usc_report_options *o, usc_error *err)
{
	if (o->detail_max > USC_REPORT_DETAIL_MAX)
		return usc__fail(err, USC_EINVAL,
				 "report: detail %zu is above %d", o->detail_max,
				 USC_REPORT_DETAIL_MAX);
	if (o->worst > USC_REPORT_WORST_MAX)
		return usc__fail(err, USC_EINVAL, "report: worst %zu is above %d",
				 o->worst, USC_REPORT_WORST_MAX);
	if (o->explain > USC_REPORT_WORST_MAX)
		return usc__fail(err, USC_EINVAL,
				 "report: explain %zu is above %d", o->explain,
				 USC_REPORT_WORST_MAX);
	if (o->grid < 1 || o->grid > USC_REPORT_GRID_MAX)
		return usc__fail(err, USC_EINVAL,
				 "report: grid %zu is not from 1 to %d", o->grid,
				 USC_REPORT_GRID_MAX);
	return USC_OK;
}

/*
 * What is at out must be nothing or a regular file other than the
 * result file itself (the rename would replace it).
 */
static usc_status check_out(const char *results, const char *out,
			    usc_error *err)
{
	struct stat so, sr;

	if (lstat(out, &so) != 0)
		return USC_OK;
	if (S_ISDIR(so.st_mode))
		return usc__fail(err, USC_EINVAL,
				 "cannot write the report to %s: it is a "
				 "directory",
				 out);
	if (!S_ISREG(so.st_mode))
		return usc__fail(err, USC_EINVAL,
				 "cannot write the report to %s: it is not a "
				 "regular file",
				 out);
	if (stat(results, &sr) == 0 && sr.st_dev == so.st_dev &&
	    sr.st_ino == so.st_ino)
		return usc__fail(err, USC_EINVAL,
				 "cannot write the report to %s: it is the "
				 "result file being read",
				 out);
	return USC_OK;
}

usc_status usc_report_write(const char *results, const char *out,
			    const usc_report_options *o, usc_error *err)
{
	usc_report_options def = usc_report_options_default();
	usc_results_reader *r = NULL;
	usc__html h = {NULL, false};
	size_t tlen = strlen(out) + 32;
	char *tmp = usc__malloc(tlen);
	bool batch = false;
	const usc_results_file_info *info;
	const char *base = strrchr(results, '/');
	usc_status st;

	if (!o)
		o = &def;
	if (!tmp)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = check_options(o, err);
	if (st == USC_OK)
		st = check_out(results, out, err);
	if (st != USC_OK) {
		usc__free(tmp);
		return st;
	}
	snprintf(tmp, tlen, "%s.tmp.%ld", out, (long)getpid());
	h.f = fopen(tmp, "w");
	if (!h.f) {
		int e = errno;

		usc__free(tmp);
		return usc__fail(err, USC_EIO, "cannot write the report to "
					       "%s: %s",
				 out, strerror(e));
	}
	/* Large writes: the page of a big batch is megabytes of rows. */
	setvbuf(h.f, NULL, _IOFBF, 1 << 20);
	st = usc_results_open(results, &r, err);
	if (st == USC_OK)
		st = usc__h5_exists(usc__results_reader_file(r), "/batch",
				    &batch, NULL, err);
	if (st == USC_OK) {
		info = usc_results_reader_info(r);
		usc__report_head(&h, base ? base + 1 : results);
		usc__html_printf(&h, "<h1>ulpscope report: ");
		usc__html_text(&h, base ? base + 1 : results);
		usc__html_printf(&h, "</h1><p class=\"meta\">");
		usc__html_text(&h, results);
		usc__html_printf(&h, ", written by ulpscope ");
		usc__html_text(&h, info->ulpscope_version);
		usc__html_printf(&h, " on ");
		usc__html_text(&h, info->created);
		usc__html_printf(&h, "; <span data-k=\"kernel_count\" "
				     "data-v=\"%zu\">%zu</span> kernels</p>\n",
				 usc_results_kernel_count(r),
				 usc_results_kernel_count(r));
		st = batch ? batch_index(&h, results, o, err)
			   : plain_file(&h, r, results, o, err);
	}
	/* The audits stored in the file (audit --out), after the kernels. */
	if (st == USC_OK)
		st = usc__report_audits(&h, r, err);
	if (st == USC_OK)
		usc__report_tail(&h);
	usc_results_reader_close(r);
	if (fflush(h.f) != 0)
		h.failed = true;
	if (fclose(h.f) != 0)
		h.failed = true;
	if (st == USC_OK && h.failed)
		st = usc__fail(err, USC_EIO, "cannot write the report to %s: %s",
			       out, strerror(errno ? errno : EIO));
	if (st == USC_OK && rename(tmp, out) != 0) {
		int e = errno;

		st = usc__fail(err, USC_EIO, "cannot write the report to %s: %s",
			       out, strerror(e));
	}
	if (st != USC_OK)
		(void)remove(tmp);
	usc__free(tmp);
	return st;
}
