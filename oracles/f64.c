/*
 * Plain f64 (internal): the baseline domain of the tier's speed goal
 * (issue 4: "plain f64 evaluation by the same evaluator").  Every float
 * value is a double, every float op is the native double operation or
 * the libm call, nothing rounds to the declared types, nothing is
 * certified.  Integer and pred values are their exact encodings, as in the
 * tier and the oracle.  docs/tier.md, "Plain f64", says what it is for.
 *
 * A value is one uint64_t: the IEEE binary64 bits of the double for a
 * float type, the encoding itself for an integer or pred type.  Because a
 * float value is an f64 encoding, every op this file does not compute in
 * line (compare, clamp, the converts that touch integers) is the
 * reference domain's op with its float types read as f64, which is then
 * the hardware's own double semantics.  Integer and pred ops go to the
 * reference domain whole.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "domain.h"
#include "tier.h"

static double get(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof d);
	return d;
}

static uint64_t put(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof b);
	return b;
}

static uint64_t mask_of(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);
	int w = f ? f->bits : 64;

	return w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
}

static double logistic_d(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double rsqrt_d(double x)
{
	return 1.0 / sqrt(x);
}

static double sign_d(double x)
{
	/* sign(+-0) = +-0 and sign(NaN) = NaN, as in XLA. */
	if (x == 0 || isnan(x))
		return x;
	return x > 0 ? 1.0 : -1.0;
}

static double neg_d(double x)
{
	return -x;
}

typedef double (*dfn1)(double);

/* The double function of a unary float op, NULL when there is none. */
static dfn1 unary_d(usc_hlo_opcode o)
{
	switch (o) {
	case USC_HLO_OP_NEGATE: return neg_d;
	case USC_HLO_OP_ABS: return fabs;
	case USC_HLO_OP_SIGN: return sign_d;
	case USC_HLO_OP_FLOOR: return floor;
	case USC_HLO_OP_CEIL: return ceil;
	case USC_HLO_OP_ROUND_NEAREST_AFZ: return round;
	/* rint rounds ties to even in the default rounding mode. */
	case USC_HLO_OP_ROUND_NEAREST_EVEN: return rint;
	case USC_HLO_OP_SQRT: return sqrt;
	case USC_HLO_OP_RSQRT: return rsqrt_d;
	case USC_HLO_OP_CBRT: return cbrt;
	case USC_HLO_OP_EXPONENTIAL: return exp;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return expm1;
	case USC_HLO_OP_LOG: return log;
	case USC_HLO_OP_LOG_PLUS_ONE: return log1p;
	case USC_HLO_OP_LOGISTIC: return logistic_d;
	case USC_HLO_OP_TANH: return tanh;
	case USC_HLO_OP_ERF: return erf;
	case USC_HLO_OP_SINE: return sin;
	case USC_HLO_OP_COSINE: return cos;
	case USC_HLO_OP_TAN: return tan;
	case USC_HLO_OP_ACOS: return acos;
	case USC_HLO_OP_ASIN: return asin;
	case USC_HLO_OP_ATAN: return atan;
	case USC_HLO_OP_ACOSH: return acosh;
	case USC_HLO_OP_ASINH: return asinh;
	case USC_HLO_OP_ATANH: return atanh;
	case USC_HLO_OP_COSH: return cosh;
	case USC_HLO_OP_SINH: return sinh;
	default: return NULL;
	}
}

/* XLA's maximum and minimum: NaN propagates, max(-0, +0) = +0. */
static double maxmin_d(bool is_max, double x, double y)
{
	if (isnan(x) || isnan(y))
		return x + y;
	if (x == y)
		return (signbit(x) != 0) == is_max ? y : x;
	return (x > y) == is_max ? x : y;
}

/* The op with every float type read as f64 (for the reference domain). */
static usc__dom_op as_f64(const usc__dom_op *op)
{
	usc__dom_op r = *op;
	unsigned k;

	if (usc_dtype_is_float(r.result))
		r.result = USC_F64;
	for (k = 0; k < r.nargs && k < USC__DOM_MAX_ARGS; k++)
		if (usc_dtype_is_float(r.arg[k]))
			r.arg[k] = USC_F64;
	return r;
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	return usc__dom_unsupported("f64", op, op->result, err);
}

