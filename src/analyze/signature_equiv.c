/*
 * Defect signatures: equivalent mutations (docs/signatures.md,
 * "Equivalent mutations").  Two catalogue mutations of different ops can
 * write the same program: negating the compare whose only user is a
 * select's predicate is swapping that select's branches.  No device
 * output can tell such a pair apart, so ranking one above the other
 * would only report the search's order; the ranked list shows them as
 * one candidate that lists its equivalent forms instead.
 *
 * The same holds of a constant set to zero and the result of the ops
 * that only move or convert it replaced by zeros, and of a stale tile
 * of an op and the same tile of the ops that only carry it along.
 *
 * Only structural equivalences are merged: each rule below is an
 * identity of the programs, whatever the inputs.  Mutations that merely
 * agree on the inputs the check saw (a value rounded down or toward zero
 * when every element is positive) stay separate candidates, tied.
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <stdint.h>
#include <string.h>

/* One (op, mutation, variant): a candidate or one of its forms. */
typedef struct form {
	const char *op, *computation;
	usc_mutation kind;
	int variant;
} form;

static const usc_hlo_instr *instr_of(const usc_hlo_module *m, const form *f)
{
	const usc_hlo_computation *c;

	if (!m || !f->op || !f->computation)
		return NULL;
	c = usc_hlo_module_computation(m, f->computation);
	return c ? usc_hlo_computation_instr(c, f->op) : NULL;
}

/*
 * The one use of x: its only user and the operand it is there; NULL when
 * x has none, several, or is its computation's root (then a caller or
 * the output reads it too).
 */
static const usc_hlo_instr *sole_user(const usc_hlo_instr *x, size_t *at)
{
	const usc_hlo_computation *c = x->parent;
	const usc_hlo_instr *user = NULL;

	if (x->is_root || !c)
		return NULL;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *u = c->instrs[i];

		for (size_t k = 0; k < u->operand_count; k++) {
			if (u->operands[k] != x)
				continue;
			if (user)
				return NULL;
			user = u;
			*at = k;
		}
	}
	return user;
}

static const char *direction_of(const usc_hlo_instr *in)
{
	const usc_hlo_attr *at = usc_hlo_instr_attr(in, "direction");

	return at && at->kind == USC_HLO_ATTR_IDENT ? at->text : NULL;
}

/*
 * flip-compare/1 (EQ<->NE) of a compare whose only use is a select's
 * predicate is that select's swap-operands: NE is the negation of EQ for
 * every pair of values, NaNs included, and select(!p, a, b) is
 * select(p, b, a).
 */
static bool negated_predicate(const usc_hlo_instr *cmp,
			      const usc_hlo_instr *sel)
{
	const usc_hlo_instr *u;
	const char *dir;
	size_t at = 0;

	if (cmp->opcode != USC_HLO_OP_COMPARE ||
	    sel->opcode != USC_HLO_OP_SELECT || sel->operand_count != 3)
		return false;
	dir = direction_of(cmp);
	if (!dir || (strcmp(dir, "EQ") != 0 && strcmp(dir, "NE") != 0))
		return false;
	u = sole_user(cmp, &at);
	return u == sel && at == 0;
}

/* The largest value of an integer type, or 0 when it is not one. */
static uint64_t int_max(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	if (!usc_dtype_is_integer(t) || !f || f->bits < 2 || f->bits > 64)
		return 0;
	return f->has_sign ? ((uint64_t)1 << (f->bits - 1)) - 1
			   : (f->bits == 64 ? UINT64_MAX
					    : ((uint64_t)1 << f->bits) - 1);
}

/*
 * flip-compare/0 of a compare of an integer iota i against x is the
 * iota's off-by-one (i + 1) where the new strictness is what i + 1
 * turns the old one into: i >= x is i + 1 > x (GT -> GE), i < x is
 * i + 1 <= x (LE -> LT), and with the iota on the right x <= i is
 * x < i + 1 (LT -> LE), x > i is x >= i + 1 (GE -> GT).  On integers
 * these are identities as long as i + 1 does not overflow, and the
 * iota must have no other use.
 */
