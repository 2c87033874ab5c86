/*
 * census.h - where a kernel's memory is: the kernel's own memory summary
 * (Linux /proc/meminfo, FreeBSD vm_cnt and its page queues), the page
 * allocator's free lists per zone, the kernel's virtual areas, the objects
 * of one slab cache, and what one address is.
 *
 * Every call takes a handle opened with kvs_open() (kvmstat.h) and answers
 * for the kernel in it, whatever its family; a question a family has no
 * answer to fails with KVS_E_INVAL saying so.  Arrays returned through
 * **out are malloc'ed for the caller, who frees them with the matching
 * _free call.  A value whose bytes are not in the dump is kept, flagged
 * KVS_CF_UNREADABLE, with the reason; the call then returns 1 instead of 0
 * (an incomplete answer), never nothing.
 */
#ifndef KVMSTAT_CENSUS_H
#define KVMSTAT_CENSUS_H

#include <stdint.h>
#include <stddef.h>

#include "kvmstat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- counters ---------------------------------------------------------- */

typedef enum kvs_unit {
	KVS_UNIT_KIB = 0,   /* kibibytes (meminfo's "kB") */
	KVS_UNIT_PAGES,     /* pages of the kernel's page size */
	KVS_UNIT_COUNT,     /* a plain number (events, HugePages_Total) */
	KVS_UNIT_BYTES
} kvs_unit_t;

/* Counter flags. */
#define KVS_CF_LIVE       0x01 /* the running kernel computes it from state
                                * a dump does not fix (note says which) */
#define KVS_CF_UNREADABLE 0x02 /* its bytes are not in the dump: value 0,
                                * note holds the reason */
#define KVS_CF_ESTIMATE   0x04 /* computed as the kernel does, from counters
                                * that are themselves approximate */

struct kvs_counter {
	const char *group;  /* static: "meminfo"; FreeBSD "vm" (vm_cnt as
	                     * vmstat -s names it), "queues" (top's Mem:),
	                     * "allocators" (malloc(9) and UMA totals) */
	char name[64];      /* as the kernel's report spells it: "MemTotal",
	                     * "Active(anon)"; FreeBSD: vmstat -s's text */
	char key[48];       /* a stable identifier: meminfo's name, or the
	                     * kernel's own field ("v_wire_count") */
	uint64_t value;     /* in unit */
	kvs_unit_t unit;
	unsigned flags;     /* KVS_CF_* */
	char note[128];
};

/*
 * The kernel's memory summary, in the order its own report prints it:
 * Linux, every line of /proc/meminfo this kernel computes (KiB;
 * HugePages_* as counts); FreeBSD, vm_cnt's counters as `vmstat -s` names
 * them, then the page queues as top's Mem: line (Active, Inact, Laundry,
 * Wired, Buf, Free; KiB), then the totals of malloc(9) and UMA.
 * 0, 1 (some values unreadable), or -1 with the handle's error set.
 */
int kvs_meminfo(kvs_t *kd, struct kvs_counter **out, size_t *n);
/*
 * The same summary into the caller's storage, for a view that refreshes
 * it: at most cap counters into buf, and *n how many the summary has.
 * When that is more than cap, the first cap are written and the call
 * returns -1 (KVS_E_INVAL, saying how many): grow buf to *n and call
 * again.  After the first call on a handle it allocates nothing (what it
 * works out once, and its scratch, stay on the handle).
 */
int kvs_meminfo_into(kvs_t *kd, struct kvs_counter *buf, size_t cap, size_t *n);
void kvs_counters_free(struct kvs_counter *c, size_t n);

/* ---- the page allocator's zones ---------------------------------------- */

#define KVS_PZ_ORDERS 16  /* most orders a free list can have */
#define KVS_PZ_POOLS  8   /* most pools (migratetypes, FreeBSD pools) */
#define KVS_PZ_PROT   8   /* most lowmem_reserve / protection entries */

/*
 * One zone of the page allocator: Linux, a struct zone of a node (every
 * zone of the node, populated or not, in the kernel's order); FreeBSD, one
 * free list (vm_phys_free_queues[domain][list]) of a domain.
 */
