/*
 * Writes the fixture of results_fixture.h to argv[1], for
 * read_with_h5py.py to read with h5py.
 */
#include <stdio.h>

#include "results/results_fixture.h"

int main(int argc, char **argv)
{
	fixture fx;
	usc_error err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.h5\n", argv[0]);
		return 2;
	}
	if (fixture_build(&fx) != 0) {
		fprintf(stderr, "cannot build the fixture\n");
		return 1;
	}
	if (fixture_write(&fx, argv[1], &err) != USC_OK) {
		fprintf(stderr, "%s\n", err.message);
		fixture_free(&fx);
		return 1;
	}
	fixture_free(&fx);
	return 0;
}
