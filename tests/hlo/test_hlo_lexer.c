/*
 * Lexer unit tests: token kinds, texts and 1-based line:column positions of
 * hand-written inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "hlo/lexer.h"

typedef struct expect_tok {
	usc__hlo_tok_kind kind;
	const char *text;
	uint32_t line, column;
} expect_tok;

static void check_tokens(const char *src, const expect_tok *want, size_t n)
{
	usc__hlo_lexer lx;
	usc__hlo_token t;
	usc_error err;
	size_t i;

	usc__hlo_lex_init(&lx, src, strlen(src), "t");
	for (i = 0; i < n; i++) {
		assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
		if (t.kind != want[i].kind || t.len != strlen(want[i].text) ||
		    memcmp(t.text, want[i].text, t.len) != 0 ||
		    t.line != want[i].line || t.column != want[i].column)
			fail_msg("token %zu: got kind %d '%.*s' at %u:%u, want "
				 "kind %d '%s' at %u:%u",
				 i, (int)t.kind, (int)t.len, t.text, t.line,
				 t.column, (int)want[i].kind, want[i].text,
				 want[i].line, want[i].column);
	}
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
	assert_int_equal(t.kind, USC__TOK_EOF);
}

static void test_names_and_punctuation(void **state)
{
	static const expect_tok want[] = {
		{USC__TOK_NAME, "ROOT", 1, 1},
		{USC__TOK_NAME, "get-tuple-element.3", 1, 6},
		{USC__TOK_EQUAL, "=", 1, 27},
		{USC__TOK_LPAREN, "(", 1, 29},
		{USC__TOK_NAME, "f32", 1, 30},
		{USC__TOK_LBRACKET, "[", 1, 33},
		{USC__TOK_LEQ, "<=", 1, 34},
		{USC__TOK_INT, "8", 1, 36},
		{USC__TOK_COMMA, ",", 1, 37},
		{USC__TOK_QUESTION, "?", 1, 38},
		{USC__TOK_RBRACKET, "]", 1, 39},
		{USC__TOK_RPAREN, ")", 1, 40},
		{USC__TOK_NAME_COLON, "arg.1", 2, 1},
		{USC__TOK_ATTR, "to_apply", 2, 8},
		{USC__TOK_NAME, "_x", 2, 17},
		{USC__TOK_ARROW, "->", 2, 21},
		{USC__TOK_LBRACE, "{", 2, 24},
		{USC__TOK_ELLIPSIS, "...", 2, 25},
		{USC__TOK_RBRACE, "}", 2, 28},
	};

	(void)state;
	check_tokens("ROOT %get-tuple-element.3 = (f32[<=8,?])\n"
		     "arg.1: to_apply=%_x -> {...}",
		     want, USC__ARRAY_LEN(want));
}

static void test_numbers_and_special(void **state)
{
	static const expect_tok want[] = {
		{USC__TOK_INT, "12", 1, 1},
		{USC__TOK_INT, "-3", 1, 4},
		{USC__TOK_INT, "0x1F", 1, 7},
		{USC__TOK_FLOAT, "1.5", 1, 12},
		{USC__TOK_FLOAT, "-2e-06", 1, 16},
		{USC__TOK_FLOAT, "3.40282347e+38", 1, 23},
		{USC__TOK_FLOAT, "-inf", 1, 38},
		{USC__TOK_FLOAT, "-nan", 1, 43},
		{USC__TOK_NAME, "inf", 1, 48},
		{USC__TOK_NAME, "nan", 1, 52},
		{USC__TOK_DXD, "3x3", 2, 1},
		{USC__TOK_PAD, "1_1x0_0_1", 2, 5},
		{USC__TOK_PAD, "-1_2", 2, 15},
		{USC__TOK_DIM_LABELS, "b01f_01io->b01f", 2, 20},
		{USC__TOK_DIM_LABELS, "0bf1_0oi1->0bf1", 2, 36},
		{USC__TOK_WORD, "1-1", 2, 52},
		{USC__TOK_FLOAT, ".5", 2, 56},
	};

	(void)state;
	check_tokens("12 -3 0x1F 1.5 -2e-06 3.40282347e+38 -inf -nan inf nan\n"
		     "3x3 1_1x0_0_1 -1_2 b01f_01io->b01f 0bf1_0oi1->0bf1 1-1 .5",
		     want, USC__ARRAY_LEN(want));
}

static void test_strings_comments_split(void **state)
{
	static const expect_tok want[] = {
		{USC__TOK_STRING, "\"a\\\"b\"", 1, 1},
		{USC__TOK_NAME, "x", 2, 9},
		{USC__TOK_SPLIT, "// -----", 3, 1},
		{USC__TOK_NAME, "y", 4, 1},
	};

	(void)state;
	check_tokens("\"a\\\"b\" // comment\n/* c */ x\n// -----\ny // RUN: z",
		     want, USC__ARRAY_LEN(want));
}

static void test_raw_values(void **state)
{
	const char *src = "{\"a\": {\"b\": \"}\"}}, next=[1,8]<=[8] tail";
	usc__hlo_lexer lx;
	usc__hlo_token t;
	usc_error err;

	(void)state;
	usc__hlo_lex_init(&lx, src, strlen(src), "t");
	assert_int_equal(usc__hlo_lex_raw(&lx, &t, false, &err), USC_OK);
	assert_int_equal(t.len, strlen("{\"a\": {\"b\": \"}\"}}"));
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
	assert_int_equal(t.kind, USC__TOK_COMMA);
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
	assert_int_equal(t.kind, USC__TOK_ATTR);
	assert_int_equal(usc__hlo_lex_raw(&lx, &t, false, &err), USC_OK);
	assert_int_equal(t.len, strlen("[1,8]<=[8]"));
	assert_memory_equal(t.text, "[1,8]<=[8]", t.len);
	assert_int_equal(t.line, 1);
	assert_int_equal(t.column, 25);
}

static void test_errors(void **state)
{
	usc__hlo_lexer lx;
	usc__hlo_token t;
	usc_error err;
	const char *s1 = "x \"abc";
	const char *s2 = "a\n  /* open";

	(void)state;
	usc__hlo_lex_init(&lx, s1, strlen(s1), "f.hlo");
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_EPARSE);
	assert_string_equal(err.message, "f.hlo:1:3: error: unterminated string\n"
					 "x \"abc\n"
					 "  ^");
	usc__hlo_lex_init(&lx, s2, strlen(s2), "f.hlo");
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_OK);
	assert_int_equal(usc__hlo_lex_next(&lx, &t, &err), USC_EPARSE);
	assert_string_equal(err.message, "f.hlo:2:3: error: unterminated comment\n"
					 "  /* open\n"
					 "  ^");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_punctuation),
		cmocka_unit_test(test_numbers_and_special),
		cmocka_unit_test(test_strings_comments_split),
		cmocka_unit_test(test_raw_values),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
