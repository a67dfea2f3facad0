# The certified interval oracle domain (oracles/oracle.h, docs/oracle.md).
list(APPEND USC_LIB_SOURCES
  oracles/oracle.c
  oracles/oracle_unary.c
  oracles/oracle_binary.c
  oracles/oracle_convert.c
  oracles/oracle_decide.c
  oracles/oracle_fns.c
  oracles/oracle_memory.c)
