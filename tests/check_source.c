/*
 * check_source.c - the memory sources on small synthetic files written here
 * (independently of the fixture generator): minidump v1, v2 and v3 (v3 with
 * a hole between dump_avail ranges), a few-thousand-bit bitmap for the rank
 * index, an ELF full dump written the way FreeBSD writes it, a raw image and
 * the pread()-based live source; then broken and foreign inputs.
 *
 * Every dumped page holds, in each 8-byte word, that word's own physical
 * address with the top bit set, so any read's expected bytes are known
 * without keeping a copy of the file.
 */
#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfcore.h"
#include "kvs_private.h"
#include "testutil.h"

#define PG 4096ULL
#define RNDP(x) (((x) + PG - 1) & ~(PG - 1))
#define TAG (1ULL << 63)

static void
fill(uint8_t *page, uint64_t pa)
{
	for (unsigned k = 0; k < PG / 8; k++) {
		uint64_t w = (pa + k * 8) | TAG;
		memcpy(page + k * 8, &w, 8);
	}
}

/* Expected content of [pa, pa+len) for a dumped region. */
static void
expect_bytes(const uint8_t *got, uint64_t pa, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t a = pa + i, w = (a & ~7ULL) | TAG;
		uint8_t b = (uint8_t)(w >> ((a & 7) * 8));
		if (got[i] != b)
			ck_abort_msg("byte at pa 0x%llx: 0x%02x, want 0x%02x",
			    (unsigned long long)a, got[i], b);
	}
}

/* A source's map_phys where it must answer (bytes as the model says) and
 * where it must not (NULL: not dumped, zeros not in the file, pieces not
 * side by side in it). */
static void
expect_mapped(const struct kvs_source_ops *ops, void *priv, uint64_t pa, size_t len,
    bool mapped)
{
	const uint8_t *p;

	ck_assert_ptr_nonnull(ops->map_phys);
	p = ops->map_phys(priv, pa, len);
	ck_assert_msg((p != NULL) == mapped, "%s map_phys(0x%llx, %zu): %s", ops->name,
	    (unsigned long long)pa, len, p != NULL ? "mapped" : "NULL");
	if (p != NULL)
		expect_bytes(p, pa, len);
}

/* ------------------------------------------------------------ mapping */

/* What kvs.c does before probing: open O_RDONLY, fstat, map whole. */
struct mapped {
	int fd;
	struct stat st;
	void *map;
	struct kvs_open_args a;
};

static void
map_open(struct mapped *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	m->fd = open(path, O_RDONLY);
	ck_assert_int_ge(m->fd, 0);
	ck_assert_int_eq(fstat(m->fd, &m->st), 0);
	m->map = NULL;
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
map_close(struct mapped *m)
{
	if (m->map != NULL)
		munmap(m->map, (size_t)m->st.st_size);
	close(m->fd);
}

static const char *
tmpfile_with(const char *name, const void *buf, size_t len)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s", path_join(test_tmpdir(), name));
	ck_assert_int_eq(write_file(path, buf, len), 0);
	return path;
}

/* Open buf as a file with ops; expect failure with status st and every
 * non-NULL substring in the message. */
static void
expect_fail(const struct kvs_source_ops *ops, const void *buf, size_t len,
    kvs_status_t st, const char *want1, const char *want2)
{
	struct mapped m;
	struct kvs_error e;
	void *priv = NULL;
	int rc;

	map_open(&m, tmpfile_with("bad", buf, len));
	kerr_clear(&e);
	rc = ops->open(&m.a, &priv, &e);
	if (rc == 0)
		ops->close(priv);
	ck_assert_msg(rc == -1, "%s: open returned %d, want -1", ops->name, rc);
	ck_assert_msg(e.status == st, "%s: status %d (%s), want %d; msg '%s'", ops->name,
	    e.status, kvs_status_str(e.status), st, e.msg);
	ck_assert_msg(e.msg[0] != '\0', "%s: empty message", ops->name);
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

	map_open(&m, tmpfile_with("foreign", buf, len));
	kerr_clear(&e);
	ck_assert_int_eq(ops->open(&m.a, &priv, &e), KVS_NOTMINE);
	ck_assert_int_eq(e.status, KVS_OK);      /* error left untouched */
	ck_assert_str_eq(e.msg, "");
	map_close(&m);
}

/* ------------------------------------------------------ minidump writer */

struct md {
	unsigned version;
	const char *msgbuf;
	uint32_t msgsz;
	const uint64_t (*ranges)[2];    /* v3: [start, end) byte ranges */
	size_t nranges;
	const uint64_t *bitmap;
	uint64_t nbits;
	const uint64_t *pmap;
	uint32_t pmsz;
};

#define KB 0xfffffe0000000000ULL     /* VM_MIN_KERNEL_ADDRESS (13+) */

/* Physical address of bitmap bit `bit` (v1/v2: bit*4096; v3: via ranges). */
static uint64_t
bit_pa(const struct md *d, uint64_t bit)
{
	if (d->version < 3)
		return bit * PG;
	for (size_t r = 0; r < d->nranges; r++) {
		uint64_t s = d->ranges[r][0] / PG, n = RNDP(d->ranges[r][1]) / PG - s;
		if (bit < n)
			return (s + bit) * PG;
		bit -= n;
	}
	ck_abort_msg("bit beyond ranges");
	return 0;
}

