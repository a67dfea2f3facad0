/*
 * Brute-force soundness of the envelope (issue 13, docs/envelope.md "How
 * it is tested"): random small kernels -- chains of add, subtract,
 * multiply, divide and convert round trips, reductions, dots and
 * convolutions over a few elements in f16, bf16 and f32 -- and, for each,
 * every implementation the profile permits, evaluated here with MPFR and
 * nothing of ulpscope's arithmetic:
 *
 *   - each op rounded to nearest into its declared type T; under
 *     compute_type C (wider than T) also into C and then T (double
 *     rounding) besides straight into T (single rounding); under
 *     excess_precision also kept in W = excess_type (or in C) for the
 *     next op, the output still rounded to its type;
 *   - under fma, a product feeding an add or subtract also unrounded;
 *   - a divide also as x * RN(1/y) (divide_reciprocal), the reciprocal
 *     rounded into T, C or W;
 *   - a reduction under reassociate, and a dot or convolution under
 *     reassociate_dot, in every summation tree (every bracketing of
 *     every order: all subsets split in two, recursively), each addition
 *     with the rounding choices above; otherwise the interpreter's
 *     sequential order;
 *   - an f32 dot's operands under dot_f32 tf32 / bf16x1 also rounded to
 *     11 / 8 significant bits.
 *
 * Every result must lie inside the envelope ulpscope computes.  Rounding
 * is emulated in MPFR with the format's precision and exponent range
 * (mpfr_set_emin / emax, mpfr_subnormalize); every op is one correctly
 * rounded MPFR call into the target format, and an unrounded product of
 * two values of at most 24 bits is exact at 128 bits.  Kernels whose
 * values come near a subnormal or an overflow of f16 are skipped (and
 * counted): flushing is tested elsewhere (test_envelope_invariants).
 *
 * Then the exact ops a flushing target reads through DAZ: maximum,
 * minimum, clamp and a compare feeding a select (also of a maximum's
 * result), over operands drawn subnormal, zero or normal; where the
 * profile flushes the type's inputs (flush.TYPE = both: xla-cpu's f32
 * and bf16), every subnormal operand is read as itself or as the zero of
 * its sign, each independently, and every result must be inside.
 *
 * Each profile runs 1000 kernels and 200 DAZ kernels (6000 in all; times
 * USC_TEST_SCALE).
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

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#include "eval/eval_values.h"
#include "oracles/envelope.h"

#define TIER_TEST_SEED 0x6a09e667f3bcc909ull
#include "tier/tier_test_rng.h"

#define PREC 128      /* exact for every value and unrounded product here */
#define MAXSET 4096   /* a kernel whose sets grow beyond this is skipped */
#define MAXNODE 16
#define MAXLEAF 6

/* ------------------------------------------------------------ formats */

/* A binary format: precision p and MPFR's exponent range. */
typedef struct fmt {
	usc_dtype t;
	const char *name;
	int p;
	mpfr_exp_t emin, emax; /* MPFR convention: x = m 2^e, m in [1/2, 1) */
	double min_normal;
} fmt;

static const fmt F16 = {USC_F16, "f16", 11, -23, 16, 0x1p-14};
static const fmt BF16 = {USC_BF16, "bf16", 8, -132, 128, 0x1p-126};
static const fmt F32 = {USC_F32, "f32", 24, -148, 128, 0x1p-126};
static const fmt TF32 = {USC_DTYPE_INVALID, "tf32", 11, -135, 128, 0x1p-126};

static const fmt *fmt_of(usc_dtype t)
{
	return t == USC_F16 ? &F16 : t == USC_BF16 ? &BF16 : t == USC_F32 ? &F32
									  : NULL;
}

/* A set of exact reals (MPFR numbers at PREC bits), without repeats. */
typedef struct vset {
	size_t n;
	mpfr_t *v;
	bool big; /* grew past MAXSET */
} vset;

static bool skip_kernel; /* a value near a subnormal or an overflow */

static void vs_init(vset *s)
{
	s->n = 0;
	s->v = malloc(MAXSET * sizeof *s->v);
	s->big = false;
	assert_non_null(s->v);
}

