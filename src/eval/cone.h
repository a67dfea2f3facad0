/*
 * Re-evaluation on a change's downstream cone (internal; docs/evaluator.md,
 * "Cones").
 *
 * Signature evaluates hundreds of mutants of one kernel, each differing
 * from it in one op; attribution evaluates the kernel once per op that
 * rounds, each run differing from the exact one in that op's rounding.
 * Everything upstream of the change is the same in every run.  A cone is
 * one evaluation of the unchanged kernel (the base) that keeps the value
 * of every instruction it evaluates; an evaluator of a changed kernel
 * attached to it evaluates only what the change can reach and takes every
 * other value from the base, so that its outputs are those of a whole
 * evaluation, bit for bit.
 *
 * What the interpreter knows: an instruction is *unchanged* when it is
 * written the same (a usc__cone_match says so: same computation, same
 * name, same line of HLO, or for attribution the same instruction outside
 * the set whose rounding changes), every operand is unchanged, every
 * computation it calls is the same function, and, for a parameter of a
 * fusion's or call's body, every caller is unchanged in that operand.
 * Values are immutable and deterministic, so an unchanged instruction's
 * value is the base's, provided the base evaluated it exactly once (a
 * computation called from several places has no one value per
 * instruction: its instructions are evaluated again).
 *
 * Who owns what: the cone owns the base evaluator and the kept values
 * (reference counted buffers, shared read-only with attached evaluators,
 * which must use the same domain and options as the base except the
 * rounding set, and be bound to the same input tensors: the entry's
 * parameters are taken from the base too); an attached evaluator owns its
 * map and must be destroyed before the cone.  Memory is bounded: values are kept in evaluation order
 * until their bytes (value_size per element; MPFR limbs not counted)
 * reach the budget; an unchanged instruction whose value was not kept is
 * evaluated again from its operands.  A kernel with control flow (while,
 * conditional, sort, custom-call) is evaluated whole: those ops follow the
 * reference's recorded path, which a partial run would not record.
 * Failures are out of memory and the evaluator's own.
 */
#ifndef USC_EVAL_CONE_H
#define USC_EVAL_CONE_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

/*
 * The default budget of kept values: 128 MiB, a reference evaluation of
 * sixteen million elements (8 bytes each) or an envelope of about a
 * million; the kernels of data/defects keep well under 1 MiB each.
 */
#define USC__CONE_BUDGET_DEFAULT ((size_t)128 << 20)

typedef struct usc__cone usc__cone;

/*
 * How an instruction of a changed module finds its counterpart in the
 * base: comp gives the base computation standing for c (NULL: none),
 * instr the base instruction written exactly as x (NULL: none, or x is
 * a changed one).  Both answer from the writing alone; the operands'
 * values are the cone's business.
 */
typedef struct usc__cone_match {
	const usc_hlo_computation *(*comp)(void *ctx,
					   const usc_hlo_computation *c);
	const usc_hlo_instr *(*instr)(void *ctx, const usc_hlo_instr *x);
	void *ctx;
} usc__cone_match;

/*
 * Evaluates computation c with options o on the inputs (n of them) once,
 * whole (no tiles), keeping instruction values up to budget bytes (0:
 * USC__CONE_BUDGET_DEFAULT).  The base evaluator's outputs are then read
 * as after usc_eval_run (usc__cone_base).
 */
usc_status usc__cone_create(const usc_hlo_computation *c,
			    const usc_eval_options *o,
			    const usc_tensor *const *inputs, size_t n,
			    size_t budget, usc__cone **out, usc_error *err);

/* The base's evaluator, after its run (the cone keeps ownership). */
usc_eval *usc__cone_base(const usc__cone *k);

/* The bytes of values kept, and whether some were left out for the budget. */
void usc__cone_kept(const usc__cone *k, size_t *bytes, bool *over_budget);

void usc__cone_destroy(usc__cone *k);

/*
 * Attaches ev (a new evaluator of the changed kernel, not run yet) to the
 * cone: its runs then evaluate only what differs from the base.  A kernel
 * the cone cannot serve (control flow, kept instructions) is left as it
 * was and evaluated whole; k NULL does nothing either.
 */
usc_status usc__cone_attach(usc_eval *ev, usc__cone *k,
			    const usc__cone_match *m, usc_error *err);

/*
 * What ev's runs since attaching did: instructions evaluated and values
 * taken from the base (both 0 for an evaluator not attached).
 */
void usc__cone_counts(const usc_eval *ev, size_t *evaluated,
		      size_t *reused);

/* ------------------------------------------------------- matchers */

/*
 * The same module, the instructions of seeds (n of them) changed: what
 * attribution needs (its runs differ only in which ops round).  The
 * match holds pointers into seeds, which must outlive it.
 */
typedef struct usc__cone_seeds {
	const usc_hlo_instr *const *seeds;
	size_t n;
} usc__cone_seeds;

usc__cone_match usc__cone_match_seeds(usc__cone_seeds *s);

/*
 * Two modules parsed from HLO text (signature's mutants and the printed
 * kernel they come from): an instruction's counterpart is the base's
 * instruction of the same name in the computation of the same name whose
 * line is the same text.
 */
typedef struct usc__cone_text usc__cone_text;

/* Indexes base, parsed from text (len bytes, kept by the caller). */
usc_status usc__cone_text_create(const usc_hlo_module *base, const char *text,
				 size_t len, usc__cone_text **out,
				 usc_error *err);
/*
 * The match of changed, parsed from text (len bytes): valid until the next
 * call or usc__cone_text_destroy; text must outlive its use.
 */
usc_status usc__cone_text_match(usc__cone_text *t,
				const usc_hlo_module *changed,
				const char *text, size_t len,
				usc__cone_match *m, usc_error *err);
void usc__cone_text_destroy(usc__cone_text *t);

#endif /* USC_EVAL_CONE_H */
