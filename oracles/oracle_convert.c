/*
 * The certified oracle's loads and conversions (oracle_internal.h): an
 * encoding read into a value, converts between types, bitcasts and
 * reduce-precision, each exact or UNDECIDED (docs/oracle.md).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"
#include "oracle.h"
#include "oracle_internal.h"

/* ------------------------------------------------------- converts */

/* Loads the encoding bits of type t into r exactly. */
usc_status usc__orc_load_bits(orc_state *s, usc_dtype t, uint64_t bits,
			      value *r, usc_error *err)
{
	usc__orc_prep(s, r);
	if (!usc_dtype_is_float(t)) {
		r->bits = bits & usc__dom_mask(usc__dom_width(t));
		return USC_OK;
	}
	mpfr_set_prec(s->t, 64);
	if (usc_decode_mpfr(t, bits, s->t) != USC_OK)
		return usc__fail(err, USC_EINVAL, "cannot decode %s",
				 usc_dtype_name(t));
	usc__orc_set_point(s, r, s->t);
	return USC_OK;
}

/* The exact value of an integer encoding into a float value. */
static void int_to_value(orc_state *s, usc_dtype t, uint64_t bits, value *r)
{
	mpfr_set_prec(s->t, 64);
	(void)usc_decode_mpfr(t, bits, s->t);
	usc__orc_set_point(s, r, s->t);
}

/*
 * XLA's reduce-precision of an exact real x, for the quantize option: x
 * rounds to nearest-even with man_bits stored bits at the exponent range
 * the narrower of the two formats allows.  When the reduced exponent is
 * the narrower, values past its largest binade become Inf and values
 * below its smallest normal a signed zero (XLA flushes the reduced
 * format's subnormals); otherwise the declared type's own subnormal
 * spacing applies and a carry past its top binade gives Inf, as XLA's
 * rounding of the bit pattern does.
 */
static void rp_point(mpfr_ptr y, mpfr_srcptr x, const usc_format *f,
		     int eb, int mb)
{
	int m = mb < f->man_bits ? mb : f->man_bits;
	mpfr_exp_t e;

	mpfr_set_prec(y, m + 1 < MPFR_PREC_MIN ? MPFR_PREC_MIN : m + 1);
	if (!mpfr_regular_p(x)) {
		mpfr_set(y, x, MPFR_RNDN);
		return;
	}
	if (eb < f->exp_bits) {
		long red_bias = (1L << (eb - 1)) - 1;

		mpfr_set(y, x, MPFR_RNDN);
		e = mpfr_get_exp(y) - 1;
		if (e > red_bias)
			mpfr_set_inf(y, mpfr_sgn(x));
		else if (e <= -red_bias)
			mpfr_set_zero(y, mpfr_sgn(x));
		return;
	}
	{
		long emin = 1 - f->bias, emax = (1L << f->exp_bits) - 2 - f->bias;
		mpfr_t q;

		if (f->inf != USC_INF_IEEE)
			emax = (1L << f->exp_bits) - 1 - f->bias;
		e = mpfr_get_exp(x) - 1;
		if (e >= emin)
			mpfr_set(y, x, MPFR_RNDN);
		else {
			/* Round at the subnormal quantum 2^(emin - m). */
			mpfr_init2(q, mpfr_get_prec(x) + 2);
			mpfr_mul_2si(q, x, m - emin, MPFR_RNDN);
			mpfr_rint(q, q, MPFR_RNDN);
			mpfr_mul_2si(q, q, emin - m, MPFR_RNDN);
			mpfr_set_prec(y, mpfr_get_prec(q));
			mpfr_set(y, q, MPFR_RNDN);
			if (mpfr_zero_p(y))
				mpfr_set_zero(y, mpfr_sgn(x));
			mpfr_clear(q);
		}
		if (mpfr_regular_p(y) && mpfr_get_exp(y) - 1 > emax)
			mpfr_set_inf(y, mpfr_sgn(y));
	}
}

