/*
 * The door to HDF5: the only part of ulpscope that includes <hdf5.h>.
 *
 * Every function here silences HDF5's automatic printing of its error
 * stack for the duration of the call and turns a failure into a usc_error
 * whose message names the file (and dataset).  On the read side a
 * failure HDF5 reports says "the file is damaged or truncated", never
 * HDF5's own description (addresses, eof, flags).  Handles are opaque so
 * that hid_t never leaks into the rest of the code.  The tensor readers use the read side now; the
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
 * Decodes the HDF5 file at path in a forked child first: every object's
 * header and attributes, and the data of the dataset data_of ("/a/b"; ""
 * for every dataset; NULL for none).  USC_EPARSE naming the file when the
 * HDF5 library crashes on it (a damaged file can make it divide by zero
 * or overrun a buffer, which no API call reports); USC_OK otherwise,
 * whatever HDF5 made of the file, so the ordinary path words its errors.
 * Every usc__h5_file_open_* of an existing file calls it; h5_vet.c.
 */
usc_status usc__h5_vet(const char *path, const char *data_of, usc_error *err);

/*
 * Opens a file for reading: USC_ENOTFOUND when it does not exist,
 * USC_EPARSE when it is not HDF5, USC_EIO when HDF5 cannot open it.
 */
usc_status usc__h5_file_open_read(const char *path, usc__h5_file **out,
				  usc_error *err);

/*
 * usc__h5_file_open_read, with the child of usc__h5_vet reading the data
 * of the dataset data_of too (the one the caller is about to read).
 */
usc_status usc__h5_file_open_read_data(const char *path, const char *data_of,
				       usc__h5_file **out, usc_error *err);

/* Creates (truncates) a file for writing. */
usc_status usc__h5_file_create(const char *path, usc__h5_file **out,
			       usc_error *err);

/*
 * Closes a file (NULL allowed); USC_EIO when HDF5 fails to flush it, or
 * when a dataset of it failed to close.  After such a failure the file is
 * touched no more, and the process ends without HDF5's exit handler
 * (usc__exit_skip_earlier_handlers), which would crash on it.
 */
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

/*
 * Whether storage for every element of the dataset exists in the file.
 * ulpscope's writer writes every element; a dataset that declares more
 * elements than were ever written (a forged or damaged file can declare
 * 2^40 of them in a few bytes) has not, and reading it would only give
 * fill values after a huge allocation.
 */
usc_status usc__h5_dataset_stored(usc__h5_dataset *d, bool *all,
				  usc_error *err);

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

/* ------------------------------------------------------------------ */
/* The result file (src/store/results.c) builds on what follows.        */

/*
 * Creates (truncates) a file in the HDF5 1.8 file format or later: its
 * superblock, object headers and B-trees carry checksums, so a flipped or
 * missing byte of metadata is reported as an error instead of being read
 * as something else.  Every h5py built on HDF5 1.8 or later reads it.
 */
usc_status usc__h5_file_create_checked(const char *path, usc__h5_file **out,
				       usc_error *err);

/* Opens an existing file for reading and writing. */
usc_status usc__h5_file_open_rdwr(const char *path, usc__h5_file **out,
				  usc_error *err);

/* The path the file was opened or created under, or its label. */
const char *usc__h5_file_path(const usc__h5_file *f);

/*
 * The name messages give the file from now on: the result writer works
 * on a temporary file and names the file it will become.
 */
void usc__h5_file_set_label(usc__h5_file *f, const char *label);

/*
 * Creates a group and any missing parents.  Groups created here track the
 * creation order of their links, so usc__h5_group_list gives members back
 * in the order they were added.
 */
usc_status usc__h5_group_create(usc__h5_file *f, const char *group,
				usc_error *err);

/*
 * Whether an object exists at an absolute path, every component checked
 * in turn (so a missing parent is "no", not an error).  is_group, when
 * not NULL, says whether it is a group.
 */
usc_status usc__h5_exists(usc__h5_file *f, const char *path, bool *exists,
			  bool *is_group, usc_error *err);

/*
 * The names of a group's members, in creation order where the group
 * tracks it and in name order otherwise.  The array and each name are
 * allocated with usc__malloc; free them with usc__h5_names_free.
 */
usc_status usc__h5_group_list(usc__h5_file *f, const char *group,
			      char ***names, size_t *count, usc_error *err);
void usc__h5_names_free(char **names, size_t count);

/* Removes a link (a group with everything under it, or a dataset). */
usc_status usc__h5_delete(usc__h5_file *f, const char *path, usc_error *err);

