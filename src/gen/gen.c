/*
 * The random choices of the kernel generator (include/ulpscope/gen.h).
 *
 * A module starts from one to three parameters over two base sizes A and
 * B (rank 2 [A,B], or rank 1) and grows by steps; each step draws an op
 * family and applies it to values already made, preferring the newest
 * (so that chains form, which is what XLA fuses).  Every step keeps the
 * rules the verifier checks: operands of an elementwise op have one
 * shape and one type (a value of another type is converted first, one of
 * no matching shape is replaced by a new parameter or a broadcast
 * constant), reductions accumulate in f32 as frameworks emit them (narrow
 * values are converted up first), and arithmetic never runs on fp8 (XLA
 * has no fp8 arithmetic either: frameworks convert up), while converts to
 * and from fp8 are drawn freely.  Finally the newest values nobody uses
 * become the outputs (a tuple when there are several).
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "gen/gen_internal.h"

/* The most elements of any value: keeps evaluation fast. */
#define MAX_ELEMENTS 4096
#define MAX_PARAMS 4
#define MAX_OUTPUTS 3

static const usc_dtype default_types[] = {USC_F32, USC_BF16, USC_F16,
					  USC_F8E4M3FN, USC_F8E5M2};

usc_gen_options usc_gen_options_default(void)
{
	usc_gen_options o;

	memset(&o, 0, sizeof o);
	o.ops = 12;
	return o;
}

bool usc_gen_type_supported(usc_dtype t)
{
	for (size_t i = 0; i < USC__ARRAY_LEN(default_types); i++)
		if (default_types[i] == t)
			return true;
	return false;
}

static uint64_t below(usc__gen *g, uint64_t n)
{
	return usc_gen_rng_below(&g->rng, n);
}

static bool coin(usc__gen *g)
{
	return below(g, 2) == 0;
}

static bool is_fp8(usc_dtype t)
{
	return t == USC_F8E4M3FN || t == USC_F8E5M2;
}

static bool is_float(usc_dtype t)
{
	return usc_gen_type_supported(t);
}

static usc_dtype any_type(usc__gen *g)
{
	return g->opts.types[below(g, g->opts.type_count)];
}

static int64_t elements(const usc_hlo_instr *v)
{
	return usc_hlo_shape_elements(&v->shape);
}

/*
 * Whether a step may start from v: a float array that is not a broadcast
 * constant (XLA would fold ops on those away before fusing anything).
 */
static bool usable(const usc_hlo_instr *v)
{
	return is_float(v->shape.dtype) && v->shape.rank > 0 &&
	       !(v->opcode == USC_HLO_OP_BROADCAST &&
		 v->operands[0]->opcode == USC_HLO_OP_CONSTANT);
}

/*
 * A float value of the entry: the newest half the time (chains), else any
 * one.  NULL when there is none.
 */
static usc_hlo_instr *pick(usc__gen *g)
{
	size_t n = 0, k;

	for (size_t i = 0; i < g->count; i++)
		if (usable(g->instrs[i]))
			n++;
	if (!n)
		return NULL;
	k = coin(g) ? n - 1 : (size_t)below(g, n);
	for (size_t i = 0; i < g->count; i++)
		if (usable(g->instrs[i]) && k-- == 0)
			return g->instrs[i];
	return NULL;
}

/* Another float value of v's dims (any type), not v; NULL if none. */
static usc_hlo_instr *pick_like(usc__gen *g, const usc_hlo_instr *v)
{
	size_t n = 0, k;

	for (size_t i = 0; i < g->count; i++) {
		const usc_hlo_instr *w = g->instrs[i];

		if (w != v && is_float(w->shape.dtype) &&
		    w->shape.rank == v->shape.rank &&
		    memcmp(w->shape.dims, v->shape.dims,
			   v->shape.rank * sizeof(int64_t)) == 0)
			n++;
	}
	if (!n)
		return NULL;
	k = (size_t)below(g, n);
	for (size_t i = 0; i < g->count; i++) {
		usc_hlo_instr *w = g->instrs[i];

		if (w != v && is_float(w->shape.dtype) &&
		    w->shape.rank == v->shape.rank &&
		    memcmp(w->shape.dims, v->shape.dims,
			   v->shape.rank * sizeof(int64_t)) == 0 &&
		    k-- == 0)
			return w;
	}
	return NULL;
}

