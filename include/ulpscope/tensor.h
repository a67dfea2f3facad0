/*
 * ulpscope: tensors and their readers and writers.
 *
 * A usc_tensor is an owned n-dimensional array of one element type.  Its
 * data lie in C (row-major) order, one element per container_bytes of the
 * type (sub-byte types take one byte each, as in numpy and ml_dtypes),
 * little-endian.  Each container holds the format's encoding in its low
 * bits and zeros above them: an s4 of -2 is the byte 0x0e, exactly as
 * ml_dtypes stores it, never the sign-extended 0xfe; a pred is 0 or 1.  A
 * complex element is its real part followed by its imaginary part.
 *
 * The readers take the element type and shape the kernel expects (the
 * HLO parameter's, in a usc_tensor_spec): the HLO type is the truth and a
 * file's own type only has to be compatible with it.  docs/tensors.md
 * states the compatibility rule and every error message.
 */
#ifndef ULPSCOPE_TENSOR_H
#define ULPSCOPE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest rank a tensor may have (numpy's NPY_MAXDIMS). */
#define USC_TENSOR_MAX_RANK 64

/*
 * In usc_tensor_spec.rank: take the shape from the file, whatever it is.
 * Raw files have no shape of their own and refuse it.
 */
#define USC_TENSOR_ANY_SHAPE ((size_t)-1)

/*
 * What a reader expects: an element type and a shape.  dims points at
 * rank sizes the caller keeps alive for the call (an HLO shape's dims do).
 * what, when not NULL, names the expectation in error messages
 * ("parameter 0 of the kernel"); NULL reads "the expected tensor".
 */
typedef struct usc_tensor_spec {
	usc_dtype dtype;
	size_t rank;
	const int64_t *dims;
	const char *what;
} usc_tensor_spec;

typedef struct usc_tensor usc_tensor;

/*
 * Creates a zero-filled tensor.  USC_EINVAL for a type without a
 * container (token, opaque), a rank above USC_TENSOR_MAX_RANK or a
 * negative dimension; USC_ERANGE when the byte size overflows.
 */
usc_status usc_tensor_create(usc_dtype dtype, size_t rank, const int64_t *dims,
			     usc_tensor **out, usc_error *err);

/* Frees a tensor; NULL is allowed. */
void usc_tensor_destroy(usc_tensor *t);

usc_dtype usc_tensor_dtype(const usc_tensor *t);
size_t usc_tensor_rank(const usc_tensor *t);
/* The rank dimension sizes (a valid pointer even at rank 0). */
const int64_t *usc_tensor_dims(const usc_tensor *t);
/* The number of elements: the product of the dims (1 at rank 0). */
uint64_t usc_tensor_count(const usc_tensor *t);
/* The bytes of data: count * container_bytes. */
size_t usc_tensor_nbytes(const usc_tensor *t);
/* The data, laid out as the top of this header says. */
void *usc_tensor_data(usc_tensor *t);
const void *usc_tensor_cdata(const usc_tensor *t);

/* The tensor's type and shape as a spec (what is NULL). */
usc_tensor_spec usc_tensor_spec_of(const usc_tensor *t);

/* True when both have the same type, shape and data bytes. */
bool usc_tensor_equal(const usc_tensor *a, const usc_tensor *b);

/*
 * The encoding of element index (flat, C order) of a non-complex tensor.
 * USC_ERANGE for an index past the end, USC_EINVAL for a complex tensor.
 */
usc_status usc_tensor_get_bits(const usc_tensor *t, uint64_t index,
			       uint64_t *bits);

/*
 * Stores an encoding.  USC_ERANGE for an index past the end or bits
 * above the format's width (a sub-byte encoding must already be in the
 * low bits); USC_EINVAL for a complex tensor.
 */
usc_status usc_tensor_set_bits(usc_tensor *t, uint64_t index, uint64_t bits);

