/*
 * The evaluator: the public API, the driver that walks a computation in
 * topological order, buffers, and the dispatch of every op to its family
 * (elementwise through the domain, data movement by index maps,
 * reductions, linear algebra, calls).
 */
#include "eval_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/dtype.h"
#include "ulpscope/limits.h"

#include "control.h"
#include "eval_values.h"
#include "../../oracles/oracle.h"
#include "../../oracles/tier.h"
#include "../../oracles/envelope.h"
#include "../../oracles/reference_fast.h"

/* ------------------------------------------------------------ support */

/* The ops the evaluator knows; anything else is refused up front. */
bool usc_eval_supports_opcode(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_PARAMETER:
	case USC_HLO_OP_CONSTANT:
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_NEGATE:
	case USC_HLO_OP_ABS:
	case USC_HLO_OP_SIGN:
	case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE:
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE:
	case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_TANH:
	case USC_HLO_OP_ERF:
	case USC_HLO_OP_SQRT:
	case USC_HLO_OP_RSQRT:
	case USC_HLO_OP_CBRT:
	case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE:
	case USC_HLO_OP_TAN:
	case USC_HLO_OP_ACOS:
	case USC_HLO_OP_ASIN:
	case USC_HLO_OP_ATAN:
	case USC_HLO_OP_ACOSH:
	case USC_HLO_OP_ASINH:
	case USC_HLO_OP_ATANH:
	case USC_HLO_OP_COSH:
	case USC_HLO_OP_SINH:
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
	case USC_HLO_OP_IS_FINITE:
	case USC_HLO_OP_COMPARE:
	case USC_HLO_OP_SELECT:
	case USC_HLO_OP_CLAMP:
	case USC_HLO_OP_AND:
	case USC_HLO_OP_OR:
	case USC_HLO_OP_XOR:
	case USC_HLO_OP_NOT:
	case USC_HLO_OP_SHIFT_LEFT:
	case USC_HLO_OP_SHIFT_RIGHT_ARITHMETIC:
	case USC_HLO_OP_SHIFT_RIGHT_LOGICAL:
	case USC_HLO_OP_POPCNT:
	case USC_HLO_OP_CLZ:
	case USC_HLO_OP_CONVERT:
	case USC_HLO_OP_BITCAST_CONVERT:
	case USC_HLO_OP_REDUCE_PRECISION:
	case USC_HLO_OP_BROADCAST:
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_BITCAST:
	case USC_HLO_OP_COPY:
	case USC_HLO_OP_TRANSPOSE:
	case USC_HLO_OP_SLICE:
	case USC_HLO_OP_DYNAMIC_SLICE:
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
	case USC_HLO_OP_CONCATENATE:
	case USC_HLO_OP_PAD:
	case USC_HLO_OP_IOTA:
	case USC_HLO_OP_REVERSE:
	case USC_HLO_OP_REDUCE:
	case USC_HLO_OP_REDUCE_WINDOW:
	case USC_HLO_OP_DOT:
	case USC_HLO_OP_CONVOLUTION:
	case USC_HLO_OP_GATHER:
	case USC_HLO_OP_SCATTER:
	case USC_HLO_OP_TUPLE:
	case USC_HLO_OP_GET_TUPLE_ELEMENT:
	case USC_HLO_OP_FUSION:
	case USC_HLO_OP_CALL:
	case USC_HLO_OP_MAP:
	case USC_HLO_OP_OPTIMIZATION_BARRIER:
	case USC_HLO_OP_WHILE:
	case USC_HLO_OP_CONDITIONAL:
	case USC_HLO_OP_SORT:
	case USC_HLO_OP_CUSTOM_CALL: /* XLA's TopK only (control.c) */
		return true;
	default:
		return false;
	}
}

usc_status usc__eval_fail(usc_error *err, usc_status code,
			  const usc_hlo_instr *in, const char *fmt, ...)
{
	char msg[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!in)
		return usc__fail(err, code, "%s", msg);
	return usc__fail(err, code, "%s at %u:%u (instruction '%s')", msg,
			 in->loc.line, in->loc.column, in->name);
}

/* ------------------------------------------------------ index helpers */

