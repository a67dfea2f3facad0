/*
 * Re-evaluation on a change's downstream cone (cone.h, docs/evaluator.md
 * "Cones"): the base's kept values, the map of a changed kernel onto the
 * base, and the evaluation of one computation that takes what it can from
 * the base.  walk.c hands a computation here when its evaluator has a
 * cone (usc_eval.cone), and the run is walk.c's own loop (usc__eval_walk)
 * with the hooks below: what to take and what to evaluate, the taking,
 * and the recording of the base's values.
 */
#include "internal.h"
#include "eval/cone.h"
#include "eval/control.h"
#include "eval/eval_internal.h"

#include <string.h>

/* What the base did with one instruction. */
enum {
	SLOT_NONE = 0, /* not evaluated */
	SLOT_KEPT,     /* evaluated once, value kept */
	SLOT_LEFT,     /* evaluated once, left out for the budget */
	SLOT_MULTI     /* evaluated more than once: no one value */
};

typedef struct slot {
	usc__evalue v;
	size_t bytes;
	unsigned char state;
} slot;

struct usc__cone {
	usc_eval *base;
	const usc_hlo_module *module;
	size_t ncomp;
	slot **slots; /* by computation index, then instruction index */
	size_t budget, used;
	bool over;
	bool disabled; /* control flow: nothing kept, nothing served */
};

/*
 * An evaluator's link to a cone: recording (the base's own run) or
 * serving (an attached evaluator), with base_of giving, by computation
 * and instruction index of the evaluator's module, the base instruction
 * an unchanged instruction stands for (NULL: changed or unknown).
 */
struct usc__cone_map {
	usc__cone *cone;
	bool record;
	size_t ncomp;
	const usc_hlo_instr ***base_of;
	size_t evaluated, reused;
};

/* ------------------------------------------------------ the store */

static slot *slot_of(usc__cone *k, const usc_hlo_instr *b)
{
	const usc_hlo_computation *c = b->parent;

	if (!c || c->parent != k->module || c->index >= k->ncomp ||
	    !k->slots[c->index] || b->index >= c->instr_count)
		return NULL;
	return &k->slots[c->index][b->index];
}

/* Keeps the base's value of in, within the budget. */
static usc_status record(usc_eval *ev, usc__cone *k, const usc_hlo_instr *in,
			 const usc__evalue *v, usc_error *err)
{
	slot *s = slot_of(k, in);
	size_t bytes = 0;
	usc_status st;

	if (!s)
		return USC_OK;
	switch (s->state) {
	case SLOT_NONE:
		for (size_t i = 0; i < v->n; i++)
			bytes += v->leaves[i]->len * ev->dom->value_size;
		if (bytes > k->budget - k->used) {
			s->state = SLOT_LEFT;
			k->over = true;
			return USC_OK;
		}
		st = usc__evalue_share(&s->v, v->leaves, v->n, err);
		if (st != USC_OK)
			return st;
		s->bytes = bytes;
		k->used += bytes;
		s->state = SLOT_KEPT;
		return USC_OK;
	case SLOT_KEPT:
		usc__evalue_clear(ev, &s->v);
		k->used -= s->bytes;
		s->bytes = 0;
		s->state = SLOT_MULTI;
		return USC_OK;
	default:
		s->state = SLOT_MULTI;
		return USC_OK;
	}
}

/* The base instruction that x stands for, or NULL (changed). */
static const usc_hlo_instr *mapped(const struct usc__cone_map *map,
				   const usc_hlo_instr *x)
{
	const usc_hlo_computation *c = x->parent;

	if (!map->base_of || !c || c->index >= map->ncomp ||
	    !map->base_of[c->index])
		return NULL;
	return map->base_of[c->index][x->index];
}

/* The base's value of the instruction that x stands for, or NULL. */
static const usc__evalue *lookup(const struct usc__cone_map *map,
				 const usc_hlo_instr *x)
{
	const usc_hlo_instr *b = mapped(map, x);
	slot *s = b ? slot_of(map->cone, b) : NULL;

	return s && s->state == SLOT_KEPT ? &s->v : NULL;
}

/* ------------------------------------------- one computation's run */

/* A run of one computation through the walk (usc__eval_walk's hooks). */
typedef struct cone_run {
	struct usc__cone_map *map;
	/* By instruction index: the base's value to take, or NULL. */
	const usc__evalue **from;
} cone_run;

/*
 * From the root back: a value the base has is taken; any other that is
 * needed is evaluated, and so is every changed instruction that has a
 * user (a whole run evaluates it, even when the user is dead), so that a
 * run fails where a whole run fails.  An instruction the base has makes
 * its operands unneeded.
 */
