/*
 * Scalar computations: the to_apply bodies of reduce, reduce-window,
 * scatter and map, called once per element.  They are compiled once into
 * a list of steps over value slots (one slot per scalar instruction), so
 * a call copies its arguments into the parameter slots, runs the steps
 * through the same domain as everything else, and copies the root's
 * leaves out: no allocation per element.
 */
#include "eval_internal.h"

#include <string.h>

typedef enum step_kind { STEP_APPLY, STEP_COPY } step_kind;

struct usc__sfn_step {
	step_kind kind;
	usc__dom_op op;
	size_t out;
	size_t args[USC__DOM_MAX_ARGS];
};

#define SLOT(ev, fn, i) ((void *)((fn)->slots + (i) * (ev)->dom->value_size))

static void sfn_free(usc_eval *ev, usc__sfn *fn)
{
	if (!fn)
		return;
	if (fn->slots && ev->dom->clear)
		ev->dom->clear(ev->dstate, fn->slots, fn->nslots);
	usc__free(fn->slots);
	usc__free(fn->steps);
	usc__free(fn->results);
	usc__free(fn->param_slot);
	usc__free(fn);
}

void usc__sfn_free_all(usc_eval *ev)
{
	while (ev->sfns) {
		usc__sfn *n = ev->sfns->next;

		sfn_free(ev, ev->sfns);
		ev->sfns = n;
	}
}

static bool is_scalar(const usc_hlo_shape *s)
{
	return s->kind == USC_HLO_SHAPE_ARRAY &&
	       usc_hlo_shape_elements(s) == 1;
}

/*
 * Each instruction gets a range of leaf slots: one for a scalar, its
 * elements' for a tuple.  first[i], count[i] describe instruction i's.
 */
static usc_status compile(usc_eval *ev, const usc_hlo_computation *c,
			  usc__sfn *fn, usc_error *err)
{
	size_t n = c->instr_count, i, k, next_slot = 0;
	size_t *order = usc__calloc(n ? n : 1, sizeof *order);
	size_t *first = usc__calloc(n ? n : 1, sizeof *first);
	size_t *count = usc__calloc(n ? n : 1, sizeof *count);
	size_t *leaf = NULL, nleaf = 0;
	usc_status st;

	if (!order || !first || !count) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = usc__topo_order(c, order, err);
	if (st != USC_OK)
		goto done;
	/* Slots: scalar instructions get one each; leaves list tuples. */
	leaf = usc__calloc(n * 4 + 1, sizeof *leaf);
	fn->steps = usc__calloc(n ? n : 1, sizeof *fn->steps);
	fn->param_slot = usc__calloc(n ? n : 1, sizeof *fn->param_slot);
	fn->slots = usc__calloc(n ? n : 1, ev->dom->value_size);
	if (!leaf || !fn->steps || !fn->param_slot || !fn->slots) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	fn->nslots = n;
	if (ev->dom->init)
		ev->dom->init(ev->dstate, fn->slots, n);
	for (i = 0; i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];
		size_t me = in->index;
		struct usc__sfn_step *s = &fn->steps[fn->nsteps];

		if (in->opcode == USC_HLO_OP_TUPLE) {
			first[me] = nleaf;
			for (k = 0; k < in->operand_count; k++) {
				size_t o = in->operands[k]->index, j;

				for (j = 0; j < count[o]; j++) {
					if (nleaf >= n * 4) {
						st = usc__eval_fail(
							err, USC_EUNSUPPORTED,
							in, "tuple too large in "
							    "a scalar "
							    "computation");
						goto done;
					}
					leaf[nleaf++] = leaf[first[o] + j];
				}
			}
			count[me] = nleaf - first[me];
			continue;
		}
		if (in->opcode == USC_HLO_OP_GET_TUPLE_ELEMENT) {
			int64_t idx;
			size_t o = in->operands[0]->index;

			if (!usc__attr_int(in, "index", &idx) || idx < 0 ||
			    (size_t)idx >= count[o] || !is_scalar(&in->shape)) {
				st = usc__eval_fail(err, USC_EUNSUPPORTED, in,
						    "get-tuple-element in a "
						    "scalar computation");
				goto done;
			}
			first[me] = first[o] + (size_t)idx;
			count[me] = 1;
			continue;
		}
		if (!is_scalar(&in->shape)) {
			st = usc__eval_fail(err, USC_EUNSUPPORTED, in,
					    "non-scalar %s in computation "
					    "'%s' applied per element",
					    usc_hlo_opcode_name(in->opcode),
					    c->name);
			goto done;
		}
		if (nleaf >= n * 4) {
			st = usc__eval_fail(err, USC_EINTERNAL, in,
					    "slot overflow");
			goto done;
		}
		first[me] = nleaf;
		count[me] = 1;
		leaf[nleaf++] = next_slot;
		switch (in->opcode) {
		case USC_HLO_OP_PARAMETER:
			if (in->parameter_number < 0 ||
			    (size_t)in->parameter_number >= n) {
				st = usc__eval_fail(err, USC_EINVAL, in,
						    "bad parameter number");
				goto done;
			}
			fn->param_slot[in->parameter_number] = next_slot;
			if ((size_t)in->parameter_number + 1 > fn->nparams)
				fn->nparams = (size_t)in->parameter_number + 1;
			break;
		case USC_HLO_OP_CONSTANT: {
			const usc_hlo_literal *lit = in->literal;

			if (!lit || lit->kind != USC_HLO_LITERAL_ARRAY ||
			    lit->count != 1) {
				st = usc__eval_fail(err, USC_EUNSUPPORTED, in,
						    "constant without a "
						    "scalar value");
				goto done;
			}
			st = ev->dom->constant(ev->dstate, in->shape.dtype,
					       &lit->elems[0],
					       SLOT(ev, fn, next_slot), err);
			if (st != USC_OK)
				goto done;
			break;
		}
		case USC_HLO_OP_RESHAPE:
		case USC_HLO_OP_BITCAST:
		case USC_HLO_OP_COPY:
		case USC_HLO_OP_BROADCAST:
			s->kind = STEP_COPY;
			s->out = next_slot;
			s->args[0] = leaf[first[in->operands[0]->index]];
			fn->nsteps++;
			break;
		default:
			if (usc_hlo_opcode_category(in->opcode) !=
				    USC_HLO_CAT_ELEMENTWISE ||
			    in->opcode == USC_HLO_OP_MAP ||
			    !usc_eval_supports_opcode(in->opcode)) {
				st = usc__fail(err, USC_EUNSUPPORTED,
					       "unsupported op %s at %u:%u "
					       "(instruction '%s')",
					       usc_hlo_opcode_name(in->opcode),
					       in->loc.line, in->loc.column,
					       in->name);
				goto done;
			}
			st = usc__build_op(in, &s->op, err);
			if (st != USC_OK)
				goto done;
			s->kind = STEP_APPLY;
			s->out = next_slot;
			for (k = 0; k < in->operand_count; k++)
				s->args[k] =
					leaf[first[in->operands[k]->index]];
			fn->nsteps++;
			break;
		}
		next_slot++;
	}
	if (!c->root) {
		st = usc__fail(err, USC_EINVAL, "computation '%s' has no root",
			       c->name);
		goto done;
	}
	fn->nresults = count[c->root->index];
	fn->results = usc__calloc(fn->nresults ? fn->nresults : 1,
				  sizeof *fn->results);
	if (!fn->results) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k < fn->nresults; k++)
		fn->results[k] = leaf[first[c->root->index] + k];
