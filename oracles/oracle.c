/*
 * The certified oracle domain: every float element is an MPFI interval
 * that contains the exact real value of the function the kernel denotes.
 *
 * Soundness rests on three facts.  MPFI's functions return intervals
 * rounded outward (Revol and Rouillier, "Motivations for an arbitrary
 * precision interval arithmetic and the MPFI library", 2005); MPFR's
 * directed roundings bound the exact value of each function it offers
 * (the functions of oracle_fns.c are built from them); and every op whose
 * result could differ in kind across its operands' enclosures (a pole, a
 * domain edge, a discontinuity, the sign of a zero) is reported UNDECIDED
 * instead of choosing.  Integer and pred values are exact encodings, and
 * integer ops are the reference domain's own exact two's complement ops.
 *
 * Point operands (an exact input, an exact intermediate) go through MPFR
 * directly with the operands' IEEE meaning (signed zeros, infinities,
 * NaN): MPFR follows IEEE 754 and C99 Annex F for special values, which
 * is what XLA's ops compute on them.  docs/oracle.md states each op.
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

void usc__oracle_options_default(usc__oracle_options *opt)
{
	opt->precision = USC__ORACLE_PREC_DEFAULT;
	opt->quantize = false;
	opt->round_only = NULL;
	opt->round_only_count = 0;
}

usc_status usc__oracle_set_precision(void *state, mpfr_prec_t prec,
				     usc_error *err)
{
	orc_state *s = state;

	if (prec < USC__ORACLE_PREC_MIN || prec > USC__ORACLE_PREC_MAX)
		return usc__fail(err, USC_EINVAL,
				 "oracle precision %ld outside [%d, %d] bits",
				 (long)prec, USC__ORACLE_PREC_MIN,
				 USC__ORACLE_PREC_MAX);
	s->prec = prec;
	return USC_OK;
}

usc_status usc__oracle_configure(void *state, const usc__oracle_options *opt,
				 usc_error *err)
{
	orc_state *s = state;
	usc_status st = usc__oracle_set_precision(state, opt->precision, err);

	if (st != USC_OK)
		return st;
	s->quantize = opt->quantize;
	s->round_only = opt->round_only;
	s->round_only_count = opt->round_only ? opt->round_only_count : 0;
	return USC_OK;
}

mpfr_prec_t usc__oracle_precision(const void *state)
{
	return ((const orc_state *)state)->prec;
}

static usc_status orc_create(void **state, usc_error *err)
{
	orc_state *s = usc__calloc(1, sizeof *s);
	usc_status st;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__domain_reference.create(&s->ref, err);
	if (st != USC_OK) {
		usc__free(s);
		return st;
	}
	s->prec = USC__ORACLE_PREC_DEFAULT;
	mpfr_inits2(64, s->a, s->b, s->lo, s->hi, s->t, (mpfr_ptr)0);
	mpfi_init2(s->ia, 64);
	mpfi_init2(s->ib, 64);
	*state = s;
	return USC_OK;
}

static void orc_destroy(void *state)
{
	orc_state *s = state;

	if (!s)
		return;
	usc__domain_reference.destroy(s->ref);
	mpfr_clears(s->a, s->b, s->lo, s->hi, s->t, (mpfr_ptr)0);
	mpfi_clear(s->ia);
	mpfi_clear(s->ib);
	usc__free(s);
}

static void orc_init(void *state, void *values, size_t n)
{
	orc_state *s = state;
	value *v = values;
	size_t i;

	for (i = 0; i < n; i++) {
		mpfi_init2(v[i].x, s->prec);
		mpfi_set_ui(v[i].x, 0);
		v[i].bits = 0;
		v[i].kind = USC__ORC_FINITE;
		v[i].flags = 0;
	}
}

static void orc_clear(void *state, void *values, size_t n)
{
	value *v = values;
	size_t i;

	(void)state;
	for (i = 0; i < n; i++)
		mpfi_clear(v[i].x);
}

/* Copies exactly: the destination takes the source's precision. */
void usc__orc_vcopy(value *d, const value *src)
{
	if (mpfi_get_prec(d->x) != mpfi_get_prec(src->x))
		mpfi_set_prec(d->x, mpfi_get_prec(src->x));
	mpfi_set(d->x, src->x);
	d->bits = src->bits;
	d->kind = src->kind;
	d->flags = src->flags;
}

static void orc_copy(void *state, void *dst, const void *src, size_t n)
{
	value *d = dst;
	const value *sv = src;
	size_t i;

	(void)state;
	for (i = 0; i < n; i++)
		usc__orc_vcopy(&d[i], &sv[i]);
}

