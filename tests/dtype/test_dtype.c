/*
 * Unit tests of the number formats with hand-derived expectations.
 *
 * Every expected value below comes from the formats' public definitions
 * (IEEE 754-2019, the OCP 8-bit floating point specification v1.0, the OCP
 * MX specification v1.0) worked out by hand and written in C99 hex-float,
 * never from the code under test.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <mpfr.h>

#include "ulpscope/dtype_mpfr.h"
#include "ulpscope/ulpscope.h"

static uint64_t enc(usc_dtype t, double x, usc_round_mode m, usc_overflow o,
		    unsigned *flags)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t bits = ~(uint64_t)0;
	unsigned fl;

	r.mode = m;
	r.overflow = o;
	assert_int_equal(usc_encode_double(t, x, &r, &bits, &fl), USC_OK);
	if (flags)
		*flags = fl;
	return bits;
}

static uint64_t rne(usc_dtype t, double x)
{
	return enc(t, x, USC_RND_NEAREST_EVEN, USC_OVF_DEFAULT, NULL);
}

static double dec(usc_dtype t, uint64_t bits)
{
	double d;

	assert_int_equal(usc_decode_double(t, bits, &d), USC_OK);
	return d;
}

/* The published figures of each format (OCP FP8 table 1, OCP MX 5.3). */
static void test_descriptors(void **state)
{
	static const struct {
		usc_dtype t;
		double max, min_normal, min_sub;
	} rows[] = {
		{USC_F16, 0x1.ffcp+15, 0x1p-14, 0x1p-24},
		{USC_BF16, 0x1.fep+127, 0x1p-126, 0x1p-133},
		{USC_F32, 0x1.fffffep+127, 0x1p-126, 0x1p-149},
		{USC_F64, 0x1.fffffffffffffp+1023, 0x1p-1022, 0x1p-1074},
		{USC_F8E5M2, 57344, 0x1p-14, 0x1p-16},
		{USC_F8E4M3, 240, 0x1p-6, 0x1p-9},
		{USC_F8E4M3FN, 448, 0x1p-6, 0x1p-9},
		{USC_F8E4M3FNUZ, 240, 0x1p-7, 0x1p-10},
		{USC_F8E4M3B11FNUZ, 30, 0x1p-10, 0x1p-13},
		{USC_F8E5M2FNUZ, 57344, 0x1p-15, 0x1p-17},
		{USC_F8E3M4, 15.5, 0x1p-2, 0x1p-6},
		{USC_F8E8M0FNU, 0x1p127, 0x1p-127, 0x1p-127},
		{USC_F6E2M3FN, 7.5, 1, 0.125},
		{USC_F6E3M2FN, 28, 0.25, 0.0625},
		{USC_F4E2M1FN, 6, 1, 0.5},
	};

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		usc_float_info fi;

		assert_int_equal(usc_float_info_of(rows[i].t, &fi), USC_OK);
		assert_true(fi.max_finite == rows[i].max);
		assert_true(fi.min_normal == rows[i].min_normal);
		assert_true(fi.min_subnormal == rows[i].min_sub);
		assert_true(dec(rows[i].t, fi.max_finite_bits) == rows[i].max);
	}
	assert_int_equal(usc_float_info_of(USC_S8, NULL), USC_EINVAL);
}

static void test_names(void **state)
{
	usc_dtype t;

	(void)state;
	for (int i = USC_DTYPE_INVALID + 1; i < USC_DTYPE_COUNT; i++) {
		const char *n = usc_dtype_name((usc_dtype)i);

		assert_int_equal(usc_dtype_from_name(n, strlen(n), &t), USC_OK);
		assert_int_equal(t, i);
	}
	assert_int_equal(usc_dtype_from_name("bf16x", 4, &t), USC_OK);
	assert_int_equal(t, USC_BF16);
	assert_int_equal(usc_dtype_from_name("f8e4m3fnx", 9, &t),
			 USC_ENOTFOUND);
	assert_int_equal(usc_dtype_from_name("float32", 7, &t), USC_ENOTFOUND);
	assert_string_equal(usc_dtype_name((usc_dtype)999), "invalid");
}

