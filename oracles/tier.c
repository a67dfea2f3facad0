/*
 * The fast certified tier: the oracle's exact-real semantics (oracle.c)
 * computed in double, every float element a ball [mid - rad, mid + rad]
 * that contains the exact value.  docs/tier.md states every bound.
 *
 * Soundness rests on four facts.
 *   1. IEEE 754 round-to-nearest: each +, -, *, / and sqrt of doubles
 *      has relative error at most u = 2^-53 when the result is normal and
 *      absolute error at most 2^-1075 when it is subnormal (Higham,
 *      "Accuracy and Stability of Numerical Algorithms", 2nd ed., 2.2).
 *   2. Error-free transformations: TwoSum (Knuth, TAOCP vol. 2, 4.2.2,
 *      Theorem B) gives the exact error of a sum; Dekker's TwoProduct
 *      (Dekker 1971, "A floating-point technique for extending the
 *      available precision") gives the exact error of a product when no
 *      intermediate overflows or underflows, which the guards below
 *      check.  A point result is therefore exact whenever the double
 *      result is, and otherwise carries its exact rounding error.
 *   3. The radius itself is computed in round-to-nearest and then rounded
 *      upward by rup(), whose argument is written beside it.
 *   4. libm functions are trusted to the ulp bounds of LIBM_ULPS below,
 *      each a safety factor above glibc's published maxima for x86-64
 *      (sysdeps/x86_64/fpu/libm-test-ulps).  This is an assumption, not a
 *      proof: a build against another libm must check the table.
 * Whatever these cannot bound cheaply is UNDECIDED, and the check then
 * escalates the element to the MPFR oracle.
 */
#include "internal.h"

#include "tier_internal.h"

bool usc__tier_is_undecided(const void *v)
{
	return ((const value *)v)->kind == USC__ORC_UNDECIDED;
}

size_t usc__tier_count_undecided(const void *values, size_t n)
{
	const value *v = values;
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i].kind == USC__ORC_UNDECIDED;
	return c;
}

void usc__tier_value_set(usc__tier_value *v, double mid, double rad)
{
	prep(v);
	v->mid = mid;
	v->rad = rad;
	if (mid == 0 && rad == 0 && signbit(mid))
		v->flags = USC__ORC_NEG_ZERO;
}

void usc__tier_bounds(const usc__tier_value *v, double *lo, double *hi)
{
	bounds(v, lo, hi);
}

/* ------------------------------------------------ state and values */

static usc_status tier_create(void **state, usc_error *err)
{
	tier_state *s = usc__calloc(1, sizeof *s);
	usc_status st;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__domain_reference.create(&s->ref, err);
	if (st != USC_OK) {
		usc__free(s);
		return st;
	}
	*state = s;
	return USC_OK;
}

static void tier_destroy(void *state)
{
	tier_state *s = state;

	if (!s)
		return;
	usc__domain_reference.destroy(s->ref);
	for (size_t k = 0; k < s->sum_cap; k++)
		mpfr_clear(s->sum_x[k]);
	usc__free(s->sum_x);
	usc__free(s->sum_p);
	usc__free(s);
}

static usc_status tier_load(void *state, usc_dtype t, uint64_t bits,
			    void *out, usc_error *err)
{
	(void)state;
	return usc__tier_load_bits(t, bits, out, err);
}

/* A constant is the encoding its text denotes in its type (the oracle's). */
static usc_status tier_constant(void *state, usc_dtype t,
				const usc_hlo_scalar *sc, void *out,
				usc_error *err)
{
	uint64_t bits = 0;
	usc_status st;

	if (t == USC_PRED) {
		if (strcmp(sc->text, "true") == 0 || strcmp(sc->text, "1") == 0)
			bits = 1;
		else if (strcmp(sc->text, "false") != 0 &&
			 strcmp(sc->text, "0") != 0)
			return usc__fail(err, USC_EPARSE,
					 "bad pred literal '%s'", sc->text);
	} else {
		st = usc_encode_str(t, sc->text, NULL, &bits, NULL, err);
		if (st != USC_OK)
			return st;
	}
	return tier_load(state, t, bits, out, err);
}

/*
 * The encoding of the midpoint rounded to nearest (the certified code
 * when the ball decides it), and the oracle's certificate: kind, the ball
 * rounded outward, and whether it certifies one rounding.  prec is 53.
 */
