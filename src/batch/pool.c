/*
 * The batch's worker pool (docs/batch.md, "Isolation"): cases run in
 * worker processes that the parent forks and feeds one case at a time
 * through a pipe, so a crash, a runaway allocation or a hang ends that
 * worker alone, while a healthy worker goes on to its next case without
 * paying a fresh process's start again (page faults on the copied
 * address space, lazy symbol binding, cold caches of the oracle and
 * OpenBLAS: most of what a batch cost over checking in one process,
 * docs/performance.md, "Batch").
 *
 * The parent forks, feeds, waits and kills: it sends each busy worker
 * its next case ahead (struct slot), sleeps in poll() on the
 * workers' reply pipes and on a pipe that its SIGCHLD handler writes to,
 * waking for a case that finished, a worker that died, a timeout that
 * expired or the next progress tick.  A worker is retired (its command
 * pipe closed, on which it exits) after cases_per_worker cases, or when
 * its resident set after a case has grown past USC__BATCH_RSS_GROWTH_MB
 * above what it held after its first case, or past half the memory
 * limit, so that what earlier cases left behind stays small next to the
 * next case's limit (a worker that has grown hands the memory its cases
 * freed back to the system first, so what is measured is memory in
 * use).  A worker killed for a timeout or the memory limit,
 * or that crashed, is not reused: the next case gets a fresh one.
 *
 * A memory limit is kept two ways.  The parent reads each busy worker's
 * resident set from /proc every tenth of a second and kills one past the
 * limit; and a worker's address space is capped at the limit plus
 * USC__BATCH_AS_SLACK, so that an allocation too big to wait for (a
 * declared 6 GiB tensor) fails at once, as out of memory, in the worker.
 * The cap is not the limit itself because address space is not memory:
 * thread stacks and OpenBLAS's buffers reserve far more than they touch,
 * and OpenBLAS waits for ever when its buffer cannot be mapped.
 *
 * A case a worker finished, or one whose worker died, is made durable
 * (p->commit: its result file flushed, its row appended to the journal)
 * by the pool's committer thread while the worker goes on with its next
 * case; it counts as ended only once committed.  Flushing is waiting for
 * the disk, which the worker need not do.  The committer gathers the
 * cases that finish within USC__BATCH_COMMIT_INTERVAL of its last commit
 * into one group, so that the flushes a group shares (the directory's,
 * the journal's) are paid once per group, and sleeps while there is
 * nothing to commit.
 */
#define _GNU_SOURCE /* prctl, malloc_trim */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "batch/batch_internal.h"

double usc__batch_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The self-pipe of the running pool, and whether SIGINT/TERM came. */
static int wake_fd[2] = {-1, -1};
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	int saved = errno;
	char b = 0;

	if (sig == SIGINT || sig == SIGTERM)
		interrupted = sig;
	if (wake_fd[1] >= 0 && write(wake_fd[1], &b, 1) < 0) {
		/* The pipe is full: the parent wakes anyway. */
	}
	errno = saved;
}

/*
 * The committer: a thread that commits the cases the workers finished.
 * The main thread appends to work[] and takes back the entries marked
 * committed; the thread marks up to USC__BATCH_COMMIT_GROUP queued
 * entries as its own, commits them without the lock, marks them
 * committed and writes a byte to wake_fd.  Only the main thread
 * allocates (it grows work[] under the lock).  The thread starts a
 * commit USC__BATCH_COMMIT_INTERVAL after the last one started at the
 * earliest, unless a full group waits or the main thread says hurry
 * (no worker is running: nothing else would join the group).
 */
typedef enum { QUEUED, COMMITTING, COMMITTED } entry_state;

typedef struct entry {
	size_t k;
	char *text; /* the row, from the worker; the main thread frees it */
	size_t len;
	double seconds;
	entry_state state;
	int err;
} entry;

typedef struct committer {
	const usc__batch_pool *p;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	entry *work;
	size_t n, cap;
	size_t queued; /* entries QUEUED */
	bool stop, started, hurry;
	bool running; /* the thread runs commit_main: its start-up is over */
	bool idle; /* the thread waits with nothing queued */
} committer;

