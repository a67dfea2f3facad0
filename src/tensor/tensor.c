/*
 * The tensor: creation, accessors, the canonical layout, and the one
 * compatibility rule every reader applies between a file's element type
 * and the type the kernel expects.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tensor/tensor_internal.h"
#include "ulpscope/limits.h"

bool usc__shape_size(size_t rank, const int64_t *dims, size_t elem_bytes,
		     uint64_t *count, size_t *nbytes)
{
	uint64_t n = 1;
	bool zero = false;

	/*
	 * A zero dimension makes the array empty whatever the others are,
	 * but numpy still refuses a shape whose product overflows, so the
	 * product of the non-zero dimensions must fit as well.
	 */
	for (size_t i = 0; i < rank; i++) {
		uint64_t d = (uint64_t)dims[i];

		if (d == 0) {
			zero = true;
			continue;
		}
		if (n > UINT64_MAX / d)
			return false;
		n *= d;
	}
	if (elem_bytes && n > SIZE_MAX / elem_bytes)
		return false;
	if (zero)
		n = 0;
	*count = n;
	*nbytes = (size_t)n * elem_bytes;
	return true;
}

usc_status usc__tensor_new(usc_dtype dtype, size_t rank, const int64_t *dims,
			   const char *name, usc_tensor **out, usc_error *err)
{
	const usc_format *f = usc_format_of(dtype);
	usc_tensor *t;
	char shape[64];
	uint64_t count;

	*out = NULL;
	if (!usc__shape_size(rank, dims, (size_t)f->container_bytes, &count,
			     &(size_t){0})) {
		usc__format_tuple(shape, sizeof shape, rank, dims);
		return usc__fail(err, USC_ERANGE, "%s: shape %s is too large",
				 name, shape);
	}
	/*
	 * Every reader makes its tensor here, after the file's header and
	 * size are checked and before its data is read: one place for the
	 * limit (include/ulpscope/limits.h).
	 */
	if (count > usc_limits_get().max_elements) {
		usc__format_tuple(shape, sizeof shape, rank, dims);
		return usc__fail(err, USC_ERANGE,
				 "%s: shape %s has %" PRIu64 " elements, more "
				 "than the limit of %" PRIu64 " on one tensor "
				 "(raise it with --max-elements, or "
				 "usc_limits_set; docs/limits.md)",
				 name, shape, count,
				 usc_limits_get().max_elements);
	}
	t = usc__calloc(1, sizeof *t);
	if (!t)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", name);
	t->dtype = dtype;
	t->rank = rank;
	t->dims = usc__calloc(rank ? rank : 1, sizeof *t->dims);
	if (!t->dims) {
		usc__free(t);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", name);
	}
	if (rank)
		memcpy(t->dims, dims, rank * sizeof *dims);
	usc__shape_size(rank, dims, (size_t)f->container_bytes, &t->count,
			&t->nbytes);
	t->data = usc__malloc(t->nbytes);
	if (!t->data) {
		size_t nbytes = t->nbytes;

		usc_tensor_destroy(t);
		return usc__fail(err, USC_ENOMEM,
				 "%s: out of memory for %zu bytes of data",
				 name, nbytes);
	}
	*out = t;
	return USC_OK;
}

usc_status usc_tensor_create(usc_dtype dtype, size_t rank, const int64_t *dims,
			     usc_tensor **out, usc_error *err)
{
	const usc_format *f = usc_format_of(dtype);
	usc_status st;

	if (!out)
		return usc__fail(err, USC_EINVAL, "usc_tensor_create: out is NULL");
	*out = NULL;
	if (!f || f->container_bytes == 0)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_create: type %s has no elements",
				 usc_dtype_name(dtype));
	if (rank > USC_TENSOR_MAX_RANK)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_create: rank %zu is above %d",
				 rank, USC_TENSOR_MAX_RANK);
	if (rank && !dims)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_create: dims is NULL");
	for (size_t i = 0; i < rank; i++)
		if (dims[i] < 0)
			return usc__fail(err, USC_EINVAL,
					 "usc_tensor_create: dimension %zu is "
					 "negative (%" PRId64 ")",
					 i, dims[i]);
	st = usc__tensor_new(dtype, rank, dims, "usc_tensor_create", out, err);
	if (st == USC_OK)
		memset((*out)->data, 0, (*out)->nbytes);
	return st;
}

