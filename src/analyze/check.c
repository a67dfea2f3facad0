/*
 * ulpscope check: one kernel's device output against the strict reference
 * and the certified oracle.
 *
 * The reference run gives each output's encodings.  The fast tier (f64
 * values with rigorous radii) then decides every element it can, tile by
 * tile as the evaluator streams them; only if some remain does the MPFR
 * oracle run, at a rising working precision (Ziv's strategy): each run
 * evaluates the tiles that still hold an undecided element (the whole
 * kernel when it is not a loop computation), and every element whose
 * error is not yet decided to 1/8 ulp takes the new enclosure, until all
 * are decided or the precision cap is reached.  The figures are then
 * summarized exactly as the HDF5 result file stores them
 * (usc_results_summarize).
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <mpfr.h>

#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "ulpscope/dtype_mpfr.h"
#include "ulpscope/hlo_kernel.h"

#include "eval/eval_values.h"
#include "../../oracles/oracle.h"
#include "../../oracles/tier.h"
#include "analyze/check_internal.h"

/* The first oracle precision, and the factor between runs. */
#define ORACLE_PREC_START 128
#define ORACLE_PREC_GROWTH 4
#define ORACLE_PREC_CAP_DEFAULT 4096
#define WORST_DEFAULT 5

/* The resolution at which an error against the oracle counts as decided. */
static const usc__oracle_resolution resolution = {0.125, 0};

usc_check_request usc_check_request_default(void)
{
	usc_check_request r;

	memset(&r, 0, sizeof r);
	r.reduce_order = USC_REDUCE_SEQUENTIAL;
	r.oracle_precision_max = ORACLE_PREC_CAP_DEFAULT;
	r.worst = WORST_DEFAULT;
	return r;
}

static void output_free(usc_check_output *o)
{
	usc_tensor_destroy(o->device);
	usc_tensor_destroy(o->reference);
	usc__free(o->oracle_mid);
	usc__free(o->oracle_rad);
	usc__free(o->ulp_oracle);
	usc__free(o->ulp_reference);
	usc__free(o->undecided);
	usc__free(o->worst);
	usc__free(o->envelope);
	usc__free(o->cls);
	usc__free(o->expected_ulps);
}

void usc_check_report_destroy(usc_check_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->input_count; i++)
		usc_tensor_destroy(r->inputs[i]);
	usc__free(r->inputs);
	for (size_t i = 0; i < r->output_count; i++)
		output_free(&r->outputs[i]);
	usc__free(r->outputs);
	usc_hlo_file_destroy(r->kernel);
	usc__free(r->hlo_path);
	usc__free(r->fusion);
	usc__free(r->kernel_name);
	usc__free(r);
}

void usc__computation_runs(const usc_hlo_computation *c, unsigned n,
			   unsigned char *runs, int depth)
{
	unsigned before = runs[c->index], v = before + n;

	runs[c->index] = (unsigned char)(v > 2 ? 2 : v);
	/*
	 * Once a computation counts as several, so does everything it
	 * calls already: each computation is walked at most twice.
	 */
	if (before >= 2 || depth > 64)
		return;
	for (size_t i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		bool once = in->opcode == USC_HLO_OP_FUSION ||
			    in->opcode == USC_HLO_OP_CALL;

		for (size_t k = 0; k < in->called_count; k++)
			usc__computation_runs(in->called[k], once ? n : 2,
					      runs, depth + 1);
	}
}

usc_status usc__load_kernel(const char *path, const char *fusion,
			    usc_hlo_file **out, usc_error *err)
{
	usc_hlo_file *file = NULL;
	const usc_hlo_module *m;
	usc_status st;

	*out = NULL;
	st = usc_hlo_parse_file(path, &file, err);
	if (st != USC_OK)
		return st;
	if (usc_hlo_file_module_count(file) != 1) {
		size_t n = usc_hlo_file_module_count(file);

		usc_hlo_file_destroy(file);
		return usc__fail(err, USC_EINVAL,
				 "%s: holds %zu modules; a kernel file must hold "
				 "exactly one",
				 path, n);
	}
	m = usc_hlo_file_module(file, 0);
	if (fusion) {
		usc_hlo_file *k = NULL;

		st = usc_hlo_extract_fusion_file(m, fusion, &k, err);
		usc_hlo_file_destroy(file);
		if (st != USC_OK)
			return st;
		file = k;
		m = usc_hlo_file_module(file, 0);
	}
	*out = file;
	return usc_hlo_verify_ex(m, path, err);
}

