/*
 * LiteralProto -> tensors against the table of tools/gen_literal_table.py:
 * HloSnapshots XLA:CPU wrote for every element type XLA and ulpscope share,
 * hand-written literals in other layouts, and the bytes numpy/ml_dtypes
 * hold for each array (expected_*.npy, read as plain u8 arrays).  Then the
 * malformed, truncated and lying files of errors.txt, each of which must
 * fail with the message the table gives.
 *
 * usage: test_literal_table [DIR]  (default: tests/proto/fixtures)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/tensor.h"
#include "ulpscope/xla_proto.h"
#include "test_util.h"

static char dir[512];

static void path_of(char *dst, size_t size, const char *name)
{
	snprintf(dst, size, "%.500s/%.255s", dir, name);
}

/* The literal WHAT names in a snapshot (arg0, result, result.1). */
static const usc_tensor *pick(const usc_snapshot *s, const char *what)
{
	if (strncmp(what, "arg", 3) == 0) {
		const usc_literal *l =
			usc_snapshot_argument(s, (size_t)atoi(what + 3));
		return l ? usc_literal_tensor(l) : NULL;
	}
	const usc_literal *r = usc_snapshot_result(s);
	if (!r)
		return NULL;
	if (strcmp(what, "result") == 0)
		return usc_literal_tensor(r);
	const usc_literal *e =
		usc_literal_tuple_element(r, (size_t)atoi(what + 7));
	return e ? usc_literal_tensor(e) : NULL;
}

static void check_row(const char *file, const char *what, const char *type,
		      const char *dims, const char *expected)
{
	char path[1200], epath[1200];
	usc_error err;
	usc_snapshot *s = NULL;
	usc_literal *lit = NULL;
	const usc_tensor *t = NULL;
	usc_dtype dt;

	path_of(path, sizeof path, file);
	path_of(epath, sizeof epath, expected);
	if (strcmp(what, "literal") == 0) {
		if (usc_literal_read_pb(path, &lit, &err) != USC_OK)
			fail_msg("%s", err.message);
		t = usc_literal_tensor(lit);
	} else {
		if (usc_snapshot_read(path, &s, &err) != USC_OK)
			fail_msg("%s", err.message);
		t = pick(s, what);
	}
	if (!t)
		fail_msg("%s: no literal %s", file, what);
	assert_int_equal(usc_dtype_from_name(type, strlen(type), &dt), USC_OK);
	if (usc_tensor_dtype(t) != dt)
		fail_msg("%s %s: type %s, expected %s", file, what,
			 usc_dtype_name(usc_tensor_dtype(t)), type);
	/* The shape, "2,3" or "-" for rank 0. */
	size_t rank = 0;
	int64_t want[8];
	if (strcmp(dims, "-") != 0)
		for (const char *p = dims; *p;) {
			want[rank++] = strtoll(p, (char **)&p, 10);
			if (*p == ',')
				p++;
		}
	assert_int_equal(usc_tensor_rank(t), rank);
	for (size_t i = 0; i < rank; i++)
		assert_int_equal(usc_tensor_dims(t)[i], want[i]);
	/* The bytes, against numpy's. */
	usc_tensor_spec spec = {USC_U8, USC_TENSOR_ANY_SHAPE, NULL, expected};
	usc_tensor *e = NULL;
	if (usc_tensor_read_npy(epath, &spec, &e, &err) != USC_OK)
		fail_msg("%s", err.message);
	if (usc_tensor_nbytes(e) != usc_tensor_nbytes(t) ||
	    memcmp(usc_tensor_cdata(e), usc_tensor_cdata(t),
		   usc_tensor_nbytes(t)) != 0) {
		const unsigned char *a = usc_tensor_cdata(t);
		const unsigned char *b = usc_tensor_cdata(e);
		size_t i = 0, n = usc_tensor_nbytes(t);
		while (i < n && i < usc_tensor_nbytes(e) && a[i] == b[i])
			i++;
		fail_msg("%s %s: byte %zu differs from %s (%zu vs %zu bytes)",
			 file, what, i, expected, n, usc_tensor_nbytes(e));
	}
	usc_tensor_destroy(e);
	usc_snapshot_destroy(s);
	usc_literal_destroy(lit);
}

static void test_table(void **state)
{
	(void)state;
	char path[1200], line[1024];
	path_of(path, sizeof path, "table.txt");
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	size_t rows = 0;
	long live = usc__alloc_live();
	while (fgets(line, sizeof line, fp)) {
		char file[256], what[32], type[32], dims[64], expected[256];
		if (sscanf(line, "%255s %31s %31s %63s %255s", file, what,
			   type, dims, expected) != 5)
			fail_msg("table.txt: bad line '%s'", line);
		check_row(file, what, type, dims, expected);
		rows++;
	}
	fclose(fp);
	/* Every type twice (argument, result) and the extra rows. */
	assert_true(rows >= 60);
	assert_int_equal(usc__alloc_live(), live);
}

static void test_errors(void **state)
{
	(void)state;
	char path[1200], line[1024];
	path_of(path, sizeof path, "errors.txt");
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	size_t rows = 0;
	long live = usc__alloc_live();
	while (fgets(line, sizeof line, fp)) {
		char file[256], kind[32];
		int off = 0;
		usc_error err;
		usc_status st;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%255s %31s %n", file, kind, &off) != 2)
			fail_msg("errors.txt: bad line '%s'", line);
		const char *text = line + off;
		path_of(path, sizeof path, file);
		if (strcmp(kind, "literal") == 0) {
			usc_literal *l = NULL;
			st = usc_literal_read_pb(path, &l, &err);
			usc_literal_destroy(l);
		} else if (strcmp(kind, "snapshot") == 0) {
			usc_snapshot *s = NULL;
			st = usc_snapshot_read(path, &s, &err);
			usc_snapshot_destroy(s);
		} else {
			usc_hlo_file *f = NULL;
			st = usc_hlo_parse_pb_file(path, &f, &err);
			usc_hlo_file_destroy(f);
		}
		if (st == USC_OK)
			fail_msg("%s: read as %s without an error", file, kind);
		if (!strstr(err.message, text) || !strstr(err.message, file))
			fail_msg("%s: message\n  %s\nlacks the file or\n  %s",
				 file, err.message, text);
		rows++;
	}
	fclose(fp);
	assert_true(rows >= 10);
	assert_int_equal(usc__alloc_live(), live);
}

int main(int argc, char **argv)
{
	const char *src = usc_test_src_dir();
	if (argc > 1)
		snprintf(dir, sizeof dir, "%.500s", argv[1]);
	else
		snprintf(dir, sizeof dir, "%.470s/tests/proto/fixtures",
			 src);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
