/*
 * The audit of a pass (include/ulpscope/audit.h, docs/audit.md): BEFORE
 * and AFTER evaluated on the same samples, the function and the precision
 * compared apart.
 *
 * The data walk follows check's and calls it rather than copying it.  Per
 * sample: the inputs (read, or drawn), each module's strict reference
 * (one reference evaluator per module), then three checks in which a
 * reference plays the device output:
 *
 *   BEFORE with BEFORE's reference: BEFORE's errors against its oracle,
 *     BEFORE's oracle enclosures and envelope;
 *   BEFORE with AFTER's reference: AFTER's errors against the BEFORE
 *     oracle (the intended mathematics);
 *   AFTER with AFTER's reference: AFTER's oracle enclosures and envelope.
 *
 * Each check certifies its errors as check does (the f64 tier, then the
 * MPFR oracle at rising precision), so the audit's figures mean what
 * check's mean.  The per-element figures of every sample are kept, and
 * the pooled figures are made from them exactly as a sample's are.
 */
#include "internal.h"
#include "analyze/audit_internal.h"
#include "analyze/check_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/audit.h"
#include "ulpscope/check.h"

usc_audit_request usc_audit_request_default(void)
{
	usc_audit_request r;

	memset(&r, 0, sizeof r);
	r.samples = 1;
	r.reduce_order = USC_REDUCE_SEQUENTIAL;
	r.threshold = USC_AUDIT_THRESHOLD;
	return r;
}

const char *usc_audit_verdict_name(usc_audit_verdict v)
{
	switch (v) {
	case USC_AUDIT_IMPROVED:
		return "improved";
	case USC_AUDIT_REGRESSED:
		return "regressed";
	default:
		return "neutral";
	}
}

/* Per-element flags of usc_audit_elements.flags. */
enum {
	ELEM_UNDECIDED = 1u,
	ELEM_OUTSIDE = 2u,  /* AFTER's reference outside BEFORE's envelope */
	ELEM_SPECIAL = 4u,  /* the function changed a NaN or an infinity */
	ELEM_CHANGED = 8u   /* the oracles' enclosures are disjoint */
};

static void elements_free(usc_audit_elements *e)
{
	usc__free(e->ulp_before);
	usc__free(e->ulp_after);
	usc__free(e->fn_ulps);
	usc__free(e->ref_before);
	usc__free(e->ref_after);
	usc__free(e->width_before);
	usc__free(e->width_after);
	usc__free(e->flags);
}

static usc_status elements_alloc(usc_audit_elements *e, uint64_t n,
				 usc_error *err)
{
	size_t k = n ? (size_t)n : 1;

	e->count = n;
	e->ulp_before = usc__calloc(k, sizeof(double));
	e->ulp_after = usc__calloc(k, sizeof(double));
	e->fn_ulps = usc__calloc(k, sizeof(double));
	e->ref_before = usc__calloc(k, sizeof(uint64_t));
	e->ref_after = usc__calloc(k, sizeof(uint64_t));
	e->width_before = usc__calloc(k, sizeof(double));
	e->width_after = usc__calloc(k, sizeof(double));
	e->flags = usc__calloc(k, 1);
	if (!e->ulp_before || !e->ulp_after || !e->fn_ulps || !e->ref_before ||
	    !e->ref_after || !e->width_before || !e->width_after || !e->flags)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

void usc_audit_report_destroy(usc_audit_report *r)
{
	if (!r)
		return;
	for (size_t s = 0; r->samples && s < r->sample_count; s++) {
		usc_audit_sample *sm = &r->samples[s];

		for (size_t i = 0; sm->elements && i < r->output_count; i++)
			elements_free(&sm->elements[i]);
		usc__free(sm->elements);
		usc__free(sm->outputs);
	}
	usc__free(r->samples);
	usc__free(r->pooled);
	usc__free(r->ops);
	usc__free(r->outputs);
	usc__free(r->before_path);
	usc__free(r->after_path);
	usc__free(r->before_name);
	usc__free(r->after_name);
	usc__free(r);
}

/* ------------------------------------------------------------ modules */

/* One module: its file and a reference evaluator of its entry. */
typedef struct side {
	const char *path;
	usc_hlo_file *file;
	const usc_hlo_module *m;
	usc_eval *ref;
} side;

static void side_clear(side *s)
{
	usc_eval_destroy(s->ref);
	usc_hlo_file_destroy(s->file);
	memset(s, 0, sizeof *s);
}

static usc_status side_load(const usc_audit_request *req, const char *path,
			    side *s, usc_error *err)
{
	usc_eval_options o = usc_eval_options_default();
	usc_status st;

	s->path = path;
	st = usc__load_kernel(path, NULL, &s->file, err);
	if (st != USC_OK)
		return st;
	s->m = usc_hlo_file_module(s->file, 0);
	o.reduce_order = req->reduce_order;
	st = usc_eval_create(s->m, &o, &s->ref, err);
	if (st != USC_OK) {
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err ? err->message : "");
		return usc__fail(err, st, "%s: %s", path, msg);
	}
	return USC_OK;
}