bool usc__next_index(int64_t *idx, const int64_t *dims, size_t rank)
{
	size_t d = rank;

	while (d-- > 0) {
		if (++idx[d] < dims[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

void usc__unravel(size_t flat, const int64_t *dims, size_t rank, int64_t *idx)
{
	size_t d = rank;

	while (d-- > 0) {
		if (dims[d] > 0) {
			idx[d] = (int64_t)(flat % (size_t)dims[d]);
			flat /= (size_t)dims[d];
		} else {
			idx[d] = 0;
		}
	}
}

size_t usc__ravel(const int64_t *idx, const int64_t *dims, size_t rank)
{
	size_t flat = 0, d;

	for (d = 0; d < rank; d++)
		flat = flat * (size_t)dims[d] + (size_t)idx[d];
	return flat;
}

const usc_hlo_attr *usc__attr_ints(const usc_hlo_instr *in, const char *name)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	return a && a->kind == USC_HLO_ATTR_INTS ? a : NULL;
}

bool usc__attr_int(const usc_hlo_instr *in, const char *name, int64_t *out)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	if (!a || a->kind != USC_HLO_ATTR_INT)
		return false;
	*out = a->i;
	return true;
}

/* ------------------------------------------------------------ buffers */

/*
 * A buffer of len values for count elements: zeroed and initialized by
 * the domain when zero, else left unset (the caller writes every value
 * before anything reads one).
 */
static usc_status ebuf_alloc(usc_eval *ev, usc_dtype t, size_t count,
			     size_t len, bool zero, usc__ebuf **out,
			     usc_error *err)
{
	usc__ebuf *b = usc__calloc(1, sizeof *b);

	if (!b)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	b->values = zero ? usc__calloc(len ? len : 1, ev->dom->value_size)
			 : usc__reallocarray(NULL, len, ev->dom->value_size);
	if (!b->values) {
		usc__free(b);
		return usc__fail(err, USC_ENOMEM,
				 "out of memory for %zu values", len);
	}
	if (zero && ev->dom->init)
		ev->dom->init(ev->dstate, b->values, len);
	b->refs = 1;
	b->dtype = t;
	b->count = count;
	b->base = 0;
	b->len = len;
	*out = b;
	return USC_OK;
}

usc_status usc__ebuf_new_window(usc_eval *ev, usc_dtype t, size_t count,
				size_t len, usc__ebuf **out, usc_error *err)
{
	return ebuf_alloc(ev, t, count, len, true, out, err);
}

usc_status usc__ebuf_new(usc_eval *ev, usc_dtype t, size_t count,
			 usc__ebuf **out, usc_error *err)
{
	return usc__ebuf_new_window(ev, t, count, count, out, err);
}

/*
 * A buffer like usc__ebuf_new's whose every value the caller writes
 * before anything reads one (an input's load, a dot's result): for a
 * domain of plain bytes the values are left unset instead of zeroed,
 * which at a matmul's size is a measurable share of the run
 * (docs/performance.md, section 2).
 */
static usc_status ebuf_new_unset(usc_eval *ev, usc_dtype t, size_t count,
				 usc__ebuf **out, usc_error *err)
{
	return ebuf_alloc(ev, t, count, count, ev->dom->init || count == 0,
			  out, err);
}

/*
 * Whether elements [lo, hi) of tensor t go through the domain's array
 * entries (domain.h): the domain has the entry, the type is not complex
 * (the per-element path reports that), and the range lies in the tensor.
 */
static bool array_path(bool entry, const usc_tensor *t, size_t lo,
		       size_t hi)
{
	const usc_format *f = usc_format_of(usc_tensor_dtype(t));

	return entry && f && f->kind != USC_KIND_COMPLEX && lo <= hi &&
	       hi <= (size_t)usc_tensor_count(t);
}

/* The encodings of tensor t from element lo on (array_path holds). */
static const void *enc_at(const usc_tensor *t, size_t lo)
{
	return (const unsigned char *)usc_tensor_cdata(t) +
	       lo * (size_t)usc_format_of(usc_tensor_dtype(t))->container_bytes;
}

/* The same, to write. */
static void *enc_at_mut(usc_tensor *t, size_t lo)
{
	return (unsigned char *)usc_tensor_data(t) +
	       lo * (size_t)usc_format_of(usc_tensor_dtype(t))->container_bytes;
}

void usc__ebuf_release(usc_eval *ev, usc__ebuf *b)
{
	/*
	 * A view's last reference releases its owner's: a loop rather than
	 * a call, so that no chain of views can cost a stack frame each.
	 */
	while (b && --b->refs <= 0) {
		usc__ebuf *owner = b->owner;

		if (!owner) {
			if (ev->dom->clear)
				ev->dom->clear(ev->dstate, b->values, b->len);
			usc__free(b->values);
		}
		usc__free(b);
		b = owner;
	}
}

void usc__copy_values(usc_eval *ev, void *dst, const void *src, size_t n)
{
	if (ev->dom->copy)
		ev->dom->copy(ev->dstate, dst, src, n);
	else
		memcpy(dst, src, n * ev->dom->value_size);
}

static void evalue_clear(usc_eval *ev, usc__evalue *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		usc__ebuf_release(ev, v->leaves[i]);
	usc__free(v->leaves);
	v->leaves = NULL;
	v->n = 0;
}

static usc_status evalue_alloc(usc__evalue *v, size_t n, usc_error *err)
{
	v->leaves = usc__calloc(n ? n : 1, sizeof *v->leaves);
	if (!v->leaves)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	v->n = n;
	return USC_OK;
}

/* The number of array leaves of a shape (a tuple's, depth-first). */
static size_t shape_leaves(const usc_hlo_shape *s)
{
	size_t n = 0, i;

	if (s->kind != USC_HLO_SHAPE_TUPLE)
		return 1;
	for (i = 0; i < s->tuple_count; i++)
		n += shape_leaves(&s->tuple[i]);
	return n;
}

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
			     usc_hlo_opcode opc, usc_dtype result,
			     usc_dtype a, usc_dtype b, void *out,
			     const void *x, const void *y, usc_error *err)
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

static usc_status eval_elementwise(usc_eval *ev, const usc_hlo_instr *in,
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
static usc_status eval_bitcast_convert(usc_eval *ev, const usc_hlo_instr *in,
				       const usc__evalue *ops, usc__ebuf *out,
				       usc_error *err)
{
	usc__ebuf *src = ops[0].leaves[0];
	usc_dtype from = src->dtype, to = out->dtype;
	int wf = usc_format_of(from)->bits, wt = usc_format_of(to)->bits;
	size_t i, j;
	usc_status st;

	if (wf == wt)
		return eval_elementwise(ev, in, ops, out, 0, out->count, err);
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

static usc_status eval_constant(usc_eval *ev, const usc_hlo_instr *in,
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

static usc_status eval_iota(usc_eval *ev, const usc_hlo_instr *in,
			    usc__ebuf *out, size_t begin, size_t end,
			    usc_error *err)
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

/* ------------------------------------------------------------- driver */

static usc_status eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				   const usc__evalue *args, size_t nargs,
				   usc__evalue *result, usc_error *err);

/* ------------------------------------------- kept values (bisection) */

static usc_status share(usc__evalue *res, usc__ebuf *const *leaves, size_t n,
			usc_error *err);

/* The slot of a kept instruction, SIZE_MAX when it is not kept. */
static size_t keep_slot(const usc_eval *ev, const usc_hlo_instr *in)
{
	for (size_t i = 0; i < ev->nkeep; i++)
		if (ev->keep[i] == in)
			return i;
	return SIZE_MAX;
}

/* Shares the value of a kept instruction into its slot. */
static usc_status keep_value(usc_eval *ev, const usc_hlo_instr *in,
			     const usc__evalue *v, usc_error *err)
{
	size_t k = keep_slot(ev, in);

	if (k == SIZE_MAX)
		return USC_OK;
	if (ev->keep_vals[k].n)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "a kept instruction was evaluated more "
				      "than once in a run (its computation "
				      "'%s' is called from several places)",
				      in->parent ? in->parent->name : "?");
	return share(&ev->keep_vals[k], v->leaves, v->n, err);
}

static void keep_clear(usc_eval *ev)
{
	for (size_t i = 0; ev->keep_vals && i < ev->nkeep; i++)
		evalue_clear(ev, &ev->keep_vals[i]);
}

usc_status usc__eval_keep(usc_eval *ev, const usc_hlo_instr *in,
			  usc_error *err)
{
	const usc_hlo_instr **keep;
	usc__evalue *vals;

	if (!ev || !in)
		return usc__fail(err, USC_EINVAL, "nothing to keep");
	if (keep_slot(ev, in) != SIZE_MAX)
		return USC_OK;
	keep = usc__reallocarray(ev->keep, ev->nkeep + 1, sizeof *keep);
	if (!keep)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	ev->keep = keep;
	vals = usc__reallocarray(ev->keep_vals, ev->nkeep + 1, sizeof *vals);
	if (!vals)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	ev->keep_vals = vals;
	ev->keep[ev->nkeep] = in;
	memset(&ev->keep_vals[ev->nkeep], 0, sizeof *vals);
	ev->nkeep++;
	return USC_OK;
}

usc_status usc__eval_kept_values(const usc_eval *ev, const usc_hlo_instr *in,
				 const void **values, size_t *count,
				 usc_dtype *dtype)
{
	size_t k = ev ? keep_slot(ev, in) : SIZE_MAX;

	if (k == SIZE_MAX || ev->keep_vals[k].n != 1)
		return USC_ERANGE;
	*values = ev->keep_vals[k].leaves[0]->values;
	*count = ev->keep_vals[k].leaves[0]->count;
	*dtype = ev->keep_vals[k].leaves[0]->dtype;
	return USC_OK;
}

static usc_status new_array_result(usc_eval *ev, const usc_hlo_instr *in,
				   usc__evalue *res, usc_error *err)
{
	usc_status st;

	if (in->shape.kind != USC_HLO_SHAPE_ARRAY)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "%s with a non-array shape",
				      usc_hlo_opcode_name(in->opcode));
	st = evalue_alloc(res, 1, err);
	if (st != USC_OK)
		return st;
	return usc__ebuf_new(ev, in->shape.dtype,
			     (size_t)usc_hlo_shape_elements(&in->shape),
			     &res->leaves[0], err);
}

/*
 * An op the domain calls an identity (domain.h) on a whole array of its
 * own element count: its result is a view of the operand's values typed
 * as the op's.  Returns false (and touches nothing) for any other op.
 */
static bool identity_view(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__evalue *res,
			  usc_status *st, usc_error *err)
{
	usc__ebuf *src, *v;
	usc__dom_op op;

	if (!ev->dom->identity || in->operand_count != 1 || ops[0].n != 1 ||
	    in->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    usc_hlo_opcode_category(in->opcode) != USC_HLO_CAT_ELEMENTWISE)
		return false;
	src = ops[0].leaves[0];
	if (src->count != (size_t)usc_hlo_shape_elements(&in->shape) ||
	    usc__build_op(in, &op, NULL) != USC_OK ||
	    !ev->dom->identity(ev->dstate, &op))
		return false;
	*st = evalue_alloc(res, 1, err);
	if (*st != USC_OK)
		return true;
	v = usc__calloc(1, sizeof *v);
	if (!v) {
		*st = usc__fail(err, USC_ENOMEM, "out of memory");
		return true;
	}
	/*
	 * A view of a view holds the buffer that owns the values, not the
	 * view: a chain of a million converts holds one buffer, and each
	 * view is freed as soon as its users are done.
	 */
	*v = *src;
	v->refs = 1;
	v->dtype = in->shape.dtype;
	v->owner = src->owner ? src->owner : src;
	v->owner->refs++;
	res->leaves[0] = v;
	return true;
}

/* Results with several leaves (variadic reduce, scatter): fresh arrays. */
static usc_status new_leaf_results(usc_eval *ev, const usc_hlo_instr *in,
				   usc__evalue *res, usc_error *err)
{
	const usc_hlo_shape *s = &in->shape;
	size_t n = s->kind == USC_HLO_SHAPE_TUPLE ? s->tuple_count : 1, i;
	usc_status st;

	st = evalue_alloc(res, n, err);
	for (i = 0; st == USC_OK && i < n; i++) {
		const usc_hlo_shape *e =
			s->kind == USC_HLO_SHAPE_TUPLE ? &s->tuple[i] : s;

		if (e->kind != USC_HLO_SHAPE_ARRAY)
			return usc__eval_fail(err, USC_EUNSUPPORTED, in,
					      "nested tuple result");
		st = usc__ebuf_new(ev, e->dtype,
				   (size_t)usc_hlo_shape_elements(e),
				   &res->leaves[i], err);
	}
	return st;
}

static usc_status share(usc__evalue *res, usc__ebuf *const *leaves, size_t n,
			usc_error *err)
{
	usc_status st = evalue_alloc(res, n, err);
	size_t i;

	if (st != USC_OK)
		return st;
	for (i = 0; i < n; i++) {
		res->leaves[i] = leaves[i];
		leaves[i]->refs++;
	}
	return USC_OK;
}

static usc_status eval_instr(usc_eval *ev, const usc_hlo_instr *in,
			     const usc__evalue *ops, const usc__evalue *args,
			     size_t nargs, usc__evalue *res, usc_error *err)
{
	usc_status st;
	size_t count;

	switch (in->opcode) {
	case USC_HLO_OP_PARAMETER:
		if (in->parameter_number < 0 ||
		    (size_t)in->parameter_number >= nargs)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "parameter %lld has no argument",
					      (long long)in->parameter_number);
		return share(res, args[in->parameter_number].leaves,
			     args[in->parameter_number].n, err);
	case USC_HLO_OP_TUPLE: {
		size_t n = 0, k, j;

		for (k = 0; k < in->operand_count; k++)
			n += ops[k].n;
		st = evalue_alloc(res, n, err);
		if (st != USC_OK)
			return st;
		for (k = 0, n = 0; k < in->operand_count; k++)
			for (j = 0; j < ops[k].n; j++) {
				res->leaves[n++] = ops[k].leaves[j];
				ops[k].leaves[j]->refs++;
			}
		return USC_OK;
	}
	case USC_HLO_OP_GET_TUPLE_ELEMENT: {
		const usc_hlo_shape *ts = &in->operands[0]->shape;
		int64_t idx;
		size_t off = 0, k;

		if (!usc__attr_int(in, "index", &idx) ||
		    ts->kind != USC_HLO_SHAPE_TUPLE || idx < 0 ||
		    (size_t)idx >= ts->tuple_count)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "get-tuple-element needs a valid "
					      "index");
		for (k = 0; k < (size_t)idx; k++)
			off += shape_leaves(&ts->tuple[k]);
		return share(res, ops[0].leaves + off,
			     shape_leaves(&ts->tuple[idx]), err);
	}
	case USC_HLO_OP_OPTIMIZATION_BARRIER:
		return share(res, ops[0].leaves, ops[0].n, err);
	case USC_HLO_OP_WHILE:
	case USC_HLO_OP_CONDITIONAL:
	case USC_HLO_OP_SORT:
	case USC_HLO_OP_CUSTOM_CALL:
		return usc__ctl_eval(ev, in, ops, res, err);
	case USC_HLO_OP_FUSION:
	case USC_HLO_OP_CALL:
		if (in->called_count < 1)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "%s without a called computation",
					      usc_hlo_opcode_name(in->opcode));
		return eval_computation(ev, in->called[0], ops,
					in->operand_count, res, err);
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_COPY:
		/* Row-major order is kept: the values are shared. */
		if (ops[0].leaves[0]->count !=
		    (size_t)usc_hlo_shape_elements(&in->shape))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "element counts differ");
		return share(res, ops[0].leaves, 1, err);
	case USC_HLO_OP_REDUCE:
	case USC_HLO_OP_REDUCE_WINDOW:
	case USC_HLO_OP_SCATTER:
		st = new_leaf_results(ev, in, res, err);
		if (st != USC_OK)
			return st;
		count = res->leaves[0]->count;
		if (in->opcode == USC_HLO_OP_REDUCE)
			return usc__eval_reduce(ev, in, ops, res->leaves, 0,
						count, err);
		if (in->opcode == USC_HLO_OP_REDUCE_WINDOW)
			return usc__eval_reduce_window(ev, in, ops,
						       res->leaves, 0, count,
						       err);
		return usc__eval_scatter(ev, in, ops, res->leaves, err);
	default:
		break;
	}
	if (identity_view(ev, in, ops, res, &st, err))
		return st;
	if (in->opcode == USC_HLO_OP_DOT &&
	    in->shape.kind == USC_HLO_SHAPE_ARRAY) {
		/* Both of the dot's paths write every output value. */
		st = evalue_alloc(res, 1, err);
		if (st != USC_OK)
			return st;
		st = ebuf_new_unset(ev, in->shape.dtype,
				    (size_t)usc_hlo_shape_elements(&in->shape),
				    &res->leaves[0], err);
		if (st != USC_OK)
			return st;
		return usc__eval_dot(ev, in, ops, res->leaves[0], 0,
				     res->leaves[0]->count, err);
	}
	st = new_array_result(ev, in, res, err);
	if (st != USC_OK)
		return st;
	count = res->leaves[0]->count;
	switch (in->opcode) {
	case USC_HLO_OP_CONSTANT:
		return eval_constant(ev, in, res->leaves[0], err);
	case USC_HLO_OP_IOTA:
		return eval_iota(ev, in, res->leaves[0], 0, count, err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return eval_bitcast_convert(ev, in, ops, res->leaves[0], err);
	case USC_HLO_OP_DOT:
		return usc__eval_dot(ev, in, ops, res->leaves[0], 0, count,
				     err);
	case USC_HLO_OP_CONVOLUTION:
		return usc__eval_conv(ev, in, ops, res->leaves[0], 0, count,
				      err);
	case USC_HLO_OP_GATHER:
		return usc__eval_gather(ev, in, ops, res->leaves[0], 0, count,
					err);
	case USC_HLO_OP_MAP:
		return usc__eval_map(ev, in, ops, res->leaves[0], 0, count,
				     err);
	default:
		break;
	}
	if (usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE)
		return eval_elementwise(ev, in, ops, res->leaves[0], 0, count,
					err);
	return usc__eval_data(ev, in, ops, res->leaves[0], 0, count, err);
}

