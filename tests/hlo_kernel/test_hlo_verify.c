/*
 * The verifier: every module of a corpus verifies (except the files
 * listed below, with the reason they are invalid), and every rule rejects
 * a hand-written module that breaks it with the exact message expected.
 * The expected messages are written by hand from the rule: the sizes in
 * them are derived from XLA's operation semantics, not from running the
 * verifier.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"

#include "hlo/corpus_dir.h"

/* A corpus file that is not valid HLO, and the first error it gives. */
typedef struct known_invalid {
	const char *file;
	const char *error;
} known_invalid;

/*
 * XLA's corpus: print_indexing_test.hlo declares transpose 'b' as
 * f32[512,256] with the identity permutation dimensions={0,1} of an
 * f32[256,512] operand; XLA's print_indexing tool reads it without running
 * the verifier (its expected output only needs the dot's indexing maps).
 */
static const known_invalid xla_invalid[] = {
	{"xla__tools__print_indexing_test.hlo",
	 "10:3: error: transpose 'b' has shape f32[512,256], expected "
	 "f32[256,512] (the operand's dims in the order of dimensions)\n"
	 "  in computation 'entry'"},
};

/*
 * The project's files: bad_reshape.hlo reshapes 3 * 5 = 15 elements into
 * 4 * 4 = 16 (its ROOT is on line 8, the name in column 8).
 */
static const known_invalid own_invalid[] = {
	{"bad_reshape.hlo",
	 "8:8: error: reshape 'r' has 16 elements, but its operand has 15\n"
	 "  in computation 'main' of module 'bad_reshape'"},
};

static bool xla_mode;

typedef struct verify_counts {
	size_t files, modules, verified, invalid;
} verify_counts;

/*
 * Verifies every module of every HLO file of dir: each verifies, or its
 * file is listed in inv and fails with exactly the listed message.
 */
static void verify_dir(const char *dir, const known_invalid *inv,
		       size_t ninv, verify_counts *c)
{
	char path[8192], *names[512];
	size_t n, i, k, j;

	n = corpus_list(dir, names, USC__ARRAY_LEN(names));
	for (i = 0; i < n; i++) {
		const char *expect = NULL;
		usc_hlo_file *f = NULL;
		usc_error err;

		for (j = 0; j < ninv; j++)
			if (strcmp(inv[j].file, names[i]) == 0)
				expect = inv[j].error;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s", err.message);
		for (k = 0; k < usc_hlo_file_module_count(f); k++) {
			usc_status st = usc_hlo_verify(
				usc_hlo_file_module(f, k), &err);

			c->modules++;
			if (st == USC_OK) {
				c->verified++;
				continue;
			}
			if (!expect)
				fail_msg("%s module %zu: %s", names[i], k,
					 err.message);
			assert_int_equal(st, USC_EVERIFY);
			assert_string_equal(err.message, expect);
			c->invalid++;
		}
		usc_hlo_file_destroy(f);
		free(names[i]);
	}
	c->files += n;
}

/*
 * XLA's corpus (60 files at least), or the project's own files: the 7 of
 * tests/hlo/corpus and the 30 or more of the kernel catalogue.
 */
static void test_corpus(void **state)
{
	verify_counts c = {0, 0, 0, 0};
	char dir[4096];

	(void)state;
	if (xla_mode) {
		corpus_xla_dir_or_skip(dir, sizeof dir);
		verify_dir(dir, xla_invalid, USC__ARRAY_LEN(xla_invalid), &c);
		assert_true(c.files >= 60);
		assert_int_equal(c.invalid, USC__ARRAY_LEN(xla_invalid));
	} else {
		corpus_own_dir(dir, sizeof dir, "tests/hlo/corpus");
		verify_dir(dir, own_invalid, USC__ARRAY_LEN(own_invalid), &c);
		assert_true(c.files >= 7);
		assert_int_equal(c.invalid, USC__ARRAY_LEN(own_invalid));
		corpus_own_dir(dir, sizeof dir, "kernels");
		verify_dir(dir, NULL, 0, &c);
		assert_true(c.files >= 37);
	}
	print_message("corpus: %zu files, %zu modules, %zu verified, %zu "
		      "known invalid\n", c.files, c.modules, c.verified,
		      c.invalid);
}

