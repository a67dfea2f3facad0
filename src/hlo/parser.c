/*
 * The HLO parser: a recursive-descent reader over the token stream of
 * lexer.c that builds the IR of include/ulpscope/hlo.h in an arena.
 *
 * Lists are collected on a scratch stack and copied into the arena when
 * they end.  Names are resolved late: operands when their computation
 * closes (so an instruction may be used before the line that defines it),
 * called computations when their module closes (so to_apply=%f may come
 * before %f).  Every failure leaves nothing behind: the arena of a failed
 * parse is freed whole.
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

usc_status usc__hp_oom(usc__parser *p)
{
	return usc__fail(p->err, USC_ENOMEM, "out of memory");
}

usc_status usc__hp_next(usc__parser *p)
{
	p->prev_end = p->tok.text + p->tok.len;
	return usc__hlo_lex_next(&p->lx, &p->tok, p->err);
}

usc_status usc__hp_error_tok(usc__parser *p, const usc__hlo_token *t,
			     const char *msg)
{
	return usc__hlo_error_at(&p->lx, t->line, t->column, p->err, "%s", msg);
}

usc_status usc__hp_fail_expected(usc__parser *p, const char *what)
{
	char found[64];

	usc__hlo_tok_describe(&p->tok, found, sizeof found);
	return usc__hlo_error_at(&p->lx, p->tok.line, p->tok.column, p->err,
				 "expected %s, found %s", what, found);
}

usc_status usc__hp_expect(usc__parser *p, usc__hlo_tok_kind kind,
			  const char *what)
{
	if (p->tok.kind != kind)
		return usc__hp_fail_expected(p, what);
	return usc__hp_next(p);
}

bool usc__hp_tok_is(const usc__hlo_token *t, const char *word)
{
	size_t n = strlen(word);

	return t->kind == USC__TOK_NAME && !t->percent && t->len == n &&
	       memcmp(t->text, word, n) == 0;
}

usc_status usc__hp_dup_text(usc__parser *p, const char *s, size_t n,
			    const char **out)
{
	char *d = usc__hlo_arena_strndup(p->arena, s, n);

	if (!d)
		return usc__hp_oom(p);
	*out = d;
	return USC_OK;
}

usc_status usc__hp_push(usc__parser *p, const void *item, size_t size)
{
	if (usc__hlo_stack_push(&p->stack, item, size) != USC_OK)
		return usc__hp_oom(p);
	return USC_OK;
}

usc_status usc__hp_finish(usc__parser *p, size_t start, void **out)
{
	if (usc__hlo_stack_finish(&p->stack, start, p->arena, out) != USC_OK)
		return usc__hp_oom(p);
	return USC_OK;
}

/* The next source character after the current token (spaces skipped). */
int usc__hp_peek_char(const usc__parser *p, bool skip_space)
{
	size_t i = p->lx.pos;

	while (skip_space && i < p->lx.len &&
	       (p->lx.src[i] == ' ' || p->lx.src[i] == '\t' ||
		p->lx.src[i] == '\n' || p->lx.src[i] == '\r'))
		i++;
	return i < p->lx.len ? (unsigned char)p->lx.src[i] : -1;
}

