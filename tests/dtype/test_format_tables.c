/*
 * Checks decode, encode and the format figures of every floating format of
 * at most 16 bits against the reference tables in data/formats/, which
 * tools/gen_format_tables.py writes from ml_dtypes 0.6.0 (numpy for f16).
 * The tables come from outside ulpscope, so every expected value here does
 * too; data/formats/README.md describes the file layouts.
 *
 * Decode: every code of the format, compared bit for bit as doubles (+0 and
 * -0 differ, all NaNs are equal).  Encode: every float32 sample of the
 * table through usc_encode_double with the default rounding; NaN codes
 * match any NaN code.  Mismatches are listed (the first few per format)
 * before the test fails, so one run shows the whole picture.
 */
#include <errno.h>
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

/* Mismatches printed per format and check before the rest are counted. */
#define SHOW_MAX 12

struct table_format {
	usc_dtype t;
	const char *name; /* file stem, the HLO spelling */
	int bits;
};

/* The formats the generator writes tables for, in its order. */
static const struct table_format formats[] = {
	{USC_F16, "f16", 16},
	{USC_BF16, "bf16", 16},
	{USC_F8E5M2, "f8e5m2", 8},
	{USC_F8E4M3, "f8e4m3", 8},
	{USC_F8E4M3FN, "f8e4m3fn", 8},
	{USC_F8E4M3FNUZ, "f8e4m3fnuz", 8},
	{USC_F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
	{USC_F8E5M2FNUZ, "f8e5m2fnuz", 8},
	{USC_F8E3M4, "f8e3m4", 8},
	{USC_F8E8M0FNU, "f8e8m0fnu", 8},
	{USC_F6E2M3FN, "f6e2m3fn", 6},
	{USC_F6E3M2FN, "f6e3m2fn", 6},
	{USC_F4E2M1FN, "f4e2m1fn", 4},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

/* finfo.tsv also has rows for these; they have no decode table. */
static const struct table_format wide_formats[] = {
	{USC_F32, "f32", 32},
	{USC_F64, "f64", 64},
};

struct blob {
	unsigned char *data;
	size_t size;
};

static void table_path(char *buf, size_t size, const char *file)
{
	const char *root = getenv("USC_SOURCE_DIR");
	int n;

	if (root == NULL || root[0] == '\0')
		fail_msg("USC_SOURCE_DIR is not set: run this test through "
			 "ctest, or set it to the source tree");
	n = snprintf(buf, size, "%s/data/formats/%s", root, file);
	if (n < 0 || (size_t)n >= size)
		fail_msg("path of %s too long", file);
}

/* Reads a whole table file; a missing one fails the test, with its name. */
static struct blob read_table(const char *file)
{
	char path[4096];
	struct blob b = {NULL, 0};
	FILE *f;
	long len = 0;

	table_path(path, sizeof path, file);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("missing reference table %s (%s); regenerate it with "
			 "tools/gen_format_tables.py",
			 path, strerror(errno));
	if (f == NULL)
		return b; /* not reached: fail_msg does not return */
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		fail_msg("cannot size %s", path);
	}
	b.size = (size_t)len;
	b.data = malloc(b.size ? b.size : 1);
	assert_non_null(b.data);
	if (fread(b.data, 1, b.size, f) != b.size) {
		fclose(f);
		free(b.data);
		fail_msg("short read on %s", path);
	}
	fclose(f);
	return b;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t dbits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof u);
	return u;
}

/* Equal as the house compares floats: bitwise, but any NaN equals any NaN. */
static int same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return dbits(a) == dbits(b);
}

/*
 * Splits text into lines in place: returns the next line, NUL-terminated,
 * and advances *cursor past it; NULL at the end.
 */
static char *next_line(char **cursor)
{
	char *line = *cursor, *nl;

	if (line == NULL || *line == '\0')
		return NULL;
	nl = strchr(line, '\n');
	if (nl != NULL) {
		*nl = '\0';
		*cursor = nl + 1;
	} else {
		*cursor = line + strlen(line);
	}
	return line;
}

