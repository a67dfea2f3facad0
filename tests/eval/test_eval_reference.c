/*
 * The reference domain against MPFR called directly, bit for bit.
 *
 * The expected value of every op comes from its own code path here, in
 * the manner of CORE-MATH's *_mpfr.c twins: MPFR emulates the target
 * format (mpfr_init2 to its precision, mpfr_set_emin/emax to its range,
 * mpfr_check_range and mpfr_subnormalize), so MPFR's own correct rounding
 * gives the expected result; the format's conventions that MPFR cannot
 * emulate are applied by hand (no Inf in fn/fnuz formats: overflow is
 * NaN; e4m3fn's top code is NaN, so anything above 448 overflows;
 * f8e8m0fnu has no zero and no sign).  The library's encoder is used only
 * to write an already representable value as bits.  The function without
 * an MPFR twin, logistic, is computed at 400 bits and rounded once into
 * the emulated format.  NaNs compare equal whatever their bits; +0 and -0
 * differ.
 *
 * Coverage: every unary op over every code of each 8-bit float format and
 * every bf16 code (bf16 strided by default; USC_TEST_SCALE=16 makes it
 * exhaustive), every binary op over the 65536 code pairs of f8e4m3fn and
 * f8e5m2 (one pair in four by default; all at USC_TEST_SCALE=4), and
 * random f16/f32 samples (USC_TEST_SCALE scales their count).
 *
 * Every test runs twice: on the MPFR reference domain and on the fast
 * reference (oracles/reference_fast.h), which must give the same bits.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mpfr.h>

#include "internal.h"
#include "test_util.h"
#include "oracles/domain.h"
#include "oracles/reference_fast.h"
#include "ulpscope/dtype_mpfr.h"

#define NAN_MARK UINT64_MAX

/* ------------------------------------------------- the MPFR twin */

