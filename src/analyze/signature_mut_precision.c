/*
 * Defect signatures: the mutations of precision and rounding.  An op
 * computed in a narrower type, rounded in another direction, with a
 * rounding skipped (excess precision), its subnormals flushed, a
 * narrowing convert that saturates or gives NaN on overflow.  Each writes
 * the replacement lines of one op (signature_internal.h).
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const usc_dtype narrow_types[] = {USC_BF16, USC_F16, USC_F8E4M3FN,
					 USC_F8E5M2};

bool usc__sig_mut_narrow(usc__sig_ctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype n = narrow_types[v], t = in->shape.dtype;
	char sh[256], args[1024], nm[160], rest[1024];

	if (usc__sig_float_arith(in)) {
		if (usc__sig_fbits(n) >= usc__sig_fbits(t))
			return false;
		/* The add of a reduction's region, or the op feeding it,
		 * narrowed to bf16 or f16 is a narrow-accumulator: named
		 * there, once. */
		if (v < 2 && (usc__sig_accumulator_region(in) ||
			      usc__sig_feeds_accumulator(in)))
			return false;
		usc__sig_shape_txt(sh, sizeof sh, n, &in->shape);
		usc__sig_convert_operands(c, sh, args, sizeof args);
		usc__sig_hname(c, nm);
		usc__sig_emit(c, false, nm, sh, usc_hlo_opcode_name(in->opcode),
			      args, usc__sig_rest_dup(c, rest, sizeof rest));
		usc__sig_shape_txt(sh, sizeof sh, t, &in->shape);
		usc__sig_emit(c, in->is_root, in->name, sh, "convert", nm,
			      NULL);
		usc__sig_set_detail(c, "computed in %s", usc_dtype_name(n));
		return true;
	}
	/* A narrowing convert rounded twice, through n on the way. */
	if (usc__sig_float_convert(in)) {
		usc_dtype s = in->operands[0]->shape.dtype;

		if (!(usc__sig_precision_of(n) < usc__sig_precision_of(s) &&
		      usc__sig_precision_of(n) > usc__sig_precision_of(t) &&
		      usc__sig_fbits(n) < usc__sig_fbits(s)))
			return false;
		usc__sig_shape_txt(sh, sizeof sh, n, &in->shape);
		usc__sig_hname(c, nm);
		usc__sig_emit(c, false, nm, sh, "convert",
			      in->operands[0]->name, NULL);
		usc__sig_shape_txt(sh, sizeof sh, t, &in->shape);
		usc__sig_emit(c, in->is_root, in->name, sh, "convert", nm,
			      NULL);
		usc__sig_set_detail(c, "rounded through %s first",
				    usc_dtype_name(n));
		return true;
	}
	return false;
}

/* The unsigned type of a width, for arithmetic on encodings. */
usc_dtype usc__sig_uint_of_bits(int bits)
{
	switch (bits) {
	case 8:
		return USC_U8;
	case 16:
		return USC_U16;
	case 32:
		return USC_U32;
	case 64:
		return USC_U64;
	}
	return USC_DTYPE_INVALID;
}

/*
 * x (type w, exact or nearly: the op computed in a wider type) rounded to
 * t in a directed mode, by correcting the nearest rounding r0 one step
 * where it went the wrong way.  On sign-magnitude encodings a step toward
 * zero is bits - 1, away from zero bits + 1 (with the sign bit set for a
 * step down from +-0); the steps cross the subnormal/normal boundary and
 * reach the largest finite value from Inf, so only NaN-on-overflow types
 * (fn) keep NaN where a directed rounding would give the largest value.
 */
