/*
 * The fold of a streamed check's pieces (src/analyze/check_fold.c): each
 * piece's thread keeps the piece's own worst list and verdict candidate,
 * and the calling thread merges them in piece order.  That must keep what
 * offering every element in order keeps, ties included: the whole check
 * (one part, every element offered in order) is the yardstick.
 *
 * The kernel multiplies two f32 vectors whose values repeat with a short
 * period, so that many elements have the same error and tie in the worst
 * lists, across pieces; the device output is the correctly rounded
 * product (computed here in double: the product of two f32 values is
 * exact in double, so rounding it once to f32 is the correct rounding)
 * moved by one code on some elements, by two (outside the xla-cpu
 * envelope: defects, which rank by their steps outside) on others, and a
 * NaN on a few (NaN mismatches).  Every element is kept (worst larger than
 * the output) as well as a short list, under the profile and without,
 * streamed in pieces of 64 to 768 elements on 1, 2 and 3 threads, whose
 * work counts must also be one thread's.
 *
 * Independently of the code under test, the complete unclassified list
 * must be the elements ordered by |error against the oracle|, NaN first,
 * ties in index order, and the classified one by class rank first.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ulpscope/check.h"
#include "ulpscope/profile.h"
#include "ulpscope/tensor.h"

#define N 4096

static const char hlo[] = "HloModule fold\n\n"
			  "ENTRY e {\n"
			  "  x = f32[4096] parameter(0)\n"
			  "  y = f32[4096] parameter(1)\n"
			  "  ROOT r = f32[4096] multiply(x, y)\n"
			  "}\n";

static char hlo_path[] = "/tmp/usc_fold_XXXXXX";
static usc_tensor *in[2], *dev;
static usc_profile xla_cpu;

static float bits_f(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof f);
	return f;
}

static uint32_t f_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof b);
	return b;
}

static int setup(void **state)
{
	int64_t dim = N;
	usc_error err;
	float *x, *y, *d;
	int fd = mkstemp(hlo_path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, hlo, sizeof hlo - 1), (ssize_t)(sizeof hlo - 1));
	close(fd);
	for (int k = 0; k < 2; k++)
		assert_int_equal(usc_tensor_create(USC_F32, 1, &dim, &in[k],
						   &err),
				 USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 1, &dim, &dev, &err),
			 USC_OK);
	x = usc_tensor_data(in[0]);
	y = usc_tensor_data(in[1]);
	d = usc_tensor_data(dev);
	for (int i = 0; i < N; i++) {
		uint32_t b;

		/* Periods 8 and 5: the figures repeat every 40 elements. */
		x[i] = 1.0f + (float)(i % 8) * 0x1.3p-7f;
		y[i] = 3.0f - (float)(i % 5) * 0x1.7p-6f;
		b = f_bits((float)((double)x[i] * (double)y[i]));
		if (i % 97 == 0)
			d[i] = NAN;
		else if (i % 11 == 0)
			d[i] = bits_f(b + 2);
		else if (i % 7 == 0)
			d[i] = bits_f(b + 1);
		else
			d[i] = bits_f(b);
	}
	assert_int_equal(usc_profile_resolve("xla-cpu", &xla_cpu, &err),
			 USC_OK);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(hlo_path);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
	usc_tensor_destroy(dev);
	return 0;
}

static usc_check_report *run(bool classified, size_t worst, bool stream,
			     size_t piece, size_t threads)
{
	usc_check_request q = usc_check_request_default();
	const usc_tensor *const ins[2] = {in[0], in[1]};
	const usc_tensor *const devs[1] = {dev};
	usc_check_report *r = NULL;
	usc_error err;

	q.hlo_path = hlo_path;
	q.input_count = 2;
	q.input_tensors = ins;
	q.device_count = 1;
	q.device_tensors = devs;
	q.worst = worst;
	q.profile = classified ? &xla_cpu : NULL;
	q.tile_elements = 64;
	q.stream = stream;
	q.stream_piece = piece;
	q.threads = threads;
	if (usc_check_run(&q, &r, &err) != USC_OK)
		fail_msg("check: %s", err.message);
	assert_int_equal(r->output_count, 1);
	return r;
}

static void same_element(const usc_check_element *a,
			 const usc_check_element *b)
{
	assert_int_equal(a->index, b->index);
	assert_int_equal(a->device_bits, b->device_bits);
	assert_int_equal(a->cls, b->cls);
	assert_memory_equal(&a->ulp_oracle, &b->ulp_oracle, sizeof(double));
	assert_memory_equal(&a->ulp_reference, &b->ulp_reference,
			    sizeof(double));
	assert_memory_equal(&a->outside_ulps, &b->outside_ulps,
			    sizeof(double));
}

