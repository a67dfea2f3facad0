/*
 * Elementwise ops, run through the domain a whole range at a time, and
 * the ops that make values from nothing or from bits: constant, iota and
 * bitcast-convert between widths.
 */
#include "eval_internal.h"

#include <string.h>

#include "ulpscope/dtype.h"

/* -------------------------------------------------------- elementwise */

static bool parse_dir(const char *s, usc__cmp_dir *d)
{
	static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
	size_t i;

	for (i = 0; i < USC__ARRAY_LEN(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*d = (usc__cmp_dir)i;
			return true;
		}
	return false;
}

usc_status usc__build_op(const usc_hlo_instr *in, usc__dom_op *op,
			 usc_error *err)
{
	size_t k;

	memset(op, 0, sizeof *op);
	op->op = in->opcode;
	op->result = in->shape.dtype;
	op->instr = in;
	if (in->operand_count > USC__DOM_MAX_ARGS)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "%s with %zu operands",
				      usc_hlo_opcode_name(in->opcode),
				      in->operand_count);
	op->nargs = (unsigned)in->operand_count;
	for (k = 0; k < in->operand_count; k++)
		op->arg[k] = in->operands[k]->shape.dtype;
	if (in->opcode == USC_HLO_OP_COMPARE) {
		const usc_hlo_attr *d = usc_hlo_instr_attr(in, "direction");
		const usc_hlo_attr *t = usc_hlo_instr_attr(in, "type");
		usc_dtype at = op->arg[0];

		if (!d || !d->text || !parse_dir(d->text, &op->cmp_dir))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "compare without a valid "
					      "direction");
		if (!t || !t->text)
			op->cmp_type = usc_dtype_is_float(at)
					       ? USC__CMP_FLOAT
					       : usc_format_of(at)->kind ==
							 USC_KIND_SINT
						 ? USC__CMP_SIGNED
						 : USC__CMP_UNSIGNED;
		else if (strcmp(t->text, "FLOAT") == 0)
			op->cmp_type = USC__CMP_FLOAT;
		else if (strcmp(t->text, "TOTALORDER") == 0)
			op->cmp_type = USC__CMP_TOTALORDER;
		else if (strcmp(t->text, "SIGNED") == 0)
			op->cmp_type = USC__CMP_SIGNED;
		else if (strcmp(t->text, "UNSIGNED") == 0)
			op->cmp_type = USC__CMP_UNSIGNED;
		else
			return usc__eval_fail(err, USC_EUNSUPPORTED, in,
					      "compare type %s", t->text);
	}
	if (in->opcode == USC_HLO_OP_REDUCE_PRECISION) {
		int64_t e, m;

		if (!usc__attr_int(in, "exponent_bits", &e) ||
		    !usc__attr_int(in, "mantissa_bits", &m))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "reduce-precision needs "
					      "exponent_bits and mantissa_bits");
		op->exponent_bits = (int)e;
		op->mantissa_bits = (int)m;
	}
	return USC_OK;
}

usc_status usc__apply_scalar(usc_eval *ev, const usc_hlo_instr *in,
			     usc_hlo_opcode opc, usc_dtype result, usc_dtype a,
			     usc_dtype b, void *out, const void *x,
			     const void *y, usc_error *err)
{
	usc__dom_op op;
	const void *args[2] = {x, y};

	memset(&op, 0, sizeof op);
	op.op = opc;
	op.result = result;
	op.nargs = y ? 2 : 1;
	op.arg[0] = a;
	op.arg[1] = b;
	op.instr = in;
	return ev->dom->apply(ev->dstate, &op, 1, out, args, 0, err);
}

usc_status usc__load_int(usc_eval *ev, usc_dtype t, int64_t v, void *out,
			 usc_error *err)
{
	uint64_t bits = 0;
	usc_status st;

	if (usc_dtype_is_float(t)) {
		st = usc_encode_double(t, (double)v, NULL, &bits, NULL);
		if (st != USC_OK)
			return usc__fail(err, st, "cannot encode %lld as %s",
					 (long long)v, usc_dtype_name(t));
	} else {
		int w = usc_format_of(t)->bits;

		bits = (uint64_t)v;
		if (w < 64)
			bits &= ((uint64_t)1 << w) - 1;
	}
	return ev->dom->load(ev->dstate, t, bits, out, err);
}

