/*
 * The reference domain: what a strict IEEE-style implementation of the
 * HLO produces.  A value is the encoding of its declared element type (a
 * uint64_t with the format's bits in the low end), and every op is
 * correctly rounded, round-to-nearest-even, to the declared type of its
 * result, with the format's own overflow policy (docs/formats.md).
 *
 * How each result is rounded exactly once:
 *   - add, subtract, multiply, divide and sqrt of formats of at most 24
 *     bits of precision are computed in double and rounded once into the
 *     format.  Double has 53 >= 2p + 2 bits, so the first rounding never
 *     changes the second (Figueroa, "When is double rounding innocuous?",
 *     SIGNUM 1995).  f64 uses the hardware's own IEEE operations.
 *   - remainder (fmod), floor, ceil, the round-* ops, abs, negate, sign
 *     and min/max have exact results, computed in double (every format
 *     here fits in a double exactly).
 *   - every other floating op goes through MPFR in a Ziv loop: the
 *     function is evaluated at a working precision P, correctly rounded;
 *     when both neighbours of the result at precision P round to the same
 *     code of the target format, so does the exact value that lies
 *     strictly between them; otherwise P doubles.  An exact result
 *     (ternary value 0: exp(0), log(1), sqrt(4)) is rounded directly, so
 *     the loop always ends on exact cases; P is capped at ZIV_MAX_PREC.
 * Integer ops are exact two's complement of the declared width with
 * wrap-around, with XLA's rules for division by zero and shifts.
 * docs/evaluator.md states every choice.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"

/* The Ziv loop's first extra bits and its cap (a reported error). */
#define ZIV_EXTRA_BITS 24
#define ZIV_MAX_PREC 8192

typedef struct ref_state {
	usc_float_info info[USC_DTYPE_COUNT];
	bool has_info[USC_DTYPE_COUNT];
	mpfr_t a, b, y, lo, hi, t;
} ref_state;

static usc_status ref_create(void **state, usc_error *err)
{
	ref_state *s = usc__calloc(1, sizeof *s);
	int t;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++)
		if (usc_dtype_is_float((usc_dtype)t) &&
		    usc_float_info_of((usc_dtype)t, &s->info[t]) == USC_OK)
			s->has_info[t] = true;
	mpfr_inits2(64, s->a, s->b, s->y, s->lo, s->hi, s->t, (mpfr_ptr)0);
	*state = s;
	return USC_OK;
}

static void ref_destroy(void *state)
{
	ref_state *s = state;

	if (!s)
		return;
	mpfr_clears(s->a, s->b, s->y, s->lo, s->hi, s->t, (mpfr_ptr)0);
	usc__free(s);
}

/* ------------------------------------------------------------ helpers */

/* The two's complement value of the low w bits. */
static int64_t sext(uint64_t b, int w)
{
	uint64_t m;

	if (w >= 64)
		return (int64_t)b;
	m = (uint64_t)1 << (w - 1);
	b &= usc__dom_mask(w);
	return (int64_t)((b ^ m) - m);
}

static double dec(usc_dtype t, uint64_t bits)
{
	double d = 0;

	/* Every floating format here decodes exactly into a double. */
	(void)usc_decode_double(t, bits, &d);
	return d;
}

static uint64_t enc(usc_dtype t, double x)
{
	uint64_t bits = 0;

	(void)usc_encode_double(t, x, NULL, &bits, NULL);
	return bits;
}

static uint64_t f64_bits(double x)
{
	uint64_t b;

	memcpy(&b, &x, sizeof b);
	return b;
}

static const char *op_name(const usc__dom_op *op)
{
	return usc_hlo_opcode_name(op->op);
}

static usc_status unsupported(const usc__dom_op *op, usc_dtype t,
			      usc_error *err)
{
	return usc__dom_unsupported(NULL, op, t, err);
}

/* ---------------------------------------------------- MPFR Ziv loop */



