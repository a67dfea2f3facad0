/*
 * The HLO verifier's rules for the ops with dimension numbers: dot,
 * convolution, gather and scatter (verify_internal.h).
 */
#include "internal.h"

#include <inttypes.h>
#include <string.h>

#include "hlo/hlo_internal.h"
#include "hlo/verify_internal.h"
#include "ulpscope/hlo_kernel.h"

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
