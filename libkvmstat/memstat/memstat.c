/*
 * memstat.c - the memory_type_list machinery: entries and their
 * allocation, the list and its identity hash, the refresh protocol (begin,
 * find-or-make an entry, snapshot and restore, commit, abort), the per-CPU
 * banks and stores, caller slot allocation (see memstat_internal.h for the
 * design).
 *
 * The public getters and setters of an entry, the malloc zone tables
 * (process-wide and per list), memstat_strerror and the sysctl stubs are
 * memstat_access.c's.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memstat_internal.h"

#define BLOCK_FIRST offsetof(struct memory_type, mt_memalloced)
#define BLOCK_LEN (offsetof(struct memory_type, mt_dom_kegfree) + \
    sizeof(((struct memory_type *)0)->mt_dom_kegfree) - BLOCK_FIRST)
_Static_assert(BLOCK_LEN == sizeof(((struct memory_type *)0)->mt_saved),
    "counter block and its rollback copy differ in size");
_Static_assert(offsetof(struct memory_type, mt_memalloced) <= 192 &&
    offsetof(struct memory_type, mt_count) + 8 <= 256,
    "the hot fields of an entry and its flow counters take four cache lines");

/* Allocations counted on the list they are for (NULL: not counted). */
static void *
xcalloc(struct memory_type_list *l, size_t n, size_t sz)
{
	if (l != NULL)
		l->mtl_alloc_events++;
	return calloc(n ? n : 1, sz);
}

/* An entry, zeroed, on a cache line of its own (struct memory_type: the
 * fields a refresh touches are in its first four lines). */
static struct memory_type *
entry_alloc(struct memory_type_list *l)
{
	size_t sz = (sizeof(struct memory_type) + 63) & ~(size_t)63;
	struct memory_type *mt;

	l->mtl_alloc_events++;
	if ((mt = aligned_alloc(64, sz)) != NULL)
		memset(mt, 0, sizeof(*mt));
	return mt;
}

static void *
xrealloc(struct memory_type_list *l, void *p, size_t sz)
{
	if (l != NULL)
		l->mtl_alloc_events++;
	return realloc(p, sz ? sz : 1);
}


/* ------------------------------------------------------------------ lists */

struct memory_type_list *
memstat_mtl_alloc(void)
{
	struct memory_type_list *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->mtl_alloc_events = 1;
	l->mtl_error = MEMSTAT_ERROR_UNDEFINED;
	return l;
}

struct memory_type *
memstat_mtl_first(struct memory_type_list *list)
{
	return list->mtl_head;
}

struct memory_type *
memstat_mtl_next(struct memory_type *mtp)
{
	return mtp->mt_next;
}

struct memory_type *
memstat_mtl_find(struct memory_type_list *list, int allocator, const char *name)
{
	struct memory_type *mt;

	for (mt = list->mtl_head; mt != NULL; mt = mt->mt_next)
		if ((allocator == ALLOCATOR_ANY || mt->mt_allocator == allocator) &&
		    strcmp(mt->mt_name, name) == 0)
			return mt;
	return NULL;
}

static void
free_entry(struct memory_type *mt)
{
	if (mt->mt_pa_store != NULL)
		mt->mt_pa_store->refs--;
	free(mt->mt_pa_bank[0]);
	free(mt->mt_pa_bank[1]);
	free(mt->mt_pc_bank[0]);
	free(mt->mt_pc_bank[1]);
	free(mt->mt_percpu_caller);
	free(mt);
}

static void
store_free(struct mtl_store *st)
{
	if (st != NULL) {
		free(st->rec);
		free(st);
	}
}

void
memstat_mtl_free(struct memory_type_list *list)
{
	struct memory_type *mt, *next;
	int a;

	if (list == NULL)
		return;
	for (mt = list->mtl_head; mt != NULL; mt = next) {
		next = mt->mt_next;
		free_entry(mt);
	}
	for (a = 0; a < MTL_NALLOC; a++) {
		store_free(list->mtl_st_shown[a]);
		store_free(list->mtl_st_spare[a]);
	}
	kvs_htab_free(&list->mtl_hash);
	free(list->mtl_byidx);
	for (a = 0; a < MTL_NSCRATCH; a++)
		free(list->mtl_scratch[a]);
	free(list);
}

