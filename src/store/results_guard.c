/*
 * What guards a result file's path (see results_guard.h).
 *
 * The writer renames its temporary file over the target, and rename
 * replaces whatever the name held: a device, a FIFO, the link rather than
 * the file a symbolic link points to, a user's notes.  So the target is
 * checked first.  Appending is a read, a copy and a rename: two appenders
 * at once would each copy the file they found and the later rename would
 * drop the earlier one's kernel, so appenders hold an flock on "PATH.lock"
 * from before the read until after the rename.  flock, not fcntl: its
 * locks belong to the open file description, so two writers in one
 * process exclude each other too, and closing some other descriptor of
 * the file does not drop them.  The lock file is never removed: removing
 * it would let a waiter hold a lock on a name no one else sees.
 */
#define _DEFAULT_SOURCE /* flock */

#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/process.h"
#include "store/h5_door.h"
#include "store/results_guard.h"
#include "util/io_error.h"

/* What kind of file a mode is, for messages. */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISLNK(m)  ? "a symbolic link"
			     : "not a regular file";
}

/* The directory part of path ("." when it has none), into buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash) {
		snprintf(buf, size, ".");
		return;
	}
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		n = size - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/*
 * Whether the regular file at path is an ulpscope result file (an HDF5
 * file whose root has schema_version): *yes.  Fails only when memory
 * runs out, since then the answer is not known.
 */
static usc_status is_result_file(const char *path, bool *yes,
				 usc_error *err)
{
	usc__h5_file *f = NULL;
	int64_t version;
	usc_status st;

	*yes = false;
	st = usc__h5_file_open_read(path, &f, NULL);
	if (st == USC_OK) {
		st = usc__h5_attr_get_int(f, "/", "schema_version", &version,
					  NULL);
		*yes = st == USC_OK;
	}
	usc__h5_file_close(f, NULL);
	if (st == USC_ENOMEM)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	return USC_OK;
}

/*
 * Whether files can be made in dir (the writer's temporary file, and its
 * rename), so that the failure is told in these words and not HDF5's.
 */
static usc_status dir_writable(const char *path, const char *dir,
			       usc_error *err)
{
	if (access(dir, W_OK | X_OK) == 0)
		return USC_OK;
	return usc__fail(err, USC_EIO, "cannot write %s: directory %s: %s",
			 path, dir, usc__io_error_text(errno));
}

usc_status usc__results_target_check(const char *path, bool append,
				     bool force, usc_error *err)
{
	char dir[4096];
	struct stat s;
	usc_status st;
	bool yes;

	if (!path || !path[0])
		return usc__fail(err, USC_EINVAL, "no result file path given");
	if (lstat(path, &s) != 0) {
		if (errno != ENOENT)
			return usc__fail(err, USC_EIO, "%s: cannot look at it: %s",
					 path, strerror(errno));
		if (append)
			return usc__fail(err, USC_ENOTFOUND,
					 "%s: cannot append: the file does "
					 "not exist",
					 path);
		dir_of(path, dir, sizeof dir);
		if (stat(dir, &s) != 0)
			return usc__fail(err,
					 errno == ENOENT ? USC_ENOTFOUND : USC_EIO,
					 "cannot create %s: directory %s %s",
					 path, dir,
					 errno == ENOENT ? "does not exist"
							 : strerror(errno));
		if (!S_ISDIR(s.st_mode))
			return usc__fail(err, USC_EINVAL,
					 "cannot create %s: %s is not a "
					 "directory",
					 path, dir);
		return dir_writable(path, dir, err);
	}
	if (!S_ISREG(s.st_mode))
		return usc__fail(err, USC_EINVAL,
				 "%s: refusing to %s it: it is %s, not a "
				 "regular file",
				 path, append ? "append to" : "replace",
				 kind_of(s.st_mode));
	/* The temporary file is made in the directory and renamed there. */
	dir_of(path, dir, sizeof dir);
	st = dir_writable(path, dir, err);
	if (st != USC_OK || append || force || s.st_size == 0)
		return st;
	st = is_result_file(path, &yes, err);
	if (st != USC_OK || yes)
		return st;
	return usc__fail(err, USC_EINVAL,
			 "%s: refusing to replace it: it is not an ulpscope "
			 "result file (--force replaces it)",
			 path);
}

