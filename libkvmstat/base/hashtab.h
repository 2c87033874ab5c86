/*
 * hashtab.h - the library's one hash table, and its one string hash.
 *
 * Three users share it: the ELF symbol index (name -> symbol), the DWARF
 * name index and answer cache (string -> entry), and memstat's identity
 * hash ((allocator, kernel address) -> struct memory_type).  Their keys
 * differ (borrowed strings, owned strings, integer pairs) and so do their
 * records, so the table holds neither: it maps a caller-computed 64-bit
 * hash to a non-zero uint32 value, normally index + 1 into the caller's own
 * array, and the caller confirms a candidate with its own comparison.
 *
 * Layout: open addressing with linear probing, load at most 1/2, capacity a
 * power of two.  Each slot keeps 32 bits of the (mixed) hash beside the
 * value, for two reasons: a probe skips almost every foreign slot without
 * touching the caller's records, and growing re-places slots from the slot
 * alone, with no call back into the caller.  The caller's hash need not be
 * well spread (memstat passes raw addresses): the table multiplies it by
 * 2^64 / golden ratio and probes from the top bits of the product.
 *
 * Values are never removed one by one.  Users that drop records clear the
 * table and re-add the survivors: kvs_htab_clear keeps the slots, so that
 * refill allocates nothing and cannot fail.
 *
 * Lookups are inline so a hot caller (memstat's refresh) compares keys in
 * its own loop without an indirect call per probe:
 *
 *	struct kvs_hprobe p;
 *	uint32_t v;
 *	for (v = kvs_htab_first(t, h, &p); v != 0; v = kvs_htab_next(t, &p))
 *		if (key_equal(&mine[v - 1], key))
 *			return &mine[v - 1];
 *	return NULL;
 */
#ifndef KVS_HASHTAB_H
#define KVS_HASHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

/* FNV-1a (64-bit) of a NUL-terminated string. */
KVS_HIDDEN uint64_t kvs_fnv1a(const char *s);

struct kvs_hslot {
	uint32_t tag;           /* top 32 bits of the mixed hash */
	uint32_t val;           /* caller's value; 0 = empty slot */
};

/* All-zero is an empty table that has allocated nothing. */
struct kvs_htab {
	struct kvs_hslot *slot; /* [mask + 1], NULL until the first add/reserve */
	size_t mask;
	size_t n;               /* values held */
	unsigned shift;         /* 32 - log2(capacity): tag -> first slot */
	unsigned long nalloc;   /* slot arrays allocated so far (growth); lets
	                         * callers and tests prove a path allocates nothing */
};

/* A lookup in progress: where the last candidate was found. */
struct kvs_hprobe {
	size_t i;
	uint32_t tag;
};

static inline uint32_t
kvs_htab_tag(uint64_t hash)
{
	/* Fibonacci hashing: the top bits of the product depend on every bit
	 * of the hash, so aligned addresses spread as well as FNV output. */
	return (uint32_t)((hash * 0x9E3779B97F4A7C15ULL) >> 32);
}

/* From p->i on: the first slot with p's tag (its value), or 0 at an empty
 * slot.  Load <= 1/2 guarantees an empty slot ends every probe. */
static inline uint32_t
kvs_htab_scan_(const struct kvs_htab *t, struct kvs_hprobe *p)
{
	for (;; p->i = (p->i + 1) & t->mask) {
		const struct kvs_hslot *s = &t->slot[p->i];
		if (s->val == 0)
			return 0;
		if (s->tag == p->tag)
			return s->val;
	}
}

/* First candidate value for `hash`, or 0 when there is none. */
static inline uint32_t
kvs_htab_first(const struct kvs_htab *t, uint64_t hash, struct kvs_hprobe *p)
{
	if (t->n == 0)
		return 0;
	p->tag = kvs_htab_tag(hash);
	p->i = p->tag >> t->shift;
	return kvs_htab_scan_(t, p);
}

/* Next candidate after the one kvs_htab_first/next returned, or 0. */
static inline uint32_t
kvs_htab_next(const struct kvs_htab *t, struct kvs_hprobe *p)
{
	p->i = (p->i + 1) & t->mask;
	return kvs_htab_scan_(t, p);
}

/* Replace the value of the candidate p last returned (same key, another
 * record: the symbol index lets a global definition displace a local one). */
static inline void
kvs_htab_replace(struct kvs_htab *t, const struct kvs_hprobe *p, uint32_t val)
{
	t->slot[p->i].val = val;
}

/* Room for n values in all: after it succeeds, adding up to n values in
 * all cannot fail and allocates nothing.  Never shrinks.  0 or -1 (ENOMEM;
 * the table is unchanged). */
KVS_HIDDEN int kvs_htab_reserve(struct kvs_htab *t, size_t n);
/* Add val (non-zero) under hash; the caller has checked that the key is
 * absent, or wants a duplicate.  Grows on demand: 0, or -1 (ENOMEM; the
 * table is unchanged).  At most 2^31 values: the 32-bit tag addresses the
 * slots. */
KVS_HIDDEN int kvs_htab_add(struct kvs_htab *t, uint64_t hash, uint32_t val);
/* Forget every value, keep the slots: refilling to the same size is free. */
KVS_HIDDEN void kvs_htab_clear(struct kvs_htab *t);
/* Release the slots; the table is all-zero again (nalloc included). */
KVS_HIDDEN void kvs_htab_free(struct kvs_htab *t);

/*
 * The string-keyed table its users share: values are index + 1 into an array
 * of `stride`-byte entries, each holding its key (a `const char *` at
 * `keyoff`), hashed with kvs_fnv1a.  The value whose entry's key equals
 * `key`, or 0.
 */
static inline uint32_t
kvs_htab_find_str(const struct kvs_htab *t, const char *key, const void *ents,
    size_t stride, size_t keyoff)
{
	struct kvs_hprobe p;
	uint32_t v;

	for (v = kvs_htab_first(t, kvs_fnv1a(key), &p); v != 0; v = kvs_htab_next(t, &p)) {
		const char *k;
		memcpy(&k, (const char *)ents + (size_t)(v - 1) * stride + keyoff, sizeof(k));
		if (strcmp(k, key) == 0)
			return v;
	}
	return 0;
}

#endif
