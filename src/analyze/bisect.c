/*
 * Bisection with captured intermediates: the first instruction of a
 * kernel, in topological order, whose captured values leave their own
 * legitimate envelope (the seed paper's hierarchical differential step,
 * inside the fusion).
 *
 * One envelope run from the true inputs keeps the values of every
 * captured instruction (usc__eval_keep).  Each envelope is therefore the
 * set of values a correct compiler may give that instruction when
 * everything before it is also computed legitimately: an upstream defect
 * shows at the first op that leaves its envelope, not at its consumers,
 * whose envelopes do not know about it.  Those consumers usually leave
 * theirs as well (they computed from a wrong value), which is why the
 * first one in topological order is the one named.  Comparing each op
 * with an envelope computed from the captured values of its operands
 * would instead blame an op only for what it adds; that is a different
 * question (local error), not this one.
 */
#include "internal.h"
#include "analyze/check_internal.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/bisect.h"
#include "ulpscope/hlo_kernel.h"

#include "analyze/case_internal.h"
#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "../../oracles/envelope.h"

usc_bisect_request usc_bisect_request_default(void)
{
	usc_bisect_request r;

	memset(&r, 0, sizeof r);
	r.reduce_order = USC_REDUCE_SEQUENTIAL;
	return r;
}

void usc_bisect_report_destroy(usc_bisect_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->step_count; i++) {
		usc__free(r->steps[i].source);
		usc_tensor_destroy(r->steps[i].values);
	}
	usc__free(r->steps);
	usc_hlo_file_destroy(r->kernel);
	usc__free(r->hlo_path);
	usc__free(r->kernel_name);
	usc__free(r);
}

/* ------------------------------------------------------------ kernel */

/* As check does (src/analyze/check.c): one module, a fusion isolated. */
static usc_status load_kernel(const usc_bisect_request *req,
			      usc_bisect_report *r, usc_error *err)
{
	usc_hlo_file *file = NULL;
	const usc_hlo_module *m;
	const char *name;
	usc_status st;

	st = usc__load_kernel(req->hlo_path, req->fusion, &file, err);
	r->kernel = file;
	if (st != USC_OK)
		return st;
	m = usc_hlo_file_module(file, 0);
	name = m->name ? m->name : "kernel";
	r->kernel_name = usc__strdup(name);
	if (!r->kernel_name)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

/*
 * The position of every instruction in the order a run evaluates them:
 * a computation's instructions in topological order, and the body of a
 * fusion or call just before the fusion itself (whose value is its
 * body's root).  seq is indexed by computation, then instruction.
 */
static usc_status order_computation(const usc_hlo_computation *c,
				    size_t **seq, size_t *next, int depth,
				    usc_error *err)
{
	size_t n = c->instr_count;
	size_t *order;
	usc_status st = USC_OK;

	order = usc__calloc(n ? n : 1, sizeof *order);
	if (!order)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = usc__topo_order(c, order, err);
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		const usc_hlo_instr *in = c->instrs[order[i]];
		bool call = in->opcode == USC_HLO_OP_FUSION ||
			    in->opcode == USC_HLO_OP_CALL;

		for (size_t k = 0; call && st == USC_OK && k < in->called_count;
		     k++) {
			/* The evaluator's bound (eval_internal.h). */
			if (depth >= USC__EVAL_NESTING_MAX)
				st = usc__eval_fail(
					err, USC_EUNSUPPORTED, in,
					"computation '%s' is called %d levels "
					"deep; computations may nest at most "
					"%d deep",
					in->called[k]->name, depth + 1,
					USC__EVAL_NESTING_MAX);
			else
				st = order_computation(in->called[k], seq,
						       next, depth + 1, err);
		}
		seq[c->index][in->index] = (*next)++;
	}
	usc__free(order);
	return st;
}

/* ------------------------------------------------------- provenance */

