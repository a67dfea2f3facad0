/*
 * Internals of the evaluator, shared by the files of src/eval/.
 *
 * A value of an instruction is a list of leaf buffers (one for an array,
 * the flattened leaves for a tuple).  A buffer holds count domain values
 * in row-major order of its shape; buffers are immutable once filled and
 * reference counted, so tuple, get-tuple-element, parameter, reshape and
 * copy share them instead of copying.
 *
 * Every op is evaluated by a function over a range [begin, end) of flat
 * output indices, so that a loop computation can be evaluated tile by
 * tile (stream.c); other computations pass the whole range.
 */
#ifndef USC_EVAL_INTERNAL_H
#define USC_EVAL_INTERNAL_H

#include "internal.h"

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"

#include "../../oracles/domain.h"

typedef struct usc__ebuf {
	int refs;
	usc_dtype dtype;
	size_t count; /* elements of the value (the shape's element count) */
	/*
	 * The elements held: [base, base + len).  A whole buffer holds all
	 * (base 0, len count); a tile buffer of a streamed computation holds
	 * one window at a time (see stream.c).
	 */
	size_t base, len;
	void *values; /* len * value_size bytes, domain-initialized */
	/*
	 * Non-NULL: a view, whose values are owner's (held by one reference)
	 * read as another element type: an op the domain calls an identity
	 * (a float-to-float convert in the tier).  Nothing writes a
	 * buffer's values once its instruction is evaluated.
	 */
	struct usc__ebuf *owner;
	/*
	 * The evaluator whose count of large arrays holds values (buffers.c,
	 * "spares"), and the array's size in bytes there (a spare taken may
	 * be larger than len values); NULL and 0 when none counts it.
	 */
	const struct usc_eval *acct;
	size_t cap;
} usc__ebuf;

typedef struct usc__evalue {
	size_t n;
	usc__ebuf **leaves;
} usc__evalue;

typedef struct usc__sfn usc__sfn;

/* A compiled scalar computation (reduce, map and scatter bodies). */
struct usc__sfn {
	const usc_hlo_computation *comp;
	size_t nparams;
	size_t nslots;
	unsigned char *slots;   /* nslots values */
	size_t nsteps;
	struct usc__sfn_step *steps;
	size_t nresults;
	size_t *results;        /* slot of each root leaf */
	size_t *param_slot;     /* slot of each parameter */
	usc__sfn *next;         /* the evaluator's cache list */
};

struct usc_eval {
	const usc__domain_ops *dom;
	void *dstate;
	usc_eval_options opts;
	const usc_hlo_computation *comp;
	size_t nparams;
	const usc_hlo_instr **params;    /* by parameter number */
	const usc_tensor **bound;
	size_t noutputs;
	usc_tensor **outputs;
	usc__sfn *sfns;
	/* The domain values of the last run's outputs (see eval_values.h). */
	usc__evalue kept;
	/* What the last run computed (usc__eval_last_run). */
	uint64_t last_elements, last_tiles;
	/*
	 * Bisection (usc__eval_keep): the instructions whose values a run
	 * keeps, and what the last run kept of each (n 0: not evaluated).
	 */
	size_t nkeep;
	const usc_hlo_instr **keep;
	usc__evalue *keep_vals;
	/* Control flow: the reference's trace (control.h); NULL: none. */
	struct usc__ctl *ctl;
	/* Its cone (cone.h): recording the base or serving from it. */
	struct usc__cone_map *cone;
	/*
	 * Large value arrays of released buffers, kept for the next buffer
	 * of about their size (buffers.c, "spares"); freed by destroy.
	 */
	struct usc__spare {
		void *p;
		size_t bytes;
	} spare[8];
	size_t nspare;
	size_t spare_bytes; /* their sizes' sum */
	size_t live_bytes;  /* the same kind of arrays held by buffers */
	size_t peak_bytes;  /* the most live_bytes has been */
};

#define USC__VAL(ev, buf, i)                                                 \
	((void *)((unsigned char *)(buf)->values +                           \
		  ((size_t)(i) - (buf)->base) * (ev)->dom->value_size))

