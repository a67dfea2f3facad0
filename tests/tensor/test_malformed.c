/*
 * Malformed and mismatched inputs: each one must fail with exactly the
 * message written here (docs/tensors.md lists them), never crash, and
 * leave nothing allocated.  The .npy inputs are built from byte strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/tensor.h"
#include "tensor/tensor_test_util.h"

static const int64_t d23[] = {2, 3};

/* A .npy image: magic, version major.0, header length, header, data. */
static size_t npy(unsigned char *buf, unsigned major, const char *header,
		  const void *data, size_t dlen)
{
	size_t hlen = strlen(header), pre = major == 1 ? 10 : 12;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		buf[8 + i] = (unsigned char)(hlen >> (8 * i));
	memcpy(buf + pre, header, hlen);
	memcpy(buf + pre + hlen, data, dlen);
	return pre + hlen + dlen;
}

/* Reads buf as in0.npy against spec and checks the code and message. */
static void expect_mem(const void *buf, size_t size,
		       const usc_tensor_spec *spec, usc_status code,
		       const char *message)
{
	usc_tensor *t = (usc_tensor *)1;
	usc_error err;

	usc_error_clear(&err);
	assert_int_equal(usc_tensor_read_npy_mem(buf, size, "in0.npy", spec, &t,
						 &err),
			 code);
	assert_null(t);
	assert_string_equal(err.message, message);
	assert_int_equal(usc__alloc_live(), 0);
}

static const usc_tensor_spec param0 = {USC_F32, 2, d23,
				       "parameter 0 of the kernel"};

/* A header of f32[2,3] with one part changed. */
#define HDR(descr, fortran, shape)                                           \
	"{'descr': '" descr "', 'fortran_order': " fortran                  \
	", 'shape': " shape ", }\n"

static unsigned char data24[24];

static void test_preamble(void **state)
{
	unsigned char b[256];
	size_t n;

	(void)state;
	expect_mem("", 0, &param0, USC_EPARSE,
		   "in0.npy: truncated: file has 0 bytes, the .npy preamble "
		   "needs at least 10");
	expect_mem("\x93NUM", 4, &param0, USC_EPARSE,
		   "in0.npy: truncated: file has 4 bytes, the .npy preamble "
		   "needs at least 10");
	expect_mem("PK\x03\x04 not numpy at all", 22, &param0, USC_EPARSE,
		   "in0.npy: not a .npy file (bad magic)");
	n = npy(b, 4, HDR("<f4", "False", "(2, 3)"), data24, 24);
	expect_mem(b, n, &param0, USC_EUNSUPPORTED,
		   "in0.npy: unsupported .npy format version 4.0");
	b[6] = 1;
	b[7] = 1;
	expect_mem(b, n, &param0, USC_EUNSUPPORTED,
		   "in0.npy: unsupported .npy format version 1.1");
	n = npy(b, 2, HDR("<f4", "False", "(2, 3)"), data24, 24);
	expect_mem(b, 11, &param0, USC_EPARSE,
		   "in0.npy: truncated: file has 11 bytes, the .npy preamble "
		   "needs 12");
	/* The header length says 200; 20 bytes follow. */
	n = npy(b, 1, "{'descr': '<f4', 'fo", "", 0);
	b[8] = 200;
	expect_mem(b, n, &param0, USC_EPARSE,
		   "in0.npy: truncated: header says 200 bytes of header, file "
		   "has 20");
	/* Version 2.0 with a 4 GiB header length. */
	n = npy(b, 2, "{}", "", 0);
	b[11] = 0xff;
	expect_mem(b, n, &param0, USC_EPARSE,
		   "in0.npy: header of 4278190082 bytes is too long (limit "
		   "1048576)");
}

