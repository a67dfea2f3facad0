# The certified oracle domain: containment against mpmath and MPFR,
# hand-derived decisions and discrete ops (docs/oracle.md).
usc_add_test(test_oracle_tables oracle/test_oracle_tables.c)
target_include_directories(test_oracle_tables PRIVATE ${PROJECT_SOURCE_DIR})
usc_add_test(test_oracle_ops oracle/test_oracle_ops.c)
target_include_directories(test_oracle_ops PRIVATE ${PROJECT_SOURCE_DIR})
