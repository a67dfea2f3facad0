/*
 * The generator's PRNG: xoshiro256** seeded through splitmix64, both as
 * published by Blackman and Vigna (prng.di.unimi.it).  Written out here,
 * not taken from the C library, so that a seed names the same module on
 * every platform and in every version of libc.
 */
#include "internal.h"

#include "ulpscope/gen.h"

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void usc_gen_rng_seed(usc_gen_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t usc_gen_rng_next(usc_gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t usc_gen_rng_below(usc_gen_rng *r, uint64_t n)
{
	/*
	 * Values at or above the largest multiple of n are drawn again, so
	 * that every residue is equally likely.
	 */
	uint64_t limit, x;

	if (n <= 1)
		return 0;
	limit = UINT64_MAX - UINT64_MAX % n;
	do
		x = usc_gen_rng_next(r);
	while (x >= limit);
	return x % n;
}
