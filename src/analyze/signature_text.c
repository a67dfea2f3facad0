/*
 * Defect signatures (docs/signatures.md): the text of a mutant.  The
 * module is printed once in the short form without metadata (the printer
 * round-trips, docs/hlo.md); the mutated op's line is replaced by a few
 * lines of plain HLO that compute the defect, written with the helpers
 * here (a fresh name, a shape, one instruction line, a splatted
 * constant), and the whole text is parsed again by the search.  The
 * mutation families live in signature_mut_*.c; the catalogue's dispatch
 * in signature_catalogue.c.
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- a text buffer */

void usc__sig_sb_add(usc__sig_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *q;

		while (cap < b->len + n + 1)
			cap *= 2;
		q = usc__realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void usc__sig_sb_printf(usc__sig_buf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		usc__sig_sb_add(b, small, (size_t)n);
		return;
	}
	{
		char *big = usc__malloc((size_t)n + 1);

		if (!big) {
			b->oom = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		usc__sig_sb_add(b, big, (size_t)n);
		usc__free(big);
	}
}
/* ------------------------------------------------- the printed module */

/* The offset of the first computation's opening line. */
static size_t first_block(const usc__sig_text *bt)
{
	size_t pos = 0;

	while (pos < bt->len) {
		const char *e = memchr(bt->text + pos, '\n', bt->len - pos);
		size_t lend = e ? (size_t)(e - bt->text) : bt->len;
		const char *s = bt->text + pos;

		if (lend > pos && s[0] != ' ' && s[0] != '}' &&
		    bt->text[lend - 1] == '{')
			return pos;
		pos = lend + 1;
	}
	return 0;
}

/*
 * [start, end) of the line of instruction in (end excludes the '\n'),
 * scanning from pos, a line start inside block (or (size_t)-1 before the
 * first); *found_block receives the block of the line found.
 */
static bool find_line_from(const usc__sig_text *bt, const usc_hlo_instr *in,
			   size_t pos, size_t block, size_t *start,
			   size_t *end, size_t *found_block)
{
	const char *t = bt->text;
	size_t nl = strlen(in->name);
	size_t want = in->parent->index;

	while (pos < bt->len) {
		const char *e = memchr(t + pos, '\n', bt->len - pos);
		size_t lend = e ? (size_t)(e - t) : bt->len;
		const char *s = t + pos;

		/* A computation's block starts at an unindented line "... {". */
		if (lend > pos && s[0] != ' ' && s[0] != '}' &&
		    t[lend - 1] == '{')
			block = block == (size_t)-1 ? 0 : block + 1;
		else if (block == want && s[0] == ' ') {
			const char *q = s;

			while (*q == ' ')
				q++;
			if (strncmp(q, "ROOT ", 5) == 0)
				q += 5;
			if (strncmp(q, in->name, nl) == 0 &&
			    strncmp(q + nl, " = ", 3) == 0) {
				*start = pos;
				*end = lend;
				*found_block = block;
				return true;
			}
		}
		pos = lend + 1;
	}
	return false;
}

/*
 * [start, end) of the line of instruction in (end excludes the '\n'):
 * from the last line found when in's computation is not before it, else
 * from the start.
 */
static bool find_line(usc__sig_text *bt, const usc_hlo_instr *in,
		      size_t *start, size_t *end)
{
	size_t block;

	if (!(bt->hinted && bt->hint_block != (size_t)-1 &&
	      bt->hint_block <= in->parent->index &&
	      find_line_from(bt, in, bt->hint_pos, bt->hint_block, start, end,
			     &block)) &&
	    !find_line_from(bt, in, 0, (size_t)-1, start, end, &block))
		return false;
	bt->hinted = true;
	bt->hint_pos = *start;
	bt->hint_block = block;
	return true;
}
/* ----------------------------------------------------- one op's mutant */

void usc__sig_set_detail(usc__sig_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->detail || !c->detail_size)
		return;
	va_start(ap, fmt);
	vsnprintf(c->detail, c->detail_size, fmt, ap);
	va_end(ap);
}

/* A fresh helper name, "<op>.sgN". */
const char *usc__sig_hname(usc__sig_ctx *c, char buf[160])
{
	snprintf(buf, 160, "%s.sg%d", c->in->name, c->tmp++);
	return buf;
}

