/*
 * kdump.c - makedumpfile's kdump-compressed dumps ("KDUMP   ", diskdump
 * header versions 1 to 6: makedumpfile 1.7 and QEMU 7.2 write 6), read as
 * they are or through the flattened stream ("makedumpfile" signature) that
 * `makedumpfile -F` and QEMU's dump-guest-memory kdump-* formats write.
 *
 * The file, in blocks of block_size bytes (the dumped kernel's page size),
 * every field in the dumped machine's byte order and word size (64- or
 * 32-bit, little- or big-endian: kd_layout says how each is told from the
 * file itself):
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
 * reported as not in this dump, naming the pfns no part given holds.
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
 *
 * This file owns opening: the flattened stream's record index, the main
 * header and sub-header (VMCOREINFO, split range), adding the parts of a
 * split dump, closing, and the ops table.  Reading pages (the file read
 * through the record index, the rank table, descriptors, decompression and
 * the page cache) is kdump_read.c's; kdump_internal.h holds the handle
 * they share.
 */

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdump_internal.h"

#define KD_SIG "KDUMP   "
#define FLAT_SIG "makedumpfile"
#define FLAT_HDR 4096ULL
#define FLAT_TYPE 1
#define FLAT_VERSION 1
#define HDR_LEN 464             /* struct disk_dump_header on LP64 */
#define HDR_LEN32 452           /* on ILP32 */
#define HDR_STATUS64 424        /* the first field after struct timeval */
#define HDR_STATUS32 412
#define HDR_MACHINE (12 + 4 * 65) /* utsname.machine */
#define MIN_BLOCK 4096U
#define MAX_BLOCK 65536U
#define MAX_VERSION 6
#define VMCOREINFO_MAX (1U << 20)
#define NOTES_MAX (4U << 20)
#define SUB_MAX 104

/*
 * Where the sub-header's fields lie (struct kdump_sub_header, compiled by
 * the dumping machine): phys_base, the pfns and the sizes are unsigned
 * long, the file offsets off_t (64-bit: makedumpfile is built with large
 * files), the v6 fields u64.  LP64 aligns everything to 8; ILP32 comes in
 * two kinds: i386 (and QEMU's packed header for every 32-bit guest) aligns
 * the 64-bit fields to 4, the other 32-bit ABIs (arm, ppc, mips) to 8.
 */
struct sublay {
	uint8_t len, split, start, end, vmci_off, vmci_size, note_off, note_size,
	    erase_off, erase_size, start64, end64, mapnr64;
};
static const struct sublay sub_lp64 = { 104, 12, 16, 24, 32, 40, 48, 56, 64, 72,
	80, 88, 96 };
static const struct sublay sub_ilp32_packed = { 80, 8, 12, 16, 20, 28, 32,
	40, 44, 52, 56, 64, 72 };
