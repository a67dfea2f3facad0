/*
 * The interpreter on small hand-written modules (long and short forms):
 * every data-movement op, reduce (including a variadic argmax), dot with
 * batch dimensions, convolution, gather and scatter, nested fusions,
 * call, map and tuples, integer corner cases, and the exact texts of the
 * errors.  Every expected value is derived by hand in the comments.
 */
#include "eval/eval_test_util.h"

#include <math.h>

#include "internal.h"

/* Long form: %names, operand shapes, a signature. */
static void test_long_form(void **state)
{
	static const char *text =
		"HloModule m\n"
		"ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {\n"
		"  %a = f32[4]{0} parameter(0)\n"
		"  %b = f32[4]{0} parameter(1)\n"
		"  %m = f32[4]{0} multiply(f32[4]{0} %a, f32[4]{0} %b)\n"
		"  ROOT %s = f32[4]{0} add(f32[4]{0} %m, f32[4]{0} %a)\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(4), V(1, 2, 3, 4));
	in[1] = tmk(USC_F32, 1, D(4), V(0.5, -1, 2, 0));
	/* a*b = {0.5, -2, 6, 0}; + a = {1.5, 0, 9, 4}. */
	trun(text, in, 2, USC_F32, 4, V(1.5, 0, 9, 4));
}

/* bf16 adds round to nearest-even at each op. */
static void test_bf16_rounding(void **state)
{
	static const char *text = "ENTRY main {\n"
				  "  a = bf16[3] parameter(0)\n"
				  "  b = bf16[3] parameter(1)\n"
				  "  ROOT s = bf16[3] add(a, b)\n"
				  "}\n";
	usc_tensor *in[2];

	(void)state;
	/*
	 * ulp(1) is 2^-7 in bf16.  1 + 2^-8 is a tie: even gives 1.
	 * 1 + (2^-8 + 2^-15) lies above the tie: 1 + 2^-7.  (1 + 2^-7) +
	 * 2^-8 is a tie between odd 1+2^-7 and even 1+2^-6: 1+2^-6.
	 */
	in[0] = tmk(USC_BF16, 1, D(3), V(1, 1, 1 + 0x1p-7));
	in[1] = tmk(USC_BF16, 1, D(3), V(0x1p-8, 0x1p-8 + 0x1p-15, 0x1p-8));
	trun(text, in, 2, USC_BF16, 3, V(1, 1 + 0x1p-7, 1 + 0x1p-6));
}

static void test_transpose_reshape_broadcast(void **state)
{
	static const char *text = "ENTRY main {\n"
				  "  p = f32[2,3] parameter(0)\n"
				  "  t = f32[3,2] transpose(p), dimensions={1,0}\n"
				  "  r = f32[6] reshape(t)\n"
				  "  ROOT b = f32[2,6] broadcast(r), dimensions={1}\n"
				  "}\n";
	usc_tensor *in[1];

	(void)state;
	/* [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]], flattened, twice. */
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(text, in, 1, USC_F32, 12,
	     V(1, 4, 2, 5, 3, 6, 1, 4, 2, 5, 3, 6));
}

static void test_slices(void **state)
{
	static const char *slice = "ENTRY main {\n"
				   "  p = f32[6] parameter(0)\n"
				   "  ROOT s = f32[3] slice(p), slice={[1:6:2]}\n"
				   "}\n";
	static const char *dyn = "ENTRY main {\n"
				 "  p = f32[5] parameter(0)\n"
				 "  i = s32[] parameter(1)\n"
				 "  ROOT s = f32[3] dynamic-slice(p, i), "
				 "dynamic_slice_sizes={3}\n"
				 "}\n";
	static const char *dus = "ENTRY main {\n"
				 "  p = f32[5] parameter(0)\n"
				 "  u = f32[2] parameter(1)\n"
				 "  i = s32[] parameter(2)\n"
				 "  ROOT s = f32[5] dynamic-update-slice(p, u, i)\n"
				 "}\n";
	usc_tensor *in[3];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(6), V(0, 1, 2, 3, 4, 5));
	trun(slice, in, 1, USC_F32, 3, V(1, 3, 5));
	/* Start 3 with size 3 in 5 is clamped to 2. */
	in[0] = tmk(USC_F32, 1, D(5), V(10, 11, 12, 13, 14));
	in[1] = tmk(USC_S32, 0, NULL, V(3));
	trun(dyn, in, 2, USC_F32, 3, V(12, 13, 14));
	/* A negative start is clamped to 0. */
	in[0] = tmk(USC_F32, 1, D(5), V(10, 11, 12, 13, 14));
	in[1] = tmk(USC_S32, 0, NULL, V(-4));
	trun(dyn, in, 2, USC_F32, 3, V(10, 11, 12));
	in[0] = tmk(USC_F32, 1, D(5), V(0, 1, 2, 3, 4));
	in[1] = tmk(USC_F32, 1, D(2), V(9, 8));
	in[2] = tmk(USC_S32, 0, NULL, V(-1));
	trun(dus, in, 3, USC_F32, 5, V(9, 8, 2, 3, 4));
	/* Start 4 with an update of 2 in 5 is clamped to 3. */
	in[0] = tmk(USC_F32, 1, D(5), V(0, 1, 2, 3, 4));
	in[1] = tmk(USC_F32, 1, D(2), V(9, 8));
	in[2] = tmk(USC_S32, 0, NULL, V(4));
	trun(dus, in, 3, USC_F32, 5, V(0, 1, 2, 9, 8));
}

