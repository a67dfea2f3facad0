/*
 * Reductions and linear algebra: reduce, reduce-window, dot, convolution
 * (gather, scatter and map are in gather.c).  The order of every sum is
 * stated here and in docs/evaluator.md: sequential by index in row-major
 * order of the reduced positions, or pairwise over the same sequence.
 */
#include "eval_internal.h"

#include <string.h>

#define MAXR USC_TENSOR_MAX_RANK

/* ------------------------------------------------------------ helpers */


/* The row-major stride of dimension d of array shape s, in elements. */
static size_t row_stride(const usc_hlo_shape *s, size_t d)
{
	size_t stride = 1, e;

	for (e = d + 1; e < s->rank; e++)
		stride *= (size_t)s->dims[e];
	return stride;
}

/* A scratch array of n domain values, initialized and cleared. */
typedef struct scratch {
	size_t n;
	unsigned char *v;
} scratch;

static usc_status scratch_new(usc_eval *ev, scratch *s, size_t n,
			      usc_error *err)
{
	s->n = n;
	s->v = usc__calloc(n ? n : 1, ev->dom->value_size);
	if (!s->v)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	if (ev->dom->init)
		ev->dom->init(ev->dstate, s->v, n);
	return USC_OK;
}

static void scratch_free(usc_eval *ev, scratch *s)
{
	if (s->v && ev->dom->clear)
		ev->dom->clear(ev->dstate, s->v, s->n);
	usc__free(s->v);
	s->v = NULL;
}

#define SV(ev, s, i) ((void *)((s)->v + (size_t)(i) * (ev)->dom->value_size))

/*
 * One value copied, in line for the usual sizes of plain-bytes values
 * (the inner loops of the sums copy one value per term).
 */
static inline void copy_one(usc_eval *ev, void *dst, const void *src)
{
	size_t vs = ev->dom->value_size;

	if (ev->dom->copy)
		ev->dom->copy(ev->dstate, dst, src, 1);
	else if (vs == 8)
		memcpy(dst, src, 8);
	else if (vs == 32)
		memcpy(dst, src, 32);
	else
		memcpy(dst, src, vs);
}

/*
 * Combines the elements at flats[0..m) of the N inputs with body fn,
 * starting from the N init values, into dst (N values, stride 1 in dst
 * pointers).  Sequential: acc = f(acc, x_j) for j in order.  Pairwise:
 * a balanced tree over the sequence, then f(init, tree).
 */
typedef struct combiner {
	usc_eval *ev;
	usc__sfn *fn;
	size_t N;
	usc__ebuf *const *inputs;
	const void *const *inits;
	scratch tmp; /* pairwise: 2 N values per tree level */
	size_t levels;
} combiner;

static usc_status pair_tree(combiner *c, const size_t *flats, size_t m,
			    size_t level, void *const *dst, usc_error *err)
{
	usc_eval *ev = c->ev;
	const void *args[2 * 64];
	void *l[64], *r[64];
	size_t k;
	usc_status st;

	if (m == 1) {
		for (k = 0; k < c->N; k++)
			usc__copy_values(ev, dst[k],
					 USC__VAL(ev, c->inputs[k], flats[0]),
					 1);
		return USC_OK;
	}
	for (k = 0; k < c->N; k++) {
		l[k] = SV(ev, &c->tmp, (level * 2) * c->N + k);
		r[k] = SV(ev, &c->tmp, (level * 2 + 1) * c->N + k);
	}
	st = pair_tree(c, flats, m / 2, level + 1, l, err);
	if (st == USC_OK)
		st = pair_tree(c, flats + m / 2, m - m / 2, level + 1, r, err);
	if (st != USC_OK)
		return st;
	for (k = 0; k < c->N; k++) {
		args[k] = l[k];
		args[c->N + k] = r[k];
	}
	return usc__sfn_call(ev, c->fn, args, dst, err);
}

static usc_status combine(combiner *c, const size_t *flats, size_t m,
			  void *const *dst, usc_error *err)
{
	usc_eval *ev = c->ev;
	const void *args[2 * 64];
	size_t j, k;
	usc_status st;

	for (k = 0; k < c->N; k++)
		usc__copy_values(ev, dst[k], c->inits[k], 1);
	if (m == 0)
		return USC_OK;
	if (ev->opts.reduce_order == USC_REDUCE_PAIRWISE) {
		void *t[64];

		/* The tree's result lands in the last level's slots. */
		for (k = 0; k < c->N; k++)
			t[k] = SV(ev, &c->tmp, (c->levels * 2) * c->N + k);
		st = pair_tree(c, flats, m, 0, t, err);
		if (st != USC_OK)
			return st;
		for (k = 0; k < c->N; k++) {
			args[k] = c->inits[k];
			args[c->N + k] = t[k];
		}
		return usc__sfn_call(ev, c->fn, args, dst, err);
	}
	for (j = 0; j < m; j++) {
		for (k = 0; k < c->N; k++) {
			args[k] = dst[k];
			args[c->N + k] = USC__VAL(ev, c->inputs[k], flats[j]);
		}
		st = usc__sfn_call(ev, c->fn, args, dst, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * Sets up the combination of the N inputs ops[0..N) with their init values
 * ops[N..2N) through in's body, for at most max_m elements at a time:
 * inputs and inits (caller storage for N pointers) receive the operands,
 * *flats an index buffer of max_m entries that the caller frees.
 */
static usc_status combiner_init(combiner *c, usc_eval *ev,
				const usc_hlo_instr *in, size_t N,
				const usc__evalue *ops, size_t max_m,
				usc__ebuf **inputs, const void **inits,
				size_t **flats, usc_error *err)
{
	size_t k;
	usc_status st;

	memset(c, 0, sizeof *c);
	c->ev = ev;
	c->N = N;
	if (N < 1 || N > 64 || in->called_count < 1)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "%s with %zu inputs",
				      usc_hlo_opcode_name(in->opcode), N);
	st = usc__sfn_get(ev, in->called[0], &c->fn, err);
	if (st != USC_OK)
		return st;
	if (c->fn->nparams != 2 * N || c->fn->nresults != N)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "the body '%s' takes %zu values and "
				      "gives %zu; expected %zu and %zu",
				      in->called[0]->name, c->fn->nparams,
				      c->fn->nresults, 2 * N, N);
	for (k = 0; k < 2 * N; k++)
		if (ops[k].n != 1)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "operand %zu is a tuple", k);
	for (k = 0; k < N; k++) {
		inputs[k] = ops[k].leaves[0];
		inits[k] = USC__VAL(ev, ops[N + k].leaves[0], 0);
	}
	c->inputs = inputs;
	c->inits = inits;
	while (((size_t)1 << c->levels) < max_m)
		c->levels++;
	st = scratch_new(ev, &c->tmp, (c->levels * 2 + 2) * N, err);
	if (st != USC_OK)
		return st;
	*flats = usc__calloc(max_m ? max_m : 1, sizeof **flats);
	if (!*flats) {
		scratch_free(ev, &c->tmp);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	return USC_OK;
}

/*
 * Whether in's body is one add, multiply, maximum, minimum, and or or of
 * its two parameters (either order), of their type, and nothing else; op
 * receives it.
 */
static bool body_is_binary(const usc_hlo_instr *in, usc__dom_op *op)
{
	const usc_hlo_computation *c;
	const usc_hlo_instr *r;
	usc_error e;

	if (in->called_count < 1 || in->operand_count != 2)
		return false;
	c = in->called[0];
	r = c->root;
	if (!r || r->operand_count != 2 || c->instr_count != 3)
		return false;
	switch (r->opcode) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_AND:
	case USC_HLO_OP_OR:
		break;
	default:
		return false;
	}
	if (r->operands[0]->opcode != USC_HLO_OP_PARAMETER ||
	    r->operands[1]->opcode != USC_HLO_OP_PARAMETER ||
	    r->operands[0]->parameter_number ==
		    r->operands[1]->parameter_number ||
	    r->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    r->operands[0]->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    r->operands[1]->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    r->shape.dtype != r->operands[0]->shape.dtype ||
	    r->shape.dtype != r->operands[1]->shape.dtype)
		return false;
	return usc__build_op(r, op, &e) == USC_OK;
}

