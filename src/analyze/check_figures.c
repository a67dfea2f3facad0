/*
 * The check's per-element figures against the strict reference and the
 * certificates' midpoint and radius (docs/check.md), apart from the run
 * that calls them (check.c).
 */
#include "internal.h"

#include <math.h>
#include <string.h>
#include <mpfr.h>

#include "ulpscope/dtype_mpfr.h"

#include "../../oracles/oracle.h"
#include "../../oracles/domain.h"
#include "../../oracles/tier.h"
#include "dtype/ulp_fast.h"
#include "analyze/check_internal.h"

/*
 * Element j's figure by the general functions: a code that is not finite,
 * a type rn_fast.h does not cover, an integer type.  ref is scratch.
 */
static usc_status reference_error_general(usc_dtype t, uint64_t d,
					  uint64_t rb, mpfr_t ref,
					  double *out)
{
	usc_status st;

	if (usc__ulp_error_codes(t, d, rb, out))
		return USC_OK;
	if (usc_dtype_is_float(t)) {
		st = usc_decode_mpfr(t, rb, ref);
		if (st == USC_OK)
			st = usc_ulp_error_mpfr(t, d, ref, out);
		return st;
	} else {
		int64_t ds, rs;
		uint64_t du, ru;

		usc_decode_int(t, d, &ds, &du);
		usc_decode_int(t, rb, &rs, &ru);
		*out = usc_format_of(t)->kind == USC_KIND_SINT
			       ? (double)ds - (double)rs
			       : (double)du - (double)ru;
	}
	return USC_OK;
}

/*
 * The encoding at index i of data stored as a usc_tensor stores it, w
 * bytes each (usc__dom_get_enc's), for a constant w in each loop below:
 * one load instead of a loop over the bytes.
 */
static inline uint64_t enc_at(const unsigned char *a, size_t w, size_t i)
{
	switch (w) {
	case 1:
		return a[i];
	case 2:
		return (uint64_t)a[2 * i] | (uint64_t)a[2 * i + 1] << 8;
	case 4:
		return (uint64_t)a[4 * i] | (uint64_t)a[4 * i + 1] << 8 |
		       (uint64_t)a[4 * i + 2] << 16 |
		       (uint64_t)a[4 * i + 3] << 24;
	default:
		return usc__dom_get_enc(a, w, i);
	}
}

/*
 * The figures of n elements of a format rn_fast.h covers, w bytes each:
 * both codes finite in line (usc__ulp_error_rn), the rest through the
 * general functions.
 */
