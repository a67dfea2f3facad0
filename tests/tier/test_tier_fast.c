/*
 * The tier's array loops (oracles/tier_loops.c, usc__tier_apply) against its general
 * per-element code (usc__tier_apply_general): every op with a fast path,
 * on every pair of a pool of values that covers each branch the loops
 * must leave to the general code (signed and sign-unknown zeros, balls
 * around 0, strict-sign flags from exp, infinities, NaN, undecided,
 * subnormals, overflowing magnitudes), element-wise and with a broadcast
 * scalar operand; every field of every result must be the same bits.
 * Also: the outward bounds (whose step is now computed on the bits)
 * against libm's nextafter at the edges of the format, and the in-line
 * f32/bf16/f64 decoding and f32/f64/bf16 nearest-even encoding against
 * usc_decode_double and usc_encode_double.  The expected values come
 * from the general code, libm and the dtype library, never from the fast
 * code under test.
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

#include "oracles/oracle.h"
#include "oracles/tier.h"

typedef usc__tier_value tvalue;

#define TIER_TEST_SEED 0x9E3779B97F4A7C15ull
#include "tier_test_rng.h"

#define POOL_MAX 128

typedef struct fctx {
	void *ts;
	tvalue pool[POOL_MAX];
	size_t npool;
	tvalue preds[3]; /* false, true, undecided */
} fctx;

