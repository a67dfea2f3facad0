/*
 * The built-in self-check behind "ulpscope formats --check".
 *
 * Known values come from outside this code: rows recorded from ml_dtypes
 * by tools/gen_format_tables.py and compiled in (selfcheck_*.inc).  On top
 * of them two identities are checked over every code of formats of at
 * most 16 bits: each code decodes and re-encodes to itself, and the
 * ordinal distance between consecutive finite codes is one.
 */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/ulpscope.h"

static const struct usc__sc_decode {
	usc_dtype t;
	uint32_t bits;
	double value;
} sc_decode[] = {
#include "selfcheck_decode.inc"
};

static const struct usc__sc_encode {
	usc_dtype t;
	uint32_t input; /* f32 bits */
	uint32_t code;
} sc_encode[] = {
#include "selfcheck_encode.inc"
};

static void failure(usc_selfcheck_result *r, const char *fmt, ...)
	USC__PRINTF(2, 3);

static void failure(usc_selfcheck_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed++ == 0) {
		va_start(ap, fmt);
		vsnprintf(r->first_failure, sizeof r->first_failure, fmt, ap);
		va_end(ap);
	}
}

/* Bitwise equality of doubles, but every NaN equals every NaN. */
static bool same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof a) == 0;
}

static void check_rows(usc_dtype t, usc_selfcheck_result *r)
{
	for (size_t i = 0; i < USC__ARRAY_LEN(sc_decode); i++) {
		const struct usc__sc_decode *row = &sc_decode[i];
		double d;

		if (row->t != t)
			continue;
		r->checked++;
		if (usc_decode_double(t, row->bits, &d) != USC_OK ||
		    !same_double(d, row->value))
			failure(r, "decode 0x%" PRIx32 ": got %a, expected %a",
				row->bits, d, row->value);
	}
	for (size_t i = 0; i < USC__ARRAY_LEN(sc_encode); i++) {
		const struct usc__sc_encode *row = &sc_encode[i];
		uint64_t bits;
		float x;
		bool ok;

		if (row->t != t)
			continue;
		r->checked++;
		memcpy(&x, &row->input, sizeof x);
		ok = usc_encode_double(t, x, NULL, &bits, NULL) == USC_OK;
		if (ok && usc_bits_is_nan(t, row->code))
			ok = usc_bits_is_nan(t, bits);
		else if (ok)
			ok = bits == row->code;
		if (!ok)
			failure(r,
				"encode %a (f32 0x%08" PRIx32 "): got 0x%" PRIx64
				", expected 0x%" PRIx32,
				(double)x, row->input, bits, row->code);
	}
}

static void check_identities(usc_dtype t, usc_selfcheck_result *r)
{
	const usc_format *f = usc_format_of(t);
	uint64_t ncodes, prev = 0;
	bool have_prev = false;

	if (f->bits > 16)
		return;
	ncodes = (uint64_t)1 << f->bits;
	for (uint64_t c = 0; c < ncodes; c++) {
		uint64_t back;
		double d;

		r->checked++;
		usc_decode_double(t, c, &d);
		usc_encode_double(t, d, NULL, &back, NULL);
		if (usc_bits_is_nan(t, c) ? !usc_bits_is_nan(t, back)
					  : back != c)
			failure(r, "code 0x%" PRIx64 " (%a) re-encodes to 0x%" PRIx64,
				c, d, back);
	}
	/* Walk the non-negative codes upward: each step is one ordinal. */
	for (uint64_t c = 0; c < ncodes; c++) {
		uint64_t sign = f->has_sign ? (uint64_t)1 << (f->bits - 1) : 0;
		int64_t dist;

		if ((c & sign) || usc_bits_is_nan(t, c))
			continue;
		if (have_prev) {
			r->checked++;
			if (usc_ulp_distance(t, prev, c, &dist) != USC_OK ||
			    dist != 1)
				failure(r,
					"ordinal distance 0x%" PRIx64
					" -> 0x%" PRIx64 " is not 1",
					prev, c);
		}
		prev = c;
		have_prev = true;
	}
}

/*
 * f32 and f64 have too many codes to walk; check a spread of them.  For
 * f32 the C implementation's own double-to-float conversion (IEEE 754
 * round-to-nearest-even on every platform ulpscope supports) is an
 * independent reference; f64 encodes doubles as themselves.
 */
static void check_wide(usc_dtype t, usc_selfcheck_result *r)
{
	uint64_t state = 0x9e3779b97f4a7c15u;

	if (t != USC_F32 && t != USC_F64)
		return;
	for (int i = 0; i < 4096; i++) {
		uint64_t raw, bits, want;
		double d;

		/* xorshift64*: a fixed, portable sequence of doubles. */
		state ^= state >> 12;
		state ^= state << 25;
		state ^= state >> 27;
		raw = state * 0x2545f4914f6cdd1du;
		memcpy(&d, &raw, sizeof d);
		if (t == USC_F32) {
			float f;
			uint32_t fb;

			/* Keep to the f32 range half the time. */
			if (i & 1)
				d = ldexp(frexp(d, &(int){0}), (int)(raw % 300) - 150);
			/*
			 * IEEE 754 overflow at the midpoint between FLT_MAX
			 * and 2^128 (converting beyond it is undefined in
			 * ISO C, so it is not asked of the compiler).
			 */
			if (!isnan(d) && fabs(d) >= 0x1.ffffffp127) {
				want = signbit(d) ? 0xff800000u : 0x7f800000u;
			} else {
				f = (float)d;
				memcpy(&fb, &f, sizeof fb);
				want = fb;
			}
		} else {
			want = raw;
		}
		r->checked++;
		usc_encode_double(t, d, NULL, &bits, NULL);
		if (isnan(d) ? !usc_bits_is_nan(t, bits) : bits != want)
			failure(r, "encode %a: got 0x%" PRIx64 ", expected 0x%" PRIx64,
				d, bits, want);
	}
}

usc_status usc_format_selfcheck(usc_dtype t, usc_selfcheck_result *out)
{
	memset(out, 0, sizeof *out);
	if (!usc_dtype_is_float(t))
		return USC_EINVAL;
	check_rows(t, out);
	check_identities(t, out);
	check_wide(t, out);
	return USC_OK;
}
