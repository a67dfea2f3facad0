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
 * are decided or the precision cap is reached.  With a profile the
 * envelope run and the classes follow.  The figures are summarized
 * exactly as the HDF5 result file stores them (usc_results_stats_acc).
 *
 * All of this works on parts of the outputs (usc__check_part): a whole
 * check has one part per output, the whole of it, and keeps its arrays in
 * the report; a streamed check (docs/check.md, "Streaming") of a loop
 * kernel's one output goes a piece at a time, every domain evaluating
 * only the piece's tiles, and folds each piece into the summaries, the
 * worst lists, the verdict's element and the result file before the next.
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
#include "../../oracles/reference_fast.h"
#include "dtype/ulp_fast.h"
#include "analyze/check_internal.h"
#include "store/results_internal.h"

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
	r.threads = 1;
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

/*
 * A copy of an in-memory source, which must have the type and shape spec
 * asks for (what the file readers check of a file).
 */
static usc_status copy_source(const usc_tensor *t, const usc_tensor_spec *spec,
			      usc_tensor **out, usc_error *err)
{
	usc_tensor_spec have = usc_tensor_spec_of(t);
	bool same = have.dtype == spec->dtype && have.rank == spec->rank;
	char want[128], got[128];
	usc_status st;

	for (size_t d = 0; same && d < have.rank; d++)
		same = have.dims[d] == spec->dims[d];
	if (!same) {
		usc_tensor_spec_format(spec, want, sizeof want);
		usc_tensor_spec_format(&have, got, sizeof got);
		return usc__fail(err, USC_EINVAL, "%s expects %s, got %s",
				 spec->what ? spec->what : "the tensor", want,
				 got);
	}
	st = usc_tensor_create(have.dtype, have.rank, have.dims, out, err);
	if (st == USC_OK && usc_tensor_nbytes(t))
		memcpy(usc_tensor_data(*out), usc_tensor_cdata(t),
		       usc_tensor_nbytes(t));
	return st;
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
		st = req->input_tensors
			     ? copy_source(req->input_tensors[i], &spec,
					   &r->inputs[i], err)
			     : read_source(req, req->inputs[i], &spec,
					   &r->inputs[i], err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status bind_all(usc_eval *ev, const usc_check_report *r,
			   usc_error *err)
{
	return usc_eval_bind_all(ev, (const usc_tensor *const *)r->inputs,
				 r->input_count, err);
}

/* ------------------------------------------------------------ parts */

void usc__check_part_free(usc__check_part *p)
{
	usc_tensor_destroy(p->reference);
	usc__free(p->oracle_mid);
	usc__free(p->oracle_rad);
	usc__free(p->ulp_oracle);
	usc__free(p->ulp_reference);
	usc__free(p->undecided);
	usc__free(p->envelope);
	usc__free(p->cls);
	usc__free(p->expected_ulps);
	usc__free(p->worst);
	usc__free(p->col_lo);
	usc__free(p->col_hi);
	usc__free(p->col_flags);
	memset(p, 0, sizeof *p);
}

/*
 * Allocates a part's arrays for cap elements (and the envelope's and the
 * classes' when classified), its worst list and the envelope's columns.
 * The reference tensor is the caller's.
 */
usc_status usc__check_part_alloc(usc__check_part *p, size_t cap,
				 bool classified, size_t worst, bool columns,
				 usc_error *err)
{
	size_t m = cap ? cap : 1;

	p->worst_cap = worst;
	p->worst = usc__calloc(worst ? worst : 1, sizeof *p->worst);
	if (classified && columns) {
		p->col_lo = usc__malloc(m * sizeof *p->col_lo);
		p->col_hi = usc__malloc(m * sizeof *p->col_hi);
		p->col_flags = usc__malloc(m);
		if (!p->col_lo || !p->col_hi || !p->col_flags)
			return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (!p->worst)
		return usc__fail(err, USC_ENOMEM, "out of memory");

	p->oracle_mid = usc__malloc(m * sizeof(double));
	p->oracle_rad = usc__malloc(m * sizeof(double));
	p->ulp_oracle = usc__malloc(m * sizeof(double));
	p->ulp_reference = usc__malloc(m * sizeof(double));
	p->undecided = usc__malloc(m);
	if (classified) {
		p->envelope = usc__malloc(m * sizeof *p->envelope);
		p->cls = usc__malloc(m);
		p->expected_ulps = usc__malloc(m * sizeof(double));
	}
	if (!p->oracle_mid || !p->oracle_rad || !p->ulp_oracle ||
	    !p->ulp_reference || !p->undecided ||
	    (classified && (!p->envelope || !p->cls || !p->expected_ulps)))
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

/* A part's elements [base, base + len): nothing decided yet. */
static void part_reset(usc__check_part *p, uint64_t base, size_t len)
{
	p->base = base;
	p->len = len;
	p->tier_decided = 0;
	for (size_t j = 0; j < len; j++) {
		p->oracle_mid[j] = 0;
		p->oracle_rad[j] = 0;
		p->ulp_oracle[j] = NAN;
		p->undecided[j] = 1;
	}
}

/* ------------------------------------------------------------ the run */

typedef usc__check_run check_run;

/* An evaluator of the computation in a domain, bound to the inputs. */
static usc_status make_eval(check_run *c, usc_eval_domain domain,
			    unsigned long prec, usc_eval **out,
			    usc_error *err)
{
	usc_eval_options o = usc_eval_options_default();
	usc_status st;

	o.domain = domain;
	o.reduce_order = c->req->reduce_order;
	o.tile_elements = c->req->tile_elements;
	o.profile = c->req->profile;
	if (domain == USC_DOMAIN_ORACLE) {
		o.oracle_precision = prec;
		o.quantize = c->req->quantize;
	}
	st = usc_eval_create_computation(c->comp, &o, out, err);
	if (st != USC_OK && err && c->req->hlo_path) {
		/* The evaluator names the line; the file is known here. */
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err->message);
		return usc__fail(err, st, "%s: %s", c->req->hlo_path, msg);
	}
	if (st == USC_OK && c->in)
		st = usc_eval_bind_all(*out, (const usc_tensor *const *)c->in,
				       c->r->input_count, err);
	if (st == USC_OK && c->devices) {
		bool follows;

		st = usc__eval_follow_device(*out, c->devices,
					     c->r->output_count, &follows);
	}
	return st;
}

/* A stream over the current piece: its range when streaming. */
static usc__eval_stream piece_stream(const check_run *c)
{
	usc__eval_stream s;

	memset(&s, 0, sizeof s);
	if (c->ranges) {
		s.first = c->parts[0].base;
		s.count = c->parts[0].len ? c->parts[0].len : 1;
		s.no_tensor = true;
	}
	return s;
}

/*
 * The part of output i that holds the element an evaluator hands over as
 * its element k, or NULL; *j receives its index in the part.
 */
static usc__check_part *part_of(check_run *c, size_t i, uint64_t k,
				size_t *j)
{
	usc__check_part *p;

	if (i >= c->r->output_count)
		return NULL;
	p = &c->parts[i];
	k += p->visit_base;
	if (k < p->base || k - p->base >= p->len)
		return NULL;
	*j = (size_t)(k - p->base);
	return p;
}

/* A streamed piece of the reference run: its encodings into the part. */
static usc_status ref_visit(void *ctx, size_t i, size_t first, size_t count,
			    const void *values, usc_dtype t, usc_error *err)
{
	check_run *c = ctx;
	const usc__domain_ops *dom = usc__eval_domain(c->ref);
	size_t j0;
	usc__check_part *p0 = count ? part_of(c, i, first, &j0) : NULL;

	/*
	 * A run of values that lies in the part whole (a tile of a streamed
	 * piece, as a rule) goes through the domain's array entry straight
	 * into the part's encodings: the same encodings, without a call and
	 * a tensor look-up per element.
	 */
	if (p0 && dom->to_output_array && j0 + count <= p0->len &&
	    t == usc_tensor_dtype(p0->reference) &&
	    usc_format_of(t)->kind != USC_KIND_COMPLEX) {
		size_t w = (size_t)usc_format_of(t)->container_bytes;

		return dom->to_output_array(
			usc__eval_domain_state(c->ref), t, values, count,
			(unsigned char *)usc_tensor_data(p0->reference) +
				j0 * w,
			err);
	}
	for (size_t n = 0; n < count; n++) {
		const void *v = (const unsigned char *)values +
				n * dom->value_size;
		usc__check_part *p;
		uint64_t bits;
		size_t j;
		usc_status st;

		p = part_of(c, i, first + n, &j);
		if (!p)
			continue;
		st = dom->to_output(usc__eval_domain_state(c->ref), t, v,
				    &bits, NULL, err);
		if (st != USC_OK)
			return st;
		usc_tensor_set_bits(p->reference, j, bits);
	}
	return USC_OK;
}

/*
 * One tile (or one whole output) of the tier: every float element whose
 * error it decides is final; the rest stay undecided for the oracle.
 */
static usc_status tier_visit(void *ctx, size_t i, size_t first, size_t count,
			     const void *values, usc_dtype t, usc_error *err)
{
	check_run *c = ctx;
	const usc__rn_format *rf;
	size_t w = 0; /* the device tensor's container bytes */
	size_t j0;
	usc__check_part *p0;
	usc_status st;

	if (!usc_dtype_is_float(t))
		return USC_OK;
	/*
	 * A run of values that lies in the part whole (a tile, or a whole
	 * output) is decided over arrays: no call per element.
	 */
	p0 = count ? part_of(c, i, first, &j0) : NULL;
	if (p0 && j0 + count <= p0->len)
		return usc__check_tier_decide(p0, j0, values, count, t,
					      &resolution, err);
	rf = usc__rn_format_of(t);
	for (size_t n = 0; n < count; n++) {
		const usc__tier_value *v =
			(const usc__tier_value *)((const unsigned char *)values +
						  n * usc__domain_tier
							      .value_size);
		usc__check_part *p;
		usc__oracle_enclosure e;
		usc__oracle_ulp_error ue;
		uint64_t d;
		size_t j;

		p = part_of(c, i, first + n, &j);
		if (!p)
			continue;
		if (!w)
			w = (size_t)usc_format_of(usc_tensor_dtype(p->o->device))
				    ->container_bytes;
		d = usc__dom_get_enc(usc_tensor_cdata(p->o->device), w,
				     (size_t)(p->base + j));
		st = usc__tier_decide_ulp_error_rn(v, t, rf, d, &resolution,
						   &ue, err);
		if (st != USC_OK)
			return st;
		if (!ue.decided)
			continue;
		/*
		 * The enclosure to_output would give, without its rounding
		 * decision, which nothing here reads.
		 */
		usc__tier_enclosure(v, &e);
		usc__check_set_enclosure(p, j, &e);
		p->ulp_oracle[j] = ue.mid;
		p->undecided[j] = 0;
		p->tier_decided++;
	}
	return USC_OK;
}

/*
 * The fast tier over the piece, streamed: each tile's values are decided
 * as soon as they exist and then dropped, so the tier's values never
 * exist whole (docs/evaluator.md, "Tiles").  The tier only accelerates: a
 * kernel it cannot evaluate at all (an op it does not bound) is left to
 * the oracle whole, its partial decisions forgotten.
 */
static usc_status run_tier(check_run *c, bool first_piece, usc_error *err)
{
	usc__eval_stream s = piece_stream(c);
	usc_status st;

	/* The tier does not model explicit quantization (docs/tier.md). */
	if (c->req->strict_oracle || c->req->quantize || c->tier_off)
		return USC_OK;
	s.visit = tier_visit;
	s.ctx = c;
	st = c->tier ? USC_OK
		     : make_eval(c, USC_DOMAIN_TIER, 0, &c->tier, err);
	if (st == USC_OK)
		st = usc__eval_run_stream(c->tier, &s, err);
	if (st == USC_OK || st == USC_ENOMEM)
		return st;
	usc_error_clear(err);
	for (size_t i = 0; i < c->r->output_count; i++)
		part_reset(&c->parts[i], c->parts[i].base, c->parts[i].len);
	c->tier_off = true;
	if (!first_piece)
		c->restart = true;
	return USC_OK;
}

/* The state of one oracle run's visitor. */
typedef struct oracle_ctx {
	check_run *c;
	usc_eval *ev;
	uint64_t left; /* elements still undecided after the run */
} oracle_ctx;

/*
 * One tile (or one whole output) of an oracle run: its values taken for
 * the elements still undecided.
 */
static usc_status oracle_visit(void *ctx, size_t i, size_t first,
			       size_t count, const void *values, usc_dtype t,
			       usc_error *err)
{
	oracle_ctx *oc = ctx;
	usc_status st;

	for (size_t n = 0; n < count; n++) {
		const usc__oracle_value *v =
			(const usc__oracle_value *)((const unsigned char *)values +
						    n * usc__domain_oracle
								.value_size);
		usc__check_part *p;
		usc__oracle_enclosure e;
		uint64_t bits, d;
		size_t j;

		p = part_of(oc->c, i, first + n, &j);
		if (!p)
			continue;
		p->o->oracle_elements++;
		if (!p->undecided[j])
			continue;
		usc_tensor_get_bits(p->o->device, p->base + j, &d);
		st = usc__domain_oracle.to_output(usc__eval_domain_state(oc->ev),
						  t, v, &bits, &e, err);
		if (st != USC_OK)
			return st;
		usc__check_set_enclosure(p, j, &e);
		if (usc_dtype_is_float(t)) {
			usc__oracle_ulp_error ue;

			st = usc__oracle_decide_ulp_error(v, t, d, &resolution,
							  &ue, err);
			if (st != USC_OK)
				return st;
			p->ulp_oracle[j] = ue.mid;
			p->undecided[j] = !ue.decided;
		} else if (e.kind == USC__ORC_FINITE && e.lo == e.hi) {
			int64_t ds;
			uint64_t du;

			usc_decode_int(t, d, &ds, &du);
			p->ulp_oracle[j] =
				(usc_format_of(t)->kind == USC_KIND_SINT
					 ? (double)ds
					 : (double)du) -
				e.lo;
			p->undecided[j] = 0;
		}
		if (p->undecided[j])
			oc->left++;
	}
	return USC_OK;
}

/* Whether any element of the piece still waits for the oracle. */
static bool any_undecided(const check_run *c)
{
	for (size_t i = 0; i < c->r->output_count; i++)
		for (size_t j = 0; j < c->parts[i].len; j++)
			if (c->parts[i].undecided[j])
				return true;
	return false;
}

/*
 * The oracle runs over the piece, at rising precision while elements
 * stay undecided (Ziv).  Each run evaluates only the tiles that hold an
 * undecided element (a loop computation; any other kernel is evaluated
 * whole) and takes its values tile by tile.
 */
static usc_status run_oracle(check_run *c, usc_error *err)
{
	const uint8_t **wanted;
	usc_status st = USC_OK;

	if (!any_undecided(c))
		return USC_OK;
	wanted = usc__calloc(c->r->output_count ? c->r->output_count : 1,
			     sizeof *wanted);
	if (!wanted)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->r->output_count; i++)
		wanted[i] = c->parts[i].undecided;
	for (size_t level = 0; level < c->oracle_count; level++) {
		usc__eval_stream s = piece_stream(c);
		oracle_ctx oc;

		if (!c->oracle[level]) {
			st = make_eval(c, USC_DOMAIN_ORACLE,
				       c->oracle_prec[level], &c->oracle[level],
				       err);
			if (st != USC_OK)
				break;
		}
		memset(&oc, 0, sizeof oc);
		oc.c = c;
		oc.ev = c->oracle[level];
		s.visit = oracle_visit;
		s.ctx = &oc;
		s.wanted = wanted;
		st = usc__eval_run_stream(oc.ev, &s, err);
		if (st != USC_OK)
			break;
		if (c->oracle_prec[level] > c->r->oracle_precision)
			c->r->oracle_precision = c->oracle_prec[level];
		if (oc.left == 0)
			break;
	}
	usc__free(wanted);
	return st;
}

/* The precisions of the oracle's runs: 128, 512, ... up to the cap. */
static usc_status oracle_levels(check_run *c, usc_error *err)
{
	unsigned long cap = c->req->oracle_precision_max
				    ? c->req->oracle_precision_max
				    : ORACLE_PREC_CAP_DEFAULT;
	unsigned long prec = ORACLE_PREC_START < cap ? ORACLE_PREC_START : cap;
	size_t n = 1;

	for (unsigned long p = prec; p < cap;
	     p = p * ORACLE_PREC_GROWTH > cap ? cap : p * ORACLE_PREC_GROWTH)
		n++;
	c->oracle_prec = usc__calloc(n, sizeof *c->oracle_prec);
	c->oracle = usc__calloc(n, sizeof *c->oracle);
	if (!c->oracle_prec || !c->oracle)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	c->oracle_count = n;
	for (size_t i = 0; i < n; i++) {
		c->oracle_prec[i] = prec;
		prec = prec * ORACLE_PREC_GROWTH > cap ? cap
						       : prec * ORACLE_PREC_GROWTH;
	}
	return USC_OK;
}

/*
 * Evaluates the current piece of every output (parts set up): the
 * reference (streamed pieces only: a whole check ran it already), the
 * tier, the oracle for what it leaves, the envelope and the classes.
 */
usc_status usc__check_piece_compute(check_run *c, bool first_piece,
				    usc_error *err)
{
	usc_check_report *r = c->r;
	usc_status st = USC_OK;

	if (c->stream) {
		usc__eval_stream s = piece_stream(c);

		s.visit = ref_visit;
		s.ctx = c;
		st = usc__eval_run_stream(c->ref, &s, err);
	}
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
		st = usc__check_reference_errors(&c->parts[i], err);
	if (st == USC_OK)
		st = run_tier(c, first_piece, err);
	if (st == USC_OK && !c->restart)
		st = run_oracle(c, err);
	if (st == USC_OK && !c->restart && r->classified) {
		bool refused = false;

		if (c->env_refused) {
			usc__check_envelope_unknown(c->parts, r->output_count);
		} else {
			st = c->env ? USC_OK
				    : make_eval(c, USC_DOMAIN_ENVELOPE, 0,
						&c->env, err);
			usc__eval_stream range = piece_stream(c);

			if (st == USC_OK)
				st = usc__check_envelope(
					c->env, c->parts, r->output_count,
					range.first, range.count, &refused,
					&c->why, err);
		}
		if (refused) {
			c->env_refused = true;
			if (!first_piece)
				c->restart = true;
		}
		for (size_t i = 0; st == USC_OK && i < r->output_count; i++)
			st = usc__check_classify_part(c->req, &c->parts[i],
						      err);
	}
	/* What the fold needs of every element, on this piece's thread. */
	for (size_t i = 0; st == USC_OK && !c->restart && i < r->output_count;
	     i++)
		usc__check_part_summarize(c, &c->parts[i], i);
	return st;
}

/* Checks the current piece: computed, then folded. */
static usc_status check_piece(check_run *c, bool first_piece, usc_error *err)
{
	usc_status st = usc__check_piece_compute(c, first_piece, err);

	if (st != USC_OK || c->restart)
		return st;
	return usc__check_piece_fold(c, c->parts, err);
}

/*
 * Fast reference hook: adds the reference evaluator's counts of functions
 * and MPFR escalations to the report, before the evaluator goes.
 */
static void ref_counts_take(check_run *c)
{
	usc__reference_fast_counts k;

	if (!c->ref ||
	    usc__eval_domain(c->ref) != &usc__domain_reference_fast)
		return;
	usc__reference_fast_get_counts(usc__eval_domain_state(c->ref), &k);
	c->r->reference_functions += k.functions;
	c->r->reference_escalated += k.escalated;
}

/* Frees what a run holds beyond its report. */
static void run_clear(check_run *c)
{
	ref_counts_take(c);
	for (size_t i = 0; c->parts && i < c->r->output_count; i++)
		usc__check_part_free(&c->parts[i]);
	usc__free(c->parts);
	for (size_t i = 0; c->acc && i < 2 * c->r->output_count; i++)
		usc_results_stats_acc_free(c->acc[i]);
	usc__free(c->acc);
	usc__free(c->why_out);
	usc__free(c->devices);
	usc_eval_destroy(c->ref);
	usc_eval_destroy(c->tier);
	usc__check_envelope_tally(c->r, c->env);
	usc_eval_destroy(c->env);
	for (size_t i = 0; c->oracle && i < c->oracle_count; i++)
		usc_eval_destroy(c->oracle[i]);
	usc__free(c->oracle);
	usc__free(c->oracle_prec);
	usc_results_abort(c->w);
}

/* Reads device output i as the kernel's output spec says. */
static usc_status read_device(check_run *c, size_t i, usc_tensor_spec spec,
			      usc_error *err)
{
	char what[64];
	usc_status st;

	snprintf(what, sizeof what, "output %zu of the kernel", i);
	spec.what = what;
	if (c->req->device_tensors)
		st = copy_source(c->req->device_tensors[i], &spec,
				 &c->r->outputs[i].device, err);
	else
		st = read_source(c->req, c->req->devices[i], &spec,
				 &c->r->outputs[i].device, err);
	/* The statistics' room for every element at once: no doublings. */
	for (size_t k = 2 * i; st == USC_OK && k < 2 * i + 2; k++)
		st = usc__results_stats_acc_reserve(
			c->acc[k], usc_tensor_count(c->r->outputs[i].device),
			err);
	return st;
}

/* The report's outputs, once their count is known. */
static usc_status outputs_alloc(check_run *c, size_t n, usc_error *err)
{
	usc_check_report *r = c->r;

	if (c->req->device_count != n)
		return usc__fail(err, USC_EINVAL,
				 "%s: the kernel has %zu output%s, %zu device "
				 "file%s given",
				 c->req->hlo_path, n, n == 1 ? "" : "s",
				 c->req->device_count,
				 c->req->device_count == 1 ? " was" : "s were");
	r->outputs = usc__calloc(n ? n : 1, sizeof *r->outputs);
	c->parts = usc__calloc(n ? n : 1, sizeof *c->parts);
	c->acc = usc__calloc(n ? 2 * n : 1, sizeof *c->acc);
	c->why_out = usc__calloc(n ? n : 1, sizeof *c->why_out);
	if (!r->outputs || !c->parts || !c->acc || !c->why_out)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->output_count = n;
	for (size_t i = 0; i < n; i++) {
		c->parts[i].o = &r->outputs[i];
		if (c->req->worst) {
			r->outputs[i].worst = usc__calloc(
				c->req->worst, sizeof *r->outputs[i].worst);
			if (!r->outputs[i].worst)
				return usc__fail(err, USC_ENOMEM,
						 "out of memory");
		}
	}
	for (size_t i = 0; i < 2 * n; i++) {
		usc_status st = usc_results_stats_acc_new(&c->acc[i], err);

		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

/*
 * An unstable sort or TopK whose results are outputs takes the device's
 * order among equal elements (docs/evaluator.md, "Sort order"): the
 * reference runs again, given the device's outputs, and so do the other
 * domains' reference runs, which make_eval gives them to.
 */
static usc_status follow_device(check_run *c, size_t n, usc_error *err)
{
	bool follows = false;
	usc_status st;

	c->devices = usc__calloc(n ? n : 1, sizeof *c->devices);
	if (!c->devices)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		c->devices[i] = c->r->outputs[i].device;
	st = usc__eval_follow_device(c->ref, c->devices, n, &follows);
	if (st != USC_OK || !follows)
		return st;
	if (usc__eval_domain(c->ref) == &usc__domain_reference_fast) {
		usc__reference_fast_counts k;

		/*
		 * The report counts one reference run: ref_counts_take adds
		 * the evaluator's totals, which will hold both (uint64_t
		 * wraps back).
		 */
		usc__reference_fast_get_counts(usc__eval_domain_state(c->ref),
					       &k);
		c->r->reference_functions -= k.functions;
		c->r->reference_escalated -= k.escalated;
	}
	st = usc_eval_run(c->ref, err);
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc_tensor_destroy(c->parts[i].reference);
		c->parts[i].reference = NULL;
		st = usc_eval_take_output(c->ref, i, &c->parts[i].reference,
					  err);
	}
	return st;
}

/*
 * The whole check: the reference run first (its outputs fix the count,
 * types and shapes the device files must have), then every output as one
 * piece, its arrays kept in the report.
 */
static usc_status check_whole(check_run *c, usc_error *err)
{
	usc_check_report *r = c->r;
	usc_status st;
	size_t n;

	st = usc_eval_run(c->ref, err);
	if (st != USC_OK && err && c->req->hlo_path) {
		/* A run's error (a loop over its bound) names the line. */
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err->message);
		return usc__fail(err, st, "%s: %s", c->req->hlo_path, msg);
	}
	if (st != USC_OK)
		return st;
	n = usc_eval_output_count(c->ref);
	st = outputs_alloc(c, n, err);
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc__check_part *p = &c->parts[i];

		st = usc_eval_take_output(c->ref, i, &p->reference, err);
		if (st == USC_OK)
			st = read_device(c, i, usc_tensor_spec_of(p->reference),
					 err);
		if (st == USC_OK)
			st = usc__check_part_alloc(
				p, (size_t)usc_tensor_count(p->reference),
				r->classified, c->req->worst, false, err);
		if (st == USC_OK)
			part_reset(p, 0, (size_t)usc_tensor_count(p->reference));
	}
	if (st == USC_OK)
		st = follow_device(c, n, err);
	if (st == USC_OK)
		st = check_piece(c, true, err);
	/* The arrays become the report's. */
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc__check_part *p = &c->parts[i];
		usc_check_output *o = &r->outputs[i];

		o->reference = p->reference;
		o->oracle_mid = p->oracle_mid;
		o->oracle_rad = p->oracle_rad;
		o->ulp_oracle = p->ulp_oracle;
		o->ulp_reference = p->ulp_reference;
		o->undecided = p->undecided;
		o->envelope = p->envelope;
		o->cls = p->cls;
		o->expected_ulps = p->expected_ulps;
		usc__free(p->worst);
		memset(p, 0, sizeof *p);
	}
	return st;
}

