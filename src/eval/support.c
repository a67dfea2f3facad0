/*
 * What the evaluator accepts: the ops it knows, and the check of a
 * computation when an evaluator is created (shapes, element limits,
 * nesting depth, called computations), so that a run refuses nothing
 * halfway.
 */
#include "eval_internal.h"

#include <inttypes.h>
#include <stdio.h>

#include "ulpscope/dtype.h"
#include "ulpscope/limits.h"

#include "control.h"

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

/* ---------------------------------------------------------- checking */


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
			st = usc__eval_check_computation(ev, c, depth + 1, err);
			if (st != USC_OK)
				return st;
		}
	}
	return USC_OK;
}

usc_status usc__eval_check_computation(usc_eval *ev,
				       const usc_hlo_computation *c, int depth,
				       usc_error *err)
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
