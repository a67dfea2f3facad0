/*
 * ulpscope: the result file.
 *
 * One HDF5 file holds the analysis of many kernels.  A writer
 * (usc_results) builds the file under a temporary name and renames it when
 * it is complete, so a crash never leaves a half file that looks whole; a
 * reader (usc_results_reader) refuses anything that is not a complete file
 * of a schema version it knows.  docs/results.md describes the layout
 * (schema version 1), the statistics and how to read the file with h5py.
 *
 * Later stages add datasets and attributes to the same groups; readers
 * ignore names they do not know, so such additions keep the schema
 * version.  The version changes only when a name of version 1 changes
 * meaning or disappears.
 */
#ifndef ULPSCOPE_RESULTS_H
#define ULPSCOPE_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/dtype.h"
#include "ulpscope/hlo.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this library writes and reads. */
#define USC_RESULTS_SCHEMA_VERSION 1

/* The longest kernel name, in bytes. */
#define USC_RESULTS_MAX_NAME 1024

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

/*
 * Statistics of the magnitudes |x| of an array, NaN left out and counted.
 * The median and the 99th percentile are nearest-rank percentiles of the
 * sorted magnitudes v[1] <= ... <= v[count]: P(p) = v[ceil(p * count /
 * 100)].  So the median is the lower median v[ceil(count / 2)] (for an
 * even count the smaller of the two middle values, never their mean), and
 * every figure is one of the data's own values, bit for bit.  Infinities
 * take part (they sort above every finite value).  With count 0 the three
 * figures are NaN.
 */
typedef struct usc_results_stats {
	uint64_t count;     /* values that are not NaN */
	uint64_t nan_count; /* NaN values, left out of the figures */
	double max_abs;
	double median_abs;
	double p99_abs;
} usc_results_stats;

/* The statistics of n values; USC_ENOMEM when the sort buffer fails. */
usc_status usc_results_stats_compute(const double *x, uint64_t n,
				     usc_results_stats *out, usc_error *err);

/*
 * The same statistics over values that come a piece at a time, in bounded
 * memory: up to 2^20 values are held in memory, beyond that they go to a
 * temporary file (tmpfile), from which the median and the 99th percentile
 * are selected exactly.  usc_results_stats_acc_finish gives what
 * usc_results_stats_compute gives for all the values added, bit for bit.
 */
typedef struct usc_results_stats_acc usc_results_stats_acc;

usc_status usc_results_stats_acc_new(usc_results_stats_acc **out,
				     usc_error *err);
/* USC_EIO when the temporary file cannot be made or written. */
usc_status usc_results_stats_acc_add(usc_results_stats_acc *a,
				     const double *x, size_t n,
				     usc_error *err);
usc_status usc_results_stats_acc_finish(usc_results_stats_acc *a,
					usc_results_stats *out,
					usc_error *err);
/* Frees the accumulator and its temporary file; NULL is allowed. */
void usc_results_stats_acc_free(usc_results_stats_acc *a);

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/*
 * One output of a kernel.  device and reference are tensors of the
 * output's element type and shape (the device's encodings and the
 * reference implementation's); every array has one element per output
 * element, in C order.  Complex, token and opaque outputs are not
 * supported by schema version 1.
 */
typedef struct usc_results_output {
	const usc_tensor *device;
	const usc_tensor *reference;
	const double *oracle_mid;          /* enclosure midpoint, to nearest */
	const double *oracle_rad;          /* half-width bound, rounded up */
	const double *ulp_error_oracle;    /* signed, NaN where undefined */
	const double *ulp_error_reference; /* signed, NaN where undefined */
	const uint8_t *undecided;          /* 1: the oracle could not decide */
	/*
	 * With a device profile (all four, or all NULL: the output was not
	 * classified): the legitimate envelope's bounds (NaN where it has no
	 * finite value), its flags (USC_ENV_* of classify.h), and the class
	 * of each element (usc_class values, stored as the HDF5 enum "class").
	 */
	const double *envelope_lo;
	const double *envelope_hi;
	const uint8_t *envelope_flags;
	const uint8_t *cls;
	/*
	 * With an attribution (docs/attribution.md; the kernel's
	 * attribution not NULL): per element its top_k contributing ops,
	 * count x top_k row-major (rows of the kernel's attribution table,
	 * USC_RESULTS_NO_OP in empty slots), their contributions in ULPs,
	 * and the element's total reference error and interaction residual
	 * (NaN where undefined).  top_k 0: not attributed.
	 */
	size_t top_k;
	const uint32_t *top_ops;
	const double *top_contrib;
	const double *attr_total;
	const double *attr_residual;
} usc_results_output;

