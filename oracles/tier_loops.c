/*
 * The tier's apply entry: one element through the general code
 * (apply1), and the array loops that run the common paths of the hot ops
 * in line with the same expressions, bit for bit.
 */
#include "internal.h"

#include "tier_internal.h"

/* ----------------------------------------------------------- apply */

static usc_status delegate(tier_state *s, const usc__dom_op *op, value *r,
			   const value *const *a, usc_error *err)
{
	const void *args[USC__DOM_MAX_ARGS];
	unsigned k;

	prep(r);
	for (k = 0; k < op->nargs; k++) {
		if (a[k]->kind == USC__ORC_UNDECIDED) {
			set_undecided(r);
			return USC_OK;
		}
		args[k] = &a[k]->bits;
	}
	return usc__domain_reference.apply(s->ref, op, 1, &r->bits, args, 0,
					   err);
}

static bool same_point(const value *x, const value *y, bool flt)
{
	if (x->kind == USC__ORC_UNDECIDED || x->kind != y->kind)
		return false;
	if (!flt)
		return x->bits == y->bits;
	if (x->kind != USC__ORC_FINITE)
		return true;
	return is_point(x) && is_point(y) && x->mid == y->mid &&
	       x->flags == y->flags && !(x->flags & USC__ORC_ZSIGN_UNKNOWN);
}

static usc_status unsupported(const usc__dom_op *op, usc_error *err)
{
	return usc__dom_unsupported("tier", op, op->result, err);
}

static usc_status apply1(tier_state *s, const usc__dom_op *op, value *r,
			 const value *const *a, usc_error *err)
{
	usc_dtype at = op->nargs ? op->arg[0] : op->result;

	switch (op->op) {
	case USC_HLO_OP_SELECT:
		if (a[0]->kind == USC__ORC_UNDECIDED) {
			if (same_point(a[1], a[2],
				       usc_dtype_is_float(op->result)))
				*r = *a[1];
			else {
				prep(r);
				set_undecided(r);
			}
			return USC_OK;
		}
		*r = (a[0]->bits & 1) ? *a[1] : *a[2];
		return USC_OK;
	case USC_HLO_OP_CLAMP: {
		value m;

		if (!usc_dtype_is_float(op->arg[1]))
			return delegate(s, op, r, a, err);
		usc__tier_maxmin(&m, true, a[1], a[0]);
		usc__tier_maxmin(r, false, &m, a[2]);
		return USC_OK;
	}
	case USC_HLO_OP_COMPARE:
		if (!usc_dtype_is_float(at))
			return delegate(s, op, r, a, err);
		usc__tier_compare_float(op, r, a[0], a[1]);
		return USC_OK;
	case USC_HLO_OP_IS_FINITE:
		prep(r);
		if (a[0]->kind == USC__ORC_UNDECIDED)
			set_undecided(r);
		else
			r->bits = a[0]->kind == USC__ORC_FINITE;
		return USC_OK;
	case USC_HLO_OP_CONVERT:
		return usc__tier_convert(s, op, r, a[0], err);
	case USC_HLO_OP_BITCAST_CONVERT:
		return usc__tier_bitcast(s, op, r, a[0], err);
	case USC_HLO_OP_REDUCE_PRECISION:
		/* The oracle's semantics without quantize: the identity. */
		*r = *a[0];
		return USC_OK;
	default:
		break;
	}
	if (!usc_dtype_is_float(at))
		return delegate(s, op, r, a, err);
	if (op->nargs == 1) {
		if (usc__tier_unary(r, op, a[0]) != USC_OK)
			return unsupported(op, err);
		return USC_OK;
	}
	if (op->nargs == 2 && usc__tier_is_binary(op->op)) {
		usc__tier_binary(r, op, a[0], a[1]);
		return USC_OK;
	}
	return unsupported(op, err);
}

/*
 * The array loops.  usc__tier_apply decides once per call which op it runs
 * (is the operand type a float, which opcode, which libm function), then
 * runs a tight loop over the n elements.  Each loop handles in line the
 * elements that the general code above would send down its common path
 * (FINITE operands, nonzero midpoints where a zero's sign would matter)
 * by calling the same helpers that path calls (div_balls, monotone,
 * unary_point, maxmin, compare_float) or, in the loops of multiply, add,
 * subtract, divide and the increasing functions (loop_mul and the others
 * below), by writing out those helpers' expressions in the same order,
 * so every result is the one apply1 gives, bit for bit; any other
 * element goes through apply1 itself.  No bound is computed differently
 * here.
 */
