/*
 * The few members of a case's case.json that ulpscope reads ("profile",
 * "platform", "xla_cpu_enable_fast_math") and the names of the kernel
 * ("fusion", "fusions", "main_fusion").  The file is validated as JSON
 * (RFC 8259) while it is walked, so a malformed case.json is an error
 * naming its line and column rather than a silently ignored key; then
 * each of those members is checked for its type and value
 * (docs/cases.md), because a "platform": 5 silently read as no platform
 * gives no verdict where the case asked for one.  Other members, which
 * the capture tool writes in plenty, are validated as JSON and skipped.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/case_internal.h"
#include "internal.h"

#define JSON_MAX_DEPTH 256

typedef struct scanner {
	const char *path;
	const char *s, *p, *end;
	usc_error *err;
} scanner;

static usc_status fail_at(scanner *sc, const char *what)
{
	int line = 1, col = 1;

	for (const char *q = sc->s; q < sc->p && q < sc->end; q++) {
		if (*q == '\n')
			line++, col = 1;
		else
			col++;
	}
	return usc__fail(sc->err, USC_EPARSE, "%s:%d:%d: malformed JSON: %s",
			 sc->path, line, col, what);
}

static void skip_ws(scanner *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' ||
				   *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A string at sc->p (the opening quote).  With out, its value: escapes
 * decoded, \u escapes of ASCII only (a key or value ulpscope reads is
 * ASCII; anything else is kept as '?').
 */
static usc_status scan_string(scanner *sc, char **out)
{
	const char *open = sc->p, *start;
	char *v = NULL;
	size_t n = 0;

	sc->p++;
	start = sc->p;
	if (out) {
		v = usc__malloc((size_t)(sc->end - start) + 1);
		if (!v)
			return usc__fail(sc->err, USC_ENOMEM, "out of memory");
	}
	while (sc->p < sc->end && *sc->p != '"') {
		unsigned char c = (unsigned char)*sc->p;
		char ch = (char)c;

		if (c < 0x20) {
			usc__free(v);
			return fail_at(sc, "control character in a string");
		}
		if (c == '\\') {
			const char *esc = sc->p;

			sc->p++;
			if (sc->p >= sc->end)
				break;
			switch (*sc->p) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				int cp = 0;

				for (int k = 1; k <= 4; k++) {
					int h = sc->p + k < sc->end
							? hexval(sc->p[k])
							: -1;

					if (h < 0) {
						usc__free(v);
						sc->p = esc;
						return fail_at(sc, "bad \\u escape");
					}
					cp = cp * 16 + h;
				}
				sc->p += 4;
				ch = cp < 0x80 ? (char)cp : '?';
				break;
			}
			default:
				usc__free(v);
				sc->p = esc;
				return fail_at(sc, "bad escape in a string");
			}
		}
		if (v)
			v[n++] = ch;
		sc->p++;
	}
	if (sc->p >= sc->end) {
		usc__free(v);
		sc->p = open; /* where the string starts */
		return fail_at(sc, "unterminated string");
	}
	sc->p++;
	if (v) {
		v[n] = '\0';
		*out = v;
	}
	return USC_OK;
}

static usc_status scan_literal(scanner *sc)
{
	static const char *const words[] = {"true", "false", "null"};

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);

		if ((size_t)(sc->end - sc->p) >= n &&
		    memcmp(sc->p, words[i], n) == 0) {
			sc->p += n;
			return USC_OK;
		}
	}
	if (*sc->p == '-' || (*sc->p >= '0' && *sc->p <= '9')) {
		const char *q = sc->p;

		if (*q == '-')
			q++;
		if (q >= sc->end || !(*q >= '0' && *q <= '9'))
			return fail_at(sc, "bad number");
		while (q < sc->end &&
		       ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
			*q == 'E' || *q == '+' || *q == '-'))
			q++;
		sc->p = q;
		return USC_OK;
	}
	return fail_at(sc, "expected a value");
}

