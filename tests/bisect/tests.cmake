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