/* Parses the current INT token into *out; decimal or 0x hex. */
usc_status usc__hp_tok_int(usc__parser *p, int64_t *out)
{
	const char *s = p->tok.text;
	size_t n = p->tok.len, i = 0;
	bool neg = false;
	uint64_t v = 0, limit;
	unsigned base = 10;

	if (p->tok.kind != USC__TOK_INT)
		return usc__hp_fail_expected(p, "integer");
	if (s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (n - i > 2 && s[i] == '0' && (s[i + 1] | 32) == 'x') {
		base = 16;
		i += 2;
	}
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		int c = (unsigned char)s[i];
		unsigned d = c <= '9' ? (unsigned)(c - '0')
				      : (unsigned)((c | 32) - 'a' + 10);

		if (v > (limit - d) / base)
			return usc__hp_error_tok(p, &p->tok,
						 "integer out of range");
		v = v * base + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return USC_OK;
}

usc_status usc__hp_expect_int(usc__parser *p, int64_t *out, const char *what)
{
	if (p->tok.kind != USC__TOK_INT)
		return usc__hp_fail_expected(p, what);
	TRY(usc__hp_tok_int(p, out));
	return usc__hp_next(p);
}

/* Parses "12" out of a piece of a DXD/PAD token (already validated). */
int64_t usc__hp_piece_int(const char *s, size_t n, bool *overflow)
{
	bool neg = n && s[0] == '-';
	uint64_t v = 0;
	size_t i;

	for (i = neg ? 1 : 0; i < n; i++) {
		if (v > (uint64_t)INT64_MAX / 10) {
			*overflow = true;
			return 0;
		}
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX) {
		*overflow = true;
		return 0;
	}
	return neg ? -(int64_t)v : (int64_t)v;
}

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

/* ------------------------------------------------------------ attributes */

/* Kinds beyond usc_hlo_attr_kind, for parsing only. */
enum {
	KIND_CONFIG = 100 /* a "string" or a raw {...} */
};

#define A(name, kind) {name, sizeof(name) - 1, kind}
static const struct {
	const char *name;
	size_t len;
	int kind;
} attr_table[] = {
	A("index", USC_HLO_ATTR_INT),
	A("feature_group_count", USC_HLO_ATTR_INT),
	A("batch_group_count", USC_HLO_ATTR_INT),
	A("index_vector_dim", USC_HLO_ATTR_INT),
	A("iota_dimension", USC_HLO_ATTR_INT),
	A("exponent_bits", USC_HLO_ATTR_INT),
	A("mantissa_bits", USC_HLO_ATTR_INT),
	A("channel_id", USC_HLO_ATTR_INT),
	A("tuple_index", USC_HLO_ATTR_INT),
	A("k", USC_HLO_ATTR_INT),
	A("indices_are_sorted", USC_HLO_ATTR_BOOL),
	A("unique_indices", USC_HLO_ATTR_BOOL),
	A("is_stable", USC_HLO_ATTR_BOOL),
	A("largest", USC_HLO_ATTR_BOOL),
	A("is_scheduled", USC_HLO_ATTR_BOOL),
	A("alias_passthrough_params", USC_HLO_ATTR_BOOL),
	A("use_global_device_ids", USC_HLO_ATTR_BOOL),
	A("constrain_layout", USC_HLO_ATTR_BOOL),
	A("is_host_transfer", USC_HLO_ATTR_BOOL),
	A("left_side", USC_HLO_ATTR_BOOL),
	A("lower", USC_HLO_ATTR_BOOL),
	A("unit_diagonal", USC_HLO_ATTR_BOOL),
	A("dimensions", USC_HLO_ATTR_INTS),
	A("lhs_contracting_dims", USC_HLO_ATTR_INTS),
	A("rhs_contracting_dims", USC_HLO_ATTR_INTS),
	A("lhs_batch_dims", USC_HLO_ATTR_INTS),
	A("rhs_batch_dims", USC_HLO_ATTR_INTS),
	A("lhs_ragged_dims", USC_HLO_ATTR_INTS),
	A("rhs_group_dims", USC_HLO_ATTR_INTS),
	A("offset_dims", USC_HLO_ATTR_INTS),
	A("collapsed_slice_dims", USC_HLO_ATTR_INTS),
	A("start_index_map", USC_HLO_ATTR_INTS),
	A("operand_batching_dims", USC_HLO_ATTR_INTS),
	A("start_indices_batching_dims", USC_HLO_ATTR_INTS),
	A("slice_sizes", USC_HLO_ATTR_INTS),
	A("update_window_dims", USC_HLO_ATTR_INTS),
	A("inserted_window_dims", USC_HLO_ATTR_INTS),
	A("scatter_dims_to_operand_dims", USC_HLO_ATTR_INTS),
	A("input_batching_dims", USC_HLO_ATTR_INTS),
	A("scatter_indices_batching_dims", USC_HLO_ATTR_INTS),
	A("dynamic_slice_sizes", USC_HLO_ATTR_INTS),
	A("fft_length", USC_HLO_ATTR_INTS),
	A("direction", USC_HLO_ATTR_IDENT),
	A("type", USC_HLO_ATTR_IDENT),
	A("kind", USC_HLO_ATTR_IDENT),
	A("algorithm", USC_HLO_ATTR_IDENT),
	A("fft_type", USC_HLO_ATTR_IDENT),
	A("distribution", USC_HLO_ATTR_IDENT),
	A("transpose_a", USC_HLO_ATTR_IDENT),
	A("custom_call_api_version", USC_HLO_ATTR_IDENT),
	A("custom_call_schedule", USC_HLO_ATTR_IDENT),
	A("to_apply", USC_HLO_ATTR_COMPUTATIONS),
	A("calls", USC_HLO_ATTR_COMPUTATIONS),
	A("condition", USC_HLO_ATTR_COMPUTATIONS),
	A("body", USC_HLO_ATTR_COMPUTATIONS),
	A("true_computation", USC_HLO_ATTR_COMPUTATIONS),
	A("false_computation", USC_HLO_ATTR_COMPUTATIONS),
	A("branch_computations", USC_HLO_ATTR_COMPUTATIONS),
	A("called_computations", USC_HLO_ATTR_COMPUTATIONS),
	A("select", USC_HLO_ATTR_COMPUTATIONS),
	A("scatter", USC_HLO_ATTR_COMPUTATIONS),
	A("operand_precision", USC_HLO_ATTR_NAMES),
	A("control-predecessors", USC_HLO_ATTR_NAMES),
	A("slice", USC_HLO_ATTR_SLICE),
	A("padding", USC_HLO_ATTR_PADDING),
	A("window", USC_HLO_ATTR_WINDOW),
	A("dim_labels", USC_HLO_ATTR_DIM_LABELS),
	A("metadata", USC_HLO_ATTR_METADATA),
	A("custom_call_target", USC_HLO_ATTR_STRING),
	A("backend_config", KIND_CONFIG),
};
#undef A

static int attr_kind(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < USC__ARRAY_LEN(attr_table); i++) {
		const char *s = attr_table[i].name;

		if (attr_table[i].len == len && s[0] == name[0] &&
		    memcmp(s, name, len) == 0)
			return attr_table[i].kind;
	}
	return USC_HLO_ATTR_RAW;
}

/* Unescapes the STRING token's text (quotes included) into the arena. */
static usc_status unescape(usc__parser *p, const usc__hlo_token *t,
			   const char **out)
{
	char *d = usc__hlo_arena_alloc(p->arena, t->len);
	size_t i, n = 0;

	if (!d)
		return usc__hp_oom(p);
	for (i = 1; i + 1 < t->len; i++) {
		char c = t->text[i];

		if (c == '\\' && i + 2 < t->len) {
			c = t->text[++i];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			default: break;
			}
		}
		d[n++] = c;
	}
	d[n] = '\0';
	*out = d;
	return USC_OK;
}

/* Scans a raw value after "name=" and stores its text. */
usc_status usc__hp_raw_value(usc__parser *p, const char **out)
{
	usc__hlo_token raw;

	TRY(usc__hlo_lex_raw(&p->lx, &raw, false, p->err));
	if (raw.len == 0) {
		p->tok = raw;
		TRY(usc__hp_next(p));
		return usc__hp_fail_expected(p, "attribute value");
	}
	TRY(usc__hp_dup_text(p, raw.text, raw.len, out));
	p->tok = raw;
	return usc__hp_next(p);
}

/*
 * Parses "{ITEM, ITEM, ...}" (possibly empty), calling item for each; the
 * items push themselves on the scratch stack and count themselves in a.
 */
