/*
 * Shared by the files of `ulpscope explain` (explain.c, explain_walk.c,
 * explain_values.c, explain_files.c, explain_print.c).
 */
#ifndef USC_ANALYZE_EXPLAIN_INTERNAL_H
#define USC_ANALYZE_EXPLAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/explain.h"

/*
 * What a result file gives back for a kernel, laid out as a case
 * directory in a fresh temporary directory (kernel.hlo, device_<i>.npy),
 * because the check reads its kernel and device outputs from files.
 */
typedef struct usc__explain_case {
	char dir[512];
	size_t nfiles;
	char files[1 + 64][560];
	const char *devices[64];
	size_t device_count;
	usc_profile profile;
	bool have_profile;
} usc__explain_case;

/*
 * Lays out kernel of the result file at path as a case directory in a
 * fresh temporary directory (explain_files.c); remove deletes it again.
 */
usc_status usc__explain_case_make(const char *path, const char *kernel,
				    usc__explain_case *rc, usc_error *err);
void usc__explain_case_remove(usc__explain_case *rc);

/* The value of bits of type t as a double (NaN when it has none). */
double usc__explain_decode(usc_dtype t, uint64_t bits);

#endif /* USC_ANALYZE_EXPLAIN_INTERNAL_H */
