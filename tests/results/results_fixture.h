/*
 * The inputs the result-file tests write: two kernels, three outputs
 * (bf16 [2,3,4], f8e4m3fn scalar, f32 [8,16,10]), every value given by a
 * formula that tests/results/read_with_h5py.py repeats in Python.  The
 * f32 output is large enough (1280 elements) to be chunked and
 * compressed; the others are contiguous.
 */
#ifndef USC_RESULTS_FIXTURE_H
#define USC_RESULTS_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulpscope/hlo.h"
#include "ulpscope/results.h"
#include "ulpscope/tensor.h"

static const char fixture_hlo[] =
	"HloModule fixture\n"
	"\n"
	"ENTRY main {\n"
	"  p0 = bf16[2,3,4]{2,1,0} parameter(0)\n"
	"  p1 = bf16[2,3,4]{2,1,0} parameter(1)\n"
	"  add.1 = bf16[2,3,4]{2,1,0} add(p0, p1), metadata={op_type=\"add\" "
	"op_name=\"jit(f)/add\" source_file=\"model.py\" source_line=42}\n"
	"  c = f8e4m3fn[] constant(1)\n"
	"  ROOT t = (bf16[2,3,4]{2,1,0}, f8e4m3fn[]) tuple(add.1, c)\n"
	"}\n";

#define FIXTURE_OUTPUTS 3

typedef struct fixture {
	usc_hlo_file *hlo;
	usc_tensor *device[FIXTURE_OUTPUTS];
	usc_tensor *reference[FIXTURE_OUTPUTS];
	double *mid[FIXTURE_OUTPUTS], *rad[FIXTURE_OUTPUTS];
	double *eo[FIXTURE_OUTPUTS], *er[FIXTURE_OUTPUTS];
	uint8_t *und[FIXTURE_OUTPUTS];
	/* Output 0 only is classified: its envelope and classes. */
	double *env_lo, *env_hi;
	uint8_t *env_flags, *cls;
	usc_results_output out[FIXTURE_OUTPUTS];
	usc_results_kernel k1, k2;
} fixture;

static const usc_dtype fixture_types[FIXTURE_OUTPUTS] = {USC_BF16,
							 USC_F8E4M3FN, USC_F32};
static const size_t fixture_ranks[FIXTURE_OUTPUTS] = {3, 0, 3};
static const int64_t fixture_dims[FIXTURE_OUTPUTS][3] = {
	{2, 3, 4}, {0, 0, 0}, {8, 16, 10}};

/* The class of element i of output 0: every class, in turn. */
static inline uint8_t fixture_class(uint64_t i)
{
	return (uint8_t)(i % 9);
}

/* The encodings of element i of output o (device, reference). */
static inline uint64_t fixture_device_bits(int o, uint64_t i)
{
	switch (o) {
	case 0:
		return 0x3f80 + i; /* bf16 1.0 upwards */
	case 1:
		return 0x7f; /* f8e4m3fn NaN */
	default:
		return 0x3f800000u + i * 3;
	}
}

static inline uint64_t fixture_reference_bits(int o, uint64_t i)
{
	switch (o) {
	case 0:
		return i % 4 == 0 ? 0x3f80 + i : 0x3f80 + i + 1;
	case 1:
		return 0x7f;
	default:
		return i % 10 == 0 ? 0x3f800000u + i * 3 : 0x3f800000u + i * 3 - 1;
	}
}

/* ulp_error_oracle of element i: NaN at every 7th of output 0. */
static inline double fixture_error_oracle(int o, uint64_t i)
{
	if (o == 1)
		return NAN;
	if (o == 0)
		return i % 7 == 3 ? NAN : (double)(int)(i % 5) - 2.0 + 0.25;
	return ldexp((double)(i % 11) - 5.0, -1);
}

static inline double fixture_error_reference(int o, uint64_t i)
{
	if (o == 1)
		return 0.0;
	return o == 0 ? -(double)i : (double)(i % 3);
}

static inline void fixture_free(fixture *fx)
{
	for (int o = 0; o < FIXTURE_OUTPUTS; o++) {
		usc_tensor_destroy(fx->device[o]);
		usc_tensor_destroy(fx->reference[o]);
		free(fx->mid[o]);
		free(fx->rad[o]);
		free(fx->eo[o]);
		free(fx->er[o]);
		free(fx->und[o]);
	}
	free(fx->env_lo);
	free(fx->env_hi);
	free(fx->env_flags);
	free(fx->cls);
	usc_hlo_file_destroy(fx->hlo);
	memset(fx, 0, sizeof *fx);
}

