/*
 * Internal: the classification step of usc_check_run
 * (src/analyze/check_classify.c).
 */
#ifndef USC_ANALYZE_CHECK_INTERNAL_H
#define USC_ANALYZE_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ulpscope/check.h"
#include "ulpscope/eval.h"
#include "ulpscope/results.h"

/*
 * The element a verdict's reason names: the worst of one output (offered
 * its elements in order), or of the kernel: over the outputs in order, a
 * later output's element replaces the one kept only with a heavier class.
 */
typedef struct usc__check_reason {
	bool have;
	size_t output;
	usc_check_element el;
	double expected_ulps;
	uint64_t total; /* elements of every output */
	/* Why the envelope is unknown, when the domain refused the kernel. */
	char note[USC_ERROR_MESSAGE_SIZE + 64];
} usc__check_reason;

/*
 * The per-element figures of one output over its elements [base, base +
 * len): the whole output, or one piece of it when the check streams
 * (docs/check.md, "Streaming").  Arrays are indexed from base.
 */
typedef struct usc__check_part {
	usc_check_output *o; /* the report's: device (whole), counts, worst */
	uint64_t base;
	size_t len;
	usc_tensor *reference; /* len encodings (the output's shape if whole) */
	double *oracle_mid;
	double *oracle_rad;
	double *ulp_oracle;
	double *ulp_reference;
	uint8_t *undecided;
	/* With a profile, else NULL. */
	usc_envelope *envelope;
	uint8_t *cls;
	double *expected_ulps;
	uint64_t tier_decided; /* of the part's elements, by the tier */
	/*
	 * The index in the output of the first element the evaluator hands
	 * over: 0, or base when it evaluates the part's block of rows alone.
	 */
	uint64_t visit_base;
	/*
	 * What the thread that computed the part folds of its elements
	 * (usc__check_part_summarize, src/analyze/check_fold.c), so that the
	 * fold of the piece merges a few elements instead of walking all
	 * of them: the bit-exact and undecided counts, the part's own worst
	 * list (worst_cap = the request's worst; the whole report's list is
	 * the merge of the parts' in order), the verdict's candidate, and,
	 * for a streamed classified check with a result file, the
	 * envelope's columns as the file stores them (col_*; NULL else).
	 */
	uint64_t bit_exact, undecided_count;
	usc_check_element *worst;
	size_t worst_cap, worst_count;
	usc__check_reason why;
	double *col_lo, *col_hi;
	uint8_t *col_flags;
	/*
	 * The part's errors are in the statistics' accumulators already
	 * (usc__check_part_stats, by the thread that computed it): the fold
	 * leaves them out.
	 */
	bool stats_added;
} usc__check_part;

/*
 * Adds the fast-path counts of the envelope evaluator env (NULL: none) to
 * r's envelope_fast and envelope_escalated; call it before destroying env.
 */
void usc__check_envelope_tally(usc_check_report *r, usc_eval *env);

/*
 * The envelope run over one part per output (parts[i] of output i),
 * evaluating the elements [first, first + count) of a streamed output
 * (count 0: everything): each element's envelope into its part.  When the
 * domain refuses the kernel (USC_EUNSUPPORTED), every envelope stays
 * unknown, *refused is set and the reason's note says why; any other
 * failure is the check's.
 */
usc_status usc__check_envelope(usc_eval *ev, usc__check_part *parts,
			       size_t nparts, uint64_t first, uint64_t count,
			       bool *refused, usc__check_reason *why,
			       usc_error *err);

/* Every envelope of the parts unknown. */
void usc__check_envelope_unknown(usc__check_part *parts, size_t nparts);

/*
 * Classifies every element of a part (after its envelopes): its class,
 * expected error and the output's counts.
 */
usc_status usc__check_classify_part(const usc_check_request *req,
				    usc__check_part *p, usc_error *err);

/*
 * The common cases of usc_classify_element for a float type whose fast
 * format is rf (src/dtype/rn_fast.h): a finite device code dev inside
 * the known, finite envelope e, equal to the reference code ref or one
 * code from a finite one.  True with the class and expected error the
 * general function gives, bit for bit; false for every other case (the
 * caller then calls usc_classify_element).  lambda must be > 0.
 */
