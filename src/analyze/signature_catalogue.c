/*
 * Defect signatures: the catalogue's names, summaries and variant counts
 * (USC_MUTATION_LIST in include/ulpscope/signature.h), the verdicts'
 * names and the options' defaults.
 */
#include "internal.h"
#include "analyze/signature_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ catalogue */

static const struct {
	const char *name;
	int variants;
	const char *summary;
} catalogue[] = {
#define USC__MUT_ROW(id, name, variants, summary) {name, variants, summary},
    USC_MUTATION_LIST(USC__MUT_ROW)
#undef USC__MUT_ROW
};

const char *usc_mutation_name(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].name : "invalid";
}

const char *usc_mutation_summary(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].summary : "";
}

int usc_mutation_variants(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].variants : 0;
}

usc_status usc_mutation_from_name(const char *name, usc_mutation *out,
				  usc_error *err)
{
	char list[512] = "";
	size_t used = 0;

	for (int k = 0; k < USC_MUT_COUNT; k++) {
		if (strcmp(name, catalogue[k].name) == 0) {
			*out = (usc_mutation)k;
			return USC_OK;
		}
		used += (size_t)snprintf(
		    list + used, used < sizeof list ? sizeof list - used : 0,
		    "%s%s", k ? " " : "", catalogue[k].name);
		if (used >= sizeof list)
			used = sizeof list;
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "unknown mutation '%s'; expected one of: %s", name,
			 list);
}

const char *usc_signature_verdict_name(usc_signature_verdict v)
{
	switch (v) {
	case USC_SIGNATURE_NO_DIFFERENCE:
		return "no-difference";
	case USC_SIGNATURE_EXPLAINED:
		return "explained";
	case USC_SIGNATURE_UNEXPLAINED:
		return "unexplained";
	case USC_SIGNATURE_LEGIT:
		return "legit";
	}
	return "invalid";
}

usc_signature_options usc_signature_options_default(void)
{
	usc_signature_options o;

	memset(&o, 0, sizeof o);
	o.reduce_order = USC_REDUCE_SEQUENTIAL;
	o.max_seconds = 60;
	o.top = 10;
	o.min_fraction = 0.95;
	return o;
}

usc_signature_request usc_signature_request_default(void)
{
	usc_signature_request r;

	memset(&r, 0, sizeof r);
	r.options = usc_signature_options_default();
	return r;
}

/* Writes the replacement lines of one mutation; false: not applicable. */
bool usc__sig_mutate_lines(usc__sig_ctx *c, usc_mutation kind, int v)
{
	switch (kind) {
	case USC_MUT_NARROW:
		return usc__sig_mut_narrow(c, v);
	case USC_MUT_ROUND_TOWARD_ZERO:
	case USC_MUT_ROUND_UP:
	case USC_MUT_ROUND_DOWN:
		return v == 0 && usc__sig_mut_round(c, kind);
	case USC_MUT_SKIP_ROUNDING:
		return v == 0 && usc__sig_mut_skip_rounding(c);
	case USC_MUT_FLUSH_DENORMALS:
		return v == 0 && usc__sig_mut_flush(c);
	case USC_MUT_CONVERT_SATURATE:
		return v == 0 && usc__sig_mut_convert_saturate(c);
	case USC_MUT_CONVERT_NAN:
		return v == 0 && usc__sig_mut_convert_nan(c);
	case USC_MUT_NAN_DROPPING:
		return v == 0 && usc__sig_mut_nan_dropping(c);
	case USC_MUT_SWAP_OPERANDS:
		return v == 0 && usc__sig_mut_swap(c);
	case USC_MUT_DROP:
		return usc__sig_mut_drop(c, v);
	case USC_MUT_WRONG_INIT:
		return v == 0 && usc__sig_mut_wrong_init(c);
	case USC_MUT_WRONG_CONSTANT:
		return usc__sig_mut_wrong_constant(c, v);
	case USC_MUT_OFF_BY_ONE:
		return usc__sig_mut_off_by_one(c, v);
	case USC_MUT_TRANSPOSED:
		return usc__sig_mut_transposed(c, v);
	case USC_MUT_WRONG_REDUCE_DIM:
		return usc__sig_mut_wrong_reduce_dim(c, v);
	case USC_MUT_ZERO:
		return v == 0 && usc__sig_mut_zero(c);
	case USC_MUT_STALE:
		return usc__sig_mut_stale(c, v);
	case USC_MUT_DOT_TRANSPOSE_OUTPUT:
		return v == 0 && usc__sig_mut_dot_transpose_output(c);
	case USC_MUT_DOT_TRANSPOSE_OPERAND:
		return usc__sig_mut_dot_transpose_operand(c, v);
	case USC_MUT_NARROW_ACCUMULATOR:
		return usc__sig_mut_narrow_accumulator(c, v);
	case USC_MUT_WRONG_WINDOW:
		return usc__sig_mut_wrong_window(c, v);
	case USC_MUT_FLIP_COMPARE:
		return usc__sig_mut_flip_compare(c, v);
	case USC_MUT_SWAP_CLAMP_BOUNDS:
		return v == 0 && usc__sig_mut_swap_clamp_bounds(c);
	case USC_MUT_CONVERT_INT_TRUNCATE:
	case USC_MUT_CONVERT_INT_ROUND:
		return v == 0 && usc__sig_mut_convert_int(c, kind);
	case USC_MUT_CONSTANT_ULPS:
		return usc__sig_mut_constant_ulps(c, v);
	case USC_MUT_BROADCAST_PERMUTE:
		return usc__sig_mut_broadcast_permute(c, v);
	default:
		return false;
	}
}
