/*
 * slub_objects.c - Linux pages and SLUB objects one by one: the memory map
 * (struct page in the vmemmap: pfn <-> page <-> direct-map address, flags
 * by the kernel's own names, compound head and order), every slab of a
 * cache, and the state of each of its objects (kvs_slab_objects), which
 * whatis.c asks for one address.
 *
 * The slabs of a cache: each CPU's slab and CPU partial list, each node's
 * partial list, and the full slabs, which SLUB lists nowhere: those are
 * found as crash does, by a scan of the memory map for slab head pages
 * (done once per handle, kept in the handle's memo, freed by
 * linux_census_close).  Free objects: those on a CPU's lockless freelist or
 * on the freelist of a slab (slub.c decodes the hardened pointers); the
 * slab's role names the state.  The rest are allocated.
 *
 * Slab pages: PG_slab's bit from the kernel's pageflag_names table, else
 * VMCOREINFO's NUMBER(PG_slab); kernels that mark slabs by page_type give
 * NUMBER(PAGE_SLAB_MAPCOUNT_VALUE) instead.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define PAGE_SHIFT 12
#define SCAN_PFN_DEFAULT (1ULL << 21)   /* no max_pfn: 8 GiB of memory map */
#define SCAN_PFN_MAX (1ULL << 32)
#define FLAG_NAMES_MAX 64
#define CPU_PARTIAL_MAX 100000
#define NODE_PARTIAL_MAX 10000000ULL
#define SLAB_STORE_USER 0x00010000ULL   /* include/linux/slab.h */

static const char memo_tag;

static struct linux_census *
state(kvs_t *kd)
{
	return kvs_memo(kd, &memo_tag, sizeof(struct linux_census));
}

void
linux_census_close(kvs_t *kd)
{
	struct linux_census *c = state(kd);

	if (c == NULL)
		return;
	free(c->heads);
	c->heads = NULL;
	free(c->cpus);
	c->cpus = NULL;
	free(c->areas);
	c->areas = NULL;
}

static void
read_flag_names(kvs_t *kd, struct linux_census *c)
{
	uint64_t a, v;
	size_t len;
	const char *s;
	unsigned i;

	if (kvs_symbol(kd, "pageflag_names", &a, NULL) == 0) {
		for (i = 0; i < FLAG_NAMES_MAX; i++) {
			uint64_t ent[2];
			if (kvs_read(kd, a + 16ULL * i, ent, sizeof(ent)) != 0)
				break;
			if (le64toh(ent[1]) == 0)
				break;
			if (kvs_read_string(kd, le64toh(ent[1]), c->flag_name[i],
			    sizeof(c->flag_name[i]), NULL) < 0)
				break;
			c->flag_mask[i] = le64toh(ent[0]);
			c->nflags = i + 1;
			if (strcmp(c->flag_name[i], "slab") == 0)
				c->pg_slab = c->flag_mask[i];
			if (strcmp(c->flag_name[i], "head") == 0)
				c->pg_head = c->flag_mask[i];
		}
	}
	kerr_clear(&kd->err);
	if (c->pg_slab == 0 && linux_vi_u64(kd, "NUMBER(PG_slab)", 10, &v) && v < 64)
		c->pg_slab = 1ULL << v;
	if (c->pg_head == 0 && linux_vi_u64(kd, "NUMBER(PG_head_mask)", 10, &v))
		c->pg_head = v;
	/* page_type kernels: ~PG_slab (a negative number: 6.10, 6.11), or
	 * PGTY_slab << 24 (6.12+). */
	if (c->pg_slab == 0 && (s = linux_vmcoreinfo(kd, "NUMBER(PAGE_SLAB_MAPCOUNT_VALUE)",
	    &len)) != NULL && linux_vi_u64(kd, "NUMBER(PAGE_SLAB_MAPCOUNT_VALUE)", 10, &v)) {
		if (v > 0xffffffffULL) {
			c->slab_type = (uint32_t)~v;
			c->slab_type_form = 1;
		} else if ((v & 0xff000000u) != 0) {
			c->slab_type = (uint32_t)v;
			c->slab_type_form = 2;
		}
	}
}

/* The memory map and the SLUB layout, without the CPUs (a kernel whose
 * symbols name no per-CPU offsets still has its slab pages). */
