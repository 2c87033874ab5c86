/*
 * check_arm64.c - AArch64 translation (arch/arm64.c) on synthetic page
 * tables alone: every granule (4, 16, 64 KiB) with the kernel VA sizes
 * Linux and FreeBSD configure (36 to 52 bits), pages and blocks at levels
 * 1 and 2, 52-bit output addresses in both layouts (FEAT_LPA with 64 KiB
 * pages, FEAT_LPA2 with 4 and 16 KiB), the direct-map shortcut with a
 * physical offset, and the refusals: invalid descriptors at each level, a
 * reserved level-3 block, a user address, a missing table page and a
 * granule that does not exist.  Also a dump's own section of level 3
 * descriptors (FreeBSD minidumps): pages, their offsets, the section's
 * bounds, invalid and reserved entries, and a regime it cannot serve.
 *
 * The tables are built here from the architecture's descriptor format (an
 * index per level of granule - 3 bits, bits 1:0 = 11 table/page, 01
 * block), by a builder that shares nothing with the walker; each mapping's
 * expected physical address is the builder's input.
 */
#include <check.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "testutil.h"

#define TBL_MAX 64
static uint8_t *mem;            /* the tables: TBL_MAX granule-sized pages */
static uint64_t mem_base;       /* their physical address */
static unsigned gshift;         /* the builder's granule */
static unsigned vbits;
static int pa52;
static unsigned ntables;

static int
rd(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	uint64_t size = (uint64_t)TBL_MAX << gshift;

	(void)ctx;
	if (pa < mem_base || pa - mem_base >= size || len > size - (pa - mem_base)) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not present", (unsigned long long)pa);
		kerr_fault(e, pa);
		return -1;
	}
	memcpy(buf, mem + (pa - mem_base), len);
	return 0;
}

/* An output address in a descriptor, as the architecture lays it out. */
static uint64_t
enc(uint64_t pa)
{
	if (!pa52)
		return pa;
	if (gshift == 16)                    /* LPA: PA[51:48] in bits 15:12 */
		return (pa & ((1ULL << 48) - 1)) | ((pa >> 48) & 0xf) << 12;
	/* LPA2: PA[51:50] in bits 9:8 */
	return (pa & ((1ULL << 50) - 1)) | ((pa >> 50) & 0x3) << 8;
}

static uint64_t
new_table(void)
{
	ck_assert_uint_lt(ntables, TBL_MAX);
	return mem_base + ((uint64_t)ntables++ << gshift);
}

static void
put_desc(uint64_t table, uint64_t idx, uint64_t d)
{
	uint64_t off = table - mem_base + idx * 8;
	ck_assert_uint_lt(off + 8, (uint64_t)TBL_MAX << gshift);
	memcpy(mem + off, &d, 8);
}

static uint64_t
get_desc(uint64_t table, uint64_t idx)
{
	uint64_t d;
	memcpy(&d, mem + (table - mem_base) + idx * 8, 8);
	return d;
}

/* The levels: level L resolves bits [shift(L) + width - 1 : shift(L)],
 * shift(L) = g + (3 - L)(g - 3); the first level takes the rest below
 * va_bits. */
static unsigned
lshift(int level)
{
	return gshift + (unsigned)(3 - level) * (gshift - 3);
}

static int
first_level(void)
{
	int l = 3;
	while (lshift(l) + (gshift - 3) < vbits)
		l--;
	return l;
}

static uint64_t root;

/* Map va to pa with a leaf at `leaf` (3: a page; 1 or 2: a block). */
static void
map(uint64_t va, uint64_t pa, int leaf)
{
	uint64_t t = root;
	int l;

	for (l = first_level(); l <= 3; l++) {
		unsigned w = l == first_level() ? vbits - lshift(l) : gshift - 3;
		uint64_t idx = (va >> lshift(l)) & ((1ULL << w) - 1);
		if (l == leaf) {
			/* bit 10 (AF) and attributes set, as real tables have */
			put_desc(t, idx, enc(pa) | (1ULL << 10) | (l == 3 ? 3 : 1) | 0x700);
			return;
		}
		uint64_t d = get_desc(t, idx);
		if ((d & 3) != 3) {
			uint64_t nt = new_table();
			d = enc(nt) | 3;
			put_desc(t, idx, d);
		}
		/* the next table: decode what we encoded */
		if (!pa52)
			t = d & ((1ULL << 48) - 1) & ~((1ULL << gshift) - 1);
		else if (gshift == 16)
			t = (d & ((1ULL << 48) - 1) & ~0xffffULL) | ((d >> 12) & 0xf) << 48;
		else
			t = (d & ((1ULL << 50) - 1) & ~((1ULL << gshift) - 1)) | ((d >> 8) & 3) << 50;
	}
}

