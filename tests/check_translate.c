/*
 * check_translate.c - amd64 translation on synthetic page tables alone
 * (no files, no DWARF): 4 KiB, 2 MiB and 1 GiB pages, the DMAP shortcut,
 * minidump pmap sections of both levels, every "not valid" level, a
 * non-canonical address, a missing page-table page and a self-referencing
 * PML4.  Plus the minidump rank index over a large random bitmap, and
 * kvs_peek against kvs_read on the fixture dumps.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "kvmprof.h"
#include "kvs_private.h"
#include "testutil.h"

#define MEMSZ (64u << 12)      /* 64 pages of "physical memory" */
static uint8_t phys[MEMSZ];

static int
rd(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	(void)ctx;
	if (pa >= MEMSZ || len > MEMSZ - pa) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not present", (unsigned long long)pa);
		kerr_fault(e, pa);
		return -1;
	}
	memcpy(buf, phys + pa, len);
	return 0;
}

static void
pte(uint64_t table_pa, unsigned idx, uint64_t v)
{
	memcpy(phys + table_pa + idx * 8, &v, 8);
}

#define P(n) ((uint64_t)(n) << 12)
#define V 1ULL
#define PS 0x80ULL

#define AMD64_KERNBASE 0xffffffff80000000ULL
#define AMD64_DMAP_MIN 0xfffff80000000000ULL
#define AMD64_DMAP_MAX 0xfffffc0000000000ULL

/* The parameters under test, and the amd64 ops driven through them: each
 * translation builds the translator from the current parameters, so a test
 * may change them between calls. */
static struct kvs_xlat_params x;
static uint64_t last_pgsz;

static int
amd64_kvtop(const struct kvs_xlat_params *p, uint64_t va, uint64_t *pa, uint64_t *run,
    struct kvs_error *e)
{
	void *priv;
	int rc;

	ck_assert_int_eq(kvs_arch_amd64.create(&priv, p, e), 0);
	rc = kvs_arch_amd64.kvtop(priv, va, pa, run, &last_pgsz, e);
	kvs_arch_amd64.destroy(priv);
	return rc;
}

static uint64_t
amd64_last_pagesize(void)
{
	return last_pgsz;
}

static void
setup(void)
{
	memset(phys, 0, sizeof(phys));
	memset(&x, 0, sizeof(x));
	x.read_phys = rd;
	x.have_root = true;
	x.root_pa = P(1);
	/* 0xffffffff80000000: PML4[511] -> PDPT P(2); PDPT[510] -> PD P(3) */
	pte(P(1), 511, P(2) | V | 2);
	pte(P(2), 510, P(3) | V | 2);
	pte(P(3), 1, 0x200000 | V | PS);                 /* 2 MiB page */
	pte(P(3), 4, P(4) | V);                          /* PT at P(4) */
	pte(P(4), 0, P(40) | V);                         /* 4 KiB pages, scattered */
	pte(P(4), 1, P(17) | V);
	pte(P(3), 5, P(60) | V);                         /* PT page outside memory? no: */
	pte(P(3), 6, (uint64_t)0x7000000 | V);           /* PT page beyond memory */
	/* 1 GiB page: PML4[496] -> PDPT P(5); PDPT[1] = 1 GiB at 0x40000000 */
	pte(P(1), 496, P(5) | V);
	pte(P(5), 1, 0x40000000ULL | V | PS);
	/* Self-reference: PML4[0] -> PML4 itself. */
	pte(P(1), 0, P(1) | V);
}

START_TEST(pages_of_every_size)
{
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80212345ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x212345);
	ck_assert_uint_eq(run, 0x200000 - 0x12345);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80800010ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(40) + 0x10);
	ck_assert_uint_eq(run, 4096 - 0x10);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80801ff8ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(17) + 0xff8);
	ck_assert_uint_eq(run, 8);
	ck_assert_int_eq(amd64_kvtop(&x, 0xfffff80040000000ULL + 0x1234567, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x40000000ULL + 0x1234567);
	ck_assert_uint_eq(run, (1ULL << 30) - 0x1234567);
}
END_TEST

/* Every bit of every level's 9-bit index, from a model of its own: one VA
 * per (level, bit) with that index bit alone set and the other indices
 * fixed, each mapped by a fresh chain of tables to a page of its own.  A
 * walk that drops an index bit (a mask of 255 for 511) or takes a level's
 * index from the wrong shift reads another slot, which is invalid or maps
 * another page.  Also index 511 and 0 at every level. */
#define IDX_PAGES 512u
static uint8_t idx_phys[IDX_PAGES << 12];

static int
idx_rd(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	(void)ctx;
	if (pa >= sizeof(idx_phys) || len > sizeof(idx_phys) - pa) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not present", (unsigned long long)pa);
		return -1;
	}
	memcpy(buf, idx_phys + pa, len);
	return 0;
}