static usc_hlo_instr *convert(usc__gen *g, usc_hlo_instr *v, usc_dtype t)
{
	if (!v || v->shape.dtype == t)
		return v;
	return usc__gen_like(g, USC_HLO_OP_CONVERT, t, v, 1, &v);
}

/* v in a type arithmetic runs in (fp8 goes up to f32). */
static usc_hlo_instr *arith(usc__gen *g, usc_hlo_instr *v)
{
	return v && is_fp8(v->shape.dtype) ? convert(g, v, USC_F32) : v;
}

/* Constants every drawn type holds exactly (fp8 e4m3fn included). */
static const char *const small_constants[] = {
	"0", "0.5", "1", "-1", "2", "0.25", "1.5", "-0.75", "3", "-2"};

static usc_hlo_instr *broadcast_scalar(usc__gen *g, usc_hlo_instr *s,
				       const usc_hlo_instr *like)
{
	usc_hlo_instr *b;

	if (!s || !like)
		return NULL;
	b = usc__gen_like(g, USC_HLO_OP_BROADCAST, s->shape.dtype, like, 1,
			  &s);
	usc__gen_attr_ints(g, b, "dimensions", NULL, 0);
	return b;
}

static usc_hlo_instr *splat(usc__gen *g, usc_dtype t, const char *text,
			    const usc_hlo_instr *like)
{
	return broadcast_scalar(g, usc__gen_constant(g, t, text), like);
}

/*
 * A new value of type t and dims: a parameter while there are fewer than
 * MAX_PARAMS (half the time), else a broadcast constant.
 */
static usc_hlo_instr *fresh(usc__gen *g, usc_dtype t, size_t rank,
			    const int64_t *dims)
{
	usc_hlo_instr *p, *b;
	const char *c;

	if (g->params < MAX_PARAMS && coin(g))
		return usc__gen_parameter(g, t, rank, dims);
	c = small_constants[below(g, USC__ARRAY_LEN(small_constants))];
	p = usc__gen_constant(g, t, c);
	b = usc__gen_instr(g, USC_HLO_OP_BROADCAST, t, rank, dims, 1, &p);
	usc__gen_attr_ints(g, b, "dimensions", NULL, 0);
	return b;
}

/* A partner of a for an elementwise op: same dims and type. */
static usc_hlo_instr *partner(usc__gen *g, usc_hlo_instr *a)
{
	usc_hlo_instr *b = coin(g) ? pick_like(g, a) : NULL;

	if (!b)
		b = fresh(g, a->shape.dtype, a->shape.rank, a->shape.dims);
	return convert(g, b, a->shape.dtype);
}

/* ------------------------------------------------------------- the steps */

static const usc_hlo_opcode unary_ops[] = {
	USC_HLO_OP_EXPONENTIAL, USC_HLO_OP_LOG, USC_HLO_OP_TANH,
	USC_HLO_OP_SINE, USC_HLO_OP_COSINE, USC_HLO_OP_SQRT,
	USC_HLO_OP_RSQRT, USC_HLO_OP_LOGISTIC, USC_HLO_OP_EXPONENTIAL_MINUS_ONE,
	USC_HLO_OP_LOG_PLUS_ONE, USC_HLO_OP_NEGATE, USC_HLO_OP_ABS,
	USC_HLO_OP_ERF, USC_HLO_OP_CBRT, USC_HLO_OP_TAN, USC_HLO_OP_FLOOR,
	USC_HLO_OP_CEIL, USC_HLO_OP_SIGN, USC_HLO_OP_ROUND_NEAREST_EVEN};

static const usc_hlo_opcode binary_ops[] = {
	USC_HLO_OP_ADD, USC_HLO_OP_SUBTRACT, USC_HLO_OP_MULTIPLY,
	USC_HLO_OP_DIVIDE, USC_HLO_OP_MAXIMUM, USC_HLO_OP_MINIMUM,
	USC_HLO_OP_POWER, USC_HLO_OP_ATAN2};

static const char *const directions[] = {"LT", "LE", "GT", "GE", "EQ", "NE"};

static usc_hlo_instr *step_unary(usc__gen *g)
{
	usc_hlo_instr *v = arith(g, pick(g));
	usc_hlo_opcode op = unary_ops[below(g, USC__ARRAY_LEN(unary_ops))];

	if (!v)
		return NULL;
	return usc__gen_like(g, op, v->shape.dtype, v, 1, &v);
}

