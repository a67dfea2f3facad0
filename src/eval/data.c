/*
 * Data movement: every op here is an index map from an output index to
 * (operand, flat index) or to "padding", shared by all domains.  Values
 * are copied through the domain's copy, never computed.
 */
#include "eval_internal.h"

#include <string.h>

#define MAXR USC_TENSOR_MAX_RANK

typedef struct map_ctx {
	const usc_hlo_instr *in;
	const int64_t *odims;
	size_t orank;
	int64_t v[MAXR];      /* per-op vector: starts, permutation... */
	int64_t w[MAXR];      /* a second one: strides, sizes... */
	const int64_t *list;  /* an attribute's ints */
	size_t nlist;
	int64_t dim;          /* concatenate's dimension */
	int64_t om2m[MAXR];   /* bitcast: minor-to-major of the output */
	int64_t im2m[MAXR];   /* and of the operand */
} map_ctx;

typedef bool (*map_fn)(map_ctx *c, const int64_t *o, size_t *src,
		       size_t *flat);

static const usc_hlo_shape *opshape(const map_ctx *c, size_t k)
{
	return &c->in->operands[k]->shape;
}

static bool map_broadcast(map_ctx *c, const int64_t *o, size_t *src,
			  size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	int64_t idx[MAXR];
	size_t i;

	for (i = 0; i < s->rank; i++)
		idx[i] = o[c->list[i]];
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

static bool map_transpose(map_ctx *c, const int64_t *o, size_t *src,
			  size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	int64_t idx[MAXR];
	size_t i;

	/* Output dimension i is operand dimension perm[i]. */
	for (i = 0; i < s->rank; i++)
		idx[c->list[i]] = o[i];
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

/* slice and dynamic-slice: start v, stride w. */
static bool map_slice(map_ctx *c, const int64_t *o, size_t *src, size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	int64_t idx[MAXR];
	size_t i;

	for (i = 0; i < s->rank; i++)
		idx[i] = c->v[i] + o[i] * c->w[i];
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

static bool map_dus(map_ctx *c, const int64_t *o, size_t *src, size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0), *u = opshape(c, 1);
	int64_t idx[MAXR];
	size_t i;

	for (i = 0; i < s->rank; i++) {
		idx[i] = o[i] - c->v[i];
		if (idx[i] < 0 || idx[i] >= u->dims[i]) {
			*src = 0;
			*flat = usc__ravel(o, s->dims, s->rank);
			return true;
		}
	}
	*src = 1;
	*flat = usc__ravel(idx, u->dims, u->rank);
	return true;
}

static bool map_concat(map_ctx *c, const int64_t *o, size_t *src,
		       size_t *flat)
{
	int64_t idx[MAXR], pos = o[c->dim];
	size_t k;

	memcpy(idx, o, c->orank * sizeof *idx);
	for (k = 0; k < c->in->operand_count; k++) {
		const usc_hlo_shape *s = opshape(c, k);

		if (pos < s->dims[c->dim]) {
			idx[c->dim] = pos;
			*src = k;
			*flat = usc__ravel(idx, s->dims, s->rank);
			return true;
		}
		pos -= s->dims[c->dim];
	}
	*src = 0;
	*flat = 0;
	return true;
}

static bool map_pad(map_ctx *c, const int64_t *o, size_t *src, size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	const usc_hlo_attr *a = usc_hlo_instr_attr(c->in, "padding");
	int64_t idx[MAXR];
	size_t i;

	for (i = 0; i < s->rank; i++) {
		int64_t t = o[i] - a->pad[i].lo, step = a->pad[i].interior + 1;

		if (t < 0 || t % step != 0 || t / step >= s->dims[i])
			return false;
		idx[i] = t / step;
	}
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

static bool map_reverse(map_ctx *c, const int64_t *o, size_t *src,
			size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	int64_t idx[MAXR];
	size_t i;

	memcpy(idx, o, s->rank * sizeof *idx);
	for (i = 0; i < c->nlist; i++)
		idx[c->list[i]] = s->dims[c->list[i]] - 1 - o[c->list[i]];
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

/*
 * bitcast: the same physical buffer read through two layouts.  The output
 * index becomes a physical offset under the output's minor-to-major
 * order, which becomes an operand index under the operand's.
 */
static bool map_bitcast(map_ctx *c, const int64_t *o, size_t *src,
			size_t *flat)
{
	const usc_hlo_shape *s = opshape(c, 0);
	int64_t idx[MAXR];
	size_t off = 0, stride = 1, k;

	for (k = 0; k < c->orank; k++) {
		int64_t d = c->om2m[k];

		off += (size_t)o[d] * stride;
		stride *= (size_t)c->odims[d];
	}
	for (k = 0; k < s->rank; k++) {
		int64_t d = c->im2m[k];

		idx[d] = (int64_t)(off % (size_t)s->dims[d]);
		off /= (size_t)s->dims[d];
	}
	*src = 0;
	*flat = usc__ravel(idx, s->dims, s->rank);
	return true;
}

/*
 * The minor-to-major order of a layout "1,0" or "1,0:T(8,128)" (tiling
 * does not change the logical-to-linear order of a bitcast's elements
 * as XLA's bitcast reads them only when it is absent, so a tiled layout
 * is refused).  NULL or "" is the default, rank-1 ... 0.
 */
static bool parse_m2m(const char *layout, size_t rank, int64_t *m2m)
{
	size_t k = 0, i;
	const char *p = layout;
	bool seen[MAXR] = {false};

	if (!layout || !*layout) {
		for (i = 0; i < rank; i++)
			m2m[i] = (int64_t)(rank - 1 - i);
		return true;
	}
	while (*p && *p != ':') {
		int64_t v = 0;

		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (*p++ - '0');
		if (k >= rank || v < 0 || (size_t)v >= rank || seen[v])
			return false;
		seen[v] = true;
		m2m[k++] = v;
		if (*p == ',')
			p++;
	}
	if (*p == ':')
		return false;
	return k == rank;
}

/*
 * Reads an operand element as an index through the evaluator's domain
 * (ctx: a usc__operand_reader).
 */
usc_status usc__read_operand_index(void *ctx, size_t k, size_t flat,
				   int64_t *v, usc_error *err)
{
	const usc__operand_reader *r = ctx;
	const usc__ebuf *b = r->ops[k].leaves[0];

	return r->ev->dom->to_index(r->ev->dstate, b->dtype,
				    USC__VAL(r->ev, b, flat), v, err);
}

static usc_status clamp_starts(map_ctx *c, usc__index_read_fn read,
			       void *ctx, size_t first_op,
			       const int64_t *sizes, const usc_hlo_shape *s,
			       usc_error *err)
{
	const usc_hlo_instr *in = c->in;
	size_t i;
	usc_status st;

	/*
	 * Start indices come as rank scalars (or, in old HLO, one vector);
	 * each is clamped into [0, dim - size], as XLA specifies.
	 */
	for (i = 0; i < s->rank; i++) {
		size_t k, at;
		int64_t v;

		if (in->operand_count == first_op + 1 &&
		    (size_t)usc_hlo_shape_elements(
			    &in->operands[first_op]->shape) == s->rank) {
			k = first_op;
			at = i;
		} else if (first_op + i < in->operand_count) {
			k = first_op + i;
			at = 0;
		} else {
			return usc__eval_fail(err, USC_EINVAL, in,
					      "missing start index %zu", i);
		}
		st = read(ctx, k, at, &v, err);
		if (st != USC_OK)
			return st;
		if (v > s->dims[i] - sizes[i])
			v = s->dims[i] - sizes[i];
		if (v < 0)
			v = 0;
		c->v[i] = v;
		c->w[i] = 1;
	}
	return USC_OK;
}

static usc_status rank_check(const usc_hlo_instr *in, usc_error *err)
{
	size_t k;

	if (in->shape.rank > MAXR)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in, "rank > %d",
				      MAXR);
	for (k = 0; k < in->operand_count; k++)
		if (in->operands[k]->shape.kind == USC_HLO_SHAPE_ARRAY &&
		    in->operands[k]->shape.rank > MAXR)
			return usc__eval_fail(err, USC_EUNSUPPORTED, in,
					      "rank > %d", MAXR);
	return USC_OK;
}

/*
 * A broadcast, a row of the output at a time: along the output's last
 * dimension the operand is either read in order (that dimension is the
 * operand's last one) or one element repeated (the dimension is new), so a
 * row is one copy of a run or one value copied along it, with one index
 * computation per row instead of one per element.  A broadcast that maps
 * the output's last dimension to another operand dimension goes element by
 * element.
 */
static usc_status broadcast_rows(usc_eval *ev, map_ctx *c,
				 const usc_hlo_instr *in,
				 const usc__evalue *ops, usc__ebuf *out,
				 size_t begin, size_t end, usc_error *err)
{
	const usc_hlo_shape *s = opshape(c, 0);
	const usc__ebuf *b = ops[0].leaves[0];
	size_t last = c->orank - 1, row = (size_t)c->odims[last];
	size_t vs = ev->dom->value_size, i = begin, j;
	int mapped = -1; /* the operand dimension of the last output one */
	int64_t o[MAXR];

	for (j = 0; j < s->rank; j++)
		if ((size_t)c->list[j] == last)
			mapped = (int)j;
	usc__unravel(begin, c->odims, c->orank, o);
	while (i < end) {
		size_t at = (size_t)o[last], run = row - at, src = 0, flat = 0;

		if (run > end - i)
			run = end - i;
		(void)map_broadcast(c, o, &src, &flat);
		if (mapped >= 0 && (size_t)mapped != s->rank - 1) {
			run = 1; /* a transposing broadcast */
		}
		if (flat >= b->count ||
		    (mapped >= 0 && run > b->count - flat))
			return usc__eval_fail(err, USC_EINTERNAL, in,
					      "index %zu out of %zu", flat,
					      b->count);
		if (mapped >= 0) {
			usc__copy_values(ev, USC__VAL(ev, out, i),
					 USC__VAL(ev, b, flat), run);
		} else if (!ev->dom->copy) {
			const void *v = USC__VAL(ev, b, flat);
			unsigned char *d = USC__VAL(ev, out, i);

			for (j = 0; j < run; j++)
				memcpy(d + j * vs, v, vs);
		} else {
			for (j = 0; j < run; j++)
				usc__copy_values(ev, USC__VAL(ev, out, i + j),
						 USC__VAL(ev, b, flat), 1);
		}
		i += run;
		o[last] += (int64_t)run - 1;
		usc__next_index(o, c->odims, c->orank);
	}
	return USC_OK;
}

/*
 * The index map of in, checked: *fn and the context c it reads.  read
 * gives the start indices of dynamic-slice and dynamic-update-slice.
 */
static usc_status map_init(map_ctx *cp, const usc_hlo_instr *in,
			   usc__index_read_fn read, void *ctx, map_fn *fnp,
			   usc_error *err)
{
	map_ctx c;
	map_fn fn = NULL;
	const usc_hlo_attr *a;
	const usc_hlo_shape *s0;
	size_t i;
	usc_status st;

	st = rank_check(in, err);
	if (st != USC_OK)
		return st;
	memset(&c, 0, sizeof c);
	c.in = in;
	c.odims = in->shape.dims;
	c.orank = in->shape.rank;
	if (in->operand_count < 1)
		return usc__eval_fail(err, USC_EINVAL, in, "no operand");
	s0 = &in->operands[0]->shape;
	switch (in->opcode) {
	case USC_HLO_OP_BROADCAST:
		a = usc__attr_ints(in, "dimensions");
		if ((!a && s0->rank != 0) || (a && a->count != s0->rank))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "broadcast needs one dimension "
					      "per operand dimension");
		c.list = a ? a->ints : NULL;
		for (i = 0; i < s0->rank; i++)
			if (c.list[i] < 0 || (size_t)c.list[i] >= c.orank ||
			    in->shape.dims[c.list[i]] != s0->dims[i])
				return usc__eval_fail(err, USC_EINVAL, in,
						      "bad broadcast "
						      "dimension %zu", i);
		fn = map_broadcast;
		break;
	case USC_HLO_OP_TRANSPOSE:
		a = usc__attr_ints(in, "dimensions");
		if (!a || a->count != s0->rank || s0->rank != c.orank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "transpose needs a permutation");
		c.list = a->ints;
		for (i = 0; i < a->count; i++)
			if (a->ints[i] < 0 || (size_t)a->ints[i] >= c.orank ||
			    s0->dims[a->ints[i]] != in->shape.dims[i])
				return usc__eval_fail(err, USC_EINVAL, in,
						      "bad permutation");
		fn = map_transpose;
		break;
	case USC_HLO_OP_SLICE:
		a = usc_hlo_instr_attr(in, "slice");
		if (!a || a->kind != USC_HLO_ATTR_SLICE ||
		    a->count != s0->rank || s0->rank != c.orank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "slice needs one range per "
					      "dimension");
		for (i = 0; i < a->count; i++) {
			int64_t st1 = a->slice[i].stride;

			c.v[i] = a->slice[i].start;
			c.w[i] = st1;
			if (st1 < 1 || c.v[i] < 0 ||
			    (in->shape.dims[i] > 0 &&
			     c.v[i] + (in->shape.dims[i] - 1) * st1 >=
				     s0->dims[i]))
				return usc__eval_fail(err, USC_EINVAL, in,
						      "slice out of bounds in "
						      "dimension %zu", i);
		}
		fn = map_slice;
		break;
	case USC_HLO_OP_DYNAMIC_SLICE:
		if (s0->rank != c.orank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "rank mismatch");
		st = clamp_starts(&c, read, ctx, 1, in->shape.dims, s0, err);
		if (st != USC_OK)
			return st;
		fn = map_slice;
		break;
	case USC_HLO_OP_DYNAMIC_UPDATE_SLICE:
		if (in->operand_count < 2 ||
		    in->operands[1]->shape.rank != s0->rank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "rank mismatch");
		st = clamp_starts(&c, read, ctx, 2,
				  in->operands[1]->shape.dims, s0, err);
		if (st != USC_OK)
			return st;
		fn = map_dus;
		break;
	case USC_HLO_OP_CONCATENATE:
		a = usc__attr_ints(in, "dimensions");
		if (!a || a->count != 1 || a->ints[0] < 0 ||
		    (size_t)a->ints[0] >= c.orank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "concatenate needs one dimension");
		c.dim = a->ints[0];
		fn = map_concat;
		break;
	case USC_HLO_OP_PAD:
		a = usc_hlo_instr_attr(in, "padding");
		if (!a || a->kind != USC_HLO_ATTR_PADDING ||
		    a->count != s0->rank || in->operand_count != 2)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "pad needs a padding per "
					      "dimension and a padding value");
		for (i = 0; i < a->count; i++)
			if (a->pad[i].interior < 0)
				return usc__eval_fail(err, USC_EINVAL, in,
						      "negative interior "
						      "padding");
		fn = map_pad;
		break;
	case USC_HLO_OP_REVERSE:
		a = usc__attr_ints(in, "dimensions");
		c.list = a ? a->ints : NULL;
		c.nlist = a ? a->count : 0;
		for (i = 0; i < c.nlist; i++)
			if (c.list[i] < 0 || (size_t)c.list[i] >= c.orank)
				return usc__eval_fail(err, USC_EINVAL, in,
						      "bad reverse dimension");
		fn = map_reverse;
		break;
	case USC_HLO_OP_BITCAST:
		if (!parse_m2m(in->shape.layout, c.orank, c.om2m) ||
		    !parse_m2m(s0->layout, s0->rank, c.im2m))
			return usc__eval_fail(err, USC_EUNSUPPORTED, in,
					      "bitcast with a tiled or "
					      "unreadable layout");
		fn = map_bitcast;
		break;
	default:
		return usc__fail(err, USC_EUNSUPPORTED,
				 "unsupported op %s at %u:%u (instruction "
				 "'%s')",
				 usc_hlo_opcode_name(in->opcode), in->loc.line,
				 in->loc.column, in->name);
	}
	*cp = c;
	*fnp = fn;
	return USC_OK;
}

usc_status usc__data_index(const usc_hlo_instr *in, usc__index_read_fn read,
			   void *ctx, size_t o, size_t *src, size_t *flat,
			   usc_error *err)
{
	map_ctx c;
	map_fn fn;
	int64_t idx[MAXR];
	usc_status st;

	st = map_init(&c, in, read, ctx, &fn, err);
	if (st != USC_OK)
		return st;
	usc__unravel(o, c.odims, c.orank, idx);
	if (!fn(&c, idx, src, flat)) {
		*src = 1; /* pad's padding value */
		*flat = 0;
	}
	return USC_OK;
}

usc_status usc__eval_data(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__ebuf *out,
			  size_t begin, size_t end, usc_error *err)
{
	usc__operand_reader rd = {ev, ops};
	map_ctx c;
	map_fn fn;
	int64_t o[MAXR];
	size_t i;
	usc_status st;

	st = map_init(&c, in, usc__read_operand_index, &rd, &fn, err);
	if (st != USC_OK)
		return st;
	if (begin >= end)
		return USC_OK;
	if (fn == map_broadcast && c.orank > 0)
		return broadcast_rows(ev, &c, in, ops, out, begin, end, err);
	usc__unravel(begin, c.odims, c.orank, o);
	for (i = begin; i < end; i++) {
		size_t src = 0, flat = 0;
		const usc__ebuf *b;

		if (fn(&c, o, &src, &flat)) {
			b = ops[src].leaves[0];
		} else {
			b = ops[1].leaves[0]; /* pad's padding value */
			flat = 0;
		}
		if (flat >= b->count)
			return usc__eval_fail(err, USC_EINTERNAL, in,
					      "index %zu out of %zu", flat,
					      b->count);
		usc__copy_values(ev, USC__VAL(ev, out, i),
				 USC__VAL(ev, b, flat), 1);
		usc__next_index(o, c.odims, c.orank);
	}
	return USC_OK;
}
