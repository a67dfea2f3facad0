/*
 * libFuzzer harness for the HDF5 tensor reader (src/tensor/h5.c): any
 * byte string, written to a file, must read as a tensor or fail with a
 * message, never crash or leak.  Each input is read by the names the
 * fixture file uses (a float, a big-endian integer, a chunked and
 * compressed dataset, a nested one, a group, a missing one), once with
 * the shape taken from the file and once against a fixed expectation.
 * Seed it with the fixtures:
 *   fuzz_h5 -max_total_time=600 CORPUS_DIR tests/tensor/fixtures
 */
#include "internal.h"

#include <stdlib.h>

#include "fuzz_hdf5.h"
#include "fuzz_tmpfile.h"
#include "ulpscope/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *dataset;
		usc_dtype dtype;
	} reads[] = {
		{"/f32", USC_F32},         {"/bf16", USC_BF16},
		{"/s32_be", USC_S32},      {"/chunked", USC_F32},
		{"/group/nested/f64", USC_F64}, {"/just_a_group", USC_F32},
		{"/text", USC_S8},         {"/c64", USC_C64},
		{"/missing", USC_F32},
	};
	static const int64_t dims[1] = {3};
	const char *path = fuzz_tmp_write("fuzz.h5", data, size);

	for (size_t k = 0; k < sizeof reads / sizeof reads[0]; k++) {
		usc_tensor_spec any = {reads[k].dtype, USC_TENSOR_ANY_SHAPE,
				       NULL, NULL};
		usc_tensor_spec fixed = {reads[k].dtype, 1, dims,
					 "the fuzz tensor"};
		usc_tensor *t = NULL;
		usc_error err;

		if (usc_tensor_read_h5_dataset(path, reads[k].dataset, &any,
					       &t, &err) == USC_OK) {
			/* Whatever reads must report a consistent size. */
			if (usc_tensor_nbytes(t) !=
			    usc_tensor_count(t) *
				    (size_t)usc_format_of(reads[k].dtype)
					    ->container_bytes)
				abort();
			usc_tensor_destroy(t);
			t = NULL;
		}
		if (usc_tensor_read_h5_dataset(path, reads[k].dataset, &fixed,
					       &t, &err) == USC_OK)
			usc_tensor_destroy(t);
	}
	return 0;
}
