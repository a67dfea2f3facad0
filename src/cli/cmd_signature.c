/*
 * ulpscope signature: which single-op mutation of a kernel explains the
 * device's output (docs/signatures.md).  A thin layer over
 * ulpscope/signature.h; with --profile (or the profile a case directory
 * names) a mutant reproduces an element when the device value lies inside
 * the mutant's envelope, and an output inside the kernel's own envelope
 * is legit and not searched.  Exit status: 0 explained (or nothing to
 * explain), 1 bad input, 2 usage, 3 no single-op mutation explains the
 * output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ulpscope/hlo_kernel.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"
#include "ulpscope/signature.h"

/* At most this many sets (each of up to 4 outputs) in --device-sets. */
#define MAX_SETS 4096
/* At most this many runs added with --also. */
#define MAX_ALSO 64

static const char usage_text[] =
	"usage: ulpscope signature CASE_DIR [--device SRC...] [--also "
	"CASE_DIR2]... [--separate OUT_DIR [--separate-draws N] [--seed S]] "
	"[options]\n"
	"       ulpscope signature KERNEL.hlo [--fusion NAME] --input SRC... "
	"--device SRC... [options]\n"
	"       ulpscope signature KERNEL.hlo [--fusion NAME] --mutant OP "
	"KIND[/VARIANT] -o OUT.hlo\n"
	"       ulpscope signature KERNEL.hlo [--fusion NAME] --input SRC... "
	"--device-sets LIST [options]\n"
	"       ulpscope signature KERNEL.hlo [--fusion NAME] --list-mutants\n"
	"options: --top K --max-seconds S --max-candidates N --min-fraction F "
	"--profile NAME|FILE --no-profile --json --pairwise --input-raw "
	"--out FILE.h5 [--kernel NAME]";

/*
 * Adds the report to the kernel's group of an existing result file
 * (ulpscope check --out wrote it): the signatures table, the kernel's
 * "signature" and "culprit_op" attributes (docs/results.md).
 */
static int write_results(const usc_signature_report *r, const char *path,
			 const char *kernel)
{
	usc_results_signature_row *rows;
	usc_results_signatures s;
	usc_results *w = NULL;
	char line[512] = "";
	usc_error err;
	usc_status st;

	rows = calloc(r->candidate_count ? r->candidate_count : 1,
		      sizeof *rows);
	if (!rows) {
		usc_cli_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->candidate_count; i++) {
		const usc_signature_candidate *c = &r->candidates[i];

		rows[i].op = c->op;
		rows[i].mutation = usc_mutation_name(c->kind);
		rows[i].detail = c->detail;
		rows[i].reproduced = c->reproduced;
		rows[i].differing_reproduced = c->differing_reproduced;
		rows[i].median_ulps = c->median_ulps;
		rows[i].tied_best = c->tied_best;
	}
	memset(&s, 0, sizeof s);
	s.verdict = usc_signature_verdict_name(r->verdict);
	if (r->verdict == USC_SIGNATURE_EXPLAINED && r->candidate_count) {
		const usc_signature_candidate *b = &r->candidates[0];

		snprintf(line, sizeof line, "%s %s (%s): %llu of %llu defect "
			 "elements explained, %llu legit broken",
			 b->op ? b->op : "(output)", usc_mutation_name(b->kind),
			 b->detail, (unsigned long long)b->explained,
			 (unsigned long long)r->defects,
			 (unsigned long long)b->broken);
		s.culprit_op = b->op ? b->op : "";
	}
	s.signature = line;
	s.elements = r->elements;
	s.differing = r->differing;
	s.row_count = r->candidate_count;
	s.rows = rows;
	st = usc_results_open_append(path, &w, &err);
	if (st == USC_OK)
		st = usc_results_add_signatures(w, kernel ? kernel
							  : r->kernel_name,
						&s, &err);
	if (st == USC_OK) {
		st = usc_results_close(w, &err);
		w = NULL;
	}
	usc_results_abort(w);
	free(rows);
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return -1;
	}
	return 0;
}

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 1.0;
}

/* (explained - broken) / defects: the fraction the verdict compares. */
static double score_of(const usc_signature_report *r,
		       const usc_signature_candidate *c)
{
	return r->defects ? ((double)c->explained - (double)c->broken) /
				    (double)r->defects
			  : 0.0;
}

