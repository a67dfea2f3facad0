/*
 * The outward-rounded double arithmetic of oracles/envelope_round.h,
 * which the fast envelope's per-element code and its array loops share,
 * against MPFR's directed roundings and hand-derived values:
 *
 *   - next_up and next_down on the encoding, without branches: the
 *     zeros of both signs, the smallest subnormal, the largest finite
 *     value, the infinities, one and NaN (hex floats worked out by hand);
 *   - the ulp of a format read from the exponent field: normal values,
 *     the clamp at emin for small values, zero and subnormal doubles, the
 *     subnormal ulp of binary64 and +Inf;
 *   - add_rd / add_ru, mul_rdu and div_rdu on random doubles of every
 *     binade (the underflow and far ranges where both sides move among
 *     them): each bound lies on its side of the exact value (MPFR at 53
 *     bits rounded down and up is the tightest such double), and equals
 *     it wherever the rounding error is decided exactly;
 *   - the product and quotient of intervals of every sign combination
 *     (one sign each, a zero end, across zero, points): the bounds hold
 *     every exact end product or quotient, and where the operands lie in
 *     the exact range of the error terms they are the tightest doubles;
 *   - the window of k ulps, whose scaling by 2^(1 - p) is a product now
 *     and not ldexp: the same doubles as ldexp gives, subnormal results
 *     included.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <mpfr.h>

#include "oracles/envelope_round.h"

#define TIER_TEST_SEED 0x9e3779b97f4a7c15ull
#include "tier/tier_test_rng.h"

/* a and b the same double, bit for bit (the sign of a zero counts). */
static void assert_same(double a, double b)
{
	uint64_t ua, ub;

	memcpy(&ua, &a, sizeof ua);
	memcpy(&ub, &b, sizeof ub);
	if (ua != ub) {
		print_error("%a (%#llx) != %a (%#llx)\n", a,
			    (unsigned long long)ua, b, (unsigned long long)ub);
		fail();
	}
}

static void test_next(void **state)
{
	(void)state;
	assert_same(next_up(0.0), 0x1p-1074);
	assert_same(next_up(-0.0), 0x1p-1074);
	assert_same(next_down(0.0), -0x1p-1074);
	assert_same(next_down(-0.0), -0x1p-1074);
	assert_same(next_up(-0x1p-1074), -0.0);
	assert_same(next_down(0x1p-1074), 0.0);
	assert_same(next_up(1.0), 0x1.0000000000001p+0);
	assert_same(next_down(1.0), 0x1.fffffffffffffp-1);
	assert_same(next_up(-1.0), -0x1.fffffffffffffp-1);
	/* The largest subnormal, 0x0.fffffffffffffp-1022. */
	assert_same(next_up(0x1.ffffffffffffep-1023), 0x1p-1022);
	assert_same(next_up(0x1.fffffffffffffp+1023), INFINITY);
	assert_same(next_down(-0x1.fffffffffffffp+1023), -INFINITY);
	assert_same(next_up(INFINITY), INFINITY);
	assert_same(next_down(-INFINITY), -INFINITY);
	assert_same(next_up(-INFINITY), -0x1.fffffffffffffp+1023);
	assert_same(next_down(INFINITY), 0x1.fffffffffffffp+1023);
	assert_true(isnan(next_up(NAN)));
	assert_true(isnan(next_down(NAN)));
}

static void test_ulp(void **state)
{
	(void)state;
	/* f32: p = 24, emin = -126. */
	assert_same(usc__env_ulp_d(24, -126, 1.0), 0x1p-23);
	assert_same(usc__env_ulp_d(24, -126, 0x1.fffffep+127), 0x1p+104);
	assert_same(usc__env_ulp_d(24, -126, 0x1p-130), 0x1p-149);
	assert_same(usc__env_ulp_d(24, -126, 0.0), 0x1p-149);
	assert_same(usc__env_ulp_d(24, -126, 0x1p-1074), 0x1p-149);
	assert_same(usc__env_ulp_d(24, -126, INFINITY), INFINITY);
	/* f16: 65504 = 0x1.ffcp+15, ulp 2^(15 - 10). */
	assert_same(usc__env_ulp_d(11, -14, 65504.0), 32.0);
	/* bf16 below its smallest normal: the clamp. */
	assert_same(usc__env_ulp_d(8, -126, 0x1p-133), 0x1p-133);
	/* binary64 itself: the ulp of its smallest values is subnormal. */
	assert_same(usc__env_ulp_d(53, -1022, 0x1p-1060), 0x1p-1074);
	assert_same(usc__env_ulp_d(53, -1022, 1.5), 0x1p-52);
}

