/*
 * Row blocks of a kernel, for a streamed check of kernels that are not
 * loop kernels (docs/check.md, "Streaming").
 *
 * Many fused kernels work row by row: a softmax, a norm, a cross-entropy
 * over [rows, features] reduce each row on its own and broadcast the
 * result back over it.  Such a kernel computes rows [r0, r1) of its
 * outputs from rows [r0, r1) of its row-shaped inputs (and the whole of
 * the others) with exactly the ops it applies to them within the whole
 * kernel, so it can be evaluated a block of rows at a time by the same
 * kernel with its leading dimension shortened.  Whether a kernel is of
 * that kind is decided conservatively, op by op: a value has the rows
 * (its leading dimension is the kernel's rows, each row its own) or is
 * shared by every row, and only ops that keep rows apart are accepted.
 * Anything else (a dot, a slice, a pad, a gather, an iota along the rows,
 * a reduce over them) makes the kernel whole.
 */
#include "internal.h"

#include <string.h>

#include "ulpscope/hlo_kernel.h"

#include "analyze/check_internal.h"
#include "eval/eval_internal.h"

enum {
	UNSEEN,
	SHARED, /* the same for every row (or a scalar) */
	ROWS,   /* leading dimension the rows, each row on its own */
	MIXED   /* neither: the kernel cannot be split into row blocks */
};

/*
 * The judgment is a pass over each computation in topological order, so
 * that every operand is judged before its users: a chain of a million ops
 * costs no stack.  Only the bodies of fusions and calls are entered, from
 * the instruction that calls them, which nests at most
 * USC__EVAL_NESTING_MAX deep (the evaluator refuses deeper kernels;
 * here a deeper body is MIXED).
 */
typedef struct rows_walk {
	int64_t rows;
	const usc_hlo_module *m;
	unsigned char **state; /* [computation][instruction] */
	bool *called;          /* computations already entered by a call */
	bool mixed;            /* some judged instruction is MIXED */
	usc_status st;         /* the first failure (out of memory) */
	usc_error *err;
} rows_walk;

/* Whether every leaf of s is an array whose leading dimension is rows. */
static bool has_rows(const usc_hlo_shape *s, int64_t rows)
{
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (size_t i = 0; i < s->tuple_count; i++)
			if (!has_rows(&s->tuple[i], rows))
				return false;
		return s->tuple_count > 0;
	}
	return s->kind == USC_HLO_SHAPE_ARRAY && s->rank >= 1 &&
	       s->dims[0] == rows;
}

/* Whether a list attribute holds v. */
static bool ints_hold(const usc_hlo_attr *a, int64_t v)
{
	for (size_t i = 0; a && i < a->count; i++)
		if (a->ints[i] == v)
			return true;
	return false;
}

/*
 * The flag of an operand of c: judged already, since instructions are
 * judged operands first (an unjudged one would be a cycle).
 */
static int flag(const rows_walk *w, const usc_hlo_computation *c,
		const usc_hlo_instr *o)
{
	unsigned char s = w->state[c->index][o->index];

	return s == UNSEEN ? MIXED : s;
}

static int judge_computation(rows_walk *w, const usc_hlo_computation *c,
			     int depth);

/*
 * The flag of an op that keeps elements apart (elementwise ops, copies):
 * its operands of rank above 0 agree, scalars are shared.
 */
static int elementwise(const rows_walk *w, const usc_hlo_computation *c,
		       const usc_hlo_instr *in)
{
	int any = UNSEEN;

	for (size_t k = 0; k < in->operand_count; k++) {
		const usc_hlo_instr *o = in->operands[k];
		int f = flag(w, c, o);

		if (f == MIXED)
			return MIXED;
		if (o->shape.kind == USC_HLO_SHAPE_ARRAY && o->shape.rank == 0)
			continue;
		if (any != UNSEEN && f != any)
			return MIXED;
		any = f;
	}
	if (any == UNSEEN)
		return SHARED;
	if (any == ROWS && !has_rows(&in->shape, w->rows))
		return MIXED;
	return any;
}

