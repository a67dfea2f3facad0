/*
 * Printing an explanation tree (usc_explain_print and its helpers).
 */
#include "internal.h"
#include "analyze/explain_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/eval_internal.h"

static void print_index(FILE *f, const usc_hlo_shape *s, uint64_t flat)
{
	int64_t idx[USC_TENSOR_MAX_RANK];

	fputc('[', f);
	if (s->kind == USC_HLO_SHAPE_ARRAY && s->rank <= USC_TENSOR_MAX_RANK) {
		usc__unravel((size_t)flat, s->dims, s->rank, idx);
		for (size_t i = 0; i < s->rank; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", idx[i]);
	}
	fputc(']', f);
}

static void print_shape(FILE *f, const usc_hlo_shape *s)
{
	if (s->kind != USC_HLO_SHAPE_ARRAY) {
		fputs("(tuple)", f);
		return;
	}
	fprintf(f, "%s[", usc_dtype_name(s->dtype));
	for (size_t i = 0; i < s->rank; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", s->dims[i]);
	fputc(']', f);
}

/* A figure in ulps: "+0.25", "-128", "0". */
static void print_ulps(FILE *f, double x)
{
	if (x == 0)
		fputs("0", f);
	else
		fprintf(f, "%+.4g", x);
}

static void print_envelope(FILE *f, const usc_envelope *e)
{
	const char *sep = "";

	if (e->flags & USC_ENV_UNKNOWN) {
		fputs("unknown", f);
		return;
	}
	if (e->flags & USC_ENV_FINITE) {
		if (e->lo == e->hi)
			fprintf(f, "[%.9g]", e->lo);
		else
			fprintf(f, "[%.9g, %.9g]", e->lo, e->hi);
		sep = " or ";
	}
	if (e->flags & USC_ENV_NAN) {
		fprintf(f, "%snan", sep);
		sep = " or ";
	}
	if (e->flags & USC_ENV_POS_INF) {
		fprintf(f, "%s+inf", sep);
		sep = " or ";
	}
	if (e->flags & USC_ENV_NEG_INF)
		fprintf(f, "%s-inf", sep);
	if (!(e->flags & (USC_ENV_FINITE | USC_ENV_NAN | USC_ENV_POS_INF |
			  USC_ENV_NEG_INF)))
		fputs("empty", f);
}

static void print_exact(FILE *f, const usc_explain_node *nd)
{
	char a[64], b[64];

	if (strcmp(nd->exact_kind, "finite") != 0) {
		fputs(nd->exact_kind, f);
		return;
	}
	snprintf(a, sizeof a, "%.9g", nd->exact_lo == 0 ? 0.0 : nd->exact_lo);
	snprintf(b, sizeof b, "%.9g", nd->exact_hi == 0 ? 0.0 : nd->exact_hi);
	/* The enclosure is far narrower than 9 digits: print one value. */
	if (strcmp(a, b) == 0)
		fputs(a, f);
	else
		fprintf(f, "[%s, %s]", a, b);
}

/* The values line of an element or a product. */
static void print_values(FILE *f, const usc_explain_node *nd, unsigned ind)
{
	fprintf(f, "%*s  ref %.9g  exact ", ind, "", nd->ref);
	print_exact(f, nd);
	if (nd->is_float) {
		if (!isnan(nd->local_ulps)) {
			fputs("  local ", f);
			print_ulps(f, nd->local_ulps);
		}
		if (!isnan(nd->ref_err_ulps)) {
			fputs("  ref err ", f);
			print_ulps(f, nd->ref_err_ulps);
		}
	}
	if (!isnan(nd->contrib)) {
		fputs("  contrib ", f);
		print_ulps(f, nd->contrib);
	}
	if (nd->has_envelope) {
		fputs("  env ", f);
		print_envelope(f, &nd->envelope);
	}
	fputc('\n', f);
}

static void print_node(FILE *f, const usc_explain_report *r, size_t i)
{
	const usc_explain_node *nd = &r->nodes[i];
	const usc_hlo_instr *in = nd->instr;
	unsigned ind = 2 * nd->depth;

	(void)r;
	fprintf(f, "%*s%s  %s", ind, "", in->name,
		usc_hlo_opcode_name(in->opcode));
	switch (nd->kind) {
	case USC_EXPLAIN_ELEMENT:
	case USC_EXPLAIN_CALL:
		fputc(' ', f);
		print_shape(f, &in->shape);
		fputc(' ', f);
		print_index(f, &in->shape, nd->index);
		break;
	case USC_EXPLAIN_SET:
		fputc(' ', f);
		print_shape(f, &in->shape);
		fprintf(f, " %s (%" PRIu64 " element%s reduced)", nd->set,
			nd->count, nd->count == 1 ? "" : "s");
		break;
	case USC_EXPLAIN_WHOLE:
		fputc(' ', f);
		print_shape(f, &in->shape);
		fprintf(f, " (all %" PRIu64 " elements)", nd->count);
		break;
	case USC_EXPLAIN_PRODUCTS:
		fprintf(f, " products %s (%" PRIu64 " product%s)", nd->set,
			nd->count, nd->count == 1 ? "" : "s");
		break;
	case USC_EXPLAIN_PRODUCT:
		fprintf(f, " product %s", nd->set);
		break;
	}
	if (nd->term)
		fprintf(f, "  (term %" PRIu64 " of %" PRIu64 ")", nd->term,
			nd->terms_of);
	if (nd->padding)
		fputs("  (padding)", f);
	if (in->opcode == USC_HLO_OP_PARAMETER && in->parent->is_entry)
		fprintf(f, "  parameter %" PRId64, in->parameter_number);
	if (nd->via)
		fprintf(f, "  (as %s)", nd->via->name);
	if (nd->kind == USC_EXPLAIN_CALL && in->called_count)
		fprintf(f, "  calls %s", in->called[0]->name);
	if (nd->source[0] && nd->kind != USC_EXPLAIN_PRODUCTS &&
	    nd->kind != USC_EXPLAIN_PRODUCT)
		fprintf(f, "  %s", nd->source);
	if (nd->same_as != SIZE_MAX) {
		fputs("  (shown above)\n", f);
		return;
	}
	fputc('\n', f);
	if (nd->has_values && (nd->kind == USC_EXPLAIN_ELEMENT ||
			       nd->kind == USC_EXPLAIN_PRODUCT)) {
		print_values(f, nd, ind);
	} else if (nd->has_values) {
		fprintf(f, "%*s  sum|ref| %.9g  sum|exact| %.9g", ind, "",
			nd->sum_abs_ref, nd->sum_abs_exact);
		if (!isnan(nd->max_abs_ref_err)) {
			fputs("  max|ref err| ", f);
			print_ulps(f, nd->max_abs_ref_err);
			fputs(" at ", f);
			if (nd->kind == USC_EXPLAIN_PRODUCTS) {
				fprintf(f, "%s", in->operands[0]->name);
				print_index(f, &in->operands[0]->shape,
					    nd->max_ref_err_index);
				fprintf(f, " x %s", in->operands[1]->name);
				print_index(f, &in->operands[1]->shape,
					    nd->max_ref_err_rhs);
			} else {
				print_index(f, &in->shape,
					    nd->max_ref_err_index);
			}
		}
		fputc('\n', f);
	}
	if (nd->truncated)
		fprintf(f, "%*s  ... (depth limit)\n", ind, "");
}

void usc_explain_print(FILE *f, const usc_explain_report *r)
{
	const usc_check_report *c = r->check;
	const usc_check_output *o = &c->outputs[r->output];
	const usc_check_element *e = &r->root;
	usc_dtype t = usc_tensor_dtype(o->device);
	usc_tensor_spec spec = usc_tensor_spec_of(o->device);
	const usc_hlo_shape *rs = &r->nodes[0].instr->shape;
	char shape[256];

	usc_tensor_spec_format(&spec, shape, sizeof shape);
	fprintf(f, "kernel %s, output %zu ", c->kernel_name, r->output);
	print_index(f, rs, r->flat_index);
	fprintf(f, " of %s, profile %s\n", shape, c->profile.name);
	fprintf(f, "  device     0x%0*" PRIx64 " = %.9g",
		(int)((usc_format_of(t)->bits + 3) / 4), e->device_bits,
		usc__explain_decode(t, e->device_bits));
	if (usc_dtype_is_float(t)) {
		fputs("   error ", f);
		print_ulps(f, e->ulp_oracle);
		fputs(" ulp, ", f);
		print_ulps(f, e->ulp_reference);
		fputs(" from the reference", f);
	}
	fprintf(f, "\n  reference  0x%0*" PRIx64 " = %.9g",
		(int)((usc_format_of(t)->bits + 3) / 4), e->reference_bits,
		usc__explain_decode(t, e->reference_bits));
	if (usc_dtype_is_float(t) && !isnan(r->reference_ulps)) {
		fputs("   error ", f);
		print_ulps(f, r->reference_ulps);
		fputs(" ulp", f);
	}
	fprintf(f, "\n  exact      %.9g%s\n", e->oracle_mid,
		e->undecided ? " (undecided)" : "");
	fputs("  envelope   ", f);
	print_envelope(f, &e->envelope);
	fprintf(f, "\n  class      %s", usc_class_name(e->cls));
	if (e->outside_ulps > 0) {
		if (isfinite(e->outside_ulps))
			fprintf(f, " (%.0f code%s outside the envelope)",
				e->outside_ulps,
				e->outside_ulps == 1 ? "" : "s");
		else
			fputs(" (outside the envelope)", f);
	}
	fputc('\n', f);
	if (r->attribution) {
		const usc_attribution *a = r->attribution;
		const usc_attr_output *ao = &a->outputs[r->output];
		uint64_t k = r->flat_index;

		fputs("  attribution: reference error ", f);
		print_ulps(f, ao->total[k]);
		fputs(" ulp", f);
		for (size_t j = 0; j < a->top_k; j++) {
			uint32_t u = ao->top_ops[k * a->top_k + j];
			char label[320];

			if (u == USC_ATTR_NO_OP)
				break;
			fprintf(f, "%s%s ", j ? ", " : " = ",
				usc_attr_op_label(&a->ops[u], label,
						  sizeof label));
			print_ulps(f, ao->top_contrib[k * a->top_k + j]);
		}
		fputs("; residual ", f);
		print_ulps(f, ao->residual[k]);
		fputc('\n', f);
	} else if (r->attr_note[0]) {
		fprintf(f, "  attribution: not computed: %s\n", r->attr_note);
	}
	fputs("tree: ref = strict reference, exact = oracle, local = the op's "
	      "own rounding of its exact\n"
	      "  value, ref err = reference - exact (both in ulps of the op's "
	      "type), contrib = the op's\n"
	      "  share of the root's error (ulps of the output), env = "
	      "envelope\n",
	      f);
	for (size_t i = 0; i < r->node_count; i++)
		print_node(f, r, i);
}
