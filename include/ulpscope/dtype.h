/*
 * ulpscope: element types and number formats.
 *
 * USC_DTYPE_LIST is the one place where element types are named.  The names
 * are XLA's HLO spellings.  Every floating format is described by a handful
 * of parameters (widths, bias, how Inf/NaN/zero are encoded), and one set of
 * generic routines decodes, encodes and measures ULPs for all of them; the
 * formats' public definitions (IEEE 754, the OCP 8-bit and MX
 * specifications, ml_dtypes) are reproduced bit for bit.  docs/formats.md
 * documents each format and every policy choice.
 *
 * Encodings travel as uint64_t holding the format's bits in the low end.
 */
#ifndef ULPSCOPE_DTYPE_H
#define ULPSCOPE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum usc_kind {
	USC_KIND_PRED,
	USC_KIND_SINT,
	USC_KIND_UINT,
	USC_KIND_FLOAT,
	USC_KIND_COMPLEX,
	USC_KIND_OTHER /* token, opaque: shapes without numbers */
} usc_kind;

/* How a format encodes infinity. */
typedef enum usc_inf_style {
	USC_INF_NONE,
	USC_INF_IEEE /* exponent all ones, mantissa zero */
} usc_inf_style;

/* How a format encodes NaN. */
typedef enum usc_nan_style {
	USC_NAN_NONE,
	USC_NAN_IEEE,    /* exponent all ones, mantissa non-zero */
	USC_NAN_ALLONES, /* "fn": exponent and mantissa all ones, either sign */
	USC_NAN_NEGZERO  /* "fnuz": the pattern of -0 (sign bit alone) */
} usc_nan_style;

/* Which zeros a format has. */
typedef enum usc_zero_style {
	USC_ZERO_SIGNED,   /* +0 and -0 */
	USC_ZERO_UNSIGNED, /* +0 only */
	USC_ZERO_NONE      /* no zero at all (f8e8m0fnu) */
} usc_zero_style;

/*
 * What happens to a value whose rounded magnitude exceeds the largest
 * finite number of the format (and to an infinite input where the format
 * has no infinity).  DEFAULT selects the format's own policy, the one
 * ml_dtypes and XLA's convert use.  WRAP applies to integer types only.
 */
#define USC_OVERFLOW_LIST(X)                                                 \
	X(DEFAULT, "default")                                                \
	X(INF, "inf")                                                        \
	X(SATURATE, "saturate")                                              \
	X(NAN, "nan")                                                        \
	X(WRAP, "wrap")

typedef enum usc_overflow {
#define USC__OVF_ENUM(id, name) USC_OVF_##id,
	USC_OVERFLOW_LIST(USC__OVF_ENUM)
#undef USC__OVF_ENUM
	USC_OVF_COUNT
} usc_overflow;

/*
 * The element types.  X(ID, name, kind, bits, container_bytes, exp_bits,
 * man_bits, bias, inf, nan, zero, has_sign, has_subnormals, overflow);
 * the last column is a full usc_overflow name.
 * bits is the width of one encoding; container_bytes the bytes one element
 * takes in an unpacked array (sub-byte types take one byte each, as in
 * ml_dtypes and numpy).  For integer types only the first five matter.
 */