static usc_hlo_instr *step_binary(usc__gen *g)
{
	usc_hlo_instr *ops[2];
	usc_hlo_opcode op = binary_ops[below(g, USC__ARRAY_LEN(binary_ops))];

	ops[0] = arith(g, pick(g));
	if (!ops[0])
		return NULL;
	ops[1] = partner(g, ops[0]);
	if (coin(g)) {
		usc_hlo_instr *t = ops[0];

		ops[0] = ops[1];
		ops[1] = t;
	}
	return usc__gen_like(g, op, ops[0] ? ops[0]->shape.dtype : USC_F32,
			     ops[0], 2, ops);
}

/* A convert to another type, and half the time back again. */
static usc_hlo_instr *step_convert(usc__gen *g)
{
	usc_hlo_instr *v = pick(g), *w;
	usc_dtype t = any_type(g);

	if (!v)
		return NULL;
	/* Another type of the list; none when the list holds one type. */
	for (size_t i = 0; i < g->opts.type_count && t == v->shape.dtype; i++)
		t = g->opts.types[(i + 1) % g->opts.type_count];
	if (t == v->shape.dtype)
		return NULL;
	w = convert(g, v, t);
	return coin(g) ? convert(g, w, v->shape.dtype) : w;
}

static usc_hlo_instr *compare(usc__gen *g, usc_hlo_instr *a,
			      usc_hlo_instr *b)
{
	usc_hlo_instr *ops[2] = {a, b};
	usc_hlo_instr *c = usc__gen_like(g, USC_HLO_OP_COMPARE, USC_PRED, a, 2,
					 ops);

	usc__gen_attr_ident(g, c, "direction",
			    directions[below(g, USC__ARRAY_LEN(directions))]);
	return c;
}

static usc_hlo_instr *step_select(usc__gen *g)
{
	usc_hlo_instr *a = arith(g, pick(g)), *b, *ops[3];

	if (!a)
		return NULL;
	b = partner(g, a);
	ops[0] = compare(g, a, b);
	ops[1] = coin(g) ? a : b;
	ops[2] = ops[1] == a ? b : a;
	return usc__gen_like(g, USC_HLO_OP_SELECT, a->shape.dtype, a, 3, ops);
}

static usc_hlo_instr *step_clamp(usc__gen *g)
{
	static const char *const lo[] = {"-1", "-0.5", "0", "-2"};
	static const char *const hi[] = {"1", "0.5", "2", "3"};
	usc_hlo_instr *v = arith(g, pick(g)), *ops[3];
	usc_dtype t;

	if (!v)
		return NULL;
	t = v->shape.dtype;
	ops[0] = splat(g, t, lo[below(g, 4)], v);
	ops[1] = v;
	ops[2] = splat(g, t, hi[below(g, 4)], v);
	return usc__gen_like(g, USC_HLO_OP_CLAMP, t, v, 3, ops);
}

/* Rank 1 [n] to [n, B] or [A, n]; rank 2 [x, y] to [x, y, 2]. */
static usc_hlo_instr *step_broadcast(usc__gen *g, int64_t A, int64_t B)
{
	usc_hlo_instr *v = pick(g), *b;
	int64_t dims[3], map[2];
	size_t rank;

	if (!v)
		return NULL;
	if (v->shape.rank == 1) {
		rank = 2;
		if (coin(g)) {
			dims[0] = v->shape.dims[0];
			dims[1] = B;
			map[0] = 0;
		} else {
			dims[0] = A;
			dims[1] = v->shape.dims[0];
			map[0] = 1;
		}
	} else if (v->shape.rank == 2) {
		rank = 3;
		dims[0] = v->shape.dims[0];
		dims[1] = v->shape.dims[1];
		dims[2] = 2;
		map[0] = 0;
		map[1] = 1;
	} else {
		return NULL;
	}
	if (dims[0] * dims[1] * (rank == 3 ? 2 : 1) > MAX_ELEMENTS)
		return NULL;
	b = usc__gen_instr(g, USC_HLO_OP_BROADCAST, v->shape.dtype, rank, dims,
			   1, &v);
	usc__gen_attr_ints(g, b, "dimensions", map, v->shape.rank);
	return b;
}

