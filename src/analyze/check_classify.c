/*
 * The classification step of a check: the legitimate envelope of every
 * output element under the request's profile, the class of each element,
 * the counts, and the kernel's verdict with a one-line reason.
 *
 * It runs after the reference and the oracle, whose figures it reads from
 * the part of each output being checked (the whole output, or a piece of
 * it when the check streams), and evaluates the kernel once more in the
 * envelope domain (oracles/envelope.c).  When the envelope cannot be computed at all (an
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
#include "dtype/rn_fast.h"


/* The envelope run's state for its visitor. */
typedef struct env_ctx {
	usc__check_part *parts;
	size_t nparts;
	usc_eval *ev;
} env_ctx;

/*
 * The envelope's flags are the public ones bit for bit (oracles/envelope.h
 * and include/ulpscope/classify.h), so that env_visit gives an element
 * its public form (usc__envelope_public) by a mask instead of a call and
 * a walk over the flags per element.
 */
_Static_assert((unsigned)USC__ENV_FINITE == (unsigned)USC_ENV_FINITE &&
		       (unsigned)USC__ENV_NAN == (unsigned)USC_ENV_NAN &&
		       (unsigned)USC__ENV_POS_INF == (unsigned)USC_ENV_POS_INF &&
		       (unsigned)USC__ENV_NEG_INF == (unsigned)USC_ENV_NEG_INF &&
		       (unsigned)USC__ENV_UNKNOWN == (unsigned)USC_ENV_UNKNOWN &&
		       (unsigned)USC__ENV_RANGE_CLIPPED == (unsigned)USC_ENV_RANGE_CLIPPED &&
		       (unsigned)USC__ENV_FLUSHED == (unsigned)USC_ENV_FLUSHED &&
		       (unsigned)USC__ENV_APPROX == (unsigned)USC_ENV_APPROX &&
		       (unsigned)USC__ENV_NO_SUBNORMAL == (unsigned)USC_ENV_NO_SUBNORMAL,
	       "the envelope's flags are the public ones");
#define ENV_PUBLIC_FLAGS                                                   \
	(USC_ENV_FINITE | USC_ENV_NAN | USC_ENV_POS_INF | USC_ENV_NEG_INF |   \
	 USC_ENV_UNKNOWN | USC_ENV_RANGE_CLIPPED | USC_ENV_FLUSHED |          \
	 USC_ENV_APPROX | USC_ENV_NO_SUBNORMAL)

/* One tile (or one whole output) of the envelope: its public form. */
static usc_status env_visit(void *ctx, size_t i, size_t first, size_t count,
			    const void *values, usc_dtype t, usc_error *err)
{
	env_ctx *c = ctx;
	usc__check_part *p;
	usc_status (*to_output)(void *, usc_dtype, const void *, uint64_t *,
				void *, usc_error *) =
		usc__domain_envelope.to_output;
	void *state;
	size_t size = usc__domain_envelope.value_size;
	uint64_t k0, lo, hi;

	if (i >= c->nparts)
		return USC_OK;
	p = &c->parts[i];
	state = usc__eval_domain_state(c->ev);
	/* The values' elements that lie in the part: [lo, hi) of the run. */
	k0 = first + p->visit_base;
	lo = p->base > k0 ? p->base - k0 : 0;
	hi = p->base + p->len > k0 ? p->base + p->len - k0 : 0;
	if (hi > count)
		hi = count;
	for (uint64_t j = lo; j < hi; j++) {
		usc__envelope_elem e;
		usc_envelope *out = &p->envelope[k0 + j - p->base];
		uint64_t bits;
		usc_status st = to_output(state, t,
					  (const unsigned char *)values +
						  j * size,
					  &bits, &e, err);

		if (st != USC_OK)
			return st;
		out->lo = e.lo;
		out->hi = e.hi;
		out->roundings = e.roundings;
		out->flags = e.flags & ENV_PUBLIC_FLAGS;
	}
	return USC_OK;
}

