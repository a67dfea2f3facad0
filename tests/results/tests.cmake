# The result file: writer, reader, statistics, failure handling, and a
# reading of the file by h5py (Debian's python3-h5py under /usr/bin).
usc_add_test(test_results_roundtrip results/test_roundtrip.c)
usc_add_test(test_results_stats results/test_stats.c)
usc_add_test(test_results_errors results/test_errors.c)
usc_add_test(test_results_oom results/test_oom.c)
usc_add_test(test_results_stream results/test_stream.c)
# What --out refuses, the append lock, killed writers' temporary files,
# and a file size limit while writing (results_guard.c).
usc_add_test(test_results_guard results/test_guard.c)

add_executable(results_write_fixture results/write_fixture.c)
target_include_directories(results_write_fixture PRIVATE
  ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(results_write_fixture PRIVATE ulpscope usc_warnings m)
add_test(NAME test_results_h5py
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/results/read_with_h5py.py
          $<TARGET_FILE:results_write_fixture>)
# Exit status 77: h5py or numpy is not installed (tools/setup.sh adds them).
set_tests_properties(test_results_h5py PROPERTIES SKIP_RETURN_CODE 77)
# Damaged files make HDF5 itself leak (see results/lsan.supp).
set_property(TEST test_results_errors APPEND PROPERTY ENVIRONMENT
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/results/lsan.supp")

# The same refusals through `ulpscope check --out`, and a file size limit.
add_test(NAME cli_check_out_target
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/results/cli_out_target.sh
          $<TARGET_FILE:ulpscope_cli>
          ${PROJECT_SOURCE_DIR}/data/examples/fp8_quantize_f32/ties_s1)

# Damaged result files: written by `ulpscope check` on an example case,
# damaged one way each with h5py (tests/results/damage_cli.py), and
# refused by `ulpscope explain` with a message naming the object.
set(USC_RESULTS_DAMAGE
  shape_huge shape_rank0 device_huge device_rank0 ops_cut oracle_mid_nan
  envelope_lo_above_hi class_out_of_range truncated missing_dataset
  wrong_dtype schema_version undecided_count max_abs_ulp verdict
  output_count hlo_text undecided_flag)
foreach(kind ${USC_RESULTS_DAMAGE})
  add_test(NAME cli_results_damage_${kind}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/results/damage_cli.py
            $<TARGET_FILE:ulpscope_cli>
            ${PROJECT_SOURCE_DIR}/data/examples/layer_norm_bf16/normal_s0
            ${kind})
  # Exit status 77: h5py or numpy is not installed.
  set_tests_properties(cli_results_damage_${kind} PROPERTIES
    SKIP_RETURN_CODE 77)
endforeach()