/* The end points of a float value's enclosure (tier_to_output's). */
static void enclosure_bounds(const value *x, usc__oracle_enclosure *e)
{
	if (x->kind == USC__ORC_FINITE)
		bounds(x, &e->lo, &e->hi);
	else if (x->kind == USC__ORC_POS_INF)
		e->lo = e->hi = INFINITY;
	else if (x->kind == USC__ORC_NEG_INF)
		e->lo = e->hi = -INFINITY;
	else
		e->lo = e->hi = NAN;
}

static usc_status tier_to_output(void *state, usc_dtype t, const void *v,
				 uint64_t *bits, void *enclosure,
				 usc_error *err)
{
	const value *x = v;
	usc__oracle_enclosure *e = enclosure;
	bool decided = false;
	uint64_t rb = 0;
	usc_status st;

	(void)state;
	if (e) {
		memset(e, 0, sizeof *e);
		e->kind = (usc__oracle_kind)x->kind;
		e->flags = x->flags & (USC__ORC_NEG_ZERO | USC__ORC_ZSIGN_UNKNOWN);
		e->prec = 53;
	}
	if (!usc_dtype_is_float(t)) {
		*bits = x->bits & usc__dom_mask(usc__dom_width(t));
		if (e && x->kind != USC__ORC_UNDECIDED) {
			int64_t sv = 0;
			uint64_t uv = 0;

			(void)usc_decode_int(t, *bits, &sv, &uv);
			e->lo = e->hi = usc_format_of(t)->kind == USC_KIND_SINT
						? (double)sv
						: (double)uv;
			e->rounded = true;
			e->rounded_bits = *bits;
		}
		return USC_OK;
	}
	st = usc__tier_decide_rounding(x, t, &decided, &rb, err);
	if (st != USC_OK)
		return st;
	if (decided)
		*bits = rb;
	else if (x->kind == USC__ORC_FINITE)
		st = usc_encode_double(t, point_d(x), NULL, bits, NULL);
	else {
		usc_float_info fi;

		(void)usc_float_info_of(t, &fi);
		*bits = fi.nan_bits;
	}
	if (e) {
		e->rounded = decided;
		e->rounded_bits = rb;
		enclosure_bounds(x, e);
	}
	if (st != USC_OK)
		return usc__fail(err, st, "tier: cannot encode into %s",
				 usc_dtype_name(t));
	return USC_OK;
}

void usc__tier_enclosure(const usc__tier_value *v, usc__oracle_enclosure *e)
{
	memset(e, 0, sizeof *e);
	e->kind = (usc__oracle_kind)v->kind;
	e->flags = v->flags & (USC__ORC_NEG_ZERO | USC__ORC_ZSIGN_UNKNOWN);
	e->prec = 53;
	enclosure_bounds(v, e);
}

/*
 * The array entries (domain.h): the same values and codes as tier_load
 * and tier_to_output element by element, without the per-element calls
 * through the domain table and the tensor accessors.
 * tests/tier/test_tier_array.c holds them to bit-identity.
 */
