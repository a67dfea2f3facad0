/*
 * The fast certified tier against the MPFI oracle at 256 bits: for every
 * op, random point and ball arguments go through both domains' vtables,
 * and wherever the tier decides, its enclosure must contain the oracle's
 * (never a wrong certainty), its kinds and discrete results must equal
 * the oracle's, and a rounding it certifies must be the oracle's.  The
 * expected values come from the oracle (MPFR/MPFI), never from the tier.
 * Chains (exp(x) y + z) and sums with cancellation check containment and
 * the gamma_n growth of the radius.  USC_TEST_SCALE multiplies the
 * sample counts; per-op undecided rates and timings are printed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <mpfr.h>
#include <mpfi.h>

#define TIER_TEST_SEED 0x9E3779B97F4A7C15ull
#include "tier_test_util.h"

/* A double with a random 53-bit significand, magnitude near 2^e. */
static double rand_sig(int e)
{
	return ldexp(1.0 + unif(), e);
}

typedef enum gen {
	G_WIDE,   /* any sign, 2^-60 .. 2^60, some specials */
	G_EXP,    /* [-800, 800] */
	G_POS,    /* positive, 2^-100 .. 2^100, some <= 0 */
	G_LOG1P,  /* > -1 mostly */
	G_TRIG,   /* |x| < 1000, some beyond 2^20 */
	G_ROUND,  /* near integers and halves */
	G_SMALL,  /* |x| < 8 */
	G_POWY    /* exponents: integers and |y| < 20 */
} gen;

static double gen_mid(gen g)
{
	uint64_t c = rnd() % 100;
	double s = (rnd() & 1) ? -1.0 : 1.0;

	switch (g) {
	case G_WIDE:
		if (c < 2)
			return s * INFINITY;
		if (c < 3)
			return NAN;
		if (c < 7)
			return s * 0.0;
		if (c < 15)
			return s * (double)(rnd() % 16);
		return s * rand_sig((int)(rnd() % 121) - 60);
	case G_EXP:
		if (c < 3)
			return s * 0.0;
		return (unif() * 2 - 1) * 800;
	case G_POS:
		if (c < 4)
			return -rand_sig((int)(rnd() % 10));
		if (c < 7)
			return 0.0;
		if (c < 12)
			return 1.0;
		return rand_sig((int)(rnd() % 201) - 100);
	case G_LOG1P:
		if (c < 3)
			return -1.0;
		if (c < 6)
			return s * 0.0;
		if (c < 40)
			return -1.0 + unif();
		return rand_sig((int)(rnd() % 80) - 40);
	case G_TRIG:
		if (c < 3)
			return s * rand_sig(21 + (int)(rnd() % 10));
		if (c < 6)
			return s * 0.0;
		return s * unif() * 1000;
	case G_ROUND:
		if (c < 40)
			return s * (double)(rnd() % 20) * 0.5;
		return s * unif() * 10;
	case G_SMALL:
		if (c < 5)
			return s * 0.0;
		return s * unif() * 8;
	case G_POWY:
		if (c < 30)
			return s * (double)(rnd() % 6);
		return s * unif() * 20;
	}
	return 0;
}

static double gen_rad(double mid)
{
	uint64_t c = rnd() % 100;

	if (!isfinite(mid) || c < 50)
		return 0;
	if (c < 85 && mid != 0)
		return fabs(mid) * ldexp(unif() + 0.5, -(int)(20 + rnd() % 33));
	return ldexp(unif() + 0.5, -(int)(10 + rnd() % 50));
}

typedef tier_pair pair;

typedef struct counts {
	long n, undecided, both_undecided, oracle_undecided, violations;
	long rounded, rounded_bad;
} counts;

static int violations_printed;

static void report(const char *what, const tvalue *t, const ovalue *o)
{
	if (violations_printed++ > 20)
		return;
	mpfr_fprintf(stderr,
		     "VIOLATION %s: tier kind %d flags %x [%a +- %a] bits %llu;"
		     " oracle kind %d flags %x [%Re, %Re] bits %llu\n",
		     what, t->kind, t->flags, t->mid, t->rad,
		     (unsigned long long)t->bits, o->kind, o->flags,
		     &o->x->left, &o->x->right, (unsigned long long)o->bits);
}