/*
 * Whether in's body is one add of its two parameters (either order), so
 * that a domain's sum entry may reduce in an order of its choosing
 * (domain.h).  Only the plain add: a body that converts or does more
 * keeps the interpreter's combination.
 */
static bool body_is_add(const usc_hlo_instr *in, usc__dom_op *op)
{
	return body_is_binary(in, op) && in->called[0]->root->opcode ==
						 USC_HLO_OP_ADD;
}

/*
 * The domain's sum of the m elements at flats (m >= 1) and the init into
 * dst; *done false when the domain declined (then err is clear).
 */
static usc_status domain_sum(usc_eval *ev, const usc__dom_op *add,
			     const usc__ebuf *input, const void *init,
			     const size_t *flats, size_t m, scratch *tmp,
			     void *dst, bool *done, usc_error *err)
{
	size_t j;
	usc_status st;

	const void *values;

	*done = false;
	/*
	 * Terms at consecutive flats (a row, a window of the last
	 * dimension) are consecutive values already: no copy.
	 */
	for (j = 1; j < m && flats[j] == flats[0] + j; j++)
		;
	if (j == m) {
		values = USC__VAL(ev, input, flats[0]);
	} else {
		for (j = 0; j < m; j++)
			copy_one(ev, SV(ev, tmp, j),
				 USC__VAL(ev, input, flats[j]));
		values = tmp->v;
	}
	st = ev->dom->sum(ev->dstate, add, m, values, init, dst, err);
	if (st == USC_EUNSUPPORTED) {
		if (err) {
			err->code = USC_OK;
			err->message[0] = '\0';
		}
		return USC_OK;
	}
	if (st == USC_OK)
		*done = true;
	return st;
}

/*
 * The domain's sum entry for a reduce or reduce-window whose body is one
 * add, when the domain has one: set up once per instruction, tried per
 * output element, given up for the instruction when the domain declines.
 */
typedef struct summer {
	bool use;
	usc__dom_op add;
	scratch sv;
} summer;

static usc_status summer_init(usc_eval *ev, const usc_hlo_instr *in,
			      size_t m, summer *sm, usc_error *err)
{
	memset(sm, 0, sizeof *sm);
	sm->use = ev->dom->sum && m > 0 && body_is_add(in, &sm->add);
	return sm->use ? scratch_new(ev, &sm->sv, m, err) : USC_OK;
}

static void summer_free(usc_eval *ev, summer *sm)
{
	if (sm->sv.v)
		scratch_free(ev, &sm->sv);
}

/*
 * The domain's sum of the n elements at flats into dst, when sm offers
 * one; *done tells whether it took them.
 */
static usc_status offer_sum(usc_eval *ev, summer *sm, const usc__ebuf *input,
			    const void *init, const size_t *flats, size_t n,
			    void *dst, bool *done, usc_error *err)
{
	usc_status st;

	*done = false;
	if (!sm->use || n == 0)
		return USC_OK;
	st = domain_sum(ev, &sm->add, input, init, flats, n, &sm->sv, dst,
			done, err);
	if (st != USC_OK)
		return st;
	/*
	 * A decline holds for the instruction unless the domain's declines
	 * follow the values (domain.h): then the next element is offered
	 * again, so that no element's value depends on whether an element
	 * before it in the same call was declined.
	 */
	if (!ev->dom->sum_declines_by_value)
		sm->use = *done;
	return USC_OK;
}

/* The n elements at flats reduced into dst: the domain's sum, or c. */
static usc_status reduce_elements(usc_eval *ev, summer *sm, combiner *c,
				  const usc__ebuf *input, const void *init,
				  const size_t *flats, size_t n,
				  void *const *dst, usc_error *err)
{
	bool done;
	usc_status st;

	st = offer_sum(ev, sm, input, init, flats, n, dst[0], &done, err);
	if (st != USC_OK)
		return st;
	return done ? USC_OK : combine(c, flats, n, dst, err);
}

/*
 * The sequential combination of many output elements at once, for a
 * reduce or reduce-window of one input whose body is one binary op of
 * its parameters (body_is_binary: add, multiply, maximum...): the
 * elements of a batch take their k-th terms together, in one call of the
 * domain's apply over the whole batch, instead of one call of the body
 * per term and element.  Each element still gets exactly the additions
 * combine() makes, in the same order and with the same operands (the
 * init first, then its terms by index), because the domains' apply is
 * elementwise: an element's value is the same whichever elements share
 * its batch.  The elements of a batch have the same number of terms (a
 * reduce-window's padding can vary it; a change of count flushes the
 * batch).
 */
#define BATCH_MAX 512           /* elements per batch */
#define BATCH_FLATS (1u << 15)  /* the batch's term indices, at most */

