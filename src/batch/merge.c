/*
 * ulpscope merge (include/ulpscope/batch.h, docs/batch.md, "Shards"):
 * the indexes of a batch's shards into one index, refusing shards that
 * do not belong together.  The cases' result files stay where the shards
 * wrote them; the merged index links to them by paths relative to its
 * own directory.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_index.h"
#include "batch/batch_internal.h"
#include "ulpscope/results.h"

/*
 * The path of file rel (relative to directory from_dir) relative to
 * directory to_dir instead; both directories must exist.
 */
static char *rebase(const char *from_dir, const char *rel, const char *to_dir)
{
	char a[PATH_MAX], b[PATH_MAX], *out;
	size_t common = 0, ups = 0, len;
	const char *rest;

	if (rel[0] == '/')
		return usc__strndup(rel, strlen(rel));
	if (!realpath(from_dir, a) || !realpath(to_dir, b))
		return NULL;
	if (strlen(a) + strlen(rel) + 2 > sizeof a)
		return NULL;
	if (strcmp(a, "/") != 0)
		strcat(a, "/");
	strcat(a, rel);
	if (strcmp(b, "/") != 0)
		strcat(b, "/");
	/* The longest common prefix ending at a '/'. */
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			common = i + 1;
	for (const char *p = b + common; *p; p++)
		if (*p == '/')
			ups++;
	rest = a + common;
	len = 3 * ups + strlen(rest) + 1;
	out = usc__malloc(len);
	if (!out)
		return NULL;
	out[0] = 0;
	for (size_t i = 0; i < ups; i++)
		strcat(out, "../");
	strcat(out, rest);
	return out;
}

static int by_index(const void *x, const void *y)
{
	const usc_batch_row *a = x, *b = y;

	return (a->index > b->index) - (a->index < b->index);
}

usc_status usc_batch_merge(const char *const *shards, size_t count,
			   const char *out, bool allow_partial, bool force,
			   usc_batch_result **result, usc_error *err)
{
	usc_batch_result *m = NULL, part;
	char *opts = NULL, *first_opts = NULL, *out_dir = NULL;
	size_t *owner = NULL, shard_count = 0, case_total = 0, seen_n = 0;
	bool *seen = NULL;
	usc_status st = USC_OK;

	*result = NULL;
	if (count == 0)
		return usc__fail(err, USC_EINVAL, "merge needs shard indexes");
	st = usc_results_check_target(out, false,
				      force ? USC_RESULTS_FORCE : 0, err);
	if (st != USC_OK)
		return st;
	m = usc__calloc(1, sizeof *m);
	out_dir = usc__path_dir(out);
	if (!m || !out_dir) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t s = 0; s < count && st == USC_OK; s++) {
		char *shard_dir;
		usc_batch_row *grown;

		memset(&part, 0, sizeof part);
		st = usc__batch_index_read(shards[s], &part, &opts, err);
		if (st != USC_OK) {
			for (size_t i = 0; i < part.row_count; i++)
				usc_batch_row_clear(&part.rows[i]);
			usc__free(part.rows);
			break;
		}
		if (s == 0) {
			first_opts = opts;
			shard_count = part.shard_count;
			case_total = part.case_total;
			seen = usc__calloc(shard_count, sizeof *seen);
			owner = usc__calloc(case_total ? case_total : 1,
					    sizeof *owner);
			if (!seen || !owner)
				st = usc__fail(err, USC_ENOMEM,
					       "out of memory");
		} else {
			if (strcmp(opts, first_opts) != 0)
				st = usc__fail(err, USC_EINVAL,
					       "%s was made with other options "
					       "than %s (%s, not %s)",
					       shards[s], shards[0], opts,
					       first_opts);
			else if (part.shard_count != shard_count ||
				 part.case_total != case_total)
				st = usc__fail(err, USC_EINVAL,
					       "%s is shard %zu of %zu over %zu "
					       "cases, but %s is of %zu over "
					       "%zu: not the same batch",
					       shards[s], part.shard_index + 1,
					       part.shard_count,
					       part.case_total, shards[0],
					       shard_count, case_total);
			usc__free(opts);
		}
		opts = NULL;
		if (st == USC_OK && seen[part.shard_index])
			st = usc__fail(err, USC_EINVAL,
				       "shard %zu/%zu is given twice (%s)",
				       part.shard_index + 1, shard_count,
				       shards[s]);
		if (st == USC_OK)
			seen[part.shard_index] = true;
		shard_dir = usc__path_dir(shards[s]);
		grown = usc__reallocarray(m->rows, m->row_count +
						   part.row_count + 1,
					  sizeof *grown);
		if (grown)
			m->rows = grown;
		if (st == USC_OK && (!shard_dir || !grown))
			st = usc__fail(err, USC_ENOMEM, "out of memory");
		for (size_t i = 0; i < part.row_count; i++) {
			usc_batch_row *r = &part.rows[i];

			if (st == USC_OK && owner[r->index]) {
				st = usc__fail(err, USC_EINVAL,
					       "case %s is in both %s and %s",
					       r->path,
					       shards[owner[r->index] - 1],
					       shards[s]);
			}
			if (st == USC_OK && r->result && r->result[0]) {
				char *p = rebase(shard_dir, r->result,
						 out_dir);

				if (!p)
					st = usc__fail(
						err, USC_EIO,
						"%s: cannot locate %s from %s",
						shards[s], r->result, out_dir);
				else {
					usc__free(r->result);
					r->result = p;
				}
			}
			if (st == USC_OK) {
				owner[r->index] = s + 1;
				m->rows[m->row_count++] = *r;
				seen_n++;
			} else {
				usc_batch_row_clear(r);
			}
		}
		usc__free(part.rows);
		usc__free(shard_dir);
	}
	if (st == USC_OK && !allow_partial && seen_n != case_total) {
		size_t missing = 0;

		while (missing < shard_count && seen[missing])
			missing++;
		st = usc__fail(err, USC_EINVAL,
			       "the shards hold %zu of the batch's %zu cases"
			       "%s%zu/%zu missing); --allow-partial merges "
			       "them anyway",
			       seen_n, case_total,
			       missing < shard_count ? " (shard " : " (",
			       missing < shard_count ? missing + 1 : 0,
			       shard_count);
	}
	if (st == USC_OK) {
		qsort(m->rows, m->row_count, sizeof *m->rows, by_index);
		m->shard_index = 0;
		m->shard_count = 1;
		m->case_total = case_total;
		st = usc__batch_index_write(out, m, first_opts, force, err);
	}
done:
	usc__free(first_opts);
	usc__free(out_dir);
	usc__free(owner);
	usc__free(seen);
	if (st != USC_OK) {
		usc_batch_result_destroy(m);
		return st;
	}
	*result = m;
	return USC_OK;
}
