/*
 * memstat_internal.h - the memory_type_list behind <memstat.h>, and the
 * refresh protocol the walkers (walk_freebsd_*.c) use to fill it.
 *
 * Design story.  libmemstat finds entries by (allocator, name) with a linear
 * search, re-reads every name byte by byte, and empties the whole list when
 * a read fails.  Here an entry's identity is (allocator, kernel address of
 * its malloc_type / uma_zone), found through the library's hash table
 * (hashtab.h: identity -> index + 1 into mtl_byidx), so a refresh is O(n),
 * duplicate names stay separate rows, and a name is only re-read when its
 * kernel pointer changed.  When a refresh first touches an entry it
 * snapshots the library-owned scalar counters into space kept with
 * the entry; a failed refresh restores the entries it touched (their name
 * too, if it changed) and drops those it created, so the caller keeps the
 * last good picture.  Per-CPU counters are not copied: each entry has two
 * banks and a refresh writes the one not shown, or (a walker that reads
 * many types' records in runs) the list keeps two stores and a refresh
 * writes every entry's records into the one not shown, in reading order
 * (struct mtl_store).  Once every kernel object
 * has its entry, a refresh allocates nothing (l->mtl_alloc_events counts
 * the library's allocations for the list so tests can check this).  The hash and its index
 * array only grow: removals (sweep, abort) re-index the survivors in place,
 * which allocates nothing and cannot fail.
 *
 * Protocol, per allocator (one refresh at a time per list):
 *
 *   (malloc only) mtl_set_list_zones(l, sizes, n);   (staged, see below)
 *   if (mtl_refresh_begin(l, ALLOCATOR_X, maxcpus) != 0)
 *           return -1;                       (error set; nothing touched)
 *   for each kernel object at kaddr:
 *           mt = mtl_upsert(l, ALLOCATOR_X, kaddr, &is_new);
 *           if (mt == NULL) -> abort with MEMSTAT_ERROR_NOMEMORY
 *           if (is_new || mt->mt_namekey != nameptr)
 *                   mtl_set_name(mt, name, nameptr);
 *           fill mt->mt_* (+=, |= are fine: they start at 0) and, when
 *           mt->mt_percpu_valid, mt->mt_percpu_alloc[c] / mt_percpu_cache[c]
 *           for c < maxcpus (or the alloc counters in the store:
 *           mtl_store_reserve, _take, and mtl_store_view once nothing can
 *           fail);
 *   mtl_refresh_commit(l, ALLOCATOR_X);          or on any failure
 *   mtl_refresh_abort(l, ALLOCATOR_X, MEMSTAT_ERROR_...);
 *
 * begin:  grows every entry of the allocator to at least maxcpus per-CPU
 *         slots (new slots, caller slots included, zeroed); the only step
 *         besides creating entries that may allocate.
 * upsert: find-or-create by identity.  A new entry goes to the list head
 *         (libmemstat's order) with every field zero.  On the first touch in
 *         a refresh the library-owned counters are reset: mt_memalloced ..
 *         mt_dom_kegfree (rsize, xdomain and maxused included, which
 *         libmemstat leaves alone) and the per-CPU counters of the bank being
 *         filled.  Never reset: allocator, kaddr, name (see mtl_set_name),
 *         the general and per-CPU caller slots.  Marks the entry seen and
 *         not vanished, sets mt_maxcpus.  Upserting twice in one refresh
 *         returns the same entry without resetting it again.  A walker may
 *         spare upsert work it makes useless, right after begin: per-CPU
 *         arrays it fills or never writes (mtl_fill_alloc/_cache), counters
 *         it only sets once nothing can fail (mtl_defer_counters).
 * commit: entries of the allocator not seen are marked vanished and keep the
 *         values of the last refresh that saw them; memstat_mtl_sweep()
 *         removes them at the caller's request.
 *         A malloc commit also makes the staged zone table the list's own
 *         and publishes it to memstat_malloc_zone_get_*().
 * abort:  sets mtl_error; entries created by this refresh are freed, touched
 *         ones get back counters, bank, name, maxcpus, ndomains and the
 *         vanished and per-CPU-valid flags.  A staged zone table is dropped:
 *         the list keeps the one of its last good malloc refresh.
 *         Entries of other allocators are never touched.
 * Per-row problems that do not fail a refresh (a skipped type, an
 * inconsistent bucket) go to kvs_warn() on the handle: see kvs_warnings().
 */
