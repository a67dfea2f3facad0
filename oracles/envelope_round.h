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

#include "fp_step.h"

/*
 * In line always, in every caller: the array loops are compiled for two
 * instruction sets (envelope_loops.c), and a helper the compiler leaves
 * out of line runs in the baseline one, its FMA a call into libm.
 */
#if defined(__GNUC__)
#define ENV_INLINE static inline __attribute__((always_inline))
#else
#define ENV_INLINE static inline
#endif

/*
 * a when c, else b, chosen on the encodings: no branch, so that the array
 * loops, whose conditions follow the data (the sign of a rounding
 * error), neither mispredict nor stop the vectorizer.
 */
ENV_INLINE double pick(bool c, double a, double b)
{
	uint64_t ua, ub, m = -(uint64_t)c;

	memcpy(&ua, &a, sizeof ua);
	memcpy(&ub, &b, sizeof ub);
	ua = (ua & m) | (ub & ~m);
	memcpy(&a, &ua, sizeof a);
	return a;
}

/* A lower (upper) bound of a + b: TwoSum's exact error gives the side. */
ENV_INLINE double add_rd(double a, double b)
{
	double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);

	return pick(e < 0 || !isfinite(e), next_down(s), s);
}

ENV_INLINE double add_ru(double a, double b)
{
	double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);

	return pick(e > 0 || !isfinite(e), next_up(s), s);
}

/*
 * The error of a product p = RN(a b) is exactly fma(a, b, -p) when it is
 * representable, which holds when |p| >= 2^-960 (the error is then far
 * above the subnormal range); otherwise both sides move, unless a factor
 * is 0 (the product is then exact).  Both bounds of a b at once, *l
 * rounded down and *h up, from one product and one FMA:
 */
ENV_INLINE void mul_rdu(double a, double b, double *l, double *h)
{
	double p = a * b, e = fma(a, b, -p);
	bool tiny = fabs(p) < 0x1p-960, zero = a == 0 || b == 0;

	*l = pick(tiny ? !zero : e < 0, next_down(p), p);
	*h = pick(tiny ? !zero : e > 0, next_up(p), p);
}

/* The product rounded up. */
ENV_INLINE double mul_ru(double a, double b)
{
	double l, h;

	mul_rdu(a, b, &l, &h);
	return h;
}

/*
 * Both bounds of a / b at once, from one quotient q = RN(a / b).  The
 * remainder a - q b is representable (and an FMA computes it exactly)
 * when nothing underflows: |q|, |a| and |b| are kept within [2^-900,
 * 2^900] here, else both sides move.  a / b = q + rem / b, so the sign of
 * rem / b says on which side of q the quotient lies; 0 / b is exact.
 */
ENV_INLINE void div_rdu(double a, double b, double *l, double *h)
{
	double q = a / b, rem = fma(-q, b, a);
	bool in = fabs(q) >= 0x1p-900 && fabs(q) <= 0x1p900 &&
		  fabs(a) >= 0x1p-900 && fabs(a) <= 0x1p900 &&
		  fabs(b) >= 0x1p-900 && fabs(b) <= 0x1p900;
	bool above = (rem > 0) == (b > 0);

	*l = pick(a != 0 && (!in || (rem != 0 && !above)), next_down(q), q);
	*h = pick(a != 0 && (!in || (rem != 0 && above)), next_up(q), q);
}

ENV_INLINE double div_rd(double a, double b)
{
	double l, h;

	div_rdu(a, b, &l, &h);
	return l;
}

ENV_INLINE double div_ru(double a, double b)
{
	double l, h;

	div_rdu(a, b, &l, &h);
	return h;
}

/*
 * The hull of the four end products (or quotients) c_i op d_i, each
 * rounded outward: the smallest lower bound and the largest upper one.
 * The operands are finite, so no bound is a NaN and plain comparisons
 * choose as fmin and fmax would.
 */
ENV_INLINE void hull4(bool divide, const double *c, const double *d,
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
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
	}
}

/*
 * x rounded to p bits (p < 53) on the double's encoding, in mode m: to
 * nearest-even, up or down.  Right for x whose result is a normal value
 * of the type (the caller checks the range): the dropped bits are below
 * the type's last place, and a carry moves into the exponent as it should.
 */
ENV_INLINE double usc__env_round_bits(double x, int p, usc_round_mode m)
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

