# The result file: writer, reader and statistics (HDF5 through the door).
list(APPEND USC_LIB_SOURCES
  src/store/results_write.c
  src/store/results_guard.c
  src/store/results_read.c
  src/store/results_validate.c
  src/store/results_stats.c
  src/store/results_batch.c
  src/store/results_audit.c
  src/store/results_audit_pipeline.c)