static int
bit_set(const uint64_t *bm, uint64_t bit)
{
	return bm[bit / 64] >> (bit % 64) & 1;
}

/* Build a minidump in memory; *len receives its size. */
static uint8_t *
md_build(const struct md *d, size_t *len, uint64_t *data_off)
{
	uint64_t bmsz = RNDP((d->nbits + 7) / 8), dasz = d->version == 3 ? PG : 0;
	uint64_t off, ndump = 0, i;
	uint8_t *b;

	for (i = 0; i < d->nbits; i++)
		ndump += (uint64_t)bit_set(d->bitmap, i);
	*len = PG + RNDP(d->msgsz) + dasz + bmsz + RNDP(d->pmsz) + ndump * PG;
	b = calloc(1, *len);
	ck_assert_ptr_nonnull(b);
	memcpy(b, "minidump FreeBSD/amd64", 22);
	uint32_t v = d->version, bm32 = (uint32_t)bmsz, da32 = (uint32_t)dasz;
	uint64_t kb = KB, db = 0xfffff80000000000ULL, de = 0xfffffc0000000000ULL;
	memcpy(b + 24, &v, 4);
	memcpy(b + 28, &d->msgsz, 4);
	memcpy(b + 32, &bm32, 4);
	memcpy(b + 36, &d->pmsz, 4);
	memcpy(b + 40, &kb, 8);
	memcpy(b + 48, &db, 8);
	memcpy(b + 56, &de, 8);
	if (d->version == 3)
		memcpy(b + 64, &da32, 4);
	off = PG;
	if (d->msgsz)
		memcpy(b + off, d->msgbuf, d->msgsz);
	off += RNDP(d->msgsz);
	for (i = 0; i < d->nranges && d->version == 3; i++)
		memcpy(b + off + i * 16, d->ranges[i], 16);
	off += dasz;
	memcpy(b + off, d->bitmap, (d->nbits + 7) / 8);
	off += bmsz;
	if (d->pmsz)
		memcpy(b + off, d->pmap, d->pmsz);
	off += RNDP(d->pmsz);
	if (data_off != NULL)
		*data_off = off;
	for (i = 0; i < d->nbits; i++)
		if (bit_set(d->bitmap, i)) {
			fill(b + off, bit_pa(d, i));
			off += PG;
		}
	ck_assert_uint_eq(off, *len);
	return b;
}

/* Open the minidump, check info and every bit's page, then a few edges. */
static void
md_check(const struct md *d, const char *name)
{
	size_t len;
	uint8_t *b = md_build(d, &len, NULL), page[PG];
	struct mapped m;
	struct kvs_error e;
	struct kvs_src_info in;
	void *priv;
	uint64_t i, ndump = 0;

	map_open(&m, tmpfile_with(name, b, len));
	kerr_clear(&e);
	ck_assert_msg(kvs_source_minidump.open(&m.a, &priv, &e) == 0, "%s", e.msg);
	kvs_source_minidump.info(priv, &in);
	ck_assert_str_eq(in.format, "minidump");
	ck_assert_uint_eq(in.format_version, d->version);
	ck_assert_uint_eq(in.page_size, 4096);
	ck_assert_uint_eq(in.source_bytes, len);
	ck_assert_int_eq(in.pt_level, d->version == 1 ? 1 : 2);
	ck_assert_uint_eq(in.pt_entries, d->pmsz / 8);
	ck_assert_ptr_nonnull(in.pt);
	ck_assert_int_eq(((uintptr_t)in.pt) % 8, 0);
	ck_assert_int_eq(memcmp(in.pt, d->pmap, d->pmsz), 0);
	ck_assert_uint_eq(in.pt_base, KB);
	ck_assert_uint_eq(in.direct_base, 0xfffff80000000000ULL);
	ck_assert_uint_eq(in.direct_end, 0xfffffc0000000000ULL);
	ck_assert_uint_eq(in.msgbuf_len, d->msgsz);
	if (d->msgsz)
		ck_assert_int_eq(memcmp(in.msgbuf, d->msgbuf, d->msgsz), 0);
	ck_assert(!in.live);

	for (i = 0; i < d->nbits; i++) {
		uint64_t pa = bit_pa(d, i);
		int rc = kvs_source_minidump.read_phys(priv, pa, page, PG, &e);
		if (bit_set(d->bitmap, i)) {
			ck_assert_msg(rc == 0, "bit %llu pa 0x%llx: %s", (unsigned long long)i,
			    (unsigned long long)pa, e.msg);
			expect_bytes(page, pa, PG);
			expect_mapped(&kvs_source_minidump, priv, pa, PG, true);
			expect_mapped(&kvs_source_minidump, priv, pa + 40, 8, true);
			ndump++;
			/* A read running into the next page: fine if dumped, else
			 * the fault is the first missing byte. */
			kerr_clear(&e);
			rc = kvs_source_minidump.read_phys(priv, pa + PG - 12, page, 24, &e);
			/* Pages dumped side by side lie side by side in the file. */
			expect_mapped(&kvs_source_minidump, priv, pa + PG - 12, 24,
			    i + 1 < d->nbits && bit_set(d->bitmap, i + 1) &&
			    bit_pa(d, i + 1) == pa + PG);
			if (i + 1 < d->nbits && bit_set(d->bitmap, i + 1) &&
			    bit_pa(d, i + 1) == pa + PG) {
				ck_assert_int_eq(rc, 0);
				expect_bytes(page, pa + PG - 12, 24);
			} else {
				ck_assert_int_eq(rc, -1);
				ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
				ck_assert(e.fault_valid);
				ck_assert_uint_eq(e.fault_addr, pa + PG);
			}
		} else {
			char want[64];
			ck_assert_int_eq(rc, -1);
			expect_mapped(&kvs_source_minidump, priv, pa, 8, false);
			ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
			ck_assert(e.fault_valid);
			ck_assert_uint_eq(e.fault_addr, pa);
			snprintf(want, sizeof(want), "0x%llx", (unsigned long long)pa);
			ck_assert_msg(strstr(e.msg, want) != NULL, "'%s' lacks %s", e.msg, want);
			ck_assert_ptr_nonnull(strstr(e.msg, "not in dump"));
		}
		kerr_clear(&e);
	}
	uint64_t dp = kvs_source_minidump.dumped_pages != NULL ?
	    kvs_source_minidump.dumped_pages(priv) : in.dumped_pages;
	ck_assert_uint_eq(dp, ndump);
	/* Beyond every bit. */
	uint64_t past = d->version < 3 ? d->nbits * PG :
	    RNDP(d->ranges[d->nranges - 1][1]) + 64 * PG;
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, past + 8, page, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_uint_eq(e.fault_addr, past + 8);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, UINT64_MAX - 3, page, 2, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strcmp(e.msg, "physical page 0xfffffffffffff000 not in dump") == 0, "%s", e.msg);
	kvs_source_minidump.close(priv);
	map_close(&m);
	free(b);
}

