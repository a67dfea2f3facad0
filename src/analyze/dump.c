/*
 * XLA dump directories (include/ulpscope/dump.h): the file names
 * --xla_dump_to writes, the pairing of a snapshot with its module, and the
 * import of one execution as a case directory (docs/cases.md).
 *
 * The names, as XLA:CPU (jax 0.10.2) writes them, are
 * module_NNNN.NAME.SUFFIX with NNNN the module's id in four or more
 * digits; the name may hold dots, and the backend prefix of the optimized
 * module (cpu_after_optimizations) may too on other backends, so files are
 * grouped by their id and a module's name is taken from the files whose
 * suffix leaves no doubt (before_optimizations, snapshot).
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/dump.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"
#include "ulpscope/xla_proto.h"

/* A module under construction; the public struct points into it. */
typedef struct dump_mod {
	usc_dump_module pub;
	char *name, *weak_name, *stem, *text_before, *proto_before, *text_after,
		*proto_after;
	char **snaps;
	int64_t *execs;
	size_t nsnap;
} dump_mod;

struct usc_dump {
	char *dir;
	size_t count;
	dump_mod *mods;
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static dump_mod *mod_of(usc_dump *d, int64_t id)
{
	for (size_t i = 0; i < d->count; i++)
		if (d->mods[i].pub.id == id)
			return &d->mods[i];
	dump_mod *m = usc__reallocarray(d->mods, d->count + 1, sizeof *m);
	if (!m)
		return NULL;
	d->mods = m;
	m = &d->mods[d->count++];
	memset(m, 0, sizeof *m);
	m->pub.id = id;
	return m;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = usc__malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Sets *slot to DIR/file (keeping the first one found). */
static bool set_path(usc_dump *d, char **slot, const char *file)
{
	if (*slot)
		return true;
	*slot = join(d->dir, file);
	return *slot != NULL;
}

static bool set_name(dump_mod *m, const char *s, size_t n)
{
	if (m->name)
		return true;
	m->name = usc__strndup(s, n);
	return m->name != NULL;
}

/* Files one module; false only when out of memory. */
static bool add_file(usc_dump *d, const char *file)
{
	const char *p = file + 7; /* after "module_" */
	char *end;
	if (strncmp(file, "module_", 7) != 0 || *p < '0' || *p > '9')
		return true;
	errno = 0;
	long long id = strtoll(p, &end, 10);
	if (errno || *end != '.')
		return true;
	const char *rest = end + 1;
	size_t n = strlen(rest);
	static const char *const before_txt = ".before_optimizations.txt";
	static const char *const before_pb = ".before_optimizations.hlo.pb";
	dump_mod *m = NULL;
#define MOD()                                                                \
	do {                                                                 \
		if (!(m = mod_of(d, (int64_t)id)))                           \
			return false;                                        \
	} while (0)
	if (ends_with(rest, n, before_txt)) {
		MOD();
		return set_name(m, rest, n - strlen(before_txt)) &&
		       set_path(d, &m->text_before, file);
	}
	if (ends_with(rest, n, before_pb)) {
		MOD();
		return set_name(m, rest, n - strlen(before_pb)) &&
		       set_path(d, &m->proto_before, file);
	}
	const char *snap = NULL;
	for (const char *q = strstr(rest, ".snapshot."); q;
	     q = strstr(q + 1, ".snapshot."))
		snap = q;
	if (snap && ends_with(rest, n, ".pb")) {
		const char *k = snap + 10;
		errno = 0;
		long long exec = strtoll(k, &end, 10);
		if (errno || end == k || strcmp(end, ".pb") != 0)
			return true;
		MOD();
		char **s = usc__reallocarray(m->snaps, m->nsnap + 1, sizeof *s);
		if (!s)
			return false;
		m->snaps = s;
		int64_t *e = usc__reallocarray(m->execs, m->nsnap + 1, sizeof *e);
		if (!e)
			return false;
		m->execs = e;
		if (!(s[m->nsnap] = join(d->dir, file)))
			return false;
		e[m->nsnap++] = (int64_t)exec;
		return set_name(m, rest, (size_t)(snap - rest));
	}
	bool txt = ends_with(rest, n, "after_optimizations.txt");
	bool pb = ends_with(rest, n, "after_optimizations.hlo.pb");
	if (!txt && !pb)
		return true;
	MOD();
	/* The backend prefix: the word before "after_optimizations". */
	size_t at = n - strlen(txt ? "after_optimizations.txt"
				   : "after_optimizations.hlo.pb");
	size_t dot = at;
	while (dot > 0 && rest[dot - 1] != '.')
		dot--;
	char prefix[64];
	snprintf(prefix, sizeof prefix, "%.*s", (int)(at - dot), rest + dot);
	if (!m->pub.platform) {
		if (strstr(prefix, "cpu"))
			m->pub.platform = "cpu";
		else if (strstr(prefix, "gpu"))
			m->pub.platform = "gpu";
		else if (strstr(prefix, "tpu"))
			m->pub.platform = "tpu";
	}
	/*
	 * A weak name, used only when no other file names the module: what
	 * precedes the first dot, since the prefix may hold dots of its own
	 * (XLA:GPU's sm_8.0_gpu_after_optimizations); jax's module names
	 * (jit_f) have none.
	 */
	const char *first = memchr(rest, '.', at);
	if (!m->weak_name && first &&
	    !(m->weak_name = usc__strndup(rest, (size_t)(first - rest))))
		return false;
	return set_path(d, txt ? &m->text_after : &m->proto_after, file);
#undef MOD
}

static int mod_cmp(const void *a, const void *b)
{
	int64_t x = ((const dump_mod *)a)->pub.id;
	int64_t y = ((const dump_mod *)b)->pub.id;
	return (x > y) - (x < y);
}

static void sort_snaps(dump_mod *m)
{
	for (size_t i = 1; i < m->nsnap; i++)
		for (size_t j = i; j > 0 && m->execs[j - 1] > m->execs[j]; j--) {
			int64_t e = m->execs[j];
			m->execs[j] = m->execs[j - 1];
			m->execs[j - 1] = e;
			char *s = m->snaps[j];
			m->snaps[j] = m->snaps[j - 1];
			m->snaps[j - 1] = s;
		}
}

void usc_dump_close(usc_dump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++) {
		dump_mod *m = &d->mods[i];
		usc__free(m->name);
		usc__free(m->weak_name);
		usc__free(m->stem);
		usc__free(m->text_before);
		usc__free(m->proto_before);
		usc__free(m->text_after);
		usc__free(m->proto_after);
		for (size_t k = 0; k < m->nsnap; k++)
			usc__free(m->snaps[k]);
		usc__free(m->snaps);
		usc__free(m->execs);
	}
	usc__free(d->mods);
	usc__free(d->dir);
	usc__free(d);
}

usc_status usc_dump_open(const char *dir, usc_dump **out, usc_error *err)
{
	*out = NULL;
	DIR *dp = opendir(dir);
	if (!dp)
		return usc__fail(err, errno == ENOENT ? USC_ENOTFOUND : USC_EIO,
				 "%s: cannot open the dump directory: %s", dir,
				 strerror(errno));
	usc_dump *d = usc__calloc(1, sizeof *d);
	bool ok = d && (d->dir = usc__strdup(dir)) != NULL;
	struct dirent *e;
	while (ok && (e = readdir(dp)) != NULL)
		ok = add_file(d, e->d_name);
	closedir(dp);
	for (size_t i = 0; ok && i < d->count; i++) {
		dump_mod *m = &d->mods[i];
		char stem[64];
		snprintf(stem, sizeof stem, "module_%04" PRId64 ".", m->pub.id);
		if (!m->name)
			ok = (m->name = usc__strdup(m->weak_name ? m->weak_name
								  : "?")) != NULL;
		size_t n = strlen(stem) + strlen(m->name) + 1;
		char *s = ok ? usc__malloc(n) : NULL;
		if (s)
			snprintf(s, n, "%s%s", stem, m->name);
		char *full = s ? join(dir, s) : NULL;
		usc__free(s);
		m->stem = full;
		ok = full != NULL;
		sort_snaps(m);
	}
	if (!ok) {
		usc_dump_close(d);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", dir);
	}
	if (d->count == 0) {
		usc_dump_close(d);
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no module_NNNN.* file: not an XLA dump "
				 "directory (XLA_FLAGS=--xla_dump_to=DIR; "
				 "docs/dumps.md)", dir);
	}
	qsort(d->mods, d->count, sizeof *d->mods, mod_cmp);
	for (size_t i = 0; i < d->count; i++) {
		dump_mod *m = &d->mods[i];
		m->pub.name = m->name;
		m->pub.stem = m->stem;
		m->pub.text_before = m->text_before;
		m->pub.proto_before = m->proto_before;
		m->pub.text_after = m->text_after;
		m->pub.proto_after = m->proto_after;
		m->pub.snapshot_count = m->nsnap;
		m->pub.snapshots = (const char **)m->snaps;
		m->pub.executions = m->execs;
	}
	*out = d;
	return USC_OK;
}

