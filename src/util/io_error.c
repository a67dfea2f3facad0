/*
 * Words for system errors, and the exit guard for a library whose own
 * exit handler cannot run safely (see io_error.h).
 */
#define _DEFAULT_SOURCE /* on_exit */

#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/io_error.h"

const char *usc__io_error_text(int e)
{
	switch (e) {
	case ENOSPC:
		return "no space left on device";
	case EFBIG:
		return "file size limit exceeded (the process's limit, ulimit "
		       "-f, or the largest file the file system holds)";
#ifdef EDQUOT
	case EDQUOT:
		return "disk quota exceeded";
#endif
	case EACCES:
		return "permission denied";
	case EROFS:
		return "read-only file system";
	case EIO:
		return "input/output error";
	case ENOENT:
		return "no such file or directory";
	default:
		return strerror(e);
	}
}

#if defined(__GLIBC__)
/* on_exit hands the handler exit's status, so it is kept. */
static void skip_rest(int status, void *arg)
{
	(void)arg;
	fflush(NULL);
	_exit(status);
}
#else
/* Only atexit: the status is lost, and the process failed. */
static void skip_rest(void)
{
	fflush(NULL);
	_exit(EXIT_FAILURE);
}
#endif

void usc__exit_skip_earlier_handlers(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;

	if (atomic_flag_test_and_set(&done))
		return;
#if defined(__GLIBC__)
	on_exit(skip_rest, NULL);
#else
	atexit(skip_rest);
#endif
}
