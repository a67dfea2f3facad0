/*
 * Control flow: while and conditional, the trace of the reference's
 * decisions, and the shadow reference run that other domains replay
 * (control.h states the rule).  Sort and TopK are in sort.c; call and
 * fusion are walk.c's.
 */
#include "control.h"

#include <inttypes.h>
#include <string.h>

#include "ulpscope/hlo_kernel.h"
#include "ulpscope/limits.h"

#include "eval_values.h"

/* The decisions of one instruction, in the order of its executions. */
typedef struct ctl_rec {
	const usc_hlo_instr *in;
	size_t n, cap, next; /* values held, allocated, read by a replay */
	int64_t *v;
} ctl_rec;

typedef struct usc__ctl {
	size_t nrec;
	ctl_rec *rec;
	/* Not the reference domain: the shadow whose trace is replayed. */
	usc_eval *shadow;
	/* The device's outputs unstable sorts follow (sort.c); not owned. */
	const usc_tensor *const *device;
	size_t ndevice;
} usc__ctl;

static bool is_reference(const usc_eval *ev)
{
	return ev->opts.domain == USC_DOMAIN_REFERENCE;
}

static usc_status ctl_get(usc_eval *ev, usc_error *err)
{
	if (ev->ctl)
		return USC_OK;
	ev->ctl = usc__calloc(1, sizeof *ev->ctl);
	return ev->ctl ? USC_OK
		       : usc__fail(err, USC_ENOMEM, "out of memory");
}

void usc__ctl_free(usc_eval *ev)
{
	if (!ev->ctl)
		return;
	for (size_t i = 0; i < ev->ctl->nrec; i++)
		usc__free(ev->ctl->rec[i].v);
	usc__free(ev->ctl->rec);
	usc_eval_destroy(ev->ctl->shadow);
	usc__free(ev->ctl);
	ev->ctl = NULL;
}

/* The record of an instruction in the trace that ev writes or reads. */
static usc_status rec_of(usc_eval *ev, const usc_hlo_instr *in, bool create,
			 ctl_rec **out, usc_error *err)
{
	usc__ctl *t = ev->ctl->shadow ? ev->ctl->shadow->ctl : ev->ctl;
	ctl_rec *r;

	for (size_t i = 0; t && i < t->nrec; i++)
		if (t->rec[i].in == in) {
			*out = &t->rec[i];
			return USC_OK;
		}
	if (!create || !t)
		return usc__eval_fail(err, USC_EINTERNAL, in,
				      "the reference run did not evaluate "
				      "this instruction, so its control path "
				      "is unknown");
	r = usc__reallocarray(t->rec, t->nrec + 1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	t->rec = r;
	memset(&r[t->nrec], 0, sizeof *r);
	r[t->nrec].in = in;
	*out = &r[t->nrec++];
	return USC_OK;
}

/* Space for n more values at the end of a record. */
static usc_status rec_grow(ctl_rec *r, size_t n, int64_t **at,
			   usc_error *err)
{
	if (r->n + n > r->cap) {
		size_t cap = r->cap ? r->cap : 16;
		int64_t *v;

		while (cap < r->n + n)
			cap *= 2;
		v = usc__reallocarray(r->v, cap, sizeof *v);
		if (!v)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		r->v = v;
		r->cap = cap;
	}
	*at = r->v + r->n;
	r->n += n;
	return USC_OK;
}

/* The next n recorded values of a replay. */
static usc_status rec_take(ctl_rec *r, size_t n, int64_t **at,
			   usc_error *err)
{
	if (r->next + n > r->n)
		return usc__eval_fail(err, USC_EINTERNAL, r->in,
				      "evaluated more often than in the "
				      "reference run, so its control path is "
				      "unknown");
	*at = r->v + r->next;
	r->next += n;
	return USC_OK;
}

usc_status usc__ctl_prepare(usc_eval *ev, usc_error *err)
{
	usc__ctl *t = ev->ctl;
	usc_eval_options o;
	usc_status st;

	if (!t)
		return USC_OK;
	if (is_reference(ev)) {
		for (size_t i = 0; i < t->nrec; i++)
			t->rec[i].n = t->rec[i].next = 0;
		return USC_OK;
	}
	if (!t->shadow) {
		o = usc_eval_options_default();
		o.reduce_order = ev->opts.reduce_order;
		o.tile_elements = ev->opts.tile_elements;
		st = usc_eval_create_computation(ev->comp, &o, &t->shadow,
						 err);
		if (st != USC_OK)
			return st;
	}
	/* The shadow records the order the run follows. */
	if (t->shadow->ctl) {
		t->shadow->ctl->device = t->device;
		t->shadow->ctl->ndevice = t->ndevice;
	}
	for (size_t i = 0; i < ev->nparams; i++) {
		st = usc_eval_bind(t->shadow, i, ev->bound[i], err);
		if (st != USC_OK)
			return st;
	}
	/* The shadow evaluates what the run keeps, dead or not. */
	for (size_t i = 0; i < ev->nkeep; i++) {
		st = usc__eval_keep(t->shadow, ev->keep[i], err);
		if (st != USC_OK)
			return st;
	}
	return usc_eval_run(t->shadow, err);
}

/* ------------------------------------------------------------ checks */

/* The one computation of attribute name, or NULL. */
static const usc_hlo_computation *comp_attr(const usc_hlo_instr *in,
					    const char *name)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	return a && a->kind == USC_HLO_ATTR_COMPUTATIONS && a->count == 1
		       ? a->comps[0]
		       : NULL;
}

