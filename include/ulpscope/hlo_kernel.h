/*
 * ulpscope: kernels of an HLO module.
 *
 * Three services built on the IR of ulpscope/hlo.h:
 *   - the verifier, which checks the shape rules of the ops ulpscope
 *     evaluates, so the evaluator can index arrays without re-checking;
 *   - kernel isolation, which turns one fusion of a module into a
 *     standalone module (one parameter per operand of the fusion, the
 *     fusion as ROOT), the unit that ulpscope analyses;
 *   - the summary that `ulpscope hlo` prints: per module, its entry
 *     signature and every fusion with its op histogram, element types,
 *     shapes and source op names.
 *
 * docs/kernels.md documents the verifier's rules, what it does not check,
 * and the text that extraction produces.
 */
#ifndef ULPSCOPE_HLO_KERNEL_H
#define ULPSCOPE_HLO_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/hlo.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- verifier */

/*
 * Checks every computation of m against the shape rules of the ops that
 * ulpscope evaluates (elementwise ops, data movement, reductions, dot,
 * convolution, gather, scatter, calls, tuples, parameters, constants).
 * Ops outside that list are accepted unchecked; layouts are ignored; a
 * dynamic dimension is compared by its bound, and an unbounded one ("?")
 * matches any size.  The first violation fails with USC_EVERIFY and a
 * message of two lines:
 *   LINE:COLUMN: error: add 'add.5' operand 1 has shape f32[8], expected
 *   f32[4] (the result's dims)
 *     in computation 'fused_computation' of module 'm'
 * (the first line is one line; the module clause is left out when the
 * module has no name).
 */
usc_status usc_hlo_verify(const usc_hlo_module *m, usc_error *err);

/* The same, with "FILENAME:" before the location (NULL: none). */
usc_status usc_hlo_verify_ex(const usc_hlo_module *m, const char *filename,
			     usc_error *err);

/* Every module of a parsed file, located with the file's name. */
usc_status usc_hlo_verify_file(const usc_hlo_file *f, usc_error *err);

/* One computation alone (computations it calls are not descended into). */
usc_status usc_hlo_verify_computation(const usc_hlo_computation *c,
				      usc_error *err);

/* ---------------------------------------------------- kernel isolation */

/*
 * Finds the fusion that `name` designates in m: an instruction of that
 * name (in any computation: entry, while bodies...) whose opcode is
 * fusion, or else a computation of that name called by a fusion (the
 * first such fusion in source order).  *out_fusion receives the fusion
 * instruction; when name is a computation that no fusion calls,
 * *out_fusion is NULL and *out_comp receives the computation (a kernel
 * given on its own, as in XLA's emitter tests).  out_comp may be NULL
 * only when the caller does not accept that case.
 * USC_ENOTFOUND names the module and lists near matches, or counts the
 * fusions; USC_EINVAL when the instruction is not a fusion.
 */
usc_status usc_hlo_find_fusion(const usc_hlo_module *m, const char *name,
			       const usc_hlo_instr **out_fusion,
			       const usc_hlo_computation **out_comp,
			       usc_error *err);

/*
 * Isolates the kernel `name` (see usc_hlo_find_fusion) as the HLO text of
 * a standalone module named "<module>_<fusion>":
 *   - every computation the fused computation calls, transitively, in
 *     dependency order (callees first), then the fused computation, all
 *     copied as written;
 *   - an ENTRY computation with one parameter per operand of the fusion
 *     (named after the operand, made unique when needed; shape = the
 *     operand's shape) and a copy of the fusion as ROOT, with its
 *     attributes except control-predecessors.
 * A computation that no fusion calls becomes the module's ENTRY itself,
 * after its callees.  The module header keeps no attribute of the
 * original (entry_computation_layout and aliasing describe the old entry).
 * opts selects the long or short form (NULL: long, with metadata).
 * *text_out is freed with usc_hlo_text_free; *len_out may be NULL.
 */
usc_status usc_hlo_extract_fusion(const usc_hlo_module *m, const char *name,
				  const usc_hlo_print_options *opts,
				  char **text_out, size_t *len_out,
				  usc_error *err);

/*
 * The same kernel, parsed back: *out is a file of one module, destroyed
 * with usc_hlo_file_destroy.
 */
usc_status usc_hlo_extract_fusion_file(const usc_hlo_module *m,
				       const char *name, usc_hlo_file **out,
				       usc_error *err);

/* ---------------------------------------------------------------- summary */

typedef struct usc_hlo_op_count {
	usc_hlo_opcode opcode;
	size_t count;
} usc_hlo_op_count;

/*
 * What one computation contains.  Parameters are not ops: op_count is
 * the number of the other instructions; the histogram counts them by
 * opcode, most frequent first, ties in opcode spelling order.  The
 * element types are those of every instruction's shape (tuple elements
 * included, tokens excluded), in enum order.  op_names are the distinct
 * metadata op_name values in order of first appearance.  Computations the
 * computation calls (reducers, comparators) are not counted.
 */
typedef struct usc_hlo_comp_summary {
	const usc_hlo_computation *comp;
	size_t instr_count;
	size_t op_count;
	size_t histogram_count;
	usc_hlo_op_count *histogram;
	size_t dtype_count;
	usc_dtype *dtypes;
	size_t op_name_count;
	const char **op_names;
} usc_hlo_comp_summary;

typedef struct usc_hlo_fusion_summary {
	const usc_hlo_instr *fusion;  /* the fusion instruction */
	const char *kind;             /* "kLoop", ...; NULL when not written */
	const usc_hlo_computation *fused;
	usc_hlo_comp_summary body;    /* of the fused computation */
	/* The fusion's operands' shapes and its result: the kernel's I/O. */
	size_t param_count;
	const usc_hlo_shape **params;
	const usc_hlo_shape *result;
} usc_hlo_fusion_summary;

typedef struct usc_hlo_module_summary {
	const usc_hlo_module *module;
	size_t computation_count;
	size_t instr_count;           /* over all computations */
	usc_hlo_comp_summary entry;   /* of the entry computation */
	/* The entry's parameters by number and its root's shape. */
	size_t entry_param_count;
	const usc_hlo_instr **entry_params;
	const usc_hlo_shape *entry_result;
	/* Every fusion instruction of every computation, in source order. */
	size_t fusion_count;
	usc_hlo_fusion_summary *fusions;
} usc_hlo_module_summary;

/*
 * Computes the summary of m; it points into m, which must outlive it.
 * Destroy it with usc_hlo_module_summary_destroy.
 */
usc_status usc_hlo_module_summarize(const usc_hlo_module *m,
				    usc_hlo_module_summary **out,
				    usc_error *err);
void usc_hlo_module_summary_destroy(usc_hlo_module_summary *s);

/*
 * Writes a shape without its layout ("f32[8,<=4]", "(f32[], s32[2])") into
 * buf, truncating with "..." when it does not fit; returns buf.  The form
 * of shapes in the verifier's messages and in the summary.
 */
char *usc_hlo_shape_format(const usc_hlo_shape *s, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_HLO_KERNEL_H */
