/*
 * slub.c - Linux SLUB caches (slab_caches) into the memory_type_list, as
 * ALLOCATOR_SLAB entries (an extension of libmemstat, see memstat.h).
 *
 * What is counted, per cache:
 *   num_slabs, num_objs  sums of the node counters nr_slabs / total_objects
 *                        (CONFIG_SLUB_DEBUG; every slab, per-CPU ones too);
 *   active_objs          /proc/slabinfo's figure: num_objs minus the free
 *                        objects of the node partial lists;
 *   allocated (count)    the objects really in use: also minus the free
 *                        objects held per CPU - on the CPU slab (its lockless
 *                        freelist, plus what other CPUs freed back to it:
 *                        objects - inuse) and on the CPU partial list.
 * The per-CPU free count of each CPU goes to the entry's per-CPU "free"
 * slot, as UMA's per-CPU caches do.
 *
 * Freelist pointers may be hardened (CONFIG_SLAB_FREELIST_HARDENED, seen as
 * kmem_cache.random): stored = next ^ random ^ swab(address of the stored
 * pointer) since 5.7, without the swab before.  Every decoded pointer must
 * land on an object slot of the slab being walked; the first pointer of the
 * first non-empty freelist picks the variant.  A freelist that leaves its
 * slab, or is longer than the slab holds objects, marks the row corrupt
 * (memstat_get_slab_flags) and is not followed further; so does a per-CPU
 * partial list that loops.  What a corrupt list holds is not counted free.
 *
 * A partial dump (makedumpfile -d 31 leaves out a page) keeps every row: a
 * cache whose name, node counters or CPU slabs are not in the dump is
 * flagged (MEMSTAT_SLAB_NAME_UNREADABLE, _COUNTS_UNREADABLE), its unknown
 * figures zero, and a warning says why; the table is never lost for one page.
 * A kernel whose symbols give no per-CPU offsets (kallsyms of text only)
 * flags every row MEMSTAT_SLAB_PERCPU_UNREADABLE: /proc/slabinfo's figures
 * (node counters and partial lists) stand, the exact count does not.
 *
 * Layouts come from the types: struct slab (5.17+) or struct page (before),
 * kmem_cache_cpu.slab or .page, slab_list or lru, by member presence.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"
#include "memstat_internal.h"

#define CACHES_MAX 100000
#define PARTIAL_MAX 10000000ULL
#define CPU_PARTIAL_MAX 100000
#define CPUS_MAX SLUB_CPUS_MAX
#define NODES_MAX 1024
#define CACHE_BUF 16384
#define START_KERNEL_MAP 0xffffffff80000000ULL

static uint64_t
need_of(const struct kfield *f, uint64_t have)
{
	uint64_t end = f->present ? f->off + (f->size > 8 ? 8 : f->size) + 1 : 0;
	return end > have ? end : have;
}

int
slub_resolve(kvs_t *kd, struct slayout *L)
{
	struct kfield list, node, partial, lst;
	struct kvs_typeinfo ti;
	const char *K = "struct kmem_cache", *N = "struct kmem_cache_node",
	    *C = "struct kmem_cache_cpu";
	int has;

	memset(L, 0, sizeof(*L));
	if (kfield(kd, K, "list", &list, true) != 0 ||
	    kfield(kd, K, "list.next", &L->next, true) != 0 ||
	    kfield(kd, K, "name", &L->name, true) != 0 ||
	    kfield(kd, K, "size", &L->size, true) != 0 ||
	    kfield(kd, K, "object_size", &L->object_size, true) != 0 ||
	    kfield(kd, K, "offset", &L->offset, true) != 0 ||
	    kfield(kd, K, "oo", &L->oo, true) != 0 ||
	    kfield(kd, K, "cpu_slab", &L->cpu_slab, true) != 0 ||
	    kfield(kd, K, "node", &node, true) != 0 ||
	    kfield(kd, K, "random", &L->random, false) != 0 ||
	    kfield(kd, K, "red_left_pad", &L->red_left_pad, false) != 0 ||
	    kfield(kd, K, "flags", &L->flags, false) != 0 ||
	    kfield(kd, K, "inuse", &L->inuse, false) != 0)
		return kerr_push(&kd->err, "SLUB layout");
	if (node.kind != KVS_KIND_ARRAY || node.elem_size != 8 || node.count == 0)
		return kerr_set(&kd->err, KVS_E_VERSION, "kmem_cache.node is not an array of "
		    "pointers (a SLAB, SLOB or newer per-node layout?)");
	L->list_off = list.off;
	L->node_off = node.off;
	L->node_count = node.count > NODES_MAX ? NODES_MAX : node.count;
	L->need = L->node_off;
	L->need = need_of(&L->name, L->need);
	L->need = need_of(&L->random, L->need);
	L->need = need_of(&L->cpu_slab, L->need);
	L->need = need_of(&L->red_left_pad, L->need);
	L->need = need_of(&L->flags, L->need);
	L->need = need_of(&L->inuse, L->need);

	if (kfield(kd, N, "nr_partial", &L->nr_partial, true) != 0 ||
	    kfield(kd, N, "partial", &partial, true) != 0 ||
	    kfield(kd, N, "partial.next", &L->partial_next, true) != 0)
		return kerr_push(&kd->err, "SLUB node layout");
	if (kfield(kd, N, "nr_slabs", &L->nr_slabs, false) != 0 ||
	    kfield(kd, N, "total_objects", &L->total_objects, false) != 0)
		return -1;
	if (!L->nr_slabs.present || !L->total_objects.present)
		return kerr_set(&kd->err, KVS_E_VERSION, "kmem_cache_node has no nr_slabs / "
		    "total_objects: the kernel was built without CONFIG_SLUB_DEBUG");
	L->partial_off = partial.off;
	if (kvs_type(kd, N, &ti) != 0)
		return -1;
	L->node_need = ti.size;

	/* The slab descriptor: struct slab since 5.17, struct page before. */
	has = kvs_has_member(kd, "struct slab", "slab_cache");
	if (has < 0)
		kerr_clear(&kd->err);
	L->slab_type = has == 1 ? "struct slab" : "struct page";
	if (kfield(kd, L->slab_type, "inuse", &L->s_inuse, true) != 0 ||
	    kfield(kd, L->slab_type, "objects", &L->s_objects, true) != 0 ||
	    kfield(kd, L->slab_type, "next", &L->s_next, false) != 0 ||
	    kfield(kd, L->slab_type, "slab_cache", &L->s_cache, true) != 0 ||
	    kfield(kd, L->slab_type, "freelist", &L->s_freelist, true) != 0 ||
	    kfield(kd, L->slab_type, "frozen", &L->s_frozen, false) != 0)
		return kerr_push(&kd->err, "SLUB slab layout");
	if (kfield(kd, L->slab_type, "slab_list", &lst, false) != 0)
		return -1;
	if (!lst.present && kfield(kd, L->slab_type, "lru", &lst, true) != 0)
		return kerr_push(&kd->err, "SLUB slab list layout");
	L->slab_list_off = lst.off;
	if (kvs_type(kd, L->slab_type, &ti) != 0)
		return -1;
	L->slab_need = ti.size;
	if (kvs_type(kd, "struct page", &ti) != 0)
		return -1;
	L->page_size_bytes = ti.size;

	if (kfield(kd, C, "freelist", &L->c_freelist, true) != 0 ||
	    kfield(kd, C, "partial", &L->c_partial, false) != 0)
		return kerr_push(&kd->err, "SLUB per-CPU layout");
	if (kfield(kd, C, "slab", &L->c_slab, false) != 0)
		return -1;
	if (!L->c_slab.present && kfield(kd, C, "page", &L->c_slab, true) != 0)
		return kerr_push(&kd->err, "SLUB per-CPU layout");
	if (kvs_type(kd, C, &ti) != 0)
		return -1;
	L->cpu_need = ti.size;
	if (L->cpu_need > 256 || L->slab_need > 256 || L->node_need > 512)
		return kerr_set(&kd->err, KVS_E_DATA, "SLUB structures larger than expected "
		    "(cpu %llu, slab %llu, node %llu bytes)", (unsigned long long)L->cpu_need,
		    (unsigned long long)L->slab_need, (unsigned long long)L->node_need);
	return 0;
}

