/*
 * The audit's group of the result file, /audits/<name>/ (docs/results.md,
 * docs/audit.md): written through the HDF5 door like every other group,
 * into a file the result writer makes or extends, so the file's
 * atomicity, locking and refusals are the writer's own.
 */
#include "internal.h"
#include "store/results_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/audit.h"

/* One row of the per-sample table. */
typedef struct sample_row {
	const char *label;
	const char *verdict;
	uint64_t seed;
	uint64_t better, worse, unchanged, identical, undecided;
	uint64_t fn_changed, fn_special;
	double fn_max_ulps;
	double before_max, before_p99, before_median;
	double after_max, after_p99, after_median;
	uint64_t before_nan, after_nan;
} sample_row;

#define COL(name, kind) {#name, USC__H5_COL_##kind, offsetof(sample_row, name)}
static const usc__h5_column sample_cols[] = {
	COL(label, STRING),	  COL(verdict, STRING),
	COL(seed, UINT64),	  COL(better, UINT64),
	COL(worse, UINT64),	  COL(unchanged, UINT64),
	COL(identical, UINT64),	  COL(undecided, UINT64),
	COL(fn_changed, UINT64),  COL(fn_special, UINT64),
	COL(fn_max_ulps, DOUBLE), COL(before_max, DOUBLE),
	COL(before_p99, DOUBLE),  COL(before_median, DOUBLE),
	COL(after_max, DOUBLE),	  COL(after_p99, DOUBLE),
	COL(after_median, DOUBLE), COL(before_nan, UINT64),
	COL(after_nan, UINT64),
};
#undef COL

/* One row of the op-by-op table. */
typedef struct op_row {
	const char *kind;
	const char *before;
	const char *after;
	const char *source;
	double before_mean_abs, after_mean_abs, change, share;
} op_row;

#define COL(name, kind) {#name, USC__H5_COL_##kind, offsetof(op_row, name)}
static const usc__h5_column op_cols[] = {
	COL(kind, STRING),	    COL(before, STRING),
	COL(after, STRING),	    COL(source, STRING),
	COL(before_mean_abs, DOUBLE), COL(after_mean_abs, DOUBLE),
	COL(change, DOUBLE),	    COL(share, DOUBLE),
};
#undef COL

static usc_status write_ops(usc__h5_file *f, const char *g,
			    const usc_audit_report *r, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	op_row *rows = usc__calloc(r->op_count + 1, sizeof *rows);
	usc_status st;

	if (!rows)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t k = 0; k < r->op_count; k++) {
		const usc_audit_op *o = &r->ops[k];

		rows[k].kind = usc_audit_op_kind_name(o->kind);
		rows[k].before = o->before;
		rows[k].after = o->after;
		rows[k].source = o->source;
		rows[k].before_mean_abs = o->before_mean_abs;
		rows[k].after_mean_abs = o->after_mean_abs;
		rows[k].change = o->change;
		rows[k].share = o->share;
	}
	usc__results_path(path, sizeof path, "%s/ops", g);
	st = usc__h5_write_table(f, path, op_cols, USC__ARRAY_LEN(op_cols),
				 rows, r->op_count, sizeof *rows, err);
	usc__free(rows);
	return st;
}

static void row_of(const usc_audit_sample *sm, const usc_audit_figures *f,
		   sample_row *row)
{
	row->label = sm ? sm->label : "pooled";
	row->verdict = usc_audit_verdict_name(f->verdict);
	row->seed = sm ? sm->seed : 0;
	row->better = f->better;
	row->worse = f->worse;
	row->unchanged = f->unchanged;
	row->identical = f->identical;
	row->undecided = f->undecided;
	row->fn_changed = f->fn_changed;
	row->fn_special = f->fn_special;
	row->fn_max_ulps = f->fn_max_ulps;
	row->before_max = f->before.max_abs;
	row->before_p99 = f->before.p99_abs;
	row->before_median = f->before.median_abs;
	row->after_max = f->after.max_abs;
	row->after_p99 = f->after.p99_abs;
	row->after_median = f->after.median_abs;
	row->before_nan = f->before.nan_count;
	row->after_nan = f->after.nan_count;
}

