/*
 * Per-element error attribution: which op of a kernel causes each output
 * element's rounding error (include/ulpscope/attribution.h,
 * docs/attribution.md).
 *
 * The kernel runs once in the reference domain (y_ref), once in the
 * oracle domain with nothing rounded (y*), and once more in the oracle
 * domain per attributed op u with only u's results rounded to their
 * declared type (y_u; usc_eval_options.round_only).  Every figure is
 * formed in MPFR from the same y* (the enclosure's midpoint) and rounded
 * once to double, so that contributions + residual = total holds up to
 * that last rounding.
 */
#include "internal.h"
#include "analyze/attribution_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include <mpfi.h>

#include "ulpscope/attribution.h"
#include "ulpscope/dtype_mpfr.h"
#include "ulpscope/results.h"

#include "eval/cone.h"
#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "../../oracles/oracle.h"

usc_attr_options usc_attr_options_default(void)
{
	usc_attr_options o;

	memset(&o, 0, sizeof o);
	o.top_k = USC_ATTR_TOP_K_DEFAULT;
	o.max_ops = USC_ATTR_MAX_OPS_DEFAULT;
	o.reduce_order = USC_REDUCE_SEQUENTIAL;
	return o;
}

/* ------------------------------------------------------ which ops */

/*
 * One attributed op while the units are collected: the instructions whose
 * results round together (the op itself and, for a reduce, every
 * instruction of the computations it applies).
 */
typedef struct unit {
	const usc_hlo_instr *head;
	const usc_hlo_instr **instrs;
	size_t n, cap;
	char *name;
} unit;

/* collect.owner of a computation not walked yet, or walked inline. */
#define NOT_SEEN SIZE_MAX
#define INLINE (SIZE_MAX - 1)

typedef struct collect {
	unit *units;
	size_t n, cap;
	/*
	 * By computation index: NOT_SEEN, INLINE (a fusion's body, walked
	 * as the kernel's own ops) or the unit that claimed it.
	 */
	size_t *owner;
} collect;

static usc_status unit_push(unit *u, const usc_hlo_instr *in, usc_error *err)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 4;
		const usc_hlo_instr **p =
			usc__reallocarray(u->instrs, cap, sizeof *p);

		if (!p)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		u->instrs = p;
		u->cap = cap;
	}
	u->instrs[u->n++] = in;
	return USC_OK;
}

/*
 * Fusions and calls, and the bodies of the ops that apply them, nest at
 * most as deep as the evaluator allows (USC__EVAL_NESTING_MAX): the walks
 * below recurse per level of nesting, never per op.
 */
static usc_status too_deep(const usc_hlo_instr *in, usc_error *err)
{
	return usc__eval_fail(err, USC_EUNSUPPORTED, in,
			      "attribution: computations nested more than %d "
			      "deep",
			      USC__EVAL_NESTING_MAX);
}

/* Every instruction of c and of the computations it calls, into u. */
static usc_status claim_body(collect *cl, size_t ui,
			     const usc_hlo_computation *c, int depth,
			     usc_error *err)
{
	usc_status st = USC_OK;

	if (cl->owner[c->index] != NOT_SEEN)
		return USC_OK;
	cl->owner[c->index] = ui;
	for (size_t i = 0; st == USC_OK && i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		st = unit_push(&cl->units[ui], in, err);
		if (st == USC_OK && in->called_count && depth >= USC__EVAL_NESTING_MAX)
			st = too_deep(in, err);
		for (size_t k = 0; st == USC_OK && k < in->called_count; k++)
			st = claim_body(cl, ui, in->called[k], depth + 1, err);
	}
	return st;
}

static bool is_float_shape(const usc_hlo_shape *s)
{
	return s->kind == USC_HLO_SHAPE_ARRAY && usc_dtype_is_float(s->dtype);
}

/*
 * Whether the reference may round in's result: a float result of an op
 * that is not exact by nature.  Exact: data movement, negate, abs, sign,
 * max/min, clamp, select, compare, the integer-valued roundings (their
 * results are integers the type holds), and a convert that widens (every
 * value of the source type is one of the destination's).
 */
