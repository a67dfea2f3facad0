/*
 * Defect signatures: scoring a mutant against one device set and ranking
 * the candidates (docs/signatures.md, "Score, ranking and verdict").
 *
 * An element is a *defect* when the device value lies outside the
 * unmutated kernel's envelope under the profile (without a profile: when
 * it differs from the strict reference), *legit* otherwise.  A mutant
 * *explains* a defect element when the device value lies inside the
 * mutant's envelope, and *breaks* a legit one when it lies outside.  The
 * mutant's envelope is the envelope domain's on the mutant kernel; where
 * that is unknown (helper arithmetic on encodings needs exact points) or
 * was not computed (a pruned mutant), it is the *translated* envelope:
 * the kernel's own envelope moved, code for code, by the mutant's strict
 * change of the element.  Without a profile every envelope is the strict
 * value itself, and explaining is reproducing bit for bit.
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_value(usc_dtype t, uint64_t a, uint64_t b)
{
	if (a == b)
		return true;
	/* NaN payloads are the device's business: all NaNs are equal. */
	return usc_dtype_is_float(t) && usc_bits_is_nan(t, a) &&
	       usc_bits_is_nan(t, b);
}

static double distance(usc_dtype t, uint64_t a, uint64_t b)
{
	int64_t d;
	double x, y;

	if (usc_dtype_is_float(t)) {
		if (usc_ulp_distance(t, a, b, &d) != USC_OK)
			return INFINITY;
		return fabs((double)d);
	}
	if (usc_decode_double(t, a, &x) != USC_OK ||
	    usc_decode_double(t, b, &y) != USC_OK)
		return INFINITY;
	return fabs(x - y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The encoding of a finite bound of type t (bounds are values of t). */
static bool encode_bound(usc_dtype t, double x, uint64_t *bits)
{
	double back;

	if (usc_encode_double(t, x, NULL, bits, NULL) != USC_OK)
		return false;
	return usc_decode_double(t, *bits, &back) == USC_OK && back == x;
}

/* How many values of t an envelope holds (at least 1). */
static double env_values(usc_dtype t, const usc_envelope *e)
{
	double n = 0;

	if (e->flags & USC_ENV_FINITE) {
		uint64_t lb, hb;
		int64_t d;

		if (usc_dtype_is_float(t) && encode_bound(t, e->lo, &lb) &&
		    encode_bound(t, e->hi, &hb) &&
		    usc_ulp_distance(t, lb, hb, &d) == USC_OK)
			n += (double)(d < 0 ? -d : d) + 1;
		else if (!usc_dtype_is_float(t))
			n += e->hi - e->lo + 1;
		else
			n += 1;
	}
	n += (e->flags & USC_ENV_NAN) != 0;
	n += (e->flags & USC_ENV_POS_INF) != 0;
	n += (e->flags & USC_ENV_NEG_INF) != 0;
	return n < 1 ? 1 : n;
}

/*
 * Whether the device value d lies in the kernel's envelope e translated
 * to the mutant's strict value m: d - m (in codes of t) within the codes
 * [lo - ref, hi - ref] the envelope spans around the reference ref.  The
 * mutation moved the value; the profile's freedom around it is assumed
 * the same.  widen adds the span's own width plus one code on each side
 * (the pruning test: a mutant whose window misses every defect element
 * even so is not worth its envelope).
 */
static bool translated(usc_dtype t, const usc_envelope *e, uint64_t ref,
		       uint64_t m, uint64_t d, bool widen)
{
	uint64_t lb, hb;
	int64_t a, b, x;

	if (same_value(t, m, d))
		return true;
	if (!usc_dtype_is_float(t) || !e || (e->flags & USC_ENV_UNKNOWN) ||
	    !(e->flags & USC_ENV_FINITE))
		return false;
	if (usc_bits_is_nan(t, ref) || usc_bits_is_nan(t, m) ||
	    usc_bits_is_nan(t, d))
		return false;
	if (!encode_bound(t, e->lo, &lb) || !encode_bound(t, e->hi, &hb) ||
	    usc_ulp_distance(t, ref, lb, &a) != USC_OK ||
	    usc_ulp_distance(t, ref, hb, &b) != USC_OK ||
	    usc_ulp_distance(t, m, d, &x) != USC_OK)
		return false;
	if (a > 0)
		a = 0;
	if (b < 0)
		b = 0;
	if (widen) {
		int64_t w = b - a + 1;

		a -= w;
		b += w;
	}
	return a <= x && x <= b;
}

/*
 * How specific the explanation of one element is: the envelope's width
 * in values, or, when the device lies closer than that to the mutant's
 * strict value a (d codes away), 2d + 1: a wide envelope whose strict
 * value still lands next to the device predicted it.
 */
static double specific(usc_dtype t, double w, uint64_t a, uint64_t b)
{
	int64_t d;

	if (same_value(t, a, b))
		return 1;
	if (!usc_dtype_is_float(t) || usc_ulp_distance(t, a, b, &d) != USC_OK)
		return w;
	return fmin(w, 2 * fabs((double)d) + 1);
}

/* The running score of one candidate. */
typedef struct tally {
	uint64_t explained, broken;
	double logw;
} tally;

/*
 * One element's judgement: inside (the mutant's envelope holds the
 * device value) with width w values; judged false when the kernel's own
 * envelope is unknown for a legit element (nothing can break there).
 */
static void count(tally *y, bool defect, bool judged, bool inside, double w)
{
	if (defect && inside) {
		y->explained++;
		y->logw += log(w);
	} else if (!defect && judged && !inside) {
		y->broken++;
	}
}

static void finish(const tally *y, usc_signature_candidate *cand)
{
	cand->explained = y->explained;
	cand->broken = y->broken;
	cand->width = y->explained ? exp(y->logw / (double)y->explained) : NAN;
}

double usc__sig_identity_width(const usc__sig_set *s)
{
	double logw = 0;
	uint64_t k = 0, n = 0;

	for (size_t o = 0; o < s->nout; o++) {
		usc_dtype t = usc_tensor_dtype(s->dev[o]);
		uint64_t cnt = usc_tensor_count(s->dev[o]);

		for (uint64_t i = 0; i < cnt; i++, k++) {
			uint64_t b = 0, r = 0;
			double d;

			if (!s->defect[k])
				continue;
			usc_tensor_get_bits(s->dev[o], i, &b);
			usc_tensor_get_bits(s->ref[o], i, &r);
			d = distance(t, r, b);
			if (!isfinite(d))
				continue;
			logw += log(2 * d + 1);
			n++;
		}
	}
	return n ? exp(logw / (double)n) : NAN;
}

/* Element k's kernel envelope, or NULL without a profile. */
static const usc_envelope *kernel_env(const usc__sig_set *s, uint64_t k)
{
	return s->env ? &s->env[k] : NULL;
}

void usc__sig_score_strict(usc__sig_set *s, const usc_tensor *const *outs,
			   usc_signature_candidate *cand, bool *no_effect,
			   uint64_t *near)
{
	uint64_t rep = 0, drep = 0, nr = 0, k = 0;
	int64_t overlap = 0;
	size_t nd = 0;
	bool same_ref = true;
	tally y = {0, 0, 0};

	for (size_t o = 0; o < s->nout; o++) {
		const usc_tensor *out = outs[o] ? outs[o] : s->ref[o];
		usc_dtype t = usc_tensor_dtype(s->dev[o]);
		uint64_t n = usc_tensor_count(s->dev[o]);

		for (uint64_t i = 0; i < n; i++, k++) {
			const usc_envelope *e = kernel_env(s, k);
			uint64_t a = 0, b = 0, r = 0;
			bool eq, defect = s->defect[k] != 0;

			usc_tensor_get_bits(out, i, &a);
			usc_tensor_get_bits(s->dev[o], i, &b);
			usc_tensor_get_bits(s->ref[o], i, &r);
			if (a != r)
				same_ref = false;
			eq = same_value(t, a, b);
			if (eq) {
				rep++;
				if (!same_value(t, r, b))
					drep++;
			} else {
				s->scratch[nd++] = distance(t, a, b);
			}
			if (!e) {
				count(&y, defect, true, eq, 1);
				continue;
			}
			count(&y, defect, !(e->flags & USC_ENV_UNKNOWN),
			      translated(t, e, r, a, b, false),
			      specific(t, env_values(t, e), a, b));
			if (defect && near &&
			    (translated(t, e, r, a, b, true) ||
			     distance(t, a, b) < distance(t, r, b)))
				nr++;
			if (a != r)
				overlap += defect ? 1 : -1;
		}
	}
	cand->reproduced = rep;
	cand->differing_reproduced = drep;
	if (nd == 0) {
		cand->median_ulps = NAN;
	} else {
		qsort(s->scratch, nd, sizeof *s->scratch, cmp_double);
		cand->median_ulps = nd % 2 ? s->scratch[nd / 2]
					   : 0.5 * (s->scratch[nd / 2 - 1] +
						    s->scratch[nd / 2]);
	}
	finish(&y, cand);
	cand->envelope = false;
	if (no_effect)
		*no_effect = same_ref;
	/* The promise: the defect elements brought near first, then the
	 * changed defect elements less the changed legit ones. */
	if (near)
		*near = (s->env ? nr : y.explained) * (s->elements + 1) +
			(uint64_t)(overlap > 0 ? overlap : 0);
}

void usc__sig_score_envelope(usc__sig_set *s, const usc_tensor *const *outs,
			     const usc_envelope *menv,
			     usc_signature_candidate *cand)
{
	tally y = {0, 0, 0};
	uint64_t k = 0;

	for (size_t o = 0; o < s->nout; o++) {
		const usc_tensor *out = outs[o] ? outs[o] : s->ref[o];
		usc_dtype t = usc_tensor_dtype(s->dev[o]);
		uint64_t n = usc_tensor_count(s->dev[o]);

		for (uint64_t i = 0; i < n; i++, k++) {
			const usc_envelope *e = kernel_env(s, k);
			const usc_envelope *me = &menv[k];
			bool defect = s->defect[k] != 0;
			bool judged = !e || !(e->flags & USC_ENV_UNKNOWN);
			uint64_t a = 0, b = 0, r = 0;

			usc_tensor_get_bits(out, i, &a);
			usc_tensor_get_bits(s->dev[o], i, &b);
			usc_tensor_get_bits(s->ref[o], i, &r);
			if (me->flags & USC_ENV_UNKNOWN) {
				/* The translated envelope where the mutant's
				 * own is unknown. */
				count(&y, defect, judged,
				      e ? translated(t, e, r, a, b, false)
					: same_value(t, a, b),
				      e ? specific(t, env_values(t, e), a, b)
					: 1);
				continue;
			}
			count(&y, defect, judged,
			      usc_envelope_contains(me, t, b),
			      specific(t, env_values(t, me), a, b));
		}
	}
	finish(&y, cand);
	cand->envelope = true;
}

static int64_t net_of(const usc_signature_candidate *c)
{
	return (int64_t)c->explained - (int64_t)c->broken;
}

/*
 * Whether c says something: it explains an element, and its width is
 * below the identity's (idw; NaN: no finite distance to compare with).
 */
static bool informative(const usc_signature_candidate *c, double idw)
{
	return c->explained > 0 &&
	       (isnan(idw) || (!isnan(c->width) && c->width < idw));
}

/* Better first (band_floor: the lowest net count of the leading band;
 * idw: the identity's width); see the comment of usc__sig_rank. */
static int cmp_cand(const usc_signature_candidate *a,
		    const usc_signature_candidate *b, int64_t band_floor,
		    double idw)
{
	int64_t na = net_of(a), nb = net_of(b);
	bool ba = na >= band_floor, bb = nb >= band_floor;
	bool ia = informative(a, idw), ib = informative(b, idw);
	double wa = isnan(a->width) ? INFINITY : a->width;
	double wb = isnan(b->width) ? INFINITY : b->width;
	double ma = isnan(a->median_ulps) ? -1 : a->median_ulps;
	double mb = isnan(b->median_ulps) ? -1 : b->median_ulps;

	if (ia != ib)
		return ia ? -1 : 1;
	if (ba != bb)
		return ba ? -1 : 1;
	if (ba && wa != wb)
		return wa < wb ? -1 : 1;
	if (na != nb)
		return na > nb ? -1 : 1;
	if (wa != wb)
		return wa < wb ? -1 : 1;
	/*
	 * output-zero is built from the device (the reference where the
	 * device is not zero): its bitwise count and median hold by
	 * construction and are no evidence against a mutation of the
	 * program that scores as well, which also says what made the zeros.
	 */
	if ((a->kind == USC_MUT_OUTPUT_ZERO) != (b->kind == USC_MUT_OUTPUT_ZERO))
		return a->kind == USC_MUT_OUTPUT_ZERO ? 1 : -1;
	if (a->reproduced != b->reproduced)
		return a->reproduced > b->reproduced ? -1 : 1;
	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->op && b->op && strcmp(a->op, b->op) != 0)
		return strcmp(a->op, b->op);
	return a->variant < b->variant ? -1 : a->variant > b->variant;
}

/* Ties with the best: the same score, width and median. */
static bool tied(const usc_signature_candidate *a,
		 const usc_signature_candidate *b)
{
	bool wn = isnan(a->width), mn = isnan(a->median_ulps);

	return a->explained == b->explained && a->broken == b->broken &&
	       wn == isnan(b->width) &&
	       (wn || fabs(a->width - b->width) <= 1e-9 * b->width) &&
	       mn == isnan(b->median_ulps) &&
	       (mn || a->median_ulps == b->median_ulps);
}

/* A stable merge sort of list by cmp_cand (qsort has no context). */
static bool sort_cands(usc_signature_candidate *list, size_t n,
		       int64_t band_floor, double idw)
{
	usc_signature_candidate *tmp;

	if (n < 2)
		return true;
	tmp = usc__malloc(n * sizeof *tmp);
	if (!tmp)
		return false;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				tmp[k++] = cmp_cand(&list[j], &list[i],
						    band_floor, idw) < 0
					       ? list[j++]
					       : list[i++];
			while (i < mid)
				tmp[k++] = list[i++];
			while (j < hi)
				tmp[k++] = list[j++];
		}
		memcpy(list, tmp, n * sizeof *tmp);
	}
	usc__free(tmp);
	return true;
}

