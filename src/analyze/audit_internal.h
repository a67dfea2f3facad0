/*
 * Internal: the op-by-op view of an audit (src/analyze/audit_ops.c).
 */
#ifndef USC_ANALYZE_AUDIT_INTERNAL_H
#define USC_ANALYZE_AUDIT_INTERNAL_H

#include "ulpscope/audit.h"
#include "ulpscope/hlo.h"

/*
 * Attributes both modules' rounding on the inputs in (nin of them, one
 * sample) and fills r->ops and r->op_count with the matched rounding
 * points.  When the attribution cannot run on a module (more rounding
 * ops than req->ops_max, an op it does not support), r->ops_note says
 * why and the view stays empty: that is not the audit's failure.
 */
usc_status usc__audit_ops(const usc_audit_request *req,
			  const usc_hlo_module *before,
			  const usc_hlo_module *after, usc_tensor *const *in,
			  size_t nin, usc_audit_report *r, usc_error *err);

/*
 * Judges one output's figures (before and after filled) against t: the
 * verdict's rule (docs/audit.md), setting f->verdict and f->reason.
 */
void usc__audit_judge(usc_audit_figures *f, double t);

#endif /* USC_ANALYZE_AUDIT_INTERNAL_H */