typedef enum fast_op {
	FAST_NONE,
	FAST_ADD,
	FAST_SUB,
	FAST_MUL,
	FAST_DIV,
	FAST_NEG,
	FAST_ABS,
	FAST_MAX,
	FAST_MIN,
	FAST_MONO,   /* exp, expm1, logistic, tanh, erf, cbrt: increasing */
	FAST_EDGE,   /* log, log1p, sqrt (increasing), rsqrt (decreasing) */
	FAST_COPY,   /* float-to-float convert, reduce-precision */
	FAST_SELECT,
	FAST_COMPARE
} fast_op;

static fast_op fast_kind(const usc__dom_op *op)
{
	bool flt = usc_dtype_is_float(op->nargs ? op->arg[0] : op->result);

	switch (op->op) {
	case USC_HLO_OP_SELECT:
		return op->nargs == 3 ? FAST_SELECT : FAST_NONE;
	case USC_HLO_OP_REDUCE_PRECISION:
		return FAST_COPY;
	case USC_HLO_OP_CONVERT:
		return flt && usc_dtype_is_float(op->result) ? FAST_COPY
							     : FAST_NONE;
	default:
		break;
	}
	if (!flt)
		return FAST_NONE;
	if (op->nargs == 2) {
		switch (op->op) {
		case USC_HLO_OP_ADD: return FAST_ADD;
		case USC_HLO_OP_SUBTRACT: return FAST_SUB;
		case USC_HLO_OP_MULTIPLY: return FAST_MUL;
		case USC_HLO_OP_DIVIDE: return FAST_DIV;
		case USC_HLO_OP_MAXIMUM: return FAST_MAX;
		case USC_HLO_OP_MINIMUM: return FAST_MIN;
		case USC_HLO_OP_COMPARE: return FAST_COMPARE;
		default: return FAST_NONE;
		}
	}
	if (op->nargs != 1)
		return FAST_NONE;
	switch (op->op) {
	case USC_HLO_OP_NEGATE: return FAST_NEG;
	case USC_HLO_OP_ABS: return FAST_ABS;
	case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE:
	case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_TANH:
	case USC_HLO_OP_ERF:
	case USC_HLO_OP_CBRT:
		return FAST_MONO;
	case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE:
	case USC_HLO_OP_SQRT:
	case USC_HLO_OP_RSQRT:
		return FAST_EDGE;
	default:
		return FAST_NONE;
	}
}

/*
 * Whether a FINITE value's ball lies on its midpoint's side of 0 by a
 * margin that the outward bounds cannot cross: |mid| >= 2^-1000 and
 * 2 rad <= |mid| (2 rad is exact, or +Inf and then false).  For mid > 0,
 * mid - rad >= mid / 2 >= 2^-1001 exactly; 2^-1001 is a double, so the
 * rounded difference is at least 2^-1001 too (rounding is monotone), and
 * one step down from it stays positive: bounds() gives lo > 0, hence
 * hi > 0.  For mid < 0 by symmetry hi < 0.  So strict_sign, sign_of and
 * has_zero answer from mid's sign alone, with no bounds computed and no
 * branch on the sign (the signs of data are random, and a mispredicted
 * branch costs more than a product's whole bound).  A point (rad 0) with
 * |mid| >= 2^-1000 qualifies: its bounds are mid itself.
 */
static inline bool evident_sign(const value *v)
{
	double m = fabs(v->mid);

	return m >= 0x1p-1000 && 2 * v->rad <= m;
}

/*
 * The strict sign of a FINITE value that is not a zero point, as
 * strict_sign computes it (the flags first, then the outward bounds).
 */
static inline int strict_sign_finite(const value *v)
{
	double lo, hi;

	if (v->flags & TIER_GT0)
		return 1;
	if (v->flags & TIER_LT0)
		return -1;
	if (evident_sign(v))
		return signbit(v->mid) ? -1 : 1;
	bounds(v, &lo, &hi);
	/* lo <= hi, so at most one holds; no branch on a random sign. */
	return (lo > 0) - (hi < 0);
}

/*
 * Element i of an array loop through the general per-element code, for
 * the elements a loop leaves to it.
 */
static usc_status general_at(tier_state *s, const usc__dom_op *op, value *r,
			     const value *const *args_v, unsigned scalar_args,
			     size_t i, usc_error *err)
{
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	unsigned k;

	for (k = 0; k < op->nargs; k++)
		a[k] = &args_v[k][(scalar_args >> k) & 1 ? 0 : i];
	return apply1(s, op, r, a, err);
}

