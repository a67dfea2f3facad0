/*
 * Defect signatures (docs/signatures.md): one op of the kernel mutated at
 * a time, the mutant evaluated in the reference domain, and the (op,
 * mutation) pairs ranked by how much of the device output they reproduce
 * bit for bit.
 *
 * A mutant is HLO text: the module is printed once (short form, no
 * metadata; the printer round-trips, docs/hlo.md), the mutated op's line
 * is replaced by a few lines of plain HLO that compute the defect (a
 * narrower type is a pair of converts, a directed rounding is integer
 * arithmetic on the encoding, an off-by-one read is a slice and a
 * concatenate), and the text is parsed again.  Every mutant is thus an
 * ordinary kernel the evaluator already knows, any reader can replay it
 * with "ulpscope eval", and no numeric domain had to learn about defects.
 */
#include "internal.h"
#include "analyze/case_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ulpscope/hlo_kernel.h"
#include "ulpscope/signature.h"


/* ------------------------------------------------------------ catalogue */

static const struct {
	const char *name;
	int variants;
	const char *summary;
} catalogue[] = {
#define USC__MUT_ROW(id, name, variants, summary) {name, variants, summary},
	USC_MUTATION_LIST(USC__MUT_ROW)
#undef USC__MUT_ROW
};

const char *usc_mutation_name(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].name : "invalid";
}

const char *usc_mutation_summary(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].summary : "";
}

int usc_mutation_variants(usc_mutation k)
{
	return (unsigned)k < USC_MUT_COUNT ? catalogue[k].variants : 0;
}

usc_status usc_mutation_from_name(const char *name, usc_mutation *out,
				  usc_error *err)
{
	char list[512] = "";
	size_t used = 0;

	for (int k = 0; k < USC_MUT_COUNT; k++) {
		if (strcmp(name, catalogue[k].name) == 0) {
			*out = (usc_mutation)k;
			return USC_OK;
		}
		used += (size_t)snprintf(list + used,
					 used < sizeof list ? sizeof list - used
							    : 0,
					 "%s%s", k ? " " : "",
					 catalogue[k].name);
		if (used >= sizeof list)
			used = sizeof list;
	}
	return usc__fail(err, USC_ENOTFOUND,
			 "unknown mutation '%s'; expected one of: %s", name,
			 list);
}

const char *usc_signature_verdict_name(usc_signature_verdict v)
{
	switch (v) {
	case USC_SIGNATURE_NO_DIFFERENCE:
		return "no-difference";
	case USC_SIGNATURE_EXPLAINED:
		return "explained";
	case USC_SIGNATURE_UNEXPLAINED:
		return "unexplained";
	}
	return "invalid";
}

usc_signature_options usc_signature_options_default(void)
{
	usc_signature_options o;

	memset(&o, 0, sizeof o);
	o.reduce_order = USC_REDUCE_SEQUENTIAL;
	o.max_seconds = 60;
	o.top = 10;
	o.min_fraction = 0.95;
	return o;
}

usc_signature_request usc_signature_request_default(void)
{
	usc_signature_request r;

	memset(&r, 0, sizeof r);
	r.options = usc_signature_options_default();
	return r;
}

/* ------------------------------------------------------- a text buffer */

typedef struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *q;

		while (cap < b->len + n + 1)
			cap *= 2;
		q = usc__realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) USC__PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		sb_add(b, small, (size_t)n);
		return;
	}
	{
		char *big = usc__malloc((size_t)n + 1);

		if (!big) {
			b->oom = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sb_add(b, big, (size_t)n);
		usc__free(big);
	}
}

/* ------------------------------------------------- the printed module */

/*
 * The module as short-form text, and where each instruction's line is.
 * lines[i] for the instruction whose (computation index, position) is
 * given by the tables below; found by name inside its computation's block.
 */
typedef struct base_text {
	char *text;
	size_t len;
	/*
	 * Where the last line found starts and its computation's block (when
	 * hinted): the searches go through the instructions in text order, so
	 * the next line sought is at or after it, and a module of a million
	 * ops is not scanned from its start a million times.
	 */
	bool hinted;
	size_t hint_pos, hint_block;
} base_text;

/*
 * [start, end) of the line of instruction in (end excludes the '\n'),
 * scanning from pos, a line start inside block (or (size_t)-1 before the
 * first); *found_block receives the block of the line found.
 */
static bool find_line_from(const base_text *bt, const usc_hlo_instr *in,
			   size_t pos, size_t block, size_t *start,
			   size_t *end, size_t *found_block)
{
	const char *t = bt->text;
	size_t nl = strlen(in->name);
	size_t want = in->parent->index;

	while (pos < bt->len) {
		const char *e = memchr(t + pos, '\n', bt->len - pos);
		size_t lend = e ? (size_t)(e - t) : bt->len;
		const char *s = t + pos;

		/* A computation's block starts at an unindented line "... {". */
		if (lend > pos && s[0] != ' ' && s[0] != '}' &&
		    t[lend - 1] == '{')
			block = block == (size_t)-1 ? 0 : block + 1;
		else if (block == want && s[0] == ' ') {
			const char *q = s;

			while (*q == ' ')
				q++;
			if (strncmp(q, "ROOT ", 5) == 0)
				q += 5;
			if (strncmp(q, in->name, nl) == 0 &&
			    strncmp(q + nl, " = ", 3) == 0) {
				*start = pos;
				*end = lend;
				*found_block = block;
				return true;
			}
		}
		pos = lend + 1;
	}
	return false;
}

/* [start, end) of the line of instruction in (end excludes the '\n'). */
static bool find_line(base_text *bt, const usc_hlo_instr *in, size_t *start,
		      size_t *end)
{
	size_t block;

	if (!(bt->hinted && bt->hint_block <= in->parent->index &&
	      find_line_from(bt, in, bt->hint_pos, bt->hint_block, start, end,
			     &block)) &&
	    !find_line_from(bt, in, 0, (size_t)-1, start, end, &block))
		return false;
	bt->hinted = true;
	bt->hint_pos = *start;
	bt->hint_block = block;
	return true;
}

/* ----------------------------------------------------- one op's mutant */

typedef struct mctx {
	const usc_hlo_module *m;
	const usc_hlo_instr *in;
	const char *line;   /* the instruction's line */
	size_t line_len;
	size_t name_at;     /* offset of the name in line */
	const char *rest;   /* after the operand list's ')' */
	size_t rest_len;
	sbuf out;           /* the replacement lines */
	int tmp;
	char *detail;
	size_t detail_size;
} mctx;

static void set_detail(mctx *c, const char *fmt, ...) USC__PRINTF(2, 3);
static void set_detail(mctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->detail || !c->detail_size)
		return;
	va_start(ap, fmt);
	vsnprintf(c->detail, c->detail_size, fmt, ap);
	va_end(ap);
}

/* A fresh helper name, "<op>.sgN". */
static const char *hname(mctx *c, char buf[160])
{
	snprintf(buf, 160, "%s.sg%d", c->in->name, c->tmp++);
	return buf;
}

/* "TYPE[d0,d1]" with the dims of the instruction (no layout). */
static void shape_txt(char *buf, size_t n, usc_dtype t,
		      const usc_hlo_shape *like)
{
	size_t used = (size_t)snprintf(buf, n, "%s[", usc_dtype_name(t));

	for (size_t i = 0; like && i < like->rank && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld",
					 i ? "," : "",
					 (long long)like->dims[i]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}

/* One instruction line: indent, ROOT, name = shape op(args)rest. */
static void emit(mctx *c, bool root, const char *name, const char *shape,
		 const char *op, const char *args, const char *rest)
{
	sb_printf(&c->out, "  %s%s = %s %s(%s)%s\n", root ? "ROOT " : "",
		  name, shape, op, args, rest ? rest : "");
}

/* The original line, under another name and never ROOT. */
static void emit_renamed(mctx *c, const char *name)
{
	size_t nl = strlen(c->in->name);
	const char *after = c->line + c->name_at + nl;

	sb_printf(&c->out, "  %s%.*s\n", name,
		  (int)(c->line_len - c->name_at - nl), after);
}

/* The original rest of the line (attributes after the operands). */
static const char *rest_dup(mctx *c, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)c->rest_len, c->rest);
	return buf;
}

/*
 * The rest with attribute `attr`'s value (a braced {...}) replaced by
 * value; false when the attribute is not there.
 */
static bool rest_replace(mctx *c, const char *attr, const char *value,
			 char *buf, size_t n)
{
	char key[64];
	const char *r = c->rest, *hit, *e;
	int depth = 0;

	snprintf(key, sizeof key, "%s={", attr);
	hit = NULL;
	for (const char *p = r; p + strlen(key) <= r + c->rest_len; p++)
		if (strncmp(p, key, strlen(key)) == 0 &&
		    (p == r || p[-1] == ' ' || p[-1] == ',')) {
			hit = p;
			break;
		}
	if (!hit)
		return false;
	e = hit + strlen(key) - 1;
	for (; e < r + c->rest_len; e++) {
		if (*e == '{')
			depth++;
		else if (*e == '}' && --depth == 0)
			break;
	}
	if (e >= r + c->rest_len)
		return false;
	snprintf(buf, n, "%.*s%s=%s%.*s", (int)(hit - r), r, attr, value,
		 (int)(r + c->rest_len - e - 1), e + 1);
	return true;
}

static bool is_array(const usc_hlo_shape *s)
{
	return s->kind == USC_HLO_SHAPE_ARRAY;
}

static bool is_float_array(const usc_hlo_shape *s)
{
	return is_array(s) && usc_dtype_is_float(s->dtype);
}

static int fbits(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f ? f->bits : 0;
}

