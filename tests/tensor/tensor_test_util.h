/*
 * Helpers shared by the tensor tests: fixture paths, a scratch folder,
 * and the reader of fixtures/expect.txt (written by
 * tools/gen_tensor_fixtures.py from numpy, never by ulpscope).
 */
#ifndef USC_TENSOR_TEST_UTIL_H
#define USC_TENSOR_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulpscope/tensor.h"

/* dst = $USC_SOURCE_DIR/tests/tensor/fixtures/name. */
static inline void fixture_path(char *dst, size_t size, const char *name)
{
	const char *root = getenv("USC_SOURCE_DIR");

	snprintf(dst, size, "%s/tests/tensor/fixtures/%s", root ? root : ".",
		 name);
}

/* One block of expect.txt: a source, a type, a shape and the bits. */
typedef struct expect_block {
	char source[128];
	usc_dtype dtype;
	size_t rank;
	int64_t dims[8];
	size_t count;
	char **bits; /* count hex strings; "re:im" for complex */
} expect_block;

static inline void expect_free(expect_block *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < b[i].count; j++)
			free(b[i].bits[j]);
		free(b[i].bits);
	}
	free(b);
}

/* Reads every block of expect.txt; returns their count, 0 on failure. */
static inline size_t expect_load(expect_block **out)
{
	char path[1024], line[4096];
	expect_block *b = NULL;
	size_t n = 0;
	FILE *fp;

	fixture_path(path, sizeof path, "expect.txt");
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof line, fp)) {
		if (line[0] == '#')
			continue;
		if (line[0] == '=') {
			char type[32], dims[256];
			expect_block *nb = realloc(b, (n + 1) * sizeof *b);

			if (!nb)
				break;
			b = nb;
			memset(&b[n], 0, sizeof b[n]);
			if (sscanf(line, "= %127s %31s %255s", b[n].source, type,
				   dims) != 3 ||
			    usc_dtype_from_name(type, strlen(type),
						&b[n].dtype) != USC_OK)
				break;
			if (strcmp(dims, "-") != 0)
				for (char *tok = strtok(dims, ","); tok;
				     tok = strtok(NULL, ","))
					b[n].dims[b[n].rank++] = atoll(tok);
			n++;
			continue;
		}
		for (char *tok = strtok(line, " \n"); tok && n;
		     tok = strtok(NULL, " \n")) {
			expect_block *cur = &b[n - 1];
			char **nbits = realloc(cur->bits,
					       (cur->count + 1) * sizeof *nbits);

			if (!nbits)
				break;
			cur->bits = nbits;
			cur->bits[cur->count++] = strdup(tok);
		}
	}
	fclose(fp);
	*out = b;
	return n;
}

/* A fresh scratch folder under $TMPDIR (or /tmp), made with mkdtemp. */
static inline void scratch_dir(char *dst, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dst, size, "%s/usc_tensor_XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dst))
		dst[0] = '\0';
}

#endif /* USC_TENSOR_TEST_UTIL_H */