/*
 * Whether the tier's decided result t is consistent with the oracle's o
 * for result type rt: same kind, the oracle's enclosure inside the
 * tier's, the same zero sign where both know it, the same discrete bits.
 */
static void check(pair *p, const char *what, usc_dtype rt, const tvalue *t,
		  const ovalue *o, counts *c)
{
	static const usc_dtype round_types[] = {USC_BF16, USC_F32, USC_F16,
						USC_F8E4M3FN, USC_F8E5M2};
	usc_error err;
	size_t k;

	c->n++;
	if (t->kind == USC__ORC_UNDECIDED) {
		c->undecided++;
		/* Undecided in the oracle too: inherent, not the tier's. */
		if (o->kind == USC__ORC_UNDECIDED)
			c->both_undecided++;
		return;
	}
	if (o->kind == USC__ORC_UNDECIDED) {
		c->oracle_undecided++;
		return;
	}
	if (!usc_dtype_is_float(rt)) {
		if (t->bits != o->bits || t->kind != o->kind) {
			c->violations++;
			report(what, t, o);
		}
		return;
	}
	if (t->kind != o->kind) {
		c->violations++;
		report(what, t, o);
		return;
	}
	if (t->kind == USC__ORC_FINITE) {
		double lo, hi;

		usc__tier_bounds(t, &lo, &hi);
		if (mpfr_cmp_d(&o->x->left, lo) < 0 ||
		    mpfr_cmp_d(&o->x->right, hi) > 0 ||
		    !mpfr_number_p(&o->x->left) ||
		    !mpfr_number_p(&o->x->right)) {
			c->violations++;
			report(what, t, o);
			return;
		}
		if (t->rad == 0 && t->mid == 0 &&
		    !(t->flags & USC__ORC_ZSIGN_UNKNOWN) &&
		    !(o->flags & USC__ORC_ZSIGN_UNKNOWN) &&
		    (t->flags & USC__ORC_NEG_ZERO) !=
			    (o->flags & USC__ORC_NEG_ZERO)) {
			c->violations++;
			report(what, t, o);
			return;
		}
	}
	/* A rounding the tier certifies must be the oracle's. */
	for (k = 0; k < sizeof round_types / sizeof round_types[0]; k++) {
		uint64_t tb = 0, ob = 0;
		usc__oracle_enclosure te, oe;

		assert_int_equal(usc__domain_tier.to_output(p->ts,
							     round_types[k],
							     t, &tb, &te, &err),
				 USC_OK);
		if (!te.rounded)
			continue;
		c->rounded++;
		assert_int_equal(usc__domain_oracle.to_output(
					 p->os, round_types[k], o, &ob, &oe,
					 &err),
				 USC_OK);
		if (!oe.rounded || oe.rounded_bits != te.rounded_bits) {
			c->rounded_bad++;
			c->violations++;
			report(what, t, o);
		}
	}
}

typedef struct opspec {
	usc_hlo_opcode op;
	unsigned nargs;
	gen g[3];
	usc__cmp_dir dir;
	usc_dtype result; /* USC_DTYPE_INVALID: f64, or pred for compare */
} opspec;

