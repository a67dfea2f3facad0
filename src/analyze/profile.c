/*
 * ulpscope: device profiles.  The text format (docs/profiles.md), its
 * validating parser, the canonical printer, and the built-in profiles,
 * which are the files under data/profiles/ embedded at build time.
 *
 * The parser never allocates and never trusts its input: every line is
 * checked for NUL bytes, length and UTF-8 before it is split, and every
 * error names the file and the line.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/profile_builtin.h"
#include "ulpscope/profile.h"

/* Longest line accepted, newline excluded: profiles are short key = value lines. */
#define LINE_MAX_BYTES 1024
/* Largest profile file read: a profile has about forty lines. */
#define FILE_MAX_BYTES (1024 * 1024)
/* The accuracy range: 0.5 is correctly rounded; 2^20 ulps is not a bound. */
#define ACCURACY_MIN 0.5
#define ACCURACY_MAX 1048576.0
/*
 * How deep bases may nest: a user's file (0) on xla-cpu-fast-math (1),
 * which is xla-cpu (2) plus its freedoms, which starts from strict's
 * defaults (3).  A user file's base is a built-in, never another file, so
 * deeper means a built-in table is wrong.
 */
#define BASE_DEPTH_MAX 3

/* ------------------------------------------------------------------ */
/* Tables                                                              */

static const char *const fn_keys[USC_PFN_COUNT] = {
#define USC_X_(e, key, op) key,
	USC_PROFILE_FN_LIST(USC_X_)
#undef USC_X_
};

static const char *const fn_opcodes[USC_PFN_COUNT] = {
#define USC_X_(e, key, op) op,
	USC_PROFILE_FN_LIST(USC_X_)
#undef USC_X_
};

static const char *const dot_f32_names[] = {"full", "tf32", "bf16x6", "bf16x3",
					    "bf16x1"};
static const char *const fp8_overflow_names[] = {"nonsaturating", "saturating",
						 "either"};
static const char *const minmax_nan_names[] = {"propagate", "drop", "either"};
/* Indexed by the USC_FLUSH_* bit set. */
static const char *const flush_names[] = {"none", "inputs", "outputs", "both"};
static const char *const flush_mode_names[] = {"may", "always"};
static const char *const nonfinite_names[] = {"ieee", "undefined"};
static const char *const divide_reciprocal_names[] = {"no", "constant", "any"};

/* The keys with a fixed spelling, in canonical order. */
enum key_id {
	K_NAME,
	K_DESCRIPTION,
	K_BASE,
	K_EXCESS,
	K_EXCESS_TYPE,
	K_FMA,
	K_REASSOC,
	K_REASSOC_DOT,
	K_DOT_ACC,
	K_FP8_DOT_ACC,
	K_DOT_F32,
	K_ACC_ALL,
	K_FLUSH_ALL,
	K_FP8_OVF,
	K_MINMAX,
	K_COMPUTE_TYPE,
	K_FLUSH_MODE,
	K_NONFINITE,
	K_DIV_RECIP,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
	"name", "description", "base", "excess_precision", "excess_type",
	"fma", "reassociate", "reassociate_dot", "dot_accumulation",
	"fp8_dot_accumulation", "dot_f32", "accuracy.all", "flush.all",
	"fp8_overflow", "minmax_nan", "compute_type", "flush_mode",
	"nonfinite", "divide_reciprocal",
};

const char *usc_profile_fn_key(usc_profile_fn fn)
{
	return (unsigned)fn < USC_PFN_COUNT ? fn_keys[fn] : "invalid";
}

const char *usc_profile_fn_opcode(usc_profile_fn fn)
{
	return (unsigned)fn < USC_PFN_COUNT ? fn_opcodes[fn] : "invalid";
}

const char *const *usc_profile_builtin_names(void)
{
	return usc__profile_names;
}

/* ------------------------------------------------------------------ */
/* Text helpers                                                        */

/* A slice of the input: not NUL-terminated. */
typedef struct span {
	const char *p;
	size_t n;
} span;

static bool span_is(span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static span trim(span s)
{
	while (s.n > 0 && is_space(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n > 0 && is_space(s.p[s.n - 1]))
		s.n--;
	return s;
}

/*
 * The length of the valid UTF-8 prefix of s (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF).
 */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i];
		size_t len;
		unsigned min, cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2, min = 0x80, cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, min = 0x800, cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, min = 0x10000, cp = c & 0x07;
		} else {
			return i;
		}
		if (n - i < len)
			return i;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += len;
	}
	return n;
}

/*
 * Copies s into buf for a message: at most 48 bytes (then "..."), control
 * characters shown as '?', so a hostile file cannot flood or drive the
 * terminal through an error message.
 */
