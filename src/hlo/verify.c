/*
 * The HLO verifier: the shape rules of the ops ulpscope evaluates, checked
 * once so that the evaluator can index arrays without re-checking them.
 *
 * The rules are those of XLA's shape inference (xla/service/
 * shape_inference.cc) and of its operation semantics page, restricted to
 * what the evaluator relies on: ranks, sizes, element types where an op
 * fixes them, attribute values in range, and the signatures of called
 * computations.  Layouts are ignored (the evaluator works on logical
 * indices), and a dynamic dimension is compared by its bound; an unbounded
 * one ("?") matches any size.  Ops outside the list below pass unchecked:
 * docs/kernels.md lists both.
 *
 * No function here allocates: expected dimensions are built in fixed
 * arrays of USC__VERIFY_MAX_RANK entries, which is far above the rank of
 * any real HLO array; a deeper one is reported rather than overrun.
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

/* ------------------------------------------------------- elementwise */

static int type_bits(usc_dtype t)
{
	/* XLA stores pred in a byte, and bitcast-convert counts it so. */
	if (t == USC_PRED)
		return 8;
	return usc_format_of(t) ? usc_format_of(t)->bits : 0;
}

static usc_status check_bitcast_convert(const usc__vctx *v,
					const usc_hlo_instr *in)
{
	const usc_hlo_shape *o = &in->operands[0]->shape, *r = &in->shape;
	int ib = type_bits(o->dtype), ob = type_bits(r->dtype);
	int64_t dims[USC__VERIFY_MAX_RANK + 1];
	char why[96];
	size_t i, rank;

	if (ib == ob || ib <= 0 || ob <= 0)
		return usc__vf_like_result(v, in, 0, false, false);
	if (ib % ob && ob % ib)
		return usc__vf_bad(v, in,
				   "converts %d-bit %s to %d-bit %s, whose "
				   "widths do not divide each other",
				   ib, usc_dtype_name(o->dtype), ob,
				   usc_dtype_name(r->dtype));
	if (ib > ob) {
		/* Each element splits into a new minor dimension. */
		if (o->rank >= USC__VERIFY_MAX_RANK)
			return usc__vf_want_rank(v, in, r);
		for (i = 0; i < o->rank; i++)
			dims[i] = o->dims[i];
		dims[o->rank] = ib / ob;
		rank = o->rank + 1;
	} else {
		/* The operand's minor dimension merges into one element. */
		if (o->rank == 0 ||
		    !usc__vf_dim_eq(o->dims[o->rank - 1], ob / ib))
			return usc__vf_bad(
				v, in,
				"converts %d-bit %s to %d-bit %s, "
				"so the operand's minor dimension must "
				"have size %d",
				ib, usc_dtype_name(o->dtype), ob,
				usc_dtype_name(r->dtype), ob / ib);
		for (i = 0; i + 1 < o->rank; i++)
			dims[i] = o->dims[i];
		rank = o->rank - 1;
	}
	snprintf(why, sizeof why, "%d-bit %s elements as %d-bit %s", ib,
		 usc_dtype_name(o->dtype), ob, usc_dtype_name(r->dtype));
	return usc__vf_result_dims(v, in, dims, rank, why);
}

usc_status usc__vf_check_elementwise(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	int arity = usc_hlo_opcode_arity(in->opcode);
	int64_t e, mbits;
	size_t i;

	if (arity >= 0)
		TRY(usc__vf_want_operands(v, in, (size_t)arity));
	TRY(usc__vf_want_arrays(v, in));
	switch (in->opcode) {
	case USC_HLO_OP_COMPARE:
		if (in->shape.dtype != USC_PRED)
			return usc__vf_bad(v, in,
					   "has element type %s, expected pred",
					   usc_dtype_name(in->shape.dtype));
		TRY(usc__vf_like_result(v, in, 0, false, false));
		TRY(usc__vf_like_result(v, in, 1, false, false));
		if (in->operands[1]->shape.dtype != in->operands[0]->shape.dtype)
			return usc__vf_bad(
				v, in,
				"operand 1 has element type %s, "
				"expected %s (operand 0's)",
				usc_dtype_name(in->operands[1]->shape.dtype),
				usc_dtype_name(in->operands[0]->shape.dtype));
		if (!usc_hlo_instr_attr(in, "direction"))
			return usc__vf_bad(v, in, "has no direction attribute");
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		if (in->shape.dtype != USC_PRED)
			return usc__vf_bad(v, in,
					   "has element type %s, expected pred",
					   usc_dtype_name(in->shape.dtype));
		return usc__vf_like_result(v, in, 0, false, false);
	case USC_HLO_OP_CONVERT:
	case USC_HLO_OP_REAL:
	case USC_HLO_OP_IMAG:
	case USC_HLO_OP_COMPLEX:
	case USC_HLO_OP_STOCHASTIC_CONVERT:
		for (i = 0; i < in->operand_count; i++)
			TRY(usc__vf_like_result(v, in, i, false, false));
		return USC_OK;
	case USC_HLO_OP_ABS:
		/* |complex| is real: only the dims carry over. */
		return usc__vf_like_result(
			v, in, 0,
			usc_format_of(in->operands[0]->shape.dtype) &&
				usc_format_of(in->operands[0]->shape.dtype)
						->kind != USC_KIND_COMPLEX,
			false);
	case USC_HLO_OP_BITCAST_CONVERT:
		return check_bitcast_convert(v, in);
	case USC_HLO_OP_REDUCE_PRECISION:
		TRY(usc__vf_like_result(v, in, 0, true, false));
		TRY(usc__vf_get_int(v, in, "exponent_bits", true, 0, &e));
		TRY(usc__vf_get_int(v, in, "mantissa_bits", true, 0, &mbits));
		if (e < 1 || mbits < 0)
			return usc__vf_bad(v, in, "has exponent_bits=%" PRId64
					   " and mantissa_bits=%" PRId64
					   ", expected at least 1 and 0",
					   e, mbits);
		return USC_OK;
	case USC_HLO_OP_SELECT:
		if (in->operands[0]->shape.dtype != USC_PRED)
			return usc__vf_bad(
				v, in,
				"operand 0 has element type %s, "
				"expected pred",
				usc_dtype_name(in->operands[0]->shape.dtype));
		TRY(usc__vf_like_result(v, in, 0, false, true));
		TRY(usc__vf_like_result(v, in, 1, true, false));
		return usc__vf_like_result(v, in, 2, true, false);
	case USC_HLO_OP_CLAMP:
		TRY(usc__vf_like_result(v, in, 0, true, true));
		TRY(usc__vf_like_result(v, in, 1, true, false));
		return usc__vf_like_result(v, in, 2, true, true);
	default:
		for (i = 0; i < in->operand_count; i++)
			TRY(usc__vf_like_result(v, in, i, true, false));
		return USC_OK;
	}
}

usc_status usc__vf_check_map(const usc__vctx *v, const usc_hlo_instr *in)
{
	size_t i;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	for (i = 0; i < in->operand_count; i++)
		TRY(usc__vf_like_result(v, in, i, false, false));
	return usc__vf_check_scalar_comp(v, in, "to_apply", in->operand_count);
}

