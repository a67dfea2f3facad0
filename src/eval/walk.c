/*
 * The walk of a computation: its instructions in topological order, each
 * dispatched to its family (elementwise, data movement, reductions, dot,
 * control flow, a call or fusion entering its computation), operands
 * freed after their last use, and the values bisection keeps.
 */
#include "eval_internal.h"

#include <string.h>

#include "control.h"
#include "eval_values.h"

/* ------------------------------------------- kept values (bisection) */

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
	return usc__evalue_share(&ev->keep_vals[k], v->leaves, v->n, err);
}

void usc__eval_keep_clear(usc_eval *ev)
{
	for (size_t i = 0; ev->keep_vals && i < ev->nkeep; i++)
		usc__evalue_clear(ev, &ev->keep_vals[i]);
}

usc_status usc__eval_keep(usc_eval *ev, const usc_hlo_instr *in, usc_error *err)
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
	st = usc__evalue_alloc(res, 1, err);
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
	*st = usc__evalue_alloc(res, 1, err);
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

	st = usc__evalue_alloc(res, n, err);
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

usc_status usc__eval_instr(usc_eval *ev, const usc_hlo_instr *in,
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
		return usc__evalue_share(res, args[in->parameter_number].leaves,
			     args[in->parameter_number].n, err);
	case USC_HLO_OP_TUPLE: {
		size_t n = 0, k, j;

		for (k = 0; k < in->operand_count; k++)
			n += ops[k].n;
		st = usc__evalue_alloc(res, n, err);
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
			off += usc__shape_leaves(&ts->tuple[k]);
		return usc__evalue_share(res, ops[0].leaves + off,
			     usc__shape_leaves(&ts->tuple[idx]), err);
	}
	case USC_HLO_OP_OPTIMIZATION_BARRIER:
		return usc__evalue_share(res, ops[0].leaves, ops[0].n, err);
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
		return usc__eval_computation(ev, in->called[0], ops,
					in->operand_count, res, err);
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_COPY:
		/* Row-major order is kept: the values are shared. */
		if (ops[0].leaves[0]->count !=
		    (size_t)usc_hlo_shape_elements(&in->shape))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "element counts differ");
		return usc__evalue_share(res, ops[0].leaves, 1, err);
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
		st = usc__evalue_alloc(res, 1, err);
		if (st != USC_OK)
			return st;
		st = usc__ebuf_new_unset(ev, in->shape.dtype,
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
		return usc__eval_constant(ev, in, res->leaves[0], err);
	case USC_HLO_OP_IOTA:
		return usc__eval_iota(ev, in, res->leaves[0], 0, count, err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return usc__eval_bitcast_convert(ev, in, ops, res->leaves[0],
						 err);
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
		return usc__eval_elementwise(ev, in, ops, res->leaves[0], 0,
					     count, err);
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

usc_status usc__eval_walk(usc_eval *ev, const usc_hlo_computation *c,
			  const usc__evalue *args, size_t nargs,
			  const usc__walk_hooks *h, usc__evalue *result,
			  usc_error *err)
{
	size_t n = c->instr_count, i, k;
	usc__evalue *vals, *ops = NULL;
	size_t *uses, *order;
	unsigned char *todo = NULL;
	usc_status st = USC_OK;

	vals = usc__calloc(n ? n : 1, sizeof *vals);
	uses = usc__calloc(n ? n : 1, sizeof *uses);
	order = usc__calloc(n ? n : 1, sizeof *order);
	if (h)
		todo = usc__calloc(n ? n : 1, 1);
	if (!vals || !uses || !order || (h && !todo)) {
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
	if (h) {
		st = h->plan(h->ctx, c, order, uses, todo, err);
		if (st != USC_OK)
			goto done;
	}
	for (i = 0; i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];
		size_t x = in->index;

		if (h) {
			if (todo[x] == USC__WALK_SKIP)
				continue;
			if (todo[x] == USC__WALK_TAKE) {
				if (uses[x] == 0 && in != c->root)
					continue;
				st = h->take(h->ctx, in, &vals[x], err);
				if (st != USC_OK)
					goto done;
				continue;
			}
		} else if (uses[x] == 0 && in != c->root &&
			   keep_slot(ev, in) == SIZE_MAX) {
			/*
			 * An instruction nobody uses, other than the root,
			 * is dead, unless its values are to be kept.
			 */
			continue;
		}
		usc__free(ops);
		ops = usc__calloc(in->operand_count ? in->operand_count : 1,
				  sizeof *ops);
		if (!ops) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		for (k = 0; k < in->operand_count; k++)
			ops[k] = vals[in->operands[k]->index];
		st = usc__eval_instr(ev, in, ops, args, nargs, &vals[x], err);
		if (st == USC_OK)
			st = h ? h->evaluated(h->ctx, ev, in, &vals[x], err)
			       : keep_value(ev, in, &vals[x], err);
		if (st != USC_OK)
			goto done;
		/* Operands whose last user this was are freed now. */
		for (k = 0; k < in->operand_count; k++) {
			size_t o = in->operands[k]->index;

			if (--uses[o] == 0 && c->instrs[o] != c->root)
				usc__evalue_clear(ev, &vals[o]);
		}
	}
	*result = vals[c->root->index];
	vals[c->root->index].leaves = NULL;
	vals[c->root->index].n = 0;
done:
	if (vals)
		for (i = 0; i < n; i++)
			usc__evalue_clear(ev, &vals[i]);
	usc__free(ops);
	usc__free(vals);
	usc__free(uses);
	usc__free(order);
	usc__free(todo);
	return st;
}

usc_status usc__eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const usc__evalue *args, size_t nargs,
				 usc__evalue *result, usc_error *err)
{
	size_t tile = ev->opts.tile_elements ? ev->opts.tile_elements
					     : USC_EVAL_TILE_DEFAULT;

	if (ev->cone)
		return usc__cone_computation(ev, c, args, nargs, result, err);
	/* Kept instructions (bisection) exist whole: no tiles then. */
	if (tile != USC_EVAL_NO_TILES && ev->nkeep == 0 &&
	    usc__eval_streamable(c, tile))
		return usc__eval_stream_nested(ev, c, args, nargs, tile,
					       result, err);
	return usc__eval_walk(ev, c, args, nargs, NULL, result, err);
}