/*
 * A topological order of c's instructions: operands first, every
 * instruction once, by an explicit-stack depth-first walk (HLO text is
 * usually in order already, but nothing requires it).
 */
usc_status usc__topo_order(const usc_hlo_computation *c, size_t *order,
			 usc_error *err)
{
	size_t n = c->instr_count, done = 0, i;
	unsigned char *state = usc__calloc(n ? n : 1, 1);
	size_t *stack = usc__calloc(n ? n : 1, sizeof *stack);
	size_t *next = usc__calloc(n ? n : 1, sizeof *next);

	if (!state || !stack || !next) {
		usc__free(state);
		usc__free(stack);
		usc__free(next);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		size_t sp = 0;

		if (state[i])
			continue;
		stack[sp++] = i;
		state[i] = 1;
		while (sp) {
			size_t top = stack[sp - 1];
			const usc_hlo_instr *in = c->instrs[top];

			if (next[top] < in->operand_count) {
				size_t o = in->operands[next[top]++]->index;

				if (state[o] == 0) {
					state[o] = 1;
					stack[sp++] = o;
				} else if (state[o] == 1) {
					/* o is on the stack: a cycle. */
					usc__free(state);
					usc__free(stack);
					usc__free(next);
					return usc__eval_fail(
						err, USC_EINVAL, in,
						"operand '%s' depends on this "
						"instruction: the computation "
						"'%s' has a cycle",
						c->instrs[o]->name, c->name);
				}
			} else {
				state[top] = 2;
				order[done++] = top;
				sp--;
			}
		}
	}
	usc__free(state);
	usc__free(stack);
	usc__free(next);
	return USC_OK;
}

/* ------------------------------------------------------------ tiles */

/* Ops a streamed computation evaluates window by window. */
static bool tiled_op(const usc_hlo_instr *in)
{
	if (in->opcode == USC_HLO_OP_BROADCAST)
		return true;
	return usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE &&
	       in->opcode != USC_HLO_OP_MAP &&
	       in->opcode != USC_HLO_OP_BITCAST_CONVERT;
}

/* A value that exists whole before the tiles run. */
static bool whole_input(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_PARAMETER ||
	       (in->opcode == USC_HLO_OP_CONSTANT &&
		in->shape.kind == USC_HLO_SHAPE_ARRAY &&
		usc_hlo_shape_elements(&in->shape) == 1);
}

/*
 * Whether c is a loop computation that can stream: its root and every
 * tiled op have the root's element count n (at least two tiles of it),
 * elementwise operands have n elements or one (a scalar constant), and a
 * broadcast reads a whole input, so that output element i of every
 * instruction needs only element i of its operands or whole inputs.
 */
static bool streamable(const usc_hlo_computation *c, size_t tile)
{
	int64_t n;

	if (!c->root || c->root->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    !tiled_op(c->root))
		return false;
	n = usc_hlo_shape_elements(&c->root->shape);
	if (n < 0 || (uint64_t)n / 2 < tile)
		return false;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (whole_input(in))
			continue;
		if (!tiled_op(in) || in->shape.kind != USC_HLO_SHAPE_ARRAY ||
		    usc_hlo_shape_elements(&in->shape) != n)
			return false;
		for (size_t k = 0; k < in->operand_count; k++) {
			const usc_hlo_instr *o = in->operands[k];
			int64_t m = o->shape.kind == USC_HLO_SHAPE_ARRAY
					    ? usc_hlo_shape_elements(&o->shape)
					    : -1;

			if (in->opcode == USC_HLO_OP_BROADCAST
				    ? !whole_input(o)
				    : !(m == n || (m == 1 && whole_input(o))))
				return false;
		}
	}
	return true;
}

/*
 * Where a streamed computation reads its parameters and leaves its root.
 * Nested in a whole evaluation (a fusion's body inside a computation that
 * does not stream), the parameters are whole values (args) and the root
 * is returned whole.  At the top of a run (run_streamed below), parameter
 * j is the bound tensor of entry parameter pmap[j], loaded tile by tile,
 * and each tile of the root goes to the output tensor, the kept values
 * and the visitor as soon as it is computed, so that neither the inputs
 * nor the outputs exist whole as domain values.
 */
