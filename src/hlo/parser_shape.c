/*
 * The HLO parser's shapes and literals (parser_internal.h): a shape with
 * its dims, bounds and layout, and a literal's nested brace groups read
 * into the element type its shape names.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/lexer.h"
#include "hlo/parser_internal.h"

/* ---------------------------------------------------------------- shapes */

static usc_status parse_tuple_shape(usc__parser *p, usc_hlo_shape *out)
{
	size_t start = p->stack.len, count = 0;
	void *arr;

	TRY(usc__hp_next(p));
	if (p->tok.kind != USC__TOK_RPAREN) {
		for (;;) {
			usc_hlo_shape e;

			TRY(usc__hp_parse_shape(p, &e));
			TRY(usc__hp_push(p, &e, sizeof e));
			count++;
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RPAREN)
		return usc__hp_fail_expected(p, "',' or ')'");
	TRY(usc__hp_next(p));
	TRY(usc__hp_finish(p, start, &arr));
	out->kind = USC_HLO_SHAPE_TUPLE;
	out->dtype = USC_DTYPE_INVALID;
	out->tuple = arr;
	out->tuple_count = count;
	return USC_OK;
}

typedef struct dim_item {
	int64_t size;
	int64_t kind;
} dim_item;

usc_status usc__hp_parse_shape(usc__parser *p, usc_hlo_shape *out)
{
	size_t start, rank = 0, i;
	usc_dtype dt;
	dim_item *items;
	usc_status st;

	memset(out, 0, sizeof *out);
	if (p->tok.kind == USC__TOK_LPAREN) {
		if (++p->depth > MAX_DEPTH)
			return usc__hp_error_tok(p, &p->tok,
						 "shape nested too deeply");
		st = parse_tuple_shape(p, out);
		p->depth--;
		return st;
	}
	if (p->tok.kind != USC__TOK_NAME || p->tok.percent)
		return usc__hp_fail_expected(p, "shape");
	if (usc_dtype_from_name(p->tok.text, p->tok.len, &dt) != USC_OK) {
		if (usc__hp_peek_char(p, false) == '[')
			return usc__hlo_error_at(
				&p->lx, p->tok.line, p->tok.column, p->err,
				"unknown element type '%.*s'", (int)p->tok.len,
				p->tok.text);
		return usc__hp_fail_expected(p, "shape");
	}
	TRY(usc__hp_next(p));
	TRY(usc__hp_expect(p, USC__TOK_LBRACKET, "'['"));
	start = p->stack.len;
	if (p->tok.kind != USC__TOK_RBRACKET) {
		for (;;) {
			dim_item d = {0, USC_HLO_DIM_STATIC};

			if (p->tok.kind == USC__TOK_QUESTION) {
				d.size = -1;
				d.kind = USC_HLO_DIM_UNBOUNDED;
				TRY(usc__hp_next(p));
			} else {
				if (p->tok.kind == USC__TOK_LEQ) {
					d.kind = USC_HLO_DIM_BOUNDED;
					TRY(usc__hp_next(p));
				}
				if (p->tok.kind != USC__TOK_INT)
					return usc__hp_fail_expected(
						p, "dimension size");
				TRY(usc__hp_tok_int(p, &d.size));
				if (d.size < 0)
					return usc__hp_error_tok(
						p, &p->tok,
						"negative dimension size");
				TRY(usc__hp_next(p));
			}
			TRY(usc__hp_push(p, &d, sizeof d));
			rank++;
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RBRACKET)
		return usc__hp_fail_expected(p, "',' or ']'");
	out->kind = dt == USC_TOKEN ? USC_HLO_SHAPE_TOKEN : USC_HLO_SHAPE_ARRAY;
	out->dtype = dt;
	out->rank = rank;
	if (rank) {
		items = (dim_item *)(void *)(p->stack.data + start);
		out->dims = usc__hlo_arena_alloc(p->arena, rank * sizeof(int64_t));
		out->dim_kinds = usc__hlo_arena_alloc(p->arena, rank);
		if (!out->dims || !out->dim_kinds)
			return usc__hp_oom(p);
		for (i = 0; i < rank; i++) {
			out->dims[i] = items[i].size;
			out->dim_kinds[i] = (uint8_t)items[i].kind;
		}
	}
	p->stack.len = start;
	/* A layout is a brace group right after ']', with no space between. */
	if (usc__hp_peek_char(p, false) == '{') {
		usc__hlo_token raw;

		TRY(usc__hlo_lex_raw(&p->lx, &raw, true, p->err));
		TRY(usc__hp_dup_text(p, raw.text + 1, raw.len - 2,
				     &out->layout));
	}
	return usc__hp_next(p);
}

/* -------------------------------------------------------------- literals */

/* Converts a number's text with strtod, which needs a terminated copy. */
static double text_to_double(const char *s, size_t n)
{
	char buf[128];
	bool neg = n && s[0] == '-';
	const char *t = neg ? s + 1 : s;
	size_t m = neg ? n - 1 : n;

	if (m >= 3 && memcmp(t, "inf", 3) == 0)
		return neg ? -HUGE_VAL : HUGE_VAL;
	if (m >= 3 && memcmp(t, "nan", 3) == 0)
		return neg ? -(double)NAN : (double)NAN;
	if (n >= sizeof buf)
		n = sizeof buf - 1; /* beyond double's precision anyway */
	memcpy(buf, s, n);
	buf[n] = '\0';
	return strtod(buf, NULL);
}

/* One real number: 1, -2.5e3, inf, -nan, nan(0x7f). */
static usc_status parse_number(usc__parser *p, const char **text, double *value)
{
	const char *s = p->tok.start;
	const char *end;
	bool is_nan = false;

	if (p->tok.kind == USC__TOK_INT || p->tok.kind == USC__TOK_FLOAT) {
		is_nan = p->tok.len == 4 && memcmp(p->tok.text, "-nan", 4) == 0;
	} else if (usc__hp_tok_is(&p->tok, "inf")) {
		;
	} else if (usc__hp_tok_is(&p->tok, "nan")) {
		is_nan = true;
	} else {
		return usc__hp_fail_expected(p, "number");
	}
	end = p->tok.text + p->tok.len;
	TRY(usc__hp_next(p));
	/* A NaN may carry its payload: nan(0x7ff). */
	if (is_nan && p->tok.kind == USC__TOK_LPAREN && p->tok.start == end) {
		TRY(usc__hp_next(p));
		if (p->tok.kind != USC__TOK_INT)
			return usc__hp_fail_expected(p, "NaN payload");
		TRY(usc__hp_next(p));
		if (p->tok.kind != USC__TOK_RPAREN)
			return usc__hp_fail_expected(p, "')'");
		end = p->tok.text + 1;
		TRY(usc__hp_next(p));
	}
	*value = text_to_double(s, (size_t)(end - s));
	return usc__hp_dup_text(p, s, (size_t)(end - s), text);
}

static usc_status parse_scalar(usc__parser *p, usc_dtype dt)
{
	usc_hlo_scalar e;

	memset(&e, 0, sizeof e);
	if (dt == USC_C64 || dt == USC_C128) {
		TRY(usc__hp_expect(p, USC__TOK_LPAREN, "'('"));
		TRY(parse_number(p, &e.text, &e.value));
		TRY(usc__hp_expect(p, USC__TOK_COMMA, "','"));
		TRY(parse_number(p, &e.imag_text, &e.imag));
		TRY(usc__hp_expect(p, USC__TOK_RPAREN, "')'"));
	} else if (dt == USC_PRED && p->tok.kind == USC__TOK_NAME) {
		if (usc__hp_tok_is(&p->tok, "true"))
			e.value = 1;
		else if (!usc__hp_tok_is(&p->tok, "false"))
			return usc__hp_fail_expected(p, "true or false");
		TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &e.text));
		TRY(usc__hp_next(p));
	} else {
		TRY(parse_number(p, &e.text, &e.value));
	}
	return usc__hp_push(p, &e, sizeof e);
}

