/*
 * gmon.c - a kernel profile, whichever family's buffer it came from: the
 * histogram of pc samples over the kernel text and the call arcs, binned
 * against the kernel's symbols into the flat profile (ticks and calls per
 * function) that `kvmstat profile` and kvmtop's profile screen show, and
 * written out as the gmon.out that kgmon writes and gprof reads.  The
 * families' readers (os/freebsd/gprof.c: _gmonparam; os/linux/prof_buffer.c:
 * prof_buffer) fill struct kvmprof_gmon (profile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvs_private.h"
#include "kvmprof.h"
#include "profile.h"

#define GMONVERSION 0x00051879

kvmprof_gmon_t *
kvmprof_gmon_hist(kvs_t *kd, int state, int profrate, int bits, uint64_t lowpc,
    uint64_t textsize, uint8_t *counts, size_t bytes, bool last_overflow)
{
	kvmprof_gmon_t *g = calloc(1, sizeof(*g));

	if (g == NULL) {
		free(counts);
		kerr_set(&kd->err, KVS_E_NOMEM, "profile: out of memory");
		return NULL;
	}
	g->state = state;
	g->profrate = profrate;
	g->histcounter_type = bits;
	g->lowpc = lowpc;
	g->highpc = lowpc + textsize;
	g->textsize = textsize;
	g->kcount = counts;
	g->kcountsize = bytes;
	g->last_overflow = last_overflow;
	return g;
}

int
kvmprof_gmon_format(const kvmprof_gmon_t *g)
{
	return g->last_overflow ? KVMPROF_FMT_READPROFILE : KVMPROF_FMT_GPROF;
}

void
kvmprof_gmon_free(kvmprof_gmon_t *g)
{
	if (g == NULL)
		return;
	free(g->kcount);
	free(g->arcs);
	kvs_symtab_free(g->syms);
	free(g);
}

void
kvmprof_gmon_set_symbols(kvmprof_gmon_t *g, struct kvs_symtab *st, uint64_t slide)
{
	kvs_symtab_free(g->syms);
	g->syms = st;
	g->slide = slide;
}

/* The symbol a pc lies in: the profile's own table (every text symbol,
 * sizes ignored: a bin goes to the last symbol at or below it, as
 * readprofile bins), else the handle's. */
static const char *
sym_at(const kvmprof_gmon_t *g, kvs_t *kd, uint64_t pc, uint64_t *off)
{
	if (g->syms != NULL)
		return kvs_symtab_at(g->syms, pc - g->slide, off);
	return kvs_symbol_at(kd, pc, off);
}

int kvmprof_gmon_state(const kvmprof_gmon_t *g) { return g->state; }
uint64_t kvmprof_gmon_lowpc(const kvmprof_gmon_t *g) { return g->lowpc; }
uint64_t kvmprof_gmon_highpc(const kvmprof_gmon_t *g) { return g->highpc; }
int kvmprof_gmon_profrate(const kvmprof_gmon_t *g) { return g->profrate; }
int kvmprof_gmon_counter_bits(const kvmprof_gmon_t *g)
{
	return g->histcounter_type < 0 ? -g->histcounter_type : g->histcounter_type;
}
size_t kvmprof_gmon_narcs(const kvmprof_gmon_t *g) { return g->narcs; }

size_t
kvmprof_gmon_nbins(const kvmprof_gmon_t *g)
{
	return g->kcountsize / (size_t)(kvmprof_gmon_counter_bits(g) / 8);
}

uint64_t
kvmprof_gmon_binsize(const kvmprof_gmon_t *g)
{
	size_t n = kvmprof_gmon_nbins(g);
	return n ? g->textsize / n : 0;
}

uint64_t
kvmprof_gmon_bin(const kvmprof_gmon_t *g, size_t i)
{
	unsigned w = (unsigned)kvmprof_gmon_counter_bits(g) / 8, k;
	uint64_t v = 0;

	if (i >= kvmprof_gmon_nbins(g))
		return 0;
	for (k = 0; k < w && k < 8; k++)
		v |= (uint64_t)g->kcount[i * w + k] << (8 * k);
	return v;
}

void
kvmprof_gmon_arc(const kvmprof_gmon_t *g, size_t i, uint64_t *frompc, uint64_t *selfpc,
    int64_t *count)
{
	*frompc = g->arcs[i].frompc;
	*selfpc = g->arcs[i].selfpc;
	*count = g->arcs[i].count;
}

/* ------------------------------------------------------- flat profile */

struct kvmprof_flat {
	struct kvmprof_func *fn;
	size_t n;
	uint64_t total, unknown;
	char *names;                    /* every name, NUL-terminated, back to back */
};

/* A sample before merging: seq keeps the order they were met in, so the
 * name kept for a function is the one its first sample found. */
struct sample {
	const char *name;
	uint64_t addr, ticks, calls;
	size_t seq;
};

