/*
 * Ties of unstable sorts and TopK (src/eval/sort.c, "the device's
 * order"): given the device's outputs (usc__eval_follow_device), a
 * reference run puts each group of equal-comparing elements in the
 * device's order when the sort is not stable and its results are
 * outputs, and every domain follows; a stable sort keeps its one order;
 * a device whose group is no permutation of the reference's keeps the
 * reference's members where it has none alike; a result that feeds
 * further ops and differs within a tie group makes the envelope domain
 * refuse the run.  Expected values are derived by hand in the comments.
 */
#include "eval_test_util.h"

#include "eval/eval_values.h"

/*
 * Runs text in domain d on in, following the device's outputs dev (ndev
 * of them; 0: none): *follows must be want_follows, and output `which`
 * must be expect (n values of type t), bit for bit.
 */
static void run_dev(const char *text, usc_tensor **in, size_t nin,
		    usc_tensor **dev, size_t ndev, usc_eval_domain d,
		    bool want_follows, size_t which, usc_dtype t, size_t n,
		    const double *expect)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_error err;
	bool follows = !want_follows;
	char what[32];

	o.domain = d;
	ev = tcreate(text, &f, &o);
	if (usc_eval_bind_all(ev, (const usc_tensor *const *)in, nin, &err) !=
	    USC_OK)
		fail_msg("bind: %s", err.message);
	assert_int_equal(usc__eval_follow_device(
				 ev, (const usc_tensor *const *)dev, ndev,
				 &follows),
			 USC_OK);
	assert_int_equal(follows, want_follows);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run (domain %d): %s", (int)d, err.message);
	snprintf(what, sizeof what, "domain %d, ", (int)d);
	texpect(ev, which, t, n, expect, what);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
}

/* run_dev in every domain. */
static void run_all_dev(const char *text, usc_tensor **in, size_t nin,
			usc_tensor **dev, size_t ndev, bool want_follows,
			size_t which, usc_dtype t, size_t n,
			const double *expect)
{
	for (size_t d = 0; d < ARRAY_LEN(all_domains); d++)
		run_dev(text, in, nin, dev, ndev, all_domains[d], want_follows,
			which, t, n, expect);
}

/* Keys with a payload along dimension 1, by key; STABLE is spliced in. */
#define SORT2(STABLE)                                                        \
	"HloModule m\n"                                                      \
	"lt {\n"                                                             \
	"  a = f32[] parameter(0)\n"                                         \
	"  b = f32[] parameter(1)\n"                                         \
	"  c = s32[] parameter(2)\n"                                         \
	"  d = s32[] parameter(3)\n"                                         \
	"  ROOT r = pred[] compare(a, b), direction=LT\n"                    \
	"}\n"                                                                \
	"ENTRY main {\n"                                                     \
	"  k = f32[2,4] parameter(0)\n"                                      \
	"  v = s32[2,4] parameter(1)\n"                                      \
	"  ROOT s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}" STABLE \
	", to_apply=lt\n"                                                    \
	"}\n"

/*
 * Row 0: keys 3 1 2 1 with payloads 0 1 2 3; sorted, the 1s (payloads 1
 * and 3) tie.  Row 1: keys 0 -1 5 4, no ties: payloads 5 4 7 6.
 */
static void inputs(usc_tensor **in)
{
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 1, 2, 1, 0, -1, 5, 4));
	in[1] = tmk(USC_S32, 2, D(2, 4), V(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The device put the tied 1s the other way: payloads 3 1 2 0. */
static void swapped_device(usc_tensor **dev)
{
	dev[0] = tmk(USC_F32, 2, D(2, 4), V(1, 1, 2, 3, -1, 0, 4, 5));
	dev[1] = tmk(USC_S32, 2, D(2, 4), V(3, 1, 2, 0, 5, 4, 7, 6));
}

static void test_unstable_follows_device(void **state)
{
	usc_tensor *in[2], *dev[2];

	(void)state;
	inputs(in);
	swapped_device(dev);
	/* No device: the stable order, payloads 1 3 2 0. */
	run_all_dev(SORT2(""), in, 2, NULL, 0, false, 1, USC_S32, 8,
		    V(1, 3, 2, 0, 5, 4, 7, 6));
	/* The device's: 3 1 2 0, in every domain. */
	run_all_dev(SORT2(""), in, 2, dev, 2, true, 1, USC_S32, 8,
		    V(3, 1, 2, 0, 5, 4, 7, 6));
	run_all_dev(SORT2(", is_stable=false"), in, 2, dev, 2, true, 0,
		    USC_F32, 8, V(1, 1, 2, 3, -1, 0, 4, 5));
	tdrop(in, 2);
	tdrop(dev, 2);
	/* Negative payloads (-1 and -3 tie) match by their s32 encodings. */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 1, 2, 1, 0, -1, 5, 4));
	in[1] = tmk(USC_S32, 2, D(2, 4), V(0, -1, 2, -3, 4, 5, 6, 7));
	dev[0] = tmk(USC_F32, 2, D(2, 4), V(1, 1, 2, 3, -1, 0, 4, 5));
	dev[1] = tmk(USC_S32, 2, D(2, 4), V(-3, -1, 2, 0, 5, 4, 7, 6));
	run_all_dev(SORT2(""), in, 2, dev, 2, true, 1, USC_S32, 8,
		    V(-3, -1, 2, 0, 5, 4, 7, 6));
	tdrop(in, 2);
	tdrop(dev, 2);
}