static const char msg[] = "<6>Copyright (c) 1992-2023 The FreeBSD Project.\n";

START_TEST(minidump_v1)
{
	uint64_t bm[2] = { 0x8000000000000f0bULL, 0x3ULL }, pmap[64] = { 0 };
	struct md d = { .version = 1, .msgbuf = msg, .msgsz = sizeof(msg) - 1,
		.bitmap = bm, .nbits = 128, .pmap = pmap, .pmsz = sizeof(pmap) };

	pmap[0] = 0x3000 | 1;
	pmap[5] = 0x8000 | 1;
	md_check(&d, "v1.mdmp");
}
END_TEST

START_TEST(minidump_v2)
{
	uint64_t bm[4] = { 0xff00ff00ff00ff01ULL, 0, 0x1ULL << 63, 0x5555 }, pmap[512] = { 0 };
	struct md d = { .version = 2, .msgbuf = msg, .msgsz = 4096 + 7, /* spans 2 pages */
		.bitmap = bm, .nbits = 256, .pmap = pmap, .pmsz = sizeof(pmap) };
	char big[4096 + 7];

	memset(big, 'x', sizeof(big));
	d.msgbuf = big;
	pmap[0] = 0x200000 | 0x81;
	md_check(&d, "v2.mdmp");
}
END_TEST

/* v3: two dump_avail ranges with a hole between them, the second not
 * starting at a 64-page boundary so bits and PAs are not aligned alike. */
START_TEST(minidump_v3_hole)
{
	static const uint64_t ranges[][2] = {
		{ 0x0, 0x9f000 },           /* 159 pages */
		{ 0x100000, 0x180800 },     /* 128.5 pages -> 129 bits (end rounded up) */
	};
	uint64_t bm[5] = { 0 }, pmap[8] = { 0 };
	struct md d = { .version = 3, .msgbuf = msg, .msgsz = sizeof(msg) - 1,
		.ranges = ranges, .nranges = 2, .bitmap = bm, .nbits = 288,
		.pmap = pmap, .pmsz = sizeof(pmap) };

	for (unsigned i = 0; i < 288; i += 3)
		bm[i / 64] |= 1ULL << (i % 64);
	bm[2] |= 0xffULL << 28;                   /* a run across the range edge (bit 159) */
	md_check(&d, "v3.mdmp");

	/* The hole and the half page past the second range's end. */
	size_t len;
	uint8_t *b = md_build(&d, &len, NULL);
	struct mapped m;
	struct kvs_error e;
	void *priv;
	uint64_t v;

	map_open(&m, tmpfile_with("v3b.mdmp", b, len));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_minidump.open(&m.a, &priv, &e), 0);
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, 0xa0000, &v, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_uint_eq(e.fault_addr, 0xa0000);
	ck_assert_ptr_nonnull(strstr(e.msg, "0xa0000"));
	kerr_clear(&e);
	/* First page of range 2 is bit 159, set by the run above. */
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, 0x100010, &v, 8, &e), 0);
	ck_assert_uint_eq(v, 0x100010 | TAG);
	kvs_source_minidump.close(priv);
	map_close(&m);
	free(b);
}
END_TEST

