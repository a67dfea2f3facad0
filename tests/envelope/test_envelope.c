/*
 * The legitimate envelope (oracles/envelope.c).  Expected values come
 * from outside the domain: the reference domain (strict profile: the
 * envelope must be exactly its point), hand-derived hex floats, the
 * Higham bound written out here, and the real XLA:CPU outputs captured
 * under data/examples/ (which a profile approximating xla-cpu must
 * contain).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "internal.h"
#include "test_util.h"

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#include "eval/eval_values.h"
#include "oracles/envelope.h"

/* ------------------------------------------------------------ helpers */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void)
{
	return (double)(usc_test_xorshift64(&rng) >> 11) * 0x1p-53;
}

static double nrand(void)
{
	double s = 0;
	int i;

	for (i = 0; i < 12; i++)
		s += urand();
	return s - 6;
}

static usc_tensor *random_input(const usc_tensor_spec *sp)
{
	usc_tensor *t = NULL;
	usc_error err;
	uint64_t i, n;

	if (usc_tensor_create(sp->dtype, sp->rank, sp->dims, &t, &err) !=
	    USC_OK)
		fail_msg("tensor_create: %s", err.message);
	n = usc_tensor_count(t);
	for (i = 0; i < n; i++) {
		uint64_t b = 0;

		if (usc_dtype_is_float(sp->dtype))
			(void)usc_encode_double(sp->dtype, 2 * nrand(), NULL,
						&b, NULL);
		else
			b = (uint64_t)(urand() * 2);
		if (usc_format_of(sp->dtype)->bits < 64)
			b &= ((uint64_t)1 << usc_format_of(sp->dtype)->bits) - 1;
		assert_int_equal(usc_tensor_set_bits(t, i, b), USC_OK);
	}
	return t;
}

/* Runs module m on inputs in[] in the given options; NULL if refused. */
static usc_eval *run(const usc_hlo_module *m, usc_tensor **in,
		     const usc_eval_options *o, const char *what)
{
	usc_eval *ev = NULL;
	usc_error err;
	size_t i;

	if (usc_eval_create(m, o, &ev, &err) != USC_OK) {
		printf("  %s: create: %s\n", what, err.message);
		return NULL;
	}
	for (i = 0; i < usc_eval_param_count(ev); i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("%s: bind: %s", what, err.message);
	if (usc_eval_run(ev, &err) != USC_OK) {
		printf("  %s: run: %s\n", what, err.message);
		usc_eval_destroy(ev);
		return NULL;
	}
	return ev;
}

/* The envelope of output o, element k. */
static usc__envelope_elem elem(usc_eval *ev, size_t o, size_t k,
			       usc_dtype *t, uint64_t *rep)
{
	const void *vals;
	size_t count;
	usc__envelope_elem e;
	usc_error err;

	assert_int_equal(usc__eval_output_values(ev, o, &vals, &count, t),
			 USC_OK);
	assert_true(k < count);
	assert_int_equal(usc__domain_envelope.to_output(
				 usc__eval_domain_state(ev), *t,
				 (const unsigned char *)vals +
					 k * usc__domain_envelope.value_size,
				 rep, &e, &err),
			 USC_OK);
	return e;
}

static double dec(usc_dtype t, uint64_t b)
{
	double d = 0;

	(void)usc_decode_double(t, b, &d);
	return d;
}

/* The profile approximating XLA:CPU (until data/profiles lands). */
static void cpu_like(usc_profile *p)
{
	int i;

	usc__envelope_profile_strict(p);
	strcpy(p->name, "xla-cpu-like");
	p->excess_precision = true;
	p->excess_type = USC_F32;
	p->fma = true;
	p->reassociate = true;
	p->reassociate_dot = true;
	for (i = 0; i < USC_PFN_COUNT; i++)
		p->accuracy[i] = 4;
	p->accuracy[USC_PFN_SQRT] = 0.5;
	p->accuracy[USC_PFN_DIVIDE] = 0.5;
	p->flush[USC_F32] = USC_FLUSH_INPUTS | USC_FLUSH_OUTPUTS;
	p->flush[USC_BF16] = USC_FLUSH_INPUTS | USC_FLUSH_OUTPUTS;
}

/* ------------------------------------------------------ contains */

static void test_contains(void **state)
{
	usc__envelope_elem e = {1.0, 0x1.02p0, USC__ENV_FINITE, 0};
	uint64_t b;

	(void)state;
	assert_int_equal(usc_encode_double(USC_BF16, 1.0, NULL, &b, NULL), 0);
	assert_true(usc__envelope_contains(&e, USC_BF16, b));
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x3F81));
	assert_false(usc__envelope_contains(&e, USC_BF16, 0x3F82));
	assert_false(usc__envelope_contains(&e, USC_BF16, 0x3F7F));
	assert_false(usc__envelope_contains(&e, USC_BF16, 0x7FC0)); /* NaN */
	assert_false(usc__envelope_contains(&e, USC_BF16, 0x7F80)); /* Inf */
	e.flags |= USC__ENV_NAN | USC__ENV_POS_INF;
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x7FC0));
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x7F80));
	assert_false(usc__envelope_contains(&e, USC_BF16, 0xFF80));
	/* Zeros of both signs when 0 is inside. */
	e.lo = -1;
	e.hi = 0;
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x0000));
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x8000));
	/* UNKNOWN never proves a defect. */
	e.flags = USC__ENV_UNKNOWN;
	assert_true(usc__envelope_contains(&e, USC_BF16, 0x1234));
	/* Integers by value. */
	e.flags = USC__ENV_FINITE;
	e.lo = -2;
	e.hi = 3;
	assert_true(usc__envelope_contains(&e, USC_S8, 0xFE));
	assert_false(usc__envelope_contains(&e, USC_S8, 0xFD));
}

