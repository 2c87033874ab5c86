/*
 * cache.c - the layout cache: answers to type questions, kept on disk per
 * kernel file, so that a later run answers them without BTF or DWARF.
 *
 * Design story.  Opening Debian 12's vmlinux types costs 70 ms through
 * libbpf and about a second through DWARF; a run of `kvmstat type` or a
 * walker asks a few dozen questions whose answers never change for that
 * file.  So each answer the handle gets from the kernel's own types
 * (core/kvs.c: type questions, members lists; module types are never
 * cached) is kept here, and written on kvs_close to
 * $XDG_CACHE_HOME/kvmstat/<id>.kvc (default ~/.cache/kvmstat).  The next
 * handle on the same file reads that file and answers from it; libbpf and
 * libdwarf are not even initialised unless a question is missing, which
 * is then asked, answered, and added.
 *
 * Identity: the library's own build-id (answers of one build are not
 * served by another: a fix in dwarf.c must show), the kernel's
 * NT_GNU_BUILD_ID note (and its kernel.debug's when types come from one), or, without one, the file's size, mtime and a hash
 * of its whole content (a fixture rebuilt in place within one mtime tick
 * must not pass for the old one); plus which types answer ("btf" first, or
 * "dwarf" under KVS_TYPES=dwarf: their type_name spellings may differ) and
 * the format version.  The file's name is a hash of that identity, and the
 * file holds the identity itself: a file whose identity differs (a hash
 * collision, a rebuilt kernel) is not used and is rewritten.
 *
 * Never a wrong answer: the file carries an FNV-1a 64 checksum of
 * everything after its header; kvs_lcache_parse checks it, then decodes
 * every record against its own bounds and the file's end (lengths, enum
 * values, string lengths); anything off and the whole file is ignored,
 * with one warning (stderr, or the handle's kvs_set_notify), and rebuilt
 * from the kernel's types.
 *
 * Writers: kvs_close takes an exclusive flock on <id>.lock, re-reads the
 * file (another process may have added answers since), merges, writes
 * <id>.kvc.<pid>.tmp and renames it over: readers never see a partial file,
 * and two writers lose nothing.  A directory that cannot be written costs
 * one warning; the answers are still right, just not kept.
 *
 * Format (little-endian): header "KVSLC001", u32 header size (32), u32
 * identity length, u32 record count, u32 reserved, u64 checksum; the
 * identity bytes; then records: u8 question ('T' type, 'M' member, 'V'
 * variable, 'L' members list), u8 status (0 found, 1 not found), u16 0,
 * u32 record length; string a, string b (u16 length + bytes; 0xffff =
 * none); found T/M/V: typeinfo (offset, size, count, elem_size: u64;
 * kind, elem_kind, bit_size, bit_offset: u32; type_name string); found L:
 * u32 count, then per member: name string, offset, bit_offset, size: u64;
 * bit_size, kind, depth: u32; type_name string; not found: the message.
 */
#include <gelf.h>
#include <libelf.h>

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"
#include "kvs_private.h"

#define LC_MAGIC "KVSLC001"
#define LC_HDR 32u
#define LC_NONE 0xffffu
#define LC_MAXSTR 4096u

struct lc_ent {
	char *key;                    /* question letter, a, '\x1f', b */
	uint8_t q, status;
	struct kvs_typeinfo ti;       /* type_name owned */
	char *msg;                    /* not found: the message */
	struct kvs_member_info *mem;  /* L: names and type_names owned */
	size_t nmem;
	bool fresh;                   /* not yet on disk */
};

struct kvs_lcache {
	char *dir, *path, *ident;
	struct lc_ent *ent;
	size_t n, cap;
	struct kvs_htab tab;
	size_t nfresh;
	bool warned;
	const struct kvs_notify *note;   /* the handle's */
};

/* ------------------------------------------------------------- the store */

static uint64_t
fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}
#define FNV0 0xcbf29ce484222325ULL

static void
ent_free(struct lc_ent *e)
{
	size_t i;

	free(e->key);
	free((char *)e->ti.type_name);
	free(e->msg);
	for (i = 0; i < e->nmem; i++) {
		free((char *)e->mem[i].name);
		free((char *)e->mem[i].type_name);
	}
	free(e->mem);
}

