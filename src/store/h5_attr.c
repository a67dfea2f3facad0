/*
 * Attributes and the ops tables, inside the door to HDF5
 * (h5_door_internal.h): setting, reading and deleting the attributes of
 * groups and datasets, each entry point in a quiet scope as in h5_door.c.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store/h5_door_internal.h"
/* ------------------------------------------------------------------ */
/* Attributes                                                          */

/* Writes one scalar attribute of file type ftype from memory type mtype. */
static usc_status attr_set(usc__h5_file *f, const char *obj, const char *name,
			   hid_t ftype, hid_t mtype, const void *value,
			   usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t space = H5Screate(H5S_SCALAR), a = -1;
	usc_status st = USC_OK;

	if (H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT) > 0)
		H5Adelete_by_name(f->id, obj, name, H5P_DEFAULT);
	if (space >= 0)
		a = H5Acreate_by_name(f->id, obj, name, ftype, space,
				      H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Awrite(a, mtype, value) < 0)
		st = usc__h5_fail(err, USC_EIO,
				  "%s:%s: cannot write attribute '%s'",
				  f->path, obj, name);
	if (a >= 0)
		H5Aclose(a);
	if (space >= 0)
		H5Sclose(space);
	usc__h5_quiet_end(q);
	return st;
}

usc_status usc__h5_attr_set_string(usc__h5_file *f, const char *obj,
				   const char *name, const char *value,
				   usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t t = usc__h5_fixed_string_type(strlen(value));
	usc_status st;

	usc__h5_quiet_end(q);
	if (t < 0)
		return usc__fail(err, USC_EIO,
				 "%s:%s: cannot write attribute '%s'", f->path,
				 obj, name);
	st = attr_set(f, obj, name, t, t, value, err);
	q = usc__h5_quiet_begin();
	H5Tclose(t);
	usc__h5_quiet_end(q);
	return st;
}

usc_status usc__h5_attr_set_int(usc__h5_file *f, const char *obj,
				const char *name, int64_t value,
				usc_error *err)
{
	return attr_set(f, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value,
			err);
}

usc_status usc__h5_attr_set_uint(usc__h5_file *f, const char *obj,
				 const char *name, uint64_t value,
				 usc_error *err)
{
	return attr_set(f, obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64,
			&value, err);
}

usc_status usc__h5_attr_set_double(usc__h5_file *f, const char *obj,
				   const char *name, double value,
				   usc_error *err)
{
	return attr_set(f, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
			&value, err);
}

usc_status usc__h5_attr_delete(usc__h5_file *f, const char *obj,
			       const char *name, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	usc_status st = USC_OK;

	if (H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT) > 0 &&
	    H5Adelete_by_name(f->id, obj, name, H5P_DEFAULT) < 0)
		st = usc__h5_fail(err, USC_EIO,
				  "%s:%s: cannot delete attribute '%s'",
				  f->path, obj, name);
	usc__h5_quiet_end(q);
	return st;
}

/*
 * Opens a scalar attribute of the expected class; its file type goes to
 * *type.  Runs inside a quiet scope.  The messages name the object and
 * the attribute.
 */
static usc_status attr_open(usc__h5_file *f, const char *obj,
			    const char *name, H5T_class_t want,
			    const char *want_text, hid_t *attr, hid_t *type,
			    usc_error *err)
{
	hid_t a, t, s;
	htri_t ex;
	hssize_t n;

	*attr = *type = -1;
	if (!usc__h5_path_exists(f->id, obj))
		return usc__fail(err, USC_ENOTFOUND, "%s:%s: no such object",
				 f->path, obj);
	ex = H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT);
	if (ex < 0)
		return usc__h5_read_fail(err, USC_EIO,
			         "%s:%s: cannot read attribute '%s'", f->path,
			         obj, name);
	if (ex == 0) {
		return usc__fail(err, USC_ENOTFOUND,
				 "%s:%s: no attribute '%s'", f->path, obj,
				 name);
	}
	a = H5Aopen_by_name(f->id, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0)
		return usc__h5_read_fail(err, USC_EIO,
			         "%s:%s: cannot read attribute '%s'", f->path,
			         obj, name);
	t = H5Aget_type(a);
	s = H5Aget_space(a);
	n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	if (s >= 0)
		H5Sclose(s);
	if (t < 0 || n != 1 || H5Tget_class(t) != want) {
		if (t >= 0)
			H5Tclose(t);
		H5Aclose(a);
		H5Eclear2(H5E_DEFAULT);
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: attribute '%s' is not a single %s",
				 f->path, obj, name, want_text);
	}
	*attr = a;
	*type = t;
	return USC_OK;
}

