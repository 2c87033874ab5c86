/*
 * gprof.c - the kernel gprof buffers behind _gmonparam, the gmon.out file
 * kgmon writes from them, and the flat profile (ticks and calls per function)
 * that `kvmstat profile` and kvmtop's profile screen show.
 *
 * The histogram (kcount) has one counter per HISTFRACTION*sizeof(counter)
 * bytes of text; call arcs are hashed by call site: froms[(frompc - lowpc) /
 * (hashfraction * 2)] indexes tos[], whose `link` chains further callees of
 * the same site (tos[0] is a sentinel).  Every size read from the kernel is
 * checked against the text range and against a hard cap before anything is
 * allocated, and every chain is bounded by tolimit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kread.h"
#include "kvmprof.h"

#define GMON_MAX_BYTES (64u << 20)      /* no kernel profile buffer is bigger */
#define GMONVERSION 0x00051879
#define TOS_SIZE 24                     /* selfpc, count, link, pad */

struct arc {
	uint64_t frompc, selfpc;
	int64_t count;
};

struct kvmprof_gmon {
	int state, profrate, histcounter_type;
	uint64_t lowpc, highpc, textsize, hashfraction;
	uint8_t *kcount;
	size_t kcountsize;
	struct arc *arcs;
	size_t narcs;
};

static const char G[] = "struct gmonparam";

static int
field(kvs_t *kd, const uint8_t *buf, size_t len, const char *name, uint64_t *v)
{
	struct kfield f;

	if (kfield(kd, G, name, &f, true) != 0)
		return -1;
	*v = kfield_get(buf, len, &f);
	return 0;
}

static void *
read_buf(kvs_t *kd, uint64_t addr, uint64_t size, const char *what)
{
	void *b;

	if (size == 0)
		return calloc(1, 1);
	if (size > GMON_MAX_BYTES) {
		kerr_set(&kd->err, KVS_E_DATA, "%s size %llu is implausible (over %u bytes)",
		    what, (unsigned long long)size, GMON_MAX_BYTES);
		return NULL;
	}
	b = malloc(size);
	if (b == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "%s: out of memory", what);
		return NULL;
	}
	if (kvs_read(kd, addr, b, size) != 0) {
		kerr_push(&kd->err, "%s at 0x%llx", what, (unsigned long long)addr);
		free(b);
		return NULL;
	}
	return b;
}

/*
 * Counter width.  histcounter_type says it in bits (negative for signed
 * GUPROF counters); kernels without the member, or with 0 there, are read
 * by the type kcount points to in DWARF, then by the historical u_short.
 * Only whole 1/2/4/8-byte counters make sense: anything else is corrupt.
 */
static int
counter_width(kvs_t *kd, const uint8_t *gp, size_t len, int *bits)
{
	struct kvs_typeinfo kt;
	uint64_t v;
	int b = 0;

	if (kvs_has_member(kd, G, "histcounter_type") == 1 &&
	    field(kd, gp, len, "histcounter_type", &v) == 0)
		b = (int)(int32_t)v;
	if (b == 0 && kvs_member(kd, G, "kcount", &kt) == 0 && kt.kind == KVS_KIND_POINTER &&
	    kt.elem_size >= 1 && kt.elem_size <= 8)
		b = (int)kt.elem_size * 8;
	kerr_clear(&kd->err);
	if (b == 0)
		b = 16;
	switch (b) {    /* never negated: the dump may say INT_MIN */
	case -64: case -32: case -16: case -8:
	case 8: case 16: case 32: case 64:
		*bits = b;
		return 0;
	}
	return kerr_set(&kd->err, KVS_E_DATA, "histcounter_type %d is not a counter width "
	    "(8, 16, 32 or 64 bits)", b);
}

