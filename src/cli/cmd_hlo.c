/*
 * ulpscope hlo | extract: what an HLO file holds, and one of its kernels
 * cut out as a standalone module.  Both are thin layers over
 * ulpscope/hlo_kernel.h: the summary, the verifier and the extraction are
 * library calls, and this file only prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ulpscope/hlo.h"
#include "ulpscope/hlo_kernel.h"
#include "ulpscope/xla_proto.h"

#define SHAPE_TEXT 512

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * Reads HLO text, or XLA's protocol buffers by their dump names: a
 * "*.snapshot.K.pb" is an HloSnapshot (its module is read), any other
 * "*.pb" an HloProto (docs/dumps.md).
 */
usc_status usc_cli_load_hlo(const char *path, usc_hlo_file **f,
			    usc_error *err)
{
	if (ends_with(path, ".pb") && strstr(path, ".snapshot.")) {
		usc_snapshot *s = NULL;
		usc_status st = usc_snapshot_read(path, &s, err);

		if (st == USC_OK)
			st = usc_snapshot_module(s, f, err);
		usc_snapshot_destroy(s);
		return st;
	}
	if (ends_with(path, ".pb"))
		return usc_hlo_parse_pb_file(path, f, err);
	return usc_hlo_parse_file(path, f, err);
}

/* Parse errors already read "FILE:LINE:COLUMN: error: ..." with a caret. */
static int load(const char *path, usc_hlo_file **f)
{
	usc_error err;

	usc_error_clear(&err);
	if (usc_cli_load_hlo(path, f, &err) != USC_OK) {
		fprintf(stderr, "%s\n", err.message);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ text form */

static void print_shape(FILE *out, const usc_hlo_shape *s)
{
	char buf[SHAPE_TEXT];

	fputs(usc_hlo_shape_format(s, buf, sizeof buf), out);
}

static void print_comp_body(FILE *out, const usc_hlo_comp_summary *c,
			    const char *indent, bool op_names)
{
	size_t i;

	fprintf(out, "%sops: %zu", indent, c->op_count);
	for (i = 0; i < c->histogram_count; i++)
		fprintf(out, "%s%s %zu", i ? ", " : " (",
			usc_hlo_opcode_name(c->histogram[i].opcode),
			c->histogram[i].count);
	fprintf(out, "%s\n", c->histogram_count ? ")" : "");
	fprintf(out, "%stypes:", indent);
	for (i = 0; i < c->dtype_count; i++)
		fprintf(out, "%s%s", i ? ", " : " ", usc_dtype_name(c->dtypes[i]));
	fputc('\n', out);
	if (!op_names || !c->op_name_count)
		return;
	fprintf(out, "%ssource ops:\n", indent);
	for (i = 0; i < c->op_name_count; i++)
		fprintf(out, "%s  %s\n", indent, c->op_names[i]);
}

static void print_summary(FILE *out, const usc_hlo_module_summary *s)
{
	const usc_hlo_module *m = s->module;
	size_t i;

	fprintf(out, "module %s: %zu computation%s, %zu instructions, %zu "
		"fusion%s\n",
		m->name ? m->name : "(unnamed)", s->computation_count,
		s->computation_count == 1 ? "" : "s", s->instr_count,
		s->fusion_count, s->fusion_count == 1 ? "" : "s");
	if (m->entry) {
		fprintf(out, "  entry %s (", m->entry->name);
		for (i = 0; i < s->entry_param_count; i++) {
			const usc_hlo_instr *p = s->entry_params[i];

			fprintf(out, "%s%s: ", i ? ", " : "",
				p ? p->name : "?");
			if (p)
				print_shape(out, &p->shape);
		}
		fprintf(out, ") -> ");
		if (s->entry_result)
			print_shape(out, s->entry_result);
		fputc('\n', out);
		print_comp_body(out, &s->entry, "    ", false);
	}
	for (i = 0; i < s->fusion_count; i++) {
		const usc_hlo_fusion_summary *f = &s->fusions[i];
		size_t k;

		fprintf(out, "  fusion %s: %s, calls %s\n", f->fusion->name,
			f->kind ? f->kind : "(no kind)",
			f->fused ? f->fused->name : "?");
		fprintf(out, "    parameters:");
		for (k = 0; k < f->param_count; k++) {
			fputs(k ? ", " : " ", out);
			print_shape(out, f->params[k]);
		}
		fprintf(out, "\n    result: ");
		print_shape(out, f->result);
		fputc('\n', out);
		print_comp_body(out, &f->body, "    ", true);
	}
}

/* ------------------------------------------------------------ JSON form */

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_shape(FILE *out, const usc_hlo_shape *s)
{
	char buf[SHAPE_TEXT];

	json_string(out, usc_hlo_shape_format(s, buf, sizeof buf));
}

static void json_comp_body(FILE *out, const usc_hlo_comp_summary *c)
{
	size_t i;

	fprintf(out, "\"instructions\": %zu, \"ops\": %zu, \"histogram\": {",
		c->instr_count, c->op_count);
	for (i = 0; i < c->histogram_count; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, usc_hlo_opcode_name(c->histogram[i].opcode));
		fprintf(out, ": %zu", c->histogram[i].count);
	}
	fputs("}, \"types\": [", out);
	for (i = 0; i < c->dtype_count; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, usc_dtype_name(c->dtypes[i]));
	}
	fputs("], \"op_names\": [", out);
	for (i = 0; i < c->op_name_count; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, c->op_names[i]);
	}
	fputs("]", out);
}