/* A random double of any binade and sign, zeros now and then. */
static double any_double(void)
{
	uint64_t k = rnd() % 16;
	int e;

	if (k == 0)
		return rnd() & 1 ? 0.0 : -0.0;
	if (k < 4)
		e = -1074 + (int)(rnd() % 160); /* subnormals, underflow */
	else if (k < 6)
		e = 860 + (int)(rnd() % 164); /* beyond 2^900 */
	else
		e = -150 + (int)(rnd() % 300); /* where floats live */
	return (rnd() & 1 ? -1 : 1) * ldexp(1 + unif(), e);
}

/*
 * The double bounds of the exact x: *d rounded down and *u up (53 bits,
 * the double's exponent range, subnormals included).
 */
static void directed(mpfr_t x, double *d, double *u)
{
	*d = mpfr_get_d(x, MPFR_RNDD);
	*u = mpfr_get_d(x, MPFR_RNDU);
}

/*
 * The double bounds of a / b: the quotient rounded down (up) at 2200
 * bits, then to a double the same way (two roundings in one direction
 * are that rounding of the exact quotient).
 */
static void quotient(mpfr_t x, mpfr_t y, mpfr_t r, double *d, double *u)
{
	mpfr_div(r, x, y, MPFR_RNDD);
	*d = mpfr_get_d(r, MPFR_RNDD);
	mpfr_div(r, x, y, MPFR_RNDU);
	*u = mpfr_get_d(r, MPFR_RNDU);
}

/*
 * l and h bound a value whose tightest double bounds are d and u on
 * their sides, at most one step outside them; exactly them when tight.
 */
static void check_du(double d, double u, double l, double h, bool tight,
		     const char *what, double a, double b)
{
	if (!(l <= d && h >= u && l >= next_down(d) && h <= next_up(u)) ||
	    (tight && (l != d || h != u))) {
		print_error("%s(%a, %a): [%a, %a], tightest [%a, %a]\n", what,
			    a, b, l, h, d, u);
		fail();
	}
}

/* check_du for the exact x. */
static void check_bounds(mpfr_t x, double l, double h, bool tight,
			 const char *what, double a, double b)
{
	double d, u;

	directed(x, &d, &u);
	check_du(d, u, l, h, tight, what, a, b);
}

static void test_ops(void **state)
{
	mpfr_t x, y, r;

	(void)state;
	mpfr_inits2(2200, x, y, r, (mpfr_ptr)0);
	for (int i = 0; i < 200000; i++) {
		double a = any_double(), b = any_double(), l, h;
		double p, q, dq, uq;
		bool in;

		mpfr_set_d(x, a, MPFR_RNDN);
		mpfr_set_d(y, b, MPFR_RNDN);
		/* Sums: exact in 2200 bits. */
		mpfr_add(r, x, y, MPFR_RNDN);
		if (isfinite(a + b))
			check_bounds(r, add_rd(a, b), add_ru(a, b), true,
				     "add", a, b);
		/* Products: exact in 2200 bits. */
		mpfr_mul(r, x, y, MPFR_RNDN);
		p = a * b;
		if (isfinite(p)) {
			mul_rdu(a, b, &l, &h);
			check_bounds(r, l, h,
				     fabs(p) >= 0x1p-960 || a == 0 || b == 0,
				     "mul", a, b);
			assert_same(mul_ru(a, b), h);
		}
		/* Quotients: 2200 bits rounded once more by get_d. */
		if (b == 0)
			continue;
		q = a / b;
		if (!isfinite(q))
			continue;
		div_rdu(a, b, &l, &h);
		in = a == 0 ||
		     (fabs(q) >= 0x1p-900 && fabs(q) <= 0x1p900 &&
		      fabs(a) >= 0x1p-900 && fabs(a) <= 0x1p900 &&
		      fabs(b) >= 0x1p-900 && fabs(b) <= 0x1p900);
		quotient(x, y, r, &dq, &uq);
		check_du(dq, uq, l, h, in, "div", a, b);
		assert_same(div_rd(a, b), l);
		assert_same(div_ru(a, b), h);
	}
	mpfr_clears(x, y, r, (mpfr_ptr)0);
}

