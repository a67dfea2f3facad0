/*
 * The tier's ULP-error decision over arrays (usc__tier_decide_ulp_error_array,
 * oracles/tier_decide_array.c) and the check's use of it
 * (usc__check_tier_decide, src/analyze/check_figures.c) against the
 * per-element code they replace: usc__tier_decide_ulp_error_rn for each
 * element, and for the check usc__tier_enclosure recorded by
 * usc__check_set_enclosure.  Every figure must be the same bits.
 *
 * The balls are drawn around random codes of each format (the in-line
 * loop's f32, bf16, f16 and fp8 formats, and f64 and f8e4m3fnuz, which
 * take the general path): points, radii from far below to far above the
 * resolution, radii at the resolution's edge (a width of exactly 1/8 ulp
 * and a step of a double either side), balls across a binade's edge and
 * across 0, subnormals, magnitudes at double's largest, and the other
 * kinds (infinities, NaN, undecided); the device codes are the ball's
 * nearest code and its neighbours up to three away, random codes,
 * infinities and NaN.  Resolutions: the check's 1/8 ulp, the default
 * (NULL), a wider one, and significant digits (the general path).
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ulpscope/dtype.h"
#include "ulpscope/tensor.h"
#include "oracles/oracle.h"
#include "oracles/tier.h"
#include "dtype/rn_fast.h"
#include "analyze/check_internal.h"

#include "test_util.h"

#define N 3001 /* not a multiple of the check's chunk of 256 */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
	return usc_test_xorshift64star(&rng);
}

static double unif(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

static uint64_t dbits(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof b);
	return b;
}

/* A random finite code of t, and its value. */
static uint64_t finite_code(usc_dtype t, double *v)
{
	int bits = usc_format_of(t)->bits;
	uint64_t mask = bits == 64 ? ~(uint64_t)0
				   : (((uint64_t)1 << bits) - 1);

	for (;;) {
		uint64_t c = rnd() & mask;

		/* f64: keep the magnitudes a float's errors can reach. */
		if (t == USC_F64 && (rnd() & 1))
			c = dbits(ldexp(unif() + 0.5, (int)(rnd() % 200) - 100) *
				  ((rnd() & 1) ? -1 : 1));
		if (usc_decode_double(t, c, v) == USC_OK && isfinite(*v))
			return c;
	}
}

/* The code nearest to x (nearest-even), moved k codes along the order. */
static uint64_t code_near(usc_dtype t, double x, int k)
{
	uint64_t c = 0;
	double v;

	(void)usc_encode_double(t, x, NULL, &c, NULL);
	for (int s = 0; s < abs(k); s++) {
		uint64_t n = 0;

		if (usc_decode_double(t, c, &v) != USC_OK || !isfinite(v))
			break;
		(void)usc_encode_double(t, nextafter(v, k > 0 ? INFINITY
							      : -INFINITY),
					NULL, &n, NULL);
		/* The next code up or down: the value's neighbour rounded. */
		if (n == c) {
			double u = 0;

			(void)usc_ulp_double(t, v, &u);
			(void)usc_encode_double(t, v + (k > 0 ? u : -u), NULL,
						&n, NULL);
		}
		c = n;
	}
	return c;
}

/* One value: a ball of some shape around a code of t, or another kind. */
static usc__tier_value draw_value(usc_dtype t, double *near)
{
	usc__tier_value v;
	double y, u = 0, mid, rad;
	unsigned shape = (unsigned)(rnd() % 16);

	memset(&v, 0, sizeof v);
	(void)finite_code(t, &y);
	(void)usc_ulp_double(t, y, &u);
	if (shape == 0 && (rnd() & 1)) {
		/* A power of two: balls across the binade's edge. */
		int e;

		(void)frexp(y, &e);
		y = ldexp(y < 0 ? -0.5 : 0.5, e);
		(void)usc_ulp_double(t, y, &u);
	}
	mid = y + (unif() - 0.5) * 6 * u;
	switch (shape) {
	case 0: rad = unif() * u; break;
	case 1: mid = y; rad = 0; break;
	case 2: rad = 0; break;
	case 3: rad = u / 16; break;
	case 4: rad = nextafter(u / 16, 0); break;
	case 5: rad = nextafter(u / 16, INFINITY); break;
	case 6: rad = ldexp(u, -(int)(rnd() % 60)); break;
	case 7: rad = ldexp(u, (int)(rnd() % 8)); break;
	case 8: /* across 0 */
		mid = (unif() - 0.5) * u;
		rad = fabs(mid) + unif() * u;
		break;
	case 9: /* subnormal-sized */
		mid = (unif() - 0.5) * 1e-40;
		rad = unif() * 1e-42;
		break;
	case 10: /* at double's largest: the bounds step to infinity */
		mid = (rnd() & 1) ? DBL_MAX : -DBL_MAX;
		rad = (rnd() & 1) ? 0 : 0x1p960;
		break;
	case 11:
		v.kind = (unsigned char)((rnd() & 1) ? USC__ORC_POS_INF
						     : USC__ORC_NEG_INF);
		*near = v.kind == USC__ORC_POS_INF ? INFINITY : -INFINITY;
		return v;
	case 12:
		v.kind = (unsigned char)((rnd() & 1) ? USC__ORC_NAN
						     : USC__ORC_UNDECIDED);
		*near = NAN;
		return v;
	default: rad = unif() * u / 8; break;
	}
	if (!isfinite(mid))
		mid = y;
	usc__tier_value_set(&v, mid, rad);
	*near = mid;
	return v;
}

