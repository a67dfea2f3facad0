/*
 * The envelope's array loops (docs/envelope.md, "The array loops"): the
 * fast path of envelope_fast.c for a whole chunk of an op's elements at
 * once, specialised on the op's plan: add, subtract, multiply, divide
 * (with the x * RN(1 / y) rewrite), the monotone functions and the
 * float-to-float converts between f32, bf16 and f16.
 *
 * When an op is planned, usc__env_loop_plan resolves the profile's
 * freedoms into a fixed, small list of roundings (the types T, C and W,
 * whether the window of k ulps, the FMA's unrounded product and the set
 * rounded once straight to T apply) and picks the loop of the op.  A
 * chunk's operands are gathered into arrays (lo[], hi[] per operand) for
 * the elements whose operands are plain: finite sets only (no NaN,
 * infinity or UNKNOWN member), out of reach of any input flush.  The
 * exact range of every gathered element is then computed by one loop per
 * op, and each rounding is one loop per type over the arrays, with no
 * test of flags, modes or types inside.
 *
 * Why the loops give the same sets as the per-element code (finish_d of
 * envelope_fast.c), bit for bit: an element is kept only when every
 * rounded end it computed, and the final set, lies on one side of zero
 * with a magnitude in [2 m, M / 2], m the largest smallest-normal value
 * and M the smallest largest-finite value of T, C and W (the guard).
 * There, every case of the per-element code but one is out of reach: no
 * end overflows, no end is subnormal or zero (so rounding on the
 * double's encoding is what the codec does, and no zero sign is
 * recorded), no flush acts (a flush needs a set meeting the subnormals),
 * and the window of k ulps [RU(l), RD(h)] with RN(l) and RN(h) added is
 * exactly [RN(l), RN(h)] (RN(l) <= RU(l), RD(h) <= RN(h), l <= h).  Any
 * element the guard refuses goes to the per-element code, which computes
 * it from the start.  The one case left, the range clip, is computed as
 * there.
 *
 * The rounding sets dropped at plan time (each contained in the hull of
 * the ones kept, and the value's finite part is a hull):
 *
 *  (1) [RN_T(a), RN_T(b)] of the exact range E = [a, b] when the window
 *      of k ulps in T applies: the window is [RN_T(l), RN_T(h)] with
 *      l <= a and b <= h, and RN_T is monotone.  The same in W and in C.
 *  (2) The straight [RN_T(a), RN_T(b)] of an op computed in C when the C
 *      set Y holds E: then RN_T(E) lies inside RN_T(Y), again by
 *      monotony.  Y holds E for a multiply that may feed an FMA (Y then
 *      holds E itself), always; and for a function whose window is k >= 3/2
 *      ulps of C, before the range clip: its lower end RN_C(l) is within
 *      half a spacing of C of l = a - u, and u = k ulp_C(m+) is at least
 *      that half spacing (m+ is above every magnitude of the set, and on
 *      the negative side, where l may lie one binade above m+, half that
 *      binade's spacing is ulp_C(m+) <= u), so RN_C(l) <= a; the upper
 *      end likewise.  The clip may cut Y inside E where the libm
 *      enclosure of E pokes past the function's range, so this drop is
 *      checked per element (E inside the clipped Y, two comparisons,
 *      which is all the drop needs; the proof says it fails only
 *      there); an element where it fails goes to the per-element code.
 *
 * tests/envelope/test_envelope_loops.c compares the loops with the
 * per-element code on random operand sets, every profile, op and type.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "domain.h"
#include "envelope.h"
#include "envelope_fast.h"
#include "envelope_internal.h"
#include "envelope_round.h"

/*
 * The loops compiled twice where the compiler and the C library can
 * choose between versions when the program starts (GCC's target_clones,
 * an ifunc of glibc on x86-64): for x86-64-v3 (AVX2, and FMA, which makes
 * the error of a product one instruction instead of a call into libm)
 * and for the baseline.  Both compute the same doubles: every operation
 * is an IEEE operation rounded to nearest, which the instruction set
 * does not change, and contraction into FMAs stays off (-ffp-contract=off
 * in oracles/sources_envelope.cmake).  Measured by bench_envelope
 * (docs/performance.md, section 4).  Elsewhere (clang, other machines,
 * other C libraries) the one baseline version.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define ENV_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#endif
#ifndef ENV_CLONES
#define ENV_CLONES
#endif

/* The loop of an op: its exact range. */
enum {
	ENV_LOOP_ADD,
	ENV_LOOP_SUBTRACT,
	ENV_LOOP_MULTIPLY,
	ENV_LOOP_DIVIDE,
	ENV_LOOP_FUNCTION,
	ENV_LOOP_CONVERT
};

