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
 * Usage: bench_envelope [--quick] [--mpfr] [--env-only] [--check-only]
 *                       [--threads N]
 *                       [--n N] [--reps R] [KERNEL...]
 * --threads N (default 2; 0 or 1: none) also runs the check on N threads
 * right after the one-thread one and prints the speed-up of the two wall
 * times (issue 15: >= 1.8 at N = 2).
 * --env-only leaves the check out (its columns print 0), for profiling.
 * --check-only runs only the one-thread check, REPS times, printing its
 * best rate (for profiling the check's own costs).
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

#include "bench_kernels.h"

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
		bench_die("eval create", &err);
	if (mpfr)
		unsetenv("USC_ENVELOPE");
	for (size_t i = 0; i < m->entry->param_count; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			bench_die("bind", &err);
	return ev;
}

/* What one check reports that the bench prints. */
typedef struct check_stats {
	uint64_t env_fast, env_escalated;  /* the envelope's op elements */
	uint64_t ref_functions, ref_escalated; /* the reference's functions */
	uint64_t elements, tier_decided;   /* the rest went to the oracle */
	const char *verdict;
} check_stats;

/*
 * One classified, streamed check with its result file on `threads`
 * threads: the CPU time of the calling thread, in wall[0] its wall
 * time (with threads, the only one that counts them all) and in wall[1]
 * the process's CPU time.
 */
static double time_check(const bench_files *cf, size_t threads,
			 check_stats *cs, double wall[2])
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *rep;
	usc_error err;
	double t, w, pc;

	unlink(cf->out);
	req.hlo_path = cf->hlo;
	req.input_count = cf->nin;
	req.inputs = cf->inputs;
	req.device_count = 1;
	req.devices = cf->devices;
	req.profile = &xla_cpu;
	req.stream = true;
	req.results_path = cf->out;
	req.threads = threads;
	w = bench_wall();
	pc = bench_process_cpu();
	t = bench_now();
	if (usc_check_run(&req, &rep, &err) != USC_OK)
		bench_die("check", &err);
	t = bench_now() - t;
	wall[0] = bench_wall() - w;
	wall[1] = bench_process_cpu() - pc;
	if (cs) {
		memset(cs, 0, sizeof *cs);
		cs->env_fast = rep->envelope_fast;
		cs->env_escalated = rep->envelope_escalated;
		cs->ref_functions = rep->reference_functions;
		cs->ref_escalated = rep->reference_escalated;
		for (size_t i = 0; i < rep->output_count; i++) {
			cs->elements += rep->outputs[i].summary.count;
			cs->tier_decided += rep->outputs[i].tier_decided;
		}
		cs->verdict = usc_verdict_name(rep->verdict);
	}
	usc_check_report_destroy(rep);
	return t;
}

