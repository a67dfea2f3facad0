/*
 * ulpscope: auditing what a compiler pass did to a program's precision
 * (what "ulpscope audit" prints; docs/audit.md).
 *
 * Two modules are the same program before and after a pass, with the same
 * entry parameters and outputs.  Both are evaluated on the same inputs, in
 * the domains check already has (include/ulpscope/check.h): the oracle of
 * each (the real function the module denotes), the strict reference of
 * each (what a correct device computes for its declared types), and under
 * a profile the legitimate envelope of each.  Two questions are answered
 * apart:
 *
 *   - the function: do the two oracles differ beyond their enclosures?
 *     Then the pass changed the mathematics (an algebraic rewrite, a
 *     constant folded and rounded, an approximation), not only rounding;
 *   - the precision: each module's reference against the BEFORE oracle
 *     (the intended mathematics), element by element: which elements got
 *     better or worse, the |ulp| figures before and after, and under a
 *     profile how the envelope's width changed.  A verdict (improved,
 *     neutral, regressed) with the threshold that decided it.
 *
 * The inputs come from files (one sample) or are drawn from named
 * distributions reproducibly from a seed (usc_audit_draw), several samples
 * each; figures are given per sample and pooled over all of them.  The
 * audit calls usc_check_run three times per sample, the module's reference
 * standing in for a device output, so every figure is check's own.
 */
#ifndef ULPSCOPE_AUDIT_H
#define ULPSCOPE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/eval.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ distributions */

/*
 * The distributions inputs are drawn from (docs/audit.md, "Inputs"): the
 * five of tools/capture, then the adversarial ones for precision.
 */
#define USC_AUDIT_DIST_LIST(X)                                                \
	X(NORMAL, "normal", "standard normal")                                \
	X(UNIFORM, "uniform", "uniform on [-1, 1]")                           \
	X(LARGE, "large", "+-2^u, u uniform on [4, 12], within max/16")       \
	X(TIES, "ties", "rounding ties of the working type")                  \
	X(DENORMAL, "denormal", "subnormals of the type, a quarter just "     \
					"above the smallest normal")          \
	X(CANCEL, "cancel", "near-cancellation: every parameter's element j " \
				"is +-b(1 + k 2^-p) for one b per pair of "   \
				"elements")                                   \
	X(OVERFLOW, "overflow", "near-overflow for exp: within 4 of "         \
				    "log(max) of the type")                   \
	X(NEARZERO, "nearzero", "near-zero for log and divide: half 1 +- a "  \
				    "few ulps, half tiny of either sign")     \
	X(SPECIALS, "specials", "normals mixed with NaN, +-Inf, +-0, +-max "  \
				    "and subnormals")

typedef enum usc_audit_dist {
#define USC__AUDIT_DIST_ENUM(id, name, what) USC_AUDIT_DIST_##id,
	USC_AUDIT_DIST_LIST(USC__AUDIT_DIST_ENUM)
#undef USC__AUDIT_DIST_ENUM
	USC_AUDIT_DIST_COUNT
} usc_audit_dist;

/* The name of a distribution ("normal"); NULL outside the enum. */
const char *usc_audit_dist_name(usc_audit_dist d);

/* What a distribution draws, in words. */
const char *usc_audit_dist_description(usc_audit_dist d);

/*
 * Looks a distribution up by name (the first len bytes of name).
 * USC_ENOTFOUND, with a message listing the names, when none has it.
 */
usc_status usc_audit_dist_from_name(const char *name, size_t len,
				    usc_audit_dist *out, usc_error *err);

/*
 * Draws a tensor of spec's type and shape from distribution d, the same
 * for the same (d, seed, stream) on every machine: values are made in
 * double from a xoshiro256** generator seeded by splitmix64 and rounded
 * to nearest into the type.  working is the narrowest floating type the
 * program computes in (the ties distribution draws that type's rounding
 * ties; USC_DTYPE_INVALID: the tensor's own type).  stream tells apart
 * the parameters of one sample.  Integer tensors get 0..7 (every
 * encoding of a type of fewer than 3 bits), pred tensors random truth
 * values, whatever the distribution.
 */
usc_status usc_audit_draw(usc_audit_dist d, uint64_t seed, uint64_t stream,
			  const usc_tensor_spec *spec, usc_dtype working,
			  usc_tensor **out, usc_error *err);

/* ------------------------------------------------------------ the run */

