/*
 * memstat.h - FreeBSD libmemstat's memory_type_list API, rebuilt over
 * libkvmstat.  A program written against FreeBSD's <memstat.h> compiles
 * unchanged; memstat_kvm_*() take a kvs_t * (see kvmstat.h) as their
 * kvm_handle.  Extensions are marked as such; see libmemstat(3).
 */
#ifndef KVMSTAT_MEMSTAT_H
#define KVMSTAT_MEMSTAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMSTAT_MAXCALLER 16

#define ALLOCATOR_UNKNOWN 0
#define ALLOCATOR_MALLOC  1
#define ALLOCATOR_UMA     2
#define ALLOCATOR_SLAB    3   /* extension: Linux SLUB caches */
#define ALLOCATOR_ANY     255

#define MEMTYPE_MAXNAME 32

#define MEMSTAT_ERROR_UNDEFINED      0 /* initialisation value */
#define MEMSTAT_ERROR_NOMEMORY       1 /* out of memory */
#define MEMSTAT_ERROR_VERSION        2 /* unsupported version */
#define MEMSTAT_ERROR_PERMISSION     3 /* permission denied */
/* 4 was MEMSTAT_ERROR_TOOMANYCPUS in 6.x headers, when per-CPU arrays had a
 * fixed size.  Kept so such programs compile; never returned (per-CPU
 * arrays grow), and memstat_strerror(4) is "Unknown error". */
#define MEMSTAT_ERROR_TOOMANYCPUS    4
#define MEMSTAT_ERROR_DATAERROR      5 /* error in stat data */
#define MEMSTAT_ERROR_KVM            6 /* detail: kvs_geterr(kvm_handle) */
#define MEMSTAT_ERROR_KVM_NOSYMBOL   7 /* symbol not available */
#define MEMSTAT_ERROR_KVM_SHORTREAD  8 /* short kernel read */

struct memory_type;
struct memory_type_list;

const char *memstat_strerror(int error);

/* Lists.  Entries are in libmemstat's order: each new entry goes to the
 * head, so the list holds them newest first (reverse discovery order; after
 * memstat_kvm_all, UMA zones precede malloc types).  An entry keeps its
 * place across refreshes. */
struct memory_type_list *memstat_mtl_alloc(void);
struct memory_type *memstat_mtl_first(struct memory_type_list *list);
struct memory_type *memstat_mtl_next(struct memory_type *mtp);
struct memory_type *memstat_mtl_find(struct memory_type_list *list, int allocator,
    const char *name);
void memstat_mtl_free(struct memory_type_list *list);
int memstat_mtl_geterror(struct memory_type_list *list);

/* Sources.  A call on a non-empty list refreshes it in place; on failure it
 * returns -1, sets the list's error and leaves the entries of the allocator
 * it was refreshing as they were after the last good refresh (FreeBSD
 * empties the list).  With MEMSTAT_ERROR_KVM the detail is
 * kvs_geterr(kvm_handle).  The sysctl variants need a running FreeBSD
 * kernel: here they always return -1 with MEMSTAT_ERROR_UNDEFINED and errno
 * ENOSYS, and leave the list's entries alone. */
int memstat_sysctl_all(struct memory_type_list *list, int flags);
int memstat_sysctl_malloc(struct memory_type_list *list, int flags);
int memstat_sysctl_uma(struct memory_type_list *list, int flags);
int memstat_kvm_all(struct memory_type_list *list, void *kvm_handle);
int memstat_kvm_malloc(struct memory_type_list *list, void *kvm_handle);
int memstat_kvm_uma(struct memory_type_list *list, void *kvm_handle);

/* Extensions: which generation of an allocator's kernel layout the handle's
 * kernel has, decided from its types.  memstat_kvm_malloc_layout: 5 (counters
 * inside struct malloc_type), 6 (6-11: per-CPU array), 12 (per-CPU pointer),
 * 13 (13+: embedded ks_mti, __pcpu-relative offset).
 * memstat_kvm_vmstat_format: the FreeBSD vmstat whose table matches the
 * kernel: for MEMSTAT_TYPE_MALLOC 5, 6 or 14; for MEMSTAT_TYPE_UMA 12 or 14.
 * Both return -1 with the error on the handle when the kernel has no such
 * allocator. */
int memstat_kvm_malloc_layout(void *kvm_handle);
int memstat_kvm_vmstat_format(void *kvm_handle, int allocator);