/*
 * The operands of a reduce or reduce-window: its arrays (the first half)
 * all ROWS or all SHARED, which it returns, and its initial values
 * shared; anything else is MIXED.
 */
static int reduce_operands(const rows_walk *w, const usc_hlo_computation *c,
			   const usc_hlo_instr *in)
{
	size_t half = in->operand_count / 2;
	int arrays = SHARED;

	for (size_t k = 0; k < in->operand_count; k++) {
		int f = flag(w, c, in->operands[k]);

		if (f == MIXED || (k >= half && f != SHARED))
			return MIXED;
		if (k < half) {
			if (k > 0 && f != arrays)
				return MIXED;
			arrays = f;
		}
	}
	return arrays;
}

/*
 * A fusion or call: its body, called once, is judged with each parameter
 * flagged as the operand it receives; the result is the body root's.
 */
static int judge_call(rows_walk *w, const usc_hlo_computation *c,
		      const usc_hlo_instr *in, int depth)
{
	const usc_hlo_computation *callee;
	int f;

	if (in->called_count != 1)
		return MIXED;
	callee = in->called[0];
	/* A body called twice could need two different splits. */
	if (w->called[callee->index] || depth >= USC__EVAL_NESTING_MAX)
		return MIXED;
	w->called[callee->index] = true;
	for (size_t k = 0; k < callee->instr_count; k++) {
		const usc_hlo_instr *p = callee->instrs[k];
		size_t n;

		if (p->opcode != USC_HLO_OP_PARAMETER)
			continue;
		n = (size_t)p->parameter_number;
		if (p->parameter_number < 0 || n >= in->operand_count)
			return MIXED;
		f = flag(w, c, in->operands[n]);
		if (f == MIXED)
			return MIXED;
		w->state[callee->index][p->index] = (unsigned char)f;
	}
	f = judge_computation(w, callee, depth + 1);
	if (f == ROWS && !has_rows(&in->shape, w->rows))
		return MIXED;
	return f;
}

