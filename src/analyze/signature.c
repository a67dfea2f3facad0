/*
 * Defect signatures (docs/signatures.md): one op of the kernel mutated at
 * a time, the mutant evaluated, and the (op, mutation) pairs ranked by how
 * much of the device output they explain.
 *
 * A mutant is HLO text (signature_text.c): the mutated op's line is
 * replaced by a few lines of plain HLO that compute the defect, and the
 * text is parsed again.  Every mutant is thus an ordinary kernel the
 * evaluator already knows, any reader can replay it with "ulpscope eval",
 * and no numeric domain had to learn about defects.  This file is the
 * search: the enumeration, the budget, the evaluations, and the entry
 * points from files and case directories.
 *
 * The search runs in two passes.  The first evaluates every mutant in the
 * reference domain (cheap) and scores it by the translated envelope
 * (signature_score.c); a mutant equal to the reference everywhere has no
 * effect and is dropped.  Under a profile, the second pass evaluates the
 * envelopes of the others, the most promising first, while the budget
 * lasts and up to USC__SIG_MAX_ENVELOPES: the envelope costs several
 * times the reference.
 */
#include "internal.h"
#include "analyze/case_internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/cone.h"
#include "eval/eval_values.h"
#include "ulpscope/hlo_kernel.h"
#include "../../oracles/envelope.h"

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The options of every evaluation of the search in a domain. */
static usc_eval_options eval_options(const usc_signature_options *o,
				     usc_eval_domain domain)
{
	usc_eval_options eo = usc_eval_options_default();

	eo.domain = domain;
	eo.reduce_order = o->reduce_order;
	if (domain == USC_DOMAIN_ENVELOPE)
		eo.profile = o->profile;
	return eo;
}

/*
 * A mutant's evaluation reuses the unmutated kernel's values upstream of
 * the mutated op (src/eval/cone.h): the cone of the printed kernel in the
 * domain, and how the mutant's lines match its lines.  NULL: whole.
 */
typedef struct cone_use {
	usc__cone *k;
	const usc__cone_match *m;
} cone_use;

/* An evaluator of m in a domain, its inputs bound. */
static usc_status make_eval(const usc_hlo_module *m,
			    const usc_tensor *const *inputs, size_t ni,
			    const usc_signature_options *o,
			    usc_eval_domain domain, const cone_use *cu,
			    usc_eval **out, usc_error *err)
{
	usc_eval_options eo = eval_options(o, domain);
	usc_status st;

	*out = NULL;
	st = usc_eval_create(m, &eo, out, err);
	if (st != USC_OK)
		return st;
	if (usc_eval_param_count(*out) != ni)
		return usc__fail(err, USC_EINVAL,
				 "the kernel takes %zu parameter(s); %zu "
				 "input(s) given",
				 usc_eval_param_count(*out), ni);
	if (cu && cu->k) {
		st = usc__cone_attach(*out, cu->k, cu->m, err);
		if (st != USC_OK)
			return st;
	}
	return usc_eval_bind_all(*out, inputs, ni, err);
}

/* Evaluates module m on the inputs; outputs handed over into outs. */
static usc_status evaluate(const usc_hlo_module *m,
			   const usc_tensor *const *inputs, size_t ni,
			   const usc_signature_options *o, const cone_use *cu,
			   usc_tensor **outs, size_t nout, usc_error *err)
{
	usc_eval *ev = NULL;
	usc_status st;

	st = make_eval(m, inputs, ni, o, USC_DOMAIN_REFERENCE, cu, &ev, err);
	if (st == USC_OK)
		st = usc_eval_run(ev, err);
	if (st == USC_OK && usc_eval_output_count(ev) != nout)
		st = usc__fail(err, USC_EINVAL,
			       "the kernel has %zu output(s); %zu device "
			       "output(s) given",
			       usc_eval_output_count(ev), nout);
	for (size_t i = 0; i < nout && st == USC_OK; i++)
		st = usc_eval_take_output(ev, i, &outs[i], err);
	usc_eval_destroy(ev);
	return st;
}

/* The envelope run's visitor state: where each output's elements go. */
typedef struct env_ctx {
	usc_eval *ev;
	usc_envelope *env;
	const uint64_t *offset; /* first flat element of each output */
	size_t nout;
	uint64_t elements;
} env_ctx;

static usc_status env_visit(void *ctx, size_t i, size_t first, size_t count,
			    const void *values, usc_dtype t, usc_error *err)
{
	env_ctx *c = ctx;

	if (i >= c->nout)
		return USC_OK;
	for (size_t j = 0; j < count; j++) {
		const void *v = (const unsigned char *)values +
				j * usc__domain_envelope.value_size;
		uint64_t k = c->offset[i] + first + j;
		usc__envelope_elem e;
		uint64_t bits;
		usc_status st;

		if (k >= c->elements)
			continue;
		st = usc__domain_envelope.to_output(
		    usc__eval_domain_state(c->ev), t, v, &bits, &e, err);
		if (st != USC_OK)
			return st;
		c->env[k] = usc__envelope_public(&e);
	}
	return USC_OK;
}

