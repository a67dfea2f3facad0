/*
 * Internal: reading case.json (src/analyze/case_json.c) and a case's
 * profile (src/analyze/case.c).
 */
#ifndef USC_ANALYZE_CASE_INTERNAL_H
#define USC_ANALYZE_CASE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ulpscope/profile.h"
#include "ulpscope/status.h"

/*
 * Validates text (len bytes of the JSON file path) and returns in
 * values[k] a malloc'd copy of the top-level member keys[k]: a string's
 * value, a literal's text ("true", "null", "1.5"), or NULL when it is
 * absent, an object or an array.  Malformed JSON fails with
 * USC_EPARSE and "PATH:LINE:COL: malformed JSON: what"; nothing is
 * returned then.
 */
usc_status usc__case_json_strings(const char *path, const char *text,
				  size_t len, const char *const *keys,
				  size_t nkeys, char **values, usc_error *err);

/*
 * The profile a case directory asks for (src/analyze/case.c): case.json's
 * "profile", else the built-in profile of its "platform".  *have is false
 * when it names neither (or there is no case.json).  Shared by check and
 * bisect, which read cases the same way.
 */
usc_status usc__case_profile(const char *dir, usc_profile *out, bool *have,
			     usc_error *err);

/*
 * The files of a case directory (docs/cases.md), shared by check,
 * bisect and signature: dir/name allocated (NULL when out of memory);
 * whether a regular file is there; dir/prefix_0.npy, dir/prefix_1.npy,
 * ... until the first missing one (at most 4096), and freeing that list.
 */
char *usc__case_join(const char *dir, const char *name);

/*
 * dir/kernel.hlo in *hlo (allocated), or an error: out of memory, or "not
 * a case directory" when the file is not there (*hlo then NULL).
 */
usc_status usc__case_kernel(const char *dir, char **hlo, usc_error *err);
bool usc__case_file_exists(const char *path);
usc_status usc__case_collect(const char *dir, const char *prefix, char ***out,
			    size_t *count, usc_error *err);
void usc__case_free_list(char **list, size_t n);

#endif /* USC_ANALYZE_CASE_INTERNAL_H */