struct linux_census *
linux_census_map(kvs_t *kd)
{
	struct linux_census *c = state(kd);
	struct kvs_typeinfo ti;

	if (c == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (c->ready > 0)
		return c;
	if (c->ready < 0) {
		kerr_set(&kd->err, KVS_E_VERSION, "%s", c->why);
		return NULL;
	}
	if (slub_resolve(kd, &c->L) != 0 || slub_read_mem(kd, &c->mem) != 0)
		goto bad;
	if (kvs_type(kd, "struct page", &ti) != 0)
		goto bad;
	c->page_size = ti.size;
	if (kfield(kd, "struct page", "flags", &c->p_flags, true) != 0 ||
	    kfield(kd, "struct page", "compound_head", &c->p_head, true) != 0 ||
	    kfield(kd, "struct page", "mapping", &c->p_mapping, false) != 0 ||
	    kfield(kd, "struct page", "compound_order", &c->p_order, false) != 0 ||
	    kfield(kd, "struct page", "page_type", &c->p_type, false) != 0)
		goto bad;
	if (c->page_size > sizeof(((struct linux_census *)0)->pbuf) / 64 ||
	    c->page_size < 32)
		{
		kerr_set(&kd->err, KVS_E_DATA, "struct page of %llu bytes",
		    (unsigned long long)c->page_size);
		goto bad;
	}
	if (kvs_type(kd, "struct track", &ti) == 0)
		c->track_size = ti.size;
	kerr_clear(&kd->err);
	read_flag_names(kd, c);
	c->max_pfn = kread_sym_uint_or(kd, "max_pfn", 0);
	c->ready = 1;
	return c;
bad:
	snprintf(c->why, sizeof(c->why), "%s", kvs_geterr(kd));
	c->ready = -1;
	return NULL;
}

/* The census with the CPUs' slabs: the map, and every possible CPU's
 * per-CPU offset. */
struct linux_census *
linux_census(kvs_t *kd)
{
	struct linux_census *c = linux_census_map(kd);

	if (c == NULL || c->cpus != NULL)
		return c;
	if (c->cpus_why[0] != '\0') {
		kerr_set(&kd->err, KVS_E_NOSYMBOL, "%s", c->cpus_why);
		return NULL;
	}
	c->cpus = malloc(sizeof(*c->cpus));
	if (c->cpus == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (slub_read_cpus(kd, c->cpus) != 0) {
		if (kvs_errstatus(kd) == KVS_E_NOSYMBOL)
			kerr_push(&kd->err, "the objects' states need every CPU's slabs, and "
			    "the kernel's symbols give no per-CPU offsets (kallsyms of text "
			    "only? give the kernel file with -N)");
		snprintf(c->cpus_why, sizeof(c->cpus_why), "%s", kvs_geterr(kd));
		free(c->cpus);
		c->cpus = NULL;
		return NULL;
	}
	return c;
}

uint64_t
linux_page_of_pfn(const struct linux_census *c, uint64_t pfn)
{
	return c->mem.vmemmap + pfn * c->page_size;
}

uint64_t
linux_pfn_of_page(const struct linux_census *c, uint64_t page)
{
	return (page - c->mem.vmemmap) / c->page_size;
}

/* The direct-map address of pfn's memory. */
uint64_t
linux_pfn_va(const struct linux_census *c, uint64_t pfn)
{
	return c->mem.page_offset + (pfn << PAGE_SHIFT);
}

bool
linux_page_is_slab(const struct linux_census *c, const uint8_t *pg)
{
	if (c->pg_slab != 0)
		return (kfield_get(pg, c->page_size, &c->p_flags) & c->pg_slab) != 0;
	if (c->slab_type_form != 0 && c->p_type.present) {
		uint32_t t = (uint32_t)kfield_get(pg, c->page_size, &c->p_type);
		if (c->slab_type_form == 1)   /* type bits are cleared when set */
			return (t & (0x80000000u | c->slab_type)) == 0x80000000u;
		return (t >> 24) == (c->slab_type >> 24);
	}
	return false;
}

void
linux_page_flags_str(const struct linux_census *c, uint64_t flags, char *buf, size_t len)
{
	unsigned i;
	size_t at = 0;

	buf[0] = '\0';
	for (i = 0; i < c->nflags && at < len; i++) {
		if ((flags & c->flag_mask[i]) != c->flag_mask[i] || c->flag_mask[i] == 0)
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "|" : "",
		    c->flag_name[i]);
	}
	if (at >= len && len > 0)
		buf[len - 1] = '\0';
}

/* The struct page of pfn (head resolved): 0, or -1 when not in the dump. */
int
linux_page_read(kvs_t *kd, const struct linux_census *c, uint64_t page, struct linux_page *p)
{
	uint8_t b[256];
	uint64_t ch;

	memset(p, 0, sizeof(*p));
	p->page = page;
	p->pfn = linux_pfn_of_page(c, page);
	if (kvs_read(kd, page, b, c->page_size) != 0)
		return kerr_push(&kd->err, "struct page of pfn %llu", (unsigned long long)p->pfn);
	p->flags = kfield_get(b, c->page_size, &c->p_flags);
	p->mapping = kfield_get(b, c->page_size, &c->p_mapping);
	ch = kfield_get(b, c->page_size, &c->p_head);
	p->head = (ch & 1) ? ch - 1 : page;
	if (p->head != page && kvs_read(kd, p->head, b, c->page_size) != 0)
		return kerr_push(&kd->err, "compound head of pfn %llu", (unsigned long long)p->pfn);
	p->head_flags = kfield_get(b, c->page_size, &c->p_flags);
	p->slab = linux_page_is_slab(c, b);
	if (p->slab)
		p->cache = kfield_get(b, c->page_size, &c->L.s_cache);
	if (c->pg_head != 0 && (p->head_flags & c->pg_head) != 0 && c->p_order.present) {
		uint8_t t[256];
		if (kvs_read(kd, p->head + c->page_size, t, c->page_size) == 0)
			p->order = (unsigned)kfield_get(t, c->page_size, &c->p_order);
		kerr_clear(&kd->err);
	}
	return 0;
}

/* ---- the memory map scan: every slab head page, by cache --------------- */

static int
cmp_head(const void *a, const void *b)
{
	const struct slab_head *x = a, *y = b;

	if (x->cache != y->cache)
		return x->cache < y->cache ? -1 : 1;
	return x->slab < y->slab ? -1 : x->slab > y->slab;
}

int
linux_census_scan(kvs_t *kd, struct linux_census *c)
{
	uint64_t end = c->max_pfn != 0 && c->max_pfn < SCAN_PFN_MAX ? c->max_pfn :
	    SCAN_PFN_DEFAULT, pfn, per = 4096 / c->page_size, cap = 0;

	if (c->scanned)
		return 0;
	if (per == 0)
		per = 1;
	for (pfn = 0; pfn < end; ) {
		uint64_t page = linux_page_of_pfn(c, pfn), n = per - (page % 4096) / c->page_size, i;
		if (n == 0 || n > per)
			n = 1;
		if (pfn + n > end)
			n = end - pfn;
		if (kvs_read(kd, page, c->pbuf, n * c->page_size) != 0) {
			kerr_clear(&kd->err);
			pfn += n;
			continue;
		}
		for (i = 0; i < n; i++) {
			const uint8_t *pg = c->pbuf + i * c->page_size;
			if (!linux_page_is_slab(c, pg) ||
			    (kfield_get(pg, c->page_size, &c->p_head) & 1) != 0)
				continue;
			if (c->nheads == cap) {
				struct slab_head *nh;
				cap = cap ? cap * 2 : 1024;
				nh = realloc(c->heads, cap * sizeof(*nh));
				if (nh == NULL)
					return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
				c->heads = nh;
			}
			c->heads[c->nheads].slab = page + i * c->page_size;
			c->heads[c->nheads].cache = kfield_get(pg, c->page_size, &c->L.s_cache);
			c->nheads++;
		}
		pfn += n;
	}
	qsort(c->heads, c->nheads, sizeof(*c->heads), cmp_head);
	c->scanned = true;
	return 0;
}

/* ---- the roles of a cache's listed slabs ------------------------------- */

struct role {
	uint64_t slab;
	kvs_obj_state_t state;         /* what a free object on it is */
	int cpu;
	uint64_t lockless;             /* the CPU's freelist (CPU slab only) */
};

struct roles {
	struct role *r;
	size_t n, cap;
	bool incomplete;
};

static int
role_add(kvs_t *kd, struct roles *rs, uint64_t slab, kvs_obj_state_t st, int cpu,
    uint64_t lockless)
{
	if (rs->n == rs->cap) {
		struct role *nr;
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		nr = realloc(rs->r, rs->cap * sizeof(*nr));
		if (nr == NULL)
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		rs->r = nr;
	}
	rs->r[rs->n++] = (struct role){ slab, st, cpu, lockless };
	return 0;
}

/* The CPU slabs and CPU partial slabs of the cache, and the node partial
 * slabs when `nodes`. */
static int
read_roles(kvs_t *kd, struct linux_census *c, const uint8_t *cb, bool nodes,
    struct roles *rs)
{
	const struct slayout *L = &c->L;
	uint64_t cpu_slab = kfield_get(cb, L->need, &L->cpu_slab);
	unsigned i;

	for (i = 0; i < c->cpus->n; i++) {
		uint8_t b[256];
		uint64_t slab, p;
		struct kwalk w;

		if (!c->cpus->present[i])
			continue;
		if (kvs_read(kd, cpu_slab + c->cpus->offset[i], b, L->cpu_need) != 0) {
			kerr_clear(&kd->err);
			rs->incomplete = true;
			continue;
		}
		slab = kfield_get(b, sizeof(b), &L->c_slab);
		if (slab != 0 && role_add(kd, rs, slab, KVS_OBJ_FREE_CPU, (int)i,
		    kfield_get(b, sizeof(b), &L->c_freelist)) != 0)
			return -1;
		kwalk_init(&w, CPU_PARTIAL_MAX);
		for (p = kfield_get(b, sizeof(b), &L->c_partial); p != 0; ) {
			uint8_t sb[256];
			if (kwalk_step(kd, &w, p, "per-CPU partial") != 0 ||
			    kvs_read(kd, p, sb, L->slab_need) != 0) {
				kerr_clear(&kd->err);
				rs->incomplete = true;
				break;
			}
			if (role_add(kd, rs, p, KVS_OBJ_FREE_CPU_PARTIAL, (int)i, 0) != 0)
				return -1;
			p = kfield_get(sb, sizeof(sb), &L->s_next);
		}
	}
	for (i = 0; nodes && i < L->node_count; i++) {
		uint64_t na, head, p;
		struct kwalk w;

		if ((uint64_t)L->node_off + 8ULL * (i + 1) > L->need)
			break;
		memcpy(&na, cb + L->node_off + 8ULL * i, 8);
		na = le64toh(na);
		if (na == 0)
			continue;
		head = na + L->partial_off;
		if (kread_u64(kd, head, &p) != 0) {
			kerr_clear(&kd->err);
			rs->incomplete = true;
			continue;
		}
		kwalk_init(&w, NODE_PARTIAL_MAX);
		while (p != head && p != 0) {
			if (kwalk_step(kd, &w, p, "node partial") != 0) {
				kerr_clear(&kd->err);
				rs->incomplete = true;
				break;
			}
			if (role_add(kd, rs, p - L->slab_list_off, KVS_OBJ_FREE_PARTIAL, -1, 0) != 0)
				return -1;
			if (kread_u64(kd, p, &p) != 0) {
				kerr_clear(&kd->err);
				rs->incomplete = true;
				break;
			}
		}
	}
	return 0;
}

/* ---- the objects of one slab ------------------------------------------ */

struct freeset {
	uint64_t *a;
	size_t n, cap;
	bool nomem;
};

static void
free_add(void *arg, uint64_t obj)
{
	struct freeset *f = arg;

	if (f->n == f->cap) {
		uint64_t *na;
		size_t cap = f->cap ? f->cap * 2 : 64;
		na = realloc(f->a, cap * sizeof(*na));
		if (na == NULL) {
			f->nomem = true;
			return;
		}
		f->a = na;
		f->cap = cap;
	}
	f->a[f->n++] = obj;
}

static bool
is_free(const struct freeset *f, uint64_t obj)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->a[i] == obj)
			return true;
	return false;
}

