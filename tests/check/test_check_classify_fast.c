/*
 * The check's in-line classification (usc__check_classify_fast,
 * src/analyze/check_classify.c) against the general classifier
 * usc_classify_element: wherever the fast one answers, the class and the
 * expected error must be the general one's, bit for bit.
 *
 * Every float format the fast one covers (src/dtype/rn_fast.h), device
 * and reference codes drawn near each other (equal, one or two codes
 * apart, either sign, zeros, subnormals, the largest finite value,
 * infinities and NaNs), and envelopes of every flag combination the
 * classifier reads, with bounds on codes, between codes, around zero and
 * excluding the device value, exact values inside, outside and unknown.
 * The 8-bit and smaller formats take every device code against every
 * reference code within two codes, and random pairs; f32, bf16 and f16
 * random pairs.  The test also asserts that the fast path answers a fair
 * share of the cases, so that it cannot pass by answering none.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"

#include "analyze/check_internal.h"
#include "dtype/rn_fast.h"

static uint64_t rng = 0x243f6a8885a308d3u;

/* splitmix64: a fixed sequence, so a failure repeats. */
static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* The code k ordinal steps from c (sign-magnitude), within the format. */
static uint64_t step(const usc__rn_format *f, uint64_t c, int k)
{
	int64_t o = (c & f->sign_bit) ? -(int64_t)(c & f->mag_mask)
				      : (int64_t)(c & f->mag_mask);
	int64_t lim = (int64_t)f->mag_mask;

	o += k;
	if (o > lim)
		o = lim;
	if (o < -lim)
		o = -lim;
	return o < 0 ? f->sign_bit | (uint64_t)(-o) : (uint64_t)o;
}

/* A double near the value of code c (its value, or just off it). */
static double near_value(usc_dtype t, uint64_t c)
{
	double v = 0;

	if (usc_decode_double(t, c, &v) != USC_OK || !isfinite(v))
		v = (next() & 1) ? 1.0 : -1.0;
	switch (next() % 4) {
	case 0:
		return v;
	case 1:
		return nextafter(v, INFINITY);
	case 2:
		return nextafter(v, -INFINITY);
	default:
		return v * (1 + 0x1p-5);
	}
}

typedef struct tally {
	uint64_t cases, answered, exact, rounding;
} tally;

/* One case: the fast answer, when there is one, against the general. */
static void one(usc_dtype t, const usc__rn_format *f, uint64_t dev,
		uint64_t ref, tally *n)
{
	static const unsigned extra[] = {
		0,
		USC_ENV_NAN,
		USC_ENV_POS_INF | USC_ENV_NEG_INF,
		USC_ENV_NO_SUBNORMAL,
		USC_ENV_FLUSHED,
		USC_ENV_APPROX | USC_ENV_RANGE_CLIPPED,
		USC_ENV_UNKNOWN,
		USC_ENV_NO_SUBNORMAL | USC_ENV_NAN,
	};
	usc_classify_input in;
	usc_classify_result res;
	usc_envelope e;
	double lambdas[] = {USC_CLASSIFY_LAMBDA, 0.5, 40};
	double a = near_value(t, next() & 1 ? dev : ref);
	double b = near_value(t, step(f, dev, (int)(next() % 7) - 3));
	usc_class cls;
	double expected;
	usc_error err;

	memset(&e, 0, sizeof e);
	e.lo = fmin(a, b);
	e.hi = fmax(a, b);
	if (next() % 8 == 0)
		e.lo = e.hi = a; /* a point */
	if (next() % 8 == 0)
		e.lo = -e.hi; /* around zero */
	e.flags = (next() % 16 ? USC_ENV_FINITE : 0) |
		  extra[next() % (sizeof extra / sizeof *extra)];
	e.roundings = (double)(next() % 5 ? next() % 300 : 0);
	memset(&in, 0, sizeof in);
	in.type = t;
	in.device = dev;
	in.reference = ref;
	in.envelope = e;
	in.oracle_decided = next() % 4 != 0;
	in.ulp_oracle = (double)(int64_t)(next() % 9) - 4 + 0.25;
	switch (next() % 4) {
	case 0:
		in.exact = NAN;
		break;
	case 1:
		in.exact = (e.lo + e.hi) / 2;
		break;
	case 2:
		in.exact = e.hi + fabs(e.hi) + 1; /* outside */
		break;
	default:
		in.exact = near_value(t, ref);
		break;
	}
	in.lambda = lambdas[next() % 3];
	n->cases++;
	if (!usc__check_classify_fast(f, &e, dev, ref, in.exact, in.lambda,
				      &cls, &expected))
		return;
	assert_int_equal(usc_classify_element(&in, &res, &err), USC_OK);
	if (cls != res.cls || memcmp(&expected, &res.expected_ulps,
				     sizeof expected) != 0)
		fail_msg("%s device 0x%llx reference 0x%llx envelope [%a, %a] "
			 "flags %u roundings %g exact %a: fast %s %a, general "
			 "%s %a",
			 usc_dtype_name(t), (unsigned long long)dev,
			 (unsigned long long)ref, e.lo, e.hi, e.flags,
			 e.roundings, in.exact, usc_class_name(cls), expected,
			 usc_class_name(res.cls), res.expected_ulps);
	n->answered++;
	n->exact += cls == USC_CLASS_EXACT;
	n->rounding += cls == USC_CLASS_ROUNDING;
}

/* A code of interest: random, or a special one of the format. */
static uint64_t pick(const usc__rn_format *f)
{
	uint64_t s = next() & 1 ? f->sign_bit : 0;

	switch (next() % 8) {
	case 0:
		return s; /* a zero */
	case 1:
		return s | (next() % 4); /* subnormals */
	case 2:
		return s | (f->special_min - 1); /* the largest finite */
	case 3:
		return s | (f->mag_mask - next() % 3); /* Inf and NaN codes */
	default:
		return next() & (f->sign_bit | f->mag_mask);
	}
}

static void test_formats(void **state)
{
	static const usc_dtype types[] = {
		USC_F32,      USC_BF16,	     USC_F16,	   USC_F8E5M2,
		USC_F8E4M3,   USC_F8E4M3FN,  USC_F8E3M4,   USC_F6E2M3FN,
		USC_F6E3M2FN, USC_F4E2M1FN,
	};

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		usc_dtype t = types[i];
		const usc__rn_format *f = usc__rn_format_of(t);
		tally n = {0, 0, 0, 0};

		assert_non_null(f);
		/* Small formats: every device code near every reference. */
		if (f->sign_bit <= 0x80)
			for (uint64_t r = 0; r <= (f->sign_bit | f->mag_mask);
			     r++)
				for (int k = -2; k <= 2; k++)
					for (int rep = 0; rep < 8; rep++)
						one(t, f, step(f, r, k), r,
						    &n);
		for (int rep = 0; rep < 200000; rep++) {
			uint64_t r = pick(f);
			uint64_t d = next() % 4 ? step(f, r,
						       (int)(next() % 5) - 2)
						: pick(f);

			one(t, f, d, r, &n);
		}
		/* The fast path must carry its share, or it tests nothing. */
		assert_true(n.answered > n.cases / 10);
		assert_true(n.exact > 0 && n.rounding > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