/* Rows [r0, r0 + n) of a tensor whose leading dimension is the rows. */
static usc_status slice_rows(const usc_tensor *t, int64_t r0, int64_t n,
			     usc_tensor **out, usc_error *err)
{
	int64_t dims[USC_TENSOR_MAX_RANK];
	size_t rank = usc_tensor_rank(t), row;
	usc_status st;

	memcpy(dims, usc_tensor_dims(t), rank * sizeof *dims);
	row = usc_tensor_nbytes(t) / (size_t)dims[0];
	dims[0] = n;
	st = usc_tensor_create(usc_tensor_dtype(t), rank, dims, out, err);
	if (st == USC_OK)
		memcpy(usc_tensor_data(*out),
		       (const unsigned char *)usc_tensor_cdata(t) +
			       (size_t)r0 * row,
		       (size_t)n * row);
	return st;
}

size_t usc__check_piece_count(const check_run *c)
{
	if (c->ranges)
		return (size_t)((c->total + c->piece - 1) / c->piece);
	return (size_t)((c->rows + c->block - 1) / c->block);
}

usc_status usc__check_piece_setup(check_run *c, size_t k, usc_error *err)
{
	usc_check_report *r = c->r;
	usc_status st = USC_OK;
	int64_t r0, nb;
	int kern;

	if (c->ranges) {
		uint64_t first = (uint64_t)k * c->piece;

		part_reset(&c->parts[0], first,
			   (size_t)(c->total - first < c->piece
					    ? c->total - first
					    : c->piece));
		/* A worker's run makes its own reference evaluator. */
		return c->ref ? USC_OK
			      : make_eval(c, USC_DOMAIN_REFERENCE, 0, &c->ref,
					  err);
	}
	/*
	 * A block of rows: its kernel, on its rows.  The evaluators of the
	 * run's previous block serve again when it had the same kernel: an
	 * evaluator borrows its inputs and reads them at every run, so the
	 * block's rows are copied into the same input tensors, and nothing
	 * is allocated, planned or first touched again per block.
	 */
	r0 = (int64_t)k * c->block;
	nb = c->rows - r0 < c->block ? c->rows - r0 : c->block;
	kern = nb == c->block ? 1 : 2;
	if (c->row_evals != kern) {
		usc__check_evals_clear(c);
		c->comp = usc_hlo_file_module(c->row_kernels[kern - 1], 0)
				  ->entry;
	}
	for (size_t i = 0; st == USC_OK && i < r->input_count; i++) {
		const usc_tensor *t = r->inputs[i];
		usc_tensor *u = c->row_in[i];

		if (!(usc_tensor_rank(t) >= 1 &&
		      usc_tensor_dims(t)[0] == c->rows)) {
			usc_tensor_destroy(u != t ? u : NULL);
			c->row_in[i] = r->inputs[i];
		} else if (u && u != t && usc_tensor_dims(u)[0] == nb) {
			size_t row = usc_tensor_nbytes(t) / (size_t)c->rows;

			memcpy(usc_tensor_data(u),
			       (const unsigned char *)usc_tensor_cdata(t) +
				       (size_t)r0 * row,
			       (size_t)nb * row);
		} else {
			usc_tensor_destroy(u != t ? u : NULL);
			c->row_in[i] = NULL;
			st = slice_rows(t, r0, nb, &c->row_in[i], err);
			/* A new tensor: evaluators bound to the old one go. */
			if (c->row_evals == kern) {
				usc__check_evals_clear(c);
				c->comp = usc_hlo_file_module(
						  c->row_kernels[kern - 1], 0)
						  ->entry;
			}
		}
	}
	c->in = c->row_in;
	if (st == USC_OK && !c->ref)
		st = make_eval(c, USC_DOMAIN_REFERENCE, 0, &c->ref, err);
	c->row_evals = st == USC_OK ? kern : 0;
	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		part_reset(&c->parts[i], (uint64_t)r0 * c->row_per[i],
			   (size_t)((uint64_t)nb * c->row_per[i]));
		c->parts[i].visit_base = c->parts[i].base;
	}
	return st;
}