static bool same_dims(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	if (!is_array(a) || !is_array(b) || a->rank != b->rank)
		return false;
	for (size_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

static bool same_shape(const usc_hlo_shape *a, const usc_hlo_shape *b)
{
	return same_dims(a, b) && a->dtype == b->dtype;
}

/*
 * Arithmetic on floats whose operands all have the result's type: the ops
 * a compiler computes (and may compute wrongly) in some precision.
 */
static bool float_arith(const usc_hlo_instr *in)
{
	switch (in->opcode) {
	case USC_HLO_OP_ABS: case USC_HLO_OP_ADD: case USC_HLO_OP_SUBTRACT:
	case USC_HLO_OP_MULTIPLY: case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_MAXIMUM: case USC_HLO_OP_MINIMUM:
	case USC_HLO_OP_POWER: case USC_HLO_OP_REMAINDER:
	case USC_HLO_OP_ATAN2: case USC_HLO_OP_EXPONENTIAL:
	case USC_HLO_OP_EXPONENTIAL_MINUS_ONE: case USC_HLO_OP_LOG:
	case USC_HLO_OP_LOG_PLUS_ONE: case USC_HLO_OP_LOGISTIC:
	case USC_HLO_OP_NEGATE: case USC_HLO_OP_RSQRT: case USC_HLO_OP_SQRT:
	case USC_HLO_OP_CBRT: case USC_HLO_OP_TANH: case USC_HLO_OP_SINE:
	case USC_HLO_OP_COSINE: case USC_HLO_OP_TAN: case USC_HLO_OP_ERF:
	case USC_HLO_OP_ATAN: case USC_HLO_OP_SINH: case USC_HLO_OP_COSH:
		break;
	default:
		return false;
	}
	if (!is_float_array(&in->shape) || in->operand_count == 0)
		return false;
	for (size_t i = 0; i < in->operand_count; i++)
		if (!same_shape(&in->operands[i]->shape, &in->shape))
			return false;
	return true;
}

/* A float -> float convert. */
static bool float_convert(const usc_hlo_instr *in)
{
	return in->opcode == USC_HLO_OP_CONVERT && in->operand_count == 1 &&
	       is_float_array(&in->shape) &&
	       is_float_array(&in->operands[0]->shape);
}

static int precision_of(usc_dtype t)
{
	usc_float_info fi;

	return usc_float_info_of(t, &fi) == USC_OK ? fi.precision : 0;
}

/* The args "a, b" of in, operand k replaced by sub (NULL: none). */
static void args_with(const usc_hlo_instr *in, size_t k, const char *sub,
		      char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < in->operand_count && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s",
					 i ? ", " : "",
					 i == k && sub ? sub
						       : in->operands[i]->name);
}

/* A scalar constant and its broadcast to the op's dims; returns the name. */
static const char *splat(mctx *c, usc_dtype t, const char *value,
			 const usc_hlo_shape *like, char out[160])
{
	char k[160], sh[256], sc[64];

	hname(c, k);
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(t));
	emit(c, false, k, sc, "constant", value, NULL);
	hname(c, out);
	shape_txt(sh, sizeof sh, t, like);
	emit(c, false, out, sh, "broadcast", k, ", dimensions={}");
	return out;
}

/*
 * Each operand of the op converted to shape sh (new instructions), and
 * their names, comma-separated, in args: the operands of the op computed
 * in another type.
 */
static void convert_operands(mctx *c, const char *sh, char *args,
			     size_t cap)
{
	const usc_hlo_instr *in = c->in;
	char nm[160];
	size_t used = 0;

	args[0] = '\0';
	for (size_t i = 0; i < in->operand_count && used < cap; i++) {
		hname(c, nm);
		emit(c, false, nm, sh, "convert", in->operands[i]->name, NULL);
		used += (size_t)snprintf(args + used, cap - used, "%s%s",
					 i ? ", " : "", nm);
	}
}

static const usc_dtype narrow_types[] = {USC_BF16, USC_F16, USC_F8E4M3FN,
					 USC_F8E5M2};

static bool mut_narrow(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype n = narrow_types[v], t = in->shape.dtype;
	char sh[256], args[1024], nm[160], rest[1024];

	if (float_arith(in)) {
		if (fbits(n) >= fbits(t))
			return false;
		shape_txt(sh, sizeof sh, n, &in->shape);
		convert_operands(c, sh, args, sizeof args);
		hname(c, nm);
		emit(c, false, nm, sh, usc_hlo_opcode_name(in->opcode), args,
		     rest_dup(c, rest, sizeof rest));
		shape_txt(sh, sizeof sh, t, &in->shape);
		emit(c, in->is_root, in->name, sh, "convert", nm, NULL);
		set_detail(c, "computed in %s", usc_dtype_name(n));
		return true;
	}
	/* A narrowing convert rounded twice, through n on the way. */
	if (float_convert(in)) {
		usc_dtype s = in->operands[0]->shape.dtype;

		if (!(precision_of(n) < precision_of(s) &&
		      precision_of(n) > precision_of(t) &&
		      fbits(n) < fbits(s)))
			return false;
		shape_txt(sh, sizeof sh, n, &in->shape);
		hname(c, nm);
		emit(c, false, nm, sh, "convert", in->operands[0]->name, NULL);
		shape_txt(sh, sizeof sh, t, &in->shape);
		emit(c, in->is_root, in->name, sh, "convert", nm, NULL);
		set_detail(c, "rounded through %s first", usc_dtype_name(n));
		return true;
	}
	return false;
}

/* The unsigned type of a width, for arithmetic on encodings. */
static usc_dtype uint_of_bits(int bits)
{
	switch (bits) {
	case 8:
		return USC_U8;
	case 16:
		return USC_U16;
	case 32:
		return USC_U32;
	case 64:
		return USC_U64;
	}
	return USC_DTYPE_INVALID;
}

/*
 * x (type w, exact or nearly: the op computed in a wider type) rounded to
 * t in a directed mode, by correcting the nearest rounding r0 one step
 * where it went the wrong way.  On sign-magnitude encodings a step toward
 * zero is bits - 1, away from zero bits + 1 (with the sign bit set for a
 * step down from +-0); the steps cross the subnormal/normal boundary and
 * reach the largest finite value from Inf, so only NaN-on-overflow types
 * (fn) keep NaN where a directed rounding would give the largest value.
 */
static void emit_directed(mctx *c, usc_mutation mode, const char *x,
			  const char *err_term, usc_dtype w, usc_dtype t)
{
	const usc_hlo_shape *sh = &c->in->shape;
	usc_dtype u = uint_of_bits(fbits(t));
	char st[256], sw[256], su[256], sp[256], args[512];
	char r0[160], r1[160], r2[160], one[160], dn[160], cnd[160];
	char step[160], stepf[160], val[64], diff[160], zw[160];
	uint64_t sign = (uint64_t)1 << (fbits(t) - 1);

	shape_txt(st, sizeof st, t, sh);
	shape_txt(sw, sizeof sw, w, sh);
	shape_txt(su, sizeof su, u, sh);
	shape_txt(sp, sizeof sp, USC_PRED, sh);
	emit(c, false, hname(c, r0), st, "convert", x, NULL);
	emit(c, false, hname(c, r1), sw, "convert", r0, NULL);
	emit(c, false, hname(c, r2), su, "bitcast-convert", r0, NULL);
	splat(c, u, "1", sh, one);
	snprintf(args, sizeof args, "%s, %s", r2, one);
	emit(c, false, hname(c, dn), su, "subtract", args, NULL);
	/*
	 * The sign of r1 - (x + err): r1 - x is exact (r1 is x rounded to
	 * a narrower type, so both are multiples of x's ulp and close), and
	 * err, the exact error of x when the op was an add (TwoSum), only
	 * decides where r1 - x is zero.
	 */
	snprintf(args, sizeof args, "%s, %s", r1, x);
	emit(c, false, hname(c, diff), sw, "subtract", args, NULL);
	if (err_term) {
		char d2[160];

		snprintf(args, sizeof args, "%s, %s", diff, err_term);
		emit(c, false, hname(c, d2), sw, "subtract", args, NULL);
		snprintf(diff, sizeof diff, "%s", d2);
	}
	splat(c, w, "0", sh, zw);
	if (mode == USC_MUT_ROUND_TOWARD_ZERO) {
		char pr[160], sg[160];

		/*
		 * Away from zero: r1 - exact has r1's sign.  The test is
		 * sign(r1 - exact) * r1 > 0, not (r1 - exact) * r1 > 0: near
		 * the bottom of w's range that product underflows to zero (an
		 * f32 -> bf16 convert near 2^-126: r1 ~ 2^-126 times an error
		 * ~ 2^-134 is 2^-260, below f32's 2^-149), and the elements
		 * would keep their nearest value.
		 */
		emit(c, false, hname(c, sg), sw, "sign", diff, NULL);
		snprintf(args, sizeof args, "%s, %s", sg, r1);
		emit(c, false, hname(c, pr), sw, "multiply", args, NULL);
		snprintf(args, sizeof args, "%s, %s", pr, zw);
		emit(c, false, hname(c, cnd), sp, "compare", args,
		     ", direction=GT");
		snprintf(step, sizeof step, "%s", dn);
	} else {
		bool up = mode == USC_MUT_ROUND_UP;
		char z[160], side[160], msk[160], sm[160], away[160];

		snprintf(args, sizeof args, "%s, %s", diff, zw);
		emit(c, false, hname(c, cnd), sp, "compare", args,
		     up ? ", direction=LT" : ", direction=GT");
		splat(c, t, "0", sh, z);
		snprintf(args, sizeof args, "%s, %s", r0, z);
		/* Up: a negative r0 steps toward zero; down: a positive. */
		emit(c, false, hname(c, side), sp, "compare", args,
		     up ? ", direction=LT" : ", direction=GT");
		snprintf(val, sizeof val, "%llu",
			 (unsigned long long)(up ? sign - 1 : sign));
		splat(c, u, val, sh, msk);
		snprintf(args, sizeof args, "%s, %s", r2, msk);
		emit(c, false, hname(c, sm), su, up ? "and" : "or", args,
		     NULL);
		snprintf(args, sizeof args, "%s, %s", sm, one);
		emit(c, false, hname(c, away), su, "add", args, NULL);
		snprintf(args, sizeof args, "%s, %s, %s", side, dn, away);
		emit(c, false, hname(c, step), su, "select", args, NULL);
	}
	emit(c, false, hname(c, stepf), st, "bitcast-convert", step, NULL);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, stepf, r0);
	emit(c, c->in->is_root, c->in->name, st, "select", args, NULL);
}

static bool directed_ok(usc_dtype t)
{
	const usc_format *f = usc_format_of(t);

	return f && f->has_sign && uint_of_bits(f->bits) != USC_DTYPE_INVALID &&
	       f->bits < 64;
}