/* bitcast-convert: the operand's encoding in its own type, reread. */
static usc_status bitcast(const usc__dom_op *op, size_t n, uint64_t *o,
			  const uint64_t *x, size_t sx, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	size_t i;

	if (usc_format_of(from)->bits != usc_format_of(to)->bits)
		return unsupported(op, err);
	for (i = 0; i < n; i++) {
		uint64_t b = x[i * sx];

		/* A float operand is a double: its nearest code in from. */
		if (usc_dtype_is_float(from) &&
		    usc_encode_double(from, get(b), NULL, &b, NULL) != USC_OK)
			return usc__fail(err, USC_EINVAL,
					 "f64: cannot encode into %s",
					 usc_dtype_name(from));
		b &= mask_of(from);
		if (usc_dtype_is_float(to)) {
			double d;

			if (usc_decode_double(to, b, &d) != USC_OK)
				return usc__fail(err, USC_EINVAL,
						 "f64: cannot decode %s",
						 usc_dtype_name(to));
			b = put(d);
		}
		o[i] = b;
	}
	return USC_OK;
}

static usc_status f64_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	uint64_t *o = out;
	const uint64_t *x = op->nargs > 0 ? args[0] : NULL;
	const uint64_t *y = op->nargs > 1 ? args[1] : NULL;
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1;
	usc_dtype at = op->nargs ? op->arg[0] : op->result;
	bool flt = usc_dtype_is_float(at);
	usc__dom_op fop;
	size_t i;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	switch (op->op) {
	case USC_HLO_OP_CONVERT:
		if (flt && usc_dtype_is_float(op->result)) {
			/* No rounding to the declared type. */
			for (i = 0; i < n; i++)
				o[i] = x[i * sx];
			return USC_OK;
		}
		break;
	case USC_HLO_OP_REDUCE_PRECISION:
		/* As in the tier: no quantization. */
		for (i = 0; i < n; i++)
			o[i] = x[i * sx];
		return USC_OK;
	case USC_HLO_OP_BITCAST_CONVERT:
		return bitcast(op, n, o, x, sx, err);
	case USC_HLO_OP_IS_FINITE:
		if (!flt)
			break;
		for (i = 0; i < n; i++)
			o[i] = isfinite(get(x[i * sx])) ? 1 : 0;
		return USC_OK;
	case USC_HLO_OP_SELECT:
	case USC_HLO_OP_CLAMP:
	case USC_HLO_OP_COMPARE:
		break;
	default:
		if (!flt)
			break;
		if (op->nargs == 1) {
			dfn1 f = unary_d(op->op);

			if (!f)
				return unsupported(op, err);
			for (i = 0; i < n; i++)
				o[i] = put(f(get(x[i * sx])));
			return USC_OK;
		}
		if (op->nargs != 2)
			return unsupported(op, err);
		/* One loop per op: the switch is outside the loop. */
#define LOOP2(expr)                                                          \
	for (i = 0; i < n; i++) {                                            \
		double a = get(x[i * sx]), b = get(y[i * sy]);               \
		o[i] = put(expr);                                            \
	}                                                                    \
	return USC_OK
		switch (op->op) {
		case USC_HLO_OP_ADD: LOOP2(a + b);
		case USC_HLO_OP_SUBTRACT: LOOP2(a - b);
		case USC_HLO_OP_MULTIPLY: LOOP2(a * b);
		case USC_HLO_OP_DIVIDE: LOOP2(a / b);
		case USC_HLO_OP_REMAINDER: LOOP2(fmod(a, b));
		case USC_HLO_OP_POWER: LOOP2(pow(a, b));
		case USC_HLO_OP_ATAN2: LOOP2(atan2(a, b));
		case USC_HLO_OP_MAXIMUM: LOOP2(maxmin_d(true, a, b));
		case USC_HLO_OP_MINIMUM: LOOP2(maxmin_d(false, a, b));
		default: return unsupported(op, err);
		}
#undef LOOP2
	}
	/*
	 * Everything else (integer and pred ops, select, clamp, compare, the
	 * converts that touch an integer or pred) is the reference domain's
	 * op on the same bits, float types read as f64.
	 */
	fop = as_f64(op);
	return usc__domain_reference.apply(state, &fop, n, out, args,
					   scalar_args, err);
}

