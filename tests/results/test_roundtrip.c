/*
 * Writes two kernels and reads everything back with the C reader: every
 * encoding, every double (compared as bits, NaN payloads included), the
 * ops table, the attributes, and the summaries against values worked out
 * by hand from the fixture's formulas (see results_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ulpscope/ulpscope.h"
#include "results/results_fixture.h"

static char scratch[512];

/* The summaries, counted by hand from the formulas of the fixture. */
typedef struct hand {
	uint64_t count;
	uint64_t o_count, o_nan;
	double o_max, o_med, o_p99;
	uint64_t r_count, r_nan;
	double r_max, r_med, r_p99;
	uint64_t bit_exact, undecided;
} hand;

static const hand hands[FIXTURE_OUTPUTS] = {
	/* bf16: |eo| is 0.25 x4, 0.75 x5, 1.25 x4, 1.75 x4, 2.25 x4 with
	 * three NaN; |er| is 0..23; bit-exact at i % 4 == 0; undecided at
	 * i % 6 == 0. */
	{24, 21, 3, 2.25, 1.25, 2.25, 24, 0, 23.0, 11.0, 23.0, 6, 4},
	/* f8e4m3fn scalar: eo NaN, er 0. */
	{1, 0, 1, NAN, NAN, NAN, 1, 0, 0.0, 0.0, 0.0, 1, 1},
	/* f32 1280: |eo| ranks 640 and 1268 fall on 1.5 and 2.5; |er| on 1
	 * and 2. */
	{1280, 1280, 0, 2.5, 1.5, 2.5, 1280, 0, 2.0, 1.0, 2.0, 128, 214},
};

static bool same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static void check_summary(const usc_results_summary *s, const hand *h)
{
	assert_int_equal(s->count, h->count);
	assert_int_equal(s->oracle.count, h->o_count);
	assert_int_equal(s->oracle.nan_count, h->o_nan);
	assert_true(same_bits(s->oracle.max_abs, h->o_max) ||
		    (isnan(s->oracle.max_abs) && isnan(h->o_max)));
	assert_true(same_bits(s->oracle.median_abs, h->o_med) ||
		    (isnan(s->oracle.median_abs) && isnan(h->o_med)));
	assert_true(same_bits(s->oracle.p99_abs, h->o_p99) ||
		    (isnan(s->oracle.p99_abs) && isnan(h->o_p99)));
	assert_int_equal(s->reference.count, h->r_count);
	assert_int_equal(s->reference.nan_count, h->r_nan);
	assert_true(same_bits(s->reference.max_abs, h->r_max));
	assert_true(same_bits(s->reference.median_abs, h->r_med));
	assert_true(same_bits(s->reference.p99_abs, h->r_p99));
	assert_int_equal(s->bit_exact_count, h->bit_exact);
	assert_int_equal(s->undecided_count, h->undecided);
}

static void test_summarize(void **state)
{
	fixture fx;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	for (int o = 0; o < FIXTURE_OUTPUTS; o++) {
		usc_results_summary s;
		usc_error err;

		assert_int_equal(usc_results_summarize(&fx.out[o], &s, &err),
				 USC_OK);
		check_summary(&s, &hands[o]);
	}
	fixture_free(&fx);
}

