/*
 * ulpscope: bisection with captured intermediates — which op inside a
 * fusion is the first to leave its legitimate envelope.
 *
 * Given a kernel, its true inputs, and the values some of its
 * instructions took on the device (captured intermediates: an unfused run
 * of the same computation, the outputs of a multi-output fusion, buffers
 * from a debugger), every captured instruction is compared with its own
 * envelope (every value a correct compiler for the profile may give it,
 * computed from the true inputs; docs/envelope.md), in the topological
 * order of the kernel, and the first instruction with an element outside
 * is named.  docs/bisect.md has the method, the command and an example.
 */
#ifndef ULPSCOPE_BISECT_H
#define ULPSCOPE_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/classify.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One captured intermediate: an instruction and where its values are. */
typedef struct usc_bisect_capture {
	/* The instruction's name as the HLO writes it, with or without %. */
	const char *name;
	/* A source as usc_tensor_read takes it (.npy, FILE.h5:/dataset). */
	const char *source;
} usc_bisect_capture;

typedef struct usc_bisect_request {
	const char *hlo_path;
	/* A fusion of the module to isolate (docs/kernels.md); NULL: entry. */
	const char *fusion;
	size_t input_count;
	const char *const *inputs;
	size_t capture_count;
	const usc_bisect_capture *captures;
	/*
	 * Optional: the device outputs, compared after every captured
	 * instruction (they are the values of the root).
	 */
	size_t device_count;
	const char *const *devices;
	bool raw;                      /* other sources are raw files */
	usc_eval_reduce_order reduce_order;
	/*
	 * The device profile (docs/profiles.md), borrowed for the run;
	 * NULL: strict (usc_bisect_case: the profile case.json implies, else
	 * strict).
	 */
	const usc_profile *profile;
} usc_bisect_request;

/* Sequential reductions, no profile (strict), nothing captured. */
usc_bisect_request usc_bisect_request_default(void);

/* One compared tensor: a captured instruction or a device output. */
typedef struct usc_bisect_step {
	/* The instruction (for a device output: the entry's root). */
	const usc_hlo_instr *instr;
	/* SIZE_MAX for a captured intermediate; else the output's number. */
	size_t output;
	char *source;                  /* the file its values came from */
	usc_tensor *values;            /* the captured values, owned */
	uint64_t count;                /* elements */
	uint64_t outside;              /* elements outside their envelope */
	uint64_t unknown;              /* elements whose envelope is unknown */
	/*
	 * The worst element outside (the most codes away from its envelope;
	 * NaN and infinity mismatches count as infinitely far), when
	 * outside > 0: its flat row-major index, encoding, envelope and
	 * distance (usc_classify_result.outside_ulps; +Inf for a NaN or
	 * infinity where none may be).
	 */
	uint64_t worst_index;
	uint64_t worst_bits;
	usc_envelope worst_envelope;
	double worst_outside_ulps;
	usc_class worst_class;
	/*
	 * Where the instruction comes from: metadata op_name (NULL when
	 * absent) and "file:line" from source_file/source_line or the
	 * module's stack-frame tables ("" when unknown).
	 */
	const char *op_name;
	char source_loc[256];
} usc_bisect_step;

typedef struct usc_bisect_report {
	char *hlo_path;
	char *kernel_name;
	usc_hlo_file *kernel;          /* the evaluated module, owned */
	usc_profile profile;
	/* Every compared tensor, in topological order of the kernel. */
	size_t step_count;
	usc_bisect_step *steps;
	/*
	 * Whether some step has elements outside its envelope, and the first
	 * such step (an index into steps).  Downstream of a bad op the
	 * others usually leave theirs too: the first is the one to blame.
	 */
	bool found;
	size_t first_bad;
	/* Elements whose envelope was unknown, over all steps. */
	uint64_t unknown;
	/* One line: the first bad op and its worst element, or all inside. */
	char reason[2048];
} usc_bisect_report;

/*
 * Runs the bisection.  Errors name what is wrong: an instruction that
 * does not exist (the message lists the instructions that can be
 * captured), one inside a computation evaluated several times per run (a
 * reduce's to_apply, a computation called from two places), one that is
 * not an array, a file whose type or shape differs from the
 * instruction's (naming the file), inputs that do not match the kernel.
 */
usc_status usc_bisect_run(const usc_bisect_request *req,
			  usc_bisect_report **out, usc_error *err);

/*
 * The same on a case directory (docs/cases.md): kernel.hlo,
 * input_<i>.npy, device_<i>.npy, and every intermediate_<NAME>.npy
 * (NAME an instruction name without %), besides base's captures.  The
 * profile is base's, else case.json's, else strict.
 */
usc_status usc_bisect_case(const char *dir, const usc_bisect_request *base,
			   usc_bisect_report **out, usc_error *err);

void usc_bisect_report_destroy(usc_bisect_report *r);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_BISECT_H */
