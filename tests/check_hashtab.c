/*
 * check_hashtab.c - the shared hash table (base/hashtab.h): the FNV-1a
 * helper, insert and lookup, growth to 100k keys, colliding hashes and
 * probes that wrap, replacing a value, clear, and that a cleared or
 * reserved table is refilled without allocating.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "testutil.h"

#define NKEYS 100000

/* Keys as the library's users hold them: records in the caller's array,
 * the table storing index + 1. */
struct rec {
	char name[24];          /* "key" + any size_t */
};

static struct rec *
make_keys(size_t n)
{
	struct rec *r = calloc(n, sizeof(*r));
	size_t i;

	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++)
		snprintf(r[i].name, sizeof(r[i].name), "key%zu", i);
	return r;
}

/* The caller's side of a lookup: the first candidate whose key matches. */
static uint32_t
find(const struct kvs_htab *t, const struct rec *r, uint64_t h, const char *key)
{
	struct kvs_hprobe p;
	uint32_t v;

	for (v = kvs_htab_first(t, h, &p); v != 0; v = kvs_htab_next(t, &p))
		if (strcmp(r[v - 1].name, key) == 0)
			return v;
	return 0;
}

/* Bulk loops count their failures and assert once: a Check assertion per
 * key would dominate the run time. */
static void
add_all(struct kvs_htab *t, const struct rec *r, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += kvs_htab_add(t, kvs_fnv1a(r[i].name), (uint32_t)(i + 1)) != 0;
	ck_assert_uint_eq(bad, 0);
}

static void
check_all(const struct kvs_htab *t, const struct rec *r, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += find(t, r, kvs_fnv1a(r[i].name), r[i].name) != i + 1;
	ck_assert_uint_eq(bad, 0);
}

START_TEST(fnv1a_vectors)
{
	/* The published FNV-1a 64 test values. */
	ck_assert_uint_eq(kvs_fnv1a(""), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(kvs_fnv1a("a"), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(kvs_fnv1a("foobar"), 0x85944171f73967e8ULL);
}
END_TEST

START_TEST(empty_table)
{
	struct kvs_htab t = { 0 };
	struct kvs_hprobe p;

	/* A zeroed table is valid and has allocated nothing. */
	ck_assert_uint_eq(kvs_htab_first(&t, 1, &p), 0);
	ck_assert_uint_eq(t.nalloc, 0);
	kvs_htab_clear(&t);
	kvs_htab_free(&t);
	kvs_htab_free(&t);
	ck_assert_ptr_null(t.slot);
}
END_TEST

START_TEST(insert_and_lookup)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(10);

	add_all(&t, r, 10);
	ck_assert_uint_eq(t.n, 10);
	check_all(&t, r, 10);
	ck_assert_uint_eq(find(&t, r, kvs_fnv1a("key10"), "key10"), 0);
	ck_assert_uint_eq(find(&t, r, kvs_fnv1a(""), ""), 0);
	/* Still the minimum size: 10 values fit at load <= 1/2 in 32 slots. */
	ck_assert_uint_eq(t.nalloc, 2);
	ck_assert_uint_ge(t.mask + 1, 2 * t.n);
	kvs_htab_free(&t);
	free(r);
}
END_TEST

START_TEST(grow_to_100k)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(NKEYS);
	char absent[32];
	size_t i, bad;

	add_all(&t, r, NKEYS);
	ck_assert_uint_eq(t.n, NKEYS);
	ck_assert_uint_ge(t.mask + 1, 2 * (size_t)NKEYS);
	ck_assert_uint_lt(t.mask + 1, 4 * (size_t)NKEYS + 32);
	/* Doubling: 16 slots up to 2^18 is 15 arrays, not one per add. */
	ck_assert_uint_le(t.nalloc, 15);
	check_all(&t, r, NKEYS);
	for (i = 0, bad = 0; i < 1000; i++) {
		snprintf(absent, sizeof(absent), "absent%zu", i);
		bad += find(&t, r, kvs_fnv1a(absent), absent) != 0;
	}
	ck_assert_uint_eq(bad, 0);
	kvs_htab_free(&t);
	ck_assert_uint_eq(t.n, 0);
	free(r);
}
END_TEST

/* Every key under one hash: the table keeps them all (one probe chain) and
 * the caller's comparison tells them apart. */
START_TEST(identical_hashes)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(1000);
	size_t i, bad;

	for (i = 0, bad = 0; i < 1000; i++)
		bad += kvs_htab_add(&t, 42, (uint32_t)(i + 1)) != 0;
	for (i = 0; i < 1000; i++)
		bad += find(&t, r, 42, r[i].name) != i + 1;
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(find(&t, r, 42, "nope"), 0);
	ck_assert_uint_eq(find(&t, r, 43, r[0].name), 0);
	kvs_htab_free(&t);
	free(r);
}
END_TEST

/* Hashes that start probing at the last slot wrap round to slot 0; and
 * different hashes that share a start slot are told apart by the tag. */