/*
 * The cone's hooks (cone.c): a computation of an evaluator with a cone is
 * evaluated there (walk.c asks); usc__eval_instr is the one op it evaluates.
 */
usc_status usc__cone_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const struct usc__evalue *args, size_t nargs,
				 struct usc__evalue *result, usc_error *err);
void usc__cone_detach(usc_eval *ev);

/* Buffers. */
usc_status usc__ebuf_new(usc_eval *ev, usc_dtype t, size_t count,
			 usc__ebuf **out, usc_error *err);
/* A buffer of count elements that holds a window of len of them. */
usc_status usc__ebuf_new_window(usc_eval *ev, usc_dtype t, size_t count,
				size_t len, usc__ebuf **out, usc_error *err);
void usc__ebuf_release(usc_eval *ev, usc__ebuf *b);
void usc__copy_values(usc_eval *ev, void *dst, const void *src, size_t n);

/*
 * A buffer whose every value the caller writes before anything reads one
 * (an input's load, a dot's result): left unset for a domain of plain
 * bytes, zeroed and initialized for any other.
 */
usc_status usc__ebuf_new_unset(usc_eval *ev, usc_dtype t, size_t count,
			       usc__ebuf **out, usc_error *err);
/* Frees the spare value arrays that released buffers left (buffers.c). */
void usc__ebuf_spares_free(usc_eval *ev);

/* Values: n leaves allocated, released, or shared (references taken). */
usc_status usc__evalue_alloc(usc__evalue *v, size_t n, usc_error *err);
void usc__evalue_clear(usc_eval *ev, usc__evalue *v);
usc_status usc__evalue_share(usc__evalue *res, usc__ebuf *const *leaves,
			     size_t n, usc_error *err);

/* The number of array leaves of a shape (a tuple's, depth-first). */
size_t usc__shape_leaves(const usc_hlo_shape *s);

/*
 * Whether elements [lo, hi) of tensor t go through the domain's array
 * entries (domain.h), and the encodings of t from element lo on.
 */
bool usc__array_path(bool entry, const usc_tensor *t, size_t lo, size_t hi);
const void *usc__enc_at(const usc_tensor *t, size_t lo);
void *usc__enc_at_mut(usc_tensor *t, size_t lo);

/* Messages that name an instruction: "... at L:C (instruction 'x')". */
usc_status usc__eval_fail(usc_error *err, usc_status code,
			  const usc_hlo_instr *in, const char *fmt, ...)
	USC__PRINTF(4, 5);

/* Index helpers (row-major). */
bool usc__next_index(int64_t *idx, const int64_t *dims, size_t rank);
void usc__unravel(size_t flat, const int64_t *dims, size_t rank,
		  int64_t *idx);
size_t usc__ravel(const int64_t *idx, const int64_t *dims, size_t rank);

/*
 * How deep fusions, calls and the other ops that evaluate a computation
 * as a whole may nest (the entry is level 0): evaluation, like the walks
 * of check, bisect and explain that follow it into called computations,
 * takes a stack frame or a few per level, so the level is bounded here,
 * when an evaluator is created, with an error naming the instruction.
 */
#define USC__EVAL_NESTING_MAX 64

/* A topological order of c's instruction indices (operands first). */
usc_status usc__topo_order(const usc_hlo_computation *c, size_t *order,
			 usc_error *err);

/*
 * The walk (walk.c): evaluates computation c on args into result, one
 * instruction (its operands' values in ops) into res, and the values
 * bisection keeps.
 */
usc_status usc__eval_computation(usc_eval *ev, const usc_hlo_computation *c,
				 const usc__evalue *args, size_t nargs,
				 usc__evalue *result, usc_error *err);
usc_status usc__eval_instr(usc_eval *ev, const usc_hlo_instr *in,
			   const usc__evalue *ops, const usc__evalue *args,
			   size_t nargs, usc__evalue *res, usc_error *err);
void usc__eval_keep_clear(usc_eval *ev);

