/*
 * The HLO IR's storage (arena, scratch stack, name map), its accessors and
 * structural equality.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "hlo/hlo_internal.h"

/* ----------------------------------------------------------------- arena */

struct usc__hlo_block {
	usc__hlo_block *next;
	/* Keeps the payload that follows 16-byte aligned. */
	max_align_t align;
};

/* Large enough that a 200 KB module needs a handful of blocks. */
#define ARENA_BLOCK (64u * 1024u)
#define ARENA_ALIGN 16u

void *usc__hlo_arena_alloc(usc__hlo_arena *a, size_t size)
{
	void *p;

	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	if (size > a->left) {
		size_t payload = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
		usc__hlo_block *b;

		if (payload > SIZE_MAX - sizeof *b)
			return NULL;
		b = usc__malloc(sizeof *b + payload);
		if (!b)
			return NULL;
		if (payload == size && a->head) {
			/*
			 * A big request gets a block of its own, linked behind
			 * the current one so the current block's free space
			 * stays in use.
			 */
			b->next = a->head->next;
			a->head->next = b;
			return (char *)(b + 1);
		}
		b->next = a->head;
		a->head = b;
		a->cur = (char *)(b + 1);
		a->left = payload;
	}
	p = a->cur;
	a->cur += size;
	a->left -= size;
	return p;
}

void *usc__hlo_arena_calloc(usc__hlo_arena *a, size_t count, size_t size)
{
	void *p;

	if (size && count > SIZE_MAX / size)
		return NULL;
	p = usc__hlo_arena_alloc(a, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

char *usc__hlo_arena_strndup(usc__hlo_arena *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = usc__hlo_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void usc__hlo_arena_free(usc__hlo_arena *a)
{
	usc__hlo_block *b = a->head;

	while (b) {
		usc__hlo_block *next = b->next;

		usc__free(b);
		b = next;
	}
	a->head = NULL;
	a->cur = NULL;
	a->left = 0;
}

/* ----------------------------------------------------------------- stack */

usc_status usc__hlo_stack_push(usc__hlo_stack *s, const void *item,
			       size_t size)
{
	size_t need = (size + 7) & ~(size_t)7;

	if (s->cap - s->len < need) {
		size_t cap = s->cap ? s->cap : 4096;
		unsigned char *d;

		while (cap - s->len < need) {
			if (cap > SIZE_MAX / 2)
				return USC_ENOMEM;
			cap *= 2;
		}
		d = usc__realloc(s->data, cap);
		if (!d)
			return USC_ENOMEM;
		s->data = d;
		s->cap = cap;
	}
	memcpy(s->data + s->len, item, size);
	s->len += need;
	return USC_OK;
}

usc_status usc__hlo_stack_finish(usc__hlo_stack *s, size_t start,
				 usc__hlo_arena *a, void **out)
{
	size_t n = s->len - start;

	*out = NULL;
	if (n) {
		void *p = usc__hlo_arena_alloc(a, n);

		if (!p)
			return USC_ENOMEM;
		memcpy(p, s->data + start, n);
		*out = p;
	}
	s->len = start;
	return USC_OK;
}

void usc__hlo_stack_free(usc__hlo_stack *s)
{
	usc__free(s->data);
	s->data = NULL;
	s->len = s->cap = 0;
}

/* ------------------------------------------------------------------- map */

/* FNV-1a: short identifiers, no adversarial keys worth a keyed hash. */
static size_t hash_key(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)k[i];
		h *= 1099511628211u;
	}
	return (size_t)(h ^ (h >> 32));
}

void *usc__hlo_map_get(const usc__hlo_map *m, const char *key, size_t len)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = hash_key(key, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const usc__hlo_map_entry *e = &m->slots[i];

		if (!e->key || e->gen != m->gen)
			return NULL;
		if (e->len == len && memcmp(e->key, key, len) == 0)
			return e->value;
	}
}