bool usc__instr_rounds(const usc_hlo_instr *in)
{
	if (!is_float_shape(&in->shape))
		return false;
	switch (in->opcode) {
	case USC_HLO_OP_PARAMETER:
	case USC_HLO_OP_CONSTANT:
	case USC_HLO_OP_IOTA:
	case USC_HLO_OP_NEGATE:
	case USC_HLO_OP_ABS:
	case USC_HLO_OP_SIGN:
	case USC_HLO_OP_MAXIMUM:
	case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_CLAMP:
	case USC_HLO_OP_SELECT:
	case USC_HLO_OP_COMPARE:
	case USC_HLO_OP_FLOOR:
	case USC_HLO_OP_CEIL:
	case USC_HLO_OP_ROUND_NEAREST_AFZ:
	case USC_HLO_OP_ROUND_NEAREST_EVEN:
	case USC_HLO_OP_COPY:
	case USC_HLO_OP_BITCAST_CONVERT:
		return false;
	case USC_HLO_OP_DOT:
	case USC_HLO_OP_CONVOLUTION:
		return true;
	case USC_HLO_OP_CONVERT: {
		usc_dtype from = in->operands[0]->shape.dtype;
		usc_float_info a, b;

		if (!usc_dtype_is_float(from))
			return true;
		if (usc_float_info_of(from, &a) != USC_OK ||
		    usc_float_info_of(in->shape.dtype, &b) != USC_OK)
			return true;
		return !(b.precision >= a.precision && b.emax >= a.emax &&
			 b.min_subnormal <= a.min_subnormal);
	}
	default:
		return usc_hlo_opcode_category(in->opcode) ==
		       USC_HLO_CAT_ELEMENTWISE;
	}
}

static usc_status new_unit(collect *cl, const usc_hlo_instr *in,
			   size_t *ui, usc_error *err)
{
	unit *u;

	if (cl->n == cl->cap) {
		size_t cap = cl->cap ? 2 * cl->cap : 16;
		unit *p = usc__reallocarray(cl->units, cap, sizeof *p);

		if (!p)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		cl->units = p;
		cl->cap = cap;
	}
	u = &cl->units[cl->n];
	memset(u, 0, sizeof *u);
	u->head = in;
	u->name = usc__strndup(in->name, strlen(in->name));
	if (!u->name)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	*ui = cl->n++;
	return unit_push(u, in, err);
}

/* Appends "+name" to a unit that shares its body with in. */
static usc_status unit_rename(unit *u, const usc_hlo_instr *in,
			      usc_error *err)
{
	size_t a = strlen(u->name), b = strlen(in->name);
	char *s = usc__malloc(a + b + 2);

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memcpy(s, u->name, a);
	s[a] = '+';
	memcpy(s + a + 1, in->name, b + 1);
	usc__free(u->name);
	u->name = s;
	return unit_push(u, in, err);
}

/*
 * Walks c in source order: a fusion or call is walked inline (its body's
 * ops are the kernel's ops); an op that applies a computation (reduce,
 * reduce-window, map, scatter...) is one unit with its body, joined with
 * any earlier op applying the same body; any other op that rounds is a
 * unit of its own.  A computation is walked once.
 */
static usc_status walk(collect *cl, const usc_hlo_computation *c, int depth,
		       usc_error *err)
{
	usc_status st = USC_OK;

	if (cl->owner[c->index] != NOT_SEEN)
		return USC_OK;
	cl->owner[c->index] = INLINE;
	for (size_t i = 0; st == USC_OK && i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		size_t ui;

		if (in->called_count > 0 && depth >= USC__EVAL_NESTING_MAX) {
			st = too_deep(in, err);
			break;
		}
		if (in->opcode == USC_HLO_OP_FUSION ||
		    in->opcode == USC_HLO_OP_CALL) {
			for (size_t k = 0; st == USC_OK && k < in->called_count;
			     k++)
				st = walk(cl, in->called[k], depth + 1, err);
			continue;
		}
		if (in->called_count > 0) {
			size_t j = cl->owner[in->called[0]->index];

			if (j != NOT_SEEN && j != INLINE) {
				st = unit_rename(&cl->units[j], in, err);
				continue;
			}
			st = new_unit(cl, in, &ui, err);
			for (size_t k = 0; st == USC_OK && k < in->called_count;
			     k++)
				st = claim_body(cl, ui, in->called[k],
						depth + 1, err);
			continue;
		}
		if (usc__instr_rounds(in))
			st = new_unit(cl, in, &ui, err);
	}
	return st;
}

