/*
 * Interval functions MPFI lacks: logistic, erf, rsqrt, power, and the
 * generic enclosure of a monotone function.
 *
 * Every function here builds an enclosure out of MPFR's directed
 * roundings: MPFR returns, for each function it offers, the correctly
 * rounded value in the requested direction (MPFR manual, "Rounding"), so
 * f(x) rounded down is a lower bound of the exact f(x) and f(x) rounded up
 * an upper bound.  A function monotone on an interval takes its extremes
 * at the endpoints; a composite (logistic) rounds each step in the
 * direction that keeps the final bound on the safe side.  Infinite
 * endpoints mean "a finite real beyond MPFR's exponent range"; MPFR's
 * values at +-Inf are the limits there, so the bounds stay sound.
 */
#include "internal.h"

#include <stdbool.h>

#include <mpfr.h>
#include <mpfi.h>

#include "oracle.h"

/* MPFI's own convention: a zero left endpoint is +0, a zero right one -0. */
static void normalize_zeros(mpfi_ptr y)
{
	if (mpfr_zero_p(&y->left))
		mpfr_set_zero(&y->left, 1);
	if (mpfr_zero_p(&y->right))
		mpfr_set_zero(&y->right, -1);
}

void usc__oracle_fn_monotone(mpfi_ptr y, mpfi_srcptr x,
			     int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t),
			     bool up)
{
	if (up) {
		f(&y->left, &x->left, MPFR_RNDD);
		f(&y->right, &x->right, MPFR_RNDU);
	} else {
		f(&y->left, &x->right, MPFR_RNDD);
		f(&y->right, &x->left, MPFR_RNDU);
	}
	normalize_zeros(y);
}

void usc__oracle_fn_erf(mpfi_ptr y, mpfi_srcptr x)
{
	/* erf is increasing on the whole real line. */
	usc__oracle_fn_monotone(y, x, mpfr_erf, true);
}

void usc__oracle_fn_rsqrt(mpfi_ptr y, mpfi_srcptr x)
{
	/* 1/sqrt is decreasing on (0, +inf); MPFR's rec_sqrt(+Inf) is +0. */
	usc__oracle_fn_monotone(y, x, mpfr_rec_sqrt, false);
}

/*
 * logistic(a) = 1 / (1 + exp(-a)) rounded in direction r (RNDD or RNDU).
 * To bound the quotient below, its denominator is bounded above, so
 * exp(-a) and the sum round up; and the other way round for an upper
 * bound.  Negation is exact.
 */
static void logistic_dir(mpfr_ptr y, mpfr_srcptr a, mpfr_rnd_t r)
{
	mpfr_rnd_t inner = r == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD;
	mpfr_t t;

	mpfr_t na;

	mpfr_init2(t, mpfr_get_prec(y) + 8);
	mpfr_init2(na, mpfr_get_prec(a));
	mpfr_neg(na, a, MPFR_RNDN);
	mpfr_exp(t, na, inner);
	mpfr_clear(na);
	mpfr_add_ui(t, t, 1, inner);
	mpfr_ui_div(y, 1, t, r);
	mpfr_clear(t);
}

void usc__oracle_fn_logistic(mpfi_ptr y, mpfi_srcptr x)
{
	/* logistic is increasing: bound each endpoint on its safe side. */
	logistic_dir(&y->left, &x->left, MPFR_RNDD);
	logistic_dir(&y->right, &x->right, MPFR_RNDU);
	normalize_zeros(y);
}

/* ------------------------------------------------------------- power */

