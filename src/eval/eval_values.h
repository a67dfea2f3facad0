/*
 * Internal: what the analysis reads of an evaluator beyond its public API.
 *
 * The domain values of the outputs (reference encodings, oracle
 * enclosures, tier balls) carry certificates that an output tensor of
 * encodings cannot.  Two ways to read them:
 *
 *   - usc__eval_run_stream hands them to a visitor piece by piece: a loop
 *     computation (docs/evaluator.md, "Tiles") one tile at a time, while
 *     it runs, so that they never exist whole; any other computation one
 *     whole output at a time, after the run.  It can also evaluate only
 *     the tiles that hold wanted elements.
 *   - usc__eval_output_values reads them whole after a run: always after
 *     a computation evaluated whole, and after a streamed one only when
 *     the run was asked to keep them (keep below).
 */
#ifndef USC_EVAL_VALUES_H
#define USC_EVAL_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/eval.h"

#include "../../oracles/domain.h"

/*
 * Receives count values of output `output`, those of the flat (row-major)
 * elements [first, first + count), each the domain's value_size bytes, of
 * element type dtype.  The values are the evaluator's and live only for
 * the call; the output tensor already holds their encodings.  A status
 * other than USC_OK (with err set) stops the run with that status.
 */
typedef usc_status (*usc__eval_visit_fn)(void *ctx, size_t output,
					 size_t first, size_t count,
					 const void *values, usc_dtype dtype,
					 usc_error *err);

typedef struct usc__eval_stream {
	usc__eval_visit_fn visit; /* NULL: no visitor */
	void *ctx;
	/*
	 * NULL: every element.  Otherwise one byte map per output (its
	 * element count; nonzero: wanted), or NULL for all of that output.
	 * A loop computation then evaluates only the tiles that hold a
	 * wanted element: the others are neither loaded nor computed, their
	 * elements of the output tensor stay 0 and the visitor never sees
	 * them.  Any other computation is evaluated whole (and visited
	 * whole).  Either way the visitor may see elements nobody wanted.
	 */
	const uint8_t *const *wanted;
	/*
	 * Keep every output's values whole for usc__eval_output_values, also
	 * when the computation streams (which costs value_size bytes per
	 * output element: what streaming saves).  Elements of skipped tiles
	 * are then freshly initialized values, not results.
	 */
	bool keep;
	/*
	 * A range of the output of a streamed computation: count 0, every
	 * element; otherwise only the tiles that hold an element of
	 * [first, first + count) are evaluated, and the wanted map is
	 * indexed from first (wanted[0][k - first] for element k).  A
	 * computation evaluated whole ignores it, as it ignores wanted.
	 */
	uint64_t first, count;
	/*
	 * A streamed computation makes no output tensor: its values go to
	 * the visitor only (usc_eval_take_output then has nothing).  Saves
	 * the tensor's bytes when a caller runs many ranges.
	 */
	bool no_tensor;
} usc__eval_stream;

/*
 * Runs the evaluator as usc_eval_run does (same outputs, same errors),
 * with the stream's visitor and subset; s NULL is usc_eval_run.
 */
usc_status usc__eval_run_stream(usc_eval *ev, const usc__eval_stream *s,
				usc_error *err);

/*
 * The values of output i (count of them, each the domain's value_size
 * bytes, row-major) and their element type.  USC_ERANGE when there is no
 * such output, no successful run, or the last run streamed its outputs
 * without keep.
 */
usc_status usc__eval_output_values(const usc_eval *ev, size_t i,
				   const void **values, size_t *count,
				   usc_dtype *dtype);

/*
 * Whether a run of ev streams (docs/evaluator.md, "Tiles"): its one
 * output made tile by tile, so that a range (usc__eval_stream's first
 * and count) evaluates only its tiles.  *tile receives the tile size.
 */
usc_status usc__eval_streams(const usc_eval *ev, bool *streams, size_t *tile,
			     usc_error *err);

/* The domain's state (oracles/oracle.h takes it, e.g. for its precision). */
void *usc__eval_domain_state(const usc_eval *ev);

/* The domain's table (value_size, to_output...). */
const usc__domain_ops *usc__eval_domain(const usc_eval *ev);

/*
 * How the last successful run evaluated: the output elements it computed
 * (all of them, unless a subset skipped tiles) and the tiles it streamed
 * (0 when it evaluated the computation whole).
 */
void usc__eval_last_run(const usc_eval *ev, uint64_t *elements,
			uint64_t *tiles);

/*
 * Bisection (src/analyze/bisect.c): keep the values of named instructions,
 * not only of the outputs.  in is an instruction of the evaluated
 * computation or of a computation it calls through fusion or call (never
 * a reduce, map or scatter body, which are evaluated per element).  A run
 * with instructions to keep evaluates whole, never in tiles, and also
 * evaluates a kept instruction that nothing uses.  If a kept instruction
 * is evaluated more than once in a run (its computation is called from
 * several places), the run fails naming it: its values would not be one
 * tensor.  Keeping the same instruction twice is keeping it once.
 */
usc_status usc__eval_keep(usc_eval *ev, const usc_hlo_instr *in,
			  usc_error *err);

/*
 * The values the last successful run kept of instruction in (count of
 * them, each the domain's value_size bytes, row-major) and its element
 * type.  USC_ERANGE when in is not kept, not an array, or was not
 * evaluated by the last run.
 */
usc_status usc__eval_kept_values(const usc_eval *ev, const usc_hlo_instr *in,
				 const void **values, size_t *count,
				 usc_dtype *dtype);

/*
 * The device's outputs of the kernel (device[i] is output i, a tuple
 * flattened), for the unstable sorts and TopK of ev's computation whose
 * results are outputs (directly or through get-tuple-element, tuple,
 * copy, reshape or an order-keeping bitcast): a reference run, and the
 * reference run every other domain replays, then puts each group of
 * elements that compare equal in the device's order when the device's
 * group is a permutation of its own (docs/evaluator.md, "Sort order").
 * ev keeps the pointers, not the tensors, which must outlive its runs; a
 * tensor of another type or size than its output is not read.  *follows
 * receives whether ev has such a sort (a run may then give other values
 * than without the device's outputs).  NULL or n 0: none.
 */
usc_status usc__eval_follow_device(usc_eval *ev,
				   const usc_tensor *const *device, size_t n,
				   bool *follows);

#endif /* USC_EVAL_VALUES_H */
