/*
 * `ulpscope explain --results`: what a result file holds of a kernel laid
 * out as a case directory, so the explanation reads it as it reads a case.
 */
#include "internal.h"
#include "analyze/explain_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void usc__explain_case_remove(usc__explain_case *rc)
{
	for (size_t i = 0; i < rc->nfiles; i++)
		(void)unlink(rc->files[i]);
	if (rc->dir[0])
		(void)rmdir(rc->dir);
}

usc_status usc__explain_case_make(const char *path, const char *kernel,
				    usc__explain_case *rc, usc_error *err)
{
	usc_results_reader *rd = NULL;
	usc_results_kernel_info *info = NULL;
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	usc_status st;

	memset(rc, 0, sizeof *rc);
	st = usc_results_open(path, &rd, err);
	if (st != USC_OK)
		return st;
	st = usc_results_read_kernel(rd, kernel, &info, err);
	if (st != USC_OK)
		goto done;
	if (info->output_count > 64) {
		st = usc__fail(err, USC_EUNSUPPORTED,
			       "%s: kernel '%s' has %zu outputs, more than "
			       "the 64 explain reads back",
			       path, kernel, info->output_count);
		goto done;
	}
	if (!info->hlo_text || !info->hlo_text_len) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: kernel '%s' holds no HLO text", path,
			       kernel);
		goto done;
	}
	snprintf(rc->dir, sizeof rc->dir, "%s/ulpscope-explain-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(rc->dir)) {
		rc->dir[0] = '\0';
		st = usc__fail(err, USC_EIO,
			       "cannot create a temporary directory for the "
			       "kernel of %s",
			       path);
		goto done;
	}
	snprintf(rc->files[0], sizeof rc->files[0], "%s/kernel.hlo", rc->dir);
	f = fopen(rc->files[0], "wb");
	if (!f) {
		st = usc__fail(err, USC_EIO, "%s: cannot write", rc->files[0]);
		goto done;
	}
	rc->nfiles = 1;
	if (fwrite(info->hlo_text, 1, info->hlo_text_len, f) !=
		    info->hlo_text_len ||
	    fclose(f) != 0) {
		st = usc__fail(err, USC_EIO, "%s: cannot write", rc->files[0]);
		goto done;
	}
	for (size_t i = 0; i < info->output_count; i++) {
		usc_results_output_data *od = NULL;
		char *fp = rc->files[rc->nfiles];

		st = usc_results_read_output(rd, kernel, i, &od, err);
		if (st != USC_OK)
			goto done;
		{
			char dir[sizeof rc->dir];

			/* A copy: rc->dir and fp lie in the same object. */
			memcpy(dir, rc->dir, sizeof dir);
			snprintf(fp, sizeof rc->files[0], "%s/device_%zu.npy",
				 dir, i);
		}
		st = usc_tensor_write_npy(od->device, fp, err);
		usc_results_output_data_free(od);
		if (st != USC_OK)
			goto done;
		rc->nfiles++;
		rc->devices[rc->device_count++] = fp;
	}
	if (info->profile && info->profile[0]) {
		usc_error perr;

		if (usc_profile_builtin(info->profile, &rc->profile, &perr) !=
		    USC_OK) {
			st = usc__fail(err, USC_EINVAL,
				       "%s: kernel '%s' was classified under "
				       "profile '%s', which is not a built-in "
				       "profile: give it with --profile FILE",
				       path, kernel, info->profile);
			goto done;
		}
		rc->have_profile = true;
	}
done:
	usc_results_kernel_info_free(info);
	usc_results_reader_close(rd);
	if (st != USC_OK)
		usc__explain_case_remove(rc);
	return st;
}
