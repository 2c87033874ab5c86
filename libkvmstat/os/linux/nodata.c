/*
 * nodata.c - what a Linux dump opened without a kernel file still gives when
 * its kallsyms names text only (no CONFIG_KALLSYMS_ALL: Debian's arm64
 * kernels): the routes to the few data the walkers need that do not go
 * through a data symbol.
 *
 *   symbols      VMCOREINFO's SYMBOL(name)=address lines (run-time
 *                addresses), merged into the symbol table by kallsyms.c;
 *   BTF          found in the kernel image by its header (magic 0xeB9F,
 *                version 1, a header length and section offsets that hold
 *                together, a string section opening and closing with NUL,
 *                and a type section that walks type by type to its exact
 *                end) when __start_BTF is not a symbol;
 *   the banner   init_uts_ns (VMCOREINFO names it, and OFFSET of
 *                uts_namespace.name) gives the release and version; the
 *                image holds one line "Linux version RELEASE (...) VERSION"
 *                and a NUL: nothing less is taken;
 *   slab_caches  linux_slab_caches: the symbol, else through the memory
 *                map.  The kmem_cache cache is the one cache whose own
 *                kmem_cache lies on an object slot of one of its own slabs;
 *                its list ring holds every cache (each an object of that
 *                cache) and exactly one element that is none: the list head
 *                in the kernel image, slab_caches itself.  Every link must
 *                be doubly consistent (next's prev is the element);
 *   nr_node_ids  the symbol, else one past the highest node of
 *                node_online_map (VMCOREINFO's SYMBOL(node_online_map)),
 *                else 1.
 * Nothing here has a route to __per_cpu_offset: slub.c then flags the CPUs'
 * slabs unread.  Everything is decided from what the dump has, never from
 * a version.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define SCAN_CHUNK (1u << 20)
#define SCAN_OVERLAP 512u
#define IMAGE_SCAN_MAX (256ULL << 20)
#define EMPTY_CHUNKS_MAX 16             /* 16 MiB of nothing: past the image */
#define BTF_MAX (256u << 20)
#define BTF_HDR_MAX 256u
#define BTF_STR_MAX (16u << 20)
#define BTF_KIND_MAX 19
#define UTS_LEN 65
#define CACHES_MAX 100000
#define CANDIDATES_MAX 64
#define NODES_MAX 1024

/* ------------------------------------------------------------- symbols */

const char *
linux_vi_symbol_next(const char *p, char *name, size_t nlen, uint64_t *addr)
{
	static const char pre[] = "SYMBOL(";

	for (; p != NULL && *p != '\0'; ) {
		const char *eol = strchr(p, '\n'), *close, *end = eol ? eol : p + strlen(p);
		const char *next = eol ? eol + 1 : end;
		char *e;
		if ((size_t)(end - p) > sizeof(pre) - 1 && memcmp(p, pre, sizeof(pre) - 1) == 0 &&
		    (close = memchr(p, ')', (size_t)(end - p))) != NULL && close + 1 < end &&
		    close[1] == '=' && (size_t)(close - p) - (sizeof(pre) - 1) < nlen &&
		    close > p + sizeof(pre) - 1) {
			size_t n = (size_t)(close - p) - (sizeof(pre) - 1);
			char num[24];
			size_t vl = (size_t)(end - close - 2);
			if (vl > 0 && vl < sizeof(num)) {
				memcpy(num, close + 2, vl);
				num[vl] = '\0';
				*addr = strtoull(num, &e, 16);
				if (*e == '\0') {
					memcpy(name, p + sizeof(pre) - 1, n);
					name[n] = '\0';
					return next;
				}
			}
		}
		p = next;
	}
	return NULL;
}

/* --------------------------------------------------------- image scans */

/* The image's run-time start: _stext. */
static int
image_start(kvs_t *kd, uint64_t *va)
{
	if (kvs_symbol(kd, "_stext", va, NULL) == 0)
		return 0;
	return kerr_push(&kd->err, "the kernel image's start (_stext)");
}

/*
 * Every place in the image (from _stext, until EMPTY_CHUNKS_MAX chunks in
 * a row hold no readable page, or IMAGE_SCAN_MAX) where pat occurs, in address order, to take(): 1 stops
 * the scan (found), 0 goes on, -1 fails.  Returns take's 1, 0 if nothing
 * was taken, -1.
 */
