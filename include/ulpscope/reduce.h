/*
 * The module reducer of the fuzzing loop (docs/fuzzing.md, "Minimising a
 * finding"): from an HLO module, every smaller module one step away, for
 * a driver that keeps the first one whose verdict on the real compiler
 * stays the same and asks again, until no candidate keeps it.
 *
 * The steps: drop the dead code; drop one output of a root tuple;
 * replace an instruction by one of its operands or by a parameter of the
 * same shape and type (its users read that value instead, and whatever
 * only it used dies); set a float constant to 0, 1 or 2; halve one
 * dimension of a module made only of elementwise ops, scalar broadcasts
 * and iotas.  Only the entry computation changes.  Every candidate is
 * printed in the long form without metadata, passes usc_hlo_verify, and
 * is smaller than the module it came from in the order of
 * usc_reduce_size_compare.  Parameters keep their names (a driver maps
 * its inputs by name) but are renumbered from 0 in their old order.
 */
#ifndef ULPSCOPE_REDUCE_H
#define ULPSCOPE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "ulpscope/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum usc_reduce_kind {
	USC_REDUCE_DROP_DEAD,     /* instructions the root does not use */
	USC_REDUCE_DROP_OUTPUT,   /* one element of the root tuple */
	USC_REDUCE_TO_OPERAND,    /* an instruction replaced by an operand */
	USC_REDUCE_TO_PARAMETER,  /* ... by a parameter of its shape */
	USC_REDUCE_CONSTANT,      /* a float constant set to 0, 1 or 2 */
	USC_REDUCE_SHRINK         /* one dimension halved everywhere */
} usc_reduce_kind;

/* The spelling of a kind ("to-operand"). */
const char *usc_reduce_kind_name(usc_reduce_kind k);

/*
 * The size of a module, compared in this order: instructions of the
 * entry, elements of the root (outputs), elements of every entry
 * instruction, then constant elements other than 0, 1 and 2.
 */
typedef struct usc_reduce_size {
	size_t instrs;
	int64_t outputs;
	int64_t elements;
	size_t constants;
} usc_reduce_size;

/* <0, 0, >0 as a is smaller than, equal to or larger than b. */
int usc_reduce_size_compare(const usc_reduce_size *a,
			    const usc_reduce_size *b);

typedef struct usc_reduce_candidate {
	usc_reduce_kind kind;
	/*
	 * What changed, one line, its words separated by spaces: the kind
	 * and its arguments, e.g. "to-operand cbrt.5 0 p0" (instruction,
	 * operand number, operand), "to-parameter exp.3 p1", "drop-output 2",
	 * "constant constant.4 1", "shrink 1 32 16" (dimension, from, to),
	 * "drop-dead 7" (instructions dropped).
	 */
	char what[160];
	/* SHRINK: the dimension and its sizes; else -1, 0, 0. */
	int dim;
	int64_t from, to;
	usc_reduce_size size;
	char *text; /* the module; freed with usc_reduce_candidates_free */
	size_t len;
} usc_reduce_candidate;

/*
 * The size of the first module of HLO text.  A parse error fails with
 * USC_EPARSE and the parser's FILE:LINE:COLUMN message.
 */
usc_status usc_reduce_size_of(const char *text, size_t len,
			      const char *filename, usc_reduce_size *out,
			      usc_error *err);

/*
 * Every candidate one step smaller than the first module of the text,
 * in the order of the kinds above.  A module that does not parse or
 * verify fails (USC_EPARSE, USC_EINVAL) with the message that says why;
 * a module with nothing left to reduce gives 0 candidates.
 */
usc_status usc_reduce_candidates(const char *text, size_t len,
				 const char *filename,
				 usc_reduce_candidate **out, size_t *count,
				 usc_error *err);
void usc_reduce_candidates_free(usc_reduce_candidate *c, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_REDUCE_H */
