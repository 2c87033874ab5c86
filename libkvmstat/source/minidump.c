/*
 * source_minidump.c - FreeBSD minidumps: amd64 versions 1 to 3, arm64
 * versions 1 to 3 (4 KiB pages).
 *
 * File: header page, message buffer, dump_avail ranges (amd64 v3, arm64 v2
 * and v3), page bitmap, page-table section, then one 4 KiB page per set
 * bitmap bit in bit order.  Without dump_avail, bits number pa/4096; with
 * it, they number pages through the concatenated dump_avail ranges.
 *
 * The header's fields sit where each (magic, version) puts them: the
 * layouts[] table below, the one place that knows.  amd64's page-table
 * section holds PTEs per 4 KiB (v1) or PDEs per 2 MiB (v2, v3); arm64's
 * always L3 descriptors per 4 KiB of kernel address space from kernbase,
 * and its header adds the direct map's physical base (dmapphys) and, from
 * v3, a flags word whose low bits give the page size (0: 4 KiB, 1: 16 KiB).
 * The source says which machine the dump is of (EM_*) and hands the
 * section over as is; what an entry means is the architecture's business.
 *
 * Finding a page's file offset needs the number of set bits before its bit.
 * A rank table holds the running popcount at every 512-bit block (8 bytes
 * per 2 MiB of physical memory), so a lookup is one table load plus at most
 * 8 popcounts: O(1).  It is filled lazily, up to the highest block a read
 * has needed, so open never scans the bitmap, let alone the data pages.
 */
#include <elf.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

#define PAGE 4096ULL
#define RND(x) (((x) + PAGE - 1) & ~(PAGE - 1))
#define BLOCK_WORDS 8           /* 512 bits per rank entry */
#define MAX_RANGES 4096

/* Where one (magic, version)'s header keeps its fields; 0 = not there. */
struct md_layout {
	const char *magic;          /* the 24-byte field, NUL-padded */
	const char *arch;           /* for messages */
	unsigned version;
	unsigned machine;           /* EM_* of the dumped kernel */
	int pt_level;               /* 1: an entry per 4 KiB, 2: per 2 MiB */
	unsigned kernbase, dmapphys, dmapbase, dmapend;
	unsigned availsize;         /* dump_avail section's size, when there is one */
	unsigned flags;
};

