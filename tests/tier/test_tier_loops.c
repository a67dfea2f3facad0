/*
 * The tier's array loops for multiply, add, subtract, divide and the
 * monotone functions (exp, expm1, logistic, tanh, erf, cbrt) checked
 * against MPFR called directly, not against the oracle or the tier's own
 * general path (test_tier_fast does that): whole arrays of the values
 * the loops handle in line (f32 and bf16 points, narrow and wider balls,
 * a broadcast scalar on either side) and the edges they must leave to
 * the general code (NaN, infinities, signed zeros, subnormal operands
 * and results, products and sums past double's range, divisor balls
 * near 0, balls at the margin of the evident-sign test).
 *
 * For every result: a FINITE ball must contain the exact image of the
 * operand balls, computed in MPFR with outward rounding (the corners of
 * the operand box for the four arithmetic ops, which are monotone in each
 * operand on a box whose divisor avoids 0; the two end points for the
 * increasing functions); a TIER_GT0 / TIER_LT0 flag (bits 4 and 5 of
 * flags, tier_internal.h) must be the exact image's strict sign; a point zero must
 * carry the exact result's zero sign; NaN and infinities must be MPFR's
 * (IEEE's) class for point operands.  In the ordinary cases every element
 * must be decided.
 */
#include <float.h>
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

#include "oracles/oracle.h"
#include "oracles/tier.h"

typedef usc__tier_value tvalue;

/* The tier's private strict-sign flags (tier_internal.h). */
#define GT0 (1u << 4)
#define LT0 (1u << 5)

/* Exact ends of an operand ball: any two doubles' sum fits 2200 bits. */
#define EXACT_PREC 2200
/* Products of two such ends are exact at twice that. */
#define WIDE_PREC 4500
/* Quotients and functions: rounded outward at this precision. */
#define FN_PREC 256

#define TIER_TEST_SEED 0x5DEECE66D2545F49ull
#include "tier_test_rng.h"

static void *tier_state_of(void **state)
{
	return *state;
}

static int setup(void **state)
{
	usc_error err;

	assert_int_equal(usc__domain_tier.create(state, &err), USC_OK);
	return 0;
}

static int teardown(void **state)
{
	usc__domain_tier.destroy(*state);
	return 0;
}

/* The tier's value of the double d (a point; NaN and infinities too). */
static tvalue pt(void *ts, double d)
{
	tvalue v;
	uint64_t bits;
	usc_error err;

	memcpy(&bits, &d, sizeof bits);
	assert_int_equal(usc__domain_tier.load(ts, USC_F64, bits, &v, &err),
			 USC_OK);
	return v;
}

static tvalue ball(double mid, double rad)
{
	tvalue v;

	memset(&v, 0, sizeof v);
	usc__tier_value_set(&v, mid, rad);
	return v;
}

/* A double rounded to f32 (bf16: also to 8 significant bits). */
static double as_f32(double d)
{
	return (double)(float)d;
}

static double as_bf16(double d)
{
	mpfr_t m;
	double r;

	mpfr_init2(m, 8);
	mpfr_set_d(m, d, MPFR_RNDN);
	r = mpfr_get_d(m, MPFR_RNDN);
	mpfr_clear(m);
	return r;
}

