/*
 * The numeric domain interface of the evaluator (internal).
 *
 * The interpreter in src/eval/ knows HLO semantics once: which operand
 * element feeds which output element, in which order a reduction runs,
 * which computation a reduce or a fusion calls.  A domain knows arithmetic
 * once: what a value is (an encoding of the declared type, an MPFR
 * interval, a double with an error radius, a mutated encoding) and what
 * every elementwise op does to values.  The interpreter never looks inside
 * a value; it moves values by index maps (copy) and asks the domain for
 * everything else through the table below.
 *
 * Values are fixed-size blobs of value_size bytes, stored contiguously.  A
 * domain whose values own memory (MPFR numbers) sets init and clear; the
 * interpreter calls init on every array it allocates and clear before it
 * frees one, and copies values only through copy.  A domain of plain bytes
 * leaves the three NULL and the interpreter uses memset and memcpy.
 *
 * Every entry that can fail returns usc_status and writes a message into
 * err; numeric events (NaN, overflow, inexact) are never failures.
 */
#ifndef USC_ORACLES_DOMAIN_H
#define USC_ORACLES_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/hlo.h"
#include "ulpscope/status.h"

/* The comparison of a compare op: its direction= attribute. */
typedef enum usc__cmp_dir {
	USC__CMP_EQ,
	USC__CMP_NE,
	USC__CMP_LT,
	USC__CMP_LE,
	USC__CMP_GT,
	USC__CMP_GE
} usc__cmp_dir;

/*
 * The possible outcomes of a comparison, as bits, for the interval
 * domains (oracle, tier, envelope): less, equal, greater, unordered.
 */
enum {
	USC__POSS_LT = 1,
	USC__POSS_EQ = 2,
	USC__POSS_GT = 4,
	USC__POSS_UN = 8
};

/* Whether compare direction d holds for the one outcome given. */
static inline bool usc__cmp_holds(usc__cmp_dir d, unsigned outcome)
{
	switch (d) {
	case USC__CMP_EQ: return outcome == USC__POSS_EQ;
	case USC__CMP_NE: return outcome != USC__POSS_EQ;
	case USC__CMP_LT: return outcome == USC__POSS_LT;
	case USC__CMP_LE:
		return outcome == USC__POSS_LT || outcome == USC__POSS_EQ;
	case USC__CMP_GT: return outcome == USC__POSS_GT;
	case USC__CMP_GE:
		return outcome == USC__POSS_GT || outcome == USC__POSS_EQ;
	}
	return false;
}

/* The type= attribute of a compare; DEFAULT picks by the operand type. */
typedef enum usc__cmp_type {
	USC__CMP_DEFAULT,
	USC__CMP_FLOAT,
	USC__CMP_TOTALORDER,
	USC__CMP_SIGNED,
	USC__CMP_UNSIGNED
} usc__cmp_type;

/* The most operands an elementwise op takes (select, clamp). */
#define USC__DOM_MAX_ARGS 3

/*
 * One elementwise operation, decoded once per instruction by the
 * interpreter so that a domain never parses attributes per element.  The
 * interpreter also synthesizes ops that no instruction spells (the
 * multiply and add of a dot, the convert of a dot operand): their instr is
 * the instruction they serve (for messages), possibly NULL.
 */
typedef struct usc__dom_op {
	usc_hlo_opcode op;
	usc_dtype result;                    /* declared element type */
	unsigned nargs;
	usc_dtype arg[USC__DOM_MAX_ARGS];     /* operand element types */
	usc__cmp_dir cmp_dir;                 /* compare */
	usc__cmp_type cmp_type;               /* compare, never DEFAULT */
	int exponent_bits, mantissa_bits;     /* reduce-precision */
	const usc_hlo_instr *instr;           /* for messages; may be NULL */
} usc__dom_op;

