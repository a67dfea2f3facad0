/*
 * Helpers shared by the tests of include/ulpscope/hlo_kernel.h: the corpus
 * directory and a sorted listing of its HLO files.
 */
#ifndef USC_TEST_KERNEL_UTIL_H
#define USC_TEST_KERNEL_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The corpus files: every entry of $USC_SHARED_DIR/corpus/hlo except
 * SOURCES.md, sorted by name.  Returns the count; names are malloc'd. */
static inline int kernel_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline size_t kernel_corpus_files(char *dir, size_t dir_size,
					 char **names, size_t max)
{
	const char *shared = getenv("USC_SHARED_DIR");
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(dir, dir_size, "%s/corpus/hlo", shared ? shared : "../shared");
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "SOURCES.md") == 0)
			continue;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, kernel_cmp_str);
	return n;
}

#endif /* USC_TEST_KERNEL_UTIL_H */