/* The exact end points of a FINITE operand: mid - rad, mid + rad. */
static void ends(const tvalue *v, mpfr_t lo, mpfr_t hi)
{
	mpfr_set_d(lo, v->mid, MPFR_RNDN);
	mpfr_set_d(hi, v->mid, MPFR_RNDN);
	mpfr_sub_d(lo, lo, v->rad, MPFR_RNDN); /* exact at EXACT_PREC */
	mpfr_add_d(hi, hi, v->rad, MPFR_RNDN);
	if (v->rad == 0 && v->mid == 0) {
		/* A point zero keeps its sign for the IEEE rules. */
		mpfr_set_zero(lo, (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1);
		mpfr_set(hi, lo, MPFR_RNDN);
	}
}

/* The MPFR value of a point operand (NaN, infinities, signed zeros). */
static void point_value(const tvalue *v, mpfr_t x)
{
	switch (v->kind) {
	case USC__ORC_NAN: mpfr_set_nan(x); return;
	case USC__ORC_POS_INF: mpfr_set_inf(x, 1); return;
	case USC__ORC_NEG_INF: mpfr_set_inf(x, -1); return;
	default: break;
	}
	if (v->mid == 0)
		mpfr_set_zero(x, (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1);
	else
		mpfr_set_d(x, v->mid, MPFR_RNDN);
}

static bool is_point(const tvalue *v)
{
	return v->kind != USC__ORC_FINITE || v->rad == 0;
}

typedef enum opk { K_MUL, K_ADD, K_SUB, K_DIV, K_FN } opk;

typedef struct opdef {
	usc_hlo_opcode op;
	opk kind;
	int nargs;
} opdef;

/* y = f(x) rounded in direction rnd, for the increasing functions. */
static void fn_dir(usc_hlo_opcode op, mpfr_t y, const mpfr_t x,
		   mpfr_rnd_t rnd)
{
	mpfr_rnd_t opp = rnd == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD;
	mpfr_t t;

	switch (op) {
	case USC_HLO_OP_EXPONENTIAL: mpfr_exp(y, x, rnd); return;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: mpfr_expm1(y, x, rnd); return;
	case USC_HLO_OP_TANH: mpfr_tanh(y, x, rnd); return;
	case USC_HLO_OP_ERF: mpfr_erf(y, x, rnd); return;
	case USC_HLO_OP_CBRT: mpfr_cbrt(y, x, rnd); return;
	case USC_HLO_OP_LOGISTIC:
		/*
		 * 1 / (1 + e^-x): e^-x decreases in x, so a lower bound
		 * takes e^-x and 1 + e^-x rounded up, the quotient down.
		 */
		mpfr_init2(t, FN_PREC);
		mpfr_neg(t, x, MPFR_RNDN);
		mpfr_exp(t, t, opp);
		mpfr_add_ui(t, t, 1, opp);
		mpfr_ui_div(y, 1, t, rnd);
		mpfr_clear(t);
		return;
	default:
		fail_msg("no MPFR function for %s", usc_hlo_opcode_name(op));
	}
}

/* The exact op on two MPFR values in direction rnd (exact for + - *). */
static void arith(opk k, mpfr_t r, const mpfr_t a, const mpfr_t b,
		  mpfr_rnd_t rnd)
{
	switch (k) {
	case K_MUL: mpfr_mul(r, a, b, rnd); break;
	case K_ADD: mpfr_add(r, a, b, rnd); break;
	case K_SUB: mpfr_sub(r, a, b, rnd); break;
	case K_DIV: mpfr_div(r, a, b, rnd); break;
	default: fail_msg("not an arithmetic op");
	}
}

static int failures;

static void complain(const opdef *d, const tvalue *x, const tvalue *y,
		     const tvalue *r, const char *why)
{
	if (failures++ < 10)
		print_message("%s(%a +- %a [k%d f%d], %a +- %a [k%d f%d]) = "
			      "%a +- %a kind %d flags %d: %s\n",
			      usc_hlo_opcode_name(d->op), x->mid, x->rad,
			      x->kind, x->flags, y ? y->mid : 0.0,
			      y ? y->rad : 0.0, y ? y->kind : 0,
			      y ? y->flags : 0, r->mid, r->rad, r->kind,
			      r->flags, why);
}

/*
 * The strict sign known of an operand: its flag (a strict sign the
 * ball cannot show, as for exp(-1e9), which double rounds to 0; the
 * flag is true because exp is positive), else the side of 0 its exact
 * ends lie on, else 0.
 */
static int operand_sign(const tvalue *v)
{
	if (v->flags & GT0)
		return 1;
	if (v->flags & LT0)
		return -1;
	if (v->kind != USC__ORC_FINITE)
		return v->kind == USC__ORC_POS_INF   ? 1
		       : v->kind == USC__ORC_NEG_INF ? -1
						     : 0;
	/* The exact ends are mid -+ rad; compare without rounding. */
	if (v->mid > 0 && v->rad < v->mid && v->mid - v->rad > 0 &&
	    (v->mid - v->rad) + v->rad == v->mid)
		return 1;
	if (v->mid < 0 && v->rad < -v->mid && v->mid + v->rad < 0 &&
	    (v->mid + v->rad) - v->rad == v->mid)
		return -1;
	return 0;
}

/*
 * The strict sign of the exact result that the operands' known signs
 * imply (0: none): a product or quotient of known signs, a sum of two
 * positives or of two negatives, exp and logistic (always positive).
 */
static int known_sign(const opdef *d, const tvalue *x, const tvalue *y)
{
	int sx = operand_sign(x), sy = y ? operand_sign(y) : 0;

	switch (d->kind) {
	case K_MUL:
	case K_DIV: return sx * sy;
	case K_ADD: return sx == sy ? sx : 0;
	case K_SUB: return sx == -sy ? sx : 0;
	default: break;
	}
	return d->op == USC_HLO_OP_EXPONENTIAL || d->op == USC_HLO_OP_LOGISTIC
		       ? 1
		       : 0;
}

/*
 * Checks one result r of op d on x (and y).  Returns whether r is
 * undecided.
 */
static bool check_one(const opdef *d, const tvalue *x, const tvalue *y,
		      const tvalue *r)
{
	mpfr_t xl, xh, yl, yh, lo, hi, t, rl, rh;
	bool undecided = r->kind == USC__ORC_UNDECIDED;
	bool points = is_point(x) && (!y || is_point(y));
	int i;

	if ((x->kind == USC__ORC_NAN || (y && y->kind == USC__ORC_NAN)) &&
	    r->kind != USC__ORC_NAN) {
		complain(d, x, y, r, "a NaN operand gives NaN");
		return undecided;
	}
	if (undecided)
		return true;
	mpfr_inits2(EXACT_PREC, xl, xh, yl, yh, rl, rh, (mpfr_ptr)0);
	/* Exact for + - *, outward for / and the functions. */
	mpfr_inits2(d->kind == K_FN || d->kind == K_DIV ? FN_PREC : WIDE_PREC,
		    lo, hi, t, (mpfr_ptr)0);
	if (points) {
		/* IEEE classes and zero signs from MPFR on the points. */
		mpfr_t px, py;

		mpfr_inits2(EXACT_PREC, px, py, (mpfr_ptr)0);
		point_value(x, px);
		if (y)
			point_value(y, py);
		if (d->kind == K_FN) {
			fn_dir(d->op, lo, px, MPFR_RNDD);
			fn_dir(d->op, hi, px, MPFR_RNDU);
		} else {
			arith(d->kind, lo, px, py, MPFR_RNDD);
			arith(d->kind, hi, px, py, MPFR_RNDU);
		}
		mpfr_clears(px, py, (mpfr_ptr)0);
		if (mpfr_nan_p(lo)) {
			if (r->kind != USC__ORC_NAN)
				complain(d, x, y, r, "MPFR gives NaN");
			goto done;
		}
		if (mpfr_inf_p(lo) && mpfr_inf_p(hi)) {
			/* An exact infinity (an overflow gives finite lo). */
			if (r->kind != (mpfr_sgn(lo) > 0 ? USC__ORC_POS_INF
							 : USC__ORC_NEG_INF))
				complain(d, x, y, r, "MPFR gives an infinity");
			goto done;
		}
		if (r->kind != USC__ORC_FINITE) {
			complain(d, x, y, r, "MPFR gives a finite value");
			goto done;
		}
		if (mpfr_zero_p(lo) && mpfr_zero_p(hi) && r->rad == 0 &&
		    r->mid == 0 && !(r->flags & USC__ORC_ZSIGN_UNKNOWN)) {
			/*
			 * The exact result is a zero; its IEEE sign is the
			 * one of round-to-nearest (x + (-x) is -0 only in
			 * the downward rounding used for lo).
			 */
			mpfr_t zx, zy;

			mpfr_inits2(EXACT_PREC, zx, zy, (mpfr_ptr)0);
			point_value(x, zx);
			if (y)
				point_value(y, zy);
			if (d->kind == K_FN)
				fn_dir(d->op, t, zx, MPFR_RNDN);
			else
				arith(d->kind, t, zx, zy, MPFR_RNDN);
			mpfr_clears(zx, zy, (mpfr_ptr)0);
			if ((mpfr_signbit(t) != 0) !=
			    ((r->flags & USC__ORC_NEG_ZERO) != 0))
				complain(d, x, y, r, "wrong zero sign");
		}
	} else {
		if (x->kind != USC__ORC_FINITE ||
		    (y && y->kind != USC__ORC_FINITE)) {
			/* A ball against an infinity: not checked here. */
			goto done;
		}
		ends(x, xl, xh);
		if (y)
			ends(y, yl, yh);
		if (d->kind == K_DIV && mpfr_sgn(yl) <= 0 && mpfr_sgn(yh) >= 0) {
			/* A divisor ball holding 0 has no bounded image. */
			if (r->kind == USC__ORC_FINITE)
				complain(d, x, y, r, "divisor ball holds 0");
			goto done;
		}
		if (d->kind == K_FN) {
			fn_dir(d->op, lo, xl, MPFR_RNDD);
			fn_dir(d->op, hi, xh, MPFR_RNDU);
		} else {
			/* The corners of the box, outward. */
			mpfr_set_inf(lo, 1);
			mpfr_set_inf(hi, -1);
			for (i = 0; i < 4; i++) {
				mpfr_srcptr a = i & 1 ? xh : xl;
				mpfr_srcptr b = i & 2 ? yh : yl;

				arith(d->kind, t, a, b, MPFR_RNDD);
				mpfr_min(lo, lo, t, MPFR_RNDN);
				arith(d->kind, t, a, b, MPFR_RNDU);
				mpfr_max(hi, hi, t, MPFR_RNDN);
			}
		}
		if (r->kind != USC__ORC_FINITE) {
			complain(d, x, y, r, "a finite ball expected");
			goto done;
		}
	}
	/* Containment: [lo, hi] inside [mid - rad, mid + rad], exactly. */
	mpfr_set_d(rl, r->mid, MPFR_RNDN);
	mpfr_sub_d(rl, rl, r->rad, MPFR_RNDN);
	mpfr_set_d(rh, r->mid, MPFR_RNDN);
	mpfr_add_d(rh, rh, r->rad, MPFR_RNDN);
	if (mpfr_less_p(lo, rl) || mpfr_greater_p(hi, rh))
		complain(d, x, y, r, "does not contain the exact image");
	if ((r->flags & GT0) && mpfr_sgn(lo) <= 0 &&
	    known_sign(d, x, y) <= 0)
		complain(d, x, y, r, "GT0 but the image reaches 0");
	if ((r->flags & LT0) && mpfr_sgn(hi) >= 0 &&
	    known_sign(d, x, y) >= 0)
		complain(d, x, y, r, "LT0 but the image reaches 0");
done:
	mpfr_clears(xl, xh, yl, yh, rl, rh, (mpfr_ptr)0);
	mpfr_clears(lo, hi, t, (mpfr_ptr)0);
	return false;
}

/*
 * Runs d over n elements through the domain's apply (the array loops),
 * with scalar the broadcast mask, and checks every result.  Returns the
 * number of undecided results.
 */
static size_t run(void *ts, const opdef *d, size_t n, const tvalue *x,
		  const tvalue *y, unsigned scalar)
{
	usc__dom_op op;
	const void *args[2] = {x, y};
	tvalue *r = malloc((n ? n : 1) * sizeof *r);
	usc_error err;
	size_t i, und = 0;

	assert_non_null(r);
	memset(&op, 0, sizeof op);
	op.op = d->op;
	op.nargs = (unsigned)d->nargs;
	op.result = op.arg[0] = op.arg[1] = USC_F32;
	assert_int_equal(usc__domain_tier.apply(ts, &op, n, r, args, scalar,
						&err),
			 USC_OK);
	for (i = 0; i < n; i++)
		und += check_one(d, &x[scalar & 1 ? 0 : i],
				 d->nargs > 1 ? &y[scalar & 2 ? 0 : i] : NULL,
				 &r[i]);
	free(r);
	return und;
}

static const opdef OPS[] = {
	{USC_HLO_OP_MULTIPLY, K_MUL, 2},
	{USC_HLO_OP_ADD, K_ADD, 2},
	{USC_HLO_OP_SUBTRACT, K_SUB, 2},
	{USC_HLO_OP_DIVIDE, K_DIV, 2},
	{USC_HLO_OP_EXPONENTIAL, K_FN, 1},
	{USC_HLO_OP_EXPONENTIAL_MINUS_ONE, K_FN, 1},
	{USC_HLO_OP_LOGISTIC, K_FN, 1},
	{USC_HLO_OP_TANH, K_FN, 1},
	{USC_HLO_OP_ERF, K_FN, 1},
	{USC_HLO_OP_CBRT, K_FN, 1},
};
#define NOPS (sizeof OPS / sizeof *OPS)

/*
 * A value of the kinds the loops handle in line: an f32 or bf16 point
 * in [-6, 6], or a ball around one with a relative radius from 2^-52 to
 * 2^-8 (the narrow ones take tanh's and logistic's one-evaluation path,
 * the wider ones the two-end path).
 */
static tvalue ordinary(void *ts, bool divisor)
{
	double m = (unif() * 12.0) - 6.0;
	int k = (int)(rnd() % 4);

	if (divisor && fabs(m) < 0x1p-8)
		m = 0.5;
	if (k == 0)
		return pt(ts, as_f32(m));
	if (k == 1)
		return pt(ts, as_bf16(m));
	m = as_f32(m);
	if (m == 0)
		m = 0.25;
	return ball(m, ldexp(fabs(m), -8 - (int)(rnd() % 45)));
}

/* The ordinary cases: random arrays, elementwise and broadcast. */
static void test_ordinary(void **state)
{
	void *ts = tier_state_of(state);
	size_t n = 1024 * (size_t)scale(), i, k;
	tvalue *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);

	assert_non_null(x);
	assert_non_null(y);
	for (k = 0; k < NOPS; k++) {
		const opdef *d = &OPS[k];

		for (i = 0; i < n; i++) {
			x[i] = ordinary(ts, false);
			y[i] = ordinary(ts, d->kind == K_DIV);
		}
		failures = 0;
		assert_int_equal(run(ts, d, n, x, y, 0), 0);
		if (d->nargs == 2) {
			/* A broadcast constant on either side. */
			tvalue c = pt(ts, as_f32(0.797884583));

			assert_int_equal(run(ts, d, n, x, &c, 2), 0);
			assert_int_equal(run(ts, d, n, &c, y, 1), 0);
			c = ball(-1.5, 0x1p-40);
			assert_int_equal(run(ts, d, n, x, &c, 2), 0);
		}
		if (failures)
			fail_msg("%s: %d violations",
				 usc_hlo_opcode_name(d->op), failures);
	}
	free(x);
	free(y);
}

/*
 * The edges: every pair of a pool of special and extreme values, so
 * that the loops' fall-backs and their overflow and underflow handling
 * all run; every result checked, undecided allowed.
 */
static void test_edges(void **state)
{
	void *ts = tier_state_of(state);
	static const double pts[] = {
		1.0, -3.0, 0.1, 0x1p-1074, -0x1p-1074, 0x1p-1022,
		0x1.8p-1070, 0x1p-600, -0x1p-600, 0x1p-540, 0x1p600,
		-0x1p600, 0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023,
		1e300, 709.5, 710.0, -745.5, -800.0, 20.0, -40.0,
		0x1p-1000, 0x1.0000000000001p-1000, 0x1.fffffffffffffp-1001,
		0.0, -0.0, INFINITY, -INFINITY, NAN};
	tvalue pool[64];
	size_t np = 0, i, j, k;

	for (i = 0; i < sizeof pts / sizeof *pts; i++)
		pool[np++] = pt(ts, pts[i]);
	/* Balls: at and just past the evident-sign margin (2 rad = |mid|,
	 * |mid| = 2^-1000), around and touching 0, tiny, huge, narrow at
	 * tanh's 2^-40 edge. */
	pool[np++] = ball(1.0, 0.5);
	pool[np++] = ball(-1.0, 0x1.0000000000001p-1);
	pool[np++] = ball(0x1p-1000, 0x1p-1001);
	pool[np++] = ball(-0x1p-1000, 0x1p-1001);
	pool[np++] = ball(0x1.fffffffffffffp-1001, 0x1p-1002);
	pool[np++] = ball(0x1.8p-1073, 0x1p-1074);
	pool[np++] = ball(0.0, 0x1p-20);
	pool[np++] = ball(0x1p-20, 0x1p-20);
	pool[np++] = ball(-0.25, 0.5);
	pool[np++] = ball(1.5, 1.5 * 0x1p-40);
	pool[np++] = ball(1.5, 1.5 * 0x1.0000000000001p-40);
	pool[np++] = ball(0x1p900, 0x1p850);
	pool[np++] = ball(-0x1.fffffffffffffp1023, 0x1p960);
	pool[np++] = ball(0x1p-1060, 0x1p-1070);
	pool[np++] = ball(-700.0, 0x1p-30);
	assert_true(np <= sizeof pool / sizeof *pool);
	/* Strict-sign flags: exp of very negative balls, and negations. */
	{
		usc__dom_op ex, ng;
		const void *args[1];
		tvalue b = ball(-1e9, 0.25), e, ne;
		usc_error err;

		memset(&ex, 0, sizeof ex);
		ex.op = USC_HLO_OP_EXPONENTIAL;
		ex.nargs = 1;
		ex.result = ex.arg[0] = USC_F32;
		ng = ex;
		ng.op = USC_HLO_OP_NEGATE;
		args[0] = &b;
		assert_int_equal(usc__domain_tier.apply(ts, &ex, 1, &e, args,
							0, &err),
				 USC_OK);
		assert_true(e.flags & GT0); /* exp(-1e9) rounds to 0 */
		args[0] = &e;
		assert_int_equal(usc__domain_tier.apply(ts, &ng, 1, &ne, args,
							0, &err),
				 USC_OK);
		assert_true(ne.flags & LT0);
		pool[np++] = e;
		pool[np++] = ne;
	}
	for (k = 0; k < NOPS; k++) {
		const opdef *d = &OPS[k];
		size_t n = d->nargs == 2 ? np * np : np;
		tvalue *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);

		assert_non_null(x);
		assert_non_null(y);
		for (i = 0; i < np; i++)
			for (j = 0; j < (d->nargs == 2 ? np : 1); j++) {
				x[i * (n / np) + j] = pool[i];
				y[i * (n / np) + j] = pool[j];
			}
		failures = 0;
		(void)run(ts, d, n, x, y, 0);
		if (d->nargs == 2)
			for (j = 0; j < np; j++) {
				(void)run(ts, d, np, pool, &pool[j], 2);
				(void)run(ts, d, np, &pool[j], pool, 1);
			}
		if (failures)
			fail_msg("%s: %d violations on the edges",
				 usc_hlo_opcode_name(d->op), failures);
		free(x);
		free(y);
	}
}

