/*
 * ulpscope batch (include/ulpscope/batch.h, docs/batch.md): discovery,
 * the work directory, resuming, the pool, and the index.
 *
 * The work directory OUT.d/ beside the index holds rows/ (the journals:
 * one per run and MPI rank, a record per finished case; journal.c),
 * cases/<id>.h5 (each checked case's result file), a manifest with the
 * options that shape the results, and a lock file that one batch holds
 * while it runs.  A case is done when a journal holds its row; everything
 * else is redone.  The index is written last, from the rows alone, so
 * that a resumed batch writes the same index as an uninterrupted one.
 */
#define _GNU_SOURCE /* sync_file_range */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch_index.h"
#include "batch/batch_internal.h"
#include "util/process.h"
#include "ulpscope/results.h"

usc_batch_options usc_batch_options_default(void)
{
	usc_batch_options o;

	memset(&o, 0, sizeof o);
	o.shard_count = 1;
	o.progress_interval = 1;
	return o;
}

void usc_batch_result_destroy(usc_batch_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->row_count; i++)
		usc_batch_row_clear(&r->rows[i]);
	usc__free(r->rows);
	usc__free(r);
}

/* printf into a new string. */
static char *fmt(const char *f, ...) USC__PRINTF(1, 2);

static char *fmt(const char *f, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, f);
	n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = usc__malloc((size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, f);
	vsnprintf(p, (size_t)n + 1, f, ap);
	va_end(ap);
	return p;
}

static usc_status make_dir(const char *path, usc_error *err)
{
	struct stat sb;

	if (mkdir(path, 0777) == 0)
		return USC_OK;
	if (errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return USC_OK;
	return usc__fail(err, USC_EIO, "%s: cannot make the directory: %s",
			 path, errno == EEXIST ? "a file of that name exists"
					       : strerror(errno));
}

/* The state of one run, shared by the pool's callbacks. */
typedef struct run {
	const usc_batch_options *o;
	usc__batch_case *cases;
	size_t case_count;
	char *work, *rows_dir, *cases_dir, *out_base;
	/* Per selected case (index into cases), its row and whether done. */
	size_t *sel;
	size_t sel_count;
	usc_batch_row *rows;
	bool *done;
	usc__batch_job *jobs;
	char **result_paths, **result_rels;
	/* The selected cases (k) in the byte order of their ids. */
	size_t *by_id;
	/* This run's number and journal (the committer's alone once the
	 * pool runs), and the journal's length so far. */
	uint64_t run_no;
	int journal;
	uint64_t journal_size;
	/* Testing: milliseconds commit waits before its journal append. */
	long commit_delay_ms;
	usc_batch_progress prog;
	double t0;
	/* The cases not yet started, biggest first: order[next..pending). */
	size_t *order, next, pending;
	int rank, ranks;
} run;

static void count_row(run *r, const usc_batch_row *row)
{
	r->prog.done++;
	if (row->status != USC_BATCH_OK)
		r->prog.failed++;
	else if (row->verdict && strcmp(row->verdict, "defect") == 0)
		r->prog.defects++;
	else if (row->verdict && strcmp(row->verdict, "suspicious") == 0)
		r->prog.suspicious++;
}

/* The next case of this rank's own queue (rank 0, or one rank). */
static bool pop(void *ctx, size_t *k)
{
	run *r = ctx;

	if (r->next >= r->pending)
		return false;
	*k = r->order[r->next++];
	r->prog.running++;
	return true;
}

/* pop, for the pool. */
static usc__batch_next pop_next(void *ctx, size_t *k)
{
	return pop(ctx, k) ? USC__BATCH_NEXT_JOB : USC__BATCH_NEXT_NONE;
}

/* The next case from rank 0 (another rank), without waiting for it. */
static usc__batch_next ask(void *ctx, size_t *k)
{
	run *r = ctx;
	usc__batch_next n = usc__batch_mpi_request(&r->prog, k, false);

	if (n == USC__BATCH_NEXT_JOB)
		r->prog.running++;
	return n;
}

static void serve(void *ctx)
{
	run *r = ctx;

	usc__batch_mpi_serve(pop, r, &r->prog);
}

static int child(void *ctx, size_t k, char **text, size_t *len)
{
	run *r = ctx;

	return usc__batch_case_run(&r->jobs[k], text, len);
}

/* Flushes an existing file or directory; 0 or the errno. */
static int sync_path(const char *path, bool must_exist)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return must_exist || errno != ENOENT ? errno : 0;
	if (fsync(fd) != 0)
		e = errno;
	close(fd);
	return e;
}

