/*
 * The door to HDF5 (see h5_door.h): with h5_table.c, the only files that
 * include <hdf5.h> (h5_door_internal.h).
 *
 * HDF5 prints its error stack to stderr by default.  A library must not
 * print, so each public entry point here runs inside a "quiet" scope that
 * switches the automatic printing off and restores whatever the
 * application had set; failures become messages instead.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "store/h5_door_internal.h"
#include "util/io_error.h"

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

/* What a walk of the error stack keeps. */
typedef struct stack_seen {
	char desc[256]; /* the innermost description */
	int errnum;     /* the innermost system error; 0: none */
} stack_seen;

/*
 * Keeps the innermost description of the error stack, and the innermost
 * system error: HDF5's POSIX drivers write it into their descriptions as
 * "errno = N, error message = '...'".
 */
static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
	stack_seen *seen = data;
	const char *p;

	(void)n;
	if (!e->desc || !e->desc[0])
		return 0;
	snprintf(seen->desc, sizeof seen->desc, "%s", e->desc);
	p = strstr(e->desc, "errno = ");
	if (p) {
		int v = atoi(p + strlen("errno = "));

		if (v > 0)
			seen->errnum = v;
	}
	return 0;
}

/*
 * What went wrong, in words, into buf: the system error where there was
 * one ("no space left on device"), else HDF5's innermost description cut
 * before its first "key = value" detail (file descriptors, flags and
 * buffer addresses mean nothing to a user).  Clears the stack.
 */
static void stack_words(char *buf, size_t size)
{
	stack_seen seen = {"", 0};
	char *eq;

	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &seen);
	H5Eclear2(H5E_DEFAULT);
	if (seen.errnum) {
		snprintf(buf, size, "%s", usc__io_error_text(seen.errnum));
		return;
	}
	eq = strstr(seen.desc, " = ");
	if (eq) {
		while (eq > seen.desc && eq[-1] != ',' && eq[-1] != ':')
			eq--;
		while (eq > seen.desc && (eq[-1] == ',' || eq[-1] == ':' ||
					  eq[-1] == ' '))
			eq--;
		*eq = '\0';
	}
	snprintf(buf, size, "%s", seen.desc);
}

/*
 * Fails with the message fmt and, after a colon, what went wrong in
 * words (stack_words).  The stack is cleared afterwards.
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
	stack_words(detail, sizeof detail);
	if (detail[0])
		return usc__fail(err, code, "%s: %s", what, detail);
	return usc__fail(err, code, "%s", what);
}

/*
 * Fails on the read side: what could not be read, and that the file is
 * damaged or truncated.  HDF5's own description is left out on purpose:
 * it speaks of heap addresses and B-tree nodes, which tell a user nothing
 * they can act on.  The stack is cleared.
 */
static usc_status read_fail(usc_error *err, usc_status code, const char *fmt,
			    ...) USC__PRINTF(3, 4);

