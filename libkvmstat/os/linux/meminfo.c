/*
 * meminfo.c - a Linux kernel's /proc/meminfo from its memory (kvs_meminfo,
 * kvs_meminfo_into): each line the kernel's report prints, in its order,
 * computed from the same variables and in the same way, into the caller's
 * array (nothing allocated here: the names and CPUs are the handle's).
 *
 * Global counters are the atomics vm_zone_stat[] / vm_node_stat[] alone
 * (below zero shown as 0), as the kernel's global page-state reads are; the
 * per-CPU deltas not yet folded in are left out there too.  Committed_AS is
 * the exact sum of vm_committed_as (its count plus every online CPU's
 * share), as the report sums it.  Which lines exist follows what the kernel
 * has: a counter name in vmstat_text[] (SecPageTables, ShadowCallStack,
 * Unaccepted, Balloon, FileHugePages), a symbol (Zswap, CmaTotal,
 * HardwareCorrupted, the HugePages_* lines, DirectMap*; the THP lines need
 * transparent_hugepage_flags).
 *
 * VmallocTotal is x86-64's VMALLOC_END - VMALLOC_START: 32 TiB - 1 with
 * 4-level page tables, 12800 TiB - 1 with 5 (__pgtable_l5_enabled set).
 * Buffers walks the block-device superblock's inodes (bounded) as
 * nr_blockdev_pages does.  A line whose inputs are not in the dump stays,
 * value 0, flagged KVS_CF_UNREADABLE with the reason; the call returns 1.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define INODES_MAX 10000000ULL
#define SWAPFILES_MAX 64
#define HSTATES_MAX 8
#define VM_MAX 512

struct mi {
	kvs_t *kd;
	struct kvs_counter *c;  /* the caller's: the first cap lines go there */
	size_t n, cap;
	int inc;
	struct lnx_vmnames vn;
	uint64_t zone[VM_MAX], node[VM_MAX];
	bool zone_ok, node_ok;
	char why[128];          /* the last unreadable input */
};

/* The reason of the last failed read, kept for the lines it spoils. */
static bool
fail(struct mi *m, const char *what)
{
	snprintf(m->why, sizeof(m->why), "%s: %s", what, kvs_geterr(m->kd));
	kerr_clear(&m->kd->err);
	return false;
}

static int
add(struct mi *m, const char *name, uint64_t value, kvs_unit_t unit, bool ok,
    unsigned flags, const char *note)
{
	struct kvs_counter *c, spare;

	/* Past the caller's room the line is counted, not kept. */
	c = m->n < m->cap ? &m->c[m->n] : &spare;
	m->n++;
	memset(c, 0, sizeof(*c));
	c->group = "meminfo";
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->key, sizeof(c->key), "%s", name);
	c->unit = unit;
	c->flags = flags;
	if (ok) {
		c->value = value;
		if (note != NULL)
			snprintf(c->note, sizeof(c->note), "%s", note);
	} else {
		c->flags |= KVS_CF_UNREADABLE;
		snprintf(c->note, sizeof(c->note), "%s", m->why);
		m->inc = 1;
	}
	return 0;
}

/* Pages as KiB. */
static int
addp(struct mi *m, const char *name, uint64_t pages, bool ok)
{
	return add(m, name, pages << 2, KVS_UNIT_KIB, ok, 0, NULL);
}

/* A global variable of `width` bytes (the kernel's type decides; DWARF's
 * size first when present). */
static bool
gvar(struct mi *m, const char *sym, unsigned width, uint64_t *v)
{
	uint64_t a;

	*v = 0;
	if (kvs_symbol(m->kd, sym, &a, NULL) != 0 || kread_uint(m->kd, a, width, v) != 0)
		return fail(m, sym);
	if (width == 4)
		*v = (uint64_t)(int64_t)(int32_t)*v;
	return true;
}

static bool
has_sym(kvs_t *kd, const char *sym)
{
	uint64_t a;

	if (kvs_symbol(kd, sym, &a, NULL) == 0)
		return true;
	kerr_clear(&kd->err);
	return false;
}

static uint64_t
clamp0(uint64_t v)
{
	return (int64_t)v < 0 ? 0 : v;
}

/* A global zone / node counter by its vmstat name; *have false when the
 * kernel has none of that name. */
static bool
zs(struct mi *m, const char *name, uint64_t *v, bool *have)
{
	int i = linux_vmindex(&m->vn, LNX_VM_ZONE, name);

	*v = 0;
	if (have != NULL)
		*have = i >= 0;
	if (i < 0)
		return true;
	if (!m->zone_ok)
		return false;
	*v = clamp0(m->zone[i]);
	return true;
}

