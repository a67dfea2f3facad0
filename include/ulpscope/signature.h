/*
 * ulpscope: defect signatures.  Which single-op mutation of a kernel
 * explains the device's output?
 *
 * The kernel is re-evaluated with one op mutated at a time: computed in a
 * narrower type, rounded in another direction, with its rounding skipped,
 * with its subnormal results flushed, its overflow saturated or NaN, its
 * NaN dropped, its operands swapped, dropped altogether, reading its
 * operand one index off or transposed, reducing from a wrong init or over
 * the wrong dimension or window, comparing the other way, or replaced by
 * zeros.  Under a device profile a mutant reproduces an element when the
 * device value lies inside the mutant kernel's legitimate envelope (every
 * value a correct compiler for the target may produce from the mutated
 * kernel); without one, when it equals the mutant's strict value bit for
 * bit.  The (op, mutation) pairs are ranked by how many defect elements
 * (outside the unmutated kernel's envelope) they reproduce less the legit
 * elements they break, then by how tight their envelope is.
 * docs/signatures.md describes the catalogue, the score and the budget.
 */
#ifndef ULPSCOPE_SIGNATURE_H
#define ULPSCOPE_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every mutation of the catalogue: X(ID, "spelling", variants, summary).
 * variants is how many distinct mutants of that kind one op may have
 * (narrow: one per narrower type; drop: one per operand kept...).
 */
#define USC_MUTATION_LIST(X)                                                   \
	X(NONE, "none", 1, "the kernel as written (the strict reference)")     \
	X(NARROW, "narrow", 4,                                                 \
	  "the op computed in a narrower type (bf16, f16, f8e4m3fn, f8e5m2): " \
	  "operands and result rounded to it")                                 \
	X(ROUND_TOWARD_ZERO, "round-toward-zero", 1,                           \
	  "the op's result rounded toward zero instead of to nearest")         \
	X(ROUND_UP, "round-up", 1,                                             \
	  "the op's result rounded toward +inf instead of to nearest")         \
	X(ROUND_DOWN, "round-down", 1,                                         \
	  "the op's result rounded toward -inf instead of to nearest")         \
	X(SKIP_ROUNDING, "skip-rounding", 1,                                   \
	  "excess precision: a bf16/f16 op computed in f32 from its operands " \
	  "before their narrowing converts, or a narrowing-widening convert "  \
	  "pair skipped")                                                      \
	X(FLUSH_DENORMALS, "flush-denormals", 1,                               \
	  "the op's subnormal results flushed to zero (sign kept)")            \
	X(CONVERT_SATURATE, "convert-saturate", 1,                             \
	  "a narrowing convert saturating to the largest finite value on "     \
	  "overflow")                                                          \
	X(CONVERT_NAN, "convert-nan", 1,                                       \
	  "a narrowing convert producing NaN instead of Inf on overflow")      \
	X(NAN_DROPPING, "nan-dropping", 1,                                     \
	  "maximum/minimum/clamp returning the other operand (clamp: the "     \
	  "lower bound) for a NaN")                                            \
	X(SWAP_OPERANDS, "swap-operands", 1,                                   \
	  "the operands of a non-commutative op (or a select's branches) "     \
	  "swapped")                                                           \
	X(DROP, "drop", 2,                                                     \
	  "the op dropped: one operand of its shape passed on unchanged")      \
	X(WRONG_INIT, "wrong-init", 1,                                         \
	  "a reduction started from a wrong init (0<->1, +-inf -> 0)")         \
	X(WRONG_CONSTANT, "wrong-constant", 2,                                 \
	  "a scalar float constant rounded to bf16, or zero")                  \
	X(OFF_BY_ONE, "off-by-one", 4,                                         \
	  "an index mapping one element off: a broadcast's rank-1 operand "    \
	  "rotated, a slice shifted, an iota plus one, a dynamic-slice or "    \
	  "gather start index plus one")                                       \
	X(TRANSPOSED, "transposed", 2,                                         \
	  "a rank-2 operand of an elementwise op read through transposed "     \
	  "indices")                                                           \
	X(WRONG_REDUCE_DIM, "wrong-reduce-dimension", 3,                       \
	  "a reduction over another dimension of the same size")               \
	X(ZERO, "zero", 1, "the op's result replaced by zeros")                \
	X(STALE, "stale", 2,                                                   \
	  "a stale output region: the second half of a dimension holding "     \
	  "the first half's values (an earlier tile's)")                       \
	X(DOT_TRANSPOSE_OUTPUT, "dot-transpose-output", 1,                     \
	  "a dot's output transposed (its last two dimensions swapped, "      \
	  "where they have one size)")                                         \
	X(DOT_TRANSPOSE_OPERAND, "dot-transpose-operand", 2,                   \
	  "a rank-2 dot operand (lhs, rhs) read with its contracting and "    \
	  "free dimensions swapped")                                           \
	X(NARROW_ACCUMULATOR, "narrow-accumulator", 4,                         \
	  "a reduce or reduce-window summed in bf16 or f16 (operand, init "   \
	  "and every partial sum in the narrow type; or operand and result "  \
	  "rounded to it), or the op feeding it computed in that type")        \
	X(WRONG_WINDOW, "wrong-window", 6,                                     \
	  "a reduce-window's window one shorter, one longer, with another "   \
	  "stride, over another dimension, half or twice as long")             \
	X(FLIP_COMPARE, "flip-compare", 2,                                     \
	  "a compare's direction flipped: LT<->LE, GT<->GE (or EQ<->NE)")      \
	X(SWAP_CLAMP_BOUNDS, "swap-clamp-bounds", 1,                           \
	  "a clamp's lower and upper bounds swapped")                          \
	X(CONVERT_INT_TRUNCATE, "convert-int-truncate", 1,                     \
	  "a float -> int convert of a rounded value with the rounding "       \
	  "dropped (truncated instead of rounded)")                            \
	X(CONVERT_INT_ROUND, "convert-int-round", 1,                           \
	  "a truncating float -> int convert rounding to nearest even")        \
	X(CONSTANT_ULPS, "constant-ulps", 12,                                  \
	  "a float constant off by +1, -1, +2 or -2 ulps of its type, or of "  \
	  "bf16 or f16 where it is a value of that narrower type")             \
	X(BROADCAST_PERMUTE, "broadcast-permute", 4,                           \
	  "a broadcast's dimensions permuted (or moved), where the shapes "    \
	  "allow")                                                             \
	X(OUTPUT_ZERO, "output-zero", 1,                                       \
	  "output elements left zero (an unwritten buffer): the reference "    \
	  "where the device is not zero")