static usc_status read_fail(usc_error *err, usc_status code, const char *fmt,
			    ...)
{
	char what[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	H5Eclear2(H5E_DEFAULT);
	return usc__fail(err, code, "%s: the file is damaged or truncated",
			 what);
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

static hid_t checked_fapl(void);

/*
 * Opens an existing HDF5 file: read-only, or read-write with the result
 * files' checked access list.  The OS is asked first, since HDF5's own
 * message for a missing or unreadable file is obscure; then a child
 * decodes the file (usc__h5_vet, reading the data of data_of too).
 */
static usc_status open_existing(const char *path, bool write,
				const char *data_of, usc__h5_file **out,
				usc_error *err)
{
	struct stat sb;
	quiet q;
	FILE *fp;
	htri_t is;
	hid_t fapl = H5P_DEFAULT, id = -1;
	usc_status st;

	*out = NULL;
	/* A directory opens with fopen, and a FIFO blocks it: ask first. */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return usc__fail(err, USC_EIO,
				 "%s is %s, expected a regular HDF5 file", path,
				 S_ISDIR(sb.st_mode)    ? "a directory"
				 : S_ISFIFO(sb.st_mode) ? "a FIFO"
							: "not a regular file");
	fp = fopen(path, write ? "r+b" : "rb");
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
	if (is < 0) {
		st = read_fail(err, USC_EIO, "%s: not a readable HDF5 file",
			       path);
		goto done;
	}
	/* HDF5 can crash on a damaged file: let a child try it first. */
	st = usc__h5_vet(path, data_of, err);
	if (st != USC_OK)
		goto done;
	if (write)
		fapl = checked_fapl();
	if (is > 0 && fapl >= 0)
		id = H5Fopen(path, write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
	if (write && fapl >= 0)
		H5Pclose(fapl);
	if (id < 0) {
		st = write ? h5_fail(err, USC_EIO, "%s: cannot open HDF5 file",
				     path)
			   : read_fail(err, USC_EIO,
				       "%s: not a readable HDF5 file", path);
		goto done;
	}
	st = file_new(path, id, out, err);
done:
	quiet_end(q);
	return st;
}

usc_status usc__h5_file_open_read(const char *path, usc__h5_file **out,
				  usc_error *err)
{
	return open_existing(path, false, NULL, out, err);
}

usc_status usc__h5_file_open_read_data(const char *path, const char *data_of,
				       usc__h5_file **out, usc_error *err)
{
	return open_existing(path, false, data_of, out, err);
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
	/*
	 * A failed close leaves HDF5 1.10 with an identifier whose object it
	 * has half freed: any later use of it, its own exit handler's
	 * included, crashes.  So after a failure nothing touches the file
	 * again, and the process ends without running HDF5's exit handler.
	 */
	if (f->failed) {
		st = usc__fail(err, USC_EIO, "%s: cannot finish writing: %s",
			       f->path, f->failure);
		usc__free(f->path);
		usc__free(f);
		return st;
	}
	q = quiet_begin();
	if (H5Fclose(f->id) < 0) {
		usc__exit_skip_earlier_handlers();
		st = h5_fail(err, USC_EIO, "%s: cannot finish writing",
			     f->path);
	}
	quiet_end(q);
	usc__free(f->path);
	usc__free(f);
	return st;
}

/* ------------------------------------------------------------------ */
/* Datasets                                                            */

/* A dataset handle without an HDF5 object yet, named for messages. */
static usc__h5_dataset *dataset_new(const usc__h5_file *f,
				    const char *dataset)
{
	size_t size = strlen(f->path) + strlen(dataset) + 2;
	usc__h5_dataset *d = usc__calloc(1, sizeof *d);

	if (d)
		d->where = usc__malloc(size);
	if (!d || !d->where) {
		usc__free(d);
		return NULL;
	}
	snprintf(d->where, size, "%s:%s", f->path, dataset);
	d->id = -1;
	d->mtype = -1;
	return d;
}

/* Whether s is printable UTF-8: no control bytes, no broken sequences. */
static bool printable_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1
					  : (*p & 0xf0) == 0xe0   ? 2
					  : (*p & 0xf8) == 0xf0   ? 3
								  : 4;

		if (more == 4 || *p < 0x20 || *p == 0x7f)
			return false;
		p++;
		for (size_t i = 0; i < more; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/*
 * The members of group g as "a, b, c" in buf (", ..." when they do not
 * fit), or "" when it has none or cannot be listed.  *damaged is set when
 * the listing contradicts a failed lookup: it holds the name looked up
 * (want), or a name that is not printable text, which only damage to
 * the group's heap produces.  Runs inside a quiet scope.
 */
static void members_text(hid_t file, const char *g, const char *want,
			 char *buf, size_t size, bool *damaged)
{
	hid_t id = H5Gopen2(file, g, H5P_DEFAULT);
	H5G_info_t info;
	size_t used = 0;

	buf[0] = '\0';
	if (id < 0 || H5Gget_info(id, &info) < 0) {
		H5Eclear2(H5E_DEFAULT);
		if (id >= 0)
			H5Gclose(id);
		return;
	}
	for (hsize_t i = 0; i < info.nlinks; i++) {
		char name[256];
		ssize_t len = H5Lget_name_by_idx(id, ".", H5_INDEX_NAME,
						 H5_ITER_INC, i, name,
						 sizeof name, H5P_DEFAULT);

		if (len < 0)
			break;
		if ((size_t)len < sizeof name &&
		    (strcmp(name, want) == 0 || !printable_utf8(name)))
			*damaged = true;
		/* Room for the name, its separator and a closing ", ...". */
		if (used + (size_t)len + 2 + 6 >= size) {
			snprintf(buf + used, size - used, "%s...",
				 used ? ", " : "");
			break;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
					 used ? ", " : "", name);
	}
	H5Eclear2(H5E_DEFAULT);
	H5Gclose(id);
}

/*
 * Why dataset (an absolute path) cannot be opened, as a message about
 * d->where: the first component that is missing, with what its group
 * holds instead; a component that is a dataset where a group was
 * needed; or, when HDF5 cannot even answer, a damaged file.  *found is
 * true when every component exists.  Runs inside a quiet scope.
 */
static usc_status dataset_lookup(usc__h5_file *f, const char *dataset,
				 const char *where, bool *found,
				 usc_error *err)
{
	size_t dlen = strlen(dataset);
	char *prefix, *parent, list[400];
	usc_status st = USC_OK;

	*found = false;
	/* Result files name kernels of up to 1024 bytes: no fixed buffer. */
	prefix = usc__malloc(dlen + 2);
	parent = usc__malloc(dlen + 2);
	if (!prefix || !parent) {
		usc__free(prefix);
		usc__free(parent);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", where);
	}
	strcpy(parent, "/");
	for (size_t i = 1; st == USC_OK && i <= dlen; i++) {
		htri_t ex;
		hid_t g;

		if (i < dlen && dataset[i] != '/')
			continue;
		if (i == 1 && dlen == 1)
			break;
		memcpy(prefix, dataset, i);
		prefix[i] = '\0';
		/* H5Lexists fails below a component that is not a group. */
		g = H5Gopen2(f->id, parent, H5P_DEFAULT);
		if (g < 0) {
			H5Eclear2(H5E_DEFAULT);
			st = usc__fail(err, USC_ENOTFOUND,
				       "%s: no such dataset (%s is not a group)",
				       where, parent);
			break;
		}
		H5Gclose(g);
		ex = H5Lexists(f->id, prefix, H5P_DEFAULT);
		if (ex < 0) {
			st = read_fail(err, USC_EIO, "%s: cannot look it up",
				       where);
		} else if (ex == 0) {
			const char *last = strrchr(prefix, '/') + 1;
			bool damaged = false;

			members_text(f->id, parent, last, list, sizeof list,
				     &damaged);
			if (damaged)
				st = read_fail(err, USC_EIO,
					       "%s: cannot look it up", where);
			else if (!list[0])
				st = usc__fail(err, USC_ENOTFOUND,
					       "%s: no such dataset (%s is "
					       "empty)",
					       where, parent);
			else
				st = usc__fail(err, USC_ENOTFOUND,
					       "%s: no such dataset (%s holds: "
					       "%s)",
					       where, parent, list);
		}
		memcpy(parent, prefix, i + 1);
	}
	H5Eclear2(H5E_DEFAULT);
	usc__free(prefix);
	usc__free(parent);
	*found = st == USC_OK;
	return st;
}

usc_status usc__h5_dataset_open(usc__h5_file *f, const char *dataset,
				usc__h5_dataset **out, usc_error *err)
{
	quiet q;
	usc__h5_dataset *d;
	usc_status st = USC_OK;
	bool found = false;
	hid_t id, obj;

	*out = NULL;
	d = dataset_new(f, dataset);
	if (!d)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	if (dataset[0] != '/') {
		st = usc__fail(err, USC_EINVAL,
			       "%s: dataset path must start with '/'",
			       d->where);
		goto fail;
	}
	q = quiet_begin();
	st = dataset_lookup(f, dataset, d->where, &found, err);
	if (st == USC_OK && found) {
		id = H5Dopen2(f->id, dataset, H5P_DEFAULT);
		if (id >= 0) {
			d->id = id;
		} else {
			/* A group (or a named type) is no dataset; an object
			 * HDF5 cannot open at all is damage. */
			H5Eclear2(H5E_DEFAULT);
			obj = H5Oopen(f->id, dataset, H5P_DEFAULT);
			if (obj < 0) {
				st = read_fail(err, USC_EIO,
					       "%s: cannot open the dataset",
					       d->where);
			} else {
				st = usc__fail(err, USC_EINVAL,
					       "%s: not a dataset (it is a "
					       "%s)",
					       d->where,
					       H5Iget_type(obj) == H5I_GROUP
						       ? "group"
						       : "named type");
				H5Oclose(obj);
			}
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
	/* A failure poisons the file: see usc__h5_file_close. */
	if (d->id >= 0 && H5Dclose(d->id) < 0) {
		usc__exit_skip_earlier_handlers();
		if (d->file && !d->file->failed) {
			d->file->failed = true;
			stack_words(d->file->failure,
				    sizeof d->file->failure);
		}
	}
	if (d->mtype >= 0)
		H5Tclose(d->mtype);
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
		st = read_fail(err, USC_EIO, "%s: cannot read the dataspace",
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
			st = read_fail(err, USC_EIO,
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

usc_status usc__h5_dataset_stored(usc__h5_dataset *d, bool *all,
				  usc_error *err)
{
	quiet q = quiet_begin();
	H5D_space_status_t status;
	usc_status st = USC_OK;

	hid_t dcpl = H5Dget_create_plist(d->id), space = -1;
	hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK], want = 1, have = 0;
	int rank;

	*all = false;
	if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) {
		/*
		 * The space status of a filtered chunked dataset compares
		 * its compressed size with the full one, so it says "part"
		 * of a complete one: count the chunks instead.
		 */
		space = H5Dget_space(d->id);
		rank = space < 0 ? -1
				 : H5Sget_simple_extent_dims(space, dims, NULL);
		if (rank < 0 || H5Pget_chunk(dcpl, rank, chunk) != rank ||
		    H5Dget_num_chunks(d->id, space, &have) < 0) {
			st = read_fail(err, USC_EIO,
				       "%s: cannot read its storage", d->where);
		} else {
			for (int i = 0; i < rank; i++)
				want *= chunk[i] ? (dims[i] + chunk[i] - 1) /
							   chunk[i]
						 : 0;
			*all = have == want;
		}
	} else if (dcpl < 0 || H5Dget_space_status(d->id, &status) < 0) {
		st = read_fail(err, USC_EIO, "%s: cannot read its storage",
			       d->where);
	} else {
		*all = status == H5D_SPACE_STATUS_ALLOCATED;
	}
	if (space >= 0)
		H5Sclose(space);
	if (dcpl >= 0)
		H5Pclose(dcpl);
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
		st = read_fail(err, USC_EIO, "%s: cannot read the datatype",
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
		st = read_fail(err, USC_EIO, "%s: cannot read the data",
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
	quiet q = quiet_begin();
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
		st = h5_fail(err, USC_EIO, "%s:%s: cannot describe the dataset",
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
			st = h5_fail(err, USC_EIO,
				     "%s:%s: cannot set up compression",
				     f->path, dataset);
			goto done;
		}
	}
	*dset = H5Dcreate2(f->id, dataset, ftype, space, lcpl, dcpl,
			   H5P_DEFAULT);
	if (*dset < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot create the dataset",
			     f->path, dataset);
done:
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	if (space >= 0)
		H5Sclose(space);
	quiet_end(q);
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
	quiet q;

	for (size_t i = 0; i < rank; i++)
		count *= (uint64_t)dims[i];
	st = create_dataset(f, dataset, ftype, elem_size, pack, rank, dims,
			    &dset, err);
	if (st != USC_OK)
		return st;
	q = quiet_begin();
	if (count &&
	    H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot write the data",
			     f->path, dataset);
	H5Dclose(dset);
	quiet_end(q);
	return st;
}

usc_status usc__h5_write_array(usc__h5_file *f, const char *dataset,
			       usc_dtype t, size_t rank, const int64_t *dims,
			       const void *data, usc_error *err)
{
	quiet q = quiet_begin();
	hid_t type = file_type_of(t);
	usc_status st;

	if (type < 0) {
		st = h5_fail(err, USC_EIO, "%s:%s: cannot describe type %s",
			     f->path, dataset, usc_dtype_name(t));
		quiet_end(q);
		return st;
	}
	quiet_end(q);
	st = write_dataset(f, dataset, type, type, 0, USC__H5_PACK_SMALL, rank,
			   dims, data, err);
	H5Tclose(type);
	return st;
}

/* ------------------------------------------------------------------ */
/* The result file's needs: checked files, groups, attributes, strings */

/*
 * The file-access list of result files: at least the 1.8 format, whose
 * metadata carries checksums, and at most 1.10, so that every h5py built
 * on HDF5 1.10 or later reads what we write.
 */
static hid_t checked_fapl(void)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl >= 0 &&
	    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V110) < 0) {
		H5Pclose(fapl);
		fapl = -1;
	}
	return fapl;
}

usc_status usc__h5_file_create_checked(const char *path, usc__h5_file **out,
				       usc_error *err)
{
	quiet q = quiet_begin();
	hid_t fapl = checked_fapl(), id = -1;
	usc_status st;

	*out = NULL;
	if (fapl >= 0)
		id = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (id < 0)
		st = h5_fail(err, USC_EIO, "%s: cannot create HDF5 file", path);
	else
		st = file_new(path, id, out, err);
	if (fapl >= 0)
		H5Pclose(fapl);
	quiet_end(q);
	return st;
}

usc_status usc__h5_file_open_rdwr(const char *path, usc__h5_file **out,
				  usc_error *err)
{
	return open_existing(path, true, NULL, out, err);
}

const char *usc__h5_file_path(const usc__h5_file *f)
{
	return f->path;
}

void usc__h5_file_set_label(usc__h5_file *f, const char *label)
{
	char *copy = usc__strdup(label);

	/* Out of memory: the messages keep the old name. */
	if (copy) {
		usc__free(f->path);
		f->path = copy;
	}
}

/*
 * Whether every prefix of an absolute path names a link, asked in turn
 * because H5Lexists fails rather than answers below a missing group.
 * Paths that do not start with '/' or are longer than the scratch buffer
 * are reported as absent.  Runs inside a quiet scope.
 */
static bool path_exists(hid_t file, const char *path)
{
	size_t len = strlen(path);
	char prefix[4096];

	if (path[0] != '/' || len >= sizeof prefix)
		return false;
	if (len == 1)
		return true;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (H5Lexists(file, prefix, H5P_DEFAULT) <= 0 ||
		    H5Oexists_by_name(file, prefix, H5P_DEFAULT) <= 0) {
			H5Eclear2(H5E_DEFAULT);
			return false;
		}
	}
	return true;
}

usc_status usc__h5_group_create(usc__h5_file *f, const char *group,
				usc_error *err)
{
	quiet q = quiet_begin();
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
	hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
	hid_t g = -1;
	usc_status st = USC_OK;

	if (lcpl >= 0 && gcpl >= 0 &&
	    H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
	    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED |
						     H5P_CRT_ORDER_INDEXED) >= 0)
		g = H5Gcreate2(f->id, group, lcpl, gcpl, H5P_DEFAULT);
	if (g < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot create the group",
			     f->path, group);
	else
		H5Gclose(g);
	if (gcpl >= 0)
		H5Pclose(gcpl);
	if (lcpl >= 0)
		H5Pclose(lcpl);
	quiet_end(q);
	return st;
}

usc_status usc__h5_exists(usc__h5_file *f, const char *path, bool *exists,
			  bool *is_group, usc_error *err)
{
	quiet q = quiet_begin();
	hid_t g;

	(void)err;
	*exists = path_exists(f->id, path);
	if (is_group) {
		*is_group = false;
		if (*exists) {
			g = H5Gopen2(f->id, path, H5P_DEFAULT);
			if (g >= 0) {
				*is_group = true;
				H5Gclose(g);
			}
		}
	}
	quiet_end(q);
	return USC_OK;
}

void usc__h5_names_free(char **names, size_t count)
{
	if (!names)
		return;
	for (size_t i = 0; i < count; i++)
		usc__free(names[i]);
	usc__free(names);
}

usc_status usc__h5_group_list(usc__h5_file *f, const char *group,
			      char ***names, size_t *count, usc_error *err)
{
	quiet q = quiet_begin();
	hid_t g = -1, gcpl = -1;
	H5G_info_t info;
	H5_index_t index = H5_INDEX_NAME;
	unsigned order = 0;
	char **list = NULL;
	size_t n = 0;
	usc_status st = USC_OK;

	*names = NULL;
	*count = 0;
	if (!path_exists(f->id, group)) {
		st = usc__fail(err, USC_ENOTFOUND, "%s:%s: no such group",
			       f->path, group);
		goto done;
	}
	g = H5Gopen2(f->id, group, H5P_DEFAULT);
	if (g < 0) {
		H5Eclear2(H5E_DEFAULT);
		st = usc__fail(err, USC_EPARSE, "%s:%s: not a group", f->path,
			       group);
		goto done;
	}
	gcpl = H5Gget_create_plist(g);
	if (gcpl >= 0 && H5Pget_link_creation_order(gcpl, &order) >= 0 &&
	    (order & H5P_CRT_ORDER_INDEXED))
		index = H5_INDEX_CRT_ORDER;
	if (H5Gget_info(g, &info) < 0) {
		st = read_fail(err, USC_EIO, "%s:%s: cannot list the group",
			       f->path, group);
		goto done;
	}
	if (info.nlinks) {
		list = usc__calloc((size_t)info.nlinks, sizeof *list);
		if (!list) {
			st = usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				       f->path, group);
			goto done;
		}
	}
	for (n = 0; n < (size_t)info.nlinks; n++) {
		ssize_t len = H5Lget_name_by_idx(g, ".", index, H5_ITER_INC,
						 (hsize_t)n, NULL, 0,
						 H5P_DEFAULT);

		if (len < 0) {
			st = read_fail(err, USC_EIO,
				       "%s:%s: cannot list the group", f->path,
				       group);
			break;
		}
		list[n] = usc__malloc((size_t)len + 1);
		if (!list[n]) {
			st = usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				       f->path, group);
			break;
		}
		if (H5Lget_name_by_idx(g, ".", index, H5_ITER_INC, (hsize_t)n,
				       list[n], (size_t)len + 1,
				       H5P_DEFAULT) < 0) {
			n++;
			st = read_fail(err, USC_EIO,
				       "%s:%s: cannot list the group", f->path,
				       group);
			break;
		}
	}
done:
	if (st != USC_OK) {
		/* The list is zero-filled: free every slot, filled or not. */
		usc__h5_names_free(list, list ? (size_t)info.nlinks : 0);
	} else {
		*names = list;
		*count = n;
	}
	if (gcpl >= 0)
		H5Pclose(gcpl);
	if (g >= 0)
		H5Gclose(g);
	quiet_end(q);
	return st;
}

usc_status usc__h5_delete(usc__h5_file *f, const char *path, usc_error *err)
{
	quiet q = quiet_begin();
	usc_status st = USC_OK;

	if (H5Ldelete(f->id, path, H5P_DEFAULT) < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot delete", f->path,
			     path);
	quiet_end(q);
	return st;
}

/* A variable-length UTF-8 string type; a new id, or -1. */
static hid_t vlen_string_type(void)
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
static hid_t fixed_string_type(size_t len)
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
	quiet q = quiet_begin();
	hid_t type = enum_u8_type(names, count);
	usc_status st;

	if (type < 0) {
		st = h5_fail(err, USC_EIO, "%s:%s: cannot describe the enum",
			     f->path, dataset);
		quiet_end(q);
		return st;
	}
	quiet_end(q);
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
	usc__h5_dataset *d = dataset_new(f, dataset);
	usc_status st;
	quiet q;

	*out = NULL;
	if (!d)
		return usc__fail(err, USC_ENOMEM, "%s:%s: out of memory",
				 f->path, dataset);
	d->file = f;
	st = create_dataset(f, dataset, ftype, elem_size, pack, rank, dims,
			    &d->id, err);
	q = quiet_begin();
	if (st == USC_OK && (d->mtype = H5Tcopy(mtype)) < 0)
		st = h5_fail(err, USC_EIO, "%s: cannot copy the memory type",
			     d->where);
	quiet_end(q);
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
	quiet q = quiet_begin();
	hid_t type = enum_u8_type(names, count);
	usc_status st;

	quiet_end(q);
	*out = NULL;
	if (type < 0)
		return h5_fail(err, USC_EIO, "%s:%s: cannot describe the enum",
			       f->path, dataset);
	st = create_for_ranges(f, dataset, type, type, 1, pack, rank, dims,
			       out, err);
	H5Tclose(type);
	return st;
}