static bool
ns(struct mi *m, const char *name, uint64_t *v, bool *have)
{
	int i = linux_vmindex(&m->vn, LNX_VM_NODE, name);

	*v = 0;
	if (have != NULL)
		*have = i >= 0;
	if (i < 0)
		return zs(m, name, v, have);  /* older kernels kept some per zone */
	if (!m->node_ok)
		return false;
	*v = clamp0(m->node[i]);
	return true;
}

/* nr_blockdev_pages: the pages cached by every block device's inode. */
static bool
blockdev_pages(struct mi *m, uint64_t *out)
{
	kvs_t *kd = m->kd;
	struct kfield s_inodes, i_sb_list, i_mapping, nrpages;
	struct kwalk w;
	uint64_t sb, head, p, v;

	*out = 0;
	if (!gvar(m, "blockdev_superblock", 8, &sb))
		return false;
	if (sb == 0)
		return true;
	if (kfield(kd, "struct super_block", "s_inodes", &s_inodes, true) != 0 ||
	    kfield(kd, "struct inode", "i_sb_list", &i_sb_list, true) != 0 ||
	    kfield(kd, "struct inode", "i_mapping", &i_mapping, true) != 0 ||
	    kfield(kd, "struct address_space", "nrpages", &nrpages, true) != 0)
		return fail(m, "Buffers: inode layout");
	head = sb + s_inodes.off;
	if (kread_u64(kd, head, &p) != 0)
		return fail(m, "Buffers: the block devices' inode list");
	kwalk_init(&w, INODES_MAX);
	while (p != head) {
		uint64_t inode = p - i_sb_list.off, map;
		if (p == 0 || kwalk_step(kd, &w, p, "block device inodes") != 0)
			return fail(m, "Buffers");
		if (kread_u64(kd, inode + i_mapping.off, &map) != 0 ||
		    kread_uint(kd, map + nrpages.off, (unsigned)nrpages.size, &v) != 0)
			return fail(m, "Buffers: a block device inode");
		*out += v;
		if (kread_u64(kd, p, &p) != 0)
			return fail(m, "Buffers: the block devices' inode list");
	}
	return true;
}

/* total_swapcache_pages: the pages of every swap device's address spaces. */
static bool
swapcache_pages(struct mi *m, uint64_t *out)
{
	kvs_t *kd = m->kd;
	struct kfield nrpages;
	struct kvs_typeinfo ti;
	uint64_t nfiles, sp, nsp, i, j;

	*out = 0;
	if (!gvar(m, "nr_swapfiles", 4, &nfiles))
		return false;
	if (nfiles == 0)
		return true;
	if (nfiles > SWAPFILES_MAX)
		nfiles = SWAPFILES_MAX;
	if (kfield(kd, "struct address_space", "nrpages", &nrpages, true) != 0 ||
	    kvs_type(kd, "struct address_space", &ti) != 0 ||
	    kvs_symbol(kd, "swapper_spaces", &sp, NULL) != 0 ||
	    kvs_symbol(kd, "nr_swapper_spaces", &nsp, NULL) != 0)
		return fail(m, "SwapCached");
	for (i = 0; i < nfiles; i++) {
		uint64_t spaces, nr, v;
		if (kread_u64(kd, sp + i * 8, &spaces) != 0 ||
		    kread_uint(kd, nsp + i * 4, 4, &nr) != 0)
			return fail(m, "SwapCached");
		if (spaces == 0 || nr > (1u << 20))
			continue;
		for (j = 0; j < nr; j++) {
			if (kread_uint(kd, spaces + j * ti.size + nrpages.off,
			    (unsigned)nrpages.size, &v) != 0)
				return fail(m, "SwapCached: a swap address space");
			*out += v;
		}
	}
	return true;
}