static bool shifted_iota(const usc_hlo_instr *cmp, const usc_hlo_instr *iota)
{
	const usc_hlo_attr *dim;
	const char *dir;
	size_t at = 0;
	uint64_t max;

	if (cmp->opcode != USC_HLO_OP_COMPARE || cmp->operand_count != 2 ||
	    iota->opcode != USC_HLO_OP_IOTA || sole_user(iota, &at) != cmp)
		return false;
	max = int_max(iota->shape.dtype);
	dim = usc_hlo_instr_attr(iota, "iota_dimension");
	if (!max || !dim || dim->kind != USC_HLO_ATTR_INT || dim->i < 0 ||
	    (size_t)dim->i >= iota->shape.rank ||
	    iota->shape.dims[dim->i] < 0 ||
	    (uint64_t)iota->shape.dims[dim->i] > max)
		return false;
	dir = direction_of(cmp);
	if (!dir)
		return false;
	if (at == 0)
		return strcmp(dir, "GT") == 0 || strcmp(dir, "LE") == 0;
	return strcmp(dir, "LT") == 0 || strcmp(dir, "GE") == 0;
}

/* The one fusion that calls computation c; NULL when none or several. */
static const usc_hlo_instr *caller_of(const usc_hlo_computation *c)
{
	const usc_hlo_module *m = c->parent;
	const usc_hlo_instr *found = NULL;

	for (size_t i = 0; m && i < m->computation_count; i++) {
		const usc_hlo_computation *k = m->computations[i];

		for (size_t j = 0; j < k->instr_count; j++) {
			const usc_hlo_instr *in = k->instrs[j];

			if (in->opcode != USC_HLO_OP_FUSION ||
			    in->called_count != 1 || in->called[0] != c)
				continue;
			if (found)
				return NULL;
			found = in;
		}
	}
	return found;
}

/*
 * Whether the value o is p's result, through fusion boundaries, with
 * nothing else reading it on the way: o is p; or o is a fused
 * computation's parameter and its caller's operand (used there once)
 * is; or o is a fusion whose computation's root is p.  XLA puts a dot
 * and its user in two fusions, so the user reads the dot as a
 * parameter.
 */
static bool carries(const usc_hlo_instr *o, const usc_hlo_instr *p)
{
	size_t at = 0;

	for (int depth = 0; depth < 8; depth++) {
		const usc_hlo_instr *f;

		if (o == p)
			return true;
		if (o->opcode == USC_HLO_OP_FUSION)
			return o->called_count == 1 && p->is_root &&
			       p->parent == o->called[0];
		if (o->opcode != USC_HLO_OP_PARAMETER || !o->parent ||
		    o->parent->is_entry || o->parameter_number < 0)
			return false;
		f = caller_of(o->parent);
		if (!f || (size_t)o->parameter_number >= f->operand_count)
			return false;
		o = f->operands[o->parameter_number];
		if (sole_user(o, &at) != f)
			return false;
	}
	return false;
}

/*
 * transposed (operand v of an elementwise op read through transposed
 * indices) is the producer's own transposition (in the same computation
 * or across fusions) when that operand is square (the mutant reads it as [c, r] and transposes back, which is
 * the transpose only for r = c) and has no other use: a dot's
 * dot-transpose-output, or any broadcast-permute of a rank-2 broadcast
 * (a rank-2 result has one other arrangement of its dimensions: the
 * swapped one).
 */
static bool transposed_producer(const usc_hlo_instr *e, int v,
				const usc_hlo_instr *p, usc_mutation pk)
{
	const usc_hlo_instr *o;
	size_t at = 0;

	if (v < 0 || (size_t)v >= e->operand_count || e->operand_count != 2)
		return false;
	o = e->operands[v];
	if (o->shape.rank != 2 || o->shape.dims[0] != o->shape.dims[1] ||
	    e->operands[0] == e->operands[1] || sole_user(o, &at) != e ||
	    !usc__sig_same_dims(&o->shape, &p->shape) || !carries(o, p))
		return false;
	if (pk == USC_MUT_DOT_TRANSPOSE_OUTPUT)
		return p->opcode == USC_HLO_OP_DOT;
	return pk == USC_MUT_BROADCAST_PERMUTE &&
	       p->opcode == USC_HLO_OP_BROADCAST;
}

/* A one-operand op that maps an all-+0 operand to an all-+0 result. */
static bool keeps_zero_op(const usc_hlo_instr *in)
{
	switch (in->opcode) {
	case USC_HLO_OP_BROADCAST:
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_TRANSPOSE:
	case USC_HLO_OP_BITCAST:
	case USC_HLO_OP_COPY:
	case USC_HLO_OP_CONVERT:
	case USC_HLO_OP_SLICE:
		return in->operand_count == 1;
	default:
		return false;
	}
}