/*
 * "file:line" of an instruction: its metadata's source_file and
 * source_line, or newer dumps' stack_frame_id through the module's
 * StackFrames, FileLocations and FileNames tables.
 */
static void source_location(const usc_hlo_module *m, const usc_hlo_instr *in,
			    char *buf, size_t cap)
{
	const char *file;
	size_t len;
	int64_t line;

	buf[0] = '\0';
	if (!usc_hlo_instr_source(m, in, &file, &len, &line))
		return;
	if (line >= 0)
		snprintf(buf, cap, "%.*s:%" PRId64, (int)len, file, line);
	else
		snprintf(buf, cap, "%.*s", (int)len, file);
}

/* ------------------------------------------------------------ names */

/* Whether instruction in can be captured: array, evaluated once. */
static bool capturable(const usc_hlo_instr *in, const unsigned char *runs)
{
	return in->shape.kind == USC_HLO_SHAPE_ARRAY &&
	       runs[in->parent->index] == 1;
}

/* An error listing what can be captured (the first few kilobytes). */
static usc_status unknown_name(const usc_hlo_module *m, const char *name,
			       const unsigned char *runs, usc_error *err)
{
	char list[1536];
	size_t len = 0, shown = 0, total = 0;

	list[0] = '\0';
	for (size_t c = 0; c < m->computation_count; c++) {
		const usc_hlo_computation *comp = m->computations[c];

		for (size_t i = 0; i < comp->instr_count; i++) {
			const usc_hlo_instr *in = comp->instrs[i];
			int w;

			if (!capturable(in, runs))
				continue;
			total++;
			if (len + strlen(in->name) + 8 >= sizeof list)
				continue;
			w = snprintf(list + len, sizeof list - len, "%s%s",
				     shown ? " " : "", in->name);
			if (w > 0)
				len += (size_t)w;
			shown++;
		}
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "no instruction '%s' in module '%s'; the "
			 "instructions that can be captured are: %s%s",
			 name, m->name ? m->name : "kernel", list,
			 shown < total ? " ..." : "");
}

/* The instruction named name (with or without %), or an error. */
static usc_status find_instr(const usc_hlo_module *m, const char *name,
			     const unsigned char *runs,
			     const usc_hlo_instr **out, usc_error *err)
{
	const usc_hlo_instr *found = NULL;
	const char *bare = name[0] == '%' ? name + 1 : name;

	for (size_t c = 0; c < m->computation_count; c++) {
		const usc_hlo_instr *in =
			usc_hlo_computation_instr(m->computations[c], bare);

		if (!in)
			continue;
		if (found)
			return usc__fail(err, USC_EINVAL,
					 "instruction name '%s' is used in "
					 "computations '%s' and '%s': it does "
					 "not name one instruction",
					 bare, found->parent->name,
					 in->parent->name);
		found = in;
	}
	if (!found)
		return unknown_name(m, bare, runs, err);
	if (runs[found->parent->index] == 0)
		return usc__fail(err, USC_EINVAL,
				 "instruction '%s' (line %u) is in computation "
				 "'%s', which the kernel never evaluates",
				 bare, found->loc.line, found->parent->name);
	if (runs[found->parent->index] > 1)
		return usc__fail(err, USC_EINVAL,
				 "instruction '%s' (line %u) is in computation "
				 "'%s', which a run evaluates several times (a "
				 "reduce, map or scatter body, or a computation "
				 "called from several places): its values do "
				 "not form one tensor; capture an instruction "
				 "of a computation evaluated once",
				 bare, found->loc.line, found->parent->name);
	if (found->shape.kind != USC_HLO_SHAPE_ARRAY)
		return usc__fail(err, USC_EINVAL,
				 "instruction '%s' (line %u) is a tuple: "
				 "capture its elements (get-tuple-element "
				 "instructions) instead",
				 bare, found->loc.line);
	*out = found;
	return USC_OK;
}

/* ------------------------------------------------------- comparison */


