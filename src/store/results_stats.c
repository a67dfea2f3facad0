/*
 * The statistics of the result file: usc_results_stats_compute and
 * usc_results_summarize, and the checks of an output they share with the
 * writer.
 */
#include "internal.h"

#include <errno.h>
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

static void swap_d(double *v, size_t i, size_t j)
{
	double t = v[i];

	v[i] = v[j];
	v[j] = t;
}

/*
 * The k-th smallest (0-based) of v[0, n), k < n, reordering v so that
 * everything before position k is no larger and everything after no
 * smaller: the value a full sort would put at k, found in expected
 * linear time.  Quickselect with a median-of-three pivot and a three-way
 * partition (the figures hold long runs of equal errors, exact zeros
 * above all); after 2 log2(n) + 8 rounds without finishing, the range
 * left is sorted, so no input costs more than a sort.  Callers have left
 * NaN out, so < and > order everything.
 */
static double select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n, rounds = 8;

	for (size_t m = n; m > 1; m >>= 1)
		rounds += 2;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, lt = lo, i = lo, gt = hi;
		double a = v[lo], b = v[mid], c = v[hi - 1], pivot;

		if (rounds-- == 0) {
			qsort(v + lo, hi - lo, sizeof *v, cmp_double);
			return v[k];
		}
		pivot = a < b ? (b < c ? b : (a < c ? c : a))
			      : (a < c ? a : (b < c ? c : b));
		while (i < gt) {
			if (v[i] < pivot)
				swap_d(v, lt++, i++);
			else if (v[i] > pivot)
				swap_d(v, i, --gt);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[k];
}

/*
 * The nearest-rank median and 99th percentile (1-based ranks rm <= rp)
 * of m values, reordering them: the p99 first over all of them, then
 * the median among the values before it, which are all no larger.
 */
static void select_ranks(double *v, size_t m, uint64_t rm, uint64_t rp,
			 double *median, double *p99)
{
	*p99 = select_kth(v, m, (size_t)rp - 1);
	*median = rm == rp ? *p99 : select_kth(v, (size_t)rp - 1, (size_t)rm - 1);
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
	out->max_abs = 0;
	for (uint64_t i = 0; i < n; i++)
		if (!isnan(x[i])) {
			v[m] = fabs(x[i]);
			if (v[m] > out->max_abs)
				out->max_abs = v[m];
			m++;
		}
	out->count = m;
	select_ranks(v, (size_t)m, nearest_rank(50, m), nearest_rank(99, m),
		     &out->median_abs, &out->p99_abs);
	usc__free(v);
	return USC_OK;
}

/* ------------------------------------------------------------------ */
/* The same statistics over values that come a piece at a time.        */

/*
 * Values are kept in memory up to MEM_MAX of them, then all of them go
 * to a temporary file.  The figures are selected exactly: the magnitudes
 * are non-negative, so their IEEE encodings order as unsigned integers,
 * and a histogram of the top 16 bits (kept as the values come) finds the
 * bucket of a rank; a pass over the file either gathers that bucket, when
 * it holds at most GATHER_MAX values, or histograms its next 16 bits.
 * After four levels the rank's encoding is known whole.
 */
#define MEM_MAX ((size_t)1 << 20)
#define GATHER_MAX ((size_t)1 << 20)
#define SPILL_BUF 8192

struct usc_results_stats_acc {
	uint64_t count, nan_count;
	double max;
	double *mem;  /* up to MEM_MAX values while there is no file */
	size_t mem_len, mem_cap;
	/*
	 * While there is no file, zeros are counted here instead of being
	 * stored in mem and counted in hist (the smallest magnitudes, they
	 * are what most errors against the reference are: the pages of mem
	 * that would hold them are never touched).
	 */
	uint64_t mem_zeros;
	FILE *spill;  /* every value once it exists */
	uint64_t *hist; /* 65536 buckets of the top 16 bits */
};

static uint64_t bits_of(double x)
{
	uint64_t b;

	memcpy(&b, &x, sizeof b);
	return b;
}

static double double_of(uint64_t b)
{
	double x;

	memcpy(&x, &b, sizeof x);
	return x;
}

