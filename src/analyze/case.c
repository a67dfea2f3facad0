/*
 * Case directories (docs/cases.md): kernel.hlo, input_<i>.npy and
 * device_<i>.npy, turned into a check request.  The files are the ENTRY's
 * parameters and results, so a case is checked as its whole module;
 * case.json's "fusion" names the kernel of interest for people and for
 * later analyses, and is not an instruction to isolate it (that would
 * need the fusion's operands, which a case does not hold).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/case_internal.h"
#include "ulpscope/check.h"

#define MAX_FILES 4096

bool usc__case_file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/*
 * Whether the case file at path is there (*present), refusing what is
 * there but is not a regular file: a directory or a FIFO named like a
 * case file is a mistake to report, not a file to skip (skipping it
 * would only surface later as "0 inputs were given").  what names the
 * expected kind of file in the message (".npy file").
 */
static usc_status case_file(const char *path, const char *what,
			    bool *present, usc_error *err)
{
	struct stat sb;
	const char *kind;

	*present = false;
	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return USC_OK;
		return usc__fail(err, USC_EIO, "%s: cannot read: %s", path,
				 strerror(errno));
	}
	if (stat(path, &sb) != 0)
		return usc__fail(err, USC_EIO,
				 "%s is a symbolic link to %s, expected a "
				 "regular %s",
				 path,
				 errno == ENOENT ? "nothing (it dangles)"
						 : "what cannot be read",
				 what);
	if (S_ISREG(sb.st_mode)) {
		*present = true;
		return USC_OK;
	}
	kind = S_ISDIR(sb.st_mode)    ? "a directory"
	       : S_ISFIFO(sb.st_mode) ? "a FIFO"
	       : S_ISSOCK(sb.st_mode) ? "a socket"
	       : S_ISCHR(sb.st_mode)  ? "a character device"
	       : S_ISBLK(sb.st_mode)  ? "a block device"
				      : "not a regular file";
	return usc__fail(err, USC_EIO, "%s is %s, expected a regular %s", path,
			 kind, what);
}

usc_status usc__case_kernel(const char *dir, char **hlo, usc_error *err)
{
	bool present = false;
	usc_status st;

	*hlo = usc__case_join(dir, "kernel.hlo");
	if (!*hlo)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	st = case_file(*hlo, "HLO text file", &present, err);
	if (st != USC_OK) {
		usc__free(*hlo);
		*hlo = NULL;
		return st;
	}
	if (!present) {
		usc__free(*hlo);
		*hlo = NULL;
		return usc__fail(err, USC_EIO,
				 "%s: not a case directory: no kernel.hlo "
				 "(see docs/cases.md)",
				 dir);
	}
	return USC_OK;
}

char *usc__case_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = usc__malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

usc_status usc__case_collect(const char *dir, const char *prefix, char ***out,
			    size_t *count, usc_error *err)
{
	char **list = NULL;
	size_t n = 0;
	usc_status st;

	for (;;) {
		char name[64], *path, **grown;
		bool present = false;

		snprintf(name, sizeof name, "%s_%zu.npy", prefix, n);
		path = usc__case_join(dir, name);
		if (!path)
			goto oom;
		st = case_file(path, ".npy file", &present, err);
		if (st != USC_OK) {
			usc__free(path);
			usc__case_free_list(list, n);
			return st;
		}
		if (!present) {
			usc__free(path);
			break;
		}
		if (n == MAX_FILES) {
			usc__free(path);
			break;
		}
		grown = usc__reallocarray(list, n + 1, sizeof *list);
		if (!grown) {
			usc__free(path);
			goto oom;
		}
		list = grown;
		list[n++] = path;
	}
	/*
	 * The list ends at the first missing number; a file after the gap
	 * would be silently left out, so it is an error to say so.
	 */
	if (n < MAX_FILES) {
		char name[64], *next;
		bool present = false;

		snprintf(name, sizeof name, "%s_%zu.npy", prefix, n + 1);
		next = usc__case_join(dir, name);
		if (!next)
			goto oom;
		st = case_file(next, ".npy file", &present, err);
		if (st == USC_OK && present)
			st = usc__fail(err, USC_EIO,
				       "%s: %s is there, but %s_%zu.npy is "
				       "missing (the files are numbered from "
				       "0 without gaps)",
				       dir, name, prefix, n);
		usc__free(next);
		if (st != USC_OK) {
			usc__case_free_list(list, n);
			return st;
		}
	}
	*out = list;
	*count = n;
	return USC_OK;
oom:
	for (size_t i = 0; i < n; i++)
		usc__free(list[i]);
	usc__free(list);
	return usc__fail(err, USC_ENOMEM, "out of memory");
}

