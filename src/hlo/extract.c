/*
 * Kernel isolation: one fusion of a module becomes a standalone module
 * whose ENTRY feeds the fusion from parameters.  That module is what
 * ulpscope analyses, what an engineer attaches to a bug report, and what
 * XLA's own tools (run_hlo_module, hlo-opt) accept as input.
 *
 * The module is not built by copying the IR: it is assembled as a thin
 * shell of structs that point into the original module (the fused
 * computation and its callees are shared, not copied) plus a synthetic
 * ENTRY, and handed to the printer.  The printer therefore writes the
 * callees exactly as it writes any module, in either form, and the only
 * new text is the ENTRY.  The IR-returning variant parses that text back,
 * which also proves that it is valid HLO.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "hlo/kernel_internal.h"
#include "ulpscope/hlo_kernel.h"

/* ------------------------------------------------------------- lookup */

static bool fusion_calls(const usc_hlo_instr *in, const usc_hlo_computation *c)
{
	const usc_hlo_attr *a;

	if (in->opcode != USC_HLO_OP_FUSION)
		return false;
	a = usc_hlo_instr_attr(in, "calls");
	return a && a->kind == USC_HLO_ATTR_COMPUTATIONS && a->count >= 1 &&
	       a->comps && a->comps[0] == c;
}

static const usc_hlo_computation *fused_of(const usc_hlo_instr *in)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "calls");

	if (a && a->kind == USC_HLO_ATTR_COMPUTATIONS && a->count >= 1 &&
	    a->comps)
		return a->comps[0];
	return in->called_count ? in->called[0] : NULL;
}

/*
 * Levenshtein distance, capped: names longer than the row buffer are
 * compared by their first 63 bytes, which is plenty to rank near misses.
 */