/*
 * Whether element bits of type t is outside envelope e; *steps and *cls
 * say how far and how (float types: usc_classify_element's distance;
 * integers: 1).
 */
static bool outside(const usc_envelope *e, usc_dtype t, uint64_t bits,
		    double *steps, usc_class *cls)
{
	*steps = 0;
	*cls = USC_CLASS_ENVELOPE;
	if (usc_dtype_is_float(t)) {
		usc_classify_input in;
		usc_classify_result res;

		memset(&in, 0, sizeof in);
		in.type = t;
		in.device = bits;
		/* No reference here: only the envelope is asked. */
		in.reference = bits;
		in.exact = NAN;
		in.envelope = *e;
		if (usc_classify_element(&in, &res, NULL) != USC_OK)
			return false;
		*steps = res.outside_ulps;
		*cls = res.cls;
		return res.outside_ulps > 0;
	} else {
		int64_t sv = 0;
		uint64_t uv = 0;
		double v;

		(void)usc_decode_int(t, bits, &sv, &uv);
		v = usc_format_of(t)->kind == USC_KIND_SINT ? (double)sv
							   : (double)uv;
		if ((e->flags & USC_ENV_FINITE) && e->lo <= v && v <= e->hi)
			return false;
		*steps = 1;
		*cls = USC_CLASS_DEFECT;
		return true;
	}
}

/* Compares a step's values with the envelope values of its instruction. */
static usc_status compare_step(usc_eval *ev, usc_bisect_step *s,
			       const void *values, size_t count, usc_dtype t,
			       usc_error *err)
{
	const usc__domain_ops *dom = usc__eval_domain(ev);
	void *state = usc__eval_domain_state(ev);

	if (count != usc_tensor_count(s->values) ||
	    t != usc_tensor_dtype(s->values))
		return usc__fail(err, USC_EINTERNAL,
				 "%s: %zu envelope values of %s for %" PRIu64
				 " elements of %s",
				 s->source, count, usc_dtype_name(t),
				 usc_tensor_count(s->values),
				 usc_dtype_name(usc_tensor_dtype(s->values)));
	s->count = count;
	for (size_t k = 0; k < count; k++) {
		const void *v =
			(const unsigned char *)values + k * dom->value_size;
		usc__envelope_elem e;
		usc_envelope pe;
		uint64_t enc, bits;
		double steps;
		usc_class cls;
		usc_status st;

		st = dom->to_output(state, t, v, &enc, &e, err);
		if (st != USC_OK)
			return st;
		pe = usc__envelope_public(&e);
		usc_tensor_get_bits(s->values, k, &bits);
		if (pe.flags & USC_ENV_UNKNOWN) {
			s->unknown++;
			continue;
		}
		if (!outside(&pe, t, bits, &steps, &cls))
			continue;
		if (s->outside == 0 || steps > s->worst_outside_ulps) {
			s->worst_index = k;
			s->worst_bits = bits;
			s->worst_envelope = pe;
			s->worst_outside_ulps = steps;
			s->worst_class = cls;
		}
		s->outside++;
	}
	return USC_OK;
}

/* ------------------------------------------------------------ report */

/* Element k's multi-index of t as "3,17". */
static void format_index(char *buf, size_t cap, const usc_tensor *t,
			 uint64_t k)
{
	size_t rank = usc_tensor_rank(t), len = 0;
	const int64_t *dims = usc_tensor_dims(t);
	uint64_t idx[USC_TENSOR_MAX_RANK];

	buf[0] = '\0';
	for (size_t i = rank; i-- > 0;) {
		uint64_t d = dims[i] > 0 ? (uint64_t)dims[i] : 1;

		idx[i] = k % d;
		k /= d;
	}
	for (size_t i = 0; i < rank && len + 1 < cap; i++) {
		int w = snprintf(buf + len, cap - len, "%s%" PRIu64,
				 i ? "," : "", idx[i]);

		if (w < 0)
			break;
		len += (size_t)w;
	}
}

