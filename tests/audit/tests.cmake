# The audit of a pass (docs/audit.md): synthetic passes with a known
# effect (tests/audit/pairs), each against bounds derived by hand in the
# test; the draws against their definitions; errors.
usc_add_test(test_audit audit/test_audit.c)

# The command line: the gate's exit status (docs/audit.md, "Exit status")
# on a regressing pass (3), a pass that changes the function (4), a
# neutral one and an improving one (0); usage errors (2); the JSON form.
set(USC_AUDIT_PAIRS ${PROJECT_SOURCE_DIR}/tests/audit/pairs)
function(usc_audit_status name status)
  add_test(NAME ${name} COMMAND bash -c
    "\"$0\" \"$@\"; rc=$?; [ $rc = ${status} ] || { echo \"exit status $rc, expected ${status}\"; exit 1; }"
    $<TARGET_FILE:ulpscope_cli> audit ${ARGN})
endfunction()
usc_audit_status(cli_audit_gate_regressed 3
  ${USC_AUDIT_PAIRS}/roundtrip_after.hlo ${USC_AUDIT_PAIRS}/roundtrip_before.hlo
  --draw normal --fail-on-regression 1)
usc_audit_status(cli_audit_gate_narrowed 3
  ${USC_AUDIT_PAIRS}/narrowacc_before.hlo ${USC_AUDIT_PAIRS}/narrowacc_after.hlo
  --draw uniform,normal --samples 2 --fail-on-regression 1)
usc_audit_status(cli_audit_gate_function 4
  ${USC_AUDIT_PAIRS}/mulzero_before.hlo ${USC_AUDIT_PAIRS}/mulzero_after.hlo
  --draw specials --fail-on-regression 1)
usc_audit_status(cli_audit_gate_neutral 0
  ${USC_AUDIT_PAIRS}/divconst_before.hlo ${USC_AUDIT_PAIRS}/divconst_after.hlo
  --draw normal,uniform,large --fail-on-regression 1)
usc_audit_status(cli_audit_gate_folded 0
  ${USC_AUDIT_PAIRS}/foldconst_before.hlo ${USC_AUDIT_PAIRS}/foldconst_after.hlo
  --draw normal --fail-on-regression 1)
usc_audit_status(cli_audit_gate_improved 0
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo ${USC_AUDIT_PAIRS}/roundtrip_after.hlo
  --draw normal --fail-on-regression 1)
# A sum split into a tree improves (test_sum_tree: verdict improved), so
# the gate passes; the exp polynomial changes the function everywhere it
# differs (test_exp_polynomial), so a gate finer than that change fails
# with 4 whatever the precision did.
usc_audit_status(cli_audit_gate_sumtree 0
  ${USC_AUDIT_PAIRS}/sumtree_before.hlo ${USC_AUDIT_PAIRS}/sumtree_after.hlo
  --draw uniform --samples 2 --fail-on-regression 1)
usc_audit_status(cli_audit_gate_exppoly 4
  ${USC_AUDIT_PAIRS}/exppoly_before.hlo ${USC_AUDIT_PAIRS}/exppoly_after.hlo
  --draw uniform --samples 2 --fail-on-regression 0.001)
# Without a gate a regression still exits 0: the audit ran.
usc_audit_status(cli_audit_no_gate 0
  ${USC_AUDIT_PAIRS}/roundtrip_after.hlo ${USC_AUDIT_PAIRS}/roundtrip_before.hlo
  --draw normal)
usc_audit_status(cli_audit_no_inputs 2
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo ${USC_AUDIT_PAIRS}/roundtrip_after.hlo)
usc_audit_status(cli_audit_bad_dist 2
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo ${USC_AUDIT_PAIRS}/roundtrip_after.hlo
  --draw normal,gauss)
usc_audit_status(cli_audit_bad_samples 2
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo ${USC_AUDIT_PAIRS}/roundtrip_after.hlo
  --draw normal --samples 0)
usc_audit_status(cli_audit_other_program 1
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo ${USC_AUDIT_PAIRS}/divconst_after.hlo
  --draw normal)
