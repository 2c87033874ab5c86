/*
 * kdump.c - makedumpfile's kdump-compressed dumps ("KDUMP   ", diskdump
 * header versions 1 to 6: makedumpfile 1.7 and QEMU 7.2 write 6), read as
 * they are or through the flattened stream ("makedumpfile" signature) that
 * `makedumpfile -F` and QEMU's dump-guest-memory kdump-* formats write.
 *
 * The file, in blocks of block_size bytes (the dumped kernel's page size),
 * every field little-endian (the dumped machine's order; amd64 here):
 *
 *   block 0        main header: signature, header_version, utsname,
 *                  timestamp, status, block_size, sub_hdr_size (blocks),
 *                  bitmap_blocks, max_mapnr (32 bits), ...
 *   block 1        sub-header (sub_hdr_size blocks): phys_base, dump_level,
 *                  (v2) split, start_pfn, end_pfn, (v3) offset and size of
 *                  the VMCOREINFO text, (v4) of the ELF notes, (v5) of the
 *                  erase info, (v6) 64-bit start_pfn, end_pfn, max_mapnr;
 *                  the texts themselves usually follow in the same blocks
 *   bitmap_blocks  the 1st bitmap (a bit per pfn: memory exists) then the
 *                  2nd (a bit per pfn: page dumped), each half of them
 *   descriptors    24 bytes per set bit of the 2nd bitmap, in pfn order:
 *                  file offset and size of the page's data, flags saying
 *                  how it is compressed (zlib, lzo, snappy, zstd, or none),
 *                  page flags
 *   page data      compressed pages, or raw ones (size == block_size) when
 *                  compressing did not make them smaller; zero pages share
 *                  one raw zero page
 *
 * A page the dump level filtered out (1st bit set, 2nd clear) is reported
 * as not in the dump, never read as zeros.
 *
 * Split dumps (makedumpfile --split) are several files, each with the full
 * bitmaps but descriptors and data only for the pfns [start_pfn, end_pfn)
 * its sub-header names: descriptor i of a part is the i-th dumped page from
 * start_pfn on.  One part opens on its own; pages the other parts hold are
 * reported as not in this dump, naming the range this part holds.
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
 * The flattened stream is a 4 KiB header ("makedumpfile", then big-endian
 * type 1 and version 1) and records of (big-endian offset, size, data) that
 * `makedumpfile -R` writes at their offsets to rebuild the file above; a
 * record whose offset is -1 ends it.  The records are indexed once at open
 * (one hop per record header, nothing decompressed) into a table sorted by
 * offset; where records overlap the later one wins, as it would when
 * rebuilding, and bytes no record wrote read as zeros (the bitmaps must be
 * written whole, so a stream cannot claim more bitmap than it holds).
 * Every read of the rebuilt file goes through that table straight to the
 * mapping: no temporary file.  The record headers are read with pread:
 * hopping through the mapping would fault in a page per record.
 *
 * Why not libkdumpfile (what drgn uses): 0.5.1 rejects the header QEMU 7.2
 * writes (its utsname is empty, so the architecture stays unknown unless
 * set before opening), refuses the flattened stream QEMU writes, and reads
 * through its own file handling and caches, where every other source here
 * reads the handle's one read-only mapping and validates each field against
 * it.  The format is small; this reader is written on the mapping.
 */
#include <endian.h>
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "kvs_private.h"

#define KD_SIG "KDUMP   "
#define FLAT_SIG "makedumpfile"
#define FLAT_HDR 4096ULL
#define FLAT_TYPE 1
#define FLAT_VERSION 1
#define HDR_LEN 464             /* struct disk_dump_header on LP64 */
#define PD_LEN 24               /* offset, size, flags, page_flags */
#define MIN_BLOCK 4096U
#define MAX_BLOCK 65536U
#define MAX_VERSION 6
#define RANK_BITS 4096ULL       /* bits per rank entry: 512 bitmap bytes */
#define RANK_BYTES (RANK_BITS / 8)
#define CACHE_SETS 64
#define CACHE_WAYS 4
#define VMCOREINFO_MAX (1U << 20)
#define NOTES_MAX (4U << 20)
#define SUB_NEED_MAX 104

