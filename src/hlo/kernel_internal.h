/*
 * Internals shared by the verifier (verify*.c), extract.c and summary.c: a
 * bounded string builder for messages, so that composing an error never
 * allocates (and so never fails) and an overlong message is cut with "..."
 * instead of lost; and TRY, which passes a failure up.
 */
#ifndef USC_HLO_KERNEL_INTERNAL_H
#define USC_HLO_KERNEL_INTERNAL_H

#include "internal.h"

#include "ulpscope/hlo.h"

typedef struct usc__sbuf {
	char *p;
	size_t size; /* at least 1 */
	size_t len;
	bool trunc;
} usc__sbuf;

/* Starts an empty string in buf[0..size). */
void usc__sb_init(usc__sbuf *b, char *buf, size_t size);
void usc__sb_printf(usc__sbuf *b, const char *fmt, ...) USC__PRINTF(2, 3);
/* A shape without its layout: "f32[8,<=4]", "(f32[], s32[2])". */
void usc__sb_shape(usc__sbuf *b, const usc_hlo_shape *s);
/* Marks truncation with a trailing "..."; returns the buffer. */
char *usc__sb_finish(usc__sbuf *b);

/* Returns the status of x from the calling function when x fails. */
#define TRY(x)                                                               \
	do {                                                                 \
		usc_status st_ = (x);                                        \
		if (st_ != USC_OK)                                           \
			return st_;                                          \
	} while (0)

#endif /* USC_HLO_KERNEL_INTERNAL_H */
