/*
 * The result file's reader (see ulpscope/results.h and docs/results.md).
 *
 * A file is accepted only when its root says schema_version 1 and
 * complete 1.  Every dataset is checked for the element type and shape
 * schema version 1 gives it before its bytes are read, so a file written
 * by something else fails with a message naming the dataset rather than
 * being misread.  Names the reader does not know are ignored: later
 * stages add them without a new schema version.
 *
 * Beyond types and shapes, what is read is checked against the rest of
 * the file (results_validate.c): the ops table and the outputs' shapes
 * against the kernel's own HLO text, counts and statistics against the
 * datasets they summarize, values against what the schema promises.  The
 * kernel's HLO is parsed once and kept for the outputs that follow.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "store/h5_door.h"
#include "ulpscope/classify.h"
#include "store/results_internal.h"

struct usc_results_reader {
	usc__h5_file *f;
	char *path;
	char *version;
	char *created;
	usc_results_file_info info;
	char **kernels;
	size_t kernel_count;
	/* The last kernel whose HLO text was parsed, and its computation
	 * (NULL when the text is empty). */
	char *hlo_kernel;
	usc_hlo_file *hlo;
	const usc_hlo_computation *entry;
};

void usc_results_reader_close(usc_results_reader *r)
{
	if (!r)
		return;
	usc__h5_file_close(r->f, NULL);
	usc__h5_names_free(r->kernels, r->kernel_count);
	usc__free(r->path);
	usc__free(r->version);
	usc__free(r->created);
	usc__free(r->hlo_kernel);
	usc_hlo_file_destroy(r->hlo);
	usc__free(r);
}

/* Checks the root's schema_version and complete attributes. */
static usc_status check_root(usc_results_reader *r, usc_error *err)
{
	int64_t v = 0, complete = 0;
	usc_status st;

	st = usc__h5_attr_get_int(r->f, "/", "schema_version", &v, err);
	if (st == USC_ENOTFOUND)
		return usc__fail(err, USC_EPARSE,
				 "%s: not a ulpscope result file (no "
				 "schema_version attribute)",
				 r->path);
	if (st != USC_OK)
		return st;
	if (v != USC_RESULTS_SCHEMA_VERSION)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: result schema version %lld is not "
				 "supported (this ulpscope reads version %d)",
				 r->path, (long long)v,
				 USC_RESULTS_SCHEMA_VERSION);
	r->info.schema_version = v;
	st = usc__h5_attr_get_int(r->f, "/", "complete", &complete, err);
	if (st == USC_ENOTFOUND || (st == USC_OK && complete != 1))
		return usc__fail(err, USC_EPARSE,
				 "%s: incomplete result file: its writer did "
				 "not finish (no 'complete' attribute)",
				 r->path);
	return st;
}

