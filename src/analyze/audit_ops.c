/*
 * The op-by-op view of an audit (docs/audit.md, "Op by op"): which
 * rounding points a pass added, removed, retyped or replaced, and how much
 * each moves the precision.
 *
 * Each module's rounding is attributed on the same sample with
 * usc_attribute (include/ulpscope/attribution.h): per op that the strict
 * reference rounds, its contribution to every output element's error when
 * it alone rounds.  The ops are then matched across the modules by what
 * XLA keeps through its passes, the metadata's op_name (the instruction's
 * name when there is none): an op of AFTER with the op_name and opcode of
 * one of BEFORE is the same rounding point, kept or rounding to another
 * type now; a BEFORE op whose op_name is gone was removed, one whose
 * op_name lives on in other opcodes was replaced by them; an AFTER op
 * with a new op_name was added.  A row's change is the difference of the
 * mean |contribution| after and before, and its share that change over
 * the sum of every row's |change|: first-order, as attribution is (the
 * interaction of roundings is its residual, not a row).
 */
#include "internal.h"
#include "analyze/audit_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulpscope/attribution.h"

const char *usc_audit_op_kind_name(usc_audit_op_kind k)
{
	static const char *const names[] = {"same",	 "retyped",
					    "removed",	 "added",
					    "replaced", "replacing",
					    "split"};

	return (unsigned)k < USC__ARRAY_LEN(names) ? names[k] : "unknown";
}

/* The key an op is matched by. */
static const char *key_of(const usc_attr_op *op)
{
	return op->op_name && op->op_name[0] ? op->op_name : op->name;
}

static usc_dtype type_of(const usc_attr_op *op)
{
	return op->instr && op->instr->shape.kind == USC_HLO_SHAPE_ARRAY
		       ? op->instr->shape.dtype
		       : USC_DTYPE_INVALID;
}

static void label(const usc_attr_op *op, char *buf, size_t size)
{
	usc_dtype t = type_of(op);

	snprintf(buf, size, "%s (%s%s%s)", op->name, op->opcode,
		 t != USC_DTYPE_INVALID ? " " : "",
		 t != USC_DTYPE_INVALID ? usc_dtype_name(t) : "");
}

/*
 * How many instructions an attributed op stands for: reduces sharing one
 * body are attributed together, their names joined by '+'.
 */
static size_t parts(const usc_attr_op *op)
{
	size_t n = 1;

	for (const char *p = op->name; *p; p++)
		n += *p == '+';
	return n;
}

/*
 * Whether one op's name is one of the '+'-joined names of the other: the
 * same reduction, split into several instructions (XLA's
 * tree_reduction_rewriter makes "reduce-window.1+reduce_sum.7" of
 * "reduce_sum.7", keeping the name and dropping the metadata of the new
 * one).
 */
static bool name_part(const char *joined, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = joined; p; p = strchr(p, '+')) {
		if (*p == '+')
			p++;
		if (strncmp(p, name, n) == 0 && (p[n] == '+' || !p[n]))
			return true;
	}
	return false;
}

static bool same_reduction(const usc_attr_op *a, const usc_attr_op *b)
{
	return (parts(a) > 1 || parts(b) > 1) &&
	       (name_part(a->name, b->name) || name_part(b->name, a->name));
}

static bool has_key(const usc_attribution *a, const char *key)
{
	for (size_t i = 0; i < a->op_count; i++)
		if (strcmp(key_of(&a->ops[i]), key) == 0)
			return true;
	return false;
}

static void row_side(usc_audit_op *row, const usc_attr_op *b,
		     const usc_attr_op *a)
{
	if (b) {
		label(b, row->before, sizeof row->before);
		row->before_mean_abs = b->mean_abs;
	}
	if (a) {
		label(a, row->after, sizeof row->after);
		row->after_mean_abs = a->mean_abs;
	}
	snprintf(row->source, sizeof row->source, "%s",
		 b && b->op_name ? b->op_name : a && a->op_name ? a->op_name : "");
	row->change = row->after_mean_abs - row->before_mean_abs;
}

