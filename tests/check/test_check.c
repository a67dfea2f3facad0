/*
 * ulpscope check: the comparison of a device output with the oracle and
 * the reference, on kernels whose answers are known without the code
 * under test.
 *
 * exp(x) in f32 for x = k/8: the device files are made from the
 * reference's encodings (test_eval_reference checks those against MPFR);
 * here the point is the comparison.  A device equal to the reference is bit-exact everywhere and
 * within half an ulp of the oracle (a correctly rounded result is); a
 * device one code above it in one element shows +1 ulp against the
 * reference there, an error against the oracle in (0.5, 1.5], and heads
 * the worst list.  Errors of the inputs name the file and the parameter.
 *
 * exp(x) * exp(-x) over 4 tiles of 4096 elements is 1 exactly; where
 * x = 1000 the f64 tier overflows and leaves the element undecided, and
 * the oracle evaluates only the tiles that hold those elements, with the
 * results it gives when it evaluates the whole kernel.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "ulpscope/check.h"

#define N 64

static char dir[256];
static char hlo[300], in0[300], dev0[300], dev_bad[300];

static const char kernel[] =
	"HloModule exp_kernel\n"
	"\n"
	"ENTRY e {\n"
	"  x = f32[8,8]{1,0} parameter(0)\n"
	"  ROOT y = f32[8,8]{1,0} exponential(x)\n"
	"}\n";

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	static const int64_t dims[2] = {8, 8}, bad_dims[1] = {64};
	usc_tensor *x = NULL, *bad = NULL;
	usc_error err;

	(void)state;
	snprintf(dir, sizeof dir, "/tmp/usc_check_test_%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0)
		return -1;
	snprintf(hlo, sizeof hlo, "%s/kernel.hlo", dir);
	snprintf(in0, sizeof in0, "%s/input_0.npy", dir);
	snprintf(dev0, sizeof dev0, "%s/device_0.npy", dir);
	snprintf(dev_bad, sizeof dev_bad, "%s/bad.npy", dir);
	write_text(hlo, kernel);
	if (usc_tensor_create(USC_F32, 2, dims, &x, &err) != USC_OK)
		return -1;
	for (int k = 0; k < N; k++) {
		float v = (float)(k - 32) / 8; /* exact in f32 */
		uint32_t b;

		memcpy(&b, &v, sizeof b);
		usc_tensor_set_bits(x, (uint64_t)k, b);
	}
	if (usc_tensor_write_npy(x, in0, &err) != USC_OK)
		return -1;
	if (usc_tensor_create(USC_F32, 1, bad_dims, &bad, &err) != USC_OK ||
	    usc_tensor_write_npy(bad, dev_bad, &err) != USC_OK)
		return -1;
	usc_tensor_destroy(x);
	usc_tensor_destroy(bad);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Runs the reference alone to make a device file from its output. */
static void write_device(int bump_index)
{
	usc_check_request req = usc_check_request_default();
	const char *inputs[1] = {in0}, *devs[1] = {in0};
	usc_check_report *r = NULL;
	usc_tensor *t = NULL;
	usc_error err;
	uint64_t b;

	/* Any f32[8,8] will do as the device for this first run. */
	req.hlo_path = hlo;
	req.input_count = 1;
	req.inputs = inputs;
	req.device_count = 1;
	req.devices = devs;
	assert_int_equal(usc_check_run(&req, &r, &err), USC_OK);
	t = r->outputs[0].reference;
	r->outputs[0].reference = NULL;
	usc_check_report_destroy(r);
	if (bump_index >= 0) {
		usc_tensor_get_bits(t, (uint64_t)bump_index, &b);
		usc_tensor_set_bits(t, (uint64_t)bump_index, b + 1);
	}
	assert_int_equal(usc_tensor_write_npy(t, dev0, &err), USC_OK);
	usc_tensor_destroy(t);
}

static usc_check_report *run(usc_status want, usc_error *err)
{
	usc_check_request req = usc_check_request_default();
	const char *inputs[1] = {in0}, *devs[1] = {dev0};
	usc_check_report *r = NULL;

	req.hlo_path = hlo;
	req.input_count = 1;
	req.inputs = inputs;
	req.device_count = 1;
	req.devices = devs;
	assert_int_equal(usc_check_run(&req, &r, err), want);
	return r;
}

