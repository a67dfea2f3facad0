/*
 * The pieces of a streamed check on several threads (docs/check.md,
 * "Threads").
 *
 * A check on N threads runs N computing runs: N - 1 worker threads and
 * the calling thread, each with evaluators of its own (reference, tier,
 * oracle levels, envelope).  A run takes the next piece not yet taken and
 * evaluates it whole in every domain into one of a shared ring of part
 * array sets (slots); the calling thread alone folds the pieces into the
 * report and the result file, strictly in piece order, and between folds
 * computes pieces like the others.  Everything a fold adds up or keeps
 * (the counts, the worst lists, the verdict's element, the result file's
 * rows) therefore sees the same pieces in the same order as on one
 * thread, and the report and the result file are the same bit for bit.
 * The statistics' accumulators, whose figures do not depend on the order
 * of their values, are fed by the run that computed the piece instead,
 * one run at a time (stats_mu).  Only the calling thread touches the
 * result file (and so HDF5, which is not built thread-safe here) and the
 * report's outputs.
 *
 * Why the calling thread computes too: with N workers besides it, N + 1
 * threads shared N cores, and the fold (the result file's rows above
 * all) came on top of the workers' share; with pieces taken by whichever
 * run is free, the fold is spread over the N cores like any other work.
 *
 * Piece k uses slot k mod S (S = N + 2): it can be taken once piece k - S
 * is folded.  Pieces are taken in order, so the piece the calling thread
 * needs next has been taken, or is the next to take and its slot is free
 * (every earlier piece is folded): the calling thread then takes it
 * itself, and nothing can wait in a circle.
 *
 * What a run may not know: on one thread, piece 0 decides for every
 * later piece whether the tier and the envelope run at all (a kernel they
 * refuse).  Runs begin later pieces before piece 0 is done, so when
 * piece 0 finds such a refusal the threaded check is abandoned and runs
 * again on one thread (c->serial); a refusal on a later piece restarts
 * the check whole, as on one thread (c->restart).  A piece that fails or
 * refuses stops the taking of pieces; those taken before it are still
 * computed and folded, so the first failure in piece order is the one
 * reported, as on one thread.
 *
 * MPFR and GMP: the oracle, the MPFR reference path and the MPFR envelope
 * run on every thread.  Debian's MPFR is built thread-safe (its exponent
 * range, flags and constant caches are thread-local); every MPFR number
 * here belongs to one evaluator, hence to one thread, and a worker thread
 * frees its thread's MPFR caches before it ends.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>
#include <mpfr.h>

#include "analyze/check_internal.h"

/* Slots beyond one per run: what lets a run go on while folds wait. */
#define SLOTS_EXTRA 2

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

/* One set of part arrays and what its piece came to. */
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

/* A computing run: a worker thread's, or the calling thread's (index 0). */
typedef struct worker {
	struct pool *pool;
	usc__check_run run;   /* its evaluators; run.r is rep */
	usc_check_report rep; /* the report as it reads it, its own counts */
	usc_tensor **row_in;  /* its block's inputs (kernels of rows) */
	pthread_t thread;
	bool started;
} worker;

typedef struct pool {
	usc__check_run *c; /* the calling thread's run, which folds */
	size_t nruns, npieces, nslots;
	/*
	 * The cut of a loop kernel's output (c->ranges): nbig pieces of
	 * c->piece elements, then pieces of `small` elements to the end;
	 * nbig = npieces and small = 0 otherwise (cut_init).
	 */
	size_t nbig, small;
	worker *w;
	slot *slots;
	size_t next; /* the next piece to take */
	bool halt;   /* no more pieces are taken */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t stats_mu; /* the calling run's accumulators */
} pool;

/*
 * The pieces of a loop kernel end smaller.  Threads take whole pieces, so
 * the check ends when the last piece does, while the other threads have
 * nothing left to take: on average half a piece of idle time per thread.
 * So the output's last 2N pieces' worth of elements (N runs) is cut into
 * pieces a quarter as long, or as near as the tile allows (`small`, which
 * divides the piece), and the threads end within a quarter piece of each
 * other.  For a loop kernel the cut changes nothing in the output: every
 * domain evaluates the piece tile by tile, the oracle only the tiles that
 * hold an undecided element, the fold merges pieces of any length to the
 * same result (src/analyze/check_fold.c) and the rows go to the file in
 * order; test_check_fold compares every count and figure with one
 * thread's at several cuts.  A kernel of rows keeps one block size (a
 * value every row shares is computed once per block, so the work counts
 * would differ).
 */
