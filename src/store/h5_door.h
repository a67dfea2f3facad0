/*
 * The door to HDF5: the only part of ulpscope that includes <hdf5.h>.
 *
 * Every function here silences HDF5's automatic printing of its error
 * stack for the duration of the call and turns a failure into a usc_error
 * whose message names the file (and dataset) and ends with HDF5's own
 * innermost description.  Handles are opaque so that hid_t never leaks
 * into the rest of the code.  The tensor readers use the read side now; the
 * result-file writer builds on the write side.
 */
#ifndef USC_STORE_H5_DOOR_H
#define USC_STORE_H5_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"

typedef struct usc__h5_file usc__h5_file;
typedef struct usc__h5_dataset usc__h5_dataset;

/* The class of a dataset's element type, as far as ulpscope cares. */
typedef enum usc__h5_class {
	USC__H5_INTEGER,
	USC__H5_FLOAT,
	USC__H5_OPAQUE,   /* opaque and bitfield: bits without a meaning */
	USC__H5_BOOL,     /* a one-byte enum of two members, as h5py writes */
	USC__H5_ENUM,     /* any other enum: its integer bits */
	USC__H5_COMPLEX,  /* a compound of two equal floats, as h5py writes */
	USC__H5_OTHER     /* strings, references, variable length... */
} usc__h5_class;

/* A dataset's element type. */
typedef struct usc__h5_type {
	usc__h5_class cls;
	size_t size; /* bytes per element */
	bool is_signed;
	bool big_endian;
	/* FLOAT, and each part of COMPLEX: the bit fields of the format. */
	size_t precision, sign_pos, exp_pos, exp_bits, man_pos, man_bits;
	size_t exp_bias;
	char text[96]; /* a description for messages */
} usc__h5_type;

/*
 * Opens a file for reading: USC_ENOTFOUND when it does not exist,
 * USC_EPARSE when it is not HDF5, USC_EIO when HDF5 cannot open it.
 */
usc_status usc__h5_file_open_read(const char *path, usc__h5_file **out,
				  usc_error *err);

/* Creates (truncates) a file for writing. */
usc_status usc__h5_file_create(const char *path, usc__h5_file **out,
			       usc_error *err);

/* Closes a file (NULL allowed); USC_EIO when HDF5 fails to flush it. */
usc_status usc__h5_file_close(usc__h5_file *f, usc_error *err);

/*
 * Opens a dataset by its absolute path ("/a/b"): USC_ENOTFOUND when a
 * component is missing, USC_EINVAL when the object is not a dataset.
 */
usc_status usc__h5_dataset_open(usc__h5_file *f, const char *dataset,
				usc__h5_dataset **out, usc_error *err);

void usc__h5_dataset_close(usc__h5_dataset *d);

/*
 * The dataset's shape: rank up to max_rank, and its dims.  A scalar
 * dataspace has rank 0; a null dataspace is an error.
 */
usc_status usc__h5_dataset_shape(usc__h5_dataset *d, size_t max_rank,
				 size_t *rank, int64_t *dims, usc_error *err);

/* The dataset's element type. */
usc_status usc__h5_dataset_type(usc__h5_dataset *d, usc__h5_type *out,
				usc_error *err);

/*
 * Reads the whole dataset as its stored bytes, without any conversion
 * (byte order included: the caller swaps big-endian data).  nbytes must be
 * the element count times the type's size.
 */
usc_status usc__h5_dataset_read_raw(usc__h5_dataset *d, void *buf,
				    size_t nbytes, usc_error *err);

/*
 * Writes an array of type t (ulpscope's in-memory layout) as a new
 * dataset, creating missing groups.  Types map to what h5py writes: IEEE
 * floats (f16 as h5py's 16-bit float), little-endian integers, pred as
 * h5py's bool enum, complex as a compound {r, i}; every other type (bf16,
 * fp8, f6, f4, sub-byte integers) as an opaque of its container size
 * tagged "ulpscope:NAME".
 */
usc_status usc__h5_write_array(usc__h5_file *f, const char *dataset,
			       usc_dtype t, size_t rank, const int64_t *dims,
			       const void *data, usc_error *err);

#endif /* USC_STORE_H5_DOOR_H */