struct kvs_pzone {
	int node;                    /* NUMA node; FreeBSD: the domain */
	char name[32];               /* "DMA32"; FreeBSD: "DEFAULT", "DMA32"... */
	int index;                   /* zone index in its node; FreeBSD: list */
	uint64_t kaddr;              /* struct zone; FreeBSD: the queues' address */
	int populated;               /* buddyinfo shows these; Linux: present
	                              * pages > 0 (the kernel's populated_zone) */
	unsigned norders;            /* orders in free[] */
	uint64_t free[KVS_PZ_ORDERS];/* free blocks of each order, all pools */
	unsigned npools;             /* 0 when not broken down */
	char pool_name[KVS_PZ_POOLS][16];
	uint64_t pool_free[KVS_PZ_POOLS][KVS_PZ_ORDERS];
	/* Linux struct zone (zero on FreeBSD) */
	uint64_t free_pages;         /* NR_FREE_PAGES */
	uint64_t wmark_min, wmark_low, wmark_high, wmark_boost;
	uint64_t spanned, present, managed, cma, start_pfn;
	unsigned nprotection;
	uint64_t protection[KVS_PZ_PROT];
	/* The zone's vm_stat counters, then its NUMA event counters, names as
	 * /proc/zoneinfo prints them (KVS_UNIT_PAGES / KVS_UNIT_COUNT). */
	struct kvs_counter *stat;
	size_t nstat;
	/* The node's vm_stat counters: set on the first populated zone of each
	 * node, as /proc/zoneinfo prints "per-node stats" there. */
	struct kvs_counter *node_stat;
	size_t nnode_stat;
	int unreclaimable;           /* node_unreclaimable; -1 unknown */
	/* Linux: each online CPU's pageset, as /proc/zoneinfo's "pagesets"
	 * (populated zones only; freed by kvs_pzones_free). */
	struct kvs_pzone_pcp {
		int cpu;
		int64_t count, high, batch;
		int64_t stat_threshold;  /* -1 unknown */
	} *pcp;
	size_t npcp;
	unsigned flags;              /* KVS_CF_UNREADABLE: some fields missing */
	char note[128];
};

/* Every zone of every node (FreeBSD: every free list of every domain).
 * 0, 1 (incomplete) or -1. */
int kvs_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n);
void kvs_pzones_free(struct kvs_pzone *z, size_t n);

/* ---- kernel virtual areas ---------------------------------------------- */

/* One area of the kernel's vmalloc space (Linux /proc/vmallocinfo's line). */
struct kvs_varea {
	uint64_t start, end;         /* [start, end): the guard page included,
	                              * as vmallocinfo prints it */
	uint64_t size;               /* end - start */
	uint64_t caller;             /* 0 when none */
	char caller_sym[128];        /* "symbol+0xoff/0xsize", "" when none */
	uint64_t nr_pages;
	uint64_t phys_addr;          /* ioremap's phys=, else 0 */
	uint64_t kaddr;              /* struct vmap_area */
	uint64_t vm_flags;
	char flags[96];              /* vmallocinfo's words: "ioremap vmalloc
	                              * vmap user vpages..." */
	unsigned cflags;             /* KVS_CF_UNREADABLE */
	char note[128];
};
int kvs_vmalloc(kvs_t *kd, struct kvs_varea **out, size_t *n);
void kvs_vareas_free(struct kvs_varea *v, size_t n);

/* One FreeBSD vmem(9) arena (kernel_arena, kmem_arena, ...). */
struct kvs_arena {
	char name[32];
	uint64_t kaddr;
	uint64_t quantum;
	uint64_t size;               /* bytes the arena spans */
	uint64_t inuse;              /* bytes allocated */
	uint64_t free;               /* size - inuse */
	unsigned cflags;
	char note[128];
};
int kvs_arenas(kvs_t *kd, struct kvs_arena **out, size_t *n);
void kvs_arenas_free(struct kvs_arena *a, size_t n);

/* ---- the objects of a slab cache --------------------------------------- */

typedef enum kvs_obj_state {
	KVS_OBJ_ALLOCATED = 0,       /* in use */
	KVS_OBJ_FREE_CPU,            /* on a CPU's lockless freelist, or
	                              * freed back to its CPU slab */
	KVS_OBJ_FREE_CPU_PARTIAL,    /* on a slab of a CPU's partial list */
	KVS_OBJ_FREE_PARTIAL,        /* on a slab of a node's partial list */
	KVS_OBJ_FREE,                /* free, elsewhere (FreeBSD: a UMA
	                              * bucket or slab) */
	KVS_OBJ_UNKNOWN,             /* the slab's bytes are not in the dump */
	KVS_OBJ_FREE_ZONE            /* FreeBSD: in a full bucket of the zone's
	                              * bucket cache */
} kvs_obj_state_t;