static usc_status parse_braced(usc__parser *p, usc_hlo_attr *a,
			       usc_status (*item)(usc__parser *,
						  usc_hlo_attr *))
{
	TRY(usc__hp_expect(p, USC__TOK_LBRACE, "'{'"));
	if (p->tok.kind != USC__TOK_RBRACE) {
		for (;;) {
			TRY(item(p, a));
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RBRACE)
		return usc__hp_fail_expected(p, "',' or '}'");
	return usc__hp_next(p);
}

static usc_status push_int(usc__parser *p, usc_hlo_attr *a)
{
	int64_t v;

	TRY(usc__hp_expect_int(p, &v, "integer"));
	TRY(usc__hp_push(p, &v, sizeof v));
	a->count++;
	return USC_OK;
}

static usc_status parse_ints(usc__parser *p, usc_hlo_attr *a)
{
	size_t start = p->stack.len;
	void *arr;

	TRY(parse_braced(p, a, push_int));
	TRY(usc__hp_finish(p, start, &arr));
	a->ints = arr;
	return USC_OK;
}

static usc_status push_name(usc__parser *p, usc_hlo_attr *a)
{
	const char *s;

	if (p->tok.kind != USC__TOK_NAME)
		return usc__hp_fail_expected(p, "name");
	TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &s));
	TRY(usc__hp_push(p, &s, sizeof s));
	a->count++;
	return usc__hp_next(p);
}

static usc_status parse_names(usc__parser *p, usc_hlo_attr *a, bool single_ok)
{
	size_t start = p->stack.len;
	void *arr;

	if (single_ok && p->tok.kind != USC__TOK_LBRACE)
		TRY(push_name(p, a));
	else
		TRY(parse_braced(p, a, push_name));
	TRY(usc__hp_finish(p, start, &arr));
	a->names = arr;
	return USC_OK;
}

/* One "[start:limit]" or "[start:limit:stride]". */
static usc_status push_slice_dim(usc__parser *p, usc_hlo_attr *a)
{
	usc_hlo_slice_dim d = {0, 0, 1, false};

	TRY(usc__hp_expect(p, USC__TOK_LBRACKET, "'['"));
	TRY(usc__hp_expect_int(p, &d.start, "slice start"));
	TRY(usc__hp_expect(p, USC__TOK_COLON, "':'"));
	TRY(usc__hp_expect_int(p, &d.limit, "slice limit"));
	if (p->tok.kind == USC__TOK_COLON) {
		TRY(usc__hp_next(p));
		TRY(usc__hp_expect_int(p, &d.stride, "slice stride"));
		d.has_stride = true;
	}
	TRY(usc__hp_expect(p, USC__TOK_RBRACKET, "']'"));
	TRY(usc__hp_push(p, &d, sizeof d));
	a->count++;
	return USC_OK;
}

static usc_status parse_slice(usc__parser *p, usc_hlo_attr *a)
{
	size_t start = p->stack.len;
	void *arr;

	TRY(parse_braced(p, a, push_slice_dim));
	TRY(usc__hp_finish(p, start, &arr));
	a->slice = arr;
	return USC_OK;
}

/* Splits a PAD token ("1_1x0_0_1") into dims on the stack. */
static usc_status pad_dims(usc__parser *p, size_t *count)
{
	const char *s = p->tok.text, *end = s + p->tok.len;
	bool overflow = false;

	*count = 0;
	if (p->tok.kind != USC__TOK_PAD && p->tok.kind != USC__TOK_INT)
		return usc__hp_fail_expected(
			p, "padding (low_high[_interior]x...)");
	if (p->tok.kind == USC__TOK_INT)
		return usc__hp_fail_expected(
			p, "padding (low_high[_interior]x...)");
	while (s < end) {
		usc_hlo_pad_dim d = {0, 0, 0, false};
		int64_t v[3];
		int n = 0;

		for (;;) {
			const char *q = s;

			if (q < end && *q == '-')
				q++;
			while (q < end && *q >= '0' && *q <= '9')
				q++;
			v[n++] = usc__hp_piece_int(s, (size_t)(q - s),
						   &overflow);
			s = q;
			if (s < end && *s == '_') {
				s++;
				continue;
			}
			break;
		}
		d.lo = v[0];
		d.hi = v[1];
		if (n == 3) {
			d.interior = v[2];
			d.has_interior = true;
		}
		TRY(usc__hp_push(p, &d, sizeof d));
		(*count)++;
		if (s < end)
			s++; /* the 'x' */
	}
	if (overflow)
		return usc__hp_error_tok(p, &p->tok, "integer out of range");
	return usc__hp_next(p);
}

/* Reads "3x3" or "3" into vals; returns how many. */
static usc_status dxd_values(usc__parser *p, int64_t *vals, size_t max,
			     size_t *count)
{
	const char *s = p->tok.text, *end = s + p->tok.len;
	bool overflow = false;

	*count = 0;
	if (p->tok.kind != USC__TOK_DXD && p->tok.kind != USC__TOK_INT)
		return usc__hp_fail_expected(p, "window dimensions (NxM...)");
	if (p->tok.kind == USC__TOK_INT && s[0] == '-')
		return usc__hp_fail_expected(p, "window dimensions (NxM...)");
	while (s < end) {
		const char *q = s;

		while (q < end && *q != 'x')
			q++;
		if (*count == max)
			return usc__hp_error_tok(
				p, &p->tok, "window has too many dimensions");
		vals[(*count)++] =
			usc__hp_piece_int(s, (size_t)(q - s), &overflow);
		s = q < end ? q + 1 : q;
	}
	if (overflow)
		return usc__hp_error_tok(p, &p->tok, "integer out of range");
	return usc__hp_next(p);
}

#define MAX_WINDOW_DIMS 64

