/*
 * The audit of a whole pipeline (docs/audit.md, "Pipelines"): XLA's
 * per-pass dumps of one module, in order, each audited against the first
 * on the same samples, so that every stage's figures share one measure
 * (the errors against the input module's oracle).  A stage moved when
 * some reference element differs from the previous evaluated stage's;
 * the stage that moved max |ulp| the most is then audited alone against
 * its predecessor with the op-by-op view: the descent from the pipeline
 * into the pass, the bisection the method does by hand.
 */
#include "internal.h"
#include "analyze/audit_internal.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulpscope/audit.h"

void usc_audit_pipeline_destroy(usc_audit_pipeline *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->stages && i < p->stage_count; i++) {
		usc__free(p->stages[i].path);
		usc__free(p->stages[i].label);
		usc__free(p->stages[i].pass);
		usc_audit_report_destroy(p->stages[i].audit);
	}
	usc__free(p->stages);
	usc_audit_report_destroy(p->descent);
	usc__free(p->dir);
	usc__free(p->module);
	usc__free(p);
}

/* ------------------------------------------------------------ names */

/* A dump's place: 0 the input, 1 a pass (by seq), 2 the output. */
typedef struct dump_name {
	char *file;
	char *module;
	int rank;
	long seq;
} dump_name;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * Parses "module_NNNN.<module>.<rest>.txt"; false for any other file
 * (buffer assignments, LLVM IR, objects, debug options).
 */
static bool parse_dump(const char *file, dump_name *d)
{
	const char *p = file, *mod, *rest;
	char *end;

	if (strncmp(p, "module_", 7) != 0 || !ends_with(p, ".txt"))
		return false;
	p += 7;
	(void)strtol(p, &end, 10);
	if (end == p || *end != '.')
		return false;
	mod = end + 1;
	rest = strchr(mod, '.');
	if (!rest || rest == mod)
		return false;
	rest++;
	if (strcmp(rest, "before_optimizations.txt") == 0) {
		d->rank = 0, d->seq = 0;
	} else if (ends_with(rest, "_after_optimizations.txt") &&
		   !strchr(rest, '-')) {
		d->rank = 2, d->seq = 0;
	} else if (rest[0] >= '0' && rest[0] <= '9') {
		d->seq = strtol(rest, &end, 10);
		if (*end != '.' || !strstr(end + 1, ".after_"))
			return false;
		d->rank = 1;
	} else {
		return false;
	}
	d->module = usc__strndup(mod, (size_t)(rest - 1 - mod));
	d->file = usc__strdup(file);
	return true;
}