/* A random interval end of f32's range: zero, small or large. */
static double end(void)
{
	if (rnd() % 8 == 0)
		return 0;
	return (rnd() & 1 ? -1 : 1) *
	       ldexp(1 + unif(), -149 + (int)(rnd() % 277));
}

/*
 * The product (divide false) or quotient of [xl, xh] and [yl, yh]: the
 * bounds hold every exact end value, and are the tightest doubles of the
 * extreme one (operands of f32's range keep every error term exact).
 */
static void check_range(bool divide, double xl, double xh, double yl,
			double yh)
{
	double c[4] = {xl, xl, xh, xh}, d[4] = {yl, yh, yl, yh};
	double lo, hi, mn = INFINITY, mx = -INFINITY;
	mpfr_t x, y, r;

	mpfr_inits2(2200, x, y, r, (mpfr_ptr)0);
	if (divide)
		usc__env_div_range(xl, xh, yl, yh, &lo, &hi);
	else
		usc__env_mul_range(xl, xh, yl, yh, &lo, &hi);
	for (int k = 0; k < 4; k++) {
		double dn, up;

		mpfr_set_d(x, c[k], MPFR_RNDN);
		mpfr_set_d(y, d[k], MPFR_RNDN);
		if (divide) {
			quotient(x, y, r, &dn, &up);
		} else {
			mpfr_mul(r, x, y, MPFR_RNDN);
			directed(r, &dn, &up);
		}
		mn = dn < mn ? dn : mn;
		mx = up > mx ? up : mx;
	}
	if (lo != mn || hi != mx) {
		print_error("%s [%a, %a] by [%a, %a]: [%a, %a], tightest "
			    "[%a, %a]\n",
			    divide ? "div" : "mul", xl, xh, yl, yh, lo, hi, mn,
			    mx);
		fail();
	}
	mpfr_clears(x, y, r, (mpfr_ptr)0);
}

static void test_ranges(void **state)
{
	(void)state;
	for (int i = 0; i < 100000; i++) {
		double a = end(), b = end(), u = end(), v = end();
		double xl = a < b ? a : b, xh = a < b ? b : a;
		double yl = u < v ? u : v, yh = u < v ? v : u;

		if (rnd() % 4 == 0)
			xh = xl;
		if (rnd() % 4 == 0)
			yh = yl;
		check_range(false, xl, xh, yl, yh);
		/* A divisor that does not hold 0. */
		if (yl > 0 || yh < 0)
			check_range(true, xl, xh, yl, yh);
	}
	/* Hand-picked boxes: one sign each, every combination. */
	check_range(true, 1, 3, 2, 4);
	check_range(true, -3, -1, 2, 4);
	check_range(true, 1, 3, -4, -2);
	check_range(true, -3, -1, -4, -2);
	check_range(true, 0x1p-149, 0x1.fffffep+127, 0x1p-149, 3);
	check_range(false, -3, -1, 2, 4);
	check_range(false, 1, 3, -4, -2);
	check_range(false, -3, 0, -4, -2);
}

/* The window's ends with the scaling of the former code: ldexp. */
static void window_ldexp(int p, int emin, double lo, double hi, double k,
			 double *l, double *h)
{
	double m = fmax(fabs(lo), fabs(hi)), u;

	u = ldexp(m, 1 - p);
	m = add_ru(m, next_up(u));
	u = mul_ru(usc__env_ulp_d(p, emin, m), k);
	*l = add_rd(lo, -u);
	*h = add_ru(hi, u);
}

static void test_window(void **state)
{
	static const int ps[][2] = {{24, -126}, {8, -126}, {11, -14},
				    {53, -1022}};

	(void)state;
	for (int i = 0; i < 100000; i++) {
		const int *f = ps[rnd() % 4];
		double a = any_double(), w = fabs(a) * unif();
		double k = 0.5 + (double)(rnd() % 8) / 2, l1, h1, l2, h2;

		if (!isfinite(a + w))
			continue;
		usc__env_window_ends(f[0], f[1], a, a + w, k, &l1, &h1);
		window_ldexp(f[0], f[1], a, a + w, k, &l2, &h2);
		assert_same(l1, l2);
		assert_same(h1, h2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_ulp),
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