static usc_status cone_plan(void *ctx, const usc_hlo_computation *c,
			    const size_t *order, size_t *uses,
			    unsigned char *todo, usc_error *err)
{
	cone_run *r = ctx;
	struct usc__cone_map *map = r->map;
	const usc__evalue **from = r->from;
	size_t n = c->instr_count;

	(void)err;
	for (size_t i = 0; i < n; i++)
		from[i] = map->record ? NULL : lookup(map, c->instrs[i]);
	todo[c->root->index] = from[c->root->index] ? USC__WALK_TAKE
						    : USC__WALK_EVAL;
	for (size_t j = n; j-- > 0;) {
		const usc_hlo_instr *in = c->instrs[order[j]];
		size_t i = in->index;

		if (todo[i] == USC__WALK_SKIP && !from[i] && uses[i] > 0 &&
		    (map->record || !mapped(map, in)))
			todo[i] = USC__WALK_EVAL;
		if (todo[i] != USC__WALK_EVAL)
			continue;
		for (size_t k = 0; k < in->operand_count; k++) {
			size_t o = in->operands[k]->index;

			if (todo[o] == USC__WALK_SKIP)
				todo[o] = from[o] ? USC__WALK_TAKE
						  : USC__WALK_EVAL;
		}
	}
	/* Only evaluated instructions hold their operands. */
	memset(uses, 0, n * sizeof *uses);
	for (size_t i = 0; i < n; i++)
		if (todo[i] == USC__WALK_EVAL)
			for (size_t k = 0; k < c->instrs[i]->operand_count;
			     k++)
				uses[c->instrs[i]->operands[k]->index]++;
	return USC_OK;
}

static usc_status cone_take(void *ctx, const usc_hlo_instr *in,
			    usc__evalue *into, usc_error *err)
{
	cone_run *r = ctx;
	const usc__evalue *v = r->from[in->index];
	usc_status st = usc__evalue_share(into, v->leaves, v->n, err);

	if (st == USC_OK)
		r->map->reused++;
	return st;
}

static usc_status cone_evaluated(void *ctx, usc_eval *ev,
				 const usc_hlo_instr *in, const usc__evalue *v,
				 usc_error *err)
{
	cone_run *r = ctx;
	usc_status st = USC_OK;

	if (r->map->record)
		st = record(ev, r->map->cone, in, v, err);
	if (st == USC_OK)
		r->map->evaluated++;
	return st;
}

usc_status usc__cone_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const usc__evalue *args, size_t nargs,
				 usc__evalue *result, usc_error *err)
{
	size_t n = c->instr_count;
	cone_run r = {ev->cone, usc__calloc(n ? n : 1, sizeof *r.from)};
	const usc__walk_hooks hooks = {cone_plan, cone_take, cone_evaluated,
				       &r};
	usc_status st;

	if (!r.from)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__eval_walk(ev, c, args, nargs, &hooks, result, err);
	usc__free(r.from);
	return st;
}

/* ----------------------------------------------------------- the base */

static void map_free(struct usc__cone_map *map)
{
	if (!map)
		return;
	for (size_t i = 0; map->base_of && i < map->ncomp; i++)
		usc__free(map->base_of[i]);
	usc__free(map->base_of);
	usc__free(map);
}

void usc__cone_detach(usc_eval *ev)
{
	map_free(ev->cone);
	ev->cone = NULL;
}

void usc__cone_counts(const usc_eval *ev, size_t *evaluated, size_t *reused)
{
	*evaluated = ev && ev->cone ? ev->cone->evaluated : 0;
	*reused = ev && ev->cone ? ev->cone->reused : 0;
}

usc_status usc__cone_create(const usc_hlo_computation *c,
			    const usc_eval_options *o,
			    const usc_tensor *const *inputs, size_t n,
			    size_t budget, usc__cone **out, usc_error *err)
{
	usc_eval_options eo = *o;
	usc__cone *k;
	usc_status st;

	*out = NULL;
	k = usc__calloc(1, sizeof *k);
	if (!k)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	k->module = c->parent;
	k->budget = budget ? budget : USC__CONE_BUDGET_DEFAULT;
	/* Every value exists whole: tiles would keep none. */
	eo.tile_elements = USC_EVAL_NO_TILES;
	st = usc_eval_create_computation(c, &eo, &k->base, err);
	if (st == USC_OK && usc_eval_param_count(k->base) != n)
		st = usc__fail(err, USC_EINVAL,
			       "the kernel takes %zu parameter(s); %zu "
			       "input(s) given",
			       usc_eval_param_count(k->base), n);
	if (st == USC_OK)
		st = usc_eval_bind_all(k->base, inputs, n, err);
	if (st != USC_OK)
		goto fail;
	k->disabled = k->base->ctl != NULL || !k->module;
	if (!k->disabled) {
		struct usc__cone_map *map;

		k->ncomp = k->module->computation_count;
		k->slots = usc__calloc(k->ncomp ? k->ncomp : 1,
				       sizeof *k->slots);
		map = usc__calloc(1, sizeof *map);
		if (!k->slots || !map) {
			usc__free(map);
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto fail;
		}
		map->cone = k;
		map->record = true;
		k->base->cone = map;
		for (size_t i = 0; i < k->ncomp; i++) {
			size_t ni = k->module->computations[i]->instr_count;

			k->slots[i] = usc__calloc(ni ? ni : 1, sizeof **k->slots);
			if (!k->slots[i]) {
				st = usc__fail(err, USC_ENOMEM,
					       "out of memory");
				goto fail;
			}
		}
	}
	st = usc_eval_run(k->base, err);
	if (st != USC_OK)
		goto fail;
	*out = k;
	return USC_OK;
fail:
	usc__cone_destroy(k);
	return st;
}