/*
 * Makes finished cases durable, on the pool's thread while the workers
 * check the next ones (batch_internal.h, usc__batch_pool.commit), in
 * the order that keeps a journal's record from ever being durable
 * before what it refers to: the cases' result files are flushed (their
 * writeback started for the whole group first, so that the disk takes
 * them together), then the cases/ directory once for the group (the
 * result files' names, which workers renamed into place); then the
 * group's rows are appended to the run's journal in one write and it is
 * flushed.  Only then does the pool count them done.  A batch killed
 * before the append leaves the cases without a record, and they are
 * checked again; one killed in the middle of it leaves a damaged last
 * record, which readers drop (journal.c).  (No allocation here: a group
 * is at most USC__BATCH_COMMIT_GROUP cases.)
 */
static void commit(void *ctx, const size_t *ks, char *const *texts,
		   const size_t *lens, size_t n, int *errs)
{
	run *r = ctx;
	int fds[USC__BATCH_COMMIT_GROUP];
	char heads[USC__BATCH_COMMIT_GROUP][USC__BATCH_RECORD_HEAD];
	struct iovec iov[2 * USC__BATCH_COMMIT_GROUP];
	size_t nio = 0, total = 0;
	bool any = false;
	ssize_t put;
	int e = 0;

	for (size_t i = 0; i < n; i++) {
		fds[i] = open(r->result_paths[ks[i]], O_RDONLY | O_CLOEXEC);
		/* (A case that failed has no result file.) */
		errs[i] = fds[i] < 0 && errno != ENOENT ? errno : 0;
#ifdef SYNC_FILE_RANGE_WRITE
		if (fds[i] >= 0)
			sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
	}
	for (size_t i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (fsync(fds[i]) != 0)
			errs[i] = errno;
		close(fds[i]);
		any = true;
	}
	if (any)
		e = sync_path(r->cases_dir, true);
	for (size_t i = 0; i < n; i++) {
		const char *id = r->cases[r->sel[ks[i]]].id;
		size_t h;

		if (e && !errs[i])
			errs[i] = e;
		if (errs[i])
			continue;
		h = usc__batch_record_head(heads[i], id, texts[i], lens[i]);
		if (h == 0) {
			errs[i] = EOVERFLOW;
			continue;
		}
		iov[nio].iov_base = heads[i];
		iov[nio++].iov_len = h;
		iov[nio].iov_base = texts[i];
		iov[nio++].iov_len = lens[i];
		total += h + lens[i];
	}
	if (nio == 0)
		return;
	if (r->commit_delay_ms > 0) {
		struct timespec t = {r->commit_delay_ms / 1000,
				     (r->commit_delay_ms % 1000) * 1000000};

		nanosleep(&t, NULL);
	}
	do {
		put = writev(r->journal, iov, (int)nio);
	} while (put < 0 && errno == EINTR);
	if (put < 0)
		e = errno;
	else if ((size_t)put != total)
		e = ENOSPC; /* (a regular file takes all of it, or is full) */
	else if (fdatasync(r->journal) != 0)
		e = errno;
	if (e) {
		/* Not durable: not done either, and the journal back to its
		 * last whole record, so that the next groups can follow. */
		if (ftruncate(r->journal, (off_t)r->journal_size) != 0) {
			/* Readers drop a damaged tail, and what follows it. */
		}
		for (size_t i = 0; i < n; i++)
			if (!errs[i])
				errs[i] = e;
		return;
	}
	r->journal_size += total;
}

