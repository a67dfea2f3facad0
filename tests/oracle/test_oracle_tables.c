/*
 * Containment: for every elementwise float op of the oracle, the
 * enclosure holds the exact value that an independent computation gives.
 *
 * The expected values come from outside ulpscope: mpmath at 200 digits
 * (data/oracle/<op>.txt, written by tools/gen_oracle_tables.py, rounded
 * to 128 bits) and MPFR called directly at 300 bits, correctly rounded to
 * nearest.  At working precision P = 96 the enclosure [RD_P(v), RU_P(v)]
 * contains RN_Q(v) for every Q >= P (rounding is monotone and RD_P(v) is
 * representable at Q), so the MPFR value must lie inside; the mpmath
 * value, faithful at 128 bits, must lie within one 128-bit ulp of it.
 *
 * Each sample x (and y) is tried as a point and inside two intervals
 * around it (relative half-widths 2^-50 and 2^-12): a decided result must
 * hold the value at the sample, whatever the interval; a point must be
 * decided; a decided NaN, Inf or signed zero must match exactly.  The
 * width check: at a point the enclosure's relative width stays below
 * 2^(4-P) (each endpoint is one directed rounding, three for logistic).
 *
 * USC_TEST_SCALE (a positive integer) multiplies the rows read per file
 * (1000 by default; a committed file holds 2000, more with --count).
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

#include "oracle_test_util.h"
#include "test_util.h"

#define PREC 96
#define ROWS_DEFAULT 1000
#define SHOW_MAX 6

typedef struct opdesc {
	const char *name;
	usc_hlo_opcode op;
	int nargs;
	int (*f1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
	int (*f2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
	bool discrete; /* no width claim on intervals */
} opdesc;

static int t_floor(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_floor(y, x, r);
}
static int t_ceil(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_ceil(y, x, r);
}
static int t_rne(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_roundeven(y, x, r);
}
static int t_afz(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	return mpfr_rint_round(y, x, r);
}

static const opdesc OPS[] = {
	{"negate", USC_HLO_OP_NEGATE, 1, mpfr_neg, NULL, false},
	{"abs", USC_HLO_OP_ABS, 1, mpfr_abs, NULL, false},
	{"sign", USC_HLO_OP_SIGN, 1, NULL, NULL, true},
	{"exponential", USC_HLO_OP_EXPONENTIAL, 1, mpfr_exp, NULL, false},
	{"exponential-minus-one", USC_HLO_OP_EXPONENTIAL_MINUS_ONE, 1,
	 mpfr_expm1, NULL, false},
	{"log", USC_HLO_OP_LOG, 1, mpfr_log, NULL, false},
	{"log-plus-one", USC_HLO_OP_LOG_PLUS_ONE, 1, mpfr_log1p, NULL, false},
	{"logistic", USC_HLO_OP_LOGISTIC, 1, NULL, NULL, false},
	{"tanh", USC_HLO_OP_TANH, 1, mpfr_tanh, NULL, false},
	{"erf", USC_HLO_OP_ERF, 1, mpfr_erf, NULL, false},
	{"sqrt", USC_HLO_OP_SQRT, 1, mpfr_sqrt, NULL, false},
	{"rsqrt", USC_HLO_OP_RSQRT, 1, mpfr_rec_sqrt, NULL, false},
	{"cbrt", USC_HLO_OP_CBRT, 1, mpfr_cbrt, NULL, false},
	{"sine", USC_HLO_OP_SINE, 1, mpfr_sin, NULL, false},
	{"cosine", USC_HLO_OP_COSINE, 1, mpfr_cos, NULL, false},
	{"tan", USC_HLO_OP_TAN, 1, mpfr_tan, NULL, false},
	{"floor", USC_HLO_OP_FLOOR, 1, t_floor, NULL, true},
	{"ceil", USC_HLO_OP_CEIL, 1, t_ceil, NULL, true},
	{"round-nearest-even", USC_HLO_OP_ROUND_NEAREST_EVEN, 1, t_rne, NULL,
	 true},
	{"round-nearest-afz", USC_HLO_OP_ROUND_NEAREST_AFZ, 1, t_afz, NULL,
	 true},
	{"add", USC_HLO_OP_ADD, 2, NULL, mpfr_add, false},
	{"subtract", USC_HLO_OP_SUBTRACT, 2, NULL, mpfr_sub, false},
	{"multiply", USC_HLO_OP_MULTIPLY, 2, NULL, mpfr_mul, false},
	{"divide", USC_HLO_OP_DIVIDE, 2, NULL, mpfr_div, false},
	{"remainder", USC_HLO_OP_REMAINDER, 2, NULL, mpfr_fmod, true},
	{"power", USC_HLO_OP_POWER, 2, NULL, mpfr_pow, false},
	{"maximum", USC_HLO_OP_MAXIMUM, 2, NULL, NULL, false},
	{"minimum", USC_HLO_OP_MINIMUM, 2, NULL, NULL, false},
	{"atan2", USC_HLO_OP_ATAN2, 2, NULL, mpfr_atan2, false},
};

