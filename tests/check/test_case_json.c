/*
 * case.json's reader (src/analyze/case_json.c): the members it returns,
 * its errors with line and column, and robustness: thousands of seeded
 * random edits of a valid file either parse or fail with USC_EPARSE
 * naming the file, never crash (the sanitizer build runs this too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze/case_internal.h"
#include "internal.h"

static const char *const keys[] = {"profile", "platform",
				   "xla_cpu_enable_fast_math"};

static usc_status scan(const char *text, char **v, usc_error *err)
{
	return usc__case_json_strings("c.json", text, strlen(text), keys, 3, v,
				      err);
}

static void free_vals(char **v)
{
	for (int i = 0; i < 3; i++)
		usc__free(v[i]);
}

static void test_members(void **state)
{
	char *v[3];
	usc_error err;

	(void)state;
	assert_int_equal(scan(" {\"platform\": \"cpu\", \"seed\": 1,\n"
			      "  \"nested\": {\"platform\": \"tpu\"},\n"
			      "  \"xla_cpu_enable_fast_math\": true,\n"
			      "  \"list\": [1, -2.5e3, \"x\\\"y\", null]}\n",
			      v, &err),
			 USC_OK);
	assert_null(v[0]);
	/* Top level only: the nested "platform" is not read. */
	assert_string_equal(v[1], "cpu");
	assert_string_equal(v[2], "true");
	free_vals(v);
	assert_int_equal(scan("{\"profile\": \"a\\u0062\\n\"}", v, &err),
			 USC_OK);
	assert_string_equal(v[0], "ab\n");
	free_vals(v);
	assert_int_equal(scan("{}", v, &err), USC_OK);
	assert_null(v[1]);
	free_vals(v);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"", "c.json:1:1: malformed JSON: expected an object"},
		{"[1]", "c.json:1:1: malformed JSON: expected an object"},
		{"{\"a\": 1,}", "c.json:1:9: malformed JSON: expected a member name"},
		{"{\"a\" 1}", "c.json:1:6: malformed JSON: expected ':'"},
		{"{\"a\": 1\n\"b\": 2}",
		 "c.json:2:1: malformed JSON: expected ',' or '}'"},
		{"{\"a\": \"x}", "c.json:1:7: malformed JSON: unterminated string"},
		{"{\"a\": [1, 2}", "c.json:1:12: malformed JSON: expected ',' or ']'"},
		{"{\"a\": tru}", "c.json:1:7: malformed JSON: expected a value"},
		{"{\"a\": \"\\q\"}",
		 "c.json:1:8: malformed JSON: bad escape in a string"},
		{"{} x", "c.json:1:4: malformed JSON: text after the object"},
	};
	char *v[3];
	usc_error err;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(scan(bad[i].text, v, &err), USC_EPARSE);
		assert_string_equal(err.message, bad[i].msg);
		for (int k = 0; k < 3; k++)
			assert_null(v[k]);
	}
}

/* A small deterministic generator (xorshift64*). */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void test_mutations(void **state)
{
	static const char good[] =
		"{\"platform\": \"cpu\", \"profile\": \"strict\", \"x\": "
		"[1, {\"y\": [true, false, null]}, \"\\u00e9\"], "
		"\"xla_cpu_enable_fast_math\": false}";
	static const char alphabet[] = "{}[]\":,\\ \n0123456789.-+eEtrufalsn";
	const char *scale = getenv("USC_TEST_SCALE");
	long rounds = 4000 * (scale ? atol(scale) : 1);
	uint64_t s = 0x9E3779B97F4A7C15ULL;
	char buf[sizeof good + 8];

	(void)state;
	for (long r = 0; r < rounds; r++) {
		char *v[3];
		usc_error err;
		size_t len = sizeof good - 1;
		usc_status st;

		memcpy(buf, good, sizeof good);
		for (int e = 0; e < 1 + (int)(next(&s) % 4); e++) {
			size_t at = next(&s) % len;

			switch (next(&s) % 3) {
			case 0: /* replace */
				buf[at] = alphabet[next(&s) %
						   (sizeof alphabet - 1)];
				break;
			case 1: /* delete */
				memmove(buf + at, buf + at + 1, len - at);
				len--;
				break;
			default: /* truncate */
				len = at;
				buf[len] = '\0';
				break;
			}
			if (len == 0)
				break;
		}
		buf[len] = '\0';
		st = usc__case_json_strings("c.json", buf, len, keys, 3, v,
					    &err);
		assert_true(st == USC_OK || st == USC_EPARSE);
		if (st == USC_EPARSE)
			assert_int_equal(strncmp(err.message, "c.json:", 7), 0);
		else
			free_vals(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