static usc_hlo_file *parse(const char *text)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "t.hlo", &f, &err) != USC_OK)
		fail_msg("parse: %s", err.message);
	return f;
}

static void expect_ok(const char *text)
{
	usc_hlo_file *f = parse(text);
	usc_error err;

	if (usc_hlo_verify_file(f, &err) != USC_OK)
		fail_msg("unexpected: %s", err.message);
	usc_hlo_file_destroy(f);
}

/* The file-located message: "t.hlo:" and the module clause. */
static void expect_error(const char *text, const char *msg)
{
	usc_hlo_file *f = parse(text);
	usc_error err;

	assert_int_equal(usc_hlo_verify_file(f, &err), USC_EVERIFY);
	assert_int_equal(err.code, USC_EVERIFY);
	assert_string_equal(err.message, msg);
	usc_hlo_file_destroy(f);
}

#define HEAD "HloModule m\nENTRY e {\n"
#define CTX "\n  in computation 'e' of module 'm'"

static void test_elementwise(void **state)
{
	(void)state;
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  b = f32[8] parameter(1)\n"
			  "  ROOT add.5 = f32[4] add(a, b)\n}\n",
		     "t.hlo:5:8: error: add 'add.5' operand 1 has shape "
		     "f32[8], expected f32[4] (the result's dims)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  b = s32[4] parameter(1)\n"
			  "  ROOT m = f32[4] multiply(a, b)\n}\n",
		     "t.hlo:5:8: error: multiply 'm' operand 1 has shape "
		     "s32[4], expected f32[4] (the result's type)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT n = f32[4] negate(a, a)\n}\n",
		     "t.hlo:4:8: error: negate 'n' has 2 operands, expected 1"
		     CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT c = f32[4] compare(a, a), direction=LT\n}\n",
		     "t.hlo:4:8: error: compare 'c' has element type f32, "
		     "expected pred" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  b = s32[4] parameter(1)\n"
			  "  ROOT c = pred[4] compare(a, b), direction=LT\n}\n",
		     "t.hlo:5:8: error: compare 'c' operand 1 has element "
		     "type s32, expected f32 (operand 0's)" CTX);
	expect_error(HEAD "  p = pred[2] parameter(0)\n"
			  "  a = f32[4] parameter(1)\n"
			  "  ROOT s = f32[4] select(p, a, a)\n}\n",
		     "t.hlo:5:8: error: select 's' operand 0 has shape "
		     "pred[2], expected pred[4] (the result's dims or a "
		     "scalar)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT s = f32[4] select(a, a, a)\n}\n",
		     "t.hlo:4:8: error: select 's' operand 0 has element type "
		     "f32, expected pred" CTX);
	expect_error(HEAD "  lo = f32[3] parameter(0)\n"
			  "  x = f32[4] parameter(1)\n"
			  "  hi = f32[] parameter(2)\n"
			  "  ROOT c = f32[4] clamp(lo, x, hi)\n}\n",
		     "t.hlo:6:8: error: clamp 'c' operand 0 has shape f32[3], "
		     "expected f32[4] (the result's dims or a scalar)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT c = s32[5] convert(a)\n}\n",
		     "t.hlo:4:8: error: convert 'c' operand 0 has shape "
		     "f32[4], expected f32[5] (the result's dims)" CTX);
	/* 32-bit elements split into 4 bytes: a new minor dim of 4. */
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT b = u8[4,2] bitcast-convert(a)\n}\n",
		     "t.hlo:4:8: error: bitcast-convert 'b' has shape u8[4,2], "
		     "expected u8[4,4] (32-bit f32 elements as 8-bit u8)" CTX);
	expect_error(HEAD "  a = u8[4,2] parameter(0)\n"
			  "  ROOT b = f32[4] bitcast-convert(a)\n}\n",
		     "t.hlo:4:8: error: bitcast-convert 'b' converts 8-bit u8 "
		     "to 32-bit f32, so the operand's minor dimension must "
		     "have size 4" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT r = f32[4] reduce-precision(a), "
			  "exponent_bits=5\n}\n",
		     "t.hlo:4:8: error: reduce-precision 'r' has no "
		     "mantissa_bits attribute" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT r = bf16[4] reduce-precision(a), "
			  "exponent_bits=8, mantissa_bits=7\n}\n",
		     "t.hlo:4:8: error: reduce-precision 'r' operand 0 has "
		     "shape f32[4], expected bf16[4] (the result's type)" CTX);
}