static void collect_free(collect *cl)
{
	for (size_t i = 0; i < cl->n; i++) {
		usc__free(cl->units[i].instrs);
		usc__free(cl->units[i].name);
	}
	usc__free(cl->units);
	usc__free(cl->owner);
}

/* ------------------------------------------------------- provenance */

static usc_status provenance(const usc_hlo_module *m, const usc_hlo_instr *in,
			     usc_attr_op *op, usc_error *err)
{
	const usc_hlo_metadata *md = in->metadata;
	const char *file;
	size_t len;
	int64_t line;

	op->source_line = -1;
	if (!md)
		return USC_OK;
	op->op_type = md->op_type;
	op->op_name = md->op_name;
	if (!usc_hlo_instr_source(m, in, &file, &len, &line))
		return USC_OK;
	op->source_file = usc__strndup(file, len);
	if (!op->source_file)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	op->source_line = line;
	return USC_OK;
}

const char *usc_attr_op_label(const usc_attr_op *op, char *buf, size_t size)
{
	const char *base;

	if (!op->source_file) {
		snprintf(buf, size, "%s", op->name);
		return buf;
	}
	/* The file's last component: the rest is the capture's layout. */
	base = strrchr(op->source_file, '/');
	base = base ? base + 1 : op->source_file;
	if (op->source_line >= 0)
		snprintf(buf, size, "%s (%s:%" PRId64 ")", op->name, base,
			 op->source_line);
	else
		snprintf(buf, size, "%s (%s)", op->name, base);
	return buf;
}

/* ------------------------------------------------------------ runs */

/*
 * A run of c under o, its values kept; with a cone (k, m), only what
 * differs from the cone's base is evaluated (src/eval/cone.h).
 */
static usc_status run_eval(const usc_hlo_computation *c,
			   const usc_eval_options *o,
			   const usc_tensor *const *inputs, size_t n,
			   usc__cone *k, const usc__cone_match *m,
			   usc_eval **out, usc_error *err)
{
	usc_eval *ev = NULL;
	usc__eval_stream s;
	usc_status st;

	*out = NULL;
	st = usc_eval_create_computation(c, o, &ev, err);
	if (st == USC_OK && k)
		st = usc__cone_attach(ev, k, m, err);
	if (st != USC_OK) {
		usc_eval_destroy(ev);
		return st;
	}
	if (usc_eval_param_count(ev) != n) {
		st = usc__fail(err, USC_EINVAL,
			       "attribution: the kernel takes %zu inputs, "
			       "%zu given",
			       usc_eval_param_count(ev), n);
		usc_eval_destroy(ev);
		return st;
	}
	if (st == USC_OK)
		st = usc_eval_bind_all(ev, inputs, n, err);
	memset(&s, 0, sizeof s);
	s.keep = true;
	if (st == USC_OK)
		st = usc__eval_run_stream(ev, &s, err);
	if (st != USC_OK) {
		usc_eval_destroy(ev);
		return st;
	}
	*out = ev;
	return USC_OK;
}

/*
 * The midpoint of an oracle value into m; false when it has none (a NaN
 * or Inf kind, undecided, an endpoint beyond MPFR's range).
 */
static bool mid_of(const usc__oracle_value *v, mpfr_ptr m)
{
	if (v->kind != USC__ORC_FINITE)
		return false;
	mpfr_set_prec(m, mpfi_get_prec(v->x) + 1);
	mpfi_mid(m, v->x);
	return mpfr_number_p(m) != 0;
}

