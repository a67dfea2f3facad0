/*
 * The batch index (docs/batch.md, "The index"): a result file whose
 * /batch table has one row per case and whose /kernels holds one external
 * link per checked case, to the kernel in that case's own result file.
 * Written and read here, through the door to HDF5, so that src/batch/
 * knows nothing of HDF5.
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#include "store/h5_door.h"
#include "store/results_internal.h"
#include "ulpscope/batch.h"
#include "ulpscope/results.h"

#include "batch/batch_index.h"

/*
 * The stored form of a row: the status as its name, so that the table
 * reads in pandas as it prints.  Counts are columns of their own.
 */
typedef struct stored_row {
	uint64_t index;
	char *path, *kernel, *hlo_hash, *status, *verdict, *profile;
	uint64_t elements;
	uint64_t counts[USC_CLASS_COUNT];
	double max_ulp_reference, max_ulp_oracle;
	char *culprit;
	double culprit_share, seconds;
	char *message, *result, *link;
} stored_row;

#define COL_S(n) {#n, USC__H5_COL_STRING, offsetof(stored_row, n)}
#define COL_U(n) {#n, USC__H5_COL_UINT64, offsetof(stored_row, n)}
#define COL_D(n) {#n, USC__H5_COL_DOUBLE, offsetof(stored_row, n)}
/* The class counts, named after the classes with '_' for '-'. */
#define COL_N(name, v)                                                    \
	{name, USC__H5_COL_UINT64,                                        \
	 offsetof(stored_row, counts) + (v) * sizeof(uint64_t)}
_Static_assert(USC_CLASS_COUNT == 9, "one n_ column per class");

static const usc__h5_column columns[] = {
	COL_U(index),	 COL_S(path),	 COL_S(kernel),
	COL_S(hlo_hash), COL_S(status),	 COL_S(verdict),
	COL_S(profile),	 COL_U(elements),
	COL_N("n_exact", USC_CLASS_EXACT),
	COL_N("n_rounding", USC_CLASS_ROUNDING),
	COL_N("n_envelope", USC_CLASS_ENVELOPE),
	COL_N("n_suspicious", USC_CLASS_SUSPICIOUS),
	COL_N("n_defect", USC_CLASS_DEFECT),
	COL_N("n_nan_mismatch", USC_CLASS_NAN_MISMATCH),
	COL_N("n_inf_mismatch", USC_CLASS_INF_MISMATCH),
	COL_N("n_sign_mismatch", USC_CLASS_SIGN_MISMATCH),
	COL_N("n_undecided", USC_CLASS_UNDECIDED),
	COL_D(max_ulp_reference), COL_D(max_ulp_oracle),
	COL_S(culprit),	 COL_D(culprit_share), COL_D(seconds),
	COL_S(message),	 COL_S(result),	 COL_S(link)};
#define NCOLS (sizeof columns / sizeof columns[0])

static void to_stored(const usc_batch_row *r, stored_row *s)
{
	s->index = r->index;
	s->path = r->path;
	s->kernel = r->kernel;
	s->hlo_hash = r->hlo_hash;
	s->status = (char *)usc_batch_status_name(r->status);
	s->verdict = r->verdict;
	s->profile = r->profile;
	s->elements = r->elements;
	memcpy(s->counts, r->counts, sizeof s->counts);
	s->max_ulp_reference = r->max_ulp_reference;
	s->max_ulp_oracle = r->max_ulp_oracle;
	s->culprit = r->culprit;
	s->culprit_share = r->culprit_share;
	s->seconds = r->seconds;
	s->message = r->message;
	s->result = r->result;
	s->link = r->link;
}

usc_status usc__batch_index_write(const char *out, const usc_batch_result *b,
				  const char *options, bool force,
				  usc_error *err)
{
	stored_row *rows = usc__calloc(b->row_count ? b->row_count : 1,
				       sizeof *rows);
	usc_results *w = NULL;
	usc__h5_file *f;
	usc_status st;

	if (!rows)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", out);
	for (size_t i = 0; i < b->row_count; i++)
		to_stored(&b->rows[i], &rows[i]);
	st = usc_results_create_ex(out, force ? USC_RESULTS_FORCE : 0, &w,
				   err);
	if (st != USC_OK) {
		usc__free(rows);
		return st;
	}
	f = usc__results_writer_file(w);
	st = usc__h5_write_table(f, "/batch", columns, NCOLS, rows,
				 b->row_count, sizeof *rows, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, "/batch", "case_total",
					   b->case_total, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, "/batch", "shard_index",
					   b->shard_index, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, "/batch", "shard_count",
					   b->shard_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, "/batch", "options", options,
					     err);
	for (size_t i = 0; i < b->row_count && st == USC_OK; i++) {
		const usc_batch_row *r = &b->rows[i];
		char link[USC__RESULTS_PATH_SIZE + 1024];
		char obj[USC__RESULTS_PATH_SIZE];

		if (r->status != USC_BATCH_OK || !r->link || !r->link[0])
			continue;
		if (strlen(r->link) > USC_RESULTS_MAX_NAME ||
		    strlen(r->kernel) > USC_RESULTS_MAX_NAME) {
			st = usc__fail(err, USC_EINVAL,
				       "%s: the case name '%s' is longer than "
				       "%d bytes",
				       out, r->link, USC_RESULTS_MAX_NAME);
			break;
		}
		usc__results_path(link, sizeof link, "/kernels/%s", r->link);
		usc__results_path(obj, sizeof obj, "/kernels/%s", r->kernel);
		st = usc__h5_link_external(f, link, r->result, obj, err);
	}
	usc__free(rows);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}