/* An empty slot of top_ops. */
#define USC_RESULTS_NO_OP UINT32_MAX

/*
 * The per-output figures the writer stores as attributes: the statistics
 * of ulp_error_oracle and ulp_error_reference, the elements whose device
 * encoding equals the reference encoding bit for bit (so +0 and -0 differ,
 * and two NaNs match only with equal payloads), and the elements marked
 * undecided (any non-zero byte).
 */
typedef struct usc_results_summary {
	uint64_t count; /* elements of the output */
	usc_results_stats oracle;
	usc_results_stats reference;
	uint64_t bit_exact_count;
	uint64_t undecided_count;
} usc_results_summary;

/*
 * Computes the summary exactly as usc_results_add_kernel stores it, so a
 * caller printing it prints what the file holds.  USC_EINVAL when the
 * output is malformed (see usc_results_add_kernel).
 */
usc_status usc_results_summarize(const usc_results_output *o,
				 usc_results_summary *out, usc_error *err);

/* One row of the ops table. */
typedef struct usc_results_op {
	int64_t index; /* position in the computation */
	char *name;
	char *opcode;
	char *element_type; /* "f32"; "tuple" or "token" for those shapes */
	char *shape;        /* as HLO prints it: "f32[8]{0}" */
	char *op_name;      /* metadata; "" when absent */
	char *source_file;  /* metadata; "" when absent */
	int64_t source_line; /* metadata; -1 when absent */
} usc_results_op;

/*
 * One row of a kernel's attribution table (docs/attribution.md): the op
 * (index: its row number; name, opcode, element type, shape, op_name and
 * its source location, resolved through stack frames) and its error
 * budget over the attributed elements, in ULPs of the output.
 */
typedef struct usc_results_attr_op {
	usc_results_op op;
	double mean_abs;
	double max_abs;
	double sum_abs;
	double share;
} usc_results_attr_op;

/* A kernel's attribution: the table and the residual's budget. */
typedef struct usc_results_attribution {
	size_t op_count;
	usc_results_attr_op *ops;
	int64_t top_k;
	int64_t precision;   /* the oracle's working precision, bits */
	uint64_t attributed; /* elements with finite figures */
	double residual_mean_abs;
	double residual_max_abs;
	double residual_sum_abs;
	double residual_share;
} usc_results_attribution;

/* One kernel to add. */
typedef struct usc_results_kernel {
	/* The group name under /kernels: not empty, not ".", no '/'. */
	const char *name;
	const char *hlo_file; /* NULL: "" */
	const char *hlo_text; /* NULL: "" */
	const char *fusion;   /* NULL: "" */
	/* The evaluated computation; its instructions become the ops table
	 * (NULL: an empty table). */
	const usc_hlo_computation *computation;
	int64_t oracle_precision_max; /* the most bits the oracle used */
	const char *verdict;          /* NULL: "" (not classified) */
	const char *verdict_reason;   /* NULL: "" */
	const char *profile;          /* the profile's name; NULL: "" */
	size_t output_count;
	const usc_results_output *outputs;
	/* NULL: not attributed (the outputs' top_k are then 0). */
	const usc_results_attribution *attribution;
} usc_results_kernel;

/* A result file being written. */
typedef struct usc_results usc_results;

/*
 * Starts a new result file at path.  Everything goes to "PATH.tmp.PID"
 * until usc_results_close renames it over path; a file already at path
 * is untouched until then.  What is at path must be nothing, an empty
 * regular file or an ulpscope result file (usc_results_check_target);
 * USC_EINVAL otherwise.  Temporary files of writers to path that were
 * killed (their PID names no running process) are removed.
 */
usc_status usc_results_create(const char *path, usc_results **out,
			      usc_error *err);

/* usc_results_create_ex: replace any regular file, not only result files. */
#define USC_RESULTS_FORCE 1u

/* usc_results_create with flags (USC_RESULTS_FORCE). */
usc_status usc_results_create_ex(const char *path, unsigned flags,
				 usc_results **out, usc_error *err);

/*
 * Whether a writer may write path, without writing anything, so that a
 * long run can be refused before it starts: its directory exists, and
 * what is there is nothing, an empty regular file, an ulpscope result
 * file, or with USC_RESULTS_FORCE any regular file.  With append it must
 * be a regular file.  Never a directory, device, FIFO, socket or symbolic
 * link: the writer renames its file over the name, which would replace
 * the link and not the file it points to.  USC_EINVAL (USC_ENOTFOUND for
 * a missing directory or appended file) with a message naming path and
 * what is wrong.
 */
usc_status usc_results_check_target(const char *path, bool append,
				    unsigned flags, usc_error *err);

