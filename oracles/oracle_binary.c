/*
 * The certified oracle's two-operand ops and comparisons
 * (oracle_internal.h): arithmetic on enclosures, max and min, remainder,
 * and the outcomes a comparison of two enclosures leaves possible
 * (docs/oracle.md).
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

/* ---------------------------------------------------------- binary */

mpfr_fn2 usc__orc_binary_mpfr(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_ADD: return mpfr_add;
	case USC_HLO_OP_SUBTRACT: return mpfr_sub;
	case USC_HLO_OP_MULTIPLY: return mpfr_mul;
	case USC_HLO_OP_DIVIDE: return mpfr_div;
	case USC_HLO_OP_REMAINDER: return mpfr_fmod;
	case USC_HLO_OP_ATAN2: return mpfr_atan2;
	case USC_HLO_OP_POWER: return mpfr_pow;
	default: return NULL;
	}
}

/* The point +-1 of sign sg, standing for a sign class of finite reals. */
static void sign_rep(orc_state *s, value *v, int sg)
{
	usc__orc_prep(s, v);
	mpfi_set_si(v->x, sg);
}

/*
 * max / min with XLA's semantics: NaN propagates; max(-0, +0) = +0 and
 * min(-0, +0) = -0.  On intervals both are taken endpoint-wise, which is
 * exact.  A point zero result takes a known sign only when every operand
 * that may supply a zero has a known sign.
 */
void usc__orc_maxmin(orc_state *s, value *r, bool is_max, const value *x,
		     const value *y)
{
	const value *o[2] = {x, y};
	int k;

	usc__orc_prep(s, r);
	if (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return;
	}
	for (k = 0; k < 2; k++) {
		const value *a = o[k], *b = o[1 - k];

		if (a->kind == (is_max ? USC__ORC_POS_INF : USC__ORC_NEG_INF)) {
			usc__orc_vcopy(r, a);
			return;
		}
		if (a->kind == (is_max ? USC__ORC_NEG_INF : USC__ORC_POS_INF)) {
			usc__orc_vcopy(r, b);
			return;
		}
	}
	{
		mpfr_prec_t p = mpfi_get_prec(x->x) > mpfi_get_prec(y->x)
					? mpfi_get_prec(x->x)
					: mpfi_get_prec(y->x);
		bool any_pos = false, any_neg = false, unknown = false;

		if (p > mpfi_get_prec(r->x))
			mpfi_set_prec(r->x, p);
		if (is_max) {
			mpfr_max(&r->x->left, &x->x->left, &y->x->left,
				 MPFR_RNDD);
			mpfr_max(&r->x->right, &x->x->right, &y->x->right,
				 MPFR_RNDU);
		} else {
			mpfr_min(&r->x->left, &x->x->left, &y->x->left,
				 MPFR_RNDD);
			mpfr_min(&r->x->right, &x->x->right, &y->x->right,
				 MPFR_RNDU);
		}
		if (mpfr_zero_p(&r->x->left))
			mpfr_set_zero(&r->x->left, 1);
		if (mpfr_zero_p(&r->x->right))
			mpfr_set_zero(&r->x->right, -1);
		if (!usc__orc_is_zero_point(r))
			return;
		for (k = 0; k < 2; k++) {
			int sg;

			if (!usc__orc_has_zero(o[k]))
				continue;
			sg = usc__orc_is_point(o[k]) ? usc__orc_sign_of(o[k])
						     : 0;
			if (sg > 0)
				any_pos = true;
			else if (sg < 0)
				any_neg = true;
			else
				unknown = true;
		}
		if (is_max)
			usc__orc_fix_zero(r, any_pos ? 1 : unknown ? 0 : -1);
		else
			usc__orc_fix_zero(r, any_neg ? -1 : unknown ? 0 : 1);
	}
}

/*
 * fmod on non-point intervals: x - n y with n = trunc(x / y) constant
 * over the box (trunc is monotone in the quotient, so equal values at the
 * quotient's endpoints fix it).  The sign of a zero result is x's.
 */
static void remainder_iv(orc_state *s, value *r, const value *x,
			 const value *y)
{
	mpfi_set_prec(s->ia, s->prec);
	mpfi_div(s->ia, x->x, y->x);
	mpfr_set_prec(s->lo, s->prec);
	mpfr_set_prec(s->hi, s->prec);
	mpfr_trunc(s->lo, &s->ia->left);
	mpfr_trunc(s->hi, &s->ia->right);
	if (!mpfr_number_p(s->lo) || !mpfr_equal_p(s->lo, s->hi)) {
		usc__orc_set_undecided(r);
		return;
	}
	mpfi_set_prec(s->ib, s->prec);
	mpfi_mul_fr(s->ib, y->x, s->lo);
	mpfi_sub(r->x, x->x, s->ib);
	usc__orc_fix_zero(r, usc__orc_sign_of(x));
}

