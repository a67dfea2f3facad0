/*
 * The result file's writer (see ulpscope/results.h and docs/results.md).
 *
 * Everything is written to "PATH.tmp.PID" and renamed over PATH by
 * usc_results_close, after the root's "complete" attribute has been set:
 * rename is atomic, so PATH is always either the old file or the whole new
 * one, and a leftover temporary file lacks "complete" and is refused by
 * every reader.
 *
 * results_guard.c keeps the path safe around that: what is at PATH is
 * checked before it is replaced, appenders hold PATH.lock from before
 * their read until after their rename, a signal that ends the process
 * takes the temporary file with it, and a writer removes the temporary
 * files of writers that were killed.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/h5_door.h"
#include "store/results_guard.h"
#include "store/results_internal.h"
#include "ulpscope/ulpscope.h"
#include "util/io_error.h"

/*
 * The per-element datasets of an output, in the order they are created:
 * the first ROWS_PLAIN for every output, the rest for a classified one.
 */
enum {
	ROW_REFERENCE,
	ROW_ORACLE_RAD = 2,
	ROW_ULP_REFERENCE = 4,
	ROW_UNDECIDED = 5,
	ROW_ENVELOPE_FLAGS = 8,
	ROW_CLASS,
	ROW_SETS,
	ROWS_PLAIN = ROW_UNDECIDED + 1
};
static const char *const row_names[ROW_SETS] = {
	"reference",	     "oracle_mid",  "oracle_rad",
	"ulp_error_oracle",  "ulp_error_reference", "undecided",
	"envelope_lo",	     "envelope_hi", "envelope_flags",
	"class"};

static bool row_is_u8(size_t j)
{
	return j == ROW_UNDECIDED || j == ROW_ENVELOPE_FLAGS;
}

/*
 * The filters of a per-element dataset, chosen for the speed of the check
 * (docs/results.md, "Compression").  Deflate runs at 35-50 MB/s on arrays
 * it shrinks by less than about 2.5 (the encodings, the oracle's
 * midpoints, its ULP errors, the envelope's ends: doubles and codes with
 * most bits in use), which alone cost 10-20 times the kernel's plain f64
 * evaluation: those are stored unfiltered.  The rest (the radii, the
 * errors against the reference, the flags and classes: mostly a few
 * repeated values) shrink 4-200 times at 130-850 MB/s and take deflate
 * level 1 after the byte shuffle.
 */
static usc__h5_pack row_pack(size_t j)
{
	switch (j) {
	case ROW_ORACLE_RAD:
	case ROW_ULP_REFERENCE:
	case ROW_UNDECIDED:
	case ROW_ENVELOPE_FLAGS:
	case ROW_CLASS:
		return USC__H5_PACK_FAST;
	default:
		return USC__H5_PACK_RAW;
	}
}

/* An output being written: its group, datasets and progress. */
typedef struct out_stream {
	char group[USC__RESULTS_PATH_SIZE];
	usc__h5_dataset *ds[ROW_SETS];
	uint64_t count, written;
	size_t width; /* bytes of one encoding */
} out_stream;

struct usc_results {
	usc__h5_file *f;
	char *path;
	char *temp;
	/* An add_kernel failed and could not remove what it had written. */
	bool broken;
	/* The temporary file may exist: abort removes it. */
	bool own_temp;
	/* Replace a regular file that is not a result file. */
	bool force;
	/* The descriptor holding PATH.lock (-1: not held). */
	int lock_fd;
	/* The temporary file's slot among those a signal removes (-1). */
	int watch;
	/*
	 * A kernel begun with usc_results_begin_kernel and not yet ended:
	 * its group, and its outputs (stream NULL: none).
	 */
	char stream_kernel[USC__RESULTS_PATH_SIZE];
	out_stream *stream;
	size_t stream_count;
};

static void stream_free(usc_results *w);

struct usc__h5_file *usc__results_file(usc_results *w)
{
	return w && !w->broken ? w->f : NULL;
}

static usc_status writer_new(const char *path, usc_results **out,
			     usc_error *err)
{
	usc_results *w = usc__calloc(1, sizeof *w);
	size_t len = strlen(path), size = len + 32;

	if (w) {
		w->path = usc__strndup(path, len);
		w->temp = usc__malloc(size);
	}
	if (!w || !w->path || !w->temp) {
		if (w) {
			usc__free(w->path);
			usc__free(w->temp);
		}
		usc__free(w);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	}
	snprintf(w->temp, size, "%s.tmp.%ld", path, (long)getpid());
	w->lock_fd = -1;
	w->watch = -1;
	*out = w;
	return USC_OK;
}

usc_status usc_results_check_target(const char *path, bool append,
				    unsigned flags, usc_error *err)
{
	return usc__results_target_check(path, append,
					 (flags & USC_RESULTS_FORCE) != 0, err);
}

const char *usc_results_temp_path(const usc_results *w)
{
	return w->temp;
}

