/*
 * HDF5 datasets: the error paths (each with its exact message), the
 * dispatch by name, and a round trip through the door's writer.  The
 * values of the fixture datasets are checked in test_npy.c against
 * expect.txt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "store/h5_door.h"
#include "ulpscope/tensor.h"
#include "tensor/tensor_test_util.h"

/*
 * Reads FIXTURE:dataset (or FIXTURE alone when dataset is NULL) and
 * checks the code and that the message is the fixture's path followed by
 * tail.
 */
static void expect_h5(const char *fixture, const char *dataset,
		      const usc_tensor_spec *spec, usc_status code,
		      const char *tail)
{
	char src[1024], msg[2048];
	usc_tensor *t = (usc_tensor *)1;
	usc_error err;

	fixture_path(src, sizeof src, fixture);
	if (dataset)
		strncat(src, dataset, sizeof src - strlen(src) - 1);
	usc_error_clear(&err);
	assert_int_equal(usc_tensor_read(src, spec, 0, &t, &err), code);
	assert_null(t);
	fixture_path(msg, sizeof msg, fixture);
	strncat(msg, tail, sizeof msg - strlen(msg) - 1);
	assert_string_equal(err.message, msg);
	assert_int_equal(usc__alloc_live(), 0);
}

static void test_errors(void **state)
{
	static const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d3[] = {3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, "parameter 0"};
	const usc_tensor_spec f32_32 = {USC_F32, 2, d32, "parameter 0"};
	const usc_tensor_spec scalar = {USC_F32, 0, NULL, NULL};
	const usc_tensor_spec bf16 = {USC_BF16, 1, d3, NULL};
	const usc_tensor_spec s8 = {USC_S8, 1, d3, NULL};

	(void)state;
	/* A missing name comes with what its group holds instead (the
	 * members of tests/tensor/fixtures/tensors.h5, by name). */
	expect_h5("tensors.h5", ":/nope", &f32, USC_ENOTFOUND,
		  ":/nope: no such dataset (/ holds: bf16, bf16_as_f16, c64, "
		  "chunked, empty, f16, f32, f64, f64_be, f8e4m3fn, "
		  "f8e5m2_as_u8, group, just_a_group, pred, s32_be, s4, s64, "
		  "s8_rank4, text, u16)");
	expect_h5("tensors.h5", ":/group/missing/f64", &f32, USC_ENOTFOUND,
		  ":/group/missing/f64: no such dataset (/group holds: "
		  "nested)");
	expect_h5("tensors.h5", ":/just_a_group/x", &f32, USC_ENOTFOUND,
		  ":/just_a_group/x: no such dataset (/just_a_group is "
		  "empty)");
	expect_h5("tensors.h5", ":/f32/x", &f32, USC_ENOTFOUND,
		  ":/f32/x: no such dataset (/f32 is not a group)");
	expect_h5("tensors.h5", ":/just_a_group", &f32, USC_EINVAL,
		  ":/just_a_group: not a dataset (it is a group)");
	expect_h5("tensors.h5", ":/", &f32, USC_EINVAL,
		  ":/: not a dataset (it is a group)");
	expect_h5("not_hdf5.h5", ":/f32", &f32, USC_EPARSE,
		  ": not an HDF5 file");
	expect_h5("missing.h5", ":/f32", &f32, USC_ENOTFOUND,
		  ": cannot open: No such file or directory");
	expect_h5("tensors.h5", ":/f32", &f32_32, USC_EINVAL,
		  ":/f32: shape (2, 3) does not match parameter 0, f32[3,2]");
	expect_h5("tensors.h5", ":/f64", &scalar, USC_EINVAL,
		  ":/f64: dtype HDF5 64-bit float (11 exponent bits, 52 "
		  "mantissa bits) does not match the expected tensor, f32[]: "
		  "element sizes differ (8 bytes vs 4)");
	expect_h5("tensors.h5", ":/bf16_as_f16", &bf16, USC_EINVAL,
		  ":/bf16_as_f16: dtype HDF5 16-bit float (5 exponent bits, "
		  "10 mantissa bits) does not match the expected tensor, "
		  "bf16[3]: a float file must hold the same float type");
	expect_h5("tensors.h5", ":/pred", &s8, USC_EINVAL,
		  ":/pred: dtype HDF5 bool enum of 1 bytes does not match the "
		  "expected tensor, s8[3]: a bool file holds pred only");
	expect_h5("tensors.h5", ":/text", &s8, USC_EUNSUPPORTED,
		  ":/text: HDF5 string type is not a tensor element type");
}

