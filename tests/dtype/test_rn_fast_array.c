/*
 * The branch-free array rounding of the narrow float formats
 * (usc__rn_encode_array, src/dtype/rn_fast.h) against MPFR called
 * directly and against hand-derived codes.
 *
 * The expected code of a double d is found without the project's
 * encoders: MPFR rounds d to the format (precision man_bits + 1, the
 * exponent range of its subnormals and largest binade, mpfr_subnormalize,
 * the CORE-MATH way of emulating a format), and the code is the one whose
 * value, by the project's decoder, is that result with that sign (a
 * table of every code for the formats of at most 16 bits; the float's
 * own bits for f32).
 *
 * Every format the header covers: between every two neighbouring finite
 * values of the formats of at most 16 bits, the values, the midpoint (a
 * tie) and the doubles next to both, with both signs, in one array (so
 * that the vector loop and its remainder both run) that must come back
 * with no element left over; random doubles over f32's range and its
 * subnormals.  Then every kind of element the loop must leave to the
 * caller (a NaN, an infinity, the least double past the largest finite
 * value, a midpoint rounding to overflow), alone and in the middle of an
 * array of ordinary values whose codes must still be right.  Last, hex
 * floats at the boundaries of bf16 and f16 derived by hand.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mpfr.h>

#include "internal.h"
#include "dtype/rn_fast.h"

static const usc_dtype covered[] = {
	USC_F32,      USC_BF16,   USC_F16,      USC_F8E5M2,   USC_F8E4M3,
	USC_F8E4M3FN, USC_F8E3M4, USC_F6E2M3FN, USC_F6E3M2FN, USC_F4E2M1FN,
};

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * d rounded to nearest-even in format t by MPFR: precision p = man_bits
 * + 1; MPFR's exponent E (value = m 2^E, 1/2 <= m < 1) ranges from the
 * least subnormal's, emin - man_bits + 1, to the largest binade's,
 * emax + 1.  Only for |d| <= the largest finite value, so no overflow.
 */
static double by_mpfr(usc_dtype t, double d)
{
	usc_float_info fi;
	mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
	mpfr_t x;
	int inex;
	double r;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	mpfr_init2(x, fi.precision);
	assert_int_equal(mpfr_set_emin(fi.emin - (fi.precision - 1) + 1), 0);
	assert_int_equal(mpfr_set_emax(fi.emax + 1), 0);
	inex = mpfr_set_d(x, d, MPFR_RNDN);
	inex = mpfr_check_range(x, inex, MPFR_RNDN);
	(void)mpfr_subnormalize(x, inex, MPFR_RNDN);
	r = mpfr_get_d(x, MPFR_RNDN);
	mpfr_clear(x);
	mpfr_set_emin(old_min);
	mpfr_set_emax(old_max);
	/* A zero result keeps d's sign (MPFR's signed zeros). */
	return r;
}

/*
 * The codes of t by value: val[c] the decoder's value of code c for the
 * positive finite codes 0 .. npos - 1 (a prefix of the codes, in
 * increasing order of value: checked here, not assumed), sign the sign
 * bit's code.  Formats of at most 16 bits; f32 reads a float's bits.
 */
typedef struct code_table {
	usc_dtype t;
	size_t npos;
	uint64_t sign;
	double *val;
} code_table;

static void table_make(code_table *tab, usc_dtype t)
{
	int w = usc_format_of(t)->bits;
	usc_float_info fi;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	tab->t = t;
	tab->sign = fi.sign_mask;
	tab->npos = 0;
	tab->val = NULL;
	if (w > 16)
		return;
	tab->val = calloc((size_t)1 << w, sizeof(double));
	assert_non_null(tab->val);
	for (uint64_t c = 0; c < ((uint64_t)1 << (w - 1)); c++) {
		double v = 0;

		assert_int_equal(usc_decode_double(t, c, &v), USC_OK);
		if (!isfinite(v))
			break;
		assert_true(c == 0 || v > tab->val[c - 1]);
		tab->val[tab->npos++] = v;
	}
}

