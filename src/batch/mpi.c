/*
 * A batch over MPI ranks (docs/batch.md, "MPI"): the only file that
 * includes <mpi.h>, and it does so only when the build found an MPI
 * (USC_HAVE_MPI); otherwise every function here says "one rank".
 *
 * Rank 0 owns the batch: it discovers, sets up the work directory, and
 * hands out cases one at a time to whichever rank asks (dynamic
 * distribution: a rank keeps AHEAD requests out, so that the answer to
 * the next one comes while its case runs), while running cases of its
 * own.
 *
 * No rank waits inside a blocking MPI call: Open MPI's blocking calls
 * poll the network in a loop, each keeping a core busy that the
 * ranks' worker processes need (two ranks of one worker each took
 * twice the time of one rank of two workers on two cores).  A rank
 * waiting for an answer tests for it and sleeps in between instead
 * (wait_idle), and rank 0 answers requests at least every millisecond
 * from its pool's loop.  Every rank checks its cases in its own worker processes
 * and writes their row files into the shared work directory; rank 0
 * writes the index from all of them once every rank is done.  MPI is
 * started only when the process was launched by an MPI launcher (its
 * environment says so), so that a plain "ulpscope batch" never starts an
 * MPI runtime.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "batch/batch_internal.h"

#ifdef USC_HAVE_MPI
#include <time.h>

#include <mpi.h>

enum { TAG_REQUEST = 1, TAG_JOB = 2, TAG_STATUS = 3 };

static bool started;     /* this file called MPI_Init */
static int my_rank, ranks = 1;
static int told_none;    /* rank 0: ranks told there is no more work */
static uint64_t *tally;  /* rank 0: each rank's counts, ranks * 4 */

/*
 * Requests a rank other than 0 keeps out: two, so that one answer is
 * in hand when a case ends even when rank 0 is slow to answer the
 * next (at the end of the batch, at most one case waits in another
 * rank's hand while rank 0 could have run it: the smallest ones come
 * last).
 */
#define AHEAD 2
static MPI_Request asked[AHEAD]; /* the requests out, oldest at head */
static int64_t answers[AHEAD];
static int head, outstanding;
static bool heard_none;          /* rank 0 answered "none" */

/* Waits for r to complete, testing it every half millisecond. */
static void wait_idle(MPI_Request *r)
{
	const struct timespec nap = {0, 500000};
	int done = 0;

	for (;;) {
		MPI_Test(r, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		nanosleep(&nap, NULL);
	}
}

/* Whether an MPI launcher started this process. */
static bool launched(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
		"MPI_LOCALNRANKS"};

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]))
			return true;
	return false;
}