struct usc__rn_format;
bool usc__check_classify_fast(const struct usc__rn_format *rf,
			      const usc_envelope *e, uint64_t dev,
			      uint64_t ref, double exact, double lambda,
			      usc_class *cls, double *expected);

/* Element j of a part as the worst list keeps it. */
void usc__check_element(const usc__check_part *p, size_t j, bool classified,
			usc_check_element *el);

/*
 * Whether element a is worse than b for the worst list and the reason: by
 * class when classified (mismatches and defects, suspicious, undecided,
 * the rest), then by steps outside the envelope, then by |ulp_oracle|
 * (NaN first).
 */
bool usc__check_worse(const usc_check_element *a, const usc_check_element *b,
		      bool classified);

/*
 * How heavily a class weighs in the worst list and the reason (0..4): in
 * line, for the loops that rank every element.
 */
static inline int usc__check_class_rank(usc_class c)
{
	switch (c) {
	case USC_CLASS_NAN_MISMATCH:
	case USC_CLASS_INF_MISMATCH:
	case USC_CLASS_SIGN_MISMATCH:
	case USC_CLASS_DEFECT:
		return 4;
	case USC_CLASS_SUSPICIOUS:
		return 3;
	case USC_CLASS_UNDECIDED:
		return 2;
	case USC_CLASS_ENVELOPE:
	case USC_CLASS_ROUNDING:
		return 1;
	default:
		return 0;
	}
}

/* Offers element j of a part to the reason's candidate. */
void usc__check_reason_offer(usc__check_reason *why, size_t output,
			     const usc__check_part *p, size_t j);

/*
 * Offers the candidate a part kept (cand, of output `output`) to why: the
 * same rule as usc__check_reason_offer, so that offering each part's
 * candidate in order keeps what offering every element would.
 */
void usc__check_reason_merge(usc__check_reason *why, size_t output,
			     const usc__check_reason *cand);

/* The verdict from the counts of r's outputs, and its one-line reason. */
void usc__check_verdict(usc_check_report *r, const usc__check_reason *why);

/*
 * For a classified whole report, fills outs[i]'s envelope_lo,
 * envelope_hi, envelope_flags and cls from r's per-element envelopes and
 * classes (allocating the first three); nothing otherwise.  Free them
 * with usc__check_envelope_arrays_free, also after a failure.
 */
usc_status usc__check_envelope_arrays(const usc_check_report *r,
				      usc_results_output *outs,
				      usc_error *err);
void usc__check_envelope_arrays_free(const usc_check_report *r,
				     usc_results_output *outs);

/*
 * The envelope's public bounds as the result file stores them: lo and hi
 * (NaN without finite bounds) and the flags, for n envelopes.
 */
void usc__check_envelope_columns(const usc_envelope *e, size_t n,
				 double *lo, double *hi, uint8_t *flags);

/* ------------------------------------------------- the run of a check */

