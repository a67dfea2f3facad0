/*
 * One case of a batch, in its child process (batch_internal.h): the same
 * check "ulpscope check CASE --out FILE" makes, through usc_check_case,
 * and the row that sums it up.  The result file is complete (renamed into
 * place by the writer) before the row's text goes back to the batch,
 * which flushes the result file and then appends the row to its journal
 * (batch.c, commit); the journal's record is what marks the case done, so
 * a case with a record has its results whatever moment the batch was
 * killed at.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch_internal.h"
#include "../../oracles/oracle_memory.h"
#include "ulpscope/attribution.h"
#include "ulpscope/check.h"
#include "ulpscope/profile.h"

/* The FNV-1a of kernel.hlo's bytes, or "" when it cannot be read. */
static void hash_kernel(const char *dir, usc_batch_row *row)
{
	size_t a = strlen(dir);
	char *path = usc__malloc(a + sizeof "/kernel.hlo");
	char *text = NULL, hex[17] = "";
	size_t len;

	if (path) {
		memcpy(path, dir, a);
		memcpy(path + a, "/kernel.hlo", sizeof "/kernel.hlo");
		if (usc__read_file(path, &text, &len, NULL) == USC_OK)
			usc__batch_hex(usc__batch_fnv(text, len,
						      USC__FNV_OFFSET),
				       hex);
	}
	usc__batch_set(&row->hlo_hash, hex);
	usc__free(text);
	usc__free(path);
}

/* A double's larger, NaN counting as nothing. */
static double max_of(double a, double b)
{
	if (isnan(a))
		return b;
	return b > a ? b : a;
}

/* The report's figures into the row. */
static void sum_up(const usc_check_report *r, const usc_attribution *a,
		   usc_batch_row *row)
{
	usc__batch_set(&row->kernel, r->kernel_name);
	row->max_ulp_reference = NAN;
	row->max_ulp_oracle = NAN;
	for (size_t i = 0; i < r->output_count; i++) {
		const usc_check_output *o = &r->outputs[i];

		row->elements += o->summary.count;
		row->max_ulp_reference = max_of(row->max_ulp_reference,
						o->summary.reference.max_abs);
		row->max_ulp_oracle = max_of(row->max_ulp_oracle,
					     o->summary.oracle.max_abs);
		for (int c = 0; c < USC_CLASS_COUNT; c++)
			row->counts[c] += o->counts.n[c];
	}
	if (r->classified) {
		usc__batch_set(&row->verdict, usc_verdict_name(r->verdict));
		usc__batch_set(&row->profile, r->profile.name);
		usc__batch_set(&row->message, r->reason);
	}
	row->culprit_share = NAN;
	if (a) {
		size_t best = a->op_count;

		for (size_t u = 0; u < a->op_count; u++)
			if (best == a->op_count ||
			    a->ops[u].share > a->ops[best].share)
				best = u;
		if (best < a->op_count) {
			usc__batch_set(&row->culprit, a->ops[best].name);
			row->culprit_share = a->ops[best].share;
		}
	}
}

int usc__batch_case_run(const usc__batch_job *j, char **text, size_t *len)
{
	usc_check_request req = usc_check_request_default();
	usc_attr_options aopt = usc_attr_options_default();
	usc_attribution *attr = NULL;
	usc_check_report *r = NULL;
	usc_batch_row row;
	usc_profile profile;
	usc_error err;
	usc_status st = USC_OK;
	double t0 = usc__batch_now();

	usc__oracle_exit_on_oom(USC__BATCH_EXIT_OOM);
	memset(&row, 0, sizeof row);
	row.index = j->c->index;
	row.max_ulp_reference = row.max_ulp_oracle = NAN;
	row.culprit_share = NAN;
	usc__batch_set(&row.path, j->c->path);
	usc__batch_set(&row.link, "");
	usc__batch_set(&row.result, "");
	hash_kernel(j->c->path, &row);
	if (j->profile) {
		st = usc_profile_resolve(j->profile, &profile, &err);
		req.profile = &profile;
	}
	req.no_profile = j->no_profile;
	if (st == USC_OK && !j->attribute) {
		req.stream = true;
		req.results_path = j->result_path;
	}
	if (st == USC_OK)
		st = usc_check_case(j->c->path, &req, &r, &err);
	if (st == USC_OK && j->attribute) {
		aopt.reduce_order = req.reduce_order;
		st = usc_attribute(usc_hlo_file_module(r->kernel, 0),
				   r->computation,
				   (const usc_tensor *const *)r->inputs,
				   r->input_count, &aopt, &attr, &err);
		if (st == USC_OK) {
			r->attribution = attr;
			st = usc_check_write(r, j->result_path, false, &err);
		}
	}
	row.seconds = usc__batch_now() - t0;
	if (st == USC_OK) {
		sum_up(r, attr, &row);
		row.status = USC_BATCH_OK;
		usc__batch_set(&row.result, j->result_rel);
		usc__batch_set(&row.link, j->c->link);
	} else {
		row.status = st == USC_ENOMEM ? USC_BATCH_OUT_OF_MEMORY
					      : USC_BATCH_ERROR;
		usc__batch_set(&row.message, err.message);
		unlink(j->result_path);
	}
	usc_check_report_destroy(r);
	usc_attribution_destroy(attr);
	st = usc__batch_row_format(&row, text, len, &err);
	usc_batch_row_clear(&row);
	if (st != USC_OK) {
		fprintf(stderr, "ulpscope: %s\n", err.message);
		return 1;
	}
	return 0;
}