#ifndef MEMSTAT_INTERNAL_H
#define MEMSTAT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hashtab.h"
#include "kread.h"
#include "kvs_private.h"
#include "memstat.h"

#define MEMSTAT_ZONES_MAX 64
#define MEMSTAT_MAXDOMAINS 8
#define MTL_NALLOC 4   /* allocators with the counts of mtl_grown/mtl_nof */
/* Working spaces (mtl_scratch): 0, 1 and 2 for any walker during its
 * refresh; the others are one walker's own, between its refreshes. */
enum { MTL_SCRATCH_MALLOC_MEMO = 3, MTL_SCRATCH_UMA_MEMO, MTL_NSCRATCH };

/* Library-owned per-CPU counters.  Unlike libmemstat, the per-CPU caller
 * slots live apart (struct mt_percpu_caller_s, allocated when a caller first
 * sets one): a refresh streams through these records for every CPU of every
 * type, and 256 bytes of slots per record would multiply that traffic. */
struct mt_percpu_alloc_s {
	uint64_t mtp_memalloced;
	uint64_t mtp_memfreed;
	uint64_t mtp_numallocs;
	uint64_t mtp_numfrees;
	uint64_t mtp_sizemask;
};

struct mt_percpu_caller_s {
	void *mtp_caller_pointer[MEMSTAT_MAXCALLER];
	uint64_t mtp_caller_uint64[MEMSTAT_MAXCALLER];
};

struct mt_percpu_cache_s {
	uint64_t mtp_free;
};

struct memory_type {
	/*
	 * Hot: what a refresh reads or writes for every entry it sees, in
	 * the first three cache lines (entries are 64-byte aligned), then the
	 * counters that an allocation flow sets (mtl_counters_flow).  A
	 * refresh of a steady list touches four lines of each entry.
	 */
	uint64_t mt_kaddr;          /* identity */
	uint64_t mt_seen_gen, mt_created_gen;
	uint64_t mt_namekey;        /* kernel pointer the name was read from */
	/* CPU c's alloc counters are mt_percpu_alloc[c * mt_pa_stride] for
	 * c < mt_pa_ncpu (0 above): a bank (stride 1, every slot), or a view
	 * into the list's per-CPU store (mt_pa_store, see struct mtl_store). */
	struct mt_percpu_alloc_s *mt_percpu_alloc;
	size_t mt_pa_stride;
	struct mtl_store *mt_pa_store;
	unsigned mt_pa_ncpu;
	int mt_allocator;

	struct mt_percpu_alloc_s *mt_saved_pa;       /* the view before, when */
	size_t mt_saved_pa_stride;                   /* it was in a store */
	struct mtl_store *mt_saved_pa_store;
	struct mt_percpu_cache_s *mt_percpu_cache;   /* [mt_capcpus], = mt_pc_bank[mt_bank] */
	/* Per-CPU counters are double-buffered: a refresh fills the other bank
	 * (or store) and a failed one switches back, so nothing is copied for
	 * rollback. */
	struct mt_percpu_alloc_s *mt_pa_bank[2];
	struct mt_percpu_cache_s *mt_pc_bank[2];

	struct memory_type *mt_prev, *mt_next;
	unsigned mt_saved_pa_ncpu;
	unsigned mt_maxcpus;        /* CPUs of the last refresh */
	unsigned mt_saved_maxcpus;
	unsigned mt_ndomains;       /* UMA: memory domains (vm_ndomains) */
	unsigned mt_saved_ndomains;
	unsigned mt_capcpus;        /* allocated per-CPU slots */
	int mt_bank, mt_saved_bank;
	bool mt_vanished, mt_saved_vanished;
	bool mt_percpu_valid;       /* per-CPU counters kept by the last refresh */
	bool mt_saved_percpu_valid;
	/* Rollback copy of the name, taken by mtl_set_name only when a refresh
	 * renames an entry that existed before it. */
	bool mt_name_saved;
	/* mt_saved holds this refresh's rollback copy (not when the walker
	 * defers its counters: mtl_defer_counters). */
	bool mt_block_saved;
	/* Every counter but the flow ones (mt_memalloced .. mt_count) is 0:
	 * mtl_counters_flow need not clear them. */
	bool mt_flow_only;

