# The fast certified tier: containment of the MPFI oracle's enclosure on
# random points, balls and chains (docs/tier.md).
usc_add_test(test_tier tier/test_tier.c)
target_include_directories(test_tier PRIVATE ${PROJECT_SOURCE_DIR})
