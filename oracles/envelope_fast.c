/*
 * The envelope's fast path (docs/envelope.md, "The fast path"): the
 * elementwise float ops whose operands are finite sets, and the rounding
 * sets of every freedom, computed in double arithmetic instead of MPFI
 * and MPFR.
 *
 * Soundness rests on one argument.  The MPFR path maps the exact range
 * E = [a, b] of an op through a union of monotone maps (round to nearest
 * in T, C or W, the T values within k ulps, flushing, the range clip):
 * each end of each set is a non-decreasing function of the matching end
 * of E, and a wider E can only add zero signs and specials.  Here E is
 * replaced by a double interval [lo, hi] with lo <= a and b <= hi
 * (outward rounding), so every set computed from it contains the one the
 * MPFR path computes from E.  What cannot be decided so (an operand that
 * may be infinite or NaN, a divisor or a function argument at a domain
 * edge, an overflow of double, a function without a documented libm
 * bound, a type wider than 24 bits of precision) returns false and the
 * caller takes the MPFR path: an escalation, counted.
 *
 * Outward rounding without changing the rounding mode: every operation
 * here runs in the default round-to-nearest, whose result r of an exact
 * x is within half a spacing of x, so x lies in [next_down(r),
 * next_up(r)] (nextafter toward -Inf and +Inf).  Where the rounding
 * error is computed exactly (TwoSum for a sum, an FMA for the error of a
 * product and the remainder of a quotient, both exact away from
 * underflow), its sign says on which side x lies and only that side is
 * moved.  A libm function f is trusted to the accuracy the tier assumes
 * (docs/tier.md, "libm accuracy assumed"): k ulps of double, bounded by
 * |f| (k + 1) 2^-52, plus a floor for subnormal results.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "domain.h"
#include "envelope.h"
#include "envelope_fast.h"
#include "envelope_internal.h"
#include "envelope_round.h"

/* ---------------------------------------------------- the rounding sets */

/* The types the fast path rounds into: at most 24 bits of precision. */
static bool fast_type(const env_state *s, usc_dtype t)
{
	return (t == USC_F32 || t == USC_BF16 || t == USC_F16) &&
	       s->has_info[t];
}

static double enc_dec(const env_state *s, usc_dtype t, double x,
		      usc_round_mode m, usc_overflow o)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t b = 0;
	double d = 0, a = fabs(x);

	if (t == USC_F32 && m == USC_RND_NEAREST_EVEN && o == USC_OVF_DEFAULT)
		return (double)(float)x;
	/* Normal results in line; zeros, subnormals, overflow: the codec. */
	if (a >= s->info[t].min_normal && a <= s->info[t].max_finite &&
	    (m == USC_RND_NEAREST_EVEN || m == USC_RND_UP ||
	     m == USC_RND_DOWN)) {
		d = usc__env_round_bits(x, s->info[t].precision, m);
		if (fabs(d) <= s->info[t].max_finite)
			return d;
	}
	r.mode = m;
	r.overflow = o;
	(void)usc_encode_double(t, x, &r, &b, NULL);
	(void)usc_decode_double(t, b, &d);
	return d;
}

/*
 * usc__env_add_rounded for double ends (finite): the image of [lo, hi]
 * under a monotone rounding into t, the same cases in the same order.
 */
static void add_rounded_d(const env_state *s, value *r, usc_dtype t, double lo,
			  double hi, usc_round_mode mode_lo,
			  usc_round_mode mode_hi, usc_overflow o, unsigned zs)
{
	double d1 = enc_dec(s, t, lo, mode_lo, o);
	double d2 = enc_dec(s, t, hi, mode_hi, o);
	double mx = s->info[t].max_finite;
	bool f1 = isfinite(d1), f2 = isfinite(d2);

	if (lo > hi)
		return;
	if (!f1)
		r->flags |= isnan(d1) ? VNAN : d1 > 0 ? PINF : NINF;
	if (!f2)
		r->flags |= isnan(d2) ? VNAN : d2 > 0 ? PINF : NINF;
	if (f1 && f2) {
		if (d1 <= d2)
			usc__env_hull(r, d1, d2, 0);
		else
			return;
	} else if (f1) {
		usc__env_hull(r, d1, mx, 0);
		d2 = mx;
	} else if (f2) {
		usc__env_hull(r, -mx, d2, 0);
		d1 = -mx;
	} else if (lo < 0 && hi > 0) {
		usc__env_hull(r, -mx, mx, 0);
		d1 = -mx;
		d2 = mx;
	} else
		return;
	if (d1 <= 0 && d2 >= 0) {
		if (lo < 0)
			r->flags |= ZNEG;
		if (hi > 0)
			r->flags |= ZPOS;
		if (lo <= 0 && hi >= 0)
			r->flags |= zs & (ZPOS | ZNEG);
	}
}