int
memstat_mtl_geterror(struct memory_type_list *list)
{
	return list->mtl_error;
}

size_t
memstat_mtl_count(struct memory_type_list *list)
{
	return list->mtl_count;
}

/* ------------------------------------------------------------------ hash */

/* The table mixes the hash itself (hashtab.h), so the identity goes in raw;
 * the allocator goes into the top byte, which all kernel addresses share. */
static inline uint64_t
ident(int allocator, uint64_t kaddr)
{
	return kaddr ^ (uint64_t)allocator << 56;
}

static struct memory_type *
hash_get(const struct memory_type_list *l, int allocator, uint64_t kaddr)
{
	struct kvs_hprobe p;
	uint32_t v;

	for (v = kvs_htab_first(&l->mtl_hash, ident(allocator, kaddr), &p); v != 0;
	    v = kvs_htab_next(&l->mtl_hash, &p)) {
		struct memory_type *mt = l->mtl_byidx[v - 1];
		if (mt->mt_kaddr == kaddr && mt->mt_allocator == allocator)
			return mt;
	}
	return NULL;
}

/* Room in the hash and the index array for `need` entries, so that adding
 * the entry that needs it cannot fail half-way.  Both only grow. */
static int
hash_room(struct memory_type_list *l, size_t need)
{
	unsigned long before = l->mtl_hash.nalloc;
	int rc;

	if (need > l->mtl_capidx) {
		size_t cap = l->mtl_capidx ? l->mtl_capidx * 2 : 64;
		struct memory_type **a = xrealloc(l, l->mtl_byidx, cap * sizeof(*a));
		if (a == NULL)
			return -1;
		l->mtl_byidx = a;
		l->mtl_capidx = cap;
	}
	rc = kvs_htab_reserve(&l->mtl_hash, need);
	l->mtl_alloc_events += l->mtl_hash.nalloc - before;
	return rc;
}

/* Append mt to the index; hash_room() made space. */
static void
hash_put(struct memory_type_list *l, struct memory_type *mt, size_t idx)
{
	l->mtl_byidx[idx] = mt;
	(void)kvs_htab_add(&l->mtl_hash, ident(mt->mt_allocator, mt->mt_kaddr),
	    (uint32_t)(idx + 1));
}

/* Re-index the entries after removals (sweep, abort).  The table and the
 * array keep their size, so this allocates nothing and cannot fail: no
 * stale pointer can be left behind by a half-done rebuild. */
static void
hash_reindex(struct memory_type_list *l)
{
	struct memory_type *mt;
	size_t i = 0;

	kvs_htab_clear(&l->mtl_hash);
	for (mt = l->mtl_head; mt != NULL; mt = mt->mt_next)
		hash_put(l, mt, i++);
}


static void
unlink_entry(struct memory_type_list *l, struct memory_type *mt)
{
	if (mt->mt_allocator >= 0 && mt->mt_allocator < MTL_NALLOC)
		l->mtl_nof[mt->mt_allocator]--;
	if (mt->mt_prev != NULL)
		mt->mt_prev->mt_next = mt->mt_next;
	else
		l->mtl_head = mt->mt_next;
	if (mt->mt_next != NULL)
		mt->mt_next->mt_prev = mt->mt_prev;
	if (l->mtl_guess == mt)
		l->mtl_guess = NULL;
	l->mtl_count--;
}

int
memstat_mtl_sweep(struct memory_type_list *list)
{
	struct memory_type *mt, *next;
	int n = 0;

	for (mt = list->mtl_head; mt != NULL; mt = next) {
		next = mt->mt_next;
		if (mt->mt_vanished) {
			unlink_entry(list, mt);
			free_entry(mt);
			n++;
		}
	}
	if (n > 0)
		hash_reindex(list);
	return n;
}

