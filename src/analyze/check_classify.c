/*
 * The classification step of a check: the legitimate envelope of every
 * output element under the request's profile, the class of each element,
 * the counts, and the kernel's verdict with a one-line reason.
 *
 * It runs after the reference and the oracle, whose figures it reads from
 * the report, and evaluates the kernel once more in the envelope domain
 * (oracles/envelope.c).  When the envelope cannot be computed at all (an
 * index that depends on an uncertain value, say), every element gets the
 * unknown envelope: the elements that equal the reference stay exact, the
 * others are undecided, and the reason says why.  Nothing is guessed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/check_internal.h"
#include "eval/eval_values.h"
#include "internal.h"
#include "../../oracles/envelope.h"


static usc_status alloc_arrays(usc_check_output *o, usc_error *err)
{
	uint64_t n = usc_tensor_count(o->device);
	size_t m = n ? (size_t)n : 1;

	o->envelope = usc__calloc(m, sizeof *o->envelope);
	o->cls = usc__calloc(m, sizeof *o->cls);
	o->expected_ulps = usc__calloc(m, sizeof *o->expected_ulps);
	if (!o->envelope || !o->cls || !o->expected_ulps)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (uint64_t k = 0; k < n; k++) {
		o->envelope[k].flags = USC_ENV_UNKNOWN;
		o->expected_ulps[k] = NAN;
	}
	return USC_OK;
}

/* The envelope run's state for its visitor. */
typedef struct env_ctx {
	usc_check_report *r;
	usc_eval *ev;
} env_ctx;

/* One tile (or one whole output) of the envelope: its public form. */
static usc_status env_visit(void *ctx, size_t i, size_t first, size_t count,
			    const void *values, usc_dtype t, usc_error *err)
{
	env_ctx *c = ctx;
	usc_check_output *out = &c->r->outputs[i];
	usc_status st = USC_OK;

	for (size_t j = 0; st == USC_OK && j < count; j++) {
		const void *v = (const unsigned char *)values +
				j * usc__domain_envelope.value_size;
		usc__envelope_elem e;
		uint64_t bits;

		st = usc__domain_envelope.to_output(
			usc__eval_domain_state(c->ev), t, v, &bits, &e, err);
		if (st == USC_OK)
			out->envelope[first + j] = usc__envelope_public(&e);
	}
	return st;
}

/*
 * The envelope run, streamed like the tier's (a loop kernel's envelope
 * values exist a tile at a time; docs/evaluator.md, "Tiles"): each tile's
 * envelopes go to the report as they are made.  *note receives why the
 * envelope is unknown when the domain refuses the kernel
 * (USC_EUNSUPPORTED); other failures are the check's failures.
 */
static usc_status run_envelope(const usc_check_request *req,
			       usc_check_report *r, char *note, size_t cap,
			       usc_error *err)
{
	usc_eval_options o = usc_eval_options_default();
	usc__eval_stream s;
	env_ctx c;
	usc_status st;

	o.domain = USC_DOMAIN_ENVELOPE;
	o.reduce_order = req->reduce_order;
	o.profile = req->profile;
	memset(&c, 0, sizeof c);
	c.r = r;
	memset(&s, 0, sizeof s);
	s.visit = env_visit;
	s.ctx = &c;
	st = usc_eval_create_computation(r->computation, &o, &c.ev, err);
	for (size_t i = 0; st == USC_OK && i < r->input_count; i++)
		st = usc_eval_bind(c.ev, i, r->inputs[i], err);
	if (st == USC_OK)
		st = usc__eval_run_stream(c.ev, &s, err);
	if (st == USC_EUNSUPPORTED) {
		snprintf(note, cap, "the envelope is unknown: %s",
			 err ? err->message : "unsupported");
		usc_error_clear(err);
		/* Envelopes a visit wrote before the refusal are dropped. */
		for (size_t i = 0; i < r->output_count; i++) {
			usc_check_output *out = &r->outputs[i];
			uint64_t n = usc_tensor_count(out->device);

			for (uint64_t k = 0; k < n; k++) {
				memset(&out->envelope[k], 0,
				       sizeof out->envelope[k]);
				out->envelope[k].flags = USC_ENV_UNKNOWN;
			}
		}
		st = USC_OK;
	}
	usc_eval_destroy(c.ev);
	return st;
}