/*
 * A reduce over one dimension (or all of a rank-2 value's), accumulating
 * in f32 from a converted operand, half the time converted back.
 */
static usc_hlo_instr *step_reduce(usc__gen *g)
{
	static const usc_hlo_opcode body_ops[] = {
		USC_HLO_OP_ADD, USC_HLO_OP_MAXIMUM, USC_HLO_OP_MINIMUM};
	static const char *const inits[] = {"0", "-inf", "inf"};
	usc_hlo_instr *v = pick(g), *x, *ops[2], *r;
	size_t k = (size_t)below(g, 3), rank, nred, j = 0;
	int64_t red[3], dims[3];
	usc_dtype orig;

	if (!v)
		return NULL;
	orig = v->shape.dtype;
	rank = v->shape.rank;
	if (rank >= 2 && below(g, 4) == 0) {
		/* Every dimension but the first: outputs keep rank >= 1. */
		nred = rank - 1;
		for (size_t i = 0; i < nred; i++)
			red[i] = (int64_t)i + 1;
	} else {
		nred = 1;
		red[0] = (int64_t)below(g, rank);
	}
	for (size_t i = 0; i < rank; i++) {
		bool reduced = false;

		for (size_t q = 0; q < nred; q++)
			reduced |= red[q] == (int64_t)i;
		if (!reduced)
			dims[j++] = v->shape.dims[i];
	}
	if (j == 0)
		return NULL; /* outputs keep rank >= 1 */
	x = convert(g, v, USC_F32);
	ops[0] = x;
	ops[1] = usc__gen_constant(g, USC_F32, inits[k]);
	r = usc__gen_instr(g, USC_HLO_OP_REDUCE, USC_F32, j, dims, 2, ops);
	usc__gen_attr_ints(g, r, "dimensions", red, nred);
	usc__gen_attr_apply(g, r, usc__gen_binary_comp(g, body_ops[k],
						       USC_F32));
	return coin(g) ? convert(g, r, orig) : r;
}

/*
 * A reduce-window along the last dimension, window 2 or 3, stride 1,
 * padded so the shape stays (a running sum or maximum), in f32.
 */
static usc_hlo_instr *step_reduce_window(usc__gen *g)
{
	usc_hlo_instr *v = pick(g), *x, *ops[2], *r;
	usc_hlo_window_dim w[3];
	bool sum;
	int64_t size;
	size_t rank;

	if (!v)
		return NULL;
	rank = v->shape.rank;
	sum = coin(g);
	size = 2 + (int64_t)below(g, 2);
	for (size_t i = 0; i < rank; i++) {
		w[i].size = 1;
		w[i].stride = 1;
		w[i].pad_lo = 0;
		w[i].pad_hi = 0;
		w[i].lhs_dilate = 1;
		w[i].rhs_dilate = 1;
		w[i].rhs_reversal = false;
	}
	w[rank - 1].size = size;
	w[rank - 1].pad_lo = (size - 1) / 2;
	w[rank - 1].pad_hi = size - 1 - (size - 1) / 2;
	x = convert(g, v, USC_F32);
	ops[0] = x;
	ops[1] = usc__gen_constant(g, USC_F32, sum ? "0" : "-inf");
	r = usc__gen_like(g, USC_HLO_OP_REDUCE_WINDOW, USC_F32, v, 2, ops);
	usc__gen_attr_window(g, r, w, rank);
	usc__gen_attr_apply(g, r, usc__gen_binary_comp(
					  g, sum ? USC_HLO_OP_ADD
						 : USC_HLO_OP_MAXIMUM,
					  USC_F32));
	return coin(g) ? convert(g, r, v->shape.dtype) : r;
}

/* The first rank-2 float value whose dimension d is k, or NULL. */
static usc_hlo_instr *find_dim(usc__gen *g, const usc_hlo_instr *not,
			       int64_t k, int64_t *which)
{
	for (size_t i = g->count; i-- > 0;) {
		usc_hlo_instr *w = g->instrs[i];

		if (w == not || !is_float(w->shape.dtype) || w->shape.rank != 2)
			continue;
		for (int64_t d = 0; d < 2; d++)
			if (w->shape.dims[d] == k) {
				*which = d;
				return w;
			}
	}
	return NULL;
}