/* Everything the fold makes, of a streamed report against the whole one. */
static void same_fold(const usc_check_report *w, const usc_check_report *s)
{
	const usc_check_output *a = &w->outputs[0], *b = &s->outputs[0];

	assert_true(s->streamed);
	assert_int_equal(a->worst_count, b->worst_count);
	for (size_t k = 0; k < a->worst_count; k++)
		same_element(&a->worst[k], &b->worst[k]);
	assert_int_equal(a->summary.bit_exact_count,
			 b->summary.bit_exact_count);
	assert_int_equal(a->summary.undecided_count,
			 b->summary.undecided_count);
	assert_memory_equal(&a->summary.oracle, &b->summary.oracle,
			    sizeof a->summary.oracle);
	assert_memory_equal(&a->summary.reference, &b->summary.reference,
			    sizeof a->summary.reference);
	assert_memory_equal(&a->counts, &b->counts, sizeof a->counts);
	assert_int_equal(w->verdict, s->verdict);
	assert_string_equal(w->reason, s->reason);
}

/*
 * The work counts of two streamed checks of the same piece size, on one
 * thread and on several: on several the last pieces of this loop kernel
 * are cut smaller (src/analyze/check_threads.c, cut_init), which must
 * change no count either.
 */
static void same_work(const usc_check_report *a, const usc_check_report *b)
{
	assert_int_equal(a->oracle_precision, b->oracle_precision);
	assert_int_equal(a->reference_functions, b->reference_functions);
	assert_int_equal(a->reference_escalated, b->reference_escalated);
	assert_int_equal(a->envelope_fast, b->envelope_fast);
	assert_int_equal(a->envelope_escalated, b->envelope_escalated);
	assert_int_equal(a->outputs[0].oracle_elements,
			 b->outputs[0].oracle_elements);
	assert_int_equal(a->outputs[0].tier_decided,
			 b->outputs[0].tier_decided);
}

static int class_rank(usc_class c)
{
	switch (c) {
	case USC_CLASS_NAN_MISMATCH:
	case USC_CLASS_INF_MISMATCH:
	case USC_CLASS_SIGN_MISMATCH:
	case USC_CLASS_DEFECT:
		return 4;
	case USC_CLASS_SUSPICIOUS:
		return 3;
	case USC_CLASS_UNDECIDED:
		return 2;
	case USC_CLASS_ENVELOPE:
	case USC_CLASS_ROUNDING:
		return 1;
	default:
		return 0;
	}
}

/*
 * The complete list, by the documented order (docs/check.md): class rank
 * (classified), steps outside the envelope for the heaviest rank,
 * |error against the oracle| with NaN first; ties in index order.
 */
static void ordered(const usc_check_report *r, bool classified)
{
	const usc_check_output *o = &r->outputs[0];
	size_t ties = 0;

	assert_int_equal(o->worst_count, N);
	for (size_t k = 1; k < o->worst_count; k++) {
		const usc_check_element *p = &o->worst[k - 1], *q = &o->worst[k];
		int rp = classified ? class_rank(p->cls) : 0;
		int rq = classified ? class_rank(q->cls) : 0;
		double ep = p->ulp_oracle, eq = q->ulp_oracle;
		int cmp; /* > 0: p before q by the order, 0: a tie */

		if (rp != rq)
			cmp = rp > rq ? 1 : -1;
		else if (rp == 4 && p->outside_ulps != q->outside_ulps)
			cmp = p->outside_ulps > q->outside_ulps ? 1 : -1;
		else if (isnan(ep) || isnan(eq))
			cmp = isnan(ep) && isnan(eq) ? 0 : isnan(ep) ? 1 : -1;
		else
			cmp = fabs(ep) > fabs(eq) ? 1 : fabs(ep) < fabs(eq) ? -1 : 0;
		assert_true(cmp >= 0);
		if (cmp == 0) {
			assert_true(p->index < q->index);
			ties++;
		}
	}
	/* The kernel is made for ties: most neighbours must be. */
	assert_true(ties > N / 2);
}

static void test_fold(void **state)
{
	/*
	 * Pieces of 1, 3, 4, 10 and 12 tiles of 64 elements: on threads the
	 * last three are cut smaller at the end (pieces of 1, 2 and 3 tiles,
	 * the last of 768's a shorter one).
	 */
	static const size_t pieces[] = {64, 192, 256, 640, 768};
	static const size_t threads[] = {1, 2, 3};

	(void)state;
	for (int cl = 0; cl < 2; cl++) {
		usc_check_report *all = run(cl, N + 10, false, 0, 1);
		usc_check_report *few = run(cl, 6, false, 0, 1);

		ordered(all, cl);
		if (cl) {
			/* The kernel is meant to hold every kind of rank. */
			assert_true(all->outputs[0].counts.n[USC_CLASS_DEFECT] > 0);
			assert_true(
				all->outputs[0].counts.n[USC_CLASS_NAN_MISMATCH] > 0);
			assert_true(all->outputs[0].counts.n[USC_CLASS_EXACT] > 0);
		}
		for (size_t p = 0; p < 5; p++) {
			usc_check_report *one =
				run(cl, N + 10, true, pieces[p], 1);

			for (size_t t = 0; t < 3; t++) {
				size_t pc = pieces[p], th = threads[t];
				usc_check_report *s;

				s = run(cl, N + 10, true, pc, th);
				same_fold(all, s);
				same_work(one, s);
				usc_check_report_destroy(s);
				s = run(cl, 6, true, pc, th);
				same_fold(few, s);
				same_work(one, s);
				usc_check_report_destroy(s);
			}
			usc_check_report_destroy(one);
		}
		usc_check_report_destroy(all);
		usc_check_report_destroy(few);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fold, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