/* --------------------------------------------------------------- refresh */

static int
grow_array(struct memory_type_list *l, void **p, size_t elem, unsigned have, unsigned n)
{
	void *a = xrealloc(l, *p, n * elem);

	if (a == NULL)
		return -1;
	/* New slots, caller-owned ones included, start zeroed. */
	memset((char *)a + have * elem, 0, (n - have) * elem);
	*p = a;
	return 0;
}

static int
grow_cpus(struct memory_type_list *l, struct memory_type *mt, unsigned n)
{
	if (n <= mt->mt_capcpus)
		return 0;
	if (grow_array(l, (void **)&mt->mt_pa_bank[0], sizeof(*mt->mt_percpu_alloc),
	    mt->mt_capcpus, n) != 0 ||
	    grow_array(l, (void **)&mt->mt_pa_bank[1], sizeof(*mt->mt_percpu_alloc),
	    mt->mt_capcpus, n) != 0 ||
	    grow_array(l, (void **)&mt->mt_pc_bank[0], sizeof(*mt->mt_percpu_cache),
	    mt->mt_capcpus, n) != 0 ||
	    grow_array(l, (void **)&mt->mt_pc_bank[1], sizeof(*mt->mt_percpu_cache),
	    mt->mt_capcpus, n) != 0 ||
	    (mt->mt_percpu_caller != NULL &&
	    grow_array(l, (void **)&mt->mt_percpu_caller, sizeof(*mt->mt_percpu_caller),
	    mt->mt_capcpus, n) != 0))
		return -1;
	mt->mt_capcpus = n;
	if (mt->mt_pa_store == NULL) {
		mt->mt_percpu_alloc = mt->mt_pa_bank[mt->mt_bank];
		mt->mt_pa_stride = 1;
		mt->mt_pa_ncpu = n;
	}
	mt->mt_percpu_cache = mt->mt_pc_bank[mt->mt_bank];
	return 0;
}

/* Per-CPU caller slots exist once a caller sets one. */
struct mt_percpu_caller_s *
mtl_caller_slots(struct memory_type *mt, int cpu)
{
	if (mt->mt_percpu_caller == NULL) {
		mt->mt_percpu_caller = xcalloc(NULL, mt->mt_capcpus, sizeof(*mt->mt_percpu_caller));
		if (mt->mt_percpu_caller == NULL)
			return NULL;
	}
	return &mt->mt_percpu_caller[cpu];
}

int
mtl_refresh_begin(struct memory_type_list *l, int allocator, unsigned maxcpus)
{
	bool counted = allocator >= 0 && allocator < MTL_NALLOC;
	struct memory_type *mt;

	l->mtl_gen++;
	l->mtl_guess = NULL;
	l->mtl_fill_alloc = l->mtl_fill_cache = MTL_PCPU_ZERO;
	l->mtl_defer_counters = false;
	l->mtl_cut_new = false;
	memset(l->mtl_touched, 0, sizeof(l->mtl_touched));
	/* Every entry already has the room: no need to visit them. */
	if (!counted || maxcpus > l->mtl_grown[allocator]) {
		for (mt = l->mtl_head; mt != NULL; mt = mt->mt_next) {
			if (mt->mt_allocator == allocator && grow_cpus(l, mt, maxcpus) != 0) {
				l->mtl_error = MEMSTAT_ERROR_NOMEMORY;
				return -1;
			}
		}
		if (counted)
			l->mtl_grown[allocator] = maxcpus;
	}
	/* Only now: entries created by mtl_upsert get this many slots, and
	 * every entry of the allocator has at least as many. */
	l->mtl_maxcpus = maxcpus;
	return 0;
}

/* Keep the entry's counters for mtl_refresh_abort, taken when a refresh
 * first touches the entry: the scalars are copied, the per-CPU counters
 * simply move to the other bank. */
