/*
 * The fold of a check's pieces (docs/check.md, "Threads"): what each
 * piece's figures add to the report and the result file, in two halves.
 *
 * The first half, usc__check_part_summarize, walks every element of a
 * computed part and keeps what the report needs of them: the bit-exact
 * and undecided counts, the part's own worst list and its candidate for
 * the verdict's element, and the envelope's columns as the result file
 * stores them.  It runs on the thread that computed the part, so on
 * several threads it runs in parallel like the rest of the piece.
 *
 * The second half, usc__check_piece_fold, runs on the calling thread
 * alone and strictly in piece order: it adds the counts, merges the
 * part's worst list and candidate into the report's, feeds the
 * statistics' accumulators and writes the rows.  Merging gives what
 * offering every element in order gave: the worst list keeps the worst
 * elements by usc__check_worse with ties to the earlier element (a
 * stable top k), and an element outside a part's own top k has k
 * elements of the same part before it in that order, so it is outside
 * the whole output's top k too; the verdict's candidate is the first
 * worst element, which is the first worst among the parts' first worst.
 * The counts are sums.  So the report and the result file stay the same
 * bit for bit (test_check_threads, test_check_stream).
 *
 * The statistics' accumulators are the exception to the order: each of
 * their figures (the count, the NaN count, the largest |error|, the
 * median and p99 as ranks of the values) is the same for the same values
 * added in any order, so on several threads the thread that computed a
 * piece adds its errors (usc__check_part_stats, under a lock) and the
 * fold skips them.  That takes the largest share of the fold (a pass
 * over every element, and the first touch of the accumulators' memory)
 * off the calling thread (test_check_stats_order holds the
 * order-freedom).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "analyze/check_internal.h"

/*
 * How many of n encodings of w bytes are the same in a and b: one loop per
 * common width, so that the compiler compares whole words.
 */
static uint64_t bit_exact(const unsigned char *a, const unsigned char *b,
			  size_t w, size_t n)
{
	uint64_t same = 0;

	switch (w) {
	case 1:
		for (size_t j = 0; j < n; j++)
			same += a[j] == b[j];
		return same;
	case 2:
		for (size_t j = 0; j < n; j++) {
			uint16_t x, y;

			memcpy(&x, a + 2 * j, 2);
			memcpy(&y, b + 2 * j, 2);
			same += x == y;
		}
		return same;
	case 4:
		for (size_t j = 0; j < n; j++) {
			uint32_t x, y;

			memcpy(&x, a + 4 * j, 4);
			memcpy(&y, b + 4 * j, 4);
			same += x == y;
		}
		return same;
	default:
		for (size_t j = 0; j < n; j++)
			same += memcmp(a + j * w, b + j * w, w) == 0;
		return same;
	}
}

/*
 * Inserts el into the list (m of at most k kept, worst first) after every
 * element it is not worse than: the stable top k.
 */
static void worst_insert(usc_check_element *list, size_t *m, size_t k,
			 const usc_check_element *el, bool cl)
{
	size_t pos = *m;

	while (pos > 0 && usc__check_worse(el, &list[pos - 1], cl))
		pos--;
	if (pos >= k)
		return;
	if (*m < k)
		(*m)++;
	memmove(&list[pos + 1], &list[pos], (*m - 1 - pos) * sizeof *list);
	list[pos] = *el;
}

/* Offers element j of a part to the part's own worst list. */
static void offer_worst(usc__check_part *p, size_t j, bool cl)
{
	size_t k = p->worst_cap, m = p->worst_count;
	usc_check_element el;

	if (k == 0)
		return;
	if (m == k) {
		/* Most elements lose against the last one kept, cheaply. */
		const usc_check_element *last = &p->worst[m - 1];
		double e = p->ulp_oracle[j], l = last->ulp_oracle;
		int rk = cl ? usc__check_class_rank((usc_class)p->cls[j]) : 0;
		int rl = cl ? usc__check_class_rank(last->cls) : 0;

		if (rk < rl)
			return;
		if (rk == rl && rk < 4 &&
		    !(isnan(e) || isnan(l)
			      ? isnan(e) && !isnan(l)
			      : fabs(e) > fabs(l)))
			return;
	}
	usc__check_element(p, j, cl, &el);
	worst_insert(p->worst, &p->worst_count, k, &el, cl);
}