	/* Library-owned counters: mt_memalloced .. mt_dom_kegfree are
	 * contiguous, reset and saved/restored as one block (mt_saved); the
	 * flow counters first. */
	uint64_t mt_memalloced;
	uint64_t mt_memfreed;
	uint64_t mt_numallocs;
	uint64_t mt_numfrees;
	uint64_t mt_sizemask;
	uint64_t mt_bytes;
	uint64_t mt_count;
	uint64_t mt_countlimit;
	uint64_t mt_byteslimit;
	uint64_t mt_size;
	uint64_t mt_rsize;
	uint64_t mt_free;
	uint64_t mt_failures;
	uint64_t mt_sleeps;
	uint64_t mt_xdomain;
	uint64_t mt_maxused;
	uint64_t mt_zonefree;
	uint64_t mt_kegfree;
	uint64_t mt_slab_objperslab;    /* SLAB: objects per slab */
	uint64_t mt_slab_pagesperslab;  /*       pages per slab */
	uint64_t mt_slab_numslabs;      /*       slabs */
	uint64_t mt_slab_numobjs;       /*       object slots in them */
	uint64_t mt_slab_active;        /*       /proc/slabinfo's active_objs */
	uint64_t mt_flags;              /* MEMSTAT_*_UNREADABLE, MEMSTAT_SLAB_CORRUPT */
	uint64_t mt_dom_zonefree[MEMSTAT_MAXDOMAINS];   /* UMA, per memory domain */
	uint64_t mt_dom_kegfree[MEMSTAT_MAXDOMAINS];

	/* Cold: names, caller slots, rollback copies. */
	char mt_name[MEMTYPE_MAXNAME];
	/* Caller-owned: survive refreshes. */
	void *mt_caller_pointer[MEMSTAT_MAXCALLER];
	uint64_t mt_caller_uint64[MEMSTAT_MAXCALLER];
	struct mt_percpu_caller_s *mt_percpu_caller; /* [mt_capcpus] or NULL */
	/* Rollback copy of the counters, taken by mtl_upsert. */
	uint64_t mt_saved[24 + 2 * MEMSTAT_MAXDOMAINS];
	char mt_saved_name[MEMTYPE_MAXNAME];
	uint64_t mt_saved_namekey;
};

/*
 * A per-CPU store: one block of alloc records that a walker fills in one
 * refresh, for every entry it refreshes, in the order it reads them (so a
 * refresh writes it from start to end instead of scattering records over
 * one bank per entry).  Entries view their records in it (mt_percpu_alloc,
 * mt_pa_stride); refs counts them.  Per allocator, the list keeps the
 * store the last good refresh filled (shown) and a spare the next refresh
 * fills: a failed refresh leaves the shown one alone, a good one makes the
 * spare shown and the store it replaces the next spare.  No entry views
 * that one any more: those the refresh saw view the new store, and those
 * that vanished take their last per-CPU counters into their own bank at the
 * commit (a copy only when something vanished).  In steady state nothing is
 * allocated and nothing is copied.
 */
struct mtl_store {
	struct mt_percpu_alloc_s *rec;
	size_t cap, used;               /* records */
	size_t refs;                    /* entries viewing it */
};

/* A malloc(9) zone-size table (kmemzones), sentinel included. */
struct mtl_zones {
	size_t n;
	size_t size[MEMSTAT_ZONES_MAX];
};

