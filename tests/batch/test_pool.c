/*
 * The batch's worker pool (src/batch/pool.c), started again and again:
 * the moment it forks its first workers.
 *
 * The pool forks workers from a process with a second thread, its
 * committer.  A worker forked while that thread held a lock inside a
 * library inherits the lock held and waits for it forever.  Under
 * AddressSanitizer the committer's own start-up (before its function
 * runs) takes the allocator's lock for its 8 KiB chunks, and workers
 * forked meanwhile hung at their first allocation of that size
 * (docs/batch.md, "Committing a case").  So the pool forks no worker
 * before the committer is past its start-up, which every worker checks
 * here in the state it inherited (usc__batch_pool_committer_started): a
 * pool that forks at once fails that check within its first few starts,
 * on any build.  Every worker's case also allocates from every size class
 * up to 64 KiB, so that a worker that inherited an allocator lock held
 * hangs; the pool's case timeout turns such a hang into a case that ended
 * badly, which the test reports, instead of a test that never ends.
 *
 * Every case must come back through the pool's callbacks exactly once,
 * with the row its worker wrote (the case's number, in text), committed
 * before it is counted ended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "test_util.h"
#include "batch/batch_internal.h"

/* Pools started; USC_TEST_SCALE multiplies them. */
#define POOLS 60
/* Cases per pool, and workers. */
#define CASES 4
#define JOBS 2

typedef struct state {
	size_t given;            /* cases handed out by next */
	int committed[CASES];    /* times commit saw each case */
	int ended[CASES];        /* times ended saw each case */
	int ended_ok[CASES];     /* ... with the worker's own row */
	char why[256];           /* the first case that ended badly */
} state;

static usc__batch_next next(void *ctx, size_t *k)
{
	state *s = ctx;

	if (s->given == CASES)
		return USC__BATCH_NEXT_NONE;
	*k = s->given++;
	return USC__BATCH_NEXT_JOB;
}

/*
 * In the worker: an allocation of every size class up to 64 KiB (sizes
 * a quarter apart), freed, then the row "case K".
 */
static int child(void *ctx, size_t k, char **text, size_t *len)
{
	char buf[32];
	int n;

	(void)ctx;
	if (!usc__batch_pool_committer_started())
		return 3;
	for (size_t size = 8; size <= 65536; size += size / 4 + 8) {
		char *p = usc__malloc(size);

		if (!p)
			return 2;
		p[0] = p[size - 1] = 1;
		usc__free(p);
	}
	n = snprintf(buf, sizeof buf, "case %zu", k);
	*text = usc__malloc((size_t)n);
	if (!*text)
		return 2;
	memcpy(*text, buf, (size_t)n);
	*len = (size_t)n;
	return 0;
}

static void describe(void *ctx, size_t k, usc__batch_end how, int code,
		     double seconds, char **text, size_t *len)
{
	state *s = ctx;

	(void)seconds;
	if (!s->why[0])
		snprintf(s->why, sizeof s->why,
			 "case %zu ended without its row: how %d, code %d "
			 "(how %d, code 3: its worker was forked before the "
			 "committer thread had started; how %d: it timed out, "
			 "as a worker that inherited a lock held would)",
			 k, (int)how, code, (int)USC__BATCH_END_EXIT,
			 (int)USC__BATCH_END_TIMEOUT);
	*text = usc__malloc(6);
	if (*text)
		memcpy(*text, "failed", 6);
	*len = *text ? 6 : 0;
}

static void commit(void *ctx, const size_t *ks, char *const *texts,
		   const size_t *lens, size_t n, int *errs)
{
	state *s = ctx;

	(void)texts;
	(void)lens;
	for (size_t i = 0; i < n; i++) {
		s->committed[ks[i]]++;
		errs[i] = 0;
	}
}

static void ended(void *ctx, size_t k, char *text, size_t len, int err,
		  double seconds)
{
	state *s = ctx;
	char want[32];
	int n = snprintf(want, sizeof want, "case %zu", k);

	(void)seconds;
	s->ended[k]++;
	/* Committed first, then ended. */
	if (s->committed[k] != s->ended[k] && !s->why[0])
		snprintf(s->why, sizeof s->why,
			 "case %zu ended before it was committed", k);
	if (err == 0 && text && len == (size_t)n &&
	    memcmp(text, want, len) == 0)
		s->ended_ok[k]++;
}

static void tick(void *ctx, size_t running, bool last)
{
	(void)ctx;
	(void)running;
	(void)last;
}

static void test_pool_starts(void **unused)
{
	(void)unused;
	for (long r = 0; r < POOLS * usc_test_scale(); r++) {
		usc__batch_pool p;
		state s;
		usc_error err;

		memset(&s, 0, sizeof s);
		memset(&p, 0, sizeof p);
		p.jobs = JOBS;
		/* A watchdog, not a measurement: a worker's case takes
		 * milliseconds, a hung one for ever. */
		p.timeout = 60;
		/* A fresh worker for every case: more forks per pool. */
		p.cases_per_worker = 1;
		p.next = next;
		p.child = child;
		p.describe = describe;
		p.commit = commit;
		p.ended = ended;
		p.tick = tick;
		p.tick_interval = 1;
		p.ctx = &s;
		if (usc__batch_pool_run(&p, &err) != USC_OK)
			fail_msg("pool %ld: %s", r, err.message);
		if (s.why[0])
			fail_msg("pool %ld: %s", r, s.why);
		for (size_t k = 0; k < CASES; k++)
			if (s.ended[k] != 1 || s.ended_ok[k] != 1 ||
			    s.committed[k] != 1)
				fail_msg("pool %ld, case %zu: ended %d times "
					 "(%d with its row), committed %d "
					 "times; expected once each",
					 r, k, s.ended[k], s.ended_ok[k],
					 s.committed[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_starts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
