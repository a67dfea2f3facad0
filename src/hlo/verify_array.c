/*
 * The HLO verifier's rules for elementwise ops, map and the data-movement
 * ops (verify_internal.h).
 */
#include "internal.h"

#include <inttypes.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/verify_internal.h"
#include "ulpscope/hlo_kernel.h"

/* ------------------------------------------------------- elementwise */

static int type_bits(usc_dtype t)
{
	/* XLA stores pred in a byte, and bitcast-convert counts it so. */
	if (t == USC_PRED)
		return 8;
	return usc_format_of(t) ? usc_format_of(t)->bits : 0;
}

static usc_status check_bitcast_convert(const usc__vctx *v,
					const usc_hlo_instr *in)
{
	const usc_hlo_shape *o = &in->operands[0]->shape, *r = &in->shape;
	int ib = type_bits(o->dtype), ob = type_bits(r->dtype);
	int64_t dims[USC__VERIFY_MAX_RANK + 1];
	char why[96];
	size_t i, rank;

	if (ib == ob || ib <= 0 || ob <= 0)
		return usc__vf_like_result(v, in, 0, false, false);
	if (ib % ob && ob % ib)
		return usc__vf_bad(v, in,
				   "converts %d-bit %s to %d-bit %s, whose "
				   "widths do not divide each other",
				   ib, usc_dtype_name(o->dtype), ob,
				   usc_dtype_name(r->dtype));
	if (ib > ob) {
		/* Each element splits into a new minor dimension. */
		if (o->rank >= USC__VERIFY_MAX_RANK)
			return usc__vf_want_rank(v, in, r);
		for (i = 0; i < o->rank; i++)
			dims[i] = o->dims[i];
		dims[o->rank] = ib / ob;
		rank = o->rank + 1;
	} else {
		/* The operand's minor dimension merges into one element. */
		if (o->rank == 0 ||
		    !usc__vf_dim_eq(o->dims[o->rank - 1], ob / ib))
			return usc__vf_bad(
				v, in,
				"converts %d-bit %s to %d-bit %s, "
				"so the operand's minor dimension must "
				"have size %d",
				ib, usc_dtype_name(o->dtype), ob,
				usc_dtype_name(r->dtype), ob / ib);
		for (i = 0; i + 1 < o->rank; i++)
			dims[i] = o->dims[i];
		rank = o->rank - 1;
	}
	snprintf(why, sizeof why, "%d-bit %s elements as %d-bit %s", ib,
		 usc_dtype_name(o->dtype), ob, usc_dtype_name(r->dtype));
	return usc__vf_result_dims(v, in, dims, rank, why);
}