/* -------------------------------------------------------- data movement */

usc_status usc__vf_check_broadcast(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *r = &in->shape;
	const int64_t *d;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_get_ints(v, in, "dimensions", o->rank != 0, &n, &d));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dimensions=%s with %zu entries, "
				   "expected %zu (the operand's rank)",
				   usc__vf_fmt_ints(l, sizeof l, d, n), n,
				   o->rank);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, r->rank,
				   "the result", false));
	for (i = 0; i < n; i++)
		if (!usc__vf_dim_eq(o->dims[i], r->dims[d[i]]))
			return usc__vf_bad(
				v, in,
				"maps operand dimension %zu (size %" PRId64
				") to result dimension %" PRId64
				" (size %" PRId64 ")",
				i, o->dims[i], d[i], r->dims[d[i]]);
	return USC_OK;
}

usc_status usc__vf_check_reshape(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o;
	int64_t a, b;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	if (usc__vf_any_unbounded(o) || usc__vf_any_unbounded(&in->shape))
		return USC_OK;
	a = usc_hlo_shape_elements(o);
	b = usc_hlo_shape_elements(&in->shape);
	if (a != b)
		return usc__vf_bad(v, in,
				   "has %" PRId64 " elements, but its operand "
				   "has %" PRId64,
				   b, a);
	return USC_OK;
}

usc_status usc__vf_check_transpose(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	const int64_t *d;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dimensions=%s, not a permutation of "
				   "the operand's %zu dimensions",
				   usc__vf_fmt_ints(l, sizeof l, d, n),
				   o->rank);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, o->rank,
				   "the operand", false));
	for (i = 0; i < n; i++)
		dims[i] = o->dims[d[i]];
	return usc__vf_result_dims(
		v, in, dims, n,
		"the operand's dims in the order of dimensions");
}

usc_status usc__vf_check_slice(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_attr *a;
	const usc_hlo_shape *o;
	size_t i;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	a = usc_hlo_instr_attr(in, "slice");
	if (!a || a->kind != USC_HLO_ATTR_SLICE)
		return usc__vf_bad(v, in,
				   "has no slice={[start:limit:stride], ...} "
				   "attribute");
	if (a->count != o->rank)
		return usc__vf_bad(v, in,
				   "has %zu slice ranges, expected %zu (the "
				   "operand's rank)",
				   a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_slice_dim *s = &a->slice[i];

		if (s->start < 0 || s->limit < s->start ||
		    (o->dims[i] >= 0 && s->limit > o->dims[i]) ||
		    s->stride <= 0)
			return usc__vf_bad(v, in,
					   "slice range %zu [%" PRId64
					   ":%" PRId64 ":%" PRId64
					   "] does not fit dimension %zu "
					   "of size %" PRId64,
					   i, s->start, s->limit, s->stride, i,
					   o->dims[i]);
		dims[i] = (s->limit - s->start + s->stride - 1) / s->stride;
	}
	return usc__vf_result_dims(
		v, in, dims, a->count,
		"ceil((limit - start) / stride) per dimension");
}

usc_status usc__vf_check_dynamic_slice(const usc__vctx *v,
				       const usc_hlo_instr *in)
{
	const usc_hlo_shape *o;
	const int64_t *sz;
	char l[SHAPE_BUF];
	size_t n, i;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(usc__vf_check_start_indices(v, in, 1, o->rank));
	TRY(usc__vf_get_ints(v, in, "dynamic_slice_sizes", true, &n, &sz));
	if (n != o->rank)
		return usc__vf_bad(v, in,
				   "has dynamic_slice_sizes=%s, expected %zu "
				   "sizes (the operand's rank)",
				   usc__vf_fmt_ints(l, sizeof l, sz, n),
				   o->rank);
	for (i = 0; i < n; i++)
		if (sz[i] < 0 || (o->dims[i] >= 0 && sz[i] > o->dims[i]))
			return usc__vf_bad(
				v, in,
				"has dynamic_slice_sizes=%s, whose "
				"entry %zu exceeds the operand's size %" PRId64,
				usc__vf_fmt_ints(l, sizeof l, sz, n), i,
				o->dims[i]);
	return usc__vf_result_dims(v, in, sz, n, "dynamic_slice_sizes");
}

usc_status usc__vf_check_dynamic_update_slice(const usc__vctx *v,
					      const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *u;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i;

	TRY(usc__vf_want_min_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	u = &in->operands[1]->shape;
	TRY(usc__vf_like_result(v, in, 0, true, false));
	if (u->dtype != o->dtype || u->rank != o->rank)
		return usc__vf_bad(v, in,
				   "update %s does not fit operand %s (element "
				   "type and rank must match)",
				   usc_hlo_shape_format(u, a, sizeof a),
				   usc_hlo_shape_format(o, b, sizeof b));
	for (i = 0; i < u->rank; i++)
		if (u->dims[i] >= 0 && o->dims[i] >= 0 &&
		    u->dims[i] > o->dims[i])
			return usc__vf_bad(
				v, in,
				"update %s is larger than operand %s "
				"in dimension %zu",
				usc_hlo_shape_format(u, a, sizeof a),
				usc_hlo_shape_format(o, b, sizeof b), i);
	return usc__vf_check_start_indices(v, in, 2, o->rank);
}

usc_status usc__vf_check_concatenate(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	const usc_hlo_shape *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	const int64_t *d;
	int64_t sum = 0;
	bool dynamic = false;
	size_t n, i, j;

	TRY(usc__vf_want_min_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	if (n != 1)
		return usc__vf_bad(v, in, "has %zu dimensions, expected one",
				   n);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, n, r->rank,
				   "the result", false));
	for (i = 0; i < in->operand_count; i++) {
		const usc_hlo_shape *o = &in->operands[i]->shape;
		bool ok = o->rank == r->rank && o->dtype == r->dtype;

		for (j = 0; ok && j < r->rank; j++)
			if ((int64_t)j != d[0] &&
			    !usc__vf_dim_eq(o->dims[j], r->dims[j]))
				ok = false;
		if (!ok)
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, which does "
				"not match the result %s outside dimension %" PRId64,
				i, usc_hlo_shape_format(o, a, sizeof a),
				usc_hlo_shape_format(r, b, sizeof b), d[0]);
		if (o->dims[d[0]] < 0)
			dynamic = true;
		else
			sum = usc__vf_add_sat(sum, o->dims[d[0]]);
	}
	if (!dynamic && r->dims[d[0]] >= 0 && sum != r->dims[d[0]])
		return usc__vf_bad(
			v, in,
			"has size %" PRId64 " in dimension %" PRId64
			", but its operands' sizes there sum to %" PRId64,
			r->dims[d[0]], d[0], sum);
	return USC_OK;
}

