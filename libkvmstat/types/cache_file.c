/*
 * cache_file.c - the layout cache's file format: the one parser of cache
 * bytes (lc_parse, and kvs_lcache_parse for tests and fuzzing) and the
 * writer (lc_encode), with the file's FNV-1a 64 checksum.  Where the file
 * lives, which identity it must carry, and when it is read, merged and
 * written are cache.c's; decoded entries go into cache.c's store
 * (lc_store_add), which keeps them.
 *
 * Never a wrong answer: lc_parse checks the checksum, then decodes every
 * record against its own bounds and the file's end (lengths, enum values,
 * string lengths); anything off and the whole file is refused, with the
 * reason for cache.c's one warning.
 *
 * Format (little-endian): header "KVSLC001", u32 header size (32), u32
 * identity length, u32 record count, u32 reserved, u64 checksum; the
 * identity bytes; then records: u8 question ('T' type, 'M' member, 'V'
 * variable, 'L' members list), u8 status (0 found, 1 not found), u16 0,
 * u32 record length; string a, string b (u16 length + bytes; 0xffff =
 * none); found T/M/V: typeinfo (offset, size, count, elem_size: u64;
 * kind, elem_kind, bit_size, bit_offset: u32; type_name string); found L:
 * u32 count, then per member: name string, offset, bit_offset, size: u64;
 * bit_size, kind, depth: u32; type_name string; not found: the message.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"

#define LC_MAGIC "KVSLC001"
#define LC_HDR 32u
#define LC_NONE 0xffffu

/* ------------------------------------------------------------- decoding */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t
rd_u(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A string (malloc'ed, NUL-terminated); *none for the 0xffff marker. */
static char *
rd_str(struct rd *r, bool *none)
{
	uint64_t n = rd_u(r, 2);
	char *s;

	*none = false;
	if (r->bad)
		return NULL;
	if (n == LC_NONE) {
		*none = true;
		return NULL;
	}
	if (n > LC_MAXSTR || (uint64_t)(r->end - r->p) < n ||
	    memchr(r->p, 0, n) != NULL) {
		r->bad = true;
		return NULL;
	}
	if ((s = malloc(n + 1)) == NULL) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	return s;
}

static bool
kind_ok(uint64_t k)
{
	return k <= KVS_KIND_VOID;
}

/* One record at r into e; false: malformed. */
static bool
rd_record(struct rd *rec, struct lc_ent *e)
{
	char *a, *b;
	bool none;
	uint64_t q = rd_u(rec, 1), st = rd_u(rec, 1), z = rd_u(rec, 2);

	memset(e, 0, sizeof(*e));
	(void)rd_u(rec, 4); /* the record length, checked by the caller */
	if (rec->bad || z != 0 || (q != 'T' && q != 'M' && q != 'V' &&
	    q != 'L') || st > 1)
		return false;
	e->q = (uint8_t)q;
	e->status = (uint8_t)st;
	a = rd_str(rec, &none);
	if (a == NULL)
		return false;
	b = rd_str(rec, &none);
	if (rec->bad || (b == NULL) != (q != 'M')) {
		free(a);
		free(b);
		return false;
	}
	e->key = lc_make_key((char)q, a, b);
	free(a);
	free(b);
	if (e->key == NULL)
		return false;
	if (st == 1) {
		if ((e->msg = rd_str(rec, &none)) == NULL)
			return false;
	} else if (q != 'L') {
		struct kvs_typeinfo *ti = &e->ti;
		uint64_t k, ek;
		ti->offset = rd_u(rec, 8);
		ti->size = rd_u(rec, 8);
		ti->count = rd_u(rec, 8);
		ti->elem_size = rd_u(rec, 8);
		k = rd_u(rec, 4);
		ek = rd_u(rec, 4);
		ti->bit_size = (unsigned)rd_u(rec, 4);
		ti->bit_offset = (unsigned)rd_u(rec, 4);
		if (rec->bad || !kind_ok(k) || !kind_ok(ek) || ti->bit_size > 64 ||
		    ti->bit_offset > 7)
			return false;
		ti->kind = (kvs_kind_t)k;
		ti->elem_kind = (kvs_kind_t)ek;
		if ((ti->type_name = rd_str(rec, &none)) == NULL)
			return false;
	} else {
		uint64_t n = rd_u(rec, 4), i;
		/* each member takes at least 40 bytes: bounds the allocation */
		if (rec->bad || n > (uint64_t)(rec->end - rec->p) / 40 + 1)
			return false;
		if (n > 0 && (e->mem = calloc(n, sizeof(*e->mem))) == NULL)
			return false;
		for (i = 0; i < n; i++) {
			struct kvs_member_info *m = &e->mem[i];
			uint64_t k;
			e->nmem = i + 1;
			m->name = rd_str(rec, &none);
			if (m->name == NULL && !none)
				return false;
			m->offset = rd_u(rec, 8);
			m->bit_offset = rd_u(rec, 8);
			m->size = rd_u(rec, 8);
			m->bit_size = (unsigned)rd_u(rec, 4);
			k = rd_u(rec, 4);
			m->depth = (unsigned)rd_u(rec, 4);
			if (rec->bad || !kind_ok(k) || m->bit_size > 64 ||
			    m->depth > 64 || m->offset != m->bit_offset / 8)
				return false;
			m->kind = (kvs_kind_t)k;
			if ((m->type_name = rd_str(rec, &none)) == NULL)
				return false;
		}
	}
	return !rec->bad && rec->p == rec->end;
}

/*
 * Parse a cache file's bytes into c (which may hold entries: those of the
 * file are added where c has none).  want: the identity the file must
 * have, or NULL for any.  0, or -1 with why set (the store is left as it
 * was before the call when the file is bad: records are added only once all
 * have decoded).  The one place that reads cache bytes.
 */
int
lc_parse(struct kvs_lcache *c, const uint8_t *buf, size_t len,
    const char *want, char **ident_out, unsigned *nrec_out, const char **why)
{
	struct rd r = { buf, buf + len, false };
	uint64_t hlen, ilen, nrec, sum, i;
	struct lc_ent *tmp = NULL;
	size_t ntmp = 0;
	int rc = -1;

	if (ident_out != NULL)
		*ident_out = NULL;
	if (len < LC_HDR || memcmp(buf, LC_MAGIC, 8) != 0) {
		*why = "not a kvmstat layout cache (bad magic)";
		return -1;
	}
	r.p += 8;
	hlen = rd_u(&r, 4);
	ilen = rd_u(&r, 4);
	nrec = rd_u(&r, 4);
	(void)rd_u(&r, 4);
	sum = rd_u(&r, 8);
	if (hlen != LC_HDR || ilen == 0 || ilen > LC_MAXSTR || ilen > len - LC_HDR) {
		*why = "bad header";
		return -1;
	}
	if (fnv_bytes(FNV0, buf + LC_HDR, len - LC_HDR) != sum) {
		*why = "checksum mismatch";
		return -1;
	}
	if (memchr(buf + LC_HDR, 0, ilen) != NULL) {
		*why = "bad identity";
		return -1;
	}
	if (want != NULL && (strlen(want) != ilen ||
	    memcmp(want, buf + LC_HDR, ilen) != 0)) {
		*why = "made for another kernel file";
		return -1;
	}
	r.p = buf + LC_HDR + ilen;
	/* a record takes at least 12 bytes */
	if (nrec > (len - LC_HDR - ilen) / 12) {
		*why = "bad record count";
		return -1;
	}
	if (nrec > 0 && (tmp = calloc(nrec, sizeof(*tmp))) == NULL) {
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < nrec; i++) {
		struct rd rec;
		uint64_t rl;
		const uint8_t *start = r.p;

		if ((size_t)(r.end - r.p) < 8) {
			*why = "truncated record";
			goto out;
		}
		rl = (uint64_t)start[4] | (uint64_t)start[5] << 8 |
		    (uint64_t)start[6] << 16 | (uint64_t)start[7] << 24;
		if (rl < 12 || rl > (uint64_t)(r.end - r.p)) {
			*why = "bad record length";
			goto out;
		}
		rec.p = start;
		rec.end = start + rl;
		rec.bad = false;
		if (!rd_record(&rec, &tmp[ntmp])) {
			lc_ent_free(&tmp[ntmp]);
			*why = "bad record";
			goto out;
		}
		ntmp++;
		r.p = start + rl;
	}
	if (r.p != r.end) {
		*why = "trailing bytes";
		goto out;
	}
	for (i = 0; i < ntmp; i++) {
		if (c == NULL)
			lc_ent_free(&tmp[i]);
		else if (!lc_store_add(c, &tmp[i])) {
			uint64_t j;
			for (j = i + 1; j < ntmp; j++)
				lc_ent_free(&tmp[j]);
			free(tmp);
			*why = "out of memory";
			return -1;
		}
	}
	ntmp = 0;
	if (nrec_out != NULL)
		*nrec_out = (unsigned)nrec;
	if (ident_out != NULL)
		*ident_out = strndup((const char *)buf + LC_HDR, ilen);
	rc = 0;
out:
	for (i = 0; i < ntmp; i++)
		lc_ent_free(&tmp[i]);
	free(tmp);
	return rc;
}

/* For the fuzz helper and tests: 0 if buf is a cache file this library
 * would use (every record decoded), -1 otherwise. */
int
kvs_lcache_parse(const void *buf, size_t len)
{
	struct kvs_lcache c;
	const char *why = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = lc_parse(&c, buf, len, NULL, NULL, NULL, &why);
	lc_store_clear(&c);
	return rc;
}

/* ------------------------------------------------------------- encoding */

static void
wr_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->nomem)
		return;
	if (w->n + n > w->cap) {
		size_t nc = w->cap ? w->cap : 4096;
		uint8_t *b;
		while (nc < w->n + n)
			nc *= 2;
		if ((b = realloc(w->p, nc)) == NULL) {
			w->nomem = true;
			return;
		}
		w->p = b;
		w->cap = nc;
	}
	memcpy(w->p + w->n, p, n);
	w->n += n;
}