typedef int (*mpfr_fn1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
typedef int (*mpfr_fn2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/*
 * logistic(a) = 1 / (1 + exp(-a)) at precision P into s->y.  Each of the
 * three steps is correctly rounded with relative error at most 2^-P, so
 * the result lies within a factor (1 +- 2^-P)^3, inside (1 +- 2^(2-P)),
 * of the exact value; *exact says no step rounded.  When exp(-a)
 * overflows the exact value is positive and far below every format's
 * smallest value: *tiny is set.
 */
static void logistic_at(ref_state *s, mpfr_prec_t P, bool *exact, bool *tiny)
{
	mpfr_set_prec(s->t, P);
	mpfr_set_prec(s->y, P);
	mpfr_clear_flags();
	mpfr_neg(s->b, s->a, MPFR_RNDN);
	mpfr_exp(s->t, s->b, MPFR_RNDN);
	*tiny = mpfr_inf_p(s->t) != 0;
	mpfr_add_ui(s->t, s->t, 1, MPFR_RNDN);
	mpfr_ui_div(s->y, 1, s->t, MPFR_RNDN);
	*exact = !mpfr_inexflag_p();
}

/*
 * Rounds f(s->a[, s->b]) correctly into the result type.  s->a and s->b
 * hold the exact operands.  logistic is the one composite function.
 */
static usc_status ziv(ref_state *s, const usc__dom_op *op, mpfr_fn1 f1,
		      mpfr_fn2 f2, bool logistic, uint64_t *out,
		      usc_error *err)
{
	usc_dtype t = op->result;
	mpfr_prec_t P = s->info[t].precision + ZIV_EXTRA_BITS;
	usc__mpfr_range range;
	uint64_t c_lo, c_hi;
	usc_status st = USC_OK;

	usc__mpfr_range_widen(&range);
	for (;;) {
		bool exact, tiny = false, wide = false;

		if (logistic) {
			logistic_at(s, P, &exact, &tiny);
			wide = true;
		} else {
			int tern;

			mpfr_set_prec(s->y, P);
			mpfr_clear_flags();
			tern = f1 ? f1(s->y, s->a, MPFR_RNDN)
				  : f2(s->y, s->a, s->b, MPFR_RNDN);
			exact = tern == 0;
		}
		if (tiny || (mpfr_underflow_p() && mpfr_zero_p(s->y))) {
			/*
			 * The exact value is non-zero and below anything a
			 * format holds: the smallest MPFR number of its sign
			 * rounds as it does (to 0, or to f8e8m0fnu's 2^-127).
			 */
			int neg = tiny ? 0 : mpfr_signbit(s->y);

			mpfr_set_ui_2exp(s->y, 1, mpfr_get_emin() - 1,
					 MPFR_RNDN);
			if (neg)
				mpfr_neg(s->y, s->y, MPFR_RNDN);
			exact = true;
		}
		if (exact || mpfr_nan_p(s->y) || mpfr_overflow_p() ||
		    mpfr_underflow_p()) {
			st = usc_encode_mpfr(t, s->y, NULL, out, NULL);
			break;
		}
		mpfr_set_prec(s->lo, P + 8);
		mpfr_set_prec(s->hi, P + 8);
		if (wide) {
			/* The enclosure y (1 +- 2^(2-P)), rounded outward. */
			mpfr_mul_2si(s->t, s->y, 2 - (long)P, MPFR_RNDN);
			mpfr_sub(s->lo, s->y, s->t, MPFR_RNDD);
			mpfr_add(s->hi, s->y, s->t, MPFR_RNDU);
		} else {
			/*
			 * Rounded to nearest, the exact value lies strictly
			 * between the neighbours of y at precision P.
			 */
			mpfr_set(s->lo, s->y, MPFR_RNDN);
			mpfr_set(s->hi, s->y, MPFR_RNDN);
			mpfr_set_prec(s->t, P);
			mpfr_set(s->t, s->y, MPFR_RNDN);
			mpfr_nextbelow(s->t);
			mpfr_set(s->lo, s->t, MPFR_RNDN);
			mpfr_set(s->t, s->y, MPFR_RNDN);
			mpfr_nextabove(s->t);
			mpfr_set(s->hi, s->t, MPFR_RNDN);
		}
		st = usc_encode_mpfr(t, s->lo, NULL, &c_lo, NULL);
		if (st == USC_OK)
			st = usc_encode_mpfr(t, s->hi, NULL, &c_hi, NULL);
		if (st != USC_OK)
			break;
		if (c_lo == c_hi || (usc_bits_is_nan(t, c_lo) &&
				     usc_bits_is_nan(t, c_hi))) {
			*out = c_lo;
			break;
		}
		if (P >= ZIV_MAX_PREC) {
			st = usc__fail(err, USC_ERANGE,
				       "%s on %s: no correct rounding found "
				       "within %d bits",
				       op_name(op), usc_dtype_name(t),
				       ZIV_MAX_PREC);
			break;
		}
		P *= 2;
	}
	usc__mpfr_range_restore(&range);
	if (st != USC_OK && err && err->code == USC_OK)
		return usc__fail(err, st, "%s: encoding failed", op_name(op));
	return st;
}

/* Reciprocal square root with IEEE 754's rSqrt(-0) = -Inf. */
static int rsqrt_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r)
{
	if (mpfr_zero_p(x) && mpfr_signbit(x)) {
		mpfr_set_inf(y, -1);
		return 0;
	}
	return mpfr_rec_sqrt(y, x, r);
}

static mpfr_fn1 mpfr_unary(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_EXPONENTIAL: return mpfr_exp;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return mpfr_expm1;
	case USC_HLO_OP_LOG: return mpfr_log;
	case USC_HLO_OP_LOG_PLUS_ONE: return mpfr_log1p;
	case USC_HLO_OP_TANH: return mpfr_tanh;
	case USC_HLO_OP_ERF: return mpfr_erf;
	case USC_HLO_OP_SINE: return mpfr_sin;
	case USC_HLO_OP_COSINE: return mpfr_cos;
	case USC_HLO_OP_TAN: return mpfr_tan;
	case USC_HLO_OP_CBRT: return mpfr_cbrt;
	case USC_HLO_OP_RSQRT: return rsqrt_fn;
	case USC_HLO_OP_ACOS: return mpfr_acos;
	case USC_HLO_OP_ASIN: return mpfr_asin;
	case USC_HLO_OP_ATAN: return mpfr_atan;
	case USC_HLO_OP_ACOSH: return mpfr_acosh;
	case USC_HLO_OP_ASINH: return mpfr_asinh;
	case USC_HLO_OP_ATANH: return mpfr_atanh;
	case USC_HLO_OP_COSH: return mpfr_cosh;
	case USC_HLO_OP_SINH: return mpfr_sinh;
	default: return NULL;
	}
}