static void check_output(usc_results_reader *r, const char *kernel,
			 size_t i, int o, const fixture *fx)
{
	usc_results_output_data *d = NULL;
	usc_error err;
	uint64_t n;

	if (usc_results_read_output(r, kernel, i, &d, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(d->dtype, fixture_types[o]);
	assert_true(usc_tensor_equal(d->device, fx->device[o]));
	assert_true(usc_tensor_equal(d->reference, fx->reference[o]));
	n = usc_tensor_count(fx->device[o]);
	assert_int_equal(d->count, n);
	assert_memory_equal(d->oracle_mid, fx->mid[o], n * sizeof(double));
	assert_memory_equal(d->oracle_rad, fx->rad[o], n * sizeof(double));
	assert_memory_equal(d->ulp_error_oracle, fx->eo[o], n * sizeof(double));
	assert_memory_equal(d->ulp_error_reference, fx->er[o],
			    n * sizeof(double));
	assert_memory_equal(d->undecided, fx->und[o], n);
	if (fx->out[o].cls) {
		assert_non_null(d->cls);
		assert_memory_equal(d->envelope_lo, fx->env_lo,
				    n * sizeof(double));
		assert_memory_equal(d->envelope_hi, fx->env_hi,
				    n * sizeof(double));
		assert_memory_equal(d->envelope_flags, fx->env_flags, n);
		assert_memory_equal(d->cls, fx->cls, n);
	} else {
		assert_null(d->cls);
		assert_null(d->envelope_lo);
	}
	check_summary(&d->summary, &hands[o]);
	usc_results_output_data_free(d);
}

static void test_roundtrip(void **state)
{
	static const struct {
		const char *name, *opcode, *type, *shape, *op_name, *file;
		int64_t line;
	} ops[] = {
		{"p0", "parameter", "bf16", "bf16[2,3,4]{2,1,0}", "", "", -1},
		{"p1", "parameter", "bf16", "bf16[2,3,4]{2,1,0}", "", "", -1},
		{"add.1", "add", "bf16", "bf16[2,3,4]{2,1,0}", "jit(f)/add",
		 "model.py", 42},
		{"c", "constant", "f8e4m3fn", "f8e4m3fn[]", "", "", -1},
		{"t", "tuple", "tuple", "(bf16[2,3,4]{2,1,0}, f8e4m3fn[])", "",
		 "", -1},
	};
	char path[600];
	fixture fx;
	usc_results_reader *r = NULL;
	usc_results_kernel_info *k = NULL;
	const usc_results_file_info *info;
	usc_error err;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	snprintf(path, sizeof path, "%s/two.h5", scratch);
	if (fixture_write(&fx, path, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_results_open(path, &r, &err) != USC_OK)
		fail_msg("%s", err.message);

	info = usc_results_reader_info(r);
	assert_int_equal(info->schema_version, 1);
	assert_string_equal(info->ulpscope_version, usc_version());
	/* "YYYY-MM-DDThh:mm:ssZ" */
	assert_int_equal(strlen(info->created), 20);
	assert_int_equal(info->created[10], 'T');
	assert_int_equal(info->created[19], 'Z');

	assert_int_equal(usc_results_kernel_count(r), 2);
	assert_string_equal(usc_results_kernel_name(r, 0), "fusion.1");
	assert_string_equal(usc_results_kernel_name(r, 1), "k2");
	assert_null(usc_results_kernel_name(r, 2));

	if (usc_results_read_kernel(r, "fusion.1", &k, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_string_equal(k->name, "fusion.1");
	assert_string_equal(k->hlo_file, "dumps/module_0001.fusion.1.txt");
	assert_string_equal(k->fusion, "fusion.1");
	assert_string_equal(k->verdict, "");
	assert_string_equal(k->hlo_text, fixture_hlo);
	assert_int_equal(k->hlo_text_len, strlen(fixture_hlo));
	assert_int_equal(k->oracle_precision_max, 320);
	assert_int_equal(k->element_count, 25);
	assert_int_equal(k->output_count, 2);
	assert_int_equal(k->op_count, sizeof ops / sizeof ops[0]);
	for (size_t i = 0; i < k->op_count; i++) {
		assert_int_equal(k->ops[i].index, (int64_t)i);
		assert_string_equal(k->ops[i].name, ops[i].name);
		assert_string_equal(k->ops[i].opcode, ops[i].opcode);
		assert_string_equal(k->ops[i].element_type, ops[i].type);
		assert_string_equal(k->ops[i].shape, ops[i].shape);
		assert_string_equal(k->ops[i].op_name, ops[i].op_name);
		assert_string_equal(k->ops[i].source_file, ops[i].file);
		assert_int_equal(k->ops[i].source_line, ops[i].line);
	}
	usc_results_kernel_info_free(k);

	if (usc_results_read_kernel(r, "k2", &k, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_string_equal(k->fusion, "");
	assert_string_equal(k->verdict, "legit");
	assert_string_equal(k->hlo_text, "");
	assert_int_equal(k->oracle_precision_max, 64);
	assert_int_equal(k->element_count, 1280);
	assert_int_equal(k->output_count, 1);
	assert_int_equal(k->op_count, 0);
	assert_null(k->ops);
	usc_results_kernel_info_free(k);

	check_output(r, "fusion.1", 0, 0, &fx);
	check_output(r, "fusion.1", 1, 1, &fx);
	check_output(r, "k2", 0, 2, &fx);

	/* Names and indices that are not there. */
	assert_int_equal(usc_results_read_kernel(r, "k3", &k, &err),
			 USC_ENOTFOUND);
	assert_null(k);
	{
		char want[700];
		usc_results_output_data *d = (usc_results_output_data *)1;

		snprintf(want, sizeof want, "%s: no kernel 'k3'", path);
		assert_string_equal(err.message, want);
		assert_int_equal(usc_results_read_output(r, "k2", 1, &d, &err),
				 USC_ENOTFOUND);
		assert_null(d);
		snprintf(want, sizeof want,
			 "%s:/kernels/k2/outputs/1: no such output", path);
		assert_string_equal(err.message, want);
	}
	usc_results_reader_close(r);
	fixture_free(&fx);
	unlink(path);
}

/* Appending keeps the kernels there and adds the new one after them. */
static void test_append(void **state)
{
	char path[600];
	fixture fx;
	usc_results *w = NULL;
	usc_results_reader *r = NULL;
	usc_results_kernel k3;
	usc_error err;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	snprintf(path, sizeof path, "%s/append.h5", scratch);
	assert_int_equal(fixture_write(&fx, path, &err), USC_OK);
	if (usc_results_open_append(path, &w, &err) != USC_OK)
		fail_msg("%s", err.message);
	k3 = fx.k2;
	k3.name = "k3";
	assert_int_equal(usc_results_add_kernel(w, &k3, &err), USC_OK);
	/* A name already there is refused and the writer goes on. */
	assert_int_equal(usc_results_add_kernel(w, &fx.k1, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "kernel 'fusion.1' is already in "
					    "the file"));
	if (usc_results_close(w, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_results_open(path, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_results_kernel_count(r), 3);
	assert_string_equal(usc_results_kernel_name(r, 2), "k3");
	check_output(r, "fusion.1", 0, 0, &fx);
	check_output(r, "k3", 0, 2, &fx);
	usc_results_reader_close(r);
	fixture_free(&fx);
	unlink(path);
}

/*
 * A kernel name of the longest length allowed reads back: the reader's
 * paths under it (".../outputs/0/ulp_error_reference") run past 1024
 * bytes.
 */
static void test_long_name(void **state)
{
	char path[600], name[USC_RESULTS_MAX_NAME + 1];
	fixture fx;
	usc_results *w = NULL;
	usc_results_reader *r = NULL;
	usc_results_kernel k;
	usc_error err;

	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	memset(name, 'k', USC_RESULTS_MAX_NAME);
	name[USC_RESULTS_MAX_NAME] = '\0';
	snprintf(path, sizeof path, "%s/long.h5", scratch);
	k = fx.k2;
	k.name = name;
	assert_int_equal(usc_results_create(path, &w, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &k, &err), USC_OK);
	if (usc_results_close(w, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_results_open(path, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	{
		usc_results_kernel_info *ki = NULL;

		if (usc_results_read_kernel(r, name, &ki, &err) != USC_OK)
			fail_msg("%s", err.message);
		assert_int_equal(ki->output_count, 1);
		usc_results_kernel_info_free(ki);
	}
	check_output(r, name, 0, 2, &fx);
	usc_results_reader_close(r);
	fixture_free(&fx);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_long_name),
	};
	int rc;

	fixture_scratch(scratch, sizeof scratch);
	if (!scratch[0])
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(scratch);
	return rc;
}
