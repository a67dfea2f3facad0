# The legitimate envelope domain (oracles/envelope.c, docs/envelope.md).
usc_add_test(test_envelope envelope/test_envelope.c)
target_include_directories(test_envelope PRIVATE ${PROJECT_SOURCE_DIR})
