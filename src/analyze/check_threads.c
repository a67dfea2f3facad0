/*
 * The pieces of a streamed check on several threads (docs/check.md,
 * "Threads").
 *
 * Each worker thread has evaluators of its own (reference, tier, oracle
 * levels, envelope) and evaluates whole pieces in every domain into part
 * arrays of its own; the calling thread folds the pieces into the report
 * and the result file strictly in piece order.  Everything a fold adds up
 * or keeps (the statistics accumulators, the worst lists, the verdict's
 * element, the result file's rows) therefore sees the same pieces in the
 * same order as on one thread, and the report and the result file are the
 * same bit for bit.  Only the calling thread touches the result file (and
 * so HDF5, which is not built thread-safe here) and the report's outputs.
 *
 * Piece k goes to worker k mod N, which keeps two sets of part arrays
 * (slots) and uses them in turn: it computes its next piece while the
 * calling thread folds the previous one.  A worker waits only for the
 * fold of the piece that last used the slot, which comes before the
 * piece the calling thread waits for, so nothing can wait in a circle.
 *
 * What a worker may not know: on one thread, piece 0 decides for every
 * later piece whether the tier and the envelope run at all (a kernel they
 * refuse).  Workers begin later pieces before piece 0 is done, so when
 * piece 0 finds such a refusal the threaded check is abandoned and runs
 * again on one thread (c->serial); a refusal on a later piece restarts
 * the check whole, as on one thread (c->restart).
 *
 * MPFR and GMP: the oracle, the MPFR reference path and the MPFR envelope
 * run on the workers.  Debian's MPFR is built thread-safe (its exponent
 * range, flags and constant caches are thread-local); every MPFR number
 * here belongs to one evaluator, hence to one thread, and a worker frees
 * its thread's MPFR caches before it ends.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>
#include <mpfr.h>

#include "analyze/check_internal.h"

/* Part sets per worker: one being folded while the next is computed. */
#define SLOTS 2

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

/* One set of part arrays of a worker and what its piece came to. */
typedef struct slot {
	int state;
	size_t piece;
	usc__check_part *parts; /* one per output */
	/*
	 * Per output, what a piece adds to the report's output while it is
	 * computed (the class counts, oracle_elements), with the device
	 * output it reads: the parts point here until they are folded.
	 */
	usc_check_output *shadow;
	usc_status st;
	bool restart, serial;
	usc_error err;
} slot;

struct pool;

typedef struct worker {
	struct pool *pool;
	size_t index;
	usc__check_run run;   /* its evaluators; run.r is rep */
	usc_check_report rep; /* the report as it reads it, its own counts */
	usc_tensor **row_in;  /* its block's inputs (kernels of rows) */
	slot slots[SLOTS];
	pthread_t thread;
	bool started;
} worker;

typedef struct pool {
	usc__check_run *c; /* the calling thread's run, which folds */
	size_t nworkers, npieces;
	worker *w;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
} pool;

/* Sets up and computes piece k on a worker, into slot s. */
static void compute(worker *w, slot *s, size_t k)
{
	usc__check_run *c = &w->run;
	bool tier_off = c->tier_off, env_refused = c->env_refused;

	c->parts = s->parts;
	memset(&s->err, 0, sizeof s->err);
	s->st = usc__check_piece_setup(c, k, &s->err);
	if (s->st == USC_OK)
		s->st = usc__check_piece_compute(c, k == 0, &s->err);
	s->restart = c->restart;
	s->serial = k == 0 && (c->tier_off != tier_off ||
			       c->env_refused != env_refused);
}

