/*
 * The generator's IR builder: instructions, attributes and scalar
 * computations made directly in the arena of a usc_hlo_file, so that the
 * project's printer, verifier and evaluator take a generated module like
 * any parsed one.  Names are the opcode's spelling and a counter
 * ("exponential.7"), unique in the module as XLA requires.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_internal.h"

static void *alloc(usc__gen *g, size_t count, size_t size)
{
	void *p;

	if (g->oom)
		return NULL;
	p = usc__hlo_arena_calloc(g->arena, count ? count : 1, size);
	if (!p)
		g->oom = true;
	return p;
}

static const char *dup(usc__gen *g, const char *s)
{
	char *d;

	if (g->oom)
		return NULL;
	d = usc__hlo_arena_strndup(g->arena, s, strlen(s));
	if (!d)
		g->oom = true;
	return d;
}

bool usc__gen_shape(usc__gen *g, usc_hlo_shape *s, usc_dtype t, size_t rank,
		    const int64_t *dims)
{
	memset(s, 0, sizeof *s);
	s->kind = USC_HLO_SHAPE_ARRAY;
	s->dtype = t;
	s->rank = rank;
	s->dims = alloc(g, rank, sizeof(int64_t));
	/* Zeroed: every dimension USC_HLO_DIM_STATIC. */
	s->dim_kinds = alloc(g, rank, 1);
	if (!s->dims || !s->dim_kinds)
		return false;
	if (rank)
		memcpy(s->dims, dims, rank * sizeof(int64_t));
	return true;
}

static usc_hlo_instr *new_instr(usc__gen *g, usc_hlo_opcode op, usc_dtype t,
				size_t rank, const int64_t *dims,
				const char *name)
{
	usc_hlo_instr *in;

	if (g->count >= g->cap) {
		/* The capacity is sized for the worst step; say so, never
		 * write past it. */
		g->oom = true;
		return NULL;
	}
	in = alloc(g, 1, sizeof *in);
	if (!in)
		return NULL;
	in->opcode = op;
	in->name = dup(g, name);
	in->parameter_number = -1;
	in->attrs = alloc(g, USC__GEN_MAX_ATTRS, sizeof(usc_hlo_attr));
	if (!in->name || !in->attrs ||
	    !usc__gen_shape(g, &in->shape, t, rank, dims))
		return NULL;
	in->parent = g->entry;
	in->index = g->count;
	/* A line number per instruction, so a verifier message points at
	 * something: the position in the entry. */
	in->loc.line = (uint32_t)g->count + 1;
	in->loc.column = 1;
	g->instrs[g->count] = in;
	g->users[g->count] = 0;
	g->count++;
	return in;
}

usc_hlo_instr *usc__gen_instr(usc__gen *g, usc_hlo_opcode op, usc_dtype t,
			      size_t rank, const int64_t *dims, size_t nops,
			      usc_hlo_instr *const *ops)
{
	char name[64];
	usc_hlo_instr *in;

	for (size_t i = 0; i < nops; i++)
		if (!ops[i])
			return NULL;
	snprintf(name, sizeof name, "%s.%u", usc_hlo_opcode_name(op),
		 ++g->counter);
	in = new_instr(g, op, t, rank, dims, name);
	if (!in)
		return NULL;
	in->operands = alloc(g, nops, sizeof *in->operands);
	if (!in->operands)
		return NULL;
	in->operand_count = nops;
	for (size_t i = 0; i < nops; i++) {
		in->operands[i] = ops[i];
		g->users[ops[i]->index]++;
	}
	return in;
}

usc_hlo_instr *usc__gen_like(usc__gen *g, usc_hlo_opcode op, usc_dtype t,
			     const usc_hlo_instr *src, size_t nops,
			     usc_hlo_instr *const *ops)
{
	if (!src)
		return NULL;
	return usc__gen_instr(g, op, t, src->shape.rank, src->shape.dims, nops,
			      ops);
}

usc_hlo_instr *usc__gen_parameter(usc__gen *g, usc_dtype t, size_t rank,
				  const int64_t *dims)
{
	char name[32];
	usc_hlo_instr *in;

	snprintf(name, sizeof name, "p%zu", g->params);
	in = new_instr(g, USC_HLO_OP_PARAMETER, t, rank, dims, name);
	if (!in)
		return NULL;
	in->parameter_number = (int64_t)g->params++;
	return in;
}