static usc_status tier_load_array(void *state, usc_dtype t, const void *enc,
				  size_t n, void *out, usc_error *err)
{
	const unsigned char *p = enc;
	value *r = out;
	size_t i, c;
	usc_status st;

	(void)state;
	/* bf16 and f32 widen to double exactly, as in load_bits. */
	if (t == USC_BF16) {
		for (i = 0; i < n; i++) {
			uint32_t b = (uint32_t)p[2 * i] << 16 |
				     (uint32_t)p[2 * i + 1] << 24;
			float f;

			memcpy(&f, &b, sizeof f);
			set_point(&r[i], f);
		}
		return USC_OK;
	}
	if (t == USC_F32) {
		for (i = 0; i < n; i++) {
			uint32_t b = (uint32_t)usc__dom_get_enc(p, 4, i);
			float f;

			memcpy(&f, &b, sizeof f);
			set_point(&r[i], f);
		}
		return USC_OK;
	}
	c = (size_t)usc_format_of(t)->container_bytes;
	for (i = 0; i < n; i++) {
		st = usc__tier_load_bits(t, usc__dom_get_enc(p, c, i), &r[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * The code tier_to_output gives a FINITE value without strict-sign flags
 * in f32, f64 or a format rn_fast.h covers (rf, looked up once by the
 * caller): the nearest-even code of its midpoint
 * (point_d, which gives a zero its sign), with no bounds computed.  Why
 * this is the same code: when the ball decides
 * (usc__tier_decide_rounding), every real in it rounds to one code, and
 * the midpoint lies in the ball (the bounds step outward from mid -+
 * rad), so by the monotonicity of rounding into these formats (overflow
 * to an infinity of the same sign) the code is the midpoint's; when it
 * does not decide, tier_to_output encodes the midpoint itself.  A value
 * with a strict-sign flag whose midpoint has that strict sign (TIER_GT0
 * and mid > 0, TIER_LT0 and mid < 0), the common case of products and
 * sums of known sign, gives its midpoint's code too: the flag can only
 * move the ball's end on the other side of 0 to 0 (usc__tier_round_rn),
 * so the end points still hold the midpoint between them, and the same
 * monotonicity applies.  A flag against its midpoint's sign (a positive
 * ball whose midpoint is below 0 can decide a code its midpoint does not
 * round to) and every other type take the general path (false).  f32
 * converts in hardware
 * as encode_rn does, within FLT_MAX.  The other covered formats encode
 * in line only up to their largest finite value (whose overflow rules
 * differ: an fn format overflows to NaN); there rounding is monotone, and
 * a midpoint beyond it takes the general path.
 */
static inline bool mid_code(usc_dtype t, const usc__rn_format *rf,
			    const value *x, uint64_t *bits)
{
	double m;

	if (x->kind != USC__ORC_FINITE ||
	    ((x->flags & TIER_GT0) && !(x->mid > 0)) ||
	    ((x->flags & TIER_LT0) && !(x->mid < 0)))
		return false;
	m = point_d(x);
	if (t == USC_F32) {
		float f;
		uint32_t b;

		if (!(fabs(m) <= FLT_MAX))
			return false;
		f = (float)m;
		memcpy(&b, &f, sizeof b);
		*bits = b;
		return true;
	}
	if (rf)
		return usc__rn_encode(rf, m, bits);
	return t == USC_F64 &&
	       usc_encode_double(t, m, NULL, bits, NULL) == USC_OK;
}

static usc_status tier_to_output_array(void *state, usc_dtype t,
				       const void *values, size_t n,
				       void *enc, usc_error *err)
{
	const value *x = values;
	size_t i, c = (size_t)usc_format_of(t)->container_bytes;
	const usc__rn_format *rf = usc__rn_format_of(t);
	usc_status st;

	if (t == USC_F32) {
		/* A constant width: the byte stores merge into one. */
		for (i = 0; i < n; i++) {
			uint64_t bits;

			if (!mid_code(t, rf, &x[i], &bits)) {
				st = tier_to_output(state, t, &x[i], &bits,
						    NULL, err);
				if (st != USC_OK)
					return st;
			}
			usc__dom_put_enc(enc, 4, i, bits);
		}
		return USC_OK;
	}
	for (i = 0; i < n; i++) {
		uint64_t bits;

		if (!mid_code(t, rf, &x[i], &bits)) {
			st = tier_to_output(state, t, &x[i], &bits, NULL, err);
			if (st != USC_OK)
				return st;
		}
		usc__dom_put_enc(enc, c, i, bits);
	}
	return USC_OK;
}

static bool tier_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return x->kind != USC__ORC_UNDECIDED && (x->bits & 1) != 0;
}

static usc_status tier_to_index(void *state, usc_dtype t, const void *v,
				int64_t *out, usc_error *err)
{
	tier_state *s = state;
	const value *x = v;

	if (x->kind == USC__ORC_UNDECIDED)
		return usc__fail(err, USC_EDOMAIN,
				 "tier: an index of type %s is undecided",
				 usc_dtype_name(t));
	return usc__domain_reference.to_index(s->ref, t, &x->bits, out, err);
}

/*
 * A reduction by add, for the interpreter's optional sum entry: the
 * tier's semantics round nothing, so every order gives the same real
 * sum.  When the init and every value are finite points (the common case:
 * a reduction of a kernel's inputs or of exact intermediates), MPFR adds
 * them exactly (mpfr_sum) and rounds once to a double: the ball is that
 * double with radius 0 when exact, else a bound of half its ulp.  This is
 * the exact accumulation that cancellation needs: the sequential path's
 * radius adds every partial sum's rounding error and cannot decide a sum
 * like 2^60 + 1 - 2^60.  Anything else (a radius, an infinity, a NaN, an
 * exact zero, whose sign the sequential path tracks) is declined.
 */
/* Room for n terms of tier_sum in the state, each a 53-bit number. */
static usc_status sum_reserve(tier_state *s, size_t n, usc_error *err)
{
	mpfr_t *xs;
	mpfr_ptr *ps;

	if (n <= s->sum_cap)
		return USC_OK;
	xs = usc__reallocarray(s->sum_x, n, sizeof *xs);
	if (!xs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	s->sum_x = xs;
	ps = usc__reallocarray(s->sum_p, n, sizeof *ps);
	if (!ps)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	s->sum_p = ps;
	for (size_t k = s->sum_cap; k < n; k++)
		mpfr_init2(xs[k], 53);
	/* The array may have moved: every pointer is taken again. */
	for (size_t k = 0; k < n; k++)
		ps[k] = xs[k];
	s->sum_cap = n;
	return USC_OK;
}

static usc_status tier_sum(void *state, const usc__dom_op *add, size_t n,
			   const void *values, const void *init, void *out,
			   usc_error *err)
{
	tier_state *s = state;
	const value *v = values, *v0 = init;
	value *r = out;
	mpfr_t sum;
	int ternary;
	double d;
	unsigned inexact;
	size_t k;

	/*
	 * The accumulation of a dot or convolution (the interpreter offers
	 * it too, domain.h) keeps the tier's per-product path.
	 */
	if (add->instr && (add->instr->opcode == USC_HLO_OP_DOT ||
			   add->instr->opcode == USC_HLO_OP_CONVOLUTION))
		return USC_EUNSUPPORTED;
	/*
	 * Balls decline: summing them here (the exact sum of the midpoints,
	 * the radii added upward) would be sound and tighter, but it gives
	 * other midpoints and radii than the sequential path, and so other
	 * figures (the oracle's ULP errors read the ball's midpoint) on the
	 * kernels whose reductions take balls (softmax, the norms, cross
	 * entropy): the check's figures must not move with the tier's
	 * method.
	 */
	if (add->op != USC_HLO_OP_ADD || !usc_dtype_is_float(add->result) ||
	    v0->kind != USC__ORC_FINITE || v0->rad != 0)
		return USC_EUNSUPPORTED;
	for (k = 0; k < n; k++)
		if (v[k].kind != USC__ORC_FINITE || v[k].rad != 0)
			return USC_EUNSUPPORTED;
	/*
	 * The midpoints' sum in double first, with TwoSum's exact error of
	 * every addition: when every error is 0, every partial sum was
	 * exact, so the double is the exact sum, which is what MPFR would
	 * return with a zero ternary (the common case: a row of bf16 or
	 * f32 values, whose 8 or 24 bits fit in 53 with room for the
	 * exponents' spread).  Otherwise (an error, an overflow, whose error
	 * is NaN) MPFR sums exactly.
	 */
	d = v0->mid;
	inexact = 0;
	for (k = 0; k < n; k++) {
		double e;

		d = two_sum(d, v[k].mid, &e);
		inexact |= e != 0;
	}
	if (inexact == 0 && isfinite(d))
		ternary = 0;
	else {
		if (n == SIZE_MAX)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		if (sum_reserve(s, n + 1, err) != USC_OK)
			return USC_ENOMEM;
		/* Doubles are exact at 53 bits. */
		for (k = 0; k <= n; k++)
			mpfr_set_d(s->sum_x[k], k < n ? v[k].mid : v0->mid,
				   MPFR_RNDN);
		mpfr_init2(sum, 53);
		ternary = mpfr_sum(sum, s->sum_p, (unsigned long)(n + 1),
				   MPFR_RNDN);
		d = mpfr_get_d(sum, MPFR_RNDN);
		mpfr_clear(sum);
	}
	/* An exact zero's sign is the sequential path's. */
	if (d == 0 && ternary == 0)
		return USC_EUNSUPPORTED;
	/*
	 * Rounded to nearest: the error is at most half the spacing at d,
	 * below 2^-53 |d| for a normal d and 2^-1075 for a subnormal one;
	 * rup covers both (its floor is 2^-1060).
	 */
	set_ball(r, d, ternary == 0 ? 0 : rup(fabs(d) * 0x1p-53));
	return USC_OK;
}

const usc__domain_ops usc__domain_tier = {
	.name = "tier",
	.value_size = sizeof(usc__tier_value),
	.create = tier_create,
	.destroy = tier_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = tier_load,
	.constant = tier_constant,
	.apply = usc__tier_apply,
	.to_output = tier_to_output,
	.is_true = tier_is_true,
	.to_index = tier_to_index,
	.matmul = usc__tier_matmul,
	.sum = tier_sum,
	.sum_declines_by_value = true,
	.identity = usc__tier_identity,
	.load_array = tier_load_array,
	.to_output_array = tier_to_output_array,
};