/*
 * Hand-derived cases whose outcome the loops must get exactly: exact
 * products and sums of f32 values stay points, overflow is undecided,
 * an underflowed product is a ball around 0 that contains the truth,
 * and the strict signs of products of balls.
 */
static void test_exact_cases(void **state)
{
	void *ts = tier_state_of(state);
	usc__dom_op op;
	const void *args[2];
	tvalue x[4], y[4], r[4];
	usc_error err;

	memset(&op, 0, sizeof op);
	op.nargs = 2;
	op.result = op.arg[0] = op.arg[1] = USC_F32;
	/* (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: exact in double. */
	x[0] = pt(ts, 1.0 + 0x1p-23);
	y[0] = x[0];
	/*
	 * 3 (1 + 2^-52) = 3 + 1.5 2^-51 needs 54 bits: a tie between
	 * 3 + 2^-51 and 3 + 2^-50, which goes to the even 3 + 2^-50,
	 * leaving the exact error 2^-52 as the radius.
	 */
	x[1] = pt(ts, 3.0);
	y[1] = pt(ts, 1.0 + 0x1p-52);
	/* 2^600 * 2^600 overflows double: undecided. */
	x[2] = pt(ts, 0x1p600);
	y[2] = x[2];
	/* 2^-600 * -2^-600 underflows to -0: a ball holding -2^-1200. */
	x[3] = pt(ts, 0x1p-600);
	y[3] = pt(ts, -0x1p-600);
	args[0] = x;
	args[1] = y;
	op.op = USC_HLO_OP_MULTIPLY;
	assert_int_equal(usc__domain_tier.apply(ts, &op, 4, r, args, 0, &err),
			 USC_OK);
	assert_int_equal(r[0].kind, USC__ORC_FINITE);
	assert_true(r[0].mid == 1.0 + 0x1p-22 + 0x1p-46 && r[0].rad == 0);
	assert_true(r[1].mid == 3.0 + 0x1p-50 && r[1].rad == 0x1p-52);
	assert_int_equal(r[2].kind, USC__ORC_UNDECIDED);
	assert_int_equal(r[3].kind, USC__ORC_FINITE);
	assert_true(r[3].mid == 0 && r[3].rad > 0 && r[3].rad <= 0x1p-1000);
	/* Balls: strict signs multiply; a ball across 0 sets none. */
	x[0] = ball(-2.0, 0x1p-30);
	y[0] = ball(3.0, 0x1p-30);
	x[1] = ball(-2.0, 0x1p-30);
	y[1] = ball(-3.0, 0x1p-30);
	x[2] = ball(0.25, 0.5);
	y[2] = ball(3.0, 0x1p-30);
	x[3] = pt(ts, 5.0);
	y[3] = ball(-0x1p-1000, 0x1p-1001); /* at the margin: still < 0 */
	assert_int_equal(usc__domain_tier.apply(ts, &op, 4, r, args, 0, &err),
			 USC_OK);
	assert_int_equal(r[0].flags & (GT0 | LT0), LT0);
	assert_int_equal(r[1].flags & (GT0 | LT0), GT0);
	assert_int_equal(r[2].flags & (GT0 | LT0), 0);
	assert_int_equal(r[3].flags & (GT0 | LT0), LT0);
	/* Sums: 2^60 + 1 - 2^60 needs the exact error of TwoSum. */
	op.op = USC_HLO_OP_ADD;
	x[0] = pt(ts, 0x1p60);
	y[0] = pt(ts, 1.0);
	x[1] = pt(ts, 0.1);
	y[1] = pt(ts, -0.1); /* exact cancellation: +0 */
	x[2] = pt(ts, DBL_MAX);
	y[2] = pt(ts, DBL_MAX); /* overflow: undecided */
	x[3] = ball(1.0, 0x1p-40);
	y[3] = pt(ts, -1.0);
	assert_int_equal(usc__domain_tier.apply(ts, &op, 4, r, args, 0, &err),
			 USC_OK);
	assert_true(r[0].mid == 0x1p60 && r[0].rad == 1.0);
	assert_true(r[1].mid == 0 && r[1].rad == 0 && !signbit(r[1].mid) &&
		    r[1].flags == 0);
	assert_int_equal(r[2].kind, USC__ORC_UNDECIDED);
	assert_true(r[3].mid == 0 && r[3].rad >= 0x1p-40);
	/* Quotients: 1/3 carries its exact remainder; 1/(ball near 0) is
	 * undecided; 1/2^-1074 overflows. */
	op.op = USC_HLO_OP_DIVIDE;
	x[0] = pt(ts, 1.0);
	y[0] = pt(ts, 3.0);
	x[1] = pt(ts, 1.0);
	y[1] = ball(0x1p-20, 0x1p-19);
	x[2] = pt(ts, 1.0);
	y[2] = pt(ts, 0x1p-1074);
	x[3] = pt(ts, 6.0);
	y[3] = pt(ts, 3.0);
	assert_int_equal(usc__domain_tier.apply(ts, &op, 4, r, args, 0, &err),
			 USC_OK);
	assert_true(r[0].mid == 1.0 / 3.0 && r[0].rad > 0 &&
		    r[0].rad < 0x1p-54);
	assert_int_equal(r[1].kind, USC__ORC_UNDECIDED);
	assert_int_equal(r[2].kind, USC__ORC_UNDECIDED);
	assert_true(r[3].mid == 2.0 && r[3].rad == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ordinary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_edges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exact_cases, setup,
						teardown),
	};

	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