static void cut_init(pool *pl)
{
	const usc__check_run *c = pl->c;
	uint64_t full, tail;
	size_t tiles, d = 4;

	pl->npieces = usc__check_piece_count(c);
	pl->nbig = pl->npieces;
	pl->small = 0;
	if (!c->ranges || c->threads < 2 || c->tile == 0 ||
	    c->piece % c->tile != 0)
		return;
	/* The smallest divisor of the piece's tiles from 4 up. */
	tiles = c->piece / c->tile;
	if (tiles < 4)
		return;
	while (d < tiles && tiles % d != 0)
		d++;
	full = c->total / c->piece;
	pl->small = c->piece / d;
	pl->nbig = full > 2 * (uint64_t)c->threads
			   ? (size_t)(full - 2 * (uint64_t)c->threads)
			   : 0;
	tail = c->total - (uint64_t)pl->nbig * c->piece;
	pl->npieces = pl->nbig + (size_t)((tail + pl->small - 1) / pl->small);
}

/*
 * Sets a run's piece length for piece k of the pool's cut; returns the
 * index usc__check_piece_setup takes for it (its first element over that
 * length, which divides it).
 */
static size_t cut_piece(const pool *pl, usc__check_run *c, size_t k)
{
	uint64_t first;

	if (k < pl->nbig || pl->small == 0)
		return k;
	first = (uint64_t)pl->nbig * pl->c->piece +
		(uint64_t)(k - pl->nbig) * pl->small;
	c->piece = pl->small;
	return (size_t)(first / pl->small);
}

/* Sets up and computes piece k on a run, into slot s. */
static void compute(worker *w, slot *s, size_t k)
{
	usc__check_run *c = &w->run;
	bool tier_off = c->tier_off, env_refused = c->env_refused;

	c->parts = s->parts;
	c->piece = w->pool->c->piece;
	memset(&s->err, 0, sizeof s->err);
	s->st = usc__check_piece_setup(c, cut_piece(w->pool, c, k), &s->err);
	if (s->st == USC_OK)
		s->st = usc__check_piece_compute(c, k == 0, &s->err);
	s->restart = c->restart;
	s->serial = k == 0 && (c->tier_off != tier_off ||
			       c->env_refused != env_refused);
	/*
	 * The piece's errors into the statistics, here rather than in the
	 * fold: their figures do not depend on the order of the pieces
	 * (src/analyze/check_fold.c), and so the calling thread's folds stay
	 * short.
	 */
	if (s->st == USC_OK && !s->restart && !s->serial) {
		pthread_mutex_lock(&w->pool->stats_mu);
		s->st = usc__check_part_stats(w->pool->c, s->parts, &s->err);
		pthread_mutex_unlock(&w->pool->stats_mu);
	}
}

/*
 * Takes the next piece when there is one and its slot is free (the pool's
 * lock held): its slot, or NULL.
 */
static slot *take(pool *pl)
{
	slot *s;

	if (pl->halt || pl->next >= pl->npieces)
		return NULL;
	s = &pl->slots[pl->next % pl->nslots];
	if (s->state != SLOT_FREE)
		return NULL;
	s->state = SLOT_BUSY;
	s->piece = pl->next++;
	return s;
}

/*
 * Computes the piece of slot s on w (the pool's lock held, and released
 * meanwhile), then hands it to the fold.
 */
static void run_piece(pool *pl, worker *w, slot *s)
{
	pthread_mutex_unlock(&pl->mu);
	compute(w, s, s->piece);
	pthread_mutex_lock(&pl->mu);
	s->state = SLOT_DONE;
	if (s->st != USC_OK || s->restart || s->serial)
		pl->halt = true;
	pthread_cond_broadcast(&pl->cv);
}