static void
store_clear(struct kvs_lcache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		ent_free(&c->ent[i]);
	free(c->ent);
	c->ent = NULL;
	c->n = c->cap = c->nfresh = 0;
	kvs_htab_free(&c->tab);
}

/* The key of a question in buf (cap bytes) when it fits, else malloc'ed
 * (the caller frees what is not buf); NULL on ENOMEM, or for a name holding
 * the separator, which is then never cached.  A lookup that fits allocates
 * nothing: a refresh asks its layout every time. */
static char *
make_key_in(char *buf, size_t cap, char q, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b != NULL ? strlen(b) : 0;
	char *k;

	if (memchr(a, 0x1f, la) != NULL || (b != NULL && memchr(b, 0x1f, lb)))
		return NULL;
	if (la > LC_MAXSTR || lb > LC_MAXSTR)
		return NULL;
	if (la + lb + 3 <= cap)
		k = buf;
	else if ((k = malloc(la + lb + 3)) == NULL)
		return NULL;
	k[0] = q;
	memcpy(k + 1, a, la);
	k[1 + la] = 0x1f;
	memcpy(k + 2 + la, b != NULL ? b : "", lb);
	k[2 + la + lb] = '\0';
	return k;
}

/* The key, malloc'ed (an entry keeps it). */
static char *
make_key(char q, const char *a, const char *b)
{
	return make_key_in(NULL, 0, q, a, b);
}

static struct lc_ent *
store_find(const struct kvs_lcache *c, const char *key)
{
	uint32_t v = kvs_htab_find_str(&c->tab, key, c->ent, sizeof(*c->ent),
	    offsetof(struct lc_ent, key));

	return v != 0 ? &c->ent[v - 1] : NULL;
}

/* Take e (its allocations) into the store; a key already there keeps its
 * entry and e is freed.  false: ENOMEM (e freed). */
static bool
store_add(struct kvs_lcache *c, struct lc_ent *e)
{
	if (store_find(c, e->key) != NULL) {
		ent_free(e);
		return true;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 32;
		struct lc_ent *n = realloc(c->ent, nc * sizeof(*n));
		if (n == NULL) {
			ent_free(e);
			return false;
		}
		c->ent = n;
		c->cap = nc;
	}
	if (kvs_htab_add(&c->tab, kvs_fnv1a(e->key), (uint32_t)(c->n + 1)) != 0) {
		ent_free(e);
		return false;
	}
	c->ent[c->n++] = *e;
	if (e->fresh)
		c->nfresh++;
	return true;
}