/* The types the loops round into. */
enum { ENV_TY_NONE, ENV_TY_F32, ENV_TY_BF16, ENV_TY_F16 };

static int loop_type(usc_dtype t)
{
	switch (t) {
	case USC_F32: return ENV_TY_F32;
	case USC_BF16: return ENV_TY_BF16;
	case USC_F16: return ENV_TY_F16;
	default: return ENV_TY_NONE;
	}
}

/*
 * The smallest normal value below which operand k of op may be read as
 * zero (the larger of its type's and its excess type's, where they flush
 * inputs: the subnormal ranges are nested), 0 when none flushes.
 */
static double input_edge(const env_fin *f, const env_state *s, unsigned k)
{
	double mn = 0;

	for (int j = 0; j < 2; j++) {
		usc_dtype ft = f->flush_in[k][j];

		if (ft != USC_DTYPE_INVALID && s->info[ft].min_normal > mn)
			mn = s->info[ft].min_normal;
	}
	return mn;
}

/* The finish of f (its rounding sets) as the loops compute it. */
static void rounds_make(const env_state *s, const env_fin *f, bool fma_mul,
			env_rounds *r)
{
	usc_dtype ts[3] = {f->t, f->c, f->w};
	double mn = 0, mx = INFINITY;

	memset(r, 0, sizeof *r);
	r->t = loop_type(f->t);
	r->c = loop_type(f->c);
	r->w = loop_type(f->w);
	for (int j = 0; j < 3; j++) {
		if (ts[j] == USC_DTYPE_INVALID)
			continue;
		if (s->info[ts[j]].min_normal > mn)
			mn = s->info[ts[j]].min_normal;
		if (s->info[ts[j]].max_finite < mx)
			mx = s->info[ts[j]].max_finite;
	}
	r->pt = s->info[f->t].precision;
	r->et = s->info[f->t].emin;
	if (f->c != USC_DTYPE_INVALID) {
		r->pc = s->info[f->c].precision;
		r->ec = s->info[f->c].emin;
	}
	if (f->w != USC_DTYPE_INVALID) {
		r->pw = s->info[f->w].precision;
		r->ew = s->info[f->w].emin;
	}
	r->guard_lo = 2 * mn;
	r->guard_hi = mx / 2;
	r->k = f->k;
	r->win = f->k > 0.5;
	r->exact = fma_mul;
	/* Drop (2) of the opening comment; checked per element for k >= 3/2. */
	r->straight = r->c != ENV_TY_NONE && !r->exact;
	r->straight_check = r->straight && r->win && f->k >= 1.5;
	if (r->straight_check)
		r->straight = false;
	r->flags = FIN | (r->win ? APRX : 0) | (f->nosub ? NOSUB : 0);
}

