/*
 * kdump_read.c - reading physical memory from a kdump-compressed dump
 * (kdump.c opened it): the rebuilt file read through the flattened
 * stream's record index, the rank table, page descriptors, decompression,
 * the page cache, split-dump parts, and what `info` reports.
 *
 * Finding a page's descriptor needs the number of set 2nd-bitmap bits
 * before its pfn.  A rank table holds the running count at every 4096-bit
 * block (8 bytes per 16 MiB of physical memory; a lookup is one load and at
 * most 64 popcounts), filled lazily up to the highest block a read needed,
 * as minidump.c does: opening reads the headers only, whatever the size.
 *
 * Decompressed pages go to a per-handle cache of 256 pages (64 sets of 4
 * ways, least recently used replaced within a set) whose hits and misses
 * `info` reports; raw pages are copied straight from the mapping and do not
 * touch it.  The decompressors are zlib, liblzo2, libsnappy and libzstd.
 *
 * Headers, the record index itself, joining parts and closing are
 * kdump.c's; kdump_internal.h holds the handle they share.
 */

#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "kdump_internal.h"

#define PD_LEN 24               /* offset, size, flags, page_flags */

/* Page descriptor flags (how the page is stored). */
#define PD_ZLIB 0x01U
#define PD_LZO 0x02U
#define PD_SNAPPY 0x04U
#define PD_ZSTD 0x20U
#define PD_COMPRESSED (PD_ZLIB | PD_LZO | PD_SNAPPY | PD_ZSTD)
/* Main header status: the dump stopped before every page was written. */
#define ST_INCOMPLETE 0x08U

/* --------------------------------------------------- the file read */