static void test_concat_pad_iota_reverse(void **state)
{
	static const char *concat =
		"ENTRY main {\n"
		"  a = f32[2] parameter(0)\n"
		"  b = f32[3] parameter(1)\n"
		"  ROOT c = f32[5] concatenate(a, b), dimensions={0}\n"
		"}\n";
	static const char *pad = "ENTRY main {\n"
				 "  a = f32[3] parameter(0)\n"
				 "  z = f32[] constant(-7)\n"
				 "  ROOT p = f32[5] pad(a, z), padding=1_-1_1\n"
				 "}\n";
	static const char *pad2 =
		"ENTRY main {\n"
		"  a = f32[2,2] parameter(0)\n"
		"  z = f32[] constant(0)\n"
		"  ROOT p = f32[3,1] pad(a, z), padding=0_1_0x-1_0\n"
		"}\n";
	static const char *iota =
		"ENTRY main {\n"
		"  i = s32[2,3] iota(), iota_dimension=1\n"
		"  ROOT f = f32[2,3] convert(i)\n"
		"}\n";
	static const char *rev = "ENTRY main {\n"
				 "  a = f32[2,3] parameter(0)\n"
				 "  ROOT r = f32[2,3] reverse(a), dimensions={1}\n"
				 "}\n";
	usc_tensor *in[2];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(2), V(1, 2));
	in[1] = tmk(USC_F32, 1, D(3), V(3, 4, 5));
	trun(concat, in, 2, USC_F32, 5, V(1, 2, 3, 4, 5));
	/*
	 * Interior 1: [1,p,2,p,3]; low 1: [p,1,p,2,p,3]; high -1 drops the
	 * last: [p,1,p,2,p] with p = -7.
	 */
	in[0] = tmk(USC_F32, 1, D(3), V(1, 2, 3));
	trun(pad, in, 1, USC_F32, 5, V(-7, 1, -7, 2, -7));
	/* Rows [1,2],[3,4],[0,0]; the low -1 drops column 0. */
	in[0] = tmk(USC_F32, 2, D(2, 2), V(1, 2, 3, 4));
	trun(pad2, in, 1, USC_F32, 3, V(2, 4, 0));
	trun(iota, NULL, 0, USC_F32, 6, V(0, 1, 2, 0, 1, 2));
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(rev, in, 1, USC_F32, 6, V(3, 2, 1, 6, 5, 4));
}

static const char *reduce_text(const char *dims, const char *rshape)
{
	static char buf[1024];

	snprintf(buf, sizeof buf,
		 "HloModule r\n"
		 "add {\n"
		 "  x = f32[] parameter(0)\n"
		 "  y = f32[] parameter(1)\n"
		 "  ROOT s = f32[] add(x, y)\n"
		 "}\n"
		 "ENTRY main {\n"
		 "  p = f32[2,3] parameter(0)\n"
		 "  z = f32[] constant(0)\n"
		 "  ROOT r = %s reduce(p, z), dimensions={%s}, to_apply=add\n"
		 "}\n",
		 rshape, dims);
	return buf;
}

static void test_reduce(void **state)
{
	usc_tensor *in[1];

	(void)state;
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(reduce_text("1", "f32[2]"), in, 1, USC_F32, 2, V(6, 15));
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(reduce_text("0", "f32[3]"), in, 1, USC_F32, 3, V(5, 7, 9));
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(reduce_text("0,1", "f32[]"), in, 1, USC_F32, 1, V(21));
}

/* Sequential and pairwise orders give different bf16 sums. */
static void test_reduce_order(void **state)
{
	static const char *text = "add {\n"
				  "  x = bf16[] parameter(0)\n"
				  "  y = bf16[] parameter(1)\n"
				  "  ROOT s = bf16[] add(x, y)\n"
				  "}\n"
				  "ENTRY main {\n"
				  "  p = bf16[4] parameter(0)\n"
				  "  z = bf16[] constant(0)\n"
				  "  ROOT r = bf16[] reduce(p, z), dimensions={0}, "
				  "to_apply=add\n"
				  "}\n";
	usc_eval_options o = usc_eval_options_default();
	usc_tensor *in[1];

	(void)state;
	/*
	 * Sequential: ((((0 + 1) + a) + a) + a) with a = 2^-8, each 1 + a
	 * a tie that goes to even 1.  Pairwise: (1 + a) + (a + a) = 1 +
	 * 2^-7, then 0 + that.
	 */
	in[0] = tmk(USC_BF16, 1, D(4), V(1, 0x1p-8, 0x1p-8, 0x1p-8));
	trun_o(text, in, 1, 0, USC_BF16, 1, V(1), &o);
	o.reduce_order = USC_REDUCE_PAIRWISE;
	in[0] = tmk(USC_BF16, 1, D(4), V(1, 0x1p-8, 0x1p-8, 0x1p-8));
	trun_o(text, in, 1, 0, USC_BF16, 1, V(1 + 0x1p-7), &o);
}