static usc_status parse_window(usc__parser *p, usc_hlo_attr *a)
{
	static const char *const fields[] = {"size", "stride", "pad",
					     "lhs_dilate", "rhs_dilate",
					     "rhs_reversal"};
	int64_t vals[6][MAX_WINDOW_DIMS];
	size_t counts[6] = {0};
	size_t start = p->stack.len, n = 0, i;
	uint32_t have = 0;
	void *arr;

	TRY(usc__hp_expect(p, USC__TOK_LBRACE, "'{'"));
	while (p->tok.kind == USC__TOK_ATTR) {
		usc__hlo_token key = p->tok;
		size_t f;

		for (f = 0; f < 6; f++)
			if (strlen(fields[f]) == key.len &&
			    memcmp(fields[f], key.text, key.len) == 0)
				break;
		if (f == 6)
			return usc__hlo_error_at(
				&p->lx, key.line, key.column, p->err,
				"unknown window field '%.*s'", (int)key.len,
				key.text);
		TRY(usc__hp_next(p));
		if (f == 2) {
			size_t pstart = p->stack.len, k;
			usc_hlo_pad_dim *pd;

			TRY(pad_dims(p, &counts[2]));
			if (counts[2] > MAX_WINDOW_DIMS / 2)
				return usc__hp_error_tok(
					p, &key,
					"window has too many dimensions");
			pd = (usc_hlo_pad_dim *)(void *)(p->stack.data + pstart);
			for (k = 0; k < counts[2]; k++) {
				vals[2][2 * k] = pd[k].lo;
				vals[2][2 * k + 1] = pd[k].hi;
			}
			p->stack.len = pstart;
		} else {
			TRY(dxd_values(p, vals[f], MAX_WINDOW_DIMS, &counts[f]));
		}
		have |= 1u << f;
	}
	TRY(usc__hp_expect(p, USC__TOK_RBRACE, "window field or '}'"));
	if (have && !(have & 1u))
		return usc__hp_error_tok(p, &p->tok, "window without size");
	n = counts[0];
	for (i = 1; i < 6; i++) {
		if ((have & (1u << i)) && counts[i] != n)
			return usc__hlo_error_at(
				&p->lx, a->loc.line, a->loc.column, p->err,
				"window %s has %zu dimensions, size has %zu",
				fields[i], counts[i], n);
	}
	for (i = 0; i < n; i++) {
		usc_hlo_window_dim d;

		d.size = vals[0][i];
		d.stride = have & 2u ? vals[1][i] : 1;
		d.pad_lo = have & 4u ? vals[2][2 * i] : 0;
		d.pad_hi = have & 4u ? vals[2][2 * i + 1] : 0;
		d.lhs_dilate = have & 8u ? vals[3][i] : 1;
		d.rhs_dilate = have & 16u ? vals[4][i] : 1;
		d.rhs_reversal = have & 32u ? vals[5][i] != 0 : false;
		TRY(usc__hp_push(p, &d, sizeof d));
	}
	TRY(usc__hp_finish(p, start, &arr));
	a->window = arr;
	a->count = n;
	a->window_fields = have;
	return USC_OK;
}

/* Parses "b01f_01io->b01f": one role letter or spatial digit per dim. */
static usc_status parse_dim_labels(usc__parser *p, usc_hlo_attr *a)
{
	const char *s = p->tok.text, *end = s + p->tok.len;
	const char *parts[3][2];
	const char *roles[3] = {"bf", "io", "bf"};
	usc_hlo_dim_labels *l;
	int64_t *spatial[3];
	size_t nsp = 0, k, i;
	const char *q;

	if (p->tok.kind != USC__TOK_DIM_LABELS)
		return usc__hp_fail_expected(
			p, "dim labels (like b01f_01io->b01f)");
	parts[0][0] = s;
	for (q = s; q < end && *q != '_'; q++)
		;
	parts[0][1] = q;
	if (q == end)
		return usc__hp_fail_expected(
			p, "dim labels (like b01f_01io->b01f)");
	parts[1][0] = q + 1;
	for (q = q + 1; q < end && *q != '-'; q++)
		;
	parts[1][1] = q;
	/* Never form a pointer past the token: "->" must be there. */
	if (end - q < 2 || q[1] != '>')
		return usc__hp_fail_expected(
			p, "dim labels (like b01f_01io->b01f)");
	parts[2][0] = q + 2;
	parts[2][1] = end;
	for (q = parts[0][0]; q < parts[0][1]; q++)
		if (*q >= '0' && *q <= '9')
			nsp++;
	l = usc__hlo_arena_calloc(p->arena, 1, sizeof *l);
	if (!l)
		return usc__hp_oom(p);
	for (k = 0; k < 3; k++) {
		spatial[k] = usc__hlo_arena_calloc(p->arena, nsp ? nsp : 1,
						   sizeof(int64_t));
		if (!spatial[k])
			return usc__hp_oom(p);
		for (i = 0; i < nsp; i++)
			spatial[k][i] = -1;
	}
	l->input_batch = l->input_feature = -1;
	l->kernel_input_feature = l->kernel_output_feature = -1;
	l->output_batch = l->output_feature = -1;
	for (k = 0; k < 3; k++) {
		int64_t *first = k == 0 ? &l->input_batch
				 : k == 1 ? &l->kernel_input_feature
					  : &l->output_batch;
		int64_t *second = k == 0 ? &l->input_feature
				  : k == 1 ? &l->kernel_output_feature
					   : &l->output_feature;
		size_t seen = 0;

		for (q = parts[k][0]; q < parts[k][1]; q++) {
			int64_t pos = q - parts[k][0];
			int64_t *slot;

			if (*q == roles[k][0])
				slot = first;
			else if (*q == roles[k][1])
				slot = second;
			else if (*q >= '0' && *q <= '9' &&
				 (size_t)(*q - '0') < nsp)
				slot = &spatial[k][*q - '0'];
			else
				slot = NULL;
			if (!slot || *slot != -1)
				return usc__hp_error_tok(p, &p->tok,
							 "invalid dim_labels");
			*slot = pos;
			seen++;
		}
		if (*first < 0 || *second < 0 || seen != nsp + 2)
			return usc__hp_error_tok(p, &p->tok,
						 "invalid dim_labels");
	}
	l->spatial_count = nsp;
	l->input_spatial = spatial[0];
	l->kernel_spatial = spatial[1];
	l->output_spatial = spatial[2];
	a->labels = l;
	TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &a->text));
	return usc__hp_next(p);
}

