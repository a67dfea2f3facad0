/*
 * ULPs: the spacing of a format at a real value, the ordinal distance
 * between two encodings, and the error of an encoding against a real
 * reference.  docs/formats.md states the definitions.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <gmp.h>
#include <mpfr.h>

#include "dtype/mpfr_util.h"
#include "dtype/round.h"
#include "ulpscope/dtype_mpfr.h"

/*
 * The exponent of the ULP at a value whose binade is 2^e (that is,
 * 2^e <= |x| < 2^(e+1)), for a floating format: Goldberg's definition
 * with e clamped to the format's normal range.
 */
static long ulp_exponent(const usc_format *f, const usc_float_info *fi,
			 long e)
{
	if (e < fi->emin)
		e = fi->emin;
	if (e > fi->emax)
		e = fi->emax;
	return e - f->man_bits;
}

usc_status usc_ulp_double(usc_dtype t, double x, double *out)
{
	const usc_format *f = usc_format_of(t);
	usc_float_info fi;
	int e;

	if (!f)
		return USC_EINVAL;
	if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
	    f->kind == USC_KIND_PRED) {
		*out = 1;
		return USC_OK;
	}
	if (usc_float_info_of(t, &fi) != USC_OK)
		return USC_EINVAL;
	if (isnan(x)) {
		*out = NAN;
		return USC_OK;
	}
	if (isinf(x))
		e = fi.emax;
	else if (x == 0)
		e = fi.emin;
	else {
		frexp(x, &e); /* |x| = m * 2^e with m in [1/2, 1) */
		e -= 1;
	}
	*out = ldexp(1.0, (int)ulp_exponent(f, &fi, e));
	return USC_OK;
}

usc_status usc_ulp_mpfr(usc_dtype t, mpfr_srcptr x, mpfr_ptr out)
{
	const usc_format *f = usc_format_of(t);
	usc_float_info fi;
	long e;

	if (!f)
		return USC_EINVAL;
	mpfr_set_prec(out, 2);
	if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
	    f->kind == USC_KIND_PRED) {
		mpfr_set_ui(out, 1, MPFR_RNDN);
		return USC_OK;
	}
	if (usc_float_info_of(t, &fi) != USC_OK)
		return USC_EINVAL;
	if (mpfr_nan_p(x)) {
		mpfr_set_nan(out);
		return USC_OK;
	}
	if (mpfr_inf_p(x))
		e = fi.emax;
	else if (mpfr_zero_p(x))
		e = fi.emin;
	else
		e = (long)mpfr_get_exp(x) - 1;
	mpfr_set_ui_2exp(out, 1, ulp_exponent(f, &fi, e), MPFR_RNDN);
	return USC_OK;
}

usc_status usc_ulp_error_mpfr(usc_dtype t, uint64_t y, mpfr_srcptr ref,
			      double *out)
{
	const usc_format *f = usc_format_of(t);
	usc__mpfr_range range;
	mpfr_t yv, diff, u;
	mpfr_prec_t p;
	usc_status st;

	if (!usc__encodable(f))
		return USC_EINVAL;
	mpfr_init2(yv, 64);
	st = usc_decode_mpfr(t, y, yv);
	if (st != USC_OK) {
		mpfr_clear(yv);
		return st;
	}
	if (mpfr_nan_p(yv) || mpfr_nan_p(ref)) {
		*out = mpfr_nan_p(yv) && mpfr_nan_p(ref) ? 0.0 : NAN;
		mpfr_clear(yv);
		return USC_OK;
	}
	if (mpfr_inf_p(yv) || mpfr_inf_p(ref)) {
		if (mpfr_equal_p(yv, ref))
			*out = 0.0;
		else if (mpfr_inf_p(yv))
			*out = mpfr_sgn(yv) > 0 ? INFINITY : -INFINITY;
		else
			*out = mpfr_sgn(ref) > 0 ? -INFINITY : INFINITY;
		mpfr_clear(yv);
		return USC_OK;
	}
	usc__mpfr_range_widen(&range);
	/*
	 * A precision that holds y - ref exactly: from the higher leading
	 * bit to the lower last bit of the two, capped (beyond the cap the
	 * figure is correct to far more digits than a double shows).
	 */
	p = mpfr_get_prec(ref) + 66;
	if (!mpfr_zero_p(yv) && !mpfr_zero_p(ref)) {
		mpfr_exp_t ey = mpfr_get_exp(yv), er = mpfr_get_exp(ref);
		mpfr_exp_t span = ey > er ? ey - er : er - ey;

		p += span > 100000 ? 100000 : (mpfr_prec_t)span;
	}
	mpfr_init2(diff, p);
	mpfr_init2(u, 2);
	mpfr_sub(diff, yv, ref, MPFR_RNDN);
	usc_ulp_mpfr(t, ref, u);
	mpfr_div(diff, diff, u, MPFR_RNDN); /* exact: u is a power of 2 */
	*out = mpfr_get_d(diff, MPFR_RNDN);
	mpfr_clear(u);
	mpfr_clear(diff);
	mpfr_clear(yv);
	usc__mpfr_range_restore(&range);
	return USC_OK;
}

usc_status usc_ulp_error_double(usc_dtype t, uint64_t y, double ref,
				double *out)
{
	mpfr_t r;
	usc_status st;

	mpfr_init2(r, 53);
	mpfr_set_d(r, ref, MPFR_RNDN);
	st = usc_ulp_error_mpfr(t, y, r, out);
	mpfr_clear(r);
	return st;
}

/*
 * The position of an encoding in the format's ordered set of values:
 * sign-magnitude codes are already in order within each sign, so the
 * magnitude code with the value's sign is the ordinal.  Both zeros map
 * to 0 and Inf to one past the largest finite code.
 */
static usc_status ordinal(usc_dtype t, uint64_t bits, int64_t *out)
{
	const usc_format *f = usc_format_of(t);
	usc_float_info fi;
	uint64_t mag;

	if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
	    f->kind == USC_KIND_PRED) {
		int64_t sv;
		uint64_t uv;

		usc_decode_int(t, bits, &sv, &uv);
		if (f->kind == USC_KIND_SINT) {
			*out = sv;
			return USC_OK;
		}
		if (uv > INT64_MAX)
			return USC_ERANGE;
		*out = (int64_t)uv;
		return USC_OK;
	}
	if (usc_bits_is_nan(t, bits))
		return USC_EDOMAIN;
	usc_float_info_of(t, &fi);
	if (f->bits < 64)
		bits &= ((uint64_t)1 << f->bits) - 1;
	mag = bits & ~fi.sign_mask;
	*out = (bits & fi.sign_mask) ? -(int64_t)mag : (int64_t)mag;
	return USC_OK;
}

usc_status usc_ulp_distance(usc_dtype t, uint64_t a, uint64_t b,
			    int64_t *out)
{
	const usc_format *f = usc_format_of(t);
	int64_t oa, ob;
	usc_status st;

	if (!usc__encodable(f))
		return USC_EINVAL;
	if ((st = ordinal(t, a, &oa)) != USC_OK ||
	    (st = ordinal(t, b, &ob)) != USC_OK)
		return st;
	if ((oa < 0 && ob > INT64_MAX + oa) || (oa > 0 && ob < INT64_MIN + oa))
		return USC_ERANGE;
	*out = ob - oa;
	return USC_OK;
}