void usc__sig_cand_free(usc_signature_candidate *c)
{
	usc__free(c->op);
	usc__free(c->computation);
	c->op = c->computation = NULL;
	for (size_t i = 0; i < c->equivalent_count; i++) {
		usc__free(c->equivalent[i].op);
		usc__free(c->equivalent[i].computation);
	}
	usc__free(c->equivalent);
	c->equivalent = NULL;
	c->equivalent_count = 0;
	usc__free(c->runs);
	c->runs = NULL;
	c->run_count = 0;
}

void usc_signature_report_destroy(usc_signature_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->candidate_count; i++)
		usc__sig_cand_free(&r->candidates[i]);
	usc__free(r->candidates);
	usc__sig_cand_free(&r->identity);
	usc__free(r->runs);
	usc__free(r->kernel_name);
	usc__free(r);
}

bool usc__sig_push(usc__sig_set *s, const usc_signature_candidate *c,
		   const usc_hlo_instr *in)
{
	usc_signature_candidate *x;

	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		usc_signature_candidate *g = usc__reallocarray(s->list, nc,
							       sizeof *g);

		if (!g)
			return false;
		s->list = g;
		s->cap = nc;
	}
	x = &s->list[s->n];
	*x = *c;
	x->op = x->computation = NULL;
	x->equivalent = NULL;
	x->equivalent_count = 0;
	x->runs = NULL;
	x->run_count = 0;
	if (in) {
		x->op = usc__strdup(in->name);
		x->computation = usc__strdup(in->parent->name);
		if (!x->op || !x->computation) {
			usc__sig_cand_free(x);
			return false;
		}
	}
	s->n++;
	return true;
}