static void test_device_equals_reference(void **state)
{
	usc_check_report *r;
	usc_error err;

	(void)state;
	write_device(-1);
	r = run(USC_OK, &err);
	assert_int_equal(r->output_count, 1);
	assert_int_equal(r->outputs[0].summary.count, N);
	assert_int_equal(r->outputs[0].summary.bit_exact_count, N);
	assert_int_equal(r->outputs[0].summary.undecided_count, 0);
	assert_true(r->outputs[0].summary.reference.max_abs == 0);
	/* Correctly rounded: within half an ulp of the exact value. */
	assert_true(r->outputs[0].summary.oracle.max_abs <= 0.5);
	for (int k = 0; k < N; k++) {
		double x = (double)(k - 32) / 8, mid = r->outputs[0].oracle_mid[k];

		/* The enclosure's midpoint is exp(x) to double precision. */
		assert_true(fabs(mid - exp(x)) <= 4 * exp(x) * 0x1p-52);
	}
	usc_check_report_destroy(r);
}

static void test_one_element_off(void **state)
{
	usc_check_report *r;
	usc_error err;
	const usc_check_element *w;

	(void)state;
	write_device(37);
	r = run(USC_OK, &err);
	assert_int_equal(r->outputs[0].summary.bit_exact_count, N - 1);
	assert_true(r->outputs[0].ulp_reference[37] == 1);
	assert_true(r->outputs[0].ulp_oracle[37] > 0.5 &&
		    r->outputs[0].ulp_oracle[37] <= 1.5);
	assert_true(r->outputs[0].worst_count >= 1);
	w = &r->outputs[0].worst[0];
	assert_int_equal(w->index, 37);
	assert_true(w->ulp_reference == 1);
	assert_true(r->outputs[0].summary.reference.max_abs == 1);
	usc_check_report_destroy(r);
}

static void test_bad_inputs(void **state)
{
	usc_check_request req = usc_check_request_default();
	const char *inputs[2] = {in0, in0}, *devs[1] = {dev_bad};
	usc_check_report *r = NULL;
	usc_error err;
	char want[600];

	(void)state;
	req.hlo_path = hlo;
	req.input_count = 2;
	req.inputs = inputs;
	req.device_count = 1;
	req.devices = devs;
	assert_int_equal(usc_check_run(&req, &r, &err), USC_EINVAL);
	snprintf(want, sizeof want,
		 "%s: the kernel has 1 parameter, 2 inputs were given", hlo);
	assert_string_equal(err.message, want);
	assert_null(r);

	req.input_count = 1;
	assert_int_equal(usc_check_run(&req, &r, &err), USC_EINVAL);
	snprintf(want, sizeof want,
		 "%s: shape (64,) does not match output 0 of the kernel, "
		 "f32[8,8]",
		 dev_bad);
	assert_string_equal(err.message, want);

	req.device_count = 0;
	assert_int_equal(usc_check_run(&req, &r, &err), USC_EINVAL);
	snprintf(want, sizeof want,
		 "%s: the kernel has 1 output, 0 device files were given",
		 hlo);
	assert_string_equal(err.message, want);

	assert_int_equal(usc_check_case("/nonexistent", NULL, &r, &err),
			 USC_EIO);
	assert_string_equal(err.message,
			    "/nonexistent: not a case directory: no kernel.hlo "
			    "(see docs/cases.md)");
}

static void test_case_dir_and_results(void **state)
{
	usc_check_report *r = NULL;
	usc_results_reader *rd = NULL;
	usc_results_output_data *od = NULL;
	usc_error err;
	char h5[320];

	(void)state;
	write_device(5);
	/* The bad device file must not be taken: only device_<i>.npy. */
	assert_int_equal(usc_check_case(dir, NULL, &r, &err), USC_OK);
	assert_int_equal(r->outputs[0].summary.bit_exact_count, N - 1);
	snprintf(h5, sizeof h5, "%s/results.h5", dir);
	assert_int_equal(usc_check_write(r, h5, false, &err), USC_OK);
	assert_int_equal(usc_results_open(h5, &rd, &err), USC_OK);
	assert_int_equal(usc_results_kernel_count(rd), 1);
	assert_string_equal(usc_results_kernel_name(rd, 0), "exp_kernel");
	assert_int_equal(usc_results_read_output(rd, "exp_kernel", 0, &od,
						 &err),
			 USC_OK);
	assert_int_equal(od->summary.bit_exact_count, N - 1);
	assert_true(od->ulp_error_reference[5] == 1);
	assert_true(memcmp(od->oracle_mid, r->outputs[0].oracle_mid,
			   N * sizeof(double)) == 0);
	usc_results_output_data_free(od);
	usc_results_reader_close(rd);
	usc_check_report_destroy(r);
}

