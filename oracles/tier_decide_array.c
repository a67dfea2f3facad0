/*
 * The tier's ULP-error decision over an array of values against an array
 * of device codes (usc__tier_decide_ulp_error_array, tier.h), for the
 * check, which decides every element of every output.
 *
 * The common element is a finite ball against a finite code of a format
 * rn_fast.h covers.  This file decides it in a loop with nothing out of
 * line: the code read at its width, decoded and the ULPs taken on the
 * double's bits, the four quotient bounds of usc__tier_decide_ulp_error_rn
 * as products by exact inverse powers of two, the resolution tested in
 * place.  Each step is the same floating-point operation on the same
 * operands as in usc__tier_decide_ulp_error_rn (oracles/tier_convert.c),
 * so the results are the same bits; every other element (an infinity or
 * NaN on either side, an undecided value, a type rn_fast.h does not
 * cover, a resolution by significant digits) goes through that function.
 * tests/tier/test_tier_decide_array.c holds the two to the same bits.
 */
#include "internal.h"

#include "tier_internal.h"

/*
 * The inverse of the ULP at a finite x of a covered format:
 * 2^(man_bits - e), e the binade of x clamped to [emin, emax], as
 * usc__rn_ulp finds it (a zero or subnormal double's field lies below
 * every emin).  For every covered format 2^(man_bits - e) lies between
 * 2^-104 and 2^149, a normal double, so multiplying by it is dividing by
 * the ULP, exactly as the division would round: the same as
 * tier_convert.c's div_pow2, which takes this product for exactly these
 * divisors.
 */
USC_FP_INLINE int binade(const usc__rn_format *f, double x)
{
	uint64_t b;
	int e;

	memcpy(&b, &x, sizeof b);
	e = (int)((b >> 52) & 0x7ff) - 1023;
	return e < f->emin ? f->emin : e > f->emax ? f->emax : e;
}

/* 2^k for an exponent k of a normal double. */
USC_FP_INLINE double pow2(int k)
{
	uint64_t b = (uint64_t)(k + 1023) << 52;
	double s;

	memcpy(&s, &b, sizeof s);
	return s;
}

USC_FP_INLINE double inv_ulp(const usc__rn_format *f, double x)
{
	return pow2(f->man_bits - binade(f, x));
}

/*
 * a / p rounded down (up), p = 1 / inv a power of two: the quotient
 * a * inv, stepped outward unless it times p gives a back (the test of
 * tier_convert.c's div_down and div_up, on the same doubles).
 */
USC_FP_INLINE double quot_down(double a, double inv, double p)
{
	double q = a * inv;

	return q * p == a ? q : next_down(q);
}

USC_FP_INLINE double quot_up(double a, double inv, double p)
{
	double q = a * inv;

	return q * p == a ? q : next_up(q);
}

/*
 * The device code at index i of an encoding array of width w, as
 * usc__dom_get_enc reads it; w is a constant in each instantiation of the
 * loop below, so the read is one load.
 */
static inline uint64_t code_at(const unsigned char *y, size_t w, size_t i)
{
	switch (w) {
	case 1:
		return y[i];
	case 2:
		return (uint64_t)y[2 * i] | (uint64_t)y[2 * i + 1] << 8;
	case 4:
		return (uint64_t)y[4 * i] | (uint64_t)y[4 * i + 1] << 8 |
		       (uint64_t)y[4 * i + 2] << 16 |
		       (uint64_t)y[4 * i + 3] << 24;
	default:
		return usc__dom_get_enc(y, w, i);
	}
}

/*
 * One finite ball v against a finite code value yv (decoded) at the
 * absolute resolution abs (> 0): whether the error is decided, its value
 * at the midpoint into *mid, the ball's outward bounds into *blo, *bhi.
 * The steps of usc__tier_decide_ulp_error_rn and usc__ulp_error_finish
 * in order.
 */
