/*
 * A batch over MPI ranks (docs/batch.md, "MPI"): the only file that
 * includes <mpi.h>, and it does so only when the build found an MPI
 * (USC_HAVE_MPI); otherwise every function here says "one rank".
 *
 * Rank 0 owns the batch: it discovers, sets up the work directory, and
 * hands out cases one at a time to whichever rank asks (dynamic
 * distribution: a rank that takes a case asks for its next one at once,
 * so that the answer comes while the case runs), while running cases of
 * its own.  Every rank checks its cases in its own worker processes
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
#include <mpi.h>

enum { TAG_REQUEST = 1, TAG_JOB = 2, TAG_STATUS = 3 };

static bool started;     /* this file called MPI_Init */
static int my_rank, ranks = 1;
static int told_none;    /* rank 0: ranks told there is no more work */
static uint64_t *tally;  /* rank 0: each rank's counts, ranks * 4 */

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
		MPI_Finalize();
		started = false;
	}
}

usc_status usc__batch_mpi_share_status(usc_status st, usc_error *err)
{
	struct {
		int code;
		char message[USC_ERROR_MESSAGE_SIZE];
	} m;

	if (ranks == 1)
		return st;
	memset(&m, 0, sizeof m);
	m.code = (int)st;
	if (my_rank == 0 && st != USC_OK && err)
		memcpy(m.message, err->message, sizeof m.message);
	MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (my_rank != 0 && m.code != USC_OK && err) {
		err->code = (usc_status)m.code;
		memcpy(err->message, m.message, sizeof m.message);
	}
	return (usc_status)m.code;
}

void usc__batch_mpi_barrier(void)
{
	if (ranks > 1)
		MPI_Barrier(MPI_COMM_WORLD);
}

/*
 * A rank other than 0 asks for its next case as soon as it takes one, so
 * that rank 0's answer (given between its own cases, every 10 ms at
 * most) arrives while this rank's case runs: the case in hand is the
 * answer to the request before.  The counts sent with a request are
 * this rank's when it asked, one case behind; they only feed rank 0's
 * progress line.
 */
static MPI_Request next_recv = MPI_REQUEST_NULL;
static int64_t next_job;

static void ask_next(const usc_batch_progress *p)
{
	uint64_t msg[4] = {p->done - p->resumed, p->defects, p->suspicious,
			   p->failed};

	MPI_Send(msg, 4, MPI_UINT64_T, 0, TAG_REQUEST, MPI_COMM_WORLD);
	MPI_Irecv(&next_job, 1, MPI_INT64_T, 0, TAG_JOB, MPI_COMM_WORLD,
		  &next_recv);
}

bool usc__batch_mpi_request(const usc_batch_progress *p, size_t *k)
{
	int64_t job;

	if (next_recv == MPI_REQUEST_NULL)
		ask_next(p);
	MPI_Wait(&next_recv, MPI_STATUS_IGNORE);
	job = next_job;
	if (job < 0)
		return false; /* rank 0 has no more: ask no more */
	ask_next(p);
	*k = (size_t)job;
	return true;
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
	return told_none >= ranks - 1;
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

usc_status usc__batch_mpi_share_status(usc_status st, usc_error *err)
{
	(void)err;
	return st;
}

void usc__batch_mpi_barrier(void)
{
}

bool usc__batch_mpi_request(const usc_batch_progress *p, size_t *k)
{
	(void)p;
	(void)k;
	return false;
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
