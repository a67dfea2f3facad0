/*
 * The one door through which the library allocates memory.
 *
 * A live-block counter and a failure injector make leaks and out-of-memory
 * paths testable.  The counter is a relaxed atomic: a threaded check
 * (check -j N) allocates on several threads at once, and a count is all it
 * needs to be.  The injector is for single-threaded tests only.
 */
#include "internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_after = -1;
static atomic_long live_blocks;

void usc__alloc_fail_after(long n)
{
	fail_after = n;
}

long usc__alloc_live(void)
{
	return atomic_load_explicit(&live_blocks, memory_order_relaxed);
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
		atomic_fetch_add_explicit(&live_blocks, 1,
					  memory_order_relaxed);
	return p;
}

void *usc__calloc(size_t count, size_t size)
{
	void *p;

	if (injected_failure())
		return NULL;
	p = calloc(count ? count : 1, size ? size : 1);
	if (p)
		atomic_fetch_add_explicit(&live_blocks, 1,
					  memory_order_relaxed);
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
	atomic_fetch_sub_explicit(&live_blocks, 1, memory_order_relaxed);
	free(ptr);
}
