/*
 * The tier's compares, converts and bitcasts, and its two decisions
 * against a declared type: the rounding of a ball (to_output's
 * certificate) and the ULP error of a device code.
 */
#include "internal.h"

#include "tier_internal.h"

/* --------------------------------------------------------- compare */


/* The oracle's cmp_possible on outward double bounds. */
static unsigned cmp_possible(const value *x, const value *y, bool total)
{
	unsigned m = 0;
	int kx = x->kind, ky = y->kind;
	double xl, xh, yl, yh;

	if (kx == USC__ORC_NAN || ky == USC__ORC_NAN)
		return USC__POSS_UN;
	if (kx != USC__ORC_FINITE || ky != USC__ORC_FINITE) {
		int rx = kx == USC__ORC_POS_INF ? 1 : kx == USC__ORC_NEG_INF ? -1 : 0;
		int ry = ky == USC__ORC_POS_INF ? 1 : ky == USC__ORC_NEG_INF ? -1 : 0;

		return rx < ry   ? USC__POSS_LT
		       : rx > ry ? USC__POSS_GT
				 : USC__POSS_EQ;
	}
	bounds(x, &xl, &xh);
	bounds(y, &yl, &yh);
	if (xl < yh)
		m |= USC__POSS_LT;
	if (xh > yl)
		m |= USC__POSS_GT;
	if (xl <= yh && yl <= xh)
		m |= USC__POSS_EQ;
	if (total && (m & USC__POSS_EQ) && has_zero(x) && has_zero(y)) {
		int sx = is_point(x) ? sign_of(x) : 0;
		int sy = is_point(y) ? sign_of(y) : 0;

		if (sx == 0 || sy == 0 || sx != sy)
			m |= USC__POSS_LT | USC__POSS_GT;
		if (sx != 0 && sy != 0 && is_point(x) && is_point(y) &&
		    sx != sy)
			m = sx < sy ? USC__POSS_LT : USC__POSS_GT;
	}
	return m;
}

void usc__tier_compare_float(const usc__dom_op *op, value *r, const value *x,
			  const value *y)
{
	bool total = op->cmp_type == USC__CMP_TOTALORDER;
	bool any_true = false, any_false = false;
	unsigned m, b;

	prep(r);
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED ||
	    (total && (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN))) {
		set_undecided(r);
		return;
	}
	m = cmp_possible(x, y, total);
	for (b = 1; b <= USC__POSS_UN; b <<= 1) {
		if (!(m & b))
			continue;
		if (usc__cmp_holds(op->cmp_dir, b))
			any_true = true;
		else
			any_false = true;
	}
	if (any_true && any_false)
		set_undecided(r);
	else
		r->bits = any_true ? 1 : 0;
}


usc_status usc__tier_load_bits(usc_dtype t, uint64_t bits, value *r,
			    usc_error *err)
{
	const usc__rn_format *rf;
	double d;

	prep(r);
	if (!usc_dtype_is_float(t)) {
		r->bits = bits & usc__dom_mask(usc__dom_width(t));
		return USC_OK;
	}
	/*
	 * f32, bf16 (the upper half of an f32) and f64 decode in line: the
	 * widening conversion to double is exact (C11 6.3.1.5); so do the
	 * finite codes of the other narrow formats (src/dtype/rn_fast.h).
	 */
	if (t == USC_F32 || t == USC_BF16) {
		uint32_t b = t == USC_F32 ? (uint32_t)bits
					  : (uint32_t)(bits & 0xffff) << 16;
		float f;

		memcpy(&f, &b, sizeof f);
		d = f;
	} else if (t == USC_F64)
		memcpy(&d, &bits, sizeof d);
	else if (!((rf = usc__rn_format_of(t)) && usc__rn_decode(rf, bits, &d)) &&
		 usc_decode_double(t, bits, &d) != USC_OK)
		return usc__fail(err, USC_EINVAL, "tier: cannot decode %s",
				 usc_dtype_name(t));
	set_point(r, d);
	return USC_OK;
}

/* The exact value of an integer encoding (a ball past 2^53). */
static void int_to_value(usc_dtype t, uint64_t bits, value *r)
{
	double d = 0;

	if (usc_decode_double(t, bits, &d) == USC_OK) {
		set_point(r, d);
		return;
	}
	/* The nearest double of a 64-bit integer: half an ulp off. */
	set_ball(r, d, rup(U * fabs(d)));
}

