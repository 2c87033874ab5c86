/*
 * kdump_internal.h - the handle of a kdump-compressed dump, shared by
 * kdump.c (opening: flattened stream index, headers, split parts, close)
 * and kdump_read.c (the file read, rank table, descriptors, decompression,
 * page cache).  Private to source/kdump*.c.
 */
#ifndef KVS_KDUMP_INTERNAL_H
#define KVS_KDUMP_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "source.h"

#define RANK_BITS 4096ULL       /* bits per rank entry: 512 bitmap bytes */
#define RANK_BYTES (RANK_BITS / 8)
#define CACHE_SETS 64
#define CACHE_WAYS 4

/* Bytes [off, off+len) of the rebuilt file are bytes [src, src+len) of the
 * mapping; seq is the record's place in the stream (later wins). */
struct frec {
	uint64_t off, len, src, seq;
};

struct cslot {
	uint64_t key;           /* pfn + 1; 0 = empty */
	uint64_t used;          /* tick of the last use */
};

struct kdump {
	const uint8_t *map;
	uint64_t map_len;
	int fd;
	/* The file read: the mapping itself (recs == NULL), or the file the
	 * flattened stream rebuilds, size bytes long. */
	struct frec *recs;
	size_t nrecs, hint;
	uint64_t size;

	unsigned version;
	bool be;                /* the dumped machine's byte order: big-endian */
	unsigned word;          /* its unsigned long: 4 or 8 bytes */
	uint32_t status;
	uint64_t phys_base;     /* the sub-header's (0 without one) */
	int32_t dump_level;
	uint64_t bs;
	unsigned shift;
	uint64_t max_mapnr;
	uint64_t bm1_off, bm2_off, bm_bytes;
	uint64_t pd_off;
	bool split;
	uint64_t start_pfn, end_pfn;

	uint64_t *rank;         /* lazily allocated and filled */
	uint64_t nblocks, rank_valid;
	uint64_t rank_start;    /* set bits before start_pfn, when have_start */
	bool have_start;

	uint8_t *cbuf;          /* CACHE_SETS * CACHE_WAYS pages, lazily */
	uint8_t *cscratch;      /* compressed bytes spread over records */
	struct cslot slot[CACHE_SETS * CACHE_WAYS];
	uint64_t tick, hits, misses;
	bool lzo_ready;
	ZSTD_DCtx *zstd;

	char *vmci_copy;        /* owned copy, when not one stretch of the map */
	struct kvs_src_info info;
	struct kdump *next_part; /* split dumps: the other files given, chained */
};

static inline uint32_t
le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t
le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline uint32_t
be32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint64_t
be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

/* Header, sub-header, note and descriptor fields, in the dump's byte order
 * (the bitmaps are bytes, LSB first in each, whatever the order). */
static inline uint32_t
kd32(const struct kdump *k, const uint8_t *p)
{
	return k->be ? be32(p) : le32(p);
}

static inline uint64_t
kd64(const struct kdump *k, const uint8_t *p)
{
	return k->be ? be64(p) : le64(p);
}

/* kdump_read.c: the file read (kdump.c reads the headers through it). */
KVS_HIDDEN size_t kdump_rec_find(struct kdump *k, uint64_t off);
KVS_HIDDEN void kdump_view_read(struct kdump *k, uint64_t off, void *dst, size_t len);
KVS_HIDDEN const uint8_t *kdump_view_get(struct kdump *k, uint64_t off, size_t len,
    uint8_t *scratch);

/* kdump_read.c: the source ops of reading. */
KVS_HIDDEN int kd_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e);
KVS_HIDDEN void kd_info(void *priv, struct kvs_src_info *out);
KVS_HIDDEN uint64_t kd_dumped_pages(void *priv);

#endif