/* OCP FP8: e4m3fn has no Inf; overflow and Inf become NaN (S.1111.111). */
static void test_e4m3fn_overflow(void **state)
{
	unsigned fl;

	(void)state;
	assert_int_equal(rne(USC_F8E4M3FN, 448), 0x7e);
	/* 464 is the midpoint of 448 (mantissa 110) and 480: even is 448. */
	assert_int_equal(rne(USC_F8E4M3FN, 464), 0x7e);
	assert_int_equal(enc(USC_F8E4M3FN, 465, USC_RND_NEAREST_EVEN,
			     USC_OVF_DEFAULT, &fl),
			 0x7f);
	assert_true(fl & USC_FLAG_OVERFLOW);
	assert_int_equal(rne(USC_F8E4M3FN, -465), 0xff);
	assert_int_equal(rne(USC_F8E4M3FN, INFINITY), 0x7f);
	assert_int_equal(enc(USC_F8E4M3FN, 465, USC_RND_NEAREST_EVEN,
			     USC_OVF_SATURATE, &fl),
			 0x7e);
	assert_true(fl & USC_FLAG_SATURATED);
	assert_int_equal(enc(USC_F8E4M3FN, -1e9, USC_RND_NEAREST_EVEN,
			     USC_OVF_SATURATE, NULL),
			 0xfe);
	/* IEEE 754 7.4: toward zero carries an overflow to max finite. */
	assert_int_equal(enc(USC_F8E4M3FN, 1e9, USC_RND_TOWARD_ZERO,
			     USC_OVF_NAN, NULL),
			 0x7e);
	assert_int_equal(enc(USC_F8E4M3FN, -1e9, USC_RND_UP, USC_OVF_NAN, NULL),
			 0xfe);
	assert_int_equal(enc(USC_F8E4M3FN, -1e9, USC_RND_DOWN, USC_OVF_NAN,
			     NULL),
			 0xff);
}

static void test_ieee_like_overflow(void **state)
{
	(void)state;
	/* e5m2 max 57344 = 1.75 * 2^15; the midpoint to 2^16 is 61440. */
	assert_int_equal(rne(USC_F8E5M2, 61439), 0x7b);
	assert_int_equal(rne(USC_F8E5M2, 61440), 0x7c); /* tie to even: Inf */
	assert_int_equal(rne(USC_F8E5M2, -INFINITY), 0xfc);
	assert_int_equal(enc(USC_F8E5M2, 61440, USC_RND_NEAREST_EVEN,
			     USC_OVF_SATURATE, NULL),
			 0x7b);
	assert_int_equal(enc(USC_F8E5M2, 1e6, USC_RND_NEAREST_EVEN,
			     USC_OVF_NAN, NULL),
			 0x7e);
	/* bf16 max 0x1.fep127; halfway to 2^128 is 0x1.ffp127. */
	assert_int_equal(rne(USC_BF16, 0x1.fefffffffffffp127), 0x7f7f);
	assert_int_equal(rne(USC_BF16, 0x1.ffp127), 0x7f80);
}

static void test_fnuz(void **state)
{
	(void)state;
	/* fnuz: no -0, NaN is 0x80; 1.0 is biased exponent 8 (or 11). */
	assert_int_equal(rne(USC_F8E4M3FNUZ, -0.0), 0x00);
	assert_int_equal(rne(USC_F8E4M3FNUZ, 1.0), 0x40);
	assert_int_equal(rne(USC_F8E4M3B11FNUZ, 1.0), 0x58);
	assert_int_equal(rne(USC_F8E5M2FNUZ, 1.0), 0x40);
	assert_int_equal(rne(USC_F8E4M3FNUZ, NAN), 0x80);
	assert_int_equal(rne(USC_F8E4M3FNUZ, -NAN), 0x80);
	assert_int_equal(rne(USC_F8E4M3FNUZ, 1e9), 0x80);
	assert_true(usc_bits_is_nan(USC_F8E4M3FNUZ, 0x80));
	assert_false(usc_bits_is_nan(USC_F8E4M3FNUZ, 0x00));
	/* A negative value that rounds to zero gives the only zero. */
	assert_int_equal(rne(USC_F8E4M3FNUZ, -0x1p-30), 0x00);
	assert_true(isnan(dec(USC_F8E4M3FNUZ, 0x80)));
	assert_true(dec(USC_F8E4M3FNUZ, 0xff) == -240);
}