/* The class of an integer or pred element: exact, inside, or a defect. */
static usc_class classify_discrete(const usc_check_output *o, uint64_t k,
				   usc_dtype t, uint64_t d, uint64_t ref)
{
	const usc_envelope *e = &o->envelope[k];
	int64_t sv = 0;
	uint64_t uv = 0;
	double v;

	if (d == ref)
		return USC_CLASS_EXACT;
	if (e->flags & USC_ENV_UNKNOWN)
		return USC_CLASS_UNDECIDED;
	(void)usc_decode_int(t, d, &sv, &uv);
	v = usc_format_of(t)->kind == USC_KIND_SINT ? (double)sv : (double)uv;
	return (e->flags & USC_ENV_FINITE) && e->lo <= v && v <= e->hi
		       ? USC_CLASS_ENVELOPE
		       : USC_CLASS_DEFECT;
}

static usc_status classify_output(const usc_check_request *req,
				  usc_check_output *o, usc_error *err)
{
	usc_dtype t = usc_tensor_dtype(o->device);
	uint64_t n = usc_tensor_count(o->device);
	bool fl = usc_dtype_is_float(t);

	memset(&o->counts, 0, sizeof o->counts);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t d, ref;
		usc_class c;

		usc_tensor_get_bits(o->device, k, &d);
		usc_tensor_get_bits(o->reference, k, &ref);
		if (fl) {
			usc_classify_input in;
			usc_classify_result res;
			usc_status st;

			memset(&in, 0, sizeof in);
			in.type = t;
			in.device = d;
			in.reference = ref;
			in.oracle_decided = !o->undecided[k];
			in.ulp_oracle = o->ulp_oracle[k];
			in.exact = o->undecided[k] ? NAN : o->oracle_mid[k];
			in.envelope = o->envelope[k];
			in.lambda = req->lambda;
			st = usc_classify_element(&in, &res, err);
			if (st != USC_OK)
				return st;
			c = res.cls;
			o->expected_ulps[k] = res.expected_ulps;
		} else {
			c = classify_discrete(o, k, t, d, ref);
		}
		o->cls[k] = (uint8_t)c;
		o->counts.n[c]++;
	}
	return USC_OK;
}

/* How much an element's class weighs in the worst list and the reason. */
static int class_rank(usc_class c)
{
	switch (c) {
	case USC_CLASS_NAN_MISMATCH:
	case USC_CLASS_INF_MISMATCH:
	case USC_CLASS_SIGN_MISMATCH:
	case USC_CLASS_DEFECT:
		return 4;
	case USC_CLASS_SUSPICIOUS:
		return 3;
	case USC_CLASS_UNDECIDED:
		return 2;
	case USC_CLASS_ENVELOPE:
	case USC_CLASS_ROUNDING:
		return 1;
	default:
		return 0;
	}
}

/* Steps outside the envelope of element k (0 inside), for ordering. */
double usc__check_outside(const usc_check_output *o, uint64_t k)
{
	usc_classify_input in;
	usc_classify_result res;
	usc_dtype t = usc_tensor_dtype(o->device);

	if (!usc_dtype_is_float(t) || class_rank(o->cls[k]) < 4)
		return 0;
	memset(&in, 0, sizeof in);
	in.type = t;
	usc_tensor_get_bits(o->device, k, &in.device);
	usc_tensor_get_bits(o->reference, k, &in.reference);
	in.envelope = o->envelope[k];
	in.oracle_decided = !o->undecided[k];
	in.ulp_oracle = o->ulp_oracle[k];
	in.exact = NAN;
	if (usc_classify_element(&in, &res, NULL) != USC_OK)
		return 0;
	return res.outside_ulps;
}

