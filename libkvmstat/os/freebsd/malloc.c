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
 * A refresh reads each type's header once; on 6-11 each type's stats array
 * in one read, on 12 and 13+ the per-CPU records of neighbouring types in
 * one read per CPU (pending_stats).  Names are re-read only when the entry
 * is new or its ks_shortdesc pointer changed.
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
	uint64_t pcpu_base;               /* 13+: value of __pcpu (read each refresh) */
	uint64_t pcpu_sym;                /* 13+: where __pcpu is */
	bool pcpu_indirect;               /* 13+: __pcpu is a pointer to the base */
	uint64_t pcpu_stride;             /* 12/13+: sizeof(struct pcpu) */
	uint64_t stats_count;             /* 6-11: array bound (MAXCPU) */
	bool canonical;                   /* stats are 5 u64s at offsets 0..32 */
	bool direct;                      /* the fields the walk reads are u64s */
};

/* A field of struct malloc_type, read where it lies (kfield_u64) when the
 * layout allows it, as most do. */
static inline uint64_t
mt_get(const struct mlayout *L, const uint8_t *mtbuf, const struct kfield *f)
{
	return L->direct ? kfield_u64(mtbuf, f) : kfield_get(mtbuf, L->mt_size, f);
}

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
static void
flag_implausible(kvs_t *kd, const struct memory_type *mt, bool wrapped)
{
	if (wrapped || mt->mt_numfrees > mt->mt_numallocs || mt->mt_memfreed > mt->mt_memalloced)
		kvs_warn(kd, "malloc type \"%s\" at 0x%llx: implausible counters (%llu "
		    "allocations, %llu frees, %llu bytes allocated, %llu freed%s)", mt->mt_name,
		    (unsigned long long)mt->mt_kaddr, (unsigned long long)mt->mt_numallocs,
		    (unsigned long long)mt->mt_numfrees, (unsigned long long)mt->mt_memalloced,
		    (unsigned long long)mt->mt_memfreed, wrapped ? "; a sum over the CPUs "
		    "wrapped past 2^64" : "");
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
		/* 6-11 (12 and 13+ are read by pending_stats): the array for
		 * the CPUs that can exist, read in chunks of whole records; a
		 * chunk that cannot be read is read CPU by CPU, so an error
		 * names the CPU. */
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
	flag_implausible(kd, mt, wrapped);
	return 0;
}

/*
 * 12 and 13+: the statistics of every type, read after the walk.  The
 * records of CPU 0 sit side by side in a few pages (the kernel allocates
 * them from a per-CPU zone), and every other CPU's copy is the same
 * distance further, so a run of neighbouring records is one read per CPU,
 * not one per type and CPU.  The walk keeps, per type, its entry and the
 * address of CPU 0's record, in the list's working space (no allocation
 * once it is large enough).
 */
_Static_assert(sizeof(struct mt_percpu_alloc_s) == 40,
    "a per-CPU record is the five counters of a canonical malloc_type_stats");

struct pitem {
	struct memory_type *mt;
	uint64_t base;                    /* CPU 0's malloc_type_stats */
	/* Sums kept here, next to each other, and written to the entry once:
	 * the entries are large and far apart. */
	uint64_t alloced, freed, nallocs, nfrees, mask;
	bool wrapped;                     /* a sum passed 2^64 */
	bool recheck;                     /* values too large for the fast sum */
	bool percpu;                      /* the entry keeps per-CPU counters: */
	struct mt_percpu_alloc_s *pa;     /* CPU c's at pa[c * pstride], in the */
	size_t pstride;                   /* list's store (NULL: not yet placed) */
};

struct pending {
	struct memory_type_list *list;
	struct pitem *item;               /* mtl_scratch 0, in list order */
	struct krec *rec;                 /* mtl_scratch 1 */
	size_t n, cap;
};

static int
pending_add(kvs_t *kd, struct memory_type_list *list, const struct mlayout *L,
    struct pending *pd, struct memory_type *mt, uint64_t p, const uint8_t *mtbuf)
{
	uint8_t mti[256];
	uint64_t base;

