/*
 * One step along the doubles: next_up(x) is nextafter(x, +Inf) and
 * next_down(x) nextafter(x, -Inf), computed on the encoding in line and
 * without a branch on the data.  The tier (tier_internal.h) widens its
 * balls with them, the envelope's fast path and array loops
 * (envelope_round.h) round their bounds outward with them; both once
 * paid a fifth of their time for nextafter as a libm call, and the
 * array loops are vectorized only where no element takes a branch.
 *
 * The results are nextafter's: NaN and +Inf stay themselves, both zeros
 * go to the least subnormal 2^-1074, -Inf to -DBL_MAX, -2^-1074 to -0,
 * and every other finite x to its neighbour, one step of the magnitude,
 * whose order the encodings share with the values (IEEE 754-2019, 3.4).
 * test_envelope_bounds checks them at each of these points.
 */
#ifndef USC_ORACLES_FP_STEP_H
#define USC_ORACLES_FP_STEP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/*
 * In line always, in every caller: the envelope's array loops are
 * compiled for two instruction sets (envelope_loops.c), and a helper the
 * compiler leaves out of line runs in the baseline one.
 */
#if defined(__GNUC__)
#define USC_FP_INLINE static inline __attribute__((always_inline))
#else
#define USC_FP_INLINE static inline
#endif

USC_FP_INLINE double next_up(double x)
{
	/* Adding +0 turns -0 into +0, whose next value is 2^-1074. */
	double y = x + 0.0;
	uint64_t u, keep = -(uint64_t)(x != x || x == INFINITY);
	uint64_t ux;

	memcpy(&u, &y, sizeof u);
	/* One up for a positive y, one down (mod 2^64) for a negative one. */
	u += (uint64_t)1 - ((u >> 63) << 1);
	memcpy(&ux, &x, sizeof ux);
	u = (ux & keep) | (u & ~keep);
	memcpy(&y, &u, sizeof y);
	return y;
}

USC_FP_INLINE double next_down(double x)
{
	return -next_up(-x);
}

#endif
