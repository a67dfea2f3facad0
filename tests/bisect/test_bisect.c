/*
 * Bisection with captured intermediates (src/analyze/bisect.c).
 *
 * The intermediates are made outside the code under test: each one is the
 * output of a sub-kernel (the kernel's text cut at that instruction, which
 * becomes the ROOT) evaluated in the reference domain.  A defect at op k
 * is op k's correct value moved by a fixed number of codes; everything
 * downstream is re-derived from the defective value by sub-kernels in
 * which op k is a parameter.  Bisection must then name op k exactly, for
 * every k, and "all inside" for the correct intermediates.
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
#include "ulpscope/bisect.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

static char tmpdir[128];

static void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

/* Evaluates HLO text in the reference domain with inputs; output 0. */
static usc_tensor *eval_text(const char *text, usc_tensor *const *in,
			     size_t n)
{
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_tensor *out = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "sub", &f, &err) != USC_OK)
		fail_msg("parse: %s\n%s", err.message, text);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 USC_OK);
	for (size_t i = 0; i < n; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("bind %zu: %s", i, err.message);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s\n%s", err.message, text);
	assert_int_equal(usc_eval_take_output(ev, 0, &out, &err), USC_OK);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	return out;
}

/* A copy of t with every element moved by `codes` encodings (magnitude). */
static usc_tensor *perturb(const usc_tensor *t, uint64_t codes)
{
	usc_tensor_spec s = usc_tensor_spec_of(t);
	usc_tensor *o = NULL;
	usc_error err;

	assert_int_equal(usc_tensor_create(s.dtype, s.rank, s.dims, &o, &err),
			 USC_OK);
	for (uint64_t k = 0; k < usc_tensor_count(t); k++) {
		uint64_t b;

		usc_tensor_get_bits(t, k, &b);
		/* Sign-magnitude: adding to the bits grows the magnitude. */
		assert_int_equal(usc_tensor_set_bits(o, k, b + codes), USC_OK);
	}
	return o;
}

static void save(const usc_tensor *t, const char *name, char *path,
		 size_t cap)
{
	usc_error err;

	path_of(path, cap, name);
	if (usc_tensor_write_npy(t, path, &err) != USC_OK)
		fail_msg("write %s: %s", path, err.message);
}

/* ------------------------------------------------- the small kernel */

/* The ops of the small kernel, in order; the last is the root. */
static const char *const ops[] = {
	"m = f32[8] multiply(x, y), metadata={op_name=\"jit(f)/mul\" "
	"source_file=\"model.py\" source_line=42}",
	"a = f32[8] add(m, x)",
	"e = f32[8] exponential(a)",
	"d = f32[8] divide(e, y)",
	"c = bf16[8] convert(d)",
};
static const char *const names[] = {"m", "a", "e", "d", "c"};
#define NOPS 5

/*
 * The flat kernel cut at op j (its ROOT), with op k (k < j) replaced by
 * parameter(2); k < 0: none replaced.
 */
static void sub_kernel(char *buf, size_t cap, int j, int k)
{
	size_t len = (size_t)snprintf(buf, cap,
				      "HloModule sub\nENTRY main {\n"
				      "  x = f32[8] parameter(0)\n"
				      "  y = f32[8] parameter(1)\n");

	for (int i = 0; i <= j; i++) {
		const char *root = i == j ? "ROOT " : "";

		if (i == k)
			len += (size_t)snprintf(buf + len, cap - len,
						"  %s%s = f32[8] parameter(2)\n",
						root, names[i]);
		else
			len += (size_t)snprintf(buf + len, cap - len,
						"  %s%s\n", root, ops[i]);
	}
	snprintf(buf + len, cap - len, "}\n");
}

static const char fused_kernel[] =
	"HloModule fused\n"
	"fc {\n"
	"  x = f32[8] parameter(0)\n"
	"  y = f32[8] parameter(1)\n"
	"  m = f32[8] multiply(x, y), metadata={op_name=\"jit(f)/mul\" "
	"source_file=\"model.py\" source_line=42}\n"
	"  a = f32[8] add(m, x)\n"
	"  e = f32[8] exponential(a)\n"
	"  d = f32[8] divide(e, y)\n"
	"  ROOT c = bf16[8] convert(d)\n"
	"}\n"
	"ENTRY main {\n"
	"  p = f32[8] parameter(0)\n"
	"  q = f32[8] parameter(1)\n"
	"  ROOT f = bf16[8] fusion(p, q), kind=kLoop, calls=fc\n"
	"}\n";

