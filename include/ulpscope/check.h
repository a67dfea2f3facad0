/*
 * ulpscope: checking one kernel's device output against the oracle and the
 * strict reference (what "ulpscope check" prints).
 *
 * For every output element: the device's encoding, the strict reference
 * (every op correctly rounded to its type), the certified oracle's
 * enclosure of the exact value, and the device's signed error in ULPs
 * against both.  A fast f64 tier with rigorous error radii decides what it
 * can; the MPFR oracle then runs at rising precision (Ziv) until each
 * remaining element's error is decided to 1/8 ulp, or up to a cap, after
 * which the element is reported undecided with its enclosure.  docs/check.md
 * describes the method, the figures and the exit codes of the command.
 */
#ifndef ULPSCOPE_CHECK_H
#define ULPSCOPE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/results.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct usc_check_request {
	const char *hlo_path;
	/* A fusion of the module to isolate (docs/kernels.md); NULL: entry. */
	const char *fusion;
	/* Sources as usc_tensor_read takes them (.npy, FILE.h5:/dataset). */
	size_t input_count;
	const char *const *inputs;
	size_t device_count;
	const char *const *devices;
	bool raw;                      /* other sources are raw files */
	/*
	 * In-memory sources instead of files (borrowed; NULL: read inputs
	 * and devices): input_count and device_count tensors, each of the
	 * type and shape the kernel's parameter or output has.  The report
	 * keeps copies.  usc_audit (include/ulpscope/audit.h) checks a
	 * module's reference as the device output this way.
	 */
	const usc_tensor *const *input_tensors;
	const usc_tensor *const *device_tensors;
	usc_eval_reduce_order reduce_order;
	unsigned long oracle_precision_max; /* bits; 0: 4096 */
	bool quantize;                 /* honour explicit quantization */
	/*
	 * Skip the fast f64 tier, whose radii assume the libm accuracy that
	 * docs/tier.md states; every element then goes to the MPFR oracle.
	 */
	bool strict_oracle;
	size_t worst;                  /* worst elements kept per output */
	/*
	 * The device profile to classify against (docs/profiles.md); NULL:
	 * no envelope, no classes, no verdict.  Borrowed for the run.
	 */
	const usc_profile *profile;
	/*
	 * usc_check_case only: do not take the profile that case.json names
	 * (its "profile", or its "platform": cpu -> xla-cpu, gpu -> xla-gpu,
	 * tpu -> xla-tpu) when profile is NULL.
	 */
	bool no_profile;
	/* The expected-error lambda (docs/method.md); <= 0: the default. */
	double lambda;
	/*
	 * Write the result file (docs/results.md) at this path as part of
	 * the run (NULL: none; usc_check_write can write it later unless the
	 * check streamed); with results_append, add the kernel to the
	 * complete result file there.
	 */
	const char *results_path;
	bool results_append;
	/*
	 * Replace results_path even when it is a regular file that is not
	 * a result file (USC_RESULTS_FORCE, ulpscope/results.h).
	 */
	bool results_force;
	/*
	 * Stream (docs/check.md, "Streaming"): when the kernel's one output
	 * is made tile by tile (docs/evaluator.md, "Tiles"), or the kernel
	 * splits into blocks of rows, check it a piece of about stream_piece
	 * elements at a time (0: 65536; a multiple of the tile, or whole
	 * rows), every domain evaluating only that piece, and keep no
	 * per-element figures: the report's reference and per-element arrays
	 * are NULL, its summaries, counts, worst lists and verdict the same
	 * as without streaming, and results_path gets each piece as it is
	 * made.  Memory then stays near the inputs and device outputs,
	 * whatever the element count.  Any other kernel is checked whole, as
	 * without.
	 */
	bool stream;
	size_t stream_piece;
	/* The evaluator's tile (usc_eval_options.tile_elements); 0: default. */
	size_t tile_elements;
	/*
	 * Threads for a streamed check's pieces, the calling thread among
	 * them (docs/check.md, "Threads"): each evaluates whole pieces in
	 * every domain, and the calling thread folds them in order, so the
	 * report and the result file are the same bit for bit as with one
	 * thread.  0 and 1: the calling thread alone.
	 */
	size_t threads;
} usc_check_request;

/*
 * The defaults: sequential reductions, a 4096-bit cap, 5 worst elements,
 * one thread.
 */
usc_check_request usc_check_request_default(void);

/* One element, as the report lists the worst ones. */
typedef struct usc_check_element {
	uint64_t index; /* flat, row-major */
	uint64_t device_bits;
	uint64_t reference_bits;
	double oracle_mid;  /* the enclosure's midpoint, to nearest */
	double oracle_rad;  /* a bound on its half-width */
	double ulp_oracle;  /* (device - exact) / ulp(exact) */
	double ulp_reference;
	bool undecided;
	/* With a profile: the envelope and the class. */
	usc_envelope envelope;
	usc_class cls;
	double outside_ulps; /* steps outside the envelope, 0 inside */
} usc_check_element;