/* Possible CPUs and their per-CPU area offsets. */
int
slub_read_cpus(kvs_t *kd, struct scpus *c)
{
	uint64_t addr, mask_addr, v;
	unsigned i;

	memset(c, 0, sizeof(*c));
	if (kvs_symbol(kd, "nr_cpu_ids", &addr, NULL) != 0 || kread_uint(kd, addr, 4, &v) != 0)
		return kerr_push(&kd->err, "CPU count");
	if (v == 0 || v > CPUS_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "nr_cpu_ids %llu out of range",
		    (unsigned long long)v);
	c->n = (unsigned)v;
	if (kvs_symbol(kd, "__per_cpu_offset", &addr, NULL) != 0 ||
	    kvs_read(kd, addr, c->offset, c->n * sizeof(uint64_t)) != 0)
		return kerr_push(&kd->err, "per-CPU offsets");
	if (kvs_symbol(kd, "__cpu_possible_mask", &mask_addr, NULL) != 0) {
		kerr_clear(&kd->err);
		memset(c->present, 1, c->n);
	} else {
		uint64_t words[CPUS_MAX / 64];
		if (kvs_read(kd, mask_addr, words, (c->n + 63) / 64 * 8) != 0)
			return kerr_push(&kd->err, "possible CPUs");
		for (i = 0; i < c->n; i++)
			c->present[i] = (le64toh(words[i / 64]) >> (i % 64)) & 1;
	}
	for (i = 0; i < c->n; i++)
		c->offset[i] = le64toh(c->offset[i]);
	return 0;
}

