/*
 * The HLO lexer: turns text into tokens on demand, one at a time, so the
 * parser can switch to raw scanning (brace-balanced backend_config, layouts)
 * where HLO's grammar stops being regular.  Every token carries its 1-based
 * line and column.  Internal to src/hlo.
 */
#ifndef USC_HLO_LEXER_H
#define USC_HLO_LEXER_H

#include "internal.h"

typedef enum usc__hlo_tok_kind {
	USC__TOK_EOF,
	USC__TOK_NAME,       /* abc.1, %abc: text excludes the '%' */
	USC__TOK_NAME_COLON, /* "abc:" as in a signature: text excludes ':' */
	USC__TOK_ATTR,       /* "abc=": text excludes '=' */
	USC__TOK_INT,        /* 12, -3, 0x1f */
	USC__TOK_FLOAT,      /* 1.5, -2e-3, -inf, -nan */
	USC__TOK_STRING,     /* "..." with its quotes, escapes untouched */
	USC__TOK_DXD,        /* 3x3 */
	USC__TOK_PAD,        /* 1_1x0_0_1 */
	USC__TOK_DIM_LABELS, /* b01f_01io->b01f */
	USC__TOK_WORD,       /* a digit-led run that is none of the above */
	USC__TOK_RAW,        /* what usc__hlo_lex_raw scanned */
	USC__TOK_SPLIT,      /* a "// -----" line between modules */
	USC__TOK_LPAREN,
	USC__TOK_RPAREN,
	USC__TOK_LBRACE,
	USC__TOK_RBRACE,
	USC__TOK_LBRACKET,
	USC__TOK_RBRACKET,
	USC__TOK_COMMA,
	USC__TOK_EQUAL,
	USC__TOK_COLON,
	USC__TOK_ARROW,      /* -> */
	USC__TOK_LEQ,        /* <= */
	USC__TOK_QUESTION,   /* ? */
	USC__TOK_ELLIPSIS,   /* ... */
	USC__TOK_OTHER       /* any other single character */
} usc__hlo_tok_kind;

typedef struct usc__hlo_token {
	usc__hlo_tok_kind kind;
	const char *text; /* into the source */
	size_t len;
	const char *start; /* first character of the token, '%' included */
	uint32_t line;
	uint32_t column;
	bool percent;      /* a NAME written with '%' */
} usc__hlo_token;

typedef struct usc__hlo_lexer {
	const char *src;
	size_t len;
	size_t pos;
	size_t line_start; /* offset of the current line's first character */
	uint32_t line;
	const char *filename;
} usc__hlo_lexer;

void usc__hlo_lex_init(usc__hlo_lexer *lx, const char *src, size_t len,
		       const char *filename);

/* Scans the next token; fails (USC_EPARSE) on unterminated strings/comments. */
usc_status usc__hlo_lex_next(usc__hlo_lexer *lx, usc__hlo_token *tok,
			     usc_error *err);

/*
 * Scans a raw attribute value from the current position (after "name="):
 * a brace-, bracket- or parenthesis-balanced run, with strings inside
 * respected, that ends at a comma, a space or a closing bracket at depth 0;
 * with one_group, right after the first bracketed group closes (layouts).
 */
usc_status usc__hlo_lex_raw(usc__hlo_lexer *lx, usc__hlo_token *tok,
			    bool one_group, usc_error *err);

/* Moves the lexer back to the start of tok, to rescan it differently. */
void usc__hlo_lex_rewind(usc__hlo_lexer *lx, const usc__hlo_token *tok);

/*
 * Formats the compiler-style error "FILE:LINE:COL: error: MSG", the source
 * line and a caret, into err, and returns USC_EPARSE.
 */
usc_status usc__hlo_error_at(const usc__hlo_lexer *lx, uint32_t line,
			     uint32_t column, usc_error *err, const char *fmt,
			     ...) USC__PRINTF(5, 6);

/* A short description of a token for "found ..." ("'abc'", "end of file"). */
void usc__hlo_tok_describe(const usc__hlo_token *tok, char *buf, size_t size);

#endif /* USC_HLO_LEXER_H */