static void write_reason(usc_bisect_report *r)
{
	const usc_bisect_step *s;
	char idx[128], env[128], where[320], val[64];
	usc_dtype t;
	double d = 0;

	if (!r->found) {
		snprintf(r->reason, sizeof r->reason,
			 "every captured tensor (%zu) inside its %s envelope%s",
			 r->step_count, r->profile.name,
			 r->unknown ? " (some elements' envelopes unknown)"
				    : "; a defect, if any, is after the last "
				      "captured op");
		return;
	}
	s = &r->steps[r->first_bad];
	t = usc_tensor_dtype(s->values);
	format_index(idx, sizeof idx, s->values, s->worst_index);
	if (usc_bits_is_nan(t, s->worst_bits))
		snprintf(val, sizeof val, "nan");
	else if (usc_decode_double(t, s->worst_bits, &d) == USC_OK)
		snprintf(val, sizeof val, "%.9g", d);
	else
		snprintf(val, sizeof val, "0x%" PRIx64, s->worst_bits);
	if (s->worst_envelope.flags & USC_ENV_FINITE)
		snprintf(env, sizeof env, "[%.9g, %.9g]", s->worst_envelope.lo,
			 s->worst_envelope.hi);
	else
		snprintf(env, sizeof env, "no finite value");
	where[0] = '\0';
	if (s->op_name || s->source_loc[0])
		snprintf(where, sizeof where, " (%s%s%s)",
			 s->op_name ? s->op_name : "",
			 s->op_name && s->source_loc[0] ? " at " : "",
			 s->source_loc);
	snprintf(r->reason, sizeof r->reason,
		 "first op outside its %s envelope: %s %s%s: %" PRIu64
		 " of %" PRIu64 " elements outside; worst [%s] = %s, "
		 "envelope %s (%s)",
		 r->profile.name, usc_hlo_opcode_name(s->instr->opcode),
		 s->instr->name, where, s->outside, s->count, idx, val, env,
		 usc_class_name(s->worst_class));
}

/* ------------------------------------------------------------ driver */

static int step_cmp_seq(const size_t *a_seq, const size_t *b_seq)
{
	return *a_seq < *b_seq ? -1 : *a_seq > *b_seq;
}

