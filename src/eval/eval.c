/*
 * The evaluator's public API: creating an evaluator for a computation in
 * a domain, binding the parameters, running (streamed when the entry is a
 * loop computation, stream.c; whole otherwise, walk.c) and handing out
 * the outputs.  The files of src/eval/ are listed in docs/evaluator.md.
 */
#include "eval_internal.h"

#include <string.h>

#include "ulpscope/dtype.h"

#include "control.h"
#include "eval_values.h"
#include "../../oracles/oracle.h"
#include "../../oracles/tier.h"
#include "../../oracles/envelope.h"
#include "../../oracles/reference_fast.h"

/* ---------------------------------------------------------------- API */

usc_eval_options usc_eval_options_default(void)
{
	usc_eval_options o;

	memset(&o, 0, sizeof o);
	o.domain = USC_DOMAIN_REFERENCE;
	o.reduce_order = USC_REDUCE_SEQUENTIAL;
	return o;
}

void usc__eval_free_outputs(usc_eval *ev)
{
	size_t i;

	if (!ev->outputs)
		return;
	for (i = 0; i < ev->noutputs; i++)
		usc_tensor_destroy(ev->outputs[i]);
	usc__free(ev->outputs);
	ev->outputs = NULL;
}

void usc_eval_destroy(usc_eval *ev)
{
	if (!ev)
		return;
	usc__eval_free_outputs(ev);
	usc__evalue_clear(ev, &ev->kept);
	usc__eval_keep_clear(ev);
	usc__free(ev->keep);
	usc__free(ev->keep_vals);
	usc__sfn_free_all(ev);
	usc__ctl_free(ev);
	usc__cone_detach(ev);
	/* Last: releasing a buffer above may have left a spare. */
	usc__ebuf_spares_free(ev);
	if (ev->dom && ev->dstate)
		ev->dom->destroy(ev->dstate);
	usc__free(ev->params);
	usc__free(ev->bound);
	usc__free(ev);
}

usc_status usc_eval_create_computation(const usc_hlo_computation *c,
				       const usc_eval_options *opts,
				       usc_eval **out, usc_error *err)
{
	usc_eval *ev;
	usc_status st;
	size_t i;

	if (!c || !out)
		return usc__fail(err, USC_EINVAL, "no computation to evaluate");
	*out = NULL;
	ev = usc__calloc(1, sizeof *ev);
	if (!ev)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	ev->opts = opts ? *opts : usc_eval_options_default();
	if (ev->opts.domain != USC_DOMAIN_REFERENCE &&
	    ev->opts.domain != USC_DOMAIN_ORACLE &&
	    ev->opts.domain != USC_DOMAIN_TIER &&
	    ev->opts.domain != USC_DOMAIN_F64 &&
	    ev->opts.domain != USC_DOMAIN_ENVELOPE) {
		usc__free(ev);
		return usc__fail(err, USC_EINVAL, "unknown domain %d",
				 (int)ev->opts.domain);
	}
	if (ev->opts.reduce_order != USC_REDUCE_SEQUENTIAL &&
	    ev->opts.reduce_order != USC_REDUCE_PAIRWISE) {
		usc__free(ev);
		return usc__fail(err, USC_EINVAL, "unknown reduction order %d",
				 (int)ev->opts.reduce_order);
	}
	ev->dom = ev->opts.domain == USC_DOMAIN_ORACLE ? &usc__domain_oracle
		  : ev->opts.domain == USC_DOMAIN_TIER ? &usc__domain_tier
		  : ev->opts.domain == USC_DOMAIN_F64 ? &usc__domain_f64
		  : ev->opts.domain == USC_DOMAIN_ENVELOPE
			  ? &usc__domain_envelope
			  : &usc__domain_reference;
	/* The fast reference (oracles/reference_fast.h) unless asked not. */
	if (ev->dom == &usc__domain_reference && !ev->opts.reference_mpfr &&
	    !usc__reference_mpfr_from_env())
		ev->dom = &usc__domain_reference_fast;
	ev->comp = c;
	st = ev->dom->create(&ev->dstate, err);
	if (st != USC_OK) {
		ev->dstate = NULL;
		usc_eval_destroy(ev);
		return st;
	}
	if (ev->opts.domain == USC_DOMAIN_ENVELOPE) {
		st = usc__envelope_set_profile(ev->dstate, ev->opts.profile,
					       err);
		if (st != USC_OK) {
			usc_eval_destroy(ev);
			return st;
		}
	}
	if (ev->opts.domain == USC_DOMAIN_ORACLE) {
		usc__oracle_options oo;

		usc__oracle_options_default(&oo);
		if (ev->opts.oracle_precision)
			oo.precision = (mpfr_prec_t)ev->opts.oracle_precision;
		oo.quantize = ev->opts.quantize;
		oo.round_only = ev->opts.round_only;
		oo.round_only_count = ev->opts.round_only_count;
		st = usc__oracle_configure(ev->dstate, &oo, err);
		if (st != USC_OK) {
			usc_eval_destroy(ev);
			return st;
		}
	}
	for (i = 0; i < c->instr_count; i++)
		if (c->instrs[i]->opcode == USC_HLO_OP_PARAMETER &&
		    c->instrs[i]->parameter_number >= 0 &&
		    (size_t)c->instrs[i]->parameter_number + 1 > ev->nparams)
			ev->nparams = (size_t)c->instrs[i]->parameter_number + 1;
	ev->params = usc__calloc(ev->nparams ? ev->nparams : 1,
				 sizeof *ev->params);
	ev->bound = usc__calloc(ev->nparams ? ev->nparams : 1,
				sizeof *ev->bound);
	if (!ev->params || !ev->bound) {
		usc_eval_destroy(ev);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];

		if (in->opcode == USC_HLO_OP_PARAMETER &&
		    in->parameter_number >= 0) {
			if (in->shape.kind != USC_HLO_SHAPE_ARRAY) {
				usc_eval_destroy(ev);
				return usc__eval_fail(err, USC_EUNSUPPORTED, in,
						      "a parameter that is not "
						      "an array");
			}
			ev->params[in->parameter_number] = in;
		}
	}
	for (i = 0; i < ev->nparams; i++)
		if (!ev->params[i]) {
			usc_eval_destroy(ev);
			return usc__fail(err, USC_EINVAL,
					 "computation '%s' lacks parameter "
					 "%zu",
					 c->name, i);
		}
	st = usc__eval_check_computation(ev, c, 0, err);
	if (st != USC_OK) {
		usc_eval_destroy(ev);
		return st;
	}
	ev->noutputs = usc__shape_leaves(&c->root->shape);
	*out = ev;
	return USC_OK;
}

