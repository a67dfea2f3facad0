/*
 * Control flow in the evaluator (src/eval/control.c, sort.c): while,
 * conditional, sort and XLA's TopK, in every domain, against values
 * derived by hand; the rule that every domain follows the reference's
 * path (an oracle whose own condition decides otherwise fails with
 * "control flow differs"); the loop bound; and bad modules, whose errors
 * name the instruction's line:column.
 */
#include "eval_test_util.h"

#include "ulpscope/limits.h"

/* A copy of a tensor (trun_o destroys the inputs it is given). */
static usc_tensor *dup(const usc_tensor *t)
{
	usc_tensor *c = NULL;
	usc_error err;
	uint64_t bits;

	assert_int_equal(usc_tensor_create(usc_tensor_dtype(t),
					   usc_tensor_rank(t),
					   usc_tensor_dims(t), &c, &err),
			 USC_OK);
	for (uint64_t i = 0; i < usc_tensor_count(t); i++) {
		assert_int_equal(usc_tensor_get_bits(t, i, &bits), USC_OK);
		assert_int_equal(usc_tensor_set_bits(c, i, bits), USC_OK);
	}
	return c;
}

/*
 * Runs text in every domain on copies of in (destroyed afterwards);
 * output `which` must be expect, exactly.
 */
static void run_all(const char *text, usc_tensor **in, size_t nin,
		    size_t which, usc_dtype t, size_t n, const double *expect)
{
	for (size_t d = 0; d < ARRAY_LEN(all_domains); d++) {
		usc_eval_options o = usc_eval_options_default();
		usc_tensor *c[4];

		for (size_t i = 0; i < nin; i++)
			c[i] = dup(in[i]);
		o.domain = all_domains[d];
		trun_o(text, c, nin, which, t, n, expect, &o);
	}
}

/* x doubled while a counter runs from 0 to 5: 32 x. */
static const char *doubling =
	"HloModule m\n"
	"cond {\n"
	"  s = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  n = s32[] constant(5)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"body {\n"
	"  s = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  x = f32[4] get-tuple-element(s), index=1\n"
	"  one = s32[] constant(1)\n"
	"  i2 = s32[] add(i, one)\n"
	"  two = f32[] constant(2)\n"
	"  b = f32[4] broadcast(two), dimensions={}\n"
	"  x2 = f32[4] multiply(x, b)\n"
	"  ROOT t = (s32[], f32[4]) tuple(i2, x2)\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[4] parameter(0)\n"
	"  z = s32[] constant(0)\n"
	"  t = (s32[], f32[4]) tuple(z, x)\n"
	"  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
	"  ROOT r = f32[4] get-tuple-element(w), index=1\n"
	"}\n";

static void test_while(void **state)
{
	usc_tensor *in[1];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(4), V(1, 0.5, -3, 0.75));
	run_all(doubling, in, 1, 0, USC_F32, 4, V(32, 16, -96, 24));
	tdrop(in, 1);
}

/*
 * x += 0.1f while x < 0.3f, from 0.  The reference rounds: 0.1f, 0.2f
 * (exact doublings), then 3 * 0.1f = 0.300000004470348358154296875
 * rounds up to 0.3f = 0.300000011920928955078125, and the loop ends after
 * three iterations.  The oracle's exact third sum is below 0.3f, so its
 * own condition still holds: control flow differs.
 */
static const char *tenths =
	"HloModule m\n"
	"cond {\n"
	"  x = f32[] parameter(0)\n"
	"  l = f32[] constant(0.3)\n"
	"  ROOT lt = pred[] compare(x, l), direction=LT\n"
	"}\n"
	"body {\n"
	"  x = f32[] parameter(0)\n"
	"  c = f32[] constant(0.1)\n"
	"  ROOT y = f32[] add(x, c)\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[] parameter(0)\n"
	"  ROOT w = f32[] while(x), condition=cond, body=body\n"
	"}\n";

static void test_while_differs(void **state)
{
	usc_eval_options o = usc_eval_options_default();
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_tensor *x = tmk(USC_F32, 0, NULL, V(0));
	usc_error err;

	(void)state;
	usc_tensor *xc = dup(x);

	trun(tenths, &xc, 1, USC_F32, 1,
	     V(0x1.333334p-2 /* 0.3f */));
	o.domain = USC_DOMAIN_ORACLE;
	ev = tcreate(tenths, &f, &o);
	assert_int_equal(usc_eval_bind(ev, 0, x, &err), USC_OK);
	assert_int_equal(usc_eval_run(ev, &err), USC_EUNSUPPORTED);
	if (!strstr(err.message, "control flow differs: in the oracle domain "
				 "the condition 'cond' holds after 3 "
				 "iterations, where the reference's loop "
				 "ends at 14:8 (instruction 'w')"))
		fail_msg("message: %s", err.message);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
}