/* ------------------------------------------------ hand-derived cases */

/*
 * Runs text on inputs (destroyed here) in the envelope of profile p (the
 * given reduction order) and returns element k of output 0.
 */
static usc__envelope_elem env_of(const char *text, usc_tensor **in,
				 size_t nin, const usc_profile *p, size_t k)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc__envelope_elem e;
	usc_error err;
	usc_dtype t;
	uint64_t rep;
	size_t i;

	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = p;
	if (usc_hlo_parse(text, strlen(text), "<t>", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	ev = run(usc_hlo_file_module(f, 0), in, &o, "envelope");
	assert_non_null(ev);
	e = elem(ev, 0, k, &t, &rep);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	for (i = 0; i < nin; i++)
		usc_tensor_destroy(in[i]);
	return e;
}

static usc_tensor *vec(usc_dtype t, size_t n, const double *v)
{
	usc_tensor *x = NULL;
	usc_error err;
	int64_t d = (int64_t)n;
	size_t i;

	if (usc_tensor_create(t, 1, &d, &x, &err) != USC_OK)
		fail_msg("%s", err.message);
	for (i = 0; i < n; i++) {
		uint64_t b;

		assert_int_equal(usc_encode_double(t, v[i], NULL, &b, NULL), 0);
		assert_int_equal(usc_tensor_set_bits(x, i, b), USC_OK);
	}
	return x;
}

/*
 * (a + b) + b in bf16 with a = 1, b = 2^-8.  Strict: 1 + 2^-8 is a tie
 * between 1 and 0x1.02p0 (bf16 has 8 bits), nearest-even gives 1, and
 * again 1.  Kept in f32: 1 + 2^-8, then 1 + 2^-7 = 0x1.02p0 exactly.
 */
static void test_bf16_add_excess(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = bf16[1] parameter(0)\n"
		"  b = bf16[1] parameter(1)\n"
		"  s = bf16[1] add(a, b)\n"
		"  ROOT r = bf16[1] add(s, b)\n"
		"}\n";
	usc_profile p;
	usc__envelope_elem e;
	usc_tensor *in[2];

	(void)state;
	usc__envelope_profile_strict(&p);
	in[0] = vec(USC_BF16, 1, (double[]){1});
	in[1] = vec(USC_BF16, 1, (double[]){0x1p-8});
	e = env_of(text, in, 2, &p, 0);
	assert_int_equal(e.flags, USC__ENV_FINITE);
	assert_true(e.lo == 1 && e.hi == 1);
	p.excess_precision = true;
	p.excess_type = USC_F32;
	in[0] = vec(USC_BF16, 1, (double[]){1});
	in[1] = vec(USC_BF16, 1, (double[]){0x1p-8});
	e = env_of(text, in, 2, &p, 0);
	assert_int_equal(e.flags, USC__ENV_FINITE);
	assert_true(e.lo == 1 && e.hi == 0x1.02p0);
}

/*
 * An f32 sum of 2^27, 1 and -2^27 (init 0): exactly 1; in order, 2^27 + 1
 * rounds to 2^27 (spacing 16) and the result is 0.  With reassociation
 * the envelope is 1 +- gamma_3 (2^27 + 1 + 2^27) with gamma_3 = 3u / (1 -
 * 3u), u = 2^-24 (Higham (4.4)): about 1 +- 48.0000087, rounded to
 * f32.
 */
static void test_sum_gamma(void **state)
{
	static const char *text =
		"HloModule m\n"
		"add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y) }\n"
		"ENTRY e {\n"
		"  a = f32[3] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add\n"
		"}\n";
	usc_profile p;
	usc__envelope_elem e;
	usc_tensor *in[1];
	double g = 3 * 0x1p-24 / (1 - 3 * 0x1p-24), bound;

	(void)state;
	usc__envelope_profile_strict(&p);
	in[0] = vec(USC_F32, 3, (double[]){0x1p27, 1, -0x1p27});
	e = env_of(text, in, 1, &p, 0);
	assert_int_equal(e.flags, USC__ENV_FINITE);
	assert_true(e.lo == 0 && e.hi == 0);
	p.reassociate = true;
	in[0] = vec(USC_F32, 3, (double[]){0x1p27, 1, -0x1p27});
	e = env_of(text, in, 1, &p, 0);
	bound = g * (0x1p28 + 1);
	assert_int_equal(e.flags, USC__ENV_FINITE);
	/* Contains both orders' results and the exact sum... */
	assert_true(e.lo <= 0 && e.hi >= 1);
	/*
	 * ...and is the gamma bound rounded to f32 (spacing 2^-18 there:
	 * the computed sum is an f32 value inside the real bound).
	 */
	assert_true(fabs(e.lo - (1 - bound)) < 0x1p-18);
	assert_true(fabs(e.hi - (1 + bound)) < 0x1p-18);
}

/*
 * tanh(10) in f32 is 1 - 2^-24-ish rounded to 1: whatever the accuracy,
 * 1 + ulp (0x3F800001) is outside, and so is 1 + 2^-23 under excess.
 */
static void test_tanh_range(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[1] parameter(0)\n"
		"  ROOT r = f32[1] tanh(a)\n"
		"}\n";
	usc_profile p;
	usc__envelope_elem e;
	usc_tensor *in[1];
	int i;

	(void)state;
	usc__envelope_profile_strict(&p);
	for (i = 0; i < USC_PFN_COUNT; i++)
		p.accuracy[i] = 16;
	in[0] = vec(USC_F32, 1, (double[]){10});
	e = env_of(text, in, 1, &p, 0);
	assert_true(e.flags & USC__ENV_FINITE);
	assert_true(e.flags & USC__ENV_RANGE_CLIPPED);
	assert_true(e.hi == 1);
	assert_true(e.lo <= 1 - 16 * 0x1p-24);
	assert_true(usc__envelope_contains(&e, USC_F32, 0x3F800000));
	assert_false(usc__envelope_contains(&e, USC_F32, 0x3F800001));
}

/*
 * exp with accuracy k = 3: the reference value moved by up to 3 ulps
 * (one encoding step each, inside one binade) stays inside.
 */
static void test_accuracy_perturbed(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[64] parameter(0)\n"
		"  ROOT r = f32[64] exponential(a)\n"
		"}\n";
	usc_eval_options o = usc_eval_options_default();
	usc_profile p;
	usc_hlo_file *f = NULL;
	usc_tensor *x;
	usc_eval *er, *ee;
	const usc_tensor *ref;
	usc_error err;
	double v[64];
	size_t k;
	int i;

	(void)state;
	for (k = 0; k < 64; k++)
		v[k] = 4 * nrand();
	x = vec(USC_F32, 64, v);
	usc__envelope_profile_strict(&p);
	for (i = 0; i < USC_PFN_COUNT; i++)
		p.accuracy[i] = 3;
	assert_int_equal(usc_hlo_parse(text, strlen(text), "<t>", &f, &err),
			 USC_OK);
	er = run(usc_hlo_file_module(f, 0), &x, NULL, "reference");
	o.domain = USC_DOMAIN_ENVELOPE;
	o.profile = &p;
	ee = run(usc_hlo_file_module(f, 0), &x, &o, "envelope");
	assert_non_null(er);
	assert_non_null(ee);
	assert_int_equal(usc_eval_output(er, 0, &ref, &err), USC_OK);
	for (k = 0; k < 64; k++) {
		uint64_t b, rep;
		usc_dtype t;
		usc__envelope_elem e = elem(ee, 0, k, &t, &rep);
		int d;

		usc_tensor_get_bits(ref, k, &b);
		for (d = -3; d <= 3; d++)
			assert_true(usc__envelope_contains(&e, USC_F32,
							   b + (uint64_t)d));
	}
	usc_eval_destroy(er);
	usc_eval_destroy(ee);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
}

/*
 * A final f32 -> bf16 convert computed by truncation instead of
 * nearest-even: every element where the two differ lies outside the
 * strict envelope.
 */
static void test_truncation_outside(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[256] parameter(0)\n"
		"  m = f32[256] multiply(a, a)\n"
		"  ROOT r = bf16[256] convert(m)\n"
		"}\n";
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_tensor *x;
	usc_eval *ee;
	usc_error err;
	double v[256];
	size_t k, differ = 0, caught = 0;

	(void)state;
	for (k = 0; k < 256; k++)
		v[k] = nrand();
	x = vec(USC_F32, 256, v);
	assert_int_equal(usc_hlo_parse(text, strlen(text), "<t>", &f, &err),
			 USC_OK);
	o.domain = USC_DOMAIN_ENVELOPE;
	ee = run(usc_hlo_file_module(f, 0), &x, &o, "envelope");
	assert_non_null(ee);
	for (k = 0; k < 256; k++) {
		usc_rounding rz = USC_ROUNDING_DEFAULT;
		uint64_t tb, nb, rep, xb;
		usc_dtype t;
		usc__envelope_elem e = elem(ee, 0, k, &t, &rep);
		float xf;
		double sq;

		usc_tensor_get_bits(x, k, &xb);
		xf = (float)dec(USC_F32, xb);
		sq = (double)(float)((double)xf * (double)xf);
		rz.mode = USC_RND_TOWARD_ZERO;
		usc_encode_double(USC_BF16, sq, &rz, &tb, NULL);
		usc_encode_double(USC_BF16, sq, NULL, &nb, NULL);
		assert_true(usc__envelope_contains(&e, USC_BF16, nb));
		assert_int_equal(rep, nb);
		if (tb != nb) {
			differ++;
			caught += !usc__envelope_contains(&e, USC_BF16, tb);
		}
	}
	assert_true(differ > 50);
	assert_int_equal(caught, differ);
	usc_eval_destroy(ee);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
}

/* -------------------------------------------- the catalogue kernels */

typedef struct tally {
	size_t kernels, refused, elems, points, unknown, flips, flips_out;
	size_t outside; /* reference elements outside an envelope */
} tally;

/*
 * Kernel m on random inputs: the strict envelope is the reference's point
 * (and one flipped low mantissa bit lies outside); the pairwise reference
 * lies inside the envelope of a reassociating profile.
 */
static void kernel_check(const char *name, const usc_hlo_module *m,
			 tally *ty)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval_options op = usc_eval_options_default();
	usc_eval *er, *ee, *ep, *ea;
	usc_tensor *in[16];
	usc_profile pr;
	size_t np, i, out;
	usc_error err;

	er = NULL;
	if (usc_eval_create(m, NULL, &er, &err) != USC_OK)
		return;
	np = usc_eval_param_count(er);
	assert_true(np <= 16);
	for (i = 0; i < np; i++) {
		usc_tensor_spec sp;

		assert_int_equal(usc_eval_param_spec(er, i, &sp, &err), 0);
		in[i] = random_input(&sp);
		assert_int_equal(usc_eval_bind(er, i, in[i], &err), USC_OK);
	}
	assert_int_equal(usc_eval_run(er, &err), USC_OK);
	o.domain = USC_DOMAIN_ENVELOPE;
	ee = run(m, in, &o, name);
	ty->kernels++;
	if (!ee) {
		ty->refused++;
		goto done_er;
	}
	usc__envelope_profile_strict(&pr);
	pr.reassociate = true;
	pr.reassociate_dot = true;
	o.profile = &pr;
	ea = run(m, in, &o, name);
	op.reduce_order = USC_REDUCE_PAIRWISE;
	ep = run(m, in, &op, name);
	assert_non_null(ea);
	assert_non_null(ep);
	for (out = 0; out < usc_eval_output_count(er); out++) {
		const usc_tensor *rt, *pt;
		uint64_t n;

		assert_int_equal(usc_eval_output(er, out, &rt, &err), USC_OK);
		assert_int_equal(usc_eval_output(ep, out, &pt, &err), USC_OK);
		n = usc_tensor_count(rt);
		for (i = 0; i < n; i++) {
			usc_dtype t;
			uint64_t rb, pb, rep;
			usc__envelope_elem e = elem(ee, out, i, &t, &rep);
			usc__envelope_elem ea_e;
			double d;

			usc_tensor_get_bits(rt, i, &rb);
			usc_tensor_get_bits(pt, i, &pb);
			ty->elems++;
			if (e.flags & USC__ENV_UNKNOWN) {
				ty->unknown++;
				continue;
			}
			if (!usc_dtype_is_float(t)) {
				if (e.flags == USC__ENV_FINITE && rep == rb)
					ty->points++;
				else
					printf("  %s out %zu [%zu] int not a "
					       "point\n",
					       name, out, (size_t)i);
				continue;
			}
			d = dec(t, rb);
			if (isnan(d) ? e.flags == USC__ENV_NAN
			    : isinf(d) ? e.flags == (d > 0 ? USC__ENV_POS_INF
							   : USC__ENV_NEG_INF)
				       : e.flags == USC__ENV_FINITE &&
						 e.lo == d && e.hi == d &&
						 rep == rb)
				ty->points++;
			else if (ty->points + 10 > ty->elems)
				printf("  %s out %zu [%zu]: ref %a, env "
				       "[%a, %a] flags %x rep %llx ref %llx\n",
				       name, out, (size_t)i, d, e.lo, e.hi,
				       e.flags, (unsigned long long)rep,
				       (unsigned long long)rb);
			if (isfinite(d) && d != 0) {
				ty->flips++;
				ty->flips_out += !usc__envelope_contains(
					&e, t, rb ^ 1);
			}
			ea_e = elem(ea, out, i, &t, &rep);
			if (!usc__envelope_contains(&ea_e, t, pb) ||
			    !usc__envelope_contains(&ea_e, t, rb)) {
				ty->outside++;
				printf("  %s out %zu [%zu]: pairwise %a "
				       "outside [%a, %a]\n",
				       name, out, (size_t)i, dec(t, pb),
				       ea_e.lo, ea_e.hi);
			}
		}
	}
	usc_eval_destroy(ea);
	usc_eval_destroy(ep);
	usc_eval_destroy(ee);
done_er:
	usc_eval_destroy(er);
	for (i = 0; i < np; i++)
		usc_tensor_destroy(in[i]);
}

