/*
 * ulpscope: the HLO front end.
 *
 * XLA's HLO text (what --xla_dump_to writes, and the long form with '%'
 * names and operand shapes) is parsed into a walkable IR: a file holds
 * modules, a module holds computations in source order, a computation holds
 * instructions in source order.  The IR is read-only for its users: every
 * struct below is owned by the usc_hlo_file it came from and lives until
 * usc_hlo_file_destroy.  Pointers between nodes (operands, called
 * computations, parents) are plain pointers into the same file.
 *
 * docs/hlo.md describes the accepted syntax, the error format and what is
 * not supported.
 */
#ifndef ULPSCOPE_HLO_H
#define ULPSCOPE_HLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arity column of USC_HLO_OPCODE_LIST for ops with any operand count. */
#define USC_HLO_VARIADIC (-1)

/*
 * What kind of operation an opcode is; the evaluator and the coverage test
 * group ops by it.  ELEMENTWISE ops map each output element to the operand
 * elements at the same index (their arity tells unary, binary, ternary).
 */
#define USC_HLO_CATEGORY_LIST(X)                                             \
	X(ELEMENTWISE, "elementwise")                                        \
	X(DATA, "data-movement")                                             \
	X(REDUCE, "reduction")                                               \
	X(LINALG, "linear-algebra")                                          \
	X(CONTROL, "control")                                                \
	X(COLLECTIVE, "collective")                                          \
	X(IO, "io")                                                          \
	X(RNG, "random")                                                     \
	X(MISC, "misc")

typedef enum usc_hlo_category {
#define USC__HLO_CAT_ENUM(id, name) USC_HLO_CAT_##id,
	USC_HLO_CATEGORY_LIST(USC__HLO_CAT_ENUM)
#undef USC__HLO_CAT_ENUM
	USC_HLO_CAT_COUNT
} usc_hlo_category;

/*
 * Every opcode of XLA's HLO: X(ID, "spelling", arity, category).  The
 * spellings and arities are those of XLA's xla/hlo/ir/hlo_opcode.h
 * (HLO_OPCODE_LIST); note that XLA spells clz "count-leading-zeros" and the
 * optimization barrier "opt-barrier".
 */