typedef struct batch {
	bool on;
	bool acc_first;   /* the add's first operand is the accumulator */
	usc__dom_op add;
	size_t cap, m;    /* elements per batch; terms per element, at most */
	size_t n, cnt;    /* elements pending; their count of terms */
	size_t *flats;    /* cap rows of m term indices */
	void **dst;       /* the pending elements' destinations */
	scratch acc, col, out;
} batch;

/*
 * Sets b up for in (N inputs, at most m terms per element, `elements`
 * output elements to compute); b->on stays false where batching does not
 * apply (pairwise order, several inputs, another body, few elements).
 */
static usc_status batch_init(usc_eval *ev, const usc_hlo_instr *in, size_t N,
			     size_t m, size_t elements, batch *b,
			     usc_error *err)
{
	usc_status st;

	memset(b, 0, sizeof *b);
	if (N != 1 || m == 0 || elements < 2 ||
	    ev->opts.reduce_order == USC_REDUCE_PAIRWISE ||
	    !body_is_binary(in, &b->add))
		return USC_OK;
	b->cap = BATCH_FLATS / m;
	if (b->cap > BATCH_MAX)
		b->cap = BATCH_MAX;
	if (b->cap > elements)
		b->cap = elements;
	if (b->cap < 2)
		return USC_OK;
	b->m = m;
	/* The body's first parameter is the accumulator (combine()). */
	b->acc_first =
		in->called[0]->root->operands[0]->parameter_number == 0;
	b->flats = usc__calloc(b->cap * m, sizeof *b->flats);
	b->dst = usc__calloc(b->cap, sizeof *b->dst);
	if (!b->flats || !b->dst)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = scratch_new(ev, &b->acc, b->cap, err);
	if (st == USC_OK)
		st = scratch_new(ev, &b->col, b->cap, err);
	if (st == USC_OK)
		st = scratch_new(ev, &b->out, b->cap, err);
	b->on = true;
	return st;
}

static void batch_free(usc_eval *ev, batch *b)
{
	if (b->acc.v)
		scratch_free(ev, &b->acc);
	if (b->col.v)
		scratch_free(ev, &b->col);
	if (b->out.v)
		scratch_free(ev, &b->out);
	usc__free(b->flats);
	usc__free(b->dst);
	b->flats = NULL;
	b->dst = NULL;
}

/* Where the next pending element's term indices go. */
static size_t *batch_slot(batch *b)
{
	return b->flats + b->n * b->m;
}

/*
 * Combines the pending elements: acc = init + term 0 (the init a
 * broadcast scalar operand), then acc = acc + term k for every next k,
 * each step one apply over the batch; then every acc to its destination.
 */
static usc_status batch_flush(usc_eval *ev, batch *b, const usc__ebuf *input,
			      const void *init, usc_error *err)
{
	size_t n = b->n, j, p, vs = ev->dom->value_size;
	usc_status st = USC_OK;

	b->n = 0;
	for (j = 0; j < b->cnt && n > 0; j++) {
		const void *args[2];
		bool first = j == 0;
		void *t;

		for (p = 0; p < n; p++)
			copy_one(ev, SV(ev, &b->col, p),
				 USC__VAL(ev, input, b->flats[p * b->m + j]));
		args[b->acc_first ? 0 : 1] = first ? init : b->acc.v;
		args[b->acc_first ? 1 : 0] = b->col.v;
		st = ev->dom->apply(ev->dstate, &b->add, n, b->out.v, args,
				    first ? (b->acc_first ? 1u : 2u) : 0u,
				    err);
		if (st != USC_OK)
			return st;
		t = b->acc.v;
		b->acc.v = b->out.v;
		b->out.v = t;
	}
	for (p = 0; p < n; p++)
		copy_one(ev, b->dst[p], (unsigned char *)b->acc.v + p * vs);
	return st;
}

/*
 * Element dst, whose cnt term indices batch_slot(b) holds, joins the
 * batch (after the pending ones are combined when its count differs or
 * the batch is full).
 */
static usc_status batch_add(usc_eval *ev, batch *b, const usc__ebuf *input,
			    const void *init, size_t cnt, void *dst,
			    usc_error *err)
{
	usc_status st;

	if (cnt == 0) {
		usc__copy_values(ev, dst, init, 1);
		return USC_OK;
	}
	if (b->n > 0 && cnt != b->cnt) {
		/* Its indices move to the first row after the flush. */
		size_t *slot = batch_slot(b);

		st = batch_flush(ev, b, input, init, err);
		if (st != USC_OK)
			return st;
		memmove(b->flats, slot, cnt * sizeof *slot);
	}
	b->cnt = cnt;
	b->dst[b->n++] = dst;
	return b->n == b->cap ? batch_flush(ev, b, input, init, err) : USC_OK;
}

/*
 * One element of a batched reduce or reduce-window (its cnt term indices
 * at fl, batch_slot(b)): the domain's sum when it takes them, else the
 * batch.
 */
static usc_status reduce_batched(usc_eval *ev, summer *sm, batch *b,
				 const usc__ebuf *input, const void *init,
				 const size_t *fl, size_t cnt, void *dst,
				 usc_error *err)
{
	bool done;
	usc_status st;

	st = offer_sum(ev, sm, input, init, fl, cnt, dst, &done, err);
	if (st != USC_OK || done)
		return st;
	return batch_add(ev, b, input, init, cnt, dst, err);
}

/* ------------------------------------------------------------- reduce */

usc_status usc__reduce_map_init(const usc_hlo_instr *in, usc__reduce_map *r,
				usc_error *err)
{
	const usc_hlo_attr *dims = usc__attr_ints(in, "dimensions");
	size_t rank, i;

	memset(r, 0, sizeof *r);
	if (in->operand_count < 2 ||
	    in->operands[0]->shape.kind != USC_HLO_SHAPE_ARRAY)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "reduce needs N inputs and N inits");
	r->s = &in->operands[0]->shape;
	rank = r->s->rank;
	if (rank > MAXR)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in, "rank");
	for (i = 0; i < usc__attr_count(dims); i++)
		if (dims->ints[i] < 0 || (size_t)dims->ints[i] >= rank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad reduce dimension %lld",
					      (long long)dims->ints[i]);
	/* Reduced dimensions in ascending order: row-major over them. */
	r->m = 1;
	for (i = 0; i < rank; i++) {
		size_t stride = row_stride(r->s, i);

		if (usc__attr_has(dims, (int64_t)i)) {
			r->rd[r->nr] = (int64_t)i;
			r->rstride[r->nr] = stride;
			r->rdims[r->nr++] = r->s->dims[i];
			r->m *= (size_t)r->s->dims[i];
		} else {
			r->kd[r->nk] = (int64_t)i;
			r->kstride[r->nk] = stride;
			r->kdims[r->nk++] = r->s->dims[i];
		}
	}
	return USC_OK;
}