static void json_summary(FILE *out, const usc_hlo_module_summary *s,
			 bool verify, usc_status vst, const usc_error *verr)
{
	const usc_hlo_module *m = s->module;
	size_t i, k;

	fputs("  {\"module\": ", out);
	if (m->name)
		json_string(out, m->name);
	else
		fputs("null", out);
	fprintf(out, ", \"computations\": %zu, \"instructions\": %zu",
		s->computation_count, s->instr_count);
	if (m->entry) {
		fputs(",\n   \"entry\": {\"name\": ", out);
		json_string(out, m->entry->name);
		fputs(", \"parameters\": [", out);
		for (i = 0; i < s->entry_param_count; i++) {
			const usc_hlo_instr *p = s->entry_params[i];

			fputs(i ? ", " : "", out);
			if (!p) {
				fputs("null", out);
				continue;
			}
			fputs("{\"name\": ", out);
			json_string(out, p->name);
			fputs(", \"shape\": ", out);
			json_shape(out, &p->shape);
			fputs("}", out);
		}
		fputs("], \"result\": ", out);
		if (s->entry_result)
			json_shape(out, s->entry_result);
		else
			fputs("null", out);
		fputs(", ", out);
		json_comp_body(out, &s->entry);
		fputs("}", out);
	}
	fputs(",\n   \"fusions\": [", out);
	for (i = 0; i < s->fusion_count; i++) {
		const usc_hlo_fusion_summary *f = &s->fusions[i];

		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		json_string(out, f->fusion->name);
		fputs(", \"kind\": ", out);
		if (f->kind)
			json_string(out, f->kind);
		else
			fputs("null", out);
		fputs(", \"calls\": ", out);
		if (f->fused)
			json_string(out, f->fused->name);
		else
			fputs("null", out);
		fputs(", \"parameters\": [", out);
		for (k = 0; k < f->param_count; k++) {
			fputs(k ? ", " : "", out);
			json_shape(out, f->params[k]);
		}
		fputs("], \"result\": ", out);
		json_shape(out, f->result);
		fputs(", ", out);
		json_comp_body(out, &f->body);
		fputs("}", out);
	}
	fputs("]", out);
	if (verify) {
		fputs(",\n   \"verified\": ", out);
		fputs(vst == USC_OK ? "true" : "false", out);
		if (vst != USC_OK) {
			fputs(", \"error\": ", out);
			json_string(out, verr->message);
		}
	}
	fputs("}", out);
}

/* ------------------------------------------------------------ commands */

static int hlo_usage(void)
{
	usc_cli_error("usage: ulpscope hlo FILE [--verify] [--json] [--print]");
	return USC_EXIT_USAGE;
}