/* A few thousand bits over three ranges: every page through the rank index,
 * read in a scrambled order so the index is consulted out of sequence. */
START_TEST(minidump_rank_thousands)
{
	static const uint64_t ranges[][2] = {
		{ 0x1000, 0x800000 },        /* 2047 pages */
		{ 0x1000000, 0x1c00000 },    /* 3072 pages */
		{ 0x40000000, 0x40200000 },  /* 512 pages */
	};
	enum { NB = 2047 + 3072 + 512 };
	static uint64_t bm[(NB + 63) / 64];
	uint64_t pmap[512] = { 0 }, s = 99, i, ndump = 0;
	struct md d = { .version = 3, .ranges = ranges, .nranges = 3, .bitmap = bm,
		.nbits = NB, .pmap = pmap, .pmsz = sizeof(pmap) };

	memset(bm, 0, sizeof(bm));
	for (i = 0; i < NB; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		if ((s >> 40) % 5 < 2 || (i >= 4000 && i < 4700)) {    /* + a long full run */
			bm[i / 64] |= 1ULL << (i % 64);
			ndump++;
		}
	}
	ck_assert_uint_gt(ndump, 2000);
	md_check(&d, "rank.mdmp");

	size_t len;
	uint8_t *b = md_build(&d, &len, NULL);
	struct mapped m;
	struct kvs_error e;
	void *priv;

	map_open(&m, tmpfile_with("rank2.mdmp", b, len));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_minidump.open(&m.a, &priv, &e), 0);
	for (i = 0; i < NB; i++) {
		uint64_t bit = (i * 2749) % NB, pa = bit_pa(&d, bit), v = 0;   /* 2749 prime */
		int rc = kvs_source_minidump.read_phys(priv, pa + 0x7f8, &v, 8, &e);
		ck_assert_int_eq(rc, bit_set(bm, bit) ? 0 : -1);
		if (rc == 0)
			ck_assert_uint_eq(v, (pa + 0x7f8) | TAG);
		kerr_clear(&e);
	}
	kvs_source_minidump.close(priv);
	map_close(&m);
	free(b);
}
END_TEST

/* ------------------------------------------------------ minidump bad input */

static uint8_t *
md_small(unsigned version, size_t *len)
{
	static const uint64_t ranges[][2] = { { 0, 0x40000 } };
	static uint64_t bm[1] = { 0xffff }, pmap[16];
	struct md d = { .version = version, .msgbuf = msg, .msgsz = sizeof(msg) - 1,
		.ranges = ranges, .nranges = 1, .bitmap = bm, .nbits = 64,
		.pmap = pmap, .pmsz = sizeof(pmap) };

	return md_build(&d, len, NULL);
}

static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

START_TEST(minidump_bad_headers)
{
	size_t len;
	uint8_t *b = md_small(3, &len), *c = malloc(len);
	const struct kvs_source_ops *md = &kvs_source_minidump;

	ck_assert_ptr_nonnull(c);
	/* Header cut short. */
	expect_fail(md, b, 100, KVS_E_TRUNCATED, "truncated", "100");
	expect_fail(md, b, 4095, KVS_E_TRUNCATED, "4095", NULL);
	/* Versions. */
	memcpy(c, b, len); put32(c, 24, 4);
	expect_fail(md, c, len, KVS_E_VERSION, "version 4", NULL);
	memcpy(c, b, len); put32(c, 24, 0);
	expect_fail(md, c, len, KVS_E_VERSION, "version 0", NULL);
	/* Section sizes past the end of the file: field and numbers named. */
	memcpy(c, b, len); put32(c, 28, 0x10000000);
	expect_fail(md, c, len, KVS_E_TRUNCATED, "msgbufsize", "268435456");
	memcpy(c, b, len); put32(c, 28, 0xffffffff);           /* rounds past 4 GiB */
	expect_fail(md, c, len, KVS_E_TRUNCATED, "4294967295", NULL);
	memcpy(c, b, len); put32(c, 32, 0x7ffff000);
	expect_fail(md, c, len, KVS_E_TRUNCATED, "bitmapsize", "2147479552");
	memcpy(c, b, len); put32(c, 36, 0xfffffff0);
	expect_fail(md, c, len, KVS_E_TRUNCATED, "pmapsize", "4294967280");
	memcpy(c, b, len); put32(c, 64, 0xfffff000);
	expect_fail(md, c, len, KVS_E_TRUNCATED, "dump_avail", "4294963200");
	/* Another architecture. */
	memcpy(c, b, len); memcpy(c + 9, "FreeBSD/riscv\0\0", 15);
	expect_fail(md, c, len, KVS_E_FORMAT, "another architecture", NULL);
	/* dump_avail covering more pages than the bitmap has bits. */
	memcpy(c, b, len);
	{
		uint64_t end = 0x100000000ULL;       /* 1 Mi pages vs 32 Ki bits */
		memcpy(c + 2 * PG + 8, &end, 8);
	}
	expect_fail(md, c, len, KVS_E_FORMAT, "dump_avail", "1048576");
	/* dump_avail ranges out of order. */
	memcpy(c, b, len);
	{
		uint64_t r[4] = { 0x100000, 0x140000, 0x0, 0x1000 };
		memcpy(c + 2 * PG, r, sizeof(r));
	}
	expect_fail(md, c, len, KVS_E_FORMAT, "not ascending", NULL);
	/* dump_avail without terminator over many pages: bounded, refused. */
	{
		size_t n = len + 64 * PG;
		uint8_t *big = calloc(1, n);
		ck_assert_ptr_nonnull(big);
		memcpy(big, b, PG);
		put32(big, 64, 64 * PG);
		put32(big, 32, 0);
		put32(big, 36, 0);
		for (uint64_t k = 0; k < 64 * PG / 16; k++) {
			uint64_t r[2] = { k * 2 * PG, k * 2 * PG + PG };
			memcpy(big + PG + RNDP(sizeof(msg) - 1) + k * 16, r, 16);
		}
		expect_fail(md, big, n, KVS_E_FORMAT, "ranges", NULL);
		free(big);
	}
	free(c);
	free(b);
}
END_TEST

