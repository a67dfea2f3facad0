/*
 * The tier's dot products (oracles/tier_dot.c) against the MPFI oracle at
 * 256 bits.  Random matmuls (M, N, K up to 64, batches, magnitudes from
 * 2^-540 to 2^60, cancelling pairs, short significands that sum exactly,
 * point and ball operands) go through the tier's matmul entry, and the
 * oracle computes the same sums through its own multiply and add; every
 * element the tier decides must contain the oracle's enclosure (and agree
 * on the sign of an exact zero).  The expected values come from the
 * oracle, never from the tier.  A second test runs dots with batch and
 * several contracting dimensions in unusual positions through the
 * interpreter in both domains, which checks the gather and layout of
 * src/eval/reduce.c.  The median overestimation of the radius is
 * printed; USC_TEST_SCALE multiplies the sample counts.
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
#include <mpfi.h>

#include "eval/eval_values.h"
#define TIER_TEST_SEED 0x2545F4914F6CDD1Dull
#include "tier_test_util.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

static double sgn(void)
{
	return (rnd() & 1) ? -1.0 : 1.0;
}

/* The kinds of operand matrices. */
enum { V_UNIT, V_WIDE, V_INT, V_SHORT, V_TINY, V_ZERO, V_NKINDS };

static double gen(int kind)
{
	switch (kind) {
	case V_UNIT:
		return sgn() * unif();
	case V_WIDE:
		return sgn() * ldexp(1.0 + unif(), (int)(rnd() % 121) - 60);
	case V_INT:
		return sgn() * (double)(rnd() % 200);
	case V_SHORT:
		/* An 8-bit significand, as bf16 operands have. */
		return sgn() * ldexp((double)(128 + rnd() % 128),
				     (int)(rnd() % 16) - 12);
	case V_TINY:
		/* Products near 2^-1080: subnormal, the underflow term. */
		return sgn() * ldexp(1.0 + unif(), -540 - (int)(rnd() % 4));
	default:
		return (rnd() % 4) ? sgn() * 0.0 : sgn() * (double)(rnd() % 3);
	}
}

typedef tier_pair ctx;

typedef struct stats {
	long n, undecided, exact, violations, declined;
	double *ratio; /* rad / |error at the midpoint| or width ratio */
	size_t nratio, cap;
} stats;

