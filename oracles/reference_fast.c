/*
 * The fast strict reference (reference_fast.h): the reference domain's
 * values, decided in double where that is provably correct.
 *
 * Every op-element lands on one of three paths:
 *   - the arithmetic path (add, subtract, multiply, divide, sqrt): the
 *     reference domain's own method, in array loops: the operands
 *     decoded exactly into doubles, the double operation, one rounding
 *     into the declared type (the project's encoder's result, in line).  A NaN result goes
 *     to the reference domain for that element, so that its sign is the
 *     reference's however the compiler orders the operands here.
 *   - the function path (the ops of tier_fn below): the operands loaded
 *     as points into the certified tier, the tier's op giving a ball that
 *     holds the exact value, and usc__tier_decide_rounding: rounding to
 *     nearest is monotone, so when both ends of the ball (and everything
 *     between) round to one code, the exact value does too.  A result of
 *     any other kind (NaN, an infinity, undecided) or a ball across a
 *     rounding boundary is escalated: the reference domain's MPFR Ziv
 *     loop computes that element.
 *   - the exact unary path (float-to-float converts, negate, abs): the
 *     operand decoded, the exact result rounded once, as the reference
 *     does, in an array loop.
 *   - everything else: the reference domain's apply, whole.
 * The arithmetic and exact unary paths, and the function path's loads and
 * rounding decisions, run a chunk of CHUNK elements at a time in passes
 * without a branch per element (decode, operate, round), which the
 * compiler vectorizes; only a chunk that holds a NaN or an overflow gets
 * a second pass over its elements (encode_chunk).  Calls of at most SHORT
 * elements take the element-by-element code (arith_short).  The tier's
 * values and the chunks' doubles live in scratch arrays of CHUNK elements
 * made at create, so nothing is allocated per element or per op; the
 * 16-bit and 8-bit formats other than bf16 decode through a table of the
 * project's decoder's own doubles, made once per state on first use.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/rn_fast.h"

#include "domain.h"
#include "reference_fast.h"
#include "tier.h"
#include "tier_internal.h"

/* Elements of the tier's scratch arrays: a chunk of the function path. */
#define CHUNK 512

/* Calls of at most this many elements take the element-by-element code. */
#define SHORT 4

typedef struct fref_state {
	void *ref;  /* the reference domain's state: escalations, other ops */
	void *tier; /* the tier's state: the function path */
	usc__tier_value *tv[USC__DOM_MAX_ARGS + 1]; /* CHUNK each */
	double *da, *db, *dr; /* CHUNK each: the array paths' doubles */
	uint64_t *qa, *qb;    /* CHUNK each: the rounding decision's codes */
	unsigned char *done;  /* CHUNK: the elements it decided */
	int precision[USC_DTYPE_COUNT];  /* 0: not a float type */
	double *table[USC_DTYPE_COUNT];  /* decoded codes, see decode_table */
	usc__reference_fast_counts counts;
} fref_state;

static void fref_destroy(void *state)
{
	fref_state *s = state;

	if (!s)
		return;
	if (s->ref)
		usc__domain_reference.destroy(s->ref);
	if (s->tier)
		usc__domain_tier.destroy(s->tier);
	for (int k = 0; k <= USC__DOM_MAX_ARGS; k++)
		usc__free(s->tv[k]);
	usc__free(s->da);
	usc__free(s->db);
	usc__free(s->dr);
	usc__free(s->qa);
	usc__free(s->qb);
	usc__free(s->done);
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		usc__free(s->table[t]);
	usc__free(s);
}

