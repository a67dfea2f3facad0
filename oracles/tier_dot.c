/*
 * The dot products of the fast certified tier (tier.h): the matmul entry
 * of usc__domain_tier, computed with OpenBLAS's dgemm.  This is the one
 * file that includes cblas.h (docs/tier.md, "Dot").
 *
 * The exact value of C = A B over balls a +- ra, b +- rb is enclosed by
 * the dgemm midpoint Cm = fl(mid A mid B) and a radius from two or three
 * more dgemms, in the midpoint-radius style of S. M. Rump, "Fast interval
 * matrix multiplication", Numer. Algorithms 61 (2012), 1-34, but with a
 * priori bounds in round-to-nearest instead of switched rounding modes.
 * The argument, for one element c of C with K products:
 *
 *   1. Propagation.  |sum x y - sum a b| <= sum (|a| + ra) rb + ra |b|
 *      for every x in a +- ra, y in b +- rb.  With s = |a| + ra rounded
 *      to nearest and then moved up one ulp (s >= |a| + ra: the rounding
 *      error is at most half an ulp of s, and a subnormal sum is exact),
 *      this is at most Qx = [s | ra] [rb ; |b|], a sum of 2K
 *      non-negative products.
 *   2. Rounding of the midpoint.  Any evaluation order of a sum of K
 *      products, with or without fused multiply-adds, has
 *      |Cm - sum a b| <= gamma_K sum |a||b| + E, gamma_K = K u / (1 - K
 *      u), u = 2^-53 (N. J. Higham, "Accuracy and Stability of Numerical
 *      Algorithms", 2nd ed., 3.1 and (3.13)); E covers underflow: each
 *      of the K products (or fused operations) may lose 2^-1075 when its
 *      result is subnormal, later roundings grow that by at most 1 +
 *      gamma_K <= 2, and an addition whose result is subnormal is exact,
 *      so E <= 2 K 2^-1074.  Multiplication by alpha = 1 is exact and
 *      beta = 0 adds nothing (BLAS does not read C when beta is 0).
 *   3. The bounds are computed in floating point too: P = fl(|A| |B|)
 *      and Q = fl(Qx) are sums of non-negative terms, so the same bound
 *      gives Px <= (P + 2 K 2^-1074) / (1 - gamma_K) and Qx <= (Q + 4 K
 *      2^-1074) / (1 - gamma_2K).  For K <= 2^30, gamma_K / (1 -
 *      gamma_K) <= c1 = K u (1 + 2^-20) and 1 / (1 - gamma_2K) <= c2 = 1
 *      + 2^-20, both exact doubles, so
 *          |c - Cm| <= c1 P + c2 Q + E',  E' = 16 K 2^-1074 >= 7 K 2^-1074,
 *      and rad = rup(c1 P + c2 Q + E') (four round-to-nearest operations
 *      on exact non-negative data, within rup's conditions, tier.c) is an
 *      upper bound.  E' is left out when no operation can underflow:
 *      when every radius is 0 and q = lsb(A) + lsb(B) >= -1074, where
 *      lsb(X) is the least exponent of a set bit over the nonzero entries
 *      of mid X, every product and every partial sum is a multiple of
 *      2^-1074, and such a number is a double whenever it is below
 *      2^-1022.
 *   4. Exactness.  With every radius 0, q >= -1074 and P < 2^(q + 53),
 *      every product and every partial sum of either dgemm is a multiple
 *      of 2^q of magnitude at most sum |a||b| < 2^(q + 53), hence a
 *      double, so Cm is the exact sum and rad = 0 (P < 2^(q + 53) is
 *      itself exact: a computed sum of non-negative multiples of 2^q
 *      reaching 2^(q + 53) cannot round below it).  An exact zero takes
 *      the sign IEEE 754 gives the sum: -0 only when every product is
 *      -0.
 *   5. Exact accumulation.  With every radius 0, an element whose radius
 *      from step 3 exceeds 2^-(p+2) |Cm|, p the precision of the dot's
 *      result type capped at 24 (or whose Cm is 0 while the radius is
 *      not: complete cancellation), is too wide to decide a rounding to
 *      that type: cancellation has made gamma_K sum |a||b| large against
 *      the sum itself.  Such an element alone is recomputed exactly: each
 *      product of two doubles is exact in 106 bits (mpfr_mul at 106 bits:
 *      two 53-bit significands), and mpfr_sum adds the K products with a
 *      single correct rounding to 53 bits (MPFR's documentation of
 *      mpfr_sum: "the result is correctly rounded").  The nearest double
 *      d of that sum is then the midpoint and the radius is 0 when MPFR
 *      reports the sum exact and d equals it, else rup(u |d|), which
 *      bounds the one or two roundings (|x - fl(x)| <= u |fl(x)| in
 *      round-to-nearest; a second rounding into the subnormal range adds
 *      at most 2^-1075, inside rup's floor).  The cost is K MPFR
 *      operations per such element, so it stays proportional to the
 *      cancellation.
 * The dgemm results are trusted to be IEEE 754 double operations in
 * round-to-nearest with gradual underflow (no flush-to-zero), the state
 * the process runs in; OpenBLAS does not change it and uses no fast
 * matrix multiplication (Strassen).  An Inf or NaN in Cm, P or Q, or a
 * ball whose edge overflows, makes the element UNDECIDED.
 */
