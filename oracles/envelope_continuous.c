/*
 * The envelope's continuous float ops (docs/envelope.md): the exact range
 * of an arithmetic op or a function over its operand sets, taken piece by
 * piece (finite intervals, infinities, NaN) through the MPFI oracle, then
 * mapped through the profile's rounding sets by usc__env_finish.  Also
 * the divide rewritten as x * (1 / y) where the profile allows it, the
 * inputs' flushing, and the functions' domain clips.  The per-element
 * general path: the fast path (envelope_fast.c) and the array loops
 * (envelope_loops.c) take the elements they can decide in double first.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "dtype/mpfr_util.h"
#include "ulpscope/dtype_mpfr.h"

#include "domain.h"
#include "envelope.h"
#include "envelope_internal.h"
#include "oracle.h"

/* The components of a float value, one bit each. */
static const unsigned comps[] = {FIN, PINF, NINF, VNAN};

/* Sets the oracle value o to the component c of v, or to the point x. */
static void to_oracle(env_state *s, usc__oracle_value *o, const value *v,
		      unsigned c)
{
	o->bits = 0;
	switch (c) {
	case PINF:
		o->kind = USC__ORC_POS_INF;
		o->flags = 0;
		return;
	case NINF:
		o->kind = USC__ORC_NEG_INF;
		o->flags = 0;
		return;
	case VNAN:
		o->kind = USC__ORC_NAN;
		o->flags = 0;
		return;
	default:
		break;
	}
	mpfr_set_d(s->lo, v->lo, MPFR_RNDN);
	mpfr_set_d(s->hi, v->hi, MPFR_RNDN);
	usc__oracle_value_set_interval(o, s->lo, s->hi);
	if (v->lo == 0 && v->hi == 0) {
		unsigned z = v->flags & (ZPOS | ZNEG);

		o->flags = z == ZNEG ? USC__ORC_NEG_ZERO
		       : z == ZPOS ? 0 : USC__ORC_ZSIGN_UNKNOWN;
	}
}

/*
 * Ops whose value at an infinity depends on a finite operand only
 * through its sign class (negative, zero, positive): a finite operand
 * that is not a point may then be replaced by -1, +-0 and +1.
 */
static bool sign_class_op(usc_hlo_opcode op)
{
	return op == USC_HLO_OP_ADD || op == USC_HLO_OP_SUBTRACT ||
	       op == USC_HLO_OP_MULTIPLY || op == USC_HLO_OP_DIVIDE ||
	       op == USC_HLO_OP_ATAN2;
}

/* Adds the oracle's result o for an op of type t to r. */
static void take_oracle(env_state *s, const usc__dom_op *op, value *r,
			usc_dtype t, const usc__oracle_value *o)
{
	unsigned zs;

	switch (o->kind) {
	case USC__ORC_POS_INF: r->flags |= PINF; return;
	case USC__ORC_NEG_INF: r->flags |= NINF; return;
	case USC__ORC_NAN: r->flags |= VNAN; return;
	case USC__ORC_FINITE: break;
	default: r->flags |= UNK; return;
	}
	zs = (o->flags & USC__ORC_ZSIGN_UNKNOWN) ? ZPOS | ZNEG
	     : (o->flags & USC__ORC_NEG_ZERO) ? ZNEG : ZPOS;
	if (!mpfr_equal_p(&o->x->left, &o->x->right))
		zs = ZPOS | ZNEG;
	usc__env_finish(s, op, r, t, &o->x->left, &o->x->right, zs,
	       USC_OVF_DEFAULT,
	       op->op == USC_HLO_OP_MULTIPLY && s->prof.fma);
}

/* Whether an instruction is a constant, or a broadcast of one. */
static bool is_constant(const usc_hlo_instr *in)
{
	while (in && in->opcode == USC_HLO_OP_BROADCAST && in->operand_count == 1)
		in = in->operands[0];
	return in && in->opcode == USC_HLO_OP_CONSTANT;
}

/*
 * Whether the profile lets this divide be x * (1 / y): for any divisor, or
 * for a constant one (XLA's algebraic simplifier rewrites A / C as
 * A * (1 / C)).  A synthesized divide without its instruction is taken
 * to have a constant divisor only when the divisor is a point.
 */