static void test_data_movement(void **state)
{
	(void)state;
	expect_error(HEAD "  a = f32[3] parameter(0)\n"
			  "  ROOT b = f32[4,5] broadcast(a), dimensions={1}\n}\n",
		     "t.hlo:4:8: error: broadcast 'b' maps operand dimension 0 "
		     "(size 3) to result dimension 1 (size 5)" CTX);
	expect_error(HEAD "  a = f32[3] parameter(0)\n"
			  "  ROOT b = f32[3,3] broadcast(a), dimensions={0,1}\n}\n",
		     "t.hlo:4:8: error: broadcast 'b' has dimensions={0,1} "
		     "with 2 entries, expected 1 (the operand's rank)" CTX);
	expect_error(HEAD "  a = f32[4,3] parameter(0)\n"
			  "  ROOT r = f32[5,2] reshape(a)\n}\n",
		     "t.hlo:4:8: error: reshape 'r' has 10 elements, but its "
		     "operand has 12" CTX);
	expect_error(HEAD "  a = f32[2,3] parameter(0)\n"
			  "  ROOT t = f32[2,3] transpose(a), dimensions={1,0}\n}\n",
		     "t.hlo:4:8: error: transpose 't' has shape f32[2,3], "
		     "expected f32[3,2] (the operand's dims in the order of "
		     "dimensions)" CTX);
	expect_error(HEAD "  a = f32[2,2] parameter(0)\n"
			  "  ROOT t = f32[2,2] transpose(a), dimensions={0,0}\n}\n",
		     "t.hlo:4:8: error: transpose 't' dimensions={0,0} names "
		     "dimension 0 twice" CTX);
	/* ceil((10 - 0) / 3) = 4. */
	expect_error(HEAD "  a = f32[10] parameter(0)\n"
			  "  ROOT s = f32[3] slice(a), slice={[0:10:3]}\n}\n",
		     "t.hlo:4:8: error: slice 's' has shape f32[3], expected "
		     "f32[4] (ceil((limit - start) / stride) per dimension)"
		     CTX);
	expect_error(HEAD "  a = f32[10] parameter(0)\n"
			  "  ROOT s = f32[9] slice(a), slice={[2:11]}\n}\n",
		     "t.hlo:4:8: error: slice 's' slice range 0 [2:11:1] does "
		     "not fit dimension 0 of size 10" CTX);
	expect_error(HEAD "  a = f32[10,4] parameter(0)\n"
			  "  i = s32[] parameter(1)\n"
			  "  ROOT d = f32[2,4] dynamic-slice(a, i), "
			  "dynamic_slice_sizes={2,4}\n}\n",
		     "t.hlo:5:8: error: dynamic-slice 'd' has 1 start index "
		     "operand, expected 2 (the operand's rank)" CTX);
	expect_error(HEAD "  a = f32[10,4] parameter(0)\n"
			  "  i = s32[] parameter(1)\n"
			  "  j = f32[] parameter(2)\n"
			  "  ROOT d = f32[2,4] dynamic-slice(a, i, j), "
			  "dynamic_slice_sizes={2,4}\n}\n",
		     "t.hlo:6:8: error: dynamic-slice 'd' start index operand 2 "
		     "has shape f32[], expected an integer scalar" CTX);
	expect_error(HEAD "  a = f32[10,4] parameter(0)\n"
			  "  i = s32[] parameter(1)\n"
			  "  ROOT d = f32[2,4] dynamic-slice(a, i, i), "
			  "dynamic_slice_sizes={3,4}\n}\n",
		     "t.hlo:5:8: error: dynamic-slice 'd' has shape f32[2,4], "
		     "expected f32[3,4] (dynamic_slice_sizes)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  u = f32[5] parameter(1)\n"
			  "  i = s32[] parameter(2)\n"
			  "  ROOT d = f32[4] dynamic-update-slice(a, u, i)\n}\n",
		     "t.hlo:6:8: error: dynamic-update-slice 'd' update f32[5] "
		     "is larger than operand f32[4] in dimension 0" CTX);
	expect_error(HEAD "  a = f32[2,3] parameter(0)\n"
			  "  b = f32[4,3] parameter(1)\n"
			  "  ROOT c = f32[5,3] concatenate(a, b), dimensions={0}\n}\n",
		     "t.hlo:5:8: error: concatenate 'c' has size 5 in "
		     "dimension 0, but its operands' sizes there sum to 6" CTX);
	expect_error(HEAD "  a = f32[2,3] parameter(0)\n"
			  "  b = f32[4,2] parameter(1)\n"
			  "  ROOT c = f32[6,3] concatenate(a, b), dimensions={0}\n}\n",
		     "t.hlo:5:8: error: concatenate 'c' operand 1 has shape "
		     "f32[4,2], which does not match the result f32[6,3] "
		     "outside dimension 0" CTX);
	/* 1 + 2 + 4 + (4 - 1) * 2 = 13. */
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  z = f32[] constant(0)\n"
			  "  ROOT p = f32[12] pad(a, z), padding=1_2_2\n}\n",
		     "t.hlo:5:8: error: pad 'p' has shape f32[12], expected "
		     "f32[13] (lo + hi + size + (size - 1) * interior per "
		     "dimension)" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  z = f32[2] parameter(1)\n"
			  "  ROOT p = f32[4] pad(a, z), padding=0_0\n}\n",
		     "t.hlo:5:8: error: pad 'p' padding value has shape f32[2], "
		     "expected a f32 scalar" CTX);
	expect_error(HEAD "  ROOT i = s32[4,5] iota(), iota_dimension=2\n}\n",
		     "t.hlo:3:8: error: iota 'i' has iota_dimension=2, outside "
		     "its rank 2" CTX);
	expect_error(HEAD "  a = f32[4,5] parameter(0)\n"
			  "  ROOT r = f32[4,5] reverse(a), dimensions={2}\n}\n",
		     "t.hlo:4:8: error: reverse 'r' dimensions={2} names "
		     "dimension 2, outside the rank 2 of the operand" CTX);
}

