/*
 * What the result file's reader checks beyond element types and shapes
 * (docs/results.md, "What the reader checks"): that a kernel agrees with
 * its own HLO text, and that an output's datasets and attributes agree
 * with each other and keep the promises schema version 1 makes about
 * their values.
 *
 * A file that fails a check was damaged or written by something else;
 * every message names the file and the object (dataset or attribute) and
 * says what was expected, so that nothing downstream (explain, a user's
 * script) works from a value the writer never wrote.  The checks are
 * linear in the data except the statistics, which are recomputed with
 * the writer's own code (usc_results_summarize) and compared bit for bit.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/results_internal.h"
#include "ulpscope/classify.h"

usc_status usc__results_check_verdict(const char *path, const char *kg,
				      const char *verdict, usc_error *err)
{
	if (verdict[0] == '\0')
		return USC_OK;
	for (int v = 0; v < USC_VERDICT_COUNT; v++)
		if (strcmp(verdict, usc_verdict_name((usc_verdict)v)) == 0)
			return USC_OK;
	return usc__fail(err, USC_EPARSE,
			 "%s:%s: attribute 'verdict' is '%s', expected legit, "
			 "suspicious, defect, undecided or \"\"",
			 path, kg, verdict);
}

/* The outputs of a computation: its root, or each element of a tuple. */
static size_t root_outputs(const usc_hlo_computation *c)
{
	const usc_hlo_shape *s = &c->root->shape;

	return s->kind == USC_HLO_SHAPE_TUPLE ? s->tuple_count : 1;
}

const usc_hlo_shape *usc__results_hlo_output(const usc_hlo_computation *c,
					     size_t i)
{
	const usc_hlo_shape *s = &c->root->shape;

	if (s->kind == USC_HLO_SHAPE_TUPLE)
		return i < s->tuple_count ? &s->tuple[i] : NULL;
	return i == 0 ? s : NULL;
}

usc_status usc__results_check_ops(const char *path, const char *kg,
				  const usc__h5_op_row *rows, size_t n,
				  const usc_hlo_computation *c,
				  size_t output_count, usc_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].index != (int64_t)i)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/ops: row %zu has index %lld, "
					 "expected %zu (rows are in source "
					 "order)",
					 path, kg, i, (long long)rows[i].index,
					 i);
	if (!c)
		return USC_OK;
	if (n != c->instr_count)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s/ops: %zu row%s, but the kernel's HLO "
				 "has %zu instruction%s",
				 path, kg, n, n == 1 ? "" : "s",
				 c->instr_count,
				 c->instr_count == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const usc_hlo_instr *in = c->instrs[i];
		const char *op = usc_hlo_opcode_name(in->opcode);

		if (strcmp(rows[i].name, in->name) != 0 ||
		    strcmp(rows[i].opcode, op) != 0)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/ops: row %zu is '%s' (%s), but "
					 "instruction %zu of the kernel's HLO "
					 "is '%s' (%s)",
					 path, kg, i, rows[i].name,
					 rows[i].opcode, i, in->name, op);
	}
	if (output_count != root_outputs(c))
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: attribute 'output_count' is %zu, but "
				 "the kernel's HLO has %zu output%s",
				 path, kg, output_count, root_outputs(c),
				 root_outputs(c) == 1 ? "" : "s");
	return USC_OK;
}

/* Formats dtype[d0,d1,...] into buf. */
static void spec_text(char *buf, size_t size, usc_dtype dt, size_t rank,
		      const int64_t *dims)
{
	usc_tensor_spec s;

	memset(&s, 0, sizeof s);
	s.dtype = dt;
	s.rank = rank;
	s.dims = dims;
	usc_tensor_spec_format(&s, buf, size);
}

/*
 * Parses "dtype[d0,d1,...]" (the shape attribute: no layout, no spaces)
 * into rank and dims; false when it is not of that form.
 */
static bool parse_shape(const char *text, usc_dtype want, size_t *rank,
			int64_t *dims)
{
	const char *name = usc_dtype_name(want), *p;
	size_t len = strlen(name);

	if (strncmp(text, name, len) != 0 || text[len] != '[')
		return false;
	p = text + len + 1;
	*rank = 0;
	if (*p == ']')
		return p[1] == '\0';
	for (;;) {
		int64_t v = 0;

		if (*p < '0' || *p > '9' || *rank == USC_TENSOR_MAX_RANK)
			return false;
		while (*p >= '0' && *p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return false;
			v = v * 10 + (*p++ - '0');
		}
		dims[(*rank)++] = v;
		if (*p == ']')
			return p[1] == '\0';
		if (*p++ != ',')
			return false;
	}
}