bool usc__env_reciprocal_allowed(const env_state *s, const usc__dom_op *op,
				 const value *y)
{
	switch (s->prof.divide_reciprocal) {
	case USC_DIV_RECIP_ANY:
		return true;
	case USC_DIV_RECIP_CONSTANT:
		if (op->instr && op->instr->operand_count == 2)
			return is_constant(op->instr->operands[1]);
		return usc__env_is_point(y);
	default:
		return false;
	}
}

/*
 * The divide x / y computed as x * (1 / y): the reciprocal of the divisor
 * set rounded to nearest in the declared type, the compute type or the
 * excess type (the rewrite may run before or after float normalization),
 * then the product with every freedom of a multiply.  This is the
 * rewrite itself, not an ulp window: 1 / 1 stays 1, and 1 / y for y >= 1
 * stays at most 1.
 */
static usc_status by_reciprocal(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a, usc_error *err)
{
	usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
	const void *args[2];
	usc_dtype ts[3];
	usc__dom_op m = *op;
	value one, rec;
	const value *b[2];
	usc_status st;

	usc__envelope_value_set(&one, 1, 1);
	one.flags = FIN | ZPOS;
	to_oracle(s, &s->ov[0], &one, FIN);
	to_oracle(s, &s->ov[1], a[1], FIN);
	args[0] = &s->ov[0];
	args[1] = &s->ov[1];
	st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
	if (st != USC_OK)
		return st;
	if (res->kind != USC__ORC_FINITE) {
		/* A divisor that holds 0: the quotient is unbounded anyway. */
		return USC_OK;
	}
	memset(&rec, 0, sizeof rec);
	ts[0] = op->result;
	ts[1] = usc__env_compute_for(s, op->result);
	ts[2] = usc__env_excess_for(s, op->result);
	for (int j = 0; j < 3; j++)
		if (ts[j] != USC_DTYPE_INVALID)
			usc__env_add_rounded(s, &rec, ts[j], &res->x->left,
				    &res->x->right, USC_RND_NEAREST_EVEN,
				    USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT,
				    ZPOS | ZNEG);
	m.op = USC_HLO_OP_MULTIPLY;
	m.arg[1] = op->result;
	b[0] = a[0];
	b[1] = &rec;
	return usc__env_continuous(s, &m, r, b, err);
}

/* Whether the finite part of v is the point 0 with both signs possible. */
static bool both_signed_zero(const value *v)
{
	unsigned z = v->flags & (ZPOS | ZNEG);

	/* No sign recorded is no sign known: to_oracle reads it so too. */
	return (v->flags & FIN) && v->lo == 0 && v->hi == 0 && z != ZPOS &&
	       z != ZNEG;
}

/* One combination of operand components through the oracle. */
static usc_status combo(env_state *s, const usc__dom_op *op, value *r,
			const value *const *a, const unsigned *c,
			usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
	unsigned k;
	usc_status st;

	/*
	 * A zero that may have either sign goes to the oracle once per sign
	 * (issue 13, U4 of docs/findings.md): atan2(+-0, -1) is +-pi, and an
	 * oracle that met "a zero of unknown sign" as a point may give the
	 * result of one sign only.  The set is the union of both.
	 */
	for (k = 0; k < op->nargs; k++)
		if (c[k] == FIN && both_signed_zero(a[k])) {
			const value *b[USC__DOM_MAX_ARGS];
			value z[2];

			for (unsigned j = 0; j < op->nargs; j++)
				b[j] = a[j];
			z[0] = z[1] = *a[k];
			z[0].flags &= ~(unsigned)ZNEG;
			z[0].lo = z[0].hi = 0.0;
			z[1].flags &= ~(unsigned)ZPOS;
			z[1].lo = z[1].hi = -0.0;
			for (unsigned j = 0; j < 2; j++) {
				b[k] = &z[j];
				st = combo(s, op, r, b, c, err);
				if (st != USC_OK)
					return st;
			}
			return USC_OK;
		}
	for (k = 0; k < op->nargs; k++) {
		to_oracle(s, &s->ov[k], a[k], c[k]);
		args[k] = &s->ov[k];
	}
	st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
	if (st != USC_OK)
		return st;
	take_oracle(s, op, r, op->result, res);
	if (op->op == USC_HLO_OP_DIVIDE && c[0] == FIN && c[1] == FIN &&
	    usc__env_reciprocal_allowed(s, op, a[1]))
		return by_reciprocal(s, op, r, a, err);
	return USC_OK;
}

