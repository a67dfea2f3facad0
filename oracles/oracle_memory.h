/*
 * What GMP (and so MPFR and MPFI) does when memory runs out (internal).
 * GMP's own allocator aborts the process, which a batch would report as
 * a crash; a batch worker asks instead for a plain exit with a status it
 * recognizes as "out of memory" (docs/batch.md, "Isolation").
 */
#ifndef USC_ORACLES_ORACLE_MEMORY_H
#define USC_ORACLES_ORACLE_MEMORY_H

/*
 * From now on, an allocation that fails inside GMP writes one line to
 * stderr and ends the process with _exit(status).
 */
void usc__oracle_exit_on_oom(int status);

#endif /* USC_ORACLES_ORACLE_MEMORY_H */