usc_status usc_eval_create(const usc_hlo_module *m,
			   const usc_eval_options *opts, usc_eval **out,
			   usc_error *err)
{
	if (!m || !m->entry)
		return usc__fail(err, USC_EINVAL,
				 "module has no entry computation");
	return usc_eval_create_computation(m->entry, opts, out, err);
}

size_t usc_eval_param_count(const usc_eval *ev)
{
	return ev ? ev->nparams : 0;
}

usc_status usc_eval_param_spec(const usc_eval *ev, size_t i,
			       usc_tensor_spec *spec, usc_error *err)
{
	if (!ev || i >= ev->nparams)
		return usc__fail(err, USC_ERANGE, "no parameter %zu", i);
	spec->dtype = ev->params[i]->shape.dtype;
	spec->rank = ev->params[i]->shape.rank;
	spec->dims = ev->params[i]->shape.dims;
	spec->what = NULL;
	return USC_OK;
}

usc_status usc_eval_bind(usc_eval *ev, size_t i, const usc_tensor *t,
			 usc_error *err)
{
	usc_tensor_spec want, got;
	char ws[256], gs[256];
	bool same;
	size_t d;

	if (!ev || !t)
		return usc__fail(err, USC_EINVAL, "nothing to bind");
	if (i >= ev->nparams)
		return usc__fail(err, USC_ERANGE,
				 "parameter %zu does not exist: the "
				 "computation has %zu",
				 i, ev->nparams);
	usc_eval_param_spec(ev, i, &want, NULL);
	got = usc_tensor_spec_of(t);
	same = want.dtype == got.dtype && want.rank == got.rank;
	for (d = 0; same && d < want.rank; d++)
		same = want.dims[d] == got.dims[d];
	if (!same) {
		usc_tensor_spec_format(&want, ws, sizeof ws);
		usc_tensor_spec_format(&got, gs, sizeof gs);
		return usc__fail(err, USC_EINVAL,
				 "parameter %zu ('%s') expects %s, got %s", i,
				 ev->params[i]->name, ws, gs);
	}
	ev->bound[i] = t;
	return USC_OK;
}

