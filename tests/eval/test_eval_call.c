/*
 * XLA's call in the evaluator: a call evaluates its computation on its
 * operands, so a module with calls and the same module with every call
 * inlined by hand compute the same function.  The identity is checked
 * bit for bit in every domain (reference, oracle, tier, f64, envelope),
 * streamed and whole, on calls that nest, return tuples, take their
 * operands in an order that is not symmetric, and sit inside a while
 * body.  Bad calls are refused with the instruction's line:column.
 */
#include "eval_test_util.h"

#include "ulpscope/hlo_kernel.h"

/*
 * f(a, b) = tanh(a - b) * exp(b) + sin(a), with the subtraction and the
 * tuple built in called computations, one of which calls another; the
 * sine is a call of a computation that the module calls twice.
 */
static const char *const calls_f32 =
	"HloModule calls\n"
	"sub (x: f32[64], y: f32[64]) -> f32[64] {\n"
	"  x = f32[64] parameter(0)\n"
	"  y = f32[64] parameter(1)\n"
	"  ROOT d = f32[64] subtract(x, y)\n"
	"}\n"
	"pair (p: f32[64], q: f32[64]) -> (f32[64], f32[64]) {\n"
	"  p = f32[64] parameter(0)\n"
	"  q = f32[64] parameter(1)\n"
	"  d = f32[64] call(p, q), to_apply=sub\n"
	"  t = f32[64] tanh(d)\n"
	"  e = f32[64] exponential(q)\n"
	"  ROOT r = (f32[64], f32[64]) tuple(t, e)\n"
	"}\n"
	"sine (s: f32[64]) -> f32[64] {\n"
	"  s = f32[64] parameter(0)\n"
	"  ROOT r = f32[64] sine(s)\n"
	"}\n"
	"ENTRY main (a: f32[64], b: f32[64]) -> (f32[64], f32[64]) {\n"
	"  a = f32[64] parameter(0)\n"
	"  b = f32[64] parameter(1)\n"
	"  c = (f32[64], f32[64]) call(a, b), to_apply=pair\n"
	"  t = f32[64] get-tuple-element(c), index=0\n"
	"  e = f32[64] get-tuple-element(c), index=1\n"
	"  m = f32[64] multiply(t, e)\n"
	"  s1 = f32[64] call(a), to_apply=sine\n"
	"  s2 = f32[64] call(b), to_apply=sine\n"
	"  r = f32[64] add(m, s1)\n"
	"  ROOT o = (f32[64], f32[64]) tuple(r, s2)\n"
	"}\n";

static const char *const inlined_f32 =
	"HloModule inlined\n"
	"ENTRY main (a: f32[64], b: f32[64]) -> (f32[64], f32[64]) {\n"
	"  a = f32[64] parameter(0)\n"
	"  b = f32[64] parameter(1)\n"
	"  d = f32[64] subtract(a, b)\n"
	"  t = f32[64] tanh(d)\n"
	"  e = f32[64] exponential(b)\n"
	"  m = f32[64] multiply(t, e)\n"
	"  s1 = f32[64] sine(a)\n"
	"  s2 = f32[64] sine(b)\n"
	"  r = f32[64] add(m, s1)\n"
	"  ROOT o = (f32[64], f32[64]) tuple(r, s2)\n"
	"}\n";

/*
 * A call whose root is one elementwise array of the entry's parameters:
 * the shape a run streams tile by tile through the call (top_loop), in
 * bf16 with converts around a log1p.
 */
static const char *const call_loop_bf16 =
	"HloModule call_loop\n"
	"body (x: bf16[64], y: bf16[64]) -> bf16[64] {\n"
	"  x = bf16[64] parameter(0)\n"
	"  y = bf16[64] parameter(1)\n"
	"  xf = f32[64] convert(x)\n"
	"  yf = f32[64] convert(y)\n"
	"  q = f32[64] divide(xf, yf)\n"
	"  l = f32[64] log-plus-one(q)\n"
	"  ROOT r = bf16[64] convert(l)\n"
	"}\n"
	"ENTRY main (a: bf16[64], b: bf16[64]) -> bf16[64] {\n"
	"  a = bf16[64] parameter(0)\n"
	"  b = bf16[64] parameter(1)\n"
	"  ROOT c = bf16[64] call(a, b), to_apply=body\n"
	"}\n";

static const char *const inlined_loop_bf16 =
	"HloModule inlined_loop\n"
	"ENTRY main (a: bf16[64], b: bf16[64]) -> bf16[64] {\n"
	"  a = bf16[64] parameter(0)\n"
	"  b = bf16[64] parameter(1)\n"
	"  xf = f32[64] convert(a)\n"
	"  yf = f32[64] convert(b)\n"
	"  q = f32[64] divide(xf, yf)\n"
	"  l = f32[64] log-plus-one(q)\n"
	"  ROOT r = bf16[64] convert(l)\n"
	"}\n";

