/*
 * ulpscope: the HTML report of a result file (docs/report.md).
 *
 * usc_report_write reads a result file (ulpscope check --out, or the
 * index a batch or a merge writes) through the result reader and writes
 * one self-contained HTML page: inline CSS, SVG drawn here, a few lines
 * of inline JavaScript that sort and filter the tables, nothing fetched
 * from anywhere, so the page opens from disk and can be mailed around.
 *
 * What the page holds: a summary table of every kernel (verdict, class
 * counts, worst |ulp|, worst element); for a batch index, the verdict
 * counts, the ranking of kernels (usc_batch_rank) and the table of
 * cases; and for the first detail_max kernels (for an index: the worst
 * ones) a section each with the |ulp| histograms, a heat map and a class
 * map of every output, the worst elements, the op error budget, the HLO
 * listing shaded by each op's share, and the defect signatures, each
 * where the file holds what it needs.
 *
 * Every text taken from the file (names, HLO, messages, paths) is
 * escaped for HTML.  The page is written to "OUT.tmp.PID" and renamed
 * over OUT only when complete, so a failure never leaves half a report.
 */
#ifndef ULPSCOPE_REPORT_H
#define ULPSCOPE_REPORT_H

#include <stddef.h>

#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bounds of the options (the CLI's ranges). */
#define USC_REPORT_DETAIL_MAX 100000
#define USC_REPORT_WORST_MAX 1000
#define USC_REPORT_GRID_MAX 256

typedef struct usc_report_options {
	/* Kernels given a section of their own (the rest are rows of the
	 * summary); for an index, the worst first.  Default 50. */
	size_t detail_max;
	/* Worst elements listed per output.  Default 10. */
	size_t worst;
	/* The heat and class maps have at most grid x grid cells; a larger
	 * output is down-sampled, each cell showing its block's maximum.
	 * Default 64, at least 1, at most USC_REPORT_GRID_MAX. */
	size_t grid;
	/* HLO lines listed per kernel before the listing is cut.  Default
	 * 2000. */
	size_t hlo_lines;
	/*
	 * Worst elements per output whose explain tree is shown (0: none,
	 * the page gives the command instead; at most USC_REPORT_WORST_MAX).
	 * A tree is computed from the kernel's case directory, when its HLO
	 * file is in one that still exists; each costs a check of the
	 * kernel and its attribution.
	 */
	size_t explain;
} usc_report_options;

usc_report_options usc_report_options_default(void);

/*
 * Writes the report of the result file at results to out.  USC_EINVAL
 * for options out of range or an out that is a directory; USC_EIO when
 * out cannot be written; the reader's errors (USC_EPARSE,
 * USC_EUNSUPPORTED, USC_ENOTFOUND, USC_EIO) for a results file that is
 * not a complete result file or is damaged, each naming the file.
 */
usc_status usc_report_write(const char *results, const char *out,
			    const usc_report_options *o, usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_REPORT_H */
