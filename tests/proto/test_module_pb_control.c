/*
 * Control flow in HloModuleProto -> IR, on modules built here field by
 * field (XLA's field numbers, src/proto/xla_subset.proto), for the forms
 * the committed XLA:CPU programs of data/control_flow/ do not contain: a
 * conditional on a pred (true_computation / false_computation, the true
 * branch first in called_computation_ids), a custom call's API version,
 * and the errors of a malformed while, custom call or control
 * predecessor, each naming its instruction.  The converted conditional
 * is also evaluated: pred true takes the first branch, false the second
 * (values derived by hand).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/xla_proto.h"

/* XLA's PrimitiveType numbers (xla_data.proto). */
enum { PT_PRED = 1, PT_S32 = 4, PT_F32 = 11 };

/*
 * A protobuf message in its wire form, written by hand here (varints,
 * tags, length-delimited fields) so that the test does not go through the
 * protobuf library the converter reads with.
 */
typedef struct wb {
	unsigned char b[2048];
	size_t n;
} wb;

static void varint(wb *w, uint64_t v)
{
	do {
		assert_true(w->n < sizeof w->b);
		w->b[w->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void f_int(wb *w, unsigned field, int64_t v)
{
	varint(w, (uint64_t)field << 3);
	varint(w, (uint64_t)v);
}

static void f_bytes(wb *w, unsigned field, const void *p, size_t n)
{
	varint(w, (uint64_t)field << 3 | 2);
	varint(w, n);
	assert_true(w->n + n <= sizeof w->b);
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void f_str(wb *w, unsigned field, const char *s)
{
	f_bytes(w, field, s, strlen(s));
}

static void f_msg(wb *w, unsigned field, const wb *m)
{
	f_bytes(w, field, m->b, m->n);
}

/* A packed repeated int64 (proto3's default encoding). */
static void f_ints(wb *w, unsigned field, const int64_t *v, size_t n)
{
	wb p = {.n = 0};
	for (size_t i = 0; i < n; i++)
		varint(&p, (uint64_t)v[i]);
	if (n)
		f_msg(w, field, &p);
}

/* ShapeProto: element_type 2, dimensions 3; rank 1 is f32[2]-like. */
static wb shape(int type, size_t rank)
{
	wb s = {.n = 0};
	const int64_t two = 2;
	f_int(&s, 2, type);
	f_ints(&s, 3, &two, rank);
	return s;
}

/* One instruction of a test module. */
typedef struct ins {
	const char *name, *opcode;
	int type;
	size_t rank;
	int64_t id, param;
	int64_t operands[3];
	size_t noperands;
	int64_t called[3];
	size_t ncalled;
	int64_t preds[1];
	size_t npreds;
	const char *target;
	int api_version;
} ins;

/* HloInstructionProto (XLA's field numbers, hlo.proto). */
static wb instr(const ins *x)
{
	wb w = {.n = 0}, s = shape(x->type, x->rank);
	f_str(&w, 1, x->name);
	f_str(&w, 2, x->opcode);
	f_msg(&w, 3, &s);
	if (x->param)
		f_int(&w, 9, x->param);
	if (x->target)
		f_str(&w, 28, x->target);
	f_int(&w, 35, x->id);
	f_ints(&w, 36, x->operands, x->noperands);
	f_ints(&w, 37, x->preds, x->npreds);
	f_ints(&w, 38, x->called, x->ncalled);
	if (x->api_version)
		f_int(&w, 77, x->api_version);
	return w;
}

/*
 * HloComputationProto: name 1, instructions 2, program_shape 4 (its
 * parameters 1, result 2, parameter names 3), id 5, root_id 6.  The
 * parameters are the instructions with opcode "parameter", in order.
 */
static wb computation(const char *name, int64_t id, const ins *xs, size_t n,
		      int64_t root)
{
	wb c = {.n = 0}, ps = {.n = 0};
	f_str(&c, 1, name);
	for (size_t i = 0; i < n; i++) {
		wb x = instr(&xs[i]);
		f_msg(&c, 2, &x);
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(xs[i].opcode, "parameter") == 0) {
			wb s = shape(xs[i].type, xs[i].rank);
			f_msg(&ps, 1, &s);
		}
	for (size_t i = 0; i < n; i++)
		if (xs[i].id == root) {
			wb s = shape(xs[i].type, xs[i].rank);
			f_msg(&ps, 2, &s);
		}
	for (size_t i = 0; i < n; i++)
		if (strcmp(xs[i].opcode, "parameter") == 0)
			f_str(&ps, 3, xs[i].name);
	f_msg(&c, 4, &ps);
	f_int(&c, 5, id);
	f_int(&c, 6, root);
	return c;
}

/*
 * The test module: computations 1 (negate) and 2 (abs) of f32[2] ->
 * f32[2]; the entry, 3, (pred[], f32[2]) -> f32[2] (the selector p of
 * type selector_type): top, by default
 * conditional(p, x, x) with the branches {1, 2}.  HloModuleProto: name 1,
 * computations 3, entry_computation_id 6.
 */
static int selector_type = PT_PRED;

static wb module(const ins *top)
{
	const ins neg[] = {
		{.name = "a", .opcode = "parameter", .type = PT_F32, .rank = 1,
		 .id = 1},
		{.name = "n", .opcode = "negate", .type = PT_F32, .rank = 1,
		 .id = 2, .operands = {1}, .noperands = 1}};
	const ins mag[] = {
		{.name = "b", .opcode = "parameter", .type = PT_F32, .rank = 1,
		 .id = 11},
		{.name = "m", .opcode = "abs", .type = PT_F32, .rank = 1,
		 .id = 12, .operands = {11}, .noperands = 1}};
	ins entry[] = {
		{.name = "p", .opcode = "parameter", .type = selector_type,
		 .id = 21},
		{.name = "x", .opcode = "parameter", .type = PT_F32, .rank = 1,
		 .id = 22, .param = 1},
		*top};
	wb m = {.n = 0};
	wb c1 = computation("neg", 1, neg, 2, 2);
	wb c2 = computation("magnitude", 2, mag, 2, 12);
	wb c3 = computation("main", 3, entry, 3, top->id);
	f_str(&m, 1, "cond_pred");
	f_msg(&m, 3, &c1);
	f_msg(&m, 3, &c2);
	f_msg(&m, 3, &c3);
	f_int(&m, 6, 3);
	return m;
}

static const ins cond_pred = {
	.name = "c", .opcode = "conditional", .type = PT_F32, .rank = 1,
	.id = 23, .operands = {21, 22, 22}, .noperands = 3, .called = {1, 2},
	.ncalled = 2};

static usc_status convert(const ins *top, usc_hlo_file **f, usc_error *err)
{
	wb m = module(top);
	return usc_hlo_parse_pb(m.b, m.n, "<test>", f, err);
}

static char *print(const usc_hlo_file *f)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	char *text = NULL;
	usc_error err;
	if (usc_hlo_file_print(f, &o, &text, NULL, &err) != USC_OK)
		fail_msg("%s", err.message);
	return text;
}

static void expect_error(const ins *top, const char *want)
{
	usc_hlo_file *f = NULL;
	usc_error err;
	assert_int_not_equal(convert(top, &f, &err), USC_OK);
	assert_null(f);
	if (!strstr(err.message, want))
		fail_msg("message '%s' lacks '%s'", err.message, want);
}

/* The module with top converted and printed; the file is kept in *f. */
static char *converted(const ins *top, usc_hlo_file **f)
{
	usc_error err;
	if (convert(top, f, &err) != USC_OK)
		fail_msg("%s", err.message);
	return print(*f);
}

/* Runs the entry on (pred, {1.5, -2}) and compares output 0. */
static void run_cond(const usc_hlo_file *f, bool pred, const float *want)
{
	usc_eval *ev = NULL;
	usc_tensor *p = NULL, *x = NULL;
	const usc_tensor *out;
	usc_error err;
	const int64_t two = 2;
	if (usc_eval_create(usc_hlo_file_module(f, 0), NULL, &ev, &err) !=
	    USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_tensor_create(USC_PRED, 0, NULL, &p, &err),
			 USC_OK);
	assert_int_equal(usc_tensor_set_bits(p, 0, pred), USC_OK);
	assert_int_equal(usc_tensor_create(USC_F32, 1, &two, &x, &err),
			 USC_OK);
	assert_int_equal(usc_tensor_set_bits(x, 0, 0x3fc00000u), USC_OK);
	assert_int_equal(usc_tensor_set_bits(x, 1, 0xc0000000u), USC_OK);
	assert_int_equal(usc_eval_bind(ev, 0, p, &err), USC_OK);
	assert_int_equal(usc_eval_bind(ev, 1, x, &err), USC_OK);
	if (usc_eval_run(ev, &err) != USC_OK)
		fail_msg("%s", err.message);
	assert_int_equal(usc_eval_output(ev, 0, &out, &err), USC_OK);
	for (uint64_t i = 0; i < 2; i++) {
		uint64_t bits;
		uint32_t w;
		memcpy(&w, &want[i], sizeof w);
		assert_int_equal(usc_tensor_get_bits(out, i, &bits), USC_OK);
		assert_int_equal(bits, w);
	}
	usc_eval_destroy(ev);
	usc_tensor_destroy(p);
	usc_tensor_destroy(x);
}

static void test_conditional_pred(void **state)
{
	(void)state;
	usc_hlo_file *f = NULL;
	char *text = converted(&cond_pred, &f);
	if (!strstr(text, "true_computation=%neg, "
			  "false_computation=%magnitude"))
		fail_msg("the branches are not named as XLA names them:\n%s",
			 text);
	usc_hlo_text_free(text);
	/* true: negate {1.5, -2}; false: abs. */
	run_cond(f, true, (const float[]){-1.5f, 2.0f});
	run_cond(f, false, (const float[]){1.5f, 2.0f});
	usc_hlo_file_destroy(f);
}

/* An index selector (s32) gives branch_computations={...}. */
static void test_conditional_index(void **state)
{
	(void)state;
	usc_hlo_file *f = NULL;
	selector_type = PT_S32;
	char *text = converted(&cond_pred, &f);
	selector_type = PT_PRED;
	if (!strstr(text, "branch_computations={%neg, %magnitude}"))
		fail_msg("no branch_computations:\n%s", text);
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
}

/* A pred conditional with three branches, and one with none. */
static void test_conditional_bad(void **state)
{
	(void)state;
	ins top = cond_pred;
	top.called[2] = 1;
	top.ncalled = 3;
	expect_error(&top, "instruction 'c' (conditional): "
			   "called_computation_ids: 3 entries; a conditional "
			   "on a pred has two branches");
	top.ncalled = 0;
	expect_error(&top, "a conditional has at least one branch");
}

/* A while must name two computations: its body and its condition. */
static void test_while_bad(void **state)
{
	(void)state;
	ins top = cond_pred;
	top.opcode = "while";
	top.operands[0] = 22;
	top.noperands = 1;
	top.ncalled = 1;
	expect_error(&top, "instruction 'c' (while): called_computation_ids: "
			   "1 entries; a while calls its body and its "
			   "condition");
}

/*
 * A custom call: its target and API version as XLA prints them
 * (API_VERSION_TYPED_FFI is 4), a version XLA does not have refused.
 */
static void test_custom_call(void **state)
{
	(void)state;
	ins top = cond_pred;
	usc_hlo_file *f = NULL;
	top.opcode = "custom-call";
	top.target = "my_target";
	top.api_version = 4;
	top.ncalled = 0;
	char *text = converted(&top, &f);
	if (!strstr(text, "custom_call_target=\"my_target\", "
			  "api_version=API_VERSION_TYPED_FFI"))
		fail_msg("custom call printed as:\n%s", text);
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
	top.api_version = 9;
	expect_error(&top, "instruction 'c' (custom-call): "
			   "custom_call_api_version 9 is not converted");
}

/* Control predecessors are kept; one that is not there is an error. */
static void test_control_predecessors(void **state)
{
	(void)state;
	ins top = cond_pred;
	usc_hlo_file *f = NULL;
	top.preds[0] = 21;
	top.npreds = 1;
	char *text = converted(&top, &f);
	if (!strstr(text, "control-predecessors={%p}"))
		fail_msg("control predecessors printed as:\n%s", text);
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
	top.preds[0] = 999;
	expect_error(&top, "instruction 'c' (conditional): "
			   "control_predecessor_ids[0]: no instruction of the "
			   "computation has id 999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conditional_pred),
		cmocka_unit_test(test_conditional_index),
		cmocka_unit_test(test_conditional_bad),
		cmocka_unit_test(test_while_bad),
		cmocka_unit_test(test_custom_call),
		cmocka_unit_test(test_control_predecessors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
