/*
 * The format descriptor table, generated from USC_DTYPE_LIST, and the
 * figures derived from each row.
 */
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "dtype/round.h"
#include "ulpscope/dtype.h"

static const usc_format formats[USC_DTYPE_COUNT] = {
	[USC_DTYPE_INVALID] = {USC_DTYPE_INVALID, "invalid", USC_KIND_OTHER, 0, 0,
			       0, 0, 0, USC_INF_NONE, USC_NAN_NONE,
			       USC_ZERO_UNSIGNED, false, false, USC_OVF_SATURATE},
#define USC__FORMAT_ROW(id, name, kind, bits, bytes, e, m, bias, inf, nan,   \
			zero, sign, sub, ovf)                                \
	[USC_##id] = {USC_##id,	     name,	     USC_KIND_##kind,        \
		      bits,	     bytes,	     e,                      \
		      m,	     bias,	     USC_INF_##inf,          \
		      USC_NAN_##nan, USC_ZERO_##zero, sign,                  \
		      sub,	     ovf},
	USC_DTYPE_LIST(USC__FORMAT_ROW)
#undef USC__FORMAT_ROW
};

const usc_format *usc_format_of(usc_dtype t)
{
	if ((int)t <= USC_DTYPE_INVALID || (int)t >= USC_DTYPE_COUNT)
		return NULL;
	return &formats[t];
}

const char *usc_dtype_name(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f ? f->name : "invalid";
}

usc_status usc_dtype_from_name(const char *name, size_t len, usc_dtype *out)
{
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++) {
		const char *n = formats[t].name;

		if (strlen(n) == len && memcmp(n, name, len) == 0) {
			*out = (usc_dtype)t;
			return USC_OK;
		}
	}
	return USC_ENOTFOUND;
}

bool usc_dtype_is_float(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f && f->kind == USC_KIND_FLOAT;
}

bool usc_dtype_is_integer(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f && (f->kind == USC_KIND_SINT || f->kind == USC_KIND_UINT);
}

/* Computes the derived figures of the floating format f. */
static void compute_info(const usc_format *f, usc_float_info *out)
{
	uint64_t emask, mmask, top_e, max_m;

	memset(out, 0, sizeof *out);
	emask = ((uint64_t)1 << f->exp_bits) - 1;
	mmask = ((uint64_t)1 << f->man_bits) - 1;
	out->precision = f->man_bits + 1;
	/*
	 * With subnormals, exponent field 0 is subnormal and field 1 is the
	 * smallest normal binade; without them (f8e8m0fnu) field 0 is normal.
	 */
	out->emin = f->has_subnormals ? 1 - f->bias : -f->bias;

	/* The largest finite encoding, by how the top codes are spent. */
	top_e = emask;
	max_m = mmask;
	switch (f->nan) {
	case USC_NAN_IEEE:
		top_e = emask - 1; /* all-ones exponent holds Inf and NaN */
		break;
	case USC_NAN_ALLONES:
		if (f->man_bits == 0)
			top_e = emask - 1;
		else
			max_m = mmask - 1;
		break;
	case USC_NAN_NEGZERO:
	case USC_NAN_NONE:
		break;
	}
	if (f->inf == USC_INF_IEEE)
		top_e = emask - 1;
	out->emax = (int)top_e - f->bias;
	out->max_finite_bits = (top_e << f->man_bits) | max_m;
	out->max_finite = ldexp((double)(max_m | (mmask + 1)),
				out->emax - f->man_bits);
	out->min_normal = ldexp(1.0, out->emin);
	out->min_subnormal = f->has_subnormals
				     ? ldexp(1.0, out->emin - f->man_bits)
				     : out->min_normal;
	out->min_subnormal_bits = f->has_subnormals ? 1 : 0;
	out->epsilon = ldexp(1.0, -f->man_bits);
	out->sign_mask = f->has_sign ? (uint64_t)1 << (f->bits - 1) : 0;
	if (f->inf == USC_INF_IEEE)
		out->inf_bits = emask << f->man_bits;
	switch (f->nan) {
	case USC_NAN_IEEE:
		/* Quiet NaN: the top mantissa bit set (IEEE 754-2008 6.2.1). */
		out->nan_bits = (emask << f->man_bits) |
				((uint64_t)1 << (f->man_bits - 1));
		break;
	case USC_NAN_ALLONES:
		out->nan_bits = (emask << f->man_bits) | mmask;
		break;
	case USC_NAN_NEGZERO:
		out->nan_bits = (uint64_t)1 << (f->bits - 1);
		break;
	case USC_NAN_NONE:
		break;
	}
}

/*
 * The derived figures are computed once, on first use, for every format:
 * the encoders read them for each value they round.
 */
static usc_float_info info_table[USC_DTYPE_COUNT];
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

static void init_info_table(void)
{
	for (int t = USC_DTYPE_INVALID + 1; t < USC_DTYPE_COUNT; t++)
		if (formats[t].kind == USC_KIND_FLOAT)
			compute_info(&formats[t], &info_table[t]);
}

const usc_float_info *usc__float_info(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	if (!f || f->kind != USC_KIND_FLOAT)
		return NULL;
	pthread_once(&info_once, init_info_table);
	return &info_table[t];
}

usc_status usc_float_info_of(usc_dtype t, usc_float_info *out)
{
	const usc_float_info *fi = usc__float_info(t);

	if (!fi)
		return USC_EINVAL;
	*out = *fi;
	return USC_OK;
}