/*
 * Every piece of a streamed check in order, on the calling thread or on
 * c->threads threads (src/analyze/check_threads.c).
 */
static usc_status run_pieces(check_run *c, usc_error *err)
{
	size_t n = usc__check_piece_count(c);
	usc_status st = USC_OK;

	if (c->threads > 1 && n > 1)
		return usc__check_pieces_threaded(c, err);
	for (size_t k = 0; st == USC_OK && k < n; k++) {
		st = usc__check_piece_setup(c, k, err);
		if (st == USC_OK)
			st = check_piece(c, k == 0, err);
		if (c->restart)
			break;
	}
	return st;
}

/*
 * The streamed check of a kernel whose one output is made tile by tile:
 * piece after piece of the output, every domain evaluating only that
 * piece's tiles, its figures folded and written and then dropped.
 */
static usc_status check_streamed(check_run *c, usc_error *err)
{
	usc_check_report *r = c->r;
	const usc_hlo_shape *shape = &r->computation->root->shape;
	usc__check_part *p;
	usc_tensor_spec spec;
	uint64_t n;
	usc_status st;
	int64_t dim;

	st = outputs_alloc(c, 1, err);
	if (st != USC_OK)
		return st;
	memset(&spec, 0, sizeof spec);
	spec.dtype = shape->dtype;
	spec.rank = shape->rank;
	spec.dims = shape->dims;
	st = read_device(c, 0, spec, err);
	if (st != USC_OK)
		return st;
	p = &c->parts[0];
	n = usc_tensor_count(r->outputs[0].device);
	dim = (int64_t)c->piece;
	st = usc_tensor_create(shape->dtype, 1, &dim, &p->reference, err);
	if (st == USC_OK)
		st = usc__check_part_alloc(p, c->piece, r->classified,
					   c->req->worst,
					   c->req->results_path != NULL, err);
	if (st == USC_OK && c->req->results_path)
		st = usc__check_stream_begin_file(c, err);
	c->total = n;
	if (st == USC_OK)
		st = run_pieces(c, err);
	return st;
}