static void test_mx_formats(void **state)
{
	(void)state;
	/* OCP MX: fp4 e2m1 values 0, .5, 1, 1.5, 2, 3, 4, 6. */
	static const double fp4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

	for (unsigned c = 0; c < 8; c++) {
		assert_true(dec(USC_F4E2M1FN, c) == fp4[c]);
		assert_true(dec(USC_F4E2M1FN, c | 8) == -fp4[c]);
	}
	/* MX formats saturate (OCP MX 5.3.2 leaves it to the conversion;
	 * ml_dtypes saturates). */
	assert_int_equal(rne(USC_F4E2M1FN, 7), 0x7);
	assert_int_equal(rne(USC_F4E2M1FN, -INFINITY), 0xf);
	assert_int_equal(rne(USC_F4E2M1FN, 5), 0x6); /* tie 4|6: 4 is even */
	assert_int_equal(rne(USC_F4E2M1FN, 0.25), 0x0); /* tie 0|0.5 */
	assert_int_equal(rne(USC_F4E2M1FN, 0x1.000001p-2), 0x1);
	assert_int_equal(rne(USC_F6E2M3FN, 7.5), 0x1f);
	assert_int_equal(rne(USC_F6E3M2FN, 28), 0x1f);
	assert_int_equal(rne(USC_F6E3M2FN, 100), 0x1f);
	/* e8m0: 2^(E-127); 0xff NaN; no zero, no sign. */
	assert_true(dec(USC_F8E8M0FNU, 0x7f) == 1);
	assert_true(dec(USC_F8E8M0FNU, 0x00) == 0x1p-127);
	assert_true(dec(USC_F8E8M0FNU, 0xfe) == 0x1p127);
	assert_true(isnan(dec(USC_F8E8M0FNU, 0xff)));
	assert_int_equal(rne(USC_F8E8M0FNU, 1.5), 0x80);  /* tie: up */
	assert_int_equal(rne(USC_F8E8M0FNU, 1.49), 0x7f);
	assert_int_equal(rne(USC_F8E8M0FNU, 0.0), 0xff);
	assert_int_equal(rne(USC_F8E8M0FNU, -2.0), 0xff);
	assert_int_equal(rne(USC_F8E8M0FNU, 0x1p-140), 0x00);
	assert_int_equal(rne(USC_F8E8M0FNU, 0x1.8p127), 0xff);
}

