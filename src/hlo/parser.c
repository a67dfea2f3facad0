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