static void vs_clear(vset *s)
{
	for (size_t i = 0; i < s->n; i++)
		mpfr_clear(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static void vs_add(vset *s, mpfr_srcptr x)
{
	for (size_t i = 0; i < s->n; i++)
		if (mpfr_equal_p(s->v[i], x))
			return;
	if (s->n == MAXSET) {
		s->big = true;
		return;
	}
	mpfr_init2(s->v[s->n], PREC);
	mpfr_set(s->v[s->n], x, MPFR_RNDN);
	s->n++;
}

static void vs_union(vset *s, const vset *o)
{
	for (size_t i = 0; i < o->n; i++)
		vs_add(s, o->v[i]);
	s->big |= o->big;
}

/*
 * y = op(a, b) rounded to nearest-even into f (b unused for a convert):
 * one correctly rounded MPFR operation at f's precision and exponent
 * range.  Marks the kernel skipped when the result is a subnormal or
 * beyond the f16 range, which this test leaves to others.
 */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_CVT };

static void rnd_op(mpfr_ptr y, int op, mpfr_srcptr a, mpfr_srcptr b,
		   const fmt *f)
{
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_t r;
	int tern;

	/*
	 * MPFR's operands must lie in the current exponent range; one that
	 * would be subnormal or too large in f is left to other tests.
	 */
	for (int k = 0; k < (op == OP_CVT ? 1 : 2); k++) {
		mpfr_srcptr x = k ? b : a;

		if (mpfr_regular_p(x) &&
		    (mpfr_get_exp(x) < f->emin + f->p + 1 ||
		     mpfr_get_exp(x) > f->emax - 1)) {
			skip_kernel = true;
			mpfr_set(y, x, MPFR_RNDN);
			return;
		}
	}
	mpfr_init2(r, f->p);
	mpfr_set_emin(f->emin);
	mpfr_set_emax(f->emax);
	switch (op) {
	case OP_ADD: tern = mpfr_add(r, a, b, MPFR_RNDN); break;
	case OP_SUB: tern = mpfr_sub(r, a, b, MPFR_RNDN); break;
	case OP_MUL: tern = mpfr_mul(r, a, b, MPFR_RNDN); break;
	case OP_DIV: tern = mpfr_div(r, a, b, MPFR_RNDN); break;
	default: tern = mpfr_set(r, a, MPFR_RNDN); break;
	}
	tern = mpfr_check_range(r, tern, MPFR_RNDN);
	/* Singular values (a division by zero) have no exponent. */
	if (mpfr_regular_p(r))
		tern = mpfr_subnormalize(r, tern, MPFR_RNDN);
	(void)tern;
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	if (!mpfr_number_p(r) ||
	    (!mpfr_zero_p(r) && (mpfr_get_exp(r) > f->emax - 1 ||
				  mpfr_get_exp(r) < f->emin + f->p + 1)))
		skip_kernel = true;
	mpfr_set(y, r, MPFR_RNDN);
	mpfr_clear(r);
}

/* ------------------------------------------------------------ profile */

typedef struct freedoms {
	const usc_profile *p;
	const fmt *c, *w; /* compute and excess formats for the type, or NULL */
} freedoms;

static const fmt *wider(const fmt *f, usc_dtype t, bool on)
{
	const fmt *g = on ? fmt_of(t) : NULL;

	return g && g->p > f->p && g->emax >= f->emax ? g : NULL;
}

static freedoms freedoms_of(const usc_profile *p, const fmt *f)
{
	freedoms d;

	d.p = p;
	d.c = wider(f, p->compute_type, p->compute_type != USC_DTYPE_INVALID);
	d.w = wider(f, p->excess_type, p->excess_precision);
	return d;
}

/*
 * Adds to out every value a correctly rounded op of declared format f may
 * leave for its consumer: RN_f; with a compute type C, RN_f(RN_C) and,
 * with excess precision, RN_C itself; with excess type W, RN_W.  kept:
 * whether values wider than f may stay (not for an output, whose rounding
 * to f comes last anyway and is applied by the caller).
 */
static void rounded_choices(vset *out, int op, mpfr_srcptr a, mpfr_srcptr b,
			    const fmt *f, const usc_profile *p)
{
	freedoms d = freedoms_of(p, f);
	mpfr_t y, z;

	mpfr_inits2(PREC, y, z, (mpfr_ptr)0);
	rnd_op(y, op, a, b, f);
	vs_add(out, y);
	if (d.c && op != OP_CVT) {
		rnd_op(y, op, a, b, d.c);
		rnd_op(z, OP_CVT, y, y, f);
		vs_add(out, z);
		if (p->excess_precision)
			vs_add(out, y);
	}
	if (d.w) {
		rnd_op(y, op, a, b, d.w);
		vs_add(out, y);
	}
	mpfr_clears(y, z, (mpfr_ptr)0);
}

/* x / y as x * RN(1/y), the reciprocal in f, C or W, the product rounded. */
static void reciprocal_choices(vset *out, mpfr_srcptr x, mpfr_srcptr y,
			       const fmt *f, const usc_profile *p)
{
	freedoms d = freedoms_of(p, f);
	const fmt *fs[3] = {f, d.c, d.w};
	mpfr_t one, r;

	mpfr_inits2(PREC, one, r, (mpfr_ptr)0);
	mpfr_set_ui(one, 1, MPFR_RNDN);
	for (int k = 0; k < 3; k++)
		if (fs[k]) {
			rnd_op(r, OP_DIV, one, y, fs[k]);
			rounded_choices(out, OP_MUL, x, r, f, p);
		}
	mpfr_clears(one, r, (mpfr_ptr)0);
}

/* Every value of a binary op over the operand sets. */
static void binary_set(vset *out, int op, const vset *a, const vset *b,
		       const fmt *f, const usc_profile *p, bool recip)
{
	for (size_t i = 0; i < a->n && !out->big; i++)
		for (size_t j = 0; j < b->n && !out->big; j++) {
			rounded_choices(out, op, a->v[i], b->v[j], f, p);
			if (op == OP_DIV && recip)
				reciprocal_choices(out, a->v[i], b->v[j], f, p);
		}
	out->big |= a->big || b->big;
}

/*
 * The unrounded products a*b over the sets (the FMA's view of a multiply
 * feeding an add): exact at PREC bits, both factors having at most 24.
 */
static void exact_products(vset *out, const vset *a, const vset *b)
{
	mpfr_t y;

	mpfr_init2(y, PREC);
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n; j++) {
			assert_int_equal(mpfr_mul(y, a->v[i], b->v[j], MPFR_RNDN),
					 0);
			vs_add(out, y);
		}
	mpfr_clear(y);
}

/* ------------------------------------------------------------ kernels */

/* A node of an elementwise chain. */
typedef struct node {
	int op;        /* OP_*; OP_CVT is a round trip through fmt via */
	int a, b;      /* operand: < 0 is parameter -a-1, else a node */
	const fmt *via;
} node;

static const char *const op_names[] = {"add", "subtract", "multiply",
				       "divide"};

static const fmt *rand_fmt(void)
{
	uint64_t r = rnd() % 3;

	return r == 0 ? &F16 : r == 1 ? &BF16 : &F32;
}

/*
 * A random value of f: sign, 1 to p significant bits (short ones make the
 * ties that separate single from double rounding), exponent in
 * [-6, 3].
 */