static usc_status map_grow(usc__hlo_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	usc__hlo_map_entry *slots = usc__calloc(cap, sizeof *slots);

	if (!slots)
		return USC_ENOMEM;
	for (i = 0; i < m->cap; i++) {
		usc__hlo_map_entry *e = &m->slots[i];
		size_t j;

		if (!e->key || e->gen != m->gen)
			continue;
		for (j = hash_key(e->key, e->len) & (cap - 1); slots[j].key;
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = *e;
	}
	usc__free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return USC_OK;
}

usc_status usc__hlo_map_put(usc__hlo_map *m, const char *key, size_t len,
			    void *value, void **existing)
{
	size_t i;

	*existing = NULL;
	if ((m->count + 1) * 2 > m->cap) {
		usc_status st = map_grow(m);

		if (st != USC_OK)
			return st;
	}
	for (i = hash_key(key, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		usc__hlo_map_entry *e = &m->slots[i];

		if (!e->key || e->gen != m->gen) {
			e->key = key;
			e->len = len;
			e->value = value;
			e->gen = m->gen;
			m->count++;
			return USC_OK;
		}
		if (e->len == len && memcmp(e->key, key, len) == 0) {
			*existing = e->value;
			return USC_OK;
		}
	}
}

void usc__hlo_map_clear(usc__hlo_map *m)
{
	m->gen++;
	m->count = 0;
}

void usc__hlo_map_free(usc__hlo_map *m)
{
	usc__free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

/* ------------------------------------------------------------- accessors */

void usc_hlo_file_destroy(usc_hlo_file *f)
{
	usc__hlo_arena arena;

	if (!f)
		return;
	/* The file itself lives in its arena. */
	arena = f->arena;
	usc__hlo_arena_free(&arena);
}

size_t usc_hlo_file_module_count(const usc_hlo_file *f)
{
	return f ? f->module_count : 0;
}

usc_hlo_module *usc_hlo_file_module(const usc_hlo_file *f, size_t i)
{
	if (!f || i >= f->module_count)
		return NULL;
	return f->modules[i];
}

usc_hlo_computation *usc_hlo_module_computation(const usc_hlo_module *m,
						const char *name)
{
	size_t i;

	if (!m || !name)
		return NULL;
	for (i = 0; i < m->computation_count; i++)
		if (strcmp(m->computations[i]->name, name) == 0)
			return m->computations[i];
	return NULL;
}

usc_hlo_instr *usc_hlo_computation_instr(const usc_hlo_computation *c,
					 const char *name)
{
	size_t i;

	if (!c || !name)
		return NULL;
	for (i = 0; i < c->instr_count; i++)
		if (strcmp(c->instrs[i]->name, name) == 0)
			return c->instrs[i];
	return NULL;
}

const usc_hlo_attr *usc_hlo_instr_attr(const usc_hlo_instr *in,
				       const char *name)
{
	size_t i;

	if (!in || !name)
		return NULL;
	for (i = 0; i < in->attr_count; i++)
		if (strcmp(in->attrs[i].name, name) == 0)
			return &in->attrs[i];
	return NULL;
}

int64_t usc_hlo_shape_elements(const usc_hlo_shape *s)
{
	int64_t n = 1;
	size_t i;

	if (!s || s->kind != USC_HLO_SHAPE_ARRAY)
		return 0;
	for (i = 0; i < s->rank; i++) {
		if (s->dims[i] < 0)
			return 0;
		if (s->dims[i] && n > INT64_MAX / s->dims[i])
			return INT64_MAX;
		n *= s->dims[i];
	}
	return n;
}

/* ------------------------------------------------------------- equality */

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

bool usc_hlo_shape_equal(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	size_t i;

	if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank ||
	    a->tuple_count != b->tuple_count || !str_eq(a->layout, b->layout))
		return false;
	for (i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i] ||
		    a->dim_kinds[i] != b->dim_kinds[i])
			return false;
	for (i = 0; i < a->tuple_count; i++)
		if (!usc_hlo_shape_equal(&a->tuple[i], &b->tuple[i]))
			return false;
	return true;
}

static bool literal_equal(const usc_hlo_literal *a, const usc_hlo_literal *b)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->count != b->count ||
	    a->tuple_count != b->tuple_count)
		return false;
	for (i = 0; i < a->count; i++)
		if (!str_eq(a->elems[i].text, b->elems[i].text) ||
		    !str_eq(a->elems[i].imag_text, b->elems[i].imag_text))
			return false;
	for (i = 0; i < a->tuple_count; i++)
		if (!literal_equal(&a->tuple[i], &b->tuple[i]))
			return false;
	return true;
}