usc_status usc__results_check_shape(const char *path, const char *g,
				    const char *shape_attr, usc_dtype dt,
				    size_t rank, const int64_t *dims,
				    const usc_hlo_computation *c, size_t i,
				    usc_error *err)
{
	int64_t got[USC_TENSOR_MAX_RANK];
	char want[256], have[256];
	size_t grank = 0;

	spec_text(have, sizeof have, dt, rank, dims);
	if (c) {
		const usc_hlo_shape *s = usc__results_hlo_output(c, i);
		char hlo[256];

		if (!s || s->kind != USC_HLO_SHAPE_ARRAY)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s: the kernel's HLO has no array "
					 "output %zu",
					 path, g, i);
		spec_text(hlo, sizeof hlo, s->dtype, s->rank, s->dims);
		if (s->dtype != dt || s->rank != rank ||
		    (rank && memcmp(s->dims, dims, rank * sizeof *dims) != 0))
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/device: %s (rank %zu), expected "
					 "the kernel's output %zu, %s",
					 path, g, have, rank, i, hlo);
	}
	if (!parse_shape(shape_attr, dt, &grank, got))
		return usc__fail(err, USC_EPARSE,
				 "%s:%s/shape: '%s' is not a shape of %s, "
				 "expected %s",
				 path, g, shape_attr, usc_dtype_name(dt), have);
	if (grank != rank ||
	    (rank && memcmp(got, dims, rank * sizeof *dims) != 0)) {
		spec_text(want, sizeof want, dt, grank, got);
		return usc__fail(err, USC_EPARSE,
				 "%s:%s/shape: %s (rank %zu), expected %s, the "
				 "shape of the device dataset%s",
				 path, g, want, grank, have,
				 c ? " and of the kernel's output" : "");
	}
	return USC_OK;
}

/* Whether two doubles are the same value, NaN equal to NaN. */
static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* Compares the stored statistics of one error array with recomputed ones. */
static usc_status check_stats(const char *path, const char *g,
			      const char *against, const usc_results_stats *s,
			      const usc_results_stats *w, usc_error *err)
{
	static const char *const names[] = {"max_abs_ulp", "median_abs_ulp",
					    "p99_abs_ulp"};
	const double have[] = {s->max_abs, s->median_abs, s->p99_abs};
	const double want[] = {w->max_abs, w->median_abs, w->p99_abs};

	for (size_t k = 0; k < 3; k++)
		if (!same(have[k], want[k]))
			return usc__fail(err, USC_EPARSE,
					 "%s:%s: attribute '%s_%s' is %.17g, "
					 "but ulp_error_%s gives %.17g",
					 path, g, names[k], against, have[k],
					 against, want[k]);
	if (s->nan_count != w->nan_count)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: attribute 'nan_count_ulp_%s' is %llu, "
				 "but ulp_error_%s holds %llu NaN",
				 path, g, against,
				 (unsigned long long)s->nan_count, against,
				 (unsigned long long)w->nan_count);
	return USC_OK;
}

/* The oracle's enclosure, the errors and the undecided flags. */
static usc_status check_oracle(const char *path, const char *g,
			       const usc_results_output_data *o,
			       usc_error *err)
{
	for (uint64_t k = 0; k < o->count; k++) {
		double mid = o->oracle_mid[k], rad = o->oracle_rad[k];

		/* An error against a NaN oracle is undefined (NaN). */
		if (isnan(mid) && !isnan(o->ulp_error_oracle[k]))
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/oracle_mid: element %llu is "
					 "NaN, but ulp_error_oracle there is "
					 "%.17g (an error against a NaN oracle "
					 "is NaN)",
					 path, g, (unsigned long long)k,
					 o->ulp_error_oracle[k]);
		if (rad < 0)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/oracle_rad: element %llu is "
					 "%.17g, expected a half-width >= 0",
					 path, g, (unsigned long long)k, rad);
		if (o->undecided[k] > 1)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/undecided: element %llu is %u, "
					 "expected 0 or 1",
					 path, g, (unsigned long long)k,
					 o->undecided[k]);
	}
	return USC_OK;
}

