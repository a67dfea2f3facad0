/*
 * ulpscope: status codes and error reports.
 *
 * Every fallible public function returns a usc_status and writes its
 * results through out-parameters.  Functions that can say more than a code
 * take an optional usc_error, which receives a message with context (a file,
 * line:column, an op name).  Numeric events (inexact, overflow, NaN) are never
 * errors: they are data, reported through flags.
 */
#ifndef ULPSCOPE_STATUS_H
#define ULPSCOPE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The one list of status codes: X(NAME, value, message). */
#define USC_STATUS_LIST(X)                                                   \
	X(OK, 0, "success")                                                  \
	X(ENOMEM, 1, "out of memory")                                        \
	X(EINVAL, 2, "invalid argument")                                     \
	X(EPARSE, 3, "syntax error")                                         \
	X(EIO, 4, "input/output error")                                      \
	X(ERANGE, 5, "value out of range")                                   \
	X(EDOMAIN, 6, "no defined result for these operands")                \
	X(EUNSUPPORTED, 7, "not supported")                                  \
	X(EVERIFY, 8, "module fails verification")                           \
	X(ENOTFOUND, 9, "not found")                                         \
	X(EINTERNAL, 10, "internal error")

typedef enum usc_status {
#define USC__STATUS_ENUM(name, value, msg) USC_##name = value,
	USC_STATUS_LIST(USC__STATUS_ENUM)
#undef USC__STATUS_ENUM
} usc_status;

/* Size of the message buffer in usc_error, terminating NUL included. */
#define USC_ERROR_MESSAGE_SIZE 1024

/*
 * An error report.  Callers own it (usually on the stack) and pass its
 * address; a NULL pointer means "the code alone is enough".  A message is
 * always NUL-terminated, and truncated rather than overflowed.
 */
typedef struct usc_error {
	usc_status code;
	char message[USC_ERROR_MESSAGE_SIZE];
} usc_error;

/* The fixed description of a status code ("out of memory"). */
const char *usc_status_message(usc_status code);

/* The enum name of a status code without prefix ("ENOMEM"). */
const char *usc_status_name(usc_status code);

/* Resets an error report to USC_OK with an empty message. */
void usc_error_clear(usc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_STATUS_H */
