list(APPEND USC_LIB_SOURCES
  src/analyze/signature.c
  src/analyze/signature_catalogue.c
  src/analyze/signature_equiv.c
  src/analyze/signature_runs.c
  src/analyze/signature_score.c
  src/analyze/signature_separate.c
  src/analyze/signature_text.c
  src/analyze/signature_mut_compare.c
  src/analyze/signature_mut_layout.c
  src/analyze/signature_mut_precision.c
  src/analyze/signature_mut_value.c
  src/analyze/signature_mut_window.c)