	(void)p;
	if (L->gen == MGEN_12) {
		size_t mtilen = (size_t)(L->stats_in_mti.off + 8);
		if (mtilen > sizeof(mti) ||
		    kvs_read(kd, mt_get(L, mtbuf, &L->handle), mti, mtilen) != 0)
			return kerr_push(&kd->err, "malloc_type_internal");
		base = kfield_get(mti, mtilen, &L->stats_in_mti);
	} else
		base = L->pcpu_base + mt_get(L, mtbuf, &L->stats_in_mt);
	if (pd->n == pd->cap) {
		size_t cap = pd->cap ? pd->cap * 2 : 256;
		struct pitem *it = mtl_scratch(list, 0, cap * sizeof(*it));
		struct krec *r = it == NULL ? NULL : mtl_scratch(list, 1, cap * sizeof(*r));
		if (r == NULL || cap > UINT32_MAX)
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		pd->item = it;
		pd->rec = r;
		pd->cap = cap;
	}
	memset(&pd->item[pd->n], 0, sizeof(pd->item[pd->n]));
	pd->item[pd->n].mt = mt;
	pd->item[pd->n].base = base;
	pd->item[pd->n].percpu = mt->mt_percpu_valid;
	pd->rec[pd->n].addr = base;
	pd->rec[pd->n].item = (uint32_t)pd->n;
	pd->rec[pd->n].slot = 0;
	pd->n++;
	return 0;
}

/* One CPU's record of one type. */
static inline void
pending_one(const struct mlayout *L, struct pitem *it, int c, const uint8_t *st)
{
	uint64_t v[5];

	if (L->canonical) {
		memcpy(v, st, sizeof(v));
		v[0] = le64toh(v[0]);
		v[1] = le64toh(v[1]);
		v[2] = le64toh(v[2]);
		v[3] = le64toh(v[3]);
		v[4] = le64toh(v[4]);
	} else {
		v[0] = kfield_get(st, L->st_size, &L->memalloced);
		v[1] = kfield_get(st, L->st_size, &L->memfreed);
		v[2] = kfield_get(st, L->st_size, &L->numallocs);
		v[3] = kfield_get(st, L->st_size, &L->numfrees);
		v[4] = kfield_get(st, L->st_size, &L->sizemask);
	}
	it->wrapped |= __builtin_add_overflow(it->alloced, v[0], &it->alloced);
	it->wrapped |= __builtin_add_overflow(it->freed, v[1], &it->freed);
	it->wrapped |= __builtin_add_overflow(it->nallocs, v[2], &it->nallocs);
	it->wrapped |= __builtin_add_overflow(it->nfrees, v[3], &it->nfrees);
	it->mask |= v[4];
	if (it->pa != NULL)
		memcpy(&it->pa[(size_t)c * it->pstride], v, sizeof(v));
}

static void
pending_finish(kvs_t *kd, const struct kcpus *cpus, struct pending *pd)
{
	size_t i;

	for (i = 0; i < pd->n; i++) {
		struct pitem *it = &pd->item[i];
		struct memory_type *mt = it->mt;
		/* Deferred until now: nothing can fail any more. */
		mtl_counters_flow(mt, it->alloced, it->freed, it->nallocs, it->nfrees, it->mask);
		flag_implausible(kd, mt, it->wrapped);
		if (it->pa != NULL)
			mtl_store_view(pd->list, mt, it->pa, it->pstride,
			    (unsigned)cpus->maxid + 1);
	}
}

/* Sums of one type's records over the CPUs of a run, four counters side by
 * side so that one vector add takes a record, and the OR of every value
 * added, which bounds the sum (see run_fold). */
typedef uint64_t v4u64 __attribute__((vector_size(32)));
struct racc {
	v4u64 sum, any;
	uint64_t mask;
	size_t off;                       /* of the record in the run */
	struct mt_percpu_alloc_s *pa;     /* CPU 0's record in the store, or NULL */
};

