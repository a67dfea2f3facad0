/*
 * ulpscope explain: one output element's computation as a tree, from the
 * output back to the parameters (docs/explain.md).  Exit status: 0 the
 * tree was printed, 1 a bad input, 2 usage.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "ulpscope/attribution.h"
#include "ulpscope/dtype.h"
#include "ulpscope/explain.h"
#include "ulpscope/hlo.h"
#include "ulpscope/profile.h"

static const char usage_text[] =
	"usage: ulpscope explain CASE_DIR --element I,J,... [options]\n"
	"       ulpscope explain KERNEL.hlo [--fusion NAME] --input SRC... "
	"--device SRC... --element I,J,... [options]\n"
	"       ulpscope explain RESULTS.h5 --kernel K --input SRC... "
	"--element I,J,... [options]\n"
	"options: --flat (--element is one flat index) --output N --profile "
	"NAME|FILE --depth D --terms N (largest terms of a reduction or dot "
	"shown, default 3) --no-attribute --json --pairwise --input-raw";

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

enum { EXPLAIN_OUTPUT, EXPLAIN_DEPTH, EXPLAIN_TERMS };

/*
 * --depth and --terms bound the tree printed (docs/explain.md); an
 * output index past the kernel's outputs is the library's error, naming
 * how many there are.
 */
const usc_cli_num_opt usc_cli_explain_nums[] = {
	[EXPLAIN_OUTPUT] = USC_CLI_INT_OPT("--output", "N", 0, 65535,
					   "which output of a tuple result "
					   "(0)"),
	[EXPLAIN_DEPTH] = USC_CLI_INT_OPT("--depth", "D", 1, 1000,
					  "how many levels the tree shows "
					  "(24)"),
	[EXPLAIN_TERMS] = USC_CLI_INT_OPT("--terms", "N", 0, 1000,
					  "largest terms of a reduction or a "
					  "dot shown (3)"),
	USC_CLI_NUM_END,
};

/* An index along one dimension, or a flat index with --flat. */
static const usc_cli_num_opt element_opt = USC_CLI_INT_OPT(
	"--element", "I,J,...", 0, INT64_MAX, "");

/* "3,17" into index[], at most USC_TENSOR_MAX_RANK indices. */
static int parse_element(const char *text, usc_explain_request *req)
{
	char part[32];
	const char *p = text;

	req->index_rank = 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		usc_cli_num v;

		if (req->index_rank == USC_TENSOR_MAX_RANK) {
			usc_cli_error("--element takes at most %d indices, "
				      "found '%s'",
				      USC_TENSOR_MAX_RANK, text);
			return -1;
		}
		/* Longer than any index: the parser names the whole part. */
		snprintf(part, sizeof part, "%.*s", (int)n, p);
		if (n >= sizeof part ||
		    usc_cli_num_parse(&element_opt, part, &v) != 0) {
			if (n >= sizeof part)
				usc_cli_error("--element expects indices that "
					      "are integers from 0 to %" PRId64
					      ", found '%s'",
					      INT64_MAX, text);
			return -1;
		}
		req->index[req->index_rank++] = (int64_t)v.u;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	return 0;
}

/* ------------------------------------------------------------- JSON */

/* The multi-index of flat element k of shape s, as "[1, 3]". */
static void json_index(const usc_hlo_shape *s, uint64_t k)
{
	int64_t idx[USC_TENSOR_MAX_RANK];

	putchar('[');
	if (s->kind == USC_HLO_SHAPE_ARRAY && s->rank <= USC_TENSOR_MAX_RANK) {
		for (size_t d = s->rank; d-- > 0;) {
			idx[d] = s->dims[d] ? (int64_t)(k % (uint64_t)s->dims[d])
					    : 0;
			k = s->dims[d] ? k / (uint64_t)s->dims[d] : 0;
		}
		for (size_t d = 0; d < s->rank; d++)
			printf("%s%" PRId64, d ? ", " : "", idx[d]);
	}
	putchar(']');
}