usc_status usc__orc_reduce_precision(orc_state *s, const usc__dom_op *op,
				     value *r, const value *x, usc_error *err)
{
	const usc_format *f = usc_format_of(op->arg[0]);

	if (!s->quantize || x->kind != USC__ORC_FINITE) {
		usc__orc_vcopy(r, x);
		return USC_OK;
	}
	if (!f || f->kind != USC_KIND_FLOAT || op->exponent_bits < 1 ||
	    op->mantissa_bits < 0)
		return usc__fail(err, USC_EINVAL,
				 "reduce-precision needs a float operand, "
				 "exponent_bits >= 1 and mantissa_bits >= 0");
	mpfr_set_prec(s->a, mpfi_get_prec(x->x));
	mpfr_set(s->a, &x->x->left, MPFR_RNDN);
	if (usc__orc_is_zero_point(x))
		usc__orc_point_to_mpfr(x, s->a);
	rp_point(s->lo, s->a, f, op->exponent_bits, op->mantissa_bits);
	mpfr_set_prec(s->b, mpfi_get_prec(x->x));
	mpfr_set(s->b, &x->x->right, MPFR_RNDN);
	if (usc__orc_is_zero_point(x))
		usc__orc_point_to_mpfr(x, s->b);
	rp_point(s->hi, s->b, f, op->exponent_bits, op->mantissa_bits);
	/* Non-decreasing: constant where the endpoints agree (zero signs too). */
	if ((usc__orc_is_point(x) && !(x->flags & USC__ORC_ZSIGN_UNKNOWN)) ||
	    (mpfr_equal_p(s->lo, s->hi) &&
	     mpfr_signbit(s->lo) == mpfr_signbit(s->hi) &&
	     !(mpfr_zero_p(s->lo) && usc__orc_has_zero(x))))
		usc__orc_set_point(s, r, s->lo);
	else
		usc__orc_set_undecided(r);
	return USC_OK;
}

usc_status usc__orc_convert(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);
	bool decided;
	uint64_t bits;
	usc_status st;

	usc__orc_prep(s, r);
	if (!usc_dtype_is_float(from)) {
		if (x->kind == USC__ORC_UNDECIDED) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		if (!usc_dtype_is_float(to)) {
			const void *args[1] = {&x->bits};

			return usc__domain_reference.apply(s->ref, op, 1,
							   &r->bits, args, 0,
							   err);
		}
		int_to_value(s, from, x->bits, r);
		if (!s->quantize)
			return USC_OK;
		st = usc__oracle_decide_rounding(r, to, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		return usc__orc_load_bits(s, to, bits, r, err);
	}
	if (x->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(to)) {
		if (!s->quantize) {
			usc__orc_vcopy(r, x);
			return USC_OK;
		}
		st = usc__oracle_decide_rounding(x, to, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		return usc__orc_load_bits(s, to, bits, r, err);
	}
	if (!tf)
		return usc__fail(err, USC_EINVAL, "convert to an invalid type");
	if (tf->kind == USC_KIND_PRED) {
		/* x != 0, and NaN is true, as C's conversion to bool. */
		if (x->kind != USC__ORC_FINITE || !usc__orc_has_zero(x))
			r->bits = 1;
		else if (usc__orc_is_zero_point(x))
			r->bits = 0;
		else
			usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (tf->kind != USC_KIND_SINT && tf->kind != USC_KIND_UINT)
		return usc__fail(err, USC_EUNSUPPORTED, "convert %s to %s",
				 usc_dtype_name(from), usc_dtype_name(to));
	/*
	 * XLA's float-to-int convert truncates and saturates (NaN gives 0):
	 * a non-decreasing map, constant on the enclosure exactly when the
	 * endpoints agree.
	 */
	if (x->kind != USC__ORC_FINITE) {
		usc__orc_point_to_mpfr(x, s->t);
		(void)usc_encode_mpfr(to, s->t, NULL, &r->bits, NULL);
		return USC_OK;
	}
	{
		uint64_t blo = 0, bhi = 0;

		(void)usc_encode_mpfr(to, &x->x->left, NULL, &blo, NULL);
		(void)usc_encode_mpfr(to, &x->x->right, NULL, &bhi, NULL);
		if (blo != bhi)
			usc__orc_set_undecided(r);
		else
			r->bits = blo;
	}
	return USC_OK;
}

usc_status usc__orc_bitcast(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	uint64_t bits;
	usc_status st;

	usc__orc_prep(s, r);
	if (usc__dom_width(from) != usc__dom_width(to))
		return usc__fail(err, USC_EUNSUPPORTED,
				 "bitcast-convert from %s to %s changes the "
				 "width", usc_dtype_name(from),
				 usc_dtype_name(to));
	if (x->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		/* An encoding needs a rounding: to the operand's type. */
		bool decided;

		st = usc__oracle_decide_rounding(x, from, &decided, &bits, err);
		if (st != USC_OK)
			return st;
		if (!decided) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
	} else
		bits = x->bits;
	bits &= usc__dom_mask(usc__dom_width(from));
	return usc__orc_load_bits(s, to, bits, r, err);
}