START_TEST(every_index_bit_every_level)
{
	/* The index of each level (PML4, PDP, PD, PT) for a case. */
	unsigned idx[64][4];
	uint64_t va[64], want[64];
	unsigned n = 0, next = 1;             /* page 0: the PML4 */
	struct kvs_xlat_params p;

	memset(idx_phys, 0, sizeof(idx_phys));
	for (unsigned lvl = 0; lvl < 4; lvl++)
		for (int b = -2; b < 9; b++) {
			/* Base indices: kernel half, none with the bit under test. */
			unsigned base[4] = { 300, 5, 6, 7 };
			for (unsigned k = 0; k < 4; k++)
				idx[n][k] = base[k];
			idx[n][lvl] = b == -2 ? 511u : b == -1 ? 0u : 1u << b;
			if (lvl == 0 && idx[n][0] < 256)
				idx[n][0] |= 256;     /* stay in the canonical kernel half */
			n++;
		}
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = 0, table = 0;
		for (unsigned k = 0; k < 4; k++)
			v |= (uint64_t)idx[i][k] << (39 - 9 * k);
		v |= 0x123;
		if (v & (1ULL << 47))
			v |= 0xffff000000000000ULL;
		va[i] = v;
		/* Walk the model's tables, adding what is missing. */
		for (unsigned k = 0; k < 3; k++) {
			uint64_t ent;
			memcpy(&ent, idx_phys + table + idx[i][k] * 8, 8);
			if (!(ent & V)) {
				ck_assert_uint_lt(next, IDX_PAGES);
				ent = P(next++) | V;
				memcpy(idx_phys + table + idx[i][k] * 8, &ent, 8);
			}
			table = ent & ~0xfffULL;
		}
		uint64_t leaf;
		memcpy(&leaf, idx_phys + table + idx[i][3] * 8, 8);
		if (!(leaf & V)) {
			ck_assert_uint_lt(next, IDX_PAGES);
			leaf = P(next++) | V;
			memcpy(idx_phys + table + idx[i][3] * 8, &leaf, 8);
		}
		want[i] = (leaf & ~0xfffULL) | 0x123;
	}
	memset(&p, 0, sizeof(p));
	p.read_phys = idx_rd;
	p.have_root = true;
	p.root_pa = 0;
	for (unsigned i = 0; i < n; i++) {
		struct kvs_error e;
		uint64_t pa = 0;
		kerr_clear(&e);
		ck_assert_msg(amd64_kvtop(&p, va[i], &pa, NULL, &e) == 0, "va 0x%llx: %s",
		    (unsigned long long)va[i], e.msg);
		ck_assert_msg(pa == want[i], "va 0x%llx (indices %u %u %u %u): pa 0x%llx, want 0x%llx",
		    (unsigned long long)va[i], idx[i][0], idx[i][1], idx[i][2], idx[i][3],
		    (unsigned long long)pa, (unsigned long long)want[i]);
	}
	/* A minidump's level-2 pmap: the PT index of every bit, and 0 and
	 * 511, in the PT page its PDE names (PT page k maps PTE j to page
	 * 100 + 16 k + j's bit number). */
	uint64_t pmap2[3] = { 0 };
	memset(idx_phys, 0, sizeof(idx_phys));
	for (unsigned k = 0; k < 3; k++)
		pmap2[k] = P(10 + k) | V;
	p.have_root = false;
	p.pt_base = AMD64_KERNBASE;
	p.pt = pmap2;
	p.pt_entries = 3;
	p.pt_level = 2;
	for (unsigned k = 0; k < 3; k++)
		for (int b = -2; b < 9; b++) {
			unsigned j = b == -2 ? 511u : b == -1 ? 0u : 1u << b;
			uint64_t ent = P(100 + 16 * k + (unsigned)(b + 2)) | V, got = 0;
			memcpy(idx_phys + P(10 + k) + j * 8, &ent, 8);
			struct kvs_error e;
			uint64_t v = AMD64_KERNBASE + ((uint64_t)k << 21) + ((uint64_t)j << 12) + 0x45;
			kerr_clear(&e);
			ck_assert_msg(amd64_kvtop(&p, v, &got, NULL, &e) == 0, "pmap va 0x%llx: %s",
			    (unsigned long long)v, e.msg);
			ck_assert_msg(got == (ent & ~0xfffULL) + 0x45, "pmap va 0x%llx: pa 0x%llx",
			    (unsigned long long)v, (unsigned long long)got);
		}
}
END_TEST

START_TEST(dmap_shortcut)
{
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	x.direct_base = AMD64_DMAP_MIN;
	x.direct_end = AMD64_DMAP_MAX;
	kerr_clear(&e);
	/* Not mapped by the tables at all: the shortcut answers alone. */
	ck_assert_int_eq(amd64_kvtop(&x, AMD64_DMAP_MIN + 0x123456789ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x123456789ULL);
	ck_assert_uint_eq(run, 4096 - 0x789);
}
END_TEST

START_TEST(not_valid_at_each_level)
{
	static const struct { uint64_t va; const char *why; } cases[] = {
		{ 0xffff808000000000ULL, "PML4 entry not valid" },
		{ 0xffffffff00000000ULL, "PDP entry not valid" },
		{ 0xffffffff80400000ULL, "PD entry not valid" },
		{ 0xffffffff80802000ULL, "PT entry not valid" },
		{ 0x0000800000000000ULL, "non-canonical" },
	};
	struct kvs_error e;
	uint64_t pa;
	size_t i;

	setup();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kerr_clear(&e);
		ck_assert_int_eq(amd64_kvtop(&x, cases[i].va, &pa, NULL, &e), -1);
		ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
		ck_assert_msg(strstr(e.msg, cases[i].why) != NULL, "%s", e.msg);
		ck_assert(e.fault_valid);
		ck_assert_uint_eq(e.fault_addr, cases[i].va);
	}
}
END_TEST