static void test_max_iterations(void **state)
{
	usc_limits lim = usc_limits_get(), small = lim;
	usc_hlo_file *f = NULL;
	usc_eval *ev;
	usc_tensor *x = tmk(USC_F32, 1, D(4), V(1, 2, 3, 4));
	usc_error err;

	(void)state;
	small.max_iterations = 4;
	usc_limits_set(&small);
	ev = tcreate(doubling, &f, NULL);
	assert_int_equal(usc_eval_bind(ev, 0, x, &err), USC_OK);
	assert_int_equal(usc_eval_run(ev, &err), USC_ERANGE);
	assert_string_equal(err.message,
			    "while loop still running after 4 iterations (its "
			    "condition 'cond' still holds); the limit is "
			    "--max-iterations N (docs/limits.md) at 23:3 "
			    "(instruction 'w')");
	/* Five iterations fit a limit of five. */
	small.max_iterations = 5;
	usc_limits_set(&small);
	assert_int_equal(usc_eval_run(ev, &err), USC_OK);
	usc_limits_set(&lim);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
	usc_tensor_destroy(x);
}

/* Branch 0 negates, 1 doubles, 2 adds one; an index out of range: 2. */
static const char *switch3 =
	"HloModule m\n"
	"b0 {\n"
	"  x = f32[2] parameter(0)\n"
	"  ROOT n = f32[2] negate(x)\n"
	"}\n"
	"b1 {\n"
	"  x = f32[2] parameter(0)\n"
	"  ROOT n = f32[2] add(x, x)\n"
	"}\n"
	"b2 {\n"
	"  x = f32[2] parameter(0)\n"
	"  one = f32[] constant(1)\n"
	"  b = f32[2] broadcast(one), dimensions={}\n"
	"  ROOT n = f32[2] add(x, b)\n"
	"}\n"
	"ENTRY main {\n"
	"  i = s32[] parameter(0)\n"
	"  x = f32[2] parameter(1)\n"
	"  ROOT c = f32[2] conditional(i, x, x, x), "
	"branch_computations={b0, b1, b2}\n"
	"}\n";

static void test_conditional(void **state)
{
	static const struct {
		double index, a, b;
	} cases[] = {{0, -1.5, 2}, {1, 3, -4}, {2, 2.5, -1}, {7, 2.5, -1},
		     {-1, 2.5, -1}};
	static const char *pred_form =
		"HloModule m\n"
		"t {\n"
		"  x = f32[2] parameter(0)\n"
		"  ROOT n = f32[2] negate(x)\n"
		"}\n"
		"f {\n"
		"  x = f32[2] parameter(0)\n"
		"  ROOT n = f32[2] add(x, x)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = pred[] parameter(0)\n"
		"  x = f32[2] parameter(1)\n"
		"  ROOT c = f32[2] conditional(p, x, x), true_computation=t, "
		"false_computation=f\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
		in[0] = tmk(USC_S32, 0, NULL, V(cases[k].index));
		in[1] = tmk(USC_F32, 1, D(2), V(1.5, -2));
		run_all(switch3, in, 2, 0, USC_F32, 2,
			(const double[]){cases[k].a, cases[k].b});
		tdrop(in, 2);
	}
	in[0] = tmk(USC_PRED, 0, NULL, V(1));
	in[1] = tmk(USC_F32, 1, D(2), V(1.5, -2));
	run_all(pred_form, in, 2, 0, USC_F32, 2, V(-1.5, 2));
	tdrop(in, 2);
	in[0] = tmk(USC_PRED, 0, NULL, V(0));
	in[1] = tmk(USC_F32, 1, D(2), V(1.5, -2));
	run_all(pred_form, in, 2, 0, USC_F32, 2, V(3, -4));
	tdrop(in, 2);
}

/* Keys with a payload, sorted along dimension 1 by key, stably. */
static const char *sort2 =
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
	"  ROOT s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, "
	"is_stable=true, to_apply=lt\n"
	"}\n";

static void test_sort(void **state)
{
	usc_tensor *in[2];

	(void)state;
	/* Row 0: keys 3 1 2 1 -> 1 1 2 3, the two 1s in their order. */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 1, 2, 1, 0, -1, 5, 4));
	in[1] = tmk(USC_S32, 2, D(2, 4), V(0, 1, 2, 3, 4, 5, 6, 7));
	run_all(sort2, in, 2, 0, USC_F32, 8, V(1, 1, 2, 3, -1, 0, 4, 5));
	run_all(sort2, in, 2, 1, USC_S32, 8, V(1, 3, 2, 0, 5, 4, 7, 6));
	tdrop(in, 2);
}