bool usc__oracle_is_undecided(const void *v)
{
	return ((const value *)v)->kind == USC__ORC_UNDECIDED;
}

size_t usc__oracle_count_undecided(const void *values, size_t n)
{
	const value *v = values;
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i].kind == USC__ORC_UNDECIDED;
	return c;
}

/* ------------------------------------------------------------ helpers */

void usc__orc_set_kind(value *v, usc__oracle_kind k)
{
	v->kind = (unsigned char)k;
	v->flags = 0;
}

void usc__orc_set_undecided(value *v)
{
	usc__orc_set_kind(v, USC__ORC_UNDECIDED);
}

/* Resets v to the working precision for a fresh result. */
void usc__orc_prep(orc_state *s, value *v)
{
	if (mpfi_get_prec(v->x) != s->prec)
		mpfi_set_prec(v->x, s->prec);
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
	v->bits = 0;
}

bool usc__orc_is_point(const value *v)
{
	return v->kind != USC__ORC_FINITE ||
	       mpfr_equal_p(&v->x->left, &v->x->right);
}

bool usc__orc_is_zero_point(const value *v)
{
	return v->kind == USC__ORC_FINITE && mpfr_zero_p(&v->x->left) &&
	       mpfr_zero_p(&v->x->right);
}

/* Whether a finite value's enclosure holds 0. */
bool usc__orc_has_zero(const value *v)
{
	return mpfr_sgn(&v->x->left) <= 0 && mpfr_sgn(&v->x->right) >= 0;
}

/*
 * The sign of the value where it is determined: -1, 0 (unknown: the
 * enclosure straddles 0 or is a zero of unknown sign), +1.  A zero counts
 * by its sign bit, as IEEE's sign rules do.
 */
int usc__orc_sign_of(const value *v)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: return 1;
	case USC__ORC_NEG_INF: return -1;
	case USC__ORC_FINITE: break;
	default: return 0;
	}
	if (usc__orc_is_zero_point(v)) {
		if (v->flags & USC__ORC_ZSIGN_UNKNOWN)
			return 0;
		return (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1;
	}
	if (mpfr_sgn(&v->x->left) > 0)
		return 1;
	if (mpfr_sgn(&v->x->right) < 0)
		return -1;
	return 0;
}

