/*
 * The door to HDF5 (see h5_door.h): the only file that includes <hdf5.h>.
 *
 * HDF5 prints its error stack to stderr by default.  A library must not
 * print, so each public entry point here runs inside a "quiet" scope that
 * switches the automatic printing off and restores whatever the
 * application had set; failures become messages instead.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "store/h5_door.h"

struct usc__h5_file {
	hid_t id;
	char *path;
};

struct usc__h5_dataset {
	hid_t id;
	char *where; /* "FILE:/dataset", for messages */
};

/* The application's automatic error handler, saved by quiet_begin. */
typedef struct quiet {
	H5E_auto2_t func;
	void *data;
} quiet;

static quiet quiet_begin(void)
{
	quiet q = {NULL, NULL};

	H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return q;
}

static void quiet_end(quiet q)
{
	H5Eclear2(H5E_DEFAULT);
	H5Eset_auto2(H5E_DEFAULT, q.func, q.data);
}

/* Keeps the innermost description of the error stack. */
static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
	char *buf = data;

	(void)n;
	if (e->desc && e->desc[0])
		snprintf(buf, 256, "%s", e->desc);
	return 0;
}

/*
 * Fails with the message fmt and, after a colon, what HDF5 said last.
 * The stack is cleared afterwards.
 */
static usc_status h5_fail(usc_error *err, usc_status code, const char *fmt,
			  ...) USC__PRINTF(3, 4);

static usc_status h5_fail(usc_error *err, usc_status code, const char *fmt,
			  ...)
{
	char what[USC_ERROR_MESSAGE_SIZE];
	char detail[256] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, detail);
	H5Eclear2(H5E_DEFAULT);
	if (detail[0])
		return usc__fail(err, code, "%s: %s", what, detail);
	return usc__fail(err, code, "%s", what);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

static usc_status file_new(const char *path, hid_t id, usc__h5_file **out,
			   usc_error *err)
{
	usc__h5_file *f = usc__calloc(1, sizeof *f);

	if (f)
		f->path = usc__strndup(path, strlen(path));
	if (!f || !f->path) {
		usc__free(f);
		H5Fclose(id);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	}
	f->id = id;
	*out = f;
	return USC_OK;
}

usc_status usc__h5_file_open_read(const char *path, usc__h5_file **out,
				  usc_error *err)
{
	quiet q;
	FILE *fp;
	htri_t is;
	hid_t id;
	usc_status st;

	*out = NULL;
	/* HDF5's own message for a missing file is obscure; ask the OS. */
	fp = fopen(path, "rb");
	if (!fp)
		return usc__fail(err, errno == ENOENT ? USC_ENOTFOUND : USC_EIO,
				 "%s: cannot open: %s", path, strerror(errno));
	fclose(fp);
	q = quiet_begin();
	is = H5Fis_hdf5(path);
	if (is == 0) {
		H5Eclear2(H5E_DEFAULT);
		st = usc__fail(err, USC_EPARSE, "%s: not an HDF5 file", path);
		goto done;
	}
	id = is > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
	if (id < 0) {
		st = h5_fail(err, USC_EIO, "%s: cannot open HDF5 file", path);
		goto done;
	}
	st = file_new(path, id, out, err);
done:
	quiet_end(q);
	return st;
}

usc_status usc__h5_file_create(const char *path, usc__h5_file **out,
			       usc_error *err)
{
	quiet q = quiet_begin();
	hid_t id;
	usc_status st;

	*out = NULL;
	id = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (id < 0)
		st = h5_fail(err, USC_EIO, "%s: cannot create HDF5 file", path);
	else
		st = file_new(path, id, out, err);
	quiet_end(q);
	return st;
}

usc_status usc__h5_file_close(usc__h5_file *f, usc_error *err)
{
	quiet q;
	usc_status st = USC_OK;

	if (!f)
		return USC_OK;
	q = quiet_begin();
	if (H5Fclose(f->id) < 0)
		st = h5_fail(err, USC_EIO, "%s: cannot close HDF5 file",
			     f->path);
	quiet_end(q);
	usc__free(f->path);
	usc__free(f);
	return st;
}

/* ------------------------------------------------------------------ */
/* Datasets                                                            */