usc_status usc_results_open(const char *path, usc_results_reader **out,
			    usc_error *err)
{
	usc_results_reader *r;
	usc_status st;

	*out = NULL;
	r = usc__calloc(1, sizeof *r);
	if (r)
		r->path = usc__strndup(path, strlen(path));
	if (!r || !r->path) {
		usc__free(r);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	}
	st = usc__h5_file_open_read(path, &r->f, err);
	if (st == USC_OK)
		st = check_root(r, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(r->f, "/", "ulpscope_version",
					     &r->version, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(r->f, "/", "created", &r->created,
					     err);
	if (st == USC_OK)
		st = usc__h5_group_list(r->f, "/kernels", &r->kernels,
					&r->kernel_count, err);
	if (st != USC_OK) {
		usc_results_reader_close(r);
		return st;
	}
	r->info.ulpscope_version = r->version;
	r->info.created = r->created;
	*out = r;
	return USC_OK;
}

const usc_results_file_info *
usc_results_reader_info(const usc_results_reader *r)
{
	return &r->info;
}

size_t usc_results_kernel_count(const usc_results_reader *r)
{
	return r->kernel_count;
}

const char *usc_results_kernel_name(const usc_results_reader *r, size_t i)
{
	return i < r->kernel_count ? r->kernels[i] : NULL;
}

/* Finds a kernel's group; its path goes to kg. */
static usc_status find_kernel(usc_results_reader *r, const char *name,
			      char *kg, size_t size, usc_error *err)
{
	if (strlen(name) > USC_RESULTS_MAX_NAME)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel name is longer than %d bytes",
				 r->path, USC_RESULTS_MAX_NAME);
	for (size_t i = 0; i < r->kernel_count; i++) {
		if (strcmp(r->kernels[i], name) == 0) {
			usc__results_path(kg, size, "/kernels/%s", name);
			return USC_OK;
		}
	}
	return usc__fail(err, USC_ENOTFOUND, "%s: no kernel '%s'", r->path,
			 name);
}

/*
 * Parses kernel name's HLO text (text, len; kg its group) into the
 * reader's cache unless it is there already.  An empty text leaves
 * r->entry NULL: nothing to check against.
 */
static usc_status load_hlo(usc_results_reader *r, const char *name,
			   const char *kg, const char *text, size_t len,
			   usc_error *err)
{
	char where[USC__RESULTS_PATH_SIZE + 1024];
	usc_hlo_file *file = NULL;
	usc_status st;

	if (r->hlo_kernel && strcmp(r->hlo_kernel, name) == 0)
		return USC_OK;
	usc__free(r->hlo_kernel);
	usc_hlo_file_destroy(r->hlo);
	r->hlo_kernel = NULL;
	r->hlo = NULL;
	r->entry = NULL;
	if (len > 0) {
		snprintf(where, sizeof where, "%s:%s/hlo_text", r->path, kg);
		st = usc_hlo_parse(text, len, where, &file, err);
		if (st != USC_OK)
			return st;
		if (usc_hlo_file_module_count(file) != 1 ||
		    !usc_hlo_file_module(file, 0)->entry) {
			usc_hlo_file_destroy(file);
			return usc__fail(err, USC_EPARSE,
					 "%s: expected one HLO module with an "
					 "ENTRY computation",
					 where);
		}
		r->entry = usc_hlo_file_module(file, 0)->entry;
	}
	r->hlo = file;
	r->hlo_kernel = usc__strndup(name, strlen(name));
	if (!r->hlo_kernel) {
		usc_hlo_file_destroy(r->hlo);
		r->hlo = NULL;
		r->entry = NULL;
		return usc__fail(err, USC_ENOMEM, "%s: out of memory",
				 r->path);
	}
	return USC_OK;
}

/* The same, reading the text from the file first. */
static usc_status load_hlo_of(usc_results_reader *r, const char *name,
			      const char *kg, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	char *text = NULL;
	size_t len = 0;
	usc_status st;

	if (r->hlo_kernel && strcmp(r->hlo_kernel, name) == 0)
		return USC_OK;
	usc__results_path(path, sizeof path, "%s/hlo_text", kg);
	st = usc__h5_read_string(r->f, path, &text, &len, err);
	if (st == USC_OK)
		st = load_hlo(r, name, kg, text, len, err);
	usc__free(text);
	return st;
}

static usc_status device_count(usc_results_reader *r, const char *kg,
			       size_t i, uint64_t *count, usc_error *err);

/*
 * The outputs group of kernel kg holds exactly the groups 0 ..
 * output_count - 1, and their device datasets together element_count
 * elements.
 */
static usc_status check_outputs(usc_results_reader *r, const char *kg,
				const usc_results_kernel_info *k,
				usc_error *err)
{
	char g[USC__RESULTS_PATH_SIZE];
	char **names = NULL;
	size_t n = 0;
	uint64_t total = 0;
	usc_status st;

	usc__results_path(g, sizeof g, "%s/outputs", kg);
	st = usc__h5_group_list(r->f, g, &names, &n, err);
	if (st == USC_ENOTFOUND && k->output_count == 0)
		return USC_OK;
	if (st != USC_OK)
		return st;
	if (n != k->output_count)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: holds %zu output group%s, but "
			       "attribute 'output_count' of %s is %zu",
			       r->path, g, n, n == 1 ? "" : "s", kg,
			       k->output_count);
	/*
	 * As many members as outputs, and each of 0 .. n-1 among them (a
	 * group written by another tool may list them by name: 0, 1, 10, 2).
	 */
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		char want[32];
		uint64_t c = 0;
		bool found = false;

		snprintf(want, sizeof want, "%zu", i);
		for (size_t j = 0; !found && j < n; j++)
			found = strcmp(names[j], want) == 0;
		if (!found) {
			st = usc__fail(err, USC_EPARSE,
				       "%s:%s: no output group '%s' (it holds "
				       "%zu members, expected 0 .. %zu)",
				       r->path, g, want, n, n - 1);
			break;
		}
		st = device_count(r, kg, i, &c, err);
		total += c;
	}
	if (st == USC_OK && total != k->element_count)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: attribute 'element_count' is %llu, but "
			       "its outputs hold %llu elements",
			       r->path, kg,
			       (unsigned long long)k->element_count,
			       (unsigned long long)total);
	usc__h5_names_free(names, n);
	return st;
}

void usc_results_kernel_info_free(usc_results_kernel_info *k)
{
	if (!k)
		return;
	usc__free(k->name);
	usc__free(k->hlo_file);
	usc__free(k->fusion);
	usc__free(k->verdict);
	usc__free(k->verdict_reason);
	usc__free(k->profile);
	usc__free(k->hlo_text);
	for (size_t i = 0; k->ops && i < k->op_count; i++) {
		usc__free(k->ops[i].name);
		usc__free(k->ops[i].opcode);
		usc__free(k->ops[i].element_type);
		usc__free(k->ops[i].shape);
		usc__free(k->ops[i].op_name);
		usc__free(k->ops[i].source_file);
	}
	usc__free(k->ops);
	if (k->attribution) {
		for (size_t i = 0; k->attribution->ops &&
				   i < k->attribution->op_count;
		     i++) {
			usc_results_op *op = &k->attribution->ops[i].op;

			usc__free(op->name);
			usc__free(op->opcode);
			usc__free(op->element_type);
			usc__free(op->shape);
			usc__free(op->op_name);
			usc__free(op->source_file);
		}
		usc__free(k->attribution->ops);
		usc__free(k->attribution);
	}
	usc__free(k);
}