static bool mut_round(mctx *c, usc_mutation mode)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype t = in->shape.dtype;
	const char *what = mode == USC_MUT_ROUND_TOWARD_ZERO ? "toward zero"
			   : mode == USC_MUT_ROUND_UP	    ? "toward +inf"
							    : "toward -inf";

	if (!is_float_array(&in->shape) || !directed_ok(t))
		return false;
	if (float_convert(in)) {
		usc_dtype s = in->operands[0]->shape.dtype;

		if (precision_of(s) <= precision_of(t))
			return false;
		emit_directed(c, mode, in->operands[0]->name, NULL, s, t);
		set_detail(c, "convert rounded %s", what);
		return true;
	}
	if (float_arith(in)) {
		char sh[256], args[1024], x[160], rest[1024];

		/* The exact result, or near enough: the op in f64. */
		shape_txt(sh, sizeof sh, USC_F64, &in->shape);
		convert_operands(c, sh, args, sizeof args);
		emit(c, false, hname(c, x), sh,
		     usc_hlo_opcode_name(in->opcode), args,
		     rest_dup(c, rest, sizeof rest));
		/*
		 * An f64 product of narrower floats is exact, and f64's 53
		 * bits decide the direction of a quotient or root of f32
		 * values; an f64 sum is not exact when the exponents lie far
		 * apart, so its error is kept (Knuth's TwoSum) to break the
		 * case where the sum lands on a representable value.
		 */
		if (in->opcode == USC_HLO_OP_ADD ||
		    in->opcode == USC_HLO_OP_SUBTRACT) {
			char a[160], b[160], bb[160], t1[160], e1[160];
			char e2[160], er[160];

			snprintf(a, sizeof a, "%s.sg0", in->name);
			snprintf(b, sizeof b, "%s.sg1", in->name);
			if (in->opcode == USC_HLO_OP_SUBTRACT) {
				char nb[160];

				emit(c, false, hname(c, nb), sh, "negate", b,
				     NULL);
				snprintf(b, sizeof b, "%s", nb);
			}
			snprintf(args, sizeof args, "%s, %s", x, a);
			emit(c, false, hname(c, bb), sh, "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", x, bb);
			emit(c, false, hname(c, t1), sh, "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", a, t1);
			emit(c, false, hname(c, e1), sh, "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", b, bb);
			emit(c, false, hname(c, e2), sh, "subtract", args, NULL);
			snprintf(args, sizeof args, "%s, %s", e1, e2);
			emit(c, false, hname(c, er), sh, "add", args, NULL);
			emit_directed(c, mode, x, er, USC_F64, t);
		} else {
			emit_directed(c, mode, x, NULL, USC_F64, t);
		}
		set_detail(c, "result rounded %s", what);
		return true;
	}
	return false;
}

static bool mut_skip_rounding(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	char sh[256], args[1024], nm[160], rest[1024];
	size_t used = 0;
	int skipped = 0;

	/* convert(convert(x: f32 -> bf16) -> f32): the pair skipped. */
	if (float_convert(in) && in->operands[0]->opcode == USC_HLO_OP_CONVERT &&
	    in->operands[0]->operand_count == 1 &&
	    same_shape(&in->operands[0]->operands[0]->shape, &in->shape) &&
	    precision_of(in->operands[0]->shape.dtype) <
		    precision_of(in->shape.dtype)) {
		shape_txt(sh, sizeof sh, in->shape.dtype, &in->shape);
		emit(c, in->is_root, in->name, sh, "reshape",
		     in->operands[0]->operands[0]->name, NULL);
		set_detail(c, "the rounding of '%s' to %s skipped",
			   in->operands[0]->name,
			   usc_dtype_name(in->operands[0]->shape.dtype));
		return true;
	}
	if (!float_arith(in) || precision_of(in->shape.dtype) >= 24)
		return false;
	shape_txt(sh, sizeof sh, USC_F32, &in->shape);
	args[0] = '\0';
	for (size_t i = 0; i < in->operand_count; i++) {
		const usc_hlo_instr *o = in->operands[i];
		const char *src = NULL;

		if (o->opcode == USC_HLO_OP_CONVERT && o->operand_count == 1 &&
		    is_float_array(&o->operands[0]->shape) &&
		    o->operands[0]->shape.dtype == USC_F32 &&
		    same_dims(&o->operands[0]->shape, &in->shape)) {
			src = o->operands[0]->name;
			skipped++;
		} else {
			src = hname(c, nm);
			emit(c, false, nm, sh, "convert", o->name, NULL);
		}
		used += (size_t)snprintf(args + used, sizeof args - used,
					 "%s%s", i ? ", " : "", src);
	}
	if (!skipped)
		return false;
	hname(c, nm);
	emit(c, false, nm, sh, usc_hlo_opcode_name(in->opcode), args,
	     rest_dup(c, rest, sizeof rest));
	shape_txt(sh, sizeof sh, in->shape.dtype, &in->shape);
	emit(c, in->is_root, in->name, sh, "convert", nm, NULL);
	set_detail(c, "computed in f32 from %d unrounded operand%s", skipped,
		   skipped > 1 ? "s" : "");
	return true;
}

static bool mut_flush(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	const usc_format *f;
	usc_float_info fi;
	char st[256], sp[256], args[512], orig[160], a[160], mn[160];
	char cnd[160], z[160], zz[160], val[64];

	if (!is_float_array(&in->shape))
		return false;
	f = usc_format_of(in->shape.dtype);
	if (!f || !f->has_subnormals ||
	    usc_float_info_of(in->shape.dtype, &fi) != USC_OK)
		return false;
	switch (usc_hlo_opcode_category(in->opcode)) {
	case USC_HLO_CAT_ELEMENTWISE:
	case USC_HLO_CAT_REDUCE:
	case USC_HLO_CAT_LINALG:
		break;
	default:
		if (in->opcode != USC_HLO_OP_PARAMETER)
			return false;
	}
	if (in->opcode == USC_HLO_OP_CONSTANT || in->opcode == USC_HLO_OP_SELECT)
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	emit_renamed(c, hname(c, orig));
	emit(c, false, hname(c, a), st, "abs", orig, NULL);
	snprintf(val, sizeof val, "%.17g", fi.min_normal);
	splat(c, in->shape.dtype, val, &in->shape, mn);
	snprintf(args, sizeof args, "%s, %s", a, mn);
	emit(c, false, hname(c, cnd), sp, "compare", args, ", direction=LT");
	splat(c, in->shape.dtype, "0", &in->shape, z);
	/* x * 0 is a zero of x's sign for every finite x. */
	snprintf(args, sizeof args, "%s, %s", orig, z);
	emit(c, false, hname(c, zz), st, "multiply", args, NULL);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, zz, orig);
	emit(c, in->is_root, in->name, st, "select", args, NULL);
	set_detail(c, "%s subnormals flushed",
		   in->opcode == USC_HLO_OP_PARAMETER ? "input" : "result");
	return true;
}

static bool narrowing_convert(const usc_hlo_instr *in)
{
	return float_convert(in) &&
	       (precision_of(in->shape.dtype) <
			precision_of(in->operands[0]->shape.dtype) ||
		fbits(in->shape.dtype) < fbits(in->operands[0]->shape.dtype));
}

static bool mut_convert_saturate(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	usc_dtype s, t = in->shape.dtype;
	usc_float_info fi;
	char ss[256], st[256], args[512], lo[160], hi[160], cl[160], val[64];

	if (!narrowing_convert(in) || usc_float_info_of(t, &fi) != USC_OK)
		return false;
	s = in->operands[0]->shape.dtype;
	shape_txt(ss, sizeof ss, s, &in->shape);
	shape_txt(st, sizeof st, t, &in->shape);
	snprintf(val, sizeof val, "%.17g", -fi.max_finite);
	splat(c, s, val, &in->shape, lo);
	snprintf(val, sizeof val, "%.17g", fi.max_finite);
	splat(c, s, val, &in->shape, hi);
	snprintf(args, sizeof args, "%s, %s, %s", lo, in->operands[0]->name,
		 hi);
	emit(c, false, hname(c, cl), ss, "clamp", args, NULL);
	emit(c, in->is_root, in->name, st, "convert", cl, NULL);
	set_detail(c, "saturating at %.17g", fi.max_finite);
	return true;
}

static bool mut_convert_nan(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	const usc_format *f;
	char st[256], sp[256], args[512], y[160], f1[160], f2[160], n2[160];
	char cnd[160], nan[160];

	if (!narrowing_convert(in))
		return false;
	f = usc_format_of(in->shape.dtype);
	if (!f || f->inf == USC_INF_NONE || f->nan == USC_NAN_NONE)
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	emit(c, false, hname(c, y), st, "convert", in->operands[0]->name,
	     NULL);
	emit(c, false, hname(c, f1), sp, "is-finite", in->operands[0]->name,
	     NULL);
	emit(c, false, hname(c, f2), sp, "is-finite", y, NULL);
	emit(c, false, hname(c, n2), sp, "not", f2, NULL);
	snprintf(args, sizeof args, "%s, %s", f1, n2);
	emit(c, false, hname(c, cnd), sp, "and", args, NULL);
	splat(c, in->shape.dtype, "nan", &in->shape, nan);
	snprintf(args, sizeof args, "%s, %s, %s", cnd, nan, y);
	emit(c, in->is_root, in->name, st, "select", args, NULL);
	set_detail(c, "NaN instead of Inf on overflow");
	return true;
}

