/*
 * Defect signatures: the mutations of comparisons, bounds, integer
 * conversions and constants that XLA's own rewrites get wrong.  A
 * compare's direction flipped (LT<->LE, GT<->GE; EQ<->NE), a clamp's
 * bounds swapped, a float -> int convert truncating where the kernel
 * rounded first (or the reverse), a float constant a few ulps off.  Each
 * writes the replacement lines of one op (signature_internal.h).
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * flip-compare/0: the strictness flipped (LT<->LE, GT<->GE), the off-by-
 * one of a bound check; /1: equality negated (EQ<->NE).
 */
bool usc__sig_mut_flip_compare(usc__sig_ctx *c, int v)
{
	static const char *const pairs[2][4][2] = {
	    {{"LT", "LE"}, {"LE", "LT"}, {"GT", "GE"}, {"GE", "GT"}},
	    {{"EQ", "NE"}, {"NE", "EQ"}, {NULL, NULL}, {NULL, NULL}}};
	const usc_hlo_instr *in = c->in;
	const usc_hlo_attr *at;
	char st[256], args[1024], rest[1024], key[32];
	const char *to = NULL, *from = NULL;
	const char *hit;

	if (in->opcode != USC_HLO_OP_COMPARE || v < 0 || v > 1 ||
	    !usc__sig_is_array(&in->shape))
		return false;
	at = usc_hlo_instr_attr(in, "direction");
	if (!at || at->kind != USC_HLO_ATTR_IDENT || !at->text)
		return false;
	for (int i = 0; i < 4; i++)
		if (pairs[v][i][0] && strcmp(at->text, pairs[v][i][0]) == 0) {
			from = pairs[v][i][0];
			to = pairs[v][i][1];
		}
	if (!to)
		return false;
	/* The rest with "direction=XX" rewritten. */
	snprintf(key, sizeof key, "direction=%s", from);
	usc__sig_rest_dup(c, rest, sizeof rest);
	hit = strstr(rest, key);
	if (!hit)
		return false;
	{
		char out[1024];

		snprintf(out, sizeof out, "%.*sdirection=%s%s",
			 (int)(hit - rest), rest, to, hit + strlen(key));
		snprintf(rest, sizeof rest, "%s", out);
	}
	usc__sig_args_with(in, (size_t)-1, NULL, args, sizeof args);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "compare", args, rest);
	usc__sig_set_detail(c, "%s instead of %s", to, from);
	return true;
}

/* clamp(lo, x, hi) computed as clamp(hi, x, lo). */
bool usc__sig_mut_swap_clamp_bounds(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], args[1024];

	if (in->opcode != USC_HLO_OP_CLAMP || in->operand_count != 3 ||
	    !usc__sig_is_array(&in->shape) ||
	    in->operands[0] == in->operands[2] ||
	    !usc__sig_same_shape(&in->operands[0]->shape,
				 &in->operands[2]->shape))
		return false;
	snprintf(args, sizeof args, "%s, %s, %s", in->operands[2]->name,
		 in->operands[1]->name, in->operands[0]->name);
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, st, "clamp", args, NULL);
	usc__sig_set_detail(c, "bounds '%s' and '%s' swapped",
			    in->operands[0]->name, in->operands[2]->name);
	return true;
}

/* A float -> integer convert. */
static bool float_to_int(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_CONVERT && in->operand_count == 1 &&
	       usc__sig_is_array(&in->shape) &&
	       usc_dtype_is_integer(in->shape.dtype) &&
	       usc__sig_is_float_array(&in->operands[0]->shape);
}

static bool is_round(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_ROUND_NEAREST_EVEN ||
	       in->opcode == USC_HLO_OP_ROUND_NEAREST_AFZ;
}

/*
 * The path from v up to a round op through the bound ops a quantizer puts
 * between the round and the convert (clamp's operand, maximum, minimum):
 * path[0] is the round, path[n-1] is v; at most 4 steps.  0 when there is
 * no round.  which[i]: the operand of path[i + 1] that path[i] is.
 */
static size_t round_path(const usc_hlo_instr *v, const usc_hlo_instr **path,
			 size_t *which, size_t depth)
{
	if (depth == 0)
		return 0;
	if (is_round(v) && v->operand_count == 1) {
		path[0] = v;
		return 1;
	}
	if (v->opcode == USC_HLO_OP_CLAMP || v->opcode == USC_HLO_OP_MAXIMUM ||
	    v->opcode == USC_HLO_OP_MINIMUM) {
		for (size_t k = 0; k < v->operand_count; k++) {
			size_t n;

			if (v->opcode == USC_HLO_OP_CLAMP && k != 1)
				continue;
			n = round_path(v->operands[k], path, which, depth - 1);
			if (n) {
				which[n - 1] = k;
				path[n] = v;
				return n + 1;
			}
		}
	}
	return 0;
}