#define USC_HLO_OPCODE_LIST(X)                                                         \
	X(ABS, "abs", 1, ELEMENTWISE)                                                  \
	X(ACOS, "acos", 1, ELEMENTWISE)                                                \
	X(ACOSH, "acosh", 1, ELEMENTWISE)                                              \
	X(ADD, "add", 2, ELEMENTWISE)                                                  \
	X(ADD_DEPENDENCY, "add-dependency", 2, CONTROL)                                \
	X(AFTER_ALL, "after-all", USC_HLO_VARIADIC, CONTROL)                           \
	X(ALL_GATHER, "all-gather", USC_HLO_VARIADIC, COLLECTIVE)                      \
	X(ALL_GATHER_DONE, "all-gather-done", 1, COLLECTIVE)                           \
	X(ALL_GATHER_START, "all-gather-start", USC_HLO_VARIADIC, COLLECTIVE)          \
	X(ALL_REDUCE, "all-reduce", USC_HLO_VARIADIC, COLLECTIVE)                      \
	X(ALL_REDUCE_DONE, "all-reduce-done", 1, COLLECTIVE)                           \
	X(ALL_REDUCE_START, "all-reduce-start", USC_HLO_VARIADIC, COLLECTIVE)          \
	X(ALL_TO_ALL, "all-to-all", USC_HLO_VARIADIC, COLLECTIVE)                      \
	X(AND, "and", 2, ELEMENTWISE)                                                  \
	X(ASIN, "asin", 1, ELEMENTWISE)                                                \
	X(ASINH, "asinh", 1, ELEMENTWISE)                                              \
	X(ASYNC_DONE, "async-done", 1, CONTROL)                                        \
	X(ASYNC_START, "async-start", USC_HLO_VARIADIC, CONTROL)                       \
	X(ASYNC_UPDATE, "async-update", USC_HLO_VARIADIC, CONTROL)                     \
	X(ATAN, "atan", 1, ELEMENTWISE)                                                \
	X(ATAN2, "atan2", 2, ELEMENTWISE)                                              \
	X(ATANH, "atanh", 1, ELEMENTWISE)                                              \
	X(BATCH_NORM_GRAD, "batch-norm-grad", 5, LINALG)                               \
	X(BATCH_NORM_INFERENCE, "batch-norm-inference", 5, LINALG)                     \
	X(BATCH_NORM_TRAINING, "batch-norm-training", 3, LINALG)                       \
	X(BITCAST, "bitcast", 1, DATA)                                                 \
	X(BITCAST_CONVERT, "bitcast-convert", 1, ELEMENTWISE)                          \
	X(BROADCAST, "broadcast", 1, DATA)                                             \
	X(CALL, "call", USC_HLO_VARIADIC, CONTROL)                                     \
	X(CBRT, "cbrt", 1, ELEMENTWISE)                                                \
	X(CEIL, "ceil", 1, ELEMENTWISE)                                                \
	X(CHOLESKY, "cholesky", 1, LINALG)                                             \
	X(CLAMP, "clamp", 3, ELEMENTWISE)                                              \
	X(CLZ, "count-leading-zeros", 1, ELEMENTWISE)                                  \
	X(COLLECTIVE_BROADCAST, "collective-broadcast", USC_HLO_VARIADIC, COLLECTIVE)  \
	X(COLLECTIVE_PERMUTE, "collective-permute", USC_HLO_VARIADIC, COLLECTIVE)      \
	X(COLLECTIVE_PERMUTE_DONE, "collective-permute-done", 1, COLLECTIVE)           \
	X(COLLECTIVE_PERMUTE_START, "collective-permute-start", USC_HLO_VARIADIC,      \
	  COLLECTIVE)                                                                  \
	X(COLLECTIVE_REDUCE, "collective-reduce", USC_HLO_VARIADIC, COLLECTIVE)        \
	X(COMPARE, "compare", 2, ELEMENTWISE)                                          \
	X(COMPLEX, "complex", 2, ELEMENTWISE)                                          \
	X(CONCATENATE, "concatenate", USC_HLO_VARIADIC, DATA)                          \
	X(CONDITIONAL, "conditional", USC_HLO_VARIADIC, CONTROL)                       \
	X(CONSTANT, "constant", 0, DATA)                                               \
	X(CONVERT, "convert", 1, ELEMENTWISE)                                          \
	X(CONVOLUTION, "convolution", USC_HLO_VARIADIC, LINALG)                        \
	X(COPY, "copy", 1, DATA)                                                       \
	X(COPY_DONE, "copy-done", 1, DATA)                                             \
	X(COPY_START, "copy-start", 1, DATA)                                           \
	X(COSINE, "cosine", 1, ELEMENTWISE)                                            \
	X(COSH, "cosh", 1, ELEMENTWISE)                                                \
	X(CUSTOM_CALL, "custom-call", USC_HLO_VARIADIC, MISC)                          \
	X(DIVIDE, "divide", 2, ELEMENTWISE)                                            \
	X(DOMAIN, "domain", 1, MISC)                                                   \
	X(DOT, "dot", 2, LINALG)                                                       \
	X(DYNAMIC_RESHAPE, "dynamic-reshape", USC_HLO_VARIADIC, DATA)                  \
	X(DYNAMIC_SLICE, "dynamic-slice", USC_HLO_VARIADIC, DATA)                      \
	X(DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", USC_HLO_VARIADIC, DATA)        \
	X(ERF, "erf", 1, ELEMENTWISE)                                                  \
	X(EXPONENTIAL, "exponential", 1, ELEMENTWISE)                                  \
	X(EXPONENTIAL_MINUS_ONE, "exponential-minus-one", 1, ELEMENTWISE)              \
	X(FFT, "fft", 1, LINALG)                                                       \
	X(FLOOR, "floor", 1, ELEMENTWISE)                                              \
	X(FUSION, "fusion", USC_HLO_VARIADIC, CONTROL)                                 \
	X(GATHER, "gather", 2, DATA)                                                   \
	X(GET_DIMENSION_SIZE, "get-dimension-size", 1, MISC)                           \
	X(GET_TUPLE_ELEMENT, "get-tuple-element", 1, CONTROL)                          \
	X(IMAG, "imag", 1, ELEMENTWISE)                                                \
	X(INFEED, "infeed", 1, IO)                                                     \
	X(IOTA, "iota", 0, DATA)                                                       \
	X(IS_FINITE, "is-finite", 1, ELEMENTWISE)                                      \
	X(LOG, "log", 1, ELEMENTWISE)                                                  \
	X(LOG_PLUS_ONE, "log-plus-one", 1, ELEMENTWISE)                                \
	X(LOGISTIC, "logistic", 1, ELEMENTWISE)                                        \
	X(MAP, "map", USC_HLO_VARIADIC, ELEMENTWISE)                                   \
	X(MAXIMUM, "maximum", 2, ELEMENTWISE)                                          \
	X(MINIMUM, "minimum", 2, ELEMENTWISE)                                          \
	X(MULHI, "mulhi", 2, ELEMENTWISE)                                              \
	X(MULTIPLY, "multiply", 2, ELEMENTWISE)                                        \
	X(NEGATE, "negate", 1, ELEMENTWISE)                                            \
	X(NOT, "not", 1, ELEMENTWISE)                                                  \
	X(OPTIMIZATION_BARRIER, "opt-barrier", 1, CONTROL)                             \
	X(OR, "or", 2, ELEMENTWISE)                                                    \
	X(OUTFEED, "outfeed", 2, IO)                                                   \
	X(PAD, "pad", 2, DATA)                                                         \
	X(PARAMETER, "parameter", 0, CONTROL)                                          \
	X(PARTITION_ID, "partition-id", 0, COLLECTIVE)                                 \
	X(POPCNT, "popcnt", 1, ELEMENTWISE)                                            \
	X(POWER, "power", 2, ELEMENTWISE)                                              \
	X(RAGGED_ALL_TO_ALL, "ragged-all-to-all", 6, COLLECTIVE)                       \
	X(RAGGED_DOT, "ragged-dot", 3, LINALG)                                         \
	X(REAL, "real", 1, ELEMENTWISE)                                                \
	X(RECV, "recv", 1, IO)                                                         \
	X(RECV_DONE, "recv-done", 1, IO)                                               \
	X(REDUCE, "reduce", USC_HLO_VARIADIC, REDUCE)                                  \
	X(REDUCE_PRECISION, "reduce-precision", 1, ELEMENTWISE)                        \
	X(REDUCE_SCATTER, "reduce-scatter", USC_HLO_VARIADIC, COLLECTIVE)              \
	X(REDUCE_WINDOW, "reduce-window", USC_HLO_VARIADIC, REDUCE)                    \
	X(REMAINDER, "remainder", 2, ELEMENTWISE)                                      \
	X(REPLICA_ID, "replica-id", 0, COLLECTIVE)                                     \
	X(RESHAPE, "reshape", 1, DATA)                                                 \
	X(REVERSE, "reverse", 1, DATA)                                                 \
	X(RNG, "rng", USC_HLO_VARIADIC, RNG)                                           \
	X(RNG_BIT_GENERATOR, "rng-bit-generator", 1, RNG)                              \
	X(RNG_GET_AND_UPDATE_STATE, "rng-get-and-update-state", 0, RNG)                \
	X(ROUND_NEAREST_AFZ, "round-nearest-afz", 1, ELEMENTWISE)                      \
	X(ROUND_NEAREST_EVEN, "round-nearest-even", 1, ELEMENTWISE)                    \
	X(RSQRT, "rsqrt", 1, ELEMENTWISE)                                              \
	X(SCALED_DOT, "scaled-dot", 4, LINALG)                                         \
	X(SCAN, "scan", USC_HLO_VARIADIC, REDUCE)                                      \
	X(SCATTER, "scatter", USC_HLO_VARIADIC, DATA)                                  \
	X(SELECT, "select", 3, ELEMENTWISE)                                            \
	X(SELECT_AND_SCATTER, "select-and-scatter", 3, DATA)                           \
	X(SEND, "send", 2, IO)                                                         \
	X(SEND_DONE, "send-done", 1, IO)                                               \
	X(SET_DIMENSION_SIZE, "set-dimension-size", 2, MISC)                           \
	X(SHIFT_LEFT, "shift-left", 2, ELEMENTWISE)                                    \
	X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", 2, ELEMENTWISE)            \
	X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", 2, ELEMENTWISE)                  \
	X(SHUFFLE, "shuffle", 1, DATA)                                                 \
	X(SIGN, "sign", 1, ELEMENTWISE)                                                \
	X(SINE, "sine", 1, ELEMENTWISE)                                                \
	X(SINH, "sinh", 1, ELEMENTWISE)                                                \
	X(SLICE, "slice", 1, DATA)                                                     \
	X(SORT, "sort", USC_HLO_VARIADIC, DATA)                                        \
	X(SQRT, "sqrt", 1, ELEMENTWISE)                                                \
	X(STOCHASTIC_CONVERT, "stochastic-convert", 2, ELEMENTWISE)                    \
	X(SUBTRACT, "subtract", 2, ELEMENTWISE)                                        \
	X(TAN, "tan", 1, ELEMENTWISE)                                                  \
	X(TANH, "tanh", 1, ELEMENTWISE)                                                \
	X(TOPK, "topk", 1, DATA)                                                       \
	X(TRANSPOSE, "transpose", 1, DATA)                                             \
	X(TRIANGULAR_SOLVE, "triangular-solve", 2, LINALG)                             \
	X(TUPLE, "tuple", USC_HLO_VARIADIC, CONTROL)                                   \
	X(WHILE, "while", 1, CONTROL)                                                  \
	X(XOR, "xor", 2, ELEMENTWISE)

