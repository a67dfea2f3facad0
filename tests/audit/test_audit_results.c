/*
 * The audit's group of the result file (src/store/results_audit.c,
 * docs/results.md "/audits/<name>/"): what is written is read back through
 * the HDF5 door and compared with the report it came from, bit for bit;
 * the file stays a result file the reader accepts; a second audit is
 * appended; a name already there and a file that is not a result file are
 * refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "store/h5_door.h"
#include "ulpscope/audit.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"

static usc_audit_report *audit_pair(const char *name, usc_audit_dist d,
				    size_t samples, const usc_profile *p)
{
	const char *src = getenv("USC_SOURCE_DIR");
	static char b[1024], a[1024];
	usc_audit_request req = usc_audit_request_default();
	usc_audit_report *r = NULL;
	usc_error err;

	assert_non_null(src);
	snprintf(b, sizeof b, "%s/tests/audit/pairs/%s_before.hlo", src, name);
	snprintf(a, sizeof a, "%s/tests/audit/pairs/%s_after.hlo", src, name);
	req.before_path = b;
	req.after_path = a;
	req.dist_count = 1;
	req.dists = &d;
	req.samples = samples;
	req.seed = 2;
	req.profile = p;
	if (usc_audit_run(&req, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	return r;
}

static void read_f64(usc__h5_file *f, const char *path, double *buf,
		     size_t n)
{
	usc__h5_dataset *d;
	usc_error err;
	int64_t dims[2];
	size_t rank;

	assert_int_equal(usc__h5_dataset_open(f, path, &d, &err), USC_OK);
	assert_int_equal(usc__h5_dataset_shape(d, 2, &rank, dims, &err),
			 USC_OK);
	assert_int_equal(rank, 2);
	assert_int_equal((size_t)(dims[0] * dims[1]), n);
	assert_int_equal(usc__h5_dataset_read_raw(d, buf, n * 8, &err),
			 USC_OK);
	usc__h5_dataset_close(d);
}

static void test_write_read(void **state)
{
	char dir[] = "/tmp/usc_audit_h5_XXXXXX", path[128], *s = NULL;
	const char *g = "/audits/rt";
	usc_profile p;
	usc_audit_report *r, *r2;
	usc__h5_file *f;
	usc_results_reader *rd;
	usc_error err;
	uint64_t u;
	double v, *buf;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/audit.h5", dir);
	assert_int_equal(usc_profile_resolve("xla-cpu", &p, &err), USC_OK);
	r = audit_pair("roundtrip", USC_AUDIT_DIST_NORMAL, 2, &p);
	r2 = audit_pair("divconst", USC_AUDIT_DIST_UNIFORM, 1, NULL);
	assert_int_equal(usc_audit_write(r, path, "rt", 0, &err), USC_OK);
	assert_int_equal(usc_audit_write(r2, path, "div", USC_AUDIT_APPEND,
					 &err),
			 USC_OK);
	/* The same name again is refused, the file left as it was. */
	assert_int_equal(usc_audit_write(r2, path, "div", USC_AUDIT_APPEND,
					 &err),
			 USC_EINVAL);
	assert_non_null(strstr(err.message, "audit 'div' is already in the "
					    "file"));
	/* Still a result file for the reader. */
	assert_int_equal(usc_results_open(path, &rd, &err), USC_OK);
	usc_results_reader_close(rd);

	assert_int_equal(usc__h5_file_open_read(path, &f, &err), USC_OK);
	assert_int_equal(usc__h5_attr_get_string(f, g, "verdict", &s, &err),
			 USC_OK);
	assert_string_equal(s, usc_audit_verdict_name(r->verdict));
	usc__free(s);
	assert_int_equal(usc__h5_attr_get_string(f, g, "profile", &s, &err),
			 USC_OK);
	assert_string_equal(s, "xla-cpu");
	usc__free(s);
	assert_int_equal(usc__h5_attr_get_uint(f, g, "samples", &u, &err),
			 USC_OK);
	assert_int_equal(u, 2);
	assert_int_equal(usc__h5_attr_get_uint(f, "/audits/rt/outputs/0",
					       "better", &u, &err),
			 USC_OK);
	assert_int_equal(u, r->pooled[0].better);
	assert_int_equal(usc__h5_attr_get_double(f, "/audits/rt/outputs/0",
						 "before_max", &v, &err),
			 USC_OK);
	assert_true(v == r->pooled[0].before.max_abs);
	/* Every element of both samples, in sample order. */
	buf = calloc(512, sizeof *buf);
	read_f64(f, "/audits/rt/outputs/0/ulp_after", buf, 512);
	for (size_t s2 = 0; s2 < 2; s2++)
		assert_memory_equal(buf + 256 * s2,
				    r->samples[s2].elements[0].ulp_after,
				    256 * sizeof *buf);
	read_f64(f, "/audits/rt/outputs/0/width_before", buf, 512);
	assert_memory_equal(buf + 256, r->samples[1].elements[0].width_before,
			    256 * sizeof *buf);
	read_f64(f, "/audits/div/outputs/0/fn_ulps", buf, 256);
	assert_memory_equal(buf, r2->samples[0].elements[0].fn_ulps,
			    256 * sizeof *buf);
	free(buf);
	assert_int_equal(usc__h5_attr_get_uint(f, "/audits/div",
					       "function_changed", &u, &err),
			 USC_OK);
	assert_int_equal(u, 1);
	assert_int_equal(usc__h5_file_close(f, &err), USC_OK);

	/* A file that is not a result file: refused, then forced. */
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("notes\n", fp);
	fclose(fp);
	assert_int_not_equal(usc_audit_write(r, path, "rt", 0, &err), USC_OK);
	assert_non_null(strstr(err.message, "not an ulpscope result file"));
	assert_int_equal(usc_audit_write(r, path, "rt", USC_RESULTS_FORCE,
					 &err),
			 USC_OK);
	/* Names follow the kernel names' rules. */
	assert_int_equal(usc_audit_write(r, path, "a/b", USC_AUDIT_APPEND,
					 &err),
			 USC_EINVAL);
	remove(path);
	snprintf(path, sizeof path, "%s/audit.h5", dir);
	remove(path);
	snprintf(path, sizeof path, "%s/audit.h5.lock", dir);
	remove(path);
	snprintf(path, sizeof path, "%s/notes.txt.lock", dir);
	remove(path);
	rmdir(dir);
	usc_audit_report_destroy(r);
	usc_audit_report_destroy(r2);
	assert_int_equal(usc__alloc_live(), 0);
}

