/*
 * Shared by the result file's writer, reader and statistics: the names of
 * schema version 1 and the checks both sides make.
 */
#ifndef USC_STORE_RESULTS_INTERNAL_H
#define USC_STORE_RESULTS_INTERNAL_H

#include "ulpscope/results.h"

/* Room for any path the result file uses: a kernel name and a suffix. */
#define USC__RESULTS_PATH_SIZE (USC_RESULTS_MAX_NAME + 128)

/*
 * Checks an output before it is summarized or written: both tensors
 * present, of one supported type and one shape, every array present.
 * what names the output in messages ("kernel 'k', output 0").
 */
usc_status usc__results_check_output(const usc_results_output *o,
				     const char *what, usc_error *err);

/*
 * Checks a kernel name: not empty, not ".", no '/', at most
 * USC_RESULTS_MAX_NAME bytes.  path names the file in messages.
 */
usc_status usc__results_check_name(const char *path, const char *name,
				   usc_error *err);

/*
 * snprintf for the paths of the file.  Kernel names are checked to be at
 * most USC_RESULTS_MAX_NAME bytes, so a buffer of USC__RESULTS_PATH_SIZE
 * always holds the path; going through vsnprintf keeps the compiler from
 * warning about truncations that cannot happen.
 */
void usc__results_path(char *buf, size_t size, const char *fmt, ...)
	USC__PRINTF(3, 4);

/* The ISO 8601 UTC form of the current time, "YYYY-MM-DDThh:mm:ssZ". */
void usc__results_now(char *buf, size_t size);

/*
 * The open HDF5 file of a writer or a reader, for the store's other
 * tables (results_batch.c).
 */
struct usc__h5_file;
struct usc__h5_file *usc__results_writer_file(usc_results *w);
struct usc__h5_file *usc__results_reader_file(usc_results_reader *r);

#endif /* USC_STORE_RESULTS_INTERNAL_H */
