/*
 * The walk of `ulpscope explain` (explain_tree.h): from one output element
 * back through the evaluator's index maps to the parameters, one node per
 * element, set of elements or product set, with the reach of each
 * instruction marked first so that only what the tree may visit is kept.
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
#include <mpfr.h>
#include <mpfi.h>

#include "ulpscope/dtype_mpfr.h"
#include "ulpscope/explain.h"

#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "../../oracles/envelope.h"
#include "../../oracles/oracle.h"

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