#define MD_AMD64 "minidump FreeBSD/amd64"
#define MD_ARM64 "minidump FreeBSD/arm64"
static const struct md_layout layouts[] = {
	{ MD_AMD64, "amd64", 1, EM_X86_64, 1, 40, 0, 48, 56, 0, 0 },
	{ MD_AMD64, "amd64", 2, EM_X86_64, 2, 40, 0, 48, 56, 0, 0 },
	{ MD_AMD64, "amd64", 3, EM_X86_64, 2, 40, 0, 48, 56, 64, 0 },
	{ MD_ARM64, "arm64", 1, EM_AARCH64, 1, 40, 48, 56, 64, 0, 0 },
	{ MD_ARM64, "arm64", 2, EM_AARCH64, 1, 40, 48, 56, 64, 72, 0 },
	{ MD_ARM64, "arm64", 3, EM_AARCH64, 1, 40, 48, 56, 64, 72, 76 },
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

struct range {
	uint64_t start, end;    /* page numbers [start, end) */
	uint64_t firstbit;
};

struct minidump {
	const uint8_t *map;
	uint8_t *own;                   /* the headers, read through a view */
	const struct kvs_view *view;    /* under a layer: pages read through it */
	uint64_t len;
	unsigned version;
	const struct md_layout *lay;
	const uint64_t *bitmap;
	uint64_t nbits;
	uint64_t *rank;
	uint64_t data_off;
	uint64_t dumped;
	uint64_t nwords;
	uint64_t rank_valid;    /* rank[0..rank_valid] are filled */
	struct range *ranges;   /* v3 only */
	size_t nranges;
	struct kvs_src_info info;
};

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

/* The layout of a header page's magic and version; NULL if none. */
static const struct md_layout *
md_layout_of(const uint8_t *hdr)
{
	size_t i;

	for (i = 0; i < NLAYOUTS; i++)
		if (strncmp((const char *)hdr, layouts[i].magic, 24) == 0 &&
		    rd32(hdr + 24) == layouts[i].version)
			return &layouts[i];
	return NULL;
}

/* Whether any layout has this magic (for the message when none has the version). */
static const struct md_layout *
md_magic_known(const uint8_t *hdr)
{
	size_t i;

	for (i = 0; i < NLAYOUTS; i++)
		if (strncmp((const char *)hdr, layouts[i].magic, 24) == 0)
			return &layouts[i];
	return NULL;
}

/*
 * Under a layer (a compressed dump): read the headers - everything before
 * the first data page - into *own; *len is their length, or less when the
 * stream ends first (the checks below then report the truncation).
 */
static int
md_view_head(const struct kvs_view *v, uint8_t **own, uint64_t *len, struct kvs_error *e)
{
	uint8_t hdr[PAGE];
	uint64_t n = v->size < PAGE ? v->size : PAGE, end;

	if (n < 8)
		return KVS_NOTMINE;
	if (v->read(v->priv, 0, hdr, (size_t)n, e) != 0)
		return -1;                      /* the layer says why */
	if (memcmp(hdr, "minidump", 8) != 0)
		return KVS_NOTMINE;
	end = PAGE;
	if (n == PAGE) {
		const struct md_layout *l = md_layout_of(hdr);
		end += RND((uint64_t)rd32(hdr + 28)) + RND((uint64_t)rd32(hdr + 32)) +
		    RND((uint64_t)rd32(hdr + 36)) +
		    (l != NULL && l->availsize ? RND((uint64_t)rd32(hdr + l->availsize)) : 0);
	}
	if (end > v->size)
		end = v->size;
	if (end > (1ULL << 30))
		return kerr_set(e, KVS_E_FORMAT, "minidump headers of %llu bytes are too large "
		    "to read from a %s stream", (unsigned long long)end, v->layer);
	*own = malloc((size_t)end);
	if (*own == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory for the minidump headers");
	if (v->read(v->priv, 0, *own, (size_t)end, e) != 0) {
		free(*own);
		*own = NULL;
		return -1;
	}
	*len = end;
	return 0;
}

static int
md_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	uint32_t msgsz, bmsz, pmsz, dasz = 0;
	uint64_t off, nwords, total = 0;
	struct minidump *m;
	const uint8_t *map = a->map;
	uint64_t map_len = a->map_len;
	uint8_t *own = NULL;

	if (map == NULL && a->view != NULL) {
		int rc = md_view_head(a->view, &own, &map_len, e);
		if (rc != 0)
			return rc;
		map = own;
	}
	if (map == NULL || map_len < 8 || memcmp(map, "minidump", 8) != 0) {
		free(own);
		return KVS_NOTMINE;
	}
	if (map_len < PAGE) {
		free(own);
		return kerr_set(e, KVS_E_TRUNCATED, "minidump header truncated (%llu bytes)",
		    (unsigned long long)map_len);
	}
	if (md_magic_known(map) == NULL) {
		kerr_set(e, KVS_E_FORMAT, "minidump for another architecture "
		    "(\"%.24s\"; amd64 and arm64 are read)", (const char *)map);
		free(own);
		return -1;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		free(own);
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	}
	m->map = map;
	m->own = own;
	m->view = a->view;
	/* Under a layer, map holds the headers only; pages are read through
	 * the view, whose size is the stream's. */
	m->len = a->view != NULL ? a->view->size : map_len;
	m->version = rd32(map + 24);
	msgsz = rd32(map + 28);
	bmsz = rd32(map + 32);
	pmsz = rd32(map + 36);
	if ((m->lay = md_layout_of(map)) == NULL) {
		kerr_set(e, KVS_E_VERSION, "FreeBSD/%s minidump version %u not supported (1-3)",
		    md_magic_known(map)->arch, m->version);
		goto fail;
	}
	if (m->lay->flags != 0 && (rd32(map + m->lay->flags) & 3) != 0) {
		uint32_t ps = rd32(map + m->lay->flags) & 3;
		kerr_set(e, KVS_E_VERSION, "FreeBSD/%s minidump of %s pages (flags 0x%x): "
		    "only 4 KiB-page minidumps are read", m->lay->arch,
		    ps == 1 ? "16 KiB" : ps == 2 ? "64 KiB" : "unknown-size", rd32(map + m->lay->flags));
		goto fail;
	}
	if (m->lay->availsize != 0)
		dasz = rd32(map + m->lay->availsize);

	/* Section bounds: 64-bit arithmetic on 32-bit sizes cannot overflow. */
	off = PAGE;
	m->info.msgbuf = map + off;
	m->info.msgbuf_len = msgsz;
	off += RND((uint64_t)msgsz);
	if (off > map_len) {
		kerr_set(e, KVS_E_TRUNCATED, "message buffer (msgbufsize %u bytes at "
		    "offset 0x1000) past end of file (%llu bytes)", msgsz,
		    (unsigned long long)map_len);
		goto fail;
	}
	if (m->lay->availsize != 0) {
		uint64_t n = dasz / 16, k;
		if (off + RND((uint64_t)dasz) > map_len) {
			kerr_set(e, KVS_E_TRUNCATED, "dump_avail section (dumpavailsize %u "
			    "bytes at offset 0x%llx) past end of file (%llu bytes)", dasz,
			    (unsigned long long)off, (unsigned long long)map_len);
			goto fail;
		}
		/* Count up to the zero terminator first, bounded by MAX_RANGES:
		 * a corrupt section is never scanned further than that. */
		for (k = 0; k < n && k <= MAX_RANGES; k++)
			if (rd64(map + off + k * 16 + 8) == 0)
				break;
		if (k > MAX_RANGES) {
			kerr_set(e, KVS_E_FORMAT, "dump_avail section holds more than %u "
			    "ranges (dumpavailsize %u)", MAX_RANGES, dasz);
			goto fail;
		}
		n = k;
		m->ranges = calloc(n ? n : 1, sizeof(*m->ranges));
		if (m->ranges == NULL) {
			kerr_set(e, KVS_E_NOMEM, "out of memory");
			goto fail;
		}
		for (k = 0, total = 0; k < n; k++) {
			uint64_t s = rd64(map + off + k * 16), en = rd64(map + off + k * 16 + 8);
			/* Page numbers, rounded outward without overflow. */
			uint64_t ps = s / PAGE, pe = en / PAGE + (en % PAGE != 0);
			if (en < s || (m->nranges > 0 && ps < m->ranges[m->nranges - 1].end)) {
				kerr_set(e, KVS_E_FORMAT, "dump_avail range %llu [0x%llx, 0x%llx) "
				    "is not ascending", (unsigned long long)k,
				    (unsigned long long)s, (unsigned long long)en);
				goto fail;
			}
			m->ranges[m->nranges++] = (struct range){ ps, pe, total };
			total += pe - ps;
		}
		off += RND((uint64_t)dasz);
	}
	if (off + RND((uint64_t)bmsz) > map_len) {
		kerr_set(e, KVS_E_TRUNCATED, "page bitmap (bitmapsize %u bytes at offset 0x%llx) past "
		    "end of file (%llu bytes)", bmsz, (unsigned long long)off,
		    (unsigned long long)map_len);
		goto fail;
	}
	m->bitmap = (const uint64_t *)(map + off);
	nwords = bmsz / 8;
	m->nbits = nwords * 64;
	if (m->lay->availsize != 0 && total > m->nbits) {
		kerr_set(e, KVS_E_FORMAT, "dump_avail covers %llu pages but the page bitmap "
		    "(bitmapsize %u) holds only %llu bits", (unsigned long long)total, bmsz,
		    (unsigned long long)m->nbits);
		goto fail;
	}
	off += RND((uint64_t)bmsz);
	if (off + (uint64_t)pmsz > map_len) {
		kerr_set(e, KVS_E_TRUNCATED, "page-table section (pmapsize %u bytes at offset 0x%llx) "
		    "past end of file (%llu bytes)", pmsz, (unsigned long long)off,
		    (unsigned long long)map_len);
		goto fail;
	}
	m->info.pt = (const uint64_t *)(map + off);
	m->info.pt_entries = pmsz / 8;
	off += RND((uint64_t)pmsz);
	m->data_off = off;

	/* The rank table is filled lazily up to the highest block a read has
	 * needed (rank_valid), so opening costs the same for any dump size. */
	m->nwords = nwords;
	m->rank = malloc((nwords / BLOCK_WORDS + 1) * sizeof(*m->rank));
	if (m->rank == NULL) {
		kerr_set(e, KVS_E_NOMEM, "out of memory for the bitmap rank index");
		goto fail;
	}
	m->rank[0] = 0;
	m->rank_valid = 0;

	m->info.format = "minidump";
	m->info.format_version = m->version;
	m->info.page_size = PAGE;
	m->info.source_bytes = m->len;
	m->info.machine = m->lay->machine;
	m->info.pt_level = m->lay->pt_level;
	m->info.pt_base = rd64(map + m->lay->kernbase);
	m->info.direct_base = rd64(map + m->lay->dmapbase);
	m->info.direct_end = rd64(map + m->lay->dmapend);
	m->info.direct_phys = m->lay->dmapphys ? rd64(map + m->lay->dmapphys) : 0;
	*priv = m;
	return 0;
fail:
	free(m->rank);
	free(m->ranges);
	free(m->own);
	free(m);
	return -1;
}

/* Extend the rank table through block `blk` (running popcounts). */
static void
fill_rank(struct minidump *m, uint64_t blk)
{
	uint64_t b, i;

	for (b = m->rank_valid; b < blk; b++) {
		uint64_t r = m->rank[b];
		for (i = b * BLOCK_WORDS; i < (b + 1) * BLOCK_WORDS && i < m->nwords; i++)
			r += (uint64_t)__builtin_popcountll(le64toh(m->bitmap[i]));
		m->rank[b + 1] = r;
	}
	if (blk > m->rank_valid)
		m->rank_valid = blk;
}

static uint64_t md_dumped_pages(void *priv);

/* Bitmap bit of a physical page number, or -1 if no bit covers it. */
static int64_t
page_bit(const struct minidump *m, uint64_t pfn)
{
	size_t lo = 0, hi = m->nranges;

	if (m->lay->availsize == 0)
		return pfn < m->nbits ? (int64_t)pfn : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->ranges[mid].start <= pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pfn >= m->ranges[lo - 1].end)
		return -1;
	uint64_t bit = m->ranges[lo - 1].firstbit + (pfn - m->ranges[lo - 1].start);
	return bit < m->nbits ? (int64_t)bit : -1;
}

