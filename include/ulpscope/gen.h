/*
 * The generator of random fused kernels (docs/fuzzing.md, "Random
 * kernels"): from a seed, an HLO module of the kind a framework hands XLA
 * before optimization (elementwise chains with transcendental functions,
 * broadcasts, reductions and reduce-windows, dots accumulating in f32,
 * converts between float types, compare/select/clamp, reshapes,
 * transposes, slices, concatenates, iota masks), which XLA then fuses.
 *
 * Every module is built as IR (include/ulpscope/hlo.h) from the ops the
 * evaluator runs, with shapes and types chosen so that it passes
 * usc_hlo_verify by construction.  The same options give the same module
 * on every machine: the generator draws from its own PRNG (xoshiro256**
 * seeded through splitmix64, below), never from rand().
 */
#ifndef ULPSCOPE_GEN_H
#define ULPSCOPE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "ulpscope/dtype.h"
#include "ulpscope/status.h"
#include "ulpscope/hlo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most float types one module may draw from. */
#define USC_GEN_MAX_TYPES 8
/* The range of usc_gen_options.ops. */
#define USC_GEN_MIN_OPS 1
#define USC_GEN_MAX_OPS 200

typedef struct usc_gen_options {
	uint64_t seed;
	/* Generation steps (each adds one to a few instructions): 12. */
	size_t ops;
	/*
	 * The float types parameters and converts draw from; 0 types means
	 * the default list f32, bf16, f16, f8e4m3fn, f8e5m2.  Accepted:
	 * f32, bf16, f16, f8e4m3fn, f8e5m2 (usc_gen_type_supported).
	 */
	size_t type_count;
	usc_dtype types[USC_GEN_MAX_TYPES];
} usc_gen_options;

usc_gen_options usc_gen_options_default(void);

/* Whether t is a float type the generator can draw. */
bool usc_gen_type_supported(usc_dtype t);

/*
 * Generates the module of opts as a parsed-file object holding one module
 * (HloModule gen_<seed>): print it with usc_hlo_module_print, destroy it
 * with usc_hlo_file_destroy.  Bad options (ops out of range, an
 * unsupported type) fail with USC_EINVAL and a message naming them.
 */
usc_status usc_gen_module(const usc_gen_options *opts, usc_hlo_file **out,
			  usc_error *err);

/*
 * The same, printed as HLO text in the long form without metadata; free
 * with usc_hlo_text_free.
 */
usc_status usc_gen_text(const usc_gen_options *opts, char **text_out,
			size_t *len_out, usc_error *err);

/*
 * The generator's PRNG, public so that its stream can be tested against
 * the published algorithm: xoshiro256** (Blackman and Vigna, 2018) whose
 * four words are the first four outputs of splitmix64 started at the
 * seed.
 */
typedef struct usc_gen_rng {
	uint64_t s[4];
} usc_gen_rng;

void usc_gen_rng_seed(usc_gen_rng *r, uint64_t seed);
uint64_t usc_gen_rng_next(usc_gen_rng *r);
/* Uniform in [0, n) for n >= 1, by rejection (no modulo bias). */
uint64_t usc_gen_rng_below(usc_gen_rng *r, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_GEN_H */
