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

/*
 * (y - r) / ulp(r) for encodings y and r of a float type t of at most 24
 * bits of precision, both finite: the double usc_ulp_error_mpfr gives
 * for y against r decoded exactly.  Returns false, *out untouched, for
 * anything else (NaN, an infinity, f64, a type that is not a float), which
 * the caller computes with usc_ulp_error_mpfr.
 */
bool usc__ulp_error_codes(usc_dtype t, uint64_t y, uint64_t r, double *out);

#endif /* USC_DTYPE_ULP_FAST_H */
