/*
 * Writing datasets, inside the door to HDF5 (h5_door_internal.h): the
 * file types of tensors, chunking, whole arrays, datasets created for
 * writing by ranges, enums and strings.  Each entry point runs in a quiet
 * scope as in h5_door.c.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/h5_door_internal.h"

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

/*
 * Chooses chunk dimensions: the whole shape, with the leading dimensions
 * halved until a chunk holds at most 1 MiB, so that a chunk is a run of
 * whole rows in C order and a reader of one row touches one chunk.
 */
static void choose_chunk(size_t rank, const hsize_t *dims, size_t elem,
			 hsize_t *chunk)
{
	uint64_t bytes = elem;

	for (size_t i = 0; i < rank; i++) {
		chunk[i] = dims[i] ? dims[i] : 1;
		bytes *= chunk[i];
	}
	for (size_t i = 0; i < rank && bytes > (1u << 20); i++) {
		while (chunk[i] > 1 && bytes > (1u << 20)) {
			bytes /= chunk[i];
			chunk[i] = (chunk[i] + 1) / 2;
			bytes *= chunk[i];
		}
	}
}

/* The deflate level of each usc__h5_pack; 0: no shuffle, no deflate. */
static int pack_level(usc__h5_pack pack)
{
	switch (pack) {
	case USC__H5_PACK_FAST:
		return 1;
	case USC__H5_PACK_RAW:
		return 0;
	case USC__H5_PACK_SMALL:
	default:
		return 6;
	}
}

/*
 * Creates dataset (with any missing groups) of file type ftype and the
 * given shape; *dset receives it.  Datasets of more than
 * USC__H5_CHUNK_THRESHOLD bytes of elem_size-byte elements are chunked and
 * checksummed, and shuffled and compressed as pack says; elem_size 0
 * never is.
 */
static usc_status create_dataset(usc__h5_file *f, const char *dataset,
				 hid_t ftype, size_t elem_size,
				 usc__h5_pack pack, size_t rank,
				 const int64_t *dims, hid_t *dset,
				 usc_error *err)
{
	int level = pack_level(pack);
	usc__h5_quiet q = usc__h5_quiet_begin();
	hsize_t hd[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
	hid_t space = -1, lcpl = -1, dcpl = -1;
	usc_status st = USC_OK;
	uint64_t count = 1;

	*dset = -1;
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
	space = rank ? H5Screate_simple((int)rank, hd, NULL)
		     : H5Screate(H5S_SCALAR);
	lcpl = H5Pcreate(H5P_LINK_CREATE);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (space < 0 || lcpl < 0 || dcpl < 0 ||
	    H5Pset_create_intermediate_group(lcpl, 1) < 0) {
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the dataset",
			     f->path, dataset);
		goto done;
	}
	if (elem_size && rank > 0 &&
	    count * elem_size > USC__H5_CHUNK_THRESHOLD) {
		choose_chunk(rank, hd, elem_size, chunk);
		if (H5Pset_chunk(dcpl, (int)rank, chunk) < 0 ||
		    (level > 0 && H5Pset_shuffle(dcpl) < 0) ||
		    (level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
		     H5Pset_deflate(dcpl, (unsigned)level) < 0) ||
		    H5Pset_fletcher32(dcpl) < 0) {
			st = usc__h5_fail(err, USC_EIO,
				     "%s:%s: cannot set up compression",
				     f->path, dataset);
			goto done;
		}
	}
	*dset = H5Dcreate2(f->id, dataset, ftype, space, lcpl, dcpl,
			   H5P_DEFAULT);
	if (*dset < 0)
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot create the dataset",
			     f->path, dataset);
done:
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	if (space >= 0)
		H5Sclose(space);
	usc__h5_quiet_end(q);
	return st;
}

/* create_dataset, then data, laid out as mtype, written whole into it. */
static usc_status write_dataset(usc__h5_file *f, const char *dataset,
				hid_t ftype, hid_t mtype, size_t elem_size,
				usc__h5_pack pack, size_t rank,
				const int64_t *dims, const void *data,
				usc_error *err)
{
	uint64_t count = 1;
	usc_status st;
	hid_t dset;
	usc__h5_quiet q;

	for (size_t i = 0; i < rank; i++)
		count *= (uint64_t)dims[i];
	st = create_dataset(f, dataset, ftype, elem_size, pack, rank, dims,
			    &dset, err);
	if (st != USC_OK)
		return st;
	q = usc__h5_quiet_begin();
	if (count &&
	    H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot write the data",
			     f->path, dataset);
	H5Dclose(dset);
	usc__h5_quiet_end(q);
	return st;
}