#define ADD "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n" \
	    "  ROOT s = f32[] add(x, y)\n}\n"
#define RHEAD "HloModule m\n" ADD "ENTRY e {\n"

static void test_reductions(void **state)
{
	(void)state;
	/* Lines: 1 header, 2-6 add, 7 ENTRY, 8.. the body. */
	expect_error(RHEAD "  a = f32[4,5] parameter(0)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[5] reduce(a, z), dimensions={1}, "
			   "to_apply=add\n}\n",
		     "t.hlo:10:8: error: reduce 'r' has shape f32[5], expected "
		     "f32[4] (the input's dims without the reduced ones)" CTX);
	expect_error("HloModule m\n"
		     "add3 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
		     "  w = f32[] parameter(2)\n  ROOT s = f32[] add(x, y)\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[4,5] parameter(0)\n"
		     "  z = f32[] constant(0)\n"
		     "  ROOT r = f32[4] reduce(a, z), dimensions={1}, "
		     "to_apply=add3\n}\n",
		     "t.hlo:11:8: error: reduce 'r' applies 'add3', which has 3 "
		     "parameters, expected 2" CTX);
	expect_error(RHEAD "  a = f32[4,5] parameter(0)\n"
			   "  b = f32[4,5] parameter(1)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[4] reduce(a, b, z, z), dimensions={1}, "
			   "to_apply=add\n}\n",
		     "t.hlo:11:8: error: reduce 'r' has shape f32[4], expected a "
		     "tuple of 2 arrays (one per input)" CTX);
	expect_error(RHEAD "  a = f32[4,5] parameter(0)\n"
			   "  z = f32[2] parameter(1)\n"
			   "  ROOT r = f32[4] reduce(a, z), dimensions={1}, "
			   "to_apply=add\n}\n",
		     "t.hlo:10:8: error: reduce 'r' init value 0 has shape "
		     "f32[2], expected a scalar" CTX);
	/* (8 - 3) / 2 + 1 = 3 windows. */
	expect_error(RHEAD "  a = f32[8] parameter(0)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[4] reduce-window(a, z), "
			   "window={size=3 stride=2}, to_apply=add\n}\n",
		     "t.hlo:10:8: error: reduce-window 'r' has shape f32[4], "
		     "expected f32[3] (the window's output size per "
		     "dimension)" CTX);
	expect_error(RHEAD "  a = f32[8,2] parameter(0)\n"
			   "  z = f32[] constant(0)\n"
			   "  ROOT r = f32[3] reduce-window(a, z), "
			   "window={size=3 stride=2}, to_apply=add\n}\n",
		     "t.hlo:10:8: error: reduce-window 'r' has a window of 1 "
		     "dimensions, expected 2 (the operand's rank)" CTX);
	/*
	 * Lines: 1 header, 2-6 add, 7-11 ge, 12 ENTRY, 16 the ROOT.  Windows
	 * of 2 with stride 2 over 4: (4 - 2) / 2 + 1 = 2 sources.
	 */
	expect_error("HloModule m\n" ADD
		     "ge {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
		     "  ROOT c = pred[] compare(x, y), direction=GE\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[4] parameter(0)\n"
		     "  s = f32[3] parameter(1)\n"
		     "  z = f32[] constant(0)\n"
		     "  ROOT r = f32[4] select-and-scatter(a, s, z), "
		     "window={size=2 stride=2}, select=ge, scatter=add\n}\n",
		     "t.hlo:16:8: error: select-and-scatter 'r' source has shape "
		     "f32[3], expected f32[2] (the window's output size per "
		     "dimension)" CTX);
	expect_error(RHEAD "  a = f32[4] parameter(0)\n"
			   "  b = s32[4] parameter(1)\n"
			   "  ROOT r = (f32[4], s32[4]) sort(a, b), "
			   "dimensions={0}, to_apply=add\n}\n",
		     "t.hlo:10:8: error: sort 'r' applies 'add', which has 2 "
		     "parameters, expected 4" CTX);
	expect_error(RHEAD "  a = f32[4] parameter(0)\n"
			   "  b = f32[4] parameter(1)\n"
			   "  ROOT r = f32[5] map(a, b), dimensions={0}, "
			   "to_apply=add\n}\n",
		     "t.hlo:10:8: error: map 'r' operand 0 has shape f32[4], "
		     "expected f32[5] (the result's dims)" CTX);
}

