/*
 * The class of one device element and the verdict of a kernel.
 *
 * The order of the tests below is the order of certainty.  A device value
 * equal to the reference needs nothing else.  NaN and infinities are
 * judged against what the envelope allows before any finite arithmetic.
 * A finite value outside the envelope is a defect whatever the oracle
 * says: the envelope is sound on its own (docs/envelope.md).  Only inside
 * the envelope does the oracle matter, to tell a value one rounding from
 * the exact one, a value within the expected error, and a value inside
 * the worst case but far outside what rounding errors typically add up to.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "ulpscope/classify.h"

static const char *const class_names[USC_CLASS_COUNT] = {
#define X_(e, name, v) [v] = name,
	USC_CLASS_LIST(X_)
#undef X_
};

static const char *const verdict_names[USC_VERDICT_COUNT] = {
#define X_(e, name) [USC_VERDICT_##e] = name,
	USC_VERDICT_LIST(X_)
#undef X_
};

const char *usc_class_name(usc_class c)
{
	return (unsigned)c < USC_CLASS_COUNT ? class_names[c] : "?";
}

const char *usc_verdict_name(usc_verdict v)
{
	return (unsigned)v < USC_VERDICT_COUNT ? verdict_names[v] : "?";
}

bool usc_envelope_contains(const usc_envelope *e, usc_dtype t, uint64_t bits)
{
	double d;

	if (e->flags & USC_ENV_UNKNOWN)
		return false;
	if (usc_bits_is_nan(t, bits))
		return (e->flags & USC_ENV_NAN) != 0;
	if (usc_decode_double(t, bits, &d) != USC_OK)
		return false;
	if (isinf(d))
		return (e->flags & (d > 0 ? USC_ENV_POS_INF : USC_ENV_NEG_INF)) != 0;
	/*
	 * A subnormal where the target always flushes results is outside,
	 * however close to the interval (docs/envelope.md).
	 */
	if ((e->flags & USC_ENV_NO_SUBNORMAL) && d != 0) {
		usc_float_info fi;

		if (usc_float_info_of(t, &fi) == USC_OK &&
		    fabs(d) < fi.min_normal)
			return false;
	}
	/* -0 and +0 compare equal: either zero is inside when 0 is. */
	return (e->flags & USC_ENV_FINITE) && e->lo <= d && d <= e->hi;
}

/* The encoding of a finite bound of type t (exact: bounds are t values). */
static bool encode_bound(usc_dtype t, double x, uint64_t *bits)
{
	uint64_t b;
	double back;

	if (usc_encode_double(t, x, NULL, &b, NULL) != USC_OK)
		return false;
	if (usc_decode_double(t, b, &back) != USC_OK || back != x)
		return false;
	*bits = b;
	return true;
}

/*
 * Ordinal steps from the finite device value d (encoding bits) to the
 * nearer bound of the envelope; at least 1 for a value outside.  A bound
 * that is not a value of t (an envelope not rounded to t) falls back to
 * the distance in ULPs at d, rounded up.
 */
static double outside_steps(const usc_envelope *e, usc_dtype t, uint64_t bits,
			    double d)
{
	double bound = d < e->lo ? e->lo : e->hi, ulp;
	uint64_t bb;
	int64_t dist;
	usc_float_info fi;

	/*
	 * A subnormal inside [lo, hi] that the set leaves out: the steps to
	 * the nearer of zero and the smallest normal of its sign.
	 */
	if ((e->flags & USC_ENV_NO_SUBNORMAL) && d >= e->lo && d <= e->hi &&
	    usc_float_info_of(t, &fi) == USC_OK && fi.min_subnormal > 0) {
		double a = fabs(d) / fi.min_subnormal;
		double b = (fi.min_normal - fabs(d)) / fi.min_subnormal;

		return fmax(1, fmin(a, b));
	}

	if (encode_bound(t, bound, &bb) &&
	    usc_ulp_distance(t, bb, bits, &dist) == USC_OK && dist != 0)
		return fabs((double)dist);
	if (usc_ulp_double(t, d, &ulp) != USC_OK || !(ulp > 0))
		return 1;
	return fmax(1, ceil(fabs(d - bound) / ulp));
}

