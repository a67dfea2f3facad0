list(APPEND USC_LIB_SOURCES
  src/analyze/explain.c
  src/analyze/explain_walk.c
  src/analyze/explain_values.c
  src/analyze/explain_files.c
  src/analyze/explain_print.c)