/* Records per run, and so the size of the working space beside the run
 * (struct racc per record).  A run is read into a buffer CPU after CPU and
 * summed while it is still in the L1 cache. */
#define RUN_SPAN 8192

/* One CPU's copy of a run (at src): each record summed into its racc and,
 * when the type keeps per-CPU counters, copied to its row of the store.
 * The kernel's record is the entry's per-CPU record, as it lies.  Built
 * twice on x86-64, for AVX2 (a record is one vector) and for any CPU; the
 * loader picks one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
run_sum(struct racc *a, struct racc *aend, const uint8_t *src, size_t row)
{
	for (; a < aend; a++) {
		const uint8_t *rec = src + a->off;
		v4u64 v;
		uint64_t m;
		memcpy(&v, rec, sizeof(v));
		memcpy(&m, rec + 32, sizeof(m));
		a->sum += v;
		a->any |= v;
		a->mask |= m;
		if (a->pa != NULL)
			memcpy(&a->pa[row], rec, sizeof(*a->pa));
	}
}

/* Up to this many CPUs, a run whose copies all lie in the dump's mapping
 * is summed record by record over the CPUs (rec_sum): each record's sums
 * stay in registers, and the CPUs' copies of a cache line are all touched
 * before the next line.  Beyond 16 CPUs the rows of the store each record
 * is copied to lie too far apart: CPU by CPU is faster there. */
#define RUN_TCPUS 16

/* One record of a run over the CPUs whose copies of the run are at src[k]:
 * summed, and copied to the entry's rows of the store when it keeps
 * per-CPU counters (the k-th CPU's row row[k] bytes from pa).  The sums go to the
 * item as run_fold's do. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
rec_sum(struct pitem *it, const uint8_t *const *restrict src, const size_t *restrict row, int n,
    size_t off,
    uint64_t bigbits)
{
	v4u64 sum = { 0, 0, 0, 0 }, any = { 0, 0, 0, 0 };
	uint8_t *pa = (uint8_t *)it->pa;
	uint64_t mask = 0, anys;
	int k;

	if (pa != NULL) {
		for (k = 0; k < n; k++) {
			const uint8_t *rec = src[k] + off;
			v4u64 v;
			uint64_t m;
			memcpy(&v, rec, sizeof(v));
			memcpy(&m, rec + 32, sizeof(m));
			sum += v;
			any |= v;
			mask |= m;
			memcpy(pa + row[k], &v, sizeof(v));
			memcpy(pa + row[k] + 32, &m, sizeof(m));
		}
	} else {
		for (k = 0; k < n; k++) {
			const uint8_t *rec = src[k] + off;
			v4u64 v;
			uint64_t m;
			memcpy(&v, rec, sizeof(v));
			memcpy(&m, rec + 32, sizeof(m));
			sum += v;
			any |= v;
			mask |= m;
		}
	}
	anys = any[0] | any[1] | any[2] | any[3];
	if (anys & bigbits)
		it->recheck = true;
	it->wrapped |= __builtin_add_overflow(it->alloced, sum[0], &it->alloced);
	it->wrapped |= __builtin_add_overflow(it->freed, sum[1], &it->freed);
	it->wrapped |= __builtin_add_overflow(it->nallocs, sum[2], &it->nallocs);
	it->wrapped |= __builtin_add_overflow(it->nfrees, sum[3], &it->nfrees);
	it->mask |= mask;
}

/* A run's sums go to their items.  n values each below 2^(64-b), with
 * n <= 2^b, cannot pass 2^64: a type whose values are not that small is
 * summed again with every add checked (pending_recheck). */
static void
run_fold(struct pitem *it, const struct racc *a, uint64_t bigbits)
{
	uint64_t any = a->any[0] | a->any[1] | a->any[2] | a->any[3];

	if (any & bigbits)
		it->recheck = true;
	it->wrapped |= __builtin_add_overflow(it->alloced, a->sum[0], &it->alloced);
	it->wrapped |= __builtin_add_overflow(it->freed, a->sum[1], &it->freed);
	it->wrapped |= __builtin_add_overflow(it->nallocs, a->sum[2], &it->nallocs);
	it->wrapped |= __builtin_add_overflow(it->nfrees, a->sum[3], &it->nfrees);
	it->mask |= a->mask;
}

