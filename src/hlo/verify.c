/*
 * The HLO verifier: the shape rules of the ops ulpscope evaluates, checked
 * once so that the evaluator can index arrays without re-checking them.
 *
 * The rules are those of XLA's shape inference (xla/service/
 * shape_inference.cc) and of its operation semantics page, restricted to
 * what the evaluator relies on: ranks, sizes, element types where an op
 * fixes them, attribute values in range, and the signatures of called
 * computations.  Layouts are ignored (the evaluator works on logical
 * indices), and a dynamic dimension is compared by its bound; an unbounded
 * one ("?") matches any size.  Ops outside the list below pass unchecked:
 * docs/kernels.md lists both.
 *
 * No function here allocates: expected dimensions are built in fixed
 * arrays of USC__VERIFY_MAX_RANK entries, which is far above the rank of
 * any real HLO array; a deeper one is reported rather than overrun.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/kernel_internal.h"
#include "hlo/verify_internal.h"
#include "ulpscope/hlo_kernel.h"

/* ---------------------------------------------------- control, tuples */

static usc_status check_tuple(const usc__vctx *v, const usc_hlo_instr *in)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i;

	if (in->shape.kind != USC_HLO_SHAPE_TUPLE ||
	    in->shape.tuple_count != in->operand_count)
		return usc__vf_bad(
			v, in,
			"has shape %s, expected a tuple of %zu "
			"element%s (one per operand)",
			usc_hlo_shape_format(&in->shape, a, sizeof a),
			in->operand_count, in->operand_count == 1 ? "" : "s");
	for (i = 0; i < in->operand_count; i++)
		if (!usc__vf_same_shape(&in->shape.tuple[i],
					&in->operands[i]->shape))
			return usc__vf_bad(
				v, in,
				"element %zu has shape %s, but operand "
				"%zu has shape %s",
				i,
				usc_hlo_shape_format(&in->shape.tuple[i], a,
						     sizeof a),
				i,
				usc_hlo_shape_format(&in->operands[i]->shape, b,
						     sizeof b));
	return USC_OK;
}

static usc_status check_gte(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *t;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	int64_t k;

	TRY(usc__vf_want_operands(v, in, 1));
	t = &in->operands[0]->shape;
	if (t->kind != USC_HLO_SHAPE_TUPLE)
		return usc__vf_bad(v, in,
				   "operand has shape %s, expected a tuple",
				   usc_hlo_shape_format(t, a, sizeof a));
	TRY(usc__vf_get_int(v, in, "index", true, 0, &k));
	if (k < 0 || (uint64_t)k >= t->tuple_count)
		return usc__vf_bad(v, in,
				   "has index=%" PRId64
				   ", but its operand is a "
				   "tuple of %zu",
				   k, t->tuple_count);
	if (!usc__vf_same_shape(&in->shape, &t->tuple[k]))
		return usc__vf_bad(
			v, in,
			"has shape %s, but element %" PRId64 " of its "
			"operand has shape %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a), k,
			usc_hlo_shape_format(&t->tuple[k], b, sizeof b));
	return USC_OK;
}

static usc_status check_parameter(const usc__vctx *v, const usc_hlo_instr *in,
				  size_t nparams)
{
	const usc_hlo_computation *c = v->comp;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	int64_t k = in->parameter_number;
	size_t i;

	if (k < 0 || (uint64_t)k >= nparams)
		return usc__vf_bad(v, in,
				   "has number %" PRId64
				   ", but the computation "
				   "has %zu parameters (numbers 0 to %zu)",
				   k, nparams, nparams ? nparams - 1 : 0);
	for (i = 0; i < in->index; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number == k)
			return usc__vf_bad(v, in,
					   "has number %" PRId64
					   ", already taken "
					   "by '%s'",
					   k, c->instrs[i]->name);
	if (c->has_signature && c->param_count == nparams &&
	    !usc__vf_same_shape(&c->params[k].shape, &in->shape))
		return usc__vf_bad(
			v, in,
			"has shape %s, but the computation's "
			"signature gives parameter %" PRId64 " shape %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a), k,
			usc_hlo_shape_format(&c->params[k].shape, b, sizeof b));
	return USC_OK;
}