int
slub_read_mem(kvs_t *kd, struct smem *m)
{
	memset(m, 0, sizeof(*m));
	m->swab = -1;
	if (linux_memmap(kd, &m->vmemmap, &m->page_offset) != 0)
		return -1;
	m->known = true;
	return 0;
}

static uint64_t
swab64(uint64_t x)
{
	return __builtin_bswap64(x);
}

/*
 * Length of a freelist starting at `head` on the slab whose descriptor is at
 * `slab`, each object given to each() (when not NULL) as it is reached.
 * -1 (row marked) when it leaves the slab or runs too long; -2 unreadable.
 */
int64_t
slub_freelist(kvs_t *kd, const struct slayout *L, struct smem *m, const struct slub_cache *ca,
    uint64_t slab, uint64_t head, bool *corrupt, void (*each)(void *arg, uint64_t obj),
    void *arg)
{
	uint64_t base = 0, span = 0, p = head;
	int64_t n = 0;

	(void)L;
	if (m->known && slab >= m->vmemmap) {
		base = m->page_offset + (slab - m->vmemmap) / L->page_size_bytes * 4096;
		span = 4096ULL << ca->order;
	}
	while (p != 0) {
		uint64_t stored, next[2];
		int v;

		if (span != 0 && (p - base >= span ||
		    (p - base - ca->red_left_pad) % ca->size != 0)) {
			*corrupt = true;
			return -1;
		}
		if (++n > ca->objects_per_slab) {
			*corrupt = true;
			return -1;
		}
		if (each != NULL)
			each(arg, p);
		if (kread_u64(kd, p + ca->offset, &stored) != 0)
			return -2;
		if (!L->random.present) {
			p = stored;
			continue;
		}
		next[0] = stored ^ ca->random ^ (p + ca->offset);
		next[1] = stored ^ ca->random ^ swab64(p + ca->offset);
		if (m->swab < 0) {
			/* The variant whose pointer stays on the slab. */
			for (v = 1; v >= 0; v--)
				if (next[v] == 0 || (span != 0 && next[v] - base < span))
					break;
			if (v < 0)
				v = 1;
			m->swab = v;
		}
		p = next[m->swab];
	}
	return n;
}

/* objects - inuse of the slab descriptor at `slab`. */
static int
slab_free(kvs_t *kd, const struct slayout *L, uint64_t slab, uint64_t *free_objs,
    uint64_t *next_partial)
{
	uint8_t b[256];
	uint64_t objects, inuse;

	if (kvs_read(kd, slab, b, L->slab_need) != 0)
		return kerr_push(&kd->err, "slab at 0x%llx", (unsigned long long)slab);
	objects = kfield_get(b, sizeof(b), &L->s_objects);
	inuse = kfield_get(b, sizeof(b), &L->s_inuse);
	*free_objs = inuse <= objects ? objects - inuse : 0;
	if (next_partial != NULL)
		*next_partial = kfield_get(b, sizeof(b), &L->s_next);
	return 0;
}

struct counts {
	uint64_t num_slabs, num_objs, node_free, cpu_free;
	bool corrupt;
};

