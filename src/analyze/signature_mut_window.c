/*
 * Defect signatures: the mutations of dots, windows and broadcasts that
 * XLA's layout and reduction passes get wrong.  A dot's output or one of
 * its operands transposed, a reduction accumulated in a narrow type, a
 * reduce-window's window or stride off (XLA:CPU computes many reductions
 * as reduce-windows), a broadcast's dimensions permuted.  Each writes the
 * replacement lines of one op (signature_internal.h); the narrow
 * accumulator also writes its narrow add region before the first
 * computation.
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <stdio.h>
#include <string.h>

/* "{0,1,...}" of n ints. */
static void ints_txt(char *buf, size_t n, const int64_t *v, size_t count)
{
	size_t used = (size_t)snprintf(buf, n, "{");

	for (size_t i = 0; i < count && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld",
					 i ? "," : "", (long long)v[i]);
	if (used < n)
		snprintf(buf + used, n - used, "}");
}

/* dot-transpose-output: the last two dimensions of a dot's result swapped
 * (they must have one size for the shape to stay). */
bool usc__sig_mut_dot_transpose_output(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_shape *s = &in->shape;
	int64_t perm[16];
	char x[160], st[256], dims[128];
	size_t r = s->rank;

	if (in->opcode != USC_HLO_OP_DOT || !usc__sig_is_array(s) || r < 2 ||
	    r > 16 || s->dims[r - 1] != s->dims[r - 2] || s->dims[r - 1] < 2)
		return false;
	for (size_t i = 0; i < r; i++)
		perm[i] = (int64_t)i;
	perm[r - 2] = (int64_t)r - 1;
	perm[r - 1] = (int64_t)r - 2;
	usc__sig_emit_renamed(c, usc__sig_hname(c, x));
	usc__sig_shape_txt(st, sizeof st, s->dtype, s);
	ints_txt(dims, sizeof dims, perm, r);
	{
		char rest[160];

		snprintf(rest, sizeof rest, ", dimensions=%s", dims);
		usc__sig_emit(c, in->is_root, in->name, st, "transpose", x,
			      rest);
	}
	usc__sig_set_detail(c, "result transposed");
	return true;
}

/* The batch dimensions attribute of a dot operand, as a count. */
static size_t batch_count(const usc_hlo_instr *in, int v)
{
	const usc_hlo_attr *at = usc_hlo_instr_attr(
	    in, v == 0 ? "lhs_batch_dims" : "rhs_batch_dims");

	return at && at->kind == USC_HLO_ATTR_INTS ? at->count : 0;
}

/*
 * dot-transpose-operand/0 (lhs), /1 (rhs): the operand's buffer read with
 * its two matrix dimensions swapped, the contracting and the free one: a
 * [r, c] operand read as [c, r] and transposed back to [r, c] (a square
 * operand is simply transposed).  Rank 2 without batch dimensions, or
 * rank 3 whose batch dimension is the first.
 */
bool usc__sig_mut_dot_transpose_operand(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *o;
	const usc_hlo_attr *bd;
	char so[256], a[160], b[160], args[1024], rest[1024], st[256];
	int64_t d[3];
	size_t r, nb;

	if (in->opcode != USC_HLO_OP_DOT || v < 0 || v > 1 ||
	    in->operand_count != 2 || !usc__sig_is_array(&in->shape))
		return false;
	o = in->operands[v];
	r = o->shape.rank;
	nb = batch_count(in, v);
	if (!usc__sig_is_array(&o->shape) || !(r == 2 || r == 3) || nb != r - 2)
		return false;
	if (nb) {
		bd = usc_hlo_instr_attr(in, v == 0 ? "lhs_batch_dims"
						   : "rhs_batch_dims");
		if (bd->ints[0] != 0)
			return false;
	}
	for (size_t i = 0; i < r; i++)
		d[i] = o->shape.dims[i];
	if (d[r - 1] < 2 || d[r - 2] < 2)
		return false;
	if (r == 2)
		snprintf(so, sizeof so, "%s[%lld,%lld]",
			 usc_dtype_name(o->shape.dtype), (long long)d[1],
			 (long long)d[0]);
	else
		snprintf(so, sizeof so, "%s[%lld,%lld,%lld]",
			 usc_dtype_name(o->shape.dtype), (long long)d[0],
			 (long long)d[2], (long long)d[1]);
	usc__sig_emit(c, false, usc__sig_hname(c, a), so, "reshape", o->name,
		      NULL);
	usc__sig_shape_txt(st, sizeof st, o->shape.dtype, &o->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, b), st, "transpose", a,
		      r == 2 ? ", dimensions={1,0}" : ", dimensions={0,2,1}");
	usc__sig_args_with(in, (size_t)v, b, args, sizeof args);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "dot", args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_set_detail(c, "%s '%s' read with its dimensions swapped",
			    v == 0 ? "lhs" : "rhs", o->name);
	return true;
}

