/*
 * HloModuleProto -> IR.
 *
 * The converter writes the module as HLO text, exactly as XLA's printer
 * would (the short form of --xla_dump_to: '%' names, operands without
 * shapes, XLA's order of attributes and its spelling of numbers), and
 * hands that text to the one parser (src/hlo/parser.c).  The IR of a
 * proto is then the IR of its text by construction, and the conversion
 * test compares the printed result with XLA's own text dump.
 *
 * Nothing is dropped silently: an opcode without a rule here, a field of
 * HloInstructionProto that the rule for its opcode does not read, or a
 * field the subset in src/proto/xla_subset.proto does not declare at all
 * (protobuf-c keeps those aside) is an error naming the instruction and
 * the field.
 */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/module_pb.h"
#include "tensor/literal_internal.h"
#include "tensor/tensor_internal.h"

/* A growing text. */
typedef struct mp_text {
	char *p;
	size_t len, cap;
	bool oom;
} mp_text;

typedef struct mp_conv {
	const Xla__HloModuleProto *m;
	const char *file;
	const char *path;
	usc_error *err;
	usc_status st;
	mp_text t;
	/* The computation and instruction being written, for messages. */
	const Xla__HloComputationProto *comp;
	const Xla__HloInstructionProto *ins;
} mp_conv;

