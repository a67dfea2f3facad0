/*
 * The batch's rows, journals and discovery (src/batch/row.c, journal.c,
 * discover.c).
 *
 * Rows must bring every field back exactly (strings with the characters
 * the format escapes, NaN and doubles bit for bit, every status), and a
 * damaged one must be refused, never read as a row: a good row in a
 * journal is what "this case is done" means.
 * Discovery is checked on a tree the test builds, against the order and
 * names docs/batch.md states.  Journals (src/batch/journal.c) must give
 * back every whole record, oldest run first, and drop a damaged tail:
 * the checksum is FNV-1a, checked against the published test vectors
 * and a value computed outside the code (Python, the algorithm's
 * definition).
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>

#include "internal.h"
#include "batch/batch_internal.h"

static char dir[] = "/tmp/usc-batch-rows-XXXXXX";

static char *path_in(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void roundtrip(void **state)
{
	usc_batch_row r, back;
	usc_error err;
	char *text;
	size_t len;
	/* 0x1.fffffffffffffp-1 and 1/3: doubles no short decimal keeps. */
	const double third = 0x1.5555555555555p-2;

	(void)state;
	for (int s = 0; s < USC_BATCH_STATUS_COUNT; s++) {
		memset(&r, 0, sizeof r);
		r.index = UINT64_MAX - (uint64_t)s;
		r.status = (usc_batch_status)s;
		assert_true(usc__batch_set(&r.path, "a/b c\\d"));
		assert_true(usc__batch_set(&r.kernel, "k"));
		assert_true(usc__batch_set(&r.message,
					   "line one\nline\ttwo\\n"));
		assert_true(usc__batch_set(&r.verdict, ""));
		r.elements = 12345678901234ull;
		for (int c = 0; c < USC_CLASS_COUNT; c++)
			r.counts[c] = (uint64_t)c * 1000003u;
		r.max_ulp_reference = NAN;
		r.max_ulp_oracle = 0x1.fffffffffffffp-1;
		r.culprit_share = third;
		r.seconds = -0.0;
		assert_int_equal(usc__batch_row_format(&r, &text, &len, &err),
				 USC_OK);
		assert_int_equal(usc__batch_row_parse("r", text, len, &back,
						      &err),
				 USC_OK);
		usc__free(text);
		assert_int_equal(back.index, r.index);
		assert_int_equal(back.status, r.status);
		assert_string_equal(back.path, "a/b c\\d");
		assert_string_equal(back.message, "line one\nline\ttwo\\n");
		assert_string_equal(back.verdict, "");
		assert_int_equal(back.elements, r.elements);
		for (int c = 0; c < USC_CLASS_COUNT; c++)
			assert_int_equal(back.counts[c], r.counts[c]);
		assert_true(isnan(back.max_ulp_reference));
		assert_memory_equal(&back.max_ulp_oracle, &r.max_ulp_oracle,
				    sizeof(double));
		assert_memory_equal(&back.culprit_share, &r.culprit_share,
				    sizeof(double));
		assert_true(back.seconds == 0 && signbit(back.seconds));
		usc_batch_row_clear(&back);
		usc_batch_row_clear(&r);
	}
}

static void refuse(const char *text, const char *want)
{
	usc_batch_row r;
	usc_error err;
	char copy[256];

	snprintf(copy, sizeof copy, "%s", text);
	assert_int_not_equal(usc__batch_row_parse("bad.row", copy,
						  strlen(copy), &r, &err),
			     USC_OK);
	if (!strstr(err.message, want))
		fail_msg("'%s' does not say '%s'", err.message, want);
	assert_non_null(strstr(err.message, "bad.row"));
}

static void damaged(void **state)
{
	(void)state;
	refuse("ulpscope-batch-row 1\nindex=3\nstatus=ok\n", "truncated");
	refuse("ulpscope-batch-row 1\nindex=3\nstatus=ok", "no end");
	refuse("something else\nend\n", "not a batch row");
	refuse("ulpscope-batch-row 1\nstatus=exploded\nend\n", "status");
	refuse("ulpscope-batch-row 1\nindex=-1\nend\n", "index");
	refuse("ulpscope-batch-row 1\nmax_ulp_oracle=1.5x\nend\n",
	       "max_ulp_oracle");
	refuse("ulpscope-batch-row 1\njunk line\nend\n", "key=value");
	refuse("", "not a batch row");
}