/* What the parent records for a case whose child left no row. */
static void failed_row(run *r, size_t k, usc__batch_end how, int code,
		       double seconds, usc_batch_row *row)
{
	const usc__batch_case *c = &r->cases[r->sel[k]];
	char msg[256];

	memset(row, 0, sizeof *row);
	row->index = c->index;
	row->max_ulp_reference = row->max_ulp_oracle = NAN;
	row->culprit_share = NAN;
	row->seconds = seconds;
	if (how == USC__BATCH_END_TIMEOUT) {
		row->status = USC_BATCH_TIMEOUT;
		snprintf(msg, sizeof msg,
			 "killed after the case timeout of %g s",
			 r->o->case_timeout);
	} else if (how == USC__BATCH_END_MEMORY ||
		   (how == USC__BATCH_END_EXIT &&
		    code == USC__BATCH_EXIT_OOM)) {
		row->status = USC_BATCH_OUT_OF_MEMORY;
		snprintf(msg, sizeof msg,
			 "ran out of memory (--case-memory %llu MB)",
			 (unsigned long long)r->o->case_memory_mb);
	} else if (how == USC__BATCH_END_SIGNAL) {
		row->status = USC_BATCH_CRASHED;
		snprintf(msg, sizeof msg, "the check was killed by signal %d "
			 "(%s)", code, strsignal(code));
	} else if (how == USC__BATCH_END_UNSAVED) {
		row->status = USC_BATCH_ERROR;
		snprintf(msg, sizeof msg,
			 "the case was checked, but its results could not be "
			 "flushed to disk: %s",
			 strerror(code));
	} else {
		row->status = USC_BATCH_ERROR;
		snprintf(msg, sizeof msg,
			 "the worker exited with status %d without a result",
			 code);
	}
	usc__batch_set(&row->path, c->path);
	usc__batch_set(&row->message, msg);
	usc__batch_set(&row->kernel, "");
	usc__batch_set(&row->hlo_hash, "");
	usc__batch_set(&row->verdict, "");
	usc__batch_set(&row->profile, "");
	usc__batch_set(&row->culprit, "");
	usc__batch_set(&row->result, "");
	usc__batch_set(&row->link, "");
}

/* The row of a case that ended without one, as text to commit. */
static void describe(void *ctx, size_t k, usc__batch_end how, int code,
		     double seconds, char **text, size_t *len)
{
	run *r = ctx;
	usc_batch_row row;

	failed_row(r, k, how, code, seconds, &row);
	if (usc__batch_row_format(&row, text, len, NULL) != USC_OK) {
		*text = NULL;
		*len = 0;
	}
	usc_batch_row_clear(&row);
}

/*
 * A case ended and its row was committed (err 0), or could not be: then
 * it is recorded as such here, and, not being in the journal, is checked
 * again by the next run.
 */
static void ended(void *ctx, size_t k, char *text, size_t len, int err,
		  double seconds)
{
	run *r = ctx;
	usc_batch_row row;

	if (err) {
		failed_row(r, k, USC__BATCH_END_UNSAVED, err, seconds, &row);
	} else if (!text) {
		failed_row(r, k, USC__BATCH_END_UNSAVED, ENOMEM, seconds, &row);
	} else if (usc__batch_row_parse(r->cases[r->sel[k]].path, text, len,
					&row, NULL) != USC_OK) {
		/* (The parent's own text: only out of memory.) */
		failed_row(r, k, USC__BATCH_END_UNSAVED, ENOMEM, seconds, &row);
	}
	r->prog.running--;
	count_row(r, &row);
	usc_batch_row_clear(&r->rows[k]);
	r->rows[k] = row;
	r->done[k] = true;
}

static void tick(void *ctx, size_t running, bool last)
{
	run *r = ctx;

	r->prog.running = running;
	r->prog.elapsed = usc__batch_now() - r->t0;
	(void)last;
	if (r->o->progress && r->rank == 0)
		r->o->progress(&r->prog, r->o->progress_data);
}

/* The options that shape the results: a resumed run must match them. */
static char *options_string(const usc_batch_options *o)
{
	return fmt("profile=%s no_profile=%d attribute=%d",
		   o->profile ? o->profile : "(case)", (int)o->no_profile,
		   (int)o->attribute);
}

/* Removes every file of dir (not recursively). */
static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = fmt("%s/%s", dir, e->d_name);
		if (p)
			unlink(p);
		usc__free(p);
	}
	closedir(d);
}

/*
 * Removes the temporaries NAME.tmp.PID of dir whose writer is gone: a
 * batch killed while a case was being written leaves them.
 */