static bool mut_nan_dropping(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sp[256], args[512], na[160], nb[160];
	char mm[160], s1[160], lo[160];

	if (!is_float_array(&in->shape))
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	shape_txt(sp, sizeof sp, USC_PRED, &in->shape);
	if ((in->opcode == USC_HLO_OP_MAXIMUM ||
	     in->opcode == USC_HLO_OP_MINIMUM) && float_arith(in)) {
		const char *a = in->operands[0]->name, *b = in->operands[1]->name;

		snprintf(args, sizeof args, "%s, %s", a, a);
		emit(c, false, hname(c, na), sp, "compare", args,
		     ", direction=NE");
		snprintf(args, sizeof args, "%s, %s", b, b);
		emit(c, false, hname(c, nb), sp, "compare", args,
		     ", direction=NE");
		emit_renamed(c, hname(c, mm));
		snprintf(args, sizeof args, "%s, %s, %s", nb, a, mm);
		emit(c, false, hname(c, s1), st, "select", args, NULL);
		snprintf(args, sizeof args, "%s, %s, %s", na, b, s1);
		emit(c, in->is_root, in->name, st, "select", args, NULL);
		set_detail(c, "a NaN operand ignored");
		return true;
	}
	if (in->opcode == USC_HLO_OP_CLAMP && in->operand_count == 3 &&
	    same_shape(&in->operands[1]->shape, &in->shape)) {
		const char *x = in->operands[1]->name;

		snprintf(args, sizeof args, "%s, %s", x, x);
		emit(c, false, hname(c, na), sp, "compare", args,
		     ", direction=NE");
		emit_renamed(c, hname(c, mm));
		if (same_shape(&in->operands[0]->shape, &in->shape)) {
			snprintf(lo, sizeof lo, "%s", in->operands[0]->name);
		} else {
			hname(c, lo);
			emit(c, false, lo, st, "broadcast",
			     in->operands[0]->name, ", dimensions={}");
		}
		snprintf(args, sizeof args, "%s, %s, %s", na, lo, mm);
		emit(c, in->is_root, in->name, st, "select", args, NULL);
		set_detail(c, "a NaN input gives the lower bound");
		return true;
	}
	return false;
}

static bool mut_swap(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], args[512], rest[1024];

	if (!is_array(&in->shape))
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	switch (in->opcode) {
	case USC_HLO_OP_SUBTRACT: case USC_HLO_OP_DIVIDE:
	case USC_HLO_OP_POWER: case USC_HLO_OP_ATAN2:
	case USC_HLO_OP_REMAINDER: case USC_HLO_OP_COMPARE:
	case USC_HLO_OP_SHIFT_LEFT: case USC_HLO_OP_SHIFT_RIGHT_LOGICAL:
	case USC_HLO_OP_SHIFT_RIGHT_ARITHMETIC:
		if (in->operand_count != 2 ||
		    !same_shape(&in->operands[0]->shape,
				&in->operands[1]->shape) ||
		    in->operands[0] == in->operands[1])
			return false;
		snprintf(args, sizeof args, "%s, %s", in->operands[1]->name,
			 in->operands[0]->name);
		set_detail(c, "'%s' and '%s' swapped", in->operands[0]->name,
			   in->operands[1]->name);
		break;
	case USC_HLO_OP_SELECT:
		if (in->operand_count != 3 ||
		    !same_shape(&in->operands[1]->shape,
				&in->operands[2]->shape) ||
		    in->operands[1] == in->operands[2])
			return false;
		snprintf(args, sizeof args, "%s, %s, %s",
			 in->operands[0]->name, in->operands[2]->name,
			 in->operands[1]->name);
		set_detail(c, "branches swapped");
		break;
	default:
		return false;
	}
	emit(c, in->is_root, in->name, st, usc_hlo_opcode_name(in->opcode),
	     args, rest_dup(c, rest, sizeof rest));
	return true;
}

static bool mut_drop(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *keep;
	char st[256];

	if (in->opcode == USC_HLO_OP_CLAMP && in->operand_count == 3) {
		if (v != 0)
			return false;
		keep = in->operands[1];
	} else if (float_arith(in)) {
		if ((size_t)v >= in->operand_count)
			return false;
		keep = in->operands[v];
	} else {
		return false;
	}
	if (!same_shape(&keep->shape, &in->shape))
		return false;
	/* Both operands the same: one candidate is enough. */
	if (v == 1 && in->operands[0] == in->operands[1])
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	emit(c, in->is_root, in->name, st, "reshape", keep->name, NULL);
	set_detail(c, "passes on '%s'", keep->name);
	return true;
}

/* The init a reduction wrongly starts from, as text. */
static const char *wrong_init_text(const usc_hlo_scalar *s)
{
	if (s->value == 0)
		return "1";
	return "0";
}

static bool mut_wrong_init(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sc[64], args[1024], rest[1024], k[160];
	size_t half, j;

	if (in->opcode != USC_HLO_OP_REDUCE &&
	    in->opcode != USC_HLO_OP_REDUCE_WINDOW)
		return false;
	if (!is_array(&in->shape) || in->operand_count < 2 ||
	    in->operand_count % 2)
		return false;
	half = in->operand_count / 2;
	for (j = half; j < in->operand_count; j++) {
		const usc_hlo_instr *init = in->operands[j];

		if (init->opcode == USC_HLO_OP_CONSTANT && init->literal &&
		    init->literal->kind == USC_HLO_LITERAL_ARRAY &&
		    init->literal->count == 1)
			break;
	}
	if (j == in->operand_count)
		return false;
	snprintf(sc, sizeof sc, "%s[]",
		 usc_dtype_name(in->operands[j]->shape.dtype));
	hname(c, k);
	emit(c, false, k, sc, "constant",
	     wrong_init_text(&in->operands[j]->literal->elems[0]), NULL);
	args_with(in, j, k, args, sizeof args);
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	emit(c, in->is_root, in->name, st, usc_hlo_opcode_name(in->opcode),
	     args, rest_dup(c, rest, sizeof rest));
	set_detail(c, "init %s instead of %s",
		   wrong_init_text(&in->operands[j]->literal->elems[0]),
		   in->operands[j]->literal->elems[0].text);
	return true;
}

static bool mut_wrong_constant(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	char sc[64], val[64];
	double x, y;
	uint64_t bits;
	usc_rounding r = USC_ROUNDING_DEFAULT;

	if (in->opcode != USC_HLO_OP_CONSTANT || !is_float_array(&in->shape) ||
	    in->shape.rank != 0 || !in->literal ||
	    in->literal->kind != USC_HLO_LITERAL_ARRAY ||
	    in->literal->count != 1)
		return false;
	x = in->literal->elems[0].value;
	if (!isfinite(x) || x == 0)
		return false;
	if (v == 0) {
		if (fbits(in->shape.dtype) <= 16 ||
		    usc_encode_double(USC_BF16, x, &r, &bits, NULL) != USC_OK ||
		    usc_decode_double(USC_BF16, bits, &y) != USC_OK || y == x)
			return false;
		snprintf(val, sizeof val, "%.17g", y);
		set_detail(c, "%s rounded to bf16 (%s)",
			   in->literal->elems[0].text, val);
	} else {
		snprintf(val, sizeof val, "0");
		set_detail(c, "0 instead of %s", in->literal->elems[0].text);
	}
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(in->shape.dtype));
	emit(c, in->is_root, in->name, sc, "constant", val, NULL);
	return true;
}

static bool mut_off_by_one(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	char st[256], so[256], args[1024], rest[1024], a[160], b[160], r[160];
	char val[256], one[160];

	if (!is_array(&in->shape))
		return false;
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	switch (in->opcode) {
	case USC_HLO_OP_BROADCAST: {
		const usc_hlo_instr *o = in->operands[0];
		int64_t n;
		usc_dtype t = o->shape.dtype;

		if (v != 0 || !is_array(&o->shape) || o->shape.rank != 1 ||
		    o->shape.dims[0] < 2)
			return false;
		n = o->shape.dims[0];
		/* Operand read at (i + 1) mod n: a rotation by one. */
		snprintf(so, sizeof so, "%s[%lld]", usc_dtype_name(t),
			 (long long)(n - 1));
		snprintf(val, sizeof val, ", slice={[1:%lld]}", (long long)n);
		emit(c, false, hname(c, a), so, "slice", o->name, val);
		snprintf(so, sizeof so, "%s[1]", usc_dtype_name(t));
		emit(c, false, hname(c, b), so, "slice", o->name,
		     ", slice={[0:1]}");
		snprintf(so, sizeof so, "%s[%lld]", usc_dtype_name(t),
			 (long long)n);
		snprintf(args, sizeof args, "%s, %s", a, b);
		emit(c, false, hname(c, r), so, "concatenate", args,
		     ", dimensions={0}");
		emit(c, in->is_root, in->name, st, "broadcast", r,
		     rest_dup(c, rest, sizeof rest));
		set_detail(c, "operand '%s' read one index on (rotated)",
			   o->name);
		return true;
	}
	case USC_HLO_OP_SLICE: {
		const usc_hlo_attr *at = usc_hlo_instr_attr(in, "slice");
		const usc_hlo_instr *o = in->operands[0];
		size_t used = 0;
		int64_t shift = 0;

		if (!at || at->kind != USC_HLO_ATTR_SLICE ||
		    (size_t)v >= at->count || !is_array(&o->shape))
			return false;
		if (at->slice[v].limit + at->slice[v].stride <=
		    o->shape.dims[v] + at->slice[v].stride - 1 &&
		    at->slice[v].limit < o->shape.dims[v])
			shift = 1;
		else if (at->slice[v].start >= 1)
			shift = -1;
		else
			return false;
		used += (size_t)snprintf(val + used, sizeof val - used, "{");
		for (size_t d = 0; d < at->count && used < sizeof val; d++) {
			int64_t s = at->slice[d].start, l = at->slice[d].limit;

			if (d == (size_t)v) {
				s += shift;
				l += shift;
			}
			used += (size_t)snprintf(
				val + used, sizeof val - used, "%s[%lld:%lld:%lld]",
				d ? ", " : "", (long long)s, (long long)l,
				(long long)at->slice[d].stride);
		}
		if (used < sizeof val)
			snprintf(val + used, sizeof val - used, "}");
		if (!rest_replace(c, "slice", val, rest, sizeof rest))
			return false;
		emit(c, in->is_root, in->name, st, "slice", o->name, rest);
		set_detail(c, "dimension %d shifted by %+lld", v,
			   (long long)shift);
		return true;
	}
	case USC_HLO_OP_IOTA:
		if (v != 0)
			return false;
		emit_renamed(c, hname(c, a));
		splat(c, in->shape.dtype, "1", &in->shape, one);
		snprintf(args, sizeof args, "%s, %s", a, one);
		emit(c, in->is_root, in->name, st, "add", args, NULL);
		set_detail(c, "iota plus one");
		return true;
	case USC_HLO_OP_DYNAMIC_SLICE:
	case USC_HLO_OP_GATHER: {
		size_t k = in->opcode == USC_HLO_OP_GATHER ? 1 : (size_t)v + 1;
		const usc_hlo_instr *ix;
		char sx[256], sc[64];

		if ((in->opcode == USC_HLO_OP_GATHER && v != 0) ||
		    k >= in->operand_count)
			return false;
		ix = in->operands[k];
		if (!is_array(&ix->shape) || !usc_dtype_is_integer(ix->shape.dtype))
			return false;
		shape_txt(sx, sizeof sx, ix->shape.dtype, &ix->shape);
		if (ix->shape.rank == 0) {
			snprintf(sc, sizeof sc, "%s[]",
				 usc_dtype_name(ix->shape.dtype));
			emit(c, false, hname(c, one), sc, "constant", "1", NULL);
		} else {
			splat(c, ix->shape.dtype, "1", &ix->shape, one);
		}
		snprintf(args, sizeof args, "%s, %s", ix->name, one);
		emit(c, false, hname(c, a), sx, "add", args, NULL);
		args_with(in, k, a, args, sizeof args);
		emit(c, in->is_root, in->name, st,
		     usc_hlo_opcode_name(in->opcode), args,
		     rest_dup(c, rest, sizeof rest));
		set_detail(c, "start index '%s' plus one", ix->name);
		return true;
	}
	default:
		return false;
	}
}

