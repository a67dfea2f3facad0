/*
 * The module reducer (include/ulpscope/reduce.h): each candidate is made
 * on a fresh parse of the module's text, changed in place (the IR's
 * operand pointers rewired, its arrays compacted), cleaned of what the
 * root no longer uses, printed, and parsed and verified once more before
 * it is handed out.  A fresh parse per candidate costs a few microseconds
 * on the modules a fuzzer makes and keeps every change independent of the
 * others.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "ulpscope/hlo_kernel.h"
#include "ulpscope/reduce.h"

const char *usc_reduce_kind_name(usc_reduce_kind k)
{
	switch (k) {
	case USC_REDUCE_DROP_DEAD:
		return "drop-dead";
	case USC_REDUCE_DROP_OUTPUT:
		return "drop-output";
	case USC_REDUCE_TO_OPERAND:
		return "to-operand";
	case USC_REDUCE_TO_PARAMETER:
		return "to-parameter";
	case USC_REDUCE_CONSTANT:
		return "constant";
	case USC_REDUCE_SHRINK:
		return "shrink";
	}
	return "invalid";
}

int usc_reduce_size_compare(const usc_reduce_size *a,
			    const usc_reduce_size *b)
{
	if (a->instrs != b->instrs)
		return a->instrs < b->instrs ? -1 : 1;
	if (a->outputs != b->outputs)
		return a->outputs < b->outputs ? -1 : 1;
	if (a->elements != b->elements)
		return a->elements < b->elements ? -1 : 1;
	if (a->constants != b->constants)
		return a->constants < b->constants ? -1 : 1;
	return 0;
}

static bool simple_value(double v)
{
	return v == 0 || v == 1 || v == 2;
}

static int64_t shape_elements(const usc_hlo_shape *s)
{
	int64_t n = 0;

	if (s->kind == USC_HLO_SHAPE_ARRAY)
		return usc_hlo_shape_elements(s);
	if (s->kind == USC_HLO_SHAPE_TUPLE)
		for (size_t i = 0; i < s->tuple_count; i++)
			n += shape_elements(&s->tuple[i]);
	return n;
}

static void size_of(const usc_hlo_computation *e, usc_reduce_size *out)
{
	memset(out, 0, sizeof *out);
	out->instrs = e->instr_count;
	out->outputs = e->root ? shape_elements(&e->root->shape) : 0;
	for (size_t i = 0; i < e->instr_count; i++) {
		const usc_hlo_instr *in = e->instrs[i];

		if (in->shape.kind == USC_HLO_SHAPE_ARRAY)
			out->elements += usc_hlo_shape_elements(&in->shape);
		if (in->opcode == USC_HLO_OP_CONSTANT && in->literal &&
		    in->literal->kind == USC_HLO_LITERAL_ARRAY)
			for (size_t k = 0; k < in->literal->count; k++)
				if (!simple_value(in->literal->elems[k].value))
					out->constants++;
	}
}

/* Parses text and finds the first module's entry. */
static usc_status parse(const char *text, size_t len, const char *filename,
			usc_hlo_file **f, usc_hlo_computation **entry,
			usc_error *err)
{
	usc_status st = usc_hlo_parse(text, len, filename, f, err);
	usc_hlo_module *m;

	if (st != USC_OK)
		return st;
	m = usc_hlo_file_module_count(*f) ? usc_hlo_file_module(*f, 0) : NULL;
	if (!m || !m->entry || !m->entry->root) {
		usc_hlo_file_destroy(*f);
		*f = NULL;
		return usc__fail(err, USC_EINVAL,
				 "%s: no module with an entry computation",
				 filename ? filename : "<input>");
	}
	*entry = m->entry;
	return USC_OK;
}

usc_status usc_reduce_size_of(const char *text, size_t len,
			      const char *filename, usc_reduce_size *out,
			      usc_error *err)
{
	usc_hlo_file *f;
	usc_hlo_computation *e = NULL;
	usc_status st;

	if (!text || !out)
		return usc__fail(err, USC_EINVAL,
				 "usc_reduce_size_of: NULL argument");
	st = parse(text, len, filename, &f, &e, err);
	if (st != USC_OK)
		return st;
	size_of(e, out);
	usc_hlo_file_destroy(f);
	return USC_OK;
}