static usc_status scan_value(scanner *sc, int depth)
{
	usc_status st;
	char close;

	skip_ws(sc);
	if (sc->p >= sc->end)
		return fail_at(sc, "expected a value, found the end");
	if (*sc->p == '"')
		return scan_string(sc, NULL);
	if (*sc->p != '{' && *sc->p != '[')
		return scan_literal(sc);
	if (depth >= JSON_MAX_DEPTH)
		return fail_at(sc, "nested too deeply");
	close = *sc->p == '{' ? '}' : ']';
	sc->p++;
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == close) {
		sc->p++;
		return USC_OK;
	}
	for (;;) {
		if (close == '}') {
			skip_ws(sc);
			if (sc->p >= sc->end || *sc->p != '"')
				return fail_at(sc, "expected a member name");
			st = scan_string(sc, NULL);
			if (st != USC_OK)
				return st;
			skip_ws(sc);
			if (sc->p >= sc->end || *sc->p != ':')
				return fail_at(sc, "expected ':'");
			sc->p++;
		}
		st = scan_value(sc, depth + 1);
		if (st != USC_OK)
			return st;
		skip_ws(sc);
		if (sc->p < sc->end && *sc->p == ',') {
			sc->p++;
			continue;
		}
		if (sc->p < sc->end && *sc->p == close) {
			sc->p++;
			return USC_OK;
		}
		return fail_at(sc, close == '}' ? "expected ',' or '}'"
						: "expected ',' or ']'");
	}
}

/* The JSON kinds a member may have, as a message names them. */
typedef enum json_kind {
	JSON_ABSENT,
	JSON_STRING,
	JSON_NUMBER,
	JSON_BOOL,
	JSON_NULL,
	JSON_OBJECT,
	JSON_ARRAY
} json_kind;

static const char *const kind_words[] = {
	"nothing", "a string", "a number", "a boolean", "null", "an object",
	"an array"};

/* One top-level member asked for: what it is and where its value starts. */
typedef struct member {
	json_kind kind;
	char *text;	  /* a string's value, a literal's text; else NULL */
	const char *at;	  /* the value's first character */
	bool all_strings; /* an array: every element a string */
} member;

static json_kind kind_at(const char *p)
{
	switch (*p) {
	case '"':
		return JSON_STRING;
	case '{':
		return JSON_OBJECT;
	case '[':
		return JSON_ARRAY;
	case 't':
	case 'f':
		return JSON_BOOL;
	case 'n':
		return JSON_NULL;
	default:
		return JSON_NUMBER;
	}
}

/*
 * Whether every element of the array at sc->p, already validated by
 * scan_value, is a string; sc->p is left where it was.
 */
static bool array_of_strings(scanner *sc)
{
	scanner sub = *sc;
	bool all = true;

	sub.err = NULL;
	sub.p++;
	for (;;) {
		skip_ws(&sub);
		if (sub.p >= sub.end || *sub.p == ']')
			return all;
		all = all && *sub.p == '"';
		if (scan_value(&sub, 1) != USC_OK)
			return false;
		skip_ws(&sub);
		if (sub.p < sub.end && *sub.p == ',')
			sub.p++;
	}
}

static void free_members(member *m, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		usc__free(m[k].text);
		m[k].text = NULL;
		m[k].kind = JSON_ABSENT;
	}
}

/*
 * Walks the object of text, validating all of it, and fills m[k] for
 * each top-level member keys[k] present.  A member asked for that
 * appears twice is an error: which one counts would be a guess.
 */
