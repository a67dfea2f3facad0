list(APPEND USC_CLI_SOURCES
  src/cli/main.c
  src/cli/cmd_formats.c
  src/cli/cmd_hlo.c
  src/cli/cmd_eval.c
  src/cli/cmd_check.c
  src/cli/cmd_audit.c
  src/cli/cmd_profile.c
  src/cli/cmd_bisect.c
  src/cli/cmd_signature.c
  src/cli/cmd_explain.c
  src/cli/cmd_batch.c
  src/cli/cmd_report.c
  src/cli/cmd_dump.c
  src/cli/cmd_batch_dump.c
  src/cli/cmd_gen.c
  src/cli/cmd_reduce.c
  src/cli/cli_util.c)
