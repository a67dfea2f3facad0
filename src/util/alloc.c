/*
 * The one door through which the library allocates memory.
 *
 * A live-block counter and a failure injector make leaks and out-of-memory
 * paths testable.  The counter is approximate under threads (relaxed
 * atomics would do; the library is single-threaded per handle for now).
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_after = -1;
static long live_blocks;

void usc__alloc_fail_after(long n)
{
	fail_after = n;
}

long usc__alloc_live(void)
{
	return live_blocks;
}

/* Returns true when the injector says this allocation must fail. */
static bool injected_failure(void)
{
	if (fail_after < 0)
		return false;
	if (fail_after == 0)
		return true;
	fail_after--;
	return false;
}

void *usc__malloc(size_t size)
{
	void *p;

	if (injected_failure())
		return NULL;
	p = malloc(size ? size : 1);
	if (p)
		live_blocks++;
	return p;
}

void *usc__calloc(size_t count, size_t size)
{
	void *p;

	if (injected_failure())
		return NULL;
	p = calloc(count ? count : 1, size ? size : 1);
	if (p)
		live_blocks++;
	return p;
}

void *usc__realloc(void *ptr, size_t size)
{
	void *p;

	if (!ptr)
		return usc__malloc(size);
	if (injected_failure())
		return NULL;
	p = realloc(ptr, size ? size : 1);
	return p;
}

void *usc__reallocarray(void *ptr, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	return usc__realloc(ptr, count * size);
}

char *usc__strndup(const char *s, size_t n)
{
	char *p = usc__malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *usc__strdup(const char *s)
{
	return s ? usc__strndup(s, strlen(s)) : NULL;
}

void usc__free(void *ptr)
{
	if (!ptr)
		return;
	live_blocks--;
	free(ptr);
}