typedef enum usc_mutation {
#define USC__MUTATION_ENUM(id, name, variants, summary) USC_MUT_##id,
	USC_MUTATION_LIST(USC__MUTATION_ENUM)
#undef USC__MUTATION_ENUM
	USC_MUT_COUNT
} usc_mutation;

/* The spelling of a mutation ("narrow"); "invalid" outside the enum. */
const char *usc_mutation_name(usc_mutation k);
/* Its one-line description. */
const char *usc_mutation_summary(usc_mutation k);
/* How many variants it has (the bound of usc_signature_mutate's variant). */
int usc_mutation_variants(usc_mutation k);
/* Looks a spelling up; USC_ENOTFOUND lists the spellings. */
usc_status usc_mutation_from_name(const char *name, usc_mutation *out,
				  usc_error *err);

/*
 * The HLO text of module m with instruction `instr` (of any computation)
 * mutated: kind, variant (0 .. variants-1).  *applies is false (and
 * *text_out NULL) when the mutation does not apply to that op (a type,
 * shape or opcode it cannot take).  detail (optional, detail_size bytes)
 * receives what the variant does ("in bf16", "keeps operand 1 'x'").
 * The text is in the short form without metadata; free it with
 * usc_hlo_text_free.  USC_ENOTFOUND when m has no such instruction.
 * OUTPUT_ZERO is not an op mutation and never applies here.
 */
usc_status usc_signature_mutate(const usc_hlo_module *m, const char *instr,
				usc_mutation kind, int variant, bool *applies,
				char *detail, size_t detail_size,
				char **text_out, usc_error *err);

/* One applicable (op, mutation, variant) of a module. */
typedef struct usc_signature_mutant {
	char *op;          /* instruction name */
	char *computation; /* its computation */
	usc_mutation kind;
	int variant;
	char detail[96];
} usc_signature_mutant;

/*
 * Every mutant the search would try on m, in its order (computations,
 * instructions, catalogue order, variants): each can be written with
 * usc_signature_mutate.  Free with usc_signature_mutant_list_destroy.
 */
usc_status usc_signature_mutant_list(const usc_hlo_module *m,
				     usc_signature_mutant **out,
				     size_t *count, usc_error *err);
void usc_signature_mutant_list_destroy(usc_signature_mutant *list,
				       size_t count);