/* The leaves of a shape, in order (tuple outputs flattened). */
static size_t shape_leaves(const usc_hlo_shape *s, const usc_hlo_shape **out,
			   size_t n, size_t cap)
{
	if (s->kind != USC_HLO_SHAPE_TUPLE) {
		if (n < cap)
			out[n] = s;
		return n + 1;
	}
	for (size_t i = 0; i < s->tuple_count; i++)
		n = shape_leaves(&s->tuple[i], out, n, cap);
	return n;
}

/* Rows per block: as many as fill about `want` elements of output 0. */
static int64_t rows_block(const usc_check_report *r, int64_t rows,
			  size_t want)
{
	const usc_hlo_shape *leaf[1] = {NULL};
	int64_t per;

	shape_leaves(&r->computation->root->shape, leaf, 0, 1);
	if (!leaf[0])
		return rows;
	per = usc_hlo_shape_elements(leaf[0]) / rows;
	return per <= 0 || (int64_t)want / per < 1 ? 1 : (int64_t)want / per;
}

/* Destroys the evaluators of a run (a new block kernel needs new ones). */
void usc__check_evals_clear(check_run *c)
{
	c->row_evals = 0;
	ref_counts_take(c);
	usc_eval_destroy(c->ref);
	usc_eval_destroy(c->tier);
	usc__check_envelope_tally(c->r, c->env);
	usc_eval_destroy(c->env);
	c->ref = c->tier = c->env = NULL;
	for (size_t i = 0; i < c->oracle_count; i++) {
		usc_eval_destroy(c->oracle[i]);
		c->oracle[i] = NULL;
	}
}

