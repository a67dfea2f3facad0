/*
 * ulpscope explain (src/analyze/explain.c): the tree of one element of a
 * hand-built kernel, asserted line by line, with every figure derived by
 * hand below; the same tree from a result file; errors.
 *
 * The kernel is s = (x + 1) - 1 in bf16 at x = 2^-9 (element 0) and
 * x = 1 (element 1), the device output equal to the strict reference,
 * profile strict.  bf16 has 8 significant bits, so ulp(1) = 2^-7 and
 * ulp(2^-9) = 2^-16.  By hand, element 0:
 *   a = x + 1: exact 1 + 2^-9 = 1.001953125 ("%.9g" prints 1.00195312,
 *     the tie to even of an exactly representable double); 2^-9 is a
 *     quarter of ulp(1), so the reference rounds it down to 1: local =
 *     ref err = (1 - (1 + 2^-9)) / 2^-7 = -0.25 ulp of bf16.
 *   s = a - 1: exact 2^-9 = 0.001953125, which bf16 holds (local 0);
 *     the reference computes 1 - 1 = 0: ref err = -2^-9 / 2^-16 = -128.
 *   The device 0x0000 = 0 is the reference bit for bit: error -128 ulp
 *     against the exact value, class exact; the strict envelope is the
 *     reference's value alone ([0] at s, [1] at a).
 *   Attribution (docs/attribution.md, hand-derived in
 *     tests/attribution): the add contributes all of -128, the subtract
 *     0, residual 0.
 *   x, the broadcast of 1 and the constant are exact (ref err 0).
 */
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
#include "ulpscope/check.h"
#include "ulpscope/explain.h"
#include "ulpscope/tensor.h"

static const char kernel_text[] =
	"HloModule xp1m1, entry_computation_layout={(bf16[2]{0})->bf16[2]{0}}\n"
	"\n"
	"ENTRY %main (x: bf16[2]) -> bf16[2] {\n"
	"  %x = bf16[2]{0} parameter(0)\n"
	"  %one = bf16[] constant(1)\n"
	"  %ones = bf16[2]{0} broadcast(%one), dimensions={}\n"
	"  %a = bf16[2]{0} add(%x, %ones), metadata={op_name=\"jit(f)/add\" "
	"source_file=\"/src/model.py\" source_line=3}\n"
	"  ROOT %s = bf16[2]{0} subtract(%a, %ones), metadata={op_name="
	"\"jit(f)/sub\" source_file=\"/src/model.py\" source_line=4}\n"
	"}\n";

/* The documented example (docs/explain.md shows the same text). */
static const char golden[] =
	"kernel xp1m1, output 0 [0] of bf16[2], profile strict\n"
	"  device     0x0000 = 0   error -128 ulp, 0 from the reference\n"
	"  reference  0x0000 = 0   error -128 ulp\n"
	"  exact      0.001953125\n"
	"  envelope   [0]\n"
	"  class      exact\n"
	"  attribution: reference error -128 ulp = a (model.py:3) -128; "
	"residual 0\n"
	"tree: ref = strict reference, exact = oracle, local = the op's own "
	"rounding of its exact\n"
	"  value, ref err = reference - exact (both in ulps of the op's "
	"type), contrib = the op's\n"
	"  share of the root's error (ulps of the output), env = envelope\n"
	"s  subtract bf16[2] [0]  model.py:4\n"
	"  ref 0  exact 0.001953125  local 0  ref err -128  contrib 0  "
	"env [0]\n"
	"  a  add bf16[2] [0]  model.py:3\n"
	"    ref 1  exact 1.00195312  local -0.25  ref err -0.25  contrib "
	"-128  env [1]\n"
	"    x  parameter bf16[2] [0]  parameter 0\n"
	"      ref 0.001953125  exact 0.001953125  ref err 0  env "
	"[0.001953125]\n"
	"    ones  broadcast bf16[2] [0]\n"
	"      ref 1  exact 1  ref err 0  env [1]\n"
	"      one  constant bf16[] []\n"
	"        ref 1  exact 1  ref err 0  env [1]\n"
	"  ones  broadcast bf16[2] [0]  (shown above)\n";

static char tmpdir[128];
static char hlo_path[256], x_path[256], dev_path[256], h5_path[256];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void write_bf16(const char *path, uint64_t b0, uint64_t b1)
{
	int64_t dims[1] = {2};
	usc_tensor *t = NULL;
	usc_error err;

	assert_int_equal(usc_tensor_create(USC_BF16, 1, dims, &t, &err),
			 USC_OK);
	assert_int_equal(usc_tensor_set_bits(t, 0, b0), USC_OK);
	assert_int_equal(usc_tensor_set_bits(t, 1, b1), USC_OK);
	assert_int_equal(usc_tensor_write_npy(t, path, &err), USC_OK);
	usc_tensor_destroy(t);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/usc_explain_XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(hlo_path, sizeof hlo_path, "%s/xp1m1.hlo", tmpdir);
	snprintf(x_path, sizeof x_path, "%s/x.npy", tmpdir);
	snprintf(dev_path, sizeof dev_path, "%s/device.npy", tmpdir);
	snprintf(h5_path, sizeof h5_path, "%s/results.h5", tmpdir);
	write_file(hlo_path, kernel_text);
	/* x = [2^-9, 1]: bf16 0x3b00 (exponent 127 - 9 = 118), 0x3f80. */
	write_bf16(x_path, 0x3b00, 0x3f80);
	/* The device: the reference, 0 and 1. */
	write_bf16(dev_path, 0x0000, 0x3f80);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(hlo_path);
	unlink(x_path);
	unlink(dev_path);
	unlink(h5_path);
	rmdir(tmpdir);
	return 0;
}