static const opspec OPS[] = {
	{USC_HLO_OP_NEGATE, 1, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ABS, 1, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_SIGN, 1, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_EXPONENTIAL, 1, {G_EXP, G_EXP}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_EXPONENTIAL_MINUS_ONE, 1, {G_EXP, G_EXP}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_LOG, 1, {G_POS, G_POS}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_LOG_PLUS_ONE, 1, {G_LOG1P, G_LOG1P}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_LOGISTIC, 1, {G_EXP, G_EXP}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_TANH, 1, {G_SMALL, G_SMALL}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ERF, 1, {G_SMALL, G_SMALL}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_SQRT, 1, {G_POS, G_POS}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_RSQRT, 1, {G_POS, G_POS}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_CBRT, 1, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_SINE, 1, {G_TRIG, G_TRIG}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_COSINE, 1, {G_TRIG, G_TRIG}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_TAN, 1, {G_TRIG, G_TRIG}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_FLOOR, 1, {G_ROUND, G_ROUND}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_CEIL, 1, {G_ROUND, G_ROUND}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ROUND_NEAREST_EVEN, 1, {G_ROUND, G_ROUND}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ROUND_NEAREST_AFZ, 1, {G_ROUND, G_ROUND}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ADD, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_SUBTRACT, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_MULTIPLY, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_DIVIDE, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_MAXIMUM, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_MINIMUM, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_ATAN2, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_POWER, 2, {G_POS, G_POWY}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_POWER, 2, {G_SMALL, G_POWY}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_REMAINDER, 2, {G_SMALL, G_SMALL}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_COMPARE, 2, {G_ROUND, G_ROUND}, USC__CMP_LT, USC_DTYPE_INVALID},
	{USC_HLO_OP_COMPARE, 2, {G_ROUND, G_ROUND}, USC__CMP_EQ, USC_DTYPE_INVALID},
	{USC_HLO_OP_COMPARE, 2, {G_WIDE, G_WIDE}, USC__CMP_GE, USC_DTYPE_INVALID},
	{USC_HLO_OP_COMPARE, 2, {G_WIDE, G_WIDE}, USC__CMP_NE, USC_DTYPE_INVALID},
	{USC_HLO_OP_CLAMP, 3, {G_ROUND, G_ROUND, G_ROUND}, 0, USC_DTYPE_INVALID},
	{USC_HLO_OP_IS_FINITE, 1, {G_WIDE}, 0, USC_PRED},
	{USC_HLO_OP_CONVERT, 1, {G_ROUND}, 0, USC_S32},
	{USC_HLO_OP_CONVERT, 1, {G_WIDE}, 0, USC_U8},
	{USC_HLO_OP_CONVERT, 1, {G_ROUND}, 0, USC_PRED},
	{USC_HLO_OP_CONVERT, 1, {G_WIDE}, 0, USC_BF16},
	{USC_HLO_OP_BITCAST_CONVERT, 1, {G_WIDE}, 0, USC_S64},
	{USC_HLO_OP_REDUCE_PRECISION, 1, {G_WIDE}, 0, USC_DTYPE_INVALID},
};

#define BATCH 256