/*
 * The envelope of every output element of m under o->profile, flat in
 * env (elements entries).  A kernel the envelope domain refuses (or
 * cannot evaluate: a mutant's helper arithmetic) leaves every element
 * unknown and *why says so; only out of memory is an error.
 */
static usc_status
envelope_of(const usc_hlo_module *m, const usc_tensor *const *inputs, size_t ni,
	    const usc_signature_options *o, const cone_use *cu,
	    const uint64_t *offset, size_t nout, uint64_t elements,
	    usc_envelope *env, char *why, size_t why_size)
{
	usc__eval_stream s;
	env_ctx c;
	usc_eval *ev = NULL;
	usc_error e2;
	usc_status st;

	for (uint64_t k = 0; k < elements; k++) {
		memset(&env[k], 0, sizeof env[k]);
		env[k].flags = USC_ENV_UNKNOWN;
	}
	usc_error_clear(&e2);
	st = make_eval(m, inputs, ni, o, USC_DOMAIN_ENVELOPE, cu, &ev, &e2);
	if (st == USC_OK) {
		memset(&c, 0, sizeof c);
		c.ev = ev;
		c.env = env;
		c.offset = offset;
		c.nout = nout;
		c.elements = elements;
		memset(&s, 0, sizeof s);
		s.visit = env_visit;
		s.ctx = &c;
		st = usc__eval_run_stream(ev, &s, &e2);
	}
	usc_eval_destroy(ev);
	if (st == USC_ENOMEM)
		return st;
	if (st != USC_OK) {
		if (why)
			snprintf(why, why_size, "%s", e2.message);
		for (uint64_t k = 0; k < elements; k++) {
			memset(&env[k], 0, sizeof env[k]);
			env[k].flags = USC_ENV_UNKNOWN;
		}
	}
	return USC_OK;
}

/*
 * At most this many mutant envelopes per search, the most promising
 * first (usc__sig_score_strict's order: the defect elements a mutant
 * brings near the device, then those it changes): the envelope costs
 * several reference evaluations (10 to 300 ms on the kernels of
 * data/defects), and the right mutant is among the first few dozen in
 * that order.  The others keep their translated envelope (pruned).
 */
#define USC__SIG_MAX_ENVELOPES 96

/* A mutant waiting for its envelope: where its candidates are. */
typedef struct pending {
	const usc_hlo_instr *in;
	usc_mutation kind;
	int variant;
	uint64_t near; /* the most defect elements near it in any set */
	size_t *index; /* per set: its candidate, or SIZE_MAX */
} pending;

static int cmp_pending(const void *pa, const void *pb)
{
	const pending *a = pa, *b = pb;

	if (a->near != b->near)
		return a->near > b->near ? -1 : 1;
	return 0;
}

/* The state of one search. */
typedef struct search {
	const usc_hlo_module *m;
	const usc_tensor *const *inputs;
	size_t ni;
	size_t nout;
	size_t set_count;
	usc_signature_options o;
	usc__sig_set *sets;
	usc_tensor **ref, **mut;
	usc_envelope *env, *menv;
	uint64_t *offset;
	const usc_hlo_instr **producers; /* the op writing each output */
	uint64_t elements;
	double *scratch;
	usc__sig_text bt;
	/*
	 * The cones (src/eval/cone.h): the printed kernel parsed again (the
	 * mutants' lines are its lines), its lines indexed, and its values in
	 * the reference domain and, once the second pass needs it, the
	 * envelope's.  NULL: mutants are evaluated whole.
	 */
	usc_hlo_file *bf;
	usc__cone_text *ct;
	usc__cone *cref, *cenv;
	bool cenv_tried;
	pending *pend;
	size_t npend, cappend;
	size_t enumerated, evaluated, no_effect, failed, skipped;
	size_t envelopes, pruned;
	bool envelope_cut;
	/*
	 * One run of several (signature_runs.c): every mutant is scored even
	 * when the run has no defect element (it may break legit ones), and
	 * the candidates are handed over unranked.
	 */
	bool score_all;
	double t0;
} search;

static void free_outputs(usc_tensor **outs, size_t n)
{
	for (size_t i = 0; outs && i < n; i++) {
		usc_tensor_destroy(outs[i]);
		outs[i] = NULL;
	}
}

/*
 * The mutant's module parsed from its text (which the caller frees, after
 * the evaluations that match its lines); NULL (counted) on failure.
 */
static usc_hlo_file *parse_mutant(const usc_hlo_instr *in, usc_mutation k,
				  int v, char **text)
{
	usc_hlo_file *mf = NULL;
	usc_error e2;

	usc_error_clear(&e2);
	if (usc_hlo_parse(*text, strlen(*text), "<mutant>", &mf, &e2) !=
		USC_OK ||
	    usc_hlo_file_module_count(mf) < 1) {
		if (getenv("USC_SIGNATURE_DEBUG"))
			fprintf(stderr, "signature: %s %s/%d: %s\n", in->name,
				usc_mutation_name(k), v, e2.message);
		usc_hlo_file_destroy(mf);
		mf = NULL;
	}
	return mf;
}

