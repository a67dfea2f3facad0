/*
 * ulpscope: XLA dump directories, as --xla_dump_to writes them.
 *
 * A dump directory holds, per compiled module (XLA numbers them), files
 * named module_NNNN.NAME.SUFFIX:
 *   before_optimizations.txt / .hlo.pb     the module as the framework gave it
 *   [P_]after_optimizations.txt / .hlo.pb  the module that ran (P: cpu, gpu, ...)
 *   snapshot.K.pb                          one HloSnapshot per execution
 * (and many files ulpscope ignores: LLVM IR, buffer assignments, ...).
 * usc_dump_open lists the modules; usc_dump_import turns one execution
 * into a case directory (docs/cases.md), which `ulpscope check` judges as
 * any other case.  docs/dumps.md gives the flags and a worked example.
 */
#ifndef ULPSCOPE_DUMP_H
#define ULPSCOPE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One module of a dump directory; paths are NULL when absent. */
typedef struct usc_dump_module {
	int64_t id;              /* NNNN */
	const char *name;        /* NAME, e.g. jit_softmax */
	const char *stem;        /* DIR/module_NNNN.NAME */
	const char *text_before; /* ...before_optimizations.txt */
	const char *proto_before;
	const char *text_after;  /* ...after_optimizations.txt */
	const char *proto_after;
	const char *platform;    /* from P_after_optimizations: "cpu", "gpu", "tpu" or NULL */
	size_t snapshot_count;   /* in file-name order of K */
	const char **snapshots;
	const int64_t *executions; /* the K of each */
} usc_dump_module;

typedef struct usc_dump usc_dump;

/* Lists a dump directory; USC_ENOTFOUND when it holds no module_* file. */
usc_status usc_dump_open(const char *dir, usc_dump **out, usc_error *err);
void usc_dump_close(usc_dump *d);

size_t usc_dump_module_count(const usc_dump *d);
const usc_dump_module *usc_dump_module_at(const usc_dump *d, size_t i);

/*
 * Finds a module by NAME (jit_softmax), by id (6 or 0006) or by stem
 * (module_0006.jit_softmax).  USC_ENOTFOUND names what the directory
 * holds; USC_EINVAL when a name matches several modules (give the id).
 */
usc_status usc_dump_find(const usc_dump *d, const char *which,
			 const usc_dump_module **out, usc_error *err);

/*
 * Picks a snapshot of m: the one whose K is execution, or with
 * has_execution false the only one (USC_EINVAL lists the K values when
 * there are several; USC_ENOTFOUND when there is none).
 */
usc_status usc_dump_snapshot(const usc_dump_module *m, bool has_execution,
			     int64_t execution, size_t *index,
			     usc_error *err);

/*
 * Writes snapshot `index` of m as a case directory case_dir (created; it
 * must not exist or be empty): kernel.hlo (the after_optimizations text
 * when the dump has it, else the snapshot's module printed), input_i.npy
 * from the arguments, device_i.npy from the result's leaves, case.json.
 * The snapshot's module must agree with the text and its arguments with
 * the entry parameters; errors name both files.
 */
usc_status usc_dump_import(const usc_dump *d, const usc_dump_module *m,
			   size_t index, const char *case_dir,
			   usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_DUMP_H */
