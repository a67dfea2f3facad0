/*
 * The HLO printer: IR back to text, in XLA's long form (with '%' names,
 * operand shapes and computation signatures) or the short form that
 * --xla_dump_to writes.  Whatever the parser accepted prints back so that
 * parsing the output gives a structurally equal module; values the parser
 * kept as written (literals, raw attributes) print exactly as written.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "hlo/hlo_internal.h"

typedef struct buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;
} buf;

typedef struct printer {
	buf b;
	bool long_form;
	bool metadata;
} printer;

static void put(buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *d;

		while (cap - b->len <= n) {
			if (cap > SIZE_MAX / 2) {
				b->oom = true;
				return;
			}
			cap *= 2;
		}
		d = usc__realloc(b->data, cap);
		if (!d) {
			b->oom = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_int(buf *b, int64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);

	put(b, tmp, (size_t)n);
}

static void put_name(printer *pr, const char *name)
{
	if (pr->long_form)
		put(&pr->b, "%", 1);
	puts_(&pr->b, name);
}

static void put_string(buf *b, const char *s)
{
	const char *run = s;

	put(b, "\"", 1);
	for (; *s; s++) {
		const char *esc = NULL;

		switch (*s) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\t': esc = "\\t"; break;
		case '\r': esc = "\\r"; break;
		default: break;
		}
		if (esc) {
			put(b, run, (size_t)(s - run));
			puts_(b, esc);
			run = s + 1;
		}
	}
	put(b, run, (size_t)(s - run));
	put(b, "\"", 1);
}

static void print_shape(buf *b, const usc_hlo_shape *s)
{
	size_t i;

	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		put(b, "(", 1);
		for (i = 0; i < s->tuple_count; i++) {
			if (i)
				put(b, ", ", 2);
			print_shape(b, &s->tuple[i]);
		}
		put(b, ")", 1);
		return;
	}
	puts_(b, usc_dtype_name(s->dtype));
	put(b, "[", 1);
	for (i = 0; i < s->rank; i++) {
		if (i)
			put(b, ",", 1);
		if (s->dim_kinds[i] == USC_HLO_DIM_UNBOUNDED) {
			put(b, "?", 1);
			continue;
		}
		if (s->dim_kinds[i] == USC_HLO_DIM_BOUNDED)
			put(b, "<=", 2);
		put_int(b, s->dims[i]);
	}
	put(b, "]", 1);
	if (s->layout) {
		put(b, "{", 1);
		puts_(b, s->layout);
		put(b, "}", 1);
	}
}

static void print_scalar(buf *b, const usc_hlo_scalar *e)
{
	if (e->imag_text) {
		put(b, "(", 1);
		puts_(b, e->text);
		put(b, ", ", 2);
		puts_(b, e->imag_text);
		put(b, ")", 1);
	} else {
		puts_(b, e->text);
	}
}

/* Prints elements [*next, ...) as the nested braces of dims[level..]. */
static void print_array(buf *b, const usc_hlo_shape *s,
			const usc_hlo_literal *l, size_t level, size_t *next)
{
	int64_t i;

	if (level == s->rank) {
		if (*next < l->count)
			print_scalar(b, &l->elems[(*next)++]);
		return;
	}
	put(b, "{", 1);
	for (i = 0; i < s->dims[level]; i++) {
		if (i)
			put(b, ", ", 2);
		print_array(b, s, l, level + 1, next);
	}
	put(b, "}", 1);
}

static void print_literal(buf *b, const usc_hlo_shape *s,
			  const usc_hlo_literal *l)
{
	size_t i;

	switch (l->kind) {
	case USC_HLO_LITERAL_ELIDED:
		puts_(b, "{...}");
		return;
	case USC_HLO_LITERAL_TUPLE:
		put(b, "(", 1);
		for (i = 0; i < l->tuple_count; i++) {
			if (i)
				put(b, ", ", 2);
			print_literal(b, s->kind == USC_HLO_SHAPE_TUPLE &&
						 i < s->tuple_count
					     ? &s->tuple[i]
					     : s,
				      &l->tuple[i]);
		}
		put(b, ")", 1);
		return;
	case USC_HLO_LITERAL_ARRAY:
		break;
	}
	if (s->kind == USC_HLO_SHAPE_ARRAY &&
	    usc_hlo_shape_elements(s) == (int64_t)l->count) {
		size_t next = 0;

		print_array(b, s, l, 0, &next);
		return;
	}
	/* A dynamic shape's literal: print what there is, flat. */
	put(b, "{", 1);
	for (i = 0; i < l->count; i++) {
		if (i)
			put(b, ", ", 2);
		print_scalar(b, &l->elems[i]);
	}
	put(b, "}", 1);
}

