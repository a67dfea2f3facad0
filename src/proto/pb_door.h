/*
 * The door to protobuf-c (src/proto/pb_door.c).
 *
 * ulpscope reads three of XLA's messages: HloSnapshot, HloModuleProto (or
 * the HloProto around it) and LiteralProto, declared with XLA's field
 * numbers in src/proto/xla_subset.proto, which protoc-c turns into C at
 * build time.  The files that read them (src/tensor/literal_pb.c,
 * src/tensor/snapshot.c, src/hlo/module_pb.c) include the generated header
 * through this one and unpack only through usc__pb_unpack.
 *
 * usc__pb_unpack walks the wire format itself before it lets protobuf-c
 * build the message, because protobuf-c says nothing about why a message
 * fails to parse: the walk names the byte offset and the field path
 * ("HloSnapshot.arguments[1].shape.dimensions") of the first thing wrong
 * (a truncated length, a bad varint, a wire type the declared field cannot
 * have, nesting deeper than USC__PB_MAX_DEPTH).  The messages live in
 * memory from the library's allocator and are freed with usc__pb_free.
 */
#ifndef USC_PB_DOOR_H
#define USC_PB_DOOR_H

#include "internal.h"

#include "ulpscope/dtype.h"
#include "xla_subset.pb-c.h"

/*
 * The deepest nesting of messages accepted: XLA's tuple shapes and tuple
 * literals nest, and a hostile file must not recurse without bound.
 */
#define USC__PB_MAX_DEPTH 64

/*
 * Parses len bytes as a message of type desc.  name is the file for
 * messages.  USC_EPARSE for bytes that are not that message, with the
 * offset and field path; USC_ENOMEM.
 */
usc_status usc__pb_unpack(const ProtobufCMessageDescriptor *desc,
			  const void *data, size_t len, const char *name,
			  ProtobufCMessage **out, usc_error *err);

/* Frees a message from usc__pb_unpack; NULL is allowed. */
void usc__pb_free(ProtobufCMessage *msg);

/*
 * Field numbers a message carries that the subset does not declare
 * (protobuf-c keeps them aside): the first one in *number, empty
 * sub-messages aside.  false when there is none.
 */
bool usc__pb_first_unknown(const ProtobufCMessage *msg, uint32_t *number);



/*
 * XLA's PrimitiveType numbers (xla_data.proto) and ulpscope's types.
 * usc__pb_dtype: USC_DTYPE_INVALID for TUPLE (13), a number ulpscope has
 * no type for, or PRIMITIVE_TYPE_INVALID (0); usc__pb_type_name spells
 * any number for messages ("TUPLE", "BUFFER", "type 99").
 */
#define USC__PB_TUPLE 13
usc_dtype usc__pb_dtype(int primitive_type);
void usc__pb_type_name(int primitive_type, char *buf, size_t size);
#endif /* USC_PB_DOOR_H */