struct memory_type_list {
	struct memory_type *mtl_head;
	int mtl_error;
	size_t mtl_count;
	struct kvs_htab mtl_hash;       /* (allocator, kaddr) -> index + 1 ... */
	struct memory_type **mtl_byidx; /* ... into this: [mtl_count], room for
	                                 * mtl_capidx; no particular order */
	size_t mtl_capidx;
	uint64_t mtl_gen;
	unsigned mtl_maxcpus;
	bool mtl_nopercpu;              /* memstat_mtl_set_percpu(list, 0) */
	bool mtl_zones_staged;          /* mtl_zones_new awaits a malloc commit */
	struct mtl_zones mtl_zones;     /* of the last good malloc refresh */
	struct mtl_zones mtl_zones_new;
	/* Allocations memstat.c made for this list (entries, per-CPU banks,
	 * hash, scratch); caller slots excepted, which callers ask for. */
	unsigned long mtl_alloc_events;
	/* What a walker promises, after mtl_refresh_begin (which resets both
	 * to MTL_PCPU_ZERO), about the per-CPU arrays of the entries it
	 * upserts, so that upsert need not clear them all (MTL_PCPU_*). */
	unsigned char mtl_fill_alloc, mtl_fill_cache;
	/* Set by a walker after mtl_refresh_begin (which clears it): it writes
	 * no counter of an entry (mt_memalloced .. mt_dom_kegfree) before its
	 * walk has read everything, and then sets them all through
	 * mtl_counters_flow(), with nothing left that can fail before the
	 * commit.  Upsert then neither copies nor clears them. */
	bool mtl_defer_counters;
	/* So that begin and commit need not visit every entry of a big list:
	 * per allocator (index < MTL_NALLOC), the per-CPU slots every entry
	 * has at least, and how many entries there are; entries first touched
	 * by the current refresh. */
	unsigned mtl_grown[MTL_NALLOC];
	size_t mtl_nof[MTL_NALLOC];
	size_t mtl_touched[MTL_NALLOC];
	/* Per-CPU stores (struct mtl_store), per allocator. */
	struct mtl_store *mtl_st_shown[MTL_NALLOC], *mtl_st_spare[MTL_NALLOC];
	/* Walkers' working space (mtl_scratch), kept between refreshes so
	 * that a steady-state refresh allocates nothing. */
	void *mtl_scratch[MTL_NSCRATCH];
	size_t mtl_scratch_len[MTL_NSCRATCH];
	/* Per allocator: the last good refresh stopped at a cut list
	 * (memstat_mtl_incomplete); the refresh under way did (mtl_refresh_cut). */
	bool mtl_cut[MTL_NALLOC];
	bool mtl_cut_new;
	/* mtl_upsert's guess at the next entry (mt_prev of the last one),
	 * cleared by mtl_refresh_begin and when that entry goes. */
	struct memory_type *mtl_guess;
};

/* mtl_fill_alloc / mtl_fill_cache: upsert zeroes the array (ZERO); the
 * walker writes every slot below mtl_maxcpus (FILLED, upsert zeroes only
 * the slots above); the walker of this allocator never writes it, so it is
 * still zero (UNUSED). */
enum { MTL_PCPU_ZERO = 0, MTL_PCPU_FILLED, MTL_PCPU_UNUSED };

KVS_HIDDEN int mtl_refresh_begin(struct memory_type_list *l, int allocator, unsigned maxcpus);
KVS_HIDDEN struct memory_type *mtl_upsert(struct memory_type_list *l, int allocator,
    uint64_t kaddr, int *is_new);
KVS_HIDDEN void mtl_set_name(struct memory_type *mt, const char *name, uint64_t namekey);
/* Set the entry's counters to an allocation flow: these five, mt_bytes and
 * mt_count from them, every other counter 0 (cleared only when a walker
 * gave the entry others).  For a walker that set mtl_defer_counters, once
 * it can no longer fail. */
KVS_HIDDEN void mtl_counters_flow(struct memory_type *mt, uint64_t alloced, uint64_t freed,
    uint64_t nallocs, uint64_t nfrees, uint64_t sizemask);
/* The refresh under way could not follow its kernel list to the end: the
 * commit makes the list say so (memstat_mtl_incomplete). */
KVS_HIDDEN void mtl_refresh_cut(struct memory_type_list *l);
/* The same, with its warning: kernel list `name` cannot be followed past
 * `at` (what lies there is not in the dump: the error on kd says why; the
 * last element read was `after`, 0 at the head), and `lost` (say "the
 * types after it") are missing.  kd's error is cleared. */
