/*
 * walk_freebsd_malloc.c - malloc(9) statistics: the kmemstatistics list and
 * the kmemzones table, for every FreeBSD generation.
 *
 * Four layouts, told apart by DWARF alone (never by version string):
 *   5.x   counters live in struct malloc_type itself (ks_memuse, ks_calls...);
 *   6-11  ks_handle -> malloc_type_internal with an array mti_stats[MAXCPU];
 *   12    ks_handle -> internal whose mti_stats is a pointer to CPU 0's copy,
 *         the others following at sizeof(struct pcpu) strides;
 *   13+   the internal struct is embedded as ks_mti and mti_stats holds an
 *         offset from the value of __pcpu (per-CPU data is %gs-relative).
 * CPUs are 0..mp_maxid filtered by all_cpus: ids may be sparse.
 *
 * A refresh reads each type's header once and each present CPU's 64-byte
 * record once.  Names are re-read only when the entry is new or its
 * ks_shortdesc pointer changed.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"
#include "memstat_internal.h"

#define M_MAGIC   877983977UL
#define M_VERSION 2020110501UL
#define MT_MAX_BYTES 4096       /* sanity bound on sizeof(struct malloc_type) */
#define MT_MAX_TYPES 1000000    /* a longer kmemstatistics list is corrupt */

enum mgen { MGEN_5 = 5, MGEN_6 = 6, MGEN_12 = 12, MGEN_13 = 13 };

struct mlayout {
	enum mgen gen;
	uint64_t mt_size;                 /* sizeof(struct malloc_type) */
	struct kfield next, magic, version, shortdesc, handle;
	struct kfield stats_in_mt;        /* 13+: ks_mti.mti_stats */
	struct kfield stats_in_mti;       /* 6-12: mti_stats in the internal struct */
	/* 5.x inline counters */
	struct kfield memuse, inuse, calls, maxused, size, limit;
	/* struct malloc_type_stats */
	uint64_t st_size;
	struct kfield memalloced, memfreed, numallocs, numfrees, sizemask;
	uint64_t pcpu_base;               /* 13+: value of __pcpu */
	uint64_t pcpu_stride;             /* 12/13+: sizeof(struct pcpu) */
	uint64_t stats_count;             /* 6-11: array bound (MAXCPU) */
	bool canonical;                   /* stats are 5 u64s at offsets 0..32 */
};

