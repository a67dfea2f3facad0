# XLA dump directories: file names, pairing, import as cases (docs/dumps.md).
list(APPEND USC_LIB_SOURCES
  src/analyze/dump.c
  src/analyze/dump_import.c)