static void test_rounding_modes(void **state)
{
	/* bf16 around 1: spacing 2^-7; 1 + 2^-8 is the midpoint. */
	const double mid = 1 + 0x1p-8, above = 1 + 0x1.4p-7;
	unsigned fl;

	(void)state;
	assert_int_equal(enc(USC_BF16, mid, USC_RND_NEAREST_EVEN, 0, &fl),
			 0x3f80);
	assert_true(fl & USC_FLAG_INEXACT);
	assert_int_equal(enc(USC_BF16, mid, USC_RND_NEAREST_AWAY, 0, NULL),
			 0x3f81);
	assert_int_equal(enc(USC_BF16, -mid, USC_RND_NEAREST_AWAY, 0, NULL),
			 0xbf81);
	assert_int_equal(enc(USC_BF16, above, USC_RND_TOWARD_ZERO, 0, NULL),
			 0x3f81);
	assert_int_equal(enc(USC_BF16, above, USC_RND_UP, 0, NULL), 0x3f82);
	assert_int_equal(enc(USC_BF16, above, USC_RND_DOWN, 0, NULL), 0x3f81);
	assert_int_equal(enc(USC_BF16, -above, USC_RND_UP, 0, NULL), 0xbf81);
	assert_int_equal(enc(USC_BF16, -above, USC_RND_DOWN, 0, NULL), 0xbf82);
	assert_int_equal(enc(USC_BF16, 1, USC_RND_UP, 0, &fl), 0x3f80);
	assert_int_equal(fl, 0);
	/* 0x1p-1074 (smallest double) up into f16 gives the smallest f16. */
	assert_int_equal(enc(USC_F16, 0x1p-1074, USC_RND_UP, 0, NULL), 0x0001);
	assert_int_equal(enc(USC_F16, -0x1p-1074, USC_RND_UP, 0, NULL), 0x8000);
}

static void test_subnormals_and_flush(void **state)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t bits;
	unsigned fl;

	(void)state;
	/* f8e4m3fn subnormals are k * 2^-9. */
	assert_int_equal(rne(USC_F8E4M3FN, 0x1p-9), 0x01);
	assert_int_equal(rne(USC_F8E4M3FN, 0x1p-10), 0x00); /* tie: to 0 */
	assert_int_equal(rne(USC_F8E4M3FN, 0x1.8p-9), 0x02); /* tie: to 2 */
	assert_int_equal(rne(USC_F8E4M3FN, 0x1.cp-7), 0x07);
	assert_int_equal(rne(USC_F8E4M3FN, 0x1.ep-7), 0x08); /* tie: carry to 2^-6 */
	r.flush_subnormals = true;
	assert_int_equal(usc_encode_double(USC_F8E4M3FN, 0x1p-8, &r, &bits, &fl),
			 USC_OK);
	assert_int_equal(bits, 0x00);
	assert_true(fl & USC_FLAG_FLUSHED);
	usc_encode_double(USC_F8E4M3FN, -0x1p-8, &r, &bits, &fl);
	assert_int_equal(bits, 0x80);
	/* Tininess after rounding: this rounds up to the smallest normal. */
	usc_encode_double(USC_F8E4M3FN, 0x1.fp-7, &r, &bits, &fl);
	assert_int_equal(bits, 0x08);
	assert_false(fl & USC_FLAG_FLUSHED);
}

static void test_stochastic_simple(void **state)
{
	usc_rounding r = USC_ROUNDING_DEFAULT;
	uint64_t bits;

	(void)state;
	/* 1 + 2^-9 in bf16 lies a quarter of the way from 1 to 1 + 2^-7. */
	r.mode = USC_RND_STOCHASTIC;
	r.random_bits = 2;
	for (uint64_t w = 0; w < 4; w++) {
		r.random = w;
		usc_encode_double(USC_BF16, 1 + 0x1p-9, &r, &bits, NULL);
		assert_int_equal(bits, w == 3 ? 0x3f81 : 0x3f80);
	}
}