static void emit_directed(usc__sig_ctx *c, usc_mutation mode, const char *x,
			  const char *err_term, usc_dtype w, usc_dtype t)
{
	const usc_hlo_shape *sh = &c->in->shape;
	usc_dtype u = usc__sig_uint_of_bits(usc__sig_fbits(t));
	char st[256], sw[256], su[256], sp[256], args[512];
	char r0[160], r1[160], r2[160], one[160], dn[160], cnd[160];
	char step[160], stepf[160], val[64], diff[160], zw[160];
	uint64_t sign = (uint64_t)1 << (usc__sig_fbits(t) - 1);

	usc__sig_shape_txt(st, sizeof st, t, sh);
	usc__sig_shape_txt(sw, sizeof sw, w, sh);
	usc__sig_shape_txt(su, sizeof su, u, sh);
	usc__sig_shape_txt(sp, sizeof sp, USC_PRED, sh);
	usc__sig_emit(c, false, usc__sig_hname(c, r0), st, "convert", x, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, r1), sw, "convert", r0, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, r2), su, "bitcast-convert",
		      r0, NULL);
	usc__sig_splat(c, u, "1", sh, one);
	snprintf(args, sizeof args, "%s, %s", r2, one);
	usc__sig_emit(c, false, usc__sig_hname(c, dn), su, "subtract", args,
		      NULL);
	/*
	 * The sign of r1 - (x + err): r1 - x is exact (r1 is x rounded to
	 * a narrower type, so both are multiples of x's ulp and close), and
	 * err, the exact error of x when the op was an add (TwoSum), only
	 * decides where r1 - x is zero.
	 */
	snprintf(args, sizeof args, "%s, %s", r1, x);
	usc__sig_emit(c, false, usc__sig_hname(c, diff), sw, "subtract", args,
		      NULL);
	if (err_term) {
		char d2[160];

		snprintf(args, sizeof args, "%s, %s", diff, err_term);
		usc__sig_emit(c, false, usc__sig_hname(c, d2), sw, "subtract",
			      args, NULL);
		snprintf(diff, sizeof diff, "%s", d2);
	}
	usc__sig_splat(c, w, "0", sh, zw);
	if (mode == USC_MUT_ROUND_TOWARD_ZERO) {
		char pr[160], sg[160];

		/*
		 * Away from zero: r1 - exact has r1's sign.  The test is
		 * sign(r1 - exact) * r1 > 0, not (r1 - exact) * r1 > 0: near
		 * the bottom of w's range that product underflows to zero (an
		 * f32 -> bf16 convert near 2^-126: r1 ~ 2^-126 times an error
		 * ~ 2^-134 is 2^-260, below f32's 2^-149), and the elements
		 * would keep their nearest value.
		 */
		usc__sig_emit(c, false, usc__sig_hname(c, sg), sw, "sign", diff,
			      NULL);
		snprintf(args, sizeof args, "%s, %s", sg, r1);
		usc__sig_emit(c, false, usc__sig_hname(c, pr), sw, "multiply",
			      args, NULL);
		snprintf(args, sizeof args, "%s, %s", pr, zw);
		usc__sig_emit(c, false, usc__sig_hname(c, cnd), sp, "compare",
			      args, ", direction=GT");
		snprintf(step, sizeof step, "%s", dn);
	} else {
		bool up = mode == USC_MUT_ROUND_UP;
		char z[160], side[160], msk[160], sm[160], away[160];

		snprintf(args, sizeof args, "%s, %s", diff, zw);
		usc__sig_emit(c, false, usc__sig_hname(c, cnd), sp, "compare",
			      args, up ? ", direction=LT" : ", direction=GT");
		usc__sig_splat(c, t, "0", sh, z);
		snprintf(args, sizeof args, "%s, %s", r0, z);
		/* Up: a negative r0 steps toward zero; down: a positive. */
		usc__sig_emit(c, false, usc__sig_hname(c, side), sp, "compare",
			      args, up ? ", direction=LT" : ", direction=GT");
		snprintf(val, sizeof val, "%llu",
			 (unsigned long long)(up ? sign - 1 : sign));
		usc__sig_splat(c, u, val, sh, msk);
		snprintf(args, sizeof args, "%s, %s", r2, msk);
		usc__sig_emit(c, false, usc__sig_hname(c, sm), su,
			      up ? "and" : "or", args, NULL);
		snprintf(args, sizeof args, "%s, %s", sm, one);
		usc__sig_emit(c, false, usc__sig_hname(c, away), su, "add",
			      args, NULL);
		snprintf(args, sizeof args, "%s, %s, %s", side, dn, away);
		usc__sig_emit(c, false, usc__sig_hname(c, step), su, "select",
			      args, NULL);
	}
	usc__sig_emit(c, false, usc__sig_hname(c, stepf), st, "bitcast-convert",
		      step, NULL);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, stepf, r0);
	usc__sig_emit(c, c->in->is_root, c->in->name, st, "select", args, NULL);
}

static bool directed_ok(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f && f->has_sign &&
	       usc__sig_uint_of_bits(f->bits) != USC_DTYPE_INVALID &&
	       f->bits < 64;
}