/*
 * The streamed check of a kernel that splits into rows
 * (src/analyze/check_rows.c): block after block of `block` rows, each
 * evaluated in every domain by the kernel of one block on those rows of
 * the row-shaped inputs (the others whole), its figures folded and
 * written and then dropped.
 */
static usc_status check_rows(check_run *c, int64_t rows, int64_t block,
			     usc_hlo_file *kernels[2], usc_error *err)
{
	usc_check_report *r = c->r;
	const usc_hlo_shape *leaf[64] = {NULL};
	usc_tensor **in = NULL;
	uint64_t *per = NULL;
	size_t n;
	usc_status st;

	n = shape_leaves(&r->computation->root->shape, leaf, 0, 64);
	if (n > 64) {
		c->stream = false;
		return check_whole(c, err);
	}
	st = outputs_alloc(c, n, err);
	per = usc__calloc(n ? n : 1, sizeof *per);
	in = usc__calloc(r->input_count ? r->input_count : 1, sizeof *in);
	if (st == USC_OK && (!per || !in))
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		usc__check_part *p = &c->parts[i];
		usc_tensor_spec spec;
		int64_t dim;

		memset(&spec, 0, sizeof spec);
		spec.dtype = leaf[i]->dtype;
		spec.rank = leaf[i]->rank;
		spec.dims = leaf[i]->dims;
		st = read_device(c, i, spec, err);
		per[i] = usc_tensor_count(r->outputs[i].device) / (uint64_t)rows;
		dim = block * (int64_t)per[i];
		if (st == USC_OK)
			st = usc_tensor_create(leaf[i]->dtype, 1, &dim,
					       &p->reference, err);
		if (st == USC_OK)
			st = usc__check_part_alloc(
				p, (size_t)dim, r->classified, c->req->worst,
				c->req->results_path != NULL, err);
	}
	if (st == USC_OK && c->req->results_path)
		st = usc__check_stream_begin_file(c, err);
	c->rows = rows;
	c->block = block;
	c->row_kernels = kernels;
	c->row_per = per;
	c->row_in = in;
	if (st == USC_OK)
		st = run_pieces(c, err);
	usc__check_evals_clear(c);
	c->comp = r->computation;
	c->in = r->inputs;
	c->row_in = NULL;
	for (size_t k = 0; in && k < r->input_count; k++)
		if (in[k] != r->inputs[k])
			usc_tensor_destroy(in[k]);
	usc__free(in);
	usc__free(per);
	return st;
}

