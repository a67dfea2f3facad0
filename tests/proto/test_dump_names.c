/*
 * The file names of a dump directory (include/ulpscope/dump.h): a
 * directory of empty files named as XLA names them, and what
 * usc_dump_open, usc_dump_find and usc_dump_snapshot make of it.  The
 * names are those of a real XLA:CPU run (data/dumps/xla_cpu), a negative
 * execution number, a module name with a dot, XLA:GPU's prefix with a dot
 * in it, files ulpscope ignores, and two modules of one name.
 */
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
#include "test_util.h"
#include "ulpscope/dump.h"

static char dir[256];

static const char *const files[] = {
	"module_0001.jit_a.b.before_optimizations.txt",
	"module_0001.jit_a.b.before_optimizations.hlo.pb",
	"module_0001.jit_a.b.cpu_after_optimizations.txt",
	"module_0001.jit_a.b.cpu_after_optimizations.hlo.pb",
	"module_0001.jit_a.b.cpu_after_optimizations-buffer-assignment.txt",
	"module_0001.jit_a.b.snapshot.3.pb",
	"module_0001.jit_a.b.snapshot.-2037544343.pb",
	"module_0001.jit_a.b.ir-no-opt.ll",
	"module_0012.jit_f.sm_8.0_gpu_after_optimizations.txt",
	"module_0013.jit_g.before_optimizations.txt",
	"module_0014.jit_g.before_optimizations.txt",
	"module_0014.jit_g.snapshot.7.pb",
	"notes.txt",
	"module_x.jit_h.before_optimizations.txt",
};

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/usc-dump-names-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char p[512];
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		FILE *fp = fopen(p, "w");
		if (!fp)
			return -1;
		fclose(fp);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char p[512];
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
	return 0;
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static void test_names(void **state)
{
	(void)state;
	usc_dump *d = NULL;
	usc_error err;
	long live = usc__alloc_live();
	if (usc_dump_open(dir, &d, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_dump_module_count(d), 4);

	const usc_dump_module *m = usc_dump_module_at(d, 0);
	assert_int_equal(m->id, 1);
	assert_string_equal(m->name, "jit_a.b");
	assert_string_equal(base(m->stem), "module_0001.jit_a.b");
	assert_string_equal(base(m->text_after),
			    "module_0001.jit_a.b.cpu_after_optimizations.txt");
	assert_string_equal(base(m->proto_after),
			    "module_0001.jit_a.b.cpu_after_optimizations.hlo.pb");
	assert_string_equal(base(m->text_before),
			    "module_0001.jit_a.b.before_optimizations.txt");
	assert_string_equal(m->platform, "cpu");
	assert_int_equal(m->snapshot_count, 2);
	assert_int_equal(m->executions[0], -2037544343);
	assert_int_equal(m->executions[1], 3);
	assert_string_equal(base(m->snapshots[0]),
			    "module_0001.jit_a.b.snapshot.-2037544343.pb");

	m = usc_dump_module_at(d, 1);
	assert_int_equal(m->id, 12);
	assert_string_equal(m->name, "jit_f");
	assert_string_equal(m->platform, "gpu");
	assert_int_equal(m->snapshot_count, 0);
	assert_null(m->text_before);

	/* Lookups: by name, id, zero-padded id, stem. */
	const usc_dump_module *f = NULL;
	assert_int_equal(usc_dump_find(d, "jit_a.b", &f, &err), USC_OK);
	assert_int_equal(f->id, 1);
	assert_int_equal(usc_dump_find(d, "12", &f, &err), USC_OK);
	assert_int_equal(f->id, 12);
	assert_int_equal(usc_dump_find(d, "0014", &f, &err), USC_OK);
	assert_int_equal(f->id, 14);
	assert_int_equal(usc_dump_find(d, "module_0013.jit_g", &f, &err),
			 USC_OK);
	assert_int_equal(f->id, 13);
	/* Two modules named jit_g: the id decides. */
	assert_int_equal(usc_dump_find(d, "jit_g", &f, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "2 modules are named 'jit_g': "
					    "13 jit_g (0 snapshots), 14 jit_g "
					    "(1 snapshot); give the id"));
	assert_int_equal(usc_dump_find(d, "jit_z", &f, &err), USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "no module 'jit_z'; the dump "
					    "holds 1 jit_a.b (2 snapshots)"));

	/* Snapshots: K as written, the only one, or a list to choose from. */
	size_t k = 99;
	m = usc_dump_module_at(d, 0);
	assert_int_equal(usc_dump_snapshot(m, true, 3, &k, &err), USC_OK);
	assert_int_equal(k, 1);
	assert_int_equal(usc_dump_snapshot(m, false, 0, &k, &err), USC_EINVAL);
	assert_non_null(strstr(err.message, "2 snapshots (executions "
					    "-2037544343, 3); choose one with "
					    "--execution K"));
	assert_int_equal(usc_dump_snapshot(m, true, 4, &k, &err),
			 USC_ENOTFOUND);
	assert_int_equal(usc_dump_find(d, "14", &f, &err), USC_OK);
	assert_int_equal(usc_dump_snapshot(f, false, 0, &k, &err), USC_OK);
	assert_int_equal(k, 0);
	assert_int_equal(usc_dump_find(d, "12", &f, &err), USC_OK);
	assert_int_equal(usc_dump_snapshot(f, false, 0, &k, &err),
			 USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "--xla_dump_hlo_snapshots"));
	usc_dump_close(d);
	assert_int_equal(usc__alloc_live(), live);
}

static void test_not_a_dump(void **state)
{
	(void)state;
	usc_dump *d = NULL;
	usc_error err;
	char src[512];
	snprintf(src, sizeof src, "%s/kernels", usc_test_src_dir());
	assert_int_equal(usc_dump_open(src, &d, &err), USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "not an XLA dump directory"));
	assert_int_equal(usc_dump_open("/nonexistent/dir", &d, &err),
			 USC_ENOTFOUND);
	assert_null(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_not_a_dump),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