static void test_header_syntax(void **state)
{
	static const struct {
		const char *header;
		usc_status code;
		const char *message;
	} cases[] = {
		{"['descr', '<f4']\n", USC_EPARSE,
		 "in0.npy: bad .npy header: expected '{' at column 1"},
		{"{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}",
		 USC_EPARSE,
		 "in0.npy: bad .npy header: expected ':' at column 10"},
		{"{'descr': '<f4', 'fortran_order': False}\n", USC_EPARSE,
		 "in0.npy: bad .npy header: missing key 'shape'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "
		 "'extra': 1}",
		 USC_EPARSE,
		 "in0.npy: bad .npy header: unknown key 'extra' at column 59"},
		{"{'descr': '<f4', 'descr': '<f4'}", USC_EPARSE,
		 "in0.npy: bad .npy header: duplicate key 'descr' at column "
		 "18"},
		{HDR("<f4", "False", "(-2, 3)"), USC_EPARSE,
		 "in0.npy: bad .npy header: negative dimension at column 52"},
		{HDR("<f4", "False", "(6)"), USC_EPARSE,
		 "in0.npy: bad .npy header: shape (n) is not a tuple, write "
		 "(n,) at column 53"},
		{HDR("<f4", "False", "[2, 3]"), USC_EPARSE,
		 "in0.npy: bad .npy header: shape is not a tuple at column 51"},
		{HDR("<f4", "False", "(2 3)"), USC_EPARSE,
		 "in0.npy: bad .npy header: expected ',' or ')' in shape at "
		 "column 54"},
		{HDR("<f4", "0", "(2, 3)"), USC_EPARSE,
		 "in0.npy: bad .npy header: fortran_order is not True or False "
		 "at column 35"},
		{HDR("<f4", "Falsey", "(2, 3)"), USC_EPARSE,
		 "in0.npy: bad .npy header: fortran_order is not True or False "
		 "at column 35"},
		{"{'descr': '<f4, 'fortran_order': False}", USC_EPARSE,
		 "in0.npy: bad .npy header: expected ',' or '}' at column 18"},
		{"{'descr': '<f4", USC_EPARSE,
		 "in0.npy: bad .npy header: unterminated string at column 15"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x",
		 USC_EPARSE,
		 "in0.npy: bad .npy header: text after the dict at column 59"},
		{HDR("<f4", "False", "(99999999999999999999,)"), USC_EPARSE,
		 "in0.npy: bad .npy header: dimension too large at column 52"},
		{"{'descr': [('a', '<f4')], 'fortran_order': False, "
		 "'shape': (2, 3)}",
		 USC_EUNSUPPORTED, "in0.npy: structured dtypes are not supported"},
		{HDR("<q9", "False", "(2, 3)"), USC_EUNSUPPORTED,
		 "in0.npy: unknown dtype descr '<q9'"},
		{HDR("<f3", "False", "(2, 3)"), USC_EUNSUPPORTED,
		 "in0.npy: unknown dtype descr '<f3'"},
		{HDR("<U4", "False", "(2, 3)"), USC_EUNSUPPORTED,
		 "in0.npy: unknown dtype descr '<U4'"},
		{HDR("|O", "False", "(2, 3)"), USC_EUNSUPPORTED,
		 "in0.npy: object arrays are not supported (descr |O)"},
		{HDR("*f4", "False", "(2, 3)"), USC_EUNSUPPORTED,
		 "in0.npy: unknown dtype descr '*f4'"},
	};
	unsigned char b[512];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t n = npy(b, 1, cases[i].header, data24, 24);

		expect_mem(b, n, &param0, cases[i].code, cases[i].message);
	}
	/* A NUL inside the header. */
	{
		size_t n = npy(b, 1, HDR("<f4", "False", "(2, 3)"), data24, 24);

		b[14] = '\0';
		expect_mem(b, n, &param0, USC_EPARSE,
			   "in0.npy: bad .npy header: NUL byte in header");
	}
}

