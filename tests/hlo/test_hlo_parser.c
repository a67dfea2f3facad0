/*
 * Parser and printer tests: every construct of the grammar with its
 * expected IR written out by hand, the exact printed text of small
 * modules in both forms, the opcode table, and regression inputs found by
 * the fuzzer (tests/fuzz).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "ulpscope/hlo.h"

static usc_hlo_file *parse_ok(const char *text)
{
	usc_hlo_file *f = NULL;
	usc_error err;

	if (usc_hlo_parse(text, strlen(text), "t.hlo", &f, &err) != USC_OK)
		fail_msg("unexpected parse failure: %s", err.message);
	return f;
}

static usc_hlo_instr *instr(usc_hlo_file *f, const char *comp,
			    const char *name)
{
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	usc_hlo_computation *c = usc_hlo_module_computation(m, comp);
	usc_hlo_instr *in;

	assert_non_null(c);
	in = usc_hlo_computation_instr(c, name);
	if (!in)
		fail_msg("no instruction %s in %s", name, comp);
	return in;
}

static const usc_hlo_attr *attr(const usc_hlo_instr *in, const char *name,
				usc_hlo_attr_kind kind)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	if (!a)
		fail_msg("%s has no attribute %s", in->name, name);
	assert_int_equal(a->kind, kind);
	return a;
}

static void assert_round_trip(usc_hlo_file *f)
{
	usc_hlo_print_form forms[2] = {USC_HLO_PRINT_LONG, USC_HLO_PRINT_SHORT};
	size_t k, i;

	for (k = 0; k < 2; k++) {
		usc_hlo_print_options o = usc_hlo_print_options_default();
		usc_hlo_file *g = NULL;
		char *text = NULL, diff[256];
		size_t len;
		usc_error err;

		o.form = forms[k];
		assert_int_equal(usc_hlo_file_print(f, &o, &text, &len, &err),
				 USC_OK);
		if (usc_hlo_parse(text, len, "p", &g, &err) != USC_OK)
			fail_msg("reparse: %s\n%s", err.message, text);
		assert_int_equal(usc_hlo_file_module_count(g),
				 usc_hlo_file_module_count(f));
		for (i = 0; i < usc_hlo_file_module_count(f); i++)
			if (!usc_hlo_module_equal(usc_hlo_file_module(f, i),
						  usc_hlo_file_module(g, i), diff,
						  sizeof diff))
				fail_msg("round trip: %s\n%s", diff, text);
		usc_hlo_file_destroy(g);
		usc_hlo_text_free(text);
	}
}

static void test_opcode_table(void **state)
{
	usc_hlo_opcode op;

	(void)state;
	/* XLA's HLO_OPCODE_LIST has 136 entries (xla/hlo/ir/hlo_opcode.h). */
	assert_int_equal(USC_HLO_OP_COUNT - 1, 136);
	assert_int_equal(usc_hlo_opcode_from_name("get-tuple-element", 17, &op),
			 USC_OK);
	assert_int_equal(op, USC_HLO_OP_GET_TUPLE_ELEMENT);
	assert_int_equal(usc_hlo_opcode_from_name("addx", 4, &op),
			 USC_ENOTFOUND);
	assert_string_equal(usc_hlo_opcode_name(USC_HLO_OP_CLZ),
			    "count-leading-zeros");
	assert_int_equal(usc_hlo_opcode_arity(USC_HLO_OP_SELECT), 3);
	assert_int_equal(usc_hlo_opcode_arity(USC_HLO_OP_TUPLE),
			 USC_HLO_VARIADIC);
	assert_int_equal(usc_hlo_opcode_arity(USC_HLO_OP_RAGGED_ALL_TO_ALL), 6);
	assert_int_equal(usc_hlo_opcode_category(USC_HLO_OP_DOT),
			 USC_HLO_CAT_LINALG);
	assert_string_equal(usc_hlo_category_name(USC_HLO_CAT_ELEMENTWISE),
			    "elementwise");
	for (op = 1; op < USC_HLO_OP_COUNT; op++) {
		const char *s = usc_hlo_opcode_name(op);
		usc_hlo_opcode back;

		assert_int_equal(usc_hlo_opcode_from_name(s, strlen(s), &back),
				 USC_OK);
		assert_int_equal(back, op);
	}
}