/*
 * The flats of element i: its kept coordinates' offset, then the reduced
 * positions row-major, the last reduced dimension in an inner loop of
 * constant step (this runs once per output element of every reduce).
 */
void usc__reduce_map_at(const usc__reduce_map *r, size_t i, size_t *flats)
{
	int64_t ridx[MAXR];
	size_t base = 0, j = 0, k, last, inner, step;

	if (r->m == 0)
		return;
	for (k = r->nk; k-- > 0;) {
		size_t d = (size_t)r->kdims[k];

		base += (i % d) * r->kstride[k];
		i /= d;
	}
	if (r->nr == 0) {
		flats[0] = base;
		return;
	}
	last = r->nr - 1;
	inner = (size_t)r->rdims[last];
	step = r->rstride[last];
	memset(ridx, 0, sizeof ridx);
	do {
		size_t off = base, w;

		for (k = 0; k < last; k++)
			off += (size_t)ridx[k] * r->rstride[k];
		for (w = 0; w < inner; w++)
			flats[j++] = off + w * step;
	} while (usc__next_index(ridx, r->rdims, last));
}

usc_status usc__eval_reduce(usc_eval *ev, const usc_hlo_instr *in,
			    const usc__evalue *ops, usc__ebuf **outs,
			    size_t begin, size_t end, usc_error *err)
{
	size_t N = in->operand_count / 2, i, k;
	usc__ebuf *inputs[64];
	const void *inits[64];
	void *dst[64];
	size_t *flats = NULL;
	usc__reduce_map rm;
	combiner c;
	summer sm;
	batch b;
	usc_status st;

	if (in->operand_count % 2 || N == 0 || N > 64)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "reduce needs N inputs and N inits");
	st = usc__reduce_map_init(in, &rm, err);
	if (st != USC_OK)
		return st;
	st = combiner_init(&c, ev, in, N, ops, rm.m, inputs, inits, &flats,
			   err);
	if (st != USC_OK)
		return st;
	st = summer_init(ev, in, rm.m, &sm, err);
	if (st != USC_OK) {
		usc__free(flats);
		scratch_free(ev, &c.tmp);
		return st;
	}
	st = batch_init(ev, in, N, rm.m, end - begin, &b, err);
	for (i = begin; st == USC_OK && i < end; i++) {
		size_t *fl = b.on ? batch_slot(&b) : flats;

		usc__reduce_map_at(&rm, i, fl);
		for (k = 0; k < N; k++)
			dst[k] = USC__VAL(ev, outs[k], i);
		st = b.on ? reduce_batched(ev, &sm, &b, inputs[0], inits[0],
					   fl, rm.m, dst[0], err)
			  : reduce_elements(ev, &sm, &c, inputs[0], inits[0],
					    flats, rm.m, dst, err);
	}
	if (st == USC_OK && b.on)
		st = batch_flush(ev, &b, inputs[0], inits[0], err);
	batch_free(ev, &b);
	usc__free(flats);
	scratch_free(ev, &c.tmp);
	summer_free(ev, &sm);
	return st;
}

/* ------------------------------------------------------ reduce-window */

/*
 * Whether the last of o windows of size ws (stride st, dilation rd) ends
 * before n: (o - 1) st + (ws - 1) rd <= n - 1, without overflow.
 */
static bool window_inside(int64_t o, int64_t st, int64_t ws, int64_t rd,
			  int64_t n)
{
	int64_t x;

	if (o < 1 || ws < 1 || n < 1 || st < 1 || rd < 1 ||
	    o - 1 > (n - 1) / st)
		return false;
	x = (o - 1) * st;
	return ws - 1 <= (n - 1 - x) / rd;
}

usc_status usc__window_map_init(const usc_hlo_instr *in, usc__window_map *w,
				usc_error *err)
{
	const usc_hlo_attr *wa = usc_hlo_instr_attr(in, "window");
	size_t i;

	memset(w, 0, sizeof *w);
	if (in->operand_count < 2 ||
	    in->operands[0]->shape.kind != USC_HLO_SHAPE_ARRAY)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "reduce-window needs N inputs and N "
				      "inits");
	w->s = &in->operands[0]->shape;
	w->os = in->shape.kind == USC_HLO_SHAPE_TUPLE ? &in->shape.tuple[0]
						      : &in->shape;
	w->w = wa;
	w->rank = w->s->rank;
	if (w->rank > MAXR ||
	    (w->rank > 0 && (!wa || wa->kind != USC_HLO_ATTR_WINDOW ||
			     wa->count != w->rank)))
		return usc__eval_fail(err, USC_EINVAL, in,
				      "reduce-window needs a window of rank "
				      "%zu",
				      w->rank);
	w->m = 1;
	for (i = 0; i < w->rank; i++) {
		w->wdims[i] = wa->window[i].size;
		w->m *= (size_t)w->wdims[i];
		if (wa->window[i].stride < 1 || wa->window[i].lhs_dilate < 1 ||
		    wa->window[i].rhs_dilate < 1)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad window in dimension %zu", i);
	}
	/*
	 * plain when the output has the input's rank, nothing is padded on
	 * the low side or dilated, and the last window of every dimension
	 * ends inside the input: then no position is ever skipped.
	 */
	w->plain = w->rank > 0 && w->os->kind == USC_HLO_SHAPE_ARRAY &&
		   w->os->rank == w->rank;
	for (i = 0; w->plain && i < w->rank; i++) {
		const usc_hlo_window_dim *d = &wa->window[i];
		size_t stride = row_stride(w->s, i);

		if (d->pad_lo != 0 || d->lhs_dilate != 1 ||
		    !window_inside(w->os->dims[i], d->stride, w->wdims[i],
				   d->rhs_dilate, w->s->dims[i]))
			w->plain = false;
		w->ostep[i] = (size_t)d->stride * stride;
		w->wstep[i] = (size_t)d->rhs_dilate * stride;
	}
	return USC_OK;
}

/*
 * A plain window's flats (usc__window_map.plain): the output position's
 * offset plus the window positions', row-major, the last dimension in an
 * inner loop of constant step.
 */