typedef struct stream_io {
	const usc__evalue *args;
	size_t nargs;
	const size_t *pmap;         /* top: non-NULL, one per parameter */
	size_t npmap;
	usc_tensor *out;            /* top: the output tensor */
	usc__ebuf *keep;            /* top: whole values kept, or NULL */
	const usc__eval_stream *s;  /* top: visitor and subset, or NULL */
} stream_io;

/*
 * The source elements [*lo, *hi) that broadcast b reads for its outputs
 * [t0, t1).  A row-major range of outputs does not map to a monotone
 * range of sources (a row vector broadcast over rows wraps around), so
 * the indices are walked, unless the source is no larger than the tile,
 * when it is taken whole.  Attributes that usc__eval_data would refuse
 * take the whole source too, and let it report them.
 */
static void broadcast_span(const usc_hlo_instr *b, size_t t0, size_t t1,
			   size_t *lo, size_t *hi)
{
	const usc_hlo_shape *s = &b->operands[0]->shape, *o = &b->shape;
	const usc_hlo_attr *a = usc__attr_ints(b, "dimensions");
	size_t count = (size_t)usc_hlo_shape_elements(s), d, i;
	int64_t oi[USC_TENSOR_MAX_RANK], si[USC_TENSOR_MAX_RANK];

	*lo = 0;
	*hi = count;
	if (count <= t1 - t0 || !a || a->count != s->rank ||
	    o->rank > USC_TENSOR_MAX_RANK || s->rank > USC_TENSOR_MAX_RANK)
		return;
	for (d = 0; d < s->rank; d++)
		if (a->ints[d] < 0 || (size_t)a->ints[d] >= o->rank ||
		    o->dims[a->ints[d]] != s->dims[d])
			return;
	*lo = count;
	*hi = 0;
	usc__unravel(t0, o->dims, o->rank, oi);
	for (i = t0; i < t1; i++) {
		size_t f;

		for (d = 0; d < s->rank; d++)
			si[d] = oi[a->ints[d]];
		f = usc__ravel(si, s->dims, s->rank);
		if (f < *lo)
			*lo = f;
		if (f + 1 > *hi)
			*hi = f + 1;
		usc__next_index(oi, o->dims, o->rank);
	}
}

/*
 * The elements [*lo, *hi) of parameter p that the tile [t0, t1) reads:
 * the tile itself for an elementwise operand of the output's size, the
 * one element of a scalar, what a broadcast reads; their union when p
 * has several uses.
 */
static void param_span(const usc_hlo_computation *c, const bool *live,
		       const usc_hlo_instr *p, size_t total, size_t t0,
		       size_t t1, size_t *lo, size_t *hi)
{
	size_t count = (size_t)usc_hlo_shape_elements(&p->shape);

	*lo = SIZE_MAX;
	*hi = 0;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (!live[in->index] || whole_input(in))
			continue;
		for (size_t k = 0; k < in->operand_count; k++) {
			size_t a, b;

			if (in->operands[k] != p)
				continue;
			if (in->opcode == USC_HLO_OP_BROADCAST) {
				broadcast_span(in, t0, t1, &a, &b);
			} else if (count == total) {
				a = t0;
				b = t1;
			} else {
				a = 0;
				b = count;
			}
			if (a < *lo)
				*lo = a;
			if (b > *hi)
				*hi = b;
		}
	}
	if (*lo >= *hi)
		*lo = *hi = 0;
}

/*
 * Loads the elements [lo, hi) of tensor t into the window of v (a
 * parameter of count elements), growing the window when it is too small.
 */