static bool metadata_equal(const usc_hlo_metadata *a,
			   const usc_hlo_metadata *b)
{
	size_t i;

	if (!str_eq(a->op_type, b->op_type) || !str_eq(a->op_name, b->op_name) ||
	    !str_eq(a->source_file, b->source_file) ||
	    a->source_line != b->source_line || a->other_count != b->other_count)
		return false;
	for (i = 0; i < a->other_count; i++)
		if (!str_eq(a->others[i].key, b->others[i].key) ||
		    !str_eq(a->others[i].value, b->others[i].value))
			return false;
	return true;
}

static bool attr_equal(const usc_hlo_attr *a, const usc_hlo_attr *b)
{
	size_t i;

	if (!str_eq(a->name, b->name) || a->kind != b->kind ||
	    a->count != b->count)
		return false;
	switch (a->kind) {
	case USC_HLO_ATTR_INT:
		return a->i == b->i;
	case USC_HLO_ATTR_BOOL:
		return a->b == b->b;
	case USC_HLO_ATTR_RAW:
	case USC_HLO_ATTR_STRING:
	case USC_HLO_ATTR_IDENT:
	case USC_HLO_ATTR_DIM_LABELS:
		return str_eq(a->text, b->text);
	case USC_HLO_ATTR_INTS:
		return a->count == 0 ||
		       memcmp(a->ints, b->ints, a->count * sizeof *a->ints) == 0;
	case USC_HLO_ATTR_NAMES:
		for (i = 0; i < a->count; i++)
			if (!str_eq(a->names[i], b->names[i]))
				return false;
		return true;
	case USC_HLO_ATTR_COMPUTATIONS:
		for (i = 0; i < a->count; i++)
			if (a->comps[i]->index != b->comps[i]->index ||
			    !str_eq(a->names[i], b->names[i]))
				return false;
		return true;
	case USC_HLO_ATTR_SLICE:
		for (i = 0; i < a->count; i++)
			if (a->slice[i].start != b->slice[i].start ||
			    a->slice[i].limit != b->slice[i].limit ||
			    a->slice[i].stride != b->slice[i].stride ||
			    a->slice[i].has_stride != b->slice[i].has_stride)
				return false;
		return true;
	case USC_HLO_ATTR_PADDING:
		for (i = 0; i < a->count; i++)
			if (a->pad[i].lo != b->pad[i].lo ||
			    a->pad[i].hi != b->pad[i].hi ||
			    a->pad[i].interior != b->pad[i].interior ||
			    a->pad[i].has_interior != b->pad[i].has_interior)
				return false;
		return true;
	case USC_HLO_ATTR_WINDOW:
		if (a->window_fields != b->window_fields)
			return false;
		for (i = 0; i < a->count; i++) {
			const usc_hlo_window_dim *x = &a->window[i];
			const usc_hlo_window_dim *y = &b->window[i];

			if (x->size != y->size || x->stride != y->stride ||
			    x->pad_lo != y->pad_lo || x->pad_hi != y->pad_hi ||
			    x->lhs_dilate != y->lhs_dilate ||
			    x->rhs_dilate != y->rhs_dilate ||
			    x->rhs_reversal != y->rhs_reversal)
				return false;
		}
		return true;
	case USC_HLO_ATTR_METADATA:
		return metadata_equal(a->metadata, b->metadata);
	}
	return false;
}

#define DIFF(...)                                                            \
	do {                                                                 \
		if (diff && diff_size)                                       \
			snprintf(diff, diff_size, __VA_ARGS__);              \
		return false;                                                \
	} while (0)

