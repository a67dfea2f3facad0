# The kernel generator: its PRNG, and many seeds through the parser,
# verifier and evaluator.
usc_add_test(test_gen gen/test_gen.c)
add_test(NAME cli_gen COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen/cli_gen.sh
  $<TARGET_FILE:ulpscope_cli>)