/*
 * Parses the HLO file and settles the module to evaluate: the module
 * itself, or the isolated fusion.  The kernel must verify.
 */
static usc_status load_kernel(const usc_check_request *req,
			      usc_check_report *r, usc_error *err)
{
	usc_hlo_file *file = NULL;
	const usc_hlo_module *m;
	usc_status st;
	size_t len;

	st = usc__load_kernel(req->hlo_path, req->fusion, &file, err);
	r->kernel = file;
	if (st != USC_OK)
		return st;
	m = usc_hlo_file_module(file, 0);
	r->computation = m->entry;
	len = strlen(m->name ? m->name : "kernel") + 1;
	r->kernel_name = usc__malloc(len);
	if (!r->kernel_name)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memcpy(r->kernel_name, m->name ? m->name : "kernel", len);
	return USC_OK;
}

static usc_status read_source(const usc_check_request *req, const char *src,
			      const usc_tensor_spec *spec, usc_tensor **out,
			      usc_error *err)
{
	return usc_tensor_read(src, spec, req->raw ? USC_TENSOR_READ_RAW : 0,
			       out, err);
}

/* Reads the inputs as the kernel's parameters expect them. */
static usc_status read_inputs(const usc_check_request *req, usc_eval *ev,
			      usc_check_report *r, usc_error *err)
{
	size_t n = usc_eval_param_count(ev);
	usc_status st;

	if (req->input_count != n)
		return usc__fail(err, USC_EINVAL,
				 "%s: the kernel has %zu parameter%s, %zu "
				 "input%s given",
				 req->hlo_path, n, n == 1 ? "" : "s",
				 req->input_count,
				 req->input_count == 1 ? " was" : "s were");
	r->inputs = usc__calloc(n ? n : 1, sizeof *r->inputs);
	if (!r->inputs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->input_count = n;
	for (size_t i = 0; i < n; i++) {
		usc_tensor_spec spec;
		char what[64 + 256];

		st = usc_eval_param_spec(ev, i, &spec, err);
		if (st != USC_OK)
			return st;
		snprintf(what, sizeof what, "parameter %zu of the kernel", i);
		spec.what = what;
		st = read_source(req, req->inputs[i], &spec, &r->inputs[i],
				 err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status bind_all(usc_eval *ev, const usc_check_report *r,
			   usc_error *err)
{
	for (size_t i = 0; i < r->input_count; i++) {
		usc_status st = usc_eval_bind(ev, i, r->inputs[i], err);

		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/* Allocates an output's per-element arrays. */
static usc_status output_alloc(usc_check_output *o, uint64_t n,
			       usc_error *err)
{
	size_t m = n ? (size_t)n : 1;

	o->oracle_mid = usc__calloc(m, sizeof(double));
	o->oracle_rad = usc__calloc(m, sizeof(double));
	o->ulp_oracle = usc__calloc(m, sizeof(double));
	o->ulp_reference = usc__calloc(m, sizeof(double));
	o->undecided = usc__calloc(m, 1);
	if (!o->oracle_mid || !o->oracle_rad || !o->ulp_oracle ||
	    !o->ulp_reference || !o->undecided)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (uint64_t k = 0; k < n; k++) {
		o->ulp_oracle[k] = NAN;
		o->undecided[k] = 1;
	}
	return USC_OK;
}

/*
 * The reference run: every op correctly rounded to its type.  Its outputs
 * fix the output count, types and shapes the device files must have.
 */
static usc_status run_reference(const usc_check_request *req,
				usc_check_report *r, usc_error *err)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev = NULL;
	usc_status st;
	size_t n;

	o.reduce_order = req->reduce_order;
	st = usc_eval_create_computation(r->computation, &o, &ev, err);
	if (st == USC_OK)
		st = read_inputs(req, ev, r, err);
	if (st == USC_OK)
		st = bind_all(ev, r, err);
	if (st == USC_OK)
		st = usc_eval_run(ev, err);
	if (st != USC_OK)
		goto done;
	n = usc_eval_output_count(ev);
	if (req->device_count != n) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel has %zu output%s, %zu device "
			       "file%s given",
			       req->hlo_path, n, n == 1 ? "" : "s",
			       req->device_count,
			       req->device_count == 1 ? " was" : "s were");
		goto done;
	}
	r->outputs = usc__calloc(n ? n : 1, sizeof *r->outputs);
	if (!r->outputs) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	r->output_count = n;
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc_check_output *out = &r->outputs[i];
		usc_tensor_spec spec;
		char what[64];

		st = usc_eval_take_output(ev, i, &out->reference, err);
		if (st != USC_OK)
			break;
		spec = usc_tensor_spec_of(out->reference);
		snprintf(what, sizeof what, "output %zu of the kernel", i);
		spec.what = what;
		st = read_source(req, req->devices[i], &spec, &out->device,
				 err);
		if (st == USC_OK)
			st = output_alloc(out, usc_tensor_count(out->device),
					  err);
	}
done:
	usc_eval_destroy(ev);
	return st;
}

/* The device's error against the reference encoding, in ULPs. */
static usc_status reference_errors(usc_check_output *o, usc_error *err)
{
	usc_dtype t = usc_tensor_dtype(o->device);
	uint64_t n = usc_tensor_count(o->device);
	usc_status st = USC_OK;
	mpfr_t ref;

	mpfr_init2(ref, 64);
	for (uint64_t k = 0; st == USC_OK && k < n; k++) {
		uint64_t d, rb;

		usc_tensor_get_bits(o->device, k, &d);
		usc_tensor_get_bits(o->reference, k, &rb);
		if (usc_dtype_is_float(t)) {
			st = usc_decode_mpfr(t, rb, ref);
			if (st == USC_OK)
				st = usc_ulp_error_mpfr(t, d, ref,
							&o->ulp_reference[k]);
		} else {
			int64_t ds, rs;
			uint64_t du, ru;

			usc_decode_int(t, d, &ds, &du);
			usc_decode_int(t, rb, &rs, &ru);
			o->ulp_reference[k] =
				usc_format_of(t)->kind == USC_KIND_SINT
					? (double)ds - (double)rs
					: (double)du - (double)ru;
		}
	}
	mpfr_clear(ref);
	if (st != USC_OK)
		return usc__fail(err, st, "cannot measure the error against "
					  "the reference");
	return USC_OK;
}

/*
 * Records an enclosure certificate as midpoint and radius: the radius is
 * raised one step so that it covers the rounding of the subtraction.
 */
static void set_enclosure(usc_check_output *o, uint64_t k,
			  const usc__oracle_enclosure *e)
{
	if (e->kind == USC__ORC_FINITE) {
		double mid = e->lo / 2 + e->hi / 2;

		o->oracle_mid[k] = mid;
		o->oracle_rad[k] =
			nextafter(fmax(e->hi - mid, mid - e->lo), INFINITY);
	} else {
		o->oracle_mid[k] = e->lo;
		o->oracle_rad[k] = 0;
	}
}

/*
 * The oracle's values of output i's elements [first, first + count), as
 * one run hands them over, taken for the elements still undecided.  The
 * number that remain undecided is added to *left.
 */
static usc_status take_oracle_values(usc_eval *ev, usc_check_output *o,
				     size_t first, size_t count,
				     const void *values, usc_dtype t,
				     uint64_t *left, usc_error *err)
{
	usc_status st;

	for (size_t j = 0; j < count; j++) {
		const usc__oracle_value *v =
			(const usc__oracle_value *)((const unsigned char *)values +
						    j * usc__domain_oracle
								.value_size);
		size_t k = first + j;
		usc__oracle_enclosure e;
		uint64_t bits, d;

		if (!o->undecided[k])
			continue;
		usc_tensor_get_bits(o->device, k, &d);
		st = usc__domain_oracle.to_output(usc__eval_domain_state(ev), t,
						  v, &bits, &e, err);
		if (st != USC_OK)
			return st;
		set_enclosure(o, k, &e);
		if (usc_dtype_is_float(t)) {
			usc__oracle_ulp_error ue;

			st = usc__oracle_decide_ulp_error(v, t, d, &resolution,
							  &ue, err);
			if (st != USC_OK)
				return st;
			o->ulp_oracle[k] = ue.mid;
			o->undecided[k] = !ue.decided;
		} else if (e.kind == USC__ORC_FINITE && e.lo == e.hi) {
			int64_t ds;
			uint64_t du;

			usc_decode_int(t, d, &ds, &du);
			o->ulp_oracle[k] =
				(usc_format_of(t)->kind == USC_KIND_SINT
					 ? (double)ds
					 : (double)du) -
				e.lo;
			o->undecided[k] = 0;
		}
		if (o->undecided[k])
			++*left;
	}
	return USC_OK;
}

/* What a visitor of a tier or oracle run works on. */
typedef struct run_ctx {
	usc_check_report *r;
	usc_eval *ev;
	uint64_t left; /* oracle: elements still undecided after the run */
} run_ctx;

/*
 * One tile (or one whole output) of the tier: every float element whose
 * error it decides is final; the rest stay undecided for the oracle.
 */
static usc_status tier_visit(void *ctx, size_t i, size_t first, size_t count,
			     const void *values, usc_dtype t, usc_error *err)
{
	run_ctx *c = ctx;
	usc_check_output *out = &c->r->outputs[i];
	usc_status st;

	if (!usc_dtype_is_float(t))
		return USC_OK;
	for (size_t j = 0; j < count; j++) {
		const usc__tier_value *v =
			(const usc__tier_value *)((const unsigned char *)values +
						  j * usc__domain_tier
							      .value_size);
		size_t k = first + j;
		usc__oracle_enclosure e;
		usc__oracle_ulp_error ue;
		uint64_t bits, d;

		usc_tensor_get_bits(out->device, k, &d);
		st = usc__tier_decide_ulp_error(v, t, d, &resolution, &ue,
						err);
		if (st != USC_OK)
			return st;
		if (!ue.decided)
			continue;
		st = usc__domain_tier.to_output(usc__eval_domain_state(c->ev),
						t, v, &bits, &e, err);
		if (st != USC_OK)
			return st;
		set_enclosure(out, k, &e);
		out->ulp_oracle[k] = ue.mid;
		out->undecided[k] = 0;
		out->tier_decided++;
	}
	return USC_OK;
}

/* Every element back to "not decided", as output_alloc left it. */
static void forget_decisions(usc_check_report *r)
{
	for (size_t i = 0; i < r->output_count; i++) {
		usc_check_output *o = &r->outputs[i];
		uint64_t n = usc_tensor_count(o->device);

		for (uint64_t k = 0; k < n; k++) {
			o->oracle_mid[k] = 0;
			o->oracle_rad[k] = 0;
			o->ulp_oracle[k] = NAN;
			o->undecided[k] = 1;
		}
		o->tier_decided = 0;
	}
}

/*
 * The fast tier: one f64 run with error radii, streamed: each tile's
 * values are decided as soon as they exist and then dropped, so the
 * tier's values never exist whole (docs/evaluator.md, "Tiles").  The tier
 * only accelerates: a kernel it cannot evaluate at all (an op it does not
 * bound) is left to the oracle whole, its partial decisions forgotten.
 */
static usc_status run_tier(const usc_check_request *req, usc_check_report *r,
			   usc_error *err)
{
	usc_eval_options o = usc_eval_options_default();
	usc__eval_stream s;
	run_ctx c;
	usc_status st;

	/* The tier does not model explicit quantization (docs/tier.md). */
	if (req->strict_oracle || req->quantize)
		return USC_OK;
	o.domain = USC_DOMAIN_TIER;
	o.reduce_order = req->reduce_order;
	memset(&c, 0, sizeof c);
	c.r = r;
	memset(&s, 0, sizeof s);
	s.visit = tier_visit;
	s.ctx = &c;
	st = usc_eval_create_computation(r->computation, &o, &c.ev, err);
	if (st == USC_OK)
		st = bind_all(c.ev, r, err);
	if (st == USC_OK)
		st = usc__eval_run_stream(c.ev, &s, err);
	usc_eval_destroy(c.ev);
	if (st != USC_OK && st != USC_ENOMEM) {
		forget_decisions(r);
		usc_error_clear(err);
		return USC_OK;
	}
	return st;
}

/* One tile (or one whole output) of an oracle run. */
static usc_status oracle_visit(void *ctx, size_t i, size_t first,
			       size_t count, const void *values, usc_dtype t,
			       usc_error *err)
{
	run_ctx *c = ctx;

	c->r->outputs[i].oracle_elements += count;
	return take_oracle_values(c->ev, &c->r->outputs[i], first, count,
				  values, t, &c->left, err);
}

/* Whether any element still waits for the oracle. */
static bool any_undecided(const usc_check_report *r)
{
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];

		for (uint64_t k = 0; k < usc_tensor_count(o->device); k++)
			if (o->undecided[k])
				return true;
	}
	return false;
}

