/*
 * The cone's match of two modules parsed from HLO text (cone.h): the
 * printed kernel and a mutant written from it, whose unchanged lines are
 * the same bytes.  An instruction's counterpart is the base's instruction
 * of the same name, in the computation of the same name, on a line of the
 * same text: the line holds the whole instruction (the printer writes one
 * a line), its shape, operands by name, attributes and called
 * computations by name, so two equal lines are the same op on the same
 * named operands.  The base's names are hashed once; each mutant costs a
 * pass over its text for the line starts.
 */
#include "internal.h"
#include "eval/cone.h"

#include <string.h>

typedef struct line_table {
	const char *text;
	size_t len;
	size_t *start; /* by line number - 1 */
	size_t n, cap;
} line_table;

struct usc__cone_text {
	const usc_hlo_module *base;
	line_table bl, cl;
	const usc_hlo_instr **hash; /* open addressing, by name */
	size_t hcap;
	const usc_hlo_computation **chash; /* computations, by name */
	size_t ccap;
};

/* FNV-1a: names are short and the table is built once. */
static size_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211u;
	}
	return (size_t)h;
}

static bool lines_index(line_table *t, const char *text, size_t len)
{
	t->text = text;
	t->len = len;
	t->n = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i != 0 && text[i - 1] != '\n')
			continue;
		if (i == len && i != 0)
			break;
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 1024;
			size_t *p = usc__reallocarray(t->start, cap, sizeof *p);

			if (!p)
				return false;
			t->start = p;
			t->cap = cap;
		}
		t->start[t->n++] = i;
	}
	return true;
}

/* The text of line l (1-based), without its newline; false if none. */
static bool line_of(const line_table *t, uint32_t l, const char **p,
		    size_t *n)
{
	size_t b, e;

	if (l == 0 || l > t->n)
		return false;
	b = t->start[l - 1];
	e = b;
	while (e < t->len && t->text[e] != '\n')
		e++;
	*p = t->text + b;
	*n = e - b;
	return true;
}

static const usc_hlo_instr *find_instr(const usc__cone_text *t,
				       const char *name)
{
	size_t mask = t->hcap - 1;

	for (size_t h = hash_name(name) & mask;; h = (h + 1) & mask) {
		if (!t->hash[h])
			return NULL;
		if (strcmp(t->hash[h]->name, name) == 0)
			return t->hash[h];
	}
}

static const usc_hlo_computation *find_comp(const usc__cone_text *t,
					    const char *name)
{
	size_t mask = t->ccap - 1;

	for (size_t h = hash_name(name) & mask;; h = (h + 1) & mask) {
		if (!t->chash[h])
			return NULL;
		if (strcmp(t->chash[h]->name, name) == 0)
			return t->chash[h];
	}
}

static const usc_hlo_computation *text_comp(void *ctx,
					    const usc_hlo_computation *c)
{
	return c->name ? find_comp(ctx, c->name) : NULL;
}

static const usc_hlo_instr *text_instr(void *ctx, const usc_hlo_instr *x)
{
	const usc__cone_text *t = ctx;
	const usc_hlo_instr *b = x->name ? find_instr(t, x->name) : NULL;
	const char *lb, *lx;
	size_t nb, nx;

	if (!b || !b->parent || !x->parent || !b->parent->name ||
	    !x->parent->name || strcmp(b->parent->name, x->parent->name) != 0)
		return NULL;
	if (!line_of(&t->bl, b->loc.line, &lb, &nb) ||
	    !line_of(&t->cl, x->loc.line, &lx, &nx) || nb != nx ||
	    memcmp(lb, lx, nb) != 0)
		return NULL;
	return b;
}

static size_t pow2_above(size_t n)
{
	size_t c = 16;

	while (c < 2 * n + 1)
		c *= 2;
	return c;
}

usc_status usc__cone_text_create(const usc_hlo_module *base, const char *text,
				 size_t len, usc__cone_text **out,
				 usc_error *err)
{
	usc__cone_text *t = usc__calloc(1, sizeof *t);
	size_t ni = 0;

	*out = NULL;
	if (!t)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	t->base = base;
	for (size_t i = 0; i < base->computation_count; i++)
		ni += base->computations[i]->instr_count;
	t->hcap = pow2_above(ni);
	t->ccap = pow2_above(base->computation_count);
	t->hash = usc__calloc(t->hcap, sizeof *t->hash);
	t->chash = usc__calloc(t->ccap, sizeof *t->chash);
	if (!t->hash || !t->chash || !lines_index(&t->bl, text, len)) {
		usc__cone_text_destroy(t);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < base->computation_count; i++) {
		const usc_hlo_computation *c = base->computations[i];
		size_t h;

		/*
		 * A name written twice has no one counterpart: the first
		 * stays, and the line and computation checks refuse any
		 * instruction that is not it.
		 */
		if (c->name && !find_comp(t, c->name)) {
			for (h = hash_name(c->name) & (t->ccap - 1);
			     t->chash[h]; h = (h + 1) & (t->ccap - 1))
				;
			t->chash[h] = c;
		}
		for (size_t j = 0; j < c->instr_count; j++) {
			const usc_hlo_instr *x = c->instrs[j];

			if (!x->name || find_instr(t, x->name))
				continue;
			for (h = hash_name(x->name) & (t->hcap - 1);
			     t->hash[h]; h = (h + 1) & (t->hcap - 1))
				;
			t->hash[h] = x;
		}
	}
	*out = t;
	return USC_OK;
}

usc_status usc__cone_text_match(usc__cone_text *t,
				const usc_hlo_module *changed,
				const char *text, size_t len,
				usc__cone_match *m, usc_error *err)
{
	(void)changed;
	if (!lines_index(&t->cl, text, len))
		return usc__fail(err, USC_ENOMEM, "out of memory");
	m->comp = text_comp;
	m->instr = text_instr;
	m->ctx = t;
	return USC_OK;
}

void usc__cone_text_destroy(usc__cone_text *t)
{
	if (!t)
		return;
	usc__free(t->bl.start);
	usc__free(t->cl.start);
	usc__free(t->hash);
	usc__free(t->chash);
	usc__free(t);
}