static usc_tensor *inputs[2];
static char in_path[2][512];

static void make_inputs(void)
{
	int64_t dims[1] = {8};
	usc_error err;

	for (int i = 0; i < 2; i++) {
		assert_int_equal(usc_tensor_create(USC_F32, 1, dims,
						   &inputs[i], &err),
				 USC_OK);
		for (uint64_t k = 0; k < 8; k++) {
			/* x in (0, 1], y in [0.5, 2): values with no
			 * overflow through exp. */
			double v = i == 0 ? 0.1 * (double)(k + 1)
					  : 0.5 + 0.19 * (double)k;
			uint64_t bits;

			assert_int_equal(usc_encode_double(USC_F32, v,
							   NULL, &bits, NULL),
					 USC_OK);
			usc_tensor_set_bits(inputs[i], k, bits);
		}
	}
	save(inputs[0], "x.npy", in_path[0], sizeof in_path[0]);
	save(inputs[1], "y.npy", in_path[1], sizeof in_path[1]);
}

/*
 * The values of every op with a defect at op k (k < 0: none), written as
 * op_<name>.npy; paths receive the files.
 */
static void make_captures(int k, char paths[NOPS][512])
{
	usc_tensor *bad = NULL;
	char text[4096], file[64];

	for (int j = 0; j < NOPS; j++) {
		usc_tensor *v;

		if (k >= 0 && j > k) {
			usc_tensor *args[3] = {inputs[0], inputs[1], bad};

			sub_kernel(text, sizeof text, j, k);
			v = eval_text(text, args, 3);
		} else {
			sub_kernel(text, sizeof text, j, -1);
			v = eval_text(text, inputs, 2);
			if (j == k) {
				/*
				 * 64 codes: far outside a strict envelope
				 * (one value), for f32 and bf16 alike.
				 */
				bad = perturb(v, 64);
				usc_tensor_destroy(v);
				v = NULL;
			}
		}
		snprintf(file, sizeof file, "op_%s.npy", names[j]);
		save(v ? v : bad, file, paths[j], sizeof paths[j]);
		usc_tensor_destroy(v);
	}
	usc_tensor_destroy(bad);
}

/* Bisects hlo with the captures (in reverse order: the report sorts). */
static usc_bisect_report *bisect(const char *hlo, char paths[NOPS][512],
				 bool percent)
{
	static char pnames[NOPS][8];
	usc_bisect_capture caps[NOPS - 1];
	const char *ins[2] = {in_path[0], in_path[1]};
	const char *dev[1] = {paths[NOPS - 1]};
	usc_bisect_request req = usc_bisect_request_default();
	usc_bisect_report *r = NULL;
	usc_error err;

	for (int j = 0; j < NOPS - 1; j++) {
		snprintf(pnames[j], sizeof pnames[j], "%s%s",
			 percent && j % 2 ? "%" : "", names[j]);
		caps[NOPS - 2 - j].name = pnames[j];
		caps[NOPS - 2 - j].source = paths[j];
	}
	req.hlo_path = hlo;
	req.inputs = ins;
	req.input_count = 2;
	req.captures = caps;
	req.capture_count = NOPS - 1;
	req.devices = dev;
	req.device_count = 1;
	if (usc_bisect_run(&req, &r, &err) != USC_OK)
		fail_msg("bisect: %s", err.message);
	return r;
}