static size_t edit_distance(const char *a, const char *b)
{
	size_t row[64], la = strlen(a), lb = strlen(b), i, j;

	if (la > 63)
		la = 63;
	if (lb > 63)
		lb = 63;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static bool near_match(const char *want, const char *have)
{
	size_t lw = strlen(want), limit = lw / 4 > 2 ? lw / 4 : 2;

	return edit_distance(want, have) <= limit ||
	       (lw >= 3 && strstr(have, want) != NULL);
}

/* The ENOTFOUND message: near matches when there are any, else a count. */
static usc_status not_found(const usc_hlo_module *m, const char *name,
			    usc_error *err)
{
	char msg[USC_ERROR_MESSAGE_SIZE];
	usc__sbuf b;
	size_t i, j, nf = 0, near = 0;

	usc__sb_init(&b, msg, sizeof msg);
	usc__sb_printf(&b, "no fusion named '%s'", name);
	if (m->name)
		usc__sb_printf(&b, " in module '%s'", m->name);
	for (i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *c = m->computations[i];

		for (j = 0; j < c->instr_count; j++) {
			const usc_hlo_instr *in = c->instrs[j];
			const usc_hlo_computation *fc;

			if (in->opcode != USC_HLO_OP_FUSION)
				continue;
			nf++;
			fc = fused_of(in);
			if (near < 5 && (near_match(name, in->name) ||
					 (fc && near_match(name, fc->name)))) {
				usc__sb_printf(&b, "%s'%s'",
					       near ? ", " : "; did you mean ",
					       in->name);
				near++;
			}
		}
	}
	if (near) {
		usc__sb_printf(&b, "?");
	} else if (nf == 0) {
		usc__sb_printf(&b, ", which has no fusion");
	} else {
		usc__sb_printf(&b, ", which has %zu fusion%s:", nf,
			       nf == 1 ? "" : "s");
		for (i = 0, nf = 0; i < m->computation_count; i++) {
			const usc_hlo_computation *c = m->computations[i];

			for (j = 0; j < c->instr_count; j++) {
				if (c->instrs[j]->opcode != USC_HLO_OP_FUSION)
					continue;
				if (nf++ < 8)
					usc__sb_printf(&b, " %s",
						       c->instrs[j]->name);
				else if (nf == 9)
					usc__sb_printf(&b, " ...");
			}
		}
	}
	usc__sb_finish(&b);
	return usc__fail(err, USC_ENOTFOUND, "%s", msg);
}

usc_status usc_hlo_find_fusion(const usc_hlo_module *m, const char *name,
			       const usc_hlo_instr **out_fusion,
			       const usc_hlo_computation **out_comp,
			       usc_error *err)
{
	const usc_hlo_instr *other = NULL;
	const usc_hlo_computation *comp;
	size_t i, j;

	if (!m || !name || !out_fusion)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_find_fusion: NULL argument");
	*out_fusion = NULL;
	if (out_comp)
		*out_comp = NULL;
	for (i = 0; i < m->computation_count; i++) {
		const usc_hlo_computation *c = m->computations[i];

		for (j = 0; j < c->instr_count; j++) {
			const usc_hlo_instr *in = c->instrs[j];

			if (strcmp(in->name, name) != 0)
				continue;
			if (in->opcode == USC_HLO_OP_FUSION) {
				*out_fusion = in;
				return USC_OK;
			}
			if (!other)
				other = in;
		}
	}
	comp = usc_hlo_module_computation(m, name);
	if (comp) {
		for (i = 0; i < m->computation_count; i++) {
			const usc_hlo_computation *c = m->computations[i];

			for (j = 0; j < c->instr_count; j++)
				if (fusion_calls(c->instrs[j], comp)) {
					*out_fusion = c->instrs[j];
					return USC_OK;
				}
		}
		if (out_comp) {
			*out_comp = comp;
			return USC_OK;
		}
		return usc__fail(err, USC_ENOTFOUND,
				 "no fusion calls computation '%s'", name);
	}
	if (other)
		return usc__fail(err, USC_EINVAL,
				 "'%s' is %s %s in computation '%s', not a "
				 "fusion",
				 name,
				 strchr("aeiou",
					usc_hlo_opcode_name(other->opcode)[0])
					 ? "an"
					 : "a",
				 usc_hlo_opcode_name(other->opcode),
				 other->parent ? other->parent->name : "?");
	return not_found(m, name, err);
}

/* ------------------------------------------------------- the shell */

/*
 * The standalone module: structs that the printer walks.  Everything
 * here is owned by the shell; every pointer it holds into the original
 * module is read-only.
 */
typedef struct shell {
	usc_hlo_module mod;
	usc_hlo_computation entry;
	usc_hlo_computation **comps;
	size_t ncomps;
	bool *visited; /* by computation index */
	usc_hlo_instr *params;
	usc_hlo_instr **instrs;
	usc_hlo_param *sig;
	usc_hlo_instr root;
	usc_hlo_instr **root_operands;
	usc_hlo_attr *root_attrs;
	char **names; /* parameter names, the root's, the entry's, module's */
	size_t nnames;
} shell;

static void shell_free(shell *s)
{
	size_t i;

	for (i = 0; i < s->nnames; i++)
		usc__free(s->names[i]);
	usc__free(s->names);
	usc__free(s->comps);
	usc__free(s->visited);
	usc__free(s->params);
	usc__free(s->instrs);
	usc__free(s->sig);
	usc__free(s->root_operands);
	usc__free(s->root_attrs);
}

/* Where the walk of collect stands in one computation. */
typedef struct collect_frame {
	const usc_hlo_computation *c;
	size_t i, j; /* the next instruction, and its next callee */
} collect_frame;

/*
 * Callees of c first, each once: the order in which HLO text may name
 * them.  A depth-first walk on a stack of its own (each computation is on
 * it at most once), so that computations nested a hundred thousand deep
 * cost no C stack.
 */
static usc_status collect(shell *s, const usc_hlo_module *m,
			  const usc_hlo_computation *c, usc_error *err)
{
	collect_frame *stack =
		usc__calloc(m->computation_count + 1, sizeof *stack);
	size_t sp = 0;

	if (!stack)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	stack[sp].c = c;
	sp++;
	while (sp) {
		collect_frame *f = &stack[sp - 1];
		const usc_hlo_instr *in;
		usc_hlo_computation *d;

		if (f->i == f->c->instr_count) {
			/* Its callees are in: c itself is the caller's job. */
			if (sp > 1)
				s->comps[s->ncomps++] =
					(usc_hlo_computation *)f->c;
			sp--;
			continue;
		}
		in = f->c->instrs[f->i];
		if (f->j == in->called_count) {
			f->i++;
			f->j = 0;
			continue;
		}
		d = in->called[f->j++];
		if (!d || d->index >= m->computation_count ||
		    m->computations[d->index] != d || s->visited[d->index])
			continue;
		s->visited[d->index] = true;
		stack[sp].c = d;
		stack[sp].i = stack[sp].j = 0;
		sp++;
	}
	usc__free(stack);
	return USC_OK;
}

/* Whether a name is taken by an instruction of the shell so far. */
static bool name_taken(const shell *s, const char *name)
{
	size_t i, j;

	for (i = 0; i < s->ncomps; i++)
		for (j = 0; j < s->comps[i]->instr_count; j++)
			if (strcmp(s->comps[i]->instrs[j]->name, name) == 0)
				return true;
	for (i = 0; i < s->nnames; i++)
		if (strcmp(s->names[i], name) == 0)
			return true;
	return false;
}

static bool comp_name_taken(const shell *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->ncomps; i++)
		if (strcmp(s->comps[i]->name, name) == 0)
			return true;
	return false;
}

