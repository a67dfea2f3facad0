/*
 * One execution of a dump as a case directory (usc_dump_import): the
 * snapshot's module is checked against the module text XLA dumped beside
 * it, its arguments against the entry parameters and its result against
 * the entry root, then kernel.hlo, input_i.npy, device_i.npy and case.json
 * are written (docs/cases.md, docs/dumps.md).
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ulpscope/dump.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"
#include "ulpscope/xla_proto.h"

static int block_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The module's computations as printed, each one block, sorted: what a
 * text and a proto of one module share.  (The header's run-configuration
 * attributes and the order of computations are not in the proto;
 * docs/dumps.md.)  *text owns the blocks.
 */
static usc_status comp_blocks(const usc_hlo_module *m, char **text,
			      char ***blocks, size_t *count, usc_error *err)
{
	usc_hlo_print_options o = usc_hlo_print_options_default();
	usc_status st = usc_hlo_module_print(m, &o, text, NULL, err);
	if (st != USC_OK)
		return st;
	size_t n = 0, cap = 16;
	char **b = usc__malloc(cap * sizeof *b);
	if (!b)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	for (char *p = *text; p && *p;) {
		char *end = strstr(p, "\n\n");
		if (end)
			*end = '\0';
		if (p[0] == '%' || strncmp(p, "ENTRY", 5) == 0) {
			if (n == cap) {
				char **g = usc__reallocarray(b, cap * 2, sizeof *b);
				if (!g) {
					usc__free(b);
					return usc__fail(err, USC_ENOMEM,
							 "out of memory");
				}
				b = g;
				cap *= 2;
			}
			b[n++] = p;
		}
		if (!end)
			break;
		p = end + 2;
		while (*p == '\n')
			p++;
	}
	qsort(b, n, sizeof *b, block_cmp);
	*blocks = b;
	*count = n;
	return USC_OK;
}

static usc_status same_module(const usc_hlo_module *a, const char *afile,
			      const usc_hlo_module *b, const char *bfile,
			      usc_error *err)
{
	char *ta = NULL, *tb = NULL, **ba = NULL, **bb = NULL;
	size_t na = 0, nb = 0;
	usc_status st = comp_blocks(a, &ta, &ba, &na, err);
	if (st == USC_OK)
		st = comp_blocks(b, &tb, &bb, &nb, err);
	if (st == USC_OK) {
		size_t i = 0;
		while (i < na && i < nb && strcmp(ba[i], bb[i]) == 0)
			i++;
		if (i < na || i < nb) {
			const char *first = i < na ? ba[i] : bb[i];
			st = usc__fail(err, USC_EVERIFY,
				       "%s and %s hold different modules: "
				       "they differ at computation '%.*s'",
				       afile, bfile,
				       (int)strcspn(first, " ("), first);
		}
	}
	usc__free(ba);
	usc__free(bb);
	usc_hlo_text_free(ta);
	usc_hlo_text_free(tb);
	return st;
}

static usc_status shape_matches(const usc_tensor *t, const usc_hlo_shape *s,
				const char *what, const char *snap,
				const char *mod, usc_error *err)
{
	char want[256], got[256];
	bool ok = s->kind == USC_HLO_SHAPE_ARRAY &&
		  s->dtype == usc_tensor_dtype(t) &&
		  s->rank == usc_tensor_rank(t);
	for (size_t i = 0; ok && i < s->rank; i++)
		ok = s->dims[i] == usc_tensor_dims(t)[i];
	if (ok)
		return USC_OK;
	usc_tensor_spec spec = usc_tensor_spec_of(t);
	usc_tensor_spec_format(&spec, got, sizeof got);
	char *w = NULL;
	if (usc_hlo_shape_print(s, &w, NULL) == USC_OK) {
		snprintf(want, sizeof want, "%s", w);
		usc_hlo_text_free(w);
	} else {
		snprintf(want, sizeof want, "?");
	}
	return usc__fail(err, USC_EVERIFY,
			 "%s: %s is %s, but in %s it is %s", snap, what, got,
			 mod, want);
}

/* The array leaves of a shape, depth first (as the result's literal). */
static void shape_leaves(const usc_hlo_shape *s, const usc_hlo_shape **out,
			 size_t *n, size_t max)
{
	if (s->kind == USC_HLO_SHAPE_TUPLE) {
		for (size_t i = 0; i < s->tuple_count; i++)
			shape_leaves(&s->tuple[i], out, n, max);
		return;
	}
	if (*n < max)
		out[*n] = s;
	(*n)++;
}