/* ------------------------------------------------------ floating ops */

/* XLA's maximum and minimum propagate NaN; max(-0, +0) is +0. */
static uint64_t float_maxmin(usc_dtype t, bool is_max, uint64_t a,
			     uint64_t b)
{
	double x = dec(t, a), y = dec(t, b);

	if (isnan(x))
		return a;
	if (isnan(y))
		return b;
	if (x == y) {
		/* Only zeros of opposite signs differ here. */
		bool a_neg = signbit(x) != 0;

		return (is_max ? !a_neg : a_neg) ? a : b;
	}
	return (is_max ? x > y : x < y) ? a : b;
}

/*
 * XLA's reduce-precision on the bits of an IEEE format: round the
 * mantissa to nearest-even on the bit pattern, then force the exponent
 * into the reduced range (overflow to Inf, everything at or below the
 * reduced format's subnormal exponent to a signed zero: denormals of the
 * reduced format are flushed), and keep NaN inputs as they were when
 * mantissa bits remain.  This is XLA's EmitReducePrecisionIR.
 */
static usc_status reduce_precision(const usc__dom_op *op, uint64_t x,
				   uint64_t *out, usc_error *err)
{
	usc_dtype t = op->arg[0];
	const usc_format *f = usc_format_of(t);
	int sm, se, nbits, me = op->exponent_bits, mm = op->mantissa_bits;
	uint64_t mask;
	bool is_nan;

	if (!f || f->kind != USC_KIND_FLOAT || f->inf != USC_INF_IEEE ||
	    f->nan != USC_NAN_IEEE || !f->has_subnormals)
		return unsupported(op, t, err);
	sm = f->man_bits;
	se = f->exp_bits;
	nbits = f->bits;
	mask = usc__dom_mask(nbits);
	x &= mask;
	is_nan = usc_bits_is_nan(t, x);
	if (me < 1 || mm < 0)
		return usc__fail(err, USC_EINVAL,
				 "reduce-precision needs exponent_bits >= 1 "
				 "and mantissa_bits >= 0");
	{
		uint64_t r = x;

		if (mm < sm) {
			uint64_t last = (uint64_t)1 << (sm - mm);
			uint64_t bias = (last >> 1) - 1;
			uint64_t lastbit = (r & last) >> (sm - mm);

			r = (r + lastbit + bias) & mask;
			r &= ~(last - 1);
		}
		if (me < se) {
			uint64_t sign = (uint64_t)1 << (nbits - 1);
			uint64_t emask = (((uint64_t)1 << se) - 1) << sm;
			uint64_t src_bias = ((uint64_t)1 << (se - 1)) - 1;
			uint64_t red_bias = ((uint64_t)1 << (me - 1)) - 1;
			uint64_t maxe = src_bias + red_bias;
			uint64_t mine = src_bias - red_bias;
			uint64_t e = r & emask;

			if (e > (maxe << sm))
				r = (r & sign) | emask;
			else if (e <= (mine << sm))
				r = r & sign;
		}
		if (is_nan && mm > 0)
			r = x;
		*out = r & mask;
	}
	return USC_OK;
}

