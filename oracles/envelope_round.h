/*
 * The double arithmetic of the envelope's fast path (envelope_fast.c) and
 * of its array loops (envelope_loops.c), in line: bounds rounded outward
 * without changing the rounding mode, the rounding of a double into a
 * narrower binary format on its encoding, and the window of k ulps.
 *
 * Every operation runs in the default round-to-nearest, whose result r of
 * an exact x is within half a spacing of x, so x lies in [next_down(r),
 * next_up(r)].  Where the rounding error is computed exactly (TwoSum for
 * a sum, an FMA for the error of a product and the remainder of a
 * quotient, both exact away from underflow), its sign says on which side
 * x lies and only that side is moved.
 */
#ifndef USC_ORACLES_ENVELOPE_ROUND_H
#define USC_ORACLES_ENVELOPE_ROUND_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ulpscope/dtype.h"

static inline double next_up(double x)
{
	uint64_t u;

	if (x != x || x == INFINITY)
		return x;
	if (x == 0)
		return 0x1p-1074;
	memcpy(&u, &x, sizeof u);
	u += x > 0 ? 1 : (uint64_t)-1;
	memcpy(&x, &u, sizeof x);
	return x;
}

static inline double next_down(double x)
{
	return -next_up(-x);
}

/* A lower (upper) bound of a + b: TwoSum's exact error gives the side. */
static inline double add_rd(double a, double b)
{
	double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);

	return e < 0 || !isfinite(e) ? next_down(s) : s;
}

static inline double add_ru(double a, double b)
{
	double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);

	return e > 0 || !isfinite(e) ? next_up(s) : s;
}

/*
 * The error of a product p = RN(a b) is exactly fma(a, b, -p) when it is
 * representable, which holds when |p| >= 2^-960 (the error is then far
 * above the subnormal range); otherwise both sides move.  The product
 * rounded up:
 */
static inline double mul_ru(double a, double b)
{
	double p = a * b;

	if (fabs(p) < 0x1p-960) {
		if (a == 0 || b == 0)
			return p;
		return next_up(p);
	}
	return fma(a, b, -p) > 0 ? next_up(p) : p;
}

/*
 * Both bounds of a b at once, *l rounded down and *h = mul_ru(a, b), from
 * one product and one FMA.
 */
static inline void mul_rdu(double a, double b, double *l, double *h)
{
	double p = a * b, e;

	if (fabs(p) < 0x1p-960) {
		if (a == 0 || b == 0) {
			*l = *h = p;
			return;
		}
		*l = next_down(p);
		*h = next_up(p);
		return;
	}
	e = fma(a, b, -p);
	*l = e < 0 ? next_down(p) : p;
	*h = e > 0 ? next_up(p) : p;
}

/*
 * The remainder a - q b of q = RN(a / b) is representable (and an FMA
 * computes it exactly) when nothing underflows: |q|, |a| and |b| are kept
 * within [2^-900, 2^900] here, else both sides move.  a / b = q + rem / b.
 */
static inline int div_side(double a, double b, double q)
{
	double rem;

	if (!(fabs(q) >= 0x1p-900 && fabs(q) <= 0x1p900 &&
	      fabs(a) >= 0x1p-900 && fabs(a) <= 0x1p900 &&
	      fabs(b) >= 0x1p-900 && fabs(b) <= 0x1p900))
		return 2;
	rem = fma(-q, b, a);
	if (rem == 0)
		return 0;
	return (rem > 0) == (b > 0) ? 1 : -1;
}

static inline double div_rd(double a, double b)
{
	double q = a / b;
	int side;

	if (a == 0)
		return q;
	side = div_side(a, b, q);
	return side == 1 || side == 0 ? q : next_down(q);
}

static inline double div_ru(double a, double b)
{
	double q = a / b;
	int side;

	if (a == 0)
		return q;
	side = div_side(a, b, q);
	return side == -1 || side == 0 ? q : next_up(q);
}

/* Both bounds of a / b at once: div_rd and div_ru from one quotient. */
static inline void div_rdu(double a, double b, double *l, double *h)
{
	double q = a / b;
	int side;

	if (a == 0) {
		*l = *h = q;
		return;
	}
	side = div_side(a, b, q);
	*l = side == 1 || side == 0 ? q : next_down(q);
	*h = side == -1 || side == 0 ? q : next_up(q);
}

/*
 * The hull of the four end products (or quotients) c_i op d_i, each
 * rounded outward: the smallest lower bound and the largest upper one.
 * The operands are finite, so no bound is a NaN and plain comparisons
 * choose as fmin and fmax would.
 */