typedef int (*fn1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
typedef int (*fn2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

static int t_logistic(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	mpfr_t t;
	int inex;

	mpfr_init2(t, 400);
	mpfr_neg(t, x, MPFR_RNDN);
	mpfr_exp(t, t, MPFR_RNDN);
	mpfr_add_ui(t, t, 1, MPFR_RNDN);
	mpfr_ui_div(t, 1, t, MPFR_RNDN);
	inex = mpfr_set(y, t, r);
	mpfr_clear(t);
	return inex;
}

/* IEEE 754 rSqrt: rSqrt(-0) = -Inf, where MPFR's rec_sqrt gives +Inf. */
static int t_rsqrt(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	if (mpfr_zero_p(x) && mpfr_signbit(x)) {
		mpfr_set_inf(y, -1);
		return 0;
	}
	return mpfr_rec_sqrt(y, x, r);
}

/* Ops with an exact result, computed exactly (MPFR at 64 bits). */
static int t_negate(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_neg(y, x, r);
}
static int t_abs(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_abs(y, x, r);
}
static int t_sign(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	if (mpfr_nan_p(x) || mpfr_zero_p(x))
		return mpfr_set(y, x, MPFR_RNDN);
	return mpfr_set_si(y, mpfr_sgn(x) > 0 ? 1 : -1, MPFR_RNDN);
}
static int t_floor(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	return mpfr_floor(y, x);
}
static int t_ceil(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	return mpfr_ceil(y, x);
}
static int t_round_afz(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	return mpfr_round(y, x);
}
static int t_round_even(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	(void)r;
	return mpfr_roundeven(y, x);
}

typedef struct unary_case {
	usc_hlo_opcode op;
	fn1 f;
	bool exact; /* computed wide, then rounded (no twin at p) */
} unary_case;

static const unary_case unary_cases[] = {
	{USC_HLO_OP_NEGATE, t_negate, true},
	{USC_HLO_OP_ABS, t_abs, true},
	{USC_HLO_OP_SIGN, t_sign, true},
	{USC_HLO_OP_FLOOR, t_floor, true},
	{USC_HLO_OP_CEIL, t_ceil, true},
	{USC_HLO_OP_ROUND_NEAREST_AFZ, t_round_afz, true},
	{USC_HLO_OP_ROUND_NEAREST_EVEN, t_round_even, true},
	{USC_HLO_OP_EXPONENTIAL, mpfr_exp, false},
	{USC_HLO_OP_EXPONENTIAL_MINUS_ONE, mpfr_expm1, false},
	{USC_HLO_OP_LOG, mpfr_log, false},
	{USC_HLO_OP_LOG_PLUS_ONE, mpfr_log1p, false},
	{USC_HLO_OP_LOGISTIC, t_logistic, true},
	{USC_HLO_OP_TANH, mpfr_tanh, false},
	{USC_HLO_OP_ERF, mpfr_erf, false},
	{USC_HLO_OP_SQRT, mpfr_sqrt, false},
	{USC_HLO_OP_RSQRT, t_rsqrt, false},
	{USC_HLO_OP_CBRT, mpfr_cbrt, false},
	{USC_HLO_OP_SINE, mpfr_sin, false},
	{USC_HLO_OP_COSINE, mpfr_cos, false},
	{USC_HLO_OP_TAN, mpfr_tan, false},
	{USC_HLO_OP_ATAN, mpfr_atan, false},
	{USC_HLO_OP_SINH, mpfr_sinh, false},
};

typedef struct binary_case {
	usc_hlo_opcode op;
	fn2 f; /* NULL: max/min by hand */
} binary_case;

static const binary_case binary_cases[] = {
	{USC_HLO_OP_ADD, mpfr_add},     {USC_HLO_OP_SUBTRACT, mpfr_sub},
	{USC_HLO_OP_MULTIPLY, mpfr_mul}, {USC_HLO_OP_DIVIDE, mpfr_div},
	{USC_HLO_OP_POWER, mpfr_pow},   {USC_HLO_OP_ATAN2, mpfr_atan2},
	{USC_HLO_OP_REMAINDER, mpfr_fmod}, {USC_HLO_OP_MAXIMUM, NULL},
	{USC_HLO_OP_MINIMUM, NULL},
};

/*
 * y (already rounded into the format's precision and range, or NaN/Inf)
 * as bits, with the overflow conventions MPFR does not know.
 */
static uint64_t to_bits(usc_dtype t, mpfr_srcptr y)
{
	const usc_format *f = usc_format_of(t);
	usc_float_info fi;
	uint64_t bits = 0;
	mpfr_t m;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	if (mpfr_nan_p(y))
		return NAN_MARK;
	mpfr_init2(m, 64);
	mpfr_set_d(m, fi.max_finite, MPFR_RNDN);
	if (mpfr_inf_p(y) || mpfr_cmpabs(y, m) > 0) {
		mpfr_clear(m);
		if (f->inf == USC_INF_IEEE)
			return fi.inf_bits | (mpfr_signbit(y) ? fi.sign_mask : 0);
		if (f->nan != USC_NAN_NONE)
			return NAN_MARK;
		return fi.max_finite_bits | (mpfr_signbit(y) ? fi.sign_mask : 0);
	}
	mpfr_clear(m);
	/* Exact: y is representable in t. */
	assert_int_equal(usc_encode_mpfr(t, y, NULL, &bits, NULL), USC_OK);
	return bits;
}

/* f8e8m0fnu: powers of two 2^-127..2^127, ties up, no zero, no sign. */
static uint64_t e8m0_bits(mpfr_srcptr z)
{
	mpfr_t h;
	long e;
	uint64_t bits;

	if (mpfr_nan_p(z) || mpfr_inf_p(z) || mpfr_sgn(z) <= 0)
		return NAN_MARK;
	mpfr_init2(h, 8);
	/*
	 * z = m 2^e with 1/2 <= m < 1: the candidates are 2^(e-1) and 2^e,
	 * the tie 0.75 2^e = 3 2^(e-2) goes up.
	 */
	e = mpfr_get_exp(z);
	mpfr_set_ui_2exp(h, 3, e - 2, MPFR_RNDN);
	if (mpfr_cmp(z, h) < 0)
		e = e - 1;
	mpfr_clear(h);
	if (e < -127)
		e = -127;
	if (e > 127)
		return NAN_MARK;
	bits = (uint64_t)(e + 127);
	return bits;
}

static void emulate(usc_dtype t, mpfr_exp_t *saved_emin, mpfr_exp_t *saved_emax)
{
	usc_float_info fi;

	usc_float_info_of(t, &fi);
	*saved_emin = mpfr_get_emin();
	*saved_emax = mpfr_get_emax();
	/* The smallest subnormal 2^(emin - p + 1) is 0.5 * 2^(emin - p + 2). */
	mpfr_set_emin(fi.emin - fi.precision + 2);
	mpfr_set_emax(fi.emax + 1);
}

static void unemulate(mpfr_exp_t emin, mpfr_exp_t emax)
{
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
}

/* The expected code of f(x[, y]) in t, by MPFR's emulation. */
static uint64_t expect(usc_dtype t, fn1 f1, fn2 f2, bool wide, uint64_t xa,
		       uint64_t xb)
{
	usc_float_info fi;
	mpfr_t a, b, y, z;
	mpfr_exp_t emin, emax;
	uint64_t bits;
	int inex;

	usc_float_info_of(t, &fi);
	mpfr_inits2(64, a, b, (mpfr_ptr)0);
	mpfr_init2(y, fi.precision);
	mpfr_init2(z, 400);
	usc_decode_mpfr(t, xa, a);
	usc_decode_mpfr(t, xb, b);
	if (t == USC_F8E8M0FNU) {
		if (f1)
			f1(z, a, MPFR_RNDN);
		else
			f2(z, a, b, MPFR_RNDN);
		bits = e8m0_bits(z);
		goto done;
	}
	emulate(t, &emin, &emax);
	if (wide) {
		mpfr_exp_t e1 = mpfr_get_emin(), e2 = mpfr_get_emax();

		mpfr_set_emin(mpfr_get_emin_min());
		mpfr_set_emax(mpfr_get_emax_max());
		if (f1)
			inex = f1(z, a, MPFR_RNDN);
		else
			inex = f2(z, a, b, MPFR_RNDN);
		mpfr_set_emin(e1);
		mpfr_set_emax(e2);
		inex = mpfr_set(y, z, MPFR_RNDN);
	} else if (f1) {
		inex = f1(y, a, MPFR_RNDN);
	} else {
		inex = f2(y, a, b, MPFR_RNDN);
	}
	inex = mpfr_check_range(y, inex, MPFR_RNDN);
	mpfr_subnormalize(y, inex, MPFR_RNDN);
	unemulate(emin, emax);
	bits = to_bits(t, y);
done:
	mpfr_clears(a, b, y, z, (mpfr_ptr)0);
	return bits;
}

/* XLA's NaN-propagating maximum/minimum, with max(-0, +0) = +0. */
static uint64_t expect_maxmin(usc_dtype t, bool is_max, uint64_t a,
			      uint64_t b)
{
	double x, y;

	usc_decode_double(t, a, &x);
	usc_decode_double(t, b, &y);
	if (isnan(x) || isnan(y))
		return NAN_MARK;
	if (x == y && x == 0)
		return (is_max ? !signbit(x) : signbit(x) != 0) ? a : b;
	return (is_max ? x >= y : x <= y) ? a : b;
}

/* ------------------------------------------------ domain under test */

/* The domain the tests run on (main runs them on both). */
static const usc__domain_ops *under_test = &usc__domain_reference;

typedef struct dom {
	void *st;
	const usc__domain_ops *d;
} dom;

static void dom_open(dom *d)
{
	usc_error err;

	d->d = under_test;
	assert_int_equal(d->d->create(&d->st, &err), USC_OK);
}

static void dom_close(dom *d)
{
	d->d->destroy(d->st);
}

static uint64_t got1(dom *d, usc_hlo_opcode op, usc_dtype t, usc_dtype rt,
		     uint64_t a, uint64_t b, unsigned nargs)
{
	usc__dom_op o;
	uint64_t va, vb, out = 0;
	const void *args[2] = {&va, &vb};
	usc_error err;

	memset(&o, 0, sizeof o);
	o.op = op;
	o.result = rt;
	o.nargs = nargs;
	o.arg[0] = o.arg[1] = t;
	d->d->load(d->st, t, a, &va, &err);
	d->d->load(d->st, t, b, &vb, &err);
	if (d->d->apply(d->st, &o, 1, &out, args, 0, &err) != USC_OK)
		fail_msg("%s: %s", usc_hlo_opcode_name(op), err.message);
	d->d->to_output(d->st, rt, &out, &out, NULL, &err);
	return out;
}

static bool same(usc_dtype t, uint64_t got, uint64_t want)
{
	if (want == NAN_MARK)
		return usc_bits_is_nan(t, got);
	return got == want;
}

static long check_unary(dom *d, usc_dtype t, uint64_t code,
			const unary_case *c)
{
	uint64_t want = expect(t, c->f, NULL, c->exact, code, 0);
	uint64_t got = got1(d, c->op, t, t, code, 0, 1);

	if (!same(t, got, want)) {
		double x;

		usc_decode_double(t, code, &x);
		fail_msg("%s %s(0x%llx = %a): got 0x%llx, want 0x%llx",
			 usc_dtype_name(t), usc_hlo_opcode_name(c->op),
			 (unsigned long long)code, x, (unsigned long long)got,
			 (unsigned long long)want);
	}
	return 1;
}

static long check_binary(dom *d, usc_dtype t, uint64_t a, uint64_t b,
			 const binary_case *c)
{
	uint64_t want, got;

	if (c->f)
		want = expect(t, NULL, c->f, false, a, b);
	else
		want = expect_maxmin(t, c->op == USC_HLO_OP_MAXIMUM, a, b);
	got = got1(d, c->op, t, t, a, b, 2);
	if (!same(t, got, want)) {
		double x, y;

		usc_decode_double(t, a, &x);
		usc_decode_double(t, b, &y);
		fail_msg("%s %s(%a, %a): got 0x%llx, want 0x%llx",
			 usc_dtype_name(t), usc_hlo_opcode_name(c->op), x, y,
			 (unsigned long long)got, (unsigned long long)want);
	}
	return 1;
}

/* ------------------------------------------------------------ tests */

static const usc_dtype fp8[] = {
	USC_F8E5M2,     USC_F8E4M3,       USC_F8E4M3FN,
	USC_F8E4M3FNUZ, USC_F8E4M3B11FNUZ, USC_F8E5M2FNUZ,
	USC_F8E3M4,     USC_F8E8M0FNU,
};

static void test_unary_fp8_exhaustive(void **state)
{
	dom d;
	long n = 0;
	size_t i, k;
	uint64_t code;

	(void)state;
	dom_open(&d);
	for (i = 0; i < USC__ARRAY_LEN(fp8); i++)
		for (k = 0; k < USC__ARRAY_LEN(unary_cases); k++)
			for (code = 0; code < 256; code++)
				n += check_unary(&d, fp8[i], code,
						 &unary_cases[k]);
	dom_close(&d);
	printf("fp8 unary: %ld checks\n", n);
}

static void test_unary_bf16(void **state)
{
	dom d;
	long n = 0;
	size_t k;
	uint64_t code, step;

	(void)state;
	/* Exhaustive at USC_TEST_SCALE >= 16; a stride of 16/scale below. */
	step = (uint64_t)(16 / usc_test_scale());
	if (step < 1)
		step = 1;
	dom_open(&d);
	for (k = 0; k < USC__ARRAY_LEN(unary_cases); k++)
		for (code = 0; code < 65536; code += step) {
			n += check_unary(&d, USC_BF16, code, &unary_cases[k]);
			/* Odd codes too, whatever the stride. */
			if (step > 1)
				n += check_unary(&d, USC_BF16, code + 1,
						 &unary_cases[k]);
		}
	dom_close(&d);
	printf("bf16 unary: %ld checks (stride %llu)\n", n,
	       (unsigned long long)step);
}

static void test_binary_fp8_pairs(void **state)
{
	static const usc_dtype types[] = {USC_F8E4M3FN, USC_F8E5M2};
	dom d;
	long n = 0;
	size_t i, k;
	uint64_t a, b, step;

	(void)state;
	/*
	 * Every pair at USC_TEST_SCALE >= 4; below, the pairs with
	 * (7a + b) mod (4/scale) = 0, which still meet every code as a and
	 * as b and every low bit pattern.
	 */
	step = (uint64_t)(4 / usc_test_scale());
	if (step < 1)
		step = 1;
	dom_open(&d);
	for (i = 0; i < USC__ARRAY_LEN(types); i++)
		for (k = 0; k < USC__ARRAY_LEN(binary_cases); k++)
			for (a = 0; a < 256; a++)
				for (b = 0; b < 256; b++)
					if ((7 * a + b) % step == 0)
						n += check_binary(
							&d, types[i], a, b,
							&binary_cases[k]);
	dom_close(&d);
	printf("fp8 binary pairs: %ld checks (1 in %llu)\n", n,
	       (unsigned long long)step);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* splitmix64 (test_util.h): deterministic, so failures reproduce. */
static uint64_t rnd(void)
{
	return usc_test_splitmix64(&rng_state);
}

/* Random codes, biased toward exponents near 0 where results are rich. */
static uint64_t rnd_code(usc_dtype t)
{
	uint64_t r = rnd();

	if (t == USC_F32) {
		if (r & 1)
			return (r >> 32) & 0xffffffffu;
		/* |x| in [2^-8, 2^8). */
		return ((r >> 32) & 0x807fffffu) |
		       ((uint64_t)(119 + (r >> 8) % 16) << 23);
	}
	return (r >> 16) & 0xffff;
}

static void test_random_f16_f32(void **state)
{
	static const usc_dtype types[] = {USC_F16, USC_F32};
	long per = 300L * usc_test_scale(), n = 0, j;
	dom d;
	size_t i, k;

	(void)state;
	dom_open(&d);
	for (i = 0; i < USC__ARRAY_LEN(types); i++) {
		for (k = 0; k < USC__ARRAY_LEN(unary_cases); k++)
			for (j = 0; j < per; j++)
				n += check_unary(&d, types[i],
						 rnd_code(types[i]),
						 &unary_cases[k]);
		for (k = 0; k < USC__ARRAY_LEN(binary_cases); k++)
			for (j = 0; j < per; j++)
				n += check_binary(&d, types[i],
						  rnd_code(types[i]),
						  rnd_code(types[i]),
						  &binary_cases[k]);
	}
	dom_close(&d);
	printf("f16/f32 random: %ld checks\n", n);
}

/* Hard-wired exact cases the Ziv loop must end on. */
static void test_exact_cases(void **state)
{
	dom d;

	(void)state;
	dom_open(&d);
	/* exp(0) = 1, log(1) = 0, sqrt(4) = 2, pow(9, 0.5) = 3 in f32. */
	assert_int_equal(got1(&d, USC_HLO_OP_EXPONENTIAL, USC_F32, USC_F32, 0,
			      0, 1),
			 0x3f800000);
	assert_int_equal(got1(&d, USC_HLO_OP_LOG, USC_F32, USC_F32,
			      0x3f800000, 0, 1),
			 0);
	assert_int_equal(got1(&d, USC_HLO_OP_POWER, USC_F32, USC_F32,
			      0x41100000, 0x3f000000, 2),
			 0x40400000);
	/* tanh(f32 max) = 1, logistic(0) = 0.5, logistic(-100) tiny. */
	assert_int_equal(got1(&d, USC_HLO_OP_TANH, USC_F32, USC_F32,
			      0x7f7fffff, 0, 1),
			 0x3f800000);
	assert_int_equal(got1(&d, USC_HLO_OP_LOGISTIC, USC_F32, USC_F32, 0, 0,
			      1),
			 0x3f000000);
	/* exp(-1000) underflows to +0 in f64; pow(NaN, 0) = 1. */
	assert_int_equal(got1(&d, USC_HLO_OP_EXPONENTIAL, USC_F64, USC_F64,
			      0xc08f400000000000ull, 0, 1),
			 0);
	assert_int_equal(got1(&d, USC_HLO_OP_POWER, USC_F32, USC_F32,
			      0x7fc00000, 0, 2),
			 0x3f800000);
	/* exp(1) in f64 = 0x4005bf0a8b145769 (e's correctly rounded double). */
	assert_int_equal(got1(&d, USC_HLO_OP_EXPONENTIAL, USC_F64, USC_F64,
			      0x3ff0000000000000ull, 0, 1),
			 0x4005bf0a8b145769ull);
	dom_close(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_cases),
		cmocka_unit_test(test_unary_fp8_exhaustive),
		cmocka_unit_test(test_unary_bf16),
		cmocka_unit_test(test_binary_fp8_pairs),
		cmocka_unit_test(test_random_f16_f32),
	};

	int failed;

	under_test = &usc__domain_reference;
	failed = cmocka_run_group_tests_name("mpfr reference", tests, NULL,
					     NULL);
	under_test = &usc__domain_reference_fast;
	failed += cmocka_run_group_tests_name("fast reference", tests, NULL,
					      NULL);
	return failed;
}
