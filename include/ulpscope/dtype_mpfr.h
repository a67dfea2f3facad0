/*
 * ulpscope: the MPFR face of the number formats.
 *
 * These entry points take and give exact values as MPFR numbers, so a
 * value finer than any hardware float can be rounded into a format exactly
 * once.  Including this header includes <mpfr.h>.
 */
#ifndef ULPSCOPE_DTYPE_MPFR_H
#define ULPSCOPE_DTYPE_MPFR_H

#include <stdint.h>
#include <mpfr.h>

#include "ulpscope/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Decodes bits of type t into out, exactly.  out's precision is set to
 * what the value needs (the format's precision for floats, 64 bits for
 * integers); its previous value is lost.  NaN and Inf decode to MPFR's.
 */
usc_status usc_decode_mpfr(usc_dtype t, uint64_t bits, mpfr_ptr out);

/*
 * Encodes the exact value x into type t, rounding once as r says (NULL:
 * USC_ROUNDING_DEFAULT).  Works at any precision of x.
 */
usc_status usc_encode_mpfr(usc_dtype t, mpfr_srcptr x, const usc_rounding *r,
			   uint64_t *bits, unsigned *flags);

/* The ULP of format t at the real x, exactly, into out (precision set). */
usc_status usc_ulp_mpfr(usc_dtype t, mpfr_srcptr x, mpfr_ptr out);

/*
 * (decode(y) - ref) / ulp(ref), rounded to nearest double, with the same
 * NaN and Inf conventions as usc_ulp_error_double.
 */
usc_status usc_ulp_error_mpfr(usc_dtype t, uint64_t y, mpfr_srcptr ref,
			      double *out);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_DTYPE_MPFR_H */
