/*
 * source_raw.c - raw physical-memory image: file offset == physical address,
 * or physical address - ADDR for an image opened as FILE@ADDR (a guest's RAM
 * that starts above 0, as arm64's at 0x40000000).
 *
 * The mapping is shared and never cached, so an image another process keeps
 * changing in place (a live fixture, a VM's memory file) is seen as it is
 * now.  The length is the one seen at open: pages appended later are not
 * read, and a writer that shrinks the file under us would make the mapping
 * fault (SIGBUS), which is why live writers update in place.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source.h"

struct raw {
	const uint8_t *map;
	const struct kvs_view *view;    /* under a layer: read through it */
	uint64_t len;       /* readable bytes: the mapping, less what was cut off */
	uint64_t map_len;
	uint64_t start;     /* physical address of the first byte */
	int fd;
};

/*
 * Unless asked for (KVS_O_RAW), raw is what a file no format claimed is
 * taken for.  Memory comes in whole pages, and compressed data is none:
 * such files get their real cause, not an error about page tables.
 */
static int
not_raw(const struct kvs_open_args *a, struct kvs_error *e)
{
	static const struct {
		const char *what, *tool;
		size_t len;
		const uint8_t magic[6];
	} packed[] = {
		{ "gzip", "gunzip", 2, { 0x1f, 0x8b } },
		{ "zstd", "unzstd", 4, { 0x28, 0xb5, 0x2f, 0xfd } },
		{ "xz", "unxz", 6, { 0xfd, '7', 'z', 'X', 'Z', 0 } },
		{ "bzip2", "bunzip2", 3, { 'B', 'Z', 'h' } },
		{ "lz4", "unlz4", 4, { 0x04, 0x22, 0x4d, 0x18 } },
	};
	size_t i;

	for (i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
		if (a->map_len >= packed[i].len && memcmp(a->map, packed[i].magic, packed[i].len) == 0)
			return kerr_set(e, KVS_E_FORMAT, "%s-compressed data, not a dump: "
			    "decompress it first (%s)", packed[i].what, packed[i].tool);
	if (a->map_len % 4096 != 0)
		return kerr_set(e, KVS_E_FORMAT, "no dump format kvmstat reads, and at %llu "
		    "bytes, not whole 4 KiB pages, not a raw "
		    "memory image either (--raw reads it as one regardless)",
		    (unsigned long long)a->map_len);
	return 0;
}

static int
raw_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	struct raw *r;

	if (a->map == NULL && a->view != NULL && a->view->size > 0) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return kerr_set(e, KVS_E_NOMEM, "out of memory");
		r->view = a->view;
		r->len = r->map_len = a->view->size;
		r->start = a->phys_start;
		r->fd = -1;
		*priv = r;
		return 0;
	}
	if (a->map == NULL || a->map_len == 0)
		return kerr_set(e, KVS_E_FORMAT, "raw image must be a non-empty regular file");
	if (!(a->flags & KVS_O_RAW) && not_raw(a, e) != 0)
		return -1;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	r->map = a->map;
	r->len = r->map_len = a->map_len;
	r->start = a->phys_start;
	r->fd = a->fd;
	*priv = r;
	return 0;
}

static int
raw_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct raw *r = priv;

	if (pa < r->start) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx below the image, which starts at "
		    "0x%llx", (unsigned long long)pa, (unsigned long long)r->start);
		kerr_fault(e, pa);
		return -1;
	}
	pa -= r->start;
	if (pa >= r->len || len > r->len - pa) {
		uint64_t bad = pa >= r->len ? pa : r->len;
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx beyond the image (0x%llx bytes%s)",
		    (unsigned long long)(bad + r->start), (unsigned long long)r->len,
		    r->start != 0 ? " from its start" : "");
		kerr_fault(e, bad + r->start);
		return -1;
	}
	if (r->view != NULL)
		return r->view->read(r->view->priv, pa, buf, len, e);
	memcpy(buf, r->map + pa, len);
	return 0;
}

static const void *
raw_map(void *priv, uint64_t pa, size_t len)
{
	struct raw *r = priv;

	if (r->view != NULL || r->map == NULL || pa < r->start)
		return NULL;
	pa -= r->start;
	if (pa >= r->len || len > r->len - pa)
		return NULL;
	return r->map + pa;
}

/*
 * Before each refresh: an image another process rewrites may also have been
 * cut short, and touching mapped pages past its end would raise SIGBUS.  Only
 * what the file still holds is read.  (A file shrinking in the middle of a
 * refresh is not covered.)
 */
static void
raw_refresh(void *priv)
{
	struct raw *r = priv;
	struct stat st;

	if (r->fd >= 0 && fstat(r->fd, &st) == 0 && st.st_size >= 0)
		r->len = (uint64_t)st.st_size < r->map_len ? (uint64_t)st.st_size : r->map_len;
}

static void
raw_info(void *priv, struct kvs_src_info *out)
{
	struct raw *r = priv;

	memset(out, 0, sizeof(*out));
	out->format = "raw";
	out->page_size = 4096;
	out->dumped_pages = r->len / 4096;
	out->source_bytes = r->len;
	out->phys_end = r->len;
}

static void
raw_close(void *priv)
{
	free(priv);
}

const struct kvs_source_ops kvs_source_raw = {
	.name = "raw",
	.open = raw_open,
	.read_phys = raw_read,
	.map_phys = raw_map,
	.info = raw_info,
	.refresh = raw_refresh,
	.close = raw_close,
};
