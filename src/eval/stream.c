/*
 * Streamed evaluation: a loop computation (elementwise ops and
 * broadcasts of one output size) evaluated tile by tile, so that its
 * intermediates exist a window at a time; at the top of a run the
 * parameters are loaded and the root written out a tile at a time too.
 */
#include "eval_internal.h"

#include <string.h>

#include "ulpscope/dtype.h"
#include "eval_values.h"

/* ------------------------------------------------------------ tiles */

/* Ops a streamed computation evaluates window by window. */
static bool tiled_op(const usc_hlo_instr *in)
{
	if (in->opcode == USC_HLO_OP_BROADCAST)
		return true;
	return usc_hlo_opcode_category(in->opcode) == USC_HLO_CAT_ELEMENTWISE &&
	       in->opcode != USC_HLO_OP_MAP &&
	       in->opcode != USC_HLO_OP_BITCAST_CONVERT;
}

/* A value that exists whole before the tiles run. */
static bool whole_input(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_PARAMETER ||
	       (in->opcode == USC_HLO_OP_CONSTANT &&
		in->shape.kind == USC_HLO_SHAPE_ARRAY &&
		usc_hlo_shape_elements(&in->shape) == 1);
}

/*
 * Whether c is a loop computation that can stream: its root and every
 * tiled op have the root's element count n (at least two tiles of it),
 * elementwise operands have n elements or one (a scalar constant), and a
 * broadcast reads a whole input, so that output element i of every
 * instruction needs only element i of its operands or whole inputs.
 */
bool usc__eval_streamable(const usc_hlo_computation *c, size_t tile)
{
	int64_t n;

	if (!c->root || c->root->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    !tiled_op(c->root))
		return false;
	n = usc_hlo_shape_elements(&c->root->shape);
	if (n < 0 || (uint64_t)n / 2 < tile)
		return false;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (whole_input(in))
			continue;
		if (!tiled_op(in) || in->shape.kind != USC_HLO_SHAPE_ARRAY ||
		    usc_hlo_shape_elements(&in->shape) != n)
			return false;
		for (size_t k = 0; k < in->operand_count; k++) {
			const usc_hlo_instr *o = in->operands[k];
			int64_t m = o->shape.kind == USC_HLO_SHAPE_ARRAY
					    ? usc_hlo_shape_elements(&o->shape)
					    : -1;

			if (in->opcode == USC_HLO_OP_BROADCAST
				    ? !whole_input(o)
				    : !(m == n || (m == 1 && whole_input(o))))
				return false;
		}
	}
	return true;
}

/*
 * Where a streamed computation reads its parameters and leaves its root.
 * Nested in a whole evaluation (a fusion's body inside a computation that
 * does not stream), the parameters are whole values (args) and the root
 * is returned whole.  At the top of a run (run_streamed below), parameter
 * j is the bound tensor of entry parameter pmap[j], loaded tile by tile,
 * and each tile of the root goes to the output tensor, the kept values
 * and the visitor as soon as it is computed, so that neither the inputs
 * nor the outputs exist whole as domain values.
 */
typedef struct stream_io {
	const usc__evalue *args;
	size_t nargs;
	const size_t *pmap;         /* top: non-NULL, one per parameter */
	size_t npmap;
	usc_tensor *out;            /* top: the output tensor */
	usc__ebuf *keep;            /* top: whole values kept, or NULL */
	const usc__eval_stream *s;  /* top: visitor and subset, or NULL */
} stream_io;

/*
 * The source elements [*lo, *hi) that broadcast b reads for its outputs
 * [t0, t1).  A row-major range of outputs does not map to a monotone
 * range of sources (a row vector broadcast over rows wraps around), so
 * the indices are walked, unless the source is no larger than the tile,
 * when it is taken whole.  Attributes that usc__eval_data would refuse
 * take the whole source too, and let it report them.
 */