static void *work(void *arg)
{
	worker *w = arg;
	pool *pl = w->pool;
	size_t j = 0;

	for (size_t k = w->index; k < pl->npieces; k += pl->nworkers, j++) {
		slot *s = &w->slots[j % SLOTS];
		bool stop;

		pthread_mutex_lock(&pl->mu);
		while (s->state != SLOT_FREE && !pl->stop)
			pthread_cond_wait(&pl->cv, &pl->mu);
		stop = pl->stop;
		if (!stop)
			s->state = SLOT_BUSY;
		pthread_mutex_unlock(&pl->mu);
		if (stop)
			break;
		compute(w, s, k);
		pthread_mutex_lock(&pl->mu);
		s->piece = k;
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&pl->cv);
		pthread_mutex_unlock(&pl->mu);
		if (s->st != USC_OK || s->restart || s->serial)
			break;
	}
	/* Its evaluators' counts go to its own report copy. */
	usc__check_evals_clear(&w->run);
	mpfr_free_cache();
	return NULL;
}

/* Folds the piece in slot s into the calling thread's run. */
static usc_status fold(usc__check_run *c, slot *s, usc_error *err)
{
	usc_check_report *r = c->r;
	usc_status st;

	for (size_t i = 0; i < r->output_count; i++) {
		usc_check_output *o = &r->outputs[i], *sh = &s->shadow[i];

		o->oracle_elements += sh->oracle_elements;
		sh->oracle_elements = 0;
		for (size_t n = 0; n < USC_CLASS_COUNT; n++) {
			o->counts.n[n] += sh->counts.n[n];
			sh->counts.n[n] = 0;
		}
		s->parts[i].o = o;
	}
	st = usc__check_piece_fold(c, s->parts, err);
	for (size_t i = 0; i < r->output_count; i++)
		s->parts[i].o = &s->shadow[i];
	return st;
}

/* A worker's slot: part arrays as large as the calling thread's. */
static usc_status slot_alloc(const usc__check_run *c, slot *s,
			     usc_error *err)
{
	const usc_check_report *r = c->r;
	size_t n = r->output_count ? r->output_count : 1;
	usc_status st = USC_OK;

	s->parts = usc__calloc(n, sizeof *s->parts);
	s->shadow = usc__calloc(n, sizeof *s->shadow);
	if (!s->parts || !s->shadow)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		const usc_tensor *ref = c->parts[i].reference;
		int64_t cap = (int64_t)usc_tensor_count(ref);

		s->shadow[i].device = r->outputs[i].device;
		s->parts[i].o = &s->shadow[i];
		st = usc_tensor_create(usc_tensor_dtype(ref), 1, &cap,
				       &s->parts[i].reference, err);
		if (st == USC_OK)
			st = usc__check_part_alloc(&s->parts[i], (size_t)cap,
						   r->classified, err);
	}
	return st;
}

static void slot_free(const usc__check_run *c, slot *s)
{
	for (size_t i = 0; s->parts && i < c->r->output_count; i++)
		usc__check_part_free(&s->parts[i]);
	usc__free(s->parts);
	usc__free(s->shadow);
}

/*
 * A worker's run: the calling thread's request, kernel and geometry, its
 * own evaluators, parts and report copy (whose counts start at zero).
 */
static usc_status worker_init(pool *pl, worker *w, size_t index,
			      usc_error *err)
{
	usc__check_run *c = pl->c;
	usc__check_run *wr = &w->run;
	usc_status st = USC_OK;

	w->pool = pl;
	w->index = index;
	w->rep = *c->r;
	w->rep.oracle_precision = 0;
	w->rep.reference_functions = 0;
	w->rep.reference_escalated = 0;
	w->rep.envelope_fast = 0;
	w->rep.envelope_escalated = 0;
	*wr = *c;
	wr->r = &w->rep;
	wr->parts = NULL;
	wr->ref = wr->tier = wr->env = NULL;
	wr->oracle = usc__calloc(c->oracle_count ? c->oracle_count : 1,
				 sizeof *wr->oracle);
	wr->acc = NULL;
	wr->why_out = NULL;
	memset(&wr->why, 0, sizeof wr->why);
	wr->w = NULL;
	wr->col_lo = wr->col_hi = NULL;
	wr->col_flags = NULL;
	wr->restart = wr->serial = false;
	wr->threads = 1;
	if (!wr->oracle)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	if (!c->ranges) {
		w->row_in = usc__calloc(c->r->input_count ? c->r->input_count
							  : 1,
					sizeof *w->row_in);
		if (!w->row_in)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		wr->row_in = w->row_in;
	}
	for (size_t i = 0; st == USC_OK && i < SLOTS; i++)
		st = slot_alloc(c, &w->slots[i], err);
	return st;
}

