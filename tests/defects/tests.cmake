# The defect corpus (data/defects/): device outputs of deliberately wrong
# JAX functions compiled by real XLA:CPU, each labelled with the op and
# mutation a perfect tool names (tools/capture/defects.py).  The test runs
# `ulpscope check` and `ulpscope signature` on every case and prints, per
# mutation kind, how many defects check catches and where signature ranks
# the labelled op + mutation (tests/defects/run_defects.py; Python's
# standard library only).
#
# USC_DEFECTS_ENFORCE lists the goals that fail the test when not met
# (check, legit, accepted, top3; "all").  Every goal is met and enforced
# (data/defects/README.md, "Measured").
set(usc_defects_enforce "all")
set(usc_defects_env
  "USC_DEFECTS_ENFORCE=${usc_defects_enforce}")
if(USC_SANITIZE)
  # Under the sanitizers: the check goals only (the signature searches
  # take minutes there); the Release and Debug builds run everything.
  list(APPEND usc_defects_env "USC_DEFECTS_SIGNATURE=0")
endif()
add_test(NAME test_defects_xla_cpu
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/defects/run_defects.py
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR}/data/defects)
set_tests_properties(test_defects_xla_cpu PROPERTIES
  ENVIRONMENT "${usc_defects_env}" TIMEOUT 900)

# The corpus against its own HLO (tools/capture/check_cases.py: inputs and
# device outputs of the entry's shapes and types, case.json's keys,
# kernel.hlo equal to the catalogue's kernels/<name>.hlo); numpy only.
add_test(NAME test_defects_cases
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/capture/check_cases.py -q
    ${PROJECT_SOURCE_DIR}/data/defects)
set_tests_properties(test_defects_cases PROPERTIES TIMEOUT 300)
