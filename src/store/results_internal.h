/*
 * Shared by the result file's writer, reader and statistics: the names of
 * schema version 1 and the checks both sides make.
 */
#ifndef USC_STORE_RESULTS_INTERNAL_H
#define USC_STORE_RESULTS_INTERNAL_H

#include "store/h5_door.h"
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

/*
 * Makes room in an accumulator for n values at once (at most the 2^20 it
 * keeps in memory), so that a caller who knows the count spares the
 * accumulator its doublings and their copies.  Changes no figure.
 */
usc_status usc__results_stats_acc_reserve(usc_results_stats_acc *a,
					  uint64_t n, usc_error *err);

/*
 * Says that every row of the kernel being written (usc_results_begin_kernel)
 * is in: its per-element datasets are closed, which writes what their
 * chunk caches still hold, so that a caller can do it while other
 * threads finish the figures usc_results_end_kernel then writes.  Every
 * row must be in (else an error naming the output); a row written after
 * it is refused as one too many.
 */
usc_status usc__results_rows_done(usc_results *w, usc_error *err);

/*
 * The open file of a writer, for the writers of other groups than
 * /kernels (results_audit.c); NULL when an earlier failure left it
 * unusable.
 */
struct usc__h5_file *usc__results_file(usc_results *w);

/* The ISO 8601 UTC form of the current time, "YYYY-MM-DDThh:mm:ssZ". */
void usc__results_now(char *buf, size_t size);

/*
 * The open HDF5 file of a writer or a reader, for the store's other
 * tables (results_batch.c).
 */
struct usc__h5_file;
struct usc__h5_file *usc__results_writer_file(usc_results *w);
struct usc__h5_file *usc__results_reader_file(usc_results_reader *r);

/* ---- What the reader checks (results_validate.c). ---- */

/* A kernel's verdict attribute: "" or one of usc_verdict_name's. */
usc_status usc__results_check_verdict(const char *path, const char *kg,
				      const char *verdict, usc_error *err);

/* The shape of output i of computation c (NULL when it has none). */
const usc_hlo_shape *usc__results_hlo_output(const usc_hlo_computation *c,
					     size_t i);

/*
 * A kernel's ops table (n rows) against its HLO: the index column counts
 * the rows; with the kernel's computation c (NULL when its HLO text is
 * empty), one row per instruction, each with the instruction's name and
 * opcode, and output_count equal to the root's outputs.
 */
usc_status usc__results_check_ops(const char *path, const char *kg,
				  const usc__h5_op_row *rows, size_t n,
				  const usc_hlo_computation *c,
				  size_t output_count, usc_error *err);

/*
 * Output i's device dataset shape (dt, rank, dims) against the kernel's
 * output i in c (when c is not NULL) and against the output group g's
 * shape attribute, shape_attr.
 */
usc_status usc__results_check_shape(const char *path, const char *g,
				    const char *shape_attr, usc_dtype dt,
				    size_t rank, const int64_t *dims,
				    const usc_hlo_computation *c, size_t i,
				    usc_error *err);

/*
 * An output's values as read back (group g of f): NaN oracle midpoints
 * only with NaN errors, half-widths >= 0, undecided 0 or 1, envelope
 * bounds as their flags say and lo <= hi, the stored statistics and
 * counts equal to what the datasets give, and top_ops rows below
 * attr_ops (the kernel's attribution table's rows).
 */
usc_status usc__results_check_values(usc__h5_file *f, const char *g,
				     const usc_results_output_data *o,
				     size_t attr_ops, usc_error *err);

/*
 * The audits' groups (results_audit.c): writes one audit as the complete
 * group g (created here); opens the result file at path for the audit
 * name (created, replaced or appended to as flags say), refusing a name
 * already under /audits, with g set to "/audits/<name>".
 */
struct usc_audit_report;
usc_status usc__audit_write_group(usc__h5_file *f, const char *g,
				  const struct usc_audit_report *r,
				  usc_error *err);
usc_status usc__audit_open(const char *path, const char *name,
			   unsigned flags, usc_results **w, char *g,
			   usc_error *err);

/*
 * One row of a pipeline's stage table, /audits/<name>/stages (docs/audit.md,
 * "The result file"), for its writer (results_audit_pipeline.c) and its
 * readers (the report).  The writer points the strings at the pipeline's
 * own, which it does not change; a row read back owns its strings
 * (usc__audit_stages_free).
 */
typedef struct usc__stage_row {
	uint64_t index;
	char *label;
	char *pass;
	char *file;
	uint64_t evaluated;
	int64_t same_as;
	uint64_t moved, function_moved, function_changed;
	double max, p99, median;
	uint64_t nan;
	int64_t gate;
	char *gate_reason;
} usc__stage_row;

/*
 * Reads the stage table at dataset ds into *rows (usc__calloc) of *n rows,
 * refusing a table that is not one-dimensional, not fully stored or longer
 * than any pipeline is, and one whose columns are not the writer's.
 */
usc_status usc__audit_stages_read(usc__h5_file *f, const char *ds,
				  usc__stage_row **rows, size_t *n,
				  usc_error *err);
void usc__audit_stages_free(usc__stage_row *rows, size_t n);

#endif /* USC_STORE_RESULTS_INTERNAL_H */
