/*
 * ulpscope: device profiles.
 *
 * A profile states what a *correct* compiler for one target may do to a
 * kernel: keep intermediates wider than declared, contract a*b+c into an
 * FMA, reassociate reductions and dot accumulation, approximate
 * transcendental functions within stated ULP bounds, flush denormals, run
 * f32 dots in fewer bf16 passes or in tf32, and so on.  The legitimate
 * envelope (oracles/envelope.c) propagates exactly these freedoms; the
 * classification (src/analyze/classify.c) judges device values against it.
 *
 * Profiles are plain text files, one "key = value" per line (docs/
 * profiles.md lists every key); the built-in ones (strict, xla-cpu,
 * xla-gpu, xla-tpu) are the files under data/profiles/, compiled into the
 * library.  Every choice of a built-in profile cites its source there.
 */
#ifndef ULPSCOPE_PROFILE_H
#define ULPSCOPE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The functions whose accuracy a profile bounds, as X(ENUM, key, opcode
 * spelling).  key is the profile file's spelling (accuracy.KEY = ULPS).
 * divide is listed because some targets compute x / y as x * (1 / y).
 */
#define USC_PROFILE_FN_LIST(X)                                            \
	X(EXP, "exp", "exponential")                                      \
	X(EXPM1, "expm1", "exponential-minus-one")                        \
	X(LOG, "log", "log")                                              \
	X(LOG1P, "log1p", "log-plus-one")                                 \
	X(LOGISTIC, "logistic", "logistic")                               \
	X(TANH, "tanh", "tanh")                                           \
	X(ERF, "erf", "erf")                                              \
	X(SQRT, "sqrt", "sqrt")                                           \
	X(RSQRT, "rsqrt", "rsqrt")                                        \
	X(CBRT, "cbrt", "cbrt")                                           \
	X(SIN, "sin", "sine")                                             \
	X(COS, "cos", "cosine")                                           \
	X(TAN, "tan", "tan")                                              \
	X(ATAN2, "atan2", "atan2")                                        \
	X(POWER, "power", "power")                                        \
	X(DIVIDE, "divide", "divide")

typedef enum usc_profile_fn {
#define USC_X_(e, key, op) USC_PFN_##e,
	USC_PROFILE_FN_LIST(USC_X_)
#undef USC_X_
	USC_PFN_COUNT
} usc_profile_fn;

/* How an f32 x f32 dot may be computed (precision_config DEFAULT). */
typedef enum usc_profile_dot_f32 {
	USC_DOT_F32_FULL,     /* f32 products, f32 (or wider) accumulation */
	USC_DOT_F32_TF32,     /* operands may be rounded to tf32 (10-bit mantissa) */
	USC_DOT_F32_BF16_6,   /* bf16x6: split into three bf16 terms, 6 products */
	USC_DOT_F32_BF16_3,   /* bf16x3: hi*hi + hi*lo + lo*hi */
	USC_DOT_F32_BF16_1    /* operands rounded to bf16, one pass */
} usc_profile_dot_f32;

/* What a narrowing convert to an fp8 type may do with an overflow. */
typedef enum usc_profile_fp8_overflow {
	USC_FP8_OVF_NONSAT,   /* Inf where the format has it, else NaN (ml_dtypes) */
	USC_FP8_OVF_SAT,      /* the largest finite value of the sign */
	USC_FP8_OVF_EITHER    /* both are correct on this target */
} usc_profile_fp8_overflow;

/* What maximum and minimum may do with one NaN operand. */
typedef enum usc_profile_minmax_nan {
	USC_MINMAX_NAN_PROPAGATE, /* NaN (HLO semantics) */
	USC_MINMAX_NAN_DROP,      /* the other operand (IEEE maxNum) */
	USC_MINMAX_NAN_EITHER
} usc_profile_minmax_nan;

/*
 * Whether x / y may be computed as x * (1 / y): the reciprocal rounded to
 * a type, then a rounded product.  This models the rewrite itself, not an
 * error bound: a quotient such as 1 / 1 stays exact under it.
 */
typedef enum usc_profile_divide_reciprocal {
	USC_DIV_RECIP_NO,       /* x / y is correctly rounded (IEEE) */
	USC_DIV_RECIP_CONSTANT, /* for a constant divisor (XLA's simplifier) */
	USC_DIV_RECIP_ANY       /* for any divisor (LLVM's arcp) */
} usc_profile_divide_reciprocal;

/* Denormal flushing freedom of one element type (bit set). */
enum {
	USC_FLUSH_INPUTS = 1u,  /* an op may read a subnormal operand as 0 */
	USC_FLUSH_OUTPUTS = 2u  /* an op may write a subnormal result as 0 */
};

#define USC_PROFILE_NAME_MAX 64
#define USC_PROFILE_DESCRIPTION_MAX 128

