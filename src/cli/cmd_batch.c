/*
 * ulpscope batch and ulpscope merge (docs/batch.md): every case under
 * some roots, checked in parallel, resumably, and ranked; and the merge
 * of a sharded batch's indexes.  Exit status: 0 every case ran and none
 * is worse than legit (or unclassified), 3 a suspicious case, 4 a defect,
 * 5 an undecided case, 6 a case that could not be checked (error,
 * timeout, out of memory, crash) and no defect; 1 the batch itself
 * failed, 2 usage.  A defect outranks everything: a gate on exit 4 sees
 * it even when other cases failed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ulpscope/batch.h"

static const char usage_text[] =
	"usage: ulpscope batch ROOT... --out RESULTS.h5 [-j N] "
	"[--profile NAME|FILE | --no-profile] [--attribute] "
	"[--case-timeout SECONDS] [--case-memory MB] "
	"[--cases-per-worker N] [--shard K/N] "
	"[--retry-failed] [--restart] [--force] [--top K] [--json] "
	"[--quiet]\n"
	"a ROOT is a directory of cases, a list file, or an XLA dump "
	"directory (imported into RESULTS.h5.dumps/ first; docs/dumps.md)\n"
	"'ulpscope batch --help' lists the numeric ranges";

static const char merge_usage[] =
	"usage: ulpscope merge SHARD.h5... -o RESULTS.h5 [--allow-partial] "
	"[--force] [--top K] [--json]";

enum { EXIT_SUSPICIOUS = 3, EXIT_DEFECT = 4, EXIT_UNDECIDED = 5,
       EXIT_FAILED_CASES = 6 };

enum { BATCH_JOBS, BATCH_JOBS_LONG, BATCH_TIMEOUT, BATCH_MEMORY,
       BATCH_PER_WORKER, BATCH_TOP };

const usc_cli_num_opt usc_cli_batch_nums[] = {
	[BATCH_JOBS] = USC_CLI_INT_OPT("-j", "N", 1, 1024,
				       "cases checked at once (the online "
				       "cores); -jN works too"),
	[BATCH_JOBS_LONG] = USC_CLI_INT_OPT("--jobs", "N", 1, 1024,
					    "the same as -j"),
	[BATCH_TIMEOUT] = USC_CLI_REAL_OPT("--case-timeout", "SECONDS", 0,
					   1e6, false,
					   "kill a case still running after "
					   "this long (0: never)"),
	[BATCH_MEMORY] = USC_CLI_INT_OPT("--case-memory", "MB", 0, 16777216,
					 "kill a case using more memory than "
					 "this (0: no limit)"),
	[BATCH_PER_WORKER] = USC_CLI_INT_OPT("--cases-per-worker", "N", 1,
					     1000000,
					     "cases one worker process checks "
					     "before a fresh one replaces it "
					     "(64; 1: a process per case)"),
	[BATCH_TOP] = USC_CLI_INT_OPT("--top", "K", 0, 100000,
				      "rows of each ranking table (20)"),
	USC_CLI_NUM_END,
};

const usc_cli_num_opt usc_cli_merge_nums[] = {
	USC_CLI_INT_OPT("--top", "K", 0, 100000,
			"rows of each ranking table (20)"),
	USC_CLI_NUM_END,
};

/* --shard K/N, 1 <= K <= N <= 1000000. */
static bool parse_shard(const char *s, usc_batch_options *o)
{
	const char *slash = strchr(s, '/');
	char k[32];
	uint64_t K, N;

	if (slash && (size_t)(slash - s) < sizeof k) {
		memcpy(k, s, (size_t)(slash - s));
		k[slash - s] = 0;
		if (usc_cli_parse_u64(k, false, &K) &&
		    usc_cli_parse_u64(slash + 1, false, &N) && K >= 1 &&
		    K <= N && N <= 1000000) {
			o->shard_index = (size_t)K - 1;
			o->shard_count = (size_t)N;
			return true;
		}
	}
	usc_cli_error("--shard expects K/N, the K-th of N shards with "
		      "1 <= K <= N <= 1000000, found '%s'",
		      s);
	return false;
}

/* One line of progress: a bar redrawn on a terminal, else plain lines. */
typedef struct progress_state {
	bool tty;
	bool drawn;
} progress_state;

