/*
 * Oracle throughput on catalogue kernels (issue "oracle", Performance).
 *
 * Each kernel of kernels/ is enlarged to about N elements by rewriting the
 * batch dimension of its shapes in the HLO text (every shape of the kernels
 * below is generic in that dimension), then evaluated four ways in the same
 * run, on the same inputs:
 *
 *   naive   every op of the same parsed module evaluated with MPFR at 256
 *           bits, element by element, by a small interpreter written here
 *           (the Herbgrind-style baseline the issue asks for; it rounds
 *           nothing, certifies nothing and ignores special values);
 *   oracle  usc_eval with USC_DOMAIN_ORACLE at 128 bits;
 *   tier    usc_eval with USC_DOMAIN_TIER (f64 with error radii);
 *   f64     usc_eval with USC_DOMAIN_F64 on the same kernel: every float
 *           value a double, every op the native double operation or libm
 *           call, nothing rounded to the declared types, nothing certified
 *           ("plain f64 evaluation by the same evaluator");
 *   check   usc_check_run end to end (files read, reference, oracle at
 *           rising precision, ULP errors, summary), with the reference
 *           output as the device output.
 *
 * Prints elements/s of each and the ratios naive/oracle and naive/tier
 * (speed-up, goal >= 100) and oracle/f64, tier/f64 (slow-down, goal <= 3).
 * The machines are shared and noisy, so only ratios mean anything; each
 * time is in CPU time of the one thread that runs everything.  Every
 * repetition runs each column once, back to back; the rates are the best
 * of REPS, the ratios the median over the repetitions of that
 * repetition's ratio (runs made under the same load compared).  --tier-only skips the oracle and the check
 * (their columns print 0), for large N and for profiling the tier.
 *
 * Usage: bench_oracle [--quick] [--tier-only] [--n N] [--reps R] [KERNEL...]
 * The kernels directory is $USC_KERNELS_DIR, else the source tree's.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpfr.h>

#include "ulpscope/check.h"
#include "ulpscope/eval.h"
#include "ulpscope/hlo.h"
#include "ulpscope/tensor.h"

#include "bench_kernels.h"


#define NAIVE_PREC 256
#define ORACLE_PREC 128

/* ------------------------------------------------- the naive baseline */

typedef struct nval {
	size_t n;
	size_t rank;
	int64_t dims[8];
	mpfr_t *v;
} nval;

static nval *nval_new(const usc_hlo_shape *s)
{
	nval *r = calloc(1, sizeof *r);

	r->rank = s->rank;
	r->n = 1;
	for (size_t i = 0; i < s->rank; i++) {
		r->dims[i] = s->dims[i];
		r->n *= (size_t)s->dims[i];
	}
	r->v = malloc(r->n * sizeof *r->v);
	for (size_t i = 0; i < r->n; i++)
		mpfr_init2(r->v[i], NAIVE_PREC);
	return r;
}

static void nval_free(nval *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		mpfr_clear(r->v[i]);
	free(r->v);
	free(r);
}

/* Flat index to multi-index and back, row-major. */
static void unflatten(const nval *r, size_t flat, int64_t *idx)
{
	for (size_t d = r->rank; d-- > 0;) {
		idx[d] = (int64_t)(flat % (size_t)r->dims[d]);
		flat /= (size_t)r->dims[d];
	}
}

static size_t flatten(const nval *r, const int64_t *idx)
{
	size_t f = 0;

	for (size_t d = 0; d < r->rank; d++)
		f = f * (size_t)r->dims[d] + (size_t)idx[d];
	return f;
}

static usc_hlo_opcode reducer(const usc_hlo_instr *in)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, "to_apply");

	return a->comps[0]->root->opcode;
}

static void combine(usc_hlo_opcode op, mpfr_t acc, mpfr_t x)
{
	if (op == USC_HLO_OP_ADD)
		mpfr_add(acc, acc, x, MPFR_RNDN);
	else
		mpfr_max(acc, acc, x, MPFR_RNDN);
}

