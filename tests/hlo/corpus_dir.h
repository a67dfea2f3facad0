/*
 * Where the HLO corpus tests find their files.  Each corpus test has two
 * modes.  Run with no argument it walks HLO text the project owns
 * (tests/hlo/corpus, written for these tests, and the kernel catalogue
 * kernels/), so a fresh clone tests every parser, printer, verifier and
 * isolation path on its own files.  Run with the argument "xla" it walks
 * XLA's corpus in the shared folder beside the checkout
 * ($USC_SHARED_DIR/corpus/hlo).  That corpus is not part of the project:
 * when it is absent the test says so and exits with CORPUS_SKIP, which
 * ctest reports as skipped (SKIP_RETURN_CODE in the registration).
 */
#ifndef USC_TEST_CORPUS_DIR_H
#define USC_TEST_CORPUS_DIR_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The exit status ctest is told means "skipped" (tests/CMakeLists.txt). */
#define CORPUS_SKIP 77

/* Whether the test was asked to walk XLA's corpus. */
static inline bool corpus_is_xla(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "xla") == 0;
}

/* dir = $USC_SOURCE_DIR/sub (the source tree's folder sub). */
static inline void corpus_own_dir(char *dir, size_t size, const char *sub)
{
	snprintf(dir, size, "%s/%s", usc_test_src_dir(), sub);
}

/*
 * dir = $USC_SHARED_DIR/corpus/hlo; when that folder cannot be opened,
 * prints why the test is skipped and exits with CORPUS_SKIP.
 */
static inline void corpus_xla_dir_or_skip(char *dir, size_t size)
{
	const char *shared = getenv("USC_SHARED_DIR");
	DIR *d;

	snprintf(dir, size, "%s/corpus/hlo", shared ? shared : "../shared");
	d = opendir(dir);
	if (!d) {
		printf("skipped: ../shared/corpus/hlo is absent (%s cannot be "
		       "opened); XLA's corpus is not part of the project\n",
		       dir);
		exit(CORPUS_SKIP);
	}
	closedir(d);
}

/*
 * The HLO files of dir (names ending in .hlo or .txt), sorted by name,
 * at most max of them; names are malloc'd.  Returns the count, 0 when
 * the folder cannot be opened.
 */
static inline size_t corpus_list(const char *dir, char **names, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		size_t l = strlen(de->d_name);

		if (l > 4 && (strcmp(de->d_name + l - 4, ".hlo") == 0 ||
			      strcmp(de->d_name + l - 4, ".txt") == 0))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, usc_test_cmp_str);
	return n;
}

#endif /* USC_TEST_CORPUS_DIR_H */
