/*
 * The process-wide limits on what is read and allocated
 * (include/ulpscope/limits.h, docs/limits.md).
 */
#include "internal.h"

#include "ulpscope/limits.h"

static usc_limits current = {USC_LIMIT_FILE_BYTES_DEFAULT,
			     USC_LIMIT_ELEMENTS_DEFAULT,
			     USC_LIMIT_ITERATIONS_DEFAULT};

usc_limits usc_limits_default(void)
{
	usc_limits l = {USC_LIMIT_FILE_BYTES_DEFAULT,
			USC_LIMIT_ELEMENTS_DEFAULT,
			USC_LIMIT_ITERATIONS_DEFAULT};

	return l;
}

usc_limits usc_limits_get(void)
{
	return current;
}

void usc_limits_set(const usc_limits *limits)
{
	if (!limits)
		return;
	if (limits->max_file_bytes)
		current.max_file_bytes = limits->max_file_bytes;
	if (limits->max_elements)
		current.max_elements = limits->max_elements;
	if (limits->max_iterations)
		current.max_iterations = limits->max_iterations;
}
