/*
 * Where an instruction came from in the traced program.  Older dumps
 * write metadata={source_file="f.py" source_line=12}; newer ones write
 * stack_frame_id=N and three tables at the top of the module:
 *   StackFrames    N {file_location_id=L parent_frame_id=P}
 *   FileLocations  L {file_name_id=F function_name_id=G line=12 ...}
 *   FileNames      F "f.py"
 */
#include <stdlib.h>
#include <string.h>

#include "ulpscope/hlo.h"

static const char *table_value(const usc_hlo_module *m, const char *table,
			       int64_t id)
{
	for (size_t i = 0; m && i < m->table_count; i++) {
		if (!m->tables[i].name || strcmp(m->tables[i].name, table) != 0)
			continue;
		for (size_t e = 0; e < m->tables[i].count; e++)
			if (m->tables[i].entries[e].id == id)
				return m->tables[i].entries[e].value;
	}
	return NULL;
}

/* The integer after "key=" in a table value "{a=1 key=2 ...}", or -1. */
static int64_t field_of(const char *v, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = v; p && *p; p++)
		if ((p == v || p[-1] == '{' || p[-1] == ' ' || p[-1] == ',') &&
		    strncmp(p, key, n) == 0 && p[n] == '=')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

bool usc_hlo_instr_source(const usc_hlo_module *m, const usc_hlo_instr *in,
			  const char **file, size_t *file_len, int64_t *line)
{
	const usc_hlo_metadata *md = in ? in->metadata : NULL;
	const char *f = NULL, *frame, *loc;
	int64_t sf = -1, ln = -1;
	size_t len;

	*file = NULL;
	*file_len = 0;
	*line = -1;
	if (!md)
		return false;
	if (md->source_file) {
		f = md->source_file;
		ln = md->source_line;
	} else {
		for (size_t i = 0; i < md->other_count; i++)
			if (strcmp(md->others[i].key, "stack_frame_id") == 0)
				sf = strtoll(md->others[i].value, NULL, 10);
		frame = sf >= 0 ? table_value(m, "StackFrames", sf) : NULL;
		loc = frame ? table_value(m, "FileLocations",
					  field_of(frame, "file_location_id"))
			    : NULL;
		f = loc ? table_value(m, "FileNames",
				      field_of(loc, "file_name_id"))
			: NULL;
		ln = loc ? field_of(loc, "line") : -1;
	}
	if (!f)
		return false;
	len = strlen(f);
	/* FileNames values are written with their quotes. */
	if (len >= 2 && f[0] == '"' && f[len - 1] == '"') {
		f++;
		len -= 2;
	}
	*file = f;
	*file_len = len;
	*line = ln;
	return true;
}
