/*
 * Out-of-memory injection: every allocation of the writer and of the
 * reader is made to fail in turn.  Each failure must come back as
 * USC_ENOMEM with a message, leak nothing and leave no file behind; once
 * enough allocations are allowed the call succeeds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "results/results_fixture.h"

static char scratch[512];
static char path[600];
static fixture fx;

static usc_status op_write(usc_error *err)
{
	return fixture_write(&fx, path, err);
}

static usc_status op_read(usc_error *err)
{
	usc_results_reader *r = NULL;
	usc_status st = usc_results_open(path, &r, err);

	for (size_t i = 0; st == USC_OK && i < usc_results_kernel_count(r);
	     i++) {
		const char *name = usc_results_kernel_name(r, i);
		usc_results_kernel_info *k = NULL;

		st = usc_results_read_kernel(r, name, &k, err);
		for (size_t j = 0; st == USC_OK && j < k->output_count; j++) {
			usc_results_output_data *o = NULL;

			st = usc_results_read_output(r, name, j, &o, err);
			usc_results_output_data_free(o);
		}
		usc_results_kernel_info_free(k);
	}
	usc_results_reader_close(r);
	return st;
}

static usc_status op_summarize(usc_error *err)
{
	usc_results_summary s;

	return usc_results_summarize(&fx.out[2], &s, err);
}

static usc_status op_append(usc_error *err)
{
	usc_results *w = NULL;
	usc_results_kernel k = fx.k2;
	usc_status st = usc_results_open_append(path, &w, err);

	k.name = "k3";
	if (st == USC_OK)
		st = usc_results_add_kernel(w, &k, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}

static void run_oom(usc_status (*op)(usc_error *), bool writes)
{
	long n;
	bool done = false;
	long base = usc__alloc_live();

	for (n = 0; n < 2000 && !done; n++) {
		usc_error err;
		usc_status st;

		usc_error_clear(&err);
		if (writes)
			unlink(path);
		usc__alloc_fail_after(n);
		st = op(&err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			done = true;
		} else {
			if (st != USC_ENOMEM)
				fail_msg("n=%ld: %s", n, err.message);
			assert_non_null(strstr(err.message, "out of memory"));
			if (writes) {
				char tmp[800];

				snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path,
					 (long)getpid());
				assert_false(access(tmp, F_OK) == 0);
			}
		}
		assert_int_equal(usc__alloc_live(), base);
	}
	assert_true(done);
	assert_true(n > 1);
}

static void test_oom(void **state)
{
	(void)state;
	assert_int_equal(fixture_build(&fx), 0);
	snprintf(path, sizeof path, "%s/oom.h5", scratch);
	run_oom(op_summarize, false);
	run_oom(op_write, true);
	run_oom(op_read, false);
	/* An append that fails leaves the original file as it was. */
	{
		long n;
		bool done = false;

		for (n = 0; n < 2000 && !done; n++) {
			usc_error err;
			usc_status st;

			usc__alloc_fail_after(n);
			st = op_append(&err);
			usc__alloc_fail_after(-1);
			if (st == USC_OK)
				break;
			if (st != USC_ENOMEM)
				fail_msg("n=%ld: %s", n, err.message);
			assert_int_equal(op_read(&err), USC_OK);
		}
	}
	fixture_free(&fx);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom),
	};
	int rc;

	fixture_scratch(scratch, sizeof scratch);
	if (!scratch[0])
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(scratch);
	return rc;
}