static usc_status read_attribution(usc_results_reader *r, const char *kg,
				   usc_results_kernel_info *k, usc_error *err);

/* Moves the door's rows into the public rows (the strings change hands). */
static usc_status take_ops(usc_results_kernel_info *k, usc__h5_op_row *rows,
			   size_t n, const char *path, const char *kg,
			   usc_error *err)
{
	if (n == 0)
		return USC_OK;
	k->ops = usc__calloc(n, sizeof *k->ops);
	if (!k->ops) {
		usc__h5_ops_free(rows, n);
		return usc__fail(err, USC_ENOMEM, "%s:%s/ops: out of memory",
				 path, kg);
	}
	for (size_t i = 0; i < n; i++) {
		k->ops[i].index = rows[i].index;
		k->ops[i].name = rows[i].name;
		k->ops[i].opcode = rows[i].opcode;
		k->ops[i].element_type = rows[i].element_type;
		k->ops[i].shape = rows[i].shape;
		k->ops[i].op_name = rows[i].op_name;
		k->ops[i].source_file = rows[i].source_file;
		k->ops[i].source_line = rows[i].source_line;
	}
	k->op_count = n;
	usc__free(rows);
	return USC_OK;
}

/*
 * A string attribute that files written before it existed lack: "" then
 * (the schema version did not change, docs/results.md).
 */
