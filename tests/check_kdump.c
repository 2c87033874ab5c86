/*
 * check_kdump.c - the kdump-compressed source (source/kdump.c) on small
 * dumps written here: every page compression (none, zlib, lzo, snappy,
 * zstd, and the four mixed in one file), header versions 1 to 6, pages
 * filtered out and memory holes, the flattened stream (records shuffled,
 * holes no record writes, overlapping records where the later one wins),
 * the parts of a split dump, the page cache's bound and counters, a sparse
 * dump with 64 MiB of bitmaps that opens without reading them, and corrupt
 * headers, streams, descriptors and pages; past 65,536 pfns with the two
 * bitmaps far apart (kdump_beyond_64k), and a failed page in a full cache set.
 *
 * The truth: page_of(pfn) says what a dumped page holds (zeros, text naming
 * its pfn that compresses well, or noise that does not and is stored raw);
 * pf_mem / pf_dumped / pf_here say which pfns exist, which the dump level
 * kept, and which this file (or part) holds.  The real dumps made under
 * QEMU are checked by tests/linux/realcore.sh, not here.
 */
#include <check.h>
#include <fcntl.h>
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "kvs_private.h"
#include "testutil.h"

#define PG 4096U
#define TAG (1ULL << 63)
#define HDR_LEN 464
#define SUB_BLOCKS 2U
#define VMCI_AT (PG + 512)      /* VMCOREINFO text, in the sub-header blocks */
#define NOTE_AT (PG + 2048)     /* ELF notes, likewise */

/* Descriptor flags and main-header status bits (the format's values). */
enum { C_NONE = 0, C_ZLIB = 1, C_LZO = 2, C_SNAPPY = 4, C_ZSTD = 0x20, C_MIXED = -1 };
#define ST_INCOMPLETE 8U

static const struct kvs_source_ops *const kd = &kvs_source_kdump;

/* In loops over every page: Check sends a message per passing ck_assert,
 * which adds up to seconds here; this one speaks only on failure. */
#define REQUIRE(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)
static const char vmci_text[] = "OSRELEASE=6.1.0-test\nPAGESIZE=4096\nKERNELOFFSET=0\n";

/* ----------------------------------------------------------- the truth */

struct spec {
	unsigned version;       /* header_version 1..6 */
	uint64_t max_mapnr;
	int comp;               /* C_* for every page, or C_MIXED */
	bool holes;             /* pfn % 13 == 7: no memory */
	bool filter;            /* pfn % 5 == 2: memory, filtered out */
	bool gaps;              /* [GAP_HOLE): no memory; [GAP_FILT): filtered out */
	bool split;
	uint64_t start, end;    /* split: the pfns this part holds */
	bool vmci_sub;          /* v3+: VMCOREINFO named by the sub-header */
	bool vmci_note;         /* v4+: VMCOREINFO as an ELF note */
	uint32_t status;
};

/* Large dumps: a hole of 4,001 pfns across the rank block boundary at
 * 12,288, and 5,520 pfns filtered out whole from the boundary at 20,480. */
#define GAP_HOLE_LO 9000U
#define GAP_HOLE_HI 13001U
#define GAP_FILT_LO 20480U
#define GAP_FILT_HI 26000U

static bool
pf_mem(const struct spec *s, uint64_t pfn)
{
	return pfn < s->max_mapnr && !(s->holes && pfn % 13 == 7) &&
	    !(s->gaps && pfn >= GAP_HOLE_LO && pfn < GAP_HOLE_HI);
}

static bool
pf_dumped(const struct spec *s, uint64_t pfn)
{
	return pf_mem(s, pfn) && !(s->filter && pfn % 5 == 2) &&
	    !(s->gaps && pfn >= GAP_FILT_LO && pfn < GAP_FILT_HI);
}

static bool
pf_here(const struct spec *s, uint64_t pfn)
{
	return pf_dumped(s, pfn) && (!s->split || (pfn >= s->start && pfn < s->end));
}

static void
page_of(uint64_t pfn, uint8_t *p)
{
	uint64_t x = pfn * 0x9e3779b97f4a7c15ULL + 1, w = pfn | TAG;
	size_t n = 8;

	switch (pfn % 6) {
	case 3:
		memset(p, 0, PG);
		return;
	case 5:
		for (size_t i = 0; i < PG; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(p + i, &x, 8);
		}
		return;
	default: {
		char t[40];
		size_t k = (size_t)snprintf(t, sizeof(t), "pfn 0x%llx holds this; ",
		    (unsigned long long)pfn);
		memcpy(p, &w, 8);
		for (; n < PG; n += k)
			memcpy(p + n, t, k < PG - n ? k : PG - n);
	}
	}
}

static int
comp_of(const struct spec *s, uint64_t pfn)
{
	static const int all[4] = { C_ZLIB, C_LZO, C_SNAPPY, C_ZSTD };
	return s->comp == C_MIXED ? all[pfn % 4] : s->comp;
}

/* Compress one buffer with c; the size, or 0 when not smaller than n. */
static size_t
squeeze(int c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
	size_t out = 0;

	switch (c) {
	case C_ZLIB: {
		uLongf d = (uLongf)cap;
		REQUIRE(compress2(dst, &d, src, (uLong)n, 6) == Z_OK, "compress2");
		out = d;
		break;
	}
	case C_LZO: {
		static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
		lzo_uint d = (lzo_uint)cap;
		REQUIRE(lzo_init() == LZO_E_OK && lzo1x_1_compress(src, n, dst, &d, wrk) == LZO_E_OK,
		    "lzo1x_1_compress");
		out = d;
		break;
	}
	case C_SNAPPY: {
		size_t d = cap;
		REQUIRE(snappy_compress((const char *)src, n, (char *)dst, &d) == SNAPPY_OK,
		    "snappy_compress");
		out = d;
		break;
	}
	case C_ZSTD:
		out = ZSTD_compress(dst, cap, src, n, 3);
		REQUIRE(!ZSTD_isError(out), "ZSTD_compress");
		break;
	default:
		return 0;
	}
	return out < PG ? out : 0;
}

#define CAP (2 * PG + 1024)     /* room for any compressor's worst case */

