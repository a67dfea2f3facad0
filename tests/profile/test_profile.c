/*
 * Device profiles: the parser, the printer, the built-in profiles.
 *
 * The built-in values are checked against the figures their sources state
 * (written here by hand from docs/profiles.md's table: XLA's
 * accuracy_budget.h, the CUDA guide's ulp table, XLA's flag defaults), not
 * against the parser's own output; every error message is compared
 * exactly; and a few thousand random mutations of a valid file must each
 * parse or fail cleanly (run under ASan/UBSan by tools/test.sh).
 * USC_TEST_SCALE (a positive integer) multiplies the mutations.
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

#include "internal.h"
#include "test_util.h"
#include "ulpscope/profile.h"

/* Every key, none at its strict default. */
static const char all_keys[] =
	"# a profile with every key\n"
	"name = every_key-1.0\n"
	"description = All keys, non-default values\n"
	"excess_precision = yes\n"
	"excess_type = f64\n"
	"fma = yes   # trailing comment\n"
	"reassociate = yes\n"
	"reassociate_dot = yes\n"
	"dot_accumulation = bf16\n"
	"fp8_dot_accumulation = f16\n"
	"dot_f32 = bf16x3\n"
	"compute_type = f32\n"
	"flush_mode = always\n"
	"nonfinite = undefined\n"
	"accuracy.all = 3\n"
	"accuracy.exp = 1.25\n"
	"accuracy.expm1 = 2\n"
	"accuracy.log = 0.5\n"
	"accuracy.log1p = 4.75\n"
	"accuracy.logistic = 1e1\n"
	"accuracy.tanh = 6\n"
	"accuracy.erf = 7\n"
	"accuracy.sqrt = 8\n"
	"accuracy.rsqrt = 9\n"
	"accuracy.cbrt = 11\n"
	"accuracy.sin = 12\n"
	"accuracy.cos = 13\n"
	"accuracy.tan = 14\n"
	"accuracy.atan2 = 15\n"
	"accuracy.power = 1048576\n"
	"\t accuracy.divide=0.75\r\n"
	"flush.all = inputs\n"
	"flush.f32 = both\n"
	"flush.bf16 = outputs\n"
	"flush.f8e4m3fn = none\n"
	"fp8_overflow = saturating\n"
	"minmax_nan = drop\n";

static const char float_types[] =
	"f16 bf16 f32 f64 f8e5m2 f8e4m3 f8e4m3fn f8e4m3fnuz f8e4m3b11fnuz "
	"f8e5m2fnuz f8e3m4 f8e8m0fnu f6e2m3fn f6e3m2fn f4e2m1fn";

static usc_status parse(const char *text, usc_profile *p, usc_error *err)
{
	return usc_profile_parse(text, strlen(text), "t.profile", p, err);
}

static void check_all_keys(const usc_profile *p)
{
	assert_string_equal(p->name, "every_key-1.0");
	assert_string_equal(p->description, "All keys, non-default values");
	assert_true(p->excess_precision);
	assert_int_equal(p->excess_type, USC_F64);
	assert_true(p->fma);
	assert_true(p->reassociate);
	assert_true(p->reassociate_dot);
	assert_int_equal(p->dot_accumulation, USC_BF16);
	assert_int_equal(p->fp8_dot_accumulation, USC_F16);
	assert_int_equal(p->dot_f32, USC_DOT_F32_BF16_3);
	assert_int_equal(p->compute_type, USC_F32);
	assert_true(p->flush_always);
	assert_true(p->nonfinite_undefined);
	assert_true(p->accuracy[USC_PFN_EXP] == 1.25);
	assert_true(p->accuracy[USC_PFN_EXPM1] == 2);
	assert_true(p->accuracy[USC_PFN_LOG] == 0.5);
	assert_true(p->accuracy[USC_PFN_LOG1P] == 4.75);
	assert_true(p->accuracy[USC_PFN_LOGISTIC] == 10);
	assert_true(p->accuracy[USC_PFN_TANH] == 6);
	assert_true(p->accuracy[USC_PFN_POWER] == 1048576);
	assert_true(p->accuracy[USC_PFN_DIVIDE] == 0.75);
	assert_int_equal(p->flush[USC_F32], USC_FLUSH_INPUTS | USC_FLUSH_OUTPUTS);
	assert_int_equal(p->flush[USC_BF16], USC_FLUSH_OUTPUTS);
	assert_int_equal(p->flush[USC_F8E4M3FN], 0);
	assert_int_equal(p->flush[USC_F16], USC_FLUSH_INPUTS);
	assert_int_equal(p->flush[USC_F4E2M1FN], USC_FLUSH_INPUTS);
	assert_int_equal(p->fp8_overflow, USC_FP8_OVF_SAT);
	assert_int_equal(p->minmax_nan, USC_MINMAX_NAN_DROP);
}

