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

#endif
