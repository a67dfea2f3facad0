/*
 * The array entries of the domain interface (load_array and
 * to_output_array, oracles/domain.h) in the tier (oracles/tier*.c) and in
 * plain f64 (oracles/f64.c).
 *
 * Equivalence: the array entries must give exactly what the per-element
 * entries give, field by field (tier) or bit for bit (f64), on every code
 * of every element type of at most 16 bits (bf16, f16, every fp8, fp6 and
 * fp4 format, the small integers, pred) and on random and special codes
 * of the wider types (NaN payloads, infinities, signed zeros, subnormals,
 * the largest finites); and to_output_array the same codes as to_output
 * on a pool of tier values that reaches every branch of the f32 fast path
 * and of the general path (points, narrow and wide balls, balls across
 * zero and across f32 rounding boundaries, signed and sign-unknown
 * zeros, strict-sign flags, infinities, NaN, undecided, magnitudes beyond
 * FLT_MAX and below f32's subnormals, integers).  The per-element entries
 * are the expected values here ONLY as an equivalence test.
 *
 * Containment, with expected values from MPFR called directly: every code
 * of the IEEE-style formats loads as the point whose value MPFR builds
 * from the code's sign, exponent and significand fields; and every f32,
 * bf16 and f16 code that to_output_array gives for a finite ball is the
 * one MPFR's nearest-even rounding (exponent range and subnormals of the
 * format emulated, as CORE-MATH does) gives to both ends of the ball when
 * those agree, and MPFR's rounding of the midpoint otherwise.
 *
 * End to end: kernels run through usc_eval in the tier and plain f64
 * (whole, and streamed in tiles that do not divide the input) give the
 * codes derived by hand: a bf16 -> f32 convert widens every code exactly,
 * an f32 negate flips the sign bit, a dot with the identity matrix gives
 * its operand back, and with a NaN in an operand (the tier's matmul
 * declines, the per-element path runs) NaN rows and exact other rows.
 *
 * USC_TEST_SCALE multiplies the random sample counts.
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

#include "oracles/domain.h"
#include "oracles/tier.h"
#include "oracles/tier_internal.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

typedef usc__tier_value tvalue;

#define TIER_TEST_SEED 0x5851F42D4C957F2Dull
#include "tier_test_rng.h"

static uint64_t dbits(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof b);
	return b;
}

/* Both domains' states. */
typedef struct ctx {
	void *ts, *fs;
} ctx;

static int setup(void **state)
{
	ctx *c = calloc(1, sizeof *c);
	usc_error err;

	assert_non_null(c);
	assert_int_equal(usc__domain_tier.create(&c->ts, &err), USC_OK);
	assert_int_equal(usc__domain_f64.create(&c->fs, &err), USC_OK);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	ctx *c = *state;

	usc__domain_tier.destroy(c->ts);
	usc__domain_f64.destroy(c->fs);
	free(c);
	return 0;
}

/* Every field of two tier values the same bits. */
static void same_value(const char *what, usc_dtype t, size_t i,
		       const tvalue *f, const tvalue *g)
{
	if (memcmp(&f->mid, &g->mid, sizeof f->mid) != 0 ||
	    memcmp(&f->rad, &g->rad, sizeof f->rad) != 0 ||
	    f->bits != g->bits || f->kind != g->kind || f->flags != g->flags)
		fail_msg("%s %s element %zu: array (%a, %a, bits %llu, kind "
			 "%d, flags %d) but per element (%a, %a, bits %llu, "
			 "kind %d, flags %d)",
			 what, usc_dtype_name(t), i, f->mid, f->rad,
			 (unsigned long long)f->bits, f->kind, f->flags,
			 g->mid, g->rad, (unsigned long long)g->bits, g->kind,
			 g->flags);
}

/* The helpers of domain.h against the tensor library's accessors. */
static void test_enc_helpers(void **state)
{
	static const usc_dtype ts[] = {USC_U8, USC_S16, USC_F32, USC_F64,
				       USC_F8E4M3FN, USC_U32, USC_BF16};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof ts / sizeof *ts; k++) {
		usc_dtype t = ts[k];
		const usc_format *f = usc_format_of(t);
		size_t c = (size_t)f->container_bytes, i, n = 37;
		int64_t dims[1] = {(int64_t)n};
		usc_tensor *x;
		usc_error err;
		unsigned char buf[37 * 8];

		assert_int_equal(usc_tensor_create(t, 1, dims, &x, &err),
				 USC_OK);
		for (i = 0; i < n; i++) {
			uint64_t b = rnd() & usc__dom_mask(f->bits), got;

			assert_int_equal(usc_tensor_set_bits(x, i, b), USC_OK);
			usc__dom_put_enc(buf, c, i, b);
			assert_int_equal(usc_tensor_get_bits(x, i, &got),
					 USC_OK);
			assert_int_equal(usc__dom_get_enc(usc_tensor_cdata(x),
							  c, i),
					 got);
		}
		assert_memory_equal(buf, usc_tensor_cdata(x), n * c);
		usc_tensor_destroy(x);
	}
}

