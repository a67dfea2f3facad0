/*
 * The parser's failures: every malformed input of malformed_cases.h fails
 * with USC_EPARSE and exactly the expected compiler-style message; I/O
 * errors name the file; out-of-memory at every allocation of a parse and
 * a print returns USC_ENOMEM and leaks nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/hlo.h"

typedef struct malformed_case {
	const char *name;
	const char *input;
	size_t len;
	const char *expected;
} malformed_case;

static const malformed_case cases[] = {
#define MALFORMED(name, input, len, expected) {#name, input, len, expected},
#include "hlo/malformed_cases.h"
#undef MALFORMED
};

static void test_malformed(void **state)
{
	size_t i, failures = 0;

	(void)state;
	for (i = 0; i < USC__ARRAY_LEN(cases); i++) {
		usc_hlo_file *f = NULL;
		usc_error err;
		long live = usc__alloc_live();
		usc_status st;

		usc_error_clear(&err);
		st = usc_hlo_parse(cases[i].input, cases[i].len, "t.hlo", &f,
				   &err);
		if (st != USC_EPARSE || f != NULL ||
		    strcmp(err.message, cases[i].expected) != 0) {
			printf("case %s: status %d\n--- expected:\n%s\n--- got:\n%s\n",
			       cases[i].name, (int)st, cases[i].expected,
			       err.message);
			failures++;
		}
		assert_int_equal(usc__alloc_live(), live);
	}
	printf("%zu malformed inputs checked\n", USC__ARRAY_LEN(cases));
	assert_true(USC__ARRAY_LEN(cases) >= 40);
	assert_int_equal(failures, 0);
}

static void test_io_error(void **state)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_parse_file("/nonexistent/dir/x.hlo", &f, &err),
			 USC_EIO);
	assert_null(f);
	assert_string_equal(err.message, "/nonexistent/dir/x.hlo: cannot open: "
					 "No such file or directory");
}

static const char oom_text[] =
	"HloModule m, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[]}\n"
	"add {\n"
	"  x = f32[] parameter(0)\n"
	"  y = f32[] parameter(1)\n"
	"  ROOT s = f32[] add(x, y)\n"
	"}\n"
	"ENTRY %main (p: f32[4]) -> f32[] {\n"
	"  %p = f32[4]{0} parameter(0), metadata={op_type=\"A\" op_name=\"b\" "
	"source_file=\"c.py\" source_line=3 scheduling_name=\"q\"}\n"
	"  %c = f32[2,2] constant({{1, 2}, {3, inf}})\n"
	"  %z = f32[] constant(0)\n"
	"  %sl = f32[2]{0} slice(f32[4]{0} %p), slice={[0:2:1]}\n"
	"  %pd = f32[6] pad(%p, %z), padding=1_1\n"
	"  %w = f32[2] reduce-window(%p, %z), window={size=2 stride=2}, "
	"to_apply=add\n"
	"  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=add, "
	"backend_config={\"a\": [1, 2]}\n"
	"}\n";

static void test_out_of_memory(void **state)
{
	long n;
	bool succeeded = false;

	(void)state;
	for (n = 0; n < 10000 && !succeeded; n++) {
		usc_hlo_print_options o = usc_hlo_print_options_default();
		usc_hlo_file *f = NULL;
		usc_error err;
		long live = usc__alloc_live();
		char *text = NULL;
		usc_status st;

		usc__alloc_fail_after(n);
		st = usc_hlo_parse(oom_text, sizeof oom_text - 1, "oom.hlo", &f,
				   &err);
		if (st == USC_OK) {
			st = usc_hlo_file_print(f, &o, &text, NULL, &err);
			usc_hlo_text_free(text);
			usc_hlo_file_destroy(f);
			succeeded = st == USC_OK;
		}
		usc__alloc_fail_after(-1);
		if (!succeeded)
			assert_int_equal(st, USC_ENOMEM);
		assert_int_equal(usc__alloc_live(), live);
	}
	assert_true(succeeded);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_io_error),
		cmocka_unit_test(test_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
