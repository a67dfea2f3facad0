# Bisection with captured intermediates: defects injected at every op of a
# small kernel (flat and fused) and of layer_norm_bf16 from data/examples,
# each named exactly; errors for bad names, files and shapes.
usc_add_test(test_bisect bisect/test_bisect.c)

# The command line on a real case: XLA:CPU's own output is inside.
add_test(NAME cli_bisect_case
  COMMAND ulpscope_cli bisect ${PROJECT_SOURCE_DIR}/data/examples/layer_norm_bf16/normal_s0)
set_tests_properties(cli_bisect_case PROPERTIES PASS_REGULAR_EXPRESSION
  "profile xla-cpu: 1 captured tensor in topological order\n.*output 0 \\(add_convert_fusion\\).*inside \\(1024 elements\\).*every captured tensor \\(1\\) inside its xla-cpu envelope")
add_test(NAME cli_bisect_unknown_name
  COMMAND ulpscope_cli bisect ${PROJECT_SOURCE_DIR}/data/examples/layer_norm_bf16/normal_s0 --intermediate nosuch=x.npy)
set_tests_properties(cli_bisect_unknown_name PROPERTIES
  PASS_REGULAR_EXPRESSION "no instruction 'nosuch' in module 'jit_layer_norm_bf16'; the instructions that can be captured are: .* add_rsqrt_fusion add_convert_fusion")

# Intermediates captured from XLA:CPU (data/examples/layer_norm_bf16/uniform_s0,
# tools/capture/capture.py --intermediates all-fused): all 29 inside their
# envelopes; each damaged in turn (one element, 2^10 codes) is named first;
# of two damaged along the data flow the upstream one; check_cases.py
# accepts the case and names broken files (numpy from Debian).
add_test(NAME test_bisect_captured
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bisect/bisect_captured.py)
set_tests_properties(test_bisect_captured PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77 TIMEOUT 600)
add_test(NAME cli_bisect_intermediates
  COMMAND ulpscope_cli bisect ${PROJECT_SOURCE_DIR}/data/examples/layer_norm_bf16/uniform_s0)
set_tests_properties(cli_bisect_intermediates PROPERTIES PASS_REGULAR_EXPRESSION
  "profile xla-cpu: 30 captured tensors in topological order\n.*  1\\. fusion +wrapped_convert .*inside \\(1024 elements\\).*  9\\. fusion +subtract_multiply_fusion .*inside.* 23\\. multiply +mul\\.2 .*inside.*every captured tensor \\(30\\) inside its xla-cpu envelope")
# Every committed example, intermediates included, against its kernel.hlo.
add_test(NAME check_cases_examples
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/capture/check_cases.py -q
          ${PROJECT_SOURCE_DIR}/data/examples)
set_tests_properties(check_cases_examples PROPERTIES PASS_REGULAR_EXPRESSION
  "^25/25 cases ok\n$")

# bisect on an XLA dump directory: the report of the same run as a case.
add_test(NAME test_bisect_dump COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/bisect/test_bisect_dump.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_bisect_dump PROPERTIES ENVIRONMENT "${USC_TEST_ENV}")
