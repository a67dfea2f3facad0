list(APPEND USC_LIB_SOURCES
  src/analyze/audit.c
  src/analyze/audit_draw.c
  src/analyze/audit_ops.c
  src/analyze/audit_pipeline.c)