/* Per output, what the runs accumulate per element in MPFR. */
typedef struct acc_output {
	usc_dtype dtype;
	size_t count;
	mpfr_t *ystar; /* y*'s midpoint; NaN where it has none */
	mpfr_t *ulp;   /* ulp(y*) of dtype */
	mpfr_t *sum;   /* sum over u of (y_u - y*), exact enough */
	uint8_t *bad;  /* 1: some figure is not finite */
} acc_output;

/* Precision of the difference and sum accumulators (see take_run). */
static mpfr_prec_t acc_prec(mpfr_prec_t p)
{
	return 4 * p + 64;
}

static void acc_free(acc_output *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		for (size_t k = 0; a[i].ystar && k < a[i].count; k++) {
			mpfr_clear(a[i].ystar[k]);
			mpfr_clear(a[i].ulp[k]);
			mpfr_clear(a[i].sum[k]);
		}
		usc__free(a[i].ystar);
		usc__free(a[i].ulp);
		usc__free(a[i].sum);
		usc__free(a[i].bad);
	}
	usc__free(a);
}

/*
 * The oracle run without rounding: y* and ulp(y*) of every element of
 * every float output.
 */
static usc_status take_oracle(usc_eval *ev, acc_output *acc, size_t nout,
			      mpfr_prec_t prec, usc_error *err)
{
	for (size_t i = 0; i < nout; i++) {
		const void *vals;
		size_t count;
		usc_dtype t;
		acc_output *a = &acc[i];
		usc_status st;

		st = usc__eval_output_values(ev, i, &vals, &count, &t);
		if (st != USC_OK)
			return usc__fail(err, st, "attribution: no oracle "
						  "values of output %zu", i);
		a->dtype = t;
		a->count = count;
		a->ystar = usc__calloc(count ? count : 1, sizeof *a->ystar);
		a->ulp = usc__calloc(count ? count : 1, sizeof *a->ulp);
		a->sum = usc__calloc(count ? count : 1, sizeof *a->sum);
		a->bad = usc__calloc(count ? count : 1, 1);
		if (!a->ystar || !a->ulp || !a->sum || !a->bad) {
			usc__free(a->ystar);
			usc__free(a->ulp);
			usc__free(a->sum);
			a->ystar = a->ulp = a->sum = NULL;
			return usc__fail(err, USC_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < count; k++) {
			const usc__oracle_value *v =
				(const usc__oracle_value *)((const char *)vals +
							    k * usc__domain_oracle
									.value_size);

			mpfr_init2(a->ystar[k], prec);
			mpfr_init2(a->ulp[k], 64);
			mpfr_init2(a->sum[k], acc_prec(prec));
			mpfr_set_zero(a->sum[k], 1);
			if (!usc_dtype_is_float(t) || !mid_of(v, a->ystar[k]) ||
			    usc_ulp_mpfr(t, a->ystar[k], a->ulp[k]) !=
				    USC_OK ||
			    !mpfr_number_p(a->ulp[k])) {
				a->bad[k] = 1;
				mpfr_set_nan(a->ystar[k]);
			}
		}
	}
	return USC_OK;
}

/*
 * (y - y*) / ulp(y*) into d (a double, rounded once), and y - y* added to
 * the element's sum.  The difference of two numbers of at most P bits
 * whose exponents differ by less than 3P + 64 is exact at 4P + 64 bits;
 * beyond that the smaller is below 2^-(3P) of the larger and the figure
 * rounds to double alike.  ulp is a power of 2, so the division is exact.
 */
static double figure(mpfr_ptr t, mpfr_srcptr y, acc_output *a, size_t k,
		     bool add)
{
	mpfr_sub(t, y, a->ystar[k], MPFR_RNDN);
	if (add)
		mpfr_add(a->sum[k], a->sum[k], t, MPFR_RNDN);
	mpfr_div(t, t, a->ulp[k], MPFR_RNDN);
	return mpfr_get_d(t, MPFR_RNDN);
}

/* One attribution run: column u of every output's contributions. */
static usc_status take_unit(usc_eval *ev, acc_output *acc,
			    usc_attribution *r, size_t u, mpfr_ptr m,
			    mpfr_ptr t, usc_error *err)
{
	for (size_t i = 0; i < r->output_count; i++) {
		acc_output *a = &acc[i];
		usc_attr_output *o = &r->outputs[i];
		const void *vals;
		size_t count;
		usc_dtype dt;
		usc_status st;

		st = usc__eval_output_values(ev, i, &vals, &count, &dt);
		if (st != USC_OK || count != a->count)
			return usc__fail(err, USC_EINTERNAL,
					 "attribution: output %zu of the run "
					 "of %s",
					 i, r->ops[u].name);
		for (size_t k = 0; k < count; k++) {
			const usc__oracle_value *v =
				(const usc__oracle_value *)((const char *)vals +
							    k * usc__domain_oracle
									.value_size);
			double *c = &o->contrib[k * r->op_count + u];

			if (a->bad[k] || !mid_of(v, m)) {
				a->bad[k] = 1;
				*c = NAN;
				continue;
			}
			*c = figure(t, m, a, k, true);
		}
	}
	return USC_OK;
}

/* The reference run: total and residual of every element. */
static usc_status take_reference(usc_eval *ev, acc_output *acc,
				 usc_attribution *r, mpfr_ptr m, mpfr_ptr t,
				 usc_error *err)
{
	for (size_t i = 0; i < r->output_count; i++) {
		acc_output *a = &acc[i];
		usc_attr_output *o = &r->outputs[i];
		const usc_tensor *ref;
		usc_status st;

		st = usc_eval_output(ev, i, &ref, err);
		if (st != USC_OK)
			return st;
		for (size_t k = 0; k < a->count; k++) {
			uint64_t bits;

			o->total[k] = o->residual[k] = NAN;
			if (a->bad[k])
				continue;
			usc_tensor_get_bits(ref, k, &bits);
			if (usc_decode_mpfr(a->dtype, bits, m) != USC_OK ||
			    !mpfr_number_p(m)) {
				a->bad[k] = 1;
				continue;
			}
			o->total[k] = figure(t, m, a, k, false);
			/* residual = (y_ref - y* - sum_u (y_u - y*)) / ulp */
			mpfr_sub(t, m, a->ystar[k], MPFR_RNDN);
			mpfr_sub(t, t, a->sum[k], MPFR_RNDN);
			mpfr_div(t, t, a->ulp[k], MPFR_RNDN);
			o->residual[k] = mpfr_get_d(t, MPFR_RNDN);
		}
	}
	return USC_OK;
}

/* --------------------------------------------------------- figures */

/* The top_k nonzero contributions of element k, and the budgets. */
static void finish(usc_attribution *r, const acc_output *acc)
{
	size_t n = r->op_count, K = r->top_k;
	double mass_all = 0;

	for (size_t i = 0; i < r->output_count; i++) {
		usc_attr_output *o = &r->outputs[i];

		for (size_t k = 0; k < o->count; k++) {
			const double *c = &o->contrib[k * n];
			uint32_t *top = &o->top_ops[k * K];
			double *tc = &o->top_contrib[k * K];
			double *ts = &o->top_share[k * K];
			double mass;

			for (size_t j = 0; j < K; j++) {
				top[j] = USC_ATTR_NO_OP;
				tc[j] = 0;
				ts[j] = 0;
			}
			if (acc[i].bad[k]) {
				for (size_t u = 0; u < n; u++)
					o->contrib[k * n + u] = NAN;
				for (size_t j = 0; j < K; j++)
					tc[j] = ts[j] = NAN;
				continue;
			}
			o->attributed++;
			mass = fabs(o->residual[k]);
			for (size_t u = 0; u < n; u++) {
				double a = fabs(c[u]);

				mass += a;
				r->ops[u].sum_abs += a;
				if (a > r->ops[u].max_abs)
					r->ops[u].max_abs = a;
			}
			r->residual_sum_abs += fabs(o->residual[k]);
			if (fabs(o->residual[k]) > r->residual_max_abs)
				r->residual_max_abs = fabs(o->residual[k]);
			mass_all += mass;
			/* Insertion into the k best: larger first, ties by index. */
			for (size_t u = 0; u < n; u++) {
				double a = fabs(c[u]);
				size_t j;

				if (a == 0)
					continue;
				for (j = 0; j < K; j++)
					if (top[j] == USC_ATTR_NO_OP ||
					    a > fabs(tc[j]))
						break;
				if (j == K)
					continue;
				memmove(&top[j + 1], &top[j],
					(K - j - 1) * sizeof *top);
				memmove(&tc[j + 1], &tc[j],
					(K - j - 1) * sizeof *tc);
				top[j] = (uint32_t)u;
				tc[j] = c[u];
			}
			for (size_t j = 0; j < K; j++)
				if (top[j] != USC_ATTR_NO_OP)
					ts[j] = fabs(tc[j]) / mass;
		}
		r->attributed += o->attributed;
	}
	for (size_t u = 0; u < n; u++) {
		usc_attr_op *op = &r->ops[u];

		op->mean_abs = r->attributed ? op->sum_abs / r->attributed
					     : NAN;
		op->share = mass_all > 0 ? op->sum_abs / mass_all : 0;
	}
	r->residual_mean_abs =
		r->attributed ? r->residual_sum_abs / r->attributed : NAN;
	r->residual_share = mass_all > 0 ? r->residual_sum_abs / mass_all : 0;
}

void usc_attribution_destroy(usc_attribution *a)
{
	if (!a)
		return;
	for (size_t u = 0; a->ops && u < a->op_count; u++) {
		usc__free(a->ops[u].name);
		usc__free(a->ops[u].source_file);
	}
	usc__free(a->ops);
	for (size_t i = 0; a->outputs && i < a->output_count; i++) {
		usc_attr_output *o = &a->outputs[i];

		usc__free(o->total);
		usc__free(o->residual);
		usc__free(o->contrib);
		usc__free(o->top_ops);
		usc__free(o->top_contrib);
		usc__free(o->top_share);
	}
	usc__free(a->outputs);
	usc__free(a);
}

/* The result skeleton: ops from the units, arrays per output. */
static usc_status build(usc_attribution *r, const usc_hlo_module *m,
			collect *cl, const acc_output *acc, usc_error *err)
{
	usc_status st = USC_OK;

	r->ops = usc__calloc(cl->n ? cl->n : 1, sizeof *r->ops);
	if (!r->ops)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->op_count = cl->n;
	for (size_t u = 0; st == USC_OK && u < cl->n; u++) {
		usc_attr_op *op = &r->ops[u];

		op->instr = cl->units[u].head;
		op->name = cl->units[u].name;
		cl->units[u].name = NULL;
		op->opcode = usc_hlo_opcode_name(op->instr->opcode);
		st = provenance(m, op->instr, op, err);
	}
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		usc_attr_output *o = &r->outputs[i];
		size_t c = acc[i].count ? acc[i].count : 1;
		size_t n = r->op_count ? r->op_count : 1;

		o->dtype = acc[i].dtype;
		o->count = acc[i].count;
		o->total = usc__calloc(c, sizeof *o->total);
		o->residual = usc__calloc(c, sizeof *o->residual);
		if (c > SIZE_MAX / n / sizeof(double) / r->top_k)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		o->contrib = usc__calloc(c * n, sizeof *o->contrib);
		o->top_ops = usc__calloc(c * r->top_k, sizeof *o->top_ops);
		o->top_contrib = usc__calloc(c * r->top_k,
					     sizeof *o->top_contrib);
		o->top_share = usc__calloc(c * r->top_k, sizeof *o->top_share);
		if (!o->total || !o->residual || !o->contrib || !o->top_ops ||
		    !o->top_contrib || !o->top_share)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	return st;
}

usc_status usc_attribute(const usc_hlo_module *m,
			 const usc_hlo_computation *c,
			 const usc_tensor *const *inputs, size_t input_count,
			 const usc_attr_options *opt, usc_attribution **out,
			 usc_error *err)
{
	usc_attr_options o = opt ? *opt : usc_attr_options_default();
	usc_eval_options eo = usc_eval_options_default();
	collect cl;
	usc_attribution *r = NULL;
	acc_output *acc = NULL;
	usc_eval *ev = NULL;
	usc__cone *cone = NULL;
	size_t np = 0;
	mpfr_prec_t prec;
	mpfr_t mm, t;
	usc_status st;

	*out = NULL;
	if (!o.top_k)
		o.top_k = USC_ATTR_TOP_K_DEFAULT;
	if (!o.max_ops)
		o.max_ops = USC_ATTR_MAX_OPS_DEFAULT;
	prec = o.precision ? (mpfr_prec_t)o.precision
			   : USC__ORACLE_PREC_DEFAULT;
	if (prec < USC__ORACLE_PREC_MIN || prec > USC__ORACLE_PREC_MAX)
		return usc__fail(err, USC_EINVAL,
				 "attribution precision %ld outside [%d, %d] "
				 "bits",
				 (long)prec, USC__ORACLE_PREC_MIN,
				 USC__ORACLE_PREC_MAX);
	if (c->index >= m->computation_count || m->computations[c->index] != c)
		return usc__fail(err, USC_EINVAL,
				 "attribution: computation '%s' is not one of "
				 "the module's",
				 c->name);
	memset(&cl, 0, sizeof cl);
	cl.owner = usc__calloc(m->computation_count ? m->computation_count : 1,
			       sizeof *cl.owner);
	if (!cl.owner)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < m->computation_count; i++)
		cl.owner[i] = NOT_SEEN;
	st = walk(&cl, c, 0, err);
	if (st == USC_OK && cl.n > o.max_ops)
		st = usc__fail(err, USC_ERANGE,
			       "attribution: %s has %zu ops that round, more "
			       "than the cap of %zu (each costs one oracle "
			       "run; raise it with --attr-max-ops)",
			       c->name, cl.n, o.max_ops);
	if (st != USC_OK) {
		collect_free(&cl);
		return st;
	}
	mpfr_inits2(prec, mm, t, (mpfr_ptr)0);
	mpfr_set_prec(t, acc_prec(prec));
	r = usc__calloc(1, sizeof *r);
	if (!r) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	r->top_k = o.top_k;
	r->precision = (unsigned long)prec;

	/*
	 * y*: nothing rounds.  Its values are kept (the cone, within its
	 * budget) for the runs of y_u, which differ from it only downstream
	 * of u.
	 */
	eo.domain = USC_DOMAIN_ORACLE;
	eo.reduce_order = o.reduce_order;
	eo.oracle_precision = (unsigned long)prec;
	eo.quantize = o.quantize;
	/* The cone's base would say it in its words: attribution's own. */
	for (size_t i = 0; i < c->instr_count; i++)
		np += c->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	if (np != input_count) {
		st = usc__fail(err, USC_EINVAL,
			       "attribution: the kernel takes %zu inputs, "
			       "%zu given",
			       np, input_count);
		goto done;
	}
	st = usc__cone_create(c, &eo, inputs, input_count, 0, &cone, err);
	if (st != USC_OK)
		goto done;
	ev = usc__cone_base(cone);
	r->output_count = usc_eval_output_count(ev);
	r->outputs = usc__calloc(r->output_count ? r->output_count : 1,
				 sizeof *r->outputs);
	acc = usc__calloc(r->output_count ? r->output_count : 1, sizeof *acc);
	if (!r->outputs || !acc) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = take_oracle(ev, acc, r->output_count, prec, err);
	ev = NULL;
	if (st == USC_OK)
		st = build(r, m, &cl, acc, err);

	/* y_u: only unit u rounds. */
	for (size_t u = 0; st == USC_OK && u < cl.n; u++) {
		usc__cone_seeds seeds = {cl.units[u].instrs, cl.units[u].n};
		usc__cone_match cm = usc__cone_match_seeds(&seeds);

		eo.round_only = cl.units[u].instrs;
		eo.round_only_count = cl.units[u].n;
		st = run_eval(c, &eo, inputs, input_count, cone, &cm, &ev,
			      err);
		if (st == USC_OK)
			st = take_unit(ev, acc, r, u, mm, t, err);
		usc_eval_destroy(ev);
		ev = NULL;
	}

	/* y_ref: the strict reference. */
	if (st == USC_OK) {
		eo = usc_eval_options_default();
		eo.reduce_order = o.reduce_order;
		st = run_eval(c, &eo, inputs, input_count, NULL, NULL, &ev,
			      err);
	}
	if (st == USC_OK)
		st = take_reference(ev, acc, r, mm, t, err);
	usc_eval_destroy(ev);
	if (st == USC_OK)
		finish(r, acc);
done:
	usc__cone_destroy(cone);
	acc_free(acc, r ? r->output_count : 0);
	collect_free(&cl);
	mpfr_clears(mm, t, (mpfr_ptr)0);
	if (st != USC_OK) {
		usc_attribution_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}

/* ---------------------------------------------------- result file */

void usc_attribution_results_free(usc_results_attribution *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->ops && i < r->op_count; i++)
		usc_hlo_text_free(r->ops[i].op.shape);
	usc__free(r->ops);
	usc__free(r);
}