/* What the search concluded. */
typedef enum usc_signature_verdict {
	/* The device output equals the strict reference bit for bit. */
	USC_SIGNATURE_NO_DIFFERENCE,
	/*
	 * The best mutation's score (defect elements reproduced less legit
	 * elements broken, over the defect elements) is at least
	 * min_fraction.
	 */
	USC_SIGNATURE_EXPLAINED,
	/* No single-op mutation tried scores that much. */
	USC_SIGNATURE_UNEXPLAINED,
	/*
	 * The device differs from the strict reference, but every element
	 * lies inside the kernel's envelope under the profile: no defect.
	 */
	USC_SIGNATURE_LEGIT
} usc_signature_verdict;

const char *usc_signature_verdict_name(usc_signature_verdict v);

typedef struct usc_signature_options {
	usc_eval_reduce_order reduce_order;
	/* Wall-clock budget of the search in seconds; <= 0: 60. */
	double max_seconds;
	/* At most this many mutants evaluated; 0: no cap. */
	size_t max_candidates;
	/* Candidates kept in the report, best first; 0: 10. */
	size_t top;
	/*
	 * The fraction of the differing elements the best mutation must
	 * reproduce (less those it breaks) to explain the output; <= 0:
	 * 0.95.
	 */
	double min_fraction;
	/*
	 * The device profile whose envelope decides what a mutant
	 * reproduces (read during the call only); NULL: none, a mutant
	 * reproduces an element bit for bit.
	 */
	const usc_profile *profile;
} usc_signature_options;

usc_signature_options usc_signature_options_default(void);

/*
 * Another (op, mutation, variant) that writes the same program as a
 * candidate (docs/signatures.md, "Equivalent mutations").
 */
typedef struct usc_signature_form {
	char *op;
	char *computation;
	usc_mutation kind;
	int variant;
	char detail[96];
} usc_signature_form;

/*
 * A candidate's score on one run of a search over several runs of one
 * kernel (usc_signature_search_runs): the elements it explains and breaks
 * there, and its width (NaN when it explains none).  scored is false when
 * the mutant left that run's output as the kernel's (its score there is
 * the identity's: nothing explained, nothing broken).
 */
typedef struct usc_signature_run_score {
	uint64_t explained;
	uint64_t broken;
	double width;
	bool scored;
} usc_signature_run_score;

/* One run of a search over several: its own counts. */
typedef struct usc_signature_run_summary {
	uint64_t elements;
	uint64_t differing;
	uint64_t defects;
} usc_signature_run_summary;

/* One (op, mutation) pair and how well it reproduces the device. */
typedef struct usc_signature_candidate {
	char *op;            /* instruction name; NULL for NONE, OUTPUT_ZERO */
	char *computation;   /* its computation */
	usc_mutation kind;
	int variant;
	char detail[96];
	/*
	 * The score (docs/signatures.md): defect elements (outside the
	 * unmutated kernel's envelope) whose device value lies inside the
	 * mutant's envelope, and legit elements (inside the kernel's) whose
	 * device value lies outside the mutant's.  Without a profile the
	 * envelopes are points: reproduced means bit for bit.
	 */
	uint64_t explained;
	uint64_t broken;
	/*
	 * How many values the mutant's envelope holds, the geometric mean
	 * over the explained defect elements (1: a single value; NaN when
	 * none is explained).  The tighter explanation ranks first.
	 */
	double width;
	/* The mutant's own envelope was evaluated (not pruned, in budget). */
	bool envelope;
	uint64_t reproduced; /* device elements reproduced bit for bit */
	uint64_t differing_reproduced; /* among those != the reference */
	/*
	 * The median ordinal ULP distance of the elements not reproduced
	 * (NaN when every element is; Inf when NaN meets a number or a
	 * type has no order).
	 */
	double median_ulps;
	/* Ties with the best candidate (same score, width and median). */
	bool tied_best;
	/*
	 * The other mutations that write the same program, whatever the
	 * inputs (flip-compare EQ<->NE of a select's only predicate is the
	 * select's swap-operands): one candidate, several names.  NULL and
	 * 0 when there are none.
	 */
	usc_signature_form *equivalent;
	size_t equivalent_count;
	/*
	 * Over several runs: its score on each, in run order (the fields
	 * above are the sums, the width their geometric mean weighted by the
	 * elements explained).  NULL and 0 for a search of one run.
	 */
	usc_signature_run_score *runs;
	size_t run_count;
} usc_signature_candidate;