/*
 * The built-in profiles' freedoms on single ops, against values computed
 * here in C from the formats' definitions.
 */
static void test_profile_freedoms(void **state)
{
	static const char *mul =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[1] parameter(0)\n"
		"  b = f32[1] parameter(1)\n"
		"  ROOT r = f32[1] multiply(a, b)\n"
		"}\n";
	static const char *bexp =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = bf16[1] parameter(0)\n"
		"  ROOT r = bf16[1] exponential(a)\n"
		"}\n";
	static const char *trip =
		"HloModule m\n"
		"ENTRY e {\n"
		"  a = f32[1] parameter(0)\n"
		"  n = bf16[1] convert(a)\n"
		"  ROOT w = f32[1] convert(n)\n"
		"}\n";
	usc_profile cpu, p;
	usc__envelope_elem e;
	usc_tensor *in[2];
	usc_error err;
	float x = 3.1f, y = 0.2467101f, prod = x * y;
	uint64_t bits;

	(void)state;
	assert_int_equal(usc_profile_builtin("xla-cpu", &cpu, &err), USC_OK);
	/*
	 * An f32 product under xla-cpu: FMA may skip its rounding, but the
	 * output rounds to f32, so the envelope is the one product C's
	 * float multiplication gives (an end rounded down once widened the
	 * envelope to the largest float).
	 */
	in[0] = vec(USC_F32, 1, (double[]){x});
	in[1] = vec(USC_F32, 1, (double[]){y});
	e = env_of(mul, in, 2, &cpu, 0);
	assert_true(e.flags & USC__ENV_FINITE);
	assert_true(e.lo == prod && e.hi == prod);
	/*
	 * bf16 exp(1) computed in f32 (compute_type f32): 6.5 ulps of f32
	 * around e stay far from a bf16 tie, so only 2.71875 (0x402E, the
	 * nearest bf16 to e) is legitimate.  Computed in bf16 with 6.5 ulps
	 * of bf16 (2^-6 at 2.7), the envelope spans codes on both sides.
	 */
	in[0] = vec(USC_BF16, 1, (double[]){1});
	e = env_of(bexp, in, 1, &cpu, 0);
	assert_true(e.lo == 2.71875 && e.hi == 2.71875);
	p = cpu;
	p.compute_type = USC_DTYPE_INVALID;
	in[0] = vec(USC_BF16, 1, (double[]){1});
	e = env_of(bexp, in, 1, &p, 0);
	assert_true(e.lo <= 2.71875 - 6 * 0x1p-6 && e.hi >= 2.71875 + 6 * 0x1p-6);
	/*
	 * 2^-70 * 2^-70 = 2^-140 is an f32 subnormal: flushed always (and
	 * no FMA to keep the product unrounded), the envelope is 0; flushing
	 * allowed, or an FMA possible, it is [0, 2^-140].
	 */
	p = cpu;
	p.fma = false;
	in[0] = vec(USC_F32, 1, (double[]){0x1p-70});
	in[1] = vec(USC_F32, 1, (double[]){0x1p-70});
	e = env_of(mul, in, 2, &p, 0);
	assert_true(e.lo == 0 && e.hi == 0);
	assert_true(e.flags & USC__ENV_FLUSHED);
	in[0] = vec(USC_F32, 1, (double[]){0x1p-70});
	in[1] = vec(USC_F32, 1, (double[]){0x1p-70});
	e = env_of(mul, in, 2, &cpu, 0);
	assert_true(e.lo == 0 && e.hi == 0x1p-140);
	p.flush_always = false;
	in[0] = vec(USC_F32, 1, (double[]){0x1p-70});
	in[1] = vec(USC_F32, 1, (double[]){0x1p-70});
	e = env_of(mul, in, 2, &p, 0);
	assert_true(e.lo == 0 && e.hi == 0x1p-140);
	/*
	 * The same bits, legitimate under one profile and a defect under
	 * another: f32 -> bf16 -> f32 of 1 + 2^-10 elided (the input comes
	 * back unrounded) is inside xla-gpu's envelope (excess precision)
	 * and outside strict's, which holds only RN_bf16(1 + 2^-10) = 1.
	 */
	assert_int_equal(usc_profile_builtin("xla-gpu", &p, &err), USC_OK);
	assert_int_equal(usc_encode_double(USC_F32, 1 + 0x1p-10, NULL, &bits,
					   NULL),
			 0);
	in[0] = vec(USC_F32, 1, (double[]){1 + 0x1p-10});
	e = env_of(trip, in, 1, &p, 0);
	assert_true(usc__envelope_contains(&e, USC_F32, bits));
	assert_int_equal(usc_profile_builtin("strict", &p, &err), USC_OK);
	in[0] = vec(USC_F32, 1, (double[]){1 + 0x1p-10});
	e = env_of(trip, in, 1, &p, 0);
	assert_false(usc__envelope_contains(&e, USC_F32, bits));
	assert_true(e.lo == 1 && e.hi == 1);
}