static double rand_value(const fmt *f)
{
	int bits = 1 + (int)(rnd() % (uint64_t)f->p);
	uint64_t m = (rnd() >> 11) & ((1ull << (bits - 1)) - 1);
	double x = ldexp((double)(m | (1ull << (bits - 1))), 1 - bits);

	x = ldexp(x, (int)(rnd() % 10) - 6);
	return (rnd() & 1) ? -x : x;
}

typedef struct kernel {
	char text[4096];
	size_t len;
	const fmt *f;
	size_t nparam;
	size_t plen[4];     /* elements of each parameter */
	size_t prank[4];
	int64_t pdims[4][3];
	double pv[4][16];   /* parameter values */
	size_t nout;        /* output elements */
	vset out[8];        /* the permitted output values, rounded to f */
} kernel;

static void put(kernel *k, const char *fmt_, ...)
{
	va_list ap;

	va_start(ap, fmt_);
	k->len += (size_t)vsnprintf(k->text + k->len, sizeof k->text - k->len,
				    fmt_, ap);
	va_end(ap);
	assert_true(k->len < sizeof k->text);
}

static void param_set(vset *s, double v)
{
	mpfr_t x;

	mpfr_init2(x, PREC);
	mpfr_set_d(x, v, MPFR_RNDN);
	vs_init(s);
	vs_add(s, x);
	mpfr_clear(x);
}

/* The final rounding of an output: every kept value to f. */
static void round_out(vset *out, const vset *v, const fmt *f)
{
	mpfr_t y;

	mpfr_init2(y, PREC);
	vs_init(out);
	for (size_t i = 0; i < v->n; i++) {
		rnd_op(y, OP_CVT, v->v[i], v->v[i], f);
		vs_add(out, y);
	}
	out->big = v->big;
	mpfr_clear(y);
}

/* A chain of 2 to 4 elementwise ops over 3 scalar parameters. */
static void make_chain(kernel *k, const usc_profile *p)
{
	node nd[MAXNODE];
	vset val[MAXNODE], prod[MAXNODE], par[3];
	size_t n = 2 + rnd() % 3, i;
	const char *tn = k->f->name;

	k->nparam = 3;
	put(k, "HloModule m\nENTRY e {\n");
	for (i = 0; i < 3; i++) {
		k->plen[i] = 1;
		k->prank[i] = 1;
		k->pdims[i][0] = 1;
		k->pv[i][0] = rand_value(k->f);
		param_set(&par[i], k->pv[i][0]);
		put(k, "  p%zu = %s[1] parameter(%zu)\n", i, tn, i);
	}
	for (i = 0; i < n; i++) {
		nd[i].op = (int)(rnd() % 5);
		/* The previous node is always used: no dead code. */
		nd[i].a = i == 0 ? -1 : (int)i - 1;
		nd[i].b = (rnd() & 1) ? -(int)(rnd() % 3) - 1
				      : (int)(rnd() % (i + 1)) - 1;
		if (nd[i].b == (int)i - 1 && i == 0)
			nd[i].b = -2;
		if (rnd() & 1) {
			int t = nd[i].a;

			nd[i].a = nd[i].b;
			nd[i].b = t;
		}
		nd[i].via = rand_fmt();
	}
	for (i = 0; i < n; i++) {
		const vset *a = nd[i].a < 0 ? &par[-nd[i].a - 1] : &val[nd[i].a];
		const vset *b = nd[i].b < 0 ? &par[-nd[i].b - 1] : &val[nd[i].b];
		char an[16], bn[16];

		snprintf(an, sizeof an, nd[i].a < 0 ? "p%d" : "n%d",
			 nd[i].a < 0 ? -nd[i].a - 1 : nd[i].a);
		snprintf(bn, sizeof bn, nd[i].b < 0 ? "p%d" : "n%d",
			 nd[i].b < 0 ? -nd[i].b - 1 : nd[i].b);
		vs_init(&val[i]);
		vs_init(&prod[i]);
		if (nd[i].op == OP_CVT) {
			/* T -> U -> T: two converts, each with its choices. */
			vset mid;

			vs_init(&mid);
			for (size_t j = 0; j < a->n; j++)
				rounded_choices(&mid, OP_CVT, a->v[j], a->v[j],
						nd[i].via, p);
			for (size_t j = 0; j < mid.n; j++)
				rounded_choices(&val[i], OP_CVT, mid.v[j],
						mid.v[j], k->f, p);
			val[i].big |= mid.big;
			vs_clear(&mid);
			put(k, "  c%zu = %s[1] convert(%s)\n", i, nd[i].via->name,
			    an);
			put(k, "  n%zu = %s[1] convert(c%zu)\n", i, tn, i);
			continue;
		}
		{
			vset ea, eb;
			const vset *xa = a, *xb = b;

			/* An operand that is a product may be unrounded. */
			vs_init(&ea);
			vs_init(&eb);
			if ((nd[i].op == OP_ADD || nd[i].op == OP_SUB) &&
			    p->fma) {
				if (nd[i].a >= 0 && nd[nd[i].a].op == OP_MUL) {
					vs_union(&ea, a);
					vs_union(&ea, &prod[nd[i].a]);
					xa = &ea;
				}
				if (nd[i].b >= 0 && nd[nd[i].b].op == OP_MUL) {
					vs_union(&eb, b);
					vs_union(&eb, &prod[nd[i].b]);
					xb = &eb;
				}
			}
			binary_set(&val[i], nd[i].op, xa, xb, k->f, p,
				   p->divide_reciprocal == USC_DIV_RECIP_ANY);
			if (nd[i].op == OP_MUL)
				exact_products(&prod[i], a, b);
			vs_clear(&ea);
			vs_clear(&eb);
		}
		put(k, "  n%zu = %s[1] %s(%s, %s)\n", i, tn,
		    op_names[nd[i].op], an, bn);
	}
	/* The root: the last node, which must be the ROOT line. */
	k->len = (size_t)(strrchr(k->text, '\n') - k->text);
	k->text[k->len] = '\0';
	{
		char *line = strrchr(k->text, '\n') + 1;
		char tmp[512];

		snprintf(tmp, sizeof tmp, "  ROOT %s\n}\n", line + 2);
		k->len = (size_t)(line - k->text);
		k->text[k->len] = '\0';
		put(k, "%s", tmp);
	}
	k->nout = 1;
	round_out(&k->out[0], &val[n - 1], k->f);
	for (i = 0; i < n; i++) {
		vs_clear(&val[i]);
		vs_clear(&prod[i]);
	}
	for (i = 0; i < 3; i++)
		vs_clear(&par[i]);
}