static int dump_order(const void *x, const void *y)
{
	const dump_name *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank - b->rank;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/*
 * The label and pass of a dump: "SSSS pipeline: pass" from
 * "...SSSS.pipeline.after_pass[.before_next].txt".
 */
static usc_status stage_names(const dump_name *d, usc_audit_stage *s,
			      usc_error *err)
{
	const char *rest = d->file + strlen("module_");
	char buf[1024];

	rest = strchr(rest, '.') + 1 + strlen(d->module) + 1;
	if (d->rank != 1) {
		size_t n = strlen(rest) - strlen(".txt");

		snprintf(buf, sizeof buf, "%.*s", (int)n, rest);
		s->label = usc__strdup(buf);
		s->pass = usc__strdup(d->rank == 0 ? "" : buf);
	} else {
		/* The pipeline's own name may begin with "after_". */
		const char *after = strstr(strchr(rest, '.') + 1, ".after_");
		const char *pass = after + strlen(".after_");
		const char *before = strstr(pass, ".before_");
		size_t plen = before ? (size_t)(before - pass)
				     : strlen(pass) - strlen(".txt");

		s->pass = usc__strndup(pass, plen);
		snprintf(buf, sizeof buf, "%.*s: %.*s", (int)(after - rest),
			 rest, (int)plen, pass);
		s->label = usc__strdup(buf);
	}
	if (!s->label || !s->pass)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

static void dumps_free(dump_name *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++) {
		usc__free(d[i].file);
		usc__free(d[i].module);
	}
	usc__free(d);
}

/* The dumps of one module of dir, in order. */
static usc_status list_dumps(const char *dir, const char *module,
			     dump_name **out, size_t *count, usc_error *err)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	dump_name *d = NULL;
	size_t n = 0, cap = 0, k = 0;
	const char *only = module;
	usc_status st = USC_OK;

	*out = NULL;
	*count = 0;
	if (!dp)
		return usc__fail(err, USC_EIO, "%s: cannot read the directory",
				 dir);
	while (st == USC_OK && (e = readdir(dp)) != NULL) {
		dump_name one;

		if (!parse_dump(e->d_name, &one))
			continue;
		if (!one.file || !one.module) {
			usc__free(one.file);
			usc__free(one.module);
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		if (n == cap) {
			dump_name *g = usc__reallocarray(d, cap ? 2 * cap : 32,
							 sizeof *d);

			if (!g) {
				usc__free(one.file);
				usc__free(one.module);
				st = usc__fail(err, USC_ENOMEM, "out of memory");
				break;
			}
			d = g;
			cap = cap ? 2 * cap : 32;
		}
		d[n++] = one;
	}
	closedir(dp);
	if (st != USC_OK) {
		dumps_free(d, n);
		return st;
	}
	/* Without a module named, the directory must hold only one. */
	for (size_t i = 0; !module && i < n; i++) {
		if (!only)
			only = d[i].module;
		else if (strcmp(only, d[i].module) != 0) {
			st = usc__fail(err, USC_EINVAL,
				       "%s: dumps of several modules (%s, %s, "
				       "...): name one with --module",
				       dir, only, d[i].module);
			dumps_free(d, n);
			return st;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (only && strcmp(d[i].module, only) == 0) {
			dump_name t = d[k];

			d[k++] = d[i];
			d[i] = t;
		}
	}
	for (size_t i = k; i < n; i++) {
		usc__free(d[i].file);
		usc__free(d[i].module);
	}
	if (k < 2 || !only) {
		dumps_free(d, k);
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no per-pass dumps of %s%s%s (XLA_FLAGS="
				 "--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*)",
				 dir, module ? "module '" : "any module",
				 module ? module : "", module ? "'" : "");
	}
	qsort(d, k, sizeof *d, dump_order);
	if (d[0].rank != 0) {
		dumps_free(d, k);
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no %s.before_optimizations.txt among "
				 "the dumps of %s",
				 dir, only, only);
	}
	*out = d;
	*count = k;
	return USC_OK;
}

const usc_audit_report *usc_audit_stage_report(const usc_audit_pipeline *p,
					       size_t k)
{
	if (!p || k >= p->stage_count)
		return NULL;
	if (p->stages[k].same_as != SIZE_MAX)
		k = p->stages[k].same_as;
	return p->stages[k].audit;
}

/* A dump's text without its first line when that is the HloModule line. */
static usc_status module_text(const char *path, char **text, size_t *len,
			      usc_error *err)
{
	usc_status st = usc__read_file(path, text, len, err);
	char *nl;

	if (st != USC_OK)
		return st;
	if (strncmp(*text, "HloModule ", 10) == 0 &&
	    (nl = memchr(*text, '\n', *len)) != NULL) {
		size_t skip = (size_t)(nl + 1 - *text);

		memmove(*text, nl + 1, *len - skip);
		*len -= skip;
	}
	return USC_OK;
}

/* ------------------------------------------------------------ the run */

/* Whether any reference element of two audits of one sample set differs. */
static bool refs_differ(const usc_audit_report *a, const usc_audit_report *b)
{
	for (size_t s = 0; s < a->sample_count; s++)
		for (size_t i = 0; i < a->output_count; i++) {
			const usc_audit_elements *x = &a->samples[s].elements[i];
			const usc_audit_elements *y = &b->samples[s].elements[i];

			if (memcmp(x->ref_after, y->ref_after,
				   (size_t)x->count * sizeof *x->ref_after))
				return true;
		}
	return false;
}

static bool fn_differs(const usc_audit_report *a, const usc_audit_report *b)
{
	for (size_t s = 0; s < a->sample_count; s++)
		for (size_t i = 0; i < a->output_count; i++) {
			const usc_audit_elements *x = &a->samples[s].elements[i];
			const usc_audit_elements *y = &b->samples[s].elements[i];

			for (uint64_t j = 0; j < x->count; j++)
				if ((x->flags[j] & 8) != (y->flags[j] & 8))
					return true;
		}
	return false;
}

/* The largest move of an output's pooled max |ulp| between two audits. */
static double max_move(const usc_audit_report *a, const usc_audit_report *b)
{
	double m = 0;

	for (size_t i = 0; i < a->output_count; i++) {
		double d = fabs(b->pooled[i].after.max_abs -
				a->pooled[i].after.max_abs);

		if (!isnan(d) && d > m)
			m = d;
	}
	return m;
}

usc_status usc_audit_pipeline_run(const usc_audit_request *req,
				  const char *dir, const char *module,
				  usc_audit_pipeline **out, usc_error *err)
{
	usc_audit_pipeline *p;
	dump_name *d = NULL;
	size_t n = 0, prev = SIZE_MAX, tried = 0, prev_len = 0;
	char *text = NULL, *prev_text = NULL;
	double best = -1;
	usc_status st;

	if (!req || !dir || !out)
		return usc__fail(err, USC_EINVAL, "incomplete pipeline audit");
	*out = NULL;
	st = list_dumps(dir, module, &d, &n, err);
	if (st != USC_OK)
		return st;
	p = usc__calloc(1, sizeof *p);
	if (!p || !(p->stages = usc__calloc(n, sizeof *p->stages))) {
		usc__free(p);
		dumps_free(d, n);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	p->stage_count = n;
	p->biggest = SIZE_MAX;
	p->dir = usc__strdup(dir);
	p->module = usc__strdup(d[0].module);
	if (!p->dir || !p->module)
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t k = 0; st == USC_OK && k < n; k++) {
		usc_audit_stage *s = &p->stages[k];
		size_t plen = strlen(dir) + strlen(d[k].file) + 2, len = 0;
		usc_audit_request r = *req;
		usc_error e;
		usc_status sst;

		s->path = usc__malloc(plen);
		if (!s->path) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		snprintf(s->path, plen, "%s/%s", dir, d[k].file);
		st = stage_names(&d[k], s, err);
		if (st != USC_OK)
			break;
		s->same_as = SIZE_MAX;
		st = module_text(s->path, &text, &len, err);
		if (st != USC_OK)
			break;
		if (prev_text && len == prev_len &&
		    memcmp(text, prev_text, len) == 0) {
			s->same_as = tried;
			usc__free(text);
			text = NULL;
			continue;
		}
		usc__free(prev_text);
		prev_text = text, prev_len = len, tried = k;
		text = NULL;
		r.before_path = p->stages[0].path;
		r.after_path = s->path;
		r.ops = false;
		sst = usc_audit_run(&r, &s->audit, &e);
		if (sst == USC_ENOMEM) {
			st = usc__fail(err, sst, "%s", e.message);
			break;
		}
		if (sst != USC_OK) {
			/* The first stage must evaluate; a later one may not. */
			if (k == 0) {
				st = usc__fail(err, sst, "%s", e.message);
				break;
			}
			snprintf(s->note, sizeof s->note, "%s", e.message);
			continue;
		}
		if (prev != SIZE_MAX) {
			const usc_audit_report *a = p->stages[prev].audit;
			double m = max_move(a, s->audit);

			s->moved = refs_differ(a, s->audit);
			s->fn_moved = fn_differs(a, s->audit);
			if ((s->moved || s->fn_moved) && m > best) {
				best = m;
				p->biggest = k;
			}
		}
		prev = k;
	}
	usc__free(text);
	usc__free(prev_text);
	/* The descent: the biggest move alone, op by op. */
	if (st == USC_OK && p->biggest != SIZE_MAX) {
		usc_audit_request r = *req;
		size_t k = p->biggest, j = k;

		while (j-- > 0 && !p->stages[j].audit)
			;
		r.before_path = p->stages[j].path;
		r.after_path = p->stages[k].path;
		r.ops = true;
		st = usc_audit_run(&r, &p->descent, err);
	}
	dumps_free(d, n);
	if (st != USC_OK) {
		usc_audit_pipeline_destroy(p);
		return st;
	}
	*out = p;
	return USC_OK;
}

/* ------------------------------------------------------------ the gate */

int usc_audit_pass_gate(const usc_audit_pipeline *p, size_t k, double t,
			char *reason, size_t size)
{
	const usc_audit_report *a, *b = NULL;
	size_t j = k;

	if (reason && size)
		reason[0] = '\0';
	if (!p || k == 0 || k >= p->stage_count || !(a = p->stages[k].audit))
		return 0;
	while (j-- > 0 && !(b = p->stages[j].audit))
		;
	if (!b)
		return 0;
	/*
	 * A pass changed the function when the set of elements where it
	 * differs from the input's moved here; it fails the gate when the
	 * function now differs by more than t.
	 */
	if (p->stages[k].fn_moved && a->function_changed &&
	    !(a->function_max_ulps <= t)) {
		if (reason && size)
			snprintf(reason, size,
				 "the function differs from the input's by "
				 "up to %.4g ulp (> %g)",
				 a->function_max_ulps, t);
		return 4;
	}
	for (size_t i = 0; i < a->output_count; i++) {
		usc_audit_figures f;

		memset(&f, 0, sizeof f);
		f.before = b->pooled[i].after;
		f.after = a->pooled[i].after;
		usc__audit_judge(&f, t);
		if (f.verdict == USC_AUDIT_REGRESSED) {
			if (reason && size)
				snprintf(reason, size, "output %zu: %s", i,
					 f.reason);
			return 3;
		}
	}
	return 0;
}

int usc_audit_pipeline_gate(const usc_audit_pipeline *p, double t,
			    size_t *worst)
{
	int rc = 0;

	if (worst)
		*worst = SIZE_MAX;
	for (size_t k = 0; p && k < p->stage_count; k++) {
		int g = usc_audit_pass_gate(p, k, t, NULL, 0);

		if (g > rc) {
			rc = g;
			if (worst)
				*worst = k;
		}
	}
	return rc;
}