#include "internal.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <math.h>
#include <string.h>

#include "domain.h"
#include "oracle.h"
#include "tier.h"

typedef usc__tier_value value;

/* The unit roundoff of double, 2^-53. */
#define U 0x1p-53

/* The longest sum the constants c1, c2 above are valid for. */
#define K_MAX ((size_t)1 << 30)

/* An upper bound of a short non-negative computation (tier.c's rup). */
static double rup(double x)
{
	return x * (1.0 + 0x1p-49) + 0x1p-1060;
}

/* How many elements took the exact path (step 5), process-wide. */
static atomic_size_t exact_elements;

size_t usc__tier_dot_exact_elements(void)
{
	return atomic_load(&exact_elements);
}

/*
 * The exponent of the least set bit of a nonzero finite double, from its
 * encoding: the significand's lowest set bit, isolated as m & -m, is a
 * power of two that converts to a double exactly, and its exponent field
 * gives the bit's position.  A subnormal's scale is that of exponent
 * field 1.
 */
static int lsb_exp(double x)
{
	uint64_t b, low, lb;
	int e;
	double d;

	memcpy(&b, &x, sizeof b);
	e = (int)((b >> 52) & 0x7ff);
	b &= ((uint64_t)1 << 52) - 1;
	if (e != 0)
		b |= (uint64_t)1 << 52;
	else
		e = 1;
	low = b & (~b + 1);
	d = (double)low;
	memcpy(&lb, &d, sizeof lb);
	return e - 1075 + (int)((lb >> 52) & 0x7ff) - 1023;
}

/* C (m x n) = A (m x k) B (k x n), row-major; C's old contents unread. */
static void gemm(size_t m, size_t n, size_t k, const double *a,
		 const double *b, double *c)
{
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m,
		    (blasint)n, (blasint)k, 1.0, a, (blasint)k, b, (blasint)n,
		    0.0, c, (blasint)n);
}

/* The work arrays of one batch element. */
typedef struct work {
	double *am, *aa, *bm, *ba, *cm, *p; /* mid, |mid|, results */
	double *as, *bq, *q;                 /* the propagation product */
	/* Step 5, set up at the first element that needs it. */
	size_t nprod;                        /* products initialized */
	mpfr_t *prod;                        /* k products, 106 bits each */
	mpfr_ptr *ptr;                       /* mpfr_sum's argument */
	mpfr_t sum;                          /* 53 bits */
} work;

static void work_free(work *w)
{
	usc__free(w->am);
	usc__free(w->aa);
	usc__free(w->bm);
	usc__free(w->ba);
	usc__free(w->cm);
	usc__free(w->p);
	usc__free(w->as);
	usc__free(w->bq);
	usc__free(w->q);
	if (w->prod) {
		size_t l;

		for (l = 0; l < w->nprod; l++)
			mpfr_clear(w->prod[l]);
		mpfr_clear(w->sum);
	}
	usc__free(w->prod);
	usc__free(w->ptr);
}

/* The MPFR numbers of step 5 for sums of k products; false: no memory. */
static bool exact_new(work *w, size_t k)
{
	size_t l;

	if (w->prod)
		return true;
	w->prod = usc__calloc(k, sizeof *w->prod);
	w->ptr = usc__calloc(k, sizeof *w->ptr);
	if (!w->prod || !w->ptr) {
		usc__free(w->prod);
		usc__free(w->ptr);
		w->prod = NULL;
		w->ptr = NULL;
		return false;
	}
	for (l = 0; l < k; l++) {
		mpfr_init2(w->prod[l], 106);
		w->ptr[l] = w->prod[l];
	}
	w->nprod = k;
	mpfr_init2(w->sum, 53);
	return true;
}

/*
 * Step 5: the exact sum of the k products of row i of A (mid, row-major
 * m x k in am) and column j of B (k x n in bm), rounded once to 53 bits,
 * as a ball in r.  The 106-bit products are exact (two 53-bit
 * significands; MPFR's exponent range holds every product of doubles).
 */
