/*
 * The limits on what is read (include/ulpscope/limits.h, docs/limits.md):
 * every reader refuses a directory, a FIFO or a device without blocking
 * or reading it (issue 12: `hlo /dev/zero` read until memory ran out, a
 * FIFO blocked for ever); text inputs past max_file_bytes and tensors
 * past max_elements are refused before their data is allocated, with a
 * message naming the file, the limit and how to raise it, and a limit
 * equal to the size is enough.
 */
#define _POSIX_C_SOURCE 200809L /* mkfifo, mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "tensor/tensor_test_util.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/limits.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

static char dir[256];

static int setup(void **state)
{
	char path[512];

	(void)state;
	snprintf(dir, sizeof dir, "/tmp/usc_limits_XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/fifo.npy", dir);
	if (mkfifo(path, 0600) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/subdir.npy", dir);
	return mkdir(path, 0700);
}

static int teardown(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof path, "%s/fifo.npy", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/subdir.npy", dir);
	rmdir(path);
	snprintf(path, sizeof path, "%s/text.hlo", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/t.raw", dir);
	unlink(path);
	rmdir(dir);
	usc_limits_set(&(usc_limits){USC_LIMIT_FILE_BYTES_DEFAULT,
				     USC_LIMIT_ELEMENTS_DEFAULT, 0});
	return 0;
}

/* Every reader on path: USC_EIO and "path: is KIND, not a regular file". */
static void expect_refused(const char *path, const char *kind)
{
	static const int64_t d3[] = {3};
	const usc_tensor_spec spec = {USC_F32, 1, d3, NULL};
	char want[512], src[600];
	usc_tensor *t = NULL;
	usc_hlo_file *f = NULL;
	usc_profile prof;
	usc_error err;
	char *text = NULL;
	size_t len;

	snprintf(want, sizeof want,
		 "%s: is %s, not a regular file; ulpscope reads its inputs "
		 "from regular files only",
		 path, kind);
	assert_int_equal(usc__read_file(path, &text, &len, &err), USC_EIO);
	assert_string_equal(err.message, want);
	assert_null(text);
	assert_int_equal(usc_hlo_parse_file(path, &f, &err), USC_EIO);
	assert_string_equal(err.message, want);
	assert_int_equal(usc_tensor_read_npy(path, &spec, &t, &err), USC_EIO);
	assert_string_equal(err.message, want);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err), USC_EIO);
	assert_string_equal(err.message, want);
	assert_int_equal(usc_tensor_read_h5_dataset(path, "/x", &spec, &t,
						    &err),
			 USC_EIO);
	assert_string_equal(err.message, want);
	snprintf(src, sizeof src, "%s", path);
	assert_int_equal(usc_profile_load(src, &prof, &err), USC_EIO);
	assert_string_equal(err.message, want);
	assert_null(t);
	assert_null(f);
	assert_int_equal(usc__alloc_live(), 0);
}

static void test_not_regular(void **state)
{
	char path[512];

	(void)state;
	/* A FIFO without a writer: refused at once, not waited on. */
	snprintf(path, sizeof path, "%s/fifo.npy", dir);
	expect_refused(path, "a FIFO (named pipe)");
	snprintf(path, sizeof path, "%s/subdir.npy", dir);
	expect_refused(path, "a directory");
	/* Endless: read, it would fill memory. */
	expect_refused("/dev/zero", "a character device");
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
}

static const char big_hlo[] =
	"HloModule big\n"
	"ENTRY e {\n"
	"  c = f32[] constant(1)\n"
	"  ROOT b = f32[1610612736] broadcast(c), dimensions={}\n"
	"}\n";

static void test_file_size(void **state)
{
	char path[512], want[1024];
	usc_hlo_file *f = NULL;
	usc_error err;
	char *text = NULL;
	size_t len, n = strlen(big_hlo);

	(void)state;
	assert_int_equal(n, 105);
	snprintf(path, sizeof path, "%s/text.hlo", dir);
	write_file(path, big_hlo);
	usc_limits_set(&(usc_limits){104, 0, 0});
	assert_int_equal(usc_limits_get().max_file_bytes, 104);
	snprintf(want, sizeof want,
		 "%s: 105 bytes, more than the limit of 104 bytes on a text "
		 "input (raise it with --max-file-size, or usc_limits_set; "
		 "docs/limits.md)",
		 path);
	assert_int_equal(usc__read_file(path, &text, &len, &err), USC_ERANGE);
	assert_string_equal(err.message, want);
	assert_int_equal(usc_hlo_parse_file(path, &f, &err), USC_ERANGE);
	assert_string_equal(err.message, want);
	assert_int_equal(usc__alloc_live(), 0);
	/* The limit is inclusive. */
	usc_limits_set(&(usc_limits){105, 0, 0});
	assert_int_equal(usc__read_file(path, &text, &len, &err), USC_OK);
	assert_int_equal(len, 105);
	assert_memory_equal(text, big_hlo, 105);
	usc__free(text);
	/* A stream is cut at the limit too: one byte past it is seen. */
	{
		FILE *fp = fopen(path, "rb");

		usc_limits_set(&(usc_limits){100, 0, 0});
		assert_int_equal(usc__read_stream(fp, "<stdin>", 0, &text, &len,
						  &err),
				 USC_ERANGE);
		assert_string_equal(err.message,
				    "<stdin>: more than the limit of 100 bytes "
				    "on a text input (raise it with "
				    "--max-file-size, or usc_limits_set; "
				    "docs/limits.md)");
		rewind(fp);
		usc_limits_set(&(usc_limits){105, 0, 0});
		assert_int_equal(usc__read_stream(fp, "<stdin>", 0, &text, &len,
						  &err),
				 USC_OK);
		assert_int_equal(len, 105);
		usc__free(text);
		fclose(fp);
	}
	usc_limits_set(&(usc_limits){USC_LIMIT_FILE_BYTES_DEFAULT, 0, 0});
	assert_int_equal(usc__alloc_live(), 0);
}