usc_status usc_results_stats_acc_new(usc_results_stats_acc **out,
				     usc_error *err)
{
	usc_results_stats_acc *a = usc__calloc(1, sizeof *a);

	*out = NULL;
	if (a)
		a->hist = usc__calloc(65536, sizeof *a->hist);
	if (!a || !a->hist) {
		usc__free(a);
		return usc__fail(err, USC_ENOMEM, "statistics: out of memory");
	}
	a->max = NAN;
	*out = a;
	return USC_OK;
}

void usc_results_stats_acc_free(usc_results_stats_acc *a)
{
	if (!a)
		return;
	if (a->spill)
		fclose(a->spill);
	usc__free(a->mem);
	usc__free(a->hist);
	usc__free(a);
}

usc_status usc__results_stats_acc_reserve(usc_results_stats_acc *a,
					  uint64_t n, usc_error *err)
{
	size_t cap = n < MEM_MAX ? (size_t)n : MEM_MAX;
	double *m;

	if (a->spill || cap <= a->mem_cap)
		return USC_OK;
	m = usc__reallocarray(a->mem, cap, sizeof *m);
	if (!m)
		return usc__fail(err, USC_ENOMEM, "statistics: out of memory");
	a->mem = m;
	a->mem_cap = cap;
	return USC_OK;
}

/*
 * Moves the values held in memory, and the zeros counted, to a new
 * temporary file, where every value is stored and histogrammed.
 */
static usc_status spill_start(usc_results_stats_acc *a, usc_error *err)
{
	static const double zeros[SPILL_BUF];

	a->spill = tmpfile();
	if (!a->spill)
		return usc__fail(err, USC_EIO,
				 "statistics of more than %zu values: cannot "
				 "create a temporary file: %s",
				 MEM_MAX, strerror(errno));
	if (fwrite(a->mem, sizeof *a->mem, a->mem_len, a->spill) !=
	    a->mem_len)
		return usc__fail(err, USC_EIO,
				 "statistics: cannot write the temporary "
				 "file: %s",
				 strerror(errno));
	a->hist[0] += a->mem_zeros;
	while (a->mem_zeros > 0) {
		size_t k = a->mem_zeros < SPILL_BUF ? (size_t)a->mem_zeros
						     : SPILL_BUF;

		if (fwrite(zeros, sizeof *zeros, k, a->spill) != k)
			return usc__fail(err, USC_EIO,
					 "statistics: cannot write the "
					 "temporary file: %s",
					 strerror(errno));
		a->mem_zeros -= k;
	}
	usc__free(a->mem);
	a->mem = NULL;
	a->mem_len = a->mem_cap = 0;
	return USC_OK;
}

/*
 * Makes room in memory for one more value: the array doubled up to
 * MEM_MAX values, then every value moved to the temporary file.
 */
static usc_status mem_room(usc_results_stats_acc *a, usc_error *err)
{
	if (a->mem_cap < MEM_MAX) {
		size_t cap = a->mem_cap ? 2 * a->mem_cap : 1024;
		double *m = usc__reallocarray(a->mem, cap, sizeof *m);

		if (!m)
			return usc__fail(err, USC_ENOMEM,
					 "statistics: out of memory");
		a->mem = m;
		a->mem_cap = cap;
		return USC_OK;
	}
	return spill_start(a, err);
}

/*
 * Takes values of x from *i on into memory until one needs room that
 * memory lacks (*i is then its index): the figures of every value, which
 * the check adds a piece at a time, in a loop that keeps the counts in
 * registers (through the accumulator's fields, each histogram increment
 * could be a store to them, and the compiler reloads them after it).
 */
static void mem_take(usc_results_stats_acc *a, const double *x, size_t n,
		     size_t *i)
{
	uint64_t count = a->count, nans = a->nan_count, zeros = a->mem_zeros;
	uint64_t *hist = a->hist;
	double max = a->max, *mem = a->mem;
	size_t len = a->mem_len, cap = a->mem_cap, k = *i;

	for (; k < n; k++) {
		double v;

		if (isnan(x[k])) {
			nans++;
			continue;
		}
		v = fabs(x[k]);
		if (v != 0 && len == cap)
			break;
		if (count == 0 || v > max)
			max = v;
		count++;
		if (v == 0) {
			zeros++;
			continue;
		}
		hist[bits_of(v) >> 48]++;
		mem[len++] = v;
	}
	a->count = count;
	a->nan_count = nans;
	a->mem_zeros = zeros;
	a->max = max;
	a->mem_len = len;
	*i = k;
}