usc_status usc__vf_check_elementwise(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	int arity = usc_hlo_opcode_arity(in->opcode);
	int64_t e, mbits;
	size_t i;

	if (arity >= 0)
		TRY(usc__vf_want_operands(v, in, (size_t)arity));
	TRY(usc__vf_want_arrays(v, in));
	switch (in->opcode) {
	case USC_HLO_OP_COMPARE:
		if (in->shape.dtype != USC_PRED)
			return usc__vf_bad(v, in,
					   "has element type %s, expected pred",
					   usc_dtype_name(in->shape.dtype));
		TRY(usc__vf_like_result(v, in, 0, false, false));
		TRY(usc__vf_like_result(v, in, 1, false, false));
		if (in->operands[1]->shape.dtype != in->operands[0]->shape.dtype)
			return usc__vf_bad(
				v, in,
				"operand 1 has element type %s, "
				"expected %s (operand 0's)",
				usc_dtype_name(in->operands[1]->shape.dtype),
				usc_dtype_name(in->operands[0]->shape.dtype));
		if (!usc_hlo_instr_attr(in, "direction"))
			return usc__vf_bad(v, in, "has no direction attribute");
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		if (in->shape.dtype != USC_PRED)
			return usc__vf_bad(v, in,
					   "has element type %s, expected pred",
					   usc_dtype_name(in->shape.dtype));
		return usc__vf_like_result(v, in, 0, false, false);
	case USC_HLO_OP_CONVERT:
	case USC_HLO_OP_REAL:
	case USC_HLO_OP_IMAG:
	case USC_HLO_OP_COMPLEX:
	case USC_HLO_OP_STOCHASTIC_CONVERT:
		for (i = 0; i < in->operand_count; i++)
			TRY(usc__vf_like_result(v, in, i, false, false));
		return USC_OK;
	case USC_HLO_OP_ABS:
		/* |complex| is real: only the dims carry over. */
		return usc__vf_like_result(
			v, in, 0,
			usc_format_of(in->operands[0]->shape.dtype) &&
				usc_format_of(in->operands[0]->shape.dtype)
						->kind != USC_KIND_COMPLEX,
			false);
	case USC_HLO_OP_BITCAST_CONVERT:
		return check_bitcast_convert(v, in);
	case USC_HLO_OP_REDUCE_PRECISION:
		TRY(usc__vf_like_result(v, in, 0, true, false));
		TRY(usc__vf_get_int(v, in, "exponent_bits", true, 0, &e));
		TRY(usc__vf_get_int(v, in, "mantissa_bits", true, 0, &mbits));
		if (e < 1 || mbits < 0)
			return usc__vf_bad(v, in, "has exponent_bits=%" PRId64
					   " and mantissa_bits=%" PRId64
					   ", expected at least 1 and 0",
					   e, mbits);
		return USC_OK;
	case USC_HLO_OP_SELECT:
		if (in->operands[0]->shape.dtype != USC_PRED)
			return usc__vf_bad(
				v, in,
				"operand 0 has element type %s, "
				"expected pred",
				usc_dtype_name(in->operands[0]->shape.dtype));
		TRY(usc__vf_like_result(v, in, 0, false, true));
		TRY(usc__vf_like_result(v, in, 1, true, false));
		return usc__vf_like_result(v, in, 2, true, false);
	case USC_HLO_OP_CLAMP:
		TRY(usc__vf_like_result(v, in, 0, true, true));
		TRY(usc__vf_like_result(v, in, 1, true, false));
		return usc__vf_like_result(v, in, 2, true, true);
	default:
		for (i = 0; i < in->operand_count; i++)
			TRY(usc__vf_like_result(v, in, i, true, false));
		return USC_OK;
	}
}

usc_status usc__vf_check_map(const usc__vctx *v, const usc_hlo_instr *in)
{
	size_t i;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	for (i = 0; i < in->operand_count; i++)
		TRY(usc__vf_like_result(v, in, i, false, false));
	return usc__vf_check_scalar_comp(v, in, "to_apply", in->operand_count);
}

/* -------------------------------------------------------- data movement */

usc_status usc__vf_check_broadcast(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *r = &in->shape;
	const int64_t *d;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_get_ints(v, in, "dimensions", o->rank != 0, &n, &d));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dimensions=%s with %zu entries, "
				   "expected %zu (the operand's rank)",
				   usc__vf_fmt_ints(l, sizeof l, d, n), n,
				   o->rank);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, r->rank,
				   "the result", false));
	for (i = 0; i < n; i++)
		if (!usc__vf_dim_eq(o->dims[i], r->dims[d[i]]))
			return usc__vf_bad(
				v, in,
				"maps operand dimension %zu (size %" PRId64
				") to result dimension %" PRId64
				" (size %" PRId64 ")",
				i, o->dims[i], d[i], r->dims[d[i]]);
	return USC_OK;
}

usc_status usc__vf_check_reshape(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o;
	int64_t a, b;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	if (usc__vf_any_unbounded(o) || usc__vf_any_unbounded(&in->shape))
		return USC_OK;
	a = usc_hlo_shape_elements(o);
	b = usc_hlo_shape_elements(&in->shape);
	if (a != b)
		return usc__vf_bad(v, in,
				   "has %" PRId64 " elements, but its operand "
				   "has %" PRId64,
				   b, a);
	return USC_OK;
}