void usc_results_abort(usc_results *w)
{
	if (!w)
		return;
	stream_free(w);
	usc__h5_file_close(w->f, NULL);
	if (w->own_temp)
		unlink(w->temp);
	usc__results_temp_forget(w->watch);
	usc__results_unlock(w->lock_fd);
	usc__free(w->path);
	usc__free(w->temp);
	usc__free(w);
}

usc_status usc_results_create(const char *path, usc_results **out,
			      usc_error *err)
{
	return usc_results_create_ex(path, 0, out, err);
}

usc_status usc_results_create_ex(const char *path, unsigned flags,
				 usc_results **out, usc_error *err)
{
	char now[32];
	usc_results *w;
	usc_status st;

	*out = NULL;
	st = usc__results_target_check(path, false,
				       (flags & USC_RESULTS_FORCE) != 0, err);
	if (st != USC_OK)
		return st;
	st = writer_new(path, &w, err);
	if (st != USC_OK)
		return st;
	w->force = (flags & USC_RESULTS_FORCE) != 0;
	usc__results_sweep_temps(path);
	w->own_temp = true;
	w->watch = usc__results_temp_watch(w->temp);
	st = usc__h5_file_create_checked(w->temp, &w->f, err);
	if (st == USC_OK)
		usc__h5_file_set_label(w->f, path);
	usc__results_now(now, sizeof now);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(w->f, "/", "schema_version",
					  USC_RESULTS_SCHEMA_VERSION, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(w->f, "/", "ulpscope_version",
					     usc_version(), err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(w->f, "/", "created", now, err);
	if (st == USC_OK)
		st = usc__h5_group_create(w->f, "/kernels", err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	*out = w;
	return USC_OK;
}

/*
 * Copies the bytes of the result file from to a new file to, its
 * temporary file; messages name from, the file the user knows.
 */
static usc_status copy_file(const char *from, const char *to, usc_error *err)
{
	enum { BUF = 1 << 16 };
	char *buf = usc__malloc(BUF);
	FILE *in = NULL, *out = NULL;
	usc_status st = USC_OK;
	size_t n;

	if (!buf)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", from);
	in = fopen(from, "rb");
	if (!in) {
		st = usc__fail(err, USC_EIO, "%s: cannot open: %s", from,
			       usc__io_error_text(errno));
		goto done;
	}
	out = fopen(to, "wb");
	if (!out) {
		st = usc__fail(err, USC_EIO,
			       "appending to %s: cannot create its temporary "
			       "file %s: %s",
			       from, to, usc__io_error_text(errno));
		goto done;
	}
	while ((n = fread(buf, 1, BUF, in)) > 0) {
		if (fwrite(buf, 1, n, out) != n) {
			st = usc__fail(err, USC_EIO,
				       "appending to %s: cannot copy it: %s",
				       from, usc__io_error_text(errno));
			goto done;
		}
	}
	if (ferror(in))
		st = usc__fail(err, USC_EIO, "%s: cannot read: %s", from,
			       usc__io_error_text(errno));
done:
	if (in)
		fclose(in);
	if (out && fclose(out) != 0 && st == USC_OK)
		st = usc__fail(err, USC_EIO,
			       "appending to %s: cannot copy it: %s", from,
			       usc__io_error_text(errno));
	if (st != USC_OK && out)
		unlink(to);
	usc__free(buf);
	return st;
}

usc_status usc_results_open_append(const char *path, usc_results **out,
				   usc_error *err)
{
	usc_results_reader *r = NULL;
	char now[32];
	usc_results *w;
	usc_status st;

	*out = NULL;
	st = usc__results_target_check(path, true, false, err);
	if (st != USC_OK)
		return st;
	st = writer_new(path, &w, err);
	if (st != USC_OK)
		return st;
	/*
	 * Held until the rename: another appender reads the file only
	 * after this one's kernels are in it.
	 */
	st = usc__results_lock(path, &w->lock_fd, err);
	if (st == USC_OK)
		st = usc_results_open(path, &r, err);
	usc_results_reader_close(r);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	usc__results_sweep_temps(path);
	w->own_temp = true;
	w->watch = usc__results_temp_watch(w->temp);
	st = copy_file(path, w->temp, err);
	if (st == USC_OK)
		st = usc__h5_file_open_rdwr(w->temp, &w->f, err);
	if (st == USC_OK)
		usc__h5_file_set_label(w->f, path);
	/*
	 * The copy says "complete" until the kernels are added: take that
	 * back first, so that the temporary file never looks whole.
	 */
	if (st == USC_OK)
		st = usc__h5_attr_delete(w->f, "/", "complete", err);
	usc__results_now(now, sizeof now);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(w->f, "/", "modified", now, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	*out = w;
	return USC_OK;
}

/* The store type of encodings w bytes wide. */
static usc__h5_store store_of_width(size_t w)
{
	return w == 1   ? USC__H5_STORE_U8
	       : w == 2 ? USC__H5_STORE_U16
	       : w == 4 ? USC__H5_STORE_U32
			: USC__H5_STORE_U64;
}

/* Writes the statistics of one error array as attributes of group g. */
static usc_status write_stats(usc__h5_file *f, const char *g,
			      const char *against, const usc_results_stats *s,
			      usc_error *err)
{
	char name[64];
	usc_status st;

	snprintf(name, sizeof name, "max_abs_ulp_%s", against);
	st = usc__h5_attr_set_double(f, g, name, s->max_abs, err);
	snprintf(name, sizeof name, "median_abs_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, name, s->median_abs, err);
	snprintf(name, sizeof name, "p99_abs_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, name, s->p99_abs, err);
	snprintf(name, sizeof name, "nan_count_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, name, s->nan_count, err);
	return st;
}

/*
 * An output's attribution (docs/attribution.md): top_ops and top_contrib
 * as [count, top_k], attr_total and attr_residual in the output's shape.
 */
static usc_status write_attr_output(usc__h5_file *f, const char *g,
				    const usc_results_output *o, size_t rank,
				    const int64_t *dims, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	int64_t kd[2];
	usc_status st;

	if (!o->top_ops || !o->top_contrib || !o->attr_total ||
	    !o->attr_residual)
		return usc__fail(err, USC_EINVAL,
				 "%s: attribution arrays missing", g);
	kd[0] = (int64_t)usc_tensor_count(o->device);
	kd[1] = (int64_t)o->top_k;
	usc__results_path(path, sizeof path, "%s/top_ops", g);
	st = usc__h5_write_numeric(f, path, USC__H5_STORE_U32, 2, kd,
				   o->top_ops, err);
	usc__results_path(path, sizeof path, "%s/top_contrib", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, 2, kd,
					   o->top_contrib, err);
	usc__results_path(path, sizeof path, "%s/attr_total", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, rank,
					   dims, o->attr_total, err);
	usc__results_path(path, sizeof path, "%s/attr_residual", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, rank,
					   dims, o->attr_residual, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "top_k", o->top_k, err);
	return st;
}

/*
 * A kernel's attribution table under kg/attribution: the op rows as an
 * ops table, the budget columns as f64 datasets beside it, the residual's
 * budget and the settings as attributes.
 */
static usc_status write_attribution(usc__h5_file *f, const char *kg,
				    const usc_results_attribution *a,
				    usc_error *err)
{
	static const char *const cols[] = {"mean_abs", "max_abs", "sum_abs",
					   "share"};
	char g[USC__RESULTS_PATH_SIZE], path[USC__RESULTS_PATH_SIZE];
	size_t n = a->op_count;
	usc__h5_op_row *rows;
	double *col;
	int64_t dim = (int64_t)n;
	usc_status st;

	rows = usc__calloc(n ? n : 1, sizeof *rows);
	col = usc__calloc(n ? n : 1, sizeof *col);
	if (!rows || !col) {
		usc__free(rows);
		usc__free(col);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const usc_results_op *op = &a->ops[i].op;

		rows[i].index = op->index;
		rows[i].name = op->name;
		rows[i].opcode = op->opcode;
		rows[i].element_type = op->element_type;
		rows[i].shape = op->shape;
		rows[i].op_name = op->op_name;
		rows[i].source_file = op->source_file;
		rows[i].source_line = op->source_line;
	}
	usc__results_path(g, sizeof g, "%s/attribution", kg);
	st = usc__h5_group_create(f, g, err);
	usc__results_path(path, sizeof path, "%s/ops", g);
	if (st == USC_OK)
		st = usc__h5_write_ops(f, path, rows, n, err);
	for (size_t c = 0; st == USC_OK && c < USC__ARRAY_LEN(cols); c++) {
		for (size_t i = 0; i < n; i++)
			col[i] = c == 0   ? a->ops[i].mean_abs
				 : c == 1 ? a->ops[i].max_abs
				 : c == 2 ? a->ops[i].sum_abs
					  : a->ops[i].share;
		usc__results_path(path, sizeof path, "%s/%s", g, cols[c]);
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, 1,
					   &dim, col, err);
	}
	if (st == USC_OK)
		st = usc__h5_attr_set_int(f, g, "top_k", a->top_k, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(f, g, "precision", a->precision, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "attributed", a->attributed,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "residual_mean_abs",
					     a->residual_mean_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "residual_max_abs",
					     a->residual_max_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "residual_sum_abs",
					     a->residual_sum_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_double(f, g, "residual_share",
					     a->residual_share, err);
	usc__free(rows);
	usc__free(col);
	return st;
}

/*
 * Starts output i of a kernel whose group is kg: its group, the device's
 * encodings (whole), the per-element datasets created empty for
 * write_rows (the envelope's and the classes' too when classified), and
 * the attributes known before the figures.
 */
static usc_status begin_output(usc__h5_file *f, const char *kg, size_t i,
			       const usc_tensor *device, bool classified,
			       out_stream *o, usc_error *err)
{
	static const char *const class_names[USC_CLASS_COUNT] = {
#define X_(e, name, v) [v] = name,
		USC_CLASS_LIST(X_)
#undef X_
	};
	char path[USC__RESULTS_PATH_SIZE], shape[64 + 21 * 32];
	usc_tensor_spec spec = usc_tensor_spec_of(device);
	size_t rank = usc_tensor_rank(device);
	const int64_t *dims = usc_tensor_dims(device);
	usc__h5_store enc;
	usc_status st;

	memset(o, 0, sizeof *o);
	o->count = usc_tensor_count(device);
	o->width = (size_t)usc_format_of(spec.dtype)->container_bytes;
	enc = store_of_width(o->width);
	usc__results_path(o->group, sizeof o->group, "%s/outputs/%zu", kg, i);
	st = usc__h5_group_create(f, o->group, err);
	usc__results_path(path, sizeof path, "%s/device", o->group);
	if (st == USC_OK)
		st = usc__h5_write_numeric_packed(f, path, enc,
						  USC__H5_PACK_RAW, rank,
						  dims,
						  usc_tensor_cdata(device),
						  err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, path, "dtype",
					     usc_dtype_name(spec.dtype), err);
	for (size_t j = 0; st == USC_OK && j < ROW_SETS; j++) {
		if (j >= ROWS_PLAIN && !classified)
			break;
		usc__results_path(path, sizeof path, "%s/%s", o->group,
				  row_names[j]);
		if (j == ROW_CLASS)
			st = usc__h5_create_enum_u8(f, path, row_pack(j),
						    rank, dims,
						    class_names,
						    USC_CLASS_COUNT, &o->ds[j],
						    err);
		else
			st = usc__h5_create_numeric(
				f, path,
				j == ROW_REFERENCE ? enc
				: row_is_u8(j)	? USC__H5_STORE_U8
								: USC__H5_STORE_F64,
				row_pack(j), rank, dims, &o->ds[j], err);
		if (st == USC_OK && j == ROW_REFERENCE)
			st = usc__h5_attr_set_string(f, path, "dtype",
						     usc_dtype_name(spec.dtype),
						     err);
	}
	usc_tensor_spec_format(&spec, shape, sizeof shape);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, o->group, "dtype",
					     usc_dtype_name(spec.dtype), err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, o->group, "shape", shape, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, o->group, "count", o->count, err);
	return st;
}

/* The next count elements of an output begun with begin_output. */
static usc_status output_rows(out_stream *o, uint64_t count,
			      const usc_results_rows *r, usc_error *err)
{
	const void *data[ROW_SETS] = {
		r->reference,	       r->oracle_mid,	  r->oracle_rad,
		r->ulp_error_oracle,   r->ulp_error_reference, r->undecided,
		r->envelope_lo,	       r->envelope_hi,	  r->envelope_flags,
		r->cls};
	usc_status st = USC_OK;

	if (count > o->count - o->written)
		return usc__fail(err, USC_ERANGE,
				 "%s: %llu more elements given, %llu left",
				 o->group, (unsigned long long)count,
				 (unsigned long long)(o->count - o->written));
	for (size_t j = 0; j < ROW_SETS; j++) {
		if (!o->ds[j])
			continue;
		if (!data[j])
			return usc__fail(err, USC_EINVAL,
					 "%s: the %s array is missing",
					 o->group, row_names[j]);
	}
	for (size_t j = 0; st == USC_OK && j < ROW_SETS; j++)
		if (o->ds[j])
			st = usc__h5_write_range(o->ds[j], o->written, count,
						 data[j], err);
	if (st == USC_OK)
		o->written += count;
	return st;
}

/* Closes an output's datasets (they stay in the file). */
static void close_output(out_stream *o)
{
	for (size_t j = 0; j < ROW_SETS; j++) {
		usc__h5_dataset_close(o->ds[j]);
		o->ds[j] = NULL;
	}
}

/*
 * Finishes an output: every element must have been written; then the
 * figures as attributes of its group (the class counts when classified).
 */
static usc_status end_output(usc__h5_file *f, out_stream *o,
			     const usc_results_summary *s,
			     const usc_classify_counts *counts,
			     usc_error *err)
{
	static const char *const class_names[USC_CLASS_COUNT] = {
#define X_(e, name, v) [v] = name,
		USC_CLASS_LIST(X_)
#undef X_
	};
	char attr[64];
	usc_status st;

	close_output(o);
	if (o->written != o->count)
		return usc__fail(err, USC_EINVAL,
				 "%s: %llu of its %llu elements were written",
				 o->group, (unsigned long long)o->written,
				 (unsigned long long)o->count);
	if (s->count != o->count)
		return usc__fail(err, USC_EINVAL,
				 "%s: a summary of %llu elements for %llu",
				 o->group, (unsigned long long)s->count,
				 (unsigned long long)o->count);
	st = write_stats(f, o->group, "oracle", &s->oracle, err);
	if (st == USC_OK)
		st = write_stats(f, o->group, "reference", &s->reference, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, o->group, "bit_exact_count",
					   s->bit_exact_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, o->group, "undecided_count",
					   s->undecided_count, err);
	for (size_t c = 0; st == USC_OK && counts && c < USC_CLASS_COUNT;
	     c++) {
		snprintf(attr, sizeof attr, "class_count_%s", class_names[c]);
		st = usc__h5_attr_set_uint(f, o->group, attr, counts->n[c],
					   err);
	}
	return st;
}

/* The element type column of an instruction's shape. */
static const char *element_type_of(const usc_hlo_shape *s)
{
	switch (s->kind) {
	case USC_HLO_SHAPE_TUPLE:
		return "tuple";
	case USC_HLO_SHAPE_TOKEN:
		return "token";
	default:
		return usc_dtype_name(s->dtype);
	}
}

static void free_rows(usc__h5_op_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		usc_hlo_text_free(rows[i].shape);
	usc__free(rows);
}

/*
 * The ops table of a computation: one row per instruction, in source
 * order.  The rows point into the IR (which outlives them) except for the
 * printed shapes, which free_rows frees.  The door never writes through
 * these pointers; the casts only drop const for its row type.
 */
static usc_status build_rows(const usc_hlo_computation *c,
			     usc__h5_op_row **out, size_t *n, usc_error *err)
{
	usc__h5_op_row *rows;
	usc_status st;

	*out = NULL;
	*n = 0;
	if (!c || c->instr_count == 0)
		return USC_OK;
	rows = usc__calloc(c->instr_count, sizeof *rows);
	if (!rows)
		return usc__fail(err, USC_ENOMEM,
				 "ops table of %s: out of memory", c->name);
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		const usc_hlo_metadata *md = in->metadata;

		rows[i].index = (int64_t)in->index;
		rows[i].name = (char *)in->name;
		rows[i].opcode = (char *)usc_hlo_opcode_name(in->opcode);
		rows[i].element_type = (char *)element_type_of(&in->shape);
		rows[i].op_name = md ? (char *)md->op_name : NULL;
		rows[i].source_file = md ? (char *)md->source_file : NULL;
		rows[i].source_line = md ? md->source_line : -1;
		st = usc_hlo_shape_print(&in->shape, &rows[i].shape, err);
		if (st != USC_OK) {
			free_rows(rows, i);
			return st;
		}
	}
	*out = rows;
	*n = c->instr_count;
	return USC_OK;
}

/*
 * Starts a kernel's group kg: what is known before its figures (the
 * HLO, the ops table, the outputs' group).
 */
static usc_status begin_kernel(usc__h5_file *f, const char *kg,
			       const usc_results_kernel *k,
			       const usc__h5_op_row *rows, size_t nrows,
			       usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	uint64_t elements = 0;
	usc_status st;

	for (size_t i = 0; i < k->output_count; i++)
		elements += usc_tensor_count(k->outputs[i].device);
	st = usc__h5_group_create(f, kg, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "hlo_file",
					     k->hlo_file ? k->hlo_file : "",
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "fusion",
					     k->fusion ? k->fusion : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, kg, "element_count", elements,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, kg, "output_count",
					   k->output_count, err);
	usc__results_path(path, sizeof path, "%s/hlo_text", kg);
	if (st == USC_OK)
		st = usc__h5_write_string(f, path,
					  k->hlo_text ? k->hlo_text : "", err);
	usc__results_path(path, sizeof path, "%s/ops", kg);
	if (st == USC_OK)
		st = usc__h5_write_ops(f, path, rows, nrows, err);
	usc__results_path(path, sizeof path, "%s/outputs", kg);
	if (st == USC_OK)
		st = usc__h5_group_create(f, path, err);
	return st;
}

/* Finishes a kernel's group: the attributes known after its figures. */
static usc_status end_kernel(usc__h5_file *f, const char *kg,
			     int64_t oracle_precision_max, const char *verdict,
			     const char *reason, const char *profile,
			     usc_error *err)
{
	usc_status st;

	st = usc__h5_attr_set_int(f, kg, "oracle_precision_max",
				  oracle_precision_max, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "verdict",
					     verdict ? verdict : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "verdict_reason",
					     reason ? reason : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "profile",
					     profile ? profile : "", err);
	return st;
}

/* Takes a half-written kernel out of the file again, or gives up on it. */
static void drop_kernel(usc_results *w, const char *kg)
{
	bool exists = false;

	usc__h5_exists(w->f, kg, &exists, NULL, NULL);
	if (exists && usc__h5_delete(w->f, kg, NULL) != USC_OK)
		w->broken = true;
}

/* The checks before a kernel is added or begun; *kg receives its group. */
static usc_status check_kernel(usc_results *w, const usc_results_kernel *k,
			       char *kg, size_t cap, usc_error *err)
{
	bool exists = false;
	usc_status st;

	if (w->broken)
		return usc__fail(err, USC_EINVAL,
				 "%s: an earlier failure left the file "
				 "unusable; abort it",
				 w->path);
	if (w->stream)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s' is still being written",
				 w->path, w->stream_kernel + strlen("/kernels/"));
	st = usc__results_check_name(w->path, k->name, err);
	if (st != USC_OK)
		return st;
	usc__results_path(kg, cap, "/kernels/%s", k->name);
	usc__h5_exists(w->f, kg, &exists, NULL, NULL);
	if (exists)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s' is already in the file",
				 w->path, k->name);
	if (k->output_count && !k->outputs)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s': no outputs given", w->path,
				 k->name);
	return USC_OK;
}

/* Writes one whole output (usc_results_add_kernel). */
static usc_status add_output(usc__h5_file *f, const char *kg, size_t i,
			     const usc_results_output *o,
			     const usc_results_summary *s, usc_error *err)
{
	usc_results_rows rows;
	usc_classify_counts counts;
	out_stream os;
	uint64_t n = usc_tensor_count(o->device);
	usc_status st;

	rows.reference = usc_tensor_cdata(o->reference);
	rows.oracle_mid = o->oracle_mid;
	rows.oracle_rad = o->oracle_rad;
	rows.ulp_error_oracle = o->ulp_error_oracle;
	rows.ulp_error_reference = o->ulp_error_reference;
	rows.undecided = o->undecided;
	rows.envelope_lo = o->envelope_lo;
	rows.envelope_hi = o->envelope_hi;
	rows.envelope_flags = o->envelope_flags;
	rows.cls = o->cls;
	memset(&counts, 0, sizeof counts);
	for (uint64_t k = 0; o->cls && k < n; k++)
		if (o->cls[k] < USC_CLASS_COUNT)
			counts.n[o->cls[k]]++;
	st = begin_output(f, kg, i, o->device, o->cls != NULL, &os, err);
	if (st == USC_OK)
		st = output_rows(&os, n, &rows, err);
	close_output(&os);
	if (st == USC_OK && o->top_k)
		st = write_attr_output(f, os.group, o,
				       usc_tensor_rank(o->device),
				       usc_tensor_dims(o->device), err);
	if (st == USC_OK)
		st = end_output(f, &os, s, o->cls ? &counts : NULL, err);
	return st;
}

usc_status usc_results_add_kernel(usc_results *w, const usc_results_kernel *k,
				  usc_error *err)
{
	char kg[USC__RESULTS_PATH_SIZE], what[USC__RESULTS_PATH_SIZE + 64];
	usc_results_summary *sums = NULL;
	usc__h5_op_row *rows = NULL;
	size_t nrows = 0;
	usc_status st;

	st = check_kernel(w, k, kg, sizeof kg, err);
	if (st != USC_OK)
		return st;
	for (size_t i = 0; i < k->output_count; i++) {
		snprintf(what, sizeof what, "%s: kernel '%s', output %zu",
			 w->path, k->name, i);
		st = usc__results_check_output(&k->outputs[i], what, err);
		if (st != USC_OK)
			return st;
	}
	if (k->output_count) {
		sums = usc__reallocarray(NULL, k->output_count, sizeof *sums);
		if (!sums)
			return usc__fail(err, USC_ENOMEM,
					 "%s: kernel '%s': out of memory",
					 w->path, k->name);
	}
	for (size_t i = 0; i < k->output_count; i++) {
		st = usc_results_summarize(&k->outputs[i], &sums[i], err);
		if (st != USC_OK)
			goto done;
	}
	st = build_rows(k->computation, &rows, &nrows, err);
	if (st != USC_OK)
		goto done;
	st = begin_kernel(w->f, kg, k, rows, nrows, err);
	for (size_t i = 0; st == USC_OK && i < k->output_count; i++)
		st = add_output(w->f, kg, i, &k->outputs[i], &sums[i], err);
	if (st == USC_OK && k->attribution)
		st = write_attribution(w->f, kg, k->attribution, err);
	if (st == USC_OK)
		st = end_kernel(w->f, kg, k->oracle_precision_max, k->verdict,
				k->verdict_reason, k->profile, err);
	if (st != USC_OK)
		drop_kernel(w, kg);
done:
	free_rows(rows, nrows);
	usc__free(sums);
	return st;
}

/* Closes a streamed kernel's datasets and forgets it. */
static void stream_free(usc_results *w)
{
	for (size_t i = 0; i < w->stream_count; i++)
		close_output(&w->stream[i]);
	usc__free(w->stream);
	w->stream = NULL;
	w->stream_count = 0;
}

/* A streamed kernel failed: out of the file again, the writer free. */
static usc_status stream_fail(usc_results *w, usc_status st)
{
	stream_free(w);
	drop_kernel(w, w->stream_kernel);
	return st;
}

usc_status usc_results_begin_kernel(usc_results *w,
				    const usc_results_kernel *k,
				    bool classified, usc_error *err)
{
	usc__h5_op_row *rows = NULL;
	size_t nrows = 0;
	usc_status st;

	st = check_kernel(w, k, w->stream_kernel, sizeof w->stream_kernel,
			  err);
	if (st != USC_OK)
		return st;
	if (k->attribution)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s': an attribution is added "
				 "with usc_results_add_kernel only",
				 w->path, k->name);
	for (size_t i = 0; i < k->output_count; i++) {
		const usc_format *fmt = k->outputs[i].device
						? usc_format_of(usc_tensor_dtype(
							  k->outputs[i].device))
						: NULL;

		if (!k->outputs[i].device)
			return usc__fail(err, USC_EINVAL,
					 "%s: kernel '%s', output %zu: the "
					 "device tensor is missing",
					 w->path, k->name, i);
		if (!fmt || fmt->kind == USC_KIND_COMPLEX ||
		    fmt->kind == USC_KIND_OTHER)
			return usc__fail(err, USC_EUNSUPPORTED,
					 "%s: kernel '%s', output %zu: outputs "
					 "of type %s are not supported by "
					 "result schema version %d",
					 w->path, k->name, i,
					 usc_dtype_name(usc_tensor_dtype(
						 k->outputs[i].device)),
					 USC_RESULTS_SCHEMA_VERSION);
	}
	w->stream = usc__calloc(k->output_count ? k->output_count : 1,
				sizeof *w->stream);
	if (!w->stream)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory",
				 w->path);
	w->stream_count = k->output_count;
	st = build_rows(k->computation, &rows, &nrows, err);
	if (st == USC_OK)
		st = begin_kernel(w->f, w->stream_kernel, k, rows, nrows, err);
	for (size_t i = 0; st == USC_OK && i < k->output_count; i++)
		st = begin_output(w->f, w->stream_kernel, i,
				  k->outputs[i].device, classified,
				  &w->stream[i], err);
	free_rows(rows, nrows);
	return st == USC_OK ? USC_OK : stream_fail(w, st);
}

usc_status usc_results_write_rows(usc_results *w, size_t output,
				  uint64_t count, const usc_results_rows *rows,
				  usc_error *err)
{
	usc_status st;

	if (!w->stream)
		return usc__fail(err, USC_EINVAL,
				 "%s: no kernel is being written", w->path);
	if (output >= w->stream_count)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s' has %zu outputs, not %zu",
				 w->path, w->stream_kernel + strlen("/kernels/"),
				 w->stream_count, output + 1);
	st = output_rows(&w->stream[output], count, rows, err);
	return st == USC_OK ? USC_OK : stream_fail(w, st);
}

