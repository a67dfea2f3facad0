list(APPEND USC_LIB_SOURCES
  src/dtype/format.c)