static size_t plain_window_at(const usc__window_map *w, size_t i,
			      size_t *flats)
{
	int64_t widx[MAXR];
	size_t base = 0, j = 0, k, last = w->rank - 1, inner, step;

	for (k = w->rank; k-- > 0;) {
		size_t d = (size_t)w->os->dims[k];

		base += (i % d) * w->ostep[k];
		i /= d;
	}
	inner = (size_t)w->wdims[last];
	step = w->wstep[last];
	memset(widx, 0, sizeof widx);
	do {
		size_t off = base, p;

		for (k = 0; k < last; k++)
			off += (size_t)widx[k] * w->wstep[k];
		for (p = 0; p < inner; p++)
			flats[j++] = off + p * step;
	} while (usc__next_index(widx, w->wdims, last));
	return j;
}

size_t usc__window_map_at(const usc__window_map *w, size_t i, size_t *flats)
{
	int64_t widx[MAXR], oidx[MAXR], idx[MAXR];
	size_t j = 0, k;

	if (w->m == 0)
		return 0;
	if (w->plain)
		return plain_window_at(w, i, flats);
	usc__unravel(i, w->os->dims, w->rank, oidx);
	memset(widx, 0, sizeof widx);
	do {
		bool ok = true;

		/*
		 * Window positions in the padded, dilated input that fall on
		 * padding or between dilated elements are skipped.
		 */
		for (k = 0; k < w->rank && ok; k++) {
			const usc_hlo_window_dim *d = &w->w->window[k];
			int64_t p = oidx[k] * d->stride - d->pad_lo +
				    widx[k] * d->rhs_dilate;

			if (p < 0 || p % d->lhs_dilate) {
				ok = false;
				break;
			}
			p /= d->lhs_dilate;
			if (p >= w->s->dims[k])
				ok = false;
			idx[k] = p;
		}
		if (ok)
			flats[j++] = usc__ravel(idx, w->s->dims, w->rank);
	} while (usc__next_index(widx, w->wdims, w->rank));
	return j;
}

usc_status usc__eval_reduce_window(usc_eval *ev, const usc_hlo_instr *in,
				   const usc__evalue *ops, usc__ebuf **outs,
				   size_t begin, size_t end, usc_error *err)
{
	size_t N = in->operand_count / 2, i, k;
	usc__ebuf *inputs[64];
	const void *inits[64];
	void *dst[64];
	size_t *flats = NULL;
	usc__window_map wm;
	combiner c;
	summer sm;
	batch b;
	usc_status st;

	if (in->operand_count % 2 || N == 0 || N > 64)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "reduce-window needs N inputs and N "
				      "inits");
	st = usc__window_map_init(in, &wm, err);
	if (st != USC_OK)
		return st;
	st = combiner_init(&c, ev, in, N, ops, wm.m, inputs, inits, &flats,
			   err);
	if (st != USC_OK)
		return st;
	st = summer_init(ev, in, wm.m, &sm, err);
	if (st != USC_OK) {
		usc__free(flats);
		scratch_free(ev, &c.tmp);
		return st;
	}
	st = batch_init(ev, in, N, wm.m, end - begin, &b, err);
	for (i = begin; st == USC_OK && i < end; i++) {
		size_t *fl = b.on ? batch_slot(&b) : flats;
		size_t j = usc__window_map_at(&wm, i, fl);

		for (k = 0; k < N; k++)
			dst[k] = USC__VAL(ev, outs[k], i);
		st = b.on ? reduce_batched(ev, &sm, &b, inputs[0], inits[0],
					   fl, j, dst[0], err)
			  : reduce_elements(ev, &sm, &c, inputs[0], inits[0],
					    flats, j, dst, err);
	}
	if (st == USC_OK && b.on)
		st = batch_flush(ev, &b, inputs[0], inits[0], err);
	batch_free(ev, &b);
	usc__free(flats);
	scratch_free(ev, &c.tmp);
	summer_free(ev, &sm);
	return st;
}

/* ---------------------------------------------------------- sums of products */

/*
 * The sum of products of a dot or convolution: each operand converted to
 * the result type (exact when it widens), each product rounded to the
 * result type, the sum sequential from the first product (or pairwise),
 * each addition rounded.  An empty sum is +0.
 */
typedef struct sop {
	usc_eval *ev;
	const usc_hlo_instr *in;
	usc_dtype rt, lt, kt;
	scratch prods; /* the products of one output element */
	scratch conv;  /* two converted operands */
	scratch tree;  /* pairwise partial sums */
	size_t levels;
} sop;

static usc_status sop_init(sop *p, usc_eval *ev, const usc_hlo_instr *in,
			   size_t max_terms, usc_error *err)
{
	usc_status st;

	memset(p, 0, sizeof *p);
	p->ev = ev;
	p->in = in;
	p->rt = in->shape.dtype;
	p->lt = in->operands[0]->shape.dtype;
	p->kt = in->operands[1]->shape.dtype;
	while (((size_t)1 << p->levels) < max_terms)
		p->levels++;
	st = scratch_new(ev, &p->prods, max_terms, err);
	if (st == USC_OK)
		st = scratch_new(ev, &p->conv, 2, err);
	if (st == USC_OK)
		st = scratch_new(ev, &p->tree, 2 * (p->levels + 1), err);
	return st;
}

static void sop_free(sop *p)
{
	scratch_free(p->ev, &p->prods);
	scratch_free(p->ev, &p->conv);
	scratch_free(p->ev, &p->tree);
}

static usc_status sop_product(sop *p, const void *a, const void *b, size_t j,
			      usc_error *err)
{
	usc_eval *ev = p->ev;
	usc_status st;

	if (p->lt != p->rt) {
		st = usc__apply_scalar(ev, p->in, USC_HLO_OP_CONVERT, p->rt,
				       p->lt, USC_DTYPE_INVALID,
				       SV(ev, &p->conv, 0), a, NULL, err);
		if (st != USC_OK)
			return st;
		a = SV(ev, &p->conv, 0);
	}
	if (p->kt != p->rt) {
		st = usc__apply_scalar(ev, p->in, USC_HLO_OP_CONVERT, p->rt,
				       p->kt, USC_DTYPE_INVALID,
				       SV(ev, &p->conv, 1), b, NULL, err);
		if (st != USC_OK)
			return st;
		b = SV(ev, &p->conv, 1);
	}
	return usc__apply_scalar(ev, p->in, USC_HLO_OP_MULTIPLY, p->rt, p->rt,
				 p->rt, SV(ev, &p->prods, j), a, b, err);
}

