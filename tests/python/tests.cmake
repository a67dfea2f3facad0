# The Python package (python/, docs/python.md): pytest files run with the
# interpreter USC_PYTHON (tools/pyenv.sh; skipped, exit 77, without it),
# the package from the source tree and this build's libulpscope.so.
# Under the sanitizers the shared library needs their runtimes preloaded
# into the interpreter; the tests then run with them (leak detection off:
# CPython and jax keep allocations alive on purpose until exit).
set(USC_PY_ENV
  "USC_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "USC_CLI=$<TARGET_FILE:ulpscope_cli>"
  "ULPSCOPE_LIB=$<TARGET_FILE:ulpscope_shared>"
  "PYTHONPATH=${PROJECT_SOURCE_DIR}/python"
  "MPLBACKEND=Agg"
  "JAX_PLATFORMS=cpu")
if(USC_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE _usc_asan OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libubsan.so
    OUTPUT_VARIABLE _usc_ubsan OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND USC_PY_ENV "LD_PRELOAD=${_usc_asan}:${_usc_ubsan}"
    "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
foreach(usc_py_test bindings cli_equal results analyses batch_audit jax install
    docs)
  add_test(NAME test_python_${usc_py_test}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/python/run_pytest.sh
            test_${usc_py_test}.py)
  set_tests_properties(test_python_${usc_py_test} PROPERTIES
    ENVIRONMENT "${USC_PY_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