bool usc__check_worse(const usc_check_output *o, uint64_t a, uint64_t b)
{
	int ra = class_rank(o->cls[a]), rb = class_rank(o->cls[b]);
	double ea, eb;

	if (ra != rb)
		return ra > rb;
	if (ra == 4) {
		ea = usc__check_outside(o, a);
		eb = usc__check_outside(o, b);
		if (ea != eb)
			return ea > eb;
	}
	ea = o->ulp_oracle[a];
	eb = o->ulp_oracle[b];
	if (isnan(ea) || isnan(eb))
		return isnan(ea) && !isnan(eb);
	return fabs(ea) > fabs(eb);
}

/* Writes element k's multi-index of t as "3,17". */
static void format_index(char *buf, size_t cap, const usc_tensor *t,
			 uint64_t k)
{
	size_t rank = usc_tensor_rank(t), len = 0;
	const int64_t *dims = usc_tensor_dims(t);
	uint64_t idx[16] = {0}, rest = k;

	buf[0] = '\0';
	if (rank > 16) {
		snprintf(buf, cap, "%" PRIu64, k);
		return;
	}
	for (size_t i = rank; i-- > 0;) {
		uint64_t d = dims[i] > 0 ? (uint64_t)dims[i] : 1;

		idx[i] = rest % d;
		rest /= d;
	}
	for (size_t i = 0; i < rank && len + 1 < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRIu64,
					i ? "," : "", idx[i]);
}

/* The one-line reason of the verdict. */
static void write_reason(usc_check_report *r, const char *note)
{
	usc_classify_counts all;
	uint64_t total = 0, outside;
	size_t wi = 0;
	uint64_t wk = 0;
	bool have = false;
	char idx[128], dv[64];
	double d = 0;

	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];
		uint64_t n = usc_tensor_count(o->device);

		for (int c = 0; c < USC_CLASS_COUNT; c++)
			all.n[c] += o->counts.n[c];
		total += n;
		for (uint64_t k = 0; k < n; k++)
			if (!have ||
			    (i == wi ? usc__check_worse(o, k, wk)
				     : class_rank(o->cls[k]) >
					       class_rank(r->outputs[wi].cls[wk]))) {
				wi = i;
				wk = k;
				have = true;
			}
	}
	r->verdict = usc_classify_verdict(&all);
	outside = all.n[USC_CLASS_DEFECT] + all.n[USC_CLASS_NAN_MISMATCH] +
		  all.n[USC_CLASS_INF_MISMATCH] + all.n[USC_CLASS_SIGN_MISMATCH];
	if (!have) {
		snprintf(r->reason, sizeof r->reason,
			 "%s: no elements", usc_verdict_name(r->verdict));
		return;
	}
	{
		const usc_check_output *o = &r->outputs[wi];
		usc_dtype t = usc_tensor_dtype(o->device);
		uint64_t bits;

		format_index(idx, sizeof idx, o->device, wk);
		usc_tensor_get_bits(o->device, wk, &bits);
		if (usc_dtype_is_float(t))
			(void)usc_decode_double(t, bits, &d);
		snprintf(dv, sizeof dv, "%.9g", d);
		switch (r->verdict) {
		case USC_VERDICT_DEFECT: {
			char where[160], env[96];
			double steps = usc__check_outside(o, wk);

			if (o->envelope[wk].flags & USC_ENV_FINITE)
				snprintf(env, sizeof env, "[%.9g, %.9g]",
					 o->envelope[wk].lo,
					 o->envelope[wk].hi);
			else
				snprintf(env, sizeof env, "no finite value");
			if (isfinite(steps) && steps > 0)
				snprintf(where, sizeof where,
					 "%.0f codes %s the envelope %s", steps,
					 d < o->envelope[wk].lo ? "below"
								: "above",
					 env);
			else
				snprintf(where, sizeof where,
					 "outside the envelope %s", env);
			snprintf(r->reason, sizeof r->reason,
				 "defect: %" PRIu64 " of %" PRIu64
				 " elements outside the %s envelope; worst: "
				 "output %zu [%s] = %s, %s (%s)",
				 outside, total, r->profile.name, wi, idx, dv,
				 where, usc_class_name((usc_class)o->cls[wk]));
			break;
		}
		case USC_VERDICT_SUSPICIOUS:
			snprintf(r->reason, sizeof r->reason,
				 "suspicious: %" PRIu64 " of %" PRIu64
				 " elements inside the %s envelope but beyond "
				 "the expected error; worst: output %zu [%s] "
				 "%.3g ulp from the exact value (expected "
				 "<= %.3g)",
				 all.n[USC_CLASS_SUSPICIOUS], total,
				 r->profile.name, wi, idx, o->ulp_oracle[wk],
				 o->expected_ulps[wk]);
			break;
		case USC_VERDICT_UNDECIDED:
			snprintf(r->reason, sizeof r->reason,
				 "undecided: %" PRIu64 " of %" PRIu64
				 " elements could not be classified%s%s",
				 all.n[USC_CLASS_UNDECIDED], total,
				 note[0] ? "; " : "", note);
			break;
		default:
			snprintf(r->reason, sizeof r->reason,
				 "legit: all %" PRIu64
				 " elements inside the %s envelope (%" PRIu64
				 " exact, %" PRIu64 " one rounding away)",
				 total, r->profile.name,
				 all.n[USC_CLASS_EXACT],
				 all.n[USC_CLASS_ROUNDING]);
			break;
		}
	}
}