static void *work(void *arg)
{
	worker *w = arg;
	pool *pl = w->pool;

	pthread_mutex_lock(&pl->mu);
	while (!pl->halt && pl->next < pl->npieces) {
		slot *s = take(pl);

		if (s)
			run_piece(pl, w, s);
		else
			pthread_cond_wait(&pl->cv, &pl->mu);
	}
	pthread_mutex_unlock(&pl->mu);
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

/* A slot: part arrays as large as the calling thread's. */
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
			st = usc__check_part_alloc(
				&s->parts[i], (size_t)cap, r->classified,
				c->req->worst, c->req->results_path != NULL,
				err);
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
 * A computing run: the calling thread's request, kernel and geometry, its
 * own evaluators and report copy (whose counts start at zero).
 */
static usc_status worker_init(pool *pl, worker *w, usc_error *err)
{
	usc__check_run *c = pl->c;
	usc__check_run *wr = &w->run;

	w->pool = pl;
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
	wr->restart = wr->serial = false;
	wr->row_evals = 0;
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
	return USC_OK;
}

static void worker_free(pool *pl, worker *w)
{
	const usc_check_report *r = pl->c->r;

	usc__free(w->run.oracle);
	for (size_t k = 0; w->row_in && k < r->input_count; k++)
		if (w->row_in[k] != r->inputs[k])
			usc_tensor_destroy(w->row_in[k]);
	usc__free(w->row_in);
}

/* Adds a run's counts to the report (after it ended). */
static void worker_tally(usc_check_report *r, const worker *w)
{
	if (w->rep.oracle_precision > r->oracle_precision)
		r->oracle_precision = w->rep.oracle_precision;
	r->reference_functions += w->rep.reference_functions;
	r->reference_escalated += w->rep.reference_escalated;
	r->envelope_fast += w->rep.envelope_fast;
	r->envelope_escalated += w->rep.envelope_escalated;
}

/*
 * The calling thread: folds every piece in order as soon as it is done,
 * and while the next one is not, computes the next piece to take on its
 * own run (w[0]).  Returns with the pool's lock held and halt set.
 */
static usc_status fold_all(pool *pl, usc_error *err)
{
	usc__check_run *c = pl->c;
	usc_status st = USC_OK;
	size_t k = 0;
	bool evals_done = false;

	pthread_mutex_lock(&pl->mu);
	while (st == USC_OK && k < pl->npieces) {
		slot *s = &pl->slots[k % pl->nslots];

		if (s->state == SLOT_DONE && s->piece == k) {
			pthread_mutex_unlock(&pl->mu);
			if (s->st != USC_OK) {
				if (err)
					*err = s->err;
				st = s->st;
			} else if (s->serial) {
				c->serial = true;
			} else if (s->restart) {
				c->restart = true;
			} else {
				st = fold(c, s, err);
			}
			pthread_mutex_lock(&pl->mu);
			if (c->serial || c->restart)
				break;
			s->state = SLOT_FREE;
			k++;
			pthread_cond_broadcast(&pl->cv);
			continue;
		}
		s = take(pl);
		if (s) {
			run_piece(pl, &pl->w[0], s);
		} else if (pl->next >= pl->npieces && !evals_done) {
			/*
			 * Every piece is taken: while the last ones are
			 * computed, this run's evaluators go (their counts to
			 * its report copy), which would else wait until after.
			 */
			pthread_mutex_unlock(&pl->mu);
			usc__check_evals_clear(&pl->w[0].run);
			evals_done = true;
			pthread_mutex_lock(&pl->mu);
		} else {
			pthread_cond_wait(&pl->cv, &pl->mu);
		}
	}
	pl->halt = true;
	pthread_cond_broadcast(&pl->cv);
	return st;
}

usc_status usc__check_pieces_threaded(usc__check_run *c, usc_error *err)
{
	pool pl;
	usc_status st = USC_OK;

	memset(&pl, 0, sizeof pl);
	pl.c = c;
	cut_init(&pl);
	pl.nruns = c->threads < pl.npieces ? c->threads : pl.npieces;
	pl.nslots = pl.nruns + SLOTS_EXTRA;
	pl.w = usc__calloc(pl.nruns, sizeof *pl.w);
	pl.slots = usc__calloc(pl.nslots, sizeof *pl.slots);
	if (!pl.w || !pl.slots) {
		usc__free(pl.w);
		usc__free(pl.slots);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; st == USC_OK && i < pl.nruns; i++)
		st = worker_init(&pl, &pl.w[i], err);
	for (size_t i = 0; st == USC_OK && i < pl.nslots; i++)
		st = slot_alloc(c, &pl.slots[i], err);
	if (st == USC_OK) {
		pthread_mutex_init(&pl.mu, NULL);
		pthread_cond_init(&pl.cv, NULL);
		pthread_mutex_init(&pl.stats_mu, NULL);
		for (size_t i = 1; i < pl.nruns; i++) {
			pl.w[i].started = pthread_create(&pl.w[i].thread, NULL,
							 work, &pl.w[i]) == 0;
			/* Without every thread: again on one thread. */
			if (!pl.w[i].started) {
				c->serial = true;
				break;
			}
		}
		if (!c->serial) {
			st = fold_all(&pl, err);
		} else {
			pthread_mutex_lock(&pl.mu);
			pl.halt = true;
			pthread_cond_broadcast(&pl.cv);
		}
		pthread_mutex_unlock(&pl.mu);
		for (size_t i = 1; i < pl.nruns; i++)
			if (pl.w[i].started)
				pthread_join(pl.w[i].thread, NULL);
		pthread_mutex_destroy(&pl.mu);
		pthread_cond_destroy(&pl.cv);
		pthread_mutex_destroy(&pl.stats_mu);
	}
	/*
	 * The calling thread's run: its evaluators, and their counts (none
	 * when its set-up failed).
	 */
	if (pl.w[0].run.oracle)
		usc__check_evals_clear(&pl.w[0].run);
	for (size_t i = 0; i < pl.nruns; i++) {
		worker_tally(c->r, &pl.w[i]);
		worker_free(&pl, &pl.w[i]);
	}
	for (size_t i = 0; i < pl.nslots; i++)
		slot_free(c, &pl.slots[i]);
	usc__free(pl.w);
	usc__free(pl.slots);
	return st;
}

/* ------------------------------------------- the statistics' percentiles */

/* One thread's share of the accumulators: first, first + stride, ... */
typedef struct finish_job {
	usc_results_stats_acc *const *acc;
	usc_results_stats *const *out;
	usc_status *st;
	usc_error *err;
	size_t n, first, stride;
	pthread_t thread;
	bool started;
} finish_job;

static void *finish_work(void *arg)
{
	finish_job *j = arg;

	for (size_t i = j->first; i < j->n; i += j->stride)
		j->st[i] = usc_results_stats_acc_finish(j->acc[i], j->out[i],
							&j->err[i]);
	return NULL;
}

usc_status usc__check_stats_finish(usc_results_stats_acc *const *acc,
				   usc_results_stats *const *out, size_t n,
				   size_t threads,
				   usc_status (*side)(void *ctx,
						      usc_error *err),
				   void *side_ctx, usc_error *err)
{
	size_t t = threads < n ? threads : n;
	finish_job *jobs;
	usc_status *st;
	usc_error *errs;
	usc_status ret = USC_OK, side_st = USC_OK;
	usc_error side_err;

	if (t <= 1) {
		for (size_t i = 0; ret == USC_OK && i < n; i++)
			ret = usc_results_stats_acc_finish(acc[i], out[i], err);
		if (ret == USC_OK && side)
			ret = side(side_ctx, err);
		return ret;
	}
	jobs = usc__calloc(t, sizeof *jobs);
	st = usc__calloc(n, sizeof *st);
	errs = usc__calloc(n, sizeof *errs);
	if (!jobs || !st || !errs) {
		usc__free(jobs);
		usc__free(st);
		usc__free(errs);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	/*
	 * With a side job, every share goes to a thread of its own and the
	 * calling thread does the side job meanwhile (the result file's last
	 * chunks, which only it may write); else the calling thread takes
	 * the first share.
	 */
	memset(&side_err, 0, sizeof side_err);
	for (size_t k = 0; k < t; k++) {
		jobs[k] = (finish_job){acc, out, st, errs, n, k, t, 0, false};
		if (k > 0 || side)
			jobs[k].started = pthread_create(&jobs[k].thread, NULL,
							 finish_work,
							 &jobs[k]) == 0;
	}
	if (side)
		side_st = side(side_ctx, &side_err);
	else
		finish_work(&jobs[0]);
	/* Any share no thread took is the calling thread's. */
	for (size_t k = side ? 0 : 1; k < t; k++) {
		if (jobs[k].started)
			pthread_join(jobs[k].thread, NULL);
		else
			finish_work(&jobs[k]);
	}
	/* The first failure in order, as one thread would have met it. */
	for (size_t i = 0; ret == USC_OK && i < n; i++)
		if (st[i] != USC_OK) {
			ret = st[i];
			if (err)
				*err = errs[i];
		}
	if (ret == USC_OK && side_st != USC_OK) {
		ret = side_st;
		if (err)
			*err = side_err;
	}
	usc__free(jobs);
	usc__free(st);
	usc__free(errs);
	return ret;
}