/* A while whose body calls a computation: v = v * 0.75 + cos(v), 5 times. */
static const char *const while_call_f32 =
	"HloModule while_call\n"
	"step (v: f32[16]) -> f32[16] {\n"
	"  v = f32[16] parameter(0)\n"
	"  k = f32[] constant(0.75)\n"
	"  kb = f32[16] broadcast(k), dimensions={}\n"
	"  m = f32[16] multiply(v, kb)\n"
	"  c = f32[16] cosine(v)\n"
	"  ROOT r = f32[16] add(m, c)\n"
	"}\n"
	"cond (s: (s32[], f32[16])) -> pred[] {\n"
	"  s = (s32[], f32[16]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  n = s32[] constant(5)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"loop (s: (s32[], f32[16])) -> (s32[], f32[16]) {\n"
	"  s = (s32[], f32[16]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  v = f32[16] get-tuple-element(s), index=1\n"
	"  one = s32[] constant(1)\n"
	"  j = s32[] add(i, one)\n"
	"  w = f32[16] call(v), to_apply=step\n"
	"  ROOT t = (s32[], f32[16]) tuple(j, w)\n"
	"}\n"
	"ENTRY main (x: f32[16]) -> f32[16] {\n"
	"  x = f32[16] parameter(0)\n"
	"  z = s32[] constant(0)\n"
	"  s = (s32[], f32[16]) tuple(z, x)\n"
	"  w = (s32[], f32[16]) while(s), condition=cond, body=loop\n"
	"  ROOT r = f32[16] get-tuple-element(w), index=1\n"
	"}\n";

static const char *const while_inlined_f32 =
	"HloModule while_inlined\n"
	"cond (s: (s32[], f32[16])) -> pred[] {\n"
	"  s = (s32[], f32[16]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  n = s32[] constant(5)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"loop (s: (s32[], f32[16])) -> (s32[], f32[16]) {\n"
	"  s = (s32[], f32[16]) parameter(0)\n"
	"  i = s32[] get-tuple-element(s), index=0\n"
	"  v = f32[16] get-tuple-element(s), index=1\n"
	"  one = s32[] constant(1)\n"
	"  j = s32[] add(i, one)\n"
	"  k = f32[] constant(0.75)\n"
	"  kb = f32[16] broadcast(k), dimensions={}\n"
	"  m = f32[16] multiply(v, kb)\n"
	"  c = f32[16] cosine(v)\n"
	"  w = f32[16] add(m, c)\n"
	"  ROOT t = (s32[], f32[16]) tuple(j, w)\n"
	"}\n"
	"ENTRY main (x: f32[16]) -> f32[16] {\n"
	"  x = f32[16] parameter(0)\n"
	"  z = s32[] constant(0)\n"
	"  s = (s32[], f32[16]) tuple(z, x)\n"
	"  w = (s32[], f32[16]) while(s), condition=cond, body=loop\n"
	"  ROOT r = f32[16] get-tuple-element(w), index=1\n"
	"}\n";

/*
 * Inputs of n elements of type t: a spread of magnitudes and signs, the
 * second input shifted so that a - b and b - a differ.
 */
static usc_tensor *input(usc_dtype t, size_t n, int which)
{
	double v[64];

	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++) {
		double x = ((double)i - (double)n / 2) / 7.0;

		v[i] = which ? 0.5 + x * x / 3.0 : x * 1.25 - 0.375;
	}
	return tmk(t, 1, D((int64_t)n), v);
}

/* Every output of a run, as bits (one array per output). */
typedef struct outputs {
	size_t n, count[4];
	uint64_t bits[4][64];
} outputs;

static void run(const char *text, usc_tensor *const *in, size_t nin,
		const usc_eval_options *o, outputs *out)
{
	usc_hlo_file *f = NULL;
	usc_eval *ev = tcreate(text, &f, o);
	usc_error err;

	for (size_t i = 0; i < nin; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			fail_msg("bind: %s", err.message);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("run: %s", err.message);
	out->n = usc_eval_output_count(ev);
	assert_true(out->n >= 1 && out->n <= 4);
	for (size_t k = 0; k < out->n; k++) {
		const usc_tensor *t;

		assert_int_equal(usc_eval_output(ev, k, &t, &err), USC_OK);
		out->count[k] = (size_t)usc_tensor_count(t);
		assert_true(out->count[k] <= 64);
		for (size_t i = 0; i < out->count[k]; i++)
			assert_int_equal(usc_tensor_get_bits(t, i,
							     &out->bits[k][i]),
					 USC_OK);
	}
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
}

/*
 * The module with calls and its inlined twin give the same bits in every
 * domain, streamed (tiles of 8) and whole.
 */
static void same_as_inlined(const char *with_calls, const char *inlined,
			    usc_tensor *const *in, size_t nin)
{
	static const size_t tiles[] = {8, USC_EVAL_NO_TILES};

	for (size_t d = 0; d < ARRAY_LEN(all_domains); d++)
		for (size_t t = 0; t < ARRAY_LEN(tiles); t++) {
			usc_eval_options o = usc_eval_options_default();
			outputs a, b;

			o.domain = all_domains[d];
			o.tile_elements = tiles[t];
			run(with_calls, in, nin, &o, &a);
			run(inlined, in, nin, &o, &b);
			assert_int_equal(a.n, b.n);
			for (size_t k = 0; k < a.n; k++) {
				assert_int_equal(a.count[k], b.count[k]);
				for (size_t i = 0; i < a.count[k]; i++)
					if (a.bits[k][i] != b.bits[k][i])
						fail_msg("domain %d, tile %zu: "
							 "output %zu element "
							 "%zu: 0x%llx with "
							 "calls, 0x%llx "
							 "inlined",
							 (int)all_domains[d],
							 tiles[t], k, i,
							 (unsigned long long)
								 a.bits[k][i],
							 (unsigned long long)
								 b.bits[k][i]);
			}
		}
}

static void test_call_is_inlining(void **state)
{
	usc_tensor *in[2] = {input(USC_F32, 64, 0),
			     input(USC_F32, 64, 1)};

	(void)state;
	same_as_inlined(calls_f32, inlined_f32, in, 2);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
}

static void test_call_streamed_bf16(void **state)
{
	usc_tensor *in[2] = {input(USC_BF16, 64, 0),
			     input(USC_BF16, 64, 1)};

	(void)state;
	same_as_inlined(call_loop_bf16, inlined_loop_bf16, in, 2);
	usc_tensor_destroy(in[0]);
	usc_tensor_destroy(in[1]);
}

static void test_call_in_while_body(void **state)
{
	usc_tensor *in[1] = {input(USC_F32, 16, 0)};

	(void)state;
	same_as_inlined(while_call_f32, while_inlined_f32, in, 1);
	usc_tensor_destroy(in[0]);
}

/*
 * The operands reach the called computation's parameters in order: a
 * call of sub on (a, b) is a - b, hand-derived on values exact in f32.
 */
static void test_call_operand_order(void **state)
{
	static const char *const text =
		"HloModule order\n"
		"sub (x: f32[3], y: f32[3]) -> f32[3] {\n"
		"  x = f32[3] parameter(0)\n"
		"  y = f32[3] parameter(1)\n"
		"  ROOT d = f32[3] subtract(x, y)\n"
		"}\n"
		"ENTRY main (a: f32[3], b: f32[3]) -> f32[3] {\n"
		"  a = f32[3] parameter(0)\n"
		"  b = f32[3] parameter(1)\n"
		"  ROOT c = f32[3] call(a, b), to_apply=sub\n"
		"}\n";

	(void)state;
	for (size_t d = 0; d < ARRAY_LEN(all_domains); d++) {
		usc_eval_options o = usc_eval_options_default();
		usc_tensor *in[2] = {
			tmk(USC_F32, 1, D(3), V(1.5, -2, 0x1p-3)),
			tmk(USC_F32, 1, D(3), V(0.25, 3, 1))};

		o.domain = all_domains[d];
		trun_o(text, in, 2, 0, USC_F32, 3,
		       V(1.25, -5, -0.875), &o);
	}
}

/* A call whose computation does not take its operands fails, naming it. */
static void test_call_bad(void **state)
{
	static const char *const text =
		"HloModule bad\n"
		"one (x: f32[3]) -> f32[3] {\n"
		"  x = f32[3] parameter(0)\n"
		"  ROOT n = f32[3] negate(x)\n"
		"}\n"
		"ENTRY main (a: f32[3], b: f32[3]) -> f32[3] {\n"
		"  a = f32[3] parameter(0)\n"
		"  b = f32[3] parameter(1)\n"
		"  ROOT c = f32[3] call(a, b), to_apply=one\n"
		"}\n";
	usc_hlo_file *f = NULL;
	usc_error err;
	usc_status st;

	(void)state;
	st = usc_hlo_parse(text, strlen(text), "<test>", &f, &err);
	if (st == USC_OK)
		st = usc_hlo_verify(usc_hlo_file_module(f, 0), &err);
	assert_int_not_equal(st, USC_OK);
	if (!strstr(err.message, "9:") || !strstr(err.message, "'c'"))
		fail_msg("message without the call's place: %s", err.message);
	usc_hlo_file_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_is_inlining),
		cmocka_unit_test(test_call_streamed_bf16),
		cmocka_unit_test(test_call_in_while_body),
		cmocka_unit_test(test_call_operand_order),
		cmocka_unit_test(test_call_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