usc_status usc__check_classify(const usc_check_request *req,
			       usc_check_report *r, usc_error *err)
{
	char note[USC_ERROR_MESSAGE_SIZE + 64] = "";
	usc_status st = USC_OK;

	if (!req->profile)
		return USC_OK;
	r->profile = *req->profile;
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
		st = alloc_arrays(&r->outputs[i], err);
	if (st == USC_OK)
		st = run_envelope(req, r, note, sizeof note, err);
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
		st = classify_output(req, &r->outputs[i], err);
	if (st != USC_OK)
		return st;
	r->classified = true;
	write_reason(r, note);
	return USC_OK;
}

usc_status usc__check_envelope_arrays(const usc_check_report *r,
				      usc_results_output *outs,
				      usc_error *err)
{
	if (!r->classified)
		return USC_OK;
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];
		uint64_t n = usc_tensor_count(o->device);
		size_t m = n ? (size_t)n : 1;
		double *lo = usc__calloc(m, sizeof *lo);
		double *hi = usc__calloc(m, sizeof *hi);
		uint8_t *fl = usc__calloc(m, 1);

		outs[i].envelope_lo = lo;
		outs[i].envelope_hi = hi;
		outs[i].envelope_flags = fl;
		outs[i].cls = o->cls;
		if (!lo || !hi || !fl)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		for (uint64_t k = 0; k < n; k++) {
			const usc_envelope *e = &o->envelope[k];
			bool fin = (e->flags & USC_ENV_FINITE) &&
				   !(e->flags & USC_ENV_UNKNOWN);

			lo[k] = fin ? e->lo : NAN;
			hi[k] = fin ? e->hi : NAN;
			fl[k] = (uint8_t)e->flags;
		}
	}
	return USC_OK;
}

void usc__check_envelope_arrays_free(const usc_check_report *r,
				     usc_results_output *outs)
{
	for (size_t i = 0; i < r->output_count; i++) {
		usc__free((void *)outs[i].envelope_lo);
		usc__free((void *)outs[i].envelope_hi);
		usc__free((void *)outs[i].envelope_flags);
		outs[i].envelope_lo = outs[i].envelope_hi = NULL;
		outs[i].envelope_flags = NULL;
		outs[i].cls = NULL;
	}
}