static const char long_text[] =
	"HloModule jit_f, is_scheduled=true, "
	"entry_computation_layout={(f32[2,3]{1,0})->f32[]}, "
	"frontend_attributes={a=\"b\"}\n"
	"\n"
	"%add (x: f32[], y: f32[]) -> f32[] {\n"
	"  %x = f32[] parameter(0)\n"
	"  %y = f32[] parameter(1)\n"
	"  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
	"}\n"
	"\n"
	"ENTRY %main (p: f32[2,3]) -> f32[] {\n"
	"  %p = f32[2,3]{1,0:T(8,128)(2,1)S(1)} parameter(0), "
	"metadata={op_type=\"Add\" op_name=\"jit(f)/add\" "
	"source_file=\"/t/f.py\" source_line=12 stack_frame_id=4}\n"
	"  %d = s32[<=4,?] parameter(1)\n"
	"  %t = (f32[], (s32[2], pred[])) parameter(2)\n"
	"  %tok = token[] after-all()\n"
	"  %z = f32[] constant(0)\n"
	"  ROOT %r = f32[] reduce(f32[2,3]{1,0} %p, f32[] %z), "
	"dimensions={0,1}, to_apply=%add, sharding={replicated}, "
	"mystery_attr=[1,2]<=[2]\n"
	"}\n";

static void test_long_form(void **state)
{
	usc_hlo_file *f = parse_ok(long_text);
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	usc_hlo_instr *p, *d, *t, *tok, *r;
	const usc_hlo_attr *a;

	(void)state;
	assert_int_equal(usc_hlo_file_module_count(f), 1);
	assert_string_equal(m->name, "jit_f");
	assert_int_equal(m->attr_count, 3);
	assert_int_equal(m->attrs[0].kind, USC_HLO_ATTR_BOOL);
	assert_true(m->attrs[0].b);
	assert_int_equal(m->attrs[1].kind, USC_HLO_ATTR_RAW);
	assert_string_equal(m->attrs[1].text, "{(f32[2,3]{1,0})->f32[]}");
	assert_string_equal(m->attrs[2].text, "{a=\"b\"}");
	assert_int_equal(m->computation_count, 2);
	assert_string_equal(m->entry->name, "main");
	assert_true(m->entry->explicit_entry);
	assert_true(m->computations[0]->has_signature);
	assert_int_equal(m->computations[0]->param_count, 2);
	assert_string_equal(m->computations[0]->params[1].name, "y");

	p = instr(f, "main", "p");
	assert_int_equal(p->opcode, USC_HLO_OP_PARAMETER);
	assert_int_equal(p->parameter_number, 0);
	assert_int_equal(p->shape.kind, USC_HLO_SHAPE_ARRAY);
	assert_int_equal(p->shape.dtype, USC_F32);
	assert_int_equal(p->shape.rank, 2);
	assert_int_equal(p->shape.dims[0], 2);
	assert_int_equal(p->shape.dims[1], 3);
	assert_string_equal(p->shape.layout, "1,0:T(8,128)(2,1)S(1)");
	assert_int_equal(p->loc.line, 10);
	assert_int_equal(p->loc.column, 3);
	assert_non_null(p->metadata);
	assert_string_equal(p->metadata->op_type, "Add");
	assert_string_equal(p->metadata->op_name, "jit(f)/add");
	assert_string_equal(p->metadata->source_file, "/t/f.py");
	assert_int_equal(p->metadata->source_line, 12);
	assert_int_equal(p->metadata->other_count, 1);
	assert_string_equal(p->metadata->others[0].key, "stack_frame_id");
	assert_string_equal(p->metadata->others[0].value, "4");

	d = instr(f, "main", "d");
	assert_int_equal(d->shape.dtype, USC_S32);
	assert_int_equal(d->shape.dim_kinds[0], USC_HLO_DIM_BOUNDED);
	assert_int_equal(d->shape.dims[0], 4);
	assert_int_equal(d->shape.dim_kinds[1], USC_HLO_DIM_UNBOUNDED);
	assert_int_equal(d->shape.dims[1], -1);
	assert_null(d->shape.layout);

	t = instr(f, "main", "t");
	assert_int_equal(t->shape.kind, USC_HLO_SHAPE_TUPLE);
	assert_int_equal(t->shape.tuple_count, 2);
	assert_int_equal(t->shape.tuple[1].kind, USC_HLO_SHAPE_TUPLE);
	assert_int_equal(t->shape.tuple[1].tuple[1].dtype, USC_PRED);
	assert_int_equal(t->shape.tuple[1].tuple[1].rank, 0);

	tok = instr(f, "main", "tok");
	assert_int_equal(tok->shape.kind, USC_HLO_SHAPE_TOKEN);
	assert_int_equal(tok->operand_count, 0);

	r = instr(f, "main", "r");
	assert_true(r->is_root);
	assert_ptr_equal(m->entry->root, r);
	assert_int_equal(r->operand_count, 2);
	assert_ptr_equal(r->operands[0], p);
	assert_int_equal(r->called_count, 1);
	assert_ptr_equal(r->called[0], m->computations[0]);
	a = attr(r, "dimensions", USC_HLO_ATTR_INTS);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->ints[1], 1);
	a = attr(r, "to_apply", USC_HLO_ATTR_COMPUTATIONS);
	assert_string_equal(a->names[0], "add");
	a = attr(r, "sharding", USC_HLO_ATTR_RAW);
	assert_string_equal(a->text, "{replicated}");
	a = attr(r, "mystery_attr", USC_HLO_ATTR_RAW);
	assert_string_equal(a->text, "[1,2]<=[2]");
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
}