usc_status usc__h5_attr_get_string(usc__h5_file *f, const char *obj,
				   const char *name, char **out,
				   usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t a, t;
	char where[1200];
	usc_status st;

	*out = NULL;
	st = attr_open(f, obj, name, H5T_STRING, "string", &a, &t, err);
	if (st == USC_OK) {
		snprintf(where, sizeof where, "%s:%s: attribute '%s'", f->path,
			 obj, name);
		st = usc__h5_read_one_string(a, -1, t, where, out, NULL, err);
		H5Tclose(t);
		H5Aclose(a);
	}
	usc__h5_quiet_end(q);
	return st;
}

/* Reads an integer attribute as 64 bits of its own signedness. */
static usc_status attr_get_integer(usc__h5_file *f, const char *obj,
				   const char *name, bool *is_signed,
				   int64_t *s, uint64_t *u, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t a, t;
	usc_status st;

	st = attr_open(f, obj, name, H5T_INTEGER, "integer", &a, &t, err);
	if (st == USC_OK) {
		*is_signed = H5Tget_sign(t) == H5T_SGN_2;
		if ((*is_signed ? H5Aread(a, H5T_NATIVE_INT64, s)
				: H5Aread(a, H5T_NATIVE_UINT64, u)) < 0)
			st = usc__h5_read_fail(err, USC_EIO,
				       "%s:%s: cannot read attribute '%s'",
				       f->path, obj, name);
		H5Tclose(t);
		H5Aclose(a);
	}
	usc__h5_quiet_end(q);
	return st;
}

usc_status usc__h5_attr_get_int(usc__h5_file *f, const char *obj,
				const char *name, int64_t *out,
				usc_error *err)
{
	bool sgn = true;
	int64_t s = 0;
	uint64_t u = 0;
	usc_status st = attr_get_integer(f, obj, name, &sgn, &s, &u, err);

	if (st != USC_OK)
		return st;
	if (!sgn && u > INT64_MAX)
		return usc__fail(err, USC_ERANGE,
				 "%s:%s: attribute '%s' is out of range",
				 f->path, obj, name);
	*out = sgn ? s : (int64_t)u;
	return USC_OK;
}

usc_status usc__h5_attr_get_uint(usc__h5_file *f, const char *obj,
				 const char *name, uint64_t *out,
				 usc_error *err)
{
	bool sgn = false;
	int64_t s = 0;
	uint64_t u = 0;
	usc_status st = attr_get_integer(f, obj, name, &sgn, &s, &u, err);

	if (st != USC_OK)
		return st;
	if (sgn && s < 0)
		return usc__fail(err, USC_ERANGE,
				 "%s:%s: attribute '%s' is negative", f->path,
				 obj, name);
	*out = sgn ? (uint64_t)s : u;
	return USC_OK;
}

usc_status usc__h5_attr_get_double(usc__h5_file *f, const char *obj,
				   const char *name, double *out,
				   usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t a, t;
	usc_status st;

	st = attr_open(f, obj, name, H5T_FLOAT, "float", &a, &t, err);
	if (st == USC_OK) {
		if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0)
			st = usc__h5_read_fail(err, USC_EIO,
				       "%s:%s: cannot read attribute '%s'",
				       f->path, obj, name);
		H5Tclose(t);
		H5Aclose(a);
	}
	usc__h5_quiet_end(q);
	return st;
}

/* ------------------------------------------------------------------ */
/* Ops tables                                                          */

/* The columns of the ops table, in order: a general table (h5_table.c). */
#define OP_COL(n, k) {#n, USC__H5_COL_##k, offsetof(usc__h5_op_row, n)}
static const usc__h5_column op_columns[] = {
	OP_COL(index, INT64),	    OP_COL(name, STRING),
	OP_COL(opcode, STRING),	    OP_COL(element_type, STRING),
	OP_COL(shape, STRING),	    OP_COL(op_name, STRING),
	OP_COL(source_file, STRING), OP_COL(source_line, INT64)};
#undef OP_COL
#define OP_COLUMNS (sizeof op_columns / sizeof op_columns[0])

usc_status usc__h5_write_ops(usc__h5_file *f, const char *dataset,
			     const usc__h5_op_row *rows, size_t n,
			     usc_error *err)
{
	return usc__h5_write_table(f, dataset, op_columns, OP_COLUMNS, rows, n,
				   sizeof *rows, err);
}

void usc__h5_ops_free(usc__h5_op_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++) {
		usc__free(rows[i].name);
		usc__free(rows[i].opcode);
		usc__free(rows[i].element_type);
		usc__free(rows[i].shape);
		usc__free(rows[i].op_name);
		usc__free(rows[i].source_file);
	}
	usc__free(rows);
}

usc_status usc__h5_read_ops(usc__h5_file *f, const char *dataset,
			    usc__h5_op_row **rows, size_t *n, usc_error *err)
{
	return usc__h5_read_table(f, dataset, op_columns, OP_COLUMNS,
				  sizeof **rows, (void **)rows, n, err);
}
