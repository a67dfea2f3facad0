/*
 * The envelope's discrete ops (docs/envelope.md): comparisons as sets of
 * possible outcomes, integer and pred ops, convert (float to int with
 * XLA's semantics, int to float, float to float with every rounding
 * freedom) and reduce-precision.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"
#include "envelope.h"
#include "envelope_fast.h"
#include "envelope_internal.h"
#include "oracle.h"

/* ------------------------------------------------------- discrete ops */

/* A pred result from which of false / true are possible. */
void usc__env_set_pred(value *r, bool can_false, bool can_true)
{
	memset(r, 0, sizeof *r);
	if (can_false && can_true) {
		r->lo = 0;
		r->hi = 1;
		r->flags = FIN;
	} else {
		usc__env_load_int(r, USC_PRED, can_true ? 1 : 0);
	}
}


unsigned usc__env_order_outcomes(double xl, double xh, double yl, double yh)
{
	unsigned o = 0;

	if (xl < yh)
		o |= USC__POSS_LT;
	if (xh > yl)
		o |= USC__POSS_GT;
	if (xl <= yh && yl <= xh)
		o |= USC__POSS_EQ;
	return o;
}

unsigned usc__env_float_outcomes(const value *x, const value *y, bool total)
{
	/* Each component as an extended-real interval. */
	double lo[2][3], hi[2][3];
	int n[2] = {0, 0}, i, j;
	const value *v[2] = {x, y};
	unsigned o = 0;

	for (i = 0; i < 2; i++) {
		if (v[i]->flags & FIN) {
			lo[i][n[i]] = v[i]->lo;
			hi[i][n[i]++] = v[i]->hi;
		}
		if (v[i]->flags & PINF) {
			lo[i][n[i]] = INFINITY;
			hi[i][n[i]++] = INFINITY;
		}
		if (v[i]->flags & NINF) {
			lo[i][n[i]] = -INFINITY;
			hi[i][n[i]++] = -INFINITY;
		}
	}
	for (i = 0; i < n[0]; i++)
		for (j = 0; j < n[1]; j++)
			o |= usc__env_order_outcomes(lo[0][i], hi[0][i], lo[1][j],
					    hi[1][j]);
	if (total) {
		/* -0 < +0 in the total order; NaNs sort at both ends. */
		if ((o & USC__POSS_EQ) && usc__env_has_zero(x) && usc__env_has_zero(y))
			o |= USC__POSS_LT | USC__POSS_GT;
		if ((x->flags | y->flags) & VNAN)
			o |= USC__POSS_LT | USC__POSS_EQ | USC__POSS_GT;
	} else if ((x->flags | y->flags) & VNAN)
		o |= USC__POSS_UN;
	return o;
}

void usc__env_compare_sets(const usc__dom_op *op, value *r, unsigned outcomes)
{
	bool f = false, t = false;
	unsigned o;

	for (o = 1; o <= USC__POSS_UN; o <<= 1)
		if (outcomes & o) {
			if (usc__cmp_holds(op->cmp_dir, o))
				t = true;
			else
				f = true;
		}
	usc__env_set_pred(r, f, t);
}

/* Integer values as intervals of their natural (typed) value. */
bool usc__env_int_natural(const usc__dom_op *op)
{
	const usc_format *f = usc_format_of(op->arg[0]);

	return (op->cmp_type == USC__CMP_SIGNED &&
		f->kind == USC_KIND_SINT) ||
	       (op->cmp_type == USC__CMP_UNSIGNED &&
		(f->kind == USC_KIND_UINT || f->kind == USC_KIND_PRED));
}

/* Every op on integer points: the reference's exact semantics. */
usc_status usc__env_int_points(env_state *s, const usc__dom_op *op, value *r,
			       const value *const *a, usc_error *err)
{
	uint64_t b[USC__DOM_MAX_ARGS] = {0, 0, 0}, out = 0;
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		if (usc_dtype_is_float(op->arg[k])) {
			if (!usc__env_float_point_bits(a[k], op->arg[k], &b[k]))
				return USC_EUNSUPPORTED;
		} else if (!(a[k]->flags & IPOINT))
			return USC_EUNSUPPORTED;
		else
			b[k] = a[k]->bits;
		args[k] = &b[k];
	}
	st = usc__domain_reference.apply(s->ref, op, 1, &out, args, 0, err);
	if (st != USC_OK)
		return st;
	if (usc_dtype_is_float(op->result)) {
		memset(r, 0, sizeof *r);
		usc__env_add_bits(r, op->result, out);
	} else
		usc__env_load_int(r, op->result, out);
	return USC_OK;
}

