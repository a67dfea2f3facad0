/*
 * What guards a result file's path (src/store/results_guard.c): what the
 * writer refuses to replace, the lock that serializes appenders, the
 * temporary files of killed writers, and a full disk while writing.
 *
 * Every expectation comes from the file system itself (lstat, the bytes
 * of a file, a process's exit status) or from the kernels the fixture
 * writes; nothing here is timed: concurrent appenders are started at
 * once through a pipe and the test waits for every one of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "results/results_fixture.h"

static char scratch[512];
static fixture fx;

/* scratch/name, into buf. */
static const char *at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", scratch, name);
	return buf;
}

static bool exists(const char *p)
{
	struct stat s;

	return lstat(p, &s) == 0;
}

static void write_text(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The whole text of a small file. */
static void read_text(const char *p, char *buf, size_t size)
{
	FILE *f = fopen(p, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* The names of the kernels of the result file at p, joined with ' '. */
static void kernel_names(const char *p, char *buf, size_t size)
{
	usc_results_reader *r = NULL;
	usc_error err;

	buf[0] = '\0';
	if (usc_results_open(p, &r, &err) != USC_OK)
		fail_msg("%s", err.message);
	for (size_t i = 0; i < usc_results_kernel_count(r); i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, "%s%s", i ? " " : "",
			 usc_results_kernel_name(r, i));
	}
	usc_results_reader_close(r);
}

/* Writes one kernel, k2 of the fixture, to a new result file at p. */
static usc_status write_one(const char *p, unsigned flags, usc_error *err)
{
	usc_results *w = NULL;
	usc_status st = usc_results_create_ex(p, flags, &w, err);

	if (st == USC_OK)
		st = usc_results_add_kernel(w, &fx.k2, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}

/* Expects code and a message equal to want. */
static void expect_error(usc_status st, const usc_error *err,
			 usc_status code, const char *want)
{
	if (st != code || strcmp(err->message, want) != 0)
		fail_msg("got %s \"%s\"\nwant %s \"%s\"", usc_status_name(st),
			 err->message, usc_status_name(code), want);
}

/*
 * Expects every way of writing p to refuse it with the message want, and
 * no temporary file beside it afterwards.
 */
static void expect_refused(const char *p, const char *want)
{
	char tmp[800];
	usc_results *w = (usc_results *)1;
	usc_error err;

	expect_error(usc_results_check_target(p, false, 0, &err), &err,
		     USC_EINVAL, want);
	expect_error(usc_results_create(p, &w, &err), &err, USC_EINVAL, want);
	assert_null(w);
	/* Not even with force: force is for regular files only. */
	expect_error(write_one(p, USC_RESULTS_FORCE, &err), &err, USC_EINVAL,
		     want);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
	assert_false(exists(tmp));
}

/* A FIFO, a directory and a symbolic link are left as they are. */
static void test_refuses_non_regular(void **state)
{
	char fifo[700], dir[700], link_[700], file[700], want[1600];
	char text[64];
	struct stat s;

	(void)state;
	at(fifo, sizeof fifo, "fifo");
	at(dir, sizeof dir, "dir.h5");
	at(link_, sizeof link_, "link.h5");
	at(file, sizeof file, "linked.h5");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	/* A link to a result file: renaming over it would replace the link. */
	assert_int_equal(write_one(file, 0, NULL), USC_OK);
	assert_int_equal(symlink("linked.h5", link_), 0);

	snprintf(want, sizeof want,
		 "%s: refusing to replace it: it is a FIFO, not a regular file",
		 fifo);
	expect_refused(fifo, want);
	assert_int_equal(lstat(fifo, &s), 0);
	assert_true(S_ISFIFO(s.st_mode));

	snprintf(want, sizeof want,
		 "%s: refusing to replace it: it is a directory, not a "
		 "regular file",
		 dir);
	expect_refused(dir, want);
	assert_int_equal(lstat(dir, &s), 0);
	assert_true(S_ISDIR(s.st_mode));

	snprintf(want, sizeof want,
		 "%s: refusing to replace it: it is a symbolic link, not a "
		 "regular file",
		 link_);
	expect_refused(link_, want);
	assert_int_equal(lstat(link_, &s), 0);
	assert_true(S_ISLNK(s.st_mode));
	assert_int_equal(readlink(link_, text, sizeof text), 9);

	/* Appending refuses them too, before reading anything. */
	{
		usc_results *w = (usc_results *)1;
		usc_error err;

		snprintf(want, sizeof want,
			 "%s: refusing to append to it: it is a directory, "
			 "not a regular file",
			 dir);
		expect_error(usc_results_open_append(dir, &w, &err), &err,
			     USC_EINVAL, want);
		assert_null(w);
		snprintf(want, sizeof want,
			 "%s: refusing to append to it: it is a FIFO, not a "
			 "regular file",
			 fifo);
		expect_error(usc_results_check_target(fifo, true, 0, &err),
			     &err, USC_EINVAL, want);
	}
	unlink(fifo);
	rmdir(dir);
	unlink(link_);
	unlink(file);
	{
		char lock[800];

		snprintf(lock, sizeof lock, "%s.lock", file);
		unlink(lock);
	}
}

/* A text file is replaced only with force; result and empty files are. */
static void test_refuses_other_files(void **state)
{
	char notes[700], want[1600], text[64], names[256], lock[800];
	usc_error err;

	(void)state;
	at(notes, sizeof notes, "notes.txt");
	write_text(notes, "my notes\n");
	snprintf(want, sizeof want,
		 "%s: refusing to replace it: it is not an ulpscope result "
		 "file (--force replaces it)",
		 notes);
	expect_error(write_one(notes, 0, &err), &err, USC_EINVAL, want);
	read_text(notes, text, sizeof text);
	assert_string_equal(text, "my notes\n");

	/* With force it is replaced by a result file. */
	assert_int_equal(write_one(notes, USC_RESULTS_FORCE, &err), USC_OK);
	kernel_names(notes, names, sizeof names);
	assert_string_equal(names, "k2");
	/* A result file is replaced without force. */
	assert_int_equal(write_one(notes, 0, &err), USC_OK);
	unlink(notes);

	/* An empty file holds nothing to lose (mktemp makes them). */
	write_text(notes, "");
	assert_int_equal(write_one(notes, 0, &err), USC_OK);
	kernel_names(notes, names, sizeof names);
	assert_string_equal(names, "k2");
	unlink(notes);
	snprintf(lock, sizeof lock, "%s.lock", notes);
	unlink(lock);
}

/* A missing directory is named in words, not HDF5's. */
static void test_missing_directory(void **state)
{
	char p[700], dir[700], want[1600];
	usc_results *w = (usc_results *)1;
	usc_error err;

	(void)state;
	at(dir, sizeof dir, "no/such");
	at(p, sizeof p, "no/such/r.h5");
	snprintf(want, sizeof want,
		 "cannot create %s: directory %s does not exist", p, dir);
	expect_error(usc_results_create(p, &w, &err), &err, USC_ENOTFOUND,
		     want);
	assert_null(w);
	snprintf(want, sizeof want,
		 "%s: cannot append: the file does not exist", p);
	expect_error(usc_results_open_append(p, &w, &err), &err,
		     USC_ENOTFOUND, want);
	/*
	 * A directory the writer may not write to, in words too; root may
	 * write anywhere, so only another user sees this refusal.
	 */
	if (geteuid() != 0) {
		at(dir, sizeof dir, "locked");
		at(p, sizeof p, "locked/r.h5");
		assert_int_equal(mkdir(dir, 0500), 0);
		snprintf(want, sizeof want,
			 "cannot write %s: directory %s: permission denied", p,
			 dir);
		expect_error(usc_results_create(p, &w, &err), &err, USC_EIO,
			     want);
		rmdir(dir);
	}
}

enum { APPENDERS = 6 };

/*
 * Appender i adds the fixture's k2 under the name "a<i>" once the
 * parent closes the pipe; its exit status says whether it managed.
 */
static void appender(int i, int start, const char *p)
{
	usc_results_kernel k = fx.k2;
	usc_results *w = NULL;
	char name[16], byte;
	usc_error err;
	usc_status st;

	/* Every appender waits here until all are started. */
	while (read(start, &byte, 1) < 0 && errno == EINTR)
		;
	snprintf(name, sizeof name, "a%d", i);
	k.name = name;
	st = usc_results_open_append(p, &w, &err);
	if (st == USC_OK)
		st = usc_results_add_kernel(w, &k, &err);
	if (st == USC_OK) {
		st = usc_results_close(w, &err);
		w = NULL;
	}
	usc_results_abort(w);
	if (st != USC_OK)
		fprintf(stderr, "appender %d: %s\n", i, err.message);
	_exit(st == USC_OK ? 0 : 1);
}

/*
 * Appenders started at once all land: without the lock each copied the
 * file it found and the last rename dropped the others' kernels.
 */
static void test_concurrent_appenders(void **state)
{
	char p[700], names[512], want[512], lock[800];
	pid_t pids[APPENDERS];
	int pipefd[2];

	(void)state;
	at(p, sizeof p, "shared.h5");
	assert_int_equal(write_one(p, 0, NULL), USC_OK);
	assert_int_equal(pipe(pipefd), 0);
	for (int i = 0; i < APPENDERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(pipefd[1]);
			appender(i, pipefd[0], p);
		}
	}
	close(pipefd[0]);
	/* End of file on the pipe: every appender starts now. */
	close(pipefd[1]);
	for (int i = 0; i < APPENDERS; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	kernel_names(p, names, sizeof names);
	/* Every kernel once; their order is the order they got the lock. */
	assert_int_equal(strlen(names), strlen("k2") + APPENDERS * 3);
	assert_non_null(strstr(names, "k2"));
	for (int i = 0; i < APPENDERS; i++) {
		snprintf(want, sizeof want, "a%d", i);
		assert_non_null(strstr(names, want));
	}
	unlink(p);
	snprintf(lock, sizeof lock, "%s.lock", p);
	unlink(lock);
}

/*
 * A child that starts a writer for p, says so through the pipe and waits
 * to be killed; it restores the default actions first, as an interactive
 * shell gives them (a background job may start with SIGINT ignored).
 */
static pid_t start_writer(const char *p)
{
	int pipefd[2];
	char byte = 0;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usc_results *w = NULL;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(pipefd[0]);
		if (usc_results_create(p, &w, NULL) != USC_OK ||
		    usc_results_add_kernel(w, &fx.k2, NULL) != USC_OK)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &byte, 1), 1);
	close(pipefd[0]);
	return pid;
}

/* SIGINT and SIGTERM take the writer's temporary file with them. */
static void test_signal_removes_temp(void **state)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	char p[700], tmp[800];

	(void)state;
	at(p, sizeof p, "signalled.h5");
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		int status;
		pid_t pid = start_writer(p);

		snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
		assert_true(exists(tmp));
		assert_int_equal(kill(pid, sigs[i]), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		/* It still dies of the signal, as without the handler. */
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), sigs[i]);
		assert_false(exists(tmp));
		assert_false(exists(p));
	}
}