/*
 * A worker is forked from a process with a second thread, the committer,
 * and a child inherits every lock as it stood at fork(): one that the
 * committer held inside a library is never released in the child, which
 * waits for it forever at its first use.  glibc's malloc and stdio take
 * their locks across fork(), but AddressSanitizer's runtime (GCC 12's)
 * does not take its allocator's, and under it CI saw workers hang on an
 * allocator lock (size class 36, the 8 KiB chunks) held by the committer.
 * So a fork never happens while the committer can be inside a library:
 *
 * - Its start-up.  Before a new thread reaches its function,
 *   AddressSanitizer's thread start-up frees the buffers of
 *   pthread_getattr_np, and the thread's first free allocates the 8 KiB
 *   batch of its quarantine, under that size class's lock: this is the
 *   lock the hung workers waited on (docs/batch.md, "Committing a case").
 *   The main thread therefore waits until commit_main runs (c->running)
 *   before it goes on to fork the first worker.
 * - Its commits (the only library calls it makes that can allocate):
 *   done holding fork_mu, which the main thread holds around fork().
 * - Between them it only locks and waits on c->mu and c->cv, reads the
 *   clock and writes a byte to wake_fd, none of which allocates.
 * - Its end: it exits only in commit_finish, whose pthread_join returns
 *   once the thread's clean-up (the sanitizer's, which hands its
 *   allocator cache back under the allocator's locks, and glibc's) is
 *   over; the pool forks nothing after that.
 *
 * (The parent's one other thread, OpenBLAS's, which the library starts
 * when it is loaded, is stopped and joined by OpenBLAS's own fork handler
 * before every fork.)
 */
static pthread_mutex_t fork_mu = PTHREAD_MUTEX_INITIALIZER;

/*
 * Whether a committer thread runs commit_main (set and cleared by it,
 * under its c->mu).  Nothing in the parent reads it: a worker reads the
 * copy it inherited, which says whether the committer was past its
 * start-up when the worker was forked (usc__batch_pool_committer_started).
 */
static bool committer_up;

bool usc__batch_pool_committer_started(void)
{
	return committer_up;
}

/* The realtime clock's time, s seconds from now (for timedwait). */
static struct timespec deadline_in(double s)
{
	struct timespec t;
	long ns;

	clock_gettime(CLOCK_REALTIME, &t);
	ns = t.tv_nsec + (long)(s * 1e9);
	t.tv_sec += ns / 1000000000L;
	t.tv_nsec = ns % 1000000000L;
	return t;
}

