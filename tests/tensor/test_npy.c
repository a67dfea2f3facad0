/*
 * Reading and writing .npy, raw and HDF5 tensors against fixtures written
 * by numpy, ml_dtypes and h5py (tools/gen_tensor_fixtures.py).  Expected
 * bits come from expect.txt (numpy's own view of each array) or are
 * written here by hand; none comes from the code under test.
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

/* The source string for a fixture named in expect.txt. */
static void source_of(const char *name, char *dst, size_t size)
{
	const char *colon = strchr(name, ':');
	char file[256];

	if (!colon) {
		fixture_path(dst, size, name);
		return;
	}
	snprintf(file, sizeof file, "%.*s", (int)(colon - name), name);
	fixture_path(dst, size, file);
	strncat(dst, colon, size - strlen(dst) - 1);
}

static usc_tensor *read_block(const expect_block *b)
{
	char src[1024];
	usc_tensor_spec spec = {b->dtype, b->rank, b->dims, NULL};
	usc_tensor *t = NULL;
	usc_error err;

	source_of(b->source, src, sizeof src);
	usc_error_clear(&err);
	if (usc_tensor_read(src, &spec, 0, &t, &err) != USC_OK)
		fail_msg("%s: %s", b->source, err.message);
	return t;
}

/* The hex of element i, formatted the way the generator writes it. */
static void hex_of(const usc_tensor *t, uint64_t i, char *buf, size_t size)
{
	const usc_format *f = usc_format_of(usc_tensor_dtype(t));
	uint64_t re, im, bits;

	if (f->kind == USC_KIND_COMPLEX) {
		int w = f->container_bytes;

		assert_int_equal(usc_tensor_get_complex_bits(t, i, &re, &im),
				 USC_OK);
		snprintf(buf, size, "%0*llx:%0*llx", w, (unsigned long long)re,
			 w, (unsigned long long)im);
		return;
	}
	assert_int_equal(usc_tensor_get_bits(t, i, &bits), USC_OK);
	snprintf(buf, size, "%0*llx", 2 * f->container_bytes,
		 (unsigned long long)bits);
}

/* Every fixture reads back as the bits numpy reported for it. */
static void test_fixtures(void **state)
{
	expect_block *b = NULL;
	size_t n = expect_load(&b);
	const char *wdir = getenv("USC_TENSOR_WRITE_DIR");

	(void)state;
	assert_true(n >= 60);
	for (size_t k = 0; k < n; k++) {
		usc_tensor *t = read_block(&b[k]);

		assert_int_equal(usc_tensor_dtype(t), b[k].dtype);
		assert_int_equal(usc_tensor_rank(t), b[k].rank);
		for (size_t j = 0; j < b[k].rank; j++)
			assert_int_equal(usc_tensor_dims(t)[j], b[k].dims[j]);
		if (usc_tensor_count(t) != b[k].count)
			fail_msg("%s: %llu elements, expected %zu",
				 b[k].source,
				 (unsigned long long)usc_tensor_count(t),
				 b[k].count);
		for (uint64_t i = 0; i < b[k].count; i++) {
			char hex[80];

			hex_of(t, i, hex, sizeof hex);
			if (strcmp(hex, b[k].bits[i]) != 0)
				fail_msg("%s: element %llu is %s, numpy says %s",
					 b[k].source, (unsigned long long)i,
					 hex, b[k].bits[i]);
		}
		/* The developer check of the writer (docs/tensors.md). */
		if (wdir && !strchr(b[k].source, ':')) {
			char out[1024];
			usc_error err;

			snprintf(out, sizeof out, "%s/%s", wdir, b[k].source);
			if (usc_tensor_write_npy(t, out, &err) != USC_OK)
				fail_msg("%s", err.message);
		}
		usc_tensor_destroy(t);
	}
	expect_free(b, n);
}

static usc_tensor *read_fixture(const char *name, usc_dtype dt, size_t rank,
				const int64_t *dims)
{
	char path[1024];
	usc_tensor_spec spec = {dt, rank, dims, NULL};
	usc_tensor *t = NULL;
	usc_error err;

	fixture_path(path, sizeof path, name);
	if (usc_tensor_read_npy(path, &spec, &t, &err) != USC_OK)
		fail_msg("%s", err.message);
	return t;
}

static uint64_t bits_at(const usc_tensor *t, uint64_t i)
{
	uint64_t bits = 0;

	assert_int_equal(usc_tensor_get_bits(t, i, &bits), USC_OK);
	return bits;
}