static void worker_free(pool *pl, worker *w)
{
	const usc_check_report *r = pl->c->r;

	for (size_t i = 0; i < SLOTS; i++)
		slot_free(pl->c, &w->slots[i]);
	usc__free(w->run.oracle);
	for (size_t k = 0; w->row_in && k < r->input_count; k++)
		if (w->row_in[k] != r->inputs[k])
			usc_tensor_destroy(w->row_in[k]);
	usc__free(w->row_in);
}

/* Adds a worker's counts to the report (after it ended). */
static void worker_tally(usc_check_report *r, const worker *w)
{
	if (w->rep.oracle_precision > r->oracle_precision)
		r->oracle_precision = w->rep.oracle_precision;
	r->reference_functions += w->rep.reference_functions;
	r->reference_escalated += w->rep.reference_escalated;
	r->envelope_fast += w->rep.envelope_fast;
	r->envelope_escalated += w->rep.envelope_escalated;
}

/* Folds every piece in order as the workers finish them. */
static usc_status fold_all(pool *pl, usc_error *err)
{
	usc__check_run *c = pl->c;
	usc_status st = USC_OK;

	for (size_t k = 0; st == USC_OK && k < pl->npieces; k++) {
		worker *w = &pl->w[k % pl->nworkers];
		slot *s = &w->slots[(k / pl->nworkers) % SLOTS];

		pthread_mutex_lock(&pl->mu);
		while (!(s->state == SLOT_DONE && s->piece == k))
			pthread_cond_wait(&pl->cv, &pl->mu);
		pthread_mutex_unlock(&pl->mu);
		if (s->st != USC_OK) {
			if (err)
				*err = s->err;
			return s->st;
		}
		if (s->serial) {
			c->serial = true;
			return USC_OK;
		}
		if (s->restart) {
			c->restart = true;
			return USC_OK;
		}
		st = fold(c, s, err);
		pthread_mutex_lock(&pl->mu);
		s->state = SLOT_FREE;
		pthread_cond_broadcast(&pl->cv);
		pthread_mutex_unlock(&pl->mu);
	}
	return st;
}

usc_status usc__check_pieces_threaded(usc__check_run *c, usc_error *err)
{
	pool pl;
	usc_status st = USC_OK;

	memset(&pl, 0, sizeof pl);
	pl.c = c;
	pl.npieces = usc__check_piece_count(c);
	pl.nworkers = c->threads < pl.npieces ? c->threads : pl.npieces;
	pl.w = usc__calloc(pl.nworkers, sizeof *pl.w);
	if (!pl.w)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; st == USC_OK && i < pl.nworkers; i++)
		st = worker_init(&pl, &pl.w[i], i, err);
	if (st == USC_OK) {
		pthread_mutex_init(&pl.mu, NULL);
		pthread_cond_init(&pl.cv, NULL);
		for (size_t i = 0; i < pl.nworkers; i++) {
			pl.w[i].started = pthread_create(&pl.w[i].thread, NULL,
							 work, &pl.w[i]) == 0;
			/* Without every thread: again on one thread. */
			if (!pl.w[i].started) {
				c->serial = true;
				break;
			}
		}
		if (!c->serial)
			st = fold_all(&pl, err);
		pthread_mutex_lock(&pl.mu);
		pl.stop = true;
		pthread_cond_broadcast(&pl.cv);
		pthread_mutex_unlock(&pl.mu);
		for (size_t i = 0; i < pl.nworkers; i++)
			if (pl.w[i].started)
				pthread_join(pl.w[i].thread, NULL);
		pthread_mutex_destroy(&pl.mu);
		pthread_cond_destroy(&pl.cv);
	}
	for (size_t i = 0; i < pl.nworkers; i++) {
		worker_tally(c->r, &pl.w[i]);
		worker_free(&pl, &pl.w[i]);
	}
	usc__free(pl.w);
	return st;
}