static usc_status fref_create(void **state, usc_error *err)
{
	fref_state *s = usc__calloc(1, sizeof *s);
	usc_status st;

	*state = NULL;
	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		usc_float_info fi;

		if (usc_dtype_is_float((usc_dtype)t) &&
		    usc_float_info_of((usc_dtype)t, &fi) == USC_OK)
			s->precision[t] = fi.precision;
	}
	st = usc__domain_reference.create(&s->ref, err);
	if (st == USC_OK)
		st = usc__domain_tier.create(&s->tier, err);
	if (st != USC_OK) {
		fref_destroy(s);
		return st;
	}
	for (int k = 0; k <= USC__DOM_MAX_ARGS; k++) {
		s->tv[k] = usc__calloc(CHUNK, sizeof(usc__tier_value));
		if (!s->tv[k]) {
			fref_destroy(s);
			return usc__fail(err, USC_ENOMEM, "out of memory");
		}
	}
	s->da = usc__calloc(CHUNK, sizeof(double));
	s->db = usc__calloc(CHUNK, sizeof(double));
	s->dr = usc__calloc(CHUNK, sizeof(double));
	s->qa = usc__calloc(CHUNK, sizeof(uint64_t));
	s->qb = usc__calloc(CHUNK, sizeof(uint64_t));
	s->done = usc__calloc(CHUNK, 1);
	if (!s->da || !s->db || !s->dr || !s->qa || !s->qb || !s->done) {
		fref_destroy(s);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	*state = s;
	return USC_OK;
}

void usc__reference_fast_get_counts(const void *state,
				    usc__reference_fast_counts *out)
{
	const fref_state *s = state;

	*out = s->counts;
}

bool usc__reference_mpfr_from_env(void)
{
	const char *v = getenv("USC_REFERENCE_MPFR");

	return v && *v && strcmp(v, "0") != 0;
}

/* ------------------------------------------------------ encodings */

/*
 * The table of the doubles of every code of a float format of at most 16
 * bits (bf16 excepted, which decodes in line), made by the project's
 * decoder itself, so that a lookup is the reference domain's decode bit
 * for bit (NaNs included).  NULL for other types or when out of memory
 * (the caller then decodes element by element).
 */
static const double *decode_table(fref_state *s, usc_dtype t)
{
	int w = usc__dom_width(t);
	size_t n;
	double *tab;

	if (s->table[t] || !s->precision[t] || t == USC_BF16 ||
	    t == USC_F32 || t == USC_F64 || w > 16 || w <= 0)
		return s->table[t];
	n = (size_t)1 << w;
	tab = usc__malloc(n * sizeof *tab);
	if (!tab)
		return NULL;
	for (size_t c = 0; c < n; c++) {
		tab[c] = 0;
		(void)usc_decode_double(t, (uint64_t)c, &tab[c]);
	}
	s->table[t] = tab;
	return tab;
}

/*
 * The double the reference domain decodes code b of float type t into
 * (usc_decode_double): exact for every format here.  f32 and bf16
 * numbers widen in line (C11 6.3.1.5: exact); their NaNs take the
 * decoder, which drops the payload as the reference does.
 */
static inline double decode(usc_dtype t, const double *tab, uint64_t b)
{
	double d = 0;

	if (t == USC_F32 || t == USC_BF16) {
		uint32_t w = t == USC_F32 ? (uint32_t)b
					  : (uint32_t)(b & 0xffff) << 16;

		if ((w & 0x7f800000u) != 0x7f800000u || !(w & 0x7fffffu)) {
			float f;

			memcpy(&f, &w, sizeof f);
			return f;
		}
	} else if (t == USC_F64) {
		memcpy(&d, &b, sizeof d);
		if (!isnan(d))
			return d;
	} else if (tab)
		return tab[b & usc__dom_mask(usc__dom_width(t))];
	(void)usc_decode_double(t, b, &d);
	return d;
}

/*
 * usc_encode_double(t, d, NULL, out, NULL), the reference domain's
 * rounding of an exact double: f32 by the hardware's conversion within
 * FLT_MAX (round-to-nearest-even, C11 F.4 and 6.3.1.5, as the encoder's
 * own fast path), the other narrow formats in line up to their largest
 * finite value (src/dtype/rn_fast.h, the same bits), the library's
 * encoder for the rest (rf NULL, overflow, NaN).
 */
static inline void encode(usc_dtype t, const usc__rn_format *rf, double d,
			  uint64_t *out)
{
	if (t == USC_F32 && fabs(d) <= FLT_MAX) {
		float f = (float)d;
		uint32_t b;

		memcpy(&b, &f, sizeof b);
		*out = b;
		return;
	}
	if (!rf || !usc__rn_encode(rf, d, out))
		(void)usc_encode_double(t, d, NULL, out, NULL);
}

/* ---------------------------------------------------- escalations */