/*
 * The oracle runs, at rising precision while elements stay undecided.
 * Each run evaluates only the tiles that hold an undecided element (a
 * loop computation; any other kernel is evaluated whole) and takes its
 * values tile by tile.
 */
static usc_status run_oracle(const usc_check_request *req,
			     usc_check_report *r, usc_error *err)
{
	unsigned long cap = req->oracle_precision_max
				    ? req->oracle_precision_max
				    : ORACLE_PREC_CAP_DEFAULT;
	unsigned long prec = ORACLE_PREC_START < cap ? ORACLE_PREC_START : cap;
	const uint8_t **wanted;
	usc_status st = USC_OK;

	wanted = usc__calloc(r->output_count ? r->output_count : 1,
			     sizeof *wanted);
	if (!wanted)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->output_count; i++)
		wanted[i] = r->outputs[i].undecided;
	for (;;) {
		usc_eval_options o = usc_eval_options_default();
		usc__eval_stream s;
		run_ctx c;

		o.domain = USC_DOMAIN_ORACLE;
		o.reduce_order = req->reduce_order;
		o.oracle_precision = prec;
		o.quantize = req->quantize;
		memset(&c, 0, sizeof c);
		c.r = r;
		memset(&s, 0, sizeof s);
		s.visit = oracle_visit;
		s.ctx = &c;
		s.wanted = wanted;
		st = usc_eval_create_computation(r->computation, &o, &c.ev, err);
		if (st == USC_OK)
			st = bind_all(c.ev, r, err);
		if (st == USC_OK)
			st = usc__eval_run_stream(c.ev, &s, err);
		usc_eval_destroy(c.ev);
		if (st != USC_OK)
			break;
		r->oracle_precision = prec;
		if (c.left == 0 || prec >= cap)
			break;
		prec = prec * ORACLE_PREC_GROWTH > cap ? cap
						       : prec * ORACLE_PREC_GROWTH;
	}
	usc__free(wanted);
	return st;
}