static const char attrs_text[] =
	"c {\n"
	"  a = f32[4,4] parameter(0)\n"
	"  i = s32[3,1] parameter(1)\n"
	"  k = f32[3,3,4,8] parameter(2)\n"
	"  z = f32[] constant(0)\n"
	"  sl = f32[2,2] slice(a), slice={[0:4:2], [1:3]}\n"
	"  pd = f32[7,5] pad(a, z), padding=1_2x0_1_0\n"
	"  pi = f32[9,4] pad(a, z), padding=0_0_1x0_0\n"
	"  cv = f32[1,4,4,8] convolution(a, k), window={size=3x3 stride=2x1 "
	"pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}, "
	"dim_labels=b01f_01io->b01f, feature_group_count=2, "
	"batch_group_count=1, operand_precision={high,default}\n"
	"  dt = f32[4,4] dot(a, a), lhs_batch_dims={}, lhs_contracting_dims={1}, "
	"rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32\n"
	"  g = f32[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
	"start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, "
	"indices_are_sorted=true, operand_batching_dims={}, "
	"start_indices_batching_dims={}\n"
	"  cmp = pred[4,4] compare(a, a), direction=LT, type=TOTALORDER\n"
	"  rp = f32[4,4] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n"
	"  io = s32[4] iota(), iota_dimension=0\n"
	"  cc = f32[4] custom-call(a), custom_call_target=\"my\\\"target\", "
	"backend_config=\"cfg\", api_version=API_VERSION_TYPED_FFI\n"
	"  ds = f32[2,2] dynamic-slice(a, z, z), dynamic_slice_sizes={2,2}, "
	"control-predecessors={%cc}, result_accuracy={tolerance={atol=0 rtol=0 "
	"ulps=1}}\n"
	"  ROOT w = f32[2,4] reduce-window(a, z), window={size=2x1 stride=2x1}\n"
	"}\n";