/* ------------------------------------------------------------- decoding */

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t
rd_u(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A string (malloc'ed, NUL-terminated); *none for the 0xffff marker. */
static char *
rd_str(struct rd *r, bool *none)
{
	uint64_t n = rd_u(r, 2);
	char *s;

	*none = false;
	if (r->bad)
		return NULL;
	if (n == LC_NONE) {
		*none = true;
		return NULL;
	}
	if (n > LC_MAXSTR || (uint64_t)(r->end - r->p) < n ||
	    memchr(r->p, 0, n) != NULL) {
		r->bad = true;
		return NULL;
	}
	if ((s = malloc(n + 1)) == NULL) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	return s;
}

static bool
kind_ok(uint64_t k)
{
	return k <= KVS_KIND_VOID;
}

/* One record at r into e; false: malformed. */
static bool
rd_record(struct rd *rec, struct lc_ent *e)
{
	char *a, *b;
	bool none;
	uint64_t q = rd_u(rec, 1), st = rd_u(rec, 1), z = rd_u(rec, 2);

	memset(e, 0, sizeof(*e));
	(void)rd_u(rec, 4); /* the record length, checked by the caller */
	if (rec->bad || z != 0 || (q != 'T' && q != 'M' && q != 'V' &&
	    q != 'L') || st > 1)
		return false;
	e->q = (uint8_t)q;
	e->status = (uint8_t)st;
	a = rd_str(rec, &none);
	if (a == NULL)
		return false;
	b = rd_str(rec, &none);
	if (rec->bad || (b == NULL) != (q != 'M')) {
		free(a);
		free(b);
		return false;
	}
	e->key = make_key((char)q, a, b);
	free(a);
	free(b);
	if (e->key == NULL)
		return false;
	if (st == 1) {
		if ((e->msg = rd_str(rec, &none)) == NULL)
			return false;
	} else if (q != 'L') {
		struct kvs_typeinfo *ti = &e->ti;
		uint64_t k, ek;
		ti->offset = rd_u(rec, 8);
		ti->size = rd_u(rec, 8);
		ti->count = rd_u(rec, 8);
		ti->elem_size = rd_u(rec, 8);
		k = rd_u(rec, 4);
		ek = rd_u(rec, 4);
		ti->bit_size = (unsigned)rd_u(rec, 4);
		ti->bit_offset = (unsigned)rd_u(rec, 4);
		if (rec->bad || !kind_ok(k) || !kind_ok(ek) || ti->bit_size > 64 ||
		    ti->bit_offset > 7)
			return false;
		ti->kind = (kvs_kind_t)k;
		ti->elem_kind = (kvs_kind_t)ek;
		if ((ti->type_name = rd_str(rec, &none)) == NULL)
			return false;
	} else {
		uint64_t n = rd_u(rec, 4), i;
		/* each member takes at least 40 bytes: bounds the allocation */
		if (rec->bad || n > (uint64_t)(rec->end - rec->p) / 40 + 1)
			return false;
		if (n > 0 && (e->mem = calloc(n, sizeof(*e->mem))) == NULL)
			return false;
		for (i = 0; i < n; i++) {
			struct kvs_member_info *m = &e->mem[i];
			uint64_t k;
			e->nmem = i + 1;
			m->name = rd_str(rec, &none);
			if (m->name == NULL && !none)
				return false;
			m->offset = rd_u(rec, 8);
			m->bit_offset = rd_u(rec, 8);
			m->size = rd_u(rec, 8);
			m->bit_size = (unsigned)rd_u(rec, 4);
			k = rd_u(rec, 4);
			m->depth = (unsigned)rd_u(rec, 4);
			if (rec->bad || !kind_ok(k) || m->bit_size > 64 ||
			    m->depth > 64 || m->offset != m->bit_offset / 8)
				return false;
			m->kind = (kvs_kind_t)k;
			if ((m->type_name = rd_str(rec, &none)) == NULL)
				return false;
		}
	}
	return !rec->bad && rec->p == rec->end;
}

/*
 * Parse a cache file's bytes into c (which may hold entries: those of the
 * file are added where c has none).  want: the identity the file must
 * have, or NULL for any.  0, or -1 with why set (the store is left as it
 * was before the call when the file is bad: records are added only once all
 * have decoded).  The one place that reads cache bytes.
 */
static int
lc_parse(struct kvs_lcache *c, const uint8_t *buf, size_t len,
    const char *want, char **ident_out, unsigned *nrec_out, const char **why)
{
	struct rd r = { buf, buf + len, false };
	uint64_t hlen, ilen, nrec, sum, i;
	struct lc_ent *tmp = NULL;
	size_t ntmp = 0;
	int rc = -1;

	if (ident_out != NULL)
		*ident_out = NULL;
	if (len < LC_HDR || memcmp(buf, LC_MAGIC, 8) != 0) {
		*why = "not a kvmstat layout cache (bad magic)";
		return -1;
	}
	r.p += 8;
	hlen = rd_u(&r, 4);
	ilen = rd_u(&r, 4);
	nrec = rd_u(&r, 4);
	(void)rd_u(&r, 4);
	sum = rd_u(&r, 8);
	if (hlen != LC_HDR || ilen == 0 || ilen > LC_MAXSTR || ilen > len - LC_HDR) {
		*why = "bad header";
		return -1;
	}
	if (fnv_bytes(FNV0, buf + LC_HDR, len - LC_HDR) != sum) {
		*why = "checksum mismatch";
		return -1;
	}
	if (memchr(buf + LC_HDR, 0, ilen) != NULL) {
		*why = "bad identity";
		return -1;
	}
	if (want != NULL && (strlen(want) != ilen ||
	    memcmp(want, buf + LC_HDR, ilen) != 0)) {
		*why = "made for another kernel file";
		return -1;
	}
	r.p = buf + LC_HDR + ilen;
	/* a record takes at least 12 bytes */
	if (nrec > (len - LC_HDR - ilen) / 12) {
		*why = "bad record count";
		return -1;
	}
	if (nrec > 0 && (tmp = calloc(nrec, sizeof(*tmp))) == NULL) {
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < nrec; i++) {
		struct rd rec;
		uint64_t rl;
		const uint8_t *start = r.p;

		if ((size_t)(r.end - r.p) < 8) {
			*why = "truncated record";
			goto out;
		}
		rl = (uint64_t)start[4] | (uint64_t)start[5] << 8 |
		    (uint64_t)start[6] << 16 | (uint64_t)start[7] << 24;
		if (rl < 12 || rl > (uint64_t)(r.end - r.p)) {
			*why = "bad record length";
			goto out;
		}
		rec.p = start;
		rec.end = start + rl;
		rec.bad = false;
		if (!rd_record(&rec, &tmp[ntmp])) {
			ent_free(&tmp[ntmp]);
			*why = "bad record";
			goto out;
		}
		ntmp++;
		r.p = start + rl;
	}
	if (r.p != r.end) {
		*why = "trailing bytes";
		goto out;
	}
	for (i = 0; i < ntmp; i++) {
		if (c == NULL)
			ent_free(&tmp[i]);
		else if (!store_add(c, &tmp[i])) {
			uint64_t j;
			for (j = i + 1; j < ntmp; j++)
				ent_free(&tmp[j]);
			free(tmp);
			*why = "out of memory";
			return -1;
		}
	}
	ntmp = 0;
	if (nrec_out != NULL)
		*nrec_out = (unsigned)nrec;
	if (ident_out != NULL)
		*ident_out = strndup((const char *)buf + LC_HDR, ilen);
	rc = 0;
out:
	for (i = 0; i < ntmp; i++)
		ent_free(&tmp[i]);
	free(tmp);
	return rc;
}

/* For the fuzz helper and tests: 0 if buf is a cache file this library
 * would use (every record decoded), -1 otherwise. */
int
kvs_lcache_parse(const void *buf, size_t len)
{
	struct kvs_lcache c;
	const char *why = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = lc_parse(&c, buf, len, NULL, NULL, NULL, &why);
	store_clear(&c);
	return rc;
}

/* ------------------------------------------------------------- encoding */

struct wr {
	uint8_t *p;
	size_t n, cap;
	bool nomem;
};

static void
wr_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->nomem)
		return;
	if (w->n + n > w->cap) {
		size_t nc = w->cap ? w->cap : 4096;
		uint8_t *b;
		while (nc < w->n + n)
			nc *= 2;
		if ((b = realloc(w->p, nc)) == NULL) {
			w->nomem = true;
			return;
		}
		w->p = b;
		w->cap = nc;
	}
	memcpy(w->p + w->n, p, n);
	w->n += n;
}