bool usc__sig_mut_round(usc__sig_ctx *c, usc_mutation mode)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype t = in->shape.dtype;
	const char *what = mode == USC_MUT_ROUND_TOWARD_ZERO ? "toward zero"
			   : mode == USC_MUT_ROUND_UP	     ? "toward +inf"
							     : "toward -inf";

	if (!usc__sig_is_float_array(&in->shape) || !directed_ok(t))
		return false;
	if (usc__sig_float_convert(in)) {
		usc_dtype s = in->operands[0]->shape.dtype;

		if (usc__sig_precision_of(s) <= usc__sig_precision_of(t))
			return false;
		emit_directed(c, mode, in->operands[0]->name, NULL, s, t);
		usc__sig_set_detail(c, "convert rounded %s", what);
		return true;
	}
	if (usc__sig_float_arith(in)) {
		char sh[256], args[1024], x[160], rest[1024];

		/* The exact result, or near enough: the op in f64. */
		usc__sig_shape_txt(sh, sizeof sh, USC_F64, &in->shape);
		usc__sig_convert_operands(c, sh, args, sizeof args);
		usc__sig_emit(c, false, usc__sig_hname(c, x), sh,
			      usc_hlo_opcode_name(in->opcode), args,
			      usc__sig_rest_dup(c, rest, sizeof rest));
		/*
		 * An f64 product of narrower floats is exact, and f64's 53
		 * bits decide the direction of a quotient or root of f32
		 * values; an f64 sum is not exact when the exponents lie far
		 * apart, so its error is kept (Knuth's TwoSum) to break the
		 * case where the sum lands on a representable value.
		 */
		if (in->opcode == USC_HLO_OP_ADD ||
		    in->opcode == USC_HLO_OP_SUBTRACT) {
			char a[160], b[160], bb[160], t1[160], e1[160];
			char e2[160], er[160];

			snprintf(a, sizeof a, "%s.sg0", in->name);
			snprintf(b, sizeof b, "%s.sg1", in->name);
			if (in->opcode == USC_HLO_OP_SUBTRACT) {
				char nb[160];

				usc__sig_emit(c, false, usc__sig_hname(c, nb),
					      sh, "negate", b, NULL);
				snprintf(b, sizeof b, "%s", nb);
			}
			snprintf(args, sizeof args, "%s, %s", x, a);
			usc__sig_emit(c, false, usc__sig_hname(c, bb), sh,
				      "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", x, bb);
			usc__sig_emit(c, false, usc__sig_hname(c, t1), sh,
				      "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", a, t1);
			usc__sig_emit(c, false, usc__sig_hname(c, e1), sh,
				      "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", b, bb);
			usc__sig_emit(c, false, usc__sig_hname(c, e2), sh,
				      "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", e1, e2);
			usc__sig_emit(c, false, usc__sig_hname(c, er), sh,
				      "add", args, NULL);
			emit_directed(c, mode, x, er, USC_F64, t);
		} else {
			emit_directed(c, mode, x, NULL, USC_F64, t);
		}
		usc__sig_set_detail(c, "result rounded %s", what);
		return true;
	}
	return false;
}

bool usc__sig_mut_skip_rounding(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char sh[256], args[1024], nm[160], rest[1024];
	size_t used = 0;
	int skipped = 0;

	/* convert(convert(x: f32 -> bf16) -> f32): the pair skipped. */
	if (usc__sig_float_convert(in) &&
	    in->operands[0]->opcode == USC_HLO_OP_CONVERT &&
	    in->operands[0]->operand_count == 1 &&
	    usc__sig_same_shape(&in->operands[0]->operands[0]->shape,
				&in->shape) &&
	    usc__sig_precision_of(in->operands[0]->shape.dtype) <
		usc__sig_precision_of(in->shape.dtype)) {
		usc__sig_shape_txt(sh, sizeof sh, in->shape.dtype, &in->shape);
		usc__sig_emit(c, in->is_root, in->name, sh, "reshape",
			      in->operands[0]->operands[0]->name, NULL);
		usc__sig_set_detail(
		    c, "the rounding of '%s' to %s skipped",
		    in->operands[0]->name,
		    usc_dtype_name(in->operands[0]->shape.dtype));
		return true;
	}
	if (!usc__sig_float_arith(in) ||
	    usc__sig_precision_of(in->shape.dtype) >= 24)
		return false;
	usc__sig_shape_txt(sh, sizeof sh, USC_F32, &in->shape);
	args[0] = '\0';
	for (size_t i = 0; i < in->operand_count; i++) {
		const usc_hlo_instr *o = in->operands[i];
		const char *src = NULL;

		if (o->opcode == USC_HLO_OP_CONVERT && o->operand_count == 1 &&
		    usc__sig_is_float_array(&o->operands[0]->shape) &&
		    o->operands[0]->shape.dtype == USC_F32 &&
		    usc__sig_same_dims(&o->operands[0]->shape, &in->shape)) {
			src = o->operands[0]->name;
			skipped++;
		} else {
			src = usc__sig_hname(c, nm);
			usc__sig_emit(c, false, nm, sh, "convert", o->name,
				      NULL);
		}
		used += (size_t)snprintf(args + used, sizeof args - used,
					 "%s%s", i ? ", " : "", src);
	}
	if (!skipped)
		return false;
	usc__sig_hname(c, nm);
	usc__sig_emit(c, false, nm, sh, usc_hlo_opcode_name(in->opcode), args,
		      usc__sig_rest_dup(c, rest, sizeof rest));
	usc__sig_shape_txt(sh, sizeof sh, in->shape.dtype, &in->shape);
	usc__sig_emit(c, in->is_root, in->name, sh, "convert", nm, NULL);
	usc__sig_set_detail(c, "computed in f32 from %d unrounded operand%s",
			    skipped, skipped > 1 ? "s" : "");
	return true;
}