static tvalue point(fctx *c, double d)
{
	tvalue v;
	uint64_t bits;
	usc_error err;

	memcpy(&bits, &d, sizeof bits);
	assert_int_equal(usc__domain_tier.load(c->ts, USC_F64, bits, &v, &err),
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

/*
 * The point d is decided, and rounds to t as the dtype library's encoder
 * rounds it.
 */
static void expect_point_rounding(double d, usc_dtype t)
{
	tvalue v = ball(d, 0);
	uint64_t got = 0, want = 0;
	bool dec;
	usc_error err;

	assert_int_equal(usc__tier_decide_rounding(&v, t, &dec, &got, &err),
			 USC_OK);
	assert_true(dec);
	assert_int_equal(usc_encode_double(t, d, NULL, &want, NULL), USC_OK);
	if (got != want)
		fail_msg("%s rounding of %a: %llx, expected %llx",
			 usc_dtype_name(t), d, (unsigned long long)got,
			 (unsigned long long)want);
}

static usc__dom_op mkop(usc_hlo_opcode opc, unsigned nargs)
{
	usc__dom_op o;

	memset(&o, 0, sizeof o);
	o.op = opc;
	o.nargs = nargs;
	o.result = o.arg[0] = o.arg[1] = o.arg[2] = USC_F64;
	o.cmp_type = USC__CMP_FLOAT;
	return o;
}

static void add(fctx *c, tvalue v)
{
	assert_true(c->npool < POOL_MAX);
	c->pool[c->npool++] = v;
}

static int setup(void **state)
{
	fctx *c = calloc(1, sizeof *c);
	usc_error err;
	size_t i, base;
	static const double pts[] = {
		1.0, -1.0, 0.5, 3.0, -2.75, 0.1, -0.7, 1e-3, 40.0, -800.0,
		0x1p-1074, -0x1p-1074, 0x1p-1022, 0x1p-600, -0x1p-600,
		0x1p600, -0x1p600, 0x1.fffffffffffffp1023, 1e300, 700.0,
		-745.5, 0.9999999999999999, 2.0, 0x1p-30};

	assert_int_equal(usc__domain_tier.create(&c->ts, &err), USC_OK);
	for (i = 0; i < sizeof pts / sizeof *pts; i++)
		add(c, point(c, pts[i]));
	add(c, point(c, 0.0));
	add(c, point(c, -0.0));
	{
		tvalue z = point(c, 0.0);

		z.flags = USC__ORC_ZSIGN_UNKNOWN;
		add(c, z);
	}
	add(c, point(c, INFINITY));
	add(c, point(c, -INFINITY));
	add(c, point(c, NAN));
	{
		tvalue u = point(c, 1.0);

		u.kind = USC__ORC_UNDECIDED;
		u.mid = 0;
		add(c, u);
	}
	/* Balls: narrow, wide, around 0, touching 0, tiny, huge. */
	add(c, ball(1.5, 0x1p-40));
	add(c, ball(-2.25, 0x1p-30));
	add(c, ball(0.3, 0.1));
	add(c, ball(0.0, 0x1p-20));
	add(c, ball(0x1p-20, 0x1p-20));
	add(c, ball(-0x1p-20, 0x1p-20));
	add(c, ball(-0.1, 0.3));
	add(c, ball(0x1p-1060, 0x1p-1070));
	add(c, ball(0x1p900, 0x1p850));
	add(c, ball(-1.0, 0x1p-52));
	add(c, ball(-1.0, 2.0));
	add(c, ball(1e-5, 1e-7));
	add(c, ball(12.0, 0.5));
	/* Strict-sign flags: exp and its negation of some of the above. */
	base = c->npool;
	{
		usc__dom_op ex = mkop(USC_HLO_OP_EXPONENTIAL, 1);
		usc__dom_op ng = mkop(USC_HLO_OP_NEGATE, 1);
		const tvalue *src[] = {NULL};
		tvalue r[8];
		const double m[] = {-1e9, -800.0, -1.0, 0.5};
		int k;

		for (k = 0; k < 4; k++) {
			tvalue b = ball(m[k], 0.25);

			src[0] = &b;
			assert_int_equal(usc__tier_apply_general(
						 c->ts, &ex, 1, &r[2 * k],
						 (const void *const *)src, 0,
						 &err),
					 USC_OK);
			src[0] = &r[2 * k];
			assert_int_equal(usc__tier_apply_general(
						 c->ts, &ng, 1, &r[2 * k + 1],
						 (const void *const *)src, 0,
						 &err),
					 USC_OK);
			add(c, r[2 * k]);
			add(c, r[2 * k + 1]);
		}
	}
	assert_true(c->npool > base);
	memset(c->preds, 0, sizeof c->preds);
	c->preds[0].kind = USC__ORC_FINITE;
	c->preds[1].kind = USC__ORC_FINITE;
	c->preds[1].bits = 1;
	c->preds[2].kind = USC__ORC_UNDECIDED;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	fctx *c = *state;

	usc__domain_tier.destroy(c->ts);
	free(c);
	return 0;
}

/* Every field the same bits; a message naming the op and the element. */
static void same(const usc__dom_op *op, size_t i, const tvalue *f,
		 const tvalue *g)
{
	if (memcmp(&f->mid, &g->mid, sizeof f->mid) != 0 ||
	    memcmp(&f->rad, &g->rad, sizeof f->rad) != 0 ||
	    f->bits != g->bits || f->kind != g->kind || f->flags != g->flags)
		fail_msg("%s element %zu: fast (%a, %a, bits %llu, kind %d, "
			 "flags %d) but general (%a, %a, bits %llu, kind %d, "
			 "flags %d)",
			 usc_hlo_opcode_name(op->op), i, f->mid, f->rad,
			 (unsigned long long)f->bits, f->kind, f->flags,
			 g->mid, g->rad, (unsigned long long)g->bits, g->kind,
			 g->flags);
}

/* Runs op both ways over n elements and compares. */
static void both(fctx *c, const usc__dom_op *op, size_t n,
		 const void *const *args, unsigned scalar)
{
	tvalue *f = malloc(n * sizeof *f), *g = malloc(n * sizeof *g);
	usc_error err;
	size_t i;

	/* Garbage first: a field the loops forget to set shows up. */
	memset(f, 0xab, n * sizeof *f);
	memset(g, 0xab, n * sizeof *g);
	assert_int_equal(usc__domain_tier.apply(c->ts, op, n, f, args, scalar,
						&err),
			 USC_OK);
	assert_int_equal(usc__tier_apply_general(c->ts, op, n, g, args, scalar,
						 &err),
			 USC_OK);
	for (i = 0; i < n; i++)
		same(op, i, &f[i], &g[i]);
	free(f);
	free(g);
}

static void test_unary(void **state)
{
	fctx *c = *state;
	static const usc_hlo_opcode ops[] = {
		USC_HLO_OP_NEGATE, USC_HLO_OP_ABS, USC_HLO_OP_EXPONENTIAL,
		USC_HLO_OP_EXPONENTIAL_MINUS_ONE, USC_HLO_OP_LOG,
		USC_HLO_OP_LOG_PLUS_ONE, USC_HLO_OP_TANH, USC_HLO_OP_LOGISTIC,
		USC_HLO_OP_ERF, USC_HLO_OP_SQRT, USC_HLO_OP_RSQRT,
		USC_HLO_OP_CBRT, USC_HLO_OP_CONVERT,
		USC_HLO_OP_REDUCE_PRECISION};
	size_t i;

	for (i = 0; i < sizeof ops / sizeof *ops; i++) {
		usc__dom_op op = mkop(ops[i], 1);
		const void *args[1] = {c->pool};

		if (ops[i] == USC_HLO_OP_CONVERT)
			op.result = USC_F32;
		if (ops[i] == USC_HLO_OP_REDUCE_PRECISION) {
			op.exponent_bits = 8;
			op.mantissa_bits = 7;
		}
		both(c, &op, c->npool, args, 0);
		both(c, &op, c->npool, args, 1); /* a broadcast scalar */
	}
}

static void test_binary(void **state)
{
	fctx *c = *state;
	static const usc_hlo_opcode ops[] = {
		USC_HLO_OP_ADD, USC_HLO_OP_SUBTRACT, USC_HLO_OP_MULTIPLY,
		USC_HLO_OP_DIVIDE, USC_HLO_OP_MAXIMUM, USC_HLO_OP_MINIMUM,
		USC_HLO_OP_COMPARE};
	size_t n = c->npool * c->npool, i, j, d;
	tvalue *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);

	for (i = 0; i < c->npool; i++)
		for (j = 0; j < c->npool; j++) {
			x[i * c->npool + j] = c->pool[i];
			y[i * c->npool + j] = c->pool[j];
		}
	for (i = 0; i < sizeof ops / sizeof *ops; i++) {
		for (d = 0; d < 12; d++) {
			usc__dom_op op = mkop(ops[i], 2);
			const void *args[2] = {x, y};

			if (ops[i] == USC_HLO_OP_COMPARE) {
				op.result = USC_PRED;
				op.cmp_dir = (usc__cmp_dir)(d % 6);
				op.cmp_type = d < 6 ? USC__CMP_FLOAT
						    : USC__CMP_TOTALORDER;
			} else if (d > 0)
				break;
			both(c, &op, n, args, 0);
			/* The second operand broadcast from one value. */
			for (j = 0; j < c->npool; j++) {
				args[1] = &c->pool[j];
				args[0] = c->pool;
				both(c, &op, c->npool, args, 2);
				args[0] = &c->pool[j];
				args[1] = c->pool;
				both(c, &op, c->npool, args, 1);
			}
		}
	}
	free(x);
	free(y);
}

static void test_select(void **state)
{
	fctx *c = *state;
	size_t n = 3 * c->npool, i;
	tvalue *p = malloc(n * sizeof *p), *x = malloc(n * sizeof *x);
	tvalue *y = malloc(n * sizeof *y);
	usc__dom_op op = mkop(USC_HLO_OP_SELECT, 3);
	const void *args[3] = {p, x, y};

	op.arg[0] = USC_PRED;
	for (i = 0; i < n; i++) {
		p[i] = c->preds[i % 3];
		x[i] = c->pool[i / 3];
		/* Same-point branches for some undecided predicates. */
		y[i] = (i / 3) % 2 ? c->pool[i / 3] : c->pool[(i * 7) % c->npool];
	}
	both(c, &op, n, args, 0);
	free(p);
	free(x);
	free(y);
}

/* The outward step on the bits against nextafter at the format's edges. */
static void test_bounds(void **state)
{
	static const double mids[] = {
		0.0, 1.0, -1.0, 0x1p-1074, -0x1p-1074, 0x1p-1073, 0x1p-1022,
		-0x1p-1022, 0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023,
		1e300, 2.0, 0.75, -3.5};
	static const double rads[] = {
		0x1p-1074, 0x1p-1073, 0x1p-1022, 1.0, 2.0, 0x1p-52, 0.75,
		0x1p1023, 1e300, 3.5};
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof mids / sizeof *mids; i++)
		for (j = 0; j < sizeof rads / sizeof *rads; j++) {
			tvalue v = ball(mids[i], rads[j]);
			double lo, hi, elo, ehi;

			usc__tier_bounds(&v, &lo, &hi);
			elo = nextafter(mids[i] - rads[j], -INFINITY);
			ehi = nextafter(mids[i] + rads[j], INFINITY);
			if (memcmp(&lo, &elo, sizeof lo) ||
			    memcmp(&hi, &ehi, sizeof hi))
				fail_msg("bounds of %a +- %a: [%a, %a], "
					 "nextafter gives [%a, %a]",
					 mids[i], rads[j], lo, hi, elo, ehi);
		}
	/* Random magnitudes over the whole range, and both signs. */
	for (i = 0; i < 20000 * (size_t)scale(); i++) {
		double m = ldexp(1.0 + unif(), (int)(rnd() % 2100) - 1075);
		double r = ldexp(1.0 + unif(), (int)(rnd() % 2100) - 1075);
		tvalue v;
		double lo, hi, elo, ehi;

		if (rnd() & 1)
			m = -m;
		if (!isfinite(m) || !isfinite(r))
			continue;
		v = ball(m, r);
		usc__tier_bounds(&v, &lo, &hi);
		elo = nextafter(m - r, -INFINITY);
		ehi = nextafter(m + r, INFINITY);
		if (memcmp(&lo, &elo, sizeof lo) || memcmp(&hi, &ehi, sizeof hi))
			fail_msg("bounds of %a +- %a", m, r);
	}
}

