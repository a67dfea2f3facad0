/*
 * The report's plots, drawn as SVG text.  Plots are drawn here rather than
 * by a plotting library because the page must stay small for 10^4 kernels
 * and open without anything else (docs/report.md, "Why SVG from C"): a
 * histogram is ~70 rectangles, and a map is one path per color level
 * whose runs of equal cells are merged, so no plot grows with the tensor
 * (the map's grid is capped, larger tensors are down-sampled by max).
 *
 * Every mark carries data attributes with the figure it shows (a bar its
 * count, a path its level), so a test or a script reads the numbers from
 * the DOM instead of measuring pixels.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "report/report_internal.h"

size_t usc__hist_bin(double x)
{
	double a = fabs(x);
	int e;

	if (a == 0)
		return 0;
	if (a < ldexp(1, USC__HIST_LO))
		return 1;
	if (a >= ldexp(1, USC__HIST_HI))
		return USC__HIST_BINS - 1;
	/* a = m * 2^e with m in [0.5, 1): floor(log2 a) = e - 1. */
	(void)frexp(a, &e);
	return (size_t)(2 + (e - 1) - USC__HIST_LO);
}

/*
 * The upper edges of heat levels 1 .. 8 (level 9: above the last one,
 * infinities included): half an ulp is what one correct rounding may
 * cost, 1 and 2 what a few roundings cost, the rest coarser steps of a
 * growing error.
 */
static const double heat_edges[] = {0.5, 1, 2, 4, 16, 64, 256, 4096};

uint8_t usc__heat_level(double x)
{
	double a = fabs(x);

	if (isnan(x))
		return USC__HEAT_NAN;
	if (a == 0)
		return 0;
	for (size_t i = 0; i < USC__ARRAY_LEN(heat_edges); i++)
		if (a <= heat_edges[i])
			return (uint8_t)(i + 1);
	return (uint8_t)(USC__ARRAY_LEN(heat_edges) + 1);
}

/* The histogram's frame, in SVG user units. */
enum { HIST_W = 640, HIST_H = 180, HIST_L = 40, HIST_B = 34, HIST_T = 8 };

static double hist_x(double bin)
{
	return HIST_L + bin * (HIST_W - HIST_L - 8) / USC__HIST_BINS;
}

static void hist_label(usc__html *h, size_t b)
{
	if (b == 0)
		usc__html_printf(h, "0");
	else if (b == 1)
		usc__html_printf(h, "&lt;2^%d", USC__HIST_LO);
	else if (b == USC__HIST_BINS - 1)
		usc__html_printf(h, "&#8805;2^%d", USC__HIST_HI);
	else
		usc__html_printf(h, "2^%d", (int)b - 2 + USC__HIST_LO);
}

void usc__svg_histogram(usc__html *h, const uint64_t *ref_bins,
			const uint64_t *oracle_bins, uint64_t ref_nan,
			uint64_t oracle_nan, double envelope_halfwidth)
{
	static const char *const names[2] = {"reference", "oracle"};

	usc__svg_histogram_of(h, names, ref_bins, oracle_bins, ref_nan,
			      oracle_nan, envelope_halfwidth);
}