/* Page descriptor flags (how the page is stored). */
#define PD_ZLIB 0x01U
#define PD_LZO 0x02U
#define PD_SNAPPY 0x04U
#define PD_ZSTD 0x20U
#define PD_COMPRESSED (PD_ZLIB | PD_LZO | PD_SNAPPY | PD_ZSTD)
/* Main header status: the dump stopped before every page was written. */
#define ST_INCOMPLETE 0x08U

/* Sub-header fields (offsets in the sub-header, first version having them). */
#define SH_SPLIT 12             /* v2: int split, u64 start_pfn, end_pfn */
#define SH_START 16
#define SH_END 24
#define SH_VMCI_OFF 32          /* v3 */
#define SH_VMCI_SIZE 40
#define SH_NOTE_OFF 48          /* v4 */
#define SH_NOTE_SIZE 56
#define SH_START64 80           /* v6 */
#define SH_END64 88
#define SH_MAPNR64 96
static const unsigned sub_need[MAX_VERSION + 1] = { 0, 0, 32, 48, 64, 80, 104 };

/* Bytes [off, off+len) of the rebuilt file are bytes [src, src+len) of the
 * mapping; seq is the record's place in the stream (later wins). */
struct frec {
	uint64_t off, len, src, seq;
};

struct cslot {
	uint64_t key;           /* pfn + 1; 0 = empty */
	uint64_t used;          /* tick of the last use */
};

struct kdump {
	const uint8_t *map;
	uint64_t map_len;
	int fd;
	/* The file read: the mapping itself (recs == NULL), or the file the
	 * flattened stream rebuilds, size bytes long. */
	struct frec *recs;
	size_t nrecs, hint;
	uint64_t size;

	unsigned version;
	uint32_t status;
	uint64_t bs;
	unsigned shift;
	uint64_t max_mapnr;
	uint64_t bm1_off, bm2_off, bm_bytes;
	uint64_t pd_off;
	bool split;
	uint64_t start_pfn, end_pfn;

	uint64_t *rank;         /* lazily allocated and filled */
	uint64_t nblocks, rank_valid;
	uint64_t rank_start;    /* set bits before start_pfn, when have_start */
	bool have_start;

	uint8_t *cbuf;          /* CACHE_SETS * CACHE_WAYS pages, lazily */
	uint8_t *cscratch;      /* compressed bytes spread over records */
	struct cslot slot[CACHE_SETS * CACHE_WAYS];
	uint64_t tick, hits, misses;
	bool lzo_ready;
	ZSTD_DCtx *zstd;

	char *vmci_copy;        /* owned copy, when not one stretch of the map */
	struct kvs_src_info info;
	struct kdump *next_part; /* split dumps: the other files given, chained */
};

static uint32_t
le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint64_t
be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

/* --------------------------------------------------- the file read */

