/*
 * ulpscope: XLA's own files, read as XLA writes them.
 *
 * XLA dumps a run with --xla_dump_to=DIR: the module as text
 * (--xla_dump_hlo_as_text), the module as a protocol buffer
 * (--xla_dump_hlo_as_proto: an HloProto) and, with
 * --xla_dump_hlo_snapshots, one HloSnapshot per execution: the module, the
 * argument literals and the result literal.  These functions read those
 * messages with protobuf-c (only src/proto/ and the files it names include
 * it).  A literal becomes tensors laid out as include/ulpscope/tensor.h
 * says, whatever layout (minor_to_major) its shape had; a module becomes
 * the same IR the text parser builds (include/ulpscope/hlo.h).
 *
 * Every error names the file and the field ("HloSnapshot.arguments[1]
 * .f32s") and what was expected.  docs/dumps.md lists what is read, the
 * file names of a dump directory and the errors.
 */
#ifndef ULPSCOPE_XLA_PROTO_H
#define ULPSCOPE_XLA_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/hlo.h"
#include "ulpscope/status.h"
#include "ulpscope/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ literals */

/* An array literal (one tensor) or a tuple of literals. */
typedef struct usc_literal usc_literal;

/*
 * Reads a file holding one serialized LiteralProto.  USC_EPARSE for bytes
 * that are not one, USC_EUNSUPPORTED for an element type or layout
 * ulpscope does not read (tiles, dynamic dimensions, token, opaque).
 */
usc_status usc_literal_read_pb(const char *path, usc_literal **out,
			       usc_error *err);
/* The same from memory; name stands for the file in messages. */
usc_status usc_literal_read_pb_mem(const void *data, size_t size,
				   const char *name, usc_literal **out,
				   usc_error *err);
void usc_literal_destroy(usc_literal *l);

bool usc_literal_is_tuple(const usc_literal *l);
/* An array literal's tensor; NULL for a tuple. */
const usc_tensor *usc_literal_tensor(const usc_literal *l);
/* A tuple's elements (0 for an array). */
size_t usc_literal_tuple_count(const usc_literal *l);
const usc_literal *usc_literal_tuple_element(const usc_literal *l, size_t i);
/*
 * The arrays of a literal flattened depth first, as a case directory
 * numbers outputs (device_0.npy, device_1.npy, ...): an array is its own
 * one leaf.
 */
size_t usc_literal_leaf_count(const usc_literal *l);
const usc_tensor *usc_literal_leaf(const usc_literal *l, size_t i);

/* ----------------------------------------------------------- snapshots */

/* One HloSnapshot: a module, its arguments, its result, its platform. */
typedef struct usc_snapshot usc_snapshot;

/* Reads a snapshot file (XLA's module_NNNN.NAME.snapshot.K.pb). */
usc_status usc_snapshot_read(const char *path, usc_snapshot **out,
			     usc_error *err);
usc_status usc_snapshot_read_mem(const void *data, size_t size,
				 const char *name, usc_snapshot **out,
				 usc_error *err);
void usc_snapshot_destroy(usc_snapshot *s);

size_t usc_snapshot_argument_count(const usc_snapshot *s);
const usc_literal *usc_snapshot_argument(const usc_snapshot *s, size_t i);
/* The result; NULL when the snapshot has none (a run that failed). */
const usc_literal *usc_snapshot_result(const usc_snapshot *s);
/* execution_platform as written; "" when absent (XLA:CPU leaves it out). */
const char *usc_snapshot_platform(const usc_snapshot *s);
/* True when the snapshot carries a module (hlo.hlo_module). */
bool usc_snapshot_has_module(const usc_snapshot *s);
/*
 * Converts the snapshot's module to the IR (as usc_hlo_parse_pb does);
 * the file is the caller's, to free with usc_hlo_file_destroy.
 */
usc_status usc_snapshot_module(const usc_snapshot *s, usc_hlo_file **out,
			       usc_error *err);

/* ------------------------------------------------------------- modules */

/*
 * Reads a module dumped as a protocol buffer (XLA's *.hlo.pb: an HloProto;
 * a bare HloModuleProto is accepted too) into the IR the text parser
 * builds.  An instruction, attribute or field that is not converted is an
 * error naming it (USC_EUNSUPPORTED), never dropped.
 */
usc_status usc_hlo_parse_pb(const void *data, size_t size, const char *name,
			    usc_hlo_file **out, usc_error *err);
usc_status usc_hlo_parse_pb_file(const char *path, usc_hlo_file **out,
				 usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_XLA_PROTO_H */