/* The envelope's bounds against its flags, and lo <= hi. */
static usc_status check_envelope(const char *path, const char *g,
				 const usc_results_output_data *o,
				 usc_error *err)
{
	for (uint64_t k = 0; k < o->count; k++) {
		double lo = o->envelope_lo[k], hi = o->envelope_hi[k];
		unsigned fl = o->envelope_flags[k];
		bool fin = (fl & USC_ENV_FINITE) && !(fl & USC_ENV_UNKNOWN);
		unsigned long long e = (unsigned long long)k;

		if (!fin) {
			if (!isnan(lo) || !isnan(hi))
				return usc__fail(
					err, USC_EPARSE,
					"%s:%s/envelope_%s: element %llu is "
					"%.17g, but envelope_flags 0x%02x "
					"allows no finite value there (NaN "
					"expected)",
					path, g, isnan(lo) ? "hi" : "lo", e,
					isnan(lo) ? hi : lo, fl);
			continue;
		}
		if (!isfinite(lo) || !isfinite(hi))
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/envelope_%s: element %llu is "
					 "%.17g, expected a finite bound "
					 "(envelope_flags 0x%02x allows finite "
					 "values)",
					 path, g, isfinite(lo) ? "hi" : "lo", e,
					 isfinite(lo) ? hi : lo, fl);
		if (lo > hi)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/envelope_lo: element %llu is "
					 "%.17g, above envelope_hi's %.17g "
					 "(expected lo <= hi)",
					 path, g, e, lo, hi);
	}
	return USC_OK;
}

usc_status usc__results_check_values(usc__h5_file *f, const char *g,
				     const usc_results_output_data *o,
				     size_t attr_ops, usc_error *err)
{
	const char *path = usc__h5_file_path(f);
	usc_results_output v;
	usc_results_summary s;
	usc_status st;

	st = check_oracle(path, g, o, err);
	if (st == USC_OK && o->cls)
		st = check_envelope(path, g, o, err);
	if (st != USC_OK)
		return st;
	memset(&v, 0, sizeof v);
	v.device = o->device;
	v.reference = o->reference;
	v.oracle_mid = o->oracle_mid;
	v.oracle_rad = o->oracle_rad;
	v.ulp_error_oracle = o->ulp_error_oracle;
	v.ulp_error_reference = o->ulp_error_reference;
	v.undecided = o->undecided;
	st = usc_results_summarize(&v, &s, err);
	if (st != USC_OK)
		return st;
	st = check_stats(path, g, "oracle", &o->summary.oracle, &s.oracle,
			 err);
	if (st == USC_OK)
		st = check_stats(path, g, "reference", &o->summary.reference,
				 &s.reference, err);
	if (st != USC_OK)
		return st;
	if (o->summary.bit_exact_count != s.bit_exact_count)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: attribute 'bit_exact_count' is %llu, "
				 "but device and reference agree on %llu "
				 "elements",
				 path, g,
				 (unsigned long long)o->summary.bit_exact_count,
				 (unsigned long long)s.bit_exact_count);
	if (o->summary.undecided_count != s.undecided_count)
		return usc__fail(err, USC_EPARSE,
				 "%s:%s: attribute 'undecided_count' is %llu, "
				 "but undecided holds %llu ones",
				 path, g,
				 (unsigned long long)o->summary.undecided_count,
				 (unsigned long long)s.undecided_count);
	if (o->cls) {
		uint64_t n[USC_CLASS_COUNT] = {0};

		for (uint64_t k = 0; k < o->count; k++)
			n[o->cls[k]]++;
		for (int c = 0; c < USC_CLASS_COUNT; c++) {
			char name[64];
			uint64_t stored = 0;

			snprintf(name, sizeof name, "class_count_%s",
				 usc_class_name((usc_class)c));
			st = usc__h5_attr_get_uint(f, g, name, &stored, err);
			if (st != USC_OK)
				return st;
			if (stored != n[c])
				return usc__fail(err, USC_EPARSE,
						 "%s:%s: attribute '%s' is "
						 "%llu, but class holds %llu",
						 path, g, name,
						 (unsigned long long)stored,
						 (unsigned long long)n[c]);
		}
	}
	for (uint64_t k = 0; o->top_ops && k < o->count * o->top_k; k++)
		if (o->top_ops[k] != UINT32_MAX && o->top_ops[k] >= attr_ops)
			return usc__fail(err, USC_EPARSE,
					 "%s:%s/top_ops: element %llu is %u, "
					 "but the attribution table has %zu "
					 "rows",
					 path, g, (unsigned long long)k,
					 o->top_ops[k], attr_ops);
	return USC_OK;
}