static void sweep_temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *t = strstr(e->d_name, ".tmp.");
		char *end, *p;
		long pid;

		if (!t)
			continue;
		pid = strtol(t + 5, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (!usc__process_gone((pid_t)pid))
			continue; /* its writer is alive */
		p = fmt("%s/%s", dir, e->d_name);
		if (p)
			unlink(p);
		usc__free(p);
	}
	closedir(d);
}

/*
 * The manifest: the options of the batch whose rows the work directory
 * holds.  Another batch's rows are discarded with restart, else refused.
 */
static usc_status manifest(run *r, const char *opts, usc_error *err)
{
	char *path = fmt("%s/manifest", r->work), *text = NULL;
	size_t len;
	usc_status st;
	FILE *f;

	if (!path)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__read_file(path, &text, &len, NULL);
	if (st == USC_OK && !r->o->restart &&
	    (len < 1 || strncmp(text, opts, strlen(opts)) != 0 ||
	     text[strlen(opts)] != '\n')) {
		st = usc__fail(err, USC_EINVAL,
			       "%s holds the cases of a batch with other "
			       "options (%.*s); --restart discards them",
			       r->work, (int)strcspn(text, "\n"), text);
		goto done;
	}
	if (st == USC_OK && !r->o->restart)
		goto done;
	empty_dir(r->rows_dir);
	empty_dir(r->cases_dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", opts) < 0 || fclose(f) != 0) {
		st = usc__fail(err, USC_EIO, "%s: cannot write: %s", path,
			       strerror(errno));
		goto done;
	}
	st = USC_OK;
done:
	usc__free(text);
	usc__free(path);
	return st;
}

/* Holds the work directory's lock for the life of the process. */
static usc_status lock_work(const char *work, int *fd, usc_error *err)
{
	char *path = fmt("%s/lock", work);
	struct flock fl;

	if (!path)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	usc__free(path);
	if (*fd < 0)
		return usc__fail(err, USC_EIO, "%s/lock: cannot open: %s",
				 work, strerror(errno));
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(*fd, F_SETLK, &fl) != 0) {
		close(*fd);
		*fd = -1;
		return usc__fail(err, USC_EINVAL,
				 "%s is in use by another batch (it holds "
				 "%s/lock); wait for it or give another --out",
				 work, work);
	}
	return USC_OK;
}

/* Biggest case first, then discovery order. */
static const run *sort_run;

/* The selected cases by id (sort_run's). */
static int id_order(const void *a, const void *b)
{
	return strcmp(sort_run->cases[sort_run->sel[*(const size_t *)a]].id,
		      sort_run->cases[sort_run->sel[*(const size_t *)b]].id);
}

