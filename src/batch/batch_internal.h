/*
 * Inside a batch (include/ulpscope/batch.h, docs/batch.md).
 *
 * discover.c finds the cases and gives each a stable id; row.c writes and
 * reads a finished case's row as text; journal.c appends rows to the
 * run's journal, which is what makes a case durable, and reads them back;
 * pool.c runs cases in child processes with
 * their limits and reaps them; case_run.c is what a child does: one
 * "ulpscope check" of its case, through usc_check_case, and its row;
 * batch.c ties them together (the work directory, resuming, the index);
 * rank.c orders the kernels for the report.  Only src/store writes HDF5.
 */
#ifndef USC_BATCH_INTERNAL_H
#define USC_BATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/batch.h"

/* A case found by discovery. */
typedef struct usc__batch_case {
	char *path;  /* as found: ROOT/sub/dir, or a list file's line */
	char *link;  /* its name under /kernels in the index */
	char id[17]; /* 16 hex digits: FNV-1a of its real path */
	uint64_t bytes; /* the case's files, for biggest-first */
	size_t index;   /* discovery order */
} usc__batch_case;

/*
 * Finds every case under the roots (directories are searched in byte
 * order of their names, a directory holding kernel.hlo is a case and is
 * not searched further; a regular file is a list of case paths).  Fails
 * naming a root that does not exist or a listed path that is not a case.
 */
usc_status usc__batch_discover(const char *const *roots, size_t count,
			       usc__batch_case **out, size_t *n,
			       usc_error *err);
void usc__batch_cases_free(usc__batch_case *c, size_t n);

/* FNV-1a, 64 bits, continuing from h (start: USC__FNV_OFFSET). */
#define USC__FNV_OFFSET 0xcbf29ce484222325ull
uint64_t usc__batch_fnv(const void *p, size_t n, uint64_t h);
void usc__batch_hex(uint64_t h, char out[17]);

/*
 * A row's text, in a new buffer: what a worker hands the batch, which
 * appends it to its journal (batch.c, commit).
 */
usc_status usc__batch_row_format(const usc_batch_row *r, char **text,
				 size_t *len, usc_error *err);
/*
 * Reads a row's text (len bytes, changed in place; fields it does not
 * know are skipped); name is what its messages call it.
 */
usc_status usc__batch_row_parse(const char *name, char *text, size_t len,
				usc_batch_row *r, usc_error *err);

/*
 * Journals (journal.c): rows/<run>.<rank>.journal, one per run and MPI
 * rank, a first line naming the format and then one record per finished
 * case, each with its length and checksum, appended and flushed by the
 * batch's committer.
 */
/* A record's first line, at most. */
#define USC__BATCH_RECORD_HEAD 64
/* The checksum of a record: FNV-1a of the id's 16 digits, then text. */
uint64_t usc__batch_record_sum(const char id[17], const char *text,
			       size_t len);
/* A record's first line into head (no allocation); its length, 0 if
 * it does not fit. */
size_t usc__batch_record_head(char head[USC__BATCH_RECORD_HEAD],
			      const char id[17], const char *text, size_t len);
/*
 * Creates dir/RUN.RANK.journal with its first line, flushed with its
 * directory; *size is its length.
 */
usc_status usc__batch_journal_create(const char *dir, uint64_t run, int rank,
				     int *fd, uint64_t *size, usc_error *err);
/*
 * Every whole record of dir's journals, oldest run first, through fn
 * (text is the row's, changed at will); rows/<id>.row files of the
 * earlier layout come first, as run 0.  A damaged tail is dropped.
 * *last_run: the highest run number found (0: none).
 */
typedef void (*usc__batch_record_fn)(void *ctx, const char *id, uint64_t run,
				     char *text, size_t len);
usc_status usc__batch_journal_scan(const char *dir, usc__batch_record_fn fn,
				   void *ctx, uint64_t *last_run,
				   usc_error *err);
/* Deep copy; false when out of memory (dst then cleared). */
bool usc__batch_row_copy(usc_batch_row *dst, const usc_batch_row *src);
/* Sets a string member (a copy; NULL: ""); false when out of memory. */
bool usc__batch_set(char **member, const char *value);

/*
 * What a child does for its case: checks it and gives its row's text
 * back; the batch flushes the result file and appends the row to its
 * journal (batch.c, commit).
 */
typedef struct usc__batch_job {
	const usc__batch_case *c;
	const char *result_path; /* the case's result file */
	const char *result_rel;  /* the same, relative to the index */
	const char *profile;     /* NULL: the case's own */
	bool no_profile;
	bool attribute;
} usc__batch_job;

/*
 * Runs in the child; returns its exit status, 0 when *text (allocated)
 * holds the row file's text.
 */
int usc__batch_case_run(const usc__batch_job *j, char **text, size_t *len);

/* Exit status of a child that ran out of memory inside GMP/MPFR. */
#define USC__BATCH_EXIT_OOM 97

/* The address space a child may reserve beyond its memory limit, MiB. */
#define USC__BATCH_AS_SLACK 1024

/* Cases a worker process checks before it is replaced, by default. */
#define USC__BATCH_CASES_PER_WORKER 64

/*
 * A worker whose resident set after a case has grown this far (MiB)
 * above what it held after its first case is replaced.
 */
#define USC__BATCH_RSS_GROWTH_MB 256

