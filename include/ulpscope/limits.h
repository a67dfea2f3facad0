/*
 * ulpscope: limits on what is read and allocated (docs/limits.md).
 *
 * Inputs come from outside: an HLO file, a case.json or a profile may be
 * any size, and a 100-byte HLO module may declare a tensor of billions of
 * elements.  So every reader refuses, before it allocates, a text file
 * larger than max_file_bytes, and a tensor (one read from a .npy, raw or
 * HDF5 file, or one the evaluator would build for an instruction) of
 * more than max_elements elements; the message names the file, the
 * instruction or dataset, the limit and how to raise it.  Readers read
 * regular files only, never a directory, FIFO or device.
 *
 * The limits are process-wide: set them once, before work starts (the
 * command line's --max-file-size and --max-elements do), not while
 * another thread reads.
 */
#ifndef ULPSCOPE_LIMITS_H
#define ULPSCOPE_LIMITS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 256 MiB: ten times the largest optimized HLO dump we have seen. */
#define USC_LIMIT_FILE_BYTES_DEFAULT (UINT64_C(256) << 20)
/*
 * 2^28 elements (a [16384, 16384] matrix): the evaluator keeps a value of
 * 8 to 32 bytes per element and instruction, so one such tensor is 2 to
 * 8 GiB already.
 */
#define USC_LIMIT_ELEMENTS_DEFAULT (UINT64_C(1) << 28)
/*
 * 10^6 iterations: far more than the loops of the programs we have seen
 * (a scan over a sequence, an optimizer's steps), few enough that a
 * runaway loop of a small body ends in seconds.
 */
#define USC_LIMIT_ITERATIONS_DEFAULT UINT64_C(1000000)

typedef struct usc_limits {
	/* The largest text file (HLO, case.json, profile) read, in bytes. */
	uint64_t max_file_bytes;
	/* The most elements of any one tensor read or evaluated. */
	uint64_t max_elements;
	/*
	 * The most times the evaluator runs the body of one execution of a
	 * while loop (docs/limits.md): a loop whose condition still holds
	 * then is an error naming it, not a hang.
	 */
	uint64_t max_iterations;
} usc_limits;

/* The defaults above. */
usc_limits usc_limits_default(void);

/* The limits in force. */
usc_limits usc_limits_get(void);

/* Sets the limits in force; a zero field keeps its current value. */
void usc_limits_set(const usc_limits *limits);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_LIMITS_H */
