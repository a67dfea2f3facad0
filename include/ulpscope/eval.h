/*
 * ulpscope: the evaluator.
 *
 * One interpreter over the HLO IR, generic over a numeric domain.  The
 * interpreter knows HLO semantics once (which operand element feeds which
 * output element, the order of a reduction, the computations a reduce or a
 * fusion calls); a domain knows arithmetic once (the reference domain
 * rounds every op correctly to its declared type; the oracle encloses the
 * exact value; the f64 tier bounds it cheaply; mutant domains will plug in
 * the same way).  docs/evaluator.md describes the semantics of every op
 * and what is not supported yet.
 *
 * Use: create an evaluator for a module's entry computation, bind one
 * tensor per entry parameter, run, read the outputs (a tuple root is
 * flattened in order; a nested tuple depth-first).  An evaluator can run
 * again after new bindings.
 */
#ifndef ULPSCOPE_EVAL_H
#define ULPSCOPE_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/hlo.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The numeric domain a run computes in. */
typedef enum usc_eval_domain {
	/*
	 * Every op correctly rounded (nearest-even) to its declared element
	 * type, as a strict IEEE-style implementation would compute it.
	 */
	USC_DOMAIN_REFERENCE,
	/*
	 * The certified oracle: the exact real value of the function the
	 * kernel denotes, enclosed in an interval (docs/oracle.md).  No op
	 * rounds unless quantize is set; outputs are the enclosures'
	 * midpoints rounded to nearest, and the enclosures themselves are
	 * read by the analysis (usc_check).
	 */
	USC_DOMAIN_ORACLE,
	/*
	 * The fast certified tier: the oracle's semantics in f64 with a
	 * rigorous error radius (docs/tier.md); values it cannot bound are
	 * undecided and left to the oracle.
	 */
	USC_DOMAIN_TIER,
	/*
	 * Plain f64, certifying nothing: every float value a double, every
	 * op the native double operation or libm call, no op rounding to
	 * its declared type; outputs rounded to nearest into their types
	 * (docs/tier.md, "Plain f64").  The baseline of the tier's speed.
	 */
	USC_DOMAIN_F64,
	/*
	 * The legitimate envelope (docs/envelope.md): per element, a sound
	 * set of every value a correct compiler may produce under the
	 * device profile usc_eval_options.profile (NULL: strict).
	 */
	USC_DOMAIN_ENVELOPE
} usc_eval_domain;

/* The order in which reduce, reduce-window, dot and convolution sum. */
typedef enum usc_eval_reduce_order {
	/*
	 * Sequential by index: the reduced elements are combined one at a
	 * time, in row-major order of the reduced dimensions (ascending
	 * dimension numbers), starting from the init value (reduce) or the
	 * first product (dot, convolution).
	 */
	USC_REDUCE_SEQUENTIAL,
	/*
	 * Pairwise: the reduced elements, in the same row-major order, are
	 * combined as a balanced binary tree (left half, then right half),
	 * and the init value is combined last: f(init, tree).
	 */
	USC_REDUCE_PAIRWISE
} usc_eval_reduce_order;

typedef struct usc_eval_options {
	usc_eval_domain domain;
	usc_eval_reduce_order reduce_order;
	/* Oracle: working precision in bits of every op (0: the default). */
	unsigned long oracle_precision;
	/*
	 * Oracle: honour explicit quantization as written (narrowing
	 * converts and reduce-precision inside the kernel round; outputs
	 * never do).
	 */
	bool quantize;
	/*
	 * Loop computations (elementwise ops over one output shape, fed by
	 * parameters, scalar constants and their broadcasts; XLA's kLoop
	 * fusions) are evaluated in tiles of this many output elements, so
	 * that their intermediates never exist whole.  0: the default
	 * (USC_EVAL_TILE_DEFAULT); USC_EVAL_NO_TILES: never.  The values are
	 * the same either way.
	 */
	size_t tile_elements;
	/*
	 * Envelope: the device profile whose freedoms it propagates
	 * (include/ulpscope/profile.h), copied at create; NULL: strict.
	 */
	const struct usc_profile *profile;
	/*
	 * Oracle, for attribution (include/ulpscope/attribution.h): the
	 * results of exactly these instructions round nearest-even to their
	 * declared type, as the reference rounds them (a dot's products and
	 * sums with it; a reduce's combiner rounds when its body's add is
	 * listed); every other op stays exact.  Borrowed: the array must
	 * outlive the evaluator.  NULL / 0: nothing rounds.
	 */
	const usc_hlo_instr *const *round_only;
	size_t round_only_count;
	/*
	 * Reference: compute every function (exp, tanh, pow, ...) in MPFR,
	 * as the reference always did, instead of deciding it from the
	 * certified tier's ball in double first (docs/reference.md).  The
	 * values are the same either way; this is for audits and tests.
	 * The environment variable USC_REFERENCE_MPFR=1 does the same for
	 * every evaluator of the process.
	 */
	bool reference_mpfr;
} usc_eval_options;