static int
resolve_layout(kvs_t *kd, struct mlayout *L)
{
	static const char T[] = "struct malloc_type";
	static const char S[] = "struct malloc_type_stats";
	struct kvs_typeinfo ti;

	memset(L, 0, sizeof(*L));
	if (kvs_type(kd, T, &ti) != 0)
		return kerr_push(&kd->err, "malloc(9) layout");
	L->mt_size = ti.size;
	if (L->mt_size == 0 || L->mt_size > MT_MAX_BYTES)
		return kerr_set(&kd->err, KVS_E_DATA, "implausible sizeof(%s) = %llu", T,
		    (unsigned long long)L->mt_size);
	if (kfield(kd, T, "ks_next", &L->next, true) != 0 ||
	    kfield(kd, T, "ks_shortdesc", &L->shortdesc, true) != 0 ||
	    kfield(kd, T, "ks_magic", &L->magic, false) != 0 ||
	    kfield(kd, T, "ks_version", &L->version, false) != 0 ||
	    kfield(kd, T, "ks_handle", &L->handle, false) != 0 ||
	    kfield(kd, T, "ks_mti.mti_stats", &L->stats_in_mt, false) != 0)
		return kerr_push(&kd->err, "malloc(9) layout");

	if (L->stats_in_mt.present) {
		L->gen = MGEN_13;
	} else if (L->handle.present) {
		if (kfield(kd, "struct malloc_type_internal", "mti_stats",
		    &L->stats_in_mti, true) != 0)
			return kerr_push(&kd->err, "malloc(9) layout");
		if (L->stats_in_mti.kind == KVS_KIND_POINTER)
			L->gen = MGEN_12;
		else if (L->stats_in_mti.kind == KVS_KIND_ARRAY)
			L->gen = MGEN_6;
		else
			return kerr_set(&kd->err, KVS_E_VERSION, "malloc_type_internal."
			    "mti_stats is neither a pointer nor an array");
		L->stats_count = L->stats_in_mti.count;
	} else {
		if (kfield(kd, T, "ks_memuse", &L->memuse, true) != 0 ||
		    kfield(kd, T, "ks_inuse", &L->inuse, true) != 0 ||
		    kfield(kd, T, "ks_calls", &L->calls, true) != 0 ||
		    kfield(kd, T, "ks_maxused", &L->maxused, false) != 0 ||
		    kfield(kd, T, "ks_size", &L->size, false) != 0 ||
		    kfield(kd, T, "ks_limit", &L->limit, false) != 0)
			return kerr_push(&kd->err, "malloc(9) layout: no per-CPU "
			    "statistics and no inline counters");
		L->gen = MGEN_5;
		return 0;
	}

	if (kvs_type(kd, S, &ti) != 0)
		return kerr_push(&kd->err, "malloc(9) layout");
	L->st_size = ti.size;
	if (kfield(kd, S, "mts_memalloced", &L->memalloced, true) != 0 ||
	    kfield(kd, S, "mts_memfreed", &L->memfreed, true) != 0 ||
	    kfield(kd, S, "mts_numallocs", &L->numallocs, true) != 0 ||
	    kfield(kd, S, "mts_numfrees", &L->numfrees, true) != 0 ||
	    kfield(kd, S, "mts_size", &L->sizemask, true) != 0)
		return kerr_push(&kd->err, "malloc(9) layout");
	if (L->st_size == 0 || L->st_size > 512)
		return kerr_set(&kd->err, KVS_E_DATA, "implausible sizeof(%s)", S);
	L->canonical = L->st_size >= 40 &&
	    L->memalloced.off == 0 && L->memalloced.size == 8 &&
	    L->memfreed.off == 8 && L->memfreed.size == 8 &&
	    L->numallocs.off == 16 && L->numallocs.size == 8 &&
	    L->numfrees.off == 24 && L->numfrees.size == 8 &&
	    L->sizemask.off == 32 && L->sizemask.size == 8 &&
	    getenv("KVS_MALLOC_FIELDWISE") == NULL;  /* tests: hold the general path to truth */

	if (L->gen == MGEN_12 || L->gen == MGEN_13) {
		struct kvs_typeinfo pc;
		L->pcpu_stride = kvs_type(kd, "struct pcpu", &pc) == 0 ? pc.size : 4096;
		kerr_clear(&kd->err);
		if (L->pcpu_stride == 0)
			L->pcpu_stride = 4096;
	}
	if (L->gen == MGEN_13) {
		/* __pcpu is a pointer variable on 13+: its value is the base the
		 * stored offsets are relative to. */
		struct kvs_typeinfo pv;
		uint64_t addr;
		if (kvs_symbol(kd, "__pcpu", &addr, NULL) != 0)
			return kerr_push(&kd->err, "malloc(9) per-CPU statistics");
		if (kvs_variable(kd, "__pcpu", &pv) == 0 && pv.kind == KVS_KIND_ARRAY)
			L->pcpu_base = addr;
		else if (kread_u64(kd, addr, &L->pcpu_base) != 0)
			return kerr_push(&kd->err, "reading __pcpu");
		kerr_clear(&kd->err);
	}
	return 0;
}

/* kmemzones: element size and count from DWARF; kz_size is the first member
 * (offset 0) and kz_name the pointer after it.  Staged in the list, which
 * keeps it if the refresh succeeds. */
static int
read_zones(kvs_t *kd, struct memory_type_list *list)
{
	struct kvs_typeinfo ti;
	uint64_t addr, count, i;
	size_t sizes[MEMSTAT_ZONES_MAX];
	size_t n = 0;

	if (kvs_symbol(kd, "kmemzones", &addr, NULL) != 0) {
		kerr_clear(&kd->err);
		mtl_set_list_zones(list, NULL, 0);
		return 0;
	}
	if (kvs_variable(kd, "kmemzones", &ti) != 0 || ti.kind != KVS_KIND_ARRAY ||
	    ti.elem_size < 4)
		return kerr_push(&kd->err, "kmemzones has no usable array type");
	count = ti.count;
	/* Recent kernels export the count (sentinel included). */
	count = kread_sym_uint_or(kd, "vm_malloc_zone_count", count);
	if (count > ti.count && ti.count != 0)
		count = ti.count;
	if (count > MEMSTAT_ZONES_MAX)
		count = MEMSTAT_ZONES_MAX;
	for (i = 0; i < count; i++) {
		uint32_t sz;
		if (kread_u32(kd, addr + i * ti.elem_size, &sz) != 0)
			return kerr_push(&kd->err, "reading kmemzones[%llu]",
			    (unsigned long long)i);
		sizes[n++] = sz;
		if (sz == 0)
			break;          /* sentinel */
	}
	mtl_set_list_zones(list, sizes, n);
	return 0;
}