usc_status usc_eval_bind_all(usc_eval *ev, const usc_tensor *const *ts,
			     size_t n, usc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		usc_status st = usc_eval_bind(ev, i, ts[i], err);

		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status load_input(usc_eval *ev, size_t i, usc__evalue *v,
			     usc_error *err)
{
	const usc_tensor *t = ev->bound[i];
	size_t n = (size_t)usc_tensor_count(t), k;
	usc_status st;

	st = usc__evalue_alloc(v, 1, err);
	if (st != USC_OK)
		return st;
	if (usc__array_path(ev->dom->load_array != NULL, t, 0, n)) {
		st = usc__ebuf_new_unset(ev, usc_tensor_dtype(t), n,
					 &v->leaves[0], err);
		if (st == USC_OK)
			st = ev->dom->load_array(ev->dstate,
						 usc_tensor_dtype(t),
						 usc__enc_at(t, 0), n,
						 v->leaves[0]->values, err);
		return st;
	}
	st = usc__ebuf_new(ev, usc_tensor_dtype(t), n, &v->leaves[0], err);
	for (k = 0; st == USC_OK && k < n; k++) {
		uint64_t bits;

		st = usc_tensor_get_bits(t, k, &bits);
		if (st == USC_OK)
			st = ev->dom->load(ev->dstate, usc_tensor_dtype(t),
					   bits, USC__VAL(ev, v->leaves[0], k),
					   err);
		else
			st = usc__fail(err, st, "cannot read parameter %zu", i);
	}
	return st;
}

/* The array leaves of a shape, depth-first. */
static void collect_leaf_shapes(const usc_hlo_shape *s,
				const usc_hlo_shape **out, size_t *n)
{
	size_t i;

	if (s->kind != USC_HLO_SHAPE_TUPLE) {
		out[(*n)++] = s;
		return;
	}
	for (i = 0; i < s->tuple_count; i++)
		collect_leaf_shapes(&s->tuple[i], out, n);
}

/* A run of any computation: every value whole, outputs after the run. */
static usc_status run_whole(usc_eval *ev, const usc__eval_stream *s,
			    usc_error *err)
{
	usc__evalue *args = NULL, result = {0, NULL};
	const usc_hlo_shape **shapes = NULL;
	usc_status st = USC_OK;
	size_t i, n = 0;

	args = usc__calloc(ev->nparams ? ev->nparams : 1, sizeof *args);
	if (!args)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (i = 0; st == USC_OK && i < ev->nparams; i++)
		st = load_input(ev, i, &args[i], err);
	if (st == USC_OK)
		st = usc__eval_computation(ev, ev->comp, args, ev->nparams,
					   &result, err);
	if (st != USC_OK)
		goto done;
	shapes = usc__calloc(ev->noutputs ? ev->noutputs : 1, sizeof *shapes);
	ev->outputs = usc__calloc(ev->noutputs ? ev->noutputs : 1,
				  sizeof *ev->outputs);
	if (!shapes || !ev->outputs) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	collect_leaf_shapes(&ev->comp->root->shape, shapes, &n);
	if (n != result.n) {
		st = usc__fail(err, USC_EINTERNAL,
			       "root has %zu leaves, the result %zu", n,
			       result.n);
		goto done;
	}
	for (i = 0; st == USC_OK && i < n; i++) {
		usc__ebuf *b = result.leaves[i];
		usc_tensor *t = NULL;
		size_t k;

		st = usc_tensor_create(shapes[i]->dtype, shapes[i]->rank,
				       shapes[i]->dims, &t, err);
		if (st != USC_OK)
			break;
		ev->outputs[i] = t;
		k = 0;
		if (usc__array_path(ev->dom->to_output_array != NULL, t, 0,
			       b->count) &&
		    usc_tensor_dtype(t) == b->dtype &&
		    b->count == (size_t)usc_tensor_count(t) &&
		    b->base == 0 && b->len == b->count) {
			st = ev->dom->to_output_array(ev->dstate, b->dtype,
						      b->values, b->count,
						      usc__enc_at_mut(t, 0),
						      err);
			k = b->count;
		}
		for (; st == USC_OK && k < b->count; k++) {
			uint64_t bits;

			st = ev->dom->to_output(ev->dstate, b->dtype,
						USC__VAL(ev, b, k), &bits, NULL,
						err);
			if (st == USC_OK)
				st = usc_tensor_set_bits(t, k, bits);
		}
		ev->last_elements += b->count;
	}
	/* The visitor sees each output whole, wanted or not. */
	for (i = 0; st == USC_OK && s && s->visit && i < n; i++)
		st = s->visit(s->ctx, i, 0, result.leaves[i]->count,
			      result.leaves[i]->values,
			      result.leaves[i]->dtype, err);
	if (st != USC_OK)
		usc__eval_free_outputs(ev);
	if (st == USC_OK) {
		/*
		 * Keep the values for the analysis (eval_values.h): they
		 * exist whole anyway.
		 */
		ev->kept = result;
		result.n = 0;
		result.leaves = NULL;
	}
done:
	if (st != USC_OK)
		ev->last_elements = 0;
	usc__evalue_clear(ev, &result);
	if (args)
		for (i = 0; i < ev->nparams; i++)
			usc__evalue_clear(ev, &args[i]);
	usc__free(args);
	usc__free(shapes);
	return st;
}

usc_status usc__eval_run_stream(usc_eval *ev, const usc__eval_stream *s,
				usc_error *err)
{
	size_t tile, *pmap = NULL, npmap = 0, i;
	const usc_hlo_computation *loop = NULL;
	usc_status st;

	if (!ev)
		return usc__fail(err, USC_EINVAL, "no evaluator");
	usc__eval_free_outputs(ev);
	usc__evalue_clear(ev, &ev->kept);
	usc__eval_keep_clear(ev);
	ev->last_elements = 0;
	ev->last_tiles = 0;
	for (i = 0; i < ev->nparams; i++)
		if (!ev->bound[i])
			return usc__fail(err, USC_EINVAL,
					 "parameter %zu ('%s') is not bound",
					 i, ev->params[i]->name);
	/* Control flow follows the reference's path (control.h). */
	st = usc__ctl_prepare(ev, err);
	if (st != USC_OK)
		return st;
	tile = ev->opts.tile_elements ? ev->opts.tile_elements
				      : USC_EVAL_TILE_DEFAULT;
	if (tile != USC_EVAL_NO_TILES && ev->noutputs == 1 &&
	    ev->nkeep == 0) {
		st = usc__eval_top_loop(ev, tile, &loop, &pmap, &npmap, err);
		if (st != USC_OK)
			return st;
	}
	if (!loop) {
		st = run_whole(ev, s, err);
		if (st != USC_OK)
			usc__eval_keep_clear(ev);
		return st;
	}
	st = usc__eval_run_streamed(ev, loop, pmap, npmap, tile, s, err);
	usc__free(pmap);
	if (st != USC_OK) {
		ev->last_elements = 0;
		ev->last_tiles = 0;
	}
	return st;
}

usc_status usc__eval_streams(const usc_eval *ev, bool *streams, size_t *tile,
			     usc_error *err)
{
	const usc_hlo_computation *loop = NULL;
	size_t *pmap = NULL, npmap = 0;
	usc_status st = USC_OK;

	*streams = false;
	*tile = ev->opts.tile_elements ? ev->opts.tile_elements
				       : USC_EVAL_TILE_DEFAULT;
	if (*tile != USC_EVAL_NO_TILES && ev->noutputs == 1 &&
	    ev->nkeep == 0) {
		st = usc__eval_top_loop(ev, *tile, &loop, &pmap, &npmap, err);
		usc__free(pmap);
		*streams = st == USC_OK && loop != NULL;
	}
	return st;
}

usc_status usc_eval_run(usc_eval *ev, usc_error *err)
{
	return usc__eval_run_stream(ev, NULL, err);
}

usc_status usc__eval_output_values(const usc_eval *ev, size_t i,
				   const void **values, size_t *count,
				   usc_dtype *dtype)
{
	if (!ev || i >= ev->kept.n)
		return USC_ERANGE;
	*values = ev->kept.leaves[i]->values;
	*count = ev->kept.leaves[i]->count;
	*dtype = ev->kept.leaves[i]->dtype;
	return USC_OK;
}

void *usc__eval_domain_state(const usc_eval *ev)
{
	return ev ? ev->dstate : NULL;
}

const usc__domain_ops *usc__eval_domain(const usc_eval *ev)
{
	return ev ? ev->dom : NULL;
}

void usc__eval_last_run(const usc_eval *ev, uint64_t *elements, uint64_t *tiles)
{
	*elements = ev ? ev->last_elements : 0;
	*tiles = ev ? ev->last_tiles : 0;
}

size_t usc_eval_output_count(const usc_eval *ev)
{
	return ev ? ev->noutputs : 0;
}

usc_status usc_eval_output(const usc_eval *ev, size_t i,
			   const usc_tensor **out, usc_error *err)
{
	if (!ev || !ev->outputs || i >= ev->noutputs || !ev->outputs[i])
		return usc__fail(err, USC_ERANGE, "no output %zu", i);
	*out = ev->outputs[i];
	return USC_OK;
}

usc_status usc_eval_take_output(usc_eval *ev, size_t i, usc_tensor **out,
				usc_error *err)
{
	if (!ev || !ev->outputs || i >= ev->noutputs || !ev->outputs[i])
		return usc__fail(err, USC_ERANGE, "no output %zu", i);
	*out = ev->outputs[i];
	ev->outputs[i] = NULL;
	return USC_OK;
}