static void write_text(const char *name, const char *text, char *path,
		       size_t cap)
{
	FILE *f;

	path_of(path, cap, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void check_names_op(const char *hlo, bool fused)
{
	char paths[NOPS][512];
	usc_bisect_report *r;

	/* Correct intermediates: all inside. */
	make_captures(-1, paths);
	r = bisect(hlo, paths, fused);
	assert_false(r->found);
	assert_int_equal(r->step_count, NOPS);
	for (int j = 0; j < NOPS; j++) {
		assert_string_equal(r->steps[j].instr->name,
				    fused && j == NOPS - 1 ? "f" : names[j]);
		assert_int_equal(r->steps[j].outside, 0);
		assert_int_equal(r->steps[j].count, 8);
	}
	assert_string_equal(r->steps[0].op_name, "jit(f)/mul");
	assert_string_equal(r->steps[0].source_loc, "model.py:42");
	assert_non_null(strstr(r->reason, "every captured tensor (5) inside its strict envelope"));
	usc_bisect_report_destroy(r);

	/* A defect at each op in turn: that op is named. */
	for (int k = 0; k < NOPS; k++) {
		make_captures(k, paths);
		r = bisect(hlo, paths, fused);
		assert_true(r->found);
		if (strcmp(r->steps[r->first_bad].instr->name,
			   k == NOPS - 1 && fused ? "f" : names[k]) != 0)
			fail_msg("defect at %s, bisect named %s: %s", names[k],
				 r->steps[r->first_bad].instr->name,
				 r->reason);
		assert_int_equal(r->first_bad, k);
		/* Every element of the defective op is outside. */
		assert_int_equal(r->steps[k].outside, 8);
		assert_true(r->steps[k].worst_outside_ulps >= 63);
		usc_bisect_report_destroy(r);
	}
}

static void test_flat_kernel(void **state)
{
	char text[4096], hlo[512];

	(void)state;
	sub_kernel(text, sizeof text, NOPS - 1, -1);
	write_text("flat.hlo", text, hlo, sizeof hlo);
	check_names_op(hlo, false);
}

/* The same ops inside a fusion: instructions named inside it. */
static void test_fused_kernel(void **state)
{
	char hlo[512];

	(void)state;
	write_text("fused.hlo", fused_kernel, hlo, sizeof hlo);
	check_names_op(hlo, true);
}

/* ------------------------------------------------------------ errors */

static usc_status bisect_one(const char *hlo, const char *name,
			     const char *src, usc_error *err)
{
	usc_bisect_capture cap = {name, src};
	const char *ins[2] = {in_path[0], in_path[1]};
	usc_bisect_request req = usc_bisect_request_default();
	usc_bisect_report *r = NULL;
	usc_status st;

	req.hlo_path = hlo;
	req.inputs = ins;
	req.input_count = 2;
	req.captures = &cap;
	req.capture_count = 1;
	st = usc_bisect_run(&req, &r, err);
	usc_bisect_report_destroy(r);
	return st;
}

static void test_errors(void **state)
{
	char hlo[512], paths[NOPS][512], missing[512], text[4096];
	usc_error err;
	char reduce_hlo[512];

	(void)state;
	write_text("fused.hlo", fused_kernel, hlo, sizeof hlo);
	make_captures(-1, paths);

	/* An unknown name: the message lists what can be captured. */
	assert_int_equal(bisect_one(hlo, "zz", paths[0], &err),
			 USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "no instruction 'zz'"));
	assert_non_null(strstr(err.message, "x y m a e d c p q f"));

	/* A file of the wrong shape (e is f32[8], c is bf16[8]). */
	assert_int_not_equal(bisect_one(hlo, "e", paths[NOPS - 1], &err),
			     USC_OK);
	assert_non_null(strstr(err.message, paths[NOPS - 1]));
	assert_non_null(strstr(err.message, "instruction 'e'"));

	/* A missing file. */
	path_of(missing, sizeof missing, "no_such.npy");
	assert_int_not_equal(bisect_one(hlo, "%e", missing, &err), USC_OK);
	assert_non_null(strstr(err.message, missing));

	/* An instruction of a reduce body: evaluated once per element. */
	snprintf(text, sizeof text,
		 "HloModule r\n"
		 "add_f {\n"
		 "  s0 = f32[] parameter(0)\n"
		 "  s1 = f32[] parameter(1)\n"
		 "  ROOT s = f32[] add(s0, s1)\n"
		 "}\n"
		 "ENTRY main {\n"
		 "  x = f32[8] parameter(0)\n"
		 "  y = f32[8] parameter(1)\n"
		 "  z = f32[] constant(0)\n"
		 "  m = f32[8] multiply(x, y)\n"
		 "  ROOT r = f32[] reduce(m, z), dimensions={0}, "
		 "to_apply=add_f\n"
		 "}\n");
	write_text("reduce.hlo", text, reduce_hlo, sizeof reduce_hlo);
	assert_int_equal(bisect_one(reduce_hlo, "s", paths[0], &err),
			 USC_EINVAL);
	assert_non_null(strstr(err.message, "evaluates several times"));
	/* Its operand at the entry is fine. */
	assert_int_equal(bisect_one(reduce_hlo, "m", paths[0], &err), USC_OK);
}

/* ------------------------------------------- a real catalogue kernel */

/*
 * layer_norm_bf16 as XLA:CPU compiled it (data/examples/layer_norm_bf16/
 * normal_s0): seven entry fusions.  The entry signature and layout are
 * dropped so that its instructions can be replaced and re-rooted.
 */
static const char *const ln_instrs[] = {
	"wrapped_convert", "wrapped_reduce-window", "wrapped_reduce",
	"subtract_multiply_fusion", "wrapped_reduce-window.1",
	"add_rsqrt_fusion", "add_convert_fusion",
};
#define NLN 7

static char *ln_text;      /* the kernel, signature dropped */
static usc_tensor *ln_in[3];

/* Finds the line of the entry that defines name: "  %name = ...". */
static char *ln_line(char *text, const char *name, char **end)
{
	char key[128];
	char *p;

	snprintf(key, sizeof key, "  %%%s = ", name);
	p = strstr(text, key);
	if (!p) {
		snprintf(key, sizeof key, "  ROOT %%%s = ", name);
		p = strstr(text, key);
	}
	assert_non_null(p);
	*end = strchr(p, '\n');
	assert_non_null(*end);
	return p;
}

/* The kernel cut at entry instruction j, instruction k a parameter. */
static char *ln_sub(int j, int k, const char *k_shape)
{
	size_t cap = strlen(ln_text) + 4096;
	char *t = malloc(cap), *p, *e, *out = malloc(cap);
	const char *entry;

	assert_non_null(t);
	assert_non_null(out);
	strcpy(t, ln_text);
	/* The old ROOT is an ordinary instruction now. */
	p = strstr(t, "  ROOT %add_convert_fusion");
	assert_non_null(p);
	memmove(p + 2, p + 7, strlen(p + 7) + 1);
	entry = strstr(t, "ENTRY");
	assert_non_null(entry);
	/* Rebuild: everything, with line j rooted and line k replaced. */
	out[0] = '\0';
	p = ln_line(t, ln_instrs[j], &e);
	if (k >= 0) {
		char *kp, *ke;

		kp = ln_line(t, ln_instrs[k], &ke);
		if (kp < p) {
			strncat(out, t, (size_t)(kp - t));
			snprintf(out + strlen(out), cap - strlen(out),
				 "  %%%s = %s parameter(3)", ln_instrs[k],
				 k_shape);
			strncat(out, ke, (size_t)(p - ke));
		} else {
			strncat(out, t, (size_t)(p - t));
		}
	} else {
		strncat(out, t, (size_t)(p - t));
	}
	strcat(out, "  ROOT ");
	strncat(out, p + 2, (size_t)(e - (p + 2)));
	/* Instructions after the root are dropped: close the entry. */
	strcat(out, "\n}\n");
	free(t);
	return out;
}

static void ln_setup(void)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char path[1024], *text = NULL, *sig, *brace, *nl;
	size_t len;
	usc_error err;
	int64_t d2[2] = {8, 128}, d1[1] = {128};

	assert_non_null(src);
	snprintf(path, sizeof path,
		 "%s/data/examples/layer_norm_bf16/normal_s0/kernel.hlo", src);
	assert_int_equal(usc__read_file(path, &text, &len, &err), USC_OK);
	/* Header: "HloModule NAME" only. */
	nl = strchr(text, ',');
	sig = strchr(text, '\n');
	assert_true(nl && sig && nl < sig);
	memmove(nl, sig, strlen(sig) + 1);
	/* "ENTRY %main.3 (...) -> bf16[8,128] {" -> "ENTRY %main.3 {". */
	sig = strstr(text, "ENTRY %main.3 ");
	assert_non_null(sig);
	sig += strlen("ENTRY %main.3 ");
	brace = strchr(sig, '{');
	memmove(sig, brace, strlen(brace) + 1);
	ln_text = strdup(text);
	usc__free(text);
	for (int i = 0; i < 3; i++) {
		usc_tensor_spec s = {USC_BF16, i ? 1u : 2u,
				     i ? d1 : d2, NULL};

		snprintf(path, sizeof path,
			 "%s/data/examples/layer_norm_bf16/normal_s0/"
			 "input_%d.npy",
			 src, i);
		assert_int_equal(usc_tensor_read(path, &s, 0, &ln_in[i], &err),
				 USC_OK);
	}
}

