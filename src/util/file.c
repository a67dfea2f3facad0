/*
 * Reading a whole file into memory, for the readers of small text files
 * (HLO modules, profiles, case.json).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

usc_status usc__read_file(const char *path, char **out, size_t *len_out,
			  usc_error *err)
{
	FILE *fp;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	*out = NULL;
	*len_out = 0;
	fp = fopen(path, "rb");
	if (!fp)
		return usc__fail(err, errno == ENOENT ? USC_ENOTFOUND : USC_EIO,
				 "%s: cannot open: %s", path, strerror(errno));
	for (;;) {
		size_t n;

		/* One byte more than the data, for a terminating NUL. */
		if (cap - len < 65536 + 1) {
			char *nb;

			cap = cap ? cap * 2 : 262144;
			nb = usc__realloc(buf, cap);
			if (!nb) {
				usc__free(buf);
				fclose(fp);
				return usc__fail(err, USC_ENOMEM,
						 "%s: out of memory", path);
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		usc__free(buf);
		fclose(fp);
		return usc__fail(err, USC_EIO, "%s: read error", path);
	}
	fclose(fp);
	buf[len] = '\0';
	*out = buf;
	*len_out = len;
	return USC_OK;
}
