/*
 * General tables and external links, inside the door to HDF5
 * (h5_door_internal.h).  A table is described by its columns once; the
 * same description writes an array of C structs and reads it back, so
 * the batch index (src/batch/) and later tables need no HDF5 of their own.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "store/h5_door_internal.h"

static hid_t num_type(usc__h5_col_kind k, bool native)
{
	switch (k) {
	case USC__H5_COL_INT64:
		return native ? H5T_NATIVE_INT64 : H5T_STD_I64LE;
	case USC__H5_COL_UINT64:
		return native ? H5T_NATIVE_UINT64 : H5T_STD_U64LE;
	default:
		return native ? H5T_NATIVE_DOUBLE : H5T_IEEE_F64LE;
	}
}

/*
 * A packed compound of the columns: strings of the types str[c], numbers
 * of the file's or the native types.  Offsets to off[], size to *size.
 */
static hid_t table_compound(const usc__h5_column *cols, size_t ncols,
			    const hid_t *str, bool native, size_t *off,
			    size_t *size)
{
	size_t total = 0;
	hid_t ct;

	for (size_t c = 0; c < ncols; c++) {
		off[c] = total;
		total += cols[c].kind == USC__H5_COL_STRING
				 ? H5Tget_size(str[c])
				 : 8;
	}
	*size = total;
	ct = H5Tcreate(H5T_COMPOUND, total ? total : 1);
	for (size_t c = 0; ct >= 0 && c < ncols; c++) {
		hid_t t = cols[c].kind == USC__H5_COL_STRING
				  ? str[c]
				  : num_type(cols[c].kind, native);

		if (H5Tinsert(ct, cols[c].name, off[c], t) < 0) {
			H5Tclose(ct);
			ct = -1;
		}
	}
	return ct;
}

static const char *str_member(const void *row, const usc__h5_column *c)
{
	const char *v;

	memcpy(&v, (const unsigned char *)row + c->offset, sizeof v);
	return v ? v : "";
}

usc_status usc__h5_write_table(usc__h5_file *f, const char *dataset,
			       const usc__h5_column *cols, size_t ncols,
			       const void *rows, size_t n, size_t stride,
			       usc_error *err)
{
	hid_t *str = NULL, mt = -1, ft = -1, space = -1, lcpl = -1;
	hid_t dcpl = -1, dset = -1;
	size_t *off = NULL, rowsize = 0;
	hsize_t dim = n, chunk;
	unsigned char *buf = NULL;
	usc_status st = USC_OK;
	usc__h5_quiet q;

	str = usc__calloc(ncols ? ncols : 1, sizeof *str);
	off = usc__calloc(ncols ? ncols : 1, sizeof *off);
	if (!str || !off) {
		usc__free(str);
		usc__free(off);
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	}
	for (size_t c = 0; c < ncols; c++)
		str[c] = -1;
	q = usc__h5_quiet_begin();
	for (size_t c = 0; c < ncols; c++) {
		size_t w = 0;

		if (cols[c].kind != USC__H5_COL_STRING)
			continue;
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(str_member(
				(const unsigned char *)rows + i * stride,
				&cols[c]));

			if (len > w)
				w = len;
		}
		str[c] = usc__h5_fixed_string_type(w);
		if (str[c] < 0)
			goto describe;
	}
	mt = table_compound(cols, ncols, str, true, off, &rowsize);
	ft = table_compound(cols, ncols, str, false, off, &rowsize);
	space = H5Screate_simple(1, &dim, NULL);
	lcpl = H5Pcreate(H5P_LINK_CREATE);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (mt < 0 || ft < 0 || space < 0 || lcpl < 0 || dcpl < 0 ||
	    H5Pset_create_intermediate_group(lcpl, 1) < 0)
		goto describe;
	if (n && rowsize * n > USC__H5_CHUNK_THRESHOLD) {
		chunk = (1u << 20) / rowsize;
		chunk = chunk < 1 ? 1 : chunk > n ? n : chunk;
		if (H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
		    (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
		     H5Pset_deflate(dcpl, 6) < 0) ||
		    H5Pset_fletcher32(dcpl) < 0)
			goto describe;
	}
	if (n) {
		buf = usc__reallocarray(NULL, n, rowsize);
		if (!buf) {
			st = usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				       f->path, dataset);
			goto done;
		}
		memset(buf, 0, n * rowsize);
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *row = (const unsigned char *)rows +
					   i * stride;

		for (size_t c = 0; c < ncols; c++) {
			unsigned char *dst = buf + i * rowsize + off[c];

			if (cols[c].kind == USC__H5_COL_STRING) {
				const char *v = str_member(row, &cols[c]);

				memcpy(dst, v, strlen(v));
			} else {
				memcpy(dst, row + cols[c].offset, 8);
			}
		}
	}
	dset = H5Dcreate2(f->id, dataset, ft, space, lcpl, dcpl, H5P_DEFAULT);
	if (dset < 0 ||
	    (n && H5Dwrite(dset, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0))
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot write the table",
				  f->path, dataset);
	goto done;
