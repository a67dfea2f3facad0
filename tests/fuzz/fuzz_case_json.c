/*
 * libFuzzer harness for case.json (src/analyze/case_json.c and the
 * profile choice of src/analyze/case.c): any byte string, written as a
 * case directory's case.json, must give a profile, no profile, or an
 * error with a message, never crash or leak.  Seed it with the case.json
 * files of the bundled examples:
 *   fuzz_case_json -max_total_time=600 CORPUS_DIR SEED_DIR
 * (tools/fuzz.sh gathers the seeds from data/examples).
 */
#include "internal.h"

#include <stdlib.h>

#include "analyze/case_internal.h"
#include "fuzz_tmpfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_profile p;
	usc_error err;
	bool have = false;

	(void)fuzz_tmp_write("case.json", data, size);
	if (usc__case_profile(fuzz_tmp_dir(), &p, &have, &err) == USC_OK &&
	    have && !p.name[0])
		abort(); /* a profile always has a name */
	return 0;
}
