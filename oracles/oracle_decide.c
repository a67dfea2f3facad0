/*
 * Deciding what an oracle enclosure certifies: the correctly rounded
 * encoding of the exact value, and the ULP error of a device encoding.
 *
 * Rounding to nearest-even is a non-decreasing map from the reals to a
 * format's values (IEEE 754-2019 4.3: every rounding-direction attribute
 * is monotone), so every real between two reals that round to the same
 * value rounds to it too: an enclosure whose endpoints round alike
 * certifies its rounding.  The one thing monotonicity does not see is
 * the sign of zero, which is checked apart.  The ULP of a format is a
 * non-decreasing step function of |x| (docs/formats.md), which bounds the
 * ULP error over an enclosure by interval division.
 */
#include "internal.h"

#include <math.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "oracle.h"

/*
 * An endpoint of a finite-kind enclosure, with "beyond MPFR's range"
 * (+-Inf) replaced by the finite +-2^(2^30), far past every format's
 * largest value, so that it rounds as the huge finite real it stands for
 * (saturating formats saturate it, fn formats make it NaN).
 */
static void endpoint(mpfr_ptr e, mpfr_srcptr m)
{
	mpfr_set_prec(e, mpfr_get_prec(m));
	if (mpfr_inf_p(m)) {
		mpfr_set_ui_2exp(e, 1, 1L << 30, MPFR_RNDN);
		if (mpfr_signbit(m))
			mpfr_neg(e, e, MPFR_RNDN);
	} else
		mpfr_set(e, m, MPFR_RNDN);
}

static bool point_zero(const usc__oracle_value *v)
{
	return mpfr_zero_p(&v->x->left) && mpfr_zero_p(&v->x->right);
}

