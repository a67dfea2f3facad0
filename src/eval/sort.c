/*
 * sort and XLA's TopK custom call.
 *
 * The order is decided once, in the reference domain, by the comparator
 * computation on the reference's values (a stable merge sort: equal
 * elements keep their operand order).  The permutation goes into the
 * trace (control.h), and every domain moves its own values by it: the
 * oracle's enclosures and the envelope's sets of element k go where the
 * reference's element k went.
 *
 * A sort that is not stable (is_stable=false, XLA's default) and TopK
 * may put the elements of a tie group (a run that compares equal to its
 * first, a class of equal elements when the comparator is a strict weak
 * order, as JAX's are) in any order.  When
 * the device's output of such a sort is an output of the kernel and the
 * reference run was given it (usc__eval_follow_device), the run puts each
 * group in the device's order, if the device's group is a permutation of
 * its own; otherwise it keeps its own and the difference shows as it is.
 * A result of the sort that feeds further ops instead is not seen: where
 * its values differ within a group that the outputs do not pin down, the
 * envelope domain refuses the run (docs/evaluator.md, "Sort order").
 */
#include "control.h"

#include <stdlib.h>
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
		return (size_t)usc_hlo_shape_elements(&in->operands[0]->shape) +
		       1;
	if (topk_shape(in, &rows, &n, &k, NULL) != USC_OK)
		return 1;
	return rows * k + 1;
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

/* ------------------------------------------------- the device's order */

#define SORT_LEAVES (2 * USC__DOM_MAX_ARGS + 2)

/* The number of leaves of a shape (1 for an array). */
static size_t leaves_of(const usc_hlo_shape *s)
{
	size_t n = 0;

	if (s->kind != USC_HLO_SHAPE_TUPLE)
		return 1;
	for (size_t i = 0; i < s->tuple_count; i++)
		n += leaves_of(&s->tuple[i]);
	return n;
}

/*
 * Whether x gives its operand's values element for element in row-major
 * order: copy and reshape always, bitcast when its layouts make it a
 * reshape (data.c's index map says where each element comes from).
 */
static bool keeps_order(const usc_hlo_instr *x)
{
	const usc_hlo_shape *s;
	size_t n;

	if (x->operand_count != 1 || x->shape.kind != USC_HLO_SHAPE_ARRAY)
		return false;
	s = &x->operands[0]->shape;
	if (s->kind != USC_HLO_SHAPE_ARRAY || s->dtype != x->shape.dtype ||
	    usc_hlo_shape_elements(s) != usc_hlo_shape_elements(&x->shape))
		return false;
	if (x->opcode == USC_HLO_OP_COPY || x->opcode == USC_HLO_OP_RESHAPE)
		return true;
	if (x->opcode != USC_HLO_OP_BITCAST)
		return false;
	/* The same dimensions and layout: nothing moves. */
	if (usc_hlo_shape_equal(s, &x->shape))
		return true;
	n = (size_t)usc_hlo_shape_elements(&x->shape);
	for (size_t o = 0; o < n; o++) {
		size_t src = 0, flat = 0;

		if (usc__data_index(x, NULL, NULL, o, &src, &flat, NULL) !=
			    USC_OK ||
		    flat != o)
			return false;
	}
	return true;
}

/* Whether x only passes values on (tuple, get-tuple-element, ...). */
static bool passes_on(const usc_hlo_instr *x)
{
	return x->opcode == USC_HLO_OP_TUPLE ||
	       x->opcode == USC_HLO_OP_GET_TUPLE_ELEMENT || keeps_order(x);
}

/*
 * The instruction *src and its leaf *leaf whose values leaf `leaf` of x
 * holds element for element, following tuple, get-tuple-element and the
 * ops of keeps_order back; x itself when it is none of those.
 */