usc_eval *usc__cone_base(const usc__cone *k)
{
	return k ? k->base : NULL;
}

void usc__cone_kept(const usc__cone *k, size_t *bytes, bool *over_budget)
{
	*bytes = k ? k->used : 0;
	*over_budget = k && k->over;
}

void usc__cone_destroy(usc__cone *k)
{
	if (!k)
		return;
	for (size_t i = 0; k->slots && i < k->ncomp; i++) {
		size_t ni = k->module->computations[i]->instr_count;

		for (size_t j = 0; k->slots[i] && j < ni; j++)
			usc__evalue_clear(k->base, &k->slots[i][j].v);
		usc__free(k->slots[i]);
	}
	usc__free(k->slots);
	usc_eval_destroy(k->base);
	usc__free(k);
}

/* ------------------------------------------------------ attaching */

/* The walk that decides which instructions are unchanged. */
typedef struct attach {
	const usc__cone_match *m;
	const usc_hlo_module *mod;
	unsigned char *same;  /* by computation: 0 unknown, 1 same, 2 not */
	unsigned char *seen;  /* by computation: reached from the entry */
	bool **pok;           /* by computation: parameter k unchanged */
	size_t *npok;
	const usc_hlo_computation **rpo; /* callers before callees */
	size_t nrpo;
	const usc_hlo_instr ***base_of;
} attach;

/*
 * Whether c computes the same function as its base counterpart: every
 * instruction written the same, and every computation it calls the same.
 * Calls nest at most USC__EVAL_NESTING_MAX deep (checked when the
 * evaluator was created), so the recursion is bounded.
 */
static bool fn_same(attach *a, const usc_hlo_computation *c)
{
	const usc_hlo_computation *cb;
	bool ok;

	if (a->same[c->index])
		return a->same[c->index] == 1;
	a->same[c->index] = 2;
	cb = a->m->comp(a->m->ctx, c);
	ok = cb && cb->instr_count == c->instr_count;
	for (size_t i = 0; ok && i < c->instr_count; i++) {
		const usc_hlo_instr *x = c->instrs[i];
		const usc_hlo_instr *b = a->m->instr(a->m->ctx, x);

		ok = b && b->parent == cb;
		for (size_t k = 0; ok && k < x->called_count; k++)
			ok = fn_same(a, x->called[k]);
	}
	a->same[c->index] = ok ? 1 : 2;
	return ok;
}

/* Reverse post-order of the computations reached from c. */
static void order_calls(attach *a, const usc_hlo_computation *c)
{
	if (a->seen[c->index])
		return;
	a->seen[c->index] = 1;
	for (size_t i = 0; i < c->instr_count; i++)
		for (size_t k = 0; k < c->instrs[i]->called_count; k++)
			order_calls(a, c->instrs[i]->called[k]);
	a->rpo[a->nrpo++] = c;
}

