/*
 * ulpscope explain: one output element's computation as a tree, from the
 * output back to the parameters (include/ulpscope/explain.h,
 * docs/explain.md).
 *
 * The kernel is checked as usc_check_run checks it (which gives the root's
 * device value, envelope and class), attributed as usc_attribute does
 * (which gives each op's contribution to the element's error), and then
 * evaluated three more times — strict reference, oracle, envelope — keeping
 * the values of every instruction the tree may visit (usc__eval_keep),
 * from which each node reads its element.  The tree follows the element
 * back through the evaluator's own index maps (src/eval/eval_internal.h:
 * one place knows HLO's semantics): elementwise ops, reshape and copy at
 * the same index; broadcast, transpose, slice, reverse, bitcast,
 * concatenate, pad, dynamic-slice and gather at the one element they
 * copy (start indices read from the reference's values); the parameters
 * of fused computations to their callers' operands.  A reduce's or
 * reduce-window's input becomes the set of elements the element
 * combines, a dot's element the set of its products; either is
 * summarized and its largest terms shown.  Any other op is followed at
 * instruction granularity, its values summarized over the whole tensor.
 */
#include "internal.h"
#include "analyze/attribution_internal.h"
#include "analyze/check_internal.h"
#include "analyze/explain_internal.h"
#include "analyze/explain_tree.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpfr.h>
#include <mpfi.h>

#include "ulpscope/dtype_mpfr.h"
#include "ulpscope/explain.h"

#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "../../oracles/envelope.h"
#include "../../oracles/oracle.h"

usc_explain_request usc_explain_request_default(void)
{
	usc_explain_request r;

	memset(&r, 0, sizeof r);
	r.check = usc_check_request_default();
	r.check.worst = 1;
	r.terms = USC_EXPLAIN_TERMS_DEFAULT;
	return r;
}

void usc_explain_report_destroy(usc_explain_report *r)
{
	if (!r)
		return;
	usc_attribution_destroy(r->attribution);
	usc_check_report_destroy(r->check);
	usc__free(r->nodes);
	usc__free(r);
}

/* ------------------------------------------------------------- walk */

bool usc__ex_keepable(const walker *w, const usc_hlo_instr *in)
{
	return in->shape.kind == USC_HLO_SHAPE_ARRAY &&
	       w->runs[in->parent->index] == 1;
}

/* The fusion or call instruction that calls computation c, or NULL. */
static const usc_hlo_instr *caller_of(const usc_hlo_module *m,
				      const usc_hlo_computation *c)
{
	for (size_t i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *p = m->computations[i];

		for (size_t j = 0; j < p->instr_count; j++) {
			const usc_hlo_instr *in = p->instrs[j];

			if ((in->opcode == USC_HLO_OP_FUSION ||
			     in->opcode == USC_HLO_OP_CALL) &&
			    in->called_count && in->called[0] == c)
				return in;
		}
	}
	return NULL;
}

/*
 * A parameter of a fused (or called) computation is its caller's
 * operand: the instruction whose values it has.
 */
const usc_hlo_instr *usc__ex_resolve(const usc_hlo_module *m,
				     const usc_hlo_instr *in)
{
	for (int hop = 0; hop < 64 && in->opcode == USC_HLO_OP_PARAMETER &&
			  !in->parent->is_entry;
	     hop++) {
		const usc_hlo_instr *c = caller_of(m, in->parent);

		if (!c || in->parameter_number < 0 ||
		    (size_t)in->parameter_number >= c->operand_count)
			break;
		in = c->operands[in->parameter_number];
	}
	return in;
}

/*
 * The instructions the tree may visit within the depth limit, each at
 * the smallest depth it may appear at: its operands one deeper, a
 * fusion's root one deeper, a fused parameter's caller operand at the
 * same depth.  A set's terms and a dot's products only go deeper, so
 * this covers every node the walk makes; these are the instructions the
 * runs keep.
 */
void usc__ex_mark_reach(walker *w, const usc_hlo_instr *in, unsigned depth,
			int hops)
{
	unsigned *r;

	if (depth >= w->max_depth || hops > 4096)
		return;
	if (in->opcode == USC_HLO_OP_PARAMETER && !in->parent->is_entry) {
		const usc_hlo_instr *c = usc__ex_resolve(w->m, in);

		if (c != in)
			usc__ex_mark_reach(w, c, depth, hops + 1);
		return;
	}
	r = &w->reach[w->base[in->parent->index] + in->index];
	if (*r <= depth)
		return;
	*r = depth;
	if ((in->opcode == USC_HLO_OP_FUSION ||
	     in->opcode == USC_HLO_OP_CALL) &&
	    in->called_count && in->called[0]->root)
		usc__ex_mark_reach(w, in->called[0]->root, depth + 1, hops + 1);
	for (size_t k = 0; k < in->operand_count; k++)
		usc__ex_mark_reach(w, in->operands[k], depth + 1, hops + 1);
}

static const char *file_base(const char *f)
{
	const char *b = strrchr(f, '/');

	return b ? b + 1 : f;
}

/*
 * "file:line" of an instruction (the file's last component): metadata's
 * source_file/source_line, or stack_frame_id through the module's
 * StackFrames, FileLocations and FileNames tables, as attribution.c and
 * bisect.c resolve it.
 */
static void source_of(const usc_hlo_module *m, const usc_hlo_instr *in,
		      usc_explain_node *nd)
{
	const usc_hlo_metadata *md = in->metadata;
	const char *file;
	size_t len;
	int64_t line;
	char buf[512];

	nd->op_name[0] = nd->source[0] = '\0';
	if (!md)
		return;
	if (md->op_name)
		snprintf(nd->op_name, sizeof nd->op_name, "%s", md->op_name);
	if (!usc_hlo_instr_source(m, in, &file, &len, &line))
		return;
	snprintf(buf, sizeof buf, "%.*s", (int)len, file);
	/* A long path keeps its head: the line number matters most. */
	if (line >= 0)
		snprintf(nd->source, sizeof nd->source, "%.120s:%" PRId64,
			 file_base(buf), line);
	else
		snprintf(nd->source, sizeof nd->source, "%.150s",
			 file_base(buf));
}

/* What run d kept of in (a resolved instruction); false if nothing. */
bool usc__ex_get_kept(const walker *w, int d, const usc_hlo_instr *in,
		      kept *k)
{
	const void *v;

	if (!w->ev || !w->ev->ev[d] ||
	    usc__eval_kept_values(w->ev->ev[d], in, &v, &k->count, &k->t) !=
		    USC_OK)
		return false;
	k->vals = v;
	k->dom = usc__eval_domain(w->ev->ev[d]);
	k->state = usc__eval_domain_state(w->ev->ev[d]);
	k->size = k->dom->value_size;
	return true;
}

const void *usc__ex_kept_at(const kept *k, uint64_t i)
{
	return k->vals + i * k->size;
}

/*
 * Reads the start indices of dynamic-slice and gather: the reference's
 * value of operand k of in at flat.  It notes what it was asked for, so
 * that the tree shows the index elements the evaluator's map read.
 */
#define READS_MAX 16

typedef struct ref_reader {
	const walker *w;
	const usc_hlo_instr *in;
	size_t nreads;
	bool overflow;
	size_t read_k[READS_MAX];
	uint64_t read_flat[READS_MAX];
} ref_reader;