static const struct sublay sub_ilp32_aligned = { 96, 8, 12, 16, 24, 32, 40, 48,
	56, 64, 72, 80, 88 };

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
	for (size_t i = kdump_rec_find(k, off); off < end; i++) {
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
		kdump_view_read(k, p, nh, end - p >= sizeof(nh) ? sizeof(nh) : 12);
		namesz = kd32(k, nh);
		descsz = kd32(k, nh + 4);
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
			kdump_view_read(k, desc, k->vmci_copy, descsz);
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

/* The main header's fields after utsname, read with the status at `at`. */
struct hdr_fields {
	uint32_t status, bmblocks, max_mapnr, total_ram, device, written, cur_cpu;
	int32_t bsz, subsz, nr_cpus;
};

static void
hdr_fields(const struct kdump *k, const uint8_t *h, unsigned at, struct hdr_fields *f)
{
	f->status = kd32(k, h + at);
	f->bsz = (int32_t)kd32(k, h + at + 4);
	f->subsz = (int32_t)kd32(k, h + at + 8);
	f->bmblocks = kd32(k, h + at + 12);
	f->max_mapnr = kd32(k, h + at + 16);
	f->total_ram = kd32(k, h + at + 20);
	f->device = kd32(k, h + at + 24);
	f->written = kd32(k, h + at + 28);
	f->cur_cpu = kd32(k, h + at + 32);
	f->nr_cpus = (int32_t)kd32(k, h + at + 36);
}

/* A reading of the main header a dump could have: a block size that is a
 * power of two, a sub-header, two non-empty bitmaps of equal size within
 * the file, and a max_mapnr they can hold. */
static bool
hdr_consistent(const struct kdump *k, const struct hdr_fields *f)
{
	if (f->bsz < (int32_t)MIN_BLOCK || f->bsz > (int32_t)MAX_BLOCK || (f->bsz & (f->bsz - 1)))
		return false;
	if (f->subsz < 0 || f->bmblocks == 0 || f->bmblocks % 2 != 0)
		return false;
	if ((1 + (uint64_t)f->subsz + f->bmblocks) * (uint64_t)f->bsz > k->size)
		return false;
	return f->max_mapnr > 0 && f->max_mapnr <= (uint64_t)f->bmblocks / 2 * f->bsz * 8;
}

/* utsname.machine names a 32-bit kernel (only when the fields cannot tell). */
static bool
machine_32bit(const uint8_t *h)
{
	static const char *const m32[] = { "i386", "i486", "i586", "i686", "arm", "armv7l",
		"armv6l", "armv5tel", "ppc", "mips", "s390", "sparc", "riscv32" };
	char m[66];

	memcpy(m, h + HDR_MACHINE, 65);
	m[65] = '\0';
	for (size_t i = 0; i < sizeof(m32) / sizeof(m32[0]); i++)
		if (strcmp(m, m32[i]) == 0)
			return true;
	return false;
}

static uint64_t
uword(const struct kdump *k, const uint8_t *p)
{
	return k->word == 4 ? kd32(k, p) : kd64(k, p);
}

/* [off, off+n) names bytes of the file after the main header (or nothing). */
static bool
span_ok(const struct kdump *k, uint64_t off, uint64_t n)
{
	return n == 0 || (off >= k->bs && off <= k->size && n <= k->size - off);
}

/* How well a reading of a 32-bit sub-header fits: 0 when it names a text
 * outside the file or (v6) a 64-bit max_mapnr the main header's 32-bit one
 * is not the truncation of; else 1 plus the number of texts it names
 * (read at the wrong place, an offset's halves swap into a huge number or
 * a size reads as 0). */
static unsigned
sub_fit(const struct kdump *k, const uint8_t *sh, const struct sublay *l, uint32_t mapnr32)
{
	const uint8_t pos[3][2] = { { l->vmci_off, l->vmci_size }, { l->note_off, l->note_size },
		{ l->erase_off, l->erase_size } };
	unsigned fit = 1;

	for (unsigned i = 0; i < 3 && i + 3 <= k->version; i++) {
		uint64_t off = kd64(k, sh + pos[i][0]), n = kd32(k, sh + pos[i][1]);
		if (!span_ok(k, off, n))
			return 0;
		fit += n > 0;
	}
	if (k->version >= 6) {
		uint64_t m = kd64(k, sh + l->mapnr64);
		if ((m > UINT32_MAX ? UINT32_MAX : m) != mapnr32)
			return 0;
	}
	return fit;
}

/*
 * The byte order, the word size and the header fields.  What decides,
 * from the file alone:
 *  - byte order: header_version is a small number (1..6 today); read in
 *    the wrong order it is a multiple of 2^24.  Big-endian when the
 *    little-endian reading is not below 2^16 and the big-endian one is.
 *  - word size: struct timeval (two longs) ends 12 bytes later on LP64
 *    than on ILP32, moving every later field.  The reading that gives a
 *    consistent header (hdr_consistent) wins; when both or neither do,
 *    utsname.machine naming a 32-bit kernel picks ILP32, else LP64.
 *  - the ILP32 sub-header's alignment (v3+: the fields differ from the
 *    VMCOREINFO offset on): the packed (i386, QEMU) reading unless the
 *    8-aligned one fits better (sub_fit: texts within the file, more of
 *    them named, v6 max_mapnr agreeing with the main header's).
 */
static void
kd_layout(struct kdump *k, const uint8_t *h, struct hdr_fields *f)
{
	struct hdr_fields f64, f32;
	uint32_t vle = le32(h + 8), vbe = be32(h + 8);
	bool ok64, ok32;

	k->be = vle >= (1U << 16) && vbe < (1U << 16);
	k->version = k->be ? vbe : vle;
	hdr_fields(k, h, HDR_STATUS64, &f64);
	hdr_fields(k, h, HDR_STATUS32, &f32);
	ok64 = k->size >= HDR_LEN && hdr_consistent(k, &f64);
	ok32 = hdr_consistent(k, &f32);
	if (ok64 != ok32)
		k->word = ok32 ? 4 : 8;
	else
		k->word = machine_32bit(h) ? 4 : 8;
	*f = k->word == 4 ? f32 : f64;
}

static const char *
layout_name(const struct kdump *k)
{
	return k->word == 4 ? (k->be ? "32-bit big-endian" : "32-bit little-endian") :
	    (k->be ? "64-bit big-endian" : "64-bit little-endian");
}

static int
kd_headers(struct kdump *k, struct kvs_error *e)
{
	uint8_t h[HDR_LEN], sh[SUB_MAX];
	const struct sublay *l = &sub_lp64;
	struct hdr_fields f;
	int32_t bsz, subsz;
	uint32_t bmblocks;
	uint64_t bm_end;

	if (k->size < HDR_LEN32)
		return kerr_set(e, KVS_E_TRUNCATED, "kdump header truncated (%llu bytes, want %u)",
		    (unsigned long long)k->size, HDR_LEN32);
	memset(h, 0, sizeof(h));
	kdump_view_read(k, 0, h, k->size < HDR_LEN ? HDR_LEN32 : HDR_LEN);
	if (memcmp(h, KD_SIG, 8) != 0)
		return kerr_set(e, KVS_E_FORMAT, "flattened stream does not rebuild a kdump "
		    "file (it starts \"%.8s\"; an ELF dump flattened with makedumpfile -F -E "
		    "must be rebuilt with makedumpfile -R first)", (const char *)h);
	kd_layout(k, h, &f);
	k->status = f.status;
	bsz = f.bsz;
	subsz = f.subsz;
	bmblocks = f.bmblocks;
	k->max_mapnr = f.max_mapnr;
	if (k->version < 1 || k->version > MAX_VERSION)
		return kerr_set(e, KVS_E_VERSION, "kdump header version %u not supported (1-%u; "
		    "read %s)", k->version, MAX_VERSION, layout_name(k));
	if (k->word == 8 && k->size < HDR_LEN)
		return kerr_set(e, KVS_E_TRUNCATED, "kdump header truncated (%llu bytes, want %u)",
		    (unsigned long long)k->size, HDR_LEN);
	if (bsz < (int32_t)MIN_BLOCK || bsz > (int32_t)MAX_BLOCK || (bsz & (bsz - 1)) != 0)
		return kerr_set(e, KVS_E_FORMAT, "kdump block size %d is not a power of two "
		    "from %u to %u (header read %s)", bsz, MIN_BLOCK, MAX_BLOCK, layout_name(k));
	k->bs = (uint64_t)bsz;
	k->shift = (unsigned)__builtin_ctzll(k->bs);
	if (subsz < 0)
		return kerr_set(e, KVS_E_FORMAT, "kdump sub-header of %d blocks", subsz);
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

	/* No sub-header (sub_hdr_size 0, as old header versions may write):
	 * no VMCOREINFO, phys_base 0, not split, the main header's max_mapnr. */
	memset(sh, 0, sizeof(sh));
	if (subsz > 0) {
		kdump_view_read(k, k->bs, sh, SUB_MAX);
		if (k->word == 4)
			l = k->version >= 3 && sub_fit(k, sh, &sub_ilp32_aligned, f.max_mapnr) >
			    sub_fit(k, sh, &sub_ilp32_packed, f.max_mapnr) ?
			    &sub_ilp32_aligned : &sub_ilp32_packed;
		k->phys_base = uword(k, sh);
		k->dump_level = (int32_t)kd32(k, sh + k->word);
		if (k->version >= 6)
			k->max_mapnr = kd64(k, sh + l->mapnr64);
	}
	if (k->max_mapnr > k->bm_bytes * 8)
		return kerr_set(e, KVS_E_FORMAT, "kdump max_mapnr %llu exceeds the %llu bits of "
		    "each bitmap (bitmap_blocks %u)", (unsigned long long)k->max_mapnr,
		    (unsigned long long)(k->bm_bytes * 8), bmblocks);
	k->start_pfn = 0;
	k->end_pfn = k->max_mapnr;
	if (subsz == 0)
		return 0;
	if (k->version >= 2 && (int32_t)kd32(k, sh + l->split) != 0) {
		k->split = true;
		k->start_pfn = k->version >= 6 ? kd64(k, sh + l->start64) : uword(k, sh + l->start);
		k->end_pfn = k->version >= 6 ? kd64(k, sh + l->end64) : uword(k, sh + l->end);
		if (k->start_pfn > k->end_pfn || k->end_pfn > k->max_mapnr)
			return kerr_set(e, KVS_E_FORMAT, "split kdump part holds pfns [0x%llx, 0x%llx), "
			    "not within [0, max_mapnr 0x%llx)", (unsigned long long)k->start_pfn,
			    (unsigned long long)k->end_pfn, (unsigned long long)k->max_mapnr);
	}
	if (k->version >= 3) {
		uint64_t o = kd64(k, sh + l->vmci_off), n = uword(k, sh + l->vmci_size);
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
			const uint8_t *t = kdump_view_get(k, o, n, (uint8_t *)k->vmci_copy);
			if (t != (const uint8_t *)k->vmci_copy) {
				free(k->vmci_copy);     /* one stretch of the mapping: borrow it */
				k->vmci_copy = NULL;
			}
			k->info.vmcoreinfo = (const char *)t;
			k->info.vmcoreinfo_len = n;
		}
	}
	if (k->version >= 4 && k->info.vmcoreinfo == NULL) {
		uint64_t o = kd64(k, sh + l->note_off), n = uword(k, sh + l->note_size);
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