static void test_kernels_strict(void **state)
{
	char dir[4096], path[4600];
	struct dirent **ents;
	tally ty;
	int n, i;

	(void)state;
	memset(&ty, 0, sizeof ty);
	snprintf(dir, sizeof dir, "%s/kernels", usc_test_src_dir());
	n = scandir(dir, &ents, NULL, alphasort);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t l = strlen(nm);
		usc_hlo_file *f = NULL;
		usc_error err;

		if (l > 4 && strcmp(nm + l - 4, ".hlo") == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, nm);
			if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
				fail_msg("%s: %s", path, err.message);
			kernel_check(nm, usc_hlo_file_module(f, 0), &ty);
			usc_hlo_file_destroy(f);
		}
		free(ents[i]);
	}
	free(ents);
	printf("kernels: %zu (%zu refused), %zu elements: %zu points equal "
	       "to the reference, %zu unknown; flipped low bit outside: "
	       "%zu of %zu; reference outside a reassociating envelope: "
	       "%zu\n",
	       ty.kernels, ty.refused, ty.elems, ty.points, ty.unknown,
	       ty.flips_out, ty.flips, ty.outside);
	assert_true(ty.kernels >= 30);
	assert_int_equal(ty.refused, 0);
	assert_int_equal(ty.points, ty.elems);
	assert_int_equal(ty.flips_out, ty.flips);
	assert_int_equal(ty.outside, 0);
}