/*
 * The printed kernel's cones: its text parsed and indexed, and its
 * reference values.  A kernel the cone cannot take is searched with whole
 * evaluations (cref stays NULL); only out of memory is an error.
 */
static usc_status make_cones(search *s, usc_error *err)
{
	usc_eval_options eo = eval_options(&s->o, USC_DOMAIN_REFERENCE);
	const usc_hlo_module *bm;
	usc_error e2;
	usc_status st;

	usc_error_clear(&e2);
	st = usc_hlo_parse(s->bt.text, s->bt.len, "<kernel>", &s->bf, &e2);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	if (st != USC_OK || usc_hlo_file_module_count(s->bf) < 1 ||
	    !usc_hlo_file_module(s->bf, 0)->entry)
		return USC_OK;
	bm = usc_hlo_file_module(s->bf, 0);
	st = usc__cone_text_create(bm, s->bt.text, s->bt.len, &s->ct, err);
	if (st != USC_OK)
		return st;
	st = usc__cone_create(bm->entry, &eo, s->inputs, s->ni, 0, &s->cref,
			      &e2);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	return USC_OK;
}

/* The envelope's cone, made the first time the second pass needs it. */
static usc_status envelope_cone(search *s, usc_error *err)
{
	usc_eval_options eo = eval_options(&s->o, USC_DOMAIN_ENVELOPE);
	usc_error e2;
	usc_status st;

	if (s->cenv_tried || !s->ct)
		return USC_OK;
	s->cenv_tried = true;
	usc_error_clear(&e2);
	st = usc__cone_create(usc_hlo_file_module(s->bf, 0)->entry, &eo,
			      s->inputs, s->ni, 0, &s->cenv, &e2);
	if (st == USC_ENOMEM)
		return usc__fail(err, st, "out of memory");
	return USC_OK;
}

/* How mutant mm (parsed from text) uses cone k; cu->k NULL: it cannot. */
static usc_status mutant_cone(search *s, usc__cone *k,
			      const usc_hlo_module *mm, const char *text,
			      usc__cone_match *cm, cone_use *cu,
			      usc_error *err)
{
	usc_status st;

	cu->k = NULL;
	cu->m = cm;
	if (!k || !s->ct)
		return USC_OK;
	st = usc__cone_text_match(s->ct, mm, text, strlen(text), cm, err);
	if (st == USC_OK)
		cu->k = k;
	return st;
}

/* Adds a pending envelope; false on out of memory. */
static bool add_pending(search *s, const usc_hlo_instr *in, usc_mutation k,
			int v, uint64_t near, const size_t *index)
{
	pending *p;

	if (s->npend == s->cappend) {
		size_t nc = s->cappend ? 2 * s->cappend : 64;
		pending *g = usc__reallocarray(s->pend, nc, sizeof *g);

		if (!g)
			return false;
		s->pend = g;
		s->cappend = nc;
	}
	p = &s->pend[s->npend];
	p->index = usc__malloc(s->set_count * sizeof *p->index);
	if (!p->index)
		return false;
	memcpy(p->index, index, s->set_count * sizeof *index);
	p->in = in;
	p->kind = k;
	p->variant = v;
	p->near = near;
	s->npend++;
	return true;
}

/*
 * The first pass over one mutant: its strict outputs scored against
 * every set that has defects; under a profile, remembered for the second
 * pass when some set has a defect element near it.
 */
