/*
 * The flat view for language bindings (include/ulpscope/bind.h): profiles
 * on the heap, a check report's parts one by one, and its per-element
 * figures copied out.  It reads what usc_check_run made and computes
 * nothing of its own.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulpscope/audit.h"
#include "ulpscope/batch.h"
#include "ulpscope/bind.h"
#include "ulpscope/explain.h"
#include "ulpscope/hlo.h"
#include "ulpscope/signature.h"

/* Every public struct a binding may lay out itself, with its size. */
static const struct {
	const char *name;
	size_t size;
} sizes[] = {
	{"usc_check_request", sizeof(usc_check_request)},
	{"usc_check_element", sizeof(usc_check_element)},
	{"usc_results_summary", sizeof(usc_results_summary)},
	{"usc_results_stats", sizeof(usc_results_stats)},
	{"usc_classify_counts", sizeof(usc_classify_counts)},
	{"usc_envelope", sizeof(usc_envelope)},
	{"usc_error", sizeof(usc_error)},
	{"usc_verdict", sizeof(usc_verdict)},
	{"usc_results_kernel_info", sizeof(usc_results_kernel_info)},
	{"usc_results_output_data", sizeof(usc_results_output_data)},
	{"usc_attr_options", sizeof(usc_attr_options)},
	{"usc_attr_op", sizeof(usc_attr_op)},
	{"usc_attr_output", sizeof(usc_attr_output)},
	{"usc_attribution", sizeof(usc_attribution)},
	{"usc_bisect_capture", sizeof(usc_bisect_capture)},
	{"usc_bisect_request", sizeof(usc_bisect_request)},
	{"usc_bisect_step", sizeof(usc_bisect_step)},
	{"usc_signature_options", sizeof(usc_signature_options)},
	{"usc_signature_request", sizeof(usc_signature_request)},
	{"usc_signature_form", sizeof(usc_signature_form)},
	{"usc_signature_candidate", sizeof(usc_signature_candidate)},
	{"usc_signature_report", sizeof(usc_signature_report)},
	{"usc_explain_request", sizeof(usc_explain_request)},
	{"usc_explain_node", sizeof(usc_explain_node)},
	{"usc_explain_report", sizeof(usc_explain_report)},
	{"usc_batch_options", sizeof(usc_batch_options)},
	{"usc_batch_row", sizeof(usc_batch_row)},
	{"usc_batch_result", sizeof(usc_batch_result)},
	{"usc_audit_request", sizeof(usc_audit_request)},
	{"usc_audit_figures", sizeof(usc_audit_figures)},
	{"usc_audit_elements", sizeof(usc_audit_elements)},
	{"usc_audit_sample", sizeof(usc_audit_sample)},
	{"usc_audit_output", sizeof(usc_audit_output)},
	{"usc_audit_op", sizeof(usc_audit_op)},
	{"usc_audit_report", sizeof(usc_audit_report)},
};

size_t usc_bind_sizeof(const char *type)
{
	if (type == NULL)
		return 0;
	for (size_t i = 0; i < USC__ARRAY_LEN(sizes); i++)
		if (strcmp(sizes[i].name, type) == 0)
			return sizes[i].size;
	return 0;
}

long long usc_bind_constant(const char *name)
{
	/* The macros a binding passes as flags; the preprocessed
	 * declarations of usc_bind_cdef keep no macro. */
	static const struct {
		const char *name;
		long long value;
	} constants[] = {
		{"USC_RESULTS_FORCE", USC_RESULTS_FORCE},
		{"USC_AUDIT_APPEND", USC_AUDIT_APPEND},
	};

	for (size_t i = 0; name != NULL && i < USC__ARRAY_LEN(constants); i++)
		if (strcmp(constants[i].name, name) == 0)
			return constants[i].value;
	return -1;
}

const char *usc_bind_struct_name(size_t i)
{
	return i < USC__ARRAY_LEN(sizes) ? sizes[i].name : NULL;
}

