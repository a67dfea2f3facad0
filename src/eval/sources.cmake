# The evaluator: its API, the walk of a computation, streaming, buffers,
# elementwise ops, scalar bodies, data movement, reductions, control flow.
list(APPEND USC_LIB_SOURCES
  src/eval/eval.c
  src/eval/support.c
  src/eval/walk.c
  src/eval/stream.c
  src/eval/buffers.c
  src/eval/elementwise.c
  src/eval/scalar.c
  src/eval/data.c
  src/eval/reduce.c
  src/eval/gather.c
  src/eval/control.c
  src/eval/sort.c)