static usc_status first_pass(search *s, const usc_hlo_instr *in, usc_mutation k,
			     int v, double deadline, usc_error *err)
{
	usc_signature_candidate cand;
	usc_hlo_file *mf;
	char *text = NULL;
	bool applies = false;
	usc__cone_match cm;
	cone_use cu = {NULL, NULL};
	size_t *index = NULL;
	uint64_t near_max = 0;
	bool effective = false;
	usc_error e2;
	usc_status st;

	/* Past the budget a mutant is only counted: its text is not built. */
	bool over = (s->o.max_candidates &&
		     s->evaluated >= s->o.max_candidates) ||
		    now_seconds() > deadline;

	memset(&cand, 0, sizeof cand);
	st = usc__sig_build_mutant(&s->bt, in, k, v, &applies, cand.detail,
				   sizeof cand.detail, over ? NULL : &text,
				   err);
	if (st != USC_OK || !applies)
		return st;
	s->enumerated++;
	if (over) {
		s->skipped++;
		return USC_OK;
	}
	s->evaluated++;
	mf = parse_mutant(in, k, v, &text);
	if (mf)
		st = mutant_cone(s, s->cref, usc_hlo_file_module(mf, 0), text,
				 &cm, &cu, err);
	if (st != USC_OK) {
		usc_hlo_file_destroy(mf);
		usc__free(text);
		return st;
	}
	usc_error_clear(&e2);
	if (!mf || evaluate(usc_hlo_file_module(mf, 0), s->inputs, s->ni, &s->o,
			    &cu, s->mut, s->nout, &e2) != USC_OK) {
		if (mf && getenv("USC_SIGNATURE_DEBUG"))
			fprintf(stderr, "signature: %s %s/%d: %s\n", in->name,
				usc_mutation_name(k), v, e2.message);
		s->failed++;
		usc_hlo_file_destroy(mf);
		usc__free(text);
		free_outputs(s->mut, s->nout);
		return USC_OK;
	}
	usc_hlo_file_destroy(mf);
	usc__free(text);
	cand.kind = k;
	cand.variant = v;
	index = usc__malloc(s->set_count * sizeof *index);
	if (!index) {
		free_outputs(s->mut, s->nout);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t si = 0; si < s->set_count; si++) {
		usc__sig_set *ss = &s->sets[si];
		usc_signature_candidate c2 = cand;
		bool noeff = false;
		uint64_t near = 0;

		index[si] = SIZE_MAX;
		if (!ss->r->defects && !s->score_all)
			continue;
		usc__sig_score_strict(ss, (const usc_tensor *const *)s->mut,
				      &c2, &noeff, &near);
		/* Relative to the reference: the same for every set. */
		if (noeff) {
			s->no_effect++;
			break;
		}
		effective = true;
		index[si] = ss->n;
		if (!usc__sig_push(ss, &c2, in)) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		if (near > near_max)
			near_max = near;
	}
	free_outputs(s->mut, s->nout);
	if (st == USC_OK && s->env && effective &&
	    !add_pending(s, in, k, v, near_max, index))
		st = usc__fail(err, USC_ENOMEM, "out of memory");
	usc__free(index);
	return st;
}

/* The second pass over one pending mutant: its envelope, every set. */
static usc_status second_pass(search *s, const pending *p, usc_error *err)
{
	usc_hlo_file *mf;
	char *text = NULL;
	bool applies = false;
	usc__cone_match cme, cmr;
	cone_use cue = {NULL, NULL}, cur = {NULL, NULL};
	usc_status st;

	st = usc__sig_build_mutant(&s->bt, p->in, p->kind, p->variant, &applies,
				   NULL, 0, &text, err);
	if (st != USC_OK || !applies)
		return st;
	mf = parse_mutant(p->in, p->kind, p->variant, &text);
	if (!mf) {
		usc__free(text);
		return USC_OK;
	}
	st = envelope_cone(s, err);
	if (st == USC_OK)
		st = mutant_cone(s, s->cenv, usc_hlo_file_module(mf, 0), text,
				 &cme, &cue, err);
	if (st == USC_OK)
		st = mutant_cone(s, s->cref, usc_hlo_file_module(mf, 0), text,
				 &cmr, &cur, err);
	if (st == USC_OK)
		st = envelope_of(usc_hlo_file_module(mf, 0), s->inputs, s->ni,
				 &s->o, &cue, s->offset, s->nout, s->elements,
				 s->menv, NULL, 0);
	/* The strict outputs again, for the translated envelope where the
	 * mutant's own is unknown. */
	if (st == USC_OK &&
	    evaluate(usc_hlo_file_module(mf, 0), s->inputs, s->ni, &s->o,
		     &cur, s->mut, s->nout, err) != USC_OK) {
		usc_error_clear(err);
		free_outputs(s->mut, s->nout);
		usc_hlo_file_destroy(mf);
		usc__free(text);
		return USC_OK;
	}
	usc_hlo_file_destroy(mf);
	usc__free(text);
	if (st != USC_OK) {
		free_outputs(s->mut, s->nout);
		return usc__fail(err, st, "out of memory");
	}
	s->envelopes++;
	for (size_t si = 0; si < s->set_count; si++)
		if (p->index[si] != SIZE_MAX)
			usc__sig_score_envelope(
			    &s->sets[si], (const usc_tensor *const *)s->mut,
			    s->menv, &s->sets[si].list[p->index[si]]);
	free_outputs(s->mut, s->nout);
	return USC_OK;
}

/*
 * Sets up set k: its defect elements, the identity's score and whether
 * there is anything to search.
 */