static usc_status get_optional_string(usc__h5_file *f, const char *obj,
				      const char *name, char **out,
				      usc_error *err)
{
	usc_error e;
	usc_status st = usc__h5_attr_get_string(f, obj, name, out, &e);

	if (st == USC_ENOTFOUND) {
		*out = usc__strndup("", 0);
		return *out ? USC_OK
			    : usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (st != USC_OK && err)
		*err = e;
	return st;
}

usc_status usc_results_read_kernel(usc_results_reader *r, const char *name,
				   usc_results_kernel_info **out,
				   usc_error *err)
{
	char kg[USC__RESULTS_PATH_SIZE], path[USC__RESULTS_PATH_SIZE];
	usc_results_kernel_info *k;
	usc__h5_op_row *rows = NULL;
	uint64_t outputs = 0;
	size_t nrows = 0;
	usc_status st;

	*out = NULL;
	st = find_kernel(r, name, kg, sizeof kg, err);
	if (st != USC_OK)
		return st;
	k = usc__calloc(1, sizeof *k);
	if (k)
		k->name = usc__strndup(name, strlen(name));
	if (!k || !k->name) {
		usc__free(k);
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 r->path, kg);
	}
	st = usc__h5_attr_get_string(r->f, kg, "hlo_file", &k->hlo_file, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(r->f, kg, "fusion", &k->fusion,
					     err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(r->f, kg, "verdict", &k->verdict,
					     err);
	if (st == USC_OK)
		st = get_optional_string(r->f, kg, "verdict_reason",
					 &k->verdict_reason, err);
	if (st == USC_OK)
		st = get_optional_string(r->f, kg, "profile", &k->profile,
					 err);
	if (st == USC_OK)
		st = usc__results_check_verdict(r->path, kg, k->verdict, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(r->f, kg, "oracle_precision_max",
					  &k->oracle_precision_max, err);
	if (st == USC_OK && k->oracle_precision_max < 0)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: attribute 'oracle_precision_max' is "
			       "%lld, expected a number of bits >= 0",
			       r->path, kg,
			       (long long)k->oracle_precision_max);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(r->f, kg, "element_count",
					   &k->element_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(r->f, kg, "output_count", &outputs,
					   err);
	if (st == USC_OK && outputs > SIZE_MAX)
		st = usc__fail(err, USC_ERANGE,
			       "%s:%s: output_count is out of range", r->path,
			       kg);
	k->output_count = (size_t)outputs;
	usc__results_path(path, sizeof path, "%s/hlo_text", kg);
	if (st == USC_OK)
		st = usc__h5_read_string(r->f, path, &k->hlo_text,
					 &k->hlo_text_len, err);
	usc__results_path(path, sizeof path, "%s/ops", kg);
	if (st == USC_OK)
		st = load_hlo(r, name, kg, k->hlo_text, k->hlo_text_len, err);
	if (st == USC_OK)
		st = check_outputs(r, kg, k, err);
	if (st == USC_OK)
		st = usc__h5_read_ops(r->f, path, &rows, &nrows, err);
	if (st == USC_OK) {
		st = usc__results_check_ops(r->path, kg, rows, nrows, r->entry,
					    k->output_count, err);
		if (st != USC_OK)
			usc__h5_ops_free(rows, nrows);
	}
	if (st == USC_OK)
		st = take_ops(k, rows, nrows, r->path, kg, err);
	if (st == USC_OK)
		st = read_attribution(r, kg, k, err);
	if (st != USC_OK) {
		usc_results_kernel_info_free(k);
		return st;
	}
	*out = k;
	return USC_OK;
}

void usc_results_output_data_free(usc_results_output_data *o)
{
	if (!o)
		return;
	usc_tensor_destroy(o->device);
	usc_tensor_destroy(o->reference);
	usc__free(o->oracle_mid);
	usc__free(o->oracle_rad);
	usc__free(o->ulp_error_oracle);
	usc__free(o->ulp_error_reference);
	usc__free(o->undecided);
	usc__free(o->envelope_lo);
	usc__free(o->envelope_hi);
	usc__free(o->envelope_flags);
	usc__free(o->cls);
	usc__free(o->top_ops);
	usc__free(o->top_contrib);
	usc__free(o->attr_total);
	usc__free(o->attr_residual);
	usc__free(o);
}

/*
 * A classified output's envelope and classes (all four datasets, or none
 * when the output was written without a profile).  n is the element count
 * plus one.
 */
static usc_status read_classes(usc__h5_file *f, const char *g,
			       usc_results_output_data *o, size_t n,
			       usc_error *err);
static usc_status read_attr_output(usc__h5_file *f, const char *g,
				   usc_results_output_data *o, size_t n,
				   usc_error *err);

/* What a dataset of an output must be. */
typedef struct expect {
	usc__h5_class cls;
	size_t size;
	const char *text; /* for messages: "unsigned 16-bit integers" */
} expect;

/* Formats a shape as "[2,3]" for messages. */
static void dims_text(char *buf, size_t size, size_t rank,
		      const int64_t *dims)
{
	size_t used = (size_t)snprintf(buf, size, "[");

	for (size_t i = 0; i < rank && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%lld",
					 i ? "," : "", (long long)dims[i]);
	if (used < size)
		snprintf(buf + used, size - used, "]");
}

/*
 * Checks that a dataset of shape (rank, dims) has an element count that
 * fits in memory's arithmetic and that the file holds data for every
 * element, before anything the size of it is allocated: a damaged or
 * forged file can declare [2^40] elements in a few bytes.
 */
static usc_status check_stored(usc__h5_dataset *d, const char *file,
			       const char *path, size_t rank,
			       const int64_t *dims, usc_error *err)
{
	/* No output of ulpscope comes near 2^48 elements of 8 bytes. */
	const uint64_t limit = (uint64_t)1 << 48;
	uint64_t n = 1;
	bool all = false;
	char text[256];
	usc_status st;

	for (size_t i = 0; i < rank; i++) {
		if (dims[i] != 0 && n > limit / (uint64_t)dims[i]) {
			dims_text(text, sizeof text, rank, dims);
			return usc__fail(err, USC_EPARSE,
					 "%s:%s: shape %s declares more than "
					 "2^48 elements",
					 file, path, text);
		}
		n *= (uint64_t)dims[i];
	}
	if (n == 0)
		return USC_OK;
	st = usc__h5_dataset_stored(d, &all, err);
	if (st == USC_OK && !all) {
		dims_text(text, sizeof text, rank, dims);
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: shape %s declares %llu elements, but "
			       "the file holds data for only part of them",
			       file, path, text, (unsigned long long)n);
	}
	return st;
}

/*
 * Opens dataset g/name, checks its element type against e, and returns
 * its shape (rank and dims, at most USC_TENSOR_MAX_RANK) and the open
 * dataset.
 */
static usc_status open_checked(usc__h5_file *f, const char *g,
			       const char *name, const expect *e,
			       usc__h5_dataset **d, size_t *rank,
			       int64_t *dims, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	usc__h5_type t;
	usc_status st;
	bool ok;

	usc__results_path(path, sizeof path, "%s/%s", g, name);
	st = usc__h5_dataset_open(f, path, d, err);
	if (st != USC_OK)
		return st;
	st = usc__h5_dataset_type(*d, &t, err);
	if (st == USC_OK) {
		ok = t.cls == e->cls && t.size == e->size && !t.big_endian;
		if (ok && e->cls == USC__H5_INTEGER)
			ok = !t.is_signed;
		if (ok && e->cls == USC__H5_FLOAT)
			ok = t.exp_bits == 11 && t.man_bits == 52;
		if (!ok)
			st = usc__fail(err, USC_EPARSE,
				       "%s:%s: stored as %s, expected "
				       "little-endian %s",
				       usc__h5_file_path(f), path, t.text,
				       e->text);
	}
	if (st == USC_OK)
		st = usc__h5_dataset_shape(*d, USC_TENSOR_MAX_RANK, rank, dims,
					   err);
	if (st == USC_OK)
		st = check_stored(*d, usc__h5_file_path(f), path, *rank, dims,
				  err);
	if (st != USC_OK) {
		usc__h5_dataset_close(*d);
		*d = NULL;
	}
	return st;
}

/*
 * The elements of dataset g/i/device (kernel group kg), from its shape
 * alone; the dataset is checked for its storage as every dataset is.
 */
static usc_status device_count(usc_results_reader *r, const char *kg,
			       size_t i, uint64_t *count, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	int64_t dims[USC_TENSOR_MAX_RANK];
	usc__h5_dataset *d = NULL;
	size_t rank = 0;
	usc_status st;

	*count = 0;
	usc__results_path(path, sizeof path, "%s/outputs/%zu/device", kg, i);
	st = usc__h5_dataset_open(r->f, path, &d, err);
	if (st == USC_OK)
		st = usc__h5_dataset_shape(d, USC_TENSOR_MAX_RANK, &rank, dims,
					   err);
	if (st == USC_OK)
		st = check_stored(d, r->path, path, rank, dims, err);
	if (st == USC_OK) {
		*count = 1;
		for (size_t j = 0; j < rank; j++)
			*count *= (uint64_t)dims[j];
	}
	/* The dims against the kernel's output i (its type is checked
	 * when the output is read). */
	if (st == USC_OK && r->entry) {
		const usc_hlo_shape *s = usc__results_hlo_output(r->entry, i);
		char a[256], b[256];

		if (s && s->kind == USC_HLO_SHAPE_ARRAY &&
		    (s->rank != rank ||
		     (rank &&
		      memcmp(s->dims, dims, rank * sizeof *dims) != 0))) {
			dims_text(a, sizeof a, rank, dims);
			dims_text(b, sizeof b, s->rank, s->dims);
			st = usc__fail(err, USC_EPARSE,
				       "%s:%s: shape %s (rank %zu), expected "
				       "%s (rank %zu), the shape of the "
				       "kernel's output %zu",
				       r->path, path, a, rank, b, s->rank, i);
		}
	}
	usc__h5_dataset_close(d);
	return st;
}

/*
 * Reads dataset g/name of the expected type and of the shape (rank,
 * dims) into buf, nbytes long.
 */
static usc_status read_checked(usc__h5_file *f, const char *g,
			       const char *name, const expect *e, size_t rank,
			       const int64_t *dims, void *buf, size_t nbytes,
			       usc_error *err)
{
	int64_t got[USC_TENSOR_MAX_RANK];
	usc__h5_dataset *d = NULL;
	size_t grank = 0;
	usc_status st;

	st = open_checked(f, g, name, e, &d, &grank, got, err);
	if (st != USC_OK)
		return st;
	if (grank != rank ||
	    (rank && memcmp(got, dims, rank * sizeof *dims) != 0)) {
		char a[256], b[256];

		dims_text(a, sizeof a, grank, got);
		dims_text(b, sizeof b, rank, dims);
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s/%s: shape %s differs from the device "
			       "dataset's %s",
			       usc__h5_file_path(f), g, name, a, b);
	} else {
		st = usc__h5_dataset_read_raw(d, buf, nbytes, err);
	}
	usc__h5_dataset_close(d);
	return st;
}

/* Reads the statistics attributes of one error array. */
static usc_status read_stats(usc__h5_file *f, const char *g,
			     const char *against, uint64_t count,
			     usc_results_stats *s, usc_error *err)
{
	char name[64];
	usc_status st;

	snprintf(name, sizeof name, "max_abs_ulp_%s", against);
	st = usc__h5_attr_get_double(f, g, name, &s->max_abs, err);
	snprintf(name, sizeof name, "median_abs_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(f, g, name, &s->median_abs, err);
	snprintf(name, sizeof name, "p99_abs_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(f, g, name, &s->p99_abs, err);
	snprintf(name, sizeof name, "nan_count_ulp_%s", against);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, name, &s->nan_count, err);
	if (st == USC_OK && s->nan_count > count)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: attribute '%s' exceeds count",
			       usc__h5_file_path(f), g, name);
	s->count = count - (st == USC_OK ? s->nan_count : 0);
	return st;
}

/* Reads the summary attributes of an output group. */
static usc_status read_summary(usc__h5_file *f, const char *g,
			       uint64_t count, usc_results_summary *s,
			       usc_error *err)
{
	usc_status st;

	st = usc__h5_attr_get_uint(f, g, "count", &s->count, err);
	if (st == USC_OK && s->count != count)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: attribute 'count' is %llu but the "
			       "device dataset has %llu elements",
			       usc__h5_file_path(f), g,
			       (unsigned long long)s->count,
			       (unsigned long long)count);
	if (st == USC_OK)
		st = read_stats(f, g, "oracle", count, &s->oracle, err);
	if (st == USC_OK)
		st = read_stats(f, g, "reference", count, &s->reference, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "bit_exact_count",
					   &s->bit_exact_count, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "undecided_count",
					   &s->undecided_count, err);
	return st;
}