usc_status usc__batch_mpi_start(int *rank, int *size, usc_error *err)
{
	int init = 0;

	*rank = 0;
	*size = 1;
	if (!launched())
		return USC_OK;
	/*
	 * Open MPI chooses its point-to-point layer by opening and probing
	 * every one it has (UCX, the MTL-based cm, ob1): 0.2 s of a 0.28 s
	 * MPI_Init on every rank of Debian's Open MPI 4.1, against 0.07 s
	 * with ob1 named (docs/performance-history.md, "Batch").  A batch sends a
	 * few dozen bytes per case, for which Open MPI's own layer (ob1,
	 * over shared memory or TCP) is as good as any.  So ob1 is the
	 * default here; a user's choice (mpirun --mca pml ..., or
	 * OMPI_MCA_pml) stays.
	 */
	if (getenv("OMPI_COMM_WORLD_SIZE"))
		setenv("OMPI_MCA_pml", "ob1", 0);
	MPI_Initialized(&init);
	if (!init) {
		if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
			return usc__fail(err, USC_EINTERNAL,
					 "MPI_Init failed: the batch was "
					 "launched by an MPI launcher, but MPI "
					 "cannot start");
		started = true;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	told_none = 0;
	head = outstanding = 0;
	heard_none = false;
	usc__free(tally);
	tally = usc__calloc((size_t)ranks * 4, sizeof *tally);
	if (!tally)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	*rank = my_rank;
	*size = ranks;
	return USC_OK;
}

void usc__batch_mpi_end(void)
{
	usc__free(tally);
	tally = NULL;
	if (started) {
		/* Rank 0 may still be writing the index: the others wait
		 * here asleep rather than in MPI_Finalize. */
		usc__batch_mpi_barrier();
		MPI_Finalize();
		started = false;
	}
}

usc_status usc__batch_mpi_share_status(usc_status st, uint64_t *run,
				       usc_error *err)
{
	struct {
		uint64_t run;
		int code;
		char message[USC_ERROR_MESSAGE_SIZE];
	} m;

	if (ranks == 1)
		return st;
	memset(&m, 0, sizeof m);
	m.code = (int)st;
	m.run = *run;
	if (my_rank == 0 && st != USC_OK && err)
		memcpy(m.message, err->message, sizeof m.message);
	{
		MPI_Request r;

		MPI_Ibcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
		wait_idle(&r);
	}
	*run = m.run;
	if (my_rank != 0 && m.code != USC_OK && err) {
		err->code = (usc_status)m.code;
		memcpy(err->message, m.message, sizeof m.message);
	}
	return (usc_status)m.code;
}

void usc__batch_mpi_barrier(void)
{
	MPI_Request r;

	if (ranks > 1) {
		MPI_Ibarrier(MPI_COMM_WORLD, &r);
		wait_idle(&r);
	}
}

/*
 * A rank other than 0 keeps AHEAD requests out, asking for another as
 * soon as it takes a case, so that rank 0's answers (given between its
 * own cases, every millisecond at most) arrive while this rank's cases
 * run.  Answers come in the order of the requests.  Once rank 0 answers
 * "none", it answers every request still out "none" too; they are taken
 * before this rank goes on, so that rank 0 counts AHEAD of them for
 * every rank when all are done.  The counts sent with a request are
 * this rank's when it asked; they only feed rank 0's progress line.
 */
static void ask_one(const usc_batch_progress *p)
{
	uint64_t msg[4] = {p->done - p->resumed, p->defects, p->suspicious,
			   p->failed};
	int slot = (head + outstanding) % AHEAD;

	MPI_Send(msg, 4, MPI_UINT64_T, 0, TAG_REQUEST, MPI_COMM_WORLD);
	MPI_Irecv(&answers[slot], 1, MPI_INT64_T, 0, TAG_JOB, MPI_COMM_WORLD,
		  &asked[slot]);
	outstanding++;
}

usc__batch_next usc__batch_mpi_request(const usc_batch_progress *p,
				       size_t *k, bool wait)
{
	int64_t job;
	int done = 0;

	if (heard_none)
		return USC__BATCH_NEXT_NONE;
	while (outstanding < AHEAD)
		ask_one(p);
	if (wait) {
		wait_idle(&asked[head]);
	} else {
		MPI_Test(&asked[head], &done, MPI_STATUS_IGNORE);
		if (!done)
			return USC__BATCH_NEXT_LATER;
	}
	job = answers[head];
	head = (head + 1) % AHEAD;
	outstanding--;
	if (job < 0) {
		heard_none = true;
		for (; outstanding > 0; outstanding--) {
			wait_idle(&asked[head]);
			head = (head + 1) % AHEAD;
		}
		return USC__BATCH_NEXT_NONE;
	}
	ask_one(p);
	*k = (size_t)job;
	return USC__BATCH_NEXT_JOB;
}

void usc__batch_mpi_serve(bool (*pop)(void *ctx, size_t *k), void *ctx,
			  usc_batch_progress *p)
{
	int flag = 1;

	while (ranks > 1) {
		MPI_Status s;
		uint64_t msg[4];
		int64_t job = -1;
		size_t k;

		MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &flag,
			   &s);
		if (!flag)
			break;
		MPI_Recv(msg, 4, MPI_UINT64_T, s.MPI_SOURCE, TAG_REQUEST,
			 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		/* Another rank's counts, for rank 0's progress line. */
		for (int i = 0; i < 4; i++) {
			uint64_t *t = &tally[(size_t)s.MPI_SOURCE * 4 + i];
			size_t add = (size_t)(msg[i] - *t);

			if (i == 0)
				p->done += add;
			else if (i == 1)
				p->defects += add;
			else if (i == 2)
				p->suspicious += add;
			else
				p->failed += add;
			*t = msg[i];
		}
		if (pop(ctx, &k))
			job = (int64_t)k;
		else
			told_none++;
		MPI_Send(&job, 1, MPI_INT64_T, s.MPI_SOURCE, TAG_JOB,
			 MPI_COMM_WORLD);
	}
}

bool usc__batch_mpi_others_done(void)
{
	return told_none >= AHEAD * (ranks - 1);
}

#else /* one rank */

usc_status usc__batch_mpi_start(int *rank, int *size, usc_error *err)
{
	(void)err;
	*rank = 0;
	*size = 1;
	return USC_OK;
}

void usc__batch_mpi_end(void)
{
}

usc_status usc__batch_mpi_share_status(usc_status st, uint64_t *run,
				       usc_error *err)
{
	(void)run;
	(void)err;
	return st;
}

void usc__batch_mpi_barrier(void)
{
}

usc__batch_next usc__batch_mpi_request(const usc_batch_progress *p,
				       size_t *k, bool wait)
{
	(void)p;
	(void)k;
	(void)wait;
	return USC__BATCH_NEXT_NONE;
}

void usc__batch_mpi_serve(bool (*pop)(void *ctx, size_t *k), void *ctx,
			  usc_batch_progress *p)
{
	(void)pop;
	(void)ctx;
	(void)p;
}

bool usc__batch_mpi_others_done(void)
{
	return true;
}

#endif
