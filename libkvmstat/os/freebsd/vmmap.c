/*
 * vmmap.c - the kernel's address map for `whatis`: which vm_map_entry of
 * kernel_map holds an address, and inside a submap entry (exec_map,
 * pipe_map, ...) which entry of the submap.
 *
 * A map keeps its entries in a binary search tree ordered by address; the
 * lookup descends it from the root, reading one entry per level and never
 * changing anything (the kernel splays on lookup; a dump reader must not).
 * Two shapes, told apart by struct vm_map_entry's members:
 *   - with prev/next (a separate entry list: 12 and before), an absent
 *     child is NULL;
 *   - without them (13 and later), the tree is threaded: an absent left
 *     child points at the entry's predecessor and an absent right child at
 *     its successor, the map's header standing before the first entry and
 *     after the last.  Descending, the predecessor of the current entry is
 *     the last entry the walk went right from (the header at first), its
 *     successor the last one it went left from: a child pointer equal to
 *     that entry is a thread, not a child.
 * Every step narrows the address window the walk is in (the ancestors
 * bound it), so an entry outside its window - a loop back up the tree, or
 * a disordered one - is a named error, as is an entry that ends before it
 * starts; the step count is bounded besides.  The map's range is its
 * header's start and end (12 stores min in start, 13+ in end: the smaller
 * of the two is the minimum either way).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "freebsd.h"
#include "census.h"

#define ENTRY_MAX 512              /* bytes of struct vm_map_entry read */
#define MAX_STEPS (1u << 20)       /* tree levels, whatever the tree claims */
#define MAX_NEST 4                 /* submaps inside submaps */
#define MAP_ENTRY_IS_SUB_MAP 0x2u

struct vmlay {
	uint64_t esize;
	bool threaded;
	struct kfield left, right, start, end, object, offset, eflags, prot, maxprot;
	struct kfield header, root;
};

/* Where one lookup ended: an entry (entry != 0, its bytes in buf), or a gap. */
struct vmhit {
	uint64_t map;
	uint64_t entry;
	uint8_t buf[ENTRY_MAX];
	uint64_t gap_lo, gap_hi, prev, next;
};

static int
layout(kvs_t *kd, struct vmlay *l)
{
	static const struct {
		size_t off;
		const char *type, *member;
	} f[] = {
		{ offsetof(struct vmlay, left), "struct vm_map_entry", "left" },
		{ offsetof(struct vmlay, right), "struct vm_map_entry", "right" },
		{ offsetof(struct vmlay, start), "struct vm_map_entry", "start" },
		{ offsetof(struct vmlay, end), "struct vm_map_entry", "end" },
		{ offsetof(struct vmlay, object), "struct vm_map_entry", "object" },
		{ offsetof(struct vmlay, offset), "struct vm_map_entry", "offset" },
		{ offsetof(struct vmlay, eflags), "struct vm_map_entry", "eflags" },
		{ offsetof(struct vmlay, prot), "struct vm_map_entry", "protection" },
		{ offsetof(struct vmlay, maxprot), "struct vm_map_entry", "max_protection" },
		{ offsetof(struct vmlay, header), "struct vm_map", "header" },
		{ offsetof(struct vmlay, root), "struct vm_map", "root" },
	};
	struct kvs_typeinfo t;
	struct kfield next;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (kfield(kd, f[i].type, f[i].member, (struct kfield *)((char *)l + f[i].off),
		    true) != 0)
			return kerr_push(&kd->err, "the kernel map's layout");
	if (kvs_type(kd, "struct vm_map_entry", &t) != 0)
		return -1;
	if (t.size == 0 || t.size > ENTRY_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "struct vm_map_entry of %llu bytes",
		    (unsigned long long)t.size);
	l->esize = t.size;
	if (kfield(kd, "struct vm_map_entry", "next", &next, false) != 0)
		return -1;
	l->threaded = !next.present;
	return 0;
}

/*
 * The map a kernel variable names: a pointer to it (12 and before:
 * `vm_map_t kernel_map`), or the map itself - `NAME` of struct type, or
 * NAME_store where NAME is a macro for its address (13 and later).
 * 1 found, 0 no such map, -1 its pointer unreadable.
 */
