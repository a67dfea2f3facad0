/*
 * What the tier's tests draw their samples from: reproducible random
 * numbers (xorshift64*) and the USC_TEST_SCALE multiplier of sample
 * counts.  Define TIER_TEST_SEED before including this header.
 */
#ifndef USC_TIER_TEST_RNG_H
#define USC_TIER_TEST_RNG_H

#include <stdint.h>
#include <stdlib.h>

static inline long scale(void)
{
	const char *s = getenv("USC_TEST_SCALE");
	long v = s ? atol(s) : 1;

	return v > 0 ? v : 1;
}

static uint64_t rng_state = TIER_TEST_SEED;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1). */
static inline double unif(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

#endif /* USC_TIER_TEST_RNG_H */