/* The key that orders encodings as XLA's total order does. */
static int64_t total_key(usc_dtype t, uint64_t bits)
{
	const usc_format *f = usc_format_of(t);
	int w = f->bits;
	int64_t v;

	if (!f->has_sign)
		return (int64_t)(bits & usc__dom_mask(w));
	v = sext(bits, w);
	/* Negative values flip their magnitude bits: sign-magnitude order. */
	if (v < 0)
		v ^= (int64_t)(usc__dom_mask(w - 1));
	return v;
}

static bool cmp_result(usc__cmp_dir d, int c)
{
	switch (d) {
	case USC__CMP_EQ: return c == 0;
	case USC__CMP_NE: return c != 0;
	case USC__CMP_LT: return c < 0;
	case USC__CMP_LE: return c <= 0;
	case USC__CMP_GT: return c > 0;
	case USC__CMP_GE: return c >= 0;
	}
	return false;
}

static usc_status compare(const usc__dom_op *op, uint64_t a, uint64_t b,
			  uint64_t *out)
{
	usc_dtype t = op->arg[0];
	int w = usc__dom_width(t);
	int c = 0;

	switch (op->cmp_type) {
	case USC__CMP_FLOAT: {
		double x = dec(t, a), y = dec(t, b);

		/* Unordered: only NE holds. */
		if (isnan(x) || isnan(y)) {
			*out = op->cmp_dir == USC__CMP_NE;
			return USC_OK;
		}
		c = x < y ? -1 : x > y ? 1 : 0;
		break;
	}
	case USC__CMP_TOTALORDER: {
		int64_t ka = total_key(t, a), kb = total_key(t, b);

		c = ka < kb ? -1 : ka > kb ? 1 : 0;
		break;
	}
	case USC__CMP_SIGNED: {
		int64_t x = sext(a, w), y = sext(b, w);

		c = x < y ? -1 : x > y ? 1 : 0;
		break;
	}
	default: {
		uint64_t x = a & usc__dom_mask(w), y = b & usc__dom_mask(w);

		c = x < y ? -1 : x > y ? 1 : 0;
		break;
	}
	}
	*out = cmp_result(op->cmp_dir, c);
	return USC_OK;
}

