/*
 * Separating inputs for tied candidates (docs/signatures.md, "Separating
 * inputs").  When several mutations give the same bits on a run's inputs
 * (an observational tie), no ranking of that run can name one; a second
 * run on inputs where they differ can (signature_runs.c).  This file
 * proposes those inputs: it draws input sets with the audit's seeded
 * distributions (audit_draw.c) in the kernel's parameter types and
 * shapes, evaluates the kernel and every tied mutant on each with the
 * evaluator the search uses, and keeps the draw that splits them into the
 * most classes of distinct outputs.  Members that no draw tells apart are
 * reported as likely equivalent programs: the search's equivalence rules
 * (signature_equiv.c) prove some twins, the draws find the rest.
 *
 * The classes are by strict values, bit for bit: a device that computes
 * a mutant is not strict, so among draws with as many classes the one
 * that splits the most elements is kept, the likeliest to keep the
 * members apart under the device's envelope too.
 */
#include "internal.h"
#include "analyze/case_internal.h"
#include "analyze/signature_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/audit.h"

usc_signature_separate_options usc_signature_separate_options_default(void)
{
	usc_signature_separate_options o;

	memset(&o, 0, sizeof o);
	o.draws = 16;
	o.seed = 1;
	return o;
}

void usc_signature_separation_destroy(usc_signature_separation *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->member_count; i++) {
		usc__free(s->members[i].op);
		usc__free(s->members[i].computation);
	}
	usc__free(s->members);
	usc__sig_free_tensors(s->inputs, s->input_count);
	usc__free(s);
}

/* A member's module: the kernel itself, or its mutant parsed. */
typedef struct member_prog {
	usc_hlo_file *f;       /* NULL: the kernel (m) */
	const usc_hlo_module *m;
} member_prog;

/*
 * The mutant of member x as a module: p->m NULL (no error) when it does
 * not apply or does not parse, which the search's own evaluation of the
 * tied candidate rules out; every draw is then undecided.
 */
static usc_status member_module(const usc_hlo_module *m,
				const usc_signature_member *x, member_prog *p,
				usc_error *err)
{
	char *text = NULL;
	bool applies = false;
	usc_error e2;
	usc_status st;

	p->f = NULL;
	p->m = m;
	if (x->kind == USC_MUT_NONE)
		return USC_OK;
	p->m = NULL;
	usc_error_clear(&e2);
	st = usc_signature_mutate(m, x->op, x->kind, x->variant, &applies,
				  NULL, 0, &text, &e2);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	if (st != USC_OK || !applies)
		return USC_OK;
	st = usc_hlo_parse(text, strlen(text), "<mutant>", &p->f, &e2);
	usc_hlo_text_free(text);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	if (st == USC_OK && usc_hlo_file_module_count(p->f) >= 1)
		p->m = usc_hlo_file_module(p->f, 0);
	return USC_OK;
}

/*
 * Evaluates module m on inputs (strict reference): outputs into outs
 * (nout of them).  *ok false when it does not evaluate; only out of
 * memory is an error.
 */
static usc_status run_strict(const usc_hlo_module *m,
			     const usc_tensor *const *inputs, size_t ni,
			     usc_eval_reduce_order order, usc_tensor **outs,
			     size_t nout, bool *ok, usc_error *err)
{
	usc_eval_options eo = usc_eval_options_default();
	usc_eval *ev = NULL;
	usc_error e2;
	usc_status st;

	*ok = false;
	eo.reduce_order = order;
	usc_error_clear(&e2);
	st = usc_eval_create(m, &eo, &ev, &e2);
	if (st == USC_OK && usc_eval_param_count(ev) != ni)
		st = USC_EINVAL;
	if (st == USC_OK)
		st = usc_eval_bind_all(ev, inputs, ni, &e2);
	if (st == USC_OK)
		st = usc_eval_run(ev, &e2);
	if (st == USC_OK && usc_eval_output_count(ev) != nout)
		st = USC_EINVAL;
	for (size_t i = 0; i < nout && st == USC_OK; i++)
		st = usc_eval_take_output(ev, i, &outs[i], &e2);
	usc_eval_destroy(ev);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	*ok = st == USC_OK;
	return USC_OK;
}

