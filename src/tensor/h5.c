/*
 * HDF5 datasets as tensors, through the HDF5 door (src/store/h5_door.h),
 * and the reader that picks a format from the way a source is named.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store/h5_door.h"
#include "tensor/tensor_internal.h"

/*
 * Whether an HDF5 float's fields are those of format t: the same width,
 * exponent and mantissa fields, bias, and the sign bit on top.  HDF5 has
 * no words for NaN encodings, so f8e4m3 and f8e4m3fn look alike; the
 * expected type decides between such twins.
 */
static bool float_is(const usc__h5_type *h, usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	if (f->kind == USC_KIND_COMPLEX)
		f = usc_format_of(t == USC_C64 ? USC_F32 : USC_F64);
	if (f->kind != USC_KIND_FLOAT || !f->has_sign)
		return false;
	return h->precision == (size_t)f->bits &&
	       h->exp_bits == (size_t)f->exp_bits &&
	       h->man_bits == (size_t)f->man_bits && h->man_pos == 0 &&
	       h->exp_pos == (size_t)f->man_bits &&
	       h->sign_pos == (size_t)(f->bits - 1) &&
	       h->exp_bias == (size_t)f->bias;
}

/* Maps an HDF5 element type onto the compatibility rule's classes. */
static usc_status classify(const char *where, const usc__h5_type *h,
			   const usc_tensor_spec *spec, usc__file_elem *fe,
			   usc_error *err)
{
	memset(fe, 0, sizeof *fe);
	fe->size = h->size;
	fe->big_endian = h->big_endian;
	fe->text = h->text;
	fe->floating = USC_DTYPE_INVALID;
	switch (h->cls) {
	case USC__H5_INTEGER:
	case USC__H5_ENUM:
		fe->cls = USC__ELEM_INT;
		return USC_OK;
	case USC__H5_OPAQUE:
		fe->cls = USC__ELEM_RAW;
		return USC_OK;
	case USC__H5_BOOL:
		fe->cls = USC__ELEM_BOOL;
		return USC_OK;
	case USC__H5_FLOAT:
	case USC__H5_COMPLEX:
		fe->cls = h->cls == USC__H5_FLOAT ? USC__ELEM_FLOAT
						  : USC__ELEM_COMPLEX;
		if (float_is(h, spec->dtype))
			fe->floating = spec->dtype;
		return USC_OK;
	case USC__H5_OTHER:
		break;
	}
	return usc__fail(err, USC_EUNSUPPORTED,
			 "%s: %s is not a tensor element type", where, h->text);
}

/*
 * HDF5 opens the file itself: a FIFO or a device is refused first, as
 * every reader does (usc__open_regular).
 */
static usc_status regular_file(const char *path, usc_error *err)
{
	FILE *fp;
	uint64_t size;
	usc_status st = usc__open_regular(path, &fp, &size, err);

	if (st == USC_OK)
		fclose(fp);
	return st;
}

usc_status usc_tensor_read_h5_dataset(const char *path, const char *dataset,
				      const usc_tensor_spec *spec,
				      usc_tensor **out, usc_error *err)
{
	usc_status st = usc__reader_begin(spec, out, true, err);
	usc__h5_file *f = NULL;
	usc__h5_dataset *d = NULL;
	usc__h5_type h;
	usc__file_elem fe;
	int64_t dims[USC_TENSOR_MAX_RANK];
	size_t rank;
	usc_tensor *t = NULL;
	char *where = NULL;

	if (st != USC_OK)
		return st;
	if (!path || !dataset)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_read_h5_dataset: NULL argument");
	where = usc__malloc(strlen(path) + strlen(dataset) + 2);
	if (!where)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory", path,
				 dataset);
	sprintf(where, "%s:%s", path, dataset);
	st = regular_file(path, err);
	if (st == USC_OK)
		st = usc__h5_file_open_read_data(path, dataset, &f, err);
	if (st != USC_OK)
		goto done;
	st = usc__h5_dataset_open(f, dataset, &d, err);
	if (st != USC_OK)
		goto done;
	st = usc__h5_dataset_shape(d, USC_TENSOR_MAX_RANK, &rank, dims, err);
	if (st != USC_OK)
		goto done;
	st = usc__h5_dataset_type(d, &h, err);
	if (st != USC_OK)
		goto done;
	st = classify(where, &h, spec, &fe, err);
	if (st != USC_OK)
		goto done;
	st = usc__check_shape(where, spec, rank, dims, err);
	if (st != USC_OK)
		goto done;
	st = usc__check_elem(where, &fe, spec, err);
	if (st != USC_OK)
		goto done;
	st = usc__tensor_new(spec->dtype, rank, dims, where, &t, err);
	if (st != USC_OK)
		goto done;
	st = usc__h5_dataset_read_raw(d, t->data, t->nbytes, err);
	if (st != USC_OK)
		goto done;
	st = usc__tensor_canonicalize(t, fe.big_endian, where, err);
	if (st != USC_OK)
		goto done;
	*out = t;
	t = NULL;