static usc_status parse_metadata(usc__parser *p, usc_hlo_attr *a)
{
	usc_hlo_metadata *m = usc__hlo_arena_calloc(p->arena, 1, sizeof *m);
	size_t start = p->stack.len;
	void *arr;

	if (!m)
		return usc__hp_oom(p);
	m->source_line = -1;
	TRY(usc__hp_expect(p, USC__TOK_LBRACE, "'{'"));
	while (p->tok.kind == USC__TOK_ATTR) {
		usc__hlo_token key = p->tok;
		const char **slot = NULL;

#define KEY_IS(s) (key.len == sizeof(s) - 1 && memcmp(key.text, s, key.len) == 0)
		if (KEY_IS("op_type"))
			slot = &m->op_type;
		else if (KEY_IS("op_name"))
			slot = &m->op_name;
		else if (KEY_IS("source_file"))
			slot = &m->source_file;
		if (slot) {
			TRY(usc__hp_next(p));
			if (p->tok.kind != USC__TOK_STRING)
				return usc__hp_fail_expected(p, "string");
			TRY(unescape(p, &p->tok, slot));
			TRY(usc__hp_next(p));
		} else if (KEY_IS("source_line")) {
			TRY(usc__hp_next(p));
			TRY(usc__hp_expect_int(p, &m->source_line, "integer"));
		} else {
			usc_hlo_metadata_field f;

			TRY(usc__hp_dup_text(p, key.text, key.len, &f.key));
			TRY(usc__hp_raw_value(p, &f.value));
			TRY(usc__hp_push(p, &f, sizeof f));
			m->other_count++;
		}
#undef KEY_IS
		if (p->tok.kind == USC__TOK_COMMA)
			TRY(usc__hp_next(p));
	}
	TRY(usc__hp_expect(p, USC__TOK_RBRACE, "metadata field or '}'"));
	TRY(usc__hp_finish(p, start, &arr));
	m->others = arr;
	a->metadata = m;
	return USC_OK;
}

/* Parses one "name=value" with p->tok on the ATTR token. */
static usc_status parse_attr(usc__parser *p, usc_hlo_attr *a)
{
	int kind;

	memset(a, 0, sizeof *a);
	a->loc.line = p->tok.line;
	a->loc.column = p->tok.column;
	TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &a->name));
	kind = attr_kind(p->tok.text, p->tok.len);
	if (kind == KIND_CONFIG)
		kind = usc__hp_peek_char(p, true) == '"' ? USC_HLO_ATTR_STRING
						 : USC_HLO_ATTR_RAW;
	a->kind = (usc_hlo_attr_kind)kind;
	if (kind == USC_HLO_ATTR_RAW)
		return usc__hp_raw_value(p, &a->text);
	TRY(usc__hp_next(p));
	switch (a->kind) {
	case USC_HLO_ATTR_INT:
		return usc__hp_expect_int(p, &a->i, "integer");
	case USC_HLO_ATTR_BOOL:
		if (usc__hp_tok_is(&p->tok, "true"))
			a->b = true;
		else if (!usc__hp_tok_is(&p->tok, "false"))
			return usc__hp_fail_expected(p, "true or false");
		return usc__hp_next(p);
	case USC_HLO_ATTR_STRING:
		if (p->tok.kind != USC__TOK_STRING)
			return usc__hp_fail_expected(p, "string");
		TRY(unescape(p, &p->tok, &a->text));
		return usc__hp_next(p);
	case USC_HLO_ATTR_IDENT:
		if (p->tok.kind != USC__TOK_NAME || p->tok.percent)
			return usc__hp_fail_expected(p, "identifier");
		TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &a->text));
		return usc__hp_next(p);
	case USC_HLO_ATTR_INTS:
		return parse_ints(p, a);
	case USC_HLO_ATTR_NAMES:
		return parse_names(p, a, false);
	case USC_HLO_ATTR_COMPUTATIONS:
		return parse_names(p, a, true);
	case USC_HLO_ATTR_SLICE:
		return parse_slice(p, a);
	case USC_HLO_ATTR_PADDING: {
		size_t start = p->stack.len;
		void *arr;

		TRY(pad_dims(p, &a->count));
		TRY(usc__hp_finish(p, start, &arr));
		a->pad = arr;
		return USC_OK;
	}
	case USC_HLO_ATTR_WINDOW:
		return parse_window(p, a);
	case USC_HLO_ATTR_DIM_LABELS:
		return parse_dim_labels(p, a);
	case USC_HLO_ATTR_METADATA:
		return parse_metadata(p, a);
	default:
		return usc__hp_error_tok(p, &p->tok,
					 "internal: bad attribute kind");
	}
}

/* Parses ", a=1, b=2" into an arena array. */
usc_status usc__hp_parse_attr_list(usc__parser *p, usc_hlo_attr **out,
				   size_t *count)
{
	size_t start = p->stack.len;
	void *arr;

	*count = 0;
	while (p->tok.kind == USC__TOK_COMMA) {
		usc_hlo_attr a;

		TRY(usc__hp_next(p));
		if (p->tok.kind != USC__TOK_ATTR)
			return usc__hp_fail_expected(p, "attribute");
		TRY(parse_attr(p, &a));
		TRY(usc__hp_push(p, &a, sizeof a));
		(*count)++;
	}
	TRY(usc__hp_finish(p, start, &arr));
	*out = arr;
	return USC_OK;
}

/* ---------------------------------------------------------- instructions */

static usc_status add_pending(usc__parser *p, usc_hlo_instr *in, size_t index)
{
	usc__pending_operand *o;

	if (p->pending_count == p->pending_cap) {
		size_t cap = p->pending_cap ? p->pending_cap * 2 : 256;
		usc__pending_operand *n = usc__reallocarray(p->pending, cap,
							    sizeof *n);

		if (!n)
			return usc__hp_oom(p);
		p->pending = n;
		p->pending_cap = cap;
	}
	o = &p->pending[p->pending_count++];
	o->instr = in;
	o->index = index;
	o->name = p->tok.text;
	o->len = p->tok.len;
	o->line = p->tok.line;
	o->column = p->tok.column;
	return USC_OK;
}

