/*
 * ulpscope import, and check on a dump directory: XLA's --xla_dump_to
 * output taken as it is (docs/dumps.md).  Both are thin layers over
 * ulpscope/dump.h: import writes case directories; check imports the
 * chosen execution into a temporary case directory, judges it as any
 * case (so the verdict and figures are those of the case), and removes it.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ulpscope/dump.h"

/* --module and --execution, taken out of argv. */
typedef struct dump_args {
	const char *module;
	bool has_execution;
	int64_t execution;
} dump_args;

static int parse_execution(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || !*s || *end) {
		usc_cli_error("--execution: '%s' is not a whole number (the K "
			      "of module_NNNN.NAME.snapshot.K.pb)", s);
		return -1;
	}
	*out = v;
	return 0;
}

static bool is_dir_with_module_files(const char *path)
{
	struct stat sb;
	char kernel[4096];
	if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return false;
	snprintf(kernel, sizeof kernel, "%s/kernel.hlo", path);
	if (access(kernel, F_OK) == 0)
		return false;
	DIR *d = opendir(path);
	struct dirent *e;
	bool found = false;
	while (d && !found && (e = readdir(d)) != NULL)
		found = strncmp(e->d_name, "module_", 7) == 0;
	if (d)
		closedir(d);
	return found;
}

bool usc_cli_is_dump_dir(const char *path)
{
	return is_dir_with_module_files(path);
}

bool usc_cli_is_dump(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--module") == 0 ||
		    strcmp(argv[i], "--execution") == 0)
			return true;
	return argc > 1 && argv[1][0] != '-' &&
	       is_dir_with_module_files(argv[1]);
}

static void print_error(const usc_error *err)
{
	fprintf(stderr, "ulpscope: %s\n", err->message);
}