/*
 * The finite parts in a combination with an infinity or a NaN, split
 * into sign-class representatives when the op allows (sign_class_op).
 */
static usc_status special_combo(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a,
				const unsigned *c, usc_error *err)
{
	value reps[USC__DOM_MAX_ARGS][3];
	unsigned nrep[USC__DOM_MAX_ARGS], k, i0, i1;
	const value *b[USC__DOM_MAX_ARGS];
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		const value *v = a[k];

		nrep[k] = 1;
		reps[k][0] = *v;
		if (c[k] != FIN || usc__env_is_point(v))
			continue;
		if (!sign_class_op(op->op)) {
			r->flags |= UNK;
			return USC_OK;
		}
		nrep[k] = 0;
		if (v->lo < 0) {
			usc__envelope_value_set(&reps[k][nrep[k]], -1, -1);
			nrep[k]++;
		}
		if (usc__env_has_zero(v)) {
			reps[k][nrep[k]] = *v;
			reps[k][nrep[k]].lo = reps[k][nrep[k]].hi = 0;
			if (!(v->flags & (ZPOS | ZNEG)))
				reps[k][nrep[k]].flags |= ZPOS | ZNEG;
			nrep[k]++;
		}
		if (v->hi > 0) {
			usc__envelope_value_set(&reps[k][nrep[k]], 1, 1);
			nrep[k]++;
		}
	}
	for (k = op->nargs; k < USC__DOM_MAX_ARGS; k++)
		nrep[k] = 1;
	for (i0 = 0; i0 < nrep[0]; i0++)
		for (i1 = 0; i1 < nrep[1]; i1++) {
			b[0] = &reps[0][i0];
			if (op->nargs > 1)
				b[1] = &reps[1][i1];
			if (op->nargs > 2)
				b[2] = &reps[2][0];
			st = combo(s, op, r, b, c, err);
			if (st != USC_OK)
				return st;
		}
	return USC_OK;
}

/* Reads subnormal operands as zeros where the profile lets it. */
void usc__env_flush_inputs(const env_state *s, const usc__dom_op *op,
			   value *x, unsigned k)
{
	usc_dtype t = op->arg[k], w = usc__env_excess_for(s, t);

	/*
	 * Never forced, even in a fixed flushing mode: an operand may reach
	 * its op without passing through a register that DAZ reads (the
	 * product inside an FMA, a value widened by a shift).
	 */
	if (s->prof.flush[t] & USC_FLUSH_INPUTS)
		usc__env_flush_mode(s, x, t, false);
	if (w != USC_DTYPE_INVALID && (s->prof.flush[w] & USC_FLUSH_INPUTS))
		usc__env_flush_mode(s, x, w, false);
}

/*
 * Unary functions with a domain edge: the part of the operand outside
 * the domain gives NaN, a pole at the edge its infinity; the rest goes on.
 * Returns false when nothing of the operand is left.
 */
