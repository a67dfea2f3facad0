/*
 * The envelope's reductions and dots (docs/envelope.md, "Reductions" and
 * "Dots"): a reduce, a reduce-window, and the accumulation of a dot or a
 * convolution in any order the profile allows, bounded by Higham's
 * gamma_n over every summation tree, plus a dot's operand rounding.
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

/* ------------------------------------------------ reductions and dots */

/* gamma_n = n u / (1 - n u) for the unit roundoff u, rounded up. */
static void gamma_u(mpfr_ptr g, double n, mpfr_srcptr u)
{
	mpfr_t d;

	mpfr_init2(d, ENV_PREC);
	mpfr_mul_d(g, u, n, MPFR_RNDU);
	mpfr_ui_sub(d, 1, g, MPFR_RNDD);
	if (mpfr_sgn(d) <= 0)
		mpfr_set_inf(g, 1);
	else
		mpfr_div(g, g, d, MPFR_RNDU);
	mpfr_clear(d);
}

/*
 * The unit roundoff of an addition whose result is rounded to t: 2^-p,
 * or, when the profile computes t's arithmetic in a wider c and rounds
 * the result to t (double rounding), u_t + u_c (1 + u_t).  Rounded up.
 */
static void unit_roundoff(const env_state *s, usc_dtype t, mpfr_ptr u)
{
	usc_dtype c = usc__env_compute_for(s, t);
	mpfr_t uc;

	mpfr_set_ui_2exp(u, 1, -s->info[t].precision, MPFR_RNDU);
	if (c == USC_DTYPE_INVALID)
		return;
	mpfr_init2(uc, ENV_PREC);
	mpfr_set_ui_2exp(uc, 1, -s->info[c].precision, MPFR_RNDU);
	mpfr_fma(uc, uc, u, uc, MPFR_RNDU);
	mpfr_add(u, u, uc, MPFR_RNDU);
	mpfr_clear(uc);
}

/*
 * The finite result of a sum whose exact value lies in [s->lo, s->hi],
 * with an error bound err (s->t) on top and partial sums bounded by
 * big in magnitude: every value of type t (or its excess type) the
 * rounded sum may take.
 */
static void sum_result(env_state *s, value *r, usc_dtype t, mpfr_srcptr big)
{
	usc_dtype w = usc__env_excess_for(s, t);

	mpfr_sub(s->a, s->lo, s->t, MPFR_RNDD);
	mpfr_add(s->b, s->hi, s->t, MPFR_RNDU);
	usc__env_add_rounded(s, r, t, s->a, s->b, USC_RND_NEAREST_EVEN,
		    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, ZPOS | ZNEG);
	if (w != USC_DTYPE_INVALID)
		usc__env_add_rounded(s, r, w, s->a, s->b, USC_RND_NEAREST_EVEN,
			    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
			    ZPOS | ZNEG);
	if (usc__env_has_zero(r))
		r->flags |= ZPOS | ZNEG;
	/* A partial sum may overflow on the way: then Inf, or Inf - Inf. */
	if (mpfr_cmp_d(big, s->info[t].max_finite) >= 0)
		r->flags |= PINF | NINF | VNAN;
	if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
		usc__env_flush_zero(s, r, t);
}

static void dot_mode(const env_state *s, const usc__dom_matmul *mm,
		     double *e_prod, double *abs_split, double *terms_per_k);
static usc_dtype dot_acc(const env_state *s, const usc__dom_matmul *mm);

/*
 * Whether a sum is the accumulation of a dot or a convolution (the
 * interpreter hands their products to the sum entry with the dot or
 * convolution as the add's instruction), and if so its operand types.
 */
static bool dot_like(const usc__dom_op *add, usc__dom_matmul *mm)
{
	const usc_hlo_instr *in = add->instr;

	memset(mm, 0, sizeof *mm);
	if (!in || in->operand_count != 2 ||
	    (in->opcode != USC_HLO_OP_DOT &&
	     in->opcode != USC_HLO_OP_CONVOLUTION))
		return false;
	mm->a_type = in->operands[0]->shape.dtype;
	mm->b_type = in->operands[1]->shape.dtype;
	mm->result = add->result;
	mm->instr = in;
	return true;
}

