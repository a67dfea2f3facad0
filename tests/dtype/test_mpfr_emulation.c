/*
 * usc_encode_mpfr against MPFR's own emulation of each format, with no
 * ml_dtypes anywhere: the expected value of rounding an exact x is what
 * MPFR gives at the format's precision, with the exponent range narrowed
 * to the format's (mpfr_set_emin/emax, mpfr_check_range) and subnormals
 * emulated by mpfr_subnormalize, the method of CORE-MATH's *_mpfr.c twins.
 * The format parameters are typed in below from the formats' published
 * definitions (IEEE 754-2019 table 3.5, the OCP 8-bit and MX v1.0
 * specifications, the ml_dtypes README), not read from ulpscope.
 *
 * Inputs are exact values far finer than any format: 200-bit random
 * significands over the whole exponent range, from below half the
 * smallest subnormal to past the largest finite value, plus exact ties
 * and exactly representable values, with both signs.  Every rounding mode
 * but stochastic (test_stochastic.c) is tried.  Overflow uses USC_OVF_INF
 * where the format has Inf (IEEE semantics: directed rounding toward zero
 * gives the largest finite value) and USC_OVF_SATURATE elsewhere.
 *
 * USC_TEST_SCALE (a positive integer) multiplies the sample count.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gmp.h>
#include <mpfr.h>

#include "ulpscope/dtype.h"
#include "ulpscope/dtype_mpfr.h"
#include "test_util.h"

#define SAMPLES_PER_MODE 1500
#define SHOW_MAX 8
#define XPREC 200

/*
 * p: precision (implicit bit included); emin, emax: unbiased exponents of
 * the smallest normal and of the largest finite binade; max: the largest
 * finite value.  e8m0 has neither zero, sign nor subnormals.
 */
struct spec {
	usc_dtype t;
	const char *name;
	int p, emin, emax;
	double max;
	bool inf, subnormals, signed_zero, sign;
};

