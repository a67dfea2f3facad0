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
#include <stdbool.h>
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

/*
 * The printed tree into a string (caller frees).  The memstream's buffer
 * pointer lives at file scope: GCC's -O2 dangling-pointer check takes a
 * pointer into the buffer for one into a local that held it.
 */
static char *mem_buf;
static size_t mem_len;

static char *printed(const usc_explain_report *r)
{
	FILE *f;

	mem_buf = NULL;
	mem_len = 0;
	f = open_memstream(&mem_buf, &mem_len);
	assert_non_null(f);
	usc_explain_print(f, r);
	assert_int_equal(fclose(f), 0);
	return mem_buf;
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
	/* The tree's depth is bounded: the walk takes stack per level. */
	q = request();
	q.max_depth = USC_EXPLAIN_DEPTH_MAX + 1;
	assert_int_equal(usc_explain_run(&q, &r, &err), USC_EINVAL);
	assert_string_equal(err.message,
			    "explain: a depth of 1001 is more than the 1000 "
			    "levels a tree may have");
	assert_null(r);
}

/* ------------------------------------------- following the element */

/*
 * Small kernels for the ops the tree follows at the element they read
 * (docs/explain.md, "How the tree follows the element").  Each output's
 * device value is the exact result, computed by hand below; every value
 * is a small integer or a short binary fraction, so f32 holds each one
 * and every product and sum exactly (ref err 0 throughout).
 */
static char kdir[128];

/*
 * A tensor of type t (a float type, or s32) and rank <= 2 from values,
 * each exactly representable in t (the tests' values are).
 */
static void write_tensor(const char *path, usc_dtype t, size_t rank,
			 const int64_t *dims, const double *v)
{
	usc_tensor *x = NULL;
	usc_error err;
	uint64_t n = 1;

	for (size_t d = 0; d < rank; d++)
		n *= (uint64_t)dims[d];
	assert_int_equal(usc_tensor_create(t, rank, dims, &x, &err), USC_OK);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t bits;
		unsigned flags = 0;

		if (t == USC_S32) {
			int32_t i = (int32_t)v[k];
			uint32_t u;

			memcpy(&u, &i, sizeof u);
			bits = u;
		} else {
			assert_int_equal(usc_encode_double(t, v[k], NULL, &bits,
							   &flags),
					 USC_OK);
			assert_int_equal(flags & USC_FLAG_INEXACT, 0);
		}
		assert_int_equal(usc_tensor_set_bits(x, k, bits), USC_OK);
	}
	assert_int_equal(usc_tensor_write_npy(x, path, &err), USC_OK);
	usc_tensor_destroy(x);
}

typedef struct kfile {
	const char *name;
	usc_dtype t;
	size_t rank;
	int64_t dims[2];
	double v[8];
} kfile;

static char kpaths[16][256];
static const char *kin[8], *kdev[8];
static bool kattribute; /* explain_kernel attributes (default: not) */

/*
 * Writes the kernel and its files into kdir (inputs first, then device
 * outputs) and explains output `output` at flat element `flat`.
 */