static void broadcast_span(const usc_hlo_instr *b, size_t t0, size_t t1,
			   size_t *lo, size_t *hi)
{
	const usc_hlo_shape *s = &b->operands[0]->shape, *o = &b->shape;
	const usc_hlo_attr *a = usc__attr_ints(b, "dimensions");
	size_t count = (size_t)usc_hlo_shape_elements(s), d, i;
	int64_t oi[USC_TENSOR_MAX_RANK], si[USC_TENSOR_MAX_RANK];

	*lo = 0;
	*hi = count;
	if (count <= t1 - t0 || !a || a->count != s->rank ||
	    o->rank > USC_TENSOR_MAX_RANK || s->rank > USC_TENSOR_MAX_RANK)
		return;
	for (d = 0; d < s->rank; d++)
		if (a->ints[d] < 0 || (size_t)a->ints[d] >= o->rank ||
		    o->dims[a->ints[d]] != s->dims[d])
			return;
	*lo = count;
	*hi = 0;
	usc__unravel(t0, o->dims, o->rank, oi);
	for (i = t0; i < t1; i++) {
		size_t f;

		for (d = 0; d < s->rank; d++)
			si[d] = oi[a->ints[d]];
		f = usc__ravel(si, s->dims, s->rank);
		if (f < *lo)
			*lo = f;
		if (f + 1 > *hi)
			*hi = f + 1;
		usc__next_index(oi, o->dims, o->rank);
	}
}

/*
 * The elements [*lo, *hi) of parameter p that the tile [t0, t1) reads:
 * the tile itself for an elementwise operand of the output's size, the
 * one element of a scalar, what a broadcast reads; their union when p
 * has several uses.
 */
static void param_span(const usc_hlo_computation *c, const bool *live,
		       const usc_hlo_instr *p, size_t total, size_t t0,
		       size_t t1, size_t *lo, size_t *hi)
{
	size_t count = (size_t)usc_hlo_shape_elements(&p->shape);

	*lo = SIZE_MAX;
	*hi = 0;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (!live[in->index] || whole_input(in))
			continue;
		for (size_t k = 0; k < in->operand_count; k++) {
			size_t a, b;

			if (in->operands[k] != p)
				continue;
			if (in->opcode == USC_HLO_OP_BROADCAST) {
				broadcast_span(in, t0, t1, &a, &b);
			} else if (count == total) {
				a = t0;
				b = t1;
			} else {
				a = 0;
				b = count;
			}
			if (a < *lo)
				*lo = a;
			if (b > *hi)
				*hi = b;
		}
	}
	if (*lo >= *hi)
		*lo = *hi = 0;
}

/*
 * Loads the elements [lo, hi) of tensor t into the window of v (a
 * parameter of count elements), growing the window when it is too small.
 */
