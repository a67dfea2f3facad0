/*
 * The HTML report's parts (docs/report.md).
 *
 * report.c drives: it opens the result file with the result reader, tells
 * a batch index from a plain result file, writes the page's head, the
 * summary and, for an index, the ranking, then one section per kernel
 * shown in detail (report_kernel.c), and renames the page into place.
 * report_svg.c draws the plots as SVG text from arrays it is handed, and
 * report_html.c is the writer every part prints through: a FILE with a
 * sticky error, and the escaping of text taken from the file.
 *
 * Nothing here holds more than one kernel's arrays at a time, so the
 * report's memory is that of its largest kernel, whatever the file's
 * kernel count.  A failure to write is sticky in usc__html and reported
 * once, at the end, by report.c; a failure to read stops the report.
 */
#ifndef USC_REPORT_INTERNAL_H
#define USC_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ulpscope/classify.h"
#include "ulpscope/report.h"
#include "ulpscope/results.h"

#include "store/h5_door.h"

/* The page being written. */
typedef struct usc__html {
	FILE *f;
	bool failed; /* a write failed; the page is abandoned at the end */
} usc__html;

/* Raw markup, printf-style (never text from the file). */
void usc__html_printf(usc__html *h, const char *fmt, ...) USC__PRINTF(2, 3);

/*
 * Text from the file, escaped for element content and for attribute
 * values in double quotes: & < > " ' become references, and control
 * characters other than tab, newline and carriage return (which HTML
 * does not allow) become U+FFFD.
 */
void usc__html_text(usc__html *h, const char *s);
/* The same for n bytes of s. */
void usc__html_textn(usc__html *h, const char *s, size_t n);

/*
 * A number for a data attribute, read back by tests and scripts:
 * shortest %.17g form, "nan", "inf" or "-inf" (Python's float() reads
 * them all).
 */
void usc__html_num(usc__html *h, double x);
/* A number for people: 4 significant digits, NaN and infinities named. */
void usc__html_num_short(usc__html *h, double x);

/* ---- Plots (report_svg.c). ---- */

/*
 * The histogram's bins of |ulp| errors: bin 0 holds exact zeros, bin 1
 * the values below 2^USC__HIST_LO, bin 2 + k the values in
 * [2^(USC__HIST_LO + k), 2^(USC__HIST_LO + k + 1)), the last finite bin
 * everything from 2^USC__HIST_HI up (infinities included); NaN is
 * counted apart.
 */
#define USC__HIST_LO (-8)
#define USC__HIST_HI 24
#define USC__HIST_BINS (2 + (USC__HIST_HI - USC__HIST_LO) + 1)

/* The bin of |x| (x not NaN). */
size_t usc__hist_bin(double x);

/*
 * The histograms of |ulp| against the reference and against the oracle,
 * log count over log |ulp|, with a marker at the envelope's median
 * half-width in ulps (NaN: none).  Each bar carries data-series, data-bin
 * and data-n for tests.
 */
void usc__svg_histogram(usc__html *h, const uint64_t *ref_bins,
			const uint64_t *oracle_bins, uint64_t ref_nan,
			uint64_t oracle_nan, double envelope_halfwidth);
/* The same with other names for the two series ("before", "after"). */
void usc__svg_histogram_of(usc__html *h, const char *const names[2],
			   const uint64_t *ref_bins,
			   const uint64_t *oracle_bins, uint64_t ref_nan,
			   uint64_t oracle_nan, double envelope_halfwidth);

/*
 * A map of levels over a rows x cols grid (each 0 .. levels-1, or
 * UINT8_MAX for "no data"), drawn as one path per level of runs of equal
 * cells, colored by the CSS classes prefix0 .. prefix<levels-1>.
 * block_rows x block_cols is how many elements each cell stands for.
 */
void usc__svg_grid(usc__html *h, const char *kind, const uint8_t *cells,
		   size_t rows, size_t cols, size_t block_rows,
		   size_t block_cols, size_t levels, const char *prefix);

/*
 * A heat level of |ulp| for the heat map: 0 an exact zero, 1 .. 8 up to
 * the edges 0.5, 1, 2, 4, 16, 64, 256, 4096 (each included), 9 above
 * (infinities too), USC__HEAT_NAN for NaN (docs/report.md).
 */
#define USC__HEAT_LEVELS 11
#define USC__HEAT_NAN 10
uint8_t usc__heat_level(double x);

/* One horizontal bar of the op budget: a share in [0, 1] (clamped). */
void usc__svg_bar(usc__html *h, double share);

/* ---- The page's fixed parts (report_page.c). ---- */

/* From the doctype to the opening body, the style sheet inline. */
void usc__report_head(usc__html *h, const char *title);
/* The colors of the maps and the histograms' series. */
void usc__report_legend(usc__html *h);
/* The script and the closing tags. */
void usc__report_tail(usc__html *h);

/* ---- Kernel sections (report_kernel.c). ---- */

/* One kernel's section: id is its anchor ("k3"). */
usc_status usc__report_kernel(usc__html *h, usc_results_reader *r,
			      const char *results_path, const char *kernel,
			      size_t id, const usc_report_options *o,
			      usc_error *err);

/* The kernel's signatures, when present (report_signatures.c). */
usc_status usc__report_signatures(usc__html *h, usc_results_reader *r,
				  const char *kernel, usc_error *err);

/* ---- Explain trees (report_explain.c). ---- */

/*
 * The trees of the first opt->explain of output out_i's n worst elements
 * (top, worst first), computed from the kernel's case directory when it
 * is at hand; a note otherwise.  Never fails the report.
 */
void usc__report_explain(usc__html *h, const usc_results_kernel_info *ki,
			 size_t out_i, const uint64_t *top, size_t n,
			 const usc_report_options *opt);

/* ---- Audits (report_audits.c). ---- */

/*
 * The section of the audits under /audits (docs/results.md), when the
 * file holds any: per audit its verdict, the function/precision split and
 * the envelope widths, per output the before/after figures and the
 * histograms of |ulp| before and after.  A group that is not an audit of
 * that layout (another kind of record) gets a line saying it was skipped.
 */
usc_status usc__report_audits(usc__html *h, usc_results_reader *r,
			      usc_error *err);

/*
 * One single audit's group g (name and anchor id a<id> on the page): its
 * section, or nothing written and the reason it is not an audit of that
 * layout.
 */
usc_status usc__report_audit_group(usc__html *h, usc__h5_file *f,
				   const char *g, const char *name, size_t id,
				   usc_error *err);

/* ---- Pipelines of audits (report_pipeline.c). ---- */

/*
 * A pipeline's group g (docs/audit.md, "The result file"): its
 * attributes, the stage table, the per-pass precision plot and the
 * descent (anchor a<descent_id>).  Nothing written and the reason when
 * its attributes are not a pipeline's; a stage table or descent that does
 * not read gets an error line naming it, and USC_OK.
 */
usc_status usc__report_pipeline(usc__html *h, usc__h5_file *f, const char *g,
				const char *name, size_t id, size_t descent_id,
				usc_error *err);

#endif /* USC_REPORT_INTERNAL_H */
