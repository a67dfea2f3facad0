# ulpscope batch and merge (include/ulpscope/batch.h, docs/batch.md).
list(APPEND USC_LIB_SOURCES
  src/batch/batch.c
  src/batch/case_run.c
  src/batch/discover.c
  src/batch/journal.c
  src/batch/merge.c
  src/batch/mpi.c
  src/batch/pool.c
  src/batch/rank.c
  src/batch/row.c)