/*
 * Starts adding kernels to the complete result file at path: it is
 * checked as usc_results_open checks it, then copied to the temporary
 * name, and the copy is renamed over the original on close.  The root
 * gets a "modified" attribute; "created" is kept.  The writer holds an
 * exclusive lock on "PATH.lock" (created beside it, left there) from
 * before the check until close or abort: a second appender waits for the
 * first to finish, then adds its kernels to the file the first wrote.
 */
usc_status usc_results_open_append(const char *path, usc_results **out,
				   usc_error *err);

/*
 * Adds a kernel.  USC_EINVAL for a bad name, a name already in the file,
 * a missing tensor or array, or a reference whose type or shape differs
 * from the device tensor's; USC_EUNSUPPORTED for a complex, token or
 * opaque output.  On failure nothing of the kernel stays in the file and
 * the writer can go on.
 */
usc_status usc_results_add_kernel(usc_results *w, const usc_results_kernel *k,
				  usc_error *err);

/*
 * Writing a kernel a piece at a time, for results too large to hold
 * whole (ulpscope check streams them so): usc_results_begin_kernel
 * writes what is known before the figures (the kernel's group, HLO, ops
 * table, each output's device encodings) and creates the per-element
 * datasets empty; usc_results_write_rows then fills the next elements of
 * one output, in row-major order; usc_results_end_kernel adds the
 * figures.  The file is then exactly what usc_results_add_kernel writes
 * for the same values.  One kernel at a time; until it ends, no other
 * can be added and the file cannot be closed.  A failure of any of the
 * three removes the kernel from the file again.
 */

/*
 * The next count elements of an output: the reference's encodings (each
 * of the output type's container width, little-endian: a usc_tensor's
 * layout) and the figures as usc_results_output describes them.  The
 * envelope's four arrays are read only for a kernel begun classified.
 */
typedef struct usc_results_rows {
	const void *reference;
	const double *oracle_mid;
	const double *oracle_rad;
	const double *ulp_error_oracle;
	const double *ulp_error_reference;
	const uint8_t *undecided;
	const double *envelope_lo;
	const double *envelope_hi;
	const uint8_t *envelope_flags;
	const uint8_t *cls;
} usc_results_rows;

/* What a streamed kernel's figures are, once every element is written. */
typedef struct usc_results_kernel_end {
	int64_t oracle_precision_max;
	const char *verdict;        /* NULL: "" (not classified) */
	const char *verdict_reason; /* NULL: "" */
	const char *profile;        /* NULL: "" */
	const usc_results_summary *summaries;     /* one per output */
	const usc_classify_counts *class_counts;  /* one per output; NULL
						     when not classified */
} usc_results_kernel_end;

/*
 * Begins kernel k.  Of its outputs only device is read (whole: its type
 * and shape are the output's); verdict, reason, profile and the oracle's
 * precision come with usc_results_end_kernel; attribution must be NULL.
 * classified: the outputs get the envelope and class datasets.
 */
usc_status usc_results_begin_kernel(usc_results *w, const usc_results_kernel *k,
				    bool classified, usc_error *err);

/* Writes the next count elements of output `output` of the kernel begun. */
usc_status usc_results_write_rows(usc_results *w, size_t output,
				  uint64_t count, const usc_results_rows *rows,
				  usc_error *err);

/*
 * Ends the kernel begun.  USC_EINVAL when an output has elements not
 * written or a summary of another count.
 */
usc_status usc_results_end_kernel(usc_results *w,
				  const usc_results_kernel_end *e,
				  usc_error *err);

/* One ranked explanation of a defect signature search. */
typedef struct usc_results_signature_row {
	const char *op;        /* instruction; NULL: "" (a whole-output mutation) */
	const char *mutation;  /* the catalogue's kind name (docs/signatures.md) */
	const char *detail;    /* what exactly was changed */
	uint64_t reproduced;   /* device elements reproduced bit for bit */
	uint64_t differing_reproduced; /* of those differing from the reference */
	double median_ulps;    /* median ordinal distance of the rest; NaN: none */
	bool tied_best;
} usc_results_signature_row;

/* A signature search's outcome for one kernel already in the file. */
typedef struct usc_results_signatures {
	const char *verdict;    /* "explained", "unexplained", "no-difference" */
	const char *signature;  /* one line naming the best explanation, or "" */
	const char *culprit_op; /* the best explanation's op, or "" */
	uint64_t elements, differing;
	size_t row_count;       /* best first */
	const usc_results_signature_row *rows;
} usc_results_signatures;