static usc_status read_ref(void *ctx, size_t k, size_t flat, int64_t *v,
			   usc_error *err)
{
	ref_reader *r = ctx;
	const usc_hlo_instr *op;
	kept kv;

	if (k >= r->in->operand_count)
		return usc__fail(err, USC_EINTERNAL, "explain: no operand %zu",
				 k);
	op = usc__ex_resolve(r->w->m, r->in->operands[k]);
	for (size_t i = 0; i < r->nreads; i++)
		if (r->read_k[i] == k && r->read_flat[i] == flat)
			goto noted;
	if (r->nreads < READS_MAX) {
		r->read_k[r->nreads] = k;
		r->read_flat[r->nreads++] = flat;
	} else {
		r->overflow = true;
	}
noted:
	if (!usc__ex_get_kept(r->w, R_REF, op, &kv) || flat >= kv.count)
		return usc__fail(err, USC_ERANGE,
				 "explain: no values of '%s'", op->name);
	return kv.dom->to_index(kv.state, kv.t, usc__ex_kept_at(&kv, flat), v,
				err);
}

/*
 * A term's weight: |exact value| (the oracle's midpoint), +inf for an
 * infinite one, -1 (last) for NaN or undecided.
 */
static double exact_weight(const kept *ko, uint64_t i)
{
	usc__oracle_enclosure enc;
	uint64_t bits;
	usc_error e;

	memset(&enc, 0, sizeof enc);
	if (i >= ko->count ||
	    ko->dom->to_output(ko->state, ko->t, usc__ex_kept_at(ko, i), &bits,
			       &enc, &e) != USC_OK)
		return -1;
	if (!usc_dtype_is_float(ko->t)) {
		double d = enc.lo / 2 + enc.hi / 2;

		return fabs(d);
	}
	switch (enc.kind) {
	case USC__ORC_FINITE:
		return fabs(enc.lo / 2 + enc.hi / 2);
	case USC__ORC_POS_INF:
	case USC__ORC_NEG_INF:
		return INFINITY;
	default:
		return -1;
	}
}

/*
 * The positions of the n largest of count weights (ties: the earlier
 * first), largest first, into pos; returns how many (n or count).
 */
static size_t top_terms(const double *wt, uint64_t count, size_t n,
			uint64_t *pos)
{
	size_t have = 0;

	for (uint64_t e = 0; e < count; e++) {
		size_t j = have < n ? have : n;

		/* Insertion: strictly larger moves ahead, ties stay behind. */
		while (j > 0 && wt[e] > wt[pos[j - 1]])
			j--;
		if (j >= n)
			continue;
		memmove(pos + j + 1, pos + j,
			((have < n ? have : n - 1) - j) * sizeof *pos);
		pos[j] = e;
		if (have < n)
			have++;
	}
	return have;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The elements at flats (n of them, of shape s) written per dimension as
 * an index or a range "lo:hi" (exclusive hi, ":step" when strided):
 * "[3,0:128]".  The sets of reduce, reduce-window and dot are products
 * of such ranges.
 */
static void describe(const usc_hlo_shape *s, const uint64_t *flats,
		     uint64_t n, char *out, size_t size)
{
	int64_t lo[USC_TENSOR_MAX_RANK], hi[USC_TENSOR_MAX_RANK];
	int64_t g[USC_TENSOR_MAX_RANK], idx[USC_TENSOR_MAX_RANK];
	size_t len = 0;

	out[0] = '\0';
	if (s->kind != USC_HLO_SHAPE_ARRAY || s->rank > USC_TENSOR_MAX_RANK ||
	    n == 0) {
		snprintf(out, size, "[]");
		return;
	}
	for (uint64_t e = 0; e < n; e++) {
		usc__unravel((size_t)flats[e], s->dims, s->rank, idx);
		for (size_t d = 0; d < s->rank; d++) {
			if (e == 0 || idx[d] < lo[d])
				lo[d] = idx[d];
			if (e == 0 || idx[d] > hi[d])
				hi[d] = idx[d];
		}
	}
	memset(g, 0, sizeof g);
	for (uint64_t e = 0; e < n; e++) {
		usc__unravel((size_t)flats[e], s->dims, s->rank, idx);
		for (size_t d = 0; d < s->rank; d++)
			g[d] = gcd64(g[d], idx[d] - lo[d]);
	}
	len += (size_t)snprintf(out + len, size - len, "[");
	for (size_t d = 0; d < s->rank && len < size; d++) {
		const char *sep = d ? "," : "";

		if (lo[d] == hi[d])
			len += (size_t)snprintf(out + len, size - len,
						"%s%" PRId64, sep, lo[d]);
		else if (g[d] == 1)
			len += (size_t)snprintf(out + len, size - len,
						"%s%" PRId64 ":%" PRId64, sep,
						lo[d], hi[d] + 1);
		else
			len += (size_t)snprintf(out + len, size - len,
						"%s%" PRId64 ":%" PRId64
						":%" PRId64,
						sep, lo[d], hi[d] + 1, g[d]);
	}
	if (len < size)
		snprintf(out + len, size - len, "]");
}

static usc_status push(walker *w, const usc_hlo_instr *in,
		       usc_explain_kind kind, uint64_t index, unsigned depth,
		       size_t *out, usc_error *err)
{
	usc_explain_node *nd;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 32;
		usc_explain_node *p =
			usc__reallocarray(w->nodes, cap, sizeof *p);
		uint64_t **q;

		if (!p)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		w->nodes = p;
		q = usc__reallocarray(w->sets, cap, sizeof *q);
		if (!q)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		w->sets = q;
		w->cap = cap;
	}
	nd = &w->nodes[w->n];
	memset(nd, 0, sizeof *nd);
	w->sets[w->n] = NULL;
	nd->instr = in;
	nd->depth = depth;
	nd->kind = kind;
	nd->index = kind == USC_EXPLAIN_SET || kind == USC_EXPLAIN_WHOLE
			    ? 0
			    : index;
	nd->count = kind == USC_EXPLAIN_WHOLE
			    ? (uint64_t)usc_hlo_shape_elements(&in->shape)
			    : 1;
	nd->same_as = SIZE_MAX;
	nd->local_ulps = nd->ref_err_ulps = nd->contrib = NAN;
	nd->max_abs_ref_err = NAN;
	nd->exact_kind = "undecided";
	source_of(w->m, in, nd);
	*out = w->n++;
	return USC_OK;
}

static bool is_data_op(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_BROADCAST:
	case USC_HLO_OP_TRANSPOSE:
	case USC_HLO_OP_SLICE:
	case USC_HLO_OP_DYNAMIC_SLICE:
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
	case USC_HLO_OP_CONCATENATE:
	case USC_HLO_OP_PAD:
	case USC_HLO_OP_REVERSE:
	case USC_HLO_OP_BITCAST:
		return true;
	default:
		return false;
	}
}

/*
 * Element flat of in's shape mapped into operand k's flat index, for the
 * ops whose map keeps the index (elementwise ops, reshape and copy keep
 * row-major order) and scalar operands.
 */