/* si_swapinfo's addition: pages of devices being swapped off. */
static bool
swap_unused(struct mi *m, uint64_t *out)
{
	kvs_t *kd = m->kd;
	struct kfield flags, inuse;
	uint64_t nfiles, si, i;

	*out = 0;
	if (!gvar(m, "nr_swapfiles", 4, &nfiles))
		return false;
	if (nfiles == 0)
		return true;
	if (nfiles > SWAPFILES_MAX)
		nfiles = SWAPFILES_MAX;
	if (kfield(kd, "struct swap_info_struct", "flags", &flags, true) != 0 ||
	    kfield(kd, "struct swap_info_struct", "inuse_pages", &inuse, true) != 0 ||
	    kvs_symbol(kd, "swap_info", &si, NULL) != 0)
		return fail(m, "SwapFree");
	for (i = 0; i < nfiles; i++) {
		uint64_t p, f, u;
		if (kread_u64(kd, si + i * 8, &p) != 0)
			return fail(m, "SwapFree: swap_info");
		if (p == 0)
			continue;
		if (kread_uint(kd, p + flags.off, (unsigned)flags.size, &f) != 0 ||
		    kread_uint(kd, p + inuse.off, (unsigned)inuse.size, &u) != 0)
			return fail(m, "SwapFree: a swap device");
		/* SWP_USED and not SWP_WRITEOK */
		if ((f & 1) && !(f & 2))
			*out += u;
	}
	return true;
}

/* percpu_counter_sum_positive(&vm_committed_as). */
static bool
committed(struct mi *m, uint64_t *out)
{
	kvs_t *kd = m->kd;
	struct kfield count, counters;
	struct lnx_cpus cpus;
	uint64_t a, v, pc;
	int64_t sum;
	unsigned c;

	*out = 0;
	if (kfield(kd, "struct percpu_counter", "count", &count, true) != 0 ||
	    kfield(kd, "struct percpu_counter", "counters", &counters, true) != 0 ||
	    kvs_symbol(kd, "vm_committed_as", &a, NULL) != 0 ||
	    kread_u64(kd, a + count.off, &v) != 0 || kread_u64(kd, a + counters.off, &pc) != 0)
		return fail(m, "Committed_AS");
	sum = (int64_t)v;
	if (linux_cpus(kd, &cpus) != 0)
		return fail(m, "Committed_AS");
	for (c = 0; c < cpus.n; c++) {
		if (!cpus.online[c])
			continue;
		if (kread_uint(kd, pc + cpus.off[c], 4, &v) != 0)
			return fail(m, "Committed_AS: a CPU's share");
		sum += (int32_t)(uint32_t)v;
	}
	*out = sum < 0 ? 0 : (uint64_t)sum;
	return true;
}

struct hst {
	uint64_t nr, free, resv, surplus, order;
};

/* The hstates: *nh of them, and the default one's index. */
static bool
hstates(struct mi *m, struct hst *h, unsigned *nh, unsigned *dflt)
{
	kvs_t *kd = m->kd;
	struct kfield f[5];
	static const char *const names[5] = { "nr_huge_pages", "free_huge_pages",
	    "resv_huge_pages", "surplus_huge_pages", "order" };
	struct kvs_typeinfo ti;
	uint64_t a, n, d, i;
	unsigned k;

	*nh = 0;
	*dflt = 0;
	for (k = 0; k < 5; k++)
		if (kfield(kd, "struct hstate", names[k], &f[k], true) != 0)
			return fail(m, "HugePages: struct hstate");
	if (kvs_type(kd, "struct hstate", &ti) != 0 || kvs_symbol(kd, "hstates", &a, NULL) != 0)
		return fail(m, "HugePages");
	if (!gvar(m, "hugetlb_max_hstate", 4, &n) || !gvar(m, "default_hstate_idx", 4, &d))
		return false;
	if (n > HSTATES_MAX)
		n = HSTATES_MAX;
	for (i = 0; i < n; i++)
		for (k = 0; k < 5; k++)
			if (kread_uint(kd, a + i * ti.size + f[k].off, (unsigned)f[k].size,
			    &(&h[i].nr)[k]) != 0)
				return fail(m, "HugePages: an hstate");
	*nh = (unsigned)n;
	*dflt = (unsigned)d;
	return true;
}

