/*
 * LiteralProto -> tensors.
 *
 * XLA serializes a literal as its shape plus one field of values chosen by
 * the element type (xla/xla_data.proto): repeated numbers for pred, 32-
 * and 64-bit integers, f32, f64 and the complex types; a bytes field for
 * everything narrower, one byte per element for 8-bit and sub-byte types
 * and two little-endian bytes for the 16-bit ones.  The values are in the
 * physical order of the shape's layout (minor_to_major: the first
 * dimension listed varies fastest), which this file turns into the C
 * order of a usc_tensor.  A literal that says one thing in its shape and
 * another in its values ("lies") is an error naming the field.
 */
#include "internal.h"

#include <string.h>

#include "tensor/literal_internal.h"
#include "tensor/tensor_internal.h"

/* How a value field stores its elements. */
typedef enum lit_store {
	LIT_BOOLS,
	LIT_BYTES, /* bytes, element_bytes per element, little-endian */
	LIT_S32,
	LIT_S64,
	LIT_U32,
	LIT_U64,
	LIT_F32,
	LIT_F64
} lit_store;

/* One value field of a LiteralProto as this file sees it. */
typedef struct lit_field {
	const char *name;
	usc_dtype dtype;     /* the element type whose values it holds */
	lit_store store;
	size_t count;        /* numbers, or bytes for LIT_BYTES */
	const void *data;
} lit_field;

