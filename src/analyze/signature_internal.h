/*
 * Defect signatures, internal (docs/signatures.md).
 *
 * The pieces and who owns what:
 *   - signature_text.c prints the module once and writes one mutant's
 *     text: the mutated op's line replaced by the lines a mutation family
 *     writes through a usc__sig_ctx (helpers below).  The text is the
 *     caller's to free.
 *   - signature_mut_*.c are the mutation families: each function writes
 *     the replacement lines of one (op, variant) and returns false when
 *     the mutation does not apply to that op (nothing written then).
 *   - signature_catalogue.c names the catalogue and dispatches a kind to
 *     its family.
 *   - signature_score.c scores a mutant's outputs (strict values and,
 *     under a profile, envelopes) against one device set and ranks the
 *     candidates.
 *   - signature.c is the search: enumeration, budget, evaluations.
 * Nothing here fails on bad input: a mutation that cannot be written does
 * not apply, and a mutant that does not parse or evaluate is counted
 * failed by the search.
 */
#ifndef USC_ANALYZE_SIGNATURE_INTERNAL_H
#define USC_ANALYZE_SIGNATURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/hlo.h"
#include "ulpscope/signature.h"
#include "ulpscope/tensor.h"

/* ------------------------------------------------------ mutant text */

/* A growing text; oom set (and nothing more added) when memory runs out. */
typedef struct usc__sig_buf {
	char *p;
	size_t len, cap;
	bool oom;
} usc__sig_buf;

void usc__sig_sb_add(usc__sig_buf *b, const char *s, size_t n);
void usc__sig_sb_printf(usc__sig_buf *b, const char *fmt, ...)
	USC__PRINTF(2, 3);

/* The module as short-form text without metadata (the printer's). */
typedef struct usc__sig_text {
	char *text;
	size_t len;
	/*
	 * Where the last line found starts and its computation's block: the
	 * searches go through the instructions in text order, so the next
	 * line sought is at or after it, and a module of a million ops is
	 * not scanned from its start a million times.
	 */
	bool hinted;
	size_t hint_pos, hint_block;
} usc__sig_text;

/* One op's mutant being written. */
typedef struct usc__sig_ctx {
	const usc_hlo_instr *in;
	const char *line;   /* the instruction's line */
	size_t line_len;
	size_t name_at;     /* offset of the name in line */
	const char *rest;   /* after the operand list's ')' */
	size_t rest_len;
	usc__sig_buf out;   /* the replacement lines */
	usc__sig_buf pre;   /* new computations, before the first one */
	int tmp;
	char *detail;
	size_t detail_size;
} usc__sig_ctx;

void usc__sig_set_detail(usc__sig_ctx *c, const char *fmt, ...)
	USC__PRINTF(2, 3);
/* A fresh helper name, "<op>.sgN", in buf (160 bytes); returns buf. */
const char *usc__sig_hname(usc__sig_ctx *c, char buf[160]);
/* "TYPE[d0,d1]" with the dims of like (no layout). */
void usc__sig_shape_txt(char *buf, size_t n, usc_dtype t,
			const usc_hlo_shape *like);
/* One instruction line: indent, ROOT, name = shape op(args)rest. */
void usc__sig_emit(usc__sig_ctx *c, bool root, const char *name,
		   const char *shape, const char *op, const char *args,
		   const char *rest);
/* The original line, under another name and never ROOT. */
void usc__sig_emit_renamed(usc__sig_ctx *c, const char *name);
/* The original rest of the line (attributes after the operands). */
const char *usc__sig_rest_dup(usc__sig_ctx *c, char *buf, size_t n);
/*
 * The rest with attribute attr's value (a braced {...}) replaced by
 * value; false when the attribute is not there.
 */
bool usc__sig_rest_replace(usc__sig_ctx *c, const char *attr,
			   const char *value, char *buf, size_t n);
/* The args "a, b" of in, operand k replaced by sub (NULL: none). */
void usc__sig_args_with(const usc_hlo_instr *in, size_t k, const char *sub,
			char *buf, size_t n);
/* A scalar constant and its broadcast to like's dims: the name in out. */
const char *usc__sig_splat(usc__sig_ctx *c, usc_dtype t, const char *value,
			   const usc_hlo_shape *like, char out[160]);
/* Each operand converted to shape sh; their names, comma-separated. */
void usc__sig_convert_operands(usc__sig_ctx *c, const char *sh, char *args,
			       size_t cap);

/*
 * A float constant whose elements all hold one value: a scalar, or the
 * array XLA writes when it folds the broadcast of a scalar constant.
 * The constant mutations move that value (docs/signatures.md).
 */