static void test_linalg(void **state)
{
	(void)state;
	expect_error(HEAD "  a = f32[2,3] parameter(0)\n"
			  "  b = f32[4,5] parameter(1)\n"
			  "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, "
			  "rhs_contracting_dims={0}\n}\n",
		     "t.hlo:5:8: error: dot 'd' contracts lhs dimension 1 (size "
		     "3) with rhs dimension 0 (size 4)" CTX);
	expect_error(HEAD "  a = f32[2,3] parameter(0)\n"
			  "  b = f32[3,5] parameter(1)\n"
			  "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
			  "rhs_contracting_dims={0}\n}\n",
		     "t.hlo:5:8: error: dot 'd' has shape f32[2,4], expected "
		     "f32[2,5] (batch, then lhs free, then rhs free dims)" CTX);
	expect_error(HEAD "  a = f32[7,2,3] parameter(0)\n"
			  "  b = f32[7,3,5] parameter(1)\n"
			  "  ROOT d = f32[7,2,5] dot(a, b), lhs_batch_dims={0}, "
			  "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n",
		     "t.hlo:5:8: error: dot 'd' has lhs_batch_dims={0} and "
		     "rhs_batch_dims={} of different lengths" CTX);
	/* 8 - 3 + 1 = 6 outputs per spatial dim. */
	expect_error(HEAD "  x = f32[1,8,8,3] parameter(0)\n"
			  "  k = f32[3,3,3,16] parameter(1)\n"
			  "  ROOT c = f32[1,8,8,16] convolution(x, k), "
			  "window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n",
		     "t.hlo:5:8: error: convolution 'c' has shape f32[1,8,8,16], "
		     "expected f32[1,6,6,16] (batch / batch_group_count, kernel "
		     "output features, windowed spatial sizes)" CTX);
	expect_error(HEAD "  x = f32[1,8,8,3] parameter(0)\n"
			  "  k = f32[3,3,4,16] parameter(1)\n"
			  "  ROOT c = f32[1,6,6,16] convolution(x, k), "
			  "window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n",
		     "t.hlo:5:8: error: convolution 'c' has 3 input features, "
		     "expected 4 (kernel input features 4 times "
		     "feature_group_count 1)" CTX);
	expect_error(HEAD "  x = f32[1,8,8,3] parameter(0)\n"
			  "  k = f32[3,3,3,16] parameter(1)\n"
			  "  ROOT c = f32[1,7,6,16] convolution(x, k), "
			  "window={size=2x3}, dim_labels=b01f_01io->b01f\n}\n",
		     "t.hlo:5:8: error: convolution 'c' has window size 2 in "
		     "spatial dimension 0, but the kernel's size there is 3" CTX);
	/* Depthwise: 6 features in 3 groups of 2 input features each. */
	expect_ok(HEAD "  x = f32[2,10,6] parameter(0)\n"
		       "  k = f32[3,2,9] parameter(1)\n"
		       "  ROOT c = f32[2,5,9] convolution(x, k), "
		       "window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f, "
		       "feature_group_count=3\n}\n");
}