struct samples {
	struct sample *s;
	size_t n, cap;
};

static int
add_sample(struct samples *v, const char *name, uint64_t addr, uint64_t ticks, uint64_t calls)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct sample *ns = realloc(v->s, cap * sizeof(*ns));
		if (ns == NULL)
			return -1;
		v->s = ns;
		v->cap = cap;
	}
	v->s[v->n] = (struct sample){ name, addr, ticks, calls, v->n };
	v->n++;
	return 0;
}

static int
cmp_sample_addr(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_func_busy(const void *a, const void *b)
{
	const struct kvmprof_func *x = a, *y = b;
	int c;

	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

kvmprof_flat_t *
kvmprof_gmon_flat(const kvmprof_gmon_t *g, kvs_t *kd)
{
	struct samples v = { NULL, 0, 0 };
	kvmprof_flat_t *f;
	size_t nb = kvmprof_gmon_nbins(g), i, k, namelen = 0;
	uint64_t binsize = kvmprof_gmon_binsize(g);
	char *p;

	kerr_clear(&kd->err);
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		goto nomem;
	/* Ticks: bins are met in address order, so a function's bins follow
	 * one another and share one sample. */
	for (i = 0; i < nb; i++) {
		uint64_t t = kvmprof_gmon_bin(g, i), pc = g->lowpc + i * binsize, off;
		const char *s;

		if (t == 0)
			continue;
		f->total += t;
		if ((g->last_overflow && i == nb - 1) ||
		    (s = sym_at(g, kd, pc, &off)) == NULL) {
			f->unknown += t;
			continue;
		}
		if (v.n > 0 && v.s[v.n - 1].addr == pc - off)
			v.s[v.n - 1].ticks += t;
		else if (add_sample(&v, s, pc - off, t, 0) != 0)
			goto nomem;
	}
	/* Calls: one sample per arc whose callee is a known symbol. */
	for (i = 0; i < g->narcs; i++) {
		uint64_t off;
		const char *s = kvs_symbol_at(kd, g->arcs[i].selfpc, &off);

		if (s != NULL && add_sample(&v, s, g->arcs[i].selfpc - off, 0,
		    (uint64_t)g->arcs[i].count) != 0)
			goto nomem;
	}
	kerr_clear(&kd->err);
	/* Merge the samples of each function. */
	if (v.n > 0)
		qsort(v.s, v.n, sizeof(*v.s), cmp_sample_addr);
	f->fn = calloc(v.n ? v.n : 1, sizeof(*f->fn));
	if (f->fn == NULL)
		goto nomem;
	for (i = 0; i < v.n; i = k) {
		struct kvmprof_func *fn = &f->fn[f->n++];

		uint64_t next;

		fn->name = v.s[i].name;
		fn->addr = v.s[i].addr;
		if (g->syms != NULL ? kvs_symtab_next(g->syms, fn->addr - g->slide, &next) == 0 &&
		    (next += g->slide, true) : kvs_symbol_next(kd, fn->addr, &next) == 0)
			fn->size = next - fn->addr;
		for (k = i; k < v.n && v.s[k].addr == v.s[i].addr; k++) {
			fn->ticks += v.s[k].ticks;
			fn->calls += v.s[k].calls;
		}
		namelen += strlen(fn->name) + 1;
	}
	free(v.s);
	v.s = NULL;
	/* Copy the names: the profile does not borrow from the handle. */
	if ((f->names = malloc(namelen ? namelen : 1)) == NULL)
		goto nomem;
	for (i = 0, p = f->names; i < f->n; i++) {
		size_t len = strlen(f->fn[i].name) + 1;
		memcpy(p, f->fn[i].name, len);
		f->fn[i].name = p;
		p += len;
	}
	if (f->n > 0)
		qsort(f->fn, f->n, sizeof(*f->fn), cmp_func_busy);
	return f;
nomem:
	free(v.s);
	kvmprof_flat_free(f);
	kerr_set(&kd->err, KVS_E_NOMEM, "flat profile: out of memory");
	return NULL;
}

void
kvmprof_flat_free(kvmprof_flat_t *f)
{
	if (f == NULL)
		return;
	free(f->fn);
	free(f->names);
	free(f);
}

size_t kvmprof_flat_count(const kvmprof_flat_t *f) { return f->n; }
uint64_t kvmprof_flat_total(const kvmprof_flat_t *f) { return f->total; }
uint64_t kvmprof_flat_unknown(const kvmprof_flat_t *f) { return f->unknown; }

const struct kvmprof_func *
kvmprof_flat_get(const kvmprof_flat_t *f, size_t i)
{
	return i < f->n ? &f->fn[i] : NULL;
}

static int
write_all(int fd, const void *b, size_t n)
{
	const uint8_t *p = b;

	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The header, histogram and arcs, as kgmon writes them, to fd. */
static int
write_gmon_fd(const kvmprof_gmon_t *g, int fd)
{
	uint8_t hdr[40];
	int32_t i32;
	size_t i;

	/* struct gmonhdr: lpc, hpc, ncnt, version, profrate, histcounter_type, spare[2] */
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, &g->lowpc, 8);
	memcpy(hdr + 8, &g->highpc, 8);
	i32 = (int32_t)(g->kcountsize + sizeof(hdr));
	memcpy(hdr + 16, &i32, 4);
	i32 = GMONVERSION;
	memcpy(hdr + 20, &i32, 4);
	memcpy(hdr + 24, &g->profrate, 4);
	memcpy(hdr + 28, &g->histcounter_type, 4);
	if (write_all(fd, hdr, sizeof(hdr)) != 0 || write_all(fd, g->kcount, g->kcountsize) != 0)
		return -1;
	for (i = 0; i < g->narcs; i++) {
		uint8_t raw[24];
		memcpy(raw, &g->arcs[i].frompc, 8);
		memcpy(raw + 8, &g->arcs[i].selfpc, 8);
		memcpy(raw + 16, &g->arcs[i].count, 8);
		if (write_all(fd, raw, sizeof(raw)) != 0)
			return -1;
	}
	return 0;
}

/*
 * Where path's bytes go: symbolic links followed (as cp does) to the name
 * that is not one, in final, with *st its status (*exists 0 when nothing is
 * there yet).  A link to nothing is ENOENT: neither it nor a file it might
 * name is created.
 */
static int
follow_links(const char *path, char *final, size_t size, struct stat *st, int *exists)
{
	char link[4096], next[4096];
	int hops;

	if ((size_t)snprintf(final, size, "%s", path) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (hops = 0; hops < 40; hops++) {
		ssize_t n;
		const char *slash;

		if (lstat(final, st) != 0) {
			if (errno != ENOENT)
				return -1;
			if (hops > 0)
				return -1;      /* a dangling link: ENOENT */
			*exists = 0;
			return 0;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = 1;
			return 0;
		}
		if ((n = readlink(final, link, sizeof(link) - 1)) < 0)
			return -1;
		link[n] = '\0';
		slash = strrchr(final, '/');
		if (link[0] == '/' || slash == NULL)
			n = snprintf(next, sizeof(next), "%s", link);
		else
			n = snprintf(next, sizeof(next), "%.*s/%s", (int)(slash - final), final,
			    link);
		if (n < 0 || (size_t)n >= sizeof(next) || (size_t)n >= size) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(final, next, (size_t)n + 1);
	}
	errno = ELOOP;
	return -1;
}

/* A FIFO or a character device, written where it is, as cp and dd of= do:
 * opened without O_CREAT, and still that kind of file once open. */
static int
write_in_place(const kvmprof_gmon_t *g, const char *final, const struct stat *st)
{
	struct stat fst;
	int fd, saved;

	if ((fd = open(final, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &fst) != 0 || (fst.st_mode & S_IFMT) != (st->st_mode & S_IFMT) ||
	    fst.st_rdev != st->st_rdev) {
		close(fd);
		errno = EINVAL;       /* replaced by another kind of file meanwhile */
		return -1;
	}
	if (write_gmon_fd(g, fd) != 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int
kvmprof_gmon_write(const kvmprof_gmon_t *g, const char *path, int force)
{
	char final[4096], tmp[4200];
	struct stat st;
	int fd, saved, exists;

	if (path == NULL)
		return write_gmon_fd(g, STDOUT_FILENO);
	if (follow_links(path, final, sizeof(final), &st, &exists) != 0)
		return -1;
	if (exists) {
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
			return write_in_place(g, final, &st);
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			errno = EINVAL;       /* a socket, a block device: never replaced */
			return -1;
		}
		if (!force) {
			errno = EEXIST;
			return -1;
		}
	}
	/* Not mkstemp: its 0600 would outlive the rename, and kgmon's gmon.out
	 * is an ordinary file created under the user's umask.  Beside the file
	 * the link names, so that the rename stays in one file system. */
	fd = -1;
	for (unsigned n = 0; fd < 0 && n < 100; n++) {
		static unsigned seq;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", final, (long)getpid(),
		    __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED)) >= sizeof(tmp)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	/* A replaced file keeps its permissions, as cp leaves them. */
	if (exists && fchmod(fd, st.st_mode & 07777) != 0)
		goto fail;
	if (write_gmon_fd(g, fd) != 0)
		goto fail;
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (!force || !exists) {
		/* link() fails if the name appeared meanwhile: never clobber. */
		if (link(tmp, final) != 0)
			goto fail;
		unlink(tmp);
		return 0;
	}
	/* Still the regular file seen above, not a FIFO or a device put there
	 * meanwhile (rename would replace it). */
	if (lstat(final, &st) == 0 && !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	if (rename(tmp, final) != 0)
		goto fail;
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}