static void test_argmax(void **state)
{
	static const char *text =
		"argmax {\n"
		"  v0 = f32[] parameter(0)\n"
		"  i0 = s32[] parameter(1)\n"
		"  v1 = f32[] parameter(2)\n"
		"  i1 = s32[] parameter(3)\n"
		"  ge = pred[] compare(v0, v1), direction=GE\n"
		"  v = f32[] select(ge, v0, v1)\n"
		"  i = s32[] select(ge, i0, i1)\n"
		"  ROOT t = (f32[], s32[]) tuple(v, i)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = f32[2,4] parameter(0)\n"
		"  io = s32[2,4] iota(), iota_dimension=1\n"
		"  ninf = f32[] constant(-inf)\n"
		"  zero = s32[] constant(0)\n"
		"  ROOT r = (f32[2], s32[2]) reduce(p, io, ninf, zero), "
		"dimensions={1}, to_apply=argmax\n"
		"}\n";
	usc_tensor *in[1];

	(void)state;
	/* Ties keep the accumulator: the first 7 (index 1) wins. */
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 7, 7, 1, -1, -5, -0.5, -2));
	trun_o(text, in, 1, 0, USC_F32, 2, V(7, -0.5), NULL);
	in[0] = tmk(USC_F32, 2, D(2, 4), V(3, 7, 7, 1, -1, -5, -0.5, -2));
	trun_o(text, in, 1, 1, USC_S32, 2, V(1, 2), NULL);
}

static void test_dot(void **state)
{
	static const char *batch =
		"ENTRY main {\n"
		"  a = f32[2,2,3] parameter(0)\n"
		"  b = f32[2,3,2] parameter(1)\n"
		"  ROOT d = f32[2,2,2] dot(a, b), lhs_batch_dims={0}, "
		"rhs_batch_dims={0}, lhs_contracting_dims={2}, "
		"rhs_contracting_dims={1}\n"
		"}\n";
	static const char *abt =
		"ENTRY main {\n"
		"  a = f32[2,3] parameter(0)\n"
		"  b = f32[4,3] parameter(1)\n"
		"  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
		"rhs_contracting_dims={1}\n"
		"}\n";
	static const char *mixed =
		"ENTRY main {\n"
		"  a = bf16[1,2] parameter(0)\n"
		"  b = bf16[2,1] parameter(1)\n"
		"  ROOT d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, "
		"rhs_contracting_dims={0}\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	/*
	 * Batch 0: [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]];
	 * batch 1: [[1,0,0],[0,0,1]] x [[2,3],[4,5],[6,7]] = [[2,3],[6,7]].
	 */
	in[0] = tmk(USC_F32, 3, D(2, 2, 3),
		    V(1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 0, 1));
	in[1] = tmk(USC_F32, 3, D(2, 3, 2),
		    V(1, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7));
	trun(batch, in, 2, USC_F32, 8, V(4, 5, 10, 11, 2, 3, 6, 7));
	/* A B^T: lhs free dims first, then rhs free dims. */
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 0, 1, 0));
	in[1] = tmk(USC_F32, 2, D(4, 3), V(1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1));
	trun(abt, in, 2, USC_F32, 8, V(1, 2, 3, 6, 0, 1, 0, 1));
	/*
	 * bf16 operands, f32 result: products and sums in f32.  (1+2^-7)^2
	 * = 1 + 2^-6 + 2^-14 is exact in f32; + 1 gives 2 + 2^-6 + 2^-14,
	 * exact too (16 significant bits).
	 */
	in[0] = tmk(USC_BF16, 2, D(1, 2), V(1 + 0x1p-7, 1));
	in[1] = tmk(USC_BF16, 2, D(2, 1), V(1 + 0x1p-7, 1));
	trun(mixed, in, 2, USC_F32, 1, V(2 + 0x1p-6 + 0x1p-14));
}