usc_status usc_classify_element(const usc_classify_input *in,
				usc_classify_result *out, usc_error *err)
{
	const usc_envelope *e = &in->envelope;
	usc_dtype t = in->type;
	double lambda = in->lambda > 0 ? in->lambda : USC_CLASSIFY_LAMBDA;
	double d, ulp, w, dev, n;
	bool dnan, rnan, same;
	int64_t dist;

	if (!usc_dtype_is_float(t))
		return usc__fail(err, USC_EINVAL,
				 "classify: %s is not a float type",
				 usc_dtype_name(t));
	out->outside_ulps = 0;
	out->expected_ulps = NAN;
	dnan = usc_bits_is_nan(t, in->device);
	rnan = usc_bits_is_nan(t, in->reference);
	/* NaN payloads are not compared: any NaN is the reference's NaN. */
	same = in->device == in->reference || (dnan && rnan);
	if (e->flags & USC_ENV_UNKNOWN) {
		out->cls = same ? USC_CLASS_EXACT : USC_CLASS_UNDECIDED;
		return USC_OK;
	}
	/*
	 * The envelope first: a device value equal to the strict reference
	 * is still wrong for a target whose profile excludes it (a NaN from
	 * an fp8 overflow on a target that saturates).
	 */
	if (dnan || !(e->flags & (USC_ENV_FINITE | USC_ENV_POS_INF |
				  USC_ENV_NEG_INF))) {
		/* A NaN where none may be, or a number where only NaN may. */
		if (!dnan || !(e->flags & USC_ENV_NAN)) {
			out->cls = USC_CLASS_NAN_MISMATCH;
			out->outside_ulps = INFINITY;
			return USC_OK;
		}
		out->cls = same ? USC_CLASS_EXACT : USC_CLASS_ENVELOPE;
		return USC_OK;
	}
	(void)usc_decode_double(t, in->device, &d);
	if (isinf(d) || !(e->flags & USC_ENV_FINITE)) {
		if (usc_envelope_contains(e, t, in->device)) {
			out->cls = same ? USC_CLASS_EXACT : USC_CLASS_ENVELOPE;
			return USC_OK;
		}
		out->cls = USC_CLASS_INF_MISMATCH;
		out->outside_ulps = INFINITY;
		return USC_OK;
	}
	if (!usc_envelope_contains(e, t, in->device)) {
		bool other_side = (d < 0 && e->lo >= 0) || (d > 0 && e->hi <= 0);

		out->cls = other_side ? USC_CLASS_SIGN_MISMATCH
				      : USC_CLASS_DEFECT;
		out->outside_ulps = outside_steps(e, t, in->device, d);
		return USC_OK;
	}
	if (same) {
		out->cls = USC_CLASS_EXACT;
		return USC_OK;
	}
	/*
	 * Inside the envelope.  w: how far it reaches from the exact value,
	 * in ulps at the device value (the half-width when the exact value
	 * is not known or lies outside): an envelope need not be centred on
	 * the exact value.
	 */
	if (usc_ulp_double(t, d, &ulp) == USC_OK && ulp > 0) {
		w = (e->hi - e->lo) / 2 / ulp;
		if (isfinite(in->exact) && in->exact >= e->lo &&
		    in->exact <= e->hi)
			w = fmax(in->exact - e->lo, e->hi - in->exact) / ulp;
	} else {
		w = 0;
	}
	/*
	 * The worst case grows like n u, the typical error like lambda
	 * sqrt(n) u (Higham and Mary 2019), both times the same condition
	 * number: the typical error is the reach w scaled by their ratio.
	 * Few roundings: any value inside is typical.
	 */
	n = e->roundings > 1 ? e->roundings : 1;
	out->expected_ulps = 1 + w * fmin(1, lambda / sqrt(n));
	if (!rnan && usc_ulp_distance(t, in->reference, in->device, &dist) ==
			     USC_OK &&
	    (dist >= -1 && dist <= 1)) {
		out->cls = USC_CLASS_ROUNDING;
		return USC_OK;
	}
	if (!in->oracle_decided) {
		out->cls = USC_CLASS_UNDECIDED;
		return USC_OK;
	}
	if (isnan(in->ulp_oracle)) {
		/* No error against the exact value (it is NaN, or the device
		 * value an infinity): inside the envelope is all there is. */
		out->cls = USC_CLASS_ENVELOPE;
		return USC_OK;
	}
	if (fabs(in->ulp_oracle) < 1) {
		out->cls = USC_CLASS_ROUNDING;
		return USC_OK;
	}
	dev = fabs(in->ulp_oracle);
	if (isfinite(in->exact) && (in->exact < e->lo || in->exact > e->hi)) {
		/* The legitimate value nearest to the exact one. */
		double c = in->exact < e->lo ? e->lo : e->hi, uc;

		if (usc_ulp_double(t, c, &uc) == USC_OK && uc > 0)
			dev = fabs(d - c) / uc;
	}
	/*
	 * The strict reference is one correct implementation of the
	 * profile when the envelope holds it; its own error against the
	 * exact value is what this element's roundings do, not what the
	 * device did (U2 of docs/findings.md: one f16 rounding seen in both
	 * operands of a dot, which the random walk takes for many
	 * independent ones).  A device value within the expected error of
	 * it is as typical as one within the expected error of the exact
	 * value.
	 */
	if (!rnan && usc_envelope_contains(e, t, in->reference) &&
	    usc_ulp_distance(t, in->reference, in->device, &dist) == USC_OK)
		dev = fmin(dev, fabs((double)dist));
	out->cls = dev <= out->expected_ulps ||
			   (e->flags & (USC_ENV_FLUSHED | USC_ENV_APPROX))
			   ? USC_CLASS_ENVELOPE
			   : USC_CLASS_SUSPICIOUS;
	return USC_OK;
}

usc_verdict usc_classify_verdict(const usc_classify_counts *c)
{
	if (c->n[USC_CLASS_DEFECT] || c->n[USC_CLASS_NAN_MISMATCH] ||
	    c->n[USC_CLASS_INF_MISMATCH] || c->n[USC_CLASS_SIGN_MISMATCH])
		return USC_VERDICT_DEFECT;
	if (c->n[USC_CLASS_SUSPICIOUS])
		return USC_VERDICT_SUSPICIOUS;
	if (c->n[USC_CLASS_UNDECIDED])
		return USC_VERDICT_UNDECIDED;
	return USC_VERDICT_LEGIT;
}
