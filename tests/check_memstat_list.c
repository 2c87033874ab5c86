/*
 * check_memstat_list.c - the memory_type_list without a kernel: identity,
 * find semantics, caller slots across refreshes, zeroed per-CPU slots,
 * vanished entries and sweep, rollback of a failed refresh (names too),
 * allocators kept apart, what a refresh resets, per-CPU counters off, CPU
 * growth, zone helpers, error strings, and no allocation in a steady
 * refresh (l->mtl_alloc_events).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memstat_internal.h"
#include "testutil.h"

/* One simulated refresh: kaddrs[i] named names[i], counters from `base`. */
static void
refresh(struct memory_type_list *l, const uint64_t *kaddrs, const char *const *names,
    size_t n, unsigned maxcpus, uint64_t base)
{
	size_t i;

	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, maxcpus), 0);
	for (i = 0; i < n; i++) {
		int is_new;
		struct memory_type *mt = mtl_upsert(l, ALLOCATOR_MALLOC, kaddrs[i], &is_new);
		ck_assert_ptr_nonnull(mt);
		if (is_new || mt->mt_namekey != kaddrs[i] + 1)
			mtl_set_name(mt, names[i], kaddrs[i] + 1);
		mt->mt_numallocs = base + i;
		mt->mt_count = i;
		mt->mt_percpu_alloc[maxcpus - 1].mtp_numallocs = base + i;
	}
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
}

static const uint64_t K[] = { 0x1000, 0x2000, 0x3000, 0x4000 };
static const char *const N[] = { "devbuf", "temp", "devbuf", "a_name_that_is_longer_than_thirty_one_chars" };

START_TEST(identity_and_find)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int dup = 0;

	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_UNDEFINED);
	refresh(l, K, N, 4, 4, 100);
	ck_assert_uint_eq(memstat_mtl_count(l), 4);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
		dup += strcmp(memstat_get_name(mt), "devbuf") == 0;
	ck_assert_int_eq(dup, 2);
	/* Inserted at the head: reverse discovery order, find = first match. */
	mt = memstat_mtl_first(l);
	ck_assert_uint_eq(memstat_get_kaddr(mt), 0x4000);
	ck_assert_uint_eq(strlen(memstat_get_name(mt)), MEMTYPE_MAXNAME - 1);
	mt = memstat_mtl_find(l, ALLOCATOR_MALLOC, "devbuf");
	ck_assert_uint_eq(memstat_get_kaddr(mt), 0x3000);
	ck_assert_ptr_eq(memstat_mtl_find(l, ALLOCATOR_ANY, "temp"),
	    memstat_mtl_find(l, ALLOCATOR_MALLOC, "temp"));
	ck_assert_ptr_null(memstat_mtl_find(l, ALLOCATOR_UMA, "temp"));
	ck_assert_ptr_null(memstat_mtl_find(l, ALLOCATOR_ANY, "nope"));
	memstat_mtl_free(l);
}
END_TEST

START_TEST(caller_slots_and_steady_state)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	unsigned long ev;

	refresh(l, K, N, 4, 4, 100);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt)) {
		ck_assert_uint_eq(memstat_get_caller_uint64(mt, 5), 0);
		ck_assert_ptr_null(memstat_get_percpu_caller_pointer(mt, 3, 0));
		ck_assert_uint_eq(memstat_get_percpu_caller_uint64(mt, 2, 15), 0);
		memstat_set_caller_uint64(mt, 5, memstat_get_kaddr(mt));
		memstat_set_caller_pointer(mt, 0, mt);
		memstat_set_percpu_caller_uint64(mt, 2, 15, 77);
	}
	ev = l->mtl_alloc_events;
	refresh(l, K, N, 4, 4, 200);
	refresh(l, K, N, 4, 4, 300);
	ck_assert_uint_eq(l->mtl_alloc_events, ev);               /* nothing allocated */
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt)) {
		ck_assert_uint_eq(memstat_get_caller_uint64(mt, 5), memstat_get_kaddr(mt));
		ck_assert_ptr_eq(memstat_get_caller_pointer(mt, 0), mt);
		ck_assert_uint_eq(memstat_get_percpu_caller_uint64(mt, 2, 15), 77);
		ck_assert_uint_ge(memstat_get_numallocs(mt), 300);
	}
	/* Out-of-range indexes and CPUs are harmless. */
	mt = memstat_mtl_first(l);
	memstat_set_caller_uint64(mt, 16, 1);
	memstat_set_percpu_caller_uint64(mt, 99, 0, 1);
	ck_assert_uint_eq(memstat_get_caller_uint64(mt, -1), 0);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 4), 0);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(vanished_and_sweep)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;

	refresh(l, K, N, 4, 2, 10);
	refresh(l, K, N, 2, 2, 20);                            /* last two gone */
	ck_assert_uint_eq(memstat_mtl_count(l), 4);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
		ck_assert_int_eq(memstat_get_vanished(mt), memstat_get_kaddr(mt) >= 0x3000);
	ck_assert_int_eq(memstat_mtl_sweep(l), 2);
	ck_assert_uint_eq(memstat_mtl_count(l), 2);
	refresh(l, K, N, 4, 2, 30);                            /* they come back as new */
	ck_assert_uint_eq(memstat_mtl_count(l), 4);
	ck_assert_ptr_nonnull(memstat_mtl_find(l, ALLOCATOR_MALLOC, "devbuf"));
	memstat_mtl_free(l);
}
END_TEST

