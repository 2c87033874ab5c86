/*
 * pgalloc.c - the Linux page allocator's zones (kvs_pzones): every struct
 * zone of every node, with what /proc/buddyinfo and /proc/zoneinfo print of
 * it, and what the census shares with meminfo.c: the vm_stat counter names
 * and the CPU set (kept on the handle, read once: a refresh allocates
 * nothing), and the zones' low watermarks (linux_watermarks, through the
 * zone layout and a zone buffer kept on the handle too).
 *
 * Nodes come from node_data[] (NUMA kernels, nr_node_ids entries) or
 * contig_page_data; each node's node_zones[] is walked whole, populated or
 * not, as the kernel's own walk does.  Counter names are the kernel's own
 * vmstat_text[] in memory: zone items, then the NUMA items (when struct zone
 * has vm_numa_event[] or vm_numa_stat[]), then node items; the counts are
 * the array lengths of zone.vm_stat[] and pglist_data.vm_stat[].
 *
 * Values are read as the kernel's report reads them: a zone or node counter
 * is its atomic alone, negative shown as 0 (per-CPU deltas not folded in);
 * NUMA event counters add each online CPU's pending events where they are
 * kept per CPU (per_cpu_zonestats.vm_numa_event[], or the older pageset's
 * vm_numa_stat_diff[]), as the report folds them in (5.10's snapshot; 5.14
 * on, zoneinfo folds them since a stable fix of 2024, and showed the atomic
 * alone before it: a kernel between shows less than this).  The node's THP
 * counters are shown in huge pages where the kernel counts them in pages
 * (told by its nr_swapcached counter, which came with that change; a
 * heuristic for the kernels between).  Layouts by member presence: _watermark[] or
 * watermark[], managed_pages atomic or plain, per_cpu_pageset +
 * per_cpu_zonestats or pageset.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define NODES_MAX 1024
#define ZONES_MAX 8
#define STATS_MAX 512
#define CPUS_MAX 8192
#define ZONE_BUF_MAX 16384
#define MAX_RECLAIM_RETRIES 16
#define HPAGE_PMD_NR 512       /* x86-64: a PMD maps 512 pages */

/* ---- CPUs ---------------------------------------------------------------- */

/* The handle's CPU set: the offsets, read once (the kernel sets them at
 * boot), and the online mask, read at every call. */
struct cpus_memo {
	unsigned n;                 /* 0: offsets not read yet */
	uint64_t off[CPUS_MAX];
	uint8_t online[CPUS_MAX];
};

