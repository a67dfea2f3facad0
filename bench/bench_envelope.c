/*
 * The classified check against plain f64 evaluation (issue 15, the fast
 * envelope): each bench kernel of bench_oracle, enlarged to about N
 * elements (2^20 by default), evaluated in the same run, on the same
 * inputs, by
 *
 *   f64     usc_eval with USC_DOMAIN_F64 (plain doubles: the baseline);
 *   env     usc_eval with USC_DOMAIN_ENVELOPE under xla-cpu, the fast
 *           path (docs/envelope.md, "The fast path");
 *   mpfr    the same with USC_ENVELOPE=mpfr, every op through MPFR
 *           (only with --mpfr: it is slow);
 *   check   usc_check_run under xla-cpu, streamed, with its result file
 *           (what `ulpscope check --profile xla-cpu --out F.h5` runs),
 *           the f64 output as the device output.
 *
 * Prints elements/s and the ratios check/f64 (issue goal <= 5), env/f64
 * and env/check (the envelope's own share of the check's time), and the
 * fraction of the envelope's op elements escalated to MPFR.  Times are
 * CPU time of the one thread; each repetition runs every column back to
 * back, the rates are the best of REPS and the ratios the medians of the
 * repetitions' ratios (the machines here are shared and noisy).
 *
 * Usage: bench_envelope [--quick] [--mpfr] [--env-only] [--n N] [--reps R]
 *                       [KERNEL...]
 * --env-only leaves the check out (its columns print 0), for profiling.
 * The kernels directory is $USC_KERNELS_DIR, else the source tree's.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulpscope/check.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#ifndef USC_KERNEL_DIR
#define USC_KERNEL_DIR "kernels"
#endif

/* The calling thread's CPU time (see bench_oracle.c). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const usc_error *err)
{
	fprintf(stderr, "bench_envelope: %s: %s\n", what,
		err ? err->message : "failed");
	exit(1);
}

/* ------------------------------------------------------------ kernels */

/*
 * A catalogue kernel and how to enlarge it: every occurrence of from[i] in
 * the text becomes "[R" followed by to[i], R the batch size.  rowlen is
 * the number of elements per unit of R in the (largest) output.
 */
typedef struct kernel_def {
	const char *name;
	size_t nsub;
	const char *from[3];
	const char *to[3]; /* what follows "[R" in the replacement */
	long rowlen;
} kernel_def;

static const kernel_def kernels[] = {
	{"gelu_tanh_f32", 1, {"[1024]"}, {"]"}, 1},
	{"silu_bf16", 1, {"[1024]"}, {"]"}, 1},
	{"swiglu_f16", 1, {"[8,128]"}, {",128]"}, 128},
	{"softmax_f32", 3, {"[4,256]", "[4,8]", "[4]"},
	 {",256]", ",8]", "]"}, 256},
	{"layer_norm_bf16", 3, {"[8,128]", "[8,4]", "[8]"},
	 {",128]", ",4]", "]"}, 128},
};

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
	buf = malloc((size_t)n + 1);
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

static char *scaled_text(const kernel_def *k, long r)
{
	char path[4096], to[64], *text, *t;
	const char *dir = getenv("USC_KERNELS_DIR");

	snprintf(path, sizeof path, "%s/%s.hlo", dir ? dir : USC_KERNEL_DIR,
		 k->name);
	text = slurp(path);
	if (!text) {
		fprintf(stderr, "bench_envelope: cannot read %s\n", path);
		exit(1);
	}
	for (size_t i = 0; i < k->nsub; i++) {
		snprintf(to, sizeof to, "[%ld%s", r, k->to[i]);
		t = replace(text, k->from[i], to);
		free(text);
		text = t;
	}
	return text;
}

static usc_hlo_file *parse_text(const char *text, const char *name)
{
	usc_hlo_file *f;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), name, &f, &err) != USC_OK)
		die("parse", &err);
	return f;
}