/*
 * Records a new name: base itself when free, else base.1, base.2 ...
 * (XLA's own way of making names unique).  comp selects the namespace.
 */
static usc_status add_name(shell *s, const char *base, bool comp,
			   const char **out, usc_error *err)
{
	size_t len = strlen(base) + 24;
	unsigned long k;
	char *n = usc__malloc(len);

	if (!n)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	snprintf(n, len, "%s", base);
	for (k = 1; comp ? comp_name_taken(s, n) : name_taken(s, n); k++)
		snprintf(n, len, "%s.%lu", base, k);
	s->names[s->nnames++] = n;
	*out = n;
	return USC_OK;
}

static usc_status build_shell(shell *s, const usc_hlo_module *m,
			      const usc_hlo_instr *fusion,
			      const usc_hlo_computation *comp, usc_error *err)
{
	const usc_hlo_computation *fused = fusion ? fused_of(fusion) : comp;
	size_t n = fusion ? fusion->operand_count : 0, i, k;
	char base[512];
	const char *mname;
	usc_status st;

	memset(s, 0, sizeof *s);
	if (!fused)
		return usc__fail(err, USC_EINVAL,
				 "fusion '%s' calls no computation",
				 fusion->name);
	s->comps = usc__calloc(m->computation_count + 1, sizeof *s->comps);
	s->visited = usc__calloc(m->computation_count + 1, sizeof *s->visited);
	s->names = usc__calloc(n + 3, sizeof *s->names);
	s->params = usc__calloc(n + 1, sizeof *s->params);
	s->instrs = usc__calloc(n + 1, sizeof *s->instrs);
	s->sig = usc__calloc(n + 1, sizeof *s->sig);
	s->root_operands = usc__calloc(n + 1, sizeof *s->root_operands);
	s->root_attrs = usc__calloc(fusion ? fusion->attr_count + 1 : 1,
				    sizeof *s->root_attrs);
	if (!s->comps || !s->visited || !s->names || !s->params ||
	    !s->instrs || !s->sig || !s->root_operands || !s->root_attrs)
		return usc__fail(err, USC_ENOMEM, "out of memory");

	if (fused->index < m->computation_count &&
	    m->computations[fused->index] == fused)
		s->visited[fused->index] = true;
	st = collect(s, m, fused, err);
	if (st != USC_OK)
		return st;
	s->comps[s->ncomps++] = (usc_hlo_computation *)fused;

	snprintf(base, sizeof base, "%s%s%s", m->name ? m->name : "",
		 m->name ? "_" : "", fusion ? fusion->name : fused->name);
	s->mod.name = base;
	s->mod.has_header = true;
	s->mod.computations = s->comps;
	if (!fusion) {
		/* A kernel given on its own: it is the ENTRY already. */
		TRY(add_name(s, base, true, &mname, err));
		s->mod.name = mname;
		s->mod.computation_count = s->ncomps;
		s->mod.entry = (usc_hlo_computation *)fused;
		return USC_OK;
	}

	for (i = 0; i < n; i++) {
		usc_hlo_instr *p = &s->params[i];

		TRY(add_name(s, fusion->operands[i]->name, false, &p->name,
			     err));
		p->opcode = USC_HLO_OP_PARAMETER;
		p->shape = fusion->operands[i]->shape;
		p->parameter_number = (int64_t)i;
		p->index = i;
		p->parent = &s->entry;
		p->loc = fusion->loc;
		s->instrs[i] = p;
		s->root_operands[i] = p;
		s->sig[i].name = p->name;
		s->sig[i].shape = p->shape;
	}
	s->root = *fusion;
	TRY(add_name(s, fusion->name, false, &s->root.name, err));
	s->root.operands = s->root_operands;
	s->root.is_root = true;
	s->root.index = n;
	s->root.parent = &s->entry;
	/*
	 * control-predecessors name instructions of the old computation,
	 * which the new module does not have.
	 */
	s->root.attr_count = 0;
	s->root.attrs = s->root_attrs;
	for (k = 0; k < fusion->attr_count; k++)
		if (strcmp(fusion->attrs[k].name, "control-predecessors") != 0)
			s->root_attrs[s->root.attr_count++] = fusion->attrs[k];
	s->instrs[n] = &s->root;

	TRY(add_name(s, base, true, &mname, err));
	s->mod.name = mname;
	s->entry.name = mname;
	s->entry.is_entry = true;
	s->entry.explicit_entry = true;
	s->entry.explicit_root = true;
	s->entry.instr_count = n + 1;
	s->entry.instrs = s->instrs;
	s->entry.root = &s->root;
	s->entry.has_signature = true;
	s->entry.param_count = n;
	s->entry.params = s->sig;
	s->entry.result = fusion->shape;
	s->entry.index = s->ncomps;
	s->entry.parent = &s->mod;
	s->entry.loc = fusion->parent ? fusion->parent->loc : fusion->loc;
	s->comps[s->ncomps++] = &s->entry;
	s->mod.computation_count = s->ncomps;
	s->mod.entry = &s->entry;
	return USC_OK;
}

