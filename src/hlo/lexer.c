/*
 * The HLO lexer.  HLO text mixes identifiers that contain '.' and '-'
 * (get-tuple-element.3), numbers, and a few compact notations that only
 * make sense as one token: window sizes (3x3), paddings (1_1x0_0) and
 * convolution dim labels (b01f_01io->b01f).  The lexer recognises all of
 * them here so the parser reads a plain token stream.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "hlo/lexer.h"

void usc__hlo_lex_init(usc__hlo_lexer *lx, const char *src, size_t len,
		       const char *filename)
{
	lx->src = src;
	lx->len = len;
	lx->pos = 0;
	lx->line_start = 0;
	lx->line = 1;
	lx->filename = filename ? filename : "<input>";
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(int c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-';
}

static int peek_at(const usc__hlo_lexer *lx, size_t off)
{
	size_t i = lx->pos + off;

	return i < lx->len ? (unsigned char)lx->src[i] : -1;
}

/* Advances over one character, keeping the line count. */
static void advance(usc__hlo_lexer *lx)
{
	if (lx->src[lx->pos] == '\n') {
		lx->line++;
		lx->line_start = lx->pos + 1;
	}
	lx->pos++;
}

static uint32_t column_of(const usc__hlo_lexer *lx, size_t pos)
{
	return (uint32_t)(pos - lx->line_start + 1);
}

usc_status usc__hlo_error_at(const usc__hlo_lexer *lx, uint32_t line,
			     uint32_t column, usc_error *err, const char *fmt,
			     ...)
{
	char msg[256];
	char out[USC_ERROR_MESSAGE_SIZE];
	size_t start = 0, end, i, n;
	uint32_t l = 1;
	va_list ap;
	int k;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* Find the line: errors are rare, a scan from the start is fine. */
	for (i = 0; i < lx->len && l < line; i++) {
		if (lx->src[i] == '\n') {
			l++;
			start = i + 1;
		}
	}
	end = start;
	while (end < lx->len && lx->src[end] != '\n' && lx->src[end] != '\r')
		end++;
	k = snprintf(out, sizeof out, "%s:%u:%u: error: %s\n%.*s\n",
		     lx->filename, (unsigned)line, (unsigned)column, msg,
		     (int)(end - start), lx->src + start);
	n = k < 0 ? 0 : (size_t)k;
	/* The caret line copies tabs so the caret lines up under the column. */
	for (i = 0; i + 1 < column && n + 2 < sizeof out; i++) {
		char c = start + i < end && lx->src[start + i] == '\t' ? '\t'
								      : ' ';
		out[n++] = c;
	}
	if (n + 1 < sizeof out)
		out[n++] = '^';
	out[n < sizeof out ? n : sizeof out - 1] = '\0';
	return usc__fail(err, USC_EPARSE, "%s", out);
}

void usc__hlo_tok_describe(const usc__hlo_token *tok, char *buf, size_t size)
{
	size_t n = tok->len + (tok->percent ? 1 : 0);
	const char *s = tok->start;
	size_t i;
	bool cut = false;

	if (tok->kind == USC__TOK_EOF) {
		snprintf(buf, size, "end of file");
		return;
	}
	if (tok->kind == USC__TOK_NAME_COLON || tok->kind == USC__TOK_ATTR)
		n++;
	for (i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\r') {
			n = i;
			cut = true;
			break;
		}
	}
	if (n > 40) {
		n = 40;
		cut = true;
	}
	snprintf(buf, size, "'%.*s%s'", (int)n, s, cut ? "..." : "");
}

/* Skips spaces and comments; reports a "// -----" line as a split. */
static usc_status skip_space(usc__hlo_lexer *lx, bool *split, usc_error *err)
{
	*split = false;
	while (lx->pos < lx->len) {
		int c = (unsigned char)lx->src[lx->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			advance(lx);
		} else if (c == '/' && peek_at(lx, 1) == '/') {
			size_t s = lx->pos;

			while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
				lx->pos++;
			/*
			 * lit's split-input-file marker: "// -----" separates
			 * the modules of one file.
			 */
			if (lx->pos - s >= 8 &&
			    memcmp(lx->src + s, "// -----", 8) == 0) {
				*split = true;
				lx->pos = s;
				return USC_OK;
			}
		} else if (c == '/' && peek_at(lx, 1) == '*') {
			uint32_t line = lx->line;
			uint32_t col = column_of(lx, lx->pos);

			advance(lx);
			advance(lx);
			for (;;) {
				if (lx->pos + 1 >= lx->len) {
					return usc__hlo_error_at(
						lx, line, col, err,
						"unterminated comment");
				}
				if (lx->src[lx->pos] == '*' &&
				    lx->src[lx->pos + 1] == '/') {
					lx->pos += 2;
					break;
				}
				advance(lx);
			}
		} else {
			break;
		}
	}
	return USC_OK;
}