usc_status usc__results_lock(const char *path, int *fd, usc_error *err)
{
	size_t len = strlen(path) + sizeof ".lock";
	char *lock = usc__malloc(len);
	struct stat s;
	int d;

	*fd = -1;
	if (!lock)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
	snprintf(lock, len, "%s.lock", path);
	d = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (d < 0) {
		usc_status st = usc__fail(err, USC_EIO,
					  "%s: cannot create its lock file "
					  "%s: %s",
					  path, lock, strerror(errno));
		usc__free(lock);
		return st;
	}
	if (fstat(d, &s) != 0 || !S_ISREG(s.st_mode)) {
		close(d);
		usc__free(lock);
		return usc__fail(err, USC_EINVAL,
				 "%s: its lock file %s.lock is not a regular "
				 "file",
				 path, path);
	}
	while (flock(d, LOCK_EX) != 0) {
		if (errno != EINTR) {
			usc_status st = usc__fail(err, USC_EIO,
						  "%s: cannot lock %s: %s",
						  path, lock, strerror(errno));
			close(d);
			usc__free(lock);
			return st;
		}
	}
	usc__free(lock);
	*fd = d;
	return USC_OK;
}

void usc__results_unlock(int fd)
{
	/* Closing the only descriptor of the description drops the lock. */
	if (fd >= 0)
		close(fd);
}

/*
 * The PID of a name "BASE.tmp.PID" (decimal, no sign, no leading zero),
 * or 0 when name is not one of those.
 */
static long temp_pid(const char *name, const char *base, size_t blen)
{
	const char *p;
	long pid = 0;

	if (strncmp(name, base, blen) != 0 ||
	    strncmp(name + blen, ".tmp.", 5) != 0)
		return 0;
	p = name + blen + 5;
	if (*p < '1' || *p > '9')
		return 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || pid > 99999999)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	return pid;
}

void usc__results_sweep_temps(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t blen = strlen(base);
	char dir[4096];
	struct dirent *e;
	DIR *dp;
	int dfd;

	if (!blen)
		return;
	dir_of(path, dir, sizeof dir);
	dp = opendir(dir);
	if (!dp)
		return;
	dfd = dirfd(dp);
	while ((e = readdir(dp)) != NULL) {
		long pid = temp_pid(e->d_name, base, blen);
		struct stat s;

		if (pid <= 0 || pid == (long)getpid())
			continue;
		/* Only where no process runs under that PID. */
		if (!usc__process_gone((pid_t)pid))
			continue;
		if (fstatat(dfd, e->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(s.st_mode))
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(dp);
}

/* ------------------------------------------------------------------ */
/* Removing the temporary file when a signal ends the process          */

/*
 * A watched temporary file: the PID that made it (a child forked after
 * the watch must not remove its parent's file) and its name.  The
 * handler reads the slots and nothing else, each slot is one atomic
 * pointer, and a record is complete before it is published, so the
 * handler sees whole records only.
 */
typedef struct watched {
	pid_t pid;
	char path[];
} watched;

enum { WATCH_SLOTS = 64 };
static _Atomic(watched *) slots[WATCH_SLOTS];
static const int watched_signals[] = {SIGINT, SIGTERM, SIGHUP};

/*
 * Removes this process's watched files, then lets the signal do what it
 * would have done: SA_RESETHAND gave it back its default action, and the
 * signal raised here waits (blocked while the handler runs) until the
 * handler returns.  unlink, getpid and raise are async-signal-safe.
 */
static void on_signal(int sig)
{
	int saved = errno;
	pid_t self = getpid();

	for (size_t i = 0; i < WATCH_SLOTS; i++) {
		watched *w = atomic_load(&slots[i]);

		if (w && w->pid == self)
			unlink(w->path);
	}
	errno = saved;
	raise(sig);
}

/*
 * Installs on_signal for each watched signal whose action is the default
 * (termination): an application's own handler, or an ignored signal, is
 * left alone.  Asked at every watch, not once, since the application may
 * have put the default back (or a signal SA_RESETHAND reset) since.
 */
static void install_handlers(void)
{
	for (size_t i = 0; i < USC__ARRAY_LEN(watched_signals); i++) {
		struct sigaction old, sa;

		if (sigaction(watched_signals[i], NULL, &old) != 0 ||
		    old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(watched_signals[i], &sa, NULL);
	}
}

int usc__results_temp_watch(const char *temp)
{
	size_t len = strlen(temp) + 1;
	watched *w = usc__malloc(sizeof *w + len);

	if (!w)
		return -1;
	w->pid = getpid();
	memcpy(w->path, temp, len);
	install_handlers();
	for (int i = 0; i < WATCH_SLOTS; i++) {
		watched *expected = NULL;

		if (atomic_compare_exchange_strong(&slots[i], &expected, w))
			return i;
	}
	usc__free(w);
	return -1;
}

void usc__results_temp_forget(int slot)
{
	if (slot < 0 || slot >= WATCH_SLOTS)
		return;
	usc__free(atomic_exchange(&slots[slot], NULL));
}
