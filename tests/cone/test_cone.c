/*
 * Re-evaluation on a change's downstream cone (src/eval/cone.h) against
 * whole evaluations, bit for bit.
 *
 * The expected values are whole evaluations of the same changed kernel
 * by the evaluator without a cone: the identity under test is "a cone
 * run equals a whole run", in every domain that signature and attribution
 * use.
 *
 *   - Every mutant of signature's catalogue (the search's enumeration) on
 *     the kernel of one case per kernel of data/defects, in the reference
 *     domain: every output's encodings; and in the envelope domain under
 *     the case's profile: the encodings and the public envelope (lo, hi
 *     as bits, flags, roundings) of every element.
 *   - Every op that rounds alone, as attribution runs it (the oracle
 *     domain with round_only), on the cases of data/examples: the
 *     encoding, kind, flags and both MPFI endpoints of every element.
 *   - A budget of one byte keeps nothing and still gives the same values;
 *     a kernel with a while loop is evaluated whole; every allocation
 *     failing in turn gives out of memory and leaks nothing.
 *
 * By default the envelopes of every 6th mutant (the reference of every
 * one) and the ops of two example kernels; USC_CONE_FULL=1 checks every
 * mutant's envelope and every example kernel.  USC_CONE_CASES=N limits
 * the defect kernels to the first N (the sanitizer build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <mpfr.h>
#include <mpfi.h>

#include "internal.h"
#include "test_util.h"
#include "analyze/case_internal.h"
#include "analyze/signature_internal.h"
#include "eval/cone.h"
#include "eval/eval_internal.h"
#include "eval/eval_values.h"
#include "ulpscope/profile.h"
#include "oracles/envelope.h"
#include "oracles/oracle.h"

static bool full(void)
{
	const char *f = getenv("USC_CONE_FULL");

	return f && strcmp(f, "1") == 0;
}

/* A case: its kernel, inputs and profile. */
typedef struct kcase {
	usc_hlo_file *f;
	const usc_hlo_module *m;
	usc_tensor **in;
	size_t ni;
	usc_profile prof;
	bool have_prof;
} kcase;