/* True when the current token starts an operand's shape. */
static bool at_shape(const usc__parser *p)
{
	usc_dtype dt;

	if (p->tok.kind == USC__TOK_LPAREN)
		return true;
	return p->tok.kind == USC__TOK_NAME && !p->tok.percent &&
	       usc__hp_peek_char(p, false) == '[' &&
	       usc_dtype_from_name(p->tok.text, p->tok.len, &dt) == USC_OK;
}

static usc_status parse_operands(usc__parser *p, usc_hlo_instr *in)
{
	size_t start = p->stack.len, count = 0;
	void *arr;

	if (p->tok.kind != USC__TOK_RPAREN) {
		for (;;) {
			usc_hlo_instr *placeholder = NULL;

			if (at_shape(p)) {
				/* Long form: the operand's shape, not kept. */
				usc_hlo_shape ignored;

				TRY(usc__hp_parse_shape(p, &ignored));
			}
			if (p->tok.kind != USC__TOK_NAME)
				return usc__hp_fail_expected(p, "operand name");
			TRY(add_pending(p, in, count));
			TRY(usc__hp_push(p, &placeholder, sizeof placeholder));
			count++;
			TRY(usc__hp_next(p));
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RPAREN)
		return usc__hp_fail_expected(p, "',' or ')'");
	TRY(usc__hp_next(p));
	TRY(usc__hp_finish(p, start, &arr));
	in->operands = arr;
	in->operand_count = count;
	return USC_OK;
}

static usc_status parse_instruction(usc__parser *p, usc_hlo_computation *c,
				    usc_hlo_instr **out)
{
	usc_hlo_instr *in = usc__hlo_arena_calloc(p->arena, 1, sizeof *in);
	usc_hlo_opcode op;
	size_t i;
	void *dup;

	if (!in)
		return usc__hp_oom(p);
	in->parent = c;
	in->parameter_number = -1;
	if (usc__hp_tok_is(&p->tok, "ROOT")) {
		in->is_root = true;
		TRY(usc__hp_next(p));
	}
	if (p->tok.kind != USC__TOK_NAME && p->tok.kind != USC__TOK_ATTR)
		return usc__hp_fail_expected(p, "instruction name");
	in->loc.line = p->tok.line;
	in->loc.column = p->tok.column;
	TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &in->name));
	if (usc__hlo_map_put(&p->names, in->name, p->tok.len, in, &dup) !=
	    USC_OK)
		return usc__hp_oom(p);
	if (dup)
		return usc__hlo_error_at(&p->lx, in->loc.line, in->loc.column,
					 p->err,
					 "duplicate instruction name '%s'",
					 in->name);
	if (p->tok.kind == USC__TOK_NAME) {
		TRY(usc__hp_next(p));
		TRY(usc__hp_expect(p, USC__TOK_EQUAL, "'='"));
	} else {
		TRY(usc__hp_next(p));
	}
	TRY(usc__hp_parse_shape(p, &in->shape));
	if (p->tok.kind != USC__TOK_NAME || p->tok.percent)
		return usc__hp_fail_expected(p, "opcode");
	if (usc_hlo_opcode_from_name(p->tok.text, p->tok.len, &op) != USC_OK)
		return usc__hlo_error_at(&p->lx, p->tok.line, p->tok.column,
					 p->err, "unknown opcode '%.*s'",
					 (int)p->tok.len, p->tok.text);
	in->opcode = op;
	TRY(usc__hp_next(p));
	TRY(usc__hp_expect(p, USC__TOK_LPAREN, "'('"));
	if (op == USC_HLO_OP_PARAMETER) {
		if (p->tok.kind != USC__TOK_INT)
			return usc__hp_fail_expected(p, "parameter number");
		TRY(usc__hp_tok_int(p, &in->parameter_number));
		if (in->parameter_number < 0)
			return usc__hp_fail_expected(p, "parameter number");
		TRY(usc__hp_next(p));
		TRY(usc__hp_expect(p, USC__TOK_RPAREN, "')'"));
	} else if (op == USC_HLO_OP_CONSTANT) {
		in->literal = usc__hlo_arena_calloc(p->arena, 1,
						    sizeof *in->literal);
		if (!in->literal)
			return usc__hp_oom(p);
		TRY(usc__hp_parse_literal(p, &in->shape, in->literal));
		TRY(usc__hp_expect(p, USC__TOK_RPAREN, "')'"));
	} else {
		TRY(parse_operands(p, in));
	}
	TRY(usc__hp_parse_attr_list(p, &in->attrs, &in->attr_count));
	for (i = 0; i < in->attr_count; i++)
		if (in->attrs[i].kind == USC_HLO_ATTR_METADATA && !in->metadata)
			in->metadata = in->attrs[i].metadata;
	*out = in;
	return USC_OK;
}

/* ---------------------------------------------------------- computations */

static usc_status parse_signature(usc__parser *p, usc_hlo_computation *c)
{
	size_t start = p->stack.len;
	void *arr;

	TRY(usc__hp_next(p));
	if (p->tok.kind != USC__TOK_RPAREN) {
		for (;;) {
			usc_hlo_param prm;

			if (p->tok.kind != USC__TOK_NAME_COLON)
				return usc__hp_fail_expected(p,
							     "parameter name");
			TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len,
					     &prm.name));
			TRY(usc__hp_next(p));
			TRY(usc__hp_parse_shape(p, &prm.shape));
			TRY(usc__hp_push(p, &prm, sizeof prm));
			c->param_count++;
			if (p->tok.kind != USC__TOK_COMMA)
				break;
			TRY(usc__hp_next(p));
		}
	}
	if (p->tok.kind != USC__TOK_RPAREN)
		return usc__hp_fail_expected(p, "',' or ')'");
	TRY(usc__hp_next(p));
	TRY(usc__hp_finish(p, start, &arr));
	c->params = arr;
	TRY(usc__hp_expect(p, USC__TOK_ARROW, "'->'"));
	TRY(usc__hp_parse_shape(p, &c->result));
	c->has_signature = true;
	return USC_OK;
}

