/*
 * Walking the captured cases under data/examples/ (KERNEL/CASE/ folders),
 * for the tests that run every one of them.
 */
#ifndef USC_TESTS_EXAMPLES_WALK_H
#define USC_TESTS_EXAMPLES_WALK_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static bool is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * Calls fn on every case folder of $USC_SOURCE_DIR/data/examples (dir:
 * its path; kernel and name: the two folder names) and returns how many
 * there were.  Fails the test when the folders cannot be read.
 */
static size_t for_each_example(void (*fn)(const char *dir, const char *kernel,
					  const char *name, void *ctx),
			       void *ctx)
{
	const char *src = getenv("USC_SOURCE_DIR");
	char root[1024];
	size_t cases = 0;
	DIR *kd;
	struct dirent *ke;

	assert_non_null(src);
	snprintf(root, sizeof root, "%s/data/examples", src);
	kd = opendir(root);
	assert_non_null(kd);
	while ((ke = readdir(kd)) != NULL) {
		char kdir[1300];
		DIR *cd;
		struct dirent *ce;

		if (ke->d_name[0] == '.')
			continue;
		snprintf(kdir, sizeof kdir, "%s/%s", root, ke->d_name);
		if (!is_dir(kdir))
			continue;
		cd = opendir(kdir);
		assert_non_null(cd);
		while ((ce = readdir(cd)) != NULL) {
			char dir[1600];

			if (ce->d_name[0] == '.')
				continue;
			snprintf(dir, sizeof dir, "%s/%s", kdir, ce->d_name);
			if (!is_dir(dir))
				continue;
			fn(dir, ke->d_name, ce->d_name, ctx);
			cases++;
		}
		closedir(cd);
	}
	closedir(kd);
	return cases;
}

#endif /* USC_TESTS_EXAMPLES_WALK_H */