/* The pooled figures of an output as attributes of its group. */
static usc_status figures_attrs(usc__h5_file *f, const char *g,
				const usc_audit_figures *p, usc_error *err)
{
	struct {
		const char *name;
		uint64_t v;
	} u[] = {
		{"count", p->count},	       {"better", p->better},
		{"worse", p->worse},	       {"unchanged", p->unchanged},
		{"identical", p->identical},   {"undecided", p->undecided},
		{"fn_changed", p->fn_changed}, {"fn_special", p->fn_special},
		{"before_nan", p->before.nan_count},
		{"after_nan", p->after.nan_count},
	};
	struct {
		const char *name;
		double v;
	} d[] = {
		{"fn_max_ulps", p->fn_max_ulps},
		{"before_max", p->before.max_abs},
		{"before_p99", p->before.p99_abs},
		{"before_median", p->before.median_abs},
		{"after_max", p->after.max_abs},
		{"after_p99", p->after.p99_abs},
		{"after_median", p->after.median_abs},
	};
	usc_status st = USC_OK;

	for (size_t i = 0; st == USC_OK && i < USC__ARRAY_LEN(u); i++)
		st = usc__h5_attr_set_uint(f, g, u[i].name, u[i].v, err);
	for (size_t i = 0; st == USC_OK && i < USC__ARRAY_LEN(d); i++)
		st = usc__h5_attr_set_double(f, g, d[i].name, d[i].v, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(
			f, g, "verdict", usc_audit_verdict_name(p->verdict),
			err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "reason", p->reason, err);
	if (st == USC_OK && p->enveloped) {
		st = usc__h5_attr_set_uint(f, g, "env_known", p->env_known, err);
		if (st == USC_OK)
			st = usc__h5_attr_set_uint(f, g, "wider", p->wider, err);
		if (st == USC_OK)
			st = usc__h5_attr_set_uint(f, g, "narrower",
						   p->narrower, err);
		if (st == USC_OK)
			st = usc__h5_attr_set_uint(f, g, "after_outside_before",
						   p->after_outside_before,
						   err);
		if (st == USC_OK)
			st = usc__h5_attr_set_double(f, g,
						     "width_before_median",
						     p->width_before.median_abs,
						     err);
		if (st == USC_OK)
			st = usc__h5_attr_set_double(f, g,
						     "width_after_median",
						     p->width_after.median_abs,
						     err);
	}
	return st;
}

/*
 * One per-element array of output i over every sample, as a dataset of
 * shape (samples, elements); pick says which array and its byte size.
 */
static usc_status write_elements(usc__h5_file *f, const char *path,
				 const usc_audit_report *r, size_t i,
				 usc__h5_store t, size_t size,
				 const void *(*pick)(const usc_audit_elements *),
				 usc_error *err)
{
	uint64_t n = r->samples[0].elements[i].count;
	int64_t dims[2] = {(int64_t)r->sample_count, (int64_t)n};
	size_t bytes = (size_t)n * size;
	unsigned char *buf = usc__malloc(r->sample_count * bytes + 1);
	usc_status st;

	if (!buf)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->sample_count; s++)
		memcpy(buf + s * bytes, pick(&r->samples[s].elements[i]), bytes);
	st = usc__h5_write_numeric(f, path, t, 2, dims, buf, err);
	usc__free(buf);
	return st;
}

static const void *pick_ulp_before(const usc_audit_elements *e)
{
	return e->ulp_before;
}
static const void *pick_ulp_after(const usc_audit_elements *e)
{
	return e->ulp_after;
}
static const void *pick_fn(const usc_audit_elements *e)
{
	return e->fn_ulps;
}
static const void *pick_ref_before(const usc_audit_elements *e)
{
	return e->ref_before;
}
static const void *pick_ref_after(const usc_audit_elements *e)
{
	return e->ref_after;
}
static const void *pick_width_before(const usc_audit_elements *e)
{
	return e->width_before;
}
static const void *pick_width_after(const usc_audit_elements *e)
{
	return e->width_after;
}
static const void *pick_flags(const usc_audit_elements *e)
{
	return e->flags;
}

