/*
 * The ranking a batch ends with (include/ulpscope/batch.h): runs grouped
 * by their kernel's HLO text, the worst kernels first, and the ops that
 * attribution names most often as a case's top culprit.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_internal.h"

static const char *str(const char *s)
{
	return s ? s : "";
}

/* Mildest 0; the order of the ranking's groups, worst highest. */
static int severity(const usc_batch_kernel_rank *k)
{
	if (k->defects)
		return 4;
	if (k->suspicious)
		return 3;
	if (k->failed)
		return 2;
	if (k->undecided)
		return 1;
	return 0;
}

static double worst_of(double a)
{
	return isnan(a) ? -1 : a;
}

static int kernel_order(const void *x, const void *y)
{
	const usc_batch_kernel_rank *a = x, *b = y;
	int sa = severity(a), sb = severity(b);
	double wa = worst_of(a->max_ulp_oracle), wb = worst_of(b->max_ulp_oracle);

	if (sa != sb)
		return sb - sa;
	if (wa != wb)
		return wa < wb ? 1 : -1;
	return strcmp(a->hlo_hash, b->hlo_hash);
}

static int op_order(const void *x, const void *y)
{
	const usc_batch_op_rank *a = x, *b = y;
	int c;

	if (a->cases != b->cases)
		return a->cases < b->cases ? 1 : -1;
	if (a->share_sum != b->share_sum)
		return a->share_sum < b->share_sum ? 1 : -1;
	c = strcmp(a->hlo_hash, b->hlo_hash);
	return c ? c : strcmp(a->op, b->op);
}

static bool is(const char *v, const char *what)
{
	return v && strcmp(v, what) == 0;
}

static double max_nan(double a, double b)
{
	if (isnan(a))
		return b;
	return b > a ? b : a;
}

usc_status usc_batch_rank(const usc_batch_result *b,
			  usc_batch_kernel_rank **kernels, size_t *kernel_count,
			  usc_batch_op_rank **ops, size_t *op_count,
			  usc_error *err)
{
	size_t n = b->row_count, nk = 0, no = 0;
	usc_batch_kernel_rank *k = usc__calloc(n ? n : 1, sizeof *k);
	usc_batch_op_rank *o = usc__calloc(n ? n : 1, sizeof *o);

	*kernels = NULL;
	*ops = NULL;
	*kernel_count = *op_count = 0;
	if (!k || !o) {
		usc__free(k);
		usc__free(o);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	/* Groups by hash, linear in the groups: batches have few kernels
	 * compared with their runs, and this runs once. */
	for (size_t i = 0; i < n; i++) {
		const usc_batch_row *r = &b->rows[i];
		const char *h = str(r->hlo_hash);
		usc_batch_kernel_rank *g = NULL;

		for (size_t j = 0; j < nk && !g; j++)
			if (strcmp(k[j].hlo_hash, h) == 0)
				g = &k[j];
		if (!g) {
			g = &k[nk++];
			g->hlo_hash = h;
			g->kernel = str(r->kernel);
			g->max_ulp_reference = g->max_ulp_oracle = NAN;
			g->worst_row = i;
		}
		if (!g->kernel[0] && r->kernel)
			g->kernel = r->kernel;
		g->runs++;
		g->seconds += isnan(r->seconds) ? 0 : r->seconds;
		if (r->status != USC_BATCH_OK)
			g->failed++;
		else if (is(r->verdict, "defect"))
			g->defects++;
		else if (is(r->verdict, "suspicious"))
			g->suspicious++;
		else if (is(r->verdict, "undecided"))
			g->undecided++;
		if (worst_of(r->max_ulp_oracle) >
		    worst_of(b->rows[g->worst_row].max_ulp_oracle))
			g->worst_row = i;
		g->max_ulp_reference = max_nan(g->max_ulp_reference,
					       r->max_ulp_reference);
		g->max_ulp_oracle = max_nan(g->max_ulp_oracle,
					    r->max_ulp_oracle);
		if (r->culprit && r->culprit[0]) {
			usc_batch_op_rank *p = NULL;

			for (size_t j = 0; j < no && !p; j++)
				if (strcmp(o[j].hlo_hash, h) == 0 &&
				    strcmp(o[j].op, r->culprit) == 0)
					p = &o[j];
			if (!p) {
				p = &o[no++];
				p->hlo_hash = h;
				p->kernel = g->kernel;
				p->op = r->culprit;
			}
			p->cases++;
			p->share_sum += isnan(r->culprit_share)
						? 0
						: r->culprit_share;
		}
	}
	qsort(k, nk, sizeof *k, kernel_order);
	qsort(o, no, sizeof *o, op_order);
	*kernels = k;
	*kernel_count = nk;
	*ops = o;
	*op_count = no;
	return USC_OK;
}