/* Inputs: uniform in [-3, 3] (normal-ish activations), rounded to type. */
static usc_tensor **make_inputs(const usc_hlo_module *m, uint64_t seed)
{
	const usc_hlo_computation *e = m->entry;
	usc_tensor **in = calloc(e->param_count, sizeof *in);
	usc_error err;

	for (size_t i = 0; i < e->param_count; i++) {
		const usc_hlo_shape *s = &e->params[i].shape;
		usc_dtype t = s->dtype;
		uint64_t x = seed + 7919 * i, n;

		if (usc_tensor_create(t, s->rank, s->dims, &in[i], &err))
			die("tensor", &err);
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

static void free_inputs(usc_tensor **in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usc_tensor_destroy(in[i]);
	free(in);
}

/* ------------------------------------------------------- the runs */

static usc_profile xla_cpu;

static usc_eval *make_eval(const usc_hlo_module *m, usc_eval_domain d,
			   usc_tensor **in, int mpfr)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;

	o.domain = d;
	if (d == USC_DOMAIN_ENVELOPE)
		o.profile = &xla_cpu;
	/* The domain reads USC_ENVELOPE when it is created. */
	if (mpfr)
		setenv("USC_ENVELOPE", "mpfr", 1);
	if (usc_eval_create(m, &o, &ev, &err) != USC_OK)
		die("eval create", &err);
	if (mpfr)
		unsetenv("USC_ENVELOPE");
	for (size_t i = 0; i < m->entry->param_count; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			die("bind", &err);
	return ev;
}

static double time_eval(usc_eval *ev)
{
	double t = now();
	usc_error err;

	if (usc_eval_run(ev, &err) != USC_OK)
		die("run", &err);
	return now() - t;
}

#define MAX_REPS 64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The files of a check: the kernel, its inputs, the device output. */
typedef struct check_files {
	char dir[64], hlo[256], dev[256], out[256];
	char inp[16][256];
	const char *inputs[16];
	size_t nin;
} check_files;

static void files_write(check_files *cf, const char *text, usc_tensor **in,
			size_t nin, const usc_tensor *device)
{
	usc_error err;
	FILE *f;

	strcpy(cf->dir, "/tmp/bench_envelope.XXXXXX");
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
			die("write npy", &err);
		cf->inputs[i] = cf->inp[i];
	}
	snprintf(cf->dev, sizeof cf->dev, "%s/device_0.npy", cf->dir);
	if (usc_tensor_write_npy(device, cf->dev, &err) != USC_OK)
		die("write npy", &err);
	snprintf(cf->out, sizeof cf->out, "%s/results.h5", cf->dir);
}

static void files_remove(check_files *cf)
{
	for (size_t i = 0; i < cf->nin; i++)
		unlink(cf->inp[i]);
	unlink(cf->dev);
	unlink(cf->hlo);
	unlink(cf->out);
	rmdir(cf->dir);
}

/* One classified, streamed check with its result file; its CPU time. */
static double time_check(const check_files *cf, uint64_t *fast,
			 uint64_t *escalated, const char **verdict)
{
	usc_check_request req = usc_check_request_default();
	const char *devices[1] = {cf->dev};
	usc_check_report *rep;
	usc_error err;
	double t;

	unlink(cf->out);
	req.hlo_path = cf->hlo;
	req.input_count = cf->nin;
	req.inputs = cf->inputs;
	req.device_count = 1;
	req.devices = devices;
	req.profile = &xla_cpu;
	req.stream = true;
	req.results_path = cf->out;
	t = now();
	if (usc_check_run(&req, &rep, &err) != USC_OK)
		die("check", &err);
	t = now() - t;
	*fast = rep->envelope_fast;
	*escalated = rep->envelope_escalated;
	*verdict = usc_verdict_name(rep->verdict);
	usc_check_report_destroy(rep);
	return t;
}

static int with_mpfr;
static int no_check; /* --env-only: no check column (for profiling) */

static void run_kernel(const kernel_def *k, long n, int reps)
{
	long r = n / k->rowlen > 0 ? n / k->rowlen : 1;
	char *text = scaled_text(k, r);
	usc_hlo_file *f = parse_text(text, k->name);
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	size_t np = m->entry->param_count;
	usc_tensor **in = make_inputs(m, 0x9e3779b97f4a7c15u);
	usc_eval *ev_64 = make_eval(m, USC_DOMAIN_F64, in, 0);
	usc_eval *ev_env = make_eval(m, USC_DOMAIN_ENVELOPE, in, 0);
	usc_eval *ev_mp = with_mpfr ? make_eval(m, USC_DOMAIN_ENVELOPE, in, 1)
				    : NULL;
	const usc_tensor *out64;
	double t_64 = 1e300, t_env = 1e300, t_mp = 1e300, t_chk = 1e300;
	double r_c64[MAX_REPS], r_e64[MAX_REPS], r_ec[MAX_REPS];
	double r_me[MAX_REPS];
	uint64_t elems, fast = 0, esc = 0;
	const char *verdict = "";
	check_files cf;
	usc_error err;
	int nr = 0;

	(void)time_eval(ev_64);
	if (usc_eval_output(ev_64, 0, &out64, &err) != USC_OK)
		die("output", &err);
	elems = usc_tensor_count(out64);
	files_write(&cf, text, in, np, out64);
	for (int i = 0; i < reps && i < MAX_REPS; i++) {
		double a = time_eval(ev_64), b = time_eval(ev_env), c, d = 0;

		c = no_check ? 0 : time_check(&cf, &fast, &esc, &verdict);
		if (ev_mp)
			d = time_eval(ev_mp);
		t_64 = fmin(t_64, a);
		t_env = fmin(t_env, b);
		if (!no_check)
			t_chk = fmin(t_chk, c);
		if (ev_mp)
			t_mp = fmin(t_mp, d);
		r_c64[i] = c / a;
		r_ec[i] = no_check ? 0 : b / c;
		r_e64[i] = b / a;
		r_me[i] = ev_mp ? d / b : 0;
		nr = i + 1;
	}
#define RATE(t) ((t) > 0 && (t) < 1e300 ? (double)elems / (t) : 0.0)
	printf("%-16s %9llu %11.0f %11.0f %11.0f %11.0f %9.1f %9.2f %9.2f "
	       "%9.1f %9.2e  %s\n",
	       k->name, (unsigned long long)elems, RATE(t_64), RATE(t_env),
	       RATE(t_mp), RATE(t_chk), median(r_c64, nr), median(r_e64, nr),
	       median(r_ec, nr), median(r_me, nr),
	       fast + esc ? (double)esc / (double)(fast + esc) : 0.0, verdict);
#undef RATE
	fflush(stdout);
	files_remove(&cf);
	usc_eval_destroy(ev_64);
	usc_eval_destroy(ev_env);
	usc_eval_destroy(ev_mp);
	free_inputs(in, np);
	usc_hlo_file_destroy(f);
	free(text);
}

int main(int argc, char **argv)
{
	long n = 1L << 20;
	int reps = 3, nsel = 0;
	const char *sel[16];
	usc_error err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			n = 1L << 11;
			reps = 1;
		} else if (!strcmp(argv[i], "--env-only")) {
			no_check = 1;
		} else if (!strcmp(argv[i], "--mpfr")) {
			with_mpfr = 1;
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (nsel < 16) {
			sel[nsel++] = argv[i];
		}
	}
	if (usc_profile_resolve("xla-cpu", &xla_cpu, &err) != USC_OK)
		die("profile", &err);
	printf("classified check vs plain f64, ~%ld elements per kernel, "
	       "thread CPU time; rates: best of %d, ratios: median of the "
	       "repetitions' ratios (elements/s; ratios are what count)\n",
	       n, reps);
	printf("f64: USC_DOMAIN_F64; env: USC_DOMAIN_ENVELOPE under xla-cpu "
	       "(fast path); mpfr: the same with USC_ENVELOPE=mpfr (--mpfr);\n"
	       "check: usc_check_run --profile xla-cpu, streamed, with its "
	       "result file\n\n");
	printf("%-16s %9s %11s %11s %11s %11s %9s %9s %9s %9s %9s  %s\n",
	       "kernel", "elements", "f64/s", "env/s", "mpfr/s", "check/s",
	       "chk/f64", "env/f64", "env/chk", "mpfr/env", "escalated",
	       "verdict");
	for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
		int want = nsel == 0;

		for (int j = 0; j < nsel; j++)
			want |= !strcmp(sel[j], kernels[i].name);
		if (want)
			run_kernel(&kernels[i], n, reps);
	}
	printf("\nchk/f64:   the classified check against plain f64 "
	       "(issue 15 goal <= 5)\n");
	printf("env/f64:   the envelope alone against plain f64\n");
	printf("env/chk:   the envelope's share of the check's time (the "
	       "rest: reference, tier, classes, result file)\n");
	printf("mpfr/env:  the fast path's speed-up over the MPFR envelope\n");
	printf("escalated: fraction of the envelope's elementwise op "
	       "elements that went to MPFR in the check\n");
	return 0;
}