static void print_xlist(buf *b, const int64_t *v, size_t n, const char *sep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			puts_(b, sep);
		put_int(b, v[i]);
	}
}

static void print_pads(buf *b, const usc_hlo_pad_dim *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			put(b, "x", 1);
		put_int(b, d[i].lo);
		put(b, "_", 1);
		put_int(b, d[i].hi);
		if (d[i].has_interior) {
			put(b, "_", 1);
			put_int(b, d[i].interior);
		}
	}
}

static void print_window(buf *b, const usc_hlo_attr *a)
{
	int64_t tmp[64];
	size_t i, n = a->count < 64 ? a->count : 64;
	bool first = true;

#define WFIELD(bit, label, expr)                                             \
	if (a->window_fields & (bit)) {                                      \
		if (!first)                                                  \
			put(b, " ", 1);                                      \
		first = false;                                               \
		puts_(b, label "=");                                         \
		for (i = 0; i < n; i++)                                      \
			tmp[i] = (expr);                                     \
		print_xlist(b, tmp, n, "x");                                 \
	}
	put(b, "{", 1);
	WFIELD(USC_HLO_WINDOW_HAS_SIZE, "size", a->window[i].size)
	WFIELD(USC_HLO_WINDOW_HAS_STRIDE, "stride", a->window[i].stride)
	if (a->window_fields & USC_HLO_WINDOW_HAS_PAD) {
		if (!first)
			put(b, " ", 1);
		first = false;
		puts_(b, "pad=");
		for (i = 0; i < n; i++) {
			if (i)
				put(b, "x", 1);
			put_int(b, a->window[i].pad_lo);
			put(b, "_", 1);
			put_int(b, a->window[i].pad_hi);
		}
	}
	WFIELD(USC_HLO_WINDOW_HAS_LHS_DILATE, "lhs_dilate",
	       a->window[i].lhs_dilate)
	WFIELD(USC_HLO_WINDOW_HAS_RHS_DILATE, "rhs_dilate",
	       a->window[i].rhs_dilate)
	WFIELD(USC_HLO_WINDOW_HAS_RHS_REVERSAL, "rhs_reversal",
	       a->window[i].rhs_reversal ? 1 : 0)
#undef WFIELD
	put(b, "}", 1);
}

static void print_metadata(buf *b, const usc_hlo_metadata *m)
{
	bool first = true;
	size_t i;

#define SEP()                                                                \
	do {                                                                 \
		if (!first)                                                  \
			put(b, " ", 1);                                      \
		first = false;                                               \
	} while (0)
	put(b, "{", 1);
	if (m->op_type) {
		SEP();
		puts_(b, "op_type=");
		put_string(b, m->op_type);
	}
	if (m->op_name) {
		SEP();
		puts_(b, "op_name=");
		put_string(b, m->op_name);
	}
	if (m->source_file) {
		SEP();
		puts_(b, "source_file=");
		put_string(b, m->source_file);
	}
	if (m->source_line >= 0) {
		SEP();
		puts_(b, "source_line=");
		put_int(b, m->source_line);
	}
	for (i = 0; i < m->other_count; i++) {
		SEP();
		puts_(b, m->others[i].key);
		put(b, "=", 1);
		puts_(b, m->others[i].value);
	}
#undef SEP
	put(b, "}", 1);
}

