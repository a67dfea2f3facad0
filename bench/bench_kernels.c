/* What the check and oracle benches share (bench_kernels.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef USC_KERNEL_DIR
#define USC_KERNEL_DIR "kernels"
#endif

const char *bench_name = "bench";

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_thread_estimate(double one1, double main, double all, size_t n)
{
	double spread = all / (double)(n ? n : 1);
	double wall = main > spread ? main : spread;

	return wall > 0 ? one1 / wall : 0;
}

void bench_die(const char *what, const usc_error *err)
{
	fprintf(stderr, "%s: %s: %s\n", bench_name, what,
		err ? err->message : "failed");
	exit(1);
}

/* ------------------------------------------------------------ kernels */

const bench_kernel bench_kernels[] = {
	{"gelu_tanh_f32", 1, {"[1024]"}, {"]"}, 1},
	{"silu_bf16", 1, {"[1024]"}, {"]"}, 1},
	{"swiglu_f16", 1, {"[8,128]"}, {",128]"}, 128},
	{"softmax_f32", 3, {"[4,256]", "[4,8]", "[4]"},
	 {",256]", ",8]", "]"}, 256},
	{"layer_norm_bf16", 3, {"[8,128]", "[8,4]", "[8]"},
	 {",128]", ",4]", "]"}, 128},
};

const size_t bench_kernel_count = sizeof bench_kernels / sizeof *bench_kernels;

bool bench_selected(const bench_kernel *k, const char *const *names,
		    int count)
{
	for (int j = 0; j < count; j++)
		if (!strcmp(names[j], k->name))
			return true;
	return count == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return NULL;
	}
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Replaces every occurrence of from by to; the result is malloc'ed. */
static char *replace(const char *s, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to), n = 0;
	const char *p;
	char *out, *q;

	for (p = s; (p = strstr(p, from)); p += lf)
		n++;
	out = malloc(strlen(s) + n * lt + 1);
	if (!out)
		return NULL;
	for (q = out; (p = strstr(s, from)); s = p + lf) {
		memcpy(q, s, (size_t)(p - s));
		q += p - s;
		memcpy(q, to, lt);
		q += lt;
	}
	strcpy(q, s);
	return out;
}

char *bench_scaled_text(const bench_kernel *k, long r)
{
	char path[4096], to[64], *text, *t;
	const char *dir = getenv("USC_KERNELS_DIR");

	snprintf(path, sizeof path, "%s/%s.hlo", dir ? dir : USC_KERNEL_DIR,
		 k->name);
	text = slurp(path);
	if (!text) {
		fprintf(stderr, "%s: cannot read %s\n", bench_name, path);
		exit(1);
	}
	for (size_t i = 0; i < k->nsub; i++) {
		snprintf(to, sizeof to, "[%ld%s", r, k->to[i]);
		t = replace(text, k->from[i], to);
		free(text);
		if (!t) {
			fprintf(stderr, "%s: out of memory\n", bench_name);
			exit(1);
		}
		text = t;
	}
	return text;
}

char *bench_kernel_text(const bench_kernel *k, long n)
{
	return bench_scaled_text(k, n / k->rowlen > 0 ? n / k->rowlen : 1);
}

usc_hlo_file *bench_parse(const char *text, const char *name)
{
	usc_hlo_file *f;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), name, &f, &err) != USC_OK)
		bench_die("parse", &err);
	return f;
}

double bench_time_eval(usc_eval *ev)
{
	double t = bench_now();
	usc_error err;

	if (usc_eval_run(ev, &err) != USC_OK)
		bench_die("run", &err);
	return bench_now() - t;
}

usc_tensor **bench_make_inputs(const usc_hlo_module *m, uint64_t seed)
{
	const usc_hlo_computation *e = m->entry;
	usc_tensor **in = calloc(e->param_count ? e->param_count : 1,
				 sizeof *in);
	usc_error err;

	if (!in)
		bench_die("inputs", NULL);
	for (size_t i = 0; i < e->param_count; i++) {
		const usc_hlo_shape *s = &e->params[i].shape;
		uint64_t x = seed + 7919 * i, n;

		if (usc_tensor_create(s->dtype, s->rank, s->dims, &in[i], &err))
			bench_die("tensor", &err);
		n = usc_tensor_count(in[i]);
		for (uint64_t j = 0; j < n; j++) {
			double v;
			uint64_t bits;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = ((double)(x >> 11) * 0x1p-53) * 6.0 - 3.0;
			usc_encode_double(s->dtype, v, NULL, &bits, NULL);
			usc_tensor_set_bits(in[i], j, bits);
		}
	}
	return in;
}

void bench_free_inputs(usc_tensor **in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usc_tensor_destroy(in[i]);
	free(in);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* -------------------------------------------------------- check files */

void bench_files_write(bench_files *cf, const char *text, usc_tensor **in,
		       size_t nin, const usc_tensor *device)
{
	usc_error err;
	FILE *f;

	if (nin > 16) {
		fprintf(stderr, "%s: more than 16 inputs\n", bench_name);
		exit(1);
	}
	snprintf(cf->dir, sizeof cf->dir, "/tmp/%s.XXXXXX", bench_name);
	if (!mkdtemp(cf->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(cf->hlo, sizeof cf->hlo, "%s/kernel.hlo", cf->dir);
	f = fopen(cf->hlo, "w");
	if (!f) {
		perror(cf->hlo);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	cf->nin = nin;
	for (size_t i = 0; i < nin; i++) {
		snprintf(cf->inp[i], sizeof cf->inp[i], "%s/input_%zu.npy",
			 cf->dir, i);
		if (usc_tensor_write_npy(in[i], cf->inp[i], &err) != USC_OK)
			bench_die("write npy", &err);
		cf->inputs[i] = cf->inp[i];
	}
	snprintf(cf->dev, sizeof cf->dev, "%s/device_0.npy", cf->dir);
	if (usc_tensor_write_npy(device, cf->dev, &err) != USC_OK)
		bench_die("write npy", &err);
	cf->devices[0] = cf->dev;
	snprintf(cf->out, sizeof cf->out, "%s/results.h5", cf->dir);
}

void bench_files_remove(bench_files *cf)
{
	char lock[sizeof cf->out + 8];

	for (size_t i = 0; i < cf->nin; i++)
		unlink(cf->inp[i]);
	unlink(cf->dev);
	unlink(cf->hlo);
	unlink(cf->out);
	/* The result file's writer leaves its lock file (docs/results.md). */
	if ((size_t)snprintf(lock, sizeof lock, "%s.lock", cf->out) <
	    sizeof lock)
		unlink(lock);
	rmdir(cf->dir);
}
