/*
 * Peak memory of an evaluation (issue "oracle", Performance): the goal is a
 * peak resident set of at most 2 × (inputs + outputs) + 64 MB.
 *
 * The kernel is kernels/gelu_tanh_f32.hlo enlarged to N f32 elements (one
 * input, one output, 13 elementwise ops).  Every configuration runs in a
 * child process of its own (fork), so that one peak does not hide the
 * next; the child reads its peak RSS (getrusage, ru_maxrss) once its input
 * exists and again after the run, and sends both back.  The first figure
 * is the floor (the program, the libraries, the parsed kernel and the
 * input); the second is the peak of the evaluation.
 *
 * Rows: usc_eval_run in the reference, tier and oracle domains (outputs as
 * tensors only: a streamed run keeps no domain values), and the
 * usc_check_run path (kernel, input and device files written to a
 * temporary directory by an earlier child; its floor is taken before
 * usc_check_run reads them, so it holds no input): "check-whole" keeps
 * every element's figures in its report (a library caller's default);
 * "check" streams (usc_check_request.stream, what the command line does);
 * "check-xla-cpu" streams classified against the xla-cpu profile (the
 * envelope run, the classes and the verdict added); "check-xla-cpu-out"
 * also writes the result file as it goes (the command line's --out).
 *
 * With --softmax the kernel is kernels/softmax_f32.hlo enlarged to N f32
 * elements in rows of 256: not a loop kernel (a reduce-window, a reduce,
 * broadcasts back over the rows), one that splits into rows.
 *
 * Usage: bench_memory [--quick | --full | --log2 L] [--softmax] [--only ROW]
 *   default: every row at 2^22 (a few minutes)
 *   --quick: 2^16 and 2^18; --full: 2^20, 2^22 and 2^24; --log2 L: 2^L
 *   alone; --only ROW: that row alone
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ulpscope/check.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

#ifndef USC_KERNEL_DIR
#define USC_KERNEL_DIR "kernels"
#endif

typedef struct child_report {
	int ok;
	long floor_kb;
	long peak_kb;
	double seconds;
	char message[USC_ERROR_MESSAGE_SIZE];
} child_report;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss; /* kilobytes on Linux */
}

/*
 * The kernel: gelu_tanh_f32, or with --softmax softmax_f32 (rows of 256,
 * reduced and broadcast back: a kernel that splits into rows), enlarged
 * to N elements by rewriting its shapes.
 */
static int softmax;

/* Replaces every occurrence of from in text by to; text is freed. */
static char *replace(char *text, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to), count = 0;
	char *out, *p, *q;

	if (!text)
		return NULL;
	for (p = text; (p = strstr(p, from)); p += lf)
		count++;
	out = malloc(strlen(text) + count * lt + 1);
	if (!out) {
		free(text);
		return NULL;
	}
	for (q = out, p = text;;) {
		char *hit = strstr(p, from);

		if (!hit)
			break;
		memcpy(q, p, (size_t)(hit - p));
		q += hit - p;
		memcpy(q, to, lt);
		q += lt;
		p = hit + lf;
	}
	strcpy(q, p);
	free(text);
	return out;
}

static char *kernel_text(long n)
{
	char path[4096], to[64], *text;
	const char *dir = getenv("USC_KERNELS_DIR");
	size_t len;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s.hlo", dir ? dir : USC_KERNEL_DIR,
		 softmax ? "softmax_f32" : "gelu_tanh_f32");
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc(len + 1);
	if (!text || fread(text, 1, len, f) != len) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	text[len] = 0;
	if (!softmax) {
		/* Every shape of this kernel is f32[1024] or f32[]. */
		snprintf(to, sizeof to, "[%ld]", n);
		return replace(text, "[1024]", to);
	}
	/* f32[4,256], its row maxima and sums [4,8] and [4]: n / 256 rows. */
	snprintf(to, sizeof to, "[%ld,256]", n / 256);
	text = replace(text, "[4,256]", to);
	snprintf(to, sizeof to, "[%ld,8]", n / 256);
	text = replace(text, "[4,8]", to);
	snprintf(to, sizeof to, "[%ld]", n / 256);
	return replace(text, "[4]", to);
}