/*
 * The rest with the unbraced attribute attr's value (to_apply=NAME)
 * replaced by value; false when it is not there.
 */
static bool rest_replace_word(usc__sig_ctx *c, const char *attr,
			      const char *value, char *buf, size_t n)
{
	char key[64], rest[1024];
	const char *hit, *e;

	usc__sig_rest_dup(c, rest, sizeof rest);
	snprintf(key, sizeof key, "%s=", attr);
	hit = strstr(rest, key);
	if (!hit || (hit != rest && hit[-1] != ' ' && hit[-1] != ','))
		return false;
	e = hit + strlen(key);
	while (*e && *e != ',' && *e != ' ')
		e++;
	snprintf(buf, n, "%.*s%s%s%s", (int)(hit - rest), rest, key, value, e);
	return true;
}

static const usc_dtype acc_types[] = {USC_BF16, USC_F16};

/* The region's root adds its two parameters. */
static bool adds_params(const usc_hlo_computation *body)
{
	const usc_hlo_instr *root = body->root;

	return root && root->opcode == USC_HLO_OP_ADD &&
	       root->operand_count == 2 &&
	       root->operands[0]->opcode == USC_HLO_OP_PARAMETER &&
	       root->operands[1]->opcode == USC_HLO_OP_PARAMETER;
}

/* The region a single-input float reduce or reduce-window sums with. */
static const usc_hlo_computation *sum_region(const usc_hlo_instr *in)
{
	const usc_hlo_attr *ta;

	if ((in->opcode != USC_HLO_OP_REDUCE &&
	     in->opcode != USC_HLO_OP_REDUCE_WINDOW) ||
	    in->operand_count != 2 || !usc__sig_is_float_array(&in->shape) ||
	    in->operands[0]->shape.dtype != in->shape.dtype)
		return NULL;
	ta = usc_hlo_instr_attr(in, "to_apply");
	if (!ta || ta->kind != USC_HLO_ATTR_COMPUTATIONS || ta->count != 1 ||
	    !ta->comps || !ta->comps[0] || !adds_params(ta->comps[0]))
		return NULL;
	return ta->comps[0];
}

bool usc__sig_accumulator_region(const usc_hlo_instr *in)
{
	const usc_hlo_computation *comp = in->parent;
	const usc_hlo_module *m = comp ? comp->parent : NULL;

	if (!m || comp->root != in || !adds_params(comp))
		return false;
	for (size_t i = 0; i < m->computation_count; i++)
		for (size_t j = 0; j < m->computations[i]->instr_count; j++)
			if (sum_region(m->computations[i]->instrs[j]) == comp)
				return true;
	return false;
}

/* The fusion that calls comp, or NULL. */
static const usc_hlo_instr *caller_of(const usc_hlo_computation *comp)
{
	const usc_hlo_module *m = comp->parent;

	for (size_t i = 0; m && i < m->computation_count; i++)
		for (size_t j = 0; j < m->computations[i]->instr_count; j++) {
			const usc_hlo_instr *f = m->computations[i]->instrs[j];

			if (f->opcode == USC_HLO_OP_FUSION &&
			    f->called_count == 1 && f->called[0] == comp)
				return f;
		}
	return NULL;
}

/* Parameter k of comp, or NULL. */
static const usc_hlo_instr *param_of(const usc_hlo_computation *comp, size_t k)
{
	for (size_t j = 0; j < comp->instr_count; j++)
		if (comp->instrs[j]->opcode == USC_HLO_OP_PARAMETER &&
		    comp->instrs[j]->parameter_number == (int64_t)k)
			return comp->instrs[j];
	return NULL;
}

/*
 * Whether in feeds summing reductions only, as their input, following
 * its value through fusions (a fusion's root to the fusion's users, a
 * fusion operand to the called computation's parameter), at most depth
 * levels: an op with any other user narrowed is `narrow`, not an
 * accumulator.
 */
