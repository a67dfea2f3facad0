/*
 * The rounding back end shared by every encode path, and the names of the
 * rounding modes and overflow policies.
 */
#include "internal.h"

#include <string.h>

#include "dtype/round.h"

static const char *const round_names[USC_RND_COUNT] = {
#define USC__RND_NAME(id, name) [USC_RND_##id] = name,
	USC_ROUND_LIST(USC__RND_NAME)
#undef USC__RND_NAME
};

static const char *const overflow_names[USC_OVF_COUNT] = {
#define USC__OVF_NAME(id, name) [USC_OVF_##id] = name,
	USC_OVERFLOW_LIST(USC__OVF_NAME)
#undef USC__OVF_NAME
};

const char *usc_round_mode_name(usc_round_mode m)
{
	if ((int)m < 0 || m >= USC_RND_COUNT)
		return "invalid";
	return round_names[m];
}

usc_status usc_round_mode_from_name(const char *name, usc_round_mode *out)
{
	for (int m = 0; m < USC_RND_COUNT; m++)
		if (strcmp(name, round_names[m]) == 0) {
			*out = (usc_round_mode)m;
			return USC_OK;
		}
	return USC_ENOTFOUND;
}

const char *usc_overflow_name(usc_overflow o)
{
	if ((int)o < 0 || o >= USC_OVF_COUNT)
		return "invalid";
	return overflow_names[o];
}

usc_status usc_overflow_from_name(const char *name, usc_overflow *out)
{
	for (int o = 0; o < USC_OVF_COUNT; o++)
		if (strcmp(name, overflow_names[o]) == 0) {
			*out = (usc_overflow)o;
			return USC_OK;
		}
	return USC_ENOTFOUND;
}

bool usc__encodable(const usc_format *f)
{
	return f && (f->kind == USC_KIND_FLOAT || f->kind == USC_KIND_SINT ||
		     f->kind == USC_KIND_UINT || f->kind == USC_KIND_PRED);
}

usc_rounding usc__effective_rounding(const usc_format *f,
				     const usc_rounding *r)
{
	usc_rounding e = USC_ROUNDING_DEFAULT;

	if (r)
		e = *r;
	else if (f->kind != USC_KIND_FLOAT)
		e.mode = USC_RND_TOWARD_ZERO; /* XLA's convert truncates */
	if (e.overflow == USC_OVF_DEFAULT)
		e.overflow = f->default_overflow;
	if (e.random_bits == 0 || e.random_bits > 64)
		e.random_bits = USC_STOCHASTIC_DEFAULT_BITS;
	return e;
}

int usc__quantum(const usc_format *f, long e)
{
	int emin, qmin;

	if (f->kind != USC_KIND_FLOAT)
		return 0;
	emin = f->has_subnormals ? 1 - f->bias : -f->bias;
	qmin = emin - f->man_bits;
	if (e - f->man_bits < qmin)
		return qmin;
	/* Values far above the range keep a quantum that fits in an int. */
	if (e > 100000)
		e = 100000;
	return (int)(e - f->man_bits);
}

/*
 * Whether to add one unit to the integer part n, given the fraction.
 * odd is the parity of n (for ties to even).
 */
static bool round_up(const usc_rounding *r, bool sign, bool odd,
		     uint64_t frac, bool sticky)
{
	const uint64_t half = (uint64_t)1 << 63;
	bool nonzero = frac != 0 || sticky;

	switch (r->mode) {
	case USC_RND_NEAREST_EVEN:
		if (frac != half)
			return frac > half;
		return sticky || odd;
	case USC_RND_NEAREST_AWAY:
		return frac >= half;
	case USC_RND_TOWARD_ZERO:
		return false;
	case USC_RND_UP:
		return nonzero && !sign;
	case USC_RND_DOWN:
		return nonzero && sign;
	case USC_RND_STOCHASTIC: {
		/*
		 * Add the random word to the first k fraction bits and keep
		 * the carry: the bits below those k never matter, as in
		 * hardware stochastic rounding.
		 */
		unsigned k = r->random_bits;
		uint64_t mask = k >= 64 ? ~(uint64_t)0
					: ((uint64_t)1 << k) - 1;
		uint64_t top = k >= 64 ? frac : frac >> (64 - k);
		uint64_t rnd = r->random & mask;

		return top > mask - rnd;
	}
	case USC_RND_COUNT:
		break;
	}
	return false;
}

/* True when rounding in mode r for this sign never moves away from 0. */
static bool toward_zero(const usc_rounding *r, bool sign)
{
	return r->mode == USC_RND_TOWARD_ZERO ||
	       (r->mode == USC_RND_UP && sign) ||
	       (r->mode == USC_RND_DOWN && !sign);
}

