/*
 * The tree of `ulpscope explain`, internal: the three kept evaluations,
 * the walker that follows an element back from the output, and the
 * scratch numbers of the per-node figures, shared by explain.c (the
 * driver), explain_walk.c (the walk) and explain_values.c (the runs and
 * the figures of each node).  explain.c's opening comment says what the
 * tree follows and why.
 */
#ifndef USC_ANALYZE_EXPLAIN_TREE_H
#define USC_ANALYZE_EXPLAIN_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>

#include "analyze/check_internal.h"
#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "ulpscope/explain.h"
#include "../../oracles/oracle.h"

/* The three evaluations, with every instruction the tree may visit kept. */
typedef struct runs3 {
	usc_eval *ev[3]; /* reference, oracle, envelope */
} runs3;

enum { R_REF, R_ORC, R_ENV };

/* The values one run kept of one instruction. */
typedef struct kept {
	const unsigned char *vals;
	size_t count, size;
	usc_dtype t;
	const usc__domain_ops *dom;
	void *state;
} kept;

/* The tree being built, and what the walk reads. */
typedef struct walker {
	const usc_hlo_module *m;
	unsigned max_depth;
	size_t terms;
	usc_explain_node *nodes;
	/*
	 * Per node: a SET's flat indices; a PRODUCTS node's lhs indices
	 * then its rhs indices (count each); else NULL.
	 */
	uint64_t **sets;
	size_t n, cap;
	/* How often a run evaluates each computation (bisect.c's rule). */
	unsigned char *runs;
	/*
	 * The smallest depth at which the tree may reach each instruction
	 * (UINT_MAX: never), at reach[base[computation] + index].
	 */
	size_t *base;
	unsigned *reach;
	const runs3 *ev; /* the runs, done before the walk */
} walker;

/* Scratch MPFR numbers for the per-element figures. */
typedef struct scratch {
	mpfr_t mid, val, ulp, t;
	mpfr_t fa, fb, fp;       /* a product's factors and product */
	usc__oracle_value prod;  /* an exact product */
} scratch;

/* ------------------------------------------------------ explain_walk.c */
bool usc__ex_keepable(const walker *w, const usc_hlo_instr *in);
const usc_hlo_instr *usc__ex_resolve(const usc_hlo_module *m,
				     const usc_hlo_instr *in);
void usc__ex_mark_reach(walker *w, const usc_hlo_instr *in, unsigned depth,
			int hops);
bool usc__ex_get_kept(const walker *w, int d, const usc_hlo_instr *in,
		      kept *k);
const void *usc__ex_kept_at(const kept *k, uint64_t i);
usc_status usc__ex_visit(walker *w, const usc_hlo_instr *in,
			 usc_explain_kind kind, uint64_t index,
			 unsigned depth, uint64_t *set, uint64_t set_count,
			 usc_error *err);

/* ---------------------------------------------------- explain_values.c */
usc_status usc__ex_run_three(const walker *w, const usc_check_report *cr,
			     const usc_explain_request *req, runs3 *r,
			     usc_error *err);
void usc__ex_figures(scratch *s, usc_dtype t, const usc__oracle_value *v,
		     uint64_t ref_bits, bool want_local, double *local,
		     double *referr);
usc_status usc__ex_fill_node(const walker *w, scratch *s, usc_explain_node *nd,
			     const uint64_t *set, usc_error *err);
void usc__ex_fill_products(const walker *w, scratch *s, usc_explain_node *nd,
			   const uint64_t *set);

#endif /* USC_ANALYZE_EXPLAIN_TREE_H */