/*
 * Every value of the sum of the leaves in mask, in every tree: a subset
 * splits into two non-empty parts (the one holding the lowest leaf
 * first, so each tree is seen once up to commutation, which RN
 * preserves), each summed recursively, then added with every rounding
 * choice.  A leaf that is a product may be seen unrounded (FMA) when
 * added to a partial sum: leaf sets hold that already.
 */
typedef struct sums {
	const vset *leaf;
	vset memo[1u << MAXLEAF];
	bool done[1u << MAXLEAF];
	const fmt *f;
	const usc_profile *p;
} sums;

static const vset *tree_sums(sums *s, unsigned mask)
{
	unsigned low = mask & -mask, sub;

	if (s->done[mask])
		return &s->memo[mask];
	s->done[mask] = true;
	vs_init(&s->memo[mask]);
	if (mask == low) {
		int i = __builtin_ctz(mask);

		vs_union(&s->memo[mask], &s->leaf[i]);
		return &s->memo[mask];
	}
	/* Every proper non-empty sub holding the low leaf. */
	for (sub = (mask - 1) & mask; sub; sub = (sub - 1) & mask) {
		if (!(sub & low))
			continue;
		binary_set(&s->memo[mask], OP_ADD, tree_sums(s, sub),
			   tree_sums(s, mask & ~sub), s->f, s->p, false);
	}
	return &s->memo[mask];
}

/* The sequential order ((l0 + l1) + l2) + ...: the interpreter's. */
static void seq_sums(vset *out, const vset *leaf, size_t n, const fmt *f,
		     const usc_profile *p)
{
	vset acc;

	vs_init(&acc);
	vs_union(&acc, &leaf[0]);
	for (size_t i = 1; i < n; i++) {
		vset next;

		vs_init(&next);
		binary_set(&next, OP_ADD, &acc, &leaf[i], f, p, false);
		vs_clear(&acc);
		acc = next;
	}
	vs_init(out);
	vs_union(out, &acc);
	vs_clear(&acc);
}

static void sum_all(vset *out, const vset *leaf, size_t n, const fmt *f,
		    const usc_profile *p, bool any_order)
{
	sums *s;

	if (!any_order) {
		seq_sums(out, leaf, n, f, p);
		return;
	}
	s = calloc(1, sizeof *s);
	assert_non_null(s);
	s->leaf = leaf;
	s->f = f;
	s->p = p;
	vs_init(out);
	vs_union(out, tree_sums(s, (1u << n) - 1));
	for (unsigned m = 0; m < (1u << n); m++)
		if (s->done[m])
			vs_clear(&s->memo[m]);
	free(s);
}

/*
 * The products a_k b_k of a dot or convolution, as a leaf set each: the
 * rounded choices and, under fma, the exact product.  An f32 x f32 product
 * under dot_f32 tf32 / bf16x1 may take its operands rounded to 11 / 8
 * bits first.
 */
static void product_leaf(vset *leaf, double a, double b, const fmt *f,
			 const usc_profile *p)
{
	vset as, bs;
	const fmt *split = NULL;
	mpfr_t x, y;

	param_set(&as, a);
	param_set(&bs, b);
	if (f == &F32 && p->dot_f32 == USC_DOT_F32_TF32)
		split = &TF32;
	if (f == &F32 && p->dot_f32 == USC_DOT_F32_BF16_1)
		split = &BF16;
	if (split) {
		mpfr_inits2(PREC, x, y, (mpfr_ptr)0);
		rnd_op(x, OP_CVT, as.v[0], as.v[0], split);
		rnd_op(y, OP_CVT, bs.v[0], bs.v[0], split);
		vs_add(&as, x);
		vs_add(&bs, y);
		mpfr_clears(x, y, (mpfr_ptr)0);
	}
	vs_init(leaf);
	binary_set(leaf, OP_MUL, &as, &bs, f, p, false);
	if (p->fma)
		exact_products(leaf, &as, &bs);
	vs_clear(&as);
	vs_clear(&bs);
}

