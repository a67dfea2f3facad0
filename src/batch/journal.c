/*
 * The batch's journals (docs/batch.md, "The work directory"): what makes
 * a finished case durable.  Each run of a batch, and each MPI rank of
 * it, appends its finished cases' rows to a journal of its own,
 * rows/<run>.<rank>.journal, so that a case costs an append instead of a
 * file's creation, flush and rename (creating files is the slow part of
 * a small file system operation on the disks batches run on).  A journal
 * is written by one process and never reopened, so only its tail can be
 * damaged (a batch killed in the middle of an append, or a disk that
 * lost what was not flushed): every record carries its length and a
 * checksum, and a reader takes the records up to the first one that is
 * incomplete or does not match its checksum, and drops the rest.
 *
 * A journal is a first line naming the format, then records:
 *
 *   row <16 hex digits: the case's id> <payload bytes, decimal>
 *       <16 hex digits: FNV-1a 64 of the id's 16 digits, then the payload>
 *   the payload: the row's text (row.c), ending in "end\n"
 *
 * (the three fields on one line, ending in "\n").  Work directories of
 * earlier versions kept one file per case, rows/<id>.row, holding the
 * same text; a resumed batch reads those too, as a run older than every
 * journal.
 */
#define _GNU_SOURCE /* (for the d_type of struct dirent) */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch_internal.h"

#define JOURNAL_MAGIC "ulpscope-batch-journal 1\n"

uint64_t usc__batch_record_sum(const char id[17], const char *text,
			       size_t len)
{
	return usc__batch_fnv(text, len, usc__batch_fnv(id, 16,
							 USC__FNV_OFFSET));
}

size_t usc__batch_record_head(char head[USC__BATCH_RECORD_HEAD],
			      const char id[17], const char *text, size_t len)
{
	int n = snprintf(head, USC__BATCH_RECORD_HEAD,
			 "row %.16s %zu %016" PRIx64 "\n", id, len,
			 usc__batch_record_sum(id, text, len));

	return n > 0 && n < USC__BATCH_RECORD_HEAD ? (size_t)n : 0;
}

/* Flushes a directory, so that a file created in it stays. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (fsync(fd) != 0)
		e = errno;
	close(fd);
	return e;
}

usc_status usc__batch_journal_create(const char *dir, uint64_t run, int rank,
				     int *fd, uint64_t *size, usc_error *err)
{
	char path[4096];
	size_t n = sizeof JOURNAL_MAGIC - 1;
	int e = 0;

	*fd = -1;
	*size = 0;
	snprintf(path, sizeof path, "%s/%" PRIu64 ".%d.journal", dir, run,
		 rank);
	*fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
		   0666);
	if (*fd < 0)
		return usc__fail(err, USC_EIO, "%s: cannot create: %s", path,
				 strerror(errno));
	/* The first line, and the file itself, durable before any record
	 * counts on them. */
	if (write(*fd, JOURNAL_MAGIC, n) != (ssize_t)n)
		e = errno ? errno : EIO;
	else if (fsync(*fd) != 0)
		e = errno;
	else
		e = sync_dir(dir);
	if (e) {
		close(*fd);
		*fd = -1;
		unlink(path);
		return usc__fail(err, USC_EIO, "%s: cannot write: %s", path,
				 strerror(e));
	}
	*size = n;
	return USC_OK;
}

/* One file the scan reads: a journal, or a row file of an old layout. */
typedef struct source {
	char *name;
	uint64_t run; /* 0: an old row file */
	int rank;
	char id[17];  /* an old row file's case */
} source;

