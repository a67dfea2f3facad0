/*
 * Decoding an HDF5 file from outside in a child process first (see
 * usc__h5_vet in h5_door.h).
 *
 * The HDF5 library trusts much of what it reads from a file: a damaged
 * object header can make it divide by zero (a chunk dimension of 0 in a
 * dataset's layout message) or copy past a buffer while it decodes.  No
 * call of its API reports these; the process just dies.  ulpscope reads
 * files users give it (inputs, device outputs, result files of other
 * runs), and a damaged one must be an error naming the file, never a
 * crash that loses the rest of a batch.  So before the process itself
 * opens such a file, a forked child opens it and decodes what the
 * process will decode: every object's header, every attribute, and the
 * data of the datasets asked for.  A child that dies says the file is
 * damaged; a child that finishes, whatever HDF5 answered it, lets the
 * ordinary path run and word its own errors.
 */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "store/h5_door_internal.h"

/* Datasets whose data the child reads: at most this many bytes each. */
#define VET_DATA_MAX ((hsize_t)256 << 20)

/* Reads a whole dataset as stored (file type as memory type). */
static void vet_data(hid_t d)
{
	hid_t t = H5Dget_type(d), s = H5Dget_space(d);
	hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	size_t size = t >= 0 ? H5Tget_size(t) : 0;
	void *buf;

	if (n > 0 && size > 0 && (hsize_t)n <= VET_DATA_MAX / size) {
		buf = malloc((size_t)n * size);
		if (buf) {
			H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
			free(buf);
		}
	}
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
}

/* Decodes one attribute: its type, its space, and its value. */
static herr_t vet_attr(hid_t obj, const char *name, const H5A_info_t *info,
		       void *data)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = -1, s = -1;
	void *buf;

	(void)info;
	(void)data;
	if (a < 0)
		return 0;
	t = H5Aget_type(a);
	s = H5Aget_space(a);
	if (t >= 0 && s >= 0 && H5Tget_class(t) != H5T_VLEN &&
	    !H5Tis_variable_str(t)) {
		hssize_t n = H5Sget_simple_extent_npoints(s);
		size_t size = H5Tget_size(t);

		if (n > 0 && size > 0 && (hsize_t)n <= VET_DATA_MAX / size) {
			buf = malloc((size_t)n * size);
			if (buf) {
				H5Aread(a, t, buf);
				free(buf);
			}
		}
	}
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
	H5Aclose(a);
	return 0;
}

/* What the walk needs: which dataset's data to read ("" for all). */
typedef struct vet_walk {
	const char *data_of;
} vet_walk;

/* Decodes one object reached by a hard link from the root. */
static herr_t vet_object(hid_t root, const char *name, const H5O_info_t *info,
			 void *data)
{
	const vet_walk *w = data;
	hid_t o = H5Oopen(root, name, H5P_DEFAULT);

	if (o < 0)
		return 0;
	H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_attr, NULL);
	if (info->type == H5O_TYPE_DATASET) {
		hid_t t = H5Dget_type(o), s = H5Dget_space(o);
		hid_t p = H5Dget_create_plist(o);

		if (p >= 0)
			H5Pclose(p);
		if (s >= 0)
			H5Sclose(s);
		if (t >= 0)
			H5Tclose(t);
		/* name has no leading '/'; data_of has one. */
		if (w->data_of &&
		    (!w->data_of[0] || strcmp(w->data_of + 1, name) == 0))
			vet_data(o);
	}
	H5Oclose(o);
	return 0;
}

/* The child's part: decode, then say it lived. */
static void vet_child(const char *path, const char *data_of, int fd)
{
	static const int fatal[] = {SIGFPE, SIGSEGV, SIGBUS, SIGILL,
				    SIGABRT};
	vet_walk w = {data_of};
	hid_t f;
	char done = 'k';

	/*
	 * The application's handlers (a test framework's, a language
	 * runtime's) must not catch the child's fault and carry on as if it
	 * were the parent: the child dies of it, and the parent reads that.
	 */
	for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
		signal(fatal[i], SIG_DFL);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f >= 0) {
		H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, vet_object, &w,
			  H5O_INFO_BASIC);
		H5Fclose(f);
	}
	while (write(fd, &done, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

usc_status usc__h5_vet(const char *path, const char *data_of, usc_error *err)
{
	int fds[2], wstatus = 0;
	char got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds) != 0)
		return usc__fail(err, USC_EIO, "%s: cannot make a pipe: %s",
				 path, strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return usc__fail(err, USC_EIO,
				 "%s: cannot start a process to read it: %s",
				 path, strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		vet_child(path, data_of, fds[1]);
	}
	close(fds[1]);
	do
		n = read(fds[0], &got, 1);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (n == 1 && got == 'k')
		return USC_OK;
	if (WIFSIGNALED(wstatus))
		return usc__fail(err, USC_EPARSE,
				 "%s: damaged HDF5 file: the HDF5 library "
				 "crashed decoding it (%s)",
				 path, strsignal(WTERMSIG(wstatus)));
	return usc__fail(err, USC_EPARSE,
			 "%s: damaged HDF5 file: the HDF5 library stopped "
			 "decoding it (exit status %d)",
			 path, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}