typedef enum usc_hlo_opcode {
	USC_HLO_OP_INVALID = 0,
#define USC__HLO_OP_ENUM(id, spelling, arity, cat) USC_HLO_OP_##id,
	USC_HLO_OPCODE_LIST(USC__HLO_OP_ENUM)
#undef USC__HLO_OP_ENUM
	USC_HLO_OP_COUNT
} usc_hlo_opcode;

/* The HLO spelling of an opcode ("add"); "invalid" for anything else. */
const char *usc_hlo_opcode_name(usc_hlo_opcode op);
/* The arity column: an operand count or USC_HLO_VARIADIC. */
int usc_hlo_opcode_arity(usc_hlo_opcode op);
usc_hlo_category usc_hlo_opcode_category(usc_hlo_opcode op);
/* The spelling of a category ("elementwise"). */
const char *usc_hlo_category_name(usc_hlo_category cat);
/* Looks a spelling up; USC_ENOTFOUND when it names no opcode. */
usc_status usc_hlo_opcode_from_name(const char *name, size_t len,
				    usc_hlo_opcode *out);

/* A position in the source text: 1-based line and column (in bytes). */
typedef struct usc_hlo_loc {
	uint32_t line;
	uint32_t column;
} usc_hlo_loc;

/* ---------------------------------------------------------------- shapes */