/* The encodings of both parts of a complex element (c64: 32 bits each). */
usc_status usc_tensor_get_complex_bits(const usc_tensor *t, uint64_t index,
				       uint64_t *re, uint64_t *im);

/*
 * The value of an element through usc_decode_double (its status is
 * passed on: USC_ERANGE for a 64-bit integer beyond 2^53, with the
 * nearest double stored).  USC_EINVAL for a complex tensor.
 */
usc_status usc_tensor_get_double(const usc_tensor *t, uint64_t index,
				 double *out);
usc_status usc_tensor_get_complex(const usc_tensor *t, uint64_t index,
				  double *re, double *im);

/*
 * Writes a spec as HLO writes a shape: "f32[4,4]", "pred[]".  With
 * USC_TENSOR_ANY_SHAPE, "f32[...]".  Always NUL-terminates; the result is
 * truncated when size is too small (64 + 21 * rank bytes always suffice).
 */
void usc_tensor_spec_format(const usc_tensor_spec *spec, char *buf,
			    size_t size);

/* ------------------------------------------------------------------ */
/* Readers                                                             */

/*
 * Reads a .npy file (format 1.0, 2.0 or 3.0) as spec says.  The file's
 * descr must be compatible with spec->dtype and its shape must equal
 * spec's exactly; Fortran-order and big-endian data are brought into the
 * layout above.  Every error names the file.
 */
usc_status usc_tensor_read_npy(const char *path, const usc_tensor_spec *spec,
			       usc_tensor **out, usc_error *err);

/* The same from size bytes in memory; name stands for the file in errors. */
usc_status usc_tensor_read_npy_mem(const void *data, size_t size,
				   const char *name,
				   const usc_tensor_spec *spec,
				   usc_tensor **out, usc_error *err);

/*
 * Reads a raw little-endian file laid out as this header says.  Its size
 * must be exactly count * container_bytes of spec.
 */
usc_status usc_tensor_read_raw(const char *path, const usc_tensor_spec *spec,
			       usc_tensor **out, usc_error *err);

/*
 * Reads an HDF5 dataset named "FILE:/path/to/dataset".  The file part is
 * everything before the first ":/" that follows ".h5" or ".hdf5" (any
 * case), else before the last ":/".
 */
usc_status usc_tensor_read_h5(const char *source, const usc_tensor_spec *spec,
			      usc_tensor **out, usc_error *err);

/* The same with the file and the dataset given apart. */
usc_status usc_tensor_read_h5_dataset(const char *path, const char *dataset,
				      const usc_tensor_spec *spec,
				      usc_tensor **out, usc_error *err);

/* Flags of usc_tensor_read. */
enum {
	USC_TENSOR_READ_RAW = 1u << 0 /* a source of no known kind is raw */
};

/*
 * Reads a tensor from a source named the way the command line names it:
 * "FILE.h5:/dataset" or "FILE.hdf5:/dataset" is an HDF5 dataset, a name
 * ending in ".npy" a .npy file, anything else a raw file when flags has
 * USC_TENSOR_READ_RAW and an error otherwise.
 */
usc_status usc_tensor_read(const char *source, const usc_tensor_spec *spec,
			   unsigned flags, usc_tensor **out, usc_error *err);

/* ------------------------------------------------------------------ */
/* Writers                                                             */

/*
 * Writes a .npy file, format 1.0 (2.0 when the header needs it), with the
 * descr numpy and ml_dtypes use: "<f4", "|b1", "<c8"..., "<V2" for bf16
 * and "<V1" for every other type without a numpy descr (fp8, f6, f4,
 * sub-byte integers): np.load(path).view(ml_dtypes.bfloat16) gives the
 * array back.  The file is written under a temporary name and renamed.
 */
usc_status usc_tensor_write_npy(const usc_tensor *t, const char *path,
				usc_error *err);

/* Writes the data alone, as usc_tensor_read_raw reads it. */
usc_status usc_tensor_write_raw(const usc_tensor *t, const char *path,
				usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_TENSOR_H */
