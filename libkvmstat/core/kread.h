/*
 * kread.h - typed kernel reads for the walkers: integers, pointers and
 * symbol values, struct fields resolved once from DWARF, and bounded list
 * walks.  Everything here goes through kvs_t only, and names no kernel.
 */
#ifndef KREAD_H
#define KREAD_H

#include <endian.h>
#include <string.h>

#include "kvs_private.h"

/* Little-endian scalar reads at a kernel VA.  0 or -1 (error on kd). */
KVS_HIDDEN int kread_u64(kvs_t *kd, uint64_t va, uint64_t *v);
KVS_HIDDEN int kread_u32(kvs_t *kd, uint64_t va, uint32_t *v);
/* Read an integer of `size` bytes (1, 2, 4, 8), zero-extended. */
KVS_HIDDEN int kread_uint(kvs_t *kd, uint64_t va, unsigned size, uint64_t *v);
/* Read the value of an integer/pointer variable by symbol name; its width
 * comes from DWARF when available, else from the ELF symbol size. */
KVS_HIDDEN int kread_sym_uint(kvs_t *kd, const char *sym, uint64_t *v);
/* As above but returns `dflt` (and clears the error) if the symbol is absent. */
KVS_HIDDEN uint64_t kread_sym_uint_or(kvs_t *kd, const char *sym, uint64_t dflt);

/* A struct member resolved once from DWARF. */
struct kfield {
	uint64_t off, size;
	kvs_kind_t kind;
	uint64_t count, elem_size;
	unsigned bit_size, bit_offset;  /* bit-fields: width, and bits past `off` */
	bool present;
};
/* Resolve type.path; a missing member gives present=false and returns 0
 * unless `required`, in which case it is an error. */
KVS_HIDDEN int kfield(kvs_t *kd, const char *type, const char *path,
    struct kfield *f, bool required);
/* Extract an unsigned little-endian field of f->size bytes from a struct
 * image read into buf of buflen bytes (0 if the field is absent/outside).
 * Inline for the plain 8-, 4- and 2-byte fields every refresh extracts per
 * item and per CPU; bit-fields and odd widths go to kfield_get_slow. */
KVS_HIDDEN uint64_t kfield_get_slow(const void *buf, size_t buflen, const struct kfield *f);
static inline uint64_t
kfield_get(const void *buf, size_t buflen, const struct kfield *f)
{
	const uint8_t *b = (const uint8_t *)buf + f->off;

	if (f->present && f->bit_size == 0 && f->off < buflen) {
		if (f->size >= 8 && buflen - f->off >= 8) {
			uint64_t x;
			memcpy(&x, b, 8);
			return le64toh(x);
		}
		if (f->size == 4 && buflen - f->off >= 4) {
			uint32_t x;
			memcpy(&x, b, 4);
			return le32toh(x);
		}
		if (f->size == 2 && buflen - f->off >= 2) {
			uint16_t x;
			memcpy(&x, b, 2);
			return le16toh(x);
		}
	}
	return kfield_get_slow(buf, buflen, f);
}

/* A field that is a whole little-endian u64 inside a buffer of buflen
 * bytes: a walker decides this once per layout and then reads the field
 * with kfield_u64, no check per item. */
static inline bool
kfield_is_u64(const struct kfield *f, size_t buflen)
{
	return f->present && f->bit_size == 0 && f->size == 8 && f->off <= buflen &&
	    buflen - f->off >= 8;
}
static inline uint64_t
kfield_u64(const void *buf, const struct kfield *f)
{
	uint64_t x;

	memcpy(&x, (const uint8_t *)buf + f->off, 8);
	return le64toh(x);
}

/*
 * Bulk reads of many small records that sit close together in memory (the
 * per-CPU statistics of malloc types, counter(9) slots of UMA zones): the
 * walker collects one krec per record, sorts them by address once per
 * refresh, and then reads each run of neighbours with one kvs_read per CPU
 * instead of one per record and CPU.
 */
struct krec {
	uint64_t addr;          /* of CPU 0's copy (or the only copy) */
	uint32_t item;          /* the walker's index of the owning object */
	uint32_t slot;          /* which of the object's records */
};
/* Sort by address, stably, through tmp[n] (already ascending or descending
 * lists cost O(n)); allocates nothing. */
KVS_HIDDEN void krec_sort(struct krec *r, size_t n, struct krec *tmp);
/* krec_sort, remembering the input and its order in memo[2n + 1] (zeroed
 * the first time, then kept by the caller between calls): the same input
 * as last time (a steady kernel) is sorted by one copy. */
KVS_HIDDEN void krec_sort_memo(struct krec *r, size_t n, struct krec *tmp, struct krec *memo);
/* The run that starts at r[i]: records [i, return value) of `size` bytes
 * each whose bytes lie within [r[i].addr, *hi), a span of at most maxspan
 * bytes with no gap wider than a cache line between neighbours. */
KVS_HIDDEN size_t krec_run(const struct krec *r, size_t n, size_t i, size_t size,
    size_t maxspan, uint64_t *hi);

/*
 * Cycle-bounded list walk (Brent's algorithm: O(1) memory, a cycle is
 * detected within about twice its length).  Usage:
 *   struct kwalk w; kwalk_init(&w, max);
 *   for (p = head; p != 0; p = next) { if (kwalk_step(kd, &w, p, "what") != 0) fail; ... }
 */
struct kwalk {
	uint64_t tortoise, steps, power, lam, max;
};
KVS_HIDDEN void kwalk_init(struct kwalk *w, uint64_t max);
KVS_HIDDEN int kwalk_step(kvs_t *kd, struct kwalk *w, uint64_t node, const char *what);

#endif