static void test_typed_attributes(void **state)
{
	usc_hlo_file *f = parse_ok(attrs_text);
	const usc_hlo_attr *a;
	const usc_hlo_instr *in;

	(void)state;
	a = attr(instr(f, "c", "sl"), "slice", USC_HLO_ATTR_SLICE);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->slice[0].start, 0);
	assert_int_equal(a->slice[0].limit, 4);
	assert_int_equal(a->slice[0].stride, 2);
	assert_true(a->slice[0].has_stride);
	assert_int_equal(a->slice[1].start, 1);
	assert_int_equal(a->slice[1].limit, 3);
	assert_int_equal(a->slice[1].stride, 1);
	assert_false(a->slice[1].has_stride);

	a = attr(instr(f, "c", "pd"), "padding", USC_HLO_ATTR_PADDING);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->pad[0].lo, 1);
	assert_int_equal(a->pad[0].hi, 2);
	assert_false(a->pad[0].has_interior);
	assert_int_equal(a->pad[1].lo, 0);
	assert_int_equal(a->pad[1].hi, 1);
	assert_int_equal(a->pad[1].interior, 0);
	assert_true(a->pad[1].has_interior);
	a = attr(instr(f, "c", "pi"), "padding", USC_HLO_ATTR_PADDING);
	assert_int_equal(a->pad[0].interior, 1);

	in = instr(f, "c", "cv");
	a = attr(in, "window", USC_HLO_ATTR_WINDOW);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->window[0].size, 3);
	assert_int_equal(a->window[0].stride, 2);
	assert_int_equal(a->window[1].stride, 1);
	assert_int_equal(a->window[0].pad_lo, 1);
	assert_int_equal(a->window[0].pad_hi, 1);
	assert_int_equal(a->window[1].pad_lo, 0);
	assert_int_equal(a->window[1].pad_hi, -1);
	assert_int_equal(a->window[1].lhs_dilate, 2);
	assert_int_equal(a->window[0].rhs_dilate, 2);
	assert_false(a->window[0].rhs_reversal);
	assert_true(a->window[1].rhs_reversal);
	assert_int_equal(a->window_fields, 63);
	a = attr(in, "dim_labels", USC_HLO_ATTR_DIM_LABELS);
	assert_string_equal(a->text, "b01f_01io->b01f");
	assert_int_equal(a->labels->spatial_count, 2);
	assert_int_equal(a->labels->input_batch, 0);
	assert_int_equal(a->labels->input_feature, 3);
	assert_int_equal(a->labels->input_spatial[0], 1);
	assert_int_equal(a->labels->input_spatial[1], 2);
	assert_int_equal(a->labels->kernel_spatial[0], 0);
	assert_int_equal(a->labels->kernel_input_feature, 2);
	assert_int_equal(a->labels->kernel_output_feature, 3);
	assert_int_equal(a->labels->output_feature, 3);
	assert_int_equal(attr(in, "feature_group_count", USC_HLO_ATTR_INT)->i, 2);
	assert_int_equal(attr(in, "batch_group_count", USC_HLO_ATTR_INT)->i, 1);
	a = attr(in, "operand_precision", USC_HLO_ATTR_NAMES);
	assert_int_equal(a->count, 2);
	assert_string_equal(a->names[0], "high");
	assert_string_equal(a->names[1], "default");

	in = instr(f, "c", "dt");
	assert_int_equal(attr(in, "lhs_batch_dims", USC_HLO_ATTR_INTS)->count, 0);
	assert_int_equal(attr(in, "lhs_contracting_dims", USC_HLO_ATTR_INTS)->ints[0], 1);
	assert_string_equal(attr(in, "algorithm", USC_HLO_ATTR_IDENT)->text,
			    "dot_bf16_bf16_f32");

	in = instr(f, "c", "g");
	assert_int_equal(attr(in, "slice_sizes", USC_HLO_ATTR_INTS)->ints[1], 4);
	assert_int_equal(attr(in, "index_vector_dim", USC_HLO_ATTR_INT)->i, 1);
	assert_true(attr(in, "indices_are_sorted", USC_HLO_ATTR_BOOL)->b);
	assert_int_equal(attr(in, "start_indices_batching_dims", USC_HLO_ATTR_INTS)->count, 0);

	in = instr(f, "c", "cmp");
	assert_string_equal(attr(in, "direction", USC_HLO_ATTR_IDENT)->text, "LT");
	assert_string_equal(attr(in, "type", USC_HLO_ATTR_IDENT)->text, "TOTALORDER");
	in = instr(f, "c", "rp");
	assert_int_equal(attr(in, "exponent_bits", USC_HLO_ATTR_INT)->i, 5);
	assert_int_equal(attr(in, "mantissa_bits", USC_HLO_ATTR_INT)->i, 10);
	assert_int_equal(attr(instr(f, "c", "io"), "iota_dimension",
			      USC_HLO_ATTR_INT)->i, 0);
	in = instr(f, "c", "cc");
	assert_string_equal(attr(in, "custom_call_target", USC_HLO_ATTR_STRING)->text,
			    "my\"target");
	assert_string_equal(attr(in, "backend_config", USC_HLO_ATTR_STRING)->text,
			    "cfg");
	assert_string_equal(attr(in, "api_version", USC_HLO_ATTR_RAW)->text,
			    "API_VERSION_TYPED_FFI");
	in = instr(f, "c", "ds");
	assert_int_equal(attr(in, "dynamic_slice_sizes", USC_HLO_ATTR_INTS)->count, 2);
	assert_string_equal(attr(in, "control-predecessors", USC_HLO_ATTR_NAMES)->names[0],
			    "cc");
	assert_string_equal(attr(in, "result_accuracy", USC_HLO_ATTR_RAW)->text,
			    "{tolerance={atol=0 rtol=0 ulps=1}}");
	a = attr(instr(f, "c", "w"), "window", USC_HLO_ATTR_WINDOW);
	assert_int_equal(a->window_fields, USC_HLO_WINDOW_HAS_SIZE |
						   USC_HLO_WINDOW_HAS_STRIDE);
	assert_int_equal(a->window[0].pad_lo, 0);
	assert_int_equal(a->window[1].lhs_dilate, 1);
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
}