static usc_explain_report *explain_kernel(const char *text, const kfile *in,
					  size_t nin, const kfile *dev,
					  size_t ndev, size_t output,
					  uint64_t flat, size_t terms)
{
	usc_explain_request q = usc_explain_request_default();
	usc_explain_report *r = NULL;
	usc_error err;
	char hlo[256];

	snprintf(kdir, sizeof kdir, "/tmp/usc_explain_ops_XXXXXX");
	assert_non_null(mkdtemp(kdir));
	snprintf(hlo, sizeof hlo, "%s/k.hlo", kdir);
	write_file(hlo, text);
	for (size_t i = 0; i < nin + ndev; i++) {
		const kfile *f = i < nin ? &in[i] : &dev[i - nin];

		snprintf(kpaths[i], sizeof kpaths[i], "%s/%s.npy", kdir,
			 f->name);
		write_tensor(kpaths[i], f->t, f->rank, f->dims, f->v);
		if (i < nin)
			kin[i] = kpaths[i];
		else
			kdev[i - nin] = kpaths[i];
	}
	q.check.hlo_path = hlo;
	q.check.inputs = kin;
	q.check.input_count = nin;
	q.check.devices = kdev;
	q.check.device_count = ndev;
	q.output = output;
	q.flat = true;
	q.flat_index = flat;
	q.terms = terms;
	q.no_attribute = !kattribute;
	if (usc_explain_run(&q, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	for (size_t i = 0; i < nin + ndev; i++)
		unlink(kpaths[i]);
	unlink(hlo);
	rmdir(kdir);
	return r;
}

/* Node i is instruction name at flat index (ELEMENT). */
static void assert_node(const usc_explain_report *r, size_t i,
			const char *name, usc_explain_kind kind,
			uint64_t index, unsigned depth)
{
	if (i >= r->node_count)
		fail_msg("no node %zu (%zu nodes)", i, r->node_count);
	if (strcmp(r->nodes[i].instr->name, name) != 0 ||
	    r->nodes[i].kind != kind || r->nodes[i].index != index ||
	    r->nodes[i].depth != depth)
		fail_msg("node %zu: got %s kind %d index %llu depth %u, want "
			 "%s kind %d index %llu depth %u",
			 i, r->nodes[i].instr->name, (int)r->nodes[i].kind,
			 (unsigned long long)r->nodes[i].index,
			 r->nodes[i].depth, name, (int)kind,
			 (unsigned long long)index, depth);
}

/* The printed tree holds this line. */
static void assert_line(const usc_explain_report *r, const char *line)
{
	char *text = printed(r), want[512];

	snprintf(want, sizeof want, "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("no line '%s' in:\n%s", line, text);
	free(text);
}

/*
 * p = [1, 2, 3, 4], q = [10, 20, 30], i = 5, m = [[1,2],[3,4],[5,6]],
 * idx = [[2],[0]].  By HLO's semantics:
 *   c = concatenate(p, q) = [1,2,3,4,10,20,30]: c[5] is q[5 - 4] = q[1].
 *   pd1 = pad(p, -1) with lo 2, hi -3, interior 1: before the high edge
 *     is cut, [z,z,p0,z,p1,z,p2,z,p3]; cutting 3 leaves
 *     [-1,-1,1,-1,2,-1]: pd1[4] is p[1], pd1[3] and pd1[5] are padding.
 *   pd2 = pad(p, -1) with lo -1, interior 1: [p0,z,p1,z,p2,z,p3] less
 *     its first element, [-1,2,-1,3,-1,4]: pd2[1] is p[1], pd2[0]
 *     padding.
 *   ds = dynamic-slice(p, i) of size 2: the start 5 is clamped into
 *     [0, 4 - 2] = 2, so ds = p[2:4] = [3,4] and ds[1] is p[3].
 *   g = gather(m, idx), rows of m: g[b,:] = m[idx[b],:] = [[5,6],[1,2]];
 *     g[0,1] (flat 1) is m[2,1] (flat 5).
 *   t = reshape(p) = [[1,2],[3,4]]; bc = bitcast(t) to layout {0,1}:
 *     logical [r,c] lies at offset r + 2c, which t's layout {1,0} reads
 *     as t[(r+2c)/2, (r+2c)%2]: bc[0,1] is t[1,0] (flat 2) = p[2] = 3;
 *     bc = [[1,3],[2,4]].
 *   cp = copy(p): cp[3] is p[3].
 */
static const char moves_text[] =
	"HloModule moves\n"
	"\n"
	"ENTRY %main (p: f32[4], q: f32[3], i: s32[], m: f32[3,2], "
	"idx: s32[2,1]) -> (f32[7], f32[6], f32[6], f32[2], f32[2,2], "
	"f32[2,2], f32[4]) {\n"
	"  %p = f32[4]{0} parameter(0)\n"
	"  %q = f32[3]{0} parameter(1)\n"
	"  %i = s32[] parameter(2)\n"
	"  %m = f32[3,2]{1,0} parameter(3)\n"
	"  %idx = s32[2,1]{1,0} parameter(4)\n"
	"  %c = f32[7]{0} concatenate(%p, %q), dimensions={0}\n"
	"  %z = f32[] constant(-1)\n"
	"  %pd1 = f32[6]{0} pad(%p, %z), padding=2_-3_1\n"
	"  %pd2 = f32[6]{0} pad(%p, %z), padding=-1_0_1\n"
	"  %ds = f32[2]{0} dynamic-slice(%p, %i), dynamic_slice_sizes={2}\n"
	"  %g = f32[2,2]{1,0} gather(%m, %idx), offset_dims={1}, "
	"collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
	"slice_sizes={1,2}\n"
	"  %t = f32[2,2]{1,0} reshape(%p)\n"
	"  %bc = f32[2,2]{0,1} bitcast(%t)\n"
	"  %cp = f32[4]{0} copy(%p)\n"
	"  ROOT %out = (f32[7]{0}, f32[6]{0}, f32[6]{0}, f32[2]{0}, "
	"f32[2,2]{1,0}, f32[2,2]{0,1}, f32[4]{0}) tuple(%c, %pd1, %pd2, %ds, "
	"%g, %bc, %cp)\n"
	"}\n";

static const kfile moves_in[] = {
	{"p", USC_F32, 1, {4}, {1, 2, 3, 4}},
	{"q", USC_F32, 1, {3}, {10, 20, 30}},
	{"i", USC_S32, 0, {0}, {5}},
	{"m", USC_F32, 2, {3, 2}, {1, 2, 3, 4, 5, 6}},
	{"idx", USC_S32, 2, {2, 1}, {2, 0}},
};

static const kfile moves_dev[] = {
	{"c", USC_F32, 1, {7}, {1, 2, 3, 4, 10, 20, 30}},
	{"pd1", USC_F32, 1, {6}, {-1, -1, 1, -1, 2, -1}},
	{"pd2", USC_F32, 1, {6}, {-1, 2, -1, 3, -1, 4}},
	{"ds", USC_F32, 1, {2}, {3, 4}},
	{"g", USC_F32, 2, {2, 2}, {5, 6, 1, 2}},
	{"bc", USC_F32, 2, {2, 2}, {1, 3, 2, 4}},
	{"cp", USC_F32, 1, {4}, {1, 2, 3, 4}},
};

static usc_explain_report *moves(size_t output, uint64_t flat)
{
	return explain_kernel(moves_text, moves_in, 5, moves_dev, 7, output,
			      flat, USC_EXPLAIN_TERMS_DEFAULT);
}

static void test_concatenate_pad(void **state)
{
	usc_explain_report *r;

	(void)state;
	/* c[5]: q[1] alone (p is not read). */
	r = moves(0, 5);
	assert_int_equal(r->node_count, 2);
	assert_node(r, 0, "c", USC_EXPLAIN_ELEMENT, 5, 0);
	assert_node(r, 1, "q", USC_EXPLAIN_ELEMENT, 1, 1);
	assert_true(r->nodes[1].ref == 20.0);
	assert_int_equal(r->root.cls, USC_CLASS_EXACT);
	assert_line(r, "  q  parameter f32[3] [1]  parameter 1");
	usc_explain_report_destroy(r);

	/* pd1[4]: p[1]; pd1[3]: the padding value. */
	r = moves(1, 4);
	assert_int_equal(r->node_count, 2);
	assert_node(r, 1, "p", USC_EXPLAIN_ELEMENT, 1, 1);
	assert_false(r->nodes[1].padding);
	usc_explain_report_destroy(r);
	r = moves(1, 3);
	assert_int_equal(r->node_count, 2);
	assert_node(r, 1, "z", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_true(r->nodes[1].padding);
	assert_true(r->nodes[1].ref == -1.0);
	assert_line(r, "  z  constant f32[] []  (padding)");
	usc_explain_report_destroy(r);
	/* Interior padding: pd1[5] lies between p[1] and p[2]. */
	r = moves(1, 5);
	assert_node(r, 1, "z", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_true(r->nodes[1].padding);
	usc_explain_report_destroy(r);

	/* Negative low padding: pd2[1] is p[1], pd2[0] padding. */
	r = moves(2, 1);
	assert_node(r, 1, "p", USC_EXPLAIN_ELEMENT, 1, 1);
	usc_explain_report_destroy(r);
	r = moves(2, 0);
	assert_node(r, 1, "z", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_true(r->nodes[1].padding);
	usc_explain_report_destroy(r);
}

static void test_dynamic_slice_gather(void **state)
{
	usc_explain_report *r;

	(void)state;
	/* ds[1]: the start 5 clamped to 2, so p[3]; then the start i. */
	r = moves(3, 1);
	assert_int_equal(r->node_count, 3);
	assert_node(r, 1, "p", USC_EXPLAIN_ELEMENT, 3, 1);
	assert_true(r->nodes[1].ref == 4.0);
	assert_node(r, 2, "i", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_true(r->nodes[2].ref == 5.0);
	assert_line(r, "  p  parameter f32[4] [3]  parameter 0");
	usc_explain_report_destroy(r);

	/*
	 * g[0,1]: m[2,1] = 6; then the index the gather read: batch 0's
	 * index vector idx[0,:] (index_vector_dim 1), one element, idx[0,0]
	 * = 2 (flat 0).
	 */
	r = moves(4, 1);
	assert_int_equal(r->node_count, 3);
	assert_node(r, 1, "m", USC_EXPLAIN_ELEMENT, 5, 1);
	assert_true(r->nodes[1].ref == 6.0);
	assert_node(r, 2, "idx", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_true(r->nodes[2].ref == 2.0);
	assert_line(r, "  m  parameter f32[3,2] [2,1]  parameter 3");
	assert_line(r, "  idx  parameter s32[2,1] [0,0]  parameter 4");
	usc_explain_report_destroy(r);
	/* g[1,0] (flat 2): batch 1 reads idx[1,0] = 0 (flat 1): m[0,0]. */
	r = moves(4, 2);
	assert_node(r, 1, "m", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_node(r, 2, "idx", USC_EXPLAIN_ELEMENT, 1, 1);
	assert_true(r->nodes[2].ref == 0.0);
	usc_explain_report_destroy(r);
}

static void test_bitcast_copy(void **state)
{
	usc_explain_report *r;

	(void)state;
	/* bc[0,1] (flat 1): t[1,0] (flat 2), which is p[2] = 3. */
	r = moves(5, 1);
	assert_int_equal(r->node_count, 3);
	assert_node(r, 1, "t", USC_EXPLAIN_ELEMENT, 2, 1);
	assert_node(r, 2, "p", USC_EXPLAIN_ELEMENT, 2, 2);
	assert_true(r->nodes[2].ref == 3.0);
	assert_line(r, "  t  reshape f32[2,2] [1,0]");
	usc_explain_report_destroy(r);

	/* cp[3]: p[3]. */
	r = moves(6, 3);
	assert_int_equal(r->node_count, 2);
	assert_node(r, 1, "p", USC_EXPLAIN_ELEMENT, 3, 1);
	usc_explain_report_destroy(r);
}

/*
 * l = [[1, -5, 2], [3, 0.5, -4]], r = [[2, 1], [1, 3], [-6, 0.25]],
 * v = [1, -7, 2, 9, -3, 0.5].  By hand:
 *   d = dot(l, r) contracting l's dimension 1 with r's 0:
 *     d[0,1] = l[0,0] r[0,1] + l[0,1] r[1,1] + l[0,2] r[2,1]
 *            = 1*1 + (-5)*3 + 2*0.25 = 1 - 15 + 0.5 = -13.5;
 *     its products by |exact|: -15 (l[0,1] x r[1,1]), 1 (l[0,0] x
 *     r[0,1]), 0.5 (l[0,2] x r[2,1]); sum |.| = 16.5.
 *     d = [[-15, -13.5], [30.5, 3.5]]
 *     (d[0,0] = 2 - 5 - 12, d[1,0] = 6 + 0.5 + 24, d[1,1] = 3 + 1.5 - 1).
 *   red = reduce(l, 0) over dimension 1 = [1 - 5 + 2, 3 + 0.5 - 4]
 *     = [-2, -0.5]: red[1] combines l[1,0:3]; by |exact|: l[1,2] = -4,
 *     l[1,0] = 3, l[1,1] = 0.5.
 *   rw = reduce-window(v, 0), size 3, stride 2, padding 1 on each side:
 *     output o covers input positions 2o - 1 .. 2o + 1 (position -1 is
 *     padding): rw = [v0 + v1, v1 + v2 + v3, v3 + v4 + v5]
 *     = [-6, 4, 6.5]; rw[1] combines v[1:4]: by |exact| v[3] = 9,
 *     v[1] = -7, v[2] = 2; rw[0] combines v[0:2] only.
 */
static const char sums_text[] =
	"HloModule sums\n"
	"\n"
	"%add (a: f32[], b: f32[]) -> f32[] {\n"
	"  %a = f32[] parameter(0)\n"
	"  %b = f32[] parameter(1)\n"
	"  ROOT %s = f32[] add(%a, %b)\n"
	"}\n"
	"\n"
	"ENTRY %main (l: f32[2,3], r: f32[3,2], v: f32[6]) -> (f32[2,2], "
	"f32[2], f32[3]) {\n"
	"  %l = f32[2,3]{1,0} parameter(0)\n"
	"  %r = f32[3,2]{1,0} parameter(1)\n"
	"  %v = f32[6]{0} parameter(2)\n"
	"  %d = f32[2,2]{1,0} dot(%l, %r), lhs_contracting_dims={1}, "
	"rhs_contracting_dims={0}\n"
	"  %zero = f32[] constant(0)\n"
	"  %red = f32[2]{0} reduce(%l, %zero), dimensions={1}, "
	"to_apply=%add\n"
	"  %rw = f32[3]{0} reduce-window(%v, %zero), window={size=3 "
	"stride=2 pad=1_1}, to_apply=%add\n"
	"  ROOT %out = (f32[2,2]{1,0}, f32[2]{0}, f32[3]{0}) tuple(%d, %red, "
	"%rw)\n"
	"}\n";

static const kfile sums_in[] = {
	{"l", USC_F32, 2, {2, 3}, {1, -5, 2, 3, 0.5, -4}},
	{"r", USC_F32, 2, {3, 2}, {2, 1, 1, 3, -6, 0.25}},
	{"v", USC_F32, 1, {6}, {1, -7, 2, 9, -3, 0.5}},
};

static const kfile sums_dev[] = {
	{"d", USC_F32, 2, {2, 2}, {-15, -13.5, 30.5, 3.5}},
	{"red", USC_F32, 1, {2}, {-2, -0.5}},
	{"rw", USC_F32, 1, {3}, {-6, 4, 6.5}},
};

static usc_explain_report *sums(size_t output, uint64_t flat, size_t terms)
{
	return explain_kernel(sums_text, sums_in, 3, sums_dev, 3, output, flat,
			      terms);
}

static void test_dot_terms(void **state)
{
	usc_explain_report *r;

	(void)state;
	r = sums(0, 1, 3);
	assert_int_equal(r->root.cls, USC_CLASS_EXACT);
	/* d, its products, then per term: the product, l, r. */
	assert_int_equal(r->node_count, 2 + 3 * 3);
	assert_node(r, 0, "d", USC_EXPLAIN_ELEMENT, 1, 0);
	assert_true(r->nodes[0].ref == -13.5);
	assert_node(r, 1, "d", USC_EXPLAIN_PRODUCTS, 1, 1);
	assert_int_equal(r->nodes[1].count, 3);
	assert_string_equal(r->nodes[1].set, "l[0,0:3] x r[0:3,1]");
	assert_true(r->nodes[1].sum_abs_ref == 16.5);
	assert_true(r->nodes[1].sum_abs_exact == 16.5);
	/* Term 1: l[0,1] x r[1,1] = -5 * 3 = -15 (position 1 of the sum). */
	assert_node(r, 2, "d", USC_EXPLAIN_PRODUCT, 1, 2);
	assert_int_equal(r->nodes[2].term, 1);
	assert_int_equal(r->nodes[2].terms_of, 3);
	assert_true(r->nodes[2].ref == -15.0);
	assert_true(r->nodes[2].exact_mid == -15.0);
	assert_true(r->nodes[2].ref_err_ulps == 0);
	assert_node(r, 3, "l", USC_EXPLAIN_ELEMENT, 1, 3);
	assert_node(r, 4, "r", USC_EXPLAIN_ELEMENT, 3, 3);
	/* Term 2: l[0,0] x r[0,1] = 1; term 3: l[0,2] x r[2,1] = 0.5. */
	assert_node(r, 5, "d", USC_EXPLAIN_PRODUCT, 0, 2);
	assert_int_equal(r->nodes[5].term, 2);
	assert_true(r->nodes[5].ref == 1.0);
	assert_node(r, 8, "d", USC_EXPLAIN_PRODUCT, 2, 2);
	assert_int_equal(r->nodes[8].term, 3);
	assert_true(r->nodes[8].ref == 0.5);
	assert_node(r, 9, "l", USC_EXPLAIN_ELEMENT, 2, 3);
	assert_node(r, 10, "r", USC_EXPLAIN_ELEMENT, 5, 3);
	assert_line(r, "  d  dot products l[0,0:3] x r[0:3,1] (3 products)");
	assert_line(r, "    d  dot product l[0,1] x r[1,1]  (term 1 of 3)");
	assert_line(r, "      ref -15  exact -15  local 0  ref err 0");
	assert_line(r, "      l  parameter f32[2,3] [0,1]  parameter 0");
	usc_explain_report_destroy(r);

	/* --terms 1: the largest only. */
	r = sums(0, 1, 1);
	assert_int_equal(r->node_count, 2 + 3);
	assert_node(r, 2, "d", USC_EXPLAIN_PRODUCT, 1, 2);
	usc_explain_report_destroy(r);

	/* --terms 0: no terms; the factors whole below the products. */
	r = sums(0, 1, 0);
	assert_int_equal(r->node_count, 4);
	assert_node(r, 2, "l", USC_EXPLAIN_WHOLE, 0, 2);
	assert_node(r, 3, "r", USC_EXPLAIN_WHOLE, 0, 2);
	usc_explain_report_destroy(r);
}

static void test_reduce_terms(void **state)
{
	usc_explain_report *r;

	(void)state;
	/* red[1]: the set l[1,0:3], terms l[1,2], l[1,0], l[1,1]; zero. */
	r = sums(1, 1, 3);
	assert_int_equal(r->node_count, 6);
	assert_node(r, 0, "red", USC_EXPLAIN_ELEMENT, 1, 0);
	assert_true(r->nodes[0].ref == -0.5);
	assert_node(r, 1, "l", USC_EXPLAIN_SET, 0, 1);
	assert_int_equal(r->nodes[1].count, 3);
	assert_string_equal(r->nodes[1].set, "[1,0:3]");
	assert_true(r->nodes[1].sum_abs_exact == 7.5);
	assert_node(r, 2, "l", USC_EXPLAIN_ELEMENT, 5, 2);
	assert_int_equal(r->nodes[2].term, 1);
	assert_node(r, 3, "l", USC_EXPLAIN_ELEMENT, 3, 2);
	assert_int_equal(r->nodes[3].term, 2);
	assert_node(r, 4, "l", USC_EXPLAIN_ELEMENT, 4, 2);
	assert_int_equal(r->nodes[4].term, 3);
	assert_node(r, 5, "zero", USC_EXPLAIN_ELEMENT, 0, 1);
	assert_line(r, "  l  parameter f32[2,3] [1,0:3] (3 elements reduced)"
		       "  parameter 0");
	assert_line(r, "    l  parameter f32[2,3] [1,2]  (term 1 of 3)  "
		       "parameter 0");
	usc_explain_report_destroy(r);

	/* rw[1]: the window v[1:4], terms v[3], v[1], v[2]. */
	r = sums(2, 1, 3);
	assert_node(r, 1, "v", USC_EXPLAIN_SET, 0, 1);
	assert_int_equal(r->nodes[1].count, 3);
	assert_string_equal(r->nodes[1].set, "[1:4]");
	assert_node(r, 2, "v", USC_EXPLAIN_ELEMENT, 3, 2);
	assert_node(r, 3, "v", USC_EXPLAIN_ELEMENT, 1, 2);
	assert_node(r, 4, "v", USC_EXPLAIN_ELEMENT, 2, 2);
	assert_node(r, 5, "zero", USC_EXPLAIN_ELEMENT, 0, 1);
	usc_explain_report_destroy(r);

	/* rw[0]: the padding is left out, v[0:2]; -7 before 1. */
	r = sums(2, 0, 3);
	assert_int_equal(r->nodes[1].count, 2);
	assert_string_equal(r->nodes[1].set, "[0:2]");
	assert_node(r, 2, "v", USC_EXPLAIN_ELEMENT, 1, 2);
	assert_node(r, 3, "v", USC_EXPLAIN_ELEMENT, 0, 2);
	usc_explain_report_destroy(r);
}

/*
 * A dot whose sum cancels (docs/explain.md shows this tree): bf16
 * u = [16, 1.5, -16], w = [16, 1.0078125, 16] (1 + 2^-7), d = u . w in
 * bf16.  By hand (bf16: 8 significant bits, ulp = 2^-7 in [1, 2), 2 in
 * [256, 512)):
 *   products: 16*16 = 256 and -16*16 = -256, exact; 1.5 * (1 + 2^-7)
 *     = 1.51171875 = 193.5 ulps of 2^-7, a tie, rounded to even 194:
 *     1.515625, local = ref err = +0.5.
 *   the sequential sum in bf16: 256 + 1.515625 = 257.515625 rounds to
 *     258 (ulp 2 there); 258 - 256 = 2: ref 2.  Exact: 1.51171875.
 *     ref err = (2 - 1.51171875) / 2^-7 = +62.5; the dot's own rounding
 *     of 1.51171875 is the same tie as above: local +0.5.
 *   The dot is the kernel's only op that rounds: its contribution is
 *     the whole reference error, +62.5.
 *   Terms by |exact|: 256 (u[0,0] x w[0,0]) and 256 (u[0,2] x w[2,0]),
 *     the earlier first, then 1.51171875 (u[0,1] x w[1,0]);
 *     sum|ref| = 256 + 1.515625 + 256 = 513.515625, sum|exact| =
 *     513.51171875, the largest |ref err| +0.5 at u[0,1] x w[1,0].
 */
static const char cancel_text[] =
	"HloModule cancel\n"
	"\n"
	"ENTRY %main (u: bf16[1,3], w: bf16[3,1]) -> bf16[1,1] {\n"
	"  %u = bf16[1,3]{1,0} parameter(0)\n"
	"  %w = bf16[3,1]{1,0} parameter(1)\n"
	"  ROOT %d = bf16[1,1]{1,0} dot(%u, %w), lhs_contracting_dims={1}, "
	"rhs_contracting_dims={0}, metadata={op_name=\"jit(f)/dot\" "
	"source_file=\"/src/model.py\" source_line=7}\n"
	"}\n";

static const char cancel_golden[] =
	"d  dot bf16[1,1] [0,0]  model.py:7\n"
	"  ref 2  exact 1.51171875  local +0.5  ref err +62.5  contrib +62.5  "
	"env [2]\n"
	"  d  dot products u[0,0:3] x w[0:3,0] (3 products)\n"
	"    sum|ref| 513.515625  sum|exact| 513.511719  max|ref err| +0.5 at "
	"u[0,1] x w[1,0]\n"
	"    d  dot product u[0,0] x w[0,0]  (term 1 of 3)\n"
	"      ref 256  exact 256  local 0  ref err 0\n"
	"      u  parameter bf16[1,3] [0,0]  parameter 0\n"
	"        ref 16  exact 16  ref err 0  env [16]\n"
	"      w  parameter bf16[3,1] [0,0]  parameter 1\n"
	"        ref 16  exact 16  ref err 0  env [16]\n"
	"    d  dot product u[0,2] x w[2,0]  (term 2 of 3)\n"
	"      ref -256  exact -256  local 0  ref err 0\n"
	"      u  parameter bf16[1,3] [0,2]  parameter 0\n"
	"        ref -16  exact -16  ref err 0  env [-16]\n"
	"      w  parameter bf16[3,1] [2,0]  parameter 1\n"
	"        ref 16  exact 16  ref err 0  env [16]\n"
	"    d  dot product u[0,1] x w[1,0]  (term 3 of 3)\n"
	"      ref 1.515625  exact 1.51171875  local +0.5  ref err +0.5\n"
	"      u  parameter bf16[1,3] [0,1]  parameter 0\n"
	"        ref 1.5  exact 1.5  ref err 0  env [1.5]\n"
	"      w  parameter bf16[3,1] [1,0]  parameter 1\n"
	"        ref 1.0078125  exact 1.0078125  ref err 0  env [1.0078125]\n";

static void test_dot_cancellation(void **state)
{
	static const kfile in[] = {
		{"u", USC_BF16, 2, {1, 3}, {16, 1.5, -16}},
		{"w", USC_BF16, 2, {3, 1}, {16, 1.0078125, 16}},
	};
	static const kfile dev[] = {{"d", USC_BF16, 2, {1, 1}, {2}}};
	usc_explain_report *r;
	char *text, *tree;

	(void)state;
	kattribute = true;
	r = explain_kernel(cancel_text, in, 2, dev, 1, 0, 0,
			   USC_EXPLAIN_TERMS_DEFAULT);
	kattribute = false;
	text = printed(r);
	/* The tree, from its first line on. */
	tree = strstr(text, "\nd  dot");
	assert_non_null(tree);
	assert_text(tree + 1, cancel_golden);
	free(text);
	assert_true(r->nodes[0].ref == 2.0);
	assert_true(r->nodes[0].ref_err_ulps == 62.5);
	assert_true(r->nodes[0].contrib == 62.5);
	assert_true(r->nodes[1].sum_abs_ref == 513.515625);
	assert_true(r->nodes[1].sum_abs_exact == 513.51171875);
	assert_true(r->nodes[1].max_abs_ref_err == 0.5);
	assert_true(r->nodes[8].ref == 1.515625);
	assert_true(r->nodes[8].exact_mid == 1.51171875);
	assert_true(r->nodes[8].local_ulps == 0.5);
	usc_explain_report_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_results_file),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_concatenate_pad),
		cmocka_unit_test(test_dynamic_slice_gather),
		cmocka_unit_test(test_bitcast_copy),
		cmocka_unit_test(test_dot_terms),
		cmocka_unit_test(test_reduce_terms),
		cmocka_unit_test(test_dot_cancellation),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