/* ------------------------------------------------ state and values */

/* The state is the reference domain's, for the ops delegated to it. */
static usc_status f64_create(void **state, usc_error *err)
{
	return usc__domain_reference.create(state, err);
}

static void f64_destroy(void *state)
{
	usc__domain_reference.destroy(state);
}

static usc_status f64_load(void *state, usc_dtype t, uint64_t bits,
			   void *out, usc_error *err)
{
	double d;

	(void)state;
	if (!usc_dtype_is_float(t)) {
		*(uint64_t *)out = bits & mask_of(t);
		return USC_OK;
	}
	if (usc_decode_double(t, bits, &d) != USC_OK)
		return usc__fail(err, USC_EINVAL, "f64: cannot decode %s",
				 usc_dtype_name(t));
	*(uint64_t *)out = put(d);
	return USC_OK;
}

/* A constant is the encoding its text denotes in its type, as a double. */
static usc_status f64_constant(void *state, usc_dtype t,
			       const usc_hlo_scalar *sc, void *out,
			       usc_error *err)
{
	uint64_t bits = 0;
	usc_status st;

	st = usc__domain_reference.constant(state, t, sc, &bits, err);
	if (st != USC_OK)
		return st;
	return f64_load(state, t, bits, out, err);
}

/* The double rounded to nearest-even into t; integers as they are. */
static usc_status f64_to_output(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err)
{
	uint64_t b = *(const uint64_t *)v;
	usc_status st;

	(void)state;
	(void)enclosure;
	if (!usc_dtype_is_float(t)) {
		*bits = b & mask_of(t);
		return USC_OK;
	}
	st = usc_encode_double(t, get(b), NULL, bits, NULL);
	if (st != USC_OK)
		return usc__fail(err, st, "f64: cannot encode into %s",
				 usc_dtype_name(t));
	return USC_OK;
}

/*
 * The array entries (domain.h): f64_load and f64_to_output element by
 * element, without the per-element calls through the domain table and
 * the tensor accessors.
 */
static usc_status f64_load_array(void *state, usc_dtype t, const void *enc,
				 size_t n, void *out, usc_error *err)
{
	size_t i, c = (size_t)usc_format_of(t)->container_bytes;
	uint64_t *r = out;
	usc_status st;

	for (i = 0; i < n; i++) {
		st = f64_load(state, t, usc__dom_get_enc(enc, c, i), &r[i],
			      err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status f64_to_output_array(void *state, usc_dtype t,
				      const void *values, size_t n, void *enc,
				      usc_error *err)
{
	size_t i, c = (size_t)usc_format_of(t)->container_bytes;
	const uint64_t *v = values;
	usc_status st;

	for (i = 0; i < n; i++) {
		uint64_t bits;

		st = f64_to_output(state, t, &v[i], &bits, NULL, err);
		if (st != USC_OK)
			return st;
		usc__dom_put_enc(enc, c, i, bits);
	}
	return USC_OK;
}

static bool f64_is_true(void *state, const void *v)
{
	(void)state;
	return (*(const uint64_t *)v & 1) != 0;
}

static usc_status f64_to_index(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err)
{
	return usc__domain_reference.to_index(state, t, v, out, err);
}

/* Float-to-float converts and reduce-precision copy (f64_apply). */
static bool f64_identity(void *state, const usc__dom_op *op)
{
	(void)state;
	if (op->nargs != 1)
		return false;
	return op->op == USC_HLO_OP_REDUCE_PRECISION ||
	       (op->op == USC_HLO_OP_CONVERT && usc_dtype_is_float(op->arg[0]) &&
		usc_dtype_is_float(op->result));
}

const usc__domain_ops usc__domain_f64 = {
	.name = "f64",
	.value_size = sizeof(uint64_t),
	.create = f64_create,
	.destroy = f64_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = f64_load,
	.constant = f64_constant,
	.apply = f64_apply,
	.to_output = f64_to_output,
	.is_true = f64_is_true,
	.to_index = f64_to_index,
	.matmul = NULL,
	.identity = f64_identity,
	.load_array = f64_load_array,
	.to_output_array = f64_to_output_array,
};
