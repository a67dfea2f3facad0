# The kernel generator: its PRNG, and many seeds through the parser,
# verifier and evaluator.
usc_add_test(test_gen gen/test_gen.c)
add_test(NAME cli_gen COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/cli_gen.sh
  $<TARGET_FILE:ulpscope_cli>)
# The smoke campaign: 50 fixed seeds through XLA:CPU (jax), judged by
# batch; skipped without USC_PYTHON.
add_test(NAME fuzz_xla_smoke COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/fuzz_xla_smoke.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(fuzz_xla_smoke PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# tools/fuzz_xla's pieces that need no jax (numpy, ml_dtypes from Debian).
add_test(NAME test_fuzz_xla_tools
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/gen/test_fuzz_xla.py)
set_tests_properties(test_fuzz_xla_tools PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 120)
# The module reducer of the minimiser: candidates of hand-written modules
# and of generated ones (each verifies, each is smaller).
usc_add_test(test_reduce gen/test_reduce.c)
add_test(NAME cli_reduce COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/cli_reduce.sh
  $<TARGET_FILE:ulpscope_cli>)
# The minimiser on F4 of docs/findings.md, through XLA:CPU; skipped without
# USC_PYTHON.
add_test(NAME fuzz_xla_minimise COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/minimise_f4.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(fuzz_xla_minimise PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# The injected-defect campaign's smoke: ~20 mutants of fixed seeds through
# XLA:CPU; skipped without USC_PYTHON.
add_test(NAME fuzz_xla_inject_smoke COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/inject_smoke.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(fuzz_xla_inject_smoke PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
