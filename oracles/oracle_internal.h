/*
 * The certified oracle domain, internal: the domain's state and the value
 * helpers its files share (oracle.c holds the module comment on why the
 * enclosures are sound).
 *
 * The pieces:
 *   - oracle.c: the state's life, the value helpers (kinds, points,
 *     zeros, MPFR on point operands), the dispatch of an op to its family,
 *     attribution's rounding, loads and outputs, and the domain table.
 *   - oracle_unary.c: one-operand ops.
 *   - oracle_binary.c: two-operand ops, max/min and comparisons.
 *   - oracle_convert.c: loads of encodings, converts, bitcasts and
 *     reduce-precision.
 * A value is UNDECIDED whenever an op's result could differ in kind across
 * its operands' enclosures; nothing here fails on a number, and the
 * functions that return usc_status fail only on an op the domain cannot
 * state or on memory.
 */
#ifndef USC_ORACLES_ORACLE_INTERNAL_H
#define USC_ORACLES_ORACLE_INTERNAL_H

#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>
#include <mpfi.h>

#include "domain.h"
#include "oracle.h"

typedef usc__oracle_value value;

typedef struct orc_state {
	mpfr_prec_t prec;
	bool quantize;
	/* Attribution: the instructions whose results round (oracle.h). */
	const usc_hlo_instr *const *round_only;
	size_t round_only_count;
	void *ref; /* the reference domain's state: integer ops */
	mpfr_t a, b, lo, hi, t;
	mpfi_t ia, ib;
} orc_state;

typedef int (*mpfr_fn1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
typedef int (*mpfr_fn2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/* ------------------------------------------------ value helpers (oracle.c) */
void usc__orc_vcopy(value *d, const value *src);
void usc__orc_set_kind(value *v, usc__oracle_kind k);
void usc__orc_set_undecided(value *v);
void usc__orc_prep(orc_state *s, value *v);
bool usc__orc_is_point(const value *v);
bool usc__orc_is_zero_point(const value *v);
bool usc__orc_has_zero(const value *v);
int usc__orc_sign_of(const value *v);
void usc__orc_set_zero(orc_state *s, value *r, int sgn);
void usc__orc_fix_zero(value *r, int sgn);
void usc__orc_point_to_mpfr(const value *v, mpfr_ptr m);
void usc__orc_set_point(orc_state *s, value *r, mpfr_srcptr m);
void usc__orc_eval_points(orc_state *s, value *r, mpfr_fn1 f1, mpfr_fn2 f2,
			  const value *x, const value *y);

/* ------------------------------------------------------- oracle_unary.c */
usc_status usc__orc_unary(orc_state *s, const usc__dom_op *op, value *r,
			  const value *x);

/* ------------------------------------------------------ oracle_binary.c */
mpfr_fn2 usc__orc_binary_mpfr(usc_hlo_opcode op);
void usc__orc_maxmin(orc_state *s, value *r, bool is_max, const value *x,
		     const value *y);
void usc__orc_binary(orc_state *s, const usc__dom_op *op, value *r,
		     const value *x, const value *y);
void usc__orc_compare_float(const usc__dom_op *op, value *r, const value *x,
			    const value *y);

/* ----------------------------------------------------- oracle_convert.c */
usc_status usc__orc_load_bits(orc_state *s, usc_dtype t, uint64_t bits,
			      value *r, usc_error *err);
usc_status usc__orc_reduce_precision(orc_state *s, const usc__dom_op *op,
				     value *r, const value *x, usc_error *err);
usc_status usc__orc_convert(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err);
usc_status usc__orc_bitcast(orc_state *s, const usc__dom_op *op, value *r,
			    const value *x, usc_error *err);

#endif /* USC_ORACLES_ORACLE_INTERNAL_H */