static bool domain_clip(env_state *s, const usc__dom_op *op, value *r,
			value *x, usc_error *err, usc_status *st)
{
	double edge;
	bool pole, up;

	*st = USC_OK;
	switch (op->op) {
	case USC_HLO_OP_SQRT: edge = 0; pole = false; up = true; break;
	case USC_HLO_OP_LOG: edge = 0; pole = true; up = false; break;
	case USC_HLO_OP_LOG_PLUS_ONE: edge = -1; pole = true; up = false; break;
	case USC_HLO_OP_RSQRT: edge = 0; pole = true; up = true; break;
	default: return true;
	}
	if (!(x->flags & FIN) || x->lo >= edge) {
		if (!pole || !(x->flags & FIN) || x->lo > edge)
			return true;
	}
	if (x->lo < edge)
		r->flags |= VNAN;
	if (x->hi < edge) {
		x->flags &= ~(unsigned)FIN;
		return true;
	}
	x->lo = edge;
	if (edge == 0 && !(x->flags & (ZPOS | ZNEG)))
		x->flags |= ZPOS;
	if (!pole)
		return true;
	/* The pole: log(+-0) = -Inf, log1p(-1) = -Inf, rsqrt(+-0) = +-Inf. */
	if (op->op == USC_HLO_OP_RSQRT) {
		r->flags |= (x->flags & ZPOS) ? PINF : 0;
		r->flags |= (x->flags & ZNEG) ? NINF : 0;
	} else
		r->flags |= NINF;
	if (x->hi == edge) {
		x->flags &= ~(unsigned)FIN;
		return true;
	}
	/* The rest (edge, hi]: f(hi) at one end, beyond at the pole. */
	{
		value p = *x;
		usc__oracle_value *res = &s->ov[USC__DOM_MAX_ARGS];
		const void *args[1];

		p.lo = p.hi;
		to_oracle(s, &s->ov[0], &p, FIN);
		args[0] = &s->ov[0];
		*st = usc__domain_oracle.apply(s->orc, op, 1, res, args, 0, err);
		if (*st != USC_OK)
			return false;
		if (res->kind != USC__ORC_FINITE) {
			r->flags |= UNK;
			return false;
		}
		x->flags &= ~(unsigned)FIN;
		if (up) {
			mpfr_set(s->a, &res->x->left, MPFR_RNDD);
			mpfr_set_inf(s->b, 1);
		} else {
			mpfr_set_inf(s->a, -1);
			mpfr_set(s->b, &res->x->right, MPFR_RNDU);
		}
		usc__env_finish(s, op, r, op->result, s->a, s->b, ZPOS | ZNEG,
		       USC_OVF_DEFAULT, false);
		return false;
	}
}

usc_status usc__env_continuous(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a0,
				usc_error *err)
{
	value x[USC__DOM_MAX_ARGS];
	const value *a[USC__DOM_MAX_ARGS];
	unsigned c[USC__DOM_MAX_ARGS], i[USC__DOM_MAX_ARGS] = {0, 0, 0};
	unsigned k;
	usc_status st;

	for (k = 0; k < op->nargs; k++) {
		x[k] = *a0[k];
		usc__env_flush_inputs(s, op, &x[k], k);
		a[k] = &x[k];
	}
	if (op->nargs == 1 && !domain_clip(s, op, r, &x[0], err, &st)) {
		if (st != USC_OK)
			return st;
		x[0].flags &= ~(unsigned)FIN;
	}
	/*
	 * A divisor whose finite part holds 0 (not as a point): every
	 * finite quotient, both infinities, and NaN for 0 / 0.
	 */
	if (op->op == USC_HLO_OP_DIVIDE && usc__env_has_zero(&x[1]) &&
	    !usc__env_is_point(&x[1])) {
		mpfr_set_inf(s->a, -1);
		mpfr_set_inf(s->b, 1);
		usc__env_finish(s, op, r, op->result, s->a, s->b, ZPOS | ZNEG,
		       USC_OVF_DEFAULT, false);
		r->flags |= PINF | NINF;
		if (usc__env_has_zero(&x[0]) || (x[0].flags & VNAN))
			r->flags |= VNAN;
		/* The divisor's other components still combine below. */
		x[1].flags &= ~(unsigned)FIN;
		if (x[0].flags & VNAN)
			r->flags |= VNAN;
	}
	/* Every combination of components. */
	for (;;) {
		bool ok = true, special = false;

		for (k = 0; k < op->nargs; k++) {
			c[k] = comps[i[k]];
			if (!(a[k]->flags & c[k]))
				ok = false;
			if (c[k] != FIN)
				special = true;
		}
		if (ok) {
			st = special ? special_combo(s, op, r, a, c, err)
				     : combo(s, op, r, a, c, err);
			if (st != USC_OK)
				return st;
		}
		for (k = 0; k < op->nargs; k++) {
			if (++i[k] < 4)
				break;
			i[k] = 0;
		}
		if (k == op->nargs)
			break;
	}
	return USC_OK;
}