static usc_status set_up(search *s, size_t k, const usc_tensor *const *dev,
			 usc_error *err)
{
	usc__sig_set *ss = &s->sets[k];
	usc_signature_report *r = usc__calloc(1, sizeof *r);
	usc_signature_candidate cand;
	uint64_t idx = 0, differing = 0;

	if (!r)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	ss->r = r;
	ss->nout = s->nout;
	ss->dev = dev;
	ss->ref = s->ref;
	ss->env = s->env;
	ss->elements = s->elements;
	ss->scratch = s->scratch;
	ss->m = s->m;
	ss->defect = usc__calloc(s->elements ? s->elements : 1, 1);
	r->kernel_name = usc__strdup(s->m->name ? s->m->name : "kernel");
	if (!ss->defect || !r->kernel_name)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	r->min_fraction = s->o.min_fraction;
	r->elements = s->elements;
	if (s->o.profile && s->env)
		snprintf(r->profile, sizeof r->profile, "%s",
			 s->o.profile->name);
	for (size_t o = 0; o < s->nout; o++) {
		usc_dtype t = usc_tensor_dtype(dev[o]);
		uint64_t n = usc_tensor_count(dev[o]);

		for (uint64_t i = 0; i < n; i++, idx++) {
			uint64_t b = 0, rr = 0;
			bool same;

			usc_tensor_get_bits(dev[o], i, &b);
			usc_tensor_get_bits(s->ref[o], i, &rr);
			same = b == rr || (usc_dtype_is_float(t) &&
					   usc_bits_is_nan(t, b) &&
					   usc_bits_is_nan(t, rr));
			differing += !same;
			if (s->env)
				ss->defect[idx] =
				    !(s->env[idx].flags & USC_ENV_UNKNOWN) &&
				    !usc_envelope_contains(&s->env[idx], t, b);
			else
				ss->defect[idx] = !same;
			r->defects += ss->defect[idx];
		}
	}
	r->differing = differing;
	/* The identity: the kernel as written. */
	memset(&cand, 0, sizeof cand);
	cand.kind = USC_MUT_NONE;
	snprintf(cand.detail, sizeof cand.detail,
		 s->env ? "the kernel's envelope" : "the strict reference");
	usc__sig_score_strict(ss, (const usc_tensor *const *)s->mut, &cand,
			      NULL, NULL);
	cand.width = usc__sig_identity_width(ss);
	r->identity = cand;
	if (differing == 0) {
		r->verdict = USC_SIGNATURE_NO_DIFFERENCE;
		return USC_OK;
	}
	if (r->defects == 0) {
		r->verdict = USC_SIGNATURE_LEGIT;
		return USC_OK;
	}
	r->verdict = USC_SIGNATURE_UNEXPLAINED;
	if (!usc__sig_score_output_zero(
		ss, (const usc_hlo_instr *const *)s->producers))
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

/* The op writing each output: the entry's root, or its tuple's operands. */
static void find_producers(const usc_hlo_module *m, const usc_hlo_instr **out,
			   size_t n)
{
	const usc_hlo_instr *root = NULL;

	for (size_t i = 0; i < m->computation_count && !root; i++)
		if (m->computations[i]->is_entry)
			root = m->computations[i]->root;
	for (size_t i = 0; i < n; i++)
		out[i] = !root ? NULL
			 : root->opcode != USC_HLO_OP_TUPLE
			     ? (n == 1 ? root : NULL)
			 : i < root->operand_count ? root->operands[i]
						   : NULL;
}

/* Checks the device sets against the reference's outputs. */
static usc_status check_devices(search *s, const usc_tensor *const *devices,
				usc_error *err)
{
	for (size_t k = 0; k < s->set_count; k++) {
		const usc_tensor *const *dev = devices + k * s->nout;

		for (size_t i = 0; i < s->nout; i++) {
			usc_tensor_spec a = usc_tensor_spec_of(s->ref[i]);
			usc_tensor_spec b = usc_tensor_spec_of(dev[i]);
			char sa[256], sb2[256];

			if (a.dtype != b.dtype || a.rank != b.rank ||
			    memcmp(a.dims, b.dims, a.rank * sizeof *a.dims) !=
				0) {
				usc_tensor_spec_format(&a, sa, sizeof sa);
				usc_tensor_spec_format(&b, sb2, sizeof sb2);
				return usc__fail(
				    err, USC_EINVAL,
				    "device output %zu%s is %s; the "
				    "kernel computes %s",
				    i, s->set_count > 1 ? " of a set" : "", sb2,
				    sa);
			}
		}
	}
	return USC_OK;
}

/* The whole enumeration, both passes. */
static usc_status run_search(search *s, usc_error *err)
{
	const usc_hlo_module *m = s->m;
	/* Under a profile the first pass keeps half the time for the
	 * envelopes of the second. */
	double deadline = s->t0 + (s->env ? 0.5 : 1.0) * s->o.max_seconds;
	usc_status st = usc__sig_print_base(m, &s->bt, err);

	if (st == USC_OK)
		st = make_cones(s, err);

	for (size_t ci = 0; st == USC_OK && ci < m->computation_count; ci++) {
		const usc_hlo_computation *comp = m->computations[ci];

		for (size_t ii = 0; st == USC_OK && ii < comp->instr_count;
		     ii++)
			for (int k = USC_MUT_NONE + 1;
			     st == USC_OK && k < USC_MUT_OUTPUT_ZERO; k++)
				for (int v = 0;
				     st == USC_OK &&
				     v < usc_mutation_variants((usc_mutation)k);
				     v++)
					st = first_pass(s, comp->instrs[ii],
							(usc_mutation)k, v,
							deadline, err);
	}
	if (st != USC_OK || !s->npend)
		return st;
	qsort(s->pend, s->npend, sizeof *s->pend, cmp_pending);
	for (size_t i = 0; st == USC_OK && i < s->npend; i++) {
		if (i == USC__SIG_MAX_ENVELOPES) {
			s->pruned += s->npend - i;
			break;
		}
		if (now_seconds() - s->t0 > s->o.max_seconds) {
			s->pruned += s->npend - i;
			s->envelope_cut = true;
			break;
		}
		st = second_pass(s, &s->pend[i], err);
	}
	return st;
}

/*
 * The search for set_count device sets; with raw (one set only), the
 * run's report and every candidate it scored, unranked, for the ranking
 * over several runs.
 */
static usc_status search_impl(const usc_hlo_module *m,
			      const usc_tensor *const *inputs,
			      size_t input_count,
			      const usc_tensor *const *devices,
			      size_t device_count, size_t set_count,
			      const usc_signature_options *opts,
			      usc_signature_report **out, usc__sig_raw *raw,
			      usc_error *err)
{
	search s;
	size_t searching = 0;
	char why[USC_ERROR_MESSAGE_SIZE] = "";
	usc_status st;

	memset(&s, 0, sizeof s);
	s.t0 = now_seconds();
	s.m = m;
	s.inputs = inputs;
	s.ni = input_count;
	s.nout = device_count;
	s.set_count = set_count;
	s.o = opts ? *opts : usc_signature_options_default();
	s.score_all = raw != NULL;
	for (size_t k = 0; k < set_count; k++)
		out[k] = NULL;
	if (s.o.max_seconds <= 0)
		s.o.max_seconds = 60;
	if (s.o.top == 0)
		s.o.top = 10;
	if (s.o.min_fraction <= 0)
		s.o.min_fraction = 0.95;
	if (set_count == 0)
		return usc__fail(err, USC_EINVAL, "no device output set given");
	s.ref = usc__calloc(device_count ? device_count : 1, sizeof *s.ref);
	s.mut = usc__calloc(device_count ? device_count : 1, sizeof *s.mut);
	s.offset = usc__calloc(device_count ? device_count : 1,
			       sizeof *s.offset);
	s.sets = usc__calloc(set_count, sizeof *s.sets);
	if (!s.ref || !s.mut || !s.offset || !s.sets) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	st = evaluate(m, inputs, input_count, &s.o, NULL, s.ref, device_count,
		      err);
	if (st == USC_OK)
		st = check_devices(&s, devices, err);
	if (st != USC_OK)
		goto done;
	for (size_t i = 0; i < device_count; i++) {
		s.offset[i] = s.elements;
		s.elements += usc_tensor_count(s.ref[i]);
	}
	s.producers = usc__calloc(device_count ? device_count : 1,
				  sizeof *s.producers);
	if (!s.producers) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	find_producers(m, s.producers, device_count);
	s.scratch = usc__calloc(s.elements ? s.elements : 1, sizeof *s.scratch);
	if (!s.scratch) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	if (s.o.profile) {
		s.env = usc__calloc(s.elements ? s.elements : 1, sizeof *s.env);
		s.menv = usc__calloc(s.elements ? s.elements : 1,
				     sizeof *s.menv);
		if (!s.env || !s.menv) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		st = envelope_of(m, inputs, input_count, &s.o, NULL, s.offset,
				 device_count, s.elements, s.env, why,
				 sizeof why);
		if (st != USC_OK)
			goto done;
		/* A kernel without an envelope is searched bit for bit. */
		if (why[0]) {
			usc__free(s.env);
			s.env = NULL;
		}
	}
	for (size_t k = 0; k < set_count && st == USC_OK; k++) {
		st = set_up(&s, k, devices + k * device_count, err);
		if (st == USC_OK && why[0])
			snprintf(s.sets[k].r->note, sizeof s.sets[k].r->note,
				 "the kernel's envelope under %.63s is unknown "
				 "(%.160s): reproduced means bit for bit",
				 s.o.profile->name, why);
		searching += st == USC_OK &&
			     (s.score_all ||
			      s.sets[k].r->verdict == USC_SIGNATURE_UNEXPLAINED);
	}
	if (st == USC_OK && searching)
		st = run_search(&s, err);
	if (st != USC_OK)
		goto done;
	for (size_t k = 0; k < set_count; k++) {
		usc_signature_report *r = s.sets[k].r;

		if (r->verdict == USC_SIGNATURE_UNEXPLAINED || raw) {
			r->enumerated = s.enumerated;
			r->evaluated = s.evaluated;
			r->no_effect = s.no_effect;
			r->failed = s.failed;
			r->skipped = s.skipped;
			r->envelopes = s.envelopes;
			r->pruned = s.pruned;
			r->budget_exhausted = s.skipped > 0 || s.envelope_cut;
		}
		r->seconds = now_seconds() - s.t0;
		if (raw) {
			raw->r = r;
			raw->list = s.sets[k].list;
			raw->n = s.sets[k].n;
			s.sets[k].r = NULL;
			s.sets[k].list = NULL;
			s.sets[k].n = 0;
			continue;
		}
		if (!usc__sig_rank(&s.sets[k], &s.o)) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto done;
		}
		out[k] = r;
		s.sets[k].r = NULL;
	}
done:
	if (st != USC_OK)
		for (size_t k = 0; k < set_count; k++) {
			usc_signature_report_destroy(out[k]);
			out[k] = NULL;
		}
	usc__cone_destroy(s.cenv);
	usc__cone_destroy(s.cref);
	usc__cone_text_destroy(s.ct);
	usc_hlo_file_destroy(s.bf);
	usc_hlo_text_free(s.bt.text);
	free_outputs(s.ref, device_count);
	free_outputs(s.mut, device_count);
	for (size_t k = 0; s.sets && k < set_count; k++) {
		for (size_t i = 0; i < s.sets[k].n; i++)
			usc__sig_cand_free(&s.sets[k].list[i]);
		usc__free(s.sets[k].list);
		usc__free(s.sets[k].defect);
		usc_signature_report_destroy(s.sets[k].r);
	}
	for (size_t i = 0; i < s.npend; i++)
		usc__free(s.pend[i].index);
	usc__free(s.pend);
	usc__free(s.sets);
	usc__free(s.ref);
	usc__free(s.mut);
	usc__free(s.offset);
	usc__free(s.producers);
	usc__free(s.scratch);
	usc__free(s.env);
	usc__free(s.menv);
	return st;
}