/* The bench's input: N values uniform in [-3, 3], rounded to f32. */
static int make_input(long n, usc_tensor **x, usc_error *err)
{
	int64_t dims[2] = {n, 256};
	uint64_t s = 88172645463325252u;

	if (softmax)
		dims[0] = n / 256;
	if (usc_tensor_create(USC_F32, softmax ? 2 : 1, dims, x, err))
		return -1;
	for (long i = 0; i < n; i++) {
		uint64_t bits;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		usc_encode_double(USC_F32, (double)(s >> 11) * 0x1p-53 * 6 - 3,
				  NULL, &bits, NULL);
		usc_tensor_set_bits(*x, (uint64_t)i, bits);
	}
	return 0;
}

/* The rows: the three domains, then the check path (check_rows). */
#define ROW_CHECK 3
#define NROWS 7

/* How each check row runs, from ROW_CHECK on. */
static const struct {
	int stream, classify, out;
} check_rows[NROWS - ROW_CHECK] = {
	{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}};

static char case_dir[256];

/*
 * The child of a check row, first pass (prepare): writes the kernel, the
 * input and the device output (the reference's) into case_dir.  Second
 * pass: runs usc_check_run on them.
 */
static void child_check(long n, int prepare, int row, child_report *rep)
{
	char path[512];
	usc_error err;

	if (prepare) {
		char *text = kernel_text(n);
		usc_eval *ev = NULL;
		usc_hlo_file *f = NULL;
		usc_tensor *x = NULL;
		const usc_tensor *y;
		FILE *fp;

		snprintf(path, sizeof path, "%s/kernel.hlo", case_dir);
		fp = text ? fopen(path, "w") : NULL;
		if (!fp) {
			snprintf(rep->message, sizeof rep->message,
				 "cannot write %s", path);
			free(text);
			return;
		}
		fputs(text, fp);
		fclose(fp);
		if (usc_hlo_parse(text, strlen(text), "gelu", &f, &err) ||
		    make_input(n, &x, &err) ||
		    usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
				    &err) ||
		    usc_eval_bind(ev, 0, x, &err) || usc_eval_run(ev, &err) ||
		    usc_eval_output(ev, 0, &y, &err))
			goto fail;
		snprintf(path, sizeof path, "%s/input_0.npy", case_dir);
		if (usc_tensor_write_npy(x, path, &err))
			goto fail;
		snprintf(path, sizeof path, "%s/device_0.npy", case_dir);
		if (usc_tensor_write_npy(y, path, &err))
			goto fail;
		free(text);
		rep->ok = 1;
		return;
	} else {
		usc_check_report *r = NULL;
		double t;

		usc_check_request base = usc_check_request_default();
		usc_profile prof;

		if (check_rows[row - ROW_CHECK].classify) {
			if (usc_profile_builtin("xla-cpu", &prof, &err))
				goto fail;
			base.profile = &prof;
		}
		base.stream = check_rows[row - ROW_CHECK].stream;
		snprintf(path, sizeof path, "%s/results.h5", case_dir);
		if (check_rows[row - ROW_CHECK].out)
			base.results_path = path;
		rep->floor_kb = maxrss_kb();
		t = now();
		if (usc_check_case(case_dir, &base, &r, &err))
			goto fail;
		rep->seconds = now() - t;
		rep->peak_kb = maxrss_kb();
		snprintf(rep->message, sizeof rep->message,
			 "tier decided %llu, oracle evaluated %llu",
			 (unsigned long long)r->outputs[0].tier_decided,
			 (unsigned long long)r->outputs[0].oracle_elements);
		usc_check_report_destroy(r);
		rep->ok = 1;
		return;
	}
fail:
	snprintf(rep->message, sizeof rep->message, "%s", err.message);
}

/* The child: evaluates once and reports its peaks. */
static void child(int row, long n, int prepare, child_report *rep)
{
	static const usc_eval_domain doms[3] = {
		USC_DOMAIN_REFERENCE, USC_DOMAIN_TIER, USC_DOMAIN_ORACLE};
	char *text;
	usc_eval_options o = usc_eval_options_default();
	const usc_tensor *out;
	usc_hlo_file *f;
	usc_tensor *x;
	usc_eval *ev;
	usc_error err;
	double t;

	if (row >= ROW_CHECK) {
		child_check(n, prepare, row, rep);
		return;
	}
	text = kernel_text(n);
	if (!text) {
		snprintf(rep->message, sizeof rep->message,
			 "cannot read the kernel");
		return;
	}
	if (usc_hlo_parse(text, strlen(text), "gelu", &f, &err) ||
	    make_input(n, &x, &err))
		goto fail;
	free(text);
	rep->floor_kb = maxrss_kb();
	o.domain = doms[row];
	o.oracle_precision = 128;
	t = now();
	if (usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err) ||
	    usc_eval_bind(ev, 0, x, &err) || usc_eval_run(ev, &err) ||
	    usc_eval_output(ev, 0, &out, &err))
		goto fail;
	rep->seconds = now() - t;
	rep->peak_kb = maxrss_kb();
	rep->ok = 1;
	return;
