/*
 * Signatures over several runs of one kernel (docs/signatures.md,
 * "Several runs").  One run cannot tell apart two mutations that give the
 * same bits on its inputs (a select's branches swapped and its compare's
 * operands swapped, where both compare operands are equal); a second run
 * on other inputs can.  Each run is searched on its own (signature.c,
 * every mutant scored even where the run has no defect, since a mutant
 * may break that run's legit elements), and the candidates are merged by
 * (op, computation, mutation, variant): the counts are summed over the
 * runs, the width is the geometric mean over every explained element,
 * and the merged list is ranked by the one ranking of signature_score.c
 * over the sum of the runs' defect elements.  A tie with the best must
 * hold on every run.  One run is handed to usc_signature_search as is, so
 * that its report is exactly the single-run one.
 */
#include "internal.h"
#include "analyze/case_internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A candidate of one run, for the merge. */
typedef struct entry {
	usc_signature_candidate *c;
	size_t run;
} entry;

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* The merge key: op, computation, mutation, variant; then the run. */
static int cmp_entry(const void *pa, const void *pb)
{
	const entry *a = pa, *b = pb;
	int c = cmp_str(a->c->op, b->c->op);

	if (c == 0)
		c = cmp_str(a->c->computation, b->c->computation);
	if (c == 0 && a->c->kind != b->c->kind)
		c = a->c->kind < b->c->kind ? -1 : 1;
	if (c == 0 && a->c->variant != b->c->variant)
		c = a->c->variant < b->c->variant ? -1 : 1;
	if (c == 0 && a->run != b->run)
		c = a->run < b->run ? -1 : 1;
	return c;
}

static bool same_key(const usc_signature_candidate *a,
		     const usc_signature_candidate *b)
{
	return cmp_str(a->op, b->op) == 0 &&
	       cmp_str(a->computation, b->computation) == 0 &&
	       a->kind == b->kind && a->variant == b->variant;
}

/*
 * Folds run scores into the geometric mean of widths weighted by the
 * explained counts: sum of n ln w over the runs, over the sum of n.
 */
typedef struct wmean {
	double log_sum;
	uint64_t n;
} wmean;

static void wmean_add(wmean *w, uint64_t n, double width)
{
	if (n == 0 || isnan(width))
		return;
	w->log_sum += (double)n * log(width);
	w->n += n;
}

static double wmean_of(const wmean *w)
{
	return w->n ? exp(w->log_sum / (double)w->n) : NAN;
}

/*
 * The merged candidate of entries e[0..k) (one key, in run order): sums,
 * and the identity's figures on the runs where the mutant had no effect
 * (its output was the kernel's there).
 */
static bool merge_one(const entry *e, size_t k, const usc__sig_raw *runs,
		      size_t nrun, usc_signature_candidate *out)
{
	wmean w = {0, 0};
	size_t j = 0;

	memset(out, 0, sizeof *out);
	*out = *e[0].c;
	out->op = out->computation = NULL;
	out->equivalent = NULL;
	out->equivalent_count = 0;
	out->explained = out->broken = 0;
	out->reproduced = out->differing_reproduced = 0;
	out->median_ulps = NAN;
	out->envelope = true;
	out->runs = usc__calloc(nrun, sizeof *out->runs);
	if (!out->runs)
		return false;
	out->run_count = nrun;
	if ((e[0].c->op && !(out->op = usc__strdup(e[0].c->op))) ||
	    (e[0].c->computation &&
	     !(out->computation = usc__strdup(e[0].c->computation)))) {
		usc__sig_cand_free(out);
		return false;
	}
	for (size_t r = 0; r < nrun; r++) {
		const usc_signature_candidate *c =
		    j < k && e[j].run == r ? e[j++].c : NULL;
		const usc_signature_candidate *id = &runs[r].r->identity;
		double med;

		if (c) {
			out->runs[r].explained = c->explained;
			out->runs[r].broken = c->broken;
			out->runs[r].width = c->width;
			out->runs[r].scored = true;
			out->explained += c->explained;
			out->broken += c->broken;
			out->reproduced += c->reproduced;
			out->differing_reproduced += c->differing_reproduced;
			out->envelope = out->envelope && c->envelope;
			wmean_add(&w, c->explained, c->width);
			med = c->median_ulps;
		} else {
			out->runs[r].width = NAN;
			out->reproduced += id->reproduced;
			out->differing_reproduced += id->differing_reproduced;
			med = id->median_ulps;
		}
		/* The worst run's median: a run the mutant misses shows. */
		if (!isnan(med) && (isnan(out->median_ulps) ||
				    med > out->median_ulps))
			out->median_ulps = med;
	}
	out->width = wmean_of(&w);
	out->tied_best = false;
	return true;
}

