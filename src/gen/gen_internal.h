/*
 * Internals of the kernel generator: a small builder that makes IR nodes
 * in a parsed file's arena (build.c), used by the random choices of
 * gen.c.  A builder call that runs out of memory sets oom and returns
 * NULL; every builder call given a NULL operand returns NULL too, so a
 * step can be written straight through and the failure is reported once,
 * at the end.
 */
#ifndef USC_GEN_INTERNAL_H
#define USC_GEN_INTERNAL_H

#include "internal.h"

#include "hlo/hlo_internal.h"
#include "ulpscope/gen.h"

#define USC__GEN_MAX_COMPS 16
#define USC__GEN_MAX_ATTRS 4

typedef struct usc__gen {
	usc_gen_rng rng;
	usc_gen_options opts;
	usc__hlo_arena *arena;
	usc_hlo_file *file;
	usc_hlo_module *module;
	usc_hlo_computation *entry;
	/* The entry's instructions so far: an arena array of cap slots. */
	usc_hlo_instr **instrs;
	size_t count, cap;
	size_t *users; /* per entry instruction: how many use it */
	size_t params;
	usc_hlo_computation *comps[USC__GEN_MAX_COMPS];
	size_t comp_count;
	unsigned counter;
	bool oom;
} usc__gen;

/* An array shape of rank dims in the arena (layout none). */
bool usc__gen_shape(usc__gen *g, usc_hlo_shape *s, usc_dtype t, size_t rank,
		    const int64_t *dims);
/*
 * A new instruction of the entry with a result of type t and the given
 * dims, appended to the entry, its operands' user counts raised.
 */
usc_hlo_instr *usc__gen_instr(usc__gen *g, usc_hlo_opcode op, usc_dtype t,
			      size_t rank, const int64_t *dims, size_t nops,
			      usc_hlo_instr *const *ops);
/* The same shape as src's, with element type t. */
usc_hlo_instr *usc__gen_like(usc__gen *g, usc_hlo_opcode op, usc_dtype t,
			     const usc_hlo_instr *src, size_t nops,
			     usc_hlo_instr *const *ops);
usc_hlo_instr *usc__gen_parameter(usc__gen *g, usc_dtype t, size_t rank,
				  const int64_t *dims);
/* A scalar constant whose literal is text. */
usc_hlo_instr *usc__gen_constant(usc__gen *g, usc_dtype t, const char *text);

/* Attributes on in (NULL in: nothing). */
void usc__gen_attr_ints(usc__gen *g, usc_hlo_instr *in, const char *name,
			const int64_t *v, size_t n);
void usc__gen_attr_int(usc__gen *g, usc_hlo_instr *in, const char *name,
		       int64_t v);
void usc__gen_attr_ident(usc__gen *g, usc_hlo_instr *in, const char *name,
			 const char *text);
void usc__gen_attr_slice(usc__gen *g, usc_hlo_instr *in,
			 const usc_hlo_slice_dim *d, size_t n);
void usc__gen_attr_window(usc__gen *g, usc_hlo_instr *in,
			  const usc_hlo_window_dim *d, size_t n);
/* to_apply=COMP, also recorded as the instruction's called computation. */
void usc__gen_attr_apply(usc__gen *g, usc_hlo_instr *in,
			 usc_hlo_computation *c);

/*
 * The scalar computation (x, y) -> op(x, y) of type t ("add_f32"), made
 * on first use and placed before the entry.
 */
usc_hlo_computation *usc__gen_binary_comp(usc__gen *g, usc_hlo_opcode op,
					  usc_dtype t);

/* Puts the entry last, marks root (a tuple when several) and finishes. */
bool usc__gen_finish(usc__gen *g, usc_hlo_instr *const *outs, size_t n);

#endif /* USC_GEN_INTERNAL_H */
