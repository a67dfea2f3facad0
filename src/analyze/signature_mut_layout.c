/*
 * Defect signatures: the mutations of indexing and layout.  An operand
 * read one index off or transposed, a reduction over the wrong
 * dimension, an output left zero or holding a stale tile.  Each writes
 * the replacement lines of one op (signature_internal.h).
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool usc__sig_mut_off_by_one(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	char st[256], so[256], args[1024], rest[1024], a[160], b[160], r[160];
	char val[256], one[160];

	if (!usc__sig_is_array(&in->shape))
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	switch (in->opcode) {
	case USC_HLO_OP_BROADCAST: {
		const usc_hlo_instr *o = in->operands[0];
		int64_t n;
		usc_dtype t = o->shape.dtype;

		if (v != 0 || !usc__sig_is_array(&o->shape) ||
		    o->shape.rank != 1 || o->shape.dims[0] < 2)
			return false;
		n = o->shape.dims[0];
		/* Operand read at (i + 1) mod n: a rotation by one. */
		snprintf(so, sizeof so, "%s[%lld]", usc_dtype_name(t),
			 (long long)(n - 1));
		snprintf(val, sizeof val, ", slice={[1:%lld]}", (long long)n);
		usc__sig_emit(c, false, usc__sig_hname(c, a), so, "slice",
			      o->name, val);
		snprintf(so, sizeof so, "%s[1]", usc_dtype_name(t));
		usc__sig_emit(c, false, usc__sig_hname(c, b), so, "slice",
			      o->name, ", slice={[0:1]}");
		snprintf(so, sizeof so, "%s[%lld]", usc_dtype_name(t),
			 (long long)n);
		snprintf(args, sizeof args, "%s, %s", a, b);
		usc__sig_emit(c, false, usc__sig_hname(c, r), so, "concatenate",
			      args, ", dimensions={0}");
		usc__sig_emit(c, in->is_root, in->name, st, "broadcast", r,
			      usc__sig_rest_dup(c, rest, sizeof rest));
		usc__sig_set_detail(
		    c, "operand '%s' read one index on (rotated)", o->name);
		return true;
	}
	case USC_HLO_OP_SLICE: {
		const usc_hlo_attr *at = usc_hlo_instr_attr(in, "slice");
		const usc_hlo_instr *o = in->operands[0];
		size_t used = 0;
		int64_t shift = 0;

		if (!at || at->kind != USC_HLO_ATTR_SLICE ||
		    (size_t)v >= at->count || !usc__sig_is_array(&o->shape))
			return false;
		if (at->slice[v].limit + at->slice[v].stride <=
			o->shape.dims[v] + at->slice[v].stride - 1 &&
		    at->slice[v].limit < o->shape.dims[v])
			shift = 1;
		else if (at->slice[v].start >= 1)
			shift = -1;
		else
			return false;
		used += (size_t)snprintf(val + used, sizeof val - used, "{");
		for (size_t d = 0; d < at->count && used < sizeof val; d++) {
			int64_t s = at->slice[d].start, l = at->slice[d].limit;

			if (d == (size_t)v) {
				s += shift;
				l += shift;
			}
			used += (size_t)snprintf(
			    val + used, sizeof val - used, "%s[%lld:%lld:%lld]",
			    d ? ", " : "", (long long)s, (long long)l,
			    (long long)at->slice[d].stride);
		}
		if (used < sizeof val)
			snprintf(val + used, sizeof val - used, "}");
		if (!usc__sig_rest_replace(c, "slice", val, rest, sizeof rest))
			return false;
		usc__sig_emit(c, in->is_root, in->name, st, "slice", o->name,
			      rest);
		usc__sig_set_detail(c, "dimension %d shifted by %+lld", v,
				    (long long)shift);
		return true;
	}
	case USC_HLO_OP_IOTA:
		if (v != 0)
			return false;
		usc__sig_emit_renamed(c, usc__sig_hname(c, a));
		usc__sig_splat(c, in->shape.dtype, "1", &in->shape, one);
		snprintf(args, sizeof args, "%s, %s", a, one);
		usc__sig_emit(c, in->is_root, in->name, st, "add", args, NULL);
		usc__sig_set_detail(c, "iota plus one");
		return true;
	case USC_HLO_OP_DYNAMIC_SLICE:
	case USC_HLO_OP_GATHER: {
		size_t k = in->opcode == USC_HLO_OP_GATHER ? 1 : (size_t)v + 1;
		const usc_hlo_instr *ix;
		char sx[256], sc[64];

		if ((in->opcode == USC_HLO_OP_GATHER && v != 0) ||
		    k >= in->operand_count)
			return false;
		ix = in->operands[k];
		if (!usc__sig_is_array(&ix->shape) ||
		    !usc_dtype_is_integer(ix->shape.dtype))
			return false;
		usc__sig_shape_txt(sx, sizeof sx, ix->shape.dtype, &ix->shape);
		if (ix->shape.rank == 0) {
			snprintf(sc, sizeof sc, "%s[]",
				 usc_dtype_name(ix->shape.dtype));
			usc__sig_emit(c, false, usc__sig_hname(c, one), sc,
				      "constant", "1", NULL);
		} else {
			usc__sig_splat(c, ix->shape.dtype, "1", &ix->shape,
				       one);
		}
		snprintf(args, sizeof args, "%s, %s", ix->name, one);
		usc__sig_emit(c, false, usc__sig_hname(c, a), sx, "add", args,
			      NULL);
		usc__sig_args_with(in, k, a, args, sizeof args);
		usc__sig_emit(c, in->is_root, in->name, st,
			      usc_hlo_opcode_name(in->opcode), args,
			      usc__sig_rest_dup(c, rest, sizeof rest));
		usc__sig_set_detail(c, "start index '%s' plus one", ix->name);
		return true;
	}
	default:
		return false;
	}
}

