# Kernels of an HLO module (include/ulpscope/hlo_kernel.h): verifier,
# kernel isolation, summary, and the `ulpscope hlo` / `extract` commands.
usc_add_test(test_hlo_kernel_verify hlo_kernel/test_hlo_verify.c)
usc_add_test(test_hlo_kernel_extract hlo_kernel/test_hlo_extract.c)
# Their walks of XLA's corpus in ../shared: skipped when it is absent.
usc_add_xla_corpus_test(test_hlo_kernel_verify_xla test_hlo_kernel_verify)
usc_add_xla_corpus_test(test_hlo_kernel_extract_xla test_hlo_kernel_extract)

# Command-line cases: tests/hlo_kernel/cases/NAME.txt, run by the runner of
# tests/cli with the cases directory as working directory.
set(USC_KERNEL_CLI_CASES
  hlo_softmax
  hlo_softmax_json
  hlo_parse_error
  hlo_verify_error
  hlo_dot_bf16
  extract_softmax
  extract_by_computation_short
  extract_unknown
  extract_not_fusion
  extract_usage)
foreach(case ${USC_KERNEL_CLI_CASES})
  add_test(NAME cli_kernel_${case}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_case.sh
      $<TARGET_FILE:ulpscope_cli>
      ${CMAKE_CURRENT_SOURCE_DIR}/hlo_kernel/cases/${case}.txt)
endforeach()

# A case on a file of XLA's corpus in ../shared: skipped (exit 77) with a
# line saying why when that folder is absent, as in a fresh clone.  The
# _absent variant points at a missing folder and expects that line.
foreach(variant "" _absent)
  if(variant STREQUAL "")
    set(corpus ${PROJECT_SOURCE_DIR}/../shared/corpus/hlo)
  else()
    set(corpus ${CMAKE_CURRENT_BINARY_DIR}/no-shared-folder/corpus/hlo)
  endif()
  add_test(NAME cli_kernel_hlo_corpus_dot_bf16${variant}
    COMMAND bash -c "if [ ! -d \"$2\" ]; then \
echo \"skipped: ../shared/corpus/hlo is absent ($2)\"; exit 77; fi; \
exec bash \"$0\" \"$1\" \"$3\""
      ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_case.sh
      $<TARGET_FILE:ulpscope_cli> ${corpus}
      ${CMAKE_CURRENT_SOURCE_DIR}/hlo_kernel/cases/hlo_corpus_dot_bf16.txt)
endforeach()
set_tests_properties(cli_kernel_hlo_corpus_dot_bf16 PROPERTIES
  SKIP_RETURN_CODE 77)
set_tests_properties(cli_kernel_hlo_corpus_dot_bf16_absent PROPERTIES
  PASS_REGULAR_EXPRESSION "skipped: \\.\\./shared/corpus/hlo is absent")

# What `extract` writes is a module that `hlo --verify` accepts.
add_test(NAME cli_kernel_extract_roundtrip
  COMMAND bash -c "set -e; out=$(mktemp); trap 'rm -f $out' EXIT; \
\"$0\" extract \"$1\" --fusion softmax.fusion -o \"$out\"; \
\"$0\" hlo \"$out\" --verify | grep -q '^  verified$'"
    $<TARGET_FILE:ulpscope_cli>
    ${CMAKE_CURRENT_SOURCE_DIR}/hlo_kernel/cases/softmax.hlo)