/* "bf16[8,128]", "(tuple)". */
static void json_shape(const usc_hlo_shape *s)
{
	char buf[256];
	size_t len = 0;

	if (s->kind != USC_HLO_SHAPE_ARRAY) {
		usc_cli_json_str("(tuple)");
		return;
	}
	len += (size_t)snprintf(buf, sizeof buf, "%s[",
				usc_dtype_name(s->dtype));
	for (size_t d = 0; d < s->rank && len < sizeof buf; d++)
		len += (size_t)snprintf(buf + len, sizeof buf - len,
					"%s%" PRId64, d ? "," : "",
					s->dims[d]);
	if (len < sizeof buf)
		snprintf(buf + len, sizeof buf - len, "]");
	usc_cli_json_str(buf);
}

/* Hex digits of an encoding of type t ("0x3f80" for bf16). */
static int hex_width(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f ? (int)((f->bits + 3) / 4) : 1;
}

static const char *kind_name(usc_explain_kind k)
{
	switch (k) {
	case USC_EXPLAIN_ELEMENT:
		return "element";
	case USC_EXPLAIN_SET:
		return "set";
	case USC_EXPLAIN_WHOLE:
		return "whole";
	case USC_EXPLAIN_CALL:
		return "call";
	case USC_EXPLAIN_PRODUCTS:
		return "products";
	case USC_EXPLAIN_PRODUCT:
		return "product";
	}
	return "?";
}

/* A string member, or null when s is empty. */
static void json_str_or_null(const char *s)
{
	if (s && *s)
		usc_cli_json_str(s);
	else
		printf("null");
}

/* Node i and its subtree (the nodes after it one level deeper); returns
 * the index of the first node past the subtree. */