static int by_change(const void *x, const void *y)
{
	double a = fabs(((const usc_audit_op *)x)->change);
	double b = fabs(((const usc_audit_op *)y)->change);

	return (a < b) - (a > b);
}

/* Matches the two attributions' ops into rows (see the top). */
static usc_status match(const usc_attribution *ab, const usc_attribution *aa,
			usc_audit_report *r, usc_error *err)
{
	size_t cap = ab->op_count + aa->op_count, n = 0;
	bool *used = usc__calloc(aa->op_count + 1, 1);
	usc_audit_op *rows = usc__calloc(cap + 1, sizeof *rows);
	double sum = 0;

	if (!used || !rows) {
		usc__free(used);
		usc__free(rows);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ab->op_count; i++) {
		const usc_attr_op *b = &ab->ops[i], *a = NULL;
		usc_audit_op *row = &rows[n++];

		for (size_t j = 0; j < aa->op_count && !a; j++)
			if (!used[j] &&
			    strcmp(key_of(&aa->ops[j]), key_of(b)) == 0 &&
			    strcmp(aa->ops[j].opcode, b->opcode) == 0) {
				used[j] = true;
				a = &aa->ops[j];
			}
		/* Else the same reduction split or merged, by name. */
		for (size_t j = 0; j < aa->op_count && !a; j++)
			if (!used[j] && same_reduction(&aa->ops[j], b)) {
				used[j] = true;
				a = &aa->ops[j];
			}
		if (a)
			row->kind = type_of(a) != type_of(b)
					    ? USC_AUDIT_OP_RETYPED
				    : parts(a) != parts(b) ? USC_AUDIT_OP_SPLIT
							   : USC_AUDIT_OP_SAME;
		else
			row->kind = has_key(aa, key_of(b))
					    ? USC_AUDIT_OP_REPLACED
					    : USC_AUDIT_OP_REMOVED;
		row_side(row, b, a);
	}
	for (size_t j = 0; j < aa->op_count; j++) {
		usc_audit_op *row;

		if (used[j])
			continue;
		row = &rows[n++];
		row->kind = has_key(ab, key_of(&aa->ops[j]))
				    ? USC_AUDIT_OP_REPLACING
				    : USC_AUDIT_OP_ADDED;
		row_side(row, NULL, &aa->ops[j]);
	}
	usc__free(used);
	for (size_t k = 0; k < n; k++)
		sum += fabs(rows[k].change);
	for (size_t k = 0; k < n; k++)
		rows[k].share = sum > 0 ? rows[k].change / sum : 0;
	qsort(rows, n, sizeof *rows, by_change);
	r->ops = rows;
	r->op_count = n;
	return USC_OK;
}

/* One module's attribution; a refusal becomes the report's note. */
static usc_status attribute(const usc_audit_request *req, const char *path,
			    const usc_hlo_module *m, usc_tensor *const *in,
			    size_t nin, usc_attribution **out,
			    usc_audit_report *r, usc_error *err)
{
	usc_attr_options o = usc_attr_options_default();
	usc_status st;

	o.reduce_order = req->reduce_order;
	o.max_ops = req->ops_max;
	st = usc_attribute(m, m->entry, (const usc_tensor *const *)in, nin,
			   &o, out, err);
	if (st == USC_ERANGE || st == USC_EUNSUPPORTED) {
		snprintf(r->ops_note, sizeof r->ops_note, "%.400s: %.1024s", path,
			 err ? err->message : "cannot attribute");
		*out = NULL;
		return USC_OK;
	}
	return st;
}

usc_status usc__audit_ops(const usc_audit_request *req,
			  const usc_hlo_module *before,
			  const usc_hlo_module *after, usc_tensor *const *in,
			  size_t nin, usc_audit_report *r, usc_error *err)
{
	usc_attribution *ab = NULL, *aa = NULL;
	usc_status st;

	st = attribute(req, req->before_path, before, in, nin, &ab, r, err);
	if (st == USC_OK && ab)
		st = attribute(req, req->after_path, after, in, nin, &aa, r,
			       err);
	if (st == USC_OK && ab && aa)
		st = match(ab, aa, r, err);
	usc_attribution_destroy(ab);
	usc_attribution_destroy(aa);
	return st;
}