/*
 * A fusion of one operand whose computation is a chain of such ops from
 * its parameter to its root (XLA wraps a lone broadcast or convert in
 * one: "wrapped_broadcast").
 */
static bool keeps_zero(const usc_hlo_instr *in)
{
	const usc_hlo_instr *x;
	int depth = 0;

	if (in->opcode != USC_HLO_OP_FUSION)
		return keeps_zero_op(in);
	if (in->operand_count != 1 || in->called_count != 1 ||
	    !in->called[0]->root)
		return false;
	for (x = in->called[0]->root; depth < 16 && keeps_zero_op(x); depth++)
		x = x->operands[0];
	return x->opcode == USC_HLO_OP_PARAMETER;
}

/*
 * Whether y is reached from x through sole uses of ops that keep zeros:
 * then x zeroed (a constant set to 0, an op's result replaced by zeros)
 * and y's result replaced by zeros are one program (every +0 stays +0
 * on the way, and nothing else reads the values in between).
 */
static bool zeroes_reach(const usc_hlo_instr *x, const usc_hlo_instr *y)
{
	size_t at = 0;

	for (int depth = 0; depth < 16; depth++) {
		x = sole_user(x, &at);
		if (!x || !keeps_zero(x))
			return false;
		if (x == y)
			return true;
	}
	return false;
}

/* Whether d is listed in a dot's dimension attribute name of u. */
static bool listed(const usc_hlo_instr *u, const char *name, int64_t d,
		   size_t *count)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(u, name);
	bool in = false;

	*count = 0;
	if (!a)
		return false;
	if (a->kind != USC_HLO_ATTR_INTS)
		return true; /* not understood: treat as taken */
	*count = a->count;
	for (size_t i = 0; i < a->count; i++)
		in |= a->ints[i] == d;
	return in;
}

/*
 * Where a free dimension d (neither batch nor contracting) of a dot's
 * operand `at` lands in the result: after the batch dimensions come the
 * lhs's free dimensions, then the rhs's, each in order.  Each result
 * element along it is one operand row or column against the other
 * operand, so a stale tile of the operand's rows is the same tile of
 * the result's.  -1 for a batch or contracting dimension.
 */
static int dot_lands(const usc_hlo_instr *u, size_t at, int d)
{
	static const char *const names[2][2] = {
	    {"lhs_batch_dims", "lhs_contracting_dims"},
	    {"rhs_batch_dims", "rhs_contracting_dims"}};
	size_t nb = 0, nc = 0, before = 0, lhs_free;

	if (u->operand_count != 2 || at > 1 ||
	    listed(u, names[at][0], d, &nb) || listed(u, names[at][1], d, &nc))
		return -1;
	for (int64_t k = 0; k < d; k++) {
		size_t n1, n2;

		if (!listed(u, names[at][0], k, &n1) &&
		    !listed(u, names[at][1], k, &n2))
			before++;
	}
	(void)listed(u, names[0][0], -1, &nb);
	(void)listed(u, names[0][1], -1, &nc);
	lhs_free = u->operands[0]->shape.rank - nb - nc;
	return (int)(nb + (at == 1 ? lhs_free : 0) + before);
}

/*
 * Whether operand o of an elementwise op is the same value at every
 * position: a scalar, a broadcast of one, or a constant whose elements are
 * all one value (XLA folds the broadcast of a scalar constant into one).
 */
static bool uniform(const usc_hlo_instr *o)
{
	/* A scalar operand (clamp's bounds may be) is one value too. */
	return o->shape.rank == 0 ||
	       (o->opcode == USC_HLO_OP_BROADCAST && o->operand_count == 1 &&
		o->operands[0]->shape.rank == 0) ||
	       usc__sig_splat_constant(o);
}

/*
 * Where dimension d of u's operand `at` lands in u's result when u moves
 * a stale tile of that operand along unchanged, or -1.  u(stale(x)) is
 * stale(u(x)) along the landed dimension, whatever the values, when u
 * computes each result element from the operand element at the same
 * position (an elementwise op whose other operands are the same value
 * everywhere), or only moves elements to other positions dimension by
 * dimension (a broadcast: operand dimension d is result dimension
 * dimensions[d]; a transpose: result dimension j is operand dimension
 * dimensions[j]), or is a dot and d one of the operand's free
 * dimensions (dot_lands).  A fusion carries it when the ops from its parameter
 * to its root do, one after the other, through sole uses.
 */