static size_t json_node(const usc_explain_report *r, size_t i)
{
	const usc_explain_node *nd = &r->nodes[i];
	const usc_hlo_instr *in = nd->instr;
	bool elem = nd->kind == USC_EXPLAIN_ELEMENT ||
		    nd->kind == USC_EXPLAIN_CALL;
	bool sum = nd->kind == USC_EXPLAIN_SET ||
		   nd->kind == USC_EXPLAIN_WHOLE ||
		   nd->kind == USC_EXPLAIN_PRODUCTS;
	size_t j;

	printf("{\"id\": %zu, \"name\": ", i);
	usc_cli_json_str(in->name);
	printf(", \"opcode\": ");
	usc_cli_json_str(usc_hlo_opcode_name(in->opcode));
	printf(", \"shape\": ");
	json_shape(&in->shape);
	printf(", \"kind\": \"%s\", \"index\": ", kind_name(nd->kind));
	if (elem)
		json_index(&in->shape, nd->index);
	else
		printf("null");
	printf(", \"set\": ");
	json_str_or_null(nd->set);
	printf(", \"count\": %" PRIu64, nd->count);
	if (nd->kind == USC_EXPLAIN_PRODUCT) {
		printf(", \"lhs_index\": ");
		json_index(&in->operands[0]->shape, nd->lhs_index);
		printf(", \"rhs_index\": ");
		json_index(&in->operands[1]->shape, nd->rhs_index);
	}
	printf(", \"term\": ");
	if (nd->term)
		printf("%" PRIu64 ", \"terms_of\": %" PRIu64, nd->term,
		       nd->terms_of);
	else
		printf("null, \"terms_of\": null");
	printf(", \"padding\": %s, \"parameter\": ",
	       nd->padding ? "true" : "false");
	if (in->opcode == USC_HLO_OP_PARAMETER && in->parent->is_entry)
		printf("%" PRId64, in->parameter_number);
	else
		printf("null");
	printf(", \"via\": ");
	json_str_or_null(nd->via ? nd->via->name : NULL);
	printf(", \"calls\": ");
	json_str_or_null(nd->kind == USC_EXPLAIN_CALL && in->called_count
				 ? in->called[0]->name
				 : NULL);
	printf(", \"source\": ");
	json_str_or_null(nd->source);
	printf(", \"op_name\": ");
	json_str_or_null(nd->op_name);
	if (nd->same_as != SIZE_MAX) {
		printf(", \"same_as\": %zu}", nd->same_as);
		return i + 1;
	}
	printf(", \"same_as\": null, \"truncated\": %s",
	       nd->truncated ? "true" : "false");
	if (nd->has_values && (nd->kind == USC_EXPLAIN_ELEMENT ||
			       nd->kind == USC_EXPLAIN_PRODUCT)) {
		printf(", \"ref\": ");
		usc_cli_json_num(nd->ref);
		if (nd->is_float)
			printf(", \"ref_bits\": \"0x%0*" PRIx64 "\"",
			       hex_width(in->shape.dtype), nd->ref_bits);
		printf(", \"exact_kind\": ");
		usc_cli_json_str(nd->exact_kind);
		printf(", \"exact_lo\": ");
		usc_cli_json_num(nd->exact_lo);
		printf(", \"exact_hi\": ");
		usc_cli_json_num(nd->exact_hi);
		printf(", \"local\": ");
		usc_cli_json_num(nd->is_float ? nd->local_ulps : NAN);
		printf(", \"ref_err\": ");
		usc_cli_json_num(nd->is_float ? nd->ref_err_ulps : NAN);
		printf(", \"contrib\": ");
		usc_cli_json_num(nd->contrib);
		printf(", \"env\": ");
		if (nd->has_envelope)
			usc_cli_json_envelope(&nd->envelope);
		else
			printf("null");
	} else if (nd->has_values && sum) {
		printf(", \"sum_abs_ref\": ");
		usc_cli_json_num(nd->sum_abs_ref);
		printf(", \"sum_abs_exact\": ");
		usc_cli_json_num(nd->sum_abs_exact);
		printf(", \"max_abs_ref_err\": ");
		usc_cli_json_num(nd->max_abs_ref_err);
		printf(", \"max_ref_err_at\": ");
		if (isnan(nd->max_abs_ref_err)) {
			printf("null");
		} else if (nd->kind == USC_EXPLAIN_PRODUCTS) {
			printf("{\"lhs\": ");
			json_index(&in->operands[0]->shape,
				   nd->max_ref_err_index);
			printf(", \"rhs\": ");
			json_index(&in->operands[1]->shape,
				   nd->max_ref_err_rhs);
			printf("}");
		} else {
			json_index(&in->shape, nd->max_ref_err_index);
		}
	}
	printf(", \"children\": [");
	for (j = i + 1; j < r->node_count && r->nodes[j].depth > nd->depth;) {
		if (j > i + 1)
			printf(", ");
		j = json_node(r, j);
	}
	printf("]}");
	return j;
}

