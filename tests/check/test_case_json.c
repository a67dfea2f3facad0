/*
 * case.json's reader (src/analyze/case_json.c): the members it returns,
 * its errors with line and column, the validation of every member
 * ulpscope reads (type and value, docs/cases.md), and robustness: thousands of seeded
 * random edits of a valid file either parse or fail with USC_EPARSE
 * naming the file, never crash (the sanitizer build runs this too).
 */
#define _POSIX_C_SOURCE 200809L /* popen */
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

/* usc__case_meta_read on text as "c.json". */
static usc_status meta(const char *text, usc__case_meta *m, usc_error *err)
{
	return usc__case_meta_read("c.json", text, strlen(text), m, err);
}

/*
 * Every member ulpscope reads, of the wrong type or value: an error
 * naming the file, the line and column of the value, the key and what
 * was expected (issue 12: these gave exit 0 and "no verdict").
 */
static void test_meta_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"{\"fusion\": [1], \"platform\": 5, \"profile\": {}}",
		 "c.json:1:12: \"fusion\": expected an instruction name (a "
		 "string) or null, found an array"},
		{"{\"platform\": 5}",
		 "c.json:1:14: \"platform\": expected a string (cpu, gpu, "
		 "tpu...) or null, found a number"},
		{"{\n  \"platform\": \"quantum\"}",
		 "c.json:2:15: \"platform\": 'quantum' is not a platform "
		 "ulpscope knows; expected cpu, host, gpu, cuda, rocm or tpu "
		 "(\"profile\" names a profile for another device)"},
		{"{\"platform\": \"CPU\"}",
		 "c.json:1:14: \"platform\": 'CPU' is not a platform ulpscope "
		 "knows; expected cpu, host, gpu, cuda, rocm or tpu "
		 "(\"profile\" names a profile for another device)"},
		{"{\"profile\": {}}",
		 "c.json:1:13: \"profile\": expected a built-in profile name "
		 "or a profile file (a non-empty string) or null, found an "
		 "object"},
		{"{\"profile\": true}",
		 "c.json:1:13: \"profile\": expected a built-in profile name "
		 "or a profile file (a non-empty string) or null, found a "
		 "boolean"},
		{"{\"profile\": \"\"}",
		 "c.json:1:13: \"profile\": is empty; expected a built-in "
		 "profile name or a profile file"},
		{"{\"main_fusion\": 3}",
		 "c.json:1:17: \"main_fusion\": expected an instruction name (a "
		 "string) or null, found a number"},
		{"{\"fusions\": \"a\"}",
		 "c.json:1:13: \"fusions\": expected an array of instruction "
		 "names (strings), found a string"},
		{"{\"fusions\": [\"a\", null]}",
		 "c.json:1:13: \"fusions\": expected an array of instruction "
		 "names (strings), found an element that is not a string"},
		{"{\"platform\": \"cpu\", \"xla_cpu_enable_fast_math\": "
		 "\"true\"}",
		 "c.json:1:49: \"xla_cpu_enable_fast_math\": expected true, "
		 "false or null, found a string"},
		{"{\"xla_cpu_enable_fast_math\": 1}",
		 "c.json:1:30: \"xla_cpu_enable_fast_math\": expected true, "
		 "false or null, found a number"},
		{"{\"platform\": \"cpu\", \"platform\": \"tpu\"}",
		 "c.json:1:21: \"platform\": given twice"},
		/* Malformed JSON is still found first. */
		{"{\"platform\": 5,}",
		 "c.json:1:16: malformed JSON: expected a member name"},
	};
	usc__case_meta m;
	usc_error err;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(meta(bad[i].text, &m, &err), USC_EPARSE);
		assert_string_equal(err.message, bad[i].msg);
		assert_null(m.profile);
	}
}

/*
 * Good members: what is read, and the keys the capture tool writes that
 * ulpscope does not read (nested, of any type) accepted.
 */
static void test_meta_good(void **state)
{
	usc__case_meta m;
	usc_error err;

	(void)state;
	assert_int_equal(meta("{\"fusion\": null, \"fusions\": [\"a\", \"b\"],"
			      " \"main_fusion\": \"b\", \"platform\": \"cpu\","
			      " \"xla_cpu_enable_fast_math\": true,"
			      " \"seed\": 0, \"host\": {\"cpu\": [1, 2]},"
			      " \"inputs\": [{\"file\": \"input_0.npy\"}],"
			      " \"future_key\": [null, 1.5e3]}",
			      &m, &err),
			 USC_OK);
	assert_null(m.profile);
	assert_string_equal(m.platform_profile, "xla-cpu");
	assert_true(m.fast_math);
	usc__case_meta_free(&m);
	assert_int_equal(meta("{\"platform\": \"cuda\", \"profile\": "
			      "\"my.profile\", \"fusions\": [],"
			      " \"xla_cpu_enable_fast_math\": null}",
			      &m, &err),
			 USC_OK);
	assert_string_equal(m.profile, "my.profile");
	assert_string_equal(m.platform_profile, "xla-gpu");
	assert_false(m.fast_math);
	usc__case_meta_free(&m);
	assert_int_equal(meta("{\"platform\": null, \"profile\": null}", &m,
			      &err),
			 USC_OK);
	assert_null(m.profile);
	assert_null(m.platform_profile);
	usc__case_meta_free(&m);
}

/* Every case.json the project holds (capture tool output) is accepted. */
static void test_meta_project_cases(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char cmd[4096], path[4096];
	int n = 0;
	FILE *list;

	(void)state;
	if (!src)
		skip();
	snprintf(cmd, sizeof cmd,
		 "find '%s/data' -name case.json -type f 2>/dev/null", src);
	list = popen(cmd, "r");
	assert_non_null(list);
	while (fgets(path, sizeof path, list)) {
		usc__case_meta m;
		usc_error err;
		char *text;
		size_t len;

		path[strcspn(path, "\n")] = '\0';
		assert_int_equal(usc__read_file(path, &text, &len, &err),
				 USC_OK);
		if (usc__case_meta_read(path, text, len, &m, &err) != USC_OK)
			fail_msg("%s", err.message);
		assert_non_null(m.platform_profile);
		usc__case_meta_free(&m);
		usc__free(text);
		n++;
	}
	pclose(list);
	/* data/examples has 25 cases and data/acceptance 408. */
	assert_true(n >= 25);
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
		cmocka_unit_test(test_meta_errors),
		cmocka_unit_test(test_meta_good),
		cmocka_unit_test(test_meta_project_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