static void
snapshot(const struct memory_type_list *l, struct memory_type *mt)
{
	/* A walker that defers its counters leaves them as they are until it
	 * cannot fail any more: nothing to copy. */
	mt->mt_block_saved = !l->mtl_defer_counters;
	if (mt->mt_block_saved)
		memcpy(mt->mt_saved, (char *)mt + BLOCK_FIRST, BLOCK_LEN);
	mt->mt_saved_vanished = mt->mt_vanished;
	mt->mt_saved_maxcpus = mt->mt_maxcpus;
	mt->mt_saved_ndomains = mt->mt_ndomains;
	mt->mt_saved_percpu_valid = mt->mt_percpu_valid;
	mt->mt_saved_bank = mt->mt_bank;
	mt->mt_saved_pa = mt->mt_percpu_alloc;
	mt->mt_saved_pa_stride = mt->mt_pa_stride;
	mt->mt_saved_pa_ncpu = mt->mt_pa_ncpu;
	mt->mt_saved_pa_store = mt->mt_pa_store;
	if (mt->mt_pa_store != NULL)
		mt->mt_pa_store->refs--;        /* back with the view on abort */
	mt->mt_pa_store = NULL;
	mt->mt_name_saved = false;
	mt->mt_bank ^= 1;
	mt->mt_percpu_alloc = mt->mt_pa_bank[mt->mt_bank];
	mt->mt_pa_stride = 1;
	mt->mt_pa_ncpu = mt->mt_capcpus;
	mt->mt_percpu_cache = mt->mt_pc_bank[mt->mt_bank];
}

/* Clear a per-CPU array as the walker asked (MTL_PCPU_*). */
static void
reset_array(void *a, size_t elem, unsigned cap, unsigned maxcpus, int fill)
{
	unsigned from = fill == MTL_PCPU_FILLED ? (maxcpus < cap ? maxcpus : cap) : 0;

	if (fill != MTL_PCPU_UNUSED)
		memset((char *)a + (size_t)from * elem, 0, (size_t)(cap - from) * elem);
}

void
mtl_counters_flow(struct memory_type *mt, uint64_t alloced, uint64_t freed, uint64_t nallocs,
    uint64_t nfrees, uint64_t sizemask)
{
	/* Only an entry some walker gave other counters has them to clear. */
	if (!mt->mt_flow_only) {
		memset((char *)mt + BLOCK_FIRST, 0, BLOCK_LEN);
		mt->mt_flow_only = true;
	}
	mt->mt_memalloced = alloced;
	mt->mt_memfreed = freed;
	mt->mt_numallocs = nallocs;
	mt->mt_numfrees = nfrees;
	mt->mt_sizemask = sizemask;
	mt->mt_bytes = alloced - freed;
	mt->mt_count = nallocs - nfrees;
}

static void
reset_counters(const struct memory_type_list *l, struct memory_type *mt, bool percpu)
{
	if (!l->mtl_defer_counters) {
		/* The walker may now write any counter. */
		memset((char *)mt + BLOCK_FIRST, 0, BLOCK_LEN);
		mt->mt_flow_only = false;
	}
	mt->mt_percpu_valid = percpu;
	if (!percpu || mt->mt_capcpus == 0)
		return;
	reset_array(mt->mt_percpu_alloc, sizeof(*mt->mt_percpu_alloc), mt->mt_capcpus,
	    l->mtl_maxcpus, l->mtl_fill_alloc);
	reset_array(mt->mt_percpu_cache, sizeof(*mt->mt_percpu_cache), mt->mt_capcpus,
	    l->mtl_maxcpus, l->mtl_fill_cache);
}

void
memstat_mtl_set_percpu(struct memory_type_list *list, int enable)
{
	list->mtl_nopercpu = !enable;
}

