/*
 * The envelope's array loops (oracles/envelope_loops.c, docs/envelope.md,
 * "The array loops") against the per-element code they stand in for.
 *
 * Every op the loops take (add, subtract, multiply, divide with and
 * without the x * RN(1 / y) rewrite, the monotone functions, the
 * float-to-float converts) in f32, bf16 and f16 under
 * every built-in profile is applied through the domain's apply entry
 * twice to the same random operand sets, with the loops on and off
 * (usc__envelope_set_loops); every element must be the same bit for bit:
 * both bounds, the flags (zero signs and taints included) and the count
 * of roundings.  The per-element code is the path whose sets the MPFR
 * envelope contains (tests/envelope/test_envelope_fast.c, _brute.c), so
 * this holds the loops, and the rounding sets they drop at plan time, to
 * it.  The operands are drawn to reach every case the loops must refuse
 * as well as the plain ones: points and intervals over each type's whole
 * range and beyond, sets across zero, zeros of one sign, subnormals
 * (flushed under xla-cpu), NaN, infinities and UNKNOWN members, the
 * edges of the functions' domains and ranges (log at 0, log1p at -1,
 * logistic at -700, tanh and logistic near their bounds), the overflow of
 * each type, and taints and counts on the operands; a second operand is
 * also broadcast from one value.  The test also requires that the loops
 * took a share of the elements of each op they plan, so that it compares
 * something.  USC_TEST_SCALE multiplies the element count.
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
#include "ulpscope/profile.h"

#include "oracles/domain.h"
#include "oracles/envelope.h"
#include "oracles/envelope_internal.h"

#define TIER_TEST_SEED 0x9e3779b97f4a7c15ull
#include "tier/tier_test_rng.h"

static const usc_dtype types[] = {USC_F32, USC_BF16, USC_F16};

static const char *const profiles[] = {"strict", "xla-cpu",
				       "xla-cpu-fast-math", "xla-gpu",
				       "xla-tpu"};

static const usc_hlo_opcode functions[] = {
	USC_HLO_OP_EXPONENTIAL, USC_HLO_OP_EXPONENTIAL_MINUS_ONE,
	USC_HLO_OP_LOG,         USC_HLO_OP_LOG_PLUS_ONE,
	USC_HLO_OP_TANH,        USC_HLO_OP_ERF,
	USC_HLO_OP_LOGISTIC,    USC_HLO_OP_SQRT,
	USC_HLO_OP_RSQRT,       USC_HLO_OP_CBRT};

/* x rounded to nearest into t (the codec), so that points are values. */
static double to_type(usc_dtype t, double x)
{
	uint64_t b = 0;
	double d = 0;

	(void)usc_encode_double(t, x, NULL, &b, NULL);
	(void)usc_decode_double(t, b, &d);
	return d;
}

/* A random magnitude over t's whole range and a little beyond. */
static double magnitude(const usc_float_info *fi)
{
	int e = fi->emin - fi->precision - 1 +
		(int)(rnd() % (uint64_t)(fi->emax - fi->emin + fi->precision +
					 4));

	return ldexp(1 + unif(), e);
}

/* A value near one of the points where the loops must refuse or clip. */
static double edge(const usc_float_info *fi)
{
	static const double e[] = {0, 1, -1, 0.5, -700, 2, 10, -10, 20, 88};
	double x;

	switch (rnd() % 4) {
	case 0: x = fi->min_normal; break;
	case 1: x = fi->max_finite; break;
	default: x = e[rnd() % (sizeof e / sizeof *e)]; break;
	}
	x += ldexp(unif() - 0.5, -(int)(rnd() % 30)) * (x != 0 ? fabs(x) : 1);
	return x;
}

/*
 * A double within half an ulp of f32 of a midpoint of t's values (or on
 * it): where rounding to f32 first and then to t differs from rounding
 * to t once, which random values almost never reach.
 */
static double near_midpoint(usc_dtype t)
{
	usc_float_info fi;
	double d, m;

	(void)usc_float_info_of(t, &fi);
	d = to_type(t, ldexp(1 + unif(), (int)(rnd() % 16) - 8));
	m = d + ldexp(1.0, ilogb(d) - fi.precision);
	if (rnd() % 4)
		m += (rnd() & 1 ? 1 : -1) * ldexp(m, -25 - (int)(rnd() % 6));
	return rnd() & 1 ? m : -m;
}

