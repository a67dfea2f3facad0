# The evaluator: driver, scalar bodies, data movement, reductions.
list(APPEND USC_LIB_SOURCES
  src/eval/eval.c
  src/eval/scalar.c
  src/eval/data.c
  src/eval/reduce.c
  src/eval/control.c
  src/eval/sort.c)
