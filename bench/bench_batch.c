/*
 * The speed of ulpscope batch (docs/batch.md; docs/performance.md,
 * "Batch"): cases per second with one and two workers, and the batch's
 * overhead per case against checking the same cases in one process.
 *
 * Baseline: usc_check_case on every case, one after the other, in this
 * process, each streamed and writing its result file to a fresh path as
 * a batch worker does.  Then usc_batch_run over the same root with -j 1
 * and -j 2, each into a work directory of its own.  Every run's files are
 * kept until the bench ends (about 30 MB a run over the acceptance
 * corpus), so that no run pays for another's deletions (see run_path()).
 * The figures are ratios of wall times
 * measured in this run, back to back, repeated --reps times (the median
 * of each ratio is printed), because the machines they run on are shared.
 *
 *   overhead = batch -j1 / in-process   (goal: at most 1.2)
 *   speedup  = batch -j1 / batch -j2    (goal: at least 1.8 on two cores)
 *   fresh    = batch -j1 --cases-per-worker 1 / in-process
 *              (a process per case, as before workers were kept)
 *
 * With --mpi MPIEXEC, also the command line under two MPI ranks of one
 * worker each against the command line with -j 2, both as processes:
 *
 *   mpi      = mpirun -np 2 ulpscope batch -j1 / ulpscope batch -j2
 *                                        (goal: at most 1.2)
 *
 * and the same less the wall time of a batch of the first case alone
 * under the same mpirun (the launcher, MPI's start-up and finalization:
 * a fixed cost that a corpus of two seconds does not amortize).
 *
 * Wall-time ratios mean little on a loaded machine, so the bench also
 * prints CPU-time ratios (user + system time of the batch, its threads
 * and its workers), which hold under load, and the load average when it
 * starts and ends:
 *
 *   cpu overhead = CPU time of batch -j1 / of in-process
 *   cpu j2       = CPU time of batch -j2 / of batch -j1  (1: the second
 *                  worker's core does the first's work, nothing more)
 *
 * Usage: bench_batch [--root DIR] [--reps R] [--quick] [--mpi MPIEXEC]
 *   default root: data/acceptance (408 cases); --quick: data/examples
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ulpscope/batch.h"
#include "ulpscope/check.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"

#ifndef USC_CLI_PATH
#define USC_CLI_PATH "ulpscope"
#endif
#ifndef USC_SOURCE_DIR
#define USC_SOURCE_DIR "."
#endif

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds of this process and its waited-for children so far. */
static double cpu(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec +
			c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
	       1e-6 * (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec +
			       c.ru_utime.tv_usec + c.ru_stime.tv_usec);
}

/* The load average over the last minute, or -1 when unknown. */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Whether a batch command ran to its end: exit 0, or a verdict's status
 * (3 suspicious, 4 defect, 5 undecided, 6 cases that failed; the
 * acceptance corpus has suspicious cases), not 1 or 2.
 */
static bool batch_ran(int status)
{
	int rc;

	if (status == -1 || !WIFEXITED(status))
		return false;
	rc = WEXITSTATUS(status);
	return rc == 0 || (rc >= 3 && rc <= 6);
}

/*
 * One batch from nothing, per cases a worker (0: the default); its wall
 * time, or a negative on failure.
 */
static double batch(const char *root, const char *out, size_t jobs,
		    size_t per_worker, usc_batch_result **keep)
{
	usc_batch_options o = usc_batch_options_default();
	usc_batch_result *r = NULL;
	usc_error err;
	double t0;

	o.roots = &root;
	o.root_count = 1;
	o.out = out;
	o.jobs = jobs;
	o.cases_per_worker = per_worker;
	o.restart = true;
	t0 = now();
	if (usc_batch_run(&o, &r, &err) != USC_OK) {
		fprintf(stderr, "bench_batch: %s\n", err.message);
		return -1;
	}
	t0 = now() - t0;
	if (keep)
		*keep = r;
	else
		usc_batch_result_destroy(r);
	return t0;
}

/*
 * A fresh path under dir for each run, kept until the end: nothing is
 * removed while runs are timed.  (On a file system without a journal,
 * ext4 passes over every recently deleted inode when it creates a file,
 * so a run that follows a deletion of thousands of files, or removes its
 * own as it goes, pays for it in every file it creates.)
 */
