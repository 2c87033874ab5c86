/*
 * arch.h - the architecture layer: one const ops table per architecture
 * (arch/<name>.c), chosen by the kernel ELF's e_machine.
 *
 * Translation knows neither files nor DWARF nor kernel symbols.  It is given
 * a physical-read callback and the few facts it needs, which the OS layer
 * found in the kernel (the page-table root, the direct-map window) or the
 * dump format carries (a minidump's own page-table section), in a
 * struct kvs_xlat_params.  That keeps each architecture testable on
 * synthetic page tables alone.
 */
#ifndef KVS_ARCH_H
#define KVS_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef int (*kvs_read_phys_fn)(void *ctx, uint64_t pa, void *buf, size_t len,
    struct kvs_error *e);

/* What translation is told, filled by the OS layer and the source. */
struct kvs_xlat_params {
	kvs_read_phys_fn read_phys;
	void *ctx;
	/* The kernel's page-table root (a physical address), when known. */
	bool have_root;
	uint64_t root_pa;
	/* Direct map: pa = va - direct_base + direct_phys for direct_base <=
	 * va < direct_end (unused when direct_end <= direct_base). */
	uint64_t direct_base, direct_end, direct_phys;
	/* Architectures whose translation regime the kernel configures (arm64:
	 * the granule, TCR_EL1.T1SZ, 52-bit output addresses); 0 / false: the
	 * architecture's default (arm64: 4 KiB pages, 48-bit VA). */
	unsigned page_shift;
	unsigned va_bits;
	bool pa52;
	/* A dump's own page-table section (FreeBSD amd64 minidumps): entries
	 * for the kernel address space from `pt_base`, one per page
	 * (level 1: 4 KiB) or per page directory (level 2: 2 MiB).  Borrowed. */
	const uint64_t *pt;
	uint64_t pt_entries;
	int pt_level;
	uint64_t pt_base;
};

struct kvs_arch_ops {
	const char *name;           /* "amd64", as messages name it */
	unsigned elf_machine;       /* EM_* of its kernels and modules */
	uint64_t page_size;         /* base page */
	/* Build the translation state from params (copied; pt stays
	 * borrowed).  0, or -1 with e set. */
	int (*create)(void **priv, const struct kvs_xlat_params *p, struct kvs_error *e);
	/* Translate va.  On success *pa is the physical address, *run (if not
	 * NULL) the bytes from va to the end of its page, and *pgsz (if not
	 * NULL) that page's size, so the handle can cache whole large pages.
	 * -1 with e set (KVS_E_UNMAPPED, or the read error with context). */
	int (*kvtop)(const void *priv, uint64_t va, uint64_t *pa, uint64_t *run,
	    uint64_t *pgsz, struct kvs_error *e);
	/* Whether va is a well-formed address for this architecture. */
	bool (*canonical)(uint64_t va);
	void (*destroy)(void *priv);
};

/* Known architectures, by ELF machine; NULL if none. */
KVS_HIDDEN const struct kvs_arch_ops *kvs_arch_find(unsigned elf_machine);

/* The supported architectures' names for messages: "amd64", "a/b", ... */
KVS_HIDDEN void kvs_arch_names(char *buf, size_t len);

extern KVS_HIDDEN const struct kvs_arch_ops kvs_arch_amd64;
extern KVS_HIDDEN const struct kvs_arch_ops kvs_arch_arm64;

#endif