done:
	usc__free(order);
	usc__free(first);
	usc__free(count);
	usc__free(leaf);
	return st;
}

usc_status usc__sfn_get(usc_eval *ev, const usc_hlo_computation *c,
			usc__sfn **out, usc_error *err)
{
	usc__sfn *fn;
	usc_status st;

	for (fn = ev->sfns; fn; fn = fn->next)
		if (fn->comp == c) {
			*out = fn;
			return USC_OK;
		}
	fn = usc__calloc(1, sizeof *fn);
	if (!fn)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	fn->comp = c;
	st = compile(ev, c, fn, err);
	if (st != USC_OK) {
		sfn_free(ev, fn);
		return st;
	}
	fn->next = ev->sfns;
	ev->sfns = fn;
	*out = fn;
	return USC_OK;
}

usc_status usc__sfn_call(usc_eval *ev, usc__sfn *fn, const void *const *args,
			 void *const *results, usc_error *err)
{
	size_t i, k;
	usc_status st;

	for (i = 0; i < fn->nparams; i++)
		usc__copy_values(ev, SLOT(ev, fn, fn->param_slot[i]), args[i],
				 1);
	for (i = 0; i < fn->nsteps; i++) {
		const struct usc__sfn_step *s = &fn->steps[i];

		if (s->kind == STEP_COPY) {
			usc__copy_values(ev, SLOT(ev, fn, s->out),
					 SLOT(ev, fn, s->args[0]), 1);
			continue;
		}
		{
			const void *a[USC__DOM_MAX_ARGS];

			for (k = 0; k < s->op.nargs; k++)
				a[k] = SLOT(ev, fn, s->args[k]);
			st = ev->dom->apply(ev->dstate, &s->op, 1,
					    SLOT(ev, fn, s->out), a, 0, err);
			if (st != USC_OK)
				return st;
		}
	}
	for (i = 0; i < fn->nresults; i++)
		usc__copy_values(ev, results[i], SLOT(ev, fn, fn->results[i]),
				 1);
	return USC_OK;
}
