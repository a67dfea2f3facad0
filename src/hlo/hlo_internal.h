/*
 * Internals shared by the files of src/hlo: the arena that owns a parsed
 * file, a scratch stack for lists whose length is unknown until they end,
 * and a string-keyed hash map for name lookups.
 */
#ifndef USC_HLO_INTERNAL_H
#define USC_HLO_INTERNAL_H

#include "internal.h"

#include "ulpscope/hlo.h"

/*
 * An arena: every node of a parsed file lives in a few large blocks, so
 * destroying a file (or abandoning a failed parse) is a walk over blocks,
 * and no node can leak on its own.
 */
typedef struct usc__hlo_block usc__hlo_block;
typedef struct usc__hlo_arena {
	usc__hlo_block *head;
	char *cur;
	size_t left;
} usc__hlo_arena;

void *usc__hlo_arena_alloc(usc__hlo_arena *a, size_t size) USC__WUR;
/* Zeroed memory for count elements of size bytes (overflow-checked). */
void *usc__hlo_arena_calloc(usc__hlo_arena *a, size_t count,
			    size_t size) USC__WUR;
char *usc__hlo_arena_strndup(usc__hlo_arena *a, const char *s,
			     size_t n) USC__WUR;
void usc__hlo_arena_free(usc__hlo_arena *a);

/*
 * The scratch stack: lists under construction are pushed on top and, when
 * complete, copied into the arena and popped.  Nested lists (a tuple shape
 * inside an instruction inside a computation) finish before their parent
 * resumes, so one stack serves them all.  Elements are 8-byte aligned.
 */
typedef struct usc__hlo_stack {
	unsigned char *data;
	size_t len;
	size_t cap;
} usc__hlo_stack;

usc_status usc__hlo_stack_push(usc__hlo_stack *s, const void *item,
			       size_t size) USC__WUR;
/* Copies [start, len) into the arena as an array and pops it. */
usc_status usc__hlo_stack_finish(usc__hlo_stack *s, size_t start,
				 usc__hlo_arena *a, void **out) USC__WUR;
void usc__hlo_stack_free(usc__hlo_stack *s);

/* Open addressing over (pointer, length) keys. */
/*
 * Entries carry the generation they were written in: clearing the map
 * bumps the generation instead of wiping the table, so a module of many
 * small computations after one big one does not pay for the big table
 * at every computation.
 */
typedef struct usc__hlo_map_entry {
	const char *key;
	size_t len;
	void *value;
	size_t gen;
} usc__hlo_map_entry;

typedef struct usc__hlo_map {
	usc__hlo_map_entry *slots;
	size_t cap; /* a power of two, or 0 */
	size_t count;
	size_t gen;
} usc__hlo_map;

void *usc__hlo_map_get(const usc__hlo_map *m, const char *key, size_t len);
/* Inserts; *existing receives the old value when the key is present. */
usc_status usc__hlo_map_put(usc__hlo_map *m, const char *key, size_t len,
			    void *value, void **existing) USC__WUR;
void usc__hlo_map_clear(usc__hlo_map *m);
void usc__hlo_map_free(usc__hlo_map *m);

struct usc_hlo_file {
	usc__hlo_arena arena;
	size_t module_count;
	usc_hlo_module **modules;
	const char *filename;
};

#endif /* USC_HLO_INTERNAL_H */