START_TEST(abort_restores)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int is_new;

	refresh(l, K, N, 2, 4, 10);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	ck_assert_int_eq(is_new, 0);
	ck_assert_uint_eq(mt->mt_numallocs, 0);                /* reset for refill */
	mt->mt_numallocs = 999;
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, 0x9000, &is_new);
	ck_assert_int_eq(is_new, 1);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_mtl_count(l), 2);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt)) {
		ck_assert_uint_ne(memstat_get_kaddr(mt), 0x9000);
		ck_assert_uint_eq(memstat_get_numallocs(mt), 10 + (memstat_get_kaddr(mt) == K[1]));
		ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 10 + (memstat_get_kaddr(mt) == K[1]));
	}
	/* The list still works after a rollback. */
	refresh(l, K, N, 4, 4, 50);
	ck_assert_uint_eq(memstat_mtl_count(l), 4);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(abort_restores_names_and_keeps_capacity)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	unsigned long ev;
	uint64_t k;
	int is_new;

	refresh(l, K, N, 2, 4, 10);
	ev = l->mtl_alloc_events;
	/* A failed refresh that renames an entry and creates many (the hash
	 * grows) leaves names, namekeys and counters as they were. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[1], &is_new);
	mtl_set_name(mt, "renamed", 0xdead);
	mtl_set_name(mt, "renamed_twice", 0xbeef);
	ck_assert_str_eq(memstat_get_name(mt), "renamed_twice");
	for (k = 1; k <= 500; k++)
		ck_assert_ptr_nonnull(mtl_upsert(l, ALLOCATOR_MALLOC, 0x100000 + k * 64, &is_new));
	ck_assert_uint_eq(memstat_mtl_count(l), 502);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM_SHORTREAD);
	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_KVM_SHORTREAD);
	ck_assert_uint_eq(memstat_mtl_count(l), 2);
	mt = memstat_mtl_find(l, ALLOCATOR_MALLOC, "temp");
	ck_assert_ptr_nonnull(mt);
	ck_assert_uint_eq(memstat_get_kaddr(mt), K[1]);
	ck_assert_uint_eq(mt->mt_namekey, K[1] + 1);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 11);
	ck_assert_ptr_null(memstat_mtl_find(l, ALLOCATOR_ANY, "renamed_twice"));
	/* The grown table is kept: a refresh with 500 new entries again only
	 * allocates the entries and their banks, and then steady state is free. */
	ev = l->mtl_alloc_events;
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	for (k = 1; k <= 500; k++)
		ck_assert_ptr_nonnull(mtl_upsert(l, ALLOCATOR_MALLOC, 0x100000 + k * 64, &is_new));
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(l->mtl_alloc_events - ev, 500 * 5);     /* entry + 4 banks */
	ck_assert_uint_eq(memstat_mtl_count(l), 502);
	/* Sweep the two old entries (vanished), then refresh: nothing allocated. */
	ck_assert_int_eq(memstat_mtl_sweep(l), 2);
	ev = l->mtl_alloc_events;
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	for (k = 1; k <= 500; k++) {
		mt = mtl_upsert(l, ALLOCATOR_MALLOC, 0x100000 + k * 64, &is_new);
		ck_assert_int_eq(is_new, 0);
	}
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(l->mtl_alloc_events, ev);
	ck_assert_uint_eq(memstat_mtl_count(l), 500);
	memstat_mtl_free(l);
}
END_TEST

/*
 * A failed refresh puts back what the refresh it follows left, not what an
 * older one did: a name set by the last good refresh (not the first one's),
 * the CPU count of the last good refresh (the failed one had more), and the
 * vanished mark of an entry the failed refresh saw again.
 */