/* ------------------------------------------------------------ loads */

/* The codes a test loads for type t: all of them, or a sample. */
static uint64_t *codes_of(usc_dtype t, size_t *n)
{
	const usc_format *f = usc_format_of(t);
	uint64_t *v, mask = usc__dom_mask(f->bits);
	size_t i, k = 0;

	if (f->bits <= 16) {
		*n = (size_t)1 << f->bits;
		v = malloc(*n * sizeof *v);
		assert_non_null(v);
		for (i = 0; i < *n; i++)
			v[i] = i;
		return v;
	}
	*n = (size_t)(20000 * scale()) + 64;
	v = malloc(*n * sizeof *v);
	assert_non_null(v);
	if (t == USC_F32) {
		static const uint32_t sp[] = {
			0x00000000, 0x80000000, 0x7f800000, 0xff800000,
			0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff,
			0x00000001, 0x80000001, 0x007fffff, 0x807fffff,
			0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
			0x3f800000, 0xbf800000, 0x33800000, 0x34000000};

		for (i = 0; i < sizeof sp / sizeof *sp; i++)
			v[k++] = sp[i];
	} else if (t == USC_F64) {
		static const double sp[] = {
			0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN,
			0x1p-1074, -0x1p-1074, 0x1.fffffffffffffp-1023,
			0x1p-1022, DBL_MAX, -DBL_MAX, 1.0, -1.0,
			0x1.fffffep127, 0x1.ffffffp127, 0x1p128, 0x1p-149,
			0x1p-150, 0x1.8p-150};

		for (i = 0; i < sizeof sp / sizeof *sp; i++)
			v[k++] = dbits(sp[i]);
		v[k++] = 0x7ff0000000000001ull; /* a signalling payload */
		v[k++] = 0xfff8000000000123ull;
	} else {
		/* Integers: the extremes. */
		v[k++] = 0;
		v[k++] = 1;
		v[k++] = mask;
		v[k++] = mask >> 1;
		v[k++] = (mask >> 1) + 1;
	}
	while (k < *n) {
		uint64_t r = rnd() & mask;

		/* A quarter with few significand bits or tiny exponents. */
		if (usc_dtype_is_float(t) && (rnd() & 3) == 0)
			r &= t == USC_F32 ? 0x807f0000u : 0x800fff0000000000ull;
		v[k++] = r;
	}
	return v;
}

/* Loads n codes both ways in both domains and compares. */
static void load_both(ctx *c, usc_dtype t, const uint64_t *codes, size_t n)
{
	size_t i, cb = (size_t)usc_format_of(t)->container_bytes;
	unsigned char *enc = malloc(n * cb + 1);
	tvalue *ta = malloc(n * sizeof *ta), *tp = malloc(n * sizeof *tp);
	uint64_t *fa = malloc(n * sizeof *fa), *fp = malloc(n * sizeof *fp);
	usc_error err;

	assert_true(enc && ta && tp && fa && fp);
	/* Odd offset: the entries may not assume alignment. */
	for (i = 0; i < n; i++)
		usc__dom_put_enc(enc + 1, cb, i, codes[i]);
	memset(ta, 0xa5, n * sizeof *ta);
	memset(tp, 0x5a, n * sizeof *tp);
	assert_int_equal(usc__domain_tier.load_array(c->ts, t, enc + 1, n, ta,
						     &err),
			 USC_OK);
	assert_int_equal(usc__domain_f64.load_array(c->fs, t, enc + 1, n, fa,
						    &err),
			 USC_OK);
	for (i = 0; i < n; i++) {
		assert_int_equal(usc__domain_tier.load(c->ts, t, codes[i],
						       &tp[i], &err),
				 USC_OK);
		same_value("load", t, i, &ta[i], &tp[i]);
		assert_int_equal(usc__domain_f64.load(c->fs, t, codes[i],
						      &fp[i], &err),
				 USC_OK);
		if (fa[i] != fp[i])
			fail_msg("f64 load %s code %#llx: array %#llx, per "
				 "element %#llx",
				 usc_dtype_name(t),
				 (unsigned long long)codes[i],
				 (unsigned long long)fa[i],
				 (unsigned long long)fp[i]);
	}
	free(enc);
	free(ta);
	free(tp);
	free(fa);
	free(fp);
}

/* Every real and integer type but complex ones. */
static void test_load_equivalence(void **state)
{
	ctx *c = *state;
	int t;

	for (t = 1; t < USC_DTYPE_COUNT; t++) {
		const usc_format *f = usc_format_of((usc_dtype)t);
		uint64_t *codes;
		size_t n;

		if (f->kind == USC_KIND_COMPLEX || f->kind == USC_KIND_OTHER)
			continue;
		codes = codes_of((usc_dtype)t, &n);
		load_both(c, (usc_dtype)t, codes, n);
		free(codes);
	}
}