static const struct spec specs[] = {
	/* IEEE 754 binary16, binary32, binary64; bfloat16. */
	{USC_F16, "f16", 11, -14, 15, 0x1.ffcp+15, true, true, true, true},
	{USC_BF16, "bf16", 8, -126, 127, 0x1.fep+127, true, true, true, true},
	{USC_F32, "f32", 24, -126, 127, 0x1.fffffep+127, true, true, true,
	 true},
	{USC_F64, "f64", 53, -1022, 1023, 0x1.fffffffffffffp+1023, true, true,
	 true, true},
	/* OCP 8-bit: E5M2 is IEEE-like; E4M3 "fn" keeps only S.1111.111 as NaN. */
	{USC_F8E5M2, "f8e5m2", 3, -14, 15, 0x1.cp+15, true, true, true, true},
	{USC_F8E4M3, "f8e4m3", 4, -6, 7, 0x1.ep+7, true, true, true, true},
	{USC_F8E4M3FN, "f8e4m3fn", 4, -6, 8, 0x1.cp+8, false, true, true,
	 true},
	/* fnuz: biases 8, 11, 16; the -0 pattern is NaN, so zero is +0 only. */
	{USC_F8E4M3FNUZ, "f8e4m3fnuz", 4, -7, 7, 0x1.ep+7, false, true, false,
	 true},
	{USC_F8E4M3B11FNUZ, "f8e4m3b11fnuz", 4, -10, 4, 0x1.ep+4, false, true,
	 false, true},
	{USC_F8E5M2FNUZ, "f8e5m2fnuz", 3, -15, 15, 0x1.cp+15, false, true,
	 false, true},
	/* IEEE-like E3M4, bias 3. */
	{USC_F8E3M4, "f8e3m4", 5, -2, 3, 0x1.fp+3, true, true, true, true},
	/* MX: E8M0 scale (2^-127 .. 2^127), E2M3, E3M2, E2M1 elements. */
	{USC_F8E8M0FNU, "f8e8m0fnu", 1, -127, 127, 0x1p+127, false, false,
	 false, false},
	{USC_F6E2M3FN, "f6e2m3fn", 4, 0, 2, 0x1.ep+2, false, true, true, true},
	{USC_F6E3M2FN, "f6e3m2fn", 3, -2, 4, 0x1.cp+4, false, true, true,
	 true},
	{USC_F4E2M1FN, "f4e2m1fn", 2, 0, 2, 0x1.8p+2, false, true, true, true},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

struct mode {
	usc_round_mode usc;
	mpfr_rnd_t rnd; /* MPFR_RNDNA: emulated, see expected() */
	const char *name;
};

static const struct mode modes[] = {
	{USC_RND_NEAREST_EVEN, MPFR_RNDN, "nearest-even"},
	{USC_RND_NEAREST_AWAY, MPFR_RNDNA, "nearest-away"},
	{USC_RND_TOWARD_ZERO, MPFR_RNDZ, "toward-zero"},
	{USC_RND_UP, MPFR_RNDU, "up"},
	{USC_RND_DOWN, MPFR_RNDD, "down"},
};

/*
 * Rounds x once into the format's grid, range unlimited above (except by
 * MPFR's exponent range shrunk to the format's binades): y gets precision
 * p; the return is the ternary value.  x may lie outside the narrowed
 * exponent range, so it is rounded to p bits in the default range first,
 * and mpfr_check_range and mpfr_subnormalize then finish the job using
 * the ternary value, which avoids double rounding (MPFR manual, 5.5).
 */
static int emulate(const struct spec *s, mpfr_srcptr x, mpfr_rnd_t rnd,
		   mpfr_ptr y)
{
	mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
	int inex;

	mpfr_set_prec(y, s->p);
	inex = mpfr_set(y, x, rnd);
	/*
	 * MPFR writes x = 0.1b...b * 2^E, one above the IEEE exponent.  With
	 * subnormals the smallest MPFR exponent is that of the smallest
	 * subnormal, 2^(emin - p + 1), as for binary64's -1073.
	 */
	mpfr_set_emin(s->subnormals ? s->emin - s->p + 2 : s->emin + 1);
	mpfr_set_emax(s->emax + 1);
	inex = mpfr_check_range(y, inex, rnd);
	if (s->subnormals)
		inex = mpfr_subnormalize(y, inex, rnd);
	mpfr_set_emin(old_emin);
	mpfr_set_emax(old_emax);
	return inex;
}

/*
 * The expected result of encoding x in mode m, into y.  Nearest-away is
 * nearest-even except on exact ties, where it is away from zero: a tie is
 * an x halfway between its toward-zero and away-from-zero roundings.
 * Formats without Inf saturate: any magnitude above max, Inf included,
 * becomes max (the grid above max, e.g. f8e4m3fn's 480, is not a value).
 */
static void expected(const struct spec *s, const struct mode *m,
		     mpfr_srcptr x, mpfr_ptr y)
{
	mpfr_set_prec(y, s->p);
	if (m->rnd == MPFR_RNDNA) {
		mpfr_t z, a, mid;
		bool tie = false;

		mpfr_inits2(s->p, z, a, (mpfr_ptr)0);
		mpfr_init2(mid, s->p + 2);
		emulate(s, x, MPFR_RNDZ, z);
		emulate(s, x, MPFR_RNDA, a);
		if (mpfr_number_p(a) && !mpfr_equal_p(z, a)) {
			/* Neighbours on the grid: their sum is exact. */
			int inex = mpfr_add(mid, z, a, MPFR_RNDN);

			assert_int_equal(inex, 0);
			mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
			tie = mpfr_equal_p(mid, x);
		}
		if (tie)
			mpfr_set(y, a, MPFR_RNDN);
		else
			emulate(s, x, MPFR_RNDN, y);
		mpfr_clears(z, a, mid, (mpfr_ptr)0);
	} else {
		emulate(s, x, m->rnd, y);
	}
	if (!s->inf && (mpfr_inf_p(y) || mpfr_cmp_d(y, s->max) > 0 ||
			mpfr_cmp_d(y, -s->max) < 0))
		mpfr_set_d(y, mpfr_signbit(y) ? -s->max : s->max, MPFR_RNDN);
	if (!s->signed_zero && mpfr_zero_p(y))
		mpfr_set_zero(y, 1);
}

static long urand(gmp_randstate_t rs, unsigned long n)
{
	return (long)gmp_urandomm_ui(rs, n);
}

/* A random p-bit odd or arbitrary integer with its top bit set, into z. */
static void top_bit_int(mpz_t z, gmp_randstate_t rs, int bits)
{
	mpz_urandomb(z, rs, (mp_bitcnt_t)bits);
	mpz_setbit(z, (mp_bitcnt_t)bits - 1);
}

/*
 * Draws sample i of a format into x (precision XPREC), exactly.  The kind
 * cycles: random fine values near the format's range, the same far out,
 * ties between neighbours (normal, then subnormal), exact codes, and
 * values just around the overflow threshold.
 */
static void draw(const struct spec *s, long i, gmp_randstate_t rs, mpfr_t x)
{
	int lo = s->emin - s->p - 3, hi = s->emax + 3;
	mpz_t z;
	long e;

	mpz_init(z);
	switch (i % 8) {
	case 0:
	case 1:
	case 2: /* 200 random bits anywhere from tiny to huge */
		mpfr_urandomb(x, rs);
		e = lo + urand(rs, (unsigned long)(hi - lo + 1));
		mpfr_mul_2si(x, x, e, MPFR_RNDN);
		break;
	case 3: /* far out on either side */
		mpfr_urandomb(x, rs);
		e = urand(rs, 2) ? lo - 40 + urand(rs, 40)
				 : hi + urand(rs, 40);
		mpfr_mul_2si(x, x, e, MPFR_RNDN);
		break;
	case 4: /* a tie between two normal neighbours (or above max) */
		top_bit_int(z, rs, s->p);
		mpz_mul_2exp(z, z, 1);
		mpz_add_ui(z, z, 1);
		e = s->emin + urand(rs, (unsigned long)(s->emax - s->emin + 2));
		mpfr_set_z(x, z, MPFR_RNDN);
		mpfr_mul_2si(x, x, e - s->p, MPFR_RNDN);
		break;
	case 5: /* a tie between subnormals, or between 0 and the first */
		if (s->subnormals) {
			mpz_urandomb(z, rs, (mp_bitcnt_t)s->p - 1);
			mpz_mul_2exp(z, z, 1);
			mpz_add_ui(z, z, 1);
			mpfr_set_z(x, z, MPFR_RNDN);
			mpfr_mul_2si(x, x, s->emin - s->p, MPFR_RNDN);
		} else {
			mpfr_set_ui(x, 3, MPFR_RNDN);
			mpfr_mul_2si(
				x, x,
				s->emin - 1 +
					urand(rs, (unsigned long)(s->emax -
								  s->emin + 1)),
				MPFR_RNDN);
		}
		break;
	case 6: /* an exact value of the format */
		top_bit_int(z, rs, s->p);
		e = s->emin + urand(rs, (unsigned long)(s->emax - s->emin + 1));
		if (s->subnormals && urand(rs, 4) == 0) {
			mpz_urandomb(z, rs, (mp_bitcnt_t)s->p - 1);
			e = s->emin;
		}
		mpfr_set_z(x, z, MPFR_RNDN);
		mpfr_mul_2si(x, x, e - s->p + 1, MPFR_RNDN);
		break;
	default: /* max plus a random fraction of two top-binade steps */
		mpfr_urandomb(x, rs);
		mpfr_mul_2si(x, x, s->emax - s->p + 2, MPFR_RNDN);
		mpfr_add_d(x, x, s->max, MPFR_RNDN);
		if (urand(rs, 2))
			mpfr_sub_d(x, x, 0x1p-4 * s->max, MPFR_RNDN);
		break;
	}
	if (s->sign) {
		if (urand(rs, 2))
			mpfr_neg(x, x, MPFR_RNDN);
	} else if (mpfr_cmp_d(x, 0x1p-127) < 0) {
		/*
		 * f8e8m0fnu has no zero: what a positive value below 2^-127
		 * becomes is a policy, not a rounding (ml_dtypes gives 2^-127
		 * in every case), so this test keeps to [2^-127, inf).
		 */
		mpfr_set_d(x, 0x1p-127, MPFR_RNDN);
	}
	mpz_clear(z);
}

static void test_emulation(void **state)
{
	long n = SAMPLES_PER_MODE * usc_test_scale(), total = 0, bad_total = 0;
	long flag_total = 0;
	gmp_randstate_t rs;
	mpfr_t x, want, got;

	(void)state;
	gmp_randinit_default(rs);
	gmp_randseed_ui(rs, 20240607UL);
	mpfr_init2(x, XPREC);
	mpfr_init2(want, 64);
	mpfr_init2(got, 64);
	for (size_t k = 0; k < N_SPECS; k++) {
		const struct spec *s = &specs[k];
		long bad = 0, flag_bad = 0;

		for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
			const struct mode *m = &modes[mi];
			usc_rounding r = {m->usc,
					  s->inf ? USC_OVF_INF
						 : USC_OVF_SATURATE,
					  false, 0, 0};

			for (long i = 0; i < n; i++) {
				uint64_t bits = 0;
				unsigned flags = 0;
				usc_status st, st2 = USC_EINTERNAL;
				bool ok;

				draw(s, i, rs, x);
				expected(s, m, x, want);
				st = usc_encode_mpfr(s->t, x, &r, &bits,
						     &flags);
				if (st == USC_OK)
					st2 = usc_decode_mpfr(s->t, bits, got);
				ok = st == USC_OK && st2 == USC_OK &&
				     !mpfr_nan_p(got) &&
				     mpfr_equal_p(got, want) &&
				     mpfr_signbit(got) == mpfr_signbit(want);
				total++;
				if (!ok) {
					if (bad++ < SHOW_MAX)
						mpfr_printf(
							"%s %s: x = %Ra: "
							"expected %Ra, got "
							"0x%llx = %Ra "
							"(status %d/%d)\n",
							s->name, m->name, x,
							want,
							(unsigned long long)bits,
							got, (int)st,
							(int)st2);
					continue;
				}
				if (!mpfr_equal_p(x, want) !=
					    !!(flags & USC_FLAG_INEXACT) &&
				    flag_bad++ < SHOW_MAX)
					mpfr_printf("%s %s: x = %Ra -> %Ra: "
						    "INEXACT wrong, flags "
						    "0x%x\n",
						    s->name, m->name, x, want,
						    flags);
			}
		}
		print_message("%-14s %ld values x 5 modes, %ld mismatches, "
			      "%ld INEXACT flag mismatches\n",
			      s->name, n, bad, flag_bad);
		bad_total += bad;
		flag_total += flag_bad;
	}
	print_message("emulation: %ld encodes checked, %ld mismatches\n",
		      total, bad_total);
	mpfr_clears(x, want, got, (mpfr_ptr)0);
	gmp_randclear(rs);
	mpfr_free_cache();
	assert_int_equal(bad_total, 0);
	assert_int_equal(flag_total, 0);
}