/* One check: its request, report, evaluators and what it folds. */
typedef struct usc__check_run {
	const usc_check_request *req;
	usc_check_report *r;
	/*
	 * Streaming: the one output is checked a piece of `piece` elements
	 * at a time (a multiple of the tile), and the report keeps no
	 * per-element arrays.
	 */
	bool stream;
	size_t piece;
	size_t tile;
	/*
	 * How a piece is evaluated: a range of the loop kernel's output
	 * (ranges), or the kernel of a block of rows on those rows of the
	 * inputs (comp and in; docs/check.md, "Streaming").  Otherwise comp
	 * is the kernel and in its inputs.
	 */
	bool ranges;
	const usc_hlo_computation *comp;
	usc_tensor **in;
	usc__check_part *parts; /* one per output */
	usc_eval *ref, *tier, *env;
	size_t oracle_count;     /* precision levels */
	unsigned long *oracle_prec;
	usc_eval **oracle;       /* one per level, made when first needed */
	bool tier_off;           /* the tier cannot evaluate the kernel */
	bool env_refused;        /* the envelope domain refused it */
	/*
	 * The device's outputs that unstable sorts follow, given to every
	 * evaluator made after the whole check read them (check.c,
	 * follow_device); NULL before.
	 */
	const usc_tensor **devices;
	/*
	 * A streamed check met, after its first piece, a refusal that the
	 * whole check handles for every element at once: it runs again
	 * whole (usc_check_run).
	 */
	bool restart;
	usc_results_stats_acc **acc; /* two per output: oracle, reference */
	/*
	 * The verdict's element: the worst of each output (why_out), then of
	 * the kernel (why) once every piece is in.
	 */
	usc__check_reason *why_out;
	usc__check_reason why;
	usc_results *w;              /* streaming to the result file */
	/*
	 * The pieces of a streamed check (usc__check_piece_setup): of the
	 * one output's `total` elements (ranges), or of `rows` rows a
	 * `block` at a time, evaluated by row_kernels[0] (a full block) or
	 * [1] (the shorter last one), on this run's row_in (the block's rows
	 * of the row-shaped inputs, the others whole); output i has
	 * row_per[i] elements per row.
	 */
	uint64_t total;
	int64_t rows, block;
	usc_hlo_file **row_kernels;
	const uint64_t *row_per;
	usc_tensor **row_in;
	/*
	 * The block kernel this run's evaluators were made for: 1 (a full
	 * block, row_kernels[0]), 2 (the shorter last one), 0 none (the
	 * evaluators are the whole kernel's, or none).
	 */
	int row_evals;
	/* Threads for the pieces (src/analyze/check_threads.c). */
	size_t threads;
	/*
	 * A worker's run of piece 0 changed what later pieces do (the tier
	 * or the envelope refused the kernel): the check runs again on one
	 * thread, which carries that into every piece as before.
	 */
	bool serial;
} usc__check_run;

/* Elements per piece of a streamed check (a multiple of the tile). */
#define USC__CHECK_PIECE_DEFAULT 65536

/*
 * The pieces of a streamed check c (its geometry set): how many, and
 * piece k set up on c: its parts reset to the piece's elements and, for
 * a kernel that splits into rows, c's evaluators made anew for the
 * block's kernel on the block's rows of the inputs (c->row_in).
 */
size_t usc__check_piece_count(const usc__check_run *c);
usc_status usc__check_piece_setup(usc__check_run *c, size_t k,
				  usc_error *err);

/*
 * Evaluates the piece set up on c in every domain (the reference, the
 * tier, the oracle for what it leaves, the envelope and the classes)
 * into c->parts; nothing is folded.  It touches nothing shared with
 * other runs but what it reads: the request, the report's inputs and
 * device outputs (c->parts[i].o need only hold the device, the class
 * counts and oracle_elements it adds to), the kernels.
 */
usc_status usc__check_piece_compute(usc__check_run *c, bool first_piece,
				    usc_error *err);

/*
 * Folds a computed piece (parts: one per output, each part's o the
 * report's output) into c's summaries, worst lists, the verdict's element
 * and the result file.
 */
usc_status usc__check_piece_fold(usc__check_run *c, usc__check_part *parts,
				 usc_error *err);

/*
 * Adds the errors of a computed piece's parts to c's statistics'
 * accumulators and marks the parts so (stats_added).  Every figure of
 * the accumulators is a count, a maximum or a rank of the values added,
 * none depends on their order: on several threads each piece's thread
 * adds them, in any order of pieces, one thread at a time.
 */
usc_status usc__check_part_stats(usc__check_run *c, usc__check_part *parts,
				 usc_error *err);

/*
 * The result file of a streamed check (src/analyze/check_write.c): begun
 * with the kernel before the first piece, ended with the summaries, the
 * class counts and the verdict after the last.
 */
usc_status usc__check_stream_begin_file(usc__check_run *c, usc_error *err);
usc_status usc__check_stream_end_file(usc__check_run *c, usc_error *err);

/*
 * A part's arrays for cap elements (the reference tensor is the
 * caller's), its worst list for `worst` elements, and with `columns` the
 * envelope's columns for the result file.
 */
usc_status usc__check_part_alloc(usc__check_part *p, size_t cap,
				 bool classified, size_t worst, bool columns,
				 usc_error *err);

/*
 * The part's own summary (the fields after visit_base), from its
 * computed figures and classes: run by the thread that computed it.
 */