/*
 * A dot [M,K] x [K,N] (or [N,K], contracting its dimension 1) with an f32
 * result: operands of f32 stay, bf16 and f16 operands of one type stay
 * that type (the dot then accumulates them in f32, as with
 * preferred_element_type=f32), anything else goes to f32.
 */
static usc_hlo_instr *step_dot(usc__gen *g, int64_t A, int64_t B)
{
	usc_hlo_instr *lhs = pick(g), *rhs, *ops[2], *d;
	int64_t lc = 1, rc = 0, K, dims[2];
	usc_dtype t;

	if (!lhs || lhs->shape.rank != 2)
		return NULL;
	K = lhs->shape.dims[1];
	rhs = find_dim(g, lhs, K, &rc);
	if (!rhs) {
		int64_t rd[2] = {K, coin(g) ? A : B};

		rhs = fresh(g, lhs->shape.dtype, 2, rd);
		rc = 0;
	}
	if (!rhs)
		return NULL;
	t = lhs->shape.dtype;
	if (t != rhs->shape.dtype || is_fp8(t))
		t = USC_F32;
	ops[0] = convert(g, lhs, t);
	ops[1] = convert(g, rhs, t);
	dims[0] = lhs->shape.dims[0];
	dims[1] = rhs->shape.dims[1 - rc];
	if (dims[0] * dims[1] > MAX_ELEMENTS)
		return NULL;
	d = usc__gen_instr(g, USC_HLO_OP_DOT, USC_F32, 2, dims, 2, ops);
	usc__gen_attr_ints(g, d, "lhs_contracting_dims", &lc, 1);
	usc__gen_attr_ints(g, d, "rhs_contracting_dims", &rc, 1);
	return d;
}

static usc_hlo_instr *step_reshape(usc__gen *g, int64_t A, int64_t B)
{
	usc_hlo_instr *v = pick(g);
	int64_t dims[2];
	size_t rank;

	if (!v)
		return NULL;
	if (v->shape.rank == 1) {
		int64_t n = v->shape.dims[0];

		rank = 2;
		if (n == A * B) {
			dims[0] = A;
			dims[1] = B;
		} else if (n % 2 == 0) {
			dims[0] = n / 2;
			dims[1] = 2;
		} else {
			dims[0] = 1;
			dims[1] = n;
		}
	} else if (v->shape.rank == 2 && coin(g)) {
		rank = 1;
		dims[0] = elements(v);
	} else if (v->shape.rank == 2) {
		rank = 2;
		dims[0] = v->shape.dims[1];
		dims[1] = v->shape.dims[0];
	} else {
		rank = 2;
		dims[0] = v->shape.dims[0];
		dims[1] = elements(v) / dims[0];
	}
	return usc__gen_instr(g, USC_HLO_OP_RESHAPE, v->shape.dtype, rank, dims,
			      1, &v);
}

static usc_hlo_instr *step_transpose(usc__gen *g)
{
	usc_hlo_instr *v = pick(g), *t;
	int64_t perm[3], dims[3];
	size_t rank;

	if (!v || v->shape.rank < 2)
		return NULL;
	rank = v->shape.rank;
	for (size_t i = 0; i < rank; i++)
		perm[i] = (int64_t)(rank - 1 - i);
	if (rank == 3 && coin(g)) {
		perm[0] = 1;
		perm[1] = 0;
		perm[2] = 2;
	}
	for (size_t i = 0; i < rank; i++)
		dims[i] = v->shape.dims[perm[i]];
	t = usc__gen_instr(g, USC_HLO_OP_TRANSPOSE, v->shape.dtype, rank, dims,
			   1, &v);
	usc__gen_attr_ints(g, t, "dimensions", perm, rank);
	return t;
}

static usc_hlo_instr *slice(usc__gen *g, usc_hlo_instr *v, size_t d,
			    int64_t start, int64_t limit, int64_t stride)
{
	usc_hlo_slice_dim s[3];
	int64_t dims[3];
	usc_hlo_instr *r;

	for (size_t i = 0; i < v->shape.rank; i++) {
		s[i].start = 0;
		s[i].limit = v->shape.dims[i];
		s[i].stride = 1;
		s[i].has_stride = false;
		dims[i] = v->shape.dims[i];
	}
	s[d].start = start;
	s[d].limit = limit;
	s[d].stride = stride;
	s[d].has_stride = stride != 1;
	dims[d] = (limit - start + stride - 1) / stride;
	r = usc__gen_instr(g, USC_HLO_OP_SLICE, v->shape.dtype, v->shape.rank,
			   dims, 1, &v);
	usc__gen_attr_slice(g, r, s, v->shape.rank);
	return r;
}

