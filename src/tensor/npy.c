/*
 * The .npy format (numpy's NEP 1, versions 1.0, 2.0 and 3.0): a magic
 * string, a version, a header length, a header that is a Python dict
 * literal with the keys descr, fortran_order and shape, then the data.
 *
 * The header is parsed by a small strict parser of exactly the literal
 * numpy writes (never evaluated), so any malformed header ends in a message
 * with the column where the parser gave up.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tensor/tensor_internal.h"

/* numpy refuses headers above 10000 bytes by default; a real one of rank
 * 64 needs under 2000.  This bound only protects memory. */
#define NPY_MAX_HEADER (1u << 20)

/* Where the bytes come from: a file or a buffer. */
typedef struct npy_src {
	const char *name;
	FILE *fp;
	const unsigned char *mem;
	uint64_t size;
} npy_src;

static usc_status src_read(const npy_src *s, uint64_t off, void *dst, size_t n,
			   usc_error *err)
{
	if (n == 0)
		return USC_OK;
	if (s->mem) {
		memcpy(dst, s->mem + off, n);
		return USC_OK;
	}
	if (fseeko(s->fp, (off_t)off, SEEK_SET) != 0 ||
	    fread(dst, 1, n, s->fp) != n)
		return usc__fail(err, USC_EIO, "%s: read error: %s", s->name,
				 ferror(s->fp) ? strerror(errno)
					       : "file shrank while read");
	return USC_OK;
}

/* ------------------------------------------------------------------ */
/* The header                                                          */

typedef struct npy_header {
	char descr[64];
	bool descr_is_list;
	bool fortran;
	size_t rank;
	int64_t dims[USC_TENSOR_MAX_RANK];
} npy_header;

typedef struct hparser {
	const char *s;
	size_t n;
	size_t pos;
	const char *name;
	usc_error *err;
} hparser;

static usc_status hfail(hparser *p, const char *what)
{
	return usc__fail(p->err, USC_EPARSE,
			 "%s: bad .npy header: %s at column %zu", p->name, what,
			 p->pos + 1);
}

static void skip_ws(hparser *p)
{
	while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				 p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static bool peek(hparser *p, char c)
{
	skip_ws(p);
	return p->pos < p->n && p->s[p->pos] == c;
}

static bool eat(hparser *p, char c)
{
	if (!peek(p, c))
		return false;
	p->pos++;
	return true;
}

/* A Python string literal without escapes, into buf. */
static usc_status parse_string(hparser *p, char *buf, size_t size)
{
	char q;
	size_t start, len;

	skip_ws(p);
	if (p->pos >= p->n || (p->s[p->pos] != '\'' && p->s[p->pos] != '"'))
		return hfail(p, "expected a string");
	q = p->s[p->pos++];
	start = p->pos;
	while (p->pos < p->n && p->s[p->pos] != q) {
		if (p->s[p->pos] == '\\' || p->s[p->pos] == '\n')
			return hfail(p, "unsupported character in string");
		p->pos++;
	}
	if (p->pos >= p->n)
		return hfail(p, "unterminated string");
	len = p->pos - start;
	if (len >= size)
		return hfail(p, "string too long");
	memcpy(buf, p->s + start, len);
	buf[len] = '\0';
	p->pos++;
	return USC_OK;
}

static bool match_word(hparser *p, const char *w)
{
	size_t n = strlen(w);

	skip_ws(p);
	if (p->n - p->pos < n || memcmp(p->s + p->pos, w, n) != 0)
		return false;
	/* "Truex" is a name, not True. */
	if (p->pos + n < p->n) {
		char c = p->s[p->pos + n];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_')
			return false;
	}
	p->pos += n;
	return true;
}

static usc_status parse_bool(hparser *p, bool *out)
{
	if (match_word(p, "True"))
		*out = true;
	else if (match_word(p, "False"))
		*out = false;
	else
		return hfail(p, "fortran_order is not True or False");
	return USC_OK;
}

/* One dimension: a non-negative decimal integer, with Python 2's L. */
static usc_status parse_dim(hparser *p, int64_t *out)
{
	uint64_t v = 0;
	size_t start;

	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == '-')
		return hfail(p, "negative dimension");
	start = p->pos;
	while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
		unsigned d = (unsigned)(p->s[p->pos] - '0');

		if (v > ((uint64_t)INT64_MAX - d) / 10) {
			p->pos = start;
			return hfail(p, "dimension too large");
		}
		v = v * 10 + d;
		p->pos++;
	}
	if (p->pos == start)
		return hfail(p, "expected a dimension");
	if (p->pos < p->n && p->s[p->pos] == 'L')
		p->pos++;
	*out = (int64_t)v;
	return USC_OK;
}

