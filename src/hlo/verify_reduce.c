/*
 * The HLO verifier's rules for reductions: reduce, reduce-window and
 * select-and-scatter (verify_internal.h).
 */
#include "internal.h"

#include <inttypes.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/verify_internal.h"
#include "ulpscope/hlo_kernel.h"

/* ----------------------------------------------------------- reductions */

/*
 * The result of a reduction over n inputs: one array of dims with the
 * init value's element type, or a tuple of n such arrays.
 */
static usc_status reduction_result(const usc__vctx *v, const usc_hlo_instr *in,
				   size_t n, const int64_t *dims, size_t rank,
				   const char *why)
{
	const usc_hlo_shape *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t k;

	if (n == 1) {
		TRY(usc__vf_want_array_result(v, in));
		TRY(usc__vf_result_type_of(v, in, 1));
		return usc__vf_result_dims(v, in, dims, rank, why);
	}
	if (r->kind != USC_HLO_SHAPE_TUPLE || r->tuple_count != n)
		return usc__vf_bad(
			v, in,
			"has shape %s, expected a tuple of %zu arrays "
			"(one per input)",
			usc_hlo_shape_format(r, a, sizeof a), n);
	for (k = 0; k < n; k++) {
		const usc_hlo_shape *e = &r->tuple[k];
		usc_dtype t = in->operands[n + k]->shape.dtype;

		if (!usc__vf_is_array(e) || e->dtype != t ||
		    !usc__vf_dims_are(e, dims, rank))
			return usc__vf_bad(v, in,
					   "result element %zu has shape %s, "
					   "expected %s (%s)",
					   k,
					   usc_hlo_shape_format(e, a, sizeof a),
					   usc__vf_fmt_dims(b, sizeof b, t,
							    dims, NULL, rank),
					   why);
	}
	return USC_OK;
}

/* Inputs 0..n-1 arrays of input 0's dims, inits n..2n-1 scalars. */
static usc_status check_inputs_inits(const usc__vctx *v,
				     const usc_hlo_instr *in, size_t *n_out)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t n, k;

	if (in->operand_count < 2 || in->operand_count % 2)
		return usc__vf_bad(v, in,
				   "has %zu operands, expected inputs and as "
				   "many init values",
				   in->operand_count);
	n = in->operand_count / 2;
	for (k = 0; k < in->operand_count; k++) {
		const usc_hlo_shape *o = &in->operands[k]->shape;

		if (!usc__vf_is_array(o))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected "
				"an array",
				k, usc_hlo_shape_format(o, a, sizeof a));
		TRY(usc__vf_want_rank(v, in, o));
		if (k < n && !usc__vf_same_dims(o, &in->operands[0]->shape))
			return usc__vf_bad(
				v, in,
				"input %zu has shape %s, but input 0 "
				"has %s",
				k, usc_hlo_shape_format(o, a, sizeof a),
				usc_hlo_shape_format(&in->operands[0]->shape, b,
						     sizeof b));
		if (k >= n && o->rank != 0)
			return usc__vf_bad(
				v, in,
				"init value %zu has shape %s, "
				"expected a scalar",
				k - n, usc_hlo_shape_format(o, a, sizeof a));
	}
	*n_out = n;
	return USC_OK;
}

usc_status usc__vf_check_reduce(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	const int64_t *d;
	size_t n, nd, i, rank = 0;

	TRY(check_inputs_inits(v, in, &n));
	o = &in->operands[0]->shape;
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &nd, &d));
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, nd, o->rank,
				   "the input", false));
	for (i = 0; i < o->rank; i++)
		if (!usc__vf_in_list(d, nd, (int64_t)i))
			dims[rank++] = o->dims[i];
	TRY(reduction_result(v, in, n, dims, rank,
			     "the input's dims without the reduced ones"));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

/* The output dims of a window over an operand (reduce-window and
 * select-and-scatter). */
static usc_status window_dims(const usc__vctx *v, const usc_hlo_instr *in,
			      const usc_hlo_shape *o, int64_t *dims)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "window");
	size_t i;

	if (!a && o->rank == 0)
		return USC_OK;
	if (!a || a->kind != USC_HLO_ATTR_WINDOW)
		return usc__vf_bad(v, in, "has no window={size=...} attribute");
	if (a->count != o->rank)
		return usc__vf_bad(
			v, in,
			"has a window of %zu dimensions, expected %zu "
			"(the operand's rank)",
			a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_window_dim *w = &a->window[i];

		if (w->size <= 0 || w->stride <= 0 || w->lhs_dilate <= 0 ||
		    w->rhs_dilate <= 0)
			return usc__vf_bad(
				v, in,
				"window dimension %zu has size %" PRId64
				", stride %" PRId64 ", dilations %" PRId64
				" and %" PRId64 "; all must be positive",
				i, w->size, w->stride, w->lhs_dilate,
				w->rhs_dilate);
		if (o->dims[i] < 0) {
			dims[i] = -1;
			continue;
		}
		dims[i] = usc__vf_strided_bound(
			usc__vf_add_sat(usc__vf_dilated_bound(o->dims[i],
							      w->lhs_dilate),
					usc__vf_add_sat(w->pad_lo, w->pad_hi)),
			usc__vf_dilated_bound(w->size, w->rhs_dilate),
			w->stride);
	}
	return USC_OK;
}

usc_status usc__vf_check_reduce_window(const usc__vctx *v,
				       const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	size_t n;

	TRY(check_inputs_inits(v, in, &n));
	o = &in->operands[0]->shape;
	TRY(window_dims(v, in, o, dims));
	TRY(reduction_result(v, in, n, dims, o->rank,
			     "the window's output size per dimension"));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

usc_status usc__vf_check_select_and_scatter(const usc__vctx *v,
					    const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o, *src, *init;
	char a[SHAPE_BUF], b[SHAPE_BUF];

	TRY(usc__vf_want_operands(v, in, 3));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	src = &in->operands[1]->shape;
	init = &in->operands[2]->shape;
	TRY(usc__vf_like_result(v, in, 0, true, false));
	TRY(window_dims(v, in, o, dims));
	if (!usc__vf_dims_are(src, dims, o->rank))
		return usc__vf_bad(v, in,
				   "source has shape %s, expected %s (the "
				   "window's output size per dimension)",
				   usc_hlo_shape_format(src, a, sizeof a),
				   usc__vf_fmt_dims(b, sizeof b, src->dtype,
						    dims, NULL, o->rank));
	if (init->rank != 0)
		return usc__vf_bad(v, in,
				   "init value has shape %s, expected a scalar",
				   usc_hlo_shape_format(init, a, sizeof a));
	TRY(usc__vf_check_scalar_comp(v, in, "select", 2));
	return usc__vf_check_scalar_comp(v, in, "scatter", 2);
}