static const char *run_path(const char *dir, const char *name, int rep)
{
	static char path[16][256];
	static int next;
	char *p = path[next++ % 16];

	snprintf(p, sizeof path[0], "%s/%s-%d", dir, name, rep);
	return p;
}

/* Every case checked in this process, as a worker checks it. */
static double in_process(const usc_batch_result *cases, const char *dir)
{
	double t0;
	char path[4096];

	if (mkdir(dir, 0777) != 0)
		return -1;
	t0 = now();

	for (size_t i = 0; i < cases->row_count; i++) {
		usc_check_request req = usc_check_request_default();
		usc_check_report *r = NULL;
		usc_error err;

		snprintf(path, sizeof path, "%s/case%zu.h5", dir, i);
		req.stream = true;
		req.results_path = path;
		if (usc_check_case(cases->rows[i].path, &req, &r, &err) !=
		    USC_OK)
			fprintf(stderr, "bench_batch: %s\n", err.message);
		usc_check_report_destroy(r);
	}
	return now() - t0;
}

/*
 * Every case's kernel.hlo parsed and verified, as a check starts: what
 * sharing one parsed kernel between the cases of a kernel could save.
 */
static double parse_all(const usc_batch_result *cases)
{
	double t0 = now();
	char path[4096];

	for (size_t i = 0; i < cases->row_count; i++) {
		usc_hlo_file *f = NULL;
		usc_error err;

		snprintf(path, sizeof path, "%s/kernel.hlo",
			 cases->rows[i].path);
		if (usc_hlo_parse_file(path, &f, &err) == USC_OK &&
		    usc_hlo_file_module_count(f) == 1)
			(void)usc_hlo_verify(usc_hlo_file_module(f, 0), &err);
		usc_hlo_file_destroy(f);
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *root = USC_SOURCE_DIR "/data/acceptance", *mpiexec = NULL;
	double mpi[16], mpi_net[16];
	char dir[] = "/tmp/usc-bench-batch-XXXXXX", out1[256];
	usc_batch_result *cases = NULL;
	double over[16], speed[16], fresh[16], parse[16], t0, t1, t2, t3;
	double cover[16], cfresh[16], cj2[16], c0, c1, c2, c3;
	int reps = 3;
	char cmd[512];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
			root = argv[++i];
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--mpi") == 0 && i + 1 < argc)
			mpiexec = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			root = USC_SOURCE_DIR "/data/examples";
		else {
			fprintf(stderr, "usage: bench_batch [--root DIR] "
					"[--reps R] [--quick] [--mpi MPIEXEC]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > 16 || !mkdtemp(dir))
		return 2;
	snprintf(out1, sizeof out1, "%s/j1.h5", dir);
	/* A first run: the case list, and warm file caches for everyone. */
	if (batch(root, out1, 2, 0, &cases) < 0)
		return 1;
	printf("bench_batch: %zu cases under %s, %d repetitions, load "
	       "average %.2f at the start (on %ld cores; above ~1 the wall "
	       "ratios are unreliable)\n",
	       cases->row_count, root, reps, load_average(),
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("%4s %12s %12s %12s %12s %9s %9s %9s\n", "rep",
	       "in-process s", "batch -j1 s", "batch -j2 s", "-j1 fresh s",
	       "overhead", "speedup", "fresh");
	for (int k = 0; k < reps; k++) {
		c0 = cpu();
		t0 = in_process(cases, run_path(dir, "in-process", k));
		c0 = cpu() - c0;
		c1 = cpu();
		t1 = batch(root, run_path(dir, "j1.h5", k), 1, 0, NULL);
		c1 = cpu() - c1;
		c2 = cpu();
		t2 = batch(root, run_path(dir, "j2.h5", k), 2, 0, NULL);
		c2 = cpu() - c2;
		c3 = cpu();
		t3 = batch(root, run_path(dir, "fresh.h5", k), 1, 1, NULL);
		c3 = cpu() - c3;
		if (t0 < 0 || t1 < 0 || t2 < 0 || t3 < 0)
			return 1;
		over[k] = t1 / t0;
		speed[k] = t1 / t2;
		fresh[k] = t3 / t0;
		parse[k] = parse_all(cases) / t0;
		cover[k] = c1 / c0;
		cfresh[k] = c3 / c0;
		cj2[k] = c2 / c1;
		printf("%4d %12.2f %12.2f %12.2f %12.2f %9.3f %9.3f %9.3f\n",
		       k, t0, t1, t2, t3, over[k], speed[k], fresh[k]);
	}
	printf("median overhead (batch -j1 / in-process): %.3f (goal <= 1.2)\n",
	       median(over, reps));
	printf("median overhead, a process per case "
	       "(--cases-per-worker 1): %.3f\n",
	       median(fresh, reps));
	printf("median CPU-time overhead (batch -j1 / in-process, user+sys "
	       "with the workers): %.3f; a process per case: %.3f\n",
	       median(cover, reps), median(cfresh, reps));
	printf("median parse share (every kernel.hlo parsed and verified / "
	       "in-process): %.4f\n",
	       median(parse, reps));
	printf("median speedup (batch -j1 / batch -j2):   %.3f (goal >= 1.8)\n",
	       median(speed, reps));
	printf("median CPU time of batch -j2 / of batch -j1: %.3f (1: two "
	       "workers spend what one does)\n",
	       median(cj2, reps));
	/*
	 * The corpus's batch exits 5 (undecided cases, docs/batch.md, "Exit
	 * status"), which batch_ran takes as a finished run; -q keeps
	 * mpirun from calling a rank's non-zero exit an abort on stderr, and
	 * odls_base_sigkill_timeout 0 from then spending two seconds (one
	 * after SIGCONT, one after SIGTERM) on signalling ranks that have
	 * already exited: a launcher's cost, not the batch's, and as long
	 * as the whole batch on this corpus.
	 */
	for (int k = 0; mpiexec && k < reps; k++) {
		double a, b, l;

		snprintf(cmd, sizeof cmd,
			 "%s -q --allow-run-as-root --oversubscribe "
			 "--mca odls_base_sigkill_timeout 0 -np 2 "
			 "-x OMPI_MCA_mpi_warn_on_fork=0 %s batch '%s' --out "
			 "'%s' -j1 --restart --quiet --top 0 >/dev/null",
			 mpiexec, USC_CLI_PATH, root,
			 run_path(dir, "mpi.h5", k));
		a = now();
		if (!batch_ran(system(cmd)))
			return 1;
		a = now() - a;
		snprintf(cmd, sizeof cmd,
			 "%s batch '%s' --out '%s' -j2 --restart --quiet "
			 "--top 0 >/dev/null",
			 USC_CLI_PATH, root, run_path(dir, "mpi-j2.h5", k));
		b = now();
		if (!batch_ran(system(cmd)))
			return 1;
		b = now() - b;
		/*
		 * The fixed cost of the same launch: the launcher, MPI's
		 * start-up and finalization, the work directory and the
		 * index, on a batch of the corpus's first case alone.
		 */
		snprintf(cmd, sizeof cmd,
			 "%s -q --allow-run-as-root --oversubscribe "
			 "--mca odls_base_sigkill_timeout 0 -np 2 "
			 "-x OMPI_MCA_mpi_warn_on_fork=0 %s batch '%s' --out "
			 "'%s' -j1 --restart --quiet --top 0 >/dev/null",
			 mpiexec, USC_CLI_PATH, cases->rows[0].path,
			 run_path(dir, "mpi-one.h5", k));
		l = now();
		if (!batch_ran(system(cmd)))
			return 1;
		l = now() - l;
		mpi[k] = a / b;
		mpi_net[k] = (a - l) / b;
		printf("mpi rep %d: mpirun -np 2 -j1 %.2f s, -j2 %.2f s, "
		       "ratio %.3f; one case under mpirun %.2f s, ratio "
		       "without it %.3f\n",
		       k, a, b, mpi[k], l, mpi_net[k]);
	}
	if (mpiexec) {
		printf("median mpi ratio (2 ranks / -j2):          %.3f (goal "
		       "<= 1.2)\n",
		       median(mpi, reps));
		printf("median mpi ratio less the fixed cost of a launch (a "
		       "batch of one case under mpirun): %.3f\n",
		       median(mpi_net, reps));
	}
	printf("cases/s: in-process %.2f, -j1 %.2f, -j2 %.2f (last rep)\n",
	       (double)cases->row_count / t0, (double)cases->row_count / t1,
	       (double)cases->row_count / t2);
	printf("load average at the end: %.2f\n", load_average());
	usc_batch_result_destroy(cases);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) != 0;
}