/* Element k of two outputs: the same bits (every NaN alike)? */
static bool same_elem(const usc_tensor *a, const usc_tensor *b, uint64_t k)
{
	usc_dtype t = usc_tensor_dtype(a);
	uint64_t x = 0, y = 0;

	usc_tensor_get_bits(a, k, &x);
	usc_tensor_get_bits(b, k, &y);
	return x == y || (usc_dtype_is_float(t) && usc_bits_is_nan(t, x) &&
			  usc_bits_is_nan(t, y));
}

static bool same_outputs(usc_tensor *const *a, usc_tensor *const *b,
			 size_t nout)
{
	for (size_t o = 0; o < nout; o++) {
		uint64_t n = usc_tensor_count(a[o]);

		if (usc_tensor_dtype(a[o]) != usc_tensor_dtype(b[o]) ||
		    n != usc_tensor_count(b[o]))
			return false;
		for (uint64_t k = 0; k < n; k++)
			if (!same_elem(a[o], b[o], k))
				return false;
	}
	return true;
}

/*
 * Elements where the tied candidates (members 1 on, not the kernel) do
 * not all agree: member 1 the pivot.
 */
static uint64_t split_count(usc_tensor **outs, size_t nm, size_t nout)
{
	uint64_t split = 0;

	for (size_t o = 0; o < nout; o++) {
		const usc_tensor *p = outs[nout + o];
		uint64_t n = usc_tensor_count(p);

		for (uint64_t k = 0; k < n; k++)
			for (size_t i = 2; i < nm; i++)
				if (usc_tensor_dtype(outs[i * nout + o]) !=
					usc_tensor_dtype(p) ||
				    k >= usc_tensor_count(outs[i * nout + o]) ||
				    !same_elem(p, outs[i * nout + o], k)) {
					split++;
					break;
				}
	}
	return split;
}

/* The members: the kernel, then every tied candidate that is a program. */
static usc_status collect_members(const usc_signature_report *r,
				  usc_signature_separation *s, usc_error *err)
{
	size_t n = 1;

	for (size_t i = 0; i < r->candidate_count; i++)
		n += r->candidates[i].tied_best && r->candidates[i].op &&
		     r->candidates[i].kind != USC_MUT_OUTPUT_ZERO;
	s->members = usc__calloc(n, sizeof *s->members);
	if (!s->members)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	s->members[0].kind = USC_MUT_NONE;
	s->member_count = 1;
	for (size_t i = 0; i < r->candidate_count; i++) {
		const usc_signature_candidate *c = &r->candidates[i];
		usc_signature_member *x = &s->members[s->member_count];

		if (!c->tied_best || !c->op || c->kind == USC_MUT_OUTPUT_ZERO)
			continue;
		x->op = usc__strdup(c->op);
		x->computation = usc__strdup(c->computation ? c->computation
							    : "");
		x->kind = c->kind;
		x->variant = c->variant;
		s->member_count++;
		if (!x->op || !x->computation)
			return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	s->tied = s->member_count - 1;
	return USC_OK;
}

/* The parameters' specs of m and its output count (an evaluator's). */
static usc_status param_specs(const usc_hlo_module *m,
			      usc_eval_reduce_order order,
			      usc_tensor_spec **specs, size_t *np,
			      size_t *nout, usc_error *err)
{
	usc_eval_options eo = usc_eval_options_default();
	usc_eval *ev = NULL;
	usc_status st;

	*specs = NULL;
	*np = 0;
	eo.reduce_order = order;
	st = usc_eval_create(m, &eo, &ev, err);
	if (st != USC_OK)
		return st;
	*np = usc_eval_param_count(ev);
	*nout = usc_eval_output_count(ev);
	*specs = usc__calloc(*np ? *np : 1, sizeof **specs);
	if (!*specs)
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; st == USC_OK && i < *np; i++)
		st = usc_eval_param_spec(ev, i, &(*specs)[i], err);
	usc_eval_destroy(ev);
	return st;
}