/*
 * The kernels of a block of `block` rows and of the shorter last block
 * (NULL when the rows divide).  A kernel whose copy cannot be made to
 * verify is left whole: *ok false, no error.
 */
static usc_status rows_kernels(const usc_hlo_module *m, int64_t rows,
			       int64_t block, usc_hlo_file *kernels[2],
			       bool *ok, usc_error *err)
{
	usc_status st;

	*ok = false;
	st = usc__check_rows_module(m, rows, block, &kernels[0], err);
	if (st == USC_OK && rows % block)
		st = usc__check_rows_module(m, rows, rows % block, &kernels[1],
					    err);
	if (st == USC_OK) {
		*ok = true;
		return USC_OK;
	}
	usc_hlo_file_destroy(kernels[0]);
	usc_hlo_file_destroy(kernels[1]);
	kernels[0] = kernels[1] = NULL;
	if (st == USC_ENOMEM)
		return st;
	usc_error_clear(err);
	return USC_OK;
}

/* The side job of the percentiles: the result file's rows are all in. */
static usc_status rows_done(void *ctx, usc_error *err)
{
	return usc__results_rows_done(ctx, err);
}

/*
 * The summaries from what the pieces folded; the verdict.  A streamed
 * result file's last chunks are written meanwhile.
 */