static int
page_offset(struct minidump *m, uint64_t pa, uint64_t *off, struct kvs_error *e)
{
	int64_t bit = page_bit(m, pa / PAGE);
	uint64_t w, r, i;

	if (bit < 0 || !(le64toh(m->bitmap[bit / 64]) >> (bit % 64) & 1)) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical page 0x%llx not in dump",
		    (unsigned long long)(pa & ~(PAGE - 1)));
		kerr_fault(e, pa);
		return -1;
	}
	w = (uint64_t)bit / 64;
	fill_rank(m, w / BLOCK_WORDS);
	r = m->rank[w / BLOCK_WORDS];
	for (i = w - w % BLOCK_WORDS; i < w; i++)
		r += (uint64_t)__builtin_popcountll(le64toh(m->bitmap[i]));
	r += (uint64_t)__builtin_popcountll(le64toh(m->bitmap[w]) & ((1ULL << (bit % 64)) - 1));
	*off = m->data_off + r * PAGE + (pa & (PAGE - 1));
	if (*off + (PAGE - (pa & (PAGE - 1))) > m->len) {
		/* Counting the claim is a whole-bitmap pass, fine on an error path. */
		uint64_t claimed = md_dumped_pages(m);
		uint64_t held = m->len > m->data_off ? (m->len - m->data_off) / PAGE : 0;
		kerr_set(e, KVS_E_TRUNCATED, "minidump truncated: %llu pages claimed, file "
		    "holds %llu (physical page 0x%llx is data page %llu)",
		    (unsigned long long)claimed, (unsigned long long)held,
		    (unsigned long long)(pa & ~(PAGE - 1)), (unsigned long long)r);
		kerr_fault(e, pa);
		return -1;
	}
	return 0;
}