static void print_attr(printer *pr, const usc_hlo_attr *a)
{
	buf *b = &pr->b;
	size_t i;

	puts_(b, a->name);
	put(b, "=", 1);
	switch (a->kind) {
	case USC_HLO_ATTR_RAW:
	case USC_HLO_ATTR_IDENT:
	case USC_HLO_ATTR_DIM_LABELS:
		puts_(b, a->text);
		break;
	case USC_HLO_ATTR_INT:
		put_int(b, a->i);
		break;
	case USC_HLO_ATTR_BOOL:
		puts_(b, a->b ? "true" : "false");
		break;
	case USC_HLO_ATTR_STRING:
		put_string(b, a->text);
		break;
	case USC_HLO_ATTR_INTS:
		put(b, "{", 1);
		print_xlist(b, a->ints, a->count, ",");
		put(b, "}", 1);
		break;
	case USC_HLO_ATTR_NAMES: {
		bool pct = pr->long_form &&
			   strcmp(a->name, "control-predecessors") == 0;

		put(b, "{", 1);
		for (i = 0; i < a->count; i++) {
			if (i)
				put(b, ",", 1);
			if (pct)
				put(b, "%", 1);
			puts_(b, a->names[i]);
		}
		put(b, "}", 1);
		break;
	}
	case USC_HLO_ATTR_COMPUTATIONS: {
		bool braces = a->count != 1 ||
			      strcmp(a->name, "branch_computations") == 0 ||
			      strcmp(a->name, "called_computations") == 0;

		if (braces)
			put(b, "{", 1);
		for (i = 0; i < a->count; i++) {
			if (i)
				put(b, ", ", 2);
			put_name(pr, a->names[i]);
		}
		if (braces)
			put(b, "}", 1);
		break;
	}
	case USC_HLO_ATTR_SLICE:
		put(b, "{", 1);
		for (i = 0; i < a->count; i++) {
			if (i)
				put(b, ", ", 2);
			put(b, "[", 1);
			put_int(b, a->slice[i].start);
			put(b, ":", 1);
			put_int(b, a->slice[i].limit);
			if (a->slice[i].has_stride) {
				put(b, ":", 1);
				put_int(b, a->slice[i].stride);
			}
			put(b, "]", 1);
		}
		put(b, "}", 1);
		break;
	case USC_HLO_ATTR_PADDING:
		print_pads(b, a->pad, a->count);
		break;
	case USC_HLO_ATTR_WINDOW:
		print_window(b, a);
		break;
	case USC_HLO_ATTR_METADATA:
		print_metadata(b, a->metadata);
		break;
	}
}

static void print_instr(printer *pr, const usc_hlo_instr *in)
{
	buf *b = &pr->b;
	size_t i;

	puts_(b, in->is_root ? "  ROOT " : "  ");
	put_name(pr, in->name);
	put(b, " = ", 3);
	print_shape(b, &in->shape);
	put(b, " ", 1);
	puts_(b, usc_hlo_opcode_name(in->opcode));
	put(b, "(", 1);
	if (in->opcode == USC_HLO_OP_PARAMETER) {
		put_int(b, in->parameter_number);
	} else if (in->literal) {
		print_literal(b, &in->shape, in->literal);
	} else {
		for (i = 0; i < in->operand_count; i++) {
			if (i)
				put(b, ", ", 2);
			if (pr->long_form) {
				print_shape(b, &in->operands[i]->shape);
				put(b, " ", 1);
			}
			put_name(pr, in->operands[i]->name);
		}
	}
	put(b, ")", 1);
	for (i = 0; i < in->attr_count; i++) {
		if (in->attrs[i].kind == USC_HLO_ATTR_METADATA && !pr->metadata)
			continue;
		put(b, ", ", 2);
		print_attr(pr, &in->attrs[i]);
	}
	put(b, "\n", 1);
}

static void print_signature(printer *pr, const usc_hlo_computation *c)
{
	buf *b = &pr->b;
	size_t i, j, n = 0;

	put(b, " (", 2);
	if (c->has_signature) {
		for (i = 0; i < c->param_count; i++) {
			if (i)
				put(b, ", ", 2);
			puts_(b, c->params[i].name);
			put(b, ": ", 2);
			print_shape(b, &c->params[i].shape);
		}
		puts_(b, ") -> ");
		print_shape(b, &c->result);
		return;
	}
	/* Derived as XLA does: the parameters by number, then the root. */
	for (i = 0; i < c->instr_count; i++) {
		for (j = 0; j < c->instr_count; j++) {
			const usc_hlo_instr *in = c->instrs[j];

			if (in->opcode == USC_HLO_OP_PARAMETER &&
			    in->parameter_number == (int64_t)i) {
				if (n++)
					put(b, ", ", 2);
				puts_(b, in->name);
				put(b, ": ", 2);
				print_shape(b, &in->shape);
				break;
			}
		}
		if (j == c->instr_count)
			break;
	}
	puts_(b, ") -> ");
	print_shape(b, &c->root->shape);
}