/* With the op-by-op view: an ops table of one row per rounding point. */
static void test_ops_table(void **state)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char dir[] = "/tmp/usc_audit_h5_XXXXXX", path[128], b[1024], a[1024];
	usc_audit_request req = usc_audit_request_default();
	usc_audit_dist d = USC_AUDIT_DIST_UNIFORM;
	usc_audit_report *r = NULL;
	usc__h5_file *f;
	usc__h5_dataset *ds;
	usc_error err;
	int64_t dims[1];
	size_t rank;
	char *note = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/ops.h5", dir);
	snprintf(b, sizeof b, "%s/tests/audit/pairs/narrowacc_before.hlo", src);
	snprintf(a, sizeof a, "%s/tests/audit/pairs/narrowacc_after.hlo", src);
	req.before_path = b;
	req.after_path = a;
	req.dist_count = 1;
	req.dists = &d;
	req.ops = true;
	assert_int_equal(usc_audit_run(&req, &r, &err), USC_OK);
	assert_int_equal(r->op_count, 2);
	assert_int_equal(usc_audit_write(r, path, "acc", 0, &err), USC_OK);
	assert_int_equal(usc__h5_file_open_read(path, &f, &err), USC_OK);
	assert_int_equal(usc__h5_dataset_open(f, "/audits/acc/ops", &ds, &err),
			 USC_OK);
	assert_int_equal(usc__h5_dataset_shape(ds, 1, &rank, dims, &err),
			 USC_OK);
	assert_int_equal(rank, 1);
	assert_int_equal(dims[0], 2);
	usc__h5_dataset_close(ds);
	assert_int_equal(usc__h5_attr_get_string(f, "/audits/acc", "ops_note",
						 &note, &err),
			 USC_OK);
	assert_string_equal(note, "");
	usc__free(note);
	assert_int_equal(usc__h5_file_close(f, &err), USC_OK);
	usc_audit_report_destroy(r);
	remove(path);
	snprintf(path, sizeof path, "%s/ops.h5.lock", dir);
	remove(path);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_ops_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