static usc_status finish(check_run *c, usc_error *err)
{
	usc_check_report *r = c->r;
	usc_results_stats **sums;
	usc_status st;

	sums = usc__calloc(r->output_count ? 2 * r->output_count : 1,
			   sizeof *sums);
	if (!sums)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->output_count; i++) {
		usc_check_output *o = &r->outputs[i];

		o->summary.count = usc_tensor_count(o->device);
		c->why.total += o->summary.count;
		sums[2 * i] = &o->summary.oracle;
		sums[2 * i + 1] = &o->summary.reference;
	}
	/* The percentiles, on the check's threads (check_threads.c). */
	st = usc__check_stats_finish(c->acc, sums, 2 * r->output_count,
				     c->threads, c->w ? rows_done : NULL,
				     c->w, err);
	usc__free(sums);
	/* Over the outputs in order: a later one wins with a heavier class. */
	for (size_t i = 0; st == USC_OK && r->classified && i < r->output_count;
	     i++) {
		const usc__check_reason *w = &c->why_out[i];

		if (w->have &&
		    (!c->why.have || usc__check_class_rank(w->el.cls) >
					     usc__check_class_rank(c->why.el.cls))) {
			c->why.have = true;
			c->why.output = i;
			c->why.el = w->el;
			c->why.expected_ulps = w->expected_ulps;
		}
	}
	if (st == USC_OK && r->classified)
		usc__check_verdict(r, &c->why);
	return st;
}