static void test_integers(void **state)
{
	uint64_t bits;
	unsigned fl;
	int64_t sv;

	(void)state;
	/* XLA's convert: truncate, saturate, NaN to 0. */
	usc_encode_double(USC_S8, -3.9, NULL, &bits, &fl);
	assert_int_equal(bits, 0xfd);
	usc_encode_double(USC_S8, 300, NULL, &bits, &fl);
	assert_int_equal(bits, 0x7f);
	assert_true(fl & USC_FLAG_SATURATED);
	usc_encode_double(USC_S8, -1e300, NULL, &bits, &fl);
	assert_int_equal(bits, 0x80);
	usc_encode_double(USC_U8, -1, NULL, &bits, &fl);
	assert_int_equal(bits, 0);
	usc_encode_double(USC_S32, NAN, NULL, &bits, &fl);
	assert_int_equal(bits, 0);
	assert_true(fl & USC_FLAG_INVALID);
	usc_encode_double(USC_S4, 7.99, NULL, &bits, &fl);
	assert_int_equal(bits, 0x7);
	usc_encode_double(USC_S4, -8.5, NULL, &bits, &fl);
	assert_int_equal(bits, 0x8);
	usc_encode_double(USC_U64, 0x1p64, NULL, &bits, &fl);
	assert_true(bits == UINT64_MAX);
	usc_encode_double(USC_S64, -0x1p63, NULL, &bits, &fl);
	assert_true(bits == 0x8000000000000000u);
	assert_int_equal(fl, 0);
	usc_encode_double(USC_PRED, NAN, NULL, &bits, &fl);
	assert_int_equal(bits, 1);
	usc_encode_double(USC_PRED, -0.0, NULL, &bits, &fl);
	assert_int_equal(bits, 0);
	{
		usc_rounding r = USC_ROUNDING_DEFAULT;

		r.overflow = USC_OVF_WRAP;
		r.mode = USC_RND_TOWARD_ZERO;
		usc_encode_double(USC_S8, 300, &r, &bits, &fl);
		assert_int_equal(bits, 300 & 0xff);
		usc_encode_double(USC_U4, -1, &r, &bits, &fl);
		assert_int_equal(bits, 0xf);
	}
	assert_int_equal(usc_decode_int(USC_S4, 0xf, &sv, NULL), USC_OK);
	assert_int_equal(sv, -1);
	assert_int_equal(usc_decode_int(USC_S2, 0x2, &sv, NULL), USC_OK);
	assert_int_equal(sv, -2);
	assert_true(dec(USC_U4, 0xf) == 15);
	{
		double d;

		assert_int_equal(usc_decode_double(USC_U64, UINT64_MAX, &d),
				 USC_ERANGE);
	}
}

static void test_ulp(void **state)
{
	double u, e;
	int64_t dist;

	(void)state;
	assert_int_equal(usc_ulp_double(USC_BF16, 1.0, &u), USC_OK);
	assert_true(u == 0x1p-7);
	usc_ulp_double(USC_BF16, 0x1.fffp0, &u);
	assert_true(u == 0x1p-7);
	usc_ulp_double(USC_BF16, 0.0, &u);
	assert_true(u == 0x1p-133);
	usc_ulp_double(USC_F8E4M3FN, 1e6, &u);
	assert_true(u == 0x1p5);
	usc_ulp_double(USC_F8E4M3FN, 0x1p-12, &u);
	assert_true(u == 0x1p-9);
	usc_ulp_double(USC_F8E4M3FN, -INFINITY, &u);
	assert_true(u == 0x1p5);
	/* bf16 0x3f81 = 1 + 2^-7 against 1 + 2^-8: +0.5 ulp. */
	assert_int_equal(usc_ulp_error_double(USC_BF16, 0x3f81, 1 + 0x1p-8, &e),
			 USC_OK);
	assert_true(e == 0.5);
	usc_ulp_error_double(USC_BF16, 0x3f80, 1 + 0x1p-8 + 0x1p-20, &e);
	assert_true(e == -(0x1p-1 + 0x1p-13));
	usc_ulp_error_double(USC_BF16, 0x7fc0, NAN, &e);
	assert_true(e == 0);
	usc_ulp_error_double(USC_BF16, 0x7fc0, 1, &e);
	assert_true(isnan(e));
	usc_ulp_error_double(USC_BF16, 0x7f80, 1, &e);
	assert_true(isinf(e) && e > 0);
	usc_ulp_error_double(USC_BF16, 0x3f80, -INFINITY, &e);
	assert_true(isinf(e) && e > 0);
	/* Ordinal distances: +0/-0 equal, Inf one past max. */
	assert_int_equal(usc_ulp_distance(USC_BF16, 0x8000, 0x0000, &dist),
			 USC_OK);
	assert_int_equal(dist, 0);
	usc_ulp_distance(USC_BF16, 0x8001, 0x0001, &dist);
	assert_int_equal(dist, 2);
	usc_ulp_distance(USC_BF16, 0x7f7f, 0x7f80, &dist);
	assert_int_equal(dist, 1);
	usc_ulp_distance(USC_F8E4M3FN, 0xfe, 0x7e, &dist);
	assert_int_equal(dist, 2 * 126);
	assert_int_equal(usc_ulp_distance(USC_F8E4M3FN, 0x7f, 0x00, &dist),
			 USC_EDOMAIN);
	usc_ulp_distance(USC_F64, 0x8000000000000000u, 0x7ff0000000000000u,
			 &dist);
	assert_true(dist == (int64_t)0x7ff0000000000000);
	/* -Inf to +Inf in f64 is 2^64 - 2^53 steps: beyond int64_t. */
	assert_int_equal(usc_ulp_distance(USC_F64, 0xfff0000000000000u,
					  0x7ff0000000000000u, &dist),
			 USC_ERANGE);
}

