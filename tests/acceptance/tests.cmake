# The acceptance corpus (data/acceptance/): `ulpscope check --json` on every
# real XLA:CPU capture of every catalogue kernel, fast math off and on (408
# cases); each must check without a defect under the profile its case.json
# implies (xla-cpu, or xla-cpu-fast-math), print JSON that parses, and
# leave no element undecided (tests/acceptance/run_acceptance.py; python3
# with its standard library only, which tools/setup.sh installs).
#
# The whole corpus takes under 30 s in a Debug build and about 60 s under
# ASan + UBSan (run alone, one core), so both builds run all of it.
# USC_ACCEPTANCE_SUBSET (normal, or a glob) in ctest's environment narrows it
# for a quick run.
add_test(NAME test_acceptance_xla_cpu
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/acceptance/run_acceptance.py
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR}/data/acceptance
    fastmath-off fastmath-on)
set_tests_properties(test_acceptance_xla_cpu PROPERTIES TIMEOUT 900)

# The same runner on the XLA:GPU captures (data/acceptance/xla-gpu/, made by
# tools/capture/gpu_run.sh on an NVIDIA GPU, judged under xla-gpu); skipped
# (exit 77) until such a tree is committed.
add_test(NAME test_acceptance_xla_gpu
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/acceptance/run_acceptance.py
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR}/data/acceptance xla-gpu)
set_tests_properties(test_acceptance_xla_gpu PROPERTIES
  TIMEOUT 900 SKIP_RETURN_CODE 77)

# The runner itself on trees made by the test (tests/acceptance/test_trees.py):
# a GPU tree passes under xla-gpu, a tree with a missing case or a case of
# the wrong platform fails, a missing tree skips.
add_test(NAME test_acceptance_trees
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/acceptance/test_trees.py
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_acceptance_trees PROPERTIES TIMEOUT 300)