/* A device code for a value near x. */
static uint64_t draw_code(usc_dtype t, double x)
{
	usc_float_info fi;
	double v;

	assert_int_equal(usc_float_info_of(t, &fi), USC_OK);
	switch (rnd() % 12) {
	case 0: return finite_code(t, &v);
	case 1: return fi.inf_bits ? fi.inf_bits | ((rnd() & 1) ? fi.sign_mask : 0)
				   : fi.nan_bits;
	case 2: return fi.nan_bits;
	default:
		if (!isfinite(x))
			return finite_code(t, &v);
		return code_near(t, x, (int)(rnd() % 7) - 3);
	}
}

/* Stores code c as element i of an encoding array of width w. */
static void put_code(unsigned char *a, size_t w, size_t i, uint64_t c)
{
	for (size_t b = 0; b < w; b++)
		a[i * w + b] = (unsigned char)(c >> (8 * b));
}

typedef struct sample {
	usc_dtype t;
	size_t w;
	usc__tier_value v[N];
	unsigned char y[N * 8];
	uint64_t code[N];
} sample;

static void draw(sample *s, usc_dtype t)
{
	s->t = t;
	s->w = (size_t)usc_format_of(t)->container_bytes;
	for (size_t i = 0; i < N; i++) {
		double x;

		s->v[i] = draw_value(t, &x);
		s->code[i] = draw_code(t, x);
		put_code(s->y, s->w, i, s->code[i]);
	}
}

static const usc_dtype types[] = {USC_F32,    USC_BF16,	    USC_F16,
				  USC_F8E5M2, USC_F8E4M3FN, USC_F64,
				  USC_F8E4M3FNUZ};

/* The array decision against the per-element one, at several resolutions. */
static void test_array_matches_elements(void **state)
{
	static const usc__oracle_resolution eighth = {0.125, 0},
					    half = {0.5, 0},
					    digits = {0, 2},
					    both = {0.125, 3};
	const usc__oracle_resolution *res[] = {&eighth, NULL, &half, &digits,
					       &both};
	static sample s;
	static double mid[N], lo[N], hi[N];
	static uint8_t dec[N];

	(void)state;
	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		const usc__rn_format *rf = usc__rn_format_of(types[k]);

		for (long round = 0; round < 4 * usc_test_scale(); round++) {
			draw(&s, types[k]);
			for (size_t r = 0; r < sizeof res / sizeof res[0]; r++) {
				size_t count = 99, want = 0;
				usc_error err;

				assert_int_equal(
					usc__tier_decide_ulp_error_array(
						s.v, N, s.t, rf, s.y, s.w,
						res[r], mid, dec, lo, hi,
						&count, &err),
					USC_OK);
				for (size_t i = 0; i < N; i++) {
					usc__oracle_ulp_error ue;
					double wlo = NAN, whi = NAN;

					assert_int_equal(
						usc__tier_decide_ulp_error_rn(
							&s.v[i], s.t, rf,
							s.code[i], res[r], &ue,
							&err),
						USC_OK);
					if (dbits(mid[i]) != dbits(ue.mid) ||
					    dec[i] != ue.decided)
						fail_msg("%s element %zu "
							 "(mid %a rad %a kind "
							 "%d code %#llx res "
							 "%zu): mid %a "
							 "decided %d, want "
							 "%a %d",
							 usc_dtype_name(s.t), i,
							 s.v[i].mid, s.v[i].rad,
							 s.v[i].kind,
							 (unsigned long long)
								 s.code[i],
							 r, mid[i], dec[i],
							 ue.mid, ue.decided);
					want += ue.decided;
					if (s.v[i].kind == USC__ORC_FINITE)
						usc__tier_bounds(&s.v[i], &wlo,
								 &whi);
					assert_true(dbits(lo[i]) == dbits(wlo) ||
						    (isnan(lo[i]) && isnan(wlo)));
					assert_true(dbits(hi[i]) == dbits(whi) ||
						    (isnan(hi[i]) && isnan(whi)));
				}
				assert_int_equal(count, want);
			}
		}
	}
}

/*
 * A ball whose error's width is exactly the resolution decides; one a
 * a little narrower does (hand-derived: y = 1.5 in f32, code 0x3fc00000,
 * ulp 2^-23 over the whole ball; the ball 1.5 +- 2^-27 has errors in
 * [-1/16, 1/16] ulp before the outward steps of its bounds, which widen
 * it past 1/8; 1.5 +- 2^-28 has a width near 1/16; a point has the error
 * +0; a ball whose midpoint is 1.5 + 2^-24 has the error -1/2 ulp at its
 * midpoint).
 */