/* Read and sum one type's records CPU by CPU, every add checked. */
static int
pending_one_type(kvs_t *kd, const struct mlayout *L, const struct kcpus *cpus,
    struct pitem *it)
{
	uint8_t st[512];
	int c;

	it->alloced = it->freed = it->nallocs = it->nfrees = it->mask = 0;
	it->wrapped = false;
	for (c = 0; c <= cpus->maxid; c++) {
		if (!kcpu_present(cpus, c))
			continue;
		if (kvs_read(kd, it->base + (uint64_t)c * L->pcpu_stride, st, L->st_size) != 0) {
			kerr_push(&kd->err, "CPU %d statistics", c);
			return kerr_push(&kd->err, "malloc type \"%s\" at 0x%llx",
			    it->mt->mt_name, (unsigned long long)it->mt->mt_kaddr);
		}
		pending_one(L, it, c, st);
	}
	return 0;
}

/* Room in the list's per-CPU store for every CPU of the types that keep
 * per-CPU counters. */
static int
pending_reserve(kvs_t *kd, const struct kcpus *cpus, struct pending *pd)
{
	size_t i, nv = 0, ncpu = (size_t)cpus->maxid + 1;

	for (i = 0; i < pd->n; i++)
		nv += pd->item[i].percpu;
	if (nv > 0 && (nv > SIZE_MAX / ncpu ||
	    mtl_store_reserve(pd->list, ALLOCATOR_MALLOC, nv * ncpu) != 0))
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	return 0;
}

/* Read the statistics of the pending types into their pitems (the entries
 * get them from pending_finish, once nothing can fail any more). */