/* Element i of op through the reference domain (MPFR for a function). */
static usc_status by_reference(fref_state *s, const usc__dom_op *op,
			       size_t i, uint64_t *out,
			       const void *const *args, unsigned scalar_args,
			       usc_error *err)
{
	const void *a[USC__DOM_MAX_ARGS];

	for (unsigned k = 0; k < op->nargs; k++) {
		const uint64_t *v = args[k];

		a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
	}
	return usc__domain_reference.apply(s->ref, op, 1, &out[i], a, 0, err);
}

/* ------------------------------------------------- arithmetic path */

/*
 * Whether op is one the reference computes in double and rounds once:
 * add, subtract, multiply, divide of one float type of at most 24 bits
 * of precision (or f64), and sqrt; the reference's float_op.
 */
static bool arithmetic(const fref_state *s, const usc__dom_op *op)
{
	usc_dtype t = op->result;
	int p = s->precision[t];

	if (!p)
		return false;
	switch (op->op) {
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
	case USC_HLO_OP_DIVIDE:
		return op->nargs == 2 && op->arg[0] == t && op->arg[1] == t &&
		       (p <= 24 || t == USC_F64);
	case USC_HLO_OP_SQRT:
		return op->nargs == 1 && op->arg[0] == t &&
		       (p <= 24 || t == USC_F64);
	default:
		return false;
	}
}

/*
 * The operands of elements [i0, i0 + m) of an array of codes of float type
 * t (stride sx: 0 for a broadcast scalar) decoded into a[], a loop per
 * kind of type so that each runs without a branch per element: f32 and
 * bf16 widen (C11 6.3.1.5: exact), f64 is its bits, the tabled formats
 * read their table; the rest take the decoder element by element.  A
 * NaN code decodes to some NaN whose payload and sign do not matter:
 * every element with a NaN operand or result goes to the reference
 * domain (see encode_chunk).
 */
static void decode_chunk(usc_dtype t, const double *tab, const uint64_t *x,
			 size_t sx, size_t i0, size_t m, double *restrict a)
{
	const uint64_t *restrict p = x + i0 * sx;

	if (sx == 0) {
		/* A broadcast scalar: one decoding, copied. */
		double d = decode(t, tab, p[0]);

		for (size_t j = 0; j < m; j++)
			a[j] = d;
		return;
	}
	if (t == USC_F32 || t == USC_BF16) {
		int up = t == USC_BF16 ? 16 : 0;
		uint32_t lo = t == USC_BF16 ? 0xffffu : 0xffffffffu;

		for (size_t j = 0; j < m; j++) {
			uint32_t w = ((uint32_t)p[j] & lo) << up;
			float f;

			memcpy(&f, &w, sizeof f);
			a[j] = f;
		}
	} else if (t == USC_F64) {
		memcpy(a, p, m * sizeof *a);
	} else if (tab) {
		uint64_t mask = usc__dom_mask(usc__dom_width(t));

		for (size_t j = 0; j < m; j++)
			a[j] = tab[p[j] & mask];
	} else {
		for (size_t j = 0; j < m; j++)
			a[j] = decode(t, tab, p[j]);
	}
}

/*
 * Codes of type t of r[0..m), nearest-even, in loops without a branch
 * per element, which the compiler vectorizes (encode_chunk's first
 * pass): f32 by the hardware's conversion (C11 F.4 and 6.3.1.5), f64 its
 * own bits, the other narrow formats by usc__rn_encode_array.  Returns
 * nonzero when it left some element (a NaN or a magnitude past the
 * largest finite value, found by the borrow test of usc__rn_encode_array
 * on the magnitude's bits; every element of a type with no in-line
 * rounding), whose q[j] is then meaningless.
 */