static usc_hlo_instr *concatenate(usc__gen *g, usc_hlo_instr *a,
				  usc_hlo_instr *b, size_t d)
{
	usc_hlo_instr *ops[2] = {a, b}, *c;
	int64_t dims[3], dd = (int64_t)d;

	if (!a || !b)
		return NULL;
	for (size_t i = 0; i < a->shape.rank; i++)
		dims[i] = a->shape.dims[i];
	dims[d] += b->shape.dims[d];
	c = usc__gen_instr(g, USC_HLO_OP_CONCATENATE, a->shape.dtype,
			   a->shape.rank, dims, 2, ops);
	usc__gen_attr_ints(g, c, "dimensions", &dd, 1);
	return c;
}

/*
 * A slice along a dimension of size >= 2: a half, or every other
 * element; a third of the time the two halves are concatenated back in
 * the other order (a rotation: the shape stays).
 */
static usc_hlo_instr *step_slice(usc__gen *g)
{
	usc_hlo_instr *v = pick(g);
	size_t d;
	int64_t n, h;

	if (!v)
		return NULL;
	d = (size_t)below(g, v->shape.rank);
	n = v->shape.dims[d];
	if (n < 2)
		return NULL;
	h = n / 2;
	switch (below(g, 3)) {
	case 0:
		return slice(g, v, d, 0, n, 2);
	case 1:
		return coin(g) ? slice(g, v, d, 0, h, 1) : slice(g, v, d, h, n, 1);
	default:
		return concatenate(g, slice(g, v, d, h, n, 1),
				   slice(g, v, d, 0, h, 1), d);
	}
}

static usc_hlo_instr *step_concatenate(usc__gen *g)
{
	usc_hlo_instr *a = pick(g), *b;
	size_t d;

	if (!a || 2 * elements(a) > MAX_ELEMENTS)
		return NULL;
	d = (size_t)below(g, a->shape.rank);
	b = partner(g, a);
	return concatenate(g, a, b, d);
}

/*
 * An iota mask: rank 2, iota along each dimension compared (a triangle,
 * a diagonal); rank 1, the iota against a constant index (a prefix).
 * The masked-out elements get a constant (0, -inf, a small number).
 */
static usc_hlo_instr *step_iota_mask(usc__gen *g)
{
	static const char *const fill[] = {"0", "-inf", "-1", "2"};
	usc_hlo_instr *v = arith(g, pick(g)), *ops[3], *i0, *i1, *mask;
	char idx[32];

	if (!v || v->shape.rank > 2)
		return NULL;
	i0 = usc__gen_like(g, USC_HLO_OP_IOTA, USC_S32, v, 0, NULL);
	usc__gen_attr_int(g, i0, "iota_dimension", 0);
	if (v->shape.rank == 2) {
		i1 = usc__gen_like(g, USC_HLO_OP_IOTA, USC_S32, v, 0, NULL);
		usc__gen_attr_int(g, i1, "iota_dimension", 1);
	} else {
		snprintf(idx, sizeof idx, "%lld",
			 (long long)below(g, (uint64_t)v->shape.dims[0] + 1));
		i1 = splat(g, USC_S32, idx, v);
	}
	mask = compare(g, i0, i1);
	ops[0] = mask;
	ops[1] = v;
	ops[2] = splat(g, v->shape.dtype, fill[below(g, 4)], v);
	if (coin(g)) {
		usc_hlo_instr *t = ops[1];

		ops[1] = ops[2];
		ops[2] = t;
	}
	return usc__gen_like(g, USC_HLO_OP_SELECT, v->shape.dtype, v, 3, ops);
}

enum {
	STEP_UNARY,
	STEP_BINARY,
	STEP_CONVERT,
	STEP_SELECT,
	STEP_CLAMP,
	STEP_BROADCAST,
	STEP_REDUCE,
	STEP_REDUCE_WINDOW,
	STEP_DOT,
	STEP_RESHAPE,
	STEP_TRANSPOSE,
	STEP_SLICE,
	STEP_CONCATENATE,
	STEP_IOTA_MASK,
	STEP_COUNT
};

