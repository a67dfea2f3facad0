/*
 * The HLO parser's attributes (parser_internal.h): the table of known
 * attribute names and the kinds of their values, and a reader for each
 * kind (integer lists, names, slices, paddings, windows, dim labels,
 * metadata); an unknown attribute keeps its raw text.
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