static void progress(const usc_batch_progress *p, void *data)
{
	progress_state *s = data;
	size_t fresh = p->done - p->resumed;
	double rate = p->elapsed > 0 ? (double)fresh / p->elapsed : 0;
	double eta = rate > 0 ? (double)(p->total - p->done) / rate : NAN;
	char eta_s[32];

	if (isnan(eta))
		snprintf(eta_s, sizeof eta_s, "--");
	else
		snprintf(eta_s, sizeof eta_s, "%.0fs", eta);
	fprintf(stderr,
		"%s[%zu/%zu] %.1f cases/s, ETA %s, %zu running, %zu defect, "
		"%zu suspicious, %zu failed%s",
		s->tty ? "\r\033[K" : "", p->done, p->total, rate, eta_s,
		p->running, p->defects, p->suspicious, p->failed,
		s->tty ? "" : "\n");
	s->drawn = s->tty;
	fflush(stderr);
}

static int exit_of(const usc_batch_result *b)
{
	bool defect = false, failed = false, susp = false, und = false;

	for (size_t i = 0; i < b->row_count; i++) {
		const usc_batch_row *r = &b->rows[i];

		if (r->status != USC_BATCH_OK)
			failed = true;
		else if (strcmp(r->verdict, "defect") == 0)
			defect = true;
		else if (strcmp(r->verdict, "suspicious") == 0)
			susp = true;
		else if (strcmp(r->verdict, "undecided") == 0)
			und = true;
	}
	return defect	? EXIT_DEFECT
	       : failed ? EXIT_FAILED_CASES
	       : susp	? EXIT_SUSPICIOUS
	       : und	? EXIT_UNDECIDED
			: USC_EXIT_OK;
}

static void json_row_brief(const usc_batch_row *r)
{
	printf("{\"index\": %" PRIu64 ", \"path\": ", r->index);
	usc_cli_json_str(r->path);
	printf(", \"kernel\": ");
	usc_cli_json_str(r->kernel);
	printf(", \"status\": ");
	usc_cli_json_str(usc_batch_status_name(r->status));
	printf(", \"verdict\": ");
	usc_cli_json_str(r->verdict);
	printf(", \"max_ulp_oracle\": ");
	usc_cli_json_num(r->max_ulp_oracle);
	printf(", \"message\": ");
	usc_cli_json_str(r->message);
	printf("}");
}

static void print_json(const char *out, const usc_batch_result *b,
		       const usc_batch_kernel_rank *k, size_t nk,
		       const usc_batch_op_rank *o, size_t no, size_t top,
		       int rc)
{
	size_t st[USC_BATCH_STATUS_COUNT] = {0};
	bool first = true;

	for (size_t i = 0; i < b->row_count; i++)
		st[b->rows[i].status]++;
	printf("{\"index\": ");
	usc_cli_json_str(out);
	printf(", \"cases\": %zu, \"case_total\": %zu, \"shard\": "
	       "[%zu, %zu], \"resumed\": %zu, \"seconds\": ",
	       b->row_count, b->case_total, b->shard_index + 1,
	       b->shard_count, b->resumed);
	usc_cli_json_num(b->seconds);
	printf(", \"status\": {");
	for (int s = 0; s < USC_BATCH_STATUS_COUNT; s++)
		printf("%s\"%s\": %zu", s ? ", " : "",
		       usc_batch_status_name((usc_batch_status)s), st[s]);
	printf("}, \"kernels\": [");
	for (size_t i = 0; i < nk && i < top; i++) {
		printf("%s{\"kernel\": ", i ? ", " : "");
		usc_cli_json_str(k[i].kernel);
		printf(", \"hlo_hash\": ");
		usc_cli_json_str(k[i].hlo_hash);
		printf(", \"runs\": %zu, \"defect\": %zu, \"suspicious\": %zu, "
		       "\"undecided\": %zu, \"failed\": %zu, "
		       "\"max_ulp_reference\": ",
		       k[i].runs, k[i].defects, k[i].suspicious,
		       k[i].undecided, k[i].failed);
		usc_cli_json_num(k[i].max_ulp_reference);
		printf(", \"max_ulp_oracle\": ");
		usc_cli_json_num(k[i].max_ulp_oracle);
		printf(", \"worst\": ");
		json_row_brief(&b->rows[k[i].worst_row]);
		printf("}");
	}
	printf("], \"ops\": [");
	for (size_t i = 0; i < no && i < top; i++) {
		printf("%s{\"kernel\": ", i ? ", " : "");
		usc_cli_json_str(o[i].kernel);
		printf(", \"op\": ");
		usc_cli_json_str(o[i].op);
		printf(", \"cases\": %zu, \"mean_share\": ", o[i].cases);
		usc_cli_json_num(o[i].share_sum / (double)o[i].cases);
		printf("}");
	}
	printf("], \"failed\": [");
	for (size_t i = 0; i < b->row_count; i++) {
		if (b->rows[i].status == USC_BATCH_OK)
			continue;
		printf("%s", first ? "" : ", ");
		json_row_brief(&b->rows[i]);
		first = false;
	}
	printf("], \"exit\": %d}\n", rc);
}

