/* GMP's allocation failures as a plain exit (oracle_memory.h). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gmp.h>

#include "oracle_memory.h"

static int oom_status = 1;

static void oom(size_t size)
{
	char line[96];
	int n = snprintf(line, sizeof line,
			 "ulpscope: out of memory (GMP asked for %zu bytes)\n",
			 size);

	if (n > 0 && write(2, line, (size_t)n) < 0) {
		/* Nothing more to say: the exit status says it. */
	}
	_exit(oom_status);
}

static void *gmp_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		oom(size);
	return p;
}

static void *gmp_realloc(void *ptr, size_t old, size_t size)
{
	void *p = realloc(ptr, size);

	(void)old;
	if (!p)
		oom(size);
	return p;
}

static void gmp_free(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

void usc__oracle_exit_on_oom(int status)
{
	oom_status = status;
	mp_set_memory_functions(gmp_alloc, gmp_realloc, gmp_free);
}