static usc_status parse_shape(hparser *p, npy_header *h)
{
	usc_status st;

	if (!eat(p, '('))
		return hfail(p, "shape is not a tuple");
	h->rank = 0;
	if (eat(p, ')'))
		return USC_OK;
	for (;;) {
		if (h->rank == USC_TENSOR_MAX_RANK)
			return hfail(p, "too many dimensions");
		st = parse_dim(p, &h->dims[h->rank++]);
		if (st != USC_OK)
			return st;
		if (eat(p, ')')) {
			/* (4) is the number 4 in Python, not a tuple. */
			if (h->rank == 1) {
				p->pos--;
				return hfail(p, "shape (n) is not a tuple, "
						"write (n,)");
			}
			return USC_OK;
		}
		if (!eat(p, ','))
			return hfail(p, "expected ',' or ')' in shape");
		if (eat(p, ')'))
			return USC_OK;
	}
}

static usc_status parse_header(const char *s, size_t n, const char *name,
			       npy_header *h, usc_error *err)
{
	hparser p = {s, n, 0, name, err};
	bool seen[3] = {false, false, false};
	static const char *const keys[3] = {"descr", "fortran_order", "shape"};
	usc_status st;

	memset(h, 0, sizeof *h);
	if (!eat(&p, '{'))
		return hfail(&p, "expected '{'");
	while (!eat(&p, '}')) {
		char key[32];
		size_t k, key_pos;

		key_pos = (skip_ws(&p), p.pos);
		st = parse_string(&p, key, sizeof key);
		if (st != USC_OK)
			return st;
		for (k = 0; k < 3 && strcmp(key, keys[k]) != 0; k++)
			;
		if (k == 3 || seen[k]) {
			char msg[96];

			p.pos = key_pos;
			snprintf(msg, sizeof msg, "%s key '%s'",
				 k == 3 ? "unknown" : "duplicate", key);
			return hfail(&p, msg);
		}
		seen[k] = true;
		if (!eat(&p, ':'))
			return hfail(&p, "expected ':'");
		if (k == 0) {
			if (peek(&p, '[')) {
				h->descr_is_list = true;
				return usc__fail(err, USC_EUNSUPPORTED,
						 "%s: structured dtypes are "
						 "not supported",
						 name);
			}
			st = parse_string(&p, h->descr, sizeof h->descr);
		} else if (k == 1) {
			st = parse_bool(&p, &h->fortran);
		} else {
			st = parse_shape(&p, h);
		}
		if (st != USC_OK)
			return st;
		if (eat(&p, '}'))
			break;
		if (!eat(&p, ','))
			return hfail(&p, "expected ',' or '}'");
	}
	skip_ws(&p);
	if (p.pos != p.n)
		return hfail(&p, "text after the dict");
	for (size_t k = 0; k < 3; k++)
		if (!seen[k]) {
			char msg[64];

			snprintf(msg, sizeof msg, "missing key '%s'", keys[k]);
			return usc__fail(err, USC_EPARSE,
					 "%s: bad .npy header: %s", name, msg);
		}
	return USC_OK;
}

/*
 * Classifies a descr: a byte order character, a kind and a size.  ml_dtypes
 * writes float8_e5m2 as "<f1" (its type reports kind 'f'), bf16 as "<V2" and
 * every other extension type as "<V1".
 */
