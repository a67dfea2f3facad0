# XLA's protocol buffers: literals, snapshots and modules (docs/dumps.md).
usc_add_test(test_literal_table proto/test_literal_table.c)
# The same table made afresh by XLA:CPU and ml_dtypes, when the Python
# environment is there (tools/pyenv.sh); skipped (77) without it.
add_test(NAME test_literal_table_generated COMMAND bash -c
  "[ -n \"$USC_PYTHON\" ] || { echo 'skipped: USC_PYTHON is not set (tools/pyenv.sh)'; exit 77; }; d=$1/literal_table; rm -rf $d && \"$USC_PYTHON\" $2/tools/gen_literal_table.py $d && $0 $d"
  $<TARGET_FILE:test_literal_table> ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(test_literal_table_generated PROPERTIES
  ENVIRONMENT "${USC_TEST_ENV}" SKIP_RETURN_CODE 77)
usc_add_test(test_module_pb proto/test_module_pb.c)
# Control flow from protos built field by field: a conditional on a pred,
# a custom call's API version, and malformed while, conditional, custom
# call and control predecessors, each an error naming the instruction.
usc_add_test(test_module_pb_control proto/test_module_pb_control.c)
# check on data/dumps/xla_cpu against the same runs as case directories.
add_test(NAME test_dump_check COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/proto/test_dump_check.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_dump_check PROPERTIES ENVIRONMENT "${USC_TEST_ENV}")
usc_add_test(test_dump_names proto/test_dump_names.c)
# Control flow (while, conditional, sort, TopK, call) from protos alone:
# data/control_flow/'s HloProtos and snapshots as a dump directory without
# text, checked and batched alike the case directories.
add_test(NAME test_dump_control_flow COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/proto/test_dump_control_flow.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_dump_control_flow PROPERTIES
  ENVIRONMENT "${USC_TEST_ENV}")
# tools/capture/capture.py --snapshots, XLA's own and written from Python,
# judged as the cases they belong to; skipped (77) without USC_PYTHON.
add_test(NAME test_capture_snapshots COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/proto/test_capture_snapshots.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_capture_snapshots PROPERTIES
  ENVIRONMENT "${USC_TEST_ENV}" SKIP_RETURN_CODE 77)
