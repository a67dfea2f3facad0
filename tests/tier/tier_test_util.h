/*
 * What the f64 tier's tests share: reproducible random numbers and the
 * USC_TEST_SCALE multiplier (tier_test_rng.h), and building the same
 * exact ball in the tier and in the MPFI oracle so that the two can be
 * compared.
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

#include "tier_test_rng.h"

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