/* Hand-derived encodings (IEEE 754, OCP FP8, ml_dtypes' int4 layout). */
static void test_hand_written(void **state)
{
	static const int64_t d23[] = {2, 3}, d22[] = {2, 2}, d16[] = {16},
			     d9[] = {9}, d34[] = {3, 4}, d3[] = {3},
			     d2[] = {2}, d1[] = {1};
	usc_tensor *t;
	double v, re, im;

	(void)state;
	t = read_fixture("f32_v1.npy", USC_F32, 2, d23);
	assert_int_equal(bits_at(t, 0), 0x3f800000); /* 1.0 */
	assert_int_equal(bits_at(t, 1), 0xc0200000); /* -2.5 */
	assert_int_equal(bits_at(t, 3), 0x7f800000); /* +inf */
	assert_int_equal(bits_at(t, 5), 0x80000000); /* -0.0 */
	assert_int_equal(usc_tensor_get_double(t, 1, &v), USC_OK);
	assert_true(v == -2.5);
	usc_tensor_destroy(t);

	t = read_fixture("bf16.npy", USC_BF16, 2, d22);
	assert_int_equal(bits_at(t, 0), 0x3f80);
	assert_int_equal(bits_at(t, 1), 0xc049); /* -3.140625 */
	assert_int_equal(bits_at(t, 3), 0x0001); /* 2^-133 */
	assert_int_equal(usc_tensor_get_double(t, 3, &v), USC_OK);
	assert_true(v == 0x1p-133);
	usc_tensor_destroy(t);

	/* -8..7 as ml_dtypes stores int4: the low nibble, zeros above. */
	t = read_fixture("s4.npy", USC_S4, 1, d16);
	assert_int_equal(bits_at(t, 0), 0x8);
	assert_int_equal(bits_at(t, 6), 0xe);
	assert_int_equal(usc_tensor_get_double(t, 6, &v), USC_OK);
	assert_true(v == -2);
	usc_tensor_destroy(t);

	/* The same values sign-extended in an int8 file. */
	t = read_fixture("s4_as_i1.npy", USC_S4, 1, d16);
	assert_int_equal(bits_at(t, 0), 0x8);
	assert_int_equal(bits_at(t, 15), 0x7);
	usc_tensor_destroy(t);

	/* f8e4m3fn: 1.0 = 0x38, -1.5 = 0xbc, 448 = 0x7e, NaN = 0x7f. */
	t = read_fixture("f8e4m3fn.npy", USC_F8E4M3FN, 1, d9);
	assert_int_equal(bits_at(t, 0), 0x38);
	assert_int_equal(bits_at(t, 1), 0xbc);
	assert_int_equal(bits_at(t, 3), 0x7e);
	assert_int_equal(bits_at(t, 8), 0x7f);
	usc_tensor_destroy(t);

	/* ml_dtypes writes f8e5m2 as "<f1": 1.0 = 0x3c, 57344 = 0x7b. */
	t = read_fixture("f8e5m2.npy", USC_F8E5M2, 1, d9);
	assert_int_equal(bits_at(t, 0), 0x3c);
	assert_int_equal(bits_at(t, 3), 0x7b);
	usc_tensor_destroy(t);

	/* Fortran order: element [1][2] of arange(12).reshape(3, 4) is 6. */
	t = read_fixture("f32_fortran.npy", USC_F32, 2, d34);
	assert_int_equal(bits_at(t, 6), 0x40c00000);
	assert_int_equal(bits_at(t, 11), 0x41300000);
	usc_tensor_destroy(t);

	t = read_fixture("pred.npy", USC_PRED, 2, d23);
	assert_int_equal(bits_at(t, 0), 1);
	assert_int_equal(bits_at(t, 1), 0);
	usc_tensor_destroy(t);

	t = read_fixture("c64.npy", USC_C64, 1, d3);
	assert_int_equal(usc_tensor_get_complex(t, 0, &re, &im), USC_OK);
	assert_true(re == 1 && im == 2);
	assert_int_equal(usc_tensor_get_bits(t, 0, &(uint64_t){0}),
			 USC_EINVAL);
	usc_tensor_destroy(t);

	/* Big-endian: 2^40 + 5. */
	t = read_fixture("s64_be.npy", USC_S64, 1, d2);
	assert_int_equal(bits_at(t, 1), 0x10000000005ull);
	usc_tensor_destroy(t);

	t = read_fixture("s32_shape1.npy", USC_S32, 1, d1);
	assert_int_equal(bits_at(t, 0), 7);
	usc_tensor_destroy(t);

	t = read_fixture("f64_scalar.npy", USC_F64, 0, NULL);
	assert_int_equal(usc_tensor_rank(t), 0);
	assert_int_equal(usc_tensor_count(t), 1);
	assert_int_equal(bits_at(t, 0), 0x400921fb54442d18ull);
	usc_tensor_destroy(t);
	assert_int_equal(usc__alloc_live(), 0);
}