/*
 * The exact value of code b of an IEEE-style binary format (sign,
 * exp_bits, man_bits, bias; the largest exponent field is Inf/NaN), into
 * x by MPFR from the fields; returns 0 finite, 1 +-Inf (sign in *neg), 2
 * NaN.
 */
static int ieee_value(const usc_format *f, uint64_t b, mpfr_t x, int *neg)
{
	uint64_t man = b & usc__dom_mask(f->man_bits);
	uint64_t e = (b >> f->man_bits) & usc__dom_mask(f->exp_bits);
	uint64_t emax = usc__dom_mask(f->exp_bits);

	*neg = (int)((b >> (f->bits - 1)) & 1);
	if (e == emax)
		return man ? 2 : 1;
	if (e == 0) /* 0.man 2^(1 - bias) */
		mpfr_set_ui_2exp(x, man, 1 - f->bias - f->man_bits, MPFR_RNDN);
	else
		mpfr_set_ui_2exp(x, ((uint64_t)1 << f->man_bits) | man,
				 (long)e - f->bias - f->man_bits, MPFR_RNDN);
	if (*neg)
		mpfr_neg(x, x, MPFR_RNDN);
	return 0;
}

/* A tier value is exactly the real (or special) code b denotes. */
static void check_load_exact(usc_dtype t, uint64_t b, const tvalue *v,
			     mpfr_t x)
{
	const usc_format *f = usc_format_of(t);
	int neg, k = ieee_value(f, b, x, &neg);

	if (k == 2) {
		assert_int_equal(v->kind, USC__ORC_NAN);
		return;
	}
	if (k == 1) {
		assert_int_equal(v->kind,
				 neg ? USC__ORC_NEG_INF : USC__ORC_POS_INF);
		return;
	}
	assert_int_equal(v->kind, USC__ORC_FINITE);
	if (v->rad != 0 || mpfr_cmp_d(x, v->mid) != 0)
		fail_msg("%s code %#llx: loaded %a +- %a, MPFR %s",
			 usc_dtype_name(t), (unsigned long long)b, v->mid,
			 v->rad, mpfr_get_str(NULL, NULL, 16, 0, x, MPFR_RNDN));
	if (mpfr_zero_p(x))
		assert_int_equal((v->flags & USC__ORC_NEG_ZERO) != 0, neg);
}

/* Containment of the loads of the IEEE-style formats, against MPFR. */
static void test_load_mpfr(void **state)
{
	static const usc_dtype ts[] = {USC_BF16, USC_F16, USC_F32, USC_F64,
				       USC_F8E5M2, USC_F8E4M3, USC_F8E3M4};
	ctx *c = *state;
	mpfr_t x;
	size_t k;

	mpfr_init2(x, 64);
	for (k = 0; k < sizeof ts / sizeof *ts; k++) {
		usc_dtype t = ts[k];
		size_t n, i, cb = (size_t)usc_format_of(t)->container_bytes;
		uint64_t *codes = codes_of(t, &n);
		unsigned char *enc = malloc(n * cb);
		tvalue *v = malloc(n * sizeof *v);
		usc_error err;

		assert_true(enc && v);
		for (i = 0; i < n; i++)
			usc__dom_put_enc(enc, cb, i, codes[i]);
		assert_int_equal(usc__domain_tier.load_array(c->ts, t, enc, n,
							     v, &err),
				 USC_OK);
		for (i = 0; i < n; i++)
			check_load_exact(t, codes[i], &v[i], x);
		free(codes);
		free(enc);
		free(v);
	}
	mpfr_clear(x);
}

/* ------------------------------------------------------------ outputs */

typedef struct pool {
	tvalue *v;
	size_t n, cap;
} pool;

static void add(pool *p, tvalue v)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->v = realloc(p->v, p->cap * sizeof *p->v);
		assert_non_null(p->v);
	}
	p->v[p->n++] = v;
}

static void pool_free(pool *p)
{
	free(p->v);
	free(p);
}

static tvalue ball(double mid, double rad)
{
	tvalue v;

	memset(&v, 0, sizeof v);
	usc__tier_value_set(&v, mid, rad);
	return v;
}

static tvalue point(ctx *c, double d)
{
	tvalue v;
	usc_error err;

	memset(&v, 0, sizeof v);
	assert_int_equal(usc__domain_tier.load(c->ts, USC_F64, dbits(d), &v,
					       &err),
			 USC_OK);
	return v;
}

/*
 * A random multiple of half the spacing of the f32 (bf16, f16) grid:
 * every other one a tie between two codes.  *half receives the half
 * spacing.
 */
