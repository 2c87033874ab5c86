/*
 * vmalloc.c - the Linux kernel's vmalloc areas, as /proc/vmallocinfo shows
 * them (kvs_vmalloc): each busy vmap_area with its vm_struct (range, size,
 * caller, pages=, phys=, the flag words, the NUMA node counts), a busy
 * area without one as "vm_map_ram", and the areas waiting to be purged as
 * "unpurged vm_area".
 *
 * Where the busy areas are: vmap_area_list (one list in address order,
 * before 6.9), or each vmap_node's busy list (vmap_nodes[nr_vmap_nodes],
 * 6.9+): chosen by which symbol the kernel has.  The areas waiting to be
 * purged: each vmap_node's lazy.head (6.9+), purge_vmap_area_list (a
 * list_head through vmap_area.list, before), or vmap_purge_list (an llist
 * through vmap_area.purge_list, before that: 5.10).
 * Layouts from the types.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define AREAS_MAX 4000000ULL
#define NODES_MAX 4096
/* include/linux/vmalloc.h: vm_struct.flags */
#define VM_IOREMAP 0x1
#define VM_ALLOC 0x2
#define VM_MAP 0x4
#define VM_USERMAP 0x8
#define VM_DMA_COHERENT 0x10
#define VM_UNINITIALIZED 0x20
#define VMAP_RAM 0x1          /* vmap_area.flags */

struct vlayout {
	struct kfield va_start, va_end, list, vm, vflags, purge_list;
	struct kfield addr, size, flags, pages, nr_pages, phys_addr, caller;
	uint64_t va_need, vm_need;
	bool numa;
	uint64_t nr_nodes;
};

static int
layout(kvs_t *kd, struct vlayout *L)
{
	const char *A = "struct vmap_area", *V = "struct vm_struct";
	struct kvs_typeinfo ti;
	uint64_t a;

	memset(L, 0, sizeof(*L));
	if (kfield(kd, A, "va_start", &L->va_start, true) != 0 ||
	    kfield(kd, A, "va_end", &L->va_end, true) != 0 ||
	    kfield(kd, A, "list", &L->list, true) != 0 ||
	    kfield(kd, A, "vm", &L->vm, true) != 0 ||
	    kfield(kd, A, "flags", &L->vflags, false) != 0 ||
	    kfield(kd, A, "purge_list", &L->purge_list, false) != 0 ||
	    kfield(kd, V, "addr", &L->addr, true) != 0 ||
	    kfield(kd, V, "size", &L->size, true) != 0 ||
	    kfield(kd, V, "flags", &L->flags, true) != 0 ||
	    kfield(kd, V, "pages", &L->pages, true) != 0 ||
	    kfield(kd, V, "nr_pages", &L->nr_pages, true) != 0 ||
	    kfield(kd, V, "phys_addr", &L->phys_addr, true) != 0 ||
	    kfield(kd, V, "caller", &L->caller, true) != 0)
		return kerr_push(&kd->err, "vmalloc layout");
	if (kvs_type(kd, A, &ti) != 0)
		return -1;
	L->va_need = ti.size;
	if (kvs_type(kd, V, &ti) != 0)
		return -1;
	L->vm_need = ti.size;
	if (L->va_need > 256 || L->vm_need > 256)
		return kerr_set(&kd->err, KVS_E_DATA, "vmap_area / vm_struct larger than expected");
	/* CONFIG_NUMA: node_data[] instead of contig_page_data. */
	L->numa = kvs_symbol(kd, "node_data", &a, NULL) == 0;
	L->nr_nodes = linux_nr_node_ids(kd, 1024);
	kerr_clear(&kd->err);
	return 0;
}

/*
 * A loaded module's symbol for addr, as %pS names it: the module whose core
 * (struct module's core_layout, or mem[MOD_TEXT] from 6.4) holds addr, and
 * the nearest symbol at or below it in the module's own kallsyms (struct
 * mod_kallsyms: an Elf64_Sym table and its strings); the size runs to the
 * next symbol.  "name+0xoff/0xsize [module]", or 0 if none.
 */