static void
wr_u(struct wr *w, uint64_t v, unsigned n)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wr_bytes(w, b, n);
}

static void
wr_str(struct wr *w, const char *s)
{
	size_t n;

	if (s == NULL) {
		wr_u(w, LC_NONE, 2);
		return;
	}
	n = strlen(s);
	if (n > LC_MAXSTR)
		n = LC_MAXSTR; /* never: keys and names longer are not cached */
	wr_u(w, n, 2);
	wr_bytes(w, s, n);
}

static void
wr_record(struct wr *w, const struct lc_ent *e)
{
	size_t start = w->n, i;
	const char *sep = strchr(e->key + 1, 0x1f);
	char *a = strndup(e->key + 1, (size_t)(sep - e->key - 1));

	if (a == NULL) {
		w->nomem = true;
		return;
	}
	wr_u(w, e->q, 1);
	wr_u(w, e->status, 1);
	wr_u(w, 0, 2);
	wr_u(w, 0, 4); /* length, patched below */
	wr_str(w, a);
	wr_str(w, e->q == 'M' ? sep + 1 : NULL);
	free(a);
	if (e->status != 0)
		wr_str(w, e->msg);
	else if (e->q != 'L') {
		wr_u(w, e->ti.offset, 8);
		wr_u(w, e->ti.size, 8);
		wr_u(w, e->ti.count, 8);
		wr_u(w, e->ti.elem_size, 8);
		wr_u(w, (uint64_t)e->ti.kind, 4);
		wr_u(w, (uint64_t)e->ti.elem_kind, 4);
		wr_u(w, e->ti.bit_size, 4);
		wr_u(w, e->ti.bit_offset, 4);
		wr_str(w, e->ti.type_name);
	} else {
		wr_u(w, e->nmem, 4);
		for (i = 0; i < e->nmem; i++) {
			const struct kvs_member_info *m = &e->mem[i];
			wr_str(w, m->name);
			wr_u(w, m->offset, 8);
			wr_u(w, m->bit_offset, 8);
			wr_u(w, m->size, 8);
			wr_u(w, m->bit_size, 4);
			wr_u(w, (uint64_t)m->kind, 4);
			wr_u(w, m->depth, 4);
			wr_str(w, m->type_name);
		}
	}
	if (!w->nomem) {
		uint64_t len = w->n - start;
		for (i = 0; i < 4; i++)
			w->p[start + 4 + i] = (uint8_t)(len >> (8 * i));
	}
}