/* Address of CPU c's malloc_type_stats for the type at `mtaddr`. */
static uint64_t
stats_addr(const struct mlayout *L, uint64_t mtaddr, const uint8_t *mtbuf,
    const uint8_t *mtibuf, size_t mtilen, int c)
{
	switch (L->gen) {
	case MGEN_13:
		return L->pcpu_base + kfield_get(mtbuf, L->mt_size, &L->stats_in_mt) +
		    (uint64_t)c * L->pcpu_stride;
	case MGEN_12:
		return kfield_get(mtibuf, mtilen, &L->stats_in_mti) +
		    (uint64_t)c * L->pcpu_stride;
	default:
		(void)mtaddr;
		return 0;
	}
}

/* Returns true when a sum wrapped past 2^64 (the row is then implausible). */
static bool
add_stats(const struct mlayout *L, struct memory_type *mt, int c, const uint8_t *st)
{
	bool wrapped;
	uint64_t a, f, na, nf, sz;

	if (L->canonical) {
		/* Every kernel since 6.0 lays the five counters out as five
		 * consecutive u64s at the start: one copy instead of five
		 * field extractions on the hottest path of a refresh. */
		uint64_t v[5];
		memcpy(v, st, sizeof(v));
		a = le64toh(v[0]);
		f = le64toh(v[1]);
		na = le64toh(v[2]);
		nf = le64toh(v[3]);
		sz = le64toh(v[4]);
	} else {
		a = kfield_get(st, L->st_size, &L->memalloced);
		f = kfield_get(st, L->st_size, &L->memfreed);
		na = kfield_get(st, L->st_size, &L->numallocs);
		nf = kfield_get(st, L->st_size, &L->numfrees);
		sz = kfield_get(st, L->st_size, &L->sizemask);
	}

	wrapped = __builtin_add_overflow(mt->mt_memalloced, a, &mt->mt_memalloced);
	wrapped |= __builtin_add_overflow(mt->mt_memfreed, f, &mt->mt_memfreed);
	wrapped |= __builtin_add_overflow(mt->mt_numallocs, na, &mt->mt_numallocs);
	wrapped |= __builtin_add_overflow(mt->mt_numfrees, nf, &mt->mt_numfrees);
	mt->mt_sizemask |= sz;
	if (!mt->mt_percpu_valid)
		return wrapped;
	mt->mt_percpu_alloc[c].mtp_memalloced = a;
	mt->mt_percpu_alloc[c].mtp_memfreed = f;
	mt->mt_percpu_alloc[c].mtp_numallocs = na;
	mt->mt_percpu_alloc[c].mtp_numfrees = nf;
	mt->mt_percpu_alloc[c].mtp_sizemask = sz;
	return wrapped;
}

/* Fill one entry from the kernel. */
static int
read_type(kvs_t *kd, const struct mlayout *L, const struct kcpus *cpus,
    struct memory_type *mt, uint64_t p, const uint8_t *mtbuf)
{
	uint8_t st[512];
	bool wrapped = false;
	int c;