static void test_data_and_match(void **state)
{
	static const int64_t d1[] = {1}, d2[] = {2}, big[] = {1, 2, 3};
	const usc_tensor_spec bf16 = {USC_BF16, 2, d23,
				      "parameter 1 of the kernel"};
	const usc_tensor_spec s8 = {USC_S8, 2, d23, NULL};
	const usc_tensor_spec s32 = {USC_S32, 2, d23, NULL};
	const usc_tensor_spec scalar = {USC_F32, 0, NULL, "output 0"};
	const usc_tensor_spec s4 = {USC_S4, 1, d2, NULL};
	const usc_tensor_spec pred = {USC_PRED, 1, d2, NULL};
	const usc_tensor_spec any = {USC_F32, USC_TENSOR_ANY_SHAPE, NULL,
				     NULL};
	unsigned char b[512];
	size_t n;

	(void)state;
	n = npy(b, 1, HDR("<f4", "False", "(2, 3)"), data24, 20);
	expect_mem(b, n, &param0, USC_EPARSE,
		   "in0.npy: truncated: header says 24 bytes of data, file "
		   "has 20");
	n = npy(b, 3, HDR("<f4", "False", "(2, 3)"), data24, 24);
	b[n++] = 0;
	expect_mem(b, n, &param0, USC_EPARSE,
		   "in0.npy: trailing data: header says 24 bytes of data, "
		   "file has 25");
	n = npy(b, 1, HDR("<f4", "False", "(4, 3)"), data24, 24);
	expect_mem(b, n, &param0, USC_EINVAL,
		   "in0.npy: shape (4, 3) does not match parameter 0 of the "
		   "kernel, f32[2,3]");
	n = npy(b, 1, HDR("<f4", "False", "(1,)"), data24, 4);
	expect_mem(b, n, &scalar, USC_EINVAL,
		   "in0.npy: shape (1,) does not match output 0, f32[]");
	(void)d1;
	n = npy(b, 1, HDR("<f4", "False", "()"), data24, 4);
	expect_mem(b, n, &(usc_tensor_spec){USC_F32, 1, d1, NULL}, USC_EINVAL,
		   "in0.npy: shape () does not match the expected tensor, "
		   "f32[1]");
	n = npy(b, 1, HDR("<f4", "False", "(1, 2, 3)"), data24, 24);
	expect_mem(b, n, &param0, USC_EINVAL,
		   "in0.npy: shape (1, 2, 3) does not match parameter 0 of "
		   "the kernel, f32[2,3]");
	(void)big;
	n = npy(b, 1, HDR("<f2", "False", "(2, 3)"), data24, 12);
	expect_mem(b, n, &bf16, USC_EINVAL,
		   "in0.npy: dtype <f2 does not match parameter 1 of the "
		   "kernel, bf16[2,3]: a float file must hold the same float "
		   "type");
	n = npy(b, 1, HDR("<u4", "False", "(2, 3)"), data24, 24);
	expect_mem(b, n, &bf16, USC_EINVAL,
		   "in0.npy: dtype <u4 does not match parameter 1 of the "
		   "kernel, bf16[2,3]: element sizes differ (4 bytes vs 2)");
	n = npy(b, 1, HDR("|b1", "False", "(2, 3)"), data24, 6);
	expect_mem(b, n, &s8, USC_EINVAL,
		   "in0.npy: dtype |b1 does not match the expected tensor, "
		   "s8[2,3]: a bool file holds pred only");
	n = npy(b, 1, HDR("<f4", "False", "(2, 3)"), data24, 24);
	expect_mem(b, n, &s32, USC_EINVAL,
		   "in0.npy: dtype <f4 does not match the expected tensor, "
		   "s32[2,3]: a float file cannot hold a non-float type");
	n = npy(b, 1, HDR("<c8", "False", "(2, 3)"), data24, 24);
	expect_mem(b, n, &(usc_tensor_spec){USC_F64, 2, d23, NULL}, USC_EINVAL,
		   "in0.npy: dtype <c8 does not match the expected tensor, "
		   "f64[2,3]: a complex file holds complex types only");
	n = npy(b, 1, HDR("<f8", "False", "(2, 3)"), data24, 24);
	expect_mem(b, n, &param0, USC_EINVAL,
		   "in0.npy: dtype <f8 does not match parameter 0 of the "
		   "kernel, f32[2,3]: element sizes differ (8 bytes vs 4)");
	/* 0x35 has high bits that are neither zero nor a sign extension. */
	n = npy(b, 1, HDR("|u1", "False", "(2,)"), "\x0e\x35", 2);
	expect_mem(b, n, &s4, USC_EINVAL,
		   "in0.npy: element 1 holds 0x35, which is not an encoding "
		   "of s4");
	n = npy(b, 1, HDR("|u1", "False", "(2,)"), "\x01\x02", 2);
	expect_mem(b, n, &pred, USC_EINVAL,
		   "in0.npy: element 1 holds 0x02, which is not an encoding "
		   "of pred");
	n = npy(b, 1,
		HDR("<f4", "False", "(4294967296, 4294967296, 16)"), "", 0);
	expect_mem(b, n, &any, USC_ERANGE,
		   "in0.npy: shape (4294967296, 4294967296, 16) is too large");
	expect_mem(b, n, NULL, USC_EINVAL, "tensor reader: spec is NULL");
	expect_mem(b, n, &(usc_tensor_spec){USC_TOKEN, 0, NULL, NULL},
		   USC_EINVAL, "tensor reader: type token has no elements");
}