static void test_text(void **state)
{
	char buf[USC_EXACT_DECIMAL_SIZE];
	usc_error err;
	uint64_t bits;
	unsigned fl;

	(void)state;
	/*
	 * The double-rounding trap: exactly, this is just above the bf16
	 * midpoint 1 + 2^-8 and rounds up; through a double it would be
	 * the midpoint itself and round to even (down).
	 */
	assert_int_equal(usc_encode_str(USC_BF16, "1.00390625000000000001",
					NULL, &bits, &fl, &err),
			 USC_OK);
	assert_int_equal(bits, 0x3f81);
	usc_encode_str(USC_BF16, "1.00390625", NULL, &bits, &fl, &err);
	assert_int_equal(bits, 0x3f80);
	usc_encode_str(USC_F8E4M3FN, "0x1.dp8", NULL, &bits, &fl, &err);
	assert_int_equal(bits, 0x7e); /* 464: the tie goes to 448 */
	usc_encode_str(USC_F8E4M3FN, "464.0000000000000000000000001", NULL,
		       &bits, &fl, &err);
	assert_int_equal(bits, 0x7f);
	usc_encode_str(USC_F16, "-nan", NULL, &bits, &fl, &err);
	assert_int_equal(bits, 0xfe00);
	usc_encode_str(USC_F16, "-inf", NULL, &bits, &fl, &err);
	assert_int_equal(bits, 0xfc00);
	usc_encode_str(USC_S8, "-7.9", NULL, &bits, &fl, &err);
	assert_int_equal(bits, 0xf9);
	assert_int_equal(usc_encode_str(USC_F16, "1.5x", NULL, &bits, &fl, &err),
			 USC_EPARSE);
	assert_string_equal(err.message,
			    "expected a decimal or hexadecimal number, 'inf' "
			    "or 'nan', found '1.5x'");
	assert_int_equal(usc_encode_str(USC_F16, "--1", NULL, &bits, &fl, &err),
			 USC_EPARSE);
	assert_int_equal(usc_encode_str(USC_C64, "1", NULL, &bits, &fl, &err),
			 USC_EINVAL);

	assert_int_equal(usc_exact_decimal(USC_F16, 0x2e66, buf, sizeof buf),
			 USC_OK);
	assert_string_equal(buf, "0.0999755859375"); /* 1638 * 2^-14 */
	usc_exact_decimal(USC_F8E4M3FN, 0x7e, buf, sizeof buf);
	assert_string_equal(buf, "448");
	usc_exact_decimal(USC_F8E4M3FN, 0x80, buf, sizeof buf);
	assert_string_equal(buf, "-0");
	usc_exact_decimal(USC_F8E4M3FN, 0xff, buf, sizeof buf);
	assert_string_equal(buf, "nan");
	usc_exact_decimal(USC_F64, 1, buf, sizeof buf);
	assert_int_equal(strncmp(buf, "0.000000000000000000000000000000000"
				      "000000000000000000000000000000000000000",
				 74),
			 0);
	assert_int_equal(strlen(buf), 2 + 323 + 751);
	usc_exact_decimal(USC_S16, 0x8000, buf, sizeof buf);
	assert_string_equal(buf, "-32768");
	assert_int_equal(usc_exact_decimal(USC_F16, 0x2e66, buf, 5), USC_ERANGE);
}