static const char *ln_shape(int k)
{
	static const char *const shapes[NLN] = {
		"f32[8,128]{1,0}", "f32[8,4]{1,0}", "f32[8]{0}",
		"f32[8,128]{1,0}", "f32[8,4]{1,0}", "f32[8]{0}",
		"bf16[8,128]{1,0}",
	};
	return shapes[k];
}

/* Writes the case directory of a defect at k (k < 0: none). */
static void ln_case(int k, const char *dir)
{
	const char *src = getenv("USC_SOURCE_DIR");
	usc_tensor *bad = NULL;
	char cmd[2048], path[1024];
	usc_error err;

	snprintf(cmd, sizeof cmd,
		 "rm -rf '%s' && mkdir -p '%s' && cp "
		 "%s/data/examples/layer_norm_bf16/normal_s0/* '%s'/",
		 dir, dir, src, dir);
	assert_int_equal(system(cmd), 0);
	for (int j = 0; j < NLN; j++) {
		usc_tensor *v;
		char *t;

		if (k >= 0 && j > k) {
			usc_tensor *args[4] = {ln_in[0], ln_in[1], ln_in[2],
					       bad};

			t = ln_sub(j, k, ln_shape(k));
			v = eval_text(t, args, 4);
		} else {
			t = ln_sub(j, -1, NULL);
			v = eval_text(t, ln_in, 3);
			if (j == k) {
				/*
				 * 2^16 codes of f32 (0.8 %), 16 of bf16 (6 %):
				 * beyond any reassociation of these sums.
				 */
				bad = perturb(v, j == NLN - 1 ? 16 : 65536);
				usc_tensor_destroy(v);
				v = NULL;
			}
		}
		free(t);
		if (j == NLN - 1) {
			/* The root is the device output; untouched without
			 * a defect: XLA:CPU's own output. */
			if (k < 0) {
				usc_tensor_destroy(v);
				break;
			}
			snprintf(path, sizeof path, "%s/device_0.npy", dir);
		} else {
			snprintf(path, sizeof path, "%s/intermediate_%s.npy",
				 dir, ln_instrs[j]);
		}
		assert_int_equal(usc_tensor_write_npy(v ? v : bad, path, &err),
				 USC_OK);
		usc_tensor_destroy(v);
	}
	usc_tensor_destroy(bad);
}