static double grid_point(double *half)
{
	double m = ldexp(1.0 + unif(), (int)(rnd() % 300) - 160);
	int p = (rnd() & 1) ? 24 : (rnd() & 1) ? 8 : 11;

	*half = ldexp(1.0, ilogb(m) - p);
	return ldexp(floor(ldexp(m, -ilogb(m) + p)), ilogb(m) - p);
}

/* A random double near such a grid: the points and their neighbours. */
static double near_grid(void)
{
	double half, m = grid_point(&half);

	switch (rnd() % 3) {
	case 0: return m;
	case 1: return m + half * 0x1p-29 * (double)(rnd() % 5);
	default: return nextafter(m, (rnd() & 1) ? INFINITY : -INFINITY);
	}
}

static void make_pool(ctx *c, pool *p)
{
	static const double pts[] = {
		1.0, -1.0, 0.1, -0.7, 0x1p-149, -0x1p-149, 0x1p-150, 0x1.8p-150,
		0x1p-151, 0x1p-1074, 0x1p-126, 0x1.fffffcp-127, FLT_MAX,
		-FLT_MAX, 0x1.fffffefffffffp127, 0x1.ffffffp127, 0x1p128,
		1e300, -1e300, DBL_MAX, 65504.0, 65520.0, 0x1.fep127,
		0x1.ffp127, 3.0, 0x1.000001p0, 0x1.0000011p0, -0x1.000003p0};
	usc__dom_op ex, ng;
	usc_error err;
	size_t i, base;
	long n = 6000 * scale();

	memset(p, 0, sizeof *p);
	for (i = 0; i < sizeof pts / sizeof *pts; i++) {
		add(p, point(c, pts[i]));
		add(p, ball(pts[i], fabs(pts[i]) * 0x1p-40));
	}
	add(p, point(c, 0.0));
	add(p, point(c, -0.0));
	{
		tvalue z = point(c, 0.0);

		z.flags = USC__ORC_ZSIGN_UNKNOWN;
		add(p, z);
	}
	add(p, point(c, INFINITY));
	add(p, point(c, -INFINITY));
	add(p, point(c, NAN));
	{
		tvalue u = point(c, 1.0);

		u.kind = USC__ORC_UNDECIDED;
		u.mid = 0;
		add(p, u);
	}
	/* Balls across zero, touching it, around the f32 subnormals. */
	add(p, ball(0.0, 0x1p-20));
	add(p, ball(0.0, 0x1p-160));
	add(p, ball(0x1p-20, 0x1p-20));
	add(p, ball(-0x1p-20, 0x1p-20));
	add(p, ball(0x1p-151, 0x1p-152));
	add(p, ball(-0x1p-149, 0x1p-200));
	add(p, ball(-0.1, 0.3));
	/* Balls across the overflow thresholds of f32, bf16 and f16. */
	add(p, ball(FLT_MAX, 0x1p100));
	add(p, ball(-0x1.ffffffp127, 0x1p100));
	add(p, ball(0x1.ffp127, 0x1p118));
	add(p, ball(-0x1.ffp127, 0x1p110));
	add(p, ball(65520.0, 1.0));
	add(p, ball(-65520.0, 0x1p-20));
	add(p, ball(65519.0, 2.0));
	add(p, ball(0x1p120, 0x1p110));
	/* Strict-sign flags: exp of balls and their negations. */
	memset(&ex, 0, sizeof ex);
	ex.op = USC_HLO_OP_EXPONENTIAL;
	ex.nargs = 1;
	ex.result = ex.arg[0] = USC_F64;
	ng = ex;
	ng.op = USC_HLO_OP_NEGATE;
	base = p->n;
	{
		const double m[] = {-1e9, -800.0, -110.0, -103.5, -1.0, 0.5,
				    88.7};

		for (i = 0; i < sizeof m / sizeof *m; i++) {
			tvalue b = ball(m[i], 0.25), r1, r2;
			const void *a[1] = {&b};
			usc_status st;

			st = usc__tier_apply_general(c->ts, &ex, 1, &r1, a, 0,
						     &err);
			assert_int_equal(st, USC_OK);
			a[0] = &r1;
			st = usc__tier_apply_general(c->ts, &ng, 1, &r2, a, 0,
						     &err);
			assert_int_equal(st, USC_OK);
			add(p, r1);
			add(p, r2);
		}
	}
	assert_true(p->n > base);
	/*
	 * Strict-sign flags set by hand, with and against the midpoint's
	 * sign, in and past the subnormal range of bf16 and f16, and on a
	 * ball across a rounding boundary: the array path may take the
	 * midpoint's code only where the flag agrees with its sign.
	 */
	{
		const double m[][2] = {
			{-0x1p-140, 0x1p-139}, {0x1p-140, 0x1p-139},
			{0x1p-30, 0x1p-29},    {-0x1p-30, 0x1p-29},
			{1.5, 0.25},           {-1.5, 0.25},
			{0x1.01p0, 0x1p-20},   {-0x1.01p0, 0x1p-20},
			{0x1p-133, 0x1p-140},  {65519.0, 2.0},
		};

		for (i = 0; i < sizeof m / sizeof *m; i++)
			for (unsigned fl = 1; fl <= 2; fl++) {
				tvalue b = ball(m[i][0], m[i][1]);

				b.flags = (unsigned char)(fl == 1 ? TIER_GT0
								  : TIER_LT0);
				add(p, b);
			}
	}
	/* Random points and balls near the grids of f32, bf16 and f16. */
	for (long k = 0; k < n; k++) {
		double m = near_grid() * ((rnd() & 1) ? -1.0 : 1.0);
		int sh = (int)(rnd() % 50) + 4;

		switch (rnd() % 4) {
		case 0:
			add(p, point(c, m));
			break;
		case 1:
			add(p, ball(m, ldexp(fabs(m), -sh)));
			break;
		case 2:
			/* Radius of a few units in the last place of m. */
			add(p, ball(m, fabs(m) * 0x1p-52 *
					       (double)(rnd() % 9)));
			break;
		default:
			add(p, ball(ldexp(unif() - 0.5, (int)(rnd() % 40) - 20),
				    ldexp(unif(), -(int)(rnd() % 60))));
			break;
		}
	}
	/*
	 * Balls with an end exactly on a grid point (a tie, half the time):
	 * mid - rad or mid + rad is the point itself, so that only the
	 * outward step of the bounds keeps the ball from deciding.
	 */
	for (long k = 0; k < n / 4; k++) {
		double half, m = grid_point(&half);
		double d = ldexp(half, -(int)(rnd() % 26) - 1);

		if (rnd() & 1)
			m = -m;
		add(p, ball((rnd() & 1) ? m + d : m - d, d));
	}
}

