/*
 * ulpscope: per-element error attribution (docs/attribution.md).
 *
 * Which op of a kernel causes each output element's rounding error.  For
 * every op u that the strict reference rounds (arithmetic, functions,
 * narrowing converts, dots, reductions: a reduce's combiner additions count
 * as the reduce), the kernel is evaluated in the oracle domain with only
 * u's results rounded nearest-even to their declared type and every other
 * op exact, and compared with the oracle y* (nothing rounded), in ULPs of
 * the output format at y*:
 *
 *   contribution_u = (y_u - y*) / ulp(y*)
 *   total          = (y_ref - y*) / ulp(y*)
 *   residual       = total - sum_u contribution_u   (the interaction)
 *
 * y_u is not rounded again at the output: the output's rounding is the
 * rounding of the op that computes it, which is one of the u.  All three
 * figures use the same y* (the midpoint of the oracle's enclosure at the
 * working precision) and are formed exactly in MPFR before each is
 * rounded once to double, so contributions + residual = total holds
 * exactly up to that last rounding of each stored figure.
 *
 * Cost: one reference run and one oracle run per attributed op, plus one.
 */
#ifndef ULPSCOPE_ATTRIBUTION_H
#define ULPSCOPE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of top contributors kept per element by default. */
#define USC_ATTR_TOP_K_DEFAULT 3
/* The most ops attributed by default (each costs one oracle run). */
#define USC_ATTR_MAX_OPS_DEFAULT 64
/* Marks an empty top-k slot (fewer ops with a nonzero contribution). */
#define USC_ATTR_NO_OP UINT32_MAX

typedef struct usc_attr_options {
	/* Top contributors kept per element; 0: USC_ATTR_TOP_K_DEFAULT. */
	size_t top_k;
	/*
	 * The most ops to attribute; a kernel with more fails with
	 * USC_ERANGE naming the count (0: USC_ATTR_MAX_OPS_DEFAULT).
	 */
	size_t max_ops;
	/* Oracle working precision in bits (0: 128). */
	unsigned long precision;
	usc_eval_reduce_order reduce_order;
	/* Honour explicit quantization in the oracle (usc_eval_options). */
	bool quantize;
} usc_attr_options;

usc_attr_options usc_attr_options_default(void);

/*
 * One attributed op: an instruction (and, for a reduce, the computation
 * it applies), with its source provenance and its budget over every
 * element whose figures are finite.
 */
typedef struct usc_attr_op {
	const usc_hlo_instr *instr;
	/*
	 * The instruction's name; when several reduces share one body (so
	 * that rounding it rounds them all) the names joined by '+'.
	 */
	char *name;
	const char *opcode;
	const char *op_type;     /* metadata; NULL when absent */
	const char *op_name;     /* metadata; NULL when absent */
	/*
	 * source_file:source_line from the metadata, or resolved through the
	 * module's StackFrames table from stack_frame_id (the innermost
	 * frame); NULL / -1 when unknown.  Owned.
	 */
	char *source_file;
	int64_t source_line;
	double mean_abs; /* mean |contribution| */
	double max_abs;  /* max |contribution| */
	double sum_abs;  /* sum of |contribution| */
	/*
	 * sum_abs over the error mass: the sum over elements of
	 * sum_u |contribution_u| + |residual|.  Shares of all ops and the
	 * residual's add up to 1.
	 */
	double share;
} usc_attr_op;

/* One output's figures; arrays of count (or count x top_k) elements. */
typedef struct usc_attr_output {
	usc_dtype dtype;
	uint64_t count;
	/*
	 * Per element: the total reference error, the residual and, row-
	 * major count x op_count, every op's contribution, all in ULPs of
	 * dtype at y*; NaN where undefined (a non-float output, a NaN or Inf
	 * on either side, an undecided oracle value).
	 */
	double *total;
	double *residual;
	double *contrib;
	/*
	 * The top_k ops by |contribution| (ties: the lower op index), only
	 * nonzero ones: op indices (USC_ATTR_NO_OP in empty slots), their
	 * contributions and shares of the element's error mass
	 * (|c| / (sum_u |c_u| + |residual|); 0 in empty slots).
	 */
	uint32_t *top_ops;
	double *top_contrib;
	double *top_share;
	/* Elements with finite figures (those the budget sums). */
	uint64_t attributed;
} usc_attr_output;

typedef struct usc_attribution {
	size_t op_count;
	usc_attr_op *ops;
	size_t top_k;
	unsigned long precision;
	size_t output_count;
	usc_attr_output *outputs;
	/* The residual's budget, as an op's. */
	double residual_mean_abs, residual_max_abs, residual_sum_abs;
	double residual_share;
	uint64_t attributed; /* elements with finite figures, all outputs */
} usc_attribution;

/*
 * Attributes the rounding error of computation c of module m (m: for its
 * stack-frame tables; may be NULL) on the given inputs (one per
 * parameter, as usc_eval_bind takes them).  opt may be NULL.
 */
usc_status usc_attribute(const usc_hlo_module *m,
			 const usc_hlo_computation *c,
			 const usc_tensor *const *inputs, size_t input_count,
			 const usc_attr_options *opt, usc_attribution **out,
			 usc_error *err);

void usc_attribution_destroy(usc_attribution *a);

/*
 * The attribution as the result file stores it (results.h,
 * docs/attribution.md): *out, the kernel's table (free it with
 * usc_attribution_results_free), and each of the output_count outputs'
 * top_k, top_ops, top_contrib, attr_total and attr_residual pointed at
 * a's arrays (a must outlive outs).  USC_EINVAL when the output counts
 * differ.
 */
struct usc_results_attribution;
struct usc_results_output;
usc_status usc_attribution_results(const usc_attribution *a,
				   struct usc_results_attribution **out,
				   struct usc_results_output *outs,
				   size_t output_count, usc_error *err);
void usc_attribution_results_free(struct usc_results_attribution *r);

/*
 * "tanh.3 (model.py:142)" or "tanh.3" into buf; returns buf.
 */
const char *usc_attr_op_label(const usc_attr_op *op, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_ATTRIBUTION_H */
