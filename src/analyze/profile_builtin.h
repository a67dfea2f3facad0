/*
 * The built-in profiles' text: the files under data/profiles/, embedded in
 * the library at build time (src/analyze/sources_profile.cmake writes the
 * table into the build tree), so the data files stay the single source of
 * truth and the library needs no file at run time.
 */
#ifndef USC_ANALYZE_PROFILE_BUILTIN_H
#define USC_ANALYZE_PROFILE_BUILTIN_H

#include <stddef.h>

typedef struct usc__profile_text {
	const char *name;          /* the file's stem: "xla-cpu" */
	const unsigned char *text; /* its bytes, NUL-terminated */
	size_t len;                /* without the NUL */
} usc__profile_text;

extern const usc__profile_text usc__profile_texts[];
extern const size_t usc__profile_text_count;
/* The same names, NULL-terminated: usc_profile_builtin_names(). */
extern const char *const usc__profile_names[];

#endif /* USC_ANALYZE_PROFILE_BUILTIN_H */