static void *commit_main(void *arg)
{
	committer *c = arg;
	size_t ks[USC__BATCH_COMMIT_GROUP], lens[USC__BATCH_COMMIT_GROUP];
	char *texts[USC__BATCH_COMMIT_GROUP];
	int errs[USC__BATCH_COMMIT_GROUP];
	double last = -1; /* when the last commit started */

	pthread_mutex_lock(&c->mu);
	/* The main thread forks no worker before this (fork_mu, above). */
	c->running = committer_up = true;
	pthread_cond_broadcast(&c->cv);
	for (;;) {
		size_t g = 0;
		char b = 0;
		double wait;

		if (c->queued == 0) {
			if (c->stop)
				break;
			c->idle = true;
			pthread_cond_wait(&c->cv, &c->mu);
			c->idle = false;
			continue;
		}
		/* Let the group fill, unless it is full or must go now. */
		wait = last < 0 ? 0
				: last + USC__BATCH_COMMIT_INTERVAL -
					  usc__batch_now();
		if (wait > 0 && !c->stop && !c->hurry &&
		    c->queued < USC__BATCH_COMMIT_GROUP) {
			struct timespec t = deadline_in(wait);

			pthread_cond_timedwait(&c->cv, &c->mu, &t);
			continue;
		}
		for (size_t i = 0; i < c->n && g < USC__BATCH_COMMIT_GROUP; i++)
			if (c->work[i].state == QUEUED) {
				c->work[i].state = COMMITTING;
				texts[g] = c->work[i].text;
				lens[g] = c->work[i].len;
				ks[g++] = c->work[i].k;
			}
		c->queued -= g;
		last = usc__batch_now();
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&fork_mu);
		c->p->commit(c->p->ctx, ks, texts, lens, g, errs);
		pthread_mutex_unlock(&fork_mu);
		pthread_mutex_lock(&c->mu);
		for (size_t i = 0, j = 0; i < c->n && j < g; i++)
			if (c->work[i].state == COMMITTING) {
				/* (In order: entries stay in the order the
				 * thread took them.) */
				c->work[i].state = COMMITTED;
				c->work[i].err = errs[j++];
			}
		if (wake_fd[1] >= 0 && write(wake_fd[1], &b, 1) < 0) {
			/* The pipe is full: the main thread wakes anyway. */
		}
	}
	committer_up = false;
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Queues job k for commit, taking text; false when out of memory. */
static bool commit_queue(committer *c, size_t k, char *text, size_t len,
			 double seconds)
{
	bool ok = true;

	pthread_mutex_lock(&c->mu);
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		entry *w = usc__realloc(c->work, cap * sizeof *w);

		if (w) {
			c->work = w;
			c->cap = cap;
		} else {
			ok = false;
		}
	}
	if (ok) {
		c->work[c->n].k = k;
		c->work[c->n].text = text;
		c->work[c->n].len = len;
		c->work[c->n].seconds = seconds;
		c->work[c->n].state = QUEUED;
		c->work[c->n].err = 0;
		c->n++;
		c->queued++;
		/* (A thread waiting for its interval wakes by itself, unless
		 * the group is full: no need to wake it for every case.) */
		if (c->idle || c->queued >= USC__BATCH_COMMIT_GROUP)
			pthread_cond_signal(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return ok;
}

/* Ends the jobs committed so far; returns how many are still pending. */
static size_t commit_collect(committer *c)
{
	size_t kept = 0, n = 0;
	entry *done;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n; i++)
		n += c->work[i].state == COMMITTED;
	if (n == 0) {
		pthread_mutex_unlock(&c->mu);
		return c->n;
	}
	/* Ended outside the lock: p->ended may take its time. */
	done = usc__calloc(n, sizeof *done);
	if (!done) {
		pthread_mutex_unlock(&c->mu);
		return n;
	}
	n = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->work[i].state == COMMITTED)
			done[n++] = c->work[i];
		else
			c->work[kept++] = c->work[i];
	}
	c->n = kept;
	pthread_mutex_unlock(&c->mu);
	for (size_t i = 0; i < n; i++) {
		c->p->ended(c->p->ctx, done[i].k, done[i].text, done[i].len,
			    done[i].err, done[i].seconds);
		usc__free(done[i].text);
	}
	usc__free(done);
	return kept;
}

/*
 * Whether the committer should commit what it holds at once: set when no
 * worker runs a case, so no other case would join the group.
 */
