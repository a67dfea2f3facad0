/*
 * The result file's writer (see ulpscope/results.h and docs/results.md).
 *
 * Everything is written to "PATH.tmp.PID" and renamed over PATH by
 * usc_results_close, after the root's "complete" attribute has been set:
 * rename is atomic, so PATH is always either the old file or the whole new
 * one, and a leftover temporary file lacks "complete" and is refused by
 * every reader.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/h5_door.h"
#include "store/results_internal.h"
#include "ulpscope/ulpscope.h"

struct usc_results {
	usc__h5_file *f;
	char *path;
	char *temp;
	/* An add_kernel failed and could not remove what it had written. */
	bool broken;
	/* The temporary file may exist: abort removes it. */
	bool own_temp;
};

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
	*out = w;
	return USC_OK;
}

const char *usc_results_temp_path(const usc_results *w)
{
	return w->temp;
}

void usc_results_abort(usc_results *w)
{
	if (!w)
		return;
	usc__h5_file_close(w->f, NULL);
	if (w->own_temp)
		unlink(w->temp);
	usc__free(w->path);
	usc__free(w->temp);
	usc__free(w);
}

usc_status usc_results_create(const char *path, usc_results **out,
			      usc_error *err)
{
	char now[32];
	usc_results *w;
	usc_status st;

	*out = NULL;
	st = writer_new(path, &w, err);
	if (st != USC_OK)
		return st;
	w->own_temp = true;
	st = usc__h5_file_create_checked(w->temp, &w->f, err);
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

/* Copies the bytes of file from to a new file to. */
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
			       strerror(errno));
		goto done;
	}
	out = fopen(to, "wb");
	if (!out) {
		st = usc__fail(err, USC_EIO, "%s: cannot create: %s", to,
			       strerror(errno));
		goto done;
	}
	while ((n = fread(buf, 1, BUF, in)) > 0) {
		if (fwrite(buf, 1, n, out) != n) {
			st = usc__fail(err, USC_EIO, "%s: cannot write: %s",
				       to, strerror(errno));
			goto done;
		}
	}
	if (ferror(in))
		st = usc__fail(err, USC_EIO, "%s: cannot read: %s", from,
			       strerror(errno));
done:
	if (in)
		fclose(in);
	if (out && fclose(out) != 0 && st == USC_OK)
		st = usc__fail(err, USC_EIO, "%s: cannot write: %s", to,
			       strerror(errno));
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
	st = usc_results_open(path, &r, err);
	usc_results_reader_close(r);
	if (st != USC_OK)
		return st;
	st = writer_new(path, &w, err);
	if (st != USC_OK)
		return st;
	w->own_temp = true;
	st = copy_file(path, w->temp, err);
	if (st == USC_OK)
		st = usc__h5_file_open_rdwr(w->temp, &w->f, err);
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
static usc__h5_store store_of_width(int w)
{
	return w == 1   ? USC__H5_STORE_U8
	       : w == 2 ? USC__H5_STORE_U16
	       : w == 4 ? USC__H5_STORE_U32
			: USC__H5_STORE_U64;
}

