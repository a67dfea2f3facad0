/*
 * Finding the cases of a batch (docs/batch.md, "Discovery").  The order
 * is a function of the roots and the tree alone: roots in the order
 * given, each directory's entries in byte order of their names, so that
 * two runs, two shards and a resumed run all number the cases alike.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/batch_internal.h"

typedef struct found {
	usc__batch_case *c;
	size_t n, cap;
} found;

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p;

	while (a > 1 && dir[a - 1] == '/')
		a--;
	p = usc__malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

static bool is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_case(const char *dir)
{
	char *k = join(dir, "kernel.hlo");
	struct stat sb;
	bool yes = k && stat(k, &sb) == 0 && S_ISREG(sb.st_mode);

	usc__free(k);
	return yes;
}

/* The bytes of a case's regular files (its inputs and outputs). */
static uint64_t case_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t total = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *p = join(dir, e->d_name);
		struct stat sb;

		if (p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			total += (uint64_t)sb.st_size;
		usc__free(p);
	}
	closedir(d);
	return total;
}

/*
 * The name of a case under /kernels in the index: its path below the
 * root (the root's own name for a root that is a case), '/' written ':'.
 */
static char *link_name(const char *path, const char *root)
{
	size_t r = strlen(root);
	const char *rel = path;
	char *l;

	while (r > 1 && root[r - 1] == '/')
		r--;
	if (strncmp(path, root, r) == 0 && path[r] == '/')
		rel = path + r + 1;
	else if (strcmp(path, root) == 0) {
		const char *slash;

		while (r > 1 && path[r - 1] == '/')
			r--;
		slash = NULL;
		for (size_t i = 0; i + 1 < r; i++)
			if (path[i] == '/')
				slash = path + i;
		rel = slash ? slash + 1 : path;
	}
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	l = usc__strndup(rel, strlen(rel));
	for (char *p = l; p && *p; p++)
		if (*p == '/')
			*p = ':';
	return l;
}

static usc_status add_case(found *f, const char *path, const char *root,
			   usc_error *err)
{
	usc__batch_case *c;
	char real[PATH_MAX];

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		usc__batch_case *p =
			usc__reallocarray(f->c, cap, sizeof *p);

		if (!p)
			return usc__fail(err, USC_ENOMEM, "out of memory");
		f->c = p;
		f->cap = cap;
	}
	c = &f->c[f->n];
	memset(c, 0, sizeof *c);
	if (!realpath(path, real))
		return usc__fail(err, USC_EIO, "%s: %s", path,
				 strerror(errno));
	c->path = usc__strndup(path, strlen(path));
	c->link = link_name(path, root);
	if (!c->path || !c->link) {
		usc__free(c->path);
		usc__free(c->link);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	usc__batch_hex(usc__batch_fnv(real, strlen(real), USC__FNV_OFFSET),
		       c->id);
	c->bytes = case_bytes(path);
	c->index = f->n++;
	return USC_OK;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Searches dir for cases, depth first, entries in byte order.  The
 * depth bound keeps a directory loop (through symbolic links) finite.
 */
static usc_status search(found *f, const char *dir, const char *root,
			 int depth, usc_error *err)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	usc_status st = USC_OK;

	if (is_case(dir))
		return add_case(f, dir, root, err);
	if (depth > 64)
		return usc__fail(err, USC_EINVAL,
				 "%s: more than 64 directories deep (a loop "
				 "of symbolic links?)",
				 dir);
	d = opendir(dir);
	if (!d)
		return usc__fail(err, USC_EIO, "%s: cannot read the directory: "
				 "%s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue; /* ".", "..", and hidden work directories */
		if (n == cap) {
			char **p;

			cap = cap ? 2 * cap : 32;
			p = usc__reallocarray(names, cap, sizeof *p);
			if (!p) {
				st = usc__fail(err, USC_ENOMEM,
					       "out of memory");
				break;
			}
			names = p;
		}
		names[n] = join(dir, e->d_name);
		if (!names[n]) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	/* An empty directory leaves names NULL, which qsort may not take. */
	if (st == USC_OK && n > 1)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n && st == USC_OK; i++)
		if (is_dir(names[i]))
			st = search(f, names[i], root, depth + 1, err);
	for (size_t i = 0; i < n; i++)
		usc__free(names[i]);
	usc__free(names);
	return st;
}