static void test_all_keys(void **state)
{
	usc_profile p, q;
	usc_error err;
	char *text = NULL, *text2 = NULL;

	(void)state;
	assert_int_equal(parse(all_keys, &p, &err), USC_OK);
	check_all_keys(&p);
	/* accuracy.all fills the functions no key names. */
	assert_true(p.accuracy[USC_PFN_SIN] == 12);
	assert_int_equal(usc_profile_format(&p, &text, &err), USC_OK);
	assert_int_equal(parse(text, &q, &err), USC_OK);
	assert_true(usc_profile_equal(&p, &q));
	check_all_keys(&q);
	assert_string_equal(q.description, p.description);
	/* Canonical text is a fixed point. */
	assert_int_equal(usc_profile_format(&q, &text2, &err), USC_OK);
	assert_string_equal(text, text2);
	usc_profile_text_free(text);
	usc_profile_text_free(text2);
}

static void test_all_fills_unset_only(void **state)
{
	usc_profile p;
	usc_error err;

	(void)state;
	/* accuracy.all / flush.all fill only what no key names, in any order. */
	assert_int_equal(parse("name = x\naccuracy.exp = 2\naccuracy.all = 4\n"
			       "flush.f32 = none\nflush.all = both\n",
			       &p, &err),
			 USC_OK);
	assert_true(p.accuracy[USC_PFN_EXP] == 2);
	assert_true(p.accuracy[USC_PFN_SIN] == 4);
	assert_true(p.accuracy[USC_PFN_DIVIDE] == 4);
	assert_int_equal(p.flush[USC_F32], 0);
	assert_int_equal(p.flush[USC_BF16], 3);
	assert_int_equal(p.flush[USC_F8E5M2], 3);
	/* Not a float type: never set. */
	assert_int_equal(p.flush[USC_S32], 0);
}

