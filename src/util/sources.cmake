list(APPEND USC_LIB_SOURCES
  src/util/alloc.c
  src/util/status.c
  src/util/version.c
  src/util/file.c
  src/util/io_error.c
  src/util/limits.c
  src/util/process.c)
