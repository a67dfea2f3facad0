# The legitimate envelope domain (oracles/envelope.c, docs/envelope.md).
usc_add_test(test_envelope envelope/test_envelope.c)
target_include_directories(test_envelope PRIVATE ${PROJECT_SOURCE_DIR})
# Soundness and invariants of issue 13 (docs/envelope.md, "Invariants").
usc_add_test(test_envelope_invariants envelope/test_envelope_invariants.c)
target_include_directories(test_envelope_invariants PRIVATE ${PROJECT_SOURCE_DIR})
# Brute-force soundness: every implementation a profile permits of random
# small kernels, evaluated with MPFR, lies inside the envelope.
usc_add_test(test_envelope_brute envelope/test_envelope_brute.c)
target_include_directories(test_envelope_brute PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(test_envelope_brute PRIVATE PkgConfig::MPFR)

# Real XLA:CPU outputs of issue 13 (tests/envelope/xla_cpu/capture.py): an
# f32 3x3 conv2d whose 27-product accumulation XLA orders its own way (784
# of 2048 elements were called defects when the envelope summed them in
# sequence), and an f16 x*scale+shift at near-ties of f16: legit under
# xla-cpu, every element inside.
foreach(case conv2d_f32 affine_f16)
  add_test(NAME cli_check_xla_cpu_${case}
    COMMAND ulpscope_cli check ${CMAKE_CURRENT_LIST_DIR}/xla_cpu/${case} --worst 0)
  set_tests_properties(cli_check_xla_cpu_${case} PROPERTIES PASS_REGULAR_EXPRESSION
    "verdict under profile xla-cpu: legit\n  legit: all [0-9]+ elements inside the xla-cpu envelope")
endforeach()

# The fast envelope against the MPFR one on the corpora (docs/envelope.md,
# "The fast path"): containment element by element, the width factor, and
# the same classes and verdicts.  One test per part so that each stays
# under ~20 s in a Release build.
add_executable(test_envelope_fast envelope/test_envelope_fast.c)
target_include_directories(test_envelope_fast PRIVATE
  ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(test_envelope_fast PRIVATE
  ulpscope PkgConfig::CMOCKA usc_warnings m)
# Under the sanitizers, one input distribution (normal_s0) of every
# kernel: all of them take minutes there.
set(usc_envelope_fast_only "")
if(USC_SANITIZE)
  set(usc_envelope_fast_only --only normal_s0)
endif()
foreach(part fastmath-off fastmath-on)
  add_test(NAME test_envelope_fast_${part}
    COMMAND test_envelope_fast ${usc_envelope_fast_only}
      ${PROJECT_SOURCE_DIR}/data/acceptance/${part})
endforeach()
add_test(NAME test_envelope_fast_examples
  COMMAND test_envelope_fast ${PROJECT_SOURCE_DIR}/data/examples
    ${PROJECT_SOURCE_DIR}/data/defects)
set_tests_properties(test_envelope_fast_fastmath-off test_envelope_fast_fastmath-on
  test_envelope_fast_examples PROPERTIES ENVIRONMENT "${USC_TEST_ENV}" TIMEOUT 900)
# The fast path's array loops against its per-element code, bit for bit
# (docs/envelope.md, "The array loops").
usc_add_test(test_envelope_loops envelope/test_envelope_loops.c)
target_include_directories(test_envelope_loops PRIVATE ${PROJECT_SOURCE_DIR})
# The outward-rounded double arithmetic the fast envelope shares
# (oracles/envelope_round.h) against MPFR's directed roundings and
# hand-derived hex floats.
usc_add_test(test_envelope_bounds envelope/test_envelope_bounds.c)
target_include_directories(test_envelope_bounds PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(test_envelope_bounds PRIVATE PkgConfig::MPFR)
# The fast envelope's rounding into f32, bf16 and f16 against the codec.
usc_add_test(test_envelope_round envelope/test_envelope_round.c)
target_include_directories(test_envelope_round PRIVATE ${PROJECT_SOURCE_DIR})

# The envelope's counts in the check's output: the fast path decides most
# op elements; with USC_ENVELOPE=mpfr none, and every one is escalated.
add_test(NAME cli_check_envelope_counts
  COMMAND ulpscope_cli check ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/normal_s0 --worst 0)
set_tests_properties(cli_check_envelope_counts PROPERTIES PASS_REGULAR_EXPRESSION
  "verdict under profile xla-cpu: legit\n[^\n]*\nenvelope: [1-9][0-9]* op elements decided in double, [0-9]+ escalated to MPFR\n")
add_test(NAME cli_check_envelope_counts_mpfr
  COMMAND ulpscope_cli check ${PROJECT_SOURCE_DIR}/data/examples/softmax_f32/normal_s0 --worst 0 --json)
set_tests_properties(cli_check_envelope_counts_mpfr PROPERTIES
  ENVIRONMENT "USC_ENVELOPE=mpfr"
  PASS_REGULAR_EXPRESSION "\"verdict\": \"legit\", \"reason\": \"[^\"]*\", \"envelope_fast\": 0, \"envelope_escalated\": [1-9][0-9]*, ")

# A flushing target reads subnormal operands of max/min, clamp, compare,
# sign, floor and ceil as zeros (x86 DAZ in minps, ucomiss, roundps...;
# abs and negate are bit operations and keep them): the device values of
# tests/envelope/daz/daz_*.npy, derived by hand, are legit under xla-cpu
# (which flushes f32 operands) and, under strict, exactly the 10 elements
# a flushed operand changes are defects (docs/findings.md, U1).
set(usc_daz ${CMAKE_CURRENT_LIST_DIR}/daz)
set(usc_daz_devices)
foreach(i RANGE 7)
  list(APPEND usc_daz_devices ${usc_daz}/daz_${i}.npy)
endforeach()
add_test(NAME cli_check_daz_exact_ops
  COMMAND ulpscope_cli check ${usc_daz}/kernel.hlo --input ${usc_daz}/x.npy
    --device ${usc_daz_devices} --profile xla-cpu --worst 0)
set_tests_properties(cli_check_daz_exact_ops PROPERTIES PASS_REGULAR_EXPRESSION
  "verdict under profile xla-cpu: legit\n  legit: all 32 elements inside the xla-cpu envelope")
add_test(NAME cli_check_daz_exact_ops_strict
  COMMAND ulpscope_cli check ${usc_daz}/kernel.hlo --input ${usc_daz}/x.npy
    --device ${usc_daz_devices} --profile strict --worst 0)
set_tests_properties(cli_check_daz_exact_ops_strict PROPERTIES
  PASS_REGULAR_EXPRESSION "defect: 10 of 32 elements outside the strict envelope")

# The sign of a zero through ceil and atan2 (docs/findings.md, U4):
# ceil of the f8e4m3fn round trip of -0.8537 is -0 (a zero result keeps
# its operand's sign), so atan2(ceil, -1) is -pi, and maximum(+0, -0) may
# be either zero, so atan2 of it is +-pi.  The device values
# (tests/envelope/zero_sign/device_*.npy, from numpy and ml_dtypes) are
# legit under xla-cpu, with the fast envelope and the MPFR one; a device
# that gives +pi where only -0 reaches atan2 is one defect.
set(usc_zs ${CMAKE_CURRENT_LIST_DIR}/zero_sign)
foreach(path fast mpfr)
  add_test(NAME cli_check_zero_sign_${path}
    COMMAND ulpscope_cli check ${usc_zs}/kernel.hlo
      --input ${usc_zs}/x.npy ${usc_zs}/y.npy
      --device ${usc_zs}/device_a.npy ${usc_zs}/device_b.npy
      --profile xla-cpu --worst 0)
  set_tests_properties(cli_check_zero_sign_${path} PROPERTIES
    PASS_REGULAR_EXPRESSION
    "verdict under profile xla-cpu: legit\n  legit: all 6 elements inside the xla-cpu envelope")
endforeach()
set_tests_properties(cli_check_zero_sign_mpfr PROPERTIES ENVIRONMENT "USC_ENVELOPE=mpfr")
add_test(NAME cli_check_zero_sign_wrong
  COMMAND ulpscope_cli check ${usc_zs}/kernel.hlo
    --input ${usc_zs}/x.npy ${usc_zs}/y.npy
    --device ${usc_zs}/device_a_wrong_sign.npy ${usc_zs}/device_b.npy
    --profile xla-cpu --worst 0)
set_tests_properties(cli_check_zero_sign_wrong PROPERTIES PASS_REGULAR_EXPRESSION
  "defect: 1 of 6 elements outside the xla-cpu envelope; worst: output 0 \\[0\\] = 3.14159274, [0-9]+ codes above the envelope \\[-3.14159369, -3.14159179\\] \\(sign-mismatch\\)")

# A select of two floats by a compare of the same two is a minimum or a
# maximum, which x86 emits as minps / maxps, whose DAZ reads a subnormal
# operand as zero (XLA:CPU with fast math, fuzz smoke seed 34): the DAZ
# device values of select(y >= x, x, y) (tests/envelope/daz_select/,
# derived with numpy) are legit under xla-cpu, while a select of x and -y
# still moves bits: its subnormal read as zero is one defect.
set(usc_dsel ${CMAKE_CURRENT_LIST_DIR}/daz_select)
add_test(NAME cli_check_daz_select_minmax
  COMMAND ulpscope_cli check ${usc_dsel}/kernel.hlo
    --input ${usc_dsel}/x.npy ${usc_dsel}/y.npy
    --device ${usc_dsel}/device_min.npy ${usc_dsel}/device_other.npy
    --profile xla-cpu --worst 0)
set_tests_properties(cli_check_daz_select_minmax PROPERTIES PASS_REGULAR_EXPRESSION
  "verdict under profile xla-cpu: legit\n  legit: all 8 elements inside the xla-cpu envelope")
add_test(NAME cli_check_daz_select_moves_bits
  COMMAND ulpscope_cli check ${usc_dsel}/kernel.hlo
    --input ${usc_dsel}/x.npy ${usc_dsel}/y.npy
    --device ${usc_dsel}/device_min.npy ${usc_dsel}/device_other_flushed.npy
    --profile xla-cpu --worst 0)
set_tests_properties(cli_check_daz_select_moves_bits PROPERTIES PASS_REGULAR_EXPRESSION
  "defect: 1 of 8 elements outside the xla-cpu envelope; worst: output 1 \\[0\\] = -0")
