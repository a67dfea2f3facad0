# The HTML report of a result file (docs/report.md).
list(APPEND USC_LIB_SOURCES
  src/report/report.c
  src/report/report_audits.c
  src/report/report_explain.c
  src/report/report_html.c
  src/report/report_kernel.c
  src/report/report_page.c
  src/report/report_pipeline.c
  src/report/report_signatures.c
  src/report/report_svg.c)