usc_status usc__h5_write_array(usc__h5_file *f, const char *dataset,
			       usc_dtype t, size_t rank, const int64_t *dims,
			       const void *data, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t type = file_type_of(t);
	usc_status st;

	if (type < 0) {
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe type %s",
			     f->path, dataset, usc_dtype_name(t));
		usc__h5_quiet_end(q);
		return st;
	}
	usc__h5_quiet_end(q);
	st = write_dataset(f, dataset, type, type, 0, USC__H5_PACK_SMALL, rank,
			   dims, data, err);
	H5Tclose(type);
	return st;
}


/* A variable-length UTF-8 string type; a new id, or -1. */
hid_t usc__h5_vlen_string_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 ||
		       H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
		H5Tclose(t);
		t = -1;
	}
	return t;
}

/*
 * A fixed-length UTF-8 string type of len bytes and a NUL; a new id, or
 * -1.  The result file stores every string this way rather than as a
 * variable-length string: those live in HDF5's global heap, whose records
 * carry no checksum, and HDF5 1.10 copies past its buffers when one of
 * their lengths is damaged.  Fixed-length strings sit in checksummed
 * object headers (attributes) or in plain raw data (datasets).
 */
hid_t usc__h5_fixed_string_type(size_t len)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	if (t >= 0 && (H5Tset_size(t, len + 1) < 0 ||
		       H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
		       H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
		H5Tclose(t);
		t = -1;
	}
	return t;
}

/* The file and memory types of a store type, and its element size. */
static size_t store_types(usc__h5_store t, hid_t *ftype, hid_t *mtype)
{
	static const size_t sizes[] = {1, 2, 4, 8, 8};

	switch (t) {
	case USC__H5_STORE_U8:
		*ftype = *mtype = H5T_STD_U8LE;
		break;
	case USC__H5_STORE_U16:
		*ftype = *mtype = H5T_STD_U16LE;
		break;
	case USC__H5_STORE_U32:
		*ftype = *mtype = H5T_STD_U32LE;
		break;
	case USC__H5_STORE_U64:
		*ftype = *mtype = H5T_STD_U64LE;
		break;
	default:
		*ftype = H5T_IEEE_F64LE, *mtype = H5T_NATIVE_DOUBLE;
		break;
	}
	return sizes[t];
}

usc_status usc__h5_write_numeric_packed(usc__h5_file *f,
					const char *dataset, usc__h5_store t,
					usc__h5_pack pack, size_t rank,
					const int64_t *dims, const void *data,
					usc_error *err)
{
	hid_t ftype, mtype;
	size_t size = store_types(t, &ftype, &mtype);

	return write_dataset(f, dataset, ftype, mtype, size, pack, rank, dims,
			     data, err);
}

usc_status usc__h5_write_numeric(usc__h5_file *f, const char *dataset,
				 usc__h5_store t, size_t rank,
				 const int64_t *dims, const void *data,
				 usc_error *err)
{
	return usc__h5_write_numeric_packed(f, dataset, t, USC__H5_PACK_SMALL,
					    rank, dims, data, err);
}

/* An enum over uint8 whose member i is names[i]; -1 on failure. */
static hid_t enum_u8_type(const char *const *names, size_t count)
{
	hid_t type = H5Tenum_create(H5T_NATIVE_UINT8);

	for (size_t i = 0; type >= 0 && i < count; i++) {
		uint8_t v = (uint8_t)i;

		if (H5Tenum_insert(type, names[i], &v) < 0) {
			H5Tclose(type);
			type = -1;
		}
	}
	return type;
}

usc_status usc__h5_write_enum_u8(usc__h5_file *f, const char *dataset,
				 size_t rank, const int64_t *dims,
				 const uint8_t *data, const char *const *names,
				 size_t count, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t type = enum_u8_type(names, count);
	usc_status st;

	if (type < 0) {
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the enum",
			     f->path, dataset);
		usc__h5_quiet_end(q);
		return st;
	}
	usc__h5_quiet_end(q);
	st = write_dataset(f, dataset, type, type, 1, USC__H5_PACK_SMALL, rank,
			   dims, data, err);
	H5Tclose(type);
	return st;
}

/*
 * A dataset created empty, for usc__h5_write_range: it owns a copy of
 * mtype.
 */
