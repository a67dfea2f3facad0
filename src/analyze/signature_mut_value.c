/*
 * Defect signatures: the mutations of an op's value.  A NaN dropped,
 * operands or branches swapped, an op dropped, a reduction's init or a
 * constant wrong.  Each writes the replacement lines of one op
 * (signature_internal.h).
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool usc__sig_mut_swap(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], args[512], rest[1024];

	if (!usc__sig_is_array(&in->shape))
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	switch (in->opcode) {
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_COMPARE:
	case USC_HLO_OP_SHIFT_LEFT:
	case USC_HLO_OP_SHIFT_RIGHT_LOGICAL:
	case USC_HLO_OP_SHIFT_RIGHT_ARITHMETIC:
		if (in->operand_count != 2 ||
		    !usc__sig_same_shape(&in->operands[0]->shape,
					 &in->operands[1]->shape) ||
		    in->operands[0] == in->operands[1])
			return false;
		snprintf(args, sizeof args, "%s, %s", in->operands[1]->name,
			 in->operands[0]->name);
		usc__sig_set_detail(c, "'%s' and '%s' swapped",
				    in->operands[0]->name,
				    in->operands[1]->name);
		break;
	case USC_HLO_OP_SELECT:
		if (in->operand_count != 3 ||
		    !usc__sig_same_shape(&in->operands[1]->shape,
					 &in->operands[2]->shape) ||
		    in->operands[1] == in->operands[2])
			return false;
		snprintf(args, sizeof args, "%s, %s, %s", in->operands[0]->name,
			 in->operands[2]->name, in->operands[1]->name);
		usc__sig_set_detail(c, "branches swapped");
		break;
	default:
		return false;
	}
	usc__sig_emit(c, in->is_root, in->name, st,
		      usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	return true;
}

bool usc__sig_mut_drop(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *keep;
	char st[256];

	if (in->opcode == USC_HLO_OP_CLAMP && in->operand_count == 3) {
		if (v != 0)
			return false;
		keep = in->operands[1];
	} else if (usc__sig_float_arith(in)) {
		if ((size_t)v >= in->operand_count)
			return false;
		keep = in->operands[v];
	} else {
		return false;
	}
	if (!usc__sig_same_shape(&keep->shape, &in->shape))
		return false;
	/* Both operands the same: one candidate is enough. */
	if (v == 1 && in->operands[0] == in->operands[1])
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "reshape", keep->name,
		      NULL);
	usc__sig_set_detail(c, "passes on '%s'", keep->name);
	return true;
}

/* The init a reduction wrongly starts from, as text. */
static const char *wrong_init_text(const usc_hlo_scalar *s)
{
	if (s->value == 0)
		return "1";
	return "0";
}

/* A scalar constant's literal. */
static const usc_hlo_literal *scalar_literal(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_CONSTANT && in->literal &&
		       in->literal->kind == USC_HLO_LITERAL_ARRAY &&
		       in->literal->count == 1
		   ? in->literal
		   : NULL;
}

/*
 * The constant a reduction's init is: the operand itself, or, for a
 * parameter of a fused computation (XLA wraps a reduce-window in one and
 * passes its init in), the constant its caller passes.
 */
static const usc_hlo_literal *init_constant(const usc_hlo_instr *init)
{
	const usc_hlo_computation *comp = init->parent;
	const usc_hlo_module *m = comp ? comp->parent : NULL;

	if (scalar_literal(init))
		return scalar_literal(init);
	if (init->opcode != USC_HLO_OP_PARAMETER || !m || comp->is_entry ||
	    init->parameter_number < 0)
		return NULL;
	for (size_t i = 0; i < m->computation_count; i++)
		for (size_t j = 0; j < m->computations[i]->instr_count; j++) {
			const usc_hlo_instr *call =
			    m->computations[i]->instrs[j];

			if (call->opcode == USC_HLO_OP_FUSION &&
			    call->called_count == 1 &&
			    call->called[0] == comp &&
			    (size_t)init->parameter_number <
				call->operand_count)
				return scalar_literal(
				    call->operands[init->parameter_number]);
		}
	return NULL;
}

