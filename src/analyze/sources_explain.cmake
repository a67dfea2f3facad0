list(APPEND USC_LIB_SOURCES
  src/analyze/explain.c)