/*
 * k as the MPFR path multiplies by it: usc_ulp_mpfr leaves its result at 2
 * bits of precision, so the product k ulp is rounded up to 2 significant
 * bits (6.5 ulps become 8, 3.5 become 4, 2.5 become 3; 1.5 stays).  The
 * fast path keeps that bound, so that it contains the MPFR envelope.
 */
static double k_two_bits(double k)
{
	int e;
	double f = frexp(k, &e);

	return ldexp(ceil(f * 4) / 4, e);
}

/*
 * add_within of envelope.c: the t values within k ulps of [lo, hi] (k as
 * k_two_bits gives it).
 */
static void add_within_d(const env_state *s, value *r, usc_dtype t, double lo,
			 double hi, double k, usc_overflow o, unsigned zs)
{
	double l, h;

	usc__env_window_ends(s->info[t].precision, s->info[t].emin, lo, hi, k,
			     &l, &h);
	r->flags |= APRX;
	add_rounded_d(s, r, t, l, h, USC_RND_UP, USC_RND_DOWN, o, zs);
	add_rounded_d(s, r, t, l, l, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
		      o, zs);
	add_rounded_d(s, r, t, h, h, USC_RND_NEAREST_EVEN, USC_RND_NEAREST_EVEN,
		      o, zs);
}

static void add_exact_d(value *r, double lo, double hi, unsigned zs)
{
	if (lo <= hi)
		usc__env_hull(r, lo, hi,
			      zs | (lo < 0 ? ZNEG : 0) | (hi > 0 ? ZPOS : 0));
}

/*
 * The clip of a function's range (clip_range of envelope.c, the same
 * statements), on the range the plan looked up once (fin_make).
 */
static inline void clip(const env_fin *f, value *x)
{
	if (!f->clip || !(x->flags & FIN))
		return;
	if (x->lo < f->clip_lo) {
		x->lo = f->clip_lo;
		x->flags |= CLIP;
	}
	if (x->hi > f->clip_hi) {
		x->hi = f->clip_hi;
		x->flags |= CLIP;
	}
	if (f->clip_hi < INFINITY && (x->flags & PINF)) {
		x->flags &= ~(unsigned)PINF;
		x->flags |= CLIP;
	}
	if (f->clip_lo > -INFINITY && (x->flags & NINF)) {
		x->flags &= ~(unsigned)NINF;
		x->flags |= CLIP;
	}
}

/*
 * usc__env_flush_mode where it can act: a finite part that meets t's
 * subnormals (the test it starts with, made here first, in line).
 */
static inline void flush_d(const env_state *s, value *x, usc_dtype t,
			   bool forced)
{
	double mn = s->info[t].min_normal;

	if ((x->flags & FIN) && x->lo < mn && x->hi > -mn &&
	    !(x->lo == 0 && x->hi == 0))
		usc__env_flush_mode(s, x, t, forced);
}