/* Matches digits; returns how many. */
static size_t digits(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_digit((unsigned char)s[i]))
		i++;
	return i;
}

static bool match_int(const char *s, size_t n)
{
	size_t i = 0;

	if (i < n && s[i] == '-')
		i++;
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		for (i += 2; i < n; i++) {
			int c = (unsigned char)s[i];

			if (!is_digit(c) && !((c | 32) >= 'a' && (c | 32) <= 'f'))
				return false;
		}
		return true;
	}
	return i < n && digits(s + i, n - i) == n - i;
}

static bool match_float(const char *s, size_t n)
{
	size_t i = 0, d, m = 0;

	if (i < n && s[i] == '-')
		i++;
	d = digits(s + i, n - i);
	m += d;
	i += d;
	if (i < n && s[i] == '.') {
		i++;
		d = digits(s + i, n - i);
		m += d;
		i += d;
	}
	if (m == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		d = digits(s + i, n - i);
		if (d == 0)
			return false;
		i += d;
	}
	return i == n;
}

/* 3x3x1: digits separated by 'x'. */
static bool match_dxd(const char *s, size_t n)
{
	size_t i = 0, d;
	int parts = 0;

	for (;;) {
		d = digits(s + i, n - i);
		if (d == 0)
			return false;
		i += d;
		parts++;
		if (i == n)
			return parts >= 2;
		if (s[i] != 'x')
			return false;
		i++;
	}
}

/* lo_hi or lo_hi_interior, dims separated by 'x'; values may be negative. */
static bool match_pad(const char *s, size_t n)
{
	size_t i = 0, d;

	for (;;) {
		int parts = 0;

		for (;;) {
			if (i < n && s[i] == '-')
				i++;
			d = digits(s + i, n - i);
			if (d == 0)
				return false;
			i += d;
			parts++;
			if (i < n && s[i] == '_' && parts < 3) {
				i++;
				continue;
			}
			break;
		}
		if (parts < 2)
			return false;
		if (i == n)
			return true;
		if (s[i] != 'x')
			return false;
		i++;
	}
}

/* Extends a run that ends before "->" into dim labels, if it is one. */
static bool try_dim_labels(usc__hlo_lexer *lx, size_t start)
{
	size_t i;
	bool underscore = false;

	if (peek_at(lx, 0) != '-' || peek_at(lx, 1) != '>')
		return false;
	for (i = start; i < lx->pos; i++) {
		int c = (unsigned char)lx->src[i];

		if (c == '_')
			underscore = true;
		else if (!is_alpha(c) && !is_digit(c) && c != '?')
			return false;
	}
	if (!underscore)
		return false;
	lx->pos += 2;
	while (lx->pos < lx->len &&
	       (is_alpha((unsigned char)lx->src[lx->pos]) ||
		is_digit((unsigned char)lx->src[lx->pos]) ||
		lx->src[lx->pos] == '?'))
		lx->pos++;
	return true;
}

static usc_status lex_string(usc__hlo_lexer *lx, usc__hlo_token *tok,
			     usc_error *err)
{
	uint32_t line = lx->line;
	uint32_t col = column_of(lx, lx->pos);
	size_t s = lx->pos;

	advance(lx);
	for (;;) {
		if (lx->pos >= lx->len)
			return usc__hlo_error_at(lx, line, col, err,
						 "unterminated string");
		if (lx->src[lx->pos] == '\\' && lx->pos + 1 < lx->len) {
			advance(lx);
			advance(lx);
			continue;
		}
		if (lx->src[lx->pos] == '"') {
			lx->pos++;
			break;
		}
		advance(lx);
	}
	tok->kind = USC__TOK_STRING;
	tok->text = lx->src + s;
	tok->len = lx->pos - s;
	return USC_OK;
}