static void commit_hurry(committer *c, bool hurry)
{
	if (!c->started || c->hurry == hurry)
		return;
	pthread_mutex_lock(&c->mu);
	c->hurry = hurry;
	if (hurry)
		pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* Commits what is queued, stops the thread and ends those jobs. */
static void commit_finish(committer *c)
{
	if (c->started) {
		pthread_mutex_lock(&c->mu);
		c->stop = true;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
		c->started = false;
	}
	commit_collect(c);
}

/*
 * One worker process, the case it runs and the case it was sent to run
 * next.  A busy worker is sent its next case before it finishes the one
 * it runs (without a memory limit; below), so that it goes on at once
 * instead of waiting for the parent to be scheduled, read its reply and
 * answer (a quarter to half a millisecond a case on a loaded machine,
 * a few per cent of a batch).
 */
typedef struct slot {
	pid_t pid;       /* 0: no worker */
	int cmd;         /* the parent writes case numbers here */
	int reply;       /* the worker writes each case's exit status here */
	bool busy;       /* running case k */
	size_t k;
	bool queued;     /* case k2 waits in its command pipe */
	size_t k2;
	double start;
	bool timed_out;
	bool over_memory;
	size_t cases;    /* cases it finished */
	double base_mb;  /* its resident set after its first case */
} slot;

/*
 * The resident set of a process in MiB, or -1 when unknown.  (Read with
 * open and read, not stdio, which would allocate a buffer each time: the
 * parent reads it after every case.)
 */
static double resident_mb(pid_t pid)
{
	static long page;
	char path[64], buf[128], *end;
	unsigned long long resident;
	ssize_t got;
	int fd;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = 0;
	/* "size resident shared ...", in pages. */
	strtoull(buf, &end, 10);
	if (end == buf || *end != ' ')
		return -1;
	resident = strtoull(end, &end, 10);
	if (*end != ' ' && *end != '\n')
		return -1;
	return (double)resident * (double)page / 1048576.0;
}

/* Reads or writes exactly n bytes; false on end of file or an error. */
static bool read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t got = read(fd, c, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		c += got;
		n -= (size_t)got;
	}
	return true;
}

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t put = write(fd, c, n);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return false;
		c += put;
		n -= (size_t)put;
	}
	return true;
}

/*
 * A worker's reply: its status and, with 0, the row's text (allocated
 * into *text); false when the worker is gone or out of memory here.
 */
static bool read_reply(int fd, int *rc, char **text, size_t *len)
{
	uint64_t n;

	*text = NULL;
	*len = 0;
	if (!read_all(fd, rc, sizeof *rc) || !read_all(fd, &n, sizeof n))
		return false;
	if (n == 0)
		return true;
	if (n > ((uint64_t)1 << 30) || !(*text = usc__malloc((size_t)n)))
		return false;
	if (!read_all(fd, *text, (size_t)n)) {
		usc__free(*text);
		*text = NULL;
		return false;
	}
	*len = (size_t)n;
	return true;
}

/*
 * The worker: sets its limits and signal dispositions, then runs the
 * cases it is sent until its command pipe closes.
 */
static void worker_main(const usc__batch_pool *p, slot *s, size_t nslots,
			size_t me, pid_t parent)
{
	struct sigaction sa;
	double base_mb = -1; /* the resident set after the first case */
	size_t k;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	/* A parent gone mid-reply is seen as the write's failure. */
	sigaction(SIGPIPE, &sa, NULL);
	close(wake_fd[0]);
	close(wake_fd[1]);
	/* The other workers' pipes: held here, they would keep a retired
	 * worker from seeing its command pipe close. */
	for (size_t i = 0; i < nslots; i++) {
		if (i == me || s[i].pid <= 0)
			continue;
		close(s[i].cmd);
		close(s[i].reply);
	}
#ifdef __linux__
	/* A batch killed with -9 takes its workers with it; one that died
	 * before the request was made is seen at once. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(1);
#if !defined(__SANITIZE_ADDRESS__)
	/* (AddressSanitizer reserves terabytes of shadow at start-up: under
	 * it, the resident-set check alone keeps the limit.) */
	if (p->memory_mb) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max =
			(rlim_t)(p->memory_mb + USC__BATCH_AS_SLACK) << 20;
		setrlimit(RLIMIT_AS, &rl);
	}
#endif
	while (read_all(s[me].cmd, &k, sizeof k)) {
		char *text = NULL;
		size_t len = 0;
		int rc = p->child(p->ctx, k, &text, &len);
		uint64_t n = rc == 0 ? (uint64_t)len : 0;
		double mb;

		/* The reply: the status, the row's length and text. */
		if (!write_all(s[me].reply, &rc, sizeof rc) ||
		    !write_all(s[me].reply, &n, sizeof n) ||
		    (n && !write_all(s[me].reply, text, len)))
			_exit(1);
		usc__free(text);
		mb = resident_mb(getpid());

		/*
		 * Memory the case freed but malloc kept goes back to the
		 * system once it is worth a look, so that the parent's
		 * reading of the resident set is what this worker holds, not
		 * what the last case left free.  (Not after every case: the
		 * next case would fault the pages in again.)
		 */
		if (base_mb < 0)
			base_mb = mb;
		else if (mb > base_mb + USC__BATCH_RSS_GROWTH_MB / 2 ||
			 (p->memory_mb && mb > 0.25 * (double)p->memory_mb))
			malloc_trim(0);
	}
	_exit(0);
}