/* Relative weights: chains of elementwise ops dominate, as in models. */
static const unsigned step_weight[STEP_COUNT] = {
	[STEP_UNARY] = 8,     [STEP_BINARY] = 8,	[STEP_CONVERT] = 4,
	[STEP_SELECT] = 2,    [STEP_CLAMP] = 1,		[STEP_BROADCAST] = 2,
	[STEP_REDUCE] = 3,    [STEP_REDUCE_WINDOW] = 1, [STEP_DOT] = 2,
	[STEP_RESHAPE] = 1,   [STEP_TRANSPOSE] = 1,	[STEP_SLICE] = 1,
	[STEP_CONCATENATE] = 1, [STEP_IOTA_MASK] = 2};

static usc_hlo_instr *step(usc__gen *g, int64_t A, int64_t B)
{
	unsigned total = 0, r;
	int k = 0;

	for (int i = 0; i < STEP_COUNT; i++)
		total += step_weight[i];
	r = (unsigned)below(g, total);
	while (r >= step_weight[k])
		r -= step_weight[k++];
	switch (k) {
	case STEP_UNARY: return step_unary(g);
	case STEP_BINARY: return step_binary(g);
	case STEP_CONVERT: return step_convert(g);
	case STEP_SELECT: return step_select(g);
	case STEP_CLAMP: return step_clamp(g);
	case STEP_BROADCAST: return step_broadcast(g, A, B);
	case STEP_REDUCE: return step_reduce(g);
	case STEP_REDUCE_WINDOW: return step_reduce_window(g);
	case STEP_DOT: return step_dot(g, A, B);
	case STEP_RESHAPE: return step_reshape(g, A, B);
	case STEP_TRANSPOSE: return step_transpose(g);
	case STEP_SLICE: return step_slice(g);
	case STEP_CONCATENATE: return step_concatenate(g);
	default: return step_iota_mask(g);
	}
}

/* ----------------------------------------------------------- the module */

static usc_status check_options(const usc_gen_options *o, usc_error *err)
{
	if (o->ops < USC_GEN_MIN_OPS || o->ops > USC_GEN_MAX_OPS)
		return usc__fail(err, USC_EINVAL,
				 "gen: ops must be from %d to %d, got %zu",
				 USC_GEN_MIN_OPS, USC_GEN_MAX_OPS, o->ops);
	if (o->type_count > USC_GEN_MAX_TYPES)
		return usc__fail(err, USC_EINVAL,
				 "gen: at most %d types, got %zu",
				 USC_GEN_MAX_TYPES, o->type_count);
	for (size_t i = 0; i < o->type_count; i++)
		if (!usc_gen_type_supported(o->types[i]))
			return usc__fail(
				err, USC_EINVAL,
				"gen: type %s is not one the generator draws; "
				"expected f32, bf16, f16, f8e4m3fn or f8e5m2",
				usc_dtype_name(o->types[i]));
	return USC_OK;
}

/*
 * The worst step makes a dozen instructions (a mask: two iotas, a
 * compare, a constant and its broadcast, a convert, the select); the
 * capacity allows 16 per step plus the parameters and the root.
 */
#define INSTRS_PER_STEP 16

static bool generate(usc__gen *g)
{
	static const int64_t sizes_a[] = {2, 4, 8, 16};
	static const int64_t sizes_b[] = {4, 8, 16, 32};
	int64_t A = sizes_a[below(g, 4)], B = sizes_b[below(g, 4)];
	size_t nparams = 1 + (size_t)below(g, 3);
	usc_hlo_instr *outs[MAX_OUTPUTS];
	size_t nout = 0, made = 0;

	for (size_t i = 0; i < nparams; i++) {
		int64_t dims[2] = {A, B};

		switch (i == 0 ? 0 : below(g, 3)) {
		case 0:
			usc__gen_parameter(g, any_type(g), 2, dims);
			break;
		case 1:
			usc__gen_parameter(g, any_type(g), 1, &dims[0]);
			break;
		default:
			usc__gen_parameter(g, any_type(g), 1, &dims[1]);
			break;
		}
	}
	/*
	 * A step that does not apply (a dot of a rank-1 value) makes
	 * nothing; it is drawn again, a bounded number of times.
	 */
	for (size_t tries = 0; made < g->opts.ops && tries < 8 * g->opts.ops &&
			       !g->oom;
	     tries++)
		if (g->cap - g->count >= INSTRS_PER_STEP && step(g, A, B))
			made++;
	if (g->oom)
		return false;
	if (!made && !step_unary(g))
		return false;
	/* The newest float values nobody uses are the outputs. */
	for (size_t i = g->count; i-- > 0 && nout < MAX_OUTPUTS;) {
		usc_hlo_instr *in = g->instrs[i];

		if (!g->users[i] && is_float(in->shape.dtype) &&
		    in->opcode != USC_HLO_OP_PARAMETER &&
		    in->opcode != USC_HLO_OP_CONSTANT && in->shape.rank > 0)
			outs[nout++] = in;
	}
	if (!nout)
		return false;
	return usc__gen_finish(g, outs, nout);
}