static nval *naive_comp(const usc_hlo_computation *c, nval **args);

static nval *naive_instr(const usc_hlo_instr *in, nval **vals, nval **args)
{
	nval *r, *a = NULL, *b = NULL;
	int64_t idx[8], sub[8];

	if (in->opcode == USC_HLO_OP_PARAMETER) {
		nval *p = args[in->parameter_number];

		r = nval_new(&in->shape);
		for (size_t i = 0; i < r->n; i++)
			mpfr_set(r->v[i], p->v[i], MPFR_RNDN);
		return r;
	}
	if (in->opcode == USC_HLO_OP_FUSION) {
		nval *fa[16];

		for (size_t i = 0; i < in->operand_count; i++)
			fa[i] = vals[in->operands[i]->index];
		return naive_comp(in->called[0], fa);
	}
	r = nval_new(&in->shape);
	if (in->operand_count > 0)
		a = vals[in->operands[0]->index];
	if (in->operand_count > 1)
		b = vals[in->operands[1]->index];
	switch (in->opcode) {
	case USC_HLO_OP_CONSTANT:
		for (size_t i = 0; i < r->n; i++)
			mpfr_set_str(r->v[i], in->literal->elems[i].text, 10,
				     MPFR_RNDN);
		break;
	case USC_HLO_OP_BROADCAST: {
		const usc_hlo_attr *d = usc_hlo_instr_attr(in, "dimensions");

		for (size_t i = 0; i < r->n; i++) {
			unflatten(r, i, idx);
			for (size_t k = 0; k < a->rank; k++)
				sub[k] = idx[d->ints[k]];
			mpfr_set(r->v[i], a->v[flatten(a, sub)], MPFR_RNDN);
		}
		break;
	}
	case USC_HLO_OP_CONVERT:
		for (size_t i = 0; i < r->n; i++)
			mpfr_set(r->v[i], a->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_NEGATE:
		for (size_t i = 0; i < r->n; i++)
			mpfr_neg(r->v[i], a->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_EXPONENTIAL:
		for (size_t i = 0; i < r->n; i++)
			mpfr_exp(r->v[i], a->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_TANH:
		for (size_t i = 0; i < r->n; i++)
			mpfr_tanh(r->v[i], a->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_RSQRT:
		for (size_t i = 0; i < r->n; i++)
			mpfr_rec_sqrt(r->v[i], a->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_ADD:
		for (size_t i = 0; i < r->n; i++)
			mpfr_add(r->v[i], a->v[i], b->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_SUBTRACT:
		for (size_t i = 0; i < r->n; i++)
			mpfr_sub(r->v[i], a->v[i], b->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_MULTIPLY:
		for (size_t i = 0; i < r->n; i++)
			mpfr_mul(r->v[i], a->v[i], b->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_DIVIDE:
		for (size_t i = 0; i < r->n; i++)
			mpfr_div(r->v[i], a->v[i], b->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_MAXIMUM:
		for (size_t i = 0; i < r->n; i++)
			mpfr_max(r->v[i], a->v[i], b->v[i], MPFR_RNDN);
		break;
	case USC_HLO_OP_REDUCE: {
		/* Sequential, row-major over the reduced dims. */
		const usc_hlo_attr *d = usc_hlo_instr_attr(in, "dimensions");
		usc_hlo_opcode op = reducer(in);
		uint8_t red[8] = {0};

		for (size_t k = 0; k < d->count; k++)
			red[d->ints[k]] = 1;
		for (size_t i = 0; i < r->n; i++)
			mpfr_set(r->v[i], b->v[0], MPFR_RNDN);
		for (size_t j = 0; j < a->n; j++) {
			size_t o = 0;

			unflatten(a, j, idx);
			for (size_t k = 0; k < a->rank; k++)
				if (!red[k])
					o = o * (size_t)a->dims[k] +
					    (size_t)idx[k];
			combine(op, r->v[o], a->v[j]);
		}
		break;
	}
	case USC_HLO_OP_REDUCE_WINDOW: {
		/* Windows without padding or dilation, as XLA:CPU writes them. */
		const usc_hlo_attr *w = usc_hlo_instr_attr(in, "window");
		usc_hlo_opcode op = reducer(in);

		for (size_t i = 0; i < r->n; i++) {
			size_t cnt = 1;

			unflatten(r, i, idx);
			mpfr_set(r->v[i], b->v[0], MPFR_RNDN);
			for (size_t k = 0; k < r->rank; k++)
				cnt *= (size_t)w->window[k].size;
			for (size_t j = 0; j < cnt; j++) {
				size_t q = j;

				for (size_t k = r->rank; k-- > 0;) {
					int64_t s = w->window[k].size;

					sub[k] = idx[k] * w->window[k].stride +
						 (int64_t)(q % (size_t)s);
					q /= (size_t)s;
				}
				combine(op, r->v[i], a->v[flatten(a, sub)]);
			}
		}
		break;
	}
	default:
		fprintf(stderr, "bench_oracle: naive: op %s not supported\n",
			usc_hlo_opcode_name(in->opcode));
		exit(1);
	}
	return r;
}

static nval *naive_comp(const usc_hlo_computation *c, nval **args)
{
	nval **vals = calloc(c->instr_count, sizeof *vals), *root;

	for (size_t i = 0; i < c->instr_count; i++)
		vals[i] = naive_instr(c->instrs[i], vals, args);
	root = vals[c->root->index];
	for (size_t i = 0; i < c->instr_count; i++)
		if (vals[i] != root)
			nval_free(vals[i]);
	free(vals);
	return root;
}

static nval *naive_run(const usc_hlo_module *m, usc_tensor **in)
{
	const usc_hlo_computation *e = m->entry;
	nval *args[16], *r;

	for (size_t i = 0; i < e->param_count; i++) {
		args[i] = nval_new(&e->params[i].shape);
		for (size_t j = 0; j < args[i]->n; j++) {
			double v;

			usc_tensor_get_double(in[i], j, &v);
			mpfr_set_d(args[i]->v[j], v, MPFR_RNDN);
		}
	}
	r = naive_comp(e, args);
	for (size_t i = 0; i < e->param_count; i++)
		nval_free(args[i]);
	return r;
}

/* ------------------------------------------------------- the evaluator */

static usc_eval *make_eval(const usc_hlo_module *m, usc_eval_domain d,
			   usc_tensor **in)
{
	usc_eval_options o = usc_eval_options_default();
	usc_eval *ev;
	usc_error err;

	o.domain = d;
	o.oracle_precision = ORACLE_PREC;
	if (usc_eval_create(m, &o, &ev, &err) != USC_OK)
		bench_die("eval create", &err);
	for (size_t i = 0; i < m->entry->param_count; i++)
		if (usc_eval_bind(ev, i, in[i], &err) != USC_OK)
			bench_die("bind", &err);
	return ev;
}

#define MAX_REPS BENCH_MAX_REPS

static double time_eval(usc_eval *ev, int reps)
{
	double best = 1e300;

	for (int r = 0; r < reps; r++) {
		double t = bench_time_eval(ev);

		if (t < best)
			best = t;
	}
	return best;
}

/* ---------------------------------------------------------- the check */

static double time_check(const char *text, usc_tensor **in, size_t nin,
			 const usc_tensor *device, int reps)
{
	usc_check_request req = usc_check_request_default();
	usc_check_report *rep;
	usc_error err;
	double best = 1e300;
	bench_files cf;

	bench_files_write(&cf, text, in, nin, device);
	req.hlo_path = cf.hlo;
	req.input_count = nin;
	req.inputs = cf.inputs;
	req.device_count = 1;
	req.devices = cf.devices;
	for (int r = 0; r < reps; r++) {
		double t = bench_now();

		if (usc_check_run(&req, &rep, &err) != USC_OK)
			bench_die("check", &err);
		t = bench_now() - t;
		usc_check_report_destroy(rep);
		if (t < best)
			best = t;
	}
	bench_files_remove(&cf);
	return best;
}

/* --------------------------------------------------------------- main */

static double gelu_oracle_rate; /* set by run_kernel, elements/s */
static double gelu_f64_rate, gelu_tier_rate;
static int tier_only; /* --tier-only: no oracle, no check */

static void run_kernel(const bench_kernel *k, long n, int reps)
{
	long r = n / k->rowlen > 0 ? n / k->rowlen : 1;
	char *text = bench_scaled_text(k, r);
	usc_hlo_file *f = bench_parse(text, k->name);
	usc_hlo_module *m = usc_hlo_file_module(f, 0);
	size_t np = m->entry->param_count;
	usc_tensor **in = bench_make_inputs(m, 0x9e3779b97f4a7c15u);
	usc_eval *ev_o = NULL, *ev_r, *ev_64, *ev_t;
	const usc_tensor *out_t, *out_r;
	double t_naive = 1e300, t_o = 0, t_64, t_t, t_chk = 0, maxrel = 0;
	double r_nt[MAX_REPS], r_t64[MAX_REPS], r_no[MAX_REPS], r_o64[MAX_REPS];
	int nr = 0;
	uint64_t elems;
	nval *nv = NULL;
	usc_error err;

	if (!tier_only)
		ev_o = make_eval(m, USC_DOMAIN_ORACLE, in);
	ev_r = make_eval(m, USC_DOMAIN_REFERENCE, in);
	ev_64 = make_eval(m, USC_DOMAIN_F64, in);
	ev_t = make_eval(m, USC_DOMAIN_TIER, in);
	/*
	 * Each repetition times every column back to back, so that the
	 * per-repetition ratios compare runs made under the same load; the
	 * rates are the best times, the ratios the medians of the
	 * repetitions' ratios.
	 */
	t_64 = t_t = 1e300;
	for (int i = 0; i < reps && i < MAX_REPS; i++) {
		double a = time_eval(ev_64, 1), b, c = 0, t;

		if (!tier_only)
			c = time_eval(ev_o, 1);
		b = time_eval(ev_t, 1);
		t = bench_now();
		nval_free(nv);
		nv = naive_run(m, in);
		t = bench_now() - t;
		t_64 = fmin(t_64, a);
		t_t = fmin(t_t, b);
		t_naive = fmin(t_naive, t);
		if (!tier_only && (t_o == 0 || c < t_o))
			t_o = c;
		r_nt[i] = t / b;
		r_t64[i] = b / a;
		r_no[i] = tier_only ? 0 : t / c;
		r_o64[i] = tier_only ? 0 : c / a;
		nr = i + 1;
	}
	time_eval(ev_r, 1);
	usc_eval_output(ev_t, 0, &out_t, &err);
	usc_eval_output(ev_r, 0, &out_r, &err);
	elems = usc_tensor_count(out_t);
	/* Sanity: the naive values and the tier's agree to the output type. */
	for (uint64_t i = 0; i < elems; i++) {
		double o, v = mpfr_get_d(nv->v[i], MPFR_RNDN), d;

		usc_tensor_get_double(out_t, i, &o);
		d = fabs(o - v) / fmax(fabs(v), 1e-30);
		if (d > maxrel && !(fabs(v) < 1e-30 && fabs(o) < 1e-30))
			maxrel = d;
	}
	if (!tier_only)
		t_chk = time_check(text, in, np, out_r, reps);

#define RATE(t) ((t) > 0 ? (double)elems / (t) : 0.0)
	printf("%-16s %9llu %11.0f %11.0f %11.0f %11.0f %11.0f %9.1f %9.1f "
	       "%9.1f %9.2f %8.1e\n",
	       k->name, (unsigned long long)elems, RATE(t_naive), RATE(t_o),
	       RATE(t_t), RATE(t_64), RATE(t_chk), bench_median(r_no, nr),
	       bench_median(r_o64, nr), bench_median(r_nt, nr), bench_median(r_t64, nr),
	       maxrel);
#undef RATE
	fflush(stdout);
	if (!strcmp(k->name, "gelu_tanh_f32")) {
		gelu_oracle_rate = t_o > 0 ? (double)elems / t_o : 0;
		gelu_f64_rate = (double)elems / t_64;
		gelu_tier_rate = (double)elems / t_t;
	}

	nval_free(nv);
	usc_eval_destroy(ev_o);
	usc_eval_destroy(ev_r);
	usc_eval_destroy(ev_64);
	usc_eval_destroy(ev_t);
	bench_free_inputs(in, np);
	usc_hlo_file_destroy(f);
	free(text);
}

/*
 * A native C double loop of gelu_tanh (the same ops in the same order), to
 * put the f64 stand-in in perspective: what "f64 evaluation" costs when
 * nothing interprets it.
 */
static volatile double sink;

static void run_native_gelu(long n, int reps)
{
	double *x = malloc((size_t)n * sizeof *x), *y;
	double best = 1e300, t;
	uint64_t s = 0x9e3779b97f4a7c15u;

	y = malloc((size_t)n * sizeof *y);
	if (!x || !y)
		exit(1);
	for (long i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		x[i] = (float)(((double)(s >> 11) * 0x1p-53) * 6.0 - 3.0);
	}
	for (int r = 0; r < reps * 10; r++) {
		t = bench_now();
		for (long i = 0; i < n; i++) {
			double v = x[i], p = v * v * v * 0.044715;

			y[i] = v * ((tanh((v + p) * 0.797884583) + 1.0) * 0.5);
		}
		t = bench_now() - t;
		sink = y[n / 2];
		if (t < best)
			best = t;
	}
	printf("%-16s %9ld native C double loop: %.3g elements/s",
	       "gelu_tanh_f32", n, (double)n / best);
	if (gelu_oracle_rate > 0)
		printf(", oracle / native = %.0f",
		       (double)n / best / gelu_oracle_rate);
	if (gelu_tier_rate > 0)
		printf(", tier / native = %.1f, f64 / native = %.1f "
		       "(slow-downs)", (double)n / best / gelu_tier_rate,
		       (double)n / best / gelu_f64_rate);
	printf("\n");
	free(x);
	free(y);
}

int main(int argc, char **argv)
{
	long n = 1L << 16;
	int reps = 3, nsel = 0;
	const char *sel[16];

	bench_name = "bench_oracle";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tier-only")) {
			tier_only = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			n = 1L << 11;
			reps = 1;
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (nsel < 16) {
			sel[nsel++] = argv[i];
		}
	}
	printf("oracle throughput, ~%ld elements per kernel, thread CPU time; "
	       "rates: best of %d, ratios: median of the repetitions' ratios "
	       "(elements/s; ratios are what count)\n", n, reps);
	printf("naive: MPFR %d bits, every op, written in the bench; "
	       "oracle: USC_DOMAIN_ORACLE %d bits;\n", NAIVE_PREC, ORACLE_PREC);
	printf("tier: USC_DOMAIN_TIER; f64: USC_DOMAIN_F64 (plain doubles, "
	       "libm); check: usc_check_run end to end\n\n");
	printf("%-16s %9s %11s %11s %11s %11s %11s %9s %9s %9s %9s %8s\n",
	       "kernel", "elements", "naive/s", "oracle/s", "tier/s", "f64/s",
	       "check/s", "naive/or", "or/f64", "naive/tr", "tier/f64",
	       "agree");
	for (size_t i = 0; i < bench_kernel_count; i++)
		if (bench_selected(&bench_kernels[i], sel, nsel))
			run_kernel(&bench_kernels[i], n, reps);
	run_native_gelu(n, reps);
	printf("\nnaive/or: oracle speed-up over the naive baseline "
	       "(issue goal >= 100)\n");
	printf("or/f64:   oracle slow-down against f64 evaluation "
	       "(issue goal <= 3)\n");
	printf("naive/tr, tier/f64: the same for the f64 tier, which "
	       "decides most elements before the oracle runs\n");
	printf("agree:    largest relative gap between the naive values and "
	       "the tier's outputs\n");
	return 0;
}