#define LIT_BYTES_FIELD(member, dt)                                          \
	{#member, dt, LIT_BYTES, m->member.len, m->member.data}
#define LIT_NUM_FIELD(member, dt, st)                                        \
	{#member, dt, st, m->n_##member, m->member}

/* Fills f with every value field of m; returns how many. */
static size_t lit_fields(const Xla__LiteralProto *m, lit_field *f)
{
	const lit_field all[] = {
		LIT_NUM_FIELD(preds, USC_PRED, LIT_BOOLS),
		LIT_BYTES_FIELD(s1s, USC_S1),
		LIT_BYTES_FIELD(s2s, USC_S2),
		LIT_BYTES_FIELD(s4s, USC_S4),
		LIT_BYTES_FIELD(s8s, USC_S8),
		LIT_BYTES_FIELD(u1s, USC_U1),
		LIT_BYTES_FIELD(u2s, USC_U2),
		LIT_BYTES_FIELD(u4s, USC_U4),
		LIT_BYTES_FIELD(u8s, USC_U8),
		LIT_NUM_FIELD(s32s, USC_S32, LIT_S32),
		LIT_NUM_FIELD(s64s, USC_S64, LIT_S64),
		LIT_NUM_FIELD(u32s, USC_U32, LIT_U32),
		LIT_NUM_FIELD(u64s, USC_U64, LIT_U64),
		LIT_NUM_FIELD(f32s, USC_F32, LIT_F32),
		LIT_NUM_FIELD(f64s, USC_F64, LIT_F64),
		LIT_NUM_FIELD(c64s, USC_C64, LIT_F32),
		LIT_NUM_FIELD(c128s, USC_C128, LIT_F64),
		LIT_BYTES_FIELD(f16s, USC_F16),
		LIT_BYTES_FIELD(bf16s, USC_BF16),
		LIT_BYTES_FIELD(u16s, USC_U16),
		LIT_BYTES_FIELD(s16s, USC_S16),
		LIT_BYTES_FIELD(f4e2m1fns, USC_F4E2M1FN),
		LIT_BYTES_FIELD(f8e3m4s, USC_F8E3M4),
		LIT_BYTES_FIELD(f8e4m3b11fnuzs, USC_F8E4M3B11FNUZ),
		LIT_BYTES_FIELD(f8e4m3fns, USC_F8E4M3FN),
		LIT_BYTES_FIELD(f8e4m3fnuzs, USC_F8E4M3FNUZ),
		LIT_BYTES_FIELD(f8e4m3s, USC_F8E4M3),
		LIT_BYTES_FIELD(f8e5m2fnuzs, USC_F8E5M2FNUZ),
		LIT_BYTES_FIELD(f8e5m2s, USC_F8E5M2),
		LIT_BYTES_FIELD(f8e8m0fnus, USC_F8E8M0FNU),
	};
	memcpy(f, all, sizeof all);
	return USC__ARRAY_LEN(all);
}

#define LIT_FIELD_MAX 32

static void lit_shape_text(usc_dtype dt, size_t rank, const int64_t *dims,
			   char *buf, size_t size)
{
	usc_tensor_spec spec = {dt, rank, dims, NULL};
	usc_tensor_spec_format(&spec, buf, size);
}

void usc__literal_clear(usc_literal *l)
{
	if (!l)
		return;
	usc_tensor_destroy(l->tensor);
	for (size_t i = 0; i < l->tuple_count; i++)
		usc__literal_clear(&l->tuple[i]);
	usc__free(l->tuple);
	memset(l, 0, sizeof *l);
}

/*
 * Checks that layout is a permutation of the rank dimensions (or absent,
 * which XLA reads as the default, row-major) and copies it to mtm.
 */
static usc_status lit_layout(const Xla__ShapeProto *s, const char *file,
			     const char *path, int64_t *mtm, usc_error *err)
{
	size_t rank = s->n_dimensions;
	const Xla__LayoutProto *lay = s->layout;
	for (size_t i = 0; i < rank; i++)
		mtm[i] = (int64_t)(rank - 1 - i);
	if (!lay || lay->n_minor_to_major == 0)
		return USC_OK;
	if (lay->n_tiles > 0)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s.shape.layout: a tiled layout (%zu "
				 "tiles); ulpscope reads literals in plain "
				 "minor_to_major layouts only",
				 file, path, lay->n_tiles);
	if (lay->n_minor_to_major != rank)
		return usc__fail(err, USC_EPARSE,
				 "%s: %s.shape.layout.minor_to_major: %zu "
				 "entries for a shape of rank %zu",
				 file, path, lay->n_minor_to_major, rank);
	bool seen[USC_TENSOR_MAX_RANK] = {false};
	for (size_t i = 0; i < rank; i++) {
		int64_t d = lay->minor_to_major[i];
		if (d < 0 || (uint64_t)d >= rank || seen[d])
			return usc__fail(err, USC_EPARSE,
					 "%s: %s.shape.layout.minor_to_major: "
					 "entry %zu is %lld; expected a "
					 "permutation of 0..%zu",
					 file, path, i, (long long)d, rank - 1);
		seen[d] = true;
		mtm[i] = d;
	}
	return USC_OK;
}

/* Stores element number `phys` (physical order) read from the field. */
static usc_status lit_store_one(const lit_field *f, usc_dtype dt,
				size_t phys, unsigned char *dst,
				size_t cbytes, const char *file,
				const char *path, usc_error *err)
{
	const usc_format *fmt = usc_format_of(dt);
	unsigned bits = fmt->bits;
	switch (f->store) {
	case LIT_BOOLS:
		dst[0] = ((const protobuf_c_boolean *)f->data)[phys] ? 1 : 0;
		return USC_OK;
	case LIT_BYTES: {
		const unsigned char *src =
			(const unsigned char *)f->data + phys * cbytes;
		if (bits >= 8) {
			memcpy(dst, src, cbytes);
			return USC_OK;
		}
		/*
		 * A sub-byte element takes a byte.  Its encoding is in the
		 * low bits; the rest must be zeros, or for a signed integer
		 * the copies of its sign bit that a C int8 holds.
		 */
		unsigned mask = (1u << bits) - 1u;
		unsigned b = src[0], low = b & mask;
		bool sext = fmt->kind == USC_KIND_SINT &&
			    (low >> (bits - 1)) && b == ((low | ~mask) & 0xffu);
		if (b != low && !sext)
			return usc__fail(err, USC_EPARSE,
					 "%s: %s.%s: byte %zu is 0x%02x, which "
					 "is not a %s encoding (%u bits)",
					 file, path, f->name, phys, b,
					 usc_dtype_name(dt), bits);
		dst[0] = (unsigned char)low;
		return USC_OK;
	}
	case LIT_S32: {
		int32_t v = ((const int32_t *)f->data)[phys];
		memcpy(dst, &v, 4);
		return USC_OK;
	}
	case LIT_U32: {
		uint32_t v = ((const uint32_t *)f->data)[phys];
		memcpy(dst, &v, 4);
		return USC_OK;
	}
	case LIT_S64: {
		int64_t v = ((const int64_t *)f->data)[phys];
		memcpy(dst, &v, 8);
		return USC_OK;
	}
	case LIT_U64: {
		uint64_t v = ((const uint64_t *)f->data)[phys];
		memcpy(dst, &v, 8);
		return USC_OK;
	}
	case LIT_F32: {
		/* Complex c64: two floats per element, real first. */
		size_t per = cbytes / 4;
		memcpy(dst, (const float *)f->data + phys * per, cbytes);
		return USC_OK;
	}
	case LIT_F64: {
		size_t per = cbytes / 8;
		memcpy(dst, (const double *)f->data + phys * per, cbytes);
		return USC_OK;
	}
	}
	return USC_EINTERNAL;
}

static usc_status lit_array(const Xla__LiteralProto *m, usc_dtype dt,
			    const char *file, const char *path,
			    usc_literal *out, usc_error *err)
{
	const Xla__ShapeProto *s = m->shape;
	size_t rank = s->n_dimensions;
	char shape[256];
	if (rank > USC_TENSOR_MAX_RANK)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s.shape.dimensions: rank %zu is above "
				 "ulpscope's limit of %d",
				 file, path, rank, USC_TENSOR_MAX_RANK);
	for (size_t i = 0; i < rank; i++)
		if (s->dimensions[i] < 0)
			return usc__fail(err, USC_EPARSE,
					 "%s: %s.shape.dimensions: dimension "
					 "%zu is %lld; expected a size >= 0",
					 file, path, i,
					 (long long)s->dimensions[i]);
	for (size_t i = 0; i < s->n_is_dynamic_dimension; i++)
		if (s->is_dynamic_dimension[i])
			return usc__fail(err, USC_EUNSUPPORTED,
					 "%s: %s.shape.is_dynamic_dimension: "
					 "dimension %zu is dynamic; ulpscope "
					 "reads static shapes only",
					 file, path, i);
	lit_shape_text(dt, rank, s->dimensions, shape, sizeof shape);
	int64_t mtm[USC_TENSOR_MAX_RANK];
	usc_status st = lit_layout(s, file, path, mtm, err);
	if (st != USC_OK)
		return st;
	uint64_t count;
	size_t nbytes;
	size_t cbytes = usc_format_of(dt)->container_bytes;
	if (!usc__shape_size(rank, s->dimensions, cbytes, &count, &nbytes))
		return usc__fail(err, USC_ERANGE,
				 "%s: %s.shape: %s is too large", file, path,
				 shape);

	/* Exactly one value field may hold values: the element type's. */
	lit_field fields[LIT_FIELD_MAX];
	size_t nf = lit_fields(m, fields);
	const lit_field *mine = NULL;
	for (size_t i = 0; i < nf; i++) {
		if (fields[i].dtype == dt) {
			mine = &fields[i];
			continue;
		}
		if (fields[i].count > 0)
			return usc__fail(err, USC_EPARSE,
					 "%s: %s.%s holds values, but the "
					 "shape says %s (values belong in %s)",
					 file, path, fields[i].name, shape,
					 usc_dtype_name(dt));
	}
	if (m->n_sparse_indices > 0)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s.sparse_indices: sparse literals are "
				 "not supported", file, path);
	if (!mine)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s.shape: element type %s has no value "
				 "field in XLA's LiteralProto",
				 file, path, usc_dtype_name(dt));
	/* How many numbers (or bytes) the field must hold. */
	uint64_t want = count;
	if (mine->store == LIT_BYTES)
		want = count * (cbytes);
	else if (usc_format_of(dt)->kind == USC_KIND_COMPLEX)
		want = count * 2;
	if (mine->count != want)
		return usc__fail(err, USC_EPARSE,
				 "%s: %s.%s: %zu %s for %s, which needs "
				 "%llu (%llu elements)",
				 file, path, mine->name, mine->count,
				 mine->store == LIT_BYTES ? "bytes" : "values",
				 shape, (unsigned long long)want,
				 (unsigned long long)count);

	usc_tensor *t = NULL;
	st = usc__tensor_new(dt, rank, s->dimensions, file, &t, err);
	if (st != USC_OK)
		return st;
	/* Row-major strides of the tensor, in elements. */
	uint64_t stride[USC_TENSOR_MAX_RANK];
	uint64_t idx[USC_TENSOR_MAX_RANK] = {0};
	for (size_t d = rank; d-- > 0;)
		stride[d] = d + 1 == rank ? 1
					  : stride[d + 1] *
						    (uint64_t)s->dimensions[d + 1];
	uint64_t off = 0;
	for (uint64_t p = 0; p < count; p++) {
		st = lit_store_one(mine, dt, (size_t)p,
				   t->data + off * cbytes, cbytes, file, path,
				   err);
		if (st != USC_OK) {
			usc_tensor_destroy(t);
			return st;
		}
		/* The next physical element: minor_to_major[0] moves first. */
		for (size_t k = 0; k < rank; k++) {
			size_t d = (size_t)mtm[k];
			if (++idx[d] < (uint64_t)s->dimensions[d]) {
				off += stride[d];
				break;
			}
			off -= stride[d] * (idx[d] - 1);
			idx[d] = 0;
		}
	}
	out->is_tuple = false;
	out->tensor = t;
	return USC_OK;
}