typedef struct usc_check_output {
	usc_tensor *device;
	usc_tensor *reference;
	/*
	 * Per element, count of each (the output's element count); reference
	 * and these arrays are NULL when the check streamed.
	 */
	double *oracle_mid;
	double *oracle_rad;
	double *ulp_oracle;
	double *ulp_reference;
	uint8_t *undecided;
	usc_results_summary summary;
	/* Elements whose error the f64 tier decided (the rest: the oracle). */
	uint64_t tier_decided;
	/*
	 * Elements the MPFR oracle evaluated, summed over its runs (an
	 * element evaluated at 128 and again at 512 bits counts twice).  A
	 * loop kernel's oracle runs evaluate only the tiles (4096 elements)
	 * that hold an undecided element, a streamed kernel's only the
	 * pieces; any other kernel's, every element.
	 * 0 when the tier decided everything.
	 */
	uint64_t oracle_elements;
	/*
	 * The worst elements, at most worst: with a profile, by class
	 * (mismatches and defects first, by distance outside the envelope),
	 * then by |ulp_oracle|; without, by |ulp_oracle| (NaN first).
	 */
	size_t worst_count;
	usc_check_element *worst;
	/*
	 * With a profile (else NULL / zero): per element (NULL when the check
	 * streamed), and the counts.
	 */
	usc_envelope *envelope;
	uint8_t *cls;            /* usc_class values */
	double *expected_ulps;   /* the suspicious threshold, NaN if none */
	usc_classify_counts counts;
} usc_check_output;

typedef struct usc_check_report {
	char *hlo_path;
	char *fusion;                 /* NULL: the entry */
	char *kernel_name;            /* module name, or module_fusion */
	usc_hlo_file *kernel;         /* the evaluated module, owned */
	const usc_hlo_computation *computation;
	size_t input_count;
	usc_tensor **inputs;
	size_t output_count;
	usc_check_output *outputs;
	/* The highest precision the MPFR oracle used; 0 when the f64 tier
	 * decided every element and the oracle did not run. */
	unsigned long oracle_precision;
	/*
	 * The strict reference's functions (exp, tanh, pow, ...) over the
	 * whole kernel, in op-elements (one op on one element): every one,
	 * and those escalated to MPFR because double could not decide their
	 * correct rounding (docs/reference.md).  Both 0 when the reference
	 * ran its MPFR path (USC_REFERENCE_MPFR).
	 */
	uint64_t reference_functions;
	uint64_t reference_escalated;
	/*
	 * The check streamed (usc_check_request.stream): the outputs'
	 * reference and per-element arrays are NULL, and usc_check_write
	 * refuses the report.
	 */
	bool streamed;
	/*
	 * With a profile: its copy, the verdict over all outputs, and a
	 * one-line reason naming the worst element.
	 */
	bool classified;
	usc_profile profile;
	usc_verdict verdict;
	char reason[512];
	/*
	 * With a profile: the op elements (an elementwise float op on one
	 * element, or one reassociated sum) the envelope decided in double
	 * arithmetic, and those it escalated to MPFR (docs/envelope.md, "The
	 * fast path"), over every run of it.
	 */
	uint64_t envelope_fast, envelope_escalated;
	/*
	 * Borrowed, NULL by default: an attribution of this kernel
	 * (include/ulpscope/attribution.h, usc_attribute on computation and
	 * inputs) that usc_check_write stores with it.  The caller sets it
	 * and keeps it alive until the write.
	 */
	const struct usc_attribution *attribution;
} usc_check_report;

/*
 * Runs the check.  Every error names its file (parse errors, input files
 * of the wrong type or shape, a count of inputs or device outputs that
 * does not match the kernel) and no partial report is returned.
 */
usc_status usc_check_run(const usc_check_request *req,
			 usc_check_report **out, usc_error *err);

/*
 * Runs the check on a case directory (docs/cases.md): kernel.hlo,
 * input_0.npy ..., device_0.npy ..., and case.json's "fusion" when it
 * names one.  base supplies the other options (NULL: the defaults).
 */
usc_status usc_check_case(const char *dir, const usc_check_request *base,
			  usc_check_report **out, usc_error *err);

/*
 * Writes the report to an HDF5 result file (docs/results.md), creating it
 * or, with append, adding the kernel to an existing one.  USC_EINVAL for
 * a streamed report, which holds no per-element figures.
 */
usc_status usc_check_write(const usc_check_report *r, const char *path,
			   bool append, usc_error *err);

/* usc_check_write with usc_results_create_ex's flags (USC_RESULTS_FORCE). */
usc_status usc_check_write_ex(const usc_check_report *r, const char *path,
			      bool append, unsigned flags, usc_error *err);

void usc_check_report_destroy(usc_check_report *r);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_CHECK_H */