static usc_status resolve_operands(usc__parser *p)
{
	size_t i;

	for (i = 0; i < p->pending_count; i++) {
		usc__pending_operand *o = &p->pending[i];
		usc_hlo_instr *def = usc__hlo_map_get(&p->names, o->name, o->len);

		if (!def)
			return usc__hlo_error_at(&p->lx, o->line, o->column,
						 p->err,
						 "undefined operand '%.*s'",
						 (int)o->len, o->name);
		o->instr->operands[o->index] = def;
	}
	p->pending_count = 0;
	return USC_OK;
}

static usc_status parse_computation(usc__parser *p, usc_hlo_module *m,
				    usc_hlo_computation **out)
{
	usc_hlo_computation *c = usc__hlo_arena_calloc(p->arena, 1, sizeof *c);
	usc__hlo_token open;
	size_t start, i;
	void *arr;

	if (!c)
		return usc__hp_oom(p);
	c->parent = m;
	if (usc__hp_tok_is(&p->tok, "ENTRY")) {
		c->explicit_entry = true;
		c->is_entry = true;
		TRY(usc__hp_next(p));
	}
	if (p->tok.kind != USC__TOK_NAME)
		return usc__hp_fail_expected(p, "computation name");
	c->loc.line = p->tok.line;
	c->loc.column = p->tok.column;
	TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &c->name));
	TRY(usc__hp_next(p));
	if (p->tok.kind == USC__TOK_LPAREN)
		TRY(parse_signature(p, c));
	if (p->tok.kind != USC__TOK_LBRACE)
		return usc__hp_fail_expected(p, "'{'");
	open = p->tok;
	TRY(usc__hp_next(p));
	usc__hlo_map_clear(&p->names);
	p->pending_count = 0;
	start = p->stack.len;
	if (p->tok.kind == USC__TOK_RBRACE)
		return usc__hp_fail_expected(p, "instruction");
	while (p->tok.kind != USC__TOK_RBRACE) {
		usc_hlo_instr *in;

		if (p->tok.kind == USC__TOK_EOF)
			return usc__hp_fail_expected(p, "'}'");
		TRY(parse_instruction(p, c, &in));
		in->index = c->instr_count++;
		if (in->is_root) {
			if (c->root)
				return usc__hlo_error_at(
					&p->lx, in->loc.line, in->loc.column,
					p->err,
					"second ROOT in computation '%s'",
					c->name);
			c->root = in;
			c->explicit_root = true;
		}
		TRY(usc__hp_push(p, &in, sizeof in));
	}
	(void)open;
	TRY(usc__hp_next(p));
	TRY(usc__hp_finish(p, start, &arr));
	c->instrs = arr;
	if (!c->root) {
		c->root = c->instrs[c->instr_count - 1];
		c->root->is_root = true;
	}
	TRY(resolve_operands(p));
	for (i = 0; i < c->instr_count; i++)
		c->instrs[i]->index = i;
	*out = c;
	return USC_OK;
}

/* Resolves computation names of attributes and fills instr->called. */
static usc_status resolve_calls(usc__parser *p, usc_hlo_module *m)
{
	size_t ci, ii, ai, k;

	for (ci = 0; ci < m->computation_count; ci++) {
		usc_hlo_computation *c = m->computations[ci];

		for (ii = 0; ii < c->instr_count; ii++) {
			usc_hlo_instr *in = c->instrs[ii];
			size_t total = 0, n = 0;

			for (ai = 0; ai < in->attr_count; ai++) {
				usc_hlo_attr *a = &in->attrs[ai];

				if (a->kind != USC_HLO_ATTR_COMPUTATIONS)
					continue;
				a->comps = usc__hlo_arena_calloc(
					p->arena, a->count ? a->count : 1,
					sizeof *a->comps);
				if (!a->comps)
					return usc__hp_oom(p);
				for (k = 0; k < a->count; k++) {
					a->comps[k] = usc__hlo_map_get(
						&p->comps, a->names[k],
						strlen(a->names[k]));
					if (!a->comps[k])
						return usc__hlo_error_at(
							&p->lx, a->loc.line,
							a->loc.column, p->err,
							"undefined computation '%s'",
							a->names[k]);
				}
				total += a->count;
			}
			if (!total)
				continue;
			in->called = usc__hlo_arena_calloc(p->arena, total,
							   sizeof *in->called);
			if (!in->called)
				return usc__hp_oom(p);
			for (ai = 0; ai < in->attr_count; ai++) {
				usc_hlo_attr *a = &in->attrs[ai];

				if (a->kind != USC_HLO_ATTR_COMPUTATIONS)
					continue;
				for (k = 0; k < a->count; k++)
					in->called[n++] = a->comps[k];
			}
			in->called_count = total;
		}
	}
	return USC_OK;
}

/* True at "FileNames 1 ..." and the like: a name followed by a number. */
static bool at_table(const usc__parser *p)
{
	int c = usc__hp_peek_char(p, true);

	return p->tok.kind == USC__TOK_NAME && !p->tok.percent &&
	       c >= '0' && c <= '9';
}

/* Parses the stack-frame tables of newer dumps into m->tables. */
static usc_status parse_tables(usc__parser *p, usc_hlo_module *m)
{
	size_t start = p->stack.len;
	void *arr;

	while (at_table(p)) {
		usc_hlo_table t;
		size_t estart;

		TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &t.name));
		TRY(usc__hp_next(p));
		estart = p->stack.len;
		t.count = 0;
		while (p->tok.kind == USC__TOK_INT) {
			usc_hlo_table_entry e;

			TRY(usc__hp_tok_int(p, &e.id));
			TRY(usc__hp_raw_value(p, &e.value));
			TRY(usc__hp_push(p, &e, sizeof e));
			t.count++;
		}
		TRY(usc__hp_finish(p, estart, &arr));
		t.entries = arr;
		TRY(usc__hp_push(p, &t, sizeof t));
		m->table_count++;
	}
	TRY(usc__hp_finish(p, start, &arr));
	m->tables = arr;
	return USC_OK;
}

static bool at_module_end(const usc__parser *p)
{
	return p->tok.kind == USC__TOK_EOF || p->tok.kind == USC__TOK_SPLIT ||
	       usc__hp_tok_is(&p->tok, "HloModule");
}

