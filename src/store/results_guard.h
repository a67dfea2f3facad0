/*
 * What guards a result file's path while a writer works on it
 * (results_guard.c): the checks of what is already there, the lock that
 * serializes appenders, the removal of temporary files that dead writers
 * left, and the removal of a writer's own temporary file when SIGINT,
 * SIGTERM or SIGHUP ends the process.
 */
#ifndef USC_STORE_RESULTS_GUARD_H
#define USC_STORE_RESULTS_GUARD_H

#include <stdbool.h>

#include "ulpscope/status.h"

/*
 * Whether path may be written: its directory must exist; what is at path
 * must be nothing, or a regular file (not a symbolic link) that is empty,
 * an ulpscope result file, or anything when force is set.  With append it
 * must be a regular file (usc_results_open then checks its content).
 * USC_EINVAL with a message naming path and what is wrong otherwise.
 */
usc_status usc__results_target_check(const char *path, bool append,
				     bool force, usc_error *err);

/*
 * Takes the exclusive lock of path's lock file "PATH.lock", creating it,
 * and waits for as long as another writer holds it.  *fd receives the
 * descriptor that holds it; usc__results_unlock(*fd) lets it go.
 */
usc_status usc__results_lock(const char *path, int *fd, usc_error *err);
void usc__results_unlock(int fd);

/*
 * Removes the temporary files "PATH.tmp.PID" beside path whose PID names
 * no running process (a writer that was killed); best effort, silent.
 */
void usc__results_sweep_temps(const char *path);

/*
 * Registers a temporary file to be removed if SIGINT, SIGTERM or SIGHUP
 * ends the process (the handlers are installed where those signals still
 * have their default action, which would end the process anyway).  Returns
 * a slot for usc__results_temp_forget, or -1 when none is free (then the
 * file is only swept by a later writer).
 */
int usc__results_temp_watch(const char *temp);
void usc__results_temp_forget(int slot);

#endif /* USC_STORE_RESULTS_GUARD_H */