static int
fill(struct mi *m)
{
	kvs_t *kd = m->kd;
	size_t i;
	uint64_t total, freep, bufs, swc, lru[5], v, v2, a;
	uint64_t nrswap, totswap, unused, sre, sun, misc, filep, resv, wlow = 0;
	bool ok_total, ok_free, ok_bufs, ok_swc, ok_lru = true, ok, ok2, have, ok_sre, ok_sun,
	    ok_misc, ok_filep, ok_resv, ok_wl = true, ok_swap, ok_commit, ok_hst = false;
	static const char *const lrus[5] = { "nr_inactive_anon", "nr_active_anon",
	    "nr_inactive_file", "nr_active_file", "nr_unevictable" };
	struct hst hs[HSTATES_MAX];
	unsigned nh = 0, dh = 0, h;
	int64_t avail, pagecache, recl;

	if (has_sym(kd, "_totalram_pages"))
		ok_total = gvar(m, "_totalram_pages", 8, &total);
	else
		ok_total = gvar(m, "totalram_pages", 8, &total);
	ok_free = zs(m, "nr_free_pages", &freep, NULL);
	ok_bufs = blockdev_pages(m, &bufs);
	ok_swc = swapcache_pages(m, &swc);
	for (i = 0; i < 5; i++)
		ok_lru &= ns(m, lrus[i], &lru[i], NULL);
	ok_filep = ns(m, "nr_file_pages", &filep, NULL);
	ok_sre = ns(m, "nr_slab_reclaimable", &sre, NULL);
	ok_sun = ns(m, "nr_slab_unreclaimable", &sun, NULL);
	ok_misc = ns(m, "nr_kernel_misc_reclaimable", &misc, NULL);
	ok_resv = gvar(m, "totalreserve_pages", 8, &resv);
	switch (linux_watermarks(kd, &wlow)) {
	case 0:
		break;
	case 1:
		ok_wl = false;
		snprintf(m->why, sizeof(m->why), "MemAvailable: a zone is not in the dump");
		break;
	default:
		ok_wl = fail(m, "MemAvailable: the zones' watermarks");
	}

	/* si_mem_available */
	avail = (int64_t)freep - (int64_t)resv;
	pagecache = (int64_t)(lru[2] + lru[3]);
	pagecache -= (int64_t)((uint64_t)pagecache / 2 < wlow ? (uint64_t)pagecache / 2 : wlow);
	avail += pagecache;
	recl = (int64_t)(sre + misc);
	avail += recl - (int64_t)((uint64_t)recl / 2 < wlow ? (uint64_t)recl / 2 : wlow);
	if (avail < 0)
		avail = 0;

	if (addp(m, "MemTotal", total, ok_total) || addp(m, "MemFree", freep, ok_free) ||
	    add(m, "MemAvailable", (uint64_t)avail << 2, KVS_UNIT_KIB, ok_free && ok_lru &&
	    ok_sre && ok_misc && ok_resv && ok_wl, KVS_CF_ESTIMATE,
	    "the kernel's estimate (si_mem_available), computed as it does") ||
	    addp(m, "Buffers", bufs, ok_bufs))
		return -1;
	{
		int64_t cached = (int64_t)filep - (int64_t)swc - (int64_t)bufs;
		if (addp(m, "Cached", cached < 0 ? 0 : (uint64_t)cached, ok_filep && ok_swc &&
		    ok_bufs) || addp(m, "SwapCached", swc, ok_swc))
			return -1;
	}
	if (addp(m, "Active", lru[1] + lru[3], ok_lru) ||
	    addp(m, "Inactive", lru[0] + lru[2], ok_lru) ||
	    addp(m, "Active(anon)", lru[1], ok_lru) || addp(m, "Inactive(anon)", lru[0], ok_lru) ||
	    addp(m, "Active(file)", lru[3], ok_lru) || addp(m, "Inactive(file)", lru[2], ok_lru) ||
	    addp(m, "Unevictable", lru[4], ok_lru))
		return -1;
	ok = zs(m, "nr_mlock", &v, NULL);
	if (addp(m, "Mlocked", v, ok))
		return -1;
	ok_swap = gvar(m, "nr_swap_pages", 8, &nrswap);
	ok_swap &= gvar(m, "total_swap_pages", 8, &totswap);
	ok_swap &= swap_unused(m, &unused);
	if (addp(m, "SwapTotal", totswap + unused, ok_swap) ||
	    addp(m, "SwapFree", nrswap + unused, ok_swap))
		return -1;
	if (has_sym(kd, "zswap_stored_pages") && has_sym(kd, "zswap_pool_total_size")) {
		ok = gvar(m, "zswap_pool_total_size", 8, &v);
		ok2 = gvar(m, "zswap_stored_pages", 4, &v2);
		if (add(m, "Zswap", v >> 10, KVS_UNIT_KIB, ok, 0, NULL) ||
		    addp(m, "Zswapped", v2, ok2))
			return -1;
	}
	ok = ns(m, "nr_dirty", &v, NULL);
	if (addp(m, "Dirty", v, ok))
		return -1;
	ok = ns(m, "nr_writeback", &v, NULL);
	if (addp(m, "Writeback", v, ok))
		return -1;
	ok = ns(m, "nr_anon_pages", &v, NULL);
	if (addp(m, "AnonPages", v, ok))
		return -1;
	ok = ns(m, "nr_mapped", &v, NULL);
	if (addp(m, "Mapped", v, ok))
		return -1;
	ok = ns(m, "nr_shmem", &v, NULL);
	if (addp(m, "Shmem", v, ok))
		return -1;
	if (addp(m, "KReclaimable", sre + misc, ok_sre && ok_misc) ||
	    addp(m, "Slab", sre + sun, ok_sre && ok_sun) ||
	    addp(m, "SReclaimable", sre, ok_sre) || addp(m, "SUnreclaim", sun, ok_sun))
		return -1;
	ok = ns(m, "nr_kernel_stack", &v, NULL);
	if (add(m, "KernelStack", v, KVS_UNIT_KIB, ok, 0, NULL))
		return -1;
	ok = ns(m, "nr_shadow_call_stack", &v, &have);
	if (have && add(m, "ShadowCallStack", v, KVS_UNIT_KIB, ok, 0, NULL))
		return -1;
	ok = ns(m, "nr_page_table_pages", &v, NULL);
	if (addp(m, "PageTables", v, ok))
		return -1;
	ok = ns(m, "nr_sec_page_table_pages", &v, &have);
	if (have && addp(m, "SecPageTables", v, ok))
		return -1;
	if (addp(m, "NFS_Unstable", 0, true))
		return -1;
	ok = zs(m, "nr_bounce", &v, NULL);
	if (addp(m, "Bounce", v, ok))
		return -1;
	ok = ns(m, "nr_writeback_temp", &v, NULL);
	if (addp(m, "WritebackTmp", v, ok))
		return -1;

	if (has_sym(kd, "hstates"))
		ok_hst = hstates(m, hs, &nh, &dh);
	{
		/* vm_commit_limit */
		uint64_t kb, ratio, huge = 0, allowed;
		ok = gvar(m, "sysctl_overcommit_kbytes", 8, &kb);
		ok &= gvar(m, "sysctl_overcommit_ratio", 4, &ratio);
		for (h = 0; h < nh; h++)
			huge += hs[h].nr << hs[h].order;
		if (kb != 0)
			allowed = kb >> 2;
		else
			allowed = (total - huge) * ratio / 100;
		allowed += totswap;
		if (add(m, "CommitLimit", allowed << 2, KVS_UNIT_KIB, ok && ok_total && ok_swap &&
		    (ok_hst || !has_sym(kd, "hstates")), 0,
		    "from vm.overcommit_ratio / overcommit_kbytes as the kernel held them"))
			return -1;
	}
	ok_commit = committed(m, &v);
	if (addp(m, "Committed_AS", v, ok_commit))
		return -1;
	{
		uint64_t l5 = 0, tb;
		ok = true;
		if (has_sym(kd, "__pgtable_l5_enabled"))
			ok = gvar(m, "__pgtable_l5_enabled", 4, &l5);
		tb = l5 ? 12800 : 32;
		if (add(m, "VmallocTotal", ((tb << 40) - 1) >> 10, KVS_UNIT_KIB, ok, 0,
		    l5 ? "x86-64 5-level paging: 12800 TiB" : "x86-64 4-level paging: 32 TiB"))
			return -1;
	}
	ok = gvar(m, "nr_vmalloc_pages", 8, &v);
	if (addp(m, "VmallocUsed", v, ok) || addp(m, "VmallocChunk", 0, true))
		return -1;
	ok = gvar(m, "pcpu_nr_populated", 4, &v);
	ok &= gvar(m, "pcpu_nr_units", 4, &v2);
	if (addp(m, "Percpu", v * v2, ok))
		return -1;
	if (has_sym(kd, "num_poisoned_pages")) {
		ok = gvar(m, "num_poisoned_pages", 8, &v);
		if (addp(m, "HardwareCorrupted", v, ok))
			return -1;
	}
	if (has_sym(kd, "transparent_hugepage_flags")) {
		/* Counted in pages where the kernel has nr_swapcached (5.13 on:
		 * the THP counters became page counts with it), else in THPs. */
		unsigned mul = linux_vmindex(&m->vn, LNX_VM_NODE, "nr_swapcached") >= 0 ? 1 : 512;
		static const char *const thp[][2] = {
			{ "AnonHugePages", "nr_anon_transparent_hugepages" },
			{ "ShmemHugePages", "nr_shmem_hugepages" },
			{ "ShmemPmdMapped", "nr_shmem_pmdmapped" },
			{ "FileHugePages", "nr_file_hugepages" },
			{ "FilePmdMapped", "nr_file_pmdmapped" },
		};
		for (i = 0; i < 5; i++) {
			ok = ns(m, thp[i][1], &v, &have);
			if (have && addp(m, thp[i][0], v * mul, ok))
				return -1;
		}
	}
	if (has_sym(kd, "cma_area_count")) {   /* CONFIG_CMA */
		ok = gvar(m, "totalcma_pages", 8, &v);
		if (addp(m, "CmaTotal", v, ok))
			return -1;
		ok = zs(m, "nr_free_cma", &v, NULL);
		if (addp(m, "CmaFree", v, ok))
			return -1;
	}
	ok = zs(m, "nr_unaccepted", &v, &have);
	if (have && addp(m, "Unaccepted", v, ok))
		return -1;
	ok = ns(m, "nr_balloon_pages", &v, &have);
	if (have && addp(m, "Balloon", v, ok))
		return -1;
	if (has_sym(kd, "hstates")) {
		struct hst *d = dh < nh ? &hs[dh] : NULL;
		uint64_t tot = 0;
		bool okd = ok_hst && d != NULL;
		for (h = 0; h < nh; h++)
			tot += (hs[h].nr << hs[h].order) << 2;
		if (add(m, "HugePages_Total", okd ? d->nr : 0, KVS_UNIT_COUNT, okd, 0, NULL) ||
		    add(m, "HugePages_Free", okd ? d->free : 0, KVS_UNIT_COUNT, okd, 0, NULL) ||
		    add(m, "HugePages_Rsvd", okd ? d->resv : 0, KVS_UNIT_COUNT, okd, 0, NULL) ||
		    add(m, "HugePages_Surp", okd ? d->surplus : 0, KVS_UNIT_COUNT, okd, 0, NULL) ||
		    add(m, "Hugepagesize", okd ? 4ULL << d->order : 0, KVS_UNIT_KIB, okd, 0, NULL) ||
		    add(m, "Hugetlb", tot, KVS_UNIT_KIB, ok_hst, 0, NULL))
			return -1;
	}
	if (kvs_symbol(kd, "direct_pages_count", &a, NULL) == 0) {
		uint64_t cnt[4] = { 0 }, gb = 0;
		ok = kvs_read(kd, a, cnt, sizeof(cnt)) == 0 || fail(m, "DirectMap");
		for (i = 0; i < 4; i++)
			cnt[i] = le64toh(cnt[i]);
		if (add(m, "DirectMap4k", cnt[1] << 2, KVS_UNIT_KIB, ok, 0, NULL) ||
		    add(m, "DirectMap2M", cnt[2] << 11, KVS_UNIT_KIB, ok, 0, NULL))
			return -1;
		ok2 = gvar(m, "direct_gbpages", 4, &gb);
		if ((gb != 0 || !ok2) &&
		    add(m, "DirectMap1G", cnt[3] << 20, KVS_UNIT_KIB, ok && ok2, 0, NULL))
			return -1;
	} else
		kerr_clear(&kd->err);
	return 0;
}

