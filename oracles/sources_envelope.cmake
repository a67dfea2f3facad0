# The legitimate envelope domain (oracles/envelope.h, docs/envelope.md).
list(APPEND USC_LIB_SOURCES
  oracles/envelope.c
  oracles/envelope_continuous.c
  oracles/envelope_value.c
  oracles/envelope_discrete.c
  oracles/envelope_sum.c
  oracles/envelope_fast.c
  oracles/envelope_loops.c)
# No contraction of a * b + c into an FMA in the envelope's double
# arithmetic: its outward rounding reasons about each operation rounded
# on its own (oracles/envelope_round.h), and the loops' two versions
# (envelope_loops.c, target_clones) must compute the same doubles.
set_source_files_properties(
  oracles/envelope.c
  oracles/envelope_continuous.c
  oracles/envelope_fast.c
  oracles/envelope_loops.c
  oracles/envelope_sum.c
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