START_TEST(abort_restores_last_good_state)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *a, *b;
	int is_new;

	refresh(l, K, N, 2, 4, 10);                            /* K[1] "temp" */
	b = memstat_mtl_find(l, ALLOCATOR_MALLOC, "temp");
	ck_assert_ptr_nonnull(b);
	/* A good refresh renames K[1]; a failed one renames it again. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	a = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[1], &is_new), b);
	mtl_set_name(b, "renamed", 0xbeef);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 8), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[1], &is_new), b);
	ck_assert_uint_eq(memstat_get_maxcpus(b), 8);
	mtl_set_name(b, "renamed_again", 0xcafe);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_str_eq(memstat_get_name(b), "renamed");
	ck_assert_uint_eq(b->mt_namekey, 0xbeef);
	ck_assert_uint_eq(memstat_get_maxcpus(b), 4);
	/* K[1] vanishes in a good refresh, comes back in a failed one. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new), a);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_int_eq(memstat_get_vanished(b), 1);
	ck_assert_int_eq(memstat_get_vanished(a), 0);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[1], &is_new), b);
	ck_assert_int_eq(memstat_get_vanished(b), 0);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_int_eq(memstat_get_vanished(b), 1);
	ck_assert_int_eq(memstat_get_vanished(a), 0);
	ck_assert_int_eq(memstat_mtl_sweep(l), 1);
	ck_assert_uint_eq(memstat_mtl_count(l), 1);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(reset_and_vanished_values)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int is_new;

	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_UMA, 0x5000, &is_new);
	mtl_set_name(mt, "zone", 1);
	mt->mt_rsize = 128;
	mt->mt_xdomain = 3;
	mt->mt_free = 9;
	mt->mt_dom_kegfree[1] = 4;
	mt->mt_percpu_cache[1].mtp_free = 6;
	memstat_set_caller_uint64(mt, 0, 42);
	mt = mtl_upsert(l, ALLOCATOR_UMA, 0x6000, &is_new);
	mtl_set_name(mt, "gone", 2);
	mt->mt_numallocs = 17;
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	mt = memstat_mtl_find(l, ALLOCATOR_UMA, "zone");
	ck_assert_uint_eq(memstat_get_domain_kegfree(mt, 1), 4);
	ck_assert_uint_eq(memstat_get_domain_kegfree(mt, 1000), 0);
	ck_assert_uint_eq(memstat_get_percpu_free(mt, 1), 6);

	/* Second refresh sees only "zone" and sets nothing: every library
	 * counter is back to 0 (rsize and xdomain included), caller slots and
	 * name stay; "gone" keeps its last values and is marked vanished. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_UMA, 0x5000, &is_new);
	mt->mt_count = 5;
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, 0x5000, &is_new), mt);
	ck_assert_uint_eq(mt->mt_count, 5);                    /* no second reset */
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert_str_eq(memstat_get_name(mt), "zone");
	ck_assert_uint_eq(memstat_get_rsize(mt), 0);
	ck_assert_uint_eq(memstat_get_xdomain(mt), 0);
	ck_assert_uint_eq(memstat_get_free(mt), 0);
	ck_assert_uint_eq(memstat_get_domain_kegfree(mt, 1), 0);
	ck_assert_uint_eq(memstat_get_percpu_free(mt, 1), 0);
	ck_assert_uint_eq(memstat_get_caller_uint64(mt, 0), 42);
	ck_assert_int_eq(memstat_get_vanished(mt), 0);
	mt = memstat_mtl_find(l, ALLOCATOR_UMA, "gone");
	ck_assert_int_eq(memstat_get_vanished(mt), 1);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 17);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(allocators_are_separate)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt, *um;
	int is_new;

	refresh(l, K, N, 2, 2, 10);                            /* malloc 0x1000, 0x2000 */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	um = mtl_upsert(l, ALLOCATOR_UMA, K[1], &is_new);      /* same kaddr, other allocator */
	ck_assert_int_eq(is_new, 1);
	mtl_set_name(um, "temp", 7);
	um->mt_numallocs = 1;
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert_uint_eq(memstat_mtl_count(l), 3);
	/* Newest first: the UMA entry heads the list and wins ALLOCATOR_ANY. */
	ck_assert_ptr_eq(memstat_mtl_first(l), um);
	ck_assert_ptr_eq(memstat_mtl_find(l, ALLOCATOR_ANY, "temp"), um);
	mt = memstat_mtl_find(l, ALLOCATOR_MALLOC, "temp");
	ck_assert_ptr_ne(mt, um);
	ck_assert_int_eq(memstat_get_vanished(mt), 0);         /* UMA refresh left it alone */
	ck_assert_uint_eq(memstat_get_numallocs(mt), 11);
	/* A failed UMA refresh does not touch malloc entries, and restores the
	 * UMA entry's domain count with its per-domain counters. */
	um->mt_ndomains = 2;
	um->mt_dom_zonefree[1] = 8;
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, K[1], &is_new), um);
	ck_assert_uint_eq(um->mt_numallocs, 0);
	ck_assert_uint_eq(um->mt_dom_zonefree[1], 0);
	um->mt_ndomains = 4;
	mtl_refresh_abort(l, ALLOCATOR_UMA, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_numallocs(um), 1);
	ck_assert_uint_eq(memstat_get_ndomains(um), 2);
	ck_assert_uint_eq(memstat_get_domain_zonefree(um, 1), 8);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 11);
	ck_assert_uint_eq(memstat_get_allocator(um), ALLOCATOR_UMA);
	ck_assert_uint_eq(memstat_get_allocator(mt), ALLOCATOR_MALLOC);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(percpu_off)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int is_new;

	memstat_mtl_set_percpu(l, 0);
	refresh(l, K, N, 2, 4, 10);
	mt = memstat_mtl_first(l);
	ck_assert(!mt->mt_percpu_valid);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 0);
	ck_assert_uint_ge(memstat_get_numallocs(mt), 10);
	/* Caller slots do not depend on it. */
	memstat_set_percpu_caller_pointer(mt, 3, 15, mt);
	ck_assert_ptr_eq(memstat_get_percpu_caller_pointer(mt, 3, 15), mt);
	memstat_mtl_set_percpu(l, 1);
	refresh(l, K, N, 2, 4, 20);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 21);
	/* Turned off, then a failed refresh: the per-CPU values of the last
	 * good refresh are still shown, and the other way round the stale bank
	 * is not. */
	memstat_mtl_set_percpu(l, 0);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, memstat_get_kaddr(mt), &is_new), mt);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 21);
	refresh(l, K, N, 2, 4, 30);                            /* off: totals only */
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 0);
	memstat_mtl_set_percpu(l, 1);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, memstat_get_kaddr(mt), &is_new), mt);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 0);
	ck_assert_uint_ge(memstat_get_numallocs(mt), 30);
	ck_assert_ptr_eq(memstat_get_percpu_caller_pointer(mt, 3, 15), mt);
	memstat_mtl_free(l);
}
END_TEST