static int
read_nodes(kvs_t *kd, const struct slayout *L, const uint8_t *cb, unsigned nr_nodes,
    struct counts *k)
{
	unsigned i;

	for (i = 0; i < nr_nodes && i < L->node_count; i++) {
		uint64_t na, head, p, nr_partial, seen = 0;
		uint8_t nb[512];
		struct kwalk w;

		memcpy(&na, cb + L->node_off + 8ULL * i, 8);
		na = le64toh(na);
		if (na == 0)
			continue;
		if (kvs_read(kd, na, nb, L->node_need) != 0)
			return kerr_push(&kd->err, "node %u at 0x%llx", i, (unsigned long long)na);
		k->num_slabs += kfield_get(nb, sizeof(nb), &L->nr_slabs);
		k->num_objs += kfield_get(nb, sizeof(nb), &L->total_objects);
		nr_partial = kfield_get(nb, sizeof(nb), &L->nr_partial);
		head = na + L->partial_off;
		kwalk_init(&w, nr_partial + 1 < PARTIAL_MAX ? nr_partial + 1 : PARTIAL_MAX);
		for (p = kfield_get(nb, sizeof(nb), &L->partial_next); p != head && p != 0; ) {
			uint64_t slab = p - L->slab_list_off, f;
			if (kwalk_step(kd, &w, p, "node partial") != 0)
				return -1;
			if (slab_free(kd, L, slab, &f, NULL) != 0 ||
			    kread_u64(kd, p, &p) != 0)
				return kerr_push(&kd->err, "node %u partial list", i);
			k->node_free += f;
			seen++;
		}
		if (seen != nr_partial)
			kvs_warn(kd, "node %u: nr_partial says %llu slabs, the list holds %llu",
			    i, (unsigned long long)nr_partial, (unsigned long long)seen);
	}
	return 0;
}

static int
read_cpu(kvs_t *kd, const struct slayout *L, struct smem *m, const struct slub_cache *ca,
    uint64_t c_addr, struct counts *k, uint64_t *cpu_free)
{
	uint8_t cb[256];
	uint64_t slab, freelist, partial, f, pfree = 0;
	int64_t n;
	struct kwalk w;

	*cpu_free = 0;
	if (kvs_read(kd, c_addr, cb, L->cpu_need) != 0)
		return kerr_push(&kd->err, "per-CPU cache at 0x%llx", (unsigned long long)c_addr);
	freelist = kfield_get(cb, sizeof(cb), &L->c_freelist);
	slab = kfield_get(cb, sizeof(cb), &L->c_slab);
	partial = kfield_get(cb, sizeof(cb), &L->c_partial);
	if (slab != 0) {
		if (slab_free(kd, L, slab, &f, NULL) != 0)
			return -1;
		*cpu_free += f;
		n = slub_freelist(kd, L, m, ca, slab, freelist, &k->corrupt, NULL, NULL);
		if (n == -2)
			return kerr_push(&kd->err, "per-CPU freelist");
		if (n > 0)
			*cpu_free += (uint64_t)n;
	}
	/* A partial list that loops or runs too long counts nothing, as a
	 * corrupt freelist: the row's count stays an upper bound. */
	kwalk_init(&w, CPU_PARTIAL_MAX);
	while (partial != 0) {
		uint64_t next;
		if (kwalk_step(kd, &w, partial, "per-CPU partial") != 0) {
			kerr_clear(&kd->err);
			k->corrupt = true;
			pfree = 0;
			break;
		}
		if (slab_free(kd, L, partial, &f, &next) != 0)
			return kerr_push(&kd->err, "per-CPU partial list");
		pfree += f;
		partial = next;
	}
	*cpu_free += pfree;
	k->cpu_free += *cpu_free;
	return 0;
}

int
slub_cache_read(kvs_t *kd, const struct slayout *L, uint64_t addr, uint8_t *cb,
    struct slub_cache *out)
{
	struct slub_cache ca;
	uint64_t oo;

