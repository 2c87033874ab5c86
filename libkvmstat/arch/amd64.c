/*
 * amd64.c - kernel virtual to physical translation on amd64.
 *
 * Translation knows neither files nor DWARF: it is handed a physical-read
 * callback and either the PML4's physical address (full dumps, raw images,
 * live memory) or a minidump's page-table section, plus the direct-map
 * window (struct kvs_xlat_params).  That keeps it testable on synthetic page
 * tables alone, and lets one walk serve every source: the OS layer finds the
 * page-table root in its kernel and hands over the number, the minidump
 * source hands over its pmap section, and neither side learns how the other
 * works.
 *
 * Order: the DMAP window is pure arithmetic, so it is tried first; a
 * minidump's pmap covers only KVA from its kernbase; otherwise the four-level
 * walk, with 1 GiB (PDP PS) and 2 MiB (PD PS) leaves.  Failures say which
 * level stopped the walk; a missing table page keeps the source's message
 * and fault address (the entry's physical address) under our context.
 *
 * A 4-level walk reads at most four entries, so a page-table loop can only
 * produce a wrong answer, never a hang; every entry read is bounds-checked by
 * the source it comes from.
 */
#include <elf.h>
#include <endian.h>
#include <stdlib.h>

#include "arch.h"

#define PG_V  0x001ULL
#define PG_PS 0x080ULL
#define ADDR_4K 0x000ffffffffff000ULL
#define ADDR_2M 0x000fffffffe00000ULL
#define ADDR_1G 0x000fffffc0000000ULL

#define SZ_4K (1ULL << 12)
#define SZ_2M (1ULL << 21)
#define SZ_1G (1ULL << 30)

/* The translation state: the parameters as given. */
struct amd64_xlat {
	struct kvs_xlat_params p;
};

static int
read_entry(const struct amd64_xlat *x, uint64_t table_pa, unsigned idx,
    const char *level, uint64_t va, uint64_t *ent, struct kvs_error *e)
{
	uint64_t v;

	if (x->p.read_phys(x->p.ctx, table_pa + idx * 8ULL, &v, sizeof(v), e) != 0)
		return kerr_push(e, "va 0x%llx: reading %s entry at physical 0x%llx",
		    (unsigned long long)va, level,
		    (unsigned long long)(table_pa + idx * 8ULL));
	*ent = le64toh(v);
	return 0;
}

static int
unmapped(uint64_t va, const char *why, struct kvs_error *e)
{
	kerr_set(e, KVS_E_UNMAPPED, "va 0x%llx: %s", (unsigned long long)va, why);
	kerr_fault(e, va);
	return -1;
}

/* Where a translation ends: the page and its size. */
struct xout {
	uint64_t *pa, *run, *pgsz;
};

static void
done(uint64_t va, uint64_t pa, uint64_t pgsz, const struct xout *o)
{
	*o->pa = pa;
	if (o->pgsz != NULL)
		*o->pgsz = pgsz;
	if (o->run != NULL)
		*o->run = pgsz - (va & (pgsz - 1));
}

static bool
amd64_canonical(uint64_t va)
{
	/* Bits 63..47 must all equal bit 47. */
	return (uint64_t)((int64_t)(va << 16) >> 16) == va;
}

static int
walk_pml4(const struct amd64_xlat *x, uint64_t va, const struct xout *o,
    struct kvs_error *e)
{
	uint64_t ent = 0;