typedef enum usc_hlo_shape_kind {
	USC_HLO_SHAPE_ARRAY,
	USC_HLO_SHAPE_TUPLE,
	USC_HLO_SHAPE_TOKEN
} usc_hlo_shape_kind;

/* How a dimension's size is given. */
typedef enum usc_hlo_dim_kind {
	USC_HLO_DIM_STATIC,  /* 8 */
	USC_HLO_DIM_BOUNDED, /* <=8: dynamic, at most 8 */
	USC_HLO_DIM_UNBOUNDED /* ?: dynamic, no bound (dims[i] is -1) */
} usc_hlo_dim_kind;

typedef struct usc_hlo_shape usc_hlo_shape;
struct usc_hlo_shape {
	usc_hlo_shape_kind kind;
	/* ARRAY: the element type.  TOKEN: USC_TOKEN.  TUPLE: invalid. */
	usc_dtype dtype;
	size_t rank;
	int64_t *dims;          /* rank sizes (the bound of a <=N dim) */
	uint8_t *dim_kinds;     /* rank usc_hlo_dim_kind values */
	/*
	 * The layout as written between the braces, e.g. "1,0:T(8,128)S(1)";
	 * "" for "{}", NULL when the shape has no layout.
	 */
	const char *layout;
	size_t tuple_count;     /* TUPLE: the elements */
	usc_hlo_shape *tuple;
};

/* Number of elements of an array shape (1 for rank 0); 0 for others. */
int64_t usc_hlo_shape_elements(const usc_hlo_shape *s);
bool usc_hlo_shape_equal(const usc_hlo_shape *a, const usc_hlo_shape *b);

/* -------------------------------------------------------------- literals */

typedef enum usc_hlo_literal_kind {
	USC_HLO_LITERAL_ARRAY,  /* scalars are arrays of rank 0 */
	USC_HLO_LITERAL_TUPLE,
	USC_HLO_LITERAL_ELIDED  /* written "{...}": the values are unknown */
} usc_hlo_literal_kind;