/* AFTER's parameters must be BEFORE's, in count, type and shape. */
static usc_status same_params(const side *b, const side *a, usc_error *err)
{
	size_t nb = usc_eval_param_count(b->ref);
	size_t na = usc_eval_param_count(a->ref);

	if (nb != na)
		return usc__fail(err, USC_EINVAL,
				 "%s: %zu parameter%s, but %s has %zu: the "
				 "modules must be the same program",
				 a->path, na, na == 1 ? "" : "s", b->path, nb);
	for (size_t i = 0; i < nb; i++) {
		usc_tensor_spec sb, sa;
		char tb[128], ta[128];
		bool same;

		if (usc_eval_param_spec(b->ref, i, &sb, err) != USC_OK ||
		    usc_eval_param_spec(a->ref, i, &sa, err) != USC_OK)
			return USC_EINVAL;
		same = sb.dtype == sa.dtype && sb.rank == sa.rank;
		for (size_t d = 0; same && d < sb.rank; d++)
			same = sb.dims[d] == sa.dims[d];
		if (!same) {
			usc_tensor_spec_format(&sb, tb, sizeof tb);
			usc_tensor_spec_format(&sa, ta, sizeof ta);
			return usc__fail(err, USC_EINVAL,
					 "%s: parameter %zu is %s, but %s in "
					 "%s: the modules must be the same "
					 "program",
					 a->path, i, ta, tb, b->path);
		}
	}
	return USC_OK;
}

/*
 * The narrowest floating type any array value of either module has: the
 * program's working type, whose ties the ties distribution draws.
 */
static void narrowest(const usc_hlo_module *m, usc_dtype *best, int *prec)
{
	for (size_t c = 0; c < m->computation_count; c++) {
		const usc_hlo_computation *comp = m->computations[c];

		for (size_t k = 0; k < comp->instr_count; k++) {
			usc_dtype t = comp->instrs[k]->shape.dtype;
			usc_float_info fi;

			if (comp->instrs[k]->shape.kind != USC_HLO_SHAPE_ARRAY ||
			    !usc_dtype_is_float(t) ||
			    usc_float_info_of(t, &fi) != USC_OK)
				continue;
			if (*best == USC_DTYPE_INVALID || fi.precision < *prec) {
				*best = t;
				*prec = fi.precision;
			}
		}
	}
}

/* ------------------------------------------------------------ a sample */