/* The report as one JSON object (docs/explain.md, "JSON"). */
static void print_json(const usc_explain_report *r)
{
	const usc_check_report *c = r->check;
	const usc_check_output *o = &c->outputs[r->output];
	const usc_check_element *e = &r->root;
	usc_tensor_spec spec = usc_tensor_spec_of(o->device);
	usc_dtype t = spec.dtype;
	const usc_hlo_shape *rs = &r->nodes[0].instr->shape;
	char shape[256];
	double v;

	usc_tensor_spec_format(&spec, shape, sizeof shape);
	printf("{\"kernel\": ");
	usc_cli_json_str(c->kernel_name);
	printf(", \"hlo_file\": ");
	usc_cli_json_str(c->hlo_path);
	printf(", \"output\": %zu, \"element\": ", r->output);
	json_index(rs, r->flat_index);
	printf(", \"flat_index\": %" PRIu64 ", \"shape\": ", r->flat_index);
	usc_cli_json_str(shape);
	printf(", \"profile\": ");
	usc_cli_json_str(c->profile.name);
	printf(", \"oracle_precision\": %lu, \"depth\": %u, \"terms\": %zu",
	       r->oracle_precision, r->max_depth, r->terms);
	printf(", \"device\": {\"bits\": \"0x%0*" PRIx64 "\", \"value\": ",
	       hex_width(t), e->device_bits);
	v = NAN;
	if (usc_dtype_is_float(t))
		(void)usc_decode_double(t, e->device_bits, &v);
	usc_cli_json_num(v);
	printf(", \"error_ulps\": ");
	usc_cli_json_num(usc_dtype_is_float(t) ? e->ulp_oracle : NAN);
	printf(", \"from_reference_ulps\": ");
	usc_cli_json_num(usc_dtype_is_float(t) ? e->ulp_reference : NAN);
	printf("}, \"reference\": {\"bits\": \"0x%0*" PRIx64
	       "\", \"value\": ",
	       hex_width(t), e->reference_bits);
	v = NAN;
	if (usc_dtype_is_float(t))
		(void)usc_decode_double(t, e->reference_bits, &v);
	usc_cli_json_num(v);
	printf(", \"error_ulps\": ");
	usc_cli_json_num(r->reference_ulps);
	printf("}, \"exact\": {\"lo\": ");
	usc_cli_json_num(r->exact_lo);
	printf(", \"hi\": ");
	usc_cli_json_num(r->exact_hi);
	printf(", \"mid\": ");
	usc_cli_json_num(r->exact_lo == r->exact_hi
				 ? r->exact_lo
				 : r->exact_lo / 2 + r->exact_hi / 2);
	printf(", \"undecided\": %s}, \"envelope\": ",
	       e->undecided ? "true" : "false");
	usc_cli_json_envelope(&e->envelope);
	printf(", \"class\": \"%s\", \"outside_ulps\": ",
	       usc_class_name(e->cls));
	usc_cli_json_num(e->outside_ulps);
	printf(", \"attribution\": ");
	if (r->attribution) {
		const usc_attribution *a = r->attribution;
		const usc_attr_output *ao = &a->outputs[r->output];
		uint64_t k = r->flat_index;

		printf("{\"total\": ");
		usc_cli_json_num(ao->total[k]);
		printf(", \"residual\": ");
		usc_cli_json_num(ao->residual[k]);
		printf(", \"top\": [");
		for (size_t j = 0; j < a->top_k; j++) {
			uint32_t u = ao->top_ops[k * a->top_k + j];
			const usc_attr_op *op;
			char label[320];

			if (u == USC_ATTR_NO_OP)
				break;
			op = &a->ops[u];
			printf("%s{\"name\": ", j ? ", " : "");
			usc_cli_json_str(op->name);
			printf(", \"opcode\": ");
			usc_cli_json_str(op->opcode);
			printf(", \"label\": ");
			usc_cli_json_str(
				usc_attr_op_label(op, label, sizeof label));
			printf(", \"op_name\": ");
			json_str_or_null(op->op_name);
			printf(", \"source_file\": ");
			json_str_or_null(op->source_file);
			printf(", \"source_line\": ");
			if (op->source_line >= 0)
				printf("%" PRId64, op->source_line);
			else
				printf("null");
			printf(", \"contribution\": ");
			usc_cli_json_num(ao->top_contrib[k * a->top_k + j]);
			printf("}");
		}
		printf("]}, \"attribution_note\": null");
	} else {
		printf("null, \"attribution_note\": ");
		json_str_or_null(r->attr_note);
	}
	printf(", \"tree\": ");
	if (r->node_count)
		(void)json_node(r, 0);
	else
		printf("null");
	printf("}\n");
}