/* The free objects of a slab given its role (NULL: not listed, a full slab
 * or one on a node partial list found by the scan).  1 when its freelists
 * are unreadable or corrupt. */
static int
slab_freeset(kvs_t *kd, struct linux_census *c, const struct slub_cache *ca, uint64_t slab,
    const struct role *r, struct freeset *f, uint64_t *objects)
{
	uint8_t sb[256];
	bool corrupt = false;
	int rc = 0;

	if (kvs_read(kd, slab, sb, c->L.slab_need) != 0) {
		kerr_clear(&kd->err);
		return 1;
	}
	*objects = kfield_get(sb, sizeof(sb), &c->L.s_objects);
	if (*objects > ca->objects_per_slab || *objects == 0)
		*objects = ca->objects_per_slab;
	if (slub_freelist(kd, &c->L, &c->mem, ca, slab, kfield_get(sb, sizeof(sb),
	    &c->L.s_freelist), &corrupt, free_add, f) < 0 || corrupt)
		rc = 1;
	if (r != NULL && r->lockless != 0 && slub_freelist(kd, &c->L, &c->mem, ca, slab,
	    r->lockless, &corrupt, free_add, f) < 0)
		rc = 1;
	if (corrupt)
		rc = 1;
	if (f->nomem)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	kerr_clear(&kd->err);
	return rc;
}