static void make_case(const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "mkdir -p '%s/%s'", dir, rel);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof p, "%s/%s/kernel.hlo", dir, rel);
	write_text(p, "HloModule m\n");
}

static void discovery(void **state)
{
	usc__batch_case *c = NULL;
	size_t n = 0;
	usc_error err;
	char root[256], list[256];
	const char *roots[2];
	/* Byte order: 'B' < 'a' < 'b'; a case is not searched further. */
	static const char *const want[] = {"B", "a/x", "a/y", "b"};
	static const char *const links[] = {"B", "a:x", "a:y", "b"};

	(void)state;
	snprintf(root, sizeof root, "%s/tree", dir);
	make_case("tree/b");
	make_case("tree/a/y");
	make_case("tree/a/x");
	make_case("tree/B");
	make_case("tree/b/inner"); /* inside a case: not a case of its own */
	make_case("tree/.hidden");
	roots[0] = root;
	assert_int_equal(usc__batch_discover(roots, 1, &c, &n, &err), USC_OK);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		char p[600];

		snprintf(p, sizeof p, "%s/%s", root, want[i]);
		assert_string_equal(c[i].path, p);
		assert_string_equal(c[i].link, links[i]);
		assert_int_equal(c[i].index, i);
		assert_int_equal(strlen(c[i].id), 16);
		assert_int_equal(c[i].bytes, strlen("HloModule m\n"));
	}
	usc__batch_cases_free(c, n);

	/* A list file; the same case twice is refused. */
	snprintf(list, sizeof list, "%s/list.txt", dir);
	{
		char text[1024];

		snprintf(text, sizeof text,
			 "# cases\n\n  %s/b  \n%s/a/x\n", root, root);
		write_text(list, text);
	}
	roots[0] = list;
	assert_int_equal(usc__batch_discover(roots, 1, &c, &n, &err), USC_OK);
	assert_int_equal(n, 2);
	assert_non_null(strstr(c[0].path, "tree/b"));
	usc__batch_cases_free(c, n);
	roots[1] = root;
	assert_int_equal(usc__batch_discover(roots, 2, &c, &n, &err),
			 USC_EINVAL);
	assert_non_null(strstr(err.message, "same case"));

	/* A listed path that is not a case names the line. */
	write_text(list, "# cases\n/nonexistent/case\n");
	roots[0] = list;
	assert_int_equal(usc__batch_discover(roots, 1, &c, &n, &err),
			 USC_ENOTFOUND);
	assert_non_null(strstr(err.message, "list.txt:2"));

	/* Two roots whose cases share a name below them. */
	make_case("other/b");
	{
		char other[256];

		snprintf(other, sizeof other, "%s/other", dir);
		roots[0] = root;
		roots[1] = other;
		assert_int_equal(usc__batch_discover(roots, 2, &c, &n, &err),
				 USC_OK);
		assert_int_equal(n, 5);
		assert_string_equal(c[3].link, "b");
		assert_string_equal(c[4].link, "b#4");
		usc__batch_cases_free(c, n);
	}
}

/* What journal_scan gave: up to 8 records. */
typedef struct seen {
	size_t n;
	char id[8][17];
	uint64_t run[8];
	char text[8][64];
} seen;

static void collect(void *ctx, const char *id, uint64_t run, char *text,
		    size_t len)
{
	seen *s = ctx;

	assert_true(s->n < 8 && len < 64);
	snprintf(s->id[s->n], 17, "%s", id);
	s->run[s->n] = run;
	memcpy(s->text[s->n], text, len);
	s->text[s->n][len] = 0;
	s->n++;
}

/* Appends a record of case id to fd, as the batch's commit does. */
static void append(int fd, const char *id, const char *text)
{
	char head[USC__BATCH_RECORD_HEAD];
	size_t h = usc__batch_record_head(head, id, text, strlen(text));

	assert_true(h > 0);
	assert_int_equal(write(fd, head, h), (ssize_t)h);
	assert_int_equal(write(fd, text, strlen(text)),
			 (ssize_t)strlen(text));
}