/* The f64 domain's value of a tier value's midpoint. */
static uint64_t f64_of(const tvalue *v)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: return dbits(INFINITY);
	case USC__ORC_NEG_INF: return dbits(-INFINITY);
	case USC__ORC_FINITE:
		return dbits(v->mid == 0 && (v->flags & USC__ORC_NEG_ZERO)
				     ? -0.0
				     : v->mid);
	default: return dbits(NAN);
	}
}

/* to_output_array against to_output for type t over the pool. */
static void output_both(ctx *c, const pool *p, usc_dtype t)
{
	size_t i, n = p->n, cb = (size_t)usc_format_of(t)->container_bytes;
	unsigned char *ea = malloc(n * cb + 1), *ef = malloc(n * cb);
	uint64_t *fv = malloc(n * sizeof *fv);
	usc_error err;

	assert_true(ea && ef && fv);
	assert_int_equal(usc__domain_tier.to_output_array(c->ts, t, p->v, n,
							  ea + 1, &err),
			 USC_OK);
	for (i = 0; i < n; i++) {
		uint64_t want, got = usc__dom_get_enc(ea + 1, cb, i);

		assert_int_equal(usc__domain_tier.to_output(c->ts, t, &p->v[i],
							    &want, NULL, &err),
				 USC_OK);
		if (got != want)
			fail_msg("tier to_output %s element %zu (%a +- %a, "
				 "kind "
				 "%d, flags %d): array %#llx, per element "
				 "%#llx",
				 usc_dtype_name(t), i, p->v[i].mid,
				 p->v[i].rad, p->v[i].kind, p->v[i].flags,
				 (unsigned long long)got,
				 (unsigned long long)want);
		fv[i] = f64_of(&p->v[i]);
	}
	assert_int_equal(usc__domain_f64.to_output_array(c->fs, t, fv, n, ef,
							 &err),
			 USC_OK);
	for (i = 0; i < n; i++) {
		uint64_t want;

		assert_int_equal(usc__domain_f64.to_output(c->fs, t, &fv[i],
							   &want, NULL, &err),
				 USC_OK);
		assert_int_equal(usc__dom_get_enc(ef, cb, i), want);
	}
	free(ea);
	free(ef);
	free(fv);
}

static void test_output_equivalence(void **state)
{
	static const usc_dtype ts[] = {
		USC_F32, USC_BF16, USC_F16, USC_F64, USC_F8E4M3FN, USC_F8E5M2,
		USC_F8E4M3FNUZ, USC_F8E8M0FNU, USC_F6E2M3FN, USC_F4E2M1FN};
	ctx *c = *state;
	pool *p = malloc(sizeof *p);
	size_t k;

	assert_non_null(p);
	make_pool(c, p);
	for (k = 0; k < sizeof ts / sizeof *ts; k++)
		output_both(c, p, ts[k]);
	pool_free(p);
}