static usc_status create_for_ranges(usc__h5_file *f, const char *dataset,
				    hid_t ftype, hid_t mtype,
				    size_t elem_size, usc__h5_pack pack,
				    size_t rank, const int64_t *dims,
				    usc__h5_dataset **out, usc_error *err)
{
	usc__h5_dataset *d = usc__h5_dataset_new(f, dataset);
	usc_status st;
	usc__h5_quiet q;

	*out = NULL;
	if (!d)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	d->file = f;
	st = create_dataset(f, dataset, ftype, elem_size, pack, rank, dims,
			    &d->id, err);
	q = usc__h5_quiet_begin();
	if (st == USC_OK && (d->mtype = H5Tcopy(mtype)) < 0)
		st = usc__h5_fail(err, USC_EIO, "%s: cannot copy the memory type",
			     d->where);
	usc__h5_quiet_end(q);
	if (st != USC_OK) {
		usc__h5_dataset_close(d);
		return st;
	}
	*out = d;
	return USC_OK;
}

usc_status usc__h5_create_numeric(usc__h5_file *f, const char *dataset,
				  usc__h5_store t, usc__h5_pack pack,
				  size_t rank, const int64_t *dims,
				  usc__h5_dataset **out, usc_error *err)
{
	hid_t ftype, mtype;
	size_t size = store_types(t, &ftype, &mtype);

	return create_for_ranges(f, dataset, ftype, mtype, size, pack, rank,
				 dims, out, err);
}

usc_status usc__h5_create_enum_u8(usc__h5_file *f, const char *dataset,
				  usc__h5_pack pack, size_t rank,
				  const int64_t *dims,
				  const char *const *names, size_t count,
				  usc__h5_dataset **out, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t type = enum_u8_type(names, count);
	usc_status st;

	usc__h5_quiet_end(q);
	*out = NULL;
	if (type < 0)
		return usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the enum",
			       f->path, dataset);
	st = create_for_ranges(f, dataset, type, type, 1, pack, rank, dims,
			       out, err);
	H5Tclose(type);
	return st;
}

/* A flat range being written box by box (write_flat). */
typedef struct flat_write {
	hid_t dset, mtype, space;
	const unsigned char *data; /* the next box's first element */
	size_t elem;               /* bytes of one element in memory */
} flat_write;

/*
 * Writes one box of the file, start and cnt over every dimension, from
 * the next elements of the buffer.  The memory space has the box's own
 * shape: a box whose elements are a run of row-major offsets lies in the
 * buffer in its own row-major order, and with the same shape in memory
 * and in the file HDF5 copies each chunk's part whole instead of mapping
 * the elements to chunks one at a time (which cost more than the deflate
 * of a check's result file).
 */
static bool write_box(flat_write *fw, int rank, const hsize_t *start,
		      const hsize_t *cnt)
{
	hsize_t n = 1;
	hid_t mspace;
	bool ok;

	for (int i = 0; i < rank; i++)
		n *= cnt[i];
	mspace = H5Screate_simple(rank, cnt, NULL);
	ok = mspace >= 0 &&
	     H5Sselect_hyperslab(fw->space, H5S_SELECT_SET, start, NULL, cnt,
				 NULL) >= 0 &&
	     H5Dwrite(fw->dset, fw->mtype, mspace, fw->space, H5P_DEFAULT,
		      fw->data) >= 0;
	if (mspace >= 0)
		H5Sclose(mspace);
	fw->data += (size_t)n * fw->elem;
	return ok;
}

/*
 * Writes the elements whose row-major offsets within the block of
 * dims[d..] are [a, b), in order, as at most 2 (rank - d) - 1 boxes;
 * start and cnt hold the block's position in dimensions before d.
 */
static bool write_flat(flat_write *fw, size_t rank, const hsize_t *dims,
		       size_t d, hsize_t *start, hsize_t *cnt, hsize_t a,
		       hsize_t b)
{
	hsize_t inner = 1, ra, rb, oa, ob;

	if (a >= b)
		return true;
	for (size_t i = d + 1; i < rank; i++)
		inner *= dims[i];
	ra = a / inner;
	rb = b / inner;
	oa = a % inner;
	ob = b % inner;
	if (d + 1 < rank && ra == rb) {
		start[d] = ra;
		cnt[d] = 1;
		return write_flat(fw, rank, dims, d + 1, start, cnt, oa, ob);
	}
	if (d + 1 < rank && oa) {
		start[d] = ra++;
		cnt[d] = 1;
		if (!write_flat(fw, rank, dims, d + 1, start, cnt, oa, inner))
			return false;
	}
	if (rb > ra) {
		start[d] = ra;
		cnt[d] = rb - ra;
		for (size_t i = d + 1; i < rank; i++) {
			start[i] = 0;
			cnt[i] = dims[i];
		}
		if (!write_box(fw, (int)rank, start, cnt))
			return false;
	}
	if (d + 1 < rank && ob) {
		start[d] = rb;
		cnt[d] = 1;
		return write_flat(fw, rank, dims, d + 1, start, cnt, 0, ob);
	}
	return true;
}

