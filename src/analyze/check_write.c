/*
 * Writing a whole check's report to a result file (usc_check_write): the
 * per-element arrays the report keeps, its envelopes' columns, its
 * attribution when there is one; and the beginning and the end of the
 * file a streamed check writes as it goes (its rows: src/analyze/check.c).
 */
#include "internal.h"

#include <string.h>

#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "ulpscope/hlo_kernel.h"

#include "analyze/check_internal.h"

/* Starts the result file of a streamed check: the kernel begun. */
usc_status usc__check_stream_begin_file(usc__check_run *c, usc_error *err)
{
	const usc_check_report *r = c->r;
	usc_hlo_print_options po = usc_hlo_print_options_default();
	usc_results_output *outs;
	usc_results_kernel k;
	char *text = NULL;
	usc_status st;

	outs = usc__calloc(r->output_count ? r->output_count : 1,
			   sizeof *outs);
	if (!outs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->output_count; i++)
		outs[i].device = r->outputs[i].device;
	memset(&k, 0, sizeof k);
	k.name = r->kernel_name;
	k.hlo_file = r->hlo_path;
	k.fusion = r->fusion;
	k.computation = r->computation;
	k.output_count = r->output_count;
	k.outputs = outs;
	st = usc_hlo_module_print(usc_hlo_file_module(r->kernel, 0), &po,
				  &text, NULL, err);
	k.hlo_text = text;
	if (st == USC_OK)
		st = c->req->results_append
			     ? usc_results_open_append(c->req->results_path,
						       &c->w, err)
			     : usc_results_create_ex(c->req->results_path,
						     c->req->results_force
							     ? USC_RESULTS_FORCE
							     : 0,
						     &c->w, err);
	if (st == USC_OK)
		st = usc_results_begin_kernel(c->w, &k, r->classified, err);
	usc_hlo_text_free(text);
	usc__free(outs);
	return st;
}

/* Ends the result file of a streamed check. */
usc_status usc__check_stream_end_file(usc__check_run *c, usc_error *err)
{
	usc_check_report *r = c->r;
	usc_results_summary *sums;
	usc_classify_counts *counts;
	usc_results_kernel_end e;
	usc_status st;

	sums = usc__calloc(r->output_count ? r->output_count : 1,
			   sizeof *sums);
	counts = usc__calloc(r->output_count ? r->output_count : 1,
			     sizeof *counts);
	if (!sums || !counts) {
		usc__free(sums);
		usc__free(counts);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < r->output_count; i++) {
		sums[i] = r->outputs[i].summary;
		counts[i] = r->outputs[i].counts;
	}
	memset(&e, 0, sizeof e);
	e.oracle_precision_max = (int64_t)r->oracle_precision;
	if (r->classified) {
		e.verdict = usc_verdict_name(r->verdict);
		e.verdict_reason = r->reason;
		e.profile = r->profile.name;
		e.class_counts = counts;
	}
	e.summaries = sums;
	st = usc_results_end_kernel(c->w, &e, err);
	if (st == USC_OK)
		st = usc_results_close(c->w, err);
	c->w = NULL;
	usc__free(sums);
	usc__free(counts);
	return st;
}

/* The report's arrays of one output as the result file takes them. */
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

usc_status usc_check_write(const usc_check_report *r, const char *path,
			   bool append, usc_error *err)
{
	return usc_check_write_ex(r, path, append, 0, err);
}

usc_status usc_check_write_ex(const usc_check_report *r, const char *path,
			      bool append, unsigned flags, usc_error *err)
{
	usc_results_output *outs;
	usc_results_kernel k;
	usc_results_attribution *attr = NULL;
	usc_results *w = NULL;
	usc_status st;

	if (r->streamed)
		return usc__fail(err, USC_EINVAL,
				 "%s: the check of %s was streamed: its "
				 "per-element results went to its own result "
				 "file (usc_check_request.results_path)",
				 path, r->kernel_name);
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
				    : usc_results_create_ex(path, flags, &w,
							    err);
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