/* Integers and pred: the loaded codes come back out, both ways. */
static void test_output_integers(void **state)
{
	static const usc_dtype ts[] = {USC_PRED, USC_S4, USC_S8, USC_U16,
				       USC_S32, USC_U64, USC_S64};
	ctx *c = *state;
	size_t k;

	for (k = 0; k < sizeof ts / sizeof *ts; k++) {
		usc_dtype t = ts[k];
		size_t n, i, cb = (size_t)usc_format_of(t)->container_bytes;
		uint64_t *codes = codes_of(t, &n);
		unsigned char *enc = malloc(n * cb), *out = malloc(n * cb);
		unsigned char *fo = malloc(n * cb);
		tvalue *v = malloc(n * sizeof *v);
		uint64_t *fv = malloc(n * sizeof *fv);
		usc_error err;

		assert_true(enc && out && fo && v && fv);
		for (i = 0; i < n; i++)
			usc__dom_put_enc(enc, cb, i, codes[i]);
		assert_int_equal(usc__domain_tier.load_array(c->ts, t, enc, n,
							     v, &err),
				 USC_OK);
		assert_int_equal(usc__domain_tier.to_output_array(
					 c->ts, t, v, n, out, &err),
				 USC_OK);
		assert_int_equal(usc__domain_f64.load_array(c->fs, t, enc, n,
							    fv, &err),
				 USC_OK);
		assert_int_equal(usc__domain_f64.to_output_array(
					 c->fs, t, fv, n, fo, &err),
				 USC_OK);
		/* An identity: the codes themselves. */
		assert_memory_equal(out, enc, n * cb);
		assert_memory_equal(fo, enc, n * cb);
		free(codes);
		free(enc);
		free(out);
		free(fo);
		free(v);
		free(fv);
	}
}

/*
 * d rounded to nearest-even into the IEEE-style format t by MPFR (the
 * format's precision, exponent range and subnormals emulated), as a
 * double, with its sign for zero.
 */
static double round_mpfr(usc_dtype t, double d)
{
	usc_float_info fi;
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_t y;
	int inex;
	double r;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	mpfr_init2(y, fi.precision);
	/* MPFR's significands lie in [1/2, 1): exponents one above. */
	mpfr_set_emin(fi.emin - fi.precision + 2);
	mpfr_set_emax(fi.emax + 1);
	inex = mpfr_set_d(y, d, MPFR_RNDN);
	inex = mpfr_check_range(y, inex, MPFR_RNDN);
	(void)mpfr_subnormalize(y, inex, MPFR_RNDN);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	r = mpfr_get_d(y, MPFR_RNDN);
	mpfr_clear(y);
	return r;
}

static bool same_real(double a, double b)
{
	return a == b && signbit(a) == signbit(b);
}

/*
 * Containment: for every finite ball of the pool without strict-sign
 * flags, the code out of to_output_array is MPFR's rounding of both ends
 * where the ends (outward bounds of the ball) round alike, and MPFR's
 * rounding of the midpoint otherwise.
 */
static void test_output_mpfr(void **state)
{
	static const usc_dtype ts[] = {USC_F32, USC_BF16, USC_F16};
	ctx *c = *state;
	pool *p = malloc(sizeof *p);
	size_t k, decided = 0, total = 0;

	assert_non_null(p);
	make_pool(c, p);
	for (k = 0; k < sizeof ts / sizeof *ts; k++) {
		usc_dtype t = ts[k];
		size_t i, n = p->n;
		size_t cb = (size_t)usc_format_of(t)->container_bytes;
		unsigned char *enc = malloc(n * cb);
		usc_error err;

		assert_non_null(enc);
		assert_int_equal(usc__domain_tier.to_output_array(
					 c->ts, t, p->v, n, enc, &err),
				 USC_OK);
		for (i = 0; i < n; i++) {
			const tvalue *v = &p->v[i];
			double lo, hi, rl, rh, want, got;
			uint64_t bits;

			if (v->kind != USC__ORC_FINITE ||
			    (v->flags & ~(unsigned)(USC__ORC_NEG_ZERO |
						     USC__ORC_ZSIGN_UNKNOWN)))
				continue;
			if (v->mid == 0 && v->rad == 0)
				continue; /* the zero points: the next test */
			usc__tier_bounds(v, &lo, &hi);
			rl = round_mpfr(t, lo);
			rh = round_mpfr(t, hi);
			if (same_real(rl, rh)) {
				want = rl;
				decided++;
			} else
				want = round_mpfr(t, v->mid);
			total++;
			bits = usc__dom_get_enc(enc, cb, i);
			assert_int_equal(usc_decode_double(t, bits, &got),
					 USC_OK);
			if (!same_real(got, want) &&
			    !(isnan(got) && isnan(want)))
				fail_msg("%s: ball %a +- %a gives %a, MPFR %a",
					 usc_dtype_name(t), v->mid, v->rad, got,
					 want);
		}
		free(enc);
	}
	/* The pool decides most elements and leaves some undecided. */
	assert_true(decided > total / 4);
	assert_true(decided < total);
	pool_free(p);
}