fail:
	snprintf(rep->message, sizeof rep->message, "%s", err.message);
}

static int measure(int row, long n, int prepare, child_report *rep)
{
	int fd[2], status;
	pid_t pid;
	ssize_t got;

	memset(rep, 0, sizeof *rep);
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_report r;

		memset(&r, 0, sizeof r);
		close(fd[0]);
		child(row, n, prepare, &r);
		if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
			_exit(2);
		_exit(0);
	}
	close(fd[1]);
	got = read(fd[0], rep, sizeof *rep);
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (got != (ssize_t)sizeof *rep) {
		snprintf(rep->message, sizeof rep->message,
			 "child died (status %d: killed for memory?)", status);
		rep->ok = 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[NROWS] = {
		"reference", "tier",	      "oracle",
		"check-whole", "check", "check-xla-cpu", "check-xla-cpu-out"};
	int lo = 22, hi = 22, only = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			lo = 16;
			hi = 18;
		} else if (!strcmp(argv[i], "--full")) {
			lo = 20;
			hi = 24;
		} else if (!strcmp(argv[i], "--softmax")) {
			softmax = 1;
		} else if (!strcmp(argv[i], "--log2") && i + 1 < argc) {
			lo = hi = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			i++;
			for (int k = 0; k < NROWS; k++)
				if (!strcmp(argv[i], names[k]))
					only = k;
			if (only < 0) {
				fprintf(stderr, "bench_memory: no row %s\n",
					argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr,
				"usage: bench_memory [--quick | --full | "
				"--log2 L] [--softmax] [--only reference|tier|oracle|"
				"check-whole|check|check-xla-cpu|"
				"check-xla-cpu-out]\n");
			return 2;
		}
	}
	snprintf(case_dir, sizeof case_dir, "/tmp/usc_bench_memory_%ld",
		 (long)getpid());
	printf("peak RSS of one evaluation of %s at N f32 elements "
	       "(a child per row)\n",
	       softmax ? "softmax_f32" : "gelu_tanh_f32");
	printf("goal: peak <= 2 x (inputs + outputs) + 64 MB\n\n");
	printf("%-17s %5s %10s %10s %10s %10s %10s %10s %6s %8s\n", "row",
	       "log2N", "in+out MB", "floor MB", "peak MB", "goal MB",
	       "peak/goal", "B/elem", "met", "run s");
	for (int row = 0; row < NROWS; row++) {
		if (only >= 0 && row != only)
			continue;
		for (int l = lo; l <= hi; l += 2) {
			long n = 1L << l;
			double io = 2.0 * 4.0 * (double)n, goal, peak;
			child_report r;

			if (row >= ROW_CHECK) {
				char cmd[400];

				if (mkdir(case_dir, 0700) != 0 ||
				    measure(row, n, 1, &r) != 0 || !r.ok) {
					printf("%-17s %5d failed to prepare: "
					       "%s\n",
					       names[row], l, r.message);
					snprintf(cmd, sizeof cmd,
						 "rm -rf '%s'", case_dir);
					if (system(cmd) != 0)
						return 1;
					continue;
				}
				measure(row, n, 0, &r);
				snprintf(cmd, sizeof cmd, "rm -rf '%s'",
					 case_dir);
				if (system(cmd) != 0)
					return 1;
			} else if (measure(row, n, 0, &r) != 0) {
				r.ok = 0;
			}
			if (!r.ok) {
				printf("%-17s %5d failed: %s\n", names[row], l,
				       r.message);
				continue;
			}
			peak = (double)r.peak_kb * 1024.0;
			goal = 2.0 * io + 64.0 * 1048576.0;
			printf("%-17s %5d %10.1f %10.1f %10.1f %10.1f %10.2f "
			       "%10.0f %6s %8.2f%s%s\n",
			       names[row], l, io / 1048576.0,
			       (double)r.floor_kb / 1024.0, peak / 1048576.0,
			       goal / 1048576.0, peak / goal,
			       (peak - (double)r.floor_kb * 1024.0) /
				       (double)n,
			       peak <= goal ? "yes" : "no", r.seconds,
			       r.message[0] ? "  " : "", r.message);
		}
	}
	printf("\nB/elem: (peak - floor) / N, the run's own bytes per "
	       "element\n");
	return 0;
}
