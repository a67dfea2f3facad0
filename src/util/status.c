/* Status codes, their names and messages, and error reports. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *usc_status_message(usc_status code)
{
	switch (code) {
#define USC__STATUS_MSG(name, value, msg)                                    \
	case USC_##name:                                                     \
		return msg;
		USC_STATUS_LIST(USC__STATUS_MSG)
#undef USC__STATUS_MSG
	}
	return "unknown status";
}

const char *usc_status_name(usc_status code)
{
	switch (code) {
#define USC__STATUS_NAME(name, value, msg)                                   \
	case USC_##name:                                                     \
		return #name;
		USC_STATUS_LIST(USC__STATUS_NAME)
#undef USC__STATUS_NAME
	}
	return "UNKNOWN";
}

void usc_error_clear(usc_error *err)
{
	if (!err)
		return;
	err->code = USC_OK;
	err->message[0] = '\0';
}

usc_status usc__vfail(usc_error *err, usc_status code, const char *fmt,
		      va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	if (fmt)
		vsnprintf(err->message, sizeof err->message, fmt, ap);
	else
		snprintf(err->message, sizeof err->message, "%s",
			 usc_status_message(code));
	return code;
}

usc_status usc__fail(usc_error *err, usc_status code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = usc__vfail(err, code, fmt, ap);
	va_end(ap);
	return code;
}
