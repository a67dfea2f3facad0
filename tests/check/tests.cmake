# ulpscope check: the comparison on a kernel with known answers, and the
# captured XLA:CPU examples end to end.
usc_add_test(test_check check/test_check.c)
usc_add_test(test_check_examples check/test_check_examples.c)

# The command line.  XLA:CPU's fp8 quantize output is bit-identical to a
# strict implementation (see test_check_examples.c for why).
add_test(NAME cli_check_case
  COMMAND ulpscope_cli check ${PROJECT_SOURCE_DIR}/data/examples/fp8_quantize_f32/ties_s1 --worst 0)
set_tests_properties(cli_check_case PROPERTIES PASS_REGULAR_EXPRESSION
  "output 0: f8e4m3fn\\[1024\\], 1024 elements\n.*bit-identical to the reference: 1024 of 1024; undecided: 0\n")
add_test(NAME cli_check_json
  COMMAND ulpscope_cli check ${PROJECT_SOURCE_DIR}/data/examples/fp8_quantize_f32/ties_s1 --worst 1 --json)
set_tests_properties(cli_check_json PROPERTIES PASS_REGULAR_EXPRESSION
  "^\\{\"kernel\": \"jit_fp8_quantize_f32\", .*\"profile\": \"xla-cpu\", \"verdict\": \"legit\", .*\"classes\": \\{\"exact\": 1024, .*\"bit_exact\": 1024, \"undecided\": 0, \"tier_decided\": 1024, \"worst\": \\[\\{\"class\": \"exact\", .*\"index\": \\[")
foreach(case check_usage check_not_a_case check_count_mismatch)
  add_test(NAME cli_${case}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_case.sh
      $<TARGET_FILE:ulpscope_cli> ${CMAKE_CURRENT_SOURCE_DIR}/check/cases/${case}.txt)
endforeach()
usc_add_test(test_case_json check/test_case_json.c)
usc_add_test(test_check_stream check/test_check_stream.c)
usc_add_test(test_check_rows check/test_check_rows.c)
target_include_directories(test_check_rows PRIVATE ${PROJECT_SOURCE_DIR}/src)
# check -j N: the same report and result file as on one thread.
usc_add_test(test_check_threads check/test_check_threads.c)
add_test(NAME cli_check_threads
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check/cli_threads.sh
    $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
# The check's in-line classification against usc_classify_element.
usc_add_test(test_check_classify_fast check/test_check_classify_fast.c)
# The fold of a streamed check's pieces against the whole check, ties included.
usc_add_test(test_check_fold check/test_check_fold.c)
# The statistics' figures whatever the order of the pieces (threads add them).
usc_add_test(test_check_stats_order check/test_check_stats_order.c)
# The tier's ULP-error decision over arrays and the check's merge of it
# against the per-element decision and enclosure, bit for bit.
usc_add_test(test_check_tier_decide check/test_check_tier_decide.c)
target_include_directories(test_check_tier_decide PRIVATE ${PROJECT_SOURCE_DIR})