/* The selected case with this id, or SIZE_MAX. */
static size_t case_of(const run *r, const char *id)
{
	size_t lo = 0, hi = r->sel_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->cases[r->sel[r->by_id[mid]]].id, id);

		if (c == 0)
			return r->by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static int bigger_first(const void *a, const void *b)
{
	const usc__batch_case *x = &sort_run->cases[sort_run->sel[*(
		const size_t *)a]];
	const usc__batch_case *y = &sort_run->cases[sort_run->sel[*(
		const size_t *)b]];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static void run_free(run *r)
{
	for (size_t k = 0; k < r->sel_count; k++) {
		if (r->result_paths)
			usc__free(r->result_paths[k]);
		if (r->result_rels)
			usc__free(r->result_rels[k]);
		if (r->rows)
			usc_batch_row_clear(&r->rows[k]);
	}
	usc__free(r->by_id);
	if (r->journal >= 0)
		close(r->journal);
	usc__free(r->result_paths);
	usc__free(r->result_rels);
	usc__free(r->rows);
	usc__free(r->done);
	usc__free(r->jobs);
	usc__free(r->sel);
	usc__free(r->work);
	usc__free(r->rows_dir);
	usc__free(r->cases_dir);
	usc__free(r->out_base);
	usc__batch_cases_free(r->cases, r->case_count);
}

/* Allocates the per-case arrays and names each case's files. */
static usc_status prepare(run *r, usc_error *err)
{
	size_t n = r->case_count, K = r->o->shard_index,
	       N = r->o->shard_count ? r->o->shard_count : 1;

	r->sel = usc__calloc(n ? n : 1, sizeof *r->sel);
	for (size_t i = 0; r->sel && i < n; i++)
		if (i % N == K)
			r->sel[r->sel_count++] = i;
	n = r->sel_count ? r->sel_count : 1;
	r->rows = usc__calloc(n, sizeof *r->rows);
	r->done = usc__calloc(n, sizeof *r->done);
	r->jobs = usc__calloc(n, sizeof *r->jobs);
	r->by_id = usc__calloc(n, sizeof *r->by_id);
	r->result_paths = usc__calloc(n, sizeof *r->result_paths);
	r->result_rels = usc__calloc(n, sizeof *r->result_rels);
	if (!r->sel || !r->rows || !r->done || !r->jobs || !r->by_id ||
	    !r->result_paths || !r->result_rels)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t k = 0; k < r->sel_count; k++) {
		const usc__batch_case *c = &r->cases[r->sel[k]];

		r->by_id[k] = k;
		r->result_paths[k] = fmt("%s/%s.h5", r->cases_dir, c->id);
		r->result_rels[k] = fmt("%s.d/cases/%s.h5", r->out_base,
					c->id);
		if (!r->result_paths[k] || !r->result_rels[k])
			return usc__fail(err, USC_ENOMEM, "out of memory");
		r->jobs[k].c = c;
		r->jobs[k].result_path = r->result_paths[k];
		r->jobs[k].result_rel = r->result_rels[k];
		r->jobs[k].profile = r->o->no_profile ? NULL : r->o->profile;
		r->jobs[k].no_profile = r->o->no_profile;
		r->jobs[k].attribute = r->o->attribute;
	}
	sort_run = r;
	qsort(r->by_id, r->sel_count, sizeof *r->by_id, id_order);
	return USC_OK;
}

/*
 * A record of the journals (journal.c): the row of a case, which a later
 * record of the same case replaces.  The row's position and names follow
 * this run's discovery (the same case may be reached through another
 * root).  Records of cases outside this run's selection, and rows that
 * do not parse (a record's checksum matched: none but a foreign file),
 * are passed over.  With only_run, the records of that run alone, for
 * the cases not done yet (rank 0 gathering the other ranks' rows).
 */
typedef struct taker {
	run *r;
	uint64_t only_run; /* 0: every run */
} taker;

static void take_record(void *ctx, const char *id, uint64_t run_no,
			char *text, size_t len)
{
	taker *t = ctx;
	run *r = t->r;
	size_t k = case_of(r, id);
	const usc__batch_case *c;
	usc_batch_row row;

	if (k == SIZE_MAX || (t->only_run && (run_no != t->only_run ||
					      r->done[k])))
		return;
	if (usc__batch_row_parse(id, text, len, &row, NULL) != USC_OK)
		return;
	c = &r->cases[r->sel[k]];
	row.index = c->index;
	usc__batch_set(&row.path, c->path);
	if (row.status == USC_BATCH_OK)
		usc__batch_set(&row.link, c->link);
	usc_batch_row_clear(&r->rows[k]);
	r->rows[k] = row;
	r->done[k] = true;
}

/*
 * Takes the rows earlier runs left; a row of a failed case is redone
 * with retry_failed.  Gives this run its number, one past the last.
 */
static usc_status take_done(run *r, usc_error *err)
{
	taker t = {r, 0};
	uint64_t last;
	usc_status st;

	st = usc__batch_journal_scan(r->rows_dir, take_record, &t, &last,
				     err);
	if (st != USC_OK)
		return st;
	r->run_no = last + 1;
	for (size_t k = 0; k < r->sel_count; k++) {
		if (!r->done[k])
			continue;
		if (r->rows[k].status != USC_BATCH_OK && r->o->retry_failed) {
			usc_batch_row_clear(&r->rows[k]);
			r->done[k] = false;
			continue;
		}
		r->prog.resumed++;
		count_row(r, &r->rows[k]);
	}
	return USC_OK;
}

/*
 * Rank 0's (or the only rank's) preparation: the work directory, its lock
 * and manifest, the cases of the shard, those already done, and the queue
 * of the rest, biggest first.
 */
