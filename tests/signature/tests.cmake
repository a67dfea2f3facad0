# Defect signatures: the mutants' arithmetic against values computed
# without ulpscope (fractions, numpy), the C mutator against the Python
# harness of tests/classify, and the search on mutants of real captured
# cases (a Python driver of the CLI; numpy from Debian).
add_test(NAME test_signature
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/run_signature.py)
set_tests_properties(test_signature PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 900)

# Equivalent mutations folded into one candidate (a stale tile carried
# through a negate, a dot and a broadcast among them), observational ties kept
# apart, the constant mutations on splat arrays and in bf16/f16 ulps, and
# output-zero after a program mutation that scores as well: hand kernels,
# the device computed with numpy; and four cases of the injected-defect
# campaign (tests/signature/campaign: XLA:CPU's outputs of a mutant) whose
# injected mutation must come first (tests/signature/run_equiv.py).
add_test(NAME test_signature_equiv
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/run_equiv.py)
set_tests_properties(test_signature_equiv PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 300)

# The acceptance bar (tests/signature/acceptance.py): every mutation that
# applies, on every op of six captured kernels, injected and searched, and
# the mutations normal inputs cannot show (flushed denormals, saturating
# or NaN converts, NaN-dropping) on captures with subnormal, overflowing
# or NaN inputs.  By default a deterministic subset (3 effective mutants
# per case and mutation); USC_SIGNATURE_FULL=1 in the environment runs
# every mutant (16 cases, about 14 min in a Release build on a loaded
# machine: hence the long timeout).  Under the sanitizers: five cases
# (each of those mutations among them), 1 per mutation.
add_test(NAME test_signature_acceptance
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/acceptance.py)
set(usc_sigacc_env
  "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>")
if(USC_SANITIZE)
  string(JOIN "," usc_sigacc_cases
    layer_norm_bf16/normal_s0 fp8_quantize_f32/normal_s0
    fp8_quantize_f32/denormal_s0 fp8_quantize_e5m2_f32/large_s0
    fp8_quantize_f32/normal_s0+nan)
  list(APPEND usc_sigacc_env
    "USC_SIGNATURE_CASES=${usc_sigacc_cases}" "USC_SIGNATURE_PER_KIND=1")
endif()
set_tests_properties(test_signature_acceptance PROPERTIES
  ENVIRONMENT "${usc_sigacc_env}" SKIP_RETURN_CODE 77 TIMEOUT 3600)
# The defect corpus is measured by tests/defects (test_defects_xla_cpu).

# Observational ties broken by a second run: a select's branches swapped
# and its compare's operands swapped give the same bits where x != y;
# `--separate` must write inputs where they differ (checked with
# `ulpscope eval` of hand-written mutants and numpy), and `--also` with
# the true mutant's output there must rank it first, alone; bad --also
# and --separate arguments (tests/signature/run_separate.py).
add_test(NAME test_signature_separate
  COMMAND /usr/bin/python3 -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/signature/run_separate.py)
set_tests_properties(test_signature_separate PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 120)