static const struct role *
role_of(const struct roles *rs, uint64_t slab)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->r[i].slab == slab)
			return &rs->r[i];
	return NULL;
}

/* The state of a free object on a slab of this role. */
static kvs_obj_state_t
free_state(const struct role *r)
{
	return r != NULL ? r->state : KVS_OBJ_FREE_PARTIAL;
}

/* The kmem_cache named name: its address, or 0 (error set). */
static uint64_t
find_cache(kvs_t *kd, struct linux_census *c, const char *name, uint8_t *cb,
    struct slub_cache *ca)
{
	uint64_t head, p;
	struct kwalk w;

	if (kvs_symbol(kd, "slab_caches", &head, NULL) != 0 || kread_u64(kd, head, &p) != 0)
		return (uint64_t)kerr_push(&kd->err, "slab_caches") & 0;
	kwalk_init(&w, 100000);
	while (p != head && p != 0) {
		char nm[128];
		uint64_t addr = p - c->L.list_off;
		if (kwalk_step(kd, &w, p, "slab_caches") != 0 ||
		    slub_cache_read(kd, &c->L, addr, cb, ca) != 0)
			return 0;
		if (kvs_read_string(kd, kfield_get(cb, c->L.need, &c->L.name), nm, sizeof(nm),
		    NULL) >= 0 && strcmp(nm, name) == 0)
			return addr;
		kerr_clear(&kd->err);
		p = kfield_get(cb, c->L.need, &c->L.next);
	}
	kerr_set(&kd->err, KVS_E_INVAL, "no slab cache named \"%s\"", name);
	return 0;
}