int
linux_cpus(kvs_t *kd, struct lnx_cpus *c)
{
	static const char memo_tag;
	struct cpus_memo *m = kvs_memo(kd, &memo_tag, sizeof(*m));
	uint64_t addr, v, words[CPUS_MAX / 64];
	unsigned i;

	memset(c, 0, sizeof(*c));
	if (m == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (m->n == 0) {
		if (kvs_symbol(kd, "nr_cpu_ids", &addr, NULL) != 0 ||
		    kread_uint(kd, addr, 4, &v) != 0)
			return kerr_push(&kd->err, "CPU count");
		if (v == 0 || v > CPUS_MAX)
			return kerr_set(&kd->err, KVS_E_DATA, "nr_cpu_ids %llu out of range",
			    (unsigned long long)v);
		if (kvs_symbol(kd, "__per_cpu_offset", &addr, NULL) != 0 ||
		    kvs_read(kd, addr, m->off, v * sizeof(uint64_t)) != 0)
			return kerr_push(&kd->err, "per-CPU offsets");
		for (i = 0; i < v; i++)
			m->off[i] = le64toh(m->off[i]);
		m->n = (unsigned)v;
	}
	if (kvs_symbol(kd, "__cpu_online_mask", &addr, NULL) != 0 ||
	    kvs_read(kd, addr, words, (m->n + 63) / 64 * 8) != 0)
		return kerr_push(&kd->err, "online CPUs");
	for (i = 0; i < m->n; i++)
		m->online[i] = (le64toh(words[i / 64]) >> (i % 64)) & 1;
	c->n = m->n;
	c->off = m->off;
	c->online = m->online;
	return 0;
}

/* ---- counter names ------------------------------------------------------- */

static int
array_count(kvs_t *kd, const char *type, const char *member, size_t *n)
{
	struct kfield f;

	*n = 0;
	if (kfield(kd, type, member, &f, false) != 0)
		return -1;
	if (!f.present)
		return 0;
	if (f.kind != KVS_KIND_ARRAY || f.elem_size != 8 || f.count == 0 || f.count > STATS_MAX)
		return kerr_set(&kd->err, KVS_E_VERSION, "%s.%s is not an array of longs",
		    type, member);
	*n = (size_t)f.count;
	return 1;
}

/* The handle's counter names: read once (vmstat_text[] is the kernel's
 * constant), kept with the counts. */
struct vmnames_memo {
	bool ok;
	struct lnx_vmnames v;
	char names[3 * STATS_MAX][48];
};

static int
vmnames_read(kvs_t *kd, struct lnx_vmnames *v)
{
	uint64_t base, ptrs[3 * STATS_MAX];
	size_t total, i;
	int r;

	if (array_count(kd, "struct zone", "vm_stat", &v->nzone) != 1 ||
	    array_count(kd, "struct pglist_data", "vm_stat", &v->nnode) != 1)
		return kerr_set(&kd->err, KVS_E_VERSION, "struct zone or pglist_data has no "
		    "vm_stat[] counters");
	if ((r = array_count(kd, "struct zone", "vm_numa_event", &v->nnuma)) < 0)
		return -1;
	if (r == 1)
		v->numa_member = "vm_numa_event";
	else {
		if ((r = array_count(kd, "struct zone", "vm_numa_stat", &v->nnuma)) < 0)
			return -1;
		if (r == 1)
			v->numa_member = "vm_numa_stat";
	}
	total = v->nzone + v->nnuma + v->nnode;
	if (kvs_symbol(kd, "vmstat_text", &base, NULL) != 0 ||
	    kvs_read(kd, base, ptrs, total * 8) != 0)
		return kerr_push(&kd->err, "the counter names (vmstat_text)");
	for (i = 0; i < total; i++)
		if (kvs_read_string(kd, le64toh(ptrs[i]), v->names[i], sizeof(v->names[i]),
		    NULL) < 0 || v->names[i][0] == '\0')
			return kerr_push(&kd->err, "counter name %zu of vmstat_text", i);
	return 0;
}

const struct lnx_vmnames *
linux_vmnames(kvs_t *kd)
{
	static const char memo_tag;
	struct vmnames_memo *m = kvs_memo(kd, &memo_tag, sizeof(*m));

	if (m == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (!m->ok) {
		memset(&m->v, 0, sizeof(m->v));
		m->v.names = m->names;
		if (vmnames_read(kd, &m->v) != 0)
			return NULL;
		m->ok = true;
	}
	return &m->v;
}

const char *
linux_vmname(const struct lnx_vmnames *v, int which, size_t i)
{
	size_t base = which == LNX_VM_ZONE ? 0 : which == LNX_VM_NUMA ? v->nzone :
	    v->nzone + v->nnuma;
	size_t n = which == LNX_VM_ZONE ? v->nzone : which == LNX_VM_NUMA ? v->nnuma : v->nnode;

	return i < n ? v->names[base + i] : NULL;
}

int
linux_vmindex(const struct lnx_vmnames *v, int which, const char *name)
{
	size_t i;
	const char *s;

	for (i = 0; (s = linux_vmname(v, which, i)) != NULL; i++)
		if (strcmp(s, name) == 0)
			return (int)i;
	return -1;
}

/* ---- zones --------------------------------------------------------------- */

struct zlayout {
	uint64_t zone_size, nzones, node_zones_off;
	struct kfield name, wmark, boost, lowmem, start_pfn, managed, spanned, present, cma;
	struct kfield free_area, nr_free, vm_stat, numa, pageset, zonestats;
	uint64_t fa_size;
	/* pglist_data */
	struct kfield node_id, node_vm_stat, kswapd_failures;
	/* per-CPU: count, high, batch of the pageset; threshold and NUMA */
	struct kfield p_count, p_high, p_batch, p_thresh, p_numa;
	uint64_t p_size, z_size;    /* bytes to read of each per-CPU struct */
	bool old_pageset;           /* struct per_cpu_pageset (pcp inside) */
};

static int
zresolve(kvs_t *kd, struct zlayout *L)
{
	const char *Z = "struct zone", *P = "struct pglist_data";
	struct kfield nz;
	struct kvs_typeinfo ti;

	memset(L, 0, sizeof(*L));
	if (kfield(kd, P, "node_zones", &nz, true) != 0 ||
	    kfield(kd, P, "vm_stat", &L->node_vm_stat, true) != 0 ||
	    kfield(kd, P, "node_id", &L->node_id, false) != 0 ||
	    kfield(kd, P, "kswapd_failures", &L->kswapd_failures, false) != 0)
		return kerr_push(&kd->err, "node layout");
	if (nz.kind != KVS_KIND_ARRAY || nz.count == 0 || nz.elem_size == 0 ||
	    nz.elem_size > ZONE_BUF_MAX)
		return kerr_set(&kd->err, KVS_E_VERSION, "pglist_data.node_zones is not an "
		    "array of zones");
	L->node_zones_off = nz.off;
	L->nzones = nz.count > ZONES_MAX ? ZONES_MAX : nz.count;
	L->zone_size = nz.elem_size;
	if (kfield(kd, Z, "name", &L->name, true) != 0 ||
	    kfield(kd, Z, "lowmem_reserve", &L->lowmem, true) != 0 ||
	    kfield(kd, Z, "zone_start_pfn", &L->start_pfn, true) != 0 ||
	    kfield(kd, Z, "managed_pages", &L->managed, true) != 0 ||
	    kfield(kd, Z, "spanned_pages", &L->spanned, true) != 0 ||
	    kfield(kd, Z, "present_pages", &L->present, true) != 0 ||
	    kfield(kd, Z, "free_area", &L->free_area, true) != 0 ||
	    kfield(kd, Z, "vm_stat", &L->vm_stat, true) != 0 ||
	    kfield(kd, Z, "cma_pages", &L->cma, false) != 0 ||
	    kfield(kd, Z, "watermark_boost", &L->boost, false) != 0 ||
	    kfield(kd, "struct free_area", "nr_free", &L->nr_free, true) != 0)
		return kerr_push(&kd->err, "zone layout");
	if (kfield(kd, Z, "_watermark", &L->wmark, false) != 0)
		return -1;
	if (!L->wmark.present && kfield(kd, Z, "watermark", &L->wmark, true) != 0)
		return kerr_push(&kd->err, "zone watermarks");
	if (L->wmark.kind != KVS_KIND_ARRAY || L->wmark.count < 3 || L->wmark.elem_size != 8 ||
	    L->free_area.kind != KVS_KIND_ARRAY || L->free_area.count == 0 ||
	    L->lowmem.kind != KVS_KIND_ARRAY || L->lowmem.elem_size != 8)
		return kerr_set(&kd->err, KVS_E_VERSION, "struct zone's watermarks, free areas "
		    "or lowmem_reserve are not the arrays expected");
	L->fa_size = L->free_area.elem_size;
	if (kfield(kd, Z, "vm_numa_event", &L->numa, false) != 0)
		return -1;
	if (!L->numa.present && kfield(kd, Z, "vm_numa_stat", &L->numa, false) != 0)
		return -1;
	if (kfield(kd, Z, "per_cpu_pageset", &L->pageset, false) != 0 ||
	    kfield(kd, Z, "per_cpu_zonestats", &L->zonestats, false) != 0)
		return -1;
	if (L->pageset.present) {
		const char *C = "struct per_cpu_pages", *S = "struct per_cpu_zonestat";
		if (kfield(kd, C, "count", &L->p_count, true) != 0 ||
		    kfield(kd, C, "high", &L->p_high, true) != 0 ||
		    kfield(kd, C, "batch", &L->p_batch, true) != 0)
			return kerr_push(&kd->err, "per-CPU pageset layout");
		if (kvs_type(kd, C, &ti) != 0)
			return -1;
		L->p_size = ti.size;
		if (L->zonestats.present) {
			if (kfield(kd, S, "stat_threshold", &L->p_thresh, false) != 0 ||
			    kfield(kd, S, "vm_numa_event", &L->p_numa, false) != 0 ||
			    kvs_type(kd, S, &ti) != 0)
				return -1;
			L->z_size = ti.size;
		}
	} else {
		const char *C = "struct per_cpu_pageset";
		if (kfield(kd, Z, "pageset", &L->pageset, false) != 0)
			return -1;
		if (L->pageset.present) {
			L->old_pageset = true;
			L->zonestats = L->pageset;
			if (kfield(kd, C, "pcp.count", &L->p_count, true) != 0 ||
			    kfield(kd, C, "pcp.high", &L->p_high, true) != 0 ||
			    kfield(kd, C, "pcp.batch", &L->p_batch, true) != 0 ||
			    kfield(kd, C, "stat_threshold", &L->p_thresh, false) != 0 ||
			    kfield(kd, C, "vm_numa_stat_diff", &L->p_numa, false) != 0 ||
			    kvs_type(kd, C, &ti) != 0)
				return kerr_push(&kd->err, "per-CPU pageset layout");
			L->p_size = L->z_size = ti.size;
		}
	}
	if (L->p_size > 4096 || L->z_size > 4096)
		return kerr_set(&kd->err, KVS_E_DATA, "per-CPU pageset larger than expected");
	return 0;
}

static int64_t
sext(uint64_t v, uint64_t size)
{
	if (size == 4)
		return (int32_t)(uint32_t)v;
	if (size == 2)
		return (int16_t)(uint16_t)v;
	if (size == 1)
		return (int8_t)(uint8_t)v;
	return (int64_t)v;
}

/* An atomic_long_t counter as the kernel's report shows it: below zero, 0. */
static uint64_t
clamp0(uint64_t v)
{
	return (int64_t)v < 0 ? 0 : v;
}

static void
counter(struct kvs_counter *c, const char *name, uint64_t value, kvs_unit_t unit)
{
	memset(c, 0, sizeof(*c));
	c->group = "zoneinfo";
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->key, sizeof(c->key), "%s", name);
	c->value = value;
	c->unit = unit;
}

/* Each online CPU's pageset, and the NUMA events pending per CPU (added to
 * ev[]).  0, or 1 when some CPU's bytes are not in the dump. */
static int
zone_percpu(kvs_t *kd, const struct zlayout *L, const struct lnx_cpus *cpus,
    const uint8_t *zb, struct kvs_pzone *z, uint64_t *ev, size_t nev)
{
	uint64_t pcp = kfield_get(zb, L->zone_size, &L->pageset);
	uint64_t zst = L->zonestats.present ? kfield_get(zb, L->zone_size, &L->zonestats) : 0;
	uint8_t pb[4096], sb[4096];
	unsigned c;
	size_t i;
	int inc = 0;

	if (!L->pageset.present)
		return 0;
	z->pcp = calloc(cpus->n, sizeof(*z->pcp));
	if (z->pcp == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (c = 0; c < cpus->n; c++) {
		struct kvs_pzone_pcp *p;
		if (!cpus->online[c])
			continue;
		p = &z->pcp[z->npcp++];
		p->cpu = (int)c;
		p->stat_threshold = -1;
		if (kvs_read(kd, pcp + cpus->off[c], pb, L->p_size) != 0) {
			inc = 1;
			kerr_clear(&kd->err);
			continue;
		}
		p->count = sext(kfield_get(pb, L->p_size, &L->p_count), L->p_count.size);
		p->high = sext(kfield_get(pb, L->p_size, &L->p_high), L->p_high.size);
		p->batch = sext(kfield_get(pb, L->p_size, &L->p_batch), L->p_batch.size);
		if (zst == 0)
			continue;
		if (L->old_pageset)
			memcpy(sb, pb, L->z_size);
		else if (kvs_read(kd, zst + cpus->off[c], sb, L->z_size) != 0) {
			inc = 1;
			kerr_clear(&kd->err);
			continue;
		}
		if (L->p_thresh.present)
			p->stat_threshold = sext(kfield_get(sb, L->z_size, &L->p_thresh),
			    L->p_thresh.size);
		if (L->p_numa.present && L->p_numa.kind == KVS_KIND_ARRAY) {
			for (i = 0; i < nev && i < L->p_numa.count; i++) {
				struct kfield e = L->p_numa;
				e.off += i * e.elem_size;
				e.size = e.elem_size;
				e.kind = KVS_KIND_BASE;
				ev[i] += kfield_get(sb, L->z_size, &e);
			}
		}
	}
	return inc;
}

/* Fill z from the struct zone at `za` of node `nid`.  0, 1 (incomplete) or -1. */
static int
one_zone(kvs_t *kd, const struct zlayout *L, const struct lnx_vmnames *vn,
    const struct lnx_cpus *cpus, uint64_t za, struct kvs_pzone *z, uint8_t *zb)
{
	uint64_t ev[STATS_MAX];
	size_t i;
	int r, inc = 0;

	z->kaddr = za;
	z->unreclaimable = -1;
	if (kvs_read(kd, za, zb, L->zone_size) != 0) {
		z->flags |= KVS_CF_UNREADABLE;
		snprintf(z->note, sizeof(z->note), "struct zone at 0x%llx: %s",
		    (unsigned long long)za, kvs_geterr(kd));
		snprintf(z->name, sizeof(z->name), "?");
		kerr_clear(&kd->err);
		return 1;
	}
	if (kvs_read_string(kd, kfield_get(zb, L->zone_size, &L->name), z->name,
	    sizeof(z->name), NULL) < 0) {
		snprintf(z->name, sizeof(z->name), "?");
		z->flags |= KVS_CF_UNREADABLE;
		snprintf(z->note, sizeof(z->note), "the zone's name: %s", kvs_geterr(kd));
		kerr_clear(&kd->err);
		inc = 1;
	}
	for (i = 0; i < 3; i++) {
		struct kfield w = L->wmark;
		w.off += i * 8;
		w.size = 8;
		w.kind = KVS_KIND_BASE;
		(&z->wmark_min)[i] = kfield_get(zb, L->zone_size, &w);
	}
	z->wmark_boost = L->boost.present ? kfield_get(zb, L->zone_size, &L->boost) : 0;
	z->spanned = kfield_get(zb, L->zone_size, &L->spanned);
	z->present = kfield_get(zb, L->zone_size, &L->present);
	z->managed = kfield_get(zb, L->zone_size, &L->managed);
	z->cma = L->cma.present ? kfield_get(zb, L->zone_size, &L->cma) : 0;
	z->start_pfn = kfield_get(zb, L->zone_size, &L->start_pfn);
	z->populated = z->present != 0;
	z->nprotection = (unsigned)(L->lowmem.count > KVS_PZ_PROT ? KVS_PZ_PROT : L->lowmem.count);
	for (i = 0; i < z->nprotection; i++) {
		uint64_t v;
		memcpy(&v, zb + L->lowmem.off + i * 8, 8);
		z->protection[i] = le64toh(v);
	}
	z->norders = (unsigned)(L->free_area.count > KVS_PZ_ORDERS ? KVS_PZ_ORDERS :
	    L->free_area.count);
	for (i = 0; i < z->norders; i++) {
		struct kfield f = L->nr_free;
		f.off += L->free_area.off + i * L->fa_size;
		z->free[i] = kfield_get(zb, L->zone_size, &f);
	}
	z->nstat = vn->nzone + vn->nnuma;
	z->stat = calloc(z->nstat ? z->nstat : 1, sizeof(*z->stat));
	if (z->stat == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (i = 0; i < vn->nzone; i++) {
		uint64_t v;
		memcpy(&v, zb + L->vm_stat.off + i * 8, 8);
		counter(&z->stat[i], linux_vmname(vn, LNX_VM_ZONE, i), clamp0(le64toh(v)),
		    KVS_UNIT_PAGES);
	}
	z->free_pages = z->nstat > 0 ? z->stat[0].value : 0;
	{
		int k = linux_vmindex(vn, LNX_VM_ZONE, "nr_free_pages");
		if (k >= 0)
			z->free_pages = z->stat[k].value;
	}
	memset(ev, 0, sizeof(ev));
	if (z->populated) {
		if ((r = zone_percpu(kd, L, cpus, zb, z, ev, vn->nnuma)) < 0)
			return -1;
		if (r > 0) {
			inc = 1;
			z->flags |= KVS_CF_UNREADABLE;
			snprintf(z->note, sizeof(z->note), "some CPUs' pagesets are not in the dump");
		}
	}
	for (i = 0; i < vn->nnuma; i++) {
		uint64_t v;
		memcpy(&v, zb + L->numa.off + i * 8, 8);
		counter(&z->stat[vn->nzone + i], linux_vmname(vn, LNX_VM_NUMA, i),
		    le64toh(v) + ev[i], KVS_UNIT_COUNT);
	}
	return inc;
}

/* The nodes' pglist_data addresses, in node order.  *n of them. */
static int
node_list(kvs_t *kd, uint64_t *pg, int *nid, size_t *n)
{
	uint64_t a, ptrs[NODES_MAX], nr = 1;
	size_t i;

	*n = 0;
	if (kvs_symbol(kd, "node_data", &a, NULL) != 0) {
		kerr_clear(&kd->err);
		if (kvs_symbol(kd, "contig_page_data", &a, NULL) != 0)
			return kerr_set(&kd->err, KVS_E_NOSYMBOL, "neither node_data nor "
			    "contig_page_data: no page allocator nodes");
		pg[0] = a;
		nid[0] = 0;
		*n = 1;
		return 0;
	}
	if (kvs_symbol(kd, "nr_node_ids", &nr, NULL) == 0) {
		uint64_t v;
		if (kread_uint(kd, nr, 4, &v) != 0)
			return kerr_push(&kd->err, "nr_node_ids");
		nr = v;
	} else
		kerr_clear(&kd->err);
	if (nr == 0 || nr > NODES_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "nr_node_ids %llu out of range",
		    (unsigned long long)nr);
	if (kvs_read(kd, a, ptrs, nr * 8) != 0)
		return kerr_push(&kd->err, "node_data");
	for (i = 0; i < nr; i++) {
		uint64_t p = le64toh(ptrs[i]);
		if (p == 0)
			continue;
		pg[*n] = p;
		nid[*n] = (int)i;
		(*n)++;
	}
	if (*n == 0)
		return kerr_set(&kd->err, KVS_E_DATA, "node_data holds no node");
	return 0;
}

/* The transparent huge page counters /proc/zoneinfo shows in huge pages
 * where the kernel counts them in pages (the kernels with nr_swapcached). */
static bool
thp_item(const char *name)
{
	static const char *const thp[] = { "nr_anon_transparent_hugepages",
	    "nr_shmem_hugepages", "nr_shmem_pmdmapped", "nr_file_hugepages",
	    "nr_file_pmdmapped" };
	size_t i;

	for (i = 0; i < sizeof(thp) / sizeof(thp[0]); i++)
		if (strcmp(name, thp[i]) == 0)
			return true;
	return false;
}

/* The zone layout, worked out once per handle. */
struct zlayout_memo {
	bool ok;
	struct zlayout L;
	uint8_t zb[ZONE_BUF_MAX];   /* one struct zone, read by linux_watermarks */
};

static struct zlayout_memo *
zlayout_memo(kvs_t *kd)
{
	static const char memo_tag;
	return kvs_memo(kd, &memo_tag, sizeof(struct zlayout_memo));
}

static int
zlayout_get(kvs_t *kd, struct zlayout *L)
{
	struct zlayout_memo *m = zlayout_memo(kd);

	if (m != NULL && m->ok) {
		*L = m->L;
		return 0;
	}
	if (zresolve(kd, L) != 0)
		return -1;
	if (m != NULL) {
		m->L = *L;
		m->ok = true;
	}
	return 0;
}

int
linux_watermarks(kvs_t *kd, uint64_t *wlow)
{
	struct zlayout_memo *m = zlayout_memo(kd);
	uint64_t pg[NODES_MAX];
	int nid[NODES_MAX], inc = 0;
	size_t nn, k, i;

	*wlow = 0;
	if (m == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (zlayout_get(kd, &m->L) != 0)
		return kerr_push(&kd->err, "page allocator zones");
	if (node_list(kd, pg, nid, &nn) != 0)
		return -1;
	for (k = 0; k < nn; k++)
		for (i = 0; i < m->L.nzones; i++) {
			const struct zlayout *L = &m->L;
			struct kfield w = L->wmark;
			if (kvs_read(kd, pg[k] + L->node_zones_off + i * L->zone_size, m->zb,
			    L->zone_size) != 0) {
				kerr_clear(&kd->err);
				inc = 1;
				continue;
			}
			w.off += 8;            /* WMARK_LOW */
			w.size = 8;
			w.kind = KVS_KIND_BASE;
			*wlow += kfield_get(m->zb, L->zone_size, &w);
			if (L->boost.present)
				*wlow += kfield_get(m->zb, L->zone_size, &L->boost);
		}
	return inc;
}

int
linux_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n)
{
	struct zlayout L;
	const struct lnx_vmnames *vnp;
	struct lnx_cpus cpus;
	struct kvs_pzone *z = NULL;
	uint64_t *pg = NULL;
	int *nid = NULL;
	uint8_t *zb = NULL;
	uint64_t a;
	size_t nn = 0, k, i, nz = 0;
	int inc = 0, r, rc = -1;
	bool thp_in_pages;

	*out = NULL;
	*n = 0;
	if (zlayout_get(kd, &L) != 0)
		return kerr_push(&kd->err, "page allocator zones");
	if ((vnp = linux_vmnames(kd)) == NULL)
		return -1;
	const struct lnx_vmnames vn = *vnp;
	thp_in_pages = linux_vmindex(&vn, LNX_VM_NODE, "nr_swapcached") >= 0 &&
	    kvs_symbol(kd, "transparent_hugepage_flags", &a, NULL) == 0;
	kerr_clear(&kd->err);
	if (linux_cpus(kd, &cpus) != 0)
		return -1;
	pg = calloc(NODES_MAX, sizeof(*pg));
	nid = calloc(NODES_MAX, sizeof(*nid));
	zb = malloc(L.zone_size);
	if (pg == NULL || nid == NULL || zb == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto out;
	}
	if (node_list(kd, pg, nid, &nn) != 0)
		goto out;
	z = calloc(nn * L.nzones, sizeof(*z));
	if (z == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto out;
	}
	for (k = 0; k < nn; k++) {
		uint64_t v, fails = 0;
		int node = nid[k], unrecl = -1;
		bool first = true;
		struct kvs_counter *ns = NULL;

		if (L.node_id.present && kread_uint(kd, pg[k] + L.node_id.off,
		    (unsigned)L.node_id.size, &v) == 0)
			node = (int)v;
		kerr_clear(&kd->err);
		if (L.kswapd_failures.present && kread_uint(kd, pg[k] + L.kswapd_failures.off,
		    (unsigned)L.kswapd_failures.size, &fails) == 0)
			unrecl = fails >= MAX_RECLAIM_RETRIES;
		kerr_clear(&kd->err);
		for (i = 0; i < L.nzones; i++) {
			struct kvs_pzone *zz = &z[nz++];
			zz->node = node;
			zz->index = (int)i;
			if ((r = one_zone(kd, &L, &vn, &cpus, pg[k] + L.node_zones_off +
			    i * L.zone_size, zz, zb)) < 0)
				goto out;
			inc |= r;
			zz->unreclaimable = unrecl;
			if (!zz->populated || !first)
				continue;
			first = false;
			/* The node's counters go with its first populated zone. */
			ns = calloc(vn.nnode ? vn.nnode : 1, sizeof(*ns));
			if (ns == NULL) {
				kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
				goto out;
			}
			zz->node_stat = ns;
			zz->nnode_stat = vn.nnode;
			{
				uint64_t vals[STATS_MAX];
				bool ok = kvs_read(kd, pg[k] + L.node_vm_stat.off, vals,
				    vn.nnode * 8) == 0;
				size_t j;
				if (!ok) {
					inc = 1;
					zz->flags |= KVS_CF_UNREADABLE;
					snprintf(zz->note, sizeof(zz->note), "the node's counters: %s",
					    kvs_geterr(kd));
					kerr_clear(&kd->err);
				}
				for (j = 0; j < vn.nnode; j++) {
					const char *nm = linux_vmname(&vn, LNX_VM_NODE, j);
					uint64_t v = ok ? clamp0(le64toh(vals[j])) : 0;
					if (thp_in_pages && thp_item(nm))
						v /= HPAGE_PMD_NR;
					counter(&ns[j], nm, v, KVS_UNIT_PAGES);
					if (!ok)
						ns[j].flags |= KVS_CF_UNREADABLE;
				}
			}
		}
	}
	*out = z;
	*n = nz;
	z = NULL;
	rc = inc;
out:
	if (z != NULL)
		kvs_pzones_free(z, nz);
	free(pg);
	free(nid);
	free(zb);
	return rc;
}