/* The never-separated groups: same_as of each member. */
static void inseparable_groups(usc_signature_separation *s,
			       const uint8_t *apart)
{
	size_t nm = s->member_count;

	s->inseparable = 0;
	for (size_t i = 0; i < nm; i++) {
		s->members[i].same_as = i;
		for (size_t j = 0; j < i; j++)
			if (!apart[j * nm + i]) {
				s->members[i].same_as = s->members[j].same_as;
				break;
			}
	}
	for (size_t i = 1; i < nm; i++) {
		bool grouped = false;

		for (size_t j = 1; j < nm && !grouped; j++)
			grouped = j != i &&
				  s->members[j].same_as == s->members[i].same_as;
		s->inseparable += grouped;
	}
}

usc_status usc_signature_separate(const usc_hlo_module *m,
				  const usc_signature_report *r,
				  const usc_signature_separate_options *opts,
				  usc_signature_separation **out,
				  usc_error *err)
{
	usc_signature_separate_options o =
	    opts ? *opts : usc_signature_separate_options_default();
	usc_signature_separation *s;
	member_prog *prog = NULL;
	usc_tensor_spec *specs = NULL;
	usc_tensor **in = NULL, **outs = NULL;
	uint8_t *apart = NULL;
	size_t np = 0, nout = 0, nm, best_classes = 0, best_tclasses = 0;
	usc_status st;

	*out = NULL;
	if (o.draws == 0)
		o.draws = 16;
	s = usc__calloc(1, sizeof *s);
	if (!s)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	s->draw = SIZE_MAX;
	st = collect_members(r, s, err);
	if (st != USC_OK || s->tied < 2)
		goto done;
	nm = s->member_count;
	st = param_specs(m, o.reduce_order, &specs, &np, &nout, err);
	if (st != USC_OK)
		goto done;
	prog = usc__calloc(nm, sizeof *prog);
	in = usc__calloc(np ? np : 1, sizeof *in);
	outs = usc__calloc(nm * (nout ? nout : 1), sizeof *outs);
	apart = usc__calloc(nm * nm, 1);
	if (!prog || !in || !outs || !apart) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nm && st == USC_OK; i++)
		st = member_module(m, &s->members[i], &prog[i], err);
	for (size_t d = 0; st == USC_OK && d < o.draws; d++) {
		usc_audit_dist dist =
		    (usc_audit_dist)(d % (size_t)USC_AUDIT_DIST_COUNT);
		bool all_ok = true;
		size_t classes = 0, tclasses = 0;
		uint64_t split;

		for (size_t i = 0; i < np && st == USC_OK; i++)
			st = usc_audit_draw(dist, o.seed + d, i, &specs[i],
					    USC_DTYPE_INVALID, &in[i], err);
		for (size_t i = 0; i < nm && st == USC_OK && all_ok; i++) {
			if (!prog[i].m) {
				all_ok = false;
				break;
			}
			st = run_strict(prog[i].m,
					(const usc_tensor *const *)in, np,
					o.reduce_order, outs + i * nout, nout,
					&all_ok, err);
		}
		/* A draw some member cannot be evaluated on decides nothing. */
		if (st == USC_OK && all_ok) {
			s->draws++;
			for (size_t i = 0; i < nm; i++) {
				bool fresh = true, tfresh = i > 0;

				for (size_t j = 0; j < i; j++) {
					bool same = same_outputs(
					    outs + i * nout, outs + j * nout,
					    nout);

					if (!same)
						apart[j * nm + i] =
						    apart[i * nm + j] = 1;
					fresh = fresh && !same;
					tfresh = tfresh && (j == 0 || !same);
				}
				/* A new class when no member before it is
				 * equal; among the tied candidates, when none
				 * of them before it is. */
				classes += fresh;
				tclasses += tfresh;
			}
			split = split_count(outs, nm, nout);
			/*
			 * The draw must split the tied candidates themselves;
			 * the kernel's own class comes second.
			 */
			if (tclasses > 1 &&
			    (tclasses > best_tclasses ||
			     (tclasses == best_tclasses &&
			      (classes > best_classes ||
			       (classes == best_classes &&
				split > s->split_elements))))) {
				best_tclasses = tclasses;
				best_classes = classes;
				s->split_elements = split;
				s->draw = d;
				s->seed = o.seed + d;
				snprintf(s->distribution,
					 sizeof s->distribution, "%s",
					 usc_audit_dist_name(dist));
				/* The classes, numbered in member order. */
				for (size_t i = 0, next = 0; i < nm; i++) {
					size_t j = 0;

					while (j < i &&
					       !same_outputs(outs + i * nout,
							     outs + j * nout,
							     nout))
						j++;
					s->members[i].cls =
					    j < i ? s->members[j].cls : next++;
				}
				s->class_count = classes;
				usc__sig_free_tensors(s->inputs,
						      s->input_count);
				s->inputs = in;
				s->input_count = np;
				in = usc__calloc(np ? np : 1, sizeof *in);
				if (!in)
					st = usc__fail(err, USC_ENOMEM,
						       "out of memory");
			}
		}
		for (size_t i = 0; i < nm * nout; i++) {
			usc_tensor_destroy(outs[i]);
			outs[i] = NULL;
		}
		for (size_t i = 0; in && i < np; i++) {
			usc_tensor_destroy(in[i]);
			in[i] = NULL;
		}
	}
	if (st == USC_OK)
		inseparable_groups(s, apart);