static uint64_t signed_bits(const usc_float_info *fi, bool sign,
			    uint64_t mag)
{
	return sign ? mag | fi->sign_mask : mag;
}

static uint64_t nan_of(const usc_format *f, const usc_float_info *fi,
		       bool sign)
{
	/* The fnuz NaN is the sign bit itself; others keep the sign. */
	if (f->nan == USC_NAN_NEGZERO)
		return fi->nan_bits;
	return signed_bits(fi, sign, fi->nan_bits);
}

/*
 * The result of an overflow (or of an infinite input where the format has
 * no infinity) under the policy in r.
 */
static uint64_t overflow_result(const usc_format *f, const usc_float_info *fi,
				bool sign, const usc_rounding *r,
				unsigned *flags)
{
	usc_overflow policy = r->overflow;

	if (policy == USC_OVF_INF && f->inf == USC_INF_NONE)
		policy = f->nan != USC_NAN_NONE ? USC_OVF_NAN
						: USC_OVF_SATURATE;
	if (policy == USC_OVF_NAN && f->nan == USC_NAN_NONE)
		policy = USC_OVF_SATURATE;
	if (policy == USC_OVF_WRAP)
		policy = USC_OVF_SATURATE; /* wrapping is for integers */
	/* e8m0 has no negative values: any negative result is NaN. */
	if (sign && !f->has_sign)
		return fi->nan_bits;
	switch (policy) {
	case USC_OVF_INF:
		return signed_bits(fi, sign, fi->inf_bits);
	case USC_OVF_NAN:
		return nan_of(f, fi, sign);
	default:
		*flags |= USC_FLAG_SATURATED;
		return signed_bits(fi, sign, fi->max_finite_bits);
	}
}

void usc__encode_special(const usc_format *f, usc__special what, bool sign,
			 const usc_rounding *r, uint64_t *bits,
			 unsigned *flags)
{
	const usc_float_info *fi;
	usc_rounding e = usc__effective_rounding(f, r);

	if (f->kind != USC_KIND_FLOAT) {
		/* Integers: XLA converts NaN to 0 and clamps infinities. */
		uint64_t mask = f->bits >= 64 ? ~(uint64_t)0
					      : ((uint64_t)1 << f->bits) - 1;

		if (f->kind == USC_KIND_PRED) {
			*bits = what != USC__SPECIAL_ZERO;
			return;
		}
		if (what == USC__SPECIAL_ZERO) {
			*bits = 0;
			return;
		}
		if (what == USC__SPECIAL_NAN || e.overflow == USC_OVF_WRAP) {
			*flags |= USC_FLAG_INVALID;
			*bits = 0;
			return;
		}
		*flags |= USC_FLAG_OVERFLOW | USC_FLAG_SATURATED;
		if (f->kind == USC_KIND_UINT)
			*bits = sign ? 0 : mask;
		else
			*bits = sign ? ((uint64_t)1 << (f->bits - 1))
				     : mask >> 1;
		return;
	}

	fi = usc__float_info(f->id);
	switch (what) {
	case USC__SPECIAL_NAN:
		if (f->nan != USC_NAN_NONE) {
			*bits = nan_of(f, fi, sign);
			return;
		}
		/*
		 * No NaN to give.  ml_dtypes (and so XLA's host conversions)
		 * return the zero whose sign bit is the complement of the
		 * NaN's; we do the same so that tables match bit for bit.
		 */
		*flags |= USC_FLAG_INVALID;
		*bits = signed_bits(fi, !sign, 0);
		return;
	case USC__SPECIAL_INF:
		if (!f->has_sign && sign) {
			*flags |= USC_FLAG_INVALID;
			*bits = fi->nan_bits;
			return;
		}
		if (f->inf == USC_INF_IEEE) {
			*bits = signed_bits(fi, sign, fi->inf_bits);
			return;
		}
		*flags |= USC_FLAG_OVERFLOW;
		*bits = overflow_result(f, fi, sign, &e, flags);
		if (usc_bits_is_nan(f->id, *bits))
			*flags |= USC_FLAG_INVALID;
		return;
	case USC__SPECIAL_ZERO:
		switch (f->zero) {
		case USC_ZERO_SIGNED:
			*bits = signed_bits(fi, sign, 0);
			return;
		case USC_ZERO_UNSIGNED:
			*bits = 0;
			return;
		case USC_ZERO_NONE:
			*flags |= USC_FLAG_INVALID;
			*bits = fi->nan_bits;
			return;
		}
	}
}