describe:
	st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the table",
			  f->path, dataset);
done:
	if (dset >= 0)
		H5Dclose(dset);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	if (space >= 0)
		H5Sclose(space);
	if (ft >= 0)
		H5Tclose(ft);
	if (mt >= 0)
		H5Tclose(mt);
	for (size_t c = 0; c < ncols; c++)
		if (str[c] >= 0)
			H5Tclose(str[c]);
	usc__h5_quiet_end(q);
	usc__free(buf);
	usc__free(str);
	usc__free(off);
	return st;
}

/*
 * Checks that every column is in the file's compound ft with its kind;
 * the string columns' file types (copies) go to str[].  Quiet scope.
 */
static usc_status columns_check(hid_t ft, const char *where,
				const usc__h5_column *cols, size_t ncols,
				hid_t *str, usc_error *err)
{
	for (size_t c = 0; c < ncols; c++) {
		int idx = H5Tget_member_index(ft, cols[c].name);
		hid_t mt = idx >= 0 ? H5Tget_member_type(ft, (unsigned)idx)
				    : -1;
		H5T_class_t k = mt >= 0 ? H5Tget_class(mt) : H5T_NO_CLASS;
		bool ok;

		if (mt < 0) {
			H5Eclear2(H5E_DEFAULT);
			return usc__fail(err, USC_EPARSE, "%s: no column '%s'",
					 where, cols[c].name);
		}
		switch (cols[c].kind) {
		case USC__H5_COL_STRING:
			ok = k == H5T_STRING && H5Tis_variable_str(mt) == 0;
			break;
		case USC__H5_COL_DOUBLE:
			ok = k == H5T_FLOAT;
			break;
		default:
			ok = k == H5T_INTEGER;
			break;
		}
		if (!ok) {
			H5Tclose(mt);
			H5Eclear2(H5E_DEFAULT);
			return usc__fail(
				err, USC_EPARSE, "%s: column '%s' is not %s",
				where, cols[c].name,
				cols[c].kind == USC__H5_COL_STRING
					? "a fixed-length string"
				: cols[c].kind == USC__H5_COL_DOUBLE
					? "a floating-point number"
					: "an integer");
		}
		if (cols[c].kind == USC__H5_COL_STRING)
			str[c] = mt;
		else
			H5Tclose(mt);
	}
	return USC_OK;
}

static void free_strings(void *rows, size_t n, size_t stride,
			 const usc__h5_column *cols, size_t ncols)
{
	for (size_t i = 0; rows && i < n; i++) {
		unsigned char *row = (unsigned char *)rows + i * stride;

		for (size_t c = 0; c < ncols; c++) {
			char *v;

			if (cols[c].kind != USC__H5_COL_STRING)
				continue;
			memcpy(&v, row + cols[c].offset, sizeof v);
			usc__free(v);
		}
	}
}