START_TEST(missing_pt_page_and_loop)
{
	struct kvs_error e;
	uint64_t pa;

	setup();
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80c00000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "reading PT entry") != NULL, "%s", e.msg);
	/* PML4[0] points at the PML4: four bounded steps, no hang. */
	kerr_clear(&e);
	(void)amd64_kvtop(&x, 0x0000000000001000ULL, &pa, NULL, &e);
	kerr_clear(&e);
	(void)amd64_kvtop(&x, 0x0000000000000000ULL, &pa, NULL, &e);
}
END_TEST

START_TEST(minidump_pmap_levels)
{
	uint64_t pmap2[8] = { 0 }, pmap1[16] = { 0 };
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	x.have_root = false;
	x.pt_base = AMD64_KERNBASE;
	/* level 2: PDE per 2 MiB */
	pmap2[1] = 0x200000 | V | PS;
	pmap2[4] = P(4) | V;
	x.pt = pmap2;
	x.pt_entries = 8;
	x.pt_level = 2;
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80200010ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x200010);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80801000ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(17));
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff81000000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff7fffffffULL, &pa, NULL, &e), -1);
	/* level 1: PTE per 4 KiB */
	pmap1[3] = P(33) | V;
	x.pt = pmap1;
	x.pt_entries = 16;
	x.pt_level = 1;
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80003abcULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(33) + 0xabc);
	ck_assert_uint_eq(run, 4096 - 0xabc);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80004000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80010000ULL, &pa, NULL, &e), -1);
}
END_TEST

/* Runs end exactly at page ends; the page size is reported for caching. */
START_TEST(runs_at_page_ends)
{
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff803fffffULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x3fffff);
	ck_assert_uint_eq(run, 1);
	ck_assert_uint_eq(amd64_last_pagesize(), 1ULL << 21);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80200000ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(run, 1ULL << 21);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80800fffULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(40) + 0xfff);
	ck_assert_uint_eq(run, 1);
	ck_assert_uint_eq(amd64_last_pagesize(), 4096);
	ck_assert_int_eq(amd64_kvtop(&x, 0xfffff8007fffffffULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x7fffffffULL);
	ck_assert_uint_eq(run, 1);
	ck_assert_uint_eq(amd64_last_pagesize(), 1ULL << 30);
	ck_assert_int_eq(amd64_kvtop(&x, 0xfffff80040000000ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(run, 1ULL << 30);
	/* DMAP: the last byte inside, and dmap_end itself is not DMAP. */
	x.direct_base = AMD64_DMAP_MIN;
	x.direct_end = AMD64_DMAP_MIN + 0x100000;
	ck_assert_int_eq(amd64_kvtop(&x, AMD64_DMAP_MIN + 0xfffff, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0xfffff);
	ck_assert_uint_eq(run, 1);
	ck_assert_int_eq(amd64_kvtop(&x, AMD64_DMAP_MIN + 0x100000, &pa, &run, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);   /* walked: PDP entry not valid */
	ck_assert_msg(strstr(e.msg, "PDP") != NULL, "%s", e.msg);
}
END_TEST

/* Both non-canonical edges, and a table page missing at each level. */
START_TEST(edges_and_missing_tables)
{
	struct kvs_error e;
	uint64_t pa;

	setup();
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffff7fffffffffffULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_ptr_nonnull(strstr(e.msg, "non-canonical"));
	ck_assert_ptr_nonnull(strstr(e.msg, "0xffff7fffffffffff"));
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0x00007fffffffffffULL, &pa, NULL, &e), -1);
	ck_assert_ptr_null(strstr(e.msg, "non-canonical"));   /* canonical, just unmapped */
	/* The PML4 itself missing. */
	x.root_pa = 0x9000000;
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80200000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "reading PML4 entry at physical 0x9000ff8") != NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "va 0xffffffff80200000") != NULL, "%s", e.msg);
	ck_assert(e.fault_valid);
	ck_assert_uint_eq(e.fault_addr, 0x9000ff8);  /* the table entry that was missing */
	/* A PDP page and a PD page beyond memory. */
	x.root_pa = P(1);
	pte(P(1), 300, 0x8000000 | V);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffff960000000000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "reading PDP entry at physical 0x8000000") != NULL, "%s", e.msg);
	pte(P(2), 0, 0xa000000 | V);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffff8000000000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "reading PD entry at physical 0xa000000") != NULL, "%s", e.msg);
	/* PT page beyond memory: the chain names the level, the entry and the
	 * source's own reason. */
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80c01000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "reading PT entry at physical 0x7000008") != NULL, "%s", e.msg);
	ck_assert_msg(strstr(e.msg, "not present") != NULL, "%s", e.msg);
}
END_TEST

/* PML4[0] points at the PML4 itself: VA 0 walks the same page four times
 * and lands on it; nothing hangs, nothing reads out of bounds. */