/* A walker that promises to fill the per-CPU slots (MTL_PCPU_FILLED) gets
 * the slots above this refresh's CPUs cleared, and none of its own: with
 * fewer CPUs than two refreshes ago, no stale slot shows through. */
START_TEST(fill_modes)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int is_new, c, pass;

	for (pass = 0; pass < 2; pass++) {               /* both banks: 4 CPUs */
		ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 4), 0);
		mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
		for (c = 0; c < 4; c++)
			mt->mt_percpu_alloc[c].mtp_numallocs = 7;
		mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	}
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	l->mtl_fill_alloc = MTL_PCPU_FILLED;
	l->mtl_fill_cache = MTL_PCPU_UNUSED;
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	ck_assert_uint_eq(mt->mt_percpu_alloc[2].mtp_numallocs, 0);   /* cleared */
	ck_assert_uint_eq(mt->mt_percpu_alloc[3].mtp_numallocs, 0);
	ck_assert_uint_eq(mt->mt_percpu_alloc[0].mtp_numallocs, 7);   /* the walker's */
	for (c = 0; c < 2; c++)
		mt->mt_percpu_alloc[c].mtp_numallocs = 9;
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 1), 9);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 0);
	ck_assert_uint_eq(memstat_get_percpu_free(mt, 0), 0);
	/* The next refresh clears everything again unless told otherwise. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	ck_assert_int_eq(l->mtl_fill_alloc, MTL_PCPU_ZERO);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	memstat_mtl_free(l);
}
END_TEST

/* One refresh of a walker that defers its counters (the malloc(9) one of
 * 12 and 13+): K[0]'s entry, mt, set to a flow. */
static void
flow_refresh(struct memory_type_list *l, struct memory_type *mt, uint64_t alloced,
    uint64_t freed, uint64_t nallocs, uint64_t nfrees, uint64_t mask)
{
	int is_new;

	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	l->mtl_defer_counters = true;
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new), mt);
	mtl_counters_flow(mt, alloced, freed, nallocs, nfrees, mask);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
}

/* A walker that defers its counters (mtl_defer_counters): upsert leaves them
 * as they were, an abort keeps them, and the walker's final stores show. */
