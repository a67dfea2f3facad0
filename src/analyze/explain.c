/*
 * ulpscope explain: one output element's computation as a tree, from the
 * output back to the parameters (include/ulpscope/explain.h,
 * docs/explain.md).
 *
 * The kernel is checked as usc_check_run checks it (which gives the root's
 * device value, envelope and class), attributed as usc_attribute does
 * (which gives each op's contribution to the element's error), and then
 * evaluated three more times — strict reference, oracle, envelope — keeping
 * the values of every instruction the tree visits (usc__eval_keep), from
 * which each node reads its element.  The tree follows the element back
 * through every index map that sends one output element to one operand
 * element (elementwise ops, broadcast, transpose, reshape, slice,
 * reverse, copy, and the parameters of fused computations to their
 * callers' operands); a reduce's operand becomes the set of elements the
 * root element's reduction combines; any other op (reduce-window, dot,
 * gather...) is followed at instruction granularity, its values
 * summarized over the whole tensor.
 */
#include "internal.h"
#include "analyze/attribution_internal.h"

#include <inttypes.h>
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

typedef struct walker {
	const usc_hlo_module *m;
	unsigned max_depth;
	usc_explain_node *nodes;
	uint64_t **sets; /* per node: a SET's flat indices, else NULL */
	size_t n, cap;
	/* How often a run evaluates each computation (bisect.c's rule). */
	unsigned char *runs;
} walker;

/*
 * How many times a run evaluates each computation, capped at 2: the entry
 * once, a fusion's or call's body as often as its caller, any other
 * called computation (a reduce's to_apply...) once per element.  Only
 * the instructions of computations evaluated once have values that form
 * one tensor, and only they can be kept.
 */
static void count_runs(const usc_hlo_computation *c, unsigned n,
		       unsigned char *runs, int depth)
{
	unsigned before = runs[c->index], v = before + n;

	runs[c->index] = (unsigned char)(v > 2 ? 2 : v);
	if (before >= 2 || depth > 64)
		return;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		bool once = in->opcode == USC_HLO_OP_FUSION ||
			    in->opcode == USC_HLO_OP_CALL;

		for (size_t k = 0; k < in->called_count; k++)
			count_runs(in->called[k], once ? n : 2, runs,
				   depth + 1);
	}
}

static bool keepable(const walker *w, const usc_hlo_instr *in)
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
	nd->index = kind == USC_EXPLAIN_ELEMENT || kind == USC_EXPLAIN_CALL
			    ? index
			    : 0;
	nd->count = kind == USC_EXPLAIN_WHOLE
			    ? (uint64_t)usc_hlo_shape_elements(&in->shape)
			    : 1;
	nd->same_as = SIZE_MAX;
	nd->local_ulps = nd->ref_err_ulps = nd->contrib = NAN;
	nd->max_abs_ref_err = NAN;
	source_of(w->m, in, nd);
	*out = w->n++;
	return USC_OK;
}

