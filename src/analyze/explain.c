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
