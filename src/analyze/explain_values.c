/*
 * The values of `ulpscope explain`'s nodes (explain_tree.h): the three
 * kept evaluations (reference, oracle, envelope) and, for each node, the
 * element's figures: its reference and exact values, their errors in ulps,
 * and a dot's largest products.
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