static bool mut_transposed(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_instr *o;
	char st[256], so[256], args[1024], rest[1024], a[160], b[160];
	int64_t r, cc;

	if (usc_hlo_opcode_category(in->opcode) != USC_HLO_CAT_ELEMENTWISE ||
	    in->operand_count != 2 || (size_t)v >= in->operand_count ||
	    !is_array(&in->shape))
		return false;
	o = in->operands[v];
	if (!is_array(&o->shape) || o->shape.rank != 2)
		return false;
	r = o->shape.dims[0];
	cc = o->shape.dims[1];
	if (r < 2 || cc < 2)
		return false;
	/* The Python harness's shape: the operand's data read as [c, r],
	 * transposed back to [r, c]. */
	snprintf(so, sizeof so, "%s[%lld,%lld]", usc_dtype_name(o->shape.dtype),
		 (long long)cc, (long long)r);
	emit(c, false, hname(c, a), so, "reshape", o->name, NULL);
	snprintf(so, sizeof so, "%s[%lld,%lld]", usc_dtype_name(o->shape.dtype),
		 (long long)r, (long long)cc);
	emit(c, false, hname(c, b), so, "transpose", a, ", dimensions={1,0}");
	args_with(in, (size_t)v, b, args, sizeof args);
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	emit(c, in->is_root, in->name, st, usc_hlo_opcode_name(in->opcode),
	     args, rest_dup(c, rest, sizeof rest));
	set_detail(c, "operand '%s' read through transposed indices",
		   o->name);
	return true;
}

static bool mut_wrong_reduce_dim(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	const usc_hlo_attr *at;
	const usc_hlo_shape *os;
	char st[256], rest[1024], val[64];
	int64_t d;
	int seen = 0;

	if (in->opcode != USC_HLO_OP_REDUCE || in->operand_count != 2 ||
	    !is_array(&in->shape))
		return false;
	at = usc_hlo_instr_attr(in, "dimensions");
	os = &in->operands[0]->shape;
	if (!at || at->kind != USC_HLO_ATTR_INTS || at->count != 1 ||
	    !is_array(os))
		return false;
	d = at->ints[0];
	for (int64_t e = 0; e < (int64_t)os->rank; e++) {
		bool same = true;
		size_t k = 0;

		if (e == d || os->dims[e] != os->dims[d])
			continue;
		/* The result keeps the other dims in order: must match. */
		for (int64_t i = 0; i < (int64_t)os->rank; i++)
			if (i != e) {
				if (k >= in->shape.rank ||
				    in->shape.dims[k] != os->dims[i])
					same = false;
				k++;
			}
		if (!same || seen++ != v)
			continue;
		snprintf(val, sizeof val, "{%lld}", (long long)e);
		if (!rest_replace(c, "dimensions", val, rest, sizeof rest))
			return false;
		shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
		{
			char args[1024];

			args_with(in, (size_t)-1, NULL, args, sizeof args);
			emit(c, in->is_root, in->name, st, "reduce", args,
			     rest);
		}
		set_detail(c, "over dimension %lld instead of %lld",
			   (long long)e, (long long)d);
		return true;
	}
	return false;
}

static bool mut_zero(mctx *c)
{
	const usc_hlo_instr *in = c->in;
	char st[256], sc[64], k[160];

	/* Output buffers: the entry's root and every fusion's result. */
	if (!is_array(&in->shape) || in->shape.dtype == USC_PRED)
		return false;
	if (!(in->opcode == USC_HLO_OP_FUSION ||
	      (in->is_root && in->parent->is_entry)))
		return false;
	if (in->opcode == USC_HLO_OP_PARAMETER ||
	    in->opcode == USC_HLO_OP_CONSTANT)
		return false;
	snprintf(sc, sizeof sc, "%s[]", usc_dtype_name(in->shape.dtype));
	emit(c, false, hname(c, k), sc, "constant", "0", NULL);
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	emit(c, in->is_root, in->name, st, "broadcast", k, ", dimensions={}");
	set_detail(c, "result all zeros");
	return true;
}

/* "[0:a], [0:d1], ..." : dimension `dim` cut to [0:hi), the others whole. */
static void slice_txt(char *buf, size_t n, const usc_hlo_shape *sh,
		      size_t dim, int64_t hi)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sh->rank && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s[0:%lld]",
					 i ? ", " : "",
					 (long long)(i == dim ? hi
							      : sh->dims[i]));
}

/*
 * A stale output region: the result's last h = n/2 positions along a
 * dimension (variant 0: the outermost, 1: the innermost) hold the values
 * of its first h, as when a tile loop writes the first tile again (or
 * never writes the last and the buffer still holds an earlier tile's
 * values).  concatenate(x[0:n-h], x[0:h]).  The same buffers as `zero`.
 */
static bool mut_stale(mctx *c, int v)
{
	const usc_hlo_instr *in = c->in;
	usc_hlo_shape part;
	int64_t dims[16];
	char x[160], a[160], b[160], sl[512], st[256], args[400], rest[600];
	size_t dim;
	int64_t n, h;

	if (!is_array(&in->shape) || in->shape.rank == 0 ||
	    in->shape.rank > USC__ARRAY_LEN(dims) || v > 1 ||
	    (v == 1 && in->shape.rank < 2))
		return false;
	if (!(in->opcode == USC_HLO_OP_FUSION ||
	      (in->is_root && in->parent->is_entry)))
		return false;
	if (in->opcode == USC_HLO_OP_PARAMETER ||
	    in->opcode == USC_HLO_OP_CONSTANT)
		return false;
	dim = v == 0 ? 0 : in->shape.rank - 1;
	n = in->shape.dims[dim];
	h = n / 2;
	if (h < 1)
		return false;
	hname(c, x);
	emit_renamed(c, x);
	/* A copy of the dims: the shape's own are the module's. */
	memcpy(dims, in->shape.dims, in->shape.rank * sizeof *dims);
	part = in->shape;
	part.dims = dims;
	part.dims[dim] = n - h;
	shape_txt(st, sizeof st, in->shape.dtype, &part);
	slice_txt(sl, sizeof sl, &in->shape, dim, n - h);
	snprintf(rest, sizeof rest, ", slice={%s}", sl);
	emit(c, false, hname(c, a), st, "slice", x, rest);
	part.dims[dim] = h;
	shape_txt(st, sizeof st, in->shape.dtype, &part);
	slice_txt(sl, sizeof sl, &in->shape, dim, h);
	snprintf(rest, sizeof rest, ", slice={%s}", sl);
	emit(c, false, hname(c, b), st, "slice", x, rest);
	shape_txt(st, sizeof st, in->shape.dtype, &in->shape);
	snprintf(args, sizeof args, "%s, %s", a, b);
	snprintf(rest, sizeof rest, ", dimensions={%zu}", dim);
	emit(c, in->is_root, in->name, st, "concatenate", args, rest);
	set_detail(c, "dimension %zu's last %lld hold its first %lld (a stale "
		      "tile)",
		   dim, (long long)h, (long long)h);
	return true;
}

/* Writes the replacement lines of one mutation; false: not applicable. */
static bool mutate_lines(mctx *c, usc_mutation kind, int v)
{
	switch (kind) {
	case USC_MUT_NARROW:
		return mut_narrow(c, v);
	case USC_MUT_ROUND_TOWARD_ZERO:
	case USC_MUT_ROUND_UP:
	case USC_MUT_ROUND_DOWN:
		return v == 0 && mut_round(c, kind);
	case USC_MUT_SKIP_ROUNDING:
		return v == 0 && mut_skip_rounding(c);
	case USC_MUT_FLUSH_DENORMALS:
		return v == 0 && mut_flush(c);
	case USC_MUT_CONVERT_SATURATE:
		return v == 0 && mut_convert_saturate(c);
	case USC_MUT_CONVERT_NAN:
		return v == 0 && mut_convert_nan(c);
	case USC_MUT_NAN_DROPPING:
		return v == 0 && mut_nan_dropping(c);
	case USC_MUT_SWAP_OPERANDS:
		return v == 0 && mut_swap(c);
	case USC_MUT_DROP:
		return mut_drop(c, v);
	case USC_MUT_WRONG_INIT:
		return v == 0 && mut_wrong_init(c);
	case USC_MUT_WRONG_CONSTANT:
		return mut_wrong_constant(c, v);
	case USC_MUT_OFF_BY_ONE:
		return mut_off_by_one(c, v);
	case USC_MUT_TRANSPOSED:
		return mut_transposed(c, v);
	case USC_MUT_WRONG_REDUCE_DIM:
		return mut_wrong_reduce_dim(c, v);
	case USC_MUT_ZERO:
		return v == 0 && mut_zero(c);
	case USC_MUT_STALE:
		return mut_stale(c, v);
	default:
		return false;
	}
}

/*
 * The mutant text of in (kind, v) from the printed module bt: *applies
 * false when it does not apply.  *text_out is usc__malloc'd; with
 * text_out NULL only *applies and the detail are worked out (the whole
 * text costs the module's length).
 */