static void
put32(uint8_t *b, uint64_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void
put64(uint8_t *b, uint64_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static uint64_t
get64(const uint8_t *b, uint64_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

/* What a build made, for the checks. */
struct built {
	uint8_t *b;
	size_t len;
	uint64_t bm_blocks, pd_off, ndesc, ncomp;
};

/* Write the dump s describes, as makedumpfile lays it out. */
static void
kd_build(const struct spec *s, struct built *o)
{
	uint64_t bmbytes = ((s->max_mapnr + 7) / 8 + PG - 1) / PG * PG, pfn, at, nd = 0;
	uint8_t page[PG], comp[CAP];

	if (bmbytes == 0)
		bmbytes = PG;
	memset(o, 0, sizeof(*o));
	o->bm_blocks = 2 * bmbytes / PG;
	o->pd_off = (1 + SUB_BLOCKS + o->bm_blocks) * PG;
	for (pfn = 0; pfn < s->max_mapnr; pfn++)
		nd += pf_here(s, pfn);
	o->ndesc = nd;
	size_t cap = o->pd_off + nd * 24 + PG + nd * PG + PG;
	o->b = calloc(1, cap);
	ck_assert_ptr_nonnull(o->b);
	uint8_t *b = o->b;

	/* Main header. */
	memcpy(b, "KDUMP   ", 8);
	put32(b, 8, s->version);
	memcpy(b + 12, "Linux", 5);
	memcpy(b + 12 + 4 * 65, "x86_64", 6);
	put32(b, 424, s->status);
	put32(b, 428, PG);
	put32(b, 432, SUB_BLOCKS);
	put32(b, 436, (uint32_t)o->bm_blocks);
	put32(b, 440, s->max_mapnr > UINT32_MAX ? UINT32_MAX : (uint32_t)s->max_mapnr);
	put32(b, 460, 1);

	/* Sub-header. */
	put32(b, PG + 8, 31);
	if (s->version >= 2 && s->split) {
		put32(b, PG + 12, 1);
		put64(b, PG + 16, s->start);
		put64(b, PG + 24, s->end);
	}
	memcpy(b + VMCI_AT, vmci_text, sizeof(vmci_text) - 1);
	if (s->version >= 3 && s->vmci_sub) {
		put64(b, PG + 32, VMCI_AT);
		put64(b, PG + 40, sizeof(vmci_text) - 1);
	}
	if (s->version >= 4 && s->vmci_note) {
		/* A PRSTATUS-like note first, then VMCOREINFO. */
		uint64_t n = NOTE_AT;
		put32(b, n, 5); put32(b, n + 4, 16); put32(b, n + 8, 1);
		memcpy(b + n + 12, "CORE", 5);
		n += 12 + 8 + 16;
		put32(b, n, 11); put32(b, n + 4, sizeof(vmci_text) - 1); put32(b, n + 8, 0);
		memcpy(b + n + 12, "VMCOREINFO", 11);
		memcpy(b + n + 24, vmci_text, sizeof(vmci_text) - 1);
		n += 24 + ((sizeof(vmci_text) - 1 + 3) & ~3UL);
		put64(b, PG + 48, NOTE_AT);
		put64(b, PG + 56, n - NOTE_AT);
	}
	if (s->version >= 6) {
		if (s->split) {
			put64(b, PG + 80, s->start);
			put64(b, PG + 88, s->end);
		}
		put64(b, PG + 96, s->max_mapnr);
	}

	/* Bitmaps. */
	for (pfn = 0; pfn < s->max_mapnr; pfn++) {
		uint64_t b1 = (1 + SUB_BLOCKS) * PG, b2 = b1 + bmbytes;
		if (pf_mem(s, pfn))
			b[b1 + pfn / 8] |= (uint8_t)(1U << (pfn % 8));
		if (pf_dumped(s, pfn))
			b[b2 + pfn / 8] |= (uint8_t)(1U << (pfn % 8));
	}

	/* Descriptors, the shared zero page, the data. */
	uint64_t zero = o->pd_off + nd * 24, d = 0;
	at = zero + PG;
	for (pfn = 0; pfn < s->max_mapnr; pfn++) {
		uint64_t pd = o->pd_off + d * 24;
		size_t n;
		int c;
		if (!pf_here(s, pfn))
			continue;
		d++;
		page_of(pfn, page);
		if (pfn % 6 == 3) {
			put64(b, pd, zero);
			put32(b, pd + 8, PG);
			continue;
		}
		c = comp_of(s, pfn);
		n = squeeze(c, page, PG, comp, sizeof(comp));
		put64(b, pd, at);
		if (n > 0) {
			put32(b, pd + 8, (uint32_t)n);
			put32(b, pd + 12, (uint32_t)c);
			memcpy(b + at, comp, n);
			at += n;
			o->ncomp++;
		} else {
			put32(b, pd + 8, PG);
			memcpy(b + at, page, PG);
			at += PG;
		}
		put64(b, pd + 16, 0x200);       /* page flags: not read */
	}
	o->len = at;
}

/* -------------------------------------------------- flattened streams */

static uint64_t
rnd(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

static void
put_be64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
}

/*
 * The flattened form of o: its bytes cut into records of 1..6000 bytes in a
 * shuffled order; runs of zeros outside the bitmaps sometimes left out
 * (holes, read as zeros; QEMU leaves the header blocks' padding out);
 * or, with `garbage`, records of junk over random ranges first, all
 * overwritten by the real ones that follow.
 */
static uint8_t *
flat_build(const struct built *o, uint64_t seed, bool garbage, size_t *len)
{
	struct { uint64_t off, len; } *ch;
	const uint8_t *f = o->b;
	size_t flen = o->len, n = 0, i, cap;
	const uint64_t bm_from = (1 + SUB_BLOCKS) * PG, bm_to = o->pd_off;
	uint64_t st = seed * 2654435761U + 7, off;
	uint8_t *b;

	ch = malloc((flen + 1) * sizeof(*ch));
	ck_assert_ptr_nonnull(ch);
	for (off = 0; off < flen; ) {
		uint64_t l = 1 + rnd(&st) % 6000;
		if (l > flen - off)
			l = flen - off;
		bool zero = true;
		for (uint64_t k = 0; k < l && zero; k++)
			zero = f[off + k] == 0;
		/* Holes only without junk, which no later record would cover. */
		if (!(zero && !garbage && off + l < flen && (off + l <= bm_from || off >= bm_to) &&
		    rnd(&st) % 2))
			ch[n].off = off, ch[n].len = l, n++;
		off += l;
	}
	for (i = n; i > 1; i--) {
		size_t j = rnd(&st) % i;
		__typeof__(*ch) t = ch[i - 1];
		ch[i - 1] = ch[j];
		ch[j] = t;
	}
	cap = 4096 + 16 * (2 * n + 1) + 2 * flen + 16;
	b = calloc(1, cap);
	ck_assert_ptr_nonnull(b);
	memcpy(b, "makedumpfile", 12);
	put_be64(b + 16, 1);
	put_be64(b + 24, 1);
	off = 4096;
	if (garbage) {
		uint64_t g = 0;
		for (i = 0; i < n / 3 && g < flen; i++) {
			uint64_t at = rnd(&st) % flen, l = 1 + rnd(&st) % 9000;
			if (l > flen - at)
				l = flen - at;
			if (off + 16 + l > cap - 16 * (n + 1) - flen)
				break;
			put_be64(b + off, at);
			put_be64(b + off + 8, l);
			memset(b + off + 16, 0xa5, l);
			off += 16 + l;
			g += l;
		}
	}
	for (i = 0; i < n; i++) {
		put_be64(b + off, ch[i].off);
		put_be64(b + off + 8, ch[i].len);
		memcpy(b + off + 16, f + ch[i].off, ch[i].len);
		off += 16 + ch[i].len;
	}
	put_be64(b + off, UINT64_MAX);
	put_be64(b + off + 8, UINT64_MAX);
	off += 16;
	free(ch);
	*len = off;
	return b;
}

/* ------------------------------------------------------------ mapping */

struct mapped {
	char path[4096];
	int fd;
	struct stat st;
	void *map;
	struct kvs_open_args a;
};

static void
map_path(struct mapped *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	m->fd = open(path, O_RDONLY);
	ck_assert_int_ge(m->fd, 0);
	ck_assert_int_eq(fstat(m->fd, &m->st), 0);
	if (m->st.st_size > 0) {
		m->map = mmap(NULL, (size_t)m->st.st_size, PROT_READ, MAP_SHARED, m->fd, 0);
		ck_assert_ptr_ne(m->map, MAP_FAILED);
	}
	m->a.path = path;
	m->a.fd = m->fd;
	m->a.st = &m->st;
	m->a.map = m->map;
	m->a.map_len = (uint64_t)m->st.st_size;
}

static void
map_buf(struct mapped *m, const char *name, const void *buf, size_t len)
{
	char path[4096];

	const uint8_t *p = buf;
	int fd;

	/* One write for the whole file (stdio's 4 KiB writes add up here). */
	snprintf(path, sizeof(path), "%s", path_join(test_tmpdir(), name));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		ck_assert_int_gt(n, 0);
		p += n;
		len -= (size_t)n;
	}
	ck_assert_int_eq(close(fd), 0);
	map_path(m, path);
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->a.path = m->path;       /* path[] ends here */
}

static void
map_close(struct mapped *m)
{
	if (m->map != NULL)
		munmap(m->map, (size_t)m->st.st_size);
	close(m->fd);
}

static void *
open_ok(struct mapped *m)
{
	struct kvs_error e;
	void *priv = NULL;

	kerr_clear(&e);
	ck_assert_msg(kd->open(&m->a, &priv, &e) == 0, "open %s: %s", m->a.path, e.msg);
	return priv;
}

/* Opening buf must fail with status st and both substrings (if given). */
static void
expect_fail(const void *buf, size_t len, kvs_status_t st, const char *want1, const char *want2)
{
	struct mapped m;
	struct kvs_error e;
	void *priv = NULL;
	int rc;

	map_buf(&m, "bad", buf, len);
	kerr_clear(&e);
	rc = kd->open(&m.a, &priv, &e);
	if (rc == 0)
		kd->close(priv);
	ck_assert_msg(rc == -1, "open returned %d, want -1 (%s)", rc, want1 ? want1 : "");
	ck_assert_msg(e.status == st, "status %s, want %s; msg '%s'", kvs_status_str(e.status),
	    kvs_status_str(st), e.msg);
	if (want1 != NULL)
		ck_assert_msg(strstr(e.msg, want1) != NULL, "'%s' lacks '%s'", e.msg, want1);
	if (want2 != NULL)
		ck_assert_msg(strstr(e.msg, want2) != NULL, "'%s' lacks '%s'", e.msg, want2);
	map_close(&m);
}

static void
expect_notmine(const struct kvs_source_ops *ops, const void *buf, size_t len)
{
	struct mapped m;
	struct kvs_error e;
	void *priv = NULL;

	map_buf(&m, "foreign", buf, len);
	kerr_clear(&e);
	ck_assert_int_eq(ops->open(&m.a, &priv, &e), KVS_NOTMINE);
	ck_assert_int_eq(e.status, KVS_OK);
	ck_assert_str_eq(e.msg, "");
	map_close(&m);
}

/* Reading [pa, pa+len) must fail with st, fault at fault, and want in the text. */
static void
expect_read_fail(void *priv, uint64_t pa, size_t len, kvs_status_t st, uint64_t fault,
    const char *want)
{
	struct kvs_error e;
	uint8_t buf[2 * PG];

	kerr_clear(&e);
	ck_assert_int_eq(kd->read_phys(priv, pa, buf, len, &e), -1);
	ck_assert_msg(e.status == st, "pa 0x%llx: status %s, want %s; msg '%s'",
	    (unsigned long long)pa, kvs_status_str(e.status), kvs_status_str(st), e.msg);
	ck_assert(e.fault_valid);
	ck_assert_uint_eq(e.fault_addr, fault);
	if (want != NULL)
		ck_assert_msg(strstr(e.msg, want) != NULL, "'%s' lacks '%s'", e.msg, want);
}

/* ------------------------------------------------------- the checker */

/* Every pfn of the spec (and a few past it) read through the file mapped in
 * m: dumped pages give their bytes, others the reason they are missing. */
static void
check_reads(const struct spec *s, const struct built *o, struct mapped *m, const char *format)
{
	void *priv = open_ok(m);
	struct kvs_src_info in;
	struct kvs_error e;
	uint8_t got[2 * PG], want[2 * PG];
	uint64_t pfn, here = 0;

	kd->info(priv, &in);
	ck_assert_str_eq(in.format, format);
	ck_assert_uint_eq(in.format_version, s->version);
	ck_assert_uint_eq(in.page_size, PG);
	ck_assert_uint_eq(in.source_bytes, m->a.map_len);
	ck_assert(!in.live && !in.virtual_only && in.pt == NULL);
	ck_assert_uint_eq(in.cache_hits, 0);
	ck_assert_uint_eq(in.cache_misses, 0);
	if ((s->version >= 3 && s->vmci_sub) || (s->version >= 4 && s->vmci_note)) {
		ck_assert_ptr_nonnull(in.vmcoreinfo);
		ck_assert_uint_eq(in.vmcoreinfo_len, sizeof(vmci_text) - 1);
		ck_assert_int_eq(memcmp(in.vmcoreinfo, vmci_text, sizeof(vmci_text) - 1), 0);
	} else
		ck_assert_ptr_null(in.vmcoreinfo);

	for (pfn = 0; pfn < s->max_mapnr + 3; pfn++) {
		uint64_t pa = (uint64_t)pfn * PG + (pfn % 3) * 8;
		size_t len = PG - (size_t)(pa % PG);
		int rc;
		kerr_clear(&e);
		rc = kd->read_phys(priv, pa, got, len, &e);
		if (pf_here(s, pfn)) {
			REQUIRE(rc == 0, "%s pfn 0x%llx: %s", format, (unsigned long long)pfn, e.msg);
			page_of(pfn, want);
			REQUIRE(memcmp(got, want + pa % PG, len) == 0, "%s pfn 0x%llx: wrong bytes",
			    format, (unsigned long long)pfn);
			here++;
			continue;
		}
		char addr[64];
		const char *why = !pf_mem(s, pfn) ? "(no memory there)" :
		    !pf_dumped(s, pfn) ? "(filtered out)" : "in a part of a split dump not given";
		snprintf(addr, sizeof(addr), "physical 0x%llx not in dump", (unsigned long long)pa);
		REQUIRE(rc == -1 && e.status == KVS_E_NOTDUMPED, "pfn 0x%llx: rc %d, %s", (unsigned long long)pfn,
		    rc, e.msg);
		REQUIRE(e.fault_valid && e.fault_addr == pa, "pfn 0x%llx: fault at 0x%llx",
		    (unsigned long long)pfn, (unsigned long long)e.fault_addr);
		REQUIRE(strstr(e.msg, addr) != NULL, "'%s' lacks '%s'", e.msg, addr);
		REQUIRE(strstr(e.msg, why) != NULL, "'%s' lacks '%s'", e.msg, why);
	}
	ck_assert_uint_eq(here, o->ndesc);
	ck_assert_uint_eq(kd->dumped_pages(priv), o->ndesc);
	kd->info(priv, &in);
	/* Each page was read once: a miss per compressed page, no hits. */
	ck_assert_uint_eq(in.cache_misses, o->ncomp);
	ck_assert_uint_eq(in.cache_hits, 0);

	/* Reads across page boundaries: whole when both are here, else the
	 * fault is the first byte of the missing page. */
	for (pfn = 0; pfn + 1 < s->max_mapnr; pfn++) {
		uint64_t pa = (pfn + 1) * PG - 100;
		if (!pf_here(s, pfn))
			continue;
		kerr_clear(&e);
		int rc = kd->read_phys(priv, pa, got, 200, &e);
		if (pf_here(s, pfn + 1)) {
			REQUIRE(rc == 0, "%s", e.msg);
			page_of(pfn, want);
			page_of(pfn + 1, want + PG);
			REQUIRE(memcmp(got, want + PG - 100, 200) == 0, "pfn 0x%llx: wrong bytes "
			    "across the boundary", (unsigned long long)pfn);
		} else
			REQUIRE(rc == -1 && e.status == KVS_E_NOTDUMPED &&
			    e.fault_addr == (pfn + 1) * PG, "pfn 0x%llx: rc %d fault 0x%llx: %s",
			    (unsigned long long)pfn, rc, (unsigned long long)e.fault_addr, e.msg);
	}
	/* Far away and at the top of the address space. */
	expect_read_fail(priv, 1ULL << 50, 8, KVS_E_NOTDUMPED, 1ULL << 50, "no memory there");
	expect_read_fail(priv, UINT64_MAX - 3, 2, KVS_E_NOTDUMPED, UINT64_MAX - 3, NULL);
	kd->close(priv);
}

/* The dump as written and in its flattened form. */
static void
check_both(const struct spec *s, const char *name)
{
	struct built o;
	struct mapped m;
	size_t flen;
	uint8_t *flat;

	kd_build(s, &o);
	map_buf(&m, name, o.b, o.len);
	check_reads(s, &o, &m, "kdump");
	map_close(&m);
	flat = flat_build(&o, s->version * 31 + (uint64_t)s->comp, false, &flen);
	map_buf(&m, "flat", flat, flen);
	check_reads(s, &o, &m, "kdump-flat");
	map_close(&m);
	free(flat);
	free(o.b);
}

/* ------------------------------------------------------------- tests */

START_TEST(kdump_each_compression)
{
	static const int comps[] = { C_NONE, C_ZLIB, C_LZO, C_SNAPPY, C_ZSTD, C_MIXED };
	static const char *const names[] = { "none", "zlib", "lzo", "snappy", "zstd", "mixed" };

	for (size_t i = 0; i < sizeof(comps) / sizeof(comps[0]); i++) {
		/* 700 pfns: the last bitmap byte is partial; pages filtered out
		 * and holes both present. */
		struct spec s = { .version = 6, .max_mapnr = 700, .comp = comps[i], .holes = true,
			.filter = true, .vmci_sub = true,
			.status = comps[i] == C_MIXED ? C_ZLIB : (uint32_t)comps[i] };
		struct built o;
		kd_build(&s, &o);
		if (comps[i] != C_NONE)
			ck_assert_msg(o.ncomp > 250, "%s: only %llu pages compressed", names[i],
			    (unsigned long long)o.ncomp);
		else
			ck_assert_uint_eq(o.ncomp, 0);
		free(o.b);
		check_both(&s, names[i]);
	}
}
END_TEST

START_TEST(kdump_versions)
{
	for (unsigned v = 1; v <= 6; v++) {
		/* v3 names VMCOREINFO in the sub-header, v4 and v5 only as a
		 * note, v6 both (the sub-header's is taken). */
		struct spec s = { .version = v, .max_mapnr = 333, .comp = C_ZLIB, .holes = true,
			.filter = v % 2 == 0, .vmci_sub = v == 3 || v == 6, .vmci_note = v >= 4,
			.status = C_ZLIB };
		check_both(&s, "version");
	}
}
END_TEST

/* Flattened streams with junk records that later records overwrite. */
START_TEST(kdump_flat_overlaps)
{
	struct spec s = { .version = 6, .max_mapnr = 500, .comp = C_MIXED, .holes = true,
		.filter = true, .vmci_sub = true, .status = C_ZLIB };
	struct built o;
	struct mapped m;
	size_t flen;

	kd_build(&s, &o);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		uint8_t *flat = flat_build(&o, seed, true, &flen);
		map_buf(&m, "overlap.flat", flat, flen);
		check_reads(&s, &o, &m, "kdump-flat");
		map_close(&m);
		free(flat);
	}
	free(o.b);
}
END_TEST

/* makedumpfile --split: each part has the full bitmaps, and descriptors
 * and data for its own pfns only. */
START_TEST(kdump_split)
{
	static const uint64_t cut[] = { 0, 200, 451, 640 };

	for (unsigned v = 5; v <= 6; v++) {
		uint64_t total = 0;
		for (int p = 0; p < 3; p++) {
			struct spec s = { .version = v, .max_mapnr = 640, .comp = C_MIXED,
				.holes = true, .filter = true, .split = true, .start = cut[p],
				.end = cut[p + 1], .vmci_sub = true, .status = C_ZLIB };
			struct built o;
			kd_build(&s, &o);
			total += o.ndesc;
			free(o.b);
			check_both(&s, "part");
		}
		struct spec all = { .max_mapnr = 640, .holes = true, .filter = true };
		uint64_t n = 0;
		for (uint64_t pfn = 0; pfn < 640; pfn++)
			n += pf_dumped(&all, pfn);
		ck_assert_uint_eq(total, n);
	}
}
END_TEST

/* The parts given together (-M a,b,c): add_part joins them, in any order,
 * and every dumped page reads from the part holding it; a part given twice
 * or a whole dump among parts is refused. */
START_TEST(kdump_split_joined)
{
	static const uint64_t cut[] = { 0, 200, 451, 640 };
	static const int order[] = { 1, 0, 2 };
	struct spec all = { .max_mapnr = 640, .holes = true, .filter = true };
	struct mapped m[4];
	struct built o[4];
	struct kvs_error e;
	uint8_t got[PG], want[PG];
	void *priv;
	int p;

	for (p = 0; p < 3; p++) {
		struct spec s = { .version = 6, .max_mapnr = 640, .comp = C_MIXED, .holes = true,
			.filter = true, .split = true, .start = cut[p], .end = cut[p + 1],
			.vmci_sub = true, .status = C_ZLIB };
		char name[32];
		kd_build(&s, &o[p]);
		snprintf(name, sizeof(name), "joined%d", p);
		map_buf(&m[p], name, o[p].b, o[p].len);
	}
	priv = open_ok(&m[order[0]]);
	for (p = 1; p < 3; p++) {
		kerr_clear(&e);
		ck_assert_msg(kd->add_part(priv, &m[order[p]].a, &e) == 0, "%s", e.msg);
	}
	kerr_clear(&e);
	ck_assert_int_eq(kd->add_part(priv, &m[0].a, &e), -1);
	ck_assert_msg(strstr(e.msg, "overlap") != NULL, "%s", e.msg);
	for (uint64_t pfn = 0; pfn < 640; pfn++) {
		int rc;
		kerr_clear(&e);
		rc = kd->read_phys(priv, pfn * PG, got, PG, &e);
		if (pf_dumped(&all, pfn)) {
			ck_assert_msg(rc == 0, "pfn 0x%llx: %s", (unsigned long long)pfn, e.msg);
			page_of(pfn, want);
			ck_assert_msg(memcmp(got, want, PG) == 0, "pfn 0x%llx: wrong bytes",
			    (unsigned long long)pfn);
		} else
			ck_assert_msg(rc == -1 && e.status == KVS_E_NOTDUMPED, "pfn 0x%llx: rc %d",
			    (unsigned long long)pfn, rc);
	}
	kd->close(priv);
	/* A whole dump is not a part. */
	{
		struct spec w = { .version = 6, .max_mapnr = 640, .comp = C_ZLIB, .status = C_ZLIB };
		kd_build(&w, &o[3]);
		map_buf(&m[3], "whole", o[3].b, o[3].len);
		priv = open_ok(&m[0]);
		kerr_clear(&e);
		ck_assert_int_eq(kd->add_part(priv, &m[3].a, &e), -1);
		ck_assert_msg(strstr(e.msg, "whole dump") != NULL, "%s", e.msg);
		kd->close(priv);
	}
	for (p = 0; p < 4; p++) {
		map_close(&m[p]);
		free(o[p].b);
	}
}
END_TEST

/*
 * Past 65,536 pfns: 70,001 (18 rank blocks of 4,096 bits, the last bitmap
 * byte partial), every compression mixed with raw and zero pages, and the
 * two bitmaps far apart: a fifth of the memory plus 5,520 pfns from a block
 * boundary on are present but filtered out (makedumpfile -d), and a hole of
 * 4,001 pfns spans a block boundary.  As written, flattened, and as a split
 * set cut at odd pfns (v5 and v6 parts), each part alone and all joined.
 * A rank that counts the 1st bitmap, stops a block short or skips a word
 * finds another page's descriptor, whose bytes name another pfn.
 */
START_TEST(kdump_beyond_64k)
{
	static const uint64_t cut[] = { 0, 4099, 33333, 65539, 70001 };
	static const int order[] = { 2, 0, 3, 1 };
	const uint64_t mapnr = 70001;
	struct spec whole = { .version = 6, .max_mapnr = mapnr, .comp = C_MIXED, .holes = true,
		.filter = true, .gaps = true, .vmci_sub = true, .status = C_ZLIB };
	struct mapped m[4];
	struct built o;
	struct kvs_error e;
	struct kvs_src_info in;
	uint8_t got[PG], want[PG];
	uint64_t n_mem = 0, n_dumped = 0, total = 0, ranks_differ = 0;
	void *priv;

	/* The model itself: both bitmaps differ in every rank block. */
	for (uint64_t b = 0; b * 4096 < mapnr; b++) {
		uint64_t a = 0, d = 0;
		for (uint64_t pfn = b * 4096; pfn < (b + 1) * 4096 && pfn < mapnr; pfn++) {
			a += pf_mem(&whole, pfn);
			d += pf_dumped(&whole, pfn);
		}
		n_mem += a;
		n_dumped += d;
		ranks_differ += a != d;
	}
	ck_assert_uint_eq(ranks_differ, (mapnr + 4095) / 4096);
	ck_assert_uint_gt(n_mem - n_dumped, 15000);
	check_both(&whole, "big");

	for (int p = 0; p < 4; p++) {
		struct spec s = whole;
		char name[32];
		s.version = 5 + (unsigned)(p % 2);
		s.split = true;
		s.start = cut[p];
		s.end = cut[p + 1];
		kd_build(&s, &o);
		total += o.ndesc;
		check_both(&s, "bigpart");
		snprintf(name, sizeof(name), "bigpart%d", p);
		map_buf(&m[p], name, o.b, o.len);
		free(o.b);
	}
	ck_assert_uint_eq(total, n_dumped);

	/* Joined in a shuffled order: every page from the part holding it. */
	priv = open_ok(&m[order[0]]);
	for (int p = 1; p < 4; p++) {
		kerr_clear(&e);
		ck_assert_msg(kd->add_part(priv, &m[order[p]].a, &e) == 0, "%s", e.msg);
	}
	ck_assert_uint_eq(kd->dumped_pages(priv), n_dumped);
	for (uint64_t pfn = 0; pfn < mapnr + 2; pfn++) {
		uint64_t pa = pfn * PG + (pfn % 7) * 16;
		size_t len = PG - (size_t)(pa % PG);
		kerr_clear(&e);
		int rc = kd->read_phys(priv, pa, got, len, &e);
		if (pf_dumped(&whole, pfn)) {
			REQUIRE(rc == 0, "joined pfn 0x%llx: %s", (unsigned long long)pfn, e.msg);
			page_of(pfn, want);
			REQUIRE(memcmp(got, want + pa % PG, len) == 0, "joined pfn 0x%llx: wrong bytes",
			    (unsigned long long)pfn);
		} else
			REQUIRE(rc == -1 && e.status == KVS_E_NOTDUMPED && e.fault_addr == pa &&
			    strstr(e.msg, pf_mem(&whole, pfn) ? "(filtered out)" : "(no memory there)"),
			    "joined pfn 0x%llx: rc %d: %s", (unsigned long long)pfn, rc, e.msg);
	}
	/* Reads across each cut, from one part into the next. */
	for (int p = 1; p < 4; p++) {
		uint64_t pfn = cut[p] - 1;
		while (!pf_dumped(&whole, pfn) || !pf_dumped(&whole, pfn + 1))
			pfn++;
		kerr_clear(&e);
		ck_assert_msg(kd->read_phys(priv, (pfn + 1) * PG - 64, got, 128, &e) == 0, "%s",
		    e.msg);
		page_of(pfn, want);
		ck_assert_int_eq(memcmp(got, want + PG - 64, 64), 0);
		page_of(pfn + 1, want);
		ck_assert_int_eq(memcmp(got + 64, want, 64), 0);
	}
	kd->info(priv, &in);
	ck_assert_uint_eq(in.source_bytes,
	    m[0].a.map_len + m[1].a.map_len + m[2].a.map_len + m[3].a.map_len);
	kd->close(priv);
	for (int p = 0; p < 4; p++)
		map_close(&m[p]);
}
END_TEST

/* The cache: bounded (256 pages, 4 ways per pfn % 64), LRU within a set,
 * counted per handle. */
START_TEST(kdump_cache)
{
	struct spec s = { .version = 6, .max_mapnr = 2048, .comp = C_ZLIB, .status = C_ZLIB };
	struct built o;
	struct mapped m;
	struct kvs_src_info in;
	struct kvs_error e;
	uint64_t set_pfns[64][5], v;
	int fill[64] = { 0 };
	void *p1, *p2;

	kd_build(&s, &o);
	map_buf(&m, "cache", o.b, o.len);
	p1 = open_ok(&m);
	p2 = open_ok(&m);
	/* Five compressed pfns per set. */
	for (uint64_t pfn = 0; pfn < s.max_mapnr; pfn++)
		if (pfn % 6 != 3 && pfn % 6 != 5 && fill[pfn % 64] < 5)
			set_pfns[pfn % 64][fill[pfn % 64]++] = pfn;
	for (int k = 0; k < 64; k++)
		ck_assert_int_eq(fill[k], 5);
	kerr_clear(&e);
	/* 256 pages, four per set: all misses, then all hits. */
	for (int r = 0; r < 2; r++)
		for (int w = 0; w < 4; w++)
			for (int k = 0; k < 64; k++) {
				uint64_t pfn = set_pfns[k][w];
				ck_assert_int_eq(kd->read_phys(p1, pfn * PG + 16, &v, 8, &e), 0);
			}
	kd->info(p1, &in);
	ck_assert_uint_eq(in.cache_misses, 256);
	ck_assert_uint_eq(in.cache_hits, 256);
	/* A fifth pfn in set 0 evicts the least recently used, way 0. */
	ck_assert_int_eq(kd->read_phys(p1, set_pfns[0][4] * PG, &v, 8, &e), 0);
	ck_assert_int_eq(kd->read_phys(p1, set_pfns[0][1] * PG, &v, 8, &e), 0);
	ck_assert_int_eq(kd->read_phys(p1, set_pfns[0][0] * PG, &v, 8, &e), 0);
	kd->info(p1, &in);
	ck_assert_uint_eq(in.cache_misses, 258);
	ck_assert_uint_eq(in.cache_hits, 257);
	/* Raw pages (noise, zeros) bypass the cache. */
	ck_assert_int_eq(kd->read_phys(p1, 5 * PG, &v, 8, &e), 0);
	ck_assert_int_eq(kd->read_phys(p1, 3 * PG, &v, 8, &e), 0);
	ck_assert_uint_eq(v, 0);
	kd->info(p1, &in);
	ck_assert_uint_eq(in.cache_misses + in.cache_hits, 258 + 257);
	/* The other handle shares nothing. */
	kd->info(p2, &in);
	ck_assert_uint_eq(in.cache_misses + in.cache_hits, 0);
	ck_assert_int_eq(kd->read_phys(p2, set_pfns[0][0] * PG, &v, 8, &e), 0);
	ck_assert_uint_eq(v, set_pfns[0][0] | TAG);
	kd->info(p2, &in);
	ck_assert_uint_eq(in.cache_misses, 1);
	kd->close(p1);
	kd->close(p2);
	map_close(&m);
	free(o.b);
}
END_TEST

/* A valid small dump to corrupt. */
static struct built
small(int comp)
{
	struct spec s = { .version = 6, .max_mapnr = 64, .comp = comp, .filter = true,
		.vmci_sub = true, .status = C_ZLIB };
	struct built o;

	kd_build(&s, &o);
	return o;
}

START_TEST(kdump_bad_headers)
{
	struct built o = small(C_ZLIB);
	uint8_t *c = malloc(o.len + 2 * 1024 * 1024);
	uint64_t b2 = (1 + SUB_BLOCKS) * PG;

	ck_assert_ptr_nonnull(c);
	/* Cut short. */
	expect_fail(o.b, 100, KVS_E_TRUNCATED, "header truncated", "100");
	expect_fail(o.b, 2 * PG, KVS_E_TRUNCATED, "sub-header", "past the end");
	expect_fail(o.b, 3 * PG + 100, KVS_E_TRUNCATED, "bitmaps", "past the end");
	/* Versions, big-endian dumps. */
	memcpy(c, o.b, o.len); put32(c, 8, 0);
	expect_fail(c, o.len, KVS_E_VERSION, "version 0", NULL);
	memcpy(c, o.b, o.len); put32(c, 8, 7);
	expect_fail(c, o.len, KVS_E_VERSION, "version 7", NULL);
	/* A big-endian version with little-endian fields: read big-endian. */
	memcpy(c, o.b, o.len); put32(c, 8, 0x06000000);
	expect_fail(c, o.len, KVS_E_FORMAT, "block size 1048576", "64-bit big-endian");
	/* Absurd block sizes. */
	static const uint32_t bad_bs[] = { 0, 512, 3000, 4097, 1U << 20, 0xfffff000 };
	for (size_t i = 0; i < sizeof(bad_bs) / sizeof(bad_bs[0]); i++) {
		char want[32];
		memcpy(c, o.b, o.len); put32(c, 428, bad_bs[i]);
		snprintf(want, sizeof(want), "block size %d", (int32_t)bad_bs[i]);
		expect_fail(c, o.len, KVS_E_FORMAT, want, NULL);
	}
	/* Sub-header sizes. */
	memcpy(c, o.b, o.len); put32(c, 432, 0xffffffff);
	expect_fail(c, o.len, KVS_E_FORMAT, "sub-header of -1 blocks", NULL);
	memcpy(c, o.b, o.len); put32(c, 432, 0x7fffffff);
	expect_fail(c, o.len, KVS_E_TRUNCATED, "sub-header", "2147483647 blocks");
	/* Bitmaps larger than the file, odd, or too small for max_mapnr. */
	memcpy(c, o.b, o.len); put32(c, 436, 0xfffffffe);
	expect_fail(c, o.len, KVS_E_TRUNCATED, "bitmaps (4294967294 blocks", "past the end");
	memcpy(c, o.b, o.len); put32(c, 436, 3);
	expect_fail(c, o.len, KVS_E_FORMAT, "odd", NULL);
	memcpy(c, o.b, o.len); put64(c, PG + 96, 1ULL << 40);
	expect_fail(c, o.len, KVS_E_FORMAT, "max_mapnr 1099511627776", "32768 bits");
	memcpy(c, o.b, o.len); put64(c, PG + 96, 32769);
	expect_fail(c, o.len, KVS_E_FORMAT, "max_mapnr 32769", NULL);
	/* v5 reads the 32-bit max_mapnr. */
	memcpy(c, o.b, o.len); put32(c, 8, 5); put32(c, 440, 0xffffffff);
	expect_fail(c, o.len, KVS_E_FORMAT, "max_mapnr 4294967295", NULL);
	/* Split ranges. */
	memcpy(c, o.b, o.len); put32(c, PG + 12, 1); put64(c, PG + 80, 40); put64(c, PG + 88, 20);
	expect_fail(c, o.len, KVS_E_FORMAT, "split", "[0x28, 0x14)");
	memcpy(c, o.b, o.len); put32(c, PG + 12, 1); put64(c, PG + 88, 65);
	expect_fail(c, o.len, KVS_E_FORMAT, "split", "max_mapnr 0x40");
	/* VMCOREINFO and notes outside the file, or absurd. */
	memcpy(c, o.b, o.len); put64(c, PG + 32, o.len);
	expect_fail(c, o.len, KVS_E_TRUNCATED, "VMCOREINFO", "past the end");
	memcpy(c, o.b, o.len); put64(c, PG + 40, UINT64_MAX);
	expect_fail(c, o.len, KVS_E_TRUNCATED, "VMCOREINFO", NULL);
	memcpy(c, o.b, o.len); put64(c, PG + 32, 0); put64(c, PG + 40, o.len + (1U << 20));
	memset(c + o.len, 0, 2 * 1024 * 1024);
	expect_fail(c, o.len + 2 * 1024 * 1024, KVS_E_FORMAT, "VMCOREINFO of", "more than");
	memcpy(c, o.b, o.len); put64(c, PG + 40, 0); put64(c, PG + 48, 1ULL << 62);
	put64(c, PG + 56, 100);
	expect_fail(c, o.len, KVS_E_TRUNCATED, "notes", NULL);
	/* Not broken: a version 1 header ignores every sub-header field. */
	memcpy(c, o.b, o.len); put32(c, 8, 1); put64(c, PG + 32, UINT64_MAX);
	{
		struct mapped m;
		map_buf(&m, "v1", c, o.len);
		void *priv = open_ok(&m);
		kd->close(priv);
		map_close(&m);
	}
	(void)b2;
	free(c);
	free(o.b);
}
END_TEST

START_TEST(kdump_bad_streams)
{
	struct built o = small(C_LZO);
	size_t flen;
	uint8_t *flat = flat_build(&o, 9, false, &flen), *c = malloc(flen + o.len + 4096);

	ck_assert_ptr_nonnull(c);
	/* The stream's own header. */
	expect_fail(flat, 4000, KVS_E_TRUNCATED, "flattened kdump header truncated", NULL);
	memcpy(c, flat, flen); put_be64(c + 16, 2);
	expect_fail(c, flen, KVS_E_VERSION, "type 2 version 1", NULL);
	memcpy(c, flat, flen); put_be64(c + 24, 0);
	expect_fail(c, flen, KVS_E_VERSION, "type 1 version 0", NULL);
	/* Records: cut, negative, no end marker, none. */
	expect_fail(flat, flen - 16, KVS_E_TRUNCATED, "no end marker", NULL);
	expect_fail(flat, flen - 40, KVS_E_TRUNCATED, "flattened stream truncated", NULL);
	expect_fail(flat, 4096 + 8, KVS_E_TRUNCATED, "record 0", NULL);
	memcpy(c, flat, flen); put_be64(c + 4096 + 8, 1ULL << 40);
	expect_fail(c, flen, KVS_E_TRUNCATED, "record 0", "1099511627776 bytes");
	memcpy(c, flat, flen); put_be64(c + 4096, (uint64_t)-5);
	expect_fail(c, flen, KVS_E_FORMAT, "offset -5", NULL);
	memcpy(c, flat, 4096); put_be64(c + 4096, UINT64_MAX); put_be64(c + 4104, UINT64_MAX);
	expect_fail(c, 4096 + 16, KVS_E_FORMAT, "no data", NULL);
	/* What the stream rebuilds: too short, or not a kdump file. */
	memcpy(c, flat, 4096);
	put_be64(c + 4096, 0); put_be64(c + 4104, 100);
	memcpy(c + 4112, o.b, 100);
	put_be64(c + 4212, UINT64_MAX); put_be64(c + 4220, UINT64_MAX);
	expect_fail(c, 4228, KVS_E_TRUNCATED, "kdump header truncated", NULL);
	put_be64(c + 4104, 512);
	memcpy(c + 4112, o.b, 512);
	memcpy(c + 4112, "\177ELF\2\1\1\0", 8);
	put_be64(c + 4624, UINT64_MAX); put_be64(c + 4632, UINT64_MAX);
	expect_fail(c, 4640, KVS_E_FORMAT, "makedumpfile -R", NULL);
	/* Bitmaps the stream does not hold: the whole file in one record but
	 * the 2nd bitmap's last bytes left out. */
	{
		uint64_t cut = o.pd_off - 100, tail = o.len - o.pd_off;
		memcpy(c, flat, 4096);
		put_be64(c + 4096, 0); put_be64(c + 4104, cut);
		memcpy(c + 4112, o.b, cut);
		put_be64(c + 4112 + cut, o.pd_off); put_be64(c + 4120 + cut, tail);
		memcpy(c + 4128 + cut, o.b + o.pd_off, tail);
		put_be64(c + 4128 + cut + tail, UINT64_MAX); put_be64(c + 4136 + cut + tail, UINT64_MAX);
		ck_assert_uint_le(4144 + cut + tail, flen + o.len + 4096);
		expect_fail(c, 4144 + cut + tail, KVS_E_TRUNCATED, "does not hold the kdump bitmaps",
		    NULL);
		/* ... and with them written, the same records open. */
		put_be64(c + 4104, o.pd_off);
		memcpy(c + 4112, o.b, o.pd_off);
		put_be64(c + 4112 + o.pd_off, UINT64_MAX); put_be64(c + 4120 + o.pd_off, UINT64_MAX);
		struct mapped m;
		map_buf(&m, "bitmaps.flat", c, 4128 + o.pd_off);
		kd->close(open_ok(&m));
		map_close(&m);
	}
	/* A record beyond the file's end, past everything else: fine, the
	 * rebuilt file just grows. */
	{
		struct mapped m;
		memcpy(c, flat, flen - 16);
		put_be64(c + flen - 16, 1ULL << 40); put_be64(c + flen - 8, 8);
		memset(c + flen, 0x11, 8);
		put_be64(c + flen + 8, UINT64_MAX); put_be64(c + flen + 16, UINT64_MAX);
		map_buf(&m, "grown.flat", c, flen + 24);
		void *priv = open_ok(&m);
		uint64_t v;
		struct kvs_error e;
		kerr_clear(&e);
		ck_assert_int_eq(kd->read_phys(priv, 0, &v, 8, &e), 0);
		ck_assert_uint_eq(v, 0 | TAG);
		kd->close(priv);
		map_close(&m);
	}
	free(c);
	free(flat);
	free(o.b);
}
END_TEST

/* Descriptor n's offset in o (the n-th page this file holds). */
static uint64_t
pd_at(const struct built *o, uint64_t n)
{
	return o->pd_off + n * 24;
}

/* Descriptor index of pfn in small(): pfns before it not filtered out. */
static uint64_t
pd_index(uint64_t pfn)
{
	uint64_t n = 0;
	for (uint64_t p = 0; p < pfn; p++)
		n += p % 5 != 2;
	return n;
}

/* Replace pfn's data with the c-compressed first `len` bytes of its page
 * repeated, appended at the end of the file. */
static uint8_t *
with_data_at(const struct built *o, uint64_t pdi, uint64_t pfn, int c, size_t len, size_t *nlen)
{
	uint8_t *src = malloc(len), page[PG], comp[4 * PG];
	uint8_t *b = malloc(o->len + sizeof(comp));
	size_t n;

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(b);
	page_of(pfn, page);
	for (size_t i = 0; i < len; i++)
		src[i] = page[i % PG];
	switch (c) {
	case C_ZLIB: {
		uLongf d = sizeof(comp);
		ck_assert_int_eq(compress2(comp, &d, src, (uLong)len, 6), Z_OK);
		n = d;
		break;
	}
	case C_LZO: {
		static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
		lzo_uint d = sizeof(comp);
		ck_assert_int_eq(lzo1x_1_compress(src, len, comp, &d, wrk), LZO_E_OK);
		n = d;
		break;
	}
	case C_SNAPPY: {
		size_t d = sizeof(comp);
		ck_assert_int_eq(snappy_compress((const char *)src, len, (char *)comp, &d), SNAPPY_OK);
		n = d;
		break;
	}
	default:
		n = ZSTD_compress(comp, sizeof(comp), src, len, 3);
		ck_assert(!ZSTD_isError(n));
	}
	ck_assert_uint_lt(n, PG);
	memcpy(b, o->b, o->len);
	memcpy(b + o->len, comp, n);
	uint64_t pd = pd_at(o, pdi);
	put64(b, pd, o->len);
	put32(b, pd + 8, (uint32_t)n);
	put32(b, pd + 12, (uint32_t)c);
	*nlen = o->len + n;
	free(src);
	return b;
}

static uint8_t *
with_data(const struct built *o, uint64_t pfn, int c, size_t len, size_t *nlen)
{
	return with_data_at(o, pd_index(pfn), pfn, c, len, nlen);
}

/*
 * A page that fails to decompress evicts a cached page first: the page it
 * evicted must not be served afterwards from the slot the failure wrote
 * into.  Set 13 holds four good pages; a fifth in the set decompresses to
 * half a page (into the least recently used way); the four then read as
 * the model says, each once more from the file.
 */
START_TEST(kdump_cache_failure)
{
	static const int comps[] = { C_ZLIB, C_LZO, C_SNAPPY, C_ZSTD };
	struct spec s = { .version = 6, .max_mapnr = 1024, .comp = C_ZLIB, .filter = true,
		.status = C_ZLIB };
	uint64_t set[5], pdi[5], nd = 0, v;
	uint8_t page[PG], want[PG];
	struct built o;
	int n = 0;

	kd_build(&s, &o);
	for (uint64_t pfn = 0; pfn < s.max_mapnr && n < 5; pfn++) {
		if (pf_here(&s, pfn) && pfn % 64 == 13 && pfn % 6 != 3 && pfn % 6 != 5) {
			set[n] = pfn;
			pdi[n++] = nd;
		}
		nd += pf_here(&s, pfn);
	}
	ck_assert_int_eq(n, 5);
	for (size_t c = 0; c < 4; c++) {
		struct mapped m;
		struct kvs_src_info in;
		struct kvs_error e;
		size_t nlen;
		uint8_t *b = with_data_at(&o, pdi[4], set[4], comps[c], PG / 2, &nlen);
		map_buf(&m, "stale", b, nlen);
		void *priv = open_ok(&m);
		kerr_clear(&e);
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(kd->read_phys(priv, set[i] * PG, page, PG, &e), 0);
		expect_read_fail(priv, set[4] * PG, 8, KVS_E_FORMAT, set[4] * PG, "2048 bytes");
		for (int i = 0; i < 4; i++) {
			kerr_clear(&e);
			ck_assert_msg(kd->read_phys(priv, set[i] * PG, page, PG, &e) == 0, "%s", e.msg);
			page_of(set[i], want);
			ck_assert_msg(memcmp(page, want, PG) == 0, "pfn 0x%llx after a failed page "
			    "in its set (%d): wrong bytes", (unsigned long long)set[i], comps[c]);
		}
		memcpy(&v, page, 8);
		ck_assert_uint_eq(v, set[3] | TAG);
		kd->info(priv, &in);
		ck_assert_uint_eq(in.cache_misses, 4 + 1 + 1);
		ck_assert_uint_eq(in.cache_hits, 3);
		kd->close(priv);
		map_close(&m);
		free(b);
	}
	free(o.b);
}
END_TEST

START_TEST(kdump_bad_pages)
{
	static const int comps[] = { C_ZLIB, C_LZO, C_SNAPPY, C_ZSTD };
	struct built o = small(C_ZLIB);
	uint8_t *c = malloc(o.len);
	struct mapped m;
	void *priv;
	/* pfn 13 holds compressed text; 14, its neighbour, too. */
	uint64_t pfn = 13, pd = pd_at(&o, pd_index(pfn)), pa = pfn * PG + 40, v;
	struct kvs_error e;

	ck_assert_ptr_nonnull(c);
	/* The file ends in the descriptors (pfn 4 has descriptor 3): the
	 * descriptor, or the data of a page whose descriptor is whole. */
	map_buf(&m, "cut", o.b, pd_at(&o, 3) + 10);
	priv = open_ok(&m);
	expect_read_fail(priv, 4 * PG + 8, 8, KVS_E_TRUNCATED, 4 * PG + 8, "descriptor 3");
	expect_read_fail(priv, 1 * PG, 8, KVS_E_TRUNCATED, 1 * PG, "past the end of the file");
	kd->close(priv);
	map_close(&m);
	/* The file ends in the data: the last page's (pfn 61) is cut, pages
	 * before it read. */
	map_buf(&m, "cutdata", o.b, o.len - 10);
	priv = open_ok(&m);
	expect_read_fail(priv, 61 * PG, 8, KVS_E_TRUNCATED, 61 * PG, "data of physical 0x3d000");
	kerr_clear(&e);
	ck_assert_int_eq(kd->read_phys(priv, 1 * PG, &v, 8, &e), 0);
	ck_assert_uint_eq(v, 1 | TAG);
	kd->close(priv);
	map_close(&m);

	struct { uint64_t off; uint32_t size, flags; kvs_status_t st; const char *want; } bad[] = {
		{ o.len, 100, C_ZLIB, KVS_E_TRUNCATED, "past the end of the file" },
		{ UINT64_MAX - 10, 100, C_ZLIB, KVS_E_TRUNCATED, "past the end of the file" },
		{ 1ULL << 63, 100, C_ZLIB, KVS_E_TRUNCATED, "past the end of the file" },
		{ 0, PG + 1, C_ZLIB, KVS_E_FORMAT, "impossible compressed size" },
		{ 0, 0, C_ZLIB, KVS_E_FORMAT, "impossible compressed size" },
		{ 0, 100, C_ZLIB | C_LZO, KVS_E_FORMAT, "several compressions" },
		{ 0, 100, C_SNAPPY | C_ZSTD, KVS_E_FORMAT, "several compressions" },
		{ 0, 100, 0, KVS_E_FORMAT, "not one page long" },
		{ 0, 0, 0, KVS_E_FORMAT, "not one page long" },
		{ o.pd_off, 200, C_ZLIB, KVS_E_FORMAT, "zlib-compressed" },
		{ o.pd_off, 200, C_LZO, KVS_E_FORMAT, "lzo-compressed" },
		{ o.pd_off, 200, C_SNAPPY, KVS_E_FORMAT, "snappy-compressed" },
		{ o.pd_off, 200, C_ZSTD, KVS_E_FORMAT, "zstd-compressed" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(c, o.b, o.len);
		put64(c, pd, bad[i].off ? bad[i].off : get64(c, pd));
		put32(c, pd + 8, bad[i].size);
		put32(c, pd + 12, bad[i].flags);
		map_buf(&m, "badpd", c, o.len);
		priv = open_ok(&m);
		expect_read_fail(priv, pa, 8, bad[i].st, pa, bad[i].want);
		/* Not cached: the same error again, and its neighbours read. */
		expect_read_fail(priv, pa, 8, bad[i].st, pa, bad[i].want);
		kerr_clear(&e);
		ck_assert_int_eq(kd->read_phys(priv, (pfn + 1) * PG, &v, 8, &e), 0);
		ck_assert_uint_eq(v, (pfn + 1) | TAG);
		kd->close(priv);
		map_close(&m);
	}
	/* Valid streams that hold half a page, or two pages. */
	for (size_t i = 0; i < 4; i++) {
		static const size_t lens[] = { PG / 2, 2 * PG };
		for (size_t k = 0; k < 2; k++) {
			size_t nlen;
			uint8_t *b = with_data(&o, pfn, comps[i], lens[k], &nlen);
			map_buf(&m, "badsize", b, nlen);
			priv = open_ok(&m);
			expect_read_fail(priv, pa, 8, KVS_E_FORMAT, pa, k == 0 ? "2048 bytes" :
			    comps[i] == C_SNAPPY ? "8192 bytes" : "more than a page");
			kd->close(priv);
			map_close(&m);
			free(b);
		}
	}
	/* An incomplete dump: the descriptors it never wrote are zeros. */
	memcpy(c, o.b, o.len);
	put32(c, 424, C_ZLIB | ST_INCOMPLETE);
	memset(c + pd, 0, 24);
	map_buf(&m, "incomplete", c, o.len);
	priv = open_ok(&m);
	expect_read_fail(priv, pa, 8, KVS_E_NOTDUMPED, pa, "incomplete");
	kd->close(priv);
	map_close(&m);
	free(c);
	free(o.b);
}
END_TEST

/*
 * 2^28 pfns (1 TiB of physical memory): two 32 MiB bitmaps, written as
 * holes of a sparse file.  Opening must not read them (a handful of page
 * faults, not thousands); a low page reads at once; the highest page's
 * rank walks the whole 2nd bitmap once, lazily.
 */
START_TEST(kdump_open_cost)
{
	const uint64_t mapnr = 1ULL << 28, bm = mapnr / 8, bmblocks = 2 * bm / PG;
	const uint64_t b1 = (1 + SUB_BLOCKS) * PG, b2 = b1 + bm, pdo = b2 + bm;
	const uint64_t pfns[3] = { 1, 10, mapnr - 2 };   /* text pages, a bitmap byte each */
	char path[4096];
	uint8_t hdr[(1 + SUB_BLOCKS) * PG] = { 0 }, page[PG], comp[CAP];
	struct rusage r0, r1;
	struct mapped m;
	struct kvs_error e;
	uint64_t data = pdo + 3 * 24, v;
	int fd;

	snprintf(path, sizeof(path), "%s", path_join(test_tmpdir(), "sparse.kdump"));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	memcpy(hdr, "KDUMP   ", 8);
	put32(hdr, 8, 6);
	put32(hdr, 428, PG);
	put32(hdr, 432, SUB_BLOCKS);
	put32(hdr, 436, (uint32_t)bmblocks);
	put32(hdr, 440, UINT32_MAX);
	put64(hdr, PG + 96, mapnr);
	ck_assert_int_eq(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	for (int i = 0; i < 3; i++) {
		uint8_t bit = (uint8_t)(1U << (pfns[i] % 8)), pd[24] = { 0 };
		size_t n;
		ck_assert_int_eq(pwrite(fd, &bit, 1, (off_t)(b1 + pfns[i] / 8)), 1);
		ck_assert_int_eq(pwrite(fd, &bit, 1, (off_t)(b2 + pfns[i] / 8)), 1);
		page_of(pfns[i], page);
		n = squeeze(C_ZSTD, page, PG, comp, sizeof(comp));
		ck_assert_uint_gt(n, 0);
		put64(pd, 0, data);
		put32(pd, 8, (uint32_t)n);
		put32(pd, 12, C_ZSTD);
		ck_assert_int_eq(pwrite(fd, pd, 24, (off_t)(pdo + 24 * (uint64_t)i)), 24);
		ck_assert_int_eq(pwrite(fd, comp, n, (off_t)data), (ssize_t)n);
		data += n;
	}
	close(fd);
	map_path(&m, path);
	ck_assert_uint_gt(m.a.map_len, 2 * bm);
	getrusage(RUSAGE_SELF, &r0);
	void *priv = open_ok(&m);
	getrusage(RUSAGE_SELF, &r1);
	ck_assert_msg(r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt < 200,
	    "open took %ld page faults", r1.ru_minflt - r0.ru_minflt);
	kerr_clear(&e);
	getrusage(RUSAGE_SELF, &r0);
	ck_assert_int_eq(kd->read_phys(priv, 10 * PG, &v, 8, &e), 0);
	getrusage(RUSAGE_SELF, &r1);
	ck_assert_uint_eq(v, 10 | TAG);
	ck_assert_msg(r1.ru_minflt - r0.ru_minflt < 400, "a low page took %ld page faults",
	    r1.ru_minflt - r0.ru_minflt);
	ck_assert_int_eq(kd->read_phys(priv, (mapnr - 2) * PG, &v, 8, &e), 0);
	ck_assert_uint_eq(v, (mapnr - 2) | TAG);
	expect_read_fail(priv, (mapnr - 1) * PG, 8, KVS_E_NOTDUMPED, (mapnr - 1) * PG,
	    "no memory there");
	expect_read_fail(priv, 2 * PG, 8, KVS_E_NOTDUMPED, 2 * PG, "no memory there");
	ck_assert_uint_eq(kd->dumped_pages(priv), 3);
	kd->close(priv);
	map_close(&m);
}
END_TEST

START_TEST(kdump_not_mine)
{
	static const char text[] = "This is not a dump at all, just some text.\n";
	struct built o = small(C_ZLIB);
	size_t flen;
	uint8_t *flat = flat_build(&o, 3, false, &flen);
	size_t ki = SIZE_MAX, ri = SIZE_MAX;

	expect_notmine(kd, text, sizeof(text) - 1);
	expect_notmine(kd, "KDUMP  ", 7);
	expect_notmine(kd, "KDUMP  X and more", 17);
	expect_notmine(kd, "makedumpfil", 11);
	expect_notmine(kd, "makedumpfileX and more", 22);
	expect_notmine(kd, "DISKDUMP and more", 17);
	expect_notmine(kd, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0", 16);
	expect_notmine(kd, "minidump FreeBSD/amd64\0\0", 24);
	/* The other formats leave kdump files alone. */
	expect_notmine(&kvs_source_minidump, o.b, o.len);
	expect_notmine(&kvs_source_elfdump, o.b, o.len);
	expect_notmine(&kvs_source_minidump, flat, flen);
	expect_notmine(&kvs_source_elfdump, flat, flen);
	/* Probed before raw, which accepts anything. */
	for (size_t i = 0; i < kvs_source_count; i++) {
		if (kvs_source_table[i] == &kvs_source_kdump)
			ki = i;
		if (kvs_source_table[i] == &kvs_source_raw)
			ri = i;
	}
	ck_assert_uint_lt(ki, ri);
	free(flat);
	free(o.b);
}
END_TEST

/* ------------------------------------- other machines' headers (item 8) */

/*
 * Dumps of other machines, written here from the C structs as each machine
 * lays them out: struct disk_dump_header has struct timeval (two longs)
 * after utsname, so on a 32-bit machine (timeval 8 bytes, 4-aligned) every
 * later int sits 12 bytes earlier than on a 64-bit one; struct
 * kdump_sub_header has unsigned long phys_base, start_pfn, end_pfn and
 * sizes, 64-bit off_t offsets (4-aligned on i386 and in QEMU's packed
 * header, 8-aligned on arm), u64 v6 fields.  Every field is in the
 * machine's byte order.  Memory: pfns below X_MEM; pfn % 4 == 1 filtered
 * out; the rest dumped (zlib, or raw when that is not smaller, the zero
 * pages sharing one raw zero page).
 */
#define X_MEM 24U

struct xspec {
	const char *machine;
	bool be;
	unsigned word;          /* sizeof(long): 4 or 8 */
	bool aligned;           /* 32-bit: off_t 8-aligned in the sub-header */
	unsigned sub_blocks;    /* 0: no sub-header */
	unsigned version;
	uint32_t max_mapnr;
	uint32_t total_ram, device, written;  /* header fields nothing reads */
	bool split;
	uint64_t start, end;
	bool vmci_sub, vmci_note;
	int comp;
};

/* Sub-header offsets: phys_base, dump_level, split, start, end, vmci off,
 * size, note off, size, erase off, size, start64, end64, mapnr64. */
enum { S_PB, S_DL, S_SPLIT, S_START, S_END, S_VO, S_VS, S_NO, S_NS, S_EO, S_ES, S_S64,
	S_E64, S_M64, S_N };
static const unsigned sub64[S_N] = { 0, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96 };
static const unsigned sub32p[S_N] = { 0, 4, 8, 12, 16, 20, 28, 32, 40, 44, 52, 56, 64, 72 };
static const unsigned sub32a[S_N] = { 0, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88 };

static bool
x_dumped(uint64_t pfn)
{
	return pfn < X_MEM && pfn % 4 != 1;
}

static bool
x_here(const struct xspec *x, uint64_t pfn)
{
	return x_dumped(pfn) && (!x->split || (pfn >= x->start && pfn < x->end));
}

static void
xput(const struct xspec *x, uint8_t *b, uint64_t off, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b[off + i] = (uint8_t)(v >> (8 * (x->be ? n - 1 - i : i)));
}

static uint8_t *
x_build(const struct xspec *x, size_t *len, uint64_t *ndesc, uint64_t *ncomp)
{
	const unsigned *so = x->word == 8 ? sub64 : x->aligned ? sub32a : sub32p;
	const unsigned st = x->word == 8 ? 424 : 412, w = x->word;
	uint64_t bmbytes = ((x->max_mapnr + 7) / 8 + PG - 1) / PG * PG;
	uint64_t bm1 = (1 + x->sub_blocks) * PG, pd0 = bm1 + 2 * bmbytes, nd = 0, at, d = 0;
	uint8_t page[PG], comp[CAP];
	uint8_t *b;

	for (uint64_t pfn = 0; pfn < X_MEM; pfn++)
		nd += x_here(x, pfn);
	b = calloc(1, pd0 + nd * 24 + PG + nd * PG);
	ck_assert_ptr_nonnull(b);
	memcpy(b, "KDUMP   ", 8);
	xput(x, b, 8, x->version, 4);
	memcpy(b + 12, "Linux", 5);
	memcpy(b + 12 + 4 * 65, x->machine, strlen(x->machine));
	xput(x, b, st - 2 * w, 1700000000, w);        /* timestamp */
	xput(x, b, st - w, 123457, w);
	xput(x, b, st, x->comp == C_NONE ? 0 : C_ZLIB, 4);
	xput(x, b, st + 4, PG, 4);
	xput(x, b, st + 8, x->sub_blocks, 4);
	xput(x, b, st + 12, 2 * bmbytes / PG, 4);
	xput(x, b, st + 16, x->max_mapnr, 4);
	xput(x, b, st + 20, x->total_ram, 4);
	xput(x, b, st + 24, x->device, 4);
	xput(x, b, st + 28, x->written, 4);
	xput(x, b, st + 36, 2, 4);                    /* nr_cpus */
	if (x->sub_blocks > 0) {
		xput(x, b, PG + so[S_PB], 0x1000000, w);
		xput(x, b, PG + so[S_DL], 31, 4);
		if (x->split) {
			xput(x, b, PG + so[S_SPLIT], 1, 4);
			xput(x, b, PG + so[S_START], x->start, w);
			xput(x, b, PG + so[S_END], x->end, w);
		}
		memcpy(b + VMCI_AT, vmci_text, sizeof(vmci_text) - 1);
		if (x->vmci_sub) {
			xput(x, b, PG + so[S_VO], VMCI_AT, 8);
			xput(x, b, PG + so[S_VS], sizeof(vmci_text) - 1, w);
		}
		if (x->vmci_note) {
			uint64_t n = NOTE_AT;
			xput(x, b, n, 11, 4);
			xput(x, b, n + 4, sizeof(vmci_text) - 1, 4);
			memcpy(b + n + 12, "VMCOREINFO", 11);
			memcpy(b + n + 24, vmci_text, sizeof(vmci_text) - 1);
			xput(x, b, PG + so[S_NO], NOTE_AT, 8);
			xput(x, b, PG + so[S_NS], 24 + ((sizeof(vmci_text) - 1 + 3) & ~3UL), w);
		}
		if (x->version >= 5) {                /* erase info: an empty text */
			xput(x, b, PG + so[S_EO], PG + 3000, 8);
			xput(x, b, PG + so[S_ES], 0, w);
		}
		if (x->version >= 6) {
			if (x->split) {
				xput(x, b, PG + so[S_S64], x->start, 8);
				xput(x, b, PG + so[S_E64], x->end, 8);
			}
			xput(x, b, PG + so[S_M64], x->max_mapnr, 8);
		}
	}
	for (uint64_t pfn = 0; pfn < X_MEM; pfn++) {
		b[bm1 + pfn / 8] |= (uint8_t)(1U << (pfn % 8));
		if (x_dumped(pfn))
			b[bm1 + bmbytes + pfn / 8] |= (uint8_t)(1U << (pfn % 8));
	}
	uint64_t zero = pd0 + nd * 24;
	at = zero + PG;
	*ncomp = 0;
	for (uint64_t pfn = 0; pfn < X_MEM; pfn++) {
		uint64_t pd = pd0 + 24 * d;
		size_t n;
		if (!x_here(x, pfn))
			continue;
		d++;
		page_of(pfn, page);
		xput(x, b, pd + 16, 0x200, 8);
		if (pfn % 6 == 3) {
			xput(x, b, pd, zero, 8);
			xput(x, b, pd + 8, PG, 4);
			continue;
		}
		int c = x->comp == C_MIXED ? (int[]){ C_ZLIB, C_LZO, C_SNAPPY, C_ZSTD }[pfn % 4] :
		    x->comp;
		n = squeeze(c, page, PG, comp, sizeof(comp));
		xput(x, b, pd, at, 8);
		if (n > 0) {
			xput(x, b, pd + 8, n, 4);
			xput(x, b, pd + 12, (uint64_t)c, 4);
			memcpy(b + at, comp, n);
			at += n;
			++*ncomp;
		} else {
			xput(x, b, pd + 8, PG, 4);
			memcpy(b + at, page, PG);
			at += PG;
		}
	}
	*ndesc = nd;
	*len = at;
	return b;
}

/* The dump x describes: opened by the source (info, VMCOREINFO, every pfn's
 * bytes or why it is missing) and by kvs_open for its bytes alone. */
static void
x_check(const struct xspec *x, const char *name)
{
	uint64_t nd, nc;
	size_t len;
	uint8_t *b = x_build(x, &len, &nd, &nc);
	uint8_t got[PG], want[PG];
	struct kvs_src_info in;
	struct kvs_dumpinfo di;
	struct kvs_error e;
	struct mapped m;
	char err[KVS_ERRBUF_SIZE];
	void *priv;
	kvs_t *kv;

	if (x->comp != C_NONE)
		ck_assert_msg(nc > 4, "%s: only %llu pages compressed", name, (unsigned long long)nc);
	map_buf(&m, name, b, len);
	priv = open_ok(&m);
	kd->info(priv, &in);
	ck_assert_str_eq(in.format, "kdump");
	ck_assert_uint_eq(in.format_version, x->version);
	ck_assert_uint_eq(in.page_size, PG);
	if (x->vmci_sub || x->vmci_note) {
		ck_assert_msg(in.vmcoreinfo != NULL, "%s: no VMCOREINFO", name);
		ck_assert_uint_eq(in.vmcoreinfo_len, sizeof(vmci_text) - 1);
		ck_assert_int_eq(memcmp(in.vmcoreinfo, vmci_text, sizeof(vmci_text) - 1), 0);
	} else
		ck_assert_ptr_null(in.vmcoreinfo);
	ck_assert_uint_eq(kd->dumped_pages(priv), nd);
	for (uint64_t pfn = 0; pfn < X_MEM + 3; pfn++) {
		kerr_clear(&e);
		int rc = kd->read_phys(priv, pfn * PG, got, PG, &e);
		if (x_here(x, pfn)) {
			ck_assert_msg(rc == 0, "%s pfn %llu: %s", name, (unsigned long long)pfn, e.msg);
			page_of(pfn, want);
			ck_assert_msg(memcmp(got, want, PG) == 0, "%s pfn %llu: wrong bytes", name,
			    (unsigned long long)pfn);
		} else {
			ck_assert_msg(rc == -1 && e.status == KVS_E_NOTDUMPED, "%s pfn %llu: rc %d %s",
			    name, (unsigned long long)pfn, rc, e.msg);
			ck_assert_msg(strstr(e.msg, !x_dumped(pfn) ? (pfn < X_MEM ? "filtered out" :
			    "no memory there") : "not given") != NULL, "%s pfn %llu: %s", name,
			    (unsigned long long)pfn, e.msg);
		}
	}
	kd->close(priv);

	kv = kvs_open(NULL, m.path, KVS_O_FORMAT_ONLY, err);
	ck_assert_msg(kv != NULL, "%s: %s", name, err);
	ck_assert_int_eq(kvs_dumpinfo(kv, &di), 0);
	ck_assert_str_eq(di.format, "kdump");
	ck_assert_uint_eq(di.page_size, PG);
	ck_assert_uint_eq(di.dumped_pages, nd);
	for (uint64_t pfn = 0; pfn < X_MEM + 3; pfn++) {
		int rc = kvs_read_phys(kv, pfn * PG + 16, got, 64);
		if (x_here(x, pfn)) {
			ck_assert_msg(rc == 0, "%s pfn %llu: %s", name, (unsigned long long)pfn,
			    kvs_geterr(kv));
			page_of(pfn, want);
			ck_assert_mem_eq(got, want + 16, 64);
		} else {
			ck_assert_int_eq(rc, -1);
			ck_assert_int_eq(kvs_errstatus(kv), KVS_E_NOTDUMPED);
		}
	}
	kvs_close(kv);
	map_close(&m);
	free(b);
}

/* 32-bit little-endian (i386): the header 12 bytes shorter before status,
 * 32-bit unsigned longs and 4-aligned offsets in the sub-header.  The
 * header's fields read as a 64-bit header are consistent too here
 * (block_size 4096 from max_mapnr, no sub-header from total_ram_blocks 0,
 * two bitmap blocks from device_blocks, max_mapnr 5 from written_blocks):
 * the machine, i686, decides.  v5 reads the 32-bit start_pfn/end_pfn of a
 * split part; arm's sub-header aligns its offsets to 8. */
START_TEST(kdump_32bit)
{
	struct xspec i686 = { .machine = "i686", .word = 4, .sub_blocks = 1, .version = 6,
		.max_mapnr = 4096, .device = 2, .written = 5, .vmci_sub = true, .comp = C_ZLIB };
	struct xspec v5 = { .machine = "i686", .word = 4, .sub_blocks = 2, .version = 5,
		.max_mapnr = 100, .split = true, .start = 8, .end = 20, .vmci_note = true,
		.comp = C_ZLIB };
	struct xspec arm = { .machine = "armv7l", .word = 4, .aligned = true, .sub_blocks = 1,
		.version = 6, .max_mapnr = 1000, .vmci_sub = true, .vmci_note = true,
		.comp = C_MIXED };
	struct xspec arm5 = arm;

	x_check(&i686, "i686");
	x_check(&v5, "i686-v5-split");
	x_check(&arm, "armv7l");
	arm5.version = 5;
	arm5.vmci_note = false;
	x_check(&arm5, "armv7l-v5");
}
END_TEST

/* Big-endian: ppc64 (64-bit), and a 32-bit one with no machine name (as
 * QEMU may write), whose fields alone tell its word size: every header,
 * sub-header, note and descriptor field read big-endian. */
START_TEST(kdump_big_endian)
{
	struct xspec ppc64 = { .machine = "ppc64", .be = true, .word = 8, .sub_blocks = 1,
		.version = 6, .max_mapnr = 3000, .vmci_note = true, .comp = C_ZLIB };
	struct xspec s390x = { .machine = "s390x", .be = true, .word = 8, .sub_blocks = 1,
		.version = 6, .max_mapnr = 64, .split = true, .start = 4, .end = 40,
		.vmci_sub = true, .comp = C_MIXED };
	struct xspec be32 = { .machine = "", .be = true, .word = 4, .sub_blocks = 1,
		.version = 6, .max_mapnr = 100, .vmci_sub = true, .comp = C_ZLIB };
	struct xspec be32v3 = { .machine = "ppc", .be = true, .word = 4, .aligned = true,
		.sub_blocks = 1, .version = 3, .max_mapnr = 77, .vmci_sub = true, .comp = C_ZLIB };

	x_check(&ppc64, "ppc64");
	x_check(&s390x, "s390x");
	x_check(&be32, "be32");
	x_check(&be32v3, "ppc-v3");
}
END_TEST

/* sub_hdr_size 0: no sub-header (bitmaps from block 1 on), so no
 * VMCOREINFO and the main header's max_mapnr, even at version 6. */
START_TEST(kdump_no_subheader)
{
	struct xspec v6 = { .machine = "x86_64", .word = 8, .version = 6, .max_mapnr = 50,
		.comp = C_ZLIB };
	struct xspec v1 = { .machine = "x86_64", .word = 8, .version = 1, .max_mapnr = 30,
		.comp = C_NONE };
	struct xspec i686 = { .machine = "i686", .word = 4, .version = 6, .max_mapnr = 40,
		.comp = C_ZLIB };

	x_check(&v6, "nosub-v6");
	x_check(&v1, "nosub-v1");
	x_check(&i686, "nosub-i686");
}
END_TEST

/* A split set with a part missing names the pfns no part given holds;
 * with every part given nothing asks for more parts. */
START_TEST(kdump_split_missing)
{
	static const uint64_t cut[] = { 0, 200, 451, 640 };
	struct spec all = { .max_mapnr = 640, .holes = true, .filter = true };
	struct mapped m[3];
	struct built o[3];
	struct kvs_error e;
	uint8_t got[PG];
	void *priv;

	for (int p = 0; p < 3; p++) {
		struct spec s = { .version = 6, .max_mapnr = 640, .comp = C_ZLIB, .holes = true,
			.filter = true, .split = true, .start = cut[p], .end = cut[p + 1],
			.vmci_sub = true, .status = C_ZLIB };
		char name[32];
		kd_build(&s, &o[p]);
		snprintf(name, sizeof(name), "miss%d", p);
		map_buf(&m[p], name, o[p].b, o[p].len);
	}
	/* Parts 2 and 0: [200, 451) missing; its first and last pfns dumped. */
	ck_assert(pf_dumped(&all, 200) && pf_dumped(&all, 450));
	priv = open_ok(&m[2]);
	kerr_clear(&e);
	ck_assert_msg(kd->add_part(priv, &m[0].a, &e) == 0, "%s", e.msg);
	for (uint64_t pfn = 0; pfn < 640; pfn++) {
		kerr_clear(&e);
		int rc = kd->read_phys(priv, pfn * PG, got, PG, &e);
		if (pf_dumped(&all, pfn) && (pfn < 200 || pfn >= 451)) {
			REQUIRE(rc == 0, "pfn 0x%llx: %s", (unsigned long long)pfn, e.msg);
			continue;
		}
		REQUIRE(rc == -1 && e.status == KVS_E_NOTDUMPED, "pfn 0x%llx: rc %d", (unsigned long long)pfn, rc);
		if (pf_dumped(&all, pfn))
			REQUIRE(strstr(e.msg, "no part given holds pfns 0xc8-0x1c3; give every part") !=
			    NULL, "pfn 0x%llx: %s", (unsigned long long)pfn, e.msg);
		else
			REQUIRE(strstr(e.msg, "give every part") == NULL, "pfn 0x%llx: %s",
			    (unsigned long long)pfn, e.msg);
	}
	kd->close(priv);
	/* Part 1 alone: the pfns on both sides are missing. */
	priv = open_ok(&m[1]);
	expect_read_fail(priv, 0, 8, KVS_E_NOTDUMPED, 0, "no part given holds pfns 0x0-0xc8;");
	expect_read_fail(priv, 451 * PG, 8, KVS_E_NOTDUMPED, 451 * PG,
	    "no part given holds pfns 0x1c3-0x280;");
	kd->close(priv);
	/* Every part: a page none holds is filtered out or no memory. */
	priv = open_ok(&m[1]);
	for (int p = 0; p < 3; p += 2) {
		kerr_clear(&e);
		ck_assert_msg(kd->add_part(priv, &m[p].a, &e) == 0, "%s", e.msg);
	}
	for (uint64_t pfn = 0; pfn < 643; pfn++) {
		kerr_clear(&e);
		int rc = kd->read_phys(priv, pfn * PG, got, PG, &e);
		if (pf_dumped(&all, pfn))
			REQUIRE(rc == 0, "pfn 0x%llx: %s", (unsigned long long)pfn, e.msg);
		else
			REQUIRE(rc == -1 && e.status == KVS_E_NOTDUMPED && strstr(e.msg, "part") == NULL &&
			    strstr(e.msg, pf_mem(&all, pfn) ? "(filtered out)" : "(no memory there)"),
			    "pfn 0x%llx: rc %d %s", (unsigned long long)pfn, rc, e.msg);
	}
	kd->close(priv);
	for (int p = 0; p < 3; p++) {
		map_close(&m[p]);
		free(o[p].b);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("kdump");
	TCase *tc = tcase_create("kdump");

	tcase_add_test(tc, kdump_each_compression);
	tcase_add_test(tc, kdump_versions);
	tcase_add_test(tc, kdump_flat_overlaps);
	tcase_add_test(tc, kdump_split);
	tcase_add_test(tc, kdump_split_joined);
	tcase_add_test(tc, kdump_beyond_64k);
	tcase_add_test(tc, kdump_cache);
	tcase_add_test(tc, kdump_cache_failure);
	tcase_add_test(tc, kdump_bad_headers);
	tcase_add_test(tc, kdump_bad_streams);
	tcase_add_test(tc, kdump_bad_pages);
	tcase_add_test(tc, kdump_open_cost);
	tcase_add_test(tc, kdump_not_mine);
	tcase_add_test(tc, kdump_32bit);
	tcase_add_test(tc, kdump_big_endian);
	tcase_add_test(tc, kdump_no_subheader);
	tcase_add_test(tc, kdump_split_missing);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
