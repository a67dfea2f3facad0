/*
 * The batch's worker pool (docs/batch.md, "Isolation"): every case runs
 * in a child process of its own, forked for it, so a crash, a runaway
 * allocation or a hang ends that case alone and the next one starts in a
 * clean process.  The parent only forks, waits and kills: it sleeps in
 * poll() on a pipe that its SIGCHLD handler writes to, waking for a child
 * that ended, a timeout that expired or the next progress tick.
 *
 * A memory limit is kept two ways.  The parent reads each child's
 * resident set from /proc every tenth of a second and kills a child past
 * the limit; and the child's address space is capped at the limit plus
 * USC__BATCH_AS_SLACK, so that an allocation too big to wait for (a
 * declared 6 GiB tensor) fails at once, as out of memory, in the child.
 * The cap is not the limit itself because address space is not memory:
 * thread stacks and OpenBLAS's buffers reserve far more than they touch,
 * and OpenBLAS waits for ever when its buffer cannot be mapped.
 */
#define _GNU_SOURCE /* prctl */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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

typedef struct slot {
	pid_t pid;
	size_t k;        /* the job */
	double start;
	bool timed_out;
	bool over_memory;
} slot;

/* The resident set of a process in MiB, or -1 when unknown. */
static double resident_mb(pid_t pid)
{
	char path[64], buf[128];
	unsigned long long size, resident;
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof buf, f) &&
	     sscanf(buf, "%llu %llu", &size, &resident) == 2;
	fclose(f);
	if (!ok)
		return -1;
	return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/* Sets the child's limits and signal dispositions, then runs the job. */
static void child_main(const usc__batch_pool *p, size_t k, pid_t parent)
{
	struct sigaction sa;
	int rc;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	close(wake_fd[0]);
	close(wake_fd[1]);
#ifdef __linux__
	/* A batch killed with -9 takes its cases with it; one that died
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
	rc = p->child(p->ctx, k);
	_exit(rc);
}

static void kill_all(slot *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].pid > 0)
			kill(s[i].pid, SIGKILL);
	for (size_t i = 0; i < n; i++)
		if (s[i].pid > 0)
			waitpid(s[i].pid, NULL, 0);
}

usc_status usc__batch_pool_run(const usc__batch_pool *p, usc_error *err)
{
	struct sigaction sa, old_chld, old_int, old_term;
	size_t jobs = p->jobs ? p->jobs : 1, running = 0, k = 0;
	bool more = true, have = false;
	double interval = p->tick_interval > 0 ? p->tick_interval : 1;
	double last_tick = usc__batch_now();
	usc_status st = USC_OK;
	slot *s;

	s = usc__calloc(jobs, sizeof *s);
	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	if (pipe(wake_fd) != 0) {
		usc__free(s);
		return usc__fail(err, USC_EINTERNAL, "cannot make a pipe: %s",
				 strerror(errno));
	}
	for (int i = 0; i < 2; i++) {
		fcntl(wake_fd[i], F_SETFL, O_NONBLOCK);
		fcntl(wake_fd[i], F_SETFD, FD_CLOEXEC);
	}
	interrupted = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, &old_chld);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	while (more || running > 0) {
		struct pollfd pfd = {wake_fd[0], POLLIN, 0};
		double now = usc__batch_now(), wait_s = interval;
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
		/* Start jobs while there is room and work. */
		while (running < jobs && more) {
			size_t i = 0;

			if (!have && !(have = p->next(p->ctx, &k))) {
				more = false;
				break;
			}

			while (s[i].pid > 0)
				i++;
			pid_t self = getpid();

			pid = fork();
			if (pid < 0) {
				st = usc__fail(err, USC_EINTERNAL,
					       "cannot start a worker process: "
					       "%s",
					       strerror(errno));
				break;
			}
			if (pid == 0)
				child_main(p, k, self);
			s[i].pid = pid;
			s[i].k = k;
			have = false;
			s[i].start = usc__batch_now();
			s[i].timed_out = false;
			s[i].over_memory = false;
			running++;
		}
		if (st != USC_OK) {
			kill_all(s, jobs);
			break;
		}
		/* Reap every child that ended. */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (size_t i = 0; i < jobs; i++) {
				usc__batch_end how;
				int code;

				if (s[i].pid != pid)
					continue;
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
				s[i].pid = 0;
				running--;
				p->ended(p->ctx, s[i].k, how, code,
					 usc__batch_now() - s[i].start);
				break;
			}
		}
		if (more && running < jobs)
			continue;
		/* Kill what ran past its time; sleep until the next event. */
		now = usc__batch_now();
		for (size_t i = 0; i < jobs; i++) {
			double left;

			if (s[i].pid > 0 && p->memory_mb && !s[i].timed_out &&
			    !s[i].over_memory &&
			    resident_mb(s[i].pid) > (double)p->memory_mb) {
				kill(s[i].pid, SIGKILL);
				s[i].over_memory = true;
			}
			if (p->memory_mb && wait_s > 0.1)
				wait_s = 0.1;
			if (s[i].pid <= 0 || p->timeout <= 0 || s[i].timed_out ||
			    s[i].over_memory)
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
		if (running == 0 && !more)
			break;
		if (p->serve && wait_s > 0.01)
			wait_s = 0.01;
		if (poll(&pfd, 1, (int)(wait_s * 1000) + 1) > 0)
			while (read(wake_fd[0], drain, sizeof drain) > 0) {
			}
	}
	sigaction(SIGCHLD, &old_chld, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	close(wake_fd[0]);
	close(wake_fd[1]);
	wake_fd[0] = wake_fd[1] = -1;
	if (st == USC_OK)
		p->tick(p->ctx, 0, true);
	usc__free(s);
	return st;
}