USC_FP_INLINE bool decide_one(const usc__rn_format *f, const value *v,
			      double yv, double abs, double *mid,
			      double *blo, double *bhi)
{
	double lo, hi, nlo, nhi, m, M, imin, imax, umin, umax, d0, d1, d2, d3;
	double e1 = 0, e2 = 0, elo, ehi;
	int em, eM;

	bounds(v, &lo, &hi);
	*blo = lo;
	*bhi = hi;
	/* Numerator y - y*: [y - hi, y - lo], rounded outward by TwoSum. */
	nlo = two_sum(yv, -hi, &e1);
	nhi = two_sum(yv, -lo, &e2);
	if (!(e1 >= 0))
		nlo = next_down(nlo);
	if (!(e2 <= 0))
		nhi = next_up(nhi);
	/*
	 * |y*| over [m, M]: m is lo above 0, -hi below it, else 0 (lo <=
	 * hi: the largest of the three; only its binade is read, so the
	 * sign of a zero does not matter); fmax of two magnitudes, neither
	 * NaN (the ball is finite), is the larger one.
	 */
	m = lo > 0 ? lo : 0.0;
	m = -hi > m ? -hi : m;
	M = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
	/*
	 * The ULPs at m and M (usc__rn_ulp's, 2^(e - man_bits) for the
	 * clamped binade e) and their inverses.
	 */
	em = binade(f, m);
	eM = binade(f, M);
	imin = pow2(f->man_bits - em);
	umin = pow2(em - f->man_bits);
	d0 = quot_down(nlo, imin, umin);
	d2 = quot_up(nhi, imin, umin);
	if (em == eM) {
		/*
		 * A ball within one binade (the common case) has one ULP:
		 * the other two quotients are these on the same operands,
		 * and the midpoint (m <= |mid| <= M, and the clamped
		 * binade is monotone in the magnitude) has it too.
		 */
		d1 = d0;
		d3 = d2;
		*mid = (yv - v->mid) * imin;
	} else {
		imax = pow2(f->man_bits - eM);
		umax = pow2(eM - f->man_bits);
		d1 = quot_down(nlo, imax, umax);
		d3 = quot_up(nhi, imax, umax);
		*mid = (yv - v->mid) * inv_ulp(f, v->mid);
	}
	if (d0 != d0 || d1 != d1 || d2 != d2 || d3 != d3)
		return false;
	/*
	 * usc__ulp_error_finish's fmin and fmax: without NaN, the smaller
	 * and the larger; which zero they pick where both are zeros
	 * changes no difference hi - lo.
	 */
	elo = d0 < d1 ? d0 : d1;
	ehi = d2 > d3 ? d2 : d3;
	return ehi - elo <= abs;
}

/* The bounds of a FINITE value, NaN for every other kind. */
static inline void enclosure_of(const value *v, double *lo, double *hi)
{
	if (v->kind == USC__ORC_FINITE)
		bounds(v, lo, hi);
	else
		*lo = *hi = NAN;
}

/*
 * The loop for device codes of width w (a constant where the caller
 * names one): finite balls against finite codes in line, the rest
 * through the general function.
 */
static inline usc_status decide_loop(const value *v, size_t n, usc_dtype t,
				     const usc__rn_format *rf,
				     const unsigned char *y, size_t w,
				     const usc__oracle_resolution *res,
				     double abs, double *mid,
				     uint8_t *decided, double *lo, double *hi,
				     size_t *count, usc_error *err)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t c = code_at(y, w, i);
		double yv;
		bool ok;

		if (v[i].kind == USC__ORC_FINITE && usc__rn_decode(rf, c, &yv)) {
			ok = decide_one(rf, &v[i], yv, abs, &mid[i], &lo[i],
					&hi[i]);
		} else {
			usc__oracle_ulp_error ue;
			usc_status st = usc__tier_decide_ulp_error_rn(
				&v[i], t, rf, c, res, &ue, err);

			if (st != USC_OK)
				return st;
			ok = ue.decided;
			mid[i] = ue.mid;
			enclosure_of(&v[i], &lo[i], &hi[i]);
		}
		decided[i] = ok;
		k += ok;
	}
	*count = k;
	return USC_OK;
}

usc_status usc__tier_decide_ulp_error_array(const usc__tier_value *v,
					    size_t n, usc_dtype t,
					    const usc__rn_format *rf,
					    const void *y, size_t w,
					    const usc__oracle_resolution *res,
					    double *mid, uint8_t *decided,
					    double *lo, double *hi,
					    size_t *count, usc_error *err)
{
	static const usc__oracle_resolution eighth = {0.125, 0};
	const unsigned char *yb = y;
	const usc__oracle_resolution *r = res ? res : &eighth;

	*count = 0;
	if (!rf || r->sig_digits > 0 || !(r->abs_ulps > 0)) {
		/*
		 * The general function per element: a type rn_fast.h does
		 * not cover, or a resolution the loop does not test.
		 */
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			usc__oracle_ulp_error ue;
			usc_status st = usc__tier_decide_ulp_error_rn(
				&v[i], t, rf, usc__dom_get_enc(yb, w, i), res,
				&ue, err);

			if (st != USC_OK)
				return st;
			decided[i] = ue.decided;
			mid[i] = ue.mid;
			enclosure_of(&v[i], &lo[i], &hi[i]);
			k += ue.decided;
		}
		*count = k;
		return USC_OK;
	}
	switch (w) {
	case 1:
		return decide_loop(v, n, t, rf, yb, 1, r, r->abs_ulps, mid,
				   decided, lo, hi, count, err);
	case 2:
		return decide_loop(v, n, t, rf, yb, 2, r, r->abs_ulps, mid,
				   decided, lo, hi, count, err);
	case 4:
		return decide_loop(v, n, t, rf, yb, 4, r, r->abs_ulps, mid,
				   decided, lo, hi, count, err);
	default:
		return decide_loop(v, n, t, rf, yb, w, r, r->abs_ulps, mid,
				   decided, lo, hi, count, err);
	}
}
