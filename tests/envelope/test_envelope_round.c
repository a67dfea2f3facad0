/*
 * The fast envelope's rounding into f32, bf16 and f16 (oracles/
 * envelope_fast.c: on the double's encoding for normal results, the
 * hardware conversion for f32 to nearest) against the dtype codec
 * (usc_encode_double, then usc_decode_double), which the MPFR path's
 * rounding shares: to nearest-even, up and down, on random doubles over
 * every binade of each type and beyond its range, exact ties, values one
 * double step beside a tie or a representable value, the largest finite
 * value, the smallest normal, subnormals and zeros.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

#include "ulpscope/dtype.h"

#include "oracles/envelope.h"
#include "oracles/envelope_fast.h"

#define TIER_TEST_SEED 0x3c6ef372fe94f82bull
#include "tier/tier_test_rng.h"

static const usc_dtype types[] = {USC_F32, USC_BF16, USC_F16};
static const usc_round_mode modes[] = {USC_RND_NEAREST_EVEN, USC_RND_UP,
				       USC_RND_DOWN};

static double codec(usc_dtype t, double x, usc_round_mode m)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t b = 0;
	double d = 0;

	r.mode = m;
	assert_int_equal(usc_encode_double(t, x, &r, &b, NULL), USC_OK);
	assert_int_equal(usc_decode_double(t, b, &d), USC_OK);
	return d;
}

static void same(void *st, usc_dtype t, double x, size_t *n)
{
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
		double want = codec(t, x, modes[i]);
		double got = usc__env_fast_round(st, t, x, modes[i]);

		if (!(want == got && signbit(want) == signbit(got)) &&
		    !(isnan(want) && isnan(got)))
			fail_msg("%s, mode %d: %a rounds to %a, the codec "
				 "gives %a",
				 usc_dtype_name(t), (int)modes[i], x, got,
				 want);
		(*n)++;
	}
}

static void test_rounding(void **state)
{
	void *st = NULL;
	usc_error err;
	size_t n = 0;
	long count = 200000 * scale();

	(void)state;
	assert_int_equal(usc__domain_envelope.create(&st, &err), USC_OK);
	for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
		usc_dtype t = types[ti];
		usc_float_info fi;

		assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
		/* Edges: zeros, the range's ends, one double step beside. */
		{
			double e[] = {0.0, -0.0, fi.max_finite, fi.min_normal,
				      fi.min_subnormal, 1.0, 2.0};

			for (size_t i = 0; i < sizeof e / sizeof *e; i++)
				for (int sg = -1; sg <= 1; sg += 2) {
					double x = sg * e[i];

					same(st, t, x, &n);
					same(st, t, nextafter(x, INFINITY), &n);
					same(st, t, nextafter(x, -INFINITY), &n);
				}
		}
		for (long i = 0; i < count; i++) {
			/* A value of t, then a tie above it or a step beside. */
			int e = fi.emin - fi.precision - 2 +
				(int)(rnd() % (uint64_t)(fi.emax - fi.emin +
							 fi.precision + 6));
			double m = 1 + unif(), x = ldexp(m, e);
			double q = codec(t, x, USC_RND_DOWN);
			uint64_t kind = rnd() % 4;

			if (rnd() & 1)
				x = -x;
			if (kind == 1 && isfinite(q)) {
				/* The midpoint of q and the next value up. */
				double up = codec(t, nextafter(fabs(q), INFINITY),
						  USC_RND_UP);

				x = copysign((fabs(q) + up) / 2, x);
			} else if (kind == 2) {
				x = nextafter(x, INFINITY);
			} else if (kind == 3 && isfinite(q)) {
				x = nextafter(copysign(q, x), -INFINITY);
			}
			same(st, t, x, &n);
		}
	}
	printf("  %zu roundings compared with the codec\n", n);
	usc__domain_envelope.destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