/* Forks a worker into slot i; false (errno set) when it cannot. */
static bool worker_start(const usc__batch_pool *p, slot *s, size_t n,
			 size_t i)
{
	int cmd[2], reply[2];
	pid_t self = getpid(), pid;

	if (pipe2(cmd, O_CLOEXEC) != 0)
		return false;
	if (pipe2(reply, O_CLOEXEC) != 0) {
		close(cmd[0]);
		close(cmd[1]);
		return false;
	}
	/* Not while the committer is inside a library (fork_mu). */
	pthread_mutex_lock(&fork_mu);
	pid = fork();
	pthread_mutex_unlock(&fork_mu);
	if (pid < 0) {
		int e = errno;

		close(cmd[0]);
		close(cmd[1]);
		close(reply[0]);
		close(reply[1]);
		errno = e;
		return false;
	}
	if (pid == 0) {
		close(cmd[1]);
		close(reply[0]);
		s[i].cmd = cmd[0];
		s[i].reply = reply[1];
		s[i].pid = 1; /* (for worker_main: its own slot) */
		worker_main(p, s, n, i, self);
	}
	close(cmd[0]);
	close(reply[1]);
	memset(&s[i], 0, sizeof s[i]);
	s[i].pid = pid;
	s[i].cmd = cmd[1];
	s[i].reply = reply[0];
	return true;
}

/* Retires an idle worker: its command pipe closes and it exits. */
static void worker_retire(slot *s)
{
	close(s->cmd);
	close(s->reply);
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
	}
	memset(s, 0, sizeof *s);
}

/* Forgets a worker that has been reaped. */
static void worker_gone(slot *s)
{
	close(s->cmd);
	close(s->reply);
	memset(s, 0, sizeof *s);
}

static void kill_all(slot *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].pid > 0)
			kill(s[i].pid, SIGKILL);
	for (size_t i = 0; i < n; i++)
		if (s[i].pid > 0) {
			waitpid(s[i].pid, NULL, 0);
			worker_gone(&s[i]);
		}
}

/*
 * Job k ended: its row (text, from its worker; NULL: the row describe
 * gives for how it ended) goes to the committer, or is committed here
 * when there is no committer thread.
 */
static void finish(const usc__batch_pool *p, committer *c, size_t k,
		   char *text, size_t len, usc__batch_end how, int code,
		   double seconds)
{
	int e = 0;

	if (!text)
		p->describe(p->ctx, k, how, code, seconds, &text, &len);
	if (text && c->started && commit_queue(c, k, text, len, seconds))
		return; /* (the text is the committer's now) */
	if (text)
		p->commit(p->ctx, &k, &text, &len, 1, &e);
	p->ended(p->ctx, k, text, len, e, seconds);
	usc__free(text);
}

/*
 * The case worker s finished (its reply read): the parent's record of
 * it, then whether the worker goes on.
 */
/*
 * Jobs taken back from workers that will not run them (a worker retired
 * or dead with its next case in its pipe): they go out again first.
 */
typedef struct backlog {
	size_t *k;
	size_t n;
} backlog;

/*
 * Retires worker s, which may hold a next case in its pipe: then it is
 * killed (it would run that case before it saw its pipe close) and the
 * case taken back.
 */
static void worker_end(slot *s, backlog *b, size_t *running)
{
	if (!s->queued) {
		worker_retire(s);
		return;
	}
	kill(s->pid, SIGKILL);
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
	}
	b->k[b->n++] = s->k2;
	if (s->busy)
		(*running)--;
	worker_gone(s);
}