static void test_ulp_error_str(void **state)
{
	usc_error err;
	double e, u;

	(void)state;
	/* bf16 0x3dcd = 0x1.9ap-4 against the decimal 0.1, exactly. */
	assert_int_equal(usc_ulp_error_str(USC_BF16, 0x3dcd, "0.1", &e, &u,
					   &err),
			 USC_OK);
	assert_true(u == 0x1p-11);
	/* (0.10009765625 - 0.1) / 2^-11 = 0.2 exactly. */
	assert_true(fabs(e - 0.2) < 1e-15);
}

/*
 * Exact values far outside every format: they must overflow or saturate
 * without scaling the value (2^(2^40) would need a 2^40-bit integer).
 */
static void test_mpfr_extremes(void **state)
{
	mpfr_exp_t emax = mpfr_get_emax(), emin = mpfr_get_emin();
	usc_rounding rz = USC_ROUNDING_DEFAULT;
	uint64_t bits;
	unsigned fl;
	mpfr_t x;

	(void)state;
	mpfr_set_emax(mpfr_get_emax_max());
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_init2(x, 64);
	mpfr_set_ui_2exp(x, 3, 106000, MPFR_RNDN);
	usc_encode_mpfr(USC_BF16, x, NULL, &bits, &fl);
	assert_int_equal(bits, 0x7f80);
	assert_true(fl & USC_FLAG_OVERFLOW);
	rz.mode = USC_RND_TOWARD_ZERO;
	usc_encode_mpfr(USC_BF16, x, &rz, &bits, &fl);
	assert_int_equal(bits, 0x7f7f);
	usc_encode_mpfr(USC_F8E4M3FN, x, NULL, &bits, &fl);
	assert_int_equal(bits, 0x7f);
	mpfr_set_ui_2exp(x, 1, (mpfr_exp_t)1 << 40, MPFR_RNDN);
	mpfr_neg(x, x, MPFR_RNDN);
	usc_encode_mpfr(USC_F64, x, NULL, &bits, &fl);
	assert_true(bits == 0xfff0000000000000u);
	usc_encode_mpfr(USC_S32, x, NULL, &bits, &fl);
	assert_int_equal(bits, 0x80000000u);
	rz.overflow = USC_OVF_WRAP;
	usc_encode_mpfr(USC_S32, x, &rz, &bits, &fl);
	assert_int_equal(bits, 0); /* a multiple of 2^64 wraps to 0 */
	mpfr_set_ui_2exp(x, 1, -((mpfr_exp_t)1 << 40), MPFR_RNDN);
	usc_encode_mpfr(USC_F32, x, NULL, &bits, &fl);
	assert_int_equal(bits, 0);
	assert_true(fl & USC_FLAG_UNDERFLOW);
	rz.mode = USC_RND_UP;
	rz.overflow = USC_OVF_DEFAULT;
	usc_encode_mpfr(USC_F32, x, &rz, &bits, &fl);
	assert_int_equal(bits, 1);
	mpfr_clear(x);
	mpfr_set_emax(emax);
	mpfr_set_emin(emin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_e4m3fn_overflow),
		cmocka_unit_test(test_ieee_like_overflow),
		cmocka_unit_test(test_fnuz),
		cmocka_unit_test(test_mx_formats),
		cmocka_unit_test(test_rounding_modes),
		cmocka_unit_test(test_subnormals_and_flush),
		cmocka_unit_test(test_stochastic_simple),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_ulp),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_ulp_error_str),
		cmocka_unit_test(test_mpfr_extremes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