/*
 * ulp at x >= 0 of a format of precision p: 2^(max(E, emin) - (p - 1)),
 * E the exponent of x read from its encoding (ilogb for a normal x; a
 * subnormal double's is below every emin here and is clamped; +Inf gives
 * +Inf).
 */
ENV_INLINE double usc__env_ulp_d(int p, int emin, double x)
{
	uint64_t u;
	int e;

	memcpy(&u, &x, sizeof u);
	e = x > 0 ? (int)((u >> 52) & 0x7ff) - 1023 : emin;
	if (e < emin)
		e = emin;
	if (e > 1023)
		return INFINITY;
	e -= p - 1;
	if (e < -1022)
		return ldexp(1.0, e);
	u = (uint64_t)(e + 1023) << 52;
	memcpy(&x, &u, sizeof x);
	return x;
}

/*
 * The ends [*l, *h] of the window of k ulps around [lo, hi] in a format
 * of precision p (add_within of envelope.c): u = k ulp at one step of
 * the format above max(|lo|, |hi|), the ulp of the largest magnitude being
 * the largest; *l = lo - u rounded down, *h = hi + u rounded up.
 */
ENV_INLINE void usc__env_window_ends(int p, int emin, double lo, double hi,
					double k, double *l, double *h)
{
	double m = fmax(fabs(lo), fabs(hi)), u;

	/* m 2^(1 - p), rounded as ldexp rounds it: 2^(1 - p) is exact. */
	u = m * usc__env_ulp_d(p, -1022, 1.0);
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
ENV_INLINE void usc__env_mul_range(double xl, double xh, double yl,
				      double yh, double *lo, double *hi)
{
	double c[4] = {xl, xl, xh, xh};
	double d[4] = {yl, yh, yl, yh};
	double l, h;

	/*
	 * The signs pick the two ends by index, not by branches: they follow
	 * the data.  Two points of one sign each take this way too, both
	 * products then being the one product.
	 */
	if (((xl > 0) | (xh < 0)) & ((yl > 0) | (yh < 0))) {
		int il = 2 * !(yl > 0) + !(xl > 0);
		int ih = 3 - il;

		mul_rdu(c[il], d[il], lo, &h);
		mul_rdu(c[ih], d[ih], &l, hi);
	} else if (xl == xh && yl == yh) {
		mul_rdu(xl, yl, lo, hi);
	} else {
		hull4(false, c, d, lo, hi);
	}
}

/* f(x) widened down (sign -1) or up (+1) by the libm bound of k ulps. */
ENV_INLINE double usc__env_fn_bound(double f, double k, int side)
{
	double slack = fabs(f) * ((k + 1) * 0x1p-52 * (1 + 0x1p-40)) +
		       0x1p-1060;

	return side < 0 ? next_down(f - slack) : next_up(f + slack);
}

/*
 * The quotient of the finite interval [xl, xh] by [yl, yh] (which does
 * not hold 0), rounded outward into [*lo, *hi].  A dividend of one sign
 * (no end zero) from two end quotients: x / y is monotone in each operand
 * on such a box, so the smallest exact quotient is at x's end xl when
 * y > 0 (xh when y < 0) and y's end yh when x > 0 (yl when x < 0), the
 * largest at the opposite ends; the bounds div_rdu gives are the
 * quotient rounded down and up (monotone in it) wherever its operands
 * lie in its range, and moved outward one step beyond it, so they are
 * never inside the exact hull.  Two points of one sign take this way too
 * (both quotients are then the one quotient); other points one quotient,
 * anything else the four end quotients.
 */
ENV_INLINE void usc__env_div_range(double xl, double xh, double yl,
				      double yh, double *lo, double *hi)
{
	double c[4] = {xl, xl, xh, xh};
	double d[4] = {yl, yh, yl, yh};
	double l, h;

	if ((xl > 0) | (xh < 0)) {
		int il = 2 * !(yl > 0) + (xl > 0);
		int ih = 3 - il;

		div_rdu(c[il], d[il], lo, &h);
		div_rdu(c[ih], d[ih], &l, hi);
	} else if (xl == xh && yl == yh) {
		div_rdu(xl, yl, lo, hi);
	} else {
		hull4(true, c, d, lo, hi);
	}
}

#endif /* USC_ORACLES_ENVELOPE_ROUND_H */
