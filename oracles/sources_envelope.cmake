# The legitimate envelope domain (oracles/envelope.h, docs/envelope.md).
list(APPEND USC_LIB_SOURCES
  oracles/envelope.c
  oracles/envelope_continuous.c
  oracles/envelope_value.c
  oracles/envelope_discrete.c
  oracles/envelope_sum.c
  oracles/envelope_fast.c
  oracles/envelope_loops.c)
