/*
 * sort and XLA's TopK custom call.
 *
 * The order is decided once, in the reference domain, by the comparator
 * computation on the reference's values (a stable merge sort: equal
 * elements keep their operand order, which is also a legitimate result
 * of a sort that is not stable).  The permutation goes into the trace
 * (control.h), and every domain moves its own values by it: the oracle's
 * enclosures and the envelope's sets of element k go where the
 * reference's element k went.
 */
#include "control.h"

#include <string.h>

#include "ulpscope/hlo_kernel.h"

/* ------------------------------------------------------------ checks */

static const usc_hlo_instr *param_of(const usc_hlo_computation *c, size_t k)
{
	for (size_t i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number == (int64_t)k)
			return c->instrs[i];
	return NULL;
}

/* TopK's shapes: x [..., n] -> (x's type [..., k], s32[..., k]). */
static usc_status topk_shape(const usc_hlo_instr *in, size_t *rows,
			     size_t *n, size_t *k, usc_error *err)
{
	const usc_hlo_shape *x = &in->operands[0]->shape, *s = &in->shape;
	const usc_hlo_shape *v, *ix;
	char a[256], b[256];
	bool ok;

	ok = x->kind == USC_HLO_SHAPE_ARRAY && x->rank >= 1 &&
	     s->kind == USC_HLO_SHAPE_TUPLE && s->tuple_count == 2;
	v = ok ? &s->tuple[0] : NULL;
	ix = ok ? &s->tuple[1] : NULL;
	ok = ok && v->kind == USC_HLO_SHAPE_ARRAY &&
	     ix->kind == USC_HLO_SHAPE_ARRAY && v->rank == x->rank &&
	     ix->rank == x->rank && v->dtype == x->dtype &&
	     ix->dtype == USC_S32;
	for (size_t d = 0; ok && d < x->rank; d++)
		ok = v->dims[d] == ix->dims[d] &&
		     (d + 1 == x->rank ? v->dims[d] <= x->dims[d]
				       : v->dims[d] == x->dims[d]);
	if (!ok)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "TopK of %s has shape %s; it must be "
				      "(values, s32 indices) with the "
				      "operand's dimensions but the last, "
				      "which is k <= the operand's",
				      usc_hlo_shape_format(x, a, sizeof a),
				      usc_hlo_shape_format(s, b, sizeof b));
	*n = (size_t)x->dims[x->rank - 1];
	*k = (size_t)v->dims[x->rank - 1];
	*rows = *n ? (size_t)usc_hlo_shape_elements(x) / *n : 0;
	return USC_OK;
}

usc_status usc__sort_check(usc_eval *ev, const usc_hlo_instr *in,
			   const usc_hlo_computation *cmp,
			   const usc_dtype *types, size_t n,
			   usc_error *err)
{
	const char *what = in->opcode == USC_HLO_OP_SORT ? "sort" : "TopK";
	size_t np = 0;
	char a[256];

	for (size_t i = 0; i < cmp->instr_count; i++)
		np += cmp->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	if (np != 2 * n)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "%s comparator '%s' takes %zu "
				      "parameters; it must take %zu (lhs and "
				      "rhs of each of %zu operands)",
				      what, cmp->name, np, 2 * n, n);
	for (size_t k = 0; k < 2 * n; k++) {
		const usc_hlo_instr *p = param_of(cmp, k);

		if (!p || p->shape.kind != USC_HLO_SHAPE_ARRAY ||
		    p->shape.rank != 0 || p->shape.dtype != types[k / 2])
			return usc__eval_fail(
				err, USC_EINVAL, in,
				"%s comparator '%s': parameter %zu is %s, "
				"but it must be %s[] (the %s of operand "
				"%zu's elements)",
				what, cmp->name, k,
				p ? usc_hlo_shape_format(&p->shape, a,
							 sizeof a)
				  : "missing",
				usc_dtype_name(types[k / 2]),
				k % 2 ? "rhs" : "lhs", k / 2);
	}
	if (!cmp->root || cmp->root->shape.kind != USC_HLO_SHAPE_ARRAY ||
	    cmp->root->shape.rank != 0 || cmp->root->shape.dtype != USC_PRED)
		return usc__eval_fail(
			err, USC_EINVAL, in,
			"%s comparator '%s' returns %s; it must return pred[]",
			what, cmp->name,
			cmp->root ? usc_hlo_shape_format(&cmp->root->shape, a,
							 sizeof a)
				  : "nothing");
	if (in->opcode == USC_HLO_OP_SORT) {
		const usc_hlo_attr *d = usc__attr_ints(in, "dimensions");
		const usc_hlo_shape *s = &in->operands[0]->shape;

		if (!d || d->count != 1 || d->ints[0] < 0 ||
		    (size_t)d->ints[0] >= s->rank)
			return usc__eval_fail(err, USC_EINVAL, in,
					      "sort needs dimensions={D}, one "
					      "dimension of its operands");
		for (size_t k = 0; k < in->operand_count; k++) {
			const usc_hlo_shape *o = &in->operands[k]->shape;
			bool same = o->kind == USC_HLO_SHAPE_ARRAY &&
				    o->rank == s->rank;

			for (size_t j = 0; same && j < s->rank; j++)
				same = o->dims[j] == s->dims[j];
			if (!same)
				return usc__eval_fail(
					err, USC_EINVAL, in,
					"sort operand %zu has shape %s, not "
					"operand 0's dimensions",
					k, usc_hlo_shape_format(o, a, sizeof a));
		}
	} else {
		size_t rows, nn, k;
		usc_status st = topk_shape(in, &rows, &nn, &k, err);

		if (st != USC_OK)
			return st;
	}
	/* Only the reference runs the comparator (the order is its). */
	if (ev->opts.domain == USC_DOMAIN_REFERENCE) {
		usc__sfn *fn;

		return usc__sfn_get(ev, cmp, &fn, err);
	}
	return USC_OK;
}

