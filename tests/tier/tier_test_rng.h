/*
 * What the tier's tests draw their samples from: reproducible random
 * numbers (xorshift64*) and the USC_TEST_SCALE multiplier of sample
 * counts.  Define TIER_TEST_SEED before including this header.
 */
#ifndef USC_TIER_TEST_RNG_H
#define USC_TIER_TEST_RNG_H

#include <stdint.h>
#include <stdlib.h>

#include "test_util.h"

static inline long scale(void)
{
	return usc_test_scale();
}

static uint64_t rng_state = TIER_TEST_SEED;

static inline uint64_t rnd(void)
{
	return usc_test_xorshift64star(&rng_state);
}

/* Uniform in [0, 1). */
static inline double unif(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

#endif /* USC_TIER_TEST_RNG_H */