static void json_cand(const usc_signature_report *r,
		      const usc_signature_candidate *c)
{
	printf("{\"op\": ");
	if (c->op)
		usc_cli_json_str(c->op);
	else
		printf("null");
	printf(", \"computation\": ");
	if (c->computation)
		usc_cli_json_str(c->computation);
	else
		printf("null");
	printf(", \"mutation\": ");
	usc_cli_json_str(usc_mutation_name(c->kind));
	printf(", \"variant\": %d, \"detail\": ", c->variant);
	usc_cli_json_str(c->detail);
	printf(", \"explained\": %llu, \"broken\": %llu, \"score\": ",
	       (unsigned long long)c->explained,
	       (unsigned long long)c->broken);
	usc_cli_json_num(score_of(r, c));
	printf(", \"explained_fraction\": ");
	usc_cli_json_num(frac(c->explained, r->defects));
	printf(", \"width\": ");
	usc_cli_json_num(c->width);
	printf(", \"envelope\": %s", c->envelope ? "true" : "false");
	printf(", \"reproduced\": %llu, \"fraction\": ",
	       (unsigned long long)c->reproduced);
	usc_cli_json_num(frac(c->reproduced, r->elements));
	printf(", \"differing_reproduced\": %llu, \"differing_fraction\": ",
	       (unsigned long long)c->differing_reproduced);
	usc_cli_json_num(frac(c->differing_reproduced, r->differing));
	printf(", \"median_ulps\": ");
	usc_cli_json_num(c->median_ulps);
	printf(", \"tied_best\": %s", c->tied_best ? "true" : "false");
	/* Several runs: the candidate's score on each. */
	if (c->run_count) {
		printf(", \"runs\": [");
		for (size_t i = 0; i < c->run_count; i++) {
			printf("%s{\"explained\": %llu, \"broken\": %llu, "
			       "\"width\": ",
			       i ? ", " : "",
			       (unsigned long long)c->runs[i].explained,
			       (unsigned long long)c->runs[i].broken);
			usc_cli_json_num(c->runs[i].width);
			printf(", \"scored\": %s}",
			       c->runs[i].scored ? "true" : "false");
		}
		printf("]");
	}
	printf(", \"equivalent\": [");
	for (size_t i = 0; i < c->equivalent_count; i++) {
		const usc_signature_form *e = &c->equivalent[i];

		printf("%s{\"op\": ", i ? ", " : "");
		usc_cli_json_str(e->op);
		printf(", \"computation\": ");
		usc_cli_json_str(e->computation);
		printf(", \"mutation\": ");
		usc_cli_json_str(usc_mutation_name(e->kind));
		printf(", \"variant\": %d, \"detail\": ", e->variant);
		usc_cli_json_str(e->detail);
		printf("}");
	}
	printf("]}");
}

/* The object of print_json without its closing brace. */
static void print_json_open(const usc_signature_report *r)
{
	printf("{\"kernel\": ");
	usc_cli_json_str(r->kernel_name);
	printf(", \"verdict\": ");
	usc_cli_json_str(usc_signature_verdict_name(r->verdict));
	printf(", \"profile\": ");
	if (r->profile[0])
		usc_cli_json_str(r->profile);
	else
		printf("null");
	printf(", \"note\": ");
	usc_cli_json_str(r->note);
	printf(", \"elements\": %llu, \"differing\": %llu, \"defects\": "
	       "%llu, \"legit\": %llu, \"min_fraction\": ",
	       (unsigned long long)r->elements,
	       (unsigned long long)r->differing,
	       (unsigned long long)r->defects,
	       (unsigned long long)(r->elements - r->defects));
	usc_cli_json_num(r->min_fraction);
	printf(", \"enumerated\": %zu, \"evaluated\": %zu, \"no_effect\": %zu, "
	       "\"failed\": %zu, \"skipped\": %zu, \"envelopes\": %zu, "
	       "\"pruned\": %zu, \"budget_exhausted\": %s, \"seconds\": ",
	       r->enumerated, r->evaluated, r->no_effect, r->failed,
	       r->skipped, r->envelopes, r->pruned,
	       r->budget_exhausted ? "true" : "false");
	usc_cli_json_num(r->seconds);
	printf(", \"identity\": ");
	json_cand(r, &r->identity);
	printf(", \"best\": ");
	if (r->verdict == USC_SIGNATURE_EXPLAINED && r->candidate_count)
		json_cand(r, &r->candidates[0]);
	else
		printf("null");
	printf(", \"candidates\": [");
	for (size_t i = 0; i < r->candidate_count; i++) {
		if (i)
			printf(", ");
		json_cand(r, &r->candidates[i]);
	}
	printf("]");
	if (r->run_count) {
		printf(", \"runs\": [");
		for (size_t i = 0; i < r->run_count; i++)
			printf("%s{\"elements\": %llu, \"differing\": %llu, "
			       "\"defects\": %llu}",
			       i ? ", " : "",
			       (unsigned long long)r->runs[i].elements,
			       (unsigned long long)r->runs[i].differing,
			       (unsigned long long)r->runs[i].defects);
		printf("]");
	}
}

