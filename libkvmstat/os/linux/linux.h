/*
 * linux.h - what the Linux walkers share with the Linux kernel layer.
 */
#ifndef KVS_LINUX_H
#define KVS_LINUX_H

#include "kread.h"
#include "census.h"

/* The value of VMCOREINFO key `key` ("KERNELOFFSET", "NUMBER(phys_base)",
 * "SYMBOL(init_top_pgt)"...), not NUL-terminated, *len bytes; NULL if the
 * dump gave no VMCOREINFO or lacks the key. */
KVS_HIDDEN const char *linux_vmcoreinfo(kvs_t *kd, const char *key, size_t *len);

/* A VMCOREINFO number ("KERNELOFFSET" in base 16...): true if present and
 * well-formed (a leading '-' is a negative value). */
KVS_HIDDEN bool linux_vi_u64(kvs_t *kd, const char *key, int base, uint64_t *v);
KVS_HIDDEN int linux_memmap(kvs_t *kd, uint64_t *vmemmap, uint64_t *phys0);
/* Read the kernel image at runtime address va before (or without) page
 * tables: through its linear mapping, or the source's virtual ranges. */
KVS_HIDDEN int linux_image_read(kvs_t *kd, uint64_t va, void *buf, size_t len);
/* The kernel's symbols from kallsyms in memory (kallsyms.c), at link
 * addresses (kd->slide already set).  0 or -1 with the handle's error. */
struct kvs_symtab;
KVS_HIDDEN int linux_kallsyms_load(kvs_t *kd, struct kvs_symtab **out);
/* kallsyms_find.c: the addresses of kallsyms_num_syms, _names, _token_table,
 * _token_index, _offsets and _relative_base (a[0..5]) found in the image by
 * their shapes.  0, or -1 with the handle's error set. */
KVS_HIDDEN int linux_kallsyms_find(kvs_t *kd, uint64_t *a);
/* nodata.c: routes that need no data symbol.  linux_vi_symbol_next: the
 * next "SYMBOL(name)=hex" line of VMCOREINFO text from p (name, run-time
 * address), NULL after the last.  linux_btf_find: the BTF by its header
 * in the image.  linux_banner_find: the banner init_uts_ns vouches for.
 * linux_slab_caches: the list head, by symbol or by the memory map.
 * linux_nr_node_ids: nr_node_ids, node_online_map's, else 1 (at most max). */
KVS_HIDDEN const char *linux_vmcoreinfo_text(kvs_t *kd);
KVS_HIDDEN const char *linux_vi_symbol_next(const char *p, char *name, size_t nlen,
    uint64_t *addr);
KVS_HIDDEN int linux_btf_find(kvs_t *kd, uint64_t *kva, uint64_t *len);
KVS_HIDDEN int linux_banner_find(kvs_t *kd, char *buf, size_t len);
KVS_HIDDEN int linux_slab_caches(kvs_t *kd, uint64_t *head);
KVS_HIDDEN unsigned linux_nr_node_ids(kvs_t *kd, unsigned max);
/* The kernel profile buffer (prof_buffer.c), for kvmprof_gmon_read. */
struct kvmprof_gmon;
KVS_HIDDEN struct kvmprof_gmon *linux_profile_read(kvs_t *kd);

/* The memory census (pgalloc.c, meminfo.c). */
/* Possible CPUs: nr_cpu_ids, each one's __per_cpu_offset, and whether it is
 * online (__cpu_online_mask, read at each call).  0 or -1.  The arrays are
 * the handle's (read once; nothing to free), valid until it closes. */
struct lnx_cpus {
	unsigned n;
	const uint64_t *off;
	const uint8_t *online;
};
KVS_HIDDEN int linux_cpus(kvs_t *kd, struct lnx_cpus *c);
/* The vm_stat counters' names from the kernel's vmstat_text[]: zone items,
 * NUMA items (nnuma 0 without NUMA), node items. */
enum { LNX_VM_ZONE, LNX_VM_NUMA, LNX_VM_NODE };
struct lnx_vmnames {
	char (*names)[48];
	size_t nzone, nnuma, nnode;
	const char *numa_member;    /* "vm_numa_event", "vm_numa_stat" or NULL */
};
/* The handle's names, read on the first call: NULL with the error set. */
KVS_HIDDEN const struct lnx_vmnames *linux_vmnames(kvs_t *kd);
/* Name of item i of a list (LNX_VM_*), NULL past its end; the index of a
 * name, -1 when this kernel has no such counter. */
KVS_HIDDEN const char *linux_vmname(const struct lnx_vmnames *v, int which, size_t i);
KVS_HIDDEN int linux_vmindex(const struct lnx_vmnames *v, int which, const char *name);
/* The census ops (census.h's kvs_pzones, kvs_meminfo). */
KVS_HIDDEN int linux_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n);
KVS_HIDDEN int linux_meminfo(kvs_t *kd, struct kvs_counter *buf, size_t cap, size_t *n);
/* The sum of every zone's low watermark and boost (si_mem_available's
 * wmark_low), allocating nothing after the first call: 0, 1 when some zone
 * is not in the dump (left out), -1. */
KVS_HIDDEN int linux_watermarks(kvs_t *kd, uint64_t *wlow);
/* ---- SLUB (slub.c): the layout and the freelists, shared with the
 * per-object walk (slub_objects.c) and whatis. */