usc_status usc__vf_check_pad(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o, *pv;
	const usc_hlo_attr *a;
	char s[SHAPE_BUF];
	size_t i;

	TRY(usc__vf_want_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	pv = &in->operands[1]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	if (pv->rank != 0 || pv->dtype != o->dtype)
		return usc__vf_bad(v, in,
				   "padding value has shape %s, expected a %s "
				   "scalar",
				   usc_hlo_shape_format(pv, s, sizeof s),
				   usc_dtype_name(o->dtype));
	a = usc_hlo_instr_attr(in, "padding");
	if (!a || a->kind != USC_HLO_ATTR_PADDING)
		return usc__vf_bad(v, in, "has no padding=lo_hi[_interior]x... "
				   "attribute");
	if (a->count != o->rank)
		return usc__vf_bad(v, in,
				   "has %zu padding entries, expected %zu (the "
				   "operand's rank)",
				   a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_pad_dim *p = &a->pad[i];
		int64_t size = o->dims[i];

		if (p->interior < 0)
			return usc__vf_bad(
				v, in,
				"has negative interior padding %" PRId64
				" in dimension %zu",
				p->interior, i);
		if (size < 0) {
			dims[i] = -1;
			continue;
		}
		/* lo + hi + size + (size - 1) * interior; lo, hi may be < 0. */
		dims[i] = usc__vf_add_sat(
			usc__vf_add_sat(p->lo, p->hi),
			usc__vf_add_sat(size,
					usc__vf_mul_sat(size ? size - 1 : 0,
							p->interior)));
		if (dims[i] < 0)
			return usc__vf_bad(v, in,
					   "padding %" PRId64 "_%" PRId64
					   "_%" PRId64
					   " leaves dimension %zu with a "
					   "negative size",
					   p->lo, p->hi, p->interior, i);
	}
	return usc__vf_result_dims(v, in, dims, a->count,
				   "lo + hi + size + (size - 1) * interior per "
				   "dimension");
}

usc_status usc__vf_check_iota(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t d;

	TRY(usc__vf_want_operands(v, in, 0));
	TRY(usc__vf_want_array_result(v, in));
	TRY(usc__vf_get_int(v, in, "iota_dimension", true, 0, &d));
	if (d < 0 || (uint64_t)d >= in->shape.rank)
		return usc__vf_bad(v, in,
				   "has iota_dimension=%" PRId64
				   ", outside its "
				   "rank %zu",
				   d, in->shape.rank);
	return USC_OK;
}

usc_status usc__vf_check_reverse(const usc__vctx *v, const usc_hlo_instr *in)
{
	const int64_t *d;
	size_t n;

	TRY(usc__vf_want_operands(v, in, 1));
	TRY(usc__vf_want_arrays(v, in));
	TRY(usc__vf_like_result(v, in, 0, true, false));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &n, &d));
	return usc__vf_check_dim_list(v, in, "dimensions", d, n, in->shape.rank,
				      "the operand", false);
}

/* ----------------------------------------------------------- reductions */

/*
 * The result of a reduction over n inputs: one array of dims with the
 * init value's element type, or a tuple of n such arrays.
 */
static usc_status reduction_result(const usc__vctx *v, const usc_hlo_instr *in,
				   size_t n, const int64_t *dims, size_t rank,
				   const char *why)
{
	const usc_hlo_shape *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t k;

	if (n == 1) {
		TRY(usc__vf_want_array_result(v, in));
		TRY(usc__vf_result_type_of(v, in, 1));
		return usc__vf_result_dims(v, in, dims, rank, why);
	}
	if (r->kind != USC_HLO_SHAPE_TUPLE || r->tuple_count != n)
		return usc__vf_bad(
			v, in,
			"has shape %s, expected a tuple of %zu arrays "
			"(one per input)",
			usc_hlo_shape_format(r, a, sizeof a), n);
	for (k = 0; k < n; k++) {
		const usc_hlo_shape *e = &r->tuple[k];
		usc_dtype t = in->operands[n + k]->shape.dtype;

		if (!usc__vf_is_array(e) || e->dtype != t ||
		    !usc__vf_dims_are(e, dims, rank))
			return usc__vf_bad(v, in,
					   "result element %zu has shape %s, "
					   "expected %s (%s)",
					   k,
					   usc_hlo_shape_format(e, a, sizeof a),
					   usc__vf_fmt_dims(b, sizeof b, t,
							    dims, NULL, rank),
					   why);
	}
	return USC_OK;
}

/* Inputs 0..n-1 arrays of input 0's dims, inits n..2n-1 scalars. */
static usc_status check_inputs_inits(const usc__vctx *v,
				     const usc_hlo_instr *in, size_t *n_out)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t n, k;

	if (in->operand_count < 2 || in->operand_count % 2)
		return usc__vf_bad(v, in,
				   "has %zu operands, expected inputs and as "
				   "many init values",
				   in->operand_count);
	n = in->operand_count / 2;
	for (k = 0; k < in->operand_count; k++) {
		const usc_hlo_shape *o = &in->operands[k]->shape;

		if (!usc__vf_is_array(o))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected "
				"an array",
				k, usc_hlo_shape_format(o, a, sizeof a));
		TRY(usc__vf_want_rank(v, in, o));
		if (k < n && !usc__vf_same_dims(o, &in->operands[0]->shape))
			return usc__vf_bad(
				v, in,
				"input %zu has shape %s, but input 0 "
				"has %s",
				k, usc_hlo_shape_format(o, a, sizeof a),
				usc_hlo_shape_format(&in->operands[0]->shape, b,
						     sizeof b));
		if (k >= n && o->rank != 0)
			return usc__vf_bad(
				v, in,
				"init value %zu has shape %s, "
				"expected a scalar",
				k - n, usc_hlo_shape_format(o, a, sizeof a));
	}
	*n_out = n;
	return USC_OK;
}

usc_status usc__vf_check_reduce(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	const int64_t *d;
	size_t n, nd, i, rank = 0;

	TRY(check_inputs_inits(v, in, &n));
	o = &in->operands[0]->shape;
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &nd, &d));
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, nd, o->rank,
				   "the input", false));
	for (i = 0; i < o->rank; i++)
		if (!usc__vf_in_list(d, nd, (int64_t)i))
			dims[rank++] = o->dims[i];
	TRY(reduction_result(v, in, n, dims, rank,
			     "the input's dims without the reduced ones"));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

/* The output dims of a window over an operand (reduce-window and
 * select-and-scatter). */
static usc_status window_dims(const usc__vctx *v, const usc_hlo_instr *in,
			      const usc_hlo_shape *o, int64_t *dims)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "window");
	size_t i;

	if (!a && o->rank == 0)
		return USC_OK;
	if (!a || a->kind != USC_HLO_ATTR_WINDOW)
		return usc__vf_bad(v, in, "has no window={size=...} attribute");
	if (a->count != o->rank)
		return usc__vf_bad(
			v, in,
			"has a window of %zu dimensions, expected %zu "
			"(the operand's rank)",
			a->count, o->rank);
	for (i = 0; i < a->count; i++) {
		const usc_hlo_window_dim *w = &a->window[i];

		if (w->size <= 0 || w->stride <= 0 || w->lhs_dilate <= 0 ||
		    w->rhs_dilate <= 0)
			return usc__vf_bad(
				v, in,
				"window dimension %zu has size %" PRId64
				", stride %" PRId64 ", dilations %" PRId64
				" and %" PRId64 "; all must be positive",
				i, w->size, w->stride, w->lhs_dilate,
				w->rhs_dilate);
		if (o->dims[i] < 0) {
			dims[i] = -1;
			continue;
		}
		dims[i] = usc__vf_strided_bound(
			usc__vf_add_sat(usc__vf_dilated_bound(o->dims[i],
							      w->lhs_dilate),
					usc__vf_add_sat(w->pad_lo, w->pad_hi)),
			usc__vf_dilated_bound(w->size, w->rhs_dilate),
			w->stride);
	}
	return USC_OK;
}