/* Orders elements for the worst list: NaN errors first, then by |error|. */
static bool worse(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && !isnan(b);
	return fabs(a) > fabs(b);
}

static usc_status pick_worst(const usc_check_request *req,
			     usc_check_output *o, usc_error *err)
{
	uint64_t n = usc_tensor_count(o->device);
	size_t k = req->worst, m = 0;

	if (k == 0)
		return USC_OK;
	o->worst = usc__calloc(k, sizeof *o->worst);
	if (!o->worst)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	/* Insertion into a short sorted list: k is small. */
	for (uint64_t e = 0; e < n; e++) {
		size_t pos = m;
		usc_check_element el;

		while (pos > 0 &&
		       (o->cls ? usc__check_worse(o, e, o->worst[pos - 1].index)
			       : worse(o->ulp_oracle[e],
				       o->worst[pos - 1].ulp_oracle)))
			pos--;
		if (pos >= k)
			continue;
		el.index = e;
		usc_tensor_get_bits(o->device, e, &el.device_bits);
		usc_tensor_get_bits(o->reference, e, &el.reference_bits);
		el.oracle_mid = o->oracle_mid[e];
		el.oracle_rad = o->oracle_rad[e];
		el.ulp_oracle = o->ulp_oracle[e];
		el.ulp_reference = o->ulp_reference[e];
		el.undecided = o->undecided[e];
		el.cls = o->cls ? (usc_class)o->cls[e] : USC_CLASS_UNDECIDED;
		el.envelope = o->envelope ? o->envelope[e]
					  : (usc_envelope){0, 0, USC_ENV_UNKNOWN, 0};
		el.outside_ulps = o->cls ? usc__check_outside(o, e) : 0;
		if (m < k)
			m++;
		memmove(&o->worst[pos + 1], &o->worst[pos],
			(m - 1 - pos) * sizeof *o->worst);
		o->worst[pos] = el;
	}
	o->worst_count = m;
	return USC_OK;
}