usc_hlo_instr *usc__gen_constant(usc__gen *g, usc_dtype t, const char *text)
{
	usc_hlo_instr *in = usc__gen_instr(g, USC_HLO_OP_CONSTANT, t, 0, NULL,
					   0, NULL);
	usc_hlo_literal *l;

	if (!in)
		return NULL;
	l = alloc(g, 1, sizeof *l);
	if (!l)
		return NULL;
	l->kind = USC_HLO_LITERAL_ARRAY;
	l->count = 1;
	l->elems = alloc(g, 1, sizeof *l->elems);
	if (!l->elems)
		return NULL;
	l->elems[0].text = dup(g, text);
	l->elems[0].value = strtod(text, NULL);
	in->literal = l;
	return in;
}

static usc_hlo_attr *new_attr(usc__gen *g, usc_hlo_instr *in,
			      const char *name, usc_hlo_attr_kind kind)
{
	usc_hlo_attr *a;

	if (!in || g->oom)
		return NULL;
	if (in->attr_count >= USC__GEN_MAX_ATTRS) {
		g->oom = true;
		return NULL;
	}
	a = &in->attrs[in->attr_count++];
	memset(a, 0, sizeof *a);
	a->name = name; /* a string literal of the generator: static */
	a->kind = kind;
	a->loc = in->loc;
	return a;
}

void usc__gen_attr_ints(usc__gen *g, usc_hlo_instr *in, const char *name,
			const int64_t *v, size_t n)
{
	usc_hlo_attr *a = new_attr(g, in, name, USC_HLO_ATTR_INTS);

	if (!a)
		return;
	a->ints = alloc(g, n, sizeof(int64_t));
	if (!a->ints)
		return;
	if (n)
		memcpy(a->ints, v, n * sizeof(int64_t));
	a->count = n;
}

void usc__gen_attr_int(usc__gen *g, usc_hlo_instr *in, const char *name,
		       int64_t v)
{
	usc_hlo_attr *a = new_attr(g, in, name, USC_HLO_ATTR_INT);

	if (a)
		a->i = v;
}

void usc__gen_attr_ident(usc__gen *g, usc_hlo_instr *in, const char *name,
			 const char *text)
{
	usc_hlo_attr *a = new_attr(g, in, name, USC_HLO_ATTR_IDENT);

	if (a)
		a->text = text;
}

void usc__gen_attr_slice(usc__gen *g, usc_hlo_instr *in,
			 const usc_hlo_slice_dim *d, size_t n)
{
	usc_hlo_attr *a = new_attr(g, in, "slice", USC_HLO_ATTR_SLICE);

	if (!a)
		return;
	a->slice = alloc(g, n, sizeof *a->slice);
	if (!a->slice)
		return;
	memcpy(a->slice, d, n * sizeof *d);
	a->count = n;
}

void usc__gen_attr_window(usc__gen *g, usc_hlo_instr *in,
			  const usc_hlo_window_dim *d, size_t n)
{
	usc_hlo_attr *a = new_attr(g, in, "window", USC_HLO_ATTR_WINDOW);

	if (!a)
		return;
	a->window = alloc(g, n, sizeof *a->window);
	if (!a->window)
		return;
	memcpy(a->window, d, n * sizeof *d);
	a->count = n;
	a->window_fields = USC_HLO_WINDOW_HAS_SIZE | USC_HLO_WINDOW_HAS_STRIDE |
			   USC_HLO_WINDOW_HAS_PAD;
}

void usc__gen_attr_apply(usc__gen *g, usc_hlo_instr *in,
			 usc_hlo_computation *c)
{
	usc_hlo_attr *a = new_attr(g, in, "to_apply",
				   USC_HLO_ATTR_COMPUTATIONS);

	if (!a || !c)
		return;
	a->names = alloc(g, 1, sizeof *a->names);
	a->comps = alloc(g, 1, sizeof *a->comps);
	in->called = alloc(g, 1, sizeof *in->called);
	if (!a->names || !a->comps || !in->called)
		return;
	a->names[0] = c->name;
	a->comps[0] = c;
	a->count = 1;
	in->called[0] = c;
	in->called_count = 1;
}