	if (!amd64_canonical(va))
		return unmapped(va, "non-canonical address", e);
	if (read_entry(x, x->p.root_pa, (va >> 39) & 511, "PML4", va, &ent, e) != 0)
		return -1;
	if (!(ent & PG_V))
		return unmapped(va, "PML4 entry not valid", e);
	if (read_entry(x, ent & ADDR_4K, (va >> 30) & 511, "PDP", va, &ent, e) != 0)
		return -1;
	if (!(ent & PG_V))
		return unmapped(va, "PDP entry not valid", e);
	if (ent & PG_PS) {
		done(va, (ent & ADDR_1G) | (va & (SZ_1G - 1)), SZ_1G, o);
		return 0;
	}
	if (read_entry(x, ent & ADDR_4K, (va >> 21) & 511, "PD", va, &ent, e) != 0)
		return -1;
	if (!(ent & PG_V))
		return unmapped(va, "PD entry not valid", e);
	if (ent & PG_PS) {
		done(va, (ent & ADDR_2M) | (va & (SZ_2M - 1)), SZ_2M, o);
		return 0;
	}
	if (read_entry(x, ent & ADDR_4K, (va >> 12) & 511, "PT", va, &ent, e) != 0)
		return -1;
	if (!(ent & PG_V))
		return unmapped(va, "PT entry not valid", e);
	done(va, (ent & ADDR_4K) | (va & (SZ_4K - 1)), SZ_4K, o);
	return 0;
}

/* The minidump's pmap section: PDEs per 2 MiB (v2/v3) or PTEs per 4 KiB (v1)
 * of KVA from kernbase. */
static int
walk_pmap(const struct amd64_xlat *x, uint64_t va, const struct xout *o,
    struct kvs_error *e)
{
	uint64_t idx, ent = 0;

	if (va < x->p.pt_base)
		return unmapped(va, "below the minidump's kernbase", e);
	if (x->p.pt_level == 1) {
		idx = (va - x->p.pt_base) >> 12;
		if (idx >= x->p.pt_entries)
			return unmapped(va, "beyond the minidump's page-table section", e);
		ent = le64toh(x->p.pt[idx]);
		if (!(ent & PG_V))
			return unmapped(va, "PTE not valid", e);
		done(va, (ent & ADDR_4K) | (va & (SZ_4K - 1)), SZ_4K, o);
		return 0;
	}
	idx = (va - x->p.pt_base) >> 21;
	if (idx >= x->p.pt_entries)
		return unmapped(va, "beyond the minidump's page-table section", e);
	ent = le64toh(x->p.pt[idx]);
	if (!(ent & PG_V))
		return unmapped(va, "PDE not valid", e);
	if (ent & PG_PS) {
		done(va, (ent & ADDR_2M) | (va & (SZ_2M - 1)), SZ_2M, o);
		return 0;
	}
	if (read_entry(x, ent & ADDR_4K, (va >> 12) & 511, "PT", va, &ent, e) != 0)
		return -1;
	if (!(ent & PG_V))
		return unmapped(va, "PTE not valid", e);
	done(va, (ent & ADDR_4K) | (va & (SZ_4K - 1)), SZ_4K, o);
	return 0;
}

static int
amd64_kvtop(const void *priv, uint64_t va, uint64_t *pa, uint64_t *run, uint64_t *pgsz,
    struct kvs_error *e)
{
	const struct amd64_xlat *x = priv;
	const struct xout o = { pa, run, pgsz };

	if (x->p.direct_end > x->p.direct_base && va >= x->p.direct_base && va < x->p.direct_end) {
		done(va, va - x->p.direct_base + x->p.direct_phys, SZ_4K, &o);
		return 0;
	}
	if (x->p.pt != NULL)
		return walk_pmap(x, va, &o, e);
	if (x->p.have_root)
		return walk_pml4(x, va, &o, e);
	return unmapped(va, "no page tables", e);
}

static int
amd64_create(void **priv, const struct kvs_xlat_params *p, struct kvs_error *e)
{
	struct amd64_xlat *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	x->p = *p;
	*priv = x;
	return 0;
}

static void
amd64_destroy(void *priv)
{
	free(priv);
}

const struct kvs_arch_ops kvs_arch_amd64 = {
	.name = "amd64",
	.elf_machine = EM_X86_64,
	.page_size = SZ_4K,
	.create = amd64_create,
	.kvtop = amd64_kvtop,
	.canonical = amd64_canonical,
	.destroy = amd64_destroy,
};