/* The decode table of a format: 2^bits doubles, checked for size. */
static double *load_decode(const struct table_format *f)
{
	char file[64];
	struct blob b;
	size_t n = (size_t)1 << f->bits;
	double *v;

	snprintf(file, sizeof file, "%s.decode.bin", f->name);
	b = read_table(file);
	if (b.size != n * 8) {
		free(b.data);
		fail_msg("%s: %zu bytes, expected %zu (one float64 per code)",
			 file, b.size, n * 8);
	}
	v = malloc(n * sizeof *v);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		uint64_t u = le64(b.data + 8 * i);

		memcpy(&v[i], &u, sizeof v[i]);
	}
	free(b.data);
	return v;
}

/*
 * The record counts manifest.tsv states for a format, so a truncated or
 * stale table is caught rather than silently checking less.
 */
static void manifest_counts(const char *name, long *dec, long *enc)
{
	struct blob b = read_table("manifest.tsv");
	char *text = malloc(b.size + 1);
	char *line, *save = NULL;
	int found = 0;

	assert_non_null(text);
	memcpy(text, b.data, b.size);
	text[b.size] = '\0';
	free(b.data);
	save = text;
	while ((line = next_line(&save)) != NULL) {
		char n[64], ml[64];
		int bits;

		if (sscanf(line, "%63s %63s %d %ld %ld", n, ml, &bits, dec,
			   enc) == 5 &&
		    strcmp(n, name) == 0) {
			found = 1;
			break;
		}
	}
	free(text);
	if (!found)
		fail_msg("manifest.tsv has no row for %s", name);
}

static void test_decode_tables(void **state)
{
	long total = 0, bad_total = 0;

	(void)state;
	for (size_t k = 0; k < N_FORMATS; k++) {
		const struct table_format *f = &formats[k];
		double *want = load_decode(f);
		uint64_t n = (uint64_t)1 << f->bits;
		long bad = 0, dec_count, enc_count;

		manifest_counts(f->name, &dec_count, &enc_count);
		assert_int_equal(dec_count, (long)n);
		for (uint64_t c = 0; c < n; c++) {
			double got = 0.0;
			usc_status st = usc_decode_double(f->t, c, &got);
			int ok = st == USC_OK && same_double(got, want[c]);

			/* The predicates must agree with the table too. */
			ok = ok && usc_bits_is_nan(f->t, c) == !!isnan(want[c]);
			ok = ok && usc_bits_is_inf(f->t, c) == !!isinf(want[c]);
			/* Bits above the width are ignored. */
			if (ok && f->bits < 64) {
				double hi = 0.0;

				ok = usc_decode_double(f->t, c | n, &hi) ==
					     USC_OK &&
				     same_double(hi, want[c]);
			}
			if (!ok && bad++ < SHOW_MAX)
				print_message(
					"decode %s 0x%llx: expected %a, got %a "
					"(status %d, is_nan %d, is_inf %d)\n",
					f->name, (unsigned long long)c,
					want[c], got, (int)st,
					(int)usc_bits_is_nan(f->t, c),
					(int)usc_bits_is_inf(f->t, c));
		}
		print_message("decode %-14s %6llu codes, %ld mismatches\n",
			      f->name, (unsigned long long)n, bad);
		total += (long)n;
		bad_total += bad;
		free(want);
	}
	print_message("decode: %ld codes checked, %ld mismatches\n", total,
		      bad_total);
	assert_int_equal(bad_total, 0);
}

