/*
 * The defect signatures of a kernel in the report: the table that
 * "ulpscope signature --out" adds under /kernels/<name>/signatures
 * (docs/results.md), read through the door to HDF5 since the result
 * reader does not read it.  Its string columns are fixed-length strings,
 * read as their stored bytes; a table that is not the shape and types the
 * schema gives it is an error naming the dataset.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

#include "report/report_internal.h"
#include "store/h5_door.h"
#include "store/results_internal.h"

/* The rows shown; the table is ranked best first. */
enum { SIG_ROWS = 20 };

/*
 * Reads a one-dimensional dataset g/name of n elements of size bytes
 * each (of class cls) into a new buffer.  For a string column size 0
 * takes the stored width, returned in *size.
 */
static usc_status read_column(usc__h5_file *f, const char *path,
			      const char *g, const char *name,
			      usc__h5_class cls, size_t *size, uint64_t *n,
			      void **out, usc_error *err)
{
	char ds[USC__RESULTS_PATH_SIZE];
	usc__h5_dataset *d = NULL;
	usc__h5_type t;
	size_t rank = 0;
	int64_t dim = 0;
	usc_status st;

	*out = NULL;
	usc__results_path(ds, sizeof ds, "%s/%s", g, name);
	st = usc__h5_dataset_open(f, ds, &d, err);
	if (st == USC_OK)
		st = usc__h5_dataset_shape(d, 1, &rank, &dim, err);
	if (st == USC_OK)
		st = usc__h5_dataset_type(d, &t, err);
	if (st == USC_OK &&
	    (rank != 1 || t.cls != cls || (*size && t.size != *size) ||
	     t.big_endian || t.size == 0 || (*n != UINT64_MAX && (uint64_t)dim != *n)))
		st = usc__fail(err, USC_EPARSE,
			       "%s:%s: not the signature table's column (a "
			       "one-dimensional dataset of %s, one row per "
			       "explanation)",
			       path, ds,
			       cls == USC__H5_OTHER ? "strings" : "numbers");
	if (st == USC_OK) {
		*size = t.size;
		*n = (uint64_t)dim;
		*out = usc__malloc((size_t)dim * t.size + 1);
		if (!*out)
			st = usc__fail(err, USC_ENOMEM, "out of memory");
	}
	if (st == USC_OK && dim)
		st = usc__h5_dataset_read_raw(d, *out, (size_t)dim * t.size,
					      err);
	usc__h5_dataset_close(d);
	if (st != USC_OK) {
		usc__free(*out);
		*out = NULL;
	}
	return st;
}

/* String k of a fixed-width column: at most width bytes, NUL-padded. */
static void cell_text(usc__html *h, const char *col, size_t width, uint64_t k)
{
	const char *s = col + k * width;
	const char *z = memchr(s, 0, width);

	usc__html_printf(h, "<td>");
	usc__html_textn(h, s, z ? (size_t)(z - s) : width);
	usc__html_printf(h, "</td>");
}

static void attr_line(usc__html *h, usc__h5_file *f, const char *obj,
		      const char *name, const char *label)
{
	char *v = NULL;

	if (usc__h5_attr_get_string(f, obj, name, &v, NULL) == USC_OK &&
	    v[0]) {
		usc__html_printf(h, "<p class=\"meta\">%s: <b data-k=\"%s\">",
				 label, name);
		usc__html_text(h, v);
		usc__html_printf(h, "</b></p>");
	}
	usc__free(v);
}