static bool instr_equal(const usc_hlo_instr *a, const usc_hlo_instr *b,
			char *diff, size_t diff_size)
{
	size_t i;

	if (!str_eq(a->name, b->name))
		DIFF("instruction %zu: name %s vs %s", a->index, a->name,
		     b->name);
	if (a->opcode != b->opcode)
		DIFF("%s: opcode %s vs %s", a->name,
		     usc_hlo_opcode_name(a->opcode),
		     usc_hlo_opcode_name(b->opcode));
	if (!usc_hlo_shape_equal(&a->shape, &b->shape))
		DIFF("%s: shapes differ", a->name);
	if (a->operand_count != b->operand_count)
		DIFF("%s: %zu vs %zu operands", a->name, a->operand_count,
		     b->operand_count);
	for (i = 0; i < a->operand_count; i++)
		if (a->operands[i]->index != b->operands[i]->index)
			DIFF("%s: operand %zu differs", a->name, i);
	if (a->called_count != b->called_count)
		DIFF("%s: called computations differ", a->name);
	for (i = 0; i < a->called_count; i++)
		if (a->called[i]->index != b->called[i]->index)
			DIFF("%s: called computation %zu differs", a->name, i);
	if (a->attr_count != b->attr_count)
		DIFF("%s: %zu vs %zu attributes", a->name, a->attr_count,
		     b->attr_count);
	for (i = 0; i < a->attr_count; i++)
		if (!attr_equal(&a->attrs[i], &b->attrs[i]))
			DIFF("%s: attribute %s differs", a->name,
			     a->attrs[i].name);
	if (!literal_equal(a->literal, b->literal))
		DIFF("%s: literals differ", a->name);
	if (a->parameter_number != b->parameter_number ||
	    a->is_root != b->is_root)
		DIFF("%s: parameter number or root differs", a->name);
	return true;
}

bool usc_hlo_module_equal(const usc_hlo_module *a, const usc_hlo_module *b,
			  char *diff, size_t diff_size)
{
	size_t i, j;

	if (!a || !b) {
		if (a == b)
			return true;
		DIFF("one module is missing");
	}
	if (!str_eq(a->name, b->name) || a->has_header != b->has_header)
		DIFF("module names differ");
	if (a->attr_count != b->attr_count)
		DIFF("module attribute counts differ");
	for (i = 0; i < a->attr_count; i++)
		if (!attr_equal(&a->attrs[i], &b->attrs[i]))
			DIFF("module attribute %s differs", a->attrs[i].name);
	if (a->table_count != b->table_count)
		DIFF("stack-frame table counts differ");
	for (i = 0; i < a->table_count; i++) {
		if (!str_eq(a->tables[i].name, b->tables[i].name) ||
		    a->tables[i].count != b->tables[i].count)
			DIFF("stack-frame table %zu differs", i);
		for (j = 0; j < a->tables[i].count; j++)
			if (a->tables[i].entries[j].id !=
				    b->tables[i].entries[j].id ||
			    !str_eq(a->tables[i].entries[j].value,
				    b->tables[i].entries[j].value))
				DIFF("table %s entry %zu differs",
				     a->tables[i].name, j);
	}
	if (a->computation_count != b->computation_count)
		DIFF("%zu vs %zu computations", a->computation_count,
		     b->computation_count);
	if ((a->entry ? (long)a->entry->index : -1) !=
	    (b->entry ? (long)b->entry->index : -1))
		DIFF("entry computations differ");
	for (i = 0; i < a->computation_count; i++) {
		const usc_hlo_computation *x = a->computations[i];
		const usc_hlo_computation *y = b->computations[i];

		if (!str_eq(x->name, y->name))
			DIFF("computation %zu: name %s vs %s", i, x->name,
			     y->name);
		if (x->instr_count != y->instr_count)
			DIFF("%s: %zu vs %zu instructions", x->name,
			     x->instr_count, y->instr_count);
		if (x->root->index != y->root->index)
			DIFF("%s: roots differ", x->name);
		for (j = 0; j < x->instr_count; j++)
			if (!instr_equal(x->instrs[j], y->instrs[j], diff,
					 diff_size))
				return false;
	}
	return true;
}