/* Shapes that hold the same values: layouts aside. */
static bool same_values(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == USC_HLO_SHAPE_TUPLE) {
		if (a->tuple_count != b->tuple_count)
			return false;
		for (size_t i = 0; i < a->tuple_count; i++)
			if (!same_values(&a->tuple[i], &b->tuple[i]))
				return false;
		return true;
	}
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (size_t d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/* The parameter instruction number k of c, or NULL. */
static const usc_hlo_instr *param_of(const usc_hlo_computation *c, int64_t k)
{
	for (size_t i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number == k)
			return c->instrs[i];
	return NULL;
}

static size_t param_count(const usc_hlo_computation *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->instr_count; i++)
		n += c->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	return n;
}

/*
 * That computation c (the `what` of in) takes one parameter of shape
 * `arg` and returns `ret` (NULL: a scalar pred).
 */
static usc_status check_callee(const usc_hlo_instr *in, const char *what,
			       const usc_hlo_computation *c,
			       const usc_hlo_shape *arg,
			       const usc_hlo_shape *ret, usc_error *err)
{
	char a[256], b[256];
	const usc_hlo_instr *p = param_of(c, 0);
	const usc_hlo_shape *r = c->root ? &c->root->shape : NULL;

	if (!p || param_count(c) != 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "%s '%s' takes %zu parameters; it must "
				      "take one, of shape %s",
				      what, c->name, param_count(c),
				      usc_hlo_shape_format(arg, a, sizeof a));
	if (!same_values(&p->shape, arg))
		return usc__eval_fail(err, USC_EINVAL, in,
				      "%s '%s' takes %s, but %s is passed",
				      what, c->name,
				      usc_hlo_shape_format(&p->shape, a,
							   sizeof a),
				      usc_hlo_shape_format(arg, b, sizeof b));
	if (!r)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "%s '%s' has no root", what, c->name);
	if (ret ? !same_values(r, ret)
		: r->kind != USC_HLO_SHAPE_ARRAY || r->dtype != USC_PRED ||
			  r->rank != 0)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "%s '%s' returns %s; it must return %s",
				      what, c->name,
				      usc_hlo_shape_format(r, a, sizeof a),
				      ret ? usc_hlo_shape_format(ret, b,
								 sizeof b)
					  : "pred[]");
	return USC_OK;
}

/*
 * The branches of a conditional: branch_computations={...}, or
 * true_computation and false_computation (branch 0 is the true one).
 */