/* The whole file for c's entries. */
static bool
encode(const struct kvs_lcache *c, struct wr *w)
{
	size_t i, il = strlen(c->ident);

	wr_bytes(w, LC_MAGIC, 8);
	wr_u(w, LC_HDR, 4);
	wr_u(w, il, 4);
	wr_u(w, c->n, 4);
	wr_u(w, 0, 4);
	wr_u(w, 0, 8); /* checksum, patched below */
	wr_bytes(w, c->ident, il);
	for (i = 0; i < c->n; i++)
		wr_record(w, &c->ent[i]);
	if (w->nomem)
		return false;
	{
		uint64_t sum = fnv_bytes(FNV0, w->p + LC_HDR, w->n - LC_HDR);
		for (i = 0; i < 8; i++)
			w->p[24 + i] = (uint8_t)(sum >> (8 * i));
	}
	return true;
}

/* ------------------------------------------------------------ identity */

/* The directory: $XDG_CACHE_HOME/kvmstat or ~/.cache/kvmstat; NULL when
 * neither variable is set (or ENOMEM). */
static char *
cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	char *d = NULL;

	if (x != NULL && x[0] == '/') {
		if (asprintf(&d, "%s/kvmstat", x) < 0)
			d = NULL;
	} else if (h != NULL && h[0] == '/') {
		if (asprintf(&d, "%s/.cache/kvmstat", h) < 0)
			d = NULL;
	}
	return d;
}

int
kvs_cache_dir(char *buf, size_t len)
{
	char *d = cache_dir();
	int rc = -1;

	if (d != NULL && strlen(d) < len) {
		strcpy(buf, d);
		rc = 0;
	}
	free(d);
	return rc;
}

/* "buildid:<hex>" of elf, or of the file when it has none: "file:<size>:
 * <mtime>:<hash of the first and last 64 KiB>".  Appended to out. */
static bool
file_id(Elf *elf, int fd, char *out, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t o = strlen(out);

	while (elf != NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const uint8_t *id = (const uint8_t *)d->d_buf + doff;
			size_t i;
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) != 0 ||
			    nh.n_descsz == 0 || nh.n_descsz > 64)
				continue;
			o += (size_t)snprintf(out + o, len - o, "buildid:");
			for (i = 0; i < nh.n_descsz && o + 3 < len; i++)
				o += (size_t)snprintf(out + o, len - o, "%02x", id[i]);
			return i == nh.n_descsz;
		}
	}
	{
		/* no build-id: the whole content, 8 bytes at a time */
		struct stat st;
		static const size_t chunk = 1u << 20;
		uint8_t *buf = malloc(chunk);
		uint64_t h = FNV0, w;
		off_t at = 0;
		ssize_t r = 0;

		if (buf == NULL || fstat(fd, &st) != 0) {
			free(buf);
			return false;
		}
		while (at < st.st_size && (r = pread(fd, buf, chunk, at)) > 0) {
			ssize_t i;
			for (i = 0; i + 8 <= r; i += 8) {
				memcpy(&w, buf + i, 8);
				h = (h ^ w) * 0x100000001b3ULL;
				h ^= h >> 29;
			}
			h = fnv_bytes(h, buf + i, (size_t)(r - i));
			at += r;
		}
		free(buf);
		if (r < 0 || at != st.st_size)
			return false;
		return snprintf(out + o, len - o, "file:%lld:%lld.%09ld:%016llx",
		    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		    st.st_mtim.tv_nsec, (unsigned long long)h) < (int)(len - o);
	}
}

