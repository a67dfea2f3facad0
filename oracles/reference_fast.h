/*
 * The fast strict reference (internal): the reference domain's values and
 * semantics (every op correctly rounded, nearest-even, to its declared
 * type; a value is the encoding of its type), decided in double wherever
 * that is provably the correctly rounded result, and by the reference
 * domain's MPFR Ziv loop only for the rest.
 *
 *   - add, subtract, multiply, divide and sqrt of formats of at most 24
 *     bits of precision are computed in double and rounded once (double
 *     rounding through 53 >= 2p + 2 bits is innocuous); f64 is the
 *     hardware's own IEEE operation.
 *   - the functions the certified tier bounds (exp, log, tanh, logistic,
 *     erf, pow, ...) take the tier's ball of the exact value at the exact
 *     operands; when every real in it rounds to one code of the declared
 *     type, that code is the correctly rounded result.  Otherwise (a tie
 *     or a near-tie, a result of f64, a special value) the element is
 *     escalated: the reference domain computes it in MPFR.
 *   - everything else (converts, comparisons, integer ops, the exact
 *     float ops) is the reference domain's own code.
 *
 * So the values are the reference domain's, bit for bit
 * (tests/eval/test_reference_fast.c holds them to it on every corpus
 * case); docs/reference.md states the method and its sources.  The
 * evaluator uses this domain for USC_DOMAIN_REFERENCE unless
 * usc_eval_options.reference_mpfr or the environment variable
 * USC_REFERENCE_MPFR asks for the MPFR path.
 */
#ifndef USC_ORACLES_REFERENCE_FAST_H
#define USC_ORACLES_REFERENCE_FAST_H

#include <stdint.h>

#include "domain.h"

/* The fast reference: one uint64_t encoding per element. */
extern const usc__domain_ops usc__domain_reference_fast;

/*
 * What the fast reference has done since its state was created, counted
 * in op-elements (one op applied to one element): functions is every
 * op-element of a function the MPFR reference evaluates in a Ziv loop
 * (exp, tanh, pow, ...), escalated those of them that went to MPFR here
 * because double could not decide them.
 */
typedef struct usc__reference_fast_counts {
	uint64_t functions;
	uint64_t escalated;
} usc__reference_fast_counts;

/* The counts of a state of usc__domain_reference_fast. */
void usc__reference_fast_get_counts(const void *state,
				    usc__reference_fast_counts *out);

/* Whether the environment asks for the MPFR reference (USC_REFERENCE_MPFR). */
bool usc__reference_mpfr_from_env(void);

#endif /* USC_ORACLES_REFERENCE_FAST_H */