typedef struct usc_audit_request {
	const char *before_path;
	const char *after_path;
	/*
	 * One sample read from sources (as usc_tensor_read takes them),
	 * input_count of them; or, when input_count is 0, samples drawn:
	 * samples per distribution of dists, the k-th sample of every
	 * distribution from seed + k.
	 */
	size_t input_count;
	const char *const *inputs;
	bool raw;                 /* other sources are raw files */
	size_t dist_count;
	const usc_audit_dist *dists;
	size_t samples;           /* 0: 1 */
	uint64_t seed;
	/*
	 * The device profile whose envelopes are compared (NULL: none).
	 * Borrowed for the run.
	 */
	const usc_profile *profile;
	usc_eval_reduce_order reduce_order;
	unsigned long oracle_precision_max; /* bits; 0: 4096 */
	/*
	 * The verdict's threshold in ULPs (<= 0: USC_AUDIT_THRESHOLD): a
	 * change of max or p99 |ulp| beyond it regresses or improves.
	 */
	double threshold;
	/* Skip the fast f64 tier (usc_check_request.strict_oracle). */
	bool strict_oracle;
	/*
	 * The op-by-op view (usc_audit_report.ops): the rounding points of
	 * both modules attributed on the first sample and matched.
	 * ops_max: the most rounding ops attributed per module (0: 64).
	 */
	bool ops;
	size_t ops_max;
} usc_audit_request;

/* The default threshold, in ULPs of the output type. */
#define USC_AUDIT_THRESHOLD 1.0

usc_audit_request usc_audit_request_default(void);

typedef enum usc_audit_verdict {
	USC_AUDIT_NEUTRAL,
	USC_AUDIT_IMPROVED,
	USC_AUDIT_REGRESSED
} usc_audit_verdict;

/* "neutral", "improved", "regressed". */
const char *usc_audit_verdict_name(usc_audit_verdict v);

/*
 * One output over one sample, or pooled over every sample.  ULPs are of
 * the output type at the BEFORE oracle's value.
 */
typedef struct usc_audit_figures {
	uint64_t count;
	/*
	 * The function: elements whose two oracle enclosures are disjoint;
	 * of them, those where one side is NaN or infinite and the other is
	 * not (or the infinities differ); the largest distance of the two
	 * midpoints in ULPs (infinite for the special ones, 0 when nothing
	 * changed), at element fn_worst (flat index; in the pooled figures,
	 * of the sample fn_worst_sample), with both midpoints.
	 */
	uint64_t fn_changed;
	uint64_t fn_special;
	double fn_max_ulps;
	uint64_t fn_worst;
	size_t fn_worst_sample;
	double fn_worst_before;
	double fn_worst_after;
	/*
	 * The precision: per element, |error| of AFTER's reference against
	 * the BEFORE oracle compared with BEFORE's (a NaN error, a NaN
	 * where the exact value is a number or the reverse, counts as
	 * infinite): better, worse, or unchanged (equal, identical
	 * included); identical: both references bit for bit the same.
	 * undecided: elements whose error the oracle left undecided in
	 * either module (their figures are the enclosure's midpoint).
	 */
	uint64_t better;
	uint64_t worse;
	uint64_t unchanged;
	uint64_t identical;
	uint64_t undecided;
	usc_results_stats before; /* |ulp| of BEFORE's reference */
	usc_results_stats after;  /* |ulp| of AFTER's reference */
	/*
	 * Under a profile: the envelope widths (hi - lo, in ULPs) of the
	 * elements whose envelopes are finite and known in both modules
	 * (env_known of them), how many got wider and narrower, and how many
	 * of AFTER's references lie outside BEFORE's envelope.
	 */
	bool enveloped;
	uint64_t env_known;
	usc_results_stats width_before;
	usc_results_stats width_after;
	uint64_t wider;
	uint64_t narrower;
	uint64_t after_outside_before;
	usc_audit_verdict verdict;
	/* Why: the figure and the threshold that decided it. */
	char reason[256];
} usc_audit_figures;

/*
 * Per-element figures of one output over one sample (for the result
 * file): the signed errors of both references against the BEFORE
 * oracle, and the function's change in ULPs (0 where the enclosures
 * overlap, +-Inf for a special change, NaN where both are NaN).
 */
typedef struct usc_audit_elements {
	uint64_t count;
	double *ulp_before;
	double *ulp_after;
	double *fn_ulps;
	uint64_t *ref_before; /* the references' encodings */
	uint64_t *ref_after;
	/*
	 * Under a profile, the widths of both envelopes in ULPs (NaN where
	 * one is unknown or not finite; always NaN without a profile).
	 */
	double *width_before;
	double *width_after;
	/*
	 * Per element, OR-ed: 1 undecided, 2 AFTER's reference outside
	 * BEFORE's envelope, 4 the function changed a NaN or an infinity,
	 * 8 the function changed (the enclosures are disjoint).
	 */
	uint8_t *flags;
} usc_audit_elements;

