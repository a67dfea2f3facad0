/*
 * Internal: the classification step of usc_check_run
 * (src/analyze/check_classify.c).
 */
#ifndef USC_ANALYZE_CHECK_INTERNAL_H
#define USC_ANALYZE_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ulpscope/check.h"

/*
 * With req->profile: the envelope of every element, its class, the
 * counts, the verdict and its reason (r->classified set).  Without: does
 * nothing.  Reads the reference's and the oracle's figures from r.
 */
usc_status usc__check_classify(const usc_check_request *req,
			       usc_check_report *r, usc_error *err);

/*
 * Whether element a of o is worse than element b for the worst list of a
 * classified output: by class (mismatches and defects, suspicious,
 * undecided, the rest), then by steps outside the envelope, then by
 * |ulp_oracle| (NaN first).
 */
bool usc__check_worse(const usc_check_output *o, uint64_t a, uint64_t b);

/* Steps outside the envelope of element k of o (0 inside or unknown). */
double usc__check_outside(const usc_check_output *o, uint64_t k);

/*
 * For a classified report, fills outs[i]'s envelope_lo, envelope_hi,
 * envelope_flags and cls from r's per-element envelopes and classes
 * (allocating the first three); nothing otherwise.  Free them with
 * usc__check_envelope_arrays_free, also after a failure.
 */
usc_status usc__check_envelope_arrays(const usc_check_report *r,
				      usc_results_output *outs,
				      usc_error *err);
void usc__check_envelope_arrays_free(const usc_check_report *r,
				     usc_results_output *outs);

/*
 * A kernel file as check, bisect and signature read it: one module (any
 * other count is an error naming the file), the fusion isolated when one
 * is named (docs/kernels.md), verified.  *out is set whenever the file
 * parsed, also when verification fails (the caller destroys it).
 */
/*
 * How many times a run evaluates each computation, capped at 2
 * ("several"), added into runs[computation index] for c called n times:
 * the entry once, a fusion's or call's body as often as its caller, any
 * other called computation (a reduce's to_apply, a map or scatter body)
 * once per element, so several.  Only instructions of a computation
 * evaluated once have values that form one tensor (what bisect can
 * compare and explain can keep).  runs starts zeroed; depth is 0.
 */
void usc__computation_runs(const usc_hlo_computation *c, unsigned n,
			   unsigned char *runs, int depth);

usc_status usc__load_kernel(const char *path, const char *fusion,
			    usc_hlo_file **out, usc_error *err);

#endif /* USC_ANALYZE_CHECK_INTERNAL_H */
