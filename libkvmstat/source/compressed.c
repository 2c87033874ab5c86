/*
 * compressed.c - dumps as `savecore -z` leaves them (vmcore.N.gz,
 * vmcore.N.zst): a layer under the formats, not a format.
 *
 * Opening scans the compressed file once and keeps an index of where to
 * restart decompression; the decompressed stream is then offered to the
 * other formats of source.c as a struct kvs_view (read at any offset), and
 * the first that claims it does the real work.  A read decompresses only the
 * region it needs, through a small cache of decompressed blocks:
 *
 *   gzip   restart points at deflate block boundaries about every SPAN bytes
 *          of output, each holding the 32 KiB of output before it (stored
 *          deflated) and the bit offset, so inflate can resume there as a raw
 *          stream primed with those bits and that dictionary.  The number of
 *          points is bounded (MAXPOINTS): past it, every other point is
 *          dropped and the span doubles, so the index stays small for any
 *          dump.  Consecutive reads continue the live inflate stream instead
 *          of restarting.  Concatenated members are followed.
 *   zstd   a frame index when every frame states its size and is small
 *          (ZFRAME_MAX), and there are not too many (ZFRAMES_MAX): a read
 *          decompresses one frame.  zstd's one-frame
 *          files (what `zstd` and savecore write) cannot be resumed mid-frame
 *          through libzstd's API, so they are decompressed once, sequentially,
 *          into an unlinked temporary file ($TMPDIR) read with pread: memory
 *          stays bounded, disk holds the decompressed size.
 *
 * A truncated file is usable up to where its data stops (the format then
 * says what is missing, as for a truncated plain dump; a read past it names
 * the offset); corrupt data is an error naming the compressed offset.
 *
 * This file owns the layer: the cache of decompressed blocks, the zstd
 * frame index and its spill file, the view the formats read, opening and
 * the ops table.  The gzip index and inflate restarts are
 * compressed_gzip.c's; compressed_internal.h holds the handle they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zstd.h>

#include "compressed_internal.h"

#define CACHE_BYTES (32ULL << 20)      /* decompressed bytes kept */
#define ZFRAME_MAX (8ULL << 20)        /* zstd frames indexed one by one */
#define ZFRAMES_MAX 65536              /* more (tiny) frames: decompressed once */

/* ---------------------------------------------------------------- cache */

/* Take ownership of data as the block at start, evicting the least recently
 * used blocks to stay within NCACHE blocks and CACHE_BYTES. */
const struct block *
cz_cache_put(struct cz *c, uint64_t start, uint8_t *data, size_t len)
{
	size_t i, victim;

	for (;;) {
		size_t used = 0;
		victim = NCACHE;
		for (i = 0; i < NCACHE; i++) {
			if (c->cache[i].data == NULL) {
				if (victim == NCACHE || c->cache[victim].data != NULL)
					victim = i;
				continue;
			}
			used++;
			if (victim == NCACHE || (c->cache[victim].data != NULL &&
			    c->cache[i].stamp < c->cache[victim].stamp))
				victim = i;
		}
		if (c->cache[victim].data == NULL && c->cached + len <= CACHE_BYTES)
			break;
		if (used == 0)
			break;
		/* Evict the oldest. */
		for (i = 0, victim = NCACHE; i < NCACHE; i++)
			if (c->cache[i].data != NULL &&
			    (victim == NCACHE || c->cache[i].stamp < c->cache[victim].stamp))
				victim = i;
		c->cached -= c->cache[victim].len;
		free(c->cache[victim].data);
		c->cache[victim].data = NULL;
	}
	c->cache[victim] = (struct block){ start, data, len, ++c->tick };
	c->cached += len;
	return &c->cache[victim];
}

static void
cache_clear(struct cz *c)
{
	size_t i;

	for (i = 0; i < NCACHE; i++)
		free(c->cache[i].data);
	memset(c->cache, 0, sizeof(c->cache));
	c->cached = 0;
}

/* ---------------------------------------------------------------- zstd */

static bool
zst_magic(const uint8_t *p, uint64_t n)
{
	return n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
}

