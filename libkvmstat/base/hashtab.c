/*
 * hashtab.c - growth and clearing of the shared hash table (hashtab.h has
 * the design; lookups are inline there).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

#define MIN_BITS 4              /* 16 slots: tiny tables stay tiny */
#define MAX_BITS 32             /* the tag has 32 bits to address slots */

uint64_t
kvs_fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;     /* FNV-1a 64 offset basis */

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;          /* FNV-1a 64 prime */
	}
	return h;
}

/* Place a slot in a table known to have room and not to hold it. */
static void
place(struct kvs_hslot *slot, size_t mask, unsigned shift, struct kvs_hslot s)
{
	size_t i = s.tag >> shift;

	while (slot[i].val != 0)
		i = (i + 1) & mask;
	slot[i] = s;
}

int
kvs_htab_reserve(struct kvs_htab *t, size_t n)
{
	unsigned bits = MIN_BITS;
	struct kvs_hslot *ns;
	size_t cap, i;

	if (t->slot != NULL && n <= (t->mask + 1) / 2)
		return 0;               /* the common case: room already */
	/* Load at most 1/2: cap >= 2n. */
	while (bits < MAX_BITS && bits + 1 < sizeof(size_t) * CHAR_BIT &&
	    ((size_t)1 << bits) / 2 < n)
		bits++;
	cap = (size_t)1 << bits;
	if (cap / 2 < n)
		return -1;              /* more than 2^31 values */
	if (t->slot != NULL && cap <= t->mask + 1)
		return 0;               /* never shrinks */
	ns = calloc(cap, sizeof(*ns));
	if (ns == NULL)
		return -1;
	t->nalloc++;
	/* Re-place from the stored tags: the caller's keys are not needed. */
	if (t->slot != NULL) {
		for (i = 0; i <= t->mask; i++)
			if (t->slot[i].val != 0)
				place(ns, cap - 1, 32 - bits, t->slot[i]);
		free(t->slot);
	}
	t->slot = ns;
	t->mask = cap - 1;
	t->shift = 32 - bits;
	return 0;
}

int
kvs_htab_add(struct kvs_htab *t, uint64_t hash, uint32_t val)
{
	/* Doubling (reserve rounds up to a power of two) keeps adds O(1)
	 * amortised. */
	if ((t->slot == NULL || (t->n + 1) * 2 > t->mask + 1) &&
	    kvs_htab_reserve(t, t->n + 1) != 0)
		return -1;
	place(t->slot, t->mask, t->shift,
	    (struct kvs_hslot){ .tag = kvs_htab_tag(hash), .val = val });
	t->n++;
	return 0;
}

void
kvs_htab_clear(struct kvs_htab *t)
{
	if (t->slot != NULL)
		memset(t->slot, 0, (t->mask + 1) * sizeof(*t->slot));
	t->n = 0;
}

void
kvs_htab_free(struct kvs_htab *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