static usc_status build_mutant(base_text *bt, const usc_hlo_instr *in,
			       usc_mutation kind, int v, bool *applies,
			       char *detail, size_t detail_size,
			       char **text_out, usc_error *err)
{
	mctx c;
	size_t s, e;
	const char *op, *p, *open;
	char *whole;
	size_t tail;
	int depth = 0;

	*applies = false;
	if (text_out)
		*text_out = NULL;
	if (detail && detail_size)
		detail[0] = '\0';
	if (kind <= USC_MUT_NONE || kind >= USC_MUT_OUTPUT_ZERO ||
	    v < 0 || v >= usc_mutation_variants(kind))
		return USC_OK;
	if (!find_line(bt, in, &s, &e))
		return USC_OK;
	memset(&c, 0, sizeof c);
	c.in = in;
	c.line = bt->text + s;
	c.line_len = e - s;
	c.detail = detail;
	c.detail_size = detail_size;
	p = c.line;
	while (*p == ' ')
		p++;
	if (strncmp(p, "ROOT ", 5) == 0)
		p += 5;
	c.name_at = (size_t)(p - c.line);
	/* " opcode(" after "name = shape"; then the operand list's end. */
	op = usc_hlo_opcode_name(in->opcode);
	open = NULL;
	for (const char *q = p + strlen(in->name) + 3; q < c.line + c.line_len;
	     q++) {
		size_t ol = strlen(op);

		if (q[-1] == ' ' && strncmp(q, op, ol) == 0 && q[ol] == '(') {
			open = q + ol;
			break;
		}
	}
	if (!open)
		return USC_OK;
	for (p = open; p < c.line + c.line_len; p++) {
		if (*p == '(' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == '}' || *p == ']') && --depth == 0)
			break;
	}
	if (p >= c.line + c.line_len)
		return USC_OK;
	c.rest = p + 1;
	c.rest_len = (size_t)(c.line + c.line_len - c.rest);
	if (!mutate_lines(&c, kind, v) || c.out.oom) {
		bool oom = c.out.oom;

		usc__free(c.out.p);
		return oom ? usc__fail(err, USC_ENOMEM, "out of memory")
			   : USC_OK;
	}
	if (!text_out) {
		usc__free(c.out.p);
		*applies = true;
		return USC_OK;
	}
	/* The text before the line, the new lines, the text after. */
	tail = e + 1 < bt->len ? bt->len - e - 1 : 0;
	whole = usc__malloc(s + c.out.len + tail + 1);
	if (!whole) {
		usc__free(c.out.p);
		return usc__fail(err, USC_ENOMEM, "out of memory");
	}
	memcpy(whole, bt->text, s);
	memcpy(whole + s, c.out.p, c.out.len);
	memcpy(whole + s + c.out.len, bt->text + e + 1, tail);
	whole[s + c.out.len + tail] = '\0';
	usc__free(c.out.p);
	*applies = true;
	*text_out = whole;
	return USC_OK;
}

static usc_status print_base(const usc_hlo_module *m, base_text *bt,
			     usc_error *err)
{
	usc_hlo_print_options po = usc_hlo_print_options_default();

	po.form = USC_HLO_PRINT_SHORT;
	po.print_metadata = false;
	return usc_hlo_module_print(m, &po, &bt->text, &bt->len, err);
}

static const usc_hlo_instr *find_instr(const usc_hlo_module *m,
				       const char *name)
{
	if (name[0] == '%')
		name++;
	for (size_t i = 0; i < m->computation_count; i++) {
		const usc_hlo_instr *in =
			usc_hlo_computation_instr(m->computations[i], name);

		if (in)
			return in;
	}
	return NULL;
}

usc_status usc_signature_mutate(const usc_hlo_module *m, const char *instr,
				usc_mutation kind, int variant, bool *applies,
				char *detail, size_t detail_size,
				char **text_out, usc_error *err)
{
	const usc_hlo_instr *in = find_instr(m, instr);
	base_text bt = {0};
	char *t = NULL;
	usc_status st;

	*applies = false;
	*text_out = NULL;
	if (!in)
		return usc__fail(err, USC_ENOTFOUND,
				 "module '%s' has no instruction '%s'",
				 m->name ? m->name : "", instr);
	st = print_base(m, &bt, err);
	if (st != USC_OK)
		return st;
	st = build_mutant(&bt, in, kind, variant, applies, detail,
			  detail_size, &t, err);
	usc_hlo_text_free(bt.text);
	if (st != USC_OK || !t)
		return st;
	/* Hand over in the printer's allocation, freed by usc_hlo_text_free. */
	*text_out = t;
	return USC_OK;
}

void usc_signature_mutant_list_destroy(usc_signature_mutant *list,
				       size_t count)
{
	for (size_t i = 0; list && i < count; i++) {
		usc__free(list[i].op);
		usc__free(list[i].computation);
	}
	usc__free(list);
}

/*
 * The same enumeration as the search's (every computation, every
 * instruction, the catalogue's order, every variant), without evaluating:
 * what a test or a person needs to replay every mutant one by one.
 */
usc_status usc_signature_mutant_list(const usc_hlo_module *m,
				     usc_signature_mutant **out,
				     size_t *count, usc_error *err)
{
	usc_signature_mutant *list = NULL;
	size_t n = 0, cap = 0;
	base_text bt = {0};
	usc_status st;

	*out = NULL;
	*count = 0;
	st = print_base(m, &bt, err);
	if (st != USC_OK)
		return st;
	for (size_t ci = 0; ci < m->computation_count; ci++) {
		const usc_hlo_computation *comp = m->computations[ci];

		for (size_t ii = 0; ii < comp->instr_count; ii++) {
			const usc_hlo_instr *in = comp->instrs[ii];

			for (int k = USC_MUT_NONE + 1; k < USC_MUT_OUTPUT_ZERO;
			     k++) {
				for (int v = 0;
				     v < usc_mutation_variants((usc_mutation)k);
				     v++) {
					usc_signature_mutant *x;
					char detail[96];
					bool applies = false;

					/* The list needs no mutant's text. */
					st = build_mutant(&bt, in,
							  (usc_mutation)k, v,
							  &applies, detail,
							  sizeof detail, NULL,
							  err);
					if (st != USC_OK)
						goto fail;
					if (!applies)
						continue;
					if (n == cap) {
						size_t nc = cap ? 2 * cap : 64;
						usc_signature_mutant *g =
							usc__reallocarray(
								list, nc,
								sizeof *g);

						if (!g)
							goto oom;
						list = g;
						cap = nc;
					}
					x = &list[n];
					memset(x, 0, sizeof *x);
					x->kind = (usc_mutation)k;
					x->variant = v;
					snprintf(x->detail, sizeof x->detail,
						 "%s", detail);
					x->op = usc__strdup(in->name);
					x->computation = usc__strdup(comp->name);
					n++;
					if (!x->op || !x->computation)
						goto oom;
				}
			}
		}
	}
	usc_hlo_text_free(bt.text);
	*out = list;
	*count = n;
	return USC_OK;
oom:
	st = usc__fail(err, USC_ENOMEM, "out of memory");
fail:
	usc_hlo_text_free(bt.text);
	usc_signature_mutant_list_destroy(list, n);
	return st;
}

/* ------------------------------------------------------------ scoring */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool same_value(usc_dtype t, uint64_t a, uint64_t b)
{
	if (a == b)
		return true;
	/* NaN payloads are the device's business: all NaNs are equal. */
	return usc_dtype_is_float(t) && usc_bits_is_nan(t, a) &&
	       usc_bits_is_nan(t, b);
}

static double distance(usc_dtype t, uint64_t a, uint64_t b)
{
	int64_t d;
	double x, y;

	if (usc_dtype_is_float(t)) {
		if (usc_ulp_distance(t, a, b, &d) != USC_OK)
			return INFINITY;
		return fabs((double)d);
	}
	if (usc_decode_double(t, a, &x) != USC_OK ||
	    usc_decode_double(t, b, &y) != USC_OK)
		return INFINITY;
	return fabs(x - y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The search's state. */
typedef struct search {
	size_t nout;
	const usc_tensor *const *dev;
	usc_tensor **ref;     /* the reference outputs, owned */
	uint64_t elements;
	double *scratch;      /* elements doubles */
} search;

/*
 * Scores outputs (one tensor per output; NULL entries mean "the
 * reference") against the device: fills reproduced, differing_reproduced
 * and median_ulps.  *no_effect: equal to the reference everywhere.
 */
static void score(search *s, const usc_tensor *const *outs,
		  usc_signature_candidate *cand, bool *no_effect)
{
	uint64_t rep = 0, drep = 0;
	size_t nd = 0;
	bool same_ref = true;

	for (size_t o = 0; o < s->nout; o++) {
		const usc_tensor *y = outs[o] ? outs[o] : s->ref[o];
		usc_dtype t = usc_tensor_dtype(s->dev[o]);
		uint64_t n = usc_tensor_count(s->dev[o]);

		for (uint64_t i = 0; i < n; i++) {
			uint64_t a = 0, b = 0, r = 0;
			bool eq;

			usc_tensor_get_bits(y, i, &a);
			usc_tensor_get_bits(s->dev[o], i, &b);
			usc_tensor_get_bits(s->ref[o], i, &r);
			if (a != r)
				same_ref = false;
			eq = same_value(t, a, b);
			if (eq) {
				rep++;
				if (!same_value(t, r, b))
					drep++;
			} else {
				s->scratch[nd++] = distance(t, a, b);
			}
		}
	}
	cand->reproduced = rep;
	cand->differing_reproduced = drep;
	if (nd == 0) {
		cand->median_ulps = NAN;
	} else {
		qsort(s->scratch, nd, sizeof *s->scratch, cmp_double);
		cand->median_ulps = nd % 2 ? s->scratch[nd / 2]
					   : 0.5 * (s->scratch[nd / 2 - 1] +
						    s->scratch[nd / 2]);
	}
	if (no_effect)
		*no_effect = same_ref;
}

/* Better first: more reproduced, then a smaller median distance. */
static int cmp_cand(const void *pa, const void *pb)
{
	const usc_signature_candidate *a = pa, *b = pb;
	double ma = isnan(a->median_ulps) ? -1 : a->median_ulps;
	double mb = isnan(b->median_ulps) ? -1 : b->median_ulps;

	if (a->reproduced != b->reproduced)
		return a->reproduced > b->reproduced ? -1 : 1;
	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->op && b->op)
		return strcmp(a->op, b->op);
	return 0;
}

static void cand_free(usc_signature_candidate *c)
{
	usc__free(c->op);
	usc__free(c->computation);
	c->op = c->computation = NULL;
}

void usc_signature_report_destroy(usc_signature_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->candidate_count; i++)
		cand_free(&r->candidates[i]);
	usc__free(r->candidates);
	usc__free(r->kernel_name);
	usc__free(r);
}