static void test_stable_keeps_order(void **state)
{
	usc_tensor *in[2], *dev[2];

	(void)state;
	inputs(in);
	swapped_device(dev);
	/* is_stable=true: the payloads stay 1 3 2 0 whatever the device. */
	run_all_dev(SORT2(", is_stable=true"), in, 2, dev, 2, false, 1,
		    USC_S32, 8, V(1, 3, 2, 0, 5, 4, 7, 6));
	tdrop(in, 2);
	tdrop(dev, 2);
}

static void test_device_not_a_permutation(void **state)
{
	usc_tensor *in[2], *dev[2], *bad[2];

	(void)state;
	inputs(in);
	/*
	 * Row 0's device payloads 3 2 ...: position 0 (payload 3) is a
	 * member of the tie group {1, 3}, position 1 (payload 2) is none,
	 * so it takes the member left, 1: 3 1 2 0.
	 */
	dev[0] = tmk(USC_F32, 2, D(2, 4), V(1, 1, 2, 3, -1, 0, 4, 5));
	dev[1] = tmk(USC_S32, 2, D(2, 4), V(3, 2, 2, 0, 5, 4, 7, 6));
	run_all_dev(SORT2(""), in, 2, dev, 2, true, 1, USC_S32, 8,
		    V(3, 1, 2, 0, 5, 4, 7, 6));
	/* Device outputs of another type are not read: the stable order. */
	bad[0] = tmk(USC_F32, 2, D(2, 4), V(1, 1, 2, 3, -1, 0, 4, 5));
	bad[1] = tmk(USC_F32, 2, D(2, 4), V(3, 1, 2, 0, 5, 4, 7, 6));
	run_all_dev(SORT2(""), in, 2, bad, 2, true, 1, USC_S32, 8,
		    V(1, 3, 2, 0, 5, 4, 7, 6));
	tdrop(in, 2);
	tdrop(dev, 2);
	tdrop(bad, 2);
}

/*
 * Only the payloads are an output, through get-tuple-element, copy and
 * a bitcast to s32[8] (row-major, so element for element); the keys
 * feed nothing.
 */
static const char *argsort_bitcast =
	"HloModule m\n"
	"lt {\n"
	"  a = f32[] parameter(0)\n"
	"  b = f32[] parameter(1)\n"
	"  c = s32[] parameter(2)\n"
	"  d = s32[] parameter(3)\n"
	"  ROOT r = pred[] compare(a, b), direction=LT\n"
	"}\n"
	"ENTRY main {\n"
	"  k = f32[2,4] parameter(0)\n"
	"  v = s32[2,4] parameter(1)\n"
	"  s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, to_apply=lt\n"
	"  g = s32[2,4] get-tuple-element(s), index=1\n"
	"  c = s32[2,4] copy(g)\n"
	"  b = s32[8] bitcast(c)\n"
	"  ROOT t = (s32[8]) tuple(b)\n"
	"}\n";

static void test_through_copy_and_bitcast(void **state)
{
	usc_tensor *in[2], *dev[1];

	(void)state;
	inputs(in);
	dev[0] = tmk(USC_S32, 1, D(8), V(3, 1, 2, 0, 5, 4, 7, 6));
	run_all_dev(argsort_bitcast, in, 2, dev, 1, true, 0, USC_S32, 8,
		    V(3, 1, 2, 0, 5, 4, 7, 6));
	tdrop(in, 2);
	tdrop(dev, 1);
}

