/*
 * libFuzzer harness for the result-file reader (src/store/results_read.c):
 * any byte string, written to a file, must open as a result file or fail
 * with a message, never crash or leak; whatever opens has each of its
 * kernels (at most 8) and their outputs (at most 8 each) read back, and
 * whatever reads must agree with itself.  Seed it with result files that
 * `ulpscope check --out` writes (tools/fuzz.sh makes them from
 * data/examples):
 *   fuzz_results -max_total_time=600 CORPUS_DIR SEED_DIR
 */
#include "internal.h"

#include <stdlib.h>

#include "fuzz_hdf5.h"
#include "fuzz_tmpfile.h"
#include "ulpscope/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_kernel(usc_results_reader *r, const char *name)
{
	usc_results_kernel_info *k = NULL;
	usc_error err;

	if (usc_results_read_kernel(r, name, &k, &err) != USC_OK)
		return;
	for (size_t i = 0; i < k->output_count && i < 8; i++) {
		usc_results_output_data *o = NULL;

		if (usc_results_read_output(r, name, i, &o, &err) != USC_OK)
			continue;
		/* The device and reference tensors hold count elements. */
		if ((o->device && usc_tensor_count(o->device) != o->count) ||
		    (o->reference &&
		     usc_tensor_count(o->reference) != o->count))
			abort();
		usc_results_output_data_free(o);
	}
	usc_results_kernel_info_free(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_write("fuzz_results.h5", data, size);
	usc_results_reader *r = NULL;
	usc_error err;

	if (usc_results_open(path, &r, &err) != USC_OK)
		return 0;
	(void)usc_results_reader_info(r);
	for (size_t i = 0; i < usc_results_kernel_count(r) && i < 8; i++) {
		const char *name = usc_results_kernel_name(r, i);

		if (!name)
			abort();
		read_kernel(r, name);
	}
	if (usc_results_kernel_name(r, usc_results_kernel_count(r)))
		abort();
	usc_results_reader_close(r);
	return 0;
}