static void add_ratio(stats *s, double r)
{
	if (s->nratio == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->ratio = realloc(s->ratio, s->cap * sizeof *s->ratio);
		assert_non_null(s->ratio);
	}
	s->ratio[s->nratio++] = r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(stats *s)
{
	if (s->nratio == 0)
		return 0;
	qsort(s->ratio, s->nratio, sizeof *s->ratio, cmp_double);
	return s->ratio[s->nratio / 2];
}

static int printed;

/*
 * Whether the tier's t contains the oracle's o (both for result type
 * f64); counts, and records how much wider the tier is: against the
 * oracle's width when the operands are balls, against the midpoint's
 * actual error when they are points.
 */
static void check(const tvalue *t, const ovalue *o, bool balls, stats *s,
		  stats *sw)
{
	double lo, hi;
	mpfr_t mid, w;

	s->n++;
	if (t->kind == USC__ORC_UNDECIDED) {
		s->undecided++;
		return;
	}
	if (t->kind != USC__ORC_FINITE || o->kind != USC__ORC_FINITE) {
		s->violations++;
		goto bad;
	}
	usc__tier_bounds(t, &lo, &hi);
	if (!mpfr_number_p(&o->x->left) || !mpfr_number_p(&o->x->right) ||
	    mpfr_cmp_d(&o->x->left, lo) < 0 ||
	    mpfr_cmp_d(&o->x->right, hi) > 0) {
		s->violations++;
		goto bad;
	}
	if (t->rad == 0 && t->mid == 0 &&
	    !(t->flags & USC__ORC_ZSIGN_UNKNOWN) &&
	    !(o->flags & USC__ORC_ZSIGN_UNKNOWN) &&
	    (t->flags & USC__ORC_NEG_ZERO) != (o->flags & USC__ORC_NEG_ZERO)) {
		s->violations++;
		goto bad;
	}
	if (t->rad == 0) {
		s->exact++;
		return;
	}
	mpfr_inits2(ORACLE_PREC + 64, mid, w, (mpfr_ptr)0);
	if (balls) {
		mpfr_sub(w, &o->x->right, &o->x->left, MPFR_RNDN);
		if (mpfr_sgn(w) > 0)
			add_ratio(sw, 2 * t->rad / mpfr_get_d(w, MPFR_RNDN));
	} else {
		mpfr_add(mid, &o->x->left, &o->x->right, MPFR_RNDN);
		mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
		mpfr_sub_d(w, mid, t->mid, MPFR_RNDN);
		mpfr_abs(w, w, MPFR_RNDN);
		if (mpfr_sgn(w) > 0)
			add_ratio(s, t->rad / mpfr_get_d(w, MPFR_RNDN));
	}
	mpfr_clears(mid, w, (mpfr_ptr)0);
	return;
bad:
	if (printed++ < 20)
		mpfr_fprintf(stderr,
			     "VIOLATION: tier kind %d flags %x [%a +- %a]; "
			     "oracle kind %d flags %x [%Re, %Re]\n",
			     t->kind, t->flags, t->mid, t->rad, o->kind,
			     o->flags, &o->x->left, &o->x->right);
}

static int setup(void **state)
{
	ctx *c = calloc(1, sizeof *c);
	usc__oracle_options opt;
	usc_error err;

	usc__oracle_options_default(&opt);
	opt.precision = ORACLE_PREC;
	assert_int_equal(usc__domain_oracle.create(&c->os, &err), USC_OK);
	assert_int_equal(usc__oracle_configure(c->os, &opt, &err), USC_OK);
	assert_int_equal(usc__domain_tier.create(&c->ts, &err), USC_OK);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	ctx *c = *state;

	usc__domain_oracle.destroy(c->os);
	usc__domain_tier.destroy(c->ts);
	free(c);
	return 0;
}

static usc__dom_op f64_op(usc_hlo_opcode opc)
{
	usc__dom_op o;

	memset(&o, 0, sizeof o);
	o.op = opc;
	o.nargs = 2;
	o.result = o.arg[0] = o.arg[1] = USC_F64;
	return o;
}

/* One random batch of matmuls through both domains. */
static void one_case(ctx *c, size_t batch, size_t M, size_t N, size_t K,
		     int ka, int kb, bool balls, bool cancel, stats *s,
		     stats *sw)
{
	size_t na = batch * M * K, nb = batch * K * N, nc = batch * M * N;
	ovalue *oa = calloc(na, sizeof *oa), *ob = calloc(nb, sizeof *ob);
	ovalue ot[3];
	tvalue *ta = calloc(na, sizeof *ta), *tb = calloc(nb, sizeof *tb);
	tvalue *tc = calloc(nc, sizeof *tc);
	usc__dom_op mul = f64_op(USC_HLO_OP_MULTIPLY);
	usc__dom_op add = f64_op(USC_HLO_OP_ADD);
	usc__dom_matmul mm;
	usc_error err;
	usc_status st;
	size_t b, i, j, l;

	assert_non_null(oa);
	assert_non_null(ob);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_non_null(tc);
	usc__domain_oracle.init(c->os, oa, na);
	usc__domain_oracle.init(c->os, ob, nb);
	usc__domain_oracle.init(c->os, ot, 3);
	for (i = 0; i < na; i++) {
		double m = gen(ka), r = 0;

		/* Cancelling pairs: a[2l + 1] = -a[2l] (1 + 2^-40). */
		if (cancel && (i % K) % 2 == 1)
			m = -ta[i - 1].mid * (1 + 0x1p-40);
		if (balls && rnd() % 2)
			r = m != 0 ? fabs(m) * ldexp(0.5 + unif(),
						     -(int)(20 + rnd() % 33))
				   : ldexp(0.5 + unif(), -(int)(10 + rnd() % 40));
		set_both(c, &oa[i], &ta[i], m, r);
	}
	for (i = 0; i < nb; i++) {
		double m = gen(kb), r = 0;

		if (cancel && (i / N % K) % 2 == 1)
			m = tb[i - N].mid;
		if (balls && rnd() % 2)
			r = m != 0 ? fabs(m) * ldexp(0.5 + unif(),
						     -(int)(20 + rnd() % 33))
				   : ldexp(0.5 + unif(), -(int)(10 + rnd() % 40));
		set_both(c, &ob[i], &tb[i], m, r);
	}
	memset(&mm, 0, sizeof mm);
	mm.batch = batch;
	mm.m = M;
	mm.n = N;
	mm.k = K;
	mm.a_type = mm.b_type = mm.result = USC_F64;
	mm.a = ta;
	mm.b = tb;
	mm.c = tc;
	st = usc__domain_tier.matmul(c->ts, &mm, &err);
	if (st == USC_EUNSUPPORTED) {
		s->declined++;
		goto out;
	}
	assert_int_equal(st, USC_OK);
	for (b = 0; b < batch; b++)
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				int cur = 0;

				for (l = 0; l < K; l++) {
					const void *args[2];

					args[0] = &oa[(b * M + i) * K + l];
					args[1] = &ob[(b * K + l) * N + j];
					assert_int_equal(usc__domain_oracle.apply(
								 c->os, &mul, 1,
								 &ot[2], args, 0,
								 &err),
							 USC_OK);
					if (l == 0) {
						usc__domain_oracle.copy(
							c->os, &ot[0], &ot[2],
							1);
						continue;
					}
					args[0] = &ot[cur];
					args[1] = &ot[2];
					assert_int_equal(usc__domain_oracle.apply(
								 c->os, &add, 1,
								 &ot[1 - cur],
								 args, 0, &err),
							 USC_OK);
					cur = 1 - cur;
				}
				check(&tc[(b * M + i) * N + j], &ot[cur], balls,
				      s, sw);
			}
out:
	usc__domain_oracle.clear(c->os, oa, na);
	usc__domain_oracle.clear(c->os, ob, nb);
	usc__domain_oracle.clear(c->os, ot, 3);
	free(oa);
	free(ob);
	free(ta);
	free(tb);
	free(tc);
}