static void test_encode_tables(void **state)
{
	long total = 0, bad_total = 0, flag_total = 0;

	(void)state;
	for (size_t k = 0; k < N_FORMATS; k++) {
		const struct table_format *f = &formats[k];
		double *val = load_decode(f);
		uint64_t mask = ((uint64_t)1 << f->bits) - 1;
		char file[64];
		struct blob b;
		size_t n;
		long bad = 0, flag_bad = 0, dec_count, enc_count;

		manifest_counts(f->name, &dec_count, &enc_count);
		snprintf(file, sizeof file, "%s.encode.bin", f->name);
		b = read_table(file);
		if (b.size % 8 != 0 || b.size / 8 != (size_t)enc_count) {
			free(b.data);
			free(val);
			fail_msg("%s: %zu bytes, manifest.tsv says %ld "
				 "8-byte records",
				 file, b.size, enc_count);
		}
		n = b.size / 8;
		for (size_t i = 0; i < n; i++) {
			uint32_t in_bits = le32(b.data + 8 * i);
			uint64_t want = le32(b.data + 8 * i + 4);
			uint64_t got = 0;
			unsigned flags = 0;
			float in;
			double x;
			usc_status st;
			int ok;

			memcpy(&in, &in_bits, sizeof in);
			x = (double)in;
			st = usc_encode_double(f->t, x, NULL, &got, &flags);
			if (want > mask) {
				free(b.data);
				free(val);
				fail_msg("%s record %zu: code 0x%llx exceeds "
					 "the width",
					 file, i, (unsigned long long)want);
			}
			if (st != USC_OK)
				ok = 0;
			else if (isnan(val[want]))
				ok = got <= mask && isnan(val[got]) &&
				     usc_bits_is_nan(f->t, got);
			else
				ok = got == want;
			if (!ok && bad++ < SHOW_MAX)
				print_message("encode %s f32 0x%08lx (%a): "
					      "expected 0x%llx (%a), got "
					      "0x%llx (status %d)\n",
					      f->name, (unsigned long)in_bits,
					      x, (unsigned long long)want,
					      val[want],
					      (unsigned long long)got,
					      (int)st);
			/*
			 * INEXACT says the result differs from the input;
			 * checked where both are numbers.
			 */
			if (ok && isfinite(x) && !isnan(val[want])) {
				int inexact = !(val[want] == x);

				if (inexact != !!(flags & USC_FLAG_INEXACT) &&
				    flag_bad++ < SHOW_MAX)
					print_message(
						"flags %s f32 0x%08lx (%a) -> "
						"0x%llx: INEXACT should be "
						"%d, flags 0x%x\n",
						f->name,
						(unsigned long)in_bits, x,
						(unsigned long long)want,
						inexact, flags);
			}
		}
		print_message("encode %-14s %7zu f32 inputs, %ld mismatches, "
			      "%ld INEXACT flag mismatches\n",
			      f->name, n, bad, flag_bad);
		total += (long)n;
		bad_total += bad;
		flag_total += flag_bad;
		free(b.data);
		free(val);
	}
	print_message("encode: %ld inputs checked, %ld mismatches, %ld flag "
		      "mismatches\n",
		      total, bad_total, flag_total);
	assert_int_equal(bad_total, 0);
	assert_int_equal(flag_total, 0);
}

/* The index of a format in formats[] then wide_formats[]; -1 if none. */
static int find_format(const char *name)
{
	for (size_t k = 0; k < N_FORMATS; k++)
		if (strcmp(formats[k].name, name) == 0)
			return (int)k;
	for (size_t k = 0; k < 2; k++)
		if (strcmp(wide_formats[k].name, name) == 0)
			return (int)(N_FORMATS + k);
	return -1;
}

static const struct table_format *format_at(size_t k)
{
	return k < N_FORMATS ? &formats[k] : &wide_formats[k - N_FORMATS];
}

static long check_figure(const char *name, const char *what, double want,
			 double got)
{
	if (dbits(want) == dbits(got))
		return 0;
	print_message("finfo %s %s: expected %a, got %a\n", name, what, want,
		      got);
	return 1;
}

/*
 * usc_float_info_of and the descriptor against ml_dtypes.finfo (numpy's
 * finfo for f32 and f64).  The special encodings the info names must
 * decode, per the decode table, to what they claim.
 */