usc_status usc__vf_check_reduce_window(const usc__vctx *v,
				       const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o;
	size_t n;

	TRY(check_inputs_inits(v, in, &n));
	o = &in->operands[0]->shape;
	TRY(window_dims(v, in, o, dims));
	TRY(reduction_result(v, in, n, dims, o->rank,
			     "the window's output size per dimension"));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

usc_status usc__vf_check_select_and_scatter(const usc__vctx *v,
					    const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o, *src, *init;
	char a[SHAPE_BUF], b[SHAPE_BUF];

	TRY(usc__vf_want_operands(v, in, 3));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	src = &in->operands[1]->shape;
	init = &in->operands[2]->shape;
	TRY(usc__vf_like_result(v, in, 0, true, false));
	TRY(window_dims(v, in, o, dims));
	if (!usc__vf_dims_are(src, dims, o->rank))
		return usc__vf_bad(v, in,
				   "source has shape %s, expected %s (the "
				   "window's output size per dimension)",
				   usc_hlo_shape_format(src, a, sizeof a),
				   usc__vf_fmt_dims(b, sizeof b, src->dtype,
						    dims, NULL, o->rank));
	if (init->rank != 0)
		return usc__vf_bad(v, in,
				   "init value has shape %s, expected a scalar",
				   usc_hlo_shape_format(init, a, sizeof a));
	TRY(usc__vf_check_scalar_comp(v, in, "select", 2));
	return usc__vf_check_scalar_comp(v, in, "scatter", 2);
}

/* ------------------------------------------------------- linear algebra */

usc_status usc__vf_check_dot(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[2 * USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *l, *r;
	const int64_t *lc, *rc, *lb, *rb;
	size_t nlc, nrc, nlb, nrb, i, rank = 0;
	char x[SHAPE_BUF], y[SHAPE_BUF];

	/*
	 * A sparse dot carries metadata operands and a compressed lhs whose
	 * sizes follow other rules; it is left unchecked.
	 */
	if (in->operand_count > 2)
		return USC_OK;
	TRY(usc__vf_want_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	l = &in->operands[0]->shape;
	r = &in->operands[1]->shape;
	TRY(usc__vf_get_ints(v, in, "lhs_contracting_dims", false, &nlc, &lc));
	TRY(usc__vf_get_ints(v, in, "rhs_contracting_dims", false, &nrc, &rc));
	TRY(usc__vf_get_ints(v, in, "lhs_batch_dims", false, &nlb, &lb));
	TRY(usc__vf_get_ints(v, in, "rhs_batch_dims", false, &nrb, &rb));
	if (nlc != nrc)
		return usc__vf_bad(
			v, in,
			"has lhs_contracting_dims=%s and "
			"rhs_contracting_dims=%s of different lengths",
			usc__vf_fmt_ints(x, sizeof x, lc, nlc),
			usc__vf_fmt_ints(y, sizeof y, rc, nrc));
	if (nlb != nrb)
		return usc__vf_bad(
			v, in,
			"has lhs_batch_dims=%s and rhs_batch_dims=%s "
			"of different lengths",
			usc__vf_fmt_ints(x, sizeof x, lb, nlb),
			usc__vf_fmt_ints(y, sizeof y, rb, nrb));
	TRY(usc__vf_check_dim_list(v, in, "lhs_contracting_dims", lc, nlc,
				   l->rank, "the lhs", false));
	TRY(usc__vf_check_dim_list(v, in, "rhs_contracting_dims", rc, nrc,
				   r->rank, "the rhs", false));
	TRY(usc__vf_check_dim_list(v, in, "lhs_batch_dims", lb, nlb, l->rank,
				   "the lhs", false));
	TRY(usc__vf_check_dim_list(v, in, "rhs_batch_dims", rb, nrb, r->rank,
				   "the rhs", false));
	for (i = 0; i < nlc; i++) {
		if (usc__vf_in_list(lb, nlb, lc[i]))
			return usc__vf_bad(v, in,
					   "uses lhs dimension %" PRId64
					   " both as batch and contracting",
					   lc[i]);
		if (usc__vf_in_list(rb, nrb, rc[i]))
			return usc__vf_bad(v, in,
					   "uses rhs dimension %" PRId64
					   " both as batch and contracting",
					   rc[i]);
		if (!usc__vf_dim_eq(l->dims[lc[i]], r->dims[rc[i]]))
			return usc__vf_bad(v, in,
					   "contracts lhs dimension %" PRId64
					   " (size %" PRId64
					   ") with rhs dimension %" PRId64
					   " (size %" PRId64 ")",
					   lc[i], l->dims[lc[i]], rc[i],
					   r->dims[rc[i]]);
	}
	for (i = 0; i < nlb; i++) {
		if (!usc__vf_dim_eq(l->dims[lb[i]], r->dims[rb[i]]))
			return usc__vf_bad(
				v, in,
				"pairs lhs batch dimension %" PRId64
				" (size %" PRId64 ") with rhs batch "
				"dimension %" PRId64 " (size %" PRId64 ")",
				lb[i], l->dims[lb[i]], rb[i], r->dims[rb[i]]);
		dims[rank++] = l->dims[lb[i]];
	}
	for (i = 0; i < l->rank; i++)
		if (!usc__vf_in_list(lb, nlb, (int64_t)i) &&
		    !usc__vf_in_list(lc, nlc, (int64_t)i))
			dims[rank++] = l->dims[i];
	for (i = 0; i < r->rank; i++)
		if (!usc__vf_in_list(rb, nrb, (int64_t)i) &&
		    !usc__vf_in_list(rc, nrc, (int64_t)i))
			dims[rank++] = r->dims[i];
	return usc__vf_result_dims(v, in, dims, rank,
				   "batch, then lhs free, then rhs free dims");
}

usc_status usc__vf_check_convolution(const usc__vctx *v,
				     const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *l, *k;
	const usc_hlo_dim_labels *dl;
	const usc_hlo_attr *a, *w;
	int64_t fgc, bgc, in_batch, in_feat, k_in, k_out;
	size_t s, i;

	TRY(usc__vf_want_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	l = &in->operands[0]->shape;
	k = &in->operands[1]->shape;
	a = usc_hlo_instr_attr(in, "dim_labels");
	if (!a || a->kind != USC_HLO_ATTR_DIM_LABELS || !a->labels)
		return usc__vf_bad(v, in, "has no dim_labels attribute");
	dl = a->labels;
	s = dl->spatial_count;
	if (l->rank != s + 2 || k->rank != s + 2 || in->shape.rank != s + 2)
		return usc__vf_bad(
			v, in,
			"has ranks %zu (input), %zu (kernel) and %zu "
			"(output), but dim_labels=%s gives %zu spatial "
			"dimensions",
			l->rank, k->rank, in->shape.rank, a->text, s);
	TRY(usc__vf_get_int(v, in, "feature_group_count", false, 1, &fgc));
	TRY(usc__vf_get_int(v, in, "batch_group_count", false, 1, &bgc));
	if (fgc < 1 || bgc < 1)
		return usc__vf_bad(v, in, "has feature_group_count=%" PRId64
				   " and batch_group_count=%" PRId64
				   "; both must be positive", fgc, bgc);
	in_batch = l->dims[dl->input_batch];
	in_feat = l->dims[dl->input_feature];
	k_in = k->dims[dl->kernel_input_feature];
	k_out = k->dims[dl->kernel_output_feature];
	if (in_feat >= 0 && k_in >= 0 && in_feat != usc__vf_mul_sat(k_in, fgc))
		return usc__vf_bad(
			v, in,
			"has %" PRId64 " input features, expected %" PRId64
			" (kernel input features %" PRId64
			" times feature_group_count %" PRId64 ")",
			in_feat, usc__vf_mul_sat(k_in, fgc), k_in, fgc);
	if (k_out >= 0 && (k_out % fgc || k_out % bgc))
		return usc__vf_bad(v, in,
				   "has %" PRId64
				   " kernel output features, not "
				   "a multiple of feature_group_count %" PRId64
				   " and batch_group_count %" PRId64,
				   k_out, fgc, bgc);
	if (in_batch >= 0 && in_batch % bgc)
		return usc__vf_bad(v, in,
				   "has batch size %" PRId64 ", not a multiple "
				   "of batch_group_count %" PRId64,
				   in_batch, bgc);
	w = usc_hlo_instr_attr(in, "window");
	if (s && (!w || w->kind != USC_HLO_ATTR_WINDOW))
		return usc__vf_bad(v, in, "has no window={size=...} attribute");
	if (w && w->count != s)
		return usc__vf_bad(
			v, in,
			"has a window of %zu dimensions, but dim_labels="
			"%s gives %zu spatial dimensions",
			w->count, a->text, s);
	dims[dl->output_batch] = in_batch < 0 ? -1 : in_batch / bgc;
	dims[dl->output_feature] = k_out;
	for (i = 0; i < s; i++) {
		const usc_hlo_window_dim *wd = &w->window[i];
		int64_t x = l->dims[dl->input_spatial[i]];
		int64_t ks = k->dims[dl->kernel_spatial[i]];

		if (wd->size <= 0 || wd->stride <= 0 || wd->lhs_dilate <= 0 ||
		    wd->rhs_dilate <= 0)
			return usc__vf_bad(
				v, in,
				"window dimension %zu has size %" PRId64
				", stride %" PRId64 ", dilations %" PRId64
				" and %" PRId64 "; all must be positive",
				i, wd->size, wd->stride, wd->lhs_dilate,
				wd->rhs_dilate);
		if (!usc__vf_dim_eq(ks, wd->size))
			return usc__vf_bad(
				v, in,
				"has window size %" PRId64 " in spatial "
				"dimension %zu, but the kernel's size there is %" PRId64,
				wd->size, i, ks);
		dims[dl->output_spatial[i]] =
			x < 0 ? -1
			      : usc__vf_strided_bound(
					usc__vf_add_sat(
						usc__vf_dilated_bound(
							x, wd->lhs_dilate),
						usc__vf_add_sat(wd->pad_lo,
								wd->pad_hi)),
					usc__vf_dilated_bound(wd->size,
							      wd->rhs_dilate),
					wd->stride);
	}
	return usc__vf_result_dims(
		v, in, dims, s + 2,
		"batch / batch_group_count, kernel output features, "
		"windowed spatial sizes");
}

/* ---------------------------------------------------- gather and scatter */

/* The size of the index vector: 1 when index_vector_dim is the rank. */
static usc_status index_vector(const usc__vctx *v, const usc_hlo_instr *in,
			       const usc_hlo_shape *idx, int64_t *ivd,
			       int64_t *size)
{
	char s[SHAPE_BUF];

	TRY(usc__vf_get_int(v, in, "index_vector_dim", true, 0, ivd));
	if (!usc_dtype_is_integer(idx->dtype))
		return usc__vf_bad(
			v, in,
			"has indices of shape %s, expected an integer "
			"array",
			usc_hlo_shape_format(idx, s, sizeof s));
	if (*ivd < 0 || (uint64_t)*ivd > idx->rank)
		return usc__vf_bad(v, in,
				   "has index_vector_dim=%" PRId64 ", outside "
				   "the indices' rank %zu",
				   *ivd, idx->rank);
	*size = (uint64_t)*ivd == idx->rank ? 1 : idx->dims[*ivd];
	return USC_OK;
}

usc_status usc__vf_check_gather(const usc__vctx *v, const usc_hlo_instr *in)
{
	int64_t dims[USC__VERIFY_MAX_RANK];
	const usc_hlo_shape *o, *idx;
	const int64_t *od, *cd, *sim, *ss, *obd, *ibd;
	size_t nod, ncd, nsim, nss, nobd, nibd, i, rank, batch_rank, bi = 0,
		oi = 0, next_op = 0;
	int64_t ivd = 0, ivsize = 0;
	char l[SHAPE_BUF];

	TRY(usc__vf_want_operands(v, in, 2));
	TRY(usc__vf_want_arrays(v, in));
	o = &in->operands[0]->shape;
	idx = &in->operands[1]->shape;
	TRY(usc__vf_result_type_of(v, in, 0));
	TRY(index_vector(v, in, idx, &ivd, &ivsize));
	TRY(usc__vf_get_ints(v, in, "offset_dims", false, &nod, &od));
	TRY(usc__vf_get_ints(v, in, "collapsed_slice_dims", false, &ncd, &cd));
	TRY(usc__vf_get_ints(v, in, "start_index_map", true, &nsim, &sim));
	TRY(usc__vf_get_ints(v, in, "slice_sizes", true, &nss, &ss));
	TRY(usc__vf_get_ints(v, in, "operand_batching_dims", false, &nobd,
			     &obd));
	TRY(usc__vf_get_ints(v, in, "start_indices_batching_dims", false, &nibd,
			     &ibd));
	if (ivsize >= 0 && nsim != (size_t)ivsize)
		return usc__vf_bad(v, in,
				   "has start_index_map=%s, expected %" PRId64
				   " entries (the index vector's size)",
				   usc__vf_fmt_ints(l, sizeof l, sim, nsim),
				   ivsize);
	TRY(usc__vf_check_dim_list(v, in, "start_index_map", sim, nsim, o->rank,
				   "the operand", false));
	if (nss != o->rank)
		return usc__vf_bad(
			v, in,
			"has slice_sizes=%s, expected %zu sizes (the "
			"operand's rank)",
			usc__vf_fmt_ints(l, sizeof l, ss, nss), o->rank);
	for (i = 0; i < nss; i++)
		if (ss[i] < 0 || (o->dims[i] >= 0 && ss[i] > o->dims[i]))
			return usc__vf_bad(
				v, in,
				"has slice_sizes=%s, whose entry %zu "
				"does not fit the operand's size %" PRId64,
				usc__vf_fmt_ints(l, sizeof l, ss, nss), i,
				o->dims[i]);
	TRY(usc__vf_check_dim_list(v, in, "collapsed_slice_dims", cd, ncd,
				   o->rank, "the operand", true));
	TRY(usc__vf_check_dim_list(v, in, "operand_batching_dims", obd, nobd,
				   o->rank, "the operand", true));
	for (i = 0; i < ncd; i++)
		if (ss[cd[i]] > 1)
			return usc__vf_bad(
				v, in,
				"collapses operand dimension %" PRId64
				", whose slice size %" PRId64 " is not 1",
				cd[i], ss[cd[i]]);
	if (nod + ncd + nobd != o->rank)
		return usc__vf_bad(
			v, in,
			"has %zu offset, %zu collapsed and %zu batching "
			"dims, which do not add up to the operand's rank %zu",
			nod, ncd, nobd, o->rank);
	batch_rank = idx->rank - ((uint64_t)ivd < idx->rank ? 1 : 0);
	rank = batch_rank + nod;
	if (rank > USC__VERIFY_MAX_RANK)
		return usc__vf_want_rank(v, in, &in->shape);
	TRY(usc__vf_check_dim_list(v, in, "offset_dims", od, nod, rank,
				   "the result", true));
	if (nibd != nobd)
		return usc__vf_bad(
			v, in,
			"has %zu operand batching dims but %zu start "
			"indices batching dims",
			nobd, nibd);
	for (i = 0; i < rank; i++) {
		if (usc__vf_in_list(od, nod, (int64_t)i)) {
			while (next_op < o->rank &&
			       (usc__vf_in_list(cd, ncd, (int64_t)next_op) ||
				usc__vf_in_list(obd, nobd, (int64_t)next_op)))
				next_op++;
			dims[i] = next_op < o->rank ? ss[next_op] : 0;
			next_op++;
			oi++;
		} else {
			if ((int64_t)bi == ivd)
				bi++;
			dims[i] = idx->dims[bi++];
		}
	}
	return usc__vf_result_dims(
		v, in, dims, rank,
		"the indices' batch dims with the slice sizes at "
		"offset_dims");
}

usc_status usc__vf_check_scatter(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *idx, *u, *r = &in->shape;
	const int64_t *uwd, *iwd, *sdod, *ibd, *sibd;
	size_t nuwd, niwd, nsdod, nibd, nsibd, n, k, i, urank, bi = 0,
		next_op = 0;
	int64_t ivd = 0, ivsize = 0;
	char a[SHAPE_BUF], b[SHAPE_BUF];

	if (in->operand_count < 3 || in->operand_count % 2 == 0)
		return usc__vf_bad(v, in,
				   "has %zu operands, expected inputs, indices "
				   "and as many updates as inputs",
				   in->operand_count);
	n = (in->operand_count - 1) / 2;
	for (k = 0; k < in->operand_count; k++) {
		if (!usc__vf_is_array(&in->operands[k]->shape))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected an "
				"array",
				k,
				usc_hlo_shape_format(&in->operands[k]->shape, a,
						     sizeof a));
		TRY(usc__vf_want_rank(v, in, &in->operands[k]->shape));
	}
	o = &in->operands[0]->shape;
	idx = &in->operands[n]->shape;
	u = &in->operands[n + 1]->shape;
	for (k = 0; k < n; k++) {
		const usc_hlo_shape *ok = &in->operands[k]->shape;
		const usc_hlo_shape *uk = &in->operands[n + 1 + k]->shape;
		const usc_hlo_shape *rk = n == 1 ? r
					: r->kind == USC_HLO_SHAPE_TUPLE &&
							  r->tuple_count == n
						  ? &r->tuple[k]
						  : NULL;

		if (!usc__vf_same_dims(ok, o))
			return usc__vf_bad(
				v, in,
				"input %zu has shape %s, but input 0 "
				"has %s",
				k, usc_hlo_shape_format(ok, a, sizeof a),
				usc_hlo_shape_format(o, b, sizeof b));
		if (!usc__vf_same_dims(uk, u) || uk->dtype != ok->dtype)
			return usc__vf_bad(
				v, in,
				"update %zu has shape %s, expected %s's "
				"dims with input %zu's type",
				k, usc_hlo_shape_format(uk, a, sizeof a),
				n > 1 ? "update 0" : "the update", k);
		if (!rk || !usc__vf_same_shape(rk, ok))
			return usc__vf_bad(v, in,
					   "has shape %s, expected the inputs' "
					   "shape%s",
					   usc_hlo_shape_format(r, a, sizeof a),
					   n > 1 ? "s as a tuple" : "");
	}
	TRY(index_vector(v, in, idx, &ivd, &ivsize));
	TRY(usc__vf_get_ints(v, in, "update_window_dims", false, &nuwd, &uwd));
	TRY(usc__vf_get_ints(v, in, "inserted_window_dims", false, &niwd,
			     &iwd));
	TRY(usc__vf_get_ints(v, in, "scatter_dims_to_operand_dims", true,
			     &nsdod, &sdod));
	TRY(usc__vf_get_ints(v, in, "input_batching_dims", false, &nibd, &ibd));
	TRY(usc__vf_get_ints(v, in, "scatter_indices_batching_dims", false,
			     &nsibd, &sibd));
	if (ivsize >= 0 && nsdod != (size_t)ivsize)
		return usc__vf_bad(
			v, in,
			"has scatter_dims_to_operand_dims=%s, "
			"expected %" PRId64 " entries (the index vector's "
			"size)",
			usc__vf_fmt_ints(a, sizeof a, sdod, nsdod), ivsize);
	TRY(usc__vf_check_dim_list(v, in, "scatter_dims_to_operand_dims", sdod,
				   nsdod, o->rank, "the operand", false));
	TRY(usc__vf_check_dim_list(v, in, "inserted_window_dims", iwd, niwd,
				   o->rank, "the operand", true));
	TRY(usc__vf_check_dim_list(v, in, "input_batching_dims", ibd, nibd,
				   o->rank, "the operand", true));
	if (nuwd + niwd + nibd != o->rank)
		return usc__vf_bad(
			v, in,
			"has %zu update window, %zu inserted and %zu "
			"batching dims, which do not add up to the operand's "
			"rank %zu",
			nuwd, niwd, nibd, o->rank);
	if (nsibd != nibd)
		return usc__vf_bad(
			v, in,
			"has %zu input batching dims but %zu scatter "
			"indices batching dims",
			nibd, nsibd);
	urank = nuwd + idx->rank - ((uint64_t)ivd < idx->rank ? 1 : 0);
	if (u->rank != urank)
		return usc__vf_bad(
			v, in,
			"has updates of shape %s, expected rank %zu "
			"(update window dims plus the indices' batch dims)",
			usc_hlo_shape_format(u, a, sizeof a), urank);
	TRY(usc__vf_check_dim_list(v, in, "update_window_dims", uwd, nuwd,
				   urank, "the updates", true));
	for (i = 0; i < urank; i++) {
		if (usc__vf_in_list(uwd, nuwd, (int64_t)i)) {
			while (next_op < o->rank &&
			       (usc__vf_in_list(iwd, niwd, (int64_t)next_op) ||
				usc__vf_in_list(ibd, nibd, (int64_t)next_op)))
				next_op++;
			if (next_op < o->rank && u->dims[i] >= 0 &&
			    o->dims[next_op] >= 0 && u->dims[i] > o->dims[next_op])
				return usc__vf_bad(
					v, in,
					"update window dimension %zu "
					"(size %" PRId64 ") exceeds operand "
					"dimension %zu (size %" PRId64 ")",
					i, u->dims[i], next_op,
					o->dims[next_op]);
			next_op++;
		} else {
			if ((int64_t)bi == ivd)
				bi++;
			if (!usc__vf_dim_eq(u->dims[i], idx->dims[bi]))
				return usc__vf_bad(
					v, in,
					"update dimension %zu has size "
					"%" PRId64 ", but the matching indices "
					"dimension %zu has %" PRId64,
					i, u->dims[i], bi, idx->dims[bi]);
			bi++;
		}
	}
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

/* ---------------------------------------------------- control, tuples */

static usc_status check_tuple(const usc__vctx *v, const usc_hlo_instr *in)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i;

	if (in->shape.kind != USC_HLO_SHAPE_TUPLE ||
	    in->shape.tuple_count != in->operand_count)
		return usc__vf_bad(
			v, in,
			"has shape %s, expected a tuple of %zu "
			"element%s (one per operand)",
			usc_hlo_shape_format(&in->shape, a, sizeof a),
			in->operand_count, in->operand_count == 1 ? "" : "s");
	for (i = 0; i < in->operand_count; i++)
		if (!usc__vf_same_shape(&in->shape.tuple[i],
					&in->operands[i]->shape))
			return usc__vf_bad(
				v, in,
				"element %zu has shape %s, but operand "
				"%zu has shape %s",
				i,
				usc_hlo_shape_format(&in->shape.tuple[i], a,
						     sizeof a),
				i,
				usc_hlo_shape_format(&in->operands[i]->shape, b,
						     sizeof b));
	return USC_OK;
}

static usc_status check_gte(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *t;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	int64_t k;

	TRY(usc__vf_want_operands(v, in, 1));
	t = &in->operands[0]->shape;
	if (t->kind != USC_HLO_SHAPE_TUPLE)
		return usc__vf_bad(v, in,
				   "operand has shape %s, expected a tuple",
				   usc_hlo_shape_format(t, a, sizeof a));
	TRY(usc__vf_get_int(v, in, "index", true, 0, &k));
	if (k < 0 || (uint64_t)k >= t->tuple_count)
		return usc__vf_bad(v, in,
				   "has index=%" PRId64
				   ", but its operand is a "
				   "tuple of %zu",
				   k, t->tuple_count);
	if (!usc__vf_same_shape(&in->shape, &t->tuple[k]))
		return usc__vf_bad(
			v, in,
			"has shape %s, but element %" PRId64 " of its "
			"operand has shape %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a), k,
			usc_hlo_shape_format(&t->tuple[k], b, sizeof b));
	return USC_OK;
}

static usc_status check_parameter(const usc__vctx *v, const usc_hlo_instr *in,
				  size_t nparams)
{
	const usc_hlo_computation *c = v->comp;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	int64_t k = in->parameter_number;
	size_t i;

	if (k < 0 || (uint64_t)k >= nparams)
		return usc__vf_bad(v, in,
				   "has number %" PRId64
				   ", but the computation "
				   "has %zu parameters (numbers 0 to %zu)",
				   k, nparams, nparams ? nparams - 1 : 0);
	for (i = 0; i < in->index; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number == k)
			return usc__vf_bad(v, in,
					   "has number %" PRId64
					   ", already taken "
					   "by '%s'",
					   k, c->instrs[i]->name);
	if (c->has_signature && c->param_count == nparams &&
	    !usc__vf_same_shape(&c->params[k].shape, &in->shape))
		return usc__vf_bad(
			v, in,
			"has shape %s, but the computation's "
			"signature gives parameter %" PRId64 " shape %s",
			usc_hlo_shape_format(&in->shape, a, sizeof a), k,
			usc_hlo_shape_format(&c->params[k].shape, b, sizeof b));
	return USC_OK;
}

static usc_status check_literal(const usc__vctx *v, const usc_hlo_instr *in,
				const usc_hlo_shape *s,
				const usc_hlo_literal *lit)
{
	char a[SHAPE_BUF];
	size_t i;

	if (lit->kind == USC_HLO_LITERAL_ELIDED)
		return USC_OK;
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		if (lit->kind != USC_HLO_LITERAL_TUPLE ||
		    lit->tuple_count != s->tuple_count)
			return usc__vf_bad(
				v, in,
				"has a literal that does not match "
				"the tuple shape %s",
				usc_hlo_shape_format(s, a, sizeof a));
		for (i = 0; i < s->tuple_count; i++)
			TRY(check_literal(v, in, &s->tuple[i], &lit->tuple[i]));
		return USC_OK;
	}
	if (s->kind != USC_HLO_SHAPE_ARRAY || usc__vf_any_unbounded(s))
		return USC_OK;
	if (lit->kind != USC_HLO_LITERAL_ARRAY ||
	    (int64_t)lit->count != usc_hlo_shape_elements(s))
		return usc__vf_bad(
			v, in,
			"has %zu literal elements, but shape %s has %" PRId64,
			lit->kind == USC_HLO_LITERAL_ARRAY ? lit->count : 0,
			usc_hlo_shape_format(s, a, sizeof a),
			usc_hlo_shape_elements(s));
	return USC_OK;
}

static usc_status check_sort(const usc__vctx *v, const usc_hlo_instr *in)
{
	const usc_hlo_shape *o, *r = &in->shape;
	char a[SHAPE_BUF], b[SHAPE_BUF];
	const int64_t *d;
	size_t n, nd, k;

	TRY(usc__vf_want_min_operands(v, in, 1));
	n = in->operand_count;
	for (k = 0; k < n; k++) {
		const usc_hlo_shape *ok = &in->operands[k]->shape;

		if (!usc__vf_is_array(ok))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, expected an "
				"array",
				k, usc_hlo_shape_format(ok, a, sizeof a));
		TRY(usc__vf_want_rank(v, in, ok));
		if (!usc__vf_same_dims(ok, &in->operands[0]->shape))
			return usc__vf_bad(
				v, in,
				"operand %zu has shape %s, but operand "
				"0 has %s",
				k, usc_hlo_shape_format(ok, a, sizeof a),
				usc_hlo_shape_format(&in->operands[0]->shape, b,
						     sizeof b));
	}
	o = &in->operands[0]->shape;
	if (n == 1 ? !usc__vf_same_shape(r, o)
		   : r->kind != USC_HLO_SHAPE_TUPLE || r->tuple_count != n)
		return usc__vf_bad(
			v, in, "has shape %s, expected the operands' shape%s",
			usc_hlo_shape_format(r, a, sizeof a),
			n > 1 ? "s as a tuple" : "");
	for (k = 0; n > 1 && k < n; k++)
		if (!usc__vf_same_shape(&r->tuple[k], &in->operands[k]->shape))
			return usc__vf_bad(
				v, in,
				"result element %zu has shape %s, but "
				"operand %zu has %s",
				k,
				usc_hlo_shape_format(&r->tuple[k], a, sizeof a),
				k,
				usc_hlo_shape_format(&in->operands[k]->shape, b,
						     sizeof b));
	TRY(usc__vf_get_ints(v, in, "dimensions", true, &nd, &d));
	if (nd != 1)
		return usc__vf_bad(v, in, "has %zu dimensions, expected one",
				   nd);
	TRY(usc__vf_check_dim_list(v, in, "dimensions", d, nd, o->rank,
				   "the operand", false));
	return usc__vf_check_scalar_comp(v, in, "to_apply", 2 * n);
}

/* ------------------------------------------------------------- driver */

static usc_status check_instr(const usc__vctx *v, const usc_hlo_instr *in,
			      size_t nparams)
{
	switch (in->opcode) {
	case USC_HLO_OP_PARAMETER:
		return check_parameter(v, in, nparams);
	case USC_HLO_OP_CONSTANT:
		return in->literal ? check_literal(v, in, &in->shape, in->literal)
				   : USC_OK;
	case USC_HLO_OP_MAP:
		return usc__vf_check_map(v, in);
	case USC_HLO_OP_BROADCAST:
		return usc__vf_check_broadcast(v, in);
	case USC_HLO_OP_RESHAPE:
		return usc__vf_check_reshape(v, in);
	case USC_HLO_OP_TRANSPOSE:
		return usc__vf_check_transpose(v, in);
	case USC_HLO_OP_SLICE:
		return usc__vf_check_slice(v, in);
	case USC_HLO_OP_DYNAMIC_SLICE:
		return usc__vf_check_dynamic_slice(v, in);
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
		return usc__vf_check_dynamic_update_slice(v, in);
	case USC_HLO_OP_CONCATENATE:
		return usc__vf_check_concatenate(v, in);
	case USC_HLO_OP_PAD:
		return usc__vf_check_pad(v, in);
	case USC_HLO_OP_IOTA:
		return usc__vf_check_iota(v, in);
	case USC_HLO_OP_REVERSE:
		return usc__vf_check_reverse(v, in);
	case USC_HLO_OP_REDUCE:
		return usc__vf_check_reduce(v, in);
	case USC_HLO_OP_REDUCE_WINDOW:
		return usc__vf_check_reduce_window(v, in);
	case USC_HLO_OP_SELECT_AND_SCATTER:
		return usc__vf_check_select_and_scatter(v, in);
	case USC_HLO_OP_DOT:
		return usc__vf_check_dot(v, in);
	case USC_HLO_OP_CONVOLUTION:
		return usc__vf_check_convolution(v, in);
	case USC_HLO_OP_GATHER:
		return usc__vf_check_gather(v, in);
	case USC_HLO_OP_SCATTER:
		return usc__vf_check_scatter(v, in);
	case USC_HLO_OP_TUPLE:
		return check_tuple(v, in);
	case USC_HLO_OP_GET_TUPLE_ELEMENT:
		return check_gte(v, in);
	case USC_HLO_OP_FUSION:
		return usc__vf_check_call(v, in, "calls");
	case USC_HLO_OP_CALL:
		return usc__vf_check_call(v, in, "to_apply");
	case USC_HLO_OP_SORT:
		return check_sort(v, in);
	default:
		break;
	}
	if (usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE)
		return usc__vf_check_elementwise(v, in);
	/* Every other op is accepted as written (docs/kernels.md). */
	return USC_OK;
}

/*
 * Instructions may name operands defined later in the text, so the text's
 * order proves nothing: a depth-first walk over the operand edges finds
 * any cycle (an instruction that depends on itself), which no evaluation
 * order could satisfy.
 */
static usc_status check_acyclic(usc__vctx *v, const usc_hlo_computation *c)
{
	size_t n = c->instr_count, i;
	unsigned char *state = usc__calloc(n ? n : 1, 1);
	size_t *stack = usc__calloc(n ? n : 1, sizeof *stack);
	size_t *next = usc__calloc(n ? n : 1, sizeof *next);
	usc_status st = USC_OK;

	if (!state || !stack || !next) {
		st = usc__fail(v->err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n && st == USC_OK; i++) {
		size_t sp = 0;

		if (state[i])
			continue;
		stack[sp++] = i;
		state[i] = 1;
		while (sp && st == USC_OK) {
			size_t top = stack[sp - 1];
			const usc_hlo_instr *in = c->instrs[top];

			if (next[top] < in->operand_count) {
				const usc_hlo_instr *o =
					in->operands[next[top]++];

				if (state[o->index] == 1)
					st = usc__vf_bad(
						v, in,
						"uses '%s', which depends on "
						"it: the computation has a "
						"cycle",
						o->name);
				else if (state[o->index] == 0) {
					state[o->index] = 1;
					stack[sp++] = o->index;
				}
			} else {
				state[top] = 2;
				sp--;
			}
		}
	}
done:
	usc__free(state);
	usc__free(stack);
	usc__free(next);
	return st;
}

static usc_status verify_comp(usc__vctx *v, const usc_hlo_computation *c)
{
	char a[SHAPE_BUF], b[SHAPE_BUF];
	size_t i, nparams;

	v->comp = c;
	TRY(check_acyclic(v, c));
	nparams = usc__vf_param_count(c);
	for (i = 0; i < c->instr_count; i++)
		TRY(check_instr(v, c->instrs[i], nparams));
	if (c->root && c->has_signature &&
	    !usc__vf_same_shape(&c->result, &c->root->shape))
		return usc__vf_bad(
			v, c->root,
			"is the root with shape %s, but the "
			"computation's signature returns %s",
			usc_hlo_shape_format(&c->root->shape, a, sizeof a),
			usc_hlo_shape_format(&c->result, b, sizeof b));
	return USC_OK;
}

usc_status usc_hlo_verify_ex(const usc_hlo_module *m, const char *filename,
			     usc_error *err)
{
	usc__vctx v;
	size_t i;

	if (!m)
		return usc__fail(err, USC_EINVAL, "usc_hlo_verify: NULL module");
	v.filename = filename;
	v.module = m;
	v.comp = NULL;
	v.err = err;
	for (i = 0; i < m->computation_count; i++)
		TRY(verify_comp(&v, m->computations[i]));
	return USC_OK;
}

usc_status usc_hlo_verify(const usc_hlo_module *m, usc_error *err)
{
	return usc_hlo_verify_ex(m, NULL, err);
}

usc_status usc_hlo_verify_file(const usc_hlo_file *f, usc_error *err)
{
	size_t i;

	if (!f)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_verify_file: NULL file");
	for (i = 0; i < f->module_count; i++)
		TRY(usc_hlo_verify_ex(f->modules[i], f->filename, err));
	return USC_OK;
}

usc_status usc_hlo_verify_computation(const usc_hlo_computation *c,
				      usc_error *err)
{
	usc__vctx v;

	if (!c)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_verify_computation: NULL computation");
	v.filename = NULL;
	v.module = c->parent;
	v.comp = c;
	v.err = err;
	return verify_comp(&v, c);
}
