/*
 * Control flow in the evaluator (control.c, sort.c): while, conditional,
 * sort and XLA's TopK custom call.
 *
 * The rule (docs/evaluator.md, "Control flow"): every domain follows the
 * control path of the strict reference.  A run in the reference domain
 * decides each while's condition, each conditional's branch and each
 * sort's order from its own values and records the decisions in a trace,
 * per instruction in the order of its executions.  A run in any other
 * domain (oracle, tier, f64, envelope) first runs a reference evaluator
 * of the same computation on the same bound tensors (its shadow), then
 * replays that trace: it runs a loop body as many times as the reference
 * did, takes the reference's branch and moves elements to where the
 * reference's sort put them.  An interval domain cannot decide a
 * predicate whose enclosure straddles it, and the device follows its
 * own: so where a domain's own value decides the predicate the other way
 * than the reference, the run fails with "control flow differs" rather
 * than guessing which path the device took.
 *
 * Loops are bounded: a while whose condition holds after max_iterations
 * runs of its body (include/ulpscope/limits.h, --max-iterations) fails
 * naming the instruction.
 */
#ifndef USC_EVAL_CONTROL_H
#define USC_EVAL_CONTROL_H

#include "eval_internal.h"

/*
 * Checks the instruction (a while, conditional, sort or custom call)
 * when the evaluator is created: its computations' signatures against
 * its operands, with errors naming its line:column.  A sort's comparator
 * is compiled here in the reference domain.  Marks the evaluator as one
 * with control flow.
 */
usc_status usc__ctl_check(usc_eval *ev, const usc_hlo_instr *in,
			  usc_error *err);

/* Evaluates a while, conditional, sort or TopK custom call. */
usc_status usc__ctl_eval(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__evalue *res,
			 usc_error *err);

/*
 * Before a run: a reference evaluator starts a new trace; any other runs
 * its shadow to record the reference's path.  Nothing without control
 * flow.
 */
usc_status usc__ctl_prepare(usc_eval *ev, usc_error *err);

void usc__ctl_free(usc_eval *ev);

/* Sorting (sort.c), shared by sort and TopK. */

/*
 * Whether element a goes before element b: the comparator fn called on
 * (lhs_0, rhs_0, lhs_1, rhs_1, ...) where lhs_k is element a of vals[k].
 */
typedef struct usc__sort_cmp {
	usc_eval *ev;
	usc__sfn *fn;
	size_t nops;
	const void *const *vals; /* nops arrays of domain values */
} usc__sort_cmp;

/*
 * Sorts perm[0..n) (flat element indices) stably by the comparator;
 * tmp holds n.  A comparator that fails stops the sort with its status.
 */
usc_status usc__sort_stable(const usc__sort_cmp *cmp, size_t *perm,
			    size_t *tmp, size_t n, usc_error *err);

/* The sort and TopK bodies (sort.c); order is the trace's permutation. */
usc_status usc__eval_sort(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__evalue *res,
			  bool record, int64_t *order, usc_error *err);
usc_status usc__eval_topk(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__evalue *res,
			  bool record, int64_t *order, usc_error *err);

/* The comparator of a sort or TopK, checked (and compiled: reference). */
usc_status usc__sort_check(usc_eval *ev, const usc_hlo_instr *in,
			   const usc_hlo_computation *cmp,
			   const usc_dtype *types, size_t n,
			   usc_error *err);

/*
 * The number of values a sort's or TopK's trace records: the source of
 * each flat output position, then one more, 0 or 1 + the first position
 * whose tie group leaves a value that feeds further ops undetermined
 * (sort.c, "The device's order").
 */
size_t usc__sort_trace_len(const usc_hlo_instr *in);

/*
 * Whether in is an unstable sort or a TopK of ev's computation some of
 * whose results are outputs, which a reference run with the device's
 * outputs (usc__eval_follow_device) may reorder.
 */
bool usc__sort_follows(const usc_eval *ev, const usc_hlo_instr *in);

/* The device's outputs given to ev (none: NULL and *n 0). */
const usc_tensor *const *usc__ctl_device(const usc_eval *ev, size_t *n);

/* Evaluator internals control.c needs (walk.c, buffers.c). */
usc_status usc__eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const usc__evalue *args, size_t nargs,
				 usc__evalue *result, usc_error *err);
usc_status usc__evalue_alloc(usc__evalue *v, size_t n, usc_error *err);
void usc__evalue_clear(usc_eval *ev, usc__evalue *v);
usc_status usc__evalue_share(usc__evalue *res, usc__ebuf *const *leaves,
			     size_t n, usc_error *err);

#endif /* USC_EVAL_CONTROL_H */