/*
 * Stores the finite ball (mid, rad) with flags, or UNDECIDED when the
 * ball's edge is not finite: set_ball's test in one comparison (|mid| +
 * rad is NaN or +Inf exactly when mid, rad or their sum is not finite),
 * every field written once.
 */
static inline void put_ball(value *r, double mid, double rad,
			    unsigned flags)
{
	r->bits = 0;
	if (fabs(mid) + rad <= DBL_MAX) {
		r->mid = mid;
		r->rad = rad;
		r->kind = USC__ORC_FINITE;
		r->flags = (unsigned char)flags;
	} else {
		r->mid = 0;
		r->rad = 0;
		r->kind = USC__ORC_UNDECIDED;
		r->flags = 0;
	}
}

/* TIER_GT0 or TIER_LT0 for a strict sign product ss (-1, 0, +1). */
static inline unsigned sign_flag(int ss)
{
	return (unsigned)((ss > 0) * TIER_GT0 + (ss < 0) * TIER_LT0);
}

/*
 * multiply over n elements.  An element whose operands are FINITE with
 * nonzero midpoints is usc__tier_binary()'s common path written out: two points
 * are binary_points' mul_balls (the exact TwoProduct error under
 * product_safe, else u |p| plus rup's floor; the product of nonzero
 * doubles is never a zero point then, so fix_zero has nothing to do and
 * no sign flag is set), a ball is mul_balls' propagation bound plus u |p|
 * (perr is never exact there: p == 0 needs a zero operand) followed by
 * the strict signs' flag.  The expressions are mul_balls', in its order,
 * so the bits are the same (test_tier_fast).  Every other element goes
 * through the general code.
 */
static usc_status loop_mul(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		double a = x->mid, b = y->mid, ra = x->rad, rb = y->rad;
		double p, rad, e;
		unsigned fl = 0;

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    a == 0 || b == 0) {
			usc_status st = general_at(s, op, &o[i], args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		p = a * b;
		if (ra == 0 && rb == 0) {
			if (product_safe(a, b, p)) {
				(void)two_prod(a, b, &e);
				rad = fabs(e);
			} else
				rad = rup(0 + U * fabs(p));
		} else {
			rad = rup(fabs(a) * rb + fabs(b) * ra + ra * rb +
				  U * fabs(p));
			fl = sign_flag(strict_sign_finite(x) *
				       strict_sign_finite(y));
		}
		put_ball(&o[i], p, rad, fl);
	}
	return USC_OK;
}

/*
 * add (sub: subtract) over n elements: add_balls for FINITE operands
 * other than two points one of which is a zero (whose zero sign binary
 * decides), with add's strict-sign rule for balls (the sum of two GT0
 * values); two nonzero points that cancel give +0, as fix_zero would.
 */
static usc_status loop_add(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, bool sub, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		double a = x->mid, b = sub ? -y->mid : y->mid;
		double ra = x->rad, rb = y->rad, e, sum;
		unsigned fl = 0;

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    (ra == 0 && rb == 0 && (a == 0 || b == 0))) {
			usc_status st = general_at(s, op, &o[i], args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		sum = two_sum(a, b, &e);
		if (ra == 0 && rb == 0) {
			put_ball(&o[i], sum, fabs(e), 0);
			continue;
		}
		if (!sub)
			fl = x->flags & y->flags & TIER_GT0;
		put_ball(&o[i], sum, rup(ra + rb + fabs(e)), fl);
	}
	return USC_OK;
}

/*
 * divide over n elements: div_balls for FINITE operands with nonzero
 * midpoints whose divisor is a point or a ball evidently clear of 0
 * (evident_sign; binary's has_zero is then false), then the strict signs'
 * flag for a ball; the quotient of nonzero doubles is never a zero point
 * (div_balls adds rup's floor to an underflowed one).  Divisor balls
 * near 0 and every other element go through the general code.
 */
