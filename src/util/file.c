/*
 * Opening input files, and reading a whole file into memory for the
 * readers of small text files (HLO modules, profiles, case.json).
 *
 * Every reader opens its file through usc__open_regular, which refuses
 * anything but a regular file: /dev/zero would be read until memory runs
 * out, a FIFO would block for ever in open(), and a directory reads as an
 * error that names nothing.  The open itself does not block (O_NONBLOCK),
 * so even a FIFO with no writer is refused rather than waited on.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ulpscope/limits.h"

/* What a file that is not regular is, in words. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

usc_status usc__open_regular(const char *path, FILE **fp, uint64_t *size,
			     usc_error *err)
{
	struct stat sb;
	int fd, flags;

	*fp = NULL;
	*size = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return usc__fail(err, errno == ENOENT ? USC_ENOTFOUND : USC_EIO,
				 "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0) {
		usc_status st = usc__fail(err, USC_EIO, "%s: cannot stat: %s",
					  path, strerror(errno));

		close(fd);
		return st;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return usc__fail(err, USC_EIO,
				 "%s: is %s, not a regular file; ulpscope "
				 "reads its inputs from regular files only",
				 path, file_kind(sb.st_mode));
	}
	/* Reads of a regular file block as usual from here on. */
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	*fp = fdopen(fd, "rb");
	if (!*fp) {
		usc_status st = usc__fail(err, USC_ENOMEM, "%s: cannot open: %s",
					  path, strerror(errno));

		close(fd);
		return st;
	}
	*size = sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
	return USC_OK;
}

/* The message of a file past the size limit; size 0: not known. */
static usc_status too_large(const char *name, uint64_t size, uint64_t limit,
			    usc_error *err)
{
	char has[48] = "";

	if (size)
		snprintf(has, sizeof has, "%" PRIu64 " bytes, ", size);
	return usc__fail(err, USC_ERANGE,
			 "%s: %smore than the limit of %" PRIu64
			 " bytes on a text input (raise it with "
			 "--max-file-size, or usc_limits_set; docs/limits.md)",
			 name, has, limit);
}

usc_status usc__read_stream(FILE *fp, const char *name, uint64_t hint,
			    char **out, size_t *len_out, usc_error *err)
{
	uint64_t limit = usc_limits_get().max_file_bytes;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	*out = NULL;
	*len_out = 0;
	if (hint > limit)
		return too_large(name, hint, limit, err);
	if (limit > SIZE_MAX - 2)
		limit = SIZE_MAX - 2;
	for (;;) {
		size_t n, want;

		/*
		 * One byte more than the data, for a terminating NUL; the
		 * size the file had when opened first, as a stream or a file
		 * still growing may hold more.
		 */
		if (cap - len < 65536 + 1 && cap < limit + 2) {
			size_t grown = cap ? cap * 2 : (size_t)hint + 65537;
			char *nb;

			/* Room for one byte past the limit, to see it. */
			if (grown > limit + 2)
				grown = (size_t)limit + 2;
			nb = usc__realloc(buf, grown);
			if (!nb) {
				usc__free(buf);
				return usc__fail(err, USC_ENOMEM,
						 "%s: out of memory", name);
			}
			buf = nb;
			cap = grown;
		}
		want = cap - len - 1;
		n = fread(buf + len, 1, want, fp);
		len += n;
		if (len > limit) {
			usc__free(buf);
			return too_large(name, 0, limit, err);
		}
		if (n < want)
			break;
	}
	if (ferror(fp)) {
		usc__free(buf);
		return usc__fail(err, USC_EIO, "%s: read error", name);
	}
	buf[len] = '\0';
	*out = buf;
	*len_out = len;
	return USC_OK;
}

usc_status usc__read_file(const char *path, char **out, size_t *len_out,
			  usc_error *err)
{
	FILE *fp;
	uint64_t size;
	usc_status st;

	*out = NULL;
	*len_out = 0;
	st = usc__open_regular(path, &fp, &size, err);
	if (st != USC_OK)
		return st;
	st = usc__read_stream(fp, path, size, out, len_out, err);
	fclose(fp);
	return st;
}

char *usc__path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return usc__strndup(".", 1);
	return usc__strndup(path, slash == path ? 1 : (size_t)(slash - path));
}