bool usc__sig_splat_constant(const usc_hlo_instr *in);
/* The mutated constant: value val in every element of c->in's shape. */
void usc__sig_emit_constant(usc__sig_ctx *c, const char *val);

bool usc__sig_is_array(const usc_hlo_shape *s);
bool usc__sig_is_float_array(const usc_hlo_shape *s);
int usc__sig_fbits(usc_dtype t);
int usc__sig_precision_of(usc_dtype t);
bool usc__sig_same_dims(const usc_hlo_shape *a, const usc_hlo_shape *b);
bool usc__sig_same_shape(const usc_hlo_shape *a, const usc_hlo_shape *b);
/* Float arithmetic whose operands all have the result's shape and type. */
bool usc__sig_float_arith(const usc_hlo_instr *in);
/* A float -> float convert; a narrowing one. */
bool usc__sig_float_convert(const usc_hlo_instr *in);
bool usc__sig_narrowing_convert(const usc_hlo_instr *in);
/* The unsigned type of a width (8..64 bits), for encodings. */
usc_dtype usc__sig_uint_of_bits(int bits);
/* "[0:a], [0:d1], ...": dimension dim cut to [0:hi), the others whole. */
void usc__sig_slice_txt(char *buf, size_t n, const usc_hlo_shape *sh,
			size_t dim, int64_t hi);

/*
 * Whether in is the add of a region that a float reduce or reduce-window
 * of the module sums with (the narrow-accumulator's op, not this one).
 */
bool usc__sig_accumulator_region(const usc_hlo_instr *in);
/* Whether in is float arithmetic feeding such a reduction as its input. */
bool usc__sig_feeds_accumulator(const usc_hlo_instr *in);

/* The mutation families: the replacement lines, false if not applicable. */
bool usc__sig_mut_narrow(usc__sig_ctx *c, int v);
bool usc__sig_mut_round(usc__sig_ctx *c, usc_mutation mode);
bool usc__sig_mut_skip_rounding(usc__sig_ctx *c);
bool usc__sig_mut_flush(usc__sig_ctx *c);
bool usc__sig_mut_convert_saturate(usc__sig_ctx *c);
bool usc__sig_mut_convert_nan(usc__sig_ctx *c);
bool usc__sig_mut_narrow_accumulator(usc__sig_ctx *c, int v);
bool usc__sig_mut_convert_int(usc__sig_ctx *c, usc_mutation kind);
bool usc__sig_mut_nan_dropping(usc__sig_ctx *c);
bool usc__sig_mut_swap(usc__sig_ctx *c);
bool usc__sig_mut_drop(usc__sig_ctx *c, int v);
bool usc__sig_mut_wrong_init(usc__sig_ctx *c);
bool usc__sig_mut_wrong_constant(usc__sig_ctx *c, int v);
bool usc__sig_mut_constant_ulps(usc__sig_ctx *c, int v);
bool usc__sig_mut_flip_compare(usc__sig_ctx *c, int v);
bool usc__sig_mut_swap_clamp_bounds(usc__sig_ctx *c);
bool usc__sig_mut_off_by_one(usc__sig_ctx *c, int v);
bool usc__sig_mut_transposed(usc__sig_ctx *c, int v);
bool usc__sig_mut_wrong_reduce_dim(usc__sig_ctx *c, int v);
bool usc__sig_mut_zero(usc__sig_ctx *c);
bool usc__sig_mut_stale(usc__sig_ctx *c, int v);
bool usc__sig_mut_dot_transpose_output(usc__sig_ctx *c);
bool usc__sig_mut_dot_transpose_operand(usc__sig_ctx *c, int v);
bool usc__sig_mut_wrong_window(usc__sig_ctx *c, int v);
bool usc__sig_mut_broadcast_permute(usc__sig_ctx *c, int v);

/* Writes the replacement lines of one mutation (the catalogue's switch). */
bool usc__sig_mutate_lines(usc__sig_ctx *c, usc_mutation kind, int v);

/* The module printed for mutation. */
usc_status usc__sig_print_base(const usc_hlo_module *m, usc__sig_text *bt,
			       usc_error *err);
/*
 * The mutant text of in (kind, v) from the printed module bt: *applies
 * false when it does not apply.  *text_out is usc__malloc'd.
 */
usc_status usc__sig_build_mutant(usc__sig_text *bt,
				 const usc_hlo_instr *in, usc_mutation kind,
				 int v, bool *applies, char *detail,
				 size_t detail_size, char **text_out,
				 usc_error *err);

