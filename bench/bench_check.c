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
 * Usage: bench_check [--quick] [--no-mpfr] [--check-only] [--threads N]
 *                    [--n N] [--reps R]
 *                    [KERNEL...]
 *   --threads N (default 2; 0 or 1: none): also the check on N threads,
 *   right after the one-thread one, and the speed-up of their wall times;
 *   --quick: 2^12 elements, one repetition; --no-mpfr: skip the two MPFR
 *   columns (their ratios print 0); --check-only: the one-thread check
 *   alone, for a profiler (the ratios print 0).  The kernels directory is
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

#include "bench_kernels.h"

static usc_eval *make_eval(const usc_hlo_module *m, usc_eval_domain d,
			   bool mpfr, usc_tensor **in)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;

	o.domain = d;
	o.reference_mpfr = mpfr;
	if (usc_eval_create(m, &o, &ev, &err) != USC_OK)
		bench_die("eval create", &err);
	for (size_t i = 0; i < m->entry->param_count; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			bench_die("bind", &err);
	return ev;
}

/* ---------------------------------------------------------- the check */

/*
 * One unclassified, streamed check (the command line's way) on `threads`
 * threads: the CPU time of the calling thread, its wall time in wall[0]
 * (with threads, the only one that counts them all) and the process's
 * CPU time in wall[1], and the reference's
 * counts of functions and escalations.
 */
static double time_check(const bench_files *cf, bool mpfr, size_t threads,
			 uint64_t *fns, uint64_t *esc, double wall[2])
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *rep;
	usc_error err;
	double t, w, pc;

	req.hlo_path = cf->hlo;
	req.input_count = cf->nin;
	req.inputs = cf->inputs;
	req.device_count = 1;
	req.devices = cf->devices;
	req.stream = true;
	req.threads = threads;
	if (mpfr)
		setenv("USC_REFERENCE_MPFR", "1", 1);
	w = bench_wall();
	pc = bench_process_cpu();
	t = bench_now();
	if (usc_check_run(&req, &rep, &err) != USC_OK)
		bench_die("check", &err);
	t = bench_now() - t;
	if (wall) {
		wall[0] = bench_wall() - w;
		wall[1] = bench_process_cpu() - pc;
	}
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
/*
 * --check-only: the one-thread check alone, every repetition, for a
 * profiler (perf record) to see nothing else; it prints the check's rate.
 */
static int check_only;
static size_t threads = 2; /* the threaded check's; 0: none */