void usc__check_part_summarize(const usc__check_run *c, usc__check_part *p,
			       size_t output);
void usc__check_part_free(usc__check_part *p);

/*
 * Destroys c's evaluators (ref, tier, env, the oracle's levels), adding
 * the counts they keep (the fast reference's, the envelope's) to c->r.
 */
void usc__check_evals_clear(usc__check_run *c);

/*
 * The pieces of c (geometry set, the result file begun, piece 0 not yet
 * run) on c->threads threads (src/analyze/check_threads.c), folded in
 * order into c; c->restart or c->serial set as the pieces say.
 */
usc_status usc__check_pieces_threaded(usc__check_run *c, usc_error *err);

/*
 * usc_results_stats_acc_finish of acc[i] into out[i] for i < n, on up to
 * `threads` threads (the percentiles' selection is the one long serial
 * step after the pieces).  side (NULL: none) runs on the calling thread,
 * with several threads while they select, else after them: the result
 * file's last chunks, which only the calling thread may write.  The
 * first failure in order is returned, the side job's last.
 */
usc_status usc__check_stats_finish(usc_results_stats_acc *const *acc,
				   usc_results_stats *const *out, size_t n,
				   size_t threads,
				   usc_status (*side)(void *ctx,
						      usc_error *err),
				   void *side_ctx, usc_error *err);

/*
 * Row blocks (src/analyze/check_rows.c): *rows receives the kernel's rows
 * when m's entry splits into blocks of rows evaluated on their own (its
 * outputs' and its row-shaped inputs' leading dimension, at least 2), 0
 * when it does not.
 */
usc_status usc__check_rows(const usc_hlo_module *m, int64_t *rows,
			   usc_error *err);

/*
 * A copy of m (which splits into rows) whose every row-shaped value has
 * block rows instead: the kernel of one block.  Its one module verifies.
 */
usc_status usc__check_rows_module(const usc_hlo_module *m, int64_t rows,
				  int64_t block, usc_hlo_file **out,
				  usc_error *err);

/*
 * A kernel file as check, bisect and signature read it: one module (any
 * other count is an error naming the file), the fusion isolated when one
 * is named (docs/kernels.md), verified.  *out is set whenever the file
 * parsed, also when verification fails (the caller destroys it).
 */
/*
 * How many times a run evaluates each computation, capped at 2
 * ("several"), added into runs[computation index] for c called n times:
 * the entry once, a fusion's or call's body as often as its caller, any
 * other called computation (a reduce's to_apply, a map or scatter body)
 * once per element, so several.  Only instructions of a computation
 * evaluated once have values that form one tensor (what bisect can
 * compare and explain can keep).  runs starts zeroed; depth is 0.
 */
void usc__computation_runs(const usc_hlo_computation *c, unsigned n,
			   unsigned char *runs, int depth);

usc_status usc__load_kernel(const char *path, const char *fusion,
			    usc_hlo_file **out, usc_error *err);

/*
 * check_figures.c: the device's error against the reference encodings
 * of part p, in ULPs, into p->ulp_reference; and an enclosure certificate
 * recorded as element j's midpoint and radius (the radius raised one step
 * so that it covers the rounding of the subtraction).
 */
struct usc__oracle_enclosure;
usc_status usc__check_reference_errors(usc__check_part *p, usc_error *err);
void usc__check_set_enclosure(usc__check_part *p, size_t j,
			      const struct usc__oracle_enclosure *e);

/*
 * The tier's decisions for the n values v of part p's elements [j0, j0 +
 * n) (all in the part) of float type t, at resolution res: each element
 * decided takes its error, its enclosure (as usc__check_set_enclosure
 * records usc__tier_enclosure's) and leaves the undecided ones, counted
 * in p->tier_decided; the same figures, bit for bit, as deciding each
 * element with usc__tier_decide_ulp_error_rn.
 */
struct usc__tier_value;
struct usc__oracle_resolution;
usc_status usc__check_tier_decide(usc__check_part *p, size_t j0,
				  const struct usc__tier_value *v, size_t n,
				  usc_dtype t,
				  const struct usc__oracle_resolution *res,
				  usc_error *err);

#endif /* USC_ANALYZE_CHECK_INTERNAL_H */