void usc__check_envelope_unknown(usc__check_part *parts, size_t nparts)
{
	for (size_t i = 0; i < nparts; i++)
		for (size_t j = 0; j < parts[i].len; j++) {
			memset(&parts[i].envelope[j], 0,
			       sizeof parts[i].envelope[j]);
			parts[i].envelope[j].flags = USC_ENV_UNKNOWN;
		}
}

void usc__check_envelope_tally(usc_check_report *r, usc_eval *env)
{
	uint64_t fast = 0, escalated = 0;

	if (!r || !env)
		return;
	usc__envelope_counts(usc__eval_domain_state(env), &fast, &escalated);
	r->envelope_fast += fast;
	r->envelope_escalated += escalated;
}

usc_status usc__check_envelope(usc_eval *ev, usc__check_part *parts,
			       size_t nparts, uint64_t first, uint64_t count,
			       bool *refused, usc__check_reason *why,
			       usc_error *err)
{
	usc__eval_stream s;
	env_ctx c;
	usc_status st;

	usc__check_envelope_unknown(parts, nparts);
	memset(&c, 0, sizeof c);
	c.parts = parts;
	c.nparts = nparts;
	c.ev = ev;
	memset(&s, 0, sizeof s);
	s.visit = env_visit;
	s.ctx = &c;
	s.first = first;
	s.count = count;
	s.no_tensor = count != 0;
	st = usc__eval_run_stream(ev, &s, err);
	if (st == USC_EUNSUPPORTED) {
		snprintf(why->note, sizeof why->note,
			 "the envelope is unknown: %s",
			 err ? err->message : "unsupported");
		usc_error_clear(err);
		/* Envelopes a visit wrote before the refusal are dropped. */
		usc__check_envelope_unknown(parts, nparts);
		*refused = true;
		st = USC_OK;
	}
	return st;
}