struct memory_type *
mtl_upsert(struct memory_type_list *l, int allocator, uint64_t kaddr, int *is_new)
{
	/* Walkers see a steady kernel list in the order of the refresh
	 * before, which is the list's own, backwards (new entries go to the
	 * head): the entry before the last one upserted is the first guess. */
	struct memory_type *mt = l->mtl_guess;

	if (mt == NULL || mt->mt_kaddr != kaddr || mt->mt_allocator != allocator)
		mt = hash_get(l, allocator, kaddr);
	*is_new = 0;
	if (mt == NULL) {
		if (hash_room(l, l->mtl_count + 1) != 0)
			goto nomem;
		mt = entry_alloc(l);
		if (mt == NULL || grow_cpus(l, mt, l->mtl_maxcpus) != 0) {
			if (mt != NULL)
				free_entry(mt);
			goto nomem;
		}
		mt->mt_allocator = allocator;
		mt->mt_kaddr = kaddr;
		mt->mt_created_gen = l->mtl_gen;
		/* At the head, as libmemstat inserts: the list ends up in
		 * reverse discovery order. */
		mt->mt_next = l->mtl_head;
		if (l->mtl_head != NULL)
			l->mtl_head->mt_prev = mt;
		l->mtl_head = mt;
		hash_put(l, mt, l->mtl_count);
		l->mtl_count++;
		if (allocator >= 0 && allocator < MTL_NALLOC) {
			l->mtl_nof[allocator]++;
			if (mt->mt_capcpus < l->mtl_grown[allocator])
				l->mtl_grown[allocator] = mt->mt_capcpus;
		}
		*is_new = 1;
	}
	if (mt->mt_seen_gen != l->mtl_gen) {
		if (allocator >= 0 && allocator < MTL_NALLOC)
			l->mtl_touched[allocator]++;
		if (!*is_new)
			snapshot(l, mt);
		reset_counters(l, mt, !l->mtl_nopercpu);
	}
	mt->mt_seen_gen = l->mtl_gen;
	mt->mt_vanished = false;
	mt->mt_maxcpus = l->mtl_maxcpus;
	/* The next guess; the one after it is fetched while the walker reads
	 * the kernel (the next's own lines were fetched the time before). */
	if ((l->mtl_guess = mt->mt_prev) != NULL && l->mtl_guess->mt_prev != NULL)
		mtl_prefetch_hot(l->mtl_guess->mt_prev);
	return mt;
nomem:
	l->mtl_error = MEMSTAT_ERROR_NOMEMORY;
	return NULL;
}

void
mtl_set_name(struct memory_type *mt, const char *name, uint64_t namekey)
{
	size_t n = strnlen(name, MEMTYPE_MAXNAME - 1);

	/* An entry that existed before this refresh gets its old name back if
	 * the refresh fails; names rarely change, so this copy is rare. */
	if (mt->mt_created_gen != mt->mt_seen_gen && !mt->mt_name_saved) {
		memcpy(mt->mt_saved_name, mt->mt_name, sizeof(mt->mt_name));
		mt->mt_saved_namekey = mt->mt_namekey;
		mt->mt_name_saved = true;
	}
	memcpy(mt->mt_name, name, n);
	mt->mt_name[n] = '\0';
	mt->mt_namekey = namekey;
}

/* A store with room for at least nrec records (more, so that a list that
 * gains a few entries does not reallocate every time). */
static int
store_room(struct memory_type_list *l, struct mtl_store **pst, size_t nrec)
{
	struct mtl_store *st = *pst;
	struct mt_percpu_alloc_s *r;
	size_t cap;

	if (st == NULL) {
		if ((st = xcalloc(l, 1, sizeof(*st))) == NULL)
			return -1;
		*pst = st;
	}
	if (nrec <= st->cap)
		return 0;
	cap = nrec + nrec / 8;
	if (cap < nrec || cap > SIZE_MAX / sizeof(*r) ||
	    (r = xrealloc(l, st->rec, cap * sizeof(*r))) == NULL)
		return -1;
	st->rec = r;
	st->cap = cap;
	return 0;
}

int
mtl_store_reserve(struct memory_type_list *l, int allocator, size_t nrec)
{
	if (allocator < 0 || allocator >= MTL_NALLOC)
		return -1;
	/* No entry views the spare (a good refresh that filled it made it
	 * shown; a failed one took its views back): it may move.  The first
	 * time, the store the second refresh will fill is made too, so that
	 * it allocates nothing. */
	if (store_room(l, &l->mtl_st_spare[allocator], nrec) != 0 ||
	    (l->mtl_st_shown[allocator] == NULL &&
	    store_room(l, &l->mtl_st_shown[allocator], nrec) != 0)) {
		l->mtl_error = MEMSTAT_ERROR_NOMEMORY;
		return -1;
	}
	l->mtl_st_spare[allocator]->used = 0;
	return 0;
}

