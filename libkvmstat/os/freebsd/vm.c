/*
 * vm.c - the FreeBSD memory census (census.h): vm_cnt's counters as
 * `vmstat -s` names them (plain integers, or counter(9) per-CPU parts from
 * 12 on), the page queue counts (in vm_cnt, or per domain in vm_dom[] once
 * vm_cnt lost them), top's Mem: line, the totals of malloc(9) and UMA (from
 * the memstat walk), the physical free lists (vm_phys_free_queues) and the
 * vmem(9) arenas.  Every layout comes from the kernel's types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"
#include "census.h"
#include "memstat.h"

#define MAX_DOMAINS 64
#define MAX_ARENAS 4096
#define PQ_INACTIVE 0
#define PQ_ACTIVE 1
#define PQ_LAUNDRY 2

/* vmstat -s's lines in its order: the field, its words. */
static const struct vline {
	const char *key, *text;
} vlines[] = {
	{ "v_swtch", "cpu context switches" }, { "v_intr", "device interrupts" },
	{ "v_soft", "software interrupts" }, { "v_trap", "traps" },
	{ "v_syscall", "system calls" }, { "v_kthreads", "kernel threads created" },
	{ "v_forks", "fork() calls" }, { "v_vforks", "vfork() calls" },
	{ "v_rforks", "rfork() calls" }, { "v_swapin", "swap pager pageins" },
	{ "v_swappgsin", "swap pager pages paged in" }, { "v_swapout", "swap pager pageouts" },
	{ "v_swappgsout", "swap pager pages paged out" }, { "v_vnodein", "vnode pager pageins" },
	{ "v_vnodepgsin", "vnode pager pages paged in" }, { "v_vnodeout", "vnode pager pageouts" },
	{ "v_vnodepgsout", "vnode pager pages paged out" }, { "v_pdwakeups", "page daemon wakeups" },
	{ "v_pdpages", "pages examined by the page daemon" },
	{ "v_pdshortfalls", "clean page reclamation shortfalls" },
	{ "v_reactivated", "pages reactivated by the page daemon" },
	{ "v_cow_faults", "copy-on-write faults" }, { "v_cow_optim", "copy-on-write optimized faults" },
	{ "v_zfod", "zero fill pages zeroed" }, { "v_ozfod", "zero fill pages prezeroed" },
	{ "v_intrans", "intransit blocking page faults" }, { "v_vm_faults", "total VM faults taken" },
	{ "v_io_faults", "page faults requiring I/O" },
	{ "v_kthreadpages", "pages affected by kernel thread creation" },
	{ "v_forkpages", "pages affected by  fork()" }, { "v_vforkpages", "pages affected by vfork()" },
	{ "v_rforkpages", "pages affected by rfork()" }, { "v_tfree", "pages freed" },
	{ "v_dfree", "pages freed by daemon" }, { "v_pfree", "pages freed by exiting processes" },
	{ "v_active_count", "pages active" }, { "v_inactive_count", "pages inactive" },
	{ "v_laundry_count", "pages in the laundry queue" }, { "v_cache_count", "pages cached" },
	{ "v_wire_count", "pages wired down" },
	{ "v_user_wire_count", "virtual user pages wired down" },
	{ "v_free_count", "pages free" }, { "v_page_size", "bytes per page" },
};
#define NVLINES (sizeof(vlines) / sizeof(vlines[0]))

/* The caller's counters: the first cap go there, the rest are counted. */
struct cset {
	struct kvs_counter *c;
	size_t n, cap;
	struct kvs_counter spare;
};

static struct kvs_counter *
cadd(struct cset *s, const char *group, const char *name, const char *key,
    uint64_t value, kvs_unit_t unit)
{
	struct kvs_counter *c = s->n < s->cap ? &s->c[s->n] : &s->spare;

	s->n++;
	memset(c, 0, sizeof(*c));
	c->group = group;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->value = value;
	c->unit = unit;
	return c;
}

/* What the summary keeps on the handle between calls: vm_cnt's bytes and
 * the lists the allocators' totals are refreshed into (an incremental
 * refresh allocates nothing once they hold every entry). */
#define VMMETER_MAX 65536
struct meminfo_memo {
	uint8_t vmmeter[VMMETER_MAX];
	struct memory_type_list *list[2];
};

static void
meminfo_memo_fini(void *p)
{
	struct meminfo_memo *m = p;

	memstat_mtl_free(m->list[0]);
	memstat_mtl_free(m->list[1]);
}

