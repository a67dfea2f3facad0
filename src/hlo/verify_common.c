/*
 * The HLO verifier's shared pieces (verify_internal.h): shape text for
 * messages, the one error path, and the helpers on shapes, attributes,
 * operands and called computations that every op's check uses.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/kernel_internal.h"
#include "hlo/verify_internal.h"
#include "ulpscope/hlo_kernel.h"

/* ------------------------------------------------------------ formatting */

void usc__sb_init(usc__sbuf *b, char *buf, size_t size)
{
	b->p = buf;
	b->size = size;
	b->len = 0;
	b->trunc = false;
	if (size)
		buf[0] = '\0';
}

void usc__sb_printf(usc__sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->size) {
		b->trunc = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->size - b->len) {
		b->len = b->size - 1;
		b->trunc = true;
	} else {
		b->len += (size_t)n;
	}
}

char *usc__sb_finish(usc__sbuf *b)
{
	if (b->trunc && b->size >= 4)
		memcpy(b->p + b->size - 4, "...", 4);
	return b->p;
}

/* dims[i] < 0 prints "?"; kinds (may be NULL) marks bounded dims "<=". */
static void sb_array(usc__sbuf *b, usc_dtype dt, const int64_t *dims,
		     const uint8_t *kinds, size_t rank)
{
	size_t i;

	usc__sb_printf(b, "%s[", usc_dtype_name(dt));
	for (i = 0; i < rank; i++) {
		const char *sep = i ? "," : "";

		if (dims[i] < 0 ||
		    (kinds && kinds[i] == USC_HLO_DIM_UNBOUNDED))
			usc__sb_printf(b, "%s?", sep);
		else
			usc__sb_printf(b, "%s%s%" PRId64, sep,
				       kinds && kinds[i] == USC_HLO_DIM_BOUNDED
					       ? "<="
					       : "",
				       dims[i]);
	}
	usc__sb_printf(b, "]");
}

void usc__sb_shape(usc__sbuf *b, const usc_hlo_shape *s)
{
	size_t i;

	switch (s->kind) {
	case USC_HLO_SHAPE_TUPLE:
		usc__sb_printf(b, "(");
		for (i = 0; i < s->tuple_count; i++) {
			if (i)
				usc__sb_printf(b, ", ");
			usc__sb_shape(b, &s->tuple[i]);
		}
		usc__sb_printf(b, ")");
		break;
	case USC_HLO_SHAPE_TOKEN:
		usc__sb_printf(b, "token[]");
		break;
	case USC_HLO_SHAPE_ARRAY:
		sb_array(b, s->dtype, s->dims, s->dim_kinds, s->rank);
		break;
	}
}

char *usc_hlo_shape_format(const usc_hlo_shape *s, char *buf, size_t size)
{
	usc__sbuf b;

	if (!buf || !size)
		return buf;
	usc__sb_init(&b, buf, size);
	if (s)
		usc__sb_shape(&b, s);
	return usc__sb_finish(&b);
}

/* The dims of an array as a shape text with another element type. */
char *usc__vf_fmt_dims(char *buf, size_t size, usc_dtype dt,
		       const int64_t *dims, const uint8_t *kinds, size_t rank)
{
	usc__sbuf b;

	usc__sb_init(&b, buf, size);
	sb_array(&b, dt, dims, kinds, rank);
	return usc__sb_finish(&b);
}

char *usc__vf_fmt_ints(char *buf, size_t size, const int64_t *v, size_t n)
{
	usc__sbuf b;
	size_t i;

	usc__sb_init(&b, buf, size);
	usc__sb_printf(&b, "{");
	for (i = 0; i < n; i++)
		usc__sb_printf(&b, "%s%" PRId64, i ? "," : "", v[i]);
	usc__sb_printf(&b, "}");
	return usc__sb_finish(&b);
}

/* --------------------------------------------------------------- errors */