static const char const_text[] =
	"e {\n"
	"  a = f32[] constant(-3.40282347e+38)\n"
	"  b = bf16[2,3] constant({{1, 2.5, -0}, {inf, -inf, nan}})\n"
	"  c = f8e4m3fn[2] constant({448, -0.001953125})\n"
	"  d = pred[3] constant({true, false, true})\n"
	"  e = c64[] constant((1.5, -2))\n"
	"  f = f32[1917] constant({...})\n"
	"  g = (s32[], f32[2]) constant((7, {1, 2}))\n"
	"  h = f64[] constant(nan(0x7f))\n"
	"  i = s64[2,0] constant({{}, {}})\n"
	"  j = u8[] constant(0x1f)\n"
	"}\n";

static void test_constants(void **state)
{
	usc_hlo_file *f = parse_ok(const_text);
	const usc_hlo_literal *l;

	(void)state;
	l = instr(f, "e", "a")->literal;
	assert_int_equal(l->kind, USC_HLO_LITERAL_ARRAY);
	assert_int_equal(l->count, 1);
	assert_string_equal(l->elems[0].text, "-3.40282347e+38");
	/* The decimal is FLT_MAX's shortest form; it rounds to it in f32. */
	assert_true((float)l->elems[0].value == -0x1.fffffep+127f);

	l = instr(f, "e", "b")->literal;
	assert_int_equal(l->count, 6);
	assert_string_equal(l->elems[1].text, "2.5");
	assert_true(l->elems[1].value == 2.5);
	assert_true(l->elems[2].value == 0 && signbit(l->elems[2].value));
	assert_true(isinf(l->elems[3].value) && l->elems[3].value > 0);
	assert_true(isinf(l->elems[4].value) && l->elems[4].value < 0);
	assert_true(isnan(l->elems[5].value));

	l = instr(f, "e", "c")->literal;
	assert_true(l->elems[0].value == 448);
	assert_true(l->elems[1].value == -0x1p-9);

	l = instr(f, "e", "d")->literal;
	assert_true(l->elems[0].value == 1 && l->elems[1].value == 0);
	assert_string_equal(l->elems[2].text, "true");

	l = instr(f, "e", "e")->literal;
	assert_true(l->elems[0].value == 1.5 && l->elems[0].imag == -2);
	assert_string_equal(l->elems[0].imag_text, "-2");

	assert_int_equal(instr(f, "e", "f")->literal->kind,
			 USC_HLO_LITERAL_ELIDED);

	l = instr(f, "e", "g")->literal;
	assert_int_equal(l->kind, USC_HLO_LITERAL_TUPLE);
	assert_int_equal(l->tuple_count, 2);
	assert_true(l->tuple[0].elems[0].value == 7);
	assert_int_equal(l->tuple[1].count, 2);

	l = instr(f, "e", "h")->literal;
	assert_string_equal(l->elems[0].text, "nan(0x7f)");
	assert_true(isnan(l->elems[0].value));
	assert_int_equal(instr(f, "e", "i")->literal->count, 0);
	assert_true(instr(f, "e", "j")->literal->elems[0].value == 31);
	/* No ROOT: the last instruction is the root. */
	assert_string_equal(usc_hlo_file_module(f, 0)->entry->root->name, "j");
	assert_false(usc_hlo_file_module(f, 0)->entry->explicit_root);
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
}