/* f32[2,3] as np.save writes it: a 128-byte header, then 24 bytes. */
static size_t npy_2x3(unsigned char *buf)
{
	static const char head[] =
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	size_t hlen = 128 - 10;

	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)(hlen & 0xff);
	buf[9] = (unsigned char)(hlen >> 8);
	memset(buf + 10, ' ', hlen);
	memcpy(buf + 10, head, sizeof head - 1);
	buf[127] = '\n';
	memset(buf + 128, 0, 24);
	return 152;
}

static void test_tensor_elements(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec spec = {USC_F32, 2, d23, NULL};
	unsigned char npy[152];
	char path[512], want[2048], h5[1024];
	usc_tensor *t = NULL;
	usc_error err;
	size_t n = npy_2x3(npy);
	const char *tail = "shape (2, 3) has 6 elements, more than the limit "
			   "of 5 on one tensor (raise it with --max-elements, "
			   "or usc_limits_set; docs/limits.md)";
	FILE *fp;

	(void)state;
	usc_limits_set(&(usc_limits){0, 5, 0});
	assert_int_equal(usc_tensor_read_npy_mem(npy, n, "m.npy", &spec, &t,
						 &err),
			 USC_ERANGE);
	snprintf(want, sizeof want, "m.npy: %s", tail);
	assert_string_equal(err.message, want);
	assert_null(t);
	snprintf(path, sizeof path, "%s/t.raw", dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(npy + 128, 1, 24, fp), 24);
	fclose(fp);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err),
			 USC_ERANGE);
	snprintf(want, sizeof want, "%s: %s", path, tail);
	assert_string_equal(err.message, want);
	fixture_path(h5, sizeof h5, "tensors.h5");
	assert_int_equal(usc_tensor_read_h5_dataset(h5, "/f32", &spec, &t,
						    &err),
			 USC_ERANGE);
	snprintf(want, sizeof want, "%s:/f32: %s", h5, tail);
	assert_string_equal(err.message, want);
	assert_int_equal(usc__alloc_live(), 0);
	/* Six is enough for six. */
	usc_limits_set(&(usc_limits){0, 6, 0});
	assert_int_equal(usc_tensor_read_npy_mem(npy, n, "m.npy", &spec, &t,
						 &err),
			 USC_OK);
	usc_tensor_destroy(t);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err), USC_OK);
	usc_tensor_destroy(t);
	assert_int_equal(usc_tensor_read_h5_dataset(h5, "/f32", &spec, &t,
						    &err),
			 USC_OK);
	usc_tensor_destroy(t);
	usc_limits_set(&(usc_limits){0, USC_LIMIT_ELEMENTS_DEFAULT, 0});
	assert_int_equal(usc__alloc_live(), 0);
}

/*
 * A 105-byte module declaring f32[1610612736] (6 GiB): the evaluator
 * refuses it when created, before any value is allocated, naming the
 * instruction and its line:column; raised to exactly that count it is
 * accepted (creating allocates no values).
 */
static void test_eval_elements(void **state)
{
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_parse(big_hlo, strlen(big_hlo), "big.hlo", &f,
				       &err),
			 USC_OK);
	assert_int_equal(usc_limits_get().max_elements, UINT64_C(1) << 28);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 USC_ERANGE);
	assert_null(ev);
	assert_string_equal(err.message,
			    "f32[1610612736] has 1610612736 elements, more "
			    "than the limit of 268435456 on one tensor (raise "
			    "it with --max-elements, or usc_limits_set; "
			    "docs/limits.md) at 4:8 (instruction 'b')");
	usc_limits_set(&(usc_limits){0, 1610612736, 0});
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 USC_OK);
	usc_eval_destroy(ev);
	usc_limits_set(&(usc_limits){0, USC_LIMIT_ELEMENTS_DEFAULT, 0});
	usc_hlo_file_destroy(f);
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_file_size),
		cmocka_unit_test(test_tensor_elements),
		cmocka_unit_test(test_eval_elements),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