static void test_convolution(void **state)
{
	static const char *c1 =
		"ENTRY main {\n"
		"  x = f32[1,5,1] parameter(0)\n"
		"  k = f32[3,1,1] parameter(1)\n"
		"  ROOT c = f32[1,3,1] convolution(x, k), window={size=3}, "
		"dim_labels=b0f_0io->b0f\n"
		"}\n";
	static const char *c2 =
		"ENTRY main {\n"
		"  x = f32[1,5,1] parameter(0)\n"
		"  k = f32[3,1,1] parameter(1)\n"
		"  ROOT c = f32[1,3,1] convolution(x, k), "
		"window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f\n"
		"}\n";
	static const char *grouped =
		"ENTRY main {\n"
		"  x = f32[1,2,2] parameter(0)\n"
		"  k = f32[1,1,2] parameter(1)\n"
		"  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, "
		"dim_labels=b0f_0io->b0f, feature_group_count=2\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	/* {1..5} * {1,2,3}: 1+4+9, 2+6+12, 3+8+15. */
	in[0] = tmk(USC_F32, 3, D(1, 5, 1), V(1, 2, 3, 4, 5));
	in[1] = tmk(USC_F32, 3, D(3, 1, 1), V(1, 2, 3));
	trun(c1, in, 2, USC_F32, 3, V(14, 20, 26));
	/*
	 * Padded by one each side, stride 2: windows over positions
	 * -1..1, 1..3, 3..5: 0+2+6, 2+6+12, 4+10+0.
	 */
	in[0] = tmk(USC_F32, 3, D(1, 5, 1), V(1, 2, 3, 4, 5));
	in[1] = tmk(USC_F32, 3, D(3, 1, 1), V(1, 2, 3));
	trun(c2, in, 2, USC_F32, 3, V(8, 20, 14));
	/* Two groups of one feature: out[s][g] = x[s][g] * k[g]. */
	in[0] = tmk(USC_F32, 3, D(1, 2, 2), V(1, 10, 2, 20));
	in[1] = tmk(USC_F32, 3, D(1, 1, 2), V(3, 5));
	trun(grouped, in, 2, USC_F32, 4, V(3, 50, 6, 100));
}