static usc_status scan_members(scanner *sc, const char *const *keys,
			       size_t nkeys, member *m)
{
	usc_status st = USC_OK;

	for (size_t k = 0; k < nkeys; k++)
		m[k] = (member){JSON_ABSENT, NULL, NULL, false};
	skip_ws(sc);
	if (sc->p >= sc->end || *sc->p != '{') {
		st = fail_at(sc, "expected an object");
		goto fail;
	}
	sc->p++;
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == '}') {
		sc->p++;
		goto tail;
	}
	for (;;) {
		char *name = NULL;
		const char *name_at;
		size_t hit = nkeys;

		skip_ws(sc);
		if (sc->p >= sc->end || *sc->p != '"') {
			st = fail_at(sc, "expected a member name");
			goto fail;
		}
		name_at = sc->p;
		st = scan_string(sc, &name);
		if (st != USC_OK)
			goto fail;
		for (size_t k = 0; k < nkeys; k++)
			if (strcmp(name, keys[k]) == 0)
				hit = k;
		usc__free(name);
		if (hit < nkeys && m[hit].kind != JSON_ABSENT) {
			sc->p = name_at;
			st = usc__case_json_fail(sc->path, sc->s, name_at,
						 sc->err, keys[hit],
						 "given twice");
			goto fail;
		}
		skip_ws(sc);
		if (sc->p >= sc->end || *sc->p != ':') {
			st = fail_at(sc, "expected ':'");
			goto fail;
		}
		sc->p++;
		skip_ws(sc);
		if (hit < nkeys && sc->p < sc->end) {
			m[hit].kind = kind_at(sc->p);
			m[hit].at = sc->p;
		}
		if (hit < nkeys && m[hit].kind == JSON_STRING) {
			st = scan_string(sc, &m[hit].text);
		} else {
			const char *start = sc->p;

			st = scan_value(sc, 1);
			/* A literal (true, false, null, a number): its text. */
			if (st == USC_OK && hit < nkeys &&
			    m[hit].kind != JSON_OBJECT &&
			    m[hit].kind != JSON_ARRAY) {
				m[hit].text = usc__strndup(
					start, (size_t)(sc->p - start));
				if (!m[hit].text)
					st = usc__fail(sc->err, USC_ENOMEM,
						       "out of memory");
			}
			if (st == USC_OK && hit < nkeys &&
			    m[hit].kind == JSON_ARRAY) {
				const char *end = sc->p;

				sc->p = start;
				m[hit].all_strings = array_of_strings(sc);
				sc->p = end;
			}
		}
		if (st != USC_OK)
			goto fail;
		skip_ws(sc);
		if (sc->p < sc->end && *sc->p == ',') {
			sc->p++;
			continue;
		}
		if (sc->p < sc->end && *sc->p == '}') {
			sc->p++;
			break;
		}
		st = fail_at(sc, "expected ',' or '}'");
		goto fail;
	}
tail:
	skip_ws(sc);
	if (sc->p < sc->end) {
		st = fail_at(sc, "text after the object");
		goto fail;
	}
	return USC_OK;
fail:
	free_members(m, nkeys);
	return st;
}

usc_status usc__case_json_fail(const char *path, const char *text,
			       const char *at, usc_error *err,
			       const char *key, const char *what)
{
	int line = 1, col = 1;

	for (const char *q = text; q < at; q++) {
		if (*q == '\n')
			line++, col = 1;
		else
			col++;
	}
	return usc__fail(err, USC_EPARSE, "%s:%d:%d: \"%s\": %s", path, line,
			 col, key, what);
}

usc_status usc__case_json_strings(const char *path, const char *text,
				  size_t len, const char *const *keys,
				  size_t nkeys, char **values, usc_error *err)
{
	scanner sc = {path, text, text, text + len, err};
	member *m = usc__calloc(nkeys ? nkeys : 1, sizeof *m);
	usc_status st;

	for (size_t k = 0; k < nkeys; k++)
		values[k] = NULL;
	if (!m)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = scan_members(&sc, keys, nkeys, m);
	for (size_t k = 0; st == USC_OK && k < nkeys; k++)
		values[k] = m[k].text;
	usc__free(m);
	return st;
}

/* ------------------------------------------------------- validation */

/* The built-in profile of each "platform" case.json may name. */
static const struct {
	const char *platform, *profile;
} platforms[] = {
	{"cpu", "xla-cpu"}, {"host", "xla-cpu"}, {"gpu", "xla-gpu"},
	{"cuda", "xla-gpu"}, {"rocm", "xla-gpu"}, {"tpu", "xla-tpu"},
};

enum {
	KEY_FUSION,
	KEY_FUSIONS,
	KEY_MAIN_FUSION,
	KEY_PLATFORM,
	KEY_PROFILE,
	KEY_FAST_MATH,
	KEY_COUNT
};

static const char *const meta_keys[KEY_COUNT] = {
	"fusion",   "fusions", "main_fusion", "platform",
	"profile", "xla_cpu_enable_fast_math"};

