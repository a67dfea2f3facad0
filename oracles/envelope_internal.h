/*
 * The envelope domain's internals (oracles/envelope*.c): the value's
 * private flags, the domain state, and the helpers its files share.
 * envelope.c holds the state, the rounding sets of every freedom and the
 * elementwise float ops; envelope_value.c loads, outputs and
 * containment; envelope_discrete.c compare, integer and pred
 * ops, convert and reduce-precision; envelope_sum.c the reassociated
 * reductions and the accumulation of dots and convolutions;
 * envelope_fast.c the fast path in double arithmetic and envelope_loops.c
 * its array loops, on the in-line arithmetic of envelope_round.h.
 */
#ifndef USC_ORACLES_ENVELOPE_INTERNAL_H
#define USC_ORACLES_ENVELOPE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <mpfr.h>

#include "domain.h"
#include "envelope.h"
#include "oracle.h"

/* Private flag bits of a value, above the public USC__ENV_* ones. */
enum {
	ZPOS = 1u << 12,   /* the finite part's 0 may be +0 */
	ZNEG = 1u << 13,   /* ... may be -0 */
	IPOINT = 1u << 14 /* an integer point: bits is its exact encoding */
};

#define FIN USC__ENV_FINITE
#define VNAN USC__ENV_NAN
#define PINF USC__ENV_POS_INF
#define NINF USC__ENV_NEG_INF
#define UNK USC__ENV_UNKNOWN
#define CLIP USC__ENV_RANGE_CLIPPED
#define FLSH USC__ENV_FLUSHED
#define APRX USC__ENV_APPROX
#define NOSUB USC__ENV_NO_SUBNORMAL

/* The working precision of the oracle and of the bounds here. */
#define ENV_PREC 128

typedef usc__envelope_value value;

/*
 * What the fast path's rounding sets need of an op, decided once per
 * apply call (envelope_fast.c): the declared type t, the compute type c
 * and the excess type w (USC_DTYPE_INVALID: none), the accuracy k in
 * ulps (0.5: correctly rounded), and the profile's flushing.
 */
typedef struct env_fin {
	usc_hlo_opcode op;
	usc_dtype t, c, w;
	double k;
	bool forced, nosub, flush_t, flush_c, flush_w;
	/* The function's range [clip_lo, clip_hi] (usc__env_range_of). */
	bool clip;
	double clip_lo, clip_hi;
	/* The types whose subnormals operand k may be read as 0 in. */
	usc_dtype flush_in[2][2];
	bool ok; /* t, c and w are types the fast path rounds into */
} env_fin;

/* How many elements the array loops take at a time (envelope_loops.c). */
#define USC__ENV_CHUNK 256

/*
 * One finish of the array loops (envelope_loops.c): the rounding sets of
 * an env_fin resolved into a fixed list, for the elements whose sets are
 * plain (finite, one sign, normal in every type the op rounds into).
 */
typedef struct env_rounds {
	int t, c, w;           /* ENV_TY_* of T, C and W (or ENV_TY_NONE) */
	int pt, pc, pw;        /* their precisions */
	int et, ec, ew;        /* their smallest exponents */
	bool win;              /* the window of k ulps (k > 1/2) */
	bool exact;            /* a multiply's unrounded product (FMA) */
	bool straight;         /* C: the set rounded once straight to T */
	bool straight_check;   /* ... dropped where E lies inside the C set */
	double k;
	double guard_lo, guard_hi; /* a plain end's magnitude lies in here */
	unsigned flags;        /* what every plain result carries */
} env_rounds;

/*
 * The array loops' view of one op (envelope_loops.c, usc__env_loop_plan):
 * the loop of the op, its finish (and a divide's x * RN(1 / y) multiply),
 * and what makes an operand plain.
 */
typedef struct env_loop {
	bool on;
	int kind;              /* ENV_LOOP_* of envelope_loops.c */
	int recip;             /* a divide's x * RN(1 / y): 1 always, 0 never */
	env_rounds r, r_mul;
	double in_mn[2];       /* operand k: |x| below it may be flushed */
	double dom_lo;         /* a function's operand lies above it */
	bool dom_closed;       /* ... or on it */
} env_loop;