static void test_gather_scatter(void **state)
{
	(void)state;
	/* XLA's example: rows of a 3x4 matrix picked by 2 indices. */
	expect_ok(HEAD "  a = f32[3,4] parameter(0)\n"
		       "  i = s32[2,1] parameter(1)\n"
		       "  ROOT g = f32[2,4] gather(a, i), offset_dims={1}, "
		       "collapsed_slice_dims={0}, start_index_map={0}, "
		       "index_vector_dim=1, slice_sizes={1,4}\n}\n");
	expect_error(HEAD "  a = f32[3,4] parameter(0)\n"
			  "  i = s32[2,1] parameter(1)\n"
			  "  ROOT g = f32[2,3] gather(a, i), offset_dims={1}, "
			  "collapsed_slice_dims={0}, start_index_map={0}, "
			  "index_vector_dim=1, slice_sizes={1,4}\n}\n",
		     "t.hlo:5:8: error: gather 'g' has shape f32[2,3], expected "
		     "f32[2,4] (the indices' batch dims with the slice sizes at "
		     "offset_dims)" CTX);
	expect_error(HEAD "  a = f32[3,4] parameter(0)\n"
			  "  i = s32[2,1] parameter(1)\n"
			  "  ROOT g = f32[2,4] gather(a, i), offset_dims={1}, "
			  "collapsed_slice_dims={0}, start_index_map={0}, "
			  "index_vector_dim=1, slice_sizes={2,4}\n}\n",
		     "t.hlo:5:8: error: gather 'g' collapses operand dimension "
		     "0, whose slice size 2 is not 1" CTX);
	expect_error(HEAD "  a = f32[3,4] parameter(0)\n"
			  "  i = s32[2,2] parameter(1)\n"
			  "  ROOT g = f32[2,4] gather(a, i), offset_dims={1}, "
			  "collapsed_slice_dims={0}, start_index_map={0}, "
			  "index_vector_dim=1, slice_sizes={1,4}\n}\n",
		     "t.hlo:5:8: error: gather 'g' has start_index_map={0}, "
		     "expected 2 entries (the index vector's size)" CTX);
	expect_ok(RHEAD "  a = f32[3,4] parameter(0)\n"
			"  i = s32[2,1] parameter(1)\n"
			"  u = f32[2,4] parameter(2)\n"
			"  ROOT s = f32[3,4] scatter(a, i, u), "
			"update_window_dims={1}, inserted_window_dims={0}, "
			"scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
			"to_apply=add\n}\n");
	expect_error(RHEAD "  a = f32[3,4] parameter(0)\n"
			   "  i = s32[2,1] parameter(1)\n"
			   "  u = f32[3,4] parameter(2)\n"
			   "  ROOT s = f32[3,4] scatter(a, i, u), "
			   "update_window_dims={1}, inserted_window_dims={0}, "
			   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
			   "to_apply=add\n}\n",
		     "t.hlo:11:8: error: scatter 's' update dimension 0 has size "
		     "3, but the matching indices dimension 0 has 2" CTX);
	expect_error(RHEAD "  a = f32[3,4] parameter(0)\n"
			   "  i = s32[2,1] parameter(1)\n"
			   "  u = f32[2,5] parameter(2)\n"
			   "  ROOT s = f32[3,4] scatter(a, i, u), "
			   "update_window_dims={1}, inserted_window_dims={0}, "
			   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
			   "to_apply=add\n}\n",
		     "t.hlo:11:8: error: scatter 's' update window dimension 1 "
		     "(size 5) exceeds operand dimension 1 (size 4)" CTX);
}