/* Whether a and b score the same on every run (a tie that holds). */
static bool tied_every_run(const usc_signature_candidate *a,
			   const usc_signature_candidate *b)
{
	if (!a->runs || !b->runs || a->run_count != b->run_count)
		return true;
	for (size_t r = 0; r < a->run_count; r++) {
		const usc_signature_run_score *x = &a->runs[r], *y = &b->runs[r];
		bool xn = isnan(x->width), yn = isnan(y->width);

		if (x->explained != y->explained || x->broken != y->broken ||
		    xn != yn ||
		    (!xn && fabs(x->width - y->width) > 1e-9 * y->width))
			return false;
	}
	return true;
}

/* The combined report's counts from the runs'. */
static bool combine_counts(usc_signature_report *r, const usc__sig_raw *runs,
			   size_t nrun, const usc_signature_options *o)
{
	wmean w = {0, 0};

	r->kernel_name = usc__strdup(runs[0].r->kernel_name);
	r->runs = usc__calloc(nrun, sizeof *r->runs);
	if (!r->kernel_name || !r->runs)
		return false;
	r->run_count = nrun;
	r->min_fraction = o->min_fraction;
	memcpy(r->profile, runs[0].r->profile, sizeof r->profile);
	r->identity = runs[0].r->identity;
	r->identity.op = r->identity.computation = NULL;
	r->identity.equivalent = NULL;
	r->identity.equivalent_count = 0;
	r->identity.runs = NULL;
	r->identity.run_count = 0;
	r->identity.reproduced = r->identity.differing_reproduced = 0;
	r->identity.median_ulps = NAN;
	for (size_t k = 0; k < nrun; k++) {
		const usc_signature_report *x = runs[k].r;

		r->runs[k].elements = x->elements;
		r->runs[k].differing = x->differing;
		r->runs[k].defects = x->defects;
		r->elements += x->elements;
		r->differing += x->differing;
		r->defects += x->defects;
		r->enumerated += x->enumerated;
		r->evaluated += x->evaluated;
		r->no_effect += x->no_effect;
		r->failed += x->failed;
		r->skipped += x->skipped;
		r->envelopes += x->envelopes;
		r->pruned += x->pruned;
		r->budget_exhausted = r->budget_exhausted ||
				      x->budget_exhausted;
		r->seconds += x->seconds;
		if (!r->note[0] && x->note[0])
			memcpy(r->note, x->note, sizeof r->note);
		r->identity.reproduced += x->identity.reproduced;
		r->identity.differing_reproduced +=
		    x->identity.differing_reproduced;
		if (!isnan(x->identity.median_ulps) &&
		    (isnan(r->identity.median_ulps) ||
		     x->identity.median_ulps > r->identity.median_ulps))
			r->identity.median_ulps = x->identity.median_ulps;
		/* The identity's width is over the defect elements. */
		wmean_add(&w, x->defects, x->identity.width);
	}
	r->identity.width = wmean_of(&w);
	r->verdict = r->differing == 0  ? USC_SIGNATURE_NO_DIFFERENCE
		     : r->defects == 0 ? USC_SIGNATURE_LEGIT
				       : USC_SIGNATURE_UNEXPLAINED;
	return true;
}

/* Merges the runs' candidates into set s (its list, sorted by key). */
static bool merge_runs(usc__sig_set *s, const usc__sig_raw *runs, size_t nrun)
{
	size_t total = 0, at = 0;
	entry *e;
	bool ok = true;

	for (size_t k = 0; k < nrun; k++)
		total += runs[k].n;
	e = usc__malloc((total ? total : 1) * sizeof *e);
	if (!e)
		return false;
	for (size_t k = 0; k < nrun; k++)
		for (size_t i = 0; i < runs[k].n; i++) {
			e[at].c = &runs[k].list[i];
			e[at].run = k;
			at++;
		}
	qsort(e, total, sizeof *e, cmp_entry);
	for (size_t i = 0; ok && i < total;) {
		size_t j = i + 1;
		usc_signature_candidate c;

		while (j < total && same_key(e[j].c, e[i].c))
			j++;
		ok = merge_one(e + i, j - i, runs, nrun, &c);
		if (ok) {
			/* usc__sig_push copies names only from an op; the
			 * merged candidate owns its names already. */
			if (s->n == s->cap) {
				size_t nc = s->cap ? 2 * s->cap : 64;
				usc_signature_candidate *g =
				    usc__reallocarray(s->list, nc, sizeof *g);

				if (!g) {
					usc__sig_cand_free(&c);
					ok = false;
					break;
				}
				s->list = g;
				s->cap = nc;
			}
			s->list[s->n++] = c;
		}
		i = j;
	}
	usc__free(e);
	return ok;
}