/* The figures of docs/profiles.md's table, from the sources it cites. */
static void test_builtin_values(void **state)
{
	usc_profile p;
	usc_error err;

	(void)state;
	assert_int_equal(usc_profile_builtin("strict", &p, &err), USC_OK);
	assert_string_equal(p.name, "strict");
	assert_false(p.excess_precision || p.fma || p.reassociate ||
		     p.reassociate_dot);
	assert_int_equal(p.dot_accumulation, USC_DTYPE_INVALID);
	assert_int_equal(p.fp8_dot_accumulation, USC_DTYPE_INVALID);
	assert_int_equal(p.dot_f32, USC_DOT_F32_FULL);
	for (int f = 0; f < USC_PFN_COUNT; f++)
		assert_true(p.accuracy[f] == 0.5);
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		assert_int_equal(p.flush[t], 0);
	assert_int_equal(p.fp8_overflow, USC_FP8_OVF_NONSAT);
	assert_int_equal(p.minmax_nan, USC_MINMAX_NAN_PROPAGATE);

	/* XLA accuracy_budget.h CPU budgets + 0.5; JAX FTZ/DAZ on CPU. */
	assert_int_equal(usc_profile_builtin("xla-cpu", &p, &err), USC_OK);
	assert_true(p.excess_precision && p.fma && p.reassociate &&
		    p.reassociate_dot);
	assert_int_equal(p.excess_type, USC_F32);
	assert_int_equal(p.dot_f32, USC_DOT_F32_FULL);
	assert_true(p.accuracy[USC_PFN_EXP] == 6.5);
	assert_true(p.accuracy[USC_PFN_LOG] == 1.5);
	assert_true(p.accuracy[USC_PFN_TANH] == 3.5);
	assert_true(p.accuracy[USC_PFN_ERF] == 2.5);
	assert_true(p.accuracy[USC_PFN_RSQRT] == 1.5);
	/* IEEE division, with the x * (1 / y) rewrite modelled (issue 13). */
	assert_true(p.accuracy[USC_PFN_DIVIDE] == 0.5);
	assert_int_equal(p.divide_reciprocal, USC_DIV_RECIP_ANY);
	assert_int_equal(p.flush[USC_F32], 3);
	assert_int_equal(p.flush[USC_F64], 3);
	assert_int_equal(p.flush[USC_BF16], 3);
	assert_int_equal(p.flush[USC_F16], 0);
	assert_int_equal(p.flush[USC_F8E4M3FN], 0);
	assert_int_equal(p.fp8_overflow, USC_FP8_OVF_EITHER);
	assert_int_equal(p.minmax_nan, USC_MINMAX_NAN_EITHER);

	/* CUDA guide ulp table and XLA GPU budgets, the larger + 0.5. */
	assert_int_equal(usc_profile_builtin("xla-gpu", &p, &err), USC_OK);
	assert_int_equal(p.dot_f32, USC_DOT_F32_TF32);
	assert_int_equal(p.fp8_dot_accumulation, USC_BF16);
	assert_true(p.accuracy[USC_PFN_EXP] == 7.5);
	assert_true(p.accuracy[USC_PFN_LOG] == 1.5);
	assert_true(p.accuracy[USC_PFN_TANH] == 3.5);
	assert_true(p.accuracy[USC_PFN_SIN] == 2.5);
	assert_true(p.accuracy[USC_PFN_TAN] == 4.5);
	assert_true(p.accuracy[USC_PFN_POWER] == 4.5);
	assert_true(p.accuracy[USC_PFN_ATAN2] == 3.5);
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		assert_int_equal(p.flush[t], 0);
	assert_int_equal(p.minmax_nan, USC_MINMAX_NAN_PROPAGATE);

	/* One bf16 pass (precision DEFAULT); TPUs flush subnormals. */
	assert_int_equal(usc_profile_builtin("xla-tpu", &p, &err), USC_OK);
	assert_int_equal(p.dot_f32, USC_DOT_F32_BF16_1);
	for (int f = 0; f < USC_PFN_COUNT; f++)
		assert_true(p.accuracy[f] == (f == USC_PFN_LOGISTIC ? 10 : 8));
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		assert_int_equal(p.flush[t],
				 usc_dtype_is_float((usc_dtype)t) ? 3 : 0);
}

