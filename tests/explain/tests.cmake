# ulpscope explain: a hand-built kernel's tree asserted line by line (the
# example of docs/explain.md), the same tree from a result file, errors;
# and a defect injected into layer_norm_bf16 (a Python driver of the CLI).
usc_add_test(test_explain explain/test_explain.c)

add_test(NAME cli_explain_defect
  COMMAND /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/explain/explain_defect.sh
          $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_explain_defect PROPERTIES SKIP_RETURN_CODE 77)

# explain --json read back by python3's json module: the documented
# example's hand-derived figures, and the layer norm defect's class.
add_test(NAME cli_explain_json
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/explain/explain_json.py
          $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR} example)
add_test(NAME cli_explain_json_defect
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/explain/explain_json.py
          $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR} defect)
set_tests_properties(cli_explain_json_defect PROPERTIES SKIP_RETURN_CODE 77)