typedef struct usc_profile {
	char name[USC_PROFILE_NAME_MAX];
	/*
	 * Intermediates may be kept in a type wider than declared, up to
	 * excess_type (an f32 bf16 op, say), and convert round trips such as
	 * f32 -> bf16 -> f32 may be elided.  Outputs always round to their
	 * declared type.  excess_type is meaningful only when
	 * excess_precision is set.
	 */
	bool excess_precision;
	usc_dtype excess_type;
	/* a * b + c may be computed with one rounding. */
	bool fma;
	/* reduce and reduce-window may combine in any order (any tree). */
	bool reassociate;
	/* dot and convolution may accumulate in any order. */
	bool reassociate_dot;
	/*
	 * The least precise type a dot of bf16 / f16 (resp. fp8) operands
	 * may accumulate in when its declared result is wider; USC_DTYPE_INVALID
	 * (0): the declared result type.
	 */
	usc_dtype dot_accumulation;
	usc_dtype fp8_dot_accumulation;
	usc_profile_dot_f32 dot_f32;
	/*
	 * The accuracy of each function in ULPs of the type it is computed
	 * in: 0.5 is correctly rounded.  The result is assumed to respect
	 * the function's range (tanh in [-1, 1], ...) whatever the bound.
	 */
	double accuracy[USC_PFN_COUNT];
	/* USC_FLUSH_* per element type, indexed by usc_dtype. */
	unsigned char flush[USC_DTYPE_COUNT];
	usc_profile_fp8_overflow fp8_overflow;
	usc_profile_minmax_nan minmax_nan;
	/*
	 * One line for people ("description = ..."); "" when not given.  It
	 * states no freedom: usc_profile_equal ignores it, and a profile
	 * that starts from a base does not inherit it.
	 */
	char description[USC_PROFILE_DESCRIPTION_MAX];
	/*
	 * Float elementwise ops whose declared type is narrower than
	 * compute_type are computed in compute_type and rounded once to the
	 * declared type (XLA's float normalization of bf16 / f16 arithmetic
	 * on CPU); the accuracy bounds then hold in ULPs of compute_type.
	 * USC_DTYPE_INVALID (0): each op is computed in its declared type.
	 */
	usc_dtype compute_type;
	/*
	 * Whether the flushing that flush[] names always happens (a fixed
	 * hardware mode such as x86's FTZ and DAZ) rather than may happen.
	 */
	bool flush_always;
	/*
	 * Whether an op that meets an infinity or a NaN (an operand that
	 * may be one, or a result that may overflow) may produce anything:
	 * LLVM's nnan / ninf fast-math flags.  The elements that depend on
	 * such an op then have no envelope (class undecided).
	 */
	bool nonfinite_undefined;
	/*
	 * Where a divide may be computed as a multiplication by the rounded
	 * reciprocal of its divisor (in addition to accuracy.divide).
	 */
	usc_profile_divide_reciprocal divide_reciprocal;
} usc_profile;

/* The names of the built-in profiles, NULL-terminated. */
const char *const *usc_profile_builtin_names(void);

/* The built-in profile NAME; USC_ENOTFOUND naming the known ones. */
usc_status usc_profile_builtin(const char *name, usc_profile *out,
			       usc_error *err);

/*
 * Parses profile text.  filename is used in messages only, which read
 *   FILE:LINE: unknown key 'fmaa' (expected one of ...)
 *   FILE:LINE: bad value 'maybe' for 'fma' (expected yes or no)
 * An unknown key, a bad value, a key given twice or a missing name is an
 * error.  A profile may start from another with "base = NAME" (a
 * built-in) as its first key; keys it does not set keep the base's values.
 */
usc_status usc_profile_parse(const char *text, size_t len,
			     const char *filename, usc_profile *out,
			     usc_error *err);

/* Reads and parses the profile file at path. */
usc_status usc_profile_load(const char *path, usc_profile *out,
			    usc_error *err);

/*
 * A built-in name, else a file path: what --profile NAME|FILE takes.  An
 * argument that is neither fails naming both possibilities.
 */
usc_status usc_profile_resolve(const char *name_or_path, usc_profile *out,
			       usc_error *err);

/*
 * The profile as profile text that usc_profile_parse reads back equal
 * (every key, canonical order).  *text is malloc'd; the caller frees it
 * with usc_profile_text_free (which keeps the library's allocation count
 * exact; plain free() releases it too).  USC_EINVAL if a field holds a
 * value the text format cannot state.
 */
usc_status usc_profile_format(const usc_profile *p, char **text,
			      usc_error *err);

/* Frees the text of usc_profile_format; NULL is allowed. */
void usc_profile_text_free(char *text);

/*
 * Whether two profiles state the same freedoms (names compared too, the
 * descriptions not; flush is compared for the real floating types only).
 */
bool usc_profile_equal(const usc_profile *a, const usc_profile *b);

/* The key and opcode spelling of a function. */
const char *usc_profile_fn_key(usc_profile_fn fn);
const char *usc_profile_fn_opcode(usc_profile_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_PROFILE_H */
