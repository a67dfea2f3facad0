/*
 * ulpscope: legitimate or defect — the class of each device element and
 * the verdict of a kernel.
 *
 * An element is judged from four facts about it: the device's encoding,
 * the strict reference's encoding (every op correctly rounded to its
 * type), the certified oracle's ULP error (the device against the exact
 * value), and the legitimate envelope (every value a correct compiler may
 * produce under the device profile; oracles/envelope.c).  docs/method.md
 * explains the classes, the expected-error estimate and the verdict with a
 * worked example.
 */
#ifndef ULPSCOPE_CLASSIFY_H
#define ULPSCOPE_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The classes, as X(ENUM, name, value); the value is what the HDF5 enum
 * stores.  In the order of how much they matter to a reader, mildest
 * first, except undecided, which says nothing either way.
 */
#define USC_CLASS_LIST(X)                                                 \
	X(EXACT, "exact", 0)                 /* bit-identical to reference */ \
	X(ROUNDING, "rounding", 1)           /* one rounding from it */       \
	X(ENVELOPE, "envelope", 2)           /* inside the envelope */        \
	X(SUSPICIOUS, "suspicious", 3)       /* inside, beyond expected */    \
	X(DEFECT, "defect", 4)               /* outside the envelope */       \
	X(NAN_MISMATCH, "nan-mismatch", 5)                                    \
	X(INF_MISMATCH, "inf-mismatch", 6)                                    \
	X(SIGN_MISMATCH, "sign-mismatch", 7)                                  \
	X(UNDECIDED, "undecided", 8)

typedef enum usc_class {
#define USC_X_(e, name, v) USC_CLASS_##e = v,
	USC_CLASS_LIST(USC_X_)
#undef USC_X_
	USC_CLASS_COUNT
} usc_class;

/* The verdict of a kernel, mildest first. */
#define USC_VERDICT_LIST(X)                                               \
	X(LEGIT, "legit")                                                 \
	X(SUSPICIOUS, "suspicious")                                       \
	X(DEFECT, "defect")                                               \
	X(UNDECIDED, "undecided")

typedef enum usc_verdict {
#define USC_X_(e, name) USC_VERDICT_##e,
	USC_VERDICT_LIST(USC_X_)
#undef USC_X_
	USC_VERDICT_COUNT
} usc_verdict;

const char *usc_class_name(usc_class c);
const char *usc_verdict_name(usc_verdict v);

/* What an envelope element allows (flags of usc_envelope). */
enum {
	USC_ENV_FINITE = 1u,         /* finite values in [lo, hi] */
	USC_ENV_NAN = 2u,            /* a NaN */
	USC_ENV_POS_INF = 4u,        /* +Inf */
	USC_ENV_NEG_INF = 8u,        /* -Inf */
	USC_ENV_UNKNOWN = 16u,       /* the envelope could not be bounded */
	USC_ENV_RANGE_CLIPPED = 32u, /* a range invariant cut [lo, hi] */
	/*
	 * Subnormal flushing may have acted on the element or on what it
	 * is computed from: a deviation by design, not an accumulation of
	 * rounding errors, so the element is never called suspicious.
	 */
	USC_ENV_FLUSHED = 64u,
	/*
	 * An approximate function (accuracy above 1/2 ulp) went into it:
	 * its error may be systematic up to the bound, not random, so the
	 * element is never called suspicious either.
	 */
	USC_ENV_APPROX = 128u,
	/*
	 * No subnormal of the element's type is in the set, although [lo, hi]
	 * may span them: the set is {+-0} and the normal values in [lo, hi].
	 * A profile whose flushing is a fixed mode (flush_mode = always)
	 * makes a subnormal result of add, subtract, multiply and divide
	 * impossible.  Not stored in a results file's uint8 envelope_flags
	 * (docs/results.md); its effect is in the stored class.
	 */
	USC_ENV_NO_SUBNORMAL = 256u
};

/*
 * The legitimate envelope of one element: with USC_ENV_FINITE, every
 * finite value a correct compiler may produce lies in [lo, hi] (both
 * values of the element's type; zeros of either sign count as inside when
 * 0 is), and is not subnormal under USC_ENV_NO_SUBNORMAL.
 */
typedef struct usc_envelope {
	double lo, hi;
	unsigned flags;
	/*
	 * How many roundings the element's computation holds (rounding
	 * ops, each addition of a reduction): the n of the expected error.
	 */
	double roundings;
} usc_envelope;

/* Whether the encoding bits of type t lies inside e. */
bool usc_envelope_contains(const usc_envelope *e, usc_dtype t, uint64_t bits);

/* The default lambda of the expected-error estimate (docs/method.md). */
#define USC_CLASSIFY_LAMBDA 4.0

/* One element to judge. */
typedef struct usc_classify_input {
	usc_dtype type;       /* a float type */
	uint64_t device;      /* encodings of type */
	uint64_t reference;
	/*
	 * The device's error against the exact value, (y - y*) / ulp(y*),
	 * when the oracle decided it (oracle_decided), else ignored.
	 */
	bool oracle_decided;
	double ulp_oracle;
	/*
	 * The exact value (the oracle's midpoint; NaN when unknown).  When
	 * it lies outside the envelope (a profile that always flushes
	 * subnormals, say), the expected error is measured from the
	 * envelope's point nearest to it instead: the legitimate value that
	 * deviates least.
	 */
	double exact;
	usc_envelope envelope;
	double lambda;        /* <= 0: USC_CLASSIFY_LAMBDA */
} usc_classify_input;

typedef struct usc_classify_result {
	usc_class cls;
	/*
	 * For elements outside the envelope: how far, in ordinal steps of
	 * the type from the nearer bound (>= 1); 0 inside; +Inf for NaN and
	 * infinity mismatches.
	 */
	double outside_ulps;
	/*
	 * The expected |error| in ULPs that separates envelope from
	 * suspicious: 1 + w min(1, lambda / sqrt(n)), w how far the
	 * envelope reaches from the exact value (its half-width when that
	 * is unknown) in ULPs of the type at the element, n its count of
	 * roundings (docs/method.md); NaN when no finite envelope.
	 */
	double expected_ulps;
} usc_classify_result;

/* Judges one element.  USC_EINVAL unless in->type is a float type. */
usc_status usc_classify_element(const usc_classify_input *in,
				usc_classify_result *out, usc_error *err);

/* Counts per class and the verdict they imply. */
typedef struct usc_classify_counts {
	uint64_t n[USC_CLASS_COUNT];
} usc_classify_counts;

/*
 * The verdict of counts: defect when any element is a defect or a
 * NaN/Inf/sign mismatch, else suspicious when any is suspicious, else
 * undecided when any is undecided, else legit.
 */
usc_verdict usc_classify_verdict(const usc_classify_counts *c);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_CLASSIFY_H */