/* Frames, if every one is small and states its size; 1 if not indexable. */
static int
zst_index(struct cz *c, struct kvs_error *e)
{
	uint64_t in = 0, out = 0;
	size_t cap = 0;

	while (in < c->map_len) {
		const uint8_t *p = c->map + in;
		uint64_t left = c->map_len - in;
		size_t cs = ZSTD_findFrameCompressedSize(p, left);
		unsigned long long ds;
		uint32_t magic;

		if (ZSTD_isError(cs))
			return 1;                       /* the sequential pass says why */
		memcpy(&magic, p, 4);
		magic = le32toh(magic);
		if ((magic & 0xfffffff0u) == 0x184d2a50u) {   /* skippable */
			in += cs;
			continue;
		}
		ds = ZSTD_getFrameContentSize(p, cs);
		if (ds == ZSTD_CONTENTSIZE_UNKNOWN || ds == ZSTD_CONTENTSIZE_ERROR || ds > ZFRAME_MAX)
			return 1;
		if (c->nframes == ZFRAMES_MAX)
			return 1;
		if (c->nframes == cap) {
			struct zframe *f;
			cap = cap ? cap * 2 : 64;
			f = realloc(c->frames, cap * sizeof(*f));
			if (f == NULL)
				return kerr_set(e, KVS_E_NOMEM, "out of memory for the zstd index");
			c->frames = f;
		}
		c->frames[c->nframes++] = (struct zframe){ out, in, cs, ds };
		in += cs;
		out += ds;
	}
	c->size = out;
	return 0;
}

/* Decompress the whole file once into an unlinked temporary file. */
static int
zst_spill(struct cz *c, struct kvs_error *e)
{
	const char *dir = getenv("TMPDIR");
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	size_t outcap = ZSTD_DStreamOutSize(), ret = 0;
	uint8_t *obuf = malloc(outcap);
	ZSTD_inBuffer ib = { c->map, (size_t)c->map_len, 0 };
	uint64_t out = 0, room = UINT64_MAX;
	bool in_frame = false;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	c->spill_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (c->spill_fd < 0) {
		ZSTD_freeDCtx(dc);
		free(obuf);
		return kerr_errno(e, errno, "zstd: a temporary file in %s for the decompressed dump",
		    dir);
	}
	if (dc == NULL || obuf == NULL) {
		ZSTD_freeDCtx(dc);
		free(obuf);
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	}
	/* Never fill the disk: at most 90 % of what is free there now. */
	{
		struct statvfs sv;
		if (fstatvfs(c->spill_fd, &sv) == 0)
			room = (uint64_t)sv.f_bavail * sv.f_frsize / 10 * 9;
	}
	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob = { obuf, outcap, 0 };
		size_t before = ib.pos;
		ret = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(ret)) {
			kerr_set(e, KVS_E_FORMAT, "zstd data corrupt near compressed byte %llu "
			    "(decompressed offset 0x%llx): %s", (unsigned long long)ib.pos,
			    (unsigned long long)out, ZSTD_getErrorName(ret));
			goto fail;
		}
		in_frame = ret != 0;
		if (ob.pos > room || out > room - ob.pos) {
			kerr_set(e, KVS_E_NOMEM, "zstd: the decompressed dump needs more than %llu bytes, "
			    "more than %s has free; decompress it where there is room (zstd -d)",
			    (unsigned long long)room, dir);
			goto fail;
		}
		if (ob.pos > 0) {
			size_t w = 0;
			while (w < ob.pos) {
				ssize_t k = pwrite(c->spill_fd, obuf + w, ob.pos - w, (off_t)(out + w));
				if (k < 0) {
					kerr_errno(e, errno, "zstd: writing the decompressed dump to %s", dir);
					goto fail;
				}
				w += (size_t)k;
			}
			out += ob.pos;
		}
		if (ob.pos == 0 && ib.pos == before && ret != 0)
			break;
	}
	/* Drain what the decoder still holds. */
	for (;;) {
		ZSTD_outBuffer ob = { obuf, outcap, 0 };
		ret = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(ret) || ob.pos == 0)
			break;
		if (pwrite(c->spill_fd, obuf, ob.pos, (off_t)out) != (ssize_t)ob.pos) {
			kerr_errno(e, errno, "zstd: writing the decompressed dump to %s", dir);
			goto fail;
		}
		out += ob.pos;
		in_frame = ret != 0;
	}
	if (in_frame) {
		c->truncated = true;
		snprintf(c->why, sizeof(c->why), "the zstd file is truncated: its data stops "
		    "after compressed byte %llu, decompressed offset 0x%llx",
		    (unsigned long long)c->map_len, (unsigned long long)out);
	}
	c->size = out;
	ZSTD_freeDCtx(dc);
	free(obuf);
	return 0;