/* Writes one tensor's encodings as dataset name under group g. */
static usc_status write_encodings(usc__h5_file *f, const char *g,
				  const char *name, const usc_tensor *t,
				  usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	usc_dtype dt = usc_tensor_dtype(t);
	usc_status st;

	usc__results_path(path, sizeof path, "%s/%s", g, name);
	st = usc__h5_write_numeric(
		f, path, store_of_width(usc_format_of(dt)->container_bytes),
		usc_tensor_rank(t), usc_tensor_dims(t), usc_tensor_cdata(t),
		err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, path, "dtype",
					     usc_dtype_name(dt), err);
	return st;
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
 * Writes a classified output's envelope, its flags and the class of each
 * element (an HDF5 enum whose names are the classes'), and the count of
 * each class as attributes "class_count_<name>" of the output's group.
 */
static usc_status write_classes(usc__h5_file *f, const char *g,
				const usc_results_output *o, size_t rank,
				const int64_t *dims, usc_error *err)
{
	static const char *const names[USC_CLASS_COUNT] = {
#define X_(e, name, v) [v] = name,
		USC_CLASS_LIST(X_)
#undef X_
	};
	char path[USC__RESULTS_PATH_SIZE], attr[64];
	uint64_t n = usc_tensor_count(o->device), counts[USC_CLASS_COUNT];
	usc_status st;

	usc__results_path(path, sizeof path, "%s/envelope_lo", g);
	st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, rank, dims,
				   o->envelope_lo, err);
	usc__results_path(path, sizeof path, "%s/envelope_hi", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, rank,
					   dims, o->envelope_hi, err);
	usc__results_path(path, sizeof path, "%s/envelope_flags", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_U8, rank,
					   dims, o->envelope_flags, err);
	usc__results_path(path, sizeof path, "%s/class", g);
	if (st == USC_OK)
		st = usc__h5_write_enum_u8(f, path, rank, dims, o->cls, names,
					   USC_CLASS_COUNT, err);
	memset(counts, 0, sizeof counts);
	for (uint64_t k = 0; k < n; k++)
		if (o->cls[k] < USC_CLASS_COUNT)
			counts[o->cls[k]]++;
	for (size_t c = 0; st == USC_OK && c < USC_CLASS_COUNT; c++) {
		snprintf(attr, sizeof attr, "class_count_%s", names[c]);
		st = usc__h5_attr_set_uint(f, g, attr, counts[c], err);
	}
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

/* Writes output i of a kernel whose group is kg. */
static usc_status write_output(usc__h5_file *f, const char *kg, size_t i,
			       const usc_results_output *o,
			       const usc_results_summary *s, usc_error *err)
{
	static const char *const names[] = {"oracle_mid", "oracle_rad",
					    "ulp_error_oracle",
					    "ulp_error_reference"};
	const double *arrays[] = {o->oracle_mid, o->oracle_rad,
				  o->ulp_error_oracle, o->ulp_error_reference};
	char g[USC__RESULTS_PATH_SIZE], path[USC__RESULTS_PATH_SIZE];
	char shape[64 + 21 * 32];
	usc_tensor_spec spec = usc_tensor_spec_of(o->device);
	size_t rank = usc_tensor_rank(o->device);
	const int64_t *dims = usc_tensor_dims(o->device);
	usc_status st;

	usc__results_path(g, sizeof g, "%s/outputs/%zu", kg, i);
	st = usc__h5_group_create(f, g, err);
	if (st == USC_OK)
		st = write_encodings(f, g, "device", o->device, err);
	if (st == USC_OK)
		st = write_encodings(f, g, "reference", o->reference, err);
	for (size_t j = 0; st == USC_OK && j < USC__ARRAY_LEN(names); j++) {
		usc__results_path(path, sizeof path, "%s/%s", g, names[j]);
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_F64, rank,
					   dims, arrays[j], err);
	}
	usc__results_path(path, sizeof path, "%s/undecided", g);
	if (st == USC_OK)
		st = usc__h5_write_numeric(f, path, USC__H5_STORE_U8, rank,
					   dims, o->undecided, err);
	if (st == USC_OK && o->cls)
		st = write_classes(f, g, o, rank, dims, err);
	if (st == USC_OK && o->top_k)
		st = write_attr_output(f, g, o, rank, dims, err);
	usc_tensor_spec_format(&spec, shape, sizeof shape);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "dtype",
					     usc_dtype_name(spec.dtype), err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, g, "shape", shape, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "count", s->count, err);
	if (st == USC_OK)
		st = write_stats(f, g, "oracle", &s->oracle, err);
	if (st == USC_OK)
		st = write_stats(f, g, "reference", &s->reference, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "bit_exact_count",
					   s->bit_exact_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, g, "undecided_count",
					   s->undecided_count, err);
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

/* Writes everything of a kernel under group kg. */
static usc_status write_kernel(usc__h5_file *f, const char *kg,
			       const usc_results_kernel *k,
			       const usc_results_summary *sums,
			       const usc__h5_op_row *rows, size_t nrows,
			       usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	uint64_t elements = 0;
	usc_status st;

	for (size_t i = 0; i < k->output_count; i++)
		elements += sums[i].count;
	st = usc__h5_group_create(f, kg, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "hlo_file",
					     k->hlo_file ? k->hlo_file : "",
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "fusion",
					     k->fusion ? k->fusion : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_int(f, kg, "oracle_precision_max",
					  k->oracle_precision_max, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, kg, "element_count", elements,
					   err);
	if (st == USC_OK)
		st = usc__h5_attr_set_uint(f, kg, "output_count",
					   k->output_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "verdict",
					     k->verdict ? k->verdict : "",
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(
			f, kg, "verdict_reason",
			k->verdict_reason ? k->verdict_reason : "", err);
	if (st == USC_OK)
		st = usc__h5_attr_set_string(f, kg, "profile",
					     k->profile ? k->profile : "", err);
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
	for (size_t i = 0; st == USC_OK && i < k->output_count; i++)
		st = write_output(f, kg, i, &k->outputs[i], &sums[i], err);
	if (st == USC_OK && k->attribution)
		st = write_attribution(f, kg, k->attribution, err);
	return st;
}

usc_status usc_results_add_kernel(usc_results *w, const usc_results_kernel *k,
				  usc_error *err)
{
	char kg[USC__RESULTS_PATH_SIZE], what[USC__RESULTS_PATH_SIZE + 64];
	usc_results_summary *sums = NULL;
	usc__h5_op_row *rows = NULL;
	size_t nrows = 0;
	bool exists = false;
	usc_status st;

	if (w->broken)
		return usc__fail(err, USC_EINVAL,
				 "%s: an earlier failure left the file "
				 "unusable; abort it",
				 w->path);
	st = usc__results_check_name(w->path, k->name, err);
	if (st != USC_OK)
		return st;
	usc__results_path(kg, sizeof kg, "/kernels/%s", k->name);
	usc__h5_exists(w->f, kg, &exists, NULL, NULL);
	if (exists)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s' is already in the file",
				 w->path, k->name);
	if (k->output_count && !k->outputs)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel '%s': no outputs given", w->path,
				 k->name);
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
	st = write_kernel(w->f, kg, k, sums, rows, nrows, err);
	if (st != USC_OK) {
		/* Take the half-written kernel out again, or give up. */
		usc__h5_exists(w->f, kg, &exists, NULL, NULL);
		if (exists && usc__h5_delete(w->f, kg, NULL) != USC_OK)
			w->broken = true;
	}
done:
	free_rows(rows, nrows);
	usc__free(sums);
	return st;
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
	if (st == USC_OK && rename(w->temp, w->path) != 0)
		st = usc__fail(err, USC_EIO, "%s: cannot rename %s into place: %s",
			       w->path, w->temp, strerror(errno));
	if (st != USC_OK)
		unlink(w->temp);
	usc__free(w->path);
	usc__free(w->temp);
	usc__free(w);
	return st;
}