static bool file_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;
	int ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			same = false;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * Writing every .npy fixture back and reading it again gives the same
 * tensor; where numpy (or ml_dtypes) wrote the fixture with the descr the
 * writer uses, in C order, little-endian, format 1.0, the files are equal
 * byte for byte, header padding included.
 */
static void test_roundtrip_fixtures(void **state)
{
	static const char *const identical[] = {
		"f32_v1.npy", "f64_scalar.npy", "f16.npy", "bf16.npy",
		"f8e4m3fn.npy", "f8e4m3fnuz.npy", "f8e4m3b11fnuz.npy",
		"f8e5m2fnuz.npy", "f8e4m3.npy", "f8e3m4.npy", "f8e8m0fnu.npy",
		"f6e2m3fn.npy", "f6e3m2fn.npy", "f4e2m1fn.npy", "s4.npy",
		"u4.npy", "s2.npy", "u2.npy", "s1.npy", "u1.npy", "pred.npy",
		"s8.npy", "s16.npy", "s32.npy", "s64.npy", "u8.npy", "u16.npy",
		"u32.npy", "u64.npy", "c64.npy", "c128.npy", "s8_rank4.npy",
		"f32_empty_0x3.npy", "s32_empty_0.npy", "bf16_empty_2x0x3.npy",
		"s32_shape1.npy"};
	expect_block *b = NULL;
	size_t n = expect_load(&b), same = 0;
	char dir[512];

	(void)state;
	scratch_dir(dir, sizeof dir);
	assert_true(dir[0]);
	for (size_t k = 0; k < n; k++) {
		char out[1024], fix[1024];
		usc_tensor *t, *u = NULL;
		usc_tensor_spec spec;
		usc_error err;

		if (strchr(b[k].source, ':'))
			continue;
		t = read_block(&b[k]);
		snprintf(out, sizeof out, "%s/%s", dir, b[k].source);
		if (usc_tensor_write_npy(t, out, &err) != USC_OK)
			fail_msg("%s", err.message);
		spec = usc_tensor_spec_of(t);
		if (usc_tensor_read_npy(out, &spec, &u, &err) != USC_OK)
			fail_msg("%s", err.message);
		assert_true(usc_tensor_equal(t, u));
		usc_tensor_destroy(u);
		for (size_t i = 0; i < sizeof identical / sizeof *identical; i++)
			if (strcmp(identical[i], b[k].source) == 0) {
				fixture_path(fix, sizeof fix, b[k].source);
				if (!file_equal(fix, out))
					fail_msg("%s differs from numpy's",
						 b[k].source);
				same++;
			}
		/* The raw writer and reader agree too. */
		snprintf(out, sizeof out, "%s/%s.raw", dir, b[k].source);
		assert_int_equal(usc_tensor_write_raw(t, out, &err), USC_OK);
		assert_int_equal(usc_tensor_read(out, &spec, USC_TENSOR_READ_RAW,
						 &u, &err),
				 USC_OK);
		assert_true(usc_tensor_equal(t, u));
		usc_tensor_destroy(u);
		unlink(out);
		snprintf(out, sizeof out, "%s/%s", dir, b[k].source);
		unlink(out);
		usc_tensor_destroy(t);
	}
	assert_int_equal(same, sizeof identical / sizeof *identical);
	rmdir(dir);
	expect_free(b, n);
	assert_int_equal(usc__alloc_live(), 0);
}

