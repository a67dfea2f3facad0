# ulpscope batch and merge (docs/batch.md), end to end through the CLI
# (tests/batch/batch_test.py; Debian's python3 with numpy, h5py and pandas,
# which tools/setup.sh installs; exit 77 skips without them), and the row
# files and discovery in C (test_batch_rows).
usc_add_test(test_batch_rows batch/test_rows.c)
# The pool started again and again: no worker may inherit a lock held by
# the committer thread at fork (test_pool.c; docs/batch.md).
usc_add_test(test_batch_pool batch/test_pool.c)

set(USC_BATCH_ENV "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
if(USC_SANITIZE)
  list(APPEND USC_BATCH_ENV "USC_SANITIZED=1")
endif()
foreach(t same-as-check bad resume shards recycle commit journal)
  set(args ${t})
  if(t STREQUAL "same-as-check")
    set(args ${t} ${PROJECT_SOURCE_DIR}/data/examples)
  endif()
  add_test(NAME cli_batch_${t}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/batch/batch_test.py
      $<TARGET_FILE:ulpscope_cli> ${args})
  set_tests_properties(cli_batch_${t} PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 900 ENVIRONMENT "${USC_BATCH_ENV}")
endforeach()
# The acceptance corpus through batch: every one of its 408 cases, the
# same verdicts and figures as check case by case.  Not under the
# sanitizers, where test_acceptance_xla_cpu already runs the corpus.
if(NOT USC_SANITIZE)
  add_test(NAME cli_batch_acceptance
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/batch/batch_test.py
      $<TARGET_FILE:ulpscope_cli> same-as-check
      ${PROJECT_SOURCE_DIR}/data/acceptance)
  set_tests_properties(cli_batch_acceptance PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 1800 ENVIRONMENT "${USC_BATCH_ENV}")
endif()
# Two MPI ranks (when the build found an MPI; not under the sanitizers,
# where the MPI runtime's own allocations read as leaks).
if(USC_HAVE_MPI AND NOT USC_SANITIZE)
  add_test(NAME cli_batch_mpi
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/batch/batch_test.py
      $<TARGET_FILE:ulpscope_cli> mpi ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cli_batch_mpi PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 600 ENVIRONMENT "${USC_BATCH_ENV}")
endif()

# batch on an XLA dump directory: the same report as import, then batch.
add_test(NAME test_batch_dump COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/batch/test_batch_dump.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_batch_dump PROPERTIES ENVIRONMENT "${USC_TEST_ENV}")