static uint64_t code_of(const code_table *tab, double v)
{
	double a = fabs(v);
	size_t lo = 0, hi;

	if (tab->t == USC_F32) {
		float f = (float)v; /* v is an f32 value: exact */
		uint32_t b;

		assert_true((double)f == v);
		memcpy(&b, &f, sizeof b);
		return b;
	}
	hi = tab->npos;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (tab->val[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	if (tab->val[lo] != a)
		fail_msg("%s: no code has the value %a",
			 usc_dtype_name(tab->t), v);
	return (signbit(v) ? tab->sign : 0) | lo;
}

/* Every d[i] in range encodes to MPFR's result, none is left over. */
static void check_array(const code_table *tab, const usc__rn_format *f,
			const double *d, size_t n)
{
	uint64_t *out = calloc(n ? n : 1, sizeof *out);

	assert_non_null(out);
	assert_int_equal(usc__rn_encode_array(f, d, n, out), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t want = code_of(tab, by_mpfr(tab->t, d[i]));

		if (out[i] != want)
			fail_msg("%s: %a encoded 0x%llx, MPFR's code 0x%llx",
				 usc_dtype_name(tab->t), d[i],
				 (unsigned long long)out[i],
				 (unsigned long long)want);
	}
	free(out);
}

static void push(double *d, size_t *n, double x)
{
	d[(*n)++] = x;
	d[(*n)++] = -x;
}

static void test_every_neighbour_pair(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof covered / sizeof *covered; k++) {
		usc_dtype t = covered[k];
		const usc__rn_format *f = usc__rn_format_of(t);
		code_table tab;
		double *d, prev = 0;
		size_t n = 0;

		assert_non_null(f);
		if (usc_format_of(t)->bits > 16)
			continue;
		table_make(&tab, t);
		/*
		 * At most twelve doubles per positive finite value: the value,
		 * its neighbours inside the range, and the midpoint below it
		 * with its neighbours, both signs.
		 */
		d = calloc(tab.npos * 12 + 8, sizeof *d);
		assert_non_null(d);
		for (size_t c = 0; c < tab.npos; c++) {
			double v = tab.val[c];

			push(d, &n, v);
			if (c > 0) {
				double mid = prev / 2 + v / 2;

				push(d, &n, nextafter(v, -INFINITY));
				push(d, &n, mid);
				push(d, &n, nextafter(mid, INFINITY));
				push(d, &n, nextafter(mid, -INFINITY));
			}
			/* The largest value's next double is past it. */
			if (c + 1 < tab.npos)
				push(d, &n, nextafter(v, INFINITY));
			prev = v;
		}
		check_array(&tab, f, d, n);
		/* An odd length and an offset: the loop's remainder. */
		check_array(&tab, f, d + 1, n - 2);
		free(d);
		free(tab.val);
	}
}

static void test_f32_random(void **state)
{
	const usc__rn_format *f = usc__rn_format_of(USC_F32);
	code_table tab = {USC_F32, 0, 0, NULL};
	enum { N = 20000 };
	static double d[N];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		uint64_t b = next();
		/* Exponents from f32's least subnormal's neighbourhood up. */
		int e = (int)(b % 300) - 170;
		double m = 1 + (double)(next() >> 11) * 0x1p-53;

		d[i] = ldexp((b >> 63) ? -m : m, e);
		if (!(fabs(d[i]) <= FLT_MAX))
			d[i] = FLT_MAX;
		/* Every eighth: an f32 midpoint, a tie, exactly. */
		if (i % 8 == 0) {
			float lo = (float)d[i];
			float hi = nextafterf(lo, INFINITY);

			if (isfinite(hi))
				d[i] = (double)lo / 2 + (double)hi / 2;
		}
	}
	check_array(&tab, f, d, N);
}

static void test_left_over(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof covered / sizeof *covered; k++) {
		usc_dtype t = covered[k];
		const usc__rn_format *f = usc__rn_format_of(t);
		const double rare[] = {NAN, -NAN, INFINITY, -INFINITY,
				       nextafter(f->max_finite, INFINITY),
				       -nextafter(f->max_finite, INFINITY),
				       DBL_MAX};
		code_table tab;
		double d[33];
		uint64_t out[33], one;

		table_make(&tab, t);
		for (size_t r = 0; r < sizeof rare / sizeof *rare; r++) {
			double x = rare[r];

			/* Alone: left over. */
			assert_int_not_equal(
				usc__rn_encode_array(f, &x, 1, &one), 0);
			/*
			 * In an array of ordinary values: left over, and the
			 * others' codes still MPFR's.
			 */
			for (size_t i = 0; i < 33; i++)
				d[i] = f->max_finite * (double)(i + 1) / 41 *
				       (i % 2 ? -1 : 1);
			d[17] = x;
			assert_int_not_equal(usc__rn_encode_array(f, d, 33, out),
					     0);
			for (size_t i = 0; i < 33; i++) {
				if (i == 17)
					continue;
				assert_int_equal(
					out[i],
					code_of(&tab, by_mpfr(t, d[i])));
			}
		}
		/* The largest finite value itself is not left over. */
		assert_int_equal(
			usc__rn_encode_array(f, &f->max_finite, 1, &one), 0);
		free(tab.val);
	}
}