/*
 * One element of a constant.  text is the literal as written ("0.1001",
 * "-inf", "nan(0x7f)", "true", "42"); value is its nearest double (pred:
 * 0 or 1), which is exact for every integer up to 2^53 and for every
 * value of a format narrower than f64.  Complex elements "(re, im)" keep
 * the real part in text/value and the imaginary part in imag_text/imag.
 * Decoding text into a format's bits is usc_encode_str's job.
 */
typedef struct usc_hlo_scalar {
	const char *text;
	const char *imag_text; /* NULL unless complex */
	double value;
	double imag;
} usc_hlo_scalar;

typedef struct usc_hlo_literal usc_hlo_literal;
struct usc_hlo_literal {
	usc_hlo_literal_kind kind;
	/* ARRAY: the elements in row-major order of the shape's dims. */
	size_t count;
	usc_hlo_scalar *elems;
	size_t tuple_count; /* TUPLE: the elements */
	usc_hlo_literal *tuple;
};

/* ------------------------------------------------------------ attributes */

typedef enum usc_hlo_attr_kind {
	USC_HLO_ATTR_RAW,          /* text: the value exactly as written */
	USC_HLO_ATTR_INT,          /* i */
	USC_HLO_ATTR_BOOL,         /* b */
	USC_HLO_ATTR_STRING,       /* text: a quoted string, unescaped */
	USC_HLO_ATTR_IDENT,        /* text: a bare word (LT, kLoop, ...) */
	USC_HLO_ATTR_INTS,         /* count, ints: {1,2,3} */
	USC_HLO_ATTR_NAMES,        /* count, names: {%a, %b} or {high,default} */
	USC_HLO_ATTR_COMPUTATIONS, /* count, comps (and names): one or {..} */
	USC_HLO_ATTR_SLICE,        /* count, slice: {[0:4:1], [1:3]} */
	USC_HLO_ATTR_PADDING,      /* count, pad: 1_1x0_0_1 */
	USC_HLO_ATTR_WINDOW,       /* count, window: {size=3x3 stride=...} */
	USC_HLO_ATTR_DIM_LABELS,   /* text and labels: b01f_01io->b01f */
	USC_HLO_ATTR_METADATA      /* metadata */
} usc_hlo_attr_kind;

typedef struct usc_hlo_slice_dim {
	int64_t start, limit, stride; /* stride is 1 when not written */
	bool has_stride;
} usc_hlo_slice_dim;

typedef struct usc_hlo_pad_dim {
	int64_t lo, hi, interior; /* interior is 0 when not written */
	bool has_interior;
} usc_hlo_pad_dim;

/* One dimension of a window; fields not written take XLA's defaults. */
typedef struct usc_hlo_window_dim {
	int64_t size;
	int64_t stride;      /* 1 */
	int64_t pad_lo;      /* 0 */
	int64_t pad_hi;      /* 0 */
	int64_t lhs_dilate;  /* 1 */
	int64_t rhs_dilate;  /* 1 */
	bool rhs_reversal;   /* false */
} usc_hlo_window_dim;

/* Which window fields were written, to print them back as they came. */
enum {
	USC_HLO_WINDOW_HAS_SIZE = 1,
	USC_HLO_WINDOW_HAS_STRIDE = 2,
	USC_HLO_WINDOW_HAS_PAD = 4,
	USC_HLO_WINDOW_HAS_LHS_DILATE = 8,
	USC_HLO_WINDOW_HAS_RHS_DILATE = 16,
	USC_HLO_WINDOW_HAS_RHS_REVERSAL = 32
};

/*
 * Convolution dimension numbers, "b01f_01io->b01f": for each of input,
 * kernel and output, which dimension plays which role.  Spatial dims are
 * listed in the order of their digits (0, 1, ...).
 */
typedef struct usc_hlo_dim_labels {
	size_t spatial_count;
	int64_t input_batch, input_feature;
	int64_t kernel_input_feature, kernel_output_feature;
	int64_t output_batch, output_feature;
	int64_t *input_spatial;  /* spatial_count each */
	int64_t *kernel_spatial;
	int64_t *output_spatial;
} usc_hlo_dim_labels;

/* One metadata field other than the four named ones, kept as written. */
typedef struct usc_hlo_metadata_field {
	const char *key;
	const char *value; /* raw text: "quoted" strings keep their quotes */
} usc_hlo_metadata_field;