/*
 * --fusion: the kernel is one fusion of a bigger module, isolated, and the
 * inputs are the fusion's operands (here the row maxima that another
 * fusion would compute).  exp(x - m) with x = m exactly gives exp(0) = 1
 * in every element: the reference, the oracle and a device of ones agree.
 */
static void test_fusion(void **state)
{
	static const char prog[] =
		"HloModule prog\n"
		"\n"
		"fused_exp {\n"
		"  p0 = f32[2,3]{1,0} parameter(0)\n"
		"  p1 = f32[2]{0} parameter(1)\n"
		"  b = f32[2,3]{1,0} broadcast(p1), dimensions={0}\n"
		"  d = f32[2,3]{1,0} subtract(p0, b)\n"
		"  ROOT e = f32[2,3]{1,0} exponential(d)\n"
		"}\n"
		"\n"
		"max_f32 {\n"
		"  a = f32[] parameter(0)\n"
		"  c = f32[] parameter(1)\n"
		"  ROOT m = f32[] maximum(a, c)\n"
		"}\n"
		"\n"
		"ENTRY main {\n"
		"  x = f32[2,3]{1,0} parameter(0)\n"
		"  init = f32[] constant(-inf)\n"
		"  rmax = f32[2]{0} reduce(x, init), dimensions={1}, "
		"to_apply=max_f32\n"
		"  ROOT y = f32[2,3]{1,0} fusion(x, rmax), kind=kLoop, "
		"calls=fused_exp\n"
		"}\n";
	static const int64_t xd[2] = {2, 3}, md[1] = {2};
	char prog_path[320], x_path[320], m_path[320], y_path[320];
	const char *inputs[2] = {x_path, m_path}, *devs[1] = {y_path};
	usc_check_request req = usc_check_request_default();
	usc_tensor *x = NULL, *m = NULL, *y = NULL;
	usc_check_report *r = NULL;
	usc_error err;

	(void)state;
	snprintf(prog_path, sizeof prog_path, "%s/prog.hlo", dir);
	snprintf(x_path, sizeof x_path, "%s/fx.npy", dir);
	snprintf(m_path, sizeof m_path, "%s/fm.npy", dir);
	snprintf(y_path, sizeof y_path, "%s/fy.npy", dir);
	write_text(prog_path, prog);
	assert_int_equal(usc_tensor_create(USC_F32, 2, xd, &x, &err), USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 1, md, &m, &err), USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 2, xd, &y, &err), USC_OK);
	for (uint64_t k = 0; k < 6; k++) {
		/* x = 2.5 everywhere, m = 2.5: exp(0) = 1 = 0x3f800000. */
		usc_tensor_set_bits(x, k, 0x40200000u);
		usc_tensor_set_bits(y, k, 0x3f800000u);
	}
	usc_tensor_set_bits(m, 0, 0x40200000u);
	usc_tensor_set_bits(m, 1, 0x40200000u);
	assert_int_equal(usc_tensor_write_npy(x, x_path, &err), USC_OK);
	assert_int_equal(usc_tensor_write_npy(m, m_path, &err), USC_OK);
	assert_int_equal(usc_tensor_write_npy(y, y_path, &err), USC_OK);
	req.hlo_path = prog_path;
	req.fusion = "y";
	req.input_count = 2;
	req.inputs = inputs;
	req.device_count = 1;
	req.devices = devs;
	assert_int_equal(usc_check_run(&req, &r, &err), USC_OK);
	assert_string_equal(r->fusion, "y");
	assert_int_equal(r->outputs[0].summary.bit_exact_count, 6);
	assert_true(r->outputs[0].summary.oracle.max_abs == 0);
	usc_check_report_destroy(r);

	/* The fused computation's name works too; an unknown name fails. */
	req.fusion = "fused_exp";
	assert_int_equal(usc_check_run(&req, &r, &err), USC_OK);
	usc_check_report_destroy(r);
	req.fusion = "nope";
	assert_int_equal(usc_check_run(&req, &r, &err), USC_ENOTFOUND);
	assert_null(r);
	usc_tensor_destroy(x);
	usc_tensor_destroy(m);
	usc_tensor_destroy(y);
}

#define BIG 16384 /* four tiles of USC_EVAL_TILE_DEFAULT */