/* Reads the encodings dataset g/name of type dt into a new tensor. */
static usc_status read_encodings(usc__h5_file *f, const char *g,
				 const char *name, usc_dtype dt,
				 usc_tensor **out, usc_error *err)
{
	static const char *const texts[] = {
		"", "unsigned 8-bit integers", "unsigned 16-bit integers", "",
		"unsigned 32-bit integers", "", "", "",
		"unsigned 64-bit integers"};
	char path[USC__RESULTS_PATH_SIZE];
	int w = usc_format_of(dt)->container_bytes;
	expect e = {USC__H5_INTEGER, (size_t)w, texts[w]};
	int64_t dims[USC_TENSOR_MAX_RANK];
	usc__h5_dataset *d = NULL;
	char *tag = NULL;
	size_t rank = 0;
	usc_status st;

	*out = NULL;
	usc__results_path(path, sizeof path, "%s/%s", g, name);
	st = open_checked(f, g, name, &e, &d, &rank, dims, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, path, "dtype", &tag, err);
	if (st == USC_OK && strcmp(tag, usc_dtype_name(dt)) != 0)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: dtype '%s' differs from the output's "
			       "'%s'",
			       usc__h5_file_path(f), path, tag,
			       usc_dtype_name(dt));
	if (st == USC_OK)
		st = usc_tensor_create(dt, rank, dims, out, err);
	if (st == USC_OK)
		st = usc__h5_dataset_read_raw(d, usc_tensor_data(*out),
					      usc_tensor_nbytes(*out), err);
	if (st != USC_OK) {
		usc_tensor_destroy(*out);
		*out = NULL;
	}
	usc__free(tag);
	usc__h5_dataset_close(d);
	return st;
}