static usc_status convert(const usc__dom_op *op, uint64_t a, uint64_t *out,
			  usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *ff = usc_format_of(from), *tf = usc_format_of(to);
	usc_status st;

	if (ff->kind == USC_KIND_FLOAT) {
		double x = dec(from, a);

		if (tf->kind == USC_KIND_PRED) {
			*out = x != 0 || isnan(x);
			return USC_OK;
		}
		if (tf->kind != USC_KIND_FLOAT && tf->kind != USC_KIND_SINT &&
		    tf->kind != USC_KIND_UINT)
			return unsupported(op, to, err);
		/* A NULL rounding gives XLA's float-to-int semantics. */
		st = usc_encode_double(to, x, NULL, out, NULL);
		return st == USC_OK ? USC_OK
				    : usc__fail(err, st, "convert failed");
	}
	if (ff->kind == USC_KIND_PRED || ff->kind == USC_KIND_SINT ||
	    ff->kind == USC_KIND_UINT) {
		int w = ff->bits;
		bool neg = ff->kind == USC_KIND_SINT && sext(a, w) < 0;
		uint64_t mag = ff->kind == USC_KIND_SINT
				       ? (uint64_t)sext(a, w)
				       : a & usc__dom_mask(w);

		if (tf->kind == USC_KIND_PRED) {
			*out = (a & usc__dom_mask(w)) != 0;
			return USC_OK;
		}
		if (tf->kind == USC_KIND_SINT || tf->kind == USC_KIND_UINT) {
			/* Two's complement truncation or extension. */
			*out = mag & usc__dom_mask(tf->bits);
			return USC_OK;
		}
		if (tf->kind != USC_KIND_FLOAT)
			return unsupported(op, to, err);
		if (neg ? sext(a, w) >= -((int64_t)1 << 53)
			: mag <= ((uint64_t)1 << 53)) {
			double x = neg ? (double)sext(a, w) : (double)mag;

			*out = enc(to, x);
			return USC_OK;
		} else {
			mpfr_t x;

			mpfr_init2(x, 64);
			if (neg)
				mpfr_set_sj(x, sext(a, w), MPFR_RNDN);
			else
				mpfr_set_uj(x, mag, MPFR_RNDN);
			st = usc_encode_mpfr(to, x, NULL, out, NULL);
			mpfr_clear(x);
			return st == USC_OK
				       ? USC_OK
				       : usc__fail(err, st, "convert failed");
		}
	}
	return unsupported(op, from, err);
}

static double round_afz(double x)
{
	return round(x);
}

/*
 * The sign of a NaN that the Ziv loop returns.  MPFR leaves the sign of
 * a NaN where it found it (mpfr_set_d and the functions set the NaN flag
 * of the destination, not its sign), so without this the sign would be
 * that of whatever the same variable held before: a result that depended
 * on the elements computed earlier.  It is the sign of the first NaN
 * operand (IEEE 754-2019 6.2.3 recommends propagating an input NaN), else
 * positive.  st passes through.
 */
static usc_status nan_sign(usc_status st, usc_dtype t, double x, double y,
			   uint64_t *out)
{
	bool neg = isnan(x) ? signbit(x) != 0 : isnan(y) && signbit(y);

	if (st == USC_OK && usc_bits_is_nan(t, *out))
		*out = enc(t, neg ? -(double)NAN : (double)NAN);
	return st;
}