static void case_done(const usc__batch_pool *p, committer *c, slot *s,
		      int rc, char *text, size_t len, size_t *running,
		      backlog *b)
{
	size_t per = p->cases_per_worker ? p->cases_per_worker
					 : USC__BATCH_CASES_PER_WORKER;
	double mb, now = usc__batch_now(), seconds = now - s->start;
	size_t k = s->k;

	s->cases++;
	if (s->queued) {
		/* It has gone on with its next case already. */
		s->k = s->k2;
		s->queued = false;
		s->start = now;
		s->timed_out = s->over_memory = false;
	} else {
		s->busy = false;
		(*running)--;
	}
	if (rc != 0) {
		usc__free(text);
		text = NULL;
	}
	finish(p, c, k, text, len, USC__BATCH_END_EXIT, rc, seconds);
	if (rc != 0) {
		if (s->busy) {
			/* (Its case goes out again: the worker is not
			 * trusted with it.) */
			s->queued = true;
			s->k2 = s->k;
		}
		worker_end(s, b, running);
		return;
	}
	if (s->cases >= per && !s->busy) {
		worker_retire(s);
		return;
	}
	mb = resident_mb(s->pid);
	if (s->cases == 1)
		s->base_mb = mb;
	if (mb < 0 || mb > s->base_mb + USC__BATCH_RSS_GROWTH_MB ||
	    (p->memory_mb && mb > 0.5 * (double)p->memory_mb)) {
		if (s->busy) {
			s->queued = true;
			s->k2 = s->k;
		}
		worker_end(s, b, running);
	}
}

/*
 * The next job into *k: one taken back first, else p->next's; false
 * when there is none now (*later) or none left (*more false).
 */
static bool take(const usc__batch_pool *p, backlog *b, size_t *k, bool *more,
		 bool *later)
{
	usc__batch_next n;

	if (b->n) {
		*k = b->k[--b->n];
		return true;
	}
	if (!*more)
		return false;
	n = p->next(p->ctx, k);
	if (n == USC__BATCH_NEXT_LATER)
		*later = true;
	if (n == USC__BATCH_NEXT_NONE)
		*more = false;
	return n == USC__BATCH_NEXT_JOB;
}