done:
	for (size_t i = 0; prog && i < s->member_count; i++)
		usc_hlo_file_destroy(prog[i].f);
	usc__free(prog);
	usc__free(specs);
	usc__sig_free_tensors(in, np);
	usc__free(outs);
	usc__free(apart);
	if (st != USC_OK) {
		usc_signature_separation_destroy(s);
		return st;
	}
	*out = s;
	return USC_OK;
}

/* Copies file from to path to (a case's kernel.hlo, case.json). */
static usc_status copy_file(const char *from, const char *to, usc_error *err)
{
	FILE *in = fopen(from, "rb"), *out = NULL;
	char buf[65536];
	size_t n;
	bool bad = false;

	if (!in)
		return usc__fail(err, USC_EIO, "%s: cannot read: %s", from,
				 strerror(errno));
	out = fopen(to, "wb");
	if (!out) {
		fclose(in);
		return usc__fail(err, USC_EIO, "%s: cannot write: %s", to,
				 strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		bad = bad || fwrite(buf, 1, n, out) != n;
	bad = bad || ferror(in);
	fclose(in);
	if (fclose(out) != 0 || bad)
		return usc__fail(err, USC_EIO, "%s: write error", to);
	return USC_OK;
}

usc_status usc_signature_separation_write(const usc_signature_separation *s,
					  const char *case_dir,
					  const char *out_dir, usc_error *err)
{
	char *from = NULL, *to = NULL;
	struct stat sb;
	usc_status st = USC_OK;

	if (!s->inputs)
		return usc__fail(err, USC_EINVAL,
				 "no separating draw to write");
	if (mkdir(out_dir, 0777) != 0) {
		if (errno != EEXIST)
			return usc__fail(err, USC_EIO, "%s: cannot create: %s",
					 out_dir, strerror(errno));
		if (stat(out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return usc__fail(err, USC_EIO,
					 "%s: exists and is not a directory",
					 out_dir);
	}
	to = usc__case_join(out_dir, "kernel.hlo");
	if (!to)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	if (usc__case_file_exists(to))
		st = usc__fail(err, USC_EINVAL,
			       "%s already holds a case (kernel.hlo): give a "
			       "new directory",
			       out_dir);
	usc__free(to);
	for (int k = 0; k < 2 && st == USC_OK; k++) {
		const char *name = k ? "case.json" : "kernel.hlo";

		from = usc__case_join(case_dir, name);
		to = usc__case_join(out_dir, name);
		if (!from || !to)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		else if (k == 0 || usc__case_file_exists(from))
			st = copy_file(from, to, err);
		usc__free(from);
		usc__free(to);
	}
	for (size_t i = 0; i < s->input_count && st == USC_OK; i++) {
		char name[64];

		snprintf(name, sizeof name, "input_%zu.npy", i);
		to = usc__case_join(out_dir, name);
		st = to ? usc_tensor_write_npy(s->inputs[i], to, err)
			: usc__fail(err, USC_ENOMEM, "out of memory");
		usc__free(to);
	}
	return st;
}
