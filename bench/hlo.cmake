# HLO parse throughput benchmark (include from bench/CMakeLists.txt).
add_executable(bench_hlo_parse ${CMAKE_CURRENT_LIST_DIR}/bench_hlo_parse.c)
target_link_libraries(bench_hlo_parse PRIVATE ulpscope usc_warnings)