static int stale_lands(const usc_hlo_instr *u, size_t at, int d, int depth)
{
	const usc_hlo_attr *dims;

	if (at >= u->operand_count || depth > 16)
		return -1;
	if (u->opcode == USC_HLO_OP_FUSION) {
		const usc_hlo_computation *c;
		const usc_hlo_instr *x = NULL;

		if (u->called_count != 1 || !(c = u->called[0]) || !c->root)
			return -1;
		for (size_t i = 0; i < c->instr_count; i++)
			if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
			    c->instrs[i]->parameter_number == (int64_t)at)
				x = c->instrs[i];
		while (x && x != c->root && d >= 0) {
			size_t k = 0;
			const usc_hlo_instr *v = sole_user(x, &k);

			if (!v)
				return -1;
			d = stale_lands(v, k, d, depth + 1);
			x = v;
		}
		return x == c->root ? d : -1;
	}
	if (d < 0 || (size_t)d >= u->operands[at]->shape.rank)
		return -1;
	if (usc_hlo_opcode_category(u->opcode) == USC_HLO_CAT_ELEMENTWISE ||
	    u->opcode == USC_HLO_OP_COPY) {
		if (!usc__sig_same_dims(&u->shape, &u->operands[at]->shape))
			return -1;
		for (size_t k = 0; k < u->operand_count; k++)
			if (k != at && !uniform(u->operands[k]))
				return -1;
		return d;
	}
	if (u->opcode == USC_HLO_OP_DOT) {
		int j = dot_lands(u, at, d);

		return j >= 0 && (size_t)j < u->shape.rank &&
			       u->shape.dims[j] == u->operands[at]->shape.dims[d]
			   ? j
			   : -1;
	}
	dims = usc_hlo_instr_attr(u, "dimensions");
	if (!dims || dims->kind != USC_HLO_ATTR_INTS)
		return -1;
	if (u->opcode == USC_HLO_OP_BROADCAST &&
	    dims->count == u->operands[0]->shape.rank) {
		int64_t j = dims->ints[d];

		return j >= 0 && (size_t)j < u->shape.rank &&
			       u->shape.dims[j] ==
				   u->operands[0]->shape.dims[d]
			   ? (int)j
			   : -1;
	}
	if (u->opcode == USC_HLO_OP_TRANSPOSE && dims->count == u->shape.rank)
		for (size_t j = 0; j < dims->count; j++)
			if (dims->ints[j] == d)
				return (int)j;
	return -1;
}

/* The dimension stale/v of an op of this shape holds stale. */
static int stale_dim(const usc_hlo_shape *s, int v)
{
	return s->rank == 0 ? -1 : v == 0 ? 0 : (int)s->rank - 1;
}

/*
 * stale/v of x is stale/w of y when y is reached from x through sole
 * uses of ops that carry a stale tile along (stale_lands), and x's
 * stale dimension lands on y's: the tile loop that wrote x's first half
 * twice and the one that wrote y's first half twice leave the same
 * values in y, and nothing else reads the values in between.  (A
 * fusion that only broadcasts, converts or negates its operand is the
 * usual case: XLA wraps a lone broadcast as "wrapped_broadcast".)
 */
static bool stale_reaches(const usc_hlo_instr *x, int v,
			  const usc_hlo_instr *y, int w)
{
	int d = stale_dim(&x->shape, v);
	size_t at = 0;

	for (int depth = 0; depth < 16 && d >= 0; depth++) {
		x = sole_user(x, &at);
		if (!x)
			return false;
		d = stale_lands(x, at, d, 0);
		if (x == y)
			return d >= 0 && d == stale_dim(&y->shape, w);
	}
	return false;
}