typedef struct usc_audit_sample {
	/* "inputs" for files, else "DIST/K" (K from 0). */
	char label[48];
	bool drawn;
	usc_audit_dist dist;
	uint64_t seed;
	usc_audit_figures *outputs;  /* output_count */
	usc_audit_elements *elements; /* output_count */
} usc_audit_sample;

typedef struct usc_audit_output {
	usc_dtype dtype;
	size_t rank;
	int64_t dims[8];
} usc_audit_output;

/*
 * What the pass did to one rounding point (docs/audit.md, "Op by op"):
 * an op BEFORE's reference rounds, AFTER's, or a matched pair.
 */
typedef enum usc_audit_op_kind {
	USC_AUDIT_OP_SAME,      /* matched, same opcode and type */
	USC_AUDIT_OP_RETYPED,   /* matched, rounds to another type */
	USC_AUDIT_OP_REMOVED,   /* BEFORE's, nothing of its source after */
	USC_AUDIT_OP_ADDED,     /* AFTER's, nothing of its source before */
	USC_AUDIT_OP_REPLACED,  /* BEFORE's, other ops of its source after */
	USC_AUDIT_OP_REPLACING, /* AFTER's, in place of another op */
	/*
	 * Matched, same opcode and type, but made of another number of
	 * instructions: a reduction split in two (XLA:CPU's reduce-window
	 * then reduce), or several merged.
	 */
	USC_AUDIT_OP_SPLIT
} usc_audit_op_kind;

/*
 * "same", "retyped", "removed", "added", "replaced", "replacing",
 * "split".
 */
const char *usc_audit_op_kind_name(usc_audit_op_kind k);

typedef struct usc_audit_op {
	usc_audit_op_kind kind;
	/*
	 * The op on each side as "NAME (OPCODE TYPE)", or "" where the side
	 * has none; the source op_name it was matched by ("" without one).
	 */
	char before[160];
	char after[160];
	char source[160];
	/*
	 * Mean |contribution| of the op to each output element's error, in
	 * ULPs, on each side (0 where the side has none): the op alone
	 * rounded, everything else exact (include/ulpscope/attribution.h).
	 */
	double before_mean_abs;
	double after_mean_abs;
	/* after - before, and its share of the sum of every row's |change|. */
	double change;
	double share;
} usc_audit_op;

typedef struct usc_audit_report {
	char *before_path;
	char *after_path;
	char *before_name; /* module names */
	char *after_name;
	size_t input_count;
	size_t output_count;
	usc_audit_output *outputs;
	size_t sample_count;
	usc_audit_sample *samples;
	usc_audit_figures *pooled; /* output_count */
	double threshold;
	bool profiled;
	usc_profile profile;
	/*
	 * Over every output, pooled: whether the function changed, its
	 * largest change in ULPs, the precision verdict and its reason.
	 */
	bool function_changed;
	double function_max_ulps;
	usc_audit_verdict verdict;
	char reason[512];
	/*
	 * The op-by-op view when asked for (request.ops), biggest |change|
	 * first; ops_note says why there is none when the attribution
	 * could not run (too many ops, an unsupported op), else "".
	 */
	size_t op_count;
	usc_audit_op *ops;
	char ops_note[1536];
} usc_audit_report;

/*
 * Runs the audit.  Errors name the file: a module that does not parse or
 * verify, or that the evaluator does not support; AFTER's parameters or
 * outputs differing from BEFORE's in count, type or shape; inputs of the
 * wrong type or shape; neither inputs nor distributions.
 */
usc_status usc_audit_run(const usc_audit_request *req,
			 usc_audit_report **out, usc_error *err);

void usc_audit_report_destroy(usc_audit_report *r);

/* ------------------------------------------------------------ pipelines */

/*
 * One module of a pipeline's per-pass dumps (docs/audit.md, "Pipelines"):
 * XLA writes module_NNNN.<module>.before_optimizations.txt, then one
 * module_NNNN.<module>.SSSS.<pipeline>.after_<pass>[.before_<next>].txt
 * per pass that changed the module, and
 * module_NNNN.<module>.<platform>_after_optimizations.txt.
 */