	if (L->gen == MGEN_5) {
		uint64_t inuse = kfield_get(mtbuf, L->mt_size, &L->inuse);
		uint64_t calls = kfield_get(mtbuf, L->mt_size, &L->calls);
		mt->mt_bytes = kfield_get(mtbuf, L->mt_size, &L->memuse);
		mt->mt_count = inuse;
		mt->mt_numallocs = calls;
		/* 5.x kept no free counter; calls include failed attempts, so
		 * this is an upper bound on frees. */
		mt->mt_numfrees = calls >= inuse ? calls - inuse : 0;
		mt->mt_memalloced = mt->mt_bytes;
		mt->mt_sizemask = kfield_get(mtbuf, L->mt_size, &L->size);
		mt->mt_byteslimit = kfield_get(mtbuf, L->mt_size, &L->limit);
		mt->mt_maxused = kfield_get(mtbuf, L->mt_size, &L->maxused);
		return 0;
	}
	if (L->gen == MGEN_6) {
		/* One read of the whole array for the CPUs that can exist. */
		uint64_t base = kfield_get(mtbuf, L->mt_size, &L->handle) + L->stats_in_mti.off;
		for (c = 0; c <= cpus->maxid && (uint64_t)c < L->stats_count; c++) {
			if (!kcpu_present(cpus, c))
				continue;
			if (kvs_read(kd, base + (uint64_t)c * L->st_size, st, L->st_size) != 0)
				return kerr_push(&kd->err, "CPU %d statistics", c);
			wrapped |= add_stats(L, mt, c, st);
		}
	} else {
		uint8_t mti[256];
		size_t mtilen = 0;
		if (L->gen == MGEN_12) {
			mtilen = (size_t)(L->stats_in_mti.off + 8);
			if (mtilen > sizeof(mti) ||
			    kvs_read(kd, kfield_get(mtbuf, L->mt_size, &L->handle), mti, mtilen) != 0)
				return kerr_push(&kd->err, "malloc_type_internal");
		}
		for (c = 0; c <= cpus->maxid; c++) {
			if (!kcpu_present(cpus, c))
				continue;
			if (kvs_read(kd, stats_addr(L, p, mtbuf, mti, mtilen, c), st, L->st_size) != 0)
				return kerr_push(&kd->err, "CPU %d statistics", c);
			wrapped |= add_stats(L, mt, c, st);
		}
	}
	mt->mt_bytes = mt->mt_memalloced - mt->mt_memfreed;
	mt->mt_count = mt->mt_numallocs - mt->mt_numfrees;
	/* Counters only grow, frees never pass allocations: a row breaking
	 * that is kept as read, and flagged (kvs_warnings). */
	if (wrapped || mt->mt_numfrees > mt->mt_numallocs || mt->mt_memfreed > mt->mt_memalloced)
		kvs_warn(kd, "malloc type \"%s\" at 0x%llx: implausible counters (%llu "
		    "allocations, %llu frees, %llu bytes allocated, %llu freed%s)", mt->mt_name,
		    (unsigned long long)p, (unsigned long long)mt->mt_numallocs,
		    (unsigned long long)mt->mt_numfrees, (unsigned long long)mt->mt_memalloced,
		    (unsigned long long)mt->mt_memfreed, wrapped ? "; a sum over the CPUs "
		    "wrapped past 2^64" : "");
	return 0;
}

int
memstat_kvm_malloc_layout(void *kvm_handle)
{
	kvs_t *kd = kvm_handle;
	struct mlayout L;

	kerr_clear(&kd->err);
	if (resolve_layout(kd, &L) != 0)
		return -1;
	return (int)L.gen;
}

int
memstat_kvm_vmstat_format(void *kvm_handle, int allocator)
{
	kvs_t *kd = kvm_handle;
	int fmt;

	switch (allocator) {
	case ALLOCATOR_MALLOC:
		if (memstat_kvm_malloc_layout(kd) == 5)
			return 5;
		/* 14's vmstat sizes rows from the kernel's zone table, which
		 * kernels export through vm_malloc_zone_count. */
		fmt = kvs_symbol(kd, "vm_malloc_zone_count", NULL, NULL) == 0 ? 14 : 6;
		kerr_clear(&kd->err);
		return fmt;
	case ALLOCATOR_UMA:
		/* 14's vmstat -z adds the cross-domain column. */
		fmt = kvs_has_member(kd, "struct uma_zone", "uz_xdomain") == 1 ? 14 : 12;
		kerr_clear(&kd->err);
		return fmt;
	default:
		return kerr_set(&kd->err, KVS_E_INVAL, "allocator %d has no vmstat format",
		    allocator);
	}
}

static int
fail(struct memory_type_list *list, kvs_t *kd, int err)
{
	mtl_refresh_abort(list, ALLOCATOR_MALLOC, err);
	(void)kd;
	return -1;
}

/*
 * memstat_kvm_malloc: walk kmemstatistics into the list.  One pass; each
 * entry is found by its kernel address; names are re-read only for new
 * entries or when ks_shortdesc moved.  Any read failure restores the list's
 * previous contents (libmemstat would empty it).
 */