static void test_finfo(void **state)
{
	struct blob b = read_table("finfo.tsv");
	char *text = malloc(b.size + 1);
	char *line, *save = NULL;
	long rows = 0, bad = 0;
	int seen[N_FORMATS + 2] = {0};

	(void)state;
	assert_non_null(text);
	memcpy(text, b.data, b.size);
	text[b.size] = '\0';
	free(b.data);
	save = text;
	while ((line = next_line(&save)) != NULL) {
		char name[64], ml[64], smax[64], snorm[64], ssub[64], seps[64];
		int bits, nexp, nmant, k;
		const struct table_format *f;
		const usc_format *d;
		usc_float_info fi;
		double vmax, vnorm, vsub, veps;

		if (strncmp(line, "name\t", 5) == 0)
			continue; /* the header */
		if (sscanf(line, "%63s %63s %d %d %d %63s %63s %63s %63s",
			   name, ml, &bits, &nexp, &nmant, smax, snorm, ssub,
			   seps) != 9) {
			free(text);
			fail_msg("finfo.tsv: bad line: %s", line);
		}
		k = find_format(name);
		if (k < 0) {
			free(text);
			fail_msg("finfo.tsv: unknown format %s", name);
			return;
		}
		seen[k] = 1;
		f = format_at((size_t)k);
		vmax = strtod(smax, NULL);
		vnorm = strtod(snorm, NULL);
		vsub = strtod(ssub, NULL);
		veps = strtod(seps, NULL);
		rows++;
		d = usc_format_of(f->t);
		if (d == NULL || usc_float_info_of(f->t, &fi) != USC_OK) {
			print_message("finfo %s: no float info\n", name);
			bad++;
			continue;
		}
		if (d->bits != bits || d->exp_bits != nexp ||
		    d->man_bits != nmant) {
			print_message("finfo %s: bits/nexp/nmant expected "
				      "%d/%d/%d, got %d/%d/%d\n",
				      name, bits, nexp, nmant, d->bits,
				      d->exp_bits, d->man_bits);
			bad++;
		}
		if (fi.precision != nmant + 1) {
			print_message("finfo %s: precision %d, expected %d\n",
				      name, fi.precision, nmant + 1);
			bad++;
		}
		bad += check_figure(name, "max", vmax, fi.max_finite);
		bad += check_figure(name, "smallest_normal", vnorm,
				    fi.min_normal);
		bad += check_figure(name, "smallest_subnormal", vsub,
				    fi.min_subnormal);
		bad += check_figure(name, "eps", veps, fi.epsilon);
		bad += check_figure(name, "2^emin", vnorm, ldexp(1.0, fi.emin));
		bad += check_figure(name, "max binade 2^emax",
				    ldexp(1.0, ilogb(vmax)),
				    ldexp(1.0, fi.emax));

		/* The encodings: checked through the decode table. */
		if (f->bits <= 16) {
			double *val = load_decode(f);
			uint64_t n = (uint64_t)1 << f->bits;

			if (fi.max_finite_bits >= n ||
			    fi.min_subnormal_bits >= n ||
			    fi.inf_bits >= n || fi.nan_bits >= n ||
			    fi.sign_mask >= n) {
				print_message("finfo %s: an encoding exceeds "
					      "the width\n",
					      name);
				bad++;
			} else {
				bad += check_figure(name, "max_finite_bits",
						    vmax,
						    val[fi.max_finite_bits]);
				bad += check_figure(
					name, "min_subnormal_bits", vsub,
					val[fi.min_subnormal_bits]);
				/* inf_bits: +Inf where the table has one. */
				if (!!isinf(val[fi.inf_bits]) !=
					    (fi.inf_bits != 0) ||
				    (fi.inf_bits && val[fi.inf_bits] < 0)) {
					print_message("finfo %s: inf_bits "
						      "0x%llx\n",
						      name,
						      (unsigned long long)
							      fi.inf_bits);
					bad++;
				}
				if (fi.nan_bits != 0 &&
				    !isnan(val[fi.nan_bits])) {
					print_message("finfo %s: nan_bits "
						      "0x%llx is no NaN\n",
						      name,
						      (unsigned long long)
							      fi.nan_bits);
					bad++;
				}
				/*
				 * Flipping the sign bit of 1 must give -1 in
				 * every format that has a sign.
				 */
				if (fi.sign_mask != 0) {
					uint64_t one = n;

					for (uint64_t c = 0; c < n; c++)
						if (val[c] == 1.0)
							one = c;
					if (one == n ||
					    val[one ^ fi.sign_mask] != -1.0) {
						print_message(
							"finfo %s: sign_mask "
							"0x%llx\n",
							name,
							(unsigned long long)
								fi.sign_mask);
						bad++;
					}
				}
			}
			free(val);
		}
	}
	free(text);
	for (size_t k = 0; k < N_FORMATS + 2; k++)
		if (!seen[k]) {
			print_message("finfo.tsv lacks %s\n",
				      format_at(k)->name);
			bad++;
		}
	print_message("finfo: %ld formats checked, %ld mismatches\n", rows,
		      bad);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_tables),
		cmocka_unit_test(test_encode_tables),
		cmocka_unit_test(test_finfo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