static void
regime(unsigned g, unsigned vb, int p52, uint64_t base)
{
	gshift = g;
	vbits = vb;
	pa52 = p52;
	mem_base = base;
	ntables = 0;
	free(mem);
	mem = calloc(TBL_MAX, (size_t)1 << g);
	ck_assert_ptr_nonnull(mem);
	root = new_table();
}

static struct kvs_xlat_params
params(void)
{
	struct kvs_xlat_params p = { .read_phys = rd, .have_root = true, .root_pa = root,
		.page_shift = gshift, .va_bits = vbits, .pa52 = pa52 != 0 };
	return p;
}

static int
xlat(const struct kvs_xlat_params *p, uint64_t va, uint64_t *pa, uint64_t *pgsz,
    struct kvs_error *e)
{
	void *priv;
	uint64_t run = 0;
	int rc;

	ck_assert_int_eq(kvs_arch_arm64.create(&priv, p, e), 0);
	rc = kvs_arch_arm64.kvtop(priv, va, pa, &run, pgsz, e);
	kvs_arch_arm64.destroy(priv);
	if (rc == 0)
		ck_assert_uint_eq(run, *pgsz - (va & (*pgsz - 1)));
	return rc;
}

static uint64_t
kva(uint64_t off)
{
	return (~0ULL << vbits) | off;          /* the kernel's half */
}

/* One regime: a page, a level-2 block, a level-1 block (where the
 * granule's level 1 lies below the first level, skipped), checked at
 * their first, a middle and their last byte; the neighbours unmapped. */