/* "TYPE[d0,d1]" with the dims of the instruction (no layout). */
void usc__sig_shape_txt(char *buf, size_t n, usc_dtype t,
			const usc_hlo_shape *like)
{
	size_t used = (size_t)snprintf(buf, n, "%s[", usc_dtype_name(t));

	for (size_t i = 0; like && i < like->rank && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld",
					 i ? "," : "",
					 (long long)like->dims[i]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}

/* One instruction line: indent, ROOT, name = shape op(args)rest. */
void usc__sig_emit(usc__sig_ctx *c, bool root, const char *name,
		   const char *shape, const char *op, const char *args,
		   const char *rest)
{
	usc__sig_sb_printf(&c->out, "  %s%s = %s %s(%s)%s\n",
			   root ? "ROOT " : "", name, shape, op, args,
			   rest ? rest : "");
}

/* The original line, under another name and never ROOT. */
void usc__sig_emit_renamed(usc__sig_ctx *c, const char *name)
{
	size_t nl = strlen(c->in->name);
	const char *after = c->line + c->name_at + nl;

	usc__sig_sb_printf(&c->out, "  %s%.*s\n", name,
			   (int)(c->line_len - c->name_at - nl), after);
}

/* The original rest of the line (attributes after the operands). */
const char *usc__sig_rest_dup(usc__sig_ctx *c, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)c->rest_len, c->rest);
	return buf;
}

/*
 * The rest with attribute `attr`'s value (a braced {...}) replaced by
 * value; false when the attribute is not there.
 */
bool usc__sig_rest_replace(usc__sig_ctx *c, const char *attr, const char *value,
			   char *buf, size_t n)
{
	char key[64];
	const char *r = c->rest, *hit, *e;
	int depth = 0;

	snprintf(key, sizeof key, "%s={", attr);
	hit = NULL;
	for (const char *p = r; p + strlen(key) <= r + c->rest_len; p++)
		if (strncmp(p, key, strlen(key)) == 0 &&
		    (p == r || p[-1] == ' ' || p[-1] == ',')) {
			hit = p;
			break;
		}
	if (!hit)
		return false;
	e = hit + strlen(key) - 1;
	for (; e < r + c->rest_len; e++) {
		if (*e == '{')
			depth++;
		else if (*e == '}' && --depth == 0)
			break;
	}
	if (e >= r + c->rest_len)
		return false;
	snprintf(buf, n, "%.*s%s=%s%.*s", (int)(hit - r), r, attr, value,
		 (int)(r + c->rest_len - e - 1), e + 1);
	return true;
}

bool usc__sig_is_array(const usc_hlo_shape *s)
{
	return s->kind == USC_HLO_SHAPE_ARRAY;
}

bool usc__sig_is_float_array(const usc_hlo_shape *s)
{
	return usc__sig_is_array(s) && usc_dtype_is_float(s->dtype);
}

int usc__sig_fbits(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f ? f->bits : 0;
}

bool usc__sig_same_dims(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	if (!usc__sig_is_array(a) || !usc__sig_is_array(b) ||
	    a->rank != b->rank)
		return false;
	for (size_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

bool usc__sig_same_shape(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	return usc__sig_same_dims(a, b) && a->dtype == b->dtype;
}

/*
 * Arithmetic on floats whose operands all have the result's type: the ops
 * a compiler computes (and may compute wrongly) in some precision.
 */
bool usc__sig_float_arith(const usc_hlo_instr *in)
{
	switch (in->opcode) {
	case USC_HLO_OP_ABS:
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE:
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE:
	case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_NEGATE:
	case USC_HLO_OP_RSQRT:
	case USC_HLO_OP_SQRT:
	case USC_HLO_OP_CBRT:
	case USC_HLO_OP_TANH:
	case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE:
	case USC_HLO_OP_TAN:
	case USC_HLO_OP_ERF:
	case USC_HLO_OP_ATAN:
	case USC_HLO_OP_SINH:
	case USC_HLO_OP_COSH:
		break;
	default:
		return false;
	}
	if (!usc__sig_is_float_array(&in->shape) || in->operand_count == 0)
		return false;
	for (size_t i = 0; i < in->operand_count; i++)
		if (!usc__sig_same_shape(&in->operands[i]->shape, &in->shape))
			return false;
	return true;
}

/* A float -> float convert. */
bool usc__sig_float_convert(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_CONVERT && in->operand_count == 1 &&
	       usc__sig_is_float_array(&in->shape) &&
	       usc__sig_is_float_array(&in->operands[0]->shape);
}

int usc__sig_precision_of(usc_dtype t)
{
	usc_float_info fi;

	return usc_float_info_of(t, &fi) == USC_OK ? fi.precision : 0;
}

/* The args "a, b" of in, operand k replaced by sub (NULL: none). */
void usc__sig_args_with(const usc_hlo_instr *in, size_t k, const char *sub,
			char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < in->operand_count && used < n; i++)
		used += (size_t)snprintf(
		    buf + used, n - used, "%s%s", i ? ", " : "",
		    i == k && sub ? sub : in->operands[i]->name);
}

/* A scalar constant and its broadcast to the op's dims; returns the name. */
const char *usc__sig_splat(usc__sig_ctx *c, usc_dtype t, const char *value,
			   const usc_hlo_shape *like, char out[160])
{
	char k[160], sh[256], sc[64];

	usc__sig_hname(c, k);
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(t));
	usc__sig_emit(c, false, k, sc, "constant", value, NULL);
	usc__sig_hname(c, out);
	usc__sig_shape_txt(sh, sizeof sh, t, like);
	usc__sig_emit(c, false, out, sh, "broadcast", k, ", dimensions={}");
	return out;
}