static int
named_map(kvs_t *kd, const char *name, uint64_t *map)
{
	struct kvs_typeinfo t;
	char store[64];

	if (kvs_variable(kd, name, &t) == 0) {
		if (t.kind == KVS_KIND_POINTER)
			return kread_sym_uint(kd, name, map) == 0 ? 1 : -1;
		return kvs_symbol(kd, name, map, NULL) == 0 ? 1 : -1;
	}
	kerr_clear(&kd->err);
	snprintf(store, sizeof(store), "%s_store", name);
	if (kvs_symbol(kd, store, map, NULL) == 0)
		return 1;
	kerr_clear(&kd->err);
	return 0;
}

/* A submap's name: the map variable that points at it, else "submap". */
static void
map_name(kvs_t *kd, uint64_t map, char *buf, size_t len)
{
	static const char *const names[] = { "kernel_map", "exec_map", "pipe_map", "buffer_map",
		"clean_map", "kmem_map" };
	uint64_t a;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (named_map(kd, names[i], &a) == 1 && a == map) {
			snprintf(buf, len, "%s", names[i]);
			return;
		}
	kerr_clear(&kd->err);
	snprintf(buf, len, "submap");
}

/* Is child an absent one?  NULL (12), or the thread to the bound (13+). */
static bool
absent(const struct vmlay *l, uint64_t child, uint64_t bound)
{
	return l->threaded ? child == bound : child == 0;
}

/*
 * Look addr up in the map at `map`.  1 with *h filled (an entry or a gap),
 * 0 when addr is outside the map's range, -1 on error (the handle's says
 * which): a read that failed (*unreadable), or a corrupt tree.
 */
static int
lookup(kvs_t *kd, const struct vmlay *l, uint64_t map, uint64_t addr, struct vmhit *h,
    const char *name, bool *unreadable)
{
	uint8_t hb[ENTRY_MAX];
	uint64_t hdr = map + l->header.off, root, lo, hi, a, b;
	uint64_t llist = hdr, rlist = hdr, cur;

	*unreadable = false;
	if (kvs_read(kd, hdr, hb, l->esize) != 0 || kread_u64(kd, map + l->root.off, &root) != 0) {
		*unreadable = true;
		return kerr_push(&kd->err, "%s at 0x%llx", name, (unsigned long long)map);
	}
	a = kfield_get(hb, l->esize, &l->start);
	b = kfield_get(hb, l->esize, &l->end);
	lo = a < b ? a : b;
	hi = a < b ? b : a;
	if (addr < lo || addr >= hi)
		return 0;
	memset(h, 0, sizeof(*h));
	h->map = map;
	h->gap_lo = lo;
	h->gap_hi = hi;
	if (root == 0)                         /* an empty map: one gap */
		return 1;
	cur = root;
	for (uint32_t steps = 0;; steps++) {
		uint64_t s, e, child;
		if (steps >= MAX_STEPS)
			return kerr_set(&kd->err, KVS_E_DATA, "%s's entry tree is deeper than %u "
			    "levels: it loops", name, MAX_STEPS);
		if (cur == 0)
			return kerr_set(&kd->err, KVS_E_DATA, "%s's threaded entry tree has a NULL "
			    "child below 0x%llx", name, (unsigned long long)(rlist != hdr ? rlist :
			    llist));
		if (kvs_read(kd, cur, h->buf, l->esize) != 0) {
			*unreadable = true;
			return kerr_push(&kd->err, "%s's entry at 0x%llx", name,
			    (unsigned long long)cur);
		}
		s = kfield_get(h->buf, l->esize, &l->start);
		e = kfield_get(h->buf, l->esize, &l->end);
		if (e <= s)
			return kerr_set(&kd->err, KVS_E_DATA, "%s's entry at 0x%llx ends (0x%llx) "
			    "before it starts (0x%llx)", name, (unsigned long long)cur,
			    (unsigned long long)e, (unsigned long long)s);
		if (s < h->gap_lo || e > h->gap_hi)
			return kerr_set(&kd->err, KVS_E_DATA, "%s's entry tree loops or is out of "
			    "order: entry 0x%llx [0x%llx, 0x%llx) lies outside [0x%llx, 0x%llx), "
			    "where its ancestors put it", name, (unsigned long long)cur,
			    (unsigned long long)s, (unsigned long long)e,
			    (unsigned long long)h->gap_lo, (unsigned long long)h->gap_hi);
		if (addr < s) {
			child = kfield_get(h->buf, l->esize, &l->left);
			if (absent(l, child, llist)) {
				h->prev = llist == hdr ? 0 : llist;
				h->next = cur;
				h->gap_hi = s;
				return 1;
			}
			rlist = cur;
			h->gap_hi = s;
		} else if (addr >= e) {
			child = kfield_get(h->buf, l->esize, &l->right);
			if (absent(l, child, rlist)) {
				h->prev = cur;
				h->next = rlist == hdr ? 0 : rlist;
				h->gap_lo = e;
				return 1;
			}
			llist = cur;
			h->gap_lo = e;
		} else {
			h->entry = cur;
			h->gap_lo = s;
			h->gap_hi = e;
			return 1;
		}
		cur = child;
	}
}