static void
unreadable(struct kvs_counter *c, const char *fmt, const char *what)
{
	c->value = 0;
	c->flags |= KVS_CF_UNREADABLE;
	snprintf(c->note, sizeof(c->note), fmt, what);
}

/* The per-domain queue and free counts of 12+ (vm_dom[]). */
struct domcounts {
	bool have;
	bool ok;                       /* every domain read */
	uint64_t free, active, inactive, laundry;
};

static void
domains_read(kvs_t *kd, struct domcounts *d)
{
	struct kvs_typeinfo dom, pq;
	struct kfield pqs, cnt, fc;
	uint64_t base;
	int nd, i;

	memset(d, 0, sizeof(*d));
	if (kvs_symbol(kd, "vm_dom", &base, NULL) != 0 || kvs_type(kd, "struct vm_domain", &dom) != 0 ||
	    kvs_type(kd, "struct vm_pagequeue", &pq) != 0 ||
	    kfield(kd, "struct vm_domain", "vmd_pagequeues", &pqs, true) != 0 ||
	    kfield(kd, "struct vm_domain", "vmd_free_count", &fc, true) != 0 ||
	    kfield(kd, "struct vm_pagequeue", "pq_cnt", &cnt, true) != 0) {
		kerr_clear(&kd->err);
		return;
	}
	d->have = true;
	d->ok = true;
	nd = (int)kread_sym_uint_or(kd, "vm_ndomains", 1);
	if (nd < 1 || nd > MAX_DOMAINS) {
		d->ok = false;
		return;
	}
	for (i = 0; i < nd; i++) {
		uint64_t a = base + (uint64_t)i * dom.size, v;
		uint64_t q = a + pqs.off;
		if (kread_uint(kd, a + fc.off, (unsigned)fc.size, &v) != 0)
			goto bad;
		d->free += v;
		if (kread_uint(kd, q + PQ_INACTIVE * pq.size + cnt.off, (unsigned)cnt.size, &v) != 0)
			goto bad;
		d->inactive += (uint32_t)v;
		if (kread_uint(kd, q + PQ_ACTIVE * pq.size + cnt.off, (unsigned)cnt.size, &v) != 0)
			goto bad;
		d->active += (uint32_t)v;
		if (pqs.count > PQ_LAUNDRY) {
			if (kread_uint(kd, q + PQ_LAUNDRY * pq.size + cnt.off, (unsigned)cnt.size, &v) != 0)
				goto bad;
			d->laundry += (uint32_t)v;
		}
	}
	return;
bad:
	kerr_clear(&kd->err);
	d->ok = false;
}