usc_status usc_signature_search_sets(const usc_hlo_module *m,
				     const usc_tensor *const *inputs,
				     size_t input_count,
				     const usc_tensor *const *devices,
				     size_t device_count, size_t set_count,
				     const usc_signature_options *opts,
				     usc_signature_report **out, usc_error *err)
{
	return search_impl(m, inputs, input_count, devices, device_count,
			   set_count, opts, out, NULL, err);
}

usc_status usc__sig_search_raw(const usc_hlo_module *m,
			       const usc_tensor *const *inputs,
			       size_t input_count,
			       const usc_tensor *const *devices,
			       size_t device_count,
			       const usc_signature_options *opts,
			       usc__sig_raw *raw, usc_error *err)
{
	usc_signature_report *unused = NULL;

	memset(raw, 0, sizeof *raw);
	return search_impl(m, inputs, input_count, devices, device_count, 1,
			   opts, &unused, raw, err);
}

void usc__sig_raw_free(usc__sig_raw *raw)
{
	for (size_t i = 0; i < raw->n; i++)
		usc__sig_cand_free(&raw->list[i]);
	usc__free(raw->list);
	usc_signature_report_destroy(raw->r);
	memset(raw, 0, sizeof *raw);
}

usc_status
usc_signature_search(const usc_hlo_module *m, const usc_tensor *const *inputs,
		     size_t input_count, const usc_tensor *const *devices,
		     size_t device_count, const usc_signature_options *opts,
		     usc_signature_report **out, usc_error *err)
{
	return usc_signature_search_sets(m, inputs, input_count, devices,
					 device_count, 1, opts, out, err);
}

