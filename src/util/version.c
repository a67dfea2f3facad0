#include "internal.h"

#include "ulpscope/ulpscope.h"

const char *usc_version(void)
{
	return USC_VERSION_STRING;
}