static uint64_t encode_plain(usc_dtype t, const usc__rn_format *rf,
			     const double *restrict r, size_t m,
			     uint64_t *restrict q)
{
	uint64_t rare = 0, max_bits;
	double max;

	if (t != USC_F32 && t != USC_F64)
		return rf ? usc__rn_encode_array(rf, r, m, q) : m > 0;
	if (t == USC_F32)
		for (size_t j = 0; j < m; j++) {
			float f = (float)r[j];
			uint32_t b;

			memcpy(&b, &f, sizeof b);
			q[j] = b;
		}
	else
		memcpy(q, r, m * sizeof *q);
	/* f64: only a NaN's magnitude bits exceed +Inf's. */
	max = t == USC_F32 ? FLT_MAX : INFINITY;
	memcpy(&max_bits, &max, sizeof max_bits);
	for (size_t j = 0; j < m; j++) {
		uint64_t b;

		memcpy(&b, &r[j], sizeof b);
		rare |= (max_bits - (b & ~((uint64_t)1 << 63))) >> 63;
	}
	return rare;
}

/*
 * r[0..m) rounded into type t, nearest-even, into o[0..m): the reference
 * domain's encoding of every exact double, in a branch-free loop per
 * kind of type (f32 by the hardware's conversion, C11 F.4 and 6.3.1.5;
 * f64 its own bits; the other narrow formats by usc__rn_encode_array),
 * then a second pass over the elements that loop left, only when it left
 * any: a NaN (the operation's operand or result) goes to the reference
 * domain whole, as it did per element before, so that its sign is the
 * reference's; a magnitude past the largest finite value to the
 * library's encoder (its overflow rule is the format's).  Returns the
 * reference domain's status for the NaNs.
 */
static usc_status encode_chunk(fref_state *s, const usc__dom_op *op,
			       const usc__rn_format *rf, const double *r,
			       size_t i0, size_t m, uint64_t *o,
			       const void *const *args, unsigned scalar_args,
			       usc_error *err)
{
	usc_dtype t = op->result;
	uint64_t *q = o + i0;
	uint64_t rare = encode_plain(t, rf, r, m, q);

	if (!rare)
		return USC_OK;
	for (size_t j = 0; j < m; j++) {
		if (isnan(r[j])) {
			usc_status st = by_reference(s, op, i0 + j, o, args,
						     scalar_args, err);

			if (st != USC_OK)
				return st;
		} else if (t == USC_F64)
			continue;
		else if (!rf || !(fabs(r[j]) <= rf->max_finite) ||
			 (t == USC_F32 && !(fabs(r[j]) <= FLT_MAX)))
			encode(t, rf, r[j], &q[j]);
	}
	return USC_OK;
}

/*
 * Calls of at most SHORT elements (a reduction's body called per pair of
 * elements by the evaluator, a row's scalar): the arithmetic path
 * element by element, without the chunk loops' fixed cost; the same
 * operations and roundings (encode is the in-line rounding of
 * encode_chunk's loops, element by element, with the same fallbacks).
 */
static usc_status arith_short(fref_state *s, const usc__dom_op *op, size_t n,
			      uint64_t *o, const void *const *args,
			      unsigned scalar_args, usc_error *err)
{
	usc_dtype t = op->result;
	const double *tab = decode_table(s, t);
	const usc__rn_format *rf = usc__rn_format_of(t);
	const uint64_t *x = args[0];
	const uint64_t *y = op->nargs > 1 ? args[1] : args[0];
	size_t sx = (scalar_args & 1) ? 0 : 1, sy = (scalar_args & 2) ? 0 : 1;

	for (size_t i = 0; i < n; i++) {
		double a = decode(t, tab, x[i * sx]), b = 0, r;

		if (op->op != USC_HLO_OP_SQRT)
			b = decode(t, tab, y[i * sy]);
		switch (op->op) {
		case USC_HLO_OP_ADD: r = a + b; break;
		case USC_HLO_OP_SUBTRACT: r = a - b; break;
		case USC_HLO_OP_MULTIPLY: r = a * b; break;
		case USC_HLO_OP_DIVIDE: r = a / b; break;
		default: r = sqrt(a); break;
		}
		if (isnan(r)) {
			usc_status st = by_reference(s, op, i, o, args,
						     scalar_args, err);

			if (st != USC_OK)
				return st;
		} else if (t == USC_F64)
			memcpy(&o[i], &r, sizeof r);
		else
			encode(t, rf, r, &o[i]);
	}
	return USC_OK;
}

