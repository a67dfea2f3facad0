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

# Every numeric option of every subcommand at -1, 0, its maximum, one past
# it and 2^64: out of range is a usage error naming the option (issue 12).
add_test(NAME cli_numeric_options
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/num_options.sh
    $<TARGET_FILE:ulpscope_cli>)
set_tests_properties(cli_numeric_options PROPERTIES TIMEOUT 300)

# A case.json member of the wrong type or value is a bad input (exit 1)
# naming the file, line:column and key, for every command that reads it.
add_test(NAME cli_case_json_invalid
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/case_json.sh
    $<TARGET_FILE:ulpscope_cli>
    ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/normal_s0)

# Limits on what is read through the command line: /dev/zero, a FIFO, a
# declared tensor of 6 GiB, --max-file-size, --max-elements, stdin.
add_test(NAME cli_limits
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/limits.sh
    $<TARGET_FILE:ulpscope_cli>)
set_tests_properties(cli_limits PROPERTIES TIMEOUT 300)

# Case discovery: a case file that is a directory, a FIFO, a dangling link
# or numbered with a gap is an error naming it, not a file to skip.
foreach(kind input_dir input_fifo device_dir input_gap case_json_dir
        kernel_dangling)
  add_test(NAME cli_case_discovery_${kind}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/case_discovery.sh
      $<TARGET_FILE:ulpscope_cli>
      ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/large_s1 ${kind})
endforeach()