/* malloc(9) zone table.  The library's single exception to "all state
 * lives in a handle or a list": FreeBSD's get_count/get_size take no list,
 * so they read a process-wide copy of the table of the last successful
 * memstat_kvm_malloc(), on any list and in any thread.  Reading it is
 * thread-safe, but with several kernels it is whichever was refreshed
 * last; new code should use the per-list extensions below.  get_size
 * returns (size_t)-1 for n >= get_count(); zone_used is bit n of the
 * entry's size mask. */
size_t memstat_malloc_zone_get_count(void);
size_t memstat_malloc_zone_get_size(size_t n);
int memstat_malloc_zone_used(const struct memory_type *mtp, size_t n);
/* Extensions: the same table as read by the last successful
 * memstat_kvm_malloc() on this list (a failed one keeps the previous
 * table); 0 entries before the first.  zone_size returns (size_t)-1 for
 * n >= zone_count(list). */
size_t memstat_mtl_malloc_zone_count(const struct memory_type_list *list);
size_t memstat_mtl_malloc_zone_size(const struct memory_type_list *list, size_t n);

/* Accessors */
const char *memstat_get_name(const struct memory_type *mtp);
int memstat_get_allocator(const struct memory_type *mtp);
uint64_t memstat_get_countlimit(const struct memory_type *mtp);
uint64_t memstat_get_byteslimit(const struct memory_type *mtp);
uint64_t memstat_get_sizemask(const struct memory_type *mtp);
uint64_t memstat_get_size(const struct memory_type *mtp);
uint64_t memstat_get_rsize(const struct memory_type *mtp);
uint64_t memstat_get_memalloced(const struct memory_type *mtp);
uint64_t memstat_get_memfreed(const struct memory_type *mtp);
uint64_t memstat_get_numallocs(const struct memory_type *mtp);
uint64_t memstat_get_numfrees(const struct memory_type *mtp);
uint64_t memstat_get_bytes(const struct memory_type *mtp);
uint64_t memstat_get_count(const struct memory_type *mtp);
uint64_t memstat_get_free(const struct memory_type *mtp);
uint64_t memstat_get_failures(const struct memory_type *mtp);
uint64_t memstat_get_sleeps(const struct memory_type *mtp);
uint64_t memstat_get_xdomain(const struct memory_type *mtp);
void *memstat_get_caller_pointer(const struct memory_type *mtp, int index);
void memstat_set_caller_pointer(struct memory_type *mtp, int index, void *value);
uint64_t memstat_get_caller_uint64(const struct memory_type *mtp, int index);
void memstat_set_caller_uint64(struct memory_type *mtp, int index, uint64_t value);
uint64_t memstat_get_zonefree(const struct memory_type *mtp);
uint64_t memstat_get_kegfree(const struct memory_type *mtp);
uint64_t memstat_get_percpu_memalloced(const struct memory_type *mtp, int cpu);
uint64_t memstat_get_percpu_memfreed(const struct memory_type *mtp, int cpu);
uint64_t memstat_get_percpu_numallocs(const struct memory_type *mtp, int cpu);
uint64_t memstat_get_percpu_numfrees(const struct memory_type *mtp, int cpu);
uint64_t memstat_get_percpu_sizemask(const struct memory_type *mtp, int cpu);
void *memstat_get_percpu_caller_pointer(const struct memory_type *mtp, int cpu, int index);
void memstat_set_percpu_caller_pointer(struct memory_type *mtp, int cpu, int index,
    void *value);
uint64_t memstat_get_percpu_caller_uint64(const struct memory_type *mtp, int cpu, int index);
void memstat_set_percpu_caller_uint64(struct memory_type *mtp, int cpu, int index,
    uint64_t value);
uint64_t memstat_get_percpu_free(const struct memory_type *mtp, int cpu);

/* Extensions (not in FreeBSD's libmemstat). */
/* Kernel address of the malloc_type / uma_zone: the entry's identity. */
uint64_t memstat_get_kaddr(const struct memory_type *mtp);
/* Non-zero if the object was not seen by the last refresh of its allocator;
 * its counters are then those of the last refresh that saw it. */