static void print_text(const char *out, const usc_batch_result *b,
		       const usc_batch_kernel_rank *k, size_t nk,
		       const usc_batch_op_rank *o, size_t no, size_t top)
{
	size_t st[USC_BATCH_STATUS_COUNT] = {0}, shown = 0;

	for (size_t i = 0; i < b->row_count; i++)
		st[b->rows[i].status]++;
	printf("batch: %zu cases", b->row_count);
	if (b->shard_count > 1)
		printf(" (shard %zu/%zu of %zu)", b->shard_index + 1,
		       b->shard_count, b->case_total);
	printf(", %zu resumed, %.1f s:", b->resumed, b->seconds);
	for (int s = 0; s < USC_BATCH_STATUS_COUNT; s++)
		if (st[s] || s == USC_BATCH_OK)
			printf(" %zu %s", st[s],
			       usc_batch_status_name((usc_batch_status)s));
	printf("\nindex: %s\n", out);
	if (top == 0)
		return;
	printf("\nworst kernels (%zu of %zu; runs grouped by HLO text):\n",
	       nk < top ? nk : top, nk);
	printf("  %-34s %5s %6s %5s %6s %12s %12s\n", "kernel", "runs",
	       "defect", "susp", "failed", "max|ulp|ref", "max|ulp|orc");
	for (size_t i = 0; i < nk && i < top; i++)
		printf("  %-34.34s %5zu %6zu %5zu %6zu %12.4g %12.4g\n",
		       k[i].kernel[0] ? k[i].kernel : "(unparsed)", k[i].runs,
		       k[i].defects, k[i].suspicious, k[i].failed,
		       k[i].max_ulp_reference, k[i].max_ulp_oracle);
	for (size_t i = 0; i < nk && i < top; i++) {
		const usc_batch_row *w = &b->rows[k[i].worst_row];

		if (!k[i].defects && !k[i].suspicious)
			continue;
		if (!shown++)
			printf("\nworst run of each kernel with a defect or "
			       "a suspicious run:\n");
		printf("  %s: %s\n    %s\n", w->kernel, w->path, w->message);
	}
	if (no) {
		printf("\nops named most often as a case's top culprit "
		       "(attribution):\n");
		for (size_t i = 0; i < no && i < top; i++)
			printf("  %-34.34s %-24.24s %5zu cases, mean share "
			       "%.2f\n",
			       o[i].kernel, o[i].op, o[i].cases,
			       o[i].share_sum / (double)o[i].cases);
	}
	shown = 0;
	for (size_t i = 0; i < b->row_count; i++) {
		const usc_batch_row *r = &b->rows[i];

		if (r->status == USC_BATCH_OK)
			continue;
		if (!shown++)
			printf("\ncases that could not be checked:\n");
		if (shown > top) {
			printf("  ... (%zu in all; --json lists them)\n",
			       b->row_count - st[USC_BATCH_OK]);
			break;
		}
		printf("  %s: %s: %s\n", r->path,
		       usc_batch_status_name(r->status), r->message);
	}
}