usc_status usc__vf_check_transpose(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	const int64_t *d;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dimensions=%s, not a permutation of "
				   "the operand's %zu dimensions",
				   usc__vf_fmt_ints(l, sizeof l, d, n),
				   o->rank);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, o->rank,
				   "the operand", false));
	for (i = 0; i < n; i++)
		dims[i] = o->dims[d[i]];
	return usc__vf_result_dims(
		v, in, dims, n,
		"the operand's dims in the order of dimensions");
}

usc_status usc__vf_check_slice(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_attr *a;
	const usc_hlo_shape *o;
	size_t i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	a = usc_hlo_instr_attr(in, "slice");
	if (!a || a->kind != USC_HLO_ATTR_SLICE)
		return usc__vf_bad(v, in,
				   "has no slice={[start:limit:stride], ...} "
				   "attribute");
	if (a->count != o->rank)
		return usc__vf_bad(v, in,
				   "has %zu slice ranges, expected %zu (the "
				   "operand's rank)",
				   a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_slice_dim *s = &a->slice[i];

		if (s->start < 0 || s->limit < s->start ||
		    (o->dims[i] >= 0 && s->limit > o->dims[i]) ||
		    s->stride <= 0)
			return usc__vf_bad(v, in,
					   "slice range %zu [%" PRId64
					   ":%" PRId64 ":%" PRId64
					   "] does not fit dimension %zu "
					   "of size %" PRId64,
					   i, s->start, s->limit, s->stride, i,
					   o->dims[i]);
		dims[i] = (s->limit - s->start + s->stride - 1) / s->stride;
	}
	return usc__vf_result_dims(
		v, in, dims, a->count,
		"ceil((limit - start) / stride) per dimension");
}

usc_status usc__vf_check_dynamic_slice(const usc__vctx *v,
				       const usc_hlo_instr *in)
{
	const usc_hlo_shape *o;
	const int64_t *sz;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_check_start_indices(v, in, 1, o->rank));
	TRY(usc__vf_get_ints(v, in, "dynamic_slice_sizes", true, &n, &sz));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dynamic_slice_sizes=%s, expected %zu "
				   "sizes (the operand's rank)",
				   usc__vf_fmt_ints(l, sizeof l, sz, n),
				   o->rank);
	for (i = 0; i < n; i++)
		if (sz[i] < 0 || (o->dims[i] >= 0 && sz[i] > o->dims[i]))
			return usc__vf_bad(
				v, in,
				"has dynamic_slice_sizes=%s, whose "
				"entry %zu exceeds the operand's size %" PRId64,
				usc__vf_fmt_ints(l, sizeof l, sz, n), i,
				o->dims[i]);
	return usc__vf_result_dims(v, in, sz, n, "dynamic_slice_sizes");
}

usc_status usc__vf_check_dynamic_update_slice(const usc__vctx *v,
					      const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *u;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i;

	TRY(usc__vf_want_min_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	u = &in->operands[1]->shape;
	TRY(usc__vf_like_result(v, in, 0, true, false));
	if (u->dtype != o->dtype || u->rank != o->rank)
		return usc__vf_bad(v, in,
				   "update %s does not fit operand %s (element "
				   "type and rank must match)",
				   usc_hlo_shape_format(u, a, sizeof a),
				   usc_hlo_shape_format(o, b, sizeof b));
	for (i = 0; i < u->rank; i++)
		if (u->dims[i] >= 0 && o->dims[i] >= 0 &&
		    u->dims[i] > o->dims[i])
			return usc__vf_bad(
				v, in,
				"update %s is larger than operand %s "
				"in dimension %zu",
				usc_hlo_shape_format(u, a, sizeof a),
				usc_hlo_shape_format(o, b, sizeof b), i);
	return usc__vf_check_start_indices(v, in, 2, o->rank);
}

usc_status usc__vf_check_concatenate(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	const usc_hlo_shape *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	const int64_t *d;
	int64_t sum = 0;
	bool dynamic = false;
	size_t n, i, j;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	if (n != 1)
		return usc__vf_bad(v, in, "has %zu dimensions, expected one",
				   n);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, r->rank,
				   "the result", false));
	for (i = 0; i < in->operand_count; i++) {
		const usc_hlo_shape *o = &in->operands[i]->shape;
		bool ok = o->rank == r->rank && o->dtype == r->dtype;

		for (j = 0; ok && j < r->rank; j++)
			if ((int64_t)j != d[0] &&
			    !usc__vf_dim_eq(o->dims[j], r->dims[j]))
				ok = false;
		if (!ok)
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, which does "
				"not match the result %s outside dimension %" PRId64,
				i, usc_hlo_shape_format(o, a, sizeof a),
				usc_hlo_shape_format(r, b, sizeof b), d[0]);
		if (o->dims[d[0]] < 0)
			dynamic = true;
		else
			sum = usc__vf_add_sat(sum, o->dims[d[0]]);
	}
	if (!dynamic && r->dims[d[0]] >= 0 && sum != r->dims[d[0]])
		return usc__vf_bad(
			v, in,
			"has size %" PRId64 " in dimension %" PRId64
			", but its operands' sizes there sum to %" PRId64,
			r->dims[d[0]], d[0], sum);
	return USC_OK;
}

