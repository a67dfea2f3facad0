/*
 * The door to protobuf-c: a wire-format walk that names what is wrong,
 * then protobuf-c's own unpacking with the library's allocator.
 * pb_door.h says why the walk exists.
 */
#include "internal.h"

#include <string.h>

#include "proto/pb_door.h"

/* A field path as it grows while the walk descends. */
typedef struct pb_walk {
	const char *name;
	const unsigned char *base; /* the start of the file, for offsets */
	usc_error *err;
	char path[512];
} pb_walk;

static void *pb_alloc(void *data, size_t size)
{
	(void)data;
	/* protobuf-c asks for zero bytes for empty repeated fields. */
	return usc__malloc(size ? size : 1);
}

static void pb_free_cb(void *data, void *ptr)
{
	(void)data;
	usc__free(ptr);
}

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free_cb, NULL};

static usc_status pb_bad(pb_walk *w, const unsigned char *at,
			 const char *what)
{
	return usc__fail(w->err, USC_EPARSE, "%s: byte %ld: field %s: %s", w->name,
			 (long)(at - w->base), w->path, what);
}

/* Reads a varint of at most 10 bytes; false when it does not end in time. */
static bool pb_varint(const unsigned char **p, const unsigned char *end,
		      uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (*p >= end)
			return false;
		unsigned char c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* The wire type a scalar field of this type has when not packed. */
static int pb_scalar_wire(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return 0;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	default:
		return 2; /* string, bytes, message */
	}
}

static const char *pb_wire_name(unsigned wt)
{
	static const char *const names[8] = {
		"varint", "64-bit", "length-delimited", "group start",
		"group end", "32-bit", "wire type 6", "wire type 7"};
	return names[wt & 7];
}

/* Appends ".name" or ".name[i]" (or "#N" for an undeclared field). */
static size_t pb_path_push(pb_walk *w, const ProtobufCFieldDescriptor *f,
			   uint32_t number, unsigned index)
{
	size_t old = strlen(w->path);
	size_t room = sizeof w->path - old;
	if (f && f->label == PROTOBUF_C_LABEL_REPEATED)
		snprintf(w->path + old, room, ".%s[%u]", f->name, index);
	else if (f)
		snprintf(w->path + old, room, ".%s", f->name);
	else
		snprintf(w->path + old, room, ".#%u", (unsigned)number);
	return old;
}

static usc_status pb_walk_message(pb_walk *w,
				  const ProtobufCMessageDescriptor *desc,
				  const unsigned char *p,
				  const unsigned char *end, unsigned depth);

static usc_status pb_walk_packed(pb_walk *w, int wire,
				 const unsigned char *p,
				 const unsigned char *end)
{
	if (wire == 1 || wire == 5) {
		size_t unit = wire == 1 ? 8 : 4;
		if ((size_t)(end - p) % unit != 0)
			return pb_bad(w, p, "packed fixed-width values whose "
					    "length is not a whole number of "
					    "values");
		return USC_OK;
	}
	while (p < end) {
		uint64_t v;
		const unsigned char *at = p;
		if (!pb_varint(&p, end, &v))
			return pb_bad(w, at, "a packed varint runs past its "
					     "field (truncated or malformed)");
	}
	return USC_OK;
}

static usc_status pb_walk_message(pb_walk *w,
				  const ProtobufCMessageDescriptor *desc,
				  const unsigned char *p,
				  const unsigned char *end, unsigned depth)
{
	unsigned counts[256];
	memset(counts, 0, sizeof counts);
	if (depth > USC__PB_MAX_DEPTH)
		return pb_bad(w, p, "messages nested deeper than 64 levels");
	while (p < end) {
		const unsigned char *at = p;
		uint64_t key, len = 0;
		if (!pb_varint(&p, end, &key))
			return pb_bad(w, at, "a field key runs past the end "
					     "(truncated or malformed)");
		uint64_t number = key >> 3;
		unsigned wt = (unsigned)(key & 7);
		if (number == 0 || number > 536870911u)
			return pb_bad(w, at, "a field number of 0 or above "
					     "2^29-1 (not a protocol buffer?)");
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field(
				desc, (unsigned)number);
		unsigned index = 0;
		if (f) {
			size_t fi = (size_t)(f - desc->fields);
			if (fi < USC__ARRAY_LEN(counts))
				index = counts[fi]++;
		}
		size_t old = pb_path_push(w, f, (uint32_t)number, index);
		const unsigned char *body = p;
		switch (wt) {
		case 0:
			if (!pb_varint(&p, end, &len))
				return pb_bad(w, at, "a varint runs past the "
						     "end (truncated or "
						     "malformed)");
			break;
		case 1:
		case 5:
			if ((size_t)(end - p) < (wt == 1 ? 8u : 4u))
				return pb_bad(w, at, "a fixed-width value runs "
						     "past the end (truncated)");
			p += wt == 1 ? 8 : 4;
			break;
		case 2:
			if (!pb_varint(&p, end, &len))
				return pb_bad(w, at, "a length runs past the "
						     "end (truncated or "
						     "malformed)");
			body = p;
			if (len > (uint64_t)(end - p)) {
				char msg[160];
				snprintf(msg, sizeof msg,
					 "a length of %llu bytes where %lu "
					 "remain (truncated file, or a length "
					 "that lies)",
					 (unsigned long long)len,
					 (unsigned long)(end - p));
				return pb_bad(w, at, msg);
			}
			p += len;
			break;
		default: {
			char msg[96];
			snprintf(msg, sizeof msg,
				 "%s, which XLA's messages never use",
				 pb_wire_name(wt));
			return pb_bad(w, at, msg);
		}
		}
		if (f) {
			int want = pb_scalar_wire(f->type);
			bool packable = want != 2 &&
					f->label == PROTOBUF_C_LABEL_REPEATED;
			if ((int)wt != want && !(packable && wt == 2)) {
				char msg[128];
				snprintf(msg, sizeof msg,
					 "%s data where the field holds %s",
					 pb_wire_name(wt),
					 pb_wire_name((unsigned)want));
				return pb_bad(w, at, msg);
			}
			usc_status st = USC_OK;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				st = pb_walk_message(w, f->descriptor, body, p,
						     depth + 1);
			else if (packable && wt == 2)
				st = pb_walk_packed(w, want, body, p);
			if (st != USC_OK)
				return st;
		}
		w->path[old] = '\0';
	}
	return USC_OK;
}

