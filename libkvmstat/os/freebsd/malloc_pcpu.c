/*
 * malloc_pcpu.c - the per-CPU statistics of a 12 or 13+ kernel's malloc(9)
 * types, read after the walk: the types staged by malloc.c's walk
 * (malloc_pending_add) are sorted by the address of CPU 0's record, read
 * in runs of neighbouring records, one read (or a look in place, kvs_peek)
 * per run and CPU, and summed (malloc_pending_stats); the sums and per-CPU
 * rows go to the entries at the end (malloc_pending_finish).  The hot loops
 * of a refresh all live here.  A type whose statistics are not in the dump
 * (its internal struct, a CPU's record) keeps its row, flagged
 * MEMSTAT_COUNTS_UNREADABLE with its counts 0 (pending_unreadable).  The layout, the walk itself and the 5.x and
 * 6-11 readers are malloc.c's.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "freebsd.h"
#include "malloc_internal.h"
#include "memstat_internal.h"

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
	uint64_t unread;                  /* MEMSTAT_*_UNREADABLE */
	struct mt_percpu_alloc_s *pa;     /* CPU c's at pa[c * pstride], in the */
	size_t pstride;                   /* list's store (NULL: not yet placed) */
};

/* A type whose statistics the dump does not hold: flagged, and why. */
static void
pending_unreadable(kvs_t *kd, struct pitem *it)
{
	kvs_warn_lost(kd, "malloc type \"%s\" at 0x%llx: its statistics are not readable: %s",
	    malloc_type_name(it->mt), (unsigned long long)it->mt->mt_kaddr, kvs_geterr(kd));
	kerr_clear(&kd->err);
	it->unread |= MEMSTAT_COUNTS_UNREADABLE;
	it->alloced = it->freed = it->nallocs = it->nfrees = it->mask = 0;
	it->wrapped = it->recheck = false;
}

int
malloc_pending_add(kvs_t *kd, struct memory_type_list *list, const struct mlayout *L,
    struct pending *pd, struct memory_type *mt, const uint8_t *mtbuf, uint64_t unread)
{
	uint8_t mti[256];
	uint64_t base = 0;
	bool mti_ok = true;

	if (L->gen == MGEN_12) {
		size_t mtilen = (size_t)(L->stats_in_mti.off + 8);
		if (mtilen > sizeof(mti))
			return kerr_set(&kd->err, KVS_E_DATA, "malloc_type_internal larger "
			    "than expected");
		mti_ok = kvs_read(kd, mt_get(L, mtbuf, &L->handle), mti, mtilen) == 0;
		if (mti_ok)
			base = kfield_get(mti, mtilen, &L->stats_in_mti);
		else
			kerr_push(&kd->err, "malloc_type_internal at 0x%llx",
			    (unsigned long long)mt_get(L, mtbuf, &L->handle));
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
	pd->item[pd->n].unread = unread;
	if (!mti_ok) {
		pending_unreadable(kd, &pd->item[pd->n]);
	} else {
		pd->rec[pd->nrec].addr = base;
		pd->rec[pd->nrec].item = (uint32_t)pd->n;
		pd->rec[pd->nrec].slot = 0;
		pd->nrec++;
	}
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

void
malloc_pending_finish(kvs_t *kd, const struct kcpus *cpus, struct pending *pd)
{
	size_t i;

	unsigned ncpu = (unsigned)cpus->maxid + 1, c;

	for (i = 0; i < pd->n; i++) {
		struct pitem *it = &pd->item[i];
		struct memory_type *mt = it->mt;
		/* Deferred until now: nothing can fail any more. */
		mtl_counters_flow(mt, it->alloced, it->freed, it->nallocs, it->nfrees, it->mask);
		if (it->unread & MEMSTAT_COUNTS_UNREADABLE) {
			/* Its per-CPU records are not known either: zeros,
			 * where a run put them or from what was reserved. */
			if (it->percpu && it->pa == NULL) {
				it->pa = mtl_store_take(pd->list, ALLOCATOR_MALLOC, ncpu);
				it->pstride = 1;
			}
			for (c = 0; it->pa != NULL && c < ncpu; c++)
				memset(&it->pa[(size_t)c * it->pstride], 0, sizeof(*it->pa));
		} else
			malloc_flag_implausible(kd, mt, it->wrapped);
		if (it->unread != 0) {
			mt->mt_flags = it->unread;
			mt->mt_flow_only = false;       /* the next flow clears it */
		}
		if (it->pa != NULL)
			mtl_store_view(pd->list, mt, it->pa, it->pstride, ncpu);
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
 * summed again with every add checked (pending_one_type). */
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
			pending_unreadable(kd, it);
			return -1;
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
 * get them from malloc_pending_finish, once nothing can fail any more). */
int
malloc_pending_stats(kvs_t *kd, const struct mlayout *L, const struct kcpus *cpus, struct pending *pd)
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
	if (need < pd->nrec * sizeof(struct krec))
		need = pd->nrec * sizeof(struct krec);
	if (pending_reserve(kd, cpus, pd) != 0)
		return -1;
	/* The working space is first the sort's. */
	if ((run = mtl_scratch(pd->list, 2, need)) == NULL)
		goto per_type;
	mtl_sort_recs(pd->list, MTL_SCRATCH_MALLOC_MEMO, pd->rec, pd->nrec, (struct krec *)(void *)run);
	acc = (struct racc *)(void *)(((uintptr_t)run + RUN_SPAN + 64 + 31) & ~(uintptr_t)31);
	for (i = 0; i < pd->nrec; i = j) {
		uint64_t lo = pd->rec[i].addr, hi;
		struct mt_percpu_alloc_s *blk;
		const uint8_t *src;
		size_t len, mv = 0;
		j = krec_run(pd->rec, pd->nrec, i, L->st_size, RUN_SPAN, &hi);
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
		if (pd->item[i].recheck)
			(void)pending_one_type(kd, L, cpus, &pd->item[i]);   /* flags it */
	return 0;

per_type:
	/* Something in a run could not be read: read type by type, in list
	 * order, so that the error (if any) names the first type and CPU that
	 * fail, as reading each type in turn would.  Each type's records then
	 * lie CPU after CPU in the store, absent CPUs zero; a type that cannot be
 * read is flagged (pending_unreadable) and the others read on. */
	kerr_clear(&kd->err);
	if (pending_reserve(kd, cpus, pd) != 0)
		return -1;
	for (i = 0; i < pd->n; i++) {
		struct pitem *it = &pd->item[i];
		if (it->unread & MEMSTAT_COUNTS_UNREADABLE)
			continue;               /* never staged a record */
		it->pa = it->percpu ? mtl_store_take(pd->list, ALLOCATOR_MALLOC, ncpu) : NULL;
		it->pstride = 1;
		if (it->pa != NULL)
			memset(it->pa, 0, ncpu * sizeof(*it->pa));
		(void)pending_one_type(kd, L, cpus, it);   /* flags it when unreadable */
	}
	return 0;
}
