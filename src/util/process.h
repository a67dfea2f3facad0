/*
 * Whether a process is gone (process.c): what removing a killed writer's
 * temporary file rests on.
 */
#ifndef USC_UTIL_PROCESS_H
#define USC_UTIL_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * True when no process runs under pid: none has it (ESRCH), or the one
 * that has it is a zombie, dead but not yet reaped (a killed batch's
 * children are reaped late, or never, where the machine's first process
 * does not reap orphans).  False for a live process, and when it cannot
 * be told (EPERM: it exists under another user).
 */
bool usc__process_gone(pid_t pid);

#endif /* USC_UTIL_PROCESS_H */
