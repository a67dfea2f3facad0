# Re-evaluation on a change's downstream cone (signature's mutants,
# attribution's rounding passes): src/eval/cone.h.
list(APPEND USC_LIB_SOURCES
  src/eval/cone.c
  src/eval/cone_text.c)
