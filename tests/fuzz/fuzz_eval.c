/*
 * libFuzzer harness for the evaluator: whatever parses and verifies, with
 * every parameter of at most 4096 elements, is evaluated on zero inputs in
 * the reference, tier and oracle domains.  Any status is fine; a crash, a leak or
 * undefined behaviour is not.  tools/fuzz.sh seeds it with the project's
 * HLO files (docs/fuzzing.md):
 *   bash tools/fuzz.sh 600 fuzz_eval
 */
#include "internal.h"

#include <stdlib.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_domain(const usc_hlo_module *m, usc_eval_domain d)
{
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *inputs[16] = {0};
	usc_eval *ev = NULL;
	usc_error err;
	size_t np;

	o.domain = d;
	o.oracle_precision = 64; /* the cheapest the oracle allows */
	o.tile_elements = 64; /* exercise streaming on small kernels */
	if (usc_eval_create(m, &o, &ev, &err) != USC_OK)
		return;
	np = usc_eval_param_count(ev);
	if (np > 16)
		goto done;
	for (size_t i = 0; i < np; i++) {
		usc_tensor_spec s;

		if (usc_eval_param_spec(ev, i, &s, &err) != USC_OK)
			goto done;
		for (size_t k = 0, n = 1; k < s.rank; k++) {
			n *= (size_t)s.dims[k];
			if (s.dims[k] < 0 || n > 4096)
				goto done;
		}
		if (usc_tensor_create(s.dtype, s.rank, s.dims, &inputs[i],
				      &err) != USC_OK ||
		    usc_eval_bind(ev, i, inputs[i], &err) != USC_OK)
			goto done;
	}
	(void)usc_eval_run(ev, &err);
done:
	usc_eval_destroy(ev);
	for (size_t i = 0; i < 16; i++)
		usc_tensor_destroy(inputs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (size > 8192 ||
	    usc_hlo_parse((const char *)data, size, "fuzz", &f, &err) != USC_OK)
		return 0;
	for (size_t i = 0; i < usc_hlo_file_module_count(f); i++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, i);

		/* Every output must be small too: outputs are allocated. */
		if (!m->entry || !m->entry->root ||
		    usc_hlo_shape_elements(&m->entry->root->shape) > 65536 ||
		    usc_hlo_verify(m, &err) != USC_OK)
			continue;
		run_domain(m, USC_DOMAIN_REFERENCE);
		run_domain(m, USC_DOMAIN_TIER);
		run_domain(m, USC_DOMAIN_ORACLE);
	}
	usc_hlo_file_destroy(f);
	return 0;
}