static void print_json(const usc_signature_report *r)
{
	print_json_open(r);
	printf("}\n");
}

/* "explains 98.1% of the 412 defect elements, breaks 0 of 3684 legit,
 * envelope 1.3 values wide": the score in words (docs/signatures.md). */
static void say_score(const usc_signature_report *r,
		      const usc_signature_candidate *c)
{
	printf("explains %.1f%% of the %llu defect element(s), breaks %llu "
	       "of %llu legit",
	       100 * frac(c->explained, r->defects),
	       (unsigned long long)r->defects, (unsigned long long)c->broken,
	       (unsigned long long)(r->elements - r->defects));
	if (!isnan(c->width))
		printf(", envelope %.1f value%s wide", c->width,
		       c->width == 1.0 ? "" : "s");
}

static void print_text(const usc_signature_report *r)
{
	size_t ties = 0;

	printf("kernel %s: %llu element(s), %llu differ from the strict "
	       "reference",
	       r->kernel_name, (unsigned long long)r->elements,
	       (unsigned long long)r->differing);
	if (r->profile[0])
		printf(", %llu outside the %s envelope (defects)",
		       (unsigned long long)r->defects, r->profile);
	printf("\n");
	if (r->run_count) {
		printf("runs: %zu", r->run_count);
		for (size_t i = 0; i < r->run_count; i++)
			printf("%s run %zu: %llu element(s), %llu differ, %llu "
			       "defect(s)",
			       i ? ";" : ":", i + 1,
			       (unsigned long long)r->runs[i].elements,
			       (unsigned long long)r->runs[i].differing,
			       (unsigned long long)r->runs[i].defects);
		printf("\n");
	}
	if (r->note[0])
		printf("note: %s\n", r->note);
	if (r->verdict == USC_SIGNATURE_NO_DIFFERENCE) {
		printf("the device output is the strict reference bit for bit: "
		       "no defect to explain\n");
		return;
	}
	if (r->verdict == USC_SIGNATURE_LEGIT) {
		printf("every element lies inside the %s envelope: legit, no "
		       "defect to explain\n",
		       r->profile);
		return;
	}
	printf("mutants: %zu enumerated, %zu evaluated (%zu without effect, "
	       "%zu failed), %zu skipped for the budget",
	       r->enumerated, r->evaluated, r->no_effect, r->failed,
	       r->skipped);
	if (r->profile[0])
		printf("; %zu envelope(s) evaluated, %zu pruned", r->envelopes,
		       r->pruned);
	printf("; %.2f s\n", r->seconds);
	printf("%4s  %-28s %-22s %8s %7s %7s %8s  %s\n", "rank", "op",
	       "mutation", "explains", "breaks", "width", "bitwise", "detail");
	{
		char w[32] = "";

		if (!isnan(r->identity.width))
			snprintf(w, sizeof w, "%.1f", r->identity.width);
		printf("%4s  %-28s %-22s %7.2f%% %7s %7s %7.2f%%  %s\n", "-",
		       "(none)", "none", 0.0, "0", w,
		       100 * frac(r->identity.reproduced, r->elements),
		       r->identity.detail);
	}
	for (size_t i = 0; i < r->candidate_count; i++) {
		const usc_signature_candidate *c = &r->candidates[i];
		char w[32];

		if (isnan(c->width))
			snprintf(w, sizeof w, "-");
		else
			snprintf(w, sizeof w, "%.1f%s", c->width,
				 r->profile[0] && !c->envelope ? "~" : "");
		printf("%4zu%c %-28s %-22s %7.2f%% %7llu %7s %7.2f%%  %s\n",
		       i + 1, c->tied_best ? '=' : ' ',
		       c->op ? c->op : "(output)", usc_mutation_name(c->kind),
		       100 * frac(c->explained, r->defects),
		       (unsigned long long)c->broken, w,
		       100 * frac(c->reproduced, r->elements), c->detail);
		/* The same program under other names: one candidate. */
		for (size_t j = 0; j < c->equivalent_count; j++)
			printf("%4s  %-28s %-22s the same program: %s\n", "",
			       c->equivalent[j].op,
			       usc_mutation_name(c->equivalent[j].kind),
			       c->equivalent[j].detail);
		ties += c->tied_best;
	}
	if (r->verdict == USC_SIGNATURE_EXPLAINED) {
		const usc_signature_candidate *b = &r->candidates[0];

		printf("best explanation: %s %s (%s) ",
		       b->op ? b->op : "output", usc_mutation_name(b->kind),
		       b->detail);
		for (size_t j = 0; j < b->equivalent_count; j++)
			printf("%s %s %s (%s) ",
			       j ? "and" : "- the same program as",
			       b->equivalent[j].op,
			       usc_mutation_name(b->equivalent[j].kind),
			       b->equivalent[j].detail);
		say_score(r, b);
		printf("\n");
		if (ties > 1)
			printf("ambiguous: %zu mutations score the same "
			       "(marked =)\n",
			       ties);
	} else {
		printf("no single-op mutation explains the output (the best "
		       "scores less than %.0f%% of the defect elements, or is "
		       "no narrower than the identity",
		       100 * r->min_fraction);
		if (r->candidate_count) {
			printf(": ");
			say_score(r, &r->candidates[0]);
		}
		printf(")\n");
	}
	if (r->budget_exhausted)
		printf("the budget ran out: %zu mutant(s) not tried, envelopes "
		       "cut short (--max-seconds, --max-candidates)\n",
		       r->skipped);
}