static usc_status load_window(usc_eval *ev, const usc_hlo_instr *p,
			      const usc_tensor *t, usc__evalue *v, size_t lo,
			      size_t hi, usc_error *err)
{
	usc__ebuf *b = v->leaves[0];
	usc_dtype dt = usc_tensor_dtype(t);
	usc_status st;

	if (!b || b->len < hi - lo) {
		usc__ebuf_release(ev, b);
		v->leaves[0] = NULL;
		st = usc__ebuf_new_window(
			ev, dt, (size_t)usc_hlo_shape_elements(&p->shape),
			hi - lo, &b, err);
		if (st != USC_OK)
			return st;
		v->leaves[0] = b;
	}
	b->base = lo;
	if (array_path(ev->dom->load_array != NULL, t, lo, hi))
		return ev->dom->load_array(ev->dstate, dt, enc_at(t, lo),
					   hi - lo, USC__VAL(ev, b, lo), err);
	for (size_t k = lo; k < hi; k++) {
		uint64_t bits;

		st = usc_tensor_get_bits(t, k, &bits);
		if (st != USC_OK)
			return usc__eval_fail(err, st, p,
					      "cannot read element %zu of the "
					      "parameter",
					      k);
		st = ev->dom->load(ev->dstate, dt, bits, USC__VAL(ev, b, k),
				   err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* Whether a byte map wants any element of [t0, t1). */
static bool any_wanted(const uint8_t *wanted, size_t t0, size_t t1)
{
	if (!wanted)
		return true;
	for (size_t k = t0; k < t1; k++)
		if (wanted[k])
			return true;
	return false;
}

/*
 * A finished tile of the root at the top of a run: its encodings into the
 * output tensor, its values to the kept copy and to the visitor.
 */
static usc_status emit_tile(usc_eval *ev, const stream_io *io,
			    usc__ebuf *root, size_t t0, size_t t1,
			    usc_error *err)
{
	size_t done = t0;
	usc_status st;

	if (io->out &&
	    array_path(ev->dom->to_output_array != NULL, io->out, t0, t1) &&
	    usc_tensor_dtype(io->out) == root->dtype) {
		st = ev->dom->to_output_array(ev->dstate, root->dtype,
					      USC__VAL(ev, root, t0), t1 - t0,
					      enc_at_mut(io->out, t0), err);
		if (st != USC_OK)
			return st;
		done = t1;
	}
	for (size_t k = done; io->out && k < t1; k++) {
		uint64_t bits;

		st = ev->dom->to_output(ev->dstate, root->dtype,
					USC__VAL(ev, root, k), &bits, NULL,
					err);
		if (st != USC_OK)
			return st;
		st = usc_tensor_set_bits(io->out, k, bits);
		if (st != USC_OK)
			return usc__fail(err, st, "cannot write output element "
						  "%zu", k);
	}
	if (io->keep)
		usc__copy_values(ev, USC__VAL(ev, io->keep, t0),
				 USC__VAL(ev, root, t0), t1 - t0);
	if (io->s && io->s->visit)
		return io->s->visit(io->s->ctx, 0, t0, t1 - t0,
				    USC__VAL(ev, root, t0), root->dtype, err);
	return USC_OK;
}

/*
 * Whether a streamed instruction needs no values of its own: a broadcast
 * of a one-element whole input (its users, all elementwise, read the
 * scalar as a scalar operand), or an op the domain says gives back its
 * operand (domain.h, identity) on an operand of its own element count.
 */
static bool stream_alias(usc_eval *ev, const usc_hlo_instr *in)
{
	usc__dom_op op;

	if (in->operand_count != 1)
		return false;
	if (in->opcode == USC_HLO_OP_BROADCAST)
		return whole_input(in->operands[0]) &&
		       usc_hlo_shape_elements(&in->operands[0]->shape) == 1;
	if (!ev->dom->identity ||
	    usc_hlo_shape_elements(&in->operands[0]->shape) !=
		    usc_hlo_shape_elements(&in->shape) ||
	    usc__build_op(in, &op, NULL) != USC_OK)
		return false;
	return ev->dom->identity(ev->dstate, &op);
}

/*
 * Evaluates a streamable computation tile by tile: every intermediate is
 * a window of tile elements, reused from tile to tile; the root is whole
 * when nested, a window too at the top of a run, where the parameters are
 * also loaded a window at a time.  Each element sees the same ops in the
 * same order as in the whole evaluation, so the values are identical.
 */
static usc_status eval_streamed(usc_eval *ev, const usc_hlo_computation *c,
				const stream_io *io, size_t tile,
				usc__evalue *result, usc_error *err)
{
	size_t n = c->instr_count, total, t0, i, k;
	usc__evalue *vals = usc__calloc(n ? n : 1, sizeof *vals);
	usc__evalue *ops = usc__calloc(4, sizeof *ops);
	size_t *order = usc__calloc(n ? n : 1, sizeof *order);
	bool *live = usc__calloc(n ? n : 1, sizeof *live);
	size_t *span = usc__calloc(2 * (n ? n : 1), sizeof *span);
	bool *alias = usc__calloc(n ? n : 1, sizeof *alias);
	const uint8_t *wanted = io->s && io->s->wanted ? io->s->wanted[0]
						       : NULL;
	bool top = io->pmap != NULL;
	size_t r0 = 0, r1 = SIZE_MAX;
	usc_status st = USC_OK;

	if (!vals || !ops || !order || !live || !span || !alias) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = usc__topo_order(c, order, err);
	if (st != USC_OK)
		goto done;
	/* Live: the root and what it reaches (walked backwards). */
	live[c->root->index] = true;
	for (i = n; i-- > 0;) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		if (live[in->index])
			for (k = 0; k < in->operand_count; k++)
				live[in->operands[k]->index] = true;
	}
	total = (size_t)usc_hlo_shape_elements(&c->root->shape);
	if (top && io->s && io->s->count) {
		r0 = (size_t)io->s->first;
		r1 = r0 + (size_t)io->s->count;
	}
	/* Whole inputs first, then the windows (and the whole root). */
	for (i = 0; st == USC_OK && i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		if (!live[in->index])
			continue;
		if (top && in->opcode == USC_HLO_OP_PARAMETER) {
			/* Loaded per tile; the window comes with the first. */
			if (in->parameter_number < 0 ||
			    (size_t)in->parameter_number >= io->npmap)
				st = usc__eval_fail(err, USC_EINVAL, in,
						    "parameter %lld has no "
						    "argument",
						    (long long)
							    in->parameter_number);
			else
				st = evalue_alloc(&vals[in->index], 1, err);
			span[2 * in->index] = SIZE_MAX;
		} else if (whole_input(in)) {
			st = eval_instr(ev, in, NULL, io->args, io->nargs,
					&vals[in->index], err);
		} else if (in != c->root && stream_alias(ev, in)) {
			/* Pointed at its operand's values each tile. */
			alias[in->index] = true;
			st = evalue_alloc(&vals[in->index], 1, err);
		} else if ((st = evalue_alloc(&vals[in->index], 1, err)) ==
			   USC_OK) {
			st = usc__ebuf_new_window(
				ev, in->shape.dtype, total,
				in == c->root && !top ? total : tile,
				&vals[in->index].leaves[0], err);
		}
	}
	for (t0 = 0; st == USC_OK && t0 < total; t0 += tile) {
		size_t t1 = total - t0 < tile ? total : t0 + tile;
		size_t a = t0 > r0 ? t0 : r0, b = t1 < r1 ? t1 : r1;

		/* Outside the range, or no wanted element in it. */
		if (a >= b ||
		    !any_wanted(wanted ? wanted + (a - r0) : NULL, 0, b - a))
			continue;
		for (i = 0; st == USC_OK && i < n; i++) {
			const usc_hlo_instr *in = c->instrs[order[i]];
			usc__ebuf *out;

			if (!live[in->index])
				continue;
			if (top && in->opcode == USC_HLO_OP_PARAMETER) {
				size_t lo, hi;

				param_span(c, live, in, total, t0, t1, &lo,
					   &hi);
				/* A scalar is loaded once, not per tile. */
				if (span[2 * in->index] == lo &&
				    span[2 * in->index + 1] == hi)
					continue;
				st = load_window(
					ev, in,
					ev->bound[io->pmap[in->parameter_number]],
					&vals[in->index], lo, hi, err);
				span[2 * in->index] = st == USC_OK ? lo
								   : SIZE_MAX;
				span[2 * in->index + 1] = hi;
				continue;
			}
			if (whole_input(in))
				continue;
			if (alias[in->index]) {
				usc__ebuf *src =
					vals[in->operands[0]->index].leaves[0];

				usc__ebuf_release(ev,
						  vals[in->index].leaves[0]);
				src->refs++;
				vals[in->index].leaves[0] = src;
				continue;
			}
			out = vals[in->index].leaves[0];
			if (in != c->root || top)
				out->base = t0;
			for (k = 0; k < in->operand_count && k < 4; k++)
				ops[k] = vals[in->operands[k]->index];
			if (in->opcode == USC_HLO_OP_BROADCAST)
				st = usc__eval_data(ev, in, ops, out, t0, t1,
						    err);
			else
				st = eval_elementwise(ev, in, ops, out, t0, t1,
						      err);
		}
		if (st == USC_OK && top) {
			st = emit_tile(ev, io, vals[c->root->index].leaves[0],
				       t0, t1, err);
			ev->last_elements += t1 - t0;
			ev->last_tiles++;
		}
	}
	if (st == USC_OK && !top) {
		*result = vals[c->root->index];
		vals[c->root->index].leaves = NULL;
		vals[c->root->index].n = 0;
	}
done:
	if (vals)
		for (i = 0; i < n; i++)
			evalue_clear(ev, &vals[i]);
	usc__free(vals);
	usc__free(ops);
	usc__free(order);
	usc__free(live);
	usc__free(span);
	usc__free(alias);
	return st;
}

static usc_status eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				   const usc__evalue *args, size_t nargs,
				   usc__evalue *result, usc_error *err)
{
	size_t n = c->instr_count, i, k;
	size_t tile = ev->opts.tile_elements ? ev->opts.tile_elements
					     : USC_EVAL_TILE_DEFAULT;
	usc__evalue *vals, *ops = NULL;
	size_t *uses, *order;
	usc_status st = USC_OK;

	if (ev->cone)
		return usc__cone_computation(ev, c, args, nargs, result, err);
	/* Kept instructions (bisection) exist whole: no tiles then. */
	if (tile != USC_EVAL_NO_TILES && ev->nkeep == 0 &&
	    streamable(c, tile)) {
		stream_io io;

		memset(&io, 0, sizeof io);
		io.args = args;
		io.nargs = nargs;
		return eval_streamed(ev, c, &io, tile, result, err);
	}
	vals = usc__calloc(n ? n : 1, sizeof *vals);
	uses = usc__calloc(n ? n : 1, sizeof *uses);
	order = usc__calloc(n ? n : 1, sizeof *order);
	if (!vals || !uses || !order) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	if (!c->root) {
		st = usc__fail(err, USC_EINVAL, "computation '%s' has no root",
			       c->name);
		goto done;
	}
	st = usc__topo_order(c, order, err);
	if (st != USC_OK)
		goto done;
	for (i = 0; i < n; i++)
		for (k = 0; k < c->instrs[i]->operand_count; k++)
			uses[c->instrs[i]->operands[k]->index]++;
	for (i = 0; i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		/*
		 * An instruction nobody uses, other than the root, is dead,
		 * unless its values are to be kept.
		 */
		if (uses[in->index] == 0 && in != c->root &&
		    keep_slot(ev, in) == SIZE_MAX)
			continue;
		usc__free(ops);
		ops = usc__calloc(in->operand_count ? in->operand_count : 1,
				  sizeof *ops);
		if (!ops) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		for (k = 0; k < in->operand_count; k++)
			ops[k] = vals[in->operands[k]->index];
		st = eval_instr(ev, in, ops, args, nargs, &vals[in->index],
				err);
		if (st == USC_OK)
			st = keep_value(ev, in, &vals[in->index], err);
		if (st != USC_OK)
			goto done;
		/* Operands whose last user this was are freed now. */
		for (k = 0; k < in->operand_count; k++) {
			size_t o = in->operands[k]->index;

			if (--uses[o] == 0 && c->instrs[o] != c->root)
				evalue_clear(ev, &vals[o]);
		}
	}
	*result = vals[c->root->index];
	vals[c->root->index].leaves = NULL;
	vals[c->root->index].n = 0;
done:
	if (vals)
		for (i = 0; i < n; i++)
			evalue_clear(ev, &vals[i]);
	usc__free(ops);
	usc__free(vals);
	usc__free(uses);
	usc__free(order);
	return st;
}

/* The driver's pieces that control.c and cone.c call. */
usc_status usc__eval_instr(usc_eval *ev, const usc_hlo_instr *in,
			   const usc__evalue *ops, const usc__evalue *args,
			   size_t nargs, usc__evalue *res, usc_error *err)
{
	return eval_instr(ev, in, ops, args, nargs, res, err);
}


usc_status usc__eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const usc__evalue *args, size_t nargs,
				 usc__evalue *result, usc_error *err)
{
	return eval_computation(ev, c, args, nargs, result, err);
}

usc_status usc__evalue_alloc(usc__evalue *v, size_t n, usc_error *err)
{
	return evalue_alloc(v, n, err);
}

void usc__evalue_clear(usc_eval *ev, usc__evalue *v)
{
	evalue_clear(ev, v);
}

usc_status usc__evalue_share(usc__evalue *res, usc__ebuf *const *leaves,
			     size_t n, usc_error *err)
{
	return share(res, leaves, n, err);
}

/* ---------------------------------------------------------- checking */

static usc_status check_computation(usc_eval *ev, const usc_hlo_computation *c,
				    int depth, usc_error *err);

static bool dtype_ok(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f && f->kind != USC_KIND_COMPLEX && f->kind != USC_KIND_OTHER;
}

static bool shape_ok(const usc_hlo_shape *s)
{
	size_t i;

	if (s->kind == USC_HLO_SHAPE_TOKEN)
		return false;
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (i = 0; i < s->tuple_count; i++)
			if (!shape_ok(&s->tuple[i]))
				return false;
		return true;
	}
	for (i = 0; i < s->rank; i++)
		if (s->dim_kinds && s->dim_kinds[i] != USC_HLO_DIM_STATIC)
			return false;
	return dtype_ok(s->dtype);
}

