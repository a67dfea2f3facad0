/*
 * The legitimate envelope (internal): per element, a sound set that
 * contains every value a correct compiler may produce for the kernel
 * under a device profile (include/ulpscope/profile.h): excess precision,
 * FMA contraction, reassociated reductions and dots, approximate
 * functions within stated ULP bounds, denormal flushing, fp8 overflow and
 * NaN-dropping min/max.  docs/envelope.md states every freedom and its
 * bound.
 *
 * A float element is the union of a finite interval [lo, hi] (doubles,
 * rounded outward), NaN, +Inf and -Inf, each possible or not; or UNKNOWN
 * when the domain cannot bound it (the element is then undecided, never a
 * defect).  Integer and pred elements are integer intervals.  The exact
 * range of each op over its operand sets comes from the MPFI oracle
 * (oracles/oracle.h); the freedoms are then applied with the dtype
 * core's directed roundings (usc_encode_mpfr), so nothing rests on libm.
 *
 * The interpreter creates the domain through usc__domain_envelope.create
 * (the strict profile), then calls usc__envelope_set_profile with
 * usc_eval_options.profile before it evaluates anything.
 */
#ifndef USC_ORACLES_ENVELOPE_H
#define USC_ORACLES_ENVELOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
#include "ulpscope/profile.h"
#include "ulpscope/status.h"

#include "domain.h"

extern const usc__domain_ops usc__domain_envelope;

/* What an envelope element may be (usc__envelope_elem.flags). */
enum {
	USC__ENV_FINITE = 1u << 0,       /* a finite value in [lo, hi] */
	USC__ENV_NAN = 1u << 1,          /* NaN (any payload, any sign) */
	USC__ENV_POS_INF = 1u << 2,
	USC__ENV_NEG_INF = 1u << 3,
	USC__ENV_UNKNOWN = 1u << 4,      /* not bounded: undecided */
	USC__ENV_RANGE_CLIPPED = 1u << 5, /* a function's range clipped it */
	/* subnormal flushing may have acted on it or on what it came from */
	USC__ENV_FLUSHED = 1u << 6,
	/* an approximate function (accuracy above 1/2 ulp) went into it */
	USC__ENV_APPROX = 1u << 7,
	/*
	 * No subnormal of the element's type is in the set, although [lo, hi]
	 * may span them: the set is {+-0} and the normal values in [lo, hi].
	 * Set on the results of ops that a fixed flush-to-zero mode always
	 * flushes (profile flush_mode = always): a subnormal there is
	 * impossible for a correct compiler, and an interval alone cannot
	 * leave the gap around zero out.
	 */
	USC__ENV_NO_SUBNORMAL = 1u << 8
};

/*
 * The certificate to_output writes when its enclosure argument is not
 * NULL.  With USC__ENV_FINITE, lo <= hi are values of the output type
 * (the finite set rounded to nearest-even into it, a monotone map, so
 * every finite device value a correct compiler may produce lies in
 * [lo, hi]).  UNKNOWN may come with other flags (a representative).
 */
typedef struct usc__envelope_elem {
	double lo, hi;
	unsigned flags;
	/* How many roundings the element's computation holds (a count of
	 * rounding ops, reductions counting each addition). */
	double roundings;
} usc__envelope_elem;

/*
 * Whether the device encoding device_bits of type t lies inside e: NaN
 * needs USC__ENV_NAN, +-Inf the matching flag, a finite value FINITE and
 * lo <= d <= hi (a zero of either sign is inside when 0 is), and d not
 * subnormal under USC__ENV_NO_SUBNORMAL.  An UNKNOWN
 * element contains everything: it can never prove a defect.  Integer and
 * pred types compare their exact values.
 */
bool usc__envelope_contains(const usc__envelope_elem *e, usc_dtype t,
			    uint64_t device_bits);

/*
 * The public form of an element (include/ulpscope/classify.h): the same
 * bounds and count, the flags mapped to USC_ENV_*.
 */
usc_envelope usc__envelope_public(const usc__envelope_elem *e);

/* The strict profile: the reference semantics, nothing more. */
void usc__envelope_profile_strict(usc_profile *p);

/*
 * Sets the profile of the domain state (copied; NULL: strict).  Call it
 * before evaluating.  USC_EINVAL for an excess type that is not a float
 * type.
 */
usc_status usc__envelope_set_profile(void *state, const usc_profile *p,
				     usc_error *err);

/*
 * One element of the domain, for tests and for callers whose inputs are
 * themselves sets: lo, hi bound the finite part; flags are the
 * USC__ENV_* above plus private bits (the signs a zero may have, whether
 * an integer is an exact point held in bits).
 */
typedef struct usc__envelope_value {
	double lo, hi;
	uint64_t bits;
	unsigned flags;
	float roundings; /* see usc__envelope_elem */
} usc__envelope_value;

/*
 * The fast path (docs/envelope.md, "The fast path"): how many elements of
 * elementwise float ops the state decided in double (*fast) and how many
 * went to MPFR (*escalated), since it was created.
 */
void usc__envelope_counts(const void *state, uint64_t *fast,
			  uint64_t *escalated);

/*
 * Every op through MPFR (on), or the fast path where it decides (off, the
 * default unless the environment variable USC_ENVELOPE is "mpfr").
 */
void usc__envelope_set_mpfr_only(void *state, bool on);

/*
 * The fast path's array loops (docs/envelope.md, "The array loops") and
 * the shortcut of the exact ops on (the default) or off: every element
 * then goes through the per-element code.  The sets are the same either
 * way; tests compare the two.
 */
void usc__envelope_set_loops(void *state, bool on);

/*
 * How many elements the array loops completed since the state was made,
 * with the exact ops env_apply completes without the per-element
 * dispatch (negate, maximum, minimum; docs/envelope.md).
 */
uint64_t usc__envelope_looped(const void *state);

/* v = the finite interval [lo, hi] of a float type (zeros of both signs). */
void usc__envelope_value_set(usc__envelope_value *v, double lo, double hi);

#endif /* USC_ORACLES_ENVELOPE_H */