static void run_kernel(const bench_kernel *k, long n, int reps)
{
	long r = n / k->rowlen > 0 ? n / k->rowlen : 1;
	char *text = bench_scaled_text(k, r);
	usc_hlo_file *f;
	usc_hlo_module *m;
	usc_tensor **in;
	usc_eval *ev_64, *ev_t, *ev_r, *ev_rm;
	const usc_tensor *out_r;
	bench_files cf;
	double b_64 = 1e300, b_t = 1e300, b_r = 1e300, b_rm = 1e300;
	double b_c = 1e300, b_cm = 1e300, b_j = 1e300;
	double q_c[BENCH_MAX_REPS], q_t[BENCH_MAX_REPS], q_r[BENCH_MAX_REPS];
	double q_rm[BENCH_MAX_REPS], q_cm[BENCH_MAX_REPS], q_j[BENCH_MAX_REPS];
	double q_w[BENCH_MAX_REPS], q_e[BENCH_MAX_REPS];
	uint64_t elems, fns = 0, esc = 0;
	usc_error err;
	int nr = 0;

	if (usc_hlo_parse(text, strlen(text), k->name, &f, &err) != USC_OK)
		bench_die("parse", &err);
	m = usc_hlo_file_module(f, 0);
	in = bench_make_inputs(m, 0x9e3779b97f4a7c15u);
	ev_64 = make_eval(m, USC_DOMAIN_F64, false, in);
	ev_t = make_eval(m, USC_DOMAIN_TIER, false, in);
	ev_r = make_eval(m, USC_DOMAIN_REFERENCE, false, in);
	ev_rm = make_eval(m, USC_DOMAIN_REFERENCE, true, in);
	bench_time_eval(ev_r);
	usc_eval_output(ev_r, 0, &out_r, &err);
	elems = usc_tensor_count(out_r);
	bench_files_write(&cf, text, in, m->entry->param_count, out_r);
	for (int i = 0; check_only && i < reps && i < BENCH_MAX_REPS; i++)
		b_c = fmin(b_c, time_check(&cf, false, 1, &fns, &esc, NULL));
	for (int i = 0; !check_only && i < reps && i < BENCH_MAX_REPS; i++) {
		double t64 = bench_time_eval(ev_64), tt = bench_time_eval(ev_t);
		double tr = bench_time_eval(ev_r), trm = 0, tc, tcm = 0;
		double w1[2], wj[2] = {0, 0}, tj = 0;

		tc = time_check(&cf, false, 1, &fns, &esc, w1);
		/* The same check on threads, right after: their wall times. */
		if (threads > 1) {
			tj = time_check(&cf, false, threads, NULL, NULL, wj);
			b_j = fmin(b_j, wj[0]);
		}
		q_e[i] = wj[0] > 0 ? bench_thread_estimate(w1[1], tj, wj[1],
							   threads)
				   : 0;
		q_j[i] = wj[0] > 0 ? w1[0] / wj[0] : 0;
		q_w[i] = wj[0] > 0 ? wj[1] / w1[1] : 0;
		if (!no_mpfr) {
			trm = bench_time_eval(ev_rm);
			tcm = time_check(&cf, true, 1, NULL, NULL, NULL);
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
	printf("%-16s %8llu %9.3g %9.3g %9.3g %9.3g %9.3g %9.3g %9.3g %8.2f "
	       "%8.2f %8.2f %8.1f %8.1f %6.2f %6.2f %6.2f %9.2e\n",
	       k->name, (unsigned long long)elems, RATE(b_64), RATE(b_t),
	       RATE(b_r), RATE(b_rm), RATE(b_c), RATE(b_cm), RATE(b_j),
	       bench_median(q_c, nr), bench_median(q_t, nr),
	       bench_median(q_r, nr), bench_median(q_rm, nr),
	       bench_median(q_cm, nr), bench_median(q_j, nr),
	       bench_median(q_w, nr), bench_median(q_e, nr), fns ? (double)esc / (double)fns : 0.0);
#undef RATE
	fflush(stdout);
	bench_files_remove(&cf);
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

	bench_name = "bench_check";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			n = 1L << 12;
			reps = 1;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			threads = (size_t)atol(argv[++i]);
		} else if (!strcmp(argv[i], "--check-only")) {
			check_only = 1;
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
	printf("%-16s %8s %9s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s "
	       "%6s %6s %6s %9s\n",
	       "kernel", "elements", "f64/s", "tier/s", "ref/s", "refmpfr/s",
	       "check/s", "chkmpfr/s", "chk-jN/s", "chk/f64", "tier/f64",
	       "ref/f64", "mpfr/ref", "mpfr/chk", "j1/jN", "cpu",
	       "est", "escalated");
	for (size_t i = 0; i < bench_kernel_count; i++)
		if (bench_selected(&bench_kernels[i], sel, nsel))
			run_kernel(&bench_kernels[i], n, reps);
	printf("\nchk/f64:  unclassified check (streamed, no profile) over "
	       "plain f64 evaluation (issue 15 goal <= 3)\n");
	printf("tier/f64, ref/f64: the certified tier and the fast "
	       "reference over plain f64\n");
	printf("mpfr/ref, mpfr/chk: the MPFR reference over the fast one, "
	       "alone and inside the check (speed-ups)\n");
	printf("chk-jN/s, j1/jN: the same check on --threads N threads (2), "
	       "wall time, and its speed-up over one thread, run back to back "
	       "(goal >= 1.8 at N = 2)\n");
	printf("cpu: the N-thread check's process CPU time over the "
	       "one-thread one's (the work threads add)\n");
	printf("est: the speed-up N idle cores would give, from CPU times "
	       "(bench_kernels.h: an estimate, not a measurement)\n");
	printf("escalated: the reference's function evaluations sent to "
	       "MPFR, over all of them\n");
	return 0;
}