usc_status usc_results_stats_acc_add(usc_results_stats_acc *a,
				     const double *x, size_t n,
				     usc_error *err)
{
	double buf[SPILL_BUF];
	size_t nb = 0, i = 0;
	usc_status st;

	while (i < n && !a->spill) {
		mem_take(a, x, n, &i);
		if (i < n && (st = mem_room(a, err)) != USC_OK)
			return st;
	}
	for (; i < n; i++) {
		double v;

		if (isnan(x[i])) {
			a->nan_count++;
			continue;
		}
		v = fabs(x[i]);
		if (a->count == 0 || v > a->max)
			a->max = v;
		a->count++;
		a->hist[bits_of(v) >> 48]++;
		buf[nb++] = v;
		if (nb == SPILL_BUF) {
			if (fwrite(buf, sizeof *buf, nb, a->spill) != nb)
				return usc__fail(err, USC_EIO,
						 "statistics: cannot write the "
						 "temporary file: %s",
						 strerror(errno));
			nb = 0;
		}
	}
	if (nb && fwrite(buf, sizeof *buf, nb, a->spill) != nb)
		return usc__fail(err, USC_EIO,
				 "statistics: cannot write the temporary file: "
				 "%s",
				 strerror(errno));
	return USC_OK;
}

/*
 * Calls fn on every value of the temporary file, in order.  Returns
 * USC_EIO on a read error.
 */
static usc_status spill_each(usc_results_stats_acc *a,
			     void (*fn)(void *ctx, uint64_t bits), void *ctx,
			     usc_error *err)
{
	double buf[SPILL_BUF];
	uint64_t seen = 0;
	size_t got;

	if (fflush(a->spill) != 0 || fseek(a->spill, 0, SEEK_SET) != 0)
		return usc__fail(err, USC_EIO,
				 "statistics: cannot rewind the temporary "
				 "file: %s",
				 strerror(errno));
	while ((got = fread(buf, sizeof *buf, SPILL_BUF, a->spill)) > 0) {
		for (size_t i = 0; i < got; i++)
			fn(ctx, bits_of(buf[i]));
		seen += got;
	}
	if (ferror(a->spill) || seen != a->count)
		return usc__fail(err, USC_EIO,
				 "statistics: the temporary file holds %llu "
				 "of %llu values",
				 (unsigned long long)seen,
				 (unsigned long long)a->count);
	return USC_OK;
}

/* A pass of the selection: the values whose top `known` bits are prefix. */
typedef struct select_pass {
	uint64_t prefix;
	unsigned known;     /* 16, 32 or 48 */
	uint64_t *hist;     /* histogram of the next 16 bits, or NULL */
	double *gather;     /* else: the matching values */
	size_t gathered;
} select_pass;

static void select_visit(void *ctx, uint64_t bits)
{
	select_pass *p = ctx;

	if (bits >> (64 - p->known) != p->prefix)
		return;
	if (p->hist)
		p->hist[(bits >> (48 - p->known)) & 0xffff]++;
	else
		p->gather[p->gathered++] = double_of(bits);
}

/* The bucket of hist holding 1-based rank *r; *r becomes its rank in it. */
static size_t bucket_of(const uint64_t *hist, uint64_t *r)
{
	size_t b = 0;

	while (b < 65535 && *r > hist[b])
		*r -= hist[b++];
	return b;
}

