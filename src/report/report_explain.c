/*
 * Explain trees of the worst elements in the report (report --explain N,
 * docs/report.md).  The result file holds no inputs, so a tree can only
 * be computed when the case the kernel was checked from is at hand: the
 * kernel's recorded HLO file sits in a case directory (docs/cases.md,
 * with its case.json) that still exists.  The tree is then the one
 * "ulpscope explain CASE --output I --flat --element K" prints, under the
 * profile the file's verdict came from.  A tree that cannot be made (no
 * case, an op explain does not support) is a note, never a failed report.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_internal.h"
#include "ulpscope/check.h"
#include "ulpscope/explain.h"
#include "ulpscope/profile.h"

/*
 * The case directory of a kernel's HLO file, into dir: its parent, when
 * that holds a case.json.  false otherwise.
 */
static bool case_of(const char *hlo_file, char *dir, size_t size)
{
	const char *slash = hlo_file ? strrchr(hlo_file, '/') : NULL;
	char json[4096 + 16];
	size_t n;

	if (!hlo_file || !hlo_file[0])
		return false;
	n = slash ? (size_t)(slash - hlo_file) : 0;
	if (n + 1 > size || n + 16 > sizeof json)
		return false;
	if (slash) {
		memcpy(dir, hlo_file, n);
		dir[n] = '\0';
	} else {
		snprintf(dir, size, ".");
	}
	snprintf(json, sizeof json, "%s/case.json", dir);
	return access(json, R_OK) == 0;
}

/* One element's tree as text (malloc'd), or a reason in why. */
static char *tree_text(const char *dir, const usc_profile *prof,
		       const char *kernel, size_t out_i, uint64_t flat,
		       usc_error *why)
{
	usc_explain_request req = usc_explain_request_default();
	usc_explain_report *r = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	req.case_dir = dir;
	req.check.profile = prof;
	req.output = out_i;
	req.flat = true;
	req.flat_index = flat;
	if (usc_explain_run(&req, &r, why) != USC_OK)
		return NULL;
	if (strcmp(r->check->kernel_name, kernel) != 0) {
		usc__fail(why, USC_EINVAL,
			  "the case at %s is now kernel %s, not %s", dir,
			  r->check->kernel_name, kernel);
		usc_explain_report_destroy(r);
		return NULL;
	}
	/* open_memstream grows its buffer with malloc, hence free below. */
	f = open_memstream(&buf, &len);
	if (f) {
		usc_explain_print(f, r);
		if (fclose(f) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	if (!buf)
		usc__fail(why, USC_ENOMEM, "out of memory for the tree");
	usc_explain_report_destroy(r);
	return buf;
}

void usc__report_explain(usc__html *h, const usc_results_kernel_info *ki,
			 size_t out_i, const uint64_t *top, size_t n,
			 const usc_report_options *opt)
{
	char dir[4096];
	usc_profile prof;
	bool have_prof = false;
	usc_error why;

	if (!case_of(ki->hlo_file, dir, sizeof dir)) {
		usc__html_printf(h, "<p class=\"note\">No explain trees: the "
				    "kernel's HLO file ");
		usc__html_text(h, ki->hlo_file);
		usc__html_printf(h, " is not in a case directory at hand "
				    "(docs/cases.md).</p>");
		return;
	}
	if (ki->profile[0] &&
	    usc_profile_resolve(ki->profile, &prof, &why) == USC_OK)
		have_prof = true;
	for (size_t j = 0; j < n && j < opt->explain; j++) {
		char *text = tree_text(dir, have_prof ? &prof : NULL, ki->name,
				       out_i, top[j], &why);

		usc__html_printf(h, "<details class=\"explain\" "
				    "data-output=\"%zu\" data-flat=\"%llu\"%s>"
				    "<summary>computation tree of element "
				    "%llu</summary>",
				 out_i, (unsigned long long)top[j],
				 j == 0 ? " open" : "",
				 (unsigned long long)top[j]);
		if (text) {
			usc__html_printf(h, "<pre class=\"tree\">");
			usc__html_text(h, text);
			usc__html_printf(h, "</pre>");
			free(text);
		} else {
			usc__html_printf(h, "<p class=\"note\">No tree: ");
			usc__html_text(h, why.message);
			usc__html_printf(h, "</p>");
		}
		usc__html_printf(h, "</details>");
	}
}
