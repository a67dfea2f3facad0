/*
 * ulpscope: a flat view of the library for language bindings.
 *
 * A binding that loads libulpscope.so without a C compiler (the Python
 * package's cffi ABI mode, docs/python.md) can call functions and read
 * plain structs, but cannot follow a report's nested structs and arrays
 * of structs safely, nor size a struct it does not declare.  These entry
 * points give it what it needs as functions: profiles on the heap, the
 * parts of a check report one by one, and each per-element figure copied
 * out into an array the caller owns.  Nothing here computes anything the
 * rest of the API does not; it only hands it over.
 */
#ifndef ULPSCOPE_BIND_H
#define ULPSCOPE_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/attribution.h"
#include "ulpscope/bisect.h"
#include "ulpscope/check.h"
#include "ulpscope/classify.h"
#include "ulpscope/explain.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The size of a public struct or enum named as in C ("usc_check_request",
 * "usc_check_element", "usc_results_summary", "usc_classify_counts",
 * "usc_envelope", "usc_results_stats", "usc_error", "usc_verdict",
 * "usc_results_kernel_info", "usc_results_output_data",
 * "usc_attr_options", "usc_attr_op", "usc_attr_output", "usc_attribution",
 * "usc_bisect_capture", "usc_bisect_request", "usc_bisect_step",
 * "usc_signature_options", "usc_signature_request",
 * "usc_signature_candidate", "usc_signature_report",
 * "usc_explain_request", "usc_explain_node", "usc_explain_report",
 * the batch's options, row and result, the audit's request, figures,
 * elements, sample, output, op and report), so that a binding which lays
 * one out itself can verify its layout against the library it loaded.
 * 0 for any other name.
 */
size_t usc_bind_sizeof(const char *type);

/*
 * The i-th name usc_bind_sizeof knows, NULL past the last: a binding that
 * lays out the structs itself (cffi does) compares every one of them.
 */
const char *usc_bind_struct_name(size_t i);

/*
 * The value of a flag macro a binding passes ("USC_RESULTS_FORCE",
 * "USC_AUDIT_APPEND"): usc_bind_cdef's text keeps no macro.  -1 for any
 * other name.
 */
long long usc_bind_constant(const char *name);

/*
 * The public API as C declarations, ready for cffi's cdef: the headers of
 * include/ulpscope/ (dtype_mpfr.h aside) run through the preprocessor of
 * the build that made this library, so their macros are expanded and the
 * system headers left out.  A binding declares from this text instead of
 * keeping a copy of the structs by hand, and so can never disagree with
 * the library it loaded.  Static storage; do not free.
 */
const char *usc_bind_cdef(void);

/*
 * A device profile on the heap: a built-in name or a profile file, as
 * usc_profile_resolve takes it.  Free it with usc_profile_free.
 */
usc_status usc_profile_new(const char *name_or_path, usc_profile **out,
			   usc_error *err);
void usc_profile_free(usc_profile *p);
/* The profile's name ("xla-tpu", or the file's "name = ..."). */
const char *usc_profile_name_of(const usc_profile *p);

/* ------------------------------------------------------------------ */
/* A check report, part by part                                         */

const char *usc_check_report_kernel_name(const usc_check_report *r);
size_t usc_check_report_output_count(const usc_check_report *r);
/* The usc_verdict, or -1 when the check ran without a profile. */
int usc_check_report_verdict(const usc_check_report *r);
/* The one-line reason of the verdict ("" without a profile). */
const char *usc_check_report_reason(const usc_check_report *r);
/* The profile classified against; NULL without one. */
const char *usc_check_report_profile_name(const usc_check_report *r);
unsigned long usc_check_report_oracle_precision(const usc_check_report *r);
bool usc_check_report_streamed(const usc_check_report *r);

/* Output i of the report; NULL past the last. */
const usc_check_output *usc_check_report_output(const usc_check_report *r,
						size_t i);
const usc_tensor *usc_check_output_device(const usc_check_output *o);
/* NULL when the check streamed. */
const usc_tensor *usc_check_output_reference(const usc_check_output *o);
const usc_results_summary *usc_check_output_summary(const usc_check_output *o);
/* The class counts; all zero without a profile. */
const usc_classify_counts *usc_check_output_counts(const usc_check_output *o);
uint64_t usc_check_output_tier_decided(const usc_check_output *o);
uint64_t usc_check_output_oracle_elements(const usc_check_output *o);
/* The worst elements: their count, and the array through *worst. */
size_t usc_check_output_worst(const usc_check_output *o,
			      const usc_check_element **worst);

/*
 * Copies one per-element figure of the output into out, which holds
 * count elements (the output's element count exactly):
 *   double:   "oracle_mid", "oracle_rad", "ulp_oracle", "ulp_reference",
 *             "envelope_lo", "envelope_hi", "envelope_roundings",
 *             "expected_ulps"
 *   uint8_t:  "undecided", "class"
 *   uint32_t: "envelope_flags" (USC_ENV_* of classify.h)
 * USC_ENOTFOUND for another name, USC_EINVAL for a count that is not the
 * output's, and for a figure the report does not hold (every one after a
 * streamed check; the envelope and class ones without a profile).
 */
usc_status usc_check_output_column(const usc_check_output *o,
				   const char *name, void *out,
				   uint64_t count, usc_error *err);

/*
 * Attributes the report's kernel (include/ulpscope/attribution.h) on the
 * report's own inputs, as "ulpscope check --attribute" does, and lends
 * the attribution to the report (r->attribution), so that
 * usc_check_write stores it.  The caller owns *out and keeps it alive as
 * long as the report may be written.  opt may be NULL.
 */
usc_status usc_check_report_attribute(usc_check_report *r,
				      const usc_attr_options *opt,
				      usc_attribution **out, usc_error *err);

/*
 * The tree of an explain report as usc_explain_print writes it, in a
 * string from malloc (free it with usc_bind_text_free).
 */
usc_status usc_explain_text(const usc_explain_report *r, char **text,
			    usc_error *err);
void usc_bind_text_free(char *text);

/*
 * Frees an array the library hands over for the C runtime's free to
 * release (usc_batch_rank's rankings), for a binding that cannot call
 * free itself.
 */
void usc_bind_free(void *p);

/* An instruction's name, without '%'. */
const char *usc_bind_instr_name(const usc_hlo_instr *instr);

/* ------------------------------------------------------------------ */
/* A bisect report (its usc_profile member makes it no plain struct)   */

const char *usc_bisect_report_kernel_name(const usc_bisect_report *r);
size_t usc_bisect_report_step_count(const usc_bisect_report *r);
/* Step i (a plain usc_bisect_step); NULL past the last. */
const usc_bisect_step *usc_bisect_report_step(const usc_bisect_report *r,
					      size_t i);
/* The first step outside its envelope, or -1 when none is. */
long long usc_bisect_report_first_bad(const usc_bisect_report *r);
uint64_t usc_bisect_report_unknown(const usc_bisect_report *r);
const char *usc_bisect_report_reason(const usc_bisect_report *r);
/* The profile the steps were judged under. */
const char *usc_bisect_report_profile_name(const usc_bisect_report *r);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_BIND_H */