/* finish_in of envelope.c: computed in c, rounded once more to t. */
static void finish_in_d(env_state *s, const env_fin *f, value *x, double lo,
			double hi, unsigned zs, usc_overflow o, bool may_skip)
{
	usc_dtype t = f->t, c = f->c;
	value y;

	memset(&y, 0, sizeof y);
	add_rounded_d(s, &y, c, lo, hi, USC_RND_NEAREST_EVEN,
		      USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, zs);
	if (f->k > 0.5)
		add_within_d(s, &y, c, lo, hi, f->k, USC_OVF_DEFAULT, zs);
	clip(f, &y);
	if (f->flush_c)
		flush_d(s, &y, c, f->forced);
	if (may_skip)
		add_exact_d(&y, lo, hi, zs);
	x->flags |= y.flags & (VNAN | CLIP | FLSH | APRX);
	if (y.flags & PINF)
		usc__env_add_bits(x, t, usc__env_rn_double(t, INFINITY));
	if (y.flags & NINF)
		usc__env_add_bits(x, t, usc__env_rn_double(t, -INFINITY));
	if (y.flags & FIN)
		add_rounded_d(s, x, t, y.lo, y.hi, USC_RND_NEAREST_EVEN,
			      USC_RND_NEAREST_EVEN, o, y.flags & (ZPOS | ZNEG));
	add_rounded_d(s, x, t, lo, hi, USC_RND_NEAREST_EVEN,
		      USC_RND_NEAREST_EVEN, o, zs);
	if (f->w != USC_DTYPE_INVALID)
		usc__env_unite(x, &y);
}

/* What the rounding sets of op (declared type t) need, decided once. */
static void fin_make(const env_state *s, const usc__dom_op *op, usc_dtype t,
		     env_fin *f)
{
	double k = usc__env_accuracy_of(s, op->op);

	memset(f, 0, sizeof *f);
	f->op = op->op;
	f->t = t;
	f->w = usc__env_excess_for(s, t);
	f->c = op->op == USC_HLO_OP_CONVERT ? USC_DTYPE_INVALID
					    : usc__env_compute_for(s, t);
	f->k = k > 0.5 ? k_two_bits(k) : 0.5;
	f->forced = usc__env_flush_forced(s, op->op);
	f->clip = usc__env_range_of(op->op, &f->clip_lo, &f->clip_hi);
	f->nosub = usc__env_never_subnormal(s, op, t);
	f->ok = !s->mpfr_only && fast_type(s, t) &&
		(f->w == USC_DTYPE_INVALID || fast_type(s, f->w)) &&
		(f->c == USC_DTYPE_INVALID || fast_type(s, f->c));
	if (!f->ok)
		return;
	/* usc__env_flush_inputs: the operand's type and its excess type. */
	for (unsigned a = 0; a < 2; a++) {
		usc_dtype at = a < op->nargs ? op->arg[a] : USC_DTYPE_INVALID;
		usc_dtype ts[2] = {at, usc__env_excess_for(s, at)};

		for (int j = 0; j < 2; j++) {
			bool on = ts[j] != USC_DTYPE_INVALID &&
				  s->has_info[ts[j]] &&
				  (s->prof.flush[ts[j]] & USC_FLUSH_INPUTS);

			f->flush_in[a][j] = on ? ts[j] : USC_DTYPE_INVALID;
		}
	}
	f->flush_t = (s->prof.flush[t] & USC_FLUSH_OUTPUTS) != 0;
	f->flush_c = f->c != USC_DTYPE_INVALID &&
		     (s->prof.flush[f->c] & USC_FLUSH_OUTPUTS);
	f->flush_w = f->w != USC_DTYPE_INVALID &&
		     (s->prof.flush[f->w] & USC_FLUSH_OUTPUTS);
}

/* usc__env_finish for a finite double range [lo, hi] (lo <= hi). */
static void finish_d(env_state *s, const env_fin *f, value *r, double lo,
		     double hi, unsigned zs, usc_overflow o, bool may_skip)
{
	usc_dtype t = f->t, w = f->w;
	value x;

	memset(&x, 0, sizeof x);
	if (f->c != USC_DTYPE_INVALID) {
		finish_in_d(s, f, &x, lo, hi, zs, o, may_skip);
		if (f->flush_t)
			flush_d(s, &x, t, f->forced);
		if (f->nosub)
			x.flags |= NOSUB;
		usc__env_unite(r, &x);
		return;
	}
	add_rounded_d(s, &x, t, lo, hi, USC_RND_NEAREST_EVEN,
		      USC_RND_NEAREST_EVEN, o, zs);
	if (f->k > 0.5)
		add_within_d(s, &x, t, lo, hi, f->k, o, zs);
	if (w != USC_DTYPE_INVALID) {
		add_rounded_d(s, &x, w, lo, hi, USC_RND_NEAREST_EVEN,
			      USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, zs);
		if (f->k > 0.5)
			add_within_d(s, &x, w, lo, hi, f->k, USC_OVF_DEFAULT,
				     zs);
	}
	clip(f, &x);
	if (f->flush_t)
		flush_d(s, &x, t, f->forced);
	if (f->flush_w)
		flush_d(s, &x, w, f->forced);
	if (may_skip)
		add_exact_d(&x, lo, hi, zs);
	if (f->nosub)
		x.flags |= NOSUB;
	usc__env_unite(r, &x);
}

