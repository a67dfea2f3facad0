# Oracle benchmarks (issue "oracle", Performance section); included from
# bench/CMakeLists.txt.  docs/performance.md gives the commands and figures.
# The naive baseline of bench_oracle calls MPFR directly and bench_matmul
# calls OpenBLAS directly: benches are not the library, so they may open
# those doors themselves.
# The helpers the check and oracle benches share: clocks, the five bench
# kernels and their enlargement, inputs, medians, a check's files.
add_library(bench_kernels STATIC ${CMAKE_CURRENT_LIST_DIR}/bench_kernels.c)
target_include_directories(bench_kernels PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(bench_kernels PUBLIC ulpscope PRIVATE usc_warnings)
target_compile_definitions(bench_kernels PRIVATE
  USC_KERNEL_DIR="${PROJECT_SOURCE_DIR}/kernels")

usc_add_bench(bench_oracle ${CMAKE_CURRENT_LIST_DIR}/bench_oracle.c)
target_link_libraries(bench_oracle PRIVATE bench_kernels PkgConfig::MPFR
  PkgConfig::GMP)

usc_add_bench(bench_matmul ${CMAKE_CURRENT_LIST_DIR}/bench_matmul.c)
target_link_libraries(bench_matmul PRIVATE PkgConfig::OPENBLAS)

usc_add_bench(bench_memory ${CMAKE_CURRENT_LIST_DIR}/bench_memory.c)
target_compile_definitions(bench_memory PRIVATE
  USC_KERNEL_DIR="${PROJECT_SOURCE_DIR}/kernels")

# The classified check against plain f64 (issue 15, the fast envelope).
usc_add_bench(bench_envelope ${CMAKE_CURRENT_LIST_DIR}/bench_envelope.c)
target_link_libraries(bench_envelope PRIVATE bench_kernels)
# The unclassified check against plain f64 (issue 15): the fast reference.
usc_add_bench(bench_check ${CMAKE_CURRENT_LIST_DIR}/bench_check.c)
target_link_libraries(bench_check PRIVATE bench_kernels)
# The signature search against one check of the same case (issue 15).
usc_add_bench(bench_signature ${CMAKE_CURRENT_LIST_DIR}/bench_signature.c)
target_link_libraries(bench_signature PRIVATE bench_kernels)
target_compile_definitions(bench_signature PRIVATE
  USC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