static usc_status set_up(run *r, const char *opts, int *lock_fd,
			 usc_error *err)
{
	const usc_batch_options *o = r->o;
	usc_status st;

	st = usc_results_check_target(o->out, false,
				      o->force ? USC_RESULTS_FORCE : 0, err);
	if (st == USC_OK)
		st = usc__batch_discover(o->roots, o->root_count, &r->cases,
					 &r->case_count, err);
	if (st == USC_OK && r->case_count == 0)
		st = usc__fail(err, USC_ENOTFOUND,
			       "no case directory (one holding kernel.hlo; "
			       "docs/cases.md) under %s%s",
			       o->roots[0], o->root_count > 1 ? " ..." : "");
	if (st == USC_OK)
		st = make_dir(r->work, err);
	if (st == USC_OK)
		st = lock_work(r->work, lock_fd, err);
	if (st == USC_OK)
		st = make_dir(r->rows_dir, err);
	if (st == USC_OK)
		st = make_dir(r->cases_dir, err);
	if (st == USC_OK)
		st = manifest(r, opts, err);
	if (st == USC_OK)
		st = prepare(r, err);
	if (st != USC_OK)
		return st;
	sweep_temporaries(r->rows_dir);
	sweep_temporaries(r->cases_dir);
	r->prog.total = r->sel_count;
	st = take_done(r, err);
	if (st != USC_OK)
		return st;
	r->order = usc__calloc(r->sel_count ? r->sel_count : 1,
			       sizeof *r->order);
	if (!r->order)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t k = 0; k < r->sel_count; k++)
		if (!r->done[k])
			r->order[r->pending++] = k;
	sort_run = r;
	qsort(r->order, r->pending, sizeof *r->order, bigger_first);
	/* This run's journal, when it has cases to check (a run with none,
	 * to print the ranking again, leaves no empty journal behind). */
	if (r->pending == 0)
		return USC_OK;
	return usc__batch_journal_create(r->rows_dir, r->run_no, 0,
					 &r->journal, &r->journal_size, err);
}

/*
 * Rank 0 under MPI: the rows of the cases other ranks checked, from
 * their journals of this run.
 */
static usc_status gather_rows(run *r, usc_error *err)
{
	taker t = {r, r->run_no};
	uint64_t last;
	usc_status st;

	if (r->ranks > 1) {
		st = usc__batch_journal_scan(r->rows_dir, take_record, &t,
					     &last, err);
		if (st != USC_OK)
			return st;
	}
	for (size_t k = 0; k < r->sel_count; k++)
		if (!r->done[k])
			return usc__fail(err, USC_EINTERNAL,
					 "case %s went to another rank, which "
					 "left no row for it in %s",
					 r->cases[r->sel[k]].path, r->rows_dir);
	return USC_OK;
}