usc_status usc__env_sum(void *state, const usc__dom_op *add, size_t n,
			const void *values, const void *init, void *out,
			usc_error *err)
{
	env_state *s = state;
	const value *v = values;
	value *r = out;
	usc_dtype t = add->result, acc = t;
	usc_dtype w = usc__env_excess_for(s, t);
	unsigned any = 0, all = FIN;
	mpfr_t m, g, u;
	size_t i;
	double eta, e_prod = 0, abs_split = 0, tpk = 1;
	usc__dom_matmul mm;
	bool dot = dot_like(add, &mm);

	(void)err;
	float nr;

	if (!(dot ? s->prof.reassociate_dot : s->prof.reassociate) ||
	    !usc_dtype_is_float(t) || !s->has_info[t] ||
	    add->op != USC_HLO_OP_ADD)
		return USC_EUNSUPPORTED;
	if (dot) {
		/*
		 * The products handed over are already computed (rounded or,
		 * under fma, exact); an f32 dot's operand rounding (TF32,
		 * one bf16 pass) moves each product by at most e_prod of
		 * |a||b|, which is at most (1 + 2u) |ab| of the product set.
		 * A split into several bf16 terms needs the operands
		 * themselves (underflow of the parts): declined.
		 */
		dot_mode(s, &mm, &e_prod, &abs_split, &tpk);
		if (abs_split != 0 || tpk != 1)
			return USC_EUNSUPPORTED;
		acc = dot_acc(s, &mm);
	}
	memset(r, 0, sizeof *r);
	any = ((const value *)init)->flags;
	all &= any;
	nr = ((const value *)init)->roundings + (float)n;
	for (i = 0; i < n; i++) {
		any |= v[i].flags;
		all &= v[i].flags;
		nr += v[i].roundings;
	}
	if (any & UNK) {
		r->flags = UNK;
		return USC_OK;
	}
	r->flags = any & (PINF | NINF | VNAN | CLIP | FLSH | APRX);
	r->roundings = nr;
	if ((any & PINF) && (any & NINF))
		r->flags |= VNAN;
	if (!(all & FIN))
		return USC_OK;
	/* In double where it decides (envelope_fast.c); else MPFR. */
	if (usc__env_fast_sum(s, r, t, acc, v, n, (const value *)init,
			      e_prod))
		return USC_OK;
	s->escalated++;
	/*
	 * Any order of the n additions: |computed - exact| <= gamma_n *
	 * sum |x_i| (Higham, Accuracy and Stability of Numerical
	 * Algorithms, 2nd ed., eq. (4.4) holds for every summation tree), u
	 * the unit roundoff of t, the least precise type a partial sum may
	 * be rounded to.  An addition whose result is subnormal is exact
	 * (Hauser 1996), so gradual underflow adds nothing; a flushed one
	 * errs by less than the smallest normal.
	 */
	mpfr_inits2(ENV_PREC, m, g, (mpfr_ptr)0);
	mpfr_set_zero(m, 1);
	mpfr_set_zero(s->lo, 1);
	mpfr_set_zero(s->hi, 1);
	for (i = 0; i <= n; i++) {
		value x = i < n ? v[i] : *(const value *)init;

		if ((s->prof.flush[t] & USC_FLUSH_INPUTS) ||
		    (w != USC_DTYPE_INVALID &&
		     (s->prof.flush[w] & USC_FLUSH_INPUTS)))
			usc__env_flush_zero(s, &x, t);
		mpfr_add_d(s->lo, s->lo, x.lo, MPFR_RNDD);
		mpfr_add_d(s->hi, s->hi, x.hi, MPFR_RNDU);
		mpfr_add_d(m, m, fmax(fabs(x.lo), fabs(x.hi)), MPFR_RNDU);
	}
	mpfr_init2(u, ENV_PREC);
	unit_roundoff(s, acc, u);
	gamma_u(g, (double)n, u);
	if (e_prod != 0) {
		/* (e + g (1 + e)) (1 + 2u) m: the operands' rounding too. */
		mpfr_set_d(s->t, 1 + e_prod, MPFR_RNDU);
		mpfr_mul(g, g, s->t, MPFR_RNDU);
		mpfr_add_d(g, g, e_prod, MPFR_RNDU);
		mpfr_mul_2ui(s->t, u, 1, MPFR_RNDU);
		mpfr_add_ui(s->t, s->t, 1, MPFR_RNDU);
		mpfr_mul(g, g, s->t, MPFR_RNDU);
	}
	mpfr_mul(s->t, g, m, MPFR_RNDU);
	eta = 0;
	if (s->prof.flush[t] || s->prof.flush[acc] ||
	    (w != USC_DTYPE_INVALID && s->prof.flush[w]))
		eta = (double)(n + 1) * s->info[acc].min_normal;
	mpfr_add_d(s->t, s->t, eta, MPFR_RNDU);
	mpfr_add(m, m, s->t, MPFR_RNDU);
	if (mpfr_cmp_d(m, s->info[acc].max_finite) >= 0)
		r->flags |= PINF | NINF | VNAN;
	sum_result(s, r, t, m);
	mpfr_clears(m, g, u, (mpfr_ptr)0);
	return USC_OK;
}

