/*
 * Helpers shared by the C tests: where the source tree is, the
 * USC_TEST_SCALE multiplier of sample counts, reproducible random
 * numbers, and sorted listings of directories.  Static inline functions
 * only, so that a test includes this header and links nothing more; a
 * helper that only one test uses stays in that test.
 *
 * The generators are the published ones, each with its state passed in so
 * that every test keeps its own seed and sequence: Marsaglia's xorshift64
 * (shifts 13, 7, 17; "Xorshift RNGs", J. Stat. Softw. 8(14), 2003),
 * xorshift64* (Vigna, "An experimental exploration of Marsaglia's
 * xorshift generators, scrambled", 2016: shifts 12, 25, 27, multiplier
 * 0x2545F4914F6CDD1D) and splitmix64 (Steele, Lea and Flood, 2014).
 */
#ifndef USC_TEST_UTIL_H
#define USC_TEST_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The source tree: $USC_SOURCE_DIR, which ctest sets, else ".". */
static inline const char *usc_test_src_dir(void)
{
	const char *s = getenv("USC_SOURCE_DIR");

	return s ? s : ".";
}

/*
 * USC_TEST_SCALE, the factor by which a test multiplies its samples: a
 * positive integer, 1 when unset or not positive.
 */
static inline long usc_test_scale(void)
{
	const char *s = getenv("USC_TEST_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v > 0 ? v : 1;
}

/* Marsaglia's xorshift64 (13, 7, 17): the next state, also returned. */
static inline uint64_t usc_test_xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* xorshift64*: the state steps by (12, 25, 27); returns it scrambled. */
static inline uint64_t usc_test_xorshift64star(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545F4914F6CDD1Dull;
}

/* splitmix64: the state steps by the golden gamma; returns it mixed. */
static inline uint64_t usc_test_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* qsort's comparison for an array of strings (char *), byte order. */
static inline int usc_test_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Frees a list from usc_test_subdirs: its n strings, then the array. */
static inline void usc_test_free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/*
 * The directories in directory d (names beginning with "." left out), as
 * paths "d/name" in byte order of their names: *out (malloc'd, free with
 * usc_test_free_list) and *n.  False when d cannot be opened or memory
 * runs out (then *out is NULL and *n 0).
 */
static inline bool usc_test_subdirs(const char *d, char ***out, size_t *n)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	char **list = NULL;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	if (!dp)
		return false;
	while ((e = readdir(dp)) != NULL) {
		size_t len = strlen(d) + strlen(e->d_name) + 2;
		struct stat sb;
		char **grown;
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = malloc(len);
		if (!p)
			goto fail;
		snprintf(p, len, "%s/%s", d, e->d_name);
		if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			free(p);
			continue;
		}
		grown = realloc(list, (count + 1) * sizeof *list);
		if (!grown) {
			free(p);
			goto fail;
		}
		list = grown;
		list[count++] = p;
	}
	closedir(dp);
	qsort(list, count, sizeof *list, usc_test_cmp_str);
	*out = list;
	*n = count;
	return true;
fail:
	closedir(dp);
	usc_test_free_list(list, count);
	return false;
}

#endif /* USC_TEST_UTIL_H */