/* The sort along dimension 0, one operand, descending. */
static void test_sort_dim0(void **state)
{
	static const char *text =
		"HloModule m\n"
		"gt {\n"
		"  a = bf16[] parameter(0)\n"
		"  b = bf16[] parameter(1)\n"
		"  ROOT r = pred[] compare(a, b), direction=GT\n"
		"}\n"
		"ENTRY main {\n"
		"  k = bf16[3,2] parameter(0)\n"
		"  ROOT s = bf16[3,2] sort(k), dimensions={0}, to_apply=gt\n"
		"}\n";
	usc_tensor *in[1];

	(void)state;
	in[0] = tmk(USC_BF16, 2, D(3, 2), V(1, 6, 3, 5, 2, 4));
	run_all(text, in, 1, 0, USC_BF16, 6, V(3, 6, 2, 5, 1, 4));
	tdrop(in, 1);
}

/* XLA's TopK: the k greatest of each row and their indices. */
static void test_topk(void **state)
{
	static const char *text =
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
	usc_tensor *in[1];

	(void)state;
	/* Row 0: the two 3s, the first first; row 1: 6 then 5. */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(1, 3, 3, 2, 5, 4, 6, 0));
	run_all(text, in, 1, 0, USC_F32, 4, V(3, 3, 6, 5));
	run_all(text, in, 1, 1, USC_S32, 4, V(1, 2, 2, 0));
	tdrop(in, 1);
}

/* A module that must be refused when the evaluator is created. */
static void refused(const char *text, usc_status want, const char *msg)
{
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_error err;

	assert_int_equal(usc_hlo_parse(text, strlen(text), "<t>", &f, &err),
			 USC_OK);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 want);
	assert_null(ev);
	assert_string_equal(err.message, msg);
	usc_hlo_file_destroy(f);
}

static void test_errors(void **state)
{
	(void)state;
	/* A body that returns less than the loop state. */
	refused("HloModule m\n"
		"cond {\n"
		"  s = (s32[], f32[4]) parameter(0)\n"
		"  ROOT t = pred[] constant(true)\n"
		"}\n"
		"body {\n"
		"  s = (s32[], f32[4]) parameter(0)\n"
		"  ROOT x = f32[4] get-tuple-element(s), index=1\n"
		"}\n"
		"ENTRY main {\n"
		"  x = f32[4] parameter(0)\n"
		"  z = s32[] constant(0)\n"
		"  t = (s32[], f32[4]) tuple(z, x)\n"
		"  ROOT w = (s32[], f32[4]) while(t), condition=cond, "
		"body=body\n"
		"}\n",
		USC_EINVAL,
		"while body 'body' returns f32[4]; it must return (s32[], "
		"f32[4]) at 14:8 (instruction 'w')");
	/* A condition that does not return a pred. */
	refused("HloModule m\n"
		"cond {\n"
		"  s = f32[] parameter(0)\n"
		"  ROOT t = f32[] negate(s)\n"
		"}\n"
		"body {\n"
		"  ROOT s = f32[] parameter(0)\n"
		"}\n"
		"ENTRY main {\n"
		"  x = f32[] parameter(0)\n"
		"  ROOT w = f32[] while(x), condition=cond, body=body\n"
		"}\n",
		USC_EINVAL,
		"while condition 'cond' returns f32[]; it must return pred[] "
		"at 11:8 (instruction 'w')");
	/* A comparator of the wrong element type. */
	refused("HloModule m\n"
		"lt {\n"
		"  a = s32[] parameter(0)\n"
		"  b = s32[] parameter(1)\n"
		"  ROOT r = pred[] compare(a, b), direction=LT\n"
		"}\n"
		"ENTRY main {\n"
		"  k = f32[4] parameter(0)\n"
		"  ROOT s = f32[4] sort(k), dimensions={0}, to_apply=lt\n"
		"}\n",
		USC_EINVAL,
		"sort comparator 'lt': parameter 0 is s32[], but it must be "
		"f32[] (the lhs of operand 0's elements) at 9:8 (instruction "
		"'s')");
	/* A branch whose parameter is not the operand passed to it. */
	refused("HloModule m\n"
		"b0 {\n"
		"  ROOT x = f32[2] parameter(0)\n"
		"}\n"
		"b1 {\n"
		"  ROOT x = f32[3] parameter(0)\n"
		"}\n"
		"ENTRY main {\n"
		"  i = s32[] parameter(0)\n"
		"  x = f32[2] parameter(1)\n"
		"  ROOT c = f32[2] conditional(i, x, x), "
		"branch_computations={b0, b1}\n"
		"}\n",
		USC_EINVAL,
		"branch 1 'b1' takes f32[3], but f32[2] is passed at 11:8 "
		"(instruction 'c')");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_while),
		cmocka_unit_test(test_while_differs),
		cmocka_unit_test(test_max_iterations),
		cmocka_unit_test(test_conditional),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_sort_dim0),
		cmocka_unit_test(test_topk),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
