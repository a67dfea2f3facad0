/*
 * Units of the fast envelope (oracles/envelope_fast.c):
 *
 *   - its rounding into f32, bf16 and f16 (on the double's encoding for
 *     normal results, the hardware conversion for f32 to nearest) against
 *     the dtype codec (usc_encode_double, then usc_decode_double), which
 *     the MPFR path's rounding shares: to nearest-even, up and down, on
 *     random doubles over every binade of each type and beyond its range,
 *     exact ties, values one double step beside a tie or a representable
 *     value, the largest finite value, the smallest normal, subnormals
 *     and zeros;
 *   - every function it computes through libm (exp, expm1, log, log1p,
 *     tanh, erf, logistic, sqrt, rsqrt, cbrt) and the four arithmetic ops
 *     in f32, bf16 and f16, on inputs over the whole range of the type
 *     (zeros, subnormals, the largest values, the edges of the domains,
 *     the overflow of exp and logistic's far tail, NaN and infinities):
 *     under strict, xla-cpu and xla-gpu the fast envelope contains the
 *     MPFR path's element by element;
 *   - the same on interval operands, which point inputs never give:
 *     products of two sets of every sign combination (one sign each, a
 *     zero end, both signs), the float-to-float converts between f32,
 *     bf16 and f16 of such sets, and a divide by them, through the
 *     element loop of env_apply (usc__env_fast_elem).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

#include "ulpscope/dtype.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#include "eval/eval_values.h"

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

/* The envelope of output 0's element j after a run of ev. */
static usc__envelope_elem elem_of(usc_eval *ev, size_t j, usc_dtype *t)
{
	const void *vals;
	size_t count;
	usc__envelope_elem e;
	uint64_t rep;
	usc_error err;

	assert_int_equal(usc__eval_output_values(ev, 0, &vals, &count, t),
			 USC_OK);
	assert_true(j < count);
	assert_int_equal(usc__domain_envelope.to_output(
				 usc__eval_domain_state(ev), *t,
				 (const unsigned char *)vals +
					 j * usc__domain_envelope.value_size,
				 &rep, &e, &err),
			 USC_OK);
	return e;
}

/* Whether a contains b (as test_envelope_fast.c defines it). */
static bool contains(const usc__envelope_elem *a, const usc__envelope_elem *b)
{
	const unsigned core = USC__ENV_NAN | USC__ENV_POS_INF |
			      USC__ENV_NEG_INF | USC__ENV_FINITE;

	if (a->flags & USC__ENV_UNKNOWN)
		return true;
	if (b->flags & USC__ENV_UNKNOWN)
		return false;
	if ((b->flags & core) & ~(a->flags & core))
		return false;
	if ((b->flags & USC__ENV_FINITE) && (a->lo > b->lo || a->hi < b->hi))
		return false;
	return !((a->flags & USC__ENV_NO_SUBNORMAL) &&
		 (b->flags & USC__ENV_FINITE) &&
		 !(b->flags & USC__ENV_NO_SUBNORMAL));
}

#define NIN 512

/* Inputs over the whole range of t: edges first, then random values. */
static double input(usc_dtype t, size_t i, const usc_float_info *fi)
{
	static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0,
				       -700.5, -720.0, -745.5, 88.5, 89.0,
				       709.0, 11.1, -103.0, 1e-3, -1e-3,
				       INFINITY, -INFINITY, NAN};
	int e;

	(void)t;
	if (i < sizeof edges / sizeof *edges)
		return edges[i];
	switch (i % 8) {
	case 0: return fi->max_finite * (rnd() & 1 ? 1 : -1);
	case 1: return fi->min_subnormal * (double)(1 + rnd() % 7);
	case 2: return fi->min_normal * (rnd() & 1 ? 1 : -1);
	default:
		e = fi->emin - fi->precision +
		    (int)(rnd() % (uint64_t)(fi->emax - fi->emin +
					     fi->precision));
		return ldexp(1 + unif(), e) * (rnd() & 1 ? 1 : -1);
	}
}