/* The buffer cache's size: bufspace, or the sum of the buffer domains'. */
static int
bufspace_read(kvs_t *kd, uint64_t *out)
{
	struct kvs_typeinfo bd;
	struct kfield f;
	uint64_t base, n, v;

	*out = 0;
	if (kvs_symbol(kd, "bufspace", NULL, NULL) == 0)
		return kread_sym_uint(kd, "bufspace", out);
	kerr_clear(&kd->err);
	if (kvs_symbol(kd, "bdomain", &base, NULL) != 0 || kvs_type(kd, "struct bufdomain", &bd) != 0 ||
	    kfield(kd, "struct bufdomain", "bd_bufspace", &f, true) != 0 ||
	    kread_sym_uint(kd, "buf_domains", &n) != 0)
		return -1;
	if (n > MAX_DOMAINS)
		return kerr_set(&kd->err, KVS_E_DATA, "buf_domains %llu is implausible",
		    (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		if (kread_uint(kd, base + i * bd.size + f.off, (unsigned)f.size, &v) != 0)
			return -1;
		*out += v;
	}
	return 0;
}

/* The totals of malloc(9) and of UMA (a kernel without uma_kegs has no
 * UMA line) from the memstat walks, each into its list on the handle. */
static int
allocators(kvs_t *kd, struct meminfo_memo *m, struct cset *s, int *rc)
{
	static const struct {
		int alloc;
		const char *name, *key;
		int (*walk)(struct memory_type_list *, void *);
	} w[] = {
		{ ALLOCATOR_MALLOC, "malloc(9) in use", "malloc_bytes", memstat_kvm_malloc },
		{ ALLOCATOR_UMA, "UMA in use", "uma_bytes", memstat_kvm_uma },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct memory_type_list *l;
		struct memory_type *mt;
		uint64_t bytes = 0;
		int err;

		if (w[i].alloc == ALLOCATOR_UMA && kvs_symbol(kd, "uma_kegs", NULL, NULL) != 0) {
			kerr_clear(&kd->err);
			continue;
		}
		if (m->list[i] == NULL && (m->list[i] = memstat_mtl_alloc()) == NULL)
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		l = m->list[i];
		err = w[i].walk(l, kd);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			if (memstat_get_allocator(mt) == w[i].alloc && !memstat_get_vanished(mt))
				bytes += memstat_get_bytes(mt);
		struct kvs_counter *c = cadd(s, "allocators", w[i].name, w[i].key, bytes,
		    KVS_UNIT_BYTES);
		if (err != 0) {
			unreadable(c, "the walk failed: %s", kvs_geterr(kd));
			kerr_clear(&kd->err);
			*rc = 1;
		}
	}
	return 0;
}

int
freebsd_meminfo(kvs_t *kd, struct kvs_counter *out, size_t cap, size_t *n)
{
	static const char memo_tag;
	static const char *const doms[] = { "v_free_count", "v_active_count", "v_inactive_count",
		"v_laundry_count" };
	struct cset s = { .c = out, .cap = cap };
	struct meminfo_memo *m;
	struct kvs_typeinfo vt;
	struct kcpus cpus;
	struct domcounts dc;
	uint64_t vm, pbase, val[NVLINES];
	bool have[NVLINES] = { false }, bad[NVLINES] = { false }, vmok;
	const char *why[NVLINES];
	uint8_t *buf;
	const char *vsym = "vm_cnt";
	int rc = 0;
	size_t i;

	*n = 0;
	if (kvs_symbol(kd, vsym, &vm, NULL) != 0) {
		vsym = "cnt";
		if (kvs_symbol(kd, vsym, &vm, NULL) != 0)
			return kerr_set(&kd->err, KVS_E_NOSYMBOL, "this kernel has neither vm_cnt nor cnt");
	}
	if (kvs_type(kd, "struct vmmeter", &vt) != 0)
		return kerr_push(&kd->err, "the type of %s", vsym);
	if (vt.size == 0 || vt.size > VMMETER_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "struct vmmeter of %llu bytes",
		    (unsigned long long)vt.size);
	if ((m = kvs_memo_fini(kd, &memo_tag, sizeof(*m), meminfo_memo_fini)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	buf = m->vmmeter;
	if (kcpus_read(kd, &cpus) != 0 || freebsd_pcpu_base(kd, &pbase) != 0)
		return -1;
	vmok = kvs_read(kd, vm, buf, vt.size) == 0;
	kerr_clear(&kd->err);
	domains_read(kd, &dc);
	for (i = 0; i < NVLINES; i++) {
		struct kfield f;
		val[i] = 0;
		why[i] = "%s's bytes are not in the dump";
		if (kfield(kd, "struct vmmeter", vlines[i].key, &f, false) != 0)
			return -1;
		if (f.present) {
			have[i] = true;
			if (!vmok)
				bad[i] = true;
			else if (f.kind == KVS_KIND_POINTER) {
				if (freebsd_counter_sum(kd, &cpus, pbase, kfield_get(buf, vt.size, &f), &val[i]) != 0) {
					kerr_clear(&kd->err);
					why[i] = "a CPU's counter(9) part of %s is not in the dump";
					bad[i] = true;
				}
			} else
				val[i] = kfield_get(buf, vt.size, &f);
			continue;
		}
		for (size_t k = 0; k < sizeof(doms) / sizeof(doms[0]); k++)
			if (dc.have && strcmp(vlines[i].key, doms[k]) == 0) {
				have[i] = true;
				bad[i] = !dc.ok;
				why[i] = "the page domains (vm_dom) are not in the dump%.0s";
				val[i] = k == 0 ? dc.free : k == 1 ? dc.active : k == 2 ? dc.inactive :
				    dc.laundry;
			}
	}
	uint64_t pagesz = 4096, q[7];
	bool qhave[7] = { false }, qbad[7] = { false };
	static const char *const qname[7] = { "Active", "Inact", "Laundry", "Wired", "Cache",
		"Buf", "Free" };
	static const char *const qkey[7] = { "v_active_count", "v_inactive_count",
		"v_laundry_count", "v_wire_count", "v_cache_count", "bufspace", "v_free_count" };
	for (i = 0; i < NVLINES; i++) {
		if (!have[i])
			continue;
		struct kvs_counter *c = cadd(&s, "vm", vlines[i].text, vlines[i].key, val[i],
		    strcmp(vlines[i].key, "v_page_size") == 0 ? KVS_UNIT_BYTES :
		    strstr(vlines[i].key, "_count") ? KVS_UNIT_PAGES : KVS_UNIT_COUNT);
		if (bad[i]) {
			unreadable(c, why[i], vsym);
			rc = 1;
		}
		if (strcmp(vlines[i].key, "v_page_size") == 0 && !bad[i] && val[i] >= 1024 &&
		    val[i] <= (1u << 24))
			pagesz = val[i];
	}
	/* top's Mem: line, in KiB. */
	for (int k = 0; k < 7; k++) {
		if (k == 5) {
			qhave[k] = true;
			if (bufspace_read(kd, &q[k]) != 0) {
				qbad[k] = true;
				kerr_clear(&kd->err);
			}
			q[k] /= 1024;
			continue;
		}
		for (i = 0; i < NVLINES; i++)
			if (have[i] && strcmp(vlines[i].key, qkey[k]) == 0) {
				qhave[k] = true;
				qbad[k] = bad[i];
				q[k] = val[i] * pagesz / 1024;
			}
	}
	for (int k = 0; k < 7; k++) {
		if (!qhave[k])
			continue;
		struct kvs_counter *c = cadd(&s, "queues", qname[k], qkey[k], q[k], KVS_UNIT_KIB);
		if (qbad[k]) {
			unreadable(c, "%s is not in the dump", k == 5 ? "the buffer cache's size" :
			    "its counter");
			rc = 1;
		}
	}
	if (allocators(kd, m, &s, &rc) != 0)
		return -1;
	*n = s.n;
	return rc;
}

/*
 * The dimensions [MAXMEMDOM][VM_NFREELIST][VM_NFREEPOOL][VM_NFREEORDER] of
 * vm_phys_free_queues.  The types give the element count, the product:
 * amd64 has kept 3 free lists and 13 orders since vm_phys came (7.0); the
 * pools are 3 while the cache pool lived (up to 11), else 2; MAXMEMDOM is
 * a power of two.
 */
static int
array_dims(const struct kvs_typeinfo *var, uint64_t elem, unsigned dims[4])
{
	uint64_t rest;

	if (var->kind != KVS_KIND_ARRAY || elem == 0 || var->count == 0 ||
	    var->count % (3 * 13) != 0)
		return -1;
	rest = var->count / (3 * 13);
	dims[1] = 3;
	dims[3] = 13;
	dims[2] = rest % 3 == 0 ? 3 : 2;
	if (rest % dims[2] != 0)
		return -1;
	rest /= dims[2];
	if (rest == 0 || rest > MAX_DOMAINS || (rest & (rest - 1)) != 0)
		return -1;
	dims[0] = (unsigned)rest;
	return 0;
}

/* Names of amd64's free lists and pools, by index (macros, not types). */
static const char *
freelist_name(int i)
{
	static const char *const n[] = { "DEFAULT", "DMA32", "LOWMEM" };
	return i < 3 ? n[i] : NULL;
}

int
freebsd_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n)
{
	struct kvs_typeinfo var, fl;
	struct kfield lcnt;
	uint64_t q0, ndom, nfl;
	unsigned dims[4];
	int rc = 0;

	if (kvs_symbol(kd, "vm_phys_free_queues", &q0, NULL) != 0)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL,
		    "this kernel has no vm_phys_free_queues (FreeBSD 7.0 and later)");
	if (kvs_variable(kd, "vm_phys_free_queues", &var) != 0 ||
	    kvs_type(kd, "struct vm_freelist", &fl) != 0 ||
	    kfield(kd, "struct vm_freelist", "lcnt", &lcnt, true) != 0)
		return kerr_push(&kd->err, "the physical free lists' layout");
	if (array_dims(&var, fl.size, dims) != 0)
		return kerr_set(&kd->err, KVS_E_DATA,
		    "vm_phys_free_queues of %llu lists does not factor as amd64's",
		    (unsigned long long)var.count);
	if (dims[3] > KVS_PZ_ORDERS || dims[2] > KVS_PZ_POOLS || fl.size == 0)
		return kerr_set(&kd->err, KVS_E_DATA, "%u orders or %u pools: more than kvmstat keeps",
		    dims[3], dims[2]);
	ndom = kread_sym_uint_or(kd, "vm_ndomains", 1);
	nfl = kread_sym_uint_or(kd, "vm_nfreelists", dims[1]);
	if (ndom < 1 || ndom > dims[0] || nfl > dims[1])
		return kerr_set(&kd->err, KVS_E_DATA, "%llu domains or %llu free lists: implausible",
		    (unsigned long long)ndom, (unsigned long long)nfl);
	struct kvs_pzone *z = calloc(ndom * nfl + 1, sizeof(*z));
	size_t bl = (size_t)dims[2] * dims[3] * fl.size;
	uint8_t *b = malloc(bl);
	if (z == NULL || b == NULL) {
		free(z);
		free(b);
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	}
	size_t k = 0;
	for (uint64_t d = 0; d < ndom; d++)
		for (uint64_t f = 0; f < nfl; f++, k++) {
			struct kvs_pzone *p = &z[k];
			p->node = (int)d;
			p->index = (int)f;
			if (freelist_name((int)f))
				snprintf(p->name, sizeof(p->name), "%s", freelist_name((int)f));
			else
				snprintf(p->name, sizeof(p->name), "%llu", (unsigned long long)f);
			p->kaddr = q0 + (d * dims[1] + f) * bl;
			p->populated = 1;
			p->norders = dims[3];
			p->npools = dims[2];
			p->unreclaimable = -1;
			for (unsigned pl = 0; pl < dims[2]; pl++)
				snprintf(p->pool_name[pl], sizeof(p->pool_name[pl]), "%s",
				    pl == 0 ? "DEFAULT" : pl == 1 ? "DIRECT" : pl == 2 ? "CACHE" : "?");
			if (kvs_read(kd, p->kaddr, b, bl) != 0) {
				p->flags |= KVS_CF_UNREADABLE;
				snprintf(p->note, sizeof(p->note), "free list %llu of domain %llu: %s",
				    (unsigned long long)f, (unsigned long long)d, kvs_geterr(kd));
				kerr_clear(&kd->err);
				rc = 1;
				continue;
			}
			for (unsigned pl = 0; pl < dims[2]; pl++)
				for (unsigned o = 0; o < dims[3]; o++) {
					uint64_t v = (uint32_t)kfield_get(b + ((size_t)pl * dims[3] + o) *
					    fl.size, fl.size, &lcnt);
					p->pool_free[pl][o] = v;
					p->free[o] += v;
				}
		}
	free(b);
	*out = z;
	*n = k;
	return rc;
}

int
freebsd_arenas(kvs_t *kd, struct kvs_arena **out, size_t *n)
{
	static const char *const vars[] = { "kernel_arena", "kmem_arena" };
	struct kvs_typeinfo vt;
	struct kfield name, next, qmask, size, inuse;
	struct kwalk w;
	uint64_t head, p;
	size_t cap = 16, k = 0;
	int rc = 0;

	if (kvs_type(kd, "struct vmem", &vt) != 0)
		return kerr_set(&kd->err, KVS_E_NOTYPE, "this kernel has no vmem(9) (FreeBSD 10 and later)");
	if (kfield(kd, "struct vmem", "vm_name", &name, true) != 0 ||
	    kfield(kd, "struct vmem", "vm_alllist.le_next", &next, true) != 0 ||
	    kfield(kd, "struct vmem", "vm_quantum_mask", &qmask, true) != 0 ||
	    kfield(kd, "struct vmem", "vm_size", &size, true) != 0 ||
	    kfield(kd, "struct vmem", "vm_inuse", &inuse, true) != 0)
		return kerr_push(&kd->err, "struct vmem's layout");
	if (vt.size > 65536)
		return kerr_set(&kd->err, KVS_E_DATA, "struct vmem of %llu bytes",
		    (unsigned long long)vt.size);
	struct kvs_arena *a = calloc(cap, sizeof(*a));
	uint8_t *b = malloc(vt.size);
	if (a == NULL || b == NULL)
		goto nomem;
	/* Every arena is on vmem_list; without it, the named ones. */
	uint64_t list[2];
	size_t nl = 0;
	bool walk = kread_sym_uint(kd, "vmem_list", &head) == 0;
	if (!walk) {
		kerr_clear(&kd->err);
		for (size_t i = 0; i < 2; i++)
			if (kread_sym_uint(kd, vars[i], &list[nl]) == 0 && list[nl] != 0)
				nl++;
		kerr_clear(&kd->err);
	}
	kwalk_init(&w, MAX_ARENAS);
	size_t li = 0;
	for (p = walk ? head : (nl ? list[li++] : 0); p != 0;) {
		if (walk && kwalk_step(kd, &w, p, "vmem_list") != 0)
			goto fail;
		if (k == cap) {
			struct kvs_arena *t = realloc(a, 2 * cap * sizeof(*a));
			if (t == NULL)
				goto nomem;
			a = t;
			memset(a + cap, 0, cap * sizeof(*a));
			cap *= 2;
		}
		struct kvs_arena *r = &a[k++];
		r->kaddr = p;
		if (kvs_read(kd, p, b, vt.size) != 0) {
			r->cflags |= KVS_CF_UNREADABLE;
			snprintf(r->note, sizeof(r->note), "%s", kvs_geterr(kd));
			snprintf(r->name, sizeof(r->name), "?");
			kerr_clear(&kd->err);
			rc = 1;
			if (walk)
				break;        /* the rest of the list is behind it */
			p = li < nl ? list[li++] : 0;
			continue;
		}
		size_t nn = name.size < sizeof(r->name) ? name.size : sizeof(r->name) - 1;
		memcpy(r->name, b + name.off, nn);
		r->name[nn] = '\0';
		r->quantum = kfield_get(b, vt.size, &qmask) + 1;
		r->size = kfield_get(b, vt.size, &size);
		r->inuse = kfield_get(b, vt.size, &inuse);
		r->free = r->size >= r->inuse ? r->size - r->inuse : 0;
		p = walk ? kfield_get(b, vt.size, &next) : (li < nl ? list[li++] : 0);
	}
	free(b);
	*out = a;
	*n = k;
	return rc;
nomem:
	kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
fail:
	free(a);
	free(b);
	return -1;
}


/* A plain page's own fields, where its struct vm_page has them: the
 * vm_object it belongs to (as Linux's mapping), its flags word, raw (the
 * PG_* names are macros, not in the types).  0, or 1 when the struct is
 * not in the dump (the note says so). */
static int
page_fields(kvs_t *kd, struct kvs_whatis *w)
{
	struct kfield obj, fl;
	uint8_t buf[256];
	struct kvs_typeinfo ti;

	if (kvs_type(kd, "struct vm_page", &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, "struct vm_page", "object", &obj, false) != 0 ||
	    kfield(kd, "struct vm_page", "flags", &fl, false) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (kvs_read(kd, w->page, buf, (size_t)ti.size) != 0) {
		snprintf(w->note, sizeof(w->note), "struct vm_page 0x%llx is not in the dump",
		    (unsigned long long)w->page);
		kerr_clear(&kd->err);
		return 1;
	}
	w->mapping = kfield_get(buf, (size_t)ti.size, &obj);
	w->page_flags = kfield_get(buf, (size_t)ti.size, &fl);
	if (w->page_flags != 0)
		snprintf(w->page_flags_str, sizeof(w->page_flags_str), "0x%llx",
		    (unsigned long long)w->page_flags);
	return 0;
}

/* What holds addr, in this order: the kernel's text or data (a symbol);
 * a struct vm_page, a UMA item through its page (uma_items.c); a thread's
 * kernel stack (kstack.c); the kernel_map entry, or the gap in it, that
 * holds it (vmmap.c); the page that holds it; else unknown. */
int
freebsd_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w)
{
	uint64_t off, size;
	const char *name = kvs_symbol_at(kd, addr, &off);
	int rc = 0, r;

	kerr_clear(&kd->err);
	if (name != NULL && kvs_symbol(kd, name, NULL, &size) == 0 && (off < size || off == 0)) {
		w->kind = KVS_WHATIS_SYMBOL;
		snprintf(w->symbol, sizeof(w->symbol), "%s+0x%llx", name, (unsigned long long)off);
		return 0;
	}
	kerr_clear(&kd->err);
	r = freebsd_uma_whatis(kd, addr, w, &rc);
	if (r != 0)
		return r < 0 ? -1 : rc;
	r = freebsd_kstack_whatis(kd, addr, w);
	if (r != 0) {
		if (r > 0)
			w->page = 0;
		return r < 0 ? -1 : 0;
	}
	bool inmap;
	rc = freebsd_vmmap_whatis(kd, addr, w, &inmap);
	if (rc < 0 || inmap)
		return rc;
	if (w->page != 0) {
		w->kind = KVS_WHATIS_PAGE;
		return page_fields(kd, w);
	}
	w->kind = KVS_WHATIS_UNKNOWN;
	snprintf(w->note, sizeof(w->note), "%s", name != NULL ?
	    "past the end of the nearest kernel symbol, in no UMA slab, stack or page" :
	    "not in the kernel's text or data, a UMA slab, a stack or a known page");
	return 0;
}