#define USC_DTYPE_LIST(X)                                                                \
	X(PRED, "pred", PRED, 1, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)       \
	X(S1, "s1", SINT, 1, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)           \
	X(S2, "s2", SINT, 2, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)           \
	X(S4, "s4", SINT, 4, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)           \
	X(S8, "s8", SINT, 8, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)           \
	X(S16, "s16", SINT, 16, 2, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)        \
	X(S32, "s32", SINT, 32, 4, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)        \
	X(S64, "s64", SINT, 64, 8, 0, 0, 0, NONE, NONE, UNSIGNED, 1, 0, USC_OVF_SATURATE)        \
	X(U1, "u1", UINT, 1, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)           \
	X(U2, "u2", UINT, 2, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)           \
	X(U4, "u4", UINT, 4, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)           \
	X(U8, "u8", UINT, 8, 1, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)           \
	X(U16, "u16", UINT, 16, 2, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)        \
	X(U32, "u32", UINT, 32, 4, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)        \
	X(U64, "u64", UINT, 64, 8, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)        \
	X(F16, "f16", FLOAT, 16, 2, 5, 10, 15, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)            \
	X(BF16, "bf16", FLOAT, 16, 2, 8, 7, 127, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)          \
	X(F32, "f32", FLOAT, 32, 4, 8, 23, 127, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)           \
	X(F64, "f64", FLOAT, 64, 8, 11, 52, 1023, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)         \
	X(F8E5M2, "f8e5m2", FLOAT, 8, 1, 5, 2, 15, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)        \
	X(F8E4M3, "f8e4m3", FLOAT, 8, 1, 4, 3, 7, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)         \
	X(F8E4M3FN, "f8e4m3fn", FLOAT, 8, 1, 4, 3, 7, NONE, ALLONES, SIGNED, 1, 1, USC_OVF_NAN)  \
	X(F8E4M3FNUZ, "f8e4m3fnuz", FLOAT, 8, 1, 4, 3, 8, NONE, NEGZERO, UNSIGNED, 1, 1, \
	  USC_OVF_NAN)                                                                           \
	X(F8E4M3B11FNUZ, "f8e4m3b11fnuz", FLOAT, 8, 1, 4, 3, 11, NONE, NEGZERO,          \
	  UNSIGNED, 1, 1, USC_OVF_NAN)                                                           \
	X(F8E5M2FNUZ, "f8e5m2fnuz", FLOAT, 8, 1, 5, 2, 16, NONE, NEGZERO, UNSIGNED, 1,   \
	  1, USC_OVF_NAN)                                                                        \
	X(F8E3M4, "f8e3m4", FLOAT, 8, 1, 3, 4, 3, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)         \
	X(F8E8M0FNU, "f8e8m0fnu", FLOAT, 8, 1, 8, 0, 127, NONE, ALLONES, NONE, 0, 0,     \
	  USC_OVF_NAN)                                                                           \
	X(F6E2M3FN, "f6e2m3fn", FLOAT, 6, 1, 2, 3, 1, NONE, NONE, SIGNED, 1, 1,          \
	  USC_OVF_SATURATE)                                                                      \
	X(F6E3M2FN, "f6e3m2fn", FLOAT, 6, 1, 3, 2, 3, NONE, NONE, SIGNED, 1, 1,          \
	  USC_OVF_SATURATE)                                                                      \
	X(F4E2M1FN, "f4e2m1fn", FLOAT, 4, 1, 2, 1, 1, NONE, NONE, SIGNED, 1, 1,          \
	  USC_OVF_SATURATE)                                                                      \
	X(C64, "c64", COMPLEX, 64, 8, 8, 23, 127, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)         \
	X(C128, "c128", COMPLEX, 128, 16, 11, 52, 1023, IEEE, IEEE, SIGNED, 1, 1, USC_OVF_INF)   \
	X(TOKEN, "token", OTHER, 0, 0, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)    \
	X(OPAQUE, "opaque", OTHER, 0, 0, 0, 0, 0, NONE, NONE, UNSIGNED, 0, 0, USC_OVF_SATURATE)

typedef enum usc_dtype {
	USC_DTYPE_INVALID = 0,
#define USC__DTYPE_ENUM(id, ...) USC_##id,
	USC_DTYPE_LIST(USC__DTYPE_ENUM)
#undef USC__DTYPE_ENUM
	USC_DTYPE_COUNT
} usc_dtype;

/* One format's descriptor: the parameters of its row in USC_DTYPE_LIST. */
typedef struct usc_format {
	usc_dtype id;
	const char *name;
	usc_kind kind;
	int bits;
	int container_bytes;
	int exp_bits; /* complex: of each part */
	int man_bits; /* explicit (stored) mantissa bits */
	int bias;
	usc_inf_style inf;
	usc_nan_style nan;
	usc_zero_style zero;
	bool has_sign;
	bool has_subnormals;
	usc_overflow default_overflow;
} usc_format;

/* The descriptor of a type, or NULL for a value outside the enum. */
const usc_format *usc_format_of(usc_dtype t);