usc_status usc_batch_run(const usc_batch_options *o, usc_batch_result **out,
			 usc_error *err)
{
	run r;
	usc__batch_pool pool;
	usc_batch_result *res = NULL;
	char *opts = NULL;
	const char *slash;
	usc_status st, rank_st = USC_OK;
	usc_error rank_err;
	int lock_fd = -1;

	*out = NULL;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.journal = -1;
	r.t0 = usc__batch_now();
	/* Only the test suite sets it: a window in which to kill a batch
	 * between a case's end and its commit (tests/batch). */
	if (getenv("USC_BATCH_TEST_COMMIT_DELAY_MS"))
		r.commit_delay_ms =
			strtol(getenv("USC_BATCH_TEST_COMMIT_DELAY_MS"), NULL,
			       10);
	if (!o->out || !o->root_count)
		return usc__fail(err, USC_EINVAL,
				 "a batch needs roots and an index (--out)");
	if (o->shard_count == 0 || o->shard_index >= o->shard_count)
		return usc__fail(err, USC_EINVAL,
				 "shard %zu of %zu does not exist",
				 o->shard_index + 1, o->shard_count);
	st = usc__batch_mpi_start(&r.rank, &r.ranks, err);
	if (st != USC_OK)
		return st;
	slash = strrchr(o->out, '/');
	r.out_base = fmt("%s", slash ? slash + 1 : o->out);
	r.work = fmt("%s.d", o->out);
	r.rows_dir = fmt("%s.d/rows", o->out);
	r.cases_dir = fmt("%s.d/cases", o->out);
	opts = options_string(o);
	if (!r.out_base || !r.work || !r.rows_dir || !r.cases_dir || !opts)
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	if (st == USC_OK && r.rank == 0)
		st = set_up(&r, opts, &lock_fd, err);
	/* The other ranks discover the cases while rank 0 sets up (the
	 * same tree, so the same numbering). */
	if (st == USC_OK && r.rank != 0) {
		rank_st = usc__batch_discover(o->roots, o->root_count,
					      &r.cases, &r.case_count, &rank_err);
		if (rank_st == USC_OK)
			rank_st = prepare(&r, &rank_err);
	}
	st = usc__batch_mpi_share_status(st, &r.run_no, err);
	if (st != USC_OK)
		goto done;
	if (r.rank != 0) {
		if (rank_st == USC_OK)
			rank_st = usc__batch_journal_create(
				r.rows_dir, r.run_no, r.rank, &r.journal,
				&r.journal_size, &rank_err);
		if (rank_st != USC_OK) {
			/* Rank 0 is handing out cases: take none of them
			 * (it then reports each as missing). */
			size_t k;

			st = rank_st;
			if (err)
				*err = rank_err;

			while (usc__batch_mpi_request(&r.prog, &k, true) ==
			       USC__BATCH_NEXT_JOB) {
			}
			usc__batch_mpi_barrier();
			goto done;
		}
	}
	memset(&pool, 0, sizeof pool);
	pool.jobs = o->jobs ? o->jobs : (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	pool.timeout = o->case_timeout;
	pool.memory_mb = o->case_memory_mb;
	pool.cases_per_worker = o->cases_per_worker;
	pool.next = r.rank == 0 ? pop_next : ask;
	pool.serve = r.rank == 0 && r.ranks > 1 ? serve : NULL;
	pool.child = child;
	pool.describe = describe;
	pool.commit = commit;
	pool.ended = ended;
	pool.tick = tick;
	pool.tick_interval = o->progress_interval;
	pool.ctx = &r;
	st = usc__batch_pool_run(&pool, err);
	if (r.rank == 0) {
		/* Every other rank must hear "no more" before it can finish. */
		r.next = r.pending;
		while (!usc__batch_mpi_others_done()) {
			struct timespec ms = {0, 1000000};

			serve(&r);
			nanosleep(&ms, NULL);
		}
	}
	usc__batch_mpi_barrier();
	if (st != USC_OK || r.rank != 0)
		goto done;
	st = gather_rows(&r, err);
	if (st != USC_OK)
		goto done;
	/* A batch killed just before this one may have had children still
	 * dying when the first sweep ran. */
	sweep_temporaries(r.rows_dir);
	sweep_temporaries(r.cases_dir);
	res = usc__calloc(1, sizeof *res);
	if (!res) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	/* The rows change hands, in discovery order (sel is sorted). */
	res->rows = r.rows;
	res->row_count = r.sel_count;
	r.rows = NULL;
	res->resumed = r.prog.resumed;
	res->shard_index = o->shard_index;
	res->shard_count = o->shard_count;
	res->case_total = r.case_count;
	st = usc__batch_index_write(o->out, res, opts, o->force, err);
	res->seconds = usc__batch_now() - r.t0;
done:
	if (st == USC_OK && r.rank != 0) {
		res = usc__calloc(1, sizeof *res);
		if (!res)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (res) {
		res->rank = r.rank;
		res->ranks = r.ranks;
	}
	if (lock_fd >= 0)
		close(lock_fd);
	usc__free(r.order);
	usc__free(opts);
	run_free(&r);
	usc__batch_mpi_end();
	if (st != USC_OK) {
		usc_batch_result_destroy(res);
		return st;
	}
	*out = res;
	return USC_OK;
}

usc_status usc_batch_read(const char *path, usc_batch_result **out,
			  usc_error *err)
{
	usc_batch_result *b = usc__calloc(1, sizeof *b);
	char *opts = NULL;
	usc_status st;

	*out = NULL;
	if (!b)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	st = usc__batch_index_read(path, b, &opts, err);
	usc__free(opts);
	if (st != USC_OK) {
		usc_batch_result_destroy(b);
		return st;
	}
	*out = b;
	return USC_OK;
}