#define SLUB_CPUS_MAX 8192
struct slayout {
	/* struct kmem_cache */
	uint64_t list_off, node_off, node_count, need;
	struct kfield name, next, size, object_size, offset, oo, random, cpu_slab, red_left_pad;
	struct kfield flags, inuse;      /* slub_debug's tracks */
	/* struct kmem_cache_node */
	uint64_t partial_off, node_need;
	struct kfield nr_partial, partial_next, nr_slabs, total_objects;
	/* struct slab, or struct page before 5.17 */
	const char *slab_type;
	uint64_t slab_list_off, slab_need, page_size_bytes;
	struct kfield s_inuse, s_objects, s_next, s_cache, s_freelist, s_frozen;
	/* struct kmem_cache_cpu */
	uint64_t cpu_need;
	struct kfield c_freelist, c_slab, c_partial;
};

struct scpus {
	unsigned n;                    /* nr_cpu_ids */
	uint64_t offset[SLUB_CPUS_MAX];     /* __per_cpu_offset; 0 with bit clear */
	uint8_t present[SLUB_CPUS_MAX];
};

/* Address translation of slab descriptors to their memory. */
struct smem {
	uint64_t vmemmap, page_offset;
	bool known;
	int swab;                      /* -1: not yet known; 0 / 1 */
};

struct slub_cache {
	uint64_t addr, size, object_size, offset, random, red_left_pad;
	unsigned objects_per_slab, order;
	uint64_t flags, inuse;
};

KVS_HIDDEN int slub_resolve(kvs_t *kd, struct slayout *L);
KVS_HIDDEN int slub_read_cpus(kvs_t *kd, struct scpus *c);
KVS_HIDDEN int slub_read_mem(kvs_t *kd, struct smem *m);
KVS_HIDDEN int64_t slub_freelist(kvs_t *kd, const struct slayout *L, struct smem *m,
    const struct slub_cache *ca, uint64_t slab, uint64_t head, bool *corrupt,
    void (*each)(void *arg, uint64_t obj), void *arg);
/* The kmem_cache at addr, its image read into cb (L->need bytes): 0 or -1. */
KVS_HIDDEN int slub_cache_read(kvs_t *kd, const struct slayout *L, uint64_t addr,
    uint8_t *cb, struct slub_cache *out);

/* ---- pages and slab objects (slub_objects.c) --------------------------- */
struct slab_head {
	uint64_t slab, cache;
};
/* What the census works out once per handle (kvs_memo). */
struct linux_census {
	int ready;                     /* 0 not yet, 1 yes, -1 failed (why) */
	char why[256];
	char cpus_why[256];            /* why the CPUs are not known, or "" */
	struct slayout L;
	struct scpus *cpus;
	struct smem mem;
	uint64_t page_size, max_pfn, track_size;
	struct kfield p_flags, p_head, p_mapping, p_order, p_type;
	uint64_t pg_slab, pg_head;     /* flag masks, 0 unknown */
	uint32_t slab_type;            /* page_type of a slab (no PG_slab) */
	int slab_type_form;            /* 0 none, 1 ~flag (6.10), 2 PGTY << 24 */
	unsigned nflags;
	uint64_t flag_mask[64];
	char flag_name[64][24];
	bool scanned;                  /* the memory map scan is done */
	struct slab_head *heads;       /* every slab head page, by cache */
	size_t nheads;
	struct kvs_varea *areas;       /* vmalloc areas, by start (whatis) */
	size_t nareas;
	int areas_rc;                  /* 0 not read, 1 read, -1 failed */
	uint8_t pbuf[64 * 256];
};
struct linux_page {
	uint64_t page, pfn, flags, mapping, head, head_flags, cache;
	unsigned order;
	bool slab;
};
/* linux_census: all of it (NULL, error set, without the CPUs' offsets);
 * linux_census_map: the memory map and the SLUB layout only;
 * linux_census_scan: fills heads (every slab head page, by cache). */
KVS_HIDDEN struct linux_census *linux_census(kvs_t *kd);
KVS_HIDDEN struct linux_census *linux_census_map(kvs_t *kd);
KVS_HIDDEN int linux_census_scan(kvs_t *kd, struct linux_census *c);
KVS_HIDDEN void linux_census_close(kvs_t *kd);
KVS_HIDDEN uint64_t linux_page_of_pfn(const struct linux_census *c, uint64_t pfn);
KVS_HIDDEN uint64_t linux_pfn_of_page(const struct linux_census *c, uint64_t page);
KVS_HIDDEN uint64_t linux_pfn_va(const struct linux_census *c, uint64_t pfn);
KVS_HIDDEN bool linux_page_is_slab(const struct linux_census *c, const uint8_t *pg);
KVS_HIDDEN void linux_page_flags_str(const struct linux_census *c, uint64_t flags,
    char *buf, size_t len);
KVS_HIDDEN int linux_page_read(kvs_t *kd, const struct linux_census *c, uint64_t page,
    struct linux_page *p);
KVS_HIDDEN int linux_slab_objects(kvs_t *kd, const char *name,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg);
KVS_HIDDEN int linux_slab_lookup(kvs_t *kd, struct linux_census *c,
    const struct linux_page *p, uint64_t addr, struct kvs_whatis *w);
/* whatis.c, vmalloc.c */
KVS_HIDDEN int linux_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w);
KVS_HIDDEN int linux_vmalloc(kvs_t *kd, struct kvs_varea **out, size_t *n);

#endif
