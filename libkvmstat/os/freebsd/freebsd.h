/*
 * freebsd.h - what the FreeBSD walkers share: the present-CPU set, and
 * the entry points of each walker the family's ops table names.
 */
#ifndef KVS_FREEBSD_H
#define KVS_FREEBSD_H

#include "kread.h"

/* CPU ids present: 0..maxid filtered by the all_cpus bitmask. */
#define KCPU_MAX 4096
struct kcpus {
	int maxid;      /* mp_maxid */
	int ncpus;      /* mp_ncpus */
	int maxcpus;    /* mp_maxcpus or MAXCPU from DWARF */
	uint64_t mask[KCPU_MAX / 64];
};
KVS_HIDDEN int kcpus_read(kvs_t *kd, struct kcpus *c);
static inline bool
kcpu_present(const struct kcpus *c, int cpu)
{
	return cpu >= 0 && cpu <= c->maxid && cpu < KCPU_MAX &&
	    (c->mask[cpu / 64] >> (cpu % 64) & 1);
}

/* counter(9) and other zpcpu data: a page (UMA_PCPU_ALLOC_SIZE) per CPU.
 * *base: what a counter's stored value is relative to - the value of
 * __pcpu where it is a pointer variable (13+ amd64 keeps offsets from it),
 * else 0 (the value is CPU 0's part's address).  0 or -1. */
#define FREEBSD_PCPU_STRIDE 4096u
KVS_HIDDEN int freebsd_pcpu_base(kvs_t *kd, uint64_t *base);
/* Whether 13+ per-CPU (zpcpu) values are offsets from __pcpu: amd64 only
 * (its per-CPU data is %gs-relative); elsewhere they are CPU 0's address. */
KVS_HIDDEN bool freebsd_zpcpu_offsets(kvs_t *kd);
/* The sum of a counter(9)'s parts over the present CPUs (0 for a NULL
 * counter): 0, or -1 with the handle's error set when a part is unreadable. */
KVS_HIDDEN int freebsd_counter_sum(kvs_t *kd, const struct kcpus *cpus, uint64_t base,
    uint64_t ptr, uint64_t *sum);

struct memory_type_list;
/* memstat_kvm_all() for FreeBSD kernels (uma.c). */
KVS_HIDDEN int freebsd_memstat_all(struct memory_type_list *list, kvs_t *kd);
/* kgmon's buffers (_gmonparam) as a kvmprof profile (gprof.c). */
KVS_HIDDEN struct kvmprof_gmon *freebsd_gprof_read(kvs_t *kd);


struct kvs_counter;
struct kvs_pzone;
struct kvs_arena;
/* The memory census (census.h; vm.c): vm_cnt as vmstat -s names it, top's
 * Mem: line and the allocators' totals; the physical free lists per domain
 * and list; the vmem(9) arenas.  0, 1 (incomplete) or -1. */
KVS_HIDDEN int freebsd_meminfo(kvs_t *kd, struct kvs_counter *out, size_t cap, size_t *n);
KVS_HIDDEN int freebsd_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n);
KVS_HIDDEN int freebsd_arenas(kvs_t *kd, struct kvs_arena **out, size_t *n);
struct kvs_whatis;
/* What holds addr: a kernel symbol, a struct vm_page, a UMA item, a
 * thread's stack, a page (vm.c dispatches). */
KVS_HIDDEN int freebsd_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w);
/* uma_items.c: the UMA item at addr through its page, or the plain page
 * (w->page set, 0 returned: not an item); 1 answered with *rc its status,
 * 0 not an item, -1 error. */
KVS_HIDDEN int freebsd_uma_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w, int *rc);
struct kvs_slab_object;
KVS_HIDDEN int freebsd_slab_objects(kvs_t *kd, const char *zone,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg);
/* kstack.c: the thread whose kernel stack holds addr: 1, 0 or -1. */
KVS_HIDDEN int freebsd_kstack_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w);
/* whatis's kernel_map part (vmmap.c): *hit false when addr is outside
 * kernel_map (or the kernel has none), else w filled.  0, 1 or -1. */
KVS_HIDDEN int freebsd_vmmap_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w,
    bool *hit);

#endif