static void exact_element(work *w, size_t n, size_t k, size_t i, size_t j,
			  value *r)
{
	size_t l;
	int t;
	double d;

	for (l = 0; l < k; l++) {
		(void)mpfr_set_d(w->prod[l], w->am[i * k + l], MPFR_RNDN);
		(void)mpfr_mul_d(w->prod[l], w->prod[l], w->bm[l * n + j],
				 MPFR_RNDN);
	}
	t = mpfr_sum(w->sum, w->ptr, (unsigned long)k, MPFR_RNDN);
	d = mpfr_get_d(w->sum, MPFR_RNDN);
	memset(r, 0, sizeof *r);
	r->kind = USC__ORC_FINITE;
	if (!isfinite(d)) {
		r->kind = USC__ORC_UNDECIDED; /* beyond double's range */
		return;
	}
	if (d == 0 && t == 0 && mpfr_zero_p(w->sum)) {
		/*
		 * An exact zero from cancellation (some product is nonzero,
		 * or step 4 would have taken it): IEEE 754 6.3 gives +0 to
		 * x + (-x) in round-to-nearest, and the oracle's exact value
		 * is 0 with that sign rule too.
		 */
		r->mid = 0.0;
		return;
	}
	r->mid = d;
	if (t == 0 && mpfr_cmp_d(w->sum, d) == 0)
		r->rad = 0; /* the double is the exact sum */
	else
		r->rad = rup(U * fabs(d));
	atomic_fetch_add(&exact_elements, 1);
}

static bool work_new(work *w, size_t m, size_t n, size_t k)
{
	memset(w, 0, sizeof *w);
	/* Every element is written before it is read: no zeroing. */
	w->am = usc__malloc(m * k * sizeof(double));
	w->aa = usc__malloc(m * k * sizeof(double));
	w->bm = usc__malloc(k * n * sizeof(double));
	w->ba = usc__malloc(k * n * sizeof(double));
	w->cm = usc__malloc(m * n * sizeof(double));
	w->p = usc__malloc(m * n * sizeof(double));
	return w->am && w->aa && w->bm && w->ba && w->cm && w->p;
}

/* The propagation product's arrays, set up when an operand has a radius. */
static bool work_rad(work *w, size_t m, size_t n, size_t k)
{
	if (w->q)
		return true;
	w->as = usc__calloc(m * 2 * k, sizeof(double));
	w->bq = usc__calloc(2 * k * n, sizeof(double));
	w->q = usc__calloc(m * n, sizeof(double));
	return w->as && w->bq && w->q;
}

/* The sign of a zero point: 1 for -0, 0 for +0, -1 when unknown. */
static int zsign(const value *v)
{
	if (v->mid != 0)
		return signbit(v->mid) ? 1 : 0;
	if (v->flags & USC__ORC_ZSIGN_UNKNOWN)
		return -1;
	return (v->flags & USC__ORC_NEG_ZERO) ? 1 : 0;
}

/*
 * The zero flags of an exact sum of K zero products of row i of A and
 * column j of B (IEEE 754, 6.3): -0 only when every product is -0, +0
 * as soon as one is +0, and unknown otherwise.
 */
static unsigned char zero_sign(const value *A, const value *B, size_t i,
			       size_t j, size_t n, size_t k)
{
	bool unknown = false;
	size_t l;

	for (l = 0; l < k; l++) {
		int sa = zsign(&A[i * k + l]), sb = zsign(&B[l * n + j]);

		if (sa < 0 || sb < 0)
			unknown = true;
		else if (!(sa ^ sb))
			return 0;
	}
	return unknown ? USC__ORC_ZSIGN_UNKNOWN : USC__ORC_NEG_ZERO;
}

/*
 * One product C = A B of m x k and k x n tier values (the argument at the
 * top of the file).  USC_EUNSUPPORTED, with err untouched and C in any
 * state, when an operand is not FINITE: the copies into the dgemm
 * operands check that on the way, so that the operands are read once.
 */