static usc_status sop_tree(sop *p, size_t lo, size_t m, size_t level,
			   void *dst, usc_error *err)
{
	usc_eval *ev = p->ev;
	void *l, *r;
	usc_status st;

	if (m == 1) {
		usc__copy_values(ev, dst, SV(ev, &p->prods, lo), 1);
		return USC_OK;
	}
	l = SV(ev, &p->tree, 2 * level);
	r = SV(ev, &p->tree, 2 * level + 1);
	st = sop_tree(p, lo, m / 2, level + 1, l, err);
	if (st == USC_OK)
		st = sop_tree(p, lo + m / 2, m - m / 2, level + 1, r, err);
	if (st != USC_OK)
		return st;
	return usc__apply_scalar(ev, p->in, USC_HLO_OP_ADD, p->rt, p->rt,
				 p->rt, dst, l, r, err);
}

/*
 * The m >= 2 products through the domain's sum entry (domain.h), the
 * first as the init: a domain whose sum honours a reassociation freedom
 * (the envelope under reassociate_dot) sees the accumulation of a dot or
 * convolution as one sum, told apart from a reduction by the add's
 * instruction.  *done false when the domain declined (err then clear).
 */
static usc_status sop_domain_sum(sop *p, size_t m, void *dst, bool *done,
				 usc_error *err)
{
	usc_eval *ev = p->ev;
	usc__dom_op add;
	usc_status st;

	*done = false;
	memset(&add, 0, sizeof add);
	add.op = USC_HLO_OP_ADD;
	add.result = p->rt;
	add.nargs = 2;
	add.arg[0] = add.arg[1] = p->rt;
	add.instr = p->in;
	st = ev->dom->sum(ev->dstate, &add, m - 1, SV(ev, &p->prods, 1),
			  SV(ev, &p->prods, 0), dst, err);
	if (st == USC_EUNSUPPORTED) {
		if (err) {
			err->code = USC_OK;
			err->message[0] = '\0';
		}
		return USC_OK;
	}
	if (st == USC_OK)
		*done = true;
	return st;
}