/*
 * The products of a dot handed to a domain in one piece (the optional
 * matmul entry below): for b < batch, C[b] = A[b] B[b], where A[b] is
 * m x k, B[b] is k x n and C[b] is m x n, all row-major and contiguous
 * (A[b] starts at value b m k of a, B[b] at b k n of b, C[b] at b m n of
 * c).  a holds values of element type a_type and b of b_type, unconverted:
 * the dot's semantics convert each operand to result and then sum the
 * products exactly or rounded as the domain defines, so the domain itself
 * decides what the converts mean.  c holds initialized values of type
 * result; it never aliases a or b.
 */
typedef struct usc__dom_matmul {
	size_t batch, m, n, k;
	usc_dtype a_type, b_type, result;
	const void *a;
	const void *b;
	void *c;
	const usc_hlo_instr *instr;           /* for messages; may be NULL */
} usc__dom_matmul;

typedef struct usc__domain_ops {
	const char *name;
	size_t value_size;

	/* Per-evaluator state (scratch numbers, caches, options). */
	usc_status (*create)(void **state, usc_error *err);
	void (*destroy)(void *state);

	/* Value lifetime; all three may be NULL for plain-byte values. */
	void (*init)(void *state, void *values, size_t n);
	void (*clear)(void *state, void *values, size_t n);
	void (*copy)(void *state, void *dst, const void *src, size_t n);

	/* The value of an encoding of type t (inputs, iota). */
	usc_status (*load)(void *state, usc_dtype t, uint64_t bits, void *out,
			   usc_error *err);
	/* The value of a constant's element as written (exact text). */
	usc_status (*constant)(void *state, usc_dtype t,
			       const usc_hlo_scalar *s, void *out,
			       usc_error *err);
	/*
	 * Every elementwise op: out[i] = op(args[0][i*s0], ...) for i < n,
	 * where s_k is 1, or 0 when bit k of scalar_args is set (an operand
	 * broadcast from one value: clamp's scalar bounds, the accumulator
	 * of a reduction).  out never aliases an argument.
	 */
	usc_status (*apply)(void *state, const usc__dom_op *op, size_t n,
			    void *out, const void *const *args,
			    unsigned scalar_args, usc_error *err);

	/*
	 * The encoding of type t that represents a value in an output
	 * tensor: the value itself in the reference domain, the midpoint
	 * rounded to nearest in an interval domain.  enclosure, when not
	 * NULL, is a domain-defined certificate (later: an MPFR interval).
	 */
	usc_status (*to_output)(void *state, usc_dtype t, const void *v,
				uint64_t *bits, void *enclosure,
				usc_error *err);
	/* Whether a pred value is true (select, the gather of masks). */
	bool (*is_true)(void *state, const void *v);
	/* The exact integer value of an integer-typed value (indices). */
	usc_status (*to_index)(void *state, usc_dtype t, const void *v,
			       int64_t *out, usc_error *err);

	/*
	 * Optional: every output element of a dot at once (usc__dom_matmul),
	 * with the same meaning as the interpreter's per-element path (each
	 * operand converted to the result type, the products summed).  NULL
	 * means the domain has none, and the interpreter always takes the
	 * per-element path of convert, multiply and add through apply.  A
	 * domain may also decline one call by returning USC_EUNSUPPORTED (an
	 * operand it cannot handle in bulk, say); the interpreter then
	 * discards err and takes the per-element path, which overwrites
	 * every value of c.  Any other failure is the dot's failure.
	 */
	usc_status (*matmul)(void *state, const usc__dom_matmul *m,
			     usc_error *err);

	/*
	 * Optional: the reduction of n values (contiguous, n >= 1) and
	 * init by add, in an order the domain chooses: what a reduce or
	 * reduce-window whose body is one add of its two parameters
	 * computes.  NULL, or USC_EUNSUPPORTED for one call, means the
	 * interpreter combines through the body in its stated order (the
	 * same contract as matmul).  The per-element path of a dot or a
	 * convolution offers each output element's products the same way
	 * (the first as init), with add->instr the dot or convolution, so
	 * that a domain tells an accumulation from a reduction.  The
	 * envelope uses it for a profile that lets reductions (reassociate)
	 * or accumulations (reassociate_dot) reassociate; the tier declines
	 * accumulations.
	 */
	usc_status (*sum)(void *state, const usc__dom_op *add, size_t n,
			  const void *values, const void *init, void *out,
			  usc_error *err);

	/*
	 * Whether sum's declines depend on the values (the tier declines a
	 * reduction that takes a ball): then the interpreter offers every
	 * output element of a reduce to sum, so that an element's value
	 * never depends on its neighbours (nor on how a streamed check cuts
	 * the rows into blocks).  False: a decline depends only on the op,
	 * the types and the profile (the envelope), and holds for the
	 * instruction.
	 */
	bool sum_declines_by_value;

	/*
	 * Optional: whether a one-operand op gives back its operand's value
	 * (a float-to-float convert in a domain that does not quantize), so
	 * that the interpreter may read the operand's values where the op's
	 * are used instead of calling apply.  "The same value": every entry
	 * of the domain treats the two alike (an undecided value may differ
	 * in the fields an undecided value does not use).  NULL: never.
	 */
	bool (*identity)(void *state, const usc__dom_op *op);

	/*
	 * Optional: load for n encodings at once.  enc holds them as a
	 * usc_tensor stores its data (usc_format_of(t)->container_bytes
	 * each, little-endian, usc__dom_get_enc below); out receives n
	 * values, each the one load would give for its encoding.  t is
	 * never a complex type.  NULL: the interpreter calls load per
	 * element.  The interpreter uses it for inputs (whole or a window
	 * at a time); tests/tier/test_tier_array.c holds each domain's
	 * array entries to bit-identity with the per-element ones.
	 */
	usc_status (*load_array)(void *state, usc_dtype t, const void *enc,
				 size_t n, void *out, usc_error *err);

	/*
	 * Optional: to_output for n values at once, without enclosures:
	 * enc receives the n encodings as a usc_tensor stores its data
	 * (usc__dom_put_enc below), each the one to_output would give, and
	 * each within the type's width.  t is never a complex type.  NULL:
	 * the interpreter calls to_output per element.  A failure may leave
	 * any part of enc written.
	 */
	usc_status (*to_output_array)(void *state, usc_dtype t,
				      const void *values, size_t n, void *enc,
				      usc_error *err);
} usc__domain_ops;

