/*
 * compressed_gzip.c - the gzip side of the compressed layer (compressed.c):
 * the one pass at open that checks every member and keeps restart points at
 * deflate block boundaries about every SPAN bytes of output (each with the
 * WIN bytes of output before it, deflated, and the bit offset; at most
 * MAXPOINTS, thinned by doubling the span), and reads that restart or
 * continue the live inflate stream to fill a cache block.
 *
 * The cache, the view, zstd and opening are compressed.c's;
 * compressed_internal.h holds the handle they share.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "compressed_internal.h"

#define SPAN (1ULL << 20)              /* output between gzip restart points */
#define MAXPOINTS 2048
#define WIN 32768                      /* deflate's window */
#define BLK (256u << 10)               /* gzip cache block */

bool
gz_magic(const uint8_t *p, uint64_t n)
{
	return n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8;
}

/* Feed the stream from the mapping: avail_in is 32 bits wide. */
static void
gz_feed(struct cz *c, z_stream *s, uint64_t *in)
{
	if (s->avail_in == 0 && *in < c->map_len) {
		uint64_t n = c->map_len - *in;
		s->next_in = (Bytef *)(uintptr_t)(c->map + *in);
		s->avail_in = n > (1u << 30) ? (1u << 30) : (uInt)n;
		*in += s->avail_in;
	}
}

static int
gz_add_point(struct cz *c, uint64_t in, uint64_t out, int bits, const uint8_t *ring, size_t pos,
    struct kvs_error *e)
{
	uint8_t lin[WIN];
	struct point *p;
	uLong n = out < WIN ? (uLong)out : WIN, bound;

	if (c->npts == MAXPOINTS) {
		/* Thin: keep every other point, double the span. */
		size_t i, k = 0;
		for (i = 0; i < c->npts; i++) {
			if (i % 2 == 0)
				c->pts[k++] = c->pts[i];
			else
				free(c->pts[i].win);
		}
		c->npts = k;
		c->span *= 2;
		if (out - c->pts[c->npts - 1].out < c->span)
			return 0;
	}
	/* The ring holds the last WIN bytes with the oldest at pos. */
	if (out >= WIN) {
		memcpy(lin, ring + pos, WIN - pos);
		memcpy(lin + (WIN - pos), ring, pos);
	} else
		memcpy(lin, ring, (size_t)n);
	p = &c->pts[c->npts];
	bound = compressBound(n);
	p->win = malloc(bound ? bound : 1);
	if (p->win == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory for the gzip index");
	p->winz = bound;
	if (n > 0 && compress2(p->win, &p->winz, lin, n, 1) != Z_OK) {
		free(p->win);
		return kerr_set(e, KVS_E_NOMEM, "gzip index: cannot store a window");
	}
	p->winlen = n;
	p->out = out;
	p->in = in;
	p->bits = bits;
	c->npts++;
	return 0;
}

/* The one pass at open: size, integrity (zlib checks each member's CRC and
 * length) and the restart points. */
int
gz_build(struct cz *c, struct kvs_error *e)
{
	z_stream s;
	uint8_t *ring = malloc(WIN);
	uint64_t fed = 0, out = 0, last = 0;
	int ret;

	memset(&s, 0, sizeof(s));
	c->span = SPAN;
	c->pts = calloc(MAXPOINTS, sizeof(*c->pts));
	if (ring == NULL || c->pts == NULL || inflateInit2(&s, 15 + 16) != Z_OK) {
		free(ring);
		return kerr_set(e, KVS_E_NOMEM, "out of memory for the gzip index");
	}
	s.next_out = ring;
	s.avail_out = WIN;
	for (;;) {
		uInt ain, aout;
		if (s.avail_out == 0) {
			s.next_out = ring;
			s.avail_out = WIN;
		}
		gz_feed(c, &s, &fed);
		ain = s.avail_in;
		aout = s.avail_out;
		ret = inflate(&s, Z_BLOCK);
		out += aout - s.avail_out;
		if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_MEM_ERROR ||
		    ret == Z_STREAM_ERROR) {
			uint64_t at = fed - s.avail_in;
			kerr_set(e, ret == Z_MEM_ERROR ? KVS_E_NOMEM : KVS_E_FORMAT,
			    "gzip data corrupt at compressed byte %llu (decompressed offset 0x%llx): %s",
			    (unsigned long long)at, (unsigned long long)out,
			    s.msg ? s.msg : "bad data");
			goto fail;
		}
		if (ret == Z_STREAM_END) {
			uint64_t at = fed - s.avail_in;
			/* Another member follows, or the file ends (NUL padding
			 * after the last member is allowed, as gzip does). */
			if (gz_magic(c->map + at, c->map_len - at)) {
				inflateReset(&s);
				continue;
			}
			break;
		}
		if (ain == s.avail_in && aout == s.avail_out && s.avail_in == 0 && fed == c->map_len) {
			c->truncated = true;
			snprintf(c->why, sizeof(c->why), "the gzip file is truncated: its data "
			    "stops after compressed byte %llu, decompressed offset 0x%llx",
			    (unsigned long long)c->map_len, (unsigned long long)out);
			break;
		}
		/* At the end of a deflate block that is not the last one. */
		if ((s.data_type & 128) && !(s.data_type & 64) &&
		    (c->npts == 0 || out - last >= c->span)) {
			if (gz_add_point(c, fed - s.avail_in, out, s.data_type & 7, ring,
			    WIN - s.avail_out, e) != 0)
				goto fail;
			last = c->pts[c->npts - 1].out;
		}
	}
	c->size = out;
	inflateEnd(&s);
	free(ring);
	return 0;
fail:
	inflateEnd(&s);
	free(ring);
	return -1;
}