/*
 * A file the HDF5 library cannot decode without crashing: fuzz_h5 made
 * damaged_layout.h5 from tensors.h5, and opening its datasets divides
 * by zero inside HDF5 1.10 (the layout of a chunked dataset decoded with
 * a chunk dimension of 0).  The read must fail with the file named, and
 * the process must live on to read a sound file afterwards.
 */
static void test_library_crash(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, NULL};
	const usc_tensor_spec any = {USC_F32, USC_TENSOR_ANY_SHAPE, NULL,
				     NULL};
	const char *names[] = {":/f32", ":/chunked", ":/nope"};
	char src[1100], path[1024];
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	fixture_path(path, sizeof path, "damaged_layout.h5");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(src, sizeof src, "%s%s", path, names[i]);
		usc_error_clear(&err);
		assert_int_equal(usc_tensor_read(src, &f32, 0, &t, &err),
				 USC_EPARSE);
		assert_null(t);
		assert_non_null(strstr(err.message, path));
		assert_non_null(strstr(err.message,
				       ": damaged HDF5 file: the HDF5 library"));
	}
	fixture_path(src, sizeof src, "tensors.h5");
	strncat(src, ":/chunked", sizeof src - strlen(src) - 1);
	assert_int_equal(usc_tensor_read(src, &any, 0, &t, &err), USC_OK);
	assert_int_equal(usc_tensor_count(t), 100);
	usc_tensor_destroy(t);
	assert_int_equal(usc__alloc_live(), 0);
}

static void test_truncated(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, NULL};
	char src[1100], prefix[1024];
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	/*
	 * Said in words, never in HDF5's own (which speak of eof and
	 * superblock addresses and differ between versions).
	 */
	fixture_path(prefix, sizeof prefix, "truncated.h5");
	snprintf(src, sizeof src, "%s:/f32", prefix);
	strncat(prefix,
		": not a readable HDF5 file: the file is damaged or truncated",
		sizeof prefix - strlen(prefix) - 1);
	assert_int_equal(usc_tensor_read(src, &f32, 0, &t, &err), USC_EIO);
	assert_null(t);
	assert_string_equal(err.message, prefix);
	assert_int_equal(usc__alloc_live(), 0);
}

/* Reads all of file p into memory (*size bytes). */
static unsigned char *slurp(const char *p, size_t *size)
{
	struct stat sb;
	unsigned char *buf;
	FILE *fp;

	assert_int_equal(stat(p, &sb), 0);
	*size = (size_t)sb.st_size;
	buf = malloc(*size);
	fp = fopen(p, "rb");
	assert_non_null(buf);
	assert_non_null(fp);
	assert_int_equal(fread(buf, 1, *size, fp), *size);
	fclose(fp);
	return buf;
}

static void spill(const char *p, const unsigned char *buf, size_t size)
{
	FILE *fp = fopen(p, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, size, fp), size);
	assert_int_equal(fclose(fp), 0);
}

/* A fresh scratch folder under $TMPDIR. */
static void scratch(char *dst, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dst, size, "%s/usc_h5_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dst));
}

/*
 * A damaged file is said to be damaged, not to lack the dataset: the
 * name "f32" in the root group's heap (the one place the file spells
 * it) has its first byte flipped, so the lookup fails while the group
 * still lists a member in its place.
 */