usc_status usc__h5_dataset_open(usc__h5_file *f, const char *dataset,
				usc__h5_dataset **out, usc_error *err)
{
	quiet q;
	usc__h5_dataset *d;
	size_t plen = strlen(f->path), dlen = strlen(dataset);
	usc_status st = USC_OK;
	hid_t id;

	*out = NULL;
	d = usc__calloc(1, sizeof *d);
	if (d)
		d->where = usc__malloc(plen + dlen + 2);
	if (!d || !d->where) {
		usc__free(d);
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	}
	snprintf(d->where, plen + dlen + 2, "%s:%s", f->path, dataset);
	if (dataset[0] != '/') {
		st = usc__fail(err, USC_EINVAL,
			       "%s: dataset path must start with '/'",
			       d->where);
		goto fail;
	}
	q = quiet_begin();
	/*
	 * H5Lexists fails rather than answers when an inner group is
	 * missing, so each prefix of the path is asked in turn: the first
	 * missing one is what the message names.
	 */
	for (size_t i = 1; i <= dlen; i++) {
		char prefix[1024];

		if (i < dlen && dataset[i] != '/')
			continue;
		if (i >= sizeof prefix)
			break;
		memcpy(prefix, dataset, i);
		prefix[i] = '\0';
		if (i == 1 && dlen == 1)
			break;
		if (H5Lexists(f->id, prefix, H5P_DEFAULT) <= 0) {
			H5Eclear2(H5E_DEFAULT);
			st = usc__fail(err, USC_ENOTFOUND,
				       "%s: no such dataset", d->where);
			break;
		}
	}
	if (st == USC_OK) {
		id = H5Dopen2(f->id, dataset, H5P_DEFAULT);
		if (id < 0) {
			H5Eclear2(H5E_DEFAULT);
			st = usc__fail(err, USC_EINVAL, "%s: not a dataset",
				       d->where);
		} else {
			d->id = id;
		}
	}
	quiet_end(q);
	if (st != USC_OK)
		goto fail;
	*out = d;
	return USC_OK;
fail:
	usc__free(d->where);
	usc__free(d);
	return st;
}

void usc__h5_dataset_close(usc__h5_dataset *d)
{
	quiet q;

	if (!d)
		return;
	q = quiet_begin();
	H5Dclose(d->id);
	quiet_end(q);
	usc__free(d->where);
	usc__free(d);
}

usc_status usc__h5_dataset_shape(usc__h5_dataset *d, size_t max_rank,
				 size_t *rank, int64_t *dims, usc_error *err)
{
	quiet q = quiet_begin();
	hid_t space = H5Dget_space(d->id);
	hsize_t hd[H5S_MAX_RANK];
	usc_status st = USC_OK;
	int n;

	if (space < 0) {
		st = h5_fail(err, USC_EIO, "%s: cannot read the dataspace",
			     d->where);
		goto done;
	}
	switch (H5Sget_simple_extent_type(space)) {
	case H5S_SCALAR:
		*rank = 0;
		break;
	case H5S_SIMPLE:
		n = H5Sget_simple_extent_dims(space, hd, NULL);
		if (n < 0) {
			st = h5_fail(err, USC_EIO,
				     "%s: cannot read the dataspace", d->where);
			break;
		}
		if ((size_t)n > max_rank) {
			st = usc__fail(err, USC_EUNSUPPORTED,
				       "%s: rank %d is above %zu", d->where, n,
				       max_rank);
			break;
		}
		for (int i = 0; i < n; i++) {
			if (hd[i] > (hsize_t)INT64_MAX) {
				st = usc__fail(err, USC_ERANGE,
					       "%s: dimension too large",
					       d->where);
				break;
			}
			dims[i] = (int64_t)hd[i];
		}
		*rank = (size_t)n;
		break;
	default:
		st = usc__fail(err, USC_EINVAL,
			       "%s: dataset has no data (null dataspace)",
			       d->where);
		break;
	}
done:
	if (space >= 0)
		H5Sclose(space);
	quiet_end(q);
	return st;
}

/* Describes one float type's fields. */
static bool float_fields(hid_t t, usc__h5_type *out)
{
	size_t spos, epos, esize, mpos, msize;

	if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0)
		return false;
	out->precision = H5Tget_precision(t);
	out->sign_pos = spos;
	out->exp_pos = epos;
	out->exp_bits = esize;
	out->man_pos = mpos;
	out->man_bits = msize;
	out->exp_bias = H5Tget_ebias(t);
	return true;
}