/* The build-id of the object (program or libkvmstat.so) this code is in:
 * answers made by one build of the library are not served by another, so
 * a fix in dwarf.c or btf.c is never hidden behind an old cache. */
struct selfid {
	uintptr_t me;
	char hex[129];
};

static int
selfid_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct selfid *s = arg;
	bool mine = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		mine = ph->p_type == PT_LOAD && s->me >= a && s->me - a < ph->p_memsz;
	}
	if (!mine)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + 12 <= ph->p_memsz) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + off);
			size_t nsz = (nh->n_namesz + 3) & ~3u, dsz = (nh->n_descsz + 3) & ~3u;
			if (off + 12 + nsz + dsz > ph->p_memsz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + off + 12, "GNU", 4) == 0 && nh->n_descsz <= 64) {
				const uint8_t *id = p + off + 12 + nsz;
				unsigned k;
				for (k = 0; k < nh->n_descsz; k++)
					snprintf(s->hex + 2 * k, 3, "%02x", id[k]);
				return 1;
			}
			off += 12 + nsz + dsz;
		}
	}
	return 1;
}

/* "" when the object has no build-id: then its file's size and mtime. */
static void
self_id(char *out, size_t len)
{
	struct selfid s;
	Dl_info di;
	struct stat st;

	memset(&s, 0, sizeof(s));
	s.me = (uintptr_t)&self_id;
	dl_iterate_phdr(selfid_cb, &s);
	if (s.hex[0] != '\0') {
		snprintf(out, len, "%s", s.hex);
		return;
	}
	if (dladdr((void *)&self_id, &di) != 0 && di.dli_fname != NULL &&
	    stat(di.dli_fname, &st) == 0)
		snprintf(out, len, "%lld.%lld.%09ld", (long long)st.st_size,
		    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		snprintf(out, len, "unknown");
}

static void
warn_once(struct kvs_lcache *c, const char *what, const char *why)
{
	if (c->warned)
		return;
	c->warned = true;
	if (c->note == NULL || !c->note->custom) {
		fprintf(stderr, "libkvmstat: warning: layout cache %s: %s (not used)\n",
		    what, why);
	} else if (c->note->fn != NULL) {
		char msg[KVS_MSG_MAX];
		snprintf(msg, sizeof(msg), "layout cache %s: %s (not used)", what, why);
		c->note->fn(c->note->arg, msg);
	}
}

/* ----------------------------------------------------------- the cache */

struct kvs_lcache *
kvs_lcache_open(Elf *kelf, int kfd, Elf *delf, int dfd, const char *mode,
    const struct kvs_notify *note)
{
	struct kvs_lcache *c = calloc(1, sizeof(*c));
	char ident[1024], lib[160];
	int fd;

	if (c == NULL)
		return NULL;
	c->note = note;
	/* without a full identity there is no cache: never a wrong answer */
	self_id(lib, sizeof(lib));
	snprintf(ident, sizeof(ident), "kvmstat-layouts/1 lib:%s types:%s kernel:",
	    lib, mode);
	if (!file_id(kelf, kfd, ident, sizeof(ident)) || (delf != NULL &&
	    (strncat(ident, " debug:", sizeof(ident) - strlen(ident) - 1) == NULL ||
	    !file_id(delf, dfd, ident, sizeof(ident)))) ||
	    (c->dir = cache_dir()) == NULL || (c->ident = strdup(ident)) == NULL ||
	    asprintf(&c->path, "%s/%016llx.kvc", c->dir,
	    (unsigned long long)kvs_fnv1a(ident)) < 0) {
		c->path = NULL;
		kvs_lcache_close(c, false);
		return NULL;
	}
	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;
		uint8_t *buf = NULL;
		const char *why = "unreadable";

		if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (1 << 30) &&
		    (buf = malloc((size_t)st.st_size)) != NULL &&
		    read(fd, buf, (size_t)st.st_size) == st.st_size) {
			if (lc_parse(c, buf, (size_t)st.st_size, c->ident, NULL, NULL,
			    &why) != 0) {
				store_clear(c);
				if (strcmp(why, "made for another kernel file") != 0)
					warn_once(c, c->path, why);
			}
		} else
			warn_once(c, c->path, why);
		free(buf);
		close(fd);
	} else if (errno != ENOENT)
		warn_once(c, c->path, strerror(errno));
	return c;
}

