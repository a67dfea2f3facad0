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
 * What ulpscope takes from a case.json, validated (docs/cases.md):
 * "profile" (a non-empty string or null), the built-in profile of
 * "platform" (cpu, host, gpu, cuda, rocm, tpu or null), and
 * "xla_cpu_enable_fast_math" (a boolean or null); "fusion" and
 * "main_fusion" must be strings or null, "fusions" an array of strings.
 * Any other member is accepted as long as the file is JSON.  A wrong
 * type or value fails with USC_EPARSE and "PATH:LINE:COL: \"key\": what
 * was expected, found what"; nothing is returned then.
 */
typedef struct usc__case_meta {
	char *profile;		      /* allocated; NULL when not given */
	const char *platform_profile; /* static; NULL when not given */
	bool fast_math;
} usc__case_meta;

usc_status usc__case_meta_read(const char *path, const char *text,
			       size_t len, usc__case_meta *meta,
			       usc_error *err);
void usc__case_meta_free(usc__case_meta *meta);

/* "PATH:LINE:COL: \"key\": what" for the value at `at` in text. */
usc_status usc__case_json_fail(const char *path, const char *text,
			       const char *at, usc_error *err,
			       const char *key, const char *what);

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