static inline usc_status reference_errors_rn(const usc__rn_format *rf,
					     usc_dtype t,
					     const unsigned char *dev,
					     const unsigned char *refd,
					     size_t w, size_t n, mpfr_t ref,
					     double *out)
{
	for (size_t j = 0; j < n; j++) {
		uint64_t d = enc_at(dev, w, j), rb = enc_at(refd, w, j);
		usc_status st;

		if (usc__ulp_error_rn(rf, d, rb, &out[j]))
			continue;
		st = reference_error_general(t, d, rb, ref, &out[j]);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* The device's error against the reference encoding, in ULPs. */
usc_status usc__check_reference_errors(usc__check_part *p, usc_error *err)
{
	usc_dtype t = usc_tensor_dtype(p->o->device);
	const usc__rn_format *rf = usc__rn_format_of(t);
	size_t w = (size_t)usc_format_of(t)->container_bytes;
	const unsigned char *dev =
		(const unsigned char *)usc_tensor_cdata(p->o->device) +
		(size_t)p->base * w;
	const unsigned char *refd = usc_tensor_cdata(p->reference);
	usc_status st = USC_OK;
	mpfr_t ref;

	mpfr_init2(ref, 64);
	if (rf && w == 2)
		st = reference_errors_rn(rf, t, dev, refd, 2, p->len, ref,
					 p->ulp_reference);
	else if (rf && w == 4)
		st = reference_errors_rn(rf, t, dev, refd, 4, p->len, ref,
					 p->ulp_reference);
	else if (rf)
		st = reference_errors_rn(rf, t, dev, refd, w, p->len, ref,
					 p->ulp_reference);
	else
		for (size_t j = 0; st == USC_OK && j < p->len; j++)
			st = reference_error_general(
				t, usc__dom_get_enc(dev, w, j),
				usc__dom_get_enc(refd, w, j), ref,
				&p->ulp_reference[j]);
	mpfr_clear(ref);
	if (st != USC_OK)
		return usc__fail(err, st, "cannot measure the error against "
					  "the reference");
	return USC_OK;
}

/*
 * nextafter(x, +Inf), on the bits for the radii here (x >= 0): +Inf and
 * NaN stay, every other x (both zeros included) moves to the next
 * encoding of its magnitude, the next double (IEEE 754-2019 3.4: the encodings of non-negative doubles order
 * as their values).  A libm call per element cost more than the rest of
 * the figure.
 */
static inline double step_up(double x)
{
	uint64_t b;

	if (!(x < INFINITY))
		return x;
	if (x < 0)
		return nextafter(x, INFINITY);
	memcpy(&b, &x, sizeof b);
	b = (b & ~((uint64_t)1 << 63)) + 1;
	memcpy(&x, &b, sizeof x);
	return x;
}

/*
 * Records an enclosure certificate as midpoint and radius: the radius is
 * raised one step so that it covers the rounding of the subtraction.
 */
void usc__check_set_enclosure(usc__check_part *p, size_t j,
			      const struct usc__oracle_enclosure *e)
{
	if (e->kind == USC__ORC_FINITE) {
		double mid = e->lo / 2 + e->hi / 2;

		p->oracle_mid[j] = mid;
		p->oracle_rad[j] = step_up(fmax(e->hi - mid, mid - e->lo));
	} else {
		p->oracle_mid[j] = e->lo;
		p->oracle_rad[j] = 0;
	}
}

/*
 * usc__check_set_enclosure's radius, fmax(a, b) without the libm call:
 * the larger, or the one that is not NaN.  Zeros of both signs never
 * meet here (the operands are hi - mid and mid - lo, never -0).
 */
static inline double max_or_number(double a, double b)
{
	return a > b || b != b ? a : b;
}

/* Elements the tier's decision takes at a time, on the stack. */
#define TIER_CHUNK 256

usc_status usc__check_tier_decide(usc__check_part *p, size_t j0,
				  const struct usc__tier_value *v, size_t n,
				  usc_dtype t,
				  const struct usc__oracle_resolution *res,
				  usc_error *err)
{
	const usc__rn_format *rf = usc__rn_format_of(t);
	size_t w = (size_t)usc_format_of(usc_tensor_dtype(p->o->device))
			   ->container_bytes;
	const unsigned char *dev =
		(const unsigned char *)usc_tensor_cdata(p->o->device) +
		(size_t)(p->base + j0) * w;
	double mid[TIER_CHUNK], lo[TIER_CHUNK], hi[TIER_CHUNK];
	uint8_t dec[TIER_CHUNK];

	for (size_t i0 = 0; i0 < n; i0 += TIER_CHUNK) {
		size_t m = n - i0 < TIER_CHUNK ? n - i0 : TIER_CHUNK, k = 0;
		const usc__tier_value *vc = v + i0;
		usc_status st = usc__tier_decide_ulp_error_array(
			vc, m, t, rf, dev + i0 * w, w, res, mid, dec, lo, hi,
			&k, err);

		if (st != USC_OK)
			return st;
		if (k == 0)
			continue;
		for (size_t i = 0; i < m; i++) {
			size_t j = j0 + i0 + i;

			if (!dec[i])
				continue;
			p->ulp_oracle[j] = mid[i];
			p->undecided[j] = 0;
			/*
			 * usc__check_set_enclosure of the enclosure
			 * usc__tier_enclosure gives: a FINITE ball's
			 * outward bounds, an infinity or NaN as its point.
			 */
			if (vc[i].kind == USC__ORC_FINITE) {
				double c = lo[i] / 2 + hi[i] / 2;

				p->oracle_mid[j] = c;
				p->oracle_rad[j] = step_up(
					max_or_number(hi[i] - c, c - lo[i]));
			} else {
				p->oracle_mid[j] =
					vc[i].kind == USC__ORC_POS_INF
						? INFINITY
					: vc[i].kind == USC__ORC_NEG_INF
						? -INFINITY
						: NAN;
				p->oracle_rad[j] = 0;
			}
		}
		p->tier_decided += k;
	}
	return USC_OK;
}