typedef struct fixture {
	pair p;
	ovalue oa[3][BATCH], oo[BATCH];
	tvalue ta[3][BATCH], to[BATCH];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	usc__oracle_options opt;
	usc_error err;

	usc__oracle_options_default(&opt);
	opt.precision = ORACLE_PREC;
	assert_int_equal(usc__domain_oracle.create(&f->p.os, &err), USC_OK);
	assert_int_equal(usc__oracle_configure(f->p.os, &opt, &err), USC_OK);
	assert_int_equal(usc__domain_tier.create(&f->p.ts, &err), USC_OK);
	usc__domain_oracle.init(f->p.os, f->oa[0], BATCH);
	usc__domain_oracle.init(f->p.os, f->oa[1], BATCH);
	usc__domain_oracle.init(f->p.os, f->oa[2], BATCH);
	usc__domain_oracle.init(f->p.os, f->oo, BATCH);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	usc__domain_oracle.clear(f->p.os, f->oa[0], BATCH);
	usc__domain_oracle.clear(f->p.os, f->oa[1], BATCH);
	usc__domain_oracle.clear(f->p.os, f->oa[2], BATCH);
	usc__domain_oracle.clear(f->p.os, f->oo, BATCH);
	usc__domain_oracle.destroy(f->p.os);
	usc__domain_tier.destroy(f->p.ts);
	free(f);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static usc__dom_op make_op(const opspec *s)
{
	usc__dom_op o;

	memset(&o, 0, sizeof o);
	o.op = s->op;
	o.nargs = s->nargs;
	o.arg[0] = o.arg[1] = o.arg[2] = USC_F64;
	o.result = s->op == USC_HLO_OP_COMPARE ? USC_PRED : USC_F64;
	if (s->result != USC_DTYPE_INVALID)
		o.result = s->result;
	if (s->op == USC_HLO_OP_REDUCE_PRECISION) {
		o.exponent_bits = 8;
		o.mantissa_bits = 7;
	}
	o.cmp_dir = s->dir;
	o.cmp_type = USC__CMP_FLOAT;
	return o;
}

static void test_ops(void **state)
{
	fixture *f = *state;
	long batches = 8 * scale(), total_viol = 0;
	size_t i, j;
	long b;

	fprintf(stderr, "%-24s %6s %8s %8s %9s %6s %8s %9s\n", "op", "n",
		"undec%", "own%", "orc-undec", "viol", "tier-ns", "orc-ns");
	for (i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
		const opspec *s = &OPS[i];
		usc__dom_op op = make_op(s);
		counts c;
		double tt = 0, to = 0;
		char what[64];

		memset(&c, 0, sizeof c);
		snprintf(what, sizeof what, "%s/%d/%s",
			 usc_hlo_opcode_name(s->op), (int)s->dir,
			 usc_dtype_name(op.result));
		for (b = 0; b < batches; b++) {
			const void *oargs[3] = {f->oa[0], f->oa[1], f->oa[2]};
			const void *targs[3] = {f->ta[0], f->ta[1], f->ta[2]};
			usc_error err;
			double t0;

			for (j = 0; j < BATCH; j++) {
				unsigned k;

				for (k = 0; k < s->nargs; k++) {
					double m = gen_mid(s->g[k]);

					set_both(&f->p, &f->oa[k][j],
						 &f->ta[k][j], m, gen_rad(m));
				}
			}
			t0 = now();
			assert_int_equal(usc__domain_tier.apply(f->p.ts, &op,
								 BATCH, f->to,
								 targs, 0,
								 &err),
					 USC_OK);
			tt += now() - t0;
			t0 = now();
			assert_int_equal(usc__domain_oracle.apply(f->p.os, &op,
								   BATCH, f->oo,
								   oargs, 0,
								   &err),
					 USC_OK);
			to += now() - t0;
			for (j = 0; j < BATCH; j++)
				check(&f->p, what, op.result, &f->to[j],
				      &f->oo[j], &c);
		}
		fprintf(stderr, "%-24s %6ld %7.2f%% %7.2f%% %9ld %6ld %8.1f "
			"%9.1f\n", what, c.n,
			100.0 * (double)c.undecided / (double)c.n,
			100.0 * (double)(c.undecided - c.both_undecided) /
				(double)c.n,
			c.oracle_undecided, c.violations,
			1e9 * tt / (double)c.n, 1e9 * to / (double)c.n);
		total_viol += c.violations;
	}
	assert_int_equal(total_viol, 0);
}

/* exp(x) * y + z on balls: containment through a chain. */
static void test_chain(void **state)
{
	fixture *f = *state;
	usc__dom_op ex, mul, add;
	opspec se = {USC_HLO_OP_EXPONENTIAL, 1, {G_SMALL, G_SMALL}, 0,
		     USC_DTYPE_INVALID};
	opspec sm = {USC_HLO_OP_MULTIPLY, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID};
	opspec sa = {USC_HLO_OP_ADD, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID};
	ovalue *o1 = f->oo, o2[BATCH];
	tvalue t1[BATCH], t2[BATCH];
	counts c;
	long b, batches = 4 * scale();
	size_t j;

	ex = make_op(&se);
	mul = make_op(&sm);
	add = make_op(&sa);
	usc__domain_oracle.init(f->p.os, o2, BATCH);
	memset(&c, 0, sizeof c);
	for (b = 0; b < batches; b++) {
		usc_error err;
		const void *oa1[1] = {f->oa[0]}, *ta1[1] = {f->ta[0]};
		const void *oa2[2] = {o1, f->oa[1]}, *ta2[2] = {t1, f->ta[1]};
		const void *oa3[2] = {o2, f->oa[0]}, *ta3[2] = {t2, f->ta[0]};

		for (j = 0; j < BATCH; j++) {
			double m = gen_mid(G_SMALL);

			set_both(&f->p, &f->oa[0][j], &f->ta[0][j], m,
				 gen_rad(m));
			m = (unif() * 2 - 1) * 4;
			set_both(&f->p, &f->oa[1][j], &f->ta[1][j], m,
				 gen_rad(m));
		}
		assert_int_equal(usc__domain_tier.apply(f->p.ts, &ex, BATCH,
							 t1, ta1, 0, &err),
				 USC_OK);
		assert_int_equal(usc__domain_oracle.apply(f->p.os, &ex, BATCH,
							   o1, oa1, 0, &err),
				 USC_OK);
		assert_int_equal(usc__domain_tier.apply(f->p.ts, &mul, BATCH,
							 t2, ta2, 0, &err),
				 USC_OK);
		assert_int_equal(usc__domain_oracle.apply(f->p.os, &mul, BATCH,
							   o2, oa2, 0, &err),
				 USC_OK);
		/* z = -x-ish: reuse the first argument, a cancelling add. */
		assert_int_equal(usc__domain_tier.apply(f->p.ts, &add, BATCH,
							 t1, ta3, 0, &err),
				 USC_OK);
		assert_int_equal(usc__domain_oracle.apply(f->p.os, &add, BATCH,
							   o1, oa3, 0, &err),
				 USC_OK);
		for (j = 0; j < BATCH; j++)
			check(&f->p, "exp(x)*y+x", USC_F64, &t1[j], &o1[j], &c);
	}
	usc__domain_oracle.clear(f->p.os, o2, BATCH);
	fprintf(stderr, "chain exp(x)*y+x: n %ld undecided %ld violations %ld\n",
		c.n, c.undecided, c.violations);
	assert_int_equal(c.violations, 0);
}

/*
 * Sums of n point terms with heavy cancellation through repeated add (a
 * reduction's accumulator broadcast as a scalar): containment, and the
 * radius within the gamma_n bound n u sum|x_i| (1 + 1e-6), the relative
 * slack covering rup's 2^-49 per step for n up to 2^20.
 */
static void test_sums(void **state)
{
	fixture *f = *state;
	opspec sa = {USC_HLO_OP_ADD, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID};
	usc__dom_op add = make_op(&sa);
	static const int ns[] = {2, 10, 100, 1000, 4000};
	ovalue oacc[2];
	tvalue tacc[2];
	counts c;
	size_t q;
	long rep, reps = 4 * scale();
	int gamma_bad = 0;

	memset(&c, 0, sizeof c);
	usc__domain_oracle.init(f->p.os, oacc, 2);
	for (q = 0; q < sizeof ns / sizeof ns[0]; q++) {
		for (rep = 0; rep < reps; rep++) {
			double sumabs = 0;
			int i, cur = 0, n = ns[q];
			usc_error err;

			set_both(&f->p, &oacc[0], &tacc[0], 0.0, 0);
			for (i = 0; i < n; i++) {
				/* Pairs x, -x (1 + tiny) cancel to ~2^-40 x. */
				double x = (i & 1) ? -f->ta[0][i / 2 % BATCH].mid *
							     (1 + 0x1p-40)
						   : rand_sig((int)(rnd() % 40) - 20) *
							     ((rnd() & 1) ? 1 : -1);
				const void *oa[2], *ta[2];

				if (!isfinite(x))
					x = 1.0;
				if (!(i & 1))
					usc__tier_value_set(&f->ta[0][i / 2 % BATCH],
							    x, 0);
				set_both(&f->p, &f->oa[1][0], &f->ta[1][0], x, 0);
				sumabs += fabs(x);
				oa[0] = &oacc[cur];
				oa[1] = f->oa[1];
				ta[0] = &tacc[cur];
				ta[1] = f->ta[1];
				assert_int_equal(usc__domain_tier.apply(
							 f->p.ts, &add, 1,
							 &tacc[1 - cur], ta, 0,
							 &err),
						 USC_OK);
				assert_int_equal(usc__domain_oracle.apply(
							 f->p.os, &add, 1,
							 &oacc[1 - cur], oa, 0,
							 &err),
						 USC_OK);
				cur = 1 - cur;
			}
			check(&f->p, "sum", USC_F64, &tacc[cur], &oacc[cur], &c);
			if (tacc[cur].kind == USC__ORC_FINITE &&
			    tacc[cur].rad > (double)n * 0x1p-53 * sumabs *
						    (1 + 1e-6)) {
				gamma_bad++;
				fprintf(stderr, "gamma_n: n %d rad %a bound %a\n",
					n, tacc[cur].rad,
					(double)n * 0x1p-53 * sumabs);
			}
		}
	}
	usc__domain_oracle.clear(f->p.os, oacc, 2);
	fprintf(stderr, "sums: n %ld undecided %ld violations %ld gamma_n %d\n",
		c.n, c.undecided, c.violations, gamma_bad);
	assert_int_equal(c.violations, 0);
	assert_int_equal(gamma_bad, 0);
}

/* Hand-derived cases: exactness, zero signs and the positivity flag. */
static void test_exact_cases(void **state)
{
	fixture *f = *state;
	usc__dom_op op;
	opspec s;
	const void *a[2];
	tvalue x, y, r;
	usc_error err;
	uint64_t bits;
	usc__oracle_enclosure e;

	/* 1 + 2^-60 is not a double: TwoSum keeps the error 2^-60. */
	s = (opspec){USC_HLO_OP_ADD, 2, {G_WIDE, G_WIDE}, 0, USC_DTYPE_INVALID};
	op = make_op(&s);
	usc__tier_value_set(&x, 1.0, 0);
	usc__tier_value_set(&y, 0x1p-60, 0);
	a[0] = &x;
	a[1] = &y;
	assert_int_equal(usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err),
			 USC_OK);
	assert_true(r.mid == 1.0 && r.rad == 0x1p-60);
	/* 0.5 + 0.25 is exact: a point. */
	usc__tier_value_set(&x, 0.5, 0);
	usc__tier_value_set(&y, 0.25, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.mid == 0.75 && r.rad == 0);
	/* 3 * (1/3 as a double) carries the exact product error. */
	s.op = USC_HLO_OP_MULTIPLY;
	op = make_op(&s);
	usc__tier_value_set(&x, 3.0, 0);
	usc__tier_value_set(&y, 1.0 / 3.0, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.mid == 1.0 && r.rad == 0x1p-54);
	/* exp(-1e9) is below every double but positive: +0 in bf16. */
	s = (opspec){USC_HLO_OP_EXPONENTIAL, 1, {G_WIDE, G_WIDE}, 0,
		     USC_DTYPE_INVALID};
	op = make_op(&s);
	usc__tier_value_set(&x, -1e9, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_int_equal(r.kind, USC__ORC_FINITE);
	assert_int_equal(usc__domain_tier.to_output(f->p.ts, USC_BF16, &r,
						     &bits, &e, &err), USC_OK);
	assert_true(e.rounded);
	assert_int_equal(bits, 0x0000);
	/* exp(1000) overflows double: undecided, left to the oracle. */
	usc__tier_value_set(&x, 1000, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_int_equal(r.kind, USC__ORC_UNDECIDED);
	assert_int_equal(usc__tier_count_undecided(&r, 1), 1);
	/* log(+-0) = -Inf, a pole, exactly. */
	s.op = USC_HLO_OP_LOG;
	op = make_op(&s);
	usc__tier_value_set(&x, -0.0, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_int_equal(r.kind, USC__ORC_NEG_INF);
	/* sqrt(2.25) = 1.5 exactly; sin(-0) = -0. */
	s.op = USC_HLO_OP_SQRT;
	op = make_op(&s);
	usc__tier_value_set(&x, 2.25, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.mid == 1.5 && r.rad == 0);
	s.op = USC_HLO_OP_SINE;
	op = make_op(&s);
	usc__tier_value_set(&x, -0.0, 0);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.mid == 0 && r.rad == 0 && (r.flags & USC__ORC_NEG_ZERO));
	/* floor of a ball across 1 is undecided; inside (1, 2) it is 1. */
	s.op = USC_HLO_OP_FLOOR;
	op = make_op(&s);
	usc__tier_value_set(&x, 1.0, 0x1p-30);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_int_equal(r.kind, USC__ORC_UNDECIDED);
	usc__tier_value_set(&x, 1.5, 0.25);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.kind == USC__ORC_FINITE && r.mid == 1.0 && r.rad == 0);
	/* s64 2^53 + 1 is not a double: a ball holding it. */
	s = (opspec){USC_HLO_OP_CONVERT, 1, {G_WIDE}, 0, USC_F64};
	op = make_op(&s);
	op.arg[0] = USC_S64;
	assert_int_equal(usc__domain_tier.load(f->p.ts, USC_S64,
						(1ull << 53) + 1, &x, &err),
			 USC_OK);
	assert_int_equal(usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0,
						 &err), USC_OK);
	assert_int_equal(r.kind, USC__ORC_FINITE);
	assert_true(r.mid - r.rad <= 0x1p53 + 1 && r.mid + r.rad >= 0x1p53 + 1);
	/* pred true converts to exactly 1. */
	op.arg[0] = USC_PRED;
	usc__domain_tier.load(f->p.ts, USC_PRED, 1, &x, &err);
	usc__domain_tier.apply(f->p.ts, &op, 1, &r, a, 0, &err);
	assert_true(r.mid == 1.0 && r.rad == 0);
	/* select on an undecided pred: decided only for equal points. */
	{
		tvalue pr, b1, b2;
		const void *sa[3] = {&pr, &b1, &b2};

		s = (opspec){USC_HLO_OP_SELECT, 3, {G_WIDE}, 0, USC_F64};
		op = make_op(&s);
		op.arg[0] = USC_PRED;
		memset(&pr, 0, sizeof pr);
		pr.kind = USC__ORC_UNDECIDED;
		usc__tier_value_set(&b1, 2.0, 0);
		usc__tier_value_set(&b2, 2.0, 0);
		usc__domain_tier.apply(f->p.ts, &op, 1, &r, sa, 0, &err);
		assert_true(r.kind == USC__ORC_FINITE && r.mid == 2.0);
		usc__tier_value_set(&b2, 3.0, 0);
		usc__domain_tier.apply(f->p.ts, &op, 1, &r, sa, 0, &err);
		assert_int_equal(r.kind, USC__ORC_UNDECIDED);
		pr.kind = USC__ORC_FINITE;
		pr.bits = 0;
		usc__domain_tier.apply(f->p.ts, &op, 1, &r, sa, 0, &err);
		assert_true(r.kind == USC__ORC_FINITE && r.mid == 3.0);
	}
	/* An integer index comes back exactly; an undecided one fails. */
	{
		int64_t idx = 0;

		usc__domain_tier.load(f->p.ts, USC_S32, 0xFFFFFFFFu, &x, &err);
		assert_int_equal(usc__domain_tier.to_index(f->p.ts, USC_S32, &x,
							    &idx, &err), USC_OK);
		assert_int_equal(idx, -1);
		x.kind = USC__ORC_UNDECIDED;
		assert_int_equal(usc__domain_tier.to_index(f->p.ts, USC_S32, &x,
							    &idx, &err),
				 USC_EDOMAIN);
	}
}