/* ---------------------------------------------- data/examples cases */

static bool is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * One captured XLA:CPU case: the device outputs must lie inside the
 * envelope of the CPU-like profile; the strict envelope must be the
 * reference's points.
 */
static void example_case(const char *cdir, tally *ty, size_t *dev_out,
			 size_t *dev_n)
{
	char path[5000];
	usc_hlo_file *f = NULL;
	usc_eval_options o = usc_eval_options_default();
	usc_eval *er = NULL, *ec, *es;
	usc_tensor *in[16];
	usc_profile p;
	usc_error err;
	size_t np, i, out;

	snprintf(path, sizeof path, "%s/kernel.hlo", cdir);
	if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
		fail_msg("%s: %s", path, err.message);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &er,
					 &err),
			 USC_OK);
	np = usc_eval_param_count(er);
	for (i = 0; i < np; i++) {
		usc_tensor_spec sp;

		assert_int_equal(usc_eval_param_spec(er, i, &sp, &err), 0);
		snprintf(path, sizeof path, "%s/input_%zu.npy", cdir, i);
		if (usc_tensor_read(path, &sp, 0, &in[i], &err) != USC_OK)
			fail_msg("%s: %s", path, err.message);
		assert_int_equal(usc_eval_bind(er, i, in[i], &err), USC_OK);
	}
	assert_int_equal(usc_eval_run(er, &err), USC_OK);
	o.domain = USC_DOMAIN_ENVELOPE;
	es = run(usc_hlo_file_module(f, 0), in, &o, cdir);
	cpu_like(&p);
	o.profile = &p;
	ec = run(usc_hlo_file_module(f, 0), in, &o, cdir);
	assert_non_null(es);
	assert_non_null(ec);
	for (out = 0; out < usc_eval_output_count(er); out++) {
		const usc_tensor *rt;
		usc_tensor *dt = NULL;
		usc_tensor_spec sp;
		size_t bad = 0, unk = 0;
		uint64_t n;

		assert_int_equal(usc_eval_output(er, out, &rt, &err), USC_OK);
		memset(&sp, 0, sizeof sp);
		sp.dtype = usc_tensor_dtype(rt);
		sp.rank = usc_tensor_rank(rt);
		sp.dims = usc_tensor_dims(rt);
		snprintf(path, sizeof path, "%s/device_%zu.npy", cdir, out);
		if (usc_tensor_read(path, &sp, 0, &dt, &err) != USC_OK)
			fail_msg("%s: %s", path, err.message);
		n = usc_tensor_count(rt);
		for (i = 0; i < n; i++) {
			usc_dtype t;
			uint64_t rb, db, rep;
			usc__envelope_elem e = elem(es, out, i, &t, &rep);
			double d;

			usc_tensor_get_bits(rt, i, &rb);
			usc_tensor_get_bits(dt, i, &db);
			d = dec(t, rb);
			ty->elems++;
			if (isnan(d) ? e.flags == USC__ENV_NAN
			    : isinf(d) ? e.flags == (d > 0 ? USC__ENV_POS_INF
							   : USC__ENV_NEG_INF)
				       : e.flags == USC__ENV_FINITE &&
						 e.lo == d && e.hi == d)
				ty->points++;
			e = elem(ec, out, i, &t, &rep);
			(*dev_n)++;
			if (e.flags & USC__ENV_UNKNOWN)
				unk++;
			if (!usc__envelope_contains(&e, t, db)) {
				if (bad < 5)
					printf("  %s out %zu [%zu]: device %a "
					       "outside [%a, %a] flags %x (ref "
					       "%a)\n",
					       cdir, out, i, dec(t, db), e.lo,
					       e.hi, e.flags, d);
				bad++;
			}
		}
		printf("%s output %zu: %zu of %llu device elements outside "
		       "the xla-cpu-like envelope, %zu unknown\n",
		       cdir, out, bad, (unsigned long long)n, unk);
		*dev_out += bad;
		usc_tensor_destroy(dt);
	}
	usc_eval_destroy(es);
	usc_eval_destroy(ec);
	usc_eval_destroy(er);
	for (i = 0; i < np; i++)
		usc_tensor_destroy(in[i]);
	usc_hlo_file_destroy(f);
}