/* TopK, k = 2 of 4, both results outputs. */
static const char *topk =
	"HloModule m\n"
	"gt {\n"
	"  a = f32[] parameter(0)\n"
	"  b = f32[] parameter(1)\n"
	"  c = s32[] parameter(2)\n"
	"  d = s32[] parameter(3)\n"
	"  ROOT r = pred[] compare(a, b), direction=GT\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[2,4] parameter(0)\n"
	"  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), "
	"custom_call_target=\"TopK\", called_computations={gt}\n"
	"}\n";

static void test_topk_tie_beyond_k(void **state)
{
	usc_tensor *in[1], *dev[2];

	(void)state;
	/*
	 * Row 0: 1 3 3 3, the three 3s tie and only two are kept: the
	 * reference's are indices 1 2, the device's 3 1 (index 3 from
	 * beyond k).  Row 1: 5 4 6 0, no ties: 6 5 at 2 0.
	 */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(1, 3, 3, 3, 5, 4, 6, 0));
	dev[0] = tmk(USC_F32, 2, D(2, 2), V(3, 3, 6, 5));
	dev[1] = tmk(USC_S32, 2, D(2, 2), V(3, 1, 2, 0));
	run_all_dev(topk, in, 1, NULL, 0, false, 1, USC_S32, 4,
		    V(1, 2, 2, 0));
	run_all_dev(topk, in, 1, dev, 2, true, 1, USC_S32, 4, V(3, 1, 2, 0));
	run_all_dev(topk, in, 1, dev, 2, true, 0, USC_F32, 4, V(3, 3, 6, 5));
	tdrop(in, 1);
	tdrop(dev, 2);
}

/* The payloads feed an add: the sort's results are no output. */
static const char *internal =
	"HloModule m\n"
	"lt {\n"
	"  a = f32[] parameter(0)\n"
	"  b = f32[] parameter(1)\n"
	"  c = s32[] parameter(2)\n"
	"  d = s32[] parameter(3)\n"
	"  ROOT r = pred[] compare(a, b), direction=LT\n"
	"}\n"
	"ENTRY main {\n"
	"  k = f32[2,4] parameter(0)\n"
	"  v = s32[2,4] parameter(1)\n"
	"  s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, to_apply=lt\n"
	"  g = s32[2,4] get-tuple-element(s), index=1\n"
	"  ROOT a = s32[2,4] add(g, g)\n"
	"}\n";

static void test_internal_ties(void **state)
{
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *in[2], *dev[1];
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_error err;
	bool follows;

	(void)state;
	inputs(in);
	dev[0] = tmk(USC_S32, 2, D(2, 4), V(6, 2, 4, 0, 10, 8, 14, 12));
	/* Reference, oracle, tier, f64: the stable order, doubled. */
	for (size_t d = 0; d + 1 < ARRAY_LEN(all_domains); d++)
		run_dev(internal, in, 2, dev, 1, all_domains[d], false, 0,
			USC_S32, 8, V(2, 6, 4, 0, 10, 8, 14, 12));
	/*
	 * The envelope: the tied 1s carry payloads 1 and 3, and either may
	 * come first on a device, so it refuses, naming the sort.
	 */
	o.domain = USC_DOMAIN_ENVELOPE;
	ev = tcreate(internal, &f, &o);
	assert_int_equal(usc_eval_bind_all(ev, (const usc_tensor *const *)in,
					   2, &err),
			 USC_OK);
	assert_int_equal(usc__eval_follow_device(
				 ev, (const usc_tensor *const *)dev, 1,
				 &follows),
			 USC_OK);
	assert_false(follows);
	assert_int_equal(usc_eval_run(ev, &err), USC_EUNSUPPORTED);
	assert_non_null(strstr(err.message,
			       "the elements of the unstable sort that compare "
			       "equal from position 0 of its result on differ "
			       "in a result that feeds further ops and is no "
			       "output"));
	assert_non_null(strstr(err.message, "(instruction 's')"));
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	tdrop(in, 2);
	/* Payloads equal within the tie (7 and 7): nothing to refuse. */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 1, 2, 1, 0, -1, 5, 4));
	in[1] = tmk(USC_S32, 2, D(2, 4), V(0, 7, 2, 7, 4, 5, 6, 7));
	run_all_dev(internal, in, 2, dev, 1, false, 0, USC_S32, 8,
		    V(14, 14, 4, 0, 10, 8, 14, 12));
	tdrop(in, 2);
	tdrop(dev, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unstable_follows_device),
		cmocka_unit_test(test_stable_keeps_order),
		cmocka_unit_test(test_device_not_a_permutation),
		cmocka_unit_test(test_through_copy_and_bitcast),
		cmocka_unit_test(test_topk_tie_beyond_k),
		cmocka_unit_test(test_internal_ties),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