void usc__orc_binary(orc_state *s, const usc__dom_op *op, value *r,
		     const value *x, const value *y)
{
	usc_hlo_opcode o = op->op;
	mpfr_fn2 f = usc__orc_binary_mpfr(o);
	value rep;
	int sx, sy;

	usc__orc_prep(s, r);
	if (o == USC_HLO_OP_MAXIMUM || o == USC_HLO_OP_MINIMUM) {
		usc__orc_maxmin(s, r, o == USC_HLO_OP_MAXIMUM, x, y);
		return;
	}
	/* pow(NaN, 0) = 1 and pow(1, NaN) = 1: point cases below. */
	if (o != USC_HLO_OP_POWER &&
	    (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN)) {
		usc__orc_set_kind(r, USC__ORC_NAN);
		return;
	}
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED) {
		usc__orc_set_undecided(r);
		return;
	}
	if (usc__orc_is_point(x) && usc__orc_is_point(y)) {
		usc__orc_eval_points(s, r, NULL, f, x, y);
		return;
	}
	sx = usc__orc_sign_of(x);
	sy = usc__orc_sign_of(y);
	/*
	 * One operand special, the other a non-point interval.  For add,
	 * subtract, multiply, divide and atan2 the IEEE result at an
	 * infinity depends only on the other operand's sign class (and for
	 * add and subtract not even on that), so one representative of the
	 * class decides it.
	 */
	if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE) {
		const value *fin = x->kind == USC__ORC_FINITE ? x : y;
		int sf = fin == x ? sx : sy;
		bool additive = o == USC_HLO_OP_ADD || o == USC_HLO_OP_SUBTRACT;

		switch (o) {
		case USC_HLO_OP_ADD:
		case USC_HLO_OP_SUBTRACT:
		case USC_HLO_OP_MULTIPLY:
		case USC_HLO_OP_DIVIDE:
		case USC_HLO_OP_ATAN2:
			if (sf == 0 && !additive)
				break;
			mpfi_init2(rep.x, 64);
			sign_rep(s, &rep, sf == 0 ? 1 : sf);
			rep.kind = USC__ORC_FINITE;
			usc__orc_eval_points(s, r, NULL, f, fin == x ? &rep : x,
					     fin == y ? &rep : y);
			mpfi_clear(rep.x);
			return;
		case USC_HLO_OP_REMAINDER:
			/* fmod(Inf, y) = NaN; fmod(x, Inf) = x. */
			if (x->kind != USC__ORC_FINITE)
				usc__orc_set_kind(r, USC__ORC_NAN);
			else
				usc__orc_vcopy(r, x);
			return;
		case USC_HLO_OP_POWER: {
			/*
			 * pow(x, NaN) = NaN unless x = 1, pow(NaN, y) = NaN
			 * unless y = 0 (C99 F.9.4.4); +Inf^y and x^(+-Inf)
			 * depend on sign classes of y and of |x| - 1.
			 */
			if (y->kind == USC__ORC_NAN) {
				if (mpfi_cmp_si(x->x, 1) != 0)
					usc__orc_set_kind(r, USC__ORC_NAN);
				else
					usc__orc_set_undecided(r);
				return;
			}
			if (x->kind == USC__ORC_NAN) {
				if (!usc__orc_has_zero(y))
					usc__orc_set_kind(r, USC__ORC_NAN);
				else
					usc__orc_set_undecided(r);
				return;
			}
			if (x->kind == USC__ORC_POS_INF && sy != 0) {
				if (sy > 0)
					usc__orc_set_kind(r, USC__ORC_POS_INF);
				else
					usc__orc_set_zero(s, r, 1);
				return;
			}
			if (y->kind != USC__ORC_FINITE) {
				int c;

				mpfi_set_prec(s->ia, mpfi_get_prec(x->x));
				mpfi_abs(s->ia, x->x);
				c = mpfi_cmp_si(s->ia, 1);
				if (c == 0) {
					usc__orc_set_undecided(r);
					return;
				}
				if ((c > 0) == (y->kind == USC__ORC_POS_INF))
					usc__orc_set_kind(r, USC__ORC_POS_INF);
				else
					usc__orc_set_zero(s, r, 1);
				return;
			}
			break;
		}
		default:
			break;
		}
		usc__orc_set_undecided(r);
		return;
	}
	switch (o) {
	case USC_HLO_OP_ADD:
		mpfi_add(r->x, x->x, y->x);
		break;
	case USC_HLO_OP_SUBTRACT:
		mpfi_sub(r->x, x->x, y->x);
		break;
	case USC_HLO_OP_MULTIPLY:
		mpfi_mul(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx == 0 || sy == 0 ? 0 : sx * sy);
		return;
	case USC_HLO_OP_DIVIDE:
		if (usc__orc_is_zero_point(y)) {
			/* Non-zero / 0 is a signed Inf; 0 / 0 is NaN. */
			if (sx == 0 || sy == 0)
				usc__orc_set_undecided(r);
			else if (usc__orc_has_zero(x))
				usc__orc_set_undecided(r);
			else
				usc__orc_set_kind(
					r, sx * sy > 0 ? USC__ORC_POS_INF
						       : USC__ORC_NEG_INF);
			return;
		}
		if (usc__orc_has_zero(y)) {
			usc__orc_set_undecided(r);
			return;
		}
		mpfi_div(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx == 0 ? 0 : sx * sy);
		return;
	case USC_HLO_OP_REMAINDER:
		if (usc__orc_is_zero_point(y)) {
			usc__orc_set_kind(r, USC__ORC_NAN);
			return;
		}
		if (usc__orc_has_zero(y)) {
			usc__orc_set_undecided(r);
			return;
		}
		remainder_iv(s, r, x, y);
		return;
	case USC_HLO_OP_ATAN2:
		/*
		 * atan2 is continuous away from the origin and the cut
		 * {y = 0, x < 0}; on a box clear of both, MPFI's enclosure
		 * holds.  A point zero y against x of one sign is exact.
		 */
		if (usc__orc_is_zero_point(x)) {
			if (mpfr_sgn(&y->x->left) > 0)
				usc__orc_set_zero(s, r, sx);
			else if (mpfr_sgn(&y->x->right) < 0 && sx != 0) {
				mpfi_const_pi(r->x);
				if (sx < 0)
					mpfi_neg(r->x, r->x);
			} else
				usc__orc_set_undecided(r);
			return;
		}
		if (usc__orc_has_zero(x) && mpfr_sgn(&y->x->left) <= 0) {
			usc__orc_set_undecided(r);
			return;
		}
		mpfi_atan2(r->x, x->x, y->x);
		usc__orc_fix_zero(r, sx);
		break;
	case USC_HLO_OP_POWER: {
		int status;

		usc__oracle_fn_pow(r->x, x->x, y->x, &status);
		if (status != 0)
			usc__orc_set_kind(r, (usc__oracle_kind)status);
		else
			usc__orc_fix_zero(r, 1);
		return;
	}
	default:
		usc__orc_set_undecided(r);
		return;
	}
	if (r->kind == USC__ORC_FINITE && mpfi_nan_p(r->x))
		usc__orc_set_undecided(r);
	else
		usc__orc_fix_zero(r, 1);
}

