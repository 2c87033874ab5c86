/*
 * core_internal.h - what the core's own files share and no other layer
 * sees: kvs.c (the handle's life) calls into kernelfile.c (the kernel
 * file), dumpfile.c (the dump file and its source) and read.c (reads and
 * the translation cache).
 */
#ifndef KVS_CORE_INTERNAL_H
#define KVS_CORE_INTERNAL_H

#include "kvs_private.h"

/* Public entry points start from a clean error. */
#define ENTER(kd) kerr_clear(&(kd)->err)

/* kernelfile.c */
/* Open path as a 64-bit kernel executable of an architecture here: 0 with
 * the fd, libelf handle and architecture (archp may be NULL), or -1. */
struct Elf;
KVS_HIDDEN int kvs_open_elf(const char *path, int *fdp, struct Elf **elfp,
    const struct kvs_arch_ops **archp, struct kvs_error *e);
/* "" (the root) or $KVS_DEBUG_ROOT, a directory laid out like one. */
KVS_HIDDEN const char *kvs_system_root(void);
/* A stripped kernel's kernel.debug, when one is found: kd->debug_*. */
KVS_HIDDEN void kvs_find_debug_file(kvs_t *kd);

/* dumpfile.c */
/* Open the dump (a file, parts "a,b,c", or a memory device) and probe its
 * format: 0 with kd->src set, or -1 with the handle's error set. */
KVS_HIDDEN int kvs_open_dump(kvs_t *kd, const char *core, int flags);
/* The source that holds nothing (KVS_O_KERNEL_ONLY), and its read. */
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_nomem;
KVS_HIDDEN int kvs_nomem_read(void *priv, uint64_t addr, void *buf, size_t len,
    struct kvs_error *e);

/* read.c */
/* Whether the mapped dump file shrank since it was mapped (kd->shrunk),
 * and the error every read then gives. */
KVS_HIDDEN void kvs_check_shrunk(kvs_t *kd);
KVS_HIDDEN int kvs_shrunk_error(kvs_t *kd);
/* The error a format-only handle gives for a kernel-virtual address. */
KVS_HIDDEN int kvs_no_kernel_error(kvs_t *kd, uint64_t kva);

#endif