/*
 * The module of the kernel file path, its fusion isolated when one is
 * named: *m, with the files to destroy in *f and *kf (set also when it
 * fails).  Prints why and returns USC_EXIT_FAIL, else USC_EXIT_OK.
 */
static int load_module(const char *path, const char *fusion,
		       usc_hlo_file **f, usc_hlo_file **kf,
		       const usc_hlo_module **m)
{
	usc_error err;

	usc_error_clear(&err);
	if (usc_hlo_parse_file(path, f, &err) != USC_OK) {
		fprintf(stderr, "%s\n", err.message);
		return USC_EXIT_FAIL;
	}
	*m = usc_hlo_file_module(*f, 0);
	if (!*m) {
		usc_cli_error("%s holds no module", path);
		return USC_EXIT_FAIL;
	}
	if (fusion) {
		if (usc_hlo_extract_fusion_file(*m, fusion, kf, &err) !=
		    USC_OK) {
			usc_cli_error("%s", err.message);
			return USC_EXIT_FAIL;
		}
		*m = usc_hlo_file_module(*kf, 0);
	}
	return USC_EXIT_OK;
}

/* --mutant OP KIND[/VARIANT] -o OUT: writes one mutant. */
static int write_mutant(const char *path, const char *fusion, const char *op,
			const char *kind_text, const char *out)
{
	usc_hlo_file *f = NULL, *kf = NULL;
	const usc_hlo_module *m;
	usc_mutation kind;
	usc_error err;
	char kname[64], detail[128], *text = NULL, *slash;
	int variant = 0, rc = USC_EXIT_FAIL;
	bool applies = false;
	FILE *fp;

	snprintf(kname, sizeof kname, "%s", kind_text);
	slash = strchr(kname, '/');
	if (slash) {
		/* The library checks the kind's own bound on the variant. */
		static const usc_cli_num_opt vopt = USC_CLI_INT_OPT(
			"--mutant KIND/VARIANT", "VARIANT", 0, 1000, "");
		usc_cli_num num;

		*slash = '\0';
		if (usc_cli_num_parse(&vopt, slash + 1, &num) != 0)
			return USC_EXIT_USAGE;
		variant = (int)num.u;
	}
	usc_error_clear(&err);
	if (usc_mutation_from_name(kname, &kind, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_USAGE;
	}
	if (load_module(path, fusion, &f, &kf, &m) != USC_EXIT_OK)
		goto done;
	if (usc_signature_mutate(m, op, kind, variant, &applies, detail,
				 sizeof detail, &text, &err) != USC_OK) {
		usc_cli_error("%s: %s", path, err.message);
		goto done;
	}
	if (!applies) {
		usc_cli_error("%s/%d does not apply to '%s'",
			      usc_mutation_name(kind), variant, op);
		goto done;
	}
	fp = fopen(out, "w");
	if (!fp || fputs(text, fp) < 0 || fclose(fp) != 0) {
		usc_cli_error("cannot write %s", out);
		goto done;
	}
	printf("%s %s/%d: %s\n", op, usc_mutation_name(kind), variant, detail);
	rc = USC_EXIT_OK;
done:
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(kf);
	usc_hlo_file_destroy(f);
	return rc;
}

/*
 * --list-mutants: every mutant the search would try, one a line,
 * "OP<tab>COMPUTATION<tab>KIND/VARIANT<tab>DETAIL", to be written one by
 * one with --mutant.
 */
static int list_mutants(const char *path, const char *fusion)
{
	usc_hlo_file *f = NULL, *kf = NULL;
	const usc_hlo_module *m;
	usc_signature_mutant *list = NULL;
	size_t n = 0;
	usc_error err;
	int rc = USC_EXIT_FAIL;

	usc_error_clear(&err);
	if (load_module(path, fusion, &f, &kf, &m) != USC_EXIT_OK)
		goto done;
	if (usc_signature_mutant_list(m, &list, &n, &err) != USC_OK) {
		usc_cli_error("%s: %s", path, err.message);
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		printf("%s\t%s\t%s/%d\t%s\n", list[i].op, list[i].computation,
		       usc_mutation_name(list[i].kind), list[i].variant,
		       list[i].detail);
	rc = USC_EXIT_OK;
done:
	usc_signature_mutant_list_destroy(list, n);
	usc_hlo_file_destroy(kf);
	usc_hlo_file_destroy(f);
	return rc;
}

/*
 * --device-sets LIST: one device set a line (its sources, one per
 * output, separated by blanks; blank lines and '#' comments skipped).
 * Fills sources (owned strings in *buf) and *sets.
 */
static int read_sets(const char *path, const char **sources, size_t max,
		     size_t *count, size_t *sets, size_t *per_set,
		     char **buf)
{
	FILE *fp = fopen(path, "r");
	char line[8192];
	size_t lineno = 0, used = 0, cap = 0;
	char *b = NULL;
	size_t offs[MAX_SETS * 4];

	*count = *sets = *per_set = 0;
	*buf = NULL;
	if (!fp) {
		usc_cli_error("cannot read %s", path);
		return -1;
	}
	while (fgets(line, sizeof line, fp)) {
		size_t n = 0;

		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			usc_cli_error("%s:%zu: line too long", path, lineno);
			goto fail;
		}
		for (char *tok = strtok(line, " \t\r\n"); tok;
		     tok = strtok(NULL, " \t\r\n")) {
			size_t l = strlen(tok) + 1;

			if (tok[0] == '#')
				break;
			if (*count == max || *count == MAX_SETS * 4) {
				usc_cli_error("%s:%zu: too many sources (at "
					      "most %zu)",
					      path, lineno, max);
				goto fail;
			}
			if (used + l > cap) {
				char *g = realloc(b, 2 * (used + l));

				if (!g) {
					usc_cli_error("out of memory");
					goto fail;
				}
				b = g;
				cap = 2 * (used + l);
			}
			memcpy(b + used, tok, l);
			offs[(*count)++] = used;
			used += l;
			n++;
		}
		if (n == 0)
			continue;
		if (*sets && n != *per_set) {
			usc_cli_error("%s:%zu: %zu source(s); the first set "
				      "has %zu (one per output)",
				      path, lineno, n, *per_set);
			goto fail;
		}
		*per_set = n;
		(*sets)++;
	}
	fclose(fp);
	if (*sets == 0) {
		usc_cli_error("%s: no device set", path);
		free(b);
		return -1;
	}
	for (size_t i = 0; i < *count; i++)
		sources[i] = b + offs[i];
	*buf = b;
	return 0;
fail:
	fclose(fp);
	free(b);
	return -1;
}

/* A JSON string on fp (the names of ops and files are plain text). */
static void json_fstr(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(fp, "\\u%04x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

/* The separation as one JSON object (docs/signatures.md). */
static void sep_json(FILE *fp, const usc_signature_separation *s,
		     const char *dir, bool written)
{
	fprintf(fp, "{\"dir\": ");
	if (written)
		json_fstr(fp, dir);
	else
		fprintf(fp, "null");
	fprintf(fp, ", \"tied\": %zu, \"draws\": %zu, \"draw\": ", s->tied,
		s->draws);
	if (s->draw == SIZE_MAX)
		fprintf(fp, "null, \"distribution\": null, \"seed\": null");
	else {
		fprintf(fp, "%zu, \"distribution\": ", s->draw);
		json_fstr(fp, s->distribution);
		fprintf(fp, ", \"seed\": %llu", (unsigned long long)s->seed);
	}
	fprintf(fp, ", \"classes\": %zu, \"split_elements\": %llu, "
		"\"inseparable\": %zu, \"members\": [",
		s->draw == SIZE_MAX ? 0 : s->class_count,
		(unsigned long long)s->split_elements, s->inseparable);
	for (size_t i = 0; i < s->member_count; i++) {
		const usc_signature_member *x = &s->members[i];

		fprintf(fp, "%s{\"op\": ", i ? ", " : "");
		if (x->op)
			json_fstr(fp, x->op);
		else
			fprintf(fp, "null");
		fprintf(fp, ", \"computation\": ");
		if (x->computation)
			json_fstr(fp, x->computation);
		else
			fprintf(fp, "null");
		fprintf(fp, ", \"mutation\": ");
		json_fstr(fp, usc_mutation_name(x->kind));
		fprintf(fp, ", \"variant\": %d, \"class\": ", x->variant);
		if (s->draw == SIZE_MAX)
			fprintf(fp, "null");
		else
			fprintf(fp, "%zu", x->cls);
		fprintf(fp, ", \"same_as\": %zu}", x->same_as);
	}
	fprintf(fp, "]}");
}

/* "convert.3 round-down/0", or "the kernel as written". */
static void member_name(const usc_signature_member *x, char *buf, size_t n)
{
	if (!x->op)
		snprintf(buf, n, "the kernel as written");
	else
		snprintf(buf, n, "%s %s/%d", x->op, usc_mutation_name(x->kind),
			 x->variant);
}

/*
 * --separate OUT_DIR: inputs on which the candidates tied with the best
 * give different outputs, written as a case without device outputs, with
 * separate.json.  Returns 0, or -1 after printing why.
 */
static int separate(const char *case_dir, const usc_signature_report *r,
		    const usc_signature_separate_options *so,
		    const char *out_dir, bool json)
{
	usc_hlo_file *f = NULL, *kf = NULL;
	const usc_hlo_module *m;
	usc_signature_separation *s = NULL;
	char kpath[4096], name[256];
	bool written = false;
	usc_error err;
	int rc = -1;

	usc_error_clear(&err);
	snprintf(kpath, sizeof kpath, "%s/kernel.hlo", case_dir);
	if (load_module(kpath, NULL, &f, &kf, &m) != USC_EXIT_OK)
		goto done;
	if (usc_signature_separate(m, r, so, &s, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		goto done;
	}
	if (s->draw != SIZE_MAX) {
		FILE *fp;

		if (usc_signature_separation_write(s, case_dir, out_dir,
						   &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			goto done;
		}
		snprintf(kpath, sizeof kpath, "%s/separate.json", out_dir);
		fp = fopen(kpath, "w");
		if (!fp) {
			usc_cli_error("cannot write %s", kpath);
			goto done;
		}
		sep_json(fp, s, out_dir, true);
		fputc('\n', fp);
		if (fclose(fp) != 0) {
			usc_cli_error("%s: write error", kpath);
			goto done;
		}
		written = true;
	}
	if (json) {
		printf(", \"separation\": ");
		sep_json(stdout, s, out_dir, written);
		printf("}\n");
	} else if (s->tied < 2) {
		printf("separate: nothing to separate (%zu candidate(s) tied "
		       "with the best that are programs)\n",
		       s->tied);
	} else {
		if (written) {
			printf("separate: draw %zu (%s, seed %llu) splits the "
			       "%zu tied candidate(s) and the kernel into %zu "
			       "class(es) (%llu element(s) differ); inputs "
			       "written to %s\n",
			       s->draw, s->distribution,
			       (unsigned long long)s->seed, s->tied,
			       s->class_count,
			       (unsigned long long)s->split_elements, out_dir);
			for (size_t i = 0; i < s->member_count; i++) {
				member_name(&s->members[i], name,
					    sizeof name);
				printf("  class %zu: %s\n", s->members[i].cls,
				       name);
			}
		}
		if (s->inseparable || !written)
			printf("separate: %zu candidate(s) gave the same bits "
			       "as another on every one of %zu draw(s): likely "
			       "equivalent\n",
			       s->draw == SIZE_MAX ? s->tied : s->inseparable,
			       s->draws);
		for (size_t i = 1; i < s->member_count; i++)
			if (s->members[i].same_as != i) {
				char other[256];

				member_name(&s->members[i], name, sizeof name);
				member_name(&s->members[s->members[i].same_as],
					    other, sizeof other);
				printf("  %s: the same bits as %s\n", name,
				       other);
			}
	}
	rc = 0;
done:
	usc_signature_separation_destroy(s);
	usc_hlo_file_destroy(kf);
	usc_hlo_file_destroy(f);
	if (rc != 0 && json)
		printf("}\n");
	return rc;
}

enum {
	SIG_TOP,
	SIG_MAX_SECONDS,
	SIG_MAX_CANDIDATES,
	SIG_MIN_FRACTION,
	SIG_SEPARATE_DRAWS,
	SIG_SEED
};

/*
 * The search's bounds: a year of wall time, a billion mutants and a
 * thousand candidates in the report are past any real run, and keep the
 * conversions to size_t exact.
 */
const usc_cli_num_opt usc_cli_signature_nums[] = {
	[SIG_TOP] = USC_CLI_INT_OPT("--top", "K", 1, 1000,
				    "candidates kept in the report, best "
				    "first (10)"),
	[SIG_MAX_SECONDS] = USC_CLI_REAL_OPT("--max-seconds", "S", 0,
					     31536000, true,
					     "wall-clock budget of the search "
					     "(60)"),
	[SIG_MAX_CANDIDATES] = USC_CLI_INT_OPT("--max-candidates", "N", 1,
					       1000000000,
					       "at most N mutants evaluated "
					       "(no cap)"),
	[SIG_MIN_FRACTION] = USC_CLI_REAL_OPT("--min-fraction", "F", 0, 1,
					      true,
					      "the fraction of the differing "
					      "elements the best mutation "
					      "must reproduce (0.95)"),
	[SIG_SEPARATE_DRAWS] = USC_CLI_INT_OPT("--separate-draws", "N", 1,
					       10000,
					       "input sets drawn for "
					       "--separate (16)"),
	[SIG_SEED] = USC_CLI_INT_OPT("--seed", "S", 0, 4294967295u,
				     "the first draw's seed for --separate "
				     "(1)"),
	USC_CLI_NUM_END,
};

int usc_cli_signature(int argc, char **argv)
{
	usc_signature_request req = usc_signature_request_default();
	const char *inputs[USC_CLI_MAX_SOURCES];
	const char *devices[USC_CLI_MAX_SOURCES];
	const char *target = NULL, *mutant_op = NULL, *mutant_kind = NULL;
	const char *out = NULL, *sets_path = NULL, *h5 = NULL, *kname = NULL;
	static const char *set_sources[MAX_SETS * 4];
	char *set_buf = NULL;
	bool json = false, have_profile = false, list_only = false;
	const char *dirs[1 + MAX_ALSO];
	size_t nalso = 0;
	const char *sep_dir = NULL;
	usc_signature_separate_options so =
	    usc_signature_separate_options_default();
	usc_profile profile;
	usc_signature_report *r = NULL;
	usc_error err;
	usc_status st;
	int list = 0, rc;

	req.inputs = inputs;
	req.devices = devices;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		usc_cli_num num;
		int k;

		if (strcmp(a, "--input") == 0) {
			list = 1;
		} else if (strcmp(a, "--device") == 0) {
			list = 2;
		} else if (strcmp(a, "--fusion") == 0 && i + 1 < argc) {
			req.fusion = argv[++i], list = 0;
		} else if (strcmp(a, "--json") == 0) {
			json = true, list = 0;
		} else if (strcmp(a, "--pairwise") == 0) {
			req.options.reduce_order = USC_REDUCE_PAIRWISE;
			list = 0;
		} else if (strcmp(a, "--no-profile") == 0) {
			req.no_profile = true, list = 0;
		} else if (strcmp(a, "--input-raw") == 0) {
			req.raw = true, list = 0;
		} else if (strcmp(a, "--mutant") == 0 && i + 2 < argc) {
			mutant_op = argv[++i];
			mutant_kind = argv[++i];
			list = 0;
		} else if (strcmp(a, "--device-sets") == 0 && i + 1 < argc) {
			sets_path = argv[++i], list = 0;
		} else if (strcmp(a, "--list-mutants") == 0) {
			list_only = true, list = 0;
		} else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
			out = argv[++i], list = 0;
		} else if (strcmp(a, "--out") == 0 && i + 1 < argc) {
			h5 = argv[++i], list = 0;
		} else if (strcmp(a, "--kernel") == 0 && i + 1 < argc) {
			kname = argv[++i], list = 0;
		} else if (strcmp(a, "--also") == 0 && i + 1 < argc) {
			if (nalso == MAX_ALSO) {
				usc_cli_error("at most %d --also runs",
					      MAX_ALSO);
				return USC_EXIT_USAGE;
			}
			dirs[1 + nalso++] = argv[++i];
			list = 0;
		} else if (strcmp(a, "--separate") == 0 && i + 1 < argc) {
			sep_dir = argv[++i], list = 0;
		} else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			have_profile = true;
			list = 0;
		} else if ((k = usc_cli_num_arg(usc_cli_signature_nums, argc,
					       argv, &i, &num)) !=
			   USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				return USC_EXIT_USAGE;
			if (k == SIG_TOP)
				req.options.top = (size_t)num.u;
			else if (k == SIG_MAX_SECONDS)
				req.options.max_seconds = num.d;
			else if (k == SIG_MAX_CANDIDATES)
				req.options.max_candidates = (size_t)num.u;
			else if (k == SIG_SEPARATE_DRAWS)
				so.draws = (size_t)num.u;
			else if (k == SIG_SEED)
				so.seed = num.u;
			else
				req.options.min_fraction = num.d;
			list = 0;
		} else if (usc_cli_operand(a,
					   list == 1   ? inputs
					   : list == 2 ? devices
						       : NULL,
					   list == 1 ? &req.input_count
						     : &req.device_count,
					   &target, usage_text) != USC_EXIT_OK) {
			return USC_EXIT_USAGE;
		}
	}
	if (!target) {
		usc_cli_error("%s", usage_text);
		return USC_EXIT_USAGE;
	}
	if (list_only) {
		if (usc_cli_is_dir(target) || mutant_op) {
			usc_cli_error("--list-mutants takes KERNEL.hlo\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		return list_mutants(target, req.fusion);
	}
	if (mutant_op) {
		if (!out || usc_cli_is_dir(target)) {
			usc_cli_error("--mutant takes KERNEL.hlo and -o "
				      "OUT.hlo\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		return write_mutant(target, req.fusion, mutant_op, mutant_kind,
				    out);
	}
	/*
	 * --out appends to a result file: refused before the search runs
	 * when it is not one (docs/signatures.md).
	 */
	if (h5 && usc_results_check_target(h5, true, 0, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	usc_error_clear(&err);
	if (have_profile)
		req.options.profile = &profile;
	if (sets_path) {
		usc_signature_report **rs;
		size_t total = 0;

		if (usc_cli_is_dir(target) || req.device_count) {
			usc_cli_error("--device-sets takes KERNEL.hlo and "
				      "--input, without --device\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		if (read_sets(sets_path, set_sources, MAX_SETS * 4, &total,
			      &req.sets, &req.device_count, &set_buf) != 0)
			return USC_EXIT_FAIL;
		req.devices = set_sources;
		req.hlo_path = target;
		rs = calloc(req.sets, sizeof *rs);
		if (!rs) {
			free(set_buf);
			usc_cli_error("out of memory");
			return USC_EXIT_FAIL;
		}
		st = usc_signature_run_sets(&req, rs, &err);
		free(set_buf);
		if (st != USC_OK) {
			free(rs);
			usc_cli_error("%s", err.message);
			return USC_EXIT_FAIL;
		}
		rc = USC_EXIT_OK;
		for (size_t k = 0; k < req.sets; k++) {
			if (!json)
				printf("%sset %zu:\n", k ? "\n" : "", k);
			if (json)
				print_json(rs[k]);
			else
				print_text(rs[k]);
			if (rs[k]->verdict == USC_SIGNATURE_UNEXPLAINED)
				rc = 3;
			usc_signature_report_destroy(rs[k]);
		}
		free(rs);
		return rc;
	}
	if ((nalso || sep_dir) && !usc_cli_is_dir(target)) {
		usc_cli_error("--also and --separate take a case directory\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	for (size_t k = 0; k < nalso; k++)
		if (!usc_cli_is_dir(dirs[1 + k])) {
			usc_cli_error("--also %s: not a case directory (a "
				      "directory with kernel.hlo, input_N.npy "
				      "and device_N.npy)",
				      dirs[1 + k]);
			return USC_EXIT_FAIL;
		}
	if (usc_cli_is_dir(target)) {
		if (req.input_count || req.fusion) {
			usc_cli_error("a case directory brings its own kernel "
				      "and inputs");
			return USC_EXIT_USAGE;
		}
		dirs[0] = target;
		st = usc_signature_cases(dirs, 1 + nalso, &req, &r, &err);
	} else {
		req.hlo_path = target;
		st = usc_signature_run(&req, &r, &err);
	}
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	rc = r->verdict == USC_SIGNATURE_UNEXPLAINED ? 3 : USC_EXIT_OK;
	if (sep_dir) {
		if (json)
			print_json_open(r);
		else
			print_text(r);
		so.reduce_order = req.options.reduce_order;
		if (separate(target, r, &so, sep_dir, json) != 0)
			rc = USC_EXIT_FAIL;
	} else if (json) {
		print_json(r);
	} else {
		print_text(r);
	}
	if (h5 && write_results(r, h5, kname) != 0)
		rc = USC_EXIT_FAIL;
	else if (h5 && !json)
		printf("signatures written to %s\n", h5);
	usc_signature_report_destroy(r);
	return rc;
}
