# The fast certified f64 tier (oracles/tier.h, docs/tier.md).
list(APPEND USC_LIB_SOURCES
  oracles/tier.c
  oracles/tier_arith.c
  oracles/tier_convert.c
  oracles/tier_decide_array.c
  oracles/tier_loops.c
  oracles/tier_dot.c
  oracles/f64.c)
