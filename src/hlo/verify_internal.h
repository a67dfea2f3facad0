/*
 * The HLO verifier, internal: what its files share (verify.c holds the
 * module comment with the rules followed and the driver).
 *
 * The pieces:
 *   - verify_common.c: the message formatting, the one error path (every
 *     violation goes through usc__vf_bad, so all messages read alike) and
 *     the helpers on shapes, attributes, operands and called computations.
 *   - verify_array.c: elementwise ops, map and the data-movement ops
 *     (broadcast, reshape, transpose, slices, concatenate, pad, iota,
 *     reverse).
 *   - verify_reduce.c: reduce, reduce-window and select-and-scatter.
 *   - verify_dot.c: the ops with dimension numbers: dot, convolution,
 *     gather and scatter.
 *   - verify.c: tuples, parameters, literals, sort, the dispatch over
 *     opcodes, the cycle check and the public entry points.
 * No function here allocates except the cycle check's work arrays; each
 * check returns USC_OK or the status of usc__vf_bad, whose message names
 * the file, line:column, op and computation.
 */
#ifndef USC_HLO_VERIFY_INTERNAL_H
#define USC_HLO_VERIFY_INTERNAL_H

#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/kernel_internal.h"
#include "ulpscope/hlo.h"

/*
 * Expected dimensions are built in fixed arrays of this many entries,
 * far above the rank of any real HLO array; a deeper one is reported
 * rather than overrun.
 */
#define USC__VERIFY_MAX_RANK 64

/* The size of a buffer that holds one shape's text in a message. */
#define SHAPE_BUF 160

/* What a message names besides the instruction, and where it goes. */
typedef struct usc__vctx {
	const char *filename;
	const usc_hlo_module *module;
	const usc_hlo_computation *comp;
	usc_error *err;
} usc__vctx;

/* ------------------------------------------------------------ formatting */
char *usc__vf_fmt_dims(char *buf, size_t size, usc_dtype dt,
		       const int64_t *dims, const uint8_t *kinds, size_t rank);
char *usc__vf_fmt_ints(char *buf, size_t size, const int64_t *v, size_t n);

/* --------------------------------------------------------------- errors */
usc_status usc__vf_bad(const usc__vctx *v, const usc_hlo_instr *in,
		       const char *fmt, ...) USC__PRINTF(3, 4);

/* -------------------------------------------------------- shape helpers */
bool usc__vf_dim_eq(int64_t a, int64_t b);
bool usc__vf_is_array(const usc_hlo_shape *s);
bool usc__vf_same_dims(const usc_hlo_shape *a, const usc_hlo_shape *b);
bool usc__vf_dims_are(const usc_hlo_shape *s, const int64_t *dims,
		      size_t rank);
bool usc__vf_same_shape(const usc_hlo_shape *a, const usc_hlo_shape *b);
bool usc__vf_any_unbounded(const usc_hlo_shape *s);
int64_t usc__vf_add_sat(int64_t a, int64_t b);
int64_t usc__vf_mul_sat(int64_t a, int64_t b);
int64_t usc__vf_dilated_bound(int64_t bound, int64_t d);
int64_t usc__vf_strided_bound(int64_t bound, int64_t window, int64_t stride);

/* --------------------------------------------------- attribute helpers */
usc_status usc__vf_get_ints(const usc__vctx *v, const usc_hlo_instr *in,
			    const char *name, bool required, size_t *n,
			    const int64_t **ints);
usc_status usc__vf_get_int(const usc__vctx *v, const usc_hlo_instr *in,
			   const char *name, bool required, int64_t dflt,
			   int64_t *out);
usc_status usc__vf_check_dim_list(const usc__vctx *v, const usc_hlo_instr *in,
				  const char *name, const int64_t *d, size_t n,
				  size_t rank, const char *of, bool sorted);
bool usc__vf_in_list(const int64_t *d, size_t n, int64_t x);

/* ---------------------------------------------------- operand helpers */
usc_status usc__vf_want_operands(const usc__vctx *v, const usc_hlo_instr *in,
				 size_t n);
usc_status usc__vf_want_min_operands(const usc__vctx *v,
				     const usc_hlo_instr *in, size_t n);
usc_status usc__vf_want_rank(const usc__vctx *v, const usc_hlo_instr *in,
			     const usc_hlo_shape *s);
usc_status usc__vf_want_array_result(const usc__vctx *v,
				     const usc_hlo_instr *in);
usc_status usc__vf_want_arrays(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_like_result(const usc__vctx *v, const usc_hlo_instr *in,
			       size_t i, bool check_type, bool allow_scalar);
usc_status usc__vf_result_dims(const usc__vctx *v, const usc_hlo_instr *in,
			       const int64_t *dims, size_t rank,
			       const char *why);
usc_status usc__vf_result_type_of(const usc__vctx *v, const usc_hlo_instr *in,
				  size_t i);
usc_status usc__vf_check_start_indices(const usc__vctx *v,
				       const usc_hlo_instr *in, size_t first,
				       size_t rank);

/* ------------------------------------------------------ called comps */
size_t usc__vf_param_count(const usc_hlo_computation *c);
usc_status usc__vf_check_scalar_comp(const usc__vctx *v,
				     const usc_hlo_instr *in, const char *attr,
				     size_t n);
usc_status usc__vf_check_call(const usc__vctx *v, const usc_hlo_instr *in,
			      const char *attr);

/* ------------------------------------------------------- elementwise */
usc_status usc__vf_check_elementwise(const usc__vctx *v,
				     const usc_hlo_instr *in);
usc_status usc__vf_check_map(const usc__vctx *v, const usc_hlo_instr *in);

/* -------------------------------------------------------- data movement */
usc_status usc__vf_check_broadcast(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_reshape(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_transpose(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_slice(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_dynamic_slice(const usc__vctx *v,
				       const usc_hlo_instr *in);
usc_status usc__vf_check_dynamic_update_slice(const usc__vctx *v,
					      const usc_hlo_instr *in);
usc_status usc__vf_check_concatenate(const usc__vctx *v,
				     const usc_hlo_instr *in);
usc_status usc__vf_check_pad(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_iota(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_reverse(const usc__vctx *v, const usc_hlo_instr *in);

/* ----------------------------------------------------------- reductions */
usc_status usc__vf_check_reduce(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_reduce_window(const usc__vctx *v,
				       const usc_hlo_instr *in);
usc_status usc__vf_check_select_and_scatter(const usc__vctx *v,
					    const usc_hlo_instr *in);

/* ------------------------------------------------------- linear algebra */
usc_status usc__vf_check_dot(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_convolution(const usc__vctx *v,
				     const usc_hlo_instr *in);

/* ---------------------------------------------------- gather and scatter */
usc_status usc__vf_check_gather(const usc__vctx *v, const usc_hlo_instr *in);
usc_status usc__vf_check_scatter(const usc__vctx *v, const usc_hlo_instr *in);

#endif /* USC_HLO_VERIFY_INTERNAL_H */