usc_status usc_bisect_run(const usc_bisect_request *req,
			  usc_bisect_report **out, usc_error *err)
{
	usc_bisect_report *r;
	const usc_hlo_module *m;
	const usc_hlo_computation *entry;
	unsigned char *runs = NULL;
	size_t **seq = NULL, *key = NULL, next = 0, nsteps, ni;
	usc_tensor **inputs = NULL;
	usc_eval *ev = NULL;
	usc_eval_options o = usc_eval_options_default();
	usc_status st;

	if (!req || !out || !req->hlo_path)
		return usc__fail(err, USC_EINVAL, "no kernel to bisect");
	*out = NULL;
	r = usc__calloc(1, sizeof *r);
	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->hlo_path = usc__strdup(req->hlo_path);
	if (!r->hlo_path) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	if (req->profile)
		r->profile = *req->profile;
	else if ((st = usc_profile_builtin("strict", &r->profile, err)) !=
		 USC_OK)
		goto done;
	st = load_kernel(req, r, err);
	if (st != USC_OK)
		goto done;
	m = usc_hlo_file_module(r->kernel, 0);
	entry = m->entry;
	if (req->capture_count == 0 && req->device_count == 0) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: nothing to compare: give captured "
			       "intermediates (--intermediate NAME=FILE) or "
			       "device outputs",
			       req->hlo_path);
		goto done;
	}

	/* Which computations run once, and the evaluation order. */
	runs = usc__calloc(m->computation_count ? m->computation_count : 1, 1);
	seq = usc__calloc(m->computation_count ? m->computation_count : 1,
			  sizeof *seq);
	if (!runs || !seq) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t c = 0; c < m->computation_count; c++) {
		size_t n = m->computations[c]->instr_count;

		seq[c] = usc__calloc(n ? n : 1, sizeof **seq);
		if (!seq[c]) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
	}
	usc__computation_runs(entry, 1, runs, 0);
	st = order_computation(entry, seq, &next, 0, err);
	if (st != USC_OK)
		goto done;

	/* The evaluator, and the inputs as its parameters expect them. */
	o.domain = USC_DOMAIN_ENVELOPE;
	o.reduce_order = req->reduce_order;
	o.profile = &r->profile;
	o.tile_elements = USC_EVAL_NO_TILES;
	st = usc_eval_create_computation(entry, &o, &ev, err);
	if (st != USC_OK)
		goto done;
	ni = usc_eval_param_count(ev);
	if (req->input_count != ni) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel has %zu parameter%s, %zu "
			       "input%s given",
			       req->hlo_path, ni, ni == 1 ? "" : "s",
			       req->input_count,
			       req->input_count == 1 ? " was" : "s were");
		goto done;
	}
	if (req->device_count &&
	    req->device_count != usc_eval_output_count(ev)) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel has %zu output%s, %zu device "
			       "output%s given",
			       req->hlo_path, usc_eval_output_count(ev),
			       usc_eval_output_count(ev) == 1 ? "" : "s",
			       req->device_count,
			       req->device_count == 1 ? " was" : "s were");
		goto done;
	}
	inputs = usc__calloc(ni ? ni : 1, sizeof *inputs);
	if (!inputs) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < ni; i++) {
		usc_tensor_spec spec;
		char what[64];

		st = usc_eval_param_spec(ev, i, &spec, err);
		if (st != USC_OK)
			goto done;
		snprintf(what, sizeof what, "parameter %zu of the kernel", i);
		spec.what = what;
		st = usc_tensor_read(req->inputs[i], &spec,
				     req->raw ? USC_TENSOR_READ_RAW : 0,
				     &inputs[i], err);
		if (st == USC_OK)
			st = usc_eval_bind(ev, i, inputs[i], err);
		if (st != USC_OK)
			goto done;
	}

	/* The steps: captured instructions, then the device outputs. */
	nsteps = req->capture_count + req->device_count;
	r->steps = usc__calloc(nsteps ? nsteps : 1, sizeof *r->steps);
	key = usc__calloc(nsteps ? nsteps : 1, sizeof *key);
	if (!r->steps || !key) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nsteps; i++) {
		usc_bisect_step *s = &r->steps[i];
		const usc_hlo_instr *in = NULL;
		const char *src;
		usc_tensor_spec spec;
		char what[320];

		r->step_count = i + 1;
		s->output = SIZE_MAX;
		if (i < req->capture_count) {
			const usc_bisect_capture *c = &req->captures[i];

			if (!c->name || !c->source) {
				st = usc__fail(err, USC_EINVAL,
					       "capture %zu lacks a name or a "
					       "source",
					       i);
				goto done;
			}
			st = find_instr(m, c->name, runs, &in, err);
			if (st != USC_OK)
				goto done;
			for (size_t j = 0; j < i; j++)
				if (r->steps[j].instr == in) {
					st = usc__fail(err, USC_EINVAL,
						       "instruction '%s' is "
						       "captured twice (%s and "
						       "%s)",
						       in->name,
						       r->steps[j].source,
						       c->source);
					goto done;
				}
			src = c->source;
			spec.dtype = in->shape.dtype;
			spec.rank = in->shape.rank;
			spec.dims = in->shape.dims;
			snprintf(what, sizeof what, "instruction '%s' (%s)",
				 in->name, usc_hlo_opcode_name(in->opcode));
			key[i] = seq[in->parent->index][in->index];
			st = usc__eval_keep(ev, in, err);
			if (st != USC_OK)
				goto done;
		} else {
			size_t j = i - req->capture_count;

			in = entry->root;
			s->output = j;
			src = req->devices[j];
			/* The root's shape, or its leaf j for a tuple. */
			if (in->shape.kind == USC_HLO_SHAPE_ARRAY) {
				spec.dtype = in->shape.dtype;
				spec.rank = in->shape.rank;
				spec.dims = in->shape.dims;
			} else if (j < in->shape.tuple_count &&
				   in->shape.tuple[j].kind ==
					   USC_HLO_SHAPE_ARRAY) {
				spec.dtype = in->shape.tuple[j].dtype;
				spec.rank = in->shape.tuple[j].rank;
				spec.dims = in->shape.tuple[j].dims;
			} else {
				st = usc__fail(err, USC_EUNSUPPORTED,
					       "%s: device outputs of a nested "
					       "tuple result",
					       req->hlo_path);
				goto done;
			}
			snprintf(what, sizeof what, "output %zu of the kernel",
				 j);
			/* After every instruction of the kernel. */
			key[i] = next + j;
		}
		spec.what = what;
		s->instr = in;
		s->op_name = in->metadata ? in->metadata->op_name : NULL;
		source_location(m, in, s->source_loc, sizeof s->source_loc);
		s->source = usc__strdup(src);
		if (!s->source) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		st = usc_tensor_read(src, &spec,
				     req->raw ? USC_TENSOR_READ_RAW : 0,
				     &s->values, err);
		if (st != USC_OK)
			goto done;
	}

	/* One envelope run from the true inputs, keeping every capture. */
	st = usc_eval_run(ev, err);
	if (st != USC_OK)
		goto done;
	for (size_t i = 0; i < r->step_count; i++) {
		usc_bisect_step *s = &r->steps[i];
		const void *values;
		size_t count;
		usc_dtype t;

		if (s->output == SIZE_MAX)
			st = usc__eval_kept_values(ev, s->instr, &values,
						   &count, &t);
		else
			st = usc__eval_output_values(ev, s->output, &values,
						     &count, &t);
		if (st != USC_OK) {
			st = usc__fail(err, USC_EINTERNAL,
				       "the envelope run kept no values of "
				       "'%s'",
				       s->instr->name);
			goto done;
		}
		st = compare_step(ev, s, values, count, t, err);
		if (st != USC_OK)
			goto done;
		r->unknown += s->unknown;
	}

	/* Topological order (insertion sort: a handful of steps). */
	for (size_t i = 1; i < r->step_count; i++)
		for (size_t j = i;
		     j > 0 && step_cmp_seq(&key[j], &key[j - 1]) < 0; j--) {
			usc_bisect_step tmp = r->steps[j];
			size_t tk = key[j];

			r->steps[j] = r->steps[j - 1];
			r->steps[j - 1] = tmp;
			key[j] = key[j - 1];
			key[j - 1] = tk;
		}
	for (size_t i = 0; i < r->step_count && !r->found; i++)
		if (r->steps[i].outside) {
			r->found = true;
			r->first_bad = i;
		}
	write_reason(r);
