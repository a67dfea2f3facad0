/*
 * ulpscope: certified error analysis of fused ML kernels.
 *
 * The umbrella header: it includes every public header but dtype_mpfr.h,
 * which brings <mpfr.h> with it.  Each concern has its own header under
 * ulpscope/.
 */
#ifndef ULPSCOPE_H
#define ULPSCOPE_H

#include "ulpscope/status.h"
#include "ulpscope/limits.h"
#include "ulpscope/dtype.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"
#include "ulpscope/tensor.h"
#include "ulpscope/eval.h"
#include "ulpscope/results.h"
#include "ulpscope/profile.h"
#include "ulpscope/classify.h"
#include "ulpscope/check.h"
#include "ulpscope/attribution.h"
#include "ulpscope/bisect.h"
#include "ulpscope/signature.h"
#include "ulpscope/explain.h"
#include "ulpscope/bind.h"
#include "ulpscope/audit.h"
#include "ulpscope/report.h"
#include "ulpscope/gen.h"
#include "ulpscope/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *usc_version(void);

/* The result of a built-in self-check of one format. */
typedef struct usc_selfcheck_result {
	unsigned long checked; /* values compared */
	unsigned long failed;  /* of which wrong */
	char first_failure[256];
} usc_selfcheck_result;

/*
 * Checks format t against known values (published tables, recorded from
 * ml_dtypes by tools/gen_format_tables.py and compiled in) and against
 * identities (every code decodes and re-encodes to itself).  USC_EINVAL
 * for a type that is not a real floating format.
 */
usc_status usc_format_selfcheck(usc_dtype t, usc_selfcheck_result *out);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_H */