usc_status usc__h5_write_range(usc__h5_dataset *d, uint64_t first,
			       uint64_t count, const void *data,
			       usc_error *err)
{
	usc__h5_quiet q;
	hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK], cnt[H5S_MAX_RANK];
	hsize_t total = 1;
	flat_write fw;
	usc_status st = USC_OK;
	int rank;

	if (count == 0)
		return USC_OK;
	if (d->mtype < 0)
		return usc__fail(err, USC_EINVAL,
				 "%s: not a dataset created for writing",
				 d->where);
	q = usc__h5_quiet_begin();
	memset(&fw, 0, sizeof fw);
	fw.dset = d->id;
	fw.mtype = d->mtype;
	fw.data = data;
	fw.elem = H5Tget_size(d->mtype);
	fw.space = H5Dget_space(d->id);
	rank = fw.space < 0 ? -1
			    : H5Sget_simple_extent_dims(fw.space, dims, NULL);
	for (int i = 0; i < rank; i++)
		total *= dims[i];
	if (rank < 0 || fw.elem == 0) {
		st = usc__h5_fail(err, USC_EIO, "%s: cannot read the dataspace",
			     d->where);
		goto done;
	}
	if (first > total || count > total - first) {
		st = usc__fail(err, USC_ERANGE,
			       "%s: elements [%llu, %llu) are beyond its %llu",
			       d->where, (unsigned long long)first,
			       (unsigned long long)(first + count),
			       (unsigned long long)total);
		goto done;
	}
	if (!(rank > 0 ? write_flat(&fw, (size_t)rank, dims, 0, start, cnt,
				    (hsize_t)first, (hsize_t)(first + count))
		       : H5Dwrite(d->id, d->mtype, H5S_ALL, H5S_ALL,
				  H5P_DEFAULT, data) >= 0))
		st = usc__h5_fail(err, USC_EIO,
			     "%s: cannot write elements [%llu, %llu)", d->where,
			     (unsigned long long)first,
			     (unsigned long long)(first + count));
done:
	if (fw.space >= 0)
		H5Sclose(fw.space);
	usc__h5_quiet_end(q);
	return st;
}

usc_status usc__h5_write_strings(usc__h5_file *f, const char *dataset,
				 const char *const *v, size_t n, usc_error *err)
{
	size_t w = 0;
	int64_t dim = (int64_t)n;
	char *buf;
	hid_t type;
	usc__h5_quiet q;
	usc_status st;

	for (size_t i = 0; i < n; i++)
		if (v[i] && strlen(v[i]) > w)
			w = strlen(v[i]);
	buf = usc__calloc(n ? n : 1, w + 1);
	if (!buf)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	for (size_t i = 0; i < n; i++)
		if (v[i])
			memcpy(buf + i * (w + 1), v[i], strlen(v[i]));
	q = usc__h5_quiet_begin();
	type = usc__h5_fixed_string_type(w);
	usc__h5_quiet_end(q);
	if (type < 0) {
		usc__free(buf);
		return usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the strings",
			       f->path, dataset);
	}
	st = write_dataset(f, dataset, type, type, w + 1, USC__H5_PACK_SMALL, 1,
			   &dim, buf, err);
	H5Tclose(type);
	usc__free(buf);
	return st;
}

usc_status usc__h5_write_string(usc__h5_file *f, const char *dataset,
				const char *text, usc_error *err)
{
	usc__h5_quiet q = usc__h5_quiet_begin();
	hid_t type = usc__h5_fixed_string_type(strlen(text));
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dset = -1;
	usc_status st = USC_OK;

	if (type < 0 || space < 0 || lcpl < 0 ||
	    H5Pset_create_intermediate_group(lcpl, 1) < 0) {
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot describe the dataset",
			     f->path, dataset);
		goto done;
	}
	dset = H5Dcreate2(f->id, dataset, type, space, lcpl, H5P_DEFAULT,
			  H5P_DEFAULT);
	if (dset < 0 ||
	    H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) < 0)
		st = usc__h5_fail(err, USC_EIO, "%s:%s: cannot write the string",
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
	usc__h5_quiet_end(q);
	return st;
}