/* Element o of in's shape mapped into operand k's flat index, if simple. */
static bool map_index(const usc_hlo_instr *in, size_t k, uint64_t flat,
		      uint64_t *out)
{
	const usc_hlo_shape *os = &in->shape;
	const usc_hlo_shape *s = &in->operands[k]->shape;
	int64_t o[USC_TENSOR_MAX_RANK], idx[USC_TENSOR_MAX_RANK];
	const usc_hlo_attr *a;

	if (os->kind != USC_HLO_SHAPE_ARRAY || s->kind != USC_HLO_SHAPE_ARRAY ||
	    os->rank > USC_TENSOR_MAX_RANK || s->rank > USC_TENSOR_MAX_RANK)
		return false;
	if (s->rank == 0) {
		/* A scalar operand (clamp's bounds, a broadcast's source). */
		*out = 0;
		return true;
	}
	usc__unravel((size_t)flat, os->dims, os->rank, o);
	switch (in->opcode) {
	case USC_HLO_OP_BROADCAST:
		a = usc__attr_ints(in, "dimensions");
		if (!a || a->count != s->rank)
			return false;
		for (size_t i = 0; i < s->rank; i++) {
			if (a->ints[i] < 0 || (size_t)a->ints[i] >= os->rank)
				return false;
			idx[i] = o[a->ints[i]];
		}
		break;
	case USC_HLO_OP_TRANSPOSE:
		a = usc__attr_ints(in, "dimensions");
		if (!a || a->count != s->rank || s->rank != os->rank)
			return false;
		/* Output dimension i is operand dimension perm[i]. */
		for (size_t i = 0; i < s->rank; i++) {
			if (a->ints[i] < 0 || (size_t)a->ints[i] >= s->rank)
				return false;
			idx[a->ints[i]] = o[i];
		}
		break;
	case USC_HLO_OP_RESHAPE:
		/* Row-major order is kept: the same flat index. */
		*out = flat;
		return true;
	case USC_HLO_OP_REVERSE:
		a = usc__attr_ints(in, "dimensions");
		if (!a || s->rank != os->rank)
			return false;
		memcpy(idx, o, s->rank * sizeof *idx);
		for (size_t i = 0; i < a->count; i++) {
			if (a->ints[i] < 0 || (size_t)a->ints[i] >= s->rank)
				return false;
			idx[a->ints[i]] = s->dims[a->ints[i]] - 1 -
					  o[a->ints[i]];
		}
		break;
	case USC_HLO_OP_SLICE:
		a = NULL;
		for (size_t i = 0; i < in->attr_count; i++)
			if (in->attrs[i].kind == USC_HLO_ATTR_SLICE)
				a = &in->attrs[i];
		if (!a || a->count != s->rank || s->rank != os->rank)
			return false;
		for (size_t i = 0; i < s->rank; i++)
			idx[i] = a->slice[i].start +
				 o[i] * (a->slice[i].stride ? a->slice[i].stride
							    : 1);
		break;
	case USC_HLO_OP_COPY:
		if (s->rank != os->rank)
			return false;
		*out = flat;
		return true;
	default:
		if (usc_hlo_opcode_category(in->opcode) !=
			    USC_HLO_CAT_ELEMENTWISE ||
		    s->rank != os->rank)
			return false;
		*out = flat;
		return true;
	}
	for (size_t i = 0; i < s->rank; i++)
		if (idx[i] < 0 || idx[i] >= s->dims[i])
			return false;
	*out = usc__ravel(idx, s->dims, s->rank);
	return true;
}

/*
 * The elements of a reduce's operand that output element flat combines:
 * the operand's kept dimensions take the output index, the reduced ones
 * run over their range (row-major).
 */
static usc_status reduce_set(const usc_hlo_instr *in, size_t k, uint64_t flat,
			     uint64_t **out, uint64_t *count, usc_error *err)
{
	const usc_hlo_shape *s = &in->operands[k]->shape;
	const usc_hlo_shape *os = &in->shape;
	const usc_hlo_attr *a = usc__attr_ints(in, "dimensions");
	int64_t o[USC_TENSOR_MAX_RANK], idx[USC_TENSOR_MAX_RANK];
	int64_t rd[USC_TENSOR_MAX_RANK];
	bool reduced[USC_TENSOR_MAX_RANK] = {false};
	size_t nr = 0, j = 0;
	uint64_t n = 1, *set;
	const usc_hlo_shape *leaf = os;

	*out = NULL;
	*count = 0;
	if (os->kind == USC_HLO_SHAPE_TUPLE) {
		/* A variadic reduce: every leaf has the same dimensions. */
		if (!os->tuple_count)
			return USC_OK;
		leaf = &os->tuple[0];
	}
	if (!a || s->kind != USC_HLO_SHAPE_ARRAY ||
	    s->rank > USC_TENSOR_MAX_RANK || leaf->rank > USC_TENSOR_MAX_RANK)
		return USC_OK;
	for (size_t i = 0; i < a->count; i++) {
		if (a->ints[i] < 0 || (size_t)a->ints[i] >= s->rank)
			return USC_OK;
		reduced[a->ints[i]] = true;
	}
	for (size_t d = 0; d < s->rank; d++)
		if (reduced[d]) {
			rd[nr++] = s->dims[d];
			n *= (uint64_t)s->dims[d];
		}
	if (leaf->rank + nr != s->rank)
		return USC_OK;
	usc__unravel((size_t)flat, leaf->dims, leaf->rank, o);
	set = usc__calloc(n ? n : 1, sizeof *set);
	if (!set)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (uint64_t e = 0; e < n; e++) {
		int64_t r[USC_TENSOR_MAX_RANK];
		size_t ri = 0, oi = 0;

		usc__unravel((size_t)e, rd, nr, r);
		for (size_t d = 0; d < s->rank; d++)
			idx[d] = reduced[d] ? r[ri++] : o[oi++];
		set[j++] = usc__ravel(idx, s->dims, s->rank);
	}
	*out = set;
	*count = n;
	return USC_OK;
}

