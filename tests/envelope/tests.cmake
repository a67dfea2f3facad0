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