/* The width in bits of an element type's encoding (0 for none). */
static inline int usc__dom_width(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f ? f->bits : 0;
}

/* The mask of the low w bits of an encoding. */
static inline uint64_t usc__dom_mask(int w)
{
	return w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
}

/*
 * Encoding i of an array of encodings of c bytes each (the
 * container_bytes of its type, 1 to 8), little-endian as a usc_tensor
 * stores them: for the array entries above.
 */
static inline uint64_t usc__dom_get_enc(const void *enc, size_t c, size_t i)
{
	const unsigned char *p = (const unsigned char *)enc + i * c;
	uint64_t v = 0;

	while (c-- > 0)
		v = (v << 8) | p[c];
	return v;
}

/* Stores encoding i of such an array. */
static inline void usc__dom_put_enc(void *enc, size_t c, size_t i,
				    uint64_t bits)
{
	unsigned char *p = (unsigned char *)enc + i * c;

	for (size_t k = 0; k < c; k++, bits >>= 8)
		p[k] = (unsigned char)bits;
}

/* The reference domain: every op correctly rounded to its declared type. */
extern const usc__domain_ops usc__domain_reference;

/*
 * The failure of an op a domain does not implement, on type t: "DOMAIN:
 * unsupported op NAME on TYPE at LINE:COL (instruction 'I')", without the
 * location when op has no instruction and without "DOMAIN: " when domain
 * is NULL (oracles/domain.c).
 */
usc_status usc__dom_unsupported(const char *domain, const usc__dom_op *op,
				usc_dtype t, usc_error *err);

#endif /* USC_ORACLES_DOMAIN_H */