static void test_damaged_name(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, NULL};
	char dir[512], path[600], src[700], want[800];
	unsigned char *buf, *at;
	size_t size;
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	fixture_path(path, sizeof path, "tensors.h5");
	buf = slurp(path, &size);
	at = NULL;
	for (size_t i = 0; !at && i + 5 <= size; i++)
		if (memcmp(buf + i, "\0f32\0", 5) == 0)
			at = buf + i;
	assert_non_null(at);
	at[1] ^= 0xff;
	scratch(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/damaged.h5", dir);
	spill(path, buf, size);
	snprintf(src, sizeof src, "%s:/f32", path);
	assert_int_equal(usc_tensor_read(src, &f32, 0, &t, &err), USC_EIO);
	assert_null(t);
	snprintf(want, sizeof want,
		 "%s:/f32: cannot look it up: the file is damaged or "
		 "truncated",
		 path);
	assert_string_equal(err.message, want);
	free(buf);
	unlink(path);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

/*
 * Bytes of the file flipped one at a time (the first 64, then every
 * 97th unless USC_TEST_SCALE asks for more): reading /f32 either succeeds or fails
 * with a message naming the file, in words (no HDF5 internals, nothing
 * unprintable), and never claims the dataset is missing while listing
 * it.
 */
static void test_flipped(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, NULL};
	const char *scale = getenv("USC_TEST_SCALE");
	char dir[512], path[600], src[700];
	size_t size, step = 97, damaged = 0;
	unsigned char *buf;

	(void)state;
	if (scale && atoi(scale) > 1)
		step = atoi(scale) >= 97 ? 1 : 97 / (size_t)atoi(scale);
	fixture_path(path, sizeof path, "tensors.h5");
	buf = slurp(path, &size);
	scratch(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/flipped.h5", dir);
	snprintf(src, sizeof src, "%s:/f32", path);
	/* Every byte of the superblock's first 64, whose damage HDF5 sees
	 * for certain, then every step-th. */
	for (size_t off = 0; off < size; off += off < 64 ? 1 : step) {
		usc_tensor *t = NULL;
		usc_error err;

		buf[off] ^= 0xff;
		spill(path, buf, size);
		buf[off] ^= 0xff;
		if (usc_tensor_read(src, &f32, 0, &t, &err) == USC_OK) {
			usc_tensor_destroy(t);
			continue;
		}
		if (strncmp(err.message, path, strlen(path)) != 0 ||
		    strstr(err.message, " eof") ||
		    strstr(err.message, "addr") || strstr(err.message, "H5") ||
		    (strstr(err.message, "no such dataset") &&
		     (strstr(err.message, " f32,") ||
		      strstr(err.message, " f32)"))))
			fail_msg("offset %zu: \"%s\"", off, err.message);
		for (const char *c = err.message; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
				fail_msg("offset %zu: unprintable \"%s\"", off,
					 err.message);
		damaged += strstr(err.message, "damaged or truncated") != NULL;
	}
	print_message("%zu flips said damaged or truncated\n", damaged);
	assert_true(damaged > 0);
	free(buf);
	unlink(path);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

/* A directory or a FIFO where the HDF5 file should be. */
static void test_not_regular(void **state)
{
	static const int64_t d23[] = {2, 3};
	const usc_tensor_spec f32 = {USC_F32, 2, d23, NULL};
	char dir[512], path[600], src[700], want[800];
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	scratch(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/dir.h5", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(src, sizeof src, "%s:/f32", path);
	assert_int_equal(usc_tensor_read(src, &f32, 0, &t, &err), USC_EIO);
	/* The readers' one regular-file check (src/util/file.c) says it. */
	snprintf(want, sizeof want,
		 "%s: is a directory, not a regular file; ulpscope reads its "
		 "inputs from regular files only",
		 path);
	assert_string_equal(err.message, want);
	rmdir(path);
	/* Opening a FIFO would block until a writer came. */
	snprintf(path, sizeof path, "%s/fifo.h5", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(src, sizeof src, "%s:/f32", path);
	assert_int_equal(usc_tensor_read(src, &f32, 0, &t, &err), USC_EIO);
	snprintf(want, sizeof want,
		 "%s: is a FIFO (named pipe), not a regular file; ulpscope "
		 "reads its inputs from regular files only",
		 path);
	assert_string_equal(err.message, want);
	unlink(path);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

static void test_names(void **state)
{
	static const int64_t d2[] = {2};
	const usc_tensor_spec f64 = {USC_F64, 1, d2, NULL};
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	assert_int_equal(usc_tensor_read_h5("file.h5", &f64, &t, &err),
			 USC_EINVAL);
	assert_string_equal(err.message, "file.h5: expected FILE.h5:/DATASET");
	assert_int_equal(usc_tensor_read_h5(":/x", &f64, &t, &err), USC_EINVAL);
	assert_string_equal(err.message, ":/x: expected FILE.h5:/DATASET");
	/* Without the suffix, read_h5 takes the last ":/"; read does not. */
	assert_int_equal(usc_tensor_read_h5("dir:/file.dat:/x", &f64, &t, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message,
			    "dir:/file.dat: cannot open: No such file or "
			    "directory");
	assert_int_equal(usc_tensor_read("a.HDF5:/x/y", &f64, 0, &t, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message,
			    "a.HDF5: cannot open: No such file or directory");
	assert_int_equal(usc__alloc_live(), 0);
}

/* Every type written through the door reads back bit for bit. */
static void test_door_roundtrip(void **state)
{
	static const int64_t dims[] = {2, 3};
	char dir[512], path[1024], ds[64], src[1200];
	usc__h5_file *f = NULL;
	usc_tensor *in[USC_DTYPE_COUNT] = {NULL};
	usc_error err;

	(void)state;
	scratch_dir(dir, sizeof dir);
	assert_true(dir[0]);
	snprintf(path, sizeof path, "%s/rt.h5", dir);
	assert_int_equal(usc__h5_file_create(path, &f, &err), USC_OK);
	for (int dt = 1; dt < USC_DTYPE_COUNT; dt++) {
		const usc_format *fm = usc_format_of((usc_dtype)dt);
		size_t rank = dt % 3;

		if (fm->container_bytes == 0)
			continue;
		assert_int_equal(usc_tensor_create((usc_dtype)dt, rank, dims,
						   &in[dt], &err),
				 USC_OK);
		for (size_t i = 0; i < usc_tensor_nbytes(in[dt]); i++)
			((unsigned char *)usc_tensor_data(in[dt]))[i] =
				(unsigned char)(i * 29 + (size_t)dt);
		/* Sub-byte and pred containers keep their high bits clear. */
		if (fm->bits < 8)
			for (size_t i = 0; i < usc_tensor_nbytes(in[dt]); i++)
				((unsigned char *)usc_tensor_data(in[dt]))[i] &=
					(unsigned char)((1u << fm->bits) - 1);
		snprintf(ds, sizeof ds, "/by_type/%s", fm->name);
		if (usc__h5_write_array(f, ds, (usc_dtype)dt, rank, dims,
					usc_tensor_cdata(in[dt]),
					&err) != USC_OK)
			fail_msg("%s", err.message);
	}
	assert_int_equal(usc__h5_write_array(f, "/by_type/f32", USC_F32, 0,
					     NULL, "\0\0\0\0", &err),
			 USC_EIO);
	assert_int_equal(usc__h5_file_close(f, &err), USC_OK);
	for (int dt = 1; dt < USC_DTYPE_COUNT; dt++) {
		usc_tensor *out = NULL;
		usc_tensor_spec spec;

		if (!in[dt])
			continue;
		spec = usc_tensor_spec_of(in[dt]);
		snprintf(src, sizeof src, "%s:/by_type/%s", path,
			 usc_dtype_name((usc_dtype)dt));
		if (usc_tensor_read(src, &spec, 0, &out, &err) != USC_OK)
			fail_msg("%s", err.message);
		assert_true(usc_tensor_equal(in[dt], out));
		usc_tensor_destroy(out);
		usc_tensor_destroy(in[dt]);
	}
	unlink(path);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_library_crash),
		cmocka_unit_test(test_damaged_name),
		cmocka_unit_test(test_flipped),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_door_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