START_TEST(deferred_counters)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int is_new;

	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	mt->mt_numallocs = 5;
	mt->mt_size = 64;
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	l->mtl_defer_counters = true;
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new), mt);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 5);        /* left alone */
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 5);
	ck_assert_uint_eq(memstat_get_size(mt), 64);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	ck_assert(!l->mtl_defer_counters);
	l->mtl_defer_counters = true;
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new), mt);
	mtl_counters_flow(mt, 100, 40, 9, 3, 0x30);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 9);
	ck_assert_uint_eq(memstat_get_numfrees(mt), 3);
	ck_assert_uint_eq(memstat_get_count(mt), 6);
	ck_assert_uint_eq(memstat_get_bytes(mt), 60);
	ck_assert_uint_eq(memstat_get_sizemask(mt), 0x30);
	ck_assert_uint_eq(memstat_get_size(mt), 0);     /* cleared by the flow */
	/* A second flow refresh has nothing else to clear and sets its own. */
	flow_refresh(l, mt, 200, 50, 20, 5, 0x10);
	ck_assert_uint_eq(memstat_get_count(mt), 15);
	ck_assert_uint_eq(memstat_get_bytes(mt), 150);
	ck_assert_uint_eq(memstat_get_sizemask(mt), 0x10);
	ck_assert_uint_eq(memstat_get_size(mt), 0);
	/* A normal refresh right after the flows sets another counter, which
	 * the next flow clears. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	mt->mt_size = 48;
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(memstat_get_size(mt), 48);
	flow_refresh(l, mt, 200, 50, 20, 5, 0x10);
	ck_assert_uint_eq(memstat_get_size(mt), 0);
	ck_assert_uint_eq(memstat_get_count(mt), 15);
	/* A normal refresh after a deferred one snapshots again. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 0);
	mt->mt_numallocs = 11;
	mt->mt_size = 32;
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_numallocs(mt), 20);
	ck_assert_uint_eq(memstat_get_size(mt), 0);
	/* Counters a normal refresh set, committed or put back by an abort,
	 * are cleared by the next flow. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	mt->mt_size = 32;
	mt->mt_free = 4;
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[0], &is_new);
	mtl_refresh_abort(l, ALLOCATOR_MALLOC, MEMSTAT_ERROR_KVM);
	ck_assert_uint_eq(memstat_get_size(mt), 32);
	flow_refresh(l, mt, 1, 0, 1, 0, 0);
	ck_assert_uint_eq(memstat_get_size(mt), 0);
	ck_assert_uint_eq(memstat_get_free(mt), 0);
	ck_assert_uint_eq(memstat_get_count(mt), 1);
	memstat_mtl_free(l);
}
END_TEST

/* mtl_upsert's guess (the entry before the last one upserted) is only a
 * guess: walks in another order than the refresh before, an entry of
 * another allocator with the same kernel address in the guessed place,
 * and entries swept between refreshes all find the entry of their own
 * identity. */
START_TEST(upsert_guess_is_checked)
{
	static const uint64_t orders[][4] = {
		{ 0x1000, 0x2000, 0x3000, 0x4000 },     /* as created */
		{ 0x1000, 0x3000, 0x2000, 0x4000 },     /* the guess wrong twice */
		{ 0x4000, 0x3000, 0x2000, 0x1000 },     /* backwards */
		{ 0x2000, 0x1000, 0x4000, 0x3000 },
	};
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *byk[5], *mt, *u;
	size_t o, i;
	int is_new;

	refresh(l, K, N, 4, 2, 0);
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		byk[memstat_get_kaddr(mt) / 0x1000 - 1] = mt;
	for (o = 0; o < 4; o++) {
		ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
		for (i = 0; i < 4; i++) {
			mt = mtl_upsert(l, ALLOCATOR_MALLOC, orders[o][i], &is_new);
			ck_assert_int_eq(is_new, 0);
			ck_assert_ptr_eq(mt, byk[orders[o][i] / 0x1000 - 1]);
		}
		mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	}
	/* A UMA entry at 0x2000 created at the head, before the malloc one
	 * at 0x1000 in list order: a walk of the malloc types after 0x1000
	 * is guessed that entry, which is not its own. */
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	u = mtl_upsert(l, ALLOCATOR_UMA, 0x2000, &is_new);
	ck_assert_int_eq(is_new, 1);
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, 0x4000, &is_new), byk[3]);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, 0x2000, &is_new), byk[1]);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_MALLOC, 0x1000, &is_new), byk[0]);
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 2), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, 0x2000, &is_new), u);
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	/* 0x3000 vanished and swept: a walk that has it again makes a new
	 * entry, and the others are still found. */
	ck_assert_int_eq(memstat_mtl_sweep(l), 1);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_MALLOC, 2), 0);
	for (i = 0; i < 4; i++) {
		mt = mtl_upsert(l, ALLOCATOR_MALLOC, K[i], &is_new);
		ck_assert_int_eq(is_new, i == 2);
		if (i != 2)
			ck_assert_ptr_eq(mt, byk[i]);
		ck_assert_uint_eq(memstat_get_kaddr(mt), K[i]);
	}
	mtl_refresh_commit(l, ALLOCATOR_MALLOC);
	ck_assert_uint_eq(memstat_mtl_count(l), 5);
	memstat_mtl_free(l);
}
END_TEST

