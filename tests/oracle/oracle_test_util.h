/*
 * Helpers shared by the oracle's tests: a domain instance and values
 * driven directly through the vtable (no interpreter).
 */
#ifndef USC_TESTS_ORACLE_UTIL_H
#define USC_TESTS_ORACLE_UTIL_H

#include <stdlib.h>
#include <string.h>

#include <mpfr.h>
#include <mpfi.h>

#include "oracles/oracle.h"

typedef usc__oracle_value ovalue;

static inline void *ot_create(long prec, bool quantize)
{
	void *s = NULL;
	usc__oracle_options o;
	usc_error err;

	usc__oracle_options_default(&o);
	o.precision = prec;
	o.quantize = quantize;
	if (usc__domain_oracle.create(&s, &err) != USC_OK)
		abort();
	if (usc__oracle_configure(s, &o, &err) != USC_OK)
		abort();
	return s;
}

static inline usc__dom_op ot_op(usc_hlo_opcode op, usc_dtype res,
				unsigned nargs, usc_dtype a0, usc_dtype a1,
				usc_dtype a2)
{
	usc__dom_op o;

	memset(&o, 0, sizeof o);
	o.op = op;
	o.result = res;
	o.nargs = nargs;
	o.arg[0] = a0;
	o.arg[1] = a1;
	o.arg[2] = a2;
	o.cmp_type = USC__CMP_FLOAT;
	return o;
}

/* Sets v to the interval [lo, hi] of doubles (exact at 53 bits). */
static inline void ot_set(ovalue *v, double lo, double hi)
{
	mpfr_t a, b;

	mpfr_init2(a, 53);
	mpfr_init2(b, 53);
	mpfr_set_d(a, lo, MPFR_RNDN);
	mpfr_set_d(b, hi, MPFR_RNDN);
	usc__oracle_value_set_interval(v, a, b);
	mpfr_clears(a, b, (mpfr_ptr)0);
}

/* Sets v to the IEEE point value d (signed zeros, infinities, NaN). */
static inline void ot_point(void *s, ovalue *v, double d)
{
	usc_error err;
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	if (usc__domain_oracle.load(s, USC_F64, bits, v, &err) != USC_OK)
		abort();
}

#endif /* USC_TESTS_ORACLE_UTIL_H */