/* First record ending after off (nrecs if none). */
size_t
kdump_rec_find(struct kdump *k, uint64_t off)
{
	size_t lo = 0, hi = k->nrecs;

	if (k->hint < k->nrecs && k->recs[k->hint].off <= off &&
	    off - k->recs[k->hint].off < k->recs[k->hint].len)
		return k->hint;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->recs[mid].off + k->recs[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	k->hint = lo;
	return lo;
}

/* Copy [off, off+len) of the file; the caller has checked it lies within
 * k->size.  Bytes no flattened record wrote are zeros. */
void
kdump_view_read(struct kdump *k, uint64_t off, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t i;

	if (k->recs == NULL) {
		memcpy(d, k->map + off, len);
		return;
	}
	i = kdump_rec_find(k, off);
	while (len > 0) {
		const struct frec *r;
		uint64_t n;
		if (i >= k->nrecs) {
			memset(d, 0, len);      /* past the last record */
			return;
		}
		r = &k->recs[i];
		if (r->off > off) {
			n = r->off - off;       /* a hole before the next record */
			if (n > len)
				n = len;
			memset(d, 0, n);
		} else {
			n = r->off + r->len - off;
			if (n > len)
				n = len;
			memcpy(d, k->map + r->src + (off - r->off), n);
			i++;
		}
		d += n;
		off += n;
		len -= n;
	}
}

/* [off, off+len) of the file as a pointer into the mapping when it is one
 * stretch there, else copied into scratch. */
const uint8_t *
kdump_view_get(struct kdump *k, uint64_t off, size_t len, uint8_t *scratch)
{
	if (k->recs == NULL)
		return k->map + off;
	size_t i = kdump_rec_find(k, off);
	if (i < k->nrecs && k->recs[i].off <= off &&
	    k->recs[i].off + k->recs[i].len - off >= len)
		return k->map + k->recs[i].src + (off - k->recs[i].off);
	kdump_view_read(k, off, scratch, len);
	return scratch;
}

/* ------------------------------------------------------------ lookup */

/* Extend the rank table through entry blk (running 2nd-bitmap popcounts). */
static int
fill_rank(struct kdump *k, uint64_t blk, struct kvs_error *e)
{
	uint8_t scratch[RANK_BYTES];

	if (k->rank == NULL) {
		k->rank = malloc((k->nblocks + 1) * sizeof(*k->rank));
		if (k->rank == NULL)
			return kerr_set(e, KVS_E_NOMEM, "out of memory for the bitmap rank index "
			    "(%llu entries)", (unsigned long long)(k->nblocks + 1));
		k->rank[0] = 0;
		k->rank_valid = 0;
	}
	for (uint64_t b = k->rank_valid; b < blk; b++) {
		uint64_t off = b * RANK_BYTES, n = k->bm_bytes - off, r = k->rank[b];
		if (n > RANK_BYTES)
			n = RANK_BYTES;
		const uint8_t *p = kdump_view_get(k, k->bm2_off + off, n, scratch);
		for (uint64_t i = 0; i + 8 <= n; i += 8)
			r += (uint64_t)__builtin_popcountll(le64(p + i));
		k->rank[b + 1] = r;
	}
	if (blk > k->rank_valid)
		k->rank_valid = blk;
	return 0;
}

/* Set 2nd-bitmap bits before pfn (pfn <= max_mapnr). */
static int
rank_of(struct kdump *k, uint64_t pfn, uint64_t *out, struct kvs_error *e)
{
	uint64_t blk = pfn / RANK_BITS, rem = pfn % RANK_BITS, r;
	uint8_t scratch[RANK_BYTES];

	if (fill_rank(k, blk, e) != 0)
		return -1;
	r = k->rank[blk];
	if (rem > 0) {
		uint64_t n = (rem + 63) / 64 * 8;
		const uint8_t *p = kdump_view_get(k, k->bm2_off + blk * RANK_BYTES, n, scratch);
		uint64_t i;
		for (i = 0; i + 64 <= rem; i += 64)
			r += (uint64_t)__builtin_popcountll(le64(p + i / 8));
		if (rem % 64)
			r += (uint64_t)__builtin_popcountll(le64(p + i / 8) &
			    ((1ULL << (rem % 64)) - 1));
	}
	*out = r;
	return 0;
}

static bool
bit(struct kdump *k, uint64_t base, uint64_t pfn)
{
	uint8_t b;

	kdump_view_read(k, base + pfn / 8, &b, 1);
	return b >> (pfn % 8) & 1;
}

struct pdesc {
	uint64_t off;
	uint32_t size, flags;
};

/* The descriptor of the page holding pa in part k of the split set (or the
 * whole dump) set, or -1 (not dumped, or corrupt). */
static int
find_desc(struct kdump *k, const struct kdump *set, uint64_t pa, struct pdesc *pd,
    struct kvs_error *e)
{
	uint64_t pfn = pa >> k->shift, r, at;
	uint8_t raw[PD_LEN];

	if (pfn >= k->max_mapnr || !bit(k, k->bm2_off, pfn)) {
		bool mem = pfn < k->max_mapnr && bit(k, k->bm1_off, pfn);
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in dump (%s)",
		    (unsigned long long)pa, mem ? "filtered out" : "no memory there");
		kerr_fault(e, pa);
		return -1;
	}
	if (pfn < k->start_pfn || pfn >= k->end_pfn) {
		/* No part of the set holds pfn: the parts given leave [lo, hi)
		 * out.  Only a missing part does: with every part given (their
		 * ranges cover [0, max_mapnr) without a gap) part_of() found the
		 * one whose range holds pfn, and its 2nd bitmap said whether the
		 * page is in the dump (a page none holds is "filtered out"). */
		uint64_t lo = 0, hi = set->max_mapnr;
		for (const struct kdump *q = set; q != NULL; q = q->next_part) {
			if (q->end_pfn <= pfn && q->end_pfn > lo)
				lo = q->end_pfn;
			if (q->start_pfn > pfn && q->start_pfn < hi)
				hi = q->start_pfn;
		}
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in dump (in a part of a split "
		    "dump not given: no part given holds pfns 0x%llx-0x%llx; give every part, "
		    "-M a,b,...)", (unsigned long long)pa, (unsigned long long)lo,
		    (unsigned long long)hi);
		kerr_fault(e, pa);
		return -1;
	}
	if (!k->have_start) {
		if (rank_of(k, k->start_pfn, &k->rank_start, e) != 0)
			return -1;
		k->have_start = true;
	}
	if (rank_of(k, pfn, &r, e) != 0)
		return -1;
	r -= k->rank_start;
	at = k->pd_off + r * PD_LEN;        /* r < 2^48: no overflow */
	if (at > k->size || k->size - at < PD_LEN) {
		kerr_set(e, KVS_E_TRUNCATED, "kdump truncated: descriptor %llu of physical 0x%llx "
		    "at offset 0x%llx past the end of the file (%llu bytes)", (unsigned long long)r,
		    (unsigned long long)pa, (unsigned long long)at, (unsigned long long)k->size);
		kerr_fault(e, pa);
		return -1;
	}
	kdump_view_read(k, at, raw, PD_LEN);
	pd->off = kd64(k, raw);
	pd->size = kd32(k, raw + 8);
	pd->flags = kd32(k, raw + 12);
	if (pd->off == 0 && pd->size == 0 && (k->status & ST_INCOMPLETE)) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in dump (the dump is incomplete: "
		    "its page was never written)", (unsigned long long)pa);
		kerr_fault(e, pa);
		return -1;
	}
	uint32_t c = pd->flags & PD_COMPRESSED;
	const char *bad = NULL;
	if (c & (c - 1))
		bad = "names several compressions";
	else if (c == 0 && pd->size != k->bs)
		bad = "is uncompressed but not one page long";
	else if (pd->size == 0 || pd->size > k->bs)
		bad = "has an impossible compressed size";
	if (bad != NULL) {
		kerr_set(e, KVS_E_FORMAT, "kdump descriptor %llu of physical 0x%llx (size %u, "
		    "flags 0x%x) %s (page size %llu)", (unsigned long long)r, (unsigned long long)pa,
		    pd->size, pd->flags, bad, (unsigned long long)k->bs);
		kerr_fault(e, pa);
		return -1;
	}
	if ((int64_t)pd->off < 0 || pd->off > k->size || k->size - pd->off < pd->size) {
		kerr_set(e, KVS_E_TRUNCATED, "kdump truncated: data of physical 0x%llx (%u bytes "
		    "at offset 0x%llx) past the end of the file (%llu bytes)",
		    (unsigned long long)pa, pd->size, (unsigned long long)pd->off,
		    (unsigned long long)k->size);
		kerr_fault(e, pa);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------ decompression */

static const char *
comp_name(uint32_t c)
{
	return c == PD_ZLIB ? "zlib" : c == PD_LZO ? "lzo" : c == PD_SNAPPY ? "snappy" : "zstd";
}

/* Decompress one page into dst (k->bs bytes).  0, or -1 with e set. */
static int
decompress(struct kdump *k, const struct pdesc *pd, const uint8_t *src, uint8_t *dst,
    uint64_t pa, struct kvs_error *e)
{
	uint32_t c = pd->flags & PD_COMPRESSED;
	uint64_t got = 0;
	const char *why = NULL;
	char num[32];

	switch (c) {
	case PD_ZLIB: {
		uLongf n = (uLongf)k->bs;
		int rc = uncompress(dst, &n, src, pd->size);
		if (rc == Z_BUF_ERROR)
			why = "it holds more than a page";
		else if (rc != Z_OK)
			why = rc == Z_DATA_ERROR ? "corrupt data" : zError(rc);
		got = n;
		break;
	}
	case PD_LZO: {
		lzo_uint n = (lzo_uint)k->bs;
		if (!k->lzo_ready) {
			if (lzo_init() != LZO_E_OK)
				return kerr_set(e, KVS_E_FORMAT, "liblzo2 failed to initialise");
			k->lzo_ready = true;
		}
		int rc = lzo1x_decompress_safe(src, pd->size, dst, &n, NULL);
		if (rc == LZO_E_OUTPUT_OVERRUN)
			why = "it holds more than a page";
		else if (rc != LZO_E_OK) {
			snprintf(num, sizeof(num), "corrupt data (%d)", rc);
			why = num;
		}
		got = n;
		break;
	}
	case PD_SNAPPY: {
		size_t n = 0;
		if (snappy_uncompressed_length((const char *)src, pd->size, &n) != SNAPPY_OK)
			why = "corrupt data";
		else if (n != k->bs)
			got = n;
		else if (snappy_uncompress((const char *)src, pd->size, (char *)dst, &n) != SNAPPY_OK)
			why = "corrupt data";
		else
			got = n;
		break;
	}
	default: {
		if (k->zstd == NULL && (k->zstd = ZSTD_createDCtx()) == NULL)
			return kerr_set(e, KVS_E_NOMEM, "out of memory for a zstd context");
		size_t rc = ZSTD_decompressDCtx(k->zstd, dst, k->bs, src, pd->size);
		if (ZSTD_isError(rc))
			why = ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall ?
			    "it holds more than a page" : ZSTD_getErrorName(rc);
		else
			got = rc;
		break;
	}
	}
	if (why == NULL && got != k->bs) {
		snprintf(num, sizeof(num), "%llu bytes", (unsigned long long)got);
		why = num;
	}
	if (why != NULL) {
		kerr_set(e, KVS_E_FORMAT, "kdump page of physical 0x%llx (%u %s-compressed bytes at "
		    "offset 0x%llx) does not decompress to one page of %llu bytes: %s",
		    (unsigned long long)pa, pd->size, comp_name(c), (unsigned long long)pd->off,
		    (unsigned long long)k->bs, why);
		kerr_fault(e, pa);
		return -1;
	}
	return 0;
}

/* The decompressed page of pfn, through the cache. */
static const uint8_t *
cached_page(struct kdump *k, uint64_t pfn, const struct pdesc *pd, uint64_t pa,
    struct kvs_error *e)
{
	size_t set = (size_t)(pfn % CACHE_SETS) * CACHE_WAYS, w, victim = set;
	struct cslot *s = k->slot;

	for (w = set; w < set + CACHE_WAYS; w++) {
		if (s[w].key == pfn + 1) {
			s[w].used = ++k->tick;
			k->hits++;
			return k->cbuf + w * k->bs;
		}
		if (s[w].used < s[victim].used)
			victim = w;
	}
	k->misses++;
	if (k->cbuf == NULL) {
		k->cbuf = malloc(CACHE_SETS * CACHE_WAYS * k->bs);
		k->cscratch = malloc(k->bs);
		if (k->cbuf == NULL || k->cscratch == NULL) {
			free(k->cbuf);
			free(k->cscratch);
			k->cbuf = k->cscratch = NULL;
			kerr_set(e, KVS_E_NOMEM, "out of memory for the kdump page cache");
			return NULL;
		}
	}
	uint8_t *dst = k->cbuf + victim * k->bs;
	s[victim].key = 0;
	if (decompress(k, pd, kdump_view_get(k, pd->off, pd->size, k->cscratch), dst, pa, e) != 0)
		return NULL;
	s[victim].key = pfn + 1;
	s[victim].used = ++k->tick;
	return dst;
}

/* The part of a split dump holding pfn (the first file when none does:
 * its lookup then says why the page is missing). */
static struct kdump *
part_of(struct kdump *k, uint64_t pfn)
{
	struct kdump *p;

	for (p = k; p != NULL; p = p->next_part)
		if (pfn >= p->start_pfn && pfn < p->end_pfn)
			return p;
	return k;
}

int
kd_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct kdump *k0 = priv;
	uint8_t *p = buf;

	while (len > 0) {
		struct kdump *k = k0->next_part != NULL ? part_of(k0, pa >> k0->shift) : k0;
		uint64_t in = pa & (k->bs - 1), n = k->bs - in;
		struct pdesc pd;
		if (n > len)
			n = len;
		if (find_desc(k, k0, pa, &pd, e) != 0)
			return -1;
		if ((pd.flags & PD_COMPRESSED) == 0)
			kdump_view_read(k, pd.off + in, p, n);
		else {
			const uint8_t *pg = cached_page(k, pa >> k->shift, &pd, pa, e);
			if (pg == NULL)
				return -1;
			memcpy(p, pg + in, n);
		}
		p += n;
		pa += n;
		len -= n;
	}
	return 0;
}

void
kd_info(void *priv, struct kvs_src_info *out)
{
	struct kdump *k = priv;

	*out = k->info;
	for (; k != NULL; k = k->next_part) {
		out->cache_hits += k->hits;
		out->cache_misses += k->misses;
		if (k != priv)
			out->source_bytes += k->info.source_bytes;
	}
}

/* Pages this file holds: a pass over the 2nd bitmap, asked by info only. */
uint64_t
kd_dumped_pages(void *priv)
{
	struct kdump *k;
	struct kvs_error e;
	uint64_t a, b, n = 0;

	kerr_clear(&e);
	for (k = priv; k != NULL; k = k->next_part) {
		if (rank_of(k, k->start_pfn, &a, &e) != 0 || rank_of(k, k->end_pfn, &b, &e) != 0)
			return 0;
		n += b - a;
	}
	return n;
}