void usc__env_finish_d(env_state *s, const usc__dom_op *op, value *r,
		       usc_dtype t, double lo, double hi, unsigned zs,
		       usc_overflow o, bool may_skip)
{
	env_fin own;
	const env_fin *f = &s->plan.fin;

	/* The plan of the op being applied, else one made here. */
	if (s->plan.op != op || f->t != t) {
		fin_make(s, op, t, &own);
		f = &own;
	}
	if (f->ok && isfinite(lo) && isfinite(hi) && lo <= hi) {
		finish_d(s, f, r, lo, hi, zs, o, may_skip);
		return;
	}
	mpfr_set_d(s->a, lo, MPFR_RNDD);
	mpfr_set_d(s->b, hi, MPFR_RNDU);
	usc__env_finish(s, op, r, t, s->a, s->b, zs, o, may_skip);
}

/* ------------------------------------------------------- exact ranges */

/* A finite set that is one value with one known zero sign. */
static bool signed_point(const value *v, double *x)
{
	unsigned z = v->flags & (ZPOS | ZNEG);

	if (v->lo != v->hi)
		return false;
	if (v->lo != 0) {
		*x = v->lo;
		return true;
	}
	if (z == ZPOS || z == ZNEG) {
		*x = z == ZNEG ? -0.0 : 0.0;
		return true;
	}
	return false;
}

/*
 * The zero signs of an exact range [lo, hi]: both unless the operands
 * are signed points, whose IEEE result r then gives its own sign (the
 * oracle's zero-sign rules are IEEE's).
 */
static unsigned zero_signs(bool points, double r)
{
	if (!points)
		return ZPOS | ZNEG;
	return signbit(r) ? ZNEG : ZPOS;
}

/* The libm accuracy the tier assumes, in ulps of double (docs/tier.md). */
static double libm_ulps(usc_hlo_opcode op)
{
	switch (op) {
	case USC_HLO_OP_SQRT: return 1;
	case USC_HLO_OP_RSQRT: return 2;
	case USC_HLO_OP_CBRT: return 8;
	case USC_HLO_OP_LOGISTIC: return 8;
	default: return 4;
	}
}

static double logistic(double x)
{
	return 1 / (1 + exp(-x));
}

static double rsqrt(double x)
{
	return 1 / sqrt(x);
}

/* The libm function of a monotone unary op, or NULL. */
static double (*monotone_fn(usc_hlo_opcode op, bool *decreasing))(double)
{
	*decreasing = false;
	switch (op) {
	case USC_HLO_OP_EXPONENTIAL: return exp;
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: return expm1;
	case USC_HLO_OP_LOG: return log;
	case USC_HLO_OP_LOG_PLUS_ONE: return log1p;
	case USC_HLO_OP_TANH: return tanh;
	case USC_HLO_OP_ERF: return erf;
	case USC_HLO_OP_LOGISTIC: return logistic;
	case USC_HLO_OP_SQRT: return sqrt;
	case USC_HLO_OP_CBRT: return cbrt;
	case USC_HLO_OP_RSQRT: *decreasing = true; return rsqrt;
	default: return NULL;
	}
}

/* Whether x is strictly inside op's domain, away from its edge and pole. */
static bool inside_domain(usc_hlo_opcode op, const value *x)
{
	switch (op) {
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_SQRT:
	case USC_HLO_OP_RSQRT:
		return x->lo > 0;
	case USC_HLO_OP_LOG_PLUS_ONE:
		return x->lo > -1;
	default:
		return true;
	}
}

/*
 * The exact range of a unary function over the finite set x: the ends
 * through libm, widened by its bound.  false: not decided here.
 */