/* The corners' minimum and maximum of x^e over a box, or false on NaN. */
static bool pow_corners(mpfi_ptr y, mpfi_srcptr x, mpfi_srcptr e)
{
	mpfr_srcptr xs[2] = {&x->left, &x->right};
	mpfr_srcptr es[2] = {&e->left, &e->right};
	mpfr_t lo, hi;
	bool ok = true;
	int i, j;

	mpfr_init2(lo, mpfi_get_prec(y));
	mpfr_init2(hi, mpfi_get_prec(y));
	mpfr_set_inf(&y->left, 1);
	mpfr_set_inf(&y->right, -1);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			mpfr_pow(lo, xs[i], es[j], MPFR_RNDD);
			mpfr_pow(hi, xs[i], es[j], MPFR_RNDU);
			if (mpfr_nan_p(lo) || mpfr_nan_p(hi))
				ok = false;
			else {
				if (mpfr_less_p(lo, &y->left))
					mpfr_set(&y->left, lo, MPFR_RNDD);
				if (mpfr_greater_p(hi, &y->right))
					mpfr_set(&y->right, hi, MPFR_RNDU);
			}
		}
	mpfr_clears(lo, hi, (mpfr_ptr)0);
	normalize_zeros(y);
	return ok;
}

/* Whether the closed interval e holds no integer. */
static bool no_integer(mpfi_srcptr e)
{
	mpfr_t c, f;
	bool r;

	if (!mpfr_number_p(&e->left) || !mpfr_number_p(&e->right))
		return false;
	mpfr_init2(c, mpfr_get_prec(&e->left));
	mpfr_init2(f, mpfr_get_prec(&e->right));
	mpfr_ceil(c, &e->left);
	mpfr_floor(f, &e->right);
	r = mpfr_greater_p(c, f);
	mpfr_clears(c, f, (mpfr_ptr)0);
	return r;
}

void usc__oracle_fn_pow(mpfi_ptr y, mpfi_srcptr x, mpfi_srcptr e,
			int *status)
{
	bool e_point = mpfr_equal_p(&e->left, &e->right);

	*status = USC__ORC_UNDECIDED;
	/*
	 * x > 0: x^e = exp(e log x) and e log x is bilinear in (e, log x),
	 * so over a box its extremes sit at the corners, and exp is
	 * increasing.  x >= 0 with e > 0 (or e = 0) is continuous up to the
	 * edge x = 0, where 0^e = 0 (or 1), and the same argument holds by
	 * continuity.
	 */
	if (mpfr_sgn(&x->left) > 0 ||
	    (mpfr_sgn(&x->left) == 0 &&
	     (mpfr_sgn(&e->left) > 0 || (e_point && mpfr_zero_p(&e->left))))) {
		if (pow_corners(y, x, e))
			*status = 0;
		return;
	}
	/*
	 * x reaches below 0: only integer exponents give reals.  For a point
	 * integer n, x^n is monotone on each side of 0, so away from 0 the
	 * endpoints bound it; across 0 an odd positive n is still
	 * increasing, an even positive n has its minimum 0 at 0, and a
	 * negative n has a pole.
	 */
	if (e_point && mpfr_integer_p(&e->left)) {
		bool cross = mpfr_sgn(&x->left) <= 0 && mpfr_sgn(&x->right) >= 0;
		mpfr_t half;
		bool odd;

		if (mpfr_zero_p(&e->left)) {
			mpfi_set_ui(y, 1);
			*status = 0;
			return;
		}
		mpfr_init2(half, mpfr_get_prec(&e->left) + 1);
		mpfr_div_2ui(half, &e->left, 1, MPFR_RNDN);
		odd = !mpfr_integer_p(half);
		mpfr_clear(half);
		if (cross && mpfr_sgn(&e->left) < 0)
			return;
		if (cross && !odd) {
			/* [0, max(|lo|, |hi|)^n]: the corners of |x|. */
			mpfi_t ax;

			mpfi_init2(ax, mpfi_get_prec(x));
			mpfi_abs(ax, x);
			if (pow_corners(y, ax, e))
				*status = 0;
			mpfr_set_zero(&y->left, 1);
			mpfi_clear(ax);
			return;
		}
		if (pow_corners(y, x, e))
			*status = 0;
		return;
	}
	/* Wholly negative x with no integer exponent in reach: NaN. */
	if (mpfr_sgn(&x->right) < 0 && no_integer(e))
		*status = USC__ORC_NAN;
}