usc_status usc__oracle_decide_rounding(const usc__oracle_value *v,
				       usc_dtype t, bool *decided,
				       uint64_t *bits, usc_error *err)
{
	usc__mpfr_range range;
	mpfr_t e;
	uint64_t b0 = 0, b1 = 0;
	bool ok = true;

	*decided = false;
	*bits = 0;
	if (!usc_dtype_is_float(t))
		return usc__fail(err, USC_EINVAL,
				 "oracle: cannot round into %s, not a float "
				 "type", usc_dtype_name(t));
	if (v->kind == USC__ORC_UNDECIDED)
		return USC_OK;
	usc__mpfr_range_widen(&range);
	mpfr_init2(e, 64);
	switch (v->kind) {
	case USC__ORC_NAN:
		mpfr_set_nan(e);
		(void)usc_encode_mpfr(t, e, NULL, &b0, NULL);
		b1 = b0;
		break;
	case USC__ORC_POS_INF:
	case USC__ORC_NEG_INF:
		mpfr_set_inf(e, v->kind == USC__ORC_POS_INF ? 1 : -1);
		(void)usc_encode_mpfr(t, e, NULL, &b0, NULL);
		b1 = b0;
		break;
	default:
		if (point_zero(v)) {
			/* A zero of unknown sign must encode alike both ways. */
			mpfr_set_zero(e, (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1);
			(void)usc_encode_mpfr(t, e, NULL, &b0, NULL);
			mpfr_neg(e, e, MPFR_RNDN);
			(void)usc_encode_mpfr(t, e, NULL, &b1, NULL);
			if (!(v->flags & USC__ORC_ZSIGN_UNKNOWN))
				b1 = b0;
			break;
		}
		endpoint(e, &v->x->left);
		(void)usc_encode_mpfr(t, e, NULL, &b0, NULL);
		endpoint(e, &v->x->right);
		(void)usc_encode_mpfr(t, e, NULL, &b1, NULL);
		/*
		 * An enclosure holding 0 (and more) may hold an exact zero of
		 * either sign: both zeros must round to the same code.
		 */
		if (b0 == b1 && mpfr_sgn(&v->x->left) <= 0 &&
		    mpfr_sgn(&v->x->right) >= 0) {
			uint64_t zp = 0, zn = 0;

			mpfr_set_zero(e, 1);
			(void)usc_encode_mpfr(t, e, NULL, &zp, NULL);
			mpfr_set_zero(e, -1);
			(void)usc_encode_mpfr(t, e, NULL, &zn, NULL);
			ok = zp == b0 && zn == b0;
		}
		break;
	}
	mpfr_clear(e);
	usc__mpfr_range_restore(&range);
	if (ok && b0 == b1) {
		*decided = true;
		*bits = b0;
	}
	return USC_OK;
}

/* ----------------------------------------------------------- ULP error */

#define ERR_PREC 128

static bool meets(const usc__oracle_resolution *res, double lo, double hi)
{
	bool abs_ok = false, rel_ok = false;

	if (res->abs_ulps > 0)
		abs_ok = hi - lo <= res->abs_ulps;
	if (res->sig_digits > 0) {
		if (lo == 0 && hi == 0)
			rel_ok = true;
		else if ((lo > 0 || hi < 0) && isfinite(lo) && isfinite(hi)) {
			double m = fmin(fabs(lo), fabs(hi));

			rel_ok = hi - lo <= m * pow(10.0, -res->sig_digits);
		}
	}
	return abs_ok || rel_ok;
}

bool usc__ulp_error_special(usc__oracle_kind kind, usc_dtype t, uint64_t y,
			    usc__oracle_ulp_error *out)
{
	bool y_nan = usc_bits_is_nan(t, y), y_inf = usc_bits_is_inf(t, y);

	out->kind = USC__ORC_UNDECIDED;
	out->lo = out->hi = out->mid = NAN;
	out->decided = false;
	if (kind == USC__ORC_UNDECIDED)
		return true;
	if (y_nan || kind == USC__ORC_NAN) {
		bool both = y_nan && kind == USC__ORC_NAN;

		out->kind = both ? USC__ORC_FINITE : USC__ORC_NAN;
		out->lo = out->hi = out->mid = both ? 0.0 : NAN;
		out->decided = true;
		return true;
	}
	if (kind != USC__ORC_FINITE || y_inf) {
		/*
		 * Infinities: 0 when both are the same infinity, else an
		 * infinite error toward y - y* (y* finite is below +Inf).
		 */
		double yv = 0;
		int sv = kind == USC__ORC_POS_INF   ? 2
			 : kind == USC__ORC_NEG_INF ? -2
						    : 0;
		int sy;

		(void)usc_decode_double(t, y, &yv);
		sy = y_inf ? (yv > 0 ? 2 : -2) : 0;
		out->decided = true;
		if (sv == sy) {
			out->kind = USC__ORC_FINITE;
			out->lo = out->hi = out->mid = 0.0;
		} else {
			out->kind = sy > sv ? USC__ORC_POS_INF : USC__ORC_NEG_INF;
			out->lo = out->hi = out->mid =
				sy > sv ? INFINITY : -INFINITY;
		}
		return true;
	}
	return false;
}

void usc__ulp_error_finish(const double d[4], double mid,
			   const usc__oracle_resolution *res,
			   usc__oracle_ulp_error *out)
{
	static const usc__oracle_resolution eighth = {0.125, 0};

	out->lo = fmin(d[0], d[1]);
	out->hi = fmax(d[2], d[3]);
	for (int i = 0; i < 4; i++)
		if (isnan(d[i]))
			out->lo = out->hi = NAN;
	out->mid = mid;
	if (isnan(out->lo)) {
		out->kind = USC__ORC_UNDECIDED;
	} else {
		out->kind = USC__ORC_FINITE;
		out->decided = meets(res ? res : &eighth, out->lo, out->hi);
	}
}

usc_status usc__oracle_decide_ulp_error(const usc__oracle_value *v,
					usc_dtype t, uint64_t y,
					const usc__oracle_resolution *res,
					usc__oracle_ulp_error *out,
					usc_error *err)
{
	usc__mpfr_range range;
	mpfr_t yv, lo, hi, m, M, umin, umax, q;
	double d[4], mid;

	if (!usc_dtype_is_float(t)) {
		out->kind = USC__ORC_UNDECIDED;
		out->lo = out->hi = out->mid = NAN;
		out->decided = false;
		return usc__fail(err, USC_EINVAL,
				 "oracle: ULP error needs a float type, not %s",
				 usc_dtype_name(t));
	}
	if (usc__ulp_error_special((usc__oracle_kind)v->kind, t, y, out))
		return USC_OK;
	usc__mpfr_range_widen(&range);
	mpfr_inits2(ERR_PREC, yv, lo, hi, m, M, umin, umax, q, (mpfr_ptr)0);
	(void)usc_decode_mpfr(t, y, yv);
	/* Numerator y - y*: [y - hi, y - lo], rounded outward. */
	mpfr_sub(lo, yv, &v->x->right, MPFR_RNDD);
	mpfr_sub(hi, yv, &v->x->left, MPFR_RNDU);
	/* |y*| ranges over [m, M]; ulp is non-decreasing in |y*|. */
	if (mpfr_sgn(&v->x->left) <= 0 && mpfr_sgn(&v->x->right) >= 0)
		mpfr_set_zero(m, 1);
	else if (mpfr_sgn(&v->x->left) > 0)
		mpfr_set(m, &v->x->left, MPFR_RNDD);
	else
		mpfr_neg(m, &v->x->right, MPFR_RNDD);
	mpfr_abs(M, &v->x->left, MPFR_RNDU);
	if (mpfr_cmpabs(&v->x->right, M) > 0)
		mpfr_abs(M, &v->x->right, MPFR_RNDU);
	if (usc_ulp_mpfr(t, m, umin) != USC_OK ||
	    usc_ulp_mpfr(t, M, umax) != USC_OK) {
		mpfr_clears(yv, lo, hi, m, M, umin, umax, q, (mpfr_ptr)0);
		usc__mpfr_range_restore(&range);
		return usc__fail(err, USC_EINTERNAL, "oracle: no ULP for %s",
				 usc_dtype_name(t));
	}
	/* A positive denominator: the extremes are at the four quotients. */
	mpfr_div(q, lo, umin, MPFR_RNDD);
	d[0] = mpfr_get_d(q, MPFR_RNDD);
	mpfr_div(q, lo, umax, MPFR_RNDD);
	d[1] = mpfr_get_d(q, MPFR_RNDD);
	mpfr_div(q, hi, umin, MPFR_RNDU);
	d[2] = mpfr_get_d(q, MPFR_RNDU);
	mpfr_div(q, hi, umax, MPFR_RNDU);
	d[3] = mpfr_get_d(q, MPFR_RNDU);
	/* The representative: the error at the enclosure's midpoint. */
	mpfi_mid(m, v->x);
	if (mpfr_number_p(m)) {
		mpfr_sub(q, yv, m, MPFR_RNDN);
		(void)usc_ulp_mpfr(t, m, umin);
		mpfr_div(q, q, umin, MPFR_RNDN);
		mid = mpfr_get_d(q, MPFR_RNDN);
	} else if (isnan(d[0]) || isnan(d[1]) || isnan(d[2]) || isnan(d[3])) {
		mid = NAN;
	} else {
		double l = fmin(d[0], d[1]);

		mid = l > 0 ? l : fmax(d[2], d[3]);
	}
	usc__ulp_error_finish(d, mid, res, out);
	mpfr_clears(yv, lo, hi, m, M, umin, umax, q, (mpfr_ptr)0);
	usc__mpfr_range_restore(&range);
	return USC_OK;
}