/*
 * Each operand of the op converted to shape sh (new instructions), and
 * their names, comma-separated, in args: the operands of the op computed
 * in another type.
 */
void usc__sig_convert_operands(usc__sig_ctx *c, const char *sh, char *args,
			       size_t cap)
{
	const usc_hlo_instr *in = c->in;
	char nm[160];
	size_t used = 0;

	args[0] = '\0';
	for (size_t i = 0; i < in->operand_count && used < cap; i++) {
		usc__sig_hname(c, nm);
		usc__sig_emit(c, false, nm, sh, "convert",
			      in->operands[i]->name, NULL);
		used += (size_t)snprintf(args + used, cap - used, "%s%s",
					 i ? ", " : "", nm);
	}
}

/*
 * The mutant text of in (kind, v) from the printed module bt: *applies
 * false when it does not apply.  *text_out is usc__malloc'd; with
 * text_out NULL only *applies and the detail are worked out (the whole
 * text costs the module's length).
 */
usc_status usc__sig_build_mutant(usc__sig_text *bt,
				 const usc_hlo_instr *in, usc_mutation kind,
				 int v, bool *applies, char *detail,
				 size_t detail_size, char **text_out,
				 usc_error *err)
{
	usc__sig_ctx c;
	size_t s, e;
	const char *op, *p, *open;
	usc__sig_buf whole = {0};
	int depth = 0;

	*applies = false;
	if (text_out)
		*text_out = NULL;
	if (detail && detail_size)
		detail[0] = '\0';
	if (kind <= USC_MUT_NONE || kind >= USC_MUT_OUTPUT_ZERO || v < 0 ||
	    v >= usc_mutation_variants(kind))
		return USC_OK;
	if (!find_line(bt, in, &s, &e))
		return USC_OK;
	memset(&c, 0, sizeof c);
	c.in = in;
	c.line = bt->text + s;
	c.line_len = e - s;
	c.detail = detail;
	c.detail_size = detail_size;
	p = c.line;
	while (*p == ' ')
		p++;
	if (strncmp(p, "ROOT ", 5) == 0)
		p += 5;
	c.name_at = (size_t)(p - c.line);
	/* " opcode(" after "name = shape"; then the operand list's end. */
	op = usc_hlo_opcode_name(in->opcode);
	open = NULL;
	for (const char *q = p + strlen(in->name) + 3; q < c.line + c.line_len;
	     q++) {
		size_t ol = strlen(op);

		if (q[-1] == ' ' && strncmp(q, op, ol) == 0 && q[ol] == '(') {
			open = q + ol;
			break;
		}
	}
	if (!open)
		return USC_OK;
	for (p = open; p < c.line + c.line_len; p++) {
		if (*p == '(' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == '}' || *p == ']') && --depth == 0)
			break;
	}
	if (p >= c.line + c.line_len)
		return USC_OK;
	c.rest = p + 1;
	c.rest_len = (size_t)(c.line + c.line_len - c.rest);
	if (!usc__sig_mutate_lines(&c, kind, v) || c.out.oom || c.pre.oom) {
		bool oom = c.out.oom || c.pre.oom;

		usc__free(c.out.p);
		usc__free(c.pre.p);
		return oom ? usc__fail(err, USC_ENOMEM, "out of memory")
			   : USC_OK;
	}
	if (!text_out) {
		usc__free(c.out.p);
		usc__free(c.pre.p);
		*applies = true;
		return USC_OK;
	}
	if (c.pre.len) {
		/* New computations go before the first one (a computation
		 * is defined before it is called). */
		size_t at = first_block(bt);

		usc__sig_sb_add(&whole, bt->text, at);
		usc__sig_sb_add(&whole, c.pre.p, c.pre.len);
		usc__sig_sb_add(&whole, bt->text + at, s - at);
	} else {
		usc__sig_sb_add(&whole, bt->text, s);
	}
	usc__sig_sb_add(&whole, c.out.p, c.out.len);
	if (e + 1 < bt->len)
		usc__sig_sb_add(&whole, bt->text + e + 1, bt->len - e - 1);
	usc__free(c.out.p);
	usc__free(c.pre.p);
	if (whole.oom) {
		usc__free(whole.p);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	*applies = true;
	*text_out = whole.p;
	return USC_OK;
}