static usc_status float_op(ref_state *s, const usc__dom_op *op,
			   const uint64_t *a, uint64_t *out, usc_error *err)
{
	usc_dtype t = op->result, at = op->arg[0];
	int p = s->has_info[at] ? s->info[at].precision : 0;
	double x = dec(at, a[0]), y = 0, r;

	if (op->nargs > 1 && usc_dtype_is_float(op->arg[1]))
		y = dec(op->arg[1], a[1]);
	switch (op->op) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
		if (p > 24 && t != USC_F64)
			return unsupported(op, t, err);
		/*
		 * Double rounding through double is innocuous for p <= 24
		 * (53 >= 2p + 2); f64 is the hardware's own IEEE result.
		 */
		switch (op->op) {
		case USC_HLO_OP_ADD: r = x + y; break;
		case USC_HLO_OP_SUBTRACT: r = x - y; break;
		case USC_HLO_OP_MULTIPLY: r = x * y; break;
		default: r = x / y; break;
		}
		*out = t == USC_F64 ? f64_bits(r) : enc(t, r);
		return USC_OK;
	case USC_HLO_OP_SQRT:
		r = sqrt(x);
		*out = t == USC_F64 ? f64_bits(r) : enc(t, r);
		return USC_OK;
	case USC_HLO_OP_REMAINDER:
		/* fmod is exact: its result is representable. */
		*out = enc(t, fmod(x, y));
		return USC_OK;
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
		*out = float_maxmin(t, op->op == USC_HLO_OP_MAXIMUM, a[0], a[1]);
		return USC_OK;
	case USC_HLO_OP_NEGATE:
		*out = enc(t, -x);
		return USC_OK;
	case USC_HLO_OP_ABS:
		*out = enc(t, fabs(x));
		return USC_OK;
	case USC_HLO_OP_SIGN:
		/* sign(+-0) = +-0 and sign(NaN) = NaN, as in XLA. */
		*out = (isnan(x) || x == 0) ? a[0] : enc(t, x > 0 ? 1.0 : -1.0);
		return USC_OK;
	case USC_HLO_OP_FLOOR:
		*out = enc(t, floor(x));
		return USC_OK;
	case USC_HLO_OP_CEIL:
		*out = enc(t, ceil(x));
		return USC_OK;
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
		*out = enc(t, round_afz(x));
		return USC_OK;
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
		/* rint rounds ties to even in the default rounding mode. */
		*out = enc(t, rint(x));
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		*out = isfinite(x) ? 1 : 0;
		return USC_OK;
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_ATAN2:
		usc_decode_mpfr(at, a[0], s->a);
		usc_decode_mpfr(op->arg[1], a[1], s->b);
		return nan_sign(ziv(s, op, NULL,
				    op->op == USC_HLO_OP_POWER ? mpfr_pow
							       : mpfr_atan2,
				    false, out, err),
				t, x, op->nargs > 1 ? y : 0, out);
	case USC_HLO_OP_LOGISTIC:
		usc_decode_mpfr(at, a[0], s->a);
		mpfr_set_prec(s->b, mpfr_get_prec(s->a));
		return nan_sign(ziv(s, op, NULL, NULL, true, out, err), t, x, 0,
				out);
	default:
		break;
	}
	{
		mpfr_fn1 f = mpfr_unary(op->op);

		if (!f)
			return unsupported(op, t, err);
		usc_decode_mpfr(at, a[0], s->a);
		return nan_sign(ziv(s, op, f, NULL, false, out, err), t, x, 0,
				out);
	}
}

/* ------------------------------------------------------- integer ops */

static uint64_t int_pow(uint64_t base, uint64_t e, bool neg_exp, bool sgn,
			int w)
{
	uint64_t acc = 1, m = usc__dom_mask(w);

	if (neg_exp) {
		/* XLA: a negative exponent gives 0 except for bases +-1. */
		int64_t b = sgn ? sext(base, w) : (int64_t)(base & m);

		if (b == 1)
			return 1;
		if (b == -1)
			return (e & 1) ? m : 1;
		return 0;
	}
	while (e) {
		if (e & 1)
			acc = (acc * base) & m;
		base = (base * base) & m;
		e >>= 1;
	}
	return acc & m;
}