/* Removes the files import wrote into dir, then dir. */
static void remove_case(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/*
 * check or bisect (fn, named cmd) on one execution of a dump directory:
 * imported into a temporary case directory, which replaces DUMP_DIR in
 * the arguments, and removed afterwards.
 */
static int run_on_dump(int argc, char **argv, const char *cmd,
		       int (*fn)(int, char **))
{
	dump_args a = {NULL, false, 0};
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	int n = 0;
	const char *dir = NULL;
	usc_error err;
	usc_dump *d = NULL;
	int rc = USC_EXIT_FAIL;

	if (!rest)
		return USC_EXIT_FAIL;
	rest[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--module") == 0 && i + 1 < argc) {
			a.module = argv[++i];
		} else if (strcmp(argv[i], "--execution") == 0 && i + 1 < argc) {
			if (parse_execution(argv[++i], &a.execution) != 0) {
				free(rest);
				return USC_EXIT_USAGE;
			}
			a.has_execution = true;
		} else if (!dir && argv[i][0] != '-') {
			dir = argv[i];
			rest[n++] = NULL; /* the case directory, below */
		} else {
			rest[n++] = argv[i];
		}
	}
	usc_error_clear(&err);
	if (dir && !a.module && usc_dump_open(dir, &d, &err) == USC_OK) {
		/* Say which modules there are to choose from. */
		usc_cli_error("%s is an XLA dump directory: choose a module "
			      "with --module NAME_OR_ID; it holds:", dir);
		for (size_t i = 0; i < usc_dump_module_count(d); i++) {
			const usc_dump_module *m = usc_dump_module_at(d, i);
			fprintf(stderr, "  %" PRId64 " %s (%zu snapshot%s)\n",
				m->id, m->name, m->snapshot_count,
				m->snapshot_count == 1 ? "" : "s");
		}
		usc_dump_close(d);
		free(rest);
		return USC_EXIT_USAGE;
	}
	if (!dir || !a.module) {
		usc_cli_error("usage: ulpscope %s DUMP_DIR --module "
			      "NAME_OR_ID [--execution K] [%s options]",
			      cmd, cmd);
		free(rest);
		return USC_EXIT_USAGE;
	}
	const usc_dump_module *m = NULL;
	size_t index = 0;
	char tmpl[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/ulpscope-dump-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (usc_dump_open(dir, &d, &err) != USC_OK ||
	    usc_dump_find(d, a.module, &m, &err) != USC_OK ||
	    usc_dump_snapshot(m, a.has_execution, a.execution, &index,
			      &err) != USC_OK) {
		print_error(&err);
		goto done;
	}
	if (!mkdtemp(tmpl)) {
		usc_cli_error("cannot make a temporary directory %s: %s", tmpl,
			      strerror(errno));
		goto done;
	}
	if (usc_dump_import(d, m, index, tmpl, &err) != USC_OK) {
		print_error(&err);
		remove_case(tmpl);
		goto done;
	}
	fprintf(stderr, "ulpscope: %s: module %" PRId64 " %s, snapshot %s\n",
		dir, m->id, m->name, m->snapshots[index]);
	for (int i = 0; i < n; i++)
		if (!rest[i])
			rest[i] = tmpl;
	rc = fn(n, rest);
	remove_case(tmpl);
done:
	usc_dump_close(d);
	free(rest);
	return rc;
}

int usc_cli_check_dump(int argc, char **argv)
{
	return run_on_dump(argc, argv, "check", usc_cli_check);
}

int usc_cli_bisect_dump(int argc, char **argv)
{
	return run_on_dump(argc, argv, "bisect", usc_cli_bisect);
}

static int import_usage(void)
{
	usc_cli_error("usage: ulpscope import DUMP_DIR -o CASES_DIR "
		      "[--module NAME_OR_ID] [--execution K]");
	return USC_EXIT_USAGE;
}

/* CASES_DIR/NAME/execution_K for every chosen snapshot. */
static int import_module(const usc_dump *d, const usc_dump_module *m,
			 const dump_args *a, const char *out)
{
	char path[4096];
	usc_error err;
	int failed = 0;
	usc_error_clear(&err);
	snprintf(path, sizeof path, "%s/%s", out, m->name);
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		usc_cli_error("%s: cannot create: %s", path, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < m->snapshot_count; i++) {
		if (a->has_execution && m->executions[i] != a->execution)
			continue;
		snprintf(path, sizeof path, "%s/%s/execution_%" PRId64, out,
			 m->name, m->executions[i]);
		if (usc_dump_import(d, m, i, path, &err) != USC_OK) {
			print_error(&err);
			failed++;
			continue;
		}
		printf("%s: module %" PRId64 " %s, %s\n", path, m->id, m->name,
		       m->snapshots[i]);
	}
	return failed;
}

int usc_cli_import(int argc, char **argv)
{
	dump_args a = {NULL, false, 0};
	const char *dir = NULL, *out = NULL;
	usc_dump *d = NULL;
	usc_error err;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--module") == 0 && i + 1 < argc) {
			a.module = argv[++i];
		} else if (strcmp(argv[i], "--execution") == 0 && i + 1 < argc) {
			if (parse_execution(argv[++i], &a.execution) != 0)
				return USC_EXIT_USAGE;
			a.has_execution = true;
		} else if ((strcmp(argv[i], "-o") == 0 ||
			    strcmp(argv[i], "--out") == 0) && i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] == '-') {
			usc_cli_error("unknown option '%s'", argv[i]);
			return import_usage();
		} else if (dir) {
			usc_cli_error("more than one DUMP_DIR");
			return import_usage();
		} else {
			dir = argv[i];
		}
	}
	if (!dir || !out)
		return import_usage();
	usc_error_clear(&err);
	if (usc_dump_open(dir, &d, &err) != USC_OK) {
		print_error(&err);
		return USC_EXIT_FAIL;
	}
	if (mkdir(out, 0777) != 0 && errno != EEXIST) {
		usc_cli_error("%s: cannot create: %s", out, strerror(errno));
		usc_dump_close(d);
		return USC_EXIT_FAIL;
	}
	if (a.module) {
		const usc_dump_module *m = NULL;
		size_t index;
		if (usc_dump_find(d, a.module, &m, &err) != USC_OK ||
		    usc_dump_snapshot(m, a.has_execution, a.execution, &index,
				      &err) != USC_OK) {
			print_error(&err);
			usc_dump_close(d);
			return USC_EXIT_FAIL;
		}
		failed = import_module(d, m, &a, out);
	} else {
		size_t done = 0;
		for (size_t i = 0; i < usc_dump_module_count(d); i++) {
			const usc_dump_module *m = usc_dump_module_at(d, i);
			if (m->snapshot_count == 0)
				continue;
			failed += import_module(d, m, &a, out);
			done++;
		}
		if (done == 0) {
			usc_cli_error("%s: no module has a snapshot; run with "
				      "XLA_FLAGS=--xla_dump_hlo_snapshots "
				      "(docs/dumps.md)", dir);
			failed++;
		}
	}
	usc_dump_close(d);
	return failed ? USC_EXIT_FAIL : USC_EXIT_OK;
}