#define MOD_LIST_MAX 100000
#define MOD_SYMS_MAX 1000000
static int
module_caller(kvs_t *kd, uint64_t addr, char *buf, size_t len)
{
	struct kvs_typeinfo tl, tn, tk, tb, ts, tkl;
	uint64_t head, pos, n = 0;
	int found = 0;

	if (kvs_symbol(kd, "modules", &head, NULL) != 0 ||
	    kvs_member(kd, "struct module", "list", &tl) != 0 ||
	    kvs_member(kd, "struct module", "name", &tn) != 0 ||
	    kvs_member(kd, "struct module", "kallsyms", &tk) != 0 ||
	    kvs_member(kd, "struct mod_kallsyms", "symtab", &ts) != 0 ||
	    kvs_member(kd, "struct mod_kallsyms", "num_symtab", &tkl) != 0 ||
	    (kvs_member(kd, "struct module", "core_layout.base", &tb) != 0 &&
	    kvs_member(kd, "struct module", "mem", &tb) != 0)) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (kread_u64(kd, head, &pos) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	while (pos != head && pos != 0 && n++ < MOD_LIST_MAX && !found) {
		uint64_t mod = pos - tl.offset, base = 0, ks = 0, symtab = 0, strtab = 0, best = 0,
		    bestv = 0, nextv = UINT64_MAX, i;
		uint32_t size = 0, nsym = 0;
		char mname[64] = "";
		if (kread_u64(kd, mod + tb.offset, &base) != 0 ||
		    kvs_read(kd, mod + tb.offset + 8, &size, 4) != 0 ||
		    kread_u64(kd, mod + tk.offset, &ks) != 0 ||
		    kread_u64(kd, pos, &pos) != 0)
			break;
		if (addr < base || addr - base >= size || ks == 0)
			continue;
		if (kvs_read_string(kd, mod + tn.offset, mname, sizeof(mname), NULL) < 0 ||
		    kread_u64(kd, ks + ts.offset, &symtab) != 0 ||
		    kvs_read(kd, ks + tkl.offset, &nsym, 4) != 0 ||
		    kread_u64(kd, ks + 16, &strtab) != 0 || nsym > MOD_SYMS_MAX)
			break;
		for (i = 0; i < nsym; i++) {
			uint8_t sym[24];
			uint64_t v;
			if (kvs_read(kd, symtab + i * 24, sym, sizeof(sym)) != 0)
				break;
			memcpy(&v, sym + 8, 8);
			if ((sym[4] & 0xf) != 2 || v == 0)          /* STT_FUNC */
				continue;
			if (v <= addr && v >= bestv) {
				bestv = v;
				best = i + 1;
			} else if (v > addr && v < nextv)
				nextv = v;
		}
		if (best != 0) {
			uint8_t sym[24];
			uint32_t noff;
			char sn[128];
			if (kvs_read(kd, symtab + (best - 1) * 24, sym, sizeof(sym)) == 0) {
				memcpy(&noff, sym, 4);
				if (kvs_read_string(kd, strtab + noff, sn, sizeof(sn), NULL) >= 0) {
					int w = snprintf(buf, len, "%.100s+0x%" PRIx64 "/0x%" PRIx64
					    " [%.56s]", sn, addr - bestv,
					    (nextv != UINT64_MAX ? nextv : base + size) - bestv, mname);
					found = w > 0 && (size_t)w < len;
				}
			}
		}
		break;
	}
	kerr_clear(&kd->err);
	return found;
}

/* "%pS": name+0xoff/0xsize, or the bare address. */
static void
caller_name(kvs_t *kd, uint64_t addr, char *buf, size_t len)
{
	uint64_t off, sa, size = 0;
	const char *s = kvs_symbol_at(kd, addr, &off);

	if (s == NULL) {
		kerr_clear(&kd->err);
		if (!module_caller(kd, addr, buf, len))
			snprintf(buf, len, "0x%" PRIx64, addr);
		return;
	}
	/* %pS's size is kallsyms': up to the next symbol (padding included),
	 * not the ELF symbol's own size */
	{
		uint64_t next;
		(void)sa;
		size = kvs_symbol_next(kd, addr, &next) == 0 && next > addr ? next - (addr - off) : 0;
		if (size == 0 && kvs_symbol(kd, s, &sa, &size) != 0)
			size = 0;
		kerr_clear(&kd->err);
	}
	snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64, s, off, size);
}

struct acc {
	struct kvs_varea *v;
	size_t n, cap;
};

static struct kvs_varea *
grow(kvs_t *kd, struct acc *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct kvs_varea *nv = realloc(a->v, cap * sizeof(*nv));
		if (nv == NULL) {
			kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
			return NULL;
		}
		a->v = nv;
		a->cap = cap;
	}
	memset(&a->v[a->n], 0, sizeof(a->v[0]));
	return &a->v[a->n++];
}

static void
add_word(char *buf, size_t len, const char *w)
{
	size_t at = strlen(buf);

	snprintf(buf + at, len - at, "%s%s", at ? " " : "", w);
}

