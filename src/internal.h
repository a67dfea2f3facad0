/*
 * ulpscope internal header: included first by every source file of the
 * library.  Names with the usc__ prefix are internal but not static.
 */
#ifndef USC_INTERNAL_H
#define USC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ulpscope/status.h"

#if defined(__GNUC__)
#define USC__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define USC__WUR __attribute__((warn_unused_result))
#else
#define USC__PRINTF(fmt, args)
#define USC__WUR
#endif

#define USC__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Allocation.  Every allocation of the library goes through these, so the
 * tests can count leaks and inject failures (usc__alloc_fail_after).  None
 * of them aborts: a NULL return is reported as USC_ENOMEM by the caller.
 */
void *usc__malloc(size_t size) USC__WUR;
void *usc__calloc(size_t count, size_t size) USC__WUR;
void *usc__realloc(void *ptr, size_t size) USC__WUR;
/* realloc(ptr, count * size) with the multiplication checked. */
void *usc__reallocarray(void *ptr, size_t count, size_t size) USC__WUR;
char *usc__strndup(const char *s, size_t n) USC__WUR;
/* A copy of the string s; NULL when s is NULL (or out of memory). */
char *usc__strdup(const char *s) USC__WUR;
void usc__free(void *ptr);

/*
 * Test hooks: after n more successful allocations every further one
 * fails (n < 0 disables the injection).  usc__alloc_live counts blocks
 * allocated and not yet freed.
 */
void usc__alloc_fail_after(long n);
long usc__alloc_live(void);

/*
 * Opens path for reading (src/util/file.c): a regular file only, refused
 * without blocking when it is a directory, FIFO, device or socket
 * (USC_EIO, the message says which).  *size is its size when opened.
 * USC_ENOTFOUND when it does not exist.
 */
usc_status usc__open_regular(const char *path, FILE **fp, uint64_t *size,
			     usc_error *err);

/*
 * The directory part of path ("." when it has none, "/" for a file in
 * the root), as a new string from usc__malloc; NULL when out of memory.
 */
char *usc__path_dir(const char *path) USC__WUR;

/*
 * Reads the whole file at path: *out (malloc'd, NUL-terminated, freed with
 * usc__free) and its length.  A regular file only (usc__open_regular), at
 * most the limit's max_file_bytes (include/ulpscope/limits.h; USC_ERANGE
 * before anything is allocated, naming the limit).  USC_ENOTFOUND when it
 * does not exist, USC_EIO when it cannot be read; the message names the
 * path.
 */
usc_status usc__read_file(const char *path, char **out, size_t *len,
			  usc_error *err);

/*
 * The same from an open stream (standard input) named name in messages;
 * hint is the size expected (0 when unknown).
 */
usc_status usc__read_stream(FILE *fp, const char *name, uint64_t hint,
			    char **out, size_t *len, usc_error *err);

/*
 * Records an error in err (which may be NULL) and returns code, so a
 * failing path reads: return usc__fail(err, USC_EINVAL, "bad %s", what);
 */
usc_status usc__fail(usc_error *err, usc_status code, const char *fmt, ...)
	USC__PRINTF(3, 4);
usc_status usc__vfail(usc_error *err, usc_status code, const char *fmt,
		      va_list ap) USC__PRINTF(3, 0);

#endif /* USC_INTERNAL_H */