static void case_load(kcase *k, const char *dir)
{
	char *hlo = NULL, **paths = NULL;
	usc_eval *ev = NULL;
	usc_error err;

	memset(k, 0, sizeof *k);
	if (usc__case_kernel(dir, &hlo, &err) != USC_OK ||
	    usc_hlo_parse_file(hlo, &k->f, &err) != USC_OK ||
	    usc__case_collect(dir, "input", &paths, &k->ni, &err) != USC_OK ||
	    usc__case_profile(dir, &k->prof, &k->have_prof, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	k->m = usc_hlo_file_module(k->f, 0);
	{
		usc_eval_options o = usc_eval_options_default();

		assert_int_equal(usc_eval_create(k->m, &o, &ev, &err),
				 USC_OK);
	}
	assert_int_equal(usc_eval_param_count(ev), k->ni);
	k->in = calloc(k->ni ? k->ni : 1, sizeof *k->in);
	for (size_t i = 0; i < k->ni; i++) {
		usc_tensor_spec sp;

		usc_eval_param_spec(ev, i, &sp, NULL);
		if (usc_tensor_read(paths[i], &sp, 0, &k->in[i], &err) !=
		    USC_OK)
			fail_msg("%s: %s", paths[i], err.message);
	}
	usc_eval_destroy(ev);
	usc__case_free_list(paths, k->ni);
	usc__free(hlo);
}

static void case_free(kcase *k)
{
	for (size_t i = 0; i < k->ni; i++)
		usc_tensor_destroy(k->in[i]);
	free(k->in);
	usc_hlo_file_destroy(k->f);
}

/* One evaluation's outputs: encodings and domain values. */
typedef struct run {
	usc_eval *ev;
	usc_status st;
} run;

/*
 * Evaluates c with eo on the inputs; with a cone (k) attached through m.
 * Values are kept for usc__eval_output_values.
 */
static run evaluate(const usc_hlo_computation *c, const usc_eval_options *eo,
		    const kcase *kc, usc__cone *k, const usc__cone_match *m)
{
	usc__eval_stream s;
	usc_error err;
	run r;

	memset(&r, 0, sizeof r);
	r.st = usc_eval_create_computation(c, eo, &r.ev, &err);
	if (r.st == USC_OK && k)
		r.st = usc__cone_attach(r.ev, k, m, &err);
	if (r.st == USC_OK)
		r.st = usc_eval_bind_all(r.ev, (const usc_tensor *const *)kc->in,
					 kc->ni, &err);
	memset(&s, 0, sizeof s);
	s.keep = true;
	if (r.st == USC_OK)
		r.st = usc__eval_run_stream(r.ev, &s, &err);
	return r;
}

/* The encodings of every output of a and b, bit for bit. */
static void same_outputs(const run *a, const run *b, const char *what)
{
	size_t n = usc_eval_output_count(a->ev);

	assert_int_equal(usc_eval_output_count(b->ev), n);
	for (size_t i = 0; i < n; i++) {
		const usc_tensor *ta = NULL, *tb = NULL;
		uint64_t count;

		assert_int_equal(usc_eval_output(a->ev, i, &ta, NULL), USC_OK);
		assert_int_equal(usc_eval_output(b->ev, i, &tb, NULL), USC_OK);
		assert_int_equal(usc_tensor_dtype(ta), usc_tensor_dtype(tb));
		count = usc_tensor_count(ta);
		assert_int_equal(usc_tensor_count(tb), count);
		for (uint64_t j = 0; j < count; j++) {
			uint64_t x = 0, y = 0;

			usc_tensor_get_bits(ta, j, &x);
			usc_tensor_get_bits(tb, j, &y);
			if (x != y)
				fail_msg("%s: output %zu element %llu: whole "
					 "0x%llx, cone 0x%llx",
					 what, i, (unsigned long long)j,
					 (unsigned long long)x,
					 (unsigned long long)y);
		}
	}
}

/*
 * The domain values of output i of a and b, which must have as many
 * elements (the count returned) of one type (*t).
 */
static size_t values_of_both(const run *a, const run *b, size_t i,
			     const void **va, const void **vb, usc_dtype *t)
{
	size_t ca, cb;
	usc_dtype tb;

	assert_int_equal(usc__eval_output_values(a->ev, i, va, &ca, t), USC_OK);
	assert_int_equal(usc__eval_output_values(b->ev, i, vb, &cb, &tb),
			 USC_OK);
	assert_int_equal(ca, cb);
	assert_int_equal(*t, tb);
	return ca;
}

/* The envelope of every output element of a and b, bit for bit. */
static void same_envelopes(const run *a, const run *b, const char *what)
{
	const usc__domain_ops *d = usc__eval_domain(a->ev);
	size_t n = usc_eval_output_count(a->ev);
	usc_error err;

	for (size_t i = 0; i < n; i++) {
		const void *va, *vb;
		usc_dtype ta;
		size_t ca = values_of_both(a, b, i, &va, &vb, &ta);

		for (size_t j = 0; j < ca; j++) {
			usc__envelope_elem ea, eb;
			usc_envelope pa, pb;
			uint64_t xa = 0, xb = 0;

			assert_int_equal(
			    d->to_output(usc__eval_domain_state(a->ev), ta,
					 (const char *)va + j * d->value_size,
					 &xa, &ea, &err),
			    USC_OK);
			assert_int_equal(
			    d->to_output(usc__eval_domain_state(b->ev), ta,
					 (const char *)vb + j * d->value_size,
					 &xb, &eb, &err),
			    USC_OK);
			pa = usc__envelope_public(&ea);
			pb = usc__envelope_public(&eb);
			if (xa != xb || memcmp(&pa.lo, &pb.lo, sizeof pa.lo) ||
			    memcmp(&pa.hi, &pb.hi, sizeof pa.hi) ||
			    pa.flags != pb.flags ||
			    memcmp(&pa.roundings, &pb.roundings,
				   sizeof pa.roundings))
				fail_msg("%s: envelope of output %zu element "
					 "%zu: whole [%a, %a] 0x%x %g, cone "
					 "[%a, %a] 0x%x %g",
					 what, i, j, pa.lo, pa.hi, pa.flags,
					 pa.roundings, pb.lo, pb.hi, pb.flags,
					 pb.roundings);
		}
	}
}

static bool same_mpfr(mpfr_srcptr a, mpfr_srcptr b)
{
	if (mpfr_nan_p(a) || mpfr_nan_p(b))
		return mpfr_nan_p(a) && mpfr_nan_p(b);
	return mpfr_get_prec(a) == mpfr_get_prec(b) && mpfr_equal_p(a, b) &&
	       mpfr_signbit(a) == mpfr_signbit(b);
}

/* The oracle's values of every output element of a and b, exactly. */
static void same_oracle(const run *a, const run *b, const char *what)
{
	size_t n = usc_eval_output_count(a->ev);

	for (size_t i = 0; i < n; i++) {
		const usc__oracle_value *va, *vb;
		const void *pa, *pb;
		usc_dtype t;
		size_t ca = values_of_both(a, b, i, &pa, &pb, &t);

		va = pa;
		vb = pb;
		for (size_t j = 0; j < ca; j++)
			if (va[j].bits != vb[j].bits ||
			    va[j].kind != vb[j].kind ||
			    va[j].flags != vb[j].flags ||
			    !same_mpfr(&va[j].x->left, &vb[j].x->left) ||
			    !same_mpfr(&va[j].x->right, &vb[j].x->right))
				fail_msg("%s: oracle value of output %zu "
					 "element %zu differs",
					 what, i, j);
	}
}

static void run_free(run *r)
{
	usc_eval_destroy(r->ev);
	r->ev = NULL;
}

/* ------------------------------------------------- signature's mutants */

typedef struct tally {
	size_t mutants, envelopes, failed;
	size_t evaluated, reused;
} tally;

/* The whole and the cone evaluation of mutant mm in one domain. */
static void compare_mutant(const usc_hlo_module *mm, const usc_eval_options *eo,
			   const kcase *kc, usc__cone *k,
			   const usc__cone_match *cm, const char *what,
			   tally *t)
{
	run w = evaluate(mm->entry, eo, kc, NULL, NULL);
	run c = evaluate(mm->entry, eo, kc, k, cm);
	size_t ev = 0, re = 0;

	/* A mutant the evaluator refuses is refused either way. */
	if (w.st != USC_OK || c.st != USC_OK) {
		if (w.st != c.st)
			fail_msg("%s: whole status %d, cone status %d", what,
				 (int)w.st, (int)c.st);
		t->failed++;
	} else {
		same_outputs(&w, &c, what);
		if (eo->domain == USC_DOMAIN_ENVELOPE)
			same_envelopes(&w, &c, what);
		usc__cone_counts(c.ev, &ev, &re);
		t->evaluated += ev;
		t->reused += re;
	}
	run_free(&w);
	run_free(&c);
}

static void mutants_of_case(const char *dir, tally *t)
{
	usc_eval_options ro = usc_eval_options_default();
	usc_eval_options eo = usc_eval_options_default();
	size_t stride = full() ? 1 : 6, applicable = 0;
	usc__sig_text bt;
	usc_hlo_file *bf = NULL;
	const usc_hlo_module *bm;
	usc__cone *cref = NULL, *cenv = NULL;
	usc__cone_text *ct = NULL;
	usc_error err;
	kcase kc;

	case_load(&kc, dir);
	memset(&bt, 0, sizeof bt);
	assert_int_equal(usc__sig_print_base(kc.m, &bt, &err), USC_OK);
	assert_int_equal(usc_hlo_parse(bt.text, bt.len, "<kernel>", &bf, &err),
			 USC_OK);
	bm = usc_hlo_file_module(bf, 0);
	assert_int_equal(usc__cone_text_create(bm, bt.text, bt.len, &ct, &err),
			 USC_OK);
	if (usc__cone_create(bm->entry, &ro, (const usc_tensor *const *)kc.in,
			     kc.ni, 0, &cref, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	eo.domain = USC_DOMAIN_ENVELOPE;
	eo.profile = kc.have_prof ? &kc.prof : NULL;
	if (kc.have_prof &&
	    usc__cone_create(bm->entry, &eo, (const usc_tensor *const *)kc.in,
			     kc.ni, 0, &cenv, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	for (size_t ci = 0; ci < kc.m->computation_count; ci++) {
		const usc_hlo_computation *comp = kc.m->computations[ci];

		for (size_t ii = 0; ii < comp->instr_count; ii++)
			for (int kind = USC_MUT_NONE + 1;
			     kind < USC_MUT_OUTPUT_ZERO; kind++)
				for (int v = 0;
				     v < usc_mutation_variants(
					     (usc_mutation)kind);
				     v++) {
					char *text = NULL, what[512];
					bool applies = false;
					usc_hlo_file *mf = NULL;
					const usc_hlo_module *mm;
					usc__cone_match cm;

					assert_int_equal(
					    usc__sig_build_mutant(
						&bt, comp->instrs[ii],
						(usc_mutation)kind, v,
						&applies, NULL, 0, &text,
						&err),
					    USC_OK);
					if (!applies)
						continue;
					if (usc_hlo_parse(text, strlen(text),
							  "<mutant>", &mf,
							  &err) != USC_OK) {
						usc__free(text);
						continue;
					}
					mm = usc_hlo_file_module(mf, 0);
					snprintf(what, sizeof what,
						 "%s: %s %s/%d", dir,
						 comp->instrs[ii]->name,
						 usc_mutation_name(
						     (usc_mutation)kind),
						 v);
					assert_int_equal(
					    usc__cone_text_match(
						ct, mm, text, strlen(text),
						&cm, &err),
					    USC_OK);
					compare_mutant(mm, &ro, &kc, cref, &cm,
						       what, t);
					t->mutants++;
					if (cenv && applicable++ % stride == 0) {
						compare_mutant(mm, &eo, &kc,
							       cenv, &cm, what,
							       t);
						t->envelopes++;
					}
					usc_hlo_file_destroy(mf);
					usc__free(text);
				}
	}
	usc__cone_destroy(cenv);
	usc__cone_destroy(cref);
	usc__cone_text_destroy(ct);
	usc_hlo_file_destroy(bf);
	usc_hlo_text_free(bt.text);
	case_free(&kc);
}

static void test_defect_mutants(void **state)
{
	char root[4096], **kernels, **cases;
	size_t nk, limit = SIZE_MAX;
	const char *lim = getenv("USC_CONE_CASES");
	tally t;

	(void)state;
	memset(&t, 0, sizeof t);
	if (lim)
		limit = (size_t)strtoul(lim, NULL, 10);
	snprintf(root, sizeof root, "%s/data/defects", usc_test_src_dir());
	assert_true(usc_test_subdirs(root, &kernels, &nk));
	for (size_t i = 0; i < nk && i < limit; i++) {
		size_t nc;

		if (strstr(kernels[i], "/profiles"))
			continue;
		assert_true(usc_test_subdirs(kernels[i], &cases, &nc));
		if (nc)
			mutants_of_case(cases[0], &t);
		usc_test_free_list(cases, nc);
	}
	usc_test_free_list(kernels, nk);
	printf("%zu mutants (%zu envelopes, %zu refused both ways): %zu "
	       "instructions evaluated, %zu values reused\n",
	       t.mutants, t.envelopes, t.failed, t.evaluated, t.reused);
	/* The comparisons above ran, and the cone did take values. */
	assert_true(t.mutants > 100);
	assert_true(t.envelopes > 10);
	assert_true(t.reused > t.mutants);
}

/* ------------------------------------------------ attribution's runs */

/* Whether in's result is a float array (the ops attribution rounds). */
static bool float_array(const usc_hlo_instr *in)
{
	return in->shape.kind == USC_HLO_SHAPE_ARRAY &&
	       usc_dtype_is_float(in->shape.dtype);
}

static void rounding_runs(const char *dir, size_t *runs)
{
	usc_eval_options eo = usc_eval_options_default();
	usc__cone *k = NULL;
	usc_error err;
	kcase kc;

	case_load(&kc, dir);
	eo.domain = USC_DOMAIN_ORACLE;
	if (usc__cone_create(kc.m->entry, &eo, (const usc_tensor *const *)kc.in,
			     kc.ni, 0, &k, &err) != USC_OK)
		fail_msg("%s: %s", dir, err.message);
	for (size_t ci = 0; ci < kc.m->computation_count; ci++) {
		const usc_hlo_computation *comp = kc.m->computations[ci];

		for (size_t ii = 0; ii < comp->instr_count; ii++) {
			const usc_hlo_instr *seed = comp->instrs[ii];
			usc__cone_seeds s = {&seed, 1};
			usc__cone_match m = usc__cone_match_seeds(&s);
			usc_eval_options ro = eo;
			char what[512];
			run w, c;

			if (!float_array(seed))
				continue;
			ro.round_only = &seed;
			ro.round_only_count = 1;
			snprintf(what, sizeof what, "%s: %s rounded", dir,
				 seed->name);
			w = evaluate(kc.m->entry, &ro, &kc, NULL, NULL);
			c = evaluate(kc.m->entry, &ro, &kc, k, &m);
			assert_int_equal(w.st, c.st);
			if (w.st == USC_OK) {
				same_outputs(&w, &c, what);
				same_oracle(&w, &c, what);
			}
			run_free(&w);
			run_free(&c);
			(*runs)++;
		}
	}
	usc__cone_destroy(k);
	case_free(&kc);
}

static void test_attribution_runs(void **state)
{
	char root[4096], **kernels, **cases;
	size_t nk, runs = 0, limit = full() ? SIZE_MAX : 2;

	(void)state;
	snprintf(root, sizeof root, "%s/data/examples", usc_test_src_dir());
	assert_true(usc_test_subdirs(root, &kernels, &nk));
	for (size_t i = 0; i < nk && i < limit; i++) {
		size_t nc;

		assert_true(usc_test_subdirs(kernels[i], &cases, &nc));
		if (nc)
			rounding_runs(cases[0], &runs);
		usc_test_free_list(cases, nc);
	}
	usc_test_free_list(kernels, nk);
	printf("%zu rounding runs compared\n", runs);
	assert_true(runs > 5);
}

/* ------------------------------------------- budget and control flow */

static const char loop_text[] =
	"HloModule loop\n"
	"cond {\n"
	"  p = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  n = s32[] constant(3)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"body {\n"
	"  p = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  x = f32[4] get-tuple-element(p), index=1\n"
	"  one = s32[] constant(1)\n"
	"  j = s32[] add(i, one)\n"
	"  y = f32[4] multiply(x, x)\n"
	"  ROOT t = (s32[], f32[4]) tuple(j, y)\n"
	"}\n"
	"ENTRY e {\n"
	"  a = f32[4] parameter(0)\n"
	"  e = f32[4] exponential(a)\n"
	"  z = s32[] constant(0)\n"
	"  t = (s32[], f32[4]) tuple(z, e)\n"
	"  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
	"  ROOT r = f32[4] get-tuple-element(w), index=1\n"
	"}\n";

static const char chain_text[] =
	"HloModule chain\n"
	"fused {\n"
	"  p0 = f32[4] parameter(0)\n"
	"  p1 = f32[4] parameter(1)\n"
	"  m = f32[4] multiply(p0, p1)\n"
	"  ROOT s = f32[4] sqrt(m)\n"
	"}\n"
	"ENTRY e {\n"
	"  a = f32[4] parameter(0)\n"
	"  b = f32[4] exponential(a)\n"
	"  c = f32[4] log(b)\n"
	"  f = f32[4] fusion(b, c), kind=kLoop, calls=fused\n"
	"  ROOT d = f32[4] add(f, a)\n"
	"}\n";

static void small_case(kcase *kc, const char *text)
{
	int64_t dims[1] = {4};
	const uint64_t bits[4] = {0x3f800000u, 0x40000000u, 0x3e800000u,
				  0xbf000000u}; /* 1, 2, 0.25, -0.5 */
	usc_error err;

	memset(kc, 0, sizeof *kc);
	assert_int_equal(usc_hlo_parse(text, strlen(text), "test", &kc->f,
				       &err),
			 USC_OK);
	kc->m = usc_hlo_file_module(kc->f, 0);
	kc->ni = 1;
	kc->in = calloc(1, sizeof *kc->in);
	assert_int_equal(usc_tensor_create(USC_F32, 1, dims, &kc->in[0],
					   &err),
			 USC_OK);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(usc_tensor_set_bits(kc->in[0], i, bits[i]),
				 USC_OK);
}

/* The instruction of c (any computation) named name. */
static const usc_hlo_instr *named(const usc_hlo_module *m, const char *name)
{
	for (size_t i = 0; i < m->computation_count; i++)
		for (size_t j = 0; j < m->computations[i]->instr_count; j++)
			if (strcmp(m->computations[i]->instrs[j]->name, name) ==
			    0)
				return m->computations[i]->instrs[j];
	fail_msg("no instruction %s", name);
	return NULL;
}

/*
 * Rounding the fusion's multiply alone: the cone is the multiply, the
 * sqrt, the fusion and the add; b, c and the parameters come from the
 * base.  With a budget of one byte nothing is kept: everything is
 * evaluated again, with the same values.
 */
static void test_cone_counts_and_budget(void **state)
{
	usc_eval_options eo = usc_eval_options_default();
	const usc_hlo_instr *seed;
	usc__cone *k = NULL, *tiny = NULL;
	usc__cone_seeds s;
	usc__cone_match m;
	usc_error err;
	size_t ev, re, bytes;
	bool over;
	kcase kc;
	run w, c, t;

	(void)state;
	small_case(&kc, chain_text);
	eo.domain = USC_DOMAIN_ORACLE;
	assert_int_equal(usc__cone_create(kc.m->entry, &eo,
					  (const usc_tensor *const *)kc.in, 1,
					  0, &k, &err),
			 USC_OK);
	assert_int_equal(usc__cone_create(kc.m->entry, &eo,
					  (const usc_tensor *const *)kc.in, 1,
					  1, &tiny, &err),
			 USC_OK);
	usc__cone_kept(tiny, &bytes, &over);
	assert_int_equal(bytes, 0);
	assert_true(over);
	seed = named(kc.m, "m");
	s.seeds = &seed;
	s.n = 1;
	m = usc__cone_match_seeds(&s);
	eo.round_only = &seed;
	eo.round_only_count = 1;
	w = evaluate(kc.m->entry, &eo, &kc, NULL, NULL);
	c = evaluate(kc.m->entry, &eo, &kc, k, &m);
	t = evaluate(kc.m->entry, &eo, &kc, tiny, &m);
	assert_int_equal(w.st, USC_OK);
	assert_int_equal(c.st, USC_OK);
	assert_int_equal(t.st, USC_OK);
	same_outputs(&w, &c, "chain");
	same_oracle(&w, &c, "chain");
	same_outputs(&w, &t, "chain, budget 1");
	same_oracle(&w, &t, "chain, budget 1");
	/* m, s, f, d evaluated; b and c (the fusion's operands) and a (the
	 * add's) taken from the base; p0, p1 too. */
	usc__cone_counts(c.ev, &ev, &re);
	assert_int_equal(ev, 4);
	assert_int_equal(re, 5);
	/* Nothing kept: every instruction of both computations again. */
	usc__cone_counts(t.ev, &ev, &re);
	assert_int_equal(ev, 9);
	assert_int_equal(re, 0);
	run_free(&w);
	run_free(&c);
	run_free(&t);
	usc__cone_destroy(k);
	usc__cone_destroy(tiny);
	case_free(&kc);
}

/* A kernel with a while loop is evaluated whole, with the same values. */
static void test_control_flow_whole(void **state)
{
	usc_eval_options eo = usc_eval_options_default();
	const usc_hlo_instr *seed;
	usc__cone *k = NULL;
	usc__cone_seeds s;
	usc__cone_match m;
	usc_error err;
	size_t ev, re;
	kcase kc;
	run w, c;

	(void)state;
	small_case(&kc, loop_text);
	eo.domain = USC_DOMAIN_ORACLE;
	assert_int_equal(usc__cone_create(kc.m->entry, &eo,
					  (const usc_tensor *const *)kc.in, 1,
					  0, &k, &err),
			 USC_OK);
	seed = named(kc.m, "y");
	s.seeds = &seed;
	s.n = 1;
	m = usc__cone_match_seeds(&s);
	eo.round_only = &seed;
	eo.round_only_count = 1;
	w = evaluate(kc.m->entry, &eo, &kc, NULL, NULL);
	c = evaluate(kc.m->entry, &eo, &kc, k, &m);
	assert_int_equal(w.st, USC_OK);
	assert_int_equal(c.st, USC_OK);
	same_outputs(&w, &c, "loop");
	same_oracle(&w, &c, "loop");
	usc__cone_counts(c.ev, &ev, &re);
	assert_int_equal(ev, 0); /* not attached: whole */
	assert_int_equal(re, 0);
	run_free(&w);
	run_free(&c);
	usc__cone_destroy(k);
	case_free(&kc);
}

/*
 * Every allocation of a cone's base, an attach and a cone run failing in
 * turn: out of memory, nothing leaked, until all succeed with the values
 * of a whole run.
 */
static void test_out_of_memory(void **state)
{
	usc_eval_options eo = usc_eval_options_default();
	const usc_hlo_instr *seed;
	usc__cone_seeds s;
	usc__cone_match m;
	bool done = false;
	long base;
	kcase kc;
	run w;

	(void)state;
	small_case(&kc, chain_text);
	seed = named(kc.m, "m");
	s.seeds = &seed;
	s.n = 1;
	m = usc__cone_match_seeds(&s);
	w = evaluate(kc.m->entry, &eo, &kc, NULL, NULL);
	assert_int_equal(w.st, USC_OK);
	base = usc__alloc_live();
	for (long n = 0; !done && n < 100000; n++) {
		usc__cone *k = NULL;
		usc_error err;
		usc_status st;
		run c;

		memset(&c, 0, sizeof c);
		usc__alloc_fail_after(n);
		st = usc__cone_create(kc.m->entry, &eo,
				      (const usc_tensor *const *)kc.in, 1, 0,
				      &k, &err);
		if (st == USC_OK) {
			c = evaluate(kc.m->entry, &eo, &kc, k, &m);
			st = c.st;
		}
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			size_t ev, re;

			same_outputs(&w, &c, "out of memory");
			usc__cone_counts(c.ev, &ev, &re);
			assert_true(re > 0);
			done = true;
		} else {
			assert_int_equal(st, USC_ENOMEM);
		}
		run_free(&c);
		usc__cone_destroy(k);
		assert_int_equal(usc__alloc_live(), base);
	}
	assert_true(done);
	run_free(&w);
	case_free(&kc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cone_counts_and_budget),
	    cmocka_unit_test(test_control_flow_whole),
	    cmocka_unit_test(test_out_of_memory),
	    cmocka_unit_test(test_attribution_runs),
	    cmocka_unit_test(test_defect_mutants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