usc_status usc_results_end_kernel(usc_results *w,
				  const usc_results_kernel_end *e,
				  usc_error *err)
{
	usc_status st = USC_OK;

	if (!w->stream)
		return usc__fail(err, USC_EINVAL,
				 "%s: no kernel is being written", w->path);
	for (size_t i = 0; st == USC_OK && i < w->stream_count; i++)
		st = end_output(w->f, &w->stream[i], &e->summaries[i],
				e->class_counts ? &e->class_counts[i] : NULL,
				err);
	if (st == USC_OK)
		st = end_kernel(w->f, w->stream_kernel,
				e->oracle_precision_max, e->verdict,
				e->verdict_reason, e->profile, err);
	if (st != USC_OK)
		return stream_fail(w, st);
	stream_free(w);
	return USC_OK;
}

/* The signatures table of a kernel, under g (docs/results.md). */
static usc_status write_signatures(usc__h5_file *f, const char *g,
				   const usc_results_signatures *s,
				   usc_error *err)
{
	size_t n = s->row_count, m = n ? n : 1;
	int64_t dim = (int64_t)n;
	const char **str = usc__calloc(m, sizeof *str);
	uint64_t *u = usc__calloc(m, sizeof *u);
	double *d = usc__calloc(m, sizeof *d);
	uint8_t *b = usc__calloc(m, 1);
	char path[USC__RESULTS_PATH_SIZE];
	usc_status st;

	if (!str || !u || !d || !b) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = usc__h5_group_create(f, g, err);
	for (int c = 0; st == USC_OK && c < 3; c++) {
		for (size_t i = 0; i < n; i++)
			str[i] = c == 0	  ? s->rows[i].op
				 : c == 1 ? s->rows[i].mutation
					  : s->rows[i].detail;
		usc__results_path(path, sizeof path, "%s/%s", g,
				  c == 0 ? "op" : c == 1 ? "mutation" : "detail");
		st = usc__h5_write_strings(f, path, str, n, err);
	}
	for (int c = 0; st == USC_OK && c < 2; c++) {
		for (size_t i = 0; i < n; i++)
			u[i] = c == 0 ? s->rows[i].reproduced
				      : s->rows[i].differing_reproduced;
		usc__results_path(path, sizeof path, "%s/%s", g,
				  c == 0 ? "reproduced" : "differing_reproduced");
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_U64, 1, &dim,
					   u, err);
	}
	for (size_t i = 0; i < n; i++) {
		d[i] = s->rows[i].median_ulps;
		b[i] = s->rows[i].tied_best;
	}
	usc__results_path(path, sizeof path, "%s/median_ulps", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, 1, &dim,
					   d, err);
	usc__results_path(path, sizeof path, "%s/tied_best", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_U8, 1, &dim, b,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "verdict",
					     s->verdict ? s->verdict : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "elements", s->elements, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "differing", s->differing, err);