set_tests_properties(cli_audit_bad_dist PROPERTIES FAIL_REGULAR_EXPRESSION "exit status" PASS_REGULAR_EXPRESSION
  "--draw: unknown distribution 'gauss' \\(one of normal, uniform, large, ties, denormal, cancel, overflow, nearzero, specials\\)")
set_tests_properties(cli_audit_other_program PROPERTIES FAIL_REGULAR_EXPRESSION "exit status" PASS_REGULAR_EXPRESSION
  "divconst_after.hlo: 1 parameter, but .*roundtrip_before.hlo has 2: the modules must be the same program")
set_tests_properties(cli_audit_gate_function PROPERTIES FAIL_REGULAR_EXPRESSION "exit status" PASS_REGULAR_EXPRESSION
  "function: CHANGED: the oracles differ beyond their enclosures, by up to inf ulp\nprecision: regressed \\(output 0: NaN errors 0 -> [1-9]")
add_test(NAME cli_audit_json COMMAND ulpscope_cli audit
  ${USC_AUDIT_PAIRS}/divconst_before.hlo ${USC_AUDIT_PAIRS}/divconst_after.hlo
  --draw normal --samples 2 --seed 3 --json)
set_tests_properties(cli_audit_json PROPERTIES PASS_REGULAR_EXPRESSION
  "^\\{\"before\": \".*divconst_before.hlo\", .*\"samples\": \\[\"normal/0\", \"normal/1\"\\], \"function_changed\": true, .*\"verdict\": \"neutral\", .*\"outputs\": \\[\\{\"index\": 0, \"shape\": \"f32\\[256\\]\", \"pooled\": \\{\"count\": 512, \"function\": \\{\"changed\": 512, \"special\": 0, .*\"precision\": \\{\"better\": 0, ")

# The /audits/<name> group of the result file, read back through the door.
usc_add_test(test_audit_results audit/test_audit_results.c)

# Pipelines: XLA:CPU's per-pass dumps of 10 catalogue kernels and 4 small
# kernels kept for their pipelines (data/pipelines,
# tools/capture/pipelines.py); the passes the audit names checked against
# facts read from the dump files (tests/audit/pipelines.py, facts.py).
add_test(NAME test_audit_pipelines
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/audit/pipelines.py)
set_tests_properties(test_audit_pipelines PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  TIMEOUT 600)
usc_audit_status(cli_audit_pipeline_none 1 --pipeline ${PROJECT_SOURCE_DIR}/data/pipelines --draw normal)
set_tests_properties(cli_audit_pipeline_none PROPERTIES FAIL_REGULAR_EXPRESSION "exit status"
  PASS_REGULAR_EXPRESSION "data/pipelines: no per-pass dumps of any module \\(XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_pass_re=\\.\\*\\)")
usc_audit_status(cli_audit_pipeline_module 1 --pipeline ${PROJECT_SOURCE_DIR}/data/pipelines/softmax_f32 --module jit_nosuch --draw normal)
set_tests_properties(cli_audit_pipeline_module PROPERTIES FAIL_REGULAR_EXPRESSION "exit status"
  PASS_REGULAR_EXPRESSION "no per-pass dumps of module 'jit_nosuch'")
usc_audit_status(cli_audit_pipeline_usage 2 --pipeline ${PROJECT_SOURCE_DIR}/data/pipelines/softmax_f32
  ${USC_AUDIT_PAIRS}/roundtrip_before.hlo --draw normal)
usc_audit_status(cli_audit_pipeline_name_alone 2 --pipeline ${PROJECT_SOURCE_DIR}/data/pipelines/softmax_f32
  --draw normal --name x)

# Pipelines gated and written (tests/audit/pipeline_gate.py): synthetic
# pipelines made of the pairs, each pass's effect known; the exit status
# is the worst pass's, and the result file holds the layout of
# docs/audit.md ("The result file"), read with h5py.
add_test(NAME test_audit_pipeline_gate
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/audit/pipeline_gate.py status)
add_test(NAME test_audit_pipeline_out
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/audit/pipeline_gate.py out)
set_tests_properties(test_audit_pipeline_gate test_audit_pipeline_out PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77)
