/*
 * libFuzzer harness for the protocol-buffer readers (docs/dumps.md): any
 * byte string must read or fail with a message, never crash or leak, as a
 * LiteralProto, an HloSnapshot (with its module) and an HloProto or
 * HloModuleProto.  What reads must hold together: a literal's leaves are
 * tensors of a consistent size, and a module that converts prints.
 * Seed it with the project's own protos:
 *   fuzz_pb -max_total_time=600 CORPUS_DIR tests/proto/fixtures kernels/pb
 *           data/control_flow/NAME (each control-flow case)
 */
#include "internal.h"

#include <stdlib.h>

#include "ulpscope/xla_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_literal(const usc_literal *l)
{
	for (size_t i = 0; i < usc_literal_leaf_count(l); i++) {
		const usc_tensor *t = usc_literal_leaf(l, i);
		if (!t)
			abort();
		size_t cb = (size_t)usc_format_of(usc_tensor_dtype(t))
				    ->container_bytes;
		if (usc_tensor_nbytes(t) != usc_tensor_count(t) * cb)
			abort();
	}
}

static void print_module(const usc_hlo_file *f)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	char *text = NULL;
	usc_error err;
	if (usc_hlo_file_print(f, &o, &text, NULL, &err) == USC_OK)
		usc_hlo_text_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	usc_error err;
	usc_literal *l = NULL;
	usc_snapshot *s = NULL;
	usc_hlo_file *f = NULL;

	if (usc_literal_read_pb_mem(data, size, "fuzz.pb", &l, &err) ==
	    USC_OK) {
		check_literal(l);
		usc_literal_destroy(l);
	}
	if (usc_snapshot_read_mem(data, size, "fuzz.pb", &s, &err) == USC_OK) {
		for (size_t i = 0; i < usc_snapshot_argument_count(s); i++)
			check_literal(usc_snapshot_argument(s, i));
		if (usc_snapshot_result(s))
			check_literal(usc_snapshot_result(s));
		if (usc_snapshot_module(s, &f, &err) == USC_OK) {
			print_module(f);
			usc_hlo_file_destroy(f);
			f = NULL;
		}
		usc_snapshot_destroy(s);
	}
	if (usc_hlo_parse_pb(data, size, "fuzz.pb", &f, &err) == USC_OK) {
		print_module(f);
		usc_hlo_file_destroy(f);
	}
	return 0;
}