/*
 * The order: first the informative candidates, those that explain an
 * element with a width below the identity's (the verdict's test: a
 * wider explanation says nothing more than "somewhere near the right
 * value", and must not hide a narrow one that explains a little less).
 * Then the net count explained - broken (the defect elements
 * a mutant accounts for without spoiling what was right), then the more
 * specific explanation (the smaller width: a mutant whose envelope holds
 * the device value among fewer values says more).  The net count is
 * compared within a band: every candidate within (1 - min_fraction) of
 * the defect elements of the best net count is in the leading band, and
 * the band is ordered by width first, since a vacuously wide envelope
 * (a sum reassociated in bf16 holds nearly anything) explains as many
 * elements as the right mutant and a few more.  Then the strict
 * bit-identical count and the median distance of the rest, then
 * catalogue order and op name (deterministic).  The verdict is
 * "explained" when the best's net count reaches min_fraction of the
 * defect elements.
 */
bool usc__sig_rank(usc__sig_set *s, const usc_signature_options *o)
{
	usc_signature_report *r = s->r;
	usc_signature_candidate *list = s->list;
	size_t n = s->n, keep;
	int64_t best = INT64_MIN, band_floor;

	for (size_t i = 0; i < n; i++)
		if (net_of(&list[i]) > best)
			best = net_of(&list[i]);
	band_floor = n ? best - (int64_t)floor((1 - o->min_fraction) *
					       (double)r->defects)
		       : 0;
	if (band_floor < 1)
		band_floor = best > 0 ? 1 : best;
	if (!sort_cands(list, n, band_floor, r->identity.width) ||
	    !usc__sig_merge_equivalent(s))
		return false;
	/* Twins folded: the list is shorter. */
	list = s->list;
	n = s->n;
	if (r->verdict != USC_SIGNATURE_NO_DIFFERENCE &&
	    r->verdict != USC_SIGNATURE_LEGIT) {
		double net = n ? (double)list[0].explained -
				     (double)list[0].broken
			       : 0;

		/* An explanation must also say more than "somewhere near":
		 * its width below the identity's (how far the device lies
		 * from the reference). */
		r->verdict = n && net > 0 &&
				     net >=
					 o->min_fraction * (double)r->defects &&
				     !(list[0].width >= r->identity.width)
				 ? USC_SIGNATURE_EXPLAINED
				 : USC_SIGNATURE_UNEXPLAINED;
	}
	keep = n < o->top ? n : o->top;
	for (size_t i = 0; i < n; i++) {
		list[i].tied_best = tied(&list[i], &list[0]);
		/* Every tie with the best is kept, past top if need be: an
		 * ambiguity is reported whole. */
		if (list[i].tied_best && i >= keep)
			keep = i + 1;
	}
	for (size_t i = keep; i < n; i++)
		usc__sig_cand_free(&list[i]);
	r->candidate_count = keep;
	r->candidates = list;
	s->list = NULL;
	s->n = 0;
	return true;
}