/* reduce(p0 [* p1]) over n = 2..5 elements with an init constant. */
static void make_reduce(kernel *k, const usc_profile *p)
{
	size_t n = 2 + rnd() % 4, i;
	bool mul = rnd() & 1;
	double init = (rnd() & 1) ? 0 : rand_value(k->f);
	const char *tn = k->f->name;
	vset leaf[MAXLEAF], all;
	char ib[64];

	k->nparam = mul ? 2 : 1;
	for (i = 0; i < k->nparam; i++) {
		k->plen[i] = n;
		k->prank[i] = 1;
		k->pdims[i][0] = (int64_t)n;
		for (size_t j = 0; j < n; j++)
			k->pv[i][j] = rand_value(k->f);
	}
	/* 17 digits name the double, which is an f value, exactly. */
	snprintf(ib, sizeof ib, "%.17g", init);
	put(k, "HloModule m\nadd { x = %s[] parameter(0)\n y = %s[] "
	       "parameter(1)\n ROOT s = %s[] add(x, y) }\nENTRY e {\n",
	    tn, tn, tn);
	put(k, "  a = %s[%zu] parameter(0)\n", tn, n);
	if (mul) {
		put(k, "  b = %s[%zu] parameter(1)\n", tn, n);
		put(k, "  m = %s[%zu] multiply(a, b)\n", tn, n);
	}
	put(k, "  z = %s[] constant(%s)\n", tn, ib);
	put(k, "  ROOT r = %s[] reduce(%s, z), dimensions={0}, to_apply=add\n}\n",
	    tn, mul ? "m" : "a");
	/* Leaf 0 is the init: the interpreter starts from it. */
	param_set(&leaf[0], init);
	for (i = 0; i < n; i++) {
		if (mul) {
			vset as, bs;

			param_set(&as, k->pv[0][i]);
			param_set(&bs, k->pv[1][i]);
			vs_init(&leaf[i + 1]);
			binary_set(&leaf[i + 1], OP_MUL, &as, &bs, k->f, p, false);
			/* The reduce's add is the product's consumer. */
			if (p->fma)
				exact_products(&leaf[i + 1], &as, &bs);
			vs_clear(&as);
			vs_clear(&bs);
		} else
			param_set(&leaf[i + 1], k->pv[0][i]);
	}
	sum_all(&all, leaf, n + 1, k->f, p, p->reassociate);
	k->nout = 1;
	round_out(&k->out[0], &all, k->f);
	vs_clear(&all);
	for (i = 0; i <= n; i++)
		vs_clear(&leaf[i]);
}

/* dot of two vectors of 2..5 elements. */
static void make_dot(kernel *k, const usc_profile *p)
{
	size_t n = 2 + rnd() % 4, i;
	const char *tn = k->f->name;
	vset leaf[MAXLEAF], all;

	k->nparam = 2;
	for (i = 0; i < 2; i++) {
		k->plen[i] = n;
		k->prank[i] = 1;
		k->pdims[i][0] = (int64_t)n;
		for (size_t j = 0; j < n; j++)
			k->pv[i][j] = rand_value(k->f);
	}
	put(k, "HloModule m\nENTRY e {\n  a = %s[%zu] parameter(0)\n"
	       "  b = %s[%zu] parameter(1)\n  ROOT d = %s[] dot(a, b), "
	       "lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
	    tn, n, tn, n, tn);
	for (i = 0; i < n; i++)
		product_leaf(&leaf[i], k->pv[0][i], k->pv[1][i], k->f, p);
	sum_all(&all, leaf, n, k->f, p, p->reassociate_dot);
	k->nout = 1;
	round_out(&k->out[0], &all, k->f);
	vs_clear(&all);
	for (i = 0; i < n; i++)
		vs_clear(&leaf[i]);
}

/*
 * A 1-d convolution, NCW: 2 input channels of width 3 (or 4), a kernel
 * of width 2, one output feature, no padding: 4 products per element.
 */
static void make_conv(kernel *k, const usc_profile *p)
{
	size_t wd = 3 + rnd() % 2, o, i;
	const char *tn = k->f->name;

	k->nparam = 2;
	k->plen[0] = 2 * wd;
	k->plen[1] = 4;
	k->prank[0] = k->prank[1] = 3;
	k->pdims[0][0] = 1;
	k->pdims[0][1] = 2;
	k->pdims[0][2] = (int64_t)wd;
	k->pdims[1][0] = 1;
	k->pdims[1][1] = 2;
	k->pdims[1][2] = 2;
	for (i = 0; i < k->plen[0]; i++)
		k->pv[0][i] = rand_value(k->f);
	for (i = 0; i < 4; i++)
		k->pv[1][i] = rand_value(k->f);
	put(k, "HloModule m\nENTRY e {\n  x = %s[1,2,%zu] parameter(0)\n"
	       "  w = %s[1,2,2] parameter(1)\n  ROOT c = %s[1,1,%zu] "
	       "convolution(x, w), window={size=2}, dim_labels=bf0_oi0->bf0\n}\n",
	    tn, wd, tn, tn, wd - 1);
	k->nout = wd - 1;
	for (o = 0; o + 1 < wd; o++) {
		vset leaf[4], all;
		size_t n = 0;

		for (size_t f = 0; f < 2; f++)
			for (size_t j = 0; j < 2; j++)
				product_leaf(&leaf[n++], k->pv[0][f * wd + o + j],
					     k->pv[1][f * 2 + j], k->f, p);
		sum_all(&all, leaf, n, k->f, p, p->reassociate_dot);
		round_out(&k->out[o], &all, k->f);
		vs_clear(&all);
		for (i = 0; i < n; i++)
			vs_clear(&leaf[i]);
	}
}

/*
 * a * b + c in f16 or bf16 with inputs built to make the FMA's exact
 * result lie just off a midpoint of the type, within half an f32 ulp of
 * it: rounded to f32 first it becomes the midpoint, which nearest-even
 * may break the other way than the single rounding (issue 13).  Random
 * inputs almost never do this.  c is drawn, then a, and b = RN(h / a)
 * for h = c's half spacing; of up to 64 draws of a, the first whose a*b
 * lands in (h, h + 2^-25 c] is kept (the product is exact in double: 22
 * bits; so is c + a*b, some 40 bits).
 */