/*
 * Adds a signature search's result to kernel (a group usc_results_add_kernel
 * wrote, in this file or, for a writer from usc_results_open_append, in the
 * file it extends): the table under /kernels/<kernel>/signatures and the
 * kernel's attributes "signature" and "culprit_op" (docs/results.md).
 * USC_ENOTFOUND when the kernel is not in the file, USC_EINVAL when it
 * already has signatures.
 */
usc_status usc_results_add_signatures(usc_results *w, const char *kernel,
				      const usc_results_signatures *s,
				      usc_error *err);

/*
 * Marks the file complete, closes it and renames it into place; the
 * writer is freed whatever happens.  On failure the temporary file is
 * removed and whatever was at path before stays there.  The rename
 * happens under the lock appenders take (so never in the middle of an
 * append), after what is at path has been checked again.  When HDF5
 * fails to write the file out (a full disk), the process later ends
 * without HDF5's exit handler, which would crash on the file.
 */
usc_status usc_results_close(usc_results *w, usc_error *err);

/*
 * Frees the writer and removes the temporary file; NULL is allowed.  A
 * signal that ends the process (SIGINT, SIGTERM, SIGHUP, where the
 * application left their default action) removes the temporary files of
 * the writers still open.
 */
void usc_results_abort(usc_results *w);

/* The temporary file's name ("PATH.tmp.PID"). */
const char *usc_results_temp_path(const usc_results *w);

/* ------------------------------------------------------------------ */
/* Reading                                                             */

typedef struct usc_results_reader usc_results_reader;

/* The root attributes. */
typedef struct usc_results_file_info {
	int64_t schema_version;
	const char *ulpscope_version;
	const char *created; /* ISO 8601, UTC: "2025-01-31T12:00:00Z" */
} usc_results_file_info;

/*
 * Opens a result file.  USC_EPARSE when it is not HDF5, not a ulpscope
 * result file, or not complete (its writer did not finish);
 * USC_EUNSUPPORTED for a schema version other than
 * USC_RESULTS_SCHEMA_VERSION; USC_EIO when HDF5 cannot read it (a
 * truncated file).  Every message starts with the file's path.
 */
usc_status usc_results_open(const char *path, usc_results_reader **out,
			    usc_error *err);

/* Closes a reader; NULL is allowed. */
void usc_results_reader_close(usc_results_reader *r);

const usc_results_file_info *
usc_results_reader_info(const usc_results_reader *r);

/* The kernels, in the order they were added. */
size_t usc_results_kernel_count(const usc_results_reader *r);
/* The name of kernel i, or NULL when i is out of range. */
const char *usc_results_kernel_name(const usc_results_reader *r, size_t i);

/* A kernel's attributes, HLO text and ops table, as read back. */
typedef struct usc_results_kernel_info {
	char *name;
	char *hlo_file;
	char *fusion;
	char *verdict;
	char *verdict_reason; /* "" in files written without it */
	char *profile;        /* the same */
	char *hlo_text;
	size_t hlo_text_len;
	int64_t oracle_precision_max;
	uint64_t element_count; /* of all outputs together */
	size_t output_count;
	size_t op_count;
	usc_results_op *ops;
	/* NULL when the kernel was not attributed. */
	usc_results_attribution *attribution;
} usc_results_kernel_info;

/* Reads a kernel by name; USC_ENOTFOUND when there is none. */
usc_status usc_results_read_kernel(usc_results_reader *r, const char *name,
				   usc_results_kernel_info **out,
				   usc_error *err);
void usc_results_kernel_info_free(usc_results_kernel_info *k);

/* An output as read back: the datasets and the stored summary. */
typedef struct usc_results_output_data {
	usc_dtype dtype;
	usc_tensor *device;    /* of dtype, in the output's shape */
	usc_tensor *reference; /* the same */
	uint64_t count;
	double *oracle_mid;
	double *oracle_rad;
	double *ulp_error_oracle;
	double *ulp_error_reference;
	uint8_t *undecided;
	/* NULL when the output was not classified. */
	double *envelope_lo;
	double *envelope_hi;
	uint8_t *envelope_flags;
	uint8_t *cls;
	/* top_k 0 and NULL when the output was not attributed. */
	size_t top_k;
	uint32_t *top_ops;     /* count x top_k */
	double *top_contrib;   /* count x top_k */
	double *attr_total;
	double *attr_residual;
	usc_results_summary summary; /* the attributes, as stored */
} usc_results_output_data;

/*
 * Reads output i of a kernel.  Every dataset must be there with the
 * element type and shape schema version 1 gives it; otherwise the error
 * names the file and the dataset.
 */
usc_status usc_results_read_output(usc_results_reader *r, const char *kernel,
				   size_t i, usc_results_output_data **out,
				   usc_error *err);
void usc_results_output_data_free(usc_results_output_data *o);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_RESULTS_H */