/* 1 and the answer, or 0 (not cached). */
int
kvs_lcache_get(struct kvs_lcache *c, char q, const char *a, const char *b,
    struct kvs_typeinfo *ti, const char **notfound)
{
	char kb[256], *key = make_key_in(kb, sizeof(kb), q, a, b);
	struct lc_ent *e;

	if (key == NULL)
		return 0;
	e = store_find(c, key);
	if (key != kb)
		free(key);
	if (e == NULL)
		return 0;
	*notfound = e->status != 0 ? e->msg : NULL;
	if (e->status == 0 && ti != NULL)
		*ti = e->ti;
	return 1;
}

/* An answer to keep: ti when found, else the not-found message. */
void
kvs_lcache_put(struct kvs_lcache *c, char q, const char *a, const char *b,
    const struct kvs_typeinfo *ti, const char *notfound)
{
	struct lc_ent e;

	memset(&e, 0, sizeof(e));
	e.q = (uint8_t)q;
	e.fresh = true;
	if ((e.key = make_key(q, a, b)) == NULL)
		return;
	if (ti == NULL) {
		e.status = 1;
		if ((e.msg = strndup(notfound, LC_MAXSTR)) == NULL) {
			ent_free(&e);
			return;
		}
	} else {
		e.ti = *ti;
		if (ti->type_name == NULL || strlen(ti->type_name) > LC_MAXSTR ||
		    (e.ti.type_name = strdup(ti->type_name)) == NULL) {
			e.ti.type_name = NULL;
			ent_free(&e);
			return;
		}
	}
	(void)store_add(c, &e);
}

/* 1 and the list (borrowed until kvs_lcache_close) or the not-found
 * message, or 0 (not cached). */
int
kvs_lcache_members_get(struct kvs_lcache *c, const char *type,
    const struct kvs_member_info **m, size_t *n, const char **notfound)
{
	char kb[256], *key = make_key_in(kb, sizeof(kb), 'L', type, NULL);
	struct lc_ent *e;

	if (key == NULL)
		return 0;
	e = store_find(c, key);
	if (key != kb)
		free(key);
	if (e == NULL)
		return 0;
	*m = e->mem;
	*n = e->nmem;
	*notfound = e->status != 0 ? e->msg : NULL;
	return 1;
}

void
kvs_lcache_members_put(struct kvs_lcache *c, const char *type,
    const struct kvs_member_info *m, size_t n, const char *notfound)
{
	struct lc_ent e;
	size_t i;

	memset(&e, 0, sizeof(e));
	e.q = 'L';
	e.fresh = true;
	if ((e.key = make_key('L', type, NULL)) == NULL)
		return;
	if (notfound != NULL) {
		e.status = 1;
		if ((e.msg = strndup(notfound, LC_MAXSTR)) == NULL)
			goto fail;
	} else if (n > 0) {
		if ((e.mem = calloc(n, sizeof(*e.mem))) == NULL)
			goto fail;
		for (i = 0; i < n; i++) {
			e.mem[i] = m[i];
			e.mem[i].name = NULL;
			e.mem[i].type_name = NULL;
			e.nmem = i + 1;
			if ((m[i].name != NULL && (strlen(m[i].name) > LC_MAXSTR ||
			    (e.mem[i].name = strdup(m[i].name)) == NULL)) ||
			    m[i].type_name == NULL || strlen(m[i].type_name) > LC_MAXSTR ||
			    (e.mem[i].type_name = strdup(m[i].type_name)) == NULL ||
			    m[i].offset != m[i].bit_offset / 8 || m[i].depth > 64 ||
			    m[i].bit_size > 64)
				goto fail;
		}
	}
	(void)store_add(c, &e);
	return;
fail:
	ent_free(&e);
}

/* mkdir -p for the cache directory (0700: layouts say what the user runs). */
static int
make_dir(const char *dir)
{
	char tmp[4096];
	size_t i, n = strlen(dir);

	if (n >= sizeof(tmp))
		return -1;
	memcpy(tmp, dir, n + 1);
	for (i = 1; i <= n; i++)
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char ch = tmp[i];
			tmp[i] = '\0';
			if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
				return -1;
			tmp[i] = ch;
		}
	return 0;
}

/* Write what is new: lock, merge with the file as it is now, write a
 * temporary, rename it over. */