typedef struct counts {
	long rows, cases, decided, undecided, failures;
} counts;

static void failf(counts *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void failf(counts *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failures++ < SHOW_MAX) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

/* Builds the argument value for sample d at variant k (0: point). */
static void make_arg(void *s, ovalue *v, double d, int k)
{
	double h;

	if (k == 0 || !isfinite(d)) {
		ot_point(s, v, d);
		return;
	}
	h = d == 0 ? ldexp(1.0, k == 1 ? -1000 : -30)
		   : fabs(d) * ldexp(1.0, k == 1 ? -50 : -12);
	{
		mpfr_t lo, hi;

		mpfr_inits2(120, lo, hi, (mpfr_ptr)0);
		mpfr_set_d(lo, d, MPFR_RNDN);
		mpfr_sub_d(lo, lo, h, MPFR_RNDD);
		mpfr_set_d(hi, d, MPFR_RNDN);
		mpfr_add_d(hi, hi, h, MPFR_RNDU);
		usc__oracle_value_set_interval(v, lo, hi);
		mpfr_clears(lo, hi, (mpfr_ptr)0);
	}
}

static bool is_neg_zero_value(const ovalue *r)
{
	return (r->flags & USC__ORC_NEG_ZERO) != 0;
}

/* Checks one result against the table's expected text. */
static void check_table_value(counts *c, const opdesc *od, const char *line,
			   int k, const ovalue *r, const char *exp)
{
	mpfr_t v, u;
	mpfr_srcptr lo = &r->x->left, hi = &r->x->right;

	if (strcmp(exp, "nan") == 0 || strcmp(exp, "inf") == 0 ||
	    strcmp(exp, "-inf") == 0) {
		int want = exp[0] == 'n' ? USC__ORC_NAN
			   : exp[0] == 'i' ? USC__ORC_POS_INF
					   : USC__ORC_NEG_INF;

		if (r->kind != want)
			failf(c, "%s [%s] variant %d: kind %d, want %s",
			      od->name, line, k, r->kind, exp);
		return;
	}
	if (r->kind != USC__ORC_FINITE) {
		failf(c, "%s [%s] variant %d: kind %d, want finite %s",
		      od->name, line, k, r->kind, exp);
		return;
	}
	if (strcmp(exp, "0") == 0 || strcmp(exp, "-0") == 0) {
		bool point = mpfr_zero_p(lo) && mpfr_zero_p(hi);

		if (mpfr_sgn(lo) > 0 || mpfr_sgn(hi) < 0)
			failf(c, "%s [%s] variant %d: zero outside enclosure",
			      od->name, line, k);
		else if (k == 0 && (!point || (r->flags & USC__ORC_ZSIGN_UNKNOWN) ||
				    is_neg_zero_value(r) != (exp[0] == '-')))
			failf(c, "%s [%s]: want %s, got flags %d point %d",
			      od->name, line, exp, r->flags, point);
		return;
	}
	if (strstr(exp, "huge")) {
		bool neg = exp[0] == '-';
		mpfr_init2(v, 64);
		mpfr_set_ui_2exp(v, 1, 1L << 40, MPFR_RNDN);
		if (neg ? !(mpfr_cmpabs(lo, v) >= 0 && mpfr_sgn(lo) < 0)
			: !(mpfr_cmp(hi, v) >= 0))
			failf(c, "%s [%s] variant %d: misses %s", od->name,
			      line, k, exp);
		mpfr_clear(v);
		return;
	}
	if (strstr(exp, "tiny")) {
		bool neg = exp[0] == '-';

		mpfr_init2(v, 64);
		mpfr_set_ui_2exp(v, 1, -(1L << 40), MPFR_RNDN);
		if (neg) {
			mpfr_neg(v, v, MPFR_RNDN);
			if (!(mpfr_sgn(lo) < 0 && mpfr_cmp(hi, v) > 0))
				failf(c, "%s [%s]: misses -tiny", od->name,
				      line);
		} else if (!(mpfr_sgn(hi) > 0 && mpfr_cmp(lo, v) < 0))
			failf(c, "%s [%s]: misses tiny", od->name, line);
		mpfr_clear(v);
		return;
	}
	mpfr_inits2(160, v, u, (mpfr_ptr)0);
	if (mpfr_set_str(v, exp, 0, MPFR_RNDN) != 0)
		failf(c, "%s: bad value '%s'", od->name, exp);
	/* v +- one 128-bit ulp must meet the enclosure. */
	mpfr_set_ui_2exp(u, 1, mpfr_get_exp(v) - 128, MPFR_RNDN);
	{
		mpfr_t a, b;

		mpfr_inits2(200, a, b, (mpfr_ptr)0);
		mpfr_sub(a, v, u, MPFR_RNDD);
		mpfr_add(b, v, u, MPFR_RNDU);
		if (mpfr_less_p(hi, a) || mpfr_greater_p(lo, b))
			failf(c, "%s [%s] variant %d: enclosure misses %s",
			      od->name, line, k, exp);
		mpfr_clears(a, b, (mpfr_ptr)0);
	}
	mpfr_clears(v, u, (mpfr_ptr)0);
}

/* MPFR at 300 bits, directly: RN_300 lies in every sound enclosure. */
static void check_mpfr(counts *c, const opdesc *od, const char *line,
		       const ovalue *r, double x, double y)
{
	mpfr_t a, b, z;

	if (!od->f1 && !od->f2)
		return;
	if (!isfinite(x) || (od->nargs == 2 && !isfinite(y)) ||
	    r->kind != USC__ORC_FINITE)
		return;
	mpfr_inits2(300, a, b, z, (mpfr_ptr)0);
	mpfr_set_d(a, x, MPFR_RNDN);
	mpfr_set_d(b, y, MPFR_RNDN);
	mpfr_clear_flags();
	if (od->f1)
		od->f1(z, a, MPFR_RNDN);
	else
		od->f2(z, a, b, MPFR_RNDN);
	if (mpfr_number_p(z) && !mpfr_overflow_p() && !mpfr_underflow_p() &&
	    (mpfr_less_p(z, &r->x->left) || mpfr_greater_p(z, &r->x->right)))
		failf(c, "%s [%s]: MPFR's 300-bit value outside the enclosure",
		      od->name, line);
	/* Width: each endpoint is a few directed roundings at PREC bits. */
	if (mpfr_regular_p(&r->x->left) && mpfr_regular_p(&r->x->right) &&
	    mpfr_sgn(&r->x->left) == mpfr_sgn(&r->x->right)) {
		mpfr_sub(z, &r->x->right, &r->x->left, MPFR_RNDU);
		mpfr_abs(a, &r->x->left, MPFR_RNDN);
		mpfr_mul_2si(a, a, 4 - PREC, MPFR_RNDN);
		if (mpfr_greater_p(z, a))
			failf(c, "%s [%s]: enclosure wider than 2^(4-P)",
			      od->name, line);
	}
	mpfr_clears(a, b, z, (mpfr_ptr)0);
}

static void run_op(const opdesc *od, counts *c)
{
	const char *dir = usc_test_src_dir();
	char path[1024], line[4096];
	long limit = ROWS_DEFAULT * usc_test_scale();
	FILE *f;
	void *s = ot_create(PREC, false);
	ovalue args[2], out;
	usc__dom_op op = ot_op(od->op, USC_F64, (unsigned)od->nargs, USC_F64,
			       USC_F64, USC_F64);

	snprintf(path, sizeof path, "%s/data/oracle/%s.txt", dir,
		 od->name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		fail();
	}
	usc__domain_oracle.init(s, args, 2);
	usc__domain_oracle.init(s, &out, 1);
	while (c->rows < limit && fgets(line, sizeof line, f)) {
		char xs[64], ys[64], es[2048];
		double x, y = 0;
		int k, n;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (od->nargs == 1) {
			n = sscanf(line, "%63s %2047s", xs, es);
			assert_int_equal(n, 2);
		} else {
			n = sscanf(line, "%63s %63s %2047s", xs, ys, es);
			assert_int_equal(n, 3);
			y = strtod(ys, NULL);
		}
		x = strtod(xs, NULL);
		c->rows++;
		for (k = 0; k < 3; k++) {
			const void *ap[2] = {&args[0], &args[1]};
			usc_error err;

			make_arg(s, &args[0], x, k);
			make_arg(s, &args[1], y, k);
			assert_int_equal(usc__domain_oracle.apply(s, &op, 1, &out,
								  ap, 0, &err),
					 USC_OK);
			c->cases++;
			if (out.kind == USC__ORC_UNDECIDED) {
				c->undecided++;
				if (k == 0)
					failf(c, "%s [%s]: undecided at a point",
					      od->name, line);
				continue;
			}
			c->decided++;
			check_table_value(c, od, line, k, &out, es);
			if (k == 0)
				check_mpfr(c, od, line, &out, x, y);
		}
	}
	fclose(f);
	usc__domain_oracle.clear(s, args, 2);
	usc__domain_oracle.clear(s, &out, 1);
	usc__domain_oracle.destroy(s);
}

static void test_tables(void **state)
{
	size_t i;
	long failures = 0;

	(void)state;
	for (i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
		counts c = {0, 0, 0, 0, 0};

		run_op(&OPS[i], &c);
		fprintf(stderr,
			"%-22s rows %6ld cases %7ld decided %7ld undecided "
			"%6ld failures %ld\n",
			OPS[i].name, c.rows, c.cases, c.decided, c.undecided,
			c.failures);
		assert_true(c.rows >= 100);
		failures += c.failures;
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	/* The tables' extremes (exp(-2^57)) need MPFR's widest range. */
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