/*
 * SIGKILL cannot be caught: the next writer to the same path removes the
 * temporary files whose PID is dead, and no other file.
 */
static void test_sweeps_dead_temps(void **state)
{
	char p[700], killed[800], dead[800], alive[800], other[800];
	char zero[800], suffix[800], lock[800];
	pid_t pid, gone;
	int status;

	(void)state;
	at(p, sizeof p, "swept.h5");
	pid = start_writer(p);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(killed, sizeof killed, "%s.tmp.%ld", p, (long)pid);
	assert_true(exists(killed));

	/* A PID that is certainly dead: a child already waited for. */
	gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, &status, 0), gone);
	snprintf(dead, sizeof dead, "%s.tmp.%ld", p, (long)gone);
	/* PID 1 is always running. */
	snprintf(alive, sizeof alive, "%s.tmp.1", p);
	/* Not the pattern of this target: another file's, a leading zero,
	 * a suffix. */
	snprintf(other, sizeof other, "%s/other.h5.tmp.%ld", scratch,
		 (long)gone);
	snprintf(zero, sizeof zero, "%s.tmp.0%ld", p, (long)gone);
	snprintf(suffix, sizeof suffix, "%s.tmp.%ldx", p, (long)gone);
	write_text(dead, "");
	write_text(alive, "");
	write_text(other, "");
	write_text(zero, "");
	write_text(suffix, "");

	assert_int_equal(write_one(p, 0, NULL), USC_OK);
	assert_false(exists(killed));
	assert_false(exists(dead));
	assert_true(exists(alive));
	assert_true(exists(other));
	assert_true(exists(zero));
	assert_true(exists(suffix));
	unlink(alive);
	unlink(other);
	unlink(zero);
	unlink(suffix);
	unlink(p);
	snprintf(lock, sizeof lock, "%s.lock", p);
	unlink(lock);
}