done:
	usc_eval_destroy(ev);
	if (inputs)
		for (size_t i = 0; i < req->input_count; i++)
			usc_tensor_destroy(inputs[i]);
	usc__free(inputs);
	if (seq && r->kernel) {
		m = usc_hlo_file_module(r->kernel, 0);
		for (size_t c = 0; c < m->computation_count; c++)
			usc__free(seq[c]);
	}
	usc__free(seq);
	usc__free(runs);
	usc__free(key);
	if (st != USC_OK) {
		usc_bisect_report_destroy(r);
		return st;
	}
	*out = r;
	return USC_OK;
}

/* -------------------------------------------------------------- cases */

/* The list of owned strings a case assembles. */
typedef struct strlist {
	size_t n;
	char **s;
} strlist;

static usc_status strlist_add(strlist *l, char *s, usc_error *err)
{
	char **grown;

	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	grown = usc__reallocarray(l->s, l->n + 1, sizeof *grown);
	if (!grown) {
		usc__free(s);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	l->s = grown;
	l->s[l->n++] = s;
	return USC_OK;
}

static void strlist_free(strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		usc__free(l->s[i]);
	usc__free(l->s);
}

/* The case files prefix_0.npy, prefix_1.npy ... into the empty list l. */
static usc_status collect(const char *dir, const char *prefix, strlist *l,
			  usc_error *err)
{
	return usc__case_collect(dir, prefix, &l->s, &l->n, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

usc_status usc_bisect_case(const char *dir, const usc_bisect_request *base,
			   usc_bisect_report **out, usc_error *err)
{
	static const char pre[] = "intermediate_", suf[] = ".npy";
	usc_bisect_request req = base ? *base : usc_bisect_request_default();
	strlist inputs = {0, NULL}, devices = {0, NULL}, names = {0, NULL};
	strlist files = {0, NULL};
	usc_bisect_capture *caps = NULL;
	usc_profile prof;
	bool have = false;
	char *hlo = NULL;
	DIR *d = NULL;
	struct dirent *de;
	size_t ncaps;
	usc_status st = USC_OK;

	st = usc__case_kernel(dir, &hlo, err);
	if (st != USC_OK)
		return st;
	st = collect(dir, "input", &inputs, err);
	if (st == USC_OK)
		st = collect(dir, "device", &devices, err);
	if (st != USC_OK)
		goto done;
	d = opendir(dir);
	if (!d) {
		st = usc__fail(err, USC_EIO, "%s: cannot list the directory",
			       dir);
		goto done;
	}
	while (st == USC_OK && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len <= sizeof pre - 1 + sizeof suf - 1 ||
		    strncmp(de->d_name, pre, sizeof pre - 1) != 0 ||
		    strcmp(de->d_name + len - (sizeof suf - 1), suf) != 0)
			continue;
		st = strlist_add(&files, usc__strdup(de->d_name), err);
	}
	closedir(d);
	if (st != USC_OK)
		goto done;
	/* Directory order is arbitrary: sort, for stable messages. */
	if (files.n > 1)
		qsort(files.s, files.n, sizeof *files.s, cmp_str);
	for (size_t i = 0; st == USC_OK && i < files.n; i++) {
		size_t len = strlen(files.s[i]) - (sizeof pre - 1) -
			     (sizeof suf - 1);

		st = strlist_add(&names,
				 usc__strndup(files.s[i] + sizeof pre - 1, len),
				 err);
		if (st == USC_OK) {
			char *p = usc__case_join(dir, files.s[i]);

			usc__free(files.s[i]);
			files.s[i] = p;
			if (!p)
				st = usc__fail(err, USC_ENOMEM,
					       "out of memory");
		}
	}
	if (st != USC_OK)
		goto done;
	ncaps = req.capture_count + names.n;
	caps = usc__calloc(ncaps ? ncaps : 1, sizeof *caps);
	if (!caps) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < req.capture_count; i++)
		caps[i] = req.captures[i];
	for (size_t i = 0; i < names.n; i++) {
		caps[req.capture_count + i].name = names.s[i];
		caps[req.capture_count + i].source = files.s[i];
	}
	if (!req.profile) {
		st = usc__case_profile(dir, &prof, &have, err);
		if (st != USC_OK)
			goto done;
		if (have)
			req.profile = &prof;
	}
	req.hlo_path = hlo;
	req.captures = caps;
	req.capture_count = ncaps;
	req.inputs = (const char *const *)inputs.s;
	req.input_count = inputs.n;
	if (!base || base->device_count == 0) {
		req.devices = (const char *const *)devices.s;
		req.device_count = devices.n;
	}
	st = usc_bisect_run(&req, out, err);
done:
	usc__free(caps);
	strlist_free(&inputs);
	strlist_free(&devices);
	strlist_free(&names);
	strlist_free(&files);
	usc__free(hlo);
	return st;
}