static const char multi_text[] =
	"// RUN: hlo-opt %s | FileCheck %s\n"
	"HloModule first\n"
	"ENTRY e {\n"
	"  ROOT p = f32[] parameter(0)\n"
	"}\n"
	"// CHECK: something\n"
	"// -----\n"
	"callee {\n"
	"  ROOT q = f32[] negate(x)\n" /* used before its definition */
	"  x = f32[] parameter(0)\n"
	"}\n"
	"caller {\n"
	"  a = f32[] parameter(0)\n"
	"  ROOT c = f32[] call(a), to_apply=later\n"
	"}\n"
	"later {\n"
	"  ROOT y = f32[] parameter(0)\n"
	"}\n"
	"HloModule third\n"
	"ENTRY %main {\n"
	"  ROOT %z = f32[] parameter(0)\n"
	"}\n";

static void test_file_shapes(void **state)
{
	usc_hlo_file *f = parse_ok(multi_text);
	usc_hlo_module *m;
	usc_hlo_instr *q, *c;

	(void)state;
	assert_int_equal(usc_hlo_file_module_count(f), 3);
	m = usc_hlo_file_module(f, 0);
	assert_string_equal(m->name, "first");
	m = usc_hlo_file_module(f, 1);
	assert_false(m->has_header);
	assert_null(m->name);
	assert_int_equal(m->computation_count, 3);
	/* Headerless, no ENTRY: the last computation is the entry. */
	assert_string_equal(m->entry->name, "later");
	assert_false(m->entry->explicit_entry);
	q = usc_hlo_computation_instr(m->computations[0], "q");
	assert_string_equal(q->operands[0]->name, "x");
	c = usc_hlo_computation_instr(m->computations[1], "c");
	assert_ptr_equal(c->called[0], m->computations[2]);
	m = usc_hlo_file_module(f, 2);
	assert_string_equal(m->name, "third");
	assert_string_equal(m->entry->name, "main");
	assert_int_equal(m->entry->root->loc.line, 21);
	assert_int_equal(m->entry->root->loc.column, 8);
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
}

static void test_print_forms(void **state)
{
	static const char in[] =
		"HloModule m\n"
		"ENTRY %main {\n"
		"  %a = f32[2]{0} parameter(0), metadata={op_name=\"x\"}\n"
		"  %b = f32[2]{0} multiply(%a, %a)\n"
		"  ROOT %t = (f32[2]{0}) tuple(%b)\n"
		"}\n";
	static const char want_long[] =
		"HloModule m\n"
		"\n"
		"ENTRY %main (a: f32[2]{0}) -> (f32[2]{0}) {\n"
		"  %a = f32[2]{0} parameter(0), metadata={op_name=\"x\"}\n"
		"  %b = f32[2]{0} multiply(f32[2]{0} %a, f32[2]{0} %a)\n"
		"  ROOT %t = (f32[2]{0}) tuple(f32[2]{0} %b)\n"
		"}\n";
	static const char want_short[] =
		"HloModule m\n"
		"\n"
		"ENTRY main {\n"
		"  a = f32[2]{0} parameter(0)\n"
		"  b = f32[2]{0} multiply(a, a)\n"
		"  ROOT t = (f32[2]{0}) tuple(b)\n"
		"}\n";
	usc_hlo_file *f = parse_ok(in);
	usc_hlo_print_options o = usc_hlo_print_options_default();
	char *text;
	usc_error err;

	(void)state;
	assert_int_equal(usc_hlo_module_print(usc_hlo_file_module(f, 0), &o,
					      &text, NULL, &err),
			 USC_OK);
	assert_string_equal(text, want_long);
	usc_hlo_text_free(text);
	o.form = USC_HLO_PRINT_SHORT;
	o.print_metadata = false;
	assert_int_equal(usc_hlo_module_print(usc_hlo_file_module(f, 0), &o,
					      &text, NULL, &err),
			 USC_OK);
	assert_string_equal(text, want_short);
	usc_hlo_text_free(text);
	assert_int_equal(usc_hlo_shape_print(&usc_hlo_file_module(f, 0)
						      ->entry->root->shape,
					     &text, &err),
			 USC_OK);
	assert_string_equal(text, "(f32[2]{0})");
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
}

