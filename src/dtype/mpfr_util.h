/*
 * Internal MPFR helpers of the dtype module.  Include <mpfr.h> first.
 */
#ifndef USC_DTYPE_MPFR_UTIL_H
#define USC_DTYPE_MPFR_UTIL_H

#include "internal.h"

#include <mpfr.h>

#include "ulpscope/dtype.h"

/*
 * The library's MPFR work runs in the widest exponent range, whatever
 * range the caller has set (a caller emulating a format narrows it); the
 * caller's range is restored before returning.
 */
typedef struct usc__mpfr_range {
	mpfr_exp_t emin, emax;
} usc__mpfr_range;

void usc__mpfr_range_widen(usc__mpfr_range *saved);
void usc__mpfr_range_restore(const usc__mpfr_range *saved);

/*
 * usc_encode_mpfr where x was truncated toward zero from the true value:
 * sticky says whether anything was cut off, which keeps the final rounding
 * single (the remainder lies strictly between 0 and one unit of x's last
 * place, below every bit the rounding looks at).
 */
usc_status usc__encode_mpfr_sticky(usc_dtype t, mpfr_srcptr x, bool sticky,
				   const usc_rounding *r, uint64_t *bits,
				   unsigned *flags);

#endif /* USC_DTYPE_MPFR_UTIL_H */
