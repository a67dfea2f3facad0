# Defect signatures: the mutants' arithmetic against values computed
# without ulpscope (fractions, numpy), the C mutator against the Python
# harness of tests/classify, and the search on mutants of real captured
# cases (a Python driver of the CLI; numpy from Debian).
add_test(NAME test_signature
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/run_signature.py)
set_tests_properties(test_signature PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 900)

# The acceptance bar (tests/signature/acceptance.py): every mutation that
# applies, on every op of six captured kernels, injected and searched.  By
# default a deterministic subset (3 effective mutants per case and
# mutation); USC_SIGNATURE_FULL=1 in the environment runs every mutant.
# Under the sanitizers: two cases, 1 per mutation.
add_test(NAME test_signature_acceptance
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/acceptance.py)
set(usc_sigacc_env
  "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>")
if(USC_SANITIZE)
  list(APPEND usc_sigacc_env
    "USC_SIGNATURE_CASES=layer_norm_bf16/normal_s0,fp8_quantize_f32/normal_s0"
    "USC_SIGNATURE_PER_KIND=1")
endif()
set_tests_properties(test_signature_acceptance PROPERTIES
  ENVIRONMENT "${usc_sigacc_env}" SKIP_RETURN_CODE 77 TIMEOUT 1800)