static void
wr_u(struct wr *w, uint64_t v, unsigned n)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wr_bytes(w, b, n);
}

static void
wr_str(struct wr *w, const char *s)
{
	size_t n;

	if (s == NULL) {
		wr_u(w, LC_NONE, 2);
		return;
	}
	n = strlen(s);
	if (n > LC_MAXSTR)
		n = LC_MAXSTR; /* never: keys and names longer are not cached */
	wr_u(w, n, 2);
	wr_bytes(w, s, n);
}

static void
wr_record(struct wr *w, const struct lc_ent *e)
{
	size_t start = w->n, i;
	const char *sep = strchr(e->key + 1, 0x1f);
	char *a = strndup(e->key + 1, (size_t)(sep - e->key - 1));

	if (a == NULL) {
		w->nomem = true;
		return;
	}
	wr_u(w, e->q, 1);
	wr_u(w, e->status, 1);
	wr_u(w, 0, 2);
	wr_u(w, 0, 4); /* length, patched below */
	wr_str(w, a);
	wr_str(w, e->q == 'M' ? sep + 1 : NULL);
	free(a);
	if (e->status != 0)
		wr_str(w, e->msg);
	else if (e->q != 'L') {
		wr_u(w, e->ti.offset, 8);
		wr_u(w, e->ti.size, 8);
		wr_u(w, e->ti.count, 8);
		wr_u(w, e->ti.elem_size, 8);
		wr_u(w, (uint64_t)e->ti.kind, 4);
		wr_u(w, (uint64_t)e->ti.elem_kind, 4);
		wr_u(w, e->ti.bit_size, 4);
		wr_u(w, e->ti.bit_offset, 4);
		wr_str(w, e->ti.type_name);
	} else {
		wr_u(w, e->nmem, 4);
		for (i = 0; i < e->nmem; i++) {
			const struct kvs_member_info *m = &e->mem[i];
			wr_str(w, m->name);
			wr_u(w, m->offset, 8);
			wr_u(w, m->bit_offset, 8);
			wr_u(w, m->size, 8);
			wr_u(w, m->bit_size, 4);
			wr_u(w, (uint64_t)m->kind, 4);
			wr_u(w, m->depth, 4);
			wr_str(w, m->type_name);
		}
	}
	if (!w->nomem) {
		uint64_t len = w->n - start;
		for (i = 0; i < 4; i++)
			w->p[start + 4 + i] = (uint8_t)(len >> (8 * i));
	}
}

/* The whole file for c's entries. */
bool
lc_encode(const struct kvs_lcache *c, struct wr *w)
{
	size_t i, il = strlen(c->ident);

	wr_bytes(w, LC_MAGIC, 8);
	wr_u(w, LC_HDR, 4);
	wr_u(w, il, 4);
	wr_u(w, c->n, 4);
	wr_u(w, 0, 4);
	wr_u(w, 0, 8); /* checksum, patched below */
	wr_bytes(w, c->ident, il);
	for (i = 0; i < c->n; i++)
		wr_record(w, &c->ent[i]);
	if (w->nomem)
		return false;
	{
		uint64_t sum = fnv_bytes(FNV0, w->p + LC_HDR, w->n - LC_HDR);
		for (i = 0; i < 8; i++)
			w->p[24 + i] = (uint8_t)(sum >> (8 * i));
	}
	return true;
}