static usc_status sop_sum(sop *p, size_t m, void *dst, usc_error *err)
{
	usc_eval *ev = p->ev;
	size_t j;
	usc_status st;
	bool done = false;

	if (m == 0)
		return usc__load_int(ev, p->rt, 0, dst, err);
	if (ev->dom->sum && m >= 2 && usc_dtype_is_float(p->rt)) {
		st = sop_domain_sum(p, m, dst, &done, err);
		if (st != USC_OK || done)
			return st;
	}
	if (ev->opts.reduce_order == USC_REDUCE_PAIRWISE)
		return sop_tree(p, 0, m, 0, dst, err);
	usc__copy_values(ev, dst, SV(ev, &p->prods, 0), 1);
	for (j = 1; j < m; j++) {
		/* The accumulator is copied so out never aliases an arg. */
		usc__copy_values(ev, SV(ev, &p->conv, 0), dst, 1);
		st = usc__apply_scalar(ev, p->in, USC_HLO_OP_ADD, p->rt, p->rt,
				       p->rt, dst, SV(ev, &p->conv, 0),
				       SV(ev, &p->prods, j), err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* ---------------------------------------------------------------- dot */

/*
 * The dot through the domain's matmul entry (domain.h), when it has one:
 * the operands gathered into contiguous [batch][M][K] and [batch][K][N]
 * arrays, where batch, M, N and K are the products of the batch, lhs
 * free, rhs free and contracting dimension sizes, each group in the
 * order the dimension numbers list it (free dimensions ascending), so
 * that C's row-major [batch][M][N] is the result's own layout (batch
 * dims, lhs free, rhs free).  Only whole outputs go this way.  Sets
 * *done when the domain computed the result; a decline
 * (USC_EUNSUPPORTED) leaves *done false and returns USC_OK.
 */
typedef struct dot_dims {
	size_t nb, nc, nlf, nrf;
	const int64_t *lb, *rb, *lc, *rc;
	const int64_t *lfree, *rfree;
} dot_dims;

static void gather_operand(usc_eval *ev, const usc__ebuf *src,
			   const usc_hlo_shape *s, const int64_t *bd,
			   size_t nb, const int64_t *fd, size_t nf,
			   const int64_t *cd, size_t nc, bool free_first,
			   unsigned char *dst)
{
	int64_t bdims[MAXR], fdims[MAXR], cdims[MAXR];
	int64_t bi[MAXR], fi[MAXR], ci[MAXR], idx[MAXR];
	size_t k, j = 0, vs = ev->dom->value_size;
	bool more_b = true;

	for (k = 0; k < nb; k++)
		bdims[k] = s->dims[bd[k]];
	for (k = 0; k < nf; k++)
		fdims[k] = s->dims[fd[k]];
	for (k = 0; k < nc; k++)
		cdims[k] = s->dims[cd[k]];
	memset(bi, 0, sizeof bi);
	/* Row-major over (batch, free, contracting) or (batch, contr., free). */
	while (more_b) {
		bool more_o = true;

		for (k = 0; k < nb; k++)
			idx[bd[k]] = bi[k];
		memset(free_first ? fi : ci, 0, sizeof fi);
		while (more_o) {
			bool more_i = true;

			if (free_first)
				for (k = 0; k < nf; k++)
					idx[fd[k]] = fi[k];
			else
				for (k = 0; k < nc; k++)
					idx[cd[k]] = ci[k];
			memset(free_first ? ci : fi, 0, sizeof ci);
			while (more_i) {
				if (free_first)
					for (k = 0; k < nc; k++)
						idx[cd[k]] = ci[k];
				else
					for (k = 0; k < nf; k++)
						idx[fd[k]] = fi[k];
				usc__copy_values(ev, dst + j++ * vs,
						 USC__VAL(ev, src,
							  usc__ravel(idx, s->dims,
								     s->rank)),
						 1);
				more_i = free_first
						 ? usc__next_index(ci, cdims, nc)
						 : usc__next_index(fi, fdims, nf);
			}
			more_o = free_first ? usc__next_index(fi, fdims, nf)
					    : usc__next_index(ci, cdims, nc);
		}
		more_b = usc__next_index(bi, bdims, nb);
	}
}

/* Whether dims[0..n) are first, first + 1, ...: dimensions in place. */
static bool in_order(const int64_t *dims, size_t n, size_t first)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (dims[k] != (int64_t)(first + k))
			return false;
	return true;
}

/* Whether a buffer holds every element of its value (not a tile). */
static bool whole(const usc__ebuf *b)
{
	return b->base == 0 && b->len == b->count;
}

static usc_status dot_matmul(usc_eval *ev, const usc_hlo_instr *in,
			     const dot_dims *d, const usc__ebuf *L,
			     const usc__ebuf *R, usc__ebuf *out, bool *done,
			     usc_error *err)
{
	const usc_hlo_shape *ls = &in->operands[0]->shape;
	const usc_hlo_shape *rs = &in->operands[1]->shape;
	usc__dom_matmul mm;
	scratch a, b;
	size_t k;
	usc_status st;

	*done = false;
	memset(&mm, 0, sizeof mm);
	mm.batch = mm.m = mm.n = mm.k = 1;
	for (k = 0; k < d->nb; k++)
		mm.batch *= (size_t)ls->dims[d->lb[k]];
	for (k = 0; k < d->nlf; k++)
		mm.m *= (size_t)ls->dims[d->lfree[k]];
	for (k = 0; k < d->nrf; k++)
		mm.n *= (size_t)rs->dims[d->rfree[k]];
	for (k = 0; k < d->nc; k++)
		mm.k *= (size_t)ls->dims[d->lc[k]];
	/* Empty products and empty sums stay on the per-element path. */
	if (mm.batch * mm.m * mm.n * mm.k == 0 ||
	    out->count != mm.batch * mm.m * mm.n)
		return USC_OK;
	mm.a_type = ls->dtype;
	mm.b_type = rs->dtype;
	mm.result = in->shape.dtype;
	mm.instr = in;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	/*
	 * An operand already laid out as the product reads it (row-major
	 * batch, free, contracting for the lhs; batch, contracting, free for
	 * the rhs: XLA's usual dot) is handed over as it is; any other is
	 * gathered into that order.
	 */
	if (whole(L) && in_order(d->lb, d->nb, 0) &&
	    in_order(d->lfree, d->nlf, d->nb) &&
	    in_order(d->lc, d->nc, d->nb + d->nlf)) {
		mm.a = L->values;
	} else {
		st = scratch_new(ev, &a, mm.batch * mm.m * mm.k, err);
		if (st != USC_OK)
			return st;
		gather_operand(ev, L, ls, d->lb, d->nb, d->lfree, d->nlf,
			       d->lc, d->nc, true, a.v);
		mm.a = a.v;
	}
	if (whole(R) && in_order(d->rb, d->nb, 0) &&
	    in_order(d->rc, d->nc, d->nb) &&
	    in_order(d->rfree, d->nrf, d->nb + d->nc)) {
		mm.b = R->values;
	} else {
		st = scratch_new(ev, &b, mm.batch * mm.k * mm.n, err);
		if (st != USC_OK) {
			scratch_free(ev, &a);
			return st;
		}
		gather_operand(ev, R, rs, d->rb, d->nb, d->rfree, d->nrf,
			       d->rc, d->nc, false, b.v);
		mm.b = b.v;
	}
	mm.c = out->values;
	st = ev->dom->matmul(ev->dstate, &mm, err);
	scratch_free(ev, &a);
	scratch_free(ev, &b);
	if (st == USC_EUNSUPPORTED) {
		if (err) {
			err->code = USC_OK;
			err->message[0] = '\0';
		}
		return USC_OK;
	}
	if (st == USC_OK)
		*done = true;
	return st;
}

usc_status usc__dot_map_init(const usc_hlo_instr *in, usc__dot_map *d,
			     usc_error *err)
{
	const usc_hlo_shape *ls, *rs;
	size_t i, k;

	memset(d, 0, sizeof *d);
	if (in->operand_count < 2)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "dot needs two operands");
	ls = d->ls = &in->operands[0]->shape;
	rs = d->rs = &in->operands[1]->shape;
	d->os = &in->shape;
	d->lb = usc__attr_ints(in, "lhs_batch_dims");
	d->rb = usc__attr_ints(in, "rhs_batch_dims");
	d->lc = usc__attr_ints(in, "lhs_contracting_dims");
	d->rc = usc__attr_ints(in, "rhs_contracting_dims");
	d->nb = usc__attr_count(d->lb);
	d->nc = usc__attr_count(d->lc);
	if (ls->rank > MAXR || rs->rank > MAXR ||
	    usc__attr_count(d->rb) != d->nb || usc__attr_count(d->rc) != d->nc)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "dot needs matching batch and "
				      "contracting dimension lists");
	for (k = 0; k < d->nb; k++)
		if (d->lb->ints[k] < 0 || (size_t)d->lb->ints[k] >= ls->rank ||
		    d->rb->ints[k] < 0 || (size_t)d->rb->ints[k] >= rs->rank ||
		    ls->dims[d->lb->ints[k]] != rs->dims[d->rb->ints[k]])
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad batch dimension %zu", k);
	d->m = 1;
	for (k = 0; k < d->nc; k++) {
		if (d->lc->ints[k] < 0 || (size_t)d->lc->ints[k] >= ls->rank ||
		    d->rc->ints[k] < 0 || (size_t)d->rc->ints[k] >= rs->rank ||
		    ls->dims[d->lc->ints[k]] != rs->dims[d->rc->ints[k]])
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad contracting dimension %zu",
					      k);
		d->cdims[k] = ls->dims[d->lc->ints[k]];
		d->m *= (size_t)d->cdims[k];
	}
	for (i = 0; i < ls->rank; i++)
		if (!usc__attr_has(d->lb, (int64_t)i) && !usc__attr_has(d->lc, (int64_t)i))
			d->lfree[d->nlf++] = (int64_t)i;
	for (i = 0; i < rs->rank; i++)
		if (!usc__attr_has(d->rb, (int64_t)i) && !usc__attr_has(d->rc, (int64_t)i))
			d->rfree[d->nrf++] = (int64_t)i;
	if (d->nb + d->nlf + d->nrf != in->shape.rank)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "result rank %zu, expected %zu",
				      in->shape.rank, d->nb + d->nlf + d->nrf);
	return USC_OK;
}

void usc__dot_map_terms(const usc__dot_map *d, size_t i, size_t *lflats,
			size_t *rflats)
{
	int64_t oidx[MAXR], li[MAXR], ri[MAXR], cidx[MAXR];
	size_t j = 0, k;

	/* Result dimensions: batch, lhs free, rhs free. */
	usc__unravel(i, d->os->dims, d->os->rank, oidx);
	for (k = 0; k < d->nb; k++) {
		li[d->lb->ints[k]] = oidx[k];
		ri[d->rb->ints[k]] = oidx[k];
	}
	for (k = 0; k < d->nlf; k++)
		li[d->lfree[k]] = oidx[d->nb + k];
	for (k = 0; k < d->nrf; k++)
		ri[d->rfree[k]] = oidx[d->nb + d->nlf + k];
	memset(cidx, 0, sizeof(int64_t) * (d->nc ? d->nc : 1));
	if (d->m == 0)
		return;
	do {
		for (k = 0; k < d->nc; k++) {
			li[d->lc->ints[k]] = cidx[k];
			ri[d->rc->ints[k]] = cidx[k];
		}
		lflats[j] = usc__ravel(li, d->ls->dims, d->ls->rank);
		rflats[j++] = usc__ravel(ri, d->rs->dims, d->rs->rank);
	} while (usc__next_index(cidx, d->cdims, d->nc));
}