static usc_check_report *run_big(const char *path, const char *x_path,
				 const char *y_path, bool strict)
{
	usc_check_request req = usc_check_request_default();
	const char *inputs[1] = {x_path}, *devs[1] = {y_path};
	usc_check_report *r = NULL;
	usc_error err;

	req.hlo_path = path;
	req.input_count = 1;
	req.inputs = inputs;
	req.device_count = 1;
	req.devices = devs;
	req.strict_oracle = strict;
	if (usc_check_run(&req, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	return r;
}

static void test_escalation_tiles(void **state)
{
	static const char prog[] =
		"HloModule cancel\n"
		"\n"
		"fused {\n"
		"  p = f32[16384]{0} parameter(0)\n"
		"  e = f32[16384]{0} exponential(p)\n"
		"  n = f32[16384]{0} negate(p)\n"
		"  en = f32[16384]{0} exponential(n)\n"
		"  ROOT y = f32[16384]{0} multiply(e, en)\n"
		"}\n"
		"\n"
		"ENTRY main {\n"
		"  x = f32[16384]{0} parameter(0)\n"
		"  ROOT f = f32[16384]{0} fusion(x), kind=kLoop, calls=fused\n"
		"}\n";
	static const int64_t dims[1] = {BIG};
	static const uint64_t hard[2] = {100, 9000}; /* tiles 0 and 2 */
	char path[320], x_path[320], y_path[320];
	usc_tensor *x = NULL, *y = NULL;
	usc_check_report *r, *strict;
	const usc_check_output *o, *so;
	usc_error err;

	(void)state;
	snprintf(path, sizeof path, "%s/cancel.hlo", dir);
	snprintf(x_path, sizeof x_path, "%s/cx.npy", dir);
	snprintf(y_path, sizeof y_path, "%s/cy.npy", dir);
	write_text(path, prog);
	assert_int_equal(usc_tensor_create(USC_F32, 1, dims, &x, &err), USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 1, dims, &y, &err), USC_OK);
	for (uint64_t k = 0; k < BIG; k++) {
		float v = (float)((double)(k % 64) / 8 - 4); /* exact */
		uint32_t b;

		if (k == hard[0] || k == hard[1])
			v = 1000; /* exp(1000) overflows a double */
		memcpy(&b, &v, sizeof b);
		usc_tensor_set_bits(x, k, b);
		usc_tensor_set_bits(y, k, 0x3f800000u); /* 1, the exact value */
	}
	assert_int_equal(usc_tensor_write_npy(x, x_path, &err), USC_OK);
	assert_int_equal(usc_tensor_write_npy(y, y_path, &err), USC_OK);

	r = run_big(path, x_path, y_path, false);
	o = &r->outputs[0];
	assert_int_equal(o->summary.count, BIG);
	assert_int_equal(o->summary.undecided_count, 0);
	assert_int_equal(o->tier_decided, BIG - 2);
	/* One run at 128 bits, over the two tiles that hold 100 and 9000. */
	assert_int_equal(r->oracle_precision, 128);
	assert_int_equal(o->oracle_elements, 2 * 4096);
	/* The exact value is 1 = the device: no error anywhere. */
	for (uint64_t k = 0; k < BIG; k++) {
		assert_false(o->undecided[k]);
		assert_true(fabs(o->ulp_oracle[k]) <= 0x1p-20);
	}

	/* The oracle over the whole kernel gives the same for those two. */
	strict = run_big(path, x_path, y_path, true);
	so = &strict->outputs[0];
	assert_int_equal(so->tier_decided, 0);
	assert_int_equal(so->oracle_elements, BIG);
	assert_int_equal(so->summary.undecided_count, 0);
	assert_int_equal(so->summary.bit_exact_count,
			 o->summary.bit_exact_count);
	for (size_t i = 0; i < 2; i++) {
		uint64_t k = hard[i];

		assert_memory_equal(&o->ulp_oracle[k], &so->ulp_oracle[k],
				    sizeof(double));
		assert_memory_equal(&o->oracle_mid[k], &so->oracle_mid[k],
				    sizeof(double));
		assert_memory_equal(&o->oracle_rad[k], &so->oracle_rad[k],
				    sizeof(double));
		assert_true(o->oracle_mid[k] - o->oracle_rad[k] <= 1 &&
			    1 <= o->oracle_mid[k] + o->oracle_rad[k]);
	}
	for (uint64_t k = 0; k < BIG; k++)
		assert_memory_equal(&o->ulp_reference[k], &so->ulp_reference[k],
				    sizeof(double));
	usc_check_report_destroy(strict);
	usc_check_report_destroy(r);
	usc_tensor_destroy(x);
	usc_tensor_destroy(y);
}

/*
 * The profile of a case directory comes from its case.json: "profile"
 * (a built-in or a file beside it), else "platform" (cpu -> xla-cpu, or
 * xla-cpu-fast-math with fast math on); none without either, or with
 * no_profile.  A malformed case.json, or an unknown platform, is an
 * error naming its line and column.  Under strict, one element bumped by one code is the defect,
 * and only that element.
 */
static void test_case_json_profiles(void **state)
{
	static const struct {
		const char *json, *profile; /* NULL: not classified */
	} cases[] = {
		{NULL, NULL},
		{"{\"platform\": \"cpu\", \"notes\": [1, {\"a\": null}]}",
		 "xla-cpu"},
		{"{\"platform\": \"cpu\", \"xla_cpu_enable_fast_math\": true}",
		 "xla-cpu-fast-math"},
		{"{\"platform\": \"cpu\", \"xla_cpu_enable_fast_math\": false}",
		 "xla-cpu"},
		{"{\"profile\": \"strict\", \"platform\": \"cpu\"}", "strict"},
		{"{\"profile\": \"mine.profile\"}", "mine"},
		{"{\"platform\": null, \"notes\": \"x\"}", NULL},
	};
	char cj[320], mine[320];
	usc_check_request req = usc_check_request_default();
	usc_check_report *r = NULL;
	usc_error err;

	(void)state;
	snprintf(cj, sizeof cj, "%s/case.json", dir);
	snprintf(mine, sizeof mine, "%s/mine.profile", dir);
	write_text(mine, "base = strict\nname = mine\n");
	write_device(-1);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unlink(cj);
		if (cases[i].json)
			write_text(cj, cases[i].json);
		if (usc_check_case(dir, NULL, &r, &err) != USC_OK)
			fail_msg("%s: %s", cases[i].json, err.message);
		if (!cases[i].profile) {
			assert_false(r->classified);
			assert_null(r->outputs[0].cls);
		} else {
			assert_true(r->classified);
			assert_string_equal(r->profile.name, cases[i].profile);
			/* The reference's own output: legit everywhere. */
			assert_int_equal(r->verdict, USC_VERDICT_LEGIT);
			assert_int_equal(r->outputs[0].counts.n[USC_CLASS_EXACT],
					 N);
		}
		usc_check_report_destroy(r);
		r = NULL;
	}
	/* no_profile overrides case.json. */
	write_text(cj, "{\"platform\": \"cpu\"}");
	req.no_profile = true;
	assert_int_equal(usc_check_case(dir, &req, &r, &err), USC_OK);
	assert_false(r->classified);
	usc_check_report_destroy(r);
	/* Malformed JSON: the trailing comma, at line 1 column 20. */
	write_text(cj, "{\"platform\": \"cpu\",}");
	assert_int_equal(usc_check_case(dir, NULL, &r, &err), USC_EPARSE);
	assert_non_null(strstr(err.message,
			       "case.json:1:20: malformed JSON: expected a "
			       "member name"));
	/* A platform ulpscope does not know: an error, not "no profile". */
	write_text(cj, "{\"platform\": \"quantum\"}");
	assert_int_equal(usc_check_case(dir, NULL, &r, &err), USC_EPARSE);
	assert_non_null(strstr(err.message,
			       "case.json:1:14: \"platform\": 'quantum' is "
			       "not a platform ulpscope knows"));
	/* A profile that is neither a built-in nor a file. */
	write_text(cj, "{\"profile\": \"nope\"}");
	assert_int_not_equal(usc_check_case(dir, NULL, &r, &err), USC_OK);
	assert_non_null(strstr(err.message, "\"profile\""));
	/* Strict: element 9 one code above the reference is the defect. */
	write_text(cj, "{\"profile\": \"strict\"}");
	write_device(9);
	assert_int_equal(usc_check_case(dir, NULL, &r, &err), USC_OK);
	assert_int_equal(r->verdict, USC_VERDICT_DEFECT);
	assert_int_equal(r->outputs[0].counts.n[USC_CLASS_DEFECT], 1);
	assert_int_equal(r->outputs[0].cls[9], USC_CLASS_DEFECT);
	assert_int_equal(r->outputs[0].counts.n[USC_CLASS_EXACT], N - 1);
	assert_int_equal(r->outputs[0].worst[0].index, 9);
	assert_int_equal(r->outputs[0].worst[0].cls, USC_CLASS_DEFECT);
	assert_true(r->outputs[0].worst[0].outside_ulps == 1);
	usc_check_report_destroy(r);
	unlink(cj);
	unlink(mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_equals_reference),
		cmocka_unit_test(test_one_element_off),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_case_dir_and_results),
		cmocka_unit_test(test_fusion),
		cmocka_unit_test(test_escalation_tiles),
		cmocka_unit_test(test_case_json_profiles),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