int usc_cli_hlo(int argc, char **argv)
{
	const char *path = NULL;
	bool verify = false, json = false, print = false;
	usc_hlo_file *f = NULL;
	int rc = USC_EXIT_OK, i;
	size_t k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--verify") == 0) {
			verify = true;
		} else if (strcmp(argv[i], "--print") == 0) {
			print = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usc_cli_error("unknown option '%s'", argv[i]);
			return hlo_usage();
		} else if (path) {
			usc_cli_error("more than one FILE");
			return hlo_usage();
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return hlo_usage();
	if (load(path, &f) != 0)
		return USC_EXIT_FAIL;
	if (print) {
		/* The module as the printer writes it back (long form). */
		usc_hlo_print_options o = usc_hlo_print_options_default();
		char *text = NULL;
		usc_error err;

		usc_error_clear(&err);
		if (usc_hlo_file_print(f, &o, &text, NULL, &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			usc_hlo_file_destroy(f);
			return USC_EXIT_FAIL;
		}
		fputs(text, stdout);
		usc_hlo_text_free(text);
		usc_hlo_file_destroy(f);
		return USC_EXIT_OK;
	}
	if (json)
		fputs("[\n", stdout);
	for (k = 0; k < usc_hlo_file_module_count(f); k++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, k);
		usc_hlo_module_summary *s = NULL;
		usc_status vst = USC_OK;
		usc_error err;

		usc_error_clear(&err);
		if (usc_hlo_module_summarize(m, &s, &err) != USC_OK) {
			usc_cli_error("%s", err.message);
			rc = USC_EXIT_FAIL;
			break;
		}
		if (verify) {
			vst = usc_hlo_verify_ex(m, path, &err);
			if (vst != USC_OK)
				rc = USC_EXIT_FAIL;
		}
		if (json) {
			if (k)
				fputs(",\n", stdout);
			json_summary(stdout, s, verify, vst, &err);
		} else {
			if (k)
				fputc('\n', stdout);
			print_summary(stdout, s);
			if (verify && vst == USC_OK)
				printf("  verified\n");
			else if (verify) {
				/* The error goes with the others, to stderr. */
				fflush(stdout);
				fprintf(stderr, "%s\n", err.message);
			}
		}
		usc_hlo_module_summary_destroy(s);
	}
	if (json)
		fputs("\n]\n", stdout);
	usc_hlo_file_destroy(f);
	return rc;
}

static int extract_usage(void)
{
	usc_cli_error("usage: ulpscope extract FILE --fusion NAME [-o OUT] "
		      "[--short] [--no-metadata]");
	return USC_EXIT_USAGE;
}

/*
 * The module that holds the fusion: the first that has it.  When none
 * does, a single module's own message (near matches) is the most useful;
 * with several modules, each one's is.
 */
static int find_module(const usc_hlo_file *f, const char *path,
		       const char *name, const usc_hlo_module **out)
{
	size_t n = usc_hlo_file_module_count(f), k;
	usc_error err;

	for (k = 0; k < n; k++) {
		const usc_hlo_module *m = usc_hlo_file_module(f, k);
		const usc_hlo_instr *fusion;
		const usc_hlo_computation *comp;
		usc_status st;

		usc_error_clear(&err);
		st = usc_hlo_find_fusion(m, name, &fusion, &comp, &err);
		if (st == USC_OK) {
			*out = m;
			return 0;
		}
		if (st != USC_ENOTFOUND || n == 1) {
			usc_cli_error("%s: %s", path, err.message);
			return -1;
		}
	}
	usc_cli_error("%s: no fusion or computation named '%s' in any of its "
		      "%zu modules", path, name, n);
	return -1;
}

int usc_cli_extract(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *out_path = NULL;
	usc_hlo_print_options opts = usc_hlo_print_options_default();
	const usc_hlo_module *m = NULL;
	usc_hlo_file *f = NULL;
	char *text = NULL;
	size_t len = 0;
	usc_error err;
	int rc = USC_EXIT_OK, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fusion") == 0 ||
		    strcmp(argv[i], "-o") == 0) {
			if (i + 1 >= argc) {
				usc_cli_error("%s needs a value", argv[i]);
				return extract_usage();
			}
			if (argv[i][1] == 'o')
				out_path = argv[++i];
			else
				name = argv[++i];
		} else if (strcmp(argv[i], "--short") == 0) {
			opts.form = USC_HLO_PRINT_SHORT;
		} else if (strcmp(argv[i], "--no-metadata") == 0) {
			opts.print_metadata = false;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usc_cli_error("unknown option '%s'", argv[i]);
			return extract_usage();
		} else if (path) {
			usc_cli_error("more than one FILE");
			return extract_usage();
		} else {
			path = argv[i];
		}
	}
	if (!path || !name)
		return extract_usage();
	if (load(path, &f) != 0)
		return USC_EXIT_FAIL;
	usc_error_clear(&err);
	if (find_module(f, path, name, &m) != 0) {
		rc = USC_EXIT_FAIL;
	} else if (usc_hlo_extract_fusion(m, name, &opts, &text, &len, &err) !=
		   USC_OK) {
		usc_cli_error("%s: %s", path, err.message);
		rc = USC_EXIT_FAIL;
	} else {
		FILE *out = out_path ? fopen(out_path, "w") : stdout;

		if (!out) {
			usc_cli_error("cannot write '%s'", out_path);
			rc = USC_EXIT_FAIL;
		} else {
			if (fwrite(text, 1, len, out) != len)
				rc = USC_EXIT_FAIL;
			if (out != stdout && fclose(out) != 0)
				rc = USC_EXIT_FAIL;
			if (rc != USC_EXIT_OK)
				usc_cli_error("cannot write '%s'",
					      out_path ? out_path : "stdout");
		}
	}
	usc_hlo_text_free(text);
	usc_hlo_file_destroy(f);
	return rc;
}