static bool feeds_sum(const usc_hlo_instr *in, int depth)
{
	const usc_hlo_computation *comp = in->parent;
	bool any = false;

	if (!comp || depth <= 0)
		return false;
	if (in->is_root) {
		const usc_hlo_instr *f = comp->is_entry ? NULL
							: caller_of(comp);

		return f && feeds_sum(f, depth - 1);
	}
	for (size_t j = 0; j < comp->instr_count; j++) {
		const usc_hlo_instr *u = comp->instrs[j];

		for (size_t k = 0; k < u->operand_count; k++) {
			const usc_hlo_instr *p;

			if (u->operands[k] != in)
				continue;
			if (sum_region(u) && k == 0) {
				any = true;
				continue;
			}
			if (u->opcode != USC_HLO_OP_FUSION ||
			    u->called_count != 1 ||
			    !(p = param_of(u->called[0], k)) ||
			    !feeds_sum(p, depth - 1))
				return false;
			any = true;
		}
	}
	return any;
}

bool usc__sig_feeds_accumulator(const usc_hlo_instr *in)
{
	return usc__sig_float_arith(in) && feeds_sum(in, 4);
}

/*
 * The op feeding a summing reduction computed in the narrow type (the
 * products of a sum of squares in bf16): its operands and result rounded
 * to it, as `narrow` writes it.
 */
static bool feeding_narrowed(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype n = acc_types[v], t = in->shape.dtype;
	char sh[256], args[1024], nm[160], rest[1024];

	if (!usc__sig_feeds_accumulator(in) ||
	    usc__sig_precision_of(n) >= usc__sig_precision_of(t))
		return false;
	usc__sig_shape_txt(sh, sizeof sh, n, &in->shape);
	usc__sig_convert_operands(c, sh, args, sizeof args);
	usc__sig_hname(c, nm);
	usc__sig_emit(c, false, nm, sh, usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_shape_txt(sh, sizeof sh, t, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, sh, "convert", nm, NULL);
	usc__sig_set_detail(c, "feeding a sum, computed in %s",
			    usc_dtype_name(n));
	return true;
}

/*
 * The reduction done the way XLA:CPU computes a bf16 or f16 reduction
 * (float normalization): its operand rounded to n, summed in the wide
 * type, the result rounded to n once.
 */
static bool rounded_sum(usc__sig_ctx *c, usc_dtype n)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype t = in->shape.dtype;
	char sn[256], st[256], x[160], xw[160], r[160], rn[160];
	char args[512], rest[1024];

	usc__sig_shape_txt(sn, sizeof sn, n, &in->operands[0]->shape);
	usc__sig_shape_txt(st, sizeof st, t, &in->operands[0]->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, x), sn, "convert",
		      in->operands[0]->name, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, xw), st, "convert", x, NULL);
	snprintf(args, sizeof args, "%s, %s", xw, in->operands[1]->name);
	usc__sig_shape_txt(st, sizeof st, t, &in->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, r), st,
		      usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_shape_txt(sn, sizeof sn, n, &in->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, rn), sn, "convert", r, NULL);
	usc__sig_emit(c, in->is_root, in->name, st, "convert", rn, NULL);
	usc__sig_set_detail(c, "in %s, summed in %s, rounded once",
			    usc_dtype_name(n), usc_dtype_name(t));
	return true;
}

/*
 * narrow-accumulator/0 (bf16), /1 (f16): a reduce or reduce-window whose
 * region adds its two parameters, computed with the operand, the init
 * and every partial sum in the narrow type, the result converted back: a
 * narrowed accumulator.  /2 (bf16), /3 (f16): the same reduction as
 * XLA:CPU computes a narrow one (rounded_sum).  On the float op that
 * feeds such a reduction (/0, /1), that op computed in the narrow type
 * (feeding_narrowed).
 */
bool usc__sig_mut_narrow_accumulator(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype n, t;
	char sn[256], st[256], sc[64], rg[192], x[160], i0[160], r[160];
	char args[512], rest[1024];

	if (v < 0 || v > 3)
		return false;
	if (!sum_region(in))
		return v < 2 && feeding_narrowed(c, v);
	t = in->shape.dtype;
	n = acc_types[v % 2];
	if (usc__sig_precision_of(n) >= usc__sig_precision_of(t))
		return false;
	if (v >= 2)
		return rounded_sum(c, n);
	/* The narrow region, before the first computation. */
	snprintf(rg, sizeof rg, "%s.sgacc", in->name);
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(n));
	usc__sig_sb_printf(&c->pre,
			   "%s {\n  %s.a = %s parameter(0)\n"
			   "  %s.b = %s parameter(1)\n"
			   "  ROOT %s.s = %s add(%s.a, %s.b)\n}\n\n",
			   rg, rg, sc, rg, sc, rg, sc, rg, rg);
	usc__sig_shape_txt(sn, sizeof sn, n, &in->operands[0]->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, x), sn, "convert",
		      in->operands[0]->name, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, i0), sc, "convert",
		      in->operands[1]->name, NULL);
	if (!rest_replace_word(c, "to_apply", rg, rest, sizeof rest))
		return false;
	snprintf(args, sizeof args, "%s, %s", x, i0);
	usc__sig_shape_txt(sn, sizeof sn, n, &in->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, r), sn,
		      usc_hlo_opcode_name(in->opcode), args, rest);
	usc__sig_shape_txt(st, sizeof st, t, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "convert", r, NULL);
	usc__sig_set_detail(c, "accumulated in %s", usc_dtype_name(n));
	return true;
}