/* The fast path's view of one op (envelope_fast.c, usc__env_fast_plan). */
typedef struct env_plan {
	const usc__dom_op *op; /* the op it was made for, during one apply */
	bool fast;             /* the op and its operand types qualify */
	bool conv;             /* a convert between f32, bf16 and f16 */
	env_fin fin;
	env_fin fin_mul;       /* a divide's x * (1 / y): the multiply */
	int recip;             /* divide: 0 never, 1 always, 2 point divisors */
	double (*fn)(double);  /* a unary function's libm call */
	bool decreasing;
	double libm_ulps;
	env_loop loop;
} env_plan;

typedef struct env_state {
	usc_profile prof;
	void *orc;  /* the oracle's state: exact ranges */
	void *ref;  /* the reference domain's state: integer points */
	usc__oracle_value ov[USC__DOM_MAX_ARGS + 1];
	mpfr_t a, b, t, lo, hi;
	usc_float_info info[USC_DTYPE_COUNT];
	bool has_info[USC_DTYPE_COUNT];
	/*
	 * The fast path (envelope_fast.c): off when mpfr_only; the op
	 * elements it decided and those it escalated to MPFR.
	 */
	bool mpfr_only;
	/* The array loops (envelope_loops.c) off: tests compare with them. */
	bool no_loops;
	uint64_t fast, escalated;
	/* The elements the array loops and the exact ops' shortcut completed. */
	uint64_t looped;
	env_plan plan;
	/*
	 * The last plan made and the op it was made for (usc__env_fast_plan):
	 * a kernel applies the same op to tile after tile and row after row,
	 * and a plan depends only on the op's fields and on the profile and
	 * switches above, so an equal op takes it back instead of deciding
	 * again.  Whatever changes those switches clears plan_cached.  The
	 * plan itself stays in plan (its op cleared between apply calls).
	 */
	bool plan_cached;
	usc__dom_op plan_key;
} env_state;

/*
 * Adds the finite interval [lo, hi] to r; a zero inside it may have the
 * signs zs says.  Inline, and the one definition: the rounding sets of
 * envelope.c and envelope_fast.c call it several times per op and
 * element, and a call across files cost more than its work.
 */
static inline void usc__env_hull(value *r, double lo, double hi, unsigned zs)
{
	if (!(r->flags & FIN)) {
		r->lo = lo;
		r->hi = hi;
		r->flags |= FIN;
	} else {
		if (lo < r->lo)
			r->lo = lo;
		if (hi > r->hi)
			r->hi = hi;
	}
	if (lo <= 0 && hi >= 0)
		r->flags |= zs & (ZPOS | ZNEG);
}

/*
 * r |= v (sets).  The union has no subnormal only when neither part has
 * one: a part without finite values has none.
 */
static inline void usc__env_unite(value *r, const value *v)
{
	bool nosub = (!(r->flags & FIN) || (r->flags & NOSUB)) &&
		     (!(v->flags & FIN) || (v->flags & NOSUB));

	r->flags |= v->flags & (VNAN | PINF | NINF | UNK | CLIP | FLSH | APRX);
	if (v->flags & FIN)
		usc__env_hull(r, v->lo, v->hi, v->flags);
	r->flags &= ~(unsigned)NOSUB;
	if (nosub && (r->flags & FIN))
		r->flags |= NOSUB;
}

/* envelope.c */
void usc__env_add_bits(value *r, usc_dtype t, uint64_t bits);
void usc__env_add_rounded(env_state *s, value *r, usc_dtype t, mpfr_srcptr lo,
			  mpfr_srcptr hi, usc_round_mode mode_lo,
			  usc_round_mode mode_hi, usc_overflow o, unsigned zs);
usc_dtype usc__env_compute_for(const env_state *s, usc_dtype t);
usc_dtype usc__env_excess_for(const env_state *s, usc_dtype t);
void usc__env_finish(env_state *s, const usc__dom_op *op, value *r,
		     usc_dtype t, mpfr_srcptr lo, mpfr_srcptr hi, unsigned zs,
		     usc_overflow o, bool may_skip);