static usc_status check_literal(const usc__vctx *v, const usc_hlo_instr *in,
				const usc_hlo_shape *s,
				const usc_hlo_literal *lit)
{
	char a[SHAPE_BUF];
	size_t i;

	if (lit->kind == USC_HLO_LITERAL_ELIDED)
		return USC_OK;
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		if (lit->kind != USC_HLO_LITERAL_TUPLE ||
		    lit->tuple_count != s->tuple_count)
			return usc__vf_bad(
				v, in,
				"has a literal that does not match "
				"the tuple shape %s",
				usc_hlo_shape_format(s, a, sizeof a));
		for (i = 0; i < s->tuple_count; i++)
			TRY(check_literal(v, in, &s->tuple[i], &lit->tuple[i]));
		return USC_OK;
	}
	if (s->kind != USC_HLO_SHAPE_ARRAY || usc__vf_any_unbounded(s))
		return USC_OK;
	if (lit->kind != USC_HLO_LITERAL_ARRAY ||
	    (int64_t)lit->count != usc_hlo_shape_elements(s))
		return usc__vf_bad(
			v, in,
			"has %zu literal elements, but shape %s has %" PRId64,
			lit->kind == USC_HLO_LITERAL_ARRAY ? lit->count : 0,
			usc_hlo_shape_format(s, a, sizeof a),
			usc_hlo_shape_elements(s));
	return USC_OK;
}

static usc_status check_sort(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	const int64_t *d;
	size_t n, nd, k;

	TRY(usc__vf_want_min_operands(v, in, 1));
	n = in->operand_count;
	for (k = 0; k < n; k++) {
		const usc_hlo_shape *ok = &in->operands[k]->shape;

		if (!usc__vf_is_array(ok))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected an "
				"array",
				k, usc_hlo_shape_format(ok, a, sizeof a));
		TRY(usc__vf_want_rank(v, in, ok));
		if (!usc__vf_same_dims(ok, &in->operands[0]->shape))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, but operand "
				"0 has %s",
				k, usc_hlo_shape_format(ok, a, sizeof a),
				usc_hlo_shape_format(&in->operands[0]->shape, b,
						     sizeof b));
	}
	o = &in->operands[0]->shape;
	if (n == 1 ? !usc__vf_same_shape(r, o)
		   : r->kind != USC_HLO_SHAPE_TUPLE || r->tuple_count != n)
		return usc__vf_bad(
			v, in, "has shape %s, expected the operands' shape%s",
			usc_hlo_shape_format(r, a, sizeof a),
			n > 1 ? "s as a tuple" : "");
	for (k = 0; n > 1 && k < n; k++)
		if (!usc__vf_same_shape(&r->tuple[k], &in->operands[k]->shape))
			return usc__vf_bad(
				v, in,
				"result element %zu has shape %s, but "
				"operand %zu has %s",
				k,
				usc_hlo_shape_format(&r->tuple[k], a, sizeof a),
				k,
				usc_hlo_shape_format(&in->operands[k]->shape, b,
						     sizeof b));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &nd, &d));
	if (nd != 1)
		return usc__vf_bad(v, in, "has %zu dimensions, expected one",
				   nd);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, nd, o->rank,
				   "the operand", false));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

/* ------------------------------------------------------------- driver */

static usc_status check_instr(const usc__vctx *v, const usc_hlo_instr *in,
			      size_t nparams)
{
	switch (in->opcode) {
	case USC_HLO_OP_PARAMETER:
		return check_parameter(v, in, nparams);
	case USC_HLO_OP_CONSTANT:
		return in->literal ? check_literal(v, in, &in->shape, in->literal)
				   : USC_OK;
	case USC_HLO_OP_MAP:
		return usc__vf_check_map(v, in);
	case USC_HLO_OP_BROADCAST:
		return usc__vf_check_broadcast(v, in);
	case USC_HLO_OP_RESHAPE:
		return usc__vf_check_reshape(v, in);
	case USC_HLO_OP_TRANSPOSE:
		return usc__vf_check_transpose(v, in);
	case USC_HLO_OP_SLICE:
		return usc__vf_check_slice(v, in);
	case USC_HLO_OP_DYNAMIC_SLICE:
		return usc__vf_check_dynamic_slice(v, in);
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
		return usc__vf_check_dynamic_update_slice(v, in);
	case USC_HLO_OP_CONCATENATE:
		return usc__vf_check_concatenate(v, in);
	case USC_HLO_OP_PAD:
		return usc__vf_check_pad(v, in);
	case USC_HLO_OP_IOTA:
		return usc__vf_check_iota(v, in);
	case USC_HLO_OP_REVERSE:
		return usc__vf_check_reverse(v, in);
	case USC_HLO_OP_REDUCE:
		return usc__vf_check_reduce(v, in);
	case USC_HLO_OP_REDUCE_WINDOW:
		return usc__vf_check_reduce_window(v, in);
	case USC_HLO_OP_SELECT_AND_SCATTER:
		return usc__vf_check_select_and_scatter(v, in);
	case USC_HLO_OP_DOT:
		return usc__vf_check_dot(v, in);
	case USC_HLO_OP_CONVOLUTION:
		return usc__vf_check_convolution(v, in);
	case USC_HLO_OP_GATHER:
		return usc__vf_check_gather(v, in);
	case USC_HLO_OP_SCATTER:
		return usc__vf_check_scatter(v, in);
	case USC_HLO_OP_TUPLE:
		return check_tuple(v, in);
	case USC_HLO_OP_GET_TUPLE_ELEMENT:
		return check_gte(v, in);
	case USC_HLO_OP_FUSION:
		return usc__vf_check_call(v, in, "calls");
	case USC_HLO_OP_CALL:
		return usc__vf_check_call(v, in, "to_apply");
	case USC_HLO_OP_SORT:
		return check_sort(v, in);
	default:
		break;
	}
	if (usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE)
		return usc__vf_check_elementwise(v, in);
	/* Every other op is accepted as written (docs/kernels.md). */
	return USC_OK;
}

