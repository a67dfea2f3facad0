/*
 * Numbers as text: exact parsing into any format, and the exact decimal
 * expansion of any encoding.
 */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gmp.h>
#include <mpfr.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

/*
 * Working precision for parsing.  The string is truncated toward zero to
 * this many bits and the remainder kept as a sticky bit; that preserves a
 * single correct rounding as long as the precision exceeds the target's
 * precision plus the 64 fraction bits the rounding examines (53 + 64 + 2),
 * and for integer targets the 64 integer and 64 fraction bits.
 */
#define PARSE_PREC 256

usc_status usc_encode_str(usc_dtype t, const char *text, const usc_rounding *r,
			  uint64_t *bits, unsigned *flags, usc_error *err)
{
	const usc_format *f = usc_format_of(t);
	usc__mpfr_range range;
	const char *p = text;
	char *end = NULL;
	bool neg = false;
	usc_status st;
	mpfr_t x;
	int ternary;

	if (!f || !((f->kind == USC_KIND_FLOAT) || f->kind == USC_KIND_SINT ||
		    f->kind == USC_KIND_UINT || f->kind == USC_KIND_PRED))
		return usc__fail(err, USC_EINVAL,
				 "cannot encode values of type %s",
				 usc_dtype_name(t));
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	/* MPFR reads "nan" but not its sign, so the sign is taken here. */
	if (*p == '-' || *p == '+' || *p == '\0' || isspace((unsigned char)*p))
		return usc__fail(err, USC_EPARSE,
				 "expected a number, found '%s'", text);
	usc__mpfr_range_widen(&range);
	mpfr_init2(x, PARSE_PREC);
	ternary = mpfr_strtofr(x, p, &end, 0, MPFR_RNDZ);
	while (end && isspace((unsigned char)*end))
		end++;
	if (!end || end == p || *end != '\0') {
		mpfr_clear(x);
		usc__mpfr_range_restore(&range);
		return usc__fail(err, USC_EPARSE,
				 "expected a decimal or hexadecimal number, "
				 "'inf' or 'nan', found '%s'",
				 text);
	}
	if (neg)
		mpfr_neg(x, x, MPFR_RNDN); /* exact, NaN included */
	st = usc__encode_mpfr_sticky(t, x, ternary != 0, r, bits, flags);
	mpfr_clear(x);
	usc__mpfr_range_restore(&range);
	return st;
}

usc_status usc_ulp_error_str(usc_dtype t, uint64_t y, const char *ref,
			     double *ulps, double *ulp_ref, usc_error *err)
{
	usc__mpfr_range range;
	const char *p = ref;
	char *end = NULL;
	bool neg = false;
	usc_status st;
	mpfr_t x, u;

	if (!usc_dtype_is_float(t))
		return usc__fail(err, USC_EINVAL, "%s is not a floating type",
				 usc_dtype_name(t));
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	usc__mpfr_range_widen(&range);
	mpfr_init2(x, PARSE_PREC);
	mpfr_strtofr(x, p, &end, 0, MPFR_RNDN);
	while (end && isspace((unsigned char)*end))
		end++;
	if (!end || end == p || *end != '\0' || *p == '-' || *p == '+') {
		mpfr_clear(x);
		usc__mpfr_range_restore(&range);
		return usc__fail(err, USC_EPARSE,
				 "expected a decimal or hexadecimal number, "
				 "'inf' or 'nan', found '%s'",
				 ref);
	}
	if (neg)
		mpfr_neg(x, x, MPFR_RNDN);
	st = usc_ulp_error_mpfr(t, y, x, ulps);
	if (st == USC_OK && ulp_ref) {
		mpfr_init2(u, 2);
		usc_ulp_mpfr(t, x, u);
		*ulp_ref = mpfr_get_d(u, MPFR_RNDN);
		mpfr_clear(u);
	}
	mpfr_clear(x);
	usc__mpfr_range_restore(&range);
	return st;
}

/* Appends s to buf at *len, failing if it does not fit. */
static usc_status put(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > size)
		return USC_ERANGE;
	memcpy(buf + *len, s, n + 1);
	*len += n;
	return USC_OK;
}

usc_status usc_exact_decimal(usc_dtype t, uint64_t bits, char *buf,
			     size_t size)
{
	const usc_format *f = usc_format_of(t);
	size_t len = 0;
	usc_status st;
	double d;
	int e;

	if (!f || size == 0)
		return USC_EINVAL;
	buf[0] = '\0';
	if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT ||
	    f->kind == USC_KIND_PRED) {
		int64_t sv;
		uint64_t uv;
		int n;

		usc_decode_int(t, bits, &sv, &uv);
		n = f->kind == USC_KIND_SINT
			    ? snprintf(buf, size, "%lld", (long long)sv)
			    : snprintf(buf, size, "%llu", (unsigned long long)uv);
		return n < 0 || (size_t)n >= size ? USC_ERANGE : USC_OK;
	}
	if ((st = usc_decode_double(t, bits, &d)) != USC_OK)
		return st;
	if (isnan(d))
		return put(buf, size, &len, "nan");
	if (signbit(d) && (st = put(buf, size, &len, "-")) != USC_OK)
		return st;
	d = fabs(d);
	if (isinf(d))
		return put(buf, size, &len, "inf");
	if (d == 0)
		return put(buf, size, &len, "0");
	{
		/*
		 * d = m * 2^e with m an integer.  For e < 0 the value is
		 * m * 5^-e / 10^-e: the digits of m * 5^-e with the point
		 * -e places from the right.
		 */
		double m = frexp(d, &e);
		mpz_t z;
		char *digits;
		size_t nd, point;

		m = ldexp(m, 53);
		e -= 53;
		mpz_init_set_d(z, m);
		while (e < 0 && mpz_even_p(z)) {
			mpz_fdiv_q_2exp(z, z, 1);
			e++;
		}
		if (e >= 0)
			mpz_mul_2exp(z, z, (mp_bitcnt_t)e);
		else {
			mpz_t five;

			mpz_init(five);
			mpz_ui_pow_ui(five, 5, (unsigned long)-e);
			mpz_mul(z, z, five);
			mpz_clear(five);
		}
		nd = mpz_sizeinbase(z, 10) + 2;
		digits = usc__malloc(nd);
		if (!digits) {
			mpz_clear(z);
			return USC_ENOMEM;
		}
		mpz_get_str(digits, 10, z);
		mpz_clear(z);
		nd = strlen(digits);
		st = USC_OK;
		if (e >= 0) {
			st = put(buf, size, &len, digits);
		} else {
			point = (size_t)-e; /* digits after the point */
			if (nd <= point) {
				st = put(buf, size, &len, "0.");
				for (size_t i = nd; st == USC_OK && i < point; i++)
					st = put(buf, size, &len, "0");
				if (st == USC_OK)
					st = put(buf, size, &len, digits);
			} else {
				char c = digits[nd - point];

				digits[nd - point] = '\0';
				st = put(buf, size, &len, digits);
				digits[nd - point] = c;
				if (st == USC_OK)
					st = put(buf, size, &len, ".");
				if (st == USC_OK)
					st = put(buf, size, &len,
						 digits + nd - point);
			}
		}
		usc__free(digits);
		return st;
	}
}