/*
 * Every violation goes through here, so the format is the same for all:
 * "[FILE:]LINE:COLUMN: error: OPCODE 'NAME' WHAT" and a second line that
 * names the computation and module (names, unlike line numbers, survive a
 * reformatting of the file).
 */
usc_status usc__vf_bad(const usc__vctx *v, const usc_hlo_instr *in,
		       const char *fmt, ...)
{
	char what[768];
	const char *mname = v->module ? v->module->name : NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return usc__fail(v->err, USC_EVERIFY,
			 "%s%s%" PRIu32 ":%" PRIu32
			 ": error: %s '%s' %s\n  in computation '%s'%s%s%s",
			 v->filename ? v->filename : "",
			 v->filename ? ":" : "", in->loc.line, in->loc.column,
			 usc_hlo_opcode_name(in->opcode), in->name, what,
			 v->comp->name, mname ? " of module '" : "",
			 mname ? mname : "", mname ? "'" : "");
}

/* -------------------------------------------------------- shape helpers */

bool usc__vf_dim_eq(int64_t a, int64_t b)
{
	return a < 0 || b < 0 || a == b;
}

bool usc__vf_is_array(const usc_hlo_shape *s)
{
	return s->kind == USC_HLO_SHAPE_ARRAY;
}

bool usc__vf_same_dims(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	size_t i;

	if (a->rank != b->rank)
		return false;
	for (i = 0; i < a->rank; i++)
		if (!usc__vf_dim_eq(a->dims[i], b->dims[i]))
			return false;
	return true;
}

bool usc__vf_dims_are(const usc_hlo_shape *s, const int64_t *dims,
		      size_t rank)
{
	size_t i;

	if (s->rank != rank)
		return false;
	for (i = 0; i < rank; i++)
		if (!usc__vf_dim_eq(s->dims[i], dims[i]))
			return false;
	return true;
}

/* Equal ignoring layouts, with dynamic dims compared as described above. */
bool usc__vf_same_shape(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	size_t i;

	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case USC_HLO_SHAPE_TOKEN:
		return true;
	case USC_HLO_SHAPE_ARRAY:
		return a->dtype == b->dtype && usc__vf_same_dims(a, b);
	case USC_HLO_SHAPE_TUPLE:
		if (a->tuple_count != b->tuple_count)
			return false;
		for (i = 0; i < a->tuple_count; i++)
			if (!usc__vf_same_shape(&a->tuple[i], &b->tuple[i]))
				return false;
		return true;
	}
	return false;
}

bool usc__vf_any_unbounded(const usc_hlo_shape *s)
{
	size_t i;

	for (i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return true;
	return false;
}

int64_t usc__vf_add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return a > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t usc__vf_mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a > 0) == (b > 0) ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * XLA's window_util: a bound dilated by d has (bound - 1) * d + 1
 * elements (0 stays 0), and a window of size w sliding by s over b
 * elements fits (b - w) / s + 1 times (0 when it does not fit at all).
 */
int64_t usc__vf_dilated_bound(int64_t bound, int64_t d)
{
	if (bound <= 0)
		return 0;
	return usc__vf_add_sat(usc__vf_mul_sat(bound - 1, d), 1);
}

int64_t usc__vf_strided_bound(int64_t bound, int64_t window, int64_t stride)
{
	if (window > bound || stride <= 0)
		return 0;
	return (bound - window) / stride + 1;
}

/* --------------------------------------------------- attribute helpers */

usc_status usc__vf_get_ints(const usc__vctx *v, const usc_hlo_instr *in,
			    const char *name, bool required, size_t *n,
			    const int64_t **ints)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	*n = 0;
	*ints = NULL;
	if (!a)
		return required
			       ? usc__vf_bad(v, in, "has no %s attribute", name)
			       : USC_OK;
	if (a->kind == USC_HLO_ATTR_INT) {
		*n = 1;
		*ints = &a->i;
		return USC_OK;
	}
	if (a->kind != USC_HLO_ATTR_INTS)
		return usc__vf_bad(
			v, in, "attribute %s is not a list of integers", name);
	*n = a->count;
	*ints = a->ints;
	return USC_OK;
}