/* One random operand set of type t. */
static void operand(usc_dtype t, usc__envelope_value *v)
{
	usc_float_info fi;
	uint64_t kind = rnd() % 20;
	double a;

	(void)usc_float_info_of(t, &fi);
	a = kind < 3 ? edge(&fi) : magnitude(&fi);
	if (rnd() & 1)
		a = -a;
	if (kind < 8) {
		/* A point of t, with the sign of its zero. */
		a = to_type(t, a);
		if (!isfinite(a))
			a = copysign(fi.max_finite, a);
		usc__envelope_value_set(v, a, a);
		if (a == 0)
			v->flags = FIN | (signbit(a) ? ZNEG : ZPOS);
	} else {
		/* An interval: narrow, wide, or across zero. */
		double w = fabs(a) * ldexp(unif(), -(int)(rnd() % 40));
		double lo = a, hi = a + w;

		if (kind == 19)
			lo = -w;
		if (!isfinite(hi))
			hi = lo;
		usc__envelope_value_set(v, lo, hi);
	}
	switch (rnd() % 32) {
	case 0: v->flags |= USC__ENV_NAN; break;
	case 1: v->flags |= USC__ENV_POS_INF; break;
	case 2: v->flags |= USC__ENV_NEG_INF; break;
	case 3: v->flags = USC__ENV_UNKNOWN; break;
	default: break;
	}
	if (rnd() % 8 == 0)
		v->flags |= USC__ENV_FLUSHED;
	if (rnd() % 8 == 0)
		v->flags |= USC__ENV_APPROX;
	if (rnd() % 8 == 0)
		v->flags |= USC__ENV_RANGE_CLIPPED;
	if (rnd() % 8 == 0)
		v->flags |= USC__ENV_NO_SUBNORMAL;
	v->roundings = (float)(rnd() % 5);
}

static bool same_value(const usc__envelope_value *a,
		       const usc__envelope_value *b)
{
	return memcmp(&a->lo, &b->lo, sizeof a->lo) == 0 &&
	       memcmp(&a->hi, &b->hi, sizeof a->hi) == 0 &&
	       a->flags == b->flags && a->bits == b->bits &&
	       a->roundings == b->roundings;
}

/*
 * op on n random elements under the state's profile, loops on and off;
 * the elements must agree.  Returns how many the loops took.
 */
static uint64_t compare(void *st, const usc__dom_op *op, size_t n,
			const char *profile)
{
	usc__envelope_value *x = test_calloc(n, sizeof *x);
	usc__envelope_value *y = test_calloc(n, sizeof *y);
	usc__envelope_value *r1 = test_calloc(n, sizeof *r1);
	usc__envelope_value *r2 = test_calloc(n, sizeof *r2);
	const void *args[2] = {x, y};
	unsigned scalar = op->nargs == 2 && rnd() % 4 == 0 ? 2u : 0u;
	uint64_t before = usc__envelope_looped(st);
	usc_error err;

	for (size_t i = 0; i < n; i++) {
		operand(op->arg[0], &x[i]);
		if (op->nargs == 2)
			operand(op->arg[1], &y[i]);
		if (op->nargs == 2 && rnd() % 4 == 0) {
			/*
			 * An exact result near a midpoint of the result type:
			 * x near one, y a power of two (multiply, divide) or a value of
			 * the type at most a quarter of x's size (add,
			 * subtract), so that x op y keeps x's position.
			 */
			double a = near_midpoint(op->result), b;

			usc__envelope_value_set(&x[i], a, a);
			b = op->op == USC_HLO_OP_MULTIPLY ||
					    op->op == USC_HLO_OP_DIVIDE
				    ? ldexp(1.0, (int)(rnd() % 9) - 4)
				    : to_type(op->arg[1],
					      a * unif() / 4 * ldexp(1.0, -(int)(rnd() % 4)));
			b = to_type(op->arg[1], b);
			usc__envelope_value_set(&y[i], b, b);
		}
	}
	/* A broadcast operand: a plain one, else no element is plain. */
	if (scalar) {
		double v = to_type(op->arg[1], (1 + unif()) * (rnd() & 1 ? 1 : -1));

		usc__envelope_value_set(&y[0], v, v);
	}
	usc__envelope_set_loops(st, true);
	assert_int_equal(usc__domain_envelope.apply(st, op, n, r1, args,
						     scalar, &err),
			 USC_OK);
	usc__envelope_set_loops(st, false);
	assert_int_equal(usc__domain_envelope.apply(st, op, n, r2, args,
						     scalar, &err),
			 USC_OK);
	for (size_t i = 0; i < n; i++) {
		const usc__envelope_value *a = &x[i];
		const usc__envelope_value *b = scalar ? &y[0] : &y[i];

		if (same_value(&r1[i], &r2[i]))
			continue;
		print_error("%s: %s %s <- %s element %zu: x [%a, %a] %#x, "
			    "y [%a, %a] %#x: loops [%a, %a] %#x %g, per "
			    "element [%a, %a] %#x %g\n",
			    profile, usc_hlo_opcode_name(op->op),
			    usc_dtype_name(op->result),
			    usc_dtype_name(op->arg[0]), i, a->lo, a->hi,
			    a->flags, b->lo, b->hi, b->flags, r1[i].lo,
			    r1[i].hi, r1[i].flags, (double)r1[i].roundings,
			    r2[i].lo, r2[i].hi, r2[i].flags,
			    (double)r2[i].roundings);
		fail();
	}
	test_free(x);
	test_free(y);
	test_free(r1);
	test_free(r2);
	return usc__envelope_looped(st) - before;
}