usc_status usc_profile_new(const char *name_or_path, usc_profile **out,
			   usc_error *err)
{
	usc_profile *p;
	usc_status st;

	*out = NULL;
	if (name_or_path == NULL)
		return usc__fail(err, USC_EINVAL, "no profile named");
	p = usc__calloc(1, sizeof(*p));
	if (p == NULL)
		return usc__fail(err, USC_ENOMEM, "out of memory for a profile");
	st = usc_profile_resolve(name_or_path, p, err);
	if (st != USC_OK) {
		usc__free(p);
		return st;
	}
	*out = p;
	return USC_OK;
}

void usc_profile_free(usc_profile *p)
{
	usc__free(p);
}

const char *usc_profile_name_of(const usc_profile *p)
{
	return p == NULL ? NULL : p->name;
}

const char *usc_check_report_kernel_name(const usc_check_report *r)
{
	return r->kernel_name;
}

size_t usc_check_report_output_count(const usc_check_report *r)
{
	return r->output_count;
}

int usc_check_report_verdict(const usc_check_report *r)
{
	return r->classified ? (int)r->verdict : -1;
}

const char *usc_check_report_reason(const usc_check_report *r)
{
	return r->classified ? r->reason : "";
}

const char *usc_check_report_profile_name(const usc_check_report *r)
{
	return r->classified ? r->profile.name : NULL;
}

unsigned long usc_check_report_oracle_precision(const usc_check_report *r)
{
	return r->oracle_precision;
}

bool usc_check_report_streamed(const usc_check_report *r)
{
	return r->streamed;
}

const usc_check_output *usc_check_report_output(const usc_check_report *r,
						size_t i)
{
	return i < r->output_count ? &r->outputs[i] : NULL;
}

const usc_tensor *usc_check_output_device(const usc_check_output *o)
{
	return o->device;
}

const usc_tensor *usc_check_output_reference(const usc_check_output *o)
{
	return o->reference;
}

const usc_results_summary *usc_check_output_summary(const usc_check_output *o)
{
	return &o->summary;
}

const usc_classify_counts *usc_check_output_counts(const usc_check_output *o)
{
	return &o->counts;
}

uint64_t usc_check_output_tier_decided(const usc_check_output *o)
{
	return o->tier_decided;
}

uint64_t usc_check_output_oracle_elements(const usc_check_output *o)
{
	return o->oracle_elements;
}

size_t usc_check_output_worst(const usc_check_output *o,
			      const usc_check_element **worst)
{
	*worst = o->worst;
	return o->worst_count;
}

/* The figures kept in arrays of doubles, by name. */
static const double *double_array(const usc_check_output *o, const char *name)
{
	if (strcmp(name, "oracle_mid") == 0)
		return o->oracle_mid;
	if (strcmp(name, "oracle_rad") == 0)
		return o->oracle_rad;
	if (strcmp(name, "ulp_oracle") == 0)
		return o->ulp_oracle;
	if (strcmp(name, "ulp_reference") == 0)
		return o->ulp_reference;
	if (strcmp(name, "expected_ulps") == 0)
		return o->expected_ulps;
	return NULL;
}

/* Which field of usc_envelope a column name means; -1 for none. */
static int envelope_field(const char *name)
{
	if (strcmp(name, "envelope_lo") == 0)
		return 0;
	if (strcmp(name, "envelope_hi") == 0)
		return 1;
	if (strcmp(name, "envelope_roundings") == 0)
		return 2;
	if (strcmp(name, "envelope_flags") == 0)
		return 3;
	return -1;
}