static usc_status loop_div(tier_state *s, const usc__dom_op *op, size_t n,
			   value *o, const value *const *args_v,
			   unsigned scalar_args, usc_error *err)
{
	const value *xv = args_v[0], *yv = args_v[1];
	size_t sx = scalar_args & 1 ? 0 : 1, sy = scalar_args & 2 ? 0 : 1, i;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx], *y = &yv[i * sy];
		value *r = &o[i];

		if (x->kind != USC__ORC_FINITE || y->kind != USC__ORC_FINITE ||
		    x->mid == 0 || y->mid == 0 ||
		    (y->rad != 0 && !evident_sign(y))) {
			usc_status st = general_at(s, op, r, args_v,
						   scalar_args, i, err);

			if (st != USC_OK)
				return st;
			continue;
		}
		if (x->rad == 0 && y->rad == 0) {
			/* Points: the exact remainder, as div_balls. */
			prep(r);
			usc__tier_div_balls(r, x->mid, x->rad, y->mid, y->rad);
			continue;
		}
		/*
		 * A ball: div_balls' ball case written out (q's own error
		 * u |q| plus rup's floor; den >= |b| / 2 > 0 for a divisor
		 * evidently clear of 0, |b| for a point), then the flag.
		 */
		{
			double a = x->mid, b = y->mid, ra = x->rad, rb = y->rad;
			double q = a / b, qerr = rup(U * fabs(q));
			double den = fabs(b) - rb, prop;

			prop = (ra + (fabs(q) * (1.0 + 2 * U) + 0x1p-1074) * rb +
				0x1p-1070) /
			       den;
			put_ball(r, q, rup(prop + qerr),
				 sign_flag(strict_sign_finite(x) *
					   strict_sign_finite(y)));
		}
	}
	return USC_OK;
}

/*
 * exp, expm1, logistic, tanh, erf and cbrt (f, accurate to k ulps, gt0:
 * whether it sets TIER_GT0) over n elements.  A FINITE nonzero point is
 * unary_point's generic case (none of these functions has another exact
 * case): f(x) widened by slack, through set_range of one value, i.e. the
 * radius rup(slack).  A narrow ball of a function with a Lipschitz
 * constant is monotone's first case: f(mid) widened by rup(slack + L
 * rad), then rup again by set_range.  A result that is not finite (an
 * overflow) and every other element go through the general code, which
 * computes them again.
 */
