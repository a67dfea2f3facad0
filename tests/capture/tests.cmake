# tools/capture/ without jax (CI has none): what capture.py --platform
# relies on (finding the optimized module in an XLA:CPU or XLA:GPU dump,
# each dot's precision config, the recorded XLA flag values), on names and
# HLO text the test writes (tests/capture/test_capture_platform.py; numpy
# from Debian, which capture.py imports).
add_test(NAME test_capture_platform
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/capture/test_capture_platform.py)
set_tests_properties(test_capture_platform PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR}" SKIP_RETURN_CODE 77 TIMEOUT 120)