/*
 * The rows of kernel kg's attribution table, which an attributed output
 * (group g) refers to by row; an attributed output needs one.
 */
static usc_status attribution_rows(usc_results_reader *r, const char *kg,
				   const char *g,
				   const usc_results_output_data *o,
				   size_t *rows, usc_error *err)
{
	char path[USC__RESULTS_PATH_SIZE];
	int64_t dims[USC_TENSOR_MAX_RANK];
	usc__h5_dataset *d = NULL;
	bool exists = false;
	size_t rank = 0;
	usc_status st;

	*rows = 0;
	if (!o->top_ops)
		return USC_OK;
	usc__results_path(path, sizeof path, "%s/attribution/ops", kg);
	usc__h5_exists(r->f, path, &exists, NULL, NULL);
	if (!exists)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s/top_ops: the output is attributed, but "
				 "%s has no attribution table",
				 r->path, g, kg);
	st = usc__h5_dataset_open(r->f, path, &d, err);
	if (st == USC_OK)
		st = usc__h5_dataset_shape(d, 1, &rank, dims, err);
	if (st == USC_OK)
		*rows = rank == 1 ? (size_t)dims[0] : 0;
	usc__h5_dataset_close(d);
	return st;
}

usc_status usc_results_read_output(usc_results_reader *r, const char *kernel,
				   size_t i, usc_results_output_data **out,
				   usc_error *err)
{
	static const expect f64 = {USC__H5_FLOAT, 8, "IEEE binary64"};
	static const expect u8 = {USC__H5_INTEGER, 1,
				  "unsigned 8-bit integers"};
	static const char *const names[] = {"oracle_mid", "oracle_rad",
					    "ulp_error_oracle",
					    "ulp_error_reference"};
	char kg[USC__RESULTS_PATH_SIZE], g[USC__RESULTS_PATH_SIZE];
	usc_results_output_data *o;
	const usc_format *fmt;
	double **arrays[4];
	char *tag = NULL;
	bool exists = false;
	size_t n, rank, attr_ops = 0;
	const int64_t *dims;
	usc_status st;

	*out = NULL;
	st = find_kernel(r, kernel, kg, sizeof kg, err);
	if (st != USC_OK)
		return st;
	usc__results_path(g, sizeof g, "%s/outputs/%zu", kg, i);
	usc__h5_exists(r->f, g, &exists, NULL, NULL);
	if (!exists)
		return usc__fail(err, USC_ENOTFOUND, "%s:%s: no such output",
				 r->path, g);
	o = usc__calloc(1, sizeof *o);
	if (!o)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 r->path, g);
	arrays[0] = &o->oracle_mid;
	arrays[1] = &o->oracle_rad;
	arrays[2] = &o->ulp_error_oracle;
	arrays[3] = &o->ulp_error_reference;
	st = usc__h5_attr_get_string(r->f, g, "dtype", &tag, err);
	if (st == USC_OK &&
	    usc_dtype_from_name(tag, strlen(tag), &o->dtype) != USC_OK)
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: unknown dtype '%s'", r->path, g, tag);
	fmt = usc_format_of(o->dtype);
	if (st == USC_OK && (fmt->kind == USC_KIND_COMPLEX ||
			     fmt->kind == USC_KIND_OTHER))
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: dtype '%s' is not allowed in schema "
			       "version %d",
			       r->path, g, tag, USC_RESULTS_SCHEMA_VERSION);
	usc__free(tag);
	tag = NULL;
	if (st == USC_OK)
		st = load_hlo_of(r, kernel, kg, err);
	if (st == USC_OK)
		st = read_encodings(r->f, g, "device", o->dtype, &o->device,
				    err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(r->f, g, "shape", &tag, err);
	if (st == USC_OK)
		st = usc__results_check_shape(
			r->path, g, tag, o->dtype, usc_tensor_rank(o->device),
			usc_tensor_dims(o->device), r->entry, i, err);
	usc__free(tag);
	if (st == USC_OK)
		st = read_encodings(r->f, g, "reference", o->dtype,
				    &o->reference, err);
	if (st != USC_OK)
		goto fail;
	rank = usc_tensor_rank(o->device);
	dims = usc_tensor_dims(o->device);
	if (usc_tensor_rank(o->reference) != rank ||
	    (rank && memcmp(usc_tensor_dims(o->reference), dims,
			    rank * sizeof *dims) != 0)) {
		char a[256], b[256];

		dims_text(a, sizeof a, rank, usc_tensor_dims(o->reference));
		dims_text(b, sizeof b, rank, dims);
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s/reference: shape %s differs from the "
			       "device dataset's %s",
			       r->path, g, a, b);
		goto fail;
	}
	o->count = usc_tensor_count(o->device);
	/* One element more than needed, so that a count of 0 still has a
	 * pointer that is not NULL. */
	n = (size_t)o->count + 1;
	for (size_t j = 0; j < 4; j++) {
		*arrays[j] = usc__reallocarray(NULL, n, sizeof(double));
		if (!*arrays[j]) {
			st = usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				       r->path, g);
			goto fail;
		}
		st = read_checked(r->f, g, names[j], &f64, rank, dims,
				  *arrays[j], (size_t)o->count * sizeof(double),
				  err);
		if (st != USC_OK)
			goto fail;
	}
	o->undecided = usc__malloc(n);
	if (!o->undecided) {
		st = usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
			       r->path, g);
		goto fail;
	}
	st = read_checked(r->f, g, "undecided", &u8, rank, dims, o->undecided,
			  (size_t)o->count, err);
	if (st == USC_OK)
		st = read_summary(r->f, g, o->count, &o->summary, err);
	if (st == USC_OK)
		st = read_classes(r->f, g, o, n, err);
	if (st == USC_OK)
		st = read_attr_output(r->f, g, o, n, err);
	if (st == USC_OK)
		st = attribution_rows(r, kg, g, o, &attr_ops, err);
	if (st == USC_OK)
		st = usc__results_check_values(r->f, g, o, attr_ops, err);
	if (st != USC_OK)
		goto fail;
	*out = o;
	return USC_OK;