bool usc__sig_mut_transposed(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *o;
	char st[256], so[256], args[1024], rest[1024], a[160], b[160];
	int64_t r, cc;

	if (usc_hlo_opcode_category(in->opcode) != USC_HLO_CAT_ELEMENTWISE ||
	    in->operand_count != 2 || (size_t)v >= in->operand_count ||
	    !usc__sig_is_array(&in->shape))
		return false;
	o = in->operands[v];
	if (!usc__sig_is_array(&o->shape) || o->shape.rank != 2)
		return false;
	r = o->shape.dims[0];
	cc = o->shape.dims[1];
	if (r < 2 || cc < 2)
		return false;
	/* The Python harness's shape: the operand's data read as [c, r],
	 * transposed back to [r, c]. */
	snprintf(so, sizeof so, "%s[%lld,%lld]", usc_dtype_name(o->shape.dtype),
		 (long long)cc, (long long)r);
	usc__sig_emit(c, false, usc__sig_hname(c, a), so, "reshape", o->name,
		      NULL);
	snprintf(so, sizeof so, "%s[%lld,%lld]", usc_dtype_name(o->shape.dtype),
		 (long long)r, (long long)cc);
	usc__sig_emit(c, false, usc__sig_hname(c, b), so, "transpose", a,
		      ", dimensions={1,0}");
	usc__sig_args_with(in, (size_t)v, b, args, sizeof args);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st,
		      usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_set_detail(c, "operand '%s' read through transposed indices",
			    o->name);
	return true;
}

bool usc__sig_mut_wrong_reduce_dim(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_attr *at;
	const usc_hlo_shape *os;
	char st[256], rest[1024], val[64];
	int64_t d;
	int seen = 0;

	if (in->opcode != USC_HLO_OP_REDUCE || in->operand_count != 2 ||
	    !usc__sig_is_array(&in->shape))
		return false;
	at = usc_hlo_instr_attr(in, "dimensions");
	os = &in->operands[0]->shape;
	if (!at || at->kind != USC_HLO_ATTR_INTS || at->count != 1 ||
	    !usc__sig_is_array(os))
		return false;
	d = at->ints[0];
	for (int64_t e = 0; e < (int64_t)os->rank; e++) {
		bool same = true;
		size_t k = 0;

		if (e == d || os->dims[e] != os->dims[d])
			continue;
		/* The result keeps the other dims in order: must match. */
		for (int64_t i = 0; i < (int64_t)os->rank; i++)
			if (i != e) {
				if (k >= in->shape.rank ||
				    in->shape.dims[k] != os->dims[i])
					same = false;
				k++;
			}
		if (!same || seen++ != v)
			continue;
		snprintf(val, sizeof val, "{%lld}", (long long)e);
		if (!usc__sig_rest_replace(c, "dimensions", val, rest,
					   sizeof rest))
			return false;
		usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
		{
			char args[1024];

			usc__sig_args_with(in, (size_t)-1, NULL, args,
					   sizeof args);
			usc__sig_emit(c, in->is_root, in->name, st, "reduce",
				      args, rest);
		}
		usc__sig_set_detail(c, "over dimension %lld instead of %lld",
				    (long long)e, (long long)d);
		return true;
	}
	return false;
}

