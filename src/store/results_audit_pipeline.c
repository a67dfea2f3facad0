/*
 * A pipeline's group of the result file, /audits/<name>/ (docs/audit.md,
 * "The result file"): the stage table, every evaluated stage's audit as a
 * complete audit group /audits/<name>/<k>, and the descent.  The audit
 * groups are written as a single audit's are (results_audit.c), so a
 * reader of one reads the others.
 */
#include "internal.h"
#include "store/results_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/audit.h"

#define COL(name, kind)                                                        \
	{#name, USC__H5_COL_##kind, offsetof(usc__stage_row, name)}
static const usc__h5_column stage_cols[] = {
	COL(index, UINT64),	     COL(label, STRING),
	COL(pass, STRING),	     COL(file, STRING),
	COL(evaluated, UINT64),	     COL(same_as, INT64),
	COL(moved, UINT64),	     COL(function_moved, UINT64),
	COL(function_changed, UINT64), COL(max, DOUBLE),
	COL(p99, DOUBLE),	     COL(median, DOUBLE),
	COL(nan, UINT64),	     COL(gate, INT64),
	COL(gate_reason, STRING),
};
#undef COL

/*
 * A pipeline of XLA has a few dozen dumps; a table declaring far more
 * rows than any pipeline has is damaged, and reading it would only cost
 * memory.
 */
enum { MAX_STAGES = 100000 };

static usc_status write_stages(usc__h5_file *f, const char *g,
			       const usc_audit_pipeline *p, double t,
			       usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	usc__stage_row *rows = usc__calloc(p->stage_count, sizeof *rows);
	char(*reasons)[USC_ERROR_MESSAGE_SIZE] =
		usc__calloc(p->stage_count, sizeof *reasons);
	usc_status st;

	if (!rows || !reasons) {
		usc__free(rows);
		usc__free(reasons);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < p->stage_count; k++) {
		const usc_audit_stage *s = &p->stages[k];
		const usc_audit_report *a = usc_audit_stage_report(p, k);
		char *base = strrchr(s->path, '/');
		usc__stage_row *r = &rows[k];

		r->index = k;
		r->label = s->label;
		r->pass = s->pass;
		r->file = base ? base + 1 : s->path;
		r->evaluated = a != NULL;
		r->same_as = s->same_as == SIZE_MAX ? -1 : (int64_t)s->same_as;
		r->moved = s->moved;
		r->function_moved = s->fn_moved;
		r->function_changed = a && a->function_changed;
		/* Output 0's figures; the stage's group holds every output. */
		r->max = a ? a->pooled[0].after.max_abs : 0;
		r->p99 = a ? a->pooled[0].after.p99_abs : 0;
		r->median = a ? a->pooled[0].after.median_abs : 0;
		r->nan = a ? a->pooled[0].after.nan_count : 0;
		r->gate = usc_audit_pass_gate(p, k, t, reasons[k],
					      sizeof reasons[k]);
		r->gate_reason = reasons[k];
	}
	usc__results_path(path, sizeof path, "%s/stages", g);
	st = usc__h5_write_table(f, path, stage_cols,
				 USC__ARRAY_LEN(stage_cols), rows,
				 p->stage_count, sizeof *rows, err);
	usc__free(rows);
	usc__free(reasons);
	return st;
}

static usc_status write_pipeline(usc__h5_file *f, const char *g,
				 const usc_audit_pipeline *p, double t,
				 usc_error *err)
{
	char sub[USC__RESULTS_PATH_SIZE];
	size_t worst;
	int gate = usc_audit_pipeline_gate(p, t, &worst);
	usc_status st = usc__h5_group_create(f, g, err);

	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "pipeline", p->dir, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "module", p->module, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "stage_count",
					   p->stage_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "threshold", t, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(
			f, g, "biggest",
			p->descent ? p->stages[p->biggest].label : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(
			f, g, "biggest_index",
			p->descent ? (int64_t)p->biggest : -1, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(f, g, "gate", gate, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(
			f, g, "gate_stage",
			gate ? (int64_t)worst : -1, err);
	if (st == USC_OK)
		st = write_stages(f, g, p, t, err);
	for (size_t k = 0; st == USC_OK && k < p->stage_count; k++) {
		if (!p->stages[k].audit)
			continue;
		usc__results_path(sub, sizeof sub, "%s/%zu", g, k);
		st = usc__audit_write_group(f, sub, p->stages[k].audit, err);
	}
	if (st == USC_OK && p->descent) {
		usc__results_path(sub, sizeof sub, "%s/descent", g);
		st = usc__audit_write_group(f, sub, p->descent, err);
	}
	return st;
}

usc_status usc_audit_pipeline_write(const usc_audit_pipeline *p, double t,
				    const char *path, const char *name,
				    unsigned flags, usc_error *err)
{
	usc_results *w = NULL;
	char g[USC__RESULTS_PATH_SIZE];
	usc_status st;

	if (!p || !p->stage_count || !path || !name)
		return usc__fail(err, USC_EINVAL, "incomplete pipeline write");
	st = usc__audit_open(path, name, flags, &w, g, err);
	if (st != USC_OK)
		return st;
	st = write_pipeline(usc__results_file(w), g, p, t, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}

usc_status usc__audit_stages_read(usc__h5_file *f, const char *ds,
				  usc__stage_row **rows, size_t *n,
				  usc_error *err)
{
	usc__h5_dataset *d = NULL;
	int64_t dims[1] = {0};
	size_t rank = 0;
	bool all = false;
	void *v = NULL;
	usc_status st;

	*rows = NULL;
	*n = 0;
	st = usc__h5_dataset_open(f, ds, &d, err);
	if (st == USC_OK)
		st = usc__h5_dataset_shape(d, 1, &rank, dims, err);
	if (st == USC_OK)
		st = usc__h5_dataset_stored(d, &all, err);
	if (st == USC_OK && (rank != 1 || dims[0] > MAX_STAGES || !all))
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: expected a one-dimensional table of at "
			       "most %d stages, every row stored",
			       usc__h5_file_path(f), ds, MAX_STAGES);
	if (d)
		usc__h5_dataset_close(d);
	if (st != USC_OK)
		return st;
	st = usc__h5_read_table(f, ds, stage_cols, USC__ARRAY_LEN(stage_cols),
				sizeof(usc__stage_row), &v, n, err);
	*rows = v;
	return st;
}

void usc__audit_stages_free(usc__stage_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		usc__free(rows[i].label);
		usc__free(rows[i].pass);
		usc__free(rows[i].file);
		usc__free(rows[i].gate_reason);
	}
	usc__free(rows);
}