/* The HLO spelling of a type ("bf16"); "invalid" outside the enum. */
const char *usc_dtype_name(usc_dtype t);

/*
 * Looks a type up by its HLO spelling: the first len bytes of name (which
 * need not be NUL-terminated).  USC_ENOTFOUND if no type has that name.
 */
usc_status usc_dtype_from_name(const char *name, size_t len, usc_dtype *out);

bool usc_dtype_is_float(usc_dtype t);   /* a real floating format */
bool usc_dtype_is_integer(usc_dtype t); /* s*, u* */

/*
 * Derived figures of a real floating format, all exact in double.  emin
 * and emax are the unbiased exponents of the smallest normal and of the
 * largest finite value; precision counts the implicit bit.
 */
typedef struct usc_float_info {
	int precision;
	int emin;
	int emax;
	double max_finite;
	double min_normal;
	double min_subnormal; /* equals min_normal where there are no subnormals */
	double epsilon;       /* 2^(1-precision): the gap above 1 */
	uint64_t max_finite_bits;
	uint64_t min_subnormal_bits; /* smallest positive encoding */
	uint64_t inf_bits;           /* +Inf; 0 if none */
	uint64_t nan_bits;           /* canonical quiet NaN, positive; 0 if none */
	uint64_t sign_mask;          /* 0 where there is no sign bit */
} usc_float_info;

/* USC_EINVAL unless t is a real floating format. */
usc_status usc_float_info_of(usc_dtype t, usc_float_info *out);

/* ------------------------------------------------------------------ */
/* Rounding                                                            */

#define USC_ROUND_LIST(X)                                                    \
	X(NEAREST_EVEN, "nearest-even")                                      \
	X(NEAREST_AWAY, "nearest-away")                                      \
	X(TOWARD_ZERO, "toward-zero")                                        \
	X(UP, "up")                                                          \
	X(DOWN, "down")                                                      \
	X(STOCHASTIC, "stochastic")

typedef enum usc_round_mode {
#define USC__RND_ENUM(id, name) USC_RND_##id,
	USC_ROUND_LIST(USC__RND_ENUM)
#undef USC__RND_ENUM
	USC_RND_COUNT
} usc_round_mode;

/*
 * How to round one value into a format.  Stochastic rounding adds the low
 * random_bits of random to the first random_bits bits below the kept
 * mantissa and truncates: a value at fractional position f between two
 * codes rounds up for exactly floor(f * 2^random_bits) of the
 * 2^random_bits random words, reproducibly.  random_bits is 1..64; 0 means
 * USC_STOCHASTIC_DEFAULT_BITS.
 */
typedef struct usc_rounding {
	usc_round_mode mode;
	usc_overflow overflow;
	bool flush_subnormals; /* results below the smallest normal become zero */
	uint64_t random;
	unsigned random_bits;
} usc_rounding;

#define USC_STOCHASTIC_DEFAULT_BITS 32

/* Nearest-even, the format's own overflow policy, subnormals kept. */
#define USC_ROUNDING_DEFAULT                                                 \
	((usc_rounding){USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, false, 0, 0})

const char *usc_round_mode_name(usc_round_mode m);
usc_status usc_round_mode_from_name(const char *name, usc_round_mode *out);
const char *usc_overflow_name(usc_overflow o);
usc_status usc_overflow_from_name(const char *name, usc_overflow *out);

/*
 * Numeric events of one encode, OR-ed together.  They are data, not
 * errors: a NaN input encodes to NaN with no flag at all.
 */
enum {
	USC_FLAG_INEXACT = 1u << 0,   /* the result differs from the input */
	USC_FLAG_OVERFLOW = 1u << 1,  /* the rounded magnitude exceeded max */
	USC_FLAG_UNDERFLOW = 1u << 2, /* tiny and inexact */
	USC_FLAG_INVALID = 1u << 3,   /* no encoding of the value's kind
					 (NaN into a NaN-less format, a
					 negative or zero into f8e8m0fnu,
					 NaN into an integer) */
	USC_FLAG_FLUSHED = 1u << 4,   /* a subnormal result became zero */
	USC_FLAG_SATURATED = 1u << 5  /* clamped to the largest finite */
};