static void test_gather_scatter(void **state)
{
	static const char *gather =
		"ENTRY main {\n"
		"  p = f32[3,3] parameter(0)\n"
		"  i = s32[2] parameter(1)\n"
		"  ROOT g = f32[2,3] gather(p, i), offset_dims={1}, "
		"collapsed_slice_dims={0}, start_index_map={0}, "
		"index_vector_dim=1, slice_sizes={1,3}\n"
		"}\n";
	static const char *gather2 =
		"ENTRY main {\n"
		"  p = f32[3,3] parameter(0)\n"
		"  i = s32[1,2] parameter(1)\n"
		"  ROOT g = f32[1,2,2] gather(p, i), offset_dims={1,2}, "
		"collapsed_slice_dims={}, start_index_map={0,1}, "
		"index_vector_dim=1, slice_sizes={2,2}\n"
		"}\n";
	static const char *scatter =
		"add {\n"
		"  x = f32[] parameter(0)\n"
		"  y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = f32[3,3] parameter(0)\n"
		"  i = s32[2] parameter(1)\n"
		"  u = f32[2,3] parameter(2)\n"
		"  ROOT s = f32[3,3] scatter(p, i, u), update_window_dims={1}, "
		"inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
		"index_vector_dim=1, to_apply=add\n"
		"}\n";
	usc_tensor *in[3];

	(void)state;
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 1, D(2), V(0, 2));
	trun(gather, in, 2, USC_F32, 6, V(1, 2, 3, 7, 8, 9));
	/* Index 5 is clamped to 2, the last row that fits. */
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 1, D(2), V(5, 1));
	trun(gather, in, 2, USC_F32, 6, V(7, 8, 9, 4, 5, 6));
	/* A 2x2 window at (1, 2) is clamped to (1, 1): [[5,6],[8,9]]. */
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 2, D(1, 2), V(1, 2));
	trun(gather2, in, 2, USC_F32, 4, V(5, 6, 8, 9));
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 1, D(2), V(0, 2));
	in[2] = tmk(USC_F32, 2, D(2, 3), V(10, 20, 30, 70, 80, 90));
	trun(scatter, in, 3, USC_F32, 9, V(11, 22, 33, 4, 5, 6, 77, 88, 99));
	/* Repeated indices accumulate; an out-of-range one is skipped. */
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 1, D(2), V(1, 1));
	in[2] = tmk(USC_F32, 2, D(2, 3), V(10, 20, 30, 100, 200, 300));
	trun(scatter, in, 3, USC_F32, 9,
	     V(1, 2, 3, 114, 225, 336, 7, 8, 9));
	in[0] = tmk(USC_F32, 2, D(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
	in[1] = tmk(USC_S32, 1, D(2), V(3, 0));
	in[2] = tmk(USC_F32, 2, D(2, 3), V(10, 20, 30, 100, 200, 300));
	trun(scatter, in, 3, USC_F32, 9,
	     V(101, 202, 303, 4, 5, 6, 7, 8, 9));
}

static void test_fusion_call_map(void **state)
{
	static const char *fusion =
		"HloModule f\n"
		"inner {\n"
		"  a = f32[2] parameter(0)\n"
		"  ROOT n = f32[2] negate(a)\n"
		"}\n"
		"outer {\n"
		"  x = f32[2] parameter(0)\n"
		"  y = f32[2] parameter(1)\n"
		"  f = f32[2] fusion(x), kind=kLoop, calls=inner\n"
		"  ROOT m = f32[2] multiply(f, y)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = f32[2] parameter(0)\n"
		"  q = f32[2] parameter(1)\n"
		"  ROOT r = f32[2] fusion(p, q), kind=kLoop, calls=outer\n"
		"}\n";
	static const char *map =
		"sq {\n"
		"  x = f32[] parameter(0)\n"
		"  ROOT m = f32[] multiply(x, x)\n"
		"}\n"
		"twice {\n"
		"  x = f32[3] parameter(0)\n"
		"  ROOT a = f32[3] add(x, x)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = f32[3] parameter(0)\n"
		"  mp = f32[3] map(p), dimensions={0}, to_apply=sq\n"
		"  c = f32[3] call(mp), to_apply=twice\n"
		"  u = (f32[3], f32[3]) tuple(mp, c)\n"
		"  t = (f32[3], (f32[3], f32[3])) tuple(p, u)\n"
		"  g = (f32[3], f32[3]) get-tuple-element(t), index=1\n"
		"  ROOT h = f32[3] get-tuple-element(g), index=1\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(2), V(1, 2));
	in[1] = tmk(USC_F32, 1, D(2), V(3, 4));
	trun(fusion, in, 2, USC_F32, 2, V(-3, -8));
	in[0] = tmk(USC_F32, 1, D(3), V(1, 2, 3));
	trun(map, in, 1, USC_F32, 3, V(2, 8, 18));
}

static void test_integer_semantics(void **state)
{
	static const char *div = "ENTRY main {\n"
				 "  a = s32[4] parameter(0)\n"
				 "  b = s32[4] parameter(1)\n"
				 "  d = s32[4] divide(a, b)\n"
				 "  r = s32[4] remainder(a, b)\n"
				 "  ROOT t = (s32[4], s32[4]) tuple(d, r)\n"
				 "}\n";
	static const char *udiv = "ENTRY main {\n"
				  "  a = u8[2] parameter(0)\n"
				  "  b = u8[2] parameter(1)\n"
				  "  ROOT d = u8[2] divide(a, b)\n"
				  "}\n";
	static const char *shl = "ENTRY main {\n"
				 "  a = s8[3] parameter(0)\n"
				 "  b = s8[3] parameter(1)\n"
				 "  l = s8[3] shift-left(a, b)\n"
				 "  r = s8[3] shift-right-arithmetic(a, b)\n"
				 "  u = s8[3] shift-right-logical(a, b)\n"
				 "  ROOT t = (s8[3], s8[3], s8[3]) tuple(l, r, u)\n"
				 "}\n";
	static const char *cvt = "ENTRY main {\n"
				 "  a = f32[5] parameter(0)\n"
				 "  ROOT c = s32[5] convert(a)\n"
				 "}\n";
	static const char *wrap = "ENTRY main {\n"
				  "  a = s8[3] parameter(0)\n"
				  "  b = s8[3] parameter(1)\n"
				  "  s = s8[3] add(a, b)\n"
				  "  c = s32[3] convert(s)\n"
				  "  ROOT p = s32[3] popcnt(c)\n"
				  "}\n";
	usc_tensor *in[2];
	const double imin = -2147483648.0;

	(void)state;
	/* XLA: x / 0 = -1, INT_MIN / -1 = INT_MIN; x % 0 = x, INT_MIN % -1 = 0. */
	in[0] = tmk(USC_S32, 1, D(4), V(7, -7, 5, imin));
	in[1] = tmk(USC_S32, 1, D(4), V(2, 2, 0, -1));
	trun_o(div, in, 2, 0, USC_S32, 4, V(3, -3, -1, imin), NULL);
	in[0] = tmk(USC_S32, 1, D(4), V(7, -7, 5, imin));
	in[1] = tmk(USC_S32, 1, D(4), V(2, 2, 0, -1));
	trun_o(div, in, 2, 1, USC_S32, 4, V(1, -1, 5, 0), NULL);
	/* Unsigned x / 0 is all ones. */
	in[0] = tmk(USC_U8, 1, D(2), V(200, 7));
	in[1] = tmk(USC_U8, 1, D(2), V(0, 2));
	trun(udiv, in, 2, USC_U8, 2, V(255, 3));
	/*
	 * Counts of 8 or more (as unsigned; -1 is 255) shift everything
	 * out: left and logical give 0, arithmetic the sign fill.
	 * 1 << 3 = 8; -128 >> 3 = -16 (arith), 0x80 >> 3 = 16 (logical);
	 * 64 << 1 = 128 wraps to -128, 64 >> 1 = 32.
	 */
	in[0] = tmk(USC_S8, 1, D(3), V(1, -128, 64));
	in[1] = tmk(USC_S8, 1, D(3), V(3, 8, -1));
	trun_o(shl, in, 2, 0, USC_S8, 3, V(8, 0, 0), NULL);
	in[0] = tmk(USC_S8, 1, D(3), V(1, -128, 64));
	in[1] = tmk(USC_S8, 1, D(3), V(3, 8, -1));
	trun_o(shl, in, 2, 1, USC_S8, 3, V(0, -1, 0), NULL);
	in[0] = tmk(USC_S8, 1, D(3), V(-128, -128, 64));
	in[1] = tmk(USC_S8, 1, D(3), V(3, 7, 1));
	trun_o(shl, in, 2, 2, USC_S8, 3, V(16, 1, 32), NULL);
	/* Truncation toward zero, NaN to 0, saturation. */
	in[0] = tmk(USC_F32, 1, D(5), V(2.7, -2.7, NAN, 1e10, -1e10));
	trun(cvt, in, 1, USC_S32, 5, V(2, -2, 0, 2147483647, imin));
	/*
	 * 100 + 100 wraps to -56 = 0xc8 in s8, sign-extended to s32
	 * 0xffffffc8: 24 + 3 = 27 ones.  127 + 1 = -128: 0xffffff80, 25 ones.
	 */
	in[0] = tmk(USC_S8, 1, D(3), V(100, 127, 3));
	in[1] = tmk(USC_S8, 1, D(3), V(100, 1, 4));
	trun(wrap, in, 2, USC_S32, 3, V(27, 25, 3));
}

static void test_compare_select_clamp(void **state)
{
	static const char *total =
		"ENTRY main {\n"
		"  a = f32[4] parameter(0)\n"
		"  b = f32[4] parameter(1)\n"
		"  t = pred[4] compare(a, b), direction=LT, type=TOTALORDER\n"
		"  f = pred[4] compare(a, b), direction=LT\n"
		"  n = pred[4] compare(a, b), direction=NE\n"
		"  ROOT r = (pred[4], pred[4], pred[4]) tuple(t, f, n)\n"
		"}\n";
	static const char *clamp =
		"ENTRY main {\n"
		"  lo = f32[] constant(0)\n"
		"  hi = f32[] constant(1)\n"
		"  x = f32[4] parameter(0)\n"
		"  ROOT c = f32[4] clamp(lo, x, hi)\n"
		"}\n";
	static const char *minmax =
		"ENTRY main {\n"
		"  a = f32[3] parameter(0)\n"
		"  b = f32[3] parameter(1)\n"
		"  mx = f32[3] maximum(a, b)\n"
		"  mn = f32[3] minimum(a, b)\n"
		"  ROOT r = (f32[3], f32[3]) tuple(mx, mn)\n"
		"}\n";
	usc_tensor *in[2];

	(void)state;
	/*
	 * Total order: -0 < +0, +NaN above everything, -NaN below.
	 * IEEE (FLOAT): -0 == +0, NaN unordered.
	 */
	in[0] = tmk(USC_F32, 1, D(4), V(-0.0, NAN, 1, -NAN));
	in[1] = tmk(USC_F32, 1, D(4), V(0.0, 1, NAN, -INFINITY));
	trun_o(total, in, 2, 0, USC_PRED, 4, V(1, 0, 1, 1), NULL);
	in[0] = tmk(USC_F32, 1, D(4), V(-0.0, NAN, 1, -NAN));
	in[1] = tmk(USC_F32, 1, D(4), V(0.0, 1, NAN, -INFINITY));
	trun_o(total, in, 2, 1, USC_PRED, 4, V(0, 0, 0, 0), NULL);
	in[0] = tmk(USC_F32, 1, D(4), V(-0.0, NAN, 1, -NAN));
	in[1] = tmk(USC_F32, 1, D(4), V(0.0, 1, NAN, -INFINITY));
	trun_o(total, in, 2, 2, USC_PRED, 4, V(0, 1, 1, 1), NULL);
	/* Scalar bounds; NaN propagates through max and min. */
	in[0] = tmk(USC_F32, 1, D(4), V(-1, 0.5, 2, NAN));
	trun(clamp, in, 1, USC_F32, 4, V(0, 0.5, 1, NAN));
	in[0] = tmk(USC_F32, 1, D(3), V(NAN, -0.0, 1));
	in[1] = tmk(USC_F32, 1, D(3), V(1, 0.0, NAN));
	trun_o(minmax, in, 2, 0, USC_F32, 3, V(NAN, 0.0, NAN), NULL);
	in[0] = tmk(USC_F32, 1, D(3), V(NAN, -0.0, 1));
	in[1] = tmk(USC_F32, 1, D(3), V(1, 0.0, NAN));
	trun_o(minmax, in, 2, 1, USC_F32, 3, V(NAN, -0.0, NAN), NULL);
}

static void test_bits(void **state)
{
	static const char *same = "ENTRY main {\n"
				  "  a = f32[2] parameter(0)\n"
				  "  ROOT b = u32[2] bitcast-convert(a)\n"
				  "}\n";
	static const char *split = "ENTRY main {\n"
				   "  a = f32[1] parameter(0)\n"
				   "  ROOT b = u8[1,4] bitcast-convert(a)\n"
				   "}\n";
	static const char *rp =
		"ENTRY main {\n"
		"  a = f32[6] parameter(0)\n"
		"  b = f32[6] reduce-precision(a), exponent_bits=8, "
		"mantissa_bits=7\n"
		"  h = f32[6] reduce-precision(a), exponent_bits=5, "
		"mantissa_bits=10\n"
		"  ROOT t = (f32[6], f32[6]) tuple(b, h)\n"
		"}\n";
	usc_tensor *in[1];

	(void)state;
	/* 1.0f = 0x3f800000, -2.0f = 0xc0000000. */
	in[0] = tmk(USC_F32, 1, D(2), V(1, -2));
	trun(same, in, 1, USC_U32, 2, V(1065353216.0, 3221225472.0));
	/* Little-endian bytes of 0x3f800000. */
	in[0] = tmk(USC_F32, 1, D(1), V(1));
	trun(split, in, 1, USC_U8, 4, V(0, 0, 128, 63));
	/*
	 * To bf16's 7 bits: 1+2^-8 ties to 1; 1+2^-7+2^-8 ties to even
	 * 1+2^-6.  To f16: 65520 rounds up to 2^16 and overflows to Inf;
	 * 1e-5 lies in f16's subnormal range, which reduce-precision
	 * flushes to zero; -1e-8 becomes -0.
	 */
	in[0] = tmk(USC_F32, 1, D(6),
		    V(1 + 0x1p-8, 1 + 0x1p-7 + 0x1p-8, 65520, 1e-5, -1e-8, NAN));
	trun_o(rp, in, 1, 0, USC_F32, 6,
	       V(1, 1 + 0x1p-6, 65536, 0x1.5p-17, -0x1.58p-27, NAN), NULL);
	in[0] = tmk(USC_F32, 1, D(6),
		    V(1 + 0x1p-8, 1 + 0x1p-7 + 0x1p-8, 65520, 1e-5, -1e-8, NAN));
	trun_o(rp, in, 1, 1, USC_F32, 6,
	       V(1 + 0x1p-8, 1 + 0x1p-7 + 0x1p-8, INFINITY, 0, -0.0, NAN),
	       NULL);
}

static void test_reduce_window(void **state)
{
	static const char *w1 = "add {\n"
				"  x = f32[] parameter(0)\n"
				"  y = f32[] parameter(1)\n"
				"  ROOT s = f32[] add(x, y)\n"
				"}\n"
				"ENTRY main {\n"
				"  p = f32[4] parameter(0)\n"
				"  z = f32[] constant(0)\n"
				"  ROOT r = f32[3] reduce-window(p, z), "
				"window={size=2}, to_apply=add\n"
				"}\n";
	static const char *w2 = "mx {\n"
				"  x = f32[] parameter(0)\n"
				"  y = f32[] parameter(1)\n"
				"  ROOT s = f32[] maximum(x, y)\n"
				"}\n"
				"ENTRY main {\n"
				"  p = f32[2,3] parameter(0)\n"
				"  z = f32[] constant(-inf)\n"
				"  ROOT r = f32[2,2] reduce-window(p, z), "
				"window={size=2x2 pad=0_1x0_0 stride=1x1}, "
				"to_apply=mx\n"
				"}\n";
	usc_tensor *in[1];

	(void)state;
	in[0] = tmk(USC_F32, 1, D(4), V(1, 2, 3, 4));
	trun(w1, in, 1, USC_F32, 3, V(3, 5, 7));
	/*
	 * [[1,5,2],[4,0,3]] padded below by a row: 2x2 max windows:
	 * rows 0-1: max(1,5,4,0)=5, max(5,2,0,3)=5; row 1 + pad:
	 * max(4,0)=4, max(0,3)=3.
	 */
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 5, 2, 4, 0, 3));
	trun(w2, in, 1, USC_F32, 4, V(5, 5, 4, 3));
}