usc_status usc_signature_search_runs(const usc_hlo_module *m,
				     size_t run_count,
				     const usc_tensor *const *inputs,
				     size_t input_count,
				     const usc_tensor *const *devices,
				     size_t device_count,
				     const usc_signature_options *opts,
				     usc_signature_report **out,
				     usc_error *err)
{
	usc_signature_options o = opts ? *opts
				       : usc_signature_options_default();
	usc__sig_raw *runs;
	usc__sig_set s;
	usc_status st = USC_OK;

	*out = NULL;
	if (run_count == 0)
		return usc__fail(err, USC_EINVAL, "no run given");
	if (run_count == 1)
		return usc_signature_search(m, inputs, input_count, devices,
					    device_count, opts, out, err);
	if (o.top == 0)
		o.top = 10;
	if (o.min_fraction <= 0)
		o.min_fraction = 0.95;
	runs = usc__calloc(run_count, sizeof *runs);
	if (!runs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	memset(&s, 0, sizeof s);
	for (size_t k = 0; k < run_count && st == USC_OK; k++) {
		st = usc__sig_search_raw(m, inputs + k * input_count,
					 input_count,
					 devices + k * device_count,
					 device_count, &o, &runs[k], err);
		if (st != USC_OK) {
			char msg[USC_ERROR_MESSAGE_SIZE];

			snprintf(msg, sizeof msg, "%s", err ? err->message : "");
			st = usc__fail(err, st, "run %zu: %s", k + 1, msg);
		}
	}
	if (st != USC_OK)
		goto done;
	s.r = usc__calloc(1, sizeof *s.r);
	s.m = m;
	if (!s.r || !combine_counts(s.r, runs, run_count, &o) ||
	    !merge_runs(&s, runs, run_count)) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	/* Nothing to explain on any run: nothing is ranked (as for one). */
	if (s.r->defects == 0) {
		for (size_t i = 0; i < s.n; i++)
			usc__sig_cand_free(&s.list[i]);
		s.n = 0;
	}
	if (!usc__sig_rank(&s, &o)) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	/* A tie with the best holds only when it holds on every run. */
	for (size_t i = 1; i < s.r->candidate_count; i++)
		if (s.r->candidates[i].tied_best &&
		    !tied_every_run(&s.r->candidates[i], &s.r->candidates[0]))
			s.r->candidates[i].tied_best = false;
	*out = s.r;
	s.r = NULL;
done:
	for (size_t i = 0; i < s.n; i++)
		usc__sig_cand_free(&s.list[i]);
	usc__free(s.list);
	usc_signature_report_destroy(s.r);
	for (size_t k = 0; k < run_count; k++)
		usc__sig_raw_free(&runs[k]);
	usc__free(runs);
	return st;
}

/* ------------------------------------------------ from case directories */

/* One case directory's module and files. */
typedef struct case_run {
	char *hlo;
	usc_hlo_file *f;
	char **inputs, **devices;
	size_t ni, nd;
	usc_tensor **in, **dev;
	size_t np, nout;
} case_run;

static void case_run_free(case_run *c)
{
	usc__sig_free_tensors(c->in, c->np);
	usc__sig_free_tensors(c->dev, c->nout);
	usc__case_free_list(c->inputs, c->ni);
	usc__case_free_list(c->devices, c->nd);
	usc_hlo_file_destroy(c->f);
	usc__free(c->hlo);
	memset(c, 0, sizeof *c);
}

/*
 * Loads case directory dir: its kernel (parsed), inputs and device
 * outputs (req's device override when it names some).
 */
static usc_status case_run_load(const char *dir,
				const usc_signature_request *base,
				bool override, case_run *c, usc_error *err)
{
	usc_signature_request req = *base;
	usc_status st;

	memset(c, 0, sizeof *c);
	st = usc__case_kernel(dir, &c->hlo, err);
	if (st == USC_OK)
		st = usc_hlo_parse_file(c->hlo, &c->f, err);
	if (st == USC_OK && usc_hlo_file_module_count(c->f) < 1)
		st = usc__fail(err, USC_EINVAL, "%s holds no module", c->hlo);
	if (st == USC_OK)
		st = usc__case_collect(dir, "input", &c->inputs, &c->ni, err);
	if (st == USC_OK && !override)
		st = usc__case_collect(dir, "device", &c->devices, &c->nd,
				       err);
	if (st != USC_OK)
		return st;
	if (!override) {
		if (c->nd == 0)
			return usc__fail(err, USC_EIO, "%s: no device_0.npy",
					 dir);
		req.device_count = c->nd;
		req.devices = (const char *const *)c->devices;
	}
	req.input_count = c->ni;
	req.inputs = (const char *const *)c->inputs;
	return usc__sig_read_run(usc_hlo_file_module(c->f, 0), c->hlo, &req, 1,
				 &c->in, &c->np, &c->dev, &c->nout, err);
}

/* Whether two modules print the same (the mutations' own printer). */
static usc_status same_module(const usc_hlo_module *a, const usc_hlo_module *b,
			      bool *same, usc_error *err)
{
	usc__sig_text ta, tb;
	usc_status st;

	memset(&ta, 0, sizeof ta);
	memset(&tb, 0, sizeof tb);
	st = usc__sig_print_base(a, &ta, err);
	if (st == USC_OK)
		st = usc__sig_print_base(b, &tb, err);
	*same = st == USC_OK && ta.len == tb.len &&
		memcmp(ta.text, tb.text, ta.len) == 0;
	usc_hlo_text_free(ta.text);
	usc_hlo_text_free(tb.text);
	return st;
}

usc_status usc_signature_cases(const char *const *dirs, size_t dir_count,
			       const usc_signature_request *base,
			       usc_signature_report **out, usc_error *err)
{
	usc_signature_request req = base ? *base
					 : usc_signature_request_default();
	case_run *runs;
	usc_tensor **in = NULL, **dev = NULL;
	usc_profile prof;
	usc_status st = USC_OK;

	*out = NULL;
	if (dir_count == 0)
		return usc__fail(err, USC_EINVAL, "no case directory given");
	if (dir_count == 1)
		return usc_signature_case(dirs[0], base, out, err);
	runs = usc__calloc(dir_count, sizeof *runs);
	if (!runs)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t k = 0; k < dir_count && st == USC_OK; k++) {
		st = case_run_load(dirs[k], &req,
				   k == 0 && req.device_count > 0, &runs[k],
				   err);
		if (st == USC_OK && k > 0) {
			bool same = false;

			st = same_module(usc_hlo_file_module(runs[0].f, 0),
					 usc_hlo_file_module(runs[k].f, 0),
					 &same, err);
			if (st == USC_OK && !same)
				st = usc__fail(
				    err, USC_EINVAL,
				    "%s: not the kernel of %s (the modules "
				    "differ; every run must be of one kernel)",
				    runs[k].hlo, runs[0].hlo);
		}
	}
	if (st != USC_OK)
		goto done;
	/* The profile the first case names, unless the caller chose. */
	if (!req.options.profile && !req.no_profile) {
		bool have = false;

		st = usc__case_profile(dirs[0], &prof, &have, err);
		if (st != USC_OK)
			goto done;
		if (have)
			req.options.profile = &prof;
	}
	in = usc__calloc(dir_count * (runs[0].np ? runs[0].np : 1),
			 sizeof *in);
	dev = usc__calloc(dir_count * (runs[0].nout ? runs[0].nout : 1),
			  sizeof *dev);
	if (!in || !dev) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < dir_count; k++) {
		for (size_t i = 0; i < runs[0].np; i++)
			in[k * runs[0].np + i] = runs[k].in[i];
		for (size_t i = 0; i < runs[0].nout; i++)
			dev[k * runs[0].nout + i] = runs[k].dev[i];
	}
	st = usc_signature_search_runs(
	    usc_hlo_file_module(runs[0].f, 0), dir_count,
	    (const usc_tensor *const *)in, runs[0].np,
	    (const usc_tensor *const *)dev, runs[0].nout, &req.options, out,
	    err);
done:
	usc__free(in);
	usc__free(dev);
	for (size_t k = 0; k < dir_count; k++)
		case_run_free(&runs[k]);
	usc__free(runs);
	return st;
}