/*
 * The child of test_file_size_limit: writes both kernels under a file
 * size limit of limit bytes, as ulpscope check would, and exits 1 when
 * the failure was reported in words naming the file (3: it was not
 * reported, 4: the message is wrong).  Before the fix the exit crashed
 * (SIGSEGV) in HDF5's exit handler on the file whose close had failed.
 */
static void limited_writer(const char *p, rlim_t limit)
{
	struct rlimit rl = {limit, limit};
	usc_results *w = NULL;
	usc_error err;
	usc_status st;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		_exit(5);
	st = usc_results_create(p, &w, &err);
	if (st == USC_OK)
		st = usc_results_add_kernel(w, &fx.k1, &err);
	if (st == USC_OK)
		st = usc_results_add_kernel(w, &fx.k2, &err);
	if (st == USC_OK) {
		st = usc_results_close(w, &err);
		w = NULL;
	}
	usc_results_abort(w);
	if (st == USC_OK)
		exit(3);
	fprintf(stderr, "limit %lu: %s\n", (unsigned long)limit, err.message);
	if (st != USC_EIO || strncmp(err.message, p, strlen(p)) != 0 ||
	    !strstr(err.message, "file size limit exceeded") ||
	    strstr(err.message, "errno") || strstr(err.message, "buf =") ||
	    strstr(err.message, ".tmp."))
		exit(4);
	exit(1);
}