static usc_hlo_instr *body_instr(usc__gen *g, usc_hlo_computation *c,
				 usc_hlo_opcode op, usc_dtype t,
				 const char *comp, const char *suffix)
{
	usc_hlo_instr *in = alloc(g, 1, sizeof *in);
	char name[80];

	if (!in)
		return NULL;
	snprintf(name, sizeof name, "%s.%s", comp, suffix);
	in->opcode = op;
	in->name = dup(g, name);
	in->parameter_number = -1;
	in->parent = c;
	if (!in->name || !usc__gen_shape(g, &in->shape, t, 0, NULL))
		return NULL;
	return in;
}

usc_hlo_computation *usc__gen_binary_comp(usc__gen *g, usc_hlo_opcode op,
					  usc_dtype t)
{
	char name[64];
	usc_hlo_computation *c;
	usc_hlo_instr *x, *y, *r;

	snprintf(name, sizeof name, "%s_%s", usc_hlo_opcode_name(op),
		 usc_dtype_name(t));
	for (size_t i = 0; i < g->comp_count; i++)
		if (strcmp(g->comps[i]->name, name) == 0)
			return g->comps[i];
	if (g->comp_count >= USC__GEN_MAX_COMPS) {
		g->oom = true;
		return NULL;
	}
	c = alloc(g, 1, sizeof *c);
	if (!c)
		return NULL;
	c->name = dup(g, name);
	c->parent = g->module;
	c->explicit_root = true;
	/* Instruction names are unique in the whole module, as in XLA. */
	x = body_instr(g, c, USC_HLO_OP_PARAMETER, t, name, "x");
	y = body_instr(g, c, USC_HLO_OP_PARAMETER, t, name, "y");
	r = body_instr(g, c, op, t, name, "r");
	c->instrs = alloc(g, 3, sizeof *c->instrs);
	if (!x || !y || !r || !c->instrs)
		return NULL;
	r->operands = alloc(g, 2, sizeof *r->operands);
	if (!r->operands)
		return NULL;
	x->parameter_number = 0;
	y->parameter_number = 1;
	r->operands[0] = x;
	r->operands[1] = y;
	r->operand_count = 2;
	r->is_root = true;
	c->instrs[0] = x;
	c->instrs[1] = y;
	c->instrs[2] = r;
	for (size_t i = 0; i < 3; i++)
		c->instrs[i]->index = i;
	c->instr_count = 3;
	c->root = r;
	g->comps[g->comp_count++] = c;
	return c;
}

bool usc__gen_finish(usc__gen *g, usc_hlo_instr *const *outs, size_t n)
{
	usc_hlo_module *m = g->module;
	usc_hlo_computation *e = g->entry;
	usc_hlo_instr *root;

	if (g->oom || !n)
		return false;
	if (n == 1) {
		root = outs[0];
	} else {
		char name[32];

		snprintf(name, sizeof name, "tuple.%u", ++g->counter);
		root = new_instr(g, USC_HLO_OP_TUPLE, USC_F32, 0, NULL, name);
		if (!root)
			return false;
		root->shape.kind = USC_HLO_SHAPE_TUPLE;
		root->shape.dtype = USC_DTYPE_INVALID;
		root->shape.tuple = alloc(g, n, sizeof(usc_hlo_shape));
		root->operands = alloc(g, n, sizeof *root->operands);
		if (!root->shape.tuple || !root->operands)
			return false;
		root->shape.tuple_count = n;
		root->operand_count = n;
		for (size_t i = 0; i < n; i++) {
			root->shape.tuple[i] = outs[i]->shape;
			root->operands[i] = outs[i];
		}
	}
	root->is_root = true;
	e->instrs = g->instrs;
	e->instr_count = g->count;
	e->root = root;
	m->computations = alloc(g, g->comp_count + 1, sizeof *m->computations);
	if (!m->computations)
		return false;
	for (size_t i = 0; i < g->comp_count; i++) {
		m->computations[i] = g->comps[i];
		g->comps[i]->index = i;
	}
	m->computations[g->comp_count] = e;
	e->index = g->comp_count;
	m->computation_count = g->comp_count + 1;
	m->entry = e;
	return !g->oom;
}