START_TEST(self_referencing_pml4)
{
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0x123, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(1) + 0x123);
	ck_assert_uint_eq(run, 4096 - 0x123);
	/* With PS set on the looping entry it is a 1 GiB page at 0. */
	pte(P(1), 0, P(1) | V | PS);
	ck_assert_int_eq(amd64_kvtop(&x, 0x1000, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x1000);           /* P(1) masked to 1 GiB */
	ck_assert_uint_eq(amd64_last_pagesize(), 1ULL << 30);
	/* Every PML4 slot pointing at the PML4: any canonical VA resolves or
	 * fails, bounded. */
	for (unsigned i = 0; i < 512; i++)
		pte(P(1), i, P(1) | V);
	for (uint64_t va = 0; va < 0x10000000000ULL; va += 0x7654321000ULL) {
		kerr_clear(&e);
		(void)amd64_kvtop(&x, va, &pa, NULL, &e);
		(void)amd64_kvtop(&x, va | 0xffff800000000000ULL, &pa, NULL, &e);
	}
}
END_TEST

/* Minidump pmap mode: every failure names its level. */
START_TEST(minidump_pmap_errors)
{
	uint64_t pmap2[8] = { 0 }, pmap1[4] = { 0 };
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	x.have_root = false;
	x.pt_base = AMD64_KERNBASE;
	pmap2[0] = 0x400000 | V | PS;
	pmap2[2] = P(4) | V;                        /* PT at P(4): entries 0, 1 valid */
	pmap2[3] = 0x6000000 | V;                   /* PT page not in memory */
	x.pt = pmap2;
	x.pt_entries = 8;
	x.pt_level = 2;
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff801fffffULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, 0x5fffff);
	ck_assert_uint_eq(run, 1);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80401ff0ULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(17) + 0xff0);
	ck_assert_uint_eq(run, 16);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80200000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_msg(strstr(e.msg, "va 0xffffffff80200000: PDE not valid") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80402000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_msg(strstr(e.msg, "PTE not valid") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80600000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_msg(strstr(e.msg, "reading PT entry at physical 0x6000000") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff81000000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "beyond") != NULL, "%s", e.msg);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffff800000000000ULL, &pa, NULL, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_UNMAPPED);
	ck_assert_msg(strstr(e.msg, "kernbase") != NULL, "%s", e.msg);
	/* The DMAP shortcut still answers below kernbase. */
	x.direct_base = AMD64_DMAP_MIN;
	x.direct_end = AMD64_DMAP_MAX;
	ck_assert_int_eq(amd64_kvtop(&x, AMD64_DMAP_MIN + 0x5000, &pa, NULL, &e), 0);
	ck_assert_uint_eq(pa, 0x5000);
	/* level 1 */
	pmap1[1] = P(9) | V;
	x.pt = pmap1;
	x.pt_entries = 4;
	x.pt_level = 1;
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80002000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "PTE not valid") != NULL, "%s", e.msg);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80001fffULL, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(9) + 0xfff);
	ck_assert_uint_eq(run, 1);
	kerr_clear(&e);
	ck_assert_int_eq(amd64_kvtop(&x, 0xffffffff80004000ULL, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "beyond") != NULL, "%s", e.msg);
}
END_TEST

/*
 * Entry bits that are not address bits.  Every entry below carries NX
 * (bit 63), the software/protection-key bits 52-62 and the A/D/G/PWT/PCD/US
 * flags; the large leaves also carry PAT (bit 12, inside their address
 * field's alignment); the leaves point at physical addresses using bits
 * 48-51.  A translation must drop every flag and keep every address bit, at
 * each level and page size, in the four-level walk and in a minidump's pmap.
 */
#define NX (1ULL << 63)
#define HIGH_FLAGS (0x7ffULL << 52)           /* bits 52-62 */
#define LOW_FLAGS 0x17eULL                    /* RW US PWT PCD A D G (not PS) */
#define PAT_LARGE 0x1000ULL
#define FLAGS (NX | HIGH_FLAGS | LOW_FLAGS)

