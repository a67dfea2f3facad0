/*
 * The HLO parser, internal: the parser's state and the token helpers its
 * files share (parser.c holds the module comment on how parsing works).
 *
 * The pieces:
 *   - parser.c: the token helpers, instructions, computations, modules
 *     and the public entry points (name resolution, the file driver).
 *   - parser_shape.c: shapes and literals.
 *   - parser_attr.c: attributes: the table of known names and kinds and
 *     the reader of each kind's value (windows, slices, dim labels...).
 * Every function returns USC_OK or a status whose message names the file
 * and line:column of the offending token; the arena of a failed parse is
 * freed whole by the caller, so nothing here cleans up on failure.
 */
#ifndef USC_HLO_PARSER_INTERNAL_H
#define USC_HLO_PARSER_INTERNAL_H

#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/hlo_internal.h"
#include "hlo/lexer.h"

/* Nesting beyond this (tuple shapes, literals) is refused, not recursed. */
#define MAX_DEPTH 200

typedef struct usc__pending_operand {
	usc_hlo_instr *instr;
	size_t index;
	const char *name;
	size_t len;
	uint32_t line, column;
} usc__pending_operand;

typedef struct usc__parser {
	usc__hlo_lexer lx;
	usc__hlo_token tok;
	const char *prev_end; /* one past the previous token */
	usc_error *err;
	usc_hlo_file *file;
	usc__hlo_arena *arena;
	usc__hlo_stack stack;
	usc__hlo_map names; /* instructions of the open computation */
	usc__hlo_map comps; /* computations of the open module */
	usc__pending_operand *pending;
	size_t pending_count, pending_cap;
	int depth;
} usc__parser;

#define TRY(expr)                                                            \
	do {                                                                 \
		usc_status try_st_ = (expr);                                 \
		if (try_st_ != USC_OK)                                       \
			return try_st_;                                      \
	} while (0)

/* ------------------------------------------------ token helpers (parser.c) */
usc_status usc__hp_oom(usc__parser *p);
usc_status usc__hp_next(usc__parser *p);
usc_status usc__hp_error_tok(usc__parser *p, const usc__hlo_token *t,
			     const char *msg);
usc_status usc__hp_fail_expected(usc__parser *p, const char *what);
usc_status usc__hp_expect(usc__parser *p, usc__hlo_tok_kind kind,
			  const char *what);
bool usc__hp_tok_is(const usc__hlo_token *t, const char *word);
usc_status usc__hp_dup_text(usc__parser *p, const char *s, size_t n,
			    const char **out);
usc_status usc__hp_push(usc__parser *p, const void *item, size_t size);
usc_status usc__hp_finish(usc__parser *p, size_t start, void **out);
int usc__hp_peek_char(const usc__parser *p, bool skip_space);
usc_status usc__hp_tok_int(usc__parser *p, int64_t *out);
usc_status usc__hp_expect_int(usc__parser *p, int64_t *out, const char *what);
int64_t usc__hp_piece_int(const char *s, size_t n, bool *overflow);

/* ---------------------------------------------- shapes (parser_shape.c) */
usc_status usc__hp_parse_shape(usc__parser *p, usc_hlo_shape *out);

/* -------------------------------------------- literals (parser_shape.c) */
usc_status usc__hp_parse_literal(usc__parser *p, const usc_hlo_shape *shape,
				 usc_hlo_literal *out);

/* ------------------------------------------- attributes (parser_attr.c) */
usc_status usc__hp_raw_value(usc__parser *p, const char **out);
usc_status usc__hp_parse_attr_list(usc__parser *p, usc_hlo_attr **out,
				   size_t *count);

#endif /* USC_HLO_PARSER_INTERNAL_H */