/* The flag of one instruction, from its operands'. */
static int judge(rows_walk *w, const usc_hlo_computation *c,
		 const usc_hlo_instr *in, int depth)
{
	const usc_hlo_attr *dims;
	int f;

	switch (in->opcode) {
	case USC_HLO_OP_PARAMETER:
		/* Entry parameters by shape; a callee's were set by its call. */
		if (!c->is_entry)
			return MIXED;
		return has_rows(&in->shape, w->rows) ? ROWS : SHARED;
	case USC_HLO_OP_CONSTANT:
		return SHARED;
	case USC_HLO_OP_BROADCAST:
		f = flag(w, c, in->operands[0]);
		dims = usc__attr_ints(in, "dimensions");
		if (f == MIXED || !dims)
			return MIXED;
		if (f == ROWS)
			return dims->count >= 1 && dims->ints[0] == 0 &&
					       has_rows(&in->shape, w->rows)
				       ? ROWS
				       : MIXED;
		/* A shared value spread over the rows, never along them. */
		if (ints_hold(dims, 0))
			return has_rows(&in->shape, w->rows) ? MIXED : SHARED;
		return has_rows(&in->shape, w->rows) ? ROWS : SHARED;
	case USC_HLO_OP_REDUCE:
		dims = usc__attr_ints(in, "dimensions");
		f = reduce_operands(w, c, in);
		if (f != ROWS)
			return f;
		return dims && !ints_hold(dims, 0) &&
				       has_rows(&in->shape, w->rows)
			       ? ROWS
			       : MIXED;
	case USC_HLO_OP_REDUCE_WINDOW: {
		const usc_hlo_attr *win = usc_hlo_instr_attr(in, "window");

		f = reduce_operands(w, c, in);
		if (f == MIXED)
			return MIXED;
		if (f == SHARED)
			return has_rows(&in->shape, w->rows) ? MIXED : SHARED;
		/* A window one row high that steps row by row. */
		return win && win->count >= 1 && win->window[0].size == 1 &&
				       win->window[0].stride == 1 &&
				       win->window[0].pad_lo == 0 &&
				       win->window[0].pad_hi == 0 &&
				       win->window[0].lhs_dilate == 1 &&
				       win->window[0].rhs_dilate == 1 &&
				       has_rows(&in->shape, w->rows)
			       ? ROWS
			       : MIXED;
	}
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_BITCAST:
		f = flag(w, c, in->operands[0]);
		if (f != ROWS)
			return f == SHARED && !has_rows(&in->shape, w->rows)
				       ? SHARED
				       : MIXED;
		return has_rows(&in->shape, w->rows) ? ROWS : MIXED;
	case USC_HLO_OP_TRANSPOSE:
		f = flag(w, c, in->operands[0]);
		dims = usc__attr_ints(in, "dimensions");
		if (f != ROWS)
			return f;
		return dims && dims->count >= 1 && dims->ints[0] == 0 ? ROWS
								      : MIXED;
	case USC_HLO_OP_IOTA: {
		int64_t d;

		if (!has_rows(&in->shape, w->rows))
			return SHARED;
		return usc__attr_int(in, "iota_dimension", &d) && d != 0
			       ? ROWS
			       : MIXED;
	}
	case USC_HLO_OP_FUSION:
	case USC_HLO_OP_CALL:
		return judge_call(w, c, in, depth);
	case USC_HLO_OP_GET_TUPLE_ELEMENT:
		return flag(w, c, in->operands[0]);
	case USC_HLO_OP_TUPLE:
	case USC_HLO_OP_COPY:
		return elementwise(w, c, in);
	default:
		break;
	}
	if (usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE) {
		/* A width-changing bitcast-convert adds or drops a dimension. */
		if (in->opcode == USC_HLO_OP_BITCAST_CONVERT &&
		    in->shape.rank != in->operands[0]->shape.rank)
			return MIXED;
		return elementwise(w, c, in);
	}
	/* Any other op may mix rows: only shared values may reach it. */
	for (size_t k = 0; k < in->operand_count; k++)
		if (flag(w, c, in->operands[k]) != SHARED)
			return MIXED;
	return has_rows(&in->shape, w->rows) ? MIXED : SHARED;
}

/*
 * Judges every instruction of c, operands first, and returns the root's
 * flag.  Parameters of a called body were flagged by the call.  Every
 * instruction is judged, dead ones too: the kernel of a block changes
 * the shape of every ROWS instruction, so a dead MIXED one would be left
 * inconsistent with its operands.
 */
static int judge_computation(rows_walk *w, const usc_hlo_computation *c,
			     int depth)
{
	size_t n = c->instr_count;
	size_t *order;
	unsigned char *s = w->state[c->index];

	if (!c->root || w->st != USC_OK)
		return MIXED;
	order = usc__calloc(n ? n : 1, sizeof *order);
	if (!order) {
		w->st = usc__fail(w->err, USC_ENOMEM, "out of memory");
		return MIXED;
	}
	w->st = usc__topo_order(c, order, w->err);
	for (size_t i = 0; w->st == USC_OK && i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		if (s[in->index] == UNSEEN)
			s[in->index] = (unsigned char)judge(w, c, in, depth);
		if (s[in->index] == MIXED)
			w->mixed = true;
	}
	usc__free(order);
	return w->st == USC_OK ? s[c->root->index] : MIXED;
}

static void walk_free(rows_walk *w)
{
	for (size_t i = 0; w->state && i < w->m->computation_count; i++)
		usc__free(w->state[i]);
	usc__free(w->state);
	usc__free(w->called);
}

/*
 * Judges every instruction of m (whose entry is the kernel) for the given
 * rows; *split tells whether the kernel splits into row blocks: its root
 * has the rows and nothing judged is MIXED.  On success with *split, w
 * holds the flags (walk_free frees them).
 */