static void test_layer_norm(void **state)
{
	char dir[256];
	usc_bisect_report *r = NULL;
	usc_error err;

	(void)state;
	ln_setup();
	snprintf(dir, sizeof dir, "%s/ln_case", tmpdir);
	ln_case(-1, dir);
	if (usc_bisect_case(dir, NULL, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	/* case.json: platform cpu, fast math off -> xla-cpu. */
	assert_string_equal(r->profile.name, "xla-cpu");
	assert_int_equal(r->step_count, NLN);
	assert_false(r->found);
	for (int j = 0; j < NLN; j++)
		assert_string_equal(r->steps[j].instr->name, ln_instrs[j]);
	usc_bisect_report_destroy(r);
	for (int k = 0; k < NLN; k++) {
		ln_case(k, dir);
		if (usc_bisect_case(dir, NULL, &r, &err) != USC_OK)
			fail_msg("%s", err.message);
		assert_true(r->found);
		if (r->first_bad != (size_t)k)
			fail_msg("defect at %s, bisect named %s: %s",
				 ln_instrs[k],
				 r->steps[r->first_bad].instr->name, r->reason);
		assert_string_equal(r->steps[r->first_bad].instr->name,
				    ln_instrs[k]);
		usc_bisect_report_destroy(r);
	}
	for (int i = 0; i < 3; i++)
		usc_tensor_destroy(ln_in[i]);
	free(ln_text);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/usc_bisect_test_XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	make_inputs();
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	usc_tensor_destroy(inputs[0]);
	usc_tensor_destroy(inputs[1]);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_kernel),
		cmocka_unit_test(test_fused_kernel),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_layer_norm),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