usc_status usc__vf_get_int(const usc__vctx *v, const usc_hlo_instr *in,
			   const char *name, bool required, int64_t dflt,
			   int64_t *out)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	*out = dflt;
	if (!a)
		return required
			       ? usc__vf_bad(v, in, "has no %s attribute", name)
			       : USC_OK;
	if (a->kind != USC_HLO_ATTR_INT)
		return usc__vf_bad(v, in, "attribute %s is not an integer",
				   name);
	*out = a->i;
	return USC_OK;
}

static usc_status get_comp(const usc__vctx *v, const usc_hlo_instr *in,
			   const char *name, const usc_hlo_computation **out)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	if (!a)
		return usc__vf_bad(v, in, "has no %s attribute", name);
	if (a->kind != USC_HLO_ATTR_COMPUTATIONS || a->count != 1 ||
	    !a->comps || !a->comps[0])
		return usc__vf_bad(v, in,
				   "attribute %s does not name one computation",
				   name);
	*out = a->comps[0];
	return USC_OK;
}

/*
 * Checks that a list of dimension numbers stays below rank and names no
 * dimension twice; sorted additionally asks for increasing order (XLA's
 * rule for gather's and scatter's window dims).
 */
usc_status usc__vf_check_dim_list(const usc__vctx *v, const usc_hlo_instr *in,
				  const char *name, const int64_t *d, size_t n,
				  size_t rank, const char *of, bool sorted)
{
	char l[SHAPE_BUF];
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (d[i] < 0 || (uint64_t)d[i] >= rank)
			return usc__vf_bad(v, in,
					   "%s=%s names dimension %" PRId64
					   ", outside the rank %zu of %s",
					   name,
					   usc__vf_fmt_ints(l, sizeof l, d, n),
					   d[i], rank, of);
		for (j = 0; j < i; j++)
			if (d[j] == d[i])
				return usc__vf_bad(
					v, in,
					"%s=%s names dimension %" PRId64
					" twice",
					name,
					usc__vf_fmt_ints(l, sizeof l, d, n),
					d[i]);
		if (sorted && i && d[i] < d[i - 1])
			return usc__vf_bad(v, in, "%s=%s is not sorted", name,
					   usc__vf_fmt_ints(l, sizeof l, d, n));
	}
	return USC_OK;
}

bool usc__vf_in_list(const int64_t *d, size_t n, int64_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (d[i] == x)
			return true;
	return false;
}

/* ---------------------------------------------------- operand helpers */

usc_status usc__vf_want_operands(const usc__vctx *v, const usc_hlo_instr *in,
				 size_t n)
{
	if (in->operand_count != n)
		return usc__vf_bad(v, in, "has %zu operand%s, expected %zu",
				   in->operand_count,
				   in->operand_count == 1 ? "" : "s", n);
	return USC_OK;
}

usc_status usc__vf_want_min_operands(const usc__vctx *v,
				     const usc_hlo_instr *in, size_t n)
{
	if (in->operand_count < n)
		return usc__vf_bad(v, in,
				   "has %zu operand%s, expected at least %zu",
				   in->operand_count,
				   in->operand_count == 1 ? "" : "s", n);
	return USC_OK;
}

usc_status usc__vf_want_rank(const usc__vctx *v, const usc_hlo_instr *in,
			     const usc_hlo_shape *s)
{
	if (s->rank > USC__VERIFY_MAX_RANK)
		return usc__vf_bad(v, in,
				   "has rank %zu, above the verifier's limit "
				   "of %d",
				   s->rank, USC__VERIFY_MAX_RANK);
	return USC_OK;
}