static void resolve(const usc_hlo_instr *x, size_t leaf,
		    const usc_hlo_instr **src, size_t *src_leaf)
{
	for (;;) {
		if (x->opcode == USC_HLO_OP_TUPLE) {
			size_t j = 0, n;

			while (j < x->operand_count &&
			       leaf >= (n = leaves_of(&x->operands[j]->shape))) {
				leaf -= n;
				j++;
			}
			if (j == x->operand_count)
				break;
			x = x->operands[j];
		} else if (x->opcode == USC_HLO_OP_GET_TUPLE_ELEMENT) {
			const usc_hlo_shape *t = &x->operands[0]->shape;
			int64_t idx;

			if (!usc__attr_int(x, "index", &idx) ||
			    t->kind != USC_HLO_SHAPE_TUPLE || idx < 0 ||
			    (size_t)idx >= t->tuple_count)
				break;
			for (int64_t k = 0; k < idx; k++)
				leaf += leaves_of(&t->tuple[k]);
			x = x->operands[0];
		} else if (keeps_order(x)) {
			x = x->operands[0];
		} else {
			break;
		}
	}
	*src = x;
	*src_leaf = leaf;
}

/* How the results of a sort or TopK show in the kernel's outputs. */
typedef struct sort_view {
	size_t nleaves;
	int64_t out[SORT_LEAVES]; /* the output that is leaf k, or -1 */
	bool used[SORT_LEAVES];   /* leaf k feeds an op that computes */
} sort_view;

static bool is_topk(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_CUSTOM_CALL;
}

/* The view of in, a sort or TopK that ev evaluates. */
static void view_of(const usc_eval *ev, const usc_hlo_instr *in,
		    sort_view *v)
{
	const usc_hlo_computation *c = ev->comp;
	const usc_hlo_instr *src;
	size_t leaf, nout;

	v->nleaves = is_topk(in) ? 2 : in->operand_count;
	for (size_t k = 0; k < SORT_LEAVES; k++) {
		v->out[k] = -1;
		/* A sort of a called computation feeds it, unseen. */
		v->used[k] = in->parent != c;
	}
	if (in->parent != c || !c->root)
		return;
	nout = leaves_of(&c->root->shape);
	for (size_t i = nout; i-- > 0;) {
		resolve(c->root, i, &src, &leaf);
		if (src == in && leaf < v->nleaves)
			v->out[leaf] = (int64_t)i;
	}
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *y = c->instrs[i];

		if (y == in || passes_on(y))
			continue;
		for (size_t j = 0; j < y->operand_count; j++) {
			size_t n = leaves_of(&y->operands[j]->shape);

			for (size_t l = 0; l < n; l++) {
				resolve(y->operands[j], l, &src, &leaf);
				if (src == in && leaf < v->nleaves)
					v->used[leaf] = true;
			}
		}
	}
}

/* Whether the sort or TopK may leave equal elements in any order. */
static bool unstable(const usc_hlo_instr *in)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "is_stable");

	/* TopK states no order of ties: it gets a sort's freedom. */
	if (is_topk(in))
		return true;
	return !(a && a->kind == USC_HLO_ATTR_BOOL && a->b);
}

bool usc__sort_follows(const usc_eval *ev, const usc_hlo_instr *in)
{
	sort_view v;

	if ((in->opcode != USC_HLO_OP_SORT &&
	     in->opcode != USC_HLO_OP_CUSTOM_CALL) ||
	    !unstable(in) || in->parent != ev->comp)
		return false;
	view_of(ev, in, &v);
	for (size_t k = 0; k < v.nleaves; k++)
		if (v.out[k] >= 0)
			return true;
	return false;
}

/* A member of a tie group, or a position of the device's, by its leaves. */
typedef struct tie_key {
	uint64_t sig[SORT_LEAVES];
	size_t at;
} tie_key;