static void test_loops_match_per_element(void **state)
{
	size_t n = 3000 * (size_t)scale();
	uint64_t compared = 0, looped = 0;

	(void)state;
	for (size_t pi = 0; pi < sizeof profiles / sizeof *profiles; pi++) {
		usc_profile prof;
		usc_error err;
		void *st = NULL;

		assert_int_equal(usc_profile_resolve(profiles[pi], &prof, &err),
				 USC_OK);
		assert_int_equal(usc__domain_envelope.create(&st, &err),
				 USC_OK);
		assert_int_equal(usc__envelope_set_profile(st, &prof, &err),
				 USC_OK);
		for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
			usc_dtype t = types[ti];
			usc__dom_op op;
			uint64_t got;

			memset(&op, 0, sizeof op);
			op.result = t;
			op.arg[0] = op.arg[1] = t;
			op.nargs = 2;
			for (int k = 0; k < 4; k++) {
				op.op = k == 0	 ? USC_HLO_OP_ADD
					: k == 1 ? USC_HLO_OP_SUBTRACT
					: k == 2 ? USC_HLO_OP_MULTIPLY
						 : USC_HLO_OP_DIVIDE;
				got = compare(st, &op, n, profiles[pi]);
				/*
				 * Random operands: most are plain.  A divide
				 * rewritten for constant divisors only, here
				 * without an instruction, stays per element.
				 */
				if (op.op == USC_HLO_OP_DIVIDE &&
				    prof.divide_reciprocal ==
					    USC_DIV_RECIP_CONSTANT)
					assert_true(got == 0);
				else
					assert_true(got > n / 10);
				looped += got;
				compared += n;
			}
			op.nargs = 1;
			for (size_t f = 0;
			     f < sizeof functions / sizeof *functions; f++) {
				op.op = functions[f];
				got = compare(st, &op, n, profiles[pi]);
				assert_true(got > 0);
				looped += got;
				compared += n;
			}
			/*
			 * The exact ops env_apply completes without apply1
			 * (negate, maximum, minimum), counted with the loops.
			 */
			for (int k = 0; k < 3; k++) {
				op.op = k == 0	 ? USC_HLO_OP_NEGATE
					: k == 1 ? USC_HLO_OP_MAXIMUM
						 : USC_HLO_OP_MINIMUM;
				op.nargs = k == 0 ? 1 : 2;
				got = compare(st, &op, n, profiles[pi]);
				assert_true(got > n / 10);
				looped += got;
				compared += n;
			}
			op.nargs = 1;
			op.op = USC_HLO_OP_CONVERT;
			for (size_t u = 0; u < sizeof types / sizeof *types;
			     u++) {
				op.arg[0] = types[u];
				got = compare(st, &op, n, profiles[pi]);
				assert_true(got > n / 10);
				looped += got;
				compared += n;
			}
		}
		usc__domain_envelope.destroy(st);
	}
	printf("  %llu elements compared, %llu through the loops\n",
	       (unsigned long long)compared, (unsigned long long)looped);
}