static const char *inputs[1];
static const char *devices[1];

static usc_explain_request request(void)
{
	usc_explain_request q = usc_explain_request_default();

	inputs[0] = x_path;
	devices[0] = dev_path;
	q.check.hlo_path = hlo_path;
	q.check.inputs = inputs;
	q.check.input_count = 1;
	q.check.devices = devices;
	q.check.device_count = 1;
	q.index_rank = 1;
	q.index[0] = 0;
	return q;
}

/* The printed tree into a string (caller frees). */
static char *printed(const usc_explain_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	usc_explain_print(f, r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Compares line by line, so that a failure names the first bad line. */
static void assert_text(const char *got, const char *want)
{
	size_t line = 1;

	while (*got || *want) {
		size_t a = strcspn(got, "\n"), b = strcspn(want, "\n");

		if (a != b || memcmp(got, want, a) != 0)
			fail_msg("line %zu:\n  got:  %.*s\n  want: %.*s", line,
				 (int)a, got, (int)b, want);
		got += a + (got[a] == '\n');
		want += b + (want[b] == '\n');
		line++;
	}
}

static void test_golden(void **state)
{
	usc_explain_request q = request();
	usc_explain_report *r = NULL;
	usc_error err;
	char *text;

	(void)state;
	if (usc_explain_run(&q, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	text = printed(r);
	assert_text(text, golden);
	/* The figures themselves, not only their printing. */
	assert_int_equal(r->node_count, 6);
	assert_string_equal(r->nodes[1].instr->name, "a");
	assert_true(r->nodes[1].local_ulps == -0x1p-2);
	assert_true(r->nodes[1].contrib == -128.0);
	assert_true(r->nodes[0].ref_err_ulps == -128.0);
	assert_true(r->nodes[0].exact_mid == 0x1p-9);
	assert_int_equal(r->root.cls, USC_CLASS_EXACT);
	free(text);
	usc_explain_report_destroy(r);

	/* Element 1 (x = 1) is exact everywhere: 1 + 1 - 1 = 1. */
	q = request();
	q.flat = true;
	q.flat_index = 1;
	if (usc_explain_run(&q, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_true(r->nodes[0].ref_err_ulps == 0);
	assert_true(r->nodes[1].local_ulps == 0);
	assert_true(r->nodes[1].ref == 2.0);
	usc_explain_report_destroy(r);
}

/* The result file holds the kernel and the device: the same tree. */
static void test_results_file(void **state)
{
	usc_check_request cq = usc_check_request_default();
	usc_explain_request q = request();
	usc_check_report *cr = NULL;
	usc_explain_report *r = NULL;
	usc_profile strict;
	usc_error err;
	char *text;

	(void)state;
	assert_int_equal(usc_profile_builtin("strict", &strict, &err), USC_OK);
	cq.hlo_path = hlo_path;
	cq.inputs = inputs;
	cq.input_count = 1;
	cq.devices = devices;
	cq.device_count = 1;
	cq.profile = &strict;
	inputs[0] = x_path;
	devices[0] = dev_path;
	assert_int_equal(usc_check_run(&cq, &cr, &err), USC_OK);
	assert_int_equal(usc_check_write(cr, h5_path, false, &err), USC_OK);
	usc_check_report_destroy(cr);

	q.check.hlo_path = NULL;
	q.check.devices = NULL;
	q.check.device_count = 0;
	q.results_path = h5_path;
	q.results_kernel = "xp1m1";
	if (usc_explain_run(&q, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	text = printed(r);
	assert_text(text, golden);
	free(text);
	usc_explain_report_destroy(r);

	q.results_kernel = "nosuch";
	assert_int_not_equal(usc_explain_run(&q, &r, &err), USC_OK);
	assert_non_null(strstr(err.message, "nosuch"));
}

static void test_errors(void **state)
{
	usc_explain_request q = request();
	usc_explain_report *r = NULL;
	usc_error err;

	(void)state;
	q.index[0] = 2;
	assert_int_equal(usc_explain_run(&q, &r, &err), USC_ERANGE);
	assert_string_equal(err.message,
			    "index 2 of dimension 0 is out of range for "
			    "output 0, bf16[2]");
	q = request();
	q.index_rank = 2;
	q.index[1] = 0;
	assert_int_equal(usc_explain_run(&q, &r, &err), USC_EINVAL);
	assert_string_equal(err.message,
			    "the element has 2 indexes but output 0, "
			    "bf16[2], has rank 1");
	q = request();
	q.output = 1;
	assert_int_equal(usc_explain_run(&q, &r, &err), USC_ERANGE);
	assert_non_null(strstr(err.message, "there is no output 1"));
	assert_null(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_results_file),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