#define USC_EVAL_TILE_DEFAULT 4096
#define USC_EVAL_NO_TILES ((size_t)-1)

/* The reference domain, sequential reductions. */
usc_eval_options usc_eval_options_default(void);

typedef struct usc_eval usc_eval;

/*
 * Creates an evaluator for the entry computation of module m (which must
 * outlive it), or for any computation c with usc_eval_create_computation
 * (a fused computation, for instance).  Every op reachable from the entry
 * is checked up front: an op the evaluator does not support fails with
 * USC_EUNSUPPORTED and the message
 *   unsupported op NAME at LINE:COL (instruction 'x')
 * and a constant whose values were elided ("{...}") fails with
 * USC_EUNSUPPORTED naming the constant.  opts may be NULL for the
 * defaults.
 */
usc_status usc_eval_create(const usc_hlo_module *m,
			   const usc_eval_options *opts, usc_eval **out,
			   usc_error *err);
usc_status usc_eval_create_computation(const usc_hlo_computation *c,
				       const usc_eval_options *opts,
				       usc_eval **out, usc_error *err);
void usc_eval_destroy(usc_eval *ev);

/* The number of parameters of the evaluated computation. */
size_t usc_eval_param_count(const usc_eval *ev);

/*
 * What parameter i expects: its element type and shape (dims point into
 * the IR).  spec->what is NULL.  USC_ERANGE for i out of range.
 */
usc_status usc_eval_param_spec(const usc_eval *ev, size_t i,
			       usc_tensor_spec *spec, usc_error *err);

/*
 * Binds tensor t to parameter i.  The evaluator borrows t: it must live
 * until the next usc_eval_run returns.  A type or shape that differs from
 * the parameter's fails with USC_EINVAL and a message naming the
 * parameter, e.g.
 *   parameter 0 ('x') expects f32[4,4], got bf16[4,4]
 */
usc_status usc_eval_bind(usc_eval *ev, size_t i, const usc_tensor *t,
			 usc_error *err);

/* Binds ts[0..n) to parameters 0..n-1, as usc_eval_bind does each. */
usc_status usc_eval_bind_all(usc_eval *ev, const usc_tensor *const *ts,
			     size_t n, usc_error *err);

/*
 * Runs the computation.  Every parameter must be bound.  Errors name the
 * instruction they come from.
 */
usc_status usc_eval_run(usc_eval *ev, usc_error *err);

/* The number of outputs: the leaves of the root's shape. */
size_t usc_eval_output_count(const usc_eval *ev);

/*
 * Output i of the last successful run.  The tensor belongs to the
 * evaluator and lives until the next run or destroy.
 */
usc_status usc_eval_output(const usc_eval *ev, size_t i,
			   const usc_tensor **out, usc_error *err);

/* The same, handing the tensor over to the caller (who destroys it). */
usc_status usc_eval_take_output(usc_eval *ev, size_t i, usc_tensor **out,
				usc_error *err);

/*
 * Whether the evaluator supports an opcode at all (some supported ops
 * still refuse some element types or attributes, with a clear error).
 */
bool usc_eval_supports_opcode(usc_hlo_opcode op);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_EVAL_H */
