# Kernels of an HLO module: verifier, kernel isolation, summary
# (include/ulpscope/hlo_kernel.h).
list(APPEND USC_LIB_SOURCES
  src/hlo/verify.c
  src/hlo/verify_common.c
  src/hlo/verify_array.c
  src/hlo/verify_reduce.c
  src/hlo/verify_dot.c
  src/hlo/extract.c
  src/hlo/summary.c)