static void print_module(printer *pr, const usc_hlo_module *m)
{
	buf *b = &pr->b;
	size_t i, j;

	if (m->has_header) {
		puts_(b, "HloModule ");
		puts_(b, m->name);
		for (i = 0; i < m->attr_count; i++) {
			put(b, ", ", 2);
			print_attr(pr, &m->attrs[i]);
		}
		put(b, "\n\n", 2);
	}
	for (i = 0; i < m->table_count; i++) {
		puts_(b, m->tables[i].name);
		put(b, "\n", 1);
		for (j = 0; j < m->tables[i].count; j++) {
			put_int(b, m->tables[i].entries[j].id);
			put(b, " ", 1);
			puts_(b, m->tables[i].entries[j].value);
			put(b, "\n", 1);
		}
		put(b, "\n", 1);
	}
	for (i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *c = m->computations[i];

		if (i)
			put(b, "\n", 1);
		if (c == m->entry)
			puts_(b, "ENTRY ");
		put_name(pr, c->name);
		if (pr->long_form)
			print_signature(pr, c);
		puts_(b, " {\n");
		for (j = 0; j < c->instr_count; j++)
			print_instr(pr, c->instrs[j]);
		puts_(b, "}\n");
	}
}

usc_hlo_print_options usc_hlo_print_options_default(void)
{
	usc_hlo_print_options o;

	o.form = USC_HLO_PRINT_LONG;
	o.print_metadata = true;
	return o;
}

static usc_status done(printer *pr, char **text_out, size_t *len_out,
		       usc_error *err)
{
	if (!pr->b.data && !pr->b.oom) {
		pr->b.data = usc__malloc(1);
		if (pr->b.data)
			pr->b.data[0] = '\0';
		else
			pr->b.oom = true;
	}
	if (pr->b.oom) {
		usc__free(pr->b.data);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	*text_out = pr->b.data;
	if (len_out)
		*len_out = pr->b.len;
	return USC_OK;
}

static void init_printer(printer *pr, const usc_hlo_print_options *opts)
{
	usc_hlo_print_options d = usc_hlo_print_options_default();

	if (!opts)
		opts = &d;
	memset(pr, 0, sizeof *pr);
	pr->long_form = opts->form == USC_HLO_PRINT_LONG;
	pr->metadata = opts->print_metadata;
}

usc_status usc_hlo_module_print(const usc_hlo_module *m,
				const usc_hlo_print_options *opts,
				char **text_out, size_t *len_out,
				usc_error *err)
{
	printer pr;

	if (!m || !text_out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_module_print: NULL argument");
	init_printer(&pr, opts);
	print_module(&pr, m);
	return done(&pr, text_out, len_out, err);
}

usc_status usc_hlo_file_print(const usc_hlo_file *f,
			      const usc_hlo_print_options *opts,
			      char **text_out, size_t *len_out,
			      usc_error *err)
{
	printer pr;
	size_t i;

	if (!f || !text_out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_file_print: NULL argument");
	init_printer(&pr, opts);
	for (i = 0; i < f->module_count; i++) {
		if (i)
			puts_(&pr.b, "\n// -----\n\n");
		print_module(&pr, f->modules[i]);
	}
	return done(&pr, text_out, len_out, err);
}

usc_status usc_hlo_shape_print(const usc_hlo_shape *s, char **text_out,
			       usc_error *err)
{
	printer pr;

	if (!s || !text_out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_shape_print: NULL argument");
	init_printer(&pr, NULL);
	print_shape(&pr.b, s);
	return done(&pr, text_out, NULL, err);
}

void usc_hlo_text_free(char *text)
{
	usc__free(text);
}
