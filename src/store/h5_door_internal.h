/*
 * Inside the door to HDF5 (h5_door.h): what the files of src/store that
 * include <hdf5.h> share.  h5_door.c holds files, datasets and reading;
 * h5_write.c writing datasets; h5_attr.c attributes and the ops table; h5_table.c general tables and
 * external links.  No file outside src/store includes this header or
 * <hdf5.h>.
 */
#ifndef USC_STORE_H5_DOOR_INTERNAL_H
#define USC_STORE_H5_DOOR_INTERNAL_H

#include <hdf5.h>

#include "store/h5_door.h"

struct usc__h5_file {
	hid_t id;
	char *path; /* the name messages give the file */
	/*
	 * A dataset of the file failed to close: HDF5 lost what it had to
	 * write, and the file is closed no more (see usc__h5_file_close).
	 */
	bool failed;
	char failure[256];
};

struct usc__h5_dataset {
	hid_t id;
	hid_t mtype; /* written datasets: the memory type (owned); else -1 */
	char *where; /* "FILE:/dataset", for messages */
	usc__h5_file *file; /* written datasets: their file; else NULL */
};

/* HDF5's automatic error printing, switched off for one call. */
typedef struct usc__h5_quiet {
	H5E_auto2_t func;
	void *data;
} usc__h5_quiet;

usc__h5_quiet usc__h5_quiet_begin(void);
void usc__h5_quiet_end(usc__h5_quiet q);

/*
 * Fails with the message fmt, then what HDF5 said last in words; the
 * error stack is cleared.
 */
usc_status usc__h5_fail(usc_error *err, usc_status code, const char *fmt,
			...) USC__PRINTF(3, 4);

/*
 * The same, for what a reader found damaged: fmt, then "the file is
 * damaged or truncated", without HDF5's own words.
 */
usc_status usc__h5_read_fail(usc_error *err, usc_status code,
			     const char *fmt, ...) USC__PRINTF(3, 4);

/* A fixed-length UTF-8 string type of len bytes plus a NUL, or -1. */
/* A fixed-length (len) or variable-length UTF-8 string type; -1 on failure. */
hid_t usc__h5_fixed_string_type(size_t len);
hid_t usc__h5_vlen_string_type(void);

/* A dataset handle for dataset of f, its where set for messages; NULL without memory. */
usc__h5_dataset *usc__h5_dataset_new(const usc__h5_file *f,
				     const char *dataset);

/*
 * Whether path names an object of file; a path that does not start with
 * '/' or is longer than the scratch buffer is absent.  Inside a quiet
 * scope.
 */
bool usc__h5_path_exists(hid_t file, const char *path);

/*
 * Reads one string from an attribute (attr >= 0) or a dataset, whose file
 * type is ftype, into *out (usc__malloc) of *len bytes.  Inside a quiet
 * scope; where names it in messages.
 */
usc_status usc__h5_read_one_string(hid_t attr, hid_t dset, hid_t ftype,
				   const char *where, char **out,
				   size_t *len, usc_error *err);

#endif /* USC_STORE_H5_DOOR_INTERNAL_H */
