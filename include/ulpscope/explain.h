/*
 * ulpscope: explain one output element — its computation as a tree, from
 * the output back to the parameters.
 *
 * For each instruction on the way: the strict reference's value at the
 * element, the oracle's enclosure of the exact value, the op's own
 * rounding of its exact value (local), the reference's accumulated error
 * (reference - exact, in ULPs of the op's type), the op's contribution to
 * the root element's error (include/ulpscope/attribution.h), its envelope
 * under the device profile and its source location; at the root the
 * device value, its envelope and its class (include/ulpscope/check.h).
 * docs/explain.md describes the command, the figures and an example.
 */
#ifndef ULPSCOPE_EXPLAIN_H
#define ULPSCOPE_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "ulpscope/classify.h"
#include "ulpscope/hlo.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define USC_EXPLAIN_DEPTH_DEFAULT 24
/*
 * The deepest tree usc_explain_run makes (--depth): the walk takes a few
 * stack frames per level, so the depth is bounded, not the kernel; a
 * chain of a million ops is cut at this depth.
 */
#define USC_EXPLAIN_DEPTH_MAX 1000
/* How many of a set's largest terms the tree shows (--terms). */
#define USC_EXPLAIN_TERMS_DEFAULT 3

typedef struct usc_explain_request {
	/*
	 * The kernel, its inputs and device outputs, the profile and the
	 * evaluation options, as usc_check_run takes them.  With no profile
	 * the strict one is used, so that the root always has an envelope
	 * and a class.
	 */
	usc_check_request check;
	/* Non-NULL: a case directory instead (usc_check_case; check holds
	 * the other options). */
	const char *case_dir;
	/*
	 * Non-NULL: a result file of usc_check_write and the kernel in it
	 * (results_kernel).  The file holds the kernel's HLO text (as
	 * evaluated: a fusion already isolated), its device outputs and its
	 * profile's name, not its inputs: check.inputs must give them.  The
	 * profile is check.profile, else the built-in profile the file names.
	 */
	const char *results_path;
	const char *results_kernel;
	/* The output (a tuple root's leaf number; 0 for an array root). */
	size_t output;
	/*
	 * The element: a multi-index of index_rank entries (the output's
	 * rank), or, with flat, the row-major flat index flat_index.
	 */
	size_t index_rank;
	int64_t index[USC_TENSOR_MAX_RANK];
	bool flat;
	uint64_t flat_index;
	/*
	 * How deep the tree goes (0: USC_EXPLAIN_DEPTH_DEFAULT; at most
	 * USC_EXPLAIN_DEPTH_MAX, else USC_EINVAL).
	 */
	unsigned max_depth;
	/* Skip the attribution (one oracle run per op that rounds). */
	bool no_attribute;
	/* The attribution's cap on ops that round (0: its default). */
	size_t attr_max_ops;
	/*
	 * How many terms of a reduction or a dot at an element are shown
	 * as children of its set: those with the largest |exact value|
	 * (USC_EXPLAIN_TERMS_DEFAULT from usc_explain_request_default; 0:
	 * none, the set's operands are then followed whole).
	 */
	size_t terms;
} usc_explain_request;

usc_explain_request usc_explain_request_default(void);

/* How a node is followed. */
typedef enum usc_explain_kind {
	/* One element of the instruction, at index. */
	USC_EXPLAIN_ELEMENT,
	/*
	 * The elements of a reduce's or reduce-window's input that the
	 * parent element combines (count of them, described by set):
	 * summarized; its children are its largest terms.
	 */
	USC_EXPLAIN_SET,
	/*
	 * Every element of the instruction: its index map back from the
	 * element is not one the explanation follows (convolution,
	 * scatter...), or a parent was followed whole.  Summarized.
	 */
	USC_EXPLAIN_WHOLE,
	/* A fusion or call: its values are those of its body's root. */
	USC_EXPLAIN_CALL,
	/*
	 * The products a dot's element sums (instr is the dot, index the
	 * dot's element, count the contracting size, set "a[0,0:3] x
	 * b[0:3,1]"): summarized; its children are its largest terms.
	 */
	USC_EXPLAIN_PRODUCTS,
	/*
	 * One of those products (instr is the dot, index its position in
	 * the sum, lhs_index and rhs_index its factors): the reference's
	 * product and the exact one; its children are the two factors.
	 */
	USC_EXPLAIN_PRODUCT
} usc_explain_kind;