usc_status usc__hlo_lex_next(usc__hlo_lexer *lx, usc__hlo_token *tok,
			     usc_error *err)
{
	usc_status st;
	bool split;
	size_t s;
	int c, c1;

	st = skip_space(lx, &split, err);
	if (st != USC_OK)
		return st;
	s = lx->pos;
	tok->start = lx->src + s;
	tok->text = lx->src + s;
	tok->len = 0;
	tok->line = lx->line;
	tok->column = column_of(lx, s);
	tok->percent = false;
	if (split) {
		while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
			lx->pos++;
		tok->kind = USC__TOK_SPLIT;
		tok->len = lx->pos - s;
		return USC_OK;
	}
	if (s >= lx->len) {
		tok->kind = USC__TOK_EOF;
		return USC_OK;
	}
	c = (unsigned char)lx->src[s];
	c1 = peek_at(lx, 1);
	if (c == '"')
		return lex_string(lx, tok, err);
	/*
	 * A '%' name must also read as a name without its '%' (the short
	 * form drops it), so it starts with a letter or '_' as well.
	 */
	if (is_alpha(c) || c == '_' ||
	    (c == '%' && c1 >= 0 && (is_alpha(c1) || c1 == '_'))) {
		if (c == '%') {
			tok->percent = true;
			lx->pos++;
		}
		while (lx->pos < lx->len) {
			int d = (unsigned char)lx->src[lx->pos];

			if (d == '-' && peek_at(lx, 1) == '>')
				break;
			if (!is_name_char(d))
				break;
			lx->pos++;
		}
		tok->text = lx->src + s + (tok->percent ? 1 : 0);
		tok->len = lx->pos - s - (tok->percent ? 1 : 0);
		if (!tok->percent && try_dim_labels(lx, s)) {
			tok->kind = USC__TOK_DIM_LABELS;
			tok->len = lx->pos - s;
			return USC_OK;
		}
		if (peek_at(lx, 0) == ':') {
			lx->pos++;
			tok->kind = USC__TOK_NAME_COLON;
		} else if (peek_at(lx, 0) == '=') {
			/*
			 * "a==b" is the attribute a with the raw value "=b": the
			 * printer writes such values back as they came.
			 */
			lx->pos++;
			tok->kind = USC__TOK_ATTR;
		} else {
			tok->kind = USC__TOK_NAME;
		}
		return USC_OK;
	}
	if (c == '-' && (c1 == 'i' || c1 == 'n') && lx->pos + 4 <= lx->len &&
	    (memcmp(lx->src + s, "-inf", 4) == 0 ||
	     memcmp(lx->src + s, "-nan", 4) == 0) &&
	    (lx->pos + 4 == lx->len ||
	     !is_name_char((unsigned char)lx->src[s + 4]))) {
		lx->pos += 4;
		tok->kind = USC__TOK_FLOAT;
		tok->len = 4;
		return USC_OK;
	}
	if (is_digit(c) || (c == '-' && c1 >= 0 && (is_digit(c1) || c1 == '.')) ||
	    (c == '.' && c1 >= 0 && is_digit(c1))) {
		lx->pos++;
		while (lx->pos < lx->len) {
			int d = (unsigned char)lx->src[lx->pos];

			if (d == '-' && peek_at(lx, 1) == '>')
				break;
			if (!(is_alpha(d) || is_digit(d) || d == '_' ||
			      d == '.' || d == '-' || d == '+'))
				break;
			lx->pos++;
		}
		tok->len = lx->pos - s;
		if (try_dim_labels(lx, s)) {
			tok->kind = USC__TOK_DIM_LABELS;
			tok->len = lx->pos - s;
		} else if (match_int(tok->text, tok->len)) {
			tok->kind = USC__TOK_INT;
		} else if (match_float(tok->text, tok->len)) {
			tok->kind = USC__TOK_FLOAT;
		} else if (match_dxd(tok->text, tok->len)) {
			tok->kind = USC__TOK_DXD;
		} else if (match_pad(tok->text, tok->len)) {
			tok->kind = USC__TOK_PAD;
		} else {
			tok->kind = USC__TOK_WORD;
		}
		return USC_OK;
	}
	lx->pos++;
	tok->len = 1;
	switch (c) {
	case '(': tok->kind = USC__TOK_LPAREN; break;
	case ')': tok->kind = USC__TOK_RPAREN; break;
	case '{': tok->kind = USC__TOK_LBRACE; break;
	case '}': tok->kind = USC__TOK_RBRACE; break;
	case '[': tok->kind = USC__TOK_LBRACKET; break;
	case ']': tok->kind = USC__TOK_RBRACKET; break;
	case ',': tok->kind = USC__TOK_COMMA; break;
	case '=': tok->kind = USC__TOK_EQUAL; break;
	case ':': tok->kind = USC__TOK_COLON; break;
	case '?': tok->kind = USC__TOK_QUESTION; break;
	case '-':
		if (c1 == '>') {
			lx->pos++;
			tok->len = 2;
			tok->kind = USC__TOK_ARROW;
		} else {
			tok->kind = USC__TOK_OTHER;
		}
		break;
	case '<':
		if (c1 == '=') {
			lx->pos++;
			tok->len = 2;
			tok->kind = USC__TOK_LEQ;
		} else {
			tok->kind = USC__TOK_OTHER;
		}
		break;
	case '.':
		if (c1 == '.' && peek_at(lx, 1) == '.') {
			lx->pos += 2;
			tok->len = 3;
			tok->kind = USC__TOK_ELLIPSIS;
		} else {
			tok->kind = USC__TOK_OTHER;
		}
		break;
	default:
		/* Keep a UTF-8 sequence whole so the message shows it. */
		if (c >= 0x80) {
			while (lx->pos < lx->len &&
			       ((unsigned char)lx->src[lx->pos] & 0xC0) == 0x80)
				lx->pos++;
			tok->len = lx->pos - s;
		}
		tok->kind = USC__TOK_OTHER;
		break;
	}
	return USC_OK;
}