/* Evaluates module m on the inputs; outputs handed over into outs. */
static usc_status evaluate(const usc_hlo_module *m,
			   const usc_tensor *const *inputs, size_t ni,
			   const usc_signature_options *o, usc_tensor **outs,
			   size_t nout, usc_error *err)
{
	usc_eval_options eo = usc_eval_options_default();
	usc_eval *ev = NULL;
	usc_status st;

	eo.domain = USC_DOMAIN_REFERENCE;
	eo.reduce_order = o->reduce_order;
	st = usc_eval_create(m, &eo, &ev, err);
	if (st != USC_OK)
		return st;
	if (usc_eval_param_count(ev) != ni) {
		st = usc__fail(err, USC_EINVAL,
			       "the kernel takes %zu parameter(s); %zu "
			       "input(s) given",
			       usc_eval_param_count(ev), ni);
		goto done;
	}
	if (st == USC_OK)
		st = usc_eval_bind_all(ev, inputs, ni, err);
	if (st == USC_OK)
		st = usc_eval_run(ev, err);
	if (st == USC_OK && usc_eval_output_count(ev) != nout)
		st = usc__fail(err, USC_EINVAL,
			       "the kernel has %zu output(s); %zu device "
			       "output(s) given",
			       usc_eval_output_count(ev), nout);
	for (size_t i = 0; i < nout && st == USC_OK; i++)
		st = usc_eval_take_output(ev, i, &outs[i], err);
done:
	usc_eval_destroy(ev);
	return st;
}

/* Appends a candidate (copying op names); false on out of memory. */
static bool push(usc_signature_candidate **list, size_t *n, size_t *cap,
		 const usc_signature_candidate *c, const usc_hlo_instr *in)
{
	usc_signature_candidate *x;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		usc_signature_candidate *g =
			usc__reallocarray(*list, nc, sizeof *g);

		if (!g)
			return false;
		*list = g;
		*cap = nc;
	}
	x = &(*list)[*n];
	*x = *c;
	x->op = x->computation = NULL;
	if (in) {
		x->op = usc__strdup(in->name);
		x->computation = usc__strdup(in->parent->name);
		if (!x->op || !x->computation) {
			cand_free(x);
			return false;
		}
	}
	(*n)++;
	return true;
}

/* One device set's state in a search. */
typedef struct set_state {
	search s;
	usc_signature_report *r;
	usc_signature_candidate *list;
	size_t n, cap;
} set_state;

/* Sorts a set's candidates, sets the verdict, keeps the top and ties. */
static void rank_set(set_state *ss, const usc_signature_options *o)
{
	usc_signature_report *r = ss->r;
	usc_signature_candidate *list = ss->list;
	size_t n = ss->n;

	if (n)
		qsort(list, n, sizeof *list, cmp_cand);
	if (r->differing) {
		if (n && list[0].reproduced > r->identity.reproduced &&
		    (double)list[0].differing_reproduced >=
			    o->min_fraction * (double)r->differing)
			r->verdict = USC_SIGNATURE_EXPLAINED;
		else
			r->verdict = USC_SIGNATURE_UNEXPLAINED;
	}
	{
		size_t keep = n < o->top ? n : o->top;

		for (size_t i = 0; i < n; i++) {
			list[i].tied_best =
				list[i].reproduced == list[0].reproduced &&
				cmp_double(&list[i].median_ulps,
					   &list[0].median_ulps) == 0 &&
				(isnan(list[i].median_ulps) ==
				 isnan(list[0].median_ulps));
			/* Every tie with the best is kept, past top if
			 * need be: an ambiguity is reported whole. */
			if (list[i].tied_best && i >= keep)
				keep = i + 1;
		}
		for (size_t i = keep; i < n; i++)
			cand_free(&list[i]);
		r->candidate_count = keep;
		r->candidates = list;
		ss->list = NULL;
		ss->n = 0;
	}
}

/* Output elements left zero: the reference where the device is not zero.
 * Scored directly, without an evaluation. */
static bool score_output_zero(set_state *ss)
{
	usc_signature_report *r = ss->r;
	usc_signature_candidate cand;
	uint64_t zero_diff = 0;

	for (size_t oi = 0; oi < ss->s.nout; oi++) {
		usc_dtype t = usc_tensor_dtype(ss->s.dev[oi]);
		const usc_format *f = usc_format_of(t);
		uint64_t cnt = usc_tensor_count(ss->s.dev[oi]);
		uint64_t smask = f && f->has_sign
					 ? (uint64_t)1 << (f->bits - 1)
					 : 0;

		for (uint64_t i = 0; i < cnt; i++) {
			uint64_t b = 0, rr = 0;

			usc_tensor_get_bits(ss->s.dev[oi], i, &b);
			usc_tensor_get_bits(ss->s.ref[oi], i, &rr);
			if ((b & ~smask) == 0 && !same_value(t, b, rr))
				zero_diff++;
		}
	}
	if (!zero_diff)
		return true;
	memset(&cand, 0, sizeof cand);
	cand.kind = USC_MUT_OUTPUT_ZERO;
	cand.reproduced = r->identity.reproduced + zero_diff;
	cand.differing_reproduced = zero_diff;
	snprintf(cand.detail, sizeof cand.detail,
		 "%llu element(s) zero where the reference is not",
		 (unsigned long long)zero_diff);
	/* The rest are as far off as the identity's. */
	cand.median_ulps = r->identity.median_ulps;
	return push(&ss->list, &ss->n, &ss->cap, &cand, NULL);
}

usc_status usc_signature_search_sets(const usc_hlo_module *m,
				     const usc_tensor *const *inputs,
				     size_t input_count,
				     const usc_tensor *const *devices,
				     size_t device_count, size_t set_count,
				     const usc_signature_options *opts,
				     usc_signature_report **out,
				     usc_error *err)
{
	usc_signature_options o = opts ? *opts
				       : usc_signature_options_default();
	usc_signature_candidate cand;
	usc_tensor **ref = NULL, **mut = NULL;
	set_state *sets = NULL;
	double *scratch = NULL;
	uint64_t elements = 0;
	size_t searching = 0;
	base_text bt = {0};
	double t0 = now_seconds();
	usc_status st;

	for (size_t k = 0; k < set_count; k++)
		out[k] = NULL;
	if (o.max_seconds <= 0)
		o.max_seconds = 60;
	if (o.top == 0)
		o.top = 10;
	if (o.min_fraction <= 0)
		o.min_fraction = 0.95;
	if (set_count == 0)
		return usc__fail(err, USC_EINVAL, "no device output set given");
	ref = usc__calloc(device_count ? device_count : 1, sizeof *ref);
	mut = usc__calloc(device_count ? device_count : 1, sizeof *mut);
	sets = usc__calloc(set_count, sizeof *sets);
	if (!ref || !mut || !sets) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto fail;
	}
	st = evaluate(m, inputs, input_count, &o, ref, device_count, err);
	if (st != USC_OK)
		goto fail;
	for (size_t k = 0; k < set_count; k++) {
		const usc_tensor *const *dev = devices + k * device_count;
		uint64_t el = 0;

		for (size_t i = 0; i < device_count; i++) {
			usc_tensor_spec a = usc_tensor_spec_of(ref[i]);
			usc_tensor_spec b = usc_tensor_spec_of(dev[i]);
			char sa[256], sb2[256];

			if (a.dtype != b.dtype || a.rank != b.rank ||
			    memcmp(a.dims, b.dims,
				   a.rank * sizeof *a.dims) != 0) {
				usc_tensor_spec_format(&a, sa, sizeof sa);
				usc_tensor_spec_format(&b, sb2, sizeof sb2);
				st = usc__fail(err, USC_EINVAL,
					       "device output %zu%s is %s; the "
					       "kernel computes %s",
					       i, set_count > 1 ? " of a set" : "",
					       sb2, sa);
				goto fail;
			}
			el += usc_tensor_count(dev[i]);
		}
		elements = el;
	}
	scratch = usc__calloc(elements ? elements : 1, sizeof *scratch);
	if (!scratch) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t k = 0; k < set_count; k++) {
		set_state *ss = &sets[k];
		usc_signature_report *r = usc__calloc(1, sizeof *r);

		if (!r) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto fail;
		}
		ss->r = r;
		ss->s.nout = device_count;
		ss->s.dev = devices + k * device_count;
		ss->s.ref = ref;
		ss->s.elements = elements;
		ss->s.scratch = scratch;
		r->min_fraction = o.min_fraction;
		r->elements = elements;
		r->kernel_name = usc__strdup(m->name ? m->name : "kernel");
		if (!r->kernel_name) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto fail;
		}
		/* The identity: the kernel as written. */
		memset(&cand, 0, sizeof cand);
		cand.kind = USC_MUT_NONE;
		snprintf(cand.detail, sizeof cand.detail,
			 "the strict reference");
		score(&ss->s, (const usc_tensor *const *)mut, &cand, NULL);
		r->identity = cand;
		r->differing = elements - cand.reproduced;
		if (r->differing == 0) {
			r->verdict = USC_SIGNATURE_NO_DIFFERENCE;
			continue;
		}
		searching++;
		if (!score_output_zero(ss)) {
			st = usc__fail(err, USC_ENOMEM, "out of memory");
			goto fail;
		}
	}
	if (searching == 0)
		goto rank;
	st = print_base(m, &bt, err);
	if (st != USC_OK)
		goto fail;
	/*
	 * Every mutant is evaluated once and scored against every set that
	 * differs from the reference: a set's budget counts are the
	 * search's.
	 */
	{
		size_t enumerated = 0, evaluated = 0, no_effect = 0, failed = 0,
		       skipped = 0;

		for (size_t ci = 0; ci < m->computation_count; ci++) {
			const usc_hlo_computation *comp = m->computations[ci];

			for (size_t ii = 0; ii < comp->instr_count; ii++) {
				const usc_hlo_instr *in = comp->instrs[ii];

				for (int k = USC_MUT_NONE + 1;
				     k < USC_MUT_OUTPUT_ZERO; k++) {
					for (int v = 0;
					     v < usc_mutation_variants(
							 (usc_mutation)k);
					     v++) {
						char *text = NULL;
						bool applies = false;
						bool noeff = false, ok = true;
						usc_hlo_file *mf = NULL;
						usc_error e2;

						/*
						 * Past the budget a mutant is only
						 * counted: its text is not built.
						 */
						bool over =
							(o.max_candidates &&
							 evaluated >=
								 o.max_candidates) ||
							now_seconds() - t0 >
								o.max_seconds;

						memset(&cand, 0, sizeof cand);
						st = build_mutant(
							&bt, in,
							(usc_mutation)k, v,
							&applies, cand.detail,
							sizeof cand.detail,
							over ? NULL : &text,
							err);
						if (st != USC_OK)
							goto fail;
						if (!applies)
							continue;
						enumerated++;
						if (over) {
							skipped++;
							continue;
						}
						evaluated++;
						usc_error_clear(&e2);
						if (usc_hlo_parse(text,
								  strlen(text),
								  "<mutant>",
								  &mf,
								  &e2) !=
							    USC_OK ||
						    usc_hlo_file_module_count(
							    mf) < 1 ||
						    evaluate(usc_hlo_file_module(
								     mf, 0),
							     inputs,
							     input_count, &o,
							     mut, device_count,
							     &e2) != USC_OK) {
							if (getenv("USC_SIGNATURE_DEBUG"))
								fprintf(stderr,
									"signature: %s %s/%d: %s\n",
									in->name,
									usc_mutation_name(
										(usc_mutation)k),
									v,
									e2.message);
							failed++;
							ok = false;
						}
						usc_hlo_file_destroy(mf);
						usc__free(text);
						cand.kind = (usc_mutation)k;
						cand.variant = v;
						for (size_t si = 0;
						     ok && si < set_count;
						     si++) {
							set_state *ss =
								&sets[si];
							usc_signature_candidate
								c2 = cand;

							if (!ss->r->differing)
								continue;
							score(&ss->s,
							      (const usc_tensor *const *)
								      mut,
							      &c2, &noeff);
							/* Relative to the reference: the
							 * same for every set. */
							if (noeff) {
								no_effect++;
								break;
							}
							if (!push(&ss->list,
								  &ss->n,
								  &ss->cap,
								  &c2, in)) {
								st = usc__fail(
									err,
									USC_ENOMEM,
									"out of memory");
								goto fail;
							}
						}
						for (size_t i = 0;
						     i < device_count; i++) {
							usc_tensor_destroy(
								mut[i]);
							mut[i] = NULL;
						}
					}
				}
			}
		}
		for (size_t k = 0; k < set_count; k++) {
			usc_signature_report *r = sets[k].r;

			if (!r->differing)
				continue;
			r->enumerated = enumerated;
			r->evaluated = evaluated;
			r->no_effect = no_effect;
			r->failed = failed;
			r->skipped = skipped;
			r->budget_exhausted = skipped > 0;
		}
	}
