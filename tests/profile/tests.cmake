# Device profiles: the parser, the printer, the built-in profiles.
usc_add_test(test_profile profile/test_profile.c)

# The command line: tests/profile/cases/NAME.txt, run by tests/cli/run_case.sh.
foreach(case profiles_list profiles_user_file profiles_bad_file
    profiles_neither profiles_usage)
  add_test(NAME cli_${case}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_case.sh
      $<TARGET_FILE:ulpscope_cli> ${CMAKE_CURRENT_SOURCE_DIR}/profile/cases/${case}.txt)
endforeach()
