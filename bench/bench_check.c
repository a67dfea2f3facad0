/*
 * The speed of an unclassified check against plain f64 evaluation
 * (issue 15, "the check a user runs, at the speed of the tier": goal
 * check / f64 <= 3 on the five bench kernels at 2^20 elements).
 *
 * The five catalogue kernels of bench_oracle, enlarged the same way to
 * about N elements (default 2^20), are run on the same inputs, every
 * column once per repetition, back to back:
 *
 *   f64       usc_eval with USC_DOMAIN_F64: plain f64 evaluation by the
 *             same evaluator (the baseline);
 *   tier      usc_eval with USC_DOMAIN_TIER, the certified tier;
 *   ref       usc_eval with USC_DOMAIN_REFERENCE: the fast strict
 *             reference (docs/reference.md);
 *   ref-mpfr  the same with usc_eval_options.reference_mpfr: every
 *             function of the reference in MPFR, as before the fast path;
 *   check     usc_check_run without a profile, streamed as the command
 *             line runs it (reference, tier, the oracle for what the tier
 *             leaves, ULP errors, summaries), on files written to a
 *             temporary directory, the reference output as the device's;
 *   check-mpfr  the same check with USC_REFERENCE_MPFR=1.
 *
 * Times are the CPU time of the one thread that runs everything (the
 * machines are shared: only ratios measured in the same run mean
 * anything); rates are the best repetition, ratios the median of the
 * repetitions' ratios.  The reference's escalations to MPFR (function
 * evaluations its double path could not decide, over all of them) come
 * from the check's report.
 *
 * Usage: bench_check [--quick] [--no-mpfr] [--n N] [--reps R] [KERNEL...]
 *   --quick: 2^12 elements, one repetition; --no-mpfr: skip the two MPFR
 *   columns (their ratios print 0).  The kernels directory is
 *   $USC_KERNELS_DIR, else the source tree's.
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
#include "ulpscope/tensor.h"

#ifndef USC_KERNEL_DIR
#define USC_KERNEL_DIR "kernels"
#endif

#define MAX_REPS 64

/* The calling thread's CPU time (see bench_oracle.c). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const usc_error *err)
{
	fprintf(stderr, "bench_check: %s: %s\n", what,
		err ? err->message : "failed");
	exit(1);
}

/* ------------------------------------------------------------ kernels */

/*
 * A catalogue kernel and how to enlarge it, as in bench_oracle: every
 * occurrence of from[i] becomes "[R" followed by to[i], R the batch size;
 * rowlen elements of the output per unit of R.
 */
