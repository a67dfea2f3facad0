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