static void make_tie(kernel *k, const usc_profile *p)
{
	const fmt *f = (rnd() & 1) ? &F16 : &BF16;
	const char *tn = f->name;
	double c = fabs(rand_value(f)), h = 0, a = 0, b = 0;
	vset pa, pb, pc, m, r;
	mpfr_t x;

	k->f = f;
	/* c in [2, 16): b stays clear of the subnormals. */
	{
		int ex;

		(void)frexp(c, &ex);
		c = ldexp(c, 2 + (int)(rnd() % 3) - ex);
		(void)frexp(c, &ex);
		h = ldexp(1, ex - 1 - f->p); /* half the spacing at c */
	}
	for (int tries = 0; tries < 64; tries++) {
		double d;

		a = 1 + ldexp((double)(rnd() % (1u << (f->p - 1))), 1 - f->p);
		mpfr_init2(x, f->p);
		mpfr_set_d(x, h / a, MPFR_RNDN);
		b = mpfr_get_d(x, MPFR_RNDN);
		mpfr_clear(x);
		d = a * b - h;
		if (d > 0 && d <= ldexp(c, -25))
			break;
	}
	k->nparam = 3;
	k->pv[0][0] = a;
	k->pv[1][0] = b;
	k->pv[2][0] = (rnd() & 1) ? c : -c;
	if (k->pv[2][0] < 0)
		k->pv[0][0] = -a;
	for (int i = 0; i < 3; i++) {
		k->plen[i] = 1;
		k->prank[i] = 1;
		k->pdims[i][0] = 1;
	}
	put(k, "HloModule m\nENTRY e {\n  a = %s[1] parameter(0)\n"
	       "  b = %s[1] parameter(1)\n  c = %s[1] parameter(2)\n"
	       "  m = %s[1] multiply(a, b)\n  ROOT r = %s[1] add(m, c)\n}\n",
	    tn, tn, tn, tn, tn);
	param_set(&pa, k->pv[0][0]);
	param_set(&pb, k->pv[1][0]);
	param_set(&pc, k->pv[2][0]);
	vs_init(&m);
	binary_set(&m, OP_MUL, &pa, &pb, f, p, false);
	if (p->fma)
		exact_products(&m, &pa, &pb);
	vs_init(&r);
	binary_set(&r, OP_ADD, &m, &pc, f, p, false);
	k->nout = 1;
	round_out(&k->out[0], &r, f);
	vs_clear(&pa);
	vs_clear(&pb);
	vs_clear(&pc);
	vs_clear(&m);
	vs_clear(&r);
}

/* ------------------------------------------------- DAZ on exact ops */

/*
 * Kernels of the exact float ops a flushing target reads through DAZ
 * (maximum, minimum, clamp, and a compare feeding a select's condition),
 * over operands drawn to be subnormal, zero or normal.  Where the profile
 * flushes the type's inputs, each subnormal operand is read as itself or
 * as the zero of its sign, independently; every combination's result
 * must lie inside the envelope.  Plain doubles suffice: these ops are
 * exact, and every value of f16, bf16 and f32 is a double.
 */
enum { DAZ_MAX, DAZ_MIN, DAZ_CLAMP, DAZ_SELECT, DAZ_MAX_SELECT, DAZ_KINDS };

static const char *const cmp_dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static bool cmp_holds(int dir, double a, double b)
{
	switch (dir) {
	case 0: return a == b;
	case 1: return a != b;
	case 2: return a < b;
	case 3: return a <= b;
	case 4: return a > b;
	default: return a >= b;
	}
}

/* Subnormal (a third of draws), a signed zero, or a normal value of f. */
static double daz_value(const fmt *f)
{
	uint64_t r = rnd() % 6;
	double sub = ldexp(f->min_normal, 1 - f->p); /* the least subnormal */
	double x;

	if (r < 2)
		x = sub * (double)(1 + rnd() % ((1ull << (f->p - 1)) - 1));
	else if (r == 2)
		x = 0;
	else if (r == 3)
		x = f->min_normal * (double)(1 + rnd() % 4);
	else
		x = fabs(rand_value(f));
	return (rnd() & 1) ? -x : x;
}

/* The values a DAZ target may read for x: itself and, if subnormal, 0. */
static size_t daz_reads(double x, const fmt *f, bool flush, double out[2])
{
	out[0] = x;
	if (flush && x != 0 && fabs(x) < f->min_normal) {
		out[1] = copysign(0.0, x);
		return 2;
	}
	return 1;
}

static void vs_add_d(vset *s, double d)
{
	mpfr_t x;

	mpfr_init2(x, PREC);
	mpfr_set_d(x, d, MPFR_RNDN);
	vs_add(s, x);
	mpfr_clear(x);
}

/* max / min of two read values; equal operands may give either one. */
static void maxmin_d(double r[2], size_t *n, bool is_max, double a,
		     double b)
{
	if (a == b) {
		r[0] = a;
		r[1] = b;
		*n = 2;
		return;
	}
	r[0] = is_max ? fmax(a, b) : fmin(a, b);
	*n = 1;
}

