/*
 * HloSnapshot: what --xla_dump_hlo_snapshots writes for each execution of
 * a module (xla/service/hlo.proto): the module as an HloProto, the
 * argument literals, the result literal and the platform's name.  The
 * literals are converted when the file is read; the module when asked
 * (src/hlo/module_pb.c), since a caller that only wants values should not
 * pay for, or fail on, the module.
 */
#include "internal.h"

#include <string.h>

#include "hlo/module_pb.h"
#include "tensor/literal_internal.h"

struct usc_snapshot {
	char *name;              /* the file, for messages */
	ProtobufCMessage *msg;   /* the whole Xla__HloSnapshot */
	size_t argument_count;
	usc_literal *arguments;
	usc_literal *result;     /* NULL when absent */
	char *platform;
};

void usc_snapshot_destroy(usc_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->argument_count; i++)
		usc__literal_clear(&s->arguments[i]);
	usc__free(s->arguments);
	usc_literal_destroy(s->result);
	usc__pb_free(s->msg);
	usc__free(s->platform);
	usc__free(s->name);
	usc__free(s);
}

static usc_status snap_fill(usc_snapshot *s, usc_error *err)
{
	const Xla__HloSnapshot *m = (const Xla__HloSnapshot *)s->msg;
	s->platform = usc__strdup(m->execution_platform
					  ? m->execution_platform
					  : "");
	if (!s->platform)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", s->name);
	size_t n = m->n_arguments;
	s->arguments = usc__calloc(n ? n : 1, sizeof *s->arguments);
	if (!s->arguments)
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", s->name);
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "HloSnapshot.arguments[%zu]", i);
		usc_status st = usc__literal_from_pb(m->arguments[i], s->name,
						     path, &s->arguments[i],
						     err);
		if (st != USC_OK)
			return st;
		s->argument_count = i + 1;
	}
	if (m->result) {
		s->result = usc__calloc(1, sizeof *s->result);
		if (!s->result)
			return usc__fail(err, USC_ENOMEM, "%s: out of memory",
					 s->name);
		usc_status st = usc__literal_from_pb(m->result, s->name,
						     "HloSnapshot.result",
						     s->result, err);
		if (st != USC_OK) {
			usc__free(s->result);
			s->result = NULL;
			return st;
		}
	}
	return USC_OK;
}

usc_status usc_snapshot_read_mem(const void *data, size_t size,
				 const char *name, usc_snapshot **out,
				 usc_error *err)
{
	*out = NULL;
	if (!name)
		name = "<input>";
	usc_snapshot *s = usc__calloc(1, sizeof *s);
	if (!s || !(s->name = usc__strdup(name))) {
		usc__free(s);
		return usc__fail(err, USC_ENOMEM, "%s: out of memory", name);
	}
	usc_status st = usc__pb_unpack(&xla__hlo_snapshot__descriptor, data,
				       size, name, &s->msg, err);
	if (st == USC_OK)
		st = snap_fill(s, err);
	if (st != USC_OK) {
		usc_snapshot_destroy(s);
		return st;
	}
	*out = s;
	return USC_OK;
}

usc_status usc_snapshot_read(const char *path, usc_snapshot **out,
			     usc_error *err)
{
	char *data = NULL;
	size_t len = 0;
	*out = NULL;
	usc_status st = usc__read_file(path, &data, &len, err);
	if (st != USC_OK)
		return st;
	st = usc_snapshot_read_mem(data, len, path, out, err);
	usc__free(data);
	return st;
}

size_t usc_snapshot_argument_count(const usc_snapshot *s)
{
	return s->argument_count;
}

const usc_literal *usc_snapshot_argument(const usc_snapshot *s, size_t i)
{
	return i < s->argument_count ? &s->arguments[i] : NULL;
}

const usc_literal *usc_snapshot_result(const usc_snapshot *s)
{
	return s->result;
}

const char *usc_snapshot_platform(const usc_snapshot *s)
{
	return s->platform;
}

bool usc_snapshot_has_module(const usc_snapshot *s)
{
	const Xla__HloSnapshot *m = (const Xla__HloSnapshot *)s->msg;
	return m->hlo && m->hlo->hlo_module;
}

usc_status usc_snapshot_module(const usc_snapshot *s, usc_hlo_file **out,
			       usc_error *err)
{
	const Xla__HloSnapshot *m = (const Xla__HloSnapshot *)s->msg;
	*out = NULL;
	if (!m->hlo || !m->hlo->hlo_module)
		return usc__fail(err, USC_ENOTFOUND,
				 "%s: HloSnapshot.hlo.hlo_module: absent; the "
				 "snapshot carries no module", s->name);
	return usc__hlo_from_pb(m->hlo->hlo_module, s->name,
				"HloSnapshot.hlo.hlo_module", out, err);
}