/*
 * What a walk does with an instruction: nothing (dead, or not needed),
 * take its value from elsewhere, or evaluate it.
 */
enum { USC__WALK_SKIP = 0, USC__WALK_TAKE, USC__WALK_EVAL };

/*
 * How a walk that reuses values (the cone's, cone.c) departs from the
 * plain one; ctx is passed back to each.
 *   - plan fills todo (one entry per instruction, all SKIP on entry),
 *     given the topological order and, in uses, each instruction's users;
 *     it leaves in uses only the users it marks EVAL, since only they
 *     read their operands' values.
 *   - take puts into *into the value of an instruction marked TAKE that
 *     an evaluated user or the root needs.
 *   - evaluated is told each value evaluated.
 * Without hooks every instruction with a user is evaluated, and so are
 * the root and those bisection keeps (whose values then are kept).
 */
typedef struct usc__walk_hooks {
	usc_status (*plan)(void *ctx, const usc_hlo_computation *c,
			   const size_t *order, size_t *uses,
			   unsigned char *todo, usc_error *err);
	usc_status (*take)(void *ctx, const usc_hlo_instr *in,
			   usc__evalue *into, usc_error *err);
	usc_status (*evaluated)(void *ctx, usc_eval *ev,
				const usc_hlo_instr *in, const usc__evalue *v,
				usc_error *err);
	void *ctx;
} usc__walk_hooks;

/*
 * Evaluates c on args into result in topological order, freeing each
 * value after its last user; hooks may be NULL (the plain walk).
 */
usc_status usc__eval_walk(usc_eval *ev, const usc_hlo_computation *c,
			  const usc__evalue *args, size_t nargs,
			  const usc__walk_hooks *hooks, usc__evalue *result,
			  usc_error *err);

struct usc__eval_stream; /* eval_values.h */

/*
 * Streaming (stream.c): whether c can be evaluated tile by tile, c so
 * evaluated inside a whole evaluation, and the loop computation a run can
 * stream from the bound tensors to the output (*loop NULL: none; *pmap
 * maps its parameters to the entry's) and that run.
 */
bool usc__eval_streamable(const usc_hlo_computation *c, size_t tile);
usc_status usc__eval_stream_nested(usc_eval *ev, const usc_hlo_computation *c,
				   const usc__evalue *args, size_t nargs,
				   size_t tile, usc__evalue *result,
				   usc_error *err);
usc_status usc__eval_top_loop(const usc_eval *ev, size_t tile,
			      const usc_hlo_computation **loop, size_t **pmap,
			      size_t *npmap, usc_error *err);
usc_status usc__eval_run_streamed(usc_eval *ev,
				  const usc_hlo_computation *loop,
				  const size_t *pmap, size_t npmap,
				  size_t tile, const struct usc__eval_stream *s,
				  usc_error *err);

/* The outputs of the last run, destroyed (eval.c). */
void usc__eval_free_outputs(usc_eval *ev);

/*
 * The check when an evaluator is created (support.c): every instruction
 * of c and of what it calls, depth levels below the entry.
 */
usc_status usc__eval_check_computation(usc_eval *ev,
				       const usc_hlo_computation *c,
				       int depth, usc_error *err);

/* Attributes. */
const usc_hlo_attr *usc__attr_ints(const usc_hlo_instr *in, const char *name);
bool usc__attr_int(const usc_hlo_instr *in, const char *name, int64_t *out);
/* Whether the ints attribute a (NULL: none) lists d; how many it lists. */
bool usc__attr_has(const usc_hlo_attr *a, int64_t d);
size_t usc__attr_count(const usc_hlo_attr *a);

/* Scalar computations. */
usc_status usc__sfn_get(usc_eval *ev, const usc_hlo_computation *c,
			usc__sfn **out, usc_error *err);
/* results[k] receives a copy of root leaf k; args are nparams values. */
usc_status usc__sfn_call(usc_eval *ev, usc__sfn *fn, const void *const *args,
			 void *const *results, usc_error *err);
