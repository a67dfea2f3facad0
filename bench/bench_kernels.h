/*
 * What the check and oracle benches share (bench_oracle, bench_check,
 * bench_envelope): the clocks, the five catalogue kernels and how they are
 * enlarged, their inputs, the median of the repetitions' ratios, and the
 * files a check reads.  Benches are not the library: these helpers exit on
 * any failure, naming the bench.
 */
#ifndef USC_BENCH_KERNELS_H
#define USC_BENCH_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

/* The bench's name in messages; each main sets it first. */
extern const char *bench_name;

/*
 * The calling thread's CPU time: what a one-thread bench times, since it
 * moves less than wall time when other jobs share the cores (it still
 * moves with their cache and memory traffic).
 */
double bench_now(void);

/* Monotonic wall time: what a run on several threads is timed in. */
double bench_wall(void);

/*
 * The process's CPU time, over all its threads: with bench_wall, how much
 * work a run on several threads did besides how long it took.
 */
double bench_process_cpu(void);

/*
 * The speed-up a run on n threads would have on n idle cores, estimated
 * from CPU times where the cores are shared (wall time then says little):
 * one1 the one-thread run's process CPU time, main the n-thread run's
 * calling thread's (which folds the pieces and computes some), all its
 * process CPU time.  On n cores the run takes at least all / n (all the
 * work, evenly spread) and at least main (the calling thread's own work);
 * the longer of the two is taken as its wall time.  It leaves
 * out waits and uneven pieces, so it is an upper bound of what the cores
 * would give.
 */
double bench_thread_estimate(double one1, double main, double all, size_t n);

/* Prints "BENCH: what: message" and exits 1. */
void bench_die(const char *what, const usc_error *err);

/*
 * A catalogue kernel and how to enlarge it: every occurrence of from[i] in
 * the text becomes "[R" followed by to[i], R the batch size.  rowlen is
 * the number of elements per unit of R in the (largest) output.
 */
typedef struct bench_kernel {
	const char *name;
	size_t nsub;
	const char *from[3];
	const char *to[3]; /* what follows "[R" in the replacement */
	long rowlen;
} bench_kernel;

/* gelu_tanh_f32, silu_bf16, swiglu_f16, softmax_f32, layer_norm_bf16. */
extern const bench_kernel bench_kernels[];
extern const size_t bench_kernel_count;

/* Whether a kernel is among the names given (all when there are none). */
bool bench_selected(const bench_kernel *k, const char *const *names,
		    int count);

/*
 * The kernel's text with batch size r (malloc'ed), read from
 * $USC_KERNELS_DIR, else the source tree's kernels/.
 */
char *bench_scaled_text(const bench_kernel *k, long r);

/* The kernel enlarged to about n elements of output (r = n / rowlen). */
char *bench_kernel_text(const bench_kernel *k, long n);

/* Parses a kernel's text. */
usc_hlo_file *bench_parse(const char *text, const char *name);

/*
 * The entry's inputs: uniform in [-3, 3] (normal-ish activations), rounded
 * to each parameter's type, from an xorshift stream of the seed.
 */
usc_tensor **bench_make_inputs(const usc_hlo_module *m, uint64_t seed);
void bench_free_inputs(usc_tensor **in, size_t n);

/* The seconds of one usc_eval_run of ev; dies on an error. */
double bench_time_eval(usc_eval *ev);

/* The most repetitions whose ratios are kept. */
#define BENCH_MAX_REPS 64

/* The median of n values (sorted in place); 0 for none. */
double bench_median(double *v, int n);

/*
 * The files of a check in a fresh temporary directory: the kernel, its
 * inputs as .npy, one device output, and the name a result file would
 * take (not created).
 */
typedef struct bench_files {
	char dir[64], hlo[256], dev[256], out[256];
	char inp[16][256];
	const char *inputs[16];
	const char *devices[1];
	size_t nin;
} bench_files;

void bench_files_write(bench_files *cf, const char *text, usc_tensor **in,
		       size_t nin, const usc_tensor *device);

/* Removes the files and the directory (the result file too). */
void bench_files_remove(bench_files *cf);

#endif /* USC_BENCH_KERNELS_H */