usc_status usc_attribution_results(const usc_attribution *a,
				   usc_results_attribution **out,
				   usc_results_output *outs,
				   size_t output_count, usc_error *err)
{
	usc_results_attribution *r;
	usc_status st = USC_OK;

	*out = NULL;
	if (output_count != a->output_count)
		return usc__fail(err, USC_EINVAL,
				 "attribution of %zu outputs, %zu given",
				 a->output_count, output_count);
	r = usc__calloc(1, sizeof *r);
	if (r)
		r->ops = usc__calloc(a->op_count ? a->op_count : 1,
				     sizeof *r->ops);
	if (!r || !r->ops) {
		usc__free(r);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	r->op_count = a->op_count;
	r->top_k = (int64_t)a->top_k;
	r->precision = (int64_t)a->precision;
	r->attributed = a->attributed;
	r->residual_mean_abs = a->residual_mean_abs;
	r->residual_max_abs = a->residual_max_abs;
	r->residual_sum_abs = a->residual_sum_abs;
	r->residual_share = a->residual_share;
	/* The rows point into a (which outlives them) but the shapes. */
	for (size_t u = 0; st == USC_OK && u < a->op_count; u++) {
		const usc_attr_op *op = &a->ops[u];
		usc_results_attr_op *row = &r->ops[u];
		const usc_hlo_shape *sh = &op->instr->shape;

		row->op.index = (int64_t)u;
		row->op.name = op->name;
		row->op.opcode = (char *)op->opcode;
		row->op.element_type =
			(char *)(sh->kind == USC_HLO_SHAPE_TUPLE ? "tuple"
				 : sh->kind == USC_HLO_SHAPE_TOKEN
					 ? "token"
					 : usc_dtype_name(sh->dtype));
		row->op.op_name = (char *)op->op_name;
		row->op.source_file = op->source_file;
		row->op.source_line = op->source_line;
		row->mean_abs = op->mean_abs;
		row->max_abs = op->max_abs;
		row->sum_abs = op->sum_abs;
		row->share = op->share;
		st = usc_hlo_shape_print(sh, &row->op.shape, err);
	}
	if (st != USC_OK) {
		usc_attribution_results_free(r);
		return st;
	}
	for (size_t i = 0; i < output_count; i++) {
		const usc_attr_output *o = &a->outputs[i];

		outs[i].top_k = a->top_k;
		outs[i].top_ops = o->top_ops;
		outs[i].top_contrib = o->top_contrib;
		outs[i].attr_total = o->total;
		outs[i].attr_residual = o->residual;
	}
	*out = r;
	return USC_OK;
}