/* The element types the result file stores numbers as. */
typedef enum usc__h5_store {
	USC__H5_STORE_U8,
	USC__H5_STORE_U16,
	USC__H5_STORE_U32,
	USC__H5_STORE_U64,
	USC__H5_STORE_F64
} usc__h5_store;

/*
 * Datasets larger than this many bytes are chunked and pass through the
 * shuffle, deflate and Fletcher-32 filters; smaller ones are contiguous
 * (a chunk index costs more than it saves on a few hundred numbers).
 */
#define USC__H5_CHUNK_THRESHOLD 4096

/*
 * How the chunks of a dataset above USC__H5_CHUNK_THRESHOLD bytes are
 * filtered; every one is checksummed (Fletcher-32).  SMALL (byte shuffle,
 * deflate level 6) is the default, for tensors kept for long; FAST
 * (shuffle, deflate level 1) and RAW (no deflate) are for the result
 * file's per-element datasets, written at the speed of the check: level 1
 * costs about half of level 6's time for 1-7 % more bytes, and RAW is for
 * arrays that deflate hardly shrinks (docs/results.md, "Compression").
 */
typedef enum usc__h5_pack {
	USC__H5_PACK_SMALL,
	USC__H5_PACK_FAST,
	USC__H5_PACK_RAW
} usc__h5_pack;

/*
 * Writes an array of type t as a new dataset of the given shape, creating
 * missing groups.  Integers are taken as little-endian, the layout of a
 * usc_tensor's data; doubles in the machine's own order.  The _packed form
 * chooses the filters (usc__h5_write_numeric: USC__H5_PACK_SMALL).
 */
usc_status usc__h5_write_numeric(usc__h5_file *f, const char *dataset,
				 usc__h5_store t, size_t rank,
				 const int64_t *dims, const void *data,
				 usc_error *err);
usc_status usc__h5_write_numeric_packed(usc__h5_file *f,
					const char *dataset, usc__h5_store t,
					usc__h5_pack pack, size_t rank,
					const int64_t *dims, const void *data,
					usc_error *err);

/*
 * Writes bytes as a new dataset of an HDF5 enum over uint8 whose member i
 * is names[i] (count of them), so that h5py and h5dump show the names.
 */
usc_status usc__h5_write_enum_u8(usc__h5_file *f, const char *dataset,
				 size_t rank, const int64_t *dims,
				 const uint8_t *data, const char *const *names,
				 size_t count, usc_error *err);

/*
 * Creates an empty dataset of the given shape, as
 * usc__h5_write_numeric_packed (or usc__h5_write_enum_u8) would create it
 * with the filters of pack, to be filled a range at a time by
 * usc__h5_write_range; close it with usc__h5_dataset_close.
 */
usc_status usc__h5_create_numeric(usc__h5_file *f, const char *dataset,
				  usc__h5_store t, usc__h5_pack pack,
				  size_t rank, const int64_t *dims,
				  usc__h5_dataset **out, usc_error *err);
usc_status usc__h5_create_enum_u8(usc__h5_file *f, const char *dataset,
				  usc__h5_pack pack, size_t rank,
				  const int64_t *dims,
				  const char *const *names, size_t count,
				  usc__h5_dataset **out, usc_error *err);

/*
 * Writes count elements (laid out as the dataset was created for: the
 * store type's) to the dataset's elements [first, first + count) in
 * row-major order, whatever its rank.  USC_ERANGE past its end.
 */
usc_status usc__h5_write_range(usc__h5_dataset *d, uint64_t first,
			       uint64_t count, const void *data,
			       usc_error *err);

/*
 * Writes n strings (NULL: "") as a one-dimensional dataset of fixed-length
 * UTF-8 strings, as wide as the longest (h5py reads bytes).
 */
usc_status usc__h5_write_strings(usc__h5_file *f, const char *dataset,
				 const char *const *v, size_t n, usc_error *err);

/*
 * Writes text as a scalar dataset of one fixed-length UTF-8 string (its
 * length and a NUL).  Fixed-length, never variable-length: see
 * usc__h5_fixed_string_type in h5_write.c.
 */
usc_status usc__h5_write_string(usc__h5_file *f, const char *dataset,
				const char *text, usc_error *err);

/*
 * Reads a scalar string dataset (variable-length or fixed-length) into a
 * NUL-terminated buffer from usc__malloc; *len (may be NULL) receives its
 * length.
 */
usc_status usc__h5_read_string(usc__h5_file *f, const char *dataset,
			       char **out, size_t *len, usc_error *err);

/*
 * Attributes of the object at obj (a group or dataset path).  A setter
 * replaces an attribute of the same name.  Strings are scalar
 * fixed-length UTF-8 (NUL-terminated), signed integers 64-bit little-endian, unsigned
 * ones the same unsigned, doubles IEEE binary64 little-endian.
 */