static usc_status lit_convert(const Xla__LiteralProto *m, const char *file,
			      const char *path, unsigned depth,
			      usc_literal *out, usc_error *err)
{
	memset(out, 0, sizeof *out);
	if (!m->shape)
		return usc__fail(err, USC_EPARSE,
				 "%s: %s.shape: missing; a literal needs its "
				 "shape", file, path);
	if (depth > USC__PB_MAX_DEPTH)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s: tuples nested deeper than %d",
				 file, path, USC__PB_MAX_DEPTH);
	int et = m->shape->element_type;
	if (et == USC__PB_TUPLE) {
		size_t n = m->n_tuple_literals;
		if (m->shape->n_tuple_shapes != n)
			return usc__fail(err, USC_EPARSE,
					 "%s: %s.tuple_literals: %zu elements "
					 "for a tuple shape of %zu",
					 file, path, n,
					 m->shape->n_tuple_shapes);
		out->is_tuple = true;
		out->tuple = usc__calloc(n ? n : 1, sizeof *out->tuple);
		if (!out->tuple)
			return usc__fail(err, USC_ENOMEM, "%s: out of memory",
					 file);
		for (size_t i = 0; i < n; i++) {
			/*
			 * Paths are short in practice; a hostile nesting
			 * only loses the end of its message.
			 */
			char sub[600];
			int w = snprintf(sub, sizeof sub, "%.500s.tuple_literals[%zu]",
				 path, i);
			(void)w;
			usc_status st = lit_convert(m->tuple_literals[i], file,
						    sub, depth + 1,
						    &out->tuple[i], err);
			out->tuple_count = i + 1;
			if (st != USC_OK) {
				usc__literal_clear(out);
				return st;
			}
			const Xla__ShapeProto *ts = m->shape->tuple_shapes[i];
			const Xla__ShapeProto *es = m->tuple_literals[i]->shape;
			if (ts->element_type != es->element_type ||
			    ts->n_dimensions != es->n_dimensions ||
			    (ts->n_dimensions &&
			     memcmp(ts->dimensions, es->dimensions,
				    ts->n_dimensions * sizeof(int64_t)))) {
				usc__literal_clear(out);
				return usc__fail(err, USC_EPARSE,
						 "%s: %s.shape: differs from "
						 "%s.shape.tuple_shapes[%zu]",
						 file, sub, path, i);
			}
		}
		return USC_OK;
	}
	usc_dtype dt = usc__pb_dtype(et);
	if (dt == USC_DTYPE_INVALID || usc_format_of(dt)->container_bytes == 0) {
		char name[48];
		usc__pb_type_name(et, name, sizeof name);
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: %s.shape.element_type: %s has no values "
				 "ulpscope reads", file, path, name);
	}
	if (m->n_tuple_literals > 0)
		return usc__fail(err, USC_EPARSE,
				 "%s: %s.tuple_literals: present, but the "
				 "shape is an array of %s", file, path,
				 usc_dtype_name(dt));
	return lit_array(m, dt, file, path, out, err);
}

