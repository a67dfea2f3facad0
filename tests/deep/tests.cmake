# Long chains and deep nesting through every subcommand that reads HLO: a
# chain of a million ops (each walk over the graph once recursed per
# operand and overflowed the stack), computations nested 64 deep and past
# it, shapes nested 200 deep and past it. tests/deep/deep_chain.py writes
# the kernels into a temporary directory; USC_DEEP_OPS changes the length.
set(USC_DEEP_SCENARIOS
  hlo extract eval check check_profile check_attribute explain signature
  bisect fusions nesting shape_nesting)
foreach(scenario ${USC_DEEP_SCENARIOS})
  add_test(NAME deep_${scenario}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/deep/deep_chain.py
            $<TARGET_FILE:ulpscope_cli> ${scenario})
  # A million ops take seconds per command in a release build, and a
  # debug ASan build is ten times slower: a generous limit, not a timing.
  set_tests_properties(deep_${scenario} PROPERTIES TIMEOUT 1800 LABELS deep)
  # Under the sanitizers a chain of 200,000 ops: a walk that recursed per
  # operand overflowed there at about 50,000 (a sanitized frame is bigger),
  # and the million of the release build would take a quarter of an hour.
  # The signature search, which lists about ten mutants per op, on a
  # chain of 4,000 there (its release run takes minutes on 100,000).
  if(USC_SANITIZE AND scenario STREQUAL "signature")
    set_property(TEST deep_${scenario} APPEND PROPERTY ENVIRONMENT
      "USC_DEEP_OPS=40000")
  elseif(USC_SANITIZE)
    set_property(TEST deep_${scenario} APPEND PROPERTY ENVIRONMENT
      "USC_DEEP_OPS=200000")
  endif()
endforeach()