/* A list file: one case directory a line; blank lines and '#' skipped. */
static usc_status read_list(found *f, const char *list, usc_error *err)
{
	char *text = NULL, *line, *next;
	size_t len;
	usc_status st = usc__read_file(list, &text, &len, err);
	int lineno = 0;

	if (st != USC_OK)
		return st;
	if (strlen(text) != len) {
		usc__free(text);
		return usc__fail(err, USC_EPARSE,
				 "%s: a list of case directories is text; "
				 "this file holds a NUL byte",
				 list);
	}
	for (line = text; line && *line && st == USC_OK; line = next) {
		char *end;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' ||
				      end[-1] == '\r'))
			*--end = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		if (!is_case(line))
			st = usc__fail(err, USC_ENOTFOUND,
				       "%s:%d: '%s' is not a case directory "
				       "(no kernel.hlo; docs/cases.md)",
				       list, lineno, line);
		else
			st = add_case(f, line, "", err);
	}
	usc__free(text);
	return st;
}

void usc__batch_cases_free(usc__batch_case *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		usc__free(c[i].path);
		usc__free(c[i].link);
	}
	usc__free(c);
}

static int by_link(const void *a, const void *b)
{
	const usc__batch_case *x = *(usc__batch_case *const *)a;
	const usc__batch_case *y = *(usc__batch_case *const *)b;
	int c = strcmp(x->link, y->link);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int by_id(const void *a, const void *b)
{
	const usc__batch_case *x = *(usc__batch_case *const *)a;
	const usc__batch_case *y = *(usc__batch_case *const *)b;
	int c = strcmp(x->id, y->id);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/*
 * Refuses a case reached twice (two roots, or a list and a root), and
 * makes link names unique: of cases with one name, all but the first in
 * discovery order get "#<index>".
 */
static usc_status dedupe(found *f, usc_error *err)
{
	usc__batch_case **p = usc__calloc(f->n ? f->n : 1, sizeof *p);
	usc_status st = USC_OK;

	if (!p)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (size_t i = 0; i < f->n; i++)
		p[i] = &f->c[i];
	qsort(p, f->n, sizeof *p, by_id);
	for (size_t i = 1; i < f->n && st == USC_OK; i++)
		if (strcmp(p[i]->id, p[i - 1]->id) == 0)
			st = usc__fail(err, USC_EINVAL,
				       "%s and %s are the same case; give "
				       "each case once",
				       p[i - 1]->path, p[i]->path);
	if (st == USC_OK)
		qsort(p, f->n, sizeof *p, by_link);
	for (size_t i = 1, head = 0; i < f->n && st == USC_OK; i++) {
		char buf[32];
		size_t a, b;
		char *l;

		if (strcmp(p[i]->link, p[head]->link) != 0) {
			head = i;
			continue;
		}
		snprintf(buf, sizeof buf, "#%zu", p[i]->index);
		a = strlen(p[i]->link);
		b = strlen(buf);
		l = usc__malloc(a + b + 1);
		if (!l) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			break;
		}
		memcpy(l, p[i]->link, a);
		memcpy(l + a, buf, b + 1);
		usc__free(p[i]->link);
		p[i]->link = l;
	}
	usc__free(p);
	return st;
}

usc_status usc__batch_discover(const char *const *roots, size_t count,
			       usc__batch_case **out, size_t *n,
			       usc_error *err)
{
	found f = {NULL, 0, 0};
	usc_status st = USC_OK;

	for (size_t r = 0; r < count && st == USC_OK; r++) {
		struct stat sb;

		if (stat(roots[r], &sb) != 0)
			st = usc__fail(err, USC_ENOTFOUND, "%s: %s", roots[r],
				       strerror(errno));
		else if (S_ISDIR(sb.st_mode))
			st = search(&f, roots[r], roots[r], 0, err);
		else if (S_ISREG(sb.st_mode))
			st = read_list(&f, roots[r], err);
		else
			st = usc__fail(err, USC_EINVAL,
				       "%s: neither a directory of cases nor "
				       "a list file",
				       roots[r]);
	}
	if (st == USC_OK)
		st = dedupe(&f, err);
	if (st != USC_OK) {
		usc__batch_cases_free(f.c, f.n);
		return st;
	}
	*out = f.c;
	*n = f.n;
	return USC_OK;
}
