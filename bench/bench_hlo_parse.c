/*
 * HLO parse throughput: parses the largest file of the HLO corpus over and
 * over and reports MB/s, next to the MB/s of a checksum pass over the same
 * bytes measured in the same run (the cost of merely reading them), and the
 * ratio of the two.  Usage: bench_hlo_parse [FILE] [SECONDS]; without FILE
 * it picks the largest file of $USC_SHARED_DIR/corpus/hlo.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ulpscope/hlo.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int largest_corpus_file(char *out, size_t size)
{
	const char *shared = getenv("USC_SHARED_DIR");
	char dir[4096];
	struct dirent *de;
	off_t best = -1;
	DIR *d;

	snprintf(dir, sizeof dir, "%s/corpus/hlo",
		 shared ? shared : "../shared");
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[8192];
		struct stat st;
		size_t l = strlen(de->d_name);

		if (l < 4 || (strcmp(de->d_name + l - 4, ".hlo") != 0 &&
			      strcmp(de->d_name + l - 4, ".txt") != 0))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && st.st_size > best) {
			best = st.st_size;
			snprintf(out, size, "%s", path);
		}
	}
	closedir(d);
	return best < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	char path[8192];
	double seconds = argc > 2 ? atof(argv[2]) : 2.0, t0, t_read, t_parse;
	long iters_read = 0, iters_parse = 0;
	volatile uint64_t sink = 0;
	char *buf;
	size_t len;
	FILE *fp;

	if (argc > 1)
		snprintf(path, sizeof path, "%s", argv[1]);
	else if (largest_corpus_file(path, sizeof path) != 0) {
		fprintf(stderr, "bench_hlo_parse: no corpus found\n");
		return 1;
	}
	fp = fopen(path, "rb");
	if (!fp) {
		perror(path);
		return 1;
	}
	fseek(fp, 0, SEEK_END);
	len = (size_t)ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, fp) != len) {
		fprintf(stderr, "bench_hlo_parse: cannot read %s\n", path);
		return 1;
	}
	fclose(fp);

	/* Baseline: a byte-wise checksum, the least any parser must do. */
	t0 = now();
	do {
		uint64_t h = 0;
		size_t i;

		for (i = 0; i < len; i++)
			h = h * 31 + (unsigned char)buf[i];
		sink += h;
		iters_read++;
	} while ((t_read = now() - t0) < seconds / 4);

	t0 = now();
	do {
		usc_hlo_file *f = NULL;
		usc_error err;

		if (usc_hlo_parse(buf, len, path, &f, &err) != USC_OK) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		usc_hlo_file_destroy(f);
		iters_parse++;
	} while ((t_parse = now() - t0) < seconds);

	{
		double mb = (double)len / 1e6;
		double read_mbs = mb * (double)iters_read / t_read;
		double parse_mbs = mb * (double)iters_parse / t_parse;

		printf("file: %s (%zu bytes)\n", path, len);
		printf("checksum pass: %.1f MB/s\n", read_mbs);
		printf("parse:         %.1f MB/s (%.3f ms per parse)\n",
		       parse_mbs, 1e3 * t_parse / (double)iters_parse);
		printf("parse / checksum ratio: %.3f\n", parse_mbs / read_mbs);
	}
	free(buf);
	return (int)(sink & 0);
}