/* The value of 1-based rank r among the file's values, exactly. */
static usc_status spill_select(usc_results_stats_acc *a, uint64_t r,
			       double *out, usc_error *err)
{
	uint64_t *hist = usc__calloc(65536, sizeof *hist);
	select_pass p;
	usc_status st = USC_OK;
	size_t b;

	if (!hist)
		return usc__fail(err, USC_ENOMEM, "statistics: out of memory");
	memcpy(hist, a->hist, 65536 * sizeof *hist);
	memset(&p, 0, sizeof p);
	b = bucket_of(hist, &r);
	p.prefix = b;
	p.known = 16;
	for (;;) {
		if (hist[b] <= GATHER_MAX) {
			p.hist = NULL;
			p.gather = usc__reallocarray(NULL, hist[b] ? hist[b] : 1,
						     sizeof *p.gather);
			if (!p.gather) {
				st = usc__fail(err, USC_ENOMEM,
					       "statistics: out of memory");
				break;
			}
			st = spill_each(a, select_visit, &p, err);
			if (st == USC_OK && p.gathered != hist[b])
				st = usc__fail(err, USC_EIO,
					       "statistics: the temporary file "
					       "changed");
			if (st == USC_OK) {
				qsort(p.gather, p.gathered, sizeof *p.gather,
				      cmp_double);
				*out = p.gather[r - 1];
			}
			usc__free(p.gather);
			break;
		}
		if (p.known == 64) {
			/* Every value of the bucket has these bits. */
			*out = double_of(p.prefix);
			break;
		}
		memset(hist, 0, 65536 * sizeof *hist);
		p.hist = hist;
		st = spill_each(a, select_visit, &p, err);
		if (st != USC_OK)
			break;
		b = bucket_of(hist, &r);
		p.prefix = p.prefix << 16 | b;
		p.known += 16;
	}
	usc__free(hist);
	return st;
}

/*
 * The median (rank rm) and p99 (rank rp) of the in-memory values from
 * the histogram kept as they came: one pass gathers the values of the
 * two ranks' buckets (the top 16 bits of their encodings, which order as
 * the non-negative values), and each rank is selected among its bucket's
 * values only.  False when out of memory (the caller then selects over
 * all of them).
 */
static bool mem_select(usc_results_stats_acc *a, uint64_t rm, uint64_t rp,
		       double *median, double *p99)
{
	size_t bm = bucket_of(a->hist, &rm), bp = bucket_of(a->hist, &rp);
	size_t nm = (size_t)a->hist[bm], np = bm == bp ? 0 : (size_t)a->hist[bp];
	size_t im = 0, ip = 0;
	double *g = usc__reallocarray(NULL, nm + np ? nm + np : 1, sizeof *g);

	if (!g)
		return false;
	for (size_t i = 0; i < a->mem_len; i++) {
		size_t b = (size_t)(bits_of(a->mem[i]) >> 48);

		if (b == bm)
			g[im++] = a->mem[i];
		else if (b == bp)
			g[nm + ip++] = a->mem[i];
	}
	if (bm == bp)
		select_ranks(g, nm, rm, rp, median, p99);
	else {
		*median = select_kth(g, nm, (size_t)rm - 1);
		*p99 = select_kth(g + nm, np, (size_t)rp - 1);
	}
	usc__free(g);
	return true;
}

usc_status usc_results_stats_acc_finish(usc_results_stats_acc *a,
					usc_results_stats *out,
					usc_error *err)
{
	uint64_t rm, rp;
	usc_status st;

	out->count = a->count;
	out->nan_count = a->nan_count;
	out->max_abs = out->median_abs = out->p99_abs = NAN;
	if (a->count == 0)
		return USC_OK;
	out->max_abs = a->max;
	rm = nearest_rank(50, a->count);
	rp = nearest_rank(99, a->count);
	if (!a->spill) {
		/*
		 * The zeros counted apart are the smallest values: a rank
		 * among them is +0 (what fabs stored would have been), a
		 * later one that rank less the zeros among the stored.
		 */
		uint64_t z = a->mem_zeros;
		bool median_zero = rm <= z;

		if (rp <= z) {
			out->median_abs = out->p99_abs = 0.0;
			return USC_OK;
		}
		rp -= z;
		rm = median_zero ? rp : rm - z;
		if (!mem_select(a, rm, rp, &out->median_abs, &out->p99_abs))
			select_ranks(a->mem, a->mem_len, rm, rp,
				     &out->median_abs, &out->p99_abs);
		if (median_zero)
			out->median_abs = 0.0;
		return USC_OK;
	}
	st = spill_select(a, rm, &out->median_abs, err);
	if (st == USC_OK)
		st = spill_select(a, rp, &out->p99_abs, err);
	return st;
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