/* Every type with elements survives a write and a read, any shape. */
static void test_roundtrip_every_dtype(void **state)
{
	static const int64_t dims[] = {3, 1, 2};
	char dir[512];

	(void)state;
	scratch_dir(dir, sizeof dir);
	assert_true(dir[0]);
	for (int dt = 1; dt < USC_DTYPE_COUNT; dt++) {
		const usc_format *f = usc_format_of((usc_dtype)dt);
		usc_tensor *t = NULL, *u = NULL;
		usc_tensor_spec spec;
		char path[1024];
		usc_error err;

		for (size_t rank = 0; rank <= 3; rank++) {
			if (f->container_bytes == 0) {
				assert_int_equal(usc_tensor_create((usc_dtype)dt,
								   rank, dims,
								   &t, &err),
						 USC_EINVAL);
				continue;
			}
			assert_int_equal(usc_tensor_create((usc_dtype)dt, rank,
							   dims, &t, &err),
					 USC_OK);
			for (uint64_t i = 0; i < usc_tensor_count(t); i++) {
				uint64_t mask = f->bits >= 64
							? ~0ull
							: (1ull << f->bits) - 1;
				uint64_t v = (0x9e3779b97f4a7c15ull * (i + 1)) &
					     mask;

				if (f->kind == USC_KIND_COMPLEX)
					memset((unsigned char *)usc_tensor_data(t) +
						       i * f->container_bytes,
					       (int)(i * 37 + 1),
					       f->container_bytes);
				else
					assert_int_equal(
						usc_tensor_set_bits(t, i, v),
						USC_OK);
			}
			snprintf(path, sizeof path, "%s/t.npy", dir);
			assert_int_equal(usc_tensor_write_npy(t, path, &err),
					 USC_OK);
			spec = usc_tensor_spec_of(t);
			if (usc_tensor_read(path, &spec, 0, &u, &err) != USC_OK)
				fail_msg("%s", err.message);
			assert_true(usc_tensor_equal(t, u));
			usc_tensor_destroy(u);
			unlink(path);
			usc_tensor_destroy(t);
		}
	}
	rmdir(dir);
	assert_int_equal(usc__alloc_live(), 0);
}

static void test_accessors(void **state)
{
	static const int64_t d44[] = {4, 4}, neg[] = {2, -1};
	usc_tensor_spec spec = {USC_F32, 2, d44, "parameter 0 of the kernel"};
	usc_tensor *t = NULL;
	usc_error err;
	char buf[64];

	(void)state;
	usc_tensor_spec_format(&spec, buf, sizeof buf);
	assert_string_equal(buf, "f32[4,4]");
	spec.rank = 0;
	spec.dtype = USC_PRED;
	usc_tensor_spec_format(&spec, buf, sizeof buf);
	assert_string_equal(buf, "pred[]");
	spec.rank = USC_TENSOR_ANY_SHAPE;
	usc_tensor_spec_format(&spec, buf, sizeof buf);
	assert_string_equal(buf, "pred[...]");
	usc_tensor_spec_format(&spec, buf, 4);
	assert_string_equal(buf, "pre");

	assert_int_equal(usc_tensor_create(USC_TOKEN, 0, NULL, &t, &err),
			 USC_EINVAL);
	assert_string_equal(err.message,
			    "usc_tensor_create: type token has no elements");
	assert_int_equal(usc_tensor_create(USC_F32, 2, neg, &t, &err),
			 USC_EINVAL);
	assert_string_equal(err.message, "usc_tensor_create: dimension 1 is "
					 "negative (-1)");
	assert_int_equal(usc_tensor_create(USC_F32, 65, d44, &t, &err),
			 USC_EINVAL);

	assert_int_equal(usc_tensor_create(USC_S4, 2, d44, &t, &err), USC_OK);
	assert_int_equal(usc_tensor_nbytes(t), 16);
	assert_int_equal(usc_tensor_set_bits(t, 15, 0xf), USC_OK);
	assert_int_equal(usc_tensor_set_bits(t, 15, 0x1f), USC_ERANGE);
	assert_int_equal(usc_tensor_set_bits(t, 16, 0), USC_ERANGE);
	assert_int_equal(usc_tensor_get_bits(t, 16, &(uint64_t){0}),
			 USC_ERANGE);
	assert_int_equal(((const unsigned char *)usc_tensor_cdata(t))[15], 0xf);
	usc_tensor_destroy(t);
	usc_tensor_destroy(NULL);
	assert_int_equal(usc__alloc_live(), 0);
}

/* USC_TENSOR_ANY_SHAPE takes the file's shape. */
static void test_any_shape(void **state)
{
	char path[1024];
	usc_tensor_spec spec = {USC_F32, USC_TENSOR_ANY_SHAPE, NULL, NULL};
	usc_tensor *t = NULL;
	usc_error err;

	(void)state;
	fixture_path(path, sizeof path, "f32_v2.npy");
	assert_int_equal(usc_tensor_read(path, &spec, 0, &t, &err), USC_OK);
	assert_int_equal(usc_tensor_rank(t), 2);
	assert_int_equal(usc_tensor_dims(t)[0], 2);
	assert_int_equal(usc_tensor_dims(t)[1], 3);
	usc_tensor_destroy(t);
	assert_int_equal(usc_tensor_read_raw(path, &spec, &t, &err),
			 USC_EINVAL);
	assert_string_equal(err.message,
			    "tensor reader: a raw file needs a shape");
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_hand_written),
		cmocka_unit_test(test_roundtrip_fixtures),
		cmocka_unit_test(test_roundtrip_every_dtype),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_any_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