static void check_op(const char *op, usc_dtype t, int nargs,
		     const usc_profile *p, size_t *n)
{
	char text[512];
	const char *tn = usc_dtype_name(t);
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_tensor *in[2] = {NULL, NULL};
	usc_float_info fi;
	usc_error err;
	int64_t d = NIN;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	if (nargs == 1)
		snprintf(text, sizeof text,
			 "HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n"
			 "  ROOT r = %s[%d] %s(p)\n}\n",
			 tn, NIN, tn, NIN, op);
	else
		snprintf(text, sizeof text,
			 "HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n"
			 "  q = %s[%d] parameter(1)\n"
			 "  ROOT r = %s[%d] %s(p, q)\n}\n",
			 tn, NIN, tn, NIN, tn, NIN, op);
	if (usc_hlo_parse(text, strlen(text), "<t>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = p;
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev,
					 &err),
			 USC_OK);
	for (int k = 0; k < nargs; k++) {
		assert_int_equal(usc_tensor_create(t, 1, &d, &in[k], &err),
				 USC_OK);
		for (size_t i = 0; i < NIN; i++) {
			uint64_t b = 0;
			/* The second operand: a shuffle of the same kinds. */
			double x = input(t, k ? (i * 7 + 3) % NIN : i, &fi);

			(void)usc_encode_double(t, x, NULL, &b, NULL);
			assert_int_equal(usc_tensor_set_bits(in[k], i, b),
					 USC_OK);
		}
		assert_int_equal(usc_eval_bind(ev, (size_t)k, in[k], &err),
				 USC_OK);
	}
	{
		usc__envelope_elem fast[NIN];
		usc_dtype ot;

		usc__envelope_set_mpfr_only(usc__eval_domain_state(ev), false);
		assert_int_equal(usc_eval_run(ev, &err), USC_OK);
		for (size_t i = 0; i < NIN; i++)
			fast[i] = elem_of(ev, i, &ot);
		usc__envelope_set_mpfr_only(usc__eval_domain_state(ev), true);
		assert_int_equal(usc_eval_run(ev, &err), USC_OK);
		for (size_t i = 0; i < NIN; i++) {
			usc__envelope_elem m = elem_of(ev, i, &ot);

			if (!contains(&fast[i], &m))
				fail_msg("%s %s under %s, element %zu: the "
					 "fast envelope [%a, %a] %#x does not "
					 "contain the MPFR one [%a, %a] %#x",
					 op, tn, p->name, i, fast[i].lo,
					 fast[i].hi, fast[i].flags, m.lo, m.hi,
					 m.flags);
			(*n)++;
		}
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (int k = 0; k < nargs; k++)
		usc_tensor_destroy(in[k]);
}

static void test_functions(void **state)
{
	static const char *const unary[] = {
		"exponential", "exponential-minus-one", "log", "log-plus-one",
		"tanh", "erf", "logistic", "sqrt", "rsqrt", "cbrt"};
	static const char *const binary[] = {"add", "subtract", "multiply",
					     "divide"};
	static const char *const profiles[] = {"strict", "xla-cpu",
					       "xla-gpu"};
	size_t n = 0;

	(void)state;
	for (size_t pi = 0; pi < sizeof profiles / sizeof *profiles; pi++) {
		usc_profile p;
		usc_error err;

		assert_int_equal(usc_profile_builtin(profiles[pi], &p, &err),
				 USC_OK);
		for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
			for (size_t u = 0; u < sizeof unary / sizeof *unary;
			     u++)
				check_op(unary[u], types[ti], 1, &p, &n);
			for (size_t b = 0; b < sizeof binary / sizeof *binary;
			     b++)
				check_op(binary[b], types[ti], 2, &p, &n);
		}
	}
	printf("  %zu elements: the fast envelope contains the MPFR one\n",
	       n);
}

/*
 * A kernel of interval operands: tanh of each input is a set of the
 * input's sign (or around 0), each product and quotient meets every sign
 * combination, and the converts round such sets into the other types.
 * Under each profile the fast envelope of every element contains the MPFR
 * one, and the fast path decided most op elements (its loop ran).
 */
