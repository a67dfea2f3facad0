# Defect signatures: the mutants' arithmetic against values computed
# without ulpscope (fractions, numpy), the C mutator against the Python
# harness of tests/classify, and the search on mutants of real captured
# cases (a Python driver of the CLI; numpy from Debian).
add_test(NAME test_signature
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/run_signature.py)
set_tests_properties(test_signature PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 900)
