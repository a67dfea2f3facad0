# The door to protobuf-c: XLA's HloSnapshot, HloModuleProto and
# LiteralProto (docs/dumps.md).  protoc-c turns src/proto/xla_subset.proto
# into C at build time; only the files listed here include what it makes.
pkg_check_modules(PROTOBUF_C REQUIRED IMPORTED_TARGET libprotobuf-c)
find_program(USC_PROTOC_C protoc-c REQUIRED)
set(USC_PROTO_OUT ${CMAKE_CURRENT_BINARY_DIR}/proto)
file(MAKE_DIRECTORY ${USC_PROTO_OUT})
add_custom_command(
  OUTPUT ${USC_PROTO_OUT}/xla_subset.pb-c.c ${USC_PROTO_OUT}/xla_subset.pb-c.h
  COMMAND ${USC_PROTOC_C} --c_out=${USC_PROTO_OUT}
          -I${CMAKE_CURRENT_SOURCE_DIR}/src/proto
          ${CMAKE_CURRENT_SOURCE_DIR}/src/proto/xla_subset.proto
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/proto/xla_subset.proto
  COMMENT "protoc-c src/proto/xla_subset.proto"
  VERBATIM)
# A target for the generated files, so that libraries built in other
# directories from the same list (tests/fuzz) can wait for them.
add_custom_target(usc_proto_gen DEPENDS
  ${USC_PROTO_OUT}/xla_subset.pb-c.c ${USC_PROTO_OUT}/xla_subset.pb-c.h)
# The generated file is not ulpscope's code: it builds without the
# project's warnings (usc_warnings applies to the library's own sources).
set_source_files_properties(${USC_PROTO_OUT}/xla_subset.pb-c.c PROPERTIES
  GENERATED TRUE COMPILE_OPTIONS "-w")
list(APPEND USC_LIB_SOURCES
  ${USC_PROTO_OUT}/xla_subset.pb-c.c
  src/proto/pb_door.c
  src/tensor/literal_pb.c
  src/tensor/snapshot.c
  src/hlo/module_pb.c)