static usc_status matmul_one(work *w, size_t m, size_t n, size_t k,
			     double thr, const value *A, const value *B,
			     value *C, usc_error *err)
{
	const double c1 = (double)k * (1.0 + 0x1p-20) * U;
	const double c2 = 1.0 + 0x1p-20;
	int qa = INT_MAX, qb = INT_MAX;
	bool anyrad = false, under;
	double E, lim;
	size_t i, j, l;

	for (i = 0; i < m * k; i++) {
		if (A[i].kind != USC__ORC_FINITE)
			return USC_EUNSUPPORTED;
		w->am[i] = A[i].mid;
		w->aa[i] = fabs(A[i].mid);
		if (A[i].rad != 0)
			anyrad = true;
		if (A[i].mid != 0 && lsb_exp(A[i].mid) < qa)
			qa = lsb_exp(A[i].mid);
	}
	for (i = 0; i < k * n; i++) {
		if (B[i].kind != USC__ORC_FINITE)
			return USC_EUNSUPPORTED;
		w->bm[i] = B[i].mid;
		w->ba[i] = fabs(B[i].mid);
		if (B[i].rad != 0)
			anyrad = true;
		if (B[i].mid != 0 && lsb_exp(B[i].mid) < qb)
			qb = lsb_exp(B[i].mid);
	}
	gemm(m, n, k, w->am, w->bm, w->cm);
	gemm(m, n, k, w->aa, w->ba, w->p);
	if (anyrad) {
		if (!work_rad(w, m, n, k))
			return usc__fail(err, USC_ENOMEM, "out of memory");
		/* [s | ra] (m x 2k) and [rb ; |mid B|] (2k x n). */
		for (i = 0; i < m; i++)
			for (l = 0; l < k; l++) {
				const value *x = &A[i * k + l];
				double s = fabs(x->mid) + x->rad;

				if (x->rad != 0)
					s = nextafter(s, INFINITY);
				w->as[i * 2 * k + l] = s;
				w->as[i * 2 * k + k + l] = x->rad;
			}
		for (l = 0; l < k; l++)
			for (j = 0; j < n; j++) {
				w->bq[l * n + j] = B[l * n + j].rad;
				w->bq[(k + l) * n + j] = fabs(B[l * n + j].mid);
			}
		gemm(m, n, 2 * k, w->as, w->bq, w->q);
	}
	/* All products zero (qa or qb unset) cannot underflow either. */
	if (qa == INT_MAX || qb == INT_MAX)
		under = false;
	else
		under = qa + qb < -1074;
	E = (anyrad || under) ? (double)k * 0x1p-1070 : 0.0;
	if (anyrad || under)
		lim = 0; /* never exact */
	else if (qa == INT_MAX || qb == INT_MAX)
		lim = INFINITY;
	else
		lim = ldexp(1.0, qa + qb + 53);
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			value *r = &C[i * n + j];
			double cm = w->cm[i * n + j], p = w->p[i * n + j];
			double q = anyrad ? w->q[i * n + j] : 0.0, rad;

			memset(r, 0, sizeof *r);
			r->kind = USC__ORC_FINITE;
			if (!isfinite(cm) || !isfinite(p) || !isfinite(q)) {
				r->kind = USC__ORC_UNDECIDED;
				continue;
			}
			if (p < lim) {
				/* Exact (step 4). */
				r->mid = cm;
				if (cm == 0) {
					r->mid = 0.0;
					r->flags = p == 0 ? zero_sign(A, B, i,
								      j, n, k)
							  : 0;
				}
				continue;
			}
			rad = rup(c1 * p + c2 * q + E);
			if (!anyrad && (rad > thr * fabs(cm) || !isfinite(rad))) {
				/* Step 5: cancellation defeats the bound. */
				if (!exact_new(w, k))
					return usc__fail(err, USC_ENOMEM,
							 "out of memory");
				exact_element(w, n, k, i, j, r);
				continue;
			}
			if (!isfinite(rad) || !isfinite(fabs(cm) + rad)) {
				r->kind = USC__ORC_UNDECIDED;
				continue;
			}
			r->mid = cm;
			r->rad = rad;
		}
	return USC_OK;
}

usc_status usc__tier_matmul(void *state, const usc__dom_matmul *mm,
			    usc_error *err)
{
	const value *A = mm->a, *B = mm->b;
	value *C = mm->c;
	size_t b;
	double thr;
	usc_status st = USC_OK;
	work w;

	(void)state;
	/*
	 * Float converts are identities in the tier, so float operands enter
	 * as they are; integer operands, empty sums and shapes beyond the
	 * constants' range or BLAS's int take the per-element path.
	 */
	if (!usc_dtype_is_float(mm->a_type) || !usc_dtype_is_float(mm->b_type) ||
	    !usc_dtype_is_float(mm->result) || mm->k == 0 || mm->m == 0 ||
	    mm->n == 0 || mm->k > K_MAX || mm->m > INT_MAX / 2 ||
	    mm->n > INT_MAX / 2)
		return usc__fail(err, USC_EUNSUPPORTED, "tier matmul: shape");
	if (!work_new(&w, mm->m, mm->n, mm->k)) {
		work_free(&w);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	/* Step 5's threshold 2^-(p+2), p the result's precision up to 24. */
	{
		usc_float_info fi;
		int p = 24;

		if (usc_float_info_of(mm->result, &fi) == USC_OK &&
		    fi.precision < p)
			p = fi.precision;
		thr = ldexp(1.0, -(p + 2));
	}
	for (b = 0; b < mm->batch && st == USC_OK; b++)
		st = matmul_one(&w, mm->m, mm->n, mm->k, thr,
				A + b * mm->m * mm->k, B + b * mm->k * mm->n,
				C + b * mm->m * mm->n, err);
	work_free(&w);
	if (st == USC_EUNSUPPORTED)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "tier matmul: a non-finite operand");
	return st;
}
