/*
 * The batch index file (src/store/results_batch.c): the /batch table and
 * the links of a batch's result, written and read through the door to
 * HDF5 (internal).
 */
#ifndef USC_BATCH_INDEX_H
#define USC_BATCH_INDEX_H

#include "ulpscope/batch.h"

/*
 * Writes the index at out (a temporary renamed into place): rows, the
 * shard and case count of b, and the options string that a resumed run
 * or a merge compares.  force: replace any regular file at out
 * (USC_RESULTS_FORCE).
 */
usc_status usc__batch_index_write(const char *out, const usc_batch_result *b,
				  const char *options, bool force,
				  usc_error *err);

/*
 * Reads an index into b (rows in stored order, shard, case count) and
 * its options string (usc__malloc'd).  On failure b may hold the rows
 * read so far; the caller frees them.
 */
usc_status usc__batch_index_read(const char *path, usc_batch_result *b,
				 char **options, usc_error *err);

#endif /* USC_BATCH_INDEX_H */