/* How an f32 x f32 dot's operands may be split or rounded. */
static void dot_mode(const env_state *s, const usc__dom_matmul *mm,
		     double *e_prod, double *abs_split, double *terms_per_k)
{
	usc_profile_dot_f32 m = USC_DOT_F32_FULL;
	double e;

	if (mm->a_type == USC_F32 && mm->b_type == USC_F32)
		m = s->prof.dot_f32;
	*e_prod = 0;
	*abs_split = 0;
	*terms_per_k = 1;
	switch (m) {
	case USC_DOT_F32_TF32:
		/* Each operand rounded to 11 bits: |da| <= 2^-11 |a|. */
		e = 0x1p-11;
		*e_prod = 2 * e + e * e;
		break;
	case USC_DOT_F32_BF16_1:
		e = 0x1p-8;
		*e_prod = 2 * e + e * e;
		break;
	case USC_DOT_F32_BF16_3:
		/*
		 * a = ah + al + ra with ah = bf16(a), al = bf16(a - ah):
		 * |al| <= 2^-8 (1 + 2^-8) |a|, |ra| <= 2^-16 |a|.  The three
		 * products ah bh + ah bl + al bh miss al bl, ah rb, ra bh and
		 * smaller terms: below 3.1 * 2^-16 |a||b|, bounded by 2^-14.
		 * The split parts may underflow bf16's subnormals: half its
		 * spacing, 2^-134, times the other factor, four times over.
		 */
		*e_prod = 0x1p-14;
		*abs_split = 0x1p-130;
		*terms_per_k = 3;
		break;
	case USC_DOT_F32_BF16_6:
		/* Three bf16 terms each: 24 bits, the residual below 2^-21. */
		*e_prod = 0x1p-21;
		*abs_split = 0x1p-130;
		*terms_per_k = 6;
		break;
	default:
		break;
	}
}

/* The least precise type a dot may accumulate in. */
static usc_dtype dot_acc(const env_state *s, const usc__dom_matmul *mm)
{
	usc_dtype a = mm->result, d = USC_DTYPE_INVALID;
	int bits = usc__dom_width(mm->a_type);

	if (bits == 16)
		d = s->prof.dot_accumulation;
	else if (bits == 8)
		d = s->prof.fp8_dot_accumulation;
	if (d != USC_DTYPE_INVALID && usc_dtype_is_float(d) && s->has_info[d] &&
	    s->info[d].precision < s->info[a].precision)
		a = d;
	return a;
}

