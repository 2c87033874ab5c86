/*
 * whatis.c - what one address of a Linux kernel is (kvs_whatis), tried in
 * this order:
 *   a struct page in the memory map (vmemmap)    -> page, the pfn it describes
 *   the direct map: its page; a slab page        -> slab: cache, object, state
 *                   (slub_objects.c), else       -> page: flags, mapping, order
 *   a task's kernel stack (THREAD_SIZE below task_struct.stack, tasks walked
 *                   from init_task once per lookup)  -> stack: pid, comm
 *   a vmalloc area (vmalloc.c, read once)        -> vmalloc: range, caller
 *   the kernel image or a module's symbols       -> symbol name+0xoff
 *   else                                         -> unknown, with a note.
 * A task's stack is vmalloc'ed (CONFIG_VMAP_STACK) or in the direct map:
 * it is looked for before both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define PAGE_SHIFT 12
#define TASKS_MAX 4194304ULL
#define THREAD_SIZE_X86_64 (16384ULL)   /* 4 << PAGE_SHIFT, without KASAN */
#define VMEMMAP_SPAN (1ULL << 40)       /* 1 TiB: 64 TiB of memory's pages */
#define DIRECT_SPAN (1ULL << 46)
#define KERNEL_HALF 0xffff800000000000ULL

