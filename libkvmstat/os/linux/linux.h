/*
 * linux.h - what the Linux walkers share with the Linux kernel layer.
 */
#ifndef KVS_LINUX_H
#define KVS_LINUX_H

#include "kread.h"

/* The value of VMCOREINFO key `key` ("KERNELOFFSET", "NUMBER(phys_base)",
 * "SYMBOL(init_top_pgt)"...), not NUL-terminated, *len bytes; NULL if the
 * dump gave no VMCOREINFO or lacks the key. */
KVS_HIDDEN const char *linux_vmcoreinfo(kvs_t *kd, const char *key, size_t *len);

/* A VMCOREINFO number ("KERNELOFFSET" in base 16...): true if present and
 * well-formed (a leading '-' is a negative value). */
KVS_HIDDEN bool linux_vi_u64(kvs_t *kd, const char *key, int base, uint64_t *v);
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
/* The kernel profile buffer (prof_buffer.c), for kvmprof_gmon_read. */
struct kvmprof_gmon;
KVS_HIDDEN struct kvmprof_gmon *linux_profile_read(kvs_t *kd);

/* The memory census (pgalloc.c, meminfo.c). */
#include "census.h"
/* Possible CPUs: nr_cpu_ids, each one's __per_cpu_offset, and whether it is
 * online (__cpu_online_mask).  0 or -1; free with linux_cpus_free. */
struct lnx_cpus {
	unsigned n;
	uint64_t *off;
	uint8_t *online;
};
KVS_HIDDEN int linux_cpus(kvs_t *kd, struct lnx_cpus *c);
KVS_HIDDEN void linux_cpus_free(struct lnx_cpus *c);
/* The vm_stat counters' names from the kernel's vmstat_text[]: zone items,
 * NUMA items (nnuma 0 without NUMA), node items. */
enum { LNX_VM_ZONE, LNX_VM_NUMA, LNX_VM_NODE };
struct lnx_vmnames {
	char (*names)[48];
	size_t nzone, nnuma, nnode;
	const char *numa_member;    /* "vm_numa_event", "vm_numa_stat" or NULL */
};
KVS_HIDDEN int linux_vmnames(kvs_t *kd, struct lnx_vmnames *v);
KVS_HIDDEN void linux_vmnames_free(struct lnx_vmnames *v);
/* Name of item i of a list (LNX_VM_*), NULL past its end; the index of a
 * name, -1 when this kernel has no such counter. */
KVS_HIDDEN const char *linux_vmname(const struct lnx_vmnames *v, int which, size_t i);
KVS_HIDDEN int linux_vmindex(const struct lnx_vmnames *v, int which, const char *name);
/* The census ops (census.h's kvs_pzones, kvs_meminfo). */
KVS_HIDDEN int linux_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n);
KVS_HIDDEN int linux_meminfo(kvs_t *kd, struct kvs_counter **out, size_t *n);

#endif