typedef struct usc_hlo_metadata {
	const char *op_type;     /* unescaped; NULL when absent */
	const char *op_name;
	const char *source_file;
	int64_t source_line;     /* -1 when absent */
	size_t other_count;
	usc_hlo_metadata_field *others;
} usc_hlo_metadata;

typedef struct usc_hlo_computation usc_hlo_computation;
typedef struct usc_hlo_instr usc_hlo_instr;
typedef struct usc_hlo_module usc_hlo_module;
typedef struct usc_hlo_file usc_hlo_file;

typedef struct usc_hlo_attr {
	const char *name;
	usc_hlo_attr_kind kind;
	usc_hlo_loc loc;           /* of the name */
	int64_t i;                 /* INT */
	bool b;                    /* BOOL */
	const char *text;          /* RAW, STRING, IDENT, DIM_LABELS */
	size_t count;              /* elements of the list kinds below */
	uint32_t window_fields;    /* WINDOW: USC_HLO_WINDOW_HAS_* bits */
	int64_t *ints;             /* INTS */
	const char **names;        /* NAMES, COMPUTATIONS */
	usc_hlo_computation **comps; /* COMPUTATIONS, resolved */
	usc_hlo_slice_dim *slice;  /* SLICE */
	usc_hlo_pad_dim *pad;      /* PADDING */
	usc_hlo_window_dim *window; /* WINDOW */
	usc_hlo_dim_labels *labels; /* DIM_LABELS */
	usc_hlo_metadata *metadata; /* METADATA */
} usc_hlo_attr;

/* ------------------------------------------------------------------ IR */

struct usc_hlo_instr {
	const char *name;            /* without '%' */
	usc_hlo_opcode opcode;
	usc_hlo_shape shape;
	size_t operand_count;
	usc_hlo_instr **operands;    /* instructions of the same computation */
	/* Every computation named by an attribute, in attribute order. */
	size_t called_count;
	usc_hlo_computation **called;
	size_t attr_count;           /* in source order, metadata included */
	usc_hlo_attr *attrs;
	const usc_hlo_metadata *metadata; /* NULL when absent */
	usc_hlo_literal *literal;    /* constant: the value; else NULL */
	int64_t parameter_number;    /* parameter: N of parameter(N); else -1 */
	bool is_root;
	size_t index;                /* position in parent->instrs */
	usc_hlo_computation *parent;
	usc_hlo_loc loc;             /* of the name */
};

/* A parameter of a computation's written signature. */
typedef struct usc_hlo_param {
	const char *name;
	usc_hlo_shape shape;
} usc_hlo_param;

struct usc_hlo_computation {
	const char *name;            /* without '%' */
	bool is_entry;
	bool explicit_entry;         /* the source said ENTRY */
	bool explicit_root;          /* the source said ROOT */
	size_t instr_count;
	usc_hlo_instr **instrs;      /* in source order */
	usc_hlo_instr *root;
	/* The signature "(p: f32[]) -> f32[]" when the source wrote one. */
	bool has_signature;
	size_t param_count;
	usc_hlo_param *params;
	usc_hlo_shape result;
	size_t index;                /* position in parent->computations */
	usc_hlo_module *parent;
	usc_hlo_loc loc;
};

/*
 * One of the tables newer XLA dumps write after the module header
 * (FileNames, FunctionNames, FileLocations, StackFrames): numbered entries
 * whose values are kept as written ("a.py" with its quotes, or {...}).
 * Metadata's stack_frame_id refers into StackFrames.
 */
typedef struct usc_hlo_table_entry {
	int64_t id;
	const char *value;
} usc_hlo_table_entry;

typedef struct usc_hlo_table {
	const char *name;
	size_t count;
	usc_hlo_table_entry *entries;
} usc_hlo_table;

struct usc_hlo_module {
	const char *name;            /* NULL for a file without HloModule */
	bool has_header;
	size_t attr_count;           /* header attributes, in source order */
	usc_hlo_attr *attrs;
	size_t computation_count;
	usc_hlo_computation **computations; /* in source order */
	usc_hlo_computation *entry;
	size_t index;                /* position in the file */
	usc_hlo_loc loc;
	size_t table_count;          /* stack-frame tables, in source order */
	usc_hlo_table *tables;
};