/* Elements of one window dimension's output. */
static int64_t window_out(int64_t n, const usc_hlo_window_dim *w)
{
	int64_t padded = (n - 1) * w->lhs_dilate + 1 + w->pad_lo + w->pad_hi;
	int64_t span = (w->size - 1) * w->rhs_dilate + 1;

	if (w->stride < 1 || padded < span)
		return 0;
	return (padded - span) / w->stride + 1;
}

/* The window attribute's text, every field written. */
static void window_txt(char *buf, size_t n, const usc_hlo_window_dim *w,
		       size_t rank)
{
	static const char *const names[] = {"size", "stride", "pad",
					    "lhs_dilate", "rhs_dilate"};
	size_t used = (size_t)snprintf(buf, n, "{");

	for (int f = 0; f < 5 && used < n; f++) {
		bool need = f < 2;

		for (size_t i = 0; i < rank && !need; i++)
			need = f == 2	? w[i].pad_lo || w[i].pad_hi
			       : f == 3 ? w[i].lhs_dilate != 1
					: w[i].rhs_dilate != 1;
		if (!need)
			continue;
		used += (size_t)snprintf(buf + used, n - used,
					 "%s%s=", f ? " " : "", names[f]);
		for (size_t i = 0; i < rank && used < n; i++) {
			const usc_hlo_window_dim *d = &w[i];

			if (f == 2)
				used += (size_t)snprintf(
				    buf + used, n - used, "%s%lld_%lld",
				    i ? "x" : "", (long long)d->pad_lo,
				    (long long)d->pad_hi);
			else
				used += (size_t)snprintf(
				    buf + used, n - used, "%s%lld",
				    i ? "x" : "",
				    (long long)(f == 0	 ? d->size
						: f == 1 ? d->stride
						: f == 3 ? d->lhs_dilate
							 : d->rhs_dilate));
		}
	}
	if (used < n)
		snprintf(buf + used, n - used, "}");
}

/*
 * wrong-window on a single-input reduce-window, along its first windowed
 * dimension d (size above 1): /0 the window one shorter, /1 one longer
 * (padded by one more init at the high end), /2 the stride one less (or
 * one more), /3 the window moved to another dimension, /4 half as long,
 * /5 twice as long (padded likewise).  Only when the result keeps its
 * shape.
 */
bool usc__sig_mut_wrong_window(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_attr *at;
	const usc_hlo_shape *os;
	usc_hlo_window_dim w[16];
	char val[512], rest[1024], st[256], args[512];
	size_t r, d;
	const char *what = "";

	if (in->opcode != USC_HLO_OP_REDUCE_WINDOW || in->operand_count != 2 ||
	    !usc__sig_is_array(&in->shape) || v < 0 || v > 5)
		return false;
	at = usc_hlo_instr_attr(in, "window");
	os = &in->operands[0]->shape;
	r = os->rank;
	if (!at || at->kind != USC_HLO_ATTR_WINDOW || at->count != r ||
	    r == 0 || r > 16 || in->shape.rank != r)
		return false;
	memcpy(w, at->window, r * sizeof *w);
	for (d = 0; d < r && w[d].size <= 1; d++)
		;
	if (d == r)
		return false;
	switch (v) {
	case 0:
		w[d].size--;
		what = "one shorter";
		break;
	case 1:
		w[d].size++;
		w[d].pad_hi++;
		what = "one longer";
		break;
	case 2:
		w[d].stride += w[d].stride > 1 ? -1 : 1;
		if (window_out(os->dims[d], &w[d]) != in->shape.dims[d]) {
			w[d] = at->window[d];
			w[d].stride++;
		}
		what = "with another stride";
		break;
	case 4:
		w[d].size /= 2;
		what = "half as long";
		break;
	case 5:
		w[d].pad_hi += w[d].size;
		w[d].size *= 2;
		what = "twice as long";
		break;
	default: {
		size_t e;

		for (e = 0; e < r; e++)
			if (e != d && w[e].size == 1 && w[e].stride == 1 &&
			    !w[e].pad_lo && !w[e].pad_hi &&
			    os->dims[e] == os->dims[d])
				break;
		if (e == r)
			return false;
		w[e] = at->window[d];
		w[d] = at->window[e];
		what = "over another dimension";
	}
	}
	for (size_t i = 0; i < r; i++)
		if (w[i].size < 1 || w[i].stride < 1 ||
		    window_out(os->dims[i], &w[i]) != in->shape.dims[i])
			return false;
	window_txt(val, sizeof val, w, r);
	if (!usc__sig_rest_replace(c, "window", val, rest, sizeof rest))
		return false;
	usc__sig_args_with(in, (size_t)-1, NULL, args, sizeof args);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "reduce-window", args,
		      rest);
	usc__sig_set_detail(c, "window %s: %s", what, val);
	return true;
}