/*
 * convert-int-truncate: convert(round(x)) -> convert(x), the rounding a
 * kernel asked for dropped (HLO's float -> int convert truncates); the
 * round may sit under a clamp to the integer range, which is then
 * written again on x.  convert-int-round: convert(x) of an unrounded x ->
 * convert(round-nearest-even(x)), a truncation the kernel asked for done
 * as rounding.  Both name the convert.
 */
bool usc__sig_mut_convert_int(usc__sig_ctx *c, usc_mutation kind)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *x, *path[5];
	size_t which[5], n;
	char st[256], sx[256], r[160], prev[160], args[1024];

	if (!float_to_int(in))
		return false;
	x = in->operands[0];
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	n = round_path(x, path, which, 4);
	if (kind == USC_MUT_CONVERT_INT_TRUNCATE) {
		if (!n)
			return false;
		snprintf(prev, sizeof prev, "%s", path[0]->operands[0]->name);
		for (size_t i = 1; i < n; i++) {
			usc__sig_args_with(path[i], which[i - 1], prev, args,
					   sizeof args);
			usc__sig_shape_txt(sx, sizeof sx, path[i]->shape.dtype,
					   &path[i]->shape);
			usc__sig_emit(c, false, usc__sig_hname(c, r), sx,
				      usc_hlo_opcode_name(path[i]->opcode),
				      args, NULL);
			snprintf(prev, sizeof prev, "%s", r);
		}
		usc__sig_emit(c, in->is_root, in->name, st, "convert", prev,
			      NULL);
		usc__sig_set_detail(c, "truncated: '%s' (%s) dropped",
				    path[0]->name,
				    usc_hlo_opcode_name(path[0]->opcode));
		return true;
	}
	if (n)
		return false;
	usc__sig_shape_txt(sx, sizeof sx, x->shape.dtype, &x->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, r), sx, "round-nearest-even",
		      x->name, NULL);
	usc__sig_emit(c, in->is_root, in->name, st, "convert", r, NULL);
	usc__sig_set_detail(c, "'%s' rounded to nearest even, not truncated",
			    x->name);
	return true;
}

/*
 * constant-ulps/0..3: a float constant moved by +1, -1, +2, -2 codes of
 * its type (toward +inf for +k), as when a compiler folds a constant in
 * another precision or rounds a literal the wrong way.  /4..7 move it by
 * the same codes of bf16, /8..11 of f16, when the constant is a value of
 * that narrower type: XLA computes a bf16 or f16 program in f32 and
 * widens its literals, so a literal one bf16 ulp off in the program is a
 * move of 2^16 codes in the kernel's f32 constant.  Only finite non-zero
 * constants whose results keep their sign are written; a splat array
 * constant (a folded broadcast) moves every element.
 */
bool usc__sig_mut_constant_ulps(usc__sig_ctx *c, int v)
{
	static const int steps[4] = {1, -1, 2, -2};
	const usc_hlo_instr *in = c->in;
	usc_dtype t = in->shape.dtype, u;
	const usc_format *f;
	uint64_t bits, sign, mag, nb;
	double x, y, back;
	char val[64], unit[16] = "";
	int k;

	if (v < 0 || v > 11 || !usc__sig_splat_constant(in))
		return false;
	u = v < 4 ? t : v < 8 ? USC_BF16 : USC_F16;
	f = usc_format_of(u);
	if (!f || !f->has_sign || f->bits > 64)
		return false;
	x = in->literal->elems[0].value;
	/* A zero has no ulp of its own (its neighbours are subnormals): an
	 * init or a mask, not a literal a compiler rounds. */
	if (!isfinite(x) || x == 0 ||
	    usc_encode_double(u, x, NULL, &bits, NULL) != USC_OK)
		return false;
	if (v >= 4) {
		/* Only a value of the narrower type, in a wider constant. */
		if (usc__sig_precision_of(u) >= usc__sig_precision_of(t) ||
		    usc_decode_double(u, bits, &back) != USC_OK || back != x)
			return false;
		snprintf(unit, sizeof unit, " %s", usc_dtype_name(u));
	}
	k = steps[v % 4];
	sign = (uint64_t)1 << (f->bits - 1);
	mag = bits & ~sign;
	/* Toward +inf: a larger magnitude when positive, a smaller when
	 * negative (zero counts as positive). */
	if ((bits & sign) && mag != 0)
		k = -k;
	if (k < 0 && mag < (uint64_t)-k)
		return false;
	nb = (bits & sign && mag != 0 ? sign : 0) |
	     (mag + (uint64_t)(int64_t)k);
	if (usc_decode_double(u, nb, &y) != USC_OK || !isfinite(y) ||
	    isnan(y) || y == x)
		return false;
	snprintf(val, sizeof val, "%.17g", y);
	usc__sig_emit_constant(c, val);
	usc__sig_set_detail(c, "%s %+d%s ulp%s (%s)",
			    in->literal->elems[0].text, steps[v % 4], unit,
			    steps[v % 4] == 1 || steps[v % 4] == -1 ? "" : "s",
			    val);
	return true;
}