/* Pred operands that are sets: every combination through the reference. */
usc_status usc__env_pred_sets(env_state *s, const usc__dom_op *op, value *r,
			      const value *const *a, usc_error *err)
{
	value p[USC__DOM_MAX_ARGS][2];
	int n[USC__DOM_MAX_ARGS] = {1, 1, 1}, i0, i1, i2;
	unsigned k;
	bool any = false;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		if (op->arg[k] != USC_PRED)
			return USC_EUNSUPPORTED;
		if (a[k]->flags & IPOINT) {
			p[k][0] = *a[k];
			continue;
		}
		usc__env_load_int(&p[k][0], USC_PRED, 0);
		usc__env_load_int(&p[k][1], USC_PRED, 1);
		n[k] = 2;
	}
	memset(r, 0, sizeof *r);
	for (i0 = 0; i0 < n[0]; i0++)
		for (i1 = 0; i1 < n[1]; i1++)
			for (i2 = 0; i2 < n[2]; i2++) {
				const value *b[3] = {&p[0][i0], &p[1][i1],
						     &p[2][i2]};
				value o;

				st = usc__env_int_points(s, op, &o, b, err);
				if (st != USC_OK)
					return st;
				if (!any) {
					*r = o;
					any = true;
				} else if (!(o.flags & IPOINT) ||
					   !(r->flags & IPOINT) ||
					   o.bits != r->bits) {
					double lo = fmin(r->lo, o.lo),
					       hi = fmax(r->hi, o.hi);

					memset(r, 0, sizeof *r);
					r->lo = lo;
					r->hi = hi;
					r->flags = FIN;
				}
			}
	return USC_OK;
}

/* The integer t-typed value of double x under XLA's float->int convert. */
static double f2i(usc_dtype t, double x)
{
	uint64_t b = 0;
	value v;

	(void)usc_encode_double(t, x, NULL, &b, NULL);
	usc__env_load_int(&v, t, b);
	return v.lo;
}