KVS_HIDDEN void mtl_list_cut(struct memory_type_list *l, kvs_t *kd, const char *name,
    uint64_t at, uint64_t after, const char *lost);
KVS_HIDDEN void mtl_refresh_commit(struct memory_type_list *l, int allocator);
KVS_HIDDEN void mtl_refresh_abort(struct memory_type_list *l, int allocator, int error);
/* The malloc(9) zone sizes a malloc refresh of l read, n capped at
 * MEMSTAT_ZONES_MAX (n = 0: the kernel has no table).  Staged until
 * mtl_refresh_commit(l, ALLOCATOR_MALLOC), which makes them the list's
 * (memstat_mtl_malloc_zone_*) and publishes them process-wide
 * (memstat_malloc_zone_get_*); mtl_refresh_abort drops them. */
KVS_HIDDEN void mtl_set_list_zones(struct memory_type_list *l, const size_t *sizes,
    size_t n);
/* Publish zone sizes process-wide at once, bypassing any list: for callers
 * with no list at hand.  The list's own table is left alone. */
KVS_HIDDEN void mtl_set_zones(const size_t *sizes, size_t n);
/* Per-CPU store (struct mtl_store) for a store-filling walker of
 * `allocator`, after mtl_refresh_begin.  mtl_store_reserve makes room for
 * nrec records in the spare, which this refresh fills (-1: out of memory,
 * error set); mtl_store_take hands out n consecutive ones of them (NULL
 * past what was reserved).  Their content is the walker's to write, all of
 * it.  mtl_store_view makes an entry show `ncpu` CPUs' records, CPU c's at
 * rec[c * stride] of records taken in this refresh: once nothing can fail
 * (a failed refresh puts back the entry's old view, not this one). */
KVS_HIDDEN int mtl_store_reserve(struct memory_type_list *l, int allocator, size_t nrec);
KVS_HIDDEN struct mt_percpu_alloc_s *mtl_store_take(struct memory_type_list *l, int allocator,
    size_t n);
KVS_HIDDEN void mtl_store_view(struct memory_type_list *l, struct memory_type *mt,
    struct mt_percpu_alloc_s *rec, size_t stride, unsigned ncpu);
/* Start fetching the lines of an entry a refresh touches (the first four). */
static inline void
mtl_prefetch_hot(const struct memory_type *mt)
{
	__builtin_prefetch(mt, 1);
	__builtin_prefetch((const char *)mt + 64, 1);
	__builtin_prefetch((const char *)mt + 128, 1);
	__builtin_prefetch((const char *)mt + 192, 1);
}
/* The alloc record of CPU c (c < mt->mt_pa_ncpu) in the entry's view. */
static inline struct mt_percpu_alloc_s *
mt_pa(const struct memory_type *mt, unsigned c)
{
	return &mt->mt_percpu_alloc[(size_t)c * mt->mt_pa_stride];
}
/* Working space `which` (< MTL_NSCRATCH) of at least `bytes`, its contents
 * kept up to the old length when it grows and zero past it (growth is
 * counted in mtl_alloc_events); NULL when out of memory.  Valid until the
 * next call with the same `which` or memstat_mtl_free. */
KVS_HIDDEN void *mtl_scratch(struct memory_type_list *l, int which, size_t bytes);
/* krec_sort through tmp[n], remembering the order in the walker's own
 * working space `memo` (MTL_SCRATCH_*_MEMO) so that a steady kernel's
 * records are sorted by a copy (krec_sort_memo); without memory for it,
 * a plain sort. */
KVS_HIDDEN void mtl_sort_recs(struct memory_type_list *l, int memo, struct krec *r, size_t n,
    struct krec *tmp);

/* memstat.c: CPU cpu's caller slots of an entry, allocated at the first
 * set (NULL: out of memory). */
KVS_HIDDEN struct mt_percpu_caller_s *mtl_caller_slots(struct memory_type *mt, int cpu);
/* memstat_access.c: make z the process-wide zone table, under its lock. */
KVS_HIDDEN void mtl_publish_zones(const struct mtl_zones *z);

#endif