usc_status usc__hlo_lex_raw(usc__hlo_lexer *lx, usc__hlo_token *tok,
			    bool one_group, usc_error *err)
{
	/* The open brackets, innermost last, to check they close in order. */
	char stack[64];
	uint32_t lines[64], cols[64];
	size_t depth = 0, s;
	bool split;
	usc_status st;

	st = skip_space(lx, &split, err);
	if (st != USC_OK)
		return st;
	s = lx->pos;
	tok->kind = USC__TOK_RAW;
	tok->start = lx->src + s;
	tok->text = lx->src + s;
	tok->line = lx->line;
	tok->column = column_of(lx, s);
	tok->percent = false;
	while (lx->pos < lx->len) {
		int c = (unsigned char)lx->src[lx->pos];

		if (c == '"') {
			usc__hlo_token str;

			st = lex_string(lx, &str, err);
			if (st != USC_OK)
				return st;
			continue;
		}
		if (c == '{' || c == '[' || c == '(') {
			if (depth == sizeof stack)
				return usc__hlo_error_at(
					lx, lx->line, column_of(lx, lx->pos),
					err, "brackets nested too deeply");
			stack[depth] = c == '{' ? '}' : c == '[' ? ']' : ')';
			lines[depth] = lx->line;
			cols[depth] = column_of(lx, lx->pos);
			depth++;
		} else if (c == '}' || c == ']' || c == ')') {
			if (depth == 0)
				break;
			if (stack[depth - 1] != c)
				return usc__hlo_error_at(
					lx, lx->line, column_of(lx, lx->pos),
					err, "expected '%c', found '%c'",
					stack[depth - 1], c);
			depth--;
			if (depth == 0) {
				advance(lx);
				if (one_group)
					break;
				/* A closed group may be followed by more: [1]<=[2]. */
				continue;
			}
		} else if (depth == 0 &&
			   (c == ',' || c == ' ' || c == '\t' || c == '\n' ||
			    c == '\r')) {
			break;
		}
		advance(lx);
	}
	if (depth > 0)
		return usc__hlo_error_at(lx, lines[depth - 1], cols[depth - 1],
					 err, "unterminated '%c'",
					 stack[depth - 1] == '}' ? '{'
					 : stack[depth - 1] == ']' ? '['
								   : '(');
	tok->len = lx->pos - s;
	return USC_OK;
}

void usc__hlo_lex_rewind(usc__hlo_lexer *lx, const usc__hlo_token *tok)
{
	lx->pos = (size_t)(tok->start - lx->src);
	lx->line = tok->line;
	lx->line_start = lx->pos - (tok->column - 1);
}