void usc__sfn_free_all(usc_eval *ev);

/* Op families: each fills out (already allocated) from the operands. */
usc_status usc__eval_data(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__ebuf *out,
			  size_t begin, size_t end, usc_error *err);
usc_status usc__eval_reduce(usc_eval *ev, const usc_hlo_instr *in,
			    const usc__evalue *ops, usc__ebuf **outs,
			    size_t begin, size_t end, usc_error *err);
usc_status usc__eval_reduce_window(usc_eval *ev, const usc_hlo_instr *in,
				   const usc__evalue *ops, usc__ebuf **outs,
				   size_t begin, size_t end, usc_error *err);
usc_status usc__eval_dot(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__ebuf *out,
			 size_t begin, size_t end, usc_error *err);
usc_status usc__eval_conv(usc_eval *ev, const usc_hlo_instr *in,
			  const usc__evalue *ops, usc__ebuf *out,
			  size_t begin, size_t end, usc_error *err);
usc_status usc__eval_gather(usc_eval *ev, const usc_hlo_instr *in,
			    const usc__evalue *ops, usc__ebuf *out,
			    size_t begin, size_t end, usc_error *err);
usc_status usc__eval_scatter(usc_eval *ev, const usc_hlo_instr *in,
			     const usc__evalue *ops, usc__ebuf **outs,
			     usc_error *err);
usc_status usc__eval_map(usc_eval *ev, const usc_hlo_instr *in,
			 const usc__evalue *ops, usc__ebuf *out,
			 size_t begin, size_t end, usc_error *err);

/*
 * Index maps, shared with the analysis (src/analyze/explain.c follows one
 * element back through them), so that one place knows HLO's semantics.
 *
 * read gives element flat of operand k of the instruction as an integer
 * index (the start indices of dynamic-slice, dynamic-update-slice and
 * gather); the evaluator reads its operands' domain values
 * (usc__read_operand_index with a usc__operand_reader).
 */
typedef usc_status (*usc__index_read_fn)(void *ctx, size_t k, size_t flat,
					 int64_t *v, usc_error *err);

typedef struct usc__operand_reader {
	usc_eval *ev;
	const usc__evalue *ops;
} usc__operand_reader;

usc_status usc__read_operand_index(void *ctx, size_t k, size_t flat,
				   int64_t *v, usc_error *err);

/*
 * The data-movement ops of data.c (broadcast, transpose, slice,
 * dynamic-slice, dynamic-update-slice, concatenate, pad, reverse,
 * bitcast): the operand *src and its flat element *flat that output
 * element o (flat, row-major) copies; a padding position of pad is its
 * operand 1 at 0.  Start indices are clamped as the evaluator clamps
 * them; the same checks and errors as usc__eval_data.
 */
usc_status usc__data_index(const usc_hlo_instr *in, usc__index_read_fn read,
			   void *ctx, size_t o, size_t *src, size_t *flat,
			   usc_error *err);

/*
 * gather (reduce.c): the flat element of operand 0 that output element i
 * reads, its start clamped as XLA clamps it; read gives the indices
 * (operand 1).
 */
typedef struct usc__gather_map {
	const usc_hlo_instr *in;
	const usc_hlo_attr *offd, *coll, *sim, *ss;
	int64_t ivd;
	int64_t odim_of_off[USC_TENSOR_MAX_RANK];
} usc__gather_map;

usc_status usc__gather_map_init(const usc_hlo_instr *in, usc__gather_map *g,
				usc_error *err);
usc_status usc__gather_map_at(const usc__gather_map *g, size_t i,
			      usc__index_read_fn read, void *ctx,
			      size_t *flat, usc_error *err);

/*
 * reduce (reduce.c): the m flat elements of each input that output
 * element i combines, in the order of the sequential sum (row-major over
 * the reduced dimensions).
 */