/*
 * Whether every array of shape s has at most the limit's elements
 * (include/ulpscope/limits.h): checked for every instruction before
 * anything is allocated, because a 100-byte module may declare a tensor
 * of billions of elements that a broadcast or an iota would then fill.
 */
static usc_status elements_ok(const usc_hlo_instr *in, const usc_hlo_shape *s,
			      usc_error *err)
{
	uint64_t limit = usc_limits_get().max_elements, n = 1;
	bool over = false;

	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (size_t i = 0; i < s->tuple_count; i++) {
			usc_status st = elements_ok(in, &s->tuple[i], err);

			if (st != USC_OK)
				return st;
		}
		return USC_OK;
	}
	for (size_t i = 0; i < s->rank && !over; i++) {
		uint64_t d = s->dims[i] < 0 ? 0 : (uint64_t)s->dims[i];

		over = d && n > UINT64_MAX / d;
		n *= over ? 1 : d;
	}
	if (!over && n <= limit)
		return USC_OK;
	{
		char *text = NULL, count[32];
		usc_error e2;
		usc_status st;

		if (usc_hlo_shape_print(s, &text, &e2) != USC_OK)
			text = NULL;
		if (over)
			snprintf(count, sizeof count, "more than 2^64");
		else
			snprintf(count, sizeof count, "%" PRIu64, n);
		st = usc__eval_fail(err, USC_ERANGE, in,
				    "%s has %s elements, more than the limit "
				    "of %" PRIu64 " on one tensor (raise it "
				    "with --max-elements, or usc_limits_set; "
				    "docs/limits.md)",
				    text ? text : "a shape", count, limit);
		usc_hlo_text_free(text);
		return st;
	}
}

static usc_status check_instr(usc_eval *ev, const usc_hlo_instr *in,
			      int depth, usc_error *err)
{
	size_t k;
	usc_status st;

	if (!usc_eval_supports_opcode(in->opcode))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "unsupported op %s at %u:%u (instruction "
				 "'%s')",
				 usc_hlo_opcode_name(in->opcode), in->loc.line,
				 in->loc.column, in->name);
	if (!shape_ok(&in->shape)) {
		char *text = NULL;
		usc_error e2;

		if (usc_hlo_shape_print(&in->shape, &text, &e2) != USC_OK)
			text = NULL;
		st = usc__eval_fail(err, USC_EUNSUPPORTED, in,
				    "unsupported shape %s",
				    text ? text : "(unprintable)");
		usc_hlo_text_free(text);
		return st;
	}
	st = elements_ok(in, &in->shape, err);
	if (st != USC_OK)
		return st;
	if (in->opcode == USC_HLO_OP_CONSTANT &&
	    (!in->literal || in->literal->kind != USC_HLO_LITERAL_ARRAY))
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "constant with %s value",
				      in->literal && in->literal->kind ==
							     USC_HLO_LITERAL_ELIDED
					      ? "an elided"
					      : "a tuple or missing");
	if (in->opcode == USC_HLO_OP_BITCAST) {
		const usc_hlo_shape *a = &in->shape, *b = &in->operands[0]->shape;

		if (a->kind != USC_HLO_SHAPE_ARRAY ||
		    b->kind != USC_HLO_SHAPE_ARRAY || a->dtype != b->dtype ||
		    usc_hlo_shape_elements(a) != usc_hlo_shape_elements(b))
			return usc__eval_fail(err, USC_EUNSUPPORTED, in,
					      "bitcast that changes the element "
					      "type or count");
	}
	if (in->opcode == USC_HLO_OP_WHILE ||
	    in->opcode == USC_HLO_OP_CONDITIONAL ||
	    in->opcode == USC_HLO_OP_SORT ||
	    in->opcode == USC_HLO_OP_CUSTOM_CALL) {
		st = usc__ctl_check(ev, in, err);
		/* A comparator is compiled as a scalar computation. */
		if (st != USC_OK || in->opcode == USC_HLO_OP_SORT ||
		    in->opcode == USC_HLO_OP_CUSTOM_CALL)
			return st;
	}
	for (k = 0; k < in->called_count; k++) {
		const usc_hlo_computation *c = in->called[k];

		switch (in->opcode) {
		case USC_HLO_OP_REDUCE:
		case USC_HLO_OP_REDUCE_WINDOW:
		case USC_HLO_OP_SCATTER:
		case USC_HLO_OP_MAP: {
			usc__sfn *fn;

			/* Bodies evaluated per element are compiled now. */
			st = usc__sfn_get(ev, c, &fn, err);
			if (st != USC_OK)
				return st;
			break;
		}
		default:
			/*
			 * Evaluation enters a called computation by a call of
			 * its own: the nesting is bounded so that it is bounded
			 * on the stack (docs/evaluator.md).
			 */
			if (depth >= USC__EVAL_NESTING_MAX)
				return usc__eval_fail(
					err, USC_EUNSUPPORTED, in,
					"computation '%s' is called %d levels "
					"deep; computations may nest at most %d "
					"deep",
					c->name, depth + 1,
					USC__EVAL_NESTING_MAX);
			st = check_computation(ev, c, depth + 1, err);
			if (st != USC_OK)
				return st;
		}
	}
	return USC_OK;
}

static usc_status check_computation(usc_eval *ev, const usc_hlo_computation *c,
				    int depth, usc_error *err)
{
	size_t i;
	usc_status st;

	for (i = 0; i < c->instr_count; i++) {
		st = check_instr(ev, c->instrs[i], depth, err);
		if (st != USC_OK)
			return st;
	}
	if (!c->root)
		return usc__fail(err, USC_EINVAL, "computation '%s' has no root",
				 c->name);
	return USC_OK;
}

/* ---------------------------------------------------------------- API */

usc_eval_options usc_eval_options_default(void)
{
	usc_eval_options o;

	memset(&o, 0, sizeof o);
	o.domain = USC_DOMAIN_REFERENCE;
	o.reduce_order = USC_REDUCE_SEQUENTIAL;
	return o;
}

static void free_outputs(usc_eval *ev)
{
	size_t i;

	if (!ev->outputs)
		return;
	for (i = 0; i < ev->noutputs; i++)
		usc_tensor_destroy(ev->outputs[i]);
	usc__free(ev->outputs);
	ev->outputs = NULL;
}

void usc_eval_destroy(usc_eval *ev)
{
	if (!ev)
		return;
	free_outputs(ev);
	evalue_clear(ev, &ev->kept);
	keep_clear(ev);
	usc__free(ev->keep);
	usc__free(ev->keep_vals);
	usc__sfn_free_all(ev);
	usc__ctl_free(ev);
	usc__cone_detach(ev);
	if (ev->dom && ev->dstate)
		ev->dom->destroy(ev->dstate);
	usc__free(ev->params);
	usc__free(ev->bound);
	usc__free(ev);
}

