/*
 * ulpscope: checking many cases at once (what "ulpscope batch" and
 * "ulpscope merge" do; docs/batch.md).
 *
 * A batch finds every case directory (docs/cases.md) under its roots, in
 * a deterministic order, and checks them in N worker processes, each fed
 * one case after another: a crash, a runaway allocation or a timeout of
 * one case ends its worker alone, is recorded as that case's status, and
 * the batch goes on with a fresh worker.  Each finished
 * case is durable before it counts as done: its result file and a small
 * row file are written to temporary names, flushed to disk and renamed
 * into the batch's work directory (RESULTS.h5.d/ beside the index).  A
 * batch run again with the same options skips the cases already done, so
 * a batch killed at any moment resumes where it stopped, and its index
 * (RESULTS.h5: one /batch row per case, external links to the cases'
 * kernels) is the same as an uninterrupted run's.
 */
#ifndef ULPSCOPE_BATCH_H
#define ULPSCOPE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What became of a case, as X(ENUM, name). */
#define USC_BATCH_STATUS_LIST(X)                                          \
	X(OK, "ok")                         /* checked; see the verdict */ \
	X(ERROR, "error")                   /* a bad input, named */       \
	X(TIMEOUT, "timeout")               /* past the case timeout */    \
	X(OUT_OF_MEMORY, "out-of-memory")   /* past the memory limit */    \
	X(CRASHED, "crashed")               /* killed by a signal */

typedef enum usc_batch_status {
#define USC_X_(e, name) USC_BATCH_##e,
	USC_BATCH_STATUS_LIST(USC_X_)
#undef USC_X_
	USC_BATCH_STATUS_COUNT
} usc_batch_status;

const char *usc_batch_status_name(usc_batch_status s);

/*
 * One case's row of the /batch table.  Strings are owned by the row;
 * figures are NaN (and counts 0) where the case did not run to the end.
 */
typedef struct usc_batch_row {
	/* Position in discovery order, over all shards. */
	uint64_t index;
	char *path;        /* the case directory, as discovered */
	char *kernel;      /* the kernel's name (module, or module_fusion) */
	char *hlo_hash;    /* 16 hex digits: FNV-1a of kernel.hlo's bytes */
	usc_batch_status status;
	/* "legit", "suspicious", "defect", "undecided"; "" unclassified */
	char *verdict;
	char *profile;     /* the profile classified under; "" none */
	uint64_t elements; /* output elements, all outputs */
	uint64_t counts[USC_CLASS_COUNT];
	double max_ulp_reference; /* worst |ulp| against the reference */
	double max_ulp_oracle;    /* worst |ulp| against the oracle */
	/* With attribution: the op with the largest share of the error. */
	char *culprit;
	double culprit_share;
	double seconds;    /* wall time of the case's check */
	char *message;     /* the error, or the verdict's reason */
	/* The case's result file, relative to the index's directory; "" */
	char *result;
	char *link;        /* its name under /kernels in the index; "" */
} usc_batch_row;

void usc_batch_row_clear(usc_batch_row *r);

/* What the batch's caller sees while it runs (progress). */
typedef struct usc_batch_progress {
	size_t total;      /* cases of this run (this shard) */
	size_t done;       /* finished, this run and before */
	size_t resumed;    /* of done: found finished when the run began */
	size_t running;
	size_t defects, suspicious, failed;
	double elapsed;    /* seconds since the run began */
} usc_batch_progress;

typedef void (*usc_batch_progress_fn)(const usc_batch_progress *p,
				      void *data);

typedef struct usc_batch_options {
	size_t root_count;
	/* Directories searched for cases, case directories, or list files
	 * (one case path a line; '#' starts a comment). */
	const char *const *roots;
	const char *out;        /* the index, RESULTS.h5 */
	size_t jobs;            /* parallel cases; 0: the online cores */
	/* A profile name or file for every case (NULL: each case's own,
	 * from its case.json, as "ulpscope check" takes it). */
	const char *profile;
	bool no_profile;
	bool attribute;         /* attribute each case (slower) */
	double case_timeout;    /* seconds; 0: none */
	uint64_t case_memory_mb; /* address-space limit; 0: none */
	/* Cases one worker process checks before a fresh one replaces it
	 * (1: a process per case); 0: the default, 64. */
	size_t cases_per_worker;
	/* This run checks cases i with i % shard_count == shard_index. */
	size_t shard_index, shard_count; /* 0, 1: everything */
	/* Discard what an earlier run left, and start again. */
	bool restart;
	/* Check again the cases an earlier run recorded as failed. */
	bool retry_failed;
	/* Replace an existing file at out that is not an index. */
	bool force;
	usc_batch_progress_fn progress;
	void *progress_data;
	double progress_interval; /* seconds between calls; 0: 1 */
} usc_batch_options;

usc_batch_options usc_batch_options_default(void);

/* The outcome of a batch: every row, in discovery order. */
typedef struct usc_batch_result {
	size_t row_count;
	usc_batch_row *rows;
	size_t resumed;    /* rows found done when the run began */
	size_t shard_index, shard_count;
	size_t case_total; /* cases discovered, over all shards */
	double seconds;
	/*
	 * Under mpirun (docs/batch.md, "MPI"): this process's rank and the
	 * rank count.  Only rank 0's result holds the rows; the others'
	 * have none.  0 and 1 otherwise.
	 */
	int rank, ranks;
} usc_batch_result;

/*
 * Runs the batch.  Errors that stop it (no case found, an unwritable
 * out, a work directory in use by another batch or made with other
 * options) come back as a status; a case that fails is a row.
 */
usc_status usc_batch_run(const usc_batch_options *o, usc_batch_result **out,
			 usc_error *err);

/*
 * Reads the /batch table of an index (a batch's or a merge's RESULTS.h5)
 * with its shard attributes.
 */
usc_status usc_batch_read(const char *path, usc_batch_result **out,
			  usc_error *err);

/*
 * Merges the indexes of the shards of one batch (--shard K/N) into one
 * index at out: the same rows and links as one unsharded run.  Refuses
 * shards of different batches (another case count or options), a shard
 * given twice, and a case in two shards; with allow_partial false, also
 * a missing shard.
 */
usc_status usc_batch_merge(const char *const *shards, size_t count,
			   const char *out, bool allow_partial, bool force,
			   usc_batch_result **result, usc_error *err);

void usc_batch_result_destroy(usc_batch_result *r);

/*
 * The kernels of a batch, one entry per HLO text (hash), worst first:
 * kernels with a defect run, then a suspicious one, then a run that
 * failed, then an undecided one, then the rest; within each, by the
 * worst |ulp| against the oracle over their runs.
 */
typedef struct usc_batch_kernel_rank {
	const char *hlo_hash; /* borrowed from the rows */
	const char *kernel;
	size_t runs, defects, suspicious, undecided, failed;
	double max_ulp_reference, max_ulp_oracle; /* NaN: none */
	double seconds;       /* summed over the runs */
	size_t worst_row;     /* the row of the worst run */
} usc_batch_kernel_rank;

/*
 * The ops that were the top culprit of some case (attributed batches
 * only), by how many cases, then by their summed share.
 */
typedef struct usc_batch_op_rank {
	const char *kernel;   /* borrowed */
	const char *hlo_hash;
	const char *op;
	size_t cases;
	double share_sum;
} usc_batch_op_rank;

usc_status usc_batch_rank(const usc_batch_result *b,
			  usc_batch_kernel_rank **kernels, size_t *kernel_count,
			  usc_batch_op_rank **ops, size_t *op_count,
			  usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_BATCH_H */