static int
md_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct minidump *m = priv;
	uint8_t *p = buf;

	while (len > 0) {
		uint64_t off, n = PAGE - (pa & (PAGE - 1));
		if (n > len)
			n = len;
		if (page_offset(m, pa, &off, e) != 0)
			return -1;
		if (m->view != NULL) {
			if (m->view->read(m->view->priv, off, p, (size_t)n, e) != 0)
				return kerr_push(e, "physical page 0x%llx", (unsigned long long)(pa & ~(PAGE - 1)));
		} else
			memcpy(p, m->map + off, n);
		p += n;
		pa += n;
		len -= n;
	}
	return 0;
}

/* Neighbouring pages that are both dumped are neighbouring bits, so their
 * data pages follow each other in the file; each page is still checked
 * (dumped, and where that says), which also holds that up. */
static const void *
md_map(void *priv, uint64_t pa, size_t len)
{
	struct minidump *m = priv;
	struct kvs_error e;
	uint64_t off, next, first;

	if (m->view != NULL || len == 0 || pa + len < pa)
		return NULL;
	kerr_clear(&e);
	if (page_offset(m, pa, &first, &e) != 0)
		return NULL;
	for (next = (pa | (PAGE - 1)) + 1; next < pa + len; next += PAGE)
		if (page_offset(m, next, &off, &e) != 0 || off != first + (next - pa))
			return NULL;
	return first + len <= m->len ? m->map + first : NULL;
}

static void
md_info(void *priv, struct kvs_src_info *out)
{
	*out = ((struct minidump *)priv)->info;
}

/* Counting the dumped pages is the one whole-bitmap pass; only `info` asks. */
static uint64_t
md_dumped_pages(void *priv)
{
	struct minidump *m = priv;

	fill_rank(m, m->nwords / BLOCK_WORDS);
	return m->rank[m->nwords / BLOCK_WORDS];
}

static void
md_close(void *priv)
{
	struct minidump *m = priv;

	free(m->rank);
	free(m->ranges);
	free(m->own);
	free(m);
}

const struct kvs_source_ops kvs_source_minidump = {
	.name = "minidump",
	.open = md_open,
	.read_phys = md_read,
	.map_phys = md_map,
	.info = md_info,
	.dumped_pages = md_dumped_pages,
	.close = md_close,
};