static void make_daz(kernel *k, const usc_profile *p, int kind)
{
	const fmt *f = k->f;
	const char *tn = f->name;
	bool flush = (p->flush[f->t] & USC_FLUSH_INPUTS) != 0;
	int dir = (int)(rnd() % 6);
	size_t np = kind == DAZ_MAX || kind == DAZ_MIN || kind == DAZ_SELECT
			    ? 2 : 3;

	k->nparam = np;
	for (size_t i = 0; i < np; i++) {
		k->plen[i] = 4;
		k->prank[i] = 1;
		k->pdims[i][0] = 4;
		for (size_t j = 0; j < 4; j++)
			k->pv[i][j] = daz_value(f);
	}
	/* A clamp's bounds in order (as values: DAZ may still cross them). */
	if (kind == DAZ_CLAMP)
		for (size_t j = 0; j < 4; j++)
			if (k->pv[0][j] > k->pv[2][j]) {
				double t = k->pv[0][j];

				k->pv[0][j] = k->pv[2][j];
				k->pv[2][j] = t;
			}
	put(k, "HloModule m\nENTRY e {\n");
	for (size_t i = 0; i < np; i++)
		put(k, "  p%zu = %s[4] parameter(%zu)\n", i, tn, i);
	switch (kind) {
	case DAZ_MAX:
	case DAZ_MIN:
		put(k, "  ROOT r = %s[4] %s(p0, p1)\n}\n", tn,
		    kind == DAZ_MAX ? "maximum" : "minimum");
		break;
	case DAZ_CLAMP:
		put(k, "  ROOT r = %s[4] clamp(p0, p1, p2)\n}\n", tn);
		break;
	case DAZ_SELECT:
		put(k, "  c = pred[4] compare(p0, p1), direction=%s\n"
		       "  ROOT r = %s[4] select(c, p0, p1)\n}\n",
		    cmp_dirs[dir], tn);
		break;
	default:
		put(k, "  m = %s[4] maximum(p0, p1)\n"
		       "  c = pred[4] compare(m, p2), direction=%s\n"
		       "  ROOT r = %s[4] select(c, p0, p2)\n}\n",
		    tn, cmp_dirs[dir], tn);
		break;
	}
	k->nout = 4;
	for (size_t j = 0; j < 4; j++) {
		double x[3][2], m[2], v[2];
		size_t nx[3] = {1, 1, 1}, nm, nv;
		vset *out = &k->out[j];

		vs_init(out);
		for (size_t i = 0; i < np; i++)
			nx[i] = daz_reads(k->pv[i][j], f, flush, x[i]);
		for (size_t a = 0; a < nx[0]; a++)
			for (size_t b = 0; b < nx[1]; b++)
				for (size_t c = 0; c < nx[2]; c++) {
					double x0 = x[0][a], x1 = x[1][b];

					switch (kind) {
					case DAZ_MAX:
					case DAZ_MIN:
						maxmin_d(v, &nv, kind == DAZ_MAX,
							 x0, x1);
						for (size_t q = 0; q < nv; q++)
							vs_add_d(out, v[q]);
						break;
					case DAZ_CLAMP:
						/* min(max(x, lo), hi). */
						maxmin_d(m, &nm, true, x1, x0);
						for (size_t q = 0; q < nm; q++) {
							maxmin_d(v, &nv, false,
								 m[q], x[2][c]);
							for (size_t u = 0;
							     u < nv; u++)
								vs_add_d(out,
									 v[u]);
						}
						break;
					case DAZ_SELECT:
						/*
						 * select moves the bits; but a
						 * select of the two values it
						 * compares is a min or max,
						 * which minps / maxps compute
						 * on the values read.
						 */
						vs_add_d(out, cmp_holds(dir, x0, x1)
								      ? k->pv[0][j]
								      : k->pv[1][j]);
						vs_add_d(out, cmp_holds(dir, x0, x1)
								      ? x0 : x1);
						break;
					default:
						maxmin_d(m, &nm, true, x0, x1);
						for (size_t q = 0; q < nm; q++) {
							/* The compare reads m
							 * through DAZ too. */
							double rm[2];
							size_t nr = daz_reads(
								m[q], f, flush,
								rm);

							for (size_t u = 0;
							     u < nr; u++)
								vs_add_d(out,
									 cmp_holds(dir, rm[u], x[2][c])
										 ? k->pv[0][j]
										 : k->pv[2][j]);
						}
						break;
					}
				}
	}
}

/* ------------------------------------------------------------ checking */

static usc_tensor *param_tensor(const kernel *k, size_t i)
{
	usc_tensor *x = NULL;
	usc_error err;

	if (usc_tensor_create(k->f->t, k->prank[i], k->pdims[i], &x, &err) !=
	    USC_OK)
		fail_msg("%s", err.message);
	for (size_t j = 0; j < k->plen[i]; j++) {
		uint64_t b;

		assert_int_equal(usc_encode_double(k->f->t, k->pv[i][j], NULL,
						   &b, NULL),
				 0);
		assert_int_equal(usc_tensor_set_bits(x, j, b), USC_OK);
	}
	return x;
}

typedef struct tally {
	size_t kernels, skipped, values, multi, kinds[5];
	size_t daz, daz_values, daz_multi; /* the DAZ kernels */
	uint64_t fast; /* op elements the fast path decided */
} tally;

/* Runs the envelope on k under p and checks every permitted value. */
static void check_kernel(kernel *k, const usc_profile *p, tally *ty,
			 int kind)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *hf = NULL;
	usc_eval *ev = NULL;
	usc_tensor *in[4] = {NULL, NULL, NULL, NULL};
	const void *vals;
	size_t count;
	usc_dtype t;
	usc_error err;

	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = p;
	if (usc_hlo_parse(k->text, k->len, "<brute>", &hf, &err) != USC_OK)
		fail_msg("parse: %s\n%s", err.message, k->text);
	if (usc_eval_create(usc_hlo_file_module(hf, 0), &o, &ev, &err) !=
	    USC_OK)
		fail_msg("create: %s\n%s", err.message, k->text);
	for (size_t i = 0; i < k->nparam; i++) {
		in[i] = param_tensor(k, i);
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("bind: %s", err.message);
	}
	/*
	 * Both paths of the domain: the fast one (double arithmetic, the
	 * default) and the MPFR one (docs/envelope.md, "The fast path").
	 */
	for (int mpfr = 0; mpfr < 2; mpfr++) {
		uint64_t fast = 0, escalated = 0;

		usc__envelope_set_mpfr_only(usc__eval_domain_state(ev),
					    mpfr == 1);
		if (usc_eval_run(ev, &err) != USC_OK)
			fail_msg("run: %s\n%s", err.message, k->text);
		assert_int_equal(usc__eval_output_values(ev, 0, &vals, &count,
							 &t),
				 USC_OK);
		assert_int_equal(count, k->nout);
		for (size_t j = 0; j < k->nout; j++) {
			usc__envelope_elem e;
			uint64_t rep;

			const unsigned char *val =
				(const unsigned char *)vals +
				j * usc__domain_envelope.value_size;

			assert_int_equal(usc__domain_envelope.to_output(
						 usc__eval_domain_state(ev), t,
						 val, &rep, &e, &err),
					 USC_OK);
			if (k->out[j].n > 1 && mpfr == 0 && kind >= 0)
				ty->multi++;
			for (size_t v = 0; v < k->out[j].n; v++) {
				double d = mpfr_get_d(k->out[j].v[v],
						      MPFR_RNDN);
				uint64_t b;

				assert_int_equal(usc_encode_double(t, d, NULL,
								   &b, NULL),
						 0);
				ty->values += mpfr == 0 && kind >= 0;
				if (!usc__envelope_contains(&e, t, b)) {
					printf("under %s (%s path), output "
					       "%zu: %a (%s) is a permitted "
					       "value outside the envelope "
					       "[%a, %a] flags %#x; inputs:",
					       p->name,
					       mpfr ? "MPFR" : "fast", j, d,
					       k->f->name, e.lo, e.hi,
					       e.flags);
					for (size_t i = 0; i < k->nparam; i++)
						for (size_t q = 0;
						     q < k->plen[i]; q++)
							printf(" %a",
							       k->pv[i][q]);
					printf("\n%s", k->text);
					fail();
				}
			}
		}
		usc__envelope_counts(usc__eval_domain_state(ev), &fast,
				     &escalated);
		if (mpfr == 0)
			ty->fast += fast;
	}
	if (kind >= 0)
		ty->kinds[kind]++;
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(hf);
	for (size_t i = 0; i < k->nparam; i++)
		usc_tensor_destroy(in[i]);
}

