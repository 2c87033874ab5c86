/*
 * malloc.c - malloc(9) statistics: the kmemstatistics list and
 * the kmemzones table, for every FreeBSD generation.
 *
 * Four layouts, told apart by DWARF alone (never by version string):
 *   5.x   counters live in struct malloc_type itself (ks_memuse, ks_calls...);
 *   6-11  ks_handle -> malloc_type_internal with an array mti_stats[MAXCPU];
 *   12    ks_handle -> internal whose mti_stats is a pointer to CPU 0's copy,
 *         the others following at sizeof(struct pcpu) strides;
 *   13+   the internal struct is embedded as ks_mti and mti_stats holds an
 *         offset from the value of __pcpu (per-CPU data is %gs-relative);
 *         other machines (arm64) store CPU 0's address.
 * CPUs are 0..mp_maxid filtered by all_cpus: ids may be sparse.
 *
 * A refresh reads each type's header once; on 6-11 each type's stats array
 * in one read, on 12 and 13+ the per-CPU records of neighbouring types in
 * one read per CPU (malloc_pending_stats).  Names are re-read only when the
 * entry is new or its ks_shortdesc pointer changed.
 *
 * A partial dump keeps every row it can reach: a type whose name is not in
 * the dump keeps its row flagged MEMSTAT_NAME_UNREADABLE, one whose
 * statistics (its stats array, a CPU's record, its internal struct) are not
 * keeps it flagged MEMSTAT_COUNTS_UNREADABLE with its counts 0, and a
 * malloc_type that cannot be read cuts the list there: the types before it
 * stand and the list says it is incomplete (memstat_mtl_incomplete).  Each
 * cause is a warning naming the type, its address and the physical page.
 *
 * This file owns the layout (resolve_layout, from the types), kmemzones,
 * the walk of kmemstatistics and the 5.x and 6-11 readers; the 12/13+
 * per-CPU statistics, read in runs after the walk, are malloc_pcpu.c's.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"
#include "malloc_internal.h"
#include "memstat_internal.h"

#define M_MAGIC   877983977UL
#define M_VERSION 2020110501UL
#define MT_MAX_BYTES 4096       /* sanity bound on sizeof(struct malloc_type) */
#define MT_MAX_TYPES 1000000    /* a longer kmemstatistics list is corrupt */

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

	L->direct = kfield_is_u64(&L->next, L->mt_size) &&
	    kfield_is_u64(&L->shortdesc, L->mt_size) &&
	    kfield_is_u64(&L->version, L->mt_size) &&
	    kfield_is_u64(L->gen == MGEN_13 ? &L->stats_in_mt : &L->handle, L->mt_size);
	if (L->gen == MGEN_12 || L->gen == MGEN_13) {
		struct kvs_typeinfo pc;
		L->pcpu_stride = kvs_type(kd, "struct pcpu", &pc) == 0 ? pc.size : 4096;
		kerr_clear(&kd->err);
		if (L->pcpu_stride == 0)
			L->pcpu_stride = 4096;
	}
	if (L->gen == MGEN_13) {
		/* __pcpu is a pointer variable on 13+: its value (read by
		 * layout(), it lives in memory) is the base the stored offsets
		 * are relative to; an array is the base itself. */
		struct kvs_typeinfo pv;
		if (!freebsd_zpcpu_offsets(kd)) {
			/* arm64: the stored values are CPU 0's addresses */
			L->pcpu_sym = 0;
			L->pcpu_indirect = false;
			return 0;
		}
		if (kvs_symbol(kd, "__pcpu", &L->pcpu_sym, NULL) != 0)
			return kerr_push(&kd->err, "malloc(9) per-CPU statistics");
		L->pcpu_indirect = !(kvs_variable(kd, "__pcpu", &pv) == 0 &&
		    pv.kind == KVS_KIND_ARRAY);
		kerr_clear(&kd->err);
	}
	return 0;
}

/* The layout: what the types say, worked out on the handle's first refresh
 * and kept in its memo, and what lives in memory, read every time. */