int memstat_get_vanished(const struct memory_type *mtp);
/* Number of per-CPU slots (mp_maxid + 1 at the last refresh). */
unsigned memstat_get_maxcpus(const struct memory_type *mtp);
/* 5.x kernels: high-water mark of bytes in use; 0 elsewhere. */
uint64_t memstat_get_maxused(const struct memory_type *mtp);
/*
 * A partial dump (a page filtered out, or a record unreadable), for every
 * allocator: the row is kept with its kernel address, and its flags say
 * which of its figures are not known.  MEMSTAT_NAME_UNREADABLE: the name
 * (memstat_get_name gives "").  MEMSTAT_COUNTS_UNREADABLE: its counts -
 * every counter read from its statistics, per-CPU records, caches, buckets
 * or keg (0, not known; the sizes and limits read from the type or zone
 * itself stand).  kvs_warnings names the cause (the type or zone, its
 * address and the physical page).  Each refresh decides the flags anew.
 * memstat_get_flags returns every flag of the row (MEMSTAT_SLAB_CORRUPT is
 * one, for SLAB entries).
 */
#define MEMSTAT_NAME_UNREADABLE 0x2
#define MEMSTAT_COUNTS_UNREADABLE 0x4
uint64_t memstat_get_flags(const struct memory_type *mtp);
/* Non-zero when the last refresh of some allocator on the list could not
 * follow its kernel list to the end (a link not in the dump): the rows
 * before the cut are there, those after it are missing (or, seen by an
 * earlier refresh, marked vanished); kvs_warnings says where it was cut. */
int memstat_mtl_incomplete(const struct memory_type_list *list);
/* UMA: memory domains of the zone, and per domain the items in full
 * buckets cached by the zone and the free items of its keg (primary zone). */
unsigned memstat_get_ndomains(const struct memory_type *mtp);
uint64_t memstat_get_domain_zonefree(const struct memory_type *mtp, unsigned domain);
uint64_t memstat_get_domain_kegfree(const struct memory_type *mtp, unsigned domain);
/*
 * Linux SLUB caches (extension): memstat_kvm_slab() fills the list with one
 * ALLOCATOR_SLAB entry per kmem_cache on slab_caches, identified by the
 * cache's address.  memstat_kvm_all() reads the kernel's own allocators:
 * malloc(9) and UMA on FreeBSD, SLUB on Linux.  For a SLAB entry:
 *   memstat_get_size       object_size (what callers asked for)
 *   memstat_get_rsize      size (the slot, with metadata: slabinfo's objsize)
 *   memstat_get_count      objects exactly in use: every slot minus the free
 *                          ones on the node partial lists, the per-CPU slabs
 *                          and freelists and the per-CPU partial lists
 *   memstat_get_free       num_objs - count
 *   memstat_get_bytes      count * object_size
 *   memstat_get_percpu_free  free objects held by that CPU
 * and the accessors below: objects and pages per slab, slabs, object slots
 * (num_objs), /proc/slabinfo's active_objs (which counts the per-CPU free
 * objects as active), and flags (MEMSTAT_SLAB_CORRUPT: a freelist left its
 * slab or ran too long; count is then an upper bound).
 */
#define MEMSTAT_SLAB_CORRUPT 0x1
/* A partial dump: MEMSTAT_NAME_UNREADABLE and MEMSTAT_COUNTS_UNREADABLE
 * (memstat_get_flags below), under their older SLAB names. */
#define MEMSTAT_SLAB_NAME_UNREADABLE MEMSTAT_NAME_UNREADABLE
#define MEMSTAT_SLAB_COUNTS_UNREADABLE MEMSTAT_COUNTS_UNREADABLE
/* The CPUs' slabs were not read (no per-CPU offsets: a kernel whose
 * symbols name no data).  num_slabs, num_objs and active stand; count,
 * free, bytes and the per-CPU free counts are not known. */
#define MEMSTAT_SLAB_PERCPU_UNREADABLE 0x8
int memstat_kvm_slab(struct memory_type_list *list, void *kvm_handle);
uint64_t memstat_get_slab_objperslab(const struct memory_type *mtp);
uint64_t memstat_get_slab_pagesperslab(const struct memory_type *mtp);
uint64_t memstat_get_slab_numslabs(const struct memory_type *mtp);
uint64_t memstat_get_slab_numobjs(const struct memory_type *mtp);
uint64_t memstat_get_slab_active(const struct memory_type *mtp);
uint64_t memstat_get_slab_flags(const struct memory_type *mtp);
/* Entries in the list. */
size_t memstat_mtl_count(struct memory_type_list *list);
/* Remove the entries marked vanished; returns how many were removed. */
int memstat_mtl_sweep(struct memory_type_list *list);
/* Whether refreshes keep per-CPU counters (default 1).  A live view that
 * shows totals can turn them off: a refresh then writes one record per type
 * instead of one per type and CPU, and the per-CPU accessors return 0. */
void memstat_mtl_set_percpu(struct memory_type_list *list, int enable);

#ifdef __cplusplus
}
#endif
#endif