usc_status usc_hlo_extract_fusion(const usc_hlo_module *m, const char *name,
				  const usc_hlo_print_options *opts,
				  char **text_out, size_t *len_out,
				  usc_error *err)
{
	const usc_hlo_instr *fusion;
	const usc_hlo_computation *comp;
	usc_status st;
	shell s;

	if (!m || !name || !text_out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_extract_fusion: NULL argument");
	*text_out = NULL;
	TRY(usc_hlo_find_fusion(m, name, &fusion, &comp, err));
	st = build_shell(&s, m, fusion, comp, err);
	if (st == USC_OK)
		st = usc_hlo_module_print(&s.mod, opts, text_out, len_out, err);
	shell_free(&s);
	return st;
}

usc_status usc_hlo_extract_fusion_file(const usc_hlo_module *m,
				       const char *name, usc_hlo_file **out,
				       usc_error *err)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	char *text = NULL;
	size_t len = 0;
	usc_status st;

	if (!out)
		return usc__fail(err, USC_EINVAL,
				 "usc_hlo_extract_fusion_file: NULL argument");
	*out = NULL;
	TRY(usc_hlo_extract_fusion(m, name, &o, &text, &len, err));
	st = usc_hlo_parse(text, len, name, out, err);
	usc_hlo_text_free(text);
	return st;
}