static usc_status parse_module(usc__parser *p, usc_hlo_module **out)
{
	usc_hlo_module *m = usc__hlo_arena_calloc(p->arena, 1, sizeof *m);
	size_t start, i;
	void *arr;

	if (!m)
		return usc__hp_oom(p);
	m->loc.line = p->tok.line;
	m->loc.column = p->tok.column;
	if (usc__hp_tok_is(&p->tok, "HloModule")) {
		m->has_header = true;
		TRY(usc__hp_next(p));
		if (p->tok.kind != USC__TOK_NAME)
			return usc__hp_fail_expected(p, "module name");
		TRY(usc__hp_dup_text(p, p->tok.text, p->tok.len, &m->name));
		TRY(usc__hp_next(p));
		TRY(usc__hp_parse_attr_list(p, &m->attrs, &m->attr_count));
		TRY(parse_tables(p, m));
	}
	usc__hlo_map_clear(&p->comps);
	start = p->stack.len;
	if (at_module_end(p))
		return usc__hp_fail_expected(p, "computation");
	while (!at_module_end(p)) {
		usc_hlo_computation *c;
		void *dup;

		TRY(parse_computation(p, m, &c));
		c->index = m->computation_count++;
		if (usc__hlo_map_put(&p->comps, c->name, strlen(c->name), c,
				     &dup) != USC_OK)
			return usc__hp_oom(p);
		if (dup)
			return usc__hlo_error_at(
				&p->lx, c->loc.line, c->loc.column, p->err,
				"duplicate computation name '%s'", c->name);
		if (c->explicit_entry) {
			if (m->entry)
				return usc__hlo_error_at(
					&p->lx, c->loc.line, c->loc.column,
					p->err,
					"second ENTRY computation '%s'",
					c->name);
			m->entry = c;
		}
		TRY(usc__hp_push(p, &c, sizeof c));
	}
	TRY(usc__hp_finish(p, start, &arr));
	m->computations = arr;
	if (!m->entry) {
		/* No ENTRY: XLA's convention for such snippets is the last. */
		m->entry = m->computations[m->computation_count - 1];
		m->entry->is_entry = true;
	}
	for (i = 0; i < m->computation_count; i++)
		m->computations[i]->index = i;
	TRY(resolve_calls(p, m));
	*out = m;
	return USC_OK;
}

static usc_status parse_file(usc__parser *p)
{
	size_t start = p->stack.len;
	void *arr;

	TRY(usc__hp_next(p));
	for (;;) {
		usc_hlo_module *m;

		while (p->tok.kind == USC__TOK_SPLIT)
			TRY(usc__hp_next(p));
		if (p->tok.kind == USC__TOK_EOF)
			break;
		TRY(parse_module(p, &m));
		m->index = p->file->module_count++;
		TRY(usc__hp_push(p, &m, sizeof m));
	}
	if (p->file->module_count == 0)
		return usc__hp_fail_expected(p, "HloModule or computation");
	TRY(usc__hp_finish(p, start, &arr));
	p->file->modules = arr;
	return USC_OK;
}

/*
 * HLO text never holds a NUL byte, and the IR keeps C strings: a NUL
 * would silently cut a name or a raw value short, so it is refused here.
 */
static usc_status check_nul(usc__parser *p)
{
	const char *z = memchr(p->lx.src, '\0', p->lx.len);
	const char *line_start = p->lx.src, *q;
	uint32_t line = 1;

	if (!z)
		return USC_OK;
	for (q = p->lx.src; q < z; q++) {
		if (*q == '\n') {
			line++;
			line_start = q + 1;
		}
	}
	return usc__hlo_error_at(&p->lx, line, (uint32_t)(z - line_start + 1),
				 p->err, "unexpected NUL byte");
}

usc_status usc_hlo_parse(const char *text, size_t len, const char *filename,
			 usc_hlo_file **out, usc_error *err)
{
	usc__hlo_arena arena = {NULL, NULL, 0};
	usc_hlo_file *f;
	usc__parser p;
	usc_status st;

	if (!out)
		return usc__fail(err, USC_EINVAL, "usc_hlo_parse: out is NULL");
	*out = NULL;
	if (!text && len)
		return usc__fail(err, USC_EINVAL, "usc_hlo_parse: text is NULL");
	if (!text)
		text = "";
	f = usc__hlo_arena_calloc(&arena, 1, sizeof *f);
	if (!f)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memset(&p, 0, sizeof p);
	p.err = err;
	p.file = f;
	p.arena = &arena;
	usc__hlo_lex_init(&p.lx, text, len, filename);
	p.tok.text = text;
	st = usc__hp_dup_text(&p, p.lx.filename, strlen(p.lx.filename),
			      &f->filename);
	if (st == USC_OK)
		st = check_nul(&p);
	if (st == USC_OK)
		st = parse_file(&p);
	usc__hlo_stack_free(&p.stack);
	usc__hlo_map_free(&p.names);
	usc__hlo_map_free(&p.comps);
	usc__free(p.pending);
	if (st != USC_OK) {
		usc__hlo_arena_free(&arena);
		return st;
	}
	/* The arena's bookkeeping moves into the file it owns. */
	f->arena = arena;
	*out = f;
	return USC_OK;
}

usc_status usc_hlo_parse_file(const char *path, usc_hlo_file **out,
			      usc_error *err)
{
	char *buf;
	size_t len;
	usc_status st;

	if (!path || !out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_parse_file: NULL argument");
	*out = NULL;
	/* "-" asks for standard input, read to its end under the same cap. */
	if (strcmp(path, "-") == 0) {
		path = "<stdin>";
		st = usc__read_stream(stdin, path, 0, &buf, &len, err);
	} else {
		st = usc__read_file(path, &buf, &len, err);
	}
	if (st == USC_ENOTFOUND) {
		/* As documented: a file that cannot be opened is an I/O error. */
		st = USC_EIO;
		if (err)
			err->code = st;
	}
	if (st != USC_OK)
		return st;
	st = usc_hlo_parse(buf, len, path, out, err);
	usc__free(buf);
	return st;
}
