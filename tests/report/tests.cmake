# ulpscope report (docs/report.md), end to end through the CLI: the page's
# figures parsed with html.parser against what h5py reads from the same
# result file (report_test.py), and the page in headless Chromium
# (browser_test.py: its DOM, no console message, a screenshot kept under
# build/tests/report/browser-*/).  Debian's python3 with numpy and h5py,
# and chromium, which tools/setup.sh installs; exit 77 skips without them.
# The writer's escaping and the plots' binning, in C.
usc_add_test(test_report_html report/test_report_html.c)

set(USC_REPORT_PY /usr/bin/python3)
set(USC_REPORT_OUT ${CMAKE_CURRENT_BINARY_DIR}/report)
set(USC_REPORT_ENV "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

add_test(NAME cli_report_examples
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
    $<TARGET_FILE:ulpscope_cli> examples ${USC_REPORT_OUT}/examples)
add_test(NAME cli_report_bad
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
    $<TARGET_FILE:ulpscope_cli> bad ${USC_REPORT_OUT}/bad)
add_test(NAME cli_report_batch
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
    $<TARGET_FILE:ulpscope_cli> batch ${USC_REPORT_OUT}/batch
    ${PROJECT_SOURCE_DIR}/data/examples)
add_test(NAME browser_report_example
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/browser_test.py
    $<TARGET_FILE:ulpscope_cli> ${USC_REPORT_OUT}/browser-example example
    ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/normal_s0)
# The audits of a result file (/audits, audit --out): their sections
# against h5py's reads, and a group of another layout skipped with a line.
add_test(NAME cli_report_audits
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
    $<TARGET_FILE:ulpscope_cli> audits ${USC_REPORT_OUT}/audits)
add_test(NAME browser_report_audits
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/browser_test.py
    $<TARGET_FILE:ulpscope_cli> ${USC_REPORT_OUT}/browser-audits audits -)
# report --explain: the worst elements' trees, computed from the case,
# equal to what ulpscope explain prints for them.
add_test(NAME cli_report_explain
  COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
    $<TARGET_FILE:ulpscope_cli> explain ${USC_REPORT_OUT}/explain)
set_tests_properties(cli_report_examples cli_report_bad cli_report_batch
  browser_report_example cli_report_audits browser_report_audits
  cli_report_explain PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "${USC_REPORT_ENV}")

# The report of the whole acceptance corpus (408 cases): its batch runs as
# four shards (each about 8 s in Release on an idle core) and a merge,
# fixtures of the two tests that read the index.  Not under the sanitizers, where the corpus
# already runs in test_acceptance_xla_cpu.
if(NOT USC_SANITIZE)
  set(acc ${USC_REPORT_OUT}/acceptance)
  foreach(k 1 2 3 4)
    add_test(NAME report_acceptance_shard_${k}
      COMMAND ${USC_REPORT_PY}
        ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
        $<TARGET_FILE:ulpscope_cli> shard ${acc}/s${k}.h5
        ${PROJECT_SOURCE_DIR}/data/acceptance ${k}/4)
    set_tests_properties(report_acceptance_shard_${k} PROPERTIES
      FIXTURES_SETUP report_acceptance_shards)
  endforeach()
  add_test(NAME report_acceptance_merge
    COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
      $<TARGET_FILE:ulpscope_cli> merge ${acc}/A.h5 ${acc}/s1.h5 ${acc}/s2.h5
      ${acc}/s3.h5 ${acc}/s4.h5)
  set_tests_properties(report_acceptance_merge PROPERTIES
    FIXTURES_REQUIRED report_acceptance_shards
    FIXTURES_SETUP report_acceptance)
  add_test(NAME cli_report_acceptance
    COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
      $<TARGET_FILE:ulpscope_cli> index ${USC_REPORT_OUT}/acceptance-page
      ${acc}/A.h5)
  add_test(NAME browser_report_acceptance
    COMMAND ${USC_REPORT_PY} ${CMAKE_CURRENT_SOURCE_DIR}/report/browser_test.py
      $<TARGET_FILE:ulpscope_cli> ${USC_REPORT_OUT}/browser-acceptance index
      ${acc}/A.h5)
  set_tests_properties(cli_report_acceptance browser_report_acceptance
    PROPERTIES FIXTURES_REQUIRED report_acceptance)
  set_tests_properties(report_acceptance_shard_1 report_acceptance_shard_2
    report_acceptance_shard_3 report_acceptance_shard_4
    report_acceptance_merge cli_report_acceptance browser_report_acceptance
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "${USC_REPORT_ENV}")
endif()

# Without Chromium the browser test says why and exits 77 (skipped).
add_test(NAME browser_report_absent COMMAND bash -c
  "PATH=/nonexistent USC_CHROMIUM= /usr/bin/python3 \"$0\" \"$1\" \"$2\" example \"$3\"; rc=$?; [ $rc = 77 ] || { echo \"exit status $rc, expected 77\"; exit 1; }"
  ${CMAKE_CURRENT_SOURCE_DIR}/report/browser_test.py $<TARGET_FILE:ulpscope_cli>
  ${USC_REPORT_OUT}/browser-absent
  ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/normal_s0)
set_tests_properties(browser_report_absent PROPERTIES
  PASS_REGULAR_EXPRESSION "skipped: chromium is not installed"
  FAIL_REGULAR_EXPRESSION "exit status")