static size_t dim(void)
{
	/* Mostly small, sometimes up to 64. */
	return (rnd() % 8) ? 1 + rnd() % 12 : 1 + rnd() % 64;
}

static void test_matmul_random(void **state)
{
	ctx *c = *state;
	stats s, sw;
	long t, cases = 120 * scale();

	memset(&s, 0, sizeof s);
	memset(&sw, 0, sizeof sw);
	for (t = 0; t < cases; t++) {
		size_t batch = 1 + rnd() % 3, M = dim(), N = dim(), K = dim();
		int ka = (int)(rnd() % V_NKINDS), kb = (int)(rnd() % V_NKINDS);
		bool balls = rnd() % 3 == 0, cancel = rnd() % 4 == 0;

		/* Keep the oracle's work (M N K products) bounded. */
		while (batch * M * N * K > 40000)
			M = (M + 1) / 2, N = (N + 1) / 2;
		if (cancel && K % 2)
			K++;
		one_case(c, batch, M, N, K, ka, kb, balls, cancel, &s, &sw);
	}
	/* The largest shapes once each. */
	one_case(c, 1, 64, 64, 64, V_WIDE, V_UNIT, false, false, &s, &sw);
	one_case(c, 1, 16, 64, 64, V_UNIT, V_UNIT, true, true, &s, &sw);
	fprintf(stderr,
		"tier matmul: %ld elements, %ld exact, %ld undecided, "
		"%ld declined cases, %ld violations; median rad / |error| "
		"(points) %.3g over %zu, median width / oracle width (balls) "
		"%.6g over %zu\n",
		s.n, s.exact, s.undecided, s.declined, s.violations, median(&s),
		s.nratio, median(&sw), sw.nratio);
	free(s.ratio);
	free(sw.ratio);
	assert_int_equal(s.violations, 0);
	assert_int_equal(s.declined, 0);
}

