/*
 * Words for the system errors that writing a file runs into (io_error.c).
 */
#ifndef USC_UTIL_IO_ERROR_H
#define USC_UTIL_IO_ERROR_H

/*
 * What errno value e means, in lower-case words for a message that has
 * already named the file: "no space left on device", "file size limit
 * exceeded (...)", or strerror's text for the rest.
 */
const char *usc__io_error_text(int e);

/*
 * Registers, once, an exit handler that ends the process with exit's
 * status before the handlers registered earlier run (stdio is flushed
 * first).  The HDF5 door calls it when HDF5 failed to close an object:
 * HDF5 1.10 then keeps an identifier to a half-freed object, and its own
 * exit handler, registered before ours, crashes on it.
 */
void usc__exit_skip_earlier_handlers(void);

#endif /* USC_UTIL_IO_ERROR_H */
