/*
 * Sanitizer settings of the harnesses whose input goes through libhdf5
 * (fuzz_h5, fuzz_results), built into them so that they hold however the
 * harness is run.  Include it in one source file of the harness.
 *
 * - allocator_may_return_null=1: a damaged file can make HDF5 1.10 ask
 *   malloc for nearly 2^64 bytes (its metadata cache trusts a size read
 *   from the file).  Outside ASan, malloc returns NULL and HDF5 fails the
 *   read, which ulpscope reports; ASan's default aborts instead, which
 *   would make that HDF5 behaviour look like a crash of ulpscope's.
 * - leak:libhdf5: HDF5 1.10 never frees the metadata cache entries of a
 *   file whose metadata failed to load (tests/results/lsan.supp says the
 *   same for the tests).  Only allocations made inside libhdf5 are
 *   suppressed; a leak of ulpscope's own memory is still a finding.
 */
#ifndef USC_FUZZ_HDF5_H
#define USC_FUZZ_HDF5_H

const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);

const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

const char *__lsan_default_suppressions(void)
{
	return "leak:libhdf5\n";
}

#endif /* USC_FUZZ_HDF5_H */
