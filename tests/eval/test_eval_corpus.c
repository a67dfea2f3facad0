/*
 * Every module of an HLO corpus whose entry
 * uses only supported ops, has no elided constants and takes at most
 * MAX_PARAM_ELEMS parameter elements evaluates without error on
 * deterministic pseudo-random inputs (floats in [-2, 2), integers in
 * [0, 4), random preds).  The test prints how many modules were evaluated
 * and how many were skipped, by reason; it fails on any other error.
 * The corpus is the project's own tests/hlo/corpus, or with the argument
 * "xla" XLA's corpus in the shared folder beside the checkout, skipped
 * when absent (tests/hlo/corpus_dir.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

#include "hlo/corpus_dir.h"
#include "test_util.h"

/* Sizes evaluated by default; USC_TEST_SCALE multiplies them. */
#define MAX_PARAM_ELEMS 65536
#define MAX_OUT_ELEMS 262144

static uint64_t rng = 0x243f6a8885a308d3ull;

static int64_t shape_leaf_elems(const usc_hlo_shape *s)
{
	int64_t n = 0;
	size_t i;

	if (s->kind != USC_HLO_SHAPE_TUPLE)
		return usc_hlo_shape_elements(s);
	for (i = 0; i < s->tuple_count; i++)
		n += shape_leaf_elems(&s->tuple[i]);
	return n;
}

typedef struct counts {
	int evaluated, unsupported, elided, too_large, run_unsupported, invalid;
	int outputs;
} counts;

static void fill(usc_tensor *t)
{
	usc_dtype d = usc_tensor_dtype(t);
	uint64_t n = usc_tensor_count(t), i;

	for (i = 0; i < n; i++) {
		uint64_t r = usc_test_splitmix64(&rng), bits = 0;

		if (d == USC_PRED)
			bits = r & 1;
		else if (usc_dtype_is_float(d))
			assert_int_equal(
				usc_encode_double(d,
						  (double)(r >> 11) * 0x1p-51 -
							  2.0,
						  NULL, &bits, NULL),
				USC_OK);
		else
			bits = r & 3;
		assert_int_equal(usc_tensor_set_bits(t, i, bits), USC_OK);
	}
}

static void eval_module(const char *file, const usc_hlo_module *m,
			counts *c)
{
	usc_eval *ev = NULL;
	usc_tensor **in = NULL;
	usc_error err;
	usc_status st;
	size_t i, np;
	int64_t total = 0;

	st = usc_eval_create(m, NULL, &ev, &err);
	if (st == USC_EUNSUPPORTED) {
		if (strstr(err.message, "elided"))
			c->elided++;
		else
			c->unsupported++;
		return;
	}
	if (st != USC_OK)
		fail_msg("%s: create: %s", file, err.message);
	np = usc_eval_param_count(ev);
	for (i = 0; i < np; i++) {
		usc_tensor_spec sp;

		assert_int_equal(usc_eval_param_spec(ev, i, &sp, &err), USC_OK);
		{
			int64_t e = 1;
			size_t d;

			for (d = 0; d < sp.rank; d++)
				e *= sp.dims[d];
			total += e;
		}
	}
	if (total > MAX_PARAM_ELEMS * usc_test_scale() ||
	    shape_leaf_elems(&m->entry->root->shape) >
		    MAX_OUT_ELEMS * usc_test_scale()) {
		c->too_large++;
		usc_eval_destroy(ev);
		return;
	}
	in = calloc(np ? np : 1, sizeof *in);
	assert_non_null(in);
	for (i = 0; i < np; i++) {
		usc_tensor_spec sp;

		usc_eval_param_spec(ev, i, &sp, &err);
		assert_int_equal(usc_tensor_create(sp.dtype, sp.rank, sp.dims,
						   &in[i], &err),
				 USC_OK);
		fill(in[i]);
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("%s: bind: %s", file, err.message);
	}
	st = usc_eval_run(ev, &err);
	if (st == USC_EUNSUPPORTED) {
		printf("  run-unsupported %s: %s\n", file, err.message);
		c->run_unsupported++;
	} else if (st == USC_EINVAL) {
		/* The corpus has a few deliberately ill-formed modules. */
		printf("  invalid %s: %s\n", file, err.message);
		c->invalid++;
	} else if (st != USC_OK) {
		fail_msg("%s: run: %s", file, err.message);
	} else {
		c->evaluated++;
		c->outputs += (int)usc_eval_output_count(ev);
	}
	for (i = 0; i < np; i++)
		usc_tensor_destroy(in[i]);
	free(in);
	usc_eval_destroy(ev);
}

static char corpus_dir[4096];

static void test_corpus(void **state)
{
	const char *dir = corpus_dir;
	char path[8192];
	char *names[1024];
	size_t n, i, j;
	counts c = {0, 0, 0, 0, 0, 0, 0};

	(void)state;
	n = corpus_list(dir, names, sizeof names / sizeof names[0]);
	for (i = 0; i < n; i++) {
		usc_hlo_file *f = NULL;
		usc_error err;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (usc_hlo_parse_file(path, &f, &err) != USC_OK)
			fail_msg("%s: %s", path, err.message);
		for (j = 0; j < usc_hlo_file_module_count(f); j++) {
			const usc_hlo_module *m = usc_hlo_file_module(f, j);

			if (m->entry)
				eval_module(names[i], m, &c);
		}
		usc_hlo_file_destroy(f);
		free(names[i]);
	}
	printf("corpus: %d modules evaluated (%d outputs); skipped: %d "
	       "unsupported op, %d elided constant, %d too large, %d "
	       "unsupported at run time, %d invalid\n",
	       c.evaluated, c.outputs, c.unsupported, c.elided, c.too_large,
	       c.run_unsupported, c.invalid);
	assert_true(c.evaluated > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};

	if (corpus_is_xla(argc, argv))
		corpus_xla_dir_or_skip(corpus_dir, sizeof corpus_dir);
	else
		corpus_own_dir(corpus_dir, sizeof corpus_dir,
			       "tests/hlo/corpus");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