/* A bitmap claiming far more pages than the file holds: the header is
 * consistent, so the dump opens (its message buffer and low pages are
 * readable); dumped_pages reports the claim, and a page past the end of the
 * file is a truncation naming both numbers. */
START_TEST(minidump_absurd_claim)
{
	static uint64_t bm[512];                 /* 32768 bits, all set */
	uint64_t pmap[8] = { 0 };
	struct md d = { .version = 2, .bitmap = bm, .nbits = 32768, .pmap = pmap,
		.pmsz = sizeof(pmap) };
	size_t len;
	uint8_t *b;
	uint64_t doff, v;
	struct mapped m;
	struct kvs_error e;
	void *priv;

	memset(bm, 0xff, sizeof(bm));
	b = md_build(&d, &len, &doff);
	/* Keep only 10 data pages. */
	map_open(&m, tmpfile_with("absurd.mdmp", b, doff + 10 * PG));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_minidump.open(&m.a, &priv, &e), 0);
	ck_assert_uint_eq(kvs_source_minidump.dumped_pages(priv), 32768);
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, 9 * PG + 8, &v, 8, &e), 0);
	ck_assert_uint_eq(v, (9 * PG + 8) | TAG);
	ck_assert_int_eq(kvs_source_minidump.read_phys(priv, 10 * PG, &v, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_TRUNCATED);
	ck_assert_uint_eq(e.fault_addr, 10 * PG);
	ck_assert_msg(strstr(e.msg, "32768 pages claimed") != NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "holds 10") != NULL, "%s", e.msg);
	kvs_source_minidump.close(priv);
	map_close(&m);
	free(b);
}
END_TEST

/* ------------------------------------------------------------ ELF dump */

/* The headers come from tests/support/elfcore.c (shared with bench_open);
 * every dumped page holds the address pattern. */
static uint8_t *
elf_build(const struct elfcore_seg *s, size_t n, size_t *len)
{
	uint8_t hdr[4096], *b;
	uint64_t off[8], total;
	size_t i;

	ck_assert_uint_le(n, 8);
	ck_assert_uint_le(elfcore_hdr_size(n), sizeof(hdr));
	total = elfcore_headers(hdr, s, n, off);
	b = calloc(1, total);
	ck_assert_ptr_nonnull(b);
	memcpy(b, hdr, elfcore_hdr_size(n));
	for (i = 0; i < n; i++)
		for (uint64_t p = 0; p < s[i].filesz; p += PG) {
			uint8_t page[PG];
			fill(page, s[i].paddr + p);
			memcpy(b + off[i] + p, page, s[i].filesz - p < PG ? s[i].filesz - p : PG);
		}
	*len = total;
	return b;
}