/* One vmap_area at va into a row; purge: an area on the purge list. */
static int
one(kvs_t *kd, const struct vlayout *L, uint64_t va, bool purge, struct acc *a, int *rc)
{
	uint8_t b[256], vb[256];
	struct kvs_varea *v;
	uint64_t vm, start, end;

	if ((v = grow(kd, a)) == NULL)
		return -1;
	v->kaddr = va;
	if (kvs_read(kd, va, b, L->va_need) != 0) {
		v->cflags = KVS_CF_UNREADABLE;
		snprintf(v->note, sizeof(v->note), "vmap_area at 0x%" PRIx64 " not in the dump", va);
		kerr_clear(&kd->err);
		*rc = 1;
		return 0;
	}
	start = kfield_get(b, sizeof(b), &L->va_start);
	end = kfield_get(b, sizeof(b), &L->va_end);
	vm = purge ? 0 : kfield_get(b, sizeof(b), &L->vm);
	v->start = start;
	v->end = end;
	v->size = end - start;
	if (purge) {
		snprintf(v->flags, sizeof(v->flags), "unpurged vm_area");
		return 0;
	}
	if (vm == 0) {
		/* A busy area without a vm_struct: vm_map_ram's (VMAP_RAM), else
		 * the kernel prints nothing for it. */
		if (L->vflags.present && (kfield_get(b, sizeof(b), &L->vflags) & VMAP_RAM) == 0) {
			a->n--;
			return 0;
		}
		snprintf(v->flags, sizeof(v->flags), "vm_map_ram");
		return 0;
	}
	if (kvs_read(kd, vm, vb, L->vm_need) != 0) {
		v->cflags = KVS_CF_UNREADABLE;
		snprintf(v->note, sizeof(v->note), "vm_struct at 0x%" PRIx64 " not in the dump", vm);
		kerr_clear(&kd->err);
		*rc = 1;
		return 0;
	}
	v->start = kfield_get(vb, sizeof(vb), &L->addr);
	v->size = kfield_get(vb, sizeof(vb), &L->size);
	v->end = v->start + v->size;
	v->caller = kfield_get(vb, sizeof(vb), &L->caller);
	if (v->caller != 0)
		caller_name(kd, v->caller, v->caller_sym, sizeof(v->caller_sym));
	v->nr_pages = kfield_get(vb, sizeof(vb), &L->nr_pages);
	v->phys_addr = kfield_get(vb, sizeof(vb), &L->phys_addr);
	v->vm_flags = kfield_get(vb, sizeof(vb), &L->flags);
	if (v->vm_flags & VM_IOREMAP)
		add_word(v->flags, sizeof(v->flags), "ioremap");
	if (v->vm_flags & VM_ALLOC)
		add_word(v->flags, sizeof(v->flags), "vmalloc");
	if (v->vm_flags & VM_MAP)
		add_word(v->flags, sizeof(v->flags), "vmap");
	if (v->vm_flags & VM_USERMAP)
		add_word(v->flags, sizeof(v->flags), "user");
	if (v->vm_flags & VM_DMA_COHERENT)
		add_word(v->flags, sizeof(v->flags), "dma-coherent");
	{
		/* is_vmalloc_addr(pages): the page array itself vmalloc'ed. */
		uint64_t pages = kfield_get(vb, sizeof(vb), &L->pages);
		/* vmalloc_base is an unsigned long: 8 bytes, also when no type
		 * says so (symbols from kallsyms, types from BTF) */
		uint64_t lo = 0xffffc90000000000ULL, hi, at;
		/* VMCOREINFO names the range where the kernel exports it
		 * (arm64); else x86_64's: vmalloc_base, 32 TiB */
		if (!linux_vi_u64(kd, "NUMBER(VMALLOC_START)", 16, &lo) ||
		    !linux_vi_u64(kd, "NUMBER(VMALLOC_END)", 16, &hi) || hi <= lo) {
			if (kvs_symbol(kd, "vmalloc_base", &at, NULL) != 0 ||
			    kread_u64(kd, at, &lo) != 0) {
				kerr_clear(&kd->err);
				lo = 0xffffc90000000000ULL;
			}
			hi = lo + (32ULL << 40);
		}
		if (pages >= lo && pages < hi)
			add_word(v->flags, sizeof(v->flags), "vpages");
	}
	/* show_numa_info: the pages per node; with one node, all on node 0. */
	if (L->numa && !(v->vm_flags & VM_UNINITIALIZED) && v->nr_pages != 0) {
		char w[32];
		snprintf(w, sizeof(w), "N0=%" PRIu64, v->nr_pages);
		if (L->nr_nodes > 1) {
			v->cflags |= KVS_CF_ESTIMATE;
			snprintf(v->note, sizeof(v->note), "pages per NUMA node not split");
		} else
			add_word(v->flags, sizeof(v->flags), w);
	}
	return 0;
}