/* ------------------------------------------------------------ scoring */

/*
 * One device set and what the search knows of it: the outputs (flat
 * element k of all outputs in order), the reference, the unmutated
 * kernel's envelope (NULL without a profile) and which elements are
 * defects (outside it; without a profile, different from the
 * reference).
 */
typedef struct usc__sig_set {
	size_t nout;
	const usc_tensor *const *dev;
	usc_tensor *const *ref;
	const usc_envelope *env;  /* elements entries, or NULL */
	uint64_t elements;
	uint8_t *defect;          /* elements flags, owned */
	double *scratch;          /* elements doubles, shared */
	usc_signature_report *r;
	usc_signature_candidate *list;
	size_t n, cap;
	const usc_hlo_module *m;  /* the kernel, for equivalences */
} usc__sig_set;

/*
 * Scores a mutant's strict outputs (outs: one per output; NULL entries:
 * the reference) against the set: reproduced, differing_reproduced and
 * median_ulps, and, without an envelope of its own, explained, broken
 * and width by the translated envelope (docs/signatures.md).  *no_effect:
 * the outputs equal the reference everywhere.  *near (optional): how
 * promising the mutant is, for the order of the envelopes: first the
 * defect elements it brings near the device (its strict value closer to
 * the device than the reference's, or the device inside the translated
 * envelope widened by its own width and one code each side), then the
 * defect elements it changes less the legit ones it changes.
 */
void usc__sig_score_strict(usc__sig_set *s, const usc_tensor *const *outs,
			   usc_signature_candidate *cand, bool *no_effect,
			   uint64_t *near);

/*
 * Rescores explained, broken and width with the mutant's own envelope
 * (menv: elements entries); elements where it is unknown keep the
 * translated envelope's judgement.  outs as above.
 */
void usc__sig_score_envelope(usc__sig_set *s, const usc_tensor *const *outs,
			     const usc_envelope *menv,
			     usc_signature_candidate *cand);

/*
 * The identity's width: the geometric mean over the defect elements of
 * 2d + 1, d the device's distance in codes from the reference (NaN when
 * none is finite).  An explanation no narrower says nothing more than
 * "somewhere near the right value".
 */
double usc__sig_identity_width(const usc__sig_set *s);

/*
 * The elements left zero candidate, named after producers[o], the op
 * that writes output o (NULL: unnamed); false on out of memory.
 */
bool usc__sig_score_output_zero(usc__sig_set *s,
				const usc_hlo_instr *const *producers);

/* Appends a candidate (copying in's names); false on out of memory. */
bool usc__sig_push(usc__sig_set *s, const usc_signature_candidate *c,
		   const usc_hlo_instr *in);
void usc__sig_cand_free(usc_signature_candidate *c);

/*
 * Folds each candidate that writes the same program as a better ranked
 * one into that one's equivalent forms (signature_equiv.c); the list
 * must be sorted.  False on out of memory.
 */
bool usc__sig_merge_equivalent(usc__sig_set *s);

/* Sorts the set's candidates, sets the verdict, keeps the top and ties;
 * false on out of memory. */
bool usc__sig_rank(usc__sig_set *s, const usc_signature_options *o);

/* --------------------------------------------------- several runs */

/*
 * One run's search for the ranking over several runs (signature_runs.c):
 * the run's report (counts, identity, its own verdict; no candidates)
 * and every candidate it scored, unranked.  Every mutant is scored even
 * when the run has no defect element.
 */
typedef struct usc__sig_raw {
	usc_signature_report *r;
	usc_signature_candidate *list;
	size_t n;
} usc__sig_raw;

usc_status usc__sig_search_raw(const usc_hlo_module *m,
			       const usc_tensor *const *inputs,
			       size_t input_count,
			       const usc_tensor *const *devices,
			       size_t device_count,
			       const usc_signature_options *opts,
			       usc__sig_raw *raw, usc_error *err);
void usc__sig_raw_free(usc__sig_raw *raw);

/*
 * Reads a run's inputs and sets device sets of module m (path names the
 * kernel in errors): *in (np tensors) and *dev (sets * nout tensors),
 * to free with usc__sig_free_tensors.
 */
usc_status usc__sig_read_run(const usc_hlo_module *m, const char *path,
			    const usc_signature_request *req, size_t sets,
			    usc_tensor ***in, size_t *np, usc_tensor ***dev,
			    size_t *nout, usc_error *err);
void usc__sig_free_tensors(usc_tensor **t, size_t n);

#endif /* USC_ANALYZE_SIGNATURE_INTERNAL_H */