usc_status usc__tier_convert(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);

	prep(r);
	if (x->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return USC_OK;
	}
	if (!usc_dtype_is_float(from)) {
		if (!usc_dtype_is_float(to)) {
			const void *args[1] = {&x->bits};

			return usc__domain_reference.apply(s->ref, op, 1,
							   &r->bits, args, 0,
							   err);
		}
		int_to_value(from, x->bits, r);
		return USC_OK;
	}
	if (usc_dtype_is_float(to)) {
		*r = *x; /* exact: no quantization */
		return USC_OK;
	}
	if (!tf)
		return usc__fail(err, USC_EINVAL, "convert to an invalid type");
	if (tf->kind == USC_KIND_PRED) {
		if (x->kind != USC__ORC_FINITE || !has_zero(x))
			r->bits = 1;
		else if (is_zero_point(x))
			r->bits = 0;
		else
			set_undecided(r);
		return USC_OK;
	}
	if (tf->kind != USC_KIND_SINT && tf->kind != USC_KIND_UINT)
		return usc__fail(err, USC_EUNSUPPORTED, "convert %s to %s",
				 usc_dtype_name(from), usc_dtype_name(to));
	/* Truncating and saturating: non-decreasing, as in the oracle. */
	{
		double lo, hi;
		uint64_t blo = 0, bhi = 0;

		if (x->kind != USC__ORC_FINITE) {
			(void)usc_encode_double(to, point_d(x), NULL, &r->bits,
						NULL);
			return USC_OK;
		}
		bounds(x, &lo, &hi);
		(void)usc_encode_double(to, lo, NULL, &blo, NULL);
		(void)usc_encode_double(to, hi, NULL, &bhi, NULL);
		if (blo != bhi)
			set_undecided(r);
		else
			r->bits = blo;
	}
	return USC_OK;
}

usc_status usc__tier_decide_rounding(const usc__tier_value *v, usc_dtype t,
				     bool *decided, uint64_t *bits,
				     usc_error *err)
{
	*bits = 0;
	if (!usc_dtype_is_float(t)) {
		*decided = false;
		return usc__fail(err, USC_EINVAL,
				 "tier: cannot round into %s, not a float type",
				 usc_dtype_name(t));
	}
	*decided = usc__tier_round_rn(v, t, usc__rn_format_of(t), bits);
	return USC_OK;
}

bool usc__tier_round_rn(const usc__tier_value *v, usc_dtype t,
			const usc__rn_format *rf, uint64_t *bits)
{
	uint64_t b0 = 0, b1 = 0;
	bool ok = true;

	switch (v->kind) {
	case USC__ORC_UNDECIDED:
		return false;
	case USC__ORC_NAN:
	case USC__ORC_POS_INF:
	case USC__ORC_NEG_INF:
		(void)usc_encode_double(t, point_d(v), NULL, &b0, NULL);
		b1 = b0;
		break;
	default:
		if (is_zero_point(v)) {
			encode_rn(t, rf, point_d(v), &b0);
			encode_rn(t, rf, -point_d(v), &b1);
			if (!(v->flags & USC__ORC_ZSIGN_UNKNOWN))
				b1 = b0;
			break;
		}
		{
			double lo, hi;

			bounds(v, &lo, &hi);
			/*
			 * A value known positive (negative) rounds no lower
			 * than the smallest positive reals, which round to
			 * +0 (monotonicity of rounding, IEEE 754-2019 4.3).
			 */
			if ((v->flags & TIER_GT0) && lo <= 0)
				lo = 0.0;
			if ((v->flags & TIER_LT0) && hi >= 0)
				hi = -0.0;
			encode_rn(t, rf, lo, &b0);
			encode_rn(t, rf, hi, &b1);
			if (b0 == b1 && lo <= 0 && hi >= 0 &&
			    !(v->flags & (TIER_GT0 | TIER_LT0))) {
				uint64_t zp = 0, zn = 0;

				encode_rn(t, rf, 0.0, &zp);
				encode_rn(t, rf, -0.0, &zn);
				ok = zp == b0 && zn == b0;
			}
		}
		break;
	}
	if (ok && b0 == b1) {
		*bits = b0;
		return true;
	}
	return false;
}

usc_status usc__tier_bitcast(tier_state *s, const usc__dom_op *op, value *r,
			  const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	uint64_t bits;
	usc_status st;

	(void)s;
	prep(r);
	if (usc__dom_width(from) != usc__dom_width(to))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "bitcast-convert from %s to %s changes the "
				 "width", usc_dtype_name(from),
				 usc_dtype_name(to));
	if (x->kind == USC__ORC_UNDECIDED) {
		set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		bool decided;

		st = usc__tier_decide_rounding(x, from, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			set_undecided(r);
			return USC_OK;
		}
	} else
		bits = x->bits;
	bits &= usc__dom_mask(usc__dom_width(from));
	return usc__tier_load_bits(to, bits, r, err);
}

