/*
 * kvs_private.h - the handle, and the interfaces of the layers below it.
 *
 * Layers, each knowing only the one below it (docs/architecture.md):
 *   source/  dump formats: read physical memory          source.h
 *   arch/    virtual -> physical per architecture        arch.h
 *   types/   ELF symbols and DWARF layouts               types.h
 *   core/    the handle binding them (kvs.c), errors, typed reads (kread.h),
 *            modules; names no architecture, OS or kernel symbol
 *   os/      per kernel family: discovery (os.h) and its walkers
 *   memstat/ the libmemstat list the walkers fill
 * Lower layers report through struct kvs_error, never through kvs_t.
 */
#ifndef KVS_PRIVATE_H
#define KVS_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "kvmstat.h"
#include "error.h"
#include "source.h"
#include "arch.h"
#include "types.h"
#include "os.h"

/* ------------------------------------------------------------- the handle */

/* A kernel module (.ko, ELF relocatable) loaded at `base`, as the OS layer
 * found it. */
struct kvs_module {
	char *path;
	int fd;
	struct Elf *elf;
	struct kvs_symtab *syms;
	uint64_t base, size;
};

#define KVS_MAX_MODULES 64
#define KVS_MAX_PARTS 64
#define KVS_NMEMO 8             /* walkers' memos per handle (kvs_memo) */

struct kvs {
	struct kvs_error err;
	struct kvs_module mods[KVS_MAX_MODULES];
	unsigned nmods;
	char *kernel_path, *core_path;
	int kernel_fd, core_fd;
	struct Elf *elf;
	struct kvs_symtab *syms;
	struct Elf *debug_elf;            /* separate kernel.debug, if any */
	int debug_fd;
	const struct kvs_source_ops *src;
	void *src_priv;
	const uint8_t *map;
	uint64_t map_len;
	/* A file that cannot be mapped (/proc/kcore) is read through this. */
	struct kvs_view fileview;
	/* The mapped file is shorter than the mapping (cut while open): its
	 * size at the last check.  Touching the mapping past it would raise
	 * SIGBUS, so a source without its own refresh reads nothing more. */
	bool shrunk;
	uint64_t shrunk_to;
	/* The further files of a dump in parts (-M a,b,c: split kdumps). */
	struct kvs_part {
		int fd;
		const uint8_t *map;
		uint64_t len;
	} parts[KVS_MAX_PARTS];
	unsigned nparts;
	struct kvs_src_info info;
	const struct kvs_arch_ops *arch;  /* from the kernel's e_machine */
	void *arch_priv;
	const struct kvs_os_ops *os;      /* from the kernel's symbols */
	void *os_priv;                    /* the OS layer's own state */
	/* Where the kernel runs relative to where it was linked (KASLR): the
	 * kernel's symbols at or above slide_min are moved by slide. */
	uint64_t slide, slide_min;
	/* Storage behind kvs_kernel_info()'s strings. */
	char kinfo_version[512], kinfo_panic[512];
	/* Translation cache: a small direct-mapped TLB of pages (any size).
	 * Dumps never change, live memory might: walkers flush it at the start
	 * of every refresh (kvs_tlb_flush). */
	struct kvs_tlbe {
		uint64_t va, pa, size;    /* size 0 = empty */
	} tlb[64];
	/* kvs_peek's last page: the 4 KiB page of kernel VA peek_vpn << 12
	 * lies whole at peek_host in the source's mapping (peek_host NULL:
	 * none).  Emptied with the TLB, and by a source that shrank. */
	uint64_t peek_vpn;
	const uint8_t *peek_host;
	unsigned nwarn;                   /* warnings since the last walk began */
	char warn[KVS_MSG_MAX];           /* the first of them, or of the lost */
	bool warn_lost;                   /* warn is a kvs_warn_lost one */
	/* The types front (types/types.c): every type question goes there. */
	struct kvs_types *types;
	int flags;                        /* kvs_open's KVS_O_* */
	struct kvs_notify note;           /* kvs_set_notify */
	/* Walkers' memos (kvs_memo), freed at close. */
	struct kvs_memo {
		const void *tag;
		void *p;
		void (*fini)(void *p);    /* kvs_memo_fini's, called before free */
	} memo[KVS_NMEMO];
};

KVS_HIDDEN void kvs_tlb_flush(kvs_t *kd);
/* A walker's memory on the handle, for what it works out once from the
 * kernel's types (a layout): `size` zeroed bytes the first time a tag (the
 * address of a walker's own static object) asks, the same bytes after, freed
 * by kvs_close.  NULL when out of memory or out of slots: then work it out
 * every time. */
KVS_HIDDEN void *kvs_memo(kvs_t *kd, const void *tag, size_t size);
/* The same, for a memo that holds memory of its own (a list): kvs_close
 * calls fini(p) before it frees the memo. */
KVS_HIDDEN void *kvs_memo_fini(kvs_t *kd, const void *tag, size_t size, void (*fini)(void *p));
/* At most how many distinct node_size-byte nodes the dump can hold (cap
 * for live memory): the bound for list walks that allocate per node. */
KVS_HIDDEN uint64_t kvs_dump_bound(const kvs_t *kd, uint64_t node_size, uint64_t cap);
/* Open a regular file read-only without blocking on a FIFO: the fd, or -1
 * with e set ("<what> <path>: not a regular file (a FIFO)"). */
struct stat;
KVS_HIDDEN int kvs_open_regular(const char *path, const char *what, struct stat *st,
    struct kvs_error *e);
/* A kernel symbol's link-time address as it is in memory. */
static inline uint64_t
kvs_slide(const kvs_t *kd, uint64_t link_addr)
{
	return kd->slide != 0 && link_addr >= kd->slide_min ? link_addr + kd->slide : link_addr;
}
/* A string of the kernel file's initialised data at addr (0, or -1). */
KVS_HIDDEN int kvs_kernel_file_string(kvs_t *kd, uint64_t addr, char *buf, size_t len);
/* The len bytes at kva where they lie in the dump's mapping, when they lie
 * there in one piece (one translation, a source that maps its file): a
 * pointer valid until the next kvs_tlb_flush or close; NULL otherwise (then
 * kvs_read them; nothing is reported).  Read-only memory: never written. */
KVS_HIDDEN const void *kvs_peek(kvs_t *kd, uint64_t kva, size_t len);
/* Read physical memory through the source, without clearing the error. */
KVS_HIDDEN int kvs_phys_read(kvs_t *kd, uint64_t pa, void *buf, size_t len);
KVS_HIDDEN void kvs_modules_close(kvs_t *kd);

/* Record a non-fatal problem (a skipped row): counted, first one kept. */
KVS_HIDDEN void kvs_warn(kvs_t *kd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same for data the dump does not hold (a row kept with figures
 * unknown, a list cut): the first such one is the one kept, over any
 * lesser warning before it. */
KVS_HIDDEN void kvs_warn_lost(kvs_t *kd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