/* The ranking, printed; the exit status of the batch. */
static int report(const char *out, const usc_batch_result *b, size_t top,
		  bool json)
{
	usc_batch_kernel_rank *k = NULL;
	usc_batch_op_rank *o = NULL;
	size_t nk = 0, no = 0;
	usc_error err;
	int rc = exit_of(b);

	if (usc_batch_rank(b, &k, &nk, &o, &no, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (json)
		print_json(out, b, k, nk, o, no, top, rc);
	else
		print_text(out, b, k, nk, o, no, top);
	free(k);
	free(o);
	return rc;
}

int usc_cli_batch(int argc, char **argv)
{
	usc_batch_options o = usc_batch_options_default();
	const char **roots = calloc((size_t)argc, sizeof *roots);
	usc_batch_result *b = NULL;
	char **made = NULL;
	progress_state ps = {false, false};
	bool json = false, quiet = false;
	size_t top = 20;
	usc_error err;
	int rc = USC_EXIT_USAGE;

	if (!roots) {
		usc_cli_error("out of memory");
		return USC_EXIT_FAIL;
	}
	o.roots = roots;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;
		usc_cli_num num;
		int k;

		if ((strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) && has)
			o.out = argv[++i];
		else if ((k = usc_cli_num_arg(usc_cli_batch_nums, argc, argv,
					      &i, &num)) != USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				goto done;
			if (k == BATCH_JOBS || k == BATCH_JOBS_LONG)
				o.jobs = (size_t)num.u;
			else if (k == BATCH_TIMEOUT)
				o.case_timeout = num.d;
			else if (k == BATCH_MEMORY)
				o.case_memory_mb = num.u;
			else if (k == BATCH_PER_WORKER)
				o.cases_per_worker = (size_t)num.u;
			else
				top = (size_t)num.u;
		} else if (strncmp(a, "-j", 2) == 0 && a[2]) {
			/* -j4, as make takes it */
			if (usc_cli_num_parse(&usc_cli_batch_nums[BATCH_JOBS],
					      a + 2, &num) != 0)
				goto done;
			o.jobs = (size_t)num.u;
		} else if (strcmp(a, "--profile") == 0 && has)
			o.profile = argv[++i];
		else if (strcmp(a, "--no-profile") == 0)
			o.no_profile = true;
		else if (strcmp(a, "--attribute") == 0)
			o.attribute = true;
		else if (strcmp(a, "--shard") == 0 && has) {
			if (!parse_shard(argv[++i], &o))
				goto done;
		} else if (strcmp(a, "--restart") == 0)
			o.restart = true;
		else if (strcmp(a, "--retry-failed") == 0)
			o.retry_failed = true;
		else if (strcmp(a, "--resume") == 0)
			; /* the default: kept for those who say it */
		else if (strcmp(a, "--force") == 0)
			o.force = true;
		else if (strcmp(a, "--json") == 0)
			json = true;
		else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
			quiet = true;
		else if (a[0] == '-' && a[1]) {
			usc_cli_error("unknown option '%s'\n%s", a,
				      usage_text);
			goto done;
		} else
			roots[o.root_count++] = a;
	}
	if (!o.out || !o.root_count) {
		usc_cli_error("%s", usage_text);
		goto done;
	}
	if (o.profile && o.no_profile) {
		usc_cli_error("--profile and --no-profile exclude each other");
		goto done;
	}
	/* Dump directories become case trees beside the index. */
	made = calloc(o.root_count, sizeof *made);
	if (!made || usc_cli_batch_dump_roots(roots, o.root_count, o.out,
					      made) != 0) {
		rc = USC_EXIT_FAIL;
		goto done;
	}
	if (!quiet) {
		ps.tty = isatty(2);
		o.progress = progress;
		o.progress_data = &ps;
		o.progress_interval = ps.tty ? 0.25 : 5;
	}
	if (usc_batch_run(&o, &b, &err) != USC_OK) {
		if (ps.drawn)
			fputc('\n', stderr);
		usc_cli_error("%s", err.message);
		rc = USC_EXIT_FAIL;
		goto done;
	}
	if (ps.drawn)
		fputc('\n', stderr);
	/* Under mpirun, rank 0 speaks for the batch. */
	rc = b->rank == 0 ? report(o.out, b, top, json) : USC_EXIT_OK;
done:
	usc_batch_result_destroy(b);
	for (size_t i = 0; made && i < o.root_count; i++)
		free(made[i]);
	free(made);
	free(roots);
	return rc;
}

int usc_cli_merge(int argc, char **argv)
{
	const char **shards = calloc((size_t)argc, sizeof *shards);
	const char *out = NULL;
	usc_batch_result *b = NULL;
	bool partial = false, force = false, json = false;
	size_t n = 0, top = 20;
	usc_error err;
	int rc = USC_EXIT_USAGE;

	if (!shards) {
		usc_cli_error("out of memory");
		return USC_EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		usc_cli_num num;
		int k;

		if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) &&
		    i + 1 < argc)
			out = argv[++i];
		else if (strcmp(a, "--allow-partial") == 0)
			partial = true;
		else if (strcmp(a, "--force") == 0)
			force = true;
		else if (strcmp(a, "--json") == 0)
			json = true;
		else if ((k = usc_cli_num_arg(usc_cli_merge_nums, argc, argv,
					      &i, &num)) != USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				goto done;
			top = (size_t)num.u;
		} else if (a[0] == '-' && a[1]) {
			usc_cli_error("unknown option '%s'\n%s", a,
				      merge_usage);
			goto done;
		} else
			shards[n++] = a;
	}
	if (!out || !n) {
		usc_cli_error("%s", merge_usage);
		goto done;
	}
	if (usc_batch_merge(shards, n, out, partial, force, &b, &err) !=
	    USC_OK) {
		usc_cli_error("%s", err.message);
		rc = USC_EXIT_FAIL;
		goto done;
	}
	rc = report(out, b, top, json);
done:
	usc_batch_result_destroy(b);
	free(shards);
	return rc;
}