static usc_status write_output(usc__h5_file *f, const char *g,
			       const usc_audit_report *r, size_t i,
			       usc_error *err)
{
	static const struct {
		const char *name;
		usc__h5_store t;
		size_t size;
		const void *(*pick)(const usc_audit_elements *);
		bool enveloped;
	} arrays[] = {
		{"ulp_before", USC__H5_STORE_F64, 8, pick_ulp_before, false},
		{"ulp_after", USC__H5_STORE_F64, 8, pick_ulp_after, false},
		{"fn_ulps", USC__H5_STORE_F64, 8, pick_fn, false},
		{"reference_before", USC__H5_STORE_U64, 8, pick_ref_before,
		 false},
		{"reference_after", USC__H5_STORE_U64, 8, pick_ref_after,
		 false},
		{"flags", USC__H5_STORE_U8, 1, pick_flags, false},
		{"width_before", USC__H5_STORE_F64, 8, pick_width_before, true},
		{"width_after", USC__H5_STORE_F64, 8, pick_width_after, true},
	};
	char og[USC__RESULTS_PATH_SIZE], path[USC__RESULTS_PATH_SIZE];
	char shape[256];
	usc_tensor_spec spec = {r->outputs[i].dtype, r->outputs[i].rank,
				r->outputs[i].dims, NULL};
	sample_row *rows;
	usc_status st;

	usc__results_path(og, sizeof og, "%s/outputs/%zu", g, i);
	st = usc__h5_group_create(f, og, err);
	usc_tensor_spec_format(&spec, shape, sizeof shape);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, og, "shape", shape, err);
	if (st == USC_OK)
		st = figures_attrs(f, og, &r->pooled[i], err);
	for (size_t a = 0; st == USC_OK && a < USC__ARRAY_LEN(arrays); a++) {
		if (arrays[a].enveloped && !r->profiled)
			continue;
		usc__results_path(path, sizeof path, "%s/%s", og,
				  arrays[a].name);
		st = write_elements(f, path, r, i, arrays[a].t, arrays[a].size,
				    arrays[a].pick, err);
	}
	if (st != USC_OK)
		return st;
	rows = usc__calloc(r->sample_count + 1, sizeof *rows);
	if (!rows)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t s = 0; s < r->sample_count; s++)
		row_of(&r->samples[s], &r->samples[s].outputs[i], &rows[s]);
	row_of(NULL, &r->pooled[i], &rows[r->sample_count]);
	usc__results_path(path, sizeof path, "%s/samples", og);
	st = usc__h5_write_table(f, path, sample_cols,
				 USC__ARRAY_LEN(sample_cols), rows,
				 r->sample_count + 1, sizeof *rows, err);
	usc__free(rows);
	return st;
}

usc_status usc__audit_write_group(usc__h5_file *f, const char *g,
				  const usc_audit_report *r, usc_error *err)
{
	usc_status st = usc__h5_group_create(f, g, err);

	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "before", r->before_path,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "after", r->after_path, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "before_module",
					     r->before_name, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "after_module",
					     r->after_name, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(
			f, g, "profile", r->profiled ? r->profile.name : "",
			err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "threshold", r->threshold,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "function_changed",
					   r->function_changed, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "function_max_ulps",
					     r->function_max_ulps, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "verdict",
					     usc_audit_verdict_name(r->verdict),
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "reason", r->reason, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "samples", r->sample_count,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "outputs", r->output_count,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "ops_note", r->ops_note,
					     err);
	if (st == USC_OK && r->ops)
		st = write_ops(f, g, r, err);
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
		st = write_output(f, g, r, i, err);
	return st;
}

usc_status usc__audit_open(const char *path, const char *name,
			   unsigned flags, usc_results **w, char *g,
			   usc_error *err)
{
	usc__h5_file *f;
	bool exists = false;
	usc_status st = usc__results_check_name(path, name, err);

	*w = NULL;
	if (st != USC_OK)
		return st;
	if (flags & USC_AUDIT_APPEND)
		st = usc_results_open_append(path, w, err);
	else
		st = usc_results_create_ex(path, flags & USC_RESULTS_FORCE, w,
					   err);
	if (st != USC_OK)
		return st;
	f = usc__results_file(*w);
	usc__results_path(g, USC__RESULTS_PATH_SIZE, "/audits/%s", name);
	if (f)
		usc__h5_exists(f, g, &exists, NULL, NULL);
	if (!f)
		st = usc__fail(err, USC_EIO, "%s: the file cannot be written",
			       path);
	else if (exists)
		st = usc__fail(err, USC_EINVAL,
			       "%s: audit '%s' is already in the file (give "
			       "another --name)",
			       path, name);
	if (st != USC_OK) {
		usc_results_abort(*w);
		*w = NULL;
	}
	return st;
}

usc_status usc_audit_write(const usc_audit_report *r, const char *path,
			   const char *name, unsigned flags, usc_error *err)
{
	usc_results *w = NULL;
	char g[USC__RESULTS_PATH_SIZE];
	usc_status st;

	if (!r || !path || !name || !r->sample_count)
		return usc__fail(err, USC_EINVAL, "incomplete audit write");
	st = usc__audit_open(path, name, flags, &w, g, err);
	if (st != USC_OK)
		return st;
	st = usc__audit_write_group(usc__results_file(w), g, r, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}