void usc__svg_histogram_of(usc__html *h, const char *const names[2],
			   const uint64_t *ref_bins,
			   const uint64_t *oracle_bins, uint64_t ref_nan,
			   uint64_t oracle_nan, double envelope_halfwidth)
{
	const uint64_t *series[2] = {ref_bins, oracle_bins};
	uint64_t top = 1;
	double bw = (double)(HIST_W - HIST_L - 8) / USC__HIST_BINS;
	double plot_h = HIST_H - HIST_B - HIST_T;

	for (size_t s = 0; s < 2; s++)
		for (size_t b = 0; b < USC__HIST_BINS; b++)
			if (series[s][b] > top)
				top = series[s][b];
	usc__html_printf(h,
			 "<svg class=\"hist\" viewBox=\"0 0 %d %d\" "
			 "width=\"%d\" height=\"%d\" role=\"img\">"
			 "<title>|ulp| error histogram, log scales</title>",
			 HIST_W, HIST_H, HIST_W, HIST_H);
	/* The count axis: powers of ten up to the largest bar. */
	for (uint64_t p = 1; p <= top; p *= 10) {
		double y = HIST_T + plot_h -
			   plot_h * log10((double)p + 1) / log10((double)top + 1);

		usc__html_printf(h,
				 "<line class=\"ax\" x1=\"%d\" x2=\"%d\" "
				 "y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" "
				 "y=\"%.1f\" class=\"tl\">%llu</text>",
				 HIST_L, HIST_W - 8, y, y, HIST_L - 3, y + 3,
				 (unsigned long long)p);
		if (p > UINT64_MAX / 10)
			break;
	}
	for (size_t s = 0; s < 2; s++)
		for (size_t b = 0; b < USC__HIST_BINS; b++) {
			uint64_t n = series[s][b];
			double bh = n ? plot_h * log10((double)n + 1) /
						log10((double)top + 1)
				      : 0;

			if (!n)
				continue;
			usc__html_printf(h,
					 "<rect class=\"s%zu\" data-series=\"%s\" "
					 "data-bin=\"%zu\" data-n=\"%llu\" "
					 "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
					 "height=\"%.1f\"><title>",
					 s, names[s], b, (unsigned long long)n,
					 hist_x((double)b) + s * bw / 2,
					 HIST_T + plot_h - bh, bw / 2, bh);
			usc__html_printf(h, "%s: %llu at ", names[s],
					 (unsigned long long)n);
			hist_label(h, b);
			usc__html_printf(h, "</title></rect>");
		}
	for (size_t b = 0; b < USC__HIST_BINS; b += 4) {
		usc__html_printf(h, "<text class=\"tb\" x=\"%.1f\" y=\"%d\">",
				 hist_x((double)b) + bw / 2, HIST_H - HIST_B + 14);
		hist_label(h, b);
		usc__html_printf(h, "</text>");
	}
	if (!isnan(envelope_halfwidth) && envelope_halfwidth > 0 &&
	    !isinf(envelope_halfwidth)) {
		/* Where the half-width falls on the log axis, in bins. */
		double pos = 2 + log2(envelope_halfwidth) - USC__HIST_LO;

		if (pos < 1)
			pos = 1;
		if (pos > USC__HIST_BINS - 1)
			pos = USC__HIST_BINS - 1;
		usc__html_printf(h,
				 "<line class=\"env\" data-halfwidth=\"");
		usc__html_num(h, envelope_halfwidth);
		usc__html_printf(h,
				 "\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
				 "y2=\"%.1f\"><title>envelope median "
				 "half-width ",
				 hist_x(pos), hist_x(pos), HIST_T,
				 HIST_T + plot_h);
		usc__html_num_short(h, envelope_halfwidth);
		usc__html_printf(h, " ulp</title></line>");
	}
	usc__html_printf(h,
			 "<text class=\"tb\" x=\"%d\" y=\"%d\">|ulp| error "
			 "(log2 bins); NaN: %s %llu, %s %llu"
			 "</text></svg>",
			 HIST_W / 2, HIST_H - 4, names[0],
			 (unsigned long long)ref_nan, names[1],
			 (unsigned long long)oracle_nan);
}

void usc__svg_grid(usc__html *h, const char *kind, const uint8_t *cells,
		   size_t rows, size_t cols, size_t block_rows,
		   size_t block_cols, size_t levels, const char *prefix)
{
	/* Displayed at most 320 pixels wide and high, at least 12 high. */
	double px = 320.0 / (double)cols;
	double width = 320, height;

	if (cols < 32)
		px = 10, width = 10.0 * (double)cols;
	height = px * (double)rows;
	if (height > 320)
		height = 320;
	if (height < 12)
		height = 12;
	usc__html_printf(h,
			 "<svg class=\"grid\" data-kind=\"%s\" data-rows=\"%zu\" "
			 "data-cols=\"%zu\" data-block=\"%zu %zu\" "
			 "viewBox=\"0 0 %zu %zu\" width=\"%.0f\" "
			 "height=\"%.0f\" preserveAspectRatio=\"none\" "
			 "shape-rendering=\"crispEdges\" role=\"img\">"
			 "<title>%s map: %zu x %zu cells of %zu x %zu "
			 "elements</title>",
			 kind, rows, cols, block_rows, block_cols, cols, rows,
			 width, height, kind, rows, cols, block_rows,
			 block_cols);
	for (size_t lv = 0; lv < levels; lv++) {
		bool open = false;

		for (size_t r = 0; r < rows; r++) {
			const uint8_t *row = cells + r * cols;

			for (size_t c = 0; c < cols;) {
				size_t e = c;

				if (row[c] != lv) {
					c++;
					continue;
				}
				while (e < cols && row[e] == lv)
					e++;
				if (!open) {
					usc__html_printf(
						h,
						"<path class=\"%s%zu\" "
						"data-level=\"%zu\" d=\"",
						prefix, lv, lv);
					open = true;
				}
				usc__html_printf(h, "M%zu %zuh%zuv1h-%zuz", c,
						 r, e - c, e - c);
				c = e;
			}
		}
		if (open)
			usc__html_printf(h, "\"/>");
	}
	usc__html_printf(h, "</svg>");
}

void usc__svg_bar(usc__html *h, double share)
{
	double w = isnan(share) ? 0 : share < 0 ? 0 : share > 1 ? 1 : share;

	usc__html_printf(h,
			 "<svg class=\"bar\" viewBox=\"0 0 200 10\" "
			 "width=\"200\" height=\"10\"><rect width=\"200\" "
			 "height=\"10\" class=\"bg\"/><rect width=\"%.1f\" "
			 "height=\"10\" class=\"fg\"/></svg>",
			 200 * w);
}