struct mt_percpu_alloc_s *
mtl_store_take(struct memory_type_list *l, int allocator, size_t n)
{
	struct mtl_store *st = allocator >= 0 && allocator < MTL_NALLOC ?
	    l->mtl_st_spare[allocator] : NULL;

	if (st == NULL || n > st->cap - st->used)
		return NULL;
	st->used += n;
	return st->rec + (st->used - n);
}

void
mtl_store_view(struct memory_type_list *l, struct memory_type *mt,
    struct mt_percpu_alloc_s *rec, size_t stride, unsigned ncpu)
{
	struct mtl_store *st = l->mtl_st_spare[mt->mt_allocator];

	if (mt->mt_pa_store != NULL)
		mt->mt_pa_store->refs--;
	st->refs++;
	mt->mt_pa_store = st;
	mt->mt_percpu_alloc = rec;
	mt->mt_pa_stride = stride;
	mt->mt_pa_ncpu = ncpu;
}

void *
mtl_scratch(struct memory_type_list *l, int which, size_t bytes)
{
	size_t len = l->mtl_scratch_len[which], old = len;
	void *p;

	if (bytes <= len)
		return l->mtl_scratch[which];
	len = len ? len : 4096;
	while (len < bytes)
		len *= 2;
	if ((p = xrealloc(l, l->mtl_scratch[which], len)) == NULL)
		return NULL;
	memset((char *)p + old, 0, len - old);
	l->mtl_scratch[which] = p;
	l->mtl_scratch_len[which] = len;
	return p;
}

void
mtl_sort_recs(struct memory_type_list *l, int memo, struct krec *r, size_t n, struct krec *tmp)
{
	struct krec *m = NULL;

	if (n >= 2 && n <= (SIZE_MAX / sizeof(*r) - 1) / 2)
		m = mtl_scratch(l, memo, (2 * n + 1) * sizeof(*r));
	if (m != NULL)
		krec_sort_memo(r, n, tmp, m);
	else
		krec_sort(r, n, tmp);
}

/* A vanished entry keeps the counters of the last refresh that saw it: its
 * per-CPU ones move from the store to its own bank, which has room for them
 * (mtl_refresh_begin grew every entry of the allocator to at least the
 * CPUs of that refresh), so that no entry holds the store any more. */
static void
store_leave(struct memory_type *mt)
{
	struct mt_percpu_alloc_s *bank = mt->mt_pa_bank[mt->mt_bank];
	unsigned c, n = mt->mt_pa_ncpu < mt->mt_capcpus ? mt->mt_pa_ncpu : mt->mt_capcpus;

	for (c = 0; c < n; c++)
		bank[c] = *mt_pa(mt, c);
	if (mt->mt_capcpus > n)
		memset(bank + n, 0, (size_t)(mt->mt_capcpus - n) * sizeof(*bank));
	mt->mt_pa_store->refs--;
	mt->mt_pa_store = NULL;
	mt->mt_percpu_alloc = bank;
	mt->mt_pa_stride = 1;
	mt->mt_pa_ncpu = mt->mt_capcpus;
}

void
mtl_refresh_cut(struct memory_type_list *l)
{
	l->mtl_cut_new = true;
}

void
mtl_list_cut(struct memory_type_list *l, kvs_t *kd, const char *name, uint64_t at,
    uint64_t after, const char *lost)
{
	kvs_warn_lost(kd, "%s is cut at 0x%llx (after 0x%llx): %s; %s are missing", name,
	    (unsigned long long)at, (unsigned long long)after, kvs_geterr(kd), lost);
	kerr_clear(&kd->err);
	mtl_refresh_cut(l);
}