static void test_bitcast_layout(void **state)
{
	static const char *text =
		"ENTRY main {\n"
		"  p = f32[2,3]{1,0} parameter(0)\n"
		"  ROOT b = f32[3,2]{0,1} bitcast(p)\n"
		"}\n";
	usc_tensor *in[1];

	(void)state;
	/*
	 * The result's column-major layout over the same buffer
	 * [1..6]: element (i, j) is at offset i + 3j, i.e. the transpose.
	 */
	in[0] = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	trun(text, in, 1, USC_F32, 6, V(1, 4, 2, 5, 3, 6));
}

static void test_errors(void **state)
{
	static const char *unsup = "ENTRY main {\n"
				   "  p = f32[4] parameter(0)\n"
				   "  ROOT c = f32[4] custom-call(p), "
				   "custom_call_target=\"foo\"\n"
				   "}\n";
	static const char *ok = "ENTRY main {\n"
				"  x = f32[4,4] parameter(0)\n"
				"  ROOT n = f32[4,4] negate(x)\n"
				"}\n";
	static const char *elided = "ENTRY main {\n"
				    "  ROOT c = f32[4] constant({...})\n"
				    "}\n";
	usc_hlo_file *f = NULL;
	usc_eval *ev = NULL;
	usc_tensor *t;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_parse(unsup, strlen(unsup), "<t>", &f, &err),
			 USC_OK);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 USC_EUNSUPPORTED);
	assert_string_equal(err.message,
			    "unsupported op custom-call at 3:8 (instruction "
			    "'c'): its target 'foo' is not XLA's TopK, the "
			    "one custom call the evaluator runs");
	assert_null(ev);
	usc_hlo_file_destroy(f);

	assert_int_equal(usc_hlo_parse(elided, strlen(elided), "<t>", &f,
				       &err),
			 USC_OK);
	assert_int_equal(usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
					 &err),
			 USC_EUNSUPPORTED);
	assert_string_equal(err.message,
			    "constant with an elided value at 2:8 "
			    "(instruction 'c')");
	usc_hlo_file_destroy(f);

	ev = tcreate(ok, &f, NULL);
	t = tmk(USC_BF16, 2, D(4, 4),
		V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_int_equal(usc_eval_bind(ev, 0, t, &err), USC_EINVAL);
	assert_string_equal(err.message,
			    "parameter 0 ('x') expects f32[4,4], got "
			    "bf16[4,4]");
	assert_int_equal(usc_eval_bind(ev, 1, t, &err), USC_ERANGE);
	assert_int_equal(usc_eval_run(ev, &err), USC_EINVAL);
	assert_string_equal(err.message, "parameter 0 ('x') is not bound");
	usc_tensor_destroy(t);
	usc_eval_destroy(ev);
	usc_hlo_file_destroy(f);
}