usc_status usc__h5_read_table(usc__h5_file *f, const char *dataset,
			      const usc__h5_column *cols, size_t ncols,
			      size_t stride, void **rows, size_t *n,
			      usc_error *err)
{
	usc__h5_dataset *d = NULL;
	hid_t *str = NULL, ft = -1, mt = -1, space = -1;
	size_t *off = NULL, rowsize = 0, count = 0;
	unsigned char *buf = NULL, *out = NULL;
	hssize_t npoints;
	usc_status st;
	usc__h5_quiet q;

	*rows = NULL;
	*n = 0;
	st = usc__h5_dataset_open(f, dataset, &d, err);
	if (st != USC_OK)
		return st;
	str = usc__calloc(ncols ? ncols : 1, sizeof *str);
	off = usc__calloc(ncols ? ncols : 1, sizeof *off);
	if (!str || !off) {
		usc__free(str);
		usc__free(off);
		usc__h5_dataset_close(d);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory",
				 f->path);
	}
	for (size_t c = 0; c < ncols; c++)
		str[c] = -1;
	q = usc__h5_quiet_begin();
	ft = H5Dget_type(d->id);
	space = H5Dget_space(d->id);
	if (ft < 0 || space < 0 || H5Tget_class(ft) != H5T_COMPOUND ||
	    H5Sget_simple_extent_ndims(space) != 1) {
		H5Eclear2(H5E_DEFAULT);
		st = usc__fail(err, USC_EPARSE,
			       "%s: not a one-dimensional compound table",
			       d->where);
		goto done;
	}
	st = columns_check(ft, d->where, cols, ncols, str, err);
	if (st != USC_OK)
		goto done;
	npoints = H5Sget_simple_extent_npoints(space);
	mt = table_compound(cols, ncols, str, true, off, &rowsize);
	if (npoints < 0 || mt < 0) {
		st = usc__h5_read_fail(err, USC_EIO,
				       "%s: cannot read the table", d->where);
		goto done;
	}
	count = (size_t)npoints;
	if (count == 0)
		goto done;
	buf = usc__reallocarray(NULL, count, rowsize);
	out = usc__calloc(count, stride);
	if (!buf || !out) {
		st = usc__fail(err, USC_ENOMEM, "%s: out of memory", d->where);
		goto done;
	}
	if (H5Dread(d->id, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
		st = usc__h5_read_fail(err, USC_EIO,
				       "%s: cannot read the table", d->where);
		goto done;
	}
	for (size_t i = 0; i < count && st == USC_OK; i++) {
		const unsigned char *row = buf + i * rowsize;
		unsigned char *dst = out + i * stride;

		for (size_t c = 0; c < ncols; c++) {
			const char *v = (const char *)row + off[c];
			char *s;

			if (cols[c].kind != USC__H5_COL_STRING) {
				memcpy(dst + cols[c].offset, v, 8);
				continue;
			}
			s = usc__strndup(v, strnlen(v, H5Tget_size(str[c])));
			if (!s) {
				st = usc__fail(err, USC_ENOMEM,
					       "%s: out of memory", d->where);
				break;
			}
			memcpy(dst + cols[c].offset, &s, sizeof s);
		}
	}
done:
	if (mt >= 0)
		H5Tclose(mt);
	for (size_t c = 0; c < ncols; c++)
		if (str[c] >= 0)
			H5Tclose(str[c]);
	if (space >= 0)
		H5Sclose(space);
	if (ft >= 0)
		H5Tclose(ft);
	usc__h5_quiet_end(q);
	usc__free(buf);
	usc__free(str);
	usc__free(off);
	usc__h5_dataset_close(d);
	if (st != USC_OK) {
		free_strings(out, count, stride, cols, ncols);
		usc__free(out);
		return st;
	}
	*rows = out;
	*n = count;
	return USC_OK;
}

usc_status usc__h5_link_external(usc__h5_file *f, const char *link,
				 const char *target, const char *obj,
				 usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	usc_status st = USC_OK;

	if (lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
	    H5Lcreate_external(target, obj, f->id, link, lcpl, H5P_DEFAULT) <
		    0)
		st = usc__h5_fail(err, USC_EIO,
				  "%s: cannot link %s to %s:%s", f->path, link,
				  target, obj);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	usc__h5_quiet_end(q);
	return st;
}