static bool map_index(const usc_hlo_instr *in, size_t k, uint64_t flat,
		      uint64_t *out)
{
	const usc_hlo_shape *os = &in->shape;
	const usc_hlo_shape *s = &in->operands[k]->shape;

	if (os->kind != USC_HLO_SHAPE_ARRAY || s->kind != USC_HLO_SHAPE_ARRAY)
		return false;
	if (s->rank == 0) {
		/* A scalar operand (clamp's bounds, a broadcast's source). */
		*out = 0;
		return true;
	}
	if (usc_hlo_shape_elements(s) != usc_hlo_shape_elements(os))
		return false;
	if (in->opcode == USC_HLO_OP_RESHAPE ||
	    in->opcode == USC_HLO_OP_COPY ||
	    (usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE &&
	     !is_data_op(in->opcode) && s->rank == os->rank)) {
		*out = flat;
		return true;
	}
	return false;
}

/* in's operand k, followed at element index or whole. */
static usc_status visit_operand(walker *w, const usc_hlo_instr *in,
				size_t k, usc_explain_kind kind,
				uint64_t index, unsigned depth,
				usc_error *err)
{
	uint64_t j;

	if (kind == USC_EXPLAIN_ELEMENT && map_index(in, k, index, &j))
		return usc__ex_visit(w, in->operands[k], USC_EXPLAIN_ELEMENT, j,
				     depth + 1, NULL, 0, err);
	return usc__ex_visit(w, in->operands[k], USC_EXPLAIN_WHOLE, 0,
			     depth + 1, NULL, 0, err);
}

/* Marks the node at `at` (if made) as term rank of count. */
static void mark_term(walker *w, size_t at, size_t rank, uint64_t count)
{
	if (at < w->n) {
		w->nodes[at].term = rank;
		w->nodes[at].terms_of = count;
	}
}

/* One product of a dot's element: its node, then its two factors. */
static usc_status visit_product(walker *w, const usc_hlo_instr *dot,
				uint64_t j, uint64_t lf, uint64_t rf,
				unsigned depth, usc_error *err)
{
	const usc_hlo_instr *l = dot->operands[0], *r = dot->operands[1];
	char a[96], b[96];
	size_t me;
	usc_status st;

	st = push(w, dot, USC_EXPLAIN_PRODUCT, j, depth, &me, err);
	if (st != USC_OK)
		return st;
	w->nodes[me].lhs_index = lf;
	w->nodes[me].rhs_index = rf;
	describe(&l->shape, &lf, 1, a, sizeof a);
	describe(&r->shape, &rf, 1, b, sizeof b);
	snprintf(w->nodes[me].set, sizeof w->nodes[me].set,
		 "%.40s%.80s x %.40s%.80s", l->name, a, r->name, b);
	if (depth + 1 >= w->max_depth) {
		w->nodes[me].truncated = true;
		return USC_OK;
	}
	st = usc__ex_visit(w, l, USC_EXPLAIN_ELEMENT, lf, depth + 1, NULL, 0,
			   err);
	if (st == USC_OK)
		st = usc__ex_visit(w, r, USC_EXPLAIN_ELEMENT, rf, depth + 1,
				   NULL, 0, err);
	return st;
}

/*
 * The children of a SET or PRODUCTS node me: its w->terms largest terms
 * by |exact value|.  *shown 0 when there are none to show (no terms
 * asked for, or no values kept).
 */
