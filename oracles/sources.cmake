# The numeric domains of the evaluator (oracles/domain.h).
list(APPEND USC_LIB_SOURCES
  oracles/domain.c
  oracles/reference.c
  oracles/reference_fast.c)