static int
pending_stats(kvs_t *kd, const struct mlayout *L, const struct kcpus *cpus, struct pending *pd)
{
	/* Each run of neighbouring records is read CPU after CPU into a
	 * buffer the size of a run and summed from there while it is hot.
	 * The per-CPU records of the run's types go to the list's store, CPU
	 * after CPU: the store is written from start to end. */
	size_t ncpu = (size_t)cpus->maxid + 1, maxrec = RUN_SPAN / L->st_size + 1;
	size_t i, j, k, need;
	uint64_t bigbits;
	uint8_t *run;
	struct racc *acc;
	int c, b;

	for (b = 0; b < 63 && ((size_t)1 << b) < ncpu; b++)
		;
	bigbits = ~0ULL << (64 - (b == 0 ? 1 : b));
	need = RUN_SPAN + 64 + maxrec * sizeof(struct racc) + 32;
	if (need < pd->n * sizeof(struct krec))
		need = pd->n * sizeof(struct krec);
	if (pending_reserve(kd, cpus, pd) != 0)
		return -1;
	/* The working space is first the sort's. */
	if ((run = mtl_scratch(pd->list, 2, need)) == NULL)
		goto per_type;
	mtl_sort_recs(pd->list, MTL_SCRATCH_MALLOC_MEMO, pd->rec, pd->n, (struct krec *)(void *)run);
	acc = (struct racc *)(void *)(((uintptr_t)run + RUN_SPAN + 64 + 31) & ~(uintptr_t)31);
	for (i = 0; i < pd->n; i = j) {
		uint64_t lo = pd->rec[i].addr, hi;
		struct mt_percpu_alloc_s *blk;
		const uint8_t *src;
		size_t len, mv = 0;
		j = krec_run(pd->rec, pd->n, i, L->st_size, RUN_SPAN, &hi);
		/* Records that overlap (a corrupt dump: types sharing their
		 * statistics) could make a run longer than its sums' room. */
		if (j - i > maxrec)
			j = i + maxrec;
		len = (size_t)(hi - lo);
		for (k = i; k < j; k++)
			mv += pd->item[pd->rec[k].item].percpu;
		blk = mv > 0 ? mtl_store_take(pd->list, ALLOCATOR_MALLOC, mv * ncpu) : NULL;
		for (k = i, mv = 0; k < j; k++) {
			struct pitem *it = &pd->item[pd->rec[k].item];
			it->pa = NULL;
			if (it->percpu && blk != NULL)
				it->pa = blk + mv++;
		}
		for (k = i; k < j; k++)
			pd->item[pd->rec[k].item].pstride = mv;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (L->canonical && ncpu <= RUN_TCPUS) {
			/* Every present CPU's copy where it lies: record by
			 * record (rec_sum).  Else CPU by CPU, below. */
			const uint8_t *tsrc[RUN_TCPUS];
			size_t trow[RUN_TCPUS];
			int nt = 0;
			for (c = 0; c <= cpus->maxid; c++) {
				if (!kcpu_present(cpus, c))
					continue;
				if ((tsrc[nt] = kvs_peek(kd, lo + (uint64_t)c * L->pcpu_stride,
				    len)) == NULL)
					break;
				trow[nt++] = (size_t)c * mv * sizeof(*blk);
			}
			if (c > cpus->maxid) {
				for (c = 0; c <= cpus->maxid; c++)
					if (!kcpu_present(cpus, c) && mv > 0)
						memset(blk + (size_t)c * mv, 0, mv * sizeof(*blk));
				for (k = i; k < j; k++)
					rec_sum(&pd->item[pd->rec[k].item], tsrc, trow, nt,
					    (size_t)(pd->rec[k].addr - lo), bigbits);
				continue;
			}
		}
#endif
		for (k = i; k < j; k++) {
			struct racc *a = &acc[k - i];
			memset(a, 0, sizeof(*a));
			a->off = (size_t)(pd->rec[k].addr - lo);
			a->pa = pd->item[pd->rec[k].item].pa;
		}
		for (c = 0; c <= cpus->maxid; c++) {
			size_t row = (size_t)c * mv;
			if (!kcpu_present(cpus, c)) {
				if (mv > 0)             /* absent CPUs read 0 */
					memset(blk + row, 0, mv * sizeof(*blk));
				continue;
			}
			/* Where the records lie in the dump, or a copy. */
			src = kvs_peek(kd, lo + (uint64_t)c * L->pcpu_stride, len);
			if (src == NULL) {
				if (kvs_read(kd, lo + (uint64_t)c * L->pcpu_stride, run, len) != 0)
					goto per_type;
				src = run;
			}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			if (L->canonical) {
				run_sum(acc, acc + (j - i), src, row);
				continue;
			}
#endif
			for (k = i; k < j; k++)
				pending_one(L, &pd->item[pd->rec[k].item], c,
				    src + (pd->rec[k].addr - lo));
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (L->canonical)
			for (k = i; k < j; k++)
				run_fold(&pd->item[pd->rec[k].item], &acc[k - i], bigbits);
#endif
	}
	/* Values too large to rule out a wrapped sum: those types again,
	 * every add checked (a corrupt or absurd dump; never in practice). */
	for (i = 0; i < pd->n; i++)
		if (pd->item[i].recheck && pending_one_type(kd, L, cpus, &pd->item[i]) != 0)
			return -1;
	return 0;

per_type:
	/* Something in a run could not be read: read type by type, in list
	 * order, so that the error (if any) names the first type and CPU that
	 * fail, as reading each type in turn would.  Each type's records then
	 * lie CPU after CPU in the store, absent CPUs zero. */
	if (pending_reserve(kd, cpus, pd) != 0)
		return -1;
	for (i = 0; i < pd->n; i++) {
		struct pitem *it = &pd->item[i];
		it->pa = it->percpu ? mtl_store_take(pd->list, ALLOCATOR_MALLOC, ncpu) : NULL;
		it->pstride = 1;
		if (it->pa != NULL)
			memset(it->pa, 0, ncpu * sizeof(*it->pa));
		if (pending_one_type(kd, L, cpus, it) != 0)
			return -1;
	}
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
	uint8_t mtcopy[MT_MAX_BYTES];
	const uint8_t *mtbuf = mtcopy;
	unsigned maxcpus, rows = 0;
	struct pending pend = { list, NULL, NULL, 0, 0 };
	struct kvs_error saved;
	int walk_err = MEMSTAT_ERROR_KVM;

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
	 * (pending_stats, pending_finish): the banks are not shown, so not
	 * cleared; no generation writes the caches' slots. */
	if (L.gen == MGEN_12 || L.gen == MGEN_13) {
		list->mtl_fill_alloc = MTL_PCPU_UNUSED;
		list->mtl_defer_counters = true;        /* pending_finish */
	}
	list->mtl_fill_cache = MTL_PCPU_UNUSED;
	kwalk_init(&w, kvs_dump_bound(kd, L.mt_size, MT_MAX_TYPES));
	for (; p != 0; p = mt_get(&L, mtbuf, &L.next)) {
		struct memory_type *mt;
		uint64_t desc;
		int is_new;

		if (kwalk_step(kd, &w, p, "kmemstatistics") != 0)
			goto walk_failed;
		/* Where the type lies in the dump, or a copy. */
		if ((mtbuf = kvs_peek(kd, p, L.mt_size)) == NULL) {
			if (kvs_read(kd, p, mtcopy, L.mt_size) != 0) {
				kerr_push(&kd->err, "malloc type at 0x%llx", (unsigned long long)p);
				goto walk_failed;
			}
			mtbuf = mtcopy;
		}
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
		if (is_new || mt->mt_namekey != desc) {
			char name[MEMTYPE_MAXNAME];
			if (desc == 0)
				snprintf(name, sizeof(name), "(null)");
			else if (kvs_read_string(kd, desc, name, sizeof(name), NULL) < 0) {
				kerr_push(&kd->err, "name of malloc type at 0x%llx",
				    (unsigned long long)p);
				goto walk_failed;
			}
			mtl_set_name(mt, name, desc);
		}
		if (L.gen == MGEN_12 || L.gen == MGEN_13) {
			/* Statistics later, all types at once (bulk_stats). */
			if (pending_add(kd, list, &L, &pend, mt, p, mtbuf) != 0) {
				kerr_push(&kd->err, "malloc type \"%s\" at 0x%llx", mt->mt_name,
				    (unsigned long long)p);
				goto walk_failed;
			}
			continue;
		}
		if (read_type(kd, &L, &cpus, mt, mtbuf) != 0) {
			kerr_push(&kd->err, "malloc type \"%s\" at 0x%llx", mt->mt_name,
			    (unsigned long long)p);
			return fail(list, kd, MEMSTAT_ERROR_KVM);
		}
	}
	if (pend.n > 0 && pending_stats(kd, &L, &cpus, &pend) != 0)
		return fail(list, kd, kd->err.status == KVS_E_NOMEM ? MEMSTAT_ERROR_NOMEMORY :
		    MEMSTAT_ERROR_KVM);
	if (rows == 0) {
		/* Every type was skipped (bad magic or version): the same. */
		kerr_set(&kd->err, KVS_E_MISMATCH, "none of the %u malloc types on kmemstatistics "
		    "is readable (%s), so the kernel %s does not match the dump %s", kd->nwarn,
		    kd->warn, kd->kernel_path, kd->core_path);
		return fail(list, kd, MEMSTAT_ERROR_KVM);
	}
	if (pend.n > 0)
		pending_finish(kd, &cpus, &pend);
	mtl_refresh_commit(list, ALLOCATOR_MALLOC);
	return 0;

walk_failed:
	/* The types before the one that failed would have had their
	 * statistics read first: an error there is the one to report. */
	saved = kd->err;
	if (pend.n > 0 && pending_stats(kd, &L, &cpus, &pend) != 0)
		return fail(list, kd, kd->err.status == KVS_E_NOMEM ? MEMSTAT_ERROR_NOMEMORY :
		    MEMSTAT_ERROR_KVM);
	kd->err = saved;
	return fail(list, kd, walk_err);
}