static void test_structure(void **state)
{
	(void)state;
	/* Forward references are legal; a cycle through them is not. */
	expect_error(HEAD "  p = f32[2] parameter(0)\n"
			  "  a = f32[2] add(p, b)\n"
			  "  b = f32[2] multiply(a, p)\n"
			  "  ROOT r = f32[2] negate(b)\n}\n",
		     "t.hlo:5:3: error: multiply 'b' uses 'a', which depends "
		     "on it: the computation has a cycle" CTX);
	expect_error(HEAD "  ROOT a = f32[2] negate(a)\n}\n",
		     "t.hlo:3:8: error: negate 'a' uses 'a', which depends on "
		     "it: the computation has a cycle" CTX);
	expect_error(HEAD "  a = f32[4] parameter(0)\n"
			  "  ROOT t = (f32[4], f32[]) tuple(a)\n}\n",
		     "t.hlo:4:8: error: tuple 't' has shape (f32[4], f32[]), "
		     "expected a tuple of 1 element (one per operand)" CTX);
	expect_error(HEAD "  a = (f32[4], s32[]) parameter(0)\n"
			  "  ROOT g = f32[4] get-tuple-element(a), index=2\n}\n",
		     "t.hlo:4:8: error: get-tuple-element 'g' has index=2, but "
		     "its operand is a tuple of 2" CTX);
	expect_error(HEAD "  a = (f32[4], s32[]) parameter(0)\n"
			  "  ROOT g = f32[] get-tuple-element(a), index=0\n}\n",
		     "t.hlo:4:8: error: get-tuple-element 'g' has shape f32[], "
		     "but element 0 of its operand has shape f32[4]" CTX);
	expect_error(HEAD "  a = f32[] parameter(0)\n"
			  "  b = f32[] parameter(2)\n"
			  "  ROOT s = f32[] add(a, b)\n}\n",
		     "t.hlo:4:3: error: parameter 'b' has number 2, but the "
		     "computation has 2 parameters (numbers 0 to 1)" CTX);
	expect_error("HloModule m\n"
		     "f {\n  p = f32[8] parameter(0)\n"
		     "  ROOT n = f32[8] negate(p)\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[4] parameter(0)\n"
		     "  ROOT k = f32[8] fusion(a), kind=kLoop, calls=f\n}\n",
		     "t.hlo:8:8: error: fusion 'k' operand 0 has shape f32[4], "
		     "but parameter 0 of 'f' has shape f32[8]" CTX);
	expect_error("HloModule m\n"
		     "f {\n  p = f32[8] parameter(0)\n"
		     "  ROOT n = f32[8] negate(p)\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[8] parameter(0)\n"
		     "  ROOT k = f32[8] fusion(a, a), kind=kLoop, calls=f\n}\n",
		     "t.hlo:8:8: error: fusion 'k' has 2 operands, but 'f' has 1 "
		     "parameters" CTX);
	expect_error("HloModule m\n"
		     "f {\n  p = f32[8] parameter(0)\n"
		     "  ROOT n = f32[8] negate(p)\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[8] parameter(0)\n"
		     "  ROOT k = bf16[8] call(a), to_apply=f\n}\n",
		     "t.hlo:8:8: error: call 'k' has shape bf16[8], but the root "
		     "of 'f' has shape f32[8]" CTX);
	/* A violation inside a fused computation names that computation. */
	expect_error("HloModule m\n"
		     "f {\n  p = f32[8] parameter(0)\n"
		     "  ROOT n = f32[4] negate(p)\n}\n"
		     "ENTRY e {\n"
		     "  a = f32[8] parameter(0)\n"
		     "  ROOT k = f32[4] fusion(a), kind=kLoop, calls=f\n}\n",
		     "t.hlo:4:8: error: negate 'n' operand 0 has shape f32[8], "
		     "expected f32[4] (the result's dims)\n"
		     "  in computation 'f' of module 'm'");
	expect_error("HloModule m\n"
		     "ENTRY e (a: f32[4]) -> f32[4] {\n"
		     "  a = f32[8] parameter(0)\n"
		     "  ROOT n = f32[8] negate(a)\n}\n",
		     "t.hlo:3:3: error: parameter 'a' has shape f32[8], but the "
		     "computation's signature gives parameter 0 shape f32[4]"
		     CTX);
}