static usc_status show_terms(walker *w, size_t me, unsigned depth,
			     size_t *shown, usc_error *err)
{
	const usc_explain_node *nd = &w->nodes[me];
	const usc_hlo_instr *in = nd->instr;
	usc_explain_kind kind = nd->kind;
	const uint64_t *set = w->sets[me];
	uint64_t count = nd->count, *pos = NULL;
	double *wt = NULL;
	kept a, b;
	size_t n;
	usc_status st = USC_OK;

	*shown = 0;
	if (w->terms == 0 || !set || count == 0)
		return USC_OK;
	if (kind == USC_EXPLAIN_SET) {
		if (!usc__ex_get_kept(w, R_ORC, in, &a))
			return USC_OK;
	} else if (!usc__ex_get_kept(w, R_ORC,
				     usc__ex_resolve(w->m, in->operands[0]),
				     &a) ||
		   !usc__ex_get_kept(w, R_ORC,
				     usc__ex_resolve(w->m, in->operands[1]),
				     &b)) {
		return USC_OK;
	}
	wt = usc__calloc(count, sizeof *wt);
	pos = usc__calloc(w->terms, sizeof *pos);
	if (!wt || !pos) {
		usc__free(wt);
		usc__free(pos);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (uint64_t e = 0; e < count; e++) {
		if (kind == USC_EXPLAIN_SET) {
			wt[e] = exact_weight(&a, set[e]);
		} else {
			double x = exact_weight(&a, set[e]);
			double y = exact_weight(&b, set[count + e]);

			/* |x y|; a NaN factor ranks last. */
			wt[e] = x < 0 || y < 0 ? -1 : x * y;
			if (isnan(wt[e]))
				wt[e] = -1;
		}
	}
	n = top_terms(wt, count, w->terms, pos);
	for (size_t r = 0; r < n && st == USC_OK; r++) {
		size_t at = w->n;
		uint64_t e = pos[r];

		if (kind == USC_EXPLAIN_SET)
			st = usc__ex_visit(w, in, USC_EXPLAIN_ELEMENT, set[e],
					   depth + 1, NULL, 0, err);
		else
			st = visit_product(w, in, e, set[e], set[count + e],
					   depth + 1, err);
		if (st == USC_OK)
			mark_term(w, at, r + 1, count);
	}
	usc__free(wt);
	usc__free(pos);
	*shown = n;
	return st;
}

/* A reduce's or reduce-window's inputs at element index: their sets. */
static usc_status visit_reduction(walker *w, const usc_hlo_instr *in,
				  uint64_t index, unsigned depth,
				  usc_error *err)
{
	size_t half = in->operand_count / 2, m = 0, n;
	usc__reduce_map rm;
	usc__window_map wm;
	size_t *flats;
	usc_error e;
	bool ok;
	usc_status st;

	ok = in->opcode == USC_HLO_OP_REDUCE
		     ? usc__reduce_map_init(in, &rm, &e) == USC_OK
		     : usc__window_map_init(in, &wm, &e) == USC_OK;
	if (ok)
		m = in->opcode == USC_HLO_OP_REDUCE ? rm.m : wm.m;
	flats = usc__calloc(m ? m : 1, sizeof *flats);
	if (!flats)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	if (in->opcode == USC_HLO_OP_REDUCE) {
		if (ok)
			usc__reduce_map_at(&rm, (size_t)index, flats);
		n = m;
	} else {
		n = ok ? usc__window_map_at(&wm, (size_t)index, flats) : 0;
	}
	st = USC_OK;
	for (size_t k = 0; k < in->operand_count && st == USC_OK; k++) {
		const usc_hlo_shape *s = &in->operands[k]->shape;
		uint64_t *set;

		if (k >= half || !ok || s->kind != USC_HLO_SHAPE_ARRAY) {
			st = visit_operand(w, in, k,
					   k < half ? USC_EXPLAIN_WHOLE
						    : USC_EXPLAIN_ELEMENT,
					   index, depth, err);
			continue;
		}
		set = usc__calloc(n ? n : 1, sizeof *set);
		if (!set) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		for (size_t j = 0; j < n; j++)
			set[j] = flats[j];
		st = usc__ex_visit(w, in->operands[k], USC_EXPLAIN_SET, 0,
				   depth + 1, set, n, err);
	}
	usc__free(flats);
	return st;
}

/* A dot's element: the node of its products. */
static usc_status visit_dot(walker *w, const usc_hlo_instr *in,
			    uint64_t index, unsigned depth, usc_error *err)
{
	usc__dot_map dm;
	usc_error e;
	size_t *lf, me;
	uint64_t *set;
	char a[96], b[96];
	usc_status st;

	if (usc__dot_map_init(in, &dm, &e) != USC_OK) {
		for (size_t k = 0; k < in->operand_count; k++) {
			st = visit_operand(w, in, k, USC_EXPLAIN_WHOLE, index,
					   depth, err);
			if (st != USC_OK)
				return st;
		}
		return USC_OK;
	}
	lf = usc__calloc(2 * (dm.m ? dm.m : 1), sizeof *lf);
	set = usc__calloc(2 * (dm.m ? dm.m : 1), sizeof *set);
	if (!lf || !set) {
		usc__free(lf);
		usc__free(set);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	usc__dot_map_terms(&dm, (size_t)index, lf, lf + dm.m);
	for (size_t j = 0; j < 2 * dm.m; j++)
		set[j] = lf[j];
	usc__free(lf);
	st = push(w, in, USC_EXPLAIN_PRODUCTS, index, depth + 1, &me, err);
	if (st != USC_OK) {
		usc__free(set);
		return st;
	}
	w->sets[me] = set;
	w->nodes[me].count = dm.m;
	describe(dm.ls, set, dm.m, a, sizeof a);
	describe(dm.rs, set + dm.m, dm.m, b, sizeof b);
	snprintf(w->nodes[me].set, sizeof w->nodes[me].set,
		 "%.40s%.80s x %.40s%.80s", in->operands[0]->name, a,
		 in->operands[1]->name, b);
	if (depth + 2 >= w->max_depth) {
		w->nodes[me].truncated = true;
		return USC_OK;
	}
	{
		size_t shown;

		st = show_terms(w, me, depth + 1, &shown, err);
		if (st != USC_OK || shown)
			return st;
	}
	/* No terms: the factors whole, as below any set. */
	for (size_t k = 0; k < in->operand_count; k++) {
		st = usc__ex_visit(w, in->operands[k], USC_EXPLAIN_WHOLE, 0,
				   depth + 2, NULL, 0, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * The data-movement ops and gather at an element: the one operand
 * element it copies (through the evaluator's own index maps, start
 * indices read from the reference's values), then the index elements
 * that map read.  *done false when the map cannot be followed (no values
 * of the indices): the caller follows the operands whole.
 */
static usc_status visit_moved(walker *w, const usc_hlo_instr *in,
			      uint64_t index, unsigned depth, bool *done,
			      usc_error *err)
{
	ref_reader rr;
	size_t src = 0, flat = 0, at;
	usc_error e;
	usc_status st;

	*done = false;
	memset(&rr, 0, sizeof rr);
	rr.w = w;
	rr.in = in;
	if (in->opcode == USC_HLO_OP_GATHER) {
		usc__gather_map g;

		if (usc__gather_map_init(in, &g, &e) != USC_OK ||
		    usc__gather_map_at(&g, (size_t)index, read_ref, &rr, &flat,
				       &e) != USC_OK)
			return USC_OK;
	} else if (usc__data_index(in, read_ref, &rr, (size_t)index, &src,
				   &flat, &e) != USC_OK ||
		   src >= in->operand_count) {
		return USC_OK;
	}
	*done = true;
	at = w->n;
	st = usc__ex_visit(w, in->operands[src], USC_EXPLAIN_ELEMENT, flat,
			   depth + 1, NULL, 0, err);
	if (st == USC_OK && at < w->n && in->opcode == USC_HLO_OP_PAD &&
	    src == 1)
		w->nodes[at].padding = true;
	/* The index elements read, in the order read. */
	for (size_t i = 0; st == USC_OK && i < rr.nreads; i++)
		st = usc__ex_visit(w, in->operands[rr.read_k[i]],
				   USC_EXPLAIN_ELEMENT, rr.read_flat[i],
				   depth + 1, NULL, 0, err);
	/* More than READS_MAX: the index operands whole. */
	for (size_t k = 1; st == USC_OK && rr.overflow &&
			   k < in->operand_count;
	     k++)
		if (k != src)
			st = usc__ex_visit(w, in->operands[k],
					   USC_EXPLAIN_WHOLE, 0, depth + 1,
					   NULL, 0, err);
	return st;
}

usc_status usc__ex_visit(walker *w, const usc_hlo_instr *in,
			 usc_explain_kind kind, uint64_t index,
			 unsigned depth, uint64_t *set, uint64_t set_count,
			 usc_error *err)
{
	bool call = in->opcode == USC_HLO_OP_FUSION ||
		    in->opcode == USC_HLO_OP_CALL;
	size_t me = 0;
	usc_status st;

	/* One element is one element, however it was reached. */
	if (kind == USC_EXPLAIN_WHOLE &&
	    in->shape.kind == USC_HLO_SHAPE_ARRAY &&
	    usc_hlo_shape_elements(&in->shape) == 1) {
		kind = USC_EXPLAIN_ELEMENT;
		index = 0;
	}
	if (call && kind == USC_EXPLAIN_ELEMENT && in->called_count)
		kind = USC_EXPLAIN_CALL;
	/*
	 * A parameter of a fused computation is its caller's operand: the
	 * operand's node stands for it, naming it (fewer lines, the same
	 * values).
	 */
	if (in->opcode == USC_HLO_OP_PARAMETER && !in->parent->is_entry) {
		const usc_hlo_instr *c = caller_of(w->m, in->parent);

		if (c && in->parameter_number >= 0 &&
		    (size_t)in->parameter_number < c->operand_count) {
			size_t at = w->n;

			st = usc__ex_visit(w, c->operands[in->parameter_number],
					   kind, index, depth, set, set_count,
					   err);
			if (st == USC_OK && at < w->n)
				w->nodes[at].via = in;
			return st;
		}
	}
	st = push(w, in, kind, index, depth, &me, err);
	if (st != USC_OK) {
		usc__free(set);
		return st;
	}
	if (kind == USC_EXPLAIN_SET) {
		w->sets[me] = set;
		w->nodes[me].count = set_count;
		describe(&in->shape, set, set_count, w->nodes[me].set,
			 sizeof w->nodes[me].set);
	}
	/* A repeat: refer to the first, do not walk it again. */
	if (kind != USC_EXPLAIN_SET)
		for (size_t i = 0; i < me; i++) {
			const usc_explain_node *p = &w->nodes[i];

			if (p->instr == in && p->kind == kind &&
			    p->index == w->nodes[me].index &&
			    p->same_as == SIZE_MAX) {
				w->nodes[me].same_as = i;
				return USC_OK;
			}
		}
	if (depth + 1 >= w->max_depth) {
		/* Cut: operands, a body, or a set's terms not shown. */
		w->nodes[me].truncated =
			in->operand_count > 0 || call ||
			(kind == USC_EXPLAIN_SET && w->terms > 0 &&
			 set_count > 0);
		return USC_OK;
	}
	if (kind == USC_EXPLAIN_SET) {
		size_t shown;

		st = show_terms(w, me, depth, &shown, err);
		if (st != USC_OK || shown)
			return st;
		/* No terms: below a set, everything is followed whole. */
		kind = USC_EXPLAIN_WHOLE;
	}
	/* A fusion or call: its body's root, at the same element. */
	if (call && in->called_count) {
		const usc_hlo_instr *root = in->called[0]->root;

		if (!root)
			return USC_OK;
		return usc__ex_visit(w, root,
				     kind == USC_EXPLAIN_CALL
					     ? USC_EXPLAIN_ELEMENT
					     : USC_EXPLAIN_WHOLE,
				     index, depth + 1, NULL, 0, err);
	}
	if (kind == USC_EXPLAIN_ELEMENT) {
		bool done = false;

		switch (in->opcode) {
		case USC_HLO_OP_REDUCE:
		case USC_HLO_OP_REDUCE_WINDOW:
			return visit_reduction(w, in, index, depth, err);
		case USC_HLO_OP_DOT:
			return visit_dot(w, in, index, depth, err);
		case USC_HLO_OP_GATHER:
			st = visit_moved(w, in, index, depth, &done, err);
			break;
		default:
			if (is_data_op(in->opcode))
				st = visit_moved(w, in, index, depth, &done,
						 err);
			break;
		}
		if (st != USC_OK || done)
			return st;
		if (in->opcode == USC_HLO_OP_GATHER || is_data_op(in->opcode))
			kind = USC_EXPLAIN_WHOLE;
	}
	for (size_t k = 0; k < in->operand_count; k++) {
		st = visit_operand(w, in, k, kind, index, depth, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* ----------------------------------------------------------- values */

/*
 * Whether the reference rounds in's result: what attribution counts
 * (usc__instr_rounds), and the reductions themselves, whose combiner
 * additions round.
 */
static bool rounds(const usc_hlo_instr *in)
{
	return usc__instr_rounds(in) ||
	       (in->shape.kind == USC_HLO_SHAPE_ARRAY &&
		usc_dtype_is_float(in->shape.dtype) &&
		(in->opcode == USC_HLO_OP_REDUCE ||
		 in->opcode == USC_HLO_OP_REDUCE_WINDOW));
}

/*
 * The three evaluations, keeping every instruction the tree may visit
 * (mark_reach), before the walk: the walk reads start indices and ranks
 * terms from them.
 */
usc_status usc__ex_run_three(const walker *w, const usc_check_report *cr,
			     const usc_explain_request *req, runs3 *r,
			     usc_error *err)
{
	static const usc_eval_domain dom[3] = {
		USC_DOMAIN_REFERENCE, USC_DOMAIN_ORACLE, USC_DOMAIN_ENVELOPE};
	usc_status st = USC_OK;

	for (int d = 0; d < 3 && st == USC_OK; d++) {
		usc_eval_options o = usc_eval_options_default();

		o.domain = dom[d];
		o.reduce_order = req->check.reduce_order;
		o.quantize = req->check.quantize;
		o.tile_elements = USC_EVAL_NO_TILES;
		o.profile = &cr->profile;
		st = usc_eval_create_computation(cr->computation, &o,
						 &r->ev[d], err);
		if (st == USC_OK)
			st = usc_eval_bind_all(
				r->ev[d], (const usc_tensor *const *)cr->inputs,
				cr->input_count, err);
		for (size_t c = 0; st == USC_OK && c < w->m->computation_count;
		     c++) {
			const usc_hlo_computation *comp = w->m->computations[c];

			for (size_t i = 0; st == USC_OK && i < comp->instr_count;
			     i++) {
				const usc_hlo_instr *in = comp->instrs[i];

				if (w->reach[w->base[c] + i] != UINT_MAX &&
				    usc__ex_keepable(w, in))
					st = usc__eval_keep(r->ev[d], in, err);
			}
		}
		if (st == USC_OK)
			st = usc_eval_run(r->ev[d], err);
	}
	return st;
}

/*
 * (RN(y*) - y*) / ulp(y*) and (ref - y*) / ulp(y*) in type t, formed in
 * MPFR and rounded once to double (the difference of a number of P bits
 * and one of at most 64 is exact at 4P + 64 bits whenever it matters;
 * ulp is a power of 2).  NaN where y* has no midpoint.
 */
void usc__ex_figures(scratch *s, usc_dtype t, const usc__oracle_value *v,
		     uint64_t ref_bits, bool want_local, double *local,
		     double *referr)
{
	mpfr_prec_t p;
	uint64_t rn;
	unsigned flags;

	*local = *referr = NAN;
	if (v->kind != USC__ORC_FINITE || !usc_dtype_is_float(t))
		return;
	p = mpfi_get_prec(v->x) + 1;
	mpfr_set_prec(s->mid, p);
	mpfi_mid(s->mid, v->x);
	if (!mpfr_number_p(s->mid) ||
	    usc_ulp_mpfr(t, s->mid, s->ulp) != USC_OK ||
	    !mpfr_number_p(s->ulp))
		return;
	mpfr_set_prec(s->t, 4 * p + 64);
	if (want_local &&
	    usc_encode_mpfr(t, s->mid, NULL, &rn, &flags) == USC_OK &&
	    usc_decode_mpfr(t, rn, s->val) == USC_OK &&
	    mpfr_number_p(s->val)) {
		mpfr_sub(s->t, s->val, s->mid, MPFR_RNDN);
		mpfr_div(s->t, s->t, s->ulp, MPFR_RNDN);
		*local = mpfr_get_d(s->t, MPFR_RNDN);
	}
	if (usc_decode_mpfr(t, ref_bits, s->val) == USC_OK &&
	    mpfr_number_p(s->val)) {
		mpfr_sub(s->t, s->val, s->mid, MPFR_RNDN);
		mpfr_div(s->t, s->t, s->ulp, MPFR_RNDN);
		*referr = mpfr_get_d(s->t, MPFR_RNDN);
	}
}

static const char *kind_name(unsigned k)
{
	switch (k) {
	case USC__ORC_FINITE:
		return "finite";
	case USC__ORC_POS_INF:
		return "+inf";
	case USC__ORC_NEG_INF:
		return "-inf";
	case USC__ORC_NAN:
		return "nan";
	default:
		return "undecided";
	}
}

double usc__explain_decode(usc_dtype t, uint64_t bits)
{
	double d = NAN;

	if (usc_dtype_is_float(t)) {
		(void)usc_decode_double(t, bits, &d);
	} else {
		int64_t sv = 0;
		uint64_t uv = 0;

		if (usc_decode_int(t, bits, &sv, &uv) == USC_OK)
			d = usc_format_of(t)->kind == USC_KIND_SINT
				    ? (double)sv
				    : (double)uv;
	}
	return d;
}

/* The values of one node from the three runs. */
usc_status usc__ex_fill_node(const walker *w, scratch *s, usc_explain_node *nd,
			     const uint64_t *set, usc_error *err)
{
	kept kv[3];
	uint64_t n;
	usc_status st;

	if (nd->kind == USC_EXPLAIN_CALL || nd->same_as != SIZE_MAX)
		return USC_OK;
	for (int d = 0; d < 3; d++)
		if (!usc__ex_get_kept(w, d, nd->instr, &kv[d]))
			return USC_OK; /* not kept: no values */
	nd->is_float = usc_dtype_is_float(kv[0].t);
	n = nd->kind == USC_EXPLAIN_ELEMENT ? 1 : nd->count;
	for (uint64_t e = 0; e < n; e++) {
		uint64_t k = nd->kind == USC_EXPLAIN_ELEMENT ? nd->index
			     : nd->kind == USC_EXPLAIN_SET    ? set[e]
							      : e;
		const void *ov;
		usc__oracle_enclosure enc;
		usc__envelope_elem env;
		uint64_t rbits, obits, ebits;
		double local, referr, ref;

		if (k >= kv[0].count || k >= kv[1].count || k >= kv[2].count)
			return usc__fail(err, USC_EINTERNAL,
					 "explain: element %" PRIu64
					 " of '%s' out of range",
					 k, nd->instr->name);
		ov = usc__ex_kept_at(&kv[R_ORC], k);
		st = kv[R_REF].dom->to_output(kv[R_REF].state, kv[R_REF].t,
					      usc__ex_kept_at(&kv[R_REF], k),
					      &rbits, NULL, err);
		if (st == USC_OK)
			st = kv[R_ORC].dom->to_output(kv[R_ORC].state,
						      kv[R_ORC].t, ov, &obits,
						      &enc, err);
		if (st == USC_OK)
			st = kv[R_ENV].dom->to_output(
				kv[R_ENV].state, kv[R_ENV].t,
				usc__ex_kept_at(&kv[R_ENV], k), &ebits, &env,
				err);
		if (st != USC_OK)
			return st;
		ref = usc__explain_decode(kv[0].t, rbits);
		usc__ex_figures(
			s, kv[0].t, (const usc__oracle_value *)ov, rbits,
			nd->kind == USC_EXPLAIN_ELEMENT && rounds(nd->instr),
			&local, &referr);
		if (nd->kind == USC_EXPLAIN_ELEMENT) {
			nd->ref_bits = rbits;
			nd->ref = ref;
			nd->exact_kind = usc_dtype_is_float(kv[0].t)
						 ? kind_name(enc.kind)
						 : "finite";
			nd->exact_lo = enc.lo;
			nd->exact_hi = enc.hi;
			nd->exact_mid = enc.lo == enc.hi
						? enc.lo
						: enc.lo / 2 + enc.hi / 2;
			nd->local_ulps = local;
			nd->ref_err_ulps = referr;
			nd->envelope = usc__envelope_public(&env);
			nd->has_envelope = true;
		} else {
			double mid = enc.lo == enc.hi ? enc.lo
						      : enc.lo / 2 + enc.hi / 2;

			nd->sum_abs_ref += fabs(ref);
			if (enc.kind == USC__ORC_FINITE)
				nd->sum_abs_exact += fabs(mid);
			if (!isnan(referr) &&
			    (isnan(nd->max_abs_ref_err) ||
			     fabs(referr) > nd->max_abs_ref_err)) {
				nd->max_abs_ref_err = fabs(referr);
				nd->max_ref_err_index = k;
			}
		}
	}
	nd->has_values = true;
	return USC_OK;
}

/* One product of a dot: the reference's and the exact one. */
typedef struct product {
	uint64_t ref_bits;
	double ref;
	const char *exact_kind;
	double lo, hi, mid;
	double local, referr;
} product;

/*
 * Product lf x rf of dot's element as the reference forms it (each
 * factor converted to the result type, then multiplied and rounded to
 * it: src/eval/reduce.c, sop_product) and exactly (the oracle's factors
 * multiplied in interval arithmetic, wide enough to be exact).  false
 * when the factors' values were not kept.
 */
static bool product_value(const walker *w, scratch *s,
			  const usc_hlo_instr *dot, uint64_t lf, uint64_t rf,
			  bool want_local, product *p)
{
	usc_dtype rt = dot->shape.dtype;
	kept lr, rr, lo, ro;
	const usc__oracle_value *a, *b;
	uint64_t ab, bb;
	unsigned flags;
	usc_error e;

	if (!usc__ex_get_kept(w, R_REF, usc__ex_resolve(w->m, dot->operands[0]),
			      &lr) ||
	    !usc__ex_get_kept(w, R_REF, usc__ex_resolve(w->m, dot->operands[1]),
			      &rr) ||
	    !usc__ex_get_kept(w, R_ORC, usc__ex_resolve(w->m, dot->operands[0]),
			      &lo) ||
	    !usc__ex_get_kept(w, R_ORC, usc__ex_resolve(w->m, dot->operands[1]),
			      &ro) ||
	    lf >= lr.count || rf >= rr.count || lf >= lo.count ||
	    rf >= ro.count)
		return false;
	if (lr.dom->to_output(lr.state, lr.t, usc__ex_kept_at(&lr, lf), &ab,
			      NULL, &e) != USC_OK ||
	    rr.dom->to_output(rr.state, rr.t, usc__ex_kept_at(&rr, rf), &bb,
			      NULL, &e) != USC_OK)
		return false;
	p->local = p->referr = NAN;
	if (!usc_dtype_is_float(rt)) {
		/* Integers: exact (within a double's range, for display). */
		p->ref = usc__explain_decode(lr.t, ab) * usc__explain_decode(rr.t, bb);
		p->ref_bits = 0;
		p->exact_kind = "finite";
		p->lo = p->hi = p->mid = p->ref;
		return true;
	}
	/* The reference: convert, multiply, round. */
	if (usc_decode_mpfr(lr.t, ab, s->fa) != USC_OK ||
	    usc_decode_mpfr(rr.t, bb, s->fb) != USC_OK)
		return false;
	if (lr.t != rt &&
	    (usc_encode_mpfr(rt, s->fa, NULL, &ab, &flags) != USC_OK ||
	     usc_decode_mpfr(rt, ab, s->fa) != USC_OK))
		return false;
	if (rr.t != rt &&
	    (usc_encode_mpfr(rt, s->fb, NULL, &bb, &flags) != USC_OK ||
	     usc_decode_mpfr(rt, bb, s->fb) != USC_OK))
		return false;
	mpfr_set_prec(s->fp, mpfr_get_prec(s->fa) + mpfr_get_prec(s->fb));
	mpfr_mul(s->fp, s->fa, s->fb, MPFR_RNDN); /* exact */
	if (usc_encode_mpfr(rt, s->fp, NULL, &p->ref_bits, &flags) != USC_OK)
		return false;
	p->ref = usc__explain_decode(rt, p->ref_bits);
	/* The exact product. */
	a = usc__ex_kept_at(&lo, lf);
	b = usc__ex_kept_at(&ro, rf);
	if (a->kind == USC__ORC_FINITE && b->kind == USC__ORC_FINITE) {
		mpfi_set_prec(s->prod.x,
			      mpfi_get_prec(a->x) + mpfi_get_prec(b->x));
		mpfi_mul(s->prod.x, a->x, b->x);
		s->prod.kind = USC__ORC_FINITE;
		p->exact_kind = "finite";
		p->lo = mpfr_get_d(&s->prod.x->left, MPFR_RNDD);
		p->hi = mpfr_get_d(&s->prod.x->right, MPFR_RNDU);
		mpfr_set_prec(s->mid, mpfi_get_prec(s->prod.x) + 1);
		mpfi_mid(s->mid, s->prod.x);
		p->mid = mpfr_get_d(s->mid, MPFR_RNDN);
		usc__ex_figures(s, rt, &s->prod, p->ref_bits, want_local,
				&p->local, &p->referr);
	} else {
		/* A non-finite factor: no exact figures are formed. */
		p->exact_kind = a->kind == USC__ORC_NAN ||
						b->kind == USC__ORC_NAN
					? "nan"
					: "undecided";
		p->lo = p->hi = p->mid = NAN;
	}
	return true;
}

/* The values of a PRODUCTS or PRODUCT node. */
void usc__ex_fill_products(const walker *w, scratch *s, usc_explain_node *nd,
			   const uint64_t *set)
{
	product p;

	nd->is_float = usc_dtype_is_float(nd->instr->shape.dtype);
	if (nd->kind == USC_EXPLAIN_PRODUCT) {
		if (!product_value(w, s, nd->instr, nd->lhs_index,
				   nd->rhs_index, true, &p))
			return;
		nd->ref_bits = p.ref_bits;
		nd->ref = p.ref;
		nd->exact_kind = p.exact_kind;
		nd->exact_lo = p.lo;
		nd->exact_hi = p.hi;
		nd->exact_mid = p.mid;
		nd->local_ulps = p.local;
		nd->ref_err_ulps = p.referr;
		nd->has_values = true;
		return;
	}
	for (uint64_t e = 0; set && e < nd->count; e++) {
		if (!product_value(w, s, nd->instr, set[e], set[nd->count + e],
				   false, &p))
			return;
		nd->sum_abs_ref += fabs(p.ref);
		if (strcmp(p.exact_kind, "finite") == 0)
			nd->sum_abs_exact += fabs(p.mid);
		if (!isnan(p.referr) && (isnan(nd->max_abs_ref_err) ||
					 fabs(p.referr) > nd->max_abs_ref_err)) {
			nd->max_abs_ref_err = fabs(p.referr);
			nd->max_ref_err_index = set[e];
			nd->max_ref_err_rhs = set[nd->count + e];
		}
	}
	nd->has_values = true;
}

/* ----------------------------------------------------------- driver */

static usc_status element_of(const usc_explain_request *req,
			     const usc_tensor *dev, uint64_t *flat,
			     usc_error *err)
{
	size_t rank = usc_tensor_rank(dev);
	const int64_t *dims = usc_tensor_dims(dev);
	uint64_t count = usc_tensor_count(dev);
	usc_tensor_spec spec = usc_tensor_spec_of(dev);
	char shape[256];

	usc_tensor_spec_format(&spec, shape, sizeof shape);
	if (req->flat) {
		if (req->flat_index >= count)
			return usc__fail(err, USC_ERANGE,
					 "flat index %" PRIu64
					 " is out of range for output %zu, "
					 "%s (%" PRIu64 " elements)",
					 req->flat_index, req->output, shape,
					 count);
		*flat = req->flat_index;
		return USC_OK;
	}
	if (req->index_rank != rank)
		return usc__fail(err, USC_EINVAL,
				 "the element has %zu index%s but output %zu, "
				 "%s, has rank %zu",
				 req->index_rank,
				 req->index_rank == 1 ? "" : "es", req->output,
				 shape, rank);
	for (size_t i = 0; i < rank; i++)
		if (req->index[i] < 0 || req->index[i] >= dims[i])
			return usc__fail(err, USC_ERANGE,
					 "index %" PRId64
					 " of dimension %zu is out of range "
					 "for output %zu, %s",
					 req->index[i], i, req->output, shape);
	*flat = rank ? usc__ravel(req->index, dims, rank) : 0;
	return USC_OK;
}

/* The instruction that computes output o of computation c. */
static const usc_hlo_instr *output_instr(const usc_hlo_computation *c,
					 size_t o)
{
	const usc_hlo_instr *root = c->root;

	if (root->shape.kind == USC_HLO_SHAPE_ARRAY)
		return o == 0 ? root : NULL;
	if (root->opcode == USC_HLO_OP_TUPLE && o < root->operand_count &&
	    root->operands[o]->shape.kind == USC_HLO_SHAPE_ARRAY)
		return root->operands[o];
	return NULL;
}

static void root_element(usc_explain_report *r, double lambda)
{
	const usc_check_output *o = &r->check->outputs[r->output];
	usc_check_element *e = &r->root;
	uint64_t k = r->flat_index;

	memset(e, 0, sizeof *e);
	e->index = k;
	usc_tensor_get_bits(o->device, k, &e->device_bits);
	usc_tensor_get_bits(o->reference, k, &e->reference_bits);
	e->oracle_mid = o->oracle_mid[k];
	e->oracle_rad = o->oracle_rad[k];
	e->ulp_oracle = o->ulp_oracle[k];
	e->ulp_reference = o->ulp_reference[k];
	e->undecided = o->undecided[k] != 0;
	e->outside_ulps = 0;
	if (o->envelope && o->cls) {
		usc_dtype t = usc_tensor_dtype(o->device);

		e->envelope = o->envelope[k];
		e->cls = (usc_class)o->cls[k];
		if (usc_dtype_is_float(t)) {
			usc_classify_input in;
			usc_classify_result res;

			memset(&in, 0, sizeof in);
			in.type = t;
			in.device = e->device_bits;
			in.reference = e->reference_bits;
			in.oracle_decided = !e->undecided;
			in.ulp_oracle = e->ulp_oracle;
			in.exact = e->oracle_mid;
			in.envelope = e->envelope;
			in.lambda = lambda;
			if (usc_classify_element(&in, &res, NULL) == USC_OK)
				e->outside_ulps = res.outside_ulps;
		}
	}
}

usc_status usc_explain_run(const usc_explain_request *req,
			   usc_explain_report **out, usc_error *err)
{
	usc_explain_request q;
	usc_explain_report *r;
	usc_profile strict;
	const usc_hlo_module *m;
	const usc_hlo_instr *oin;
	walker w;
	runs3 runs;
	scratch s;
	usc__explain_case *rc = NULL;
	usc_status st;

	if (!req || !out)
		return usc__fail(err, USC_EINVAL, "nothing to explain");
	*out = NULL;
	if (req->max_depth > USC_EXPLAIN_DEPTH_MAX)
		return usc__fail(err, USC_EINVAL,
				 "explain: a depth of %u is more than the %d "
				 "levels a tree may have",
				 req->max_depth, USC_EXPLAIN_DEPTH_MAX);
	q = *req;
	memset(&w, 0, sizeof w);
	memset(&runs, 0, sizeof runs);
	r = usc__calloc(1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->output = q.output;
	if (q.results_path) {
		if (!q.results_kernel) {
			st = usc__fail(err, USC_EINVAL,
				       "%s: which kernel of the result file?",
				       q.results_path);
			goto done;
		}
		rc = usc__calloc(1, sizeof *rc);
		if (!rc) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		st = usc__explain_case_make(q.results_path, q.results_kernel, rc,
				       err);
		if (st != USC_OK) {
			usc__free(rc);
			rc = NULL;
			goto done;
		}
		q.case_dir = NULL;
		q.check.hlo_path = rc->files[0];
		q.check.fusion = NULL;
		q.check.devices = rc->devices;
		q.check.device_count = rc->device_count;
		if (!q.check.profile && rc->have_profile)
			q.check.profile = &rc->profile;
	}

	/* The check: the root's device value, envelope and class. */
	if (!q.check.profile && (q.check.no_profile || !q.case_dir)) {
		st = usc_profile_builtin("strict", &strict, err);
		if (st != USC_OK)
			goto done;
		q.check.profile = &strict;
	}
	if (q.check.worst == 0)
		q.check.worst = 1;
	st = q.case_dir ? usc_check_case(q.case_dir, &q.check, &r->check, err)
			: usc_check_run(&q.check, &r->check, err);
	if (st != USC_OK)
		goto done;
	if (!r->check->classified) {
		/* A case without a profile in case.json: strict. */
		usc_check_report_destroy(r->check);
		r->check = NULL;
		st = usc_profile_builtin("strict", &strict, err);
		if (st != USC_OK)
			goto done;
		q.check.profile = &strict;
		st = q.case_dir ? usc_check_case(q.case_dir, &q.check,
						 &r->check, err)
				: usc_check_run(&q.check, &r->check, err);
		if (st != USC_OK)
			goto done;
	}
	m = usc_hlo_file_module(r->check->kernel, 0);
	if (q.output >= r->check->output_count) {
		st = usc__fail(err, USC_ERANGE,
			       "%s: the kernel has %zu output%s; there is no "
			       "output %zu",
			       r->check->hlo_path, r->check->output_count,
			       r->check->output_count == 1 ? "" : "s",
			       q.output);
		goto done;
	}
	oin = output_instr(r->check->computation, q.output);
	if (!oin) {
		st = usc__fail(err, USC_EUNSUPPORTED,
			       "%s: output %zu is not computed by one array "
			       "instruction of the root tuple",
			       r->check->hlo_path, q.output);
		goto done;
	}
	st = element_of(&q, r->check->outputs[q.output].device,
			&r->flat_index, err);
	if (st != USC_OK)
		goto done;
	root_element(r, q.check.lambda);

	/* The attribution: each op's share of the element's error. */
	if (!q.no_attribute) {
		usc_attr_options ao = usc_attr_options_default();
		usc_error aerr;

		ao.reduce_order = q.check.reduce_order;
		ao.quantize = q.check.quantize;
		if (q.attr_max_ops)
			ao.max_ops = q.attr_max_ops;
		memset(&aerr, 0, sizeof aerr);
		if (usc_attribute(m, r->check->computation,
				  (const usc_tensor *const *)r->check->inputs,
				  r->check->input_count, &ao, &r->attribution,
				  &aerr) != USC_OK) {
			r->attribution = NULL;
			snprintf(r->attr_note, sizeof r->attr_note, "%.500s",
				 aerr.message);
		}
	}

	/*
	 * The runs that give the values, keeping what the tree may visit,
	 * then the tree (which reads start indices and ranks terms from
	 * them), then each node's figures.
	 */
	w.m = m;
	w.max_depth = q.max_depth ? q.max_depth : USC_EXPLAIN_DEPTH_DEFAULT;
	w.terms = q.terms;
	w.runs = usc__calloc(m->computation_count ? m->computation_count : 1,
			     1);
	w.base = usc__calloc(m->computation_count + 1, sizeof *w.base);
	if (!w.runs || !w.base) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t c = 0; c < m->computation_count; c++)
		w.base[c + 1] = w.base[c] + m->computations[c]->instr_count;
	w.reach = usc__calloc(w.base[m->computation_count] + 1,
			      sizeof *w.reach);
	if (!w.reach) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i <= w.base[m->computation_count]; i++)
		w.reach[i] = UINT_MAX;
	usc__computation_runs(r->check->computation, 1, w.runs, 0);
	usc__ex_mark_reach(&w, oin, 0, 0);
	st = usc__ex_run_three(&w, r->check, &q, &runs, err);
	if (st != USC_OK)
		goto done;
	w.ev = &runs;
	st = usc__ex_visit(&w, oin, USC_EXPLAIN_ELEMENT, r->flat_index, 0, NULL,
			   0, err);
	if (st != USC_OK)
		goto done;
	r->oracle_precision =
		(unsigned long)usc__oracle_precision(
			usc__eval_domain_state(runs.ev[R_ORC]));
	mpfr_init2(s.mid, 128);
	mpfr_init2(s.val, 128);
	mpfr_init2(s.ulp, 64);
	mpfr_init2(s.t, 128);
	mpfr_init2(s.fa, 64);
	mpfr_init2(s.fb, 64);
	mpfr_init2(s.fp, 128);
	mpfi_init2(s.prod.x, 256);
	for (size_t i = 0; st == USC_OK && i < w.n; i++) {
		usc_explain_node *nd = &w.nodes[i];

		if (nd->kind == USC_EXPLAIN_PRODUCTS ||
		    nd->kind == USC_EXPLAIN_PRODUCT)
			usc__ex_fill_products(&w, &s, nd, w.sets[i]);
		else
			st = usc__ex_fill_node(&w, &s, nd, w.sets[i], err);
	}
	mpfr_clear(s.mid);
	mpfr_clear(s.val);
	mpfr_clear(s.ulp);
	mpfr_clear(s.t);
	mpfr_clear(s.fa);
	mpfr_clear(s.fb);
	mpfr_clear(s.fp);
	mpfi_clear(s.prod.x);
	if (st != USC_OK)
		goto done;
	if (r->attribution) {
		const usc_attribution *a = r->attribution;
		const usc_attr_output *ao = &a->outputs[q.output];

		/*
		 * The op's contribution to the root element, at the op's
		 * first element node only: it is one figure per op, however
		 * many of its elements the tree shows.
		 */
		for (size_t i = 0; i < w.n; i++) {
			usc_explain_node *nd = &w.nodes[i];
			bool first = true;

			if (nd->kind != USC_EXPLAIN_ELEMENT ||
			    nd->same_as != SIZE_MAX)
				continue;
			for (size_t j = 0; j < i && first; j++)
				if (w.nodes[j].instr == nd->instr &&
				    w.nodes[j].kind == USC_EXPLAIN_ELEMENT)
					first = false;
			if (!first)
				continue;
			for (size_t u = 0; u < a->op_count; u++)
				if (a->ops[u].instr == nd->instr)
					nd->contrib =
						ao->contrib[r->flat_index *
								    a->op_count +
							    u];
		}
	}
	/* The reference's own error: the output instruction's node. */
	r->reference_ulps = NAN;
	r->exact_lo = r->root.oracle_mid - r->root.oracle_rad;
	r->exact_hi = r->root.oracle_mid + r->root.oracle_rad;
	for (size_t i = 0; i < w.n; i++)
		if (w.nodes[i].kind == USC_EXPLAIN_ELEMENT) {
			r->reference_ulps = w.nodes[i].ref_err_ulps;
			if (w.nodes[i].has_values &&
			    strcmp(w.nodes[i].exact_kind, "finite") == 0) {
				r->exact_lo = w.nodes[i].exact_lo;
				r->exact_hi = w.nodes[i].exact_hi;
			}
			break;
		}
	r->max_depth = w.max_depth;
	r->terms = w.terms;
	r->nodes = w.nodes;
	r->node_count = w.n;
	w.nodes = NULL;
done:
	if (rc) {
		usc__explain_case_remove(rc);
		usc__free(rc);
	}
	for (int d = 0; d < 3; d++)
		usc_eval_destroy(runs.ev[d]);
	for (size_t i = 0; w.sets && i < w.n; i++)
		usc__free(w.sets[i]);
	usc__free(w.sets);
	usc__free(w.nodes);
	usc__free(w.runs);
	usc__free(w.base);
	usc__free(w.reach);
	if (st != USC_OK) {
		usc_explain_report_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}