usc_status usc__literal_from_pb(const Xla__LiteralProto *m, const char *file,
				const char *path, usc_literal *out,
				usc_error *err)
{
	return lit_convert(m, file, path, 0, out, err);
}

usc_status usc_literal_read_pb_mem(const void *data, size_t size,
				   const char *name, usc_literal **out,
				   usc_error *err)
{
	ProtobufCMessage *msg = NULL;
	*out = NULL;
	if (!name)
		name = "<input>";
	usc_status st = usc__pb_unpack(&xla__literal_proto__descriptor, data,
				       size, name, &msg, err);
	if (st != USC_OK)
		return st;
	usc_literal *l = usc__calloc(1, sizeof *l);
	if (!l) {
		usc__pb_free(msg);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", name);
	}
	st = usc__literal_from_pb((const Xla__LiteralProto *)msg, name,
				  "LiteralProto", l, err);
	usc__pb_free(msg);
	if (st != USC_OK) {
		usc__free(l);
		return st;
	}
	*out = l;
	return USC_OK;
}

usc_status usc_literal_read_pb(const char *path, usc_literal **out,
			       usc_error *err)
{
	char *data = NULL;
	size_t len = 0;
	*out = NULL;
	usc_status st = usc__read_file(path, &data, &len, err);
	if (st != USC_OK)
		return st;
	st = usc_literal_read_pb_mem(data, len, path, out, err);
	usc__free(data);
	return st;
}

