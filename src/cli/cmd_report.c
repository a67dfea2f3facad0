/*
 * ulpscope report: the HTML report of a result file or a batch index
 * (docs/report.md), a thin layer over usc_report_write.  Exit status: 0
 * the report was written, 1 a bad input or an unwritable output, 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/report.h"

static const char usage_text[] =
	"usage: ulpscope report RESULTS.h5 -o REPORT.html [--detail N] "
	"[--worst K] [--grid G] [--hlo-lines N] [--explain N]\n"
	"'ulpscope report --help' lists the numeric ranges";

enum {
	REPORT_DETAIL,
	REPORT_WORST,
	REPORT_GRID,
	REPORT_HLO_LINES,
	REPORT_EXPLAIN
};

const usc_cli_num_opt usc_cli_report_nums[] = {
	[REPORT_DETAIL] = USC_CLI_INT_OPT("--detail", "N", 0,
					  USC_REPORT_DETAIL_MAX,
					  "kernels given a section of their "
					  "own, the worst first for a batch "
					  "index (50)"),
	[REPORT_WORST] = USC_CLI_INT_OPT("--worst", "K", 0,
					 USC_REPORT_WORST_MAX,
					 "worst elements listed per output "
					 "(10)"),
	[REPORT_GRID] = USC_CLI_INT_OPT("--grid", "G", 1, USC_REPORT_GRID_MAX,
					"cells per side of the heat and class "
					"maps at most; larger outputs are "
					"down-sampled by max (64)"),
	[REPORT_HLO_LINES] = USC_CLI_INT_OPT("--hlo-lines", "N", 0, 10000000,
					     "HLO lines listed per kernel "
					     "(2000)"),
	[REPORT_EXPLAIN] = USC_CLI_INT_OPT("--explain", "N", 0,
					   USC_REPORT_WORST_MAX,
					   "explain trees of the N worst "
					   "elements per output, computed from "
					   "the kernel's case directory when "
					   "at hand (0)"),
	USC_CLI_NUM_END,
};

int usc_cli_report(int argc, char **argv)
{
	usc_report_options o = usc_report_options_default();
	const char *in = NULL, *out = NULL;
	usc_error err;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		usc_cli_num v;
		int k;

		if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) &&
		    i + 1 < argc) {
			out = argv[++i];
			continue;
		}
		k = usc_cli_num_arg(usc_cli_report_nums, argc, argv, &i, &v);
		if (k == USC_CLI_NUM_BAD)
			return USC_EXIT_USAGE;
		if (k == REPORT_DETAIL)
			o.detail_max = (size_t)v.u;
		else if (k == REPORT_WORST)
			o.worst = (size_t)v.u;
		else if (k == REPORT_GRID)
			o.grid = (size_t)v.u;
		else if (k == REPORT_HLO_LINES)
			o.hlo_lines = (size_t)v.u;
		else if (k == REPORT_EXPLAIN)
			o.explain = (size_t)v.u;
		else if (a[0] == '-' && a[1]) {
			usc_cli_error("unknown or incomplete option '%s'\n%s",
				      a, usage_text);
			return USC_EXIT_USAGE;
		} else if (!in)
			in = a;
		else {
			usc_cli_error("unexpected argument '%s'\n%s", a,
				      usage_text);
			return USC_EXIT_USAGE;
		}
	}
	if (!in || !out) {
		usc_cli_error("%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if (usc_report_write(in, out, &o, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	printf("report written to %s\n", out);
	return USC_EXIT_OK;
}
