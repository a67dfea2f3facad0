/*
 * Internal: what the analysis reads of an evaluator beyond its public API.
 *
 * After a successful run the evaluator keeps the domain values of its
 * outputs (reference encodings, oracle enclosures...) until the next run or
 * destroy, so that the analysis can read certificates that an output
 * tensor of encodings cannot carry.
 */
#ifndef USC_EVAL_VALUES_H
#define USC_EVAL_VALUES_H

#include <stddef.h>

#include "ulpscope/dtype.h"
#include "ulpscope/eval.h"

/*
 * The values of output i (count of them, each the domain's value_size
 * bytes, row-major) and their element type.  USC_ERANGE when there is no
 * such output or no successful run.
 */
usc_status usc__eval_output_values(const usc_eval *ev, size_t i,
				   const void **values, size_t *count,
				   usc_dtype *dtype);

/* The domain's state (oracles/oracle.h takes it, e.g. for its precision). */
void *usc__eval_domain_state(const usc_eval *ev);

#endif /* USC_EVAL_VALUES_H */