static usc_status check_values(const usc_snapshot *s, const char *snap,
			       const usc_hlo_module *m, const char *mod,
			       usc_error *err)
{
	const usc_hlo_computation *e = m->entry;
	size_t nparam = 0;
	for (size_t i = 0; i < e->instr_count; i++)
		nparam += e->instrs[i]->opcode == USC_HLO_OP_PARAMETER;
	if (usc_snapshot_argument_count(s) != nparam)
		return usc__fail(err, USC_EVERIFY,
				 "%s: %zu arguments, but the entry of %s has "
				 "%zu parameters", snap,
				 usc_snapshot_argument_count(s), mod, nparam);
	for (size_t i = 0; i < e->instr_count; i++) {
		const usc_hlo_instr *p = e->instrs[i];
		if (p->opcode != USC_HLO_OP_PARAMETER)
			continue;
		const usc_literal *l = usc_snapshot_argument(
			s, (size_t)p->parameter_number);
		char what[96];
		snprintf(what, sizeof what, "argument %" PRId64,
			 p->parameter_number);
		if (!l || usc_literal_is_tuple(l))
			return usc__fail(err, USC_EUNSUPPORTED,
					 "%s: %s is a tuple; ulpscope reads "
					 "array arguments only", snap, what);
		char pwhat[160];
		snprintf(pwhat, sizeof pwhat, "parameter %" PRId64 " of the "
			 "entry of %s", p->parameter_number, mod);
		usc_status st = shape_matches(usc_literal_tensor(l), &p->shape,
					      what, snap, pwhat, err);
		if (st != USC_OK)
			return st;
	}
	const usc_literal *r = usc_snapshot_result(s);
	if (!r)
		return usc__fail(err, USC_EVERIFY,
				 "%s: HloSnapshot.result: absent; the snapshot "
				 "holds no device output", snap);
	enum { MAX_LEAVES = 1024 };
	const usc_hlo_shape *leaves[MAX_LEAVES];
	size_t n = 0;
	shape_leaves(&e->root->shape, leaves, &n, MAX_LEAVES);
	if (n != usc_literal_leaf_count(r) || n > MAX_LEAVES)
		return usc__fail(err, USC_EVERIFY,
				 "%s: the result has %zu arrays, the entry root "
				 "of %s %zu", snap, usc_literal_leaf_count(r),
				 mod, n);
	for (size_t i = 0; i < n; i++) {
		char what[64], rwhat[160];
		snprintf(what, sizeof what, "result array %zu", i);
		snprintf(rwhat, sizeof rwhat, "the entry root of %s", mod);
		usc_status st = shape_matches(usc_literal_leaf(r, i), leaves[i],
					      what, snap, rwhat, err);
		if (st != USC_OK)
			return st;
	}
	return USC_OK;
}

static usc_status write_text(const char *path, const char *text, size_t len,
			     usc_error *err)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return usc__fail(err, USC_EIO, "%s: cannot create: %s", path,
				 strerror(errno));
	bool ok = fwrite(text, 1, len, fp) == len;
	ok &= fclose(fp) == 0;
	if (!ok)
		return usc__fail(err, USC_EIO, "%s: write error", path);
	return USC_OK;
}

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static usc_status write_case_json(const char *path, const usc_dump_module *dm,
				  size_t index, const usc_snapshot *s,
				  const usc_hlo_module *m, bool text,
				  const char *skipped, usc_error *err)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		return usc__fail(err, USC_EIO, "%s: cannot create: %s", path,
				 strerror(errno));
	const usc_hlo_computation *e = m->entry;
	size_t fusions = 0;
	const char *only = NULL;
	for (size_t i = 0; i < e->instr_count; i++)
		if (e->instrs[i]->opcode == USC_HLO_OP_FUSION) {
			fusions++;
			only = e->instrs[i]->name;
		}
	fputs("{\n \"fusion\": ", fp);
	if (fusions == 1)
		json_str(fp, only);
	else
		fputs("null", fp);
	fputs(",\n \"fusions\": [", fp);
	size_t k = 0;
	for (size_t i = 0; i < e->instr_count; i++)
		if (e->instrs[i]->opcode == USC_HLO_OP_FUSION) {
			fputs(k++ ? ", " : "", fp);
			json_str(fp, e->instrs[i]->name);
		}
	fputs("],\n \"platform\": ", fp);
	if (dm->platform)
		json_str(fp, dm->platform);
	else
		fputs("null", fp);
	fputs(",\n \"module\": ", fp);
	json_str(fp, dm->name);
	fprintf(fp, ",\n \"dump_module_id\": %" PRId64, dm->id);
	fputs(",\n \"snapshot\": ", fp);
	json_str(fp, base_name(dm->snapshots[index]));
	fprintf(fp, ",\n \"execution\": %" PRId64, dm->executions[index]);
	fputs(",\n \"execution_platform\": ", fp);
	json_str(fp, usc_snapshot_platform(s));
	fputs(",\n \"hlo_source\": ", fp);
	json_str(fp, text ? base_name(dm->text_after)
			  : "the snapshot's module (HloSnapshot.hlo)");
	if (skipped[0]) {
		fputs(",\n \"module_not_compared\": ", fp);
		json_str(fp, skipped);
	}
	fputs(",\n \"made_by\": \"ulpscope import: XLA's own snapshot "
	      "(--xla_dump_hlo_snapshots)\",\n \"distribution\": \"given\","
	      "\n \"seed\": null\n}\n",
	      fp);
	if (fclose(fp) != 0)
		return usc__fail(err, USC_EIO, "%s: write error", path);
	return USC_OK;
}