/* The v-th injective map (lexicographic) of operand dims to result dims
 * of the same sizes, other than the broadcast's own; false if none. */
static bool nth_map(const usc_hlo_shape *os, const usc_hlo_shape *rs,
		    const int64_t *own, int v, int64_t *map)
{
	size_t r = os->rank, depth = 0;
	int64_t cur[8];
	bool used[16] = {false};
	int seen = 0;

	if (r == 0 || r > 8 || rs->rank > 16)
		return false;
	cur[0] = -1;
	/* An iterative depth-first walk over the choices of each dim. */
	for (;;) {
		int64_t k = cur[depth] + 1;

		if (cur[depth] >= 0)
			used[cur[depth]] = false;
		while (k < (int64_t)rs->rank &&
		       (used[k] || rs->dims[k] != os->dims[depth]))
			k++;
		if (k == (int64_t)rs->rank) {
			if (depth == 0)
				return false;
			depth--;
			continue;
		}
		cur[depth] = k;
		used[k] = true;
		if (depth + 1 < r) {
			cur[++depth] = -1;
			continue;
		}
		if (memcmp(cur, own, r * sizeof *cur) != 0 && seen++ == v) {
			memcpy(map, cur, r * sizeof *cur);
			return true;
		}
	}
}

/*
 * broadcast-permute/0..3: the operand's dimensions mapped to other result
 * dimensions of the same sizes (a permuted or moved `dimensions`), the
 * v-th such map.  Written as a transpose of the operand (when the map
 * reorders its dimensions) and a broadcast with increasing dimensions.
 */
bool usc__sig_mut_broadcast_permute(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *o;
	const usc_hlo_attr *at;
	int64_t map[8], order[8], sorted[8], tdims[8];
	char st[256], so[256], dims[128], rest[160], x[160];
	const char *src;
	size_t r;
	bool moved = false;

	if (in->opcode != USC_HLO_OP_BROADCAST || in->operand_count != 1 ||
	    !usc__sig_is_array(&in->shape) || v < 0 || v > 3)
		return false;
	o = in->operands[0];
	at = usc_hlo_instr_attr(in, "dimensions");
	r = o->shape.rank;
	if (!usc__sig_is_array(&o->shape) || r == 0 || r > 8 || !at ||
	    at->kind != USC_HLO_ATTR_INTS || at->count != r)
		return false;
	if (!nth_map(&o->shape, &in->shape, at->ints, v, map))
		return false;
	/* order: operand dims sorted by their result dim. */
	for (size_t i = 0; i < r; i++)
		order[i] = (int64_t)i;
	for (size_t i = 1; i < r; i++)
		for (size_t j = i; j > 0 && map[order[j]] < map[order[j - 1]];
		     j--) {
			int64_t tmp = order[j];

			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	for (size_t i = 0; i < r; i++) {
		sorted[i] = map[order[i]];
		tdims[i] = o->shape.dims[order[i]];
		moved |= order[i] != (int64_t)i;
	}
	src = o->name;
	if (moved) {
		usc_hlo_shape ts = o->shape;

		ts.dims = tdims;
		usc__sig_shape_txt(so, sizeof so, o->shape.dtype, &ts);
		ints_txt(dims, sizeof dims, order, r);
		snprintf(rest, sizeof rest, ", dimensions=%s", dims);
		usc__sig_emit(c, false, usc__sig_hname(c, x), so, "transpose",
			      o->name, rest);
		src = x;
	}
	ints_txt(dims, sizeof dims, sorted, r);
	snprintf(rest, sizeof rest, ", dimensions=%s", dims);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "broadcast", src, rest);
	ints_txt(dims, sizeof dims, map, r);
	usc__sig_set_detail(c, "operand dimensions to %s", dims);
	return true;
}
