list(APPEND USC_LIB_SOURCES
  src/dtype/format.c
  src/dtype/round.c
  src/dtype/codec.c
  src/dtype/codec_mpfr.c
  src/dtype/ulp.c
  src/dtype/ulp_fast.c
  src/dtype/rn_fast.c
  src/dtype/text.c
  src/dtype/selfcheck.c)
