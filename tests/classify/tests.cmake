# Classification: single elements on hand-derived encodings, and defects
# injected into the real XLA:CPU cases of data/examples (a Python driver of
# the CLI; numpy and h5py from Debian, tools/setup.sh).
usc_add_test(test_classify classify/test_classify.c)

add_test(NAME test_inject_defects
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/classify/inject_defects.py)
set(usc_inject_env
  "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>")
if(USC_SANITIZE)
  # Under the sanitizers every CLI run is several times slower: one case
  # of four kernels covers every mutation kind there.
  list(APPEND usc_inject_env
    "USC_INJECT_CASES=fp8_quantize_f32/normal_s0,layer_norm_bf16/normal_s0,softmax_f32/normal_s0,adam_f32/normal_s0")
endif()
set_tests_properties(test_inject_defects PROPERTIES
  ENVIRONMENT "${usc_inject_env}" SKIP_RETURN_CODE 77 TIMEOUT 1500)