/* ------------------------------------------------------------- parsing */

/*
 * Parses HLO text.  A file may hold several modules (each starting with
 * "HloModule" or after a "// -----" line), or computations with no module
 * header at all (one module whose entry is the computation marked ENTRY,
 * else the last one).  filename is used in error messages only ("<input>"
 * when NULL).  A syntax error fails with USC_EPARSE and a message
 *   FILE:LINE:COLUMN: error: expected X, found Y
 *   <the source line>
 *   <spaces>^
 * in err.  The text need not be NUL-terminated.
 */
usc_status usc_hlo_parse(const char *text, size_t len, const char *filename,
			 usc_hlo_file **out, usc_error *err);
/*
 * Reads and parses a file; I/O errors (USC_EIO) name the file.  A regular
 * file only, of at most the limit's max_file_bytes (USC_ERANGE;
 * include/ulpscope/limits.h); path "-" reads standard input to its end,
 * under the same limit.
 */
usc_status usc_hlo_parse_file(const char *path, usc_hlo_file **out,
			      usc_error *err);
void usc_hlo_file_destroy(usc_hlo_file *f);

size_t usc_hlo_file_module_count(const usc_hlo_file *f);
usc_hlo_module *usc_hlo_file_module(const usc_hlo_file *f, size_t i);

/* Lookups by name (without '%'); NULL when absent. */
usc_hlo_computation *usc_hlo_module_computation(const usc_hlo_module *m,
						const char *name);
usc_hlo_instr *usc_hlo_computation_instr(const usc_hlo_computation *c,
					 const char *name);
/* The first attribute of that name, or NULL. */
const usc_hlo_attr *usc_hlo_instr_attr(const usc_hlo_instr *in,
				       const char *name);

/* ------------------------------------------------------------ printing */

typedef enum usc_hlo_print_form {
	/* "%add = f32[8]{0} add(f32[8]{0} %a, f32[8]{0} %b)", signatures. */
	USC_HLO_PRINT_LONG,
	/* "add = f32[8]{0} add(a, b)": the --xla_dump_to form. */
	USC_HLO_PRINT_SHORT
} usc_hlo_print_form;

typedef struct usc_hlo_print_options {
	usc_hlo_print_form form;
	bool print_metadata; /* true: metadata={...} is printed */
} usc_hlo_print_options;

/* Long form with metadata. */
usc_hlo_print_options usc_hlo_print_options_default(void);

/*
 * Prints a module (or a whole file; modules are separated by "// -----"
 * lines) as HLO text into a buffer allocated with the library's allocator;
 * the caller frees it with usc_hlo_text_free.  *len_out (optional) receives
 * the length without the terminating NUL.
 */
usc_status usc_hlo_module_print(const usc_hlo_module *m,
				const usc_hlo_print_options *opts,
				char **text_out, size_t *len_out,
				usc_error *err);
usc_status usc_hlo_file_print(const usc_hlo_file *f,
			      const usc_hlo_print_options *opts,
			      char **text_out, size_t *len_out,
			      usc_error *err);
void usc_hlo_text_free(char *text);
/* Prints one shape ("(f32[2]{0}, s32[])"); free with usc_hlo_text_free. */
usc_status usc_hlo_shape_print(const usc_hlo_shape *s, char **text_out,
			       usc_error *err);

/* ----------------------------------------------------- source locations */

/*
 * The Python source an instruction came from: its metadata's source_file
 * and source_line, or in newer dumps its stack_frame_id resolved through
 * the module's StackFrames, FileLocations and FileNames tables.  *file
 * points into the IR (not NUL-terminated at *file_len: FileNames values
 * lose their quotes); *line is -1 when unknown.  false when the
 * instruction has no location.
 */
bool usc_hlo_instr_source(const usc_hlo_module *m, const usc_hlo_instr *in,
			  const char **file, size_t *file_len, int64_t *line);

/* ----------------------------------------------------------- comparison */

/*
 * Structural equality: names, opcodes, shapes, operands (by position),
 * called computations (by position), attributes (typed values), literals
 * (as written), roots and entries.  Source locations and written
 * signatures are not compared.  When they differ and diff is non-NULL, a
 * one-line description of the first difference is written into it.
 */
bool usc_hlo_module_equal(const usc_hlo_module *a, const usc_hlo_module *b,
			  char *diff, size_t diff_size);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_HLO_H */
