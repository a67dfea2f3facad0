/*
 * Internal: the error of one encoding against another of the same float
 * type in ULPs, in double, for the check's figures against the strict
 * reference (src/analyze/check.c).
 */
#ifndef USC_DTYPE_ULP_FAST_H
#define USC_DTYPE_ULP_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "dtype/rn_fast.h"

/*
 * (y - r) / ulp(r) for encodings y and r of a float type t of at most 24
 * bits of precision, both finite: the double usc_ulp_error_mpfr gives
 * for y against r decoded exactly.  Returns false, *out untouched, for
 * anything else (NaN, an infinity, f64, a type that is not a float), which
 * the caller computes with usc_ulp_error_mpfr.
 */
bool usc__ulp_error_codes(usc_dtype t, uint64_t y, uint64_t r, double *out);

/*
 * The same figure in line, for a format whose rn_fast.h figures f the
 * caller has looked up once: false, *out untouched, when y or r is not
 * finite.  ulp(r) is 2^(e - man_bits), e the binade of r clamped to
 * [emin, emax] (a zero r: emin), read from the double's exponent field
 * (every finite value of these formats is a normal double or zero);
 * multiplying by its inverse, 2^(man_bits - e), a normal double, is
 * exact on the difference, as ldexp is above.
 */
static inline bool usc__ulp_error_rn(const usc__rn_format *f, uint64_t y,
				     uint64_t r, double *out)
{
	double yd, rd, s;
	uint64_t b;
	int e;

	if (!usc__rn_decode(f, y, &yd) || !usc__rn_decode(f, r, &rd))
		return false;
	memcpy(&b, &rd, sizeof b);
	e = (int)((b >> 52) & 0x7ff) - 1023;
	e = e < f->emin ? f->emin : e > f->emax ? f->emax : e;
	b = (uint64_t)(f->man_bits - e + 1023) << 52;
	memcpy(&s, &b, sizeof s);
	*out = (yd - rd) * s;
	return true;
}

#endif /* USC_DTYPE_ULP_FAST_H */