void
mtl_refresh_commit(struct memory_type_list *l, int allocator)
{
	struct memory_type *mt;

	if (allocator >= 0 && allocator < MTL_NALLOC)
		l->mtl_cut[allocator] = l->mtl_cut_new;
	/* Every entry of the allocator seen: none vanished, no need to look. */
	if (allocator < 0 || allocator >= MTL_NALLOC || l->mtl_touched[allocator] != l->mtl_nof[allocator])
		for (mt = l->mtl_head; mt != NULL; mt = mt->mt_next)
			if (mt->mt_allocator == allocator && mt->mt_seen_gen != l->mtl_gen) {
				mt->mt_vanished = true;
				if (mt->mt_pa_store != NULL)
					store_leave(mt);
			}
	/* The store this refresh filled is the one shown now; the one it
	 * replaces, which no entry views any more (the entries this refresh
	 * saw view the new one, the others their banks), is the next spare. */
	if (allocator >= 0 && allocator < MTL_NALLOC && l->mtl_st_spare[allocator] != NULL &&
	    l->mtl_st_spare[allocator]->refs > 0) {
		struct mtl_store *old = l->mtl_st_shown[allocator];
		l->mtl_st_shown[allocator] = l->mtl_st_spare[allocator];
		l->mtl_st_spare[allocator] = old;
	}
	/* The zone table goes with the entries whose size masks index it. */
	if (allocator == ALLOCATOR_MALLOC && l->mtl_zones_staged) {
		l->mtl_zones = l->mtl_zones_new;
		l->mtl_zones_staged = false;
		mtl_publish_zones(&l->mtl_zones);
	}
}

void
mtl_refresh_abort(struct memory_type_list *l, int allocator, int error)
{
	struct memory_type *mt, *next;
	bool removed = false;

	for (mt = l->mtl_head; mt != NULL; mt = next) {
		next = mt->mt_next;
		if (mt->mt_allocator != allocator)
			continue;
		if (mt->mt_created_gen == l->mtl_gen) {
			unlink_entry(l, mt);
			free_entry(mt);
			removed = true;
			continue;
		}
		if (mt->mt_seen_gen != l->mtl_gen)
			continue;       /* not touched by the failed refresh */
		if (mt->mt_block_saved) {
			memcpy((char *)mt + BLOCK_FIRST, mt->mt_saved, BLOCK_LEN);
			mt->mt_flow_only = false;
		}
		mt->mt_vanished = mt->mt_saved_vanished;
		mt->mt_maxcpus = mt->mt_saved_maxcpus;
		mt->mt_ndomains = mt->mt_saved_ndomains;
		mt->mt_percpu_valid = mt->mt_saved_percpu_valid;
		if (mt->mt_name_saved) {
			memcpy(mt->mt_name, mt->mt_saved_name, sizeof(mt->mt_name));
			mt->mt_namekey = mt->mt_saved_namekey;
			mt->mt_name_saved = false;
		}
		mt->mt_seen_gen = 0;
		mt->mt_bank = mt->mt_saved_bank;
		if (mt->mt_pa_store != NULL)
			mt->mt_pa_store->refs--;
		mt->mt_pa_store = mt->mt_saved_pa_store;
		if (mt->mt_pa_store != NULL) {
			mt->mt_pa_store->refs++;
			mt->mt_percpu_alloc = mt->mt_saved_pa;
			mt->mt_pa_stride = mt->mt_saved_pa_stride;
			mt->mt_pa_ncpu = mt->mt_saved_pa_ncpu;
		} else {
			mt->mt_percpu_alloc = mt->mt_pa_bank[mt->mt_bank];
			mt->mt_pa_stride = 1;
			mt->mt_pa_ncpu = mt->mt_capcpus;
		}
		mt->mt_percpu_cache = mt->mt_pc_bank[mt->mt_bank];
	}
	if (removed)
		hash_reindex(l);
	if (allocator == ALLOCATOR_MALLOC)
		l->mtl_zones_staged = false;
	l->mtl_error = error;
}