usc_status usc__vf_want_array_result(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	char s[SHAPE_BUF];

	if (!usc__vf_is_array(&in->shape))
		return usc__vf_bad(
			v, in, "has shape %s, expected an array",
			usc_hlo_shape_format(&in->shape, s, sizeof s));
	return usc__vf_want_rank(v, in, &in->shape);
}

/* Every operand an array, and the result one too. */
usc_status usc__vf_want_arrays(const usc__vctx *v, const usc_hlo_instr *in)
{
	char s[SHAPE_BUF];
	size_t i;

	for (i = 0; i < in->operand_count; i++) {
		const usc_hlo_shape *o = &in->operands[i]->shape;

		if (!usc__vf_is_array(o))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected an array",
				i, usc_hlo_shape_format(o, s, sizeof s));
		TRY(usc__vf_want_rank(v, in, o));
	}
	return usc__vf_want_array_result(v, in);
}

/*
 * Operand i against the result: its dims must be the result's (or it may
 * be a scalar when allow_scalar), and its element type the result's when
 * check_type.  The message shows the shape the operand should have.
 */
usc_status usc__vf_like_result(const usc__vctx *v, const usc_hlo_instr *in,
			       size_t i, bool check_type, bool allow_scalar)
{
	const usc_hlo_shape *o = &in->operands[i]->shape, *r = &in->shape;
	bool dims_ok =
		usc__vf_same_dims(o, r) || (allow_scalar && o->rank == 0);
	bool type_ok = !check_type || o->dtype == r->dtype;
	char a[SHAPE_BUF], b[SHAPE_BUF];

	if (dims_ok && type_ok)
		return USC_OK;
	return usc__vf_bad(
		v, in,
		"operand %zu has shape %s, expected %s (the result's %s%s)", i,
		usc_hlo_shape_format(o, a, sizeof a),
		usc__vf_fmt_dims(b, sizeof b, check_type ? r->dtype : o->dtype,
				 r->dims, r->dim_kinds, r->rank),
		!dims_ok && !type_ok ? "shape"
		: dims_ok	     ? "type"
				     : "dims",
		allow_scalar && !dims_ok ? " or a scalar" : "");
}

/* The result's dims against dims computed by a rule ("why"). */
usc_status usc__vf_result_dims(const usc__vctx *v, const usc_hlo_instr *in,
			       const int64_t *dims, size_t rank,
			       const char *why)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];

	if (usc__vf_dims_are(&in->shape, dims, rank))
		return USC_OK;
	return usc__vf_bad(v, in, "has shape %s, expected %s (%s)",
			   usc_hlo_shape_format(&in->shape, a, sizeof a),
			   usc__vf_fmt_dims(b, sizeof b, in->shape.dtype, dims,
					    NULL, rank),
			   why);
}

/* The result's element type against operand i's. */
usc_status usc__vf_result_type_of(const usc__vctx *v, const usc_hlo_instr *in,
				  size_t i)
{
	usc_dtype want = in->operands[i]->shape.dtype;

	if (in->shape.dtype != want)
		return usc__vf_bad(
			v, in,
			"has element type %s, expected %s (operand %zu's)",
			usc_dtype_name(in->shape.dtype), usc_dtype_name(want),
			i);
	return USC_OK;
}

static bool is_integer_scalar(const usc_hlo_shape *s)
{
	return usc__vf_is_array(s) && s->rank == 0 &&
	       usc_dtype_is_integer(s->dtype);
}

/*
 * The start indices of dynamic-slice and dynamic-update-slice, operands
 * first.. : one integer scalar per dimension, or XLA's older form, one
 * integer vector of rank entries.
 */