/* Whether a and b (in either order) write the same program. */
static bool same_program(const usc_hlo_module *m, const form *a,
			 const form *b)
{
	const usc_hlo_instr *x = instr_of(m, a), *y = instr_of(m, b);

	if (!x || !y || x == y)
		return false;
	if (a->kind == USC_MUT_FLIP_COMPARE && a->variant == 1 &&
	    b->kind == USC_MUT_SWAP_OPERANDS)
		return negated_predicate(x, y);
	if (a->kind == USC_MUT_FLIP_COMPARE && a->variant == 0 &&
	    b->kind == USC_MUT_OFF_BY_ONE && b->variant == 0)
		return shifted_iota(x, y);
	if (((a->kind == USC_MUT_WRONG_CONSTANT && a->variant == 1) ||
	     a->kind == USC_MUT_ZERO) &&
	    b->kind == USC_MUT_ZERO)
		return zeroes_reach(x, y);
	if (a->kind == USC_MUT_STALE && b->kind == USC_MUT_STALE)
		return stale_reaches(x, a->variant, y, b->variant);
	if (a->kind == USC_MUT_TRANSPOSED &&
	    (b->kind == USC_MUT_DOT_TRANSPOSE_OUTPUT ||
	     b->kind == USC_MUT_BROADCAST_PERMUTE))
		return transposed_producer(x, a->variant, y, b->kind);
	return false;
}

static bool equivalent(const usc_hlo_module *m, const form *a, const form *b)
{
	return same_program(m, a, b) || same_program(m, b, a);
}

static form form_of(const usc_signature_candidate *c)
{
	form f = {c->op, c->computation, c->kind, c->variant};

	return f;
}

static form form_of_alt(const usc_signature_form *e)
{
	form f = {e->op, e->computation, e->kind, e->variant};

	return f;
}

/* Whether c, or one of the forms already merged into it, is x's twin. */
static bool joins(const usc_hlo_module *m, const usc_signature_candidate *c,
		  const usc_signature_candidate *x)
{
	form fx = form_of(x), fc = form_of(c);

	if (equivalent(m, &fc, &fx))
		return true;
	for (size_t i = 0; i < c->equivalent_count; i++) {
		form fe = form_of_alt(&c->equivalent[i]);

		if (equivalent(m, &fe, &fx))
			return true;
	}
	return false;
}

/* Moves x's name into c's forms; false on out of memory. */
static bool absorb(usc_signature_candidate *c, usc_signature_candidate *x)
{
	usc_signature_form *g, *e;

	g = usc__reallocarray(c->equivalent, c->equivalent_count + 1,
			      sizeof *g);
	if (!g)
		return false;
	c->equivalent = g;
	e = &g[c->equivalent_count++];
	memset(e, 0, sizeof *e);
	e->op = x->op;
	e->computation = x->computation;
	e->kind = x->kind;
	e->variant = x->variant;
	memcpy(e->detail, x->detail, sizeof e->detail);
	x->op = x->computation = NULL;
	usc__sig_cand_free(x);
	return true;
}

/* The kinds a rule above names: the only ones that can have twins. */
static bool twinnable(usc_mutation k)
{
	return k == USC_MUT_FLIP_COMPARE || k == USC_MUT_SWAP_OPERANDS ||
	       k == USC_MUT_OFF_BY_ONE || k == USC_MUT_TRANSPOSED ||
	       k == USC_MUT_DOT_TRANSPOSE_OUTPUT ||
	       k == USC_MUT_BROADCAST_PERMUTE || k == USC_MUT_WRONG_CONSTANT ||
	       k == USC_MUT_ZERO || k == USC_MUT_STALE;
}

bool usc__sig_merge_equivalent(usc__sig_set *s)
{
	size_t *tw, nt = 0, w = 0;
	uint8_t *gone;
	bool ok = true;

	if (!s->m || s->n < 2)
		return true;
	tw = usc__malloc(s->n * sizeof *tw);
	gone = usc__calloc(s->n, 1);
	if (!tw || !gone) {
		usc__free(tw);
		usc__free(gone);
		return false;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->list[i].op && twinnable(s->list[i].kind))
			tw[nt++] = i;
	/* The better ranked of twins names the candidate (the list is
	 * sorted): the later ones become its forms. */
	for (size_t a = 0; a < nt && ok; a++) {
		if (gone[tw[a]])
			continue;
		for (size_t b = a + 1; b < nt && ok; b++) {
			usc_signature_candidate *x = &s->list[tw[b]];

			if (gone[tw[b]] || !joins(s->m, &s->list[tw[a]], x))
				continue;
			ok = absorb(&s->list[tw[a]], x);
			gone[tw[b]] = ok;
		}
	}
	for (size_t i = 0; i < s->n; i++)
		if (!gone[i])
			s->list[w++] = s->list[i];
	s->n = w;
	usc__free(tw);
	usc__free(gone);
	return ok;
}