static inline void hull4(bool divide, const double *c, const double *d,
			 double *lo, double *hi)
{
	double l, h;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (int i = 0; i < 4; i++) {
		if (divide)
			div_rdu(c[i], d[i], &l, &h);
		else
			mul_rdu(c[i], d[i], &l, &h);
		if (l < *lo)
			*lo = l;
		if (h > *hi)
			*hi = h;
	}
}

/*
 * x rounded to p bits (p < 53) on the double's encoding, in mode m: to
 * nearest-even, up or down.  Right for x whose result is a normal value
 * of the type (the caller checks the range): the dropped bits are below
 * the type's last place, and a carry moves into the exponent as it should.
 */
static inline double usc__env_round_bits(double x, int p, usc_round_mode m)
{
	uint64_t u, mag, sign, mask, half;
	int d = 53 - p;
	bool away;

	memcpy(&u, &x, sizeof u);
	sign = u & ((uint64_t)1 << 63);
	mag = u ^ sign;
	mask = ((uint64_t)1 << d) - 1;
	if (m == USC_RND_NEAREST_EVEN) {
		half = ((uint64_t)1 << (d - 1)) - 1 + ((mag >> d) & 1);
		mag = (mag + half) & ~mask;
	} else {
		away = (m == USC_RND_UP) == !sign;
		mag = ((away ? mag + mask : mag)) & ~mask;
	}
	u = mag | sign;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* ulp at x >= 0 of a format of precision p: 2^(max(E, emin) - (p - 1)). */
static inline double usc__env_ulp_d(int p, int emin, double x)
{
	int e = x > 0 ? ilogb(x) : emin;

	if (e < emin)
		e = emin;
	return ldexp(1.0, e - (p - 1));
}

/*
 * The ends [*l, *h] of the window of k ulps around [lo, hi] in a format
 * of precision p (add_within of envelope.c): u = k ulp at one step of
 * the format above max(|lo|, |hi|), the ulp of the largest magnitude being
 * the largest; *l = lo - u rounded down, *h = hi + u rounded up.
 */
static inline void usc__env_window_ends(int p, int emin, double lo, double hi,
					double k, double *l, double *h)
{
	double m = fmax(fabs(lo), fabs(hi)), u;

	u = ldexp(m, 1 - p);
	m = add_ru(m, next_up(u));
	u = mul_ru(usc__env_ulp_d(p, emin, m), k);
	*l = add_rd(lo, -u);
	*h = add_ru(hi, u);
}

/*
 * The product of the finite intervals [xl, xh] and [yl, yh], rounded
 * outward into [*lo, *hi]: two points from one product; two sets of one
 * sign each, no end zero, from their two extreme end products (the exact
 * products order by sign, and the outward bounds are monotone in them:
 * equal products give equal bounds, so these are the ones hull4 would
 * pick); anything else from all four.
 */
static inline void usc__env_mul_range(double xl, double xh, double yl,
				      double yh, double *lo, double *hi)
{
	double c[4] = {xl, xl, xh, xh};
	double d[4] = {yl, yh, yl, yh};
	double l, h;

	if (xl == xh && yl == yh) {
		mul_rdu(xl, yl, lo, hi);
	} else if ((xl > 0 || xh < 0) && (yl > 0 || yh < 0)) {
		int il = xl > 0 ? (yl > 0 ? 0 : 2) : (yl > 0 ? 1 : 3);
		int ih = 3 - il;

		mul_rdu(c[il], d[il], lo, &h);
		mul_rdu(c[ih], d[ih], &l, hi);
	} else {
		hull4(false, c, d, lo, hi);
	}
}

/* f(x) widened down (sign -1) or up (+1) by the libm bound of k ulps. */
static inline double usc__env_fn_bound(double f, double k, int side)
{
	double slack = fabs(f) * ((k + 1) * 0x1p-52 * (1 + 0x1p-40)) +
		       0x1p-1060;

	return side < 0 ? next_down(f - slack) : next_up(f + slack);
}

/*
 * The quotient of the finite interval [xl, xh] by [yl, yh] (which does
 * not hold 0), rounded outward into [*lo, *hi]: two points from one
 * quotient, anything else from the four end quotients.
 */
static inline void usc__env_div_range(double xl, double xh, double yl,
				      double yh, double *lo, double *hi)
{
	double c[4] = {xl, xl, xh, xh};
	double d[4] = {yl, yh, yl, yh};

	if (xl == xh && yl == yh)
		div_rdu(xl, yl, lo, hi);
	else
		hull4(true, c, d, lo, hi);
}

#endif /* USC_ORACLES_ENVELOPE_ROUND_H */
