# The fast certified tier: containment of the MPFI oracle's enclosure on
# random points, balls and chains (docs/tier.md).
usc_add_test(test_tier tier/test_tier.c)
target_include_directories(test_tier PRIVATE ${PROJECT_SOURCE_DIR})
# The tier's dot products (oracles/tier_dot.c) against the MPFI oracle.
usc_add_test(test_tier_dot tier/test_tier_dot.c)
target_include_directories(test_tier_dot PRIVATE ${PROJECT_SOURCE_DIR})