/* The ULP error decision against the oracle's on the same enclosures. */
static void test_ulp_error(void **state)
{
	fixture *f = *state;
	static const usc_dtype types[] = {USC_BF16, USC_F32, USC_F8E4M3FN};
	long i, n = 4000 * scale(), bad = 0, decided = 0;

	for (i = 0; i < n; i++) {
		usc_dtype t = types[rnd() % 3];
		double m = gen_mid(G_WIDE), rad = gen_rad(m), lo, hi;
		uint64_t y = 0;
		usc__oracle_ulp_error te, oe;
		usc_error err;

		if (!isfinite(m))
			continue;
		set_both(&f->p, &f->oa[0][0], &f->ta[0][0], m, rad);
		/* A device value a few ulps off. */
		(void)usc_encode_double(t, m * (1 + (unif() - 0.5) * 0x1p-6),
					NULL, &y, NULL);
		assert_int_equal(usc__tier_decide_ulp_error(&f->ta[0][0], t, y,
							    NULL, &te, &err),
				 USC_OK);
		assert_int_equal(usc__oracle_decide_ulp_error(&f->oa[0][0], t,
							      y, NULL, &oe,
							      &err),
				 USC_OK);
		if (te.kind == USC__ORC_UNDECIDED)
			continue;
		decided += te.decided;
		usc__tier_bounds(&f->ta[0][0], &lo, &hi);
		if (te.kind != oe.kind ||
		    (te.kind == USC__ORC_FINITE &&
		     (oe.lo < te.lo || oe.hi > te.hi))) {
			bad++;
			fprintf(stderr, "ulp: t %d m %a r %a y %llx: tier [%a, %a]"
				" oracle [%a, %a]\n", (int)t, m, rad,
				(unsigned long long)y, te.lo, te.hi, oe.lo,
				oe.hi);
		}
	}
	fprintf(stderr, "ulp error: n %ld decided %ld bad %ld\n", n, decided,
		bad);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact_cases, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sums, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ulp_error, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