static usc_status judge_module(const usc_hlo_module *m, int64_t rows,
			       rows_walk *w, bool *split, usc_error *err)
{
	int root;

	memset(w, 0, sizeof *w);
	*split = false;
	w->rows = rows;
	w->m = m;
	w->err = err;
	w->state = usc__calloc(m->computation_count ? m->computation_count : 1,
			       sizeof *w->state);
	w->called = usc__calloc(m->computation_count ? m->computation_count
						     : 1,
				sizeof *w->called);
	if (!w->state || !w->called)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < m->computation_count; i++) {
		size_t n = m->computations[i]->instr_count;

		w->state[i] = usc__calloc(n ? n : 1, 1);
		if (!w->state[i])
			return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (rows < 2 || !has_rows(&m->entry->root->shape, rows))
		return USC_OK;
	root = judge_computation(w, m->entry, 0);
	if (w->st != USC_OK)
		return w->st;
	*split = root == ROWS && !w->mixed;
	return USC_OK;
}

usc_status usc__check_rows(const usc_hlo_module *m, int64_t *rows,
			   usc_error *err)
{
	const usc_hlo_shape *s = &m->entry->root->shape;
	rows_walk w;
	bool split = false;
	usc_status st;

	*rows = 0;
	while (s->kind == USC_HLO_SHAPE_TUPLE && s->tuple_count > 0)
		s = &s->tuple[0];
	if (s->kind != USC_HLO_SHAPE_ARRAY || s->rank < 1 || s->dims[0] < 2)
		return USC_OK;
	st = judge_module(m, s->dims[0], &w, &split, err);
	if (st == USC_OK && split)
		*rows = s->dims[0];
	walk_free(&w);
	return st;
}

/* Sets the leading dimension of every leaf of s to n. */
static void set_rows(usc_hlo_shape *s, int64_t n)
{
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (size_t i = 0; i < s->tuple_count; i++)
			set_rows(&s->tuple[i], n);
		return;
	}
	if (s->kind == USC_HLO_SHAPE_ARRAY && s->rank >= 1)
		s->dims[0] = n;
}

usc_status usc__check_rows_module(const usc_hlo_module *m, int64_t rows,
				  int64_t block, usc_hlo_file **out,
				  usc_error *err)
{
	usc_hlo_print_options po = usc_hlo_print_options_default();
	usc_hlo_module *b;
	usc_hlo_file *f = NULL;
	char *text = NULL;
	rows_walk w;
	bool split = false;
	usc_status st;

	*out = NULL;
	st = usc_hlo_module_print(m, &po, &text, NULL, err);
	if (st == USC_OK)
		st = usc_hlo_parse(text, strlen(text), "row block", &f, err);
	usc_hlo_text_free(text);
	if (st != USC_OK)
		return st;
	/* The copy's own flags: its instructions are the ones to change. */
	b = (usc_hlo_module *)usc_hlo_file_module(f, 0);
	st = judge_module(b, rows, &w, &split, err);
	if (st == USC_OK && !split)
		st = usc__fail(err, USC_EINTERNAL,
			       "the printed kernel does not split into rows");
	for (size_t i = 0; st == USC_OK && i < b->computation_count; i++) {
		usc_hlo_computation *c = b->computations[i];

		for (size_t k = 0; k < c->instr_count; k++) {
			usc_hlo_instr *in = c->instrs[k];

			if (w.state[i][in->index] != ROWS)
				continue;
			set_rows(&in->shape, block);
			if (in->opcode == USC_HLO_OP_PARAMETER &&
			    c->has_signature && in->parameter_number >= 0 &&
			    (size_t)in->parameter_number < c->param_count)
				set_rows(&c->params[in->parameter_number].shape,
					 block);
			if (in == c->root && c->has_signature)
				set_rows(&c->result, block);
		}
	}
	walk_free(&w);
	if (st == USC_OK)
		st = usc_hlo_verify_ex(b, "row block", err);
	if (st != USC_OK) {
		usc_hlo_file_destroy(f);
		return st;
	}
	*out = f;
	return USC_OK;
}