int
memstat_kvm_malloc(struct memory_type_list *list, void *kvm_handle)
{
	kvs_t *kd = kvm_handle;
	struct mlayout L;
	struct kcpus cpus;
	struct kwalk w;
	uint64_t headsym, p;
	uint8_t mtbuf[MT_MAX_BYTES];
	unsigned maxcpus, rows = 0;

	kerr_clear(&kd->err);
	kd->nwarn = 0;
	kvs_tlb_flush(kd);          /* live memory may have remapped since */
	if (resolve_layout(kd, &L) != 0) {
		list->mtl_error = MEMSTAT_ERROR_KVM;
		return -1;
	}
	if (L.gen == MGEN_5) {
		memset(&cpus, 0, sizeof(cpus));
		cpus.maxid = 0;
		cpus.mask[0] = 1;
	} else if (kcpus_read(kd, &cpus) != 0) {
		list->mtl_error = MEMSTAT_ERROR_KVM;
		return -1;
	}
	maxcpus = (unsigned)cpus.maxid + 1;
	if (kvs_symbol(kd, "kmemstatistics", &headsym, NULL) != 0) {
		list->mtl_error = MEMSTAT_ERROR_KVM_NOSYMBOL;
		return -1;
	}
	if (read_zones(kd, list) != 0 || kread_u64(kd, headsym, &p) != 0) {
		list->mtl_error = MEMSTAT_ERROR_KVM;
		return -1;
	}
	/* Every kernel registers malloc types as it boots (SYSINIT, before any
	 * dump can be taken): an empty list is a kernel that does not match the
	 * dump (one not verified, KVS_O_NOVERIFY), never "no types". */
	if (p == 0) {
		kerr_set(&kd->err, KVS_E_MISMATCH, "kmemstatistics at 0x%llx is NULL: no malloc "
		    "type is registered, so the kernel %s does not match the dump %s",
		    (unsigned long long)headsym, kd->kernel_path, kd->core_path);
		list->mtl_error = MEMSTAT_ERROR_KVM;
		return -1;
	}
	if (mtl_refresh_begin(list, ALLOCATOR_MALLOC, maxcpus) != 0)
		return -1;
	kwalk_init(&w, kvs_dump_bound(kd, L.mt_size, MT_MAX_TYPES));
	for (; p != 0; p = kfield_get(mtbuf, L.mt_size, &L.next)) {
		struct memory_type *mt;
		uint64_t desc;
		int is_new;

		if (kwalk_step(kd, &w, p, "kmemstatistics") != 0)
			return fail(list, kd, MEMSTAT_ERROR_KVM);
		if (kvs_read(kd, p, mtbuf, L.mt_size) != 0) {
			kerr_push(&kd->err, "malloc type at 0x%llx", (unsigned long long)p);
			return fail(list, kd, MEMSTAT_ERROR_KVM);
		}
		if (L.version.present && kfield_get(mtbuf, L.mt_size, &L.version) != M_VERSION) {
			kvs_warn(kd, "malloc type at 0x%llx: ks_version %llu, expected %lu; skipped",
			    (unsigned long long)p, (unsigned long long)kfield_get(mtbuf,
			    L.mt_size, &L.version), M_VERSION);
			continue;
		}
		if (!L.version.present && L.magic.present &&
		    kfield_get(mtbuf, L.mt_size, &L.magic) != M_MAGIC) {
			kvs_warn(kd, "malloc type at 0x%llx: ks_magic 0x%llx, expected 0x%lx; skipped",
			    (unsigned long long)p, (unsigned long long)kfield_get(mtbuf,
			    L.mt_size, &L.magic), M_MAGIC);
			continue;
		}
		rows++;
		mt = mtl_upsert(list, ALLOCATOR_MALLOC, p, &is_new);
		if (mt == NULL)
			return fail(list, kd, MEMSTAT_ERROR_NOMEMORY);
		desc = kfield_get(mtbuf, L.mt_size, &L.shortdesc);
		if (is_new || mt->mt_namekey != desc) {
			char name[MEMTYPE_MAXNAME];
			if (desc == 0)
				snprintf(name, sizeof(name), "(null)");
			else if (kvs_read_string(kd, desc, name, sizeof(name), NULL) < 0) {
				kerr_push(&kd->err, "name of malloc type at 0x%llx",
				    (unsigned long long)p);
				return fail(list, kd, MEMSTAT_ERROR_KVM);
			}
			mtl_set_name(mt, name, desc);
		}
		if (read_type(kd, &L, &cpus, mt, p, mtbuf) != 0) {
			kerr_push(&kd->err, "malloc type \"%s\" at 0x%llx", mt->mt_name,
			    (unsigned long long)p);
			return fail(list, kd, MEMSTAT_ERROR_KVM);
		}
	}
	if (rows == 0) {
		/* Every type was skipped (bad magic or version): the same. */
		kerr_set(&kd->err, KVS_E_MISMATCH, "none of the %u malloc types on kmemstatistics "
		    "is readable (%s), so the kernel %s does not match the dump %s", kd->nwarn,
		    kd->warn, kd->kernel_path, kd->core_path);
		return fail(list, kd, MEMSTAT_ERROR_KVM);
	}
	mtl_refresh_commit(list, ALLOCATOR_MALLOC);
	return 0;
}