struct kvs_slab_object {
	uint64_t addr;               /* the object's start (after any red zone) */
	uint64_t slab;               /* its struct slab / struct page, or UMA slab */
	uint64_t index;              /* object index in its slab */
	kvs_obj_state_t state;
	int cpu;                     /* the CPU for KVS_OBJ_FREE_CPU*, else -1 */
	int node;                    /* the node of its slab, -1 unknown */
};

/* Each object of the cache named `cache` (a slab cache, FreeBSD UMA zone):
 * cb returns 0 to go on, non-zero to stop (returned).  0, 1 (some slabs
 * unreadable), or -1 (KVS_E_INVAL: no such cache). */
int kvs_slab_objects(kvs_t *kd, const char *cache,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg);

/* ---- what one address is ----------------------------------------------- */

typedef enum kvs_whatis_kind {
	KVS_WHATIS_UNKNOWN = 0,
	KVS_WHATIS_SLAB,             /* an object of a slab cache / UMA zone */
	KVS_WHATIS_PAGE,             /* a page (or struct page) of the allocator */
	KVS_WHATIS_VMALLOC,          /* inside a vmalloc area / kernel map entry */
	KVS_WHATIS_SYMBOL,           /* the kernel's text or data */
	KVS_WHATIS_STACK             /* a task's (thread's) kernel stack */
} kvs_whatis_kind_t;

struct kvs_whatis {
	uint64_t addr;
	kvs_whatis_kind_t kind;
	/* KVS_WHATIS_SLAB */
	char cache[64];              /* the cache's name */
	uint64_t cache_kaddr;
	uint64_t object;             /* the object's start */
	uint64_t offset;             /* addr - object */
	uint64_t objsize;
	uint64_t obj_index;
	kvs_obj_state_t state;
	int cpu;                     /* for KVS_OBJ_FREE_CPU*, else -1 */
	uint64_t alloc_caller, free_caller;  /* slub_debug's tracks, 0 none */
	/* KVS_WHATIS_PAGE (also set for slab and vmalloc when known) */
	uint64_t pfn;
	uint64_t page;               /* struct page / vm_page address */
	uint64_t page_flags;
	char page_flags_str[256];    /* "slab|head|..." decoded by the kernel's
	                              * own flag names */
	uint64_t mapping;
	unsigned order;
	uint64_t head;               /* compound head struct page, or 0 */
	/* KVS_WHATIS_VMALLOC */
	uint64_t area_start, area_end, area_caller;
	/* KVS_WHATIS_SYMBOL (also the caller's name for vmalloc) */
	char symbol[128];            /* "name+0xoff" */
	/* KVS_WHATIS_STACK */
	int pid;
	char comm[32];
	uint64_t task;               /* task_struct; FreeBSD: struct thread */
	char note[128];              /* why unknown, or what is missing */
	/* Added later (appended, so older callers keep their offsets). */
	char malloc_zone[32];        /* FreeBSD KVS_WHATIS_SLAB: the malloc(9)
	                              * bucket zone ("malloc-64") when the zone
	                              * is one of malloc's, else "" (the malloc
	                              * type is not recorded in the item) */
	int tid;                     /* FreeBSD KVS_WHATIS_STACK: td_tid, else -1 */
	/* FreeBSD's kernel_map: KVS_WHATIS_VMALLOC of the
	 * vm_map_entry holding addr (area_start/end its range), or UNKNOWN in a
	 * map's range but in no entry (area_start/end the gap, map_prev and
	 * map_next the entries around it, 0 at the map's edge).  map_name ""
	 * when no map was involved. */
	char map_name[32];           /* "kernel_map", or its submap's ("exec_map") */
	uint64_t map_entry;          /* the struct vm_map_entry */
	uint64_t map_object;         /* its object (vm_object), 0 none */
	uint64_t map_offset;         /* offset into the object */
	uint32_t map_eflags;         /* MAP_ENTRY_* */
	uint8_t map_prot, map_maxprot;   /* VM_PROT_* (1 read, 2 write, 4 execute) */
	uint64_t map_prev, map_next;
};

/* What holds addr.  0 with *w filled (kind UNKNOWN too), 1 when the answer
 * lacks bytes the dump does not hold (note says which), -1 on error. */
int kvs_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w);
const char *kvs_whatis_kind_str(kvs_whatis_kind_t k);   /* "slab", ... */
const char *kvs_obj_state_str(kvs_obj_state_t s);       /* "allocated", ... */

#ifdef __cplusplus
}
#endif
#endif