/*
 * The domain's load_array against load, element by element: every bf16
 * and f16 encoding, and f32 encodings of every exponent (random
 * mantissas, zeros, subnormals, infinities and NaNs among them), stored
 * as a tensor stores them (little-endian containers).
 */
static void test_load_array_matches_load(void **state)
{
	enum { N = 65536 };
	static const usc_dtype lt[] = {USC_BF16, USC_F16, USC_F32, USC_F64,
				       USC_S32};
	unsigned char *enc = test_malloc(N * 8);
	usc__envelope_value *a = test_calloc(N, sizeof *a);
	usc__envelope_value *b = test_calloc(N, sizeof *b);
	void *st = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc__domain_envelope.create(&st, &err), USC_OK);
	for (size_t ti = 0; ti < sizeof lt / sizeof *lt; ti++) {
		usc_dtype t = lt[ti];
		size_t c = (size_t)usc_format_of(t)->container_bytes;

		for (size_t i = 0; i < N; i++) {
			uint64_t v = c == 2 ? i : rnd();

			/* f32: every exponent, its ends (0, 255) included. */
			if (t == USC_F32 && i % 2 == 0)
				v = (v & 0x807fffffu) |
				    ((uint64_t)(i / 2 % 256) << 23);
			if (t == USC_F32 && i % 64 == 1)
				v &= 0x80000000u;
			for (size_t k = 0; k < c; k++)
				enc[i * c + k] = (unsigned char)(v >> (8 * k));
			assert_int_equal(usc__domain_envelope.load(
						 st, t, usc__dom_get_enc(enc, c, i),
						 &b[i], &err),
					 USC_OK);
		}
		assert_true(usc__domain_envelope.load_array != NULL);
		assert_int_equal(usc__domain_envelope.load_array(st, t, enc, N,
								 a, &err),
				 USC_OK);
		for (size_t i = 0; i < N; i++) {
			if (same_value(&a[i], &b[i]) ||
			    (a[i].flags == USC__ENV_NAN &&
			     b[i].flags == USC__ENV_NAN))
				continue;
			print_error("%s encoding %#llx: load_array [%a, %a] "
				    "%#x, load [%a, %a] %#x\n",
				    usc_dtype_name(t),
				    (unsigned long long)usc__dom_get_enc(enc, c,
									 i),
				    a[i].lo, a[i].hi, a[i].flags, b[i].lo,
				    b[i].hi, b[i].flags);
			fail();
		}
	}
	usc__domain_envelope.destroy(st);
	test_free(enc);
	test_free(a);
	test_free(b);
}

/*
 * to_output with and without its in-line path for plain sets (off with
 * the loops): the same representative and certificate on random sets of
 * f32, bf16 and f16 (points and intervals over the whole range, across
 * zero, specials), and on the sets the loops compute (the loop test's
 * operands through a multiply under xla-cpu).
 */