size_t usc__sort_trace_len(const usc_hlo_instr *in)
{
	size_t rows, n, k;

	if (in->opcode == USC_HLO_OP_SORT)
		return (size_t)usc_hlo_shape_elements(&in->operands[0]->shape);
	if (topk_shape(in, &rows, &n, &k, NULL) != USC_OK)
		return 0;
	return rows * k;
}

/* -------------------------------------------------------- the sort */

/* Whether element a goes before b (the comparator on a, b). */
static usc_status less(const usc__sort_cmp *c, size_t a, size_t b, bool *out,
		       usc_error *err)
{
	const void *args[2 * (2 * USC__DOM_MAX_ARGS + 2)];
	unsigned char res[64];
	void *results[1] = {res};
	usc_eval *ev = c->ev;
	size_t vs = ev->dom->value_size;
	usc_status st;

	for (size_t k = 0; k < c->nops; k++) {
		args[2 * k] = (const unsigned char *)c->vals[k] + a * vs;
		args[2 * k + 1] = (const unsigned char *)c->vals[k] + b * vs;
	}
	/* The reference's values are plain bytes (its value_size is 8). */
	if (vs > sizeof res || ev->dom->init)
		return usc__fail(err, USC_EINTERNAL,
				 "the comparator runs in the reference domain "
				 "only");
	st = usc__sfn_call(ev, c->fn, args, results, err);
	if (st == USC_OK)
		*out = ev->dom->is_true(ev->dstate, res);
	return st;
}

usc_status usc__sort_stable(const usc__sort_cmp *cmp, size_t *perm,
			    size_t *tmp, size_t n, usc_error *err)
{
	/* Bottom-up merge sort: stable, n log n comparator calls. */
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi) {
				bool rl = false;
				usc_status st = less(cmp, perm[j], perm[i], &rl,
						     err);

				if (st != USC_OK)
					return st;
				/* Right first only if strictly less. */
				tmp[o++] = rl ? perm[j++] : perm[i++];
			}
			while (i < mid)
				tmp[o++] = perm[i++];
			while (j < hi)
				tmp[o++] = perm[j++];
		}
		memcpy(perm, tmp, n * sizeof *perm);
	}
	return USC_OK;
}

/* The comparator of a sort or TopK, compiled in the reference domain. */
static usc_status comparator(usc_eval *ev, const usc_hlo_instr *in,
			     usc__sfn **fn, usc_error *err)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(
		in, in->opcode == USC_HLO_OP_SORT ? "to_apply"
						  : "called_computations");

	if (!a || a->kind != USC_HLO_ATTR_COMPUTATIONS || a->count != 1)
		return usc__eval_fail(err, USC_EINVAL, in,
				      "no comparator computation");
	return usc__sfn_get(ev, a->comps[0], fn, err);
}

/* Whole arrays of the operands' values, base 0 (as a whole run has). */
static const void *values_of(usc_eval *ev, const usc__ebuf *b)
{
	return USC__VAL(ev, b, 0);
}