/* -------------------------------------------------------- from files */

usc_status usc__sig_read_run(const usc_hlo_module *m, const char *path,
			    const usc_signature_request *req, size_t sets,
			    usc_tensor ***in_out, size_t *np_out,
			    usc_tensor ***dev_out, size_t *nout_out,
			    usc_error *err)
{
	usc_tensor **in = NULL, **dev = NULL;
	usc_eval *ev = NULL;
	usc_eval_options eo = usc_eval_options_default();
	size_t np = 0, nout = 0;
	usc_status st;

	*in_out = *dev_out = NULL;
	*np_out = *nout_out = 0;
	/* The parameters' and outputs' types, from an evaluator. */
	eo.reduce_order = req->options.reduce_order;
	st = usc_eval_create(m, &eo, &ev, err);
	if (st != USC_OK) {
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err ? err->message : "");
		st = usc__fail(err, st, "%s: %s", path, msg);
		goto done;
	}
	np = usc_eval_param_count(ev);
	if (req->input_count != np) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel takes %zu parameter(s); %zu "
			       "input(s) given",
			       path, np, req->input_count);
		goto done;
	}
	in = usc__calloc(np ? np : 1, sizeof *in);
	if (!in) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < np; i++) {
		usc_tensor_spec sp;
		char what[64];

		usc_eval_param_spec(ev, i, &sp, NULL);
		snprintf(what, sizeof what, "parameter %zu", i);
		sp.what = what;
		st = usc_tensor_read(req->inputs[i], &sp,
				     req->raw ? USC_TENSOR_READ_RAW : 0, &in[i],
				     err);
		if (st == USC_OK)
			st = usc_eval_bind(ev, i, in[i], err);
		if (st != USC_OK)
			goto done;
	}
	/* One run of the reference gives the outputs' types and shapes. */
	st = usc_eval_run(ev, err);
	if (st != USC_OK)
		goto done;
	nout = usc_eval_output_count(ev);
	if (req->device_count != nout) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel has %zu output(s); %zu device "
			       "output(s) given",
			       path, nout, req->device_count);
		goto done;
	}
	dev = usc__calloc(nout ? nout * sets : 1, sizeof *dev);
	if (!dev) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nout * sets; i++) {
		const usc_tensor *t = NULL;
		usc_tensor_spec sp;
		char what[64];

		usc_eval_output(ev, i % nout, &t, NULL);
		sp = usc_tensor_spec_of(t);
		if (sets > 1)
			snprintf(what, sizeof what,
				 "device output %zu of set %zu", i % nout,
				 i / nout);
		else
			snprintf(what, sizeof what, "device output %zu", i);
		sp.what = what;
		st = usc_tensor_read(req->devices[i], &sp,
				     req->raw ? USC_TENSOR_READ_RAW : 0,
				     &dev[i], err);
		if (st != USC_OK)
			goto done;
	}
