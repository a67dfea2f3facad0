/*
 * Helpers of the harnesses whose code under test reads a file, not bytes in
 * memory: each process makes one private temporary folder (removed at
 * exit) and rewrites one file in it with every input.
 */
#ifndef USC_FUZZ_TMPFILE_H
#define USC_FUZZ_TMPFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[256];
static char fuzz_file[320];

static void fuzz_tmp_cleanup(void)
{
	if (fuzz_file[0])
		(void)unlink(fuzz_file);
	if (fuzz_dir[0])
		(void)rmdir(fuzz_dir);
}

/*
 * The folder, made on the first call: under $TMPDIR (else /tmp), so that
 * parallel fuzzing jobs (-jobs=N) never share a file.
 */
static const char *fuzz_tmp_dir(void)
{
	if (!fuzz_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(fuzz_dir, sizeof fuzz_dir, "%s/usc-fuzz-XXXXXX",
			 tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(fuzz_dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(fuzz_tmp_cleanup);
	}
	return fuzz_dir;
}

/*
 * Writes the input to the folder's file NAME (always the same name in one
 * process) and returns its path.  A harness that cannot write its input
 * stops: a run that tested nothing must not look like a clean one.
 */
static const char *fuzz_tmp_write(const char *name, const uint8_t *data,
				  size_t size)
{
	FILE *fp;

	snprintf(fuzz_file, sizeof fuzz_file, "%s/%s", fuzz_tmp_dir(), name);
	fp = fopen(fuzz_file, "wb");
	if (!fp || (size && fwrite(data, 1, size, fp) != size) ||
	    fclose(fp) != 0) {
		perror("fuzz: writing the input file");
		abort();
	}
	return fuzz_file;
}

#endif /* USC_FUZZ_TMPFILE_H */