/* A walker's working space keeps its contents when it grows, and what it
 * grows by reads zero (a memo in it starts empty). */
START_TEST(scratch_grows_zeroed)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	unsigned char *p = mtl_scratch(l, MTL_SCRATCH_UMA_MEMO, 100);
	size_t i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(p[i], 0);
	memset(p, 0xa5, 100);
	p = mtl_scratch(l, MTL_SCRATCH_UMA_MEMO, 1 << 20);
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(p[i], 0xa5);
	for (i = 100; i < 1 << 20; i++)
		if (p[i] != 0)
			ck_abort_msg("byte %zu of the grown space is %u", i, p[i]);
	memstat_mtl_free(l);
}
END_TEST

/* Begin and commit skip their walks over the entries when nothing needs
 * them: an entry created by a refresh with fewer CPUs is still grown by a
 * later one with more, and an entry a refresh does not see still vanishes. */
START_TEST(skipped_walks)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *a, *b;
	int is_new;

	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 8), 0);
	a = mtl_upsert(l, ALLOCATOR_UMA, K[0], &is_new);
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 4), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, K[0], &is_new), a);
	b = mtl_upsert(l, ALLOCATOR_UMA, K[1], &is_new);
	ck_assert_uint_eq(b->mt_capcpus, 4);
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 8), 0);
	ck_assert_uint_ge(b->mt_capcpus, 8);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, K[0], &is_new), a);
	/* A malloc entry upserted meanwhile does not count for UMA. */
	ck_assert_ptr_nonnull(mtl_upsert(l, ALLOCATOR_MALLOC, K[1], &is_new));
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert(memstat_get_vanished(b));
	ck_assert(!memstat_get_vanished(a));
	ck_assert_int_eq(memstat_mtl_sweep(l), 1);
	ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 8), 0);
	ck_assert_ptr_eq(mtl_upsert(l, ALLOCATOR_UMA, K[0], &is_new), a);
	mtl_refresh_commit(l, ALLOCATOR_UMA);
	ck_assert(!memstat_get_vanished(a));
	memstat_mtl_free(l);
}
END_TEST

/* Handles share nothing: allocations are counted on the list they are for. */
START_TEST(alloc_counts_per_list)
{
	struct memory_type_list *a = memstat_mtl_alloc(), *b = memstat_mtl_alloc();
	unsigned long eb = b->mtl_alloc_events, ea = a->mtl_alloc_events;
	int is_new;

	ck_assert_int_eq(mtl_refresh_begin(a, ALLOCATOR_MALLOC, 4), 0);
	ck_assert_ptr_nonnull(mtl_upsert(a, ALLOCATOR_MALLOC, K[0], &is_new));
	mtl_refresh_commit(a, ALLOCATOR_MALLOC);
	ck_assert_ptr_nonnull(mtl_scratch(a, 0, 100000));
	ck_assert_uint_gt(a->mtl_alloc_events, ea);
	ck_assert_uint_eq(b->mtl_alloc_events, eb);
	ea = a->mtl_alloc_events;
	ck_assert_ptr_nonnull(mtl_scratch(a, 0, 50000));       /* fits: no growth */
	ck_assert_uint_eq(a->mtl_alloc_events, ea);
	memstat_mtl_free(a);
	memstat_mtl_free(b);
}
END_TEST

START_TEST(cpu_growth)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;

	refresh(l, K, N, 2, 2, 1);
	mt = memstat_mtl_first(l);
	memstat_set_percpu_caller_uint64(mt, 1, 0, 5);
	refresh(l, K, N, 2, 64, 2);
	ck_assert_uint_eq(memstat_get_maxcpus(mt), 64);
	ck_assert_uint_eq(memstat_get_percpu_caller_uint64(mt, 1, 0), 5);
	ck_assert_uint_eq(memstat_get_percpu_caller_uint64(mt, 63, 0), 0);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 63), 2 + 1);
	memstat_mtl_free(l);
}
END_TEST