static void test_files(void **state)
{
	static const int64_t d44[] = {4, 4};
	const usc_tensor_spec spec = {USC_F32, 2, d44,
				      "parameter 0 of the kernel"};
	char dir[512], path[1024], msg[2048];
	usc_tensor *t = NULL;
	usc_error err;
	FILE *fp;

	(void)state;
	scratch_dir(dir, sizeof dir);
	assert_true(dir[0]);
	snprintf(path, sizeof path, "%s/in0.bin", dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fwrite(data24, 1, 24, fp);
	fwrite(data24, 1, 24, fp);
	fwrite(data24, 1, 12, fp);
	fclose(fp);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err),
			 USC_EINVAL);
	snprintf(msg, sizeof msg,
		 "%s: raw file has 60 bytes; parameter 0 of the kernel, "
		 "f32[4,4], takes 64",
		 path);
	assert_string_equal(err.message, msg);
	assert_int_equal(usc_tensor_read(path, &spec, 0, &t, &err), USC_EINVAL);
	snprintf(msg, sizeof msg,
		 "%s: not a known tensor source: name a .npy file, "
		 "FILE.h5:/DATASET, or read it as raw",
		 path);
	assert_string_equal(err.message, msg);
	unlink(path);

	snprintf(path, sizeof path, "%s/missing.npy", dir);
	assert_int_equal(usc_tensor_read(path, &spec, 0, &t, &err),
			 USC_ENOTFOUND);
	snprintf(msg, sizeof msg, "%s: cannot open: No such file or directory",
		 path);
	assert_string_equal(err.message, msg);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err),
			 USC_ENOTFOUND);
	assert_string_equal(err.message, msg);

	/* A file named .npy that is not one. */
	snprintf(path, sizeof path, "%s/in0.npy", dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fputs("a,b,c\n1,2,3\n", fp);
	fclose(fp);
	assert_int_equal(usc_tensor_read(path, &spec, 0, &t, &err),
			 USC_EPARSE);
	snprintf(msg, sizeof msg, "%s: not a .npy file (bad magic)", path);
	assert_string_equal(err.message, msg);
	unlink(path);

	/* The writer reports a folder it cannot write to. */
	assert_int_equal(usc_tensor_create(USC_F32, 2, d44, &t, &err), USC_OK);
	snprintf(path, sizeof path, "%s/no/such/dir/out.npy", dir);
	assert_int_equal(usc_tensor_write_npy(t, path, &err), USC_EIO);
	snprintf(msg, sizeof msg,
		 "%s.tmp: cannot create: No such file or directory", path);
	assert_string_equal(err.message, msg);
	usc_tensor_destroy(t);
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preamble),
		cmocka_unit_test(test_header_syntax),
		cmocka_unit_test(test_data_and_match),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