/* The list at head (a list_head whose entries are vmap_area.list). */
static int
walk(kvs_t *kd, const struct vlayout *L, uint64_t head, bool purge, struct acc *a, int *rc)
{
	struct kwalk w;
	uint64_t p;

	if (kread_u64(kd, head, &p) != 0)
		return kerr_push(&kd->err, "vmap area list at 0x%" PRIx64, head);
	kwalk_init(&w, kvs_dump_bound(kd, 64, AREAS_MAX));
	while (p != head) {
		if (p == 0)
			return kerr_set(&kd->err, KVS_E_DATA, "vmap area list ends in NULL");
		if (kwalk_step(kd, &w, p, "vmap areas") != 0)
			return -1;
		if (one(kd, L, p - L->list.off, purge, a, rc) != 0)
			return -1;
		if (kread_u64(kd, p, &p) != 0)
			return kerr_push(&kd->err, "vmap area list");
	}
	return 0;
}

/* The lock-less list at head (an llist_head whose entries are linked
 * through vmap_area.purge_list), to its NULL: the purge list before 5.11. */
static int
walk_llist(kvs_t *kd, const struct vlayout *L, uint64_t head, struct acc *a, int *rc)
{
	struct kwalk w;
	uint64_t p;

	if (kread_u64(kd, head, &p) != 0)
		return kerr_push(&kd->err, "vmap purge list at 0x%" PRIx64, head);
	kwalk_init(&w, kvs_dump_bound(kd, 64, AREAS_MAX));
	while (p != 0) {
		if (kwalk_step(kd, &w, p, "vmap purge list") != 0)
			return -1;
		if (one(kd, L, p - L->purge_list.off, true, a, rc) != 0)
			return -1;
		if (kread_u64(kd, p, &p) != 0)
			return kerr_push(&kd->err, "vmap purge list");
	}
	return 0;
}

int
linux_vmalloc(kvs_t *kd, struct kvs_varea **out, size_t *n)
{
	struct vlayout L;
	struct acc a = { 0 };
	uint64_t head;
	int rc = 0;

	if (layout(kd, &L) != 0)
		return -1;
	if (kvs_symbol(kd, "vmap_area_list", &head, NULL) == 0) {
		if (walk(kd, &L, head, false, &a, &rc) != 0)
			goto bad;
		/* The lazily freed areas, printed after the busy ones. */
		if (kvs_symbol(kd, "purge_vmap_area_list", &head, NULL) == 0) {
			if (walk(kd, &L, head, true, &a, &rc) != 0)
				goto bad;
		} else if (L.purge_list.present &&
		    kvs_symbol(kd, "vmap_purge_list", &head, NULL) == 0) {
			if (walk_llist(kd, &L, head, &a, &rc) != 0)
				goto bad;
		}
	} else {
		struct kfield busy, lazy;
		struct kvs_typeinfo ti;
		uint64_t nodes, nr, i;

		kerr_clear(&kd->err);
		if (kvs_symbol(kd, "vmap_nodes", &head, NULL) != 0 ||
		    kread_u64(kd, head, &nodes) != 0 ||
		    kfield(kd, "struct vmap_node", "busy.head", &busy, true) != 0 ||
		    kfield(kd, "struct vmap_node", "lazy.head", &lazy, false) != 0 ||
		    kvs_type(kd, "struct vmap_node", &ti) != 0) {
			kerr_push(&kd->err, "neither vmap_area_list nor vmap_nodes");
			goto bad;
		}
		nr = kread_sym_uint_or(kd, "nr_vmap_nodes", 1);
		if (nr == 0 || nr > NODES_MAX) {
			kerr_set(&kd->err, KVS_E_DATA, "nr_vmap_nodes %" PRIu64 " out of range", nr);
			goto bad;
		}
		for (i = 0; i < nr; i++)
			if (walk(kd, &L, nodes + i * ti.size + busy.off, false, &a, &rc) != 0)
				goto bad;
		for (i = 0; lazy.present && i < nr; i++)
			if (walk(kd, &L, nodes + i * ti.size + lazy.off, true, &a, &rc) != 0)
				goto bad;
	}
	kerr_clear(&kd->err);
	*out = a.v;
	*n = a.n;
	return rc;
bad:
	free(a.v);
	return -1;
}
