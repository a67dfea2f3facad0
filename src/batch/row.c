/*
 * Rows: one finished case of a batch, as text, one "key=value" a line,
 * strings escaped (\\, \n, \t), doubles as hex floats so that they come
 * back bit for bit, framed by a first line naming the format and a last
 * line "end" (docs/batch.md, "The work directory").  A worker formats its
 * case's row and hands it to the batch, which appends it to the run's
 * journal (journal.c); usc__batch_row_parse reads it back from there.
 * Earlier versions kept each row in a file of its own, rows/<id>.row,
 * the same text; a resumed batch still reads them (journal.c).
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_internal.h"

#define ROW_MAGIC "ulpscope-batch-row 1"

static const char *const status_names[] = {
#define USC_X_(e, name) name,
	USC_BATCH_STATUS_LIST(USC_X_)
#undef USC_X_
};

const char *usc_batch_status_name(usc_batch_status s)
{
	return (unsigned)s < USC_BATCH_STATUS_COUNT ? status_names[s]
						    : "invalid";
}

void usc_batch_row_clear(usc_batch_row *r)
{
	if (!r)
		return;
	usc__free(r->path);
	usc__free(r->kernel);
	usc__free(r->hlo_hash);
	usc__free(r->verdict);
	usc__free(r->profile);
	usc__free(r->culprit);
	usc__free(r->message);
	usc__free(r->result);
	usc__free(r->link);
	memset(r, 0, sizeof *r);
}

bool usc__batch_set(char **member, const char *value)
{
	char *v = usc__strndup(value ? value : "", value ? strlen(value) : 0);

	if (!v)
		return false;
	usc__free(*member);
	*member = v;
	return true;
}

uint64_t usc__batch_fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void usc__batch_hex(uint64_t h, char out[17])
{
	snprintf(out, 17, "%016" PRIx64, h);
}

/* The string members of a row, with their keys. */
#define ROW_STRINGS(X)                                                    \
	X(path) X(kernel) X(hlo_hash) X(verdict) X(profile) X(culprit)    \
	X(message) X(result) X(link)
#define ROW_DOUBLES(X)                                                    \
	X(max_ulp_reference) X(max_ulp_oracle) X(culprit_share) X(seconds)

bool usc__batch_row_copy(usc_batch_row *dst, const usc_batch_row *src)
{
	bool ok = true;

	*dst = *src;
#define COPY_(m) dst->m = NULL;
	ROW_STRINGS(COPY_)
#undef COPY_
#define COPY_(m) ok = ok && usc__batch_set(&dst->m, src->m);
	ROW_STRINGS(COPY_)
#undef COPY_
	if (!ok)
		usc_batch_row_clear(dst);
	return ok;
}

static void put_string(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s=", key);
	for (v = v ? v : ""; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else if (*v == '\t')
			fputs("\\t", f);
		else
			fputc(*v, f);
	}
	fputc('\n', f);
}

static void put_double(FILE *f, const char *key, double v)
{
	if (isnan(v))
		fprintf(f, "%s=nan\n", key);
	else
		fprintf(f, "%s=%a\n", key, v);
}

/* The row's lines into f, from the format's name to "end". */
static void put_row(FILE *f, const usc_batch_row *r)
{
	fprintf(f, "%s\n", ROW_MAGIC);
	fprintf(f, "index=%" PRIu64 "\n", r->index);
	fprintf(f, "status=%s\n", usc_batch_status_name(r->status));
	fprintf(f, "elements=%" PRIu64 "\n", r->elements);
	for (int c = 0; c < USC_CLASS_COUNT; c++)
		fprintf(f, "count.%s=%" PRIu64 "\n",
			usc_class_name((usc_class)c), r->counts[c]);
#define PUT_(m) put_string(f, #m, r->m);
	ROW_STRINGS(PUT_)
#undef PUT_
#define PUT_(m) put_double(f, #m, r->m);
	ROW_DOUBLES(PUT_)
#undef PUT_
	fputs("end\n", f);
}