usc_status usc__h5_attr_set_string(usc__h5_file *f, const char *obj,
				   const char *name, const char *value,
				   usc_error *err);
usc_status usc__h5_attr_set_int(usc__h5_file *f, const char *obj,
				const char *name, int64_t value,
				usc_error *err);
usc_status usc__h5_attr_set_uint(usc__h5_file *f, const char *obj,
				 const char *name, uint64_t value,
				 usc_error *err);
usc_status usc__h5_attr_set_double(usc__h5_file *f, const char *obj,
				   const char *name, double value,
				   usc_error *err);
/* Removes an attribute; one that is not there is no error. */
usc_status usc__h5_attr_delete(usc__h5_file *f, const char *obj,
			       const char *name, usc_error *err);

/*
 * Reads a scalar attribute.  USC_ENOTFOUND when the object or the
 * attribute is missing, USC_EPARSE when it is not scalar or not of the
 * class asked for (any integer width is accepted for the integer getters,
 * any string kind for the string one), USC_ERANGE when an integer does not
 * fit.  A string is NUL-terminated, from usc__malloc.
 */
usc_status usc__h5_attr_get_string(usc__h5_file *f, const char *obj,
				   const char *name, char **out,
				   usc_error *err);
usc_status usc__h5_attr_get_int(usc__h5_file *f, const char *obj,
				const char *name, int64_t *out,
				usc_error *err);
usc_status usc__h5_attr_get_uint(usc__h5_file *f, const char *obj,
				 const char *name, uint64_t *out,
				 usc_error *err);
usc_status usc__h5_attr_get_double(usc__h5_file *f, const char *obj,
				   const char *name, double *out,
				   usc_error *err);

/*
 * One row of an ops table: a compound dataset of these eight members,
 * each string column a fixed-length UTF-8 string as wide as its longest
 * value plus a NUL, integers 64-bit signed little-endian.  Readers match
 * members by name, so columns added later do not disturb them.  Tables
 * above USC__H5_CHUNK_THRESHOLD bytes are chunked and compressed.
 */
typedef struct usc__h5_op_row {
	int64_t index;
	char *name;
	char *opcode;
	char *element_type;
	char *shape;
	char *op_name;
	char *source_file;
	int64_t source_line;
} usc__h5_op_row;

/* Writes n rows as a one-dimensional compound dataset (NULL strings: ""). */
usc_status usc__h5_write_ops(usc__h5_file *f, const char *dataset,
			     const usc__h5_op_row *rows, size_t n,
			     usc_error *err);

/*
 * Reads an ops table back; every string is allocated with usc__malloc.
 * Free with usc__h5_ops_free.
 */
usc_status usc__h5_read_ops(usc__h5_file *f, const char *dataset,
			    usc__h5_op_row **rows, size_t *n, usc_error *err);
void usc__h5_ops_free(usc__h5_op_row *rows, size_t n);

/*
 * General tables (h5_table.c): a one-dimensional compound dataset whose
 * columns are described once and read from or written to an array of C
 * structs.  Strings are fixed-length UTF-8 (as the ops table's, for the
 * same reason); numbers little-endian.  Readers match columns by name.
 */
typedef enum usc__h5_col_kind {
	USC__H5_COL_STRING, /* a char * member; NULL writes "" */
	USC__H5_COL_INT64,
	USC__H5_COL_UINT64,
	USC__H5_COL_DOUBLE
} usc__h5_col_kind;

typedef struct usc__h5_column {
	const char *name;
	usc__h5_col_kind kind;
	size_t offset; /* of the member in the row struct */
} usc__h5_column;

/* Writes n rows of stride bytes each as a table. */
usc_status usc__h5_write_table(usc__h5_file *f, const char *dataset,
			       const usc__h5_column *cols, size_t ncols,
			       const void *rows, size_t n, size_t stride,
			       usc_error *err);

/*
 * Reads a table into a zeroed array of *n rows of stride bytes
 * (usc__calloc; each string member usc__malloc'd).  Every column must be
 * present with its kind, else USC_EPARSE naming it.  On failure nothing
 * is returned; strings already read are freed through free_row.
 */
usc_status usc__h5_read_table(usc__h5_file *f, const char *dataset,
			      const usc__h5_column *cols, size_t ncols,
			      size_t stride, void **rows, size_t *n,
			      usc_error *err);

/*
 * An external link at link (intermediate groups made) to object obj of
 * file target (a path relative to f's directory, which HDF5 tries after
 * the working directory).
 */
usc_status usc__h5_link_external(usc__h5_file *f, const char *link,
				 const char *target, const char *obj,
				 usc_error *err);

#endif /* USC_STORE_H5_DOOR_H */