typedef struct kernel_def {
	const char *name;
	size_t nsub;
	const char *from[3];
	const char *to[3];
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
		fprintf(stderr, "bench_check: cannot read %s\n", path);
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

/* Inputs: uniform in [-3, 3], rounded to the parameter's type. */
static usc_tensor **make_inputs(const usc_hlo_module *m, uint64_t seed)
{
	const usc_hlo_computation *e = m->entry;
	usc_tensor **in = calloc(e->param_count, sizeof *in);
	usc_error err;

	for (size_t i = 0; i < e->param_count; i++) {
		const usc_hlo_shape *s = &e->params[i].shape;
		uint64_t x = seed + 7919 * i, n;

		if (usc_tensor_create(s->dtype, s->rank, s->dims, &in[i], &err))
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

static usc_eval *make_eval(const usc_hlo_module *m, usc_eval_domain d,
			   bool mpfr, usc_tensor **in)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;

	o.domain = d;
	o.reference_mpfr = mpfr;
	if (usc_eval_create(m, &o, &ev, &err) != USC_OK)
		die("eval create", &err);
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

/* ---------------------------------------------------------- the check */

typedef struct check_files {
	char dir[64];
	char hlo[256], dev[256];
	char inp[16][256];
	const char *inputs[16];
	const char *devices[1];
	size_t nin;
} check_files;

static void files_write(check_files *cf, const char *text, usc_tensor **in,
			size_t nin, const usc_tensor *device)
{
	usc_error err;
	FILE *f;

	snprintf(cf->dir, sizeof cf->dir, "/tmp/bench_check.XXXXXX");
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
	for (size_t i = 0; i < nin && i < 16; i++) {
		snprintf(cf->inp[i], sizeof cf->inp[i], "%s/input_%zu.npy",
			 cf->dir, i);
		if (usc_tensor_write_npy(in[i], cf->inp[i], &err) != USC_OK)
			die("write npy", &err);
		cf->inputs[i] = cf->inp[i];
	}
	snprintf(cf->dev, sizeof cf->dev, "%s/device_0.npy", cf->dir);
	if (usc_tensor_write_npy(device, cf->dev, &err) != USC_OK)
		die("write npy", &err);
	cf->devices[0] = cf->dev;
}

static void files_remove(check_files *cf)
{
	for (size_t i = 0; i < cf->nin; i++)
		unlink(cf->inp[i]);
	unlink(cf->dev);
	unlink(cf->hlo);
	rmdir(cf->dir);
}

/*
 * One unclassified, streamed check (the command line's way); its time,
 * and the reference's counts of functions and escalations.
 */
static double time_check(const check_files *cf, bool mpfr, uint64_t *fns,
			 uint64_t *esc)
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *rep;
	usc_error err;
	double t;

	req.hlo_path = cf->hlo;
	req.input_count = cf->nin;
	req.inputs = cf->inputs;
	req.device_count = 1;
	req.devices = cf->devices;
	req.stream = true;
	if (mpfr)
		setenv("USC_REFERENCE_MPFR", "1", 1);
	t = now();
	if (usc_check_run(&req, &rep, &err) != USC_OK)
		die("check", &err);
	t = now() - t;
	unsetenv("USC_REFERENCE_MPFR");
	if (fns) {
		*fns = rep->reference_functions;
		*esc = rep->reference_escalated;
	}
	usc_check_report_destroy(rep);
	return t;
}

/* --------------------------------------------------------------- main */

static int no_mpfr;

static void run_kernel(const kernel_def *k, long n, int reps)
{
	long r = n / k->rowlen > 0 ? n / k->rowlen : 1;
	char *text = scaled_text(k, r);
	usc_hlo_file *f;
	usc_hlo_module *m;
	usc_tensor **in;
	usc_eval *ev_64, *ev_t, *ev_r, *ev_rm;
	const usc_tensor *out_r;
	check_files cf;
	double b_64 = 1e300, b_t = 1e300, b_r = 1e300, b_rm = 1e300;
	double b_c = 1e300, b_cm = 1e300;
	double q_c[MAX_REPS], q_t[MAX_REPS], q_r[MAX_REPS], q_rm[MAX_REPS];
	double q_cm[MAX_REPS];
	uint64_t elems, fns = 0, esc = 0;
	usc_error err;
	int nr = 0;

	if (usc_hlo_parse(text, strlen(text), k->name, &f, &err) != USC_OK)
		die("parse", &err);
	m = usc_hlo_file_module(f, 0);
	in = make_inputs(m, 0x9e3779b97f4a7c15u);
	ev_64 = make_eval(m, USC_DOMAIN_F64, false, in);
	ev_t = make_eval(m, USC_DOMAIN_TIER, false, in);
	ev_r = make_eval(m, USC_DOMAIN_REFERENCE, false, in);
	ev_rm = make_eval(m, USC_DOMAIN_REFERENCE, true, in);
	time_eval(ev_r);
	usc_eval_output(ev_r, 0, &out_r, &err);
	elems = usc_tensor_count(out_r);
	files_write(&cf, text, in, m->entry->param_count, out_r);
	for (int i = 0; i < reps && i < MAX_REPS; i++) {
		double t64 = time_eval(ev_64), tt = time_eval(ev_t);
		double tr = time_eval(ev_r), trm = 0, tc, tcm = 0;

		tc = time_check(&cf, false, &fns, &esc);
		if (!no_mpfr) {
			trm = time_eval(ev_rm);
			tcm = time_check(&cf, true, NULL, NULL);
			b_rm = fmin(b_rm, trm);
			b_cm = fmin(b_cm, tcm);
		}
		b_64 = fmin(b_64, t64);
		b_t = fmin(b_t, tt);
		b_r = fmin(b_r, tr);
		b_c = fmin(b_c, tc);
		q_c[i] = tc / t64;
		q_t[i] = tt / t64;
		q_r[i] = tr / t64;
		q_rm[i] = no_mpfr ? 0 : trm / tr;
		q_cm[i] = no_mpfr ? 0 : tcm / tc;
		nr = i + 1;
	}
#define RATE(t) ((t) < 1e300 && (t) > 0 ? (double)elems / (t) : 0.0)
	printf("%-16s %8llu %9.3g %9.3g %9.3g %9.3g %9.3g %9.3g %8.2f %8.2f "
	       "%8.2f %8.1f %8.1f %9.2e\n",
	       k->name, (unsigned long long)elems, RATE(b_64), RATE(b_t),
	       RATE(b_r), RATE(b_rm), RATE(b_c), RATE(b_cm), median(q_c, nr),
	       median(q_t, nr), median(q_r, nr), median(q_rm, nr),
	       median(q_cm, nr), fns ? (double)esc / (double)fns : 0.0);
#undef RATE
	fflush(stdout);
	files_remove(&cf);
	usc_eval_destroy(ev_64);
	usc_eval_destroy(ev_t);
	usc_eval_destroy(ev_r);
	usc_eval_destroy(ev_rm);
	for (size_t i = 0; i < m->entry->param_count; i++)
		usc_tensor_destroy(in[i]);
	free(in);
	usc_hlo_file_destroy(f);
	free(text);
}

int main(int argc, char **argv)
{
	long n = 1L << 20;
	int reps = 3, nsel = 0;
	const char *sel[16];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			n = 1L << 12;
			reps = 1;
		} else if (!strcmp(argv[i], "--no-mpfr")) {
			no_mpfr = 1;
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (nsel < 16) {
			sel[nsel++] = argv[i];
		}
	}
	unsetenv("USC_REFERENCE_MPFR");
	printf("unclassified check against plain f64, ~%ld elements per "
	       "kernel, thread CPU time; rates (elements/s): best of %d, "
	       "ratios: median of the repetitions' ratios\n\n", n, reps);
	printf("%-16s %8s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s %9s\n",
	       "kernel", "elements", "f64/s", "tier/s", "ref/s", "refmpfr/s",
	       "check/s", "chkmpfr/s", "chk/f64", "tier/f64", "ref/f64",
	       "mpfr/ref", "mpfr/chk", "escalated");
	for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
		int want = nsel == 0;

		for (int j = 0; j < nsel; j++)
			want |= !strcmp(sel[j], kernels[i].name);
		if (want)
			run_kernel(&kernels[i], n, reps);
	}
	printf("\nchk/f64:  unclassified check (streamed, no profile) over "
	       "plain f64 evaluation (issue 15 goal <= 3)\n");
	printf("tier/f64, ref/f64: the certified tier and the fast "
	       "reference over plain f64\n");
	printf("mpfr/ref, mpfr/chk: the MPFR reference over the fast one, "
	       "alone and inside the check (speed-ups)\n");
	printf("escalated: the reference's function evaluations sent to "
	       "MPFR, over all of them\n");
	return 0;
}
