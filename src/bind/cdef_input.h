/*
 * What the Python package declares to cffi: the public API as one
 * preprocessed text.  The build runs the C preprocessor over this file and
 * src/bind/gen_cdef.c keeps the lines that came from include/ulpscope/, so
 * the declarations cffi reads are the compiler's own view of the headers
 * (docs/python.md, "For maintainers").  dtype_mpfr.h stays out: it brings
 * <mpfr.h>, and nothing in a binding takes an MPFR number.
 */
#include "ulpscope/ulpscope.h"
#include "ulpscope/batch.h"
#include "ulpscope/dump.h"
#include "ulpscope/xla_proto.h"
