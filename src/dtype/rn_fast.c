/*
 * The figures behind the inline rounding, decoding and ULP of the narrow
 * float formats (src/dtype/rn_fast.h), derived once from the format
 * table.
 */
#include "internal.h"

#include <pthread.h>

#include "dtype/rn_fast.h"
#include "dtype/round.h"

static usc__rn_format rn_table[USC_DTYPE_COUNT];
static bool rn_covered[USC_DTYPE_COUNT];
static pthread_once_t rn_once = PTHREAD_ONCE_INIT;

/*
 * Whether format f is one rn_fast.h covers: binary, a sign bit, signed
 * zeros and subnormals (so that the encoding of every finite value is
 * the sign bit beside the magnitude's exponent and fraction fields, the
 * integer formula of usc__rn_encode), and at most 23 mantissa bits (so
 * that every value and spacing is a normal double or zero).
 */
static bool covered(const usc_format *f)
{
	return f->kind == USC_KIND_FLOAT && f->has_sign && f->has_subnormals &&
	       f->zero == USC_ZERO_SIGNED && f->nan != USC_NAN_NEGZERO &&
	       f->man_bits >= 1 && f->man_bits <= 23 && f->bits <= 32;
}

static void init_rn_table(void)
{
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		const usc_format *f = usc_format_of((usc_dtype)t);
		const usc_float_info *fi;
		usc__rn_format *r = &rn_table[t];

		if (!f || !covered(f))
			continue;
		fi = usc__float_info((usc_dtype)t);
		r->man_bits = f->man_bits;
		r->emin = fi->emin;
		r->emax = fi->emax;
		r->shift = 52 - f->man_bits;
		r->max_finite = fi->max_finite;
		r->min_normal = fi->min_normal;
		r->sub_scale = ldexp(1.0, f->man_bits - fi->emin);
		r->sub_unit = ldexp(1.0, fi->emin - f->man_bits);
		r->rebias = (uint64_t)(1023 - f->bias) << f->man_bits;
		r->sign_bit = (uint64_t)1 << (f->bits - 1);
		r->sign_shift = f->bits - 1;
		r->mag_mask = r->sign_bit - 1;
		/*
		 * The magnitude codes at and above the first infinity or NaN
		 * are not finite: IEEE formats put +Inf first, then the NaNs;
		 * the fn formats have one NaN, the all-ones magnitude; the
		 * fn formats without NaN have only finite codes.
		 */
		r->special_min = r->sign_bit;
		if (f->inf == USC_INF_IEEE && fi->inf_bits < r->special_min)
			r->special_min = fi->inf_bits;
		if (f->nan == USC_NAN_ALLONES && fi->nan_bits < r->special_min)
			r->special_min = fi->nan_bits;
		if (f->nan == USC_NAN_IEEE) {
			uint64_t first = ((r->mag_mask >> f->man_bits)
					  << f->man_bits) | 1;

			if (first < r->special_min)
				r->special_min = first;
		}
		rn_covered[t] = true;
	}
}

const usc__rn_format *usc__rn_format_of(usc_dtype t)
{
	if ((int)t <= USC_DTYPE_INVALID || (int)t >= USC_DTYPE_COUNT)
		return NULL;
	pthread_once(&rn_once, init_rn_table);
	return rn_covered[t] ? &rn_table[t] : NULL;
}