static bool unary_range(const env_plan *p, const value *x, double *lo,
			double *hi, unsigned *zs)
{
	double fl, fh;

	if (!p->fn || !inside_domain(p->fin.op, x))
		return false;
	/*
	 * logistic below -700: exp(-x) may overflow to Inf, and 1 / Inf = 0
	 * is further from the exact value than the floor of fn_bound.
	 */
	if (p->fin.op == USC_HLO_OP_LOGISTIC && x->lo < -700)
		return false;
	/* A point zero of an odd function keeps its sign: the oracle's. */
	if (x->lo <= 0 && x->hi >= 0 && x->lo == x->hi)
		return false;
	fl = p->fn(x->lo);
	fh = x->lo == x->hi ? fl : p->fn(x->hi);
	if (!isfinite(fl) || !isfinite(fh))
		return false;
	if (p->decreasing) {
		double t = fl;

		fl = fh;
		fh = t;
	}
	*lo = usc__env_fn_bound(fl, p->libm_ulps, -1);
	*hi = usc__env_fn_bound(fh, p->libm_ulps, 1);
	*zs = ZPOS | ZNEG;
	return isfinite(*lo) && isfinite(*hi);
}

/* The exact range of x op y for finite sets (add, subtract, multiply, divide). */
static bool binary_range(usc_hlo_opcode opc, const value *x, const value *y,
			 double *lo, double *hi, unsigned *zs)
{
	double px = 0, py = 0;
	bool points = signed_point(x, &px) && signed_point(y, &py);

	switch (opc) {
	case USC_HLO_OP_ADD:
		*lo = add_rd(x->lo, y->lo);
		*hi = add_ru(x->hi, y->hi);
		*zs = zero_signs(points, px + py);
		break;
	case USC_HLO_OP_SUBTRACT:
		*lo = add_rd(x->lo, -y->hi);
		*hi = add_ru(x->hi, -y->lo);
		*zs = zero_signs(points, px - py);
		break;
	case USC_HLO_OP_MULTIPLY:
		usc__env_mul_range(x->lo, x->hi, y->lo, y->hi, lo, hi);
		*zs = zero_signs(points, px * py);
		break;
	case USC_HLO_OP_DIVIDE:
		/* A divisor that may be 0 goes to the MPFR path. */
		if (y->lo <= 0 && y->hi >= 0)
			return false;
		usc__env_div_range(x->lo, x->hi, y->lo, y->hi, lo, hi);
		*zs = zero_signs(points, px / py);
		break;
	default:
		return false;
	}
	/* A zero of unknown sign in an operand gives both signs. */
	if (*lo == 0 && *hi == 0 && !points)
		*zs = ZPOS | ZNEG;
	return isfinite(*lo) && isfinite(*hi);
}

/* ------------------------------------------------------------- the op */

static bool finite_only(const value *v)
{
	return (v->flags & (FIN | VNAN | PINF | NINF | UNK)) == FIN;
}

/*
 * Operand k (x) read as usc__env_flush_inputs reads it, on the plan's
 * types: a copy in own, made only when x meets the subnormals (flush_d's
 * test), so that the common operand is read where it lies; else x.
 */
static inline const value *flushed_input(const env_state *s,
					 const env_fin *fin, unsigned k,
					 const value *x, value *own)
{
	for (int j = 0; j < 2; j++) {
		usc_dtype ft = fin->flush_in[k][j];
		double mn;

		if (ft == USC_DTYPE_INVALID)
			continue;
		mn = s->info[ft].min_normal;
		if (!((x->flags & FIN) && x->lo < mn && x->hi > -mn &&
		      !(x->lo == 0 && x->hi == 0)))
			continue;
		if (x != own) {
			*own = *x;
			x = own;
		}
		flush_d(s, own, ft, false);
	}
	return x;
}

/*
 * x op y (or op x) into r on the plan p: the operands read as the profile
 * lets them (flushed inputs), the exact range, the rounding sets, and for
 * a divide the x * RN(1 / y) rewrite where the profile allows it.
 */
static bool fast_op(env_state *s, const env_plan *p, usc_hlo_opcode opc,
		    const env_fin *fin, const usc__dom_op *op, unsigned nargs,
		    value *r, const value *const *a0, bool recip_step);

