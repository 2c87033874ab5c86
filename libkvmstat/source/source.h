/*
 * source.h - the dump-format layer: one const ops table per format
 * (source/<format>.c), probed in a fixed order by the handle.  A source
 * reads physical memory and describes itself; it knows no architecture
 * beyond what its own headers say, and no kernel symbols.
 */
#ifndef KVS_SOURCE_H
#define KVS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "error.h"

/* What a source tells the translation layer and `kvmstat info`. */
struct kvs_src_info {
	const char *format;        /* "minidump", "elf", "raw", "live" */
	unsigned format_version;   /* minidump: 1..3 */
	/* The machine (ELF EM_*) the format says the dump is of (minidump
	 * magic, ELF e_machine), 0 when it does not say: the handle refuses
	 * a kernel of another machine. */
	unsigned machine;
	unsigned page_size;        /* 4096 */
	uint64_t dumped_pages;
	uint64_t source_bytes;
	/* One past the highest physical address held, when the format says
	 * (ELF: its last physical segment; raw: its size); 0 otherwise. */
	uint64_t phys_end;
	bool live;
	/* A page-table section the dump carries (FreeBSD minidumps), handed
	 * to translation as is (struct kvs_xlat_params says what it means),
	 * and the direct-map window the dump's header gives.  NULL / 0,0 when
	 * the format has none. */
	const uint64_t *pt;        /* borrowed from the mapping, little-endian */
	uint64_t pt_entries;
	int pt_level;              /* 1: an entry per 4 KiB page; 2: per 2 MiB */
	uint64_t pt_base;          /* first kernel address the section covers */
	uint64_t direct_base, direct_end;
	uint64_t direct_phys;      /* physical address of direct_base (arm64) */
	/* The dump holds virtual ranges only (no physical memory): the handle
	 * reads through read_virt and does no page-table translation. */
	bool virtual_only;
	/* The VMCOREINFO text a dump's notes carry (Linux), borrowed, or NULL. */
	const char *vmcoreinfo;
	size_t vmcoreinfo_len;
	/* A copy of the kernel's message buffer the dump carries, or NULL. */
	const void *msgbuf;
	uint64_t msgbuf_len;
	/* Formats storing compressed pages (kdump): the source's cache of
	 * decompressed pages, hits and misses so far (info() reports them as
	 * of the call).  0 for the others. */
	uint64_t cache_hits, cache_misses;
};

/*
 * A dump seen through a layer (a compressed file, source/compressed.c), or
 * a file that cannot be mapped (the core reads it with pread: /proc/kcore):
 * the stream, `size` bytes, read at any offset.  A format that accepts one
 * reads its headers and pages with `read` instead of the mapping; one that
 * does not finds map == NULL and answers "not mine".
 */
struct kvs_view {
	void *priv;
	uint64_t size;
	const char *layer;         /* "gzip", "zstd", "pread" */
	bool live;                 /* the bytes change while open (/proc/kcore) */
	int (*read)(void *priv, uint64_t off, void *buf, size_t len, struct kvs_error *e);
};

struct kvs_open_args {
	const char *path;
	int fd;                   /* opened O_RDONLY by kvs.c */
	const struct stat *st;
	const uint8_t *map;       /* whole file mapped read-only, NULL for char devices */
	uint64_t map_len;
	int flags;                /* KVS_O_* */
	const struct kvs_view *view;  /* set (and map NULL) under a layer */
	uint64_t phys_start;      /* raw: the physical address of the first byte
	                           * ("FILE@ADDR", crash's spelling); else 0 */
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
	/* Optional: read by virtual address, for formats that record virtual
	 * ranges (ELF cores); used when the dump is virtual_only. */
	int (*read_virt)(void *priv, uint64_t va, void *buf, size_t len,
	    struct kvs_error *e);
	void (*info)(void *priv, struct kvs_src_info *out);
	/* Optional: pages present, when counting them costs a pass over an
	 * index (kept out of open); NULL = info()->dumped_pages. */
	uint64_t (*dumped_pages)(void *priv);
	/* Optional: called before each walk (kvs_tlb_flush) so a source whose
	 * file can change under it re-checks what it may read. */
	void (*refresh)(void *priv);
	void (*close)(void *priv);
	/* Optional: where len bytes of physical memory from pa lie in the
	 * source's own mapping, when they lie there in one piece as they are
	 * (no decompression, no view); NULL otherwise, e untouched.  Valid
	 * until the next refresh or close.  Lets a walker sum records where
	 * they lie instead of copying them first (kvs_peek). */
	const void *(*map_phys)(void *priv, uint64_t pa, size_t len);
	/* Optional: another file of the same dump (the parts of a split
	 * kdump), mapped like the first.  0, or -1 with e set. */
	int (*add_part)(void *priv, const struct kvs_open_args *a, struct kvs_error *e);
};

/* The formats a regular file is probed for, in order (source.c): raw last,
 * as it accepts anything.  KVS_O_RAW forces kvs_source_raw; a character
 * device is live memory (kvs_source_devmem). */
extern KVS_HIDDEN const struct kvs_source_ops *const kvs_source_table[];
extern KVS_HIDDEN const size_t kvs_source_count;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_minidump;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_elfdump;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_kdump;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_raw;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_devmem;
extern KVS_HIDDEN const struct kvs_source_ops kvs_source_compressed;

#endif
