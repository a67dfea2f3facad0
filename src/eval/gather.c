/*
 * The ops that index with data or apply a body per element: gather,
 * scatter and map.
 */
#include "eval_internal.h"

#include <string.h>

#define MAXR USC_TENSOR_MAX_RANK

/* ------------------------------------------------------------- gather */

/*
 * The start index vector for batch position G (the indices tensor's
 * index with index_vector_dim left out), mapped into operand dims and
 * clamped (gather) or left as is (scatter); read gives the indices
 * tensor, operand k of in.
 */
static usc_status start_vector(const usc_hlo_instr *in,
			       usc__index_read_fn read, void *ctx, size_t ko,
			       const usc_hlo_shape *is, int64_t ivd,
			       const int64_t *G, const usc_hlo_attr *map,
			       int64_t *S, usc_error *err)
{
	int64_t idx[MAXR];
	size_t k, d, g = 0;
	usc_status st;

	for (k = 0; k < usc__attr_count(map); k++) {
		int64_t v;

		for (d = 0, g = 0; d < is->rank; d++)
			idx[d] = (int64_t)d == ivd ? (int64_t)k : G[g++];
		st = read(ctx, ko, usc__ravel(idx, is->dims, is->rank), &v,
			  err);
		if (st != USC_OK)
			return usc__eval_fail(err, st, in, "bad index");
		S[map->ints[k]] = v;
	}
	return USC_OK;
}

usc_status usc__gather_map_init(const usc_hlo_instr *in, usc__gather_map *g,
				usc_error *err)
{
	const usc_hlo_shape *s, *is, *os = &in->shape;
	const usc_hlo_attr *obd = usc__attr_ints(in, "operand_batching_dims");
	size_t i, j, k;

	memset(g, 0, sizeof *g);
	if (in->operand_count != 2)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "gather needs an operand and indices");
	s = &in->operands[0]->shape;
	is = &in->operands[1]->shape;
	g->in = in;
	g->offd = usc__attr_ints(in, "offset_dims");
	g->coll = usc__attr_ints(in, "collapsed_slice_dims");
	g->sim = usc__attr_ints(in, "start_index_map");
	g->ss = usc__attr_ints(in, "slice_sizes");
	if (!usc__attr_int(in, "index_vector_dim", &g->ivd))
		g->ivd = (int64_t)is->rank;
	if (usc__attr_count(obd) > 0)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "gather with operand_batching_dims");
	if (!g->ss || g->ss->count != s->rank || !g->sim || s->rank > MAXR ||
	    os->rank > MAXR || is->rank > MAXR || g->ivd < 0 ||
	    (size_t)g->ivd > is->rank)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "gather needs slice_sizes, "
				      "start_index_map and a valid "
				      "index_vector_dim");
	/* The operand dimension each offset dim of the output walks. */
	for (i = 0, j = 0; i < s->rank; i++)
		if (!usc__attr_has(g->coll, (int64_t)i)) {
			if (j >= usc__attr_count(g->offd))
				return usc__eval_fail(err, USC_EINVAL, in,
						      "offset_dims too short");
			g->odim_of_off[j++] = (int64_t)i;
		}
	for (k = 0; k < g->sim->count; k++)
		if (g->sim->ints[k] < 0 || (size_t)g->sim->ints[k] >= s->rank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "bad start_index_map");
	return USC_OK;
}

usc_status usc__gather_map_at(const usc__gather_map *g, size_t i,
			      usc__index_read_fn read, void *ctx,
			      size_t *flat, usc_error *err)
{
	const usc_hlo_instr *in = g->in;
	const usc_hlo_shape *s = &in->operands[0]->shape;
	const usc_hlo_shape *is = &in->operands[1]->shape;
	const usc_hlo_shape *os = &in->shape;
	int64_t G[MAXR], S[MAXR], oidx[MAXR], idx[MAXR];
	size_t gi = 0, off = 0, k;
	usc_status st;

	usc__unravel(i, os->dims, os->rank, oidx);
	for (k = 0; k < os->rank; k++)
		if (!usc__attr_has(g->offd, (int64_t)k))
			G[gi++] = oidx[k];
	for (k = 0; k < s->rank; k++)
		S[k] = 0;
	st = start_vector(in, read, ctx, 1, is, g->ivd, G, g->sim, S, err);
	if (st != USC_OK)
		return st;
	for (k = 0; k < s->rank; k++) {
		/* XLA clamps the start so the slice fits. */
		if (S[k] > s->dims[k] - g->ss->ints[k])
			S[k] = s->dims[k] - g->ss->ints[k];
		if (S[k] < 0)
			S[k] = 0;
		idx[k] = S[k];
	}
	for (k = 0; k < os->rank; k++)
		if (usc__attr_has(g->offd, (int64_t)k))
			idx[g->odim_of_off[off++]] += oidx[k];
	*flat = usc__ravel(idx, s->dims, s->rank);
	return USC_OK;
}

usc_status usc__eval_gather(usc_eval *ev, const usc_hlo_instr *in,
			    const usc__evalue *ops, usc__ebuf *out,
			    size_t begin, size_t end, usc_error *err)
{
	usc__operand_reader rd = {ev, ops};
	usc__gather_map g;
	size_t i;
	usc_status st;

	st = usc__gather_map_init(in, &g, err);
	if (st != USC_OK)
		return st;
	for (i = begin; i < end; i++) {
		size_t flat;

		st = usc__gather_map_at(&g, i, usc__read_operand_index, &rd,
					&flat, err);
		if (st != USC_OK)
			return st;
		usc__copy_values(ev, USC__VAL(ev, out, i),
				 USC__VAL(ev, ops[0].leaves[0], flat), 1);
	}
	return USC_OK;
}