void usc__env_loop_plan(env_state *s, const usc__dom_op *op)
{
	env_plan *p = &s->plan;
	env_loop *l = &p->loop;
	const env_fin *f = &p->fin;

	memset(l, 0, sizeof *l);
	if (s->no_loops || s->mpfr_only || !f->ok)
		return;
	if (p->conv) {
		l->kind = ENV_LOOP_CONVERT;
	} else if (!p->fast) {
		return;
	} else {
		switch (op->op) {
		case USC_HLO_OP_ADD: l->kind = ENV_LOOP_ADD; break;
		case USC_HLO_OP_SUBTRACT: l->kind = ENV_LOOP_SUBTRACT; break;
		case USC_HLO_OP_MULTIPLY: l->kind = ENV_LOOP_MULTIPLY; break;
		case USC_HLO_OP_DIVIDE:
			/*
			 * The rewrite for constant divisors only: decided by
			 * the divisor's instruction, once for the op; without
			 * one, per element (a point divisor), which the loops
			 * leave to the per-element code.
			 */
			l->recip = p->recip;
			if (l->recip == 2) {
				if (!op->instr || op->instr->operand_count != 2)
					return;
				l->recip = usc__env_reciprocal_allowed(s, op,
								       NULL);
			}
			if (!p->fin_mul.ok)
				return;
			l->kind = ENV_LOOP_DIVIDE;
			break;
		default:
			if (!p->fn || op->nargs != 1)
				return;
			l->kind = ENV_LOOP_FUNCTION;
			break;
		}
	}
	if (loop_type(f->t) == ENV_TY_NONE)
		return;
	rounds_make(s, f, op->op == USC_HLO_OP_MULTIPLY && s->prof.fma, &l->r);
	if (l->kind == ENV_LOOP_DIVIDE && l->recip == 1)
		rounds_make(s, &p->fin_mul, s->prof.fma, &l->r_mul);
	for (unsigned k = 0; k < op->nargs && k < 2; k++)
		l->in_mn[k] = input_edge(f, s, k);
	l->dom_lo = -INFINITY;
	if (l->kind == ENV_LOOP_FUNCTION) {
		switch (op->op) {
		case USC_HLO_OP_LOG:
		case USC_HLO_OP_SQRT:
		case USC_HLO_OP_RSQRT:
			l->dom_lo = 0;
			break;
		case USC_HLO_OP_LOG_PLUS_ONE:
			l->dom_lo = -1;
			break;
		case USC_HLO_OP_LOGISTIC:
			/* unary_range of envelope_fast.c: exp(-x) may overflow. */
			l->dom_lo = -700;
			l->dom_closed = true;
			break;
		default:
			break;
		}
	}
	l->on = true;
}

/* ----------------------------------------------------- rounding loops */

/* a[j] rounded to nearest-even into type ty, for j < m. */
ENV_CLONES
static void rn_loop(int ty, const double *a, double *r, size_t m)
{
	switch (ty) {
	case ENV_TY_F32:
		for (size_t j = 0; j < m; j++)
			r[j] = (double)(float)a[j];
		break;
	case ENV_TY_BF16:
		for (size_t j = 0; j < m; j++)
			r[j] = usc__env_round_bits(a[j], 8, USC_RND_NEAREST_EVEN);
		break;
	case ENV_TY_F16:
		for (size_t j = 0; j < m; j++)
			r[j] = usc__env_round_bits(a[j], 11, USC_RND_NEAREST_EVEN);
		break;
	default:
		break;
	}
}

/*
 * The set of one type (precision p, smallest exponent e) of the exact
 * ranges [lo[j], hi[j]]: the window of k ulps when win (its ends rounded
 * to nearest: (1) of the opening comment), else the range rounded to
 * nearest.
 */
ENV_CLONES
static void set_loop(int ty, int p, int e, bool win, double k,
		     const double *lo, const double *hi, double *rl,
		     double *rh, size_t m)
{
	if (win) {
		for (size_t j = 0; j < m; j++)
			usc__env_window_ends(p, e, lo[j], hi[j], k, &rl[j],
					     &rh[j]);
		rn_loop(ty, rl, rl, m);
		rn_loop(ty, rh, rh, m);
		return;
	}
	rn_loop(ty, lo, rl, m);
	rn_loop(ty, hi, rh, m);
}

/* [rl, rh] |= [al, ah], element by element. */
ENV_CLONES
static void hull_loop(double *rl, double *rh, const double *al,
		      const double *ah, size_t m)
{
	for (size_t j = 0; j < m; j++) {
		rl[j] = al[j] < rl[j] ? al[j] : rl[j];
		rh[j] = ah[j] > rh[j] ? ah[j] : rh[j];
	}
}