static void test_to_output_matches(void **state)
{
	size_t n = 20000 * (size_t)scale();
	void *st = NULL;
	usc_error err;
	size_t plain = 0;

	(void)state;
	assert_int_equal(usc__domain_envelope.create(&st, &err), USC_OK);
	for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
		usc_dtype t = types[ti];
		usc_float_info fi;

		(void)usc_float_info_of(t, &fi);
		for (size_t i = 0; i < n; i++) {
			usc__envelope_value v;
			usc__envelope_elem e1, e2;
			uint64_t b1 = 0, b2 = 0;

			operand(t, &v);
			if (rnd() % 4 == 0) {
				/* A narrow set inside the normal range. */
				double a = to_type(t, magnitude(&fi));

				usc__envelope_value_set(&v, a, a * (1 + ldexp(unif(), -(int)(rnd() % 30))));
			}
			memset(&e1, 0xa5, sizeof e1);
			memset(&e2, 0x5a, sizeof e2);
			usc__envelope_set_loops(st, true);
			assert_int_equal(usc__domain_envelope.to_output(
						 st, t, &v, &b1, &e1, &err),
					 USC_OK);
			usc__envelope_set_loops(st, false);
			assert_int_equal(usc__domain_envelope.to_output(
						 st, t, &v, &b2, &e2, &err),
					 USC_OK);
			if (b1 == b2 && e1.flags == e2.flags &&
			    memcmp(&e1.lo, &e2.lo, sizeof e1.lo) == 0 &&
			    memcmp(&e1.hi, &e2.hi, sizeof e1.hi) == 0 &&
			    e1.roundings == e2.roundings) {
				plain += (v.flags & USC__ENV_FINITE) && v.lo > 0;
				continue;
			}
			print_error("%s [%a, %a] %#x: in line %#llx [%a, %a] "
				    "%#x, general %#llx [%a, %a] %#x\n",
				    usc_dtype_name(t), v.lo, v.hi, v.flags,
				    (unsigned long long)b1, e1.lo, e1.hi,
				    e1.flags, (unsigned long long)b2, e2.lo,
				    e2.hi, e2.flags);
			fail();
		}
	}
	assert_true(plain > n / 4);
	usc__domain_envelope.destroy(st);
}

/* A fresh envelope state under the built-in profile name. */
static void *state_under(const char *name)
{
	usc_profile prof;
	usc_error err;
	void *st = NULL;

	assert_int_equal(usc_profile_resolve(name, &prof, &err), USC_OK);
	assert_int_equal(usc__domain_envelope.create(&st, &err), USC_OK);
	assert_int_equal(usc__envelope_set_profile(st, &prof, &err), USC_OK);
	return st;
}

/*
 * The plan an envelope state keeps for an equal op (usc__env_fast_plan)
 * is dropped when the profile or a switch changes: exp in f32 under
 * strict, then the same op on the same state under xla-cpu (whose exp
 * has a window of several ulps) gives what a fresh xla-cpu state gives,
 * bit for bit, and not the strict sets; with the loops switched off no
 * element goes through them, and with MPFR switched on none is decided
 * in double.
 */
static void test_plan_forgotten(void **state)
{
	enum { N = 1000 };
	usc__envelope_value *x = test_calloc(N, sizeof *x);
	usc__envelope_value *r1 = test_calloc(N, sizeof *r1);
	usc__envelope_value *r2 = test_calloc(N, sizeof *r2);
	usc__envelope_value *r3 = test_calloc(N, sizeof *r3);
	const void *args[1] = {x};
	void *st = state_under("strict"), *fresh = state_under("xla-cpu");
	usc_profile prof;
	usc__dom_op op;
	usc_error err;
	uint64_t looped, fast, esc, fast2;
	size_t differ = 0;

	(void)state;
	memset(&op, 0, sizeof op);
	op.op = USC_HLO_OP_EXPONENTIAL;
	op.result = op.arg[0] = USC_F32;
	op.nargs = 1;
	for (size_t i = 0; i < N; i++) {
		double v = to_type(USC_F32, ldexp(1 + unif(), -4) *
						    (rnd() & 1 ? 1 : -1));

		usc__envelope_value_set(&x[i], v, v);
	}
	assert_int_equal(usc__domain_envelope.apply(st, &op, N, r1, args, 0,
						     &err),
			 USC_OK);
	assert_int_equal(usc_profile_resolve("xla-cpu", &prof, &err), USC_OK);
	assert_int_equal(usc__envelope_set_profile(st, &prof, &err), USC_OK);
	assert_int_equal(usc__domain_envelope.apply(st, &op, N, r2, args, 0,
						     &err),
			 USC_OK);
	assert_int_equal(usc__domain_envelope.apply(fresh, &op, N, r3, args,
						     0, &err),
			 USC_OK);
	for (size_t i = 0; i < N; i++) {
		assert_true(same_value(&r2[i], &r3[i]));
		differ += !same_value(&r1[i], &r2[i]);
	}
	assert_true(differ > N / 2);
	/* The loops off: the same sets, none through the loops. */
	looped = usc__envelope_looped(st);
	usc__envelope_set_loops(st, false);
	assert_int_equal(usc__domain_envelope.apply(st, &op, N, r1, args, 0,
						     &err),
			 USC_OK);
	assert_true(usc__envelope_looped(st) == looped);
	for (size_t i = 0; i < N; i++)
		assert_true(same_value(&r1[i], &r3[i]));
	usc__envelope_set_loops(st, true);
	assert_int_equal(usc__domain_envelope.apply(st, &op, N, r1, args, 0,
						     &err),
			 USC_OK);
	assert_true(usc__envelope_looped(st) > looped);
	/* MPFR everywhere: no element decided in double. */
	usc__envelope_counts(st, &fast, &esc);
	usc__envelope_set_mpfr_only(st, true);
	assert_int_equal(usc__domain_envelope.apply(st, &op, N, r1, args, 0,
						     &err),
			 USC_OK);
	usc__envelope_counts(st, &fast2, &esc);
	assert_true(fast2 == fast);
	usc__domain_envelope.destroy(st);
	usc__domain_envelope.destroy(fresh);
	test_free(x);
	test_free(r1);
	test_free(r2);
	test_free(r3);
}

