/*
 * Internal: what attribution shares with explain (src/analyze/).
 */
#ifndef USC_ANALYZE_ATTRIBUTION_INTERNAL_H
#define USC_ANALYZE_ATTRIBUTION_INTERNAL_H

#include <stdbool.h>

#include "ulpscope/hlo.h"

/*
 * Whether the strict reference rounds in's float result to its type: the
 * ops attribution gives a contribution (arithmetic, functions, narrowing
 * converts, dots); not parameters, constants, exact ops (negate, abs,
 * max, select, compare, floor...), bitcasts or widening converts.
 */
bool usc__instr_rounds(const usc_hlo_instr *in);

#endif /* USC_ANALYZE_ATTRIBUTION_INTERNAL_H */
