/*
 * The statistics of the result file: usc_results_stats_compute and
 * usc_results_summarize, and the checks of an output they share with the
 * writer.
 */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/results_internal.h"

/* Orders doubles ascending; the callers have left NaN out. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The 1-based nearest rank of percentile p (0 < p <= 100) among n sorted
 * values: ceil(p * n / 100), computed in integers so that no rounding of
 * p * n can move it.  n is split so p * n cannot overflow.
 */
static uint64_t nearest_rank(uint64_t p, uint64_t n)
{
	uint64_t whole = (n / 100) * p, part = (n % 100) * p;

	return whole + (part + 99) / 100;
}

usc_status usc_results_stats_compute(const double *x, uint64_t n,
				     usc_results_stats *out, usc_error *err)
{
	double *v = NULL;
	uint64_t m = 0;

	out->count = 0;
	out->nan_count = 0;
	out->max_abs = out->median_abs = out->p99_abs = NAN;
	for (uint64_t i = 0; i < n; i++)
		out->nan_count += isnan(x[i]) != 0;
	if (n == out->nan_count)
		return USC_OK;
	if (n - out->nan_count > SIZE_MAX / sizeof *v)
		return usc__fail(err, USC_ENOMEM,
				 "statistics of %llu values: out of memory",
				 (unsigned long long)n);
	v = usc__malloc((size_t)(n - out->nan_count) * sizeof *v);
	if (!v)
		return usc__fail(err, USC_ENOMEM,
				 "statistics of %llu values: out of memory",
				 (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			v[m++] = fabs(x[i]);
	qsort(v, (size_t)m, sizeof *v, cmp_double);
	out->count = m;
	out->max_abs = v[m - 1];
	out->median_abs = v[nearest_rank(50, m) - 1];
	out->p99_abs = v[nearest_rank(99, m) - 1];
	usc__free(v);
	return USC_OK;
}

usc_status usc__results_check_output(const usc_results_output *o,
				     const char *what, usc_error *err)
{
	const usc_format *fmt;
	usc_dtype t;
	size_t rank;

	if (!o->device || !o->reference)
		return usc__fail(err, USC_EINVAL, "%s: the %s tensor is missing",
				 what, o->device ? "reference" : "device");
	t = usc_tensor_dtype(o->device);
	fmt = usc_format_of(t);
	if (!fmt || fmt->kind == USC_KIND_COMPLEX || fmt->kind == USC_KIND_OTHER)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: outputs of type %s are not supported by "
				 "result schema version %d",
				 what, usc_dtype_name(t),
				 USC_RESULTS_SCHEMA_VERSION);
	rank = usc_tensor_rank(o->device);
	if (usc_tensor_dtype(o->reference) != t ||
	    usc_tensor_rank(o->reference) != rank ||
	    (rank && memcmp(usc_tensor_dims(o->reference),
			    usc_tensor_dims(o->device),
			    rank * sizeof(int64_t)) != 0)) {
		char a[256], b[256];
		usc_tensor_spec sa = usc_tensor_spec_of(o->device);
		usc_tensor_spec sb = usc_tensor_spec_of(o->reference);

		usc_tensor_spec_format(&sa, a, sizeof a);
		usc_tensor_spec_format(&sb, b, sizeof b);
		return usc__fail(err, USC_EINVAL,
				 "%s: the reference is %s but the device output "
				 "is %s",
				 what, b, a);
	}
	if (rank > 32)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: rank %zu is above HDF5's 32", what, rank);
	if (!o->oracle_mid || !o->oracle_rad || !o->ulp_error_oracle ||
	    !o->ulp_error_reference || !o->undecided)
		return usc__fail(err, USC_EINVAL, "%s: the %s array is missing",
				 what,
				 !o->oracle_mid		? "oracle_mid"
				 : !o->oracle_rad	? "oracle_rad"
				 : !o->ulp_error_oracle ? "ulp_error_oracle"
				 : !o->ulp_error_reference
					 ? "ulp_error_reference"
					 : "undecided");
	{
		int given = !!o->envelope_lo + !!o->envelope_hi +
			    !!o->envelope_flags + !!o->cls;

		if (given != 0 && given != 4)
			return usc__fail(err, USC_EINVAL,
					 "%s: envelope_lo, envelope_hi, "
					 "envelope_flags and class go together "
					 "(%d of 4 given)",
					 what, given);
	}
	return USC_OK;
}

usc_status usc_results_summarize(const usc_results_output *o,
				 usc_results_summary *out, usc_error *err)
{
	const uint8_t *a, *b;
	size_t w;
	uint64_t n;
	usc_status st;

	memset(out, 0, sizeof *out);
	st = usc__results_check_output(o, "the output", err);
	if (st != USC_OK)
		return st;
	n = usc_tensor_count(o->device);
	out->count = n;
	st = usc_results_stats_compute(o->ulp_error_oracle, n, &out->oracle,
				       err);
	if (st == USC_OK)
		st = usc_results_stats_compute(o->ulp_error_reference, n,
					       &out->reference, err);
	if (st != USC_OK)
		return st;
	a = usc_tensor_cdata(o->device);
	b = usc_tensor_cdata(o->reference);
	w = (size_t)usc_format_of(usc_tensor_dtype(o->device))->container_bytes;
	for (uint64_t i = 0; i < n; i++) {
		out->bit_exact_count += memcmp(a + i * w, b + i * w, w) == 0;
		out->undecided_count += o->undecided[i] != 0;
	}
	return USC_OK;
}

usc_status usc__results_check_name(const char *path, const char *name,
				   usc_error *err)
{
	if (!name || !name[0] || strcmp(name, ".") == 0 || strchr(name, '/'))
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel name '%s' is not allowed (it must "
				 "be non-empty, not \".\", without '/')",
				 path, name ? name : "(null)");
	if (strlen(name) > USC_RESULTS_MAX_NAME)
		return usc__fail(err, USC_EINVAL,
				 "%s: kernel name is longer than %d bytes",
				 path, USC_RESULTS_MAX_NAME);
	return USC_OK;
}

void usc__results_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

void usc__results_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