START_TEST(zones_and_strings)
{
	static const size_t sz[] = { 16, 32, 384, 0 };
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;

	mtl_set_zones(sz, 4);
	ck_assert_uint_eq(memstat_malloc_zone_get_count(), 4);
	ck_assert_uint_eq(memstat_malloc_zone_get_size(2), 384);
	ck_assert_uint_eq(memstat_malloc_zone_get_size(4), (size_t)-1);
	refresh(l, K, N, 1, 1, 1);
	mt = memstat_mtl_first(l);
	mt->mt_sizemask = 0x5;
	ck_assert_int_eq(memstat_malloc_zone_used(mt, 2), 1);
	ck_assert_int_eq(memstat_malloc_zone_used(mt, 1), 0);
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_NOMEMORY), "Cannot allocate memory");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_VERSION), "Version mismatch");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_PERMISSION), "Permission denied");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_DATAERROR), "Data format error");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_KVM), "KVM error");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_KVM_NOSYMBOL), "KVM unable to find symbol");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_KVM_SHORTREAD), "KVM short read");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_UNDEFINED), "Unknown error");
	ck_assert_str_eq(memstat_strerror(4), "Unknown error");
	ck_assert_str_eq(memstat_strerror(MEMSTAT_ERROR_TOOMANYCPUS), "Unknown error");
	ck_assert_str_eq(memstat_strerror(-1), "Unknown error");
	ck_assert_int_eq(memstat_malloc_zone_used(mt, 64), 0);
	errno = 0;
	ck_assert_int_eq(memstat_sysctl_all(l, 0), -1);
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(memstat_sysctl_malloc(l, 0), -1);
	ck_assert_int_eq(memstat_sysctl_uma(l, 0), -1);
	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_UNDEFINED);
	ck_assert_ptr_eq(memstat_mtl_first(l), mt);            /* entries untouched */
	ck_assert_uint_eq(memstat_get_numallocs(mt), 1);
	mtl_set_zones(NULL, 0);
	ck_assert_uint_eq(memstat_malloc_zone_get_count(), 0);
	ck_assert_uint_eq(memstat_malloc_zone_get_size(0), (size_t)-1);
	memstat_mtl_free(l);
}
END_TEST

/* Every public function has FreeBSD's prototype: a program that stores them
 * in pointers of the FreeBSD types compiles with -Werror. */
START_TEST(api_signatures)
{
	typedef uint64_t (*get64_t)(const struct memory_type *);
	typedef uint64_t (*getpc_t)(const struct memory_type *, int);
	static const get64_t g[] = {
		memstat_get_countlimit, memstat_get_byteslimit, memstat_get_sizemask,
		memstat_get_size, memstat_get_rsize, memstat_get_memalloced,
		memstat_get_memfreed, memstat_get_numallocs, memstat_get_numfrees,
		memstat_get_bytes, memstat_get_count, memstat_get_free,
		memstat_get_failures, memstat_get_sleeps, memstat_get_xdomain,
		memstat_get_zonefree, memstat_get_kegfree,
	};
	static const getpc_t pc[] = {
		memstat_get_percpu_memalloced, memstat_get_percpu_memfreed,
		memstat_get_percpu_numallocs, memstat_get_percpu_numfrees,
		memstat_get_percpu_sizemask, memstat_get_percpu_free,
	};
	const char *(*se)(int) = memstat_strerror;
	struct memory_type_list *(*al)(void) = memstat_mtl_alloc;
	struct memory_type *(*fi)(struct memory_type_list *) = memstat_mtl_first;
	struct memory_type *(*ne)(struct memory_type *) = memstat_mtl_next;
	struct memory_type *(*fd)(struct memory_type_list *, int, const char *) = memstat_mtl_find;
	void (*fr)(struct memory_type_list *) = memstat_mtl_free;
	int (*ge)(struct memory_type_list *) = memstat_mtl_geterror;
	int (*sy[])(struct memory_type_list *, int) = {
		memstat_sysctl_all, memstat_sysctl_malloc, memstat_sysctl_uma };
	int (*kv[])(struct memory_type_list *, void *) = {
		memstat_kvm_all, memstat_kvm_malloc, memstat_kvm_uma };
	size_t (*zc)(void) = memstat_malloc_zone_get_count;
	size_t (*zs)(size_t) = memstat_malloc_zone_get_size;
	int (*zu)(const struct memory_type *, size_t) = memstat_malloc_zone_used;
	const char *(*gn)(const struct memory_type *) = memstat_get_name;
	int (*ga)(const struct memory_type *) = memstat_get_allocator;
	void *(*gcp)(const struct memory_type *, int) = memstat_get_caller_pointer;
	void (*scp)(struct memory_type *, int, void *) = memstat_set_caller_pointer;
	uint64_t (*gcu)(const struct memory_type *, int) = memstat_get_caller_uint64;
	void (*scu)(struct memory_type *, int, uint64_t) = memstat_set_caller_uint64;
	void *(*gpp)(const struct memory_type *, int, int) = memstat_get_percpu_caller_pointer;
	void (*spp)(struct memory_type *, int, int, void *) = memstat_set_percpu_caller_pointer;
	uint64_t (*gpu)(const struct memory_type *, int, int) = memstat_get_percpu_caller_uint64;
	void (*spu)(struct memory_type *, int, int, uint64_t) = memstat_set_percpu_caller_uint64;
	const void *all[] = { (const void *)se, (const void *)al, (const void *)fi,
		(const void *)ne, (const void *)fd, (const void *)fr, (const void *)ge,
		(const void *)sy[2], (const void *)kv[2], (const void *)zc, (const void *)zs,
		(const void *)zu, (const void *)gn, (const void *)ga, (const void *)gcp,
		(const void *)scp, (const void *)gcu, (const void *)scu, (const void *)gpp,
		(const void *)spp, (const void *)gpu, (const void *)spu };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		ck_assert_ptr_nonnull(all[i]);
	ck_assert_uint_eq(sizeof(g) / sizeof(g[0]) + sizeof(pc) / sizeof(pc[0]), 23);
	ck_assert_int_eq(MEMSTAT_MAXCALLER, 16);
	ck_assert_int_eq(MEMTYPE_MAXNAME, 32);
	ck_assert_int_eq(ALLOCATOR_UNKNOWN, 0);
	ck_assert_int_eq(ALLOCATOR_MALLOC, 1);
	ck_assert_int_eq(ALLOCATOR_UMA, 2);
	ck_assert_int_eq(ALLOCATOR_ANY, 255);
	ck_assert_int_eq(MEMSTAT_ERROR_UNDEFINED, 0);
	ck_assert_int_eq(MEMSTAT_ERROR_NOMEMORY, 1);
	ck_assert_int_eq(MEMSTAT_ERROR_VERSION, 2);
	ck_assert_int_eq(MEMSTAT_ERROR_PERMISSION, 3);
	ck_assert_int_eq(MEMSTAT_ERROR_DATAERROR, 5);
	ck_assert_int_eq(MEMSTAT_ERROR_KVM, 6);
	ck_assert_int_eq(MEMSTAT_ERROR_KVM_NOSYMBOL, 7);
	ck_assert_int_eq(MEMSTAT_ERROR_KVM_SHORTREAD, 8);
}
END_TEST