static usc_status parse_descr(const char *name, const char *d,
			      usc__file_elem *fe, usc_error *err)
{
	char order = d[0], kind;
	const char *digits = d + 2;
	unsigned long size = 0;

	memset(fe, 0, sizeof *fe);
	fe->text = d;
	fe->floating = USC_DTYPE_INVALID;
	if (order != '<' && order != '>' && order != '|' && order != '=')
		goto unknown;
	kind = d[1];
	if (kind == 'O')
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: object arrays are not supported (descr "
				 "%s)",
				 name, d);
	if (*digits < '1' || *digits > '9')
		goto unknown;
	for (; *digits >= '0' && *digits <= '9'; digits++) {
		size = size * 10 + (unsigned long)(*digits - '0');
		if (size > 1u << 20)
			goto unknown;
	}
	if (*digits)
		goto unknown;
	fe->size = size;
	fe->big_endian = order == '>';
	switch (kind) {
	case 'b':
		if (size != 1)
			goto unknown;
		fe->cls = USC__ELEM_BOOL;
		return USC_OK;
	case 'i':
	case 'u':
		if (size != 1 && size != 2 && size != 4 && size != 8)
			goto unknown;
		fe->cls = USC__ELEM_INT;
		return USC_OK;
	case 'V':
		fe->cls = USC__ELEM_RAW;
		return USC_OK;
	case 'f':
		fe->cls = USC__ELEM_FLOAT;
		fe->floating = size == 1   ? USC_F8E5M2
			       : size == 2 ? USC_F16
			       : size == 4 ? USC_F32
			       : size == 8 ? USC_F64
					   : USC_DTYPE_INVALID;
		if (fe->floating == USC_DTYPE_INVALID)
			goto unknown;
		return USC_OK;
	case 'c':
		fe->cls = USC__ELEM_COMPLEX;
		fe->floating = size == 8    ? USC_C64
			       : size == 16 ? USC_C128
					    : USC_DTYPE_INVALID;
		if (fe->floating == USC_DTYPE_INVALID)
			goto unknown;
		return USC_OK;
	default:
		break;
	}
unknown:
	return usc__fail(err, USC_EUNSUPPORTED, "%s: unknown dtype descr '%s'",
			 name, d);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

/*
 * Copies Fortran-order data into C order: walks the destination in C
 * order with an odometer, tracking the source offset incrementally.
 */
static void fortran_to_c(unsigned char *dst, const unsigned char *src,
			 size_t rank, const int64_t *dims, uint64_t count,
			 size_t elem)
{
	uint64_t stride[USC_TENSOR_MAX_RANK];
	int64_t idx[USC_TENSOR_MAX_RANK] = {0};
	uint64_t off = 0;

	for (size_t j = 0; j < rank; j++)
		stride[j] = j ? stride[j - 1] * (uint64_t)dims[j - 1] : 1;
	for (uint64_t i = 0; i < count; i++) {
		memcpy(dst + i * elem, src + off * elem, elem);
		for (size_t j = rank; j-- > 0;) {
			if (++idx[j] < dims[j]) {
				off += stride[j];
				break;
			}
			off -= stride[j] * (uint64_t)(dims[j] - 1);
			idx[j] = 0;
		}
	}
}

static usc_status read_npy(const npy_src *src, const usc_tensor_spec *spec,
			   usc_tensor **out, usc_error *err)
{
	unsigned char pre[12];
	unsigned major, minor;
	uint64_t hlen, data_off, count, have;
	size_t pre_len, nbytes;
	char *text = NULL;
	npy_header *h = NULL;
	usc__file_elem fe;
	usc_tensor *t = NULL;
	unsigned char *tmp = NULL;
	usc_status st;
	const char *name = src->name;

	/*
	 * A file shorter than the preamble that starts like one is truncated;
	 * anything else that does not start with the magic is not a .npy file.
	 */
	st = src_read(src, 0, pre, src->size < 8 ? (size_t)src->size : 8, err);
	if (st != USC_OK)
		return st;
	if (memcmp(pre, "\x93NUMPY", src->size < 6 ? (size_t)src->size : 6) != 0)
		return usc__fail(err, USC_EPARSE,
				 "%s: not a .npy file (bad magic)", name);
	if (src->size < 8)
		return usc__fail(err, USC_EPARSE,
				 "%s: truncated: file has %" PRIu64
				 " bytes, the .npy preamble needs at least 10",
				 name, src->size);
	major = pre[6];
	minor = pre[7];
	if ((major != 1 && major != 2 && major != 3) || minor != 0)
		return usc__fail(err, USC_EUNSUPPORTED,
				 "%s: unsupported .npy format version %u.%u",
				 name, major, minor);
	pre_len = major == 1 ? 10 : 12;
	if (src->size < pre_len)
		return usc__fail(err, USC_EPARSE,
				 "%s: truncated: file has %" PRIu64
				 " bytes, the .npy preamble needs %zu",
				 name, src->size, pre_len);
	st = src_read(src, 8, pre + 8, pre_len - 8, err);
	if (st != USC_OK)
		return st;
	hlen = major == 1 ? (uint64_t)pre[8] | (uint64_t)pre[9] << 8
			  : (uint64_t)pre[8] | (uint64_t)pre[9] << 8 |
				    (uint64_t)pre[10] << 16 |
				    (uint64_t)pre[11] << 24;
	if (hlen > NPY_MAX_HEADER)
		return usc__fail(err, USC_EPARSE,
				 "%s: header of %" PRIu64
				 " bytes is too long (limit %u)",
				 name, hlen, NPY_MAX_HEADER);
	if (src->size - pre_len < hlen)
		return usc__fail(err, USC_EPARSE,
				 "%s: truncated: header says %" PRIu64
				 " bytes of header, file has %" PRIu64,
				 name, hlen, src->size - pre_len);
	data_off = pre_len + hlen;
	text = usc__malloc((size_t)hlen + 1);
	h = usc__malloc(sizeof *h);
	if (!text || !h) {
		st = usc__fail(err, USC_ENOMEM, "%s: out of memory", name);
		goto done;
	}
	st = src_read(src, pre_len, text, (size_t)hlen, err);
	if (st != USC_OK)
		goto done;
	text[hlen] = '\0';
	if (memchr(text, '\0', (size_t)hlen)) {
		st = usc__fail(err, USC_EPARSE,
			       "%s: bad .npy header: NUL byte in header", name);
		goto done;
	}
	st = parse_header(text, (size_t)hlen, name, h, err);
	if (st != USC_OK)
		goto done;
	st = parse_descr(name, h->descr, &fe, err);
	if (st != USC_OK)
		goto done;
	st = usc__check_shape(name, spec, h->rank, h->dims, err);
	if (st != USC_OK)
		goto done;
	st = usc__check_elem(name, &fe, spec, err);
	if (st != USC_OK)
		goto done;
	if (!usc__shape_size(h->rank, h->dims, fe.size, &count, &nbytes)) {
		char shape[USC_ERROR_MESSAGE_SIZE / 2];

		usc__format_tuple(shape, sizeof shape, h->rank, h->dims);
		st = usc__fail(err, USC_ERANGE, "%s: shape %s is too large",
			       name, shape);
		goto done;
	}
	have = src->size - data_off;
	if (have != nbytes) {
		/*
		 * Trailing bytes are an error, not ignored: the file then
		 * holds something other than what its header describes, and
		 * an analysis tool must not guess which part is meant.
		 */
		st = usc__fail(err, USC_EPARSE,
			       "%s: %s: header says %zu bytes of data, file has "
			       "%" PRIu64,
			       name, have < nbytes ? "truncated" : "trailing data",
			       nbytes, have);
		goto done;
	}
	st = usc__tensor_new(spec->dtype, h->rank, h->dims, name, &t, err);
	if (st != USC_OK)
		goto done;
	if (h->fortran && h->rank > 1 && count > 1) {
		tmp = usc__malloc(nbytes);
		if (!tmp) {
			st = usc__fail(err, USC_ENOMEM, "%s: out of memory",
				       name);
			goto done;
		}
		st = src_read(src, data_off, tmp, nbytes, err);
		if (st != USC_OK)
			goto done;
		fortran_to_c(t->data, tmp, h->rank, h->dims, count, fe.size);
	} else {
		st = src_read(src, data_off, t->data, nbytes, err);
		if (st != USC_OK)
			goto done;
	}
	st = usc__tensor_canonicalize(t, fe.big_endian, name, err);
	if (st != USC_OK)
		goto done;
	*out = t;
	t = NULL;
done:
	usc_tensor_destroy(t);
	usc__free(tmp);
	usc__free(h);
	usc__free(text);
	return st;
}

usc_status usc_tensor_read_npy_mem(const void *data, size_t size,
				   const char *name,
				   const usc_tensor_spec *spec,
				   usc_tensor **out, usc_error *err)
{
	npy_src src = {name ? name : "<memory>", NULL, data, size};
	usc_status st = usc__reader_begin(spec, out, true, err);

	if (st != USC_OK)
		return st;
	if (!data && size)
		return usc__fail(err, USC_EINVAL, "%s: data is NULL", src.name);
	/* A zero-size buffer must still have a non-NULL pointer to copy from. */
	if (!data)
		src.mem = (const unsigned char *)"";
	return read_npy(&src, spec, out, err);
}

usc_status usc_tensor_read_npy(const char *path, const usc_tensor_spec *spec,
			       usc_tensor **out, usc_error *err)
{
	npy_src src = {path, NULL, NULL, 0};
	usc_status st = usc__reader_begin(spec, out, true, err);

	if (st != USC_OK)
		return st;
	if (!path)
		return usc__fail(err, USC_EINVAL, "usc_tensor_read_npy: path is "
						  "NULL");
	st = usc__open_regular(path, &src.fp, &src.size, err);
	if (st != USC_OK)
		return st;
	st = read_npy(&src, spec, out, err);
	fclose(src.fp);
	return st;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* The descr numpy (or ml_dtypes, for the types numpy lacks) writes. */
static const char *write_descr(usc_dtype t)
{
	switch (t) {
	case USC_PRED:
		return "|b1";
	case USC_S8:
		return "|i1";
	case USC_U8:
		return "|u1";
	case USC_S16:
		return "<i2";
	case USC_S32:
		return "<i4";
	case USC_S64:
		return "<i8";
	case USC_U16:
		return "<u2";
	case USC_U32:
		return "<u4";
	case USC_U64:
		return "<u8";
	case USC_F16:
		return "<f2";
	case USC_F32:
		return "<f4";
	case USC_F64:
		return "<f8";
	case USC_C64:
		return "<c8";
	case USC_C128:
		return "<c16";
	case USC_BF16:
		return "<V2";
	default:
		/*
		 * ml_dtypes itself writes f8e5m2 as "<f1", which np.load
		 * refuses; "<V1" loads everywhere and views back the same.
		 */
		return "<V1";
	}
}

usc_status usc_tensor_write_npy(const usc_tensor *t, const char *path,
				usc_error *err)
{
	char head[64 + USC_TENSOR_MAX_RANK * 22];
	char shape[USC_TENSOR_MAX_RANK * 22 + 4];
	unsigned char pre[12];
	size_t hlen, pre_len, total;
	char *tmp_path = NULL, *header = NULL;
	FILE *fp = NULL;
	usc_status st = USC_OK;
	int n;

	if (!t || !path)
		return usc__fail(err, USC_EINVAL,
				 "usc_tensor_write_npy: NULL argument");
	usc__format_tuple(shape, sizeof shape, t->rank, t->dims);
	n = snprintf(head, sizeof head,
		     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
		     write_descr(t->dtype), shape);
	if (n < 0 || (size_t)n >= sizeof head)
		return usc__fail(err, USC_EINVAL, "%s: header too long", path);
	hlen = (size_t)n;
	/*
	 * numpy pads the header with spaces and ends it with a newline so
	 * that the data start on a multiple of 64 bytes.  Version 1.0 has a
	 * 16-bit header length; past that, 2.0.
	 */
	pre_len = 10;
	total = (pre_len + hlen + 1 + 63) / 64 * 64;
	if (total - pre_len > 0xffff) {
		pre_len = 12;
		total = (pre_len + hlen + 1 + 63) / 64 * 64;
	}
	hlen = total - pre_len;
	header = usc__malloc(hlen);
	tmp_path = usc__malloc(strlen(path) + 5);
	if (!header || !tmp_path) {
		st = usc__fail(err, USC_ENOMEM, "%s: out of memory", path);
		goto done;
	}
	memset(header, ' ', hlen);
	memcpy(header, head, (size_t)n);
	header[hlen - 1] = '\n';
	memcpy(pre, "\x93NUMPY", 6);
	pre[6] = pre_len == 10 ? 1 : 2;
	pre[7] = 0;
	for (size_t i = 0; i < pre_len - 8; i++)
		pre[8 + i] = (unsigned char)(hlen >> (8 * i));
	strcpy(tmp_path, path);
	strcat(tmp_path, ".tmp");
	fp = fopen(tmp_path, "wb");
	if (!fp) {
		st = usc__fail(err, USC_EIO, "%s: cannot create: %s", tmp_path,
			       strerror(errno));
		goto done;
	}
	if (fwrite(pre, 1, pre_len, fp) != pre_len ||
	    fwrite(header, 1, hlen, fp) != hlen ||
	    fwrite(t->data, 1, t->nbytes, fp) != t->nbytes) {
		st = usc__fail(err, USC_EIO, "%s: write error: %s", tmp_path,
			       strerror(errno));
		fclose(fp);
		remove(tmp_path);
		goto done;
	}
	if (fclose(fp) != 0) {
		st = usc__fail(err, USC_EIO, "%s: write error: %s", tmp_path,
			       strerror(errno));
		remove(tmp_path);
		goto done;
	}
	if (rename(tmp_path, path) != 0) {
		st = usc__fail(err, USC_EIO, "%s: cannot rename %s: %s", path,
			       tmp_path, strerror(errno));
		remove(tmp_path);
	}
done:
	usc__free(tmp_path);
	usc__free(header);
	return st;
}