static usc_status int_op(const usc__dom_op *op, const uint64_t *a,
			 uint64_t *out, usc_error *err)
{
	usc_dtype t = op->arg[0];
	const usc_format *f = usc_format_of(t);
	int w = f->bits;
	uint64_t m = usc__dom_mask(w), x = a[0] & m;
	uint64_t y = op->nargs > 1 ? a[1] & m : 0;
	bool sgn = f->kind == USC_KIND_SINT;
	int64_t sx = sext(x, w), sy = sext(y, w);
	int64_t smin = w >= 64 ? INT64_MIN : -((int64_t)1 << (w - 1));
	bool pred = f->kind == USC_KIND_PRED;

	switch (op->op) {
	case USC_HLO_OP_ADD:
		*out = pred ? (x | y) : (x + y) & m;
		return USC_OK;
	case USC_HLO_OP_SUBTRACT:
		*out = pred ? (x & ~y) & 1 : (x - y) & m;
		return USC_OK;
	case USC_HLO_OP_MULTIPLY:
		*out = (x * y) & m;
		return USC_OK;
	case USC_HLO_OP_DIVIDE:
		/* XLA: x / 0 is all ones; INT_MIN / -1 is INT_MIN. */
		if (y == 0)
			*out = m;
		else if (sgn && sx == smin && sy == -1)
			*out = x;
		else
			*out = sgn ? (uint64_t)(sx / sy) & m : x / y;
		return USC_OK;
	case USC_HLO_OP_REMAINDER:
		/* XLA: x % 0 is x; INT_MIN % -1 is 0. */
		if (y == 0)
			*out = x;
		else if (sgn && sx == smin && sy == -1)
			*out = 0;
		else
			*out = sgn ? (uint64_t)(sx % sy) & m : x % y;
		return USC_OK;
	case USC_HLO_OP_MAXIMUM:
		*out = sgn ? (sx > sy ? x : y) : (x > y ? x : y);
		return USC_OK;
	case USC_HLO_OP_MINIMUM:
		*out = sgn ? (sx < sy ? x : y) : (x < y ? x : y);
		return USC_OK;
	case USC_HLO_OP_AND:
		*out = x & y;
		return USC_OK;
	case USC_HLO_OP_OR:
		*out = x | y;
		return USC_OK;
	case USC_HLO_OP_XOR:
		*out = x ^ y;
		return USC_OK;
	case USC_HLO_OP_NOT:
		*out = ~x & m;
		return USC_OK;
	case USC_HLO_OP_SHIFT_LEFT:
		/* XLA: a count of width or more (as unsigned) gives 0. */
		*out = y >= (uint64_t)w ? 0 : (x << y) & m;
		return USC_OK;
	case USC_HLO_OP_SHIFT_RIGHT_LOGICAL:
		*out = y >= (uint64_t)w ? 0 : x >> y;
		return USC_OK;
	case USC_HLO_OP_SHIFT_RIGHT_ARITHMETIC: {
		/* XLA: a count of width or more fills with the sign bit. */
		uint64_t n = y >= (uint64_t)w ? (uint64_t)w - 1 : y;
		int64_t v = sgn || w < 64 ? sext(x, w) : (int64_t)x;

		*out = (uint64_t)(v >> n) & m;
		return USC_OK;
	}
	case USC_HLO_OP_POPCNT: {
		int c = 0;

		for (uint64_t v = x; v; v &= v - 1)
			c++;
		*out = (uint64_t)c;
		return USC_OK;
	}
	case USC_HLO_OP_CLZ: {
		int c = 0;

		for (int i = w - 1; i >= 0 && !((x >> i) & 1); i--)
			c++;
		*out = (uint64_t)c;
		return USC_OK;
	}
	case USC_HLO_OP_NEGATE:
		*out = (0 - x) & m;
		return USC_OK;
	case USC_HLO_OP_ABS:
		/* abs(INT_MIN) wraps to INT_MIN, as in two's complement. */
		*out = sgn && sx < 0 ? (0 - x) & m : x;
		return USC_OK;
	case USC_HLO_OP_SIGN:
		*out = sgn ? (sx < 0 ? m : sx > 0 ? 1 : 0) : (x != 0);
		return USC_OK;
	case USC_HLO_OP_POWER:
		*out = int_pow(x, sgn && sy < 0 ? (uint64_t)(-(sy + 1)) + 1 : y,
			       sgn && sy < 0, sgn, w);
		return USC_OK;
	default:
		return unsupported(op, t, err);
	}
}

/* ------------------------------------------------------------- apply */