usc_status usc__sig_print_base(const usc_hlo_module *m, usc__sig_text *bt,
			       usc_error *err)
{
	usc_hlo_print_options po = usc_hlo_print_options_default();

	po.form = USC_HLO_PRINT_SHORT;
	po.print_metadata = false;
	bt->hinted = false;
	return usc_hlo_module_print(m, &po, &bt->text, &bt->len, err);
}

static const usc_hlo_instr *find_instr(const usc_hlo_module *m,
				       const char *name)
{
	if (name[0] == '%')
		name++;
	for (size_t i = 0; i < m->computation_count; i++) {
		const usc_hlo_instr *in = usc_hlo_computation_instr(
		    m->computations[i], name);

		if (in)
			return in;
	}
	return NULL;
}

usc_status usc_signature_mutate(const usc_hlo_module *m, const char *instr,
				usc_mutation kind, int variant, bool *applies,
				char *detail, size_t detail_size,
				char **text_out, usc_error *err)
{
	const usc_hlo_instr *in = find_instr(m, instr);
	usc__sig_text bt = {0};
	char *t = NULL;
	usc_status st;

	*applies = false;
	if (text_out)
		*text_out = NULL;
	if (!in)
		return usc__fail(err, USC_ENOTFOUND,
				 "module '%s' has no instruction '%s'",
				 m->name ? m->name : "", instr);
	st = usc__sig_print_base(m, &bt, err);
	if (st != USC_OK)
		return st;
	st = usc__sig_build_mutant(&bt, in, kind, variant, applies, detail,
				   detail_size, &t, err);
	usc_hlo_text_free(bt.text);
	if (st != USC_OK || !t)
		return st;
	/* Hand over in the printer's allocation, freed by usc_hlo_text_free. */
	*text_out = t;
	return USC_OK;
}

void usc_signature_mutant_list_destroy(usc_signature_mutant *list, size_t count)
{
	for (size_t i = 0; list && i < count; i++) {
		usc__free(list[i].op);
		usc__free(list[i].computation);
	}
	usc__free(list);
}

/*
 * The same enumeration as the search's (every computation, every
 * instruction, the catalogue's order, every variant), without evaluating:
 * what a test or a person needs to replay every mutant one by one.
 */
usc_status usc_signature_mutant_list(const usc_hlo_module *m,
				     usc_signature_mutant **out, size_t *count,
				     usc_error *err)
{
	usc_signature_mutant *list = NULL;
	size_t n = 0, cap = 0;
	usc__sig_text bt = {0};
	usc_status st;

	*out = NULL;
	*count = 0;
	st = usc__sig_print_base(m, &bt, err);
	if (st != USC_OK)
		return st;
	for (size_t ci = 0; ci < m->computation_count; ci++) {
		const usc_hlo_computation *comp = m->computations[ci];

		for (size_t ii = 0; ii < comp->instr_count; ii++) {
			const usc_hlo_instr *in = comp->instrs[ii];

			for (int k = USC_MUT_NONE + 1; k < USC_MUT_OUTPUT_ZERO;
			     k++) {
				for (int v = 0;
				     v < usc_mutation_variants((usc_mutation)k);
				     v++) {
					usc_signature_mutant *x;
					char detail[96];
					bool applies = false;

					/* The list needs no mutant's text. */
					st = usc__sig_build_mutant(
					    &bt, in, (usc_mutation)k, v,
					    &applies, detail, sizeof detail,
					    NULL, err);
					if (st != USC_OK)
						goto fail;
					if (!applies)
						continue;
					if (n == cap) {
						size_t nc = cap ? 2 * cap : 64;
						usc_signature_mutant *g =
						    usc__reallocarray(
							list, nc, sizeof *g);

						if (!g)
							goto oom;
						list = g;
						cap = nc;
					}
					x = &list[n];
					memset(x, 0, sizeof *x);
					x->kind = (usc_mutation)k;
					x->variant = v;
					snprintf(x->detail, sizeof x->detail,
						 "%s", detail);
					x->op = usc__strdup(in->name);
					x->computation = usc__strdup(
					    comp->name);
					n++;
					if (!x->op || !x->computation)
						goto oom;
				}
			}
		}
	}
	usc_hlo_text_free(bt.text);
	*out = list;
	*count = n;
	return USC_OK;
oom:
	st = usc__fail(err, USC_ENOMEM, "out of memory");
fail:
	usc_hlo_text_free(bt.text);
	usc_signature_mutant_list_destroy(list, n);
	return st;
}
