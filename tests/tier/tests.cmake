# The fast certified tier: containment of the MPFI oracle's enclosure on
# random points, balls and chains (docs/tier.md).
usc_add_test(test_tier tier/test_tier.c)
target_include_directories(test_tier PRIVATE ${PROJECT_SOURCE_DIR})
# The tier's dot products (oracles/tier_dot.c) against the MPFI oracle.
usc_add_test(test_tier_dot tier/test_tier_dot.c)
target_include_directories(test_tier_dot PRIVATE ${PROJECT_SOURCE_DIR})
# The tier's array loops against its general per-element code, the
# outward step against nextafter, the in-line codecs against the library.
usc_add_test(test_tier_fast tier/test_tier_fast.c)
target_include_directories(test_tier_fast PRIVATE ${PROJECT_SOURCE_DIR})
# The plain f64 domain (oracles/f64.c) on hand-derived kernels.
usc_add_test(test_tier_f64 tier/test_tier_f64.c)
target_include_directories(test_tier_f64 PRIVATE ${PROJECT_SOURCE_DIR})
# The tier dot's exact accumulation where cancellation defeats gamma_K.
usc_add_test(test_tier_exact tier/test_tier_exact.c)
target_include_directories(test_tier_exact PRIVATE ${PROJECT_SOURCE_DIR})
# The array loops of multiply, add, subtract, divide and the monotone
# functions against MPFR called directly (containment, strict signs,
# zero signs, IEEE specials, overflow and underflow edges).
usc_add_test(test_tier_loops tier/test_tier_loops.c)
target_include_directories(test_tier_loops PRIVATE ${PROJECT_SOURCE_DIR})
# The array entries of the domain interface (load_array, to_output_array)
# in the tier and plain f64: bit-identical to the per-element entries,
# loads exact and output codes against MPFR, end to end through usc_eval.
usc_add_test(test_tier_array tier/test_tier_array.c)
target_include_directories(test_tier_array PRIVATE ${PROJECT_SOURCE_DIR})
