/*
 * Raw files: the data alone, little-endian, in C order, laid out exactly as
 * a usc_tensor holds them.  With no header to check, the file's size is the
 * only evidence that it holds what the caller expects, so it must match to
 * the byte.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tensor/tensor_internal.h"

usc_status usc_tensor_read_raw(const char *path, const usc_tensor_spec *spec,
			       usc_tensor **out, usc_error *err)
{
	usc_status st = usc__reader_begin(spec, out, false, err);
	const usc_format *f;
	usc_tensor *t = NULL;
	uint64_t count;
	size_t nbytes;
	FILE *fp;
	uint64_t end;

	if (st != USC_OK)
		return st;
	if (!path)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_read_raw: path is NULL");
	f = usc_format_of(spec->dtype);
	if (!usc__shape_size(spec->rank, spec->dims, (size_t)f->container_bytes,
			     &count, &nbytes)) {
		char expected[USC_ERROR_MESSAGE_SIZE / 2];

		usc__format_expected(expected, sizeof expected, spec);
		return usc__fail(err, USC_ERANGE, "%s: %s is too large", path,
				 expected);
	}
	st = usc__open_regular(path, &fp, &end, err);
	if (st != USC_OK)
		return st;
	if (end != nbytes) {
		char expected[USC_ERROR_MESSAGE_SIZE / 2];

		usc__format_expected(expected, sizeof expected, spec);
		st = usc__fail(err, USC_EINVAL,
			       "%s: raw file has %" PRIu64 " bytes; %s, takes "
			       "%zu",
			       path, end, expected, nbytes);
		goto done;
	}
	st = usc__tensor_new(spec->dtype, spec->rank, spec->dims, path, &t, err);
	if (st != USC_OK)
		goto done;
	if (fread(t->data, 1, nbytes, fp) != nbytes) {
		st = usc__fail(err, USC_EIO, "%s: read error: %s", path,
			       ferror(fp) ? strerror(errno)
					  : "file shrank while read");
		goto done;
	}
	st = usc__tensor_canonicalize(t, false, path, err);
	if (st != USC_OK)
		goto done;
	*out = t;
	t = NULL;
done:
	usc_tensor_destroy(t);
	fclose(fp);
	return st;
}

usc_status usc_tensor_write_raw(const usc_tensor *t, const char *path,
				usc_error *err)
{
	FILE *fp;

	if (!t || !path)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_write_raw: NULL argument");
	fp = fopen(path, "wb");
	if (!fp)
		return usc__fail(err, USC_EIO, "%s: cannot create: %s", path,
				 strerror(errno));
	if (fwrite(t->data, 1, t->nbytes, fp) != t->nbytes) {
		usc_status st = usc__fail(err, USC_EIO, "%s: write error: %s",
					  path, strerror(errno));

		fclose(fp);
		return st;
	}
	if (fclose(fp) != 0)
		return usc__fail(err, USC_EIO, "%s: write error: %s", path,
				 strerror(errno));
	return USC_OK;
}