usc_status usc__h5_dataset_type(usc__h5_dataset *d, usc__h5_type *out,
				usc_error *err)
{
	quiet q = quiet_begin();
	hid_t t = H5Dget_type(d->id), m0 = -1, m1 = -1;
	usc_status st = USC_OK;
	H5T_class_t cls;

	memset(out, 0, sizeof *out);
	if (t < 0) {
		st = h5_fail(err, USC_EIO, "%s: cannot read the datatype",
			     d->where);
		goto done;
	}
	cls = H5Tget_class(t);
	out->size = H5Tget_size(t);
	out->big_endian = H5Tget_order(t) == H5T_ORDER_BE;
	switch (cls) {
	case H5T_INTEGER:
		out->cls = USC__H5_INTEGER;
		out->is_signed = H5Tget_sign(t) == H5T_SGN_2;
		snprintf(out->text, sizeof out->text,
			 "HDF5 %s %zu-bit integer",
			 out->is_signed ? "signed" : "unsigned", out->size * 8);
		break;
	case H5T_FLOAT:
		out->cls = USC__H5_FLOAT;
		float_fields(t, out);
		snprintf(out->text, sizeof out->text,
			 "HDF5 %zu-bit float (%zu exponent bits, %zu mantissa "
			 "bits)",
			 out->size * 8, out->exp_bits, out->man_bits);
		break;
	case H5T_OPAQUE:
	case H5T_BITFIELD:
		out->cls = USC__H5_OPAQUE;
		/* A bitfield has a byte order; an opaque has none. */
		if (cls == H5T_OPAQUE)
			out->big_endian = false;
		snprintf(out->text, sizeof out->text, "HDF5 %s of %zu bytes",
			 cls == H5T_OPAQUE ? "opaque" : "bitfield", out->size);
		break;
	case H5T_ENUM:
		out->cls = out->size == 1 && H5Tget_nmembers(t) == 2
				   ? USC__H5_BOOL
				   : USC__H5_ENUM;
		snprintf(out->text, sizeof out->text, "HDF5 %s of %zu bytes",
			 out->cls == USC__H5_BOOL ? "bool enum" : "enum",
			 out->size);
		break;
	case H5T_COMPOUND:
		out->cls = USC__H5_OTHER;
		snprintf(out->text, sizeof out->text,
			 "HDF5 compound of %zu bytes", out->size);
		if (H5Tget_nmembers(t) != 2 || out->size % 2)
			break;
		m0 = H5Tget_member_type(t, 0);
		m1 = H5Tget_member_type(t, 1);
		if (m0 < 0 || m1 < 0 || H5Tget_class(m0) != H5T_FLOAT ||
		    H5Tequal(m0, m1) <= 0 ||
		    H5Tget_size(m0) != out->size / 2 ||
		    H5Tget_member_offset(t, 0) != 0 ||
		    H5Tget_member_offset(t, 1) != out->size / 2)
			break;
		out->cls = USC__H5_COMPLEX;
		out->big_endian = H5Tget_order(m0) == H5T_ORDER_BE;
		float_fields(m0, out);
		snprintf(out->text, sizeof out->text,
			 "HDF5 complex of two %zu-bit floats", out->size * 4);
		break;
	default:
		out->cls = USC__H5_OTHER;
		snprintf(out->text, sizeof out->text, "HDF5 %s type",
			 cls == H5T_STRING      ? "string"
			 : cls == H5T_VLEN      ? "variable-length"
			 : cls == H5T_ARRAY     ? "array"
			 : cls == H5T_REFERENCE ? "reference"
			 : cls == H5T_TIME      ? "time"
						: "unknown");
		break;
	}
done:
	H5Eclear2(H5E_DEFAULT);
	if (m0 >= 0)
		H5Tclose(m0);
	if (m1 >= 0)
		H5Tclose(m1);
	if (t >= 0)
		H5Tclose(t);
	quiet_end(q);
	return st;
}