done:
	usc_tensor_destroy(t);
	usc__h5_dataset_close(d);
	/* A close failure after a read only matters when nothing failed. */
	if (st == USC_OK)
		st = usc__h5_file_close(f, err);
	else
		usc__h5_file_close(f, NULL);
	if (st != USC_OK && *out) {
		usc_tensor_destroy(*out);
		*out = NULL;
	}
	usc__free(where);
	return st;
}

/* Case-insensitive: whether the n bytes before s + at end in suffix. */
static bool ends_with_ci(const char *s, size_t at, const char *suffix)
{
	size_t n = strlen(suffix);

	if (at < n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[at - n + i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != suffix[i])
			return false;
	}
	return true;
}

/*
 * Where the file part of "FILE:/dataset" ends: at the first ":/" after
 * ".h5" or ".hdf5", else at the last ":/"; SIZE_MAX when there is none.
 */
static size_t h5_split(const char *source, bool need_suffix)
{
	size_t last = SIZE_MAX;

	for (size_t i = 0; source[i]; i++) {
		if (source[i] != ':' || source[i + 1] != '/')
			continue;
		if (ends_with_ci(source, i, ".h5") ||
		    ends_with_ci(source, i, ".hdf5"))
			return i;
		last = i;
	}
	return need_suffix ? SIZE_MAX : last;
}

usc_status usc_tensor_read_h5(const char *source, const usc_tensor_spec *spec,
			      usc_tensor **out, usc_error *err)
{
	usc_status st = usc__reader_begin(spec, out, true, err);
	size_t at;
	char *file;

	if (st != USC_OK)
		return st;
	if (!source)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_read_h5: source is NULL");
	at = h5_split(source, false);
	if (at == SIZE_MAX || at == 0)
		return usc__fail(err, USC_EINVAL,
				 "%s: expected FILE.h5:/DATASET", source);
	file = usc__strndup(source, at);
	if (!file)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", source);
	st = usc_tensor_read_h5_dataset(file, source + at + 1, spec, out, err);
	usc__free(file);
	return st;
}

usc_status usc_tensor_read(const char *source, const usc_tensor_spec *spec,
			   unsigned flags, usc_tensor **out, usc_error *err)
{
	usc_status st = usc__reader_begin(spec, out, true, err);
	size_t n;

	if (st != USC_OK)
		return st;
	if (!source)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_read: source is NULL");
	if (h5_split(source, true) != SIZE_MAX)
		return usc_tensor_read_h5(source, spec, out, err);
	n = strlen(source);
	if (ends_with_ci(source, n, ".npy"))
		return usc_tensor_read_npy(source, spec, out, err);
	if (flags & USC_TENSOR_READ_RAW)
		return usc_tensor_read_raw(source, spec, out, err);
	return usc__fail(err, USC_EINVAL,
			 "%s: not a known tensor source: name a .npy file, "
			 "FILE.h5:/DATASET, or read it as raw",
			 source);
}