usc_status usc__batch_pool_run(const usc__batch_pool *p, usc_error *err)
{
	struct sigaction sa, old_chld, old_int, old_term, old_pipe;
	size_t jobs = p->jobs ? p->jobs : 1, running = 0, k = 0;
	size_t per = p->cases_per_worker ? p->cases_per_worker
					 : USC__BATCH_CASES_PER_WORKER;
	bool more = true, have = false, later = false;
	bool ahead = p->memory_mb == 0;
	backlog back;
	size_t pending = 0; /* cases finished, not yet committed */
	committer c;
	double interval = p->tick_interval > 0 ? p->tick_interval : 1;
	double last_tick = usc__batch_now();
	usc_status st = USC_OK;
	struct pollfd *pfd;
	slot *s;

	s = usc__calloc(jobs, sizeof *s);
	pfd = usc__calloc(jobs + 1, sizeof *pfd);
	back.k = usc__calloc(jobs + 1, sizeof *back.k);
	back.n = 0;
	if (!s || !pfd || !back.k) {
		usc__free(s);
		usc__free(pfd);
		usc__free(back.k);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (pipe(wake_fd) != 0) {
		usc__free(s);
		usc__free(pfd);
		return usc__fail(err, USC_EINTERNAL, "cannot make a pipe: %s",
				 strerror(errno));
	}
	for (int i = 0; i < 2; i++) {
		fcntl(wake_fd[i], F_SETFL, O_NONBLOCK);
		fcntl(wake_fd[i], F_SETFD, FD_CLOEXEC);
	}
	interrupted = 0;
	memset(&c, 0, sizeof c);
	c.p = p;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	/* Without the thread, finish commits each case itself before the
	 * next one starts.  With it, no worker is forked before the thread
	 * is past its start-up (fork_mu, above). */
	c.started = pthread_create(&c.thread, NULL, commit_main, &c) == 0;
	if (c.started) {
		pthread_mutex_lock(&c.mu);
		while (!c.running)
			pthread_cond_wait(&c.cv, &c.mu);
		pthread_mutex_unlock(&c.mu);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, &old_chld);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* A worker that died idle is seen by waitpid, not by a SIGPIPE
	 * that would end the batch when it is sent its next case. */
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, &old_pipe);

	while (more || have || back.n || running > 0 || pending > 0) {
		double now, wait_s = interval;
		size_t npfd = 0;
		char drain[64];
		int status;
		pid_t pid;

		if (interrupted) {
			kill_all(s, jobs);
			st = usc__fail(err, USC_EIO,
				       "interrupted by signal %d; the cases "
				       "that finished are kept, run the same "
				       "command again to go on",
				       (int)interrupted);
			break;
		}
		if (p->serve)
			p->serve(p->ctx);
		/* Give idle workers (or fresh ones) work while there is some. */
		later = false;
		while (running < jobs && (more || have || back.n)) {
			size_t i = 0;
			bool fresh;

			if (!have && !take(p, &back, &k, &more, &later))
				break;
			have = true;
			/* An idle worker first, else an empty slot. */
			while (i < jobs && !(s[i].pid > 0 && !s[i].busy))
				i++;
			fresh = i == jobs;
			if (fresh) {
				i = 0;
				while (s[i].pid > 0)
					i++;
				if (!worker_start(p, s, jobs, i)) {
					st = usc__fail(err, USC_EINTERNAL,
						       "cannot start a worker "
						       "process: %s",
						       strerror(errno));
					break;
				}
			}
			if (!write_all(s[i].cmd, &k, sizeof k)) {
				/* The worker died: an idle one is replaced
				 * and the case goes to its successor; a
				 * fresh one that cannot take a case is an
				 * error of the batch. */
				int e = errno;

				kill(s[i].pid, SIGKILL);
				while (waitpid(s[i].pid, NULL, 0) < 0 &&
				       errno == EINTR) {
				}
				worker_gone(&s[i]);
				if (!fresh)
					continue;
				st = usc__fail(err, USC_EINTERNAL,
					       "a new worker process did not "
					       "take its case: %s",
					       strerror(e));
				break;
			}
			s[i].k = k;
			s[i].start = usc__batch_now();
			s[i].timed_out = false;
			s[i].over_memory = false;
			s[i].busy = true;
			have = false;
			running++;
		}
		if (st != USC_OK) {
			kill_all(s, jobs);
			break;
		}
		/* Each busy worker's next case, into its pipe (not under a
		 * memory limit, where a worker is looked at between cases,
		 * nor past its quota of cases). */
		for (size_t i = 0; ahead && !later && i < jobs; i++) {
			/* (Not answered yet under MPI: asked again when a
			 * case ends, not every millisecond.) */
			bool not_yet = false;

			if (s[i].pid <= 0 || !s[i].busy || s[i].queued ||
			    s[i].timed_out || s[i].over_memory ||
			    s[i].cases + 2 > per)
				continue;
			if (!have && !take(p, &back, &k, &more, &not_yet))
				break;
			have = true;
			if (!write_all(s[i].cmd, &k, sizeof k))
				continue; /* (it died: reaped below) */
			s[i].queued = true;
			s[i].k2 = k;
			have = false;
		}
		/* The replies of the cases that finished. */
		for (size_t i = 0; i < jobs; i++) {
			struct pollfd one = {s[i].reply, POLLIN, 0};
			char *text = NULL;
			size_t len = 0;
			int rc;

			if (s[i].pid <= 0 || !s[i].busy || s[i].timed_out ||
			    s[i].over_memory || poll(&one, 1, 0) <= 0 ||
			    !(one.revents & POLLIN))
				continue;
			if (read_reply(s[i].reply, &rc, &text, &len))
				case_done(p, &c, &s[i], rc, text, len,
					  &running, &back);
			else /* (reaped below, as a crash) */
				kill(s[i].pid, SIGKILL);
		}
		/* The cases committed meanwhile; with no case running, what
		 * the committer holds goes now. */
		pending = commit_collect(&c);
		commit_hurry(&c, running == 0);
		/* Reap every worker that ended. */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (size_t i = 0; i < jobs; i++) {
				usc__batch_end how;
				int code;

				if (s[i].pid != pid)
					continue;
				if (!s[i].busy) {
					/* Died idle (it had finished its
					 * case): nothing to record. */
					worker_gone(&s[i]);
					break;
				}
				if (s[i].timed_out) {
					how = USC__BATCH_END_TIMEOUT;
					code = 0;
				} else if (s[i].over_memory) {
					how = USC__BATCH_END_MEMORY;
					code = 0;
				} else if (WIFSIGNALED(status)) {
					how = USC__BATCH_END_SIGNAL;
					code = WTERMSIG(status);
				} else {
					how = USC__BATCH_END_EXIT;
					code = WEXITSTATUS(status);
				}
				running--;
				finish(p, &c, s[i].k, NULL, 0, how, code,
				       usc__batch_now() - s[i].start);
				/* Its next case goes to another worker. */
				if (s[i].queued)
					back.k[back.n++] = s[i].k2;
				worker_gone(&s[i]);
				break;
			}
		}
		if ((more || have || back.n) && running < jobs && !later)
			continue;
		/* Kill what ran past its time; sleep until the next event. */
		now = usc__batch_now();
		for (size_t i = 0; i < jobs; i++) {
			double left;

			if (p->memory_mb && wait_s > 0.1)
				wait_s = 0.1;
			if (s[i].pid <= 0 || !s[i].busy || s[i].timed_out ||
			    s[i].over_memory)
				continue;
			pfd[npfd].fd = s[i].reply;
			pfd[npfd].events = POLLIN;
			pfd[npfd].revents = 0;
			npfd++;
			if (p->memory_mb &&
			    resident_mb(s[i].pid) > (double)p->memory_mb) {
				kill(s[i].pid, SIGKILL);
				s[i].over_memory = true;
				continue;
			}
			if (p->timeout <= 0)
				continue;
			left = s[i].start + p->timeout - now;
			if (left <= 0) {
				kill(s[i].pid, SIGKILL);
				s[i].timed_out = true;
			} else if (left < wait_s) {
				wait_s = left;
			}
		}
		if (now - last_tick >= interval) {
			p->tick(p->ctx, running, false);
			last_tick = now;
		}
		if (running == 0 && !more && !have && back.n == 0 &&
		    pending == 0)
			break;
		/* Rank 0 answers the other ranks, and another rank asks
		 * again, within a millisecond (mpi.c). */
		if ((p->serve || later) && wait_s > 0.001)
			wait_s = 0.001;
		pfd[npfd].fd = wake_fd[0];
		pfd[npfd].events = POLLIN;
		pfd[npfd].revents = 0;
		if (poll(pfd, npfd + 1, (int)(wait_s * 1000 + 0.999)) > 0 &&
		    (pfd[npfd].revents & POLLIN))
			while (read(wake_fd[0], drain, sizeof drain) > 0) {
			}
	}
	/* What finished is committed, even when the batch was interrupted. */
	commit_finish(&c);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	usc__free(c.work);
	/* The workers left idle: their command pipes close and they exit. */
	for (size_t i = 0; i < jobs; i++)
		if (s[i].pid > 0)
			worker_retire(&s[i]);
	sigaction(SIGCHLD, &old_chld, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	close(wake_fd[0]);
	close(wake_fd[1]);
	wake_fd[0] = wake_fd[1] = -1;
	if (st == USC_OK)
		p->tick(p->ctx, 0, true);
	usc__free(pfd);
	usc__free(s);
	usc__free(back.k);
	return st;
}