	if (kvs_read(kd, addr, cb, L->need) != 0)
		return kerr_push(&kd->err, "kmem_cache at 0x%llx", (unsigned long long)addr);
	memset(&ca, 0, sizeof(ca));
	ca.addr = addr;
	ca.size = kfield_get(cb, L->need, &L->size);
	ca.object_size = kfield_get(cb, L->need, &L->object_size);
	ca.offset = kfield_get(cb, L->need, &L->offset);
	ca.random = kfield_get(cb, L->need, &L->random);
	ca.red_left_pad = kfield_get(cb, L->need, &L->red_left_pad);
	oo = kfield_get(cb, L->need, &L->oo);
	ca.objects_per_slab = (unsigned)(oo & 0xffff);
	ca.order = (unsigned)(oo >> 16);
	ca.flags = kfield_get(cb, L->need, &L->flags);
	ca.inuse = kfield_get(cb, L->need, &L->inuse);
	*out = ca;
	return 0;
}

static int
fail(struct memory_type_list *list, int err)
{
	mtl_refresh_abort(list, ALLOCATOR_SLAB, err);
	return -1;
}

int
memstat_kvm_slab(struct memory_type_list *list, void *kvm_handle)
{
	static const char scratch_tag;
	struct slub_scratch {
		struct scpus cpus;
		uint8_t cb[CACHE_BUF];
	} *sc;
	kvs_t *kd = kvm_handle;
	struct slayout L;
	struct scpus *cpus;
	struct smem mem;
	struct kwalk w;
	uint64_t head, p;
	unsigned nr_nodes = 1;
	uint64_t nocpus = 0;
	uint8_t *cb;
	int rc = -1;

	kerr_clear(&kd->err);
	kd->nwarn = 0;
	kvs_tlb_flush(kd);
	if (slub_resolve(kd, &L) != 0) {
		list->mtl_error = kvs_errstatus(kd) == KVS_E_VERSION ? MEMSTAT_ERROR_VERSION :
		    MEMSTAT_ERROR_KVM;
		return -1;
	}
	if (linux_slab_caches(kd, &head) != 0) {
		list->mtl_error = kvs_errstatus(kd) == KVS_E_NOSYMBOL ? MEMSTAT_ERROR_KVM_NOSYMBOL :
		    MEMSTAT_ERROR_KVM;
		return -1;
	}
	nr_nodes = linux_nr_node_ids(kd, (unsigned)L.node_count);
	if (L.need < L.node_off + 8ULL * nr_nodes)
		L.need = L.node_off + 8ULL * nr_nodes;
	/* The walk's scratch lives on the handle: a refresh allocates nothing
	 * once the list holds every cache. */
	sc = kvs_memo(kd, &scratch_tag, sizeof(*sc));
	if (sc == NULL || L.need > CACHE_BUF) {
		list->mtl_error = MEMSTAT_ERROR_NOMEMORY;
		return -1;
	}
	cpus = &sc->cpus;
	cb = sc->cb;
	if (slub_read_cpus(kd, cpus) != 0) {
		/* No route to the per-CPU offsets (kallsyms of text only): the
		 * node figures stand, the CPUs' free objects are not known. */
		if (kvs_errstatus(kd) != KVS_E_NOSYMBOL) {
			list->mtl_error = MEMSTAT_ERROR_KVM;
			goto out;
		}
		kvs_warn(kd, "the CPUs' slabs are not read: %s", kvs_geterr(kd));
		kerr_clear(&kd->err);
		memset(cpus, 0, sizeof(*cpus));
		nocpus = MEMSTAT_SLAB_PERCPU_UNREADABLE;
	}
	/* without the memory map the freelists go unbounded-checked */
	if (slub_read_mem(kd, &mem) != 0)
		kerr_clear(&kd->err);
	if (mtl_refresh_begin(list, ALLOCATOR_SLAB, cpus->n) != 0)
		goto out;
	if (kread_u64(kd, head, &p) != 0) {
		fail(list, MEMSTAT_ERROR_KVM);
		goto out;
	}
	kwalk_init(&w, CACHES_MAX);
	for (; p != head; ) {
		uint64_t addr = p - L.list_off, namep;
		struct memory_type *mt;
		struct counts k;
		struct slub_cache ca;
		unsigned c;
		uint64_t unread;
		int is_new;

		if (p == 0 || kwalk_step(kd, &w, p, "slab_caches") != 0) {
			if (p == 0)
				kerr_set(&kd->err, KVS_E_DATA, "slab_caches list ends in NULL");
			fail(list, MEMSTAT_ERROR_KVM);
			goto out;
		}
		if (slub_cache_read(kd, &L, addr, cb, &ca) != 0) {
			fail(list, MEMSTAT_ERROR_KVM);
			goto out;
		}
		if (ca.size == 0 || ca.order > 20) {
			kvs_warn(kd, "kmem_cache at 0x%llx: size %llu, order %u; skipped",
			    (unsigned long long)addr, (unsigned long long)ca.size, ca.order);
			p = kfield_get(cb, L.need, &L.next);
			continue;
		}
		mt = mtl_upsert(list, ALLOCATOR_SLAB, addr, &is_new);
		if (mt == NULL) {
			fail(list, MEMSTAT_ERROR_NOMEMORY);
			goto out;
		}
		namep = kfield_get(cb, L.need, &L.name);
		unread = nocpus;
		if (is_new || mt->mt_namekey != namep || mt->mt_name[0] == '\0') {
			char name[MEMTYPE_MAXNAME];
			if (kvs_read_string(kd, namep, name, sizeof(name), NULL) < 0) {
				/* a partial dump: the row stays, without its name */
				kvs_warn(kd, "kmem_cache at 0x%llx: its name (at 0x%llx) is not "
				    "readable: %s", (unsigned long long)addr,
				    (unsigned long long)namep, kvs_geterr(kd));
				kerr_clear(&kd->err);
				mtl_set_name(mt, "", namep);
				unread |= MEMSTAT_SLAB_NAME_UNREADABLE;
			} else
				mtl_set_name(mt, name, namep);
		} else if (mt->mt_flags & MEMSTAT_SLAB_NAME_UNREADABLE)
			unread |= MEMSTAT_SLAB_NAME_UNREADABLE;
		memset(&k, 0, sizeof(k));
		if (read_nodes(kd, &L, cb, nr_nodes, &k) != 0) {
			kvs_warn(kd, "kmem_cache at 0x%llx: its node counters are not readable: %s",
			    (unsigned long long)addr, kvs_geterr(kd));
			kerr_clear(&kd->err);
			unread |= MEMSTAT_SLAB_COUNTS_UNREADABLE;
		}
		for (c = 0; c < cpus->n && !(unread & MEMSTAT_SLAB_COUNTS_UNREADABLE); c++) {
			uint64_t cf;
			if (!cpus->present[c])
				continue;
			if (read_cpu(kd, &L, &mem, &ca, kfield_get(cb, L.need, &L.cpu_slab) +
			    cpus->offset[c], &k, &cf) != 0) {
				kvs_warn(kd, "kmem_cache at 0x%llx: CPU %u's slabs are not readable: "
				    "%s", (unsigned long long)addr, c, kvs_geterr(kd));
				kerr_clear(&kd->err);
				unread |= MEMSTAT_SLAB_COUNTS_UNREADABLE;
				break;
			}
			if (mt->mt_percpu_valid)
				mt->mt_percpu_cache[c].mtp_free = cf;
		}
		if (unread & MEMSTAT_SLAB_COUNTS_UNREADABLE) {
			memset(&k, 0, sizeof(k));
			for (c = 0; mt->mt_percpu_valid && c < cpus->n; c++)
				mt->mt_percpu_cache[c].mtp_free = 0;
		}
		mt->mt_size = ca.object_size;
		mt->mt_rsize = ca.size;
		mt->mt_slab_objperslab = ca.objects_per_slab;
		mt->mt_slab_pagesperslab = 1ULL << ca.order;
		mt->mt_slab_numslabs = k.num_slabs;
		mt->mt_slab_numobjs = k.num_objs;
		mt->mt_slab_active = k.node_free <= k.num_objs ? k.num_objs - k.node_free : 0;
		mt->mt_count = k.node_free + k.cpu_free <= k.num_objs ?
		    k.num_objs - k.node_free - k.cpu_free : 0;
		mt->mt_free = k.num_objs - mt->mt_count;
		mt->mt_bytes = mt->mt_count * ca.object_size;
		mt->mt_flags = (k.corrupt ? MEMSTAT_SLAB_CORRUPT : 0) | unread;
		if (k.corrupt)
			kvs_warn(kd, "kmem_cache \"%s\" at 0x%llx: a freelist leaves its slab or "
			    "loops; its free count is a lower bound", mt->mt_name,
			    (unsigned long long)addr);
		p = kfield_get(cb, L.need, &L.next);
	}
	mtl_refresh_commit(list, ALLOCATOR_SLAB);
	rc = 0;
out:
	return rc;
}