static usc_batch_status status_of(const char *name, bool *ok)
{
	for (int s = 0; s < USC_BATCH_STATUS_COUNT; s++)
		if (strcmp(name, usc_batch_status_name((usc_batch_status)s)) ==
		    0)
			return (usc_batch_status)s;
	*ok = false;
	return USC_BATCH_ERROR;
}

usc_status usc__batch_index_read(const char *path, usc_batch_result *b,
				 char **options, usc_error *err)
{
	usc_results_reader *rd = NULL;
	stored_row *rows = NULL;
	size_t n = 0;
	uint64_t total = 0, k = 0, count = 0;
	usc__h5_file *f;
	usc_status st;

	*options = NULL;
	st = usc_results_open(path, &rd, err);
	if (st != USC_OK)
		return st;
	f = usc__results_reader_file(rd);
	st = usc__h5_read_table(f, "/batch", columns, NCOLS, sizeof *rows,
				(void **)&rows, &n, err);
	if (st == USC_ENOTFOUND)
		st = usc__fail(err, USC_EPARSE,
			       "%s: not a batch index (no /batch table)", path);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, "/batch", "case_total", &total,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, "/batch", "shard_index", &k,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, "/batch", "shard_count", &count,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, "/batch", "options", options,
					     err);
	if (st == USC_OK && (count == 0 || k >= count || n > total))
		st = usc__fail(err, USC_EPARSE,
			       "%s:/batch: inconsistent attributes (shard "
			       "%llu of %llu, %zu rows of %llu cases)",
			       path, (unsigned long long)k,
			       (unsigned long long)count, n,
			       (unsigned long long)total);
	if (st == USC_OK) {
		b->rows = usc__calloc(n ? n : 1, sizeof *b->rows);
		if (!b->rows)
			st = usc__fail(err, USC_ENOMEM, "%s: out of memory",
				       path);
	}
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc_batch_row *r = &b->rows[i];
		const stored_row *s = &rows[i];
		bool ok = true;

		r->index = s->index;
		r->status = status_of(s->status, &ok);
		if (!ok || s->index >= total) {
			st = usc__fail(err, USC_EPARSE,
				       "%s:/batch: row %zu: %s", path, i,
				       ok ? "index past the case count"
					  : "unknown status");
			break;
		}
		r->elements = s->elements;
		memcpy(r->counts, s->counts, sizeof r->counts);
		r->max_ulp_reference = s->max_ulp_reference;
		r->max_ulp_oracle = s->max_ulp_oracle;
		r->culprit_share = s->culprit_share;
		r->seconds = s->seconds;
		/* The strings change hands. */
		r->path = s->path, r->kernel = s->kernel;
		r->hlo_hash = s->hlo_hash, r->verdict = s->verdict;
		r->profile = s->profile, r->culprit = s->culprit;
		r->message = s->message, r->result = s->result;
		r->link = s->link;
		rows[i].path = rows[i].kernel = rows[i].hlo_hash = NULL;
		rows[i].verdict = rows[i].profile = rows[i].culprit = NULL;
		rows[i].message = rows[i].result = rows[i].link = NULL;
		b->row_count = i + 1;
	}
	for (size_t i = 0; rows && i < n; i++) {
		usc__free(rows[i].path), usc__free(rows[i].kernel);
		usc__free(rows[i].hlo_hash), usc__free(rows[i].status);
		usc__free(rows[i].verdict), usc__free(rows[i].profile);
		usc__free(rows[i].culprit), usc__free(rows[i].message);
		usc__free(rows[i].result), usc__free(rows[i].link);
	}
	usc__free(rows);
	usc_results_reader_close(rd);
	if (st == USC_OK) {
		b->case_total = (size_t)total;
		b->shard_index = (size_t)k;
		b->shard_count = (size_t)count;
	} else {
		usc__free(*options);
		*options = NULL;
	}
	return st;
}