usc_status usc__env_matmul(void *state, const usc__dom_matmul *mm,
			   usc_error *err)
{
	env_state *s = state;
	usc_dtype t = mm->result, acc;
	const value *A = mm->a, *B = mm->b;
	value *C = mm->c;
	double e_prod, abs_split, tpk, eta;
	size_t bi, i, j, k;
	mpfi_t S, p, x, y;
	mpfr_t m, g, sp, u;

	(void)err;
	if (!usc_dtype_is_float(t) || !usc_dtype_is_float(mm->a_type) ||
	    !usc_dtype_is_float(mm->b_type) ||
	    !s->has_info[mm->a_type] || !s->has_info[mm->b_type] ||
	    s->info[mm->a_type].precision > s->info[t].precision ||
	    s->info[mm->b_type].precision > s->info[t].precision ||
	    s->info[mm->a_type].emax > s->info[t].emax ||
	    s->info[mm->b_type].emax > s->info[t].emax)
		return USC_EUNSUPPORTED;
	dot_mode(s, mm, &e_prod, &abs_split, &tpk);
	acc = dot_acc(s, mm);
	/* Sequential and exact per product: the per-element path is it. */
	if (!s->prof.reassociate_dot && e_prod == 0 && acc == t)
		return USC_EUNSUPPORTED;
	mpfi_init2(S, ENV_PREC);
	mpfi_init2(p, ENV_PREC);
	mpfi_init2(x, ENV_PREC);
	mpfi_init2(y, ENV_PREC);
	mpfr_inits2(ENV_PREC, m, g, sp, (mpfr_ptr)0);
	/*
	 * Any order, products rounded or fused: |computed - exact| <=
	 * gamma_n sum |a_k b_k| (Higham, eq. (3.5), for every order), with
	 * n the number of products, plus the operands' own rounding
	 * freedom e_prod |a||b| per product, plus n times the spacing of
	 * the accumulation type's subnormals (a product that underflows).
	 */
	mpfr_init2(u, ENV_PREC);
	unit_roundoff(s, acc, u);
	gamma_u(g, (double)mm->k * tpk, u);
	mpfr_clear(u);
	eta = (double)mm->k * tpk * s->info[acc].min_subnormal;
	if (s->prof.flush[acc])
		eta = (double)mm->k * tpk * s->info[acc].min_normal;
	for (bi = 0; bi < mm->batch; bi++)
		for (i = 0; i < mm->m; i++)
			for (j = 0; j < mm->n; j++) {
				value *r = &C[(bi * mm->m + i) * mm->n + j];
				bool ok = true;
				unsigned fl = 0;
				float nr = 0;

				memset(r, 0, sizeof *r);
				mpfi_set_ui(S, 0);
				mpfr_set_zero(m, 1);
				mpfr_set_zero(sp, 1);
				for (k = 0; k < mm->k && ok; k++) {
					value a = A[(bi * mm->m + i) * mm->k +
						    k];
					value b = B[(bi * mm->k + k) * mm->n +
						    j];

					if ((a.flags | b.flags) &
						    (UNK | VNAN | PINF | NINF) ||
					    !(a.flags & b.flags & FIN)) {
						ok = false;
						break;
					}
					if (s->prof.flush[mm->a_type] &
					    USC_FLUSH_INPUTS)
						usc__env_flush_zero(s, &a, mm->a_type);
					if (s->prof.flush[mm->b_type] &
					    USC_FLUSH_INPUTS)
						usc__env_flush_zero(s, &b, mm->b_type);
					fl |= (a.flags | b.flags) & (FLSH | APRX);
					nr += a.roundings + b.roundings + 2;
					mpfi_interv_d(x, a.lo, a.hi);
					mpfi_interv_d(y, b.lo, b.hi);
					mpfi_mul(p, x, y);
					mpfi_add(S, S, p);
					{
						double ma = fmax(fabs(a.lo),
								 fabs(a.hi));
						double mb = fmax(fabs(b.lo),
								 fabs(b.hi));

						mpfr_set_d(s->t, ma, MPFR_RNDU);
						mpfr_mul_d(s->t, s->t, mb,
							   MPFR_RNDU);
						mpfr_add(m, m, s->t, MPFR_RNDU);
						mpfr_add_d(sp, sp, ma + mb,
							   MPFR_RNDU);
					}
				}
				if (!ok) {
					/* Specials in a reassociated dot. */
					r->flags = UNK;
					continue;
				}
				mpfi_get_left(s->lo, S);
				mpfi_get_right(s->hi, S);
				/* t = (e + g (1 + e)) m + abs sp (1+) + eta */
				mpfr_set_d(s->t, 1 + e_prod, MPFR_RNDU);
				mpfr_mul(s->t, s->t, g, MPFR_RNDU);
				mpfr_add_d(s->t, s->t, e_prod, MPFR_RNDU);
				mpfr_mul(s->t, s->t, m, MPFR_RNDU);
				mpfr_mul_d(sp, sp, abs_split * 8, MPFR_RNDU);
				mpfr_add(s->t, s->t, sp, MPFR_RNDU);
				mpfr_add_d(s->t, s->t, eta, MPFR_RNDU);
				mpfr_add(m, m, s->t, MPFR_RNDU);
				if (mpfr_cmp_d(m, s->info[acc].max_finite) >= 0)
					r->flags |= PINF | NINF | VNAN;
				sum_result(s, r, t, m);
				r->flags |= fl;
				r->roundings = nr;
			}
	mpfi_clear(S);
	mpfi_clear(p);
	mpfi_clear(x);
	mpfi_clear(y);
	mpfr_clears(m, g, sp, (mpfr_ptr)0);
	return USC_OK;
}