static usc_status load_window(usc_eval *ev, const usc_hlo_instr *p,
			      const usc_tensor *t, usc__evalue *v, size_t lo,
			      size_t hi, usc_error *err)
{
	usc__ebuf *b = v->leaves[0];
	usc_dtype dt = usc_tensor_dtype(t);
	usc_status st;

	if (!b || b->len < hi - lo) {
		usc__ebuf_release(ev, b);
		v->leaves[0] = NULL;
		st = usc__ebuf_new_window(
			ev, dt, (size_t)usc_hlo_shape_elements(&p->shape),
			hi - lo, &b, err);
		if (st != USC_OK)
			return st;
		v->leaves[0] = b;
	}
	b->base = lo;
	if (usc__array_path(ev->dom->load_array != NULL, t, lo, hi))
		return ev->dom->load_array(ev->dstate, dt, usc__enc_at(t, lo),
					   hi - lo, USC__VAL(ev, b, lo), err);
	for (size_t k = lo; k < hi; k++) {
		uint64_t bits;

		st = usc_tensor_get_bits(t, k, &bits);
		if (st != USC_OK)
			return usc__eval_fail(err, st, p,
					      "cannot read element %zu of the "
					      "parameter",
					      k);
		st = ev->dom->load(ev->dstate, dt, bits, USC__VAL(ev, b, k),
				   err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* Whether a byte map wants any element of [t0, t1). */
static bool any_wanted(const uint8_t *wanted, size_t t0, size_t t1)
{
	if (!wanted)
		return true;
	for (size_t k = t0; k < t1; k++)
		if (wanted[k])
			return true;
	return false;
}

/*
 * A finished tile of the root at the top of a run: its encodings into the
 * output tensor, its values to the kept copy and to the visitor.
 */
static usc_status emit_tile(usc_eval *ev, const stream_io *io,
			    usc__ebuf *root, size_t t0, size_t t1,
			    usc_error *err)
{
	size_t done = t0;
	usc_status st;

	if (io->out &&
	    usc__array_path(ev->dom->to_output_array != NULL, io->out, t0,
			    t1) &&
	    usc_tensor_dtype(io->out) == root->dtype) {
		st = ev->dom->to_output_array(ev->dstate, root->dtype,
					      USC__VAL(ev, root, t0), t1 - t0,
					      usc__enc_at_mut(io->out, t0),
					      err);
		if (st != USC_OK)
			return st;
		done = t1;
	}
	for (size_t k = done; io->out && k < t1; k++) {
		uint64_t bits;

		st = ev->dom->to_output(ev->dstate, root->dtype,
					USC__VAL(ev, root, k), &bits, NULL,
					err);
		if (st != USC_OK)
			return st;
		st = usc_tensor_set_bits(io->out, k, bits);
		if (st != USC_OK)
			return usc__fail(err, st, "cannot write output element "
						  "%zu", k);
	}
	if (io->keep)
		usc__copy_values(ev, USC__VAL(ev, io->keep, t0),
				 USC__VAL(ev, root, t0), t1 - t0);
	if (io->s && io->s->visit)
		return io->s->visit(io->s->ctx, 0, t0, t1 - t0,
				    USC__VAL(ev, root, t0), root->dtype, err);
	return USC_OK;
}

/*
 * Whether a streamed instruction needs no values of its own: a broadcast
 * of a one-element whole input (its users, all elementwise, read the
 * scalar as a scalar operand), or an op the domain says gives back its
 * operand (domain.h, identity) on an operand of its own element count.
 */
static bool stream_alias(usc_eval *ev, const usc_hlo_instr *in)
{
	usc__dom_op op;

	if (in->operand_count != 1)
		return false;
	if (in->opcode == USC_HLO_OP_BROADCAST)
		return whole_input(in->operands[0]) &&
		       usc_hlo_shape_elements(&in->operands[0]->shape) == 1;
	if (!ev->dom->identity ||
	    usc_hlo_shape_elements(&in->operands[0]->shape) !=
		    usc_hlo_shape_elements(&in->shape) ||
	    usc__build_op(in, &op, NULL) != USC_OK)
		return false;
	return ev->dom->identity(ev->dstate, &op);
}

/*
 * Evaluates a streamable computation tile by tile: every intermediate is
 * a window of tile elements, reused from tile to tile; the root is whole
 * when nested, a window too at the top of a run, where the parameters are
 * also loaded a window at a time.  Each element sees the same ops in the
 * same order as in the whole evaluation, so the values are identical.
 */
static usc_status eval_streamed(usc_eval *ev, const usc_hlo_computation *c,
				const stream_io *io, size_t tile,
				usc__evalue *result, usc_error *err)
{
	size_t n = c->instr_count, total, t0, i, k;
	usc__evalue *vals = usc__calloc(n ? n : 1, sizeof *vals);
	usc__evalue *ops = usc__calloc(4, sizeof *ops);
	size_t *order = usc__calloc(n ? n : 1, sizeof *order);
	bool *live = usc__calloc(n ? n : 1, sizeof *live);
	size_t *span = usc__calloc(2 * (n ? n : 1), sizeof *span);
	bool *alias = usc__calloc(n ? n : 1, sizeof *alias);
	const uint8_t *wanted = io->s && io->s->wanted ? io->s->wanted[0]
						       : NULL;
	bool top = io->pmap != NULL;
	size_t r0 = 0, r1 = SIZE_MAX;
	usc_status st = USC_OK;

	if (!vals || !ops || !order || !live || !span || !alias) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = usc__topo_order(c, order, err);
	if (st != USC_OK)
		goto done;
	/* Live: the root and what it reaches (walked backwards). */
	live[c->root->index] = true;
	for (i = n; i-- > 0;) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		if (live[in->index])
			for (k = 0; k < in->operand_count; k++)
				live[in->operands[k]->index] = true;
	}
	total = (size_t)usc_hlo_shape_elements(&c->root->shape);
	if (top && io->s && io->s->count) {
		r0 = (size_t)io->s->first;
		r1 = r0 + (size_t)io->s->count;
	}
	/* Whole inputs first, then the windows (and the whole root). */
	for (i = 0; st == USC_OK && i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];

		if (!live[in->index])
			continue;
		if (top && in->opcode == USC_HLO_OP_PARAMETER) {
			/* Loaded per tile; the window comes with the first. */
			if (in->parameter_number < 0 ||
			    (size_t)in->parameter_number >= io->npmap)
				st = usc__eval_fail(err, USC_EINVAL, in,
						    "parameter %lld has no "
						    "argument",
						    (long long)
							    in->parameter_number);
			else
				st = usc__evalue_alloc(&vals[in->index], 1,
						       err);
			span[2 * in->index] = SIZE_MAX;
		} else if (whole_input(in)) {
			st = usc__eval_instr(ev, in, NULL, io->args, io->nargs,
					&vals[in->index], err);
		} else if (in != c->root && stream_alias(ev, in)) {
			/* Pointed at its operand's values each tile. */
			alias[in->index] = true;
			st = usc__evalue_alloc(&vals[in->index], 1, err);
		} else if ((st = usc__evalue_alloc(&vals[in->index], 1, err)) ==
			   USC_OK) {
			st = usc__ebuf_new_window(
				ev, in->shape.dtype, total,
				in == c->root && !top ? total : tile,
				&vals[in->index].leaves[0], err);
		}
	}
	for (t0 = 0; st == USC_OK && t0 < total; t0 += tile) {
		size_t t1 = total - t0 < tile ? total : t0 + tile;
		size_t a = t0 > r0 ? t0 : r0, b = t1 < r1 ? t1 : r1;

		/* Outside the range, or no wanted element in it. */
		if (a >= b ||
		    !any_wanted(wanted ? wanted + (a - r0) : NULL, 0, b - a))
			continue;
		for (i = 0; st == USC_OK && i < n; i++) {
			const usc_hlo_instr *in = c->instrs[order[i]];
			usc__ebuf *out;

			if (!live[in->index])
				continue;
			if (top && in->opcode == USC_HLO_OP_PARAMETER) {
				size_t lo, hi;

				param_span(c, live, in, total, t0, t1, &lo,
					   &hi);
				/* A scalar is loaded once, not per tile. */
				if (span[2 * in->index] == lo &&
				    span[2 * in->index + 1] == hi)
					continue;
				st = load_window(
					ev, in,
					ev->bound[io->pmap[in->parameter_number]],
					&vals[in->index], lo, hi, err);
				span[2 * in->index] = st == USC_OK ? lo
								   : SIZE_MAX;
				span[2 * in->index + 1] = hi;
				continue;
			}
			if (whole_input(in))
				continue;
			if (alias[in->index]) {
				usc__ebuf *src =
					vals[in->operands[0]->index].leaves[0];

				usc__ebuf_release(ev,
						  vals[in->index].leaves[0]);
				src->refs++;
				vals[in->index].leaves[0] = src;
				continue;
			}
			out = vals[in->index].leaves[0];
			if (in != c->root || top)
				out->base = t0;
			for (k = 0; k < in->operand_count && k < 4; k++)
				ops[k] = vals[in->operands[k]->index];
			if (in->opcode == USC_HLO_OP_BROADCAST)
				st = usc__eval_data(ev, in, ops, out, t0, t1,
						    err);
			else
				st = usc__eval_elementwise(ev, in, ops, out,
								 t0, t1, err);
		}
		if (st == USC_OK && top) {
			st = emit_tile(ev, io, vals[c->root->index].leaves[0],
				       t0, t1, err);
			ev->last_elements += t1 - t0;
			ev->last_tiles++;
		}
	}
	if (st == USC_OK && !top) {
		*result = vals[c->root->index];
		vals[c->root->index].leaves = NULL;
		vals[c->root->index].n = 0;
	}
done:
	if (vals)
		for (i = 0; i < n; i++)
			usc__evalue_clear(ev, &vals[i]);
	usc__free(vals);
	usc__free(ops);
	usc__free(order);
	usc__free(live);
	usc__free(span);
	usc__free(alias);
	return st;
}

/* A computation nested in a whole evaluation, streamed (walk.c). */
usc_status usc__eval_stream_nested(usc_eval *ev, const usc_hlo_computation *c,
				   const usc__evalue *args, size_t nargs,
				   size_t tile, usc__evalue *result,
				   usc_error *err)
{
	stream_io io;

	memset(&io, 0, sizeof io);
	io.args = args;
	io.nargs = nargs;
	return eval_streamed(ev, c, &io, tile, result, err);
}

/* ------------------------------------------------ the top of a run */

/*
 * The loop computation a run can stream from the bound tensors to the
 * output tensor: the entry itself, or the computation that its root
 * fusion (or call) calls when that root reads entry parameters only,
 * through any depth of such wrappers (the shape of a kernel file: its
 * parameters and one kLoop fusion).  *pmap receives, for each parameter
 * of it, the entry parameter it reads (*npmap of them).  *loop NULL: none,
 * the run evaluates whole.
 */
usc_status usc__eval_top_loop(const usc_eval *ev, size_t tile,
			      const usc_hlo_computation **loop, size_t **pmap,
			      size_t *npmap, usc_error *err)
{
	const usc_hlo_computation *c = ev->comp;
	const usc_hlo_shape *want = &c->root->shape;
	size_t *map = usc__calloc(ev->nparams ? ev->nparams : 1, sizeof *map);
	size_t nmap = ev->nparams;

	*loop = NULL;
	*pmap = NULL;
	if (!map)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t j = 0; j < nmap; j++)
		map[j] = j;
	for (int depth = 0; depth < 64; depth++) {
		const usc_hlo_instr *r = c->root;
		const usc_hlo_computation *callee;
		size_t *next, nnext;

		if (usc__eval_streamable(c, tile)) {
			/* The output tensor takes the entry root's shape. */
			bool same = want->kind == USC_HLO_SHAPE_ARRAY &&
				    r->shape.dtype == want->dtype &&
				    r->shape.rank == want->rank;

			for (size_t d = 0; same && d < want->rank; d++)
				same = r->shape.dims[d] == want->dims[d];
			if (same) {
				*loop = c;
				*pmap = map;
				*npmap = nmap;
				return USC_OK;
			}
			break;
		}
		if ((r->opcode != USC_HLO_OP_FUSION &&
		     r->opcode != USC_HLO_OP_CALL) ||
		    r->called_count < 1)
			break;
		for (size_t k = 0; k < r->operand_count; k++)
			if (r->operands[k]->opcode != USC_HLO_OP_PARAMETER ||
			    r->operands[k]->parameter_number < 0 ||
			    (size_t)r->operands[k]->parameter_number >= nmap)
				goto none;
		callee = r->called[0];
		nnext = r->operand_count;
		next = usc__calloc(nnext ? nnext : 1, sizeof *next);
		if (!next) {
			usc__free(map);
			return usc__fail(err, USC_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < nnext; k++)
			next[k] = map[r->operands[k]->parameter_number];
		usc__free(map);
		map = next;
		nmap = nnext;
		c = callee;
	}
none:
	usc__free(map);
	return USC_OK;
}

/* A run whose entry streams (top_loop): one output, made tile by tile. */
usc_status usc__eval_run_streamed(usc_eval *ev, const usc_hlo_computation *loop,
				  const size_t *pmap, size_t npmap, size_t tile,
				  const usc__eval_stream *s, usc_error *err)
{
	const usc_hlo_shape *shape = &ev->comp->root->shape;
	usc__evalue unused = {0, NULL};
	usc__ebuf *keep = NULL;
	stream_io io;
	usc_status st;

	ev->outputs = usc__calloc(1, sizeof *ev->outputs);
	if (!ev->outputs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = s && s->no_tensor ? USC_OK
			       : usc_tensor_create(shape->dtype, shape->rank,
						   shape->dims,
						   &ev->outputs[0], err);
	if (st == USC_OK && s && s->keep)
		st = usc__ebuf_new(ev, loop->root->shape.dtype,
				   (size_t)usc_hlo_shape_elements(shape), &keep,
				   err);
	if (st == USC_OK) {
		memset(&io, 0, sizeof io);
		io.pmap = pmap;
		io.npmap = npmap;
		io.out = ev->outputs[0];
		io.keep = keep;
		io.s = s;
		st = eval_streamed(ev, loop, &io, tile, &unused, err);
	}
	if (st == USC_OK && keep) {
		st = usc__evalue_alloc(&ev->kept, 1, err);
		if (st == USC_OK) {
			ev->kept.leaves[0] = keep;
			keep = NULL;
		}
	}
	usc__ebuf_release(ev, keep);
	if (st != USC_OK) {
		usc__eval_free_outputs(ev);
		usc__evalue_clear(ev, &ev->kept);
	}
	return st;
}
