/*
 * malloc_internal.h - what the malloc(9) walker's files share: the layout
 * resolved from the types (struct mlayout, resolved in malloc.c) and the
 * 12/13+ types whose statistics wait to be read after the walk (struct
 * pending, read by malloc_pcpu.c).
 */
#ifndef KVS_MALLOC_INTERNAL_H
#define KVS_MALLOC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "freebsd.h"

struct memory_type;
struct memory_type_list;
struct krec;
struct pitem;

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

/* 12 and 13+: the types the walk met, their statistics read afterwards
 * (malloc_pcpu.c); the arrays are the list's working space. */
struct pending {
	struct memory_type_list *list;
	struct pitem *item;               /* mtl_scratch 0, in list order */
	struct krec *rec;                 /* mtl_scratch 1: the types whose */
	size_t n, cap, nrec;              /* statistics are to be read */
};

/* malloc.c: flag a row whose counters break the rules (kvs_warnings); a
 * type as a warning names it (? when its name is not readable). */
KVS_HIDDEN void malloc_flag_implausible(kvs_t *kd, const struct memory_type *mt, bool wrapped);
KVS_HIDDEN const char *malloc_type_name(const struct memory_type *mt);

/* malloc_pcpu.c: stage a 12/13+ type met by the walk (header mtbuf; unread:
 * its MEMSTAT_*_UNREADABLE flags so far), read every staged type's per-CPU
 * statistics (a type whose statistics are not in the dump is flagged, with
 * a warning), and hand the sums and flags to the entries once nothing can
 * fail any more.  Only running out of memory fails. */
KVS_HIDDEN int malloc_pending_add(kvs_t *kd, struct memory_type_list *list,
    const struct mlayout *L, struct pending *pd, struct memory_type *mt,
    const uint8_t *mtbuf, uint64_t unread);
KVS_HIDDEN int malloc_pending_stats(kvs_t *kd, const struct mlayout *L,
    const struct kcpus *cpus, struct pending *pd);
KVS_HIDDEN void malloc_pending_finish(kvs_t *kd, const struct kcpus *cpus,
    struct pending *pd);

#endif
