/*
 * The report's writer and binning, against values written out by hand:
 * the escaping of text from a result file (every character HTML gives a
 * meaning to, and the control characters it does not allow), the
 * histogram's log2 bins at their edges, the heat levels at theirs
 * (docs/report.md), and a write failure that sticks.
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "report/report_internal.h"

/* What usc__html_textn writes for n bytes of s. */
static char *escaped(const char *s, size_t n)
{
	char *buf = NULL;
	size_t size = 0;
	usc__html h = {open_memstream(&buf, &size), false};

	assert_non_null(h.f);
	usc__html_textn(&h, s, n);
	assert_false(h.failed);
	assert_int_equal(fclose(h.f), 0);
	return buf;
}

static void test_escape(void **state)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} cases[] = {
		{"plain text", 10, "plain text"},
		{"a<b>&\"c'", 8, "a&lt;b&gt;&amp;&quot;c&#39;"},
		{"</script><script>", 17,
		 "&lt;/script&gt;&lt;script&gt;"},
		/* Tab, newline and carriage return stay; other C0 controls
		 * and DEL, which HTML does not allow, become U+FFFD. */
		{"a\tb\nc\rd", 7, "a\tb\nc\rd"},
		{"x\001y\033z\177", 6, "x&#xFFFD;y&#xFFFD;z&#xFFFD;"},
		/* A NUL inside the counted bytes. */
		{"a\0b", 3, "a&#xFFFD;b"},
		/* UTF-8 passes through. */
		{"\xc2\xb5s", 3, "\xc2\xb5s"},
		{"", 0, ""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = escaped(cases[i].in, cases[i].n);

		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

static void test_hist_bins(void **state)
{
	(void)state;
	/* Bin 0: zero (either sign); 1: below 2^-8; 2 + k: [2^(k-8),
	 * 2^(k-7)); the last: 2^24 and up, infinities included. */
	assert_int_equal(usc__hist_bin(0.0), 0);
	assert_int_equal(usc__hist_bin(-0.0), 0);
	assert_int_equal(usc__hist_bin(0x1p-9), 1);
	assert_int_equal(usc__hist_bin(0x1.fffffffffffffp-9), 1);
	assert_int_equal(usc__hist_bin(0x1p-8), 2);
	assert_int_equal(usc__hist_bin(-0x1p-8), 2);
	assert_int_equal(usc__hist_bin(0x1.fffffffffffffp-8), 2);
	assert_int_equal(usc__hist_bin(0x1p-7), 3);
	assert_int_equal(usc__hist_bin(0.5), 9);
	assert_int_equal(usc__hist_bin(1.0), 10);
	assert_int_equal(usc__hist_bin(1.5), 10);
	assert_int_equal(usc__hist_bin(2.0), 11);
	assert_int_equal(usc__hist_bin(0x1.fffffffffffffp23), 33);
	assert_int_equal(usc__hist_bin(0x1p24), 34);
	assert_int_equal(usc__hist_bin(INFINITY), 34);
	assert_int_equal(usc__hist_bin(-INFINITY), 34);
	assert_int_equal(USC__HIST_BINS, 35);
}

static void test_heat_levels(void **state)
{
	(void)state;
	/* Upper edges 0.5, 1, 2, 4, 16, 64, 256, 4096, each included. */
	assert_int_equal(usc__heat_level(0.0), 0);
	assert_int_equal(usc__heat_level(0x1p-1074), 1);
	assert_int_equal(usc__heat_level(0.5), 1);
	assert_int_equal(usc__heat_level(-0.5), 1);
	assert_int_equal(usc__heat_level(0x1.0000000000001p-1), 2);
	assert_int_equal(usc__heat_level(1.0), 2);
	assert_int_equal(usc__heat_level(2.0), 3);
	assert_int_equal(usc__heat_level(4.0), 4);
	assert_int_equal(usc__heat_level(16.0), 5);
	assert_int_equal(usc__heat_level(64.0), 6);
	assert_int_equal(usc__heat_level(256.0), 7);
	assert_int_equal(usc__heat_level(4096.0), 8);
	assert_int_equal(usc__heat_level(4097.0), 9);
	assert_int_equal(usc__heat_level(INFINITY), 9);
	assert_int_equal(usc__heat_level(NAN), USC__HEAT_NAN);
}

/* A stream that refuses every write: the failure sticks. */
static void test_sticky_failure(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	usc__html h;

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	h.f = f;
	h.failed = false;
	usc__html_text(&h, "text");
	assert_true(h.failed);
	usc__html_printf(&h, "%s", "more");
	assert_true(h.failed);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_hist_bins),
		cmocka_unit_test(test_heat_levels),
		cmocka_unit_test(test_sticky_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