/* The inputs of sample k: read from the sources, or drawn. */
static usc_status sample_inputs(const usc_audit_request *req, const side *b,
				usc_dtype working, const usc_audit_sample *sm,
				usc_tensor **in, size_t n, usc_error *err)
{
	if (!sm->drawn && req->input_count != n)
		return usc__fail(err, USC_EINVAL,
				 "%s: the module has %zu parameter%s, %zu "
				 "input%s given",
				 b->path, n, n == 1 ? "" : "s",
				 req->input_count,
				 req->input_count == 1 ? " was" : "s were");
	for (size_t i = 0; i < n; i++) {
		usc_tensor_spec spec;
		char what[64];
		usc_status st;

		st = usc_eval_param_spec(b->ref, i, &spec, err);
		if (st != USC_OK)
			return st;
		snprintf(what, sizeof what, "parameter %zu of the module", i);
		spec.what = what;
		if (sm->drawn)
			st = usc_audit_draw(sm->dist, sm->seed, i, &spec,
					    working, &in[i], err);
		else
			st = usc_tensor_read(req->inputs[i], &spec,
					     req->raw ? USC_TENSOR_READ_RAW : 0,
					     &in[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* A module's reference outputs on the inputs (the caller destroys them). */
static usc_status reference_outputs(const side *s, usc_tensor **in, size_t n,
				    usc_tensor ***outs, size_t *count,
				    usc_error *err)
{
	usc_status st;

	*outs = NULL;
	*count = 0;
	st = usc_eval_bind_all(s->ref, (const usc_tensor *const *)in, n, err);
	if (st == USC_OK)
		st = usc_eval_run(s->ref, err);
	if (st != USC_OK) {
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err ? err->message : "");
		return usc__fail(err, st, "%s: %s", s->path, msg);
	}
	*count = usc_eval_output_count(s->ref);
	*outs = usc__calloc(*count ? *count : 1, sizeof **outs);
	if (!*outs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < *count; i++) {
		st = usc_eval_take_output(s->ref, i, &(*outs)[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static void tensors_free(usc_tensor **t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		usc_tensor_destroy(t[i]);
	usc__free(t);
}

/* AFTER's outputs must be BEFORE's, in count, type and shape. */
static usc_status same_outputs(const side *b, const side *a, usc_tensor **rb,
			       size_t nb, usc_tensor **ra, size_t na,
			       usc_error *err)
{
	if (nb != na)
		return usc__fail(err, USC_EINVAL,
				 "%s: %zu output%s, but %s has %zu: the "
				 "modules must be the same program",
				 a->path, na, na == 1 ? "" : "s", b->path, nb);
	for (size_t i = 0; i < nb; i++) {
		usc_tensor_spec sb = usc_tensor_spec_of(rb[i]);
		usc_tensor_spec sa = usc_tensor_spec_of(ra[i]);
		char tb[128], ta[128];
		bool same = sb.dtype == sa.dtype && sb.rank == sa.rank;

		for (size_t d = 0; same && d < sb.rank; d++)
			same = sb.dims[d] == sa.dims[d];
		if (!same) {
			usc_tensor_spec_format(&sb, tb, sizeof tb);
			usc_tensor_spec_format(&sa, ta, sizeof ta);
			return usc__fail(err, USC_EINVAL,
					 "%s: output %zu is %s, but %s in %s: "
					 "the modules must be the same program",
					 a->path, i, ta, tb, b->path);
		}
		if (!usc_dtype_is_float(sb.dtype) &&
		    !usc_dtype_is_integer(sb.dtype))
			return usc__fail(err, USC_EUNSUPPORTED,
					 "%s: output %zu is %s: the audit "
					 "compares real and integer outputs",
					 b->path, i, tb);
	}
	return USC_OK;
}

/* One check of path with devs standing in for the device outputs. */
static usc_status run_check(const usc_audit_request *req, const char *path,
			    usc_tensor **in, size_t nin, usc_tensor **devs,
			    size_t ndev, usc_check_report **out,
			    usc_error *err)
{
	usc_check_request c = usc_check_request_default();

	c.hlo_path = path;
	c.input_count = nin;
	c.input_tensors = (const usc_tensor *const *)in;
	c.device_count = ndev;
	c.device_tensors = (const usc_tensor *const *)devs;
	c.reduce_order = req->reduce_order;
	c.oracle_precision_max = req->oracle_precision_max;
	c.strict_oracle = req->strict_oracle;
	c.worst = 0;
	c.profile = req->profile;
	c.no_profile = true;
	return usc_check_run(&c, out, err);
}

/* The ULP of type t at x (1 for integers; NaN where there is none). */
static double ulp_at(usc_dtype t, double x)
{
	double u;

	if (!usc_dtype_is_float(t))
		return 1.0;
	if (usc_ulp_double(t, x, &u) != USC_OK)
		return NAN;
	return u;
}

/*
 * The function at element j: the two oracle enclosures (midpoint,
 * radius) compared.  Disjoint enclosures (beyond the doubles' own last
 * bit) mean different values; one NaN or infinity against something else
 * is a special change.
 */
static void function_at(const usc_check_output *ob, const usc_check_output *oa,
			size_t j, usc_dtype t, usc_audit_elements *e)
{
	double mb = ob->oracle_mid[j], ma = oa->oracle_mid[j];
	double rb = ob->oracle_rad[j], ra = oa->oracle_rad[j];
	double d;

	e->fn_ulps[j] = 0;
	if (isnan(mb) && isnan(ma))
		return;
	if (isnan(mb) || isnan(ma) || ((isinf(mb) || isinf(ma)) && mb != ma)) {
		e->fn_ulps[j] = INFINITY;
		e->flags[j] |= ELEM_CHANGED | ELEM_SPECIAL;
		return;
	}
	if (isinf(mb))
		return; /* the same infinity */
	d = fabs(ma - mb);
	if (d <= (ra + rb) * (1 + 0x1p-50) + 0x1p-52 * fmax(fabs(ma), fabs(mb)))
		return;
	e->flags[j] |= ELEM_CHANGED;
	e->fn_ulps[j] = (ma - mb) / ulp_at(t, mb);
}

/* The width of a finite, known envelope in ULPs at x; NaN otherwise. */
static double width_at(const usc_envelope *env, usc_dtype t, double x)
{
	if (!env || (env->flags & USC_ENV_UNKNOWN) ||
	    !(env->flags & USC_ENV_FINITE) || !usc_dtype_is_float(t))
		return NAN;
	return (env->hi - env->lo) / ulp_at(t, isfinite(x) ? x : env->lo);
}

/*
 * The per-element figures of output i of a sample from its three checks:
 * rb (BEFORE, BEFORE's reference as device), rx (BEFORE, AFTER's
 * reference) and ra (AFTER, AFTER's reference).
 */
static usc_status sample_elements(const usc_check_report *rb,
				  const usc_check_report *rx,
				  const usc_check_report *ra, size_t i,
				  usc_audit_elements *e, usc_error *err)
{
	const usc_check_output *ob = &rb->outputs[i], *ox = &rx->outputs[i];
	const usc_check_output *oa = &ra->outputs[i];
	usc_dtype t = usc_tensor_dtype(ob->device);
	uint64_t n = usc_tensor_count(ob->device);
	usc_status st = elements_alloc(e, n, err);

	for (size_t j = 0; st == USC_OK && j < n; j++) {
		usc_tensor_get_bits(ob->device, j, &e->ref_before[j]);
		usc_tensor_get_bits(ox->device, j, &e->ref_after[j]);
		e->ulp_before[j] = ob->ulp_oracle[j];
		e->ulp_after[j] = ox->ulp_oracle[j];
		if (ob->undecided[j] || ox->undecided[j])
			e->flags[j] |= ELEM_UNDECIDED;
		function_at(ob, oa, j, t, e);
		e->width_before[j] = width_at(ob->envelope ? &ob->envelope[j]
							    : NULL,
					      t, ob->oracle_mid[j]);
		e->width_after[j] = width_at(oa->envelope ? &oa->envelope[j]
							   : NULL,
					     t, ob->oracle_mid[j]);
		if (ob->envelope &&
		    !(ob->envelope[j].flags & USC_ENV_UNKNOWN) &&
		    usc_dtype_is_float(t) &&
		    !usc_envelope_contains(&ob->envelope[j], t,
					   e->ref_after[j]))
			e->flags[j] |= ELEM_OUTSIDE;
	}
	return st;
}

/* ------------------------------------------------------------ figures */

/* |x| with NaN as the worst: a NaN error is infinitely wrong. */
static double badness(double x)
{
	return isnan(x) ? INFINITY : fabs(x);
}

/*
 * The verdict of one output's figures against threshold t: a change of
 * max or p99 |ulp| beyond t, or of the count of NaN errors, decides;
 * regressing outweighs improving.
 */
static void judge(usc_audit_figures *f, double t)
{
	const usc_results_stats *b = &f->before, *a = &f->after;
	double dmax = a->max_abs - b->max_abs, dp99 = a->p99_abs - b->p99_abs;

	f->verdict = USC_AUDIT_NEUTRAL;
	if (a->nan_count > b->nan_count) {
		f->verdict = USC_AUDIT_REGRESSED;
		snprintf(f->reason, sizeof f->reason,
			 "NaN errors %llu -> %llu",
			 (unsigned long long)b->nan_count,
			 (unsigned long long)a->nan_count);
	} else if (dmax > t || dp99 > t) {
		f->verdict = USC_AUDIT_REGRESSED;
		snprintf(f->reason, sizeof f->reason,
			 "%s |ulp| %.4g -> %.4g (+%.4g > %g)",
			 dmax > t ? "max" : "p99",
			 dmax > t ? b->max_abs : b->p99_abs,
			 dmax > t ? a->max_abs : a->p99_abs,
			 dmax > t ? dmax : dp99, t);
	} else if (a->nan_count < b->nan_count) {
		f->verdict = USC_AUDIT_IMPROVED;
		snprintf(f->reason, sizeof f->reason,
			 "NaN errors %llu -> %llu",
			 (unsigned long long)b->nan_count,
			 (unsigned long long)a->nan_count);
	} else if (-dmax > t || -dp99 > t) {
		f->verdict = USC_AUDIT_IMPROVED;
		snprintf(f->reason, sizeof f->reason,
			 "%s |ulp| %.4g -> %.4g (%.4g < -%g)",
			 -dmax > t ? "max" : "p99",
			 -dmax > t ? b->max_abs : b->p99_abs,
			 -dmax > t ? a->max_abs : a->p99_abs,
			 -dmax > t ? dmax : dp99, t);
	} else {
		snprintf(f->reason, sizeof f->reason,
			 "max |ulp| %.4g -> %.4g, p99 %.4g -> %.4g (within "
			 "%g)",
			 b->max_abs, a->max_abs, b->p99_abs, a->p99_abs, t);
	}
}

/*
 * The figures of one output over the elements of nset sets (one sample's,
 * or every sample's for the pooled figures), judged against t.
 */
static usc_status figures_of(const usc_audit_elements *const *sets,
			     size_t nset, bool enveloped, double t,
			     usc_audit_figures *f, usc_error *err)
{
	uint64_t n = 0, k = 0, w = 0;
	double *xb, *xa, *wb, *wa;
	usc_status st = USC_OK;

	memset(f, 0, sizeof *f);
	for (size_t s = 0; s < nset; s++)
		n += sets[s]->count;
	xb = usc__calloc(n ? (size_t)n : 1, sizeof *xb);
	xa = usc__calloc(n ? (size_t)n : 1, sizeof *xa);
	wb = usc__calloc(n ? (size_t)n : 1, sizeof *wb);
	wa = usc__calloc(n ? (size_t)n : 1, sizeof *wa);
	if (!xb || !xa || !wb || !wa)
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	f->count = n;
	f->enveloped = enveloped;
	for (size_t s = 0; st == USC_OK && s < nset; s++) {
		const usc_audit_elements *e = sets[s];

		for (uint64_t j = 0; j < e->count; j++, k++) {
			double b = badness(e->ulp_before[j]);
			double a = badness(e->ulp_after[j]);

			xb[k] = e->ulp_before[j];
			xa[k] = e->ulp_after[j];
			if (e->ref_before[j] == e->ref_after[j])
				f->identical++, f->unchanged++;
			else if (a < b)
				f->better++;
			else if (a > b)
				f->worse++;
			else
				f->unchanged++;
			f->undecided += (e->flags[j] & ELEM_UNDECIDED) != 0;
			f->after_outside_before +=
				(e->flags[j] & ELEM_OUTSIDE) != 0;
			if (e->flags[j] & ELEM_CHANGED) {
				double m = fabs(e->fn_ulps[j]);

				f->fn_changed++;
				f->fn_special +=
					(e->flags[j] & ELEM_SPECIAL) != 0;
				if (f->fn_changed == 1 || m > f->fn_max_ulps) {
					f->fn_max_ulps = m;
					f->fn_worst = j;
					f->fn_worst_sample = s;
				}
			}
			if (!isnan(e->width_before[j]) &&
			    !isnan(e->width_after[j])) {
				wb[w] = e->width_before[j];
				wa[w] = e->width_after[j];
				f->wider += wa[w] > wb[w];
				f->narrower += wa[w] < wb[w];
				w++;
			}
		}
	}
	f->env_known = w;
	if (st == USC_OK)
		st = usc_results_stats_compute(xb, n, &f->before, err);
	if (st == USC_OK)
		st = usc_results_stats_compute(xa, n, &f->after, err);
	if (st == USC_OK)
		st = usc_results_stats_compute(wb, w, &f->width_before, err);
	if (st == USC_OK)
		st = usc_results_stats_compute(wa, w, &f->width_after, err);
	usc__free(xb);
	usc__free(xa);
	usc__free(wb);
	usc__free(wa);
	if (st == USC_OK)
		judge(f, t);
	return st;
}

/* The function's worst element's two oracle midpoints, for the report. */
static void worst_mids(usc_audit_figures *f, const usc_check_report *rb,
		       const usc_check_report *ra, size_t i)
{
	if (!f->fn_changed)
		return;
	f->fn_worst_before = rb->outputs[i].oracle_mid[f->fn_worst];
	f->fn_worst_after = ra->outputs[i].oracle_mid[f->fn_worst];
}

/* One sample: inputs, references, three checks, figures. */
static usc_status run_sample(const usc_audit_request *req, usc_audit_report *r,
			     side *b, side *a, usc_dtype working,
			     usc_audit_sample *sm, double t, usc_error *err)
{
	size_t nin = usc_eval_param_count(b->ref), nb = 0, na = 0;
	usc_tensor **in = usc__calloc(nin ? nin : 1, sizeof *in);
	usc_tensor **refb = NULL, **refa = NULL;
	usc_check_report *rb = NULL, *rx = NULL, *ra = NULL;
	usc_status st = in ? USC_OK
			   : usc__fail(err, USC_ENOMEM, "out of memory");

	if (st == USC_OK)
		st = sample_inputs(req, b, working, sm, in, nin, err);
	if (st == USC_OK)
		st = reference_outputs(b, in, nin, &refb, &nb, err);
	if (st == USC_OK)
		st = reference_outputs(a, in, nin, &refa, &na, err);
	if (st == USC_OK)
		st = same_outputs(b, a, refb, nb, refa, na, err);
	if (st == USC_OK && !r->outputs) {
		r->output_count = nb;
		r->outputs = usc__calloc(nb ? nb : 1, sizeof *r->outputs);
		if (!r->outputs)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		for (size_t i = 0; st == USC_OK && i < nb; i++) {
			usc_tensor_spec sp = usc_tensor_spec_of(refb[i]);

			r->outputs[i].dtype = sp.dtype;
			r->outputs[i].rank = sp.rank < 8 ? sp.rank : 8;
			memcpy(r->outputs[i].dims, sp.dims,
			       r->outputs[i].rank * sizeof(int64_t));
		}
	}
	if (st == USC_OK && req->ops && sm == &r->samples[0])
		st = usc__audit_ops(req, b->m, a->m, in, nin, r, err);
	if (st == USC_OK)
		st = run_check(req, b->path, in, nin, refb, nb, &rb, err);
	if (st == USC_OK)
		st = run_check(req, b->path, in, nin, refa, na, &rx, err);
	if (st == USC_OK)
		st = run_check(req, a->path, in, nin, refa, na, &ra, err);
	if (st == USC_OK) {
		sm->outputs = usc__calloc(nb ? nb : 1, sizeof *sm->outputs);
		sm->elements = usc__calloc(nb ? nb : 1, sizeof *sm->elements);
		if (!sm->outputs || !sm->elements)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; st == USC_OK && i < nb; i++) {
		const usc_audit_elements *one = &sm->elements[i];

		st = sample_elements(rb, rx, ra, i, &sm->elements[i], err);
		if (st == USC_OK)
			st = figures_of(&one, 1, rb->classified, t,
					&sm->outputs[i], err);
		if (st == USC_OK)
			worst_mids(&sm->outputs[i], rb, ra, i);
	}
	usc_check_report_destroy(rb);
	usc_check_report_destroy(rx);
	usc_check_report_destroy(ra);
	tensors_free(refb, nb);
	tensors_free(refa, na);
	tensors_free(in, nin);
	return st;
}

/* The pooled figures of every output and the report's verdict. */
static usc_status pool(usc_audit_report *r, double t, usc_error *err)
{
	const usc_audit_elements **sets;
	usc_status st = USC_OK;
	const usc_audit_figures *why = NULL;
	size_t why_i = 0;

	r->pooled = usc__calloc(r->output_count ? r->output_count : 1,
				sizeof *r->pooled);
	sets = usc__calloc(r->sample_count ? r->sample_count : 1,
			   sizeof *sets);
	if (!r->pooled || !sets) {
		usc__free(sets);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	r->verdict = USC_AUDIT_NEUTRAL;
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		usc_audit_figures *f = &r->pooled[i];

		for (size_t s = 0; s < r->sample_count; s++)
			sets[s] = &r->samples[s].elements[i];
		st = figures_of(sets, r->sample_count, r->profiled, t, f, err);
		if (st != USC_OK)
			break;
		if (f->fn_changed) {
			const usc_audit_figures *sf =
				&r->samples[f->fn_worst_sample].outputs[i];

			f->fn_worst_before = sf->fn_worst_before;
			f->fn_worst_after = sf->fn_worst_after;
			r->function_changed = true;
			if (f->fn_max_ulps > r->function_max_ulps)
				r->function_max_ulps = f->fn_max_ulps;
		}
		if (f->verdict == USC_AUDIT_REGRESSED &&
		    r->verdict != USC_AUDIT_REGRESSED) {
			r->verdict = USC_AUDIT_REGRESSED;
			why = f, why_i = i;
		} else if (f->verdict == USC_AUDIT_IMPROVED &&
			   r->verdict == USC_AUDIT_NEUTRAL) {
			r->verdict = USC_AUDIT_IMPROVED;
			why = f, why_i = i;
		} else if (!why) {
			why = f, why_i = i;
		}
	}
	usc__free(sets);
	if (st == USC_OK && why)
		snprintf(r->reason, sizeof r->reason, "output %zu: %s", why_i,
			 why->reason);
	return st;
}

/* The report's samples: one of files, or samples per distribution. */
static usc_status plan_samples(const usc_audit_request *req,
			       usc_audit_report *r, usc_error *err)
{
	size_t per = req->samples ? req->samples : 1;
	size_t n = req->input_count ? 1 : req->dist_count * per;

	r->samples = usc__calloc(n, sizeof *r->samples);
	if (!r->samples)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->sample_count = n;
	if (req->input_count) {
		snprintf(r->samples[0].label, sizeof r->samples[0].label,
			 "inputs");
		return USC_OK;
	}
	for (size_t d = 0; d < req->dist_count; d++)
		for (size_t k = 0; k < per; k++) {
			usc_audit_sample *sm = &r->samples[d * per + k];

			if (!usc_audit_dist_name(req->dists[d]))
				return usc__fail(err, USC_EINVAL,
						 "no such distribution");
			sm->drawn = true;
			sm->dist = req->dists[d];
			sm->seed = req->seed + k;
			snprintf(sm->label, sizeof sm->label, "%s/%zu",
				 usc_audit_dist_name(sm->dist), k);
		}
	return USC_OK;
}

static usc_status name_copy(const usc_hlo_module *m, char **out,
			    usc_error *err)
{
	*out = usc__strdup(m->name ? m->name : "module");
	return *out ? USC_OK : usc__fail(err, USC_ENOMEM, "out of memory");
}

usc_status usc_audit_run(const usc_audit_request *req,
			 usc_audit_report **out, usc_error *err)
{
	usc_audit_report *r;
	side b, a;
	usc_status st;
	usc_dtype working = USC_DTYPE_INVALID;
	int prec = 0;
	double t;

	if (!req || !out || !req->before_path || !req->after_path ||
	    (req->input_count && !req->inputs) ||
	    (req->dist_count && !req->dists))
		return usc__fail(err, USC_EINVAL, "incomplete audit request");
	*out = NULL;
	if (!req->input_count && !req->dist_count)
		return usc__fail(err, USC_EINVAL,
				 "no inputs: give input files or "
				 "distributions to draw them from");
	t = req->threshold > 0 ? req->threshold : USC_AUDIT_THRESHOLD;
	r = usc__calloc(1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memset(&b, 0, sizeof b);
	memset(&a, 0, sizeof a);
	r->threshold = t;
	r->before_path = usc__strdup(req->before_path);
	r->after_path = usc__strdup(req->after_path);
	st = r->before_path && r->after_path
		     ? USC_OK
		     : usc__fail(err, USC_ENOMEM, "out of memory");
	if (req->profile) {
		r->profiled = true;
		r->profile = *req->profile;
	}
	if (st == USC_OK)
		st = side_load(req, req->before_path, &b, err);
	if (st == USC_OK)
		st = side_load(req, req->after_path, &a, err);
	if (st == USC_OK)
		st = same_params(&b, &a, err);
	if (st == USC_OK)
		st = name_copy(b.m, &r->before_name, err);
	if (st == USC_OK)
		st = name_copy(a.m, &r->after_name, err);
	if (st == USC_OK) {
		narrowest(b.m, &working, &prec);
		narrowest(a.m, &working, &prec);
		r->input_count = usc_eval_param_count(b.ref);
		st = plan_samples(req, r, err);
	}
	for (size_t s = 0; st == USC_OK && s < r->sample_count; s++)
		st = run_sample(req, r, &b, &a, working, &r->samples[s], t,
				err);
	if (st == USC_OK)
		st = pool(r, t, err);
	side_clear(&b);
	side_clear(&a);
	if (st != USC_OK) {
		usc_audit_report_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}

void usc__audit_judge(usc_audit_figures *f, double t)
{
	judge(f, t);
}

int usc_audit_gate(const usc_audit_report *r, double t)
{
	if (r->function_changed && !(r->function_max_ulps <= t))
		return 4;
	for (size_t i = 0; i < r->output_count; i++) {
		usc_audit_figures f = r->pooled[i];

		judge(&f, t);
		if (f.verdict == USC_AUDIT_REGRESSED)
			return 3;
	}
	return 0;
}