void usc_literal_destroy(usc_literal *l)
{
	if (!l)
		return;
	usc__literal_clear(l);
	usc__free(l);
}

bool usc_literal_is_tuple(const usc_literal *l)
{
	return l->is_tuple;
}

const usc_tensor *usc_literal_tensor(const usc_literal *l)
{
	return l->is_tuple ? NULL : l->tensor;
}

size_t usc_literal_tuple_count(const usc_literal *l)
{
	return l->is_tuple ? l->tuple_count : 0;
}

const usc_literal *usc_literal_tuple_element(const usc_literal *l, size_t i)
{
	return l->is_tuple && i < l->tuple_count ? &l->tuple[i] : NULL;
}

size_t usc_literal_leaf_count(const usc_literal *l)
{
	if (!l->is_tuple)
		return 1;
	size_t n = 0;
	for (size_t i = 0; i < l->tuple_count; i++)
		n += usc_literal_leaf_count(&l->tuple[i]);
	return n;
}

const usc_tensor *usc_literal_leaf(const usc_literal *l, size_t i)
{
	if (!l->is_tuple)
		return i == 0 ? l->tensor : NULL;
	for (size_t k = 0; k < l->tuple_count; k++) {
		size_t n = usc_literal_leaf_count(&l->tuple[k]);
		if (i < n)
			return usc_literal_leaf(&l->tuple[k], i);
		i -= n;
	}
	return NULL;
}