int usc_cli_explain(int argc, char **argv)
{
	usc_explain_request req = usc_explain_request_default();
	const char *inputs[USC_CLI_MAX_SOURCES];
	const char *devices[USC_CLI_MAX_SOURCES];
	const char *target = NULL, *element = NULL, *kernel = NULL;
	usc_explain_report *r = NULL;
	usc_profile profile;
	usc_error err;
	usc_status st;
	int list = 0; /* 1: --input, 2: --device */
	bool json = false;
	usc_cli_num num;
	int k;

	req.check.inputs = inputs;
	req.check.devices = devices;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--input") == 0) {
			list = 1;
		} else if (strcmp(a, "--device") == 0) {
			list = 2;
		} else if (strcmp(a, "--fusion") == 0 && i + 1 < argc) {
			req.check.fusion = argv[++i], list = 0;
		} else if (strcmp(a, "--kernel") == 0 && i + 1 < argc) {
			kernel = argv[++i], list = 0;
		} else if (strcmp(a, "--element") == 0 && i + 1 < argc) {
			element = argv[++i], list = 0;
		} else if (strcmp(a, "--flat") == 0) {
			req.flat = true, list = 0;
		} else if ((k = usc_cli_num_arg(usc_cli_explain_nums, argc,
					       argv, &i, &num)) !=
			   USC_CLI_NUM_NONE) {
			if (k == USC_CLI_NUM_BAD)
				return USC_EXIT_USAGE;
			if (k == EXPLAIN_OUTPUT)
				req.output = (size_t)num.u;
			else if (k == EXPLAIN_DEPTH)
				req.max_depth = (unsigned)num.u;
			else
				req.terms = (size_t)num.u;
			list = 0;
		} else if (strcmp(a, "--json") == 0) {
			json = true, list = 0;
		} else if (strcmp(a, "--no-attribute") == 0) {
			req.no_attribute = true, list = 0;
		} else if (strcmp(a, "--pairwise") == 0) {
			req.check.reduce_order = USC_REDUCE_PAIRWISE, list = 0;
		} else if (strcmp(a, "--input-raw") == 0) {
			req.check.raw = true, list = 0;
		} else if (strcmp(a, "--profile") == 0 && i + 1 < argc) {
			if (usc_profile_resolve(argv[++i], &profile, &err) !=
			    USC_OK) {
				usc_cli_error("%s", err.message);
				return USC_EXIT_FAIL;
			}
			req.check.profile = &profile;
			list = 0;
		} else if (usc_cli_operand(a,
					   list == 1   ? inputs
					   : list == 2 ? devices
						       : NULL,
					   list == 1 ? &req.check.input_count
						     : &req.check.device_count,
					   &target, usage_text) != USC_EXIT_OK) {
			return USC_EXIT_USAGE;
		}
	}
	if (!target) {
		usc_cli_error("no kernel, case directory or result file\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (!element) {
		usc_cli_error("which element? --element I,J,... (or --element "
			      "K --flat)\n%s",
			      usage_text);
		return USC_EXIT_USAGE;
	}
	if (req.flat) {
		if (usc_cli_num_parse(&element_opt, element, &num) != 0)
			return USC_EXIT_USAGE;
		req.flat_index = num.u;
	} else if (parse_element(element, &req) != 0) {
		return USC_EXIT_USAGE;
	}
	if (usc_cli_is_dir(target)) {
		if (req.check.input_count || req.check.device_count ||
		    req.check.fusion || kernel) {
			usc_cli_error("a case directory brings its own kernel, "
				      "inputs and device outputs: --input, "
				      "--device, --fusion and --kernel do not "
				      "apply\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		req.case_dir = target;
	} else if (kernel || ends_with(target, ".h5")) {
		if (!kernel || req.check.device_count || req.check.fusion) {
			usc_cli_error("a result file needs --kernel K and the "
				      "kernel's inputs (--input); its device "
				      "outputs and kernel come from the file, "
				      "so --device and --fusion do not "
				      "apply\n%s",
				      usage_text);
			return USC_EXIT_USAGE;
		}
		req.results_path = target;
		req.results_kernel = kernel;
	} else {
		req.check.hlo_path = target;
	}
	st = usc_explain_run(&req, &r, &err);
	if (st != USC_OK) {
		usc_cli_error("%s", err.message);
		return USC_EXIT_FAIL;
	}
	if (json)
		print_json(r);
	else
		usc_explain_print(stdout, r);
	usc_explain_report_destroy(r);
	return USC_EXIT_OK;
}
