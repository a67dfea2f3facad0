# The generator of random fused kernels (docs/fuzzing.md).
list(APPEND USC_LIB_SOURCES
  src/gen/rng.c
  src/gen/build.c
  src/gen/gen.c
  src/gen/reduce.c)