/*
 * Hand-derived codes.  bf16 (8 bits of precision, f32's exponents):
 *   1 + 2^-8 is the midpoint of 1 (0x3f80, even) and 1 + 2^-7: 0x3f80;
 *   1 + 3 2^-8, of 0x3f81 and 0x3f82 (even): 0x3f82; -1.5: 0xbfc0;
 *   the largest finite (2 - 2^-7) 2^127 = 0x1.fep127: 0x7f7f;
 *   the least subnormal 2^-133: 0x0001; 2^-134, the midpoint of 0 (even)
 *   and 2^-133: 0x0000, and -2^-134: 0x8000; just above 2^-134: 0x0001;
 *   3 2^-134, the midpoint of 0x0001 and 0x0002 (even): 0x0002;
 *   the least normal 2^-126 less 2^-134, the midpoint of the largest
 *   subnormal 0x007f and 0x0080 (even): 0x0080.
 * f16 (11 bits, exponents -14 to 15):
 *   65504 = 0x1.ffcp15, the largest: 0x7bff;
 *   2^-24, the least subnormal: 0x0001; 2^-25 (a tie with 0): 0x0000;
 *   3 2^-25, the midpoint of 0x0001 and 0x0002: 0x0002;
 *   2^-14 - 2^-25, the midpoint of 0x03ff and 0x0400 (even): 0x0400;
 *   2^-14 - 2^-24, the largest subnormal: 0x03ff.
 */
static void test_hand_values(void **state)
{
	static const double bf_in[] = {
		0x1.01p0,  0x1.03p0,   -1.5,        0x1.fep127,
		0x1p-133,  0x1p-134,   -0x1p-134,   0x1.0000000000001p-134,
		0x3p-134,  0x1p-126 - 0x1p-134,
	};
	static const uint64_t bf_want[] = {
		0x3f80, 0x3f82, 0xbfc0, 0x7f7f, 0x0001,
		0x0000, 0x8000, 0x0001, 0x0002, 0x0080,
	};
	static const double h_in[] = {
		65504.0, 0x1p-24, 0x1p-25,
		0x3p-25, 0x1p-14 - 0x1p-25, 0x1p-14 - 0x1p-24,
	};
	static const uint64_t h_want[] = {
		0x7bff, 0x0001, 0x0000, 0x0002, 0x0400, 0x03ff,
	};
	uint64_t out[16];
	double over[] = {65520.0, 0x1.ffp127, 65519.0};

	(void)state;
	assert_int_equal(usc__rn_encode_array(usc__rn_format_of(USC_BF16),
					      bf_in, 10, out),
			 0);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(out[i], bf_want[i]);
	assert_int_equal(usc__rn_encode_array(usc__rn_format_of(USC_F16), h_in,
					      6, out),
			 0);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(out[i], h_want[i]);
	/*
	 * 65520 (f16) and 0x1.ffp127 (bf16) are the midpoints between the
	 * largest finite value and the next power of two: they round to
	 * overflow, which the loop leaves to the library's encoder.
	 */
	assert_int_not_equal(usc__rn_encode_array(usc__rn_format_of(USC_F16),
						  &over[0], 1, out),
			     0);
	assert_int_not_equal(usc__rn_encode_array(usc__rn_format_of(USC_BF16),
						  &over[1], 1, out),
			     0);
	/*
	 * 65519 rounds to the largest (it is below that midpoint), but any
	 * magnitude past the largest finite value is left over: the loop
	 * has no overflow rule to apply.
	 */
	assert_int_not_equal(usc__rn_encode_array(usc__rn_format_of(USC_F16),
						  &over[2], 1, out),
			     0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_neighbour_pair),
		cmocka_unit_test(test_f32_random),
		cmocka_unit_test(test_left_over),
		cmocka_unit_test(test_hand_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