static usc_status parse_array_level(usc__parser *p, const usc_hlo_shape *shape,
				    size_t level)
{
	usc__hlo_token open;
	size_t n = 0;

	if (level == shape->rank)
		return parse_scalar(p, shape->dtype);
	if (p->tok.kind != USC__TOK_LBRACE)
		return usc__hp_fail_expected(p, "'{'");
	open = p->tok;
	TRY(usc__hp_next(p));
	if (p->tok.kind != USC__TOK_RBRACE) {
		for (;;) {
			TRY(parse_array_level(p, shape, level + 1));
			n++;
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RBRACE)
		return usc__hp_fail_expected(p, "',' or '}'");
	if (shape->dim_kinds[level] == USC_HLO_DIM_STATIC &&
	    (int64_t)n != shape->dims[level])
		return usc__hlo_error_at(
			&p->lx, open.line, open.column, p->err,
			"expected %lld elements in dimension %zu, found %zu",
			(long long)shape->dims[level], level, n);
	return usc__hp_next(p);
}

static bool at_elided(const usc__parser *p)
{
	size_t i = p->lx.pos;

	if (p->tok.kind != USC__TOK_LBRACE)
		return false;
	while (i < p->lx.len && (p->lx.src[i] == ' ' || p->lx.src[i] == '\n'))
		i++;
	return p->lx.len - i >= 3 && memcmp(p->lx.src + i, "...", 3) == 0;
}

static usc_status parse_literal_inner(usc__parser *p,
				      const usc_hlo_shape *shape,
				      usc_hlo_literal *out)
{
	size_t start = p->stack.len, i;
	void *arr;

	memset(out, 0, sizeof *out);
	if (at_elided(p)) {
		TRY(usc__hp_next(p));
		TRY(usc__hp_expect(p, USC__TOK_ELLIPSIS, "'...'"));
		TRY(usc__hp_expect(p, USC__TOK_RBRACE, "'}'"));
		out->kind = USC_HLO_LITERAL_ELIDED;
		return USC_OK;
	}
	if (shape->kind == USC_HLO_SHAPE_TUPLE) {
		TRY(usc__hp_expect(p, USC__TOK_LPAREN, "'('"));
		for (i = 0; i < shape->tuple_count; i++) {
			usc_hlo_literal e;

			if (i)
				TRY(usc__hp_expect(p, USC__TOK_COMMA, "','"));
			TRY(usc__hp_parse_literal(p, &shape->tuple[i], &e));
			TRY(usc__hp_push(p, &e, sizeof e));
		}
		if (p->tok.kind != USC__TOK_RPAREN)
			return usc__hp_fail_expected(p, "')'");
		TRY(usc__hp_next(p));
		TRY(usc__hp_finish(p, start, &arr));
		out->kind = USC_HLO_LITERAL_TUPLE;
		out->tuple = arr;
		out->tuple_count = shape->tuple_count;
		return USC_OK;
	}
	if (shape->kind != USC_HLO_SHAPE_ARRAY)
		return usc__hp_fail_expected(p, "')'");
	if (shape->rank > MAX_DEPTH)
		return usc__hp_error_tok(p, &p->tok,
					 "literal nested too deeply");
	TRY(parse_array_level(p, shape, 0));
	out->kind = USC_HLO_LITERAL_ARRAY;
	out->count = (p->stack.len - start) / sizeof(usc_hlo_scalar);
	TRY(usc__hp_finish(p, start, &arr));
	out->elems = arr;
	return USC_OK;
}

usc_status usc__hp_parse_literal(usc__parser *p, const usc_hlo_shape *shape,
				 usc_hlo_literal *out)
{
	usc_status st;

	if (++p->depth > MAX_DEPTH)
		return usc__hp_error_tok(p, &p->tok,
					 "literal nested too deeply");
	st = parse_literal_inner(p, shape, out);
	p->depth--;
	return st;
}
