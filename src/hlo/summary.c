/*
 * The summary of a module that `ulpscope hlo` prints: what each kernel
 * (fusion) computes, in which element types, on which shapes, and which
 * source ops it came from.  Computed here, printed by the CLI, so that a
 * C user gets the same facts as a struct.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "hlo/kernel_internal.h"
#include "ulpscope/hlo_kernel.h"

static usc_status oom(usc_error *err)
{
	return usc__fail(err, USC_ENOMEM, "out of memory");
}

static void mark_types(const usc_hlo_shape *s, bool *seen)
{
	size_t i;

	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (i = 0; i < s->tuple_count; i++)
			mark_types(&s->tuple[i], seen);
		return;
	}
	if (s->kind == USC_HLO_SHAPE_ARRAY && s->dtype > USC_DTYPE_INVALID &&
	    s->dtype < USC_DTYPE_COUNT)
		seen[s->dtype] = true;
}

/* Most frequent first; ties in spelling order, so output is stable. */
static int cmp_count(const void *pa, const void *pb)
{
	const usc_hlo_op_count *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(usc_hlo_opcode_name(a->opcode),
		      usc_hlo_opcode_name(b->opcode));
}

static void comp_summary_free(usc_hlo_comp_summary *s)
{
	usc__free(s->histogram);
	usc__free(s->dtypes);
	usc__free(s->op_names);
	memset(s, 0, sizeof *s);
}

static usc_status comp_summary(const usc_hlo_computation *c,
			       usc_hlo_comp_summary *out, usc_error *err)
{
	size_t counts[USC_HLO_OP_COUNT] = {0};
	bool seen[USC_DTYPE_COUNT] = {false};
	size_t i, j, n;

	memset(out, 0, sizeof *out);
	out->comp = c;
	if (!c)
		return USC_OK;
	out->instr_count = c->instr_count;
	out->op_names = usc__calloc(c->instr_count + 1, sizeof *out->op_names);
	if (!out->op_names)
		return oom(err);
	for (i = 0; i < c->instr_count; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		const char *name = in->metadata ? in->metadata->op_name : NULL;

		mark_types(&in->shape, seen);
		if (in->opcode > USC_HLO_OP_INVALID &&
		    in->opcode < USC_HLO_OP_COUNT &&
		    in->opcode != USC_HLO_OP_PARAMETER) {
			counts[in->opcode]++;
			out->op_count++;
		}
		if (!name || !*name)
			continue;
		for (j = 0; j < out->op_name_count; j++)
			if (strcmp(out->op_names[j], name) == 0)
				break;
		if (j == out->op_name_count)
			out->op_names[out->op_name_count++] = name;
	}
	for (i = 0, n = 0; i < USC_HLO_OP_COUNT; i++)
		n += counts[i] != 0;
	out->histogram = usc__calloc(n + 1, sizeof *out->histogram);
	if (!out->histogram)
		return oom(err);
	for (i = 0; i < USC_HLO_OP_COUNT; i++)
		if (counts[i]) {
			out->histogram[out->histogram_count].opcode =
				(usc_hlo_opcode)i;
			out->histogram[out->histogram_count++].count = counts[i];
		}
	qsort(out->histogram, out->histogram_count, sizeof *out->histogram,
	      cmp_count);
	for (i = 0, n = 0; i < USC_DTYPE_COUNT; i++)
		n += seen[i];
	out->dtypes = usc__calloc(n + 1, sizeof *out->dtypes);
	if (!out->dtypes)
		return oom(err);
	for (i = 0; i < USC_DTYPE_COUNT; i++)
		if (seen[i] && i != USC_TOKEN)
			out->dtypes[out->dtype_count++] = (usc_dtype)i;
	return USC_OK;
}

static const usc_hlo_computation *fused_of(const usc_hlo_instr *in)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "calls");

	if (a && a->kind == USC_HLO_ATTR_COMPUTATIONS && a->count >= 1 &&
	    a->comps)
		return a->comps[0];
	return in->called_count ? in->called[0] : NULL;
}

static usc_status fusion_summary(const usc_hlo_instr *in,
				 usc_hlo_fusion_summary *out, usc_error *err)
{
	const usc_hlo_attr *kind = usc_hlo_instr_attr(in, "kind");
	size_t i;

	out->fusion = in;
	out->kind = kind && kind->text ? kind->text : NULL;
	out->fused = fused_of(in);
	out->result = &in->shape;
	out->params = usc__calloc(in->operand_count + 1, sizeof *out->params);
	if (!out->params)
		return oom(err);
	for (i = 0; i < in->operand_count; i++)
		out->params[i] = &in->operands[i]->shape;
	out->param_count = in->operand_count;
	return comp_summary(out->fused, &out->body, err);
}

void usc_hlo_module_summary_destroy(usc_hlo_module_summary *s)
{
	size_t i;

	if (!s)
		return;
	comp_summary_free(&s->entry);
	for (i = 0; i < s->fusion_count; i++) {
		comp_summary_free(&s->fusions[i].body);
		usc__free(s->fusions[i].params);
	}
	usc__free(s->fusions);
	usc__free(s->entry_params);
	usc__free(s);
}

static usc_status summarize(const usc_hlo_module *m, usc_hlo_module_summary *s,
			    usc_error *err)
{
	const usc_hlo_computation *e = m->entry;
	size_t i, j, nf = 0;

	s->module = m;
	s->computation_count = m->computation_count;
	for (i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *c = m->computations[i];

		s->instr_count += c->instr_count;
		for (j = 0; j < c->instr_count; j++)
			nf += c->instrs[j]->opcode == USC_HLO_OP_FUSION;
	}
	if (e) {
		TRY(comp_summary(e, &s->entry, err));
		s->entry_result = e->root ? &e->root->shape : NULL;
		s->entry_params = usc__calloc(e->instr_count + 1,
					      sizeof *s->entry_params);
		if (!s->entry_params)
			return oom(err);
		for (j = 0; j < e->instr_count; j++) {
			const usc_hlo_instr *in = e->instrs[j];

			if (in->opcode != USC_HLO_OP_PARAMETER ||
			    in->parameter_number < 0 ||
			    (uint64_t)in->parameter_number >= e->instr_count)
				continue;
			s->entry_params[in->parameter_number] = in;
			if ((size_t)in->parameter_number >= s->entry_param_count)
				s->entry_param_count =
					(size_t)in->parameter_number + 1;
		}
	}
	s->fusions = usc__calloc(nf + 1, sizeof *s->fusions);
	if (!s->fusions)
		return oom(err);
	for (i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *c = m->computations[i];

		for (j = 0; j < c->instr_count; j++) {
			if (c->instrs[j]->opcode != USC_HLO_OP_FUSION)
				continue;
			TRY(fusion_summary(c->instrs[j],
					   &s->fusions[s->fusion_count++], err));
		}
	}
	return USC_OK;
}

usc_status usc_hlo_module_summarize(const usc_hlo_module *m,
				    usc_hlo_module_summary **out,
				    usc_error *err)
{
	usc_hlo_module_summary *s;
	usc_status st;

	if (!m || !out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_module_summarize: NULL argument");
	*out = NULL;
	s = usc__calloc(1, sizeof *s);
	if (!s)
		return oom(err);
	st = summarize(m, s, err);
	if (st != USC_OK) {
		usc_hlo_module_summary_destroy(s);
		return st;
	}
	*out = s;
	return USC_OK;
}