static const char *show(char *buf, size_t size, span s)
{
	size_t n = s.n > 48 ? 48 : s.n, o = 0;

	for (size_t i = 0; i < n && o + 4 < size; i++) {
		unsigned char c = (unsigned char)s.p[i];

		buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (n < s.n && o + 4 < size) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* Levenshtein distance, capped: enough to suggest a near key. */
static size_t edit_distance(span a, const char *b)
{
	size_t nb = strlen(b), row[64];

	if (a.n >= 63 || nb >= 63)
		return 99;
	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= a.n; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a.p[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* ------------------------------------------------------------------ */
/* The parser                                                          */

typedef struct parser {
	const char *file;
	unsigned long line;
	usc_error *err;
	usc_profile *out;
	int depth;
	bool any_key;
	bool seen[K_COUNT];
	bool seen_acc[USC_PFN_COUNT];
	bool seen_flush[USC_DTYPE_COUNT];
	double acc_all;
	unsigned char flush_all;
} parser;

static usc_status parse_text(const char *text, size_t len, const char *file,
			     usc_profile *out, usc_error *err, int depth);

static usc_status builtin_at(const char *name, usc_profile *out,
			     usc_error *err, int depth);

static usc_status line_fail(parser *ps, const char *fmt, ...) USC__PRINTF(2, 3);

static usc_status line_fail(parser *ps, const char *fmt, ...)
{
	char msg[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return usc__fail(ps->err, USC_EPARSE, "%s:%lu: %s", ps->file, ps->line,
			 msg);
}

static usc_status bad_value(parser *ps, span key, span value,
			    const char *expected)
{
	char k[64], v[64];

	return line_fail(ps, "bad value '%s' for '%s' (expected %s)",
			 show(v, sizeof v, value), show(k, sizeof k, key),
			 expected);
}

/* "f16 bf16 f32 ..." : the real floating types, for messages. */
static void float_type_list(char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		if (!usc_dtype_is_float((usc_dtype)t))
			continue;
		int w = snprintf(buf + o, size - o, "%s%s", o ? " " : "",
				 usc_dtype_name((usc_dtype)t));
		if (w < 0 || (size_t)w >= size - o)
			break;
		o += (size_t)w;
	}
}

static usc_status parse_bool(parser *ps, span key, span v, bool *out)
{
	if (span_is(v, "yes"))
		*out = true;
	else if (span_is(v, "no"))
		*out = false;
	else
		return bad_value(ps, key, v, "yes or no");
	return USC_OK;
}

static bool float_type_of(span v, usc_dtype *out)
{
	usc_dtype t;

	if (v.n == 0 || usc_dtype_from_name(v.p, v.n, &t) != USC_OK ||
	    !usc_dtype_is_float(t))
		return false;
	*out = t;
	return true;
}

static usc_status parse_float_type(parser *ps, span key, span v,
				   bool allow_declared, usc_dtype *out)
{
	char list[512], expected[600];

	if (allow_declared && span_is(v, "declared")) {
		*out = USC_DTYPE_INVALID;
		return USC_OK;
	}
	if (float_type_of(v, out))
		return USC_OK;
	float_type_list(list, sizeof list);
	snprintf(expected, sizeof expected, "%sa floating-point type: %s",
		 allow_declared ? "declared or " : "", list);
	return bad_value(ps, key, v, expected);
}

static usc_status parse_enum(parser *ps, span key, span v,
			     const char *const *names, size_t count, int *out)
{
	char expected[256];
	size_t o = 0;

	for (size_t i = 0; i < count; i++) {
		if (span_is(v, names[i])) {
			*out = (int)i;
			return USC_OK;
		}
	}
	expected[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		int w = snprintf(expected + o, sizeof expected - o, "%s%s",
				 i == 0 ? "" : i + 1 == count ? " or " : ", ",
				 names[i]);
		if (w < 0 || (size_t)w >= sizeof expected - o)
			break;
		o += (size_t)w;
	}
	return bad_value(ps, key, v, expected);
}

/*
 * A plain decimal: digits, an optional fraction, an optional exponent.
 * No sign, no hex, no inf or nan: strtod alone would take all of those.
 */
static bool is_decimal(span v)
{
	size_t i = 0, digits = 0;

	while (i < v.n && v.p[i] >= '0' && v.p[i] <= '9')
		i++, digits++;
	if (i < v.n && v.p[i] == '.') {
		i++;
		while (i < v.n && v.p[i] >= '0' && v.p[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return false;
	if (i < v.n && (v.p[i] == 'e' || v.p[i] == 'E')) {
		size_t exp_digits = 0;

		i++;
		if (i < v.n && (v.p[i] == '+' || v.p[i] == '-'))
			i++;
		while (i < v.n && v.p[i] >= '0' && v.p[i] <= '9')
			i++, exp_digits++;
		if (exp_digits == 0)
			return false;
	}
	return i == v.n;
}

static usc_status parse_ulps(parser *ps, span key, span v, double *out)
{
	static const char expected[] =
		"a decimal number of ulps, at least 0.5 and at most 1048576";
	char buf[LINE_MAX_BYTES + 1];
	double d;

	if (!is_decimal(v) || v.n >= sizeof buf)
		return bad_value(ps, key, v, expected);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	d = strtod(buf, NULL);
	if (!isfinite(d) || d < ACCURACY_MIN || d > ACCURACY_MAX)
		return bad_value(ps, key, v, expected);
	*out = d;
	return USC_OK;
}

static bool valid_name(span v)
{
	if (v.n == 0 || v.n >= USC_PROFILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < v.n; i++) {
		char c = v.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static bool valid_description(span v)
{
	if (v.n >= USC_PROFILE_DESCRIPTION_MAX)
		return false;
	for (size_t i = 0; i < v.n; i++) {
		unsigned char c = (unsigned char)v.p[i];

		if (c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

/* Suggests the nearest known key for an unknown one. */
static usc_status unknown_key(parser *ps, span key)
{
	const char *best = NULL;
	size_t best_d = 3;
	char k[64], cand[64];

	for (int i = 0; i < K_COUNT; i++) {
		size_t d = edit_distance(key, key_names[i]);

		if (d < best_d)
			best_d = d, best = key_names[i];
	}
	for (int f = 0; f < USC_PFN_COUNT; f++) {
		snprintf(cand, sizeof cand, "accuracy.%s", fn_keys[f]);
		size_t d = edit_distance(key, cand);

		if (d < best_d)
			best_d = d, best = fn_keys[f];
	}
	if (best != NULL && best_d < key.n) {
		bool is_fn = false;

		for (int f = 0; f < USC_PFN_COUNT; f++)
			if (best == fn_keys[f])
				is_fn = true;
		return line_fail(ps, "unknown key '%s' (did you mean '%s%s'?)",
				 show(k, sizeof k, key),
				 is_fn ? "accuracy." : "", best);
	}
	return line_fail(ps,
			 "unknown key '%s' (expected one of: name, description, "
			 "base, excess_precision, excess_type, fma, reassociate, "
			 "reassociate_dot, dot_accumulation, "
			 "fp8_dot_accumulation, dot_f32, compute_type, "
			 "accuracy.FN, flush.TYPE, flush_mode, nonfinite, "
			 "fp8_overflow, minmax_nan, divide_reciprocal; see "
			 "docs/profiles.md)",
			 show(k, sizeof k, key));
}

static usc_status given_twice(parser *ps, span key)
{
	char k[64];

	return line_fail(ps, "'%s' given twice", show(k, sizeof k, key));
}

/* accuracy.FN = ULPS: FN is a USC_PROFILE_FN_LIST key or "all". */
static usc_status set_accuracy(parser *ps, span key, span fn, span v)
{
	char list[256], k[64];
	size_t o = 0;
	double d;
	usc_status st;

	if (span_is(fn, "all")) {
		if (ps->seen[K_ACC_ALL])
			return given_twice(ps, key);
		if ((st = parse_ulps(ps, key, v, &d)) != USC_OK)
			return st;
		ps->seen[K_ACC_ALL] = true;
		ps->acc_all = d;
		return USC_OK;
	}
	for (int f = 0; f < USC_PFN_COUNT; f++) {
		if (!span_is(fn, fn_keys[f]))
			continue;
		if (ps->seen_acc[f])
			return given_twice(ps, key);
		if ((st = parse_ulps(ps, key, v, &d)) != USC_OK)
			return st;
		ps->seen_acc[f] = true;
		ps->out->accuracy[f] = d;
		return USC_OK;
	}
	list[0] = '\0';
	for (int f = 0; f < USC_PFN_COUNT; f++) {
		int w = snprintf(list + o, sizeof list - o, "%s ", fn_keys[f]);
		if (w < 0 || (size_t)w >= sizeof list - o)
			break;
		o += (size_t)w;
	}
	return line_fail(ps, "unknown key '%s' (expected accuracy.FN with FN "
			 "one of: %sall)", show(k, sizeof k, key), list);
}

/* flush.TYPE = none | inputs | outputs | both: TYPE a float type or "all". */
static usc_status set_flush(parser *ps, span key, span type, span v)
{
	char list[512], k[64], t[64];
	usc_dtype dt;
	int mode;
	usc_status st;

	if (span_is(type, "all")) {
		if (ps->seen[K_FLUSH_ALL])
			return given_twice(ps, key);
		if ((st = parse_enum(ps, key, v, flush_names, 4, &mode)) !=
		    USC_OK)
			return st;
		ps->seen[K_FLUSH_ALL] = true;
		ps->flush_all = (unsigned char)mode;
		return USC_OK;
	}
	if (float_type_of(type, &dt)) {
		if (ps->seen_flush[dt])
			return given_twice(ps, key);
		if ((st = parse_enum(ps, key, v, flush_names, 4, &mode)) !=
		    USC_OK)
			return st;
		ps->seen_flush[dt] = true;
		ps->out->flush[dt] = (unsigned char)mode;
		return USC_OK;
	}
	float_type_list(list, sizeof list);
	if (type.n > 0 && usc_dtype_from_name(type.p, type.n, &dt) == USC_OK)
		return line_fail(ps, "'%s' in '%s' is not a floating-point "
				 "type (expected one of: %s, or all)",
				 show(t, sizeof t, type),
				 show(k, sizeof k, key), list);
	return line_fail(ps, "unknown type '%s' in '%s' (expected one of: %s, "
			 "or all)", show(t, sizeof t, type),
			 show(k, sizeof k, key), list);
}

static usc_status set_base(parser *ps, span key, span v)
{
	char name[USC_PROFILE_NAME_MAX], list[256], shown[64];
	const char *const *names = usc_profile_builtin_names();
	size_t o = 0;
	usc_error sub;
	usc_status st;

	if (ps->seen[K_BASE])
		return given_twice(ps, key);
	if (ps->any_key)
		return line_fail(ps, "'base' must be the first key");
	ps->seen[K_BASE] = true;
	if (valid_name(v)) {
		memcpy(name, v.p, v.n);
		name[v.n] = '\0';
		for (size_t i = 0; names[i] != NULL; i++) {
			if (strcmp(names[i], name) != 0)
				continue;
			st = builtin_at(name, ps->out, &sub, ps->depth + 1);
			if (st != USC_OK)
				return usc__fail(ps->err, st, "%s:%lu: base '%s': %s",
						 ps->file, ps->line, name,
						 sub.message);
			/* The base's name and description are not inherited. */
			ps->out->name[0] = '\0';
			ps->out->description[0] = '\0';
			return USC_OK;
		}
	}
	list[0] = '\0';
	for (size_t i = 0; names[i] != NULL; i++) {
		int w = snprintf(list + o, sizeof list - o, "%s%s",
				 i ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= sizeof list - o)
			break;
		o += (size_t)w;
	}
	return line_fail(ps, "unknown base profile '%s' (expected one of: %s)",
			 show(shown, sizeof shown, v), list);
}

static usc_status set_key(parser *ps, span key, span v)
{
	usc_profile *p = ps->out;
	int id = -1, e;
	usc_status st;

	if (key.n > 9 && memcmp(key.p, "accuracy.", 9) == 0) {
		span fn = {key.p + 9, key.n - 9};

		st = set_accuracy(ps, key, fn, v);
		ps->any_key = true;
		return st;
	}
	if (key.n > 6 && memcmp(key.p, "flush.", 6) == 0) {
		span type = {key.p + 6, key.n - 6};

		st = set_flush(ps, key, type, v);
		ps->any_key = true;
		return st;
	}
	for (int i = 0; i < K_COUNT; i++)
		if (i != K_ACC_ALL && i != K_FLUSH_ALL &&
		    span_is(key, key_names[i]))
			id = i;
	if (id < 0)
		return unknown_key(ps, key);
	if (id == K_BASE)
		return set_base(ps, key, v);
	if (ps->seen[id])
		return given_twice(ps, key);
	ps->seen[id] = true;
	ps->any_key = true;

	switch ((enum key_id)id) {
	case K_NAME:
		if (!valid_name(v))
			return bad_value(ps, key, v,
					 "1 to 63 of a-z 0-9 . _ -");
		memcpy(p->name, v.p, v.n);
		p->name[v.n] = '\0';
		return USC_OK;
	case K_DESCRIPTION:
		if (!valid_description(v))
			return bad_value(ps, key, v,
					 "one line of at most 127 bytes");
		memcpy(p->description, v.p, v.n);
		p->description[v.n] = '\0';
		return USC_OK;
	case K_EXCESS:
		return parse_bool(ps, key, v, &p->excess_precision);
	case K_EXCESS_TYPE:
		return parse_float_type(ps, key, v, false, &p->excess_type);
	case K_FMA:
		return parse_bool(ps, key, v, &p->fma);
	case K_REASSOC:
		return parse_bool(ps, key, v, &p->reassociate);
	case K_REASSOC_DOT:
		return parse_bool(ps, key, v, &p->reassociate_dot);
	case K_DOT_ACC:
		return parse_float_type(ps, key, v, true, &p->dot_accumulation);
	case K_FP8_DOT_ACC:
		return parse_float_type(ps, key, v, true,
					&p->fp8_dot_accumulation);
	case K_DOT_F32:
		st = parse_enum(ps, key, v, dot_f32_names,
				USC__ARRAY_LEN(dot_f32_names), &e);
		if (st == USC_OK)
			p->dot_f32 = (usc_profile_dot_f32)e;
		return st;
	case K_FP8_OVF:
		st = parse_enum(ps, key, v, fp8_overflow_names,
				USC__ARRAY_LEN(fp8_overflow_names), &e);
		if (st == USC_OK)
			p->fp8_overflow = (usc_profile_fp8_overflow)e;
		return st;
	case K_MINMAX:
		st = parse_enum(ps, key, v, minmax_nan_names,
				USC__ARRAY_LEN(minmax_nan_names), &e);
		if (st == USC_OK)
			p->minmax_nan = (usc_profile_minmax_nan)e;
		return st;
	case K_COMPUTE_TYPE:
		return parse_float_type(ps, key, v, true, &p->compute_type);
	case K_FLUSH_MODE:
		st = parse_enum(ps, key, v, flush_mode_names,
				USC__ARRAY_LEN(flush_mode_names), &e);
		if (st == USC_OK)
			p->flush_always = e == 1;
		return st;
	case K_NONFINITE:
		st = parse_enum(ps, key, v, nonfinite_names,
				USC__ARRAY_LEN(nonfinite_names), &e);
		if (st == USC_OK)
			p->nonfinite_undefined = e == 1;
		return st;
	case K_DIV_RECIP:
		st = parse_enum(ps, key, v, divide_reciprocal_names,
				USC__ARRAY_LEN(divide_reciprocal_names), &e);
		if (st == USC_OK)
			p->divide_reciprocal = (usc_profile_divide_reciprocal)e;
		return st;
	case K_BASE:
	case K_ACC_ALL:
	case K_FLUSH_ALL:
	case K_COUNT:
		break;
	}
	return usc__fail(ps->err, USC_EINTERNAL, "%s:%lu: unhandled key",
			 ps->file, ps->line);
}

static usc_status parse_line(parser *ps, span line)
{
	const char *hash = memchr(line.p, '#', line.n);
	const char *eq;
	span key, value;

	if (hash != NULL)
		line.n = (size_t)(hash - line.p);
	line = trim(line);
	if (line.n == 0)
		return USC_OK;
	eq = memchr(line.p, '=', line.n);
	if (eq == NULL)
		return line_fail(ps, "expected 'key = value'");
	key = trim((span){line.p, (size_t)(eq - line.p)});
	value = trim((span){eq + 1, line.n - (size_t)(eq - line.p) - 1});
	if (key.n == 0 || value.n == 0)
		return line_fail(ps, "expected 'key = value'");
	return set_key(ps, key, value);
}

static bool is_strict_text(const char *text)
{
	for (size_t i = 0; i < usc__profile_text_count; i++)
		if (strcmp(usc__profile_texts[i].name, "strict") == 0)
			return (const char *)usc__profile_texts[i].text == text;
	return false;
}

/* The profile every file starts from when it names no base: strict. */
static usc_status start_profile(parser *ps)
{
	usc_error sub;
	usc_status st = builtin_at("strict", ps->out, &sub, ps->depth + 1);

	if (st != USC_OK)
		return usc__fail(ps->err, USC_EINTERNAL,
				 "the built-in profile 'strict': %s",
				 sub.message);
	ps->out->name[0] = '\0';
	ps->out->description[0] = '\0';
	return USC_OK;
}

static usc_status parse_text(const char *text, size_t len, const char *file,
			     usc_profile *out, usc_error *err, int depth)
{
	parser ps;
	usc_profile p;
	size_t pos = 0;
	usc_status st;

	if (file == NULL)
		file = "<profile>";
	if (text == NULL && len > 0)
		return usc__fail(err, USC_EINVAL, "%s: no text", file);
	if (depth > BASE_DEPTH_MAX)
		return usc__fail(err, USC_EINTERNAL,
				 "%s: base profiles nested too deeply", file);
	memset(&ps, 0, sizeof ps);
	memset(&p, 0, sizeof p);
	ps.file = file;
	ps.err = err;
	ps.out = &p;
	ps.depth = depth;
	/*
	 * Every profile starts from strict but strict itself, which is
	 * parsed from zeroes: it sets every key (a key it forgot would leave
	 * an accuracy of 0, which usc_profile_format and the tests reject).
	 */
	if (!is_strict_text(text) && (st = start_profile(&ps)) != USC_OK)
		return st;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		span line = {text + pos, end - pos};
		size_t valid;

		ps.line++;
		if (memchr(line.p, '\0', line.n) != NULL)
			return line_fail(&ps, "NUL byte in the text (a profile "
					 "is UTF-8 text)");
		if (line.n > LINE_MAX_BYTES)
			return line_fail(&ps, "line longer than %d bytes",
					 LINE_MAX_BYTES);
		valid = utf8_valid_prefix((const unsigned char *)line.p,
					  line.n);
		if (valid < line.n)
			return line_fail(&ps, "invalid UTF-8 at byte %zu (a "
					 "profile is UTF-8 text)", valid + 1);
		if ((st = parse_line(&ps, line)) != USC_OK)
			return st;
		pos = nl ? end + 1 : len;
	}

	if (!ps.seen[K_NAME])
		return usc__fail(err, USC_EPARSE, "%s: no 'name' key", file);
	/* accuracy.all and flush.all fill what no explicit key set. */
	if (ps.seen[K_ACC_ALL])
		for (int f = 0; f < USC_PFN_COUNT; f++)
			if (!ps.seen_acc[f])
				p.accuracy[f] = ps.acc_all;
	if (ps.seen[K_FLUSH_ALL])
		for (int t = 0; t < USC_DTYPE_COUNT; t++)
			if (usc_dtype_is_float((usc_dtype)t) && !ps.seen_flush[t])
				p.flush[t] = ps.flush_all;
	*out = p;
	return USC_OK;
}

usc_status usc_profile_parse(const char *text, size_t len,
			     const char *filename, usc_profile *out,
			     usc_error *err)
{
	if (out == NULL)
		return usc__fail(err, USC_EINVAL, "no profile to parse into");
	return parse_text(text, len, filename, out, err, 0);
}

/* ------------------------------------------------------------------ */
/* Built-in profiles, files, names                                     */

static usc_status builtin_at(const char *name, usc_profile *out,
			     usc_error *err, int depth)
{
	char list[256];
	size_t o = 0;

	for (size_t i = 0; i < usc__profile_text_count; i++) {
		const usc__profile_text *t = &usc__profile_texts[i];
		char file[96];
		usc_status st;

		if (strcmp(t->name, name) != 0)
			continue;
		snprintf(file, sizeof file, "data/profiles/%s.profile", name);
		st = parse_text((const char *)t->text, t->len, file, out, err,
				depth);
		if (st != USC_OK)
			return st == USC_ENOMEM ? st : USC_EINTERNAL;
		if (strcmp(out->name, name) != 0)
			return usc__fail(err, USC_EINTERNAL,
					 "%s: names the profile '%s'", file,
					 out->name);
		return USC_OK;
	}
	list[0] = '\0';
	for (size_t i = 0; i < usc__profile_text_count; i++) {
		int w = snprintf(list + o, sizeof list - o, "%s%s",
				 i ? ", " : "", usc__profile_texts[i].name);
		if (w < 0 || (size_t)w >= sizeof list - o)
			break;
		o += (size_t)w;
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "no built-in profile '%s' (the built-in profiles: %s)",
			 name, list);
}

usc_status usc_profile_builtin(const char *name, usc_profile *out,
			       usc_error *err)
{
	if (name == NULL || out == NULL)
		return usc__fail(err, USC_EINVAL, "no profile name");
	return builtin_at(name, out, err, 0);
}

usc_status usc_profile_load(const char *path, usc_profile *out,
			    usc_error *err)
{
	FILE *f;
	char *buf;
	size_t n;
	usc_status st;

	if (path == NULL || out == NULL)
		return usc__fail(err, USC_EINVAL, "no profile path");
	{
		uint64_t size;
		usc_error e;

		/* A regular file only: a FIFO would block, /dev/zero not end. */
		errno = 0;
		st = usc__open_regular(path, &f, &size, &e);
		if (st != USC_OK && errno)
			return usc__fail(err, USC_EIO, "cannot open '%s': %s",
					 path, strerror(errno));
		if (st != USC_OK)
			return usc__fail(err, USC_EIO, "%s", e.message);
	}
	buf = usc__malloc(FILE_MAX_BYTES + 1);
	if (buf == NULL) {
		fclose(f);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	}
	n = fread(buf, 1, FILE_MAX_BYTES + 1, f);
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		usc__free(buf);
		return usc__fail(err, USC_EIO, "cannot read '%s': %s", path,
				 strerror(e));
	}
	fclose(f);
	if (n > FILE_MAX_BYTES) {
		usc__free(buf);
		return usc__fail(err, USC_EPARSE,
				 "%s: larger than %d bytes, not a profile",
				 path, FILE_MAX_BYTES);
	}
	st = parse_text(buf, n, path, out, err, 0);
	usc__free(buf);
	return st;
}

usc_status usc_profile_resolve(const char *name_or_path, usc_profile *out,
			       usc_error *err)
{
	const char *const *names = usc_profile_builtin_names();
	char list[256];
	size_t o = 0;
	struct stat sb;

	if (name_or_path == NULL || name_or_path[0] == '\0' || out == NULL)
		return usc__fail(err, USC_EINVAL,
				 "no profile: expected a built-in name or a "
				 "profile file");
	/* A built-in name wins; write ./NAME for a file named like one. */
	for (size_t i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], name_or_path) == 0)
			return usc_profile_builtin(name_or_path, out, err);
	/* Whether a file of that name is there, without opening it. */
	if (stat(name_or_path, &sb) == 0 || errno != ENOENT ||
	    strchr(name_or_path, '/') != NULL)
		return usc_profile_load(name_or_path, out, err);
	list[0] = '\0';
	for (size_t i = 0; names[i] != NULL; i++) {
		int w = snprintf(list + o, sizeof list - o, "%s%s",
				 i ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= sizeof list - o)
			break;
		o += (size_t)w;
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "'%s' is neither a built-in profile (%s) nor a "
			 "profile file", name_or_path, list);
}

/* ------------------------------------------------------------------ */
/* Printing and comparing                                              */

typedef struct outbuf {
	char *p;
	size_t n, cap;
	bool oom;
} outbuf;

static void put(outbuf *b, const char *fmt, ...) USC__PRINTF(2, 3);

static void put(outbuf *b, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		w = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (w < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)w < b->cap - b->n) {
			b->n += (size_t)w;
			return;
		}
		char *q = usc__realloc(b->p, b->cap * 2 + (size_t)w);

		if (q == NULL) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = b->cap * 2 + (size_t)w;
	}
}

/* The shortest %g spelling that reads back as d. */
static void put_ulps(outbuf *b, const char *key, double d)
{
	char s[40];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	put(b, "%s = %s\n", key, s);
}

static const char *type_or_declared(usc_dtype t)
{
	return t == USC_DTYPE_INVALID ? "declared" : usc_dtype_name(t);
}

/* Whether every field holds a value the text format can say. */
static usc_status check_profile(const usc_profile *p, usc_error *err)
{
	span name = {p->name, strnlen(p->name, USC_PROFILE_NAME_MAX)};
	span desc = {p->description,
		     strnlen(p->description, USC_PROFILE_DESCRIPTION_MAX)};

	if (name.n >= USC_PROFILE_NAME_MAX || !valid_name(name))
		return usc__fail(err, USC_EINVAL,
				 "profile name is not 1 to 63 of a-z 0-9 . _ -");
	if (desc.n >= USC_PROFILE_DESCRIPTION_MAX || !valid_description(desc) ||
	    utf8_valid_prefix((const unsigned char *)desc.p, desc.n) != desc.n)
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': description is not one line "
				 "of UTF-8", p->name);
	if (!usc_dtype_is_float(p->excess_type))
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': excess_type is not a "
				 "floating-point type", p->name);
	if (p->compute_type != USC_DTYPE_INVALID &&
	    !usc_dtype_is_float(p->compute_type))
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': compute_type is not a "
				 "floating-point type", p->name);
	if ((p->dot_accumulation != USC_DTYPE_INVALID &&
	     !usc_dtype_is_float(p->dot_accumulation)) ||
	    (p->fp8_dot_accumulation != USC_DTYPE_INVALID &&
	     !usc_dtype_is_float(p->fp8_dot_accumulation)))
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': a dot accumulation type is "
				 "not a floating-point type", p->name);
	if ((unsigned)p->dot_f32 >= USC__ARRAY_LEN(dot_f32_names) ||
	    (unsigned)p->fp8_overflow >= USC__ARRAY_LEN(fp8_overflow_names) ||
	    (unsigned)p->minmax_nan >= USC__ARRAY_LEN(minmax_nan_names) ||
	    (unsigned)p->divide_reciprocal >=
		    USC__ARRAY_LEN(divide_reciprocal_names))
		return usc__fail(err, USC_EINVAL,
				 "profile '%s': an enumerated field is out of "
				 "range", p->name);
	for (int f = 0; f < USC_PFN_COUNT; f++)
		if (!(p->accuracy[f] >= ACCURACY_MIN &&
		      p->accuracy[f] <= ACCURACY_MAX))
			return usc__fail(err, USC_EINVAL,
					 "profile '%s': accuracy.%s is not in "
					 "[0.5, 1048576]", p->name, fn_keys[f]);
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		if (usc_dtype_is_float((usc_dtype)t) && p->flush[t] > 3)
			return usc__fail(err, USC_EINVAL,
					 "profile '%s': flush.%s is not a "
					 "USC_FLUSH_* set", p->name,
					 usc_dtype_name((usc_dtype)t));
	return USC_OK;
}

usc_status usc_profile_format(const usc_profile *p, char **text,
			      usc_error *err)
{
	outbuf b = {0};
	usc_status st;

	if (p == NULL || text == NULL)
		return usc__fail(err, USC_EINVAL, "no profile to format");
	*text = NULL;
	if ((st = check_profile(p, err)) != USC_OK)
		return st;
	b.cap = 2048;
	b.p = usc__malloc(b.cap);
	if (b.p == NULL)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	put(&b, "name = %s\n", p->name);
	if (p->description[0] != '\0')
		put(&b, "description = %s\n", p->description);
	put(&b, "excess_precision = %s\n", p->excess_precision ? "yes" : "no");
	put(&b, "excess_type = %s\n", usc_dtype_name(p->excess_type));
	put(&b, "fma = %s\n", p->fma ? "yes" : "no");
	put(&b, "reassociate = %s\n", p->reassociate ? "yes" : "no");
	put(&b, "reassociate_dot = %s\n", p->reassociate_dot ? "yes" : "no");
	put(&b, "dot_accumulation = %s\n",
	    type_or_declared(p->dot_accumulation));
	put(&b, "fp8_dot_accumulation = %s\n",
	    type_or_declared(p->fp8_dot_accumulation));
	put(&b, "dot_f32 = %s\n", dot_f32_names[p->dot_f32]);
	put(&b, "compute_type = %s\n", type_or_declared(p->compute_type));
	for (int f = 0; f < USC_PFN_COUNT; f++) {
		char key[64];

		snprintf(key, sizeof key, "accuracy.%s", fn_keys[f]);
		put_ulps(&b, key, p->accuracy[f]);
	}
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		if (usc_dtype_is_float((usc_dtype)t))
			put(&b, "flush.%s = %s\n", usc_dtype_name((usc_dtype)t),
			    flush_names[p->flush[t]]);
	put(&b, "flush_mode = %s\n", flush_mode_names[p->flush_always]);
	put(&b, "nonfinite = %s\n", nonfinite_names[p->nonfinite_undefined]);
	put(&b, "fp8_overflow = %s\n", fp8_overflow_names[p->fp8_overflow]);
	put(&b, "minmax_nan = %s\n", minmax_nan_names[p->minmax_nan]);
	put(&b, "divide_reciprocal = %s\n",
	    divide_reciprocal_names[p->divide_reciprocal]);
	if (b.oom) {
		usc__free(b.p);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	*text = b.p;
	return USC_OK;
}

void usc_profile_text_free(char *text)
{
	usc__free(text);
}

bool usc_profile_equal(const usc_profile *a, const usc_profile *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (strncmp(a->name, b->name, USC_PROFILE_NAME_MAX) != 0 ||
	    a->excess_precision != b->excess_precision ||
	    a->excess_type != b->excess_type || a->fma != b->fma ||
	    a->reassociate != b->reassociate ||
	    a->reassociate_dot != b->reassociate_dot ||
	    a->dot_accumulation != b->dot_accumulation ||
	    a->fp8_dot_accumulation != b->fp8_dot_accumulation ||
	    a->dot_f32 != b->dot_f32 || a->fp8_overflow != b->fp8_overflow ||
	    a->compute_type != b->compute_type ||
	    a->flush_always != b->flush_always ||
	    a->nonfinite_undefined != b->nonfinite_undefined ||
	    a->minmax_nan != b->minmax_nan ||
	    a->divide_reciprocal != b->divide_reciprocal)
		return false;
	for (int f = 0; f < USC_PFN_COUNT; f++)
		if (a->accuracy[f] != b->accuracy[f])
			return false;
	for (int t = 0; t < USC_DTYPE_COUNT; t++)
		if (usc_dtype_is_float((usc_dtype)t) && a->flush[t] != b->flush[t])
			return false;
	return true;
}