bool usc__sig_mut_flush(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	const usc_format *f;
	usc_float_info fi;
	char st[256], sp[256], args[512], orig[160], a[160], mn[160];
	char cnd[160], z[160], zz[160], val[64];

	if (!usc__sig_is_float_array(&in->shape))
		return false;
	f = usc_format_of(in->shape.dtype);
	if (!f || !f->has_subnormals ||
	    usc_float_info_of(in->shape.dtype, &fi) != USC_OK)
		return false;
	switch (usc_hlo_opcode_category(in->opcode)) {
	case USC_HLO_CAT_ELEMENTWISE:
	case USC_HLO_CAT_REDUCE:
	case USC_HLO_CAT_LINALG:
		break;
	default:
		if (in->opcode != USC_HLO_OP_PARAMETER)
			return false;
	}
	if (in->opcode == USC_HLO_OP_CONSTANT ||
	    in->opcode == USC_HLO_OP_SELECT)
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	usc__sig_emit_renamed(c, usc__sig_hname(c, orig));
	usc__sig_emit(c, false, usc__sig_hname(c, a), st, "abs", orig, NULL);
	snprintf(val, sizeof val, "%.17g", fi.min_normal);
	usc__sig_splat(c, in->shape.dtype, val, &in->shape, mn);
	snprintf(args, sizeof args, "%s, %s", a, mn);
	usc__sig_emit(c, false, usc__sig_hname(c, cnd), sp, "compare", args,
		      ", direction=LT");
	usc__sig_splat(c, in->shape.dtype, "0", &in->shape, z);
	/* x * 0 is a zero of x's sign for every finite x. */
	snprintf(args, sizeof args, "%s, %s", orig, z);
	usc__sig_emit(c, false, usc__sig_hname(c, zz), st, "multiply", args,
		      NULL);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, zz, orig);
	usc__sig_emit(c, in->is_root, in->name, st, "select", args, NULL);
	usc__sig_set_detail(c, "%s subnormals flushed",
			    in->opcode == USC_HLO_OP_PARAMETER ? "input"
							       : "result");
	return true;
}

bool usc__sig_narrowing_convert(const usc_hlo_instr *in)
{
	return usc__sig_float_convert(in) &&
	       (usc__sig_precision_of(in->shape.dtype) <
		    usc__sig_precision_of(in->operands[0]->shape.dtype) ||
		usc__sig_fbits(in->shape.dtype) <
		    usc__sig_fbits(in->operands[0]->shape.dtype));
}

/*
 * Whether a float convert can overflow: the operand's type reaches past
 * the largest finite value of the target.  A convert narrowed in precision
 * only (f16 to bf16, f8e4m3fn to f8e5m2) never overflows, so a mutation of
 * its overflow is the convert itself, and its clamp bounds would not even
 * be values of the operand's type.
 */
static bool convert_can_overflow(const usc_hlo_instr *in)
{
	usc_float_info fs, ft;

	return usc_float_info_of(in->operands[0]->shape.dtype, &fs) ==
		       USC_OK &&
	       usc_float_info_of(in->shape.dtype, &ft) == USC_OK &&
	       ft.max_finite < fs.max_finite;
}

