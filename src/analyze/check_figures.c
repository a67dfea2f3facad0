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
#include "dtype/ulp_fast.h"
#include "analyze/check_internal.h"

/* The device's error against the reference encoding, in ULPs. */
usc_status usc__check_reference_errors(usc__check_part *p, usc_error *err)
{
	usc_dtype t = usc_tensor_dtype(p->o->device);
	const usc__rn_format *rf = usc__rn_format_of(t);
	size_t w = (size_t)usc_format_of(t)->container_bytes;
	const void *dev = usc_tensor_cdata(p->o->device);
	const void *refd = usc_tensor_cdata(p->reference);
	usc_status st = USC_OK;
	mpfr_t ref;

	mpfr_init2(ref, 64);
	for (size_t j = 0; st == USC_OK && j < p->len; j++) {
		/* The encodings in place (usc_tensor_get_bits's, unchecked). */
		uint64_t d = usc__dom_get_enc(dev, w, (size_t)p->base + j);
		uint64_t rb = usc__dom_get_enc(refd, w, j);

		/* Fast reference hook: the figure in double where exact. */
		if (rf && usc__ulp_error_rn(rf, d, rb, &p->ulp_reference[j]))
			continue;
		if (usc__ulp_error_codes(t, d, rb, &p->ulp_reference[j]))
			continue;
		if (usc_dtype_is_float(t)) {
			st = usc_decode_mpfr(t, rb, ref);
			if (st == USC_OK)
				st = usc_ulp_error_mpfr(t, d, ref,
							&p->ulp_reference[j]);
		} else {
			int64_t ds, rs;
			uint64_t du, ru;

			usc_decode_int(t, d, &ds, &du);
			usc_decode_int(t, rb, &rs, &ru);
			p->ulp_reference[j] =
				usc_format_of(t)->kind == USC_KIND_SINT
					? (double)ds - (double)rs
					: (double)du - (double)ru;
		}
	}
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