/*
 * A file size limit (a full disk, for the writer) while the file is
 * written or closed: the error names the file in words, the process
 * exits with its status instead of crashing, and nothing is left.
 */
static void test_file_size_limit(void **state)
{
	/* Below the header, inside the kernels, and in the last flush. */
	static const rlim_t limits[] = {1024, 8192, 24576, 40960};
	char p[700], tmp[800];

	(void)state;
	at(p, sizeof p, "full.h5");
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			limited_writer(p, limits[i]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status))
			fail_msg("limit %lu: killed by signal %d",
				 (unsigned long)limits[i], WTERMSIG(status));
		assert_int_equal(WEXITSTATUS(status), 1);
		snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
		assert_false(exists(tmp));
		assert_false(exists(p));
	}
	{
		char lock[800];

		snprintf(lock, sizeof lock, "%s.lock", p);
		unlink(lock);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_non_regular),
		cmocka_unit_test(test_refuses_other_files),
		cmocka_unit_test(test_missing_directory),
		cmocka_unit_test(test_concurrent_appenders),
		cmocka_unit_test(test_signal_removes_temp),
		cmocka_unit_test(test_sweeps_dead_temps),
		cmocka_unit_test(test_file_size_limit),
	};
	int rc;

	fixture_scratch(scratch, sizeof scratch);
	if (!scratch[0] || fixture_build(&fx) != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	fixture_free(&fx);
	rmdir(scratch);
	return rc;
}