void usc_tensor_destroy(usc_tensor *t)
{
	if (!t)
		return;
	usc__free(t->data);
	usc__free(t->dims);
	usc__free(t);
}

usc_dtype usc_tensor_dtype(const usc_tensor *t)
{
	return t->dtype;
}

size_t usc_tensor_rank(const usc_tensor *t)
{
	return t->rank;
}

const int64_t *usc_tensor_dims(const usc_tensor *t)
{
	return t->dims;
}

uint64_t usc_tensor_count(const usc_tensor *t)
{
	return t->count;
}

size_t usc_tensor_nbytes(const usc_tensor *t)
{
	return t->nbytes;
}

void *usc_tensor_data(usc_tensor *t)
{
	return t->data;
}

const void *usc_tensor_cdata(const usc_tensor *t)
{
	return t->data;
}

usc_tensor_spec usc_tensor_spec_of(const usc_tensor *t)
{
	usc_tensor_spec s = {t->dtype, t->rank, t->dims, NULL};

	return s;
}

bool usc_tensor_equal(const usc_tensor *a, const usc_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	if (a->rank && memcmp(a->dims, b->dims, a->rank * sizeof *a->dims))
		return false;
	return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

/* Little-endian load and store of n <= 8 bytes. */
static uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static void store_le(unsigned char *p, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

usc_status usc_tensor_get_bits(const usc_tensor *t, uint64_t index,
			       uint64_t *bits)
{
	const usc_format *f = usc_format_of(t->dtype);

	if (f->kind == USC_KIND_COMPLEX)
		return USC_EINVAL;
	if (index >= t->count)
		return USC_ERANGE;
	*bits = load_le(t->data + index * (size_t)f->container_bytes,
			(size_t)f->container_bytes);
	return USC_OK;
}

usc_status usc_tensor_set_bits(usc_tensor *t, uint64_t index, uint64_t bits)
{
	const usc_format *f = usc_format_of(t->dtype);

	if (f->kind == USC_KIND_COMPLEX)
		return USC_EINVAL;
	if (index >= t->count || (f->bits < 64 && bits >> f->bits))
		return USC_ERANGE;
	store_le(t->data + index * (size_t)f->container_bytes,
		 (size_t)f->container_bytes, bits);
	return USC_OK;
}

usc_status usc_tensor_get_complex_bits(const usc_tensor *t, uint64_t index,
				       uint64_t *re, uint64_t *im)
{
	const usc_format *f = usc_format_of(t->dtype);
	size_t half = (size_t)f->container_bytes / 2;
	const unsigned char *p;

	if (f->kind != USC_KIND_COMPLEX)
		return USC_EINVAL;
	if (index >= t->count)
		return USC_ERANGE;
	p = t->data + index * (size_t)f->container_bytes;
	*re = load_le(p, half);
	*im = load_le(p + half, half);
	return USC_OK;
}

usc_status usc_tensor_get_double(const usc_tensor *t, uint64_t index,
				 double *out)
{
	uint64_t bits;
	usc_status st = usc_tensor_get_bits(t, index, &bits);

	if (st != USC_OK)
		return st;
	return usc_decode_double(t->dtype, bits, out);
}

usc_status usc_tensor_get_complex(const usc_tensor *t, uint64_t index,
				  double *re, double *im)
{
	uint64_t rb, ib;
	usc_dtype part = t->dtype == USC_C64 ? USC_F32 : USC_F64;
	usc_status st = usc_tensor_get_complex_bits(t, index, &rb, &ib);

	if (st != USC_OK)
		return st;
	usc_decode_double(part, rb, re);
	usc_decode_double(part, ib, im);
	return USC_OK;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/* Appends to buf at *len, keeping it NUL-terminated and in bounds. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
	USC__PRINTF(4, 5);

static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*len = (size_t)n >= size - *len ? size - 1 : *len + (size_t)n;
}

void usc__format_tuple(char *buf, size_t size, size_t rank,
		       const int64_t *dims)
{
	size_t len = 0;

	if (!size)
		return;
	buf[0] = '\0';
	append(buf, size, &len, "(");
	for (size_t i = 0; i < rank; i++)
		append(buf, size, &len, "%s%" PRId64, i ? ", " : "", dims[i]);
	append(buf, size, &len, rank == 1 ? ",)" : ")");
}

void usc_tensor_spec_format(const usc_tensor_spec *spec, char *buf,
			    size_t size)
{
	size_t len = 0;

	if (!size)
		return;
	buf[0] = '\0';
	append(buf, size, &len, "%s[", usc_dtype_name(spec->dtype));
	if (spec->rank == USC_TENSOR_ANY_SHAPE)
		append(buf, size, &len, "...");
	else
		for (size_t i = 0; i < spec->rank; i++)
			append(buf, size, &len, "%s%" PRId64, i ? "," : "",
			       spec->dims[i]);
	append(buf, size, &len, "]");
}

void usc__format_expected(char *buf, size_t size, const usc_tensor_spec *spec)
{
	size_t len = 0;

	if (!size)
		return;
	buf[0] = '\0';
	append(buf, size, &len, "%s, ",
	       spec->what ? spec->what : "the expected tensor");
	usc_tensor_spec_format(spec, buf + len, size - len);
}

usc_status usc__check_shape(const char *name, const usc_tensor_spec *spec,
			    size_t rank, const int64_t *dims, usc_error *err)
{
	char found[USC_ERROR_MESSAGE_SIZE / 2];
	char expected[USC_ERROR_MESSAGE_SIZE / 2];

	if (spec->rank == USC_TENSOR_ANY_SHAPE)
		return USC_OK;
	if (rank == spec->rank &&
	    (rank == 0 || memcmp(dims, spec->dims, rank * sizeof *dims) == 0))
		return USC_OK;
	usc__format_tuple(found, sizeof found, rank, dims);
	usc__format_expected(expected, sizeof expected, spec);
	return usc__fail(err, USC_EINVAL, "%s: shape %s does not match %s",
			 name, found, expected);
}

usc_status usc__check_spec(const usc_tensor_spec *spec, bool any_shape_ok,
			   usc_error *err)
{
	const usc_format *f;

	if (!spec)
		return usc__fail(err, USC_EINVAL, "tensor reader: spec is NULL");
	f = usc_format_of(spec->dtype);
	if (!f || f->container_bytes == 0)
		return usc__fail(err, USC_EINVAL,
				 "tensor reader: type %s has no elements",
				 usc_dtype_name(spec->dtype));
	if (spec->rank == USC_TENSOR_ANY_SHAPE) {
		if (!any_shape_ok)
			return usc__fail(err, USC_EINVAL,
					 "tensor reader: a raw file needs a "
					 "shape");
		return USC_OK;
	}
	if (spec->rank > USC_TENSOR_MAX_RANK)
		return usc__fail(err, USC_EINVAL,
				 "tensor reader: rank %zu is above %d",
				 spec->rank, USC_TENSOR_MAX_RANK);
	if (spec->rank && !spec->dims)
		return usc__fail(err, USC_EINVAL, "tensor reader: dims is NULL");
	for (size_t i = 0; i < spec->rank; i++)
		if (spec->dims[i] < 0)
			return usc__fail(err, USC_EINVAL,
					 "tensor reader: dimension %zu is "
					 "negative (%" PRId64 ")",
					 i, spec->dims[i]);
	return USC_OK;
}

usc_status usc__reader_begin(const usc_tensor_spec *spec, usc_tensor **out,
			     bool any_shape_ok, usc_error *err)
{
	if (!out)
		return usc__fail(err, USC_EINVAL, "tensor reader: out is NULL");
	*out = NULL;
	return usc__check_spec(spec, any_shape_ok, err);
}

/* ------------------------------------------------------------------ */
/* The compatibility rule                                              */

usc_status usc__check_elem(const char *name, const usc__file_elem *fe,
			   const usc_tensor_spec *spec, usc_error *err)
{
	const usc_format *f = usc_format_of(spec->dtype);
	char expected[USC_ERROR_MESSAGE_SIZE / 2];
	const char *why = NULL;

	/*
	 * The rule: sizes always match; a file type with a meaning of its
	 * own (float, complex, bool) must mean the expected type exactly;
	 * bits without a float meaning (integers, void, opaque) are taken
	 * as the expected type's encodings.  A float16 file for a bf16
	 * parameter is therefore refused, while a uint16 one is accepted.
	 */
	if (fe->size != (size_t)f->container_bytes) {
		why = "element sizes differ";
	} else {
		switch (fe->cls) {
		case USC__ELEM_BOOL:
			if (f->kind != USC_KIND_PRED)
				why = "a bool file holds pred only";
			break;
		case USC__ELEM_FLOAT:
			if (f->kind != USC_KIND_FLOAT)
				why = "a float file cannot hold a non-float "
				      "type";
			else if (fe->floating != spec->dtype)
				why = "a float file must hold the same float "
				      "type";
			break;
		case USC__ELEM_COMPLEX:
			if (f->kind != USC_KIND_COMPLEX)
				why = "a complex file holds complex types only";
			else if (fe->floating != spec->dtype)
				why = "a complex file must hold the same "
				      "complex type";
			break;
		case USC__ELEM_INT:
		case USC__ELEM_RAW:
			break;
		}
	}
	if (!why)
		return USC_OK;
	usc__format_expected(expected, sizeof expected, spec);
	if (fe->size != (size_t)f->container_bytes)
		return usc__fail(err, USC_EINVAL,
				 "%s: dtype %s does not match %s: %s (%zu "
				 "bytes vs %d)",
				 name, fe->text, expected, why, fe->size,
				 f->container_bytes);
	return usc__fail(err, USC_EINVAL, "%s: dtype %s does not match %s: %s",
			 name, fe->text, expected, why);
}

/* Reverses each unit-byte group of n bytes. */
static void byteswap(unsigned char *p, size_t n, size_t unit)
{
	if (unit < 2)
		return;
	for (size_t i = 0; i + unit <= n; i += unit)
		for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
			unsigned char c = p[a];

			p[a] = p[b];
			p[b] = c;
		}
}

usc_status usc__tensor_canonicalize(usc_tensor *t, bool big_endian,
				    const char *name, usc_error *err)
{
	const usc_format *f = usc_format_of(t->dtype);
	size_t cb = (size_t)f->container_bytes;
	unsigned w = (unsigned)f->bits;

	if (big_endian)
		byteswap(t->data, t->nbytes,
			 f->kind == USC_KIND_COMPLEX ? cb / 2 : cb);
	if (cb != 1 || w >= 8)
		return USC_OK;
	/*
	 * A type narrower than its byte: ml_dtypes keeps the encoding in
	 * the low bits with zeros above.  A signed integer file (int8 values
	 * -8..7 for s4) arrives sign-extended; both are accepted and stored
	 * the ml_dtypes way.  Any other high bit means the file does not
	 * hold this type, and guessing would hide that.
	 */
	for (uint64_t i = 0; i < t->count; i++) {
		unsigned v = t->data[i];
		unsigned high = v >> w;
		bool sign = (v >> (w - 1)) & 1;

		if (high == 0)
			continue;
		if (f->kind == USC_KIND_SINT && sign && high == (0xffu >> w)) {
			t->data[i] = (unsigned char)(v & ((1u << w) - 1));
			continue;
		}
		return usc__fail(err, USC_EINVAL,
				 "%s: element %" PRIu64 " holds 0x%02x, which "
				 "is not an encoding of %s",
				 name, i, v, f->name);
	}
	return USC_OK;
}
