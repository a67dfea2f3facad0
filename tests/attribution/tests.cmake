# Attribution: hand-derived kernels (one rounding op, x + 1 - 1 in bf16, a
# variance's cancellation) and the identity contributions + residual =
# total on captured cases of data/examples.
usc_add_test(test_attribution attribution/test_attribution.c)

# The HDF5 datasets as h5py reads them, against the CLI's JSON report.
add_test(NAME test_attribution_h5py
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/attribution/read_attribution_h5py.py)
set_tests_properties(test_attribution_h5py PROPERTIES
  ENVIRONMENT "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR};USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  SKIP_RETURN_CODE 77)
