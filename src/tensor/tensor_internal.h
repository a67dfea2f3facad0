/*
 * Internals shared by the tensor readers and writers: the tensor itself,
 * the formatting of shapes for messages, and the one compatibility rule
 * between a file's element type and the type the kernel expects.
 */
#ifndef USC_TENSOR_INTERNAL_H
#define USC_TENSOR_INTERNAL_H

#include "ulpscope/tensor.h"

struct usc_tensor {
	usc_dtype dtype;
	size_t rank;
	int64_t *dims; /* never NULL, even at rank 0 */
	uint64_t count;
	size_t nbytes;
	unsigned char *data;
};

/*
 * The class of a file's element type, as far as the compatibility rule
 * cares.  INT and RAW both mean bits without a float meaning: signed,
 * unsigned, void or opaque.
 */
typedef enum usc__elem_class {
	USC__ELEM_BOOL,
	USC__ELEM_INT,
	USC__ELEM_RAW,
	USC__ELEM_FLOAT,
	USC__ELEM_COMPLEX
} usc__elem_class;

/* A file's element type. */
typedef struct usc__file_elem {
	usc__elem_class cls;
	size_t size;        /* bytes per element in the file */
	usc_dtype floating; /* FLOAT, COMPLEX: the type it is; INVALID if none */
	bool big_endian;
	const char *text;   /* as the file spells it, for messages */
} usc__file_elem;

/*
 * Allocates a tensor of a type with a container, rank dims (all >= 0)
 * with an uninitialised buffer.  name prefixes the messages.
 */
usc_status usc__tensor_new(usc_dtype dtype, size_t rank, const int64_t *dims,
			   const char *name, usc_tensor **out, usc_error *err);

/*
 * The element count and byte size of a shape, overflow checked: false
 * when either overflows (count above UINT64_MAX, bytes above SIZE_MAX).
 */
bool usc__shape_size(size_t rank, const int64_t *dims, size_t elem_bytes,
		     uint64_t *count, size_t *nbytes);

/* "(4, 3)", "(4,)", "()": a shape as numpy writes it. */
void usc__format_tuple(char *buf, size_t size, size_t rank,
		       const int64_t *dims);

/* "parameter 0 of the kernel, f32[4,4]" or "the expected tensor, f32[4,4]". */
void usc__format_expected(char *buf, size_t size, const usc_tensor_spec *spec);

/*
 * Checks a file's shape against spec: USC_EINVAL with
 * "NAME: shape (4, 3) does not match EXPECTED" when they differ.
 */
usc_status usc__check_shape(const char *name, const usc_tensor_spec *spec,
			    size_t rank, const int64_t *dims, usc_error *err);

/* The compatibility rule (docs/tensors.md); USC_EINVAL on a mismatch. */
usc_status usc__check_elem(const char *name, const usc__file_elem *fe,
			   const usc_tensor_spec *spec, usc_error *err);

/* Checks that spec is usable at all (a type with a container, a rank). */
usc_status usc__check_spec(const usc_tensor_spec *spec, bool any_shape_ok,
			   usc_error *err);

/*
 * Brings freshly read data into the canonical layout: byte-swaps each
 * scalar when the file was big-endian, then checks every container of a
 * type narrower than its container (pred, sub-byte types) and clears its
 * high bits: zero high bits are kept, a sign extension of a signed type
 * is cleared, anything else is an error naming the element.
 */
usc_status usc__tensor_canonicalize(usc_tensor *t, bool big_endian,
				    const char *name, usc_error *err);

/* Validates a spec and the reader's out-parameter, then clears *out. */
usc_status usc__reader_begin(const usc_tensor_spec *spec, usc_tensor **out,
			     bool any_shape_ok, usc_error *err);

#endif /* USC_TENSOR_INTERNAL_H */