bool usc__sig_mut_zero(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sc[64], k[160];

	/* Output buffers: the entry's root and every fusion's result. */
	if (!usc__sig_is_array(&in->shape) || in->shape.dtype == USC_PRED)
		return false;
	if (!(in->opcode == USC_HLO_OP_FUSION ||
	      (in->is_root && in->parent->is_entry)))
		return false;
	if (in->opcode == USC_HLO_OP_PARAMETER ||
	    in->opcode == USC_HLO_OP_CONSTANT)
		return false;
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(in->shape.dtype));
	usc__sig_emit(c, false, usc__sig_hname(c, k), sc, "constant", "0",
		      NULL);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "broadcast", k,
		      ", dimensions={}");
	usc__sig_set_detail(c, "result all zeros");
	return true;
}

/* "[0:a], [0:d1], ..." : dimension `dim` cut to [0:hi), the others whole. */
void usc__sig_slice_txt(char *buf, size_t n, const usc_hlo_shape *sh,
			size_t dim, int64_t hi)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sh->rank && used < n; i++)
		used += (size_t)snprintf(
		    buf + used, n - used, "%s[0:%lld]", i ? ", " : "",
		    (long long)(i == dim ? hi : sh->dims[i]));
}

/*
 * A stale output region: the result's last h = n/2 positions along a
 * dimension (variant 0: the outermost, 1: the innermost) hold the values
 * of its first h, as when a tile loop writes the first tile again (or
 * never writes the last and the buffer still holds an earlier tile's
 * values).  concatenate(x[0:n-h], x[0:h]).  The same buffers as `zero`.
 */
bool usc__sig_mut_stale(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_hlo_shape part;
	int64_t dims[16];
	char x[160], a[160], b[160], sl[512], st[256], args[400], rest[600];
	size_t dim;
	int64_t n, h;

	if (!usc__sig_is_array(&in->shape) || in->shape.rank == 0 ||
	    in->shape.rank > USC__ARRAY_LEN(dims) || v > 1 ||
	    (v == 1 && in->shape.rank < 2))
		return false;
	if (!(in->opcode == USC_HLO_OP_FUSION ||
	      (in->is_root && in->parent->is_entry)))
		return false;
	if (in->opcode == USC_HLO_OP_PARAMETER ||
	    in->opcode == USC_HLO_OP_CONSTANT)
		return false;
	dim = v == 0 ? 0 : in->shape.rank - 1;
	n = in->shape.dims[dim];
	h = n / 2;
	if (h < 1)
		return false;
	usc__sig_hname(c, x);
	usc__sig_emit_renamed(c, x);
	/* A copy of the dims: the shape's own are the module's. */
	memcpy(dims, in->shape.dims, in->shape.rank * sizeof *dims);
	part = in->shape;
	part.dims = dims;
	part.dims[dim] = n - h;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &part);
	usc__sig_slice_txt(sl, sizeof sl, &in->shape, dim, n - h);
	snprintf(rest, sizeof rest, ", slice={%s}", sl);
	usc__sig_emit(c, false, usc__sig_hname(c, a), st, "slice", x, rest);
	part.dims[dim] = h;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &part);
	usc__sig_slice_txt(sl, sizeof sl, &in->shape, dim, h);
	snprintf(rest, sizeof rest, ", slice={%s}", sl);
	usc__sig_emit(c, false, usc__sig_hname(c, b), st, "slice", x, rest);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	snprintf(args, sizeof args, "%s, %s", a, b);
	snprintf(rest, sizeof rest, ", dimensions={%zu}", dim);
	usc__sig_emit(c, in->is_root, in->name, st, "concatenate", args, rest);
	usc__sig_set_detail(
	    c,
	    "dimension %zu's last %lld hold its first %lld (a stale "
	    "tile)",
	    dim, (long long)h, (long long)h);
	return true;
}