int
linux_meminfo(kvs_t *kd, struct kvs_counter *buf, size_t cap, size_t *n)
{
	const struct lnx_vmnames *vn;
	struct mi m;
	uint64_t a;
	int rc;

	*n = 0;
	memset(&m, 0, sizeof(m));
	m.kd = kd;
	m.c = buf;
	m.cap = cap;
	if ((vn = linux_vmnames(kd)) == NULL)
		return kerr_push(&kd->err, "meminfo");
	m.vn = *vn;
	if (m.vn.nzone > VM_MAX || m.vn.nnode > VM_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "more vm_stat counters than expected");
	m.zone_ok = kvs_symbol(kd, "vm_zone_stat", &a, NULL) == 0 &&
	    kvs_read(kd, a, m.zone, m.vn.nzone * 8) == 0;
	if (!m.zone_ok)
		fail(&m, "vm_zone_stat");
	else {
		m.node_ok = kvs_symbol(kd, "vm_node_stat", &a, NULL) == 0 &&
		    kvs_read(kd, a, m.node, m.vn.nnode * 8) == 0;
		if (!m.node_ok)
			fail(&m, "vm_node_stat");
	}
	for (size_t i = 0; i < VM_MAX; i++) {
		m.zone[i] = le64toh(m.zone[i]);
		m.node[i] = le64toh(m.node[i]);
	}
	if ((rc = fill(&m)) < 0)
		return -1;
	*n = m.n;
	return m.inc;
}