/*
 * Whether [l, h] is plain: on one side of zero with a magnitude in
 * [g_lo, g_hi] (false for a NaN end).
 */
static inline bool plain_ends(const env_rounds *L, double l, double h)
{
	/*
	 * Bitwise, not short-circuit: the side of zero follows the data, and
	 * a branch on it would be mispredicted half the time.
	 */
	return ((l >= L->guard_lo) & (h <= L->guard_hi)) |
	       ((h <= -L->guard_lo) & (l >= -L->guard_hi));
}

/* The range clip of envelope_fast.c on [rl, rh], the CLIP flag into cf. */
ENV_CLONES
static void clip_loop(const env_fin *f, double *rl, double *rh,
		      unsigned *cf, size_t m)
{
	for (size_t j = 0; j < m; j++) {
		bool cl = rl[j] < f->clip_lo, ch = rh[j] > f->clip_hi;

		rl[j] = cl ? f->clip_lo : rl[j];
		rh[j] = ch ? f->clip_hi : rh[j];
		cf[j] |= (unsigned)(cl | ch) * CLIP;
	}
}

/* ---------------------------------------------------------- the loop */

/*
 * The rounding sets of R (and f's range clip) of the exact ranges
 * [lo[j], hi[j]] into [rl[j], rh[j]] (finish_d of envelope_fast.c);
 * ok[j] cleared where an element is not plain or a dropped set is not
 * contained, CLIP added to cf[j] where the clip acted.
 */
ENV_CLONES
static void finish_loop(const env_rounds *R, const env_fin *f,
			const double *lo, const double *hi, double *rl,
			double *rh, unsigned *cf, unsigned char *ok, size_t m)
{
	double ql[USC__ENV_CHUNK], qh[USC__ENV_CHUNK];

	if (R->c == ENV_TY_NONE) {
		set_loop(R->t, R->pt, R->et, R->win, R->k, lo, hi, rl, rh, m);
		if (R->w != ENV_TY_NONE) {
			set_loop(R->w, R->pw, R->ew, R->win, R->k, lo, hi, ql,
				 qh, m);
			hull_loop(rl, rh, ql, qh, m);
		}
		/* The sets before the clip must be plain too. */
		for (size_t j = 0; j < m; j++)
			ok[j] &= plain_ends(R, rl[j], rh[j]);
		if (f->clip)
			clip_loop(f, rl, rh, cf, m);
		if (R->exact)
			hull_loop(rl, rh, lo, hi, m);
	} else {
		/* The C set Y in ql, qh; plain before the clip too. */
		set_loop(R->c, R->pc, R->ec, R->win, R->k, lo, hi, ql, qh, m);
		for (size_t j = 0; j < m; j++)
			ok[j] &= plain_ends(R, ql[j], qh[j]);
		if (f->clip)
			clip_loop(f, ql, qh, cf, m);
		if (R->exact)
			hull_loop(ql, qh, lo, hi, m);
		for (size_t j = 0; j < m; j++)
			ok[j] &= plain_ends(R, ql[j], qh[j]);
		rn_loop(R->t, ql, rl, m);
		rn_loop(R->t, qh, rh, m);
		if (R->straight) {
			double sl[USC__ENV_CHUNK], sh[USC__ENV_CHUNK];

			rn_loop(R->t, lo, sl, m);
			rn_loop(R->t, hi, sh, m);
			hull_loop(rl, rh, sl, sh, m);
		}
		if (R->straight_check)
			for (size_t j = 0; j < m; j++)
				ok[j] &= (lo[j] >= ql[j]) & (hi[j] <= qh[j]);
		if (R->w != ENV_TY_NONE)
			hull_loop(rl, rh, ql, qh, m);
	}
	for (size_t j = 0; j < m; j++)
		ok[j] &= plain_ends(R, rl[j], rh[j]) & (rl[j] <= rh[j]);
}