/* Builds the fixture; 0 on success. */
static inline int fixture_build(fixture *fx)
{
	memset(fx, 0, sizeof *fx);
	if (usc_hlo_parse(fixture_hlo, sizeof fixture_hlo - 1, "fixture.hlo",
			  &fx->hlo, NULL) != USC_OK)
		return -1;
	for (int o = 0; o < FIXTURE_OUTPUTS; o++) {
		uint64_t n;

		if (usc_tensor_create(fixture_types[o], fixture_ranks[o],
				      fixture_dims[o], &fx->device[o],
				      NULL) != USC_OK ||
		    usc_tensor_create(fixture_types[o], fixture_ranks[o],
				      fixture_dims[o], &fx->reference[o],
				      NULL) != USC_OK)
			return -1;
		n = usc_tensor_count(fx->device[o]);
		fx->mid[o] = calloc(n, sizeof(double));
		fx->rad[o] = calloc(n, sizeof(double));
		fx->eo[o] = calloc(n, sizeof(double));
		fx->er[o] = calloc(n, sizeof(double));
		fx->und[o] = calloc(n, 1);
		if (!fx->mid[o] || !fx->rad[o] || !fx->eo[o] || !fx->er[o] ||
		    !fx->und[o])
			return -1;
		for (uint64_t i = 0; i < n; i++) {
			usc_tensor_set_bits(fx->device[o], i,
					    fixture_device_bits(o, i));
			usc_tensor_set_bits(fx->reference[o], i,
					    fixture_reference_bits(o, i));
			fx->mid[o][i] = o == 1 ? NAN : 1.0 + ldexp((double)i, -7);
			fx->rad[o][i] = ldexp((double)i, -60);
			fx->eo[o][i] = fixture_error_oracle(o, i);
			fx->er[o][i] = fixture_error_reference(o, i);
			fx->und[o][i] = i % 6 == 0;
		}
		fx->out[o] = (usc_results_output){
			.device = fx->device[o],
			.reference = fx->reference[o],
			.oracle_mid = fx->mid[o],
			.oracle_rad = fx->rad[o],
			.ulp_error_oracle = fx->eo[o],
			.ulp_error_reference = fx->er[o],
			.undecided = fx->und[o]};
		if (o == 0) {
			fx->env_lo = calloc(n, sizeof(double));
			fx->env_hi = calloc(n, sizeof(double));
			fx->env_flags = calloc(n, 1);
			fx->cls = calloc(n, 1);
			if (!fx->env_lo || !fx->env_hi || !fx->env_flags ||
			    !fx->cls)
				return -1;
			for (uint64_t i = 0; i < n; i++) {
				/* Every 5th allows only NaN: no finite
				 * bounds, as the writer's callers store it. */
				fx->env_lo[i] = i % 5 == 0
							? NAN
							: 1.0 + ldexp((double)i, -7);
				fx->env_hi[i] = i % 5 == 0 ? NAN
							   : fx->env_lo[i] + 0.5;
				fx->env_flags[i] = (uint8_t)(i % 5 == 0 ? 2 : 1);
				fx->cls[i] = fixture_class(i);
			}
			fx->out[o].envelope_lo = fx->env_lo;
			fx->out[o].envelope_hi = fx->env_hi;
			fx->out[o].envelope_flags = fx->env_flags;
			fx->out[o].cls = fx->cls;
		}
	}
	fx->k1 = (usc_results_kernel){
		.name = "fusion.1",
		.hlo_file = "dumps/module_0001.fusion.1.txt",
		.hlo_text = fixture_hlo,
		.fusion = "fusion.1",
		.computation = usc_hlo_file_module(fx->hlo, 0)->entry,
		.oracle_precision_max = 320,
		.verdict = NULL,
		.output_count = 2,
		.outputs = fx->out};
	fx->k2 = (usc_results_kernel){
		.name = "k2",
		.hlo_file = "k2.hlo",
		.hlo_text = NULL, /* "": no HLO, so an empty ops table */
		.fusion = NULL,
		.computation = NULL,
		.oracle_precision_max = 64,
		.verdict = "legit",
		.output_count = 1,
		.outputs = &fx->out[2]};
	return 0;
}

/* Writes both kernels to path; the status of the first failure. */
static inline usc_status fixture_write(fixture *fx, const char *path,
				       usc_error *err)
{
	usc_results *w = NULL;
	usc_status st = usc_results_create(path, &w, err);

	if (st == USC_OK)
		st = usc_results_add_kernel(w, &fx->k1, err);
	if (st == USC_OK)
		st = usc_results_add_kernel(w, &fx->k2, err);
	if (st != USC_OK) {
		usc_results_abort(w);
		return st;
	}
	return usc_results_close(w, err);
}

/* A fresh scratch folder under $TMPDIR; "" on failure. */
static inline void fixture_scratch(char *dst, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dst, size, "%s/usc_results_XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dst))
		dst[0] = '\0';
}

#endif /* USC_RESULTS_FIXTURE_H */