bool usc__sig_mut_wrong_init(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sc[64], args[1024], rest[1024], k[160];
	size_t half, j;
	const usc_hlo_literal *lit = NULL;

	if (in->opcode != USC_HLO_OP_REDUCE &&
	    in->opcode != USC_HLO_OP_REDUCE_WINDOW)
		return false;
	if (!usc__sig_is_array(&in->shape) || in->operand_count < 2 ||
	    in->operand_count % 2)
		return false;
	half = in->operand_count / 2;
	for (j = half; j < in->operand_count; j++)
		if ((lit = init_constant(in->operands[j])) != NULL)
			break;
	if (j == in->operand_count)
		return false;
	snprintf(sc, sizeof sc, "%s[]",
		 usc_dtype_name(in->operands[j]->shape.dtype));
	usc__sig_hname(c, k);
	usc__sig_emit(c, false, k, sc, "constant",
		      wrong_init_text(&lit->elems[0]), NULL);
	usc__sig_args_with(in, j, k, args, sizeof args);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st,
		      usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_set_detail(c, "init %s instead of %s",
			    wrong_init_text(&lit->elems[0]),
			    lit->elems[0].text);
	return true;
}

bool usc__sig_splat_constant(const usc_hlo_instr *in)
{
	const usc_hlo_literal *l = in->literal;
	uint64_t n = 1;

	if (in->opcode != USC_HLO_OP_CONSTANT ||
	    !usc__sig_is_float_array(&in->shape) || !l ||
	    l->kind != USC_HLO_LITERAL_ARRAY || l->count == 0)
		return false;
	for (size_t d = 0; d < in->shape.rank; d++)
		n *= (uint64_t)in->shape.dims[d];
	if (n != l->count)
		return false;
	/* Bit for bit the same value: the text XLA printed for each. */
	for (size_t i = 1; i < l->count; i++)
		if (l->elems[i].value != l->elems[0].value ||
		    signbit(l->elems[i].value) != signbit(l->elems[0].value))
			return false;
	return true;
}

void usc__sig_emit_constant(usc__sig_ctx *c, const char *val)
{
	const usc_hlo_instr *in = c->in;
	char sc[64], sh[256], k[160];

	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(in->shape.dtype));
	if (in->shape.rank == 0) {
		usc__sig_emit(c, in->is_root, in->name, sc, "constant", val,
			      NULL);
		return;
	}
	usc__sig_emit(c, false, usc__sig_hname(c, k), sc, "constant", val,
		      NULL);
	usc__sig_shape_txt(sh, sizeof sh, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, sh, "broadcast", k,
		      ", dimensions={}");
}

/*
 * wrong-constant/0: the constant rounded to bf16 (a literal folded in a
 * narrower type); /1: zero (a constant lost).  Scalars, and the splat
 * arrays XLA folds a broadcast constant into (its fused kernels carry
 * them without the op_name of the scalar they came from).
 */
bool usc__sig_mut_wrong_constant(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	char val[64];
	double x, y;
	uint64_t bits;
	usc_rounding r = USC_ROUNDING_DEFAULT;

	if (!usc__sig_splat_constant(in))
		return false;
	x = in->literal->elems[0].value;
	if (!isfinite(x) || x == 0)
		return false;
	if (v == 0) {
		if (usc__sig_fbits(in->shape.dtype) <= 16 ||
		    usc_encode_double(USC_BF16, x, &r, &bits, NULL) != USC_OK ||
		    usc_decode_double(USC_BF16, bits, &y) != USC_OK || y == x)
			return false;
		snprintf(val, sizeof val, "%.17g", y);
		usc__sig_set_detail(c, "%s rounded to bf16 (%s)",
				    in->literal->elems[0].text, val);
	} else {
		snprintf(val, sizeof val, "0");
		usc__sig_set_detail(c, "0 instead of %s",
				    in->literal->elems[0].text);
	}
	usc__sig_emit_constant(c, val);
	return true;
}