void usc__case_free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usc__free(list[i]);
	usc__free(list);
}

/*
 * The profile a case asks for: case.json's "profile" (a built-in name, or
 * a profile file, relative to the case directory), else the built-in
 * profile of its "platform" (xla-cpu-fast-math for a CPU run whose
 * "xla_cpu_enable_fast_math" is true).  *have is false when case.json
 * is absent or names neither; a case.json whose members have the wrong
 * type or an unknown platform is an error (usc__case_meta_read).
 */
usc_status usc__case_profile(const char *dir, usc_profile *out, bool *have,
			     usc_error *err)
{
	char *path = usc__case_join(dir, "case.json");
	usc__case_meta meta = {NULL, NULL, false};
	char *text = NULL;
	size_t len = 0;
	usc_status st = USC_OK;

	*have = false;
	if (!path)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	{
		bool present = false;

		st = case_file(path, "JSON file", &present, err);
		if (st != USC_OK || !present)
			goto done;
	}
	st = usc__read_file(path, &text, &len, err);
	if (st == USC_OK)
		st = usc__case_meta_read(path, text, len, &meta, err);
	if (st != USC_OK)
		goto done;
	if (meta.profile) {
		const char *const *names = usc_profile_builtin_names();
		bool builtin = false;

		for (size_t i = 0; names[i]; i++)
			builtin = builtin || strcmp(names[i], meta.profile) == 0;
		if (builtin || meta.profile[0] == '/') {
			st = usc_profile_resolve(meta.profile, out, err);
		} else {
			char *file = usc__case_join(dir, meta.profile);

			st = file ? usc_profile_resolve(file, out, err)
				  : usc__fail(err, USC_ENOMEM, "out of memory");
			usc__free(file);
		}
		if (st != USC_OK) {
			char msg[USC_ERROR_MESSAGE_SIZE];

			snprintf(msg, sizeof msg, "%s", err ? err->message : "");
			st = usc__fail(err, st, "%s: \"profile\": %s", path,
				       msg);
		}
		*have = st == USC_OK;
	} else if (meta.platform_profile) {
		const char *name = meta.platform_profile;

		/* A CPU run with fast math has its own profile. */
		if (strcmp(name, "xla-cpu") == 0 && meta.fast_math)
			name = "xla-cpu-fast-math";
		st = usc_profile_builtin(name, out, err);
		*have = st == USC_OK;
	}
done:
	usc__case_meta_free(&meta);
	usc__free(text);
	usc__free(path);
	return st;
}

usc_status usc_check_case(const char *dir, const usc_check_request *base,
			  usc_check_report **out, usc_error *err)
{
	usc_check_request req = base ? *base : usc_check_request_default();
	char *hlo = NULL;
	char **inputs = NULL, **devices = NULL;
	size_t ni = 0, nd = 0;
	usc_profile prof;
	bool have_prof = false;
	usc_status st;

	st = usc__case_kernel(dir, &hlo, err);
	if (st != USC_OK)
		goto done;
	st = usc__case_collect(dir, "input", &inputs, &ni, err);
	if (st == USC_OK)
		st = usc__case_collect(dir, "device", &devices, &nd, err);
	if (st != USC_OK)
		goto done;
	if (nd == 0) {
		st = usc__fail(err, USC_EIO, "%s: no device_0.npy", dir);
		goto done;
	}
	if (!req.profile && !req.no_profile) {
		st = usc__case_profile(dir, &prof, &have_prof, err);
		if (st != USC_OK)
			goto done;
		if (have_prof)
			req.profile = &prof;
	}
	req.hlo_path = hlo;
	req.input_count = ni;
	req.inputs = (const char *const *)inputs;
	req.device_count = nd;
	req.devices = (const char *const *)devices;
	st = usc_check_run(&req, out, err);
done:
	usc__case_free_list(inputs, ni);
	usc__case_free_list(devices, nd);
	usc__free(hlo);
	return st;
}