/* The zero points: +0, -0 and sign-unknown (nearest-even: the midpoint). */
static void test_output_zeros(void **state)
{
	ctx *c = *state;
	tvalue z[3];
	unsigned char enc[12];
	usc_error err;

	z[0] = point(c, 0.0);
	z[1] = point(c, -0.0);
	z[2] = point(c, 0.0);
	z[2].flags = USC__ORC_ZSIGN_UNKNOWN;
	assert_int_equal(usc__domain_tier.to_output_array(c->ts, USC_F32, z, 3,
							  enc, &err),
			 USC_OK);
	assert_int_equal(usc__dom_get_enc(enc, 4, 0), 0x00000000u);
	assert_int_equal(usc__dom_get_enc(enc, 4, 1), 0x80000000u);
	assert_int_equal(usc__dom_get_enc(enc, 4, 2), 0x00000000u);
}

/* ---------------------------------------------------------- end to end */

static usc_tensor *tensor_of(usc_dtype t, int64_t r0, int64_t r1,
			     const uint64_t *codes)
{
	int64_t dims[2] = {r0, r1};
	usc_tensor *x;
	usc_error err;
	int64_t i;

	assert_int_equal(usc_tensor_create(t, r1 ? 2 : 1, dims, &x, &err),
			 USC_OK);
	for (i = 0; i < r0 * (r1 ? r1 : 1); i++)
		assert_int_equal(usc_tensor_set_bits(x, (uint64_t)i, codes[i]),
				 USC_OK);
	return x;
}