size_t usc_dump_module_count(const usc_dump *d)
{
	return d->count;
}

const usc_dump_module *usc_dump_module_at(const usc_dump *d, size_t i)
{
	return i < d->count ? &d->mods[i].pub : NULL;
}

usc_status usc_dump_find(const usc_dump *d, const char *which,
			 const usc_dump_module **out, usc_error *err)
{
	char *end;
	*out = NULL;
	errno = 0;
	long long id = strtoll(which, &end, 10);
	bool numeric = *which && !errno && *end == '\0';
	const usc_dump_module *hit = NULL;
	size_t hits = 0;
	for (size_t i = 0; i < d->count; i++) {
		const usc_dump_module *m = &d->mods[i].pub;
		const char *base = strrchr(m->stem, '/');
		base = base ? base + 1 : m->stem;
		if ((numeric && m->id == id) || strcmp(base, which) == 0) {
			*out = m;
			return USC_OK;
		}
		if (strcmp(m->name, which) == 0) {
			hit = m;
			hits++;
		}
	}
	if (hits == 1) {
		*out = hit;
		return USC_OK;
	}
	/* Name what there is, so that the user can pick. */
	char list[700];
	size_t len = 0;
	list[0] = '\0';
	for (size_t i = 0; i < d->count && len + 80 < sizeof list; i++) {
		const usc_dump_module *m = &d->mods[i].pub;
		if (hits > 1 && strcmp(m->name, which) != 0)
			continue;
		len += (size_t)snprintf(list + len, sizeof list - len,
					"%s%" PRId64 " %s (%zu snapshot%s)",
					len ? ", " : "", m->id, m->name,
					m->snapshot_count,
					m->snapshot_count == 1 ? "" : "s");
	}
	if (hits > 1)
		return usc__fail(err, USC_EINVAL,
				 "%s: %zu modules are named '%s': %s; give the "
				 "id", d->dir, hits, which, list);
	return usc__fail(err, USC_ENOTFOUND,
			 "%s: no module '%s'; the dump holds %s", d->dir,
			 which, list);
}

usc_status usc_dump_snapshot(const usc_dump_module *m, bool has_execution,
			     int64_t execution, size_t *index,
			     usc_error *err)
{
	char list[400];
	size_t len = 0;
	list[0] = '\0';
	for (size_t i = 0; i < m->snapshot_count; i++) {
		if (has_execution && m->executions[i] == execution) {
			*index = i;
			return USC_OK;
		}
		if (len + 24 < sizeof list)
			len += (size_t)snprintf(list + len, sizeof list - len,
						"%s%" PRId64, i ? ", " : "",
						m->executions[i]);
	}
	if (m->snapshot_count == 0)
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no snapshot (%s.snapshot.K.pb): run with "
				 "XLA_FLAGS=--xla_dump_hlo_snapshots",
				 m->stem, m->stem);
	if (!has_execution && m->snapshot_count == 1) {
		*index = 0;
		return USC_OK;
	}
	if (has_execution)
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: no snapshot of execution %" PRId64
				 "; its snapshots are executions %s",
				 m->stem, execution, list);
	return usc__fail(err, USC_EINVAL,
			 "%s: %zu snapshots (executions %s); choose one with "
			 "--execution K", m->stem, m->snapshot_count, list);
}