done:
	usc_eval_destroy(ev);
	if (st != USC_OK) {
		for (size_t i = 0; in && i < np; i++)
			usc_tensor_destroy(in[i]);
		for (size_t i = 0; dev && i < nout * sets; i++)
			usc_tensor_destroy(dev[i]);
		usc__free(in);
		usc__free(dev);
		return st;
	}
	*in_out = in;
	*np_out = np;
	*dev_out = dev;
	*nout_out = nout;
	return USC_OK;
}

void usc__sig_free_tensors(usc_tensor **t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		usc_tensor_destroy(t[i]);
	usc__free(t);
}

usc_status usc_signature_run_sets(const usc_signature_request *req,
				  usc_signature_report **out, usc_error *err)
{
	usc_hlo_file *f = NULL, *kf = NULL;
	const usc_hlo_module *m;
	usc_tensor **in = NULL, **dev = NULL;
	size_t np = 0, nout = 0, sets = req->sets ? req->sets : 1;
	usc_status st;

	for (size_t k = 0; k < sets; k++)
		out[k] = NULL;
	st = usc_hlo_parse_file(req->hlo_path, &f, err);
	if (st != USC_OK)
		return st;
	if (usc_hlo_file_module_count(f) < 1) {
		st = usc__fail(err, USC_EINVAL, "%s holds no module",
			       req->hlo_path);
		goto done;
	}
	m = usc_hlo_file_module(f, 0);
	if (req->fusion) {
		st = usc_hlo_extract_fusion_file(m, req->fusion, &kf, err);
		if (st != USC_OK)
			goto done;
		m = usc_hlo_file_module(kf, 0);
	}
	st = usc__sig_read_run(m, req->hlo_path, req, sets, &in, &np, &dev,
			       &nout, err);
	if (st == USC_OK)
		st = usc_signature_search_sets(
		    m, (const usc_tensor *const *)in, np,
		    (const usc_tensor *const *)dev, nout, sets, &req->options,
		    out, err);
done:
	usc__sig_free_tensors(in, np);
	usc__sig_free_tensors(dev, nout * sets);
	usc_hlo_file_destroy(kf);
	usc_hlo_file_destroy(f);
	return st;
}

usc_status usc_signature_run(const usc_signature_request *req,
			     usc_signature_report **out, usc_error *err)
{
	*out = NULL;
	if (req->sets > 1)
		return usc__fail(err, USC_EINVAL,
				 "%zu device sets given to a search of one "
				 "(usc_signature_run_sets takes several)",
				 req->sets);
	return usc_signature_run_sets(req, out, err);
}

/*
 * A case's files are the ENTRY's parameters and results (docs/cases.md),
 * so the search mutates the whole module: every op of every computation,
 * the main fusion's among them.
 */
usc_status usc_signature_case(const char *dir,
			      const usc_signature_request *base,
			      usc_signature_report **out, usc_error *err)
{
	usc_signature_request req = base ? *base
					 : usc_signature_request_default();
	char *hlo = NULL;
	char **inputs = NULL, **devices = NULL;
	size_t ni = 0, nd = 0;
	usc_profile prof;
	usc_status st;

	*out = NULL;
	st = usc__case_kernel(dir, &hlo, err);
	if (st != USC_OK)
		return st;
	st = usc__case_collect(dir, "input", &inputs, &ni, err);
	if (st == USC_OK && req.device_count == 0)
		st = usc__case_collect(dir, "device", &devices, &nd, err);
	if (st != USC_OK)
		goto done;
	if (req.device_count == 0) {
		if (nd == 0) {
			st = usc__fail(err, USC_EIO, "%s: no device_0.npy",
				       dir);
			goto done;
		}
		req.device_count = nd;
		req.devices = (const char *const *)devices;
	}
	/* The profile the case names, unless the caller chose. */
	if (!req.options.profile && !req.no_profile) {
		bool have = false;

		st = usc__case_profile(dir, &prof, &have, err);
		if (st != USC_OK)
			goto done;
		if (have)
			req.options.profile = &prof;
	}
	req.hlo_path = hlo;
	req.fusion = NULL;
	req.input_count = ni;
	req.inputs = (const char *const *)inputs;
	st = usc_signature_run(&req, out, err);
done:
	usc__case_free_list(inputs, ni);
	usc__case_free_list(devices, nd);
	usc__free(hlo);
	return st;
}