/* One check, streamed when asked and possible; see usc_check_run. */
static usc_status check_once(const usc_check_request *req, bool stream,
			     size_t threads, usc_check_report **out,
			     bool *restart, bool *serial, usc_error *err)
{
	usc_check_report *r;
	check_run c;
	usc_status st;
	bool streams = false;
	int64_t rows = 0, block = 0;
	size_t want = req->stream_piece ? req->stream_piece
					: USC__CHECK_PIECE_DEFAULT;

	*out = NULL;
	*restart = false;
	*serial = false;
	r = usc__calloc(1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memset(&c, 0, sizeof c);
	c.req = req;
	c.r = r;
	c.threads = threads;
	r->hlo_path = usc__strdup(req->hlo_path);
	r->fusion = usc__strdup(req->fusion);
	if (!r->hlo_path || (req->fusion && !r->fusion)) {
		usc_check_report_destroy(r);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (req->profile) {
		r->profile = *req->profile;
		r->classified = true;
	}
	st = load_kernel(req, r, err);
	c.comp = r->computation;
	if (st == USC_OK)
		st = oracle_levels(&c, err);
	if (st == USC_OK)
		st = make_eval(&c, USC_DOMAIN_REFERENCE, 0, &c.ref, err);
	if (st == USC_OK)
		st = read_inputs(req, c.ref, r, err);
	c.in = r->inputs;
	if (st == USC_OK)
		st = bind_all(c.ref, r, err);
	if (st == USC_OK && stream)
		st = usc__eval_streams(c.ref, &streams, &c.tile, err);
	if (st == USC_OK && stream && !streams)
		st = usc__check_rows(usc_hlo_file_module(r->kernel, 0), &rows,
				     err);
	if (st == USC_OK && streams) {
		c.stream = true;
		c.ranges = true;
		c.piece = want < c.tile ? c.tile : want - want % c.tile;
		st = check_streamed(&c, err);
	} else if (st == USC_OK && rows > 0 &&
		   (block = rows_block(r, rows, want)) < rows) {
		usc_hlo_file *kernels[2] = {NULL, NULL};
		bool ok = false;

		st = rows_kernels(usc_hlo_file_module(r->kernel, 0), rows,
				  block, kernels, &ok, err);
		c.stream = ok;
		if (st == USC_OK)
			st = ok ? check_rows(&c, rows, block, kernels, err)
				: check_whole(&c, err);
		usc_hlo_file_destroy(kernels[0]);
		usc_hlo_file_destroy(kernels[1]);
	} else if (st == USC_OK) {
		st = check_whole(&c, err);
	}
	if (c.serial)
		c.restart = false;
	if (st == USC_OK && !c.restart && !c.serial)
		st = finish(&c, err);
	if (st == USC_OK && !c.restart && !c.serial && c.w)
		st = usc__check_stream_end_file(&c, err);
	*restart = c.restart;
	*serial = c.serial;
	run_clear(&c);
	if (st != USC_OK || c.restart || c.serial) {
		usc_check_report_destroy(r);
		return st;
	}
	if (c.stream)
		r->streamed = true;
	*out = r;
	return USC_OK;
}

usc_status usc_check_run(const usc_check_request *req,
			 usc_check_report **out, usc_error *err)
{
	usc_status st;
	bool restart, serial;

	if (!req || !req->hlo_path || !out ||
	    (req->input_count && !req->inputs && !req->input_tensors) ||
	    (req->device_count && !req->devices && !req->device_tensors))
		return usc__fail(err, USC_EINVAL, "incomplete check request");
	*out = NULL;
	st = check_once(req, req->stream, req->threads, out, &restart,
			&serial, err);
	/*
	 * Threads, when piece 0 changed what the later pieces do (which
	 * they had begun without knowing): again on one thread, which
	 * carries it into every piece.
	 */
	if (st == USC_OK && serial)
		st = check_once(req, req->stream, 1, out, &restart, &serial,
				err);
	/*
	 * A refusal after the first piece: every element must see it, as
	 * a whole check sees it, so the check runs again whole (its result
	 * file from scratch: the streamed one was never completed).
	 */
	if (st == USC_OK && restart)
		st = check_once(req, false, 1, out, &restart, &serial, err);
	/* A streamed check wrote its result file as it went. */
	if (st == USC_OK && req->results_path && !(*out)->streamed)
		st = usc_check_write_ex(*out, req->results_path,
					req->results_append,
					req->results_force ? USC_RESULTS_FORCE
							   : 0,
					err);
	if (st != USC_OK && *out) {
		usc_check_report_destroy(*out);
		*out = NULL;
	}
	return st;
}