static usc_status loop_mono(tier_state *s, const usc__dom_op *op, size_t n,
			    value *o, const value *const *args_v,
			    unsigned scalar_args, dfn f, double k, bool gt0,
			    usc_error *err)
{
	const value *xv = args_v[0];
	size_t sx = scalar_args & 1 ? 0 : 1, i;
	double L = usc__tier_lipschitz(f);
	unsigned fl = gt0 ? TIER_GT0 : 0;

	for (i = 0; i < n; i++) {
		const value *x = &xv[i * sx];
		double m = x->mid, rd = x->rad, y;
		usc_status st;

		if (x->kind == USC__ORC_FINITE && m != 0) {
			if (rd == 0) {
				y = f(m);
				if (isfinite(y)) {
					put_ball(&o[i], y, rup(slack(y, k)),
						 fl);
					continue;
				}
			} else if (L > 0 && rd <= 0x1p-40 * fabs(m)) {
				y = f(m);
				if (isfinite(y)) {
					put_ball(&o[i], y,
						 rup(rup(slack(y, k) + L * rd)),
						 fl);
					continue;
				}
			}
		}
		st = general_at(s, op, &o[i], args_v, scalar_args, i, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* The operand pointers of element i (stride 0 for a broadcast scalar). */
#define ARG(k, i) (&args_v[k][(scalar_args >> (k)) & 1 ? 0 : (i)])

usc_status usc__tier_apply(void *state, const usc__dom_op *op, size_t n,
			     void *out, const void *const *args,
			     unsigned scalar_args, usc_error *err)
{
	tier_state *s = state;
	value *o = out;
	const value *args_v[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	fast_op fk;
	dfn f = NULL;
	double kulps = 0, edge = 0;
	bool up = true, open = true, gt0 = false;
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	for (k = 0; k < op->nargs; k++)
		args_v[k] = args[k];
	fk = fast_kind(op);
	switch (fk) {
	case FAST_MUL:
		return loop_mul(s, op, n, o, args_v, scalar_args, err);
	case FAST_ADD:
	case FAST_SUB:
		return loop_add(s, op, n, o, args_v, scalar_args,
				fk == FAST_SUB, err);
	case FAST_DIV:
		return loop_div(s, op, n, o, args_v, scalar_args, err);
	default:
		break;
	}
	if (fk == FAST_MONO || fk == FAST_EDGE) {
		f = usc__tier_unary_fn(op->op, &kulps);
		gt0 = op->op == USC_HLO_OP_EXPONENTIAL ||
		      op->op == USC_HLO_OP_LOGISTIC;
		if (fk == FAST_MONO)
			return loop_mono(s, op, n, o, args_v, scalar_args, f,
					 kulps, gt0, err);
		switch (op->op) {
		case USC_HLO_OP_LOG_PLUS_ONE: edge = -1; break;
		case USC_HLO_OP_SQRT: open = false; break;
		case USC_HLO_OP_RSQRT: up = false; break;
		default: break;
		}
	}
	for (i = 0; i < n; i++) {
		value *r = &o[i];
		const value *x = op->nargs > 0 ? ARG(0, i) : NULL;
		const value *y = op->nargs > 1 ? ARG(1, i) : NULL;
		usc_status st;

		switch (fk) {
		case FAST_ADD:
		case FAST_SUB:
		case FAST_MUL:
		case FAST_DIV:
			break; /* their own loops above */
		case FAST_NEG:
			if (x->kind != USC__ORC_FINITE || x->mid == 0)
				break;
			*r = *x;
			r->mid = -x->mid;
			r->flags = (unsigned char)(x->flags &
				   ~(USC__ORC_NEG_ZERO | TIER_GT0 | TIER_LT0));
			if (x->flags & TIER_GT0)
				r->flags |= TIER_LT0;
			if (x->flags & TIER_LT0)
				r->flags |= TIER_GT0;
			continue;
		case FAST_ABS:
			if (x->kind != USC__ORC_FINITE || x->mid == 0)
				break;
			prep(r);
			if (x->rad == 0)
				set_point(r, fabs(x->mid));
			else {
				double lo, hi;

				bounds(x, &lo, &hi);
				if (lo >= 0 || hi <= 0)
					set_ball(r, fabs(x->mid), x->rad);
				else
					set_range(r, 0, 0, fmax(-lo, hi), 0);
			}
			continue;
		case FAST_MAX:
		case FAST_MIN:
			/* maxmin is the whole general path of both ops. */
			usc__tier_maxmin(r, fk == FAST_MAX, x, y);
			continue;
		case FAST_MONO: /* its own loop above */
		case FAST_EDGE:
			if (x->kind != USC__ORC_FINITE ||
			    (x->rad == 0 && x->mid == 0))
				break;
			prep(r);
			if (x->rad == 0) {
				usc__tier_unary_point(r, op->op, f, kulps, x->mid);
				continue;
			}
			if (fk == FAST_EDGE && !usc__tier_domain_edge(r, x, edge, open))
				continue;
			usc__tier_monotone(r, x, f, kulps, up);
			if (gt0 && r->kind == USC__ORC_FINITE)
				r->flags |= TIER_GT0;
			continue;
		case FAST_COPY:
			if (op->op == USC_HLO_OP_CONVERT &&
			    x->kind == USC__ORC_UNDECIDED)
				break;
			*r = *x;
			continue;
		case FAST_SELECT:
			if (x->kind == USC__ORC_UNDECIDED)
				break;
			*r = (x->bits & 1) ? *y : *ARG(2, i);
			continue;
		case FAST_COMPARE:
			usc__tier_compare_float(op, r, x, y);
			continue;
		case FAST_NONE:
			break;
		}
		for (k = 0; k < op->nargs; k++)
			a[k] = ARG(k, i);
		st = apply1(s, op, r, a, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

#undef ARG

/*
 * Float-to-float converts and reduce-precision: the array loop's copy
 * (FAST_COPY above; the tier does not quantize, as the oracle).  The
 * general path gives an undecided operand a fresh undecided value, which
 * no entry tells from the operand.
 */
bool usc__tier_identity(void *state, const usc__dom_op *op)
{
	(void)state;
	return op->nargs == 1 && fast_kind(op) == FAST_COPY;
}

usc_status usc__tier_apply_general(void *state, const usc__dom_op *op,
				   size_t n, void *out,
				   const void *const *args,
				   unsigned scalar_args, usc_error *err)
{
	tier_state *s = state;
	value *o = out;
	const value *a[USC__DOM_MAX_ARGS] = {NULL, NULL, NULL};
	size_t i;
	unsigned k;

	if (op->nargs > USC__DOM_MAX_ARGS)
		return usc__fail(err, USC_EINTERNAL, "too many operands");
	for (i = 0; i < n; i++) {
		usc_status st;

		for (k = 0; k < op->nargs; k++) {
			const value *v = args[k];

			a[k] = (scalar_args >> k) & 1 ? &v[0] : &v[i];
		}
		st = apply1(s, op, &o[i], a, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}