/* Same array shape: type, rank and dims (a layout does not matter). */
static bool same_array(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	if (a->kind != USC_HLO_SHAPE_ARRAY || b->kind != USC_HLO_SHAPE_ARRAY ||
	    a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (size_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

static bool float_type(usc_dtype t)
{
	return t == USC_F32 || t == USC_F64 || t == USC_F16 || t == USC_BF16;
}

/* One step, named by entry instruction indexes of the original parse. */
typedef struct move {
	usc_reduce_kind kind;
	size_t at;    /* the instruction (DROP_OUTPUT: the tuple element) */
	size_t with;  /* TO_OPERAND: operand number; TO_PARAMETER: index */
	int value;    /* CONSTANT: 0, 1 or 2 */
	int dim;      /* SHRINK */
} move;

/*
 * Whether every dimension can be halved: the entry holds only
 * elementwise ops, parameters, scalar constants, broadcasts of scalars,
 * iotas and the root tuple, and all its arrays other than scalars have
 * one rank and dims.  Then one shape change everywhere keeps it valid.
 */
static const usc_hlo_shape *shrinkable(const usc_hlo_computation *e)
{
	const usc_hlo_shape *s = NULL;

	for (size_t i = 0; i < e->instr_count; i++) {
		const usc_hlo_instr *in = e->instrs[i];
		usc_hlo_opcode op = in->opcode;

		if (op == USC_HLO_OP_TUPLE && in == e->root)
			continue;
		if (in->shape.kind != USC_HLO_SHAPE_ARRAY)
			return NULL;
		if (op == USC_HLO_OP_CONSTANT) {
			if (in->shape.rank != 0)
				return NULL;
			continue;
		}
		if (op == USC_HLO_OP_BROADCAST) {
			if (in->operand_count != 1 ||
			    in->operands[0]->shape.rank != 0)
				return NULL;
		} else if (op != USC_HLO_OP_PARAMETER && op != USC_HLO_OP_IOTA &&
			   (usc_hlo_opcode_category(op) != USC_HLO_CAT_ELEMENTWISE ||
			    usc_hlo_opcode_arity(op) == USC_HLO_VARIADIC ||
			    in->called_count)) {
			return NULL;
		}
		if (in->shape.rank == 0)
			continue;
		if (!s) {
			s = &in->shape;
		} else if (s->rank != in->shape.rank) {
			return NULL;
		} else {
			for (size_t k = 0; k < s->rank; k++)
				if (s->dims[k] != in->shape.dims[k])
					return NULL;
		}
	}
	return s;
}

/* Points every use of x (operands, the root) at y. */
static void replace_uses(usc_hlo_computation *e, usc_hlo_instr *x,
			 usc_hlo_instr *y)
{
	for (size_t i = 0; i < e->instr_count; i++) {
		usc_hlo_instr *in = e->instrs[i];

		for (size_t k = 0; k < in->operand_count; k++)
			if (in->operands[k] == x)
				in->operands[k] = y;
	}
	if (e->root == x) {
		x->is_root = false;
		y->is_root = true;
		e->root = y;
	}
}

static void mark(usc_hlo_instr *in, bool *live)
{
	if (live[in->index])
		return;
	live[in->index] = true;
	for (size_t k = 0; k < in->operand_count; k++)
		if (in->operands[k]->parent == in->parent)
			mark(in->operands[k], live);
}

/*
 * Keeps only what the root uses, renumbers the parameters left from 0
 * in their old order, and lets the printer derive the signature.
 * Returns how many instructions were dropped, or -1 out of memory.
 */
static long clean(usc_hlo_computation *e)
{
	bool *live = usc__calloc(e->instr_count ? e->instr_count : 1, 1);
	usc_hlo_instr **order;
	size_t n = 0, before = e->instr_count;
	int64_t next = 0;

	if (!live)
		return -1;
	mark(e->root, live);
	for (size_t i = 0; i < e->instr_count; i++)
		if (live[i])
			e->instrs[n++] = e->instrs[i];
	e->instr_count = n;
	for (size_t i = 0; i < n; i++)
		e->instrs[i]->index = i;
	/*
	 * A parameter put in an op's place may come later in the text than
	 * the op's users; XLA's parser wants every operand defined before
	 * its use.  A stable topological order: repeatedly the first
	 * instruction whose operands are all placed (live marks "placed").
	 */
	order = usc__calloc(n ? n : 1, sizeof *order);
	if (!order) {
		usc__free(live);
		return -1;
	}
	memset(live, 0, n ? n : 1);
	for (size_t placed = 0; placed < n;) {
		size_t before_pass = placed;

		for (size_t i = 0; i < n; i++) {
			usc_hlo_instr *in = e->instrs[i];
			bool ready = !live[i];

			for (size_t k = 0; ready && k < in->operand_count; k++)
				if (in->operands[k]->parent == e)
					ready = live[in->operands[k]->index];
			if (ready) {
				live[i] = true;
				order[placed++] = in;
			}
		}
		if (placed == before_pass) {
			/* A cycle (never made here): keep the old order and
			 * let the verifier say so. */
			memcpy(order, e->instrs, n * sizeof *order);
			break;
		}
	}
	memcpy(e->instrs, order, n * sizeof *order);
	usc__free(order);
	usc__free(live);
	for (size_t i = 0; i < n; i++)
		e->instrs[i]->index = i;
	/* Parameter numbers in the old order: repeatedly the smallest. */
	for (;;) {
		usc_hlo_instr *min = NULL;

		for (size_t i = 0; i < n; i++) {
			usc_hlo_instr *in = e->instrs[i];

			if (in->opcode == USC_HLO_OP_PARAMETER &&
			    in->parameter_number >= next &&
			    (!min || in->parameter_number < min->parameter_number))
				min = in;
		}
		if (!min)
			break;
		min->parameter_number = next++;
	}
	e->has_signature = false;
	return (long)(before - n);
}

/* Sets a constant's every element to v. */
static void set_constant(usc_hlo_instr *in, int v)
{
	static const char *const text[] = {"0", "1", "2"};

	for (size_t k = 0; k < in->literal->count; k++) {
		in->literal->elems[k].text = text[v];
		in->literal->elems[k].value = v;
	}
}

/*
 * Applies m to a fresh parse of e's module.  false when the move does not
 * apply (a changed module is still checked by the caller).
 */
static bool apply(usc_hlo_file *f, usc_hlo_computation *e, const move *m,
		  usc_reduce_candidate *c)
{
	usc_hlo_instr *x = m->at < e->instr_count ? e->instrs[m->at] : NULL;
	usc_hlo_instr *root = e->root;
	long dropped;

	c->dim = -1;
	c->from = c->to = 0;
	switch (m->kind) {
	case USC_REDUCE_DROP_DEAD:
		break;
	case USC_REDUCE_DROP_OUTPUT: {
		size_t n = root->operand_count;

		if (root->opcode != USC_HLO_OP_TUPLE || n < 2 || m->at >= n)
			return false;
		snprintf(c->what, sizeof c->what, "drop-output %zu", m->at);
		if (n == 2) {
			usc_hlo_instr *keep = root->operands[1 - m->at];

			root->is_root = false;
			keep->is_root = true;
			e->root = keep;
			break;
		}
		for (size_t k = m->at; k + 1 < n; k++) {
			root->operands[k] = root->operands[k + 1];
			root->shape.tuple[k] = root->shape.tuple[k + 1];
		}
		root->operand_count = n - 1;
		root->shape.tuple_count = n - 1;
		break;
	}
	case USC_REDUCE_TO_OPERAND: {
		usc_hlo_instr *y = x->operands[m->with];

		snprintf(c->what, sizeof c->what, "to-operand %s %zu %s",
			 x->name, m->with, y->name);
		replace_uses(e, x, y);
		break;
	}
	case USC_REDUCE_TO_PARAMETER: {
		usc_hlo_instr *y = e->instrs[m->with];

		snprintf(c->what, sizeof c->what, "to-parameter %s %s", x->name,
			 y->name);
		replace_uses(e, x, y);
		break;
	}
	case USC_REDUCE_CONSTANT:
		snprintf(c->what, sizeof c->what, "constant %s %d", x->name,
			 m->value);
		set_constant(x, m->value);
		break;
	case USC_REDUCE_SHRINK: {
		const usc_hlo_shape *s = shrinkable(e);
		int64_t from, to;

		if (!s || m->dim >= (int)s->rank)
			return false;
		from = s->dims[m->dim];
		to = (from + 1) / 2;
		for (size_t i = 0; i < e->instr_count; i++) {
			usc_hlo_instr *in = e->instrs[i];

			if (in->shape.kind == USC_HLO_SHAPE_ARRAY &&
			    in->shape.rank == s->rank)
				in->shape.dims[m->dim] = to;
			else if (in->shape.kind == USC_HLO_SHAPE_TUPLE)
				for (size_t k = 0; k < in->shape.tuple_count; k++)
					if (in->shape.tuple[k].rank == s->rank)
						in->shape.tuple[k].dims[m->dim] = to;
		}
		c->dim = m->dim;
		c->from = from;
		c->to = to;
		snprintf(c->what, sizeof c->what, "shrink %d %lld %lld", m->dim,
			 (long long)from, (long long)to);
		break;
	}
	}
	(void)f;
	dropped = clean(e);
	if (dropped < 0)
		return false;
	if (m->kind == USC_REDUCE_DROP_DEAD)
		snprintf(c->what, sizeof c->what, "drop-dead %ld", dropped);
	return true;
}

/*
 * Makes the candidate of move m: a fresh parse, the change, the text,
 * then a parse and verification of that text and its size.  *ok is false
 * when the move gives no valid smaller module (it is then left out).
 */
static usc_status make(const char *text, size_t len, const char *filename,
		       const usc_reduce_size *base, const move *m,
		       usc_reduce_candidate *c, bool *ok, usc_error *err)
{
	usc_hlo_print_options po = usc_hlo_print_options_default();
	usc_hlo_file *f, *g;
	usc_hlo_computation *e = NULL, *ge = NULL;
	usc_status st;
	usc_error ignored;

	*ok = false;
	memset(c, 0, sizeof *c);
	c->kind = m->kind;
	st = parse(text, len, filename, &f, &e, err);
	if (st != USC_OK)
		return st;
	if (!apply(f, e, m, c)) {
		usc_hlo_file_destroy(f);
		return USC_OK;
	}
	po.print_metadata = false;
	st = usc_hlo_module_print(e->parent, &po, &c->text, &c->len, err);
	usc_hlo_file_destroy(f);
	if (st != USC_OK)
		return st;
	/* A candidate that does not parse back or verify would be a fault
	 * of this file; leave it out rather than hand it to a compiler. */
	usc_error_clear(&ignored);
	if (usc_hlo_parse(c->text, c->len, "<candidate>", &g, &ignored) !=
	    USC_OK)
		goto drop;
	ge = usc_hlo_file_module(g, 0)->entry;
	if (usc_hlo_verify(ge->parent, &ignored) == USC_OK && ge->root) {
		size_of(ge, &c->size);
		*ok = usc_reduce_size_compare(&c->size, base) < 0;
	}
	usc_hlo_file_destroy(g);
	if (*ok)
		return USC_OK;
drop:
	usc_hlo_text_free(c->text);
	c->text = NULL;
	return USC_OK;
}

/* The moves of the entry e, into *moves (grown as needed). */
static usc_status list_moves(const usc_hlo_computation *e, move **moves,
			     size_t *count, usc_error *err)
{
	size_t cap = 16, n = 0;
	move *v = usc__calloc(cap, sizeof *v);
	bool *live = usc__calloc(e->instr_count ? e->instr_count : 1, 1);
	const usc_hlo_shape *s;

#define PUSH(...)                                                            \
	do {                                                                 \
		if (n == cap) {                                              \
			move *w = usc__calloc(cap * 2, sizeof *w);           \
			if (!w)                                              \
				goto oom;                                    \
			memcpy(w, v, n * sizeof *v);                         \
			usc__free(v);                                        \
			v = w;                                               \
			cap *= 2;                                            \
		}                                                            \
		v[n++] = (move){__VA_ARGS__};                                \
	} while (0)

	if (!v || !live)
		goto oom;
	/* Dead code goes in one move; changing it alone changes nothing. */
	mark(e->root, live);
	PUSH(.kind = USC_REDUCE_DROP_DEAD);
	if (e->root->opcode == USC_HLO_OP_TUPLE && e->root->operand_count > 1)
		for (size_t k = 0; k < e->root->operand_count; k++)
			PUSH(.kind = USC_REDUCE_DROP_OUTPUT, .at = k);
	for (size_t i = 0; i < e->instr_count; i++) {
		const usc_hlo_instr *x = e->instrs[i];

		if (!live[i] || x->opcode == USC_HLO_OP_PARAMETER ||
		    x->shape.kind != USC_HLO_SHAPE_ARRAY)
			continue;
		for (size_t k = 0; k < x->operand_count; k++) {
			bool seen = false;

			for (size_t j = 0; j < k; j++)
				seen |= x->operands[j] == x->operands[k];
			if (!seen && same_array(&x->shape, &x->operands[k]->shape))
				PUSH(.kind = USC_REDUCE_TO_OPERAND, .at = i,
				     .with = k);
		}
		for (size_t j = 0; j < e->instr_count; j++) {
			const usc_hlo_instr *p = e->instrs[j];
			bool operand = false;

			if (p->opcode != USC_HLO_OP_PARAMETER ||
			    !same_array(&x->shape, &p->shape))
				continue;
			for (size_t k = 0; k < x->operand_count; k++)
				operand |= x->operands[k] == p;
			if (!operand)
				PUSH(.kind = USC_REDUCE_TO_PARAMETER, .at = i,
				     .with = j);
		}
		if (x->opcode == USC_HLO_OP_CONSTANT && x->literal &&
		    x->literal->kind == USC_HLO_LITERAL_ARRAY &&
		    float_type(x->shape.dtype)) {
			bool simple = true;

			for (size_t k = 0; k < x->literal->count; k++)
				simple &= simple_value(x->literal->elems[k].value);
			for (int val = 0; val < 3 && !simple; val++)
				PUSH(.kind = USC_REDUCE_CONSTANT, .at = i,
				     .value = val);
		}
	}
	s = shrinkable(e);
	for (size_t d = 0; s && d < s->rank; d++)
		if (s->dims[d] > 1)
			PUSH(.kind = USC_REDUCE_SHRINK, .dim = (int)d);
#undef PUSH
	usc__free(live);
	*moves = v;
	*count = n;
	return USC_OK;
oom:
	usc__free(live);
	usc__free(v);
	return usc__fail(err, USC_ENOMEM, "usc_reduce_candidates: out of memory");
}

usc_status usc_reduce_candidates(const char *text, size_t len,
				 const char *filename,
				 usc_reduce_candidate **out, size_t *count,
				 usc_error *err)
{
	usc_hlo_file *f;
	usc_hlo_computation *e = NULL;
	usc_reduce_size base;
	usc_reduce_candidate *v = NULL;
	move *moves = NULL;
	size_t nmoves = 0, n = 0;
	usc_status st;

	if (!text || !out || !count)
		return usc__fail(err, USC_EINVAL,
				 "usc_reduce_candidates: NULL argument");
	*out = NULL;
	*count = 0;
	st = parse(text, len, filename, &f, &e, err);
	if (st != USC_OK)
		return st;
	st = usc_hlo_verify_ex(e->parent, filename, err);
	if (st == USC_OK) {
		size_of(e, &base);
		st = list_moves(e, &moves, &nmoves, err);
	}
	usc_hlo_file_destroy(f);
	if (st != USC_OK)
		return st;
	v = usc__calloc(nmoves ? nmoves : 1, sizeof *v);
	if (!v) {
		usc__free(moves);
		return usc__fail(err, USC_ENOMEM,
				 "usc_reduce_candidates: out of memory");
	}
	for (size_t i = 0; i < nmoves; i++) {
		bool ok;

		st = make(text, len, filename, &base, &moves[i], &v[n], &ok,
			  err);
		if (st != USC_OK)
			break;
		/* Two moves may give one module (an operand that is also a
		 * parameter elsewhere, dead code): keep the first. */
		for (size_t j = 0; ok && j < n; j++)
			if (v[j].len == v[n].len &&
			    memcmp(v[j].text, v[n].text, v[n].len) == 0) {
				usc_hlo_text_free(v[n].text);
				ok = false;
			}
		if (ok)
			n++;
	}
	usc__free(moves);
	if (st != USC_OK) {
		usc_reduce_candidates_free(v, n);
		return st;
	}
	*out = v;
	*count = n;
	return USC_OK;
}

void usc_reduce_candidates_free(usc_reduce_candidate *c, size_t count)
{
	if (!c)
		return;
	for (size_t i = 0; i < count; i++)
		usc_hlo_text_free(c[i].text);
	usc__free(c);
}