bool usc__sig_mut_convert_saturate(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype s, t = in->shape.dtype;
	usc_float_info fi;
	char ss[256], st[256], args[512], lo[160], hi[160], cl[160], val[64];

	if (!usc__sig_narrowing_convert(in) || !convert_can_overflow(in) ||
	    usc_float_info_of(t, &fi) != USC_OK)
		return false;
	s = in->operands[0]->shape.dtype;
	usc__sig_shape_txt(ss, sizeof ss, s, &in->shape);
	usc__sig_shape_txt(st, sizeof st, t, &in->shape);
	snprintf(val, sizeof val, "%.17g", -fi.max_finite);
	usc__sig_splat(c, s, val, &in->shape, lo);
	snprintf(val, sizeof val, "%.17g", fi.max_finite);
	usc__sig_splat(c, s, val, &in->shape, hi);
	snprintf(args, sizeof args, "%s, %s, %s", lo, in->operands[0]->name,
		 hi);
	usc__sig_emit(c, false, usc__sig_hname(c, cl), ss, "clamp", args, NULL);
	usc__sig_emit(c, in->is_root, in->name, st, "convert", cl, NULL);
	usc__sig_set_detail(c, "saturating at %.17g", fi.max_finite);
	return true;
}

bool usc__sig_mut_convert_nan(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	const usc_format *f;
	char st[256], sp[256], args[512], y[160], f1[160], f2[160], n2[160];
	char cnd[160], nan[160];

	if (!usc__sig_narrowing_convert(in) || !convert_can_overflow(in))
		return false;
	f = usc_format_of(in->shape.dtype);
	if (!f || f->inf == USC_INF_NONE || f->nan == USC_NAN_NONE)
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	usc__sig_emit(c, false, usc__sig_hname(c, y), st, "convert",
		      in->operands[0]->name, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, f1), sp, "is-finite",
		      in->operands[0]->name, NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, f2), sp, "is-finite", y,
		      NULL);
	usc__sig_emit(c, false, usc__sig_hname(c, n2), sp, "not", f2, NULL);
	snprintf(args, sizeof args, "%s, %s", f1, n2);
	usc__sig_emit(c, false, usc__sig_hname(c, cnd), sp, "and", args, NULL);
	usc__sig_splat(c, in->shape.dtype, "nan", &in->shape, nan);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, nan, y);
	usc__sig_emit(c, in->is_root, in->name, st, "select", args, NULL);
	usc__sig_set_detail(c, "NaN instead of Inf on overflow");
	return true;
}

bool usc__sig_mut_nan_dropping(usc__sig_ctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sp[256], args[512], na[160], nb[160];
	char mm[160], s1[160], lo[160];

	if (!usc__sig_is_float_array(&in->shape))
		return false;
	usc__sig_shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	usc__sig_shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	if ((in->opcode == USC_HLO_OP_MAXIMUM ||
	     in->opcode == USC_HLO_OP_MINIMUM) &&
	    usc__sig_float_arith(in)) {
		const char *a = in->operands[0]->name,
			   *b = in->operands[1]->name;

		snprintf(args, sizeof args, "%s, %s", a, a);
		usc__sig_emit(c, false, usc__sig_hname(c, na), sp, "compare",
			      args, ", direction=NE");
		snprintf(args, sizeof args, "%s, %s", b, b);
		usc__sig_emit(c, false, usc__sig_hname(c, nb), sp, "compare",
			      args, ", direction=NE");
		usc__sig_emit_renamed(c, usc__sig_hname(c, mm));
		snprintf(args, sizeof args, "%s, %s, %s", nb, a, mm);
		usc__sig_emit(c, false, usc__sig_hname(c, s1), st, "select",
			      args, NULL);
		snprintf(args, sizeof args, "%s, %s, %s", na, b, s1);
		usc__sig_emit(c, in->is_root, in->name, st, "select", args,
			      NULL);
		usc__sig_set_detail(c, "a NaN operand ignored");
		return true;
	}
	if (in->opcode == USC_HLO_OP_CLAMP && in->operand_count == 3 &&
	    usc__sig_same_shape(&in->operands[1]->shape, &in->shape)) {
		const char *x = in->operands[1]->name;

		snprintf(args, sizeof args, "%s, %s", x, x);
		usc__sig_emit(c, false, usc__sig_hname(c, na), sp, "compare",
			      args, ", direction=NE");
		usc__sig_emit_renamed(c, usc__sig_hname(c, mm));
		if (usc__sig_same_shape(&in->operands[0]->shape, &in->shape)) {
			snprintf(lo, sizeof lo, "%s", in->operands[0]->name);
		} else {
			usc__sig_hname(c, lo);
			usc__sig_emit(c, false, lo, st, "broadcast",
				      in->operands[0]->name, ", dimensions={}");
		}
		snprintf(args, sizeof args, "%s, %s, %s", na, lo, mm);
		usc__sig_emit(c, in->is_root, in->name, st, "select", args,
			      NULL);
		usc__sig_set_detail(c, "a NaN input gives the lower bound");
		return true;
	}
	return false;
}
