/*
 * Out-of-memory injection: every allocation of every reader and writer is
 * made to fail in turn.  Each failure must come back as USC_ENOMEM with a
 * message, leave *out NULL and leak nothing; once enough allocations are
 * allowed the call succeeds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "store/h5_door.h"
#include "ulpscope/tensor.h"
#include "tensor/tensor_test_util.h"

typedef usc_status (*op_fn)(const char *arg, usc_tensor **out,
			    usc_error *err);

static char scratch[512];

static usc_status op_read(const char *arg, usc_tensor **out, usc_error *err)
{
	usc_tensor_spec spec = {USC_F32, USC_TENSOR_ANY_SHAPE, NULL, NULL};
	char src[1100];
	const char *colon = strchr(arg, ':');

	if (strstr(arg, "s16"))
		spec.dtype = USC_S16;
	if (strstr(arg, "s4"))
		spec.dtype = USC_S4;
	if (strstr(arg, "f64"))
		spec.dtype = USC_F64;
	if (colon) {
		char file[256];

		snprintf(file, sizeof file, "%.*s", (int)(colon - arg), arg);
		fixture_path(src, sizeof src, file);
		strncat(src, colon, sizeof src - strlen(src) - 1);
	} else {
		fixture_path(src, sizeof src, arg);
	}
	return usc_tensor_read(src, &spec, 0, out, err);
}

static usc_status op_read_mem(const char *arg, usc_tensor **out,
			      usc_error *err)
{
	static const char img[] =
		"\x93NUMPY\x01\x00\x4b\x00{'descr': '<i2', 'fortran_order': "
		"True, 'shape': (2, 2), }                \n\x01\x00\x02\x00"
		"\x03\x00\x04\x00";
	static const int64_t d22[] = {2, 2};
	usc_tensor_spec spec = {USC_BF16, 2, d22, NULL};

	(void)arg;
	return usc_tensor_read_npy_mem(img, sizeof img - 1, "mem.npy", &spec,
				       out, err);
}

static usc_status op_raw(const char *arg, usc_tensor **out, usc_error *err)
{
	static const int64_t d23[] = {2, 3};
	usc_tensor_spec spec = {USC_F32, 2, d23, NULL};
	char path[1024];

	(void)arg;
	snprintf(path, sizeof path, "%s/in.raw", scratch);
	return usc_tensor_read_raw(path, &spec, out, err);
}

static usc_status op_create_write(const char *arg, usc_tensor **out,
				  usc_error *err)
{
	static const int64_t d[] = {3, 5};
	char path[1024];
	usc_status st = usc_tensor_create(USC_BF16, 2, d, out, err);

	if (st != USC_OK)
		return st;
	snprintf(path, sizeof path, "%s/%s", scratch, arg);
	if (strstr(arg, ".h5")) {
		usc__h5_file *f = NULL;

		st = usc__h5_file_create(path, &f, err);
		if (st == USC_OK)
			st = usc__h5_write_array(f, "/a/b", USC_BF16, 2, d,
						 usc_tensor_cdata(*out), err);
		if (f)
			usc__h5_file_close(f, NULL);
	} else {
		st = usc_tensor_write_npy(*out, path, err);
	}
	unlink(path);
	if (st != USC_OK) {
		usc_tensor_destroy(*out);
		*out = NULL;
	}
	return st;
}

static void run_oom(op_fn op, const char *arg)
{
	long n;
	bool done = false;

	for (n = 0; n < 200 && !done; n++) {
		usc_tensor *t = (usc_tensor *)1;
		usc_error err;
		usc_status st;

		usc_error_clear(&err);
		usc__alloc_fail_after(n);
		st = op(arg, &t, &err);
		usc__alloc_fail_after(-1);
		if (st == USC_OK) {
			assert_non_null(t);
			usc_tensor_destroy(t);
			done = true;
		} else {
			if (st != USC_ENOMEM)
				fail_msg("%s, n=%ld: %s", arg ? arg : "(none)", n,
					 err.message);
			assert_null(t);
			assert_non_null(strstr(err.message, "out of memory"));
		}
		assert_int_equal(usc__alloc_live(), 0);
	}
	assert_true(done);
	/* At least one allocation was made to fail on the way. */
	assert_true(n > 1);
}

static void test_oom(void **state)
{
	FILE *fp;
	char path[1024];

	(void)state;
	scratch_dir(scratch, sizeof scratch);
	assert_true(scratch[0]);
	snprintf(path, sizeof path, "%s/in.raw", scratch);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fwrite("0123456789abcdef01234567", 1, 24, fp);
	fclose(fp);

	run_oom(op_read, "f32_v1.npy");
	run_oom(op_read, "f32_v3.npy");
	run_oom(op_read, "s16_fortran_3d.npy");
	run_oom(op_read, "s4_as_i1.npy");
	run_oom(op_read, "tensors.h5:/group/nested/f64");
	run_oom(op_read, "tensors.h5:/chunked");
	run_oom(op_read_mem, NULL);
	run_oom(op_raw, NULL);
	run_oom(op_create_write, "out.npy");
	run_oom(op_create_write, "out.h5");
	unlink(path);
	rmdir(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
