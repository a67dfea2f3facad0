/*
 * libFuzzer harness for the .npy reader: any byte string must read or fail
 * with a message, never crash or leak.  Each input is read twice: with the
 * shape taken from the file, and against a fixed expectation (bf16[4,4]),
 * which drives the type-compatibility and shape checks.  Seed it with the
 * fixtures:
 *   fuzz_npy -max_total_time=600 CORPUS_DIR tests/tensor/fixtures
 */
#include "internal.h"

#include <stdlib.h>

#include "ulpscope/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t dims[2] = {4, 4};
	static const usc_dtype types[] = {USC_F32, USC_BF16, USC_S4, USC_PRED};
	usc_tensor *t = NULL;
	usc_error err;

	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		usc_tensor_spec any = {types[k], USC_TENSOR_ANY_SHAPE, NULL, NULL};
		usc_tensor_spec fixed = {types[k], 2, dims, "the fuzz tensor"};

		if (usc_tensor_read_npy_mem(data, size, "fuzz.npy", &any, &t,
					    &err) == USC_OK) {
			/* Whatever reads must report a consistent size. */
			if (usc_tensor_nbytes(t) !=
			    usc_tensor_count(t) *
				    (size_t)usc_format_of(types[k])->container_bytes)
				abort();
			usc_tensor_destroy(t);
			t = NULL;
		}
		if (usc_tensor_read_npy_mem(data, size, "fuzz.npy", &fixed, &t,
					    &err) == USC_OK) {
			usc_tensor_destroy(t);
			t = NULL;
		}
	}
	return 0;
}