usc_status usc__report_signatures(usc__html *h, usc_results_reader *r,
				  const char *kernel, usc_error *err)
{
	usc__h5_file *f = usc__results_reader_file(r);
	const char *path = usc__h5_file_path(f);
	char kg[USC__RESULTS_PATH_SIZE], g[USC__RESULTS_PATH_SIZE];
	void *col[7] = {NULL};
	size_t width[7] = {0, 0, 0, 8, 8, 8, 1};
	static const char *const names[7] = {
		"op",	      "mutation",		"detail",     "reproduced",
		"differing_reproduced", "median_ulps", "tied_best"};
	static const usc__h5_class cls[7] = {
		USC__H5_OTHER,	 USC__H5_OTHER,	  USC__H5_OTHER, USC__H5_INTEGER,
		USC__H5_INTEGER, USC__H5_FLOAT, USC__H5_INTEGER};
	uint64_t n = UINT64_MAX, elements = 0, differing = 0;
	bool exists = false;
	char *verdict = NULL;
	usc_status st;

	usc__results_path(kg, sizeof kg, "/kernels/%s", kernel);
	usc__results_path(g, sizeof g, "%s/signatures", kg);
	st = usc__h5_exists(f, g, &exists, NULL, err);
	if (st != USC_OK || !exists)
		return st;
	for (size_t c = 0; st == USC_OK && c < 7; c++)
		st = read_column(f, path, g, names[c], cls[c], &width[c], &n,
				 &col[c], err);
	if (st == USC_OK)
		st = usc__h5_attr_get_string(f, g, "verdict", &verdict, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "elements", &elements, err);
	if (st == USC_OK)
		st = usc__h5_attr_get_uint(f, g, "differing", &differing, err);
	if (st != USC_OK)
		goto done;
	usc__html_printf(h, "<h3>defect signatures</h3><p class=\"meta\">"
			    "search verdict <b data-k=\"signature_verdict\">");
	usc__html_text(h, verdict);
	usc__html_printf(h, "</b>: %llu of %llu elements differ from the "
			    "reference</p>",
			 (unsigned long long)differing,
			 (unsigned long long)elements);
	attr_line(h, f, kg, "signature", "best explanation");
	attr_line(h, f, kg, "culprit_op", "culprit op");
	usc__html_printf(h, "<table class=\"signatures sortable\"><thead><tr>"
			    "<th>rank</th><th>op</th><th>mutation</th>"
			    "<th>detail</th><th>reproduced</th><th>of them "
			    "differing</th><th>median ulps of the rest</th>"
			    "<th>tied best</th></tr></thead><tbody>");
	for (uint64_t k = 0; k < n && k < SIG_ROWS; k++) {
		uint64_t rep, dif;
		double med;

		memcpy(&rep, (char *)col[3] + 8 * k, 8);
		memcpy(&dif, (char *)col[4] + 8 * k, 8);
		memcpy(&med, (char *)col[5] + 8 * k, 8);
		usc__html_printf(h, "<tr data-rank=\"%llu\"><td>%llu</td>",
				 (unsigned long long)k,
				 (unsigned long long)k + 1);
		for (size_t c = 0; c < 3; c++)
			cell_text(h, col[c], width[c], k);
		usc__html_printf(h, "<td data-k=\"reproduced\" data-v=\"%llu\">"
				    "%llu</td><td data-k=\"differing_reproduced"
				    "\" data-v=\"%llu\">%llu</td><td data-k=\""
				    "median_ulps\" data-v=\"",
				 (unsigned long long)rep,
				 (unsigned long long)rep,
				 (unsigned long long)dif,
				 (unsigned long long)dif);
		usc__html_num(h, med);
		usc__html_printf(h, "\">");
		usc__html_num_short(h, med);
		usc__html_printf(h, "</td><td>%s</td></tr>",
				 ((unsigned char *)col[6])[k] ? "yes" : "");
	}
	usc__html_printf(h, "</tbody></table>");
	if (n > SIG_ROWS)
		usc__html_printf(h, "<p class=\"note\">%llu more rows: "
				    "ulpscope signature --json lists them.</p>",
				 (unsigned long long)(n - SIG_ROWS));
done:
	for (size_t c = 0; c < 7; c++)
		usc__free(col[c]);
	usc__free(verdict);
	return st;
}