static void run_profile(const char *name)
{
	usc_profile p;
	usc_error err;
	tally ty;
	long n = 1000 * scale();
	kernel *k = calloc(1, sizeof *k);

	assert_non_null(k);
	memset(&ty, 0, sizeof ty);
	if (usc_profile_builtin(name, &p, &err) != USC_OK)
		fail_msg("%s", err.message);
	for (long i = 0; i < n; i++) {
		int kind = (int)(i % 5);

		memset(k, 0, sizeof *k);
		k->f = rand_fmt();
		skip_kernel = false;
		switch (kind) {
		case 0: make_chain(k, &p); break;
		case 1: make_reduce(k, &p); break;
		case 2: make_dot(k, &p); break;
		case 3: make_conv(k, &p); break;
		default: make_tie(k, &p); break;
		}
		ty.kernels++;
		{
			bool big = false;

			for (size_t j = 0; j < k->nout; j++)
				big |= k->out[j].big;
			if (skip_kernel || big)
				ty.skipped++;
			else
				check_kernel(k, &p, &ty, kind);
		}
		for (size_t j = 0; j < k->nout; j++)
			vs_clear(&k->out[j]);
	}
	/*
	 * The exact ops under DAZ: 200 kernels per profile (times
	 * USC_TEST_SCALE), in the types whose inputs the profile flushes
	 * where it flushes any, so that the choices are there to check.
	 */
	for (long i = 0; i < 200 * scale(); i++) {
		int kind = (int)(i % DAZ_KINDS);
		bool any = false;

		memset(k, 0, sizeof *k);
		for (int tries = 0; tries < 8; tries++) {
			k->f = rand_fmt();
			if (p.flush[k->f->t] & USC_FLUSH_INPUTS)
				break;
		}
		make_daz(k, &p, kind);
		for (size_t j = 0; j < k->nout; j++)
			any |= k->out[j].n > 1;
		ty.daz++;
		ty.daz_multi += any;
		ty.daz_values += k->out[0].n + k->out[1].n + k->out[2].n +
				 k->out[3].n;
		check_kernel(k, &p, &ty, -1);
		for (size_t j = 0; j < k->nout; j++)
			vs_clear(&k->out[j]);
	}
	printf("  %s: %zu DAZ kernels of maximum, minimum, clamp and compare "
	       "into select (%zu with a choice of reads), %zu permitted "
	       "values\n", name, ty.daz, ty.daz_multi, ty.daz_values);
	/* A profile that flushes inputs must have met its choices. */
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		if ((t == USC_F16 || t == USC_BF16 || t == USC_F32) &&
		    (p.flush[t] & USC_FLUSH_INPUTS))
			assert_true(ty.daz_multi * 4 > ty.daz);
	printf("  %s: %zu kernels (%zu chains, %zu reductions, %zu dots, "
	       "%zu convolutions, %zu near-tie FMAs checked; %zu skipped "
	       "near a subnormal or an overflow), %zu permitted values, %zu "
	       "outputs with more than one; each checked on the fast and the "
	       "MPFR path, the fast one deciding %llu op elements\n",
	       name, ty.kernels, ty.kinds[0], ty.kinds[1], ty.kinds[2],
	       ty.kinds[3], ty.kinds[4], ty.skipped, ty.values, ty.multi,
	       (unsigned long long)ty.fast);
	/* The fast path is what the default run takes: it must be reached. */
	assert_true(ty.fast > 0);
	/* The skips stay a minority, so the test keeps its reach. */
	assert_true(ty.skipped * 4 < ty.kernels);
	free(k);
}

static void test_strict(void **state)
{
	(void)state;
	run_profile("strict");
}

static void test_xla_cpu(void **state)
{
	(void)state;
	run_profile("xla-cpu");
}

static void test_xla_cpu_fast_math(void **state)
{
	(void)state;
	run_profile("xla-cpu-fast-math");
}

static void test_xla_gpu(void **state)
{
	(void)state;
	run_profile("xla-gpu");
}

static void test_xla_tpu(void **state)
{
	(void)state;
	run_profile("xla-tpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_xla_cpu),
		cmocka_unit_test(test_xla_cpu_fast_math),
		cmocka_unit_test(test_xla_gpu),
		cmocka_unit_test(test_xla_tpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
