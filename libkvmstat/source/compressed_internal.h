/*
 * compressed_internal.h - the handle of a gzip- or zstd-compressed dump,
 * shared by compressed.c (the layer: cache, zstd, view, open) and
 * compressed_gzip.c (the gzip index and reads).  Private to
 * source/compressed*.c.
 */
#ifndef KVS_COMPRESSED_INTERNAL_H
#define KVS_COMPRESSED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "source.h"

#define NCACHE 32

enum kind { CZ_GZIP, CZ_ZSTD };

struct point {
	uint64_t out, in;     /* decompressed and compressed offsets */
	int bits;             /* bits of the byte before `in` still to read */
	uint8_t *win;         /* the WIN bytes of output before `out`, deflated */
	uLong winz, winlen;
};

struct zframe {
	uint64_t out, in, csize, dsize;
};

struct block {
	uint64_t start;
	uint8_t *data;
	size_t len;
	uint64_t stamp;
};

struct cz {
	enum kind kind;
	const char *name;
	const uint8_t *map;
	uint64_t map_len;
	uint64_t size;              /* decompressed bytes available */
	bool truncated;             /* the compressed data stops early */
	char why[160];              /* ... how, for read errors past the end */
	/* gzip */
	struct point *pts;
	size_t npts;
	uint64_t span;
	z_stream zs;                /* the live stream, positioned at zs_out */
	bool zs_live, zs_raw;
	uint64_t zs_out, zs_in_end;
	/* zstd */
	struct zframe *frames;
	size_t nframes;
	int spill_fd;               /* -1, or the decompressed copy */
	/* cache */
	struct block cache[NCACHE];
	uint64_t cached, tick, hits, misses;
	struct kvs_view view;
	const struct kvs_source_ops *inner;
	void *inner_priv;
};

/* compressed.c's cache: the block starting at start, or NULL.  Inline: both
 * block readers (zst_block, gz_block) ask it on every read. */
static inline const struct block *
cache_find(struct cz *c, uint64_t start)
{
	size_t i;

	for (i = 0; i < NCACHE; i++)
		if (c->cache[i].data != NULL && c->cache[i].start == start) {
			c->cache[i].stamp = ++c->tick;
			return &c->cache[i];
		}
	return NULL;
}

/* compressed.c: the cache. */
KVS_HIDDEN const struct block *cz_cache_put(struct cz *c, uint64_t start, uint8_t *data,
    size_t len);

/* compressed_gzip.c */
KVS_HIDDEN bool gz_magic(const uint8_t *p, uint64_t n);
KVS_HIDDEN int gz_build(struct cz *c, struct kvs_error *e);
KVS_HIDDEN const struct block *gz_block(struct cz *c, uint64_t off, struct kvs_error *e);

#endif
