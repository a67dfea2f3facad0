/*
 * The few members of a case's case.json that ulpscope reads: top-level
 * strings ("profile", "platform").  The file is validated as JSON
 * (RFC 8259) while it is walked, so a malformed case.json is an error
 * naming its line and column rather than a silently ignored key; nested
 * values are skipped without being kept.
 */
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

usc_status usc__case_json_strings(const char *path, const char *text,
				  size_t len, const char *const *keys,
				  size_t nkeys, char **values, usc_error *err)
{
	scanner sc = {path, text, text, text + len, err};
	usc_status st = USC_OK;

	for (size_t k = 0; k < nkeys; k++)
		values[k] = NULL;
	skip_ws(&sc);
	if (sc.p >= sc.end || *sc.p != '{') {
		st = fail_at(&sc, "expected an object");
		goto fail;
	}
	sc.p++;
	skip_ws(&sc);
	if (sc.p < sc.end && *sc.p == '}') {
		sc.p++;
		goto tail;
	}
	for (;;) {
		char *name = NULL;
		size_t hit = nkeys;

		skip_ws(&sc);
		if (sc.p >= sc.end || *sc.p != '"') {
			st = fail_at(&sc, "expected a member name");
			goto fail;
		}
		st = scan_string(&sc, &name);
		if (st != USC_OK)
			goto fail;
		for (size_t k = 0; k < nkeys; k++)
			if (strcmp(name, keys[k]) == 0)
				hit = k;
		usc__free(name);
		skip_ws(&sc);
		if (sc.p >= sc.end || *sc.p != ':') {
			st = fail_at(&sc, "expected ':'");
			goto fail;
		}
		sc.p++;
		skip_ws(&sc);
		if (hit < nkeys && sc.p < sc.end && *sc.p == '"') {
			usc__free(values[hit]);
			values[hit] = NULL;
			st = scan_string(&sc, &values[hit]);
		} else {
			const char *start = sc.p;

			st = scan_value(&sc, 1);
			/* A literal (true, false, null, a number): its text. */
			if (st == USC_OK && hit < nkeys && *start != '{' &&
			    *start != '[') {
				usc__free(values[hit]);
				values[hit] = usc__strndup(
					start, (size_t)(sc.p - start));
				if (!values[hit])
					st = usc__fail(err, USC_ENOMEM,
						       "out of memory");
			}
		}
		if (st != USC_OK)
			goto fail;
		skip_ws(&sc);
		if (sc.p < sc.end && *sc.p == ',') {
			sc.p++;
			continue;
		}
		if (sc.p < sc.end && *sc.p == '}') {
			sc.p++;
			break;
		}
		st = fail_at(&sc, "expected ',' or '}'");
		goto fail;
	}
tail:
	skip_ws(&sc);
	if (sc.p < sc.end) {
		st = fail_at(&sc, "text after the object");
		goto fail;
	}
	return USC_OK;
fail:
	for (size_t k = 0; k < nkeys; k++) {
		usc__free(values[k]);
		values[k] = NULL;
	}
	return st;
}