/* First record ending after off (nrecs if none). */
static size_t
rec_find(struct kdump *k, uint64_t off)
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
static void
view_read(struct kdump *k, uint64_t off, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t i;

	if (k->recs == NULL) {
		memcpy(d, k->map + off, len);
		return;
	}
	i = rec_find(k, off);
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
static const uint8_t *
view_get(struct kdump *k, uint64_t off, size_t len, uint8_t *scratch)
{
	if (k->recs == NULL)
		return k->map + off;
	size_t i = rec_find(k, off);
	if (i < k->nrecs && k->recs[i].off <= off &&
	    k->recs[i].off + k->recs[i].len - off >= len)
		return k->map + k->recs[i].src + (off - k->recs[i].off);
	view_read(k, off, scratch, len);
	return scratch;
}

/* ------------------------------------------------ the flattened stream */

static int
cmp_rec(const void *a, const void *b)
{
	const struct frec *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Max-heap of record indexes by seq. */
static void
heap_push(size_t *h, size_t *n, const struct frec *r, size_t v)
{
	size_t i = (*n)++;

	while (i > 0 && r[h[(i - 1) / 2]].seq < r[v].seq) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void
heap_pop(size_t *h, size_t *n, const struct frec *r)
{
	size_t i = 0, v = h[--(*n)];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && r[h[c + 1]].seq > r[h[c]].seq)
			c++;
		if (r[h[c]].seq <= r[v].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = v;
}

/*
 * Overlapping records (sorted by offset): cut them into stretches each
 * taken from the latest record covering it, sweeping the record boundaries
 * with a heap of the records covering the current one.  O(n log n); at most
 * 2n stretches.
 */
static int
flat_resolve(struct kdump *k, struct kvs_error *e)
{
	size_t n = k->nrecs, nb = 0, hn = 0, j = 0, no = 0, b;
	uint64_t *bnd = malloc(2 * n * sizeof(*bnd));
	size_t *heap = malloc(n * sizeof(*heap));
	struct frec *out = malloc(2 * n * sizeof(*out));

	if (bnd == NULL || heap == NULL || out == NULL) {
		free(bnd);
		free(heap);
		free(out);
		return kerr_set(e, KVS_E_NOMEM, "out of memory indexing the flattened stream");
	}
	for (size_t i = 0; i < n; i++) {
		bnd[nb++] = k->recs[i].off;
		bnd[nb++] = k->recs[i].off + k->recs[i].len;
	}
	qsort(bnd, nb, sizeof(*bnd), cmp_u64);
	b = 0;
	for (size_t i = 0; i < nb; i++)
		if (b == 0 || bnd[b - 1] != bnd[i])
			bnd[b++] = bnd[i];
	nb = b;
	for (b = 0; b + 1 < nb; b++) {
		uint64_t at = bnd[b];
		while (j < n && k->recs[j].off <= at)
			heap_push(heap, &hn, k->recs, j++);
		while (hn > 0 && k->recs[heap[0]].off + k->recs[heap[0]].len <= at)
			heap_pop(heap, &hn, k->recs);
		if (hn == 0)
			continue;
		const struct frec *w = &k->recs[heap[0]];
		uint64_t len = bnd[b + 1] - at, src = w->src + (at - w->off);
		if (no > 0 && out[no - 1].seq == w->seq && out[no - 1].off + out[no - 1].len == at)
			out[no - 1].len += len;
		else
			out[no++] = (struct frec){ at, len, src, w->seq };
	}
	free(bnd);
	free(heap);
	free(k->recs);
	k->recs = out;
	k->nrecs = no;
	return 0;
}

/* The 16-byte header of the record at p (p + 16 <= map_len).  Read with
 * pread: hopping through a large file touches one page per record, and
 * faulting those in through the mapping costs several times as much. */
static void
flat_rechdr(const struct kdump *k, uint64_t p, uint64_t *off, uint64_t *len)
{
	uint8_t h[16];

	if (k->fd < 0 || pread(k->fd, h, 16, (off_t)p) != 16)
		memcpy(h, k->map + p, 16);
	*off = be64(h);
	*len = be64(h + 8);
}

/* Index the records of a flattened stream (the whole mapping). */
static int
flat_index(struct kdump *k, struct kvs_error *e)
{
	uint64_t p = FLAT_HDR, type, version, n;
	size_t cap = 0;

	if (k->map_len < FLAT_HDR)
		return kerr_set(e, KVS_E_TRUNCATED, "flattened kdump header truncated (%llu bytes, "
		    "want %llu)", (unsigned long long)k->map_len, FLAT_HDR);
	type = be64(k->map + 16);
	version = be64(k->map + 24);
	if (type != FLAT_TYPE || version != FLAT_VERSION)
		return kerr_set(e, KVS_E_VERSION, "flattened stream of type %llu version %llu not "
		    "supported (type 1 version 1)", (unsigned long long)type,
		    (unsigned long long)version);
	for (n = 0;; n++) {
		uint64_t off, len;
		if (k->map_len - p < 16)
			return kerr_set(e, KVS_E_TRUNCATED, "flattened stream truncated: record %llu "
			    "at file offset 0x%llx has no complete header and no end marker came "
			    "before (file %llu bytes)", (unsigned long long)n,
			    (unsigned long long)p, (unsigned long long)k->map_len);
		flat_rechdr(k, p, &off, &len);
		if (off == UINT64_MAX)
			break;          /* end marker */
		p += 16;
		if ((int64_t)off < 0 || (int64_t)len < 0)
			return kerr_set(e, KVS_E_FORMAT, "flattened record %llu at file offset 0x%llx: "
			    "offset %lld size %lld", (unsigned long long)n,
			    (unsigned long long)(p - 16), (long long)off, (long long)len);
		if (len > k->map_len - p)
			return kerr_set(e, KVS_E_TRUNCATED, "flattened stream truncated: record %llu "
			    "at file offset 0x%llx holds %llu bytes, file has %llu after its header",
			    (unsigned long long)n, (unsigned long long)(p - 16),
			    (unsigned long long)len, (unsigned long long)(k->map_len - p));
		if (len > 0) {
			if (k->nrecs == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct frec *r = realloc(k->recs, nc * sizeof(*r));
				if (r == NULL)
					return kerr_set(e, KVS_E_NOMEM, "out of memory indexing the "
					    "flattened stream (%llu records)", (unsigned long long)n);
				k->recs = r;
				cap = nc;
			}
			k->recs[k->nrecs] = (struct frec){ off, len, p, k->nrecs };
			k->nrecs++;
			if (off + len > k->size)
				k->size = off + len;
		}
		p += len;
	}
	if (k->nrecs == 0)
		return kerr_set(e, KVS_E_FORMAT, "flattened stream holds no data");
	qsort(k->recs, k->nrecs, sizeof(*k->recs), cmp_rec);
	for (size_t i = 1; i < k->nrecs; i++)
		if (k->recs[i].off < k->recs[i - 1].off + k->recs[i - 1].len)
			return flat_resolve(k, e);
	return 0;
}

/* The first byte of [off, end) no record writes, or end. */
static uint64_t
flat_unwritten(struct kdump *k, uint64_t off, uint64_t end)
{
	for (size_t i = rec_find(k, off); off < end; i++) {
		if (i >= k->nrecs || k->recs[i].off > off)
			return off;
		off = k->recs[i].off + k->recs[i].len;
	}
	return end;
}

/* --------------------------------------------------------- headers */

/* VMCOREINFO in the ELF notes the sub-header points at (when it names no
 * VMCOREINFO text of its own). */
static int
notes_vmcoreinfo(struct kdump *k, uint64_t off, uint64_t size, struct kvs_error *e)
{
	uint64_t p = off, end = off + size;
	uint8_t nh[12 + 12];

	while (end - p >= 12 && p < end) {
		uint32_t namesz, descsz;
		uint64_t name, desc, next;
		view_read(k, p, nh, end - p >= sizeof(nh) ? sizeof(nh) : 12);
		namesz = le32(nh);
		descsz = le32(nh + 4);
		name = p + 12;
		desc = name + ((namesz + 3ULL) & ~3ULL);
		next = desc + ((descsz + 3ULL) & ~3ULL);
		if (desc > end || descsz > end - desc)
			return 0;
		if (namesz == 11 && end - p >= 24 && memcmp(nh + 12, "VMCOREINFO", 11) == 0) {
			if (descsz > VMCOREINFO_MAX)
				return kerr_set(e, KVS_E_FORMAT, "VMCOREINFO note of %u bytes "
				    "(more than %u)", descsz, VMCOREINFO_MAX);
			k->vmci_copy = malloc(descsz ? descsz : 1);
			if (k->vmci_copy == NULL)
				return kerr_set(e, KVS_E_NOMEM, "out of memory");
			view_read(k, desc, k->vmci_copy, descsz);
			k->info.vmcoreinfo = k->vmci_copy;
			k->info.vmcoreinfo_len = descsz;
			return 0;
		}
		if (next <= p)
			return 0;
		p = next;
	}
	return 0;
}

static int
kd_headers(struct kdump *k, struct kvs_error *e)
{
	uint8_t h[HDR_LEN], sh[SUB_NEED_MAX];
	int32_t bsz, subsz;
	uint32_t bmblocks;
	uint64_t bm_end;

	if (k->size < HDR_LEN)
		return kerr_set(e, KVS_E_TRUNCATED, "kdump header truncated (%llu bytes, want %u)",
		    (unsigned long long)k->size, HDR_LEN);
	view_read(k, 0, h, HDR_LEN);
	if (memcmp(h, KD_SIG, 8) != 0)
		return kerr_set(e, KVS_E_FORMAT, "flattened stream does not rebuild a kdump "
		    "file (it starts \"%.8s\"; an ELF dump flattened with makedumpfile -F -E "
		    "must be rebuilt with makedumpfile -R first)", (const char *)h);
	k->version = le32(h + 8);
	k->status = le32(h + 424);
	bsz = (int32_t)le32(h + 428);
	subsz = (int32_t)le32(h + 432);
	bmblocks = le32(h + 436);
	k->max_mapnr = le32(h + 440);
	if (k->version < 1 || k->version > MAX_VERSION) {
		if (k->version != 0 && (k->version & 0xffffff) == 0)
			return kerr_set(e, KVS_E_VERSION, "kdump header version %u: a big-endian "
			    "dump, not supported", be32toh(htole32(k->version)));
		return kerr_set(e, KVS_E_VERSION, "kdump header version %u not supported (1-%u)",
		    k->version, MAX_VERSION);
	}
	if (bsz < (int32_t)MIN_BLOCK || bsz > (int32_t)MAX_BLOCK || (bsz & (bsz - 1)) != 0)
		return kerr_set(e, KVS_E_FORMAT, "kdump block size %d is not a power of two "
		    "from %u to %u", bsz, MIN_BLOCK, MAX_BLOCK);
	k->bs = (uint64_t)bsz;
	k->shift = (unsigned)__builtin_ctzll(k->bs);
	if (subsz < 0 || (uint64_t)subsz * k->bs < sub_need[k->version])
		return kerr_set(e, KVS_E_FORMAT, "kdump sub-header of %d blocks cannot hold a "
		    "version %u sub-header (%u bytes)", subsz, k->version, sub_need[k->version]);
	if (bmblocks % 2 != 0)
		return kerr_set(e, KVS_E_FORMAT, "kdump bitmap_blocks %u is odd (two bitmaps of "
		    "equal size)", bmblocks);
	/* Below 2^31 * 2^16 and 2^32 * 2^16: no overflow. */
	k->bm1_off = (1 + (uint64_t)subsz) * k->bs;
	k->bm_bytes = (uint64_t)bmblocks / 2 * k->bs;
	k->bm2_off = k->bm1_off + k->bm_bytes;
	bm_end = k->bm2_off + k->bm_bytes;
	if (k->bm1_off > k->size)
		return kerr_set(e, KVS_E_TRUNCATED, "kdump sub-header (%d blocks of %llu bytes) "
		    "past the end of the file (%llu bytes)", subsz, (unsigned long long)k->bs,
		    (unsigned long long)k->size);
	if (bm_end > k->size)
		return kerr_set(e, KVS_E_TRUNCATED, "kdump bitmaps (%u blocks at offset 0x%llx) "
		    "past the end of the file (%llu bytes)", bmblocks,
		    (unsigned long long)k->bm1_off, (unsigned long long)k->size);
	k->pd_off = bm_end;
	if (k->recs != NULL) {
		/* The rebuilt file may have holes; its bitmaps must not, so that
		 * they, like the rank table built on them, stay within what the
		 * stream holds (QEMU and makedumpfile -F write them whole). */
		uint64_t gap = flat_unwritten(k, k->bm1_off, bm_end);
		if (gap < bm_end)
			return kerr_set(e, KVS_E_TRUNCATED, "flattened stream does not hold the kdump "
			    "bitmaps (%u blocks at offset 0x%llx): no record writes offset 0x%llx",
			    bmblocks, (unsigned long long)k->bm1_off, (unsigned long long)gap);
	}

	memset(sh, 0, sizeof(sh));
	if (sub_need[k->version] > 0)
		view_read(k, k->bs, sh, sub_need[k->version]);
	if (k->version >= 6)
		k->max_mapnr = le64(sh + SH_MAPNR64);
	if (k->max_mapnr > k->bm_bytes * 8)
		return kerr_set(e, KVS_E_FORMAT, "kdump max_mapnr %llu exceeds the %llu bits of "
		    "each bitmap (bitmap_blocks %u)", (unsigned long long)k->max_mapnr,
		    (unsigned long long)(k->bm_bytes * 8), bmblocks);
	k->start_pfn = 0;
	k->end_pfn = k->max_mapnr;
	if (k->version >= 2 && (int32_t)le32(sh + SH_SPLIT) != 0) {
		k->split = true;
		k->start_pfn = le64(sh + (k->version >= 6 ? SH_START64 : SH_START));
		k->end_pfn = le64(sh + (k->version >= 6 ? SH_END64 : SH_END));
		if (k->start_pfn > k->end_pfn || k->end_pfn > k->max_mapnr)
			return kerr_set(e, KVS_E_FORMAT, "split kdump part holds pfns [0x%llx, 0x%llx), "
			    "not within [0, max_mapnr 0x%llx)", (unsigned long long)k->start_pfn,
			    (unsigned long long)k->end_pfn, (unsigned long long)k->max_mapnr);
	}
	if (k->version >= 3) {
		uint64_t o = le64(sh + SH_VMCI_OFF), n = le64(sh + SH_VMCI_SIZE);
		if (n > 0) {
			if (o > k->size || n > k->size - o)
				return kerr_set(e, KVS_E_TRUNCATED, "kdump VMCOREINFO (%llu bytes at "
				    "offset 0x%llx) past the end of the file (%llu bytes)",
				    (unsigned long long)n, (unsigned long long)o,
				    (unsigned long long)k->size);
			if (n > VMCOREINFO_MAX)
				return kerr_set(e, KVS_E_FORMAT, "kdump VMCOREINFO of %llu bytes (more "
				    "than %u)", (unsigned long long)n, VMCOREINFO_MAX);
			k->vmci_copy = malloc(n);
			if (k->vmci_copy == NULL)
				return kerr_set(e, KVS_E_NOMEM, "out of memory");
			const uint8_t *t = view_get(k, o, n, (uint8_t *)k->vmci_copy);
			if (t != (const uint8_t *)k->vmci_copy) {
				free(k->vmci_copy);     /* one stretch of the mapping: borrow it */
				k->vmci_copy = NULL;
			}
			k->info.vmcoreinfo = (const char *)t;
			k->info.vmcoreinfo_len = n;
		}
	}
	if (k->version >= 4 && k->info.vmcoreinfo == NULL) {
		uint64_t o = le64(sh + SH_NOTE_OFF), n = le64(sh + SH_NOTE_SIZE);
		if (n > 0) {
			if (o > k->size || n > k->size - o)
				return kerr_set(e, KVS_E_TRUNCATED, "kdump ELF notes (%llu bytes at "
				    "offset 0x%llx) past the end of the file (%llu bytes)",
				    (unsigned long long)n, (unsigned long long)o,
				    (unsigned long long)k->size);
			if (n > NOTES_MAX)
				return kerr_set(e, KVS_E_FORMAT, "kdump ELF notes of %llu bytes (more "
				    "than %u)", (unsigned long long)n, NOTES_MAX);
			if (notes_vmcoreinfo(k, o, n, e) != 0)
				return -1;
		}
	}
	return 0;
}

static void kd_close(void *priv);

static int
kd_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	struct kdump *k;
	bool flat;

	if (a->map == NULL || a->map_len < 8)
		return KVS_NOTMINE;
	flat = a->map_len >= 13 && memcmp(a->map, FLAT_SIG, 13) == 0;
	if (!flat && memcmp(a->map, KD_SIG, 8) != 0)
		return KVS_NOTMINE;
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	k->map = a->map;
	k->map_len = a->map_len;
	k->fd = a->fd;
	k->size = flat ? 0 : a->map_len;
	if ((flat && flat_index(k, e) != 0) || kd_headers(k, e) != 0) {
		kd_close(k);
		return -1;
	}
	k->nblocks = k->max_mapnr / RANK_BITS + 1;
	k->info.format = flat ? "kdump-flat" : "kdump";
	k->info.format_version = k->version;
	k->info.page_size = (unsigned)k->bs;
	k->info.source_bytes = a->map_len;
	*priv = k;
	return 0;
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
		const uint8_t *p = view_get(k, k->bm2_off + off, n, scratch);
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
		const uint8_t *p = view_get(k, k->bm2_off + blk * RANK_BYTES, n, scratch);
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

	view_read(k, base + pfn / 8, &b, 1);
	return b >> (pfn % 8) & 1;
}

struct pdesc {
	uint64_t off;
	uint32_t size, flags;
};

/* The descriptor of the page holding pa, or -1 (not dumped, or corrupt). */
static int
find_desc(struct kdump *k, uint64_t pa, struct pdesc *pd, struct kvs_error *e)
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
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in dump (in another part of a "
		    "split dump, not given: this part holds pfns 0x%llx-0x%llx; give every "
		    "part, -M a,b,...)", (unsigned long long)pa,
		    (unsigned long long)k->start_pfn, (unsigned long long)k->end_pfn);
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
	view_read(k, at, raw, PD_LEN);
	pd->off = le64(raw);
	pd->size = le32(raw + 8);
	pd->flags = le32(raw + 12);
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
	if (decompress(k, pd, view_get(k, pd->off, pd->size, k->cscratch), dst, pa, e) != 0)
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

static int
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
		if (find_desc(k, pa, &pd, e) != 0)
			return -1;
		if ((pd.flags & PD_COMPRESSED) == 0)
			view_read(k, pd.off + in, p, n);
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

static void
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
static uint64_t
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

static void
kd_close(void *priv)
{
	struct kdump *k = priv;

	if (k->next_part != NULL)
		kd_close(k->next_part);
	free(k->recs);
	free(k->rank);
	free(k->cbuf);
	free(k->cscratch);
	free(k->vmci_copy);
	ZSTD_freeDCtx(k->zstd);
	free(k);
}

/*
 * Another file of a split dump (makedumpfile --split): a part of the same
 * dump (same page size and max_mapnr) holding pfns no other part given
 * holds.  Reads then go to the part holding the page.
 */
static int
kd_add_part(void *priv, const struct kvs_open_args *a, struct kvs_error *e)
{
	struct kdump *k = priv, *n, *q;
	void *np;
	int rc = kd_open(a, &np, e);

	if (rc == KVS_NOTMINE)
		return kerr_set(e, KVS_E_FORMAT, "not a kdump-compressed file, so not a part of "
		    "the split dump");
	if (rc != 0)
		return -1;
	n = np;
	if (!k->split || !n->split) {
		kd_close(n);
		return kerr_set(e, KVS_E_FORMAT, "only the parts of a split dump (makedumpfile "
		    "--split) are given together, and %s is a whole dump", !k->split ?
		    "the first file" : "this one");
	}
	if (n->bs != k->bs || n->max_mapnr != k->max_mapnr) {
		kd_close(n);
		return kerr_set(e, KVS_E_MISMATCH, "not a part of the same dump (page size %llu, "
		    "max_mapnr %llu; the first part's %llu, %llu)", (unsigned long long)n->bs,
		    (unsigned long long)n->max_mapnr, (unsigned long long)k->bs,
		    (unsigned long long)k->max_mapnr);
	}
	for (q = k; q != NULL; q = q->next_part)
		if (n->start_pfn < q->end_pfn && q->start_pfn < n->end_pfn) {
			kerr_set(e, KVS_E_FORMAT, "holds pfns 0x%llx-0x%llx, which overlap the "
			    "0x%llx-0x%llx of a part given before (the same part twice?)",
			    (unsigned long long)n->start_pfn, (unsigned long long)n->end_pfn,
			    (unsigned long long)q->start_pfn, (unsigned long long)q->end_pfn);
			kd_close(n);
			return -1;
		}
	for (q = k; q->next_part != NULL; q = q->next_part)
		;
	q->next_part = n;
	return 0;
}

const struct kvs_source_ops kvs_source_kdump = {
	.add_part = kd_add_part,
	.name = "kdump",
	.open = kd_open,
	.read_phys = kd_read,
	.info = kd_info,
	.dumped_pages = kd_dumped_pages,
	.close = kd_close,
};