static void
check_regime(unsigned g, unsigned vb, int p52, uint64_t tbase, uint64_t pa_hi)
{
	struct kvs_error e;
	struct kvs_xlat_params p;
	uint64_t pa, pgsz, page = 1ULL << g;
	uint64_t b2, b1;
	uint64_t va_page, va_b2, va_b1 = 0, pa_page, pa_b2, pa_b1 = 0;
	char what[96];

	regime(g, vb, p52, tbase);
	b1 = 1ULL << lshift(1);
	b2 = 1ULL << lshift(2);
	snprintf(what, sizeof(what), "%u KiB pages, %u-bit VA%s", 1u << (g - 10), vb,
	    p52 ? ", 52-bit PA" : "");
	kerr_clear(&e);
	va_page = kva(7 * page);
	pa_page = pa_hi | (0x1234ULL << g);
	map(va_page, pa_page, 3);
	va_b2 = kva(3 * b2);
	pa_b2 = (pa_hi | (5 * b2)) & ~(b2 - 1);
	map(va_b2, pa_b2, 2);
	if (first_level() <= 1 && lshift(1) < vb) {
		va_b1 = kva(((1ULL << (vb - 1)) / b1 + 1) * b1);   /* upper half of the space */
		pa_b1 = (pa_hi | (2 * b1)) & ~(b1 - 1);
		map(va_b1, pa_b1, 1);
	}
	p = params();
	{
		const uint64_t offs[3] = { 0, page / 2 + 8, page - 1 };
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(xlat(&p, va_page + offs[i], &pa, &pgsz, &e) == 0, "%s: %s", what,
			    e.msg);
			ck_assert_msg(pa == pa_page + offs[i], "%s: page 0x%llx -> 0x%llx", what,
			    (unsigned long long)(va_page + offs[i]), (unsigned long long)pa);
			ck_assert_uint_eq(pgsz, page);
		}
	}
	{
		const uint64_t offs[3] = { 0, b2 / 3, b2 - 1 };
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(xlat(&p, va_b2 + offs[i], &pa, &pgsz, &e) == 0, "%s: %s", what,
			    e.msg);
			ck_assert_msg(pa == pa_b2 + offs[i], "%s: L2 block", what);
			ck_assert_uint_eq(pgsz, b2);
		}
	}
	if (va_b1 != 0) {
		ck_assert_msg(xlat(&p, va_b1 + b1 - 8, &pa, &pgsz, &e) == 0, "%s: %s", what,
		    e.msg);
		ck_assert_msg(pa == pa_b1 + b1 - 8, "%s: L1 block", what);
		ck_assert_uint_eq(pgsz, b1);
	}
	/* Neighbours: the next page (same last-level table, invalid entry),
	 * the block's successor, far away (an upper level invalid). */
	ck_assert_int_eq(xlat(&p, va_page + page, &pa, &pgsz, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_msg(strstr(e.msg, "level 3 descriptor not valid") != NULL, "%s: %s",
	    what, e.msg);
	ck_assert_int_eq(xlat(&p, va_b2 + b2, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "level 2 descriptor not valid") != NULL, "%s: %s",
	    what, e.msg);
	ck_assert_int_eq(xlat(&p, kva((1ULL << (vb - 1)) - page), &pa, &pgsz, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	/* A user address and one outside both halves. */
	ck_assert_int_eq(xlat(&p, va_page & ((1ULL << vb) - 1), &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "user-space") != NULL, "%s", e.msg);
	if (vb < 52) {
		ck_assert_int_eq(xlat(&p, va_page ^ (1ULL << 60), &pa, &pgsz, &e), -1);
		ck_assert_msg(strstr(e.msg, "outside the kernel") != NULL, "%s",
		    e.msg);
	}
	/* The same tables read as another granule or VA size give other
	 * answers, not these (the regime matters). */
	if (g == 12) {
		struct kvs_xlat_params q = p;
		q.va_bits = vb == 39 ? 48 : 39;
		if (xlat(&q, va_page, &pa, &pgsz, &e) == 0)
			ck_assert_uint_ne(pa, pa_page);
	}
}

START_TEST(granules_and_va_sizes)
{
	/* 4 KiB: Linux 39 (3 levels) and 48 (4 levels), FreeBSD 48. */
	check_regime(12, 39, 0, 0x40000000ULL, 0x8000000000ULL);
	check_regime(12, 48, 0, 0x40000000ULL, 0x8000000000ULL);
	/* 16 KiB: 36 (2 levels+), 47 (3 levels), 48 (level 0 of one bit). */
	check_regime(14, 36, 0, 0x80000000ULL, 0x10000000000ULL);
	check_regime(14, 47, 0, 0x80000000ULL, 0x10000000000ULL);
	check_regime(14, 48, 0, 0x80000000ULL, 0x10000000000ULL);
	/* 64 KiB: 42 (2 levels), 48 (3 levels). */
	check_regime(16, 42, 0, 0x100000000ULL, 0x20000000000ULL);
	check_regime(16, 48, 0, 0x100000000ULL, 0x20000000000ULL);
}
END_TEST

START_TEST(pa_52_bits)
{
	/* FEAT_LPA: 64 KiB pages, 52-bit VA, tables and outputs above 2^48. */
	check_regime(16, 52, 1, 0x000a000000000000ULL, 0x000c000000000000ULL);
	check_regime(16, 48, 1, 0x0001000000010000ULL, 0x000f000000000000ULL);
	/* FEAT_LPA2: 4 KiB pages, 52-bit VA: five levels (level -1). */
	check_regime(12, 52, 1, 0x0009000000000000ULL, 0x000d000000000000ULL);
	/* FEAT_LPA2: 16 KiB pages, 52-bit VA. */
	check_regime(14, 52, 1, 0x0008000000000000ULL, 0x000e000000000000ULL);
}
END_TEST

START_TEST(direct_map_offset)
{
	struct kvs_error e;
	struct kvs_xlat_params p;
	uint64_t pa, pgsz;

	regime(12, 48, 0, 0x40000000ULL);
	p = params();
	p.direct_base = 0xffff000000000000ULL;
	p.direct_end = 0xffff000100000000ULL;
	p.direct_phys = 0x40000000ULL;          /* PHYS_OFFSET */
	kerr_clear(&e);
	ck_assert_int_eq(xlat(&p, 0xffff000000123456ULL, &pa, &pgsz, &e), 0);
	ck_assert_uint_eq(pa, 0x40123456ULL);
	ck_assert_uint_eq(pgsz, 4096);
	/* past the window: the tables (empty): unmapped */
	ck_assert_int_eq(xlat(&p, 0xffff000100000000ULL, &pa, &pgsz, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
}
END_TEST

/* A FreeBSD minidump's section: one L3 descriptor per 4 KiB from pt_base,
 * built here as the dumping kernel writes it; no tables are read. */
START_TEST(minidump_section)
{
	static const uint64_t base = 0xffff000000000000ULL;
	uint64_t sec[8] = { 0 }, pa, pgsz;
	struct kvs_error e;
	struct kvs_xlat_params p;
	void *priv;

	sec[0] = 0x200000 | 0x400 | 3;          /* AF, page */
	sec[1] = 0x5a3000 | 0x400 | 3;
	sec[2] = 0x5a4000 | 1;                  /* bits 1:0 = 01: reserved at L3 */
	sec[3] = 0x5a5000 | 2;                  /* not valid */
	regime(12, 48, 0, 0x40000000ULL);
	p = params();
	p.have_root = false;
	p.pt = sec;
	p.pt_entries = 8;
	p.pt_level = 1;
	p.pt_base = base;
	p.direct_base = 0xffffa00000000000ULL;
	p.direct_end = 0xffffff0000000000ULL;
	p.direct_phys = 0x40000000ULL;
	kerr_clear(&e);
	ck_assert_int_eq(xlat(&p, base + 0x10, &pa, &pgsz, &e), 0);
	ck_assert_uint_eq(pa, 0x200010);
	ck_assert_uint_eq(pgsz, 4096);
	ck_assert_int_eq(xlat(&p, base + 0x1fff, &pa, &pgsz, &e), 0);
	ck_assert_uint_eq(pa, 0x5a3fff);
	ck_assert_int_eq(xlat(&p, 0xffffa00000001234ULL, &pa, &pgsz, &e), 0);
	ck_assert_uint_eq(pa, 0x40001234ULL);
	ck_assert_int_eq(xlat(&p, base + 0x2000, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "reserved") != NULL, "%s", e.msg);
	ck_assert_int_eq(xlat(&p, base + 0x3000, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "not valid") != NULL, "%s", e.msg);
	ck_assert_int_eq(xlat(&p, base + 0x8000, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "beyond") != NULL, "%s", e.msg);
	ck_assert_int_eq(xlat(&p, base - 0x1000, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "below") != NULL, "%s", e.msg);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	/* 16 KiB pages: the section's 4 KiB entries cannot serve them */
	p.page_shift = 14;
	ck_assert_int_eq(kvs_arch_arm64.create(&priv, &p, &e), 0);
	ck_assert_int_eq(kvs_arch_arm64.kvtop(priv, base, &pa, NULL, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "4 KiB level 3") != NULL, "%s", e.msg);
	kvs_arch_arm64.destroy(priv);
	free(mem);
	mem = NULL;
}
END_TEST

START_TEST(bad_descriptors_and_regimes)
{
	struct kvs_error e;
	struct kvs_xlat_params p;
	uint64_t pa, pgsz, va;
	void *priv;

	kerr_clear(&e);
	regime(12, 48, 0, 0x40000000ULL);
	va = kva(0x5000);
	map(va, 0x9000, 3);
	p = params();
	/* A level-3 descriptor with bits 1:0 = 01: reserved, not a page. */
	{
		uint64_t t = root;
		for (int l = 0; l < 3; l++) {
			uint64_t d = get_desc(t, (va >> lshift(l)) & 511);
			t = d & 0x0000fffffffff000ULL;
		}
		put_desc(t, (va >> 12) & 511, 0x9000 | 1);
	}
	ck_assert_int_eq(xlat(&p, va, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "reserved") != NULL, "%s", e.msg);
	/* A block at level 0 without LPA2. */
	put_desc(root, (va >> 39) & 511, 0x8000000000ULL | 1);
	ck_assert_int_eq(xlat(&p, va, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "level 0") != NULL, "%s", e.msg);
	/* A table pointing outside the dump: the read error, with context. */
	put_desc(root, (va >> 39) & 511, 0x7000000000ULL | 3);
	ck_assert_int_eq(xlat(&p, va, &pa, &pgsz, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "level 1 descriptor") != NULL, "%s", e.msg);
	/* A table pointing at itself: a bounded walk (an answer or an error). */
	put_desc(root, (va >> 39) & 511, root | 3);
	(void)xlat(&p, va, &pa, &pgsz, &e);
	/* No root. */
	p.have_root = false;
	ck_assert_int_eq(xlat(&p, va, &pa, &pgsz, &e), -1);
	ck_assert_msg(strstr(e.msg, "no page tables") != NULL, "%s", e.msg);
	/* Regimes that do not exist. */
	p = params();
	p.page_shift = 13;
	ck_assert_int_eq(kvs_arch_arm64.create(&priv, &p, &e), -1);
	ck_assert_msg(strstr(e.msg, "granule") != NULL, "%s", e.msg);
	p = params();
	p.va_bits = 52;                          /* 4 KiB pages without LPA2 */
	ck_assert_int_eq(kvs_arch_arm64.create(&priv, &p, &e), -1);
	p.va_bits = 30;
	ck_assert_int_eq(kvs_arch_arm64.create(&priv, &p, &e), -1);
	/* Defaults: 4 KiB pages, 48-bit VA. */
	p = params();
	p.page_shift = 0;
	p.va_bits = 0;
	map(kva(0x7000), 0xabc000, 3);
	ck_assert_int_eq(xlat(&p, kva(0x7010), &pa, &pgsz, &e), 0);
	ck_assert_uint_eq(pa, 0xabc010);
	ck_assert(kvs_arch_arm64.canonical(0xffff000000000000ULL));
	ck_assert(kvs_arch_arm64.canonical(0x0000ffffffffffffULL));
	ck_assert(!kvs_arch_arm64.canonical(0x00f0000000000000ULL));
	ck_assert_uint_eq(kvs_arch_arm64.elf_machine, EM_AARCH64);
	free(mem);
	mem = NULL;
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("arm64");
	TCase *tc = tcase_create("arm64");

	tcase_add_test(tc, granules_and_va_sizes);
	tcase_add_test(tc, pa_52_bits);
	tcase_add_test(tc, direct_map_offset);
	tcase_add_test(tc, minidump_section);
	tcase_add_test(tc, bad_descriptors_and_regimes);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