/*
 * Instructions may name operands defined later in the text, so the text's
 * order proves nothing: a depth-first walk over the operand edges finds
 * any cycle (an instruction that depends on itself), which no evaluation
 * order could satisfy.
 */
static usc_status check_acyclic(usc__vctx *v, const usc_hlo_computation *c)
{
	size_t n = c->instr_count, i;
	unsigned char *state = usc__calloc(n ? n : 1, 1);
	size_t *stack = usc__calloc(n ? n : 1, sizeof *stack);
	size_t *next = usc__calloc(n ? n : 1, sizeof *next);
	usc_status st = USC_OK;

	if (!state || !stack || !next) {
		st = usc__fail(v->err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n && st == USC_OK; i++) {
		size_t sp = 0;

		if (state[i])
			continue;
		stack[sp++] = i;
		state[i] = 1;
		while (sp && st == USC_OK) {
			size_t top = stack[sp - 1];
			const usc_hlo_instr *in = c->instrs[top];

			if (next[top] < in->operand_count) {
				const usc_hlo_instr *o =
					in->operands[next[top]++];

				if (state[o->index] == 1)
					st = usc__vf_bad(
						v, in,
						"uses '%s', which depends on "
						"it: the computation has a "
						"cycle",
						o->name);
				else if (state[o->index] == 0) {
					state[o->index] = 1;
					stack[sp++] = o->index;
				}
			} else {
				state[top] = 2;
				sp--;
			}
		}
	}
done:
	usc__free(state);
	usc__free(stack);
	usc__free(next);
	return st;
}

static usc_status verify_comp(usc__vctx *v, const usc_hlo_computation *c)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i, nparams;

	v->comp = c;
	TRY(check_acyclic(v, c));
	nparams = usc__vf_param_count(c);
	for (i = 0; i < c->instr_count; i++)
		TRY(check_instr(v, c->instrs[i], nparams));
	if (c->root && c->has_signature &&
	    !usc__vf_same_shape(&c->result, &c->root->shape))
		return usc__vf_bad(
			v, c->root,
			"is the root with shape %s, but the "
			"computation's signature returns %s",
			usc_hlo_shape_format(&c->root->shape, a, sizeof a),
			usc_hlo_shape_format(&c->result, b, sizeof b));
	return USC_OK;
}

usc_status usc_hlo_verify_ex(const usc_hlo_module *m, const char *filename,
			     usc_error *err)
{
	usc__vctx v;
	size_t i;

	if (!m)
		return usc__fail(err, USC_EINVAL, "usc_hlo_verify: NULL module");
	v.filename = filename;
	v.module = m;
	v.comp = NULL;
	v.err = err;
	for (i = 0; i < m->computation_count; i++)
		TRY(verify_comp(&v, m->computations[i]));
	return USC_OK;
}

usc_status usc_hlo_verify(const usc_hlo_module *m, usc_error *err)
{
	return usc_hlo_verify_ex(m, NULL, err);
}

usc_status usc_hlo_verify_file(const usc_hlo_file *f, usc_error *err)
{
	size_t i;

	if (!f)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_verify_file: NULL file");
	for (i = 0; i < f->module_count; i++)
		TRY(usc_hlo_verify_ex(f->modules[i], f->filename, err));
	return USC_OK;
}

usc_status usc_hlo_verify_computation(const usc_hlo_computation *c,
				      usc_error *err)
{
	usc__vctx v;

	if (!c)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_verify_computation: NULL computation");
	v.filename = NULL;
	v.module = c->parent;
	v.comp = c;
	v.err = err;
	return verify_comp(&v, c);
}
