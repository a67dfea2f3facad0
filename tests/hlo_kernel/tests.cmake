# Kernels of an HLO module (include/ulpscope/hlo_kernel.h): verifier,
# kernel isolation, summary, and the `ulpscope hlo` / `extract` commands.
usc_add_test(test_hlo_kernel_verify hlo_kernel/test_hlo_verify.c)
usc_add_test(test_hlo_kernel_extract hlo_kernel/test_hlo_extract.c)

# Command-line cases: tests/hlo_kernel/cases/NAME.txt, run by the runner of
# tests/cli with the cases directory as working directory.
set(USC_KERNEL_CLI_CASES
  hlo_softmax
  hlo_softmax_json
  hlo_parse_error
  hlo_verify_error
  hlo_corpus_dot_bf16
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

# What `extract` writes is a module that `hlo --verify` accepts.
add_test(NAME cli_kernel_extract_roundtrip
  COMMAND bash -c "set -e; out=$(mktemp); trap 'rm -f $out' EXIT; \
\"$0\" extract \"$1\" --fusion softmax.fusion -o \"$out\"; \
\"$0\" hlo \"$out\" --verify | grep -q '^  verified$'"
    $<TARGET_FILE:ulpscope_cli>
    ${CMAKE_CURRENT_SOURCE_DIR}/hlo_kernel/cases/softmax.hlo)
