/*
 * Stochastic rounding, counted exhaustively.  dtype.h promises that a value
 * at fractional position f between two neighbouring codes rounds up (away
 * from zero: the random word is added to the magnitude's bits below the
 * kept mantissa) for exactly floor(f * 2^k) of the 2^k random words, where
 * k = random_bits.  So for an f with at most k bits, looping over all 2^k
 * words must give exactly f * 2^k round-ups; bits beyond the k-th are
 * dropped; exactly representable values never move; random bits above the
 * k-th are ignored; and random_bits = 0 means k = 32.
 *
 * The neighbouring values are derived by hand from each format's published
 * parameters (the table below, as in test_mpfr_emulation.c), not from
 * ulpscope.  Every x built here is exact in double.
 *
 * USC_TEST_SCALE (a positive integer) multiplies the random positions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ulpscope/dtype.h"
#include "test_util.h"

#define SHOW_MAX 8

/* p: precision; emin, emax: exponents of the smallest normal and of max. */
struct spec {
	usc_dtype t;
	const char *name;
	int p, emin, emax;
	double max;
	bool subnormals, sign, zero;
};

/* The formats encodable from a double exactly enough for k <= 12. */
static const struct spec specs[] = {
	{USC_F16, "f16", 11, -14, 15, 0x1.ffcp+15, true, true, true},
	{USC_BF16, "bf16", 8, -126, 127, 0x1.fep+127, true, true, true},
	{USC_F32, "f32", 24, -126, 127, 0x1.fffffep+127, true, true, true},
	{USC_F8E5M2, "f8e5m2", 3, -14, 15, 0x1.cp+15, true, true, true},
	{USC_F8E4M3, "f8e4m3", 4, -6, 7, 0x1.ep+7, true, true, true},
	{USC_F8E4M3FN, "f8e4m3fn", 4, -6, 8, 0x1.cp+8, true, true, true},
	{USC_F8E4M3FNUZ, "f8e4m3fnuz", 4, -7, 7, 0x1.ep+7, true, true, true},
	{USC_F8E4M3B11FNUZ, "f8e4m3b11fnuz", 4, -10, 4, 0x1.ep+4, true, true,
	 true},
	{USC_F8E5M2FNUZ, "f8e5m2fnuz", 3, -15, 15, 0x1.cp+15, true, true, true},
	{USC_F8E3M4, "f8e3m4", 5, -2, 3, 0x1.fp+3, true, true, true},
	{USC_F8E8M0FNU, "f8e8m0fnu", 1, -127, 127, 0x1p+127, false, false,
	 false},
	{USC_F6E2M3FN, "f6e2m3fn", 4, 0, 2, 0x1.ep+2, true, true, true},
	{USC_F6E3M2FN, "f6e3m2fn", 3, -2, 4, 0x1.cp+4, true, true, true},
	{USC_F4E2M1FN, "f4e2m1fn", 2, 0, 2, 0x1.8p+2, true, true, true},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* A fixed-seed generator (splitmix64), so every run draws the same. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* The next draw of this test's sequence (test_util.h). */
static uint64_t rnd64(void)
{
	return usc_test_splitmix64(&rng_state);
}

/* Encodes x stochastically with word w and k bits; returns the value. */
static double sround(const struct spec *s, double x, uint64_t w, unsigned k,
		     long *bad)
{
	usc_rounding r = {USC_RND_STOCHASTIC, USC_OVF_DEFAULT, false, w, k};
	uint64_t bits = 0;
	double y = NAN;

	if (usc_encode_double(s->t, x, &r, &bits, NULL) != USC_OK ||
	    usc_decode_double(s->t, bits, &y) != USC_OK) {
		if ((*bad)++ < SHOW_MAX)
			print_message("%s: encode/decode of %a failed\n",
				      s->name, x);
		return NAN;
	}
	return y;
}

/* A pair of neighbouring non-negative values of a format, a < b. */
struct pair {
	double a, b;
	const char *what;
};

static size_t pairs_of(const struct spec *s, struct pair *out)
{
	double ulp1 = ldexp(1.0, 1 - s->p); /* the gap above 1 */
	double top = ldexp(1.0, s->emax - s->p + 1);
	double sub = ldexp(1.0, s->emin - s->p + 1); /* smallest subnormal */
	double norm = ldexp(1.0, s->emin);
	size_t n = 0;

	out[n++] = (struct pair){1.0, 1.0 + ulp1, "1 and its successor"};
	out[n++] = (struct pair){2.0 - ulp1, 2.0, "across the binade of 2"};
	if (s->p == 1)
		out[n - 1] = (struct pair){0.5, 1.0, "across the binade of 1"};
	/* With one bit of precision the value below max is max / 2. */
	out[n++] = (struct pair){s->p == 1 ? s->max / 2 : s->max - top, s->max,
				 "below max"};
	if (s->subnormals) {
		out[n++] = (struct pair){norm - sub, norm,
					 "largest subnormal to min normal"};
		out[n++] = (struct pair){0.0, sub, "zero to min subnormal"};
		if (s->p > 2)
			out[n++] = (struct pair){sub, 2 * sub,
						 "among subnormals"};
	} else {
		out[n++] = (struct pair){norm, 2 * norm, "min and its successor"};
	}
	return n;
}

/*
 * Counts the round-ups of x = a + (j + half/2) / 2^k * (b - a) (negated
 * when neg) over all 2^k words, each with random junk above bit k, which
 * must not matter; the count must be j, the half being dropped.
 */
static void count_case(const struct spec *s, const struct pair *pr, int neg,
		       unsigned k, uint64_t j, int half, long *bad,
		       long *encodes)
{
	uint64_t n = (uint64_t)1 << k, up = 0;
	double a = pr->a, b = pr->b;
	double f = ((double)j + 0.5 * half) / (double)n;
	double x = a + f * (b - a);

	if (neg) {
		a = -a;
		b = -b;
		x = -x;
	}
	for (uint64_t w = 0; w < n; w++) {
		double y = sround(s, x, w | rnd64() << k, k, bad);

		++*encodes;
		if (y == b)
			up++;
		else if (y != a && (*bad)++ < SHOW_MAX)
			print_message("%s: %a (%s) w=%llu k=%u gave %a, not "
				      "%a or %a\n",
				      s->name, x, pr->what,
				      (unsigned long long)w, k, y, a, b);
	}
	if (up != j && (*bad)++ < SHOW_MAX)
		print_message("%s: %a (%s, f = %a) k=%u: %llu of %llu round "
			      "up, expected %llu\n",
			      s->name, x, pr->what, f, k,
			      (unsigned long long)up, (unsigned long long)n,
			      (unsigned long long)j);
}

/*
 * For every pair and sign: at k = 8 the positions 0, 1, 1/2, 1 - 2^-8,
 * each also with an extra half step below the k-th bit, and random ones;
 * at k = 12 the positions 2^-12, 1 - 2^-12 and random ones plus half a
 * step.
 */
static void test_counts(void **state)
{
	long bad = 0, cases = 0, encodes = 0;
	long extra = usc_test_scale();

	(void)state;
	for (size_t fi = 0; fi < N_SPECS; fi++) {
		const struct spec *s = &specs[fi];
		struct pair pairs[8];
		size_t np = pairs_of(s, pairs);
		long fbad = bad;

		for (size_t pi = 0; pi < np; pi++) {
			for (int neg = 0; neg < (s->sign ? 2 : 1); neg++) {
				const uint64_t n8 = 256, n12 = 4096;
				uint64_t j8[] = {0, 1, n8 / 2, n8 - 1};
				uint64_t j12[] = {1, n12 - 1};

				for (size_t i = 0; i < 4; i++)
					for (int h = 0; h < 2; h++, cases++)
						count_case(s, &pairs[pi], neg,
							   8, j8[i], h, &bad,
							   &encodes);
				for (long e = 0; e < extra; e++, cases++)
					count_case(s, &pairs[pi], neg, 8,
						   rnd64() % n8, 1, &bad,
						   &encodes);
				for (size_t i = 0; i < 2; i++, cases++)
					count_case(s, &pairs[pi], neg, 12,
						   j12[i], 0, &bad, &encodes);
				for (long e = 0; e < extra; e++, cases++)
					count_case(s, &pairs[pi], neg, 12,
						   rnd64() % n12, 1, &bad,
						   &encodes);
			}
		}
		print_message("%-14s %zu pairs, %ld mismatches\n", s->name,
			      np, bad - fbad);
	}
	print_message("stochastic counts: %ld cases, %ld encodes, %ld "
		      "mismatches\n",
		      cases, encodes, bad);
	assert_int_equal(bad, 0);
}

/*
 * Exactly representable values stay put for any word.  Every code of the
 * narrow formats, a sample of the wide ones; the words include 0, all
 * ones and random ones, at k = 1, 8, 32, 64 and 0 (the default).
 */
static void test_exact_values(void **state)
{
	static const unsigned ks[] = {0, 1, 8, 32, 64};
	long bad = 0, checked = 0;

	(void)state;
	for (size_t fi = 0; fi < N_SPECS; fi++) {
		const struct spec *s = &specs[fi];
		const usc_format *d = usc_format_of(s->t);
		uint64_t ncodes;
		long samples;

		assert_non_null(d);
		ncodes = d->bits >= 64 ? 0 : (uint64_t)1 << d->bits;
		samples = d->bits <= 8 ? (long)ncodes : 2000 * usc_test_scale();
		for (long i = 0; i < samples; i++) {
			uint64_t code = d->bits <= 8 ? (uint64_t)i
						     : rnd64() % ncodes;
			double v;

			if (usc_decode_double(s->t, code, &v) != USC_OK ||
			    isnan(v))
				continue;
			for (size_t ki = 0; ki < 5; ki++) {
				uint64_t words[4] = {0, ~(uint64_t)0, rnd64(),
						     rnd64()};

				for (int wi = 0; wi < 4; wi++) {
					usc_rounding r = {USC_RND_STOCHASTIC,
							  USC_OVF_DEFAULT,
							  false, words[wi],
							  ks[ki]};
					uint64_t got = 0;
					double y = NAN;
					bool ok = usc_encode_double(
							  s->t, v, &r, &got,
							  NULL) == USC_OK &&
						  usc_decode_double(s->t, got,
								    &y) ==
							  USC_OK;

					/* Same value, same sign of zero. */
					ok = ok && y == v &&
					     signbit(y) == signbit(v);
					checked++;
					if (!ok && bad++ < SHOW_MAX)
						print_message(
							"%s: exact 0x%llx = %a "
							"moved to 0x%llx = %a "
							"(k=%u, w=0x%llx)\n",
							s->name,
							(unsigned long long)code,
							v,
							(unsigned long long)got,
							y, ks[ki],
							(unsigned long long)
								words[wi]);
				}
			}
		}
	}
	print_message("stochastic exact values: %ld encodes, %ld moved\n",
		      checked, bad);
	assert_int_equal(bad, 0);
}

/*
 * random_bits = 0 means 32: at x = a + j/2^32 (b - a) the word w rounds up
 * exactly when (w mod 2^32) + j >= 2^32.  Checked at the threshold, at the
 * extremes and on random words, with bits = 0 and bits = 32 alike, for the
 * formats whose p + 32 bits fit a double.
 */
static void test_default_bits(void **state)
{
	long bad = 0, checked = 0;

	(void)state;
	for (size_t fi = 0; fi < N_SPECS; fi++) {
		const struct spec *s = &specs[fi];
		double a = 1.0, b = 1.0 + ldexp(1.0, 1 - s->p);
		const uint64_t two32 = (uint64_t)1 << 32;

		if (s->p + 32 > 53)
			continue;
		for (int t = 0; t < 8; t++) {
			uint64_t j = t == 0 ? 1 : t == 1 ? two32 - 1
						: 1 + rnd64() % (two32 - 1);
			double x = a + ldexp((double)j, -32) * (b - a);
			uint64_t words[64];
			size_t nw = 0;

			words[nw++] = two32 - j - 1; /* the last word down */
			words[nw++] = two32 - j;     /* the first word up */
			words[nw++] = 0;
			words[nw++] = two32 - 1;
			words[nw++] = (rnd64() << 32) | (two32 - j);
			words[nw++] = (rnd64() << 32) | (two32 - j - 1);
			while (nw < 64)
				words[nw++] = rnd64();
			for (size_t wi = 0; wi < nw; wi++) {
				uint64_t low = words[wi] & (two32 - 1);
				double want = low + j >= two32 ? b : a;

				for (unsigned k = 0; k <= 32; k += 32) {
					double y = sround(s, x, words[wi], k,
							  &bad);

					checked++;
					if (y != want && bad++ < SHOW_MAX)
						print_message(
							"%s: %a, k=%u, "
							"w=0x%llx: got %a, "
							"expected %a\n",
							s->name, x, k,
							(unsigned long long)
								words[wi],
							y, want);
				}
			}
		}
	}
	print_message("stochastic default bits: %ld encodes, %ld mismatches\n",
		      checked, bad);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_exact_values),
		cmocka_unit_test(test_default_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