static usc_status visit(walker *w, const usc_hlo_instr *in,
			usc_explain_kind kind, uint64_t index,
			unsigned depth, uint64_t *set, uint64_t set_count,
			usc_error *err);

/* in's operand k, followed at element index or whole. */
static usc_status visit_operand(walker *w, const usc_hlo_instr *in,
				size_t k, usc_explain_kind kind,
				uint64_t index, unsigned depth,
				usc_error *err)
{
	uint64_t j;

	if (kind == USC_EXPLAIN_ELEMENT && map_index(in, k, index, &j))
		return visit(w, in->operands[k], USC_EXPLAIN_ELEMENT, j,
			     depth + 1, NULL, 0, err);
	return visit(w, in->operands[k], USC_EXPLAIN_WHOLE, 0, depth + 1,
		     NULL, 0, err);
}

static usc_status visit(walker *w, const usc_hlo_instr *in,
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

			st = visit(w, c->operands[in->parameter_number], kind,
				   index, depth, set, set_count, err);
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
		w->nodes[me].truncated = in->operand_count > 0 || call;
		return USC_OK;
	}
	/* A fusion or call: its body's root, at the same element. */
	if (call && in->called_count) {
		const usc_hlo_instr *root = in->called[0]->root;

		if (!root)
			return USC_OK;
		return visit(w, root,
			     kind == USC_EXPLAIN_CALL ? USC_EXPLAIN_ELEMENT
						      : USC_EXPLAIN_WHOLE,
			     index, depth + 1, NULL, 0, err);
	}
	if (in->opcode == USC_HLO_OP_REDUCE && kind == USC_EXPLAIN_ELEMENT) {
		size_t half = in->operand_count / 2;

		for (size_t k = 0; k < in->operand_count; k++) {
			uint64_t *s = NULL, n = 0;

			if (k < half) {
				st = reduce_set(in, k, index, &s, &n, err);
				if (st != USC_OK)
					return st;
			}
			if (s)
				st = visit(w, in->operands[k], USC_EXPLAIN_SET,
					   0, depth + 1, s, n, err);
			else
				st = visit_operand(w, in, k,
						   k < half ? USC_EXPLAIN_WHOLE
							    : kind,
						   index, depth, err);
			if (st != USC_OK)
				return st;
		}
		return USC_OK;
	}
	for (size_t k = 0; k < in->operand_count; k++) {
		st = visit_operand(w, in, k,
				   kind == USC_EXPLAIN_ELEMENT
					   ? USC_EXPLAIN_ELEMENT
					   : USC_EXPLAIN_WHOLE,
				   index, depth, err);
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

/* The three evaluations, with every visited instruction kept. */
typedef struct runs3 {
	usc_eval *ev[3]; /* reference, oracle, envelope */
} runs3;

enum { R_REF, R_ORC, R_ENV };

static usc_status run_three(const walker *w, const usc_check_report *cr,
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
		for (size_t i = 0; st == USC_OK && i < cr->input_count; i++)
			st = usc_eval_bind(r->ev[d], i, cr->inputs[i], err);
		for (size_t i = 0; st == USC_OK && i < w->n; i++)
			if (keepable(w, w->nodes[i].instr))
				st = usc__eval_keep(r->ev[d],
						    w->nodes[i].instr, err);
		if (st == USC_OK)
			st = usc_eval_run(r->ev[d], err);
	}
	return st;
}


