# Re-evaluation on a change's downstream cone (src/eval/cone.h): every
# mutant of signature's catalogue on the defect corpus and every rounding
# run of attribution on the examples, cone against whole evaluation, bit
# for bit.  USC_CONE_FULL=1 checks every mutant's envelope too.  Under
# the sanitizers: the first four defect kernels.
usc_add_test(test_cone cone/test_cone.c)
target_include_directories(test_cone PRIVATE ${PROJECT_SOURCE_DIR})
if(USC_SANITIZE)
  set_tests_properties(test_cone PROPERTIES
    ENVIRONMENT "${USC_TEST_ENV};USC_CONE_CASES=4")
endif()
