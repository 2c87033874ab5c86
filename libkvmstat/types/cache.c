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
 * Jobs: this file keeps the answers (the store: keys, entries, the hash
 * table; the get/put API), the identity, the directory, the locked and
 * atomic save, and `kvmstat cache`'s listing and clearing; the bytes of
 * the file (format, checksum, parser, writer) are cache_file.c's.
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

#include "cache_internal.h"

/* ------------------------------------------------------------- the store */

void
lc_ent_free(struct lc_ent *e)
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

void
lc_store_clear(struct kvs_lcache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		lc_ent_free(&c->ent[i]);
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
char *
lc_make_key(char q, const char *a, const char *b)
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
bool
lc_store_add(struct kvs_lcache *c, struct lc_ent *e)
{
	if (store_find(c, e->key) != NULL) {
		lc_ent_free(e);
		return true;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 32;
		struct lc_ent *n = realloc(c->ent, nc * sizeof(*n));
		if (n == NULL) {
			lc_ent_free(e);
			return false;
		}
		c->ent = n;
		c->cap = nc;
	}
	if (kvs_htab_add(&c->tab, kvs_fnv1a(e->key), (uint32_t)(c->n + 1)) != 0) {
		lc_ent_free(e);
		return false;
	}
	c->ent[c->n++] = *e;
	if (e->fresh)
		c->nfresh++;
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
				lc_store_clear(c);
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
	if ((e.key = lc_make_key(q, a, b)) == NULL)
		return;
	if (ti == NULL) {
		e.status = 1;
		if ((e.msg = strndup(notfound, LC_MAXSTR)) == NULL) {
			lc_ent_free(&e);
			return;
		}
	} else {
		e.ti = *ti;
		if (ti->type_name == NULL || strlen(ti->type_name) > LC_MAXSTR ||
		    (e.ti.type_name = strdup(ti->type_name)) == NULL) {
			e.ti.type_name = NULL;
			lc_ent_free(&e);
			return;
		}
	}
	(void)lc_store_add(c, &e);
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
	if ((e.key = lc_make_key('L', type, NULL)) == NULL)
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
	(void)lc_store_add(c, &e);
	return;
fail:
	lc_ent_free(&e);
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
	if (!lc_encode(c, &w))
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
	lc_store_clear(c);
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