usc_status usc_gen_module(const usc_gen_options *opts, usc_hlo_file **out,
			  usc_error *err)
{
	usc__hlo_arena arena = {NULL, NULL, 0};
	usc__gen g;
	usc_status st;
	char name[48];

	if (!opts || !out)
		return usc__fail(err, USC_EINVAL,
				 "usc_gen_module: NULL argument");
	*out = NULL;
	st = check_options(opts, err);
	if (st != USC_OK)
		return st;
	memset(&g, 0, sizeof g);
	g.opts = *opts;
	if (!g.opts.type_count) {
		g.opts.type_count = USC__ARRAY_LEN(default_types);
		memcpy(g.opts.types, default_types, sizeof default_types);
	}
	usc_gen_rng_seed(&g.rng, opts->seed);
	g.arena = &arena;
	g.cap = (g.opts.ops + 1) * INSTRS_PER_STEP + MAX_PARAMS + 2;
	g.users = usc__calloc(g.cap, sizeof *g.users);
	g.file = usc__hlo_arena_calloc(&arena, 1, sizeof *g.file);
	g.module = usc__hlo_arena_calloc(&arena, 1, sizeof *g.module);
	g.entry = usc__hlo_arena_calloc(&arena, 1, sizeof *g.entry);
	g.instrs = usc__hlo_arena_calloc(&arena, g.cap, sizeof *g.instrs);
	snprintf(name, sizeof name, "gen_%llu", (unsigned long long)opts->seed);
	if (g.users && g.file && g.module && g.entry && g.instrs) {
		g.module->name = usc__hlo_arena_strndup(&arena, name,
							strlen(name));
		g.file->filename = usc__hlo_arena_strndup(&arena, "<gen>", 5);
		g.file->modules = usc__hlo_arena_calloc(&arena, 1,
							sizeof *g.file->modules);
		g.entry->name = usc__hlo_arena_strndup(&arena, "main", 4);
	}
	if (!g.users || !g.file || !g.module || !g.entry || !g.instrs ||
	    !g.module->name || !g.file->filename || !g.file->modules ||
	    !g.entry->name || !generate(&g)) {
		usc__free(g.users);
		usc__hlo_arena_free(&arena);
		return usc__fail(err, USC_ENOMEM, "gen: out of memory");
	}
	usc__free(g.users);
	g.module->has_header = true;
	g.entry->is_entry = true;
	g.entry->explicit_entry = true;
	g.entry->explicit_root = true;
	g.entry->parent = g.module;
	g.file->modules[0] = g.module;
	g.file->module_count = 1;
	/* The arena's bookkeeping moves into the file it owns. */
	g.file->arena = arena;
	*out = g.file;
	return USC_OK;
}

usc_status usc_gen_text(const usc_gen_options *opts, char **text_out,
			size_t *len_out, usc_error *err)
{
	usc_hlo_print_options po = usc_hlo_print_options_default();
	usc_hlo_file *f;
	usc_status st;

	if (!text_out)
		return usc__fail(err, USC_EINVAL, "usc_gen_text: NULL argument");
	st = usc_gen_module(opts, &f, err);
	if (st != USC_OK)
		return st;
	po.print_metadata = false;
	st = usc_hlo_module_print(usc_hlo_file_module(f, 0), &po, text_out,
				  len_out, err);
	usc_hlo_file_destroy(f);
	return st;
}