/* Hand-made cases: exact sums, zero signs, underflow, declines. */
static void test_matmul_cases(void **state)
{
	ctx *c = *state;
	tvalue a[4], b[4], r[4];
	usc__dom_matmul mm;
	usc_error err;

	memset(&mm, 0, sizeof mm);
	mm.batch = 1;
	mm.m = mm.n = 1;
	mm.k = 2;
	mm.a_type = mm.b_type = mm.result = USC_F64;
	mm.a = a;
	mm.b = b;
	mm.c = r;
	/* 3 * 5 + 7 * 11 = 92, exactly. */
	usc__tier_value_set(&a[0], 3, 0);
	usc__tier_value_set(&a[1], 7, 0);
	usc__tier_value_set(&b[0], 5, 0);
	usc__tier_value_set(&b[1], 11, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_int_equal(r[0].kind, USC__ORC_FINITE);
	assert_true(r[0].mid == 92 && r[0].rad == 0);
	/* (-0) 1 + 0 (-1) = -0 + -0 = -0. */
	usc__tier_value_set(&a[0], -0.0, 0);
	usc__tier_value_set(&a[1], 0.0, 0);
	usc__tier_value_set(&b[0], 1, 0);
	usc__tier_value_set(&b[1], -1, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_true(r[0].mid == 0 && r[0].rad == 0);
	assert_true(r[0].flags & USC__ORC_NEG_ZERO);
	/* 1 * 1 + (-1) * 1 = +0 by cancellation. */
	usc__tier_value_set(&a[0], 1, 0);
	usc__tier_value_set(&a[1], -1, 0);
	usc__tier_value_set(&b[0], 1, 0);
	usc__tier_value_set(&b[1], 1, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_true(r[0].mid == 0 && r[0].rad == 0 && r[0].flags == 0);
	/* 1 + 2^-60 (a rounding): a radius, at least the true error. */
	usc__tier_value_set(&a[0], 1, 0);
	usc__tier_value_set(&a[1], 0x1p-30, 0);
	usc__tier_value_set(&b[0], 1, 0);
	usc__tier_value_set(&b[1], 0x1p-30, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_true(r[0].mid == 1 && r[0].rad >= 0x1p-60);
	/* 2^-540 2^-540: a subnormal product carries the underflow term. */
	usc__tier_value_set(&a[0], 0x1.8p-540, 0);
	usc__tier_value_set(&a[1], 0, 0);
	usc__tier_value_set(&b[0], 0x1.8p-540, 0);
	usc__tier_value_set(&b[1], 0, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_true(r[0].rad >= 0x1p-1074);
	/* Non-finite and integer operands are declined. */
	a[0].kind = USC__ORC_POS_INF;
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err),
			 USC_EUNSUPPORTED);
	usc__tier_value_set(&a[0], 1, 0);
	mm.a_type = USC_S32;
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err),
			 USC_EUNSUPPORTED);
	/* Huge sums overflow to UNDECIDED. */
	mm.a_type = USC_F64;
	usc__tier_value_set(&a[0], 0x1p1023, 0);
	usc__tier_value_set(&a[1], 0x1p1023, 0);
	usc__tier_value_set(&b[0], 1, 0);
	usc__tier_value_set(&b[1], 1, 0);
	assert_int_equal(usc__tier_matmul(c->ts, &mm, &err), USC_OK);
	assert_int_equal(r[0].kind, USC__ORC_UNDECIDED);
}

/* Dots through the interpreter: tier (matmul path) against the oracle. */
static const char DOTS[] =
	"HloModule dots\n"
	"ENTRY e {\n"
	"  a = f32[3,5,2,4] parameter(0)\n"
	"  b = f32[4,2,6] parameter(1)\n"
	"  ROOT d = f32[2,3,5,6] dot(a, b), lhs_batch_dims={2}, "
	"rhs_batch_dims={1}, lhs_contracting_dims={3}, "
	"rhs_contracting_dims={0}\n"
	"}\n"
	"// -----\n"
	"HloModule dots2\n"
	"ENTRY e {\n"
	"  a = bf16[4,3,5] parameter(0)\n"
	"  b = bf16[5,7,4] parameter(1)\n"
	"  ROOT d = f32[3,7] dot(a, b), lhs_contracting_dims={0,2}, "
	"rhs_contracting_dims={2,0}\n"
	"}\n";

static usc_eval *run_module(const usc_hlo_module *m, usc_eval_domain dom,
			    usc_tensor **in, size_t nin)
{
	usc_eval_options opt = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;
	size_t i;

	opt.domain = dom;
	opt.oracle_precision = ORACLE_PREC;
	assert_int_equal(usc_eval_create(m, &opt, &ev, &err), USC_OK);
	for (i = 0; i < nin; i++)
		assert_int_equal(usc_eval_bind(ev, i, in[i], &err), USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	return ev;
}

static void test_eval_dots(void **state)
{
	usc_hlo_file *f;
	usc_error err;
	size_t mi;
	stats s, sw;

	(void)state;
	memset(&s, 0, sizeof s);
	memset(&sw, 0, sizeof sw);
	assert_int_equal(usc_hlo_parse(DOTS, strlen(DOTS), "<dots>", &f, &err),
			 USC_OK);
	assert_int_equal(usc_hlo_file_module_count(f), 2);
	for (mi = 0; mi < 2; mi++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, mi);
		const usc_hlo_computation *e = m->entry;
		usc_tensor *in[2];
		usc_eval *et, *eo;
		const void *tv, *ov;
		size_t tn, on, i, p = 0;
		usc_dtype tt, ot;

		for (i = 0; i < e->instr_count; i++) {
			const usc_hlo_instr *x = e->instrs[i];
			uint64_t k, cnt;

			if (x->opcode != USC_HLO_OP_PARAMETER)
				continue;
			assert_int_equal(usc_tensor_create(x->shape.dtype,
							   x->shape.rank,
							   x->shape.dims,
							   &in[p], &err),
					 USC_OK);
			cnt = usc_tensor_count(in[p]);
			for (k = 0; k < cnt; k++) {
				uint64_t bits;
				double v = (rnd() % 5) ? sgn() * unif() * 8
						       : (double)(rnd() % 9);

				assert_int_equal(usc_encode_double(x->shape.dtype,
								   v, NULL,
								   &bits, NULL),
						 USC_OK);
				if (x->shape.dtype == USC_F32) {
					uint32_t w = (uint32_t)bits;

					memcpy((uint32_t *)usc_tensor_data(in[p]) +
						       k,
					       &w, 4);
				} else {
					uint16_t w = (uint16_t)bits;

					memcpy((uint16_t *)usc_tensor_data(in[p]) +
						       k,
					       &w, 2);
				}
			}
			p++;
		}
		assert_int_equal(p, 2);
		et = run_module(m, USC_DOMAIN_TIER, in, 2);
		eo = run_module(m, USC_DOMAIN_ORACLE, in, 2);
		assert_int_equal(usc__eval_output_values(et, 0, &tv, &tn, &tt),
				 USC_OK);
		assert_int_equal(usc__eval_output_values(eo, 0, &ov, &on, &ot),
				 USC_OK);
		assert_int_equal(tn, on);
		for (i = 0; i < tn; i++)
			check((const tvalue *)tv + i, (const ovalue *)ov + i,
			      false, &s, &sw);
		usc_eval_destroy(et);
		usc_eval_destroy(eo);
		usc_tensor_destroy(in[0]);
		usc_tensor_destroy(in[1]);
	}
	usc_hlo_file_destroy(f);
	fprintf(stderr, "eval dots: %ld elements, %ld exact, %ld undecided, "
		"%ld violations\n", s.n, s.exact, s.undecided, s.violations);
	free(s.ratio);
	assert_int_equal(s.violations, 0);
	assert_int_equal(s.undecided, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_matmul_cases, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_matmul_random, setup,
						teardown),
		cmocka_unit_test(test_eval_dots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
