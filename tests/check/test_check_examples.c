/*
 * ulpscope check on every captured XLA:CPU case under data/examples/.
 *
 * Every case must check completely: no undecided element at the default
 * precision cap, summary figures that agree with a recount from the
 * per-element arrays, and a worst list that starts at the maximum.  One
 * fact about XLA:CPU is known independently of ulpscope: its f32 to
 * f8e4m3fn convert rounds to nearest-even exactly (the capture checked it
 * against ml_dtypes on exact ties), and the quantize kernel's other ops
 * are f32 ops that a strict implementation rounds the same way, so the
 * fp8 quantize cases must be bit-identical to the reference.  The figures
 * of each case are printed for docs/check.md.  Each case also runs with
 * the f64 tier switched off: the tier's enclosures must contain the MPFR
 * oracle's, and the number of elements the tier escalated is printed.
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

#include "ulpscope/check.h"

#include "check/examples_walk.h"


static void check_consistency(const usc_check_output *o)
{
	uint64_t n = usc_tensor_count(o->device), exact = 0;
	usc_results_stats s;
	usc_error err;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t a, b;

		usc_tensor_get_bits(o->device, k, &a);
		usc_tensor_get_bits(o->reference, k, &b);
		exact += a == b;
	}
	assert_int_equal(exact, o->summary.bit_exact_count);
	assert_int_equal(usc_results_stats_compute(o->ulp_oracle, n, &s, &err),
			 USC_OK);
	assert_memory_equal(&s, &o->summary.oracle, sizeof s);
	assert_int_equal(usc_results_stats_compute(o->ulp_reference, n, &s,
						   &err),
			 USC_OK);
	assert_memory_equal(&s, &o->summary.reference, sizeof s);
	if (!o->cls) {
		if (o->worst_count && !isnan(o->worst[0].ulp_oracle))
			assert_true(fabs(o->worst[0].ulp_oracle) ==
				    o->summary.oracle.max_abs);
		return;
	}
	/*
	 * Classified (case.json says platform cpu): the counts cover every
	 * element, and none of this real XLA:CPU output is a defect.
	 */
	{
		uint64_t total = 0;

		for (int c = 0; c < USC_CLASS_COUNT; c++)
			total += o->counts.n[c];
		assert_int_equal(total, n);
		assert_int_equal(o->counts.n[USC_CLASS_DEFECT], 0);
		assert_int_equal(o->counts.n[USC_CLASS_NAN_MISMATCH], 0);
		assert_int_equal(o->counts.n[USC_CLASS_INF_MISMATCH], 0);
		assert_int_equal(o->counts.n[USC_CLASS_SIGN_MISMATCH], 0);
		assert_int_equal(o->counts.n[USC_CLASS_EXACT], exact);
	}
}

/*
 * The two tiers on the same case: every element the f64 tier decided has
 * an enclosure that contains the MPFR oracle's (computed with the tier
 * switched off), and both place the device's error within 1/8 ulp of the
 * truth, so their figures differ by at most 1/4 ulp.  Returns how many
 * elements the tier left to the oracle.
 */
static uint64_t check_tiers_agree(const char *cdir, const usc_check_report *a)
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *b = NULL;
	uint64_t escalated = 0;
	usc_error err;

	req.strict_oracle = true;
	if (usc_check_case(cdir, &req, &b, &err) != USC_OK)
		fail_msg("%s (strict): %s", cdir, err.message);
	for (size_t i = 0; i < a->output_count; i++) {
		const usc_check_output *ta = &a->outputs[i], *ob = &b->outputs[i];
		uint64_t n = usc_tensor_count(ta->device), tier = 0;

		for (uint64_t k = 0; k < n; k++) {
			double lo, hi, olo, ohi;

			if (isnan(ta->oracle_mid[k]) || isinf(ta->oracle_mid[k]))
				continue;
			lo = ta->oracle_mid[k] - ta->oracle_rad[k];
			hi = ta->oracle_mid[k] + ta->oracle_rad[k];
			olo = ob->oracle_mid[k] - ob->oracle_rad[k];
			ohi = ob->oracle_mid[k] + ob->oracle_rad[k];
			/* Widen by the rounding of the four sums above. */
			lo -= fabs(lo) * 0x1p-51;
			hi += fabs(hi) * 0x1p-51;
			olo += fabs(olo) * 0x1p-51;
			ohi -= fabs(ohi) * 0x1p-51;
			if (!(lo <= olo && ohi <= hi))
				fail_msg("%s output %zu element %llu: tier "
					 "[%a, %a] does not contain the "
					 "oracle's [%a, %a]",
					 cdir, i, (unsigned long long)k, lo, hi,
					 olo, ohi);
			if (!ob->undecided[k] && !ta->undecided[k] &&
			    !isnan(ta->ulp_oracle[k]) &&
			    fabs(ta->ulp_oracle[k] - ob->ulp_oracle[k]) > 0.25)
				fail_msg("%s output %zu element %llu: tier says "
					 "%g ulp, oracle %g",
					 cdir, i, (unsigned long long)k,
					 ta->ulp_oracle[k], ob->ulp_oracle[k]);
		}
		tier = ta->tier_decided;
		escalated += n - tier;
	}
	usc_check_report_destroy(b);
	return escalated;
}

/* One captured case: its check, figures and tiers. */
static void one_case(const char *cdir, const char *kernel, const char *name,
		     void *ctx)
{
	usc_check_report *r = NULL;
	usc_error err;

	(void)ctx;
	if (usc_check_case(cdir, NULL, &r, &err) != USC_OK)
		fail_msg("%s: %s", cdir, err.message);
	/* case.json's platform picks the profile. */
	assert_true(r->classified);
	assert_string_equal(r->profile.name, "xla-cpu");
	assert_int_not_equal(r->verdict, USC_VERDICT_DEFECT);
	printf("%-24s %-12s %s\n", kernel, name, r->reason);
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];

		printf("%-24s %-12s out %zu: %5llu elements, "
		       "max|ulp| oracle %-9.4g reference %-9.4g "
		       "bit-exact %llu\n",
		       kernel, name, i, (unsigned long long)o->summary.count,
		       o->summary.oracle.max_abs, o->summary.reference.max_abs,
		       (unsigned long long)o->summary.bit_exact_count);
		assert_int_equal(o->summary.undecided_count, 0);
		check_consistency(o);
		if (strncmp(kernel, "fp8_quantize", 12) == 0)
			assert_int_equal(o->summary.bit_exact_count,
					 o->summary.count);
	}
	printf("%-24s %-12s escalated to the oracle: %llu\n", kernel, name,
	       (unsigned long long)check_tiers_agree(cdir, r));
	usc_check_report_destroy(r);
}

static void test_examples(void **state)
{
	size_t cases;

	(void)state;
	cases = for_each_example(one_case, NULL);
	printf("%zu cases checked\n", cases);
	assert_true(cases >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