/* "\"key\": expected WHAT, found KIND" at the value of m. */
static usc_status wrong_kind(const char *path, const char *text,
			     const member *m, usc_error *err,
			     const char *key, const char *expected)
{
	char what[256];

	snprintf(what, sizeof what, "expected %s, found %s", expected,
		 kind_words[m->kind]);
	return usc__case_json_fail(path, text, m->at, err, key, what);
}

usc_status usc__case_meta_read(const char *path, const char *text,
			       size_t len, usc__case_meta *meta,
			       usc_error *err)
{
	scanner sc = {path, text, text, text + len, err};
	member m[KEY_COUNT];
	const member *mk;
	usc_status st;

	memset(meta, 0, sizeof *meta);
	st = scan_members(&sc, meta_keys, KEY_COUNT, m);
	if (st != USC_OK)
		return st;
	/* The names of the kernel: for people and later analyses. */
	for (int i = 0; i < 2; i++) {
		int k = i == 0 ? KEY_FUSION : KEY_MAIN_FUSION;

		mk = &m[k];
		if (mk->kind != JSON_ABSENT && mk->kind != JSON_STRING &&
		    mk->kind != JSON_NULL) {
			st = wrong_kind(path, text, mk, err, meta_keys[k],
					"an instruction name (a string) or "
					"null");
			goto done;
		}
	}
	mk = &m[KEY_FUSIONS];
	if (mk->kind != JSON_ABSENT && mk->kind != JSON_NULL &&
	    !(mk->kind == JSON_ARRAY && mk->all_strings)) {
		st = mk->kind == JSON_ARRAY
			     ? usc__case_json_fail(
				       path, text, mk->at, err, "fusions",
				       "expected an array of instruction names "
				       "(strings), found an element that is "
				       "not a string")
			     : wrong_kind(path, text, mk, err, "fusions",
					  "an array of instruction names "
					  "(strings)");
		goto done;
	}
	mk = &m[KEY_PROFILE];
	if (mk->kind == JSON_STRING && mk->text[0] != '\0') {
		meta->profile = m[KEY_PROFILE].text;
		m[KEY_PROFILE].text = NULL;
	} else if (mk->kind == JSON_STRING) {
		st = usc__case_json_fail(path, text, mk->at, err, "profile",
					 "is empty; expected a built-in profile "
					 "name or a profile file");
		goto done;
	} else if (mk->kind != JSON_ABSENT && mk->kind != JSON_NULL) {
		st = wrong_kind(path, text, mk, err, "profile",
				"a built-in profile name or a profile file "
				"(a non-empty string) or null");
		goto done;
	}
	mk = &m[KEY_PLATFORM];
	if (mk->kind == JSON_STRING) {
		for (size_t i = 0; i < USC__ARRAY_LEN(platforms); i++)
			if (strcmp(mk->text, platforms[i].platform) == 0)
				meta->platform_profile = platforms[i].profile;
		if (!meta->platform_profile) {
			char what[256];

			snprintf(what, sizeof what,
				 "'%.64s' is not a platform ulpscope knows; "
				 "expected cpu, host, gpu, cuda, rocm or tpu "
				 "(\"profile\" names a profile for another "
				 "device)",
				 mk->text);
			st = usc__case_json_fail(path, text, mk->at, err,
						 "platform", what);
			goto done;
		}
	} else if (mk->kind != JSON_ABSENT && mk->kind != JSON_NULL) {
		st = wrong_kind(path, text, mk, err, "platform",
				"a string (cpu, gpu, tpu...) or null");
		goto done;
	}
	mk = &m[KEY_FAST_MATH];
	if (mk->kind == JSON_BOOL) {
		meta->fast_math = strcmp(mk->text, "true") == 0;
	} else if (mk->kind != JSON_ABSENT && mk->kind != JSON_NULL) {
		st = wrong_kind(path, text, mk, err,
				"xla_cpu_enable_fast_math",
				"true, false or null");
		goto done;
	}
done:
	free_members(m, KEY_COUNT);
	if (st != USC_OK)
		usc__case_meta_free(meta);
	return st;
}

void usc__case_meta_free(usc__case_meta *meta)
{
	usc__free(meta->profile);
	meta->profile = NULL;
}