/* Scratch MPFR numbers for the per-element figures. */
typedef struct scratch {
	mpfr_t mid, val, ulp, t;
} scratch;

/*
 * (RN(y*) - y*) / ulp(y*) and (ref - y*) / ulp(y*) in type t, formed in
 * MPFR and rounded once to double (the difference of a number of P bits
 * and one of at most 64 is exact at 4P + 64 bits whenever it matters;
 * ulp is a power of 2).  NaN where y* has no midpoint.
 */
static void figures(scratch *s, usc_dtype t, const usc__oracle_value *v,
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

static double decode_d(usc_dtype t, uint64_t bits)
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
static usc_status fill_node(const runs3 *r, scratch *s, usc_explain_node *nd,
			    const uint64_t *set, usc_error *err)
{
	const void *vals[3];
	size_t count[3];
	usc_dtype t[3];
	const usc__domain_ops *dom[3];
	void *state[3];
	uint64_t n;
	usc_status st;

	if (nd->kind == USC_EXPLAIN_CALL || nd->same_as != SIZE_MAX)
		return USC_OK;
	for (int d = 0; d < 3; d++) {
		if (usc__eval_kept_values(r->ev[d], nd->instr, &vals[d],
					  &count[d], &t[d]) != USC_OK)
			return USC_OK; /* not kept: no values */
		dom[d] = usc__eval_domain(r->ev[d]);
		state[d] = usc__eval_domain_state(r->ev[d]);
	}
	nd->is_float = usc_dtype_is_float(t[0]);
	n = nd->kind == USC_EXPLAIN_ELEMENT ? 1 : nd->count;
	for (uint64_t e = 0; e < n; e++) {
		uint64_t k = nd->kind == USC_EXPLAIN_ELEMENT ? nd->index
			     : nd->kind == USC_EXPLAIN_SET    ? set[e]
							      : e;
		const void *rv, *ov, *evv;
		usc__oracle_enclosure enc;
		usc__envelope_elem env;
		uint64_t rbits, obits, ebits;
		double local, referr, ref;

		if (k >= count[0] || k >= count[1] || k >= count[2])
			return usc__fail(err, USC_EINTERNAL,
					 "explain: element %" PRIu64
					 " of '%s' out of range",
					 k, nd->instr->name);
		rv = (const char *)vals[R_REF] + k * dom[R_REF]->value_size;
		ov = (const char *)vals[R_ORC] + k * dom[R_ORC]->value_size;
		evv = (const char *)vals[R_ENV] + k * dom[R_ENV]->value_size;
		st = dom[R_REF]->to_output(state[R_REF], t[R_REF], rv, &rbits,
					   NULL, err);
		if (st == USC_OK)
			st = dom[R_ORC]->to_output(state[R_ORC], t[R_ORC], ov,
						   &obits, &enc, err);
		if (st == USC_OK)
			st = dom[R_ENV]->to_output(state[R_ENV], t[R_ENV], evv,
						   &ebits, &env, err);
		if (st != USC_OK)
			return st;
		ref = decode_d(t[0], rbits);
		figures(s, t[0], (const usc__oracle_value *)ov, rbits,
			nd->kind == USC_EXPLAIN_ELEMENT && rounds(nd->instr),
			&local, &referr);
		if (nd->kind == USC_EXPLAIN_ELEMENT) {
			nd->ref_bits = rbits;
			nd->ref = ref;
			nd->exact_kind = usc_dtype_is_float(t[0])
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

/* ------------------------------------------------------ result files */

/*
 * What a result file gives back for a kernel, laid out as a case
 * directory in a fresh temporary directory (kernel.hlo, device_<i>.npy),
 * because the check reads its kernel and device outputs from files.
 */
typedef struct results_case {
	char dir[512];
	size_t nfiles;
	char files[1 + 64][560];
	const char *devices[64];
	size_t device_count;
	usc_profile profile;
	bool have_profile;
} results_case;

static void results_case_remove(results_case *rc)
{
	for (size_t i = 0; i < rc->nfiles; i++)
		(void)unlink(rc->files[i]);
	if (rc->dir[0])
		(void)rmdir(rc->dir);
}

static usc_status results_case_make(const char *path, const char *kernel,
				    results_case *rc, usc_error *err)
{
	usc_results_reader *rd = NULL;
	usc_results_kernel_info *info = NULL;
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	usc_status st;

	memset(rc, 0, sizeof *rc);
	st = usc_results_open(path, &rd, err);
	if (st != USC_OK)
		return st;
	st = usc_results_read_kernel(rd, kernel, &info, err);
	if (st != USC_OK)
		goto done;
	if (info->output_count > 64) {
		st = usc__fail(err, USC_EUNSUPPORTED,
			       "%s: kernel '%s' has %zu outputs, more than "
			       "the 64 explain reads back",
			       path, kernel, info->output_count);
		goto done;
	}
	if (!info->hlo_text || !info->hlo_text_len) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: kernel '%s' holds no HLO text", path,
			       kernel);
		goto done;
	}
	snprintf(rc->dir, sizeof rc->dir, "%s/ulpscope-explain-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(rc->dir)) {
		rc->dir[0] = '\0';
		st = usc__fail(err, USC_EIO,
			       "cannot create a temporary directory for the "
			       "kernel of %s",
			       path);
		goto done;
	}
	snprintf(rc->files[0], sizeof rc->files[0], "%s/kernel.hlo", rc->dir);
	f = fopen(rc->files[0], "wb");
	if (!f) {
		st = usc__fail(err, USC_EIO, "%s: cannot write", rc->files[0]);
		goto done;
	}
	rc->nfiles = 1;
	if (fwrite(info->hlo_text, 1, info->hlo_text_len, f) !=
		    info->hlo_text_len ||
	    fclose(f) != 0) {
		st = usc__fail(err, USC_EIO, "%s: cannot write", rc->files[0]);
		goto done;
	}
	for (size_t i = 0; i < info->output_count; i++) {
		usc_results_output_data *od = NULL;
		char *fp = rc->files[rc->nfiles];

		st = usc_results_read_output(rd, kernel, i, &od, err);
		if (st != USC_OK)
			goto done;
		{
			char dir[sizeof rc->dir];

			/* A copy: rc->dir and fp lie in the same object. */
			memcpy(dir, rc->dir, sizeof dir);
			snprintf(fp, sizeof rc->files[0], "%s/device_%zu.npy",
				 dir, i);
		}
		st = usc_tensor_write_npy(od->device, fp, err);
		usc_results_output_data_free(od);
		if (st != USC_OK)
			goto done;
		rc->nfiles++;
		rc->devices[rc->device_count++] = fp;
	}
	if (info->profile && info->profile[0]) {
		usc_error perr;

		if (usc_profile_builtin(info->profile, &rc->profile, &perr) !=
		    USC_OK) {
			st = usc__fail(err, USC_EINVAL,
				       "%s: kernel '%s' was classified under "
				       "profile '%s', which is not a built-in "
				       "profile: give it with --profile FILE",
				       path, kernel, info->profile);
			goto done;
		}
		rc->have_profile = true;
	}
done:
	usc_results_kernel_info_free(info);
	usc_results_reader_close(rd);
	if (st != USC_OK)
		results_case_remove(rc);
	return st;
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
	results_case *rc = NULL;
	usc_status st;

	if (!req || !out)
		return usc__fail(err, USC_EINVAL, "nothing to explain");
	*out = NULL;
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
		st = results_case_make(q.results_path, q.results_kernel, rc,
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

	/* The tree, then the three runs that give its values. */
	w.m = m;
	w.max_depth = q.max_depth ? q.max_depth : USC_EXPLAIN_DEPTH_DEFAULT;
	w.runs = usc__calloc(m->computation_count ? m->computation_count : 1,
			     1);
	if (!w.runs) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	count_runs(r->check->computation, 1, w.runs, 0);
	st = visit(&w, oin, USC_EXPLAIN_ELEMENT, r->flat_index, 0, NULL, 0,
		   err);
	if (st != USC_OK)
		goto done;
	st = run_three(&w, r->check, &q, &runs, err);
	if (st != USC_OK)
		goto done;
	r->oracle_precision =
		(unsigned long)usc__oracle_precision(
			usc__eval_domain_state(runs.ev[R_ORC]));
	mpfr_init2(s.mid, 128);
	mpfr_init2(s.val, 128);
	mpfr_init2(s.ulp, 64);
	mpfr_init2(s.t, 128);
	for (size_t i = 0; st == USC_OK && i < w.n; i++)
		st = fill_node(&runs, &s, &w.nodes[i], w.sets[i], err);
	mpfr_clear(s.mid);
	mpfr_clear(s.val);
	mpfr_clear(s.ulp);
	mpfr_clear(s.t);
	if (st != USC_OK)
		goto done;
	if (r->attribution) {
		const usc_attribution *a = r->attribution;
		const usc_attr_output *ao = &a->outputs[q.output];

		for (size_t i = 0; i < w.n; i++) {
			usc_explain_node *nd = &w.nodes[i];

			if (nd->kind != USC_EXPLAIN_ELEMENT ||
			    nd->same_as != SIZE_MAX)
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
	for (size_t i = 0; i < w.n; i++)
		if (w.nodes[i].kind == USC_EXPLAIN_ELEMENT) {
			r->reference_ulps = w.nodes[i].ref_err_ulps;
			break;
		}
	r->nodes = w.nodes;
	r->node_count = w.n;
	w.nodes = NULL;
done:
	if (rc) {
		results_case_remove(rc);
		usc__free(rc);
	}
	for (int d = 0; d < 3; d++)
		usc_eval_destroy(runs.ev[d]);
	for (size_t i = 0; w.sets && i < w.n; i++)
		usc__free(w.sets[i]);
	usc__free(w.sets);
	usc__free(w.nodes);
	usc__free(w.runs);
	if (st != USC_OK) {
		usc_explain_report_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}

/* --------------------------------------------------------- printing */

static void print_index(FILE *f, const usc_hlo_shape *s, uint64_t flat)
{
	int64_t idx[USC_TENSOR_MAX_RANK];

	fputc('[', f);
	if (s->kind == USC_HLO_SHAPE_ARRAY && s->rank <= USC_TENSOR_MAX_RANK) {
		usc__unravel((size_t)flat, s->dims, s->rank, idx);
		for (size_t i = 0; i < s->rank; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", idx[i]);
	}
	fputc(']', f);
}

static void print_shape(FILE *f, const usc_hlo_shape *s)
{
	if (s->kind != USC_HLO_SHAPE_ARRAY) {
		fputs("(tuple)", f);
		return;
	}
	fprintf(f, "%s[", usc_dtype_name(s->dtype));
	for (size_t i = 0; i < s->rank; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", s->dims[i]);
	fputc(']', f);
}

/* A figure in ulps: "+0.25", "-128", "0". */
static void print_ulps(FILE *f, double x)
{
	if (x == 0)
		fputs("0", f);
	else
		fprintf(f, "%+.4g", x);
}

static void print_envelope(FILE *f, const usc_envelope *e)
{
	const char *sep = "";

	if (e->flags & USC_ENV_UNKNOWN) {
		fputs("unknown", f);
		return;
	}
	if (e->flags & USC_ENV_FINITE) {
		if (e->lo == e->hi)
			fprintf(f, "[%.9g]", e->lo);
		else
			fprintf(f, "[%.9g, %.9g]", e->lo, e->hi);
		sep = " or ";
	}
	if (e->flags & USC_ENV_NAN) {
		fprintf(f, "%snan", sep);
		sep = " or ";
	}
	if (e->flags & USC_ENV_POS_INF) {
		fprintf(f, "%s+inf", sep);
		sep = " or ";
	}
	if (e->flags & USC_ENV_NEG_INF)
		fprintf(f, "%s-inf", sep);
	if (!(e->flags & (USC_ENV_FINITE | USC_ENV_NAN | USC_ENV_POS_INF |
			  USC_ENV_NEG_INF)))
		fputs("empty", f);
}

static void print_exact(FILE *f, const usc_explain_node *nd)
{
	char a[64], b[64];

	if (strcmp(nd->exact_kind, "finite") != 0) {
		fputs(nd->exact_kind, f);
		return;
	}
	snprintf(a, sizeof a, "%.9g", nd->exact_lo == 0 ? 0.0 : nd->exact_lo);
	snprintf(b, sizeof b, "%.9g", nd->exact_hi == 0 ? 0.0 : nd->exact_hi);
	/* The enclosure is far narrower than 9 digits: print one value. */
	if (strcmp(a, b) == 0)
		fputs(a, f);
	else
		fprintf(f, "[%s, %s]", a, b);
}

static void print_node(FILE *f, const usc_explain_report *r, size_t i)
{
	const usc_explain_node *nd = &r->nodes[i];
	const usc_hlo_instr *in = nd->instr;
	unsigned ind = 2 * nd->depth;

	fprintf(f, "%*s%s  %s ", ind, "", in->name,
		usc_hlo_opcode_name(in->opcode));
	print_shape(f, &in->shape);
	switch (nd->kind) {
	case USC_EXPLAIN_ELEMENT:
	case USC_EXPLAIN_CALL:
		fputc(' ', f);
		print_index(f, &in->shape, nd->index);
		break;
	case USC_EXPLAIN_SET:
		fprintf(f, " (%" PRIu64 " elements reduced)", nd->count);
		break;
	case USC_EXPLAIN_WHOLE:
		fprintf(f, " (all %" PRIu64 " elements)", nd->count);
		break;
	}
	if (in->opcode == USC_HLO_OP_PARAMETER && in->parent->is_entry)
		fprintf(f, "  parameter %" PRId64, in->parameter_number);
	if (nd->via)
		fprintf(f, "  (as %s)", nd->via->name);
	if (nd->kind == USC_EXPLAIN_CALL && in->called_count)
		fprintf(f, "  calls %s", in->called[0]->name);
	if (nd->source[0])
		fprintf(f, "  %s", nd->source);
	if (nd->same_as != SIZE_MAX) {
		fputs("  (shown above)\n", f);
		return;
	}
	fputc('\n', f);
	if (nd->has_values && nd->kind == USC_EXPLAIN_ELEMENT) {
		fprintf(f, "%*s  ref %.9g  exact ", ind, "", nd->ref);
		print_exact(f, nd);
		if (nd->is_float) {
			if (!isnan(nd->local_ulps)) {
				fputs("  local ", f);
				print_ulps(f, nd->local_ulps);
			}
			if (!isnan(nd->ref_err_ulps)) {
				fputs("  ref err ", f);
				print_ulps(f, nd->ref_err_ulps);
			}
		}
		if (!isnan(nd->contrib)) {
			fputs("  contrib ", f);
			print_ulps(f, nd->contrib);
		}
		fputs("  env ", f);
		print_envelope(f, &nd->envelope);
		fputc('\n', f);
	} else if (nd->has_values) {
		fprintf(f, "%*s  sum|ref| %.9g  sum|exact| %.9g", ind, "",
			nd->sum_abs_ref, nd->sum_abs_exact);
		if (!isnan(nd->max_abs_ref_err)) {
			fputs("  max|ref err| ", f);
			print_ulps(f, nd->max_abs_ref_err);
			fputs(" at ", f);
			print_index(f, &in->shape, nd->max_ref_err_index);
		}
		fputc('\n', f);
	}
	if (nd->truncated)
		fprintf(f, "%*s  ... (depth limit)\n", ind, "");
}

void usc_explain_print(FILE *f, const usc_explain_report *r)
{
	const usc_check_report *c = r->check;
	const usc_check_output *o = &c->outputs[r->output];
	const usc_check_element *e = &r->root;
	usc_dtype t = usc_tensor_dtype(o->device);
	usc_tensor_spec spec = usc_tensor_spec_of(o->device);
	const usc_hlo_shape *rs = &r->nodes[0].instr->shape;
	char shape[256];

	usc_tensor_spec_format(&spec, shape, sizeof shape);
	fprintf(f, "kernel %s, output %zu ", c->kernel_name, r->output);
	print_index(f, rs, r->flat_index);
	fprintf(f, " of %s, profile %s\n", shape, c->profile.name);
	fprintf(f, "  device     0x%0*" PRIx64 " = %.9g",
		(int)((usc_format_of(t)->bits + 3) / 4), e->device_bits,
		decode_d(t, e->device_bits));
	if (usc_dtype_is_float(t)) {
		fputs("   error ", f);
		print_ulps(f, e->ulp_oracle);
		fputs(" ulp, ", f);
		print_ulps(f, e->ulp_reference);
		fputs(" from the reference", f);
	}
	fprintf(f, "\n  reference  0x%0*" PRIx64 " = %.9g",
		(int)((usc_format_of(t)->bits + 3) / 4), e->reference_bits,
		decode_d(t, e->reference_bits));
	if (usc_dtype_is_float(t) && !isnan(r->reference_ulps)) {
		fputs("   error ", f);
		print_ulps(f, r->reference_ulps);
		fputs(" ulp", f);
	}
	fprintf(f, "\n  exact      %.9g%s\n", e->oracle_mid,
		e->undecided ? " (undecided)" : "");
	fputs("  envelope   ", f);
	print_envelope(f, &e->envelope);
	fprintf(f, "\n  class      %s", usc_class_name(e->cls));
	if (e->outside_ulps > 0) {
		if (isfinite(e->outside_ulps))
			fprintf(f, " (%.0f code%s outside the envelope)",
				e->outside_ulps,
				e->outside_ulps == 1 ? "" : "s");
		else
			fputs(" (outside the envelope)", f);
	}
	fputc('\n', f);
	if (r->attribution) {
		const usc_attribution *a = r->attribution;
		const usc_attr_output *ao = &a->outputs[r->output];
		uint64_t k = r->flat_index;

		fputs("  attribution: reference error ", f);
		print_ulps(f, ao->total[k]);
		fputs(" ulp", f);
		for (size_t j = 0; j < a->top_k; j++) {
			uint32_t u = ao->top_ops[k * a->top_k + j];
			char label[320];

			if (u == USC_ATTR_NO_OP)
				break;
			fprintf(f, "%s%s ", j ? ", " : " = ",
				usc_attr_op_label(&a->ops[u], label,
						  sizeof label));
			print_ulps(f, ao->top_contrib[k * a->top_k + j]);
		}
		fputs("; residual ", f);
		print_ulps(f, ao->residual[k]);
		fputc('\n', f);
	} else if (r->attr_note[0]) {
		fprintf(f, "  attribution: not computed: %s\n", r->attr_note);
	}
	fputs("tree: ref = strict reference, exact = oracle, local = the op's "
	      "own rounding of its exact\n"
	      "  value, ref err = reference - exact (both in ulps of the op's "
	      "type), contrib = the op's\n"
	      "  share of the root's error (ulps of the output), env = "
	      "envelope\n",
	      f);
	for (size_t i = 0; i < r->node_count; i++)
		print_node(f, r, i);
}