/*
 * Inputs the fuzzer found (tests/fuzz, docs/hlo.md), reduced by hand.  Each
 * must parse and round-trip, or fail cleanly, under ASan/UBSan.
 */
static void test_fuzz_regressions(void **state)
{
	/* A rank-0 shape parsed before the scratch stack had any storage. */
	static const char r1[] = "e {\n  ROOT a = u32[] parameter(0)\n}\n";
	/* A raw value that begins with '=' ("a= =b") must print back. */
	static const char r2[] =
		"e {\n  ROOT a = s32[] parameter(0), channel_i= =a\n}\n";
	/* A NUL byte inside a raw value is refused, not truncated. */
	static const char r3[] = "e {\n  ROOT a = s32[] parameter(0), b={\0}\n}\n";
	/* "%-x" is no name: the short form would print "-x". */
	static const char r4[] = "e {\n  ROOT %-x = s32[] parameter(0)\n}\n";
	usc_hlo_file *f;
	usc_error err;

	(void)state;
	f = NULL;
	assert_int_equal(usc_hlo_parse(r4, sizeof r4 - 1, "t", &f, &err),
			 USC_EPARSE);
	assert_string_equal(err.message,
			    "t:2:8: error: expected instruction name, found '%'\n"
			    "  ROOT %-x = s32[] parameter(0)\n"
			    "       ^");
	f = parse_ok(r1);
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
	f = parse_ok(r2);
	assert_string_equal(usc_hlo_instr_attr(usc_hlo_file_module(f, 0)
						       ->entry->root,
					       "channel_i")
				    ->text,
			    "=a");
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
	f = NULL;
	assert_int_equal(usc_hlo_parse(r3, sizeof r3 - 1, "t", &f, &err),
			 USC_EPARSE);
	assert_null(f);
}

static void test_stack_frame_tables(void **state)
{
	static const char text[] =
		"HloModule m, is_scheduled=true\n"
		"\n"
		"FileNames\n"
		"1 \"a.py\"\n"
		"\n"
		"StackFrames\n"
		"1 {file_location_id=1 parent_frame_id=1}\n"
		"2 {file_location_id=2 parent_frame_id=1}\n"
		"\n"
		"ENTRY e {\n"
		"  ROOT p = f32[] parameter(0), metadata={op_name=\"x\" "
		"stack_frame_id=2}\n"
		"}\n";
	usc_hlo_file *f = parse_ok(text);
	usc_hlo_module *m = usc_hlo_file_module(f, 0);

	(void)state;
	assert_int_equal(m->table_count, 2);
	assert_string_equal(m->tables[0].name, "FileNames");
	assert_int_equal(m->tables[0].count, 1);
	assert_string_equal(m->tables[0].entries[0].value, "\"a.py\"");
	assert_string_equal(m->tables[1].name, "StackFrames");
	assert_int_equal(m->tables[1].entries[1].id, 2);
	assert_string_equal(m->tables[1].entries[1].value,
			    "{file_location_id=2 parent_frame_id=1}");
	assert_string_equal(m->entry->root->metadata->others[0].value, "2");
	assert_round_trip(f);
	usc_hlo_file_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_long_form),
		cmocka_unit_test(test_typed_attributes),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_file_shapes),
		cmocka_unit_test(test_print_forms),
		cmocka_unit_test(test_fuzz_regressions),
		cmocka_unit_test(test_stack_frame_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
