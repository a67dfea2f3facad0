/*
 * Literals from XLA's LiteralProto (src/tensor/literal_pb.c), shared with
 * the snapshot reader (src/tensor/snapshot.c).
 */
#ifndef USC_LITERAL_INTERNAL_H
#define USC_LITERAL_INTERNAL_H

#include "ulpscope/xla_proto.h"

#include "proto/pb_door.h"

struct usc_literal {
	bool is_tuple;
	usc_tensor *tensor;  /* an array: its data in C order */
	size_t tuple_count;  /* a tuple: its elements */
	usc_literal *tuple;
};

/*
 * Converts a LiteralProto (m, never NULL) into *out (filled in place;
 * freed with usc__literal_clear).  file and path ("HloSnapshot.result")
 * name it in messages.
 */
usc_status usc__literal_from_pb(const Xla__LiteralProto *m, const char *file,
				const char *path, usc_literal *out,
				usc_error *err);
void usc__literal_clear(usc_literal *l);

#endif /* USC_LITERAL_INTERNAL_H */