usc_status usc__h5_dataset_read_raw(usc__h5_dataset *d, void *buf,
				    size_t nbytes, usc_error *err)
{
	quiet q;
	hid_t t;
	usc_status st = USC_OK;

	if (nbytes == 0)
		return USC_OK;
	q = quiet_begin();
	/*
	 * Reading with the file's own type as the memory type makes HDF5
	 * copy the bytes as stored: no conversion, so no value is ever
	 * altered on the way in.
	 */
	t = H5Dget_type(d->id);
	if (t < 0 || H5Dread(d->id, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
		st = h5_fail(err, USC_EIO, "%s: cannot read the data",
			     d->where);
	if (t >= 0)
		H5Tclose(t);
	quiet_end(q);
	return st;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* The file type for t, as h5py would write it; a new id, or -1. */
static hid_t file_type_of(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);
	hid_t id = -1, part;
	char tag[64];

	switch (t) {
	case USC_PRED:
		id = H5Tenum_create(H5T_NATIVE_SCHAR);
		if (id >= 0) {
			signed char no = 0, yes = 1;

			H5Tenum_insert(id, "FALSE", &no);
			H5Tenum_insert(id, "TRUE", &yes);
		}
		return id;
	case USC_S8:
		return H5Tcopy(H5T_STD_I8LE);
	case USC_S16:
		return H5Tcopy(H5T_STD_I16LE);
	case USC_S32:
		return H5Tcopy(H5T_STD_I32LE);
	case USC_S64:
		return H5Tcopy(H5T_STD_I64LE);
	case USC_U8:
		return H5Tcopy(H5T_STD_U8LE);
	case USC_U16:
		return H5Tcopy(H5T_STD_U16LE);
	case USC_U32:
		return H5Tcopy(H5T_STD_U32LE);
	case USC_U64:
		return H5Tcopy(H5T_STD_U64LE);
	case USC_F16:
		/* h5py's half: IEEE binary16 carved out of binary32. */
		id = H5Tcopy(H5T_IEEE_F32LE);
		if (id >= 0 && (H5Tset_fields(id, 15, 10, 5, 0, 10) < 0 ||
				H5Tset_size(id, 2) < 0 ||
				H5Tset_ebias(id, 15) < 0)) {
			H5Tclose(id);
			id = -1;
		}
		return id;
	case USC_F32:
		return H5Tcopy(H5T_IEEE_F32LE);
	case USC_F64:
		return H5Tcopy(H5T_IEEE_F64LE);
	case USC_C64:
	case USC_C128:
		part = t == USC_C64 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
		id = H5Tcreate(H5T_COMPOUND, (size_t)f->container_bytes);
		if (id >= 0 &&
		    (H5Tinsert(id, "r", 0, part) < 0 ||
		     H5Tinsert(id, "i", (size_t)f->container_bytes / 2, part) <
			     0)) {
			H5Tclose(id);
			id = -1;
		}
		return id;
	default:
		if (!f || f->container_bytes == 0)
			return -1;
		id = H5Tcreate(H5T_OPAQUE, (size_t)f->container_bytes);
		snprintf(tag, sizeof tag, "ulpscope:%s", f->name);
		if (id >= 0 && H5Tset_tag(id, tag) < 0) {
			H5Tclose(id);
			id = -1;
		}
		return id;
	}
}

usc_status usc__h5_write_array(usc__h5_file *f, const char *dataset,
			       usc_dtype t, size_t rank, const int64_t *dims,
			       const void *data, usc_error *err)
{
	quiet q = quiet_begin();
	hsize_t hd[H5S_MAX_RANK];
	hid_t type = -1, space = -1, lcpl = -1, dset = -1;
	usc_status st = USC_OK;
	uint64_t count = 1;

	if (rank > H5S_MAX_RANK) {
		st = usc__fail(err, USC_EUNSUPPORTED,
			       "%s:%s: rank %zu is above %d", f->path, dataset,
			       rank, H5S_MAX_RANK);
		goto done;
	}
	for (size_t i = 0; i < rank; i++) {
		hd[i] = (hsize_t)dims[i];
		count *= (uint64_t)dims[i];
	}
	type = file_type_of(t);
	space = rank ? H5Screate_simple((int)rank, hd, NULL)
		     : H5Screate(H5S_SCALAR);
	lcpl = H5Pcreate(H5P_LINK_CREATE);
	if (type < 0 || space < 0 || lcpl < 0 ||
	    H5Pset_create_intermediate_group(lcpl, 1) < 0) {
		st = h5_fail(err, USC_EIO, "%s:%s: cannot describe type %s",
			     f->path, dataset, usc_dtype_name(t));
		goto done;
	}
	dset = H5Dcreate2(f->id, dataset, type, space, lcpl, H5P_DEFAULT,
			  H5P_DEFAULT);
	if (dset < 0) {
		st = h5_fail(err, USC_EIO, "%s:%s: cannot create the dataset",
			     f->path, dataset);
		goto done;
	}
	if (count &&
	    H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot write the data",
			     f->path, dataset);
done:
	if (dset >= 0)
		H5Dclose(dset);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	quiet_end(q);
	return st;
}