/*
 * The kernel_map part of whatis: *hit false when this kernel has no
 * kernel_map or addr lies outside it (w untouched), else w filled.
 * 0, 1 (an entry or the map was not in the dump: note says which), -1.
 */
int
freebsd_vmmap_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w, bool *hit)
{
	struct vmlay l;
	struct vmhit h;
	uint64_t map;
	char name[sizeof(w->map_name)] = "kernel_map";
	bool unreadable;
	int rc;

	*hit = false;
	if ((rc = named_map(kd, "kernel_map", &map)) <= 0) {
		if (rc == 0)
			return 0;              /* no kernel_map in this kernel */
		*hit = true;
		w->kind = KVS_WHATIS_UNKNOWN;
		snprintf(w->note, sizeof(w->note), "kernel_map is not in the dump: %s",
		    kvs_geterr(kd));
		kerr_clear(&kd->err);
		return 1;
	}
	if (layout(kd, &l) != 0) {
		kerr_clear(&kd->err);      /* a map this file cannot read: no answer */
		return 0;
	}
	for (int nest = 0;; nest++) {
		rc = lookup(kd, &l, map, addr, &h, name, &unreadable);
		if (rc < 0 && unreadable) {
			*hit = true;
			w->kind = KVS_WHATIS_UNKNOWN;
			snprintf(w->note, sizeof(w->note), "%s", kvs_geterr(kd));
			kerr_clear(&kd->err);
			return 1;
		}
		if (rc < 0)
			return -1;
		if (rc == 0) {
			if (nest == 0)
				return 0;
			return kerr_set(&kd->err, KVS_E_DATA, "%s at 0x%llx does not cover its "
			    "entry in the map above it, which holds 0x%llx", name,
			    (unsigned long long)map, (unsigned long long)addr);
		}
		*hit = true;
		if (h.entry == 0) {
			w->kind = KVS_WHATIS_UNKNOWN;
			break;
		}
		uint64_t fl = kfield_get(h.buf, l.esize, &l.eflags);
		if (!(fl & MAP_ENTRY_IS_SUB_MAP)) {
			w->kind = KVS_WHATIS_VMALLOC;
			break;
		}
		if (nest + 1 >= MAX_NEST)
			return kerr_set(&kd->err, KVS_E_DATA, "submaps nested deeper than %d at "
			    "0x%llx", MAX_NEST, (unsigned long long)h.entry);
		map = kfield_get(h.buf, l.esize, &l.object);
		map_name(kd, map, name, sizeof(name));
	}
	snprintf(w->map_name, sizeof(w->map_name), "%s", name);
	w->area_start = h.gap_lo;
	w->area_end = h.gap_hi;
	if (w->kind == KVS_WHATIS_UNKNOWN) {
		w->map_prev = h.prev;
		w->map_next = h.next;
		snprintf(w->note, sizeof(w->note), "in %s's range but in no entry: the gap "
		    "between %s%.0llx and %s%.0llx", name, h.prev ? "entry 0x" : "the map's start",
		    (unsigned long long)h.prev, h.next ? "entry 0x" : "the map's end",
		    (unsigned long long)h.next);
		return 0;
	}
	w->map_entry = h.entry;
	w->map_object = kfield_get(h.buf, l.esize, &l.object);
	w->map_offset = kfield_get(h.buf, l.esize, &l.offset);
	w->map_eflags = (uint32_t)kfield_get(h.buf, l.esize, &l.eflags);
	w->map_prot = (uint8_t)kfield_get(h.buf, l.esize, &l.prot);
	w->map_maxprot = (uint8_t)kfield_get(h.buf, l.esize, &l.maxprot);
	return 0;
}
