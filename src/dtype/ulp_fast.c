/*
 * The ULP error of an encoding against another, in double
 * (src/dtype/ulp_fast.h).
 *
 * For a format of p <= 24 bits of precision every finite value is a
 * double, and the exact difference y - r is a multiple of the format's
 * smallest spacing (2^-149 at the least, f32's) below 2^130 in magnitude:
 * a normal double or zero after one rounding to nearest, which is what
 * the double subtraction gives (IEEE 754).  ulp(r) is a power of two, and
 * the quotient stays between 2^-253 and 2^280, so dividing by it is exact
 * and rounding commutes with it: RN(y - r) / ulp(r) = RN((y - r) / ulp(r)),
 * the figure usc_ulp_error_mpfr computes exactly and rounds once.  Zeros
 * follow the same IEEE sign rule in both (x - x = +0, -0 - +0 = -0).
 * tests/dtype/test_ulp_fast.c holds the two to the same bits.
 */
#include "internal.h"

#include <math.h>

#include "dtype/round.h"
#include "dtype/ulp_fast.h"

bool usc__ulp_error_codes(usc_dtype t, uint64_t y, uint64_t r, double *out)
{
	const usc_format *f = usc_format_of(t);
	const usc_float_info *fi;
	double yd, rd;
	int e;

	if (!f || f->kind != USC_KIND_FLOAT)
		return false;
	fi = usc__float_info(t);
	if (!fi || fi->precision > 24)
		return false;
	if (usc_decode_double(t, y, &yd) != USC_OK ||
	    usc_decode_double(t, r, &rd) != USC_OK || !isfinite(yd) ||
	    !isfinite(rd))
		return false;
	/* The binade of r, clamped to the normal range: usc_ulp_mpfr's. */
	if (rd == 0)
		e = fi->emin;
	else {
		(void)frexp(rd, &e);
		e -= 1;
	}
	if (e < fi->emin)
		e = fi->emin;
	if (e > fi->emax)
		e = fi->emax;
	*out = ldexp(yd - rd, f->man_bits - e);
	return true;
}