static usc_status apply1(ref_state *s, const usc__dom_op *op,
			 const uint64_t *a, uint64_t *out, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;

	switch (op->op) {
	case USC_HLO_OP_SELECT:
		*out = (a[0] & 1) ? a[1] : a[2];
		return USC_OK;
	case USC_HLO_OP_CLAMP: {
		/* XLA: clamp(lo, x, hi) = min(max(x, lo), hi). */
		usc__dom_op mm = *op;
		uint64_t t[2], r;
		usc_status st;

		mm.nargs = 2;
		mm.arg[0] = op->arg[1];
		mm.arg[1] = op->arg[1];
		mm.op = USC_HLO_OP_MAXIMUM;
		t[0] = a[1];
		t[1] = a[0];
		st = apply1(s, &mm, t, &r, err);
		if (st != USC_OK)
			return st;
		mm.op = USC_HLO_OP_MINIMUM;
		t[0] = r;
		t[1] = a[2];
		return apply1(s, &mm, t, out, err);
	}
	case USC_HLO_OP_COMPARE:
		return compare(op, a[0], a[1], out);
	case USC_HLO_OP_CONVERT:
		return convert(op, a[0], out, err);
	case USC_HLO_OP_BITCAST_CONVERT:
		if (usc__dom_width(op->result) != usc__dom_width(at))
			return unsupported(op, op->result, err);
		*out = a[0] & usc__dom_mask(usc__dom_width(at));
		return USC_OK;
	case USC_HLO_OP_REDUCE_PRECISION:
		return reduce_precision(op, a[0], out, err);
	default:
		break;
	}
	if (usc_dtype_is_float(at))
		return float_op(s, op, a, out, err);
	if (usc_dtype_is_integer(at) || at == USC_PRED)
		return int_op(op, a, out, err);
	return unsupported(op, at, err);
}

static usc_status ref_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	ref_state *s = state;
	uint64_t *o = out;
	uint64_t a[USC__DOM_MAX_ARGS] = {0, 0, 0};
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	for (i = 0; i < n; i++) {
		usc_status st;

		for (k = 0; k < op->nargs; k++) {
			const uint64_t *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? v[0] : v[i];
		}
		st = apply1(s, op, a, &o[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* ------------------------------------------------- loads and outputs */

static usc_status ref_load(void *state, usc_dtype t, uint64_t bits,
			   void *out, usc_error *err)
{
	(void)state;
	(void)err;
	*(uint64_t *)out = bits & usc__dom_mask(usc__dom_width(t));
	return USC_OK;
}

static usc_status ref_constant(void *state, usc_dtype t,
			       const usc_hlo_scalar *s, void *out,
			       usc_error *err)
{
	uint64_t bits = 0;
	usc_status st;

	(void)state;
	if (t == USC_PRED) {
		if (strcmp(s->text, "true") == 0 || strcmp(s->text, "1") == 0)
			bits = 1;
		else if (strcmp(s->text, "false") == 0 ||
			 strcmp(s->text, "0") == 0)
			bits = 0;
		else
			return usc__fail(err, USC_EPARSE,
					 "bad pred literal '%s'", s->text);
	} else {
		/* The text as written, rounded once into the type. */
		st = usc_encode_str(t, s->text, NULL, &bits, NULL, err);
		if (st != USC_OK)
			return st;
	}
	*(uint64_t *)out = bits;
	return USC_OK;
}

static usc_status ref_to_output(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err)
{
	(void)state;
	(void)enclosure;
	(void)err;
	*bits = *(const uint64_t *)v & usc__dom_mask(usc__dom_width(t));
	return USC_OK;
}

static bool ref_is_true(void *state, const void *v)
{
	(void)state;
	return (*(const uint64_t *)v & 1) != 0;
}

static usc_status ref_to_index(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err)
{
	const usc_format *f = usc_format_of(t);
	uint64_t b = *(const uint64_t *)v;

	(void)state;
	if (!f || (f->kind != USC_KIND_SINT && f->kind != USC_KIND_UINT &&
		   f->kind != USC_KIND_PRED))
		return usc__fail(err, USC_EINVAL,
				 "an index must be an integer, not %s",
				 usc_dtype_name(t));
	if (f->kind == USC_KIND_SINT)
		*out = sext(b, f->bits);
	else {
		b &= usc__dom_mask(f->bits);
		*out = b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)b;
	}
	return USC_OK;
}

const usc__domain_ops usc__domain_reference = {
	.name = "reference",
	.value_size = sizeof(uint64_t),
	.create = ref_create,
	.destroy = ref_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = ref_load,
	.constant = ref_constant,
	.apply = ref_apply,
	.to_output = ref_to_output,
	.is_true = ref_is_true,
	.to_index = ref_to_index,
};