/* In-line decoding (load) and nearest-even encoding (decide_rounding). */
static void test_codecs(void **state)
{
	fctx *c = *state;
	static const usc_dtype types[] = {USC_F32, USC_BF16, USC_F64};
	usc__dom_op cv = mkop(USC_HLO_OP_CONVERT, 1);
	usc_error err;
	size_t i, t;

	for (t = 0; t < 3; t++)
		for (i = 0; i < 200000 * (size_t)scale(); i++) {
			usc_dtype ty = types[t];
			uint64_t bits = rnd();
			double d = 0;
			tvalue v, e;

			if (ty == USC_F32)
				bits &= 0xffffffffu;
			else if (ty == USC_BF16)
				bits = i < 65536 ? i : bits & 0xffff;
			assert_int_equal(usc__domain_tier.load(c->ts, ty, bits,
								&v, &err),
					 USC_OK);
			/* The expected value through the dtype library. */
			assert_int_equal(usc_decode_double(ty, bits, &d), USC_OK);
			memcpy(&bits, &d, sizeof bits);
			assert_int_equal(usc__domain_tier.load(c->ts, USC_F64,
								bits, &e, &err),
					 USC_OK);
			same(&cv, i, &v, &e);
		}
	/* Encoding: points and narrow balls around f32 ties and edges. */
	for (i = 0; i < 200000 * (size_t)scale(); i++) {
		double d;
		tvalue v;
		bool dec;
		uint64_t got = 0;

		switch (i % 4) {
		case 0:
			d = ldexp(1.0 + unif(), (int)(rnd() % 300) - 160);
			break;
		case 1: {
			/* An exact f32 tie: 2m + 1 of 25 significant bits. */
			uint64_t m = (rnd() & 0x7fffff) | 0x800000;

			d = ldexp((double)(2 * m + 1), (int)(rnd() % 280) -
							      170);
			break;
		}
		case 2:
			d = ldexp(1.0 + unif(), 127 + (int)(rnd() % 2));
			break;
		default:
			d = ldexp(1.0 + unif(), -150 + (int)(rnd() % 30));
			break;
		}
		if (rnd() & 1)
			d = -d;
		if (!isfinite(d))
			continue;
		expect_point_rounding(d, USC_F32);
		/* A ball: both ends encode, decided only when they agree. */
		v = ball(d, ldexp(fabs(d), -30));
		assert_int_equal(usc__tier_decide_rounding(&v, USC_F64, &dec,
							   &got, &err),
				 USC_OK);
		assert_false(dec);
	}
	/*
	 * bf16 (rounded in line for normal results): random magnitudes
	 * over and past bf16's range, exact ties (9 significant bits) and
	 * their neighbours, and the edges 2^-126 and 2^127 from both sides.
	 */
	for (i = 0; i < 200000 * (size_t)scale(); i++) {
		double d;

		switch (i % 5) {
		case 0:
			d = ldexp(1.0 + unif(), (int)(rnd() % 300) - 160);
			break;
		case 1: {
			/* A tie: 2m + 1 of 9 significant bits. */
			uint64_t m = (rnd() & 0x7f) | 0x80;

			d = ldexp((double)(2 * m + 1), (int)(rnd() % 280) -
							      140);
			break;
		}
		case 2: {
			/* One step from a tie, either way. */
			uint64_t m = (rnd() & 0x7f) | 0x80;

			d = ldexp((double)(2 * m + 1), -9);
			d = rnd() & 1 ? nextafter(d, 0) : nextafter(d, 1e9);
			d = ldexp(d, (int)(rnd() % 260) - 126);
			break;
		}
		case 3:
			d = ldexp(1.0 + unif(), 126 + (int)(rnd() % 3));
			break;
		default:
			d = ldexp(1.0 + unif(), -128 + (int)(rnd() % 4));
			if (rnd() & 1)
				d = ldexp(1.0, -126 + (int)(rnd() % 2) * 253);
			if (rnd() & 1)
				d = nextafter(d, rnd() & 1 ? 0.0 : 1e300);
			break;
		}
		if (rnd() & 1)
			d = -d;
		if (!isfinite(d))
			continue;
		expect_point_rounding(d, USC_BF16);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_binary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test_setup_teardown(test_codecs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
