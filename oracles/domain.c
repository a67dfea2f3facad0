/*
 * What every numeric domain shares (domain.h): the message of an op it
 * does not implement.
 */
#include "internal.h"

#include "domain.h"

usc_status usc__dom_unsupported(const char *domain, const usc__dom_op *op,
				usc_dtype t, usc_error *err)
{
	const char *name = usc_hlo_opcode_name(op->op);
	const char *sep = domain ? ": " : "";

	if (!domain)
		domain = "";
	if (op->instr)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s%sunsupported op %s on %s at %u:%u "
				 "(instruction '%s')",
				 domain, sep, name, usc_dtype_name(t),
				 op->instr->loc.line, op->instr->loc.column,
				 op->instr->name);
	return usc__fail(err, USC_EUNSUPPORTED, "%s%sunsupported op %s on %s",
			 domain, sep, name, usc_dtype_name(t));
}