rank:
	for (size_t k = 0; k < set_count; k++) {
		rank_set(&sets[k], &o);
		sets[k].r->seconds = now_seconds() - t0;
		out[k] = sets[k].r;
		sets[k].r = NULL;
	}
	st = USC_OK;
	goto done;
fail:
	for (size_t k = 0; k < set_count; k++)
		out[k] = NULL;
done:
	usc_hlo_text_free(bt.text);
	if (ref)
		for (size_t i = 0; i < device_count; i++)
			usc_tensor_destroy(ref[i]);
	if (mut)
		for (size_t i = 0; i < device_count; i++)
			usc_tensor_destroy(mut[i]);
	for (size_t k = 0; sets && k < set_count; k++) {
		for (size_t i = 0; i < sets[k].n; i++)
			cand_free(&sets[k].list[i]);
		usc__free(sets[k].list);
		usc_signature_report_destroy(sets[k].r);
	}
	usc__free(sets);
	usc__free(ref);
	usc__free(scratch);
	usc__free(mut);
	return st;
}

usc_status usc_signature_search(const usc_hlo_module *m,
				const usc_tensor *const *inputs,
				size_t input_count,
				const usc_tensor *const *devices,
				size_t device_count,
				const usc_signature_options *opts,
				usc_signature_report **out, usc_error *err)
{
	return usc_signature_search_sets(m, inputs, input_count, devices,
					 device_count, 1, opts, out, err);
}


/* -------------------------------------------------------- from files */

usc_status usc_signature_run_sets(const usc_signature_request *req,
				  usc_signature_report **out, usc_error *err)
{
	usc_hlo_file *f = NULL, *kf = NULL;
	const usc_hlo_module *m;
	usc_tensor **in = NULL, **dev = NULL;
	usc_eval *ev = NULL;
	usc_eval_options eo = usc_eval_options_default();
	size_t np = 0, nout = 0, sets = req->sets ? req->sets : 1;
	usc_status st;

	for (size_t k = 0; k < sets; k++)
		out[k] = NULL;
	st = usc_hlo_parse_file(req->hlo_path, &f, err);
	if (st != USC_OK)
		return st;
	if (usc_hlo_file_module_count(f) < 1) {
		st = usc__fail(err, USC_EINVAL, "%s holds no module",
			       req->hlo_path);
		goto done;
	}
	m = usc_hlo_file_module(f, 0);
	if (req->fusion) {
		st = usc_hlo_extract_fusion_file(m, req->fusion, &kf, err);
		if (st != USC_OK)
			goto done;
		m = usc_hlo_file_module(kf, 0);
	}
	/* The parameters' and outputs' types, from an evaluator. */
	eo.reduce_order = req->options.reduce_order;
	st = usc_eval_create(m, &eo, &ev, err);
	if (st != USC_OK) {
		char msg[USC_ERROR_MESSAGE_SIZE];

		snprintf(msg, sizeof msg, "%s", err ? err->message : "");
		st = usc__fail(err, st, "%s: %s", req->hlo_path, msg);
		goto done;
	}
	np = usc_eval_param_count(ev);
	if (req->input_count != np) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel takes %zu parameter(s); %zu "
			       "input(s) given",
			       req->hlo_path, np, req->input_count);
		goto done;
	}
	in = usc__calloc(np ? np : 1, sizeof *in);
	if (!in) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < np; i++) {
		usc_tensor_spec sp;
		char what[64];

		usc_eval_param_spec(ev, i, &sp, NULL);
		snprintf(what, sizeof what, "parameter %zu", i);
		sp.what = what;
		st = usc_tensor_read(req->inputs[i], &sp,
				     req->raw ? USC_TENSOR_READ_RAW : 0, &in[i],
				     err);
		if (st == USC_OK)
			st = usc_eval_bind(ev, i, in[i], err);
		if (st != USC_OK)
			goto done;
	}
	/* One run of the reference gives the outputs' types and shapes. */
	st = usc_eval_run(ev, err);
	if (st != USC_OK)
		goto done;
	nout = usc_eval_output_count(ev);
	if (req->device_count != nout) {
		st = usc__fail(err, USC_EINVAL,
			       "%s: the kernel has %zu output(s); %zu device "
			       "output(s) given",
			       req->hlo_path, nout, req->device_count);
		goto done;
	}
	dev = usc__calloc(nout ? nout * sets : 1, sizeof *dev);
	if (!dev) {
		st = usc__fail(err, USC_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nout * sets; i++) {
		const usc_tensor *t = NULL;
		usc_tensor_spec sp;
		char what[64];

		usc_eval_output(ev, i % nout, &t, NULL);
		sp = usc_tensor_spec_of(t);
		if (sets > 1)
			snprintf(what, sizeof what,
				 "device output %zu of set %zu", i % nout,
				 i / nout);
		else
			snprintf(what, sizeof what, "device output %zu", i);
		sp.what = what;
		st = usc_tensor_read(req->devices[i], &sp,
				     req->raw ? USC_TENSOR_READ_RAW : 0,
				     &dev[i], err);
		if (st != USC_OK)
			goto done;
	}
	usc_eval_destroy(ev);
	ev = NULL;
	st = usc_signature_search_sets(m, (const usc_tensor *const *)in, np,
				       (const usc_tensor *const *)dev, nout,
				       sets, &req->options, out, err);
done:
	usc_eval_destroy(ev);
	for (size_t i = 0; in && i < np; i++)
		usc_tensor_destroy(in[i]);
	for (size_t i = 0; dev && i < nout * sets; i++)
		usc_tensor_destroy(dev[i]);
	usc__free(in);
	usc__free(dev);
	usc_hlo_file_destroy(kf);
	usc_hlo_file_destroy(f);
	return st;
}

usc_status usc_signature_run(const usc_signature_request *req,
			     usc_signature_report **out, usc_error *err)
{
	*out = NULL;
	if (req->sets > 1)
		return usc__fail(err, USC_EINVAL,
				 "%zu device sets given to a search of one "
				 "(usc_signature_run_sets takes several)",
				 req->sets);
	return usc_signature_run_sets(req, out, err);
}

/*
 * A case's files are the ENTRY's parameters and results (docs/cases.md),
 * so the search mutates the whole module: every op of every computation,
 * the main fusion's among them.
 */
usc_status usc_signature_case(const char *dir,
			      const usc_signature_request *base,
			      usc_signature_report **out, usc_error *err)
{
	usc_signature_request req = base ? *base
					 : usc_signature_request_default();
	char *hlo = NULL;
	char **inputs = NULL, **devices = NULL;
	size_t ni = 0, nd = 0;
	usc_status st;

	*out = NULL;
	st = usc__case_kernel(dir, &hlo, err);
	if (st != USC_OK)
		return st;
	st = usc__case_collect(dir, "input", &inputs, &ni, err);
	if (st == USC_OK && req.device_count == 0)
		st = usc__case_collect(dir, "device", &devices, &nd, err);
	if (st != USC_OK)
		goto done;
	if (req.device_count == 0) {
		if (nd == 0) {
			st = usc__fail(err, USC_EIO, "%s: no device_0.npy",
				       dir);
			goto done;
		}
		req.device_count = nd;
		req.devices = (const char *const *)devices;
	}
	req.hlo_path = hlo;
	req.fusion = NULL;
	req.input_count = ni;
	req.inputs = (const char *const *)inputs;
	st = usc_signature_run(&req, out, err);
done:
	usc__case_free_list(inputs, ni);
	usc__case_free_list(devices, nd);
	usc__free(hlo);
	return st;
}
