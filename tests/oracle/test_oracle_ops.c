/*
 * Hand-derived cases of the oracle: decisions (rounding and ULP error),
 * the discrete ops (compare, select, floor, float-to-int convert), the
 * encoding ops (bitcast-convert, quantizing convert and reduce-precision),
 * IEEE special values, and to_output's certificate.  Every expected
 * value is worked out in the comment beside it, in C99 hex floats.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "oracle_test_util.h"

typedef struct fixture {
	void *s;
	ovalue v[4];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);

	f->s = ot_create(96, false);
	usc__domain_oracle.init(f->s, f->v, 4);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	usc__domain_oracle.clear(f->s, f->v, 4);
	usc__domain_oracle.destroy(f->s);
	free(f);
	return 0;
}

/* out = op(v[0], v[1], v[2]) of the given types. */
static void run(fixture *f, usc__dom_op *op, ovalue *out)
{
	const void *a[3] = {&f->v[0], &f->v[1], &f->v[2]};
	usc_error err;

	assert_int_equal(usc__domain_oracle.apply(f->s, op, 1, out, a, 0, &err),
			 USC_OK);
}

static void test_decide_rounding(void **state)
{
	fixture *f = *state;
	bool d;
	uint64_t b;

	/* bf16 has 8 bits: 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7. */
	ot_set(&f->v[0], 0x1.01p0 - 0x1p-30, 0x1.01p0 + 0x1p-30);
	assert_int_equal(usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d,
						     &b, NULL), USC_OK);
	assert_false(d);
	/* Strictly below the midpoint: 1.0 = 0x3F80. */
	ot_set(&f->v[0], 0x1.008p0, 0x1.00fffp0);
	usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d, &b, NULL);
	assert_true(d);
	assert_int_equal(b, 0x3F80);
	/* Strictly above: 1 + 2^-7 = 0x3F81. */
	ot_set(&f->v[0], 0x1.0101p0, 0x1.018p0);
	usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d, &b, NULL);
	assert_true(d);
	assert_int_equal(b, 0x3F81);
	/* The exact tie rounds to even: 0x3F80. */
	ot_set(&f->v[0], 0x1.01p0, 0x1.01p0);
	usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d, &b, NULL);
	assert_true(d);
	assert_int_equal(b, 0x3F80);
	/* Past bf16's max 0x1.fep127 by more than half an ulp: +Inf. */
	ot_set(&f->v[0], 0x1.ffp127, 0x1p200);
	usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d, &b, NULL);
	assert_true(d);
	assert_int_equal(b, 0x7F80);
	/* Around zero: -0 and +0 differ in bf16, not in f8e4m3fnuz. */
	ot_set(&f->v[0], -0x1p-200, 0x1p-200);
	usc__oracle_decide_rounding(&f->v[0], USC_BF16, &d, &b, NULL);
	assert_false(d);
	usc__oracle_decide_rounding(&f->v[0], USC_F8E4M3FNUZ, &d, &b, NULL);
	assert_true(d);
	assert_int_equal(b, 0);
	/* Not a float type. */
	assert_int_equal(usc__oracle_decide_rounding(&f->v[0], USC_S32, &d,
						     &b, NULL), USC_EINVAL);
}

static void test_ulp_error(void **state)
{
	fixture *f = *state;
	usc__oracle_ulp_error e;
	usc__oracle_resolution eighth = {0.125, 0}, two = {0, 2};

	/* y = 1 + 2^-7 (bf16 0x3F81) against exactly 1: one ulp. */
	ot_set(&f->v[0], 1.0, 1.0);
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x3F81, &eighth, &e,
				     NULL);
	assert_int_equal(e.kind, USC__ORC_FINITE);
	assert_true(e.lo == 1.0 && e.hi == 1.0 && e.decided);
	/* y* in [1, 1 + 2^-12]: error in [1 - 2^-5, 1], width 1/32. */
	ot_set(&f->v[0], 1.0, 0x1.001p0);
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x3F81, &eighth, &e,
				     NULL);
	assert_true(e.lo <= 1 - 0x1p-5 && e.hi >= 1.0 && e.decided);
	assert_true(e.hi - e.lo < 0.05);
	/* 2 significant digits need relative width 1/100: 1/32 is not. */
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x3F81, &two, &e,
				     NULL);
	assert_false(e.decided);
	/* Across the binade at 2 the ulp doubles: still enclosed. */
	ot_set(&f->v[0], 0x1.fffp0, 0x1.001p1);
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x4000, &eighth, &e,
				     NULL);
	assert_true(e.lo <= -0x1p-4 && e.hi >= 0x1p-5);
	/* NaN against NaN: 0; +Inf device against finite: +Inf. */
	ot_point(f->s, &f->v[0], NAN);
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x7FC0, NULL, &e, NULL);
	assert_true(e.decided && e.lo == 0 && e.kind == USC__ORC_FINITE);
	ot_set(&f->v[0], 1.0, 1.0);
	usc__oracle_decide_ulp_error(&f->v[0], USC_BF16, 0x7F80, NULL, &e, NULL);
	assert_int_equal(e.kind, USC__ORC_POS_INF);
}