/* by_reciprocal of envelope.c: x * RN(1 / y) in T, C and W. */
static bool fast_reciprocal(env_state *s, const env_plan *p,
			    const usc__dom_op *op, value *r, const value *x,
			    const value *y)
{
	usc__dom_op m = *op;
	usc_dtype ts[3] = {p->fin.t, p->fin.c, p->fin.w};
	value rec;
	const value *b[2];
	double lo = div_rd(1, y->hi), hi = div_ru(1, y->lo);

	memset(&rec, 0, sizeof rec);
	for (int j = 0; j < 3; j++)
		if (ts[j] != USC_DTYPE_INVALID)
			add_rounded_d(s, &rec, ts[j], lo, hi,
				      USC_RND_NEAREST_EVEN,
				      USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
				      ZPOS | ZNEG);
	if (!finite_only(&rec))
		return false;
	m.op = USC_HLO_OP_MULTIPLY;
	m.arg[1] = op->result;
	b[0] = x;
	b[1] = &rec;
	return fast_op(s, p, USC_HLO_OP_MULTIPLY, &p->fin_mul, &m, 2, r, b,
		       true);
}

static bool fast_op(env_state *s, const env_plan *p, usc_hlo_opcode opc,
		    const env_fin *fin, const usc__dom_op *op, unsigned nargs,
		    value *r, const value *const *a0, bool recip_step)
{
	value own[2];
	const value *x[2] = {NULL, NULL};
	double lo, hi;
	unsigned zs;
	bool ok;

	for (unsigned k = 0; k < nargs; k++) {
		if (!finite_only(a0[k]))
			return false;
		x[k] = flushed_input(s, fin, k, a0[k], &own[k]);
	}
	ok = nargs == 1 ? unary_range(p, x[0], &lo, &hi, &zs)
			: binary_range(opc, x[0], x[1], &lo, &hi, &zs);
	if (!ok)
		return false;
	finish_d(s, fin, r, lo, hi, zs, USC_OVF_DEFAULT,
		 opc == USC_HLO_OP_MULTIPLY && s->prof.fma);
	if (opc == USC_HLO_OP_DIVIDE && !recip_step &&
	    (p->recip == 1 ||
	     (p->recip == 2 && usc__env_reciprocal_allowed(s, op, x[1]))))
		return fast_reciprocal(s, p, op, r, x[0], x[1]);
	return true;
}

/*
 * Whether a and b are the same op for a plan: every field the plan reads
 * (the instruction decides a divide's rewrite for constant divisors).
 */
static bool same_op(const usc__dom_op *a, const usc__dom_op *b)
{
	if (a->op != b->op || a->result != b->result || a->nargs != b->nargs ||
	    a->instr != b->instr || a->cmp_dir != b->cmp_dir ||
	    a->cmp_type != b->cmp_type ||
	    a->exponent_bits != b->exponent_bits ||
	    a->mantissa_bits != b->mantissa_bits)
		return false;
	for (unsigned k = 0; k < USC__DOM_MAX_ARGS; k++)
		if (a->arg[k] != b->arg[k])
			return false;
	return true;
}

static void plan_make(env_state *s, const usc__dom_op *op);

void usc__env_fast_plan(env_state *s, const usc__dom_op *op)
{
	/*
	 * s->plan is made only here and kept between apply calls
	 * (usc__env_fast_plan_end clears its op alone), so while the plan
	 * is remembered, s->plan holds it: a kernel's reductions apply
	 * their body to one element at a time, and copying the plan (half a
	 * kilobyte) on every call was a tenth of the envelope's time on
	 * softmax.
	 */
	if (s->plan_cached && same_op(&s->plan_key, op)) {
		s->plan.op = op;
		return;
	}
	plan_make(s, op);
	s->plan_key = *op;
	s->plan_cached = true;
}

void usc__env_plan_forget(env_state *s)
{
	s->plan_cached = false;
}