/* Makes r the point zero whose sign is that of sign s (0: unknown). */
void usc__orc_set_zero(orc_state *s, value *r, int sgn)
{
	usc__orc_prep(s, r);
	mpfi_set_ui(r->x, 0);
	r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
			   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/*
 * A point zero result takes its sign from sgn (-1, 0 unknown, +1); any
 * other result needs no zero flags.
 */
void usc__orc_fix_zero(value *r, int sgn)
{
	r->flags = 0;
	if (r->kind == USC__ORC_FINITE && mpfr_zero_p(&r->x->left) &&
	    mpfr_zero_p(&r->x->right))
		r->flags = sgn < 0 ? USC__ORC_NEG_ZERO
				   : sgn == 0 ? USC__ORC_ZSIGN_UNKNOWN : 0;
}

/* The IEEE point value of a point v into m (precision raised to fit). */
void usc__orc_point_to_mpfr(const value *v, mpfr_ptr m)
{
	switch (v->kind) {
	case USC__ORC_POS_INF: mpfr_set_inf(m, 1); return;
	case USC__ORC_NEG_INF: mpfr_set_inf(m, -1); return;
	case USC__ORC_NAN: mpfr_set_nan(m); return;
	default: break;
	}
	mpfr_set_prec(m, mpfr_get_prec(&v->x->left));
	mpfr_set(m, &v->x->left, MPFR_RNDN);
	if (mpfr_zero_p(m))
		mpfr_set_zero(m, (v->flags & USC__ORC_NEG_ZERO) ? -1 : 1);
}

void usc__oracle_value_set_interval(usc__oracle_value *v, mpfr_srcptr lo,
				    mpfr_srcptr hi)
{
	mpfr_prec_t p = mpfr_get_prec(lo) > mpfr_get_prec(hi)
				? mpfr_get_prec(lo)
				: mpfr_get_prec(hi);

	if (p < USC__ORACLE_PREC_MIN)
		p = USC__ORACLE_PREC_MIN;
	if (mpfi_get_prec(v->x) < p)
		mpfi_set_prec(v->x, p);
	mpfi_interv_fr(v->x, lo, hi);
	v->kind = USC__ORC_FINITE;
	v->flags = 0;
	if (mpfr_zero_p(lo) && mpfr_zero_p(hi) && mpfr_signbit(lo) &&
	    mpfr_signbit(hi))
		v->flags = USC__ORC_NEG_ZERO;
}

/*
 * Sets r from an exact MPFR point m: NaN, an IEEE infinity, a signed
 * zero, or a finite number (r's precision raised to hold it exactly).
 */
void usc__orc_set_point(orc_state *s, value *r, mpfr_srcptr m)
{
	usc__orc_prep(s, r);
	if (mpfr_nan_p(m)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (mpfr_inf_p(m)) {
		usc__orc_set_kind(r, mpfr_signbit(m) ? USC__ORC_NEG_INF
					    : USC__ORC_POS_INF);
		return;
	}
	if (mpfr_get_prec(m) > mpfi_get_prec(r->x))
		mpfi_set_prec(r->x, mpfr_get_prec(m));
	mpfi_set_fr(r->x, m);
	usc__orc_fix_zero(r, mpfr_signbit(m) ? -1 : 1);
}

/*
 * f(x[, y]) of point operands with their IEEE meaning, through MPFR: the
 * results rounded down and up enclose the exact value.  An infinite
 * result is IEEE's Inf only when MPFR raised no overflow (a pole, an
 * infinite operand); after an overflow it is the finite real beyond the
 * exponent range.  An exact zero takes the sign MPFR gives it under
 * round-to-nearest, IEEE's rule (x - x = +0).
 */
void usc__orc_eval_points(orc_state *s, value *r, mpfr_fn1 f1, mpfr_fn2 f2,
			  const value *x, const value *y)
{
	int td, tu;
	bool ovf;

	usc__orc_point_to_mpfr(x, s->a);
	if (y)
		usc__orc_point_to_mpfr(y, s->b);
	usc__orc_prep(s, r);
	mpfr_set_prec(s->lo, s->prec);
	mpfr_set_prec(s->hi, s->prec);
	mpfr_clear_flags();
	td = f1 ? f1(s->lo, s->a, MPFR_RNDD) : f2(s->lo, s->a, s->b, MPFR_RNDD);
	tu = f1 ? f1(s->hi, s->a, MPFR_RNDU) : f2(s->hi, s->a, s->b, MPFR_RNDU);
	ovf = mpfr_overflow_p() != 0;
	if (mpfr_nan_p(s->lo) || mpfr_nan_p(s->hi)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (mpfr_inf_p(s->lo) && mpfr_inf_p(s->hi) && !ovf &&
	    mpfr_signbit(s->lo) == mpfr_signbit(s->hi)) {
		usc__orc_set_kind(r, mpfr_signbit(s->lo) ? USC__ORC_NEG_INF
						 : USC__ORC_POS_INF);
		return;
	}
	if (td == 0 && tu == 0 && mpfr_zero_p(s->lo)) {
		int neg;

		mpfr_set_prec(s->t, s->prec);
		if (f1)
			f1(s->t, s->a, MPFR_RNDN);
		else
			f2(s->t, s->a, s->b, MPFR_RNDN);
		neg = mpfr_signbit(s->t) != 0;
		usc__orc_set_zero(s, r, neg ? -1 : 1);
		return;
	}
	/*
	 * A finite real: an overflow bound rounded down is MPFR's largest
	 * number, and one rounded up is +Inf, "beyond"; both are sound.
	 */
	mpfi_interv_fr(r->x, s->lo, s->hi);
	usc__orc_fix_zero(r, 1);
}

/* ----------------------------------------------------------- apply */

/* An op on integer and pred operands: the reference domain's exact op. */
static usc_status delegate(orc_state *s, const usc__dom_op *op, value *r,
			   const value *const *a, usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;

	usc__orc_prep(s, r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->kind == USC__ORC_UNDECIDED) {
			usc__orc_set_undecided(r);
			return USC_OK;
		}
		args[k] = &a[k]->bits;
	}
	return usc__domain_reference.apply(s->ref, op, 1, &r->bits, args, 0,
					   err);
}

/* Whether two decided values are the same point (kind, value, zero sign). */
static bool same_point(const value *x, const value *y, bool flt)
{
	if (x->kind == USC__ORC_UNDECIDED || x->kind != y->kind)
		return false;
	if (!flt)
		return x->bits == y->bits;
	if (x->kind != USC__ORC_FINITE)
		return true;
	return usc__orc_is_point(x) && usc__orc_is_point(y) &&
	       mpfr_equal_p(&x->x->left, &y->x->left) &&
	       x->flags == y->flags && !(x->flags & USC__ORC_ZSIGN_UNKNOWN);
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	return usc__dom_unsupported("oracle", op, op->result, err);
}

static usc_status apply1(orc_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;

	switch (op->op) {
	case USC_HLO_OP_SELECT: {
		bool flt = usc_dtype_is_float(op->result);

		if (a[0]->kind == USC__ORC_UNDECIDED) {
			/* Undecided unless both branches are the same point. */
			if (same_point(a[1], a[2], flt))
				usc__orc_vcopy(r, a[1]);
			else {
				usc__orc_prep(s, r);
				usc__orc_set_undecided(r);
			}
			return USC_OK;
		}
		usc__orc_vcopy(r, (a[0]->bits & 1) ? a[1] : a[2]);
		return USC_OK;
	}
	case USC_HLO_OP_CLAMP: {
		/* XLA: clamp(lo, x, hi) = min(max(x, lo), hi). */
		value m;

		if (!usc_dtype_is_float(op->arg[1]))
			return delegate(s, op, r, a, err);
		mpfi_init2(m.x, s->prec);
		usc__orc_maxmin(s, &m, true, a[1], a[0]);
		usc__orc_maxmin(s, r, false, &m, a[2]);
		mpfi_clear(m.x);
		return USC_OK;
	}
	case USC_HLO_OP_COMPARE:
		if (!usc_dtype_is_float(at))
			return delegate(s, op, r, a, err);
		usc__orc_prep(s, r);
		usc__orc_compare_float(op, r, a[0], a[1]);
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		usc__orc_prep(s, r);
		if (a[0]->kind == USC__ORC_UNDECIDED)
			usc__orc_set_undecided(r);
		else
			r->bits = a[0]->kind == USC__ORC_FINITE;
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		return usc__orc_convert(s, op, r, a[0], err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return usc__orc_bitcast(s, op, r, a[0], err);
	case USC_HLO_OP_REDUCE_PRECISION:
		usc__orc_prep(s, r);
		return usc__orc_reduce_precision(s, op, r, a[0], err);
	default:
		break;
	}
	if (!usc_dtype_is_float(at))
		return delegate(s, op, r, a, err);
	if (op->nargs == 1) {
		if (usc__orc_unary(s, op, r, a[0]) != USC_OK)
			return unsupported(op, err);
		return USC_OK;
	}
	if (op->nargs == 2 && (usc__orc_binary_mpfr(op->op) ||
			       op->op == USC_HLO_OP_MAXIMUM ||
			       op->op == USC_HLO_OP_MINIMUM)) {
		usc__orc_binary(s, op, r, a[0], a[1]);
		return USC_OK;
	}
	return unsupported(op, err);
}

/* ----------------------------------------- attribution's rounding */

/* Whether op's result rounds under round_only (oracle.h). */
static bool rounds_here(const orc_state *s, const usc__dom_op *op)
{
	size_t i;

	if (!s->round_only_count || !op->instr ||
	    !usc_dtype_is_float(op->result))
		return false;
	for (i = 0; i < s->round_only_count; i++)
		if (s->round_only[i] == op->instr)
			return true;
	return false;
}

/*
 * Rounds a finite value nearest-even into the float type t, the format's
 * own overflow policy included, as the reference rounds an op's result.
 * Where the enclosure straddles a rounding boundary the certificate is
 * lost anyway, so the midpoint rounds: attribution reports midpoints.
 */
static usc_status round_to_type(orc_state *s, usc_dtype t, value *r,
				usc_error *err)
{
	bool decided;
	uint64_t bits;
	usc_status st;

	if (r->kind != USC__ORC_FINITE)
		return USC_OK;
	st = usc__oracle_decide_rounding(r, t, &decided, &bits, err);
	if (st != USC_OK)
		return st;
	if (!decided) {
		mpfr_set_prec(s->a, mpfi_get_prec(r->x));
		mpfi_mid(s->a, r->x);
		(void)usc_encode_mpfr(t, s->a, NULL, &bits, NULL);
	}
	return usc__orc_load_bits(s, t, bits, r, err);
}

static usc_status orc_apply(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err)
{
	orc_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	usc__mpfr_range range;
	usc_status st = USC_OK;
	bool round = rounds_here(s, op);
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	usc__mpfr_range_widen(&range);
	for (i = 0; i < n && st == USC_OK; i++) {
		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		st = apply1(s, op, &o[i], a, err);
		if (st == USC_OK && round)
			st = round_to_type(s, op->result, &o[i], err);
	}
	usc__mpfr_range_restore(&range);
	return st;
}

/* ------------------------------------------------ loads and outputs */

static usc_status orc_load(void *state, usc_dtype t, uint64_t bits,
			   void *out, usc_error *err)
{
	orc_state *s = state;
	usc__mpfr_range range;
	usc_status st;

	usc__mpfr_range_widen(&range);
	st = usc__orc_load_bits(s, t, bits, out, err);
	usc__mpfr_range_restore(&range);
	return st;
}

/*
 * A constant's element is the encoding of its declared type that the
 * text denotes (rounded once, nearest-even): the kernel's data, which the
 * compiler stores in that type, not a real number the text merely
 * approximates.
 */
static usc_status orc_constant(void *state, usc_dtype t,
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
	return orc_load(state, t, bits, out, err);
}

static usc_status orc_to_output(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err)
{
	orc_state *s = state;
	const value *x = v;
	usc__oracle_enclosure *e = enclosure;
	usc__mpfr_range range;
	usc_status st = USC_OK;
	bool decided = false;
	uint64_t rb = 0;

	usc__mpfr_range_widen(&range);
	if (e) {
		memset(e, 0, sizeof *e);
		e->kind = (usc__oracle_kind)x->kind;
		e->flags = x->flags;
		e->prec = (long)s->prec;
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
		usc__mpfr_range_restore(&range);
		return USC_OK;
	}
	st = usc__oracle_decide_rounding(x, t, &decided, &rb, err);
	if (st != USC_OK)
		goto done;
	if (decided)
		*bits = rb;
	else if (x->kind == USC__ORC_FINITE) {
		/* The midpoint, rounded to nearest: a best guess, not certified. */
		mpfr_set_prec(s->t, mpfi_get_prec(x->x) + 1);
		mpfi_mid(s->t, x->x);
		if (!mpfr_number_p(s->t))
			mpfr_set(s->t, mpfr_inf_p(&x->x->left) ? &x->x->right
							       : &x->x->left,
				 MPFR_RNDN);
		st = usc_encode_mpfr(t, s->t, NULL, bits, NULL);
	} else {
		usc_float_info fi;

		(void)usc_float_info_of(t, &fi);
		*bits = fi.nan_bits;
	}
	if (e) {
		e->rounded = decided;
		e->rounded_bits = rb;
		if (x->kind == USC__ORC_FINITE) {
			e->lo = mpfr_get_d(&x->x->left, MPFR_RNDD);
			e->hi = mpfr_get_d(&x->x->right, MPFR_RNDU);
		} else if (x->kind == USC__ORC_POS_INF)
			e->lo = e->hi = INFINITY;
		else if (x->kind == USC__ORC_NEG_INF)
			e->lo = e->hi = -INFINITY;
		else
			e->lo = e->hi = NAN;
	}
done:
	usc__mpfr_range_restore(&range);
	if (st != USC_OK && (!err || err->code == USC_OK))
		return usc__fail(err, st, "oracle: cannot encode into %s",
				 usc_dtype_name(t));
	return st;
}

/*
 * The domain interface offers no undecided answer here: an undecided
 * pred reads false.  The interpreter's select goes through apply, which
 * keeps it undecided; docs/oracle.md notes the gap.
 */
static bool orc_is_true(void *state, const void *v)
{
	const value *x = v;

	(void)state;
	return x->kind != USC__ORC_UNDECIDED && (x->bits & 1) != 0;
}

static usc_status orc_to_index(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err)
{
	orc_state *s = state;
	const value *x = v;

	if (x->kind == USC__ORC_UNDECIDED)
		return usc__fail(err, USC_EDOMAIN,
				 "oracle: an index of type %s is undecided at "
				 "%ld bits", usc_dtype_name(t), (long)s->prec);
	return usc__domain_reference.to_index(s->ref, t, &x->bits, out, err);
}

const usc__domain_ops usc__domain_oracle = {
	.name = "oracle",
	.value_size = sizeof(usc__oracle_value),
	.create = orc_create,
	.destroy = orc_destroy,
	.init = orc_init,
	.clear = orc_clear,
	.copy = orc_copy,
	.load = orc_load,
	.constant = orc_constant,
	.apply = orc_apply,
	.to_output = orc_to_output,
	.is_true = orc_is_true,
	.to_index = orc_to_index,
};
