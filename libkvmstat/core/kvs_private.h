/*
 * kvs_private.h - interfaces between libkvmstat's internal layers.
 *
 * Layers, each knowing only the one below it:
 *   source_*.c  (file formats: read physical memory)      struct kvs_source_ops
 *   arch_amd64.c (page-table walk, DMAP, minidump pmap)   struct amd64_xlat
 *   symtab.c, dwarf.c (kernel image)                       kvs_symtab / kvs_dwarf
 *   kvs.c       (binds them into a kvs_t)
 *   kread.c, walk_*.c, memstat.c (use only kvs_t)
 * Lower layers report through struct kvs_error, never through kvs_t.
 */
#ifndef KVS_PRIVATE_H
#define KVS_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "kvmstat.h"

#define KVS_HIDDEN __attribute__((visibility("hidden")))

/* ---------------------------------------------------------------- errors */

#define KVS_MSG_MAX 1024

/* Private status used by source probes: "this file is not my format". */
#define KVS_NOTMINE (-2)

struct kvs_error {
	kvs_status_t status;
	bool fault_valid;
	uint64_t fault_addr;
	char msg[KVS_MSG_MAX];
};

/* Clear the error (done at every public entry). */
KVS_HIDDEN void kerr_clear(struct kvs_error *e);
/* Set the innermost error; returns -1 so callers can `return kerr_set(...)`. */
KVS_HIDDEN int kerr_set(struct kvs_error *e, kvs_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, appending ": strerror(errno_val)". */
KVS_HIDDEN int kerr_errno(struct kvs_error *e, int errno_val, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix context to the chain: "context: previous message". Returns -1. */
KVS_HIDDEN int kerr_push(struct kvs_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record the faulting address of a failed read (kept by kerr_push). */
KVS_HIDDEN void kerr_fault(struct kvs_error *e, uint64_t addr);

/* --------------------------------------------------------------- sources */

/* What a source tells the translation layer and `kvmstat info`. */
struct kvs_src_info {
	const char *format;        /* "minidump", "elf", "raw", "live" */
	unsigned format_version;   /* minidump: 1..3 */
	unsigned page_size;        /* 4096 */
	uint64_t dumped_pages;
	uint64_t source_bytes;
	bool live;
	/* Minidump only: the page-table section and the header's VA layout. */
	const uint64_t *pmap;      /* borrowed from the mapping, little-endian */
	uint64_t pmap_entries;
	int pmap_level;            /* 1: PTE per 4 KiB (v1); 2: PDE per 2 MiB (v2/v3) */
	uint64_t kernbase;
	uint64_t dmap_base, dmap_end; /* 0,0: no DMAP shortcut */
	const void *msgbuf;        /* minidump msgbuf section, or NULL */
	uint64_t msgbuf_len;
};

struct kvs_open_args {
	const char *path;
	int fd;                   /* opened O_RDONLY by kvs.c */
	const struct stat *st;
	const uint8_t *map;       /* whole file mapped read-only, NULL for char devices */
	uint64_t map_len;
	int flags;                /* KVS_O_* */
};

struct kvs_source_ops {
	const char *name;
	/* 0 on success (*priv set), KVS_NOTMINE if the file is not this
	 * format (e untouched), or -1 with e set for a corrupt file of this
	 * format.  Must not read the whole file. */
	int (*open)(const struct kvs_open_args *a, void **priv, struct kvs_error *e);
	/* Read physical memory; 0 or -1 with e set (fault address = pa of the
	 * first missing byte). */
	int (*read_phys)(void *priv, uint64_t pa, void *buf, size_t len,
	    struct kvs_error *e);
	void (*info)(void *priv, struct kvs_src_info *out);
	/* Optional: pages present, when counting them costs a pass over an
	 * index (kept out of open); NULL = info()->dumped_pages. */
	uint64_t (*dumped_pages)(void *priv);
	/* Optional: called before each walk (kvs_tlb_flush) so a source whose
	 * file can change under it re-checks what it may read. */
	void (*refresh)(void *priv);
	void (*close)(void *priv);
};

/* Probe order: minidump, ELF dump, then raw (fallback / KVS_O_RAW).  The
 * live /dev/mem source is chosen by kvs.c for character devices. */
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_minidump;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_elfdump;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_raw;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_devmem;

/* ----------------------------------------------------------- translation */

#define AMD64_PAGE_SIZE 4096ULL
#define AMD64_KERNBASE 0xffffffff80000000ULL
#define AMD64_DMAP_MIN 0xfffff80000000000ULL
#define AMD64_DMAP_MAX 0xfffffc0000000000ULL

typedef int (*kvs_read_phys_fn)(void *ctx, uint64_t pa, void *buf, size_t len,
    struct kvs_error *e);

struct amd64_xlat {
	kvs_read_phys_fn read_phys;
	void *ctx;
	/* Either a PML4 (full dumps, raw images) ... */
	bool have_pml4;
	uint64_t pml4_pa;
	/* ... or a minidump pmap section. */
	const uint64_t *pmap;
	uint64_t pmap_entries;
	int pmap_level;           /* 1 or 2, see kvs_src_info */
	uint64_t kernbase;
	/* DMAP shortcut, used when dmap_end > dmap_base. */
	uint64_t dmap_base, dmap_end;
};

/* Translate va.  On success *pa is set and *run (if non-NULL) receives the
 * number of bytes from va to the end of its page (4K, 2M or 1G).  Returns 0,
 * or -1 with e set (KVS_E_UNMAPPED, or the read_phys error with context). */
KVS_HIDDEN int amd64_kvtop(const struct amd64_xlat *x, uint64_t va, uint64_t *pa,
    uint64_t *run, struct kvs_error *e);

/* Page size (4K, 2M or 1G) behind the last successful amd64_kvtop in this
 * thread, so the handle can cache whole large pages. */
KVS_HIDDEN uint64_t amd64_last_pagesize(void);

/* ---------------------------------------------------------------- symbols */

struct kvs_symtab;
struct Elf; /* libelf's opaque type, kept out of the public header */
KVS_HIDDEN int kvs_symtab_load(struct kvs_symtab **out, struct Elf *elf,
    struct kvs_error *e);
/* For relocatable modules: symbol values are offsets into section
 * st_shndx, placed at secaddr[st_shndx] (0 = not loaded: symbol dropped). */
KVS_HIDDEN int kvs_symtab_load_biased(struct kvs_symtab **out, struct Elf *elf,
    const uint64_t *secaddr, size_t nsec, struct kvs_error *e);
KVS_HIDDEN void kvs_symtab_free(struct kvs_symtab *st);
/* name may carry one a.out-style leading '_'.  Returns 0 or -1 (KVS_E_NOSYMBOL). */
KVS_HIDDEN int kvs_symtab_lookup(const struct kvs_symtab *st, const char *name,
    uint64_t *addr, uint64_t *size, struct kvs_error *e);
KVS_HIDDEN const char *kvs_symtab_at(const struct kvs_symtab *st, uint64_t addr,
    uint64_t *off);

/* ------------------------------------------------------------------ DWARF */

struct kvs_dwarf;
/* Binds libdwarf to the given Elf handle (which stays owned by the caller).
 * Returns 0, or -1 with KVS_E_DWARF ("no DWARF in kernel" included). The
 * name index is built lazily on the first lookup. */
KVS_HIDDEN int kvs_dwarf_open(struct kvs_dwarf **out, struct Elf *elf,
    struct kvs_error *e);
KVS_HIDDEN void kvs_dwarf_close(struct kvs_dwarf *d);
KVS_HIDDEN int kvs_dwarf_type(struct kvs_dwarf *d, const char *type,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_member(struct kvs_dwarf *d, const char *type,
    const char *path, struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_variable(struct kvs_dwarf *d, const char *var,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_version(struct kvs_dwarf *d); /* max CU version, 0 if unknown */

/* ------------------------------------------------------------- the handle */

/* A kernel module (.ko, ELF relocatable) loaded at `base` per linker_files. */
struct kvs_module {
	char *path;
	int fd;
	struct Elf *elf;
	struct kvs_symtab *syms;
	struct kvs_dwarf *dwarf;
	bool dwarf_tried;
	uint64_t base, size;
};

#define KVS_MAX_MODULES 64

struct kvs {
	struct kvs_error err;
	struct kvs_module mods[KVS_MAX_MODULES];
	unsigned nmods;
	char *kernel_path, *core_path;
	int kernel_fd, core_fd;
	struct Elf *elf;
	struct kvs_symtab *syms;
	struct kvs_dwarf *dwarf;          /* may be NULL until first use */
	struct Elf *debug_elf;            /* separate kernel.debug, if any */
	int debug_fd;
	const struct kvs_source_ops *src;
	void *src_priv;
	const uint8_t *map;
	uint64_t map_len;
	struct kvs_src_info info;
	struct amd64_xlat xlat;
	bool dwarf_tried;
	/* Translation cache: a small direct-mapped TLB of pages (any size).
	 * Dumps never change, live memory might: walkers flush it at the start
	 * of every refresh (kvs_tlb_flush). */
	struct kvs_tlbe {
		uint64_t va, pa, size;    /* size 0 = empty */
	} tlb[64];
	unsigned nwarn;                   /* warnings since the last walk began */
	char warn[KVS_MSG_MAX];           /* the first of them */
};

KVS_HIDDEN void kvs_tlb_flush(kvs_t *kd);
KVS_HIDDEN void kvs_modules_close(kvs_t *kd);

/* Record a non-fatal problem (a skipped row): counted, first one kept. */
KVS_HIDDEN void kvs_warn(kvs_t *kd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