/* The class of an integer or pred element: exact, inside, or a defect. */
static usc_class classify_discrete(const usc_envelope *e, usc_dtype t,
				   uint64_t d, uint64_t ref)
{
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

/* The classifier's input for element j of a part. */
static void classify_input(const usc__check_part *p, size_t j,
			   usc_classify_input *in)
{
	memset(in, 0, sizeof *in);
	in->type = usc_tensor_dtype(p->o->device);
	usc_tensor_get_bits(p->o->device, p->base + j, &in->device);
	usc_tensor_get_bits(p->reference, j, &in->reference);
	in->oracle_decided = !p->undecided[j];
	in->ulp_oracle = p->ulp_oracle[j];
	in->envelope = p->envelope[j];
}

/*
 * The common cases of usc_classify_element in line, for a float type
 * with a fast format (src/dtype/rn_fast.h, looked up once per part): a
 * finite device value inside a finite envelope that is known and keeps
 * subnormals, equal to the reference (exact) or one code from a finite
 * reference (one rounding away).  Returns false for anything else, which
 * the caller hands to usc_classify_element whole.  Where it answers, the
 * class and the expected error are the general function's bit for bit:
 * the same tests in the same order on the same values (rn_fast.h's
 * decoding and ULP are usc_decode_double's and usc_ulp_double's for
 * finite codes, and the distance is usc_ulp_distance's ordinal
 * difference), with the format's figures looked up once instead of in
 * every call.  tests/check/test_check_classify_fast.c holds the two to
 * the same results.  lambda is the request's, resolved (> 0).
 */
bool usc__check_classify_fast(const usc__rn_format *rf,
			      const usc_envelope *e, uint64_t dev,
			      uint64_t ref, double exact, double lambda,
			      usc_class *cls, double *expected)
{
	uint64_t all = (rf->sign_bit << 1) - 1;
	double d, r, ulp, w, n;
	int64_t od, orf;

	/* Codes with bits above the format go the general way. */
	if ((dev | ref) & ~all)
		return false;
	if ((e->flags & USC_ENV_UNKNOWN) || !(e->flags & USC_ENV_FINITE))
		return false;
	if (!usc__rn_decode(rf, dev, &d) || !(e->lo <= d && d <= e->hi))
		return false;
	if ((e->flags & USC_ENV_NO_SUBNORMAL) && d != 0 &&
	    fabs(d) < rf->min_normal)
		return false;
	if (dev == ref) {
		*cls = USC_CLASS_EXACT;
		*expected = NAN;
		return true;
	}
	if (!usc__rn_decode(rf, ref, &r))
		return false;
	ulp = usc__rn_ulp(rf, d);
	w = (e->hi - e->lo) / 2 / ulp;
	/*
	 * fmax and fmin without their libm calls: the operands here are
	 * never NaN (exact and the bounds finite, exact inside them; lambda
	 * and n positive) and never zeros of both signs (exact - lo and
	 * hi - exact are +0 or positive), so the larger and the smaller
	 * are theirs.
	 */
	if (isfinite(exact) && exact >= e->lo && exact <= e->hi) {
		double a = exact - e->lo, b = e->hi - exact;

		w = (a > b ? a : b) / ulp;
	}
	n = e->roundings > 1 ? e->roundings : 1;
	{
		double f = lambda / sqrt(n);

		*expected = 1 + w * (f < 1 ? f : 1);
	}
	od = (dev & rf->sign_bit) ? -(int64_t)(dev & rf->mag_mask)
				  : (int64_t)(dev & rf->mag_mask);
	orf = (ref & rf->sign_bit) ? -(int64_t)(ref & rf->mag_mask)
				   : (int64_t)(ref & rf->mag_mask);
	if (od - orf >= -1 && od - orf <= 1) {
		*cls = USC_CLASS_ROUNDING;
		return true;
	}
	return false;
}

/* Encoding j of an array of w-byte little-endian encodings. */
static inline uint64_t load_enc(const unsigned char *a, size_t w, size_t j)
{
	const unsigned char *q = a + j * w;
	uint64_t v = 0;

	switch (w) {
	case 1:
		return q[0];
	case 2:
		return (uint64_t)q[0] | (uint64_t)q[1] << 8;
	case 4:
		return (uint64_t)q[0] | (uint64_t)q[1] << 8 |
		       (uint64_t)q[2] << 16 | (uint64_t)q[3] << 24;
	default:
		while (w-- > 0)
			v = (v << 8) | q[w];
		return v;
	}
}

usc_status usc__check_classify_part(const usc_check_request *req,
				    usc__check_part *p, usc_error *err)
{
	usc_dtype t = usc_tensor_dtype(p->o->device);
	bool fl = usc_dtype_is_float(t);
	/* The format and the arrays once per part, not once per element. */
	const usc__rn_format *rf = fl ? usc__rn_format_of(t) : NULL;
	size_t w = (size_t)usc_format_of(t)->container_bytes;
	const unsigned char *dev =
		(const unsigned char *)usc_tensor_cdata(p->o->device) +
		p->base * w;
	const unsigned char *ref =
		(const unsigned char *)usc_tensor_cdata(p->reference);
	double lambda = req->lambda > 0 ? req->lambda : USC_CLASSIFY_LAMBDA;
	uint64_t *counts = p->o->counts.n;

	for (size_t j = 0; j < p->len; j++) {
		usc_class c;

		if (rf) {
			double exact = p->undecided[j] ? NAN : p->oracle_mid[j];

			if (usc__check_classify_fast(rf, &p->envelope[j],
					  load_enc(dev, w, j),
					  load_enc(ref, w, j), exact, lambda,
					  &c, &p->expected_ulps[j])) {
				p->cls[j] = (uint8_t)c;
				counts[c]++;
				continue;
			}
		}
		if (fl) {
			usc_classify_input in;
			usc_classify_result res;
			usc_status st;

			classify_input(p, j, &in);
			in.exact = p->undecided[j] ? NAN : p->oracle_mid[j];
			in.lambda = req->lambda;
			st = usc_classify_element(&in, &res, err);
			if (st != USC_OK)
				return st;
			c = res.cls;
			p->expected_ulps[j] = res.expected_ulps;
		} else {
			uint64_t d, r;

			usc_tensor_get_bits(p->o->device, p->base + j, &d);
			usc_tensor_get_bits(p->reference, j, &r);
			c = classify_discrete(&p->envelope[j], t, d, r);
			p->expected_ulps[j] = NAN;
		}
		p->cls[j] = (uint8_t)c;
		counts[c]++;
	}
	return USC_OK;
}

/* Steps outside the envelope of element j (0 inside), for ordering. */
static double part_outside(const usc__check_part *p, size_t j)
{
	usc_classify_input in;
	usc_classify_result res;

	if (!usc_dtype_is_float(usc_tensor_dtype(p->o->device)) ||
	    usc__check_class_rank((usc_class)p->cls[j]) < 4)
		return 0;
	classify_input(p, j, &in);
	in.exact = NAN;
	if (usc_classify_element(&in, &res, NULL) != USC_OK)
		return 0;
	return res.outside_ulps;
}

void usc__check_element(const usc__check_part *p, size_t j, bool classified,
			usc_check_element *el)
{
	el->index = p->base + j;
	usc_tensor_get_bits(p->o->device, p->base + j, &el->device_bits);
	usc_tensor_get_bits(p->reference, j, &el->reference_bits);
	el->oracle_mid = p->oracle_mid[j];
	el->oracle_rad = p->oracle_rad[j];
	el->ulp_oracle = p->ulp_oracle[j];
	el->ulp_reference = p->ulp_reference[j];
	el->undecided = p->undecided[j];
	if (classified) {
		el->cls = (usc_class)p->cls[j];
		el->envelope = p->envelope[j];
		el->outside_ulps = part_outside(p, j);
	} else {
		el->cls = USC_CLASS_UNDECIDED;
		el->envelope = (usc_envelope){0, 0, USC_ENV_UNKNOWN, 0};
		el->outside_ulps = 0;
	}
}

bool usc__check_worse(const usc_check_element *a, const usc_check_element *b,
		      bool classified)
{
	double ea = a->ulp_oracle, eb = b->ulp_oracle;

	if (classified) {
		int ra = usc__check_class_rank(a->cls);
		int rb = usc__check_class_rank(b->cls);

		if (ra != rb)
			return ra > rb;
		if (ra == 4 && a->outside_ulps != b->outside_ulps)
			return a->outside_ulps > b->outside_ulps;
	}
	if (isnan(ea) || isnan(eb))
		return isnan(ea) && !isnan(eb);
	return fabs(ea) > fabs(eb);
}

void usc__check_reason_offer(usc__check_reason *why, size_t output,
			     const usc__check_part *p, size_t j)
{
	usc_check_element el;

	if (why->have) {
		int rk = usc__check_class_rank((usc_class)p->cls[j]);
		int rw = usc__check_class_rank(why->el.cls);

		/* Cheap refusals first: rank decides before anything else. */
		if (rk < rw || (rk == rw && output != why->output))
			return;
		/*
		 * Below the heaviest rank usc__check_worse compares the
		 * oracle errors alone: decided here, before the element is
		 * gathered (most elements of a legitimate kernel tie on
		 * rank and lose).
		 */
		if (rk == rw && rk < 4) {
			double e = p->ulp_oracle[j], l = why->el.ulp_oracle;

			if (!(isnan(e) || isnan(l) ? isnan(e) && !isnan(l)
						   : fabs(e) > fabs(l)))
				return;
		}
		usc__check_element(p, j, true, &el);
		if (rk == rw && rk == 4 &&
		    !usc__check_worse(&el, &why->el, true))
			return;
	} else {
		usc__check_element(p, j, true, &el);
	}
	why->have = true;
	why->output = output;
	why->el = el;
	why->expected_ulps = p->expected_ulps[j];
}

void usc__check_reason_merge(usc__check_reason *why, size_t output,
			     const usc__check_reason *cand)
{
	if (!cand->have)
		return;
	if (why->have) {
		int rk = usc__check_class_rank(cand->el.cls);
		int rw = usc__check_class_rank(why->el.cls);

		if (rk < rw || (rk == rw && output != why->output))
			return;
		if (rk == rw && !usc__check_worse(&cand->el, &why->el, true))
			return;
	}
	why->have = true;
	why->output = output;
	why->el = cand->el;
	why->expected_ulps = cand->expected_ulps;
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

void usc__check_verdict(usc_check_report *r, const usc__check_reason *why)
{
	const usc_check_element *w = &why->el;
	usc_classify_counts all;
	uint64_t total = why->total, outside;
	char idx[128], dv[64];
	double d = 0;

	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < r->output_count; i++)
		for (int c = 0; c < USC_CLASS_COUNT; c++)
			all.n[c] += r->outputs[i].counts.n[c];
	r->verdict = usc_classify_verdict(&all);
	outside = all.n[USC_CLASS_DEFECT] + all.n[USC_CLASS_NAN_MISMATCH] +
		  all.n[USC_CLASS_INF_MISMATCH] + all.n[USC_CLASS_SIGN_MISMATCH];
	if (!why->have) {
		snprintf(r->reason, sizeof r->reason,
			 "%s: no elements", usc_verdict_name(r->verdict));
		return;
	}
	{
		const usc_check_output *o = &r->outputs[why->output];
		usc_dtype t = usc_tensor_dtype(o->device);

		format_index(idx, sizeof idx, o->device, w->index);
		if (usc_dtype_is_float(t))
			(void)usc_decode_double(t, w->device_bits, &d);
		snprintf(dv, sizeof dv, "%.9g", d);
		switch (r->verdict) {
		case USC_VERDICT_DEFECT: {
			char where[160], env[96];
			double steps = w->outside_ulps;

			if (w->envelope.flags & USC_ENV_FINITE)
				snprintf(env, sizeof env, "[%.9g, %.9g]",
					 w->envelope.lo, w->envelope.hi);
			else
				snprintf(env, sizeof env, "no finite value");
			if (isfinite(steps) && steps > 0)
				snprintf(where, sizeof where,
					 "%.0f codes %s the envelope %s", steps,
					 d < w->envelope.lo ? "below" : "above",
					 env);
			else
				snprintf(where, sizeof where,
					 "outside the envelope %s", env);
			snprintf(r->reason, sizeof r->reason,
				 "defect: %" PRIu64 " of %" PRIu64
				 " elements outside the %s envelope; worst: "
				 "output %zu [%s] = %s, %s (%s)",
				 outside, total, r->profile.name, why->output,
				 idx, dv, where, usc_class_name(w->cls));
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
				 r->profile.name, why->output, idx,
				 w->ulp_oracle, why->expected_ulps);
			break;
		case USC_VERDICT_UNDECIDED:
			snprintf(r->reason, sizeof r->reason,
				 "undecided: %" PRIu64 " of %" PRIu64
				 " elements could not be classified%s%.400s",
				 all.n[USC_CLASS_UNDECIDED], total,
				 why->note[0] ? "; " : "", why->note);
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

void usc__check_envelope_columns(const usc_envelope *e, size_t n, double *lo,
				 double *hi, uint8_t *flags)
{
	for (size_t k = 0; k < n; k++) {
		bool fin = (e[k].flags & USC_ENV_FINITE) &&
			   !(e[k].flags & USC_ENV_UNKNOWN);

		lo[k] = fin ? e[k].lo : NAN;
		hi[k] = fin ? e[k].hi : NAN;
		flags[k] = (uint8_t)e[k].flags;
	}
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
		usc__check_envelope_columns(o->envelope, (size_t)n, lo, hi, fl);
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