typedef struct usc_audit_stage {
	char *path;
	char *label;      /* "before_optimizations", "0007 simplification:
			     tree_reduction_rewriter", ... */
	char *pass;       /* the pass after which it was dumped ("" first) */
	/*
	 * The first stage against this one (NULL when it could not be
	 * evaluated: note says why; or when it is an earlier one's text).
	 */
	usc_audit_report *audit;
	/*
	 * SIZE_MAX, or the earlier stage whose HLO text this one's is, bar
	 * the HloModule line (XLA dumps a module unchanged at the start of
	 * every pipeline): not evaluated again, its figures are that
	 * stage's (usc_audit_stage_report).
	 */
	size_t same_as;
	char note[USC_ERROR_MESSAGE_SIZE];
	/*
	 * Against the last evaluated stage before it: some reference
	 * element differs (moved), or the function differs (fn_moved).
	 */
	bool moved;
	bool fn_moved;
} usc_audit_stage;

typedef struct usc_audit_pipeline {
	char *dir;
	char *module;
	size_t stage_count;
	usc_audit_stage *stages;
	/*
	 * The stage whose move of any output's pooled max |ulp| against the
	 * previous evaluated stage is the largest (SIZE_MAX: none moved),
	 * and the audit of that one pass, previous stage -> it, with the
	 * op-by-op view (the descent); NULL when none moved.
	 */
	size_t biggest;
	usc_audit_report *descent;
} usc_audit_pipeline;

/*
 * The stages of module in dir, in pipeline order (module NULL: the one
 * module the directory holds; USC_EINVAL naming them when it holds
 * several, USC_ENOTFOUND when none), evaluated as req says (its
 * before_path and after_path are ignored; its inputs are the first
 * stage's parameters).
 */
usc_status usc_audit_pipeline_run(const usc_audit_request *req,
				  const char *dir, const char *module,
				  usc_audit_pipeline **out, usc_error *err);

void usc_audit_pipeline_destroy(usc_audit_pipeline *p);

/* Stage k's audit: its own, or that of the stage it repeats; or NULL. */
const usc_audit_report *usc_audit_stage_report(const usc_audit_pipeline *p,
					       size_t k);

/*
 * The gate of pass k of a pipeline (docs/audit.md, "Pipelines"): stage k
 * against the last evaluated stage before it, on the figures both share
 * (each stage's errors against the first stage's oracle).  4 when the
 * function moved at k and now differs from the first stage's by more
 * than t ULPs; else 3 when some output regressed by the verdict's rule at
 * threshold t; else 0 (also for the first stage, a stage not evaluated
 * and a repeated text).  reason (size bytes, may be NULL) says why.
 */
int usc_audit_pass_gate(const usc_audit_pipeline *p, size_t k, double t,
			char *reason, size_t size);

/*
 * The pipeline's gate: the largest of its passes' gates, *worst (may be
 * NULL) the first stage that has it (SIZE_MAX when 0).
 */
int usc_audit_pipeline_gate(const usc_audit_pipeline *p, double t,
			    size_t *worst);

/*
 * Writes the pipeline as the group /audits/<name> of a result file
 * (docs/audit.md, "The result file": a stage table, every evaluated
 * stage's audit as /audits/<name>/<k>, the descent as
 * /audits/<name>/descent), creating, replacing or appending to the file
 * as usc_audit_write does.  t is the threshold of the stage table's
 * per-pass gates.
 */
usc_status usc_audit_pipeline_write(const usc_audit_pipeline *p, double t,
				    const char *path, const char *name,
				    unsigned flags, usc_error *err);

/*
 * Writes the report as the group /audits/<name> of a result file
 * (docs/results.md): a new file at path (refusing to replace a regular
 * file that is not a result file unless flags has USC_RESULTS_FORCE, as
 * check --out does), or with USC_AUDIT_APPEND the complete result file
 * there, extended.  USC_EINVAL when the file already holds an audit of
 * that name.  name follows the rules of kernel names (not empty, not ".",
 * no '/').
 */
#define USC_AUDIT_APPEND (1u << 8)
usc_status usc_audit_write(const usc_audit_report *r, const char *path,
			   const char *name, unsigned flags, usc_error *err);

/*
 * The exit status a gate gives (docs/audit.md, "Exit status"), for a
 * threshold t in ULPs: 4 when the function changed by more than t ULPs
 * somewhere, else 3 when the precision regressed by more than t (the
 * figures are judged again against t), else 0.
 */
int usc_audit_gate(const usc_audit_report *r, double t);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_AUDIT_H */