bool usc__env_float_point_bits(const value *v, usc_dtype t, uint64_t *bits);
void usc__env_flush_zero(const env_state *s, value *r, usc_dtype t);
bool usc__env_has_zero(const value *v);
bool usc__env_is_point(const value *v);
/* The static helpers of envelope.c that envelope_fast.c shares. */
double usc__env_accuracy_of(const env_state *s, usc_hlo_opcode op);
bool usc__env_range_of(usc_hlo_opcode op, double *lo, double *hi);
void usc__env_flush_mode(const env_state *s, value *r, usc_dtype t,
			 bool force);
bool usc__env_flush_forced(const env_state *s, usc_hlo_opcode op);
bool usc__env_never_subnormal(const env_state *s, const usc__dom_op *op,
			      usc_dtype t);

/* envelope_continuous.c */
usc_status usc__env_continuous(env_state *s, const usc__dom_op *op,
				value *r, const value *const *a0,
				usc_error *err);
void usc__env_flush_inputs(const env_state *s, const usc__dom_op *op,
			   value *x, unsigned k);
bool usc__env_reciprocal_allowed(const env_state *s, const usc__dom_op *op,
				 const value *y);

/* envelope_value.c */
usc_status usc__env_constant(void *state, usc_dtype t,
			     const usc_hlo_scalar *sc, void *out,
			     usc_error *err);
bool usc__env_is_true(void *state, const void *v);
usc_status usc__env_load(void *state, usc_dtype t, uint64_t bits,
			 void *out, usc_error *err);
usc_status usc__env_load_array(void *state, usc_dtype t, const void *enc,
			       size_t n, void *out, usc_error *err);
usc_status usc__env_to_index(void *state, usc_dtype t, const void *v,
			     int64_t *out, usc_error *err);
usc_status usc__env_to_output(void *state, usc_dtype t, const void *v,
			      uint64_t *bits, void *enclosure,
			      usc_error *err);
void usc__env_load_int(value *r, usc_dtype t, uint64_t bits);
uint64_t usc__env_rn_double(usc_dtype t, double x);

/* envelope_discrete.c */
void usc__env_compare_sets(const usc__dom_op *op, value *r, unsigned outcomes);
usc_status usc__env_convert(env_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err);
unsigned usc__env_float_outcomes(const value *x, const value *y, bool total);
bool usc__env_int_natural(const usc__dom_op *op);
usc_status usc__env_int_points(env_state *s, const usc__dom_op *op, value *r,
			       const value *const *a, usc_error *err);
unsigned usc__env_order_outcomes(double xl, double xh, double yl, double yh);
usc_status usc__env_pred_sets(env_state *s, const usc__dom_op *op, value *r,
			      const value *const *a, usc_error *err);
usc_status usc__env_reduce_precision(env_state *s, const usc__dom_op *op,
				     value *r, const value *x, usc_error *err);
void usc__env_set_pred(value *r, bool can_false, bool can_true);

/* envelope_loops.c (docs/envelope.md, "The array loops") */
/*
 * Resolves s->plan.loop for op, after the rest of s->plan is made
 * (usc__env_fast_plan calls it); loop.on says whether the loops apply.
 */
void usc__env_loop_plan(env_state *s, const usc__dom_op *op);
/*
 * The elements i0 .. i0 + n - 1 (n <= USC__ENV_CHUNK) of the planned op
 * whose operands and result are plain, into out, complete (the taints and
 * the count of roundings env_apply gives an element, rounds: 1 when op
 * counts one): done[j] is 1 for each element i0 + j written, 0 for the
 * ones left to the per-element code.  Returns how many were written.
 */
size_t usc__env_loops(env_state *s, const usc__dom_op *op, size_t i0,
		      size_t n, value *out, const void *const *args,
		      unsigned scalar_args, unsigned rounds,
		      unsigned char *done);

/* envelope_sum.c */
usc_status usc__env_matmul(void *state, const usc__dom_matmul *mm,
			   usc_error *err);
usc_status usc__env_sum(void *state, const usc__dom_op *add, size_t n,
			const void *values, const void *init, void *out,
			usc_error *err);

#endif /* USC_ORACLES_ENVELOPE_INTERNAL_H */
