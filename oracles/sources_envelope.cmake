# The legitimate envelope domain (oracles/envelope.h, docs/envelope.md).
list(APPEND USC_LIB_SOURCES
  oracles/envelope.c)
