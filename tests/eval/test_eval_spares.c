/*
 * The spare value arrays of an evaluator (src/eval/buffers.c, "spares")
 * never raise its peak: at every step the large arrays its buffers hold
 * and the spares it keeps together stay within the most its buffers have
 * held at once, counted at the arrays' real sizes; and an array another
 * evaluator counts is freed, not kept.  The sizes are hand-chosen: 2 MB
 * released, then 3 MB asked (no spare fits, so the 2 MB one must go
 * first), then 2.5 MB asked (the 3 MB spare fits and is counted as 3 MB).
 * AddressSanitizer's run of this test also checks that nothing is freed
 * twice or lost.
 */
#include "eval/eval_test_util.h"

#include "eval/eval_internal.h"

#define MB ((size_t)1 << 20)

static const char *text = "ENTRY main {\n"
			  "  x = f32[4] parameter(0)\n"
			  "  ROOT y = f32[4] negate(x)\n"
			  "}\n";

/* The invariant, and the counts the step must leave. */
static void expect_counts(const usc_eval *ev, size_t live, size_t spare,
			  size_t peak, const char *step)
{
	if (ev->live_bytes != live || ev->spare_bytes != spare ||
	    ev->peak_bytes != peak)
		fail_msg("%s: live %zu spare %zu peak %zu, want %zu %zu %zu",
			 step, ev->live_bytes, ev->spare_bytes, ev->peak_bytes,
			 live, spare, peak);
	assert_true(ev->live_bytes + ev->spare_bytes <= ev->peak_bytes);
}

static usc__ebuf *new_buf(usc_eval *ev, size_t bytes)
{
	usc__ebuf *b = NULL;
	usc_error err;

	assert_int_equal(usc__ebuf_new(ev, USC_F32, bytes / ev->dom->value_size,
				       &b, &err),
			 USC_OK);
	return b;
}

static void test_spares_within_peak(void **state)
{
	usc_hlo_file *f;
	usc_eval *ev = tcreate(text, &f, NULL);
	size_t vs = ev->dom->value_size;
	size_t two = 2 * MB / vs * vs, three = 3 * MB / vs * vs;
	size_t half = 5 * MB / 2 / vs * vs;
	usc__ebuf *b;

	(void)state;
	/* The domain must be one whose arrays can be spares. */
	assert_null(ev->dom->init);
	assert_null(ev->dom->clear);
	expect_counts(ev, 0, 0, 0, "start");
	b = new_buf(ev, two);
	expect_counts(ev, two, 0, two, "2 MB held");
	usc__ebuf_release(ev, b);
	expect_counts(ev, 0, two, two, "2 MB released: a spare");
	/* 3 MB: the 2 MB spare does not fit, and keeping it would make 5. */
	b = new_buf(ev, three);
	expect_counts(ev, three, 0, three, "3 MB held, the spare freed");
	usc__ebuf_release(ev, b);
	expect_counts(ev, 0, three, three, "3 MB released: a spare");
	/* 2.5 MB takes the 3 MB spare, which counts 3 MB while held. */
	b = new_buf(ev, half);
	assert_int_equal(b->cap, three);
	expect_counts(ev, three, 0, three, "2.5 MB in the 3 MB spare");
	usc__ebuf_release(ev, b);
	expect_counts(ev, 0, three, three, "the 3 MB spare back");
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
}

static void test_foreign_array_freed(void **state)
{
	usc_hlo_file *f, *g;
	usc_eval *ev = tcreate(text, &f, NULL);
	usc_eval *other = tcreate(text, &g, NULL);
	size_t two = 2 * MB / ev->dom->value_size * ev->dom->value_size;
	usc__ebuf *mine, *theirs;

	(void)state;
	mine = new_buf(ev, two);
	theirs = new_buf(other, two);
	expect_counts(other, two, 0, two, "the other's 2 MB");
	/* Released by ev: freed, and neither count moves. */
	usc__ebuf_release(ev, theirs);
	expect_counts(ev, two, 0, two, "a foreign array released");
	expect_counts(other, two, 0, two, "the other, untouched");
	usc__ebuf_release(ev, mine);
	expect_counts(ev, 0, two, two, "its own array released");
	usc_eval_destroy(other);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(g);
	usc_hlo_file_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spares_within_peak),
		cmocka_unit_test(test_foreign_array_freed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