/* One line of the tree, in pre-order. */
typedef struct usc_explain_node {
	const usc_hlo_instr *instr;
	unsigned depth;
	usc_explain_kind kind;
	uint64_t index;  /* ELEMENT, CALL: flat row-major index in instr's
			  * shape; PRODUCTS: the dot's element; PRODUCT:
			  * the term's position in the sum */
	uint64_t count;  /* SET, WHOLE: elements summarized; PRODUCTS:
			  * products */
	/* PRODUCT: the flat indices of its lhs and rhs factors. */
	uint64_t lhs_index, rhs_index;
	/*
	 * SET, PRODUCTS, PRODUCT: which elements, per dimension an index
	 * or a range "lo:hi" (":step" when strided), e.g. "[3,0:128]" or
	 * "a[0,0:3] x b[0:3,1]".
	 */
	char set[256];
	/*
	 * A term of its parent set (an ELEMENT under a SET, a PRODUCT
	 * under PRODUCTS): its rank by |exact| (1: the largest) among
	 * terms_of terms; 0 otherwise.
	 */
	uint64_t term, terms_of;
	/* The padding value of a pad at a padded position. */
	bool padding;
	/*
	 * The first node with the same instruction, kind and index when
	 * this one repeats it (its subtree is not printed again), else
	 * SIZE_MAX.
	 */
	size_t same_as;
	/* The depth limit cut the subtree below. */
	bool truncated;
	/*
	 * The parameter of a fused computation this node stands for (the
	 * node is the caller's operand), else NULL.
	 */
	const usc_hlo_instr *via;
	/* ---- values (ELEMENT, PRODUCT); has_values false where none were
	 * kept */
	bool has_values;
	bool is_float;
	uint64_t ref_bits;
	double ref;              /* the reference's value */
	/* The oracle's enclosure [lo, hi] and midpoint; kind as text. */
	double exact_lo, exact_hi, exact_mid;
	const char *exact_kind;  /* "finite", "nan", "+inf", "-inf", "undecided" */
	/* (RN(y*) - y*) / ulp(y*) in the op's type, for an op that rounds;
	 * NaN otherwise. */
	double local_ulps;
	/* (reference - y*) / ulp(y*) in the op's type; NaN if undefined. */
	double ref_err_ulps;
	/* The attribution's contribution to the root element, in ULPs of
	 * the output's type; NaN when the op is not attributed. */
	double contrib;
	bool has_envelope;
	usc_envelope envelope;
	/* ---- SET, WHOLE, PRODUCTS: summaries over count elements */
	double sum_abs_ref, sum_abs_exact;
	double max_abs_ref_err; /* ulps of the op's type; NaN if none */
	/* Where: the flat index (PRODUCTS: the lhs factor's, and
	 * max_ref_err_rhs the rhs factor's). */
	uint64_t max_ref_err_index, max_ref_err_rhs;
	/* Where it comes from: op_name ("" when absent) and "file:line"
	 * (the file's last component; "" when unknown). */
	char op_name[160];
	char source[160];
} usc_explain_node;

typedef struct usc_explain_report {
	usc_check_report *check;     /* the check of the whole kernel, owned */
	usc_attribution *attribution; /* NULL when not attributed */
	char attr_note[512];          /* why not, when attribution failed */
	size_t output;
	uint64_t flat_index;
	/* The root element as the check saw it. */
	usc_check_element root;
	/* The reference's error against the exact value at the element. */
	double reference_ulps;
	/* The oracle's enclosure of the element's exact value. */
	double exact_lo, exact_hi;
	/* The tree's limits as applied. */
	unsigned max_depth;
	size_t terms;
	size_t node_count;
	usc_explain_node *nodes;
	unsigned long oracle_precision;
} usc_explain_report;

/*
 * Explains one element.  Errors: a bad kernel, inputs or device files (as
 * usc_check_run), an output or index out of range (naming the shape).
 */
usc_status usc_explain_run(const usc_explain_request *req,
			   usc_explain_report **out, usc_error *err);

/* The tree as docs/explain.md shows it. */
void usc_explain_print(FILE *f, const usc_explain_report *r);

void usc_explain_report_destroy(usc_explain_report *r);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_EXPLAIN_H */
