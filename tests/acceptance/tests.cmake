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
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR}/data/acceptance)
set_tests_properties(test_acceptance_xla_cpu PROPERTIES TIMEOUT 900)