static void plan_make(env_state *s, const usc__dom_op *op)
{
	env_plan *p = &s->plan;
	usc__dom_op m;

	memset(p, 0, sizeof *p);
	p->op = op;
	fin_make(s, op, op->result, &p->fin);
	if (s->mpfr_only || !p->fin.ok || op->nargs < 1 || op->nargs > 2)
		return;
	for (unsigned k = 0; k < op->nargs; k++)
		if (!fast_type(s, op->arg[k]))
			return;
	switch (op->op) {
	case USC_HLO_OP_CONVERT:
		p->conv = op->nargs == 1;
		break;
	case USC_HLO_OP_ADD:
	case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY:
		p->fast = op->nargs == 2;
		break;
	case USC_HLO_OP_DIVIDE:
		if (op->nargs != 2)
			return;
		m = *op;
		m.op = USC_HLO_OP_MULTIPLY;
		m.arg[1] = op->result;
		fin_make(s, &m, op->result, &p->fin_mul);
		switch (s->prof.divide_reciprocal) {
		case USC_DIV_RECIP_ANY: p->recip = 1; break;
		case USC_DIV_RECIP_CONSTANT: p->recip = 2; break;
		default: p->recip = 0; break;
		}
		p->fast = p->fin_mul.ok;
		break;
	default:
		p->fn = op->nargs == 1 ? monotone_fn(op->op, &p->decreasing)
				       : NULL;
		p->libm_ulps = libm_ulps(op->op);
		p->fast = p->fn != NULL;
		break;
	}
	usc__env_loop_plan(s, op);
}

void usc__env_fast_plan_end(env_state *s)
{
	/*
	 * Every reader outside an apply call asks first whether the plan is
	 * the op's (s->plan.op == op), so clearing op is enough; the rest is
	 * the remembered plan (usc__env_fast_plan).
	 */
	s->plan.op = NULL;
}

bool usc__env_fast_apply(env_state *s, const usc__dom_op *op, value *r,
			 const value *const *a)
{
	value v;

	if (s->mpfr_only) {
		s->escalated++;
		return false;
	}
	if (s->plan.op != op)
		usc__env_fast_plan(s, op);
	memset(&v, 0, sizeof v);
	if (!s->plan.fast ||
	    !fast_op(s, &s->plan, op->op, &s->plan.fin, op, op->nargs, &v, a,
		     false)) {
		s->escalated++;
		return false;
	}
	usc__env_unite(r, &v);
	s->fast++;
	return true;
}

bool usc__env_fast_elem(env_state *s, const usc__dom_op *op, value *r,
			const value *const *a)
{
	unsigned cl = 0;
	value v, own;
	const value *x;

	if (s->plan.op != op)
		return false;
	if (s->plan.conv) {
		/*
		 * usc__env_convert's float branch for a finite operand: no
		 * special to convert, fp8's overflow policies out of reach.
		 */
		if (!finite_only(a[0]) || !(a[0]->lo <= a[0]->hi) ||
		    !isfinite(a[0]->lo) || !isfinite(a[0]->hi))
			return false;
		x = flushed_input(s, &s->plan.fin, 0, a[0], &own);
		if (!(x->lo <= x->hi))
			return false;
		memset(r, 0, sizeof *r);
		r->flags = x->flags & CLIP;
		finish_d(s, &s->plan.fin, r, x->lo, x->hi,
			 x->flags & (ZPOS | ZNEG), USC_OVF_DEFAULT, false);
		return true;
	}
	if (!s->plan.fast)
		return false;
	for (unsigned k = 0; k < op->nargs; k++) {
		if (!finite_only(a[k]))
			return false;
		cl |= a[k]->flags & CLIP;
	}
	memset(&v, 0, sizeof v);
	if (!fast_op(s, &s->plan, op->op, &s->plan.fin, op, op->nargs, &v, a,
		     false))
		return false;
	memset(r, 0, sizeof *r);
	usc__env_unite(r, &v);
	r->flags |= cl;
	s->fast++;
	return true;
}

double usc__env_fast_round(const void *state, usc_dtype t, double x,
			   usc_round_mode m)
{
	return enc_dec(state, t, x, m, USC_OVF_DEFAULT);
}