kvmprof_gmon_t *
kvmprof_gmon_read(kvs_t *kd)
{
	struct kvs_typeinfo ti;
	kvmprof_gmon_t *g;
	uint64_t addr, v[16];
	uint8_t gp[512];
	uint16_t *froms = NULL;
	uint8_t *tos = NULL;
	uint64_t fromssize, tossize, tolimit, kcount, fromsp, tosp, i;
	size_t cap = 0;

	kerr_clear(&kd->err);
	kvs_tlb_flush(kd);
	if (kvs_symbol(kd, "_gmonparam", &addr, NULL) != 0) {
		kerr_push(&kd->err, "no kernel profiling (a kernel built without GPROF)");
		return NULL;
	}
	if (kvs_type(kd, G, &ti) != 0 || ti.size == 0 || ti.size > sizeof(gp))
		return NULL;
	if (kvs_read(kd, addr, gp, ti.size) != 0) {
		kerr_push(&kd->err, "reading _gmonparam");
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (field(kd, gp, ti.size, "state", &v[0]) || field(kd, gp, ti.size, "kcount", &kcount) ||
	    field(kd, gp, ti.size, "kcountsize", &v[1]) || field(kd, gp, ti.size, "froms", &fromsp) ||
	    field(kd, gp, ti.size, "fromssize", &fromssize) || field(kd, gp, ti.size, "tos", &tosp) ||
	    field(kd, gp, ti.size, "tossize", &tossize) || field(kd, gp, ti.size, "tolimit", &tolimit) ||
	    field(kd, gp, ti.size, "lowpc", &g->lowpc) || field(kd, gp, ti.size, "highpc", &g->highpc) ||
	    field(kd, gp, ti.size, "textsize", &g->textsize) ||
	    field(kd, gp, ti.size, "hashfraction", &g->hashfraction) ||
	    field(kd, gp, ti.size, "profrate", &v[2]))
		goto fail;
	g->state = (int)v[0];
	g->profrate = (int)(int32_t)v[2];
	if (counter_width(kd, gp, ti.size, &g->histcounter_type) != 0)
		goto fail;
	if (g->profrate == 0)
		g->profrate = (int)kread_sym_uint_or(kd, "profhz", 0);
	if (g->highpc < g->lowpc || g->textsize != g->highpc - g->lowpc) {
		kerr_set(&kd->err, KVS_E_DATA, "text range [0x%llx, 0x%llx) and textsize %llu disagree",
		    (unsigned long long)g->lowpc, (unsigned long long)g->highpc,
		    (unsigned long long)g->textsize);
		goto fail;
	}
	if (v[1] > g->textsize) {
		kerr_set(&kd->err, KVS_E_DATA, "kcountsize %llu is larger than the text range (%llu bytes)",
		    (unsigned long long)v[1], (unsigned long long)g->textsize);
		goto fail;
	}
	if (v[1] % (unsigned)(kvmprof_gmon_counter_bits(g) / 8) != 0) {
		kerr_set(&kd->err, KVS_E_DATA, "kcountsize %llu is not a whole number of %d-bit counters",
		    (unsigned long long)v[1], kvmprof_gmon_counter_bits(g));
		goto fail;
	}
	/* tolimit is only sanity-checked (the chains are bounded by tossize),
	 * without multiplying a kernel value that could overflow. */
	if (fromssize > g->textsize || tossize > (uint64_t)(65535 + 1) * TOS_SIZE ||
	    (int64_t)tolimit < 0 || tolimit > tossize / TOS_SIZE + 1 ||
	    g->hashfraction == 0) {
		kerr_set(&kd->err, KVS_E_DATA, "arc tables inconsistent: fromssize %llu, tossize %llu, "
		    "tolimit %lld, hashfraction %llu", (unsigned long long)fromssize,
		    (unsigned long long)tossize, (long long)tolimit, (unsigned long long)g->hashfraction);
		goto fail;
	}
	g->kcountsize = (size_t)v[1];
	if ((g->kcount = read_buf(kd, kcount, v[1], "histogram")) == NULL ||
	    (froms = read_buf(kd, fromsp, fromssize, "call-site table (froms)")) == NULL ||
	    (tos = read_buf(kd, tosp, tossize, "arc table (tos)")) == NULL)
		goto fail;

	/* Arcs: each call site's chain, bounded by the table. */
	uint64_t ntos = tossize / TOS_SIZE;
	for (i = 0; i < fromssize / 2; i++) {
		uint64_t t = froms[i], steps = 0;
		uint64_t frompc = g->lowpc + i * g->hashfraction * 2;

		while (t != 0) {
			struct arc *a;
			if (t >= ntos) {
				kerr_set(&kd->err, KVS_E_DATA, "arc index %llu past the arc table "
				    "(%llu entries) from call site 0x%llx", (unsigned long long)t,
				    (unsigned long long)ntos, (unsigned long long)frompc);
				goto fail;
			}
			if (++steps > ntos) {
				kerr_set(&kd->err, KVS_E_DATA, "arc chain from call site 0x%llx loops",
				    (unsigned long long)frompc);
				goto fail;
			}
			if (g->narcs == cap) {
				struct arc *na;
				cap = cap ? cap * 2 : 64;
				na = realloc(g->arcs, cap * sizeof(*na));
				if (na == NULL)
					goto fail;
				g->arcs = na;
			}
			a = &g->arcs[g->narcs++];
			a->frompc = frompc;
			memcpy(&a->selfpc, tos + t * TOS_SIZE, 8);
			memcpy(&a->count, tos + t * TOS_SIZE + 8, 8);
			uint16_t link;
			memcpy(&link, tos + t * TOS_SIZE + 16, 2);
			t = link;
		}
	}
	free(froms);
	free(tos);
	return g;
fail:
	free(froms);
	free(tos);
	kvmprof_gmon_free(g);
	return NULL;
}

void
kvmprof_gmon_free(kvmprof_gmon_t *g)
{
	if (g == NULL)
		return;
	free(g->kcount);
	free(g->arcs);
	free(g);
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
		if ((s = kvs_symbol_at(kd, pc, &off)) == NULL) {
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

		fn->name = v.s[i].name;
		fn->addr = v.s[i].addr;
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

int
kvmprof_gmon_write(const kvmprof_gmon_t *g, const char *path, int force)
{
	char tmp[4096];
	uint8_t hdr[40];
	int32_t i32;
	size_t i;
	int fd, saved;

	if (!force && access(path, F_OK) == 0) {
		errno = EEXIST;
		return -1;
	}
	/* Not mkstemp: its 0600 would outlive the rename, and kgmon's gmon.out
	 * is an ordinary file created under the user's umask. */
	fd = -1;
	for (unsigned n = 0; fd < 0 && n < 100; n++) {
		static unsigned seq;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
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
		goto fail;
	for (i = 0; i < g->narcs; i++) {
		uint8_t raw[24];
		memcpy(raw, &g->arcs[i].frompc, 8);
		memcpy(raw + 8, &g->arcs[i].selfpc, 8);
		memcpy(raw + 16, &g->arcs[i].count, 8);
		if (write_all(fd, raw, sizeof(raw)) != 0)
			goto fail;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (!force) {
		/* link() fails if the name appeared meanwhile: never clobber. */
		if (link(tmp, path) != 0)
			goto fail;
		unlink(tmp);
		return 0;
	}
	if (rename(tmp, path) != 0)
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