static size_t branches(const usc_hlo_instr *in,
		       const usc_hlo_computation **b, size_t max)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "branch_computations");

	if (a && a->kind == USC_HLO_ATTR_COMPUTATIONS) {
		for (size_t i = 0; i < a->count && i < max; i++)
			b[i] = a->comps[i];
		return a->count;
	}
	b[0] = comp_attr(in, "true_computation");
	b[1] = comp_attr(in, "false_computation");
	return b[0] && b[1] ? 2 : 0;
}

#define MAX_BRANCHES 1024

static usc_status check_while(const usc_hlo_instr *in, usc_error *err)
{
	const usc_hlo_computation *cond = comp_attr(in, "condition");
	const usc_hlo_computation *body = comp_attr(in, "body");
	usc_status st;

	if (!cond || !body || in->operand_count != 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "while needs one operand, a condition= "
				      "and a body= computation");
	if (!same_values(&in->operands[0]->shape, &in->shape)) {
		char a[256], b[256];

		return usc__eval_fail(
			err, USC_EINVAL, in,
			"while has shape %s, but its operand %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a),
			usc_hlo_shape_format(&in->operands[0]->shape, b,
					     sizeof b));
	}
	st = check_callee(in, "while body", body, &in->shape, &in->shape,
			  err);
	if (st == USC_OK)
		st = check_callee(in, "while condition", cond, &in->shape,
				  NULL, err);
	return st;
}