START_TEST(flag_bits_are_not_address_bits)
{
	const uint64_t base = 0xffffc80000000000ULL;        /* PML4[400] */
	const uint64_t pa4k = 0x000fedcba9876000ULL;
	const uint64_t pa2m = 0x000abcdef0200000ULL;
	const uint64_t pa1g = 0x000b000040000000ULL;
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	pte(P(1), 400, P(6) | V | FLAGS);
	pte(P(6), 0, P(7) | V | FLAGS);                     /* PDP -> PD */
	pte(P(6), 1, pa1g | V | PS | PAT_LARGE | FLAGS);    /* 1 GiB leaf */
	pte(P(7), 0, P(8) | V | FLAGS);                     /* PD -> PT */
	pte(P(7), 1, pa2m | V | PS | PAT_LARGE | FLAGS);    /* 2 MiB leaf */
	pte(P(8), 0, pa4k | V | PS | FLAGS);                /* 4 KiB leaf; bit 7 is PAT here */
	pte(P(8), 1, P(9) | V | FLAGS);
	kerr_clear(&e);
	/* 4 KiB: the leaf's bit 7 (PAT) and flags dropped, bits 48-51 kept. */
	ck_assert_msg(amd64_kvtop(&x, base + 0x123, &pa, &run, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(pa, pa4k + 0x123);
	ck_assert_uint_eq(run, 4096 - 0x123);
	ck_assert_uint_eq(amd64_last_pagesize(), 4096);
	ck_assert_int_eq(amd64_kvtop(&x, base + 0x1fff, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, P(9) + 0xfff);
	/* 2 MiB: PAT (bit 12) is not an address bit; the offset's bit 12 is
	 * clear and bit 13 set, so either mistake shows. */
	ck_assert_msg(amd64_kvtop(&x, base + (1ULL << 21) + 0xa345, &pa, &run, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(pa, pa2m + 0xa345);
	ck_assert_uint_eq(run, (1ULL << 21) - 0xa345);
	ck_assert_uint_eq(amd64_last_pagesize(), 1ULL << 21);
	ck_assert_int_eq(amd64_kvtop(&x, base + (1ULL << 21) + 0x1fffff, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, pa2m + 0x1fffff);
	/* 1 GiB likewise. */
	ck_assert_msg(amd64_kvtop(&x, base + (1ULL << 30) + 0x2344678, &pa, &run, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(pa, pa1g + 0x2344678);
	ck_assert_uint_eq(run, (1ULL << 30) - 0x2344678);
	ck_assert_uint_eq(amd64_last_pagesize(), 1ULL << 30);
	ck_assert_int_eq(amd64_kvtop(&x, base + (2ULL << 30) - 1, &pa, &run, &e), 0);
	ck_assert_uint_eq(pa, pa1g + (1ULL << 30) - 1);
	/* Flags without V are still not valid. */
	pte(P(8), 2, pa4k | FLAGS);
	ck_assert_int_eq(amd64_kvtop(&x, base + 0x2000, &pa, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "PT entry not valid") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(flag_bits_in_minidump_pmap)
{
	uint64_t pmap2[4] = { 0 }, pmap1[2] = { 0 };
	struct kvs_error e;
	uint64_t pa, run;

	setup();
	x.have_root = false;
	x.pt_base = AMD64_KERNBASE;
	pmap2[0] = 0x000abcdef0200000ULL | V | PS | PAT_LARGE | FLAGS;
	pmap2[1] = P(8) | V | FLAGS;
	pte(P(8), 3, 0x000fedcba9876000ULL | V | FLAGS);
	x.pt = pmap2;
	x.pt_entries = 4;
	x.pt_level = 2;
	kerr_clear(&e);
	ck_assert_msg(amd64_kvtop(&x, AMD64_KERNBASE + 0xa345, &pa, &run, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(pa, 0x000abcdef0200000ULL + 0xa345);
	ck_assert_uint_eq(run, (1ULL << 21) - 0xa345);
	ck_assert_msg(amd64_kvtop(&x, AMD64_KERNBASE + (1ULL << 21) + 0x3456, &pa, &run, &e) == 0,
	    "%s", e.msg);
	ck_assert_uint_eq(pa, 0x000fedcba9876000ULL + 0x456);
	ck_assert_uint_eq(run, 4096 - 0x456);
	pmap1[1] = 0x000fedcba9876000ULL | V | FLAGS;
	x.pt = pmap1;
	x.pt_entries = 2;
	x.pt_level = 1;
	ck_assert_msg(amd64_kvtop(&x, AMD64_KERNBASE + 0x1abc, &pa, &run, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(pa, 0x000fedcba9876000ULL + 0xabc);
}
END_TEST

/*
 * The minidump rank index: a v2 minidump with a random 64 Ki-page bitmap
 * (about a third set); each dumped page holds its own PA, so every lookup's
 * answer is checkable, and every clear bit must say "not in dump".
 */
START_TEST(minidump_rank_index)
{
	enum { NPAGES = 65536 };
	const char *path = path_join(test_tmpdir(), "rank.mdmp");
	static uint64_t bitmap[NPAGES / 64];
	uint8_t page[4096];
	uint64_t s = 12345, i, ndumped = 0;
	FILE *f = fopen(path, "wb");
	struct kvs_open_args a = { .path = path };
	struct kvs_error e;
	struct stat st;
	void *priv, *map;
	int fd;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < NPAGES; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		if ((s >> 33) % 3 == 0) {
			bitmap[i / 64] |= 1ULL << (i % 64);
			ndumped++;
		}
	}
	memset(page, 0, sizeof(page));
	memcpy(page, "minidump FreeBSD/amd64", 22);
	uint32_t v = 2, msgsz = 0, bmsz = sizeof(bitmap), pmsz = 4096;
	uint64_t kb = AMD64_KERNBASE, db = AMD64_DMAP_MIN, de = AMD64_DMAP_MAX;
	memcpy(page + 24, &v, 4);
	memcpy(page + 28, &msgsz, 4);
	memcpy(page + 32, &bmsz, 4);
	memcpy(page + 36, &pmsz, 4);
	memcpy(page + 40, &kb, 8);
	memcpy(page + 48, &db, 8);
	memcpy(page + 56, &de, 8);
	fwrite(page, 1, 4096, f);
	fwrite(bitmap, 1, sizeof(bitmap), f);
	memset(page, 0, sizeof(page));
	fwrite(page, 1, 4096, f);                /* empty pmap */
	for (i = 0; i < NPAGES; i++) {
		if (!(bitmap[i / 64] >> (i % 64) & 1))
			continue;
		uint64_t pa = i * 4096;
		memcpy(page, &pa, 8);
		fwrite(page, 1, 4096, f);
	}
	fclose(f);

	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fstat(fd, &st);
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	a.fd = fd;
	a.st = &st;
	a.map = map;
	a.map_len = st.st_size;
	kerr_clear(&e);
	ck_assert_int_eq(kvs_source_minidump.open(&a, &priv, &e), 0);
	ck_assert_uint_eq(kvs_source_minidump.dumped_pages(priv), ndumped);
	/* Walk from the top down so the lazy index is extended out of order. */
	for (i = NPAGES; i-- > 0;) {
		uint64_t got = 0;
		int rc = kvs_source_minidump.read_phys(priv, i * 4096, &got, 8, &e);
		if (bitmap[i / 64] >> (i % 64) & 1) {
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(got, i * 4096);
		} else {
			ck_assert_int_eq(rc, -1);
			ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
			kerr_clear(&e);
		}
	}
	kvs_source_minidump.close(priv);
	/* Other probes say "not mine" to a minidump. */
	ck_assert_int_eq(kvs_source_elfdump.open(&a, &priv, &e), KVS_NOTMINE);
	munmap(map, st.st_size);
	close(fd);
}
END_TEST

/*
 * The other fixed-point translation: sbintime (1 s = 2^32) to nanoseconds,
 * as the DTrace walker decodes profile intervals and fire times.  The
 * fixture's values all have fractions below half a second, so two profile
 * probes are given exact ones in a copy of the raw image: 0.5 s and 1.75 s
 * intervals, a fire time of 1234.75 s.  Every fraction bit counts.
 */
static uint64_t
probe_field(kvs_t *kd, uint32_t id, const char *member)
{
	struct kvs_typeinfo ti, tid;
	uint64_t probes, nsym, pr = 0, arg = 0, pa, i;
	uint32_t n = 0, pid;

	/* dtrace_probes[] has holes: find the probe whose dtpr_id is id. */
	ck_assert_int_eq(kvs_symbol(kd, "dtrace_probes", &probes, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, probes, &probes, 8), 0);
	ck_assert_int_eq(kvs_symbol(kd, "dtrace_nprobes", &nsym, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, nsym, &n, 4), 0);
	ck_assert_int_eq(kvs_member(kd, "dtrace_probe_t", "dtpr_id", &tid), 0);
	ck_assert_uint_eq(tid.size, 4);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(kvs_read(kd, probes + 8 * i, &pr, 8), 0);
		if (pr == 0)
			continue;
		ck_assert_int_eq(kvs_read(kd, pr + tid.offset, &pid, 4), 0);
		if (pid == id)
			break;
	}
	ck_assert_msg(i < n, "no probe %u", id);
	ck_assert_int_eq(kvs_member(kd, "dtrace_probe_t", "dtpr_arg", &ti), 0);
	ck_assert_int_eq(kvs_read(kd, pr + ti.offset, &arg, 8), 0);
	ck_assert_int_eq(kvs_member(kd, "profile_probe_t", member, &ti), 0);
	ck_assert_uint_eq(ti.size, 8);
	ck_assert_msg(kvs_kvtop(kd, arg + ti.offset, &pa) == 0, "%s", kvs_geterr(kd));
	return pa;
}

static kvs_t *
open_raw_with_profile(const char *image)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), image, KVS_O_RAW, err);

	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/dtrace.ko")), 1);
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/profile.ko")), 1);
	return kd;
}

/* kvs_peek on every mapped kind of dump, against the generator's bytes
 * (its reads, and the physical image at its translations) and against
 * kvs_read: the bytes it points at are the right ones, from a page it
 * remembers too (the second peek of each), across page ends (where the
 * next page lies elsewhere), and an absurd length is refused, never
 * wrapped. */
START_TEST(peek_agrees_with_read)
{
	static const char *const dumps[] = { "fbsd14/mem.raw", "fbsd14/vmcore.minidump3",
	    "fbsd14/vmcore.elf" };
	static const size_t lens[] = { 0, 1, 8, 64, 4096, 8192 };
	static uint8_t buf[8192];
	size_t d, i, l, r, hits = 0, truth_hits = 0, imglen;
	json_t *t = load_truth("fbsd14/truth.json"), *e;
	/* the physical image, read as a file: the generator wrote it */
	uint8_t *img = (uint8_t *)read_file(fixture_path("fbsd14/mem.raw"), &imglen);

	ck_assert_ptr_nonnull(img);
	for (d = 0; d < sizeof(dumps) / sizeof(dumps[0]); d++) {
		char err[KVS_ERRBUF_SIZE];
		kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path(dumps[d]), 0, err);
		uint64_t head, p, va[6];
		ck_assert_msg(kd != NULL, "%s", err);
		ck_assert_int_eq(kvs_symbol(kd, "kmemstatistics", &head, NULL), 0);
		ck_assert_int_eq(kvs_read(kd, head, &p, sizeof(p)), 0);
		va[0] = head;
		va[1] = p;
		va[2] = (p | 4095) - 7;         /* the last 8 bytes of p's page */
		va[3] = (p | 4095) - 3;         /* 4 bytes in it, the rest beyond */
		va[4] = (p | 4095) + 1;         /* the next page */
		va[5] = (head | 4095) - 63;
		size_t truth_before = truth_hits;
		/* The generator's own bytes, not the library's: its page-crossing
		 * reads (va and bytes), and, at its sample translations, the
		 * physical image's bytes at the PA it put there. */
		json_array_foreach(json_object_get(t, "reads"), i, e) {
			size_t n = jget(e, "len"), j;
			const char *hex = json_string_value(json_object_get(e, "hex"));
			uint8_t want[256];
			ck_assert(n <= sizeof(want) && hex != NULL && strlen(hex) == 2 * n);
			for (j = 0; j < n; j++) {
				char h[3] = { hex[2 * j], hex[2 * j + 1], 0 };
				want[j] = (uint8_t)strtoul(h, NULL, 16);
			}
			/* Read, twice: the second through the translation cache,
			 * whose run must end at the page's end. */
			for (r = 0; r < 2; r++) {
				uint8_t got[256];
				ck_assert_msg(kvs_read(kd, jget(e, "va"), got, n) == 0, "%s: %s", dumps[d],
				    kvs_geterr(kd));
				ck_assert_msg(memcmp(got, want, n) == 0, "%s: read %zu of %zu bytes at "
				    "0x%llx differs from the generator's", dumps[d], r + 1, n,
				    (unsigned long long)jget(e, "va"));
			}
			for (r = 0; r < 2; r++) {
				const uint8_t *q = kvs_peek(kd, jget(e, "va"), n);
				if (q == NULL)
					continue;
				truth_hits++;
				ck_assert_msg(memcmp(q, want, n) == 0, "%s: peek of %zu bytes at "
				    "0x%llx differs from the generator's", dumps[d], n,
				    (unsigned long long)jget(e, "va"));
			}
		}
		json_array_foreach(json_object_get(t, "translations"), i, e) {
			uint64_t pa = jget(e, "pa");
			ck_assert(pa + 8 <= imglen);
			for (r = 0; r < 2; r++) {
				const uint8_t *q = kvs_peek(kd, jget(e, "va"), 8);
				if (q == NULL)
					continue;
				truth_hits++;
				ck_assert_msg(memcmp(q, img + pa, 8) == 0, "%s: peek at 0x%llx "
				    "differs from the image at PA 0x%llx", dumps[d],
				    (unsigned long long)jget(e, "va"), (unsigned long long)pa);
			}
		}
		/* Its peeks inside one page (a read and three translations) all
		 * succeed, twice, on every dump. */
		ck_assert_msg(truth_hits - truth_before >= 4 * 2, "%s: only %zu of the "
		    "generator's peeks succeeded", dumps[d], truth_hits - truth_before);
		for (i = 0; i < 6; i++) {
			for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				for (r = 0; r < 2; r++) {
					const uint8_t *q = kvs_peek(kd, va[i], lens[l]);
					if (q == NULL)
						continue;
					hits++;
					ck_assert_msg(kvs_read(kd, va[i], buf, lens[l]) == 0, "%s: %s",
					    dumps[d], kvs_geterr(kd));
					ck_assert_msg(memcmp(q, buf, lens[l]) == 0,
					    "%s: peek of %zu bytes at 0x%llx differs from a read",
					    dumps[d], lens[l], (unsigned long long)va[i]);
				}
			}
			ck_assert_ptr_null(kvs_peek(kd, va[i], SIZE_MAX));
			ck_assert_ptr_null(kvs_peek(kd, va[i], SIZE_MAX - 4000));
		}
		kvs_close(kd);
	}
	/* Peeks that cannot succeed anywhere would pass the loop above. */
	ck_assert_uint_ge(hits, 3 * 6 * 4);
	ck_assert_uint_ge(truth_hits, 3 * 4 * 2);
	free(img);
	json_decref(t);
}
END_TEST

/* A live image whose page tables change between walks: after
 * kvs_tlb_flush (each refresh's first step) a read must follow the new
 * mapping, never the cached one.  The generator's 4 KiB translation of
 * 0xffffffff80803123 is moved, in a copy of the RAM file, to the image's
 * last page (all zeros: unused), marked, by rewriting every valid entry
 * that names its page. */
START_TEST(tlb_flush_drops_translations)
{
	json_t *t = load_truth("fbsd14/truth.json"), *e;
	const char *copy = path_join(test_tmpdir(), "tlb.raw");
	size_t len, i, rewritten = 0;
	uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	uint64_t va = 0, pa = 0, got = 0, want;
	char err[KVS_ERRBUF_SIZE];

	ck_assert_ptr_nonnull(img);
	json_array_foreach(json_object_get(t, "translations"), i, e)
		if (strcmp(json_string_value(json_object_get(e, "kind")), "4k") == 0) {
			va = jget(e, "va");
			pa = jget(e, "pa");
		}
	ck_assert_uint_ne(va, 0);
	ck_assert_uint_le(pa + 4096 + 8, len);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW | KVS_O_NO_CACHE, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_read(kd, va, &got, 8), 0);
	memcpy(&want, img + pa, 8);
	ck_assert_uint_eq(got, want);
	/* Every valid entry naming the page now names the next one. */
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, img + i, 8);
		if ((v & 1) && (v & 0x000ffffffffff000ULL) == (pa & ~0xfffULL) && v >> 52 == 0 &&
		    (v & 0xfe0) == (v & 0x060)) {
			v = (v & ~0x000ffffffffff000ULL) | ((len & ~(size_t)4095) - 4096);
			memcpy(img + i, &v, 8);
			rewritten++;
		}
	}
	ck_assert_uint_ge(rewritten, 1);
	uint64_t last = (len & ~(size_t)4095) - 4096;
	for (i = 0; i < 4096; i++)
		ck_assert_uint_eq(img[last + i], 0);
	want = 0x1122334455667788ULL;
	memcpy(img + last + (pa & 4095), &want, 8);
	ck_assert_uint_ne(got, want);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	/* A fresh handle sees the new mapping: the rewrite took. */
	kvs_t *fresh = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW | KVS_O_NO_CACHE, err);
	ck_assert_msg(fresh != NULL, "%s", err);
	ck_assert_int_eq(kvs_read(fresh, va, &got, 8), 0);
	ck_assert_uint_eq(got, want);
	kvs_close(fresh);
	/* The old handle, after the flush a refresh starts with, too. */
	kvs_tlb_flush(kd);
	ck_assert_int_eq(kvs_read(kd, va, &got, 8), 0);
	ck_assert_msg(got == want, "a translation cached before kvs_tlb_flush was used after it");
	const uint8_t *q = kvs_peek(kd, va, 8);
	if (q != NULL)
		ck_assert_int_eq(memcmp(q, &want, 8), 0);
	kvs_close(kd);
	free(img);
	json_decref(t);
}
END_TEST

START_TEST(sbintime_fraction_bits)
{
	json_t *t = load_truth("fbsd14/truth.json"), *pt;
	const char *copy = path_join(test_tmpdir(), "sbt.raw");
	uint32_t prof_id = 0, tick_id = 0;
	uint64_t pa_prof, pa_tick, pa_exp;
	uint64_t half = 0x80000000ULL, one75 = 0x1c0000000ULL, at = (1234ULL << 32) | 0xc0000000ULL;
	kvmprof_probes_t *p;
	size_t i, len;
	uint8_t *img;
	kvs_t *kd;

	/* A disabled profile-N probe and an enabled tick-N probe. */
	json_array_foreach(json_object_get(json_object_get(t, "dtrace"), "probes"), i, pt) {
		const char *kind = json_string_value(json_object_get(pt, "kind"));
		int on = json_is_true(json_object_get(pt, "enabled"));
		if (kind != NULL && strcmp(kind, "profile") == 0 && !on && prof_id == 0)
			prof_id = (uint32_t)jget(pt, "id");
		if (kind != NULL && strcmp(kind, "tick") == 0 && on && tick_id == 0)
			tick_id = (uint32_t)jget(pt, "id");
	}
	ck_assert(prof_id != 0 && tick_id != 0);
	kd = open_raw_with_profile(fixture_path("fbsd14/mem.raw"));
	pa_prof = probe_field(kd, prof_id, "prof_interval");
	pa_tick = probe_field(kd, tick_id, "prof_interval");
	pa_exp = probe_field(kd, tick_id, "prof_expected");
	kvs_close(kd);

	img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert(pa_prof + 8 <= len && pa_tick + 8 <= len && pa_exp + 8 <= len);
	memcpy(img + pa_prof, &half, 8);
	memcpy(img + pa_tick, &one75, 8);
	memcpy(img + pa_exp, &at, 8);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	free(img);

	kd = open_raw_with_profile(copy);
	p = kvmprof_probes_read(kd, 1);
	ck_assert_msg(p != NULL, "%s", kvs_geterr(kd));
	for (i = 0; i < kvmprof_probes_count(p); i++) {
		const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
		if (pr->id == prof_id) {
			ck_assert_uint_eq(pr->interval_sbt, half);
			ck_assert_uint_eq(pr->interval_ns, 500000000);
			ck_assert(pr->hz == 2.0);
			prof_id = 0;
		} else if (pr->id == tick_id) {
			ck_assert_uint_eq(pr->interval_ns, 1750000000);
			ck_assert_uint_eq(pr->next_fire_ns, 1234750000000ULL);
			tick_id = 0;
		}
	}
	ck_assert_msg(prof_id == 0 && tick_id == 0, "patched probes not listed");
	kvmprof_probes_free(p);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("translate");
	TCase *tc = tcase_create("amd64");

	tcase_add_test(tc, pages_of_every_size);
	tcase_add_test(tc, every_index_bit_every_level);
	tcase_add_test(tc, tlb_flush_drops_translations);
	tcase_add_test(tc, peek_agrees_with_read);
	tcase_add_test(tc, dmap_shortcut);
	tcase_add_test(tc, not_valid_at_each_level);
	tcase_add_test(tc, missing_pt_page_and_loop);
	tcase_add_test(tc, minidump_pmap_levels);
	tcase_add_test(tc, runs_at_page_ends);
	tcase_add_test(tc, edges_and_missing_tables);
	tcase_add_test(tc, self_referencing_pml4);
	tcase_add_test(tc, minidump_pmap_errors);
	tcase_add_test(tc, flag_bits_are_not_address_bits);
	tcase_add_test(tc, flag_bits_in_minidump_pmap);
	tcase_add_test(tc, minidump_rank_index);
	tcase_add_test(tc, sbintime_fraction_bits);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