static usc_status make_dir(const char *dir, usc_error *err)
{
	if (mkdir(dir, 0777) == 0)
		return USC_OK;
	if (errno != EEXIST)
		return usc__fail(err, USC_EIO, "%s: cannot create: %s", dir,
				 strerror(errno));
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return usc__fail(err, USC_EIO, "%s: exists and is not a "
				 "directory", dir);
	return USC_OK;
}

static usc_status write_cases(const char *dir, const usc_dump_module *dm,
			      size_t index, const usc_snapshot *s,
			      const usc_hlo_module *m, const char *text,
			      size_t text_len, bool from_text,
			      const char *skipped, usc_error *err)
{
	char path[4096];
	usc_status st = make_dir(dir, err);
	if (st != USC_OK)
		return st;
	snprintf(path, sizeof path, "%s/kernel.hlo", dir);
	st = write_text(path, text, text_len, err);
	for (size_t i = 0; st == USC_OK && i < usc_snapshot_argument_count(s);
	     i++) {
		snprintf(path, sizeof path, "%s/input_%zu.npy", dir, i);
		st = usc_tensor_write_npy(
			usc_literal_tensor(usc_snapshot_argument(s, i)), path,
			err);
	}
	const usc_literal *r = usc_snapshot_result(s);
	for (size_t i = 0; st == USC_OK && i < usc_literal_leaf_count(r); i++) {
		snprintf(path, sizeof path, "%s/device_%zu.npy", dir, i);
		st = usc_tensor_write_npy(usc_literal_leaf(r, i), path, err);
	}
	if (st == USC_OK) {
		snprintf(path, sizeof path, "%s/case.json", dir);
		st = write_case_json(path, dm, index, s, m, from_text, skipped,
				     err);
	}
	return st;
}

usc_status usc_dump_import(const usc_dump *d, const usc_dump_module *dm,
			   size_t index, const char *case_dir,
			   usc_error *err)
{
	(void)d;
	usc_snapshot *s = NULL;
	usc_hlo_file *ft = NULL, *fp = NULL;
	char *text = NULL, *printed = NULL;
	size_t text_len = 0;
	const char *snap = dm->snapshots[index];
	usc_status st = usc_snapshot_read(snap, &s, err);
	if (st == USC_OK && dm->text_after) {
		st = usc__read_file(dm->text_after, &text, &text_len, err);
		if (st == USC_OK)
			st = usc_hlo_parse(text, text_len, dm->text_after, &ft,
					   err);
	}
	/*
	 * A module with an op the converter does not know is still judged
	 * from its text (or refused there by check, naming the op); the
	 * comparison of text and proto is then skipped and case.json says why.
	 */
	char skipped[USC_ERROR_MESSAGE_SIZE] = "";
	if (st == USC_OK && usc_snapshot_has_module(s)) {
		st = usc_snapshot_module(s, &fp, err);
		if (st == USC_EUNSUPPORTED && ft) {
			snprintf(skipped, sizeof skipped, "%s",
				 err ? err->message : "not converted");
			st = USC_OK;
		}
	}
	if (st == USC_OK && !ft && !fp)
		st = usc__fail(err, USC_ENOTFOUND,
			       "%s: no module: neither %s nor the snapshot "
			       "holds one", dm->stem, "after_optimizations.txt");
	const usc_hlo_module *mt = ft ? usc_hlo_file_module(ft, 0) : NULL;
	const usc_hlo_module *mp = fp ? usc_hlo_file_module(fp, 0) : NULL;
	if (st == USC_OK && mt && mp)
		st = same_module(mt, dm->text_after, mp, snap, err);
	const usc_hlo_module *m = mt ? mt : mp;
	if (st == USC_OK)
		st = check_values(s, snap, m, mt ? dm->text_after : snap, err);
	if (st == USC_OK && !mt) {
		/* No text beside it: the module printed as XLA dumps it. */
		usc_hlo_print_options o = {USC_HLO_PRINT_SHORT, true};
		st = usc_hlo_module_print(mp, &o, &printed, &text_len, err);
	}
	if (st == USC_OK)
		st = write_cases(case_dir, dm, index, s, m,
				 mt ? text : printed, text_len, mt != NULL,
				 skipped, err);
	usc__free(text);
	usc_hlo_text_free(printed);
	usc_hlo_file_destroy(ft);
	usc_hlo_file_destroy(fp);
	usc_snapshot_destroy(s);
	return st;
}
