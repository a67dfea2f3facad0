/*
 * The report's writer: markup through printf, text from the result file
 * through an escaper, numbers in two forms (exact for data attributes,
 * short for people).  Errors are sticky: the first failed write marks
 * the page failed, and report.c reports it once at the end.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "report/report_internal.h"

void usc__html_printf(usc__html *h, const char *fmt, ...)
{
	va_list ap;

	if (h->failed)
		return;
	va_start(ap, fmt);
	if (vfprintf(h->f, fmt, ap) < 0)
		h->failed = true;
	va_end(ap);
}

static void put(usc__html *h, const char *s, size_t n)
{
	if (!h->failed && n && fwrite(s, 1, n, h->f) != n)
		h->failed = true;
}

void usc__html_textn(usc__html *h, const char *s, size_t n)
{
	size_t run = 0;

	/* Copies runs of plain bytes whole; replaces the rest one by one. */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n' &&
			     c != '\r') || c == 0x7f)
				rep = "&#xFFFD;";
		}
		if (!rep)
			continue;
		put(h, s + run, i - run);
		put(h, rep, strlen(rep));
		run = i + 1;
	}
	put(h, s + run, n - run);
}

void usc__html_text(usc__html *h, const char *s)
{
	if (s)
		usc__html_textn(h, s, strlen(s));
}

void usc__html_num(usc__html *h, double x)
{
	if (isnan(x))
		usc__html_printf(h, "nan");
	else if (isinf(x))
		usc__html_printf(h, x > 0 ? "inf" : "-inf");
	else
		usc__html_printf(h, "%.17g", x);
}

void usc__html_num_short(usc__html *h, double x)
{
	if (isnan(x))
		usc__html_printf(h, "NaN");
	else if (isinf(x))
		usc__html_printf(h, x > 0 ? "&#8734;" : "&#8722;&#8734;");
	else
		usc__html_printf(h, "%.4g", x);
}
