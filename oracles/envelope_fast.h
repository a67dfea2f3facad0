/*
 * The envelope's fast path (oracles/envelope_fast.c, docs/envelope.md,
 * "The fast path"): elementwise float ops on finite sets and the rounding
 * sets of the freedoms in double arithmetic with outward rounding, the
 * MPFR path only for what cannot be decided in double.
 */
#ifndef USC_ORACLES_ENVELOPE_FAST_H
#define USC_ORACLES_ENVELOPE_FAST_H

#include <stdbool.h>

#include "envelope_internal.h"

/*
 * Decides once what the fast path needs of op (s->plan), before an apply
 * call's elements; usc__env_fast_plan_end after them.
 */
void usc__env_fast_plan(env_state *s, const usc__dom_op *op);
void usc__env_fast_plan_end(env_state *s);
/* Drops the remembered plan: the profile or a switch of s changed. */
void usc__env_plan_forget(env_state *s);

/*
 * The continuous float op (add, subtract, multiply, divide, the monotone
 * functions) on the operand sets a into r (zeroed by the caller), when it
 * can be decided in double; false leaves r as it was and counts an
 * escalation: the caller then takes the MPFR path.
 */
bool usc__env_fast_apply(env_state *s, const usc__dom_op *op, value *r,
			 const value *const *a);

/*
 * One element of the op planned by usc__env_fast_plan, in a loop over
 * its elements: what apply1 of envelope.c computes for it when every
 * operand is a finite set (no NaN, infinity or UNKNOWN member) and the
 * fast path decides it, without apply1's dispatch; false, with r and the
 * counts untouched, sends the element to apply1 (which tries the fast
 * path again, counts, and takes the MPFR path).
 */
bool usc__env_fast_elem(env_state *s, const usc__dom_op *op, value *r,
			const value *const *a);

/*
 * usc__env_finish for an exact range given as doubles lo <= hi (an outward
 * enclosure of it): in double when the types allow, else through MPFR.
 */
void usc__env_finish_d(env_state *s, const usc__dom_op *op, value *r,
		       usc_dtype t, double lo, double hi, unsigned zs,
		       usc_overflow o, bool may_skip);

/*
 * The reassociated sum of usc__env_sum (n values and init, the result
 * type t, the accumulation type acc, a dot's product error e_prod) into
 * r, whose flags and rounding count the caller has set, when double
 * decides it; false: the caller's MPFR path (counted there).
 */
bool usc__env_fast_sum(env_state *s, value *r, usc_dtype t, usc_dtype acc,
		       const value *v, size_t n, const value *init,
		       double e_prod);

/* x rounded into t (f32, bf16, f16) in mode m, as the codec rounds it. */
double usc__env_fast_round(const void *state, usc_dtype t, double x,
			   usc_round_mode m);

/* Whether USC_ENVELOPE=mpfr asks for the MPFR path everywhere. */
bool usc__envelope_mpfr_from_environment(void);

#endif /* USC_ORACLES_ENVELOPE_FAST_H */