usc_status usc__eval_sort(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__evalue *res,
			  bool record, int64_t *order, usc_error *err)
{
	const usc_hlo_shape *s = &in->operands[0]->shape;
	size_t nops = in->operand_count, total, len, inner = 1, outer;
	const void *vals[2 * USC__DOM_MAX_ARGS + 2];
	size_t *perm = NULL, *tmp = NULL;
	int64_t d = usc__attr_ints(in, "dimensions")->ints[0];
	usc_status st;

	total = (size_t)usc_hlo_shape_elements(s);
	len = (size_t)s->dims[d];
	for (size_t j = (size_t)d + 1; j < s->rank; j++)
		inner *= (size_t)s->dims[j];
	outer = len && inner ? total / (len * inner) : 0;
	st = usc__evalue_alloc(res, nops, err);
	for (size_t k = 0; st == USC_OK && k < nops; k++)
		st = usc__ebuf_new(ev, ops[k].leaves[0]->dtype, total,
				   &res->leaves[k], err);
	if (st == USC_OK && record) {
		usc__sort_cmp cmp;

		cmp.ev = ev;
		cmp.nops = nops;
		cmp.vals = vals;
		for (size_t k = 0; k < nops; k++)
			vals[k] = values_of(ev, ops[k].leaves[0]);
		st = comparator(ev, in, &cmp.fn, err);
		perm = usc__calloc(len ? len : 1, sizeof *perm);
		tmp = usc__calloc(len ? len : 1, sizeof *tmp);
		if (st == USC_OK && (!perm || !tmp))
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		for (size_t o = 0; st == USC_OK && o < outer; o++)
			for (size_t i = 0; st == USC_OK && i < inner; i++) {
				size_t base = o * len * inner + i;

				for (size_t j = 0; j < len; j++)
					perm[j] = base + j * inner;
				st = usc__sort_stable(&cmp, perm, tmp, len,
						      err);
				for (size_t j = 0; st == USC_OK && j < len;
				     j++)
					order[base + j * inner] =
						(int64_t)perm[j];
			}
	}
	usc__free(perm);
	usc__free(tmp);
	for (size_t o = 0; st == USC_OK && o < total; o++) {
		size_t src = (size_t)order[o];

		if (src >= total)
			return usc__eval_fail(err, USC_EINTERNAL, in,
					      "bad permutation in the trace");
		for (size_t k = 0; k < nops; k++)
			usc__copy_values(ev, USC__VAL(ev, res->leaves[k], o),
					 USC__VAL(ev, ops[k].leaves[0], src),
					 1);
	}
	return st;
}

usc_status usc__eval_topk(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__evalue *res,
			  bool record, int64_t *order, usc_error *err)
{
	size_t rows, n, k;
	usc__ebuf *x = ops[0].leaves[0], *idx = NULL;
	size_t *perm = NULL, *tmp = NULL;
	usc_status st;

	st = topk_shape(in, &rows, &n, &k, err);
	if (st == USC_OK)
		st = usc__evalue_alloc(res, 2, err);
	if (st == USC_OK)
		st = usc__ebuf_new(ev, x->dtype, rows * k, &res->leaves[0],
				   err);
	if (st == USC_OK)
		st = usc__ebuf_new(ev, USC_S32, rows * k, &res->leaves[1],
				   err);
	if (st == USC_OK && record) {
		const void *vals[2];
		usc__sort_cmp cmp;

		/* The comparator's second pair: the indices, as s32. */
		st = usc__ebuf_new(ev, USC_S32, rows * n, &idx, err);
		for (size_t i = 0; st == USC_OK && i < rows * n; i++)
			st = usc__load_int(ev, USC_S32, (int64_t)(i % n),
					   USC__VAL(ev, idx, i), err);
		cmp.ev = ev;
		cmp.nops = 2;
		cmp.vals = vals;
		vals[0] = values_of(ev, x);
		vals[1] = idx ? values_of(ev, idx) : NULL;
		if (st == USC_OK)
			st = comparator(ev, in, &cmp.fn, err);
		perm = usc__calloc(n ? n : 1, sizeof *perm);
		tmp = usc__calloc(n ? n : 1, sizeof *tmp);
		if (st == USC_OK && (!perm || !tmp))
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		for (size_t r = 0; st == USC_OK && r < rows; r++) {
			for (size_t j = 0; j < n; j++)
				perm[j] = r * n + j;
			st = usc__sort_stable(&cmp, perm, tmp, n, err);
			for (size_t j = 0; st == USC_OK && j < k; j++)
				order[r * k + j] = (int64_t)perm[j];
		}
	}
	usc__ebuf_release(ev, idx);
	usc__free(perm);
	usc__free(tmp);
	for (size_t o = 0; st == USC_OK && o < rows * k; o++) {
		size_t src = (size_t)order[o], r = o / (k ? k : 1);

		if (src < r * n || src >= (r + 1) * n)
			return usc__eval_fail(err, USC_EINTERNAL, in,
					      "bad permutation in the trace");
		usc__copy_values(ev, USC__VAL(ev, res->leaves[0], o),
				 USC__VAL(ev, x, src), 1);
		st = usc__load_int(ev, USC_S32, (int64_t)(src - r * n),
				   USC__VAL(ev, res->leaves[1], o), err);
	}
	return st;
}