static void test_edge_of_resolution(void **state)
{
	usc__tier_value v[4];
	unsigned char y[16];
	double mid[4], lo[4], hi[4];
	uint8_t dec[4];
	size_t count;
	usc_error err;
	const usc__rn_format *rf = usc__rn_format_of(USC_F32);

	(void)state;
	usc__tier_value_set(&v[0], 1.5, 0x1p-27);
	usc__tier_value_set(&v[1], 1.5, 0x1p-28);
	usc__tier_value_set(&v[2], 1.5, 0);
	usc__tier_value_set(&v[3], 1.5 + 0x1p-24, 0x1p-28);
	for (size_t i = 0; i < 4; i++)
		put_code(y, 4, i, 0x3fc00000u);
	assert_int_equal(usc__tier_decide_ulp_error_array(v, 4, USC_F32, rf, y,
							  4, NULL, mid, dec, lo,
							  hi, &count, &err),
			 USC_OK);
	/* Width 1/8 plus the outward steps: not decided at 1/8. */
	assert_false(dec[0]);
	/* Width 1/16 plus steps: decided, mid 0. */
	assert_true(dec[1]);
	assert_true(mid[1] == 0);
	/* A point: error exactly 0. */
	assert_true(dec[2]);
	assert_true(mid[2] == 0 && !signbit(mid[2]));
	/* The ball's midpoint half an ulp above 1.5: mid -1/2 ulp. */
	assert_true(dec[3]);
	assert_true(mid[3] == -0.5);
	assert_int_equal(count, 3);
}

/*
 * The check's merge (usc__check_tier_decide) against deciding and
 * recording each element on its own, on a part that starts inside the
 * output (base) and a run that starts inside the part (j0).
 */
static void test_check_merge(void **state)
{
	static sample s;
	const size_t base = 7, j0 = 5;

	(void)state;
	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		usc_dtype t = types[k];
		const usc__rn_format *rf = usc__rn_format_of(t);
		int64_t dim = (int64_t)(base + j0 + N);
		usc_check_output o;
		usc__check_part p, q;
		usc_error err;
		uint64_t want_count = 0;

		draw(&s, t);
		memset(&o, 0, sizeof o);
		assert_int_equal(usc_tensor_create(t, 1, &dim, &o.device, &err),
				 USC_OK);
		for (size_t i = 0; i < N; i++)
			assert_int_equal(usc_tensor_set_bits(o.device,
							     base + j0 + i,
							     s.code[i]),
					 USC_OK);
		memset(&p, 0, sizeof p);
		memset(&q, 0, sizeof q);
		assert_int_equal(usc__check_part_alloc(&p, j0 + N, false, 0,
						       false, &err),
				 USC_OK);
		assert_int_equal(usc__check_part_alloc(&q, j0 + N, false, 0,
						       false, &err),
				 USC_OK);
		p.o = q.o = &o;
		p.base = q.base = base;
		p.len = q.len = j0 + N;
		for (size_t j = 0; j < j0 + N; j++) {
			p.oracle_mid[j] = q.oracle_mid[j] = 0;
			p.oracle_rad[j] = q.oracle_rad[j] = 0;
			p.ulp_oracle[j] = q.ulp_oracle[j] = NAN;
			p.undecided[j] = q.undecided[j] = 1;
		}
		{
			static const usc__oracle_resolution eighth = {0.125,
								      0};

			assert_int_equal(usc__check_tier_decide(&p, j0, s.v, N,
								t, &eighth,
								&err),
					 USC_OK);
			for (size_t i = 0; i < N; i++) {
				usc__oracle_ulp_error ue;
				usc__oracle_enclosure e;

				assert_int_equal(usc__tier_decide_ulp_error_rn(
							 &s.v[i], t, rf,
							 s.code[i], &eighth,
							 &ue, &err),
						 USC_OK);
				if (!ue.decided)
					continue;
				usc__tier_enclosure(&s.v[i], &e);
				usc__check_set_enclosure(&q, j0 + i, &e);
				q.ulp_oracle[j0 + i] = ue.mid;
				q.undecided[j0 + i] = 0;
				want_count++;
			}
		}
		assert_int_equal(p.tier_decided, want_count);
		for (size_t j = 0; j < j0 + N; j++) {
			assert_int_equal(p.undecided[j], q.undecided[j]);
			if (dbits(p.ulp_oracle[j]) != dbits(q.ulp_oracle[j]) ||
			    dbits(p.oracle_mid[j]) != dbits(q.oracle_mid[j]) ||
			    dbits(p.oracle_rad[j]) != dbits(q.oracle_rad[j]))
				fail_msg("%s element %zu: %a %a %a, want %a %a "
					 "%a",
					 usc_dtype_name(t), j, p.ulp_oracle[j],
					 p.oracle_mid[j], p.oracle_rad[j],
					 q.ulp_oracle[j], q.oracle_mid[j],
					 q.oracle_rad[j]);
		}
		usc__check_part_free(&p);
		usc__check_part_free(&q);
		usc_tensor_destroy(o.device);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_matches_elements),
		cmocka_unit_test(test_edge_of_resolution),
		cmocka_unit_test(test_check_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
