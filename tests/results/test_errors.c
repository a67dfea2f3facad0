/*
 * What goes wrong: atomicity (abort, a crash before close, a file without
 * "complete"), corrupt and truncated files, a foreign schema version,
 * missing or mistyped datasets, and bad input to the writer.  Messages are
 * compared exactly, or by their exact prefix where the rest is HDF5's own
 * wording.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "store/h5_door.h"
#include "results/results_fixture.h"

static char scratch[512];
static char path[600];
static fixture fx;

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "%s/r.h5", scratch);
	if (fixture_build(&fx) != 0 || fixture_write(&fx, path, NULL) != USC_OK)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_free(&fx);
	unlink(path);
	return 0;
}

static bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

/* Opens path and reads every kernel and output; the first failure. */
static usc_status read_all(const char *p, usc_error *err)
{
	usc_results_reader *r = NULL;
	usc_status st = usc_results_open(p, &r, err);

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

static void expect_exact(usc_status code, const char *want)
{
	usc_error err;
	usc_status st = read_all(path, &err);

	if (st != code || strcmp(err.message, want) != 0)
		fail_msg("got %s \"%s\"\nwant %s \"%s\"", usc_status_name(st),
			 err.message, usc_status_name(code), want);
}

/* Opens the file with the door to damage it on purpose. */
static usc__h5_file *door(void)
{
	usc__h5_file *f = NULL;

	assert_int_equal(usc__h5_file_open_rdwr(path, &f, NULL), USC_OK);
	return f;
}

static void test_abort(void **state)
{
	char other[700];
	usc_results *w = NULL;
	usc_error err;

	(void)state;
	snprintf(other, sizeof other, "%s/new.h5", scratch);
	assert_int_equal(usc_results_create(other, &w, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &fx.k1, &err), USC_OK);
	/* Until close, only the temporary file exists. */
	assert_true(exists(usc_results_temp_path(w)));
	assert_false(exists(other));
	usc_results_abort(w);
	assert_false(exists(other));
	{
		/* Nothing named new.h5.tmp.* is left either. */
		char tmp[800];

		snprintf(tmp, sizeof tmp, "%s.tmp.%ld", other, (long)getpid());
		assert_false(exists(tmp));
	}

	/* A writer over an existing file leaves it alone until close. */
	assert_int_equal(usc_results_create(path, &w, &err), USC_OK);
	assert_int_equal(usc_results_add_kernel(w, &fx.k2, &err), USC_OK);
	usc_results_abort(w);
	assert_int_equal(read_all(path, &err), USC_OK);

	/* So does an append that is given up. */
	assert_int_equal(usc_results_open_append(path, &w, &err), USC_OK);
	usc_results_abort(w);
	assert_int_equal(read_all(path, &err), USC_OK);
}

/*
 * A writer that dies before close leaves its temporary file, and that
 * file is never taken for a whole one.
 */
static void test_crash(void **state)
{
	char other[700], tmp[800], want[900];
	usc_error err;
	pid_t pid;
	int status;

	(void)state;
	snprintf(other, sizeof other, "%s/crash.h5", scratch);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usc_results *w = NULL;

		if (usc_results_create(other, &w, NULL) == USC_OK &&
		    usc_results_add_kernel(w, &fx.k1, NULL) == USC_OK)
			_exit(0); /* dies without closing anything */
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(exists(other));
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", other, (long)pid);
	assert_true(exists(tmp));
	{
		usc_results_reader *r = NULL;
		usc_status st = usc_results_open(tmp, &r, &err);

		assert_int_not_equal(st, USC_OK);
		assert_null(r);
		/* The header never reached the disk whole: HDF5 or the
		 * root check refuses it, naming the file. */
		snprintf(want, sizeof want, "%s:", tmp);
		print_message("%s\n", err.message);
		assert_memory_equal(err.message, want, strlen(want));
	}
	unlink(tmp);
}

static void test_incomplete(void **state)
{
	char want[800];
	usc__h5_file *f;

	(void)state;
	f = door();
	assert_int_equal(usc__h5_attr_delete(f, "/", "complete", NULL), USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s: incomplete result file: its writer did not finish (no "
		 "'complete' attribute)",
		 path);
	expect_exact(USC_EPARSE, want);
	/* Appending to it is refused the same way. */
	{
		usc_results *w = (usc_results *)1;
		usc_error err;

		assert_int_equal(usc_results_open_append(path, &w, &err),
				 USC_EPARSE);
		assert_null(w);
		assert_string_equal(err.message, want);
	}
}

static void test_schema(void **state)
{
	char want[800];
	usc__h5_file *f;

	(void)state;
	f = door();
	assert_int_equal(usc__h5_attr_set_int(f, "/", "schema_version", 2, NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s: result schema version 2 is not supported (this "
		 "ulpscope reads version 1)",
		 path);
	expect_exact(USC_EUNSUPPORTED, want);

	/* An HDF5 file that is not a result file at all. */
	f = door();
	assert_int_equal(usc__h5_attr_delete(f, "/", "schema_version", NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s: not a ulpscope result file (no schema_version "
		 "attribute)",
		 path);
	expect_exact(USC_EPARSE, want);
}

static void test_not_hdf5(void **state)
{
	char want[800];
	FILE *fp;

	(void)state;
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fputs("kernel,ulp\nfusion.1,0.5\n", fp);
	fclose(fp);
	snprintf(want, sizeof want, "%s: not an HDF5 file", path);
	expect_exact(USC_EPARSE, want);
	unlink(path);
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory",
		 path);
	expect_exact(USC_ENOTFOUND, want);
}

static void test_truncated(void **state)
{
	struct stat sb;
	char want[800];

	(void)state;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size / 2), 0);
	/* Said in words, without HDF5's own description (addresses, eof). */
	snprintf(want, sizeof want,
		 "%s: not a readable HDF5 file: the file is damaged or "
		 "truncated",
		 path);
	expect_exact(USC_EIO, want);
	assert_int_equal(truncate(path, 40), 0);
	expect_exact(USC_EIO, want);
	/* Shorter than the superblock's signature. */
	assert_int_equal(truncate(path, 4), 0);
	snprintf(want, sizeof want, "%s: not an HDF5 file", path);
	expect_exact(USC_EPARSE, want);
}

/* Reads the file into memory. */
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
	fclose(fp);
}

/*
 * Flips bytes all over the file, one at a time.  Every read must either
 * succeed (the byte was raw data of a small contiguous dataset, which
 * carries no checksum, or slack space) or fail with a message that starts
 * with the file's name; never crash.  The chunked datasets and all the
 * metadata carry checksums, so most flips are caught.
 */
static void test_flipped(void **state)
{
	size_t size, caught = 0, tried = 0;
	unsigned char *orig;
	char want[800];
	usc_error err;

	(void)state;
	/* Every 199th byte by default; USC_TEST_SCALE=N flips N times as
	 * many (every byte at 199). */
	const char *scale = getenv("USC_TEST_SCALE");
	size_t step = 199;

	if (scale && atoi(scale) > 1)
		step = atoi(scale) >= 199 ? 1 : 199 / (size_t)atoi(scale);
	orig = slurp(path, &size);
	snprintf(want, sizeof want, "%s:", path);
	for (size_t off = 0; off < size; off += step, tried++) {
		orig[off] ^= 0xff;
		spill(path, orig, size);
		orig[off] ^= 0xff;
		if (read_all(path, &err) == USC_OK)
			continue;
		caught++;
		if (strncmp(err.message, want, strlen(want)) != 0)
			fail_msg("offset %zu: \"%s\"", off, err.message);
	}
	/* The signature's first byte: the file is no longer HDF5. */
	orig[0] ^= 0xff;
	spill(path, orig, size);
	snprintf(want, sizeof want, "%s: not an HDF5 file", path);
	expect_exact(USC_EPARSE, want);
	free(orig);
	/*
	 * About half the file is raw data of contiguous datasets and free
	 * space, where a flip goes unnoticed (HDF5 checksums metadata and
	 * chunks only); a quarter is a safe floor.
	 */
	print_message("flipped %zu bytes, %zu caught\n", tried, caught);
	assert_true(caught > tried / 4);
}

static void test_missing(void **state)
{
	char want[1200];
	usc__h5_file *f;

	(void)state;
	f = door();
	assert_int_equal(usc__h5_delete(f, "/kernels/fusion.1/outputs/0/oracle_rad",
					NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s:/kernels/fusion.1/outputs/0/oracle_rad: no such dataset "
		 "(/kernels/fusion.1/outputs/0 holds: class, device, "
		 "envelope_flags, envelope_hi, envelope_lo, oracle_mid, "
		 "reference, ulp_error_oracle, ulp_error_reference, "
		 "undecided)",
		 path);
	expect_exact(USC_ENOTFOUND, want);
}

static void test_mistyped(void **state)
{
	static const int64_t d24[] = {24};
	static const int64_t d234[] = {2, 3, 4};
	double zeros[24] = {0};
	char want[800];
	usc__h5_file *f;
	const char *u = "/kernels/fusion.1/outputs/0/undecided";
	const char *m = "/kernels/fusion.1/outputs/0/oracle_mid";

	(void)state;
	f = door();
	assert_int_equal(usc__h5_delete(f, u, NULL), USC_OK);
	assert_int_equal(usc__h5_write_numeric(f, u, USC__H5_STORE_F64, 3, d234,
					       zeros, NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s:%s: stored as HDF5 64-bit float (11 exponent bits, 52 "
		 "mantissa bits), expected little-endian unsigned 8-bit "
		 "integers",
		 path, u);
	expect_exact(USC_EPARSE, want);

	f = door();
	assert_int_equal(usc__h5_delete(f, m, NULL), USC_OK);
	assert_int_equal(usc__h5_write_numeric(f, m, USC__H5_STORE_F64, 1, d24,
					       zeros, NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s:%s: shape [24] differs from the device dataset's [2,3,4]",
		 path, m);
	expect_exact(USC_EPARSE, want);

	f = door();
	assert_int_equal(usc__h5_attr_delete(f, "/kernels/fusion.1", "verdict",
					     NULL),
			 USC_OK);
	assert_int_equal(usc__h5_attr_set_string(
				 f, "/kernels/fusion.1/outputs/0/device",
				 "dtype", "f16", NULL),
			 USC_OK);
	assert_int_equal(usc__h5_file_close(f, NULL), USC_OK);
	snprintf(want, sizeof want,
		 "%s:/kernels/fusion.1: no attribute 'verdict'", path);
	expect_exact(USC_ENOTFOUND, want);
	{
		usc_results_reader *r = NULL;
		usc_results_output_data *o = NULL;
		usc_error err;

		assert_int_equal(usc_results_open(path, &r, &err), USC_OK);
		assert_int_equal(usc_results_read_output(r, "fusion.1", 0, &o,
							 &err),
				 USC_EPARSE);
		snprintf(want, sizeof want,
			 "%s:/kernels/fusion.1/outputs/0/device: dtype 'f16' "
			 "differs from the output's 'bf16'",
			 path);
		assert_string_equal(err.message, want);
		usc_results_reader_close(r);
	}
}

static void test_bad_input(void **state)
{
	static const char *const bad[] = {"", ".", "a/b"};
	char other[700], want[900];
	usc_results *w = NULL;
	usc_results_kernel k = fx.k1;
	usc_results_output outs[2] = {fx.out[0], fx.out[1]};
	usc_tensor *c = NULL;
	usc_error err;

	(void)state;
	snprintf(other, sizeof other, "%s/bad.h5", scratch);
	assert_int_equal(usc_results_create(other, &w, &err), USC_OK);
	for (size_t i = 0; i < USC__ARRAY_LEN(bad); i++) {
		k.name = bad[i];
		assert_int_equal(usc_results_add_kernel(w, &k, &err),
				 USC_EINVAL);
		snprintf(want, sizeof want,
			 "%s: kernel name '%s' is not allowed (it must be "
			 "non-empty, not \".\", without '/')",
			 other, bad[i]);
		assert_string_equal(err.message, want);
	}
	k.name = "k";
	k.outputs = outs;
	outs[1].reference = fx.reference[0];
	assert_int_equal(usc_results_add_kernel(w, &k, &err), USC_EINVAL);
	snprintf(want, sizeof want,
		 "%s: kernel 'k', output 1: the reference is bf16[2,3,4] but "
		 "the device output is f8e4m3fn[]",
		 other);
	assert_string_equal(err.message, want);
	outs[1] = fx.out[1];
	outs[1].oracle_rad = NULL;
	assert_int_equal(usc_results_add_kernel(w, &k, &err), USC_EINVAL);
	snprintf(want, sizeof want,
		 "%s: kernel 'k', output 1: the oracle_rad array is missing",
		 other);
	assert_string_equal(err.message, want);
	assert_int_equal(usc_tensor_create(USC_C64, 0, NULL, &c, NULL), USC_OK);
	outs[1] = fx.out[1];
	outs[1].device = outs[1].reference = c;
	assert_int_equal(usc_results_add_kernel(w, &k, &err),
			 USC_EUNSUPPORTED);
	snprintf(want, sizeof want,
		 "%s: kernel 'k', output 1: outputs of type c64 are not "
		 "supported by result schema version 1",
		 other);
	assert_string_equal(err.message, want);
	usc_tensor_destroy(c);
	/* None of that left a trace: the good kernel goes in as "k". */
	outs[1] = fx.out[1];
	assert_int_equal(usc_results_add_kernel(w, &k, &err), USC_OK);
	assert_int_equal(usc_results_close(w, &err), USC_OK);
	{
		usc_results_reader *r = NULL;

		assert_int_equal(usc_results_open(other, &r, &err), USC_OK);
		assert_int_equal(usc_results_kernel_count(r), 1);
		assert_string_equal(usc_results_kernel_name(r, 0), "k");
		usc_results_reader_close(r);
	}
	unlink(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_incomplete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_hdf5, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mistyped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup,
						teardown),
	};
	int rc;

	fixture_scratch(scratch, sizeof scratch);
	if (!scratch[0])
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(scratch);
	return rc;
}