/*
 * The reassociated sum of envelope_sum.c (usc__env_sum: Higham's bound
 * for every summation tree) with its sums in double, each step rounded
 * outward (TwoSum), and gamma_n, its product with sum |x_i| and the ends
 * rounded upward the same way: every quantity is on the same side of the
 * exact one as the MPFR path's, so the set contains the one it computes.
 * false (nothing written but r's flags and count, which the caller set)
 * when a type is not one the fast path rounds into or a sum leaves
 * double's range.
 */
bool usc__env_fast_sum(env_state *s, value *r, usc_dtype t, usc_dtype acc,
		       const value *v, size_t n, const value *init,
		       double e_prod)
{
	usc_dtype w = usc__env_excess_for(s, t);
	usc_dtype c = usc__env_compute_for(s, acc);
	bool flush_in = (s->prof.flush[t] & USC_FLUSH_INPUTS) ||
			(w != USC_DTYPE_INVALID &&
			 (s->prof.flush[w] & USC_FLUSH_INPUTS));
	double lo = 0, hi = 0, m = 0, u, g, d, e, eta, a, b;
	value x;

	if (s->mpfr_only || !fast_type(s, t) || !fast_type(s, acc) ||
	    (w != USC_DTYPE_INVALID && !fast_type(s, w)) ||
	    (c != USC_DTYPE_INVALID && !fast_type(s, c)))
		return false;
	for (size_t i = 0; i <= n; i++) {
		x = i < n ? v[i] : *init;
		if (flush_in)
			flush_d(s, &x, t, false);
		lo = add_rd(lo, x.lo);
		hi = add_ru(hi, x.hi);
		m = add_ru(m, fmax(fabs(x.lo), fabs(x.hi)));
	}
	/* unit_roundoff and gamma_u of envelope_sum.c, rounded up. */
	u = ldexp(1, -s->info[acc].precision);
	if (c != USC_DTYPE_INVALID)
		u = add_ru(u, mul_ru(ldexp(1, -s->info[c].precision),
				     add_ru(1, u)));
	g = mul_ru(u, (double)n);
	d = add_rd(1, -g);
	if (!(d > 0))
		return false;
	g = div_ru(g, d);
	if (e_prod != 0) {
		g = add_ru(mul_ru(g, add_ru(1, e_prod)), e_prod);
		g = mul_ru(g, add_ru(1, mul_ru(u, 2)));
	}
	e = mul_ru(g, m);
	eta = 0;
	if (s->prof.flush[t] || s->prof.flush[acc] ||
	    (w != USC_DTYPE_INVALID && s->prof.flush[w]))
		eta = mul_ru((double)(n + 1), s->info[acc].min_normal);
	e = add_ru(e, eta);
	m = add_ru(m, e);
	a = add_rd(lo, -e);
	b = add_ru(hi, e);
	if (!isfinite(lo) || !isfinite(hi) || !isfinite(m) || !isfinite(a) ||
	    !isfinite(b))
		return false;
	if (m >= s->info[acc].max_finite)
		r->flags |= PINF | NINF | VNAN;
	/* sum_result of envelope_sum.c. */
	add_rounded_d(s, r, t, a, b, USC_RND_NEAREST_EVEN,
		      USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, ZPOS | ZNEG);
	if (w != USC_DTYPE_INVALID)
		add_rounded_d(s, r, w, a, b, USC_RND_NEAREST_EVEN,
			      USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
			      ZPOS | ZNEG);
	if (usc__env_has_zero(r))
		r->flags |= ZPOS | ZNEG;
	if (m >= s->info[t].max_finite)
		r->flags |= PINF | NINF | VNAN;
	if (s->prof.flush[t] & USC_FLUSH_OUTPUTS)
		usc__env_flush_zero(s, r, t);
	s->fast++;
	return true;
}

void usc__envelope_counts(const void *state, uint64_t *fast,
			  uint64_t *escalated)
{
	const env_state *s = state;

	*fast = s->fast;
	*escalated = s->escalated;
}

void usc__envelope_set_mpfr_only(void *state, bool on)
{
	((env_state *)state)->mpfr_only = on;
	usc__env_plan_forget(state);
}

bool usc__envelope_mpfr_from_environment(void)
{
	const char *v = getenv("USC_ENVELOPE");

	return v && strcmp(v, "mpfr") == 0;
}