static void check_intervals(usc_dtype t, usc_dtype u, const usc_profile *p,
			    size_t *n)
{
	char text[1024];
	const char *tn = usc_dtype_name(t), *un = usc_dtype_name(u);
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_tensor *in[2] = {NULL, NULL};
	usc__envelope_elem fast[NIN];
	usc_float_info fi;
	usc_error err;
	usc_dtype ot;
	uint64_t decided, escalated;
	int64_t d = NIN;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	snprintf(text, sizeof text,
		 "HloModule m\nENTRY e {\n"
		 "  p = %s[%d] parameter(0)\n"
		 "  q = %s[%d] parameter(1)\n"
		 "  a = %s[%d] tanh(p)\n"
		 "  b = %s[%d] tanh(q)\n"
		 "  m = %s[%d] multiply(a, b)\n"
		 "  c = %s[%d] convert(m)\n"
		 "  w = %s[%d] convert(c)\n"
		 "  x = %s[%d] multiply(w, a)\n"
		 "  ROOT r = %s[%d] divide(x, b)\n}\n",
		 tn, NIN, tn, NIN, tn, NIN, tn, NIN, tn, NIN, un, NIN, tn,
		 NIN, tn, NIN, tn, NIN);
	if (usc_hlo_parse(text, strlen(text), "<t>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = p;
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev,
					 &err),
			 USC_OK);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(usc_tensor_create(t, 1, &d, &in[k], &err),
				 USC_OK);
		for (size_t i = 0; i < NIN; i++) {
			uint64_t bits = 0;
			double x = input(t, k ? (i * 7 + 3) % NIN : i, &fi);

			(void)usc_encode_double(t, x, NULL, &bits, NULL);
			assert_int_equal(usc_tensor_set_bits(in[k], i, bits),
					 USC_OK);
		}
		assert_int_equal(usc_eval_bind(ev, (size_t)k, in[k], &err),
				 USC_OK);
	}
	usc__envelope_set_mpfr_only(usc__eval_domain_state(ev), false);
	assert_int_equal(usc_eval_run(ev, &err), USC_OK);
	usc__envelope_counts(usc__eval_domain_state(ev), &decided, &escalated);
	if (decided < escalated)
		fail_msg("%s via %s under %s: %llu op elements decided in "
			 "double, %llu escalated",
			 tn, un, p->name, (unsigned long long)decided,
			 (unsigned long long)escalated);
	for (size_t i = 0; i < NIN; i++)
		fast[i] = elem_of(ev, i, &ot);
	usc__envelope_set_mpfr_only(usc__eval_domain_state(ev), true);
	assert_int_equal(usc_eval_run(ev, &err), USC_OK);
	for (size_t i = 0; i < NIN; i++) {
		usc__envelope_elem m = elem_of(ev, i, &ot);

		if (!contains(&fast[i], &m))
			fail_msg("%s via %s under %s, element %zu: the fast "
				 "envelope [%a, %a] %#x does not contain the "
				 "MPFR one [%a, %a] %#x",
				 tn, un, p->name, i, fast[i].lo, fast[i].hi,
				 fast[i].flags, m.lo, m.hi, m.flags);
		(*n)++;
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (int k = 0; k < 2; k++)
		usc_tensor_destroy(in[k]);
}

static void test_intervals(void **state)
{
	static const char *const profiles[] = {"strict", "xla-cpu",
					       "xla-gpu"};
	size_t n = 0;

	(void)state;
	for (size_t pi = 0; pi < sizeof profiles / sizeof *profiles; pi++) {
		usc_profile p;
		usc_error err;

		assert_int_equal(usc_profile_builtin(profiles[pi], &p, &err),
				 USC_OK);
		for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
			for (size_t ui = 0; ui < sizeof types / sizeof *types;
			     ui++)
				check_intervals(types[ti], types[ui], &p, &n);
	}
	printf("  %zu elements of interval operands: the fast envelope "
	       "contains the MPFR one\n",
	       n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_intervals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