usc_status usc__eval_dot(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__ebuf *out,
			 size_t begin, size_t end, usc_error *err)
{
	size_t i, j, *lf = NULL, *rf;
	usc__ebuf *L = ops[0].leaves[0], *R = ops[1].leaves[0];
	usc__dot_map dm;
	sop p;
	usc_status st;

	st = usc__dot_map_init(in, &dm, err);
	if (st != USC_OK)
		return st;
	if (ev->dom->matmul && begin == 0 && end == out->count) {
		dot_dims d = {dm.nb, dm.nc, dm.nlf, dm.nrf,
			      dm.nb ? dm.lb->ints : NULL,
			      dm.nb ? dm.rb->ints : NULL,
			      dm.nc ? dm.lc->ints : NULL,
			      dm.nc ? dm.rc->ints : NULL,
			      dm.lfree, dm.rfree};
		bool done;

		st = dot_matmul(ev, in, &d, L, R, out, &done, err);
		if (st != USC_OK || done)
			return st;
	}
	lf = usc__calloc(2 * (dm.m ? dm.m : 1), sizeof *lf);
	if (!lf)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	rf = lf + (dm.m ? dm.m : 1);
	st = sop_init(&p, ev, in, dm.m, err);
	for (i = begin; st == USC_OK && i < end; i++) {
		usc__dot_map_terms(&dm, i, lf, rf);
		for (j = 0; st == USC_OK && j < dm.m; j++)
			st = sop_product(&p, USC__VAL(ev, L, lf[j]),
					 USC__VAL(ev, R, rf[j]), j, err);
		if (st == USC_OK)
			st = sop_sum(&p, dm.m, USC__VAL(ev, out, i), err);
	}
	sop_free(&p);
	usc__free(lf);
	return st;
}

/* -------------------------------------------------------- convolution */

usc_status usc__eval_conv(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__ebuf *out,
			  size_t begin, size_t end, usc_error *err)
{
	const usc_hlo_shape *ls = &in->operands[0]->shape;
	const usc_hlo_shape *ks = &in->operands[1]->shape;
	const usc_hlo_shape *os = &in->shape;
	const usc_hlo_attr *dl = usc_hlo_instr_attr(in, "dim_labels");
	const usc_hlo_attr *w = usc_hlo_instr_attr(in, "window");
	const usc_hlo_dim_labels *lab;
	int64_t fgc = 1, bgc = 1, kif, of_per_group;
	int64_t oidx[MAXR], li[MAXR], ki[MAXR], kpos[MAXR], ksp[MAXR];
	size_t ns, i, k, m;
	usc__ebuf *L = ops[0].leaves[0], *K = ops[1].leaves[0];
	sop p;
	usc_status st;

	if (!dl || dl->kind != USC_HLO_ATTR_DIM_LABELS || !dl->labels)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "convolution needs dim_labels");
	lab = dl->labels;
	ns = lab->spatial_count;
	if (ns > 0 && (!w || w->kind != USC_HLO_ATTR_WINDOW || w->count != ns))
		return usc__eval_fail(err, USC_EINVAL, in,
				      "convolution needs a window of %zu "
				      "dimensions",
				      ns);
	usc__attr_int(in, "feature_group_count", &fgc);
	usc__attr_int(in, "batch_group_count", &bgc);
	if (bgc != 1)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "convolution with batch_group_count=%lld",
				      (long long)bgc);
	kif = ks->dims[lab->kernel_input_feature];
	if (fgc < 1 || ls->dims[lab->input_feature] != kif * fgc ||
	    os->dims[lab->output_feature] % fgc != 0)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "feature_group_count=%lld does not fit "
				      "the shapes",
				      (long long)fgc);
	of_per_group = os->dims[lab->output_feature] / fgc;
	m = (size_t)kif;
	for (k = 0; k < ns; k++) {
		ksp[k] = ks->dims[lab->kernel_spatial[k]];
		m *= (size_t)ksp[k];
		if (w->window[k].stride < 1 || w->window[k].lhs_dilate < 1 ||
		    w->window[k].rhs_dilate < 1)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad window dimension %zu", k);
	}
	st = sop_init(&p, ev, in, m, err);
	for (i = begin; st == USC_OK && i < end; i++) {
		int64_t of, g, f;
		size_t j = 0;

		usc__unravel(i, os->dims, os->rank, oidx);
		of = oidx[lab->output_feature];
		g = of / of_per_group;
		li[lab->input_batch] = oidx[lab->output_batch];
		ki[lab->kernel_output_feature] = of;
		/* Input features outermost, kernel positions row-major. */
		for (f = 0; st == USC_OK && f < kif; f++) {
			li[lab->input_feature] = g * kif + f;
			ki[lab->kernel_input_feature] = f;
			memset(kpos, 0, sizeof(int64_t) * (ns ? ns : 1));
			do {
				bool ok = true;

				for (k = 0; k < ns; k++) {
					const usc_hlo_window_dim *d =
						&w->window[k];
					int64_t q = oidx[lab->output_spatial[k]] *
							    d->stride -
						    d->pad_lo +
						    kpos[k] * d->rhs_dilate;

					if (q < 0 || q % d->lhs_dilate) {
						ok = false;
						break;
					}
					q /= d->lhs_dilate;
					if (q >= ls->dims[lab->input_spatial[k]]) {
						ok = false;
						break;
					}
					li[lab->input_spatial[k]] = q;
					ki[lab->kernel_spatial[k]] =
						d->rhs_reversal
							? ksp[k] - 1 - kpos[k]
							: kpos[k];
				}
				if (ok)
					st = sop_product(
						&p,
						USC__VAL(ev, L,
							 usc__ravel(li, ls->dims,
								    ls->rank)),
						USC__VAL(ev, K,
							 usc__ravel(ki, ks->dims,
								    ks->rank)),
						j++, err);
			} while (st == USC_OK && usc__next_index(kpos, ksp, ns));
		}
		if (st == USC_OK)
			st = sop_sum(&p, j, USC__VAL(ev, out, i), err);
	}
	sop_free(&p);
	return st;
}
