/*
 * arm64.c - kernel virtual to physical translation on AArch64 (VMSAv8-64,
 * stage 1, the kernel's half: TTBR1).
 *
 * Like amd64.c it knows neither files nor kernels: it is handed a
 * physical-read callback, the root table's physical address, the direct
 * map's window (va - base + phys), and the regime the kernel configured:
 * the granule (4, 16 or 64 KiB pages: params.page_shift 12, 14, 16), the
 * kernel VA size (params.va_bits, 64 - TCR_EL1.T1SZ, 36 to 52) and whether
 * output addresses have 52 bits (params.pa52: FEAT_LPA's layout with
 * 64 KiB pages, FEAT_LPA2's with 4 and 16 KiB).
 *
 * The walk: each level resolves granule - 3 bits of the address (an 8-byte
 * descriptor per entry of a granule-sized table); the leaf level (3) the
 * bits above the page offset; the first level whatever is left below
 * va_bits, so a 4 KiB / 39-bit regime starts at level 1, 4 KiB / 48-bit at
 * level 0, 4 KiB / 52-bit (LPA2) at level -1, 64 KiB / 42-bit at level 2.
 * A descriptor's bits 1:0 say: x0 invalid, 11 a table (below level 3) or a
 * page (level 3), 01 a block (levels 1 and 2; level 0 with LPA2) or
 * reserved (level 3).  At most five descriptors are read: a loop in the
 * tables gives a wrong answer at worst, never a hang.
 *
 * A dump may carry its own page-table section instead (FreeBSD minidumps,
 * params.pt): one level 3 descriptor per 4 KiB of kernel address space
 * from params.pt_base, blocks already split into pages by the dumping
 * kernel; the direct map beside it is the header's window.  Then that
 * section alone answers for the kernel's addresses.
 */
#include <elf.h>
#include <endian.h>
#include <stdlib.h>

#include "arch.h"

struct arm64_xlat {
	struct kvs_xlat_params p;
	unsigned g;         /* page shift: 12, 14 or 16 */
	unsigned stride;    /* bits per level: g - 3 */
	int start;          /* first level: -1 .. 3 */
};

/* The bits of the address an entry's output field holds: [47:shift], and
 * with 52-bit output addresses the high bits where each layout puts them. */
static uint64_t
out_addr(const struct arm64_xlat *x, uint64_t desc, unsigned shift)
{
	uint64_t mask = ((1ULL << 48) - 1) & ~((1ULL << shift) - 1);
	uint64_t pa;

	if (!x->p.pa52)
		return desc & mask;
	if (x->g == 16) {
		/* FEAT_LPA: OA[51:48] in descriptor bits [15:12]. */
		pa = desc & mask;
		pa |= ((desc >> 12) & 0xf) << 48;
		return pa;
	}
	/* FEAT_LPA2: OA[49:shift] in place, OA[51:50] in bits [9:8]. */
	mask = ((1ULL << 50) - 1) & ~((1ULL << shift) - 1);
	pa = desc & mask;
	pa |= ((desc >> 8) & 0x3) << 50;
	return pa;
}

static int
unmapped(uint64_t va, const char *why, int level, struct kvs_error *e)
{
	if (level < -1)
		kerr_set(e, KVS_E_UNMAPPED, "va 0x%llx: %s", (unsigned long long)va, why);
	else
		kerr_set(e, KVS_E_UNMAPPED, "va 0x%llx: level %d descriptor %s",
		    (unsigned long long)va, level, why);
	kerr_fault(e, va);
	return -1;
}

/* The kernel's half: bits [63:va_bits] all ones. */
static bool
upper(const struct arm64_xlat *x, uint64_t va)
{
	return x->p.va_bits >= 64 || (va >> x->p.va_bits) == (~0ULL >> x->p.va_bits);
}

static bool
arm64_canonical(uint64_t va)
{
	/* Without the regime: either half of a 52-bit space (the largest). */
	return (va >> 52) == 0 || (va >> 52) == 0xfff;
}

/* The dump's section of level 3 descriptors (4 KiB granule). */
static int
walk_section(const struct arm64_xlat *x, uint64_t va, uint64_t *pa, uint64_t *size,
    struct kvs_error *e)
{
	uint64_t idx, desc;