/*
 * The arithmetic path.  With p <= 24, the double result is the exact
 * result rounded once to 53 >= 2p + 2 bits (no overflow or underflow of
 * double is possible from two such operands), and rounding it into the
 * format gives the correctly rounded result (docs/reference.md).  f64 is
 * the hardware's correctly rounded operation; its bits are kept as they
 * are, as the reference keeps them.  A chunk at a time: the operands
 * decoded, the operation in a loop of its own (no branch, so the
 * compiler vectorizes it), the results encoded (encode_chunk).
 */
static usc_status arith_apply(fref_state *s, const usc__dom_op *op, size_t n,
			      uint64_t *o, const void *const *args,
			      unsigned scalar_args, usc_error *err)
{
	usc_dtype t = op->result;
	const double *tab = decode_table(s, t);
	const usc__rn_format *rf = usc__rn_format_of(t);
	const uint64_t *x = args[0];
	const uint64_t *y = op->nargs > 1 ? args[1] : args[0];
	size_t sx = (scalar_args & 1) ? 0 : 1, sy = (scalar_args & 2) ? 0 : 1;
	double *a = s->da, *b = s->db, *r = s->dr;

	if (n <= SHORT)
		return arith_short(s, op, n, o, args, scalar_args, err);
	for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
		size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
		usc_status st;

		decode_chunk(t, tab, x, sx, i0, m, a);
		if (op->op != USC_HLO_OP_SQRT)
			decode_chunk(t, tab, y, sy, i0, m, b);
		switch (op->op) {
		case USC_HLO_OP_ADD:
			for (size_t j = 0; j < m; j++)
				r[j] = a[j] + b[j];
			break;
		case USC_HLO_OP_SUBTRACT:
			for (size_t j = 0; j < m; j++)
				r[j] = a[j] - b[j];
			break;
		case USC_HLO_OP_MULTIPLY:
			for (size_t j = 0; j < m; j++)
				r[j] = a[j] * b[j];
			break;
		case USC_HLO_OP_DIVIDE:
			for (size_t j = 0; j < m; j++)
				r[j] = a[j] / b[j];
			break;
		default:
			for (size_t j = 0; j < m; j++)
				r[j] = sqrt(a[j]);
			break;
		}
		st = encode_chunk(s, op, rf, r, i0, m, o, args, scalar_args,
				  err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * Whether op is a float-to-float convert, or a negate or abs of a float
 * type: ops whose exact result the reference rounds once into the
 * declared type from the decoded operand (its convert and float_op).
 */
static bool exact_unary(const fref_state *s, const usc__dom_op *op)
{
	if (op->nargs != 1 || !s->precision[op->arg[0]] ||
	    !s->precision[op->result])
		return false;
	switch (op->op) {
	case USC_HLO_OP_CONVERT:
		return true;
	case USC_HLO_OP_NEGATE:
	case USC_HLO_OP_ABS:
		return op->arg[0] == op->result;
	default:
		return false;
	}
}

/*
 * Converts, negate and abs, a chunk at a time: the operands decoded
 * exactly, negated or made absolute exactly, and rounded once into the
 * declared type (encode_chunk), as the reference does; a NaN operand
 * (a NaN result here) goes to the reference for its element.
 */
static usc_status exact_unary_apply(fref_state *s, const usc__dom_op *op,
				    size_t n, uint64_t *o,
				    const void *const *args,
				    unsigned scalar_args, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const double *tab = decode_table(s, from);
	const usc__rn_format *rf = usc__rn_format_of(to);
	const uint64_t *x = args[0];
	size_t sx = (scalar_args & 1) ? 0 : 1;
	double *a = s->da;

	for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
		size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
		usc_status st;

		decode_chunk(from, tab, x, sx, i0, m, a);
		if (op->op == USC_HLO_OP_NEGATE)
			for (size_t j = 0; j < m; j++)
				a[j] = -a[j];
		else if (op->op == USC_HLO_OP_ABS)
			for (size_t j = 0; j < m; j++)
				a[j] = fabs(a[j]);
		st = encode_chunk(s, op, rf, a, i0, m, o, args, scalar_args,
				  err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* --------------------------------------------------- function path */

/*
 * The functions the reference evaluates in its Ziv loop.  *tier says
 * whether the certified tier bounds it (docs/tier.md, "Every op's
 * bound"); the others (the inverse and hyperbolic trigonometric
 * functions the tier does not have) always go to MPFR.
 */
static bool ziv_function(usc_hlo_opcode o, bool *tier)
{
	*tier = true;
	switch (o) {
	case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE:
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE:
	case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_TANH:
	case USC_HLO_OP_ERF:
	case USC_HLO_OP_CBRT:
	case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE:
	case USC_HLO_OP_TAN:
	case USC_HLO_OP_RSQRT:
	case USC_HLO_OP_POWER:
	case USC_HLO_OP_ATAN2:
		return true;
	case USC_HLO_OP_ACOS:
	case USC_HLO_OP_ASIN:
	case USC_HLO_OP_ATAN:
	case USC_HLO_OP_ACOSH:
	case USC_HLO_OP_ASINH:
	case USC_HLO_OP_ATANH:
	case USC_HLO_OP_COSH:
	case USC_HLO_OP_SINH:
		*tier = false;
		return true;
	default:
		return false;
	}
}

/*
 * Whether op is exp or expm1 of a finite x > 710, whose exact value
 * exceeds e^710 > 2^1024 > DBL_MAX: past the largest finite value of
 * every format of at most 24 bits of precision (f32's is below 2^128),
 * where every real rounds alike, to the format's overflow result (its
 * +Inf, or NaN or the saturated value by its policy), the result of
 * rounding DBL_MAX.  The tier calls these UNDECIDED (an overflow of
 * double); kernels such as silu meet them on large inputs.
 */
static bool exp_overflows(const usc__dom_op *op, const usc__tier_value *x)
{
	return (op->op == USC_HLO_OP_EXPONENTIAL ||
		op->op == USC_HLO_OP_EXPONENTIAL_MINUS_ONE) &&
	       x->kind == USC__ORC_FINITE && x->rad == 0 && x->mid > 710.0;
}

/*
 * The tier's values of operand k's codes of type t at elements
 * [i0, i0 + m) (one for a broadcast scalar), as usc__tier_load_bits makes
 * them: for f32, bf16, f64 and the tabled formats the decoded doubles
 * (decode_chunk: the same doubles as the tier's decoder) become points
 * here, without a call per element; a NaN or an infinity, and every
 * code of the other types, takes the tier's own load.
 */
static usc_status load_operand(fref_state *s, usc_dtype t, const uint64_t *v,
			       bool scalar, size_t i0, size_t m,
			       usc__tier_value *tv, usc_error *err)
{
	const double *tab = decode_table(s, t);
	size_t cnt = scalar ? 1 : m, first = scalar ? 0 : i0;
	double *d = s->da;

	if (t != USC_F32 && t != USC_BF16 && t != USC_F64 && !tab) {
		for (size_t j = 0; j < cnt; j++) {
			usc_status st = usc__tier_load_bits(t, v[first + j],
							    &tv[j], err);

			if (st != USC_OK)
				return st;
		}
		return USC_OK;
	}
	decode_chunk(t, tab, v, 1, first, cnt, d);
	for (size_t j = 0; j < cnt; j++) {
		tv[j].mid = d[j];
		tv[j].rad = 0;
		tv[j].bits = 0;
		tv[j].kind = USC__ORC_FINITE;
		tv[j].flags = (unsigned char)((d[j] == 0 && signbit(d[j]))
						      ? USC__ORC_NEG_ZERO
						      : 0);
	}
	for (size_t j = 0; j < cnt; j++)
		if (!isfinite(d[j])) {
			usc_status st = usc__tier_load_bits(t, v[first + j],
							    &tv[j], err);

			if (st != USC_OK)
				return st;
		}
	return USC_OK;
}


/*
 * The rounding decision of the tier's balls r[0..m) into o[i0..i0 + m),
 * for the common case, as arrays: a finite ball whose outward bounds
 * (the tier's bounds(), the same doubles usc__tier_round_rn reads) lie
 * strictly on one side of 0, with no sign flag that would move them,
 * is decided when both bounds encode to one code (rounding to nearest
 * is monotone, so every real between them rounds to it too) within the
 * largest finite value.  That is usc__tier_round_rn's answer for such a
 * ball, computed with two branch-free encodings of arrays instead of two
 * calls per element.  done[j] says which elements it decided; the rest
 * (zeros, balls about 0, other kinds, rounding boundaries inside the
 * ball, overflows) take usc__tier_round_rn and the escalation.
 */
static void decide_chunk(fref_state *s, usc_dtype t, const usc__rn_format *rf,
			 const usc__tier_value *r, size_t m, uint64_t *o,
			 unsigned char *done)
{
	double *lo = s->db, *hi = s->dr;
	uint64_t *b0 = s->qa, *b1 = s->qb;

	for (size_t j = 0; j < m; j++) {
		const usc__tier_value *v = &r[j];
		double l = 0, h = 0;
		bool ok = false;

		if (v->kind == USC__ORC_FINITE) {
			bounds(v, &l, &h);
			ok = (l > 0 && !(v->flags & TIER_LT0)) ||
			     (h < 0 && !(v->flags & TIER_GT0));
		}
		lo[j] = ok ? l : NAN;
		hi[j] = ok ? h : NAN;
	}
	(void)encode_plain(t, rf, lo, m, b0);
	(void)encode_plain(t, rf, hi, m, b1);
	if (t == USC_F32 || t == USC_F64 || rf) {
		double maxf = t == USC_F64 ? DBL_MAX
			      : t == USC_F32 ? FLT_MAX : rf->max_finite;

		for (size_t j = 0; j < m; j++) {
			bool in = fabs(lo[j]) <= maxf && fabs(hi[j]) <= maxf;

			done[j] = (unsigned char)(in && b0[j] == b1[j]);
			if (done[j])
				o[j] = b0[j];
		}
	} else
		memset(done, 0, m);
}

/*
 * Elements [i0, i0 + m) of a function through the tier.  Every element
 * whose ball the tier cannot show to round to one code goes to the
 * reference domain.
 */
static usc_status tier_chunk(fref_state *s, const usc__dom_op *op,
			     size_t i0, size_t m, uint64_t *o,
			     const void *const *args, unsigned scalar_args,
			     usc_error *err)
{
	const void *targs[USC__DOM_MAX_ARGS];
	usc__tier_value *r = s->tv[USC__DOM_MAX_ARGS];
	const usc__rn_format *rf = usc__rn_format_of(op->result);
	usc_status st = USC_OK;
	bool tier_ok = true;

	for (unsigned k = 0; k < op->nargs && tier_ok; k++) {
		st = load_operand(s, op->arg[k], args[k],
				  (scalar_args >> k) & 1, i0, m, s->tv[k],
				  err);
		tier_ok = st == USC_OK;
		targs[k] = s->tv[k];
	}
	if (tier_ok) {
		st = usc__domain_tier.apply(s->tier, op, m, r, targs,
					    scalar_args, err);
		tier_ok = st == USC_OK;
	}
	if (!tier_ok && err) {
		/* The tier declined: the whole chunk goes to MPFR. */
		err->code = USC_OK;
		err->message[0] = '\0';
	}
	if (tier_ok)
		decide_chunk(s, op->result, rf, r, m, o + i0, s->done);
	else
		memset(s->done, 0, m);
	for (size_t j = 0; j < m; j++) {
		uint64_t bits = 0;

		if (s->done[j])
			continue;
		if (tier_ok && r[j].kind == USC__ORC_FINITE &&
		    usc__tier_round_rn(&r[j], op->result, rf, &bits)) {
			o[i0 + j] = bits;
			continue;
		}
		if (tier_ok && exp_overflows(op, &s->tv[0][scalar_args & 1
							     ? 0
							     : j])) {
			(void)usc_encode_double(op->result, DBL_MAX, NULL,
						&o[i0 + j], NULL);
			continue;
		}
		s->counts.escalated++;
		st = by_reference(s, op, i0 + j, o, args, scalar_args, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * The function path: every operand and the result of a float type, the
 * result of at most 24 bits of precision (the tier's ball is never
 * narrower than a few ulps of double, so it cannot decide an f64 result
 * that is not exact; those go to MPFR at once).
 */
static usc_status function_apply(fref_state *s, const usc__dom_op *op,
				 bool tier, size_t n, uint64_t *o,
				 const void *const *args,
				 unsigned scalar_args, usc_error *err)
{
	int p = s->precision[op->result];
	bool floats = p > 0;

	for (unsigned k = 0; k < op->nargs; k++)
		floats = floats && s->precision[op->arg[k]] > 0;
	if (!floats)
		return usc__domain_reference.apply(s->ref, op, n, o, args,
						   scalar_args, err);
	s->counts.functions += n;
	if (!tier || p > 24) {
		s->counts.escalated += n;
		return usc__domain_reference.apply(s->ref, op, n, o, args,
						   scalar_args, err);
	}
	for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
		size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
		usc_status st = tier_chunk(s, op, i0, m, o, args, scalar_args,
					   err);

		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* ------------------------------------------------------------ apply */

static usc_status fref_apply(void *state, const usc__dom_op *op, size_t n,
			     void *out, const void *const *args,
			     unsigned scalar_args, usc_error *err)
{
	fref_state *s = state;
	bool tier;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	if (arithmetic(s, op))
		return arith_apply(s, op, n, out, args, scalar_args, err);
	if (exact_unary(s, op))
		return exact_unary_apply(s, op, n, out, args, scalar_args,
					 err);
	if (ziv_function(op->op, &tier))
		return function_apply(s, op, tier, n, out, args, scalar_args,
				      err);
	return usc__domain_reference.apply(s->ref, op, n, out, args,
					   scalar_args, err);
}

/* ------------------------------------------- the reference's entries */

static usc_status fref_load(void *state, usc_dtype t, uint64_t bits,
			    void *out, usc_error *err)
{
	return usc__domain_reference.load(((fref_state *)state)->ref, t, bits,
					  out, err);
}

static usc_status fref_constant(void *state, usc_dtype t,
				const usc_hlo_scalar *sc, void *out,
				usc_error *err)
{
	return usc__domain_reference.constant(((fref_state *)state)->ref, t,
					      sc, out, err);
}

static usc_status fref_to_output(void *state, usc_dtype t, const void *v,
				 uint64_t *bits, void *enclosure,
				 usc_error *err)
{
	return usc__domain_reference.to_output(((fref_state *)state)->ref, t,
					       v, bits, enclosure, err);
}

static bool fref_is_true(void *state, const void *v)
{
	return usc__domain_reference.is_true(((fref_state *)state)->ref, v);
}

static usc_status fref_to_index(void *state, usc_dtype t, const void *v,
				int64_t *out, usc_error *err)
{
	return usc__domain_reference.to_index(((fref_state *)state)->ref, t, v,
					      out, err);
}

/* A value is the encoding, masked to the type's width (ref_load's). */
static usc_status fref_load_array(void *state, usc_dtype t, const void *enc,
				  size_t n, void *out, usc_error *err)
{
	size_t c = usc_format_of(t)->container_bytes;
	uint64_t m = usc__dom_mask(usc__dom_width(t)), *o = out;

	(void)state;
	(void)err;
	for (size_t i = 0; i < n; i++)
		o[i] = usc__dom_get_enc(enc, c, i) & m;
	return USC_OK;
}

/* The encoding is the value, masked (ref_to_output's). */
static usc_status fref_to_output_array(void *state, usc_dtype t,
				       const void *values, size_t n,
				       void *enc, usc_error *err)
{
	size_t c = usc_format_of(t)->container_bytes;
	uint64_t m = usc__dom_mask(usc__dom_width(t));
	const uint64_t *v = values;

	(void)state;
	(void)err;
	for (size_t i = 0; i < n; i++)
		usc__dom_put_enc(enc, c, i, v[i] & m);
	return USC_OK;
}

const usc__domain_ops usc__domain_reference_fast = {
	.name = "reference",
	.value_size = sizeof(uint64_t),
	.create = fref_create,
	.destroy = fref_destroy,
	.init = NULL,
	.clear = NULL,
	.copy = NULL,
	.load = fref_load,
	.constant = fref_constant,
	.apply = fref_apply,
	.to_output = fref_to_output,
	.is_true = fref_is_true,
	.to_index = fref_to_index,
	.load_array = fref_load_array,
	.to_output_array = fref_to_output_array,
};