static void journals(void **state)
{
	char jdir[512], head[USC__BATCH_RECORD_HEAD], cmd[600];
	uint64_t size, last;
	usc_error err;
	seen s;
	int fd;

	(void)state;
	/* FNV-1a 64: the published vectors. */
	assert_true(usc__batch_fnv("a", 1, USC__FNV_OFFSET) ==
		    0xaf63dc4c8601ec8cull);
	assert_true(usc__batch_fnv("foobar", 6, USC__FNV_OFFSET) ==
		    0x85944171f73967e8ull);
	/* A record's first line: id, length, FNV-1a of the id's digits
	 * then the text (computed in Python). */
	size = usc__batch_record_head(head, "0123456789abcdef", "x", 1);
	assert_int_equal(size, strlen(head));
	assert_string_equal(head, "row 0123456789abcdef 1 353d01cf45a60d7f\n");

	snprintf(jdir, sizeof jdir, "%s/rows", dir);
	assert_int_equal(mkdir(jdir, 0777), 0);
	/* Run 2: two records, then one cut short (a kill mid-append). */
	assert_int_equal(usc__batch_journal_create(jdir, 2, 0, &fd, &size,
						   &err),
			 USC_OK);
	assert_int_equal(size, strlen("ulpscope-batch-journal 1\n"));
	append(fd, "00000000000000aa", "second of aa\n");
	append(fd, "00000000000000bb", "first of bb\n");
	append(fd, "00000000000000cc", "cut short\n");
	assert_int_equal(ftruncate(fd, lseek(fd, 0, SEEK_END) - 3), 0);
	close(fd);
	/* The same run and number again: refused, not appended to. */
	assert_int_not_equal(usc__batch_journal_create(jdir, 2, 0, &fd, &size,
						       &err),
			     USC_OK);
	assert_non_null(strstr(err.message, "2.0.journal"));
	/* Run 10, rank 1 (after run 2: numbers, not names, order runs): a
	 * record whose checksum does not match, then a whole one, which is
	 * dropped with it (nothing after a damaged record counts). */
	assert_int_equal(usc__batch_journal_create(jdir, 10, 1, &fd, &size,
						   &err),
			 USC_OK);
	append(fd, "00000000000000bb", "second of bb\n");
	append(fd, "00000000000000dd", "damaged\n");
	size = (uint64_t)lseek(fd, 0, SEEK_END);
	append(fd, "00000000000000ee", "after the damage\n");
	close(fd);
	/* (Not through fd: a journal is opened to append, and pwrite on
	 * such a file appends on Linux.) */
	fd = open(path_in("rows/10.1.journal"), O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, (off_t)size - 3), 1);
	close(fd);
	/* Run 11: its first line cut short (killed while creating it). */
	write_text(path_in("rows/11.0.journal"), "ulpscope-batch-jou");
	/* The earlier layout: a row file per case, older than any run. */
	write_text(path_in("rows/00000000000000aa.row"), "first of aa\n");
	/* Not the batch's: passed over. */
	write_text(path_in("rows/notes.txt"), "mine\n");

	memset(&s, 0, sizeof s);
	assert_int_equal(usc__batch_journal_scan(jdir, collect, &s, &last,
						 &err),
			 USC_OK);
	assert_int_equal(last, 11);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.id[0], "00000000000000aa");
	assert_int_equal(s.run[0], 0);
	assert_string_equal(s.text[0], "first of aa\n");
	assert_string_equal(s.id[1], "00000000000000aa");
	assert_int_equal(s.run[1], 2);
	assert_string_equal(s.text[1], "second of aa\n");
	assert_string_equal(s.text[2], "first of bb\n");
	assert_int_equal(s.run[3], 10);
	assert_string_equal(s.id[3], "00000000000000bb");
	assert_string_equal(s.text[3], "second of bb\n");

	/* A file named as a journal that is not one is refused, named. */
	write_text(path_in("rows/12.0.journal"), "something else\n");
	assert_int_equal(usc__batch_journal_scan(jdir, collect, &s, &last,
						 &err),
			 USC_EPARSE);
	assert_non_null(strstr(err.message, "12.0.journal"));
	assert_non_null(strstr(err.message, "not a batch journal"));
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", jdir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip),
		cmocka_unit_test(damaged),
		cmocka_unit_test(discovery),
		cmocka_unit_test(journals),
	};
	char cmd[600];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