typedef struct usc__reduce_map {
	const usc_hlo_shape *s; /* the inputs' shape */
	size_t nk, nr, m;
	int64_t kd[USC_TENSOR_MAX_RANK], rd[USC_TENSOR_MAX_RANK];
	int64_t kdims[USC_TENSOR_MAX_RANK], rdims[USC_TENSOR_MAX_RANK];
	size_t kstride[USC_TENSOR_MAX_RANK], rstride[USC_TENSOR_MAX_RANK];
} usc__reduce_map;

usc_status usc__reduce_map_init(const usc_hlo_instr *in, usc__reduce_map *r,
				usc_error *err);
void usc__reduce_map_at(const usc__reduce_map *r, size_t i, size_t *flats);

/*
 * reduce-window (reduce.c): the flat elements of each input in output
 * element i's window (at most m), in the order of the sequential sum;
 * window positions on padding or between dilated elements are left out.
 * Returns how many.
 */
typedef struct usc__window_map {
	const usc_hlo_shape *s, *os; /* an input's and the output's shape */
	const usc_hlo_attr *w;
	size_t rank, m;
	int64_t wdims[USC_TENSOR_MAX_RANK];
	/*
	 * plain: no padding, no lhs dilation, every window inside the input,
	 * so that position (o, w) is at flat sum_k (o_k ostep_k + w_k
	 * wstep_k), with no test.
	 */
	bool plain;
	size_t ostep[USC_TENSOR_MAX_RANK], wstep[USC_TENSOR_MAX_RANK];
} usc__window_map;

usc_status usc__window_map_init(const usc_hlo_instr *in, usc__window_map *w,
				usc_error *err);
size_t usc__window_map_at(const usc__window_map *w, size_t i, size_t *flats);

/*
 * dot (reduce.c): the m products of output element i, in the order of
 * the sequential sum (row-major over the contracting dimensions): term j
 * multiplies lhs element lflats[j] by rhs element rflats[j].
 */
typedef struct usc__dot_map {
	const usc_hlo_shape *ls, *rs, *os;
	const usc_hlo_attr *lb, *rb, *lc, *rc;
	size_t nb, nc, nlf, nrf, m;
	int64_t lfree[USC_TENSOR_MAX_RANK], rfree[USC_TENSOR_MAX_RANK];
	int64_t cdims[USC_TENSOR_MAX_RANK];
} usc__dot_map;

usc_status usc__dot_map_init(const usc_hlo_instr *in, usc__dot_map *d,
			     usc_error *err);
void usc__dot_map_terms(const usc__dot_map *d, size_t i, size_t *lflats,
			size_t *rflats);

/*
 * Elementwise ops and value makers (elementwise.c), over the output
 * range [begin, end) where they take one.
 */
usc_status usc__eval_elementwise(usc_eval *ev, const usc_hlo_instr *in,
				 const usc__evalue *ops, usc__ebuf *out,
				 size_t begin, size_t end, usc_error *err);
usc_status usc__eval_bitcast_convert(usc_eval *ev, const usc_hlo_instr *in,
				     const usc__evalue *ops, usc__ebuf *out,
				     usc_error *err);
usc_status usc__eval_constant(usc_eval *ev, const usc_hlo_instr *in,
			      usc__ebuf *out, usc_error *err);
usc_status usc__eval_iota(usc_eval *ev, const usc_hlo_instr *in,
			  usc__ebuf *out, size_t begin, size_t end,
			  usc_error *err);

/* The elementwise op of an instruction, decoded once. */
usc_status usc__build_op(const usc_hlo_instr *in, usc__dom_op *op,
			 usc_error *err);

/*
 * One elementwise op on single values, synthesized by the interpreter
 * (dot's convert, multiply and add).
 */
usc_status usc__apply_scalar(usc_eval *ev, const usc_hlo_instr *in,
			     usc_hlo_opcode opc, usc_dtype result,
			     usc_dtype a, usc_dtype b, void *out,
			     const void *x, const void *y, usc_error *err);

/* Loads the value v (an integer) as type t (iota, zeros). */
usc_status usc__load_int(usc_eval *ev, usc_dtype t, int64_t v, void *out,
			 usc_error *err);

#endif /* USC_EVAL_INTERNAL_H */
