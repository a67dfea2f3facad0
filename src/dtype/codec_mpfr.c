/*
 * Encoding from and decoding to MPFR numbers.
 *
 * The exact value is scaled by a power of two (exact in MPFR) so that its
 * integer part counts units of the target's last mantissa place; the
 * fraction's first 64 bits and a sticky bit go to the shared rounding
 * routine.  Nothing passes through a double, so values finer than any
 * hardware float round exactly once.
 */
#include "internal.h"

#include <limits.h>
#include <stdio.h> /* before mpfr.h, for its FILE prototypes */
#include <gmp.h>
#include <mpfr.h>

#include "dtype/round.h"
#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

_Static_assert(ULONG_MAX == UINT64_MAX, "unsigned long must be 64 bits");

void usc__mpfr_range_widen(usc__mpfr_range *saved)
{
	saved->emin = mpfr_get_emin();
	saved->emax = mpfr_get_emax();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
}

void usc__mpfr_range_restore(const usc__mpfr_range *saved)
{
	mpfr_set_emin(saved->emin);
	mpfr_set_emax(saved->emax);
}

/* The low 64 bits of the integer z >= 0, and whether z >= 2^64. */
static uint64_t low64(mpz_t z, bool *huge)
{
	*huge = mpz_sizeinbase(z, 2) > 64;
	mpz_fdiv_r_2exp(z, z, 64);
	return mpz_get_ui(z);
}

/*
 * Values whose magnitude is far beyond what the target holds are decided
 * without scaling them (which for 2^(2^40) would ask GMP for a 2^40-bit
 * integer): above a float format's range, any such value rounds like
 * 2^(emax+2) plus a sticky remainder, which overflows in every mode; an
 * integer multiple of 2^64 (every value with e >= 64 + its precision) has
 * zero low bits and saturates or wraps to zero.  Returns true and fills s
 * when x is such a value.
 */
static bool far_out_of_range(const usc_format *f, mpfr_srcptr x, long e,
			     usc__scaled *s)
{
	s->sign = mpfr_signbit(x) != 0;
	s->huge = false;
	s->frac = 0;
	s->sticky = false;
	if (f->kind == USC_KIND_FLOAT) {
		const usc_float_info *fi = usc__float_info(f->id);

		if (e <= fi->emax + 1)
			return false;
		s->q = fi->emax + 2 - f->man_bits;
		s->n = (uint64_t)1 << f->man_bits;
		s->sticky = true;
		return true;
	}
	if (e < 64 + (long)mpfr_get_prec(x))
		return false;
	s->q = 0;
	s->n = 0;
	s->huge = true;
	return true;
}

usc_status usc__encode_mpfr_sticky(usc_dtype t, mpfr_srcptr x, bool sticky,
				   const usc_rounding *r, uint64_t *bits,
				   unsigned *flags)
{
	const usc_format *f = usc_format_of(t);
	usc__mpfr_range range;
	unsigned fl = 0;
	usc__scaled s;
	mpfr_t scaled, frac;
	mpz_t z;

	if (!usc__encodable(f))
		return USC_EINVAL;
	s.sign = mpfr_signbit(x) != 0;
	if (mpfr_nan_p(x))
		usc__encode_special(f, USC__SPECIAL_NAN, s.sign, r, bits, &fl);
	else if (mpfr_inf_p(x))
		usc__encode_special(f, USC__SPECIAL_INF, s.sign, r, bits, &fl);
	else if (mpfr_zero_p(x) && !sticky)
		usc__encode_special(f, USC__SPECIAL_ZERO, s.sign, r, bits, &fl);
	else if (mpfr_zero_p(x)) {
		/* Only a sticky remainder: smaller than anything. */
		s.q = usc__quantum(f, LONG_MIN / 2);
		s.n = 0;
		s.huge = false;
		s.frac = 0;
		s.sticky = true;
		usc__round_scaled(f, &s, r, bits, &fl);
	} else {
		mpfr_prec_t p = mpfr_get_prec(x);
		long e = (long)mpfr_get_exp(x) - 1; /* 2^e <= |x| < 2^(e+1) */

		if (far_out_of_range(f, x, e, &s)) {
			usc__round_scaled(f, &s, r, bits, &fl);
			if (flags)
				*flags = fl;
			return USC_OK;
		}
		usc__mpfr_range_widen(&range);
		mpfr_init2(scaled, p);
		mpfr_init2(frac, p);
		mpz_init(z);
		s.q = usc__quantum(f, e);
		/* Exact: a power-of-two scaling of an in-range value. */
		mpfr_mul_2si(scaled, x, -s.q, MPFR_RNDN);
		mpfr_abs(scaled, scaled, MPFR_RNDN);
		mpfr_get_z(z, scaled, MPFR_RNDZ);
		s.n = low64(z, &s.huge);
		mpfr_frac(frac, scaled, MPFR_RNDN);
		mpfr_mul_2ui(frac, frac, 64, MPFR_RNDN);
		mpfr_get_z(z, frac, MPFR_RNDZ);
		s.frac = mpz_get_ui(z);
		s.sticky = sticky || !mpfr_integer_p(frac);
		mpz_clear(z);
		mpfr_clear(frac);
		mpfr_clear(scaled);
		usc__mpfr_range_restore(&range);
		usc__round_scaled(f, &s, r, bits, &fl);
	}
	if (flags)
		*flags = fl;
	return USC_OK;
}

usc_status usc_encode_mpfr(usc_dtype t, mpfr_srcptr x, const usc_rounding *r,
			   uint64_t *bits, unsigned *flags)
{
	return usc__encode_mpfr_sticky(t, x, false, r, bits, flags);
}

usc_status usc_decode_mpfr(usc_dtype t, uint64_t bits, mpfr_ptr out)
{
	const usc_format *f = usc_format_of(t);
	double d;

	if (!f)
		return USC_EINVAL;
	if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
	    f->kind == USC_KIND_PRED) {
		int64_t sv;
		uint64_t uv;

		usc_decode_int(t, bits, &sv, &uv);
		mpfr_set_prec(out, 64);
		/* Two exact halves: MPFR's long is 64 bits here. */
		if (f->kind == USC_KIND_SINT)
			mpfr_set_si(out, sv, MPFR_RNDN);
		else
			mpfr_set_ui(out, uv, MPFR_RNDN);
		return USC_OK;
	}
	if (f->kind != USC_KIND_FLOAT)
		return USC_EINVAL;
	/* Every floating format decodes exactly into a double. */
	usc_decode_double(t, bits, &d);
	mpfr_set_prec(out, f->man_bits + 1 > 53 ? 53 : f->man_bits + 1);
	mpfr_set_d(out, d, MPFR_RNDN);
	return USC_OK;
}