static int by_run(const void *a, const void *b)
{
	const source *x = a, *y = b;

	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_hex16(const char *s)
{
	for (int i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * Whether name is a journal's (RUN.RANK.journal, RUN > 0) or an old row
 * file's (<id>.row), and which.
 */
static bool classify(const char *name, source *s)
{
	size_t len = strlen(name);
	char *end;
	unsigned long long run;
	long rank;

	memset(s, 0, sizeof *s);
	if (len == 20 && strcmp(name + 16, ".row") == 0 && is_hex16(name)) {
		memcpy(s->id, name, 16);
		return true;
	}
	if (len < sizeof ".journal" ||
	    strcmp(name + len - (sizeof ".journal" - 1), ".journal") != 0 ||
	    name[0] < '1' || name[0] > '9')
		return false;
	errno = 0;
	run = strtoull(name, &end, 10);
	if (errno || *end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	rank = strtol(end + 1, &end, 10);
	if (errno || strcmp(end, ".journal") != 0 || rank > 1 << 30)
		return false;
	s->run = run;
	s->rank = (int)rank;
	return true;
}

/*
 * The records of one journal's text, up to the first that is damaged
 * (incomplete, malformed or failing its checksum: the tail a killed
 * batch left), through fn.
 */
static void records(const source *s, char *text, size_t len,
		    usc__batch_record_fn fn, void *ctx)
{
	size_t at = sizeof JOURNAL_MAGIC - 1;

	while (at < len) {
		char *line = text + at, *nl, *end, id[17];
		unsigned long long n, sum;

		nl = memchr(line, '\n', len - at);
		/* (The shortest first line: "row ", 16 digits, " 0 ", 16
		 * digits; nothing is read past its end.) */
		if (!nl || nl - line < 39 ||
		    nl - line > USC__BATCH_RECORD_HEAD ||
		    strncmp(line, "row ", 4) != 0 || !is_hex16(line + 4) ||
		    line[20] != ' ' || line[21] < '0' || line[21] > '9')
			return;
		memcpy(id, line + 4, 16);
		id[16] = 0;
		errno = 0;
		n = strtoull(line + 21, &end, 10);
		if (errno || *end != ' ' || end + 17 != nl ||
		    !is_hex16(end + 1))
			return;
		sum = strtoull(end + 1, NULL, 16);
		at = (size_t)(nl + 1 - text);
		if (n > len - at ||
		    usc__batch_record_sum(id, text + at, (size_t)n) != sum)
			return;
		fn(ctx, id, s->run, text + at, (size_t)n);
		at += (size_t)n;
	}
}

usc_status usc__batch_journal_scan(const char *dir, usc__batch_record_fn fn,
				   void *ctx, uint64_t *last_run,
				   usc_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	source *src = NULL;
	size_t n = 0, cap = 0;
	usc_status st = USC_OK;

	*last_run = 0;
	if (!d)
		return usc__fail(err, USC_EIO, "%s: cannot read: %s", dir,
				 strerror(errno));
	while ((e = readdir(d)) != NULL) {
		source s;

		if (!classify(e->d_name, &s))
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 16;
			source *g = usc__realloc(src, c * sizeof *g);

			if (!g) {
				st = usc__fail(err, USC_ENOMEM,
					       "out of memory");
				break;
			}
			src = g;
			cap = c;
		}
		s.name = usc__malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!s.name) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		sprintf(s.name, "%s/%s", dir, e->d_name);
		src[n++] = s;
		if (s.run > *last_run)
			*last_run = s.run;
	}
	closedir(d);
	/* Oldest first, so that a later record of a case (a failed case
	 * checked again) is the one that stays. */
	if (st == USC_OK && n > 1)
		qsort(src, n, sizeof *src, by_run);
	for (size_t i = 0; st == USC_OK && i < n; i++) {
		char *text = NULL;
		size_t len = 0;

		st = usc__read_file(src[i].name, &text, &len, err);
		if (st != USC_OK)
			break;
		if (src[i].run == 0) {
			fn(ctx, src[i].id, 0, text, len);
		} else if (len >= sizeof JOURNAL_MAGIC - 1 &&
			   memcmp(text, JOURNAL_MAGIC,
				  sizeof JOURNAL_MAGIC - 1) == 0) {
			records(&src[i], text, len, fn, ctx);
		} else if (len >= sizeof JOURNAL_MAGIC - 1 ||
			   memcmp(text, JOURNAL_MAGIC, len) != 0) {
			/* (Shorter and a prefix of the first line: a batch
			 * killed while it created the journal.) */
			st = usc__fail(err, USC_EPARSE,
				       "%s: not a batch journal (expected a "
				       "first line '%.*s'); remove it, or "
				       "run with --restart",
				       src[i].name,
				       (int)sizeof JOURNAL_MAGIC - 2,
				       JOURNAL_MAGIC);
		}
		usc__free(text);
	}
	for (size_t i = 0; i < n; i++)
		usc__free(src[i].name);
	usc__free(src);
	return st;
}