static int
layout(kvs_t *kd, struct mlayout *L)
{
	static const char memo_tag;
	struct mlayout_memo {
		bool ok;
		struct mlayout L;
	} *m = kvs_memo(kd, &memo_tag, sizeof(*m));

	if (m != NULL && m->ok) {
		*L = m->L;
	} else {
		if (resolve_layout(kd, L) != 0)
			return -1;
		if (m != NULL) {
			m->L = *L;
			m->ok = true;
		}
	}
	L->pcpu_base = L->pcpu_sym;
	if (L->gen == MGEN_13 && L->pcpu_indirect && kread_u64(kd, L->pcpu_sym, &L->pcpu_base) != 0)
		return kerr_push(&kd->err, "reading __pcpu");
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
	/* One read for the table, else one per element (an error names it). */
	uint8_t all[8192];
	bool bulk = count * ti.elem_size <= sizeof(all) &&
	    kvs_read(kd, addr, all, (size_t)(count * ti.elem_size)) == 0;
	if (!bulk)
		kerr_clear(&kd->err);
	for (i = 0; i < count; i++) {
		uint32_t sz;
		if (bulk) {
			memcpy(&sz, all + i * ti.elem_size, 4);
			sz = le32toh(sz);
		} else if (kread_u32(kd, addr + i * ti.elem_size, &sz) != 0)
			return kerr_push(&kd->err, "reading kmemzones[%llu]",
			    (unsigned long long)i);
		sizes[n++] = sz;
		if (sz == 0)
			break;          /* sentinel */
	}
	mtl_set_list_zones(list, sizes, n);
	return 0;
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

/* Counters only grow, frees never pass allocations: a row breaking that is
 * kept as read, and flagged (kvs_warnings). */
void
malloc_flag_implausible(kvs_t *kd, const struct memory_type *mt, bool wrapped)
{
	if (wrapped || mt->mt_numfrees > mt->mt_numallocs || mt->mt_memfreed > mt->mt_memalloced)
		kvs_warn(kd, "malloc type \"%s\" at 0x%llx: implausible counters (%llu "
		    "allocations, %llu frees, %llu bytes allocated, %llu freed%s)", mt->mt_name,
		    (unsigned long long)mt->mt_kaddr, (unsigned long long)mt->mt_numallocs,
		    (unsigned long long)mt->mt_numfrees, (unsigned long long)mt->mt_memalloced,
		    (unsigned long long)mt->mt_memfreed, wrapped ? "; a sum over the CPUs "
		    "wrapped past 2^64" : "");
}

/* How a warning names a type: its name, or ? when that is not readable. */
const char *
malloc_type_name(const struct memory_type *mt)
{
	return mt->mt_name[0] != '\0' ? mt->mt_name : "?";
}

/* A 5.x or 6-11 type whose statistics are not in the dump: its counts are
 * not known (0), its per-CPU records too. */
static void
counts_unknown(struct memory_type *mt)
{
	unsigned c;

	mt->mt_memalloced = mt->mt_memfreed = mt->mt_numallocs = mt->mt_numfrees = 0;
	mt->mt_sizemask = mt->mt_bytes = mt->mt_count = 0;
	for (c = 0; mt->mt_percpu_valid && c < mt->mt_pa_ncpu; c++)
		memset(mt_pa(mt, c), 0, sizeof(struct mt_percpu_alloc_s));
}

/* Fill one entry of a 5.x or 6-11 kernel from the kernel. */
static int
read_type(kvs_t *kd, const struct mlayout *L, const struct kcpus *cpus,
    struct memory_type *mt, const uint8_t *mtbuf)
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
	{
		/* 6-11 (12 and 13+ are read by malloc_pending_stats): the
		 * array for the CPUs that can exist, read in chunks of whole
		 * records; a chunk that cannot be read is read CPU by CPU, so
		 * an error names the CPU. */
		uint64_t base = kfield_get(mtbuf, L->mt_size, &L->handle) + L->stats_in_mti.off;
		uint8_t chunk[16384];
		int per = (int)(sizeof(chunk) / L->st_size), c0;
		for (c0 = 0; c0 <= cpus->maxid && (uint64_t)c0 < L->stats_count; c0 += per) {
			int n = per, k;
			if (n > cpus->maxid + 1 - c0)
				n = cpus->maxid + 1 - c0;
			if ((uint64_t)(c0 + n) > L->stats_count)
				n = (int)(L->stats_count - (uint64_t)c0);
			bool bulk = kvs_read(kd, base + (uint64_t)c0 * L->st_size, chunk,
			    (size_t)n * L->st_size) == 0;
			for (k = 0; k < n; k++) {
				c = c0 + k;
				if (!kcpu_present(cpus, c))
					continue;
				if (!bulk && kvs_read(kd, base + (uint64_t)c * L->st_size, st,
				    L->st_size) != 0)
					return kerr_push(&kd->err, "CPU %d statistics", c);
				wrapped |= add_stats(L, mt, c, bulk ? chunk + (size_t)k * L->st_size : st);
			}
		}
	}
	mt->mt_bytes = mt->mt_memalloced - mt->mt_memfreed;
	mt->mt_count = mt->mt_numallocs - mt->mt_numfrees;
	malloc_flag_implausible(kd, mt, wrapped);
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
	uint64_t headsym, p, prev = 0;
	uint8_t mtcopy[MT_MAX_BYTES];
	const uint8_t *mtbuf = mtcopy;
	unsigned maxcpus, rows = 0;
	struct pending pend = { list, NULL, NULL, 0, 0, 0 };
	struct kvs_error saved;
	int walk_err = MEMSTAT_ERROR_KVM;
	bool cut = false;

	kerr_clear(&kd->err);
	kd->nwarn = 0;
	kvs_tlb_flush(kd);          /* live memory may have remapped since */
	if (layout(kd, &L) != 0) {
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
	/* 12 and 13+ put their per-CPU counters in the list's store
	 * (malloc_pending_stats, malloc_pending_finish): the banks are not
	 * shown, so not cleared; no generation writes the caches' slots. */
	if (L.gen == MGEN_12 || L.gen == MGEN_13) {
		list->mtl_fill_alloc = MTL_PCPU_UNUSED;
		list->mtl_defer_counters = true;        /* malloc_pending_finish */
	}
	list->mtl_fill_cache = MTL_PCPU_UNUSED;
	kwalk_init(&w, kvs_dump_bound(kd, L.mt_size, MT_MAX_TYPES));
	for (; p != 0; p = mt_get(&L, mtbuf, &L.next)) {
		struct memory_type *mt;
		uint64_t desc, unread = 0;
		int is_new;

		if (kwalk_step(kd, &w, p, "kmemstatistics") != 0)
			goto walk_failed;
		/* Where the type lies in the dump, or a copy. */
		if ((mtbuf = kvs_peek(kd, p, L.mt_size)) == NULL) {
			if (kvs_read(kd, p, mtcopy, L.mt_size) != 0) {
				/* A partial dump: the list is cut here; the
				 * types before it stand. */
				mtl_list_cut(list, kd, "kmemstatistics", p, prev,
				    "the malloc types after it");
				cut = true;
				break;
			}
			mtbuf = mtcopy;
		}
		prev = p;
		if (L.version.present && mt_get(&L, mtbuf, &L.version) != M_VERSION) {
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
		if (mt == NULL) {
			walk_err = MEMSTAT_ERROR_NOMEMORY;
			goto walk_failed;
		}
		desc = mt_get(&L, mtbuf, &L.shortdesc);
		/* An empty name is one a refresh could not read: tried again. */
		if (is_new || mt->mt_namekey != desc || mt->mt_name[0] == '\0') {
			char name[MEMTYPE_MAXNAME];
			if (desc == 0)
				snprintf(name, sizeof(name), "(null)");
			else if (kvs_read_string(kd, desc, name, sizeof(name), NULL) < 0) {
				/* A partial dump: the row stays, without its name. */
				kvs_warn_lost(kd, "malloc type at 0x%llx: its name (at 0x%llx) is not "
				    "readable: %s", (unsigned long long)p, (unsigned long long)desc,
				    kvs_geterr(kd));
				kerr_clear(&kd->err);
				name[0] = '\0';
			}
			mtl_set_name(mt, name, desc);
		}
		if (mt->mt_name[0] == '\0')
			unread |= MEMSTAT_NAME_UNREADABLE;
		if (L.gen == MGEN_12 || L.gen == MGEN_13) {
			/* Statistics later, all types at once (malloc_pending_stats, in malloc_pcpu.c). */
			if (malloc_pending_add(kd, list, &L, &pend, mt, mtbuf, unread) != 0) {
				kerr_push(&kd->err, "malloc type \"%s\" at 0x%llx", mt->mt_name,
				    (unsigned long long)p);
				goto walk_failed;
			}
			continue;
		}
		if (read_type(kd, &L, &cpus, mt, mtbuf) != 0) {
			/* A partial dump: the row stays, its counts not known. */
			kvs_warn_lost(kd, "malloc type \"%s\" at 0x%llx: its statistics are not "
			    "readable: %s", malloc_type_name(mt), (unsigned long long)p,
			    kvs_geterr(kd));
			kerr_clear(&kd->err);
			counts_unknown(mt);
			unread |= MEMSTAT_COUNTS_UNREADABLE;
		}
		mt->mt_flags = unread;
	}
	if (pend.n > 0 && malloc_pending_stats(kd, &L, &cpus, &pend) != 0)
		return fail(list, kd, kd->err.status == KVS_E_NOMEM ? MEMSTAT_ERROR_NOMEMORY :
		    MEMSTAT_ERROR_KVM);
	if (rows == 0 && !cut) {
		/* Every type was skipped (bad magic or version): the same. */
		kerr_set(&kd->err, KVS_E_MISMATCH, "none of the %u malloc types on kmemstatistics "
		    "is readable (%s), so the kernel %s does not match the dump %s", kd->nwarn,
		    kd->warn, kd->kernel_path, kd->core_path);
		return fail(list, kd, MEMSTAT_ERROR_KVM);
	}
	if (pend.n > 0)
		malloc_pending_finish(kd, &cpus, &pend);
	mtl_refresh_commit(list, ALLOCATOR_MALLOC);
	return 0;

walk_failed:
	/* The types before the one that failed would have had their
	 * statistics read first: an error there is the one to report. */
	saved = kd->err;
	if (pend.n > 0 && malloc_pending_stats(kd, &L, &cpus, &pend) != 0)
		return fail(list, kd, kd->err.status == KVS_E_NOMEM ? MEMSTAT_ERROR_NOMEMORY :
		    MEMSTAT_ERROR_KVM);
	kd->err = saved;
	return fail(list, kd, walk_err);
}