START_TEST(elf_full_dump)
{
	/* Written high segment first: the source sorts them. */
	static const struct elfcore_seg segs[] = {
		{ 0x100000, 0x100000, 0x20000, 0x22000 },   /* 2 pages of zeros at the end */
		{ 0x0, 0x0, 0x9f000, 0x9f000 },
	};
	size_t len;
	uint8_t *b = elf_build(segs, 2, &len), buf[64];
	struct mapped m;
	struct kvs_error e;
	struct kvs_src_info in;
	void *priv;
	uint64_t pa;

	map_open(&m, tmpfile_with("full.elf", b, len));
	kerr_clear(&e);
	/* The minidump probe says "not mine". */
	ck_assert_int_eq(kvs_source_minidump.open(&m.a, &priv, &e), KVS_NOTMINE);
	ck_assert_msg(kvs_source_elfdump.open(&m.a, &priv, &e) == 0, "%s", e.msg);
	kvs_source_elfdump.info(priv, &in);
	ck_assert_str_eq(in.format, "elf");
	ck_assert_uint_eq(in.dumped_pages, 0x20 + 0x9f);
	ck_assert_uint_eq(in.source_bytes, len);
	ck_assert_ptr_null(in.pt);
	ck_assert_uint_eq(in.page_size, 4096);
	for (pa = 0; pa < 0x9f000; pa += 0x1f08) {
		ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, pa, buf, 64, &e), 0);
		expect_bytes(buf, pa, 64);
		expect_mapped(&kvs_source_elfdump, priv, pa, 64, true);
	}
	expect_mapped(&kvs_source_elfdump, priv, 0x11fff0, 16, true);
	expect_mapped(&kvs_source_elfdump, priv, 0x11fff8, 16, false);  /* zeros past p_filesz */
	expect_mapped(&kvs_source_elfdump, priv, 0x121ff8, 8, false);
	expect_mapped(&kvs_source_elfdump, priv, 0xa0000, 8, false);    /* a hole */
	expect_mapped(&kvs_source_elfdump, priv, 0x9eff8, 16, false);   /* runs into it */
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0x11fff0, buf, 16, &e), 0);
	expect_bytes(buf, 0x11fff0, 16);
	/* Across p_filesz into the p_memsz tail: zeros. */
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0x11fff8, buf, 16, &e), 0);
	expect_bytes(buf, 0x11fff8, 8);
	for (int i = 8; i < 16; i++)
		ck_assert_uint_eq(buf[i], 0);
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0x121ff8, buf, 8, &e), 0);
	/* The hole between segments, and past the end (a read that runs off). */
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0xa0000, buf, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_uint_eq(e.fault_addr, 0xa0000);
	ck_assert_ptr_nonnull(strstr(e.msg, "0xa0000"));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0x9eff8, buf, 16, &e), -1);
	ck_assert_uint_eq(e.fault_addr, 0x9f000);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "0x9f000") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_elfdump.read_phys(priv, 0x121ffc, buf, 8, &e), -1);
	ck_assert_uint_eq(e.fault_addr, 0x122000);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "0x122000") != NULL, "%s", e.msg);
	kvs_source_elfdump.close(priv);
	map_close(&m);
	free(b);
}
END_TEST