usc_status usc__batch_row_format(const usc_batch_row *r, char **text,
				 size_t *len, usc_error *err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	bool ok;

	*text = NULL;
	*len = 0;
	if (!f)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	put_row(f, r);
	ok = fflush(f) == 0 && !ferror(f);
	fclose(f);
	/* (The stream's buffer is the C library's: copied into ours.) */
	if (ok && buf) {
		*text = usc__malloc(size ? size : 1);
		if (*text) {
			memcpy(*text, buf, size);
			*len = size;
		}
	}
	free(buf);
	if (!*text)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	return USC_OK;
}

/* Undoes put_string's escapes in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*w++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

static bool parse_u64(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long x;

	if (!*v || *v == '-' || *v == '+')
		return false;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return false;
	*out = x;
	return true;
}

static bool parse_double(const char *v, double *out)
{
	char *end;

	if (strcmp(v, "nan") == 0) {
		*out = NAN;
		return true;
	}
	*out = strtod(v, &end);
	return *v && !*end;
}

/* Takes one "key=value" line into r; false when its value is malformed. */
static bool take(usc_batch_row *r, char *key, char *v, bool *oom)
{
#define TAKE_(m)                                                          \
	if (strcmp(key, #m) == 0) {                                       \
		unescape(v);                                              \
		if (!usc__batch_set(&r->m, v))                            \
			*oom = true;                                      \
		return true;                                              \
	}
	ROW_STRINGS(TAKE_)
#undef TAKE_
#define TAKE_(m)                                                          \
	if (strcmp(key, #m) == 0)                                         \
		return parse_double(v, &r->m);
	ROW_DOUBLES(TAKE_)
#undef TAKE_
	if (strcmp(key, "index") == 0)
		return parse_u64(v, &r->index);
	if (strcmp(key, "elements") == 0)
		return parse_u64(v, &r->elements);
	if (strcmp(key, "status") == 0) {
		for (int s = 0; s < USC_BATCH_STATUS_COUNT; s++) {
			if (strcmp(v, status_names[s]) == 0) {
				r->status = (usc_batch_status)s;
				return true;
			}
		}
		return false;
	}
	if (strncmp(key, "count.", 6) == 0) {
		for (int c = 0; c < USC_CLASS_COUNT; c++)
			if (strcmp(key + 6, usc_class_name((usc_class)c)) == 0)
				return parse_u64(v, &r->counts[c]);
	}
	return true; /* a key of a later version */
}

usc_status usc__batch_row_parse(const char *name, char *text, size_t len,
				usc_batch_row *r, usc_error *err)
{
	char *line, *next;
	bool ended = false, oom = false;
	usc_status st = USC_OK;
	int lineno = 1;

	memset(r, 0, sizeof *r);
	if (len < sizeof ROW_MAGIC || memchr(text, 0, len) ||
	    strncmp(text, ROW_MAGIC "\n", sizeof ROW_MAGIC) != 0)
		return usc__fail(err, USC_EPARSE,
				 "%s: not a batch row (expected a first "
				 "line '%s')",
				 name, ROW_MAGIC);
	for (line = text + sizeof ROW_MAGIC; line < text + len && !ended;
	     line = next) {
		char *eq;

		lineno++;
		next = memchr(line, '\n', (size_t)(text + len - line));
		if (!next) {
			st = usc__fail(err, USC_EPARSE,
				       "%s:%d: the line has no end", name,
				       lineno);
			break;
		}
		*next++ = 0;
		if (strcmp(line, "end") == 0) {
			ended = true;
			break;
		}
		eq = strchr(line, '=');
		if (!eq) {
			st = usc__fail(err, USC_EPARSE,
				       "%s:%d: expected key=value", name,
				       lineno);
			break;
		}
		*eq = 0;
		if (!take(r, line, eq + 1, &oom)) {
			st = usc__fail(err, USC_EPARSE,
				       "%s:%d: malformed value of '%s'", name,
				       lineno, line);
			break;
		}
		if (oom) {
			st = usc__fail(err, USC_ENOMEM, "%s: out of memory",
				       name);
			break;
		}
	}
	if (st == USC_OK && !ended)
		st = usc__fail(err, USC_EPARSE,
			       "%s: truncated (no final 'end' line)", name);
	if (st != USC_OK)
		usc_batch_row_clear(r);
	return st;
}