static int key_cmp(const void *pa, const void *pb)
{
	const tie_key *a = pa, *b = pb;

	for (size_t k = 0; k < SORT_LEAVES; k++)
		if (a->sig[k] != b->sig[k])
			return a->sig[k] < b->sig[k] ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

static bool same_sig(const tie_key *a, const tie_key *b)
{
	return memcmp(a->sig, b->sig, sizeof a->sig) == 0;
}

/* What the tie groups of one sort or TopK run need. */
typedef struct tie_ctx {
	usc_eval *ev;
	const usc__sort_cmp *cmp;
	sort_view view;
	usc_dtype type[SORT_LEAVES];
	/* The reference's values of each leaf's source (TopK: x for both). */
	const usc__ebuf *src[SORT_LEAVES];
	size_t row_n;               /* TopK: n, leaf 1 is member mod n */
	const usc_tensor *dev[SORT_LEAVES]; /* the device's, when followed */
	bool follow, hidden;        /* some dev; some used leaf not seen */
	tie_key *a, *b;             /* scratch: len each */
	size_t *assign;
	unsigned char *taken;
} tie_ctx;

/* Leaf l of member m (a flat element of the operands) as an encoding. */
static uint64_t member_sig(const tie_ctx *t, size_t m, size_t l)
{
	uint64_t bits = 0;

	if (t->row_n && l == 1)
		return (uint64_t)(uint32_t)(m % t->row_n);
	(void)t->ev->dom->to_output(t->ev->dstate, t->type[l],
				    USC__VAL(t->ev, t->src[l], m), &bits,
				    NULL, NULL);
	return bits;
}

/*
 * Matches positions [0, m) of the device's group (output positions
 * out0 + p * step) with distinct members mem[0..g) alike on the leaves in
 * mask: assign[p] is the member for position p, or g where none is left
 * alike.  Sorting both sides by their leaves makes the greedy match a
 * largest one.  Returns the number of positions matched.
 */
static size_t match(tie_ctx *t, const size_t *mem, size_t g, size_t m,
		    size_t out0, size_t step, const bool *mask)
{
	size_t i = 0, matched = 0;

	for (size_t j = 0; j < g; j++) {
		for (size_t l = 0; l < SORT_LEAVES; l++)
			t->a[j].sig[l] = l < t->view.nleaves && mask[l]
						 ? member_sig(t, mem[j], l)
						 : 0;
		t->a[j].at = j;
	}
	for (size_t p = 0; p < m; p++) {
		for (size_t l = 0; l < SORT_LEAVES; l++) {
			t->b[p].sig[l] = 0;
			if (l < t->view.nleaves && mask[l])
				(void)usc_tensor_get_bits(t->dev[l],
							  out0 + p * step,
							  &t->b[p].sig[l]);
		}
		t->b[p].at = p;
	}
	qsort(t->a, g, sizeof *t->a, key_cmp);
	qsort(t->b, m, sizeof *t->b, key_cmp);
	for (size_t p = 0; p < m; p++) {
		size_t at = t->b[p].at;

		while (i < g && !same_sig(&t->a[i], &t->b[p]) &&
		       key_cmp(&t->a[i], &t->b[p]) < 0)
			i++;
		if (i < g && same_sig(&t->a[i], &t->b[p])) {
			t->assign[at] = t->a[i++].at;
			matched++;
		} else {
			t->assign[at] = g;
		}
	}
	return matched;
}

/*
 * One tie group mem[0..g) of a sorted line, whose first m members are
 * kept at output positions out0 + p * step: put in the device's order as
 * far as the device's group matches it (any order of the group is
 * legitimate, so a position the device got wrong takes a member left
 * over, in the sort's order, and shows the difference as it is), and
 * *undet set to 1 + out0 when a used result the outputs do not show
 * differs between members the outputs cannot tell apart.
 */
static void group(tie_ctx *t, size_t *mem, size_t g, size_t m, size_t out0,
		  size_t step, int64_t *undet)
{
	bool seen[SORT_LEAVES], exact[SORT_LEAVES], some_exact = false;
	size_t o = 0, next = 0, got;

	for (size_t l = 0; l < SORT_LEAVES; l++) {
		seen[l] = l < t->view.nleaves && t->view.out[l] >= 0;
		exact[l] = seen[l] &&
			   usc_format_of(t->type[l])->kind != USC_KIND_FLOAT;
		some_exact = some_exact || exact[l];
	}
	if (t->hidden && !*undet) {
		/* Members alike in what shows must be alike in what feeds. */
		(void)match(t, mem, g, 0, 0, 0, seen);
		for (size_t j = 1; j < g && !*undet; j++) {
			size_t x = mem[t->a[j - 1].at], y = mem[t->a[j].at];

			if (!same_sig(&t->a[j - 1], &t->a[j]))
				continue;
			for (size_t l = 0; l < t->view.nleaves; l++)
				if (!seen[l] && t->view.used[l] &&
				    member_sig(t, x, l) != member_sig(t, y, l))
					*undet = 1 + (int64_t)out0;
		}
	}
	if (!t->follow)
		return;
	/*
	 * On all the leaves shown; and where the device computed keys with
	 * its own rounding, on the exact ones alone (indices, payloads), if
	 * that matches more.
	 */
	got = match(t, mem, g, m, out0, step, seen);
	if (got < m && some_exact &&
	    match(t, mem, g, m, out0, step, exact) <= got)
		(void)match(t, mem, g, m, out0, step, seen);
	memset(t->taken, 0, g);
	for (size_t p = 0; p < m; p++)
		if (t->assign[p] < g)
			t->taken[t->assign[p]] = 1;
	/* Unmatched positions take the members left, in the sort's order. */
	for (size_t p = 0; p < m; p++) {
		if (t->assign[p] < g)
			continue;
		while (t->taken[next])
			next++;
		t->assign[p] = next;
		t->taken[next] = 1;
	}
	for (size_t p = 0; p < m; p++)
		t->a[o++].at = mem[t->assign[p]];
	for (size_t j = 0; j < g; j++)
		if (!t->taken[j])
			t->a[o++].at = mem[j];
	for (size_t j = 0; j < g; j++)
		mem[j] = t->a[j].at;
}

/*
 * The tie groups of one sorted line perm[0..len), of which the first
 * `kept` are output at positions out0 + j * step: each a run of members
 * that compare equal to its first (no comparator call says the first
 * goes before).
 */
static usc_status ties(tie_ctx *t, size_t *perm, size_t len, size_t kept,
		       size_t out0, size_t step, int64_t *undet,
		       usc_error *err)
{
	if (!t->follow && (!t->hidden || *undet))
		return USC_OK;
	for (size_t g0 = 0; g0 < kept;) {
		size_t g1 = g0 + 1;

		while (g1 < len) {
			bool lt = false;
			usc_status st = less(t->cmp, perm[g0], perm[g1], &lt,
					     err);

			if (st != USC_OK)
				return st;
			if (lt)
				break;
			g1++;
		}
		if (g1 - g0 > 1)
			group(t, perm + g0, g1 - g0,
			      (g1 < kept ? g1 : kept) - g0, out0 + g0 * step,
			      step, undet);
		g0 = g1;
	}
	return USC_OK;
}

/*
 * Sets up t for in: the view, the device's tensors of the leaves shown
 * (of the leaf's type and size, else none are followed) and the scratch
 * for groups of up to len members.
 */
static usc_status ties_init(tie_ctx *t, usc_eval *ev, const usc_hlo_instr *in,
			    const usc__sort_cmp *cmp, const usc__evalue *ops,
			    size_t leaf_count, size_t len, usc_error *err)
{
	const usc_tensor *const *dev;
	size_t ndev;

	memset(t, 0, sizeof *t);
	t->ev = ev;
	t->cmp = cmp;
	for (size_t l = 0; l < in->operand_count && l < SORT_LEAVES; l++) {
		t->src[l] = ops[l].leaves[0];
		t->type[l] = ops[l].leaves[0]->dtype;
	}
	if (is_topk(in)) {
		t->row_n = (size_t)in->operands[0]->shape.dims
				   [in->operands[0]->shape.rank - 1];
		t->type[1] = USC_S32;
	}
	if (!unstable(in))
		return USC_OK;
	view_of(ev, in, &t->view);
	dev = usc__ctl_device(ev, &ndev);
	for (size_t l = 0; l < t->view.nleaves; l++) {
		int64_t o = t->view.out[l];

		t->hidden = t->hidden || (o < 0 && t->view.used[l]);
		if (o < 0)
			continue;
		t->dev[l] = dev && (size_t)o < ndev ? dev[o] : NULL;
		t->follow = true;
	}
	for (size_t l = 0; t->follow && l < t->view.nleaves; l++)
		if (t->view.out[l] >= 0 &&
		    (!t->dev[l] || usc_tensor_dtype(t->dev[l]) != t->type[l] ||
		     usc_tensor_count(t->dev[l]) != leaf_count))
			t->follow = false;
	if (!t->follow && !t->hidden)
		return USC_OK;
	t->a = usc__calloc(len ? len : 1, sizeof *t->a);
	t->b = usc__calloc(len ? len : 1, sizeof *t->b);
	t->assign = usc__calloc(len ? len : 1, sizeof *t->assign);
	t->taken = usc__calloc(len ? len : 1, 1);
	if (!t->a || !t->b || !t->assign || !t->taken)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

static void ties_free(tie_ctx *t)
{
	usc__free(t->a);
	usc__free(t->b);
	usc__free(t->assign);
	usc__free(t->taken);
}

/*
 * A replay in the envelope domain of a sort whose ties the outputs leave
 * undetermined: the envelope would hold one order of many.
 */
static usc_status undetermined(const usc_eval *ev, const usc_hlo_instr *in,
			       int64_t undet, usc_error *err)
{
	if (!undet || ev->opts.domain != USC_DOMAIN_ENVELOPE)
		return USC_OK;
	return usc__eval_fail(
		err, USC_EUNSUPPORTED, in,
		"the elements of %s that compare equal from position %lld "
		"of its result on differ in a result that feeds further ops "
		"and is no output, so the device's order among them, which "
		"that result depends on, is unknown",
		is_topk(in) ? "TopK" : "the unstable sort",
		(long long)(undet - 1));
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
	usc__sort_cmp cmp;
	tie_ctx tc;
	usc_status st;

	total = (size_t)usc_hlo_shape_elements(s);
	len = (size_t)s->dims[d];
	for (size_t j = (size_t)d + 1; j < s->rank; j++)
		inner *= (size_t)s->dims[j];
	outer = len && inner ? total / (len * inner) : 0;
	memset(&tc, 0, sizeof tc);
	st = usc__evalue_alloc(res, nops, err);
	for (size_t k = 0; st == USC_OK && k < nops; k++)
		st = usc__ebuf_new(ev, ops[k].leaves[0]->dtype, total,
				   &res->leaves[k], err);
	if (st == USC_OK && record) {
		cmp.ev = ev;
		cmp.nops = nops;
		cmp.vals = vals;
		for (size_t k = 0; k < nops; k++)
			vals[k] = values_of(ev, ops[k].leaves[0]);
		order[total] = 0;
		st = comparator(ev, in, &cmp.fn, err);
		if (st == USC_OK)
			st = ties_init(&tc, ev, in, &cmp, ops, total, len, err);
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
				if (st == USC_OK)
					st = ties(&tc, perm, len, len, base,
						  inner, &order[total], err);
				for (size_t j = 0; st == USC_OK && j < len;
				     j++)
					order[base + j * inner] =
						(int64_t)perm[j];
			}
	}
	ties_free(&tc);
	usc__free(perm);
	usc__free(tmp);
	if (st == USC_OK)
		st = undetermined(ev, in, order[total], err);
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
	tie_ctx tc;
	usc_status st;

	memset(&tc, 0, sizeof tc);
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

		order[rows * k] = 0;
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
		if (st == USC_OK)
			st = ties_init(&tc, ev, in, &cmp, ops, rows * k, n,
				       err);
		perm = usc__calloc(n ? n : 1, sizeof *perm);
		tmp = usc__calloc(n ? n : 1, sizeof *tmp);
		if (st == USC_OK && (!perm || !tmp))
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		for (size_t r = 0; st == USC_OK && r < rows; r++) {
			for (size_t j = 0; j < n; j++)
				perm[j] = r * n + j;
			st = usc__sort_stable(&cmp, perm, tmp, n, err);
			if (st == USC_OK)
				st = ties(&tc, perm, n, k, r * k, 1,
					  &order[rows * k], err);
			for (size_t j = 0; st == USC_OK && j < k; j++)
				order[r * k + j] = (int64_t)perm[j];
		}
	}
	ties_free(&tc);
	usc__ebuf_release(ev, idx);
	usc__free(perm);
	usc__free(tmp);
	if (st == USC_OK)
		st = undetermined(ev, in, order[rows * k], err);
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