typedef struct usc_signature_report {
	char *kernel_name;
	uint64_t elements;           /* device elements, all outputs */
	uint64_t differing;          /* != the strict reference */
	/*
	 * Elements outside the unmutated kernel's envelope under the
	 * profile (without one: differing).  The rest are legit.
	 */
	uint64_t defects;
	/* The profile's name; "" without one. */
	char profile[64];
	/* Why the search fell back (an unknown envelope); "" otherwise. */
	char note[320];
	usc_signature_verdict verdict;
	/* Candidates enumerated, evaluated, without effect, failed, skipped
	 * for the budget. */
	size_t enumerated, evaluated, no_effect, failed, skipped;
	/*
	 * Under a profile: mutants whose envelope was evaluated, and those
	 * pruned (no defect element near their strict output: scored by
	 * the translated envelope only, docs/signatures.md).
	 */
	size_t envelopes, pruned;
	double seconds;
	bool budget_exhausted;
	/* The best candidates (at most top), best first. */
	size_t candidate_count;
	usc_signature_candidate *candidates;
	/* The identity's score (the reference itself), for comparison. */
	usc_signature_candidate identity;
	double min_fraction;
	/*
	 * A search over several runs: each run's counts, in run order (the
	 * counts above are their sums).  NULL and 0 for one run.
	 */
	usc_signature_run_summary *runs;
	size_t run_count;
} usc_signature_report;

/*
 * The search on a parsed module's entry computation with bound inputs
 * (one per entry parameter) and device outputs (one per output leaf,
 * same types and shapes as the outputs).
 */
usc_status usc_signature_search(const usc_hlo_module *m,
				const usc_tensor *const *inputs,
				size_t input_count,
				const usc_tensor *const *devices,
				size_t device_count,
				const usc_signature_options *opts,
				usc_signature_report **out, usc_error *err);

/*
 * The same search for set_count device output sets of the same kernel and
 * inputs (devices holds set_count * device_count tensors, set k at
 * devices[k * device_count]): every mutant is evaluated once and scored
 * against every set, so asking about many outputs (several runs, or a
 * test's many injected defects) costs one search.  out receives set_count
 * reports, each as usc_signature_search would give it (the budget is the
 * whole search's: its counts and seconds are shared).
 */
usc_status usc_signature_search_sets(const usc_hlo_module *m,
				     const usc_tensor *const *inputs,
				     size_t input_count,
				     const usc_tensor *const *devices,
				     size_t device_count, size_t set_count,
				     const usc_signature_options *opts,
				     usc_signature_report **out,
				     usc_error *err);

typedef struct usc_signature_request {
	const char *hlo_path;
	const char *fusion;   /* a fusion to isolate; NULL: the entry */
	size_t input_count;
	const char *const *inputs;
	size_t device_count;
	const char *const *devices;
	/*
	 * Device output sets: devices holds sets * device_count sources, set
	 * k from devices[k * device_count]; 0 means 1.  usc_signature_run
	 * takes one set; usc_signature_run_sets any.
	 */
	size_t sets;
	bool raw;             /* other sources are raw files */
	/*
	 * usc_signature_case: no profile even when case.json names one
	 * (options.profile, when set, always wins).
	 */
	bool no_profile;
	usc_signature_options options;
} usc_signature_request;

usc_signature_request usc_signature_request_default(void);

/* The search from files (errors name the file). */
usc_status usc_signature_run(const usc_signature_request *req,
			     usc_signature_report **out, usc_error *err);

/* The search for req->sets device sets: out receives that many reports. */
usc_status usc_signature_run_sets(const usc_signature_request *req,
				  usc_signature_report **out, usc_error *err);

/*
 * The same on a case directory (docs/cases.md): kernel.hlo, input_N.npy,
 * device_N.npy, case.json's "fusion", and the profile case.json names
 * (its "profile", or its "platform": docs/cases.md) unless base gives one
 * or says no_profile.  base gives the options and may override the
 * device outputs (device_count > 0) ; NULL: defaults.
 */
usc_status usc_signature_case(const char *dir,
			      const usc_signature_request *base,
			      usc_signature_report **out, usc_error *err);

/*
 * The search over run_count runs of one kernel (docs/signatures.md,
 * "Several runs"): run k has its own inputs (inputs[k * input_count ...])
 * and device outputs (devices[k * device_count ...]).  Every mutant is
 * scored on every run and the ranking sums the runs: a candidate's
 * explained and broken counts are the sums over the runs, the defect
 * elements those of every run, and its width the geometric mean over
 * every explained element; a candidate is tied with the best only when
 * it ties on every run.  A mutant that reproduces the first run but not
 * the second thus ranks below one that reproduces both.  One run gives
 * exactly usc_signature_search's report.  *out: one combined report,
 * with each run's counts in runs and each candidate's in its runs.
 */