usc_status usc__vf_check_pad(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o, *pv;
	const usc_hlo_attr *a;
	char s[SHAPE_BUF];
	size_t i;

	TRY(usc__vf_want_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	pv = &in->operands[1]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	if (pv->rank != 0 || pv->dtype != o->dtype)
		return usc__vf_bad(v, in,
				   "padding value has shape %s, expected a %s "
				   "scalar",
				   usc_hlo_shape_format(pv, s, sizeof s),
				   usc_dtype_name(o->dtype));
	a = usc_hlo_instr_attr(in, "padding");
	if (!a || a->kind != USC_HLO_ATTR_PADDING)
		return usc__vf_bad(v, in, "has no padding=lo_hi[_interior]x... "
				   "attribute");
	if (a->count != o->rank)
		return usc__vf_bad(v, in,
				   "has %zu padding entries, expected %zu (the "
				   "operand's rank)",
				   a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_pad_dim *p = &a->pad[i];
		int64_t size = o->dims[i];

		if (p->interior < 0)
			return usc__vf_bad(
				v, in,
				"has negative interior padding %" PRId64
				" in dimension %zu",
				p->interior, i);
		if (size < 0) {
			dims[i] = -1;
			continue;
		}
		/* lo + hi + size + (size - 1) * interior; lo, hi may be < 0. */
		dims[i] = usc__vf_add_sat(
			usc__vf_add_sat(p->lo, p->hi),
			usc__vf_add_sat(size,
					usc__vf_mul_sat(size ? size - 1 : 0,
							p->interior)));
		if (dims[i] < 0)
			return usc__vf_bad(v, in,
					   "padding %" PRId64 "_%" PRId64
					   "_%" PRId64
					   " leaves dimension %zu with a "
					   "negative size",
					   p->lo, p->hi, p->interior, i);
	}
	return usc__vf_result_dims(v, in, dims, a->count,
				   "lo + hi + size + (size - 1) * interior per "
				   "dimension");
}

usc_status usc__vf_check_iota(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t d;

	TRY(usc__vf_want_operands(v, in, 0));
	TRY(usc__vf_want_array_result(v, in));
	TRY(usc__vf_get_int(v, in, "iota_dimension", true, 0, &d));
	if (d < 0 || (uint64_t)d >= in->shape.rank)
		return usc__vf_bad(v, in,
				   "has iota_dimension=%" PRId64
				   ", outside its "
				   "rank %zu",
				   d, in->shape.rank);
	return USC_OK;
}

usc_status usc__vf_check_reverse(const usc__vctx *v, const usc_hlo_instr *in)
{
	const int64_t *d;
	size_t n;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	TRY(usc__vf_like_result(v, in, 0, true, false));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	return usc__vf_check_dim_list(v, in, "dimensions", d, n, in->shape.rank,
				      "the operand", false);
}