/*
 * The parser already rejects a literal whose element count disagrees with
 * its shape, so the verifier's rule (there for IR built by other means) is
 * exercised on a parsed constant whose count is then altered.
 */
static void test_constant(void **state)
{
	usc_hlo_file *f = parse(HEAD "  ROOT c = f32[3] constant({1, 2, 3})\n}\n");
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	usc_hlo_literal *lit = m->entry->instrs[0]->literal;
	usc_error err;

	(void)state;
	assert_non_null(lit);
	assert_int_equal(usc_hlo_verify(m, &err), USC_OK);
	lit->count = 2;
	assert_int_equal(usc_hlo_verify(m, &err), USC_EVERIFY);
	assert_string_equal(err.message,
			    "3:8: error: constant 'c' has 2 literal elements, "
			    "but shape f32[3] has 3" CTX);
	lit->count = 3;
	usc_hlo_file_destroy(f);
}

/* Accepted: negative padding, dynamic dims by their bounds, layouts. */
static void test_valid(void **state)
{
	(void)state;
	expect_ok(HEAD "  a = f32[4]{0} parameter(0)\n"
		       "  z = f32[] constant(0)\n"
		       "  ROOT p = f32[2] pad(a, z), padding=-1_-1\n}\n");
	expect_ok(HEAD "  a = f32[<=4,3]{0,1} parameter(0)\n"
		       "  b = f32[<=4,3]{1,0} parameter(1)\n"
		       "  ROOT s = f32[<=4,3] add(a, b)\n}\n");
	expect_ok(HEAD "  a = f32[?,3] parameter(0)\n"
		       "  b = f32[7,3] parameter(1)\n"
		       "  ROOT s = f32[7,3] add(a, b)\n}\n");
	expect_ok(HEAD "  a = f32[4] parameter(0)\n"
		       "  ROOT c = u8[4,4] bitcast-convert(a)\n}\n");
	expect_ok(HEAD "  a = f32[] parameter(0)\n"
		       "  ROOT c = f32[2,3] constant({...})\n}\n");
	/* Ops outside the verifier's list pass unchecked. */
	expect_ok(HEAD "  a = f32[4] parameter(0)\n"
		       "  ROOT c = f32[9] custom-call(a), "
		       "custom_call_target=\"foo\"\n}\n");
}

static void test_format(void **state)
{
	usc_hlo_file *f = parse(HEAD "  a = (f32[<=4,?]{1,0}, token[], "
				     "bf16[]) parameter(0)\n  ROOT t = s32[] "
				     "constant(0)\n}\n");
	const usc_hlo_module *m = usc_hlo_file_module(f, 0);
	char buf[64], small[8];

	(void)state;
	assert_string_equal(usc_hlo_shape_format(&m->entry->instrs[0]->shape,
						 buf, sizeof buf),
			    "(f32[<=4,?], token[], bf16[])");
	assert_string_equal(usc_hlo_shape_format(&m->entry->instrs[0]->shape,
						 small, sizeof small),
			    "(f32...");
	usc_hlo_file_destroy(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_data_movement),
		cmocka_unit_test(test_reductions),
		cmocka_unit_test(test_linalg),
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_constant),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_format),
	};
	const struct CMUnitTest xla[] = {
		cmocka_unit_test(test_corpus),
	};

	xla_mode = corpus_is_xla(argc, argv);
	if (xla_mode) {
		char dir[4096];

		/* Skips before cmocka starts when the corpus is absent. */
		corpus_xla_dir_or_skip(dir, sizeof dir);
		return cmocka_run_group_tests_name("xla corpus", xla, NULL,
						   NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