fail:
	usc_results_output_data_free(o);
	return st;
}

static usc_status read_classes(usc__h5_file *f, const char *g,
			       usc_results_output_data *o, size_t n,
			       usc_error *err)
{
	static const expect f64 = {USC__H5_FLOAT, 8, "IEEE binary64"};
	static const expect u8 = {USC__H5_INTEGER, 1,
				  "unsigned 8-bit integers"};
	static const expect cls = {USC__H5_ENUM, 1, "a one-byte enum"};
	char path[USC__RESULTS_PATH_SIZE];
	size_t rank = usc_tensor_rank(o->device);
	const int64_t *dims = usc_tensor_dims(o->device);
	bool exists = false;
	usc_status st;

	usc__results_path(path, sizeof path, "%s/class", g);
	usc__h5_exists(f, path, &exists, NULL, NULL);
	if (!exists)
		return USC_OK;
	o->envelope_lo = usc__reallocarray(NULL, n, sizeof(double));
	o->envelope_hi = usc__reallocarray(NULL, n, sizeof(double));
	o->envelope_flags = usc__malloc(n);
	o->cls = usc__malloc(n);
	if (!o->envelope_lo || !o->envelope_hi || !o->envelope_flags ||
	    !o->cls)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 usc__h5_file_path(f), g);
	st = read_checked(f, g, "envelope_lo", &f64, rank, dims,
			  o->envelope_lo, (size_t)o->count * sizeof(double),
			  err);
	if (st == USC_OK)
		st = read_checked(f, g, "envelope_hi", &f64, rank, dims,
				  o->envelope_hi,
				  (size_t)o->count * sizeof(double), err);
	if (st == USC_OK)
		st = read_checked(f, g, "envelope_flags", &u8, rank, dims,
				  o->envelope_flags, (size_t)o->count, err);
	if (st == USC_OK)
		st = read_checked(f, g, "class", &cls, rank, dims, o->cls,
				  (size_t)o->count, err);
	for (uint64_t k = 0; st == USC_OK && k < o->count; k++)
		if (o->cls[k] >= USC_CLASS_COUNT)
			st = usc__fail(err, USC_EPARSE,
				       "%s:%s/class: element %llu holds %u, "
				       "not a class",
				       usc__h5_file_path(f), g,
				       (unsigned long long)k, o->cls[k]);
	return st;
}