START_TEST(elf_bad)
{
	static const struct elfcore_seg segs[] = {
		{ 0x0, 0x0, 0x4000, 0x4000 },
		{ 0x10000, 0x10000, 0x2000, 0x2000 },
	};
	static const struct elfcore_seg kva[] = {
		{ 0x200000, 0xffffffff80200000ULL, 0x1000, 0x1000 },
	};
	static const struct elfcore_seg overlap[] = {
		{ 0x0, 0x0, 0x4000, 0x4000 },
		{ 0x3000, 0x3000, 0x2000, 0x2000 },
	};
	const struct kvs_source_ops *ed = &kvs_source_elfdump;
	size_t len, klen;
	uint8_t *b = elf_build(segs, 2, &len), *c = malloc(len), *k;
	uint16_t n16;
	uint64_t v;

	ck_assert_ptr_nonnull(c);
	/* A core whose segment names a virtual and a physical range (QEMU's
	 * paging dumps, /proc/vmcore): both can be read. */
	k = elf_build(kva, 1, &klen);
	{
		struct mapped m;
		struct kvs_error e;
		struct kvs_src_info in;
		void *priv = NULL;
		uint8_t buf[16];

		map_open(&m, tmpfile_with("kva", k, klen));
		kerr_clear(&e);
		ck_assert_int_eq(ed->open(&m.a, &priv, &e), 0);
		ed->info(priv, &in);
		ck_assert(!in.virtual_only);
		ck_assert_int_eq(ed->read_phys(priv, 0x200ff0ULL, buf, 16, &e), 0);
		ck_assert_int_eq(ed->read_virt(priv, 0xffffffff80200ff0ULL, buf, 16, &e), 0);
		ck_assert_int_eq(ed->read_virt(priv, 0xffffffff80201000ULL, buf, 1, &e), -1);
		ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
		ck_assert_ptr_nonnull(strstr(e.msg, "virtual 0xffffffff80201000"));
		ed->close(priv);
		map_close(&m);
	}
	free(k);
	/* Segments that overlap: the same bytes twice are one range (aliases,
	 * kdump's copy of the kernel image); different bytes are refused. */
	k = elf_build(overlap, 2, &klen);
	{
		Elf64_Phdr ph;
		memcpy(&ph, k + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), sizeof(ph));
		k[ph.p_offset] ^= 0xff;
	}
	expect_fail(ed, k, klen, KVS_E_FORMAT, "overlap", "different contents");
	free(k);
	/* Header cut short. */
	expect_fail(ed, b, 40, KVS_E_TRUNCATED, "40", NULL);
	/* e_phnum absurd: the table runs past the end of this small file. */
	memcpy(c, b, len); n16 = 0xfff0; memcpy(c + 0x38, &n16, 2);
	expect_fail(ed, c, len, KVS_E_TRUNCATED, "program headers", NULL);
	/* e_phnum too big but within the file: the table runs into segment data. */
	memcpy(c, b, len); n16 = 80; memcpy(c + 0x38, &n16, 2);
	expect_fail(ed, c, len, KVS_E_FORMAT, "overlaps", NULL);
	/* e_phoff past the end. */
	memcpy(c, b, len); v = len + PG; memcpy(c + 0x20, &v, 8);
	expect_fail(ed, c, len, KVS_E_TRUNCATED, "program headers", NULL);
	/* e_phoff so large that e_phoff + size overflows. */
	memcpy(c, b, len); v = UINT64_MAX - 8; memcpy(c + 0x20, &v, 8);
	expect_fail(ed, c, len, KVS_E_TRUNCATED, NULL, NULL);
	/* e_phentsize wrong. */
	memcpy(c, b, len); n16 = 32; memcpy(c + 0x36, &n16, 2);
	expect_fail(ed, c, len, KVS_E_FORMAT, "32", NULL);
	/* Second segment's data past the end of the file. */
	memcpy(c, b, len); v = len; memcpy(c + 64 + 56 + 8, &v, 8);
	expect_fail(ed, c, len, KVS_E_TRUNCATED, "past end of file", NULL);
	/* p_filesz huge: offset + size overflows. */
	memcpy(c, b, len); v = UINT64_MAX - 100; memcpy(c + 64 + 32, &v, 8);
	expect_fail(ed, c, len, KVS_E_TRUNCATED, "past end of file", NULL);
	/* Not a core: an executable. */
	memcpy(c, b, len); n16 = ET_EXEC; memcpy(c + 0x10, &n16, 2);
	expect_fail(ed, c, len, KVS_E_FORMAT, "not a core", NULL);
	/* Another machine. */
	memcpy(c, b, len); n16 = 243; memcpy(c + 0x12, &n16, 2);   /* EM_RISCV */
	expect_fail(ed, c, len, KVS_E_FORMAT, "machine 243", NULL);
	/* 32-bit ELF. */
	memcpy(c, b, len); c[EI_CLASS] = ELFCLASS32;
	expect_fail(ed, c, len, KVS_E_FORMAT, NULL, NULL);
	free(c);
	/* Program headers after the data are legal ELF: accepted. */
	{
		uint8_t *t = malloc(len + 2 * sizeof(Elf64_Phdr));
		struct mapped m;
		struct kvs_error e;
		void *priv;
		uint64_t w;

		ck_assert_ptr_nonnull(t);
		memcpy(t, b, len);
		memcpy(t + len, b + 64, 2 * sizeof(Elf64_Phdr));
		memset(t + 64, 0, 2 * sizeof(Elf64_Phdr));
		v = len;
		memcpy(t + 0x20, &v, 8);
		map_open(&m, tmpfile_with("phdr-at-end.elf", t, len + 2 * sizeof(Elf64_Phdr)));
		kerr_clear(&e);
		ck_assert_msg(ed->open(&m.a, &priv, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(ed->read_phys(priv, 0x10ff8, &w, 8, &e), 0);
		ck_assert_uint_eq(w, 0x10ff8 | TAG);
		ed->close(priv);
		map_close(&m);
		free(t);
	}
	free(b);
}
END_TEST

/* --------------------------------------------------------- foreign files */

START_TEST(probes_say_not_mine)
{
	static const char text[] = "This is not a dump at all, just some text.\n";
	uint8_t junk[8192];
	size_t len;
	uint8_t *md = md_small(2, &len);

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7 + 3);
	expect_notmine(&kvs_source_minidump, text, sizeof(text) - 1);
	expect_notmine(&kvs_source_elfdump, text, sizeof(text) - 1);
	expect_notmine(&kvs_source_minidump, junk, sizeof(junk));
	expect_notmine(&kvs_source_elfdump, junk, sizeof(junk));
	expect_notmine(&kvs_source_minidump, "mini", 4);      /* shorter than the magic */
	expect_notmine(&kvs_source_elfdump, "\177EL", 3);
	expect_notmine(&kvs_source_elfdump, md, len);
	/* "minidum" + something else: not a minidump. */
	md[7] = 'X';
	expect_notmine(&kvs_source_minidump, md, len);
	free(md);
}
END_TEST

/* ------------------------------------------------------------------ raw */