START_TEST(collisions_wrap)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(6);
	uint64_t last = 0, other = 0, h;
	size_t i;

	ck_assert_int_eq(kvs_htab_reserve(&t, 6), 0);
	ck_assert_uint_eq(t.mask + 1, 16);
	for (h = 1; last == 0 || other == 0; h++) {
		if ((kvs_htab_tag(h) >> t.shift) != t.mask)
			continue;
		if (last == 0)
			last = h;
		else if (kvs_htab_tag(h) != kvs_htab_tag(last))
			other = h;
	}
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(kvs_htab_add(&t, last, (uint32_t)(i + 1)), 0);
	ck_assert_int_eq(kvs_htab_add(&t, other, 6), 0);
	ck_assert_uint_eq(t.nalloc, 1);                 /* reserved: no growth */
	ck_assert_uint_eq(t.slot[t.mask].val, 1);       /* first at the end ... */
	ck_assert_uint_ne(t.slot[0].val, 0);            /* ... the rest wrapped */
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(find(&t, r, last, r[i].name), i + 1);
	/* Key 5 lives under `other` only. */
	ck_assert_uint_eq(find(&t, r, other, r[5].name), 6);
	ck_assert_uint_eq(find(&t, r, last, r[5].name), 0);
	ck_assert_uint_eq(find(&t, r, other, r[0].name), 0);
	kvs_htab_free(&t);
	free(r);
}
END_TEST

/* A value can be swapped for another record with the same key. */
START_TEST(replace_value)
{
	struct kvs_htab t = { 0 };
	struct kvs_hprobe p;
	uint32_t v;

	ck_assert_int_eq(kvs_htab_add(&t, 7, 1), 0);
	ck_assert_int_eq(kvs_htab_add(&t, 7, 2), 0);
	for (v = kvs_htab_first(&t, 7, &p); v != 0 && v != 2;
	    v = kvs_htab_next(&t, &p))
		;
	ck_assert_uint_eq(v, 2);
	kvs_htab_replace(&t, &p, 9);
	for (v = kvs_htab_first(&t, 7, &p); v == 1; v = kvs_htab_next(&t, &p))
		;
	ck_assert_uint_eq(v, 9);
	ck_assert_uint_eq(kvs_htab_next(&t, &p), 0);
	ck_assert_uint_eq(t.n, 2);
	kvs_htab_free(&t);
}
END_TEST

/* memstat's steady state: clear, refill to the same size, no allocation. */
START_TEST(clear_and_refill_allocate_nothing)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(NKEYS);
	struct kvs_hslot *slots;
	unsigned long na;
	int round;

	add_all(&t, r, NKEYS);
	slots = t.slot;
	na = t.nalloc;
	for (round = 0; round < 3; round++) {
		kvs_htab_clear(&t);
		ck_assert_uint_eq(t.n, 0);
		ck_assert_uint_eq(find(&t, r, kvs_fnv1a(r[0].name), r[0].name), 0);
		add_all(&t, r, NKEYS);
		ck_assert_uint_eq(t.nalloc, na);
		ck_assert_ptr_eq(t.slot, slots);
		check_all(&t, r, NKEYS);
	}
	/* Refilling with fewer values (entries removed) is free as well, and
	 * reserving what the table already has room for never shrinks it. */
	kvs_htab_clear(&t);
	add_all(&t, r, NKEYS / 2);
	ck_assert_int_eq(kvs_htab_reserve(&t, 10), 0);
	ck_assert_uint_eq(t.nalloc, na);
	ck_assert_ptr_eq(t.slot, slots);
	check_all(&t, r, NKEYS / 2);
	kvs_htab_free(&t);
	free(r);
}
END_TEST

START_TEST(reserve_then_add_allocates_once)
{
	struct kvs_htab t = { 0 };
	struct rec *r = make_keys(NKEYS);
	size_t cap;

	ck_assert_int_eq(kvs_htab_reserve(&t, NKEYS), 0);
	ck_assert_uint_eq(t.nalloc, 1);
	cap = t.mask + 1;
	add_all(&t, r, NKEYS);
	ck_assert_uint_eq(t.nalloc, 1);
	ck_assert_uint_eq(t.mask + 1, cap);
	check_all(&t, r, NKEYS);
	/* Beyond what the tag can address: refused, table untouched. */
	ck_assert_int_eq(kvs_htab_reserve(&t, ((size_t)1 << 31) + 1), -1);
	ck_assert_uint_eq(t.mask + 1, cap);
	ck_assert_uint_eq(t.nalloc, 1);
	check_all(&t, r, 100);
	kvs_htab_free(&t);
	free(r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hashtab");
	TCase *tc = tcase_create("hashtab");

	tcase_add_test(tc, fnv1a_vectors);
	tcase_add_test(tc, empty_table);
	tcase_add_test(tc, insert_and_lookup);
	tcase_add_test(tc, grow_to_100k);
	tcase_add_test(tc, identical_hashes);
	tcase_add_test(tc, collisions_wrap);
	tcase_add_test(tc, replace_value);
	tcase_add_test(tc, clear_and_refill_allocate_nothing);
	tcase_add_test(tc, reserve_then_add_allocates_once);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