/*
 * The plan kept between apply calls (usc__env_fast_plan keeps the last
 * plan in place and clears only its op at the end of a call): one state
 * applying different ops in turn, through one op struct changed in place
 * and through a copy of it, gives every op what a fresh state gives it,
 * bit for bit.
 */
static void test_plan_kept(void **state)
{
	enum { N = 600, STEPS = 7 };
	static const usc_hlo_opcode ops[STEPS] = {
		USC_HLO_OP_EXPONENTIAL, USC_HLO_OP_ADD, USC_HLO_OP_EXPONENTIAL,
		USC_HLO_OP_MULTIPLY, USC_HLO_OP_TANH, USC_HLO_OP_CONVERT,
		USC_HLO_OP_EXPONENTIAL};
	static const usc_dtype res[STEPS] = {USC_F32, USC_F32, USC_BF16,
					     USC_F32, USC_F16, USC_BF16,
					     USC_F32};
	usc__envelope_value *x = test_calloc(N, sizeof *x);
	usc__envelope_value *r1 = test_calloc(N, sizeof *r1);
	usc__envelope_value *r2 = test_calloc(N, sizeof *r2);
	void *st = state_under("xla-cpu");
	usc__dom_op op, copy;
	usc_error err;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		double v = to_type(USC_BF16, ldexp(1 + unif(), -3) *
						     (rnd() & 1 ? 1 : -1));

		usc__envelope_value_set(&x[i], v, v);
	}
	for (int k = 0; k < 2 * STEPS; k++) {
		const void *args[2] = {x, x};
		void *fresh = state_under("xla-cpu");
		const usc__dom_op *use = &op;
		int j = k % STEPS;

		memset(&op, 0, sizeof op);
		op.op = ops[j];
		op.result = res[j];
		op.arg[0] = op.arg[1] = USC_F32;
		op.nargs = ops[j] == USC_HLO_OP_ADD ||
					   ops[j] == USC_HLO_OP_MULTIPLY
				   ? 2
				   : 1;
		if (k >= STEPS) {
			/* The same fields at another address. */
			copy = op;
			use = &copy;
		}
		assert_int_equal(usc__domain_envelope.apply(st, use, N, r1,
							     args, 0, &err),
				 USC_OK);
		assert_int_equal(usc__domain_envelope.apply(fresh, use, N, r2,
							     args, 0, &err),
				 USC_OK);
		for (size_t i = 0; i < N; i++)
			assert_true(same_value(&r1[i], &r2[i]));
		usc__domain_envelope.destroy(fresh);
	}
	/* Some of it went through the loops, with the plan taken back. */
	assert_true(usc__envelope_looped(st) > (uint64_t)N * STEPS);
	usc__domain_envelope.destroy(st);
	test_free(x);
	test_free(r1);
	test_free(r2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loops_match_per_element),
		cmocka_unit_test(test_load_array_matches_load),
		cmocka_unit_test(test_to_output_matches),
		cmocka_unit_test(test_plan_forgotten),
		cmocka_unit_test(test_plan_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