/*
 * Out of memory at every allocation in turn: each failure is reported as
 * USC_ENOMEM (or the run succeeds) and nothing leaks.
 */
static void test_alloc_failures(void **state)
{
	static const char *text =
		"add {\n"
		"  x = f32[] parameter(0)\n"
		"  y = f32[] parameter(1)\n"
		"  ROOT s = f32[] add(x, y)\n"
		"}\n"
		"inner {\n"
		"  a = f32[2,3] parameter(0)\n"
		"  e = f32[2,3] exponential(a)\n"
		"  z = f32[] constant(0)\n"
		"  r = f32[2] reduce(e, z), dimensions={1}, to_apply=add\n"
		"  t = f32[3,2] transpose(a), dimensions={1,0}\n"
		"  d = f32[2,2] dot(a, t), lhs_contracting_dims={1}, "
		"rhs_contracting_dims={0}\n"
		"  ROOT u = (f32[2], f32[2,2]) tuple(r, d)\n"
		"}\n"
		"ENTRY main {\n"
		"  p = f32[2,3] parameter(0)\n"
		"  ROOT f = (f32[2], f32[2,2]) fusion(p), kind=kLoop, "
		"calls=inner\n"
		"}\n";
	usc_hlo_file *f = NULL;
	usc_tensor *x;
	usc_error err;
	long n, base;
	bool done = false;

	(void)state;
	assert_int_equal(usc_hlo_parse(text, strlen(text), "<t>", &f, &err),
			 USC_OK);
	x = tmk(USC_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6));
	base = usc__alloc_live();
	for (n = 0; !done && n < 10000; n++) {
		usc_eval *ev = NULL;
		usc_status st;

		usc__alloc_fail_after(n);
		st = usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev,
				     &err);
		if (st == USC_OK) {
			st = usc_eval_bind(ev, 0, x, &err);
			if (st == USC_OK)
				st = usc_eval_run(ev, &err);
		}
		usc__alloc_fail_after(-1);
		if (st == USC_OK)
			done = true;
		else
			assert_int_equal(st, USC_ENOMEM);
		usc_eval_destroy(ev);
		assert_int_equal(usc__alloc_live(), base);
	}
	assert_true(done);
	usc_tensor_destroy(x);
	usc_hlo_file_destroy(f);
}

static void test_no_leaks(void **state)
{
	(void)state;
	assert_int_equal(usc__alloc_live(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_form),
		cmocka_unit_test(test_bf16_rounding),
		cmocka_unit_test(test_transpose_reshape_broadcast),
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_concat_pad_iota_reverse),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_reduce_order),
		cmocka_unit_test(test_argmax),
		cmocka_unit_test(test_dot),
		cmocka_unit_test(test_convolution),
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_fusion_call_map),
		cmocka_unit_test(test_integer_semantics),
		cmocka_unit_test(test_compare_select_clamp),
		cmocka_unit_test(test_bits),
		cmocka_unit_test(test_reduce_window),
		cmocka_unit_test(test_bitcast_layout),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_no_leaks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