void usc__check_part_summarize(const usc__check_run *c, usc__check_part *p,
			       size_t output)
{
	const usc_check_output *o = p->o;
	size_t w = (size_t)usc_format_of(usc_tensor_dtype(o->device))
			   ->container_bytes;
	bool cl = c->r->classified;
	uint64_t und = 0;

	p->bit_exact = bit_exact((const unsigned char *)usc_tensor_cdata(
					 o->device) +
					 p->base * w,
				 usc_tensor_cdata(p->reference), w, p->len);
	for (size_t j = 0; j < p->len; j++)
		und += p->undecided[j] != 0;
	p->undecided_count = und;
	p->worst_count = 0;
	p->stats_added = false;
	memset(&p->why, 0, sizeof p->why);
	for (size_t j = 0; j < p->len; j++) {
		offer_worst(p, j, cl);
		if (cl)
			usc__check_reason_offer(&p->why, output, p, j);
	}
	if (cl && p->col_lo)
		usc__check_envelope_columns(p->envelope, p->len, p->col_lo,
					    p->col_hi, p->col_flags);
}

/* Writes a streamed piece p of output i to the result file. */
static usc_status write_piece(usc__check_run *c, const usc__check_part *p,
			      size_t i, usc_error *err)
{
	usc_results_rows rows;

	memset(&rows, 0, sizeof rows);
	rows.reference = usc_tensor_cdata(p->reference);
	rows.oracle_mid = p->oracle_mid;
	rows.oracle_rad = p->oracle_rad;
	rows.ulp_error_oracle = p->ulp_oracle;
	rows.ulp_error_reference = p->ulp_reference;
	rows.undecided = p->undecided;
	if (c->r->classified) {
		rows.envelope_lo = p->col_lo;
		rows.envelope_hi = p->col_hi;
		rows.envelope_flags = p->col_flags;
		rows.cls = p->cls;
	}
	return usc_results_write_rows(c->w, i, p->len, &rows, err);
}

usc_status usc__check_part_stats(usc__check_run *c, usc__check_part *parts,
				 usc_error *err)
{
	usc_status st = USC_OK;

	for (size_t i = 0; st == USC_OK && i < c->r->output_count; i++) {
		usc__check_part *p = &parts[i];

		st = usc_results_stats_acc_add(c->acc[2 * i], p->ulp_oracle,
					       p->len, err);
		if (st == USC_OK)
			st = usc_results_stats_acc_add(c->acc[2 * i + 1],
						       p->ulp_reference, p->len,
						       err);
		p->stats_added = st == USC_OK;
	}
	return st;
}

usc_status usc__check_piece_fold(usc__check_run *c, usc__check_part *parts,
				 usc_error *err)
{
	usc_check_report *r = c->r;
	bool cl = r->classified;
	usc_status st = USC_OK;

	for (size_t i = 0; st == USC_OK && i < r->output_count; i++) {
		usc__check_part *p = &parts[i];
		usc_check_output *o = p->o;

		if (!p->stats_added) {
			st = usc_results_stats_acc_add(c->acc[2 * i],
						       p->ulp_oracle, p->len,
						       err);
			if (st == USC_OK)
				st = usc_results_stats_acc_add(
					c->acc[2 * i + 1], p->ulp_reference,
					p->len, err);
		}
		p->stats_added = false;
		if (st != USC_OK)
			break;
		o->summary.bit_exact_count += p->bit_exact;
		o->summary.undecided_count += p->undecided_count;
		for (size_t n = 0; n < p->worst_count; n++)
			worst_insert(o->worst, &o->worst_count, c->req->worst,
				     &p->worst[n], cl);
		if (cl)
			usc__check_reason_merge(&c->why_out[i], i, &p->why);
		o->tier_decided += p->tier_decided;
		if (c->w)
			st = write_piece(c, p, i, err);
	}
	return st;
}