/*
 * The emulation itself, on hand-derived hex-float cases, so a slip in
 * emulate() cannot hide a slip in the library (or the other way round).
 */
static void test_emulation_known(void **state)
{
	static const struct {
		size_t spec;
		int mode;
		double x, want;
	} cases[] = {
		/* f16: max 65504; 65520 is the tie to 2^16, so RNE overflows. */
		{0, 0, 0x1.ffep+15, INFINITY},
		{0, 0, 0x1.ffdfffp+15, 0x1.ffcp+15},
		{0, 2, 0x1p+17, 0x1.ffcp+15},
		{0, 3, -0x1p+17, -0x1.ffcp+15},
		{0, 4, -0x1p+17, -INFINITY},
		/* f16 subnormals: 2^-25 ties to 0, 3*2^-25 to 2^-23. */
		{0, 0, 0x1p-25, 0x0p+0},
		{0, 1, 0x1p-25, 0x1p-24},
		{0, 0, 0x1.8p-24, 0x1p-23},
		{0, 3, 0x1p-60, 0x1p-24},
		{0, 2, 0x1p-60, 0x0p+0},
		/* f8e4m3fn: 464 ties down to 448; 465 saturates to 448. */
		{6, 0, 0x1.dp+8, 0x1.cp+8},
		{6, 1, 0x1.dp+8, 0x1.cp+8},
		{6, 3, 0x1.c08p+8, 0x1.cp+8},
		/* f8e4m3fnuz: -tiny rounds to the only zero, +0. */
		{7, 0, -0x1p-20, 0x0p+0},
		/* f8e8m0fnu: 3*2^-1 ties up to 2; 2^127*1.5 saturates. */
		{11, 0, 0x1.8p+0, 0x1p+1},
		{11, 0, 0x1.7p+0, 0x1p+0},
		{11, 0, 0x1.8p+127, 0x1p+127},
		/* f4e2m1fn: 5 ties to 4 (even), 0.25 ties to 0. */
		{14, 0, 0x1.4p+2, 0x1p+2},
		{14, 1, 0x1.4p+2, 0x1.8p+2},
		{14, 0, 0x1p-2, 0x0p+0},
		{14, 0, 0x1.8p-1, 0x1p+0},
	};
	mpfr_t x, y;

	(void)state;
	mpfr_init2(x, 53);
	mpfr_init2(y, 64);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mpfr_set_d(x, cases[i].x, MPFR_RNDN);
		expected(&specs[cases[i].spec], &modes[cases[i].mode], x, y);
		if (mpfr_get_d(y, MPFR_RNDN) != cases[i].want ||
		    mpfr_signbit(y) != signbit(cases[i].want))
			fail_msg("emulation of %s %s at %a: %a, expected %a",
				 specs[cases[i].spec].name,
				 modes[cases[i].mode].name, cases[i].x,
				 mpfr_get_d(y, MPFR_RNDN), cases[i].want);
	}
	mpfr_clears(x, y, (mpfr_ptr)0);
	mpfr_free_cache();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulation_known),
		cmocka_unit_test(test_emulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