/*
 * Adds to space's selection the elements whose row-major offsets within
 * the block of dims[d..] are [a, b), as at most 2 (rank - d) - 1 boxes;
 * start and cnt hold the block's position in dimensions before d.
 * *first: the next box replaces the selection instead of joining it.
 */
static bool select_flat(hid_t space, size_t rank, const hsize_t *dims,
			size_t d, hsize_t *start, hsize_t *cnt, hsize_t a,
			hsize_t b, bool *first)
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
		return select_flat(space, rank, dims, d + 1, start, cnt, oa, ob,
				   first);
	}
	if (d + 1 < rank && oa) {
		start[d] = ra++;
		cnt[d] = 1;
		if (!select_flat(space, rank, dims, d + 1, start, cnt, oa,
				 inner, first))
			return false;
	}
	if (rb > ra) {
		start[d] = ra;
		cnt[d] = rb - ra;
		for (size_t i = d + 1; i < rank; i++) {
			start[i] = 0;
			cnt[i] = dims[i];
		}
		if (H5Sselect_hyperslab(space,
					*first ? H5S_SELECT_SET : H5S_SELECT_OR,
					start, NULL, cnt, NULL) < 0)
			return false;
		*first = false;
	}
	if (d + 1 < rank && ob) {
		start[d] = rb;
		cnt[d] = 1;
		return select_flat(space, rank, dims, d + 1, start, cnt, 0, ob,
				   first);
	}
	return true;
}

