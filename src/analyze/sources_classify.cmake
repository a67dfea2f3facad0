list(APPEND USC_LIB_SOURCES
  src/analyze/classify.c
  src/analyze/check_classify.c
  src/analyze/case_json.c)