usc_status usc_signature_search_runs(const usc_hlo_module *m,
				     size_t run_count,
				     const usc_tensor *const *inputs,
				     size_t input_count,
				     const usc_tensor *const *devices,
				     size_t device_count,
				     const usc_signature_options *opts,
				     usc_signature_report **out,
				     usc_error *err);

/*
 * The search over several case directories of one kernel (dirs[0] first,
 * then the runs added with --also): each brings its inputs and device
 * outputs; its kernel.hlo must hold the same module as dirs[0]'s (else
 * USC_EINVAL naming the file).  The profile and base's device override
 * apply as in usc_signature_case (the override to dirs[0] only).
 */
usc_status usc_signature_cases(const char *const *dirs, size_t dir_count,
			       const usc_signature_request *base,
			       usc_signature_report **out, usc_error *err);

/* ------------------------------------------------ separating inputs */

typedef struct usc_signature_separate_options {
	/* Input sets drawn; 0: 16. */
	size_t draws;
	/* The first draw's seed (draw d uses seed + d). */
	uint64_t seed;
	usc_eval_reduce_order reduce_order;
} usc_signature_separate_options;

usc_signature_separate_options usc_signature_separate_options_default(void);

/* One member of a tied group: a candidate, or the kernel as written. */
typedef struct usc_signature_member {
	char *op;          /* NULL: the kernel as written */
	char *computation;
	usc_mutation kind; /* USC_MUT_NONE: the kernel as written */
	int variant;
	/* Its class on the separating draw (0 .. class_count - 1). */
	size_t cls;
	/*
	 * Its group of members that gave the same bits on every draw
	 * ("likely equivalent"): the smallest member index of the group.
	 */
	size_t same_as;
} usc_signature_member;

/*
 * Separating inputs for the candidates tied with the best
 * (usc_signature_separate): the draw that splits them, with the kernel
 * as written, into the most classes of distinct predicted outputs.
 */
typedef struct usc_signature_separation {
	size_t member_count;  /* the tied candidates and the kernel */
	usc_signature_member *members;
	size_t tied;          /* tied candidates (members less the kernel) */
	size_t draws;         /* draws tried */
	/* The chosen draw (SIZE_MAX: none separates any two members). */
	size_t draw;
	char distribution[32];
	uint64_t seed;
	size_t class_count;
	/* Elements where the tied candidates disagree, on that draw. */
	uint64_t split_elements;
	/*
	 * Tied candidates that no draw told apart from another one (each
	 * group counted whole): likely equivalent programs.
	 */
	size_t inseparable;
	size_t input_count;
	usc_tensor **inputs;  /* the chosen draw's inputs; NULL: none */
} usc_signature_separation;

/*
 * Draws input sets for module m (its entry parameters' types and shapes;
 * the distributions of usc_audit_draw in turn) and evaluates, on each,
 * the kernel and every candidate of r tied with the best (output-zero,
 * which is not a program, left out) with the search's evaluator.  Keeps
 * the draw that splits the tied candidates into the most classes
 * (members with different strict outputs on at least one element), then
 * the most classes with the kernel, then the most elements where the
 * tied candidates disagree; none (draw SIZE_MAX) when no draw splits
 * any two tied candidates.  *out is NULL-free even when nothing is tied (tied 0,
 * draw SIZE_MAX).  Free with usc_signature_separation_destroy.
 */
usc_status usc_signature_separate(const usc_hlo_module *m,
				  const usc_signature_report *r,
				  const usc_signature_separate_options *o,
				  usc_signature_separation **out,
				  usc_error *err);

/*
 * Writes the separating draw as a case directory without device outputs
 * (docs/cases.md): out_dir (created if need be; refused when it holds a
 * kernel.hlo already) receives case_dir's kernel.hlo and case.json and
 * the draw's inputs as input_N.npy.  USC_EINVAL when s has no draw.
 */
usc_status usc_signature_separation_write(const usc_signature_separation *s,
					  const char *case_dir,
					  const char *out_dir, usc_error *err);

void usc_signature_separation_destroy(usc_signature_separation *s);

void usc_signature_report_destroy(usc_signature_report *r);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_SIGNATURE_H */