usc_status usc_eval_create_computation(const usc_hlo_computation *c,
				       const usc_eval_options *opts,
				       usc_eval **out, usc_error *err)
{
	usc_eval *ev;
	usc_status st;
	size_t i;

	if (!c || !out)
		return usc__fail(err, USC_EINVAL, "no computation to evaluate");
	*out = NULL;
	ev = usc__calloc(1, sizeof *ev);
	if (!ev)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	ev->opts = opts ? *opts : usc_eval_options_default();
	if (ev->opts.domain != USC_DOMAIN_REFERENCE &&
	    ev->opts.domain != USC_DOMAIN_ORACLE &&
	    ev->opts.domain != USC_DOMAIN_TIER &&
	    ev->opts.domain != USC_DOMAIN_F64 &&
	    ev->opts.domain != USC_DOMAIN_ENVELOPE) {
		usc__free(ev);
		return usc__fail(err, USC_EINVAL, "unknown domain %d",
				 (int)ev->opts.domain);
	}
	if (ev->opts.reduce_order != USC_REDUCE_SEQUENTIAL &&
	    ev->opts.reduce_order != USC_REDUCE_PAIRWISE) {
		usc__free(ev);
		return usc__fail(err, USC_EINVAL, "unknown reduction order %d",
				 (int)ev->opts.reduce_order);
	}
	ev->dom = ev->opts.domain == USC_DOMAIN_ORACLE ? &usc__domain_oracle
		  : ev->opts.domain == USC_DOMAIN_TIER ? &usc__domain_tier
		  : ev->opts.domain == USC_DOMAIN_F64 ? &usc__domain_f64
		  : ev->opts.domain == USC_DOMAIN_ENVELOPE
			  ? &usc__domain_envelope
			  : &usc__domain_reference;
	/* The fast reference (oracles/reference_fast.h) unless asked not. */
	if (ev->dom == &usc__domain_reference && !ev->opts.reference_mpfr &&
	    !usc__reference_mpfr_from_env())
		ev->dom = &usc__domain_reference_fast;
	ev->comp = c;
	st = ev->dom->create(&ev->dstate, err);
	if (st != USC_OK) {
		ev->dstate = NULL;
		usc_eval_destroy(ev);
		return st;
	}
	if (ev->opts.domain == USC_DOMAIN_ENVELOPE) {
		st = usc__envelope_set_profile(ev->dstate, ev->opts.profile,
					       err);
		if (st != USC_OK) {
			usc_eval_destroy(ev);
			return st;
		}
	}
	if (ev->opts.domain == USC_DOMAIN_ORACLE) {
		usc__oracle_options oo;

		usc__oracle_options_default(&oo);
		if (ev->opts.oracle_precision)
			oo.precision = (mpfr_prec_t)ev->opts.oracle_precision;
		oo.quantize = ev->opts.quantize;
		oo.round_only = ev->opts.round_only;
		oo.round_only_count = ev->opts.round_only_count;
		st = usc__oracle_configure(ev->dstate, &oo, err);
		if (st != USC_OK) {
			usc_eval_destroy(ev);
			return st;
		}
	}
	for (i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number >= 0 &&
		    (size_t)c->instrs[i]->parameter_number + 1 > ev->nparams)
			ev->nparams = (size_t)c->instrs[i]->parameter_number + 1;
	ev->params = usc__calloc(ev->nparams ? ev->nparams : 1,
				 sizeof *ev->params);
	ev->bound = usc__calloc(ev->nparams ? ev->nparams : 1,
				sizeof *ev->bound);
	if (!ev->params || !ev->bound) {
		usc_eval_destroy(ev);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (in->opcode == USC_HLO_OP_PARAMETER &&
		    in->parameter_number >= 0) {
			if (in->shape.kind != USC_HLO_SHAPE_ARRAY) {
				usc_eval_destroy(ev);
				return usc__eval_fail(err, USC_EUNSUPPORTED, in,
						      "a parameter that is not "
						      "an array");
			}
			ev->params[in->parameter_number] = in;
		}
	}
	for (i = 0; i < ev->nparams; i++)
		if (!ev->params[i]) {
			usc_eval_destroy(ev);
			return usc__fail(err, USC_EINVAL,
					 "computation '%s' lacks parameter "
					 "%zu",
					 c->name, i);
		}
	st = check_computation(ev, c, 0, err);
	if (st != USC_OK) {
		usc_eval_destroy(ev);
		return st;
	}
	ev->noutputs = shape_leaves(&c->root->shape);
	*out = ev;
	return USC_OK;
}

usc_status usc_eval_create(const usc_hlo_module *m,
			   const usc_eval_options *opts, usc_eval **out,
			   usc_error *err)
{
	if (!m || !m->entry)
		return usc__fail(err, USC_EINVAL,
				 "module has no entry computation");
	return usc_eval_create_computation(m->entry, opts, out, err);
}

size_t usc_eval_param_count(const usc_eval *ev)
{
	return ev ? ev->nparams : 0;
}

usc_status usc_eval_param_spec(const usc_eval *ev, size_t i,
			       usc_tensor_spec *spec, usc_error *err)
{
	if (!ev || i >= ev->nparams)
		return usc__fail(err, USC_ERANGE, "no parameter %zu", i);
	spec->dtype = ev->params[i]->shape.dtype;
	spec->rank = ev->params[i]->shape.rank;
	spec->dims = ev->params[i]->shape.dims;
	spec->what = NULL;
	return USC_OK;
}

usc_status usc_eval_bind(usc_eval *ev, size_t i, const usc_tensor *t,
			 usc_error *err)
{
	usc_tensor_spec want, got;
	char ws[256], gs[256];
	bool same;
	size_t d;

	if (!ev || !t)
		return usc__fail(err, USC_EINVAL, "nothing to bind");
	if (i >= ev->nparams)
		return usc__fail(err, USC_ERANGE,
				 "parameter %zu does not exist: the "
				 "computation has %zu",
				 i, ev->nparams);
	usc_eval_param_spec(ev, i, &want, NULL);
	got = usc_tensor_spec_of(t);
	same = want.dtype == got.dtype && want.rank == got.rank;
	for (d = 0; same && d < want.rank; d++)
		same = want.dims[d] == got.dims[d];
	if (!same) {
		usc_tensor_spec_format(&want, ws, sizeof ws);
		usc_tensor_spec_format(&got, gs, sizeof gs);
		return usc__fail(err, USC_EINVAL,
				 "parameter %zu ('%s') expects %s, got %s", i,
				 ev->params[i]->name, ws, gs);
	}
	ev->bound[i] = t;
	return USC_OK;
}