usc_status usc__h5_write_range(usc__h5_dataset *d, uint64_t first,
			       uint64_t count, const void *data,
			       usc_error *err)
{
	quiet q;
	hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK], cnt[H5S_MAX_RANK];
	hsize_t total = 1, m = (hsize_t)count;
	hid_t space = -1, mspace = -1;
	usc_status st = USC_OK;
	bool replace = true;
	int rank;

	if (count == 0)
		return USC_OK;
	if (d->mtype < 0)
		return usc__fail(err, USC_EINVAL,
				 "%s: not a dataset created for writing",
				 d->where);
	q = quiet_begin();
	space = H5Dget_space(d->id);
	rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
	for (int i = 0; i < rank; i++)
		total *= dims[i];
	if (rank < 0) {
		st = h5_fail(err, USC_EIO, "%s: cannot read the dataspace",
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
	mspace = H5Screate_simple(1, &m, NULL);
	if (mspace < 0 ||
	    (rank > 0 && !select_flat(space, (size_t)rank, dims, 0, start, cnt,
				      (hsize_t)first, (hsize_t)(first + count),
				      &replace)) ||
	    H5Dwrite(d->id, d->mtype, mspace, rank > 0 ? space : H5S_ALL,
		     H5P_DEFAULT, data) < 0)
		st = h5_fail(err, USC_EIO,
			     "%s: cannot write elements [%llu, %llu)", d->where,
			     (unsigned long long)first,
			     (unsigned long long)(first + count));
done:
	if (mspace >= 0)
		H5Sclose(mspace);
	if (space >= 0)
		H5Sclose(space);
	quiet_end(q);
	return st;
}

usc_status usc__h5_write_strings(usc__h5_file *f, const char *dataset,
				 const char *const *v, size_t n, usc_error *err)
{
	size_t w = 0;
	int64_t dim = (int64_t)n;
	char *buf;
	hid_t type;
	quiet q;
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
	q = quiet_begin();
	type = fixed_string_type(w);
	quiet_end(q);
	if (type < 0) {
		usc__free(buf);
		return h5_fail(err, USC_EIO, "%s:%s: cannot describe the strings",
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
	quiet q = quiet_begin();
	hid_t type = fixed_string_type(strlen(text));
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dset = -1;
	usc_status st = USC_OK;

	if (type < 0 || space < 0 || lcpl < 0 ||
	    H5Pset_create_intermediate_group(lcpl, 1) < 0) {
		st = h5_fail(err, USC_EIO, "%s:%s: cannot describe the dataset",
			     f->path, dataset);
		goto done;
	}
	dset = H5Dcreate2(f->id, dataset, type, space, lcpl, H5P_DEFAULT,
			  H5P_DEFAULT);
	if (dset < 0 ||
	    H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) < 0)
		st = h5_fail(err, USC_EIO, "%s:%s: cannot write the string",
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

/* Frees what HDF5 allocated for variable-length data it read. */
static void vlen_reclaim(hid_t type, hid_t space, void *buf)
{
#if H5_VERSION_GE(1, 12, 0)
	H5Treclaim(type, space, H5P_DEFAULT, buf);
#else
	H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
#endif
}

/*
 * Reads one string from an attribute (attr >= 0) or a dataset, whose file
 * type is ftype.  Runs inside a quiet scope; where names it in messages.
 */
static usc_status read_one_string(hid_t attr, hid_t dset, hid_t ftype,
				  const char *where, char **out, size_t *len,
				  usc_error *err)
{
	hid_t mtype = -1, space = -1;
	usc_status st = USC_OK;
	char *s = NULL;
	herr_t rc;

	*out = NULL;
	space = attr >= 0 ? H5Aget_space(attr) : H5Dget_space(dset);
	if (space < 0 || H5Sget_simple_extent_npoints(space) != 1) {
		H5Eclear2(H5E_DEFAULT);
		st = usc__fail(err, USC_EPARSE, "%s: not a single string",
			       where);
		goto done;
	}
	if (H5Tis_variable_str(ftype) > 0) {
		mtype = vlen_string_type();
		if (mtype < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
			st = read_fail(err, USC_EIO, "%s: cannot read", where);
			goto done;
		}
		rc = attr >= 0 ? H5Aread(attr, mtype, &s)
			       : H5Dread(dset, mtype, H5S_ALL, H5S_ALL,
					 H5P_DEFAULT, &s);
		if (rc < 0) {
			st = read_fail(err, USC_EIO, "%s: cannot read", where);
			goto done;
		}
		*out = usc__strndup(s ? s : "", s ? strlen(s) : 0);
		vlen_reclaim(mtype, space, &s);
	} else {
		size_t size = H5Tget_size(ftype);
		char *buf = usc__malloc(size + 1);

		if (!buf) {
			st = usc__fail(err, USC_ENOMEM, "%s: out of memory",
				       where);
			goto done;
		}
		mtype = H5Tcopy(ftype);
		rc = mtype < 0 ? -1
		     : attr >= 0
			     ? H5Aread(attr, mtype, buf)
			     : H5Dread(dset, mtype, H5S_ALL, H5S_ALL,
				       H5P_DEFAULT, buf);
		if (rc < 0) {
			usc__free(buf);
			st = read_fail(err, USC_EIO, "%s: cannot read", where);
			goto done;
		}
		buf[size] = '\0';
		*out = usc__strndup(buf, strlen(buf));
		usc__free(buf);
	}
	if (!*out)
		st = usc__fail(err, USC_ENOMEM, "%s: out of memory", where);
	else if (len)
		*len = strlen(*out);
done:
	if (mtype >= 0)
		H5Tclose(mtype);
	if (space >= 0)
		H5Sclose(space);
	return st;
}

usc_status usc__h5_read_string(usc__h5_file *f, const char *dataset,
			       char **out, size_t *len, usc_error *err)
{
	usc__h5_dataset *d = NULL;
	usc_status st;
	quiet q;
	hid_t t;

	*out = NULL;
	st = usc__h5_dataset_open(f, dataset, &d, err);
	if (st != USC_OK)
		return st;
	q = quiet_begin();
	t = H5Dget_type(d->id);
	if (t < 0 || H5Tget_class(t) != H5T_STRING)
		st = usc__fail(err, USC_EPARSE, "%s: not a string dataset",
			       d->where);
	else
		st = read_one_string(-1, d->id, t, d->where, out, len, err);
	if (t >= 0)
		H5Tclose(t);
	quiet_end(q);
	usc__h5_dataset_close(d);
	return st;
}

/* ------------------------------------------------------------------ */
/* Attributes                                                          */

/* Writes one scalar attribute of file type ftype from memory type mtype. */
static usc_status attr_set(usc__h5_file *f, const char *obj, const char *name,
			   hid_t ftype, hid_t mtype, const void *value,
			   usc_error *err)
{
	quiet q = quiet_begin();
	hid_t space = H5Screate(H5S_SCALAR), a = -1;
	usc_status st = USC_OK;

	if (H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT) > 0)
		H5Adelete_by_name(f->id, obj, name, H5P_DEFAULT);
	if (space >= 0)
		a = H5Acreate_by_name(f->id, obj, name, ftype, space,
				      H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Awrite(a, mtype, value) < 0)
		st = h5_fail(err, USC_EIO,
			     "%s:%s: cannot write attribute '%s'", f->path,
			     obj, name);
	if (a >= 0)
		H5Aclose(a);
	if (space >= 0)
		H5Sclose(space);
	quiet_end(q);
	return st;
}

usc_status usc__h5_attr_set_string(usc__h5_file *f, const char *obj,
				   const char *name, const char *value,
				   usc_error *err)
{
	quiet q = quiet_begin();
	hid_t t = fixed_string_type(strlen(value));
	usc_status st;

	quiet_end(q);
	if (t < 0)
		return usc__fail(err, USC_EIO,
				 "%s:%s: cannot write attribute '%s'", f->path,
				 obj, name);
	st = attr_set(f, obj, name, t, t, value, err);
	q = quiet_begin();
	H5Tclose(t);
	quiet_end(q);
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
	quiet q = quiet_begin();
	usc_status st = USC_OK;

	if (H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT) > 0 &&
	    H5Adelete_by_name(f->id, obj, name, H5P_DEFAULT) < 0)
		st = h5_fail(err, USC_EIO,
			     "%s:%s: cannot delete attribute '%s'", f->path,
			     obj, name);
	quiet_end(q);
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
	if (!path_exists(f->id, obj))
		return usc__fail(err, USC_ENOTFOUND, "%s:%s: no such object",
				 f->path, obj);
	ex = H5Aexists_by_name(f->id, obj, name, H5P_DEFAULT);
	if (ex < 0)
		return read_fail(err, USC_EIO,
			         "%s:%s: cannot read attribute '%s'", f->path,
			         obj, name);
	if (ex == 0) {
		return usc__fail(err, USC_ENOTFOUND,
				 "%s:%s: no attribute '%s'", f->path, obj,
				 name);
	}
	a = H5Aopen_by_name(f->id, obj, name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0)
		return read_fail(err, USC_EIO,
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
	quiet q = quiet_begin();
	hid_t a, t;
	char where[1200];
	usc_status st;

	*out = NULL;
	st = attr_open(f, obj, name, H5T_STRING, "string", &a, &t, err);
	if (st == USC_OK) {
		snprintf(where, sizeof where, "%s:%s: attribute '%s'", f->path,
			 obj, name);
		st = read_one_string(a, -1, t, where, out, NULL, err);
		H5Tclose(t);
		H5Aclose(a);
	}
	quiet_end(q);
	return st;
}

/* Reads an integer attribute as 64 bits of its own signedness. */
static usc_status attr_get_integer(usc__h5_file *f, const char *obj,
				   const char *name, bool *is_signed,
				   int64_t *s, uint64_t *u, usc_error *err)
{
	quiet q = quiet_begin();
	hid_t a, t;
	usc_status st;

	st = attr_open(f, obj, name, H5T_INTEGER, "integer", &a, &t, err);
	if (st == USC_OK) {
		*is_signed = H5Tget_sign(t) == H5T_SGN_2;
		if ((*is_signed ? H5Aread(a, H5T_NATIVE_INT64, s)
				: H5Aread(a, H5T_NATIVE_UINT64, u)) < 0)
			st = read_fail(err, USC_EIO,
				       "%s:%s: cannot read attribute '%s'",
				       f->path, obj, name);
		H5Tclose(t);
		H5Aclose(a);
	}
	quiet_end(q);
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
	quiet q = quiet_begin();
	hid_t a, t;
	usc_status st;

	st = attr_open(f, obj, name, H5T_FLOAT, "float", &a, &t, err);
	if (st == USC_OK) {
		if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0)
			st = read_fail(err, USC_EIO,
				       "%s:%s: cannot read attribute '%s'",
				       f->path, obj, name);
		H5Tclose(t);
		H5Aclose(a);
	}
	quiet_end(q);
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

/* ------------------------------------------------------------------ */
/* Shared with h5_table.c (h5_door_internal.h)                         */

usc__h5_quiet usc__h5_quiet_begin(void)
{
	quiet q = quiet_begin();
	usc__h5_quiet r = {q.func, q.data};

	return r;
}

void usc__h5_quiet_end(usc__h5_quiet q)
{
	quiet r = {q.func, q.data};

	quiet_end(r);
}

usc_status usc__h5_fail(usc_error *err, usc_status code, const char *fmt, ...)
{
	char what[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return h5_fail(err, code, "%s", what);
}

hid_t usc__h5_fixed_string_type(size_t len)
{
	return fixed_string_type(len);
}

usc_status usc__h5_read_fail(usc_error *err, usc_status code, const char *fmt,
			     ...)
{
	char what[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return read_fail(err, code, "%s", what);
}
