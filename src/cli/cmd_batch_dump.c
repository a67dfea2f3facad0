/*
 * ulpscope batch on XLA dump directories (docs/dumps.md, docs/batch.md):
 * a root of a batch that is a dump directory is imported first, each
 * module's every snapshot a case directory, into RESULTS.dumps/<name>/
 * beside the index, laid out as `ulpscope import` lays it out
 * (<module name>/execution_K).  The batch then runs on that tree, so its
 * verdicts and figures are those of `import` and then `batch`.  The tree
 * stays where it is: a resumed batch finds its cases at the same paths
 * (case ids come from the paths), and a case already imported is kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ulpscope/dump.h"

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST)
		return 0;
	usc_cli_error("%s: cannot create: %s", path, strerror(errno));
	return -1;
}

/* The last component of a path, without trailing slashes. */
static void base_name(const char *path, char *out, size_t size)
{
	size_t n = strlen(path);
	const char *b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	b = path + n;
	while (b > path && b[-1] != '/')
		b--;
	snprintf(out, size, "%.*s", (int)(path + n - b), b);
	if (!out[0] || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		snprintf(out, size, "dump");
}

/* Imports every snapshot of dump directory dir into dest. */
static int import_all(const char *dir, const char *dest)
{
	usc_dump *d = NULL;
	usc_error err;
	size_t made = 0, kept = 0, failed = 0, modules = 0;
	char path[16384], probe[16400];
	struct stat sb;

	usc_error_clear(&err);
	if (usc_dump_open(dir, &d, &err) != USC_OK) {
		usc_cli_error("%s", err.message);
		return -1;
	}
	if (make_dir(dest) != 0) {
		usc_dump_close(d);
		return -1;
	}
	for (size_t i = 0; i < usc_dump_module_count(d); i++) {
		const usc_dump_module *m = usc_dump_module_at(d, i);

		if (m->snapshot_count == 0)
			continue;
		modules++;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dest,
				     m->name) >= sizeof path - 64 ||
		    make_dir(path) != 0) {
			failed++;
			continue;
		}
		for (size_t k = 0; k < m->snapshot_count; k++) {
			snprintf(path, sizeof path, "%s/%s/execution_%" PRId64,
				 dest, m->name, m->executions[k]);
			snprintf(probe, sizeof probe, "%s/kernel.hlo", path);
			if (stat(probe, &sb) == 0) {
				kept++;
				continue;
			}
			/* A module refused here is named; the rest go on. */
			if (usc_dump_import(d, m, k, path, &err) != USC_OK) {
				usc_cli_error("%s: not judged: %s", m->snapshots[k],
					      err.message);
				failed++;
				continue;
			}
			made++;
		}
	}
	usc_dump_close(d);
	if (modules == 0) {
		usc_cli_error("%s: no module has a snapshot; run with "
			      "XLA_FLAGS=--xla_dump_hlo_snapshots "
			      "(docs/dumps.md)",
			      dir);
		return -1;
	}
	fprintf(stderr,
		"ulpscope: %s: %zu executions of %zu modules as cases in %s "
		"(%zu imported now, %zu from before, %zu refused)\n",
		dir, made + kept, modules, dest, made, kept, failed);
	return 0;
}

int usc_cli_batch_dump_roots(const char **roots, size_t n, const char *out,
			     char **made)
{
	char top[4096], name[1024], dest[8192];

	for (size_t i = 0; i < n; i++) {
		made[i] = NULL;
		if (!usc_cli_is_dump_dir(roots[i]))
			continue;
		snprintf(top, sizeof top, "%s.dumps", out);
		if (make_dir(top) != 0)
			return -1;
		base_name(roots[i], name, sizeof name);
		/* Two dump directories of one name get apart. */
		snprintf(dest, sizeof dest, "%s/%s", top, name);
		for (size_t j = 0; j < i; j++)
			if (made[j] && strcmp(made[j], dest) == 0) {
				snprintf(dest, sizeof dest, "%s/%s.%zu", top,
					 name, i);
				break;
			}
		if (import_all(roots[i], dest) != 0)
			return -1;
		made[i] = malloc(strlen(dest) + 1);
		if (made[i])
			memcpy(made[i], dest, strlen(dest) + 1);
		if (!made[i]) {
			usc_cli_error("out of memory");
			return -1;
		}
		roots[i] = made[i];
	}
	return 0;
}