/*
 * Encodes x into type t.  Rounds exactly once.  r may be NULL for
 * USC_ROUNDING_DEFAULT.  *flags (may be NULL) receives the events.  For
 * integer types the default rounding is nevertheless the caller's: XLA's
 * convert truncates, so pass USC_RND_TOWARD_ZERO for its semantics.
 */
usc_status usc_encode_double(usc_dtype t, double x, const usc_rounding *r,
			     uint64_t *bits, unsigned *flags);

/*
 * Decodes bits of type t to a double.  Exact for every floating format
 * and for integers of magnitude up to 2^53; USC_ERANGE for a 64-bit
 * integer beyond that (*out then holds the nearest double).  Bits above
 * the format's width are ignored.
 */
usc_status usc_decode_double(usc_dtype t, uint64_t bits, double *out);

/* Decodes an integer-kind encoding (pred, s*, u*) exactly. */
usc_status usc_decode_int(usc_dtype t, uint64_t bits, int64_t *s, uint64_t *u);

bool usc_bits_is_nan(usc_dtype t, uint64_t bits);
bool usc_bits_is_inf(usc_dtype t, uint64_t bits);

/* ------------------------------------------------------------------ */
/* ULPs                                                                */

/*
 * The ULP of format t at the real x: 2^(max(E, emin) - (precision - 1))
 * where 2^E <= |x| < 2^(E+1), E capped at emax (so values beyond the range
 * use the top binade's spacing).  At 0 it is the subnormal spacing.  NaN
 * for a NaN x; infinities take the top binade's spacing.
 */
usc_status usc_ulp_double(usc_dtype t, double x, double *out);

/*
 * The ordinal distance from encoding a to encoding b: how many steps of
 * the format's ordered set of values lie between them, positive when b is
 * larger.  +0 and -0 are the same point; +Inf sits one step beyond the
 * largest finite value.  USC_EDOMAIN if either is NaN.
 */
usc_status usc_ulp_distance(usc_dtype t, uint64_t a, uint64_t b,
			    int64_t *out);

/*
 * The signed error of encoding y against the real reference ref, in ULPs
 * of the format at ref: (y - ref) / ulp(ref), rounded to nearest double.
 * Both NaN: 0.  One NaN: NaN.  Infinities: 0 when equal, else +-Inf in
 * the direction of y - ref.
 */
usc_status usc_ulp_error_double(usc_dtype t, uint64_t y, double ref,
				double *out);


/* ------------------------------------------------------------------ */
/* Text                                                                */

/*
 * Parses a decimal ("0.1", "-1e-3"), hexadecimal float ("0x1.8p-3"),
 * "inf", "-inf" or "nan" exactly and encodes it into t, rounding once: no
 * intermediate double or float ever holds the value.
 */
usc_status usc_encode_str(usc_dtype t, const char *text, const usc_rounding *r,
			  uint64_t *bits, unsigned *flags, usc_error *err);

/*
 * The error of encoding y against the reference written as text (a
 * decimal is taken at 256 bits, so "0.1" means 0.1, not the double
 * nearest it): *ulps receives (y - ref) / ulp(ref) as usc_ulp_error_double
 * defines it, and *ulp_ref (may be NULL) ulp(ref).
 */
usc_status usc_ulp_error_str(usc_dtype t, uint64_t y, const char *ref,
			     double *ulps, double *ulp_ref, usc_error *err);

/* Enough room for the exact decimal of any encoding, NUL included. */
#define USC_EXACT_DECIMAL_SIZE 1200

/*
 * Writes the exact decimal value of an encoding ("0.1000000000000000055511151231257827021181583404541015625",
 * "-0", "inf", "nan", "448") into buf.  Every binary value has a finite
 * decimal expansion; it is written in full.  USC_ERANGE if size is too
 * small (USC_EXACT_DECIMAL_SIZE always suffices).
 */
usc_status usc_exact_decimal(usc_dtype t, uint64_t bits, char *buf,
			     size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_DTYPE_H */