/* Marks which instructions of c are unchanged (callers already done). */
static usc_status mark(attach *a, const usc_hlo_computation *c,
		       usc_error *err)
{
	size_t n = c->instr_count;
	size_t *order = usc__calloc(n ? n : 1, sizeof *order);
	bool *unch = usc__calloc(n ? n : 1, sizeof *unch);
	const usc_hlo_instr **bo = usc__calloc(n ? n : 1, sizeof *bo);
	usc_status st;

	if (!order || !unch || !bo) {
		usc__free(order);
		usc__free(unch);
		usc__free(bo);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	a->base_of[c->index] = bo;
	st = usc__topo_order(c, order, err);
	for (size_t j = 0; st == USC_OK && j < n; j++) {
		const usc_hlo_instr *x = c->instrs[order[j]];
		const usc_hlo_instr *b = a->m->instr(a->m->ctx, x);
		bool ok = b != NULL;

		if (ok && x->opcode == USC_HLO_OP_PARAMETER)
			ok = x->parameter_number >= 0 &&
			     (size_t)x->parameter_number < a->npok[c->index] &&
			     a->pok[c->index][x->parameter_number];
		for (size_t k = 0; ok && k < x->operand_count; k++)
			ok = unch[x->operands[k]->index];
		for (size_t k = 0; ok && k < x->called_count; k++)
			ok = fn_same(a, x->called[k]);
		unch[x->index] = ok;
		bo[x->index] = ok ? b : NULL;
		/*
		 * A body's parameter k is unchanged when every caller is
		 * written as in the base and its operand k is unchanged; a
		 * body applied per element (reduce, map, sort...) gets other
		 * values than its caller's operands: never.
		 */
		for (size_t k = 0; k < x->called_count; k++) {
			const usc_hlo_computation *d = x->called[k];
			bool direct = k == 0 &&
				      (x->opcode == USC_HLO_OP_FUSION ||
				       x->opcode == USC_HLO_OP_CALL);

			for (size_t p = 0; p < a->npok[d->index]; p++)
				a->pok[d->index][p] =
				    a->pok[d->index][p] && direct && b &&
				    p < x->operand_count &&
				    unch[x->operands[p]->index];
		}
	}
	usc__free(order);
	usc__free(unch);
	return st;
}

usc_status usc__cone_attach(usc_eval *ev, usc__cone *k,
			    const usc__cone_match *m, usc_error *err)
{
	struct usc__cone_map *map = NULL;
	const usc_hlo_module *mod = ev->comp->parent;
	attach a;
	size_t nc;
	usc_status st = USC_OK;

	if (!k || k->disabled || ev->ctl || ev->nkeep || ev->cone || !mod)
		return USC_OK;
	nc = mod->computation_count;
	memset(&a, 0, sizeof a);
	a.m = m;
	a.mod = mod;
	a.same = usc__calloc(nc ? nc : 1, 1);
	a.seen = usc__calloc(nc ? nc : 1, 1);
	a.pok = usc__calloc(nc ? nc : 1, sizeof *a.pok);
	a.npok = usc__calloc(nc ? nc : 1, sizeof *a.npok);
	a.rpo = usc__calloc(nc ? nc : 1, sizeof *a.rpo);
	map = usc__calloc(1, sizeof *map);
	if (map)
		map->base_of = usc__calloc(nc ? nc : 1, sizeof *map->base_of);
	if (!a.same || !a.seen || !a.pok || !a.npok || !a.rpo || !map ||
	    !map->base_of) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	map->ncomp = nc;
	map->cone = k;
	a.base_of = map->base_of;
	for (size_t i = 0; i < nc; i++) {
		const usc_hlo_computation *c = mod->computations[i];
		size_t np = 0;

		for (size_t j = 0; j < c->instr_count; j++)
			if (c->instrs[j]->opcode == USC_HLO_OP_PARAMETER &&
			    c->instrs[j]->parameter_number >= 0 &&
			    (size_t)c->instrs[j]->parameter_number >= np)
				np = (size_t)c->instrs[j]->parameter_number +
				     1;
		a.pok[i] = usc__calloc(np ? np : 1, sizeof **a.pok);
		if (!a.pok[i]) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		a.npok[i] = np;
		for (size_t p = 0; p < np; p++)
			a.pok[i][p] = true;
	}
	order_calls(&a, ev->comp);
	for (size_t i = a.nrpo; st == USC_OK && i-- > 0;)
		st = mark(&a, a.rpo[i], err);
	if (st == USC_OK) {
		/* Tiles would take nothing from the base: whole values. */
		ev->opts.tile_elements = USC_EVAL_NO_TILES;
		ev->cone = map;
		map = NULL;
	}
done:
	map_free(map);
	for (size_t i = 0; a.pok && i < nc; i++)
		usc__free(a.pok[i]);
	usc__free(a.pok);
	usc__free(a.npok);
	usc__free(a.same);
	usc__free(a.seen);
	usc__free(a.rpo);
	return st;
}

/* ------------------------------------------------ the seeds' match */

static const usc_hlo_computation *seeds_comp(void *ctx,
					     const usc_hlo_computation *c)
{
	(void)ctx;
	return c;
}

static const usc_hlo_instr *seeds_instr(void *ctx, const usc_hlo_instr *x)
{
	const usc__cone_seeds *s = ctx;

	for (size_t i = 0; i < s->n; i++)
		if (s->seeds[i] == x)
			return NULL;
	return x;
}

usc__cone_match usc__cone_match_seeds(usc__cone_seeds *s)
{
	usc__cone_match m;

	m.comp = seeds_comp;
	m.instr = seeds_instr;
	m.ctx = s;
	return m;
}