static void
save(struct kvs_lcache *c)
{
	char *lock = NULL, *tmp = NULL;
	int lfd = -1, fd = -1;
	struct wr w = { NULL, 0, 0, false };
	const char *why = NULL;

	if (make_dir(c->dir) != 0) {
		warn_once(c, c->dir, strerror(errno));
		return;
	}
	if (asprintf(&lock, "%s.lock", c->path) < 0 ||
	    asprintf(&tmp, "%s.%ld.tmp", c->path, (long)getpid()) < 0) {
		free(lock);
		return;
	}
	if ((lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(lfd, LOCK_EX) != 0) {
		warn_once(c, lock, strerror(errno));
		goto out;
	}
	/* what other processes added since this one read the file */
	if ((fd = open(c->path, O_RDONLY | O_CLOEXEC)) >= 0) {
		struct stat st;
		uint8_t *buf = NULL;
		if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (1 << 30) &&
		    (buf = malloc((size_t)st.st_size)) != NULL &&
		    read(fd, buf, (size_t)st.st_size) == st.st_size)
			(void)lc_parse(c, buf, (size_t)st.st_size, c->ident, NULL,
			    NULL, &why);
		free(buf);
		close(fd);
	}
	if (!encode(c, &w))
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		warn_once(c, tmp, strerror(errno));
		goto out;
	}
	if (write(fd, w.p, w.n) != (ssize_t)w.n || close(fd) != 0) {
		warn_once(c, tmp, errno ? strerror(errno) : "short write");
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, c->path) != 0) {
		warn_once(c, c->path, strerror(errno));
		unlink(tmp);
	}
out:
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	free(w.p);
	free(lock);
	free(tmp);
}

void
kvs_lcache_close(struct kvs_lcache *c, bool write)
{
	if (c == NULL)
		return;
	if (write && c->nfresh > 0 && c->path != NULL)
		save(c);
	store_clear(c);
	free(c->dir);
	free(c->path);
	free(c->ident);
	free(c);
}

/* ------------------------------------------------ listing and clearing */

int
kvs_cache_list(int (*cb)(void *arg, const struct kvs_cache_file *f), void *arg)
{
	char *dir = cache_dir();
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (dir == NULL)
		return -1;
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return errno == ENOENT ? 0 : -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct kvs_cache_file f;
		size_t nl = strlen(de->d_name);
		struct stat st;
		int fd;

		if (nl < 5 || strcmp(de->d_name + nl - 4, ".kvc") != 0)
			continue;
		memset(&f, 0, sizeof(f));
		snprintf(f.path, sizeof(f.path), "%s/%s", dir, de->d_name);
		if ((fd = open(f.path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) == 0) {
			uint8_t *buf = NULL;
			f.size = (uint64_t)st.st_size;
			if (st.st_size > 0 && st.st_size < (1 << 30) &&
			    (buf = malloc((size_t)st.st_size)) != NULL &&
			    read(fd, buf, (size_t)st.st_size) == st.st_size) {
				char *ident = NULL;
				const char *why = "unreadable";
				f.valid = lc_parse(NULL, buf, (size_t)st.st_size, NULL,
				    &ident, &f.entries, &why) == 0;
				snprintf(f.identity, sizeof(f.identity), "%s",
				    f.valid && ident != NULL ? ident : why);
				free(ident);
			}
			free(buf);
		}
		close(fd);
		rc = cb(arg, &f);
	}
	closedir(d);
	free(dir);
	return rc;
}

int
kvs_cache_clear(unsigned *nremoved)
{
	char *dir = cache_dir();
	DIR *d;
	struct dirent *de;
	unsigned n = 0;
	int rc = 0;

	if (nremoved != NULL)
		*nremoved = 0;
	if (dir == NULL)
		return -1;
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return errno == ENOENT ? 0 : -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name);
		char p[4096];
		if (nl < 5 || (strcmp(de->d_name + nl - 4, ".kvc") != 0 &&
		    strcmp(de->d_name + nl - 5, ".lock") != 0 &&
		    strcmp(de->d_name + nl - 4, ".tmp") != 0))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (unlink(p) != 0)
			rc = -1;
		else if (strcmp(de->d_name + nl - 4, ".kvc") == 0)
			n++;
	}
	closedir(d);
	free(dir);
	if (nremoved != NULL)
		*nremoved = n;
	return rc;
}
