/*
 * The audit of a pass (src/analyze/audit.c) on synthetic passes whose
 * effect is known by hand: tests/audit/pairs/NAME_before.hlo and
 * NAME_after.hlo.  Each test states the derivation of its bounds; the
 * figures come from the audit, the bounds from arithmetic on the formats
 * (u = 2^-p is the unit roundoff of a format of p significand bits, and
 * for a value v of binade [2^E, 2^(E+1)) ulp(v) = 2^(E - p + 1), so
 * |v| / ulp(v) lies in [2^(p-1), 2^p)).
 *
 * The draws are checked against their own definitions (determinism,
 * ranges, the ties of the working type) apart from the audit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/audit.h"
#include "ulpscope/profile.h"

static char before_path[1024], after_path[1024];
static usc_audit_report *r_unused;

/* Audits NAME_before.hlo -> NAME_after.hlo (swapped: the reverse pass). */
static usc_audit_report *audit(const char *name, bool swapped,
			       usc_audit_dist d, size_t samples,
			       const usc_profile *profile)
{
	const char *src = getenv("USC_SOURCE_DIR");
	usc_audit_request req = usc_audit_request_default();
	usc_audit_report *r = NULL;
	usc_error err;

	assert_non_null(src);
	snprintf(before_path, sizeof before_path,
		 "%s/tests/audit/pairs/%s_%s.hlo", src, name,
		 swapped ? "after" : "before");
	snprintf(after_path, sizeof after_path,
		 "%s/tests/audit/pairs/%s_%s.hlo", src, name,
		 swapped ? "before" : "after");
	req.before_path = before_path;
	req.after_path = after_path;
	req.dist_count = 1;
	req.dists = &d;
	req.samples = samples;
	req.seed = 11;
	req.profile = profile;
	if (usc_audit_run(&req, &r, &err) != USC_OK)
		fail_msg("audit %s: %s", name, err.message);
	assert_int_equal(r->output_count, 1);
	assert_int_equal(r->sample_count, samples);
	return r;
}

/* Every element is counted exactly once. */
static void assert_partition(const usc_audit_figures *f)
{
	assert_int_equal(f->better + f->worse + f->unchanged, f->count);
	assert_true(f->identical <= f->unchanged);
}

/*
 * A bf16 round trip elided: BEFORE computes RN_f32(RN_bf16(x) y), AFTER
 * RN_f32(x y).  The oracle does not round converts (docs/oracle.md), so
 * the function is the same.  BEFORE: |RN_bf16(x) - x| <= 2^-8 |x|, so its
 * error is at most 2^-8 |xy| / ulp(xy) + 1/2 < 2^-8 2^24 + 1/2 = 65536.5
 * ulps.  AFTER is the correctly rounded product: at most 1/2 ulp, and no
 * element can get worse (a different encoding is at least as far from
 * the exact value as the nearest one, and x y is never a tie of f32 that
 * the nearest could lose).
 */
