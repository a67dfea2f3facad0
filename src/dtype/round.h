/*
 * Internal: the one rounding routine behind every encode.
 *
 * A front end (from a double, from an MPFR number, from text) reduces an
 * exact value to a sign, a quantum exponent q and the value's magnitude
 * in units of 2^q: an integer part n and the fraction below it (its first
 * 64 bits and a sticky bit for the rest).  The back end then decides the
 * rounding once and builds the encoding.  Splitting the work this way is
 * what makes every path round exactly once.
 */
#ifndef USC_DTYPE_ROUND_H
#define USC_DTYPE_ROUND_H

#include "internal.h"

#include "ulpscope/dtype.h"

typedef struct usc__scaled {
	bool sign;     /* the value is negative */
	int q;         /* the quantum: n counts units of 2^q */
	uint64_t n;    /* integer part of |x| / 2^q, modulo 2^64 */
	bool huge;     /* the integer part is 2^64 or more */
	uint64_t frac; /* first 64 bits of the fraction of |x| / 2^q */
	bool sticky;   /* some bit of the fraction below those 64 */
} usc__scaled;

/* The special values a front end may meet instead of a finite non-zero. */
typedef enum usc__special {
	USC__SPECIAL_NAN,
	USC__SPECIAL_INF,
	USC__SPECIAL_ZERO
} usc__special;

/*
 * The quantum exponent for a finite non-zero value with 2^e <= |x| <
 * 2^(e+1) in the floating format f: the exponent of its last mantissa
 * bit, never below that of the subnormals (or of the smallest normal
 * where there are none).  For integer kinds it is 0.
 */
int usc__quantum(const usc_format *f, long e);

/* Rounds a finite non-zero value given as s into f (float or integer). */
void usc__round_scaled(const usc_format *f, const usc__scaled *s,
		       const usc_rounding *r, uint64_t *bits, unsigned *flags);

/* Encodes NaN, an infinity or a zero of the given sign into f. */
void usc__encode_special(const usc_format *f, usc__special what, bool sign,
			 const usc_rounding *r, uint64_t *bits,
			 unsigned *flags);

/*
 * The effective rounding for a target: r itself, or where r is NULL the
 * default (nearest-even for floats, XLA's truncating convert for
 * integers).
 */
usc_rounding usc__effective_rounding(const usc_format *f,
				     const usc_rounding *r);

/* The derived figures of a floating format, computed once; NULL otherwise. */
const usc_float_info *usc__float_info(usc_dtype t);

/* True if the format kind can be a target of encode (float or integer). */
bool usc__encodable(const usc_format *f);

#endif /* USC_DTYPE_ROUND_H */