static int
cmp_area(const void *a, const void *b)
{
	const struct kvs_varea *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static const struct kvs_varea *
find_area(kvs_t *kd, struct linux_census *c, uint64_t addr)
{
	size_t lo = 0, hi;

	if (c->areas_rc == 0) {
		if (linux_vmalloc(kd, &c->areas, &c->nareas) < 0) {
			kerr_clear(&kd->err);
			c->areas_rc = -1;
			return NULL;
		}
		qsort(c->areas, c->nareas, sizeof(*c->areas), cmp_area);
		c->areas_rc = 1;
	}
	hi = c->nareas;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->areas[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr >= c->areas[lo - 1].start && addr < c->areas[lo - 1].end)
		return &c->areas[lo - 1];
	return NULL;
}

/* The task whose stack holds addr: 1 found, 0 not, -1 error. */
static int
find_stack(kvs_t *kd, uint64_t addr, struct kvs_whatis *w)
{
	static const char *const T = "struct task_struct";
	struct kfield tasks, stack, pid, comm;
	struct kwalk wk;
	uint64_t init, p, head, tsize = THREAD_SIZE_X86_64;

	if (kvs_symbol(kd, "init_task", &init, NULL) != 0 ||
	    kfield(kd, T, "tasks", &tasks, true) != 0 ||
	    kfield(kd, T, "stack", &stack, true) != 0 ||
	    kfield(kd, T, "pid", &pid, true) != 0 ||
	    kfield(kd, T, "comm", &comm, true) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	/* THREAD_SIZE: the size of init_stack, when the kernel says it. */
	{
		uint64_t a, sz;
		if (kvs_symbol(kd, "init_stack", &a, &sz) == 0 && sz >= 4096 && sz <= (1 << 20))
			tsize = sz;
		kerr_clear(&kd->err);
	}
	head = init + tasks.off;
	p = head;
	kwalk_init(&wk, TASKS_MAX);
	do {
		uint64_t task = p - tasks.off, st, v;
		if (kwalk_step(kd, &wk, p, "tasks") != 0 ||
		    kread_u64(kd, task + stack.off, &st) != 0) {
			kerr_clear(&kd->err);
			return 0;
		}
		if (addr >= st && addr - st < tsize) {
			w->kind = KVS_WHATIS_STACK;
			w->task = task;
			if (kread_uint(kd, task + pid.off, 4, &v) == 0)
				w->pid = (int)v;
			if (kvs_read(kd, task + comm.off, w->comm, comm.size < sizeof(w->comm) ?
			    comm.size : sizeof(w->comm) - 1) != 0)
				snprintf(w->comm, sizeof(w->comm), "?");
			w->comm[sizeof(w->comm) - 1] = '\0';
			kerr_clear(&kd->err);
			return 1;
		}
		if (kread_u64(kd, p, &p) != 0) {
			kerr_clear(&kd->err);
			return 0;
		}
	} while (p != head && p != 0);
	return 0;
}

static void
fill_page(const struct linux_census *c, const struct linux_page *p, struct kvs_whatis *w)
{
	w->pfn = p->pfn;
	w->page = p->page;
	w->page_flags = p->flags;
	linux_page_flags_str(c, p->head != p->page ? p->head_flags : p->flags,
	    w->page_flags_str, sizeof(w->page_flags_str));
	w->mapping = p->mapping;
	w->order = p->order;
	w->head = p->head != p->page ? p->head : 0;
}

int
linux_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w)
{
	struct linux_census *c = linux_census(kd);
	const struct kvs_varea *v;
	struct linux_page pg;
	uint64_t off;
	const char *s;
	int rc;

	if (c == NULL)
		return -1;
	/* A struct page itself. */
	if (addr >= c->mem.vmemmap && addr - c->mem.vmemmap < VMEMMAP_SPAN) {
		uint64_t page = c->mem.vmemmap + (addr - c->mem.vmemmap) / c->page_size *
		    c->page_size;
		w->kind = KVS_WHATIS_PAGE;
		if (linux_page_read(kd, c, page, &pg) != 0) {
			kerr_clear(&kd->err);
			w->pfn = linux_pfn_of_page(c, page);
			w->page = page;
			snprintf(w->note, sizeof(w->note), "struct page not in the dump");
			return 1;
		}
		fill_page(c, &pg, w);
		snprintf(w->note, sizeof(w->note), "the struct page of pfn %" PRIu64, pg.pfn);
		return 0;
	}
	if ((rc = find_stack(kd, addr, w)) != 0)
		return rc < 0 ? -1 : 0;
	/* The direct map: its page, a slab's object. */
	if (addr >= c->mem.page_offset && addr - c->mem.page_offset < DIRECT_SPAN &&
	    (c->max_pfn == 0 || (addr - c->mem.page_offset) >> PAGE_SHIFT < c->max_pfn)) {
		uint64_t pfn = (addr - c->mem.page_offset) >> PAGE_SHIFT;
		w->kind = KVS_WHATIS_PAGE;
		if (linux_page_read(kd, c, linux_page_of_pfn(c, pfn), &pg) != 0) {
			kerr_clear(&kd->err);
			w->pfn = pfn;
			w->page = linux_page_of_pfn(c, pfn);
			snprintf(w->note, sizeof(w->note), "struct page not in the dump");
			return 1;
		}
		fill_page(c, &pg, w);
		if (pg.slab)
			return linux_slab_lookup(kd, c, &pg, addr, w);
		return 0;
	}
	if ((v = find_area(kd, c, addr)) != NULL) {
		w->kind = KVS_WHATIS_VMALLOC;
		w->area_start = v->start;
		w->area_end = v->end;
		w->area_caller = v->caller;
		snprintf(w->symbol, sizeof(w->symbol), "%s", v->caller_sym);
		if (v->flags[0] != '\0')
			snprintf(w->note, sizeof(w->note), "%s", v->flags);
		return 0;
	}
	/* Symbols of the kernel half only: per-CPU symbols are offsets. */
	if (addr >= KERNEL_HALF && (s = kvs_symbol_at(kd, addr, &off)) != NULL) {
		uint64_t st;
		/* the text's first byte has two names: _stext, as crash and drgn
		 * say (kallsyms keeps _text first) */
		if (strcmp(s, "_text") == 0 && kvs_symbol(kd, "_stext", &st, NULL) == 0 &&
		    st == addr - off)
			s = "_stext";
		kerr_clear(&kd->err);
		w->kind = KVS_WHATIS_SYMBOL;
		snprintf(w->symbol, sizeof(w->symbol), "%s+0x%" PRIx64, s, off);
		return 0;
	}
	kerr_clear(&kd->err);
	/* The image between symbols (assembly, padding): named from _stext
	 * (as crash and drgn name it), or _text before it. */
	{
		uint64_t t, e, st;
		if (kvs_symbol(kd, "_text", &t, NULL) == 0 && kvs_symbol(kd, "_end", &e, NULL) == 0 &&
		    addr >= t && addr < e) {
			const char *base = "_text";
			if (kvs_symbol(kd, "_stext", &st, NULL) == 0 && addr >= st) {
				base = "_stext";
				t = st;
			}
			kerr_clear(&kd->err);
			w->kind = KVS_WHATIS_SYMBOL;
			snprintf(w->symbol, sizeof(w->symbol), "%s+0x%" PRIx64, base, addr - t);
			snprintf(w->note, sizeof(w->note), "in the kernel image, in no function or "
			    "object symbol");
			return 0;
		}
		kerr_clear(&kd->err);
	}
	w->kind = KVS_WHATIS_UNKNOWN;
	snprintf(w->note, sizeof(w->note), "not in the memory map, the direct map, a task's "
	    "stack, a vmalloc area or a symbol");
	return 0;
}
