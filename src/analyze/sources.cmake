list(APPEND USC_LIB_SOURCES
  src/analyze/check.c
  src/analyze/check_figures.c
  src/analyze/check_fold.c
  src/analyze/check_rows.c
  src/analyze/check_threads.c
  src/analyze/check_write.c
  src/analyze/case.c)