/* The pool: runs the jobs next() gives, jobs at a time. */
typedef enum usc__batch_end {
	USC__BATCH_END_EXIT,     /* exited; code holds the status */
	USC__BATCH_END_SIGNAL,   /* killed by signal code */
	USC__BATCH_END_TIMEOUT,  /* killed by the pool after the timeout */
	USC__BATCH_END_MEMORY,   /* killed by the pool past the memory limit */
	USC__BATCH_END_UNSAVED   /* finished, but commit failed: code is errno */
} usc__batch_end;

/* What the pool's next() gives. */
typedef enum usc__batch_next {
	USC__BATCH_NEXT_NONE,  /* no job left */
	USC__BATCH_NEXT_JOB,   /* a job, in *k */
	USC__BATCH_NEXT_LATER  /* none yet: ask again in a moment (MPI) */
} usc__batch_next;

/* Cases the pool commits at once, at most. */
#define USC__BATCH_COMMIT_GROUP 64

/*
 * Seconds the committer lets pass between the starts of two commits,
 * gathering the cases that finish meanwhile into one group (one flush
 * of the directory and of the journal for all of them), unless a full
 * group is waiting or the workers are done.  A case's count as done
 * waits that long at most; the workers never wait for it.
 */
#define USC__BATCH_COMMIT_INTERVAL 0.05

typedef struct usc__batch_pool {
	size_t jobs;
	double timeout;          /* seconds; 0: none */
	uint64_t memory_mb;      /* RLIMIT_AS in the child; 0: none */
	/* Cases a worker runs before it is replaced; 0: the default. */
	size_t cases_per_worker;
	/* The next job to start into *k. */
	usc__batch_next (*next)(void *ctx, size_t *k);
	/* NULL, or runs in the parent at least every millisecond while it
	 * waits (MPI's rank 0 answers the other ranks there). */
	void (*serve)(void *ctx);
	/* Runs in a worker for job k: its status, 0 when *text (allocated,
	 * *len bytes) is the job's row, which the pool hands to commit. */
	int (*child)(void *ctx, size_t k, char **text, size_t *len);
	/*
	 * Runs in the parent for a job whose child did not give its row
	 * (it exited with another status, or was killed): the row that
	 * records how it ended, into *text (allocated; NULL when out of
	 * memory).
	 */
	void (*describe)(void *ctx, size_t k, usc__batch_end how, int code,
			 double seconds, char **text, size_t *len);
	/*
	 * Makes the rows texts[i] (lens[i] bytes) of the jobs ks[0..n)
	 * durable, with what they refer to; errs[i] is 0 or the errno of
	 * job i's failure.  Runs on the pool's own thread, while the
	 * workers go on with the next jobs, so it must not allocate (no
	 * need: a group is at most USC__BATCH_COMMIT_GROUP jobs) nor
	 * touch the other callbacks' state.
	 */
	void (*commit)(void *ctx, const size_t *ks, char *const *texts,
		       const size_t *lens, size_t n, int *errs);
	/*
	 * Runs in the parent when job k has ended and its row text (len
	 * bytes; NULL when describe ran out of memory) was committed, err
	 * 0, or could not be, err its errno.  text may be changed.
	 */
	void (*ended)(void *ctx, size_t k, char *text, size_t len, int err,
		      double seconds);
	/* Runs in the parent now and then, and at the end. */
	void (*tick)(void *ctx, size_t running, bool last);
	double tick_interval;
	void *ctx;
} usc__batch_pool;

/*
 * Runs the jobs.  USC_EINTERNAL when a child cannot be started; USC_EIO
 * when the batch was interrupted (SIGINT, SIGTERM): the children are
 * killed and what finished stays finished.
 */
usc_status usc__batch_pool_run(const usc__batch_pool *p, usc_error *err);
/*
 * In a worker: whether the pool's committer thread had finished starting
 * when this worker was forked.  The pool forks none before (pool.c,
 * fork_mu); tests check it.
 */
bool usc__batch_pool_committer_started(void);

/*
 * MPI (mpi.c; docs/batch.md, "MPI").  Without an MPI build, or when the
 * process was not launched by an MPI launcher, there is one rank.
 */
/* Starts MPI when launched by mpirun; this rank and the rank count. */
usc_status usc__batch_mpi_start(int *rank, int *size, usc_error *err);
/* Finalizes MPI if usc__batch_mpi_start started it. */
void usc__batch_mpi_end(void);
/*
 * Rank 0's status (and message) and *run (the run's number, which names
 * its journals) to every rank; every rank returns the status.
 */
usc_status usc__batch_mpi_share_status(usc_status st, uint64_t *run,
				       usc_error *err);
void usc__batch_mpi_barrier(void);
/*
 * A rank other than 0: the next case from rank 0, sending its counts.
 * With wait false, USC__BATCH_NEXT_LATER when rank 0 has not answered
 * yet (so that the caller sleeps instead of MPI spinning a core).
 */
usc__batch_next usc__batch_mpi_request(const usc_batch_progress *p,
				       size_t *k, bool wait);
/* Rank 0: answers every pending request with pop()'s next case. */
void usc__batch_mpi_serve(bool (*pop)(void *ctx, size_t *k), void *ctx,
			  usc_batch_progress *p);
/* Rank 0: every other rank has been told there is no more work. */
bool usc__batch_mpi_others_done(void);

/* Seconds on the monotonic clock. */
double usc__batch_now(void);

#endif /* USC_BATCH_INTERNAL_H */