/* Position the live stream at restart point p. */
static int
gz_restart(struct cz *c, const struct point *p, struct kvs_error *e)
{
	uint8_t win[WIN];
	uLong wl = p->winlen;

	if (c->zs_live)
		inflateEnd(&c->zs);
	c->zs_live = false;
	memset(&c->zs, 0, sizeof(c->zs));
	if (inflateInit2(&c->zs, -15) != Z_OK)
		return kerr_set(e, KVS_E_NOMEM, "gzip: inflateInit2 failed");
	c->zs_live = true;
	c->zs_raw = true;
	c->zs_in_end = p->in;
	if (p->bits) {
		int byte = c->map[p->in - 1];
		inflatePrime(&c->zs, p->bits, byte >> (8 - p->bits));
	}
	if (wl > 0) {
		if (uncompress(win, &wl, p->win, p->winz) != Z_OK || wl != p->winlen)
			return kerr_set(e, KVS_E_FORMAT, "gzip index window damaged");
		inflateSetDictionary(&c->zs, win, (uInt)wl);
	}
	c->zs_out = p->out;
	return 0;
}

/* Decompress up to len bytes at the live stream's position into dst. */
static int
gz_pull(struct cz *c, uint8_t *dst, size_t len, struct kvs_error *e)
{
	while (len > 0) {
		int ret;
		uInt aout;
		gz_feed(c, &c->zs, &c->zs_in_end);
		c->zs.next_out = dst;
		c->zs.avail_out = len > (1u << 30) ? (1u << 30) : (uInt)len;
		aout = c->zs.avail_out;
		ret = inflate(&c->zs, Z_NO_FLUSH);
		dst += aout - c->zs.avail_out;
		len -= aout - c->zs.avail_out;
		c->zs_out += aout - c->zs.avail_out;
		if (ret == Z_STREAM_END) {
			uint64_t at = c->zs_in_end - c->zs.avail_in;
			/* A raw stream leaves the member's 8-byte trailer to us. */
			if (c->zs_raw)
				at += 8;
			if (at < c->map_len && gz_magic(c->map + at, c->map_len - at)) {
				inflateReset2(&c->zs, 15 + 16);
				c->zs_raw = false;
				c->zs.avail_in = 0;
				c->zs_in_end = at;
				continue;
			}
			if (len > 0)
				break;
			return 0;
		}
		if (ret == Z_BUF_ERROR && c->zs.avail_in == 0 && c->zs_in_end >= c->map_len)
			break;                  /* no more input: the truncation */
		if (ret != Z_OK) {
			c->zs_live = false;
			inflateEnd(&c->zs);
			return kerr_set(e, KVS_E_FORMAT, "gzip data corrupt near compressed byte %llu",
			    (unsigned long long)(c->zs_in_end - c->zs.avail_in));
		}
	}
	if (len > 0) {
		c->zs_live = false;
		inflateEnd(&c->zs);
		return kerr_set(e, KVS_E_TRUNCATED, "gzip stream ends at decompressed offset 0x%llx",
		    (unsigned long long)c->zs_out);
	}
	return 0;
}

/* The cache block holding decompressed offset off. */
const struct block *
gz_block(struct cz *c, uint64_t off, struct kvs_error *e)
{
	uint64_t start = off / BLK * BLK, want = start;
	const struct block *b = cache_find(c, start);
	size_t lo, hi;

	if (b != NULL) {
		c->hits++;
		return b;
	}
	c->misses++;
	/* Continue the live stream when it is before the block and past the
	 * last restart point at or before it; else restart at that point. */
	if (c->npts == 0)
		return kerr_set(e, KVS_E_FORMAT, "gzip file holds no data"), NULL;
	for (lo = 0, hi = c->npts; hi - lo > 1;) {
		size_t mid = (lo + hi) / 2;
		if (c->pts[mid].out <= want)
			lo = mid;
		else
			hi = mid;
	}
	if (!c->zs_live || c->zs_out > want || c->zs_out < c->pts[lo].out) {
		if (gz_restart(c, &c->pts[lo], e) != 0)
			return NULL;
	}
	for (;;) {
		/* Blocks are aligned: first reach a block boundary. */
		uint64_t bs = (c->zs_out + BLK - 1) / BLK * BLK;
		size_t n;
		uint8_t *data;
		if (bs > c->zs_out) {
			uint8_t skip[4096];
			while (c->zs_out < bs) {
				size_t k = bs - c->zs_out < sizeof(skip) ? (size_t)(bs - c->zs_out) : sizeof(skip);
				if (gz_pull(c, skip, k, e) != 0)
					return NULL;
			}
		}
		n = c->size - bs < BLK ? (size_t)(c->size - bs) : BLK;
		data = malloc(n ? n : 1);
		if (data == NULL)
			return kerr_set(e, KVS_E_NOMEM, "out of memory"), NULL;
		if (gz_pull(c, data, n, e) != 0) {
			free(data);
			return NULL;
		}
		if (bs == want)
			return cz_cache_put(c, bs, data, n);
		/* Passed on the way: keep the ones close to the target. */
		if ((want - bs) / BLK < NCACHE / 2 && cache_find(c, bs) == NULL)
			cz_cache_put(c, bs, data, n);
		else
			free(data);
	}
}