/* --------------------------------------------------------- compare */


/*
 * Which outcomes of comparing x with y the enclosures allow.  An IEEE
 * infinity is beyond every finite real, even one beyond MPFR's range.
 */
static unsigned cmp_possible(const value *x, const value *y, bool total)
{
	unsigned m = 0;
	int kx = x->kind, ky = y->kind;

	if (kx == USC__ORC_NAN || ky == USC__ORC_NAN)
		return USC__POSS_UN;
	if (kx != USC__ORC_FINITE || ky != USC__ORC_FINITE) {
		int rx = kx == USC__ORC_POS_INF ? 1 : kx == USC__ORC_NEG_INF ? -1 : 0;
		int ry = ky == USC__ORC_POS_INF ? 1 : ky == USC__ORC_NEG_INF ? -1 : 0;

		return rx < ry   ? USC__POSS_LT
		       : rx > ry ? USC__POSS_GT
				 : USC__POSS_EQ;
	}
	if (mpfr_less_p(&x->x->left, &y->x->right))
		m |= USC__POSS_LT;
	if (mpfr_greater_p(&x->x->right, &y->x->left))
		m |= USC__POSS_GT;
	if (mpfr_lessequal_p(&x->x->left, &y->x->right) &&
	    mpfr_lessequal_p(&y->x->left, &x->x->right))
		m |= USC__POSS_EQ;
	/*
	 * The total order tells -0 from +0: where the two may meet at 0,
	 * equality needs equal known signs.
	 */
	if (total && (m & USC__POSS_EQ) && usc__orc_has_zero(x) &&
	    usc__orc_has_zero(y)) {
		int sx = usc__orc_is_point(x) ? usc__orc_sign_of(x) : 0;
		int sy = usc__orc_is_point(y) ? usc__orc_sign_of(y) : 0;

		if (sx == 0 || sy == 0 || sx != sy)
			m |= USC__POSS_LT | USC__POSS_GT;
		if (sx != 0 && sy != 0) {
			if (usc__orc_is_point(x) && usc__orc_is_point(y) &&
			    sx != sy)
				m = sx < sy ? USC__POSS_LT : USC__POSS_GT;
		}
	}
	return m;
}

void usc__orc_compare_float(const usc__dom_op *op, value *r, const value *x,
			    const value *y)
{
	bool total = op->cmp_type == USC__CMP_TOTALORDER;
	unsigned m, b;
	bool any_true = false, any_false = false;

	r->bits = 0;
	if (x->kind == USC__ORC_UNDECIDED || y->kind == USC__ORC_UNDECIDED ||
	    (total && (x->kind == USC__ORC_NAN || y->kind == USC__ORC_NAN))) {
		/* The total order needs NaN's sign bit, which is not kept. */
		usc__orc_set_undecided(r);
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
	r->kind = USC__ORC_FINITE;
	r->flags = 0;
	if (any_true && any_false)
		usc__orc_set_undecided(r);
	else
		r->bits = any_true ? 1 : 0;
}