static void mp_putn(mp_conv *c, const char *s, size_t n)
{
	mp_text *t = &c->t;
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *p = usc__realloc(t->p, cap);
		if (!p) {
			t->oom = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void mp_puts(mp_conv *c, const char *s)
{
	mp_putn(c, s, strlen(s));
}

static void mp_printf(mp_conv *c, const char *fmt, ...) USC__PRINTF(2, 3);
static void mp_printf(mp_conv *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof buf) {
		mp_putn(c, buf, (size_t)n);
		return;
	}
	char *big = usc__malloc((size_t)n + 1);
	if (!big) {
		c->t.oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	mp_putn(c, big, (size_t)n);
	usc__free(big);
}

/* A quoted string with C escapes, as XLA's CEscape writes it. */
static void mp_quoted(mp_conv *c, const char *s)
{
	mp_puts(c, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			mp_puts(c, "\\\"");
			break;
		case '\\':
			mp_puts(c, "\\\\");
			break;
		case '\n':
			mp_puts(c, "\\n");
			break;
		case '\t':
			mp_puts(c, "\\t");
			break;
		case '\r':
			mp_puts(c, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				mp_printf(c, "\\%03o", *p);
			else
				mp_putn(c, (const char *)p, 1);
		}
	}
	mp_puts(c, "\"");
}

/* Records the first error; later ones are dropped. */
static void mp_fail(mp_conv *c, usc_status code, const char *fmt, ...)
	USC__PRINTF(3, 4);
static void mp_fail(mp_conv *c, usc_status code, const char *fmt, ...)
{
	if (c->st != USC_OK)
		return;
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (c->ins)
		c->st = usc__fail(c->err, code,
				  "%s: %s: computation '%s', instruction '%s' "
				  "(%s): %s",
				  c->file, c->path, c->comp->name, c->ins->name,
				  c->ins->opcode, what);
	else if (c->comp)
		c->st = usc__fail(c->err, code, "%s: %s: computation '%s': %s",
				  c->file, c->path, c->comp->name, what);
	else
		c->st = usc__fail(c->err, code, "%s: %s: %s", c->file, c->path,
				  what);
}

/* ------------------------------------------------------------- shapes */

static void mp_ints(mp_conv *c, const int64_t *v, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++)
		mp_printf(c, "%s%" PRId64, i ? sep : "", v[i]);
}

static void mp_shape(mp_conv *c, const Xla__ShapeProto *s, bool layout)
{
	if (!s) {
		mp_fail(c, USC_EPARSE, "a shape is missing");
		return;
	}
	if (s->element_type == USC__PB_TUPLE) {
		mp_puts(c, "(");
		for (size_t i = 0; i < s->n_tuple_shapes; i++) {
			if (i)
				mp_puts(c, ", ");
			mp_shape(c, s->tuple_shapes[i], layout);
		}
		mp_puts(c, ")");
		return;
	}
	usc_dtype dt = usc__pb_dtype(s->element_type);
	if (dt == USC_DTYPE_INVALID) {
		char name[48];
		usc__pb_type_name(s->element_type, name, sizeof name);
		mp_fail(c, USC_EUNSUPPORTED,
			"shape element type %s has no HLO spelling ulpscope "
			"knows", name);
		return;
	}
	mp_printf(c, "%s[", usc_dtype_name(dt));
	for (size_t i = 0; i < s->n_dimensions; i++) {
		bool dyn = i < s->n_is_dynamic_dimension &&
			   s->is_dynamic_dimension[i];
		mp_printf(c, "%s%s%" PRId64, i ? "," : "", dyn ? "<=" : "",
			  s->dimensions[i]);
	}
	mp_puts(c, "]");
	const Xla__LayoutProto *l = s->layout;
	if (!layout || !l || s->n_dimensions == 0 || dt == USC_TOKEN)
		return;
	mp_puts(c, "{");
	mp_ints(c, l->minor_to_major, l->n_minor_to_major, ",");
	bool colon = false;
#define MP_COLON()                                                           \
	do {                                                                 \
		if (!colon)                                                  \
			mp_puts(c, ":");                                     \
		colon = true;                                                \
	} while (0)
	if (l->n_tiles > 0) {
		MP_COLON();
		for (size_t i = 0; i < l->n_tiles; i++) {
			mp_puts(c, i ? "(" : "T(");
			mp_ints(c, l->tiles[i]->dimensions,
				l->tiles[i]->n_dimensions, ",");
			mp_puts(c, ")");
		}
	}
	if (l->tail_padding_alignment_in_elements > 1) {
		MP_COLON();
		mp_printf(c, "L(%" PRId64 ")",
			  l->tail_padding_alignment_in_elements);
	}
	if (l->element_size_in_bits != 0) {
		MP_COLON();
		mp_printf(c, "E(%" PRId64 ")", l->element_size_in_bits);
	}
	if (l->memory_space != 0) {
		MP_COLON();
		mp_printf(c, "S(%" PRId64 ")", l->memory_space);
	}
#undef MP_COLON
	mp_puts(c, "}");
}

/* ----------------------------------------------------------- literals */

/*
 * An element as XLA's printer writes it: a float with the fewer of two
 * precisions, the format's digits10 if that reads back exactly, else its
 * max_digits10 (as C++'s numeric_limits define them for a p-bit
 * significand: floor((p-1) log10 2) and ceil(p log10 2 + 1)).  "Reads
 * back" is judged in float for the formats narrower than 64 bits, as XLA
 * does (f16 0.70703125 prints "0.70703", since "0.707" is another float).
 */
static void mp_float_text(usc_dtype dt, uint64_t bits, char *buf, size_t size)
{
	const usc_format *f = usc_format_of(dt);
	double v = 0;
	if (usc_bits_is_nan(dt, bits)) {
		bool neg = f->has_sign && f->nan != USC_NAN_NEGZERO &&
			   ((bits >> (f->bits - 1)) & 1u);
		snprintf(buf, size, "%snan", neg ? "-" : "");
		if (f->nan == USC_NAN_IEEE) {
			uint64_t man = bits & ((UINT64_C(1) << f->man_bits) - 1);
			uint64_t quiet = UINT64_C(1) << (f->man_bits - 1);
			if (man != quiet)
				snprintf(buf, size, "%snan(0x%" PRIx64 ")",
					 neg ? "-" : "", man);
		}
		return;
	}
	(void)usc_decode_double(dt, bits, &v);
	if (isinf(v)) {
		snprintf(buf, size, "%s", v < 0 ? "-inf" : "inf");
		return;
	}
	int p = f->man_bits + 1;
	int lo = (int)floor((p - 1) * 0.30102999566398120);
	int hi = (int)ceil(p * 0.30102999566398120 + 1);
	snprintf(buf, size, "%.*g", lo, v);
	bool exact = f->bits == 64 ? strtod(buf, NULL) == v
				   : strtof(buf, NULL) == (float)v;
	if (!exact)
		snprintf(buf, size, "%.*g", hi, v);
}

static void mp_elem_text(const usc_tensor *t, uint64_t i, char *buf,
			 size_t size)
{
	usc_dtype dt = usc_tensor_dtype(t);
	const usc_format *f = usc_format_of(dt);
	uint64_t bits = 0;
	if (f->kind == USC_KIND_COMPLEX) {
		uint64_t re, im;
		char a[64], b[64];
		usc_dtype part = dt == USC_C64 ? USC_F32 : USC_F64;
		(void)usc_tensor_get_complex_bits(t, i, &re, &im);
		mp_float_text(part, re, a, sizeof a);
		mp_float_text(part, im, b, sizeof b);
		snprintf(buf, size, "(%s, %s)", a, b);
		return;
	}
	(void)usc_tensor_get_bits(t, i, &bits);
	if (f->kind == USC_KIND_PRED) {
		snprintf(buf, size, "%s", bits ? "true" : "false");
	} else if (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT) {
		int64_t s = 0;
		uint64_t u = 0;
		(void)usc_decode_int(dt, bits, &s, &u);
		if (f->kind == USC_KIND_SINT)
			snprintf(buf, size, "%" PRId64, s);
		else
			snprintf(buf, size, "%" PRIu64, u);
	} else {
		mp_float_text(dt, bits, buf, size);
	}
}

/* Writes dims[d..] of t starting at flat element *next, XLA's nesting. */
static void mp_array(mp_conv *c, const usc_tensor *t, size_t d,
		     uint64_t *next)
{
	size_t rank = usc_tensor_rank(t);
	const int64_t *dims = usc_tensor_dims(t);
	char buf[160];
	if (d == rank) {
		mp_elem_text(t, (*next)++, buf, sizeof buf);
		mp_puts(c, buf);
		return;
	}
	bool inner = d + 1 == rank;
	mp_puts(c, inner && rank == 1 ? "{" : "{ ");
	for (int64_t i = 0; i < dims[d]; i++) {
		if (i)
			mp_puts(c, ", ");
		mp_array(c, t, d + 1, next);
	}
	mp_puts(c, inner && rank == 1 ? "}" : " }");
}

static void mp_literal(mp_conv *c, const usc_literal *l)
{
	if (l->is_tuple) {
		mp_puts(c, "(");
		for (size_t i = 0; i < l->tuple_count; i++) {
			if (i)
				mp_puts(c, ", ");
			mp_literal(c, &l->tuple[i]);
		}
		mp_puts(c, ")");
		return;
	}
	uint64_t next = 0;
	mp_array(c, l->tensor, 0, &next);
}

/* ---------------------------------------------------------- attributes */

/* Fields of HloInstructionProto an opcode's rule may read. */
enum {
	F_DIMENSIONS = 1u << 0,
	F_WINDOW = 1u << 1,
	F_SLICE = 1u << 2,
	F_PADDING = 1u << 3,
	F_DOT = 1u << 4,
	F_GATHER = 1u << 5,
	F_GATHER_SIZES = 1u << 6,
	F_COMPARISON = 1u << 7,
	F_FUSION_KIND = 1u << 8,
	F_TUPLE_INDEX = 1u << 9,
	F_LITERAL = 1u << 10,
	F_PARAMETER = 1u << 11,
	F_PRECISION = 1u << 12,
	F_REDUCE_PRECISION = 1u << 13,
	F_DYNAMIC_SIZES = 1u << 14,
	F_CALLS = 1u << 15,
	F_SORTED = 1u << 16,
	F_CONVOLUTION = 1u << 17,
	F_SCATTER = 1u << 18,
	F_GROUPS = 1u << 19,
	F_UNIQUE = 1u << 20,
	F_STABLE = 1u << 21,
	F_TARGET = 1u << 22,
	F_CONTROL = 1u << 23
};

/* The first field ins sets that mask does not allow, or NULL. */
static const char *mp_unread_field(const Xla__HloInstructionProto *x,
				   unsigned mask)
{
	struct {
		unsigned bit;
		bool set;
		const char *name;
	} f[] = {
		{F_DIMENSIONS, x->n_dimensions > 0, "dimensions"},
		{F_WINDOW, x->window != NULL, "window"},
		{F_SLICE, x->n_slice_dimensions > 0, "slice_dimensions"},
		{F_PADDING, x->padding_config != NULL, "padding_config"},
		{F_DOT, x->dot_dimension_numbers != NULL,
		 "dot_dimension_numbers"},
		{F_GATHER, x->gather_dimension_numbers != NULL,
		 "gather_dimension_numbers"},
		{F_GATHER_SIZES, x->n_gather_slice_sizes > 0,
		 "gather_slice_sizes"},
		{F_COMPARISON, x->comparison_direction &&
				       x->comparison_direction[0],
		 "comparison_direction"},
		{F_FUSION_KIND, x->fusion_kind && x->fusion_kind[0],
		 "fusion_kind"},
		{F_TUPLE_INDEX, x->tuple_index != 0, "tuple_index"},
		{F_LITERAL, x->literal != NULL, "literal"},
		{F_PARAMETER, x->parameter_number != 0, "parameter_number"},
		{F_PRECISION, x->precision_config != NULL,
		 "precision_config"},
		{F_REDUCE_PRECISION, x->exponent_bits || x->mantissa_bits,
		 "exponent_bits/mantissa_bits"},
		{F_DYNAMIC_SIZES, x->n_dynamic_slice_sizes > 0,
		 "dynamic_slice_sizes"},
		{F_CALLS, x->n_called_computation_ids > 0,
		 "called_computation_ids"},
		{F_SORTED, x->indices_are_sorted, "indices_are_sorted"},
		{F_CONVOLUTION, x->convolution_dimension_numbers != NULL,
		 "convolution_dimension_numbers"},
		{0, x->distribution != 0, "distribution"},
		{0, x->epsilon != 0, "epsilon"},
		{0, x->feature_index != 0, "feature_index"},
		{F_TARGET, x->custom_call_target && x->custom_call_target[0],
		 "custom_call_target"},
		{F_TARGET, x->custom_call_api_version > 1,
		 "custom_call_api_version"},
		{F_SCATTER, x->scatter_dimension_numbers != NULL,
		 "scatter_dimension_numbers"},
		{F_GROUPS, x->feature_group_count > 1, "feature_group_count"},
		{F_GROUPS, x->batch_group_count > 1, "batch_group_count"},
		{F_STABLE, x->is_stable, "is_stable"},
		{F_UNIQUE, x->unique_indices, "unique_indices"},
		{0, x->rng_algorithm != 0, "rng_algorithm"},
		{0, x->k != 0, "k"},
		{0, x->largest, "largest"},
		{0, x->statistics_viz &&
			    (x->statistics_viz->n_statistics > 0 ||
			     x->statistics_viz->stat_index_to_visualize != 0),
		 "statistics_viz"},
		{F_CONTROL, x->n_control_predecessor_ids > 0,
		 "control_predecessor_ids"},
	};
	for (size_t i = 0; i < USC__ARRAY_LEN(f); i++)
		if (f[i].set && !(f[i].bit & mask))
			return f[i].name;
	return NULL;
}

static const Xla__HloComputationProto *mp_comp_by_id(mp_conv *c, int64_t id)
{
	for (size_t i = 0; i < c->m->n_computations; i++)
		if (c->m->computations[i]->id == id)
			return c->m->computations[i];
	return NULL;
}

static const Xla__HloInstructionProto *
mp_instr_by_id(const Xla__HloComputationProto *comp, int64_t id)
{
	for (size_t i = 0; i < comp->n_instructions; i++)
		if (comp->instructions[i]->id == id)
			return comp->instructions[i];
	return NULL;
}

/* ", key=%comp" for called computation k. */
static void mp_called(mp_conv *c, const char *key, size_t k)
{
	const Xla__HloInstructionProto *x = c->ins;
	if (k >= x->n_called_computation_ids) {
		mp_fail(c, USC_EPARSE,
			"called_computation_ids: %zu entries; the opcode "
			"calls at least %zu", x->n_called_computation_ids,
			k + 1);
		return;
	}
	const Xla__HloComputationProto *callee =
		mp_comp_by_id(c, x->called_computation_ids[k]);
	if (!callee) {
		mp_fail(c, USC_EPARSE,
			"called_computation_ids[%zu]: no computation has id "
			"%" PRId64, k, x->called_computation_ids[k]);
		return;
	}
	mp_printf(c, ", %s=%%%s", key, callee->name);
}

/* ", key={%a, %b, ...}" for called computations from..n-1. */
static void mp_called_list(mp_conv *c, const char *key, size_t from)
{
	const Xla__HloInstructionProto *x = c->ins;
	mp_printf(c, ", %s={", key);
	for (size_t k = from; k < x->n_called_computation_ids; k++) {
		const Xla__HloComputationProto *callee =
			mp_comp_by_id(c, x->called_computation_ids[k]);
		if (!callee) {
			mp_fail(c, USC_EPARSE,
				"called_computation_ids[%zu]: no computation "
				"has id %" PRId64,
				k, x->called_computation_ids[k]);
			return;
		}
		mp_printf(c, "%s%%%s", k > from ? ", " : "", callee->name);
	}
	mp_puts(c, "}");
}

/*
 * A conditional's branches as XLA prints them: true_computation and
 * false_computation when its operand 0 (the branch selector) is a pred,
 * branch_computations={...} when it is an s32 index (XLA's
 * HloConditionalInstruction; the proto lists the branches in order, the
 * true branch first).
 */
static void mp_branches(mp_conv *c)
{
	const Xla__HloInstructionProto *x = c->ins;
	const Xla__HloInstructionProto *sel =
		x->n_operand_ids ? mp_instr_by_id(c->comp, x->operand_ids[0])
				 : NULL;
	if (!sel || !sel->shape) {
		mp_fail(c, USC_EPARSE,
			"conditional without a branch selector operand");
		return;
	}
	if (x->n_called_computation_ids < 1) {
		mp_fail(c, USC_EPARSE,
			"called_computation_ids: empty; a conditional has at "
			"least one branch");
		return;
	}
	if (usc__pb_dtype(sel->shape->element_type) == USC_PRED) {
		if (x->n_called_computation_ids != 2) {
			mp_fail(c, USC_EPARSE,
				"called_computation_ids: %zu entries; a "
				"conditional on a pred has two branches",
				x->n_called_computation_ids);
			return;
		}
		mp_called(c, "true_computation", 0);
		mp_called(c, "false_computation", 1);
		return;
	}
	mp_called_list(c, "branch_computations", 0);
}

/*
 * A custom call's target, its called computations and its API version
 * (printed by XLA only when it is not the original one; enum values of
 * XLA's CustomCallApiVersion).
 */
static void mp_custom_call(mp_conv *c)
{
	static const char *const versions[] = {
		"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
		"API_VERSION_STATUS_RETURNING",
		"API_VERSION_STATUS_RETURNING_UNIFIED",
		"API_VERSION_TYPED_FFI"};
	const Xla__HloInstructionProto *x = c->ins;
	mp_puts(c, ", custom_call_target=");
	mp_quoted(c, x->custom_call_target ? x->custom_call_target : "");
	if (x->n_called_computation_ids > 0)
		mp_called_list(c, "called_computations", 0);
	int v = x->custom_call_api_version;
	if (v < 0 || (size_t)v >= USC__ARRAY_LEN(versions)) {
		mp_fail(c, USC_EUNSUPPORTED,
			"custom_call_api_version %d is not converted", v);
		return;
	}
	if (v > 1)
		mp_printf(c, ", api_version=%s", versions[v]);
}

static void mp_dims_attr(mp_conv *c, const char *key)
{
	mp_printf(c, ", %s={", key);
	mp_ints(c, c->ins->dimensions, c->ins->n_dimensions, ",");
	mp_puts(c, "}");
}

static void mp_window(mp_conv *c, const Xla__Window *w)
{
	size_t n = w->n_dimensions;
	bool stride = false, pad = false, lhs = false, rhs = false, rev = false;
	for (size_t i = 0; i < n; i++) {
		const Xla__WindowDimension *d = w->dimensions[i];
		stride |= d->stride != 1;
		pad |= d->padding_low != 0 || d->padding_high != 0;
		lhs |= d->base_dilation != 1;
		rhs |= d->window_dilation != 1;
		rev |= d->window_reversal;
	}
	mp_puts(c, ", window={size=");
	for (size_t i = 0; i < n; i++)
		mp_printf(c, "%s%" PRId64, i ? "x" : "", w->dimensions[i]->size);
	if (stride) {
		mp_puts(c, " stride=");
		for (size_t i = 0; i < n; i++)
			mp_printf(c, "%s%" PRId64, i ? "x" : "",
				  w->dimensions[i]->stride);
	}
	if (pad) {
		mp_puts(c, " pad=");
		for (size_t i = 0; i < n; i++)
			mp_printf(c, "%s%" PRId64 "_%" PRId64, i ? "x" : "",
				  w->dimensions[i]->padding_low,
				  w->dimensions[i]->padding_high);
	}
	if (lhs) {
		mp_puts(c, " lhs_dilate=");
		for (size_t i = 0; i < n; i++)
			mp_printf(c, "%s%" PRId64, i ? "x" : "",
				  w->dimensions[i]->base_dilation);
	}
	if (rhs) {
		mp_puts(c, " rhs_dilate=");
		for (size_t i = 0; i < n; i++)
			mp_printf(c, "%s%" PRId64, i ? "x" : "",
				  w->dimensions[i]->window_dilation);
	}
	if (rev) {
		mp_puts(c, " rhs_reversal=");
		for (size_t i = 0; i < n; i++)
			mp_printf(c, "%s%d", i ? "x" : "",
				  w->dimensions[i]->window_reversal ? 1 : 0);
	}
	mp_puts(c, "}");
}

static void mp_int_list(mp_conv *c, const char *key, const int64_t *v,
			size_t n, bool always)
{
	if (n == 0 && !always)
		return;
	mp_printf(c, ", %s={", key);
	mp_ints(c, v, n, ",");
	mp_puts(c, "}");
}

/*
 * Convolution dimension numbers as XLA writes them, "b01f_01io->b01f":
 * each operand's dimensions in order, named by their role (batch,
 * feature, input/output feature, or the spatial dimension's number).
 */
static void mp_dim_labels(mp_conv *c, const Xla__ConvolutionDimensionNumbers *d)
{
	size_t ns = d->n_input_spatial_dimensions;
	if (ns > 10 || d->n_kernel_spatial_dimensions != ns ||
	    d->n_output_spatial_dimensions != ns) {
		mp_fail(c, USC_EUNSUPPORTED,
			"convolution_dimension_numbers: %zu/%zu/%zu spatial "
			"dimensions", ns, d->n_kernel_spatial_dimensions,
			d->n_output_spatial_dimensions);
		return;
	}
	size_t rank = ns + 2;
	char in[16], k[16], out[16];
	memset(in, '?', sizeof in);
	memset(k, '?', sizeof k);
	memset(out, '?', sizeof out);
	bool ok = true;
#define MP_LABEL(arr, dim, ch)                                               	do {                                                                 		int64_t v_ = (dim);                                          		if (v_ < 0 || (size_t)v_ >= rank)                            			ok = false;                                          		else                                                         			arr[v_] = (ch);                                      	} while (0)
	MP_LABEL(in, d->input_batch_dimension, 'b');
	MP_LABEL(in, d->input_feature_dimension, 'f');
	MP_LABEL(k, d->kernel_input_feature_dimension, 'i');
	MP_LABEL(k, d->kernel_output_feature_dimension, 'o');
	MP_LABEL(out, d->output_batch_dimension, 'b');
	MP_LABEL(out, d->output_feature_dimension, 'f');
	for (size_t i = 0; i < ns; i++) {
		MP_LABEL(in, d->input_spatial_dimensions[i], (char)('0' + i));
		MP_LABEL(k, d->kernel_spatial_dimensions[i], (char)('0' + i));
		MP_LABEL(out, d->output_spatial_dimensions[i], (char)('0' + i));
	}
#undef MP_LABEL
	if (!ok) {
		mp_fail(c, USC_EPARSE,
			"convolution_dimension_numbers: a dimension outside "
			"rank %zu", rank);
		return;
	}
	mp_printf(c, ", dim_labels=%.*s_%.*s->%.*s", (int)rank, in, (int)rank,
		  k, (int)rank, out);
}

/* The comparison type XLA takes when compare's text names none. */
static const char *mp_default_comparison(usc_dtype dt)
{
	const usc_format *f = usc_format_of(dt);
	if (!f)
		return "";
	switch (f->kind) {
	case USC_KIND_FLOAT:
	case USC_KIND_COMPLEX:
		return "FLOAT";
	case USC_KIND_SINT:
		return "SIGNED";
	default:
		return "UNSIGNED";
	}
}

static void mp_precision(mp_conv *c, const Xla__PrecisionConfig *p)
{
	static const char *const names[] = {"default", "high", "highest",
					    "packed_nibble"};
	bool any = false;
	for (size_t i = 0; i < p->n_operand_precision; i++)
		any |= p->operand_precision[i] != 0;
	if (p->algorithm != 0) {
		mp_fail(c, USC_EUNSUPPORTED,
			"precision_config.algorithm %d is not converted",
			p->algorithm);
		return;
	}
	if (!any)
		return;
	mp_puts(c, ", operand_precision={");
	for (size_t i = 0; i < p->n_operand_precision; i++) {
		int v = p->operand_precision[i];
		if (v < 0 || v > 3) {
			mp_fail(c, USC_EUNSUPPORTED,
				"precision_config.operand_precision %d", v);
			return;
		}
		mp_printf(c, "%s%s", i ? "," : "", names[v]);
	}
	mp_puts(c, "}");
}

/*
 * The attributes of x (after its operand list) in XLA's order; returns the
 * fields they read.  Unknown opcodes fail.
 */
static unsigned mp_attrs(mp_conv *c, usc_hlo_opcode op)
{
	const Xla__HloInstructionProto *x = c->ins;
	switch (op) {
	case USC_HLO_OP_PARAMETER:
		return F_PARAMETER;
	case USC_HLO_OP_CONSTANT:
		return F_LITERAL;
	case USC_HLO_OP_BROADCAST:
	case USC_HLO_OP_TRANSPOSE:
	case USC_HLO_OP_REVERSE:
	case USC_HLO_OP_CONCATENATE:
		mp_dims_attr(c, "dimensions");
		return F_DIMENSIONS;
	case USC_HLO_OP_IOTA:
		if (x->n_dimensions != 1) {
			mp_fail(c, USC_EPARSE,
				"dimensions: %zu entries; iota needs one",
				x->n_dimensions);
			return 0;
		}
		mp_printf(c, ", iota_dimension=%" PRId64, x->dimensions[0]);
		return F_DIMENSIONS;
	case USC_HLO_OP_REDUCE:
	case USC_HLO_OP_MAP:
		mp_dims_attr(c, "dimensions");
		mp_called(c, "to_apply", 0);
		return F_DIMENSIONS | F_CALLS;
	case USC_HLO_OP_CALL:
		mp_called(c, "to_apply", 0);
		return F_CALLS;
	case USC_HLO_OP_WHILE:
		/*
		 * XLA keeps the body first, the condition second (as its own
		 * text of the same module shows: data/control_flow/).
		 */
		if (x->n_called_computation_ids != 2) {
			mp_fail(c, USC_EPARSE,
				"called_computation_ids: %zu entries; a while "
				"calls its body and its condition",
				x->n_called_computation_ids);
			return 0;
		}
		mp_called(c, "condition", 1);
		mp_called(c, "body", 0);
		return F_CALLS;
	case USC_HLO_OP_CONDITIONAL:
		mp_branches(c);
		return F_CALLS;
	case USC_HLO_OP_SORT:
		mp_dims_attr(c, "dimensions");
		if (x->is_stable)
			mp_puts(c, ", is_stable=true");
		mp_called(c, "to_apply", 0);
		return F_DIMENSIONS | F_STABLE | F_CALLS;
	case USC_HLO_OP_CUSTOM_CALL:
		mp_custom_call(c);
		/* XLA gives every custom call a precision_config. */
		if (x->precision_config)
			mp_precision(c, x->precision_config);
		return F_TARGET | F_CALLS | F_PRECISION;
	case USC_HLO_OP_REDUCE_WINDOW:
		if (!x->window) {
			mp_fail(c, USC_EPARSE, "window: missing");
			return 0;
		}
		mp_window(c, x->window);
		mp_called(c, "to_apply", 0);
		return F_WINDOW | F_CALLS;
	case USC_HLO_OP_FUSION:
		mp_printf(c, ", kind=%s", x->fusion_kind ? x->fusion_kind : "");
		mp_called(c, "calls", 0);
		return F_FUSION_KIND | F_CALLS;
	case USC_HLO_OP_GET_TUPLE_ELEMENT:
		mp_printf(c, ", index=%" PRId64, x->tuple_index);
		return F_TUPLE_INDEX;
	case USC_HLO_OP_SLICE:
		mp_puts(c, ", slice={");
		for (size_t i = 0; i < x->n_slice_dimensions; i++) {
			const Xla__HloInstructionProto__SliceDimensions *s =
				x->slice_dimensions[i];
			mp_printf(c, "%s[%" PRId64 ":%" PRId64, i ? ", " : "",
				  s->start, s->limit);
			if (s->stride != 1)
				mp_printf(c, ":%" PRId64, s->stride);
			mp_puts(c, "]");
		}
		mp_puts(c, "}");
		return F_SLICE;
	case USC_HLO_OP_DYNAMIC_SLICE:
		mp_int_list(c, "dynamic_slice_sizes", x->dynamic_slice_sizes,
			    x->n_dynamic_slice_sizes, true);
		return F_DYNAMIC_SIZES;
	case USC_HLO_OP_PAD: {
		const Xla__PaddingConfig *p = x->padding_config;
		if (!p) {
			mp_fail(c, USC_EPARSE, "padding_config: missing");
			return 0;
		}
		mp_puts(c, ", padding=");
		for (size_t i = 0; i < p->n_dimensions; i++) {
			const Xla__PaddingConfig__PaddingConfigDimension *d =
				p->dimensions[i];
			mp_printf(c, "%s%" PRId64 "_%" PRId64, i ? "x" : "",
				  d->edge_padding_low, d->edge_padding_high);
			if (d->interior_padding != 0)
				mp_printf(c, "_%" PRId64, d->interior_padding);
		}
		return F_PADDING;
	}
	case USC_HLO_OP_REDUCE_PRECISION:
		mp_printf(c, ", exponent_bits=%d, mantissa_bits=%d",
			  x->exponent_bits, x->mantissa_bits);
		return F_REDUCE_PRECISION;
	case USC_HLO_OP_COMPARE: {
		const char *dir = x->comparison_direction;
		if (!dir || !dir[0]) {
			mp_fail(c, USC_EPARSE, "comparison_direction: missing");
			return 0;
		}
		mp_printf(c, ", direction=%s", dir);
		const char *type = x->comparison_type;
		const Xla__HloInstructionProto *lhs =
			x->n_operand_ids ? mp_instr_by_id(c->comp,
							  x->operand_ids[0])
					 : NULL;
		usc_dtype dt = lhs && lhs->shape ? usc__pb_dtype(
							   lhs->shape->element_type)
						 : USC_DTYPE_INVALID;
		if (type && type[0] &&
		    strcmp(type, mp_default_comparison(dt)) != 0)
			mp_printf(c, ", type=%s", type);
		return F_COMPARISON;
	}
	case USC_HLO_OP_DOT: {
		const Xla__DotDimensionNumbers *d = x->dot_dimension_numbers;
		if (!d) {
			mp_fail(c, USC_EPARSE, "dot_dimension_numbers: missing");
			return 0;
		}
		mp_int_list(c, "lhs_batch_dims", d->lhs_batch_dimensions,
			    d->n_lhs_batch_dimensions, false);
		mp_int_list(c, "lhs_contracting_dims",
			    d->lhs_contracting_dimensions,
			    d->n_lhs_contracting_dimensions, false);
		mp_int_list(c, "rhs_batch_dims", d->rhs_batch_dimensions,
			    d->n_rhs_batch_dimensions, false);
		mp_int_list(c, "rhs_contracting_dims",
			    d->rhs_contracting_dimensions,
			    d->n_rhs_contracting_dimensions, false);
		if (x->precision_config)
			mp_precision(c, x->precision_config);
		return F_DOT | F_PRECISION;
	}
	case USC_HLO_OP_GATHER: {
		const Xla__GatherDimensionNumbers *g =
			x->gather_dimension_numbers;
		if (!g) {
			mp_fail(c, USC_EPARSE,
				"gather_dimension_numbers: missing");
			return 0;
		}
		mp_int_list(c, "offset_dims", g->offset_dims, g->n_offset_dims,
			    true);
		mp_int_list(c, "collapsed_slice_dims", g->collapsed_slice_dims,
			    g->n_collapsed_slice_dims, true);
		mp_int_list(c, "operand_batching_dims",
			    g->operand_batching_dims,
			    g->n_operand_batching_dims, false);
		mp_int_list(c, "start_indices_batching_dims",
			    g->start_indices_batching_dims,
			    g->n_start_indices_batching_dims, false);
		mp_int_list(c, "start_index_map", g->start_index_map,
			    g->n_start_index_map, true);
		mp_printf(c, ", index_vector_dim=%" PRId64,
			  g->index_vector_dim);
		mp_int_list(c, "slice_sizes", x->gather_slice_sizes,
			    x->n_gather_slice_sizes, true);
		if (x->indices_are_sorted)
			mp_puts(c, ", indices_are_sorted=true");
		return F_GATHER | F_GATHER_SIZES | F_SORTED;
	}
	case USC_HLO_OP_CONVOLUTION: {
		if (!x->convolution_dimension_numbers) {
			mp_fail(c, USC_EPARSE,
				"convolution_dimension_numbers: missing");
			return 0;
		}
		if (x->window && x->window->n_dimensions > 0)
			mp_window(c, x->window);
		mp_dim_labels(c, x->convolution_dimension_numbers);
		if (x->feature_group_count > 1)
			mp_printf(c, ", feature_group_count=%" PRId64,
				  x->feature_group_count);
		if (x->batch_group_count > 1)
			mp_printf(c, ", batch_group_count=%" PRId64,
				  x->batch_group_count);
		if (x->precision_config)
			mp_precision(c, x->precision_config);
		return F_CONVOLUTION | F_WINDOW | F_GROUPS | F_PRECISION;
	}
	case USC_HLO_OP_SCATTER: {
		const Xla__ScatterDimensionNumbers *g =
			x->scatter_dimension_numbers;
		if (!g) {
			mp_fail(c, USC_EPARSE,
				"scatter_dimension_numbers: missing");
			return 0;
		}
		mp_int_list(c, "update_window_dims", g->update_window_dims,
			    g->n_update_window_dims, true);
		mp_int_list(c, "inserted_window_dims", g->inserted_window_dims,
			    g->n_inserted_window_dims, true);
		mp_int_list(c, "input_batching_dims", g->input_batching_dims,
			    g->n_input_batching_dims, false);
		mp_int_list(c, "scatter_indices_batching_dims",
			    g->scatter_indices_batching_dims,
			    g->n_scatter_indices_batching_dims, false);
		mp_int_list(c, "scatter_dims_to_operand_dims",
			    g->scatter_dims_to_operand_dims,
			    g->n_scatter_dims_to_operand_dims, true);
		mp_printf(c, ", index_vector_dim=%" PRId64,
			  g->index_vector_dim);
		if (x->indices_are_sorted)
			mp_puts(c, ", indices_are_sorted=true");
		if (x->unique_indices)
			mp_puts(c, ", unique_indices=true");
		mp_called(c, "to_apply", 0);
		return F_SCATTER | F_SORTED | F_UNIQUE | F_CALLS;
	}
	default:
		break;
	}
	if (usc_hlo_opcode_category(op) == USC_HLO_CAT_ELEMENTWISE &&
	    op != USC_HLO_OP_MAP && op != USC_HLO_OP_STOCHASTIC_CONVERT)
		return 0;
	switch (op) {
	case USC_HLO_OP_RESHAPE:
	case USC_HLO_OP_BITCAST:
	case USC_HLO_OP_COPY:
	case USC_HLO_OP_OPTIMIZATION_BARRIER:
	case USC_HLO_OP_TUPLE:
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
		return 0;
	default:
		mp_fail(c, USC_EUNSUPPORTED,
			"opcode '%s' is not converted from protocol buffers "
			"(docs/dumps.md lists those that are)", x->opcode);
		return 0;
	}
}

static void mp_metadata(mp_conv *c, const Xla__OpMetadata *md)
{
	bool any = false;
#define MP_SEP() (any ? " " : (any = true, ""))
	mp_puts(c, ", metadata={");
	if (md->op_type && md->op_type[0]) {
		mp_printf(c, "%sop_type=", MP_SEP());
		mp_quoted(c, md->op_type);
	}
	if (md->op_name && md->op_name[0]) {
		mp_printf(c, "%sop_name=", MP_SEP());
		mp_quoted(c, md->op_name);
	}
	if (md->source_file && md->source_file[0]) {
		mp_printf(c, "%ssource_file=", MP_SEP());
		mp_quoted(c, md->source_file);
	}
	if (md->source_line != 0)
		mp_printf(c, "%ssource_line=%d", MP_SEP(), md->source_line);
	if (md->source_end_line != 0)
		mp_printf(c, "%ssource_end_line=%d", MP_SEP(),
			  md->source_end_line);
	if (md->source_column != 0)
		mp_printf(c, "%ssource_column=%d", MP_SEP(),
			  md->source_column);
	if (md->source_end_column != 0)
		mp_printf(c, "%ssource_end_column=%d", MP_SEP(),
			  md->source_end_column);
	if (md->deduplicated_name && md->deduplicated_name[0]) {
		mp_printf(c, "%sdeduplicated_name=", MP_SEP());
		mp_quoted(c, md->deduplicated_name);
	}
	if (md->stack_frame_id != 0)
		mp_printf(c, "%sstack_frame_id=%d", MP_SEP(),
			  md->stack_frame_id);
	if (md->scheduling_name && md->scheduling_name[0]) {
		mp_printf(c, "%sscheduling_name=", MP_SEP());
		mp_quoted(c, md->scheduling_name);
	}
#undef MP_SEP
	mp_puts(c, "}");
}

static bool mp_metadata_empty(const Xla__OpMetadata *md)
{
	return !md ||
	       (!(md->op_type && md->op_type[0]) &&
		!(md->op_name && md->op_name[0]) &&
		!(md->source_file && md->source_file[0]) &&
		md->source_line == 0 && md->source_end_line == 0 &&
		md->source_column == 0 && md->source_end_column == 0 &&
		!(md->deduplicated_name && md->deduplicated_name[0]) &&
		md->stack_frame_id == 0 &&
		!(md->scheduling_name && md->scheduling_name[0]));
}

/* ---------------------------------------------------------- structure */

static void mp_instr(mp_conv *c, const Xla__HloInstructionProto *x,
		     bool root)
{
	c->ins = x;
	uint32_t unknown;
	if (usc__pb_first_unknown(&x->base, &unknown)) {
		mp_fail(c, USC_EUNSUPPORTED,
			"field %u of HloInstructionProto is not converted",
			(unsigned)unknown);
		return;
	}
	usc_hlo_opcode op;
	const char *opname = x->opcode ? x->opcode : "";
	if (usc_hlo_opcode_from_name(opname, strlen(opname), &op) != USC_OK) {
		mp_fail(c, USC_EPARSE, "'%s' is not an HLO opcode", opname);
		return;
	}
	mp_printf(c, "  %s%%%s = ", root ? "ROOT " : "", x->name);
	mp_shape(c, x->shape, true);
	mp_printf(c, " %s(", opname);
	if (op == USC_HLO_OP_PARAMETER) {
		mp_printf(c, "%" PRId64, x->parameter_number);
	} else if (op == USC_HLO_OP_CONSTANT) {
		if (!x->literal) {
			mp_fail(c, USC_EPARSE, "literal: missing");
			return;
		}
		usc_literal lit;
		char path[96];
		snprintf(path, sizeof path, "%s.literal", x->name);
		usc_error lerr;
		usc_status st = usc__literal_from_pb(x->literal, c->file, path,
						     &lit, &lerr);
		if (st != USC_OK) {
			mp_fail(c, st, "%s", lerr.message);
			return;
		}
		mp_literal(c, &lit);
		usc__literal_clear(&lit);
	}
	for (size_t i = 0; i < x->n_operand_ids; i++) {
		const Xla__HloInstructionProto *o =
			mp_instr_by_id(c->comp, x->operand_ids[i]);
		if (!o) {
			mp_fail(c, USC_EPARSE,
				"operand_ids[%zu]: no instruction of the "
				"computation has id %" PRId64,
				i, x->operand_ids[i]);
			return;
		}
		mp_printf(c, "%s%%%s", i ? ", " : "", o->name);
	}
	mp_puts(c, ")");
	/* Every opcode may have control predecessors (below). */
	unsigned read = mp_attrs(c, op) | F_CONTROL;
	const char *unread = mp_unread_field(x, read);
	if (unread)
		mp_fail(c, USC_EUNSUPPORTED,
			"field %s is not converted for this opcode", unread);
	if (x->frontend_attributes && x->frontend_attributes->n_map > 0) {
		mp_puts(c, ", frontend_attributes={");
		for (size_t i = 0; i < x->frontend_attributes->n_map; i++) {
			const Xla__FrontendAttributes__MapEntry *e =
				x->frontend_attributes->map[i];
			mp_printf(c, "%s%s=", i ? "," : "", e->key);
			mp_quoted(c, e->value);
		}
		mp_puts(c, "}");
	}
	/*
	 * Control dependencies (XLA adds them where a loop's copies must not
	 * overlap): printed as XLA does, before the metadata.  They order
	 * execution only; the evaluator's values do not depend on them.
	 */
	if (x->n_control_predecessor_ids > 0) {
		mp_puts(c, ", control-predecessors={");
		for (size_t i = 0; i < x->n_control_predecessor_ids; i++) {
			const Xla__HloInstructionProto *o = mp_instr_by_id(
				c->comp, x->control_predecessor_ids[i]);
			if (!o) {
				mp_fail(c, USC_EPARSE,
					"control_predecessor_ids[%zu]: no "
					"instruction of the computation has id "
					"%" PRId64,
					i, x->control_predecessor_ids[i]);
				return;
			}
			mp_printf(c, "%s%%%s", i ? ", " : "", o->name);
		}
		mp_puts(c, "}");
	}
	if (!mp_metadata_empty(x->metadata))
		mp_metadata(c, x->metadata);
	if (x->backend_config.len > 0) {
		const char *b = (const char *)x->backend_config.data;
		if (memchr(b, '\0', x->backend_config.len)) {
			mp_fail(c, USC_EUNSUPPORTED,
				"backend_config holds binary data");
			return;
		}
		mp_puts(c, ", backend_config=");
		if (b[0] == '{') {
			mp_putn(c, b, x->backend_config.len);
		} else {
			char *s = usc__strndup(b, x->backend_config.len);
			if (!s) {
				c->t.oom = true;
				return;
			}
			mp_quoted(c, s);
			usc__free(s);
		}
	}
	mp_puts(c, "\n");
	c->ins = NULL;
}

static void mp_computation(mp_conv *c, const Xla__HloComputationProto *comp,
			   bool entry)
{
	c->comp = comp;
	c->ins = NULL;
	uint32_t unknown;
	if (usc__pb_first_unknown(&comp->base, &unknown)) {
		mp_fail(c, USC_EUNSUPPORTED,
			"field %u of HloComputationProto is not converted",
			(unsigned)unknown);
		return;
	}
	const Xla__ProgramShapeProto *ps = comp->program_shape;
	mp_printf(c, "%s%%%s ", entry ? "ENTRY " : "", comp->name);
	if (ps) {
		mp_puts(c, "(");
		for (size_t i = 0; i < ps->n_parameters; i++) {
			const char *pn = i < ps->n_parameter_names
						 ? ps->parameter_names[i]
						 : "";
			mp_printf(c, "%s%s: ", i ? ", " : "", pn);
			mp_shape(c, ps->parameters[i], false);
		}
		mp_puts(c, ") -> ");
		mp_shape(c, ps->result, false);
		mp_puts(c, " ");
	}
	mp_puts(c, "{\n");
	/*
	 * A scheduled computation prints in its schedule's order, as XLA's
	 * text does; the others in the proto's order, which is the one XLA
	 * prints them in.
	 */
	const Xla__HloScheduleProto__InstructionSequence *seq = NULL;
	const Xla__HloScheduleProto *sch = c->m->schedule;
	for (size_t i = 0; sch && i < sch->n_sequences; i++)
		if (sch->sequences[i]->key == comp->id)
			seq = sch->sequences[i]->value;
	if (seq && seq->n_instruction_ids != comp->n_instructions) {
		mp_fail(c, USC_EPARSE,
			"the schedule lists %zu instructions of its %zu",
			seq->n_instruction_ids, comp->n_instructions);
		return;
	}
	bool have_root = false;
	for (size_t i = 0; i < comp->n_instructions && c->st == USC_OK; i++) {
		const Xla__HloInstructionProto *x = comp->instructions[i];
		if (seq) {
			x = mp_instr_by_id(comp, seq->instruction_ids[i]);
			if (!x) {
				mp_fail(c, USC_EPARSE,
					"schedule entry %zu: no instruction has "
					"id %" PRId64,
					i, seq->instruction_ids[i]);
				return;
			}
		}
		bool root = x->id == comp->root_id;
		have_root |= root;
		mp_instr(c, x, root);
	}
	if (c->st == USC_OK && !have_root)
		mp_fail(c, USC_EPARSE,
			"root_id %" PRId64 " names no instruction of it",
			comp->root_id);
	mp_puts(c, "}\n\n");
	c->comp = NULL;
}

/*
 * Callees before callers: a post-order walk from the entry.  XLA's text
 * orders computations by its in-memory instruction lists, which the proto
 * does not keep, so the order can differ from XLA's own text; nothing in
 * ulpscope depends on it (docs/dumps.md).
 */
static void mp_post_order(mp_conv *c, const Xla__HloComputationProto *comp,
			  bool *seen, const Xla__HloComputationProto **order,
			  size_t *n, unsigned depth)
{
	size_t ci = 0;
	while (c->m->computations[ci] != comp)
		ci++;
	if (seen[ci])
		return;
	seen[ci] = true;
	if (depth > 256) {
		mp_fail(c, USC_EUNSUPPORTED,
			"computations call each other deeper than 256 levels");
		return;
	}
	for (size_t i = comp->n_instructions; i-- > 0;) {
		const Xla__HloInstructionProto *x = comp->instructions[i];
		for (size_t k = 0; k < x->n_called_computation_ids; k++) {
			const Xla__HloComputationProto *callee =
				mp_comp_by_id(c, x->called_computation_ids[k]);
			if (callee)
				mp_post_order(c, callee, seen, order, n,
					      depth + 1);
		}
	}
	order[(*n)++] = comp;
}

static void mp_stack_tables(mp_conv *c, const Xla__StackFrameIndexProto *s)
{
	if (!s || (s->n_file_names == 0 && s->n_function_names == 0 &&
		   s->n_file_locations == 0 && s->n_stack_frames == 0))
		return;
	mp_puts(c, "FileNames\n");
	for (size_t i = 0; i < s->n_file_names; i++) {
		mp_printf(c, "%zu ", i + 1);
		mp_quoted(c, s->file_names[i]);
		mp_puts(c, "\n");
	}
	mp_puts(c, "\nFunctionNames\n");
	for (size_t i = 0; i < s->n_function_names; i++) {
		mp_printf(c, "%zu ", i + 1);
		mp_quoted(c, s->function_names[i]);
		mp_puts(c, "\n");
	}
	mp_puts(c, "\nFileLocations\n");
	for (size_t i = 0; i < s->n_file_locations; i++) {
		const Xla__StackFrameIndexProto__FileLocation *l =
			s->file_locations[i];
		mp_printf(c,
			  "%zu {file_name_id=%d function_name_id=%d line=%d "
			  "end_line=%d column=%d end_column=%d}\n",
			  i + 1, l->file_name_id, l->function_name_id, l->line,
			  l->end_line, l->column, l->end_column);
	}
	mp_puts(c, "\nStackFrames\n");
	for (size_t i = 0; i < s->n_stack_frames; i++) {
		const Xla__StackFrameIndexProto__StackFrame *f =
			s->stack_frames[i];
		mp_printf(c, "%zu {file_location_id=%d parent_frame_id=%d}\n",
			  i + 1, f->file_location_id, f->parent_frame_id + 1);
	}
	mp_puts(c, "\n\n");
}

static void mp_module(mp_conv *c)
{
	const Xla__HloModuleProto *m = c->m;
	/*
	 * A module's undeclared fields (buffer donors, device assignment,
	 * profiles, ...) say how XLA ran it, not what it computes, and have
	 * no place in its text: unlike an instruction's, they are skipped.
	 */
	const Xla__HloComputationProto *entry = mp_comp_by_id(c, m->entry_computation_id);
	if (!entry)
		for (size_t i = 0; i < m->n_computations; i++)
			if (m->entry_computation_name &&
			    strcmp(m->computations[i]->name,
				   m->entry_computation_name) == 0)
				entry = m->computations[i];
	if (!entry) {
		mp_fail(c, USC_EPARSE,
			"entry_computation_id %" PRId64 " names no computation",
			m->entry_computation_id);
		return;
	}
	mp_printf(c, "HloModule %s", m->name ? m->name : "");
	if (m->schedule)
		mp_puts(c, ", is_scheduled=true");
	const Xla__ProgramShapeProto *hp = m->host_program_shape
						   ? m->host_program_shape
						   : entry->program_shape;
	if (hp) {
		mp_puts(c, ", entry_computation_layout={(");
		for (size_t i = 0; i < hp->n_parameters; i++) {
			if (i)
				mp_puts(c, ", ");
			mp_shape(c, hp->parameters[i], true);
		}
		mp_puts(c, ")->");
		mp_shape(c, hp->result, true);
		mp_puts(c, "}");
	}
	mp_puts(c, "\n\n");
	mp_stack_tables(c, m->stack_frame_index);
	size_t n = m->n_computations, k = 0;
	bool *seen = usc__calloc(n ? n : 1, sizeof *seen);
	const Xla__HloComputationProto **order =
		usc__calloc(n ? n : 1, sizeof *order);
	if (!seen || !order) {
		c->t.oom = true;
	} else {
		mp_post_order(c, entry, seen, order, &k, 0);
		/*
		 * Computations the entry never calls still belong to the
		 * module (XLA's text keeps them); they go before the entry.
		 */
		k--;
		for (size_t i = 0; i < n; i++)
			if (!seen[i])
				mp_post_order(c, m->computations[i], seen,
					      order, &k, 0);
		order[k++] = entry;
		for (size_t i = 0; i < k && c->st == USC_OK; i++)
			mp_computation(c, order[i], order[i] == entry);
	}
	usc__free(seen);
	usc__free(order);
}

/* The module as HLO text; *text from usc__malloc. */
static usc_status mp_to_text(const Xla__HloModuleProto *m, const char *file,
			     const char *path, char **text, size_t *len,
			     usc_error *err)
{
	mp_conv c;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.file = file;
	c.path = path;
	c.err = err;
	mp_module(&c);
	if (c.st == USC_OK && c.t.oom)
		c.st = usc__fail(err, USC_ENOMEM, "%s: out of memory", file);
	if (c.st != USC_OK) {
		usc__free(c.t.p);
		return c.st;
	}
	*text = c.t.p;
	*len = c.t.len;
	return USC_OK;
}

usc_status usc__hlo_from_pb(const Xla__HloModuleProto *m, const char *file,
			    const char *path, usc_hlo_file **out,
			    usc_error *err)
{
	char *text = NULL;
	size_t len = 0;
	*out = NULL;
	usc_status st = mp_to_text(m, file, path, &text, &len, err);
	if (st != USC_OK)
		return st;
	/*
	 * The text is ours, so a parse error is a fault of this converter;
	 * the message still names the file it came from.
	 */
	char name[600];
	snprintf(name, sizeof name, "%s (%s as text)", file, path);
	st = usc_hlo_parse(text, len, name, out, err);
	usc__free(text);
	return st;
}

/*
 * XLA's *.hlo.pb holds an HloProto, whose field 1 is the module; a bare
 * HloModuleProto's field 1 is its name.  A name never starts with byte
 * 0x0a (the key of a message's field 1), a module message always does.
 */
static bool mp_is_hlo_proto(const unsigned char *p, size_t size)
{
	if (size < 3 || p[0] != 0x0a)
		return false;
	size_t i = 1;
	uint64_t len = 0;
	for (unsigned s = 0; i < size && s < 64; s += 7) {
		len |= (uint64_t)(p[i] & 0x7f) << s;
		if (!(p[i++] & 0x80))
			break;
	}
	return i < size && len > 0 && p[i] == 0x0a;
}

usc_status usc_hlo_parse_pb(const void *data, size_t size, const char *name,
			    usc_hlo_file **out, usc_error *err)
{
	ProtobufCMessage *msg = NULL;
	*out = NULL;
	if (!name)
		name = "<input>";
	bool wrapped = mp_is_hlo_proto(data, size);
	usc_status st = usc__pb_unpack(wrapped ? &xla__hlo_proto__descriptor
					       : &xla__hlo_module_proto__descriptor,
				       data, size, name, &msg, err);
	if (st != USC_OK)
		return st;
	const Xla__HloModuleProto *m =
		wrapped ? ((const Xla__HloProto *)msg)->hlo_module
			: (const Xla__HloModuleProto *)msg;
	if (!m)
		st = usc__fail(err, USC_EPARSE,
			       "%s: HloProto.hlo_module: absent", name);
	else
		st = usc__hlo_from_pb(m, name,
				      wrapped ? "HloProto.hlo_module"
					      : "HloModuleProto",
				      out, err);
	usc__pb_free(msg);
	return st;
}

usc_status usc_hlo_parse_pb_file(const char *path, usc_hlo_file **out,
				 usc_error *err)
{
	char *data = NULL;
	size_t len = 0;
	*out = NULL;
	usc_status st = usc__read_file(path, &data, &len, err);
	if (st != USC_OK)
		return st;
	st = usc_hlo_parse_pb(data, len, path, out, err);
	usc__free(data);
	return st;
}