usc_status usc__pb_unpack(const ProtobufCMessageDescriptor *desc,
			  const void *data, size_t len, const char *name,
			  ProtobufCMessage **out, usc_error *err)
{
	pb_walk w;
	*out = NULL;
	w.name = name ? name : "<input>";
	w.base = data;
	w.err = err;
	snprintf(w.path, sizeof w.path, "%s", desc->short_name);
	const unsigned char *p = data;
	if (len == 0)
		return usc__fail(err, USC_EPARSE,
				 "%s: empty file: expected an XLA %s message",
				 w.name, desc->short_name);
	usc_status st = pb_walk_message(&w, desc, p, p + len, 0);
	if (st != USC_OK)
		return st;
	ProtobufCMessage *m = protobuf_c_message_unpack(desc, &pb_allocator,
							len, data);
	if (!m) {
		/*
		 * The walk accepted the bytes, so what protobuf-c refused is
		 * memory (or a rule the walk does not repeat).
		 */
		return usc__fail(err, USC_ENOMEM,
				 "%s: out of memory reading an XLA %s message",
				 w.name, desc->short_name);
	}
	*out = m;
	return USC_OK;
}

void usc__pb_free(ProtobufCMessage *msg)
{
	if (msg)
		protobuf_c_message_free_unpacked(msg, &pb_allocator);
}

bool usc__pb_first_unknown(const ProtobufCMessage *msg, uint32_t *number)
{
	if (!msg)
		return false;
	for (unsigned i = 0; i < msg->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
		/*
		 * An empty message says nothing a reader could miss: newer
		 * XLA writes some (field 98 of a convolution in jax 0.10.2)
		 * with every field at its default.
		 */
		/* protobuf-c keeps the length prefix with the data. */
		if (u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED &&
		    (u->len == 0 || (u->len == 1 && u->data[0] == 0)))
			continue;
		*number = u->tag;
		return true;
	}
	return false;
}

/* XLA's PrimitiveType enum (xla/xla_data.proto): number, spelling, type. */
static const struct {
	int number;
	const char *name;
	usc_dtype dtype;
} pb_types[] = {
	{0, "PRIMITIVE_TYPE_INVALID", USC_DTYPE_INVALID},
	{1, "PRED", USC_PRED},
	{2, "S8", USC_S8},
	{3, "S16", USC_S16},
	{4, "S32", USC_S32},
	{5, "S64", USC_S64},
	{6, "U8", USC_U8},
	{7, "U16", USC_U16},
	{8, "U32", USC_U32},
	{9, "U64", USC_U64},
	{10, "F16", USC_F16},
	{11, "F32", USC_F32},
	{12, "F64", USC_F64},
	{13, "TUPLE", USC_DTYPE_INVALID},
	{14, "OPAQUE_TYPE", USC_OPAQUE},
	{15, "C64", USC_C64},
	{16, "BF16", USC_BF16},
	{17, "TOKEN", USC_TOKEN},
	{18, "C128", USC_C128},
	{19, "F8E5M2", USC_F8E5M2},
	{20, "F8E4M3FN", USC_F8E4M3FN},
	{21, "S4", USC_S4},
	{22, "U4", USC_U4},
	{23, "F8E4M3B11FNUZ", USC_F8E4M3B11FNUZ},
	{24, "F8E5M2FNUZ", USC_F8E5M2FNUZ},
	{25, "F8E4M3FNUZ", USC_F8E4M3FNUZ},
	{26, "S2", USC_S2},
	{27, "U2", USC_U2},
	{28, "F8E4M3", USC_F8E4M3},
	{29, "F8E3M4", USC_F8E3M4},
	{30, "S1", USC_S1},
	{31, "U1", USC_U1},
	{32, "F4E2M1FN", USC_F4E2M1FN},
	{33, "F8E8M0FNU", USC_F8E8M0FNU},
	{34, "BUFFER", USC_DTYPE_INVALID},
};

usc_dtype usc__pb_dtype(int primitive_type)
{
	for (size_t i = 0; i < USC__ARRAY_LEN(pb_types); i++)
		if (pb_types[i].number == primitive_type)
			return pb_types[i].dtype;
	return USC_DTYPE_INVALID;
}

void usc__pb_type_name(int primitive_type, char *buf, size_t size)
{
	for (size_t i = 0; i < USC__ARRAY_LEN(pb_types); i++)
		if (pb_types[i].number == primitive_type) {
			snprintf(buf, size, "%s", pb_types[i].name);
			return;
		}
	snprintf(buf, size, "element type %d", primitive_type);
}