usc_status usc__env_convert(env_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err)
{
	usc_dtype from = op->arg[0], to = op->result;
	const usc_format *tf = usc_format_of(to);
	const value *a[1] = {x};

	memset(r, 0, sizeof *r);
	if (usc_dtype_is_float(from) && usc_dtype_is_float(to)) {
		value v = *x;
		usc_overflow o = USC_OVF_DEFAULT;
		bool fp8 = tf->bits == 8;

		usc__env_flush_inputs(s, op, &v, 0);
		r->flags = v.flags & (VNAN | PINF | NINF | UNK | CLIP);
		if (v.flags & FIN) {
			if (fp8 && s->prof.fp8_overflow == USC_FP8_OVF_SAT)
				o = USC_OVF_SATURATE;
			/* The ends are exact: in double where it decides. */
			usc__env_finish_d(s, op, r, to, v.lo, v.hi,
					  v.flags & (ZPOS | ZNEG), o, false);
			if (fp8 && s->prof.fp8_overflow == USC_FP8_OVF_EITHER)
				usc__env_finish_d(s, op, r, to, v.lo, v.hi,
						  v.flags & (ZPOS | ZNEG),
						  USC_OVF_SATURATE, false);
		}
		/* Infinities and NaN convert per the format (and policy). */
		if (v.flags & (PINF | NINF | VNAN)) {
			r->flags &= ~(unsigned)(PINF | NINF | VNAN);
			if (v.flags & VNAN)
				usc__env_add_bits(r, to, usc__env_rn_double(to, NAN));
			if (v.flags & (PINF | NINF)) {
				usc_rounding rr = USC_ROUNDING_DEFAULT;
				uint64_t b;
				int sg;

				for (sg = 0; sg < 2; sg++) {
					double inf = sg ? -INFINITY : INFINITY;

					if (!(v.flags & (sg ? NINF : PINF)))
						continue;
					usc__env_add_bits(r, to, usc__env_rn_double(to, inf));
					if (fp8 && s->prof.fp8_overflow !=
							   USC_FP8_OVF_NONSAT) {
						rr.overflow = USC_OVF_SATURATE;
						(void)usc_encode_double(
							to, inf, &rr, &b, NULL);
						usc__env_add_bits(r, to, b);
					}
				}
			}
		}
		return USC_OK;
	}
	if (usc_dtype_is_float(from)) {
		if (tf->kind == USC_KIND_PRED) {
			bool t = (x->flags & (VNAN | PINF | NINF)) ||
				 ((x->flags & FIN) &&
				  (x->lo != 0 || x->hi != 0));

			usc__env_set_pred(r, usc__env_has_zero(x), t);
			return USC_OK;
		}
		if (usc__env_float_point_bits(x, from, &(uint64_t){0}))
			return usc__env_int_points(s, op, r, a, err);
		/* Truncating, saturating, NaN to 0: monotone but for NaN. */
		if (x->flags & FIN) {
			double l = f2i(to, x->lo), h = f2i(to, x->hi);

			r->lo = l;
			r->hi = h;
			r->flags = FIN;
		}
		if (x->flags & VNAN)
			usc__env_hull(r, 0, 0, 0);
		if (x->flags & PINF) {
			double h = f2i(to, INFINITY);

			usc__env_hull(r, h, h, 0);
		}
		if (x->flags & NINF) {
			double l = f2i(to, -INFINITY);

			usc__env_hull(r, l, l, 0);
		}
		if ((r->flags & FIN) && r->lo == r->hi) {
			uint64_t b = 0;

			(void)usc_encode_double(to, r->lo, NULL, &b, NULL);
			usc__env_load_int(r, to, b);
		}
		return USC_OK;
	}
	/* From an integer or pred. */
	if (x->flags & IPOINT)
		return usc__env_int_points(s, op, r, a, err);
	if (usc_dtype_is_float(to)) {
		mpfr_set_d(s->a, x->lo, MPFR_RNDD);
		mpfr_set_d(s->b, x->hi, MPFR_RNDU);
		usc__env_finish(s, op, r, to, s->a, s->b, ZPOS, USC_OVF_DEFAULT, false);
		return USC_OK;
	}
	if (tf->kind == USC_KIND_PRED) {
		usc__env_set_pred(r, x->lo <= 0 && x->hi >= 0, x->lo != 0 || x->hi != 0);
		return USC_OK;
	}
	{
		/* Integer to integer: the same values when they fit. */
		double tlo, thi;

		if (tf->kind == USC_KIND_SINT) {
			tlo = -ldexp(1, tf->bits - 1);
			thi = ldexp(1, tf->bits - 1) - 1;
		} else {
			tlo = 0;
			thi = ldexp(1, tf->bits) - 1;
		}
		r->flags = FIN;
		if (x->lo >= tlo && x->hi <= thi) {
			r->lo = x->lo;
			r->hi = x->hi;
		} else {
			r->lo = tlo;
			r->hi = thi;
		}
	}
	return USC_OK;
}

/* reduce-precision is monotone: its image of [lo, hi] is its ends'. */
usc_status usc__env_reduce_precision(env_state *s, const usc__dom_op *op,
				     value *r, const value *x, usc_error *err)
{
	usc_dtype t = op->arg[0];
	value e[2];
	uint64_t b;
	const value *a[1];
	int i;
	usc_status st;

	memset(r, 0, sizeof *r);
	r->flags = x->flags & (VNAN | PINF | NINF | UNK | CLIP);
	if (!(x->flags & FIN))
		return USC_OK;
	usc__envelope_value_set(&e[0], x->lo, x->lo);
	usc__envelope_value_set(&e[1], x->hi, x->hi);
	e[0].flags = FIN | (x->lo == 0 ? x->flags & (ZPOS | ZNEG) : 0);
	e[1].flags = FIN | (x->hi == 0 ? x->flags & (ZPOS | ZNEG) : 0);
	if (x->lo == 0 && (x->flags & ZNEG))
		e[0].flags = FIN | ZNEG;
	if (x->hi == 0 && (x->flags & ZPOS))
		e[1].flags = FIN | ZPOS;
	for (i = 0; i < 2; i++)
		if (!usc__env_float_point_bits(&e[i], t, &b)) {
			r->flags |= UNK;
			return USC_OK;
		}
	for (i = 0; i < 2; i++) {
		value o;

		a[0] = &e[i];
		st = usc__env_int_points(s, op, &o, a, err);
		if (st != USC_OK)
			return st;
		usc__env_unite(r, &o);
	}
	if (x->lo < 0 && x->hi > 0 && usc__env_has_zero(r))
		r->flags |= ZPOS | ZNEG;
	return USC_OK;
}