fail:
	ZSTD_freeDCtx(dc);
	free(obuf);
	return -1;
}

static const struct block *
zst_block(struct cz *c, uint64_t off, struct kvs_error *e)
{
	size_t lo = 0, hi = c->nframes;
	const struct zframe *f;
	const struct block *b;
	uint8_t *data;
	size_t r;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (c->frames[mid].out <= off)
			lo = mid;
		else
			hi = mid;
	}
	f = &c->frames[lo];
	if ((b = cache_find(c, f->out)) != NULL) {
		c->hits++;
		return b;
	}
	c->misses++;
	data = malloc(f->dsize ? (size_t)f->dsize : 1);
	if (data == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory"), NULL;
	r = ZSTD_decompress(data, (size_t)f->dsize, c->map + f->in, (size_t)f->csize);
	if (ZSTD_isError(r) || r != f->dsize) {
		free(data);
		return kerr_set(e, KVS_E_FORMAT, "zstd frame at compressed byte %llu corrupt: %s",
		    (unsigned long long)f->in, ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short"), NULL;
	}
	return cz_cache_put(c, f->out, data, (size_t)f->dsize);
}

/* ---------------------------------------------------------------- the view */

static int
cz_read(void *priv, uint64_t off, void *buf, size_t len, struct kvs_error *e)
{
	struct cz *c = priv;
	uint8_t *p = buf;

	if (off > c->size || len > c->size - off) {
		uint64_t bad = off > c->size ? off : c->size;
		kerr_set(e, c->truncated ? KVS_E_TRUNCATED : KVS_E_NOTDUMPED,
		    "offset 0x%llx of the decompressed %s stream is past its end (0x%llx bytes)%s%s",
		    (unsigned long long)bad, c->name, (unsigned long long)c->size,
		    c->truncated ? ": " : "", c->truncated ? c->why : "");
		return -1;
	}
	if (c->spill_fd >= 0) {
		while (len > 0) {
			ssize_t k = pread(c->spill_fd, p, len, (off_t)off);
			if (k <= 0)
				return kerr_errno(e, k < 0 ? errno : EIO, "reading the decompressed %s "
				    "copy at 0x%llx", c->name, (unsigned long long)off);
			p += k;
			off += (uint64_t)k;
			len -= (size_t)k;
		}
		return 0;
	}
	while (len > 0) {
		const struct block *b = c->kind == CZ_GZIP ? gz_block(c, off, e) : zst_block(c, off, e);
		size_t in, n;
		if (b == NULL)
			return kerr_push(e, "reading 0x%zx bytes at decompressed offset 0x%llx of the %s "
			    "stream", len, (unsigned long long)off, c->name);
		in = (size_t)(off - b->start);
		n = b->len - in < len ? b->len - in : len;
		if (n == 0)
			return kerr_set(e, KVS_E_FORMAT, "%s stream: empty block at 0x%llx", c->name,
			    (unsigned long long)off);
		memcpy(p, b->data + in, n);
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

static void
cz_free(struct cz *c)
{
	size_t i;

	if (c->inner_priv != NULL)
		c->inner->close(c->inner_priv);
	for (i = 0; i < c->npts; i++)
		free(c->pts[i].win);
	free(c->pts);
	free(c->frames);
	if (c->zs_live)
		inflateEnd(&c->zs);
	if (c->spill_fd >= 0)
		close(c->spill_fd);
	cache_clear(c);
	free(c);
}

static int
cz_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	struct kvs_open_args in;
	struct cz *c;
	size_t i;
	int rc;

	if (a->map == NULL || (!gz_magic(a->map, a->map_len) && !zst_magic(a->map, a->map_len)))
		return KVS_NOTMINE;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	c->spill_fd = -1;
	c->map = a->map;
	c->map_len = a->map_len;
	if (gz_magic(a->map, a->map_len)) {
		c->kind = CZ_GZIP;
		c->name = "gzip";
		rc = gz_build(c, e);
	} else {
		c->kind = CZ_ZSTD;
		c->name = "zstd";
		rc = zst_index(c, e);
		if (rc == 1)
			rc = zst_spill(c, e);
	}
	if (rc != 0) {
		cz_free(c);
		return -1;
	}
	c->view = (struct kvs_view){ .priv = c, .size = c->size, .layer = c->name, .read = cz_read };
	/* The stream's first bytes decompress (a zstd frame is checked only
	 * when read): else the formats would be blamed for the layer's error. */
	{
		uint8_t first[4096];
		size_t n = c->size < sizeof(first) ? (size_t)c->size : sizeof(first);
		if (cz_read(c, 0, first, n, e) != 0) {
			cz_free(c);
			return -1;
		}
	}
	in = *a;
	in.map = NULL;
	in.map_len = 0;
	in.view = &c->view;
	/* The formats of source.c over the stream; raw only when asked for. */
	for (i = 0; i < kvs_source_count; i++) {
		const struct kvs_source_ops *f = kvs_source_table[i];
		if (f == &kvs_source_compressed || (f == &kvs_source_raw && !(a->flags & KVS_O_RAW)))
			continue;
		if ((a->flags & KVS_O_RAW) && f != &kvs_source_raw)
			continue;
		rc = f->open(&in, &c->inner_priv, e);
		if (rc == KVS_NOTMINE)
			continue;
		if (rc != 0) {
			c->inner_priv = NULL;
			kerr_push(e, "%s-compressed %s", c->name, f->name);
			if (c->truncated)
				kerr_push(e, "%s", c->why);
			cz_free(c);
			return -1;
		}
		c->inner = f;
		*priv = c;
		return 0;
	}
	kerr_set(e, KVS_E_FORMAT, "%s-compressed file, but what it holds (0x%llx bytes) is not a "
	    "dump this library reads (no minidump or ELF core header; --raw reads it as a raw "
	    "image)%s%s", c->name, (unsigned long long)c->size, c->truncated ? "; " : "",
	    c->truncated ? c->why : "");
	cz_free(c);
	return -1;
}

static int
cz_read_phys(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct cz *c = priv;

	if (c->inner->read_phys(c->inner_priv, pa, buf, len, e) == 0)
		return 0;
	if (c->truncated)
		kerr_push(e, "%s", c->why);
	return -1;
}

static int
cz_read_virt(void *priv, uint64_t va, void *buf, size_t len, struct kvs_error *e)
{
	struct cz *c = priv;

	if (c->inner->read_virt == NULL)
		return kerr_set(e, KVS_E_INVAL, "%s dump has no virtual addresses", c->inner->name);
	if (c->inner->read_virt(c->inner_priv, va, buf, len, e) == 0)
		return 0;
	if (c->truncated)
		kerr_push(e, "%s", c->why);
	return -1;
}

static void
cz_info(void *priv, struct kvs_src_info *out)
{
	struct cz *c = priv;

	c->inner->info(c->inner_priv, out);
	out->cache_hits += c->hits;
	out->cache_misses += c->misses;
}

static uint64_t
cz_dumped_pages(void *priv)
{
	struct cz *c = priv;
	struct kvs_src_info info;

	if (c->inner->dumped_pages != NULL)
		return c->inner->dumped_pages(c->inner_priv);
	c->inner->info(c->inner_priv, &info);
	return info.dumped_pages;
}

static void
cz_close(void *priv)
{
	cz_free(priv);
}

const struct kvs_source_ops kvs_source_compressed = {
	.name = "compressed",
	.open = cz_open,
	.read_phys = cz_read_phys,
	.read_virt = cz_read_virt,
	.info = cz_info,
	.dumped_pages = cz_dumped_pages,
	.close = cz_close,
};