usc_status usc__vf_check_start_indices(const usc__vctx *v,
				       const usc_hlo_instr *in, size_t first,
				       size_t rank)
{
	char s[SHAPE_BUF];
	size_t i, n = in->operand_count - first;

	if (n == 1 && in->operands[first]->shape.rank == 1 && rank != 0) {
		const usc_hlo_shape *o = &in->operands[first]->shape;

		if (!usc_dtype_is_integer(o->dtype) ||
		    !usc__vf_dim_eq(o->dims[0], (int64_t)rank))
			return usc__vf_bad(
				v, in,
				"start indices have shape %s, expected an "
				"integer vector of %zu elements",
				usc_hlo_shape_format(o, s, sizeof s), rank);
		return USC_OK;
	}
	if (n != rank)
		return usc__vf_bad(
			v, in,
			"has %zu start index operand%s, expected %zu (the "
			"operand's rank)",
			n, n == 1 ? "" : "s", rank);
	for (i = first; i < in->operand_count; i++)
		if (!is_integer_scalar(&in->operands[i]->shape))
			return usc__vf_bad(
				v, in,
				"start index operand %zu has shape %s, "
				"expected an integer scalar",
				i,
				usc_hlo_shape_format(&in->operands[i]->shape, s,
						     sizeof s));
	return USC_OK;
}

/* ------------------------------------------------------ called comps */

size_t usc__vf_param_count(const usc_hlo_computation *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER)
			n++;
	return n;
}

static const usc_hlo_instr *param_of(const usc_hlo_computation *c, size_t k)
{
	size_t i;

	for (i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number == (int64_t)k)
			return c->instrs[i];
	return NULL;
}

/*
 * A computation applied to scalars (reducers, comparators, map's
 * function): arity n, every parameter a scalar.
 */
usc_status usc__vf_check_scalar_comp(const usc__vctx *v,
				     const usc_hlo_instr *in, const char *attr,
				     size_t n)
{
	const usc_hlo_computation *c = NULL;
	char s[SHAPE_BUF];
	size_t k;

	TRY(get_comp(v, in, attr, &c));
	if (usc__vf_param_count(c) != n)
		return usc__vf_bad(v, in,
				   "applies '%s', which has %zu parameters, "
				   "expected %zu",
				   c->name, usc__vf_param_count(c), n);
	for (k = 0; k < n; k++) {
		const usc_hlo_instr *p = param_of(c, k);

		if (!p)
			return usc__vf_bad(v, in, "applies '%s', which has no "
					   "parameter %zu", c->name, k);
		if (!usc__vf_is_array(&p->shape) || p->shape.rank != 0)
			return usc__vf_bad(
				v, in,
				"applies '%s', whose parameter %zu "
				"has shape %s, expected a scalar",
				c->name, k,
				usc_hlo_shape_format(&p->shape, s, sizeof s));
	}
	return USC_OK;
}

/* fusion and call: the callee's parameters are the operands, its root
 * the result. */
usc_status usc__vf_check_call(const usc__vctx *v, const usc_hlo_instr *in,
			      const char *attr)
{
	const usc_hlo_computation *c = NULL;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t k, n;

	TRY(get_comp(v, in, attr, &c));
	n = usc__vf_param_count(c);
	if (n != in->operand_count)
		return usc__vf_bad(v, in, "has %zu operands, but '%s' has %zu "
				   "parameters",
				   in->operand_count, c->name, n);
	for (k = 0; k < n; k++) {
		const usc_hlo_instr *p = param_of(c, k);
		const usc_hlo_shape *o = &in->operands[k]->shape;

		if (!p)
			return usc__vf_bad(v, in, "calls '%s', which has no "
					   "parameter %zu", c->name, k);
		if (!usc__vf_same_shape(&p->shape, o))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, but "
				"parameter %zu of '%s' has shape %s",
				k, usc_hlo_shape_format(o, a, sizeof a), k,
				c->name,
				usc_hlo_shape_format(&p->shape, b, sizeof b));
	}
	if (c->root && !usc__vf_same_shape(&c->root->shape, &in->shape))
		return usc__vf_bad(
			v, in,
			"has shape %s, but the root of '%s' has "
			"shape %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a), c->name,
			usc_hlo_shape_format(&c->root->shape, b, sizeof b));
	return USC_OK;
}