static void round_int(const usc_format *f, const usc__scaled *s,
		      const usc_rounding *r, uint64_t *bits, unsigned *flags)
{
	uint64_t mask = f->bits >= 64 ? ~(uint64_t)0
				      : ((uint64_t)1 << f->bits) - 1;
	uint64_t n = s->n, limit;
	bool huge = s->huge;

	if (f->kind == USC_KIND_PRED) {
		*bits = 1; /* any non-zero value is true */
		return;
	}
	if (s->frac || s->sticky) {
		*flags |= USC_FLAG_INEXACT;
		if (round_up(r, s->sign, n & 1, s->frac, s->sticky)) {
			n++;
			if (n == 0)
				huge = true;
		}
	}
	if (r->overflow == USC_OVF_WRAP) {
		/* Two's complement of the rounded integer, modulo 2^bits. */
		uint64_t v = s->sign ? (uint64_t)0 - n : n;

		if (huge)
			*flags |= USC_FLAG_OVERFLOW;
		*bits = v & mask;
		return;
	}
	if (f->kind == USC_KIND_UINT) {
		if (s->sign && (n != 0 || huge)) {
			*flags |= USC_FLAG_OVERFLOW | USC_FLAG_SATURATED;
			*bits = 0;
		} else if (huge || n > mask) {
			*flags |= USC_FLAG_OVERFLOW | USC_FLAG_SATURATED;
			*bits = mask;
		} else {
			*bits = n;
		}
		return;
	}
	/* Signed: the range is [-2^(b-1), 2^(b-1) - 1]. */
	limit = (uint64_t)1 << (f->bits - 1);
	if (s->sign) {
		if (huge || n > limit) {
			*flags |= USC_FLAG_OVERFLOW | USC_FLAG_SATURATED;
			n = limit;
		}
		*bits = ((uint64_t)0 - n) & mask;
	} else {
		if (huge || n > limit - 1) {
			*flags |= USC_FLAG_OVERFLOW | USC_FLAG_SATURATED;
			n = limit - 1;
		}
		*bits = n;
	}
}

void usc__round_scaled(const usc_format *f, const usc__scaled *s,
		       const usc_rounding *rr, uint64_t *bits, unsigned *flags)
{
	usc_rounding r = usc__effective_rounding(f, rr);
	const usc_float_info *fi;
	uint64_t n = s->n, implicit, e_field, m_field, top_e, max_m;
	bool inexact = s->frac != 0 || s->sticky;
	long q = s->q, biased;

	if (f->kind != USC_KIND_FLOAT) {
		round_int(f, s, &r, bits, flags);
		return;
	}
	fi = usc__float_info(f->id);
	if (s->sign && !f->has_sign) {
		*flags |= USC_FLAG_INVALID;
		*bits = fi->nan_bits;
		return;
	}
	if (inexact) {
		*flags |= USC_FLAG_INEXACT;
		if (round_up(&r, s->sign, n & 1, s->frac, s->sticky))
			n++;
	}
	implicit = (uint64_t)1 << f->man_bits;
	if (n == implicit << 1) { /* the carry reached the next binade */
		n = implicit;
		q++;
	}
	if (n == 0) {
		/* Rounded to zero: an underflow. */
		*flags |= USC_FLAG_UNDERFLOW;
		if (f->zero == USC_ZERO_NONE) {
			/* No zero: the smallest value is the nearest. */
			*bits = 0;
			return;
		}
		*bits = f->zero == USC_ZERO_SIGNED ? signed_bits(fi, s->sign, 0)
						   : 0;
		return;
	}
	if (n < implicit) {
		/*
		 * A subnormal result (tininess is detected after rounding,
		 * as on x86 and in ml_dtypes).
		 */
		if (inexact)
			*flags |= USC_FLAG_UNDERFLOW;
		if (r.flush_subnormals) {
			*flags |= USC_FLAG_FLUSHED | USC_FLAG_INEXACT;
			*bits = f->zero == USC_ZERO_SIGNED
					? signed_bits(fi, s->sign, 0)
					: 0;
			return;
		}
		*bits = signed_bits(fi, s->sign, n);
		return;
	}
	/* n * 2^q with n in [2^m, 2^(m+1)) has exponent q + m. */
	biased = q + f->man_bits + f->bias;
	top_e = fi->max_finite_bits >> f->man_bits;
	max_m = fi->max_finite_bits & (implicit - 1);
	m_field = n - implicit;
	if (biased > (long)top_e ||
	    (biased == (long)top_e && m_field > max_m)) {
		*flags |= USC_FLAG_OVERFLOW | USC_FLAG_INEXACT;
		if (toward_zero(&r, s->sign)) {
			*flags |= USC_FLAG_SATURATED;
			*bits = signed_bits(fi, s->sign, fi->max_finite_bits);
			return;
		}
		*bits = overflow_result(f, fi, s->sign, &r, flags);
		return;
	}
	e_field = (uint64_t)biased;
	*bits = signed_bits(fi, s->sign, (e_field << f->man_bits) | m_field);
}