/* An output's attribution datasets, when the output has them. */
static usc_status read_attr_output(usc__h5_file *f, const char *g,
				   usc_results_output_data *o, size_t n,
				   usc_error *err)
{
	static const expect f64 = {USC__H5_FLOAT, 8, "IEEE binary64"};
	static const expect u32 = {USC__H5_INTEGER, 4,
				   "unsigned 32-bit integers"};
	char path[USC__RESULTS_PATH_SIZE];
	size_t rank = usc_tensor_rank(o->device);
	const int64_t *dims = usc_tensor_dims(o->device);
	int64_t kd[2];
	uint64_t k = 0;
	bool exists = false;
	usc_status st;

	usc__results_path(path, sizeof path, "%s/top_ops", g);
	usc__h5_exists(f, path, &exists, NULL, NULL);
	if (!exists)
		return USC_OK;
	st = usc__h5_attr_get_uint(f, g, "top_k", &k, err);
	if (st != USC_OK)
		return st;
	if (k < 1 || k > 1024)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: top_k %llu is out of range",
				 usc__h5_file_path(f), g,
				 (unsigned long long)k);
	o->top_k = (size_t)k;
	kd[0] = (int64_t)o->count;
	kd[1] = (int64_t)k;
	o->top_ops = usc__reallocarray(NULL, n * o->top_k, sizeof(uint32_t));
	o->top_contrib = usc__reallocarray(NULL, n * o->top_k, sizeof(double));
	o->attr_total = usc__reallocarray(NULL, n, sizeof(double));
	o->attr_residual = usc__reallocarray(NULL, n, sizeof(double));
	if (!o->top_ops || !o->top_contrib || !o->attr_total ||
	    !o->attr_residual)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 usc__h5_file_path(f), g);
	st = read_checked(f, g, "top_ops", &u32, 2, kd, o->top_ops,
			  (size_t)o->count * o->top_k * sizeof(uint32_t), err);
	if (st == USC_OK)
		st = read_checked(f, g, "top_contrib", &f64, 2, kd,
				  o->top_contrib,
				  (size_t)o->count * o->top_k * sizeof(double),
				  err);
	if (st == USC_OK)
		st = read_checked(f, g, "attr_total", &f64, rank, dims,
				  o->attr_total,
				  (size_t)o->count * sizeof(double), err);
	if (st == USC_OK)
		st = read_checked(f, g, "attr_residual", &f64, rank, dims,
				  o->attr_residual,
				  (size_t)o->count * sizeof(double), err);
	return st;
}

/*
 * The attribution table under kg/attribution, when there is one
 * (docs/attribution.md): the ops rows, the four budget columns (one value
 * per row) and the attributes.
 */
static usc_status read_attribution(usc_results_reader *r, const char *kg,
				   usc_results_kernel_info *k, usc_error *err)
{
	static const char *const cols[] = {"mean_abs", "max_abs", "sum_abs",
					   "share"};
	char g[USC__RESULTS_PATH_SIZE], path[USC__RESULTS_PATH_SIZE];
	usc_results_attribution *a;
	usc__h5_op_row *rows = NULL;
	size_t n = 0;
	double *col = NULL;
	bool exists = false;
	usc_status st;

	usc__results_path(g, sizeof g, "%s/attribution", kg);
	usc__h5_exists(r->f, g, &exists, NULL, NULL);
	if (!exists)
		return USC_OK;
	a = k->attribution = usc__calloc(1, sizeof *a);
	if (!a)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 r->path, g);
	usc__results_path(path, sizeof path, "%s/ops", g);
	st = usc__h5_read_ops(r->f, path, &rows, &n, err);
	if (st != USC_OK)
		return st;
	/* Its index column is the row number, what top_ops refers to. */
	st = usc__results_check_ops(r->path, g, rows, n, NULL, 0, err);
	if (st != USC_OK) {
		usc__h5_ops_free(rows, n);
		return st;
	}
	a->ops = usc__calloc(n ? n : 1, sizeof *a->ops);
	col = usc__calloc(n ? n : 1, sizeof *col);
	if (!a->ops || !col) {
		usc__h5_ops_free(rows, n);
		usc__free(col);
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 r->path, g);
	}
	for (size_t i = 0; i < n; i++) {
		usc_results_op *op = &a->ops[i].op;

		op->index = rows[i].index;
		op->name = rows[i].name;
		op->opcode = rows[i].opcode;
		op->element_type = rows[i].element_type;
		op->shape = rows[i].shape;
		op->op_name = rows[i].op_name;
		op->source_file = rows[i].source_file;
		op->source_line = rows[i].source_line;
	}
	a->op_count = n;
	usc__free(rows);
	for (size_t c = 0; st == USC_OK && c < USC__ARRAY_LEN(cols); c++) {
		static const expect f64 = {USC__H5_FLOAT, 8, "IEEE binary64"};
		int64_t dim = (int64_t)n;

		st = read_checked(r->f, g, cols[c], &f64, 1, &dim, col,
				  n * sizeof *col, err);
		for (size_t i = 0; st == USC_OK && i < n; i++)
			*(c == 0   ? &a->ops[i].mean_abs
			  : c == 1 ? &a->ops[i].max_abs
			  : c == 2 ? &a->ops[i].sum_abs
				   : &a->ops[i].share) = col[i];
	}
	usc__free(col);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(r->f, g, "top_k", &a->top_k, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_int(r->f, g, "precision", &a->precision,
					  err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(r->f, g, "attributed",
					   &a->attributed, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(r->f, g, "residual_mean_abs",
					     &a->residual_mean_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(r->f, g, "residual_max_abs",
					     &a->residual_max_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(r->f, g, "residual_sum_abs",
					     &a->residual_sum_abs, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_double(r->f, g, "residual_share",
					     &a->residual_share, err);
	return st;
}

usc__h5_file *usc__results_reader_file(usc_results_reader *r)
{
	return r->f;
}