static bool known_column(const char *name)
{
	static const char *const names[] = {
		"oracle_mid", "oracle_rad", "ulp_oracle", "ulp_reference",
		"expected_ulps", "envelope_lo", "envelope_hi",
		"envelope_roundings", "envelope_flags", "undecided", "class",
	};

	for (size_t i = 0; i < USC__ARRAY_LEN(names); i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

usc_status usc_check_output_column(const usc_check_output *o,
				   const char *name, void *out,
				   uint64_t count, usc_error *err)
{
	uint64_t n = usc_tensor_count(o->device);
	const double *d;
	int env;

	if (name == NULL || !known_column(name))
		return usc__fail(err, USC_ENOTFOUND,
				 "no per-element figure named \"%s\"",
				 name == NULL ? "(null)" : name);
	if (count != n)
		return usc__fail(err, USC_EINVAL,
				 "\"%s\": the output has %llu elements, not %llu",
				 name, (unsigned long long)n,
				 (unsigned long long)count);
	d = double_array(o, name);
	if (d != NULL) {
		memcpy(out, d, n * sizeof(double));
		return USC_OK;
	}
	env = envelope_field(name);
	if (env >= 0 && o->envelope != NULL) {
		for (uint64_t k = 0; k < n; k++) {
			const usc_envelope *e = &o->envelope[k];

			if (env == 0)
				((double *)out)[k] = e->lo;
			else if (env == 1)
				((double *)out)[k] = e->hi;
			else if (env == 2)
				((double *)out)[k] = e->roundings;
			else
				((uint32_t *)out)[k] = e->flags;
		}
		return USC_OK;
	}
	if (strcmp(name, "undecided") == 0 && o->undecided != NULL) {
		memcpy(out, o->undecided, n);
		return USC_OK;
	}
	if (strcmp(name, "class") == 0 && o->cls != NULL) {
		memcpy(out, o->cls, n);
		return USC_OK;
	}
	return usc__fail(err, USC_EINVAL,
			 "the report holds no \"%s\" (a streamed check keeps "
			 "no per-element figures; the envelope and the classes "
			 "need a profile)", name);
}

usc_status usc_check_report_attribute(usc_check_report *r,
				      const usc_attr_options *opt,
				      usc_attribution **out, usc_error *err)
{
	usc_status st;

	*out = NULL;
	if (r->streamed)
		return usc__fail(err, USC_EINVAL,
				 "a streamed check keeps no per-element "
				 "figures to attribute");
	st = usc_attribute(usc_hlo_file_module(r->kernel, 0), r->computation,
			   (const usc_tensor *const *)r->inputs,
			   r->input_count, opt, out, err);
	if (st == USC_OK)
		r->attribution = *out;
	return st;
}

const char *usc_bind_instr_name(const usc_hlo_instr *instr)
{
	return instr == NULL ? NULL : instr->name;
}

const char *usc_bisect_report_kernel_name(const usc_bisect_report *r)
{
	return r->kernel_name;
}

size_t usc_bisect_report_step_count(const usc_bisect_report *r)
{
	return r->step_count;
}

const usc_bisect_step *usc_bisect_report_step(const usc_bisect_report *r,
					      size_t i)
{
	return i < r->step_count ? &r->steps[i] : NULL;
}

long long usc_bisect_report_first_bad(const usc_bisect_report *r)
{
	return r->found ? (long long)r->first_bad : -1;
}

uint64_t usc_bisect_report_unknown(const usc_bisect_report *r)
{
	return r->unknown;
}

const char *usc_bisect_report_reason(const usc_bisect_report *r)
{
	return r->reason;
}

const char *usc_bisect_report_profile_name(const usc_bisect_report *r)
{
	return r->profile.name;
}

usc_status usc_explain_text(const usc_explain_report *r, char **text,
			    usc_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	/* open_memstream grows its buffer with malloc, hence the own free. */
	FILE *f = open_memstream(&buf, &len);

	*text = NULL;
	if (f == NULL)
		return usc__fail(err, USC_ENOMEM,
				 "out of memory for the explain text");
	usc_explain_print(f, r);
	if (fclose(f) != 0) {
		free(buf);
		return usc__fail(err, USC_ENOMEM,
				 "out of memory for the explain text");
	}
	*text = buf;
	return USC_OK;
}

void usc_bind_text_free(char *text)
{
	free(text);
}

void usc_bind_free(void *p)
{
	free(p);
}