/* ----------------------------------------------------------- ULP error */

/*
 * a / p for a positive power of two p: a times 1/p where 1/p is a normal
 * double (p's exponent field 1 to 2045, fraction 0), which is the same
 * correctly rounded result of the same real a 2^-k without a division's
 * latency; a division otherwise (a subnormal p, f64's least ULP).
 */
static inline double div_pow2(double a, double p)
{
	uint64_t b, f;
	double inv;

	memcpy(&b, &p, sizeof b);
	f = b >> 52;
	if (f < 1 || f > 2045 || (b & (((uint64_t)1 << 52) - 1)))
		return a / p;
	b = (2046 - f) << 52;
	memcpy(&inv, &b, sizeof inv);
	return a * inv;
}

/* a / p rounded down (up) for a power of two p: one step outward. */
static double div_down(double a, double p)
{
	double q = div_pow2(a, p);

	return q * p == a ? q : next_down(q);
}

static double div_up(double a, double p)
{
	double q = div_pow2(a, p);

	return q * p == a ? q : next_up(q);
}

usc_status usc__tier_decide_ulp_error(const usc__tier_value *v, usc_dtype t,
				      uint64_t y,
				      const usc__oracle_resolution *res,
				      usc__oracle_ulp_error *out,
				      usc_error *err)
{
	return usc__tier_decide_ulp_error_rn(v, t, usc__rn_format_of(t), y, res,
					     out, err);
}

/*
 * The ULP of float type t at a finite x: in line for the formats
 * rn_fast.h covers (the same value, tests/dtype/test_rn_fast.c), else
 * the library's.
 */
static inline usc_status ulp_at(usc_dtype t, const usc__rn_format *rf,
				double x, double *out)
{
	if (rf) {
		*out = usc__rn_ulp(rf, x);
		return USC_OK;
	}
	return usc_ulp_double(t, x, out);
}

usc_status usc__tier_decide_ulp_error_rn(const usc__tier_value *v,
					 usc_dtype t, const usc__rn_format *rf,
					 uint64_t y,
					 const usc__oracle_resolution *res,
					 usc__oracle_ulp_error *out,
					 usc_error *err)
{
	double yv = 0, lo, hi, nlo, nhi, m, M, umin, umax, d[4], um;
	double mid = NAN;

	if (rf && v->kind == USC__ORC_FINITE && usc__rn_decode(rf, y, &yv)) {
		/*
		 * A finite value against a finite code: nothing special
		 * (usc__ulp_error_special would return false after setting
		 * these), and the code decodes in line.
		 */
		out->kind = USC__ORC_UNDECIDED;
		out->lo = out->hi = out->mid = NAN;
		out->decided = false;
	} else {
		if (!usc_dtype_is_float(t)) {
			out->kind = USC__ORC_UNDECIDED;
			out->lo = out->hi = out->mid = NAN;
			out->decided = false;
			return usc__fail(err, USC_EINVAL,
					 "tier: ULP error needs a float type, "
					 "not %s",
					 usc_dtype_name(t));
		}
		if (usc__ulp_error_special((usc__oracle_kind)v->kind, t, y,
					   out))
			return USC_OK;
		(void)usc_decode_double(t, y, &yv);
	}
	bounds(v, &lo, &hi);
	/* Numerator y - y*: [y - hi, y - lo], rounded outward. */
	{
		/* TwoSum's exact error says which way each one rounded. */
		double e1 = 0, e2 = 0;

		nlo = two_sum(yv, -hi, &e1);
		nhi = two_sum(yv, -lo, &e2);
		if (!(e1 >= 0))
			nlo = next_down(nlo);
		if (!(e2 <= 0))
			nhi = next_up(nhi);
	}
	/* |y*| ranges over [m, M]; ulp is non-decreasing in |y*|. */
	m = lo <= 0 && hi >= 0 ? 0.0 : lo > 0 ? lo : -hi;
	M = fmax(fabs(lo), fabs(hi));
	if (ulp_at(t, rf, m, &umin) != USC_OK ||
	    ulp_at(t, rf, M, &umax) != USC_OK)
		return usc__fail(err, USC_EINTERNAL, "tier: no ULP for %s",
				 usc_dtype_name(t));
	/* ULPs are powers of two: the quotients are exact but for range. */
	d[0] = div_down(nlo, umin);
	d[1] = div_down(nlo, umax);
	d[2] = div_up(nhi, umin);
	d[3] = div_up(nhi, umax);
	if (ulp_at(t, rf, v->mid, &um) == USC_OK)
		mid = div_pow2(yv - v->mid, um);
	usc__ulp_error_finish(d, mid, res, out);
	return USC_OK;
}