	if (x->p.pt_level != 1 || x->g != 12)
		return unmapped(va, "the dump's page-table section is not one of 4 KiB level 3 "
		    "descriptors", -2, e);
	if (va < x->p.pt_base)
		return unmapped(va, "below the kernel addresses the dump's page-table section "
		    "covers", -2, e);
	idx = (va - x->p.pt_base) >> 12;
	if (idx >= x->p.pt_entries)
		return unmapped(va, "beyond the dump's page-table section", -2, e);
	desc = le64toh(x->p.pt[idx]);
	if ((desc & 3) != 3)
		return unmapped(va, (desc & 1) ? "reserved (a block at level 3)" : "not valid", 3, e);
	*size = 1ULL << 12;
	*pa = out_addr(x, desc, 12) | (va & 0xfff);
	return 0;
}

static int
arm64_kvtop(const void *priv, uint64_t va, uint64_t *pa, uint64_t *run, uint64_t *pgsz,
    struct kvs_error *e)
{
	const struct arm64_xlat *x = priv;
	uint64_t table, desc = 0, size;
	int level;

	if (x->p.direct_end > x->p.direct_base && va >= x->p.direct_base &&
	    va < x->p.direct_end) {
		size = 1ULL << x->g;
		*pa = va - x->p.direct_base + x->p.direct_phys;
		goto found;
	}
	if (x->p.pt != NULL) {
		if (walk_section(x, va, pa, &size, e) != 0)
			return -1;
		goto found;
	}
	if (!x->p.have_root)
		return unmapped(va, "no page tables", -2, e);
	if (!upper(x, va))
		return unmapped(va, (va >> x->p.va_bits) == 0 ?
		    "a user-space address (the dump holds the kernel's tables only)" :
		    "outside the kernel's address space (bits above VA_BITS not all set)", -2, e);
	table = x->p.root_pa;
	for (level = x->start; level <= 3; level++) {
		unsigned shift = x->g + (unsigned)(3 - level) * x->stride;
		unsigned bits = level == x->start ? x->p.va_bits - shift : x->stride;
		uint64_t idx = (va >> shift) & ((1ULL << bits) - 1), v;

		if (x->p.read_phys(x->p.ctx, table + idx * 8, &v, sizeof(v), e) != 0)
			return kerr_push(e, "va 0x%llx: reading the level %d descriptor at "
			    "physical 0x%llx", (unsigned long long)va, level,
			    (unsigned long long)(table + idx * 8));
		desc = le64toh(v);
		if (!(desc & 1))
			return unmapped(va, "not valid", level, e);
		if (level == 3) {
			if (!(desc & 2))
				return unmapped(va, "reserved (a block at level 3)", level, e);
			size = 1ULL << x->g;
			*pa = out_addr(x, desc, x->g) | (va & (size - 1));
			goto found;
		}
		if (!(desc & 2)) {
			/* A block: levels 1 and 2, and 0 with LPA2's 4 KiB pages. */
			if (level < 1 && !(level == 0 && x->p.pa52 && x->g == 12))
				return unmapped(va, "a block where none may be", level, e);
			size = 1ULL << shift;
			*pa = out_addr(x, desc, shift) | (va & (size - 1));
			goto found;
		}
		table = out_addr(x, desc, x->g);
	}
	return unmapped(va, "no leaf", 3, e);      /* not reached */
found:
	if (pgsz != NULL)
		*pgsz = size;
	if (run != NULL)
		*run = size - (va & (size - 1));
	return 0;
}

static int
arm64_create(void **priv, const struct kvs_xlat_params *p, struct kvs_error *e)
{
	struct arm64_xlat *x;
	unsigned g = p->page_shift ? p->page_shift : 12;
	unsigned vb = p->va_bits ? p->va_bits : 48;
	unsigned levels;

	if (g != 12 && g != 14 && g != 16)
		return kerr_set(e, KVS_E_DATA, "arm64: a %u-bit page offset is no AArch64 "
		    "granule (4, 16 or 64 KiB pages)", g);
	if (vb < 36 || vb > 52 || (vb > 48 && !p->pa52 && g != 16))
		return kerr_set(e, KVS_E_DATA, "arm64: %u-bit kernel addresses with %u KiB "
		    "pages are not an AArch64 regime", vb, 1u << (g - 10));
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	x->p = *p;
	x->p.va_bits = vb;
	x->g = g;
	x->stride = g - 3;
	levels = (vb - g + x->stride - 1) / x->stride;
	x->start = 4 - (int)levels;
	*priv = x;
	return 0;
}

static void
arm64_destroy(void *priv)
{
	free(priv);
}

const struct kvs_arch_ops kvs_arch_arm64 = {
	.name = "arm64",
	.elf_machine = EM_AARCH64,
	.page_size = 1ULL << 12,   /* the smallest granule; kvtop says each page's */
	.create = arm64_create,
	.kvtop = arm64_kvtop,
	.canonical = arm64_canonical,
	.destroy = arm64_destroy,
};