usc_status usc_eval_bind_all(usc_eval *ev, const usc_tensor *const *ts,
			     size_t n, usc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		usc_status st = usc_eval_bind(ev, i, ts[i], err);

		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status load_input(usc_eval *ev, size_t i, usc__evalue *v,
			     usc_error *err)
{
	const usc_tensor *t = ev->bound[i];
	size_t n = (size_t)usc_tensor_count(t), k;
	usc_status st;

	st = evalue_alloc(v, 1, err);
	if (st != USC_OK)
		return st;
	if (array_path(ev->dom->load_array != NULL, t, 0, n)) {
		st = ebuf_new_unset(ev, usc_tensor_dtype(t), n, &v->leaves[0],
				    err);
		if (st == USC_OK)
			st = ev->dom->load_array(ev->dstate,
						 usc_tensor_dtype(t),
						 enc_at(t, 0), n,
						 v->leaves[0]->values, err);
		return st;
	}
	st = usc__ebuf_new(ev, usc_tensor_dtype(t), n, &v->leaves[0], err);
	for (k = 0; st == USC_OK && k < n; k++) {
		uint64_t bits;

		st = usc_tensor_get_bits(t, k, &bits);
		if (st == USC_OK)
			st = ev->dom->load(ev->dstate, usc_tensor_dtype(t),
					   bits, USC__VAL(ev, v->leaves[0], k),
					   err);
		else
			st = usc__fail(err, st, "cannot read parameter %zu", i);
	}
	return st;
}

/* The array leaves of a shape, depth-first. */
static void collect_leaf_shapes(const usc_hlo_shape *s,
				const usc_hlo_shape **out, size_t *n)
{
	size_t i;

	if (s->kind != USC_HLO_SHAPE_TUPLE) {
		out[(*n)++] = s;
		return;
	}
	for (i = 0; i < s->tuple_count; i++)
		collect_leaf_shapes(&s->tuple[i], out, n);
}

/*
 * The loop computation a run can stream from the bound tensors to the
 * output tensor: the entry itself, or the computation that its root
 * fusion (or call) calls when that root reads entry parameters only,
 * through any depth of such wrappers (the shape of a kernel file: its
 * parameters and one kLoop fusion).  *pmap receives, for each parameter
 * of it, the entry parameter it reads (*npmap of them).  *loop NULL: none,
 * the run evaluates whole.
 */
static usc_status top_loop(const usc_eval *ev, size_t tile,
			   const usc_hlo_computation **loop, size_t **pmap,
			   size_t *npmap, usc_error *err)
{
	const usc_hlo_computation *c = ev->comp;
	const usc_hlo_shape *want = &c->root->shape;
	size_t *map = usc__calloc(ev->nparams ? ev->nparams : 1, sizeof *map);
	size_t nmap = ev->nparams;

	*loop = NULL;
	*pmap = NULL;
	if (!map)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t j = 0; j < nmap; j++)
		map[j] = j;
	for (int depth = 0; depth < 64; depth++) {
		const usc_hlo_instr *r = c->root;
		const usc_hlo_computation *callee;
		size_t *next, nnext;

		if (streamable(c, tile)) {
			/* The output tensor takes the entry root's shape. */
			bool same = want->kind == USC_HLO_SHAPE_ARRAY &&
				    r->shape.dtype == want->dtype &&
				    r->shape.rank == want->rank;

			for (size_t d = 0; same && d < want->rank; d++)
				same = r->shape.dims[d] == want->dims[d];
			if (same) {
				*loop = c;
				*pmap = map;
				*npmap = nmap;
				return USC_OK;
			}
			break;
		}
		if ((r->opcode != USC_HLO_OP_FUSION &&
		     r->opcode != USC_HLO_OP_CALL) ||
		    r->called_count < 1)
			break;
		for (size_t k = 0; k < r->operand_count; k++)
			if (r->operands[k]->opcode != USC_HLO_OP_PARAMETER ||
			    r->operands[k]->parameter_number < 0 ||
			    (size_t)r->operands[k]->parameter_number >= nmap)
				goto none;
		callee = r->called[0];
		nnext = r->operand_count;
		next = usc__calloc(nnext ? nnext : 1, sizeof *next);
		if (!next) {
			usc__free(map);
			return usc__fail(err, USC_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < nnext; k++)
			next[k] = map[r->operands[k]->parameter_number];
		usc__free(map);
		map = next;
		nmap = nnext;
		c = callee;
	}
none:
	usc__free(map);
	return USC_OK;
}

/* A run whose entry streams (top_loop): one output, made tile by tile. */
static usc_status run_streamed(usc_eval *ev, const usc_hlo_computation *loop,
			       const size_t *pmap, size_t npmap, size_t tile,
			       const usc__eval_stream *s, usc_error *err)
{
	const usc_hlo_shape *shape = &ev->comp->root->shape;
	usc__evalue unused = {0, NULL};
	usc__ebuf *keep = NULL;
	stream_io io;
	usc_status st;

	ev->outputs = usc__calloc(1, sizeof *ev->outputs);
	if (!ev->outputs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = s && s->no_tensor ? USC_OK
			       : usc_tensor_create(shape->dtype, shape->rank,
						   shape->dims,
						   &ev->outputs[0], err);
	if (st == USC_OK && s && s->keep)
		st = usc__ebuf_new(ev, loop->root->shape.dtype,
				   (size_t)usc_hlo_shape_elements(shape), &keep,
				   err);
	if (st == USC_OK) {
		memset(&io, 0, sizeof io);
		io.pmap = pmap;
		io.npmap = npmap;
		io.out = ev->outputs[0];
		io.keep = keep;
		io.s = s;
		st = eval_streamed(ev, loop, &io, tile, &unused, err);
	}
	if (st == USC_OK && keep) {
		st = evalue_alloc(&ev->kept, 1, err);
		if (st == USC_OK) {
			ev->kept.leaves[0] = keep;
			keep = NULL;
		}
	}
	usc__ebuf_release(ev, keep);
	if (st != USC_OK) {
		free_outputs(ev);
		evalue_clear(ev, &ev->kept);
	}
	return st;
}

/* A run of any computation: every value whole, outputs after the run. */
static usc_status run_whole(usc_eval *ev, const usc__eval_stream *s,
			    usc_error *err)
{
	usc__evalue *args = NULL, result = {0, NULL};
	const usc_hlo_shape **shapes = NULL;
	usc_status st = USC_OK;
	size_t i, n = 0;

	args = usc__calloc(ev->nparams ? ev->nparams : 1, sizeof *args);
	if (!args)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (i = 0; st == USC_OK && i < ev->nparams; i++)
		st = load_input(ev, i, &args[i], err);
	if (st == USC_OK)
		st = eval_computation(ev, ev->comp, args, ev->nparams, &result,
				      err);
	if (st != USC_OK)
		goto done;
	shapes = usc__calloc(ev->noutputs ? ev->noutputs : 1, sizeof *shapes);
	ev->outputs = usc__calloc(ev->noutputs ? ev->noutputs : 1,
				  sizeof *ev->outputs);
	if (!shapes || !ev->outputs) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	collect_leaf_shapes(&ev->comp->root->shape, shapes, &n);
	if (n != result.n) {
		st = usc__fail(err, USC_EINTERNAL,
			       "root has %zu leaves, the result %zu", n,
			       result.n);
		goto done;
	}
	for (i = 0; st == USC_OK && i < n; i++) {
		usc__ebuf *b = result.leaves[i];
		usc_tensor *t = NULL;
		size_t k;

		st = usc_tensor_create(shapes[i]->dtype, shapes[i]->rank,
				       shapes[i]->dims, &t, err);
		if (st != USC_OK)
			break;
		ev->outputs[i] = t;
		k = 0;
		if (array_path(ev->dom->to_output_array != NULL, t, 0,
			       b->count) &&
		    usc_tensor_dtype(t) == b->dtype &&
		    b->count == (size_t)usc_tensor_count(t) &&
		    b->base == 0 && b->len == b->count) {
			st = ev->dom->to_output_array(ev->dstate, b->dtype,
						      b->values, b->count,
						      enc_at_mut(t, 0), err);
			k = b->count;
		}
		for (; st == USC_OK && k < b->count; k++) {
			uint64_t bits;

			st = ev->dom->to_output(ev->dstate, b->dtype,
						USC__VAL(ev, b, k), &bits, NULL,
						err);
			if (st == USC_OK)
				st = usc_tensor_set_bits(t, k, bits);
		}
		ev->last_elements += b->count;
	}
	/* The visitor sees each output whole, wanted or not. */
	for (i = 0; st == USC_OK && s && s->visit && i < n; i++)
		st = s->visit(s->ctx, i, 0, result.leaves[i]->count,
			      result.leaves[i]->values,
			      result.leaves[i]->dtype, err);
	if (st != USC_OK)
		free_outputs(ev);
	if (st == USC_OK) {
		/*
		 * Keep the values for the analysis (eval_values.h): they
		 * exist whole anyway.
		 */
		ev->kept = result;
		result.n = 0;
		result.leaves = NULL;
	}
done:
	if (st != USC_OK)
		ev->last_elements = 0;
	evalue_clear(ev, &result);
	if (args)
		for (i = 0; i < ev->nparams; i++)
			evalue_clear(ev, &args[i]);
	usc__free(args);
	usc__free(shapes);
	return st;
}

usc_status usc__eval_run_stream(usc_eval *ev, const usc__eval_stream *s,
				usc_error *err)
{
	size_t tile, *pmap = NULL, npmap = 0, i;
	const usc_hlo_computation *loop = NULL;
	usc_status st;

	if (!ev)
		return usc__fail(err, USC_EINVAL, "no evaluator");
	free_outputs(ev);
	evalue_clear(ev, &ev->kept);
	keep_clear(ev);
	ev->last_elements = 0;
	ev->last_tiles = 0;
	for (i = 0; i < ev->nparams; i++)
		if (!ev->bound[i])
			return usc__fail(err, USC_EINVAL,
					 "parameter %zu ('%s') is not bound",
					 i, ev->params[i]->name);
	/* Control flow follows the reference's path (control.h). */
	st = usc__ctl_prepare(ev, err);
	if (st != USC_OK)
		return st;
	tile = ev->opts.tile_elements ? ev->opts.tile_elements
				      : USC_EVAL_TILE_DEFAULT;
	if (tile != USC_EVAL_NO_TILES && ev->noutputs == 1 &&
	    ev->nkeep == 0) {
		st = top_loop(ev, tile, &loop, &pmap, &npmap, err);
		if (st != USC_OK)
			return st;
	}
	if (!loop) {
		st = run_whole(ev, s, err);
		if (st != USC_OK)
			keep_clear(ev);
		return st;
	}
	st = run_streamed(ev, loop, pmap, npmap, tile, s, err);
	usc__free(pmap);
	if (st != USC_OK) {
		ev->last_elements = 0;
		ev->last_tiles = 0;
	}
	return st;
}

usc_status usc__eval_streams(const usc_eval *ev, bool *streams, size_t *tile,
			     usc_error *err)
{
	const usc_hlo_computation *loop = NULL;
	size_t *pmap = NULL, npmap = 0;
	usc_status st = USC_OK;

	*streams = false;
	*tile = ev->opts.tile_elements ? ev->opts.tile_elements
				       : USC_EVAL_TILE_DEFAULT;
	if (*tile != USC_EVAL_NO_TILES && ev->noutputs == 1 &&
	    ev->nkeep == 0) {
		st = top_loop(ev, *tile, &loop, &pmap, &npmap, err);
		usc__free(pmap);
		*streams = st == USC_OK && loop != NULL;
	}
	return st;
}

usc_status usc_eval_run(usc_eval *ev, usc_error *err)
{
	return usc__eval_run_stream(ev, NULL, err);
}

usc_status usc__eval_output_values(const usc_eval *ev, size_t i,
				   const void **values, size_t *count,
				   usc_dtype *dtype)
{
	if (!ev || i >= ev->kept.n)
		return USC_ERANGE;
	*values = ev->kept.leaves[i]->values;
	*count = ev->kept.leaves[i]->count;
	*dtype = ev->kept.leaves[i]->dtype;
	return USC_OK;
}

void *usc__eval_domain_state(const usc_eval *ev)
{
	return ev ? ev->dstate : NULL;
}

const usc__domain_ops *usc__eval_domain(const usc_eval *ev)
{
	return ev ? ev->dom : NULL;
}

void usc__eval_last_run(const usc_eval *ev, uint64_t *elements,
			uint64_t *tiles)
{
	*elements = ev ? ev->last_elements : 0;
	*tiles = ev ? ev->last_tiles : 0;
}

size_t usc_eval_output_count(const usc_eval *ev)
{
	return ev ? ev->noutputs : 0;
}

usc_status usc_eval_output(const usc_eval *ev, size_t i,
			   const usc_tensor **out, usc_error *err)
{
	if (!ev || !ev->outputs || i >= ev->noutputs || !ev->outputs[i])
		return usc__fail(err, USC_ERANGE, "no output %zu", i);
	*out = ev->outputs[i];
	return USC_OK;
}

usc_status usc_eval_take_output(usc_eval *ev, size_t i, usc_tensor **out,
				usc_error *err)
{
	if (!ev || !ev->outputs || i >= ev->noutputs || !ev->outputs[i])
		return usc__fail(err, USC_ERANGE, "no output %zu", i);
	*out = ev->outputs[i];
	ev->outputs[i] = NULL;
	return USC_OK;
}