static usc_status check_conditional(const usc_hlo_instr *in, usc_error *err)
{
	const usc_hlo_computation *b[MAX_BRANCHES];
	size_t n = branches(in, b, MAX_BRANCHES);
	const usc_hlo_shape *p;
	char what[64];
	usc_status st;

	if (n == 0 || n > MAX_BRANCHES)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "conditional needs branch_computations "
				      "(1 to %d) or true_computation and "
				      "false_computation",
				      MAX_BRANCHES);
	if (in->operand_count != n + 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "conditional with %zu branches has %zu "
				      "operands; it needs %zu (the branch "
				      "index, then one per branch)",
				      n, in->operand_count, n + 1);
	p = &in->operands[0]->shape;
	if (p->kind != USC_HLO_SHAPE_ARRAY || p->rank != 0 ||
	    (p->dtype != USC_S32 && p->dtype != USC_PRED) ||
	    (p->dtype == USC_PRED) != !usc_hlo_instr_attr(
					      in, "branch_computations"))
		return usc__eval_fail(err, USC_EINVAL, in,
				      "conditional's operand 0 must be an "
				      "s32[] branch index (branch_computations) "
				      "or a pred[] (true_computation, "
				      "false_computation)");
	for (size_t k = 0; k < n; k++) {
		snprintf(what, sizeof what, "branch %zu", k);
		st = check_callee(in, what, b[k], &in->operands[k + 1]->shape,
				  &in->shape, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

usc_status usc__ctl_check(usc_eval *ev, const usc_hlo_instr *in,
			  usc_error *err)
{
	usc_status st = ctl_get(ev, err);

	if (st != USC_OK)
		return st;
	switch (in->opcode) {
	case USC_HLO_OP_WHILE:
		return check_while(in, err);
	case USC_HLO_OP_CONDITIONAL:
		return check_conditional(in, err);
	case USC_HLO_OP_SORT:
	case USC_HLO_OP_CUSTOM_CALL: {
		usc_dtype types[2 * USC__DOM_MAX_ARGS + 2];
		size_t n = in->operand_count;
		const usc_hlo_computation *cmp = comp_attr(
			in, in->opcode == USC_HLO_OP_SORT
				    ? "to_apply"
				    : "called_computations");
		const usc_hlo_attr *t =
			usc_hlo_instr_attr(in, "custom_call_target");

		if (in->opcode == USC_HLO_OP_CUSTOM_CALL &&
		    (!t || !t->text || strcmp(t->text, "TopK") != 0))
			return usc__fail(
				err, USC_EUNSUPPORTED,
				"unsupported op custom-call at %u:%u "
				"(instruction '%s'): its target '%s' is not "
				"XLA's TopK, the one custom call the "
				"evaluator runs",
				in->loc.line, in->loc.column, in->name,
				t && t->text ? t->text : "");
		if (!cmp)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "%s needs one comparator "
					      "computation",
					      usc_hlo_opcode_name(in->opcode));
		if (in->opcode == USC_HLO_OP_CUSTOM_CALL) {
			/* TopK compares (value, index) pairs. */
			if (n != 1 ||
			    in->operands[0]->shape.kind !=
				    USC_HLO_SHAPE_ARRAY)
				return usc__eval_fail(err, USC_EINVAL, in,
						      "TopK takes one array "
						      "operand");
			types[0] = in->operands[0]->shape.dtype;
			types[1] = USC_S32;
			n = 2;
		} else {
			if (n == 0 || n > USC__ARRAY_LEN(types))
				return usc__eval_fail(err, USC_EUNSUPPORTED,
						      in,
						      "sort with %zu operands",
						      n);
			for (size_t k = 0; k < n; k++)
				types[k] = in->operands[k]->shape.dtype;
		}
		return usc__sort_check(ev, in, cmp, types, n, err);
	}
	default:
		return usc__eval_fail(err, USC_EINTERNAL, in,
				      "not a control-flow op");
	}
}

/* ------------------------------------------------------- evaluation */

/*
 * The predicate of a pred value in this run's domain: 1 true, 0 false,
 * -1 when the domain cannot say (an interval domain's is_true answers
 * "surely true" only, so false there reads as undecided).
 */
static int domain_pred(usc_eval *ev, const usc__ebuf *b)
{
	bool t = ev->dom->is_true(ev->dstate, b->values);

	if (is_reference(ev))
		return t;
	return t ? 1 : -1;
}

static usc_status eval_while(usc_eval *ev, const usc_hlo_instr *in,
			     const usc__evalue *ops, usc__evalue *res,
			     usc_error *err)
{
	const usc_hlo_computation *cond = comp_attr(in, "condition");
	const usc_hlo_computation *body = comp_attr(in, "body");
	uint64_t max = usc_limits_get().max_iterations;
	usc__evalue state = {0, NULL}, next = {0, NULL}, c = {0, NULL};
	bool record = is_reference(ev);
	int64_t trip = 0, *slot = NULL;
	ctl_rec *r;
	usc_status st;

	st = rec_of(ev, in, record, &r, err);
	if (st == USC_OK)
		st = record ? rec_grow(r, 1, &slot, err)
			    : rec_take(r, 1, &slot, err);
	if (st == USC_OK && !record)
		trip = *slot;
	if (st == USC_OK)
		st = usc__evalue_share(&state, ops[0].leaves, ops[0].n, err);
	for (int64_t i = 0; st == USC_OK; i++) {
		bool go;
		int own;

		st = usc__eval_computation(ev, cond, &state, 1, &c, err);
		if (st != USC_OK)
			break;
		own = domain_pred(ev, c.leaves[0]);
		usc__evalue_clear(ev, &c);
		go = record ? own == 1 : i < trip;
		if (!record && own == 1 && !go) {
			st = usc__eval_fail(
				err, USC_EUNSUPPORTED, in,
				"control flow differs: in the %s domain the "
				"condition '%s' holds after %" PRId64
				" iterations, where the reference's loop "
				"ends",
				ev->dom->name, cond->name, i);
			break;
		}
		if (!go) {
			trip = i;
			break;
		}
		if ((uint64_t)i >= max) {
			st = usc__eval_fail(
				err, USC_ERANGE, in,
				"while loop still running after %" PRIu64
				" iterations (its condition '%s' still "
				"holds); the limit is --max-iterations N "
				"(docs/limits.md)",
				max, cond->name);
			break;
		}
		st = usc__eval_computation(ev, body, &state, 1, &next, err);
		usc__evalue_clear(ev, &state);
		state = next;
		next.n = 0;
		next.leaves = NULL;
	}
	if (st == USC_OK && record)
		*slot = trip;
	if (st == USC_OK) {
		*res = state;
		return USC_OK;
	}
	usc__evalue_clear(ev, &state);
	return st;
}

static usc_status eval_conditional(usc_eval *ev, const usc_hlo_instr *in,
				   const usc__evalue *ops, usc__evalue *res,
				   usc_error *err)
{
	const usc_hlo_computation *b[MAX_BRANCHES];
	size_t n = branches(in, b, MAX_BRANCHES);
	const usc__ebuf *p = ops[0].leaves[0];
	bool record = is_reference(ev);
	int64_t own = -1, pick, *slot = NULL;
	ctl_rec *r;
	usc_status st;

	if (p->dtype == USC_PRED) {
		int t = domain_pred(ev, p);

		/* true_computation is branch 0. */
		own = t < 0 ? -1 : t ? 0 : 1;
	} else {
		usc_error e2;

		/* Out of range picks the last branch (XLA's semantics). */
		if (ev->dom->to_index(ev->dstate, p->dtype, p->values, &own,
				      &e2) != USC_OK)
			own = -1;
		else if (own < 0 || (uint64_t)own >= n)
			own = (int64_t)n - 1;
	}
	st = rec_of(ev, in, record, &r, err);
	if (st != USC_OK)
		return st;
	if (record) {
		if (own < 0)
			return usc__eval_fail(err, USC_EINTERNAL, in,
					      "the reference cannot read the "
					      "branch index");
		st = rec_grow(r, 1, &slot, err);
		if (st != USC_OK)
			return st;
		*slot = own;
		pick = own;
	} else {
		st = rec_take(r, 1, &slot, err);
		if (st != USC_OK)
			return st;
		pick = *slot;
		if (own >= 0 && own != pick)
			return usc__eval_fail(
				err, USC_EUNSUPPORTED, in,
				"control flow differs: the %s domain takes "
				"branch %" PRId64 ", the reference branch "
				"%" PRId64,
				ev->dom->name, own, pick);
	}
	return usc__eval_computation(ev, b[pick], &ops[pick + 1], 1, res,
				     err);
}

static usc_status eval_sorting(usc_eval *ev, const usc_hlo_instr *in,
			       const usc__evalue *ops, usc__evalue *res,
			       usc_error *err)
{
	bool record = is_reference(ev);
	size_t n = usc__sort_trace_len(in);
	int64_t *order = NULL;
	ctl_rec *r;
	usc_status st;

	st = rec_of(ev, in, record, &r, err);
	if (st == USC_OK)
		st = record ? rec_grow(r, n, &order, err)
			    : rec_take(r, n, &order, err);
	if (st != USC_OK)
		return st;
	if (in->opcode == USC_HLO_OP_SORT)
		return usc__eval_sort(ev, in, ops, res, record, order, err);
	return usc__eval_topk(ev, in, ops, res, record, order, err);
}

const usc_tensor *const *usc__ctl_device(const usc_eval *ev, size_t *n)
{
	*n = ev->ctl ? ev->ctl->ndevice : 0;
	return ev->ctl ? ev->ctl->device : NULL;
}

usc_status usc__eval_follow_device(usc_eval *ev,
				   const usc_tensor *const *device, size_t n,
				   bool *follows)
{
	const usc_hlo_computation *c = ev->comp;

	*follows = false;
	if (!ev->ctl)
		return USC_OK;
	ev->ctl->device = n ? device : NULL;
	ev->ctl->ndevice = device ? n : 0;
	for (size_t i = 0; device && n && i < c->instr_count; i++)
		*follows = *follows || usc__sort_follows(ev, c->instrs[i]);
	return USC_OK;
}

usc_status usc__ctl_eval(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__evalue *res,
			 usc_error *err)
{
	if (!ev->ctl)
		return usc__eval_fail(err, USC_EINTERNAL, in,
				      "control flow not checked");
	switch (in->opcode) {
	case USC_HLO_OP_WHILE:
		return eval_while(ev, in, ops, res, err);
	case USC_HLO_OP_CONDITIONAL:
		return eval_conditional(ev, in, ops, res, err);
	case USC_HLO_OP_SORT:
	case USC_HLO_OP_CUSTOM_CALL:
		return eval_sorting(ev, in, ops, res, err);
	default:
		return usc__eval_fail(err, USC_EINTERNAL, in,
				      "not a control-flow op");
	}
}
