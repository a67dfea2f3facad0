# Command-line cases: tests/cli/cases/NAME.txt, one ctest test each.
set(USC_CLI_CASES
  cast_e4m3fn_overflow
  cast_bf16_single_rounding
  cast_modes
  cast_int
  cast_bad_value
  decode_e5m2
  decode_too_wide
  ulp_bf16
  unknown_type
  unknown_command)
foreach(case ${USC_CLI_CASES})
  add_test(NAME cli_${case}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_case.sh
      $<TARGET_FILE:ulpscope_cli> ${CMAKE_CURRENT_SOURCE_DIR}/cli/cases/${case}.txt)
endforeach()

# The built-in self-check must find nothing wrong.
add_test(NAME cli_formats_check COMMAND ulpscope_cli formats --check)
set_tests_properties(cli_formats_check PROPERTIES
  PASS_REGULAR_EXPRESSION "self-check: [0-9]+ values checked, 0 wrong")

# Case discovery: a case file that is a directory, a FIFO, a dangling link
# or numbered with a gap is an error naming it, not a file to skip.
foreach(kind input_dir input_fifo device_dir input_gap case_json_dir
        kernel_dangling)
  add_test(NAME cli_case_discovery_${kind}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/case_discovery.sh
      $<TARGET_FILE:ulpscope_cli>
      ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/large_s1 ${kind})
endforeach()