/* ------------------------------------------------------------ scatter */

usc_status usc__eval_scatter(usc_eval *ev, const usc_hlo_instr *in,
			     const usc__evalue *ops, usc__ebuf **outs,
			     usc_error *err)
{
	size_t N = (in->operand_count - 1) / 2, i, k, j;
	const usc_hlo_shape *s, *is, *us;
	const usc_hlo_attr *uwd = usc__attr_ints(in, "update_window_dims");
	const usc_hlo_attr *iwd = usc__attr_ints(in, "inserted_window_dims");
	const usc_hlo_attr *sdo =
		usc__attr_ints(in, "scatter_dims_to_operand_dims");
	const usc_hlo_attr *ibd = usc__attr_ints(in, "input_batching_dims");
	int64_t ivd, odim_of_win[MAXR], wsize[MAXR], G[MAXR], S[MAXR];
	int64_t uidx[MAXR], idx[MAXR];
	const void *args[128];
	void *dst[64];
	usc__operand_reader rd = {ev, ops};
	usc__sfn *fn;
	usc_status st;

	if (in->operand_count < 3 || in->operand_count % 2 == 0 || N > 64 ||
	    in->called_count < 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "scatter needs N operands, indices, N "
				      "updates and to_apply");
	s = &in->operands[0]->shape;
	is = &in->operands[N]->shape;
	us = &in->operands[N + 1]->shape;
	if (!usc__attr_int(in, "index_vector_dim", &ivd))
		ivd = (int64_t)is->rank;
	if (usc__attr_count(ibd) > 0)
		return usc__eval_fail(err, USC_EUNSUPPORTED, in,
				      "scatter with input_batching_dims");
	if (!sdo || s->rank > MAXR || us->rank > MAXR || ivd < 0 ||
	    (size_t)ivd > is->rank)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "scatter needs "
				      "scatter_dims_to_operand_dims and a "
				      "valid index_vector_dim");
	st = usc__sfn_get(ev, in->called[0], &fn, err);
	if (st != USC_OK)
		return st;
	if (fn->nparams != 2 * N || fn->nresults != N)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "scatter body has the wrong arity");
	/* The result starts as a copy of the operands. */
	for (k = 0; k < N; k++)
		usc__copy_values(ev, outs[k]->values,
				 ops[k].leaves[0]->values, outs[k]->count);
	for (i = 0, j = 0; i < s->rank; i++) {
		if (usc__attr_has(iwd, (int64_t)i)) {
			wsize[i] = 1;
			continue;
		}
		if (j >= usc__attr_count(uwd))
			return usc__eval_fail(err, USC_EINVAL, in,
					      "update_window_dims too short");
		odim_of_win[j] = (int64_t)i;
		wsize[i] = us->dims[uwd->ints[j]];
		j++;
	}
	if (ops[N + 1].leaves[0]->count == 0)
		return USC_OK;
	memset(uidx, 0, sizeof uidx);
	do {
		size_t g = 0, w = 0;
		bool ok = true;

		for (k = 0; k < us->rank; k++)
			if (!usc__attr_has(uwd, (int64_t)k))
				G[g++] = uidx[k];
		for (k = 0; k < s->rank; k++)
			S[k] = 0;
		st = start_vector(in, usc__read_operand_index, &rd, N, is, ivd,
				  G, sdo, S, err);
		if (st != USC_OK)
			return st;
		/*
		 * An update whose whole window does not fit the operand is
		 * skipped, as XLA's evaluator does (the semantics leave it
		 * implementation-defined).
		 */
		for (k = 0; k < s->rank; k++) {
			if (S[k] < 0 || S[k] + wsize[k] > s->dims[k])
				ok = false;
			idx[k] = S[k];
		}
		if (ok) {
			size_t flat, uf;

			for (k = 0; k < us->rank; k++)
				if (usc__attr_has(uwd, (int64_t)k))
					idx[odim_of_win[w++]] += uidx[k];
			flat = usc__ravel(idx, s->dims, s->rank);
			uf = usc__ravel(uidx, us->dims, us->rank);
			for (k = 0; k < N; k++) {
				dst[k] = USC__VAL(ev, outs[k], flat);
				args[k] = dst[k];
				args[N + k] =
					USC__VAL(ev, ops[N + 1 + k].leaves[0],
						 uf);
			}
			st = usc__sfn_call(ev, fn, args, dst, err);
			if (st != USC_OK)
				return st;
		}
	} while (usc__next_index(uidx, us->dims, us->rank));
	return USC_OK;
}

/* ---------------------------------------------------------------- map */

usc_status usc__eval_map(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__ebuf *out,
			 size_t begin, size_t end, usc_error *err)
{
	const void *args[64];
	void *dst[1];
	usc__sfn *fn;
	size_t i, k, n = in->operand_count;
	usc_status st;

	if (n > 64 || in->called_count < 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "map needs to_apply and at most 64 "
				      "operands");
	st = usc__sfn_get(ev, in->called[0], &fn, err);
	if (st != USC_OK)
		return st;
	if (fn->nparams != n || fn->nresults != 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "map body has the wrong arity");
	for (i = begin; i < end; i++) {
		for (k = 0; k < n; k++)
			args[k] = USC__VAL(ev, ops[k].leaves[0],
					   ops[k].leaves[0]->count == 1 ? 0 : i);
		dst[0] = USC__VAL(ev, out, i);
		st = usc__sfn_call(ev, fn, args, dst, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}