/* Runs text on the inputs in domain dom with tile size tile; output 0. */
static usc_tensor *run(const char *text, usc_eval_domain dom, size_t tile,
		       usc_tensor **in, size_t nin)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f;
	usc_eval *ev;
	usc_tensor *out;
	usc_error err;
	size_t i;

	if (usc_hlo_parse(text, strlen(text), "<array>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	o.domain = dom;
	o.tile_elements = tile;
	if (usc_eval_create(usc_hlo_file_module(f, 0), &o, &ev, &err) !=
	    USC_OK)
		fail_msg("create: %s", err.message);
	for (i = 0; i < nin; i++)
		assert_int_equal(usc_eval_bind(ev, i, in[i], &err), USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	assert_int_equal(usc_eval_take_output(ev, 0, &out, &err), USC_OK);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	return out;
}

static const usc_eval_domain doms[] = {USC_DOMAIN_TIER, USC_DOMAIN_F64,
				       USC_DOMAIN_REFERENCE};
static const size_t tiles[] = {1000, USC_EVAL_NO_TILES, 0};

/* Every bf16 code widened to f32: the code shifted left 16 bits. */
static void test_eval_convert(void **state)
{
	static const char text[] =
		"HloModule widen\n\n"
		"ENTRY %main (p: bf16[65536]) -> f32[65536] {\n"
		"  %p = bf16[65536]{0} parameter(0)\n"
		"  ROOT %c = f32[65536]{0} convert(%p)\n"
		"}\n";
	uint64_t *codes = malloc(65536 * sizeof *codes);
	usc_tensor *in;
	size_t d, k, i;
	usc_status st;

	(void)state;
	assert_non_null(codes);
	for (i = 0; i < 65536; i++)
		codes[i] = i;
	in = tensor_of(USC_BF16, 65536, 0, codes);
	for (d = 0; d < sizeof doms / sizeof *doms; d++)
		for (k = 0; k < sizeof tiles / sizeof *tiles; k++) {
			usc_tensor *out = run(text, doms[d], tiles[k], &in, 1);

			for (i = 0; i < 65536; i++) {
				uint64_t b;
				float f;
				uint32_t w;

				st = usc_tensor_get_bits(out, i, &b);
				assert_int_equal(st, USC_OK);
				w = (uint32_t)i << 16;
				memcpy(&f, &w, sizeof f);
				if (isnan(f)) {
					memcpy(&f, &(uint32_t){(uint32_t)b},
					       sizeof f);
					assert_true(isnan(f));
				} else if (b != w)
					fail_msg("domain %d tile %zu: bf16 "
						 "%#zx gives %#llx",
						 (int)doms[d], tiles[k], i,
						 (unsigned long long)b);
			}
			usc_tensor_destroy(out);
		}
	usc_tensor_destroy(in);
	free(codes);
}

/* f32 negate on random and special codes: the sign bit flips. */
static void test_eval_negate(void **state)
{
	static const char text[] =
		"HloModule neg\n\n"
		"ENTRY %main (p: f32[20001]) -> f32[20001] {\n"
		"  %p = f32[20001]{0} parameter(0)\n"
		"  ROOT %n = f32[20001]{0} negate(%p)\n"
		"}\n";
	size_t n = 20001, i, d, k;
	uint64_t *codes = codes_of(USC_F32, &n);
	usc_tensor *in;
	usc_status st;

	(void)state;
	assert_true(n >= 20001);
	in = tensor_of(USC_F32, 20001, 0, codes);
	for (d = 0; d < sizeof doms / sizeof *doms; d++)
		for (k = 0; k < sizeof tiles / sizeof *tiles; k++) {
			usc_tensor *out = run(text, doms[d], tiles[k], &in, 1);

			for (i = 0; i < 20001; i++) {
				uint64_t b, w = codes[i] ^ 0x80000000u;
				float f;

				st = usc_tensor_get_bits(out, i, &b);
				assert_int_equal(st, USC_OK);
				memcpy(&f, &(uint32_t){(uint32_t)codes[i]},
				       sizeof f);
				if (isnan(f)) {
					memcpy(&f, &(uint32_t){(uint32_t)b},
					       sizeof f);
					assert_true(isnan(f));
				} else if (b != w)
					fail_msg("domain %d tile %zu: -%#llx "
						 "gives %#llx",
						 (int)doms[d], tiles[k],
						 (unsigned long long)codes[i],
						 (unsigned long long)b);
			}
			usc_tensor_destroy(out);
		}
	usc_tensor_destroy(in);
	free(codes);
}

/*
 * A bf16 [48,48] times the f32 identity: A itself, widened (zeros equal
 * as reals: their signs follow IEEE's sum rule).  With a NaN in row 5 of
 * A (the tier's matmul declines and the per-element path runs), row 5 is
 * NaN (NaN times 0 is NaN) and every other row still A.
 */
static void test_eval_dot_identity(void **state)
{
	static const char text[] =
		"HloModule dot_id\n\n"
		"ENTRY %main (a: bf16[48,48], b: f32[48,48]) -> f32[48,48] {\n"
		"  %a = bf16[48,48]{1,0} parameter(0)\n"
		"  %b = f32[48,48]{1,0} parameter(1)\n"
		"  %ca = f32[48,48]{1,0} convert(%a)\n"
		"  ROOT %d = f32[48,48]{1,0} dot(%ca, %b), "
		"lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
		"}\n";
	/* Finite specials: subnormals, extremes, signed zeros. */
	static const uint64_t sp[] = {0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f,
				      0xff7f, 0x0000, 0x8000, 0x3f80, 0xbf80};
	uint64_t a[48 * 48], id[48 * 48];
	size_t i, d, nan_case;
	usc_status st;

	(void)state;
	for (i = 0; i < 48 * 48; i++) {
		uint64_t r = rnd() & 0xffff;

		/* Finite codes only: exponent field below all ones. */
		if ((r & 0x7f80) == 0x7f80)
			r &= 0xbfff;
		a[i] = i % 7 == 0 ? sp[(i / 7) % 10] : r;
		id[i] = (i / 48 == i % 48) ? 0x3f800000u : 0;
	}
	for (nan_case = 0; nan_case < 2; nan_case++) {
		usc_tensor *in[2];

		if (nan_case)
			a[5 * 48 + 17] = 0x7fc0;
		in[0] = tensor_of(USC_BF16, 48, 48, a);
		in[1] = tensor_of(USC_F32, 48, 48, id);
		for (d = 0; d < 2; d++) {
			usc_tensor *out = run(text, doms[d], 0, in, 2);

			for (i = 0; i < 48 * 48; i++) {
				uint64_t b;
				uint32_t w = (uint32_t)a[i] << 16;
				float f, g;

				st = usc_tensor_get_bits(out, i, &b);
				assert_int_equal(st, USC_OK);
				memcpy(&f, &w, sizeof f);
				memcpy(&g, &(uint32_t){(uint32_t)b}, sizeof g);
				if (nan_case && i / 48 == 5)
					assert_true(isnan(g));
				else if (f == 0)
					assert_true(g == 0);
				else if (b != w)
					fail_msg("domain %d: element %zu of "
						 "A I is %#llx, A's %#x",
						 (int)doms[d], i,
						 (unsigned long long)b, w);
			}
			usc_tensor_destroy(out);
		}
		usc_tensor_destroy(in[0]);
		usc_tensor_destroy(in[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enc_helpers),
		cmocka_unit_test(test_load_equivalence),
		cmocka_unit_test(test_load_mpfr),
		cmocka_unit_test(test_output_equivalence),
		cmocka_unit_test(test_output_integers),
		cmocka_unit_test(test_output_mpfr),
		cmocka_unit_test(test_output_zeros),
		cmocka_unit_test(test_eval_convert),
		cmocka_unit_test(test_eval_negate),
		cmocka_unit_test(test_eval_dot_identity),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
