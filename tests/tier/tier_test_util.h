/*
 * What the f64 tier's tests share: reproducible random numbers, the
 * USC_TEST_SCALE multiplier, and building the same exact ball in the
 * tier and in the MPFI oracle so that the two can be compared.
 * Define TIER_TEST_SEED before including this header.
 */
#ifndef USC_TIER_TEST_UTIL_H
#define USC_TIER_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "oracles/oracle.h"
#include "oracles/tier.h"

typedef usc__oracle_value ovalue;
typedef usc__tier_value tvalue;

#define ORACLE_PREC 256

static long scale(void)
{
	const char *s = getenv("USC_TEST_SCALE");
	long v = s ? atol(s) : 1;

	return v > 0 ? v : 1;
}

/* xorshift64*: reproducible samples. */
static uint64_t rng_state = TIER_TEST_SEED;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static double unif(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

/* The two domains' states. */
typedef struct tier_pair {
	void *os, *ts;
} tier_pair;

/* Both domains' value of the exact ball [mid - rad, mid + rad]. */
static void set_both(tier_pair *p, ovalue *o, tvalue *t, double mid,
		     double rad)
{
	usc_error err;

	if (rad == 0) {
		uint64_t bits;

		memcpy(&bits, &mid, sizeof bits);
		assert_int_equal(usc__domain_oracle.load(p->os, USC_F64, bits,
							  o, &err), USC_OK);
		assert_int_equal(usc__domain_tier.load(p->ts, USC_F64, bits, t,
							&err), USC_OK);
		return;
	}
	{
		mpfr_t m, r, lo, hi;

		/* 2200 bits hold mid +- rad exactly for any two doubles. */
		mpfr_inits2(2200, m, r, lo, hi, (mpfr_ptr)0);
		mpfr_set_d(m, mid, MPFR_RNDN);
		mpfr_set_d(r, rad, MPFR_RNDN);
		mpfr_sub(lo, m, r, MPFR_RNDN);
		mpfr_add(hi, m, r, MPFR_RNDN);
		usc__oracle_value_set_interval(o, lo, hi);
		mpfr_clears(m, r, lo, hi, (mpfr_ptr)0);
	}
	usc__tier_value_set(t, mid, rad);
}

#endif /* USC_TIER_TEST_UTIL_H */
