/*
 * The opcode tables, generated from USC_HLO_OPCODE_LIST so that the enum,
 * the spellings, the arities and the categories cannot drift apart.
 */
#include "internal.h"

#include <string.h>

#include "ulpscope/hlo.h"

static const char *const opcode_names[USC_HLO_OP_COUNT] = {
	[USC_HLO_OP_INVALID] = "invalid",
#define USC__HLO_OP_NAME(id, spelling, arity, cat) [USC_HLO_OP_##id] = spelling,
	USC_HLO_OPCODE_LIST(USC__HLO_OP_NAME)
#undef USC__HLO_OP_NAME
};

/* Spelling lengths, known at compile time, so lookups skip strlen. */
static const unsigned char opcode_len[USC_HLO_OP_COUNT] = {
	[USC_HLO_OP_INVALID] = 7,
#define USC__HLO_OP_LEN(id, spelling, arity, cat) \
	[USC_HLO_OP_##id] = sizeof(spelling) - 1,
	USC_HLO_OPCODE_LIST(USC__HLO_OP_LEN)
#undef USC__HLO_OP_LEN
};

static const signed char opcode_arity[USC_HLO_OP_COUNT] = {
	[USC_HLO_OP_INVALID] = 0,
#define USC__HLO_OP_ARITY(id, spelling, arity, cat) [USC_HLO_OP_##id] = arity,
	USC_HLO_OPCODE_LIST(USC__HLO_OP_ARITY)
#undef USC__HLO_OP_ARITY
};

static const unsigned char opcode_cat[USC_HLO_OP_COUNT] = {
	[USC_HLO_OP_INVALID] = USC_HLO_CAT_MISC,
#define USC__HLO_OP_CAT(id, spelling, arity, cat) \
	[USC_HLO_OP_##id] = USC_HLO_CAT_##cat,
	USC_HLO_OPCODE_LIST(USC__HLO_OP_CAT)
#undef USC__HLO_OP_CAT
};

static const char *const category_names[USC_HLO_CAT_COUNT] = {
#define USC__HLO_CAT_NAME(id, name) [USC_HLO_CAT_##id] = name,
	USC_HLO_CATEGORY_LIST(USC__HLO_CAT_NAME)
#undef USC__HLO_CAT_NAME
};

const char *usc_hlo_opcode_name(usc_hlo_opcode op)
{
	if ((unsigned)op >= USC_HLO_OP_COUNT)
		return "invalid";
	return opcode_names[op];
}

int usc_hlo_opcode_arity(usc_hlo_opcode op)
{
	if ((unsigned)op >= USC_HLO_OP_COUNT)
		return 0;
	return opcode_arity[op];
}

usc_hlo_category usc_hlo_opcode_category(usc_hlo_opcode op)
{
	if ((unsigned)op >= USC_HLO_OP_COUNT)
		return USC_HLO_CAT_MISC;
	return (usc_hlo_category)opcode_cat[op];
}

const char *usc_hlo_category_name(usc_hlo_category cat)
{
	if ((unsigned)cat >= USC_HLO_CAT_COUNT)
		return "invalid";
	return category_names[cat];
}

usc_status usc_hlo_opcode_from_name(const char *name, size_t len,
				    usc_hlo_opcode *out)
{
	/*
	 * A linear scan over ~130 short strings, with a first-character
	 * filter, costs less than the rest of an instruction's parse.
	 */
	size_t i;

	if (!name || !out)
		return USC_EINVAL;
	if (len == 0)
		return USC_ENOTFOUND;
	for (i = 1; i < USC_HLO_OP_COUNT; i++) {
		const char *s = opcode_names[i];

		if (s[0] == name[0] && opcode_len[i] == len &&
		    memcmp(s, name, len) == 0) {
			*out = (usc_hlo_opcode)i;
			return USC_OK;
		}
	}
	return USC_ENOTFOUND;
}