/* The data files are the built-ins, and format / parse round-trips them. */
static void test_builtins_match_data_files(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	const char *const *names = usc_profile_builtin_names();
	usc_error err;
	size_t n = 0;

	(void)state;
	assert_non_null(src);
	for (; names[n] != NULL; n++) {
		usc_profile b, f, r;
		char path[512], *text = NULL;

		assert_int_equal(usc_profile_builtin(names[n], &b, &err),
				 USC_OK);
		snprintf(path, sizeof path, "%s/data/profiles/%s.profile", src,
			 names[n]);
		assert_int_equal(usc_profile_load(path, &f, &err), USC_OK);
		assert_true(usc_profile_equal(&b, &f));
		assert_string_equal(b.description, f.description);
		assert_true(b.description[0] != '\0');
		assert_int_equal(usc_profile_format(&b, &text, &err), USC_OK);
		assert_int_equal(usc_profile_parse(text, strlen(text), "fmt",
						   &r, &err),
				 USC_OK);
		assert_true(usc_profile_equal(&b, &r));
		assert_string_equal(b.description, r.description);
		usc_profile_text_free(text);
	}
	assert_int_equal(n, 5);
	assert_string_equal(names[0], "strict");
	assert_string_equal(names[1], "xla-cpu");
	assert_string_equal(names[2], "xla-cpu-fast-math");
	assert_string_equal(names[3], "xla-gpu");
	assert_string_equal(names[4], "xla-tpu");
	assert_int_equal(usc_profile_builtin("xla", NULL, &err), USC_EINVAL);
	assert_int_equal(usc_profile_builtin("xla", &(usc_profile){0}, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message,
			    "no built-in profile 'xla' (the built-in profiles: "
			    "strict, xla-cpu, xla-cpu-fast-math, xla-gpu, xla-tpu)");
}

static void test_defaults_and_base(void **state)
{
	usc_profile p, s, g;
	usc_error err;

	(void)state;
	assert_int_equal(usc_profile_builtin("strict", &s, &err), USC_OK);
	assert_int_equal(usc_profile_builtin("xla-gpu", &g, &err), USC_OK);
	/* No base: strict's values. */
	assert_int_equal(parse("name = strict\n", &p, &err), USC_OK);
	assert_true(usc_profile_equal(&p, &s));
	assert_string_equal(p.description, "");
	/* A base: its values, but the name and description are the file's. */
	assert_int_equal(parse("# mine\n\nbase = xla-gpu\nname = mine\n"
			       "accuracy.exp = 3\n",
			       &p, &err),
			 USC_OK);
	assert_string_equal(p.name, "mine");
	assert_string_equal(p.description, "");
	assert_true(p.accuracy[USC_PFN_EXP] == 3);
	p.accuracy[USC_PFN_EXP] = g.accuracy[USC_PFN_EXP];
	memcpy(p.name, "xla-gpu", 8);
	assert_true(usc_profile_equal(&p, &g));
	/*
	 * A base that has a base of its own: xla-cpu-fast-math is written as
	 * xla-cpu plus its freedoms, and a user's file may start from it.
	 */
	{
		usc_profile fm, q;

		assert_int_equal(usc_profile_builtin("xla-cpu-fast-math", &fm,
						     &err),
				 USC_OK);
		assert_int_equal(parse("base = xla-cpu-fast-math\nname = "
				       "xla-cpu-fast-math\n",
				       &q, &err),
				 USC_OK);
		assert_true(usc_profile_equal(&q, &fm));
	}
	/* equal compares names, every freedom, not descriptions. */
	p.description[0] = 'x';
	assert_true(usc_profile_equal(&p, &g));
	p.fma = !p.fma;
	assert_false(usc_profile_equal(&p, &g));
	p.fma = !p.fma;
	p.name[0] = 'y';
	assert_false(usc_profile_equal(&p, &g));
	p.name[0] = 'x';
	p.flush[USC_F8E3M4] = 1;
	assert_false(usc_profile_equal(&p, &g));
	p.flush[USC_F8E3M4] = 0;
	p.accuracy[USC_PFN_COS] += 1;
	assert_false(usc_profile_equal(&p, &g));
}

typedef struct error_case {
	const char *text;
	usc_status code;
	const char *message;
} error_case;

static void test_errors(void **state)
{
	static char list_msg[3][512];
	usc_profile p;
	usc_error err;

	(void)state;
	snprintf(list_msg[0], sizeof list_msg[0],
		 "t.profile:2: unknown type 'f33' in 'flush.f33' (expected "
		 "one of: %s, or all)", float_types);
	snprintf(list_msg[1], sizeof list_msg[1],
		 "t.profile:2: 's32' in 'flush.s32' is not a floating-point "
		 "type (expected one of: %s, or all)", float_types);
	snprintf(list_msg[2], sizeof list_msg[2],
		 "t.profile:2: bad value 'int' for 'excess_type' (expected a "
		 "floating-point type: %s)", float_types);
	const error_case cases[] = {
		{"name = a\nfmaa = yes\n", USC_EPARSE,
		 "t.profile:2: unknown key 'fmaa' (did you mean 'fma'?)"},
		{"name = a\naccuracy.exq = 1\n", USC_EPARSE,
		 "t.profile:2: unknown key 'accuracy.exq' (expected accuracy.FN "
		 "with FN one of: exp expm1 log log1p logistic tanh erf sqrt "
		 "rsqrt cbrt sin cos tan atan2 power divide all)"},
		{"name = a\naccurasy.exp = 1\n", USC_EPARSE,
		 "t.profile:2: unknown key 'accurasy.exp' (did you mean "
		 "'accuracy.exp'?)"},
		{"name = a\nzzzzzz = 1\n", USC_EPARSE,
		 "t.profile:2: unknown key 'zzzzzz' (expected one of: name, "
		 "description, base, excess_precision, excess_type, fma, "
		 "reassociate, reassociate_dot, dot_accumulation, "
		 "fp8_dot_accumulation, dot_f32, compute_type, accuracy.FN, "
		 "flush.TYPE, flush_mode, nonfinite, fp8_overflow, minmax_nan, "
		 "divide_reciprocal; "
		 "see docs/profiles.md)"},
		{"name = a\nflush_mode = sometimes\n", USC_EPARSE,
		 "t.profile:2: bad value 'sometimes' for 'flush_mode' (expected "
		 "may or always)"},
		{"name = a\ncompute_type = s32\n", USC_EPARSE,
		 "t.profile:2: bad value 's32' for 'compute_type' (expected "
		 "declared or a floating-point type: f16 bf16 f32 f64 f8e5m2 "
		 "f8e4m3 f8e4m3fn f8e4m3fnuz f8e4m3b11fnuz f8e5m2fnuz f8e3m4 "
		 "f8e8m0fnu f6e2m3fn f6e3m2fn f4e2m1fn)"},
		{"name = a\nfma = maybe\n", USC_EPARSE,
		 "t.profile:2: bad value 'maybe' for 'fma' (expected yes or "
		 "no)"},
		{"name = a\nfma = Yes\n", USC_EPARSE,
		 "t.profile:2: bad value 'Yes' for 'fma' (expected yes or no)"},
		{"name = a\nfma = yes\n\nfma = no\n", USC_EPARSE,
		 "t.profile:4: 'fma' given twice"},
		{"name = a\naccuracy.all = 1\naccuracy.all = 1\n", USC_EPARSE,
		 "t.profile:3: 'accuracy.all' given twice"},
		{"name = a\nflush.f32 = both\nflush.f32 = none\n", USC_EPARSE,
		 "t.profile:3: 'flush.f32' given twice"},
		{"name = a\nname = b\n", USC_EPARSE,
		 "t.profile:2: 'name' given twice"},
		{"name = a\nfma\n", USC_EPARSE,
		 "t.profile:2: expected 'key = value'"},
		{"name = a\nfma =   # nothing\n", USC_EPARSE,
		 "t.profile:2: expected 'key = value'"},
		{"name = a\n = yes\n", USC_EPARSE,
		 "t.profile:2: expected 'key = value'"},
		{"fma = yes\n# no name\n", USC_EPARSE, "t.profile: no 'name' key"},
		{"", USC_EPARSE, "t.profile: no 'name' key"},
		{"name = a\nbase = strict\n", USC_EPARSE,
		 "t.profile:2: 'base' must be the first key"},
		{"base = strict\nbase = strict\nname = a\n", USC_EPARSE,
		 "t.profile:2: 'base' given twice"},
		{"base = foo\nname = a\n", USC_EPARSE,
		 "t.profile:1: unknown base profile 'foo' (expected one of: "
		 "strict, xla-cpu, xla-cpu-fast-math, xla-gpu, xla-tpu)"},
		{"name = Bad\n", USC_EPARSE,
		 "t.profile:1: bad value 'Bad' for 'name' (expected 1 to 63 of "
		 "a-z 0-9 . _ -)"},
		{"name = a b\n", USC_EPARSE,
		 "t.profile:1: bad value 'a b' for 'name' (expected 1 to 63 of "
		 "a-z 0-9 . _ -)"},
		{"name = a\naccuracy.exp = 0.4\n", USC_EPARSE,
		 "t.profile:2: bad value '0.4' for 'accuracy.exp' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.exp = abc\n", USC_EPARSE,
		 "t.profile:2: bad value 'abc' for 'accuracy.exp' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.all = nan\n", USC_EPARSE,
		 "t.profile:2: bad value 'nan' for 'accuracy.all' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.sin = 1e400\n", USC_EPARSE,
		 "t.profile:2: bad value '1e400' for 'accuracy.sin' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.sin = 1048576.5\n", USC_EPARSE,
		 "t.profile:2: bad value '1048576.5' for 'accuracy.sin' "
		 "(expected a decimal number of ulps, at least 0.5 and at most "
		 "1048576)"},
		{"name = a\naccuracy.sin = -1\n", USC_EPARSE,
		 "t.profile:2: bad value '-1' for 'accuracy.sin' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.sin = 0x1p1\n", USC_EPARSE,
		 "t.profile:2: bad value '0x1p1' for 'accuracy.sin' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\naccuracy.sin = 1e\n", USC_EPARSE,
		 "t.profile:2: bad value '1e' for 'accuracy.sin' (expected a "
		 "decimal number of ulps, at least 0.5 and at most 1048576)"},
		{"name = a\nflush.f33 = both\n", USC_EPARSE, list_msg[0]},
		{"name = a\nflush.s32 = both\n", USC_EPARSE, list_msg[1]},
		{"name = a\nexcess_type = int\n", USC_EPARSE, list_msg[2]},
		{"name = a\nflush.f32 = all\n", USC_EPARSE,
		 "t.profile:2: bad value 'all' for 'flush.f32' (expected none, "
		 "inputs, outputs or both)"},
		{"name = a\ndot_f32 = bf16x9\n", USC_EPARSE,
		 "t.profile:2: bad value 'bf16x9' for 'dot_f32' (expected full, "
		 "tf32, bf16x6, bf16x3 or bf16x1)"},
		{"name = a\nfp8_overflow = clamp\n", USC_EPARSE,
		 "t.profile:2: bad value 'clamp' for 'fp8_overflow' (expected "
		 "nonsaturating, saturating or either)"},
		{"name = a\nminmax_nan = ignore\n", USC_EPARSE,
		 "t.profile:2: bad value 'ignore' for 'minmax_nan' (expected "
		 "propagate, drop or either)"},
		{"name = a\n# caf\xc3\n", USC_EPARSE,
		 "t.profile:2: invalid UTF-8 at byte 6 (a profile is UTF-8 "
		 "text)"},
		{"name = a\n# \xc0\xaf overlong\n", USC_EPARSE,
		 "t.profile:2: invalid UTF-8 at byte 3 (a profile is UTF-8 "
		 "text)"},
		{"name = a\n# \xed\xa0\x80 surrogate\n", USC_EPARSE,
		 "t.profile:2: invalid UTF-8 at byte 3 (a profile is UTF-8 "
		 "text)"},
		{"name = a\n# \xf4\x90\x80\x80 beyond U+10FFFF\n", USC_EPARSE,
		 "t.profile:2: invalid UTF-8 at byte 3 (a profile is UTF-8 "
		 "text)"},
		{"name = a\ndescription = tab\x01" "char\n", USC_EPARSE,
		 "t.profile:2: bad value 'tab?char' for 'description' (expected "
		 "one line of at most 127 bytes)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		usc_error_clear(&err);
		assert_int_equal(parse(cases[i].text, &p, &err), cases[i].code);
		assert_int_equal(err.code, cases[i].code);
		assert_string_equal(err.message, cases[i].message);
	}
	/* UTF-8 text is fine in comments and descriptions. */
	assert_int_equal(parse("name = a  # caf\xc3\xa9 \xe2\x82\xac\n"
			       "description = \xcf\x80 \xe2\x89\x88 3.14\n",
			       &p, &err),
			 USC_OK);
	assert_string_equal(p.description, "\xcf\x80 \xe2\x89\x88 3.14");
}

static void test_bad_bytes(void **state)
{
	static const char nul[] = "name = a\nfma = y\0es\n";
	char *big = malloc(4000);
	usc_profile p;
	usc_error err;

	(void)state;
	assert_int_equal(usc_profile_parse(nul, sizeof nul - 1, "t.profile", &p,
					   &err),
			 USC_EPARSE);
	assert_string_equal(err.message, "t.profile:2: NUL byte in the text (a "
					 "profile is UTF-8 text)");
	assert_non_null(big);
	memcpy(big, "name = a\n# ", 11);
	memset(big + 11, 'x', 2000);
	strcpy(big + 2011, "\n");
	assert_int_equal(parse(big, &p, &err), USC_EPARSE);
	assert_string_equal(err.message,
			    "t.profile:2: line longer than 1024 bytes");
	/* A long value is cut in the message, not copied whole. */
	memcpy(big, "name = a\nfma = ", 15);
	memset(big + 15, 'y', 900);
	strcpy(big + 915, "\n");
	assert_int_equal(parse(big, &p, &err), USC_EPARSE);
	assert_string_equal(err.message,
			    "t.profile:2: bad value "
			    "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...'"
			    " for 'fma' (expected yes or no)");
	free(big);
	/* No final newline, CRLF line ends, a NULL filename. */
	assert_int_equal(usc_profile_parse("name = a\r\nfma = yes", 19, NULL,
					   &p, &err),
			 USC_OK);
	assert_true(p.fma);
	assert_int_equal(usc_profile_parse("fma = yes", 9, NULL, &p, &err),
			 USC_EPARSE);
	assert_string_equal(err.message, "<profile>: no 'name' key");
	assert_int_equal(usc_profile_parse(NULL, 3, "x", &p, &err), USC_EINVAL);
	assert_int_equal(usc_profile_parse("name = a", 8, "x", NULL, &err),
			 USC_EINVAL);
}

static char tmpdir[128];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_load_and_resolve(void **state)
{
	char path[256], msg[512];
	usc_profile p, g;
	usc_error err;
	long live = usc__alloc_live();

	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/usc_profile_test_%ld",
		 (long)getpid());
	assert_int_equal(mkdir(tmpdir, 0700), 0);
	snprintf(path, sizeof path, "%s/mine.profile", tmpdir);
	write_file(path, "base = xla-gpu\nname = mine\nfma = no\n");

	/* A built-in name. */
	assert_int_equal(usc_profile_resolve("xla-gpu", &g, &err), USC_OK);
	assert_string_equal(g.name, "xla-gpu");
	/* A path. */
	assert_int_equal(usc_profile_resolve(path, &p, &err), USC_OK);
	assert_string_equal(p.name, "mine");
	assert_false(p.fma);
	assert_true(p.accuracy[USC_PFN_EXP] == g.accuracy[USC_PFN_EXP]);
	/* Neither. */
	assert_int_equal(usc_profile_resolve("xla-gpux", &p, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message,
			    "'xla-gpux' is neither a built-in profile (strict, "
			    "xla-cpu, xla-cpu-fast-math, xla-gpu, xla-tpu) nor a profile file");
	/* A path that is not there. */
	snprintf(path, sizeof path, "%s/none.profile", tmpdir);
	assert_int_equal(usc_profile_resolve(path, &p, &err), USC_EIO);
	snprintf(msg, sizeof msg,
		 "cannot open '%s': No such file or directory", path);
	assert_string_equal(err.message, msg);
	assert_int_equal(usc_profile_resolve("", &p, &err), USC_EINVAL);
	assert_int_equal(usc_profile_resolve(NULL, &p, &err), USC_EINVAL);
	/* A directory is not a profile. */
	assert_int_equal(usc_profile_load(tmpdir, &p, &err), USC_EIO);
	snprintf(msg, sizeof msg,
		 "%s: is a directory, not a regular file; ulpscope reads its "
		 "inputs from regular files only",
		 tmpdir);
	assert_string_equal(err.message, msg);
	/* Errors in a file name the file. */
	snprintf(path, sizeof path, "%s/bad.profile", tmpdir);
	write_file(path, "name = bad\nfma = maybe\n");
	assert_int_equal(usc_profile_resolve(path, &p, &err), USC_EPARSE);
	snprintf(msg, sizeof msg,
		 "%s:2: bad value 'maybe' for 'fma' (expected yes or no)",
		 path);
	assert_string_equal(err.message, msg);
	/* Out of memory while reading and while printing. */
	usc__alloc_fail_after(0);
	assert_int_equal(usc_profile_load(path, &p, &err), USC_ENOMEM);
	{
		char *text = NULL;

		assert_int_equal(usc_profile_format(&g, &text, &err),
				 USC_ENOMEM);
		assert_null(text);
	}
	usc__alloc_fail_after(-1);
	assert_int_equal(usc__alloc_live(), live);
}

static void test_format_rejects_bad_struct(void **state)
{
	usc_profile p, q;
	usc_error err;
	char *text = NULL;

	(void)state;
	assert_int_equal(usc_profile_builtin("xla-tpu", &p, &err), USC_OK);
	q = p;
	q.accuracy[USC_PFN_SIN] = 0.25;
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	assert_string_equal(err.message, "profile 'xla-tpu': accuracy.sin is "
					 "not in [0.5, 1048576]");
	q = p;
	q.accuracy[USC_PFN_SIN] = NAN;
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	q = p;
	memcpy(q.name, "No", 3);
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	q = p;
	memset(q.name, 'a', sizeof q.name);
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	q = p;
	q.excess_type = USC_S32;
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	q = p;
	q.dot_f32 = (usc_profile_dot_f32)9;
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	q = p;
	q.flush[USC_F32] = 4;
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_EINVAL);
	assert_null(text);
	/* A value with a long shortest spelling round-trips exactly. */
	q = p;
	q.accuracy[USC_PFN_EXP] = 0x1.0000000000001p0; /* 1 + 2^-52 */
	assert_int_equal(usc_profile_format(&q, &text, &err), USC_OK);
	assert_non_null(strstr(text, "accuracy.exp = 1.0000000000000002\n"));
	assert_int_equal(parse(text, &p, &err), USC_OK);
	assert_true(usc_profile_equal(&p, &q));
	usc_profile_text_free(text);
}

static void test_fn_names(void **state)
{
	(void)state;
	assert_string_equal(usc_profile_fn_key(USC_PFN_EXP), "exp");
	assert_string_equal(usc_profile_fn_opcode(USC_PFN_EXP), "exponential");
	assert_string_equal(usc_profile_fn_key(USC_PFN_LOG1P), "log1p");
	assert_string_equal(usc_profile_fn_opcode(USC_PFN_LOG1P),
			    "log-plus-one");
	assert_string_equal(usc_profile_fn_opcode(USC_PFN_SIN), "sine");
	assert_string_equal(usc_profile_fn_key(USC_PFN_COUNT), "invalid");
}

/* xorshift64*: deterministic, seeded. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* The next draw of this test's sequence (test_util.h). */
static uint64_t rnd(void)
{
	return usc_test_xorshift64star(&rng_state);
}

/*
 * Random edits of a valid file (byte flips, inserted bytes, deletions,
 * duplicated and swapped spans, truncation): each must parse, and then
 * print and parse back equal, or fail with an EPARSE naming the file.
 */
static void test_mutations(void **state)
{
	const char *s = getenv("USC_TEST_SCALE");
	long scale = s ? atol(s) : 1, rounds = 3000 * (scale > 0 ? scale : 1);
	size_t base_len = sizeof all_keys - 1, cap = base_len * 3 + 64;
	char *buf = malloc(cap);
	long ok = 0, failed = 0;
	static const char alphabet[] = "=#\n\r\t .aefl0159\xc3\xa9\x80\xff";

	(void)state;
	assert_non_null(buf);
	for (long r = 0; r < rounds; r++) {
		size_t n = base_len;
		int edits = 1 + (int)(rnd() % 6);
		usc_profile p, q;
		usc_error err;

		memcpy(buf, all_keys, n);
		for (int e = 0; e < edits && n > 0; e++) {
			size_t at = (size_t)(rnd() % n), len;

			switch (rnd() % 6) {
			case 0: /* flip a byte */
				buf[at] = (char)(rnd() & 0xff);
				break;
			case 1: /* an interesting byte */
				buf[at] = alphabet[rnd() % (sizeof alphabet - 1)];
				break;
			case 2: /* insert a byte */
				if (n + 1 < cap) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = alphabet[rnd() % (sizeof alphabet - 1)];
					n++;
				}
				break;
			case 3: /* delete a span */
				len = (size_t)(rnd() % 16);
				if (len > n - at)
					len = n - at;
				memmove(buf + at, buf + at + len, n - at - len);
				n -= len;
				break;
			case 4: /* duplicate a span */
				len = (size_t)(rnd() % 64);
				if (len > n - at)
					len = n - at;
				if (n + len < cap) {
					memmove(buf + at + len, buf + at, n - at);
					n += len;
				}
				break;
			default: /* truncate */
				n = at;
				break;
			}
		}
		usc_error_clear(&err);
		if (usc_profile_parse(buf, n, "fz.profile", &p, &err) ==
		    USC_OK) {
			char *text = NULL;

			ok++;
			assert_int_equal(usc_profile_format(&p, &text, &err),
					 USC_OK);
			assert_int_equal(usc_profile_parse(text, strlen(text),
							   "re", &q, &err),
					 USC_OK);
			assert_true(usc_profile_equal(&p, &q));
			usc_profile_text_free(text);
		} else {
			failed++;
			assert_int_equal(err.code, USC_EPARSE);
			assert_true(strncmp(err.message, "fz.profile:", 11) ==
					    0 ||
				    strcmp(err.message,
					   "fz.profile: no 'name' key") == 0);
		}
	}
	free(buf);
	/* Both outcomes occur, or the mutations test nothing. */
	assert_true(ok > rounds / 50);
	assert_true(failed > rounds / 5);
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	if (tmpdir[0] == '\0')
		return 0;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_all_fills_unset_only),
		cmocka_unit_test(test_builtin_values),
		cmocka_unit_test(test_builtins_match_data_files),
		cmocka_unit_test(test_defaults_and_base),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_load_and_resolve),
		cmocka_unit_test(test_format_rejects_bad_struct),
		cmocka_unit_test(test_fn_names),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