static int
emit_slab(kvs_t *kd, struct linux_census *c, const struct slub_cache *ca, uint64_t slab,
    const struct role *r, int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg,
    int *incomplete)
{
	struct freeset f = { 0 };
	uint64_t objects = ca->objects_per_slab, base, i;
	int rc = slab_freeset(kd, c, ca, slab, r, &f, &objects);

	if (rc < 0)
		return -1;
	if (rc > 0)
		*incomplete = 1;
	base = linux_pfn_va(c, linux_pfn_of_page(c, slab));
	for (i = 0; i < objects; i++) {
		struct kvs_slab_object o = {
			.addr = base + ca->red_left_pad + i * ca->size, .slab = slab, .index = i,
			.cpu = -1, .node = -1,
		};
		o.state = rc > 0 && f.n == 0 ? KVS_OBJ_UNKNOWN : KVS_OBJ_ALLOCATED;
		if (is_free(&f, o.addr)) {
			o.state = free_state(r);
			o.cpu = r != NULL ? r->cpu : -1;
		}
		if ((rc = cb(arg, &o)) != 0) {
			free(f.a);
			return rc;
		}
	}
	free(f.a);
	return 0;
}

int
linux_slab_objects(kvs_t *kd, const char *name,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg)
{
	struct linux_census *c = linux_census(kd);
	struct roles rs = { 0 };
	struct slub_cache ca;
	uint8_t *buf;
	uint64_t addr;
	size_t i, j;
	int rc = 0, incomplete = 0;

	if (c == NULL)
		return -1;
	buf = malloc(c->L.need);
	if (buf == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if ((addr = find_cache(kd, c, name, buf, &ca)) == 0 ||
	    read_roles(kd, c, buf, true, &rs) != 0 || linux_census_scan(kd, c) != 0) {
		rc = -1;
		goto out;
	}
	incomplete = rs.incomplete;
	/* The listed slabs first, in their lists' order, then the others. */
	for (i = 0; i < rs.n && rc == 0; i++) {
		for (j = 0; j < i && rs.r[j].slab != rs.r[i].slab; j++)
			;
		if (j == i)
			rc = emit_slab(kd, c, &ca, rs.r[i].slab, &rs.r[i], cb, arg, &incomplete);
	}
	for (i = 0; i < c->nheads && rc == 0; i++)
		if (c->heads[i].cache == addr && role_of(&rs, c->heads[i].slab) == NULL)
			rc = emit_slab(kd, c, &ca, c->heads[i].slab, NULL, cb, arg, &incomplete);
out:
	free(rs.r);
	free(buf);
	if (rc == 0 && incomplete) {
		kvs_warn(kd, "kmem_cache \"%s\": some slabs or freelists are not in the dump",
		    name);
		return 1;
	}
	return rc;
}

/* The cache, object and state of the slab page's address (whatis.c). */
int
linux_slab_lookup(kvs_t *kd, struct linux_census *c, const struct linux_page *p,
    uint64_t addr, struct kvs_whatis *w)
{
	struct roles rs = { 0 };
	struct freeset f = { 0 };
	struct slub_cache ca;
	const struct role *r;
	uint64_t base, objects, idx, nm;
	uint8_t *buf = malloc(c->L.need);
	int rc = 0, fr;

	if (buf == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (slub_cache_read(kd, &c->L, p->cache, buf, &ca) != 0 || ca.size == 0) {
		kerr_clear(&kd->err);
		snprintf(w->note, sizeof(w->note), "its kmem_cache at 0x%llx is not in the dump",
		    (unsigned long long)p->cache);
		free(buf);
		return 1;
	}
	w->kind = KVS_WHATIS_SLAB;
	w->cache_kaddr = p->cache;
	nm = kfield_get(buf, c->L.need, &c->L.name);
	if (kvs_read_string(kd, nm, w->cache, sizeof(w->cache), NULL) < 0) {
		kerr_clear(&kd->err);
		rc = 1;
	}
	w->objsize = ca.object_size;
	base = linux_pfn_va(c, linux_pfn_of_page(c, p->head));
	if (addr < base + ca.red_left_pad) {
		snprintf(w->note, sizeof(w->note), "in the slab's left red zone");
		w->state = KVS_OBJ_UNKNOWN;
		free(buf);
		return rc;
	}
	idx = (addr - base - ca.red_left_pad) / ca.size;
	w->obj_index = idx;
	w->object = base + ca.red_left_pad + idx * ca.size;
	w->offset = addr - w->object;
	if (read_roles(kd, c, buf, false, &rs) != 0) {
		free(buf);
		return -1;
	}
	r = role_of(&rs, p->head);
	fr = slab_freeset(kd, c, &ca, p->head, r, &f, &objects);
	if (fr < 0) {
		rc = -1;
		goto out;
	}
	if (idx >= objects) {
		snprintf(w->note, sizeof(w->note), "past the slab's last object (%llu objects)",
		    (unsigned long long)objects);
		w->state = KVS_OBJ_UNKNOWN;
	} else if (is_free(&f, w->object)) {
		w->state = free_state(r);
		w->cpu = r != NULL ? r->cpu : -1;
	} else if (fr > 0 || rs.incomplete) {
		w->state = fr > 0 && f.n == 0 ? KVS_OBJ_UNKNOWN : KVS_OBJ_ALLOCATED;
		snprintf(w->note, sizeof(w->note), "a freelist of its slab is not in the dump "
		    "or corrupt");
		rc = 1;
	} else
		w->state = KVS_OBJ_ALLOCATED;
	/* slub_debug's tracks: alloc then free, after the object's metadata. */
	if ((ca.flags & SLAB_STORE_USER) != 0 && c->track_size >= 8 && idx < objects) {
		uint64_t t = w->object + ca.inuse + (ca.offset >= ca.inuse ? 8 : 0);
		if (kread_u64(kd, t, &w->alloc_caller) != 0 ||
		    kread_u64(kd, t + c->track_size, &w->free_caller) != 0) {
			kerr_clear(&kd->err);
			rc = 1;
		}
	}
out:
	free(f.a);
	free(rs.r);
	free(buf);
	return rc;
}
