# Evaluator tests: the interpreter on hand-written modules, the reference
# domain against MPFR called directly, and the corpus walk.
usc_add_test(test_eval_interp eval/test_eval_interp.c)
usc_add_test(test_eval_reference eval/test_eval_reference.c)
target_include_directories(test_eval_reference PRIVATE ${PROJECT_SOURCE_DIR})
usc_add_test(test_eval_corpus eval/test_eval_corpus.c)
# reduce and reduce-window with a one-add body, combined a batch of
# output elements at a time: the same bits as sequential C float sums and
# as the same sum written out as elementwise adds, in every domain.
usc_add_test(test_eval_reduce_batch eval/test_eval_reduce_batch.c)
# The evaluator's spare arrays never raise its peak, counted at their real
# sizes; an array another evaluator counts is freed.
usc_add_test(test_eval_spares eval/test_eval_spares.c)
# Control flow (while, conditional, sort, TopK) in every domain, the
# reference's path followed, the loop bound and bad modules.
usc_add_test(test_eval_control eval/test_eval_control.c)
# call: a module with calls and the same module inlined by hand give the
# same bits in every domain, streamed and whole; bad calls are refused.
usc_add_test(test_eval_call eval/test_eval_call.c)
# explain follows an element through XLA:CPU's calls into the called
# computations and their fusions, down to the parameters.
add_test(NAME cli_explain_call COMMAND ulpscope_cli explain
  ${PROJECT_SOURCE_DIR}/data/control_flow/call_nested_jit_f32
  --element 4,25 --profile xla-cpu)
set_tests_properties(cli_explain_call PROPERTIES PASS_REGULAR_EXPRESSION
  "jit_layer_\\.3  call f32\\[8,32\\] \\[4,25\\].*calls layer\\.1\\.clone.*jit_layer_\\.2  call f32\\[8,32\\] \\[4,25\\].*calls layer\\.1 ")
# Unstable sorts and TopK take the device's order among ties; stable
# sorts keep theirs; ties feeding further ops make the envelope refuse.
usc_add_test(test_eval_sort_ties eval/test_eval_sort_ties.c)
target_include_directories(test_eval_sort_ties PRIVATE ${PROJECT_SOURCE_DIR})
# Real XLA:CPU programs with control flow (data/control_flow/) judged
# under xla-cpu: legit, not one defect; a wrong value caught; the bound.
add_test(NAME test_control_flow_cases COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/eval/test_control_flow_cases.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_control_flow_cases PROPERTIES
  ENVIRONMENT "${USC_TEST_ENV}")
# Device outputs of sorts and top-k with tie groups permuted in numpy
# (data/sort_ties/): legit for unstable sorts and TopK, defects for a
# stable sort or a swapped pair that does not tie.
add_test(NAME test_sort_ties_cases COMMAND bash
  ${PROJECT_SOURCE_DIR}/tests/eval/test_sort_ties_cases.sh
  $<TARGET_FILE:ulpscope_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_sort_ties_cases PROPERTIES
  ENVIRONMENT "${USC_TEST_ENV}")

# The CLI on a kernel without parameters: exp(0), exp(1), exp(2) in f32,
# correctly rounded (e = 2.71828175 and e^2 = 7.38905621 to 9 digits).
add_test(NAME cli_eval_iota_exp
  COMMAND ulpscope_cli eval ${CMAKE_CURRENT_SOURCE_DIR}/eval/cli_iota_exp.hlo)
set_tests_properties(cli_eval_iota_exp PROPERTIES
  PASS_REGULAR_EXPRESSION "output 0: f32\\[3\\]\n  1 2.71828175 7.38905621\n")
add_test(NAME cli_eval_missing_input
  COMMAND ulpscope_cli eval ${CMAKE_CURRENT_SOURCE_DIR}/eval/cli_iota_exp.hlo --input nonexistent.npy)
set_tests_properties(cli_eval_missing_input PROPERTIES WILL_FAIL TRUE)

# Streamed (tiled) evaluation gives the values of whole evaluation, also
# handed over tile by tile (the domain values, read through oracles/).
usc_add_test(test_eval_tiles eval/test_eval_tiles.c)
target_include_directories(test_eval_tiles PRIVATE ${PROJECT_SOURCE_DIR})
# The corpus walk over XLA's corpus in ../shared: skipped when it is absent.
usc_add_xla_corpus_test(test_eval_corpus_xla test_eval_corpus)

# The fast strict reference (oracles/reference_fast.h): hand-derived cases
# (ties, subnormals, overflow, near-ties that must go to MPFR), and the
# fast reference against the MPFR path, bit for bit, with every figure of
# the check, on every case of data/acceptance, data/examples and
# data/defects.
# Under the sanitizers, where each check costs ten times more, the corpus
# test checks the first case of each kernel only (every kernel still).
usc_add_test(test_reference_fast eval/test_reference_fast.c)
target_include_directories(test_reference_fast PRIVATE ${PROJECT_SOURCE_DIR})
set_tests_properties(test_reference_fast PROPERTIES TIMEOUT 900)
usc_add_test(test_reference_fast_corpus eval/test_reference_fast_corpus.c)
set(usc_reference_corpus_env "${USC_TEST_ENV}")
if(USC_SANITIZE)
  list(APPEND usc_reference_corpus_env "USC_REFERENCE_CORPUS=per-kernel")
endif()
set_tests_properties(test_reference_fast_corpus PROPERTIES
  ENVIRONMENT "${usc_reference_corpus_env}" TIMEOUT 900)