static void test_examples(void **state)
{
	char dir[4096], kdir[4400], cdir[4800];
	struct dirent **ks;
	tally ty;
	size_t dev_out = 0, dev_n = 0;
	int nk, i;

	(void)state;
	memset(&ty, 0, sizeof ty);
	snprintf(dir, sizeof dir, "%s/data/examples", usc_test_src_dir());
	nk = scandir(dir, &ks, NULL, alphasort);
	assert_true(nk > 0);
	for (i = 0; i < nk; i++) {
		struct dirent **cs;
		int nc, j;

		snprintf(kdir, sizeof kdir, "%s/%s", dir, ks[i]->d_name);
		if (ks[i]->d_name[0] == '.' || !is_dir(kdir)) {
			free(ks[i]);
			continue;
		}
		nc = scandir(kdir, &cs, NULL, alphasort);
		for (j = 0; j < nc; j++) {
			snprintf(cdir, sizeof cdir, "%s/%s", kdir,
				 cs[j]->d_name);
			if (cs[j]->d_name[0] != '.' && is_dir(cdir))
				example_case(cdir, &ty, &dev_out, &dev_n);
			free(cs[j]);
		}
		free(cs);
		free(ks[i]);
	}
	free(ks);
	printf("examples: %zu elements, %zu strict points equal to the "
	       "reference; device outside the xla-cpu-like envelope: %zu of "
	       "%zu\n",
	       ty.elems, ty.points, dev_out, dev_n);
	assert_int_equal(ty.points, ty.elems);
	assert_int_equal(dev_out, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_bf16_add_excess),
		cmocka_unit_test(test_sum_gamma),
		cmocka_unit_test(test_tanh_range),
		cmocka_unit_test(test_accuracy_perturbed),
		cmocka_unit_test(test_truncation_outside),
		cmocka_unit_test(test_profile_freedoms),
		cmocka_unit_test(test_kernels_strict),
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