START_TEST(raw_image)
{
	const char *path = path_join(test_tmpdir(), "mem.raw");
	uint8_t img[8 * PG], buf[32];
	struct mapped m;
	struct kvs_error e;
	struct kvs_src_info in;
	void *priv;
	uint64_t v;
	int wfd;

	for (unsigned p = 0; p < 8; p++)
		fill(img + p * PG, p * PG);
	ck_assert_int_eq(write_file(path, img, sizeof(img)), 0);
	map_open(&m, path);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_raw.open(&m.a, &priv, &e), 0);
	kvs_source_raw.info(priv, &in);
	ck_assert_str_eq(in.format, "raw");
	ck_assert_uint_eq(in.dumped_pages, 8);
	ck_assert_uint_eq(in.source_bytes, sizeof(img));
	ck_assert_ptr_null(in.pt);
	ck_assert_int_eq(kvs_source_raw.read_phys(priv, 0x2ff0, buf, 32, &e), 0);
	expect_bytes(buf, 0x2ff0, 32);
	expect_mapped(&kvs_source_raw, priv, 0x2ff0, 32, true);
	expect_mapped(&kvs_source_raw, priv, 0, 8 * PG, true);
	expect_mapped(&kvs_source_raw, priv, 8 * PG, 8, false);
	expect_mapped(&kvs_source_raw, priv, 8 * PG - 4, 8, false);
	expect_mapped(&kvs_source_raw, priv, UINT64_MAX - 2, 8, false);
	/* Past the end, and a read that runs off the end. */
	ck_assert_int_eq(kvs_source_raw.read_phys(priv, 8 * PG, buf, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_uint_eq(e.fault_addr, 8 * PG);
	ck_assert_ptr_nonnull(strstr(e.msg, "0x8000"));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_raw.read_phys(priv, 8 * PG - 4, buf, 8, &e), -1);
	ck_assert_uint_eq(e.fault_addr, 8 * PG);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "0x8000 beyond the image") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_raw.read_phys(priv, UINT64_MAX - 2, buf, 8, &e), -1);
	kerr_clear(&e);
	/* Another process changes the image in place: the next read sees it. */
	wfd = open(path, O_WRONLY);
	ck_assert_int_ge(wfd, 0);
	for (v = 1; v <= 50; v++) {
		uint64_t got = 0;
		ck_assert_int_eq(pwrite(wfd, &v, 8, 0x5008), 8);
		ck_assert_int_eq(kvs_source_raw.read_phys(priv, 0x5008, &got, 8, &e), 0);
		ck_assert_uint_eq(got, v);
		memcpy(&got, kvs_source_raw.map_phys(priv, 0x5008, 8), 8);
		ck_assert_uint_eq(got, v);
	}
	close(wfd);
	kvs_source_raw.close(priv);
	map_close(&m);
}
END_TEST

/* ---------------------------------------------------------------- live */

START_TEST(devmem_pread)
{
	const char *path = path_join(test_tmpdir(), "live.mem");
	uint8_t img[4 * PG], buf[32];
	struct kvs_open_args a;
	struct kvs_error e;
	struct kvs_src_info in;
	struct stat st;
	void *priv;
	int fd, wfd;

	for (unsigned p = 0; p < 4; p++)
		fill(img + p * PG, p * PG);
	ck_assert_int_eq(write_file(path, img, sizeof(img)), 0);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fstat(fd, &st);
	memset(&a, 0, sizeof(a));
	a.path = path;
	a.fd = fd;
	a.st = &st;
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_devmem.open(&a, &priv, &e), 0);
	kvs_source_devmem.info(priv, &in);
	ck_assert_str_eq(in.format, "live");
	ck_assert(in.live);
	ck_assert_int_eq(kvs_source_devmem.read_phys(priv, 0x1ff8, buf, 32, &e), 0);
	expect_bytes(buf, 0x1ff8, 32);
	/* Never cached: a change is seen by the next read. */
	wfd = open(path, O_WRONLY);
	ck_assert_int_ge(wfd, 0);
	for (uint64_t v = 1; v <= 20; v++) {
		uint64_t got;
		ck_assert_int_eq(pwrite(wfd, &v, 8, 0x2000), 8);
		ck_assert_int_eq(kvs_source_devmem.read_phys(priv, 0x2000, &got, 8, &e), 0);
		ck_assert_uint_eq(got, v);
	}
	close(wfd);
	/* End of the device, and offsets no off_t can hold. */
	ck_assert_int_eq(kvs_source_devmem.read_phys(priv, 4 * PG - 4, buf, 8, &e), -1);
	ck_assert(e.fault_valid);
	ck_assert_uint_eq(e.fault_addr, 4 * PG);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_devmem.read_phys(priv, 1ULL << 63, buf, 8, &e), -1);
	ck_assert_int_ne(e.status, KVS_OK);
	kvs_source_devmem.close(priv);
	/* The descriptor belongs to the caller and must still be open. */
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);

	/* A real character device (not /dev/mem): still pread. */
	fd = open("/dev/zero", O_RDONLY);
	if (fd >= 0) {
		fstat(fd, &st);
		a.path = "/dev/zero";
		a.fd = fd;
		ck_assert_int_eq(kvs_source_devmem.open(&a, &priv, &e), 0);
		memset(buf, 0xaa, sizeof(buf));
		ck_assert_int_eq(kvs_source_devmem.read_phys(priv, 0x123456, buf, 32, &e), 0);
		for (int i = 0; i < 32; i++)
			ck_assert_uint_eq(buf[i], 0);
		kvs_source_devmem.close(priv);
		close(fd);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("source");
	TCase *tc = tcase_create("sources");

	tcase_add_test(tc, minidump_v1);
	tcase_add_test(tc, minidump_v2);
	tcase_add_test(tc, minidump_v3_hole);
	tcase_add_test(tc, minidump_rank_thousands);
	tcase_add_test(tc, minidump_bad_headers);
	tcase_add_test(tc, minidump_absurd_claim);
	tcase_add_test(tc, elf_full_dump);
	tcase_add_test(tc, elf_bad);
	tcase_add_test(tc, probes_say_not_mine);
	tcase_add_test(tc, raw_image);
	tcase_add_test(tc, devmem_pread);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