static usc_results_output results_view(const usc_check_output *o)
{
	usc_results_output v;

	memset(&v, 0, sizeof v);
	v.device = o->device;
	v.reference = o->reference;
	v.oracle_mid = o->oracle_mid;
	v.oracle_rad = o->oracle_rad;
	v.ulp_error_oracle = o->ulp_oracle;
	v.ulp_error_reference = o->ulp_reference;
	v.undecided = o->undecided;
	return v;
}

usc_status usc_check_run(const usc_check_request *req,
			 usc_check_report **out, usc_error *err)
{
	usc_check_report *r;
	usc_status st;

	if (!req || !req->hlo_path || !out ||
	    (req->input_count && !req->inputs) ||
	    (req->device_count && !req->devices))
		return usc__fail(err, USC_EINVAL, "incomplete check request");
	*out = NULL;
	r = usc__calloc(1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->hlo_path = usc__strdup(req->hlo_path);
	r->fusion = usc__strdup(req->fusion);
	if (!r->hlo_path || (req->fusion && !r->fusion)) {
		usc_check_report_destroy(r);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	st = load_kernel(req, r, err);
	if (st == USC_OK)
		st = run_reference(req, r, err);
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
		st = reference_errors(&r->outputs[i], err);
	if (st == USC_OK)
		st = run_tier(req, r, err);
	if (st == USC_OK && any_undecided(r))
		st = run_oracle(req, r, err);
	if (st == USC_OK)
		st = usc__check_classify(req, r, err);
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		usc_results_output v = results_view(&r->outputs[i]);

		st = usc_results_summarize(&v, &r->outputs[i].summary, err);
		if (st == USC_OK)
			st = pick_worst(req, &r->outputs[i], err);
	}
	if (st != USC_OK) {
		usc_check_report_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}

usc_status usc_check_write(const usc_check_report *r, const char *path,
			   bool append, usc_error *err)
{
	usc_results_output *outs;
	usc_results_kernel k;
	usc_results_attribution *attr = NULL;
	usc_results *w = NULL;
	usc_status st;

	outs = usc__calloc(r->output_count ? r->output_count : 1,
			   sizeof *outs);
	if (!outs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->output_count; i++)
		outs[i] = results_view(&r->outputs[i]);
	st = usc__check_envelope_arrays(r, outs, err);
	if (st != USC_OK) {
		usc__check_envelope_arrays_free(r, outs);
		usc__free(outs);
		return st;
	}
	memset(&k, 0, sizeof k);
	if (r->classified) {
		k.verdict = usc_verdict_name(r->verdict);
		k.verdict_reason = r->reason;
		k.profile = r->profile.name;
	}
	k.name = r->kernel_name;
	k.hlo_file = r->hlo_path;
	k.fusion = r->fusion;
	k.computation = r->computation;
	k.oracle_precision_max = (int64_t)r->oracle_precision;
	k.output_count = r->output_count;
	k.outputs = outs;
	/* Attribution (src/analyze/attribution.c), when the caller made one. */
	if (r->attribution) {
		st = usc_attribution_results(r->attribution, &attr, outs,
					     r->output_count, err);
		if (st != USC_OK) {
			usc__check_envelope_arrays_free(r, outs);
			usc__free(outs);
			return st;
		}
		k.attribution = attr;
	}
	{
		/* The kernel's text as evaluated (the isolated fusion). */
		char *text = NULL;
		usc_hlo_print_options po = usc_hlo_print_options_default();

		st = usc_hlo_module_print(usc_hlo_file_module(r->kernel, 0),
					  &po, &text, NULL, err);
		k.hlo_text = text;
		if (st == USC_OK)
			st = append ? usc_results_open_append(path, &w, err)
				    : usc_results_create(path, &w, err);
		if (st == USC_OK)
			st = usc_results_add_kernel(w, &k, err);
		if (st == USC_OK) {
			st = usc_results_close(w, err);
			w = NULL;
		}
		if (w)
			usc_results_abort(w);
		usc_hlo_text_free(text);
	}
	usc__check_envelope_arrays_free(r, outs);
	usc__free(outs);
	usc_attribution_results_free(attr);
	return st;
}
