/*
 * The evaluator's support: error messages that name an instruction,
 * row-major index helpers, attribute lookups, and the reference-counted
 * buffers and values that every op reads and writes (eval_internal.h).
 */
#include "eval_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ulpscope/dtype.h"

usc_status usc__eval_fail(usc_error *err, usc_status code,
			  const usc_hlo_instr *in, const char *fmt, ...)
{
	char msg[USC_ERROR_MESSAGE_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!in)
		return usc__fail(err, code, "%s", msg);
	return usc__fail(err, code, "%s at %u:%u (instruction '%s')", msg,
			 in->loc.line, in->loc.column, in->name);
}

/* ------------------------------------------------------ index helpers */

bool usc__next_index(int64_t *idx, const int64_t *dims, size_t rank)
{
	size_t d = rank;

	while (d-- > 0) {
		if (++idx[d] < dims[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

void usc__unravel(size_t flat, const int64_t *dims, size_t rank, int64_t *idx)
{
	size_t d = rank;

	while (d-- > 0) {
		if (dims[d] > 0) {
			idx[d] = (int64_t)(flat % (size_t)dims[d]);
			flat /= (size_t)dims[d];
		} else {
			idx[d] = 0;
		}
	}
}

size_t usc__ravel(const int64_t *idx, const int64_t *dims, size_t rank)
{
	size_t flat = 0, d;

	for (d = 0; d < rank; d++)
		flat = flat * (size_t)dims[d] + (size_t)idx[d];
	return flat;
}

const usc_hlo_attr *usc__attr_ints(const usc_hlo_instr *in, const char *name)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	return a && a->kind == USC_HLO_ATTR_INTS ? a : NULL;
}

bool usc__attr_has(const usc_hlo_attr *a, int64_t d)
{
	size_t i;

	if (!a)
		return false;
	for (i = 0; i < a->count; i++)
		if (a->ints[i] == d)
			return true;
	return false;
}

size_t usc__attr_count(const usc_hlo_attr *a)
{
	return a ? a->count : 0;
}

bool usc__attr_int(const usc_hlo_instr *in, const char *name, int64_t *out)
{
	const usc_hlo_attr *a = usc_hlo_instr_attr(in, name);

	if (!a || a->kind != USC_HLO_ATTR_INT)
		return false;
	*out = a->i;
	return true;
}

/* ------------------------------------------------------------ buffers */

/*
 * Spares.  The value arrays of a whole-array evaluation are large (2^20
 * tier values are 32 MB), and the C library serves blocks that large
 * from fresh pages of the system, so that each run of an evaluator
 * pays a page fault per 4 KB of every array of every instruction again:
 * the larger part of the tier's time on layer norm.  So a released
 * buffer's array of at least SPARE_MIN bytes of a plain-bytes domain
 * (no init or clear) is kept, up to eight of them, and the next buffer
 * that needs between 4/5 of a spare's size and its size takes it (zeroed
 * again where the caller needs zeros).  Destroy frees them.
 *
 * The spares never raise the evaluator's peak: live_bytes counts the
 * arrays of this kind that buffers hold, at their real sizes (a buffer
 * records its array's size and the evaluator that counts it), peak_bytes
 * the most live_bytes has been, and live_bytes + spare_bytes stays
 * within peak_bytes.  A release keeps the sum; a spare taken keeps it;
 * a fresh array first frees spares until the sum with it is within
 * what live_bytes alone reaches with it, so the memory these arrays
 * take at any moment is at most what it would be without spares.
 */
#define SPARE_MIN ((size_t)1 << 20)
#define SPARE_MAX (sizeof ((usc_eval *)0)->spare / \
		   sizeof ((usc_eval *)0)->spare[0])

void usc__ebuf_spares_free(usc_eval *ev)
{
	while (ev->nspare > 0)
		usc__free(ev->spare[--ev->nspare].p);
	ev->spare_bytes = 0;
}

static bool spare_kind(const usc_eval *ev, size_t bytes)
{
	return !ev->dom->init && !ev->dom->clear && bytes >= SPARE_MIN;
}

/*
 * A spare of between bytes and 5/4 of it, its size in *cap; or NULL.
 */
static void *spare_take(usc_eval *ev, size_t bytes, size_t *cap)
{
	size_t k;

	for (k = 0; k < ev->nspare; k++) {
		const struct usc__spare *s = &ev->spare[k];

		if (s->bytes >= bytes && s->bytes - s->bytes / 5 <= bytes) {
			void *p = s->p;

			*cap = s->bytes;
			ev->spare_bytes -= s->bytes;
			ev->spare[k] = ev->spare[--ev->nspare];
			return p;
		}
	}
	return NULL;
}

/*
 * Before a fresh array of bytes: frees spares until live, spares and
 * the new array together are within the larger of the peak so far and
 * what live_bytes alone will reach.
 */
static void spare_trim(usc_eval *ev, size_t bytes)
{
	size_t reach = ev->live_bytes + bytes;
	size_t room = reach > ev->peak_bytes ? reach : ev->peak_bytes;

	while (ev->nspare > 0 && reach + ev->spare_bytes > room) {
		ev->nspare--;
		ev->spare_bytes -= ev->spare[ev->nspare].bytes;
		usc__free(ev->spare[ev->nspare].p);
	}
}

/* Keeps b's array (b is being freed) as a spare, or frees it. */
static void spare_put(usc_eval *ev, usc__ebuf *b)
{
	/*
	 * An array another evaluator counts (a cone's may be released
	 * here), or none does, is freed, no count touched.
	 */
	if (b->acct != ev || b->cap == 0) {
		usc__free(b->values);
		return;
	}
	ev->live_bytes -= b->cap;
	if (ev->nspare == SPARE_MAX ||
	    ev->live_bytes + ev->spare_bytes + b->cap > ev->peak_bytes) {
		usc__free(b->values);
		return;
	}
	ev->spare[ev->nspare].p = b->values;
	ev->spare[ev->nspare++].bytes = b->cap;
	ev->spare_bytes += b->cap;
}

/*
 * A buffer of len values for count elements: zeroed and initialized by
 * the domain when zero, else left unset (the caller writes every value
 * before anything reads one).
 */
static usc_status ebuf_alloc(usc_eval *ev, usc_dtype t, size_t count,
			     size_t len, bool zero, usc__ebuf **out,
			     usc_error *err)
{
	usc__ebuf *b = usc__calloc(1, sizeof *b);
	size_t vs = ev->dom->value_size, bytes = (len ? len : 1) * vs;
	size_t cap = 0;

	if (!b)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	b->values = NULL;
	/* len * vs does not overflow when len <= SIZE_MAX / vs. */
	if (len <= SIZE_MAX / vs && spare_kind(ev, bytes)) {
		b->values = spare_take(ev, bytes, &cap);
		if (b->values && zero)
			memset(b->values, 0, bytes);
		if (!b->values) {
			spare_trim(ev, bytes);
			cap = bytes;
		}
	}
	if (!b->values)
		b->values = zero ? usc__calloc(len ? len : 1, vs)
				 : usc__reallocarray(NULL, len, vs);
	if (b->values && cap) {
		b->acct = ev;
		b->cap = cap;
		ev->live_bytes += cap;
		if (ev->live_bytes > ev->peak_bytes)
			ev->peak_bytes = ev->live_bytes;
	}
	if (!b->values) {
		usc__free(b);
		return usc__fail(err, USC_ENOMEM,
				 "out of memory for %zu values", len);
	}
	if (zero && ev->dom->init)
		ev->dom->init(ev->dstate, b->values, len);
	b->refs = 1;
	b->dtype = t;
	b->count = count;
	b->base = 0;
	b->len = len;
	*out = b;
	return USC_OK;
}

usc_status usc__ebuf_new_window(usc_eval *ev, usc_dtype t, size_t count,
				size_t len, usc__ebuf **out, usc_error *err)
{
	return ebuf_alloc(ev, t, count, len, true, out, err);
}

usc_status usc__ebuf_new(usc_eval *ev, usc_dtype t, size_t count,
			 usc__ebuf **out, usc_error *err)
{
	return usc__ebuf_new_window(ev, t, count, count, out, err);
}

/*
 * A buffer like usc__ebuf_new's whose every value the caller writes
 * before anything reads one (an input's load, a dot's result): for a
 * domain of plain bytes the values are left unset instead of zeroed,
 * which at a matmul's size is a measurable share of the run
 * (docs/performance-history.md, section 2).
 */
usc_status usc__ebuf_new_unset(usc_eval *ev, usc_dtype t, size_t count,
			       usc__ebuf **out, usc_error *err)
{
	return ebuf_alloc(ev, t, count, count, ev->dom->init || count == 0,
			  out, err);
}

/*
 * Whether elements [lo, hi) of tensor t go through the domain's array
 * entries (domain.h): the domain has the entry, the type is not complex
 * (the per-element path reports that), and the range lies in the tensor.
 */
bool usc__array_path(bool entry, const usc_tensor *t, size_t lo, size_t hi)
{
	const usc_format *f = usc_format_of(usc_tensor_dtype(t));

	return entry && f && f->kind != USC_KIND_COMPLEX && lo <= hi &&
	       hi <= (size_t)usc_tensor_count(t);
}

/* The encodings of tensor t from element lo on (array_path holds). */
const void *usc__enc_at(const usc_tensor *t, size_t lo)
{
	return (const unsigned char *)usc_tensor_cdata(t) +
	       lo * (size_t)usc_format_of(usc_tensor_dtype(t))->container_bytes;
}

/* The same, to write. */
void *usc__enc_at_mut(usc_tensor *t, size_t lo)
{
	return (unsigned char *)usc_tensor_data(t) +
	       lo * (size_t)usc_format_of(usc_tensor_dtype(t))->container_bytes;
}

void usc__ebuf_release(usc_eval *ev, usc__ebuf *b)
{
	/*
	 * A view's last reference releases its owner's: a loop rather than
	 * a call, so that no chain of views can cost a stack frame each.
	 */
	while (b && --b->refs <= 0) {
		usc__ebuf *owner = b->owner;

		if (!owner) {
			if (ev->dom->clear)
				ev->dom->clear(ev->dstate, b->values, b->len);
			spare_put(ev, b);
		}
		usc__free(b);
		b = owner;
	}
}

void usc__copy_values(usc_eval *ev, void *dst, const void *src, size_t n)
{
	if (ev->dom->copy)
		ev->dom->copy(ev->dstate, dst, src, n);
	else
		memcpy(dst, src, n * ev->dom->value_size);
}

void usc__evalue_clear(usc_eval *ev, usc__evalue *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		usc__ebuf_release(ev, v->leaves[i]);
	usc__free(v->leaves);
	v->leaves = NULL;
	v->n = 0;
}

usc_status usc__evalue_alloc(usc__evalue *v, size_t n, usc_error *err)
{
	v->leaves = usc__calloc(n ? n : 1, sizeof *v->leaves);
	if (!v->leaves)
		return usc__fail(err, USC_ENOMEM, "out of memory");
	v->n = n;
	return USC_OK;
}

/* The number of array leaves of a shape (a tuple's, depth-first). */
size_t usc__shape_leaves(const usc_hlo_shape *s)
{
	size_t n = 0, i;

	if (s->kind != USC_HLO_SHAPE_TUPLE)
		return 1;
	for (i = 0; i < s->tuple_count; i++)
		n += usc__shape_leaves(&s->tuple[i]);
	return n;
}

usc_status usc__evalue_share(usc__evalue *res, usc__ebuf *const *leaves,
			     size_t n, usc_error *err)
{
	usc_status st = usc__evalue_alloc(res, n, err);
	size_t i;

	if (st != USC_OK)
		return st;
	for (i = 0; i < n; i++) {
		res->leaves[i] = leaves[i];
		leaves[i]->refs++;
	}
	return USC_OK;
}