/*
 * Output elements left zero: the kernel where the device is not zero,
 * zero where it is.  Scored directly, without an evaluation: it explains
 * the defect elements the device holds a zero at and breaks nothing.
 */
bool usc__sig_score_output_zero(usc__sig_set *s,
				const usc_hlo_instr *const *producers)
{
	size_t first = SIZE_MAX;
	usc_signature_report *r = s->r;
	usc_signature_candidate cand;
	uint64_t zero_diff = 0, k = 0;
	tally y = {0, 0, 0};

	for (size_t oi = 0; oi < s->nout; oi++) {
		usc_dtype t = usc_tensor_dtype(s->dev[oi]);
		const usc_format *f = usc_format_of(t);
		uint64_t cnt = usc_tensor_count(s->dev[oi]);
		uint64_t smask = f && f->has_sign ? (uint64_t)1 << (f->bits - 1)
						  : 0;

		for (uint64_t i = 0; i < cnt; i++, k++) {
			uint64_t b = 0, rr = 0;
			bool zero;

			usc_tensor_get_bits(s->dev[oi], i, &b);
			usc_tensor_get_bits(s->ref[oi], i, &rr);
			zero = (b & ~smask) == 0;
			if (zero && !same_value(t, b, rr))
				zero_diff++;
			if (zero && s->defect[k] && first == SIZE_MAX)
				first = oi;
			count(&y, s->defect[k] != 0, false, zero, 1);
		}
	}
	if (!y.explained)
		return true;
	memset(&cand, 0, sizeof cand);
	cand.kind = USC_MUT_OUTPUT_ZERO;
	cand.reproduced = r->identity.reproduced + zero_diff;
	cand.differing_reproduced = zero_diff;
	finish(&y, &cand);
	snprintf(cand.detail, sizeof cand.detail,
		 "%llu element(s) zero where the kernel is not",
		 (unsigned long long)y.explained);
	/* The rest are as far off as the identity's. */
	cand.median_ulps = r->identity.median_ulps;
	/* Named after the op that writes the first output it zeroes. */
	return usc__sig_push(
	    s, &cand, producers && first != SIZE_MAX ? producers[first] : NULL);
}