static double frac(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static int with_mpfr;
static int no_check; /* --env-only: no check column (for profiling) */
static int check_only; /* --check-only: the check alone (for profiling) */
static size_t threads = 2; /* the threaded check's; 0: none */

static void run_kernel(const bench_kernel *k, long n, int reps)
{
	long r = n / k->rowlen > 0 ? n / k->rowlen : 1;
	char *text = bench_scaled_text(k, r);
	usc_hlo_file *f = bench_parse(text, k->name);
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	size_t np = m->entry->param_count;
	usc_tensor **in = bench_make_inputs(m, 0x9e3779b97f4a7c15u);
	usc_eval *ev_64 = make_eval(m, USC_DOMAIN_F64, in, 0);
	usc_eval *ev_env = make_eval(m, USC_DOMAIN_ENVELOPE, in, 0);
	usc_eval *ev_mp = with_mpfr ? make_eval(m, USC_DOMAIN_ENVELOPE, in, 1)
				    : NULL;
	const usc_tensor *out64;
	double t_64 = 1e300, t_env = 1e300, t_mp = 1e300, t_chk = 1e300;
	double w_j = 1e300;
	double r_c64[BENCH_MAX_REPS], r_e64[BENCH_MAX_REPS], r_ec[BENCH_MAX_REPS];
	double r_me[BENCH_MAX_REPS], r_j[BENCH_MAX_REPS], r_w[BENCH_MAX_REPS];
	double r_est[BENCH_MAX_REPS];
	uint64_t elems;
	check_stats cs;
	bench_files cf;
	usc_error err;
	int nr = 0;

	memset(&cs, 0, sizeof cs);
	cs.verdict = "";
	(void)bench_time_eval(ev_64);
	if (usc_eval_output(ev_64, 0, &out64, &err) != USC_OK)
		bench_die("output", &err);
	elems = usc_tensor_count(out64);
	bench_files_write(&cf, text, in, np, out64);
	for (int i = 0; check_only && i < reps; i++) {
		double w1[2] = {0, 0};

		t_chk = fmin(t_chk, time_check(&cf, 1, &cs, w1));
	}
	for (int i = 0; !check_only && i < reps && i < BENCH_MAX_REPS; i++) {
		double a = bench_time_eval(ev_64), b = bench_time_eval(ev_env), c = 0, d = 0;
		double w1[2] = {0, 0}, wj[2] = {0, 0}, tj = 0;

		if (!no_check)
			c = time_check(&cf, 1, &cs, w1);
		/* The same check on threads, right after: their wall times. */
		if (!no_check && threads > 1)
			tj = time_check(&cf, threads, NULL, wj);
		if (ev_mp)
			d = bench_time_eval(ev_mp);
		t_64 = fmin(t_64, a);
		t_env = fmin(t_env, b);
		if (!no_check)
			t_chk = fmin(t_chk, c);
		if (wj[0] > 0)
			w_j = fmin(w_j, wj[0]);
		if (ev_mp)
			t_mp = fmin(t_mp, d);
		r_c64[i] = c / a;
		r_ec[i] = no_check ? 0 : b / c;
		r_e64[i] = b / a;
		r_me[i] = ev_mp ? d / b : 0;
		r_j[i] = wj[0] > 0 ? w1[0] / wj[0] : 0;
		r_w[i] = wj[0] > 0 ? wj[1] / w1[1] : 0;
		r_est[i] = wj[0] > 0 ? bench_thread_estimate(w1[1], tj, wj[1],
							     threads)
				     : 0;
		nr = i + 1;
	}
#define RATE(t) ((t) > 0 && (t) < 1e300 ? (double)elems / (t) : 0.0)
	printf("%-16s %9llu %11.0f %11.0f %11.0f %11.0f %11.0f %9.1f %9.2f "
	       "%9.2f %9.1f %7.2f %6.2f %6.2f %9.2e %9.2e %9.2e  %s\n",
	       k->name, (unsigned long long)elems, RATE(t_64), RATE(t_env),
	       RATE(t_mp), RATE(t_chk), RATE(w_j), bench_median(r_c64, nr),
	       bench_median(r_e64, nr), bench_median(r_ec, nr),
	       bench_median(r_me, nr), bench_median(r_j, nr),
	       bench_median(r_w, nr), bench_median(r_est, nr),
	       frac(cs.env_escalated, cs.env_fast + cs.env_escalated),
	       frac(cs.ref_escalated, cs.ref_functions),
	       frac(cs.elements - cs.tier_decided, cs.elements), cs.verdict);
#undef RATE
	fflush(stdout);
	bench_files_remove(&cf);
	usc_eval_destroy(ev_64);
	usc_eval_destroy(ev_env);
	usc_eval_destroy(ev_mp);
	bench_free_inputs(in, np);
	usc_hlo_file_destroy(f);
	free(text);
}

int main(int argc, char **argv)
{
	long n = 1L << 20;
	int reps = 3, nsel = 0;
	const char *sel[16];

	bench_name = "bench_envelope";
	usc_error err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			n = 1L << 11;
			reps = 1;
		} else if (!strcmp(argv[i], "--env-only")) {
			no_check = 1;
		} else if (!strcmp(argv[i], "--check-only")) {
			check_only = 1;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			threads = (size_t)atol(argv[++i]);
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
		bench_die("profile", &err);
	printf("classified check vs plain f64, ~%ld elements per kernel, "
	       "thread CPU time; rates: best of %d, ratios: median of the "
	       "repetitions' ratios (elements/s; ratios are what count)\n",
	       n, reps);
	printf("f64: USC_DOMAIN_F64; env: USC_DOMAIN_ENVELOPE under xla-cpu "
	       "(fast path); mpfr: the same with USC_ENVELOPE=mpfr (--mpfr);\n"
	       "check: usc_check_run --profile xla-cpu, streamed, with its "
	       "result file\n\n");
	printf("%-16s %9s %11s %11s %11s %11s %11s %9s %9s %9s %9s %7s %6s "
	       "%6s %9s %9s %9s  %s\n",
	       "kernel", "elements", "f64/s", "env/s", "mpfr/s", "check/s",
	       "chk-jN/s", "chk/f64", "env/f64", "env/chk", "mpfr/env",
	       "j1/jN", "cpu", "est", "env-esc", "ref-esc", "oracle", "verdict");
	for (size_t i = 0; i < bench_kernel_count; i++)
		if (bench_selected(&bench_kernels[i], sel, nsel))
			run_kernel(&bench_kernels[i], n, reps);
	printf("\nchk/f64:   the classified check against plain f64 "
	       "(issue 15 goal <= 5)\n");
	printf("env/f64:   the envelope alone against plain f64\n");
	printf("env/chk:   the envelope's share of the check's time (the "
	       "rest: reference, tier, classes, result file)\n");
	printf("mpfr/env:  the fast path's speed-up over the MPFR envelope\n");
	printf("chk-jN/s:  the same check on --threads N threads (2), wall "
	       "time\n");
	printf("j1/jN:     its speed-up: the one-thread check's wall time "
	       "over the N-thread one's, run back to back (goal >= 1.8 at "
	       "N = 2)\n");
	printf("cpu:       the N-thread check's process CPU time over the "
	       "one-thread one's (the work threads add)\n");
	printf("est:       the speed-up N idle cores would give, from CPU "
	       "times (bench_kernels.h: an estimate, not a measurement)\n");
	printf("env-esc:   fraction of the envelope's elementwise op "
	       "elements that went to MPFR in the check\n");
	printf("ref-esc:   fraction of the strict reference's function "
	       "evaluations that went to MPFR\n");
	printf("oracle:    fraction of the elements the tier left to the "
	       "MPFR oracle\n");
	return 0;
}