static void test_specials(void **state)
{
	fixture *f = *state;
	usc__dom_op sub = ot_op(USC_HLO_OP_SUBTRACT, USC_F32, 2, USC_F32,
				USC_F32, USC_F32);
	usc__dom_op dv = ot_op(USC_HLO_OP_DIVIDE, USC_F32, 2, USC_F32, USC_F32,
			       USC_F32);
	usc__dom_op ex = ot_op(USC_HLO_OP_EXPONENTIAL, USC_F32, 1, USC_F32,
			       USC_F32, USC_F32);
	usc__dom_op lg = ot_op(USC_HLO_OP_LOG, USC_F32, 1, USC_F32, USC_F32,
			       USC_F32);

	/* inf - inf = NaN. */
	ot_point(f->s, &f->v[0], INFINITY);
	ot_point(f->s, &f->v[1], INFINITY);
	run(f, &sub, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_NAN);
	/* 1 / -0 = -Inf; 1 / [-1, 1] is undecided (a pole inside). */
	ot_point(f->s, &f->v[0], 1.0);
	ot_point(f->s, &f->v[1], -0.0);
	run(f, &dv, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_NEG_INF);
	ot_set(&f->v[1], -1.0, 1.0);
	run(f, &dv, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_UNDECIDED);
	/* 1 / Inf = +0 exactly. */
	ot_point(f->s, &f->v[1], INFINITY);
	run(f, &dv, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE &&
		    mpfi_is_zero(f->v[3].x) && f->v[3].flags == 0);
	/* exp(-inf) = +0; exp(1000) stays finite (no rounding to a type). */
	ot_point(f->s, &f->v[0], -INFINITY);
	run(f, &ex, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE && mpfi_is_zero(f->v[3].x));
	ot_point(f->s, &f->v[0], 1000.0);
	run(f, &ex, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_FINITE);
	assert_true(mpfr_get_exp(&f->v[3].x->left) > 1442);
	/* log: NaN on [-2, -1], undecided on [-1, 1], -Inf at 0. */
	ot_set(&f->v[0], -2.0, -1.0);
	run(f, &lg, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_NAN);
	ot_set(&f->v[0], -1.0, 1.0);
	run(f, &lg, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_UNDECIDED);
	ot_point(f->s, &f->v[0], 0.0);
	run(f, &lg, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_NEG_INF);
	/* Undecided propagates. */
	f->v[0].kind = USC__ORC_UNDECIDED;
	run(f, &ex, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
}

/*
 * Sine, cosine and tangent of an interval wider than their period.  The
 * image of such an interval is the whole range: [-1, 1] for sine and
 * cosine (a period is 2 pi < 7), every real for tangent (a pole every
 * pi).  The oracle must say so without reducing the endpoints: at an
 * exponent of 10^8 that reduction needs 10^8 bits of pi, and a kernel's
 * exact values reach it (expm1 of exp of 20 is about 2^(7e8)).  Before
 * the shortcut this test ran for hours; the narrow case must still be
 * MPFI's tight enclosure, checked against MPFR's cos(1) directly.
 */
static void test_trig_wide(void **state)
{
	fixture *f = *state;
	usc__dom_op co = ot_op(USC_HLO_OP_COSINE, USC_F32, 1, USC_F32,
			       USC_F32, USC_F32);
	usc__dom_op si = ot_op(USC_HLO_OP_SINE, USC_F32, 1, USC_F32, USC_F32,
			       USC_F32);
	usc__dom_op ta = ot_op(USC_HLO_OP_TAN, USC_F32, 1, USC_F32, USC_F32,
			       USC_F32);
	mpfr_t lo, hi, c;

	mpfr_inits2(96, lo, hi, c, (mpfr_ptr)0);
	/* [2^(10^8), 2^(10^8) (1 + 2^-60)]: a width of 2^(10^8 - 60). */
	mpfr_set_ui_2exp(lo, 1, 100000000, MPFR_RNDN);
	mpfr_set_ui_2exp(hi, 1, 100000000, MPFR_RNDN);
	mpfr_nextabove(hi);
	usc__oracle_value_set_interval(&f->v[0], lo, hi);
	run(f, &co, &f->v[3]);
	assert_int_equal(f->v[3].kind, USC__ORC_FINITE);
	assert_true(mpfr_cmp_si(&f->v[3].x->left, -1) == 0 &&
		    mpfr_cmp_si(&f->v[3].x->right, 1) == 0);
	run(f, &si, &f->v[3]);
	assert_true(mpfr_cmp_si(&f->v[3].x->left, -1) == 0 &&
		    mpfr_cmp_si(&f->v[3].x->right, 1) == 0);
	run(f, &ta, &f->v[3]);
	assert_true(mpfr_inf_p(&f->v[3].x->left) &&
		    mpfr_sgn(&f->v[3].x->left) < 0 &&
		    mpfr_inf_p(&f->v[3].x->right) &&
		    mpfr_sgn(&f->v[3].x->right) > 0);
	/* [0, 7]: wide by a small margin, the same whole range. */
	ot_set(&f->v[0], 0.0, 7.0);
	run(f, &co, &f->v[3]);
	assert_true(mpfr_cmp_si(&f->v[3].x->left, -1) == 0 &&
		    mpfr_cmp_si(&f->v[3].x->right, 1) == 0);
	/* [1, 1 + 2^-40]: cos(1) = 0.5403... lies inside, tightly. */
	ot_set(&f->v[0], 1.0, 1.0 + 0x1p-40);
	run(f, &co, &f->v[3]);
	mpfr_set_ui(c, 1, MPFR_RNDN);
	mpfr_cos(c, c, MPFR_RNDN);
	assert_true(mpfr_cmp(&f->v[3].x->left, c) <= 0 &&
		    mpfr_cmp(&f->v[3].x->right, c) >= 0);
	mpfr_sub(c, &f->v[3].x->right, &f->v[3].x->left, MPFR_RNDU);
	assert_true(mpfr_cmp_d(c, 0x1p-39) < 0);
	mpfr_clears(lo, hi, c, (mpfr_ptr)0);
}

static void test_discrete(void **state)
{
	fixture *f = *state;
	usc__dom_op fl = ot_op(USC_HLO_OP_FLOOR, USC_F32, 1, USC_F32, USC_F32,
			       USC_F32);
	usc__dom_op ce = ot_op(USC_HLO_OP_CEIL, USC_F32, 1, USC_F32, USC_F32,
			       USC_F32);
	usc__dom_op lt = ot_op(USC_HLO_OP_COMPARE, USC_PRED, 2, USC_F32,
			       USC_F32, USC_F32);
	usc__dom_op sel = ot_op(USC_HLO_OP_SELECT, USC_F32, 3, USC_PRED,
				USC_F32, USC_F32);
	usc__dom_op cvt = ot_op(USC_HLO_OP_CONVERT, USC_S32, 1, USC_F32,
				USC_F32, USC_F32);
	ovalue *p = &f->v[0];

	lt.cmp_dir = USC__CMP_LT;
	/* floor [2.9, 3.1] straddles 3: undecided; floor [3.1, 3.9] = 3. */
	ot_set(&f->v[0], 2.9, 3.1);
	run(f, &fl, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
	ot_set(&f->v[0], 3.1, 3.9);
	run(f, &fl, &f->v[3]);
	assert_true(mpfi_cmp_si(f->v[3].x, 3) == 0 && mpfi_is_zero(f->v[3].x) == 0);
	/* ceil [-0.75, -0.25] = -0. */
	ot_set(&f->v[0], -0.75, -0.25);
	run(f, &ce, &f->v[3]);
	assert_true(mpfi_is_zero(f->v[3].x) &&
		    f->v[3].flags == USC__ORC_NEG_ZERO);
	/* [1, 2] < 1.5: undecided; [1, 2] < 3: true; 3 < [1, 2]: false. */
	ot_set(&f->v[0], 1.0, 2.0);
	ot_set(&f->v[1], 1.5, 1.5);
	run(f, &lt, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
	ot_set(&f->v[1], 3.0, 3.0);
	run(f, &lt, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE && f->v[3].bits == 1);
	/* NaN compares unordered: LT false. */
	ot_point(f->s, &f->v[0], NAN);
	run(f, &lt, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE && f->v[3].bits == 0);
	/* select with an undecided predicate: undecided, unless alike. */
	p->kind = USC__ORC_UNDECIDED;
	ot_set(&f->v[1], 1.0, 1.0);
	ot_set(&f->v[2], 2.0, 2.0);
	run(f, &sel, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
	ot_set(&f->v[2], 1.0, 1.0);
	run(f, &sel, &f->v[3]);
	assert_false(usc__oracle_is_undecided(&f->v[3]));
	/* convert f32 -> s32 truncates: [2.5, 2.9] -> 2; [-0.5, 0.5] -> 0. */
	ot_set(&f->v[0], 2.5, 2.9);
	run(f, &cvt, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE && f->v[3].bits == 2);
	ot_set(&f->v[0], -0.5, 0.5);
	run(f, &cvt, &f->v[3]);
	assert_true(f->v[3].kind == USC__ORC_FINITE && f->v[3].bits == 0);
	ot_set(&f->v[0], 2.5, 3.5);
	run(f, &cvt, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
}

static void test_encodings(void **state)
{
	fixture *f = *state;
	usc__dom_op bc = ot_op(USC_HLO_OP_BITCAST_CONVERT, USC_S32, 1, USC_F32,
			       USC_F32, USC_F32);
	usc__dom_op cv = ot_op(USC_HLO_OP_CONVERT, USC_BF16, 1, USC_F32,
			       USC_F32, USC_F32);
	usc__dom_op rp = ot_op(USC_HLO_OP_REDUCE_PRECISION, USC_F32, 1,
			       USC_F32, USC_F32, USC_F32);
	void *q = ot_create(96, true);
	ovalue w[2];
	const void *a[1] = {&w[0]};
	usc_error err;

	/* bitcast of exactly 1 + 2^-30 rounds to f32 1.0 first: 0x3F800000. */
	ot_set(&f->v[0], 1 + 0x1p-30, 1 + 0x1p-30);
	run(f, &bc, &f->v[3]);
	assert_int_equal(f->v[3].bits, 0x3F800000);
	/* Straddling f32's midpoint 1 + 2^-24: undecided. */
	ot_set(&f->v[0], 1 + 0x1p-24 - 0x1p-40, 1 + 0x1p-24 + 0x1p-40);
	run(f, &bc, &f->v[3]);
	assert_true(usc__oracle_is_undecided(&f->v[3]));
	/* Without quantization a narrowing convert is the identity. */
	ot_set(&f->v[0], 1 + 0x1p-9, 1 + 0x1p-9);
	run(f, &cv, &f->v[3]);
	assert_true(mpfr_cmp_d(&f->v[3].x->left, 1 + 0x1p-9) == 0);
	rp.exponent_bits = 8;
	rp.mantissa_bits = 7;
	run(f, &rp, &f->v[3]);
	assert_true(mpfr_cmp_d(&f->v[3].x->left, 1 + 0x1p-9) == 0);
	/* With it, 1 + 2^-9 rounds to bf16 1.0 (below the midpoint 1 + 2^-8). */
	usc__domain_oracle.init(q, w, 2);
	ot_set(&w[0], 1 + 0x1p-9, 1 + 0x1p-9);
	assert_int_equal(usc__domain_oracle.apply(q, &cv, 1, &w[1], a, 0, &err),
			 USC_OK);
	assert_true(mpfr_cmp_d(&w[1].x->left, 1.0) == 0);
	ot_set(&w[0], 1 + 0x3p-9, 1 + 0x3p-9);
	assert_int_equal(usc__domain_oracle.apply(q, &rp, 1, &w[1], a, 0, &err),
			 USC_OK);
	assert_true(mpfr_cmp_d(&w[1].x->left, 1 + 0x1p-7) == 0);
	/* reduce-precision to 5 exponent bits: 2^20 overflows to +Inf. */
	rp.exponent_bits = 5;
	rp.mantissa_bits = 10;
	ot_set(&w[0], 0x1p20, 0x1p20);
	assert_int_equal(usc__domain_oracle.apply(q, &rp, 1, &w[1], a, 0, &err),
			 USC_OK);
	assert_int_equal(w[1].kind, USC__ORC_POS_INF);
	usc__domain_oracle.clear(q, w, 2);
	usc__domain_oracle.destroy(q);
}

static void test_output_and_options(void **state)
{
	fixture *f = *state;
	usc__oracle_enclosure e;
	uint64_t bits;
	usc_error err;

	ot_set(&f->v[0], 0x1.008p0, 0x1.00fffp0);
	assert_int_equal(usc__domain_oracle.to_output(f->s, USC_BF16, &f->v[0],
						      &bits, &e, &err),
			 USC_OK);
	assert_int_equal(bits, 0x3F80);
	assert_true(e.rounded && e.rounded_bits == 0x3F80);
	assert_true(e.lo <= 0x1.008p0 && e.hi >= 0x1.00fffp0);
	assert_int_equal(e.prec, 96);
	/* Undecided rounding: the midpoint's rounding, not certified. */
	ot_set(&f->v[0], 0x1.01p0 - 0x1p-30, 0x1.01p0 + 0x1p-20);
	usc__domain_oracle.to_output(f->s, USC_BF16, &f->v[0], &bits, &e, &err);
	assert_false(e.rounded);
	assert_int_equal(bits, 0x3F81);
	/* Precision bounds. */
	assert_int_equal(usc__oracle_set_precision(f->s, 8, &err), USC_EINVAL);
	assert_int_equal(usc__oracle_set_precision(f->s, 256, &err), USC_OK);
	assert_int_equal(usc__oracle_precision(f->s), 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decide_rounding, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ulp_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_specials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trig_wide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discrete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_encodings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_and_options, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