/* Whether operand x is plain: a finite set out of reach of a flush. */
static inline bool plain_operand(const value *x, double mn)
{
	/* Bitwise: the sign of the set follows the data (plain_ends). */
	return ((x->flags & (FIN | VNAN | PINF | NINF | UNK)) == FIN) &
	       (x->lo <= x->hi) & !((x->lo < mn) & (x->hi > -mn));
}

ENV_CLONES
size_t usc__env_loops(env_state *s, const usc__dom_op *op, size_t i0,
		      size_t n, value *out, const void *const *args,
		      unsigned scalar_args, unsigned rounds,
		      unsigned char *done)
{
	const env_loop *L = &s->plan.loop;
	const env_plan *p = &s->plan;
	const value *va = args[0], *vb = op->nargs > 1 ? args[1] : NULL;
	bool sa = scalar_args & 1, sb = (scalar_args >> 1) & 1;
	double xl[USC__ENV_CHUNK], xh[USC__ENV_CHUNK];
	double yl[USC__ENV_CHUNK], yh[USC__ENV_CHUNK];
	double lo[USC__ENV_CHUNK], hi[USC__ENV_CHUNK];
	double rl[USC__ENV_CHUNK], rh[USC__ENV_CHUNK];
	unsigned cf[USC__ENV_CHUNK], tf[USC__ENV_CHUNK];
	unsigned char ok[USC__ENV_CHUNK];
	float rc[USC__ENV_CHUNK];
	unsigned short idx[USC__ENV_CHUNK];
	unsigned flags = L->r.flags;
	size_t m = 0, kept = 0;

	/*
	 * Gather the plain elements' operands into arrays: every element is
	 * written at position m and m moves on only for a plain one, so the
	 * loop has no branch on the data.
	 */
	for (size_t j = 0; j < n; j++) {
		const value *x = &va[sa ? 0 : i0 + j];
		const value *y = vb ? &vb[sb ? 0 : i0 + j] : x;
		bool px = plain_operand(x, L->in_mn[0]);
		bool py = !vb || plain_operand(y, L->in_mn[1]);
		bool pl = px & py;
		float r = 0;

		done[j] = 0;
		idx[m] = (unsigned short)j;
		ok[m] = 1;
		xl[m] = x->lo;
		xh[m] = x->hi;
		yl[m] = y->lo;
		yh[m] = y->hi;
		/*
		 * What env_apply adds to every result: the flush and
		 * approximation taints of the operands (a plain operand is
		 * out of the flush's reach itself) and the count of
		 * roundings, the same float operations in the same order.
		 */
		cf[m] = (x->flags | (vb ? y->flags : 0)) & CLIP;
		tf[m] = (x->flags | (vb ? y->flags : 0)) & (FLSH | APRX);
		if (rounds)
			r += x->roundings;
		else
			r = x->roundings > r ? x->roundings : r;
		if (vb) {
			if (rounds)
				r += y->roundings;
			else
				r = y->roundings > r ? y->roundings : r;
		}
		rc[m] = r + (float)rounds;
		m += pl;
	}
	if (m == 0)
		return 0;
	/* The exact range E = [lo, hi], outward, one loop per op. */
	switch (L->kind) {
	case ENV_LOOP_ADD:
		for (size_t j = 0; j < m; j++) {
			lo[j] = add_rd(xl[j], yl[j]);
			hi[j] = add_ru(xh[j], yh[j]);
		}
		break;
	case ENV_LOOP_SUBTRACT:
		for (size_t j = 0; j < m; j++) {
			lo[j] = add_rd(xl[j], -yh[j]);
			hi[j] = add_ru(xh[j], -yl[j]);
		}
		break;
	case ENV_LOOP_MULTIPLY:
		for (size_t j = 0; j < m; j++)
			usc__env_mul_range(xl[j], xh[j], yl[j], yh[j], &lo[j],
					   &hi[j]);
		break;
	case ENV_LOOP_DIVIDE:
		/* A divisor set that may be 0: the per-element code. */
		for (size_t j = 0; j < m; j++) {
			if (!(yl[j] > 0 || yh[j] < 0)) {
				ok[j] = 0;
				yl[j] = yh[j] = 1;
			}
			usc__env_div_range(xl[j], xh[j], yl[j], yh[j], &lo[j],
					   &hi[j]);
		}
		break;
	case ENV_LOOP_FUNCTION:
		/*
		 * unary_range of envelope_fast.c; an operand it refuses (at or
		 * past the domain's edge, a point zero) is not plain.
		 */
		for (size_t j = 0; j < m; j++) {
			double fl, fh, t;
			bool in = (xl[j] > L->dom_lo) |
				  (L->dom_closed & (xl[j] == L->dom_lo));

			if (!in || (xl[j] == 0 && xh[j] == 0)) {
				ok[j] = 0;
				lo[j] = hi[j] = 1;
				continue;
			}
			fl = p->fn(xl[j]);
			fh = xl[j] == xh[j] ? fl : p->fn(xh[j]);
			if (p->decreasing) {
				t = fl;
				fl = fh;
				fh = t;
			}
			lo[j] = usc__env_fn_bound(fl, p->libm_ulps, -1);
			hi[j] = usc__env_fn_bound(fh, p->libm_ulps, 1);
		}
		break;
	default: /* ENV_LOOP_CONVERT: the operand's values themselves */
		memcpy(lo, xl, m * sizeof *lo);
		memcpy(hi, xh, m * sizeof *hi);
		break;
	}
	/* The rounding sets, resolved at plan time. */
	finish_loop(&L->r, &p->fin, lo, hi, rl, rh, cf, ok, m);
	if (L->kind == ENV_LOOP_DIVIDE && L->recip == 1) {
		/*
		 * fast_reciprocal of envelope_fast.c: R = 1 / y rounded to
		 * nearest in T, C and W (their hull; plain, so out of the
		 * flush's reach as the multiply's second operand), then
		 * x * R with the multiply's rounding sets, united.
		 */
		const env_rounds *M = &L->r_mul;
		double al[USC__ENV_CHUNK], ah[USC__ENV_CHUNK];
		double bl[USC__ENV_CHUNK], bh[USC__ENV_CHUNK];
		int ts[3] = {M->t, M->c, M->w};

		for (size_t j = 0; j < m; j++) {
			lo[j] = div_rd(1, yh[j]);
			hi[j] = div_ru(1, yl[j]);
		}
		rn_loop(ts[0], lo, yl, m);
		rn_loop(ts[0], hi, yh, m);
		for (int k = 1; k < 3; k++) {
			if (ts[k] == ENV_TY_NONE)
				continue;
			rn_loop(ts[k], lo, al, m);
			rn_loop(ts[k], hi, ah, m);
			hull_loop(yl, yh, al, ah, m);
		}
		for (size_t j = 0; j < m; j++) {
			ok[j] &= plain_ends(M, yl[j], yh[j]);
			usc__env_mul_range(xl[j], xh[j], yl[j], yh[j], &lo[j],
					   &hi[j]);
		}
		finish_loop(M, &p->fin_mul, lo, hi, bl, bh, cf, ok, m);
		hull_loop(rl, rh, bl, bh, m);
		if (!(M->flags & NOSUB))
			flags &= ~(unsigned)NOSUB;
		flags |= M->flags & APRX;
	}
	/* The results of the kept elements. */
	for (size_t j = 0; j < m; j++) {
		value *r;

		if (!ok[j])
			continue;
		r = &out[i0 + idx[j]];
		r->lo = rl[j];
		r->hi = rh[j];
		r->bits = 0;
		r->flags = flags | cf[j] | tf[j];
		r->roundings = rc[j];
		done[idx[j]] = 1;
		kept++;
	}
	s->looped += kept;
	/* A convert is not counted as an op element (usc__env_fast_elem). */
	if (L->kind != ENV_LOOP_CONVERT)
		s->fast += kept;
	return kept;
}

void usc__envelope_set_loops(void *state, bool on)
{
	((env_state *)state)->no_loops = !on;
	usc__env_plan_forget(state);
}

uint64_t usc__envelope_looped(const void *state)
{
	return ((const env_state *)state)->looped;
}