done:
	usc__free(str);
	usc__free(u);
	usc__free(d);
	usc__free(b);
	return st;
}

usc_status usc_results_add_signatures(usc_results *w, const char *kernel,
				      const usc_results_signatures *s,
				      usc_error *err)
{
	char kg[USC__RESULTS_PATH_SIZE], g[USC__RESULTS_PATH_SIZE];
	bool exists = false;
	usc_status st;

	if (w->broken)
		return usc__fail(err, USC_EINVAL,
				 "%s: an earlier failure left the file "
				 "unusable; abort it",
				 w->path);
	if (!s || (s->row_count && !s->rows))
		return usc__fail(err, USC_EINVAL, "%s: no signatures given",
				 w->path);
	st = usc__results_check_name(w->path, kernel, err);
	if (st != USC_OK)
		return st;
	usc__results_path(kg, sizeof kg, "/kernels/%s", kernel);
	usc__h5_exists(w->f, kg, &exists, NULL, NULL);
	if (!exists)
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no kernel '%s' (write it with ulpscope "
				 "check --out first)",
				 w->path, kernel);
	usc__results_path(g, sizeof g, "%s/signatures", kg);
	usc__h5_exists(w->f, g, &exists, NULL, NULL);
	if (exists)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s' already has signatures",
				 w->path, kernel);
	st = write_signatures(w->f, g, s, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(w->f, kg, "signature",
					     s->signature ? s->signature : "",
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(w->f, kg, "culprit_op",
					     s->culprit_op ? s->culprit_op : "",
					     err);
	if (st != USC_OK) {
		/* Take the half-written table out again, or give up. */
		usc__h5_exists(w->f, g, &exists, NULL, NULL);
		if (exists && usc__h5_delete(w->f, g, NULL) != USC_OK)
			w->broken = true;
		(void)usc__h5_attr_delete(w->f, kg, "signature", NULL);
		(void)usc__h5_attr_delete(w->f, kg, "culprit_op", NULL);
	}
	return st;
}

usc_status usc_results_close(usc_results *w, usc_error *err)
{
	usc_status st;

	if (!w)
		return USC_OK;
	if (w->stream) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: not written: kernel '%s' was begun and "
			       "not ended",
			       w->path, w->stream_kernel + strlen("/kernels/"));
		usc_results_abort(w);
		return st;
	}
	if (w->broken) {
		st = usc__fail(err, USC_EIO,
			       "%s: not written: an earlier failure left a "
			       "kernel half written",
			       w->path);
		usc_results_abort(w);
		return st;
	}
	/* Set last: a reader takes the file for whole only with it. */
	st = usc__h5_attr_set_int(w->f, "/", "complete", 1, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	st = usc__h5_file_close(w->f, err);
	w->f = NULL;
	/*
	 * A new file takes the lock only now, for the last look at the
	 * target and the rename, so that it does not land in the middle of
	 * an append; what was at the path may have changed since create.
	 */
	if (st == USC_OK && w->lock_fd < 0)
		st = usc__results_lock(w->path, &w->lock_fd, err);
	if (st == USC_OK)
		st = usc__results_target_check(w->path, false, w->force, err);
	if (st == USC_OK && rename(w->temp, w->path) != 0)
		st = usc__fail(err, USC_EIO, "%s: cannot rename %s into place: %s",
			       w->path, w->temp, usc__io_error_text(errno));
	if (st != USC_OK)
		unlink(w->temp);
	usc__results_temp_forget(w->watch);
	usc__results_unlock(w->lock_fd);
	usc__free(w->path);
	usc__free(w->temp);
	usc__free(w);
	return st;
}

usc_status usc__results_rows_done(usc_results *w, usc_error *err)
{
	if (!w->stream)
		return usc__fail(err, USC_EINVAL,
				 "%s: no kernel is being written", w->path);
	for (size_t i = 0; i < w->stream_count; i++) {
		const out_stream *o = &w->stream[i];

		if (o->written != o->count)
			return usc__fail(err, USC_EINVAL,
					 "%s: %llu of its %llu elements were "
					 "written",
					 o->group,
					 (unsigned long long)o->written,
					 (unsigned long long)o->count);
	}
	/*
	 * Closing a dataset writes the chunks its cache still holds (their
	 * checksums and compression): end_output's close is then a no-op,
	 * and as every element is in, a later row is refused as one too
	 * many.
	 */
	for (size_t i = 0; i < w->stream_count; i++)
		close_output(&w->stream[i]);
	return USC_OK;
}

usc__h5_file *usc__results_writer_file(usc_results *w)
{
	return w->f;
}
