/*
 * source.h - the dump-format layer: one const ops table per format
 * (source/<format>.c), probed in a fixed order by the handle.  A source
 * reads physical memory and describes itself; it knows no architecture
 * beyond what its own headers say, and no kernel symbols.
 */
#ifndef KVS_SOURCE_H
#define KVS_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "error.h"

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

#endif