static int
image_scan(kvs_t *kd, const void *pat, size_t plen,
    int (*take)(kvs_t *kd, uint64_t va, void *arg), void *arg)
{
	uint64_t start, off;
	uint8_t *buf;
	unsigned empty = 0;
	int rc = 0;

	if (image_start(kd, &start) != 0)
		return -1;
	if ((buf = malloc(SCAN_CHUNK + SCAN_OVERLAP)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (off = 0; off < IMAGE_SCAN_MAX && rc == 0; off += SCAN_CHUNK) {
		size_t have = SCAN_CHUNK + SCAN_OVERLAP;
		const uint8_t *p, *end;
		if (linux_image_read(kd, start + off, buf, have) != 0) {
			/* a filtered dump leaves pages out: read the chunk a
			 * page at a time, its gaps zero; none there ends it */
			size_t pg, got = 0;
			kerr_clear(&kd->err);
			have = SCAN_CHUNK;
			for (pg = 0; pg < SCAN_CHUNK; pg += 4096) {
				if (linux_image_read(kd, start + off + pg, buf + pg, 4096) == 0)
					got++;
				else {
					kerr_clear(&kd->err);
					memset(buf + pg, 0, 4096);
				}
			}
			/* alignment gaps of zero pages (a filter drops them)
			 * lie inside images: only a long run ends the scan */
			if (got == 0 && ++empty >= EMPTY_CHUNKS_MAX)
				break;
			if (got == 0)
				continue;
		}
		empty = 0;
		end = buf + (have < SCAN_CHUNK + plen ? have : SCAN_CHUNK + plen - 1);
		for (p = buf; p < end && (p = memmem(p, (size_t)(end - p), pat, plen)) != NULL; p++) {
			if ((size_t)(p - buf) >= SCAN_CHUNK)
				break;
			if ((rc = take(kd, start + off + (uint64_t)(p - buf), arg)) != 0)
				break;
		}
	}
	free(buf);
	return rc;
}

/* ----------------------------------------------------------------- BTF */

struct btf_found {
	uint64_t va, len;
	unsigned decoys;
};

static uint32_t
le32at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

/* Bytes after a type's 12-byte head (the kinds of BTF as the kernel
 * writes them); -1 for a kind it does not have. */
static int64_t
btf_extra(unsigned kind, unsigned vlen)
{
	switch (kind) {
	case 1: case 14: case 17:             /* INT, VAR, DECL_TAG */
		return 4;
	case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18:
		return 0;                     /* PTR FWD TYPEDEF VOLATILE CONST RESTRICT FUNC FLOAT TYPE_TAG */
	case 3:                               /* ARRAY */
		return 12;
	case 4: case 5: case 15: case 19:     /* STRUCT UNION DATASEC ENUM64 */
		return 12LL * vlen;
	case 6: case 13:                      /* ENUM FUNC_PROTO */
		return 8LL * vlen;
	default:
		return -1;
	}
}

/* Is the BTF at va whole and sound?  1 yes (*len its size), 0 no. */
static int
btf_check(kvs_t *kd, uint64_t va, uint64_t *len)
{
	uint8_t h[24], *b;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
	uint64_t types_end, strs_end, total, pos, ntypes = 0;
	int ok = 0;

	if (linux_image_read(kd, va, h, sizeof(h)) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	hdr_len = le32at(h + 4);
	type_off = le32at(h + 8);
	type_len = le32at(h + 12);
	str_off = le32at(h + 16);
	str_len = le32at(h + 20);
	if (h[0] != 0x9f || h[1] != 0xeb || h[2] != 1 || h[3] != 0 ||
	    hdr_len < 24 || hdr_len > BTF_HDR_MAX || hdr_len % 4 != 0 || type_off % 4 != 0 ||
	    type_len < 12 || str_len < 2 || str_len > BTF_STR_MAX)
		return 0;
	types_end = (uint64_t)type_off + type_len;
	strs_end = (uint64_t)str_off + str_len;
	if (!(types_end <= str_off || strs_end <= type_off))
		return 0;
	total = hdr_len + (types_end > strs_end ? types_end : strs_end);
	if (total > BTF_MAX)
		return 0;
	if ((b = malloc((size_t)total)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (linux_image_read(kd, va, b, (size_t)total) != 0) {
		kerr_clear(&kd->err);
		goto out;
	}
	{
		const uint8_t *t = b + hdr_len + type_off, *s = b + hdr_len + str_off;
		if (s[0] != '\0' || s[str_len - 1] != '\0')
			goto out;
		for (pos = 0; pos + 12 <= type_len; ntypes++) {
			uint32_t name = le32at(t + pos), info = le32at(t + pos + 4);
			int64_t extra = btf_extra((info >> 24) & 0x1f, info & 0xffff);
			if (extra < 0 || name >= str_len || (info & 0x60ff0000u) != 0)
				goto out;
			pos += 12 + (uint64_t)extra;
		}
		ok = pos == type_len && ntypes > 0;
	}
out:
	free(b);
	if (ok)
		*len = total;
	return ok;
}

static int
take_btf(kvs_t *kd, uint64_t va, void *arg)
{
	struct btf_found *f = arg;
	int r = btf_check(kd, va, &f->len);

	if (r == 1)
		f->va = va;
	else if (r == 0)
		f->decoys++;
	return r;
}

int
linux_btf_find(kvs_t *kd, uint64_t *kva, uint64_t *len)
{
	static const uint8_t magic[4] = { 0x9f, 0xeb, 1, 0 };
	struct btf_found f = { 0, 0, 0 };
	int rc = image_scan(kd, magic, sizeof(magic), take_btf, &f);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return kerr_set(&kd->err, KVS_E_NOTYPE, "no __start_BTF symbol, and no sound BTF "
		    "header in the kernel image (%u candidates refused)", f.decoys);
	*kva = f.va;
	*len = f.len;
	return 0;
}

/* -------------------------------------------------------------- banner */

struct banner_want {
	char release[UTS_LEN + 1], version[UTS_LEN + 1];
	char *out;
	size_t outlen;
};

static int
take_banner(kvs_t *kd, uint64_t va, void *arg)
{
	struct banner_want *w = arg;
	char line[512];
	size_t n, rl = strlen(w->release), vl = strlen(w->version);

	size_t len = sizeof(line);

	/* the page after may be left out of the dump: the line's own page */
	if (linux_image_read(kd, va, line, len) != 0) {
		kerr_clear(&kd->err);
		len = 4096 - (size_t)(va & 4095);
		if (len > sizeof(line) || linux_image_read(kd, va, line, len) != 0) {
			kerr_clear(&kd->err);
			return 0;
		}
	}
	line[len - 1] = '\0';
	n = strlen(line);
	/* "Linux version " RELEASE " (" ... ") " VERSION "\n", then its NUL */
	if (n < 14 + rl + 2 + 2 + vl + 1 || line[n - 1] != '\n' ||
	    strchr(line, '\n') != line + n - 1 || memcmp(line + 14 + rl, " (", 2) != 0 ||
	    memcmp(line + n - 1 - vl - 1, " ", 1) != 0 ||
	    memcmp(line + n - 1 - vl, w->version, vl) != 0 || line[n - 1 - vl - 2] != ')')
		return 0;
	snprintf(w->out, w->outlen, "%.*s", (int)(n - 1), line);
	return 1;
}

int
linux_banner_find(kvs_t *kd, char *buf, size_t len)
{
	struct banner_want w;
	char pat[14 + UTS_LEN + 8];
	uint64_t uts, name_off;
	uint8_t u[6 * UTS_LEN];
	int rc;

	if (kvs_symbol(kd, "init_uts_ns", &uts, NULL) != 0 ||
	    !linux_vi_u64(kd, "OFFSET(uts_namespace.name)", 10, &name_off))
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no linux_banner symbol, and no "
		    "init_uts_ns with its name's offset in VMCOREINFO to check a banner by");
	if (kvs_read(kd, uts + name_off, u, sizeof(u)) != 0)
		return kerr_push(&kd->err, "reading init_uts_ns");
	memcpy(w.release, u + 2 * UTS_LEN, UTS_LEN);
	memcpy(w.version, u + 3 * UTS_LEN, UTS_LEN);
	w.release[UTS_LEN] = w.version[UTS_LEN] = '\0';
	if (memcmp(u, "Linux", 6) != 0 || w.release[0] == '\0' || w.version[0] == '\0')
		return kerr_set(&kd->err, KVS_E_DATA, "init_uts_ns holds no Linux name");
	w.out = buf;
	w.outlen = len;
	snprintf(pat, sizeof(pat), "Linux version %s (", w.release);
	rc = image_scan(kd, pat, strlen(pat), take_banner, &w);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no banner for %s %s in the kernel "
		    "image", w.release, w.version);
	return 0;
}

/* --------------------------------------------------------- slab_caches */

/* Is x an object slot of a slab of the cache at `cache` (ca)? */
static bool
is_object_of(kvs_t *kd, struct linux_census *c, const struct slub_cache *ca, uint64_t x)
{
	struct linux_page p;
	uint64_t pfn, start, off;

	if (x < c->mem.page_offset || ((x - c->mem.page_offset) >> 12) >= (1ULL << 32))
		return false;
	pfn = (x - c->mem.page_offset) >> 12;
	if (linux_page_read(kd, c, linux_page_of_pfn(c, pfn), &p) != 0) {
		kerr_clear(&kd->err);
		return false;
	}
	if (!p.slab || p.cache != ca->addr)
		return false;
	start = linux_pfn_va(c, linux_pfn_of_page(c, p.head));
	off = x - start;
	return x >= start && off < (4096ULL << ca->order) && off >= ca->red_left_pad &&
	    ca->size != 0 && (off - ca->red_left_pad) % ca->size == 0;
}

/* The list head of the ring through the kmem_cache cache at kc: 1 found,
 * 0 not this one (why in the handle's error), -1 failed. */
static int
ring_head(kvs_t *kd, struct linux_census *c, uint64_t kc, uint64_t stext, uint64_t *head)
{
	const struct slayout *L = &c->L;
	struct slub_cache ca;
	uint8_t *cb = malloc(L->need);
	uint64_t start = kc + L->list_off, p, found = 0;
	unsigned heads = 0;
	struct kwalk w;
	int rc = 0;

	if (cb == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (slub_cache_read(kd, L, kc, cb, &ca) != 0)
		goto out;
	kwalk_init(&w, CACHES_MAX);
	for (p = start;;) {
		uint64_t lh[2], back;
		if (kwalk_step(kd, &w, p, "slab_caches ring") != 0 ||
		    kvs_read(kd, p, lh, sizeof(lh)) != 0)
			goto out;
		lh[0] = le64toh(lh[0]);
		if (lh[0] == 0 || kread_u64(kd, lh[0] + 8, &back) != 0)
			goto out;
		if (back != p) {
			kerr_set(&kd->err, KVS_E_DATA, "list at 0x%llx: its next's prev is 0x%llx",
			    (unsigned long long)p, (unsigned long long)back);
			goto out;
		}
		p = lh[0];
		if (p == start)
			break;
		if (!is_object_of(kd, c, &ca, p - L->list_off)) {
			heads++;
			found = p;
		}
	}
	if (heads != 1 || found < stext) {
		kerr_set(&kd->err, KVS_E_DATA, "the ring through 0x%llx holds %u elements that "
		    "are no cache%s", (unsigned long long)kc, heads,
		    heads == 1 ? ", outside the kernel image" : "");
		goto out;
	}
	*head = found;
	rc = 1;
out:
	free(cb);
	return rc;
}

static int
slab_caches_by_map(kvs_t *kd, uint64_t *head)
{
	struct linux_census *c = linux_census_map(kd);
	uint64_t stext, last = 0, got = 0;
	size_t i;
	unsigned tried = 0, matched = 0;
	struct slub_cache ca;
	uint8_t *cb;

	if (c == NULL || linux_census_scan(kd, c) != 0 || image_start(kd, &stext) != 0)
		return -1;
	if ((cb = malloc(c->L.need)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (i = 0; i < c->nheads && tried < CANDIDATES_MAX; i++) {
		uint64_t h = 0;
		int r;
		if (c->heads[i].cache == last)
			continue;
		last = c->heads[i].cache;
		if (slub_cache_read(kd, &c->L, last, cb, &ca) != 0) {
			kerr_clear(&kd->err);
			continue;
		}
		if (!is_object_of(kd, c, &ca, last))
			continue;
		tried++;
		if ((r = ring_head(kd, c, last, stext, &h)) < 0) {
			free(cb);
			return -1;
		}
		kerr_clear(&kd->err);
		if (r == 1 && (matched == 0 || h != got)) {
			matched++;
			got = h;
		}
	}
	free(cb);
	if (matched != 1)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no slab_caches symbol, and the memory "
		    "map %s (%u self-hosted caches tried)", matched == 0 ?
		    "shows no kmem_cache cache whose list leads to it" :
		    "leads to more than one list head", tried);
	*head = got;
	return 0;
}

int
linux_slab_caches(kvs_t *kd, uint64_t *head)
{
	if (kvs_symbol(kd, "slab_caches", head, NULL) == 0)
		return 0;
	kerr_clear(&kd->err);
	return slab_caches_by_map(kd, head);
}

/* ---------------------------------------------------------- nr_node_ids */

unsigned
linux_nr_node_ids(kvs_t *kd, unsigned max)
{
	uint64_t a, v, size = 0, words[NODES_MAX / 64];
	struct kvs_typeinfo ti;
	unsigned n = 0, i;

	if (kvs_symbol(kd, "nr_node_ids", &a, NULL) == 0 && kread_uint(kd, a, 4, &v) == 0 &&
	    v >= 1 && v <= max) {
		kerr_clear(&kd->err);
		return (unsigned)v;
	}
	kerr_clear(&kd->err);
	if (kvs_symbol(kd, "node_online_map", &a, NULL) != 0) {
		kerr_clear(&kd->err);
		return 1;
	}
	if (!linux_vi_u64(kd, "SIZE(nodemask_t)", 10, &size)) {
		if (kvs_type(kd, "nodemask_t", &ti) == 0)
			size = ti.size;
	}
	kerr_clear(&kd->err);
	if (size == 0 || size > sizeof(words) || size % 8 != 0 ||
	    kvs_read(kd, a, words, (size_t)size) != 0) {
		kerr_clear(&kd->err);
		return 1;
	}
	for (i = 0; i < size * 8; i++)
		if ((le64toh(words[i / 64]) >> (i % 64)) & 1)
			n = i + 1;
	return n >= 1 && n <= max ? n : 1;
}