/* Aligned kernel addresses (the usual case) spread over the hash: every
 * second upsert finds its entry, and nothing is allocated doing so. */
START_TEST(many_entries)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	unsigned long ev;
	uint64_t k;
	int is_new, pass;

	for (pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(mtl_refresh_begin(l, ALLOCATOR_UMA, 1), 0);
		ev = l->mtl_alloc_events;
		for (k = 0; k < 5000; k++) {
			struct memory_type *mt = mtl_upsert(l, ALLOCATOR_UMA,
			    0xfffff80000000000ULL + (k << 12), &is_new);
			ck_assert_ptr_nonnull(mt);
			ck_assert_int_eq(is_new, pass == 0);
			ck_assert_uint_eq(memstat_get_kaddr(mt), 0xfffff80000000000ULL + (k << 12));
		}
		mtl_refresh_commit(l, ALLOCATOR_UMA);
		if (pass == 1)
			ck_assert_uint_eq(l->mtl_alloc_events, ev);
	}
	ck_assert_uint_eq(memstat_mtl_count(l), 5000);
	ck_assert_int_eq(memstat_mtl_sweep(l), 0);
	memstat_mtl_free(l);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("memstat_list");
	TCase *tc = tcase_create("list");

	tcase_add_test(tc, api_signatures);
	tcase_add_test(tc, identity_and_find);
	tcase_add_test(tc, many_entries);
	tcase_add_test(tc, caller_slots_and_steady_state);
	tcase_add_test(tc, vanished_and_sweep);
	tcase_add_test(tc, abort_restores);
	tcase_add_test(tc, abort_restores_names_and_keeps_capacity);
	tcase_add_test(tc, abort_restores_last_good_state);
	tcase_add_test(tc, reset_and_vanished_values);
	tcase_add_test(tc, allocators_are_separate);
	tcase_add_test(tc, percpu_off);
	tcase_add_test(tc, cpu_growth);
	tcase_add_test(tc, fill_modes);
	tcase_add_test(tc, alloc_counts_per_list);
	tcase_add_test(tc, deferred_counters);
	tcase_add_test(tc, upsert_guess_is_checked);
	tcase_add_test(tc, scratch_grows_zeroed);
	tcase_add_test(tc, skipped_walks);
	tcase_add_test(tc, zones_and_strings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