usc_status usc__eval_elementwise(usc_eval *ev, const usc_hlo_instr *in,
				 const usc__evalue *ops, usc__ebuf *out,
				 size_t begin, size_t end, usc_error *err)
{
	usc__dom_op op;
	const void *args[USC__DOM_MAX_ARGS];
	unsigned scalar = 0;
	size_t k;
	usc_status st;

	st = usc__build_op(in, &op, err);
	if (st != USC_OK)
		return st;
	for (k = 0; k < in->operand_count; k++) {
		usc__ebuf *b = ops[k].leaves[0];

		/* Scalar operands of a non-scalar op (clamp's bounds). */
		if (b->count == 1 && out->count != 1) {
			scalar |= 1u << k;
			args[k] = b->values;
		} else if (b->count != out->count) {
			return usc__eval_fail(err, USC_EINVAL, in,
					      "operand %zu has %zu elements, "
					      "the result %zu",
					      k, b->count, out->count);
		} else {
			args[k] = USC__VAL(ev, b, begin);
		}
	}
	if (end <= begin)
		return USC_OK;
	return ev->dom->apply(ev->dstate, &op, end - begin,
			      USC__VAL(ev, out, begin), args, scalar, err);
}

/* bitcast-convert between widths: the bits regrouped, little-endian. */
usc_status usc__eval_bitcast_convert(usc_eval *ev, const usc_hlo_instr *in,
				     const usc__evalue *ops, usc__ebuf *out,
				     usc_error *err)
{
	usc__ebuf *src = ops[0].leaves[0];
	usc_dtype from = src->dtype, to = out->dtype;
	int wf = usc_format_of(from)->bits, wt = usc_format_of(to)->bits;
	size_t i, j;
	usc_status st;

	if (wf == wt)
		return usc__eval_elementwise(ev, in, ops, out, 0, out->count,
					     err);
	if (wf % wt != 0 && wt % wf != 0)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "bitcast-convert from %s to %s",
				      usc_dtype_name(from), usc_dtype_name(to));
	if (wf > wt) {
		size_t ratio = (size_t)(wf / wt);

		for (i = 0; i < src->count; i++) {
			uint64_t bits;

			st = ev->dom->to_output(ev->dstate, from,
						USC__VAL(ev, src, i), &bits,
						NULL, err);
			for (j = 0; st == USC_OK && j < ratio; j++) {
				uint64_t part = bits >> (j * (size_t)wt);

				if (wt < 64)
					part &= ((uint64_t)1 << wt) - 1;
				st = ev->dom->load(ev->dstate, to, part,
						   USC__VAL(ev, out,
							    i * ratio + j),
						   err);
			}
			if (st != USC_OK)
				return st;
		}
	} else {
		size_t ratio = (size_t)(wt / wf);

		for (i = 0; i < out->count; i++) {
			uint64_t bits = 0;

			for (j = 0; j < ratio; j++) {
				uint64_t part;

				st = ev->dom->to_output(
					ev->dstate, from,
					USC__VAL(ev, src, i * ratio + j),
					&part, NULL, err);
				if (st != USC_OK)
					return st;
				bits |= part << (j * (size_t)wf);
			}
			st = ev->dom->load(ev->dstate, to, bits,
					   USC__VAL(ev, out, i), err);
			if (st != USC_OK)
				return st;
		}
	}
	return USC_OK;
}

/* ---------------------------------------------------------- constants */

usc_status usc__eval_constant(usc_eval *ev, const usc_hlo_instr *in,
			      usc__ebuf *out, usc_error *err)
{
	const usc_hlo_literal *lit = in->literal;
	size_t i;
	usc_status st;

	if (!lit || lit->kind != USC_HLO_LITERAL_ARRAY)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "constant with %s value",
				      lit && lit->kind == USC_HLO_LITERAL_ELIDED
					      ? "an elided"
					      : "a tuple or missing");
	if (lit->count != out->count && lit->count != 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "constant has %zu elements, its shape "
				      "%zu",
				      lit->count, out->count);
	for (i = 0; i < out->count; i++) {
		const usc_hlo_scalar *s = &lit->elems[lit->count == 1 ? 0 : i];

		st = ev->dom->constant(ev->dstate, out->dtype, s,
				       USC__VAL(ev, out, i), err);
		if (st != USC_OK)
			return usc__eval_fail(err, st, in,
					      "bad constant element '%s'",
					      s->text);
	}
	return USC_OK;
}

usc_status usc__eval_iota(usc_eval *ev, const usc_hlo_instr *in, usc__ebuf *out,
			  size_t begin, size_t end, usc_error *err)
{
	const usc_hlo_shape *s = &in->shape;
	int64_t dim, idx[USC_TENSOR_MAX_RANK];
	size_t i;
	usc_status st;

	if (!usc__attr_int(in, "iota_dimension", &dim) || dim < 0 ||
	    (size_t)dim >= s->rank)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "iota needs a valid iota_dimension");
	if (begin >= end)
		return USC_OK;
	usc__unravel(begin, s->dims, s->rank, idx);
	for (i = begin; i < end; i++) {
		st = usc__load_int(ev, out->dtype, idx[dim],
				   USC__VAL(ev, out, i), err);
		if (st != USC_OK)
			return st;
		usc__next_index(idx, s->dims, s->rank);
	}
	return USC_OK;
}
