/* Whether a process is gone (process.h). */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "util/process.h"

bool usc__process_gone(pid_t pid)
{
	char path[64], buf[256];
	const char *close_paren;
	FILE *f;
	size_t n;

	if (kill(pid, 0) != 0)
		return errno == ESRCH;
	/* It exists: a zombie ("Z") or a dying process ("X") is gone.  The
	 * state follows the last ')' of /proc/PID/stat, after the name. */
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' &&
	       (close_paren[2] == 'Z' || close_paren[2] == 'X');
}
