# The flat view of the library for language bindings (docs/python.md).
list(APPEND USC_LIB_SOURCES
  src/bind/bind.c)

# The Python package's C declarations are the public headers themselves,
# preprocessed by the compiler that builds the library and compiled into it
# as usc_bind_cdef() (docs/python.md, "For maintainers"): no second copy of
# a struct to keep in step by hand.
set(USC_CDEF_OUT ${CMAKE_CURRENT_BINARY_DIR}/bind)
file(MAKE_DIRECTORY ${USC_CDEF_OUT})
add_executable(usc_gen_cdef src/bind/gen_cdef.c)
file(GLOB USC_PUBLIC_HEADERS CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/include/ulpscope/*.h)
add_custom_command(
  OUTPUT ${USC_CDEF_OUT}/cdef_text.c
  COMMAND ${CMAKE_C_COMPILER} -E -std=c11
          -I${CMAKE_CURRENT_SOURCE_DIR}/include
          ${CMAKE_CURRENT_SOURCE_DIR}/src/bind/cdef_input.h
          -o ${USC_CDEF_OUT}/cdef.i
  COMMAND usc_gen_cdef ${USC_CDEF_OUT}/cdef.i
          ${CMAKE_CURRENT_SOURCE_DIR}/include/ulpscope/
          ${USC_CDEF_OUT}/cdef_text.c
  DEPENDS usc_gen_cdef ${CMAKE_CURRENT_SOURCE_DIR}/src/bind/cdef_input.h
          ${USC_PUBLIC_HEADERS}
  COMMENT "the public headers as cffi declarations"
  VERBATIM)
add_custom_target(usc_cdef_gen DEPENDS ${USC_CDEF_OUT}/cdef_text.c)
set_source_files_properties(${USC_CDEF_OUT}/cdef_text.c PROPERTIES
  GENERATED TRUE)
list(APPEND USC_LIB_SOURCES ${USC_CDEF_OUT}/cdef_text.c)