static void test_roundtrip_elided(void **state)
{
	usc_audit_report *r = audit("roundtrip", false, USC_AUDIT_DIST_NORMAL,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_false(r->function_changed);
	assert_int_equal(f->fn_changed, 0);
	assert_partition(f);
	assert_int_equal(f->count, 512);
	assert_int_equal(f->worse, 0);
	assert_true(f->better > 0);
	assert_true(f->before.max_abs <= 65536.5);
	assert_true(f->before.max_abs > 1); /* bf16 keeps 8 of 24 bits */
	assert_true(f->after.max_abs <= 0.5);
	assert_int_equal(f->verdict, USC_AUDIT_IMPROVED);
	assert_int_equal(r->verdict, USC_AUDIT_IMPROVED);
	assert_int_equal(usc_audit_gate(r, 1.0), 0);
	for (size_t s = 0; s < r->sample_count; s++)
		assert_int_equal(r->samples[s].outputs[0].verdict,
				 USC_AUDIT_IMPROVED);
	usc_audit_report_destroy(r);
}

/* The same pass backwards, a round trip added: the mirror figures. */
static void test_roundtrip_added(void **state)
{
	usc_audit_report *r = audit("roundtrip", true, USC_AUDIT_DIST_UNIFORM,
				    1, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_false(r->function_changed);
	assert_partition(f);
	assert_int_equal(f->better, 0);
	assert_true(f->worse > 0);
	assert_true(f->before.max_abs <= 0.5);
	assert_true(f->after.max_abs <= 65536.5);
	assert_int_equal(r->verdict, USC_AUDIT_REGRESSED);
	assert_int_equal(usc_audit_gate(r, 1.0), 3);
	usc_audit_report_destroy(r);
}

/*
 * Under the xla-cpu profile, which may elide round trips
 * (docs/profiles.md), BEFORE's envelope spans both the rounded and the
 * unrounded product (so it is wider than a point almost everywhere) and
 * AFTER's is the one correctly rounded product: every known width
 * shrinks or stays, and AFTER's reference lies in BEFORE's envelope.
 */
static void test_roundtrip_envelope(void **state)
{
	usc_profile p;
	usc_error err;
	usc_audit_report *r;
	const usc_audit_figures *f;

	(void)state;
	assert_int_equal(usc_profile_resolve("xla-cpu", &p, &err), USC_OK);
	r = audit("roundtrip", false, USC_AUDIT_DIST_NORMAL, 1, &p);
	f = &r->pooled[0];
	assert_true(r->profiled);
	assert_true(f->enveloped);
	assert_true(f->env_known > 0);
	assert_int_equal(f->wider, 0);
	assert_true(f->narrower > f->env_known / 2);
	assert_true(f->width_after.max_abs <= f->width_before.max_abs);
	assert_int_equal(f->after_outside_before, 0);
	usc_audit_report_destroy(r);
}

/*
 * A row sum of 1024 terms |x|, x uniform on [-1, 1], reassociated into 32
 * sums of 32 and a sum of those.  The real function is the same.  Each
 * row's sum S is near 512 (standard deviation 9.2), and every partial sum
 * is at most S, so each addition errs by at most ulp(S) / 2:
 *   BEFORE, 1023 additions: at most 511.5 ulps;
 *   AFTER, the 32 inner sums are below 32, their 31 additions err by at
 *   most ulp(32)/2 = 2^-19 each, 992 2^-19 < 2^-9 absolute, which is at
 *   most 2^-9 / 2^-15 = 64 ulps of S >= 256 (ulp 2^-15, and ulp(S) only
 *   grows with S); the outer 31 additions at most 15.5: 79.5 in all.
 * The typical errors are far smaller: the rounding errors are nearly
 * independent, about ulp/sqrt(12) each, so BEFORE's spread is about
 * sqrt(512/12) ~ 6.5 ulps (half its additions have partial sums in S's
 * binade) and AFTER's about sqrt(16/12) ~ 1.2: the median must drop.
 */
static void test_sum_tree(void **state)
{
	usc_audit_report *r = audit("sumtree", false, USC_AUDIT_DIST_UNIFORM,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_false(r->function_changed);
	assert_partition(f);
	assert_int_equal(f->count, 128);
	assert_true(f->before.max_abs <= 511.5);
	assert_true(f->after.max_abs <= 79.5);
	assert_true(f->better > f->worse);
	assert_true(f->after.median_abs < f->before.median_abs);
	assert_true(f->before.median_abs > 1.5);
	assert_true(f->after.median_abs < 1.5);
	assert_int_equal(r->verdict, USC_AUDIT_IMPROVED);
	usc_audit_report_destroy(r);
}

/*
 * x / 3 turned into x * c with c = RN_f32(1/3) = 11184811 2^-25, so
 * 3c = 33554433 2^-25 = 1 + 2^-25: the function changed by the factor
 * (1 + 2^-25) everywhere x != 0, i.e. by 2^-25 |v| / ulp(v), which lies
 * in [2^-2, 2^-1) ulps.  BEFORE rounds x/3 correctly; x/3 sits at 0, 1/3
 * or 2/3 of an ulp, so its error is at most 1/3.  AFTER rounds a value
 * less than 1/2 ulp from x/3: at most 1/2 + 1/2 = 1 ulp, and never
 * better than the correct rounding (x/3 is never a tie).  With the
 * threshold 1 the precision is neutral and the gate passes; a gate at
 * 1/8 ulp fails on the function.
 */
static void test_div_to_reciprocal(void **state)
{
	usc_audit_report *r = audit("divconst", false, USC_AUDIT_DIST_NORMAL,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_true(r->function_changed);
	assert_int_equal(f->fn_changed, f->count);
	assert_int_equal(f->fn_special, 0);
	assert_true(f->fn_max_ulps >= 0.25 && f->fn_max_ulps < 0.5);
	assert_partition(f);
	assert_int_equal(f->better, 0);
	assert_true(f->worse > 0);
	assert_true(f->before.max_abs <= 1.0 / 3 + 1e-9);
	assert_true(f->after.max_abs <= 1.0);
	assert_int_equal(r->verdict, USC_AUDIT_NEUTRAL);
	assert_int_equal(usc_audit_gate(r, 1.0), 0);
	assert_int_equal(usc_audit_gate(r, 0.125), 4);
	usc_audit_report_destroy(r);
}

/*
 * A row sum of 64 bf16 terms |x| (x uniform on [-1, 1]) accumulated in
 * f32 and rounded once to bf16 (BEFORE), or accumulated in bf16 (AFTER).
 * The function is the same.  BEFORE: partial sums stay below 64, so the
 * f32 additions err by at most 63 ulp_f32(64)/2 = 63 2^-19 < 2^-13
 * absolute; the sum S is near 32, at least 8 (ulp_bf16 >= 2^-4): at most
 * 2^-13 / 2^-4 = 2^-9 bf16 ulps before the final rounding's 1/2.  AFTER:
 * 63 bf16 additions, each at most ulp(S)/2: 31.5 ulps.
 */
static void test_accumulation_narrowed(void **state)
{
	usc_audit_report *r = audit("narrowacc", false,
				    USC_AUDIT_DIST_UNIFORM, 2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_false(r->function_changed);
	assert_partition(f);
	assert_int_equal(f->count, 64);
	assert_true(f->before.max_abs <= 0.5 + 0x1p-9);
	assert_true(f->after.max_abs <= 31.5);
	assert_true(f->after.max_abs > 1.0);
	assert_true(f->worse > f->better);
	assert_int_equal(r->verdict, USC_AUDIT_REGRESSED);
	assert_int_equal(usc_audit_gate(r, 1.0), 3);
	usc_audit_report_destroy(r);
}

/*
 * exp(x), x uniform on [-1, 1], expanded into its Taylor polynomial of
 * degree 11 in Horner form with f32 coefficients c_k = RN(1/k!).  The
 * function changed: the truncation is at most e |x|^12 / 12! < 5.7e-9,
 * the rounded coefficients (exact for k <= 2) at most
 * 2^-24 sum_{k>=3} 1/k! < 0.22 2^-24 < 1.4e-8; against exp(x) >= 1/e, in
 * ulps (|v|/ulp(v) < 2^24): (5.7e-9 + 1.4e-8) e 2^24 < 0.9 ulp.  The
 * precision: BEFORE is correctly rounded (at most 1/2; exp(x) is never a
 * tie, so no element gets better); AFTER's 22 roundings each err by at
 * most ulp(e)/2 = 2^-22 absolute (every partial value is below e) and
 * are multiplied by |x|^j <= 1 on the way, against ulp(v) >= 2^-25:
 * 22 2^-22 / 2^-25 = 176 ulps, plus the 0.9 of the function.
 */
static void test_exp_polynomial(void **state)
{
	usc_audit_report *r = audit("exppoly", false, USC_AUDIT_DIST_UNIFORM,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_true(r->function_changed);
	assert_int_equal(f->fn_special, 0);
	assert_true(f->fn_changed > f->count / 2);
	assert_true(f->fn_max_ulps > 0 && f->fn_max_ulps < 0.9);
	assert_partition(f);
	assert_int_equal(f->better, 0);
	assert_true(f->worse > 0);
	assert_true(f->before.max_abs <= 0.5);
	assert_true(f->after.max_abs <= 176.9);
	assert_true(f->after.max_abs > 0.5);
	assert_int_equal(usc_audit_gate(r, 1.0),
			 r->verdict == USC_AUDIT_REGRESSED ? 3 : 0);
	assert_int_equal(usc_audit_gate(r, 1e-3), 4);
	usc_audit_report_destroy(r);
}

/* NaN and infinite inputs of the drawn sample k, as the audit draws it. */
static uint64_t special_inputs(size_t k)
{
	int64_t dims[1] = {512};
	usc_tensor_spec spec = {USC_F32, 1, dims, NULL};
	usc_tensor *t;
	usc_error err;
	uint64_t n = 0;

	assert_int_equal(usc_audit_draw(USC_AUDIT_DIST_SPECIALS, 11 + k, 0,
					&spec, USC_DTYPE_INVALID, &t, &err),
			 USC_OK);
	for (uint64_t j = 0; j < 512; j++) {
		double v;

		assert_int_equal(usc_tensor_get_double(t, j, &v), USC_OK);
		n += !isfinite(v);
	}
	usc_tensor_destroy(t);
	return n;
}

/*
 * x * 0 -> 0: the same real function on finite x (x 0 = 0, and -0 is 0),
 * but NaN and infinite x give NaN before and 0 after.  So the function
 * changed exactly on those inputs, all special; the precision lost
 * exactly those elements (AFTER's 0 against a NaN exact value is a NaN
 * error); the gate fails on the function (4).
 */
static void test_mul_zero(void **state)
{
	usc_audit_report *r = audit("mulzero", false, USC_AUDIT_DIST_SPECIALS,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];
	uint64_t specials = special_inputs(0) + special_inputs(1);

	(void)state;
	assert_true(specials > 0);
	assert_true(r->function_changed);
	assert_int_equal(f->fn_changed, specials);
	assert_int_equal(f->fn_special, specials);
	assert_true(isinf(f->fn_max_ulps));
	assert_partition(f);
	assert_int_equal(f->before.nan_count, 0);
	assert_int_equal(f->after.nan_count, specials);
	assert_int_equal(f->worse, specials);
	assert_int_equal(f->better, 0);
	assert_true(f->before.max_abs == 0 && f->after.max_abs == 0);
	assert_int_equal(r->verdict, USC_AUDIT_REGRESSED);
	assert_int_equal(usc_audit_gate(r, 1.0), 4);
	usc_audit_report_destroy(r);
}

/*
 * 1/10 folded into the constant c = RN_f32(0.1) = 13421773 2^-27, so
 * 10c = 1 + 2^-26: the function x/10 became x c, a change of 2^-26 |v| /
 * ulp(v), in [1/8, 1/4) ulps, on every x != 0.  The references are the
 * same (BEFORE's divide rounds to c as well), so the precision is
 * untouched: every element identical, neutral, and the gate passes at
 * 1 ulp.
 */
static void test_constant_folded(void **state)
{
	usc_audit_report *r = audit("foldconst", false, USC_AUDIT_DIST_NORMAL,
				    2, NULL);
	const usc_audit_figures *f = &r->pooled[0];

	(void)state;
	assert_true(r->function_changed);
	assert_int_equal(f->fn_changed, f->count);
	assert_true(f->fn_max_ulps >= 0.125 && f->fn_max_ulps < 0.25);
	assert_int_equal(f->identical, f->count);
	assert_int_equal(f->better + f->worse, 0);
	assert_int_equal(r->verdict, USC_AUDIT_NEUTRAL);
	assert_int_equal(usc_audit_gate(r, 1.0), 0);
	usc_audit_report_destroy(r);
}

/* ------------------------------------------------------------ op by op */

static usc_audit_report *audit_ops(const char *name, size_t ops_max)
{
	const char *src = getenv("USC_SOURCE_DIR");
	usc_audit_request req = usc_audit_request_default();
	usc_audit_dist d = USC_AUDIT_DIST_UNIFORM;
	usc_audit_report *r = NULL;
	usc_error err;

	assert_non_null(src);
	snprintf(before_path, sizeof before_path,
		 "%s/tests/audit/pairs/%s_before.hlo", src, name);
	snprintf(after_path, sizeof after_path,
		 "%s/tests/audit/pairs/%s_after.hlo", src, name);
	req.before_path = before_path;
	req.after_path = after_path;
	req.dist_count = 1;
	req.dists = &d;
	req.seed = 4;
	req.ops = true;
	req.ops_max = ops_max;
	if (usc_audit_run(&req, &r, &err) != USC_OK)
		fail_msg("audit %s: %s", name, err.message);
	return r;
}

/* The shares' magnitudes add up to 1 (or every change is 0). */
static void assert_shares(const usc_audit_report *r)
{
	double sum = 0;

	for (size_t k = 0; k < r->op_count; k++)
		sum += fabs(r->ops[k].share);
	assert_true(fabs(sum - 1) < 1e-9);
}

static const usc_audit_op *find_op(const usc_audit_report *r,
				   usc_audit_op_kind kind, const char *before)
{
	for (size_t k = 0; k < r->op_count; k++)
		if (r->ops[k].kind == kind &&
		    strncmp(r->ops[k].before, before, strlen(before)) == 0)
			return &r->ops[k];
	return NULL;
}

/*
 * The elided round trip: BEFORE's narrowing convert is the removed
 * rounding point, and it is the whole change: the multiply rounds the
 * same exact product on both sides when it alone rounds (the oracle
 * keeps the convert exact), so its change is 0 and the convert's share is
 * -100%.  Its mean contribution, a bf16 rounding seen in f32 ulps, lies
 * between 0 and 2^16 (test_roundtrip_elided's bound).
 */
static void test_ops_roundtrip(void **state)
{
	usc_audit_report *r = audit_ops("roundtrip", 0);
	const usc_audit_op *narrow =
		find_op(r, USC_AUDIT_OP_REMOVED, "narrow (convert bf16)");
	const usc_audit_op *mul = find_op(r, USC_AUDIT_OP_SAME,
					  "mul (multiply f32)");

	(void)state;
	assert_string_equal(r->ops_note, "");
	assert_non_null(narrow);
	assert_non_null(mul);
	assert_string_equal(narrow->source, "model/cast_bf16");
	assert_true(narrow->before_mean_abs > 1 &&
		    narrow->before_mean_abs < 65536);
	assert_true(narrow->after_mean_abs == 0);
	assert_true(mul->change == 0);
	assert_true(narrow->share < -1 + 1e-9);
	assert_ptr_equal(&r->ops[0], narrow);
	assert_shares(r);
	usc_audit_report_destroy(r);
}

/*
 * The narrowed accumulation: the reduce is the same rounding point, now
 * rounding to bf16 (retyped), and the convert back to bf16 is gone.  In
 * f32 the sum's own rounding is below 2^-9 bf16 ulps (the bound of
 * test_accumulation_narrowed), so its change is positive and the biggest;
 * the removed convert contributed a correct rounding, at most 1/2.
 */
static void test_ops_narrowed(void **state)
{
	usc_audit_report *r = audit_ops("narrowacc", 0);
	const usc_audit_op *sum = find_op(r, USC_AUDIT_OP_RETYPED,
					  "sum (reduce f32)");
	const usc_audit_op *out = find_op(r, USC_AUDIT_OP_REMOVED,
					  "out (convert bf16)");

	(void)state;
	assert_non_null(sum);
	assert_non_null(out);
	assert_string_equal(sum->after, "sum (reduce bf16)");
	assert_true(sum->before_mean_abs <= 0x1p-9);
	assert_true(sum->change > 0 && sum->share > 0.5);
	assert_true(out->change < 0 && out->before_mean_abs <= 0.5);
	assert_ptr_equal(&r->ops[0], sum);
	assert_shares(r);
	usc_audit_report_destroy(r);
}

/*
 * exp expanded: BEFORE's exponential is replaced by AFTER's 11 multiplies
 * and 11 adds, all of the same source op; nothing else is added.
 */
static void test_ops_expanded(void **state)
{
	usc_audit_report *r = audit_ops("exppoly", 0);
	size_t replacing = 0, other = 0;

	(void)state;
	assert_non_null(find_op(r, USC_AUDIT_OP_REPLACED,
				"e (exponential f32)"));
	for (size_t k = 0; k < r->op_count; k++) {
		if (r->ops[k].kind == USC_AUDIT_OP_REPLACING) {
			replacing++;
			assert_string_equal(r->ops[k].source, "model/exp");
		} else if (r->ops[k].kind != USC_AUDIT_OP_REPLACED) {
			other++;
		}
	}
	assert_int_equal(replacing, 22);
	assert_int_equal(other, 0);
	assert_shares(r);
	usc_audit_report_destroy(r);

	/* More rounding ops than allowed: no view, a note, no failure. */
	r = audit_ops("exppoly", 5);
	assert_int_equal(r->op_count, 0);
	assert_non_null(strstr(r->ops_note, "exppoly_after.hlo"));
	usc_audit_report_destroy(r);
}

/*
 * The reassociated sum: one rounding point, split into two reduces (they
 * share their body, so the attribution takes them together), whose
 * contribution shrinks (test_sum_tree).
 */
static void test_ops_split(void **state)
{
	usc_audit_report *r = audit_ops("sumtree", 0);

	(void)state;
	assert_int_equal(r->op_count, 1);
	assert_int_equal(r->ops[0].kind, USC_AUDIT_OP_SPLIT);
	assert_string_equal(r->ops[0].after, "partial+sum (reduce f32)");
	assert_true(r->ops[0].change < 0);
	usc_audit_report_destroy(r);
}

/* ------------------------------------------------------------ draws */

static usc_tensor *draw(usc_audit_dist d, uint64_t seed, uint64_t stream,
			usc_dtype t, usc_dtype working, int64_t n)
{
	int64_t dims[1] = {n};
	usc_tensor_spec spec = {t, 1, dims, NULL};
	usc_tensor *out;
	usc_error err;

	if (usc_audit_draw(d, seed, stream, &spec, working, &out, &err) !=
	    USC_OK)
		fail_msg("draw %s of %s (working %s): %s", usc_audit_dist_name(d),
			 usc_dtype_name(t), usc_dtype_name(working),
			 err.message);
	return out;
}

/* The same triple, the same tensor; another seed or stream, another. */
static void test_draw_reproducible(void **state)
{
	(void)state;
	for (int d = 0; d < USC_AUDIT_DIST_COUNT; d++) {
		usc_tensor *a = draw((usc_audit_dist)d, 5, 1, USC_F32,
				     USC_BF16, 256);
		usc_tensor *b = draw((usc_audit_dist)d, 5, 1, USC_F32,
				     USC_BF16, 256);
		usc_tensor *c = draw((usc_audit_dist)d, 6, 1, USC_F32,
				     USC_BF16, 256);
		usc_tensor *e = draw((usc_audit_dist)d, 5, 2, USC_F32,
				     USC_BF16, 256);

		assert_true(usc_tensor_equal(a, b));
		assert_false(usc_tensor_equal(a, c));
		assert_false(usc_tensor_equal(a, e));
		usc_tensor_destroy(a);
		usc_tensor_destroy(b);
		usc_tensor_destroy(c);
		usc_tensor_destroy(e);
	}
}

/*
 * Every distribution draws every element type a parameter can have (the
 * narrow formats have one or two binades, no subnormals or no mantissa),
 * with every floating type as the working type, and a value of the
 * tensor's type always: finite unless the distribution asks for specials.
 */
static void test_draw_all_types(void **state)
{
	(void)state;
	for (int d = 0; d < USC_AUDIT_DIST_COUNT; d++)
		for (int t = 1; t < USC_DTYPE_COUNT; t++) {
			usc_dtype dt = (usc_dtype)t;

			if (!usc_dtype_is_float(dt) &&
			    !usc_dtype_is_integer(dt) && dt != USC_PRED)
				continue;
			for (int w = 1; w < USC_DTYPE_COUNT; w++) {
				usc_tensor *x;

				if (!usc_dtype_is_float((usc_dtype)w))
					continue;
				x = draw((usc_audit_dist)d, 9, 0, dt,
					 (usc_dtype)w, 64);
				usc_tensor_destroy(x);
			}
		}
}

/*
 * Each distribution against its definition: f32 ties of bf16 are f32
 * values whose low 16 bits are 0x8000 (exactly half a bf16 ulp), three
 * quarters of them; denormals of f32 are below 2^-126, three quarters;
 * near-overflow within [log(max) - 4, log(max) + 1/2]; near-cancellation
 * gives two parameters within 8 ulps of the same base in magnitude, each
 * then rounded to f32 (half an ulp more each): within 10 ulps.
 */
static void test_draw_definitions(void **state)
{
	usc_tensor *t;
	uint64_t ties = 0, subs = 0;
	const double lmax = log(0x1.fffffep127);

	(void)state;
	t = draw(USC_AUDIT_DIST_TIES, 1, 0, USC_F32, USC_BF16, 4096);
	for (uint64_t j = 0; j < 4096; j++) {
		uint64_t bits;

		assert_int_equal(usc_tensor_get_bits(t, j, &bits), USC_OK);
		ties += (bits & 0xffff) == 0x8000;
	}
	usc_tensor_destroy(t);
	assert_true(ties > 4096 * 0.70 && ties < 4096 * 0.80);

	t = draw(USC_AUDIT_DIST_DENORMAL, 1, 0, USC_F32, USC_F32, 4096);
	for (uint64_t j = 0; j < 4096; j++) {
		double v;

		assert_int_equal(usc_tensor_get_double(t, j, &v), USC_OK);
		assert_true(v != 0 && fabs(v) < 0x1p-124);
		subs += fabs(v) < 0x1p-126;
	}
	usc_tensor_destroy(t);
	assert_true(subs > 4096 * 0.70 && subs < 4096 * 0.80);

	t = draw(USC_AUDIT_DIST_OVERFLOW, 1, 0, USC_F32, USC_F32, 1024);
	for (uint64_t j = 0; j < 1024; j++) {
		double v;

		assert_int_equal(usc_tensor_get_double(t, j, &v), USC_OK);
		assert_true(v >= lmax - 4 - 1e-5 && v <= lmax + 0.5 + 1e-5);
	}
	usc_tensor_destroy(t);

	{
		usc_tensor *a = draw(USC_AUDIT_DIST_CANCEL, 3, 0, USC_F32,
				     USC_F32, 512);
		usc_tensor *b = draw(USC_AUDIT_DIST_CANCEL, 3, 1, USC_F32,
				     USC_F32, 512);

		for (uint64_t j = 0; j < 512; j++) {
			double x, y;

			assert_int_equal(usc_tensor_get_double(a, j, &x),
					 USC_OK);
			assert_int_equal(usc_tensor_get_double(b, j, &y),
					 USC_OK);
			assert_true(fabs(fabs(x) - fabs(y)) <=
				    10 * 0x1p-23 * fmax(fabs(x), fabs(y)));
		}
		usc_tensor_destroy(a);
		usc_tensor_destroy(b);
	}
}

/*
 * Inputs from files are a sample like a drawn one: the two tensors the
 * audit draws for sample normal/0 (seed 11, streams 0 and 1), written to
 * .npy files and given as inputs, give the same figures.
 */
static void test_input_files(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char dir[] = "/tmp/usc_audit_XXXXXX", p0[64], p1[64];
	const char *inputs[2] = {p0, p1};
	usc_audit_request req = usc_audit_request_default();
	usc_audit_report *drawn, *read = NULL;
	usc_error err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p0, sizeof p0, "%s/x.npy", dir);
	snprintf(p1, sizeof p1, "%s/y.npy", dir);
	for (int i = 0; i < 2; i++) {
		usc_tensor *t = draw(USC_AUDIT_DIST_NORMAL, 11, (uint64_t)i,
				     USC_F32, USC_BF16, 256);

		assert_int_equal(usc_tensor_write_npy(t, inputs[i], &err),
				 USC_OK);
		usc_tensor_destroy(t);
	}
	drawn = audit("roundtrip", false, USC_AUDIT_DIST_NORMAL, 1, NULL);
	req.before_path = before_path;
	req.after_path = after_path;
	req.input_count = 2;
	req.inputs = inputs;
	assert_non_null(src);
	if (usc_audit_run(&req, &read, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_string_equal(read->samples[0].label, "inputs");
	assert_int_equal(read->pooled[0].better, drawn->pooled[0].better);
	assert_int_equal(read->pooled[0].identical,
			 drawn->pooled[0].identical);
	assert_true(read->pooled[0].before.max_abs ==
		    drawn->pooled[0].before.max_abs);
	assert_true(read->pooled[0].after.median_abs ==
		    drawn->pooled[0].after.median_abs);
	/* One input too few: the count is named. */
	req.input_count = 1;
	assert_int_equal(usc_audit_run(&req, &r_unused, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "the module has 2 parameters, 1 "
					    "input was given"));
	usc_audit_report_destroy(drawn);
	usc_audit_report_destroy(read);
	remove(p0);
	remove(p1);
	rmdir(dir);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	usc_audit_request req = usc_audit_request_default();
	usc_audit_dist d = USC_AUDIT_DIST_NORMAL;
	usc_audit_report *r = NULL;
	usc_error err;
	char b[1024], a[1024];

	(void)state;
	snprintf(b, sizeof b, "%s/tests/audit/pairs/roundtrip_before.hlo",
		 src);
	snprintf(a, sizeof a, "%s/tests/audit/pairs/divconst_after.hlo", src);
	req.before_path = b;
	req.after_path = a;
	/* Neither inputs nor distributions. */
	assert_int_equal(usc_audit_run(&req, &r, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "no inputs"));
	/* Different programs: the parameters differ. */
	req.dist_count = 1;
	req.dists = &d;
	assert_int_equal(usc_audit_run(&req, &r, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "divconst_after.hlo: 1 parameter, "
					    "but"));
	assert_null(r);
	/* A file that is not there. */
	snprintf(a, sizeof a, "%s/tests/audit/pairs/nosuch.hlo", src);
	assert_int_not_equal(usc_audit_run(&req, &r, &err), USC_OK);
	assert_non_null(strstr(err.message, "nosuch.hlo"));
	/* Names of distributions. */
	assert_int_equal(usc_audit_dist_from_name("gauss", 5, &d, &err),
			 USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "unknown distribution 'gauss' "
					    "(one of normal, uniform"));
	assert_int_equal(usc_audit_dist_from_name("cancel,x", 6, &d, &err),
			 USC_OK);
	assert_int_equal(d, USC_AUDIT_DIST_CANCEL);
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_elided),
		cmocka_unit_test(test_roundtrip_added),
		cmocka_unit_test(test_roundtrip_envelope),
		cmocka_unit_test(test_sum_tree),
		cmocka_unit_test(test_div_to_reciprocal),
		cmocka_unit_test(test_accumulation_narrowed),
		cmocka_unit_test(test_exp_polynomial),
		cmocka_unit_test(test_mul_zero),
		cmocka_unit_test(test_constant_folded),
		cmocka_unit_test(test_ops_roundtrip),
		cmocka_unit_test(test_ops_narrowed),
		cmocka_unit_test(test_ops_expanded),
		cmocka_unit_test(test_ops_split),
		cmocka_unit_test(test_draw_reproducible),
		cmocka_unit_test(test_draw_all_types),
		cmocka_unit_test(test_draw_definitions),
		cmocka_unit_test(test_input_files),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
