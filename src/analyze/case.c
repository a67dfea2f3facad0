/*
 * Case directories (docs/cases.md): kernel.hlo, input_<i>.npy and
 * device_<i>.npy, turned into a check request.  The files are the ENTRY's
 * parameters and results, so a case is checked as its whole module;
 * case.json's "fusion" names the kernel of interest for people and for
 * later analyses, and is not an instruction to isolate it (that would
 * need the fusion's operands, which a case does not hold).
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/check.h"

#define MAX_FILES 4096

static bool file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* dir/name, allocated. */
static char *join(const char *dir, const char *name)
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

/* Collects prefix_0.npy, prefix_1.npy, ... until the first missing one. */
static usc_status collect(const char *dir, const char *prefix, char ***out,
			  size_t *count, usc_error *err)
{
	char **list = NULL;
	size_t n = 0;

	for (;;) {
		char name[64], *path, **grown;

		snprintf(name, sizeof name, "%s_%zu.npy", prefix, n);
		path = join(dir, name);
		if (!path)
			goto oom;
		if (!file_exists(path)) {
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
	*out = list;
	*count = n;
	return USC_OK;
oom:
	for (size_t i = 0; i < n; i++)
		usc__free(list[i]);
	usc__free(list);
	return usc__fail(err, USC_ENOMEM, "out of memory");
}

static void free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		usc__free(list[i]);
	usc__free(list);
}

usc_status usc_check_case(const char *dir, const usc_check_request *base,
			  usc_check_report **out, usc_error *err)
{
	usc_check_request req = base ? *base : usc_check_request_default();
	char *hlo = NULL;
	char **inputs = NULL, **devices = NULL;
	size_t ni = 0, nd = 0;
	usc_status st;

	hlo = join(dir, "kernel.hlo");
	if (!hlo) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	if (!file_exists(hlo)) {
		st = usc__fail(err, USC_EIO,
			       "%s: not a case directory: no kernel.hlo (see "
			       "docs/cases.md)",
			       dir);
		goto done;
	}
	st = collect(dir, "input", &inputs, &ni, err);
	if (st == USC_OK)
		st = collect(dir, "device", &devices, &nd, err);
	if (st != USC_OK)
		goto done;
	if (nd == 0) {
		st = usc__fail(err, USC_EIO, "%s: no device_0.npy", dir);
		goto done;
	}
	req.hlo_path = hlo;
	req.input_count = ni;
	req.inputs = (const char *const *)inputs;
	req.device_count = nd;
	req.devices = (const char *const *)devices;
	st = usc_check_run(&req, out, err);
done:
	free_list(inputs, ni);
	free_list(devices, nd);
	usc__free(hlo);
	return st;
}